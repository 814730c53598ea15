"""The leaderboard's rows: every scored cell of every run given, checked as `gacc report` checks a run.

A board ranks cells against each other, so the runs must be comparable: one protocol version, and one data set
(the rows fingerprint of `config.data`) unless mixed data is allowed, when each data set is a group of its own
and cells are never ranked across groups. Each run is read and verified whole (`verify_folder`): a run edited by
hand is refused here as `gacc report` refuses it. The same run given twice is taken once.

A row is a cell (compressor, condition, ratio, reader, judge) with its scores and CIs, the reading aids
(retention, AUC), the memory tokens a reader read per question (from the ledger), and where recorded the
compressor's cost and seconds per question. The Pareto rank is computed here, per data group and condition,
over the methods only (bounds are reference lines, never ranked): rank 1 is the front of the cells no other
cell beats on both axes (higher Micro, fewer tokens, or less cost or time).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tqdm.auto import tqdm

from gacc_hf.protocol import FLOOR, is_ceiling
from gacc_hf.results.both_ends import both_ends
from gacc_hf.results.folder import verify_folder
from gacc_hf.results.layout import RESULTS_FILE, ResultsError, RunResults

#: the x axes a quality-against-cost plot can have, each a row field; lower is better on all of them
COST_AXES = ("tokens", "compressor_cost", "compressor_seconds")
_SCORES = ("micro", "macro", "evidence_micro")
T = TypeVar("T")


@dataclass(frozen=True)
class BoardRun:
    """One run on the board: the folder given, the name its page is filed under, its verified `results.json`
    document and its cells (`board_rows` ranks them)."""

    path: Path
    label: str
    payload: dict[str, Any]
    cells: list[dict[str, Any]]

    @property
    def config(self) -> dict[str, Any]:
        return self.payload["config"]


def verified(path: Path, label: str) -> BoardRun:
    """A run read and verified as `gacc report` verifies it, with its cells."""
    run = verify_folder(path)
    return board_run(path, label, run)


def board_run(path: Path, label: str, run: RunResults) -> BoardRun:
    """The board's view of a verified run: its document and its cells (the tables are left behind)."""
    empty = BoardRun(path, label, run.payload, [])
    return BoardRun(path, label, run.payload, _run_rows(empty, run))


def load_runs(
    paths: Sequence[str | Path],
    allow_mixed_data: bool = False,
    jobs: int | str = 1,
    prepare: Callable[[Path, str], BoardRun] = verified,
    ready: Callable[[Path, str], BoardRun | None] | None = None,
    progress: bool = False,
) -> tuple[list[BoardRun], list[str]]:
    """Read and verify every run (`prepare`, on `jobs` processes; a run that `ready` gives here is taken as it
    gives it), drop a run given twice, check the runs can stand on one board. With `progress`, a bar on a
    terminal moves as each run's checks end.

    Returns the runs and the notes to print (a run given twice, named once). Raises ResultsError naming the run
    at fault: no run, a folder that is not a results folder or fails its checks, runs of different protocol
    versions, runs on different data without `allow_mixed_data`."""
    if not paths:
        raise ResultsError("a board needs at least one results folder (gacc board RUN... --output-dir DIR)")
    planned: list[tuple[Path, str]] = []
    seen: dict[str, Path] = {}
    notes: list[str] = []
    for given in paths:
        path = Path(given)
        digest = _identity(path)
        if digest in seen:
            notes.append(f"{path}: the same run as {seen[digest]}; on the board once")
            continue
        seen[digest] = path
        planned.append((path, _label(path, {label for _, label in planned})))
    taken = {i: ready(path, label) for i, (path, label) in enumerate(planned)} if ready is not None else {}
    rest = [(path, label) for i, (path, label) in enumerate(planned) if taken.get(i) is None]
    prepared = iter(_prepared(rest, jobs, prepare, progress))
    runs = [taken.get(i) or next(prepared) for i in range(len(planned))]
    _check_protocol(runs)
    groups = data_groups(runs)
    if len(groups) > 1 and not allow_mixed_data:
        ran = "; ".join(f"{', '.join(str(r.path) for r in rs)} on {data_name(rs[0])}" for rs in groups.values())
        raise ResultsError(
            f"the runs are on different data ({ran}): cells on different data are never ranked together; "
            "pass --allow-mixed-data to show each data set as its own group"
        )
    return runs, notes


#: `jobs` that lets the size of the runs choose (`auto_jobs`)
AUTO = "auto"
#: answer rows to check below which one process is as fast as several: a fresh process spends about 0.6 s
#: importing gacc-hf before its first run, while checking 100,000 answer rows takes about 0.8 s here
#: (`benchmarks/board.py`), so it would find few runs left to take
AUTO_ROWS = 100_000


def auto_jobs(rows: Sequence[int], cores: int) -> int:
    """The processes that check runs of `rows` answer rows each on `cores` cores: one while their rows together
    are fewer than `AUTO_ROWS`, else one a core, and no more than there are runs.

    >>> auto_jobs([1085, 245], 2), auto_jobs([236532] * 30, 2), auto_jobs([236532], 16), auto_jobs([60000] * 2, 4)
    (1, 2, 1, 2)
    """
    return 1 if sum(rows) < AUTO_ROWS else max(1, min(cores, len(rows)))


def _answer_rows(path: Path) -> int:
    """The answer rows a run's `results.json` records (0 where it cannot say: its checks will say why)."""
    try:
        payload = json.loads((path / RESULTS_FILE).read_text(encoding="utf-8"))
        return int(payload["files"]["answers"]["rows"]) if "files" in payload else len(payload["answers"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _prepared(
    planned: list[tuple[Path, str]],
    jobs: int | str,
    prepare: Callable[[Path, str], T],
    progress: bool = False,
) -> list[T]:
    """`prepare` of each run, in the order given: here, or on up to `jobs` processes, this one and `jobs` − 1
    fresh ones taking the runs from both ends (`both_ends`; `AUTO`: as many as `auto_jobs` says for these runs on
    the cores this process may use). A run that fails its checks is named as soon as it is seen to. The bar
    (`progress`, shown only on a terminal) counts the runs whose checks have ended."""
    if jobs == AUTO:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        jobs = auto_jobs([_answer_rows(path) for path, _ in planned], cores)
    workers = min(int(jobs), len(planned)) - 1
    shown = None if progress else True  # tqdm: None hides the bar where stderr is not a terminal
    with tqdm(total=len(planned), desc="runs checked", unit="run", disable=shown, leave=False, mininterval=0) as bar:
        if workers >= 1:
            return both_ends(prepare, planned, workers, bar.update)
        out = []
        for path, label in planned:
            out.append(prepare(path, label))
            bar.update()
        return out


def _identity(path: Path) -> str:
    """What makes two folders the same run: the bytes of their `results.json` (which hashes their tables)."""
    file = path / RESULTS_FILE
    if not file.is_file():
        raise ResultsError(f"{path}: not a results folder (no {RESULTS_FILE})")
    return hashlib.sha256(file.read_bytes()).hexdigest()


def _label(path: Path, taken: set[str]) -> str:
    """A file name for the run's page in the bundle: its folder's name, made safe and unique."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", path.resolve().name).strip(".-") or "run"
    label, n = base, 2
    while label in taken:
        label, n = f"{base}-{n}", n + 1
    return label


def _check_protocol(runs: Sequence[BoardRun]) -> None:
    versions = {r.label: r.config.get("protocol_version", "unrecorded") for r in runs}
    if len(set(versions.values())) > 1:
        named = "; ".join(f"{r.path}: protocol {versions[r.label]}" for r in runs)
        raise ResultsError(f"the runs follow different protocol versions ({named}); a board ranks one protocol")


def data_key(run: BoardRun) -> str:
    """The data group of a run: its rows fingerprint (a run that recorded none is a group of its own)."""
    data = run.config.get("data") or {}
    return data.get("fingerprint") or f"unrecorded:{run.label}"


def data_name(run: BoardRun) -> str:
    """The data of a run as a reader knows it: its name or spec, and its rows fingerprint."""
    data = run.config.get("data") or {}
    name = data.get("name") or data.get("spec") or "unnamed data"
    return f"{name} ({data.get('fingerprint') or 'no fingerprint recorded'})"


def data_groups(runs: Sequence[BoardRun]) -> dict[str, list[BoardRun]]:
    """The runs by data group, in the order given."""
    groups: dict[str, list[BoardRun]] = defaultdict(list)
    for run in runs:
        groups[data_key(run)].append(run)
    return dict(groups)


def board_rows(runs: Sequence[BoardRun]) -> list[dict[str, Any]]:
    """One row per scored cell of every run, with its Pareto ranks (see the module)."""
    rows = [dict(row) for run in runs for row in run.cells]
    for axis in COST_AXES:
        pareto_ranks(rows, axis)
    return rows


def _run_rows(board_run: BoardRun, run: RunResults) -> list[dict[str, Any]]:
    cfg = run.config
    revisions = {c["name"]: c.get("revision") for c in cfg.get("compressors") or []}
    tokens = memory_tokens(run.memories)
    seconds = _compressor_seconds(run)
    data = cfg.get("data") or {}
    languages = sorted(data.get("languages") or {r.get("language") for r in run.answers if r.get("language")})
    out = []
    for s in run.scores:
        cell = (s["compressor"], s["condition"], float(s["ratio"]))
        row = {
            "run": board_run.label,
            "date": str(cfg.get("finished_at") or cfg.get("started_at") or "")[:10],
            "data": data_key(board_run),
            "data_name": data_name(board_run),
            "compressor": s["compressor"],
            "revision": revisions.get(s["compressor"]) or "",
            "reader": s.get("reader") or cfg["reader"]["name"],
            "judge": s.get("judge") or cfg["judge"]["name"],
            "condition": s["condition"],
            "ratio": float(s["ratio"]),
            "bound": ("floor" if s["condition"] == FLOOR else "ceiling") if is_ceiling(s) else "",
            "languages": languages,
            "questions": s.get("n_questions"),
            "tokens": tokens.get(cell),
            "compressor_seconds": seconds.get(s["compressor"]),
            "compressor_cost": _cost(run, s),
        }
        for metric in _SCORES:
            row |= _figure(s, metric, metric)
        row |= _figure(_match(run.payload.get("retention"), s), "retention", "retention")
        row |= _figure(_match(run.payload.get("auc"), s, ratio=False), "micro_auc", "auc")
        out.append(row)
    return out


def _figure(source: Mapping[str, Any] | None, key: str, name: str) -> dict[str, Any]:
    """`name` and its CI as [low, high] (None where the run has no CI for it)."""
    source = source or {}
    low, high = source.get(f"{key}_ci_low"), source.get(f"{key}_ci_high")
    return {name: source.get(key), f"{name}_ci": None if low is None or high is None else [low, high]}


def _match(rows: Sequence[Mapping[str, Any]] | None, score: Mapping[str, Any], ratio: bool = True) -> dict | None:
    """The reading-aid or cost row of a score row's cell (its reader and judge too, where both rows carry them)."""
    keys = ("compressor", "condition", "ratio") if ratio else ("compressor", "condition")
    for row in rows or ():
        same = all(row.get(k) == score.get(k) for k in ("reader", "judge") if k in row and k in score)
        if same and all(row.get(k) == score[k] for k in keys):
            return dict(row)
    return None


def memory_tokens(memories: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, float], float]:
    """Per cell, the memory tokens a reader read per question: each ledger row's re-encoded memory, weighted by
    the questions that read it (one where the ledger has no count)."""
    total: dict[tuple[str, str, float], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for m in memories:
        n = m.get("reencoded_tokens", m.get("retained_tokens"))
        if n is None:
            continue
        weight = m.get("n_questions") or 1
        acc = total[(m["compressor"], m["condition"], float(m["ratio"]))]
        acc[0] += n * weight
        acc[1] += weight
    return {cell: round(t / w, 3) for cell, (t, w) in total.items() if w}


def _compressor_seconds(run: RunResults) -> dict[str, float]:
    """Seconds inside each compressor per question it served (a question of a condition and ratio, counted once
    whatever the readers and judges of its rows), where the run recorded time per method."""
    recorded = ((run.payload.get("method_seconds") or {}).get("compressor")) or {}
    if not recorded:
        return {}
    served: dict[str, set] = defaultdict(set)
    for a in run.answers:
        served[a["compressor"]].add((a["question_id"], a["condition"], a["ratio"]))
    return {name: round(s / len(served[name]), 6) for name, s in recorded.items() if served.get(name) and s}


def _cost(run: RunResults, score: Mapping[str, Any]) -> float | None:
    """The cell's compressor cost per question, where the run was priced."""
    cost = run.payload.get("cost") or {}
    cell = _match(cost.get("cells"), score)
    if not cell or not cell.get("questions"):
        return None
    return round(cell["compressor_cost"] / cell["questions"], 9)


def pareto_ranks(rows: list[dict[str, Any]], axis: str) -> None:
    """Set `pareto_<axis>` on each method row: 1 for the cells no other cell of its data group and condition
    beats (Micro at least as high and `axis` at most as low, one of them strictly), 2 for the front of the rest,
    and so on; None for bounds and rows without the axis or a Micro."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        row[f"pareto_{axis}"] = None
        if not row["bound"] and row.get(axis) is not None and row.get("micro") is not None:
            groups[(row["data"], row["condition"])].append(row)
    for members in groups.values():
        # in this order a cell's dominators come before it, and along a front Micro rises: a front's last cell has
        # its highest Micro, so it alone decides whether the front dominates the next cell
        fronts: list[dict[str, Any]] = []
        for row in sorted(members, key=lambda r: (r[axis], -r["micro"])):
            rank = next((i for i, last in enumerate(fronts) if not _beats(last, row, axis)), len(fronts))
            fronts[rank : rank + 1] = [row]
            row[f"pareto_{axis}"] = rank + 1


def _beats(a: Mapping[str, Any], b: Mapping[str, Any], axis: str) -> bool:
    return a["micro"] >= b["micro"] and a[axis] <= b[axis] and (a["micro"] > b["micro"] or a[axis] < b[axis])
