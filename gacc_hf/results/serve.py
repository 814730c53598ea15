"""`gacc view`: where a results folder's page is, and a local server for it (127.0.0.1 only, the folder alone)."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from gacc_hf.results.layout import RESULTS_FILE, ResultsError
from gacc_hf.results.page import PAGE_FILE


def page_path(run_dir: str | Path) -> Path:
    """The `report.html` of a results folder; ResultsError naming what is missing (a folder written before the
    page existed gets it from `gacc report`)."""
    root = Path(run_dir)
    if not (root / RESULTS_FILE).is_file():
        raise ResultsError(f"{root}: not a results folder (no {RESULTS_FILE})")
    page = root / PAGE_FILE
    if not page.is_file():
        raise ResultsError(f"{page}: missing (written before the page existed); `gacc report {root}` writes it")
    return page.resolve()


def page_server(run_dir: str | Path, port: int) -> ThreadingHTTPServer:
    """A server of the folder's files on 127.0.0.1:`port` (0: any free port), bound but not yet serving."""
    page = page_path(run_dir)
    if not 0 <= port <= 65535:
        raise ValueError(f"--serve {port}: a port is 0 to 65535")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(page.parent))
    return ThreadingHTTPServer(("127.0.0.1", port), handler)
