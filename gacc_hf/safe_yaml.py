"""The one way gacc reads YAML: run configs, prices files, `eval.yaml`, `.eval_results` and card headers.

PyYAML's safe loader builds plain values only, but an alias (`*name`) repeats the node its anchor names,
so nested aliases ("billion laughs") let a 1 KB file stand for 10^9 values, and any walk over the result
(a check, a copy, `json.dumps`) runs for hours. No YAML file of gacc needs an alias, so `load_yaml` refuses
every one, with the file and line named, before anything is built. It also bounds what a hand-written
file can ask of the parser: its size (`MAX_CHARS`) and its nesting (`MAX_DEPTH`, far below Python's
recursion limit, which the composer would otherwise meet as a RecursionError).
"""

from __future__ import annotations

import re
import sys
from typing import Any

import yaml

#: characters of one YAML document: far above any config, prices file, eval.yaml or card header
MAX_CHARS = 4_000_000
#: levels of nesting (a run config is flat; a card's eval results are about six deep)
MAX_DEPTH = 100

_KEY = re.compile(r"^\s*['\"]?([\w.-]+)['\"]?\s*[:=]")
# a card header: the YAML between the first two `---` lines (huggingface_hub's own rule)
_FRONT_MATTER = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))")


class YamlError(ValueError):
    """A YAML file gacc cannot read: the message names the file and, where known, the line."""


class _Refused(Exception):
    """Raised inside the loader; `load_yaml` turns it into the caller's error with the file named."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader without aliases, and with its nesting bounded."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        mark = self.peek_event().start_mark
        if self.check_event(yaml.AliasEvent):
            raise _Refused(f"line {mark.line + 1}: YAML aliases (*name) are not allowed")
        if self._depth >= MAX_DEPTH:
            raise _Refused(f"nested too deeply to read (more than {MAX_DEPTH} levels by line {mark.line + 1})")
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _PlainDumper(yaml.SafeDumper):
    """The safe dumper writing a value shared by two places out twice: what gacc writes, `load_yaml` reads."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(values: Any, **options: Any) -> str:
    """`values` as YAML without anchors or aliases (`yaml.safe_dump`'s `options`; keys in their order,
    Unicode as it is, unless `options` say otherwise).

    >>> shared = [1, 2]
    >>> print(dump_yaml({"a": shared, "b": shared}, default_flow_style=True), end="")
    {a: [1, 2], b: [1, 2]}
    """
    return yaml.dump(values, Dumper=_PlainDumper, **{"sort_keys": False, "allow_unicode": True, **options})


def long_number(text: str) -> str | None:
    """Where `text` holds an integer longer than Python converts (`sys.get_int_max_str_digits()`): line and key.

    >>> long_number("seed: " + "7" * 5000)
    "line 1, key 'seed': a number of more than 4300 digits"
    """
    limit = sys.get_int_max_str_digits()
    digits = re.compile(rf"\d{{{limit},}}")
    for number, line in enumerate(text.splitlines(), 1):
        if digits.search(line):
            key = _KEY.match(line)
            where = f"line {number}" + (f", key {key.group(1)!r}" if key else "")
            return f"{where}: a number of more than {limit} digits"
    return None


def load_yaml(text: str, where: str, what: str = "this file", error: type[ValueError] = YamlError) -> Any:
    """The values of one YAML document; `error` naming `where` (the file) for anything it cannot be.

    `what` says in the message what refuses an alias ("a run config", "a prices file").

    >>> load_yaml("a: 1\\nb: [x, y]\\n", "f.yaml")
    {'a': 1, 'b': ['x', 'y']}
    >>> try:
    ...     load_yaml("a: &x [1]\\nb: *x\\n", "f.yaml", "a prices file")
    ... except YamlError as exc:
    ...     print(exc)
    f.yaml: line 2: YAML aliases (*name) are not allowed in a prices file; write the value out
    """
    if len(text) > MAX_CHARS:
        raise error(f"{where}: {len(text):,} characters, over the {MAX_CHARS:,} a YAML file read by gacc may hold")
    try:
        return yaml.load(text, Loader=_BoundedLoader)  # a SafeLoader subclass: plain values only
    except _Refused as exc:
        reason = str(exc)
        if "aliases" in reason:
            reason += f" in {what}; write the value out"
        raise error(f"{where}: {reason}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: not valid YAML ({_parser_problem(exc)})") from None
    except RecursionError:
        raise error(f"{where}: nested too deeply to read") from None
    except ValueError as exc:  # Python's own refusal of a huge integer, which names no file
        raise error(f"{where}: {long_number(text) or exc}") from None


def _parser_problem(exc: yaml.YAMLError) -> str:
    """The parser's complaint in one line, at its line and column (its own text names no file)."""
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join(filter(None, [getattr(exc, "context", None), getattr(exc, "problem", None)]))
    if mark is None or not problem:
        return " ".join(str(exc).split())
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


def check_front_matter(
    text: str, where: str, card: str = "model", error: type[ValueError] = YamlError
) -> dict[str, Any]:
    """The header of a `card` card (the YAML between its first two `---` lines; empty without one), read by
    `load_yaml` before `huggingface_hub` parses it again: a malformed or alias-bombed header is `error`
    naming `where` (the file), not a parser traceback."""
    match = _FRONT_MATTER.search(text)
    if match is None:
        return {}
    header = f"{where}: malformed {card} card header (the YAML between the --- lines)"
    above = "\n" * len(match.group(1).splitlines())  # lines before the YAML: its line numbers are the file's
    values = load_yaml(above + match.group(2), header, "a card header", error)
    if values is not None and not isinstance(values, dict):
        raise error(f"{header}: the metadata block should be a dict of keys and values, got {type(values).__name__}")
    return values or {}
