import json

from gacc_hf.cli import main


def test_run_writes_results_and_prints_table(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(
        [
            "run",
            "--data",
            "synthetic",
            "--ratios",
            "0.1,0.5",
            "--conditions",
            "own,none",
            "--compressors",
            "truncate,goal-lines",
            "--reader",
            "fields",
            "--judge",
            "exact",
            "--cache-dir",
            str(tmp_path / "c"),
            "--output-dir",
            str(out),
            "--bootstrap",
            "50",
            "--no-progress",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "goal-lines" in printed and "micro" in printed
    payload = json.loads((out / "results.json").read_text())
    assert payload["integrity"] == {"budget_violations": 0, "count_errors": 0, "exposures": 0}
    assert payload["tokenizer"]["identity_verified"] is True
    assert len(payload["scores"]) == 2 * 2 * 2
    assert payload["config"]["seed"] == 0 and payload["versions"]["tiktoken"]


def test_bad_ratio_is_a_clear_error(tmp_path, capsys):
    code = main(
        [
            "run",
            "--data",
            "synthetic",
            "--ratios",
            "1.5",
            "--cache-dir",
            str(tmp_path / "c"),
            "--output-dir",
            str(tmp_path / "o"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "ratio must be in [0, 1], got 1.5" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
