"""A run's results page as a static Hugging Face Space: `index.html` and a README whose header says `sdk: static`.

The page is the run's results page (`report.html`), rendered again from the verified run so that nothing leaves
the machine that `gacc report` would not write. A banner on top names the model and the data (id, name, rows
fingerprint) and links back to the model and the details dataset. The plots the page shows travel beside it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from huggingface_hub import CommitOperationAdd, SpaceCard, SpaceCardData

from gacc_hf.hub.commit import PublishError, RepoPlan, check_repo_id
from gacc_hf.hub.identity import DatasetRef
from gacc_hf.results.layout import RunResults
from gacc_hf.results.page import render_page
from gacc_hf.results.plots import GAPS_PNG, SCORES_PNG

PAGE = "index.html"
_BODY = re.compile(r"<body[^>]*>", re.IGNORECASE)


def check_space_id(space_id: str) -> None:
    """Refuse a Space name that is not OWNER/NAME, before anything is planned."""
    check_repo_id("--space", space_id, "Space")


def banner(model_id: str, compressor: str, dataset: DatasetRef, details_repo_id: str | None) -> str:
    """The page's header: what was measured, on which data, and where the model and the details are."""
    e = html.escape
    details = (
        f' Per-question details: <a href="https://huggingface.co/datasets/{e(details_repo_id)}">{e(details_repo_id)}</a>.'
        if details_repo_id
        else ""
    )
    return (
        '<nav class="gacc-identity"><p>GACC-Bench results of '
        f'<a href="https://huggingface.co/{e(model_id)}">{e(model_id)}</a> (compressor <code>{e(compressor)}</code>) '
        f"on {e(dataset.name)} (<code>{e(dataset.id)}</code>, rows fingerprint "
        f"<code>{e(dataset.fingerprint or '')}</code>).{details}</p></nav>"
    )


def _plots(folder: Path) -> list[str]:
    return [png for png in (SCORES_PNG, GAPS_PNG) if (folder / png).is_file()]


def page_html(run: RunResults, run_dir: str | Path, header: str) -> str:
    """The results page rendered from the verified run (never a file read back from the folder, which could have
    been edited), with the header right after its `<body>` tag; the plots the folder has are inlined."""
    folder = Path(run_dir)
    page = render_page(run, [folder / png for png in _plots(folder)])
    match = _BODY.search(page)
    if match is None:  # the page template always has a body; refuse rather than ship a page without the header
        raise PublishError("the results page has no <body> tag to put the run's identity under")
    return page[: match.end()] + header + page[match.end() :]


def space_card(model_id: str, dataset: DatasetRef, details_repo_id: str | None) -> str:
    """The Space's README: a static Space showing `index.html`, linked to the model and datasets."""
    hub_datasets = [d for d in (dataset.id if dataset.on_hub else None, details_repo_id) if d]
    data = SpaceCardData(
        title="GACC-Bench results",
        sdk="static",
        app_file=PAGE,
        models=[model_id],
        datasets=hub_datasets or None,
        tags=["gacc-bench"],
    )
    lines = [
        f"# GACC-Bench results of {model_id}",
        "",
        f"The results page of one GACC-Bench run of [{model_id}](https://huggingface.co/{model_id}) on "
        f"{dataset.name} (`{dataset.id}`, rows fingerprint `{dataset.fingerprint}`). Written by gacc-hf.",
    ]
    if details_repo_id:
        lines += [
            "",
            f"Answers and memory ledger: [{details_repo_id}](https://huggingface.co/datasets/{details_repo_id}).",
        ]
    return str(SpaceCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines) + "\n"))


def space_plan(
    run: RunResults,
    run_dir: str | Path,
    space_id: str,
    *,
    model_id: str,
    compressor: str,
    dataset: DatasetRef,
    details_repo_id: str | None = None,
) -> RepoPlan:
    """The Space's one commit: README.md, index.html and the plots the page shows."""
    check_space_id(space_id)
    header = banner(model_id, compressor, dataset, details_repo_id)
    ops = [
        CommitOperationAdd("README.md", space_card(model_id, dataset, details_repo_id).encode("utf-8")),
        CommitOperationAdd(PAGE, page_html(run, run_dir, header).encode("utf-8")),
        *(CommitOperationAdd(png, str(Path(run_dir) / png)) for png in _plots(Path(run_dir))),
    ]
    return RepoPlan(space_id, "space", ops, f"GACC-Bench results page of {model_id}")
