"""Stand-in models for the Inspect task's tests, as Inspect's `mockllm/model` replies and as gacc-hf methods that
write exactly the same text, so an Inspect eval and `run_benchmark` can be compared on equal outputs.

The compressor echoes its prompt (the source and the goal, which is all it is sent); the reader echoes its prompt
on one line (the memory and the question), so the `contains` judge finds a reference when the memory holds it.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ModelOutput, get_model

from gacc_hf.methods.hf_chat import chat_messages
from gacc_hf.protocol import CompressorInput, ReaderInput


def echo_compressor(item: CompressorInput) -> str:
    """The user turn of gacc-hf's compressor prompt for `item`."""
    return chat_messages("compressor", context=item.context, goal=item.goal)[-1]["content"]


def echo_reader(item: ReaderInput) -> str:
    """The user turn of gacc-hf's reader prompt for `item`, on one line."""
    return chat_messages("reader", memory=item.memory, question=item.question)[-1]["content"].replace("\n", " ")


def _last_turn(messages: list[ChatMessage], one_line: bool) -> ModelOutput:
    text = messages[-1].text
    return ModelOutput.from_content("mockllm/model", text.replace("\n", " ") if one_line else text)


def mock_compressor() -> Any:
    """`mockllm/model` replying as `echo_compressor` does."""
    return get_model("mockllm/model", custom_outputs=lambda messages, *_: _last_turn(messages, one_line=False))


def mock_reader() -> Any:
    """`mockllm/model` replying as `echo_reader` does."""
    return get_model("mockllm/model", custom_outputs=lambda messages, *_: _last_turn(messages, one_line=True))


def mock_grader(verdict: str) -> Any:
    """`mockllm/model` giving every answer the same verdict word."""
    return get_model("mockllm/model", custom_outputs=lambda *_: ModelOutput.from_content("mockllm/model", verdict))
