from pathlib import Path

import jinja2
import pytest

from gacc_hf.templates import render, template_text


def test_a_template_renders_from_the_folder_beside_its_module(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.md.j2").write_text(
        "# {{ title }}\n{% if items %}\n{% for i in items %}\n- {{ i }}\n{% endfor %}\n{% endif %}\n"
    )
    assert render(tmp_path / "mod.py", "t.md.j2", title="T", items=[1, 2]) == "# T\n- 1\n- 2\n"


def test_a_missing_template_or_value_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="installed without its templates"):
        template_text(tmp_path / "mod.py", "absent.j2")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("{{ title }}")
    with pytest.raises(jinja2.UndefinedError, match="title"):
        render(tmp_path / "mod.py", "t.j2")
