"""save_to_disk folders: a truncated Arrow file is named, with the remedy, by `gacc data validate` and `gacc run`."""

from __future__ import annotations

import datasets
import pytest

from gacc_hf.cli import main
from gacc_hf.data.loading import load_any
from gacc_hf.data.saved import is_saved_dataset, load_saved, unreadable_arrow
from gacc_hf.data.schema import DataSourceError
from tests.helpers.data import FLAT_ROWS, hf_cache

pytestmark = pytest.mark.usefixtures("hf_cache")
_ = hf_cache  # the fixture, imported for pytest


def _saved(tmp_path):
    rows = [
        {**r, "references": r["references"] if isinstance(r["references"], list) else [r["references"]]}
        for r in FLAT_ROWS
    ]
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    (arrow,) = folder.glob("*.arrow")
    return folder, arrow


def test_an_intact_folder_loads(tmp_path):
    folder, _arrow = _saved(tmp_path)
    assert is_saved_dataset(folder) and unreadable_arrow(folder) is None
    assert list(load_saved(folder)) == ["test"] and len(load_any(folder)) == 2  # English and Chinese goals


def test_a_truncated_arrow_file_is_named_with_the_remedy(tmp_path, capsys):
    folder, arrow = _saved(tmp_path)
    arrow.write_bytes(arrow.read_bytes()[:500])
    assert unreadable_arrow(folder) == arrow
    with pytest.raises(DataSourceError) as err:
        load_any(folder)
    message = str(err.value)
    assert message.startswith(f"{arrow}: a truncated or damaged Arrow file (")
    assert message.endswith("write the folder again with save_to_disk, or restore it from a good copy")
    out = tmp_path / "out"
    capsys.readouterr()  # the progress bars of save_to_disk
    for argv in (
        ["data", "validate", str(folder)],
        ["run", "--data", str(folder), "--preset", "rules", "--output-dir", str(out)],
    ):
        assert main(argv) == 2
        err_text = capsys.readouterr().err
        assert err_text.count("\n") == 1 and str(arrow) in err_text and "Traceback" not in err_text
    assert not out.exists()
