"""A model's GACC-Bench results as Hub cards and an upload plan (pure functions), then one commit per repo.

Publishing is verified: `publish_plan` starts from the folder and runs every check `gacc report` runs (parquet
checksums, every figure re-derived from `answers.parquet`), then refuses a run with a non-zero integrity counter, a
partial run (`--limit`), and one with recorded errors unless they are allowed (the card then says how many). The
card's dataset comes from the data identity the run recorded: the bundled sample and synthetic data are named as what
they are, never as the GACC-Bench release, and a run on a local file needs the Hub dataset it is named explicitly.

The model card gets `model-index` entries (`gacc_micro` / `gacc_macro`, one per condition and retention ratio,
with the dataset, config, split, data fingerprint, ratio and condition as metric args) and a results section
rendered from the package template `templates/model_card.md.j2`. Ceilings (full context, oracle) are shown there as
upper bounds and never enter the model-index. Optionally a details dataset (answers + memory ledger + its own
card), `.eval_results/` entries (`eval_results.py`) and a results Space (`space.py`) are planned too. Nothing
here touches the network except `fetch_file` and `publish`, which take their `HfApi` as an argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from huggingface_hub import CommitOperationAdd, EvalResult, HfApi, ModelCard, ModelCardData
from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError, RepositoryNotFoundError

from gacc_hf.cost.audit import usage_problems
from gacc_hf.hub.benchmark_yaml import EVAL_YAML
from gacc_hf.hub.commit import PublishError, RepoPlan, check_no_secrets, check_repo_id, commit, folder_operations
from gacc_hf.hub.details import details_card
from gacc_hf.hub.eval_results import (
    EVAL_RESULTS_FILE,
    check_tasks,
    eval_results_entries,
    merge_entries,
    run_task_scores,
)
from gacc_hf.hub.identity import DatasetRef, dataset_ref
from gacc_hf.hub.space import check_space_id, space_plan
from gacc_hf.protocol import FLOOR, is_ceiling
from gacc_hf.results.folder import read_folder, verify_folder
from gacc_hf.results.layout import ANSWERS_FILE, MEMORIES_FILE, RESULTS_FILE, RunResults
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG
from gacc_hf.results.usage_report import money, usage_line
from gacc_hf.results.views import choose_setting, setting_view, several_settings
from gacc_hf.run.config import partial_run
from gacc_hf.safe_yaml import check_front_matter
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


def check_repo_ids(repo_id: str, dataset_repo: str | None, details_repo_id: str | None, space_id: str | None) -> None:
    """Every repo a publish names, checked as the Hub checks it, before the folder is read (dry run or not)."""
    check_repo_id("--repo-id", repo_id, "model")
    for flag, value in (("--dataset-repo", dataset_repo), ("--details-repo-id", details_repo_id)):
        if value is not None:
            check_repo_id(flag, value, "dataset")
    if space_id is not None:
        check_space_id(space_id)


def check_usage(run: RunResults, run_dir: str | Path) -> None:
    """Refuse usage or cost figures that disagree with the rows and each other (`gacc_hf.cost.audit`): the card
    states them, so they are checked like the scores."""
    problems = usage_problems(run.payload, run.answers)
    if problems:
        raise PublishError(
            f"{Path(run_dir) / RESULTS_FILE}: {'; '.join(problems)}: this file was edited or is damaged; "
            "restore it or rerun the benchmark"
        )


def results_template() -> str:
    """The Jinja template of a model's results card (`templates/model_card.md.j2`)."""
    return template_text(__file__, "model_card.md.j2").rstrip("\n")


def citation() -> str:
    """The BibTeX entry of the GACC-Bench paper (`templates/citation.bib`)."""
    return template_text(__file__, "citation.bib").rstrip("\n")


def pick_compressor(run: RunResults, compressor: str | None) -> str:
    """The compressor a model card is about: the one named, or the run's only method (ceilings are never one)."""
    names = methods(run.answers)
    if not names:
        raise CompareError(
            "the run has compressors: none (only ceilings, upper bounds that are never published); "
            "publish a run with a compressor"
        )
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
            if s[f"{m}_ci_low"] is not None:  # to 4 places: a bootstrap bound carries no more (the card's table: 3)
                args["ci95"] = [round(s[f"{m}_ci_low"], 4), round(s[f"{m}_ci_high"], 4)]
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
        "ceilings": [shown(s) for s in run.scores if is_ceiling(s) and s["condition"] != FLOOR],
        "floor": [shown(s) for s in run.scores if is_ceiling(s) and s["condition"] == FLOOR],
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
        "usage": usage_line(p.get("usage"), p.get("cost")),
        "cost_cells": [c for c in (p.get("cost") or {}).get("cells", []) if c["compressor"] == compressor],
        "currency": (p.get("cost") or {}).get("currency", ""),
        "money": money,
        "citation": citation(),
    }


def _is_ours(r: EvalResult, dataset: DatasetRef) -> bool:
    """A GACC entry of this dataset and split; its config the one ranked, or the view the run read (what a card
    published before the config followed the `eval.yaml` says), so a republish replaces it."""
    ours = r.metric_type in {f"gacc_{m}" for m in METRICS} and r.dataset_config in (dataset.config, dataset.view)
    return ours and (r.dataset_type, r.dataset_split) == (dataset.id, dataset.split)


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
    check_front_matter(existing, "the model's card", error=PublishError)  # before huggingface_hub parses it
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


def _eval_results_operation(
    run: RunResults,
    compressor: str,
    dataset: DatasetRef,
    hub: Mapping[str, str | None],
    source: tuple[str, str] | None,
    only_defined: bool = False,
) -> tuple[CommitOperationAdd, list[str]]:
    """`.eval_results/gacc-bench.yaml`: the run's entries, checked against the benchmark's `eval.yaml` when
    `hub` has it, merged into the file the model repo has (`hub["eval_results"]`); with the task ids it skipped
    (`only_defined`: those the `eval.yaml` does not define)."""
    skipped: list[str] = []
    if hub.get("eval_yaml") is not None:
        scores = run_task_scores(run, compressor)
        skipped = check_tasks(scores, str(hub["eval_yaml"]), dataset.id, dataset.split, only_defined, dataset.view)
    ours = eval_results_entries(
        run, compressor, dataset.id, dataset_revision=dataset.revision, source=source, skip=skipped
    )
    text = merge_entries(hub.get("eval_results"), ours, f"{EVAL_RESULTS_FILE} in the model repo")
    return CommitOperationAdd(EVAL_RESULTS_FILE, text.encode("utf-8")), skipped


def one_setting(run: RunResults, reader: str | None, judge: str | None, whole_folder: str | None) -> RunResults:
    """The one (reader, judge) setting a publish reports: the run's own, or the one `reader` and `judge` choose
    in a run of several (SettingError naming the settings when none is chosen: a card never mixes them). The
    details dataset and the Space upload the folder's files, which hold every setting: refused (PublishError)
    for a run of several."""
    setting = choose_setting(run.config, reader, judge)
    if several_settings(run.config) and whole_folder:
        raise PublishError(
            f"{whole_folder}: a run of several (reader, judge) settings holds them all in its files; its card "
            "publishes one setting, and a details dataset or Space needs a run of that setting alone (rerun it "
            "with that --reader and --judge on the same cache: no model call)"
        )
    return setting_view(run, setting)


def publish_plan(
    run_dir: str | Path,
    repo_id: str,
    *,
    compressor: str | None = None,
    dataset_repo: str | None = None,
    split: str | None = None,
    allow_errors: bool = False,
    existing_card: str | None = None,
    details_repo_id: str | None = None,
    space_id: str | None = None,
    pr: bool = False,
    hub: Mapping[str, str | None] | None = None,
    only_defined: bool = False,
    reader: str | None = None,
    judge: str | None = None,
) -> list[RepoPlan]:
    """The commits publishing a verified run: the model card with `.eval_results/` (data on the Hub only),
    optionally a details dataset and a results Space. `pr` opens the model's commit as a pull request.

    `hub` holds what the Hub has: `eval_yaml` (the benchmark's; the run's task ids, split and config are
    checked against it) and `eval_results` (the model repo's current file, merged); `split` names the split of
    `dataset_repo` a run that recorded none read; `only_defined` leaves out of `.eval_results/` the task ids the
    `eval.yaml` does not define (the model plan's notes list them) instead of refusing. Every repo id is checked
    first. Raises ResultsError for a folder that fails `gacc report`'s checks, PublishError for one that must not
    be published (see
    `check_publishable`, `check_usage`, `dataset_ref`, `check_tasks`).
    """
    check_repo_ids(repo_id, dataset_repo, details_repo_id, space_id)
    whole = verify_folder(run_dir)
    check_usage(whole, run_dir)  # the usage of every setting, checked as recorded
    run = one_setting(whole, reader, judge, details_repo_id or space_id)
    check_publishable(run, allow_errors)
    dataset = dataset_ref(run.config, dataset_repo, split)
    name = pick_compressor(run, compressor)
    card = model_card(run, name, repo_id, dataset, existing_card, details_repo_id)
    ops = [CommitOperationAdd("README.md", card.encode("utf-8"))]
    links = [("datasets", details_repo_id, "GACC-Bench details"), ("spaces", space_id, "GACC-Bench results page")]
    source = next(((f"https://huggingface.co/{kind}/{rid}", label) for kind, rid, label in links if rid), None)
    notes: tuple[str, ...] = ()
    if dataset.on_hub:
        op, skipped = _eval_results_operation(run, name, dataset, hub or {}, source, only_defined)
        ops.append(op)
        if skipped:
            notes = (f"skipped in {EVAL_RESULTS_FILE}, not defined by {dataset.id}'s eval.yaml: {', '.join(skipped)}",)
    plans = [RepoPlan(repo_id, "model", ops, f"Add GACC-Bench results of {name}", pr=pr, notes=notes)]
    if details_repo_id:
        files = [op for op in folder_operations(run_dir) if op.path_in_repo in DETAIL_FILES]
        readme = CommitOperationAdd("README.md", details_card(details_repo_id, repo_id, dataset).encode("utf-8"))
        plans.append(RepoPlan(details_repo_id, "dataset", [readme, *files], f"GACC-Bench details of {repo_id}"))
    if space_id is not None:
        plans.append(
            space_plan(
                run,
                run_dir,
                space_id,
                model_id=repo_id,
                compressor=name,
                dataset=dataset,
                details_repo_id=details_repo_id,
            )
        )
    check_no_secrets(plans)
    return plans


def planned_texts(plans: Sequence[RepoPlan]) -> list[tuple[str, str]]:
    """(label, text) of every generated (in-memory) file of the plans, for a dry run to show."""
    return [
        (f"{p.repo_id}:{op.path_in_repo}", op.path_or_fileobj.decode("utf-8"))
        for p in plans
        for op in p.operations
        if isinstance(op.path_or_fileobj, bytes)
    ]


def fetch_file(api: HfApi, repo_id: str, filename: str, repo_type: str = "model") -> str | None:
    """A file of a Hub repo as text, or None when the repo or the file does not exist yet."""
    try:
        path = api.hf_hub_download(repo_id, filename, repo_type=repo_type)
    except LocalEntryNotFoundError:  # the network failed: publishing without the current file would drop it
        raise
    except (RepositoryNotFoundError, EntryNotFoundError):
        return None
    return Path(path).read_text(encoding="utf-8")


def fetch_card(api: HfApi, repo_id: str) -> str | None:
    """The model's current card on the Hub, or None when the repo or its README does not exist yet."""
    return fetch_file(api, repo_id, "README.md")


def hub_state(
    api: HfApi, run_dir: str | Path, repo_id: str, dataset_repo: str | None, eval_yaml: str | None
) -> dict[str, str | None]:
    """What a real publish reads from the Hub before planning again: the benchmark's `eval.yaml` (unless given
    as a local file) and the model repo's current `.eval_results` file. Empty for data not on the Hub."""
    dataset = dataset_ref(read_folder(run_dir).config, dataset_repo)
    if not dataset.on_hub:
        return {}
    if eval_yaml is None:
        eval_yaml = fetch_file(api, dataset.id, EVAL_YAML, "dataset")
    if eval_yaml is None:
        raise PublishError(
            f"the dataset {dataset.id} has no {EVAL_YAML}, so it is no Benchmark and no leaderboard can show "
            "these results: push the folder `gacc data build` writes (it has one) with `gacc data push`"
        )
    return {"eval_yaml": eval_yaml, "eval_results": fetch_file(api, repo_id, EVAL_RESULTS_FILE)}


def publish(api: HfApi, plans: Sequence[RepoPlan]) -> list[str]:
    """Push each plan in one commit or pull request (the only write to the Hub); returns their URLs."""
    return [commit(api, p.repo_id, p.repo_type, p.operations, p.message, pr=p.pr) for p in plans]
