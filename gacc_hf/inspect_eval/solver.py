"""The solver of the Inspect task: compress once under the budget, then read every question from the memory.

The model under evaluation is the compressor. It gets the sample's input, the prompt rendered from
`CompressorInput` alone, and its reply becomes the memory by the protocol's prefix cut (`fit_to_budget`,
docs/protocol.md §3); at `L = 0` it is not called and the memory is empty. The `reader` model role then
answers each held-out question from `ReaderInput(memory, question)` (§5), with gacc-hf's reader prompt and
its settings: at most `READER_MAX_NEW_TOKENS` tokens, the first line kept.
What the solver keeps for the scorer goes in the sample's store: the memory with its ledger and the answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from gacc_hf.budget import fit_to_budget
from gacc_hf.inspect_eval.samples import Planned, as_messages
from gacc_hf.methods.hf_chat import READER_MAX_NEW_TOKENS, READER_STOP, chat_messages, first_line
from gacc_hf.protocol import ReaderInput

READER_ROLE = "reader"
#: The reader's length and stop settings: gacc-hf's local reader's (one short line). Greedy decoding is the
#: provider's setting (`do_sample: false` for `hf/`, `--temperature 0` elsewhere): a temperature of 0 set here
#: would be refused by a sampling `hf/` model.
READER_CONFIG = GenerateConfig(max_tokens=READER_MAX_NEW_TOKENS, stop_seqs=list(READER_STOP))


async def read(reader: Model, item: ReaderInput) -> str:
    """The reader's answer to one question from one memory: the first line of its reply, stripped."""
    chat = chat_messages("reader", memory=item.memory, question=item.question)
    output = await reader.generate(as_messages(chat), config=READER_CONFIG)
    return first_line(output.completion)


@solver
def compress_and_read(plans: Mapping[str, Planned]) -> Solver:
    """Compress the sample's group once with the model under evaluation, then answer its questions with the
    `reader` role (required: a run without it fails before the compressor is called)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        reader = get_model(role=READER_ROLE, required=True)
        group = plans[str(state.sample_id)].group
        budget = state.metadata["budget"]
        called = budget > 0  # nothing a compressor says could survive L = 0 (§3)
        output = ""
        if called:
            reply = await get_model().generate(state.messages)
            state.messages.append(reply.message)
            output = reply.completion
        memory = fit_to_budget(output, budget)
        answers = await asyncio.gather(*(read(reader, ReaderInput(memory.text, q.question)) for q in group.questions))
        state.store.set("memory", memory.text)
        state.store.set("ledger", {**memory.ledger(), "compressor_called": called})
        state.store.set("answers", list(answers))
        state.output.completion = memory.text
        return state

    return solve
