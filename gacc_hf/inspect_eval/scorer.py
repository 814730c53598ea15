"""The scorer and metrics of the Inspect task: a group's verdicts, its integrity audit, then Micro and Macro.

Each question's answer is judged from `JudgeInput(question, answer, references, source)` (docs/protocol.md §6)
by a gacc-hf judge (`contains`, `exact`, `f1`, `import:...`) or by the `grader` model role with gacc-hf's judge
prompt, read strictly (`parse_verdict`). A sample's score holds its counts, so the metrics can weigh questions
as the protocol does (§7): Micro = correct questions / questions over every sample (not the mean of the
groups' accuracies), Macro = share of groups whose every question is correct. The integrity counters (§10) are
gacc-hf's audits, summed over samples: budget violations (the memory re-encoded past L), count errors (N and L
recounted by the independent paths), exposures (held-out text in the memory that the source and shown goal do
not explain) and prompt exposures (the same audit run on the prompt the compressor was sent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, cast

from inspect_ai.model import ChatMessageAssistant, GenerateConfig, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from gacc_hf.budget import RatioLike
from gacc_hf.data.schema import Group
from gacc_hf.inspect_eval.samples import Planned, as_messages
from gacc_hf.keys import answer_key
from gacc_hf.methods.hf_chat import JUDGE_MAX_NEW_TOKENS, chat_messages, parse_verdict
from gacc_hf.protocol import JudgeInput, call_many
from gacc_hf.run.cache import Cache
from gacc_hf.run.calls import check_bool
from gacc_hf.scoring.integrity import LeakAudit, budget_violations, count_errors
from gacc_hf.text.matching import normalized
from gacc_hf.tokenizer import Codec

GRADER_ROLE = "grader"
GRADER_CONFIG = GenerateConfig(max_tokens=JUDGE_MAX_NEW_TOKENS)
#: The counters a run reports, each expected to be 0.
INTEGRITY = ("budget_violations", "count_errors", "exposures", "prompt_exposures")


async def grade(item: JudgeInput) -> bool:
    """The `grader` role's verdict on one answer, with gacc-hf's judge prompt (the source is not sent)."""
    chat = chat_messages("judge", question=item.question, references=" | ".join(item.references), answer=item.answer)
    output = await get_model(role=GRADER_ROLE, required=True).generate(as_messages(chat), config=GRADER_CONFIG)
    return parse_verdict(output.completion)


def given_ratio(text: str) -> RatioLike:
    """The ratio as the task was given it: a decimal string stays one (the recount of L reads its digits),
    `p/q` becomes that fraction."""
    return Fraction(text) if "/" in text else text


def _prompt_text(state: TaskState) -> str:
    """Every text the compressor was sent: the sample's messages before its reply."""
    return "\n".join(m.text for m in state.messages if not isinstance(m, ChatMessageAssistant))


@metric
def gacc_scores() -> Metric:
    """Micro (correct questions / questions), Macro (share of all-correct groups), the counts behind them and
    the integrity counters, over the scored samples."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [cast(Mapping[str, float], s.score.value) for s in scores]
        questions = sum(v["questions"] for v in values)
        out = {
            "micro": sum(v["correct"] for v in values) / questions if questions else float("nan"),
            "macro": sum(v["all_correct"] for v in values) / len(values) if values else float("nan"),
            "n_questions": questions,
            "n_goals": len(values),
        }
        return {**out, **{k: sum(v[k] for v in values) for k in INTEGRITY}}

    return compute


class Audit:
    """The integrity audits of a run's samples. The leak audit covers every group of the data (a context's
    other goals' questions count too); the independent recount of N is kept in an in-memory cache, once per
    context."""

    def __init__(self, groups: Sequence[Group], codec: Codec) -> None:
        self.leaks = LeakAudit(groups)
        self.codec = codec
        self._cache: Cache | None = None

    def counters(
        self, planned: Planned, memory: str, prompt: str, ratio: RatioLike
    ) -> tuple[dict[str, int], dict[str, list[tuple[str, str]]]]:
        """One sample's integrity counters, and the held-out (kind, text) pairs behind its exposures: in the
        memory, and in the prompt the compressor was sent (`""` when it was not called)."""
        group, goal = planned.group, planned.item.goal
        if self._cache is None:
            self._cache = Cache(None)
        exposed = {
            "memory": self.leaks.exposed(normalized(memory), group.context, goal),
            "prompt": self.leaks.exposed(normalized(prompt), group.context, goal),
        }
        ledger = [{"memory_key": "memory", "budget": planned.item.token_budget}]
        counters = {
            "budget_violations": budget_violations(ledger, {"memory": {"memory": memory}}, self.codec),
            "count_errors": count_errors([group], {group.context: planned.source_tokens}, [ratio], self._cache),
            "exposures": len(exposed["memory"]),
            "prompt_exposures": len(exposed["prompt"]),
        }
        return counters, exposed


@scorer(metrics=[gacc_scores()])
def gacc_scorer(plans: Mapping[str, Planned], judge: Callable[..., Any] | None, audit: Audit) -> Scorer:
    """Judge every answer of the sample's group (`judge` a gacc-hf judge, or None: the `grader` role) and audit
    its memory; the score's value holds the counts and counters the metrics sum."""

    async def score(state: TaskState, target: Target) -> Score:
        planned = plans[str(state.sample_id)]
        group = planned.group
        memory, answers = state.store.get("memory"), state.store.get("answers")
        items = [
            JudgeInput(q.question, a, q.references, group.context)
            for q, a in zip(group.questions, answers, strict=True)
        ]
        if judge is None:
            verdicts = list(await asyncio.gather(*(grade(i) for i in items)))
        else:
            verdicts = [check_bool(v) for v in call_many(judge, items)]
        correct = sum(verdicts)
        prompt = _prompt_text(state) if state.store.get("ledger")["compressor_called"] else ""
        counters, exposed = audit.counters(planned, memory, prompt, given_ratio(state.metadata["ratio_given"]))
        rows = [
            {"question_id": q.question_id, "answer": a, "correct": v, "key": answer_key(q.question_id, a)}
            for q, a, v in zip(group.questions, answers, verdicts, strict=True)
        ]
        return Score(
            value={
                "micro": correct / len(items),
                "all_correct": int(correct == len(items)),
                "correct": correct,
                "questions": len(items),
                **counters,
            },
            answer=memory,
            explanation="\n".join(
                f"{r['question_id']}: {r['answer']!r} {'right' if r['correct'] else 'wrong'}" for r in rows
            ),
            metadata={"ledger": state.store.get("ledger"), "answers": rows, "exposed": exposed},
        )

    return score
