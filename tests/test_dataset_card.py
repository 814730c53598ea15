"""The generated dataset card: its YAML is what `datasets` and the Hub read, and it round-trips."""

from __future__ import annotations

import datasets
import pytest
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard
from huggingface_hub.repocard_data import DatasetCardData

from gacc_hf.data.card import card_data, data_path, render_card, size_category
from gacc_hf.data.jsonl import load_sample
from gacc_hf.data.schema import JUDGE_FEATURES, PUBLIC_FEATURES
from gacc_hf.data.stats import data_stats


def _splits(n: int) -> dict[str, datasets.SplitDict]:
    out = {}
    for config, size in (("public", 1000), ("judge", 1100)):
        splits = datasets.SplitDict()
        splits.add(datasets.SplitInfo(name="test", num_examples=n, num_bytes=size))
        out[config] = splits
    return out


@pytest.fixture(scope="module")
def card_text() -> str:
    return render_card(_splits(35), data_stats(load_sample()), content_hash="abc123", repo_id="me/gacc")


def test_card_round_trips_through_huggingface_hub(card_text):
    card = DatasetCard(card_text)
    assert card.content == card_text
    expected = card_data(_splits(35), pretty_name="GACC-Bench", license="apache-2.0")
    assert card.data.to_dict() == expected.to_dict()
    assert DatasetCard(str(card)).data.to_dict() == expected.to_dict()


def test_card_yaml_declares_both_views(card_text):
    data = DatasetCard(card_text).data
    configs = MetadataConfigs.from_dataset_card_data(data)
    assert configs == {
        "judge": {"data_files": [{"split": "test", "path": "judge/test-*"}]},
        "public": {"data_files": [{"split": "test", "path": "public/test-*"}], "default": True},
    }
    assert configs.get_default_config_name() == "public"
    infos = DatasetInfosDict.from_dataset_card_data(data)
    assert infos["judge"].features == JUDGE_FEATURES
    assert infos["public"].features == PUBLIC_FEATURES
    assert infos["judge"].splits["test"].num_examples == 35


def test_card_metadata_and_usage(card_text):
    data: DatasetCardData = DatasetCard(card_text).data
    assert data.license == "apache-2.0"
    assert data.pretty_name == "GACC-Bench"
    assert data.task_categories == ["question-answering", "summarization"]
    assert data.size_categories == ["n<1K"]
    assert 'load_dataset("me/gacc", "public", split="test")' in card_text
    assert "## How the gold column must be used" in card_text
    assert "`gold` is **judge-only**" in card_text
    assert "abc123" in card_text and "median 986" in card_text
    assert data_path("judge", "test") in card_text


def test_card_without_repo_id_uses_a_placeholder():
    text = render_card(_splits(3), data_stats(load_sample()), content_hash="x")
    assert 'load_dataset("<repo_id>", "public"' in text


@pytest.mark.parametrize(
    ("rows", "label"), [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (99_999, "10K<n<100K"), (10**6, "n>1M")]
)
def test_size_category_buckets(rows, label):
    assert size_category(rows) == label
