"""The package's text templates: the report, the dataset card and the model card are Jinja files in the
`templates/` folder beside the module that fills them, so their wording is read and edited as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

# Block tags take their line with them, so a template reads like the text it renders; a missing value is an error.
_ENV = jinja2.Environment(
    trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined
)


def template_text(anchor: str | Path, name: str) -> str:
    """The text of `templates/<name>` beside the module file `anchor` (pass `__file__`)."""
    path = Path(anchor).with_name("templates") / name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing; the package was installed without its templates")
    return path.read_text(encoding="utf-8")


def render(anchor: str | Path, name: str, **values: Any) -> str:
    """`templates/<name>` beside `anchor`, rendered with `values`."""
    return _ENV.from_string(template_text(anchor, name)).render(**values)
