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
    """The full README.md text; `splits` maps each config to its SplitDict (sizes from the built data)."""
    repo = repo_id or REPO_PLACEHOLDER
    width = max(len(repo), len("path/to/folder"))
    split = "test" if "test" in splits["judge"] else next(iter(splits["judge"]))
    split_list = ", ".join(f"`{s}` ({info.num_examples} groups)" for s, info in splits["judge"].items())
    files = "\n".join(data_path(c, s) for c in CONFIGS for s in splits[c])
    header = card_data(splits, pretty_name=pretty_name, license=license).to_yaml()
    body = f"""# {pretty_name}

{description}

GACC-Bench measures **goal-conditioned context compression with the follow-up questions held out**.
A compressor sees a long source and a user's goal and must shrink it to a cl100k_base token budget
before anyone knows the questions; a fixed reader answers each held-out question from that one memory;
an independent judge scores the answers against the source and the gold references. Micro is the
accuracy over questions; Macro is the share of goals whose every question is answered correctly.

Splits: {split_list}. One row is one (context, goal) group with the questions asked under that goal.

## Configs

| config | columns | who may read it |
|---|---|---|
| `public` (default) | `context_id`, `source`, `context`, `goal_id`, `goal`, `questions` | model-input builders |
| `judge` | the public columns + `gold` | the judge (scoring) only |

## How to load

```python
from datasets import load_dataset

public = load_dataset("{repo}", "public", split="{split}")  # model-facing view, no gold column
judge = load_dataset("{repo}", "judge", split="{split}")    # for scoring only
```

With the gacc-hf harness the same data runs the benchmark, from the Hub or offline from a copy of this folder:

```bash
gacc run --data {repo:<{width}}  # from the Hub (online)
gacc run --data {"path/to/folder":<{width}}  # from a local copy of this folder (offline)
gacc data stats path/to/folder
```

Files:

```
{files}
```

## How the gold column must be used

- `gold` is **judge-only**. Build every compressor and reader input from the `public` config (or drop
  `gold` first); only the judge may read the references, together with the question, the answer and
  the original source.
- A compressor sees only the context, the goal and the token budget: never a question, never gold.
- A reader sees one memory and one question at a time: never a sibling question, gold or the source.
- The canonical answers do occur in the contexts by design (every question is answerable from its
  source); what must stay hidden is *which* facts will be asked.
- `references[0]` is the canonical short answer; the rest are accepted alternates.
- Do not train or tune on the `questions` or `gold` of an evaluation split.

## Data fields

| column | type | notes |
|---|---|---|
| `context_id` | string | shared by the groups of one context |
| `source` | string | collection the context came from |
| `context` | string | the full source text |
| `goal_id` | string | unique over the dataset |
| `goal` | string | the high-level goal the user stated |
| `questions` | list of {{`question_id`, `question`}} | held out from the compressor |
| `gold` | list of {{`question_id`, `references`: list of string}} | judge config only |

## Statistics

Token counts use cl100k_base (the budget tokenizer of the protocol).

```
{stats.text()}
```

## License

{license}

## Provenance

This card and the Parquet files are generated by `gacc data build` from source data whose content
hash is `{content_hash}`. Do not edit them by hand: change the source and rebuild.
"""
    return f"---\n{header}\n---\n\n{body}"
