"""`make_key` for many keys of one shape: the record's layout is built once, each key fills it in.

A run derives a key per memory, answer and verdict (hundreds of thousands in a large plan). `make_key`
sorts the part names and formats every part each time; a `KeyTemplate` does that once, keeps the parts
that are the same for every key (method name and revision, tokenizer) already written out, and per key
does one `str.format` and one sha256; keys that share their first part (the answer keys of one memory) can
share the hashing of the record up to the next part (`given`, `tail`). The records, and so the keys, are
byte for byte those of `make_key` (`tests/run/test_key_template.py` checks both against hand-written records).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

Scalar = str | int | float | bool | None


def _literal(text: str) -> str:
    """Text placed in a `str.format` pattern as itself."""
    return text.replace("{", "{{").replace("}", "}}")


class KeyTemplate:
    """Keys over the parts `varying` (given positionally, in that order) and the fixed parts `fixed`.

    >>> from gacc_hf.keys import make_key
    >>> answer = KeyTemplate(("memory", "question"), reader="fields", revision="fields-v1")
    >>> answer("m1", "q1") == make_key(memory="m1", question="q1", reader="fields", revision="fields-v1")
    True
    """

    __slots__ = ("_pattern", "_split", "names")

    def __init__(self, varying: tuple[str, ...], **fixed: Scalar) -> None:
        if len(set(varying)) != len(varying) or set(varying) & set(fixed):
            raise ValueError(f"key part names must be distinct: varying {varying}, fixed {sorted(fixed)}")
        self.names = varying
        position = {name: i for i, name in enumerate(varying)}

        def record(name: str, shift: int = 0) -> str:
            if name in position:
                return f"{_literal(name)}\x1f{{{position[name] - shift}!r}}"
            return f"{_literal(name)}\x1f{_literal(repr(fixed[name]))}"

        names = sorted([*varying, *fixed])
        self._pattern = "\x1e".join(map(record, names))
        # the record split before its second varying part, when the first varying part comes before it
        later = [i for i, name in enumerate(names) if position.get(name, 0) > 0]
        self._split: tuple[str, str] | None = None
        if later and names.index(varying[0]) < later[0]:
            head = "\x1e".join(map(record, names[: later[0]])) + "\x1e"
            self._split = (head, "\x1e".join(record(name, 1) for name in names[later[0] :]))

    def __call__(self, *values: Scalar) -> str:
        if len(values) != len(self.names):
            raise TypeError(f"key needs {len(self.names)} parts {self.names}, got {len(values)}")
        return hashlib.sha256(self._pattern.format(*values).encode("utf-8")).hexdigest()

    def tail(self, *rest: Scalar) -> bytes:
        """The record's text after the first varying part, for the other varying parts `rest` (in order):
        what `given(first)` completes. Worked out once per distinct `rest` (a question asked of many memories)."""
        if len(rest) != len(self.names) - 1:
            raise TypeError(f"a tail needs {len(self.names) - 1} parts {self.names[1:]}, got {len(rest)}")
        return self._halves()[1].format(*rest).encode("utf-8")

    def given(self, first: Scalar) -> Callable[[bytes], str]:
        """Keys whose first varying part is `first`, each completed by a `tail`: the record up to the next
        varying part is hashed once and the sha256 state copied per key (the answer keys of one memory).

        >>> answer = KeyTemplate(("memory", "question"), reader="fields", revision="fields-v1")
        >>> answer.given("m1")(answer.tail("q1")) == answer("m1", "q1")
        True
        """
        state = hashlib.sha256(self._halves()[0].format(first).encode("utf-8"))

        def key(tail: bytes) -> str:
            h = state.copy()
            h.update(tail)
            return h.hexdigest()

        return key

    def _halves(self) -> tuple[str, str]:
        """The record's pattern split before its second varying part (`given` writes the head, `tail` the rest)."""
        if self._split is None:
            raise ValueError(f"the first part {self.names[0]!r} is not written before the other varying parts")
        return self._split
