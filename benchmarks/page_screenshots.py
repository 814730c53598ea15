"""The results-page and board screenshots of the docs (`docs/images/page-*.png`, `board-*.png`), taken in Debian's
headless Chromium.

    python benchmarks/page_screenshots.py            # every screenshot
    python benchmarks/page_screenshots.py board      # the board's only (or: page, survival)

The main job's page with `truncate` against `embed` on its first goal; the bilingual run's page filtered to
Chinese, searched for 默认配置 (highlighted), the oracle memory beside the first compressor and the answers sorted
by outcome; the board of the recorded runs
(`docs/results/board`): its plots, and its table searched for `embed`; the survival example
(`docs/results/survival`): its "Judges and conclusions" part, and the answers its judges disagree on. Exits 1 if a
page logs a console error.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


@contextmanager
def opened(html: Path, errors: list[str], height: int = 900) -> Iterator[Page]:
    """`html` loaded from file:// in headless Chromium and drawn; its console errors appended to `errors`."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": 1280, "height": height})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.resolve().as_uri())
        page.wait_for_selector("body[data-ready='1']")
        yield page
        browser.close()


def shoot(folder: Path, out: Path, chinese: bool) -> list[str]:
    """Write the screenshot of `folder`'s page to `out`; the console errors the page logged."""
    errors: list[str] = []
    with opened(folder / "report.html", errors) as page:
        if chinese:
            page.select_option("#f-language", "zh")
            page.fill("#search", "默认配置")
            page.select_option("#side-b", label="oracle · oracle · 0.2 (ceiling)")
            page.click("#goal-view table.answers >> nth=0 >> th[data-key=outcome]")
        page.evaluate("window.scrollTo(0, document.getElementById('goal-view').offsetTop - 120)")
        page.screenshot(path=str(out))
    return errors


def shoot_board(board: Path, images: Path) -> list[str]:
    """The board's plots (`board-plots.png`) and its table searched for `embed` (`board-table.png`)."""
    errors: list[str] = []
    with opened(board / "index.html", errors) as page:
        page.select_option("#f-condition", "own")
        page.evaluate("window.scrollTo(0, document.querySelector('.filters').offsetTop - 10)")
        page.screenshot(path=str(images / "board-plots.png"))
        page.fill("#search", "embed")
        page.select_option("#f-condition", "")
        page.evaluate("window.scrollTo(0, document.getElementById('board').offsetTop - 60)")
        page.screenshot(path=str(images / "board-table.png"))
    return errors


def shoot_survival(folder: Path, images: Path) -> list[str]:
    """The survival example's judges and conclusions (`page-survival.png`) and the answers its judges disagree on
    (`page-judges.png`)."""
    errors: list[str] = []
    with opened(folder / "report.html", errors, height=1100) as page:
        page.evaluate("window.scrollTo(0, document.getElementById('judging').offsetTop - 10)")
        page.screenshot(path=str(images / "page-survival.png"))
        page.select_option("#f-judges", "disagree")
        page.evaluate("document.querySelector('#goal-view table.answers').scrollIntoView(); window.scrollBy(0, -230)")
        page.screenshot(path=str(images / "page-judges.png"))
    return errors


def main(which: str = "") -> int:
    runs = ROOT / "docs" / "results"
    images = ROOT / "docs" / "images"
    errors = []
    if which in ("", "page"):
        errors += shoot(runs / "main", images / "page-main.png", chinese=False)
        errors += shoot(runs / "bilingual", images / "page-bilingual.png", chinese=True)
    if which in ("", "board"):
        errors += shoot_board(runs / "board", images)
    if which in ("", "survival"):
        errors += shoot_survival(runs / "survival", images)
    for error in errors:
        print(f"console error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
