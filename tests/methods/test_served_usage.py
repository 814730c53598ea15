"""The usage of served calls: the server's report believed when sound, else counted locally with one warning."""

from __future__ import annotations

import hashlib
import logging

import pytest

from gacc_hf.cost.usage import Metered
from gacc_hf.methods.registry import resolve
from gacc_hf.methods.served_usage import _head_tokens, message_tokens, usage_report_problem
from gacc_hf.protocol import JudgeInput, ReaderInput
from gacc_hf.tokenizer import get_codec
from tests.helpers.usage_server import sound_usage, usage_server


@pytest.mark.parametrize(
    ("reported", "problem"),
    [
        (None, "no usage"),
        ([3, 1], "not an object"),
        ({"prompt_tokens": -3, "completion_tokens": 1}, "not whole numbers"),
        ({"prompt_tokens": "3", "completion_tokens": 1}, "not whole numbers"),
        ({"prompt_tokens": 3.0, "completion_tokens": 1}, "not whole numbers"),
        ({"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 5}, "total_tokens 5 is not"),
        ({"prompt_tokens": 3, "completion_tokens": 9}, "exceeds the max_tokens 8"),
    ],
)
def test_an_unsound_report_is_named(reported: object, problem: str) -> None:
    assert problem in usage_report_problem(reported, 8)


def test_a_sound_report_passes() -> None:
    assert usage_report_problem({"prompt_tokens": 3, "completion_tokens": 8, "total_tokens": 11}, 8) is None
    assert usage_report_problem({"prompt_tokens": 3, "completion_tokens": 0}, 8) is None  # no total: nothing to check


@pytest.mark.parametrize("text", ["What is the deadline?", "截止日期是哪一天？"])
def test_a_sound_server_report_is_kept(text: str, caplog: pytest.LogCaptureFixture) -> None:
    with usage_server("sound") as server, caplog.at_level(logging.WARNING):
        reader = resolve("reader", f"openai:echo@{server.url}")
        item = ReaderInput("memory", text)
        out = reader.metered(item)
    prompt, completion = sound_usage(reader.messages(item))
    answer = f"{text} #{hashlib.sha256(b'memory').hexdigest()[:6]}"  # the peer's reply: question and memory digest
    assert out == Metered(answer, {"prompt_tokens": prompt, "completion_tokens": completion, "source": "server"})
    assert not caplog.records


@pytest.mark.parametrize("mode", ["absent", "negative", "inconsistent", "over"])
def test_an_unsound_report_is_counted_locally_with_one_warning(mode: str, caplog: pytest.LogCaptureFixture) -> None:
    codec = get_codec()
    with usage_server(mode) as server, caplog.at_level(logging.WARNING):
        judge = resolve("judge", f"openai:echo@{server.url}")
        items = [JudgeInput("Which day?", "周三", ("Wednesday",), "source"), JudgeInput("Who?", "Ann", ("Ann",), "s")]
        outs = [judge.metered(item) for item in items]
    for item, out in zip(items, outs, strict=True):
        messages = judge.messages(item)
        prompt = sum(len(codec.encode(m["content"])) for m in messages)  # the messages' text in cl100k
        assert out == Metered(True, {"prompt_tokens": prompt, "completion_tokens": 1, "source": "local"})  # "yes"
    warnings = [r for r in caplog.records if "counted locally" in r.getMessage()]
    assert len(warnings) == 1 and "judge 'openai:echo'" in warnings[0].getMessage()


def test_a_served_method_counts_its_prompt_without_a_call() -> None:
    with usage_server("sound") as server:
        reader = resolve("reader", f"openai:echo@{server.url}")
        before = server.chats
        item = ReaderInput("备忘录：截止日期是三月三日。", "When?")
        tokens = reader.prompt_tokens(item)
        assert server.chats == before  # counting sent nothing
    codec = get_codec()
    assert tokens == sum(len(codec.encode(m["content"])) for m in reader.messages(item))
    assert reader.token_counter == "cl100k_base"
    seen = _head_tokens.cache_info().hits
    other = ReaderInput(item.memory, "另一个问题？")
    assert reader.prompt_tokens(other) == sum(len(codec.encode(m["content"])) for m in reader.messages(other))
    assert _head_tokens.cache_info().hits == seen + 1  # the memory's part was counted once for both questions


ENDINGS = ["", ".", "。", "  ", " \n", "\n\n", "\t", "'s", "123", "！”", "--", "\r\n"]
STARTS = ["When?", "截止日期是哪天？", " spaced", "'ll do", "42 items", "\nline"]


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("memory", ["The deadline moved to 3 March", "备忘录：截止日期改到三月三日"])
def test_a_prompt_counted_in_two_parts_counts_as_a_whole(memory: str, ending: str) -> None:
    codec = get_codec()
    for start in STARTS:
        content = f"Memory:\n{memory}{ending}\n\nQuestion: {start}"
        assert message_tokens(content) == len(codec.encode(content)), (ending, start)
        assert message_tokens(content) == message_tokens(content)  # the remembered head gives the same count


def test_a_prompt_without_a_question_is_counted_whole() -> None:
    content = "Document:\n备忘录：截止日期是三月三日。\n\nQuestions follow"
    assert message_tokens(content) == len(get_codec().encode(content))
