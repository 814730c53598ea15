"""Several servers of one model (replicas) used as one: least-busy choice, failed ones rested.

Written `openai:<model>@<url1>|<url2>|...`: the `|` cannot appear unescaped in a URL, so the split is
unambiguous. Each request goes to the replica with the fewest requests in flight among those not resting;
a replica whose request fails on the way (refused, reset, timed out, HTTP 408/429/5xx) rests for 1 s,
then 2, 4, ... up to a minute (a success ends it), and the request is retried at once on a replica it
has not yet tried. Only when every replica has failed it does the client back off before the next try,
so one replica going down costs the run nothing but the retries of its requests in flight. A replica that
does not answer when the client starts is left out of the run, with a warning, while another answers.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import httpx

from gacc_hf.methods.connections import Connections
from gacc_hf.redaction import redact, url_userinfo

SEPARATOR = "|"
MAX_REST = 60.0
T = TypeVar("T")
_log = logging.getLogger(__name__)


def split_urls(base_url: str, api_key_env: str) -> tuple[str, ...]:
    """The replica URLs of a `|`-separated list, each checked (scheme, no credentials), trailing '/' cut.

    >>> split_urls("http://a:1/v1/|https://b/v1", "K")
    ('http://a:1/v1', 'https://b/v1')
    """
    urls = tuple(u.strip().rstrip("/") for u in base_url.split(SEPARATOR))
    for i, url in enumerate(urls, 1):
        where = f"replica {i} of {len(urls)} in {redact(base_url)!r}" if len(urls) > 1 else "base_url"
        if not url:
            raise ValueError(f"openai: {where} is empty; separate server URLs by a single '|'")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"openai: {where} must start with http:// or https://, got {redact(url)!r}")
        if url_userinfo(url) is not None:
            raise ValueError(
                f"openai: the server URL {redact(url)} holds credentials (user-info before '@'); they are never "
                f"sent. Remove them from the URL and put the key in ${api_key_env} (sent as a Bearer token; "
                "api_key_env=NAME picks another variable)"
            )
    if len(set(urls)) != len(urls):
        raise ValueError(f"openai: a server URL is given twice in {redact(base_url)!r}")
    return urls


@dataclass(eq=False)
class Replica:
    """One server: its HTTP client, the requests it holds now, and how long it rests after failures."""

    url: str
    connections: Connections
    in_flight: int = 0
    failures: int = 0  # consecutive
    rest_until: float = 0.0


class ReplicaSet:
    """The replicas of one client; `use` picks one and counts the request in flight (thread-safe)."""

    def __init__(self, urls: tuple[str, ...], headers: dict[str, str], timeout: float) -> None:
        tls = httpx.create_ssl_context()
        self.replicas = [Replica(url, Connections(url, headers, timeout, tls)) for url in urls]
        self._lock = threading.Lock()

    def _pick(self, avoid: set[str]) -> Replica:
        now = time.monotonic()
        untried = [r for r in self.replicas if r.url not in avoid] or self.replicas
        awake = [r for r in untried if r.rest_until <= now]
        if awake:
            return min(awake, key=lambda r: r.in_flight)
        return min(untried, key=lambda r: (r.rest_until, r.in_flight))

    def untried(self, avoid: set[str]) -> bool:
        """Whether some replica has not yet been tried for this request."""
        return any(r.url not in avoid for r in self.replicas)

    @contextlib.contextmanager
    def use(self, avoid: set[str], only: Replica | None = None) -> Iterator[Replica]:
        """The least busy awake replica not in `avoid` (or `only`), counted in flight while inside."""
        with self._lock:
            replica = only or self._pick(avoid)
            replica.in_flight += 1
        try:
            yield replica
        finally:
            with self._lock:
                replica.in_flight -= 1

    def succeeded(self, replica: Replica) -> None:
        with self._lock:
            replica.failures, replica.rest_until = 0, 0.0

    def failed(self, replica: Replica) -> None:
        with self._lock:
            replica.failures += 1
            replica.rest_until = time.monotonic() + min(MAX_REST, 2.0 ** (replica.failures - 1))

    def answers(self, ask: Callable[[Replica, bool], T], unanswered: type[Exception]) -> dict[str, T]:
        """Each replica's answer to `ask(replica, once)`, by URL; `once`: a single attempt, else the usual retries.

        With several replicas each is asked once, and those that raise `unanswered` are left out of the run
        with a warning while another answers (a run that lost a replica can be rerun with its URL still
        listed). When none answers, each is asked again with the usual retries (servers still starting)."""
        several = len(self.replicas) > 1
        answers, down = {}, []
        for replica in self.replicas:
            try:
                answers[replica.url] = ask(replica, several)
            except unanswered as exc:
                if not several:
                    raise
                down.append((replica, exc))
        if not answers:
            return {r.url: ask(r, False) for r in self.replicas}
        for replica, exc in down:
            _log.warning(
                "openai: replica %s does not answer (%s); running on the other %d", replica.url, exc, len(answers)
            )
            self.replicas.remove(replica)
            replica.connections.close()
        return answers

    def close(self) -> None:
        for replica in self.replicas:
            replica.connections.close()
