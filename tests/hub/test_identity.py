"""The data a published result names: bundled data as what it is, the sample by its Hub copy at most, a Hub
dataset by its id, a local file only with the Hub dataset it is named."""

from __future__ import annotations

import pytest

from gacc_hf.hub.commit import PublishError
from gacc_hf.hub.identity import dataset_ref

FINGERPRINT = "sha256:4ce82d3a"


def _config(spec, kind, **extra):
    return {"data": {"spec": spec, "kind": kind, "split": None, "view": "judge", "fingerprint": FINGERPRINT, **extra}}


def test_bundled_data_is_named_as_what_it_is():
    sample = dataset_ref(_config("sample", "sample"))
    assert (sample.id, sample.bundled, sample.on_hub) == ("gacc-hf-sample", True, False)
    assert sample.name == "the gacc-hf bundled sample (not the GACC-Bench release)"
    synthetic = dataset_ref(_config("synthetic:contexts=3", "synthetic"))
    assert synthetic.id == "gacc-hf-synthetic" and synthetic.name.endswith(", synthetic:contexts=3")
    with pytest.raises(PublishError, match=r"synthetic data.*not 'owner/gacc-bench': drop --dataset-repo"):
        dataset_ref(_config("synthetic", "synthetic"), "owner/gacc-bench")


def test_the_sample_may_be_named_by_its_hub_copy_and_keeps_its_name():
    copied = dataset_ref(_config("sample", "sample"), "me/gacc-bench-sample")
    assert (copied.id, copied.bundled, copied.on_hub) == ("me/gacc-bench-sample", True, True)
    assert copied.name == "the gacc-hf bundled sample (not the GACC-Bench release)"
    assert copied.fingerprint == FINGERPRINT


def test_a_hub_dataset_is_named_by_its_id_and_its_recorded_revision():
    hub = dataset_ref(_config("owner/bench", "hub", revision="5503434d"))
    assert (hub.id, hub.name, hub.revision, hub.on_hub, hub.bundled) == (
        "owner/bench",
        "owner/bench",
        "5503434d",
        True,
        False,
    )
    with pytest.raises(PublishError, match="Hub dataset 'owner/bench', not 'other/bench'"):
        dataset_ref(_config("owner/bench", "hub"), "other/bench")


def test_a_local_file_needs_the_dataset_repo_and_unrecorded_data_is_refused():
    with pytest.raises(PublishError, match=r"'data/mine\.jsonl', not known to be a Hub dataset: pass --dataset-repo"):
        dataset_ref(_config("data/mine.jsonl", "files"))
    assert dataset_ref(_config("data/mine.jsonl", "files"), "me/bench").id == "me/bench"
    with pytest.raises(PublishError, match="records no data identity"):
        dataset_ref({})
