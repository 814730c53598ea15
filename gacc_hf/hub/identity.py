"""The data a run used, as a published result names it: from the data identity `results.json` records.

The bundled sample and synthetic data are named as what they are, never as the GACC-Bench release; the sample
may be named by its copy on the Hub (`--dataset-repo`, the folder `dataset_scripts/gacc_bench/build.py --push`
uploads), synthetic data never. A run on a Hub dataset is named by its repo id; a run on a local file needs the
Hub dataset it is named explicitly (its rows fingerprint lets anyone check).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gacc_hf.hub.benchmark_yaml import TASK_CONFIG
from gacc_hf.hub.commit import PublishError

#: Data whose identity is known from its spec alone: never the GACC-Bench release.
BUNDLED = {
    "sample": "the gacc-hf bundled sample (not the GACC-Bench release)",
    "synthetic": "gacc-hf synthetic data (rule-made; not the GACC-Bench release)",
}


@dataclass(frozen=True)
class DatasetRef:
    """The data a run used, as the card names it (model-index `dataset`).

    `bundled` is True for the sample and synthetic data: the card then says the scores are not on the
    GACC-Bench release. `config` is the view a result belongs to, the one the benchmark's `eval.yaml` tasks rank
    (`public`, the questions without gold); `view` the twin the run read, the same rows with gold for the judge,
    and `fingerprint` the sha256 of those rows as the run recorded them.
    """

    id: str
    name: str
    config: str = TASK_CONFIG
    split: str | None = None  # None: the run read data with one split and recorded no name for it
    revision: str | None = None
    fingerprint: str | None = None
    bundled: bool = False
    on_hub: bool = True  # False: `id` names bundled data, no Hub dataset (no Eval Results can point at it)
    view: str = "judge"

    def split_text(self) -> str:
        """The split as a card states it: its name, or that the run recorded none."""
        return f"split `{self.split}`" if self.split else "its only split (the run recorded no split name)"


def dataset_ref(config: Mapping[str, Any], dataset_repo: str | None = None, split: str | None = None) -> DatasetRef:
    """The card's dataset, from the data identity in `config["data"]`; `dataset_repo` names a Hub dataset, and
    `split` the split of it a run that recorded none read (a local file is one split of the Hub dataset).

    The sample and synthetic data are named as what they are (`dataset_repo` may name the sample's Hub copy,
    never synthetic data's; the name still says which data it is); a run on
    a Hub dataset is named by its repo id; a run on a local file or folder needs `dataset_repo`, the Hub dataset
    the file is (the fingerprint on the card lets anyone check).
    """
    data = config.get("data")
    if not isinstance(data, Mapping) or not data.get("fingerprint"):
        raise PublishError(
            "results.json records no data identity (written before gacc-hf recorded it): rerun the benchmark "
            "to publish its scores"
        )
    spec = data.get("spec")
    recorded = data.get("split")
    if split is not None and recorded is not None and split != recorded:
        raise PublishError(f"the run recorded split {recorded!r}, not {split!r}: drop --split")
    common = {
        "view": str(data.get("view") or "judge"),
        "split": recorded or split,
        "fingerprint": data["fingerprint"],
        "revision": data.get("revision"),
    }
    base = str(spec).split(":", 1)[0]  # "synthetic:contexts=50,seed=1" is synthetic data
    if base in BUNDLED:
        name = BUNDLED[base] + (f", {spec}" if spec != base else "")
        if dataset_repo is not None and base != "sample":
            raise PublishError(f"the run used {BUNDLED[base]}, not {dataset_repo!r}: drop --dataset-repo")
        if dataset_repo is not None:  # the sample's copy on the Hub (dataset_scripts/gacc_bench/build.py --push)
            return DatasetRef(id=dataset_repo, name=name, bundled=True, **common)
        if split is not None:
            raise PublishError(f"--split names a split of a Hub dataset; the run used {BUNDLED[base]}: drop --split")
        return DatasetRef(id=f"gacc-hf-{base}", name=name, bundled=True, on_hub=False, **common)
    if data.get("kind") == "hub" and dataset_repo not in (None, spec):
        raise PublishError(f"the run used the Hub dataset {spec!r}, not {dataset_repo!r}")
    if dataset_repo is None:
        if data.get("kind") != "hub" or not spec:
            what = "a dataset object (no spec recorded)" if spec is None else repr(spec)
            raise PublishError(
                f"the run used {what}, not known to be a Hub dataset: pass --dataset-repo OWNER/NAME, the Hub "
                f"dataset these rows are (the card records their fingerprint {data['fingerprint']})"
            )
        dataset_repo = str(spec)
    return DatasetRef(id=dataset_repo, name=dataset_repo, **common)
