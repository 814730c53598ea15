"""The results page as a static Space: its README header, the page rendered from the verified run with the run's
identity on top, and the Space's name checked."""

from __future__ import annotations

import shutil

import pytest
from huggingface_hub import SpaceCard

from gacc_hf.hub.commit import PublishError
from gacc_hf.hub.identity import DatasetRef
from gacc_hf.hub.space import check_space_id, space_card, space_plan
from gacc_hf.results.folder import read_folder
from gacc_hf.results.page import render_page
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


def test_the_page_is_rendered_from_the_verified_run_not_an_edited_file(tmp_path):
    folder = shutil.copytree(MAIN, tmp_path / "main")
    for name in ("report.md", "report.html"):  # hand edits in the folder never reach the Space
        (folder / name).write_text("<html><body>Edited by hand: 0.99 on everything.</body></html>", encoding="utf-8")
    odd = DatasetRef(id="me/bench", name="data <with> & marks", fingerprint="sha256:ab12")
    run = read_folder(folder)
    plan = space_plan(
        run, folder, "me/page", model_id="me/model", compressor="embed", dataset=odd, details_repo_id="me/d"
    )
    assert (plan.repo_id, plan.repo_type, plan.pr) == ("me/page", "space", False)
    files = {op.path_in_repo: op.path_or_fileobj for op in plan.operations}
    assert list(files) == ["README.md", "index.html", "scores.png", "gaps.png"]
    page = files["index.html"].decode("utf-8")
    assert "Edited by hand" not in page
    expected = render_page(run, [folder / "scores.png", folder / "gaps.png"])
    head, body = expected.split("<body", 1)
    tag, rest = body.split(">", 1)
    header = page[len(head) + len("<body") + len(tag) + 1 :].split("</nav>", 1)[0] + "</nav>"
    assert page == f"{head}<body{tag}>{header}{rest}"  # the rendered page, with only the header put in
    assert header.startswith('<nav class="gacc-identity">')
    assert "data &lt;with&gt; &amp; marks" in header and "sha256:ab12" in header
    assert (
        'href="https://huggingface.co/me/model"' in header and 'href="https://huggingface.co/datasets/me/d"' in header
    )
