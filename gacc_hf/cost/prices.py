"""Prices of model calls, read from a YAML file the user writes: per million prompt and completion tokens.

    currency: USD                     # optional; shown beside every cost (default: no unit)
    prices:
      deepseek-v4-pro: {prompt: 0.55, completion: 2.19}           # a served model, by its model name
      openai:judge@http://10.0.0.5:8000/v1: {prompt: 0.1, completion: 0.4}   # or by the method as given
      hf:HuggingFaceTB/SmolLM2-135M-Instruct: {prompt: 0, completion: 0}

A method is looked up by the spec as given on the command line, then by its method name, then by its
model name (the `openai:` methods' `model`): the first entry found is its price. Prices are plain numbers
from 0 to `MAX_PRICE` (no currency sign, no string), so that every cost is a finite number; a name or
field given twice is refused (YAML would keep the last silently); `currency` is a code of three letters
(`USD`, `EUR`, `CNY`) or one currency sign (`$`, `€`, `¥`), since it is printed beside every cost. A
file that breaks any of this is refused with its path and the key.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gacc_hf.safe_yaml import load_yaml

MILLION = 1_000_000
FIELDS = ("prompt", "completion")
#: the most a million tokens may cost (a thousand a token, in any currency): far above any price, and low
#: enough that a run's cost stays a finite number
MAX_PRICE = 1e9


def price_problem(value: Any) -> str | None:
    """What makes `value` no price per million tokens (None: it is one).

    >>> price_problem(0.55), price_problem(-1), price_problem(1.7e308)
    (None, '-1 is negative; a price is >= 0', '1.7e+308 is over 1e+09, the most a million tokens may cost')
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN is not itself
        return f"{value!r:.40} is not a number; write a plain number such as 0.55"
    if value < 0:
        return f"{value!r:.40} is negative; a price is >= 0"
    if value > MAX_PRICE:
        shown = f"{value:.10g}" if isinstance(value, float) or value < 10**300 else "a number of 301 digits or more"
        return f"{shown} is over {MAX_PRICE:g}, the most a million tokens may cost"
    return None


def currency_problem(value: Any) -> str | None:
    """What makes `value` no currency (None: it is one); the message never repeats the value, which is
    printed nowhere unless it is a short code or sign.

    >>> currency_problem("USD"), currency_problem("€"), currency_problem(""), currency_problem("sk-123")
    (None, None, None, 'must be a code of three letters such as USD or one currency sign such as $')
    """
    code = isinstance(value, str) and len(value) == 3 and value.isascii() and value.isalpha()
    sign = isinstance(value, str) and len(value) == 1 and unicodedata.category(value) == "Sc"
    if value == "" or code or sign:
        return None
    return "must be a code of three letters such as USD or one currency sign such as $"


@dataclass(frozen=True)
class Price:
    """The price of a million prompt tokens and of a million completion tokens (each from 0 to `MAX_PRICE`)."""

    prompt: float
    completion: float

    def __post_init__(self) -> None:
        for name in FIELDS:
            problem = price_problem(getattr(self, name))
            if problem is not None:
                raise ValueError(f"{name} price: {problem}")

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

    def __post_init__(self) -> None:
        problem = currency_problem(self.currency)
        if problem is not None:
            raise ValueError(f"{self.source}: currency {problem} (the value given is not shown)")

    def find(self, names: Iterable[str | None]) -> Price | None:
        """The price of the first of `names` the file has (a method's spec, name, model), or None."""
        for name in names:
            if name and name in self.entries:
                return self.entries[name]
        return None


def _number(value: Any, where: str) -> float:
    problem = price_problem(value)
    if problem is not None:
        raise ValueError(f"{where}: {problem}")
    return float(value)


def _price(name: str, value: Any, source: str) -> Price:
    where = f"{source}: prices.{name}"
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected {{prompt: <number>, completion: <number>}}, got a {type(value).__name__}")
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
    entries = {str(name): _price(str(name), value, source) for name, value in document["prices"].items()}
    if not entries:
        raise ValueError(f"{source}: `prices:` is empty; give at least one model or method")
    return Prices(entries, currency.strip() if isinstance(currency, str) else currency, source)


def refuse_repeated_keys(text: str, source: str) -> None:
    """ValueError naming `source`, the key and both lines where a mapping of the YAML `text` gives a key twice,
    which loading keeps silently (the second wins). Walks the composed nodes, each once (an alias is a
    reference to a node already walked, not a copy)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    todo, seen = [(root, "")], set()
    while todo:
        node, path = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo += [(item, f"{path}[{i}]") for i, item in enumerate(node.value)]
        if not isinstance(node, yaml.MappingNode):
            continue
        lines: dict[str, int] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else None
            where = f"{path}.{name}" if path else str(name)
            if name is not None and name in lines:
                line = key.start_mark.line + 1
                raise ValueError(f"{source}: {where:.200} is given twice (lines {lines[name]} and {line}); keep one")
            if name is not None:
                lines[name] = key.start_mark.line + 1
            todo.append((value, where))


def load_prices(path: str | Path) -> Prices:
    """Read and check a prices file; a missing, unreadable or malformed file is a ValueError naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--prices {path}: cannot read it ({exc})") from None
    document = load_yaml(text, f"--prices {path}", "a prices file")
    refuse_repeated_keys(text, str(path))
    return parse_prices(document, str(path))
