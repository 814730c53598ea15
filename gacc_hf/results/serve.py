"""`gacc view`: where a results folder's page is, and a local server for it (127.0.0.1 only, the folder alone).

The server answers GET and HEAD with the folder's own files and nothing else:
- a path is percent-decoded once, then refused with 400 if it is not UTF-8 or holds a control character
  (NUL included) or a backslash;
- 404 for a path with a `.` or `..` part, a hidden part (starting with `.`), a folder (no listing; `/` is sent
  on to the page), or a file that, symbolic links resolved, lies outside the folder or in a hidden part of it:
  a link is followed only where it stays inside the folder, to a file that is not hidden;
- nothing is printed per request, and a client that goes away mid-reply is not an error.
"""

from __future__ import annotations

import os
import socket
import sys
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote

from gacc_hf.localhost import HOST, bind
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


class BadPath(Exception):
    """A request path that is not a path at all (400), as against one that names nothing served (404)."""


def served_file(root: Path, request_path: str) -> Path | None:
    """The file of the (resolved) folder `root` that `request_path` names, or None where none is served.
    BadPath for a path that cannot be read (not UTF-8, a control character, a backslash)."""
    raw = request_path.split("?", 1)[0].split("#", 1)[0]
    try:
        path = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise BadPath(f"{raw!r} is not UTF-8") from None
    if "\\" in path or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise BadPath(f"{raw!r} holds a control character or a backslash")
    parts = [p for p in path.split("/") if p]
    if not parts or any(p.startswith(".") for p in parts):  # `.`, `..` and hidden names alike
        return None
    try:
        real = root.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError):  # missing, or a loop of links
        return None
    if not real.is_relative_to(root) or any(p.startswith(".") for p in real.relative_to(root).parts):
        return None  # out of the folder, or a link to a hidden file in it
    return real if real.is_file() else None


class _FolderHandler(SimpleHTTPRequestHandler):
    """GET and HEAD of the folder's own files (see the module docstring); quiet."""

    root: Path
    timeout = 30  # a client that connects and says nothing is dropped

    def send_head(self) -> BinaryIO | None:
        if self.path.split("?", 1)[0] == "/":
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", f"/{PAGE_FILE}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        try:
            target = served_file(self.root, self.path)
        except BadPath:
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad request path")
            return None
        if target is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        try:
            handle = open(target, "rb")  # noqa: SIM115 (the base class closes it once sent)
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", self.guess_type(str(target)))
        self.send_header("Content-Length", str(os.fstat(handle.fileno()).st_size))
        self.end_headers()
        return handle

    def log_message(self, format: str, *args: object) -> None:
        pass


class FolderServer(ThreadingHTTPServer):
    """A threading HTTP server that says nothing about clients that go away (a bug still prints its traceback)."""

    daemon_threads = True

    def handle_error(self, request: socket.socket | tuple[bytes, socket.socket], client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):  # a closed tab, a reset, a stall
            super().handle_error(request, client_address)


def page_server(run_dir: str | Path, port: int) -> FolderServer:
    """A server of the folder's own files on 127.0.0.1:`port` (0: any free port), bound but not yet serving;
    ValueError naming the port where it is out of range, in use or not allowed to this user."""
    page_path(run_dir)
    root = Path(run_dir).resolve()  # the folder itself, wherever a link named report.html may point
    handler = type("FolderHandler", (_FolderHandler,), {"root": root})
    return bind("--serve", port, lambda: FolderServer((HOST, port), handler))
