"""`gacc view`: the page's path, a clear error for a folder without one, and the folder served on 127.0.0.1: its own
files only (no link out of it, no listing, no hidden path, no traversal in any encoding), quiet, and stopped cleanly.

Every request goes to a real server on 127.0.0.1 through a raw socket, so the path reaches it byte for byte (an
HTTP client would normalise `..` or refuse a NUL before sending)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gacc_hf.cli import main
from gacc_hf.results.layout import ResultsError
from gacc_hf.results.serve import page_path, page_server
from tests.helpers.paths import ROOT

SECRET = "hf_" + "a" * 34  # a token-shaped line in a file outside the folder


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


def request(port: int, path: bytes, method: bytes = b"GET") -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one HTTP/1.0 request whose path is sent exactly as given."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(method + b" " + path + b" HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


@contextmanager
def serving(folder: Path) -> Iterator[int]:
    with page_server(folder, 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()


@pytest.fixture
def planted(folder, tmp_path):
    """The results folder with, beside its own files, links out of it, links inside it, hidden files and a
    Chinese file name; the files outside hold a token and a copy of /etc/passwd's shape."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "token.txt").write_text(SECRET)
    (outside / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (folder / "token-link.txt").symlink_to(outside / "token.txt")
    (folder / "passwd-link").symlink_to("/etc/passwd")
    (folder / "out-dir").symlink_to(outside, target_is_directory=True)
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "page-link.html").symlink_to(folder / "report.html")  # inside the folder: served
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "notes.txt").write_text("hidden")
    (folder / ".env").write_text(f"HF_TOKEN={SECRET}\n")
    (folder / "env.txt").symlink_to(folder / ".env")  # a visible name for a hidden file
    (folder / "sub").mkdir()
    (folder / "sub" / "图表.txt").write_text("中文 file")
    return folder


REFUSED = {
    # a link out of the folder, to a file, to /etc/passwd, through a linked folder; a loop of links
    b"/token-link.txt": 404,
    b"/passwd-link": 404,
    b"/out-dir/token.txt": 404,
    b"/loop": 404,
    # traversal: plain, percent-encoded dots and slashes, double encoding (a literal `%2e%2e` name), `//`
    b"/../outside/token.txt": 404,
    b"/sub/../../outside/token.txt": 404,
    b"/%2e%2e/outside/token.txt": 404,
    b"/%2E%2E%2Foutside%2Ftoken.txt": 404,
    b"/..%2f..%2f..%2f..%2fetc%2fpasswd": 404,
    b"/%252e%252e/outside/token.txt": 404,
    b"//etc/passwd": 404,
    b"/./report.html": 404,
    # hidden parts, folders (no listing)
    b"/.env": 404,
    b"/env.txt": 404,
    b"/.hidden/notes.txt": 404,
    b"/%2ehidden/notes.txt": 404,
    b"/sub": 404,
    b"/sub/": 404,
    b"/plots/": 404,
    # not a path at all: 400
    b"/report.html%00.png": 400,
    b"/%00": 400,
    b"/report\x00.html": 400,
    b"/%ff%fe": 400,
    b"/..%5c..%5cetc%5cpasswd": 400,
    b"/sub\\..\\..\\outside\\token.txt": 400,
}


def test_only_the_folders_own_files_are_served(planted):
    with serving(planted) as port:
        answers = {path: request(port, path) for path in REFUSED}
        page = request(port, b"/report.html?tab=1")
        head = request(port, b"/report.html", b"HEAD")
        linked = request(port, b"/page-link.html")
        chinese = request(port, "/sub/图表.txt".encode().replace("图表".encode(), b"%E5%9B%BE%E8%A1%A8"))
        root = request(port, b"/")
    assert {path: status for path, (status, _, _) in answers.items()} == REFUSED
    assert not any(SECRET.encode() in body or b"root:x:0" in body for _, _, body in answers.values())
    report = (planted / "report.html").read_bytes()
    assert page[0] == 200 and page[2] == report and page[1]["Content-Type"] == "text/html"
    assert head[0] == 200 and head[2] == b"" and int(head[1]["Content-Length"]) == len(report)
    assert linked[0] == 200 and linked[2] == report  # a link that stays inside the folder is followed
    assert chinese[0] == 200 and chinese[2] == "中文 file".encode()
    assert root[0] == 302 and root[1]["Location"] == "/report.html"


def _gacc(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [*prefix, sys.executable, "-m", "gacc_hf", *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def test_disconnects_and_bad_requests_are_quiet_and_ctrl_c_stops_serving(folder):
    (folder / "big.bin").write_bytes(os.urandom(1 << 24))  # larger than any socket buffer: the reply is cut
    proc = _gacc("view", str(folder), "--serve", "0")
    try:
        url = proc.stdout.readline()
        port = int(url.split(":")[2].split("/")[0])
        for _ in range(3):  # clients that ask for a large file and go away (a reset) at once
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.recv(1024)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.close()
        assert request(port, b"/%00")[0] == 400 and request(port, b"/../x")[0] == 404
        with socket.create_connection(("127.0.0.1", port)) as sock:  # not HTTP at all
            sock.sendall(b"\x16\x03\x01 garbage\r\n\r\n")
            sock.recv(1024)
        time.sleep(0.5)  # the cut replies reach their end on the server
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert url.startswith("http://127.0.0.1:") and url.strip().endswith("/report.html (Ctrl-C stops)")
    assert (proc.returncode, err) == (0, "gacc view: stopped serving\n")


def test_sigterm_stops_serving_too(folder):
    proc = _gacc("view", str(folder), "--serve", "0")
    try:
        assert proc.stdout.readline().startswith("http://127.0.0.1:")
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (0, "gacc view: stopped serving\n")


def test_a_port_in_use_is_named(folder, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["view", str(folder), "--serve", str(port)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"gacc view: error: --serve {port}: port {port} on 127.0.0.1 is in use (another server?); "
        "pass another port, or 0 for any free one\n"
    )


def test_a_free_port_is_taken(folder):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with page_server(folder, port) as server:  # the same port, once free, is bound without a word
        assert server.server_address == ("127.0.0.1", port)


def test_a_privileged_port_is_named(folder):
    """Port 81 needs CAP_NET_BIND_SERVICE: a normal user lacks it, and root is run without it (setpriv)."""
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv: no way to open a privileged port as a user would")
        prefix: tuple[str, ...] = ("setpriv", "--bounding-set", "-net_bind_service")
    elif int(Path("/proc/sys/net/ipv4/ip_unprivileged_port_start").read_text()) <= 81:
        pytest.skip("this machine lets every user open port 81")
    else:
        prefix = ()
    proc = _gacc("view", str(folder), "--serve", "81", prefix=prefix)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == ""
    assert err == (
        "gacc view: error: --serve 81: port 81 on 127.0.0.1 may not be opened by this user (below 1024: a "
        "privileged port); pass a port from 1024 up, or 0 for any free one\n"
    )


def test_a_bad_port_is_refused(folder):
    with pytest.raises(ValueError, match=r"--serve 70000: a port is 0 to 65535 \(0: any free port\)"):
        page_server(folder, 70000)
