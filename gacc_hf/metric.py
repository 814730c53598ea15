"""The `evaluate` metric "gacc": Micro and all-correct Macro over questions grouped by goal.

`Gacc` scores through `gacc_hf.scoring.scores.score`, the same function the runner uses, so the metric and
`run_benchmark` cannot disagree. Verdicts come from the rule judges' own functions (`default`: the `exact`
judge's normalised exact match; `contains`: the `contains` judge) or are passed in precomputed
(`verdicts`). Rows are only grouped at `compute` time, so a goal may be split across batches or across
processes (`num_process`), and Macro is always taken over all rows, never averaged per batch or rank.

`METRIC_PATH` is the thin evaluate module (`metrics/gacc/gacc.py` in a source checkout) and
`install_metric()` copies it into evaluate's module cache so that `evaluate.load("gacc")` resolves offline.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import datasets
import evaluate
import numpy as np
import pyarrow as pa

from gacc_hf.methods.judges import contains_match, exact_match
from gacc_hf.scoring import scores as scoring

__all__ = ["CONFIGS", "METRIC_PATH", "MODULE_SOURCE", "Gacc", "install_metric", "write_metric_module"]

CONFIGS: tuple[str, ...] = ("default", "contains", "verdicts")
HUB_NAME = "evaluate-metric--gacc"  # the folder evaluate's module cache looks under for the bare name "gacc"

_CITATION = """\
@article{liu2026gaccbench,
  title   = {GACC-Bench: Evaluating Goal-Conditioned Compression with Future Questions Held Out},
  author  = {Liu, Weiting and others},
  journal = {arXiv preprint},
  year    = {2026},
  note    = {arXiv}
}
"""

_DESCRIPTION = """\
GACC-Bench scores goal-conditioned context compression: a compressor sees a long source and a user's goal,
must fit a token budget, and a fixed reader then answers follow-up questions it never saw. Questions are
grouped by goal. Micro is the accuracy over questions. Macro is the share of goals whose every question is
correct (all-correct), not the mean per-goal accuracy. Configs: `default` (normalised exact match against any
reference), `contains` (a normalised reference occurs in the answer on word boundaries) and `verdicts`
(predictions are booleans from any judge).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`; `list` of `bool` for the `verdicts` config): the reader's answer to each
        question, or (`verdicts`) the judge's verdict for each question.
    references (`list` of `list` of `str`): the gold answers of each question, at least one per question.
        Not taken by the `verdicts` config.
    goal_ids (`list` of `str`): the goal of each question. The questions of one goal may arrive in different
        batches or processes; they are grouped at `compute` time.
    n_bootstrap (`int`, defaults to 0): goal-level bootstrap resamples for confidence intervals; 0 for none.
    seed (`int`, defaults to 0): seed of the bootstrap.
    confidence (`float`, defaults to 0.95): coverage of the percentile intervals.
Returns:
    micro (`float`): correct questions / questions.
    macro (`float`): goals with every question correct / goals.
    n_questions (`int`): rows scored.
    n_goals (`int`): distinct goal ids.
    micro_ci_low, micro_ci_high, macro_ci_low, macro_ci_high (`float`): only when `n_bootstrap` > 0.
Examples:
    Goal g1 has both questions right; g2 misses one of three. Micro = 4/5, Macro = 1/2 (mean per-goal
    accuracy would be 5/6):

    >>> import evaluate
    >>> from gacc_hf.metric import METRIC_PATH
    >>> gacc = evaluate.load(METRIC_PATH)  # evaluate.load("gacc") once `gacc install-metric` has run
    >>> gacc.compute(
    ...     predictions=["45 minutes", "The primary DB.", "us-west", "3", "Friday"],
    ...     references=[["45 minutes"], ["primary db"], ["us-east"], ["three", "3"], ["friday"]],
    ...     goal_ids=["g1", "g1", "g2", "g2", "g2"],
    ... )
    {'micro': 0.8, 'macro': 0.5, 'n_questions': 5, 'n_goals': 2}

    Batches from an evaluation loop; goal g2 spans both:

    >>> gacc.add_batch(predictions=["45 minutes", "us-west"], references=[["45 minutes"], ["us-east"]],
    ...                goal_ids=["g1", "g2"])
    >>> gacc.add_batch(predictions=["3"], references=[["3"]], goal_ids=["g2"])
    >>> gacc.compute()
    {'micro': 0.6666666666666666, 'macro': 0.5, 'n_questions': 3, 'n_goals': 2}

    The `contains` config accepts an answer that contains a reference:

    >>> contains = evaluate.load(METRIC_PATH, "contains")
    >>> contains.compute(predictions=["It stayed read-only for 45 minutes."], references=[["45 minutes"]],
    ...                  goal_ids=["g1"])["micro"]
    1.0

    Precomputed verdicts from any judge, with goal-bootstrap intervals:

    >>> verdicts = evaluate.load(METRIC_PATH, "verdicts")
    >>> r = verdicts.compute(predictions=[True, True, False, True], goal_ids=["a", "a", "b", "c"],
    ...                      n_bootstrap=200, seed=0)
    >>> r["micro"], r["macro"], r["macro_ci_low"] <= r["macro"] <= r["macro_ci_high"]
    (0.75, 0.6666666666666666, True)
"""

_TEXT_FEATURES = datasets.Features(
    {
        "predictions": datasets.Value("string"),
        "references": datasets.List(datasets.Value("string")),
        "goal_ids": datasets.Value("string"),
    }
)
_VERDICT_FEATURES = datasets.Features({"predictions": datasets.Value("bool"), "goal_ids": datasets.Value("string")})
_MATCHERS = {"default": exact_match, "contains": contains_match}
_STR_TYPES = frozenset({str, np.str_})
_BOOL_TYPES = frozenset({bool, np.bool_})
_LIST_TYPES = frozenset({list, tuple, np.ndarray})

MODULE_SOURCE = '''\
"""GACC-Bench Micro and all-correct Macro as an `evaluate` metric.

The implementation is `gacc_hf.metric.Gacc` from the `gacc-hf` package (pip install gacc-hf); this file
only exposes it to `evaluate.load`. Configs: default, contains, verdicts.
"""

from gacc_hf.metric import Gacc

__all__ = ["Gacc"]
'''


def _row_error(message: str) -> ValueError:
    return ValueError(f"gacc: {message}")


def _check_inputs(config: str, predictions: Any, references: Any, goal_ids: Any) -> None:
    """Fail when an input the config needs is missing, or one it refuses is given."""
    if goal_ids is None:
        raise _row_error(
            "goal_ids is missing: pass goal_ids=[...] with the goal of each question "
            "(Macro needs to know which questions belong together)"
        )
    if predictions is None:
        raise _row_error("predictions is missing")
    if config == "verdicts":
        if references is not None:
            raise _row_error(
                "the 'verdicts' config takes no references: predictions are already verdicts; "
                "pass predictions=[bool, ...] and goal_ids=[...] only"
            )
    elif references is None:
        raise _row_error(f"references is missing: the {config!r} config needs a list of gold answers per question")


def _check_rows(
    config: str,
    predictions: Sequence[Any] | None,
    references: Sequence[Any] | None,
    goal_ids: Sequence[Any] | None,
) -> None:
    """Fail on a malformed batch with a message that names the input and the row."""
    _check_inputs(config, predictions, references, goal_ids)
    assert predictions is not None and goal_ids is not None  # for type checkers; _check_inputs raised otherwise
    counts = {"predictions": len(predictions)}
    if references is not None:
        counts["references"] = len(references)
    counts["goal_ids"] = len(goal_ids)
    if len(set(counts.values())) > 1:
        got = ", ".join(f"{name}={n}" for name, n in counts.items())
        raise _row_error(f"inputs differ in length ({got}); every question needs one of each")
    # type checks run at C speed over the whole batch; the row loop only runs to name a bad row
    if not set(map(type, goal_ids)) <= _STR_TYPES or "" in goal_ids:
        i, goal = next((i, g) for i, g in enumerate(goal_ids) if type(g) not in _STR_TYPES or not g)
        raise _row_error(f"goal_ids[{i}] is {goal!r}; goal ids must be non-empty strings")
    if config == "verdicts":
        bool_array = isinstance(predictions, np.ndarray) and predictions.dtype == bool
        if not bool_array and not set(map(type, predictions)) <= _BOOL_TYPES:
            i, v = next((i, v) for i, v in enumerate(predictions) if type(v) not in _BOOL_TYPES)
            raise _row_error(
                f"predictions[{i}] is {v!r}; the 'verdicts' config takes booleans "
                "(use the default or contains config to judge answer strings)"
            )
        return
    if not set(map(type, predictions)) <= _STR_TYPES:
        i, answer = next((i, a) for i, a in enumerate(predictions) if type(a) not in _STR_TYPES)
        raise _row_error(f"predictions[{i}] is {answer!r}; answers must be strings")
    if not set(map(type, references)) <= _LIST_TYPES or not all(map(len, references)):
        i, refs = next((i, r) for i, r in enumerate(references) if type(r) not in _LIST_TYPES or not len(r))
        if type(refs) in _LIST_TYPES:
            raise _row_error(f"references[{i}] is an empty list; every question needs at least one gold answer")
        raise _row_error(
            f"references[{i}] is {refs!r}; give each question a list of gold answers, e.g. [['45 minutes']]"
        )
    if not {type(x) for refs in references for x in refs} <= _STR_TYPES:
        i, ref = next((i, x) for i, r in enumerate(references) for x in r if type(x) not in _STR_TYPES)
        raise _row_error(f"references[{i}] holds {ref!r}; gold answers must be strings")


def _column(values: Any) -> Any:
    """A numpy array from an Arrow column (the verdicts config reads its rows in Arrow format)."""
    if isinstance(values, pa.ChunkedArray | pa.Array):
        return values.to_numpy(zero_copy_only=False)
    return values


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Gacc(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        if self.config_name not in CONFIGS:
            raise ValueError(f"gacc: unknown config {self.config_name!r}; choose one of {', '.join(CONFIGS)}")
        verdicts = self.config_name == "verdicts"
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_VERDICT_FEATURES if verdicts else _TEXT_FEATURES,
            # flat Value features can be read as Arrow (fast); the text configs' list column needs Python rows
            format="arrow" if verdicts else None,
            license="Apache-2.0",
        )

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Add a batch of questions: `predictions`, `references` (not for `verdicts`) and `goal_ids`."""
        _check_rows(self.config_name, predictions, references, kwargs.get("goal_ids"))
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Add one question: `prediction`, `reference` (not for `verdicts`) and its goal as `goal_ids=`."""
        goal = kwargs.get("goal_ids")
        _check_rows(
            self.config_name,
            None if prediction is None else [prediction],
            None if reference is None else [reference],
            None if goal is None else [goal],
        )
        super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        """Score every added row (plus these, if given); `None` on processes other than rank 0."""
        if predictions is not None or references is not None or kwargs.get("goal_ids") is not None:
            # rows are checked by add_batch, which evaluate calls with the inputs it keeps for this config
            _check_inputs(self.config_name, predictions, references, kwargs.get("goal_ids"))
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(
        self,
        predictions: Sequence[Any],
        goal_ids: Sequence[str],
        references: Sequence[Sequence[str]] | None = None,
        n_bootstrap: int = 0,
        seed: int = 0,
        confidence: float = 0.95,
    ) -> dict[str, Any]:
        if self.config_name == "verdicts":
            correct, goal_ids = _column(predictions), _column(goal_ids)
        else:
            match = _MATCHERS[self.config_name]
            correct = [match(answer, refs) for answer, refs in zip(predictions, references, strict=True)]
        result = scoring.score(goal_ids, correct, n_boot=n_bootstrap, seed=seed, confidence=confidence).as_dict()
        if n_bootstrap <= 0:
            result = {k: v for k, v in result.items() if "_ci_" not in k}
        return result


def write_metric_module(folder: str | os.PathLike[str]) -> str:
    """Write the thin evaluate module `gacc.py` into `folder` (atomically, only if it changed); return its path."""
    path = Path(folder) / "gacc.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == MODULE_SOURCE:
            return str(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".gacc-", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(MODULE_SOURCE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return str(path)


def _metric_path() -> str:
    """The repo's `metrics/gacc/gacc.py` when it is there and current, else a generated copy in a user cache."""
    in_repo = Path(__file__).resolve().parent.parent / "metrics" / "gacc" / "gacc.py"
    with contextlib.suppress(OSError):
        if in_repo.read_text(encoding="utf-8") == MODULE_SOURCE:
            return str(in_repo)
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    try:
        return write_metric_module(cache_home / "gacc_hf" / "metrics" / "gacc")
    except OSError:
        user = getattr(os, "getuid", lambda: "user")()
        return write_metric_module(Path(tempfile.gettempdir()) / f"gacc_hf-{user}" / "metrics" / "gacc")


METRIC_PATH: str  # resolved on first access (module __getattr__), so importing this module writes nothing


def __getattr__(name: str) -> str:
    if name == "METRIC_PATH":
        path = _metric_path()
        globals()["METRIC_PATH"] = path
        return path
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def install_metric(modules_cache: str | os.PathLike[str] | None = None) -> str:
    """Put the metric where `evaluate.load("gacc")` finds it offline; return the path of the `gacc.py` written.

    Mirrors what evaluate leaves after fetching a canonical metric from the Hub:
    `<modules_cache>/evaluate_modules/metrics/evaluate-metric--gacc/<hash>/gacc.py`, with `__init__.py`
    files on the way and `<hash>` computed by evaluate's own `files_to_hash`. When the Hub is off or has no
    such metric, evaluate falls back to the most recently modified hash folder there, so the file is touched.
    `modules_cache` defaults to evaluate's `HF_MODULES_CACHE` (env var of that name, or
    ~/.cache/huggingface/modules), which must be the same when `evaluate.load` runs.
    """
    from evaluate.loading import files_to_hash

    root = Path(modules_cache if modules_cache is not None else evaluate.config.HF_MODULES_CACHE).expanduser()
    source = _metric_path()
    digest = files_to_hash([source])
    packages = [root, root / "evaluate_modules", root / "evaluate_modules" / "metrics"]
    target_dir = packages[-1] / HUB_NAME / digest
    for folder in [*packages, target_dir.parent, target_dir]:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").touch(exist_ok=True)
    target = Path(write_metric_module(target_dir))
    os.utime(target)  # newest hash folder wins when evaluate picks a cached version
    meta = {"original file path": source, "local file path": str(target)}
    (target_dir / "gacc.json").write_text(json.dumps(meta), encoding="utf-8")
    return str(target)


NOTICE_PTH = "gacc-hf-metric.pth"
# One line that Python runs at start-up (a `.pth` line that begins with `import`): it drops evaluate's notice
# that it is "Using the latest cached version" of this metric, and no other record.
_NOTICE_FILTER = (
    'import logging; logging.getLogger("evaluate.loading").addFilter(lambda record: not ('
    '"evaluate-metric--gacc" in str(record.msg) and "couldn\'t be found locally" in str(record.msg)))\n'
)


def quiet_cached_notice(site_dir: str | os.PathLike[str] | None = None) -> str | None:
    """Silence evaluate's warning on every offline `evaluate.load("gacc")` of the installed metric; the `.pth`
    file written, or None where `site_dir` (default: this environment's site-packages) is not writable.

    evaluate says it found the metric neither "locally" nor "remotely on the Hugging Face Hub" and uses its
    cached copy, which is exactly where `install_metric` put it: the notice is right for a metric fetched from
    the Hub, noise for this one. It is printed inside `evaluate.load`, before any of our code runs, so the
    filter is installed at interpreter start-up by a `.pth` file; it matches this metric's cache folder only.
    """
    import sysconfig

    folder = Path(site_dir if site_dir is not None else sysconfig.get_paths()["purelib"])
    staged = folder / f".{NOTICE_PTH}.tmp"  # not read at start-up: only names ending in .pth are
    try:
        staged.write_text(_NOTICE_FILTER, encoding="utf-8")
        os.replace(staged, folder / NOTICE_PTH)
    except OSError:
        with contextlib.suppress(OSError):
            staged.unlink()
        return None
    return str(folder / NOTICE_PTH)
