"""The card of a details dataset: a run's answers and memory ledger, published beside a model's results."""

from __future__ import annotations

from huggingface_hub import DatasetCard, DatasetCardData

from gacc_hf.hub.identity import DatasetRef
from gacc_hf.results.layout import ANSWERS_FILE, MEMORIES_FILE, RESULTS_FILE


def details_card(details_repo_id: str, model_id: str, dataset: DatasetRef) -> str:
    """The card of the details dataset: two configs (answers, memories) over the run's parquet files."""
    data = DatasetCardData(
        pretty_name=f"GACC-Bench details: {model_id}",
        tags=["gacc-bench", "evaluation-details"],
        configs=[
            {"config_name": "answers", "data_files": ANSWERS_FILE, "default": True},
            {"config_name": "memories", "data_files": MEMORIES_FILE},
        ],
    )
    body = "\n".join(
        [
            f"# GACC-Bench details: {model_id}",
            "",
            f"Per-question answers and the memory ledger of the GACC-Bench run behind the results on the card of "
            f"[{model_id}](https://huggingface.co/{model_id}), on {dataset.name} (`{dataset.id}`, config "
            f"`{dataset.config}`, {dataset.split_text()}, {dataset.view}-view rows fingerprint "
            f"`{dataset.fingerprint}`). Written by gacc-hf.",
            "",
            f"- `answers` ({ANSWERS_FILE}): one row per question per compressor, condition and retention ratio: "
            "ids, the question text, the sha256 of the memory read, the reader's answer, the judge's verdict "
            "(`correct`), and **`references`: the gold answers** (judge-only: neither the compressor nor the "
            "reader saw them; keep them out of any model input).",
            f"- `memories` ({MEMORIES_FILE}): one ledger row per memory: the memory text (`memory`), budget L, "
            "source tokens N, proposed / retained / re-encoded tokens, unused budget, padding (always 0), "
            "truncated, compressor called.",
            "- Rows with `ceiling` true (full context, oracle; closed book, the floor) are bounds, not methods.",
            f"- `{RESULTS_FILE}`: configuration, versions, tokenizer identity, integrity counters, scores with CIs; "
            "`report.md` and the plots summarise them.",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            f'answers = load_dataset("{details_repo_id}", "answers", split="train")',
            "```",
            "",
        ]
    )
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body}"))
