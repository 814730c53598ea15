"""`make_key` for many keys of one shape: the record's layout is built once, each key fills it in.

A run derives a key per memory, answer and verdict (hundreds of thousands in a large plan). `make_key`
sorts the part names and formats every part each time; a `KeyTemplate` does that once, keeps the parts
that are the same for every key (method name and revision, tokenizer) already written out, and per key
does one `str.format` and one sha256. The records, and so the keys, are byte for byte those of `make_key`
(`tests/run/test_key_template.py` checks both against hand-written records).
"""

from __future__ import annotations

import hashlib

Scalar = str | int | float | bool | None


def _literal(text: str) -> str:
    """Text placed in a `str.format` pattern as itself."""
    return text.replace("{", "{{").replace("}", "}}")


class KeyTemplate:
    """Keys over the parts `varying` (given positionally, in that order) and the fixed parts `fixed`.

    >>> from gacc_hf.run.cache import make_key
    >>> answer = KeyTemplate(("memory", "question"), reader="fields", revision="fields-v1")
    >>> answer("m1", "q1") == make_key(memory="m1", question="q1", reader="fields", revision="fields-v1")
    True
    """

    __slots__ = ("_pattern", "names")

    def __init__(self, varying: tuple[str, ...], **fixed: Scalar) -> None:
        if len(set(varying)) != len(varying) or set(varying) & set(fixed):
            raise ValueError(f"key part names must be distinct: varying {varying}, fixed {sorted(fixed)}")
        self.names = varying
        position = {name: i for i, name in enumerate(varying)}
        records = [
            f"{_literal(name)}\x1f" + (f"{{{position[name]}!r}}" if name in position else _literal(repr(fixed[name])))
            for name in sorted([*varying, *fixed])
        ]
        self._pattern = "\x1e".join(records)

    def __call__(self, *values: Scalar) -> str:
        if len(values) != len(self.names):
            raise TypeError(f"key needs {len(self.names)} parts {self.names}, got {len(values)}")
        return hashlib.sha256(self._pattern.format(*values).encode("utf-8")).hexdigest()
