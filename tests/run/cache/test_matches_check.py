import json
import sqlite3

import pytest

from gacc_hf.run.cache import CACHE_FILENAME, Cache
from gacc_hf.run.cache.matches import INPUTS, KIND, TEXT
from gacc_hf.run.cache.matches_check import check_matches
from tests.helpers.runs import rules_run
from tests.run.cache.test_matches import EN_ROWS, ZH_ROWS, _leaky


def _edit(folder, kind, key, value):
    with sqlite3.connect(folder / CACHE_FILENAME) as db:
        text = json.dumps(value, ensure_ascii=False)
        db.execute("UPDATE entries SET value=? WHERE kind=? AND key=?", (text, kind, key))


def _stored(folder, kind):
    with sqlite3.connect(folder / CACHE_FILENAME) as db:
        return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM entries WHERE kind=?", (kind,))}


@pytest.fixture(params=[EN_ROWS, ZH_ROWS], ids=["en", "zh"])
def cache_dir(request, tmp_path):
    rules_run(request.param, compressor=["goal-lines", _leaky], ratios=[1.0], cache_dir=str(tmp_path))
    return tmp_path


def test_an_untouched_cache_recomputes_to_what_it_holds(cache_dir):
    entries = len(_stored(cache_dir, KIND))
    with Cache(cache_dir) as cache:
        found = check_matches(cache, sample=None)
    assert found.problems == [] and found.checked == entries and found.other_revision == 0
    with Cache(cache_dir) as cache:
        assert check_matches(cache, sample=2).checked == 2  # a sample recomputes that many


def test_edited_flags_an_invented_exposure_and_an_edited_text_are_each_reported(cache_dir):
    values = _stored(cache_dir, KIND)
    keys = sorted(values)
    flipped = values[keys[0]]["evidence"].translate(str.maketrans("01", "10"))
    _edit(cache_dir, KIND, keys[0], {**values[keys[0]], "evidence": flipped})
    _edit(cache_dir, KIND, keys[1], {**values[keys[1]], "exposed": [["reference", "不存在的答案 nowhere"]]})
    inputs = _stored(cache_dir, INPUTS)
    held = {h for k in keys[:2] for h in inputs[k]}  # no input text of the two rows edited above is touched
    memory_hash = next(inputs[k][0] for k in keys[2:] if inputs[k][0] not in held)
    _edit(cache_dir, TEXT, memory_hash, "a memory written by hand")
    with Cache(cache_dir) as cache:
        found = check_matches(cache, sample=None)
    assert [p.split(":")[0] for p in found.problems[:2]] == [f"{KIND}/{keys[0]}", f"{KIND}/{keys[1]}"]
    assert f"stored evidence {flipped}" in found.problems[0]
    assert "不存在的答案" in found.problems[1]
    assert any(f"{TEXT}/{memory_hash} does not hash to its key" in p for p in found.problems)


def test_missing_inputs_are_a_problem_and_another_revision_is_only_counted(cache_dir):
    keys = sorted(_stored(cache_dir, KIND))
    with sqlite3.connect(cache_dir / CACHE_FILENAME) as db:
        db.execute("DELETE FROM entries WHERE kind=? AND key=?", (INPUTS, keys[0]))
        value = db.execute("SELECT value FROM entries WHERE kind=? AND key=?", (KIND, keys[1])).fetchone()[0]
        inputs = db.execute("SELECT value FROM entries WHERE kind=? AND key=?", (INPUTS, keys[1])).fetchone()[0]
        db.execute("INSERT INTO entries VALUES (?, ?, ?, 0)", (KIND, "f" * 64, value))  # a key no input set gives
        db.execute("INSERT INTO entries VALUES (?, ?, ?, 0)", (INPUTS, "f" * 64, inputs))
    with Cache(cache_dir) as cache:
        found = check_matches(cache, sample=None)
    assert found.problems == [f"{KIND}/{keys[0]}: its input texts are not in the cache, so it cannot be verified"]
    assert found.other_revision == 1 and found.checked == len(keys) - 1


def test_edited_entries_outside_the_sample_are_found_by_their_seals(cache_dir):
    values = _stored(cache_dir, KIND)
    with Cache(cache_dir) as cache:
        assert check_matches(cache, sample=1).problems == []  # quiet: every seal fits
    for key, value in values.items():  # every entry's flags flipped
        _edit(cache_dir, KIND, key, {**value, "evidence": value["evidence"].translate(str.maketrans("01", "10"))})
    with Cache(cache_dir) as cache:
        found = check_matches(cache, sample=1)
    sealed = [p for p in found.problems if p.endswith(": its seal does not fit its flags and exposures (edited)")]
    assert found.checked == 1 and len(values) > 2  # one entry recomputed ...
    assert len(found.problems) == len(values) and len(sealed) == len(values) - 1  # ... every other by its seal
