"""docs/performance.md stays the current figures: short, every section naming the command that measures it,
and every link into it landing on a heading.

The history of the figures lives in CHANGELOG.md; a page that grows back into a log, or a section whose
figure cannot be re-measured because no command is named, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

PERFORMANCE = ROOT / "docs" / "performance.md"
MAX_LINES = 250
# A backticked command, after any VAR=value prefixes: a benchmark script, the CLI, make, or a timed command.
COMMAND = re.compile(r"`(?:[A-Z_]+=\S*\s+)*(?:python benchmarks/|gacc |make |/usr/bin/time )[^`]*`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"\]\(([^)\s]*performance\.md)(?:#([^)\s]*))?\)")


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of every `##` and `###` section; a body runs to the next heading of any level.

    Lines inside fenced code blocks are never headings.
    """
    found: list[tuple[str, list[str]]] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else HEADING.match(line)
        if heading:
            found.append((line, []) if len(heading[1]) in (2, 3) else ("", []))
        elif found:
            found[-1][1].append(line)
    return [(title, "\n".join(body)) for title, body in found if title]


def problems(path: Path) -> list[str]:
    """What keeps a performance page from being the current figures, one line each (empty when none)."""
    text = path.read_text(encoding="utf-8")
    found = []
    if (n := len(text.splitlines())) > MAX_LINES:
        found.append(f"{path.name}: {n} lines, over {MAX_LINES}")
    for title, body in sections(text):
        if not COMMAND.search(re.sub(r"\s+", " ", f"{title}\n{body}")):
            found.append(f"{path.name}: {title!r} names no command")
    return found


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a document's headings, with `-1`, `-2`... for repeated ones."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and (heading := HEADING.match(line)):
            base = slug(heading[2])
            out.add(f"{base}-{seen[base]}" if base in seen else base)
            seen[base] = seen.get(base, 0) + 1
    return out


def broken_links(documents: list[Path], target: Path) -> list[str]:
    """Links from the documents into `target` whose anchor is no heading of it, as `document: link`."""
    have = anchors(target)
    found = []
    for document in documents:
        for m in LINK.finditer(document.read_text(encoding="utf-8")):
            if (document.parent / m[1]).resolve() != target.resolve():
                continue
            if m[2] and m[2] not in have:
                found.append(f"{document.name}: {m[0][2:-1]}")
    return found


def linking_documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_page_is_short_and_every_section_names_its_command() -> None:
    assert problems(PERFORMANCE) == []


def test_every_link_into_the_page_lands_on_a_heading() -> None:
    assert broken_links(linking_documents(), PERFORMANCE) == []


GOOD = """# Performance

## The main job

`HF_HUB_OFFLINE=1 /usr/bin/time -v gacc run --num-processes 2`, 2026-12-01, load 1.2: 9.3 s warm.

### 主任务 (`make demo`)

冷启动 4 分 02.7 秒。

## The floor

`HF_HUB_OFFLINE=1 python benchmarks/reader_floor.py
--limit 12` (265 questions), load 1.62: 1.06× its floor.

```
# a comment in a code block is no heading
```
"""


def test_a_short_page_whose_sections_name_commands_passes(tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text(GOOD, encoding="utf-8")
    assert problems(page) == []


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ("## Harness overhead\n\nThe warm rerun is 1.62× its floor.\n", "'## Harness overhead'"),
        ("### 主任务\n\n冷启动 4 分 02.7 秒（`benchmarks/cold_runs.py`）。\n", "'### 主任务'"),
        ("## Scale\n\n`python scale.py` and `gacc_hf run`.\n", "'## Scale'"),
    ],
)
def test_a_section_without_a_command_is_named(tmp_path: Path, section: str, named: str) -> None:
    page = tmp_path / "performance.md"
    page.write_text(GOOD + "\n" + section, encoding="utf-8")
    assert problems(page) == [f"performance.md: {named} names no command"]


def test_a_page_over_the_limit_is_named(tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text(GOOD + "\n" * (MAX_LINES - GOOD.count("\n") + 1), encoding="utf-8")
    assert problems(page) == [f"performance.md: {MAX_LINES + 1} lines, over {MAX_LINES}"]
    page.write_text(GOOD + "\n" * (MAX_LINES - GOOD.count("\n")), encoding="utf-8")
    assert problems(page) == []


def test_anchors_follow_the_headings_in_english_and_chinese(tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text(GOOD + "\n## The main job\n", encoding="utf-8")
    # hand-derived: backticks and parentheses dropped, spaces as hyphens; a repeated heading gets -1
    assert anchors(page) == {
        "performance",
        "the-main-job",
        "the-main-job-1",
        "主任务-make-demo",
        "the-floor",
    }


def test_a_link_to_a_missing_anchor_is_named(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "performance.md"
    page.write_text(GOOD, encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/performance.md#the-main-job) [中文](docs/performance.md#主任务-make-demo)\n"
        "[page](docs/performance.md) [other](docs/other.md#gone)\n"
        "[gone](docs/performance.md#the-main-job-2026-12-01) [缺](docs/performance.md#主任务)\n",
        encoding="utf-8",
    )
    assert broken_links([readme], page) == [
        "README.md: docs/performance.md#the-main-job-2026-12-01",
        "README.md: docs/performance.md#主任务",
    ]


def warm_figure(page: str) -> str:
    """The main job's warm figures and their date, as the performance page's targets table states them:
    `9.3 s and 8.8 s (2026-12-01`."""
    (row,) = [line for line in page.splitlines() if line.startswith("| main job warm")]
    return re.search(r"\| ([\d.]+ s(?: and [\d.]+ s)?) \((\d{4}-\d\d-\d\d)", row).expand(r"\1 (\2")


def test_the_readme_states_the_warm_time_the_page_measured() -> None:
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    measured = warm_figure(PERFORMANCE.read_text(encoding="utf-8"))
    assert f"A warm rerun (0 model calls: start-up, the checks and writing the folder) took {measured}" in readme


def test_a_warm_figure_the_readme_does_not_state_is_caught() -> None:
    page = "| main job warm ≤ 10 s with 0 model calls | 31.2 s (2026-12-04, 5.8) | no | `gacc run` |\n"
    assert warm_figure(page) == "31.2 s (2026-12-04"
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert f"took {warm_figure(page)}" not in readme
