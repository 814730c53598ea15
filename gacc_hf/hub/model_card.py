"""A model's GACC-Bench results as Hub cards and an upload plan (pure functions), then one commit per repo.

Publishing is verified: `publish_plan` starts from the folder and runs every check `gacc report` runs
(parquet checksums, every figure re-derived from `answers.parquet`), then refuses a run with a non-zero
integrity counter, a partial run (`--limit`), and one with recorded errors unless they are allowed (the card
then says how many). The card's dataset comes from the data identity the run recorded: the bundled sample
and synthetic data are named as what they are, never as the GACC-Bench release, and a run on a local file
needs the Hub dataset it is named explicitly.

The model card gets `model-index` entries (`gacc_micro` / `gacc_macro`, one per condition and retention ratio,
with the dataset, config, split, data fingerprint, ratio and condition as metric args) and a results section
rendered from the package template `templates/model_card.md.j2`. Ceilings (full context, oracle) are shown there as
upper bounds and never enter the model-index. Optionally a details dataset (answers + memory ledger + its own
card) and `.eval_results/` entries are planned too. Nothing here touches the network except `fetch_card` and
`publish`, which take their `HfApi` as an argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import (
    CommitOperationAdd,
    DatasetCard,
    DatasetCardData,
    EvalResult,
    EvalResultEntry,
    HfApi,
    ModelCard,
    ModelCardData,
    eval_result_entries_to_yaml,
)
from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

from gacc_hf.hub.commit import commit, describe_plan, folder_operations
from gacc_hf.results.folder import verify_folder
from gacc_hf.results.layout import ANSWERS_FILE, MEMORIES_FILE, RESULTS_FILE, RunResults, is_ceiling
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG
from gacc_hf.run.config import partial_run
from gacc_hf.scoring.by_language import card_languages
from gacc_hf.scoring.compare import CompareError, methods
from gacc_hf.templates import template_text

METRICS = ("micro", "macro")
# What is measured is whether held-out questions are answered correctly (judged against gold references) from a
# compressed memory: a question-answering accuracy, with the compressor as the system under test. `summarization`
# would promise a summary scored against a reference summary (ROUGE-style), which is not what the score means.
TASK_TYPE = "question-answering"
TASK_NAME = "Goal-conditioned context compression (held-out questions)"
START, END = "<!-- gacc-bench-results:start -->", "<!-- gacc-bench-results:end -->"
DETAIL_FILES = (RESULTS_FILE, ANSWERS_FILE, MEMORIES_FILE, "report.md", SCORES_PNG, GAPS_PNG)


#: Data whose identity is known from its spec alone: never the GACC-Bench release.
BUNDLED = {
    "sample": "the gacc-hf bundled sample (not the GACC-Bench release)",
    "synthetic": "gacc-hf synthetic data (rule-made; not the GACC-Bench release)",
}


class PublishError(ValueError):
    """A run that must not be published as it is; the message says why and what to do."""


@dataclass(frozen=True)
class DatasetRef:
    """The data a run used, as the card names it (model-index `dataset`).

    `bundled` is True for the sample and synthetic data: the card then says the scores are not on the
    GACC-Bench release. `fingerprint` is the sha256 of the judge-view rows the run recorded.
    """

    id: str
    name: str
    config: str = "judge"
    split: str | None = None  # None: the data's only split
    revision: str | None = None
    fingerprint: str | None = None
    bundled: bool = False


def dataset_ref(config: Mapping[str, Any], dataset_repo: str | None = None) -> DatasetRef:
    """The card's dataset, from the data identity in `config["data"]`; `dataset_repo` names a Hub dataset.

    The sample and synthetic data are named as what they are (a `dataset_repo` for them is refused); a run on
    a Hub dataset is named by its repo id; a run on a local file or folder needs `dataset_repo`, the Hub dataset
    the file is (the fingerprint on the card lets anyone check).
    """
    data = config.get("data")
    if not isinstance(data, Mapping) or not data.get("fingerprint"):
        raise PublishError(
            "results.json records no data identity (written before gacc-hf recorded it): rerun the benchmark "
            "to publish its scores"
        )
    spec = data.get("spec")
    common = {
        "config": str(data.get("view") or "judge"),
        "split": data.get("split"),
        "fingerprint": data["fingerprint"],
    }
    base = str(spec).split(":", 1)[0]  # "synthetic:contexts=50,seed=1" is synthetic data
    if base in BUNDLED:
        if dataset_repo is not None:
            raise PublishError(f"the run used {BUNDLED[base]}, not {dataset_repo!r}: drop --dataset-repo")
        name = BUNDLED[base] + (f", {spec}" if spec != base else "")
        return DatasetRef(id=f"gacc-hf-{base}", name=name, bundled=True, **common)
    if data.get("kind") == "hub" and dataset_repo not in (None, spec):
        raise PublishError(f"the run used the Hub dataset {spec!r}, not {dataset_repo!r}")
    if dataset_repo is None:
        if data.get("kind") != "hub" or not spec:
            what = "a dataset object (no spec recorded)" if spec is None else repr(spec)
            raise PublishError(
                f"the run used {what}, not known to be a Hub dataset: pass --dataset-repo OWNER/NAME, the Hub "
                f"dataset these rows are (the card records their fingerprint {data['fingerprint']})"
            )
        dataset_repo = str(spec)
    return DatasetRef(id=dataset_repo, name=dataset_repo, **common)


def check_publishable(run: RunResults, allow_errors: bool = False) -> None:
    """Refuse what must not reach a model card: broken protocol, a partial run, unasked-for failed calls."""
    if "files" not in run.payload:
        raise PublishError("a schema 1 results folder records no file checksums: run `gacc report` on it first")
    broken = {k: v for k, v in run.payload["integrity"].items() if v}
    if broken:
        counters = ", ".join(f"{k} = {v}" for k, v in broken.items())
        raise PublishError(f"integrity counters are not 0 ({counters}): these scores break the protocol")
    partial = partial_run(run.config)
    if partial:
        raise PublishError(f"the run is {partial}; publish only a run over the whole dataset")
    errors = run.payload.get("errors") or []
    if errors and not allow_errors:
        raise PublishError(
            f"the run recorded {len(errors)} failed call(s), scored as wrong answers: fix and rerun, or pass "
            "--allow-errors to publish with the count stated on the card"
        )


@dataclass(frozen=True)
class RepoPlan:
    """What one commit to one Hub repo would add."""

    repo_id: str
    repo_type: str
    operations: list[CommitOperationAdd]
    message: str

    def describe(self) -> str:
        return describe_plan(self.repo_id, self.repo_type, self.operations)


def results_template() -> str:
    """The Jinja template of a model's results card (`templates/model_card.md.j2`)."""
    return template_text(__file__, "model_card.md.j2").rstrip("\n")


def citation() -> str:
    """The BibTeX entry of the GACC-Bench paper (`templates/citation.bib`)."""
    return template_text(__file__, "citation.bib").rstrip("\n")


def pick_compressor(run: RunResults, compressor: str | None) -> str:
    """The compressor a model card is about: the one named, or the run's only method (ceilings are never one)."""
    names = methods(run.answers)
    if compressor is None:
        if len(names) != 1:
            raise CompareError(f"the run has compressors {', '.join(names)}; choose one with --compressor")
        return names[0]
    if compressor not in names:
        raise CompareError(f"the run has no compressor {compressor!r}; it has {', '.join(names)}")
    return compressor


def _rows(run: RunResults, compressor: str) -> list[dict[str, Any]]:
    return [s for s in run.scores if s["compressor"] == compressor and not is_ceiling(s)]


def _method(m: Mapping[str, Any]) -> str:
    return f"{m['name']}@{m['revision']}"


def eval_results(run: RunResults, compressor: str, dataset: DatasetRef) -> list[EvalResult]:
    """model-index entries: `gacc_micro` and `gacc_macro` per (condition, ratio) of one compressor."""
    out = []
    for s in _rows(run, compressor):
        for m in METRICS:
            args: dict[str, Any] = {
                "dataset": dataset.id,
                "config": dataset.config,
                "split": dataset.split,
                "ratio": s["ratio"],
                "condition": s["condition"],
                "reader": _method(run.config["reader"]),
                "judge": _method(run.config["judge"]),
                "n_questions": s["n_questions"],
                "n_goals": s["n_goals"],
                "data_fingerprint": dataset.fingerprint,
            }
            if s[f"{m}_ci_low"] is not None:
                args["ci95"] = [s[f"{m}_ci_low"], s[f"{m}_ci_high"]]
            out.append(
                EvalResult(
                    task_type=TASK_TYPE,
                    task_name=TASK_NAME,
                    dataset_type=dataset.id,
                    dataset_name=dataset.name,
                    dataset_config=dataset.config,
                    dataset_split=dataset.split,
                    dataset_revision=dataset.revision,
                    metric_type=f"gacc_{m}",
                    metric_value=s[m],
                    metric_name=f"GACC {m.capitalize()} ({s['condition']}, r={s['ratio']:g})",
                    metric_config=f"{s['condition']}@{s['ratio']:g}",
                    metric_args=args,
                )
            )
    return out


def _ci(low: Any, high: Any, scale: float, fmt: str) -> str:
    return "" if low is None else f" [{scale * low:{fmt}}, {scale * high:{fmt}}]"


def template_values(
    run: RunResults, compressor: str, model_id: str, dataset: DatasetRef, details_repo_id: str | None = None
) -> dict[str, Any]:
    """Everything the results template shows, as display strings."""
    p, cfg = run.payload, run.config
    rows = _rows(run, compressor)
    revision = next((c["revision"] for c in cfg["compressors"] if c["name"] == compressor), "unknown")

    def shown(s: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "compressor": s["compressor"],
            "condition": s["condition"],
            "ratio": f"{s['ratio']:g}",
            "n_questions": s["n_questions"],
            **{m: f"{s[m]:.3f}{_ci(s[f'{m}_ci_low'], s[f'{m}_ci_high'], 1, '.3f')}" for m in METRICS},
        }

    return {
        "model_id": model_id,
        "compressor": {"name": compressor, "revision": revision},
        **card_languages(p, compressor, shown),
        "dataset": dataset,
        "n_goals": rows[0]["n_goals"] if rows else cfg.get("n_groups"),
        "n_questions": rows[0]["n_questions"] if rows else cfg.get("n_questions"),
        "n_bootstrap": cfg.get("n_bootstrap"),
        "harness": {"version": (p.get("versions") or {}).get("gacc-hf"), "git_revision": p.get("git_revision")},
        "scores": [shown(s) for s in rows],
        "ceilings": [shown(s) for s in run.scores if is_ceiling(s)],
        "n_errors": len(p.get("errors") or []),
        "gaps": [
            {
                "gap": g["gap"].replace("-", " − "),
                "ratio": f"{g['ratio']:g}",
                **{
                    m: f"{100 * g[f'{m}_diff']:+.1f}{_ci(g[f'{m}_diff_ci_low'], g[f'{m}_diff_ci_high'], 100, '+.1f')}"
                    for m in METRICS
                },
            }
            for g in p.get("gaps") or []
            if g["compressor"] == compressor
        ],
        "reader": _method(cfg["reader"]),
        "judge": _method(cfg["judge"]),
        "tokenizer": p["tokenizer"],
        "seed": p.get("seed"),
        "integrity": p["integrity"],
        "details_repo_id": details_repo_id,
        "citation": citation(),
    }


def _is_ours(r: EvalResult, dataset: DatasetRef) -> bool:
    return r.metric_type in {f"gacc_{m}" for m in METRICS} and (r.dataset_type, r.dataset_config, r.dataset_split) == (
        dataset.id,
        dataset.config,
        dataset.split,
    )


def model_card(
    run: RunResults,
    compressor: str,
    model_id: str,
    dataset: DatasetRef,
    existing: str | None = None,
    details_repo_id: str | None = None,
) -> str:
    """The model's card text with its GACC-Bench results.

    Without `existing`, the whole card is rendered from the template. With it, earlier GACC entries for the
    same dataset/config/split are replaced, every other eval result and the rest of the card are kept, and the
    results section (between the markers) is replaced or appended.
    """
    results = eval_results(run, compressor, dataset)
    values = template_values(run, compressor, model_id, dataset, details_repo_id)
    if not results:
        raise ValueError(f"compressor {compressor!r} has no compressed-condition scores to publish")
    fresh = ModelCard.from_template(
        ModelCardData(model_name=model_id, eval_results=results, tags=["gacc-bench", "context-compression"]),
        template_str=results_template(),
        **values,
    )
    if existing is None:
        return str(fresh)
    card = ModelCard(existing)
    kept = [r for r in card.data.eval_results or [] if not _is_ours(r, dataset)]
    card.data.eval_results = kept + results
    card.data.model_name = card.data.model_name or model_id
    card.data.tags = list(dict.fromkeys([*(card.data.tags or []), "gacc-bench"]))
    section = fresh.text[fresh.text.index(START) : fresh.text.index(END) + len(END)]
    text = card.text
    if START in text and END in text:
        text = text[: text.index(START)] + section + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    card.text = text
    return str(card)


def eval_results_yaml(run: RunResults, compressor: str, dataset: DatasetRef, task_id: str, ratio: float) -> str:
    """`.eval_results/*.yaml` for a benchmark registered on the Hub: the own-condition Micro at one ratio.

    The newer format holds one headline value per benchmark task, and the task id must be one the benchmark's
    `eval.yaml` declares, so it is written only when the caller names that task, for data on the Hub.
    """
    if dataset.bundled:
        raise PublishError(f".eval_results entries are for a benchmark on the Hub; the run used {dataset.name}")
    row = next((s for s in _rows(run, compressor) if s["condition"] == "own" and s["ratio"] == ratio), None)
    if row is None:
        ratios = sorted({s["ratio"] for s in _rows(run, compressor) if s["condition"] == "own"})
        raise ValueError(f"no own-condition score at ratio {ratio:g} for {compressor!r}; the run has {ratios}")
    entry = EvalResultEntry(
        dataset_id=dataset.id,
        task_id=task_id,
        value=row["micro"],
        dataset_revision=dataset.revision,
        notes=f"gacc_micro, condition=own, ratio={ratio:g}, reader={_method(run.config['reader'])}, "
        f"judge={_method(run.config['judge'])}",
    )
    return yaml.safe_dump(eval_result_entries_to_yaml([entry]), sort_keys=False, allow_unicode=True)


def details_card(details_repo_id: str, model_id: str, dataset: DatasetRef) -> str:
    """The card of the details dataset: two configs (answers, memories) over the run's parquet files."""
    data = DatasetCardData(
        pretty_name=f"GACC-Bench details: {model_id}",
        tags=["gacc-bench", "evaluation-details"],
        configs=[
            {"config_name": "answers", "data_files": ANSWERS_FILE, "default": True},
            {"config_name": "memories", "data_files": MEMORIES_FILE},
        ],
    )
    body = "\n".join(
        [
            f"# GACC-Bench details: {model_id}",
            "",
            f"Per-question answers and the memory ledger of the GACC-Bench run behind the results on the card of "
            f"[{model_id}](https://huggingface.co/{model_id}), on {dataset.name} (`{dataset.id}`, config "
            f"`{dataset.config}`, split `{dataset.split or 'the only one'}`, rows fingerprint "
            f"`{dataset.fingerprint}`). Written by gacc-hf.",
            "",
            f"- `answers` ({ANSWERS_FILE}): one row per question per compressor, condition and retention ratio: "
            "ids, the question text, the sha256 of the memory read, the reader's answer, the judge's verdict "
            "(`correct`), and **`references`: the gold answers** (judge-only: neither the compressor nor the "
            "reader saw them; keep them out of any model input).",
            f"- `memories` ({MEMORIES_FILE}): one ledger row per memory: the memory text (`memory`), budget L, "
            "source tokens N, proposed / retained / re-encoded tokens, unused budget, padding (always 0), "
            "truncated, compressor called.",
            "- Rows with `ceiling` true (full context, oracle; closed book, the floor) are bounds, not methods.",
            f"- `{RESULTS_FILE}`: configuration, versions, tokenizer identity, integrity counters, scores with CIs; "
            "`report.md` and the plots summarise them.",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            f'answers = load_dataset("{details_repo_id}", "answers", split="train")',
            "```",
            "",
        ]
    )
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body}"))


def publish_plan(
    run_dir: str | Path,
    repo_id: str,
    *,
    compressor: str | None = None,
    dataset_repo: str | None = None,
    allow_errors: bool = False,
    existing_card: str | None = None,
    details_repo_id: str | None = None,
    eval_results_task: str | None = None,
    headline_ratio: float | None = None,
) -> list[RepoPlan]:
    """The commits publishing a verified run: the model card (+ eval-results file), optionally a details dataset.

    Raises ResultsError for a folder that fails `gacc report`'s checks, PublishError for one that must not be
    published (see `check_publishable`, `dataset_ref`).
    """
    run = verify_folder(run_dir)
    check_publishable(run, allow_errors)
    dataset = dataset_ref(run.config, dataset_repo)
    name = pick_compressor(run, compressor)
    card = model_card(run, name, repo_id, dataset, existing_card, details_repo_id)
    ops = [CommitOperationAdd("README.md", card.encode("utf-8"))]
    if eval_results_task:
        ratios = sorted({s["ratio"] for s in _rows(run, name) if s["condition"] == "own"})
        if headline_ratio is None and len(ratios) != 1:
            raise ValueError(f"the run has ratios {ratios}; choose the headline one with --headline-ratio")
        ratio = ratios[0] if headline_ratio is None else headline_ratio
        text = eval_results_yaml(run, name, dataset, eval_results_task, ratio)
        ops.append(CommitOperationAdd(".eval_results/gacc-bench.yaml", text.encode("utf-8")))
    plans = [RepoPlan(repo_id, "model", ops, f"Add GACC-Bench results of {name}")]
    if details_repo_id:
        files = [op for op in folder_operations(run_dir) if op.path_in_repo in DETAIL_FILES]
        readme = CommitOperationAdd("README.md", details_card(details_repo_id, repo_id, dataset).encode("utf-8"))
        plans.append(RepoPlan(details_repo_id, "dataset", [readme, *files], f"GACC-Bench details of {repo_id}"))
    return plans


def planned_texts(plans: Sequence[RepoPlan]) -> list[tuple[str, str]]:
    """(label, text) of every generated (in-memory) file of the plans, for a dry run to show."""
    return [
        (f"{p.repo_id}:{op.path_in_repo}", op.path_or_fileobj.decode("utf-8"))
        for p in plans
        for op in p.operations
        if isinstance(op.path_or_fileobj, bytes)
    ]


def fetch_card(api: HfApi, repo_id: str) -> str | None:
    """The model's current card on the Hub, or None when the repo or its README does not exist yet."""
    try:
        path = api.hf_hub_download(repo_id, "README.md")
    except (RepositoryNotFoundError, EntryNotFoundError):
        return None
    return Path(path).read_text(encoding="utf-8")


def publish(api: HfApi, plans: Sequence[RepoPlan]) -> list[str]:
    """Push each plan in one commit (the only write to the Hub); returns the commit URLs."""
    return [commit(api, p.repo_id, p.repo_type, p.operations, p.message) for p in plans]
