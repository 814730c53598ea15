"""The results page as a static Space: its README header, the page (report.html, or report.md escaped) with the
run's identity on top, and the Space's name checked."""

from __future__ import annotations

import html
import shutil

import pytest
from huggingface_hub import SpaceCard

from gacc_hf.hub import space
from gacc_hf.hub.commit import PublishError
from gacc_hf.hub.identity import DatasetRef
from gacc_hf.hub.space import check_space_id, page_html, space_card, space_plan
from gacc_hf.results.folder import read_folder
from tests.helpers.paths import ROOT

MAIN = ROOT / "docs" / "results" / "main"
DATA = DatasetRef(id="me/bench", name="me/bench", fingerprint="sha256:ab12")


@pytest.mark.parametrize("name", ["results", "me/results/page", "", "me/re sults", "/results"])
def test_a_space_name_that_is_not_owner_name_is_refused(name):
    check_space_id("me/gacc-results")  # quiet
    with pytest.raises(PublishError, match=r"a Space is named OWNER/NAME"):
        check_space_id(name)


def test_the_space_card_is_a_static_space_showing_index_html():
    card = SpaceCard(space_card("me/model", DATA, "me/details"))
    assert (card.data.sdk, card.data.app_file) == ("static", "index.html")
    assert card.data.models == ["me/model"] and card.data.datasets == ["me/bench", "me/details"]
    assert "sha256:ab12" in card.text and "(https://huggingface.co/datasets/me/details)" in card.text
    bundled = DatasetRef(id="gacc-hf-sample", name="the sample", bundled=True, on_hub=False)
    assert SpaceCard(space_card("me/model", bundled, None)).data.datasets is None  # no Hub dataset to link


@pytest.mark.parametrize(
    "report",
    ["# Results\n\n| a <b> | & |\n<script>alert(1)</script>\n", "# 结果\n\n问题：缓存雪崩是怎么发生的？<b>粗体</b>\n"],
)
def test_the_report_is_shown_escaped_in_a_minimal_page(tmp_path, monkeypatch, report):
    monkeypatch.setattr(space, "render_report", lambda run, plots: report if plots == ["scores.png"] else "")
    (tmp_path / "scores.png").write_bytes(b"png")
    page = page_html(None, tmp_path, "<nav>top</nav>")
    body = page.split("<pre>", 1)[1].split("</pre>", 1)[0]
    assert html.unescape(body) == report and "<b>" not in body and "<script>" not in page
    assert page.index("<nav>top</nav>") < page.index("<pre>")
    assert '<img src="scores.png"' in page and "gaps.png" not in page  # only the plots the folder has


def test_report_html_is_used_when_the_folder_has_one_with_the_header_after_body(tmp_path):
    (tmp_path / "report.html").write_text('<html><body class="x"><h1>Page</h1></body></html>', encoding="utf-8")
    page = page_html(None, tmp_path, "<nav>top</nav>")
    assert page == '<html><body class="x"><nav>top</nav><h1>Page</h1></body></html>'


def test_the_page_is_rendered_from_the_verified_run_not_an_edited_report_md(tmp_path):
    folder = shutil.copytree(MAIN, tmp_path / "main")
    shown = (folder / "report.md").read_text(encoding="utf-8")
    with (folder / "report.md").open("a", encoding="utf-8") as fh:
        fh.write("\nEdited by hand: 0.99 on everything.\n")
    odd = DatasetRef(id="me/bench", name="data <with> & marks", fingerprint="sha256:ab12")
    run = read_folder(folder)
    plan = space_plan(
        run, folder, "me/page", model_id="me/model", compressor="embed", dataset=odd, details_repo_id="me/d"
    )
    assert (plan.repo_id, plan.repo_type, plan.pr) == ("me/page", "space", False)
    files = {op.path_in_repo: op.path_or_fileobj for op in plan.operations}
    assert list(files) == ["README.md", "index.html", "scores.png", "gaps.png"]
    page = files["index.html"].decode("utf-8")
    assert html.unescape(page.split("<pre>", 1)[1].split("</pre>", 1)[0]) == shown and "Edited by hand" not in page
    assert "data &lt;with&gt; &amp; marks" in page and "sha256:ab12" in page
    assert 'href="https://huggingface.co/me/model"' in page and 'href="https://huggingface.co/datasets/me/d"' in page
