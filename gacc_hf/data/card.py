"""The dataset card (README.md) of a Hub-ready GACC-Bench folder, generated from code, never by hand.

The YAML header is written by the same `datasets` classes that read it back (`MetadataConfigs` for
`configs:`, `DatasetInfosDict` for `dataset_info:`), so `load_dataset(folder_or_repo, "public")` sees
exactly the two views the builder produced; the whole card round-trips through
`huggingface_hub.DatasetCard`.
"""

from __future__ import annotations

from collections.abc import Mapping

import datasets
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCardData

from gacc_hf.data.schema import JUDGE_FEATURES, PUBLIC_FEATURES
from gacc_hf.data.stats import DataStats
from gacc_hf.templates import render

CONFIGS = ("public", "judge")
DEFAULT_LICENSE = "apache-2.0"
DEFAULT_PRETTY_NAME = "GACC-Bench"
DEFAULT_DESCRIPTION = "A GACC-Bench dataset."
TASK_CATEGORIES = ["question-answering", "summarization"]
TAGS = ["context-compression", "long-context", "goal-conditioned", "held-out-questions", "benchmark"]
REPO_PLACEHOLDER = "<repo_id>"
SAMPLE_CARD = {
    "pretty_name": "GACC-Bench sample",
    "description": (
        "The sample benchmark bundled with gacc-hf, written for this project: realistic documents of several "
        "kinds, goals a user might state before reading one, and held-out questions answerable from the "
        "document, each with a short canonical answer and accepted alternates. The questions under one goal "
        "need facts from different places of the document."
    ),
}


def data_path(config: str, split: str) -> str:
    """Where the one Parquet shard of a config's split lives inside the folder."""
    return f"{config}/{split}-00000-of-00001.parquet"


def size_category(n_rows: int) -> str:
    """The Hub's size_categories bucket for a number of rows."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    return next((label for limit, label in bounds if n_rows < limit), "n>1M")


def card_data(splits: Mapping[str, datasets.SplitDict], *, pretty_name: str, license: str) -> DatasetCardData:
    """The YAML header: configs (public is the default), dataset_info per config, license, tasks."""
    data = DatasetCardData(
        pretty_name=pretty_name,
        license=license,
        language=["en"],
        task_categories=TASK_CATEGORIES,
        tags=TAGS,
        size_categories=[size_category(max(s.num_examples for s in splits["judge"].values()))],
    )
    features = {"public": PUBLIC_FEATURES, "judge": JUDGE_FEATURES}
    DatasetInfosDict(
        {c: datasets.DatasetInfo(features=features[c], splits=splits[c]) for c in CONFIGS}
    ).to_dataset_card_data(data)
    MetadataConfigs(
        {
            c: {
                "data_files": [{"split": s, "path": f"{c}/{s}-*"} for s in splits[c]],
                **({"default": True} if c == "public" else {}),
            }
            for c in CONFIGS
        }
    ).to_dataset_card_data(data)
    return data


def render_card(
    splits: Mapping[str, datasets.SplitDict],
    stats: DataStats,
    *,
    content_hash: str,
    pretty_name: str = DEFAULT_PRETTY_NAME,
    license: str = DEFAULT_LICENSE,
    description: str = DEFAULT_DESCRIPTION,
    repo_id: str | None = None,
) -> str:
    """The full README.md text (`templates/dataset_card.md.j2`).

    `splits` maps each config to its SplitDict (sizes from the built data).
    """
    repo = repo_id or REPO_PLACEHOLDER
    width = max(len(repo), len("path/to/folder"))
    return render(
        __file__,
        "dataset_card.md.j2",
        header=card_data(splits, pretty_name=pretty_name, license=license).to_yaml(),
        pretty_name=pretty_name,
        description=description,
        split_list=", ".join(f"`{s}` ({info.num_examples} groups)" for s, info in splits["judge"].items()),
        repo=repo,
        split="test" if "test" in splits["judge"] else next(iter(splits["judge"])),
        repo_padded=f"{repo:<{width}}",
        folder_padded=f"{'path/to/folder':<{width}}",
        files="\n".join(data_path(c, s) for c in CONFIGS for s in splits[c]),
        stats=stats.text(),
        license=license,
        content_hash=content_hash,
    )
