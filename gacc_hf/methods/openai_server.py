"""Compressor, reader and judge served by an OpenAI-compatible server (vLLM, TGI, SGLang, llama.cpp).

Name: `openai:<model>[@<base_url>[|<base_url>...]][?option=value&...]`, e.g.
`openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1?concurrency=16&max_tokens=64`. Without a URL,
`$OPENAI_BASE_URL` or `http://127.0.0.1:8000/v1` is used. Options are the fields of `Settings`.
Several replicas of one model: `openai:<model>@http://a:8000/v1|http://b:8000/v1` (`gacc_hf.methods.replicas`):
each request goes to the replica with the fewest in flight, a failed one is retried on another, and
replicas whose `/models` entries for the model differ are refused before any work.

`concurrency` requests are kept in flight at once over the role's whole task list, in all replicas
together (the method declares it; the executor's rolling window keeps it full, `gacc_hf.run.rolling`); each
has a timeout, and is retried with exponential backoff and jitter (honouring `Retry-After`) on 408/429/5xx
answers and on connection errors and timeouts; other 4xx answers fail at once. `timeout` bounds each
attempt whole (a server trickling bytes is cut at it), and a reply over `MAX_RESPONSE_BYTES` (decoded)
is a failure of that item (`gacc_hf.limits`). A call that still fails
raises, and the run's `on_error` policy decides; in `batch` the failure takes that item's place.

The revision binds the endpoint's model name, the server-reported identity of that model (its
`/models` entry, less volatile fields) and every setting that changes outputs, never the URLs (nor how
many replicas there are) or the key.
The API key is read from the environment variable `api_key_env` when the client starts and is only
ever sent in the `Authorization` header: it is not part of a name, revision, setting or message (every
error message goes through `gacc_hf.redaction.redact`, which also hides the key if a server echoes it),
and an answer that holds it (a server copying the header into its reply) is a failed item, never stored.
A base URL with user-info (`http://user:pass@host/v1`) is refused: the key is sent as a Bearer token
only, never replaced by Basic credentials taken from a URL, and a URL is no place for a secret.

A reply is an answer only when `choices[0].message.content` is a string; null, a number, a list or a
missing field is a failure of that item (never cached, so a healthy server replaces it on the next run).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import parse_qsl

import httpx

from gacc_hf.limits import MAX_RESPONSE_BYTES
from gacc_hf.methods.replicas import SEPARATOR, Replica, ReplicaSet, split_urls
from gacc_hf.methods.served_usage import MeteredCalls, ServedUsage
from gacc_hf.protocol import CompressorInput, JudgeInput, ReaderInput
from gacc_hf.redaction import mask_options, redact, register

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
MAX_BACKOFF = 60.0
# Fields of a `/models` entry that identify the served weights; `created` and vLLM's `permission`
# change at every server start and would needlessly invalidate the cache.
IDENTITY_FIELDS = ("id", "owned_by", "root", "parent", "max_model_len", "meta")
_RETRY_STATUS = frozenset({408, 429})


@dataclass(frozen=True)
class Settings:
    """Where and how to call the server. Only output-changing fields enter the revision."""

    model: str
    base_url: str = DEFAULT_BASE_URL  # one URL, or the replicas' URLs separated by '|'
    max_tokens: int | None = None  # None: the role's default (compressor: from the budget L)
    temperature: float = 0.0
    seed: int | None = 0
    timeout: float = 120.0  # seconds per request, its whole reply included (each retry has its own)
    retries: int = 4  # further attempts after the first
    backoff: float = 1.0  # first retry delay in seconds, doubled at each retry (with jitter)
    concurrency: int = 8  # requests in flight at once, all replicas together
    api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable holding the key, never the key

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("openai: a model name is required, e.g. openai:my-model@http://127.0.0.1:8000/v1")
        object.__setattr__(self, "base_url", SEPARATOR.join(split_urls(self.base_url, self.api_key_env)))
        if self.concurrency < 1:
            raise ValueError(f"openai: concurrency must be >= 1 (requests in flight at once), got {self.concurrency}")
        if self.retries < 0 or self.timeout <= 0 or self.backoff < 0:
            raise ValueError(f"openai: need retries >= 0, timeout > 0, backoff >= 0: {redact(str(self))}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"openai: max_tokens must be >= 1, got {self.max_tokens}")


def parse_spec(spec: str, environ: dict[str, str] | None = None) -> Settings:
    """Settings from the part of a method name after `openai:`.

    >>> s = parse_spec("smollm2@http://127.0.0.1:8080/v1?retries=2&temperature=0.5")
    >>> (s.model, s.base_url, s.retries, s.temperature)
    ('smollm2', 'http://127.0.0.1:8080/v1', 2, 0.5)
    >>> parse_spec("org/model@v2", {}).base_url  # an '@' not followed by a URL is part of the model name
    'http://127.0.0.1:8000/v1'
    """
    env = os.environ if environ is None else environ
    head, _, query = spec.partition("?")
    at = max(head.rfind("@http://"), head.rfind("@https://"))
    model, base_url = (head[:at], head[at + 1 :]) if at >= 0 else (head, env.get("OPENAI_BASE_URL", DEFAULT_BASE_URL))
    types = {f.name: f.type for f in fields(Settings)}
    options: dict[str, Any] = {}
    for name, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if name in ("model", "base_url") or name not in types:
            known = ", ".join(n for n in types if n not in ("model", "base_url"))
            shown = mask_options(spec, lambda option: option not in types)  # an unknown option may be a key
            raise ValueError(f"openai: unknown option {name!r} in {shown!r}; options: {known}")
        options[name] = _convert(name, value, str(types[name]))
    return Settings(model=model, base_url=base_url, **options)


def _convert(name: str, value: str, kind: str) -> Any:
    if value.lower() == "none" and "None" in kind:
        return None
    try:
        if kind.startswith("int"):
            return int(value)
        if kind.startswith("float"):
            return float(value)
    except ValueError as exc:
        raise ValueError(f"openai: option {name}={redact(repr(value))} is not a number") from exc
    return value


class ServerError(RuntimeError):
    """The server refused a request, or kept failing until the retries ran out (message redacted)."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class Unanswered(ServerError):
    """Every attempt of a request was refused, cut or answered 408/429/5xx: the server is down or overwhelmed."""


class Client:
    """HTTP client of one model's replicas: timeouts, retries with backoff, `concurrency` connections."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        key = os.environ.get(settings.api_key_env)
        register(key)
        self._key = key or None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        urls = tuple(settings.base_url.split(SEPARATOR))
        self.replicas = ReplicaSet(urls, headers, settings.timeout)
        self._lock = threading.Lock()
        self.stats = {"requests": 0, "retries": 0}

    def request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        only: Replica | None = None,
        retries: int | None = None,
    ) -> dict[str, Any]:
        """The JSON answer of one request (to `only`, or the least busy replica), retried on transient failures
        (`retries` times, default the settings')."""
        problem, retry_after, tried, url = "", None, set(), path
        retries = self.settings.retries if retries is None else retries
        for attempt in range(retries + 1):
            # a first failure moves on to a replica not yet tried; once every one has failed, back off
            if attempt and (only is not None or not self.replicas.untried(tried)):
                time.sleep(self._delay(attempt - 1, retry_after))
                tried = set()
            with self._lock:
                self.stats["requests"] += 1
                self.stats["retries"] += attempt > 0
            with self.replicas.use(tried, only) as replica:
                url = f"{replica.url}/{path}"
                tried.add(replica.url)
                try:
                    with replica.connections.lend() as http:
                        response = _receive(http, method, path, body, self.settings.timeout)
                except httpx.TransportError as exc:  # refused, reset, timed out
                    problem, retry_after = f"{type(exc).__name__}: {exc}", None
                    self.replicas.failed(replica)
                    continue
            if response.status in _RETRY_STATUS or response.status >= 500:
                problem = f"HTTP {response.status}: {response.text[:200]}"
                retry_after = response.headers.get("retry-after")
                self.replicas.failed(replica)
                continue
            self.replicas.succeeded(replica)
            return _json_object(response, f"{method} {url}")
        raise Unanswered(f"{method} {url} failed after {retries + 1} attempts: {problem}")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        delay = min(MAX_BACKOFF, self.settings.backoff * 2**attempt) * random.uniform(0.5, 1.0)
        if retry_after and retry_after.replace(".", "", 1).isdigit():
            delay = max(delay, min(MAX_BACKOFF, float(retry_after)))
        return delay

    def identity(self) -> dict[str, Any]:
        """The `/models` entry for the model (stable fields only), the same at every replica; else an error.
        A replica that does not answer is left out while another does (`ReplicaSet.answers`)."""
        entries = self.replicas.answers(
            lambda r, once: self._entry(r, self.request("GET", "models", only=r, retries=0 if once else None)),
            Unanswered,
        )
        first = next(iter(entries.values()))
        if any(entry != first for entry in entries.values()):
            shown = "; ".join(f"{url} serves {entry}" for url, entry in entries.items())
            raise ServerError(
                f"the replicas of {self.settings.model!r} serve different models ({shown}); "
                "list only servers of the same model, or give each model its own method name"
            )
        return first

    def _entry(self, replica: Replica, answer: dict[str, Any]) -> dict[str, Any]:
        """The model's entry in a replica's `/models` answer."""
        listed = answer.get("data") or []
        for entry in listed:
            if isinstance(entry, dict) and entry.get("id") == self.settings.model:
                return {k: entry[k] for k in IDENTITY_FIELDS if k in entry}
        served = [e.get("id") for e in listed if isinstance(e, dict)]
        raise ServerError(f"{replica.url} does not serve model {self.settings.model!r}; it serves {served}")

    def chat(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        """The text of one chat completion."""
        return self.complete(messages, max_tokens)[0]

    def complete(self, messages: list[dict[str, str]], max_tokens: int) -> tuple[str, Any]:
        """The text of one chat completion and the answer's `usage` as sent (None when absent)."""
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": s.temperature,
        }
        if s.seed is not None:
            body["seed"] = s.seed
        answer = self.request("POST", "chat/completions", body)
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ServerError(f"chat/completions answer has no choices[0].message.content: {answer!r:.200}") from exc
        if not isinstance(content, str):
            shown = "null" if content is None else type(content).__name__
            raise ServerError(f"chat/completions answer has {shown} content, not text: {answer!r:.200}")
        if self._key and self._key in content:  # a server echoing the Authorization header: never store it
            raise ServerError("chat/completions answer holds the API key the client sent; the answer is not stored")
        return content, answer.get("usage")


@dataclass(frozen=True)
class _Reply:
    """A server's whole answer, read within the deadline and the size cap."""

    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def _receive(http: httpx.Client, method: str, path: str, body: dict[str, Any] | None, timeout: float) -> _Reply:
    """One request read whole, within `timeout` seconds from its start and MAX_RESPONSE_BYTES (decoded).

    httpx's timeout bounds each read, so a server trickling a byte at a time would never time out; the
    deadline is checked after every chunk (a server gone silent is still cut by the read timeout). A reply
    over the size cap is refused (not retried: the same server would send it again).
    """
    deadline = time.monotonic() + timeout
    with http.stream(method, path, json=body) as response:
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise ServerError(
                    f"{method} {path}: the reply exceeds {MAX_RESPONSE_BYTES} bytes (the cap on what is read "
                    "from a server); lower max_tokens or fix the server"
                )
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(f"no whole reply within timeout={timeout:g} s")
            chunks.append(chunk)
        return _Reply(response.status_code, response.headers, b"".join(chunks))


def _json_object(response: _Reply, what: str) -> dict[str, Any]:
    """The JSON object of a successful answer; a client error (4xx, not retried) or a non-object raises."""
    if response.status >= 400:
        raise ServerError(f"{what}: HTTP {response.status}: {response.text[:200]}")
    try:
        answer = json.loads(response.body)
    except ValueError as exc:
        raise ServerError(f"{what}: answer is not JSON: {response.text[:200]!r}") from exc
    if not isinstance(answer, dict):
        raise ServerError(f"{what}: answer is JSON {type(answer).__name__}, not an object")
    return answer


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


class _ServedMethod(MeteredCalls):
    """One role on a server: builds the messages, calls, parses; `batch` runs `concurrency` calls at once."""

    role = ""
    prompt_version = ""
    default_max_tokens = 64

    def __init__(self, settings: Settings, client: Client | None = None) -> None:
        self.settings = settings
        self.client = client or Client(settings)
        self.server_identity = self.client.identity()
        s = settings
        self.name = f"openai:{s.model}"
        self._meter = ServedUsage(f"{self.role} {self.name!r}")
        self.revision = (
            f"openai-{self.role}-{self.prompt_version};model={s.model};server={_digest(self.server_identity)};"
            f"temperature={s.temperature};seed={s.seed};max_tokens={s.max_tokens}"
        )

    @property
    def concurrency(self) -> int:
        """Calls that may run at once (from as many threads): the executor keeps this many in flight."""
        return self.settings.concurrency

    def messages(self, item: Any) -> list[dict[str, str]]:
        raise NotImplementedError

    @staticmethod
    def parse(reply: str) -> Any:
        return reply

    def max_tokens(self, item: Any) -> int:
        return self.settings.max_tokens or self.default_max_tokens

    def __call__(self, item: Any) -> Any:
        return self.metered(item).output

    def batch(self, items: Sequence[Any]) -> list[Any]:
        """Outputs in input order; an item whose call failed gets its exception instead (see the runner)."""
        if not items:
            return []
        with ThreadPoolExecutor(max_workers=min(self.settings.concurrency, len(items))) as pool:
            futures = [pool.submit(self, item) for item in items]
            return [f.exception() or f.result() for f in futures]


class OpenAICompressor(_ServedMethod):
    """Asks the model to rewrite the source for the goal within the budget; the protocol cuts the rest."""

    role, prompt_version = "compressor", "v1"

    def messages(self, item: CompressorInput) -> list[dict[str, str]]:
        goal = item.goal or "(no goal stated: keep the most important facts)"
        return [
            {
                "role": "system",
                "content": "You compress a document for a reader who will later answer questions about it that "
                "you cannot see. Keep the facts the user's goal needs, verbatim (names, numbers, dates, codes), "
                "in as few words as possible. Reply with the compressed text only.",
            },
            {
                "role": "user",
                "content": f"Goal: {goal}\nLength: at most {item.token_budget} tokens.\n\nDocument:\n{item.context}",
            },
        ]

    def max_tokens(self, item: CompressorInput) -> int:
        # the server's tokenizer is not cl100k: leave room, the protocol keeps only the budget's prefix
        return self.settings.max_tokens or item.token_budget + item.token_budget // 4 + 16


class OpenAIReader(_ServedMethod):
    """Answers one question from one memory, briefly, or says 'unknown'."""

    role, prompt_version = "reader", "v1"

    def messages(self, item: ReaderInput) -> list[dict[str, str]]:
        return [
            {
                "role": "system",
                "content": "Answer the question from the memory alone. Reply with the answer only, as short as "
                "possible (a value, a name, a number). If the memory does not say, reply: unknown.",
            },
            {"role": "user", "content": f"Memory:\n{item.memory}\n\nQuestion: {item.question}"},
        ]

    @staticmethod
    def parse(reply: str) -> str:
        return reply.strip()


class OpenAIJudge(_ServedMethod):
    """Asks whether the answer states the same fact as a reference; a reply that is not yes/no fails."""

    role, prompt_version = "judge", "v1"
    default_max_tokens = 4

    def messages(self, item: JudgeInput) -> list[dict[str, str]]:
        return [
            {
                "role": "system",
                "content": "You grade an answer against reference answers and the source document. Reply with one "
                "word: yes if the answer states the same fact as a reference, no otherwise.",
            },
            {
                "role": "user",
                "content": f"Source:\n{item.source}\n\nQuestion: {item.question}\n"
                f"References: {' | '.join(item.references)}\nAnswer: {item.answer}\n\nIs the answer correct?",
            },
        ]

    @staticmethod
    def parse(reply: str) -> bool:
        """
        >>> OpenAIJudge.parse(" Yes.")
        True
        >>> OpenAIJudge.parse("no")
        False
        """
        word = reply.strip().split(maxsplit=1)[0].strip(".,!:;\"'").lower() if reply.strip() else ""
        if word in ("yes", "correct", "true"):
            return True
        if word in ("no", "incorrect", "false"):
            return False
        raise ValueError(f"judge reply is neither yes nor no: {reply[:80]!r}")


ROLE_CLASSES: dict[str, type[_ServedMethod]] = {
    "compressor": OpenAICompressor,
    "reader": OpenAIReader,
    "judge": OpenAIJudge,
}


def from_spec(role: str, spec: str) -> _ServedMethod:
    """The method for `role` named `openai:<spec>` (the registry's factory)."""
    return ROLE_CLASSES[role](parse_spec(spec))
