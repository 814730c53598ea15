"""Calls the spending meter and the dry run count without making them: a fixed prompt and a completion limit."""

from __future__ import annotations

from types import SimpleNamespace


class CountedCall:
    """A method that counts its own prompts (a local model): `prompt` tokens a call, at most `completion` generated."""

    settings = SimpleNamespace(model="m")

    def __init__(self, prompt: int, completion: int) -> None:
        self.prompt, self.completion = prompt, completion

    def prompt_tokens(self, item: str) -> int:
        return self.prompt

    def max_tokens(self, item: str) -> int:
        return self.completion


class ServedCall(CountedCall):
    """The same call sent to a server, which reports what it bills (`metered`)."""

    def metered(self, item: str) -> None:
        raise AssertionError("the meter and the dry run only count a call, they never make it")
