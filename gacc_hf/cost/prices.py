"""Prices of model calls, read from a YAML file the user writes: per million prompt and completion tokens.

    currency: USD                     # optional; shown beside every cost (default: no unit)
    prices:
      deepseek-v4-pro: {prompt: 0.55, completion: 2.19}           # a served model, by its model name
      openai:judge@http://10.0.0.5:8000/v1: {prompt: 0.1, completion: 0.4}   # or by the method as given
      hf:HuggingFaceTB/SmolLM2-135M-Instruct: {prompt: 0, completion: 0}

A method is looked up by the spec as given on the command line, then by its method name, then by its
model name (the `openai:` methods' `model`): the first entry found is its price. Prices are plain numbers
>= 0 (no currency sign, no string); a file that breaks any of this is refused with its path and the key.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gacc_hf.safe_yaml import load_yaml

MILLION = 1_000_000
FIELDS = ("prompt", "completion")


@dataclass(frozen=True)
class Price:
    """The price of a million prompt tokens and of a million completion tokens."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of calls that sent `prompt_tokens` and received `completion_tokens`.

        >>> Price(prompt=0.5, completion=2.0).cost(2_000_000, 250_000)
        1.5
        """
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / MILLION


@dataclass(frozen=True)
class Prices:
    """A prices file: its entries by name, its currency (may be empty) and where it came from."""

    entries: Mapping[str, Price]
    currency: str = ""
    source: str = "<prices>"

    def find(self, names: Iterable[str | None]) -> Price | None:
        """The price of the first of `names` the file has (a method's spec, name, model), or None."""
        for name in names:
            if name and name in self.entries:
                return self.entries[name]
        return None


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{where}: {value!r} is not a number; write a plain number such as 0.55")
    if value < 0:
        raise ValueError(f"{where}: {value!r} is negative; a price is >= 0")
    return float(value)


def _price(name: str, value: Any, source: str) -> Price:
    where = f"{source}: prices.{name}"
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected {{prompt: <number>, completion: <number>}}, got {value!r}")
    problems = [f"unknown key {key}" for key in sorted(set(map(str, value)) - set(FIELDS))]
    problems += [f"missing {f}" for f in FIELDS if f not in value]
    if problems:
        raise ValueError(f"{where}: {'; '.join(problems)} (an entry has `prompt` and `completion`, per million tokens)")
    return Price(*(_number(value[f], f"{where}.{f}") for f in FIELDS))


def parse_prices(document: Any, source: str = "<prices>") -> Prices:
    """Prices from a parsed YAML document (see the module docstring); ValueError naming `source` and the key."""
    if not isinstance(document, Mapping) or not isinstance(document.get("prices"), Mapping):
        raise ValueError(f"{source}: expected a mapping with a `prices:` mapping of model or method names")
    unknown = sorted(set(map(str, document)) - {"prices", "currency"})
    if unknown:
        raise ValueError(f"{source}: unknown top-level key(s) {', '.join(unknown)} (allowed: prices, currency)")
    currency = document.get("currency", "")
    if not isinstance(currency, str):
        raise ValueError(f"{source}: currency must be a text such as USD, got {currency!r}")
    entries = {str(name): _price(str(name), value, source) for name, value in document["prices"].items()}
    if not entries:
        raise ValueError(f"{source}: `prices:` is empty; give at least one model or method")
    return Prices(entries, currency.strip(), source)


def load_prices(path: str | Path) -> Prices:
    """Read and check a prices file; a missing, unreadable or malformed file is a ValueError naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--prices {path}: cannot read it ({exc})") from None
    document = load_yaml(text, f"--prices {path}", "a prices file")
    return parse_prices(document, str(path))
