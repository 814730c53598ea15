"""The HTTP connections to one server: one client per request in flight, each holding one connection.

httpx's connection pool looks through all its connections for every request, polling each idle socket,
under one lock; with a hundred requests in flight that search costs the harness more CPU than the request
itself, and a run against fast servers waits on it. Lending each request a client of its own (a pool of
one connection, kept alive for the next request that borrows it) makes the search constant. There are
never more clients than requests ever in flight at once; they share one TLS context (building one per
client would cost tens of milliseconds each).
"""

from __future__ import annotations

import contextlib
import queue
import ssl
import threading
from collections.abc import Iterator

import httpx

_ONE = httpx.Limits(max_connections=1, max_keepalive_connections=1)


class Connections:
    """Clients for `url`, lent one per request (`lend`), created when none is idle, closed by `close`."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float, tls: ssl.SSLContext) -> None:
        self.url, self._headers, self._timeout, self._tls = url, headers, timeout, tls
        self._idle: queue.SimpleQueue[httpx.Client] = queue.SimpleQueue()
        self._made: list[httpx.Client] = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def lend(self) -> Iterator[httpx.Client]:
        """An idle client (a new one when none is), given back when the request is done."""
        try:
            client = self._idle.get_nowait()
        except queue.Empty:
            client = httpx.Client(
                base_url=self.url + "/", headers=self._headers, timeout=self._timeout, limits=_ONE, verify=self._tls
            )
            with self._lock:
                self._made.append(client)
        try:
            yield client
        finally:
            self._idle.put(client)

    @property
    def size(self) -> int:
        """How many clients were made: the most requests that were in flight at once."""
        return len(self._made)

    def close(self) -> None:
        with self._lock:
            for client in self._made:
                client.close()
