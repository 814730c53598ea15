"""`run_benchmark`: validate -> plan -> memories -> answers -> verdicts -> scores.

This module only orchestrates; each step lives in the module named for it: `run.plan` (ledger rows and
memory keys), `run.calls` (calls through the cache, failure policy), `run.compress` (compress once, ceilings),
`run.read` (answers and verdicts), `scoring.integrity` (the audits), `scoring.scores` (Micro, Macro, evidence
recall, CIs). Everything is validated (data, ratios, conditions, method names and identities) before any model
call, and every model output goes through the content-addressed cache, so a rerun resumes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gacc_hf.budget import PROTOCOL_VERSION, RatioLike, exact_ratio
from gacc_hf.cost.cells import cell_usage
from gacc_hf.cost.costing import price_methods
from gacc_hf.cost.limits import Meter, SpendingLimits
from gacc_hf.cost.prices import Prices
from gacc_hf.cost.usage import meters, token_counter
from gacc_hf.data.fingerprint import fingerprint
from gacc_hf.data.loading import from_memory, hub_revision, load_any, spec_kind
from gacc_hf.data.schema import Group, validate
from gacc_hf.results.result import BenchmarkResult
from gacc_hf.results.trackers import check_trackers, log_run, run_name, tracker_names
from gacc_hf.run.aside import Aside
from gacc_hf.run.cache import Cache
from gacc_hf.run.cache.matches import APART_FROM, Matched, find_matches, finish_matches, plan_matches
from gacc_hf.run.calls import Executor, MethodError, OnError, resolve_method
from gacc_hf.run.collection import fewer_collections
from gacc_hf.run.compress import add_evidence, compute_memories, fill_ledger
from gacc_hf.run.conditions import GoalAssigner, check_conditions
from gacc_hf.run.config import as_list, check_limit, limited_groups, one_or_list
from gacc_hf.run.goals import select_goals
from gacc_hf.run.plan import MemoryPlan, plan_memories
from gacc_hf.run.presets import DEFAULTS, RUN_DEFAULTS
from gacc_hf.run.read import Outcome, answer_rows, read_and_judge
from gacc_hf.run.tasks import Method
from gacc_hf.scoring.integrity import budget_violations, count_errors, exposure_rows
from gacc_hf.scoring.reading import setting_scores
from gacc_hf.scoring.settings import Setting, in_setting, tagged
from gacc_hf.tokenizer import Codec, get_codec

__all__ = ["BenchmarkResult", "MethodError", "check_ratios", "run_benchmark"]


def check_ratios(ratios: RatioLike | Sequence[RatioLike]) -> list[tuple[RatioLike, Any]]:
    """(ratio as given, exact fraction) pairs; one number is one ratio; equal ratios are refused.

    Refused rather than deduplicated: `0.1, 0.10` is most likely a typo for another ratio, and silently
    merging it would hide that while a duplicated cell would double its questions and narrow its CIs.
    """
    given = [ratios] if isinstance(ratios, int | float | str) or not isinstance(ratios, Sequence) else list(ratios)
    if not given:
        raise ValueError("at least one retention ratio is required")
    pairs = [(r, exact_ratio(r)) for r in given]
    seen: dict[Any, RatioLike] = {}
    for r, exact in pairs:
        if exact in seen:
            raise ValueError(f"retention ratio {r!r} is given twice (equal to {seen[exact]!r}); give each ratio once")
        seen[exact] = r
    return pairs


def data_languages(groups: list[Group]) -> dict[str, dict[str, Any]]:
    """Per language (first-seen order): its goals, questions, whether any group's tag was detected rather than
    declared in the data, and (`declared`) the tags the data declared for it where one differs from its name."""
    out: dict[str, dict[str, Any]] = {}
    for g in groups:
        entry = out.setdefault(g.language_tag, {"n_groups": 0, "n_questions": 0, "detected": False})
        entry["n_groups"] += 1
        entry["n_questions"] += len(g.questions)
        entry["detected"] = entry["detected"] or g.language_detected
        if g.language is not None:
            entry.setdefault("declared", set()).add(g.language)
    for language, entry in out.items():
        declared = sorted(entry.pop("declared", ()))
        if declared and declared != [language]:
            entry["declared"] = declared
    return out


def _data_identity(
    dataset: Any,
    groups: list[Group],
    spec: str | None,
    split: str | None,
    columns: Mapping[str, str] | None,
    revision: str | None = None,
) -> dict[str, Any]:
    """What the data was: its spec and kind as the caller named it, the Hub revision it was loaded at (when it
    came from the Hub), and a content fingerprint that holds whatever it was called (rows handed over in memory
    have no spec: kind `in-memory`)."""
    spec = spec if spec is not None else (str(dataset) if isinstance(dataset, str | os.PathLike) else None)
    return {
        "spec": spec,
        "kind": "in-memory" if spec is None else spec_kind(spec),
        "split": split,
        **({"revision": revision} if revision else {}),
        **({"columns": dict(columns)} if columns else {}),
        "view": "judge",
        "fingerprint": fingerprint(groups),
        "n_groups": len(groups),
        "n_contexts": len({g.context_id for g in groups}),
        "n_questions": sum(len(g.questions) for g in groups),
        "languages": data_languages(groups),
    }


def utc_now() -> str:
    """Now in UTC to the second, as a run records its start and end (`2026-12-06T05:13:17Z`)."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def load_rows(
    dataset: Any, columns: Mapping[str, str] | None, data_spec: str | None, revision: str | None = None
) -> tuple[Any, str | None]:
    """The rows of `dataset` and the Hub revision they were loaded at: a data spec (sample, file, folder, saved
    dataset, Hub id: at `revision`, else at the commit its main branch is at now) is loaded here, rows in another
    layout are mapped; rows a caller loaded from `data_spec` were mapped then (`columns` is only recorded)."""
    if isinstance(dataset, str | os.PathLike):
        if revision is None and spec_kind(os.fspath(dataset)) == "hub":
            revision = hub_revision(os.fspath(dataset))
        return load_any(dataset, columns=columns, revision=revision), revision
    return from_memory(dataset, columns if data_spec is None else None), revision


@fewer_collections()
def run_benchmark(
    dataset: Any,
    compressor: Any = DEFAULTS.compressors,
    reader: Any = DEFAULTS.reader,
    judge: Any = DEFAULTS.judge,
    ratios: RatioLike | Sequence[RatioLike] = DEFAULTS.ratios,
    conditions: Sequence[str] = DEFAULTS.conditions,
    cache_dir: str | None = None,
    seed: int = RUN_DEFAULTS["seed"],
    *,
    n_bootstrap: int = RUN_DEFAULTS["n_bootstrap"],
    batch_size: int = RUN_DEFAULTS["batch_size"],
    on_error: OnError = RUN_DEFAULTS["on_error"],
    progress: bool = True,
    shard: Callable[[list[Group]], list[Group]] | None = None,
    data_spec: str | None = None,
    split: str | None = None,
    limit: int | float | None = None,
    columns: Mapping[str, str] | None = None,
    limits: SpendingLimits | None = None,
    prices: Prices | None = None,
    goals: Sequence[str] | None = None,
    data_revision: str | None = None,
    log_to: str | Sequence[str] | None = None,
    log_dir: str | None = None,
) -> BenchmarkResult:
    """Run the GACC protocol over judge-config rows and score it.

    The defaults are the main preset's (`gacc_hf.run.presets`), so `run_benchmark(ds)` is the experiment
    `gacc run` runs; no cache unless `cache_dir` is given. `prices` (`gacc_hf.cost`) price its usage; `limits`
    stop it before a call that would pass them (`gacc_hf.cost.limits`; a shard gets its share). `compressor`,
    `reader`, `judge` may each be a list (a callable or a registered name each): memories are made once for all
    readers, answers once per reader, and each (reader, judge) setting is scored alone (`gacc_hf.scoring.settings`);
    `ratios` may be one number. Everything is validated before any model call. `shard` picks the groups this
    process computes (`gacc_hf.run.distributed`); the plan sees every group: a shard's rows equal a whole run's.
    `data_spec`, `split`, `data_revision` (a Hub commit) record what the caller loaded; `goals` (ids), then `limit`
    (N groups, or a fraction) keep part of the data: a partial run; `columns` maps schema names to the data's;
    `log_to` (trackio, tensorboard, wandb: `gacc_hf.results.trackers`) logs the result under `log_dir`."""
    started = utc_now()
    _check_logging(log_to, log_dir, shard)
    settings = {"seed": seed, "n_bootstrap": n_bootstrap, "batch_size": batch_size, "on_error": on_error}
    loaded, data_revision = load_rows(dataset, columns, data_spec, data_revision)
    setup = validate_run(loaded, compressor, reader, judge, ratios, conditions, cache_dir, limit, settings, goals)
    priced = None if prices is None else price_methods(run_methods(setup), prices)
    codec = get_codec()
    assigner = pair_goals(setup, seed)
    work = setup.groups if shard is None else shard(setup.groups)
    with Cache(cache_dir) as cache:
        ex = Executor(cache, on_error, batch_size, progress, _meter(limits, shard))
        texts = list(dict.fromkeys(g.context for g in work))
        n_tokens = dict(zip(texts, codec.count_batch(texts), strict=True))
        n_count_errors = count_errors(work, n_tokens, [r for r, _ in setup.ratios], cache, progress)
        plan = plan_memories(work, setup.compressors, setup.conditions, setup.exact_ratios, assigner, n_tokens, codec)
        memories = compute_memories(plan, setup.compressors, ex, codec)
        fill_ledger(plan, memories)
        outcome, matched, violations = _read_and_match(setup, work, plan, memories, ex, cache, codec, kept := {})
    add_evidence(plan, evidence := [m.evidence for m in matched])
    exposures = exposure_rows(plan.ledger, [m.exposed for m in matched])
    answers = answer_rows(work, plan.ledger, memories, evidence, outcome)
    scored = setting_scores(answers, n_bootstrap, seed)
    result = BenchmarkResult(
        scores=scored["scores"],
        scores_by_language=scored["scores_by_language"],
        memories=plan.ledger,
        answers=answers,
        calls=dict(ex.calls),
        integrity={"budget_violations": violations, "count_errors": n_count_errors, "exposures": len(exposures)},
        config=_run_config(
            setup, {**settings, "cache_dir": cache_dir}, (dataset, data_spec, split, columns, data_revision), started
        ),
        tokenizer=codec.identity(),
        errors=ex.errors,
        exposures=exposures,
        **_timings(ex),
        usage=_usage(ex, setup, plan.ledger, memories, answers, kept),
        prices=priced,
        dataset=loaded if data_spec is None and not isinstance(dataset, str | os.PathLike) else None,
    )
    return _logged(result, log_to, log_dir)


def _timings(ex: Executor) -> dict[str, Any]:
    """The time inside each role's calls, and per method, and the tokens each role generated."""
    return {
        "seconds": {role: round(s, 3) for role, s in ex.seconds.items()},
        "method_seconds": {role: {n: round(s, 3) for n, s in m.items()} for role, m in ex.method_seconds.items()},
        "generated_tokens": dict(ex.generated_tokens),
    }


def _check_logging(log_to: str | Sequence[str] | None, log_dir: str | None, shard: Any) -> None:
    """The trackers asked for are installed and their folder writable, before any model call; a shard's part
    of a run is not logged (its launcher logs the merged result)."""
    if tracker_names(log_to) and shard is not None:
        raise ValueError("log_to logs a whole run, not a shard's part: log the merged result instead")
    check_trackers(log_to, log_dir)


def _logged(result: BenchmarkResult, log_to: str | Sequence[str] | None, log_dir: str | None) -> BenchmarkResult:
    """`result`, logged to the trackers asked for (as `log_run` names it: its start time and compressors)."""
    if tracker_names(log_to):
        document = result.results_document()
        log_run(document, result.answers, result.memories, log_to, log_dir, run_name(document))
    return result


def _read_and_match(
    setup: RunSetup,
    work: list[Group],
    plan: MemoryPlan,
    memories: dict[str, dict[str, Any]],
    ex: Executor,
    cache: Cache,
    codec: Codec,
    kept: dict[Setting, dict[str, Any]],
) -> tuple[dict[Setting, Outcome], list[Matched], int]:
    """The readers' and the judges' calls (`read_and_judge`: answers once per reader, verdicts once per
    answer and judge), and meanwhile the budget check (in a thread: tiktoken releases the
    GIL) and what the matcher finds in each row's memory (in a process of its own when it has enough to work
    out); the matcher's findings are stored once the calls are done. Returns the budget violations last."""
    matching = plan_matches(plan.ledger, memories, work, setup.every_group, plan.shown_goals, cache)
    goals = {g.goal_id: g for g in work}
    beside = ThreadPoolExecutor(1, thread_name_prefix="gacc-budget")
    checked = beside.submit(budget_violations, plan.ledger, memories, codec)
    beside.shutdown(wait=False)  # its one task still runs; a failed call need not wait for it
    with Aside(find_matches, matching.todo, goals, matching.held, apart=len(matching.todo) >= APART_FROM) as found:
        outcome = read_and_judge(work, plan.ledger, memories, setup.readers, setup.judges, ex, kept)
        return outcome, finish_matches(matching, plan.ledger, goals, found.result(), cache), checked.result()


def _meter(limits: SpendingLimits | None, shard: Any) -> Meter | None:
    """This process's meter of the limits: the whole of them, or a rank's share (`ContextShard`)."""
    if limits is None or not limits.active:
        return None
    share = getattr(shard, "share", None)
    return share(limits) if share is not None else Meter.for_rank(limits)


def run_methods(setup: RunSetup) -> list[tuple[str, str, str]]:
    """(role, spec, name) of every method of a run, compressors first."""
    return [(m.role, m.spec, m.name) for m in setup.methods]


def _usage(
    ex: Executor,
    setup: RunSetup,
    ledger: list[dict[str, Any]],
    memories: dict[str, dict[str, Any]],
    answers: list[dict[str, Any]],
    kept: dict[Setting, dict[str, Any]],
) -> dict[str, Any]:
    """The run's `usage`: per role and method (`gacc_hf.cost.tally`), per cell of each (reader, judge)
    setting, and each method's counter."""
    cells = [
        cell
        for setting, of_setting in kept.items()
        for cell in tagged(setting, cell_usage(ledger, memories, in_setting(answers, setting), of_setting))
    ]
    return {**ex.usage.document(), "cells": cells, "counters": _counters(setup)}


def _counters(setup: RunSetup) -> dict[str, dict[str, str]]:
    """Per role and model method, the tokenizer its usage is counted with where the server does not say."""
    out: dict[str, dict[str, str]] = {}
    for m in setup.methods:
        if meters(m.fn):
            out.setdefault(m.role, {})[m.name] = token_counter(m.fn)
    return out


@dataclass(frozen=True)
class RunSetup:
    """A run's checked inputs: the groups it covers and the methods, ratios and conditions it crosses."""

    groups: list[Group]
    limited: dict[str, Any] | None
    ratios: list[tuple[RatioLike, Any]]
    conditions: list[str]
    compressors: list[Method]
    readers: list[Method]
    judges: list[Method]
    chosen: dict[str, Any] | None = None  # the goals chosen by id (`gacc_hf.run.goals`), None: no choice
    pool: list[Group] | None = None  # the groups the cross condition pairs among, None: `groups`

    @property
    def methods(self) -> list[Method]:
        """Every method of the run: compressors, readers, judges."""
        return [*self.compressors, *self.readers, *self.judges]

    @property
    def exact_ratios(self) -> list[Any]:
        return [e for _, e in self.ratios]

    @property
    def every_group(self) -> list[Group]:
        """The groups a goal is paired among and the leak audit reads: the whole data when goals are chosen."""
        return self.groups if self.pool is None else self.pool


def validate_run(
    dataset: Any,
    compressor: Any,
    reader: Any,
    judge: Any,
    ratios: RatioLike | Sequence[RatioLike],
    conditions: Sequence[str],
    cache_dir: str | None,
    limit: int | float | None,
    settings: Mapping[str, Any],
    goals: Sequence[str] | None = None,
) -> RunSetup:
    """Validate the data, then check the goals chosen, ratios, conditions and methods: all before any model call
    (the run and its dry run share it, so a plan is refused exactly where the run would be)."""
    groups = validate(dataset)
    pool, chosen = None, None
    if goals is not None:
        pool = groups
        groups, chosen = select_goals(groups, goals)
    limited = None
    if limit is not None:
        kept = limited_groups(groups, check_limit(limit))
        limited = {"value": limit, "groups": len(kept), "of": len(groups)}
        groups = kept
    pairs = check_ratios(ratios)
    conds = check_conditions(conditions)
    _check_settings(settings["on_error"], settings["batch_size"], settings["n_bootstrap"])
    methods = _resolve_methods(compressor, reader, judge, cache_dir is not None)
    return RunSetup(groups, limited, pairs, conds, *methods, chosen=chosen, pool=pool)


def _check_settings(on_error: str, batch_size: int, n_bootstrap: int) -> None:
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be >= 0, got {n_bootstrap}")


def _resolve_methods(
    compressor: Any, reader: Any, judge: Any, cached: bool
) -> tuple[list[Method], list[Method], list[Method]]:
    """Each role's methods (one or a list), names distinct within a role: a name given twice would read or
    judge every answer twice and count it twice."""
    resolved = []
    for role, given in (("compressor", compressor), ("reader", reader), ("judge", judge)):
        methods = [resolve_method(role, m, cached) for m in as_list(given)]
        if not methods and role != "compressor":  # a run of bounds only names no compressor
            raise ValueError(f"at least one {role} is required")
        names = [m.name for m in methods]
        if twice := [n for n in dict.fromkeys(names) if names.count(n) > 1]:
            raise ValueError(f"{role} names must be distinct: {', '.join(map(repr, twice))} given twice in {names}")
        resolved.append(methods)
    return resolved[0], resolved[1], resolved[2]


def pair_goals(setup: RunSetup, seed: int) -> GoalAssigner:
    """The cross-goal pairing, drawn over every group (not a shard's) so that shards agree, and over the whole
    data when goals are chosen by id, so that a chosen goal's cross memory is the one a whole run makes."""
    assigner = GoalAssigner(setup.every_group, seed)
    if "cross" in setup.conditions:
        for g in setup.groups:
            assigner.cross(g)
    return assigner


def _run_config(
    setup: RunSetup,
    settings: dict[str, Any],
    data: tuple[Any, str | None, str | None, Mapping[str, str] | None, str | None],
    started: str,
) -> dict[str, Any]:
    """The `config` of a result: methods with their revisions and specs, settings, data identity, versions."""
    compressors, readers, judges = setup.compressors, setup.readers, setup.judges
    return {
        "compressors": [{"name": c.name, "revision": c.revision} for c in compressors],
        "reader": one_or_list([{"name": r.name, "revision": r.revision} for r in readers]),
        "judge": one_or_list([{"name": j.name, "revision": j.revision} for j in judges]),
        "methods": {
            "compressors": [c.spec for c in compressors],
            "reader": one_or_list([r.spec for r in readers]),
            "judge": one_or_list([j.spec for j in judges]),
        },
        "ratios": [float(r) for r in setup.exact_ratios],
        "exact_ratios": [str(r) for r in setup.exact_ratios],  # "1/3": what the float cannot say
        "conditions": list(setup.conditions),
        **settings,
        "n_groups": len(setup.groups),
        "n_questions": sum(len(g.questions) for g in setup.groups),
        "data": _data_identity(*data[:1], setup.groups, *data[1:]),
        "limit": setup.limited,
        "goals": setup.chosen,
        "protocol_version": PROTOCOL_VERSION,
        "gacc_hf_version": harness_version(),
        "started_at": started,
        "finished_at": utc_now(),
    }


def harness_version() -> str:
    """The gacc-hf version a run records (imported late: the package imports this module)."""
    from gacc_hf import __version__

    return __version__
