"""The details dataset's card: two configs over the run's parquet files, the gold column marked judge-only."""

from __future__ import annotations

from huggingface_hub import DatasetCard

from gacc_hf.hub.details import details_card
from gacc_hf.hub.identity import DatasetRef


def test_the_details_card_has_two_configs_and_marks_the_gold_column():
    dataset = DatasetRef(id="me/bench", name="me/bench", fingerprint="sha256:ab12")
    text = details_card("me/m-details", "me/m", dataset)
    card = DatasetCard(text)
    assert [(c["config_name"], c["data_files"]) for c in card.data.configs] == [
        ("answers", "answers.parquet"),
        ("memories", "memories.parquet"),
    ]
    assert "**`references`: the gold answers** (judge-only" in text and "`sha256:ab12`" in text
    assert 'load_dataset("me/m-details", "answers", split="train")' in text
