"""How far judges agree on the same answers: raw agreement and Cohen's κ per pair, Krippendorff's α over all.

A verdict table holds, per answer, its goal, its language and each judge's verdict (right or wrong). Every
figure comes with a goal-bootstrap 95% CI drawn as the scores' are (`scoring.scores`: whole goals resampled,
seeded), because the questions of one goal share a memory and are not independent. A figure that does not
exist is said, not guessed: κ when both judges gave one verdict only (chance agreement is 1), α when every
verdict is the same (there is no variation to agree on); the value is then None and `undefined` says why.
A resample can fall into such a case too; the interval is then taken over the resamples where the figure
exists, and `undefined` of the CI says how many were left out. Every number is finite: no NaN is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from gacc_hf.scoring.scores import DEFAULT_BOOTSTRAP, percentile_interval, resampled_ratios
from gacc_hf.scoring.shares import per_goal


@dataclass(frozen=True)
class Figure:
    """One measured figure: its value and 95% CI, or None and the reason it does not exist."""

    value: float | None
    ci: tuple[float, float] | None = None
    undefined: str | None = None
    ci_note: str | None = None

    def as_dict(self, name: str) -> dict[str, Any]:
        low, high = self.ci if self.ci is not None else (None, None)
        return {
            name: self.value,
            f"{name}_ci_low": low,
            f"{name}_ci_high": high,
            f"{name}_undefined": self.undefined,
            f"{name}_ci_note": self.ci_note,
        }


def figure(value: float | None, draws: np.ndarray | None, undefined: str | None, left_out: str) -> Figure:
    """A figure from its value and its bootstrap draws, the draws where it does not exist (non-finite) left out
    and counted in `ci_note` (`left_out` says what those resamples were)."""
    if value is None:
        return Figure(None, None, undefined)
    if draws is None:
        return Figure(value)
    kept = draws[np.isfinite(draws)]
    dropped = len(draws) - len(kept)
    if not len(kept):
        return Figure(value, None, None, f"no CI: every resample {left_out}")
    note = f"CI over {len(kept)} of {len(draws)} resamples: the others {left_out}" if dropped else None
    return Figure(value, percentile_interval(kept, 0.95), None, note)


def _ratio_draws(columns: list[np.ndarray], denominator: np.ndarray, n_boot: int, seed: int) -> list[np.ndarray]:
    """Each column's per-goal sum over the denominator's, in every resample of goals (one draw shared)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return resampled_ratios([(c, denominator) for c in columns], n_boot, seed)


def _kappa(p_o: Any, p_a: Any, p_b: Any) -> Any:
    """Cohen's κ of two binary raters from observed agreement and each rater's share of `right`."""
    p_e = p_a * p_b + (1 - p_a) * (1 - p_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p_o - p_e) / (1 - p_e)


def _pair(goal_ids: Sequence[str], a: np.ndarray, b: np.ndarray, n_boot: int, seed: int) -> dict[str, Any]:
    """Raw agreement and Cohen's κ of two judges' verdicts (aligned by answer)."""
    n, (agree, right_a, right_b) = per_goal(goal_ids, [a == b, a, b])
    p_o, p_a, p_b = agree.sum() / n.sum(), right_a.sum() / n.sum(), right_b.sum() / n.sum()
    draws = _ratio_draws([agree, right_a, right_b], n.astype(float), n_boot, seed) if n_boot > 0 else None
    one_class = p_a in (0, 1) and p_b == p_a
    kappa = None if one_class else float(_kappa(p_o, p_a, p_b))
    why = f"both judges said {'right' if p_a == 1 else 'wrong'} to every answer: chance agreement is 1"
    kappa_draws = None if draws is None else np.where(_one_class(draws[1], draws[2]), np.nan, _kappa(*draws))
    return {
        "n_answers": int(n.sum()),
        **figure(float(p_o), None if draws is None else draws[0], None, "").as_dict("agreement"),
        **figure(kappa, kappa_draws, why, "drew answers both judges gave one verdict").as_dict("kappa"),
    }


def _one_class(p_a: np.ndarray, p_b: np.ndarray) -> np.ndarray:
    return ((p_a == 0) | (p_a == 1)) & (p_a == p_b)


def _alpha(n_units: Any, m: int, rights: Any, disagreement: Any) -> Any:
    """Krippendorff's α (nominal) of `m` judges who all judged `n_units` answers: 1 − (n − 1)·D / (R·W), with
    n = m·units pairable values, R of them right and W wrong, and D = Σ r(m − r)/(m − 1) over the answers
    (r: the answer's right verdicts), the coincidences of unlike verdicts."""
    n = m * n_units
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - (n - 1) * disagreement / (rights * (n - rights))


def _all_judges(goal_ids: Sequence[str], table: np.ndarray, n_boot: int, seed: int) -> dict[str, Any]:
    """Krippendorff's α over every judge (`table`: answers × judges)."""
    m = table.shape[1]
    r = table.sum(axis=1)
    n, (rights, disagreement) = per_goal(goal_ids, [r, r * (m - r) / (m - 1)])
    units = n.astype(float)
    total_r = rights.sum()
    alpha = None
    if 0 < total_r < m * units.sum():
        alpha = float(_alpha(units.sum(), m, total_r, disagreement.sum()))
    why = f"every judge said {'right' if total_r else 'wrong'} to every answer: no variation to agree on"
    draws = None
    if n_boot > 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            per_unit_r, per_unit_d, units_per_goal = resampled_ratios(
                [(rights, units), (disagreement, units), (units, np.ones(len(units)))], n_boot, seed
            )
        drawn_units = units_per_goal * len(units)
        draws = _alpha(drawn_units, m, per_unit_r * drawn_units, per_unit_d * drawn_units)
    return {"n_judges": m, **figure(alpha, draws, why, "drew answers with one verdict only").as_dict("alpha")}


def judge_agreement(
    goal_ids: Sequence[str],
    verdicts: Mapping[str, Sequence[bool]],
    languages: Sequence[str] | None = None,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> dict[str, Any]:
    """Agreement of the judges in `verdicts` (judge → one verdict per answer, aligned with `goal_ids`).

    Returns `pairs` (raw agreement and κ of every pair of judges, in the order given), `all` (α over every
    judge; None with a reason for fewer than two) and, when `languages` names several, `by_language`: the same
    for each language's answers alone. Only answers every judge judged belong in the table.

    >>> t = judge_agreement(["g1", "g1", "g2", "g2"], {"a": [1, 1, 0, 0], "b": [1, 0, 0, 0]}, n_boot=0)
    >>> t["pairs"][0]["agreement"], t["pairs"][0]["kappa"], round(t["all"]["alpha"], 4)
    (0.75, 0.5, 0.5333)
    """
    n = len(goal_ids)
    if n == 0:
        raise ValueError("no answers to measure judge agreement on")
    for judge, column in verdicts.items():
        if len(column) != n:
            raise ValueError(f"judge {judge!r} has {len(column)} verdicts for {n} answers")
    out = _table(goal_ids, verdicts, n_boot, seed)
    tags = list(dict.fromkeys(languages or []))
    if languages is not None and len(languages) != n:
        raise ValueError(f"{len(languages)} languages for {n} answers")
    out["by_language"] = []
    for tag in tags if len(tags) > 1 else []:
        keep = [i for i, lang in enumerate(languages or []) if lang == tag]
        part = {j: [v[i] for i in keep] for j, v in verdicts.items()}
        out["by_language"].append({"language": tag, **_table([goal_ids[i] for i in keep], part, n_boot, seed)})
    return out


def _table(goal_ids: Sequence[str], verdicts: Mapping[str, Sequence[bool]], n_boot: int, seed: int) -> dict:
    judges = list(verdicts)
    columns = {j: np.asarray(verdicts[j], dtype=bool).astype(float) for j in judges}
    pairs = [
        {"judge_a": a, "judge_b": b, **_pair(goal_ids, columns[a], columns[b], n_boot, seed)}
        for a, b in combinations(judges, 2)
    ]
    if len(judges) < 2:
        alpha = {"n_judges": len(judges), **Figure(None, None, "fewer than two judges").as_dict("alpha")}
    else:
        alpha = _all_judges(goal_ids, np.column_stack([columns[j] for j in judges]), n_boot, seed)
    return {"judges": judges, "n_answers": len(goal_ids), "pairs": pairs, "all": alpha}


def verdict_table(judged: Mapping[str, Sequence[Mapping[str, Any]]]) -> tuple[dict[str, Any], int]:
    """The verdict table of the same answers judged under several judges (judge → answer rows): the answers
    aligned by (compressor, condition, ratio, question), as `judge_agreement`'s `goal_ids`, `verdicts` and
    `languages`, and how many answers were left out because a call failed in one of them.

    The answers must be the same text in every side (the same reader's answers, judged again); anything else is
    refused, since a disagreement would then be a change of answer rather than of judge.
    """
    names = list(judged)
    by_key = {name: {_answer_of(r): r for r in rows} for name, rows in judged.items()}
    first = by_key[names[0]]
    for name in names[1:]:
        if by_key[name].keys() != first.keys():
            raise ValueError(f"{names[0]} and {name} do not hold the same answer rows: judge agreement needs them")
        for key, row in first.items():
            if not _failed(row) and not _failed(by_key[name][key]) and row["answer"] != by_key[name][key]["answer"]:
                raise ValueError(
                    f"{names[0]} and {name} answer question {key[3]!r} ({key[1]}, r={key[2]:g}) differently: "
                    "judge agreement needs the same answers judged again"
                )
    kept = [key for key in first if not any(_failed(by_key[name][key]) for name in names)]
    table = {
        "goal_ids": [str(first[k]["goal_id"]) for k in kept],
        "languages": [str(first[k].get("language") or "") for k in kept],
        "verdicts": {name: [bool(by_key[name][k]["correct"]) for k in kept] for name in names},
    }
    return table, len(first) - len(kept)


def _answer_of(row: Mapping[str, Any]) -> tuple[str, str, float, str]:
    return (str(row["compressor"]), str(row["condition"]), float(row["ratio"]), str(row["question_id"]))


def _failed(row: Mapping[str, Any]) -> bool:
    return row.get("answer") is None or bool(row.get("error"))


def shown(row: Mapping[str, Any], name: str) -> str:
    """A figure as text: its value with its 95% CI and CI note, or `—` and why it is undefined (never NaN)."""
    if row[name] is None:
        return f"— ({row[f'{name}_undefined']})"
    low, high = row[f"{name}_ci_low"], row[f"{name}_ci_high"]
    text = f"{row[name]:.3f}" + ("" if low is None else f" [{low:.3f}, {high:.3f}]")
    return text + ("" if row[f"{name}_ci_note"] is None else f" ({row[f'{name}_ci_note']})")


def pair_rows(part: Mapping[str, Any]) -> list[list[str]]:
    """Each pair of judges as [judge A, judge B, agreement, Cohen's κ] (the report's table and the page's)."""
    return [[p["judge_a"], p["judge_b"], shown(p, "agreement"), shown(p, "kappa")] for p in part["pairs"]]


def format_agreement(table: Mapping[str, Any], left_out: int = 0) -> str:
    """`judge_agreement`'s table as Markdown: the pairs, α, and the same per language."""
    lines = ["## Judge agreement", "", f"{table['n_answers']} answers judged by every judge"]
    if left_out:
        lines[-1] += f" ({left_out} left out: a call failed)"
    parts = [("", table)] + [(f" ({part['language']})", part) for part in table["by_language"]]
    for suffix, part in parts:
        lines += ["", f"| judge A | judge B | agreement{suffix} [95% CI] | Cohen's κ [95% CI] |", "|---|---|---|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in pair_rows(part)]
        lines += ["", f"Krippendorff's α over all judges{suffix}: {shown(part['all'], 'alpha')}"]
    return "\n".join(lines) + "\n"
