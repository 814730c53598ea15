"""`gacc view`: the page's path, a clear error for a folder without one, and the folder served on 127.0.0.1."""

from __future__ import annotations

import threading
import urllib.request

import pytest

from gacc_hf.cli import main
from gacc_hf.results.layout import ResultsError
from gacc_hf.results.serve import page_path, page_server


def test_the_page_path_is_printed(folder, capsys):
    assert main(["view", str(folder)]) == 0
    assert capsys.readouterr().out.strip() == str((folder / "report.html").resolve())


def test_a_folder_without_a_page_or_results_is_named(folder, tmp_path, capsys):
    (folder / "report.html").unlink()
    with pytest.raises(ResultsError, match=r"report\.html: missing .*`gacc report .*` writes it"):
        page_path(folder)
    with pytest.raises(ResultsError, match=r"not a results folder \(no results\.json\)"):
        page_path(tmp_path)
    assert main(["view", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gacc view: error:") and len(err.strip().splitlines()) == 1


def test_the_folder_is_served_on_localhost_only(folder):
    with page_server(folder, 0) as server:
        host, port = server.server_address[:2]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/report.html", timeout=10) as response:
                body = response.read()
        finally:
            server.shutdown()
    assert host == "127.0.0.1" and body == (folder / "report.html").read_bytes()


def test_a_bad_port_is_refused(folder):
    with pytest.raises(ValueError, match="--serve 70000: a port is 0 to 65535"):
        page_server(folder, 70000)
