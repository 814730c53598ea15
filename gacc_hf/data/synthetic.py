"""A deterministic generator of GACC groups with exact gold, at any size.

Each context is a multi-line record document of one of several kinds (incident report, service
configuration, product sheet, supplier contract), with `key: value` lines between short prose notes.
Each goal covers a subset of the fields; each question asks for one field, whose value is the exact
gold. The same seed gives identical rows; 100,000 questions take a couple of seconds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import datasets

from gacc_hf.data.schema import JUDGE_FEATURES

Pick = Callable[[random.Random], str]


def _choice(options: list[str]) -> Pick:
    return lambda rng: rng.choice(options)


def _number(lo: int, hi: int, unit: str = "") -> Pick:
    return lambda rng: f"{rng.randint(lo, hi)}{unit}"


def _code(prefix: str, digits: int = 4) -> Pick:
    return lambda rng: f"{prefix}-{rng.randint(10 ** (digits - 1), 10**digits - 1)}"


def _time(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} UTC"


def _date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


_PEOPLE = [
    "Amara Osei",
    "Lukas Brandt",
    "Mei Tanaka",
    "Diego Ferreira",
    "Priya Raman",
    "Tomasz Nowak",
    "Hannah Kim",
    "Olu Adeyemi",
    "Sofia Rossi",
    "Erik Lindqvist",
    "Nadia Haddad",
    "Jonas Weber",
]
_TEAMS = ["payments", "search", "identity", "storage", "checkout", "billing", "notifications", "ledger"]
_REGIONS = ["eu-west-1", "us-east-2", "ap-southeast-1", "eu-central-1", "us-west-2", "sa-east-1"]


@dataclass(frozen=True)
class Kind:
    """One kind of record document: its fields (key, value generator) and prose templates."""

    name: str
    title: Callable[[random.Random], str]
    fields: tuple[tuple[str, Pick], ...]
    notes: tuple[str, ...]
    purposes: tuple[str, ...]


KINDS: tuple[Kind, ...] = (
    Kind(
        "incident-report",
        lambda rng: f"Incident report {_code('INC')(rng)}",
        (
            ("Severity", _choice(["SEV-1", "SEV-2", "SEV-3", "SEV-4"])),
            ("Start time", _time),
            ("Detection time", _time),
            ("Resolution time", _time),
            ("Affected service", lambda rng: f"{rng.choice(_TEAMS)}-api"),
            ("Affected region", _choice(_REGIONS)),
            ("Incident commander", _choice(_PEOPLE)),
            (
                "Root cause",
                _choice(
                    [
                        "expired TLS certificate",
                        "connection pool exhaustion",
                        "bad config push",
                        "disk full on primary",
                        "DNS misrouting",
                        "memory leak in worker",
                    ]
                ),
            ),
            ("Customers affected", _number(10, 90000)),
            ("Error rate peak", _number(2, 99, "%")),
            (
                "Mitigation",
                _choice(
                    [
                        "rolled back release",
                        "failed over to replica",
                        "rotated certificate",
                        "scaled out workers",
                        "purged CDN cache",
                        "disabled feature flag",
                    ]
                ),
            ),
            ("Follow-up ticket", _code("OPS")),
            ("Postmortem owner", _choice(_PEOPLE)),
            ("Status page id", _code("SP", 5)),
        ),
        (
            "The on-call engineer was paged by the alerting pipeline.",
            "Customer support opened a bridge call.",
            "A timeline was reconstructed from logs after the event.",
            "No data loss was reported.",
        ),
        ("brief the on-call team on", "write the customer update about", "prepare the postmortem review of"),
    ),
    Kind(
        "service-config",
        lambda rng: f"Service configuration for {rng.choice(_TEAMS)}-{rng.choice(['gateway', 'worker', 'api'])}",
        (
            ("Replica count", _number(2, 64)),
            ("Memory limit", _number(256, 16384, " MiB")),
            ("CPU limit", _number(1, 32, " cores")),
            ("Deploy region", _choice(_REGIONS)),
            ("Rollback window", _number(5, 120, " minutes")),
            ("Owner team", _choice(_TEAMS)),
            ("Health check path", _choice(["/healthz", "/ready", "/status", "/livez"])),
            ("Timeout", _number(100, 30000, " ms")),
            ("Max connections", _number(50, 5000)),
            ("Log retention", _number(3, 400, " days")),
            ("Error budget", _choice(["0.1%", "0.5%", "1%", "0.05%"])),
            ("Base image", lambda rng: f"debian-{rng.choice(['11', '12', '13'])}-slim"),
            ("Canary share", _number(1, 25, "%")),
            ("Pager rotation", _code("ROT", 3)),
        ),
        (
            "Changes to this file go through the platform review queue.",
            "Values below override the defaults.",
            "The service is deployed by the continuous delivery pipeline.",
            "Secrets are mounted separately.",
        ),
        ("review the capacity settings of", "hand over the operations of", "audit the deployment of"),
    ),
    Kind(
        "product-sheet",
        lambda rng: (
            f"Product sheet: {rng.choice(['Aurora', 'Nimbus', 'Vertex', 'Halcyon', 'Quill'])} "
            f"{rng.choice(['X', 'Pro', 'Lite', 'Max'])}{rng.randint(1, 9)}"
        ),
        (
            ("Price", lambda rng: f"${rng.randint(19, 2999)}.{rng.choice(['00', '49', '99'])}"),
            ("Battery life", _number(4, 72, " hours")),
            ("Weight", _number(90, 4000, " g")),
            ("Warranty", _number(1, 5, " years")),
            ("Release date", _date),
            (
                "Colour options",
                _choice(["graphite and silver", "sage, sand and ink", "black only", "white and coral"]),
            ),
            ("Charging port", _choice(["USB-C", "Lightning", "magnetic pad", "barrel jack"])),
            ("Screen size", lambda rng: f"{rng.randint(5, 17)}.{rng.randint(0, 9)} inches"),
            ("Storage", _choice(["64 GB", "128 GB", "256 GB", "512 GB", "1 TB"])),
            ("Manufacturer", _choice(["Corvid Labs", "Tessellate Inc", "Brightwave", "Kestrel Devices"])),
            ("Water resistance", _choice(["IP54", "IP67", "IP68", "none"])),
            ("SKU", _code("SKU", 6)),
            ("Support email", lambda rng: f"help{rng.randint(1, 99)}@example.com"),
        ),
        (
            "Specifications may change without notice.",
            "Figures were measured in the lab.",
            "Accessories are sold separately.",
            "Availability varies by market.",
        ),
        ("compare the price and hardware of", "answer customer questions about", "write the launch note for"),
    ),
    Kind(
        "supplier-contract",
        lambda rng: f"Supplier contract {_code('CT', 5)(rng)}",
        (
            ("Supplier", _choice(["Northwind Parts", "Globex Metals", "Initech Freight", "Umbra Textiles"])),
            ("Effective date", _date),
            ("Term", _number(6, 60, " months")),
            ("Notice period", _number(15, 180, " days")),
            ("Payment terms", _choice(["net 30", "net 45", "net 60", "2/10 net 30"])),
            ("Annual value", lambda rng: f"EUR {rng.randint(10, 900)},000"),
            ("Governing law", _choice(["Ireland", "Germany", "Netherlands", "England and Wales"])),
            ("Liability cap", lambda rng: f"EUR {rng.randint(1, 20)} million"),
            ("Delivery lead time", _number(2, 20, " weeks")),
            ("Penalty rate", lambda rng: f"{rng.randint(1, 9)}% per week"),
            ("Contract owner", _choice(_PEOPLE)),
            ("Renewal", _choice(["automatic", "manual", "by written notice only"])),
            ("Audit rights", _choice(["annual", "quarterly", "on request", "none"])),
        ),
        (
            "Both parties signed this agreement electronically.",
            "Annexes form part of the contract.",
            "Amendments require written consent.",
            "Prices are exclusive of VAT.",
        ),
        ("check the commercial terms of", "summarise the legal risks of", "plan the renewal of"),
    ),
)


def _document(kind: Kind, rng: random.Random) -> tuple[str, dict[str, str]]:
    values = {key: pick(rng) for key, pick in kind.fields}
    lines = [kind.title(rng), rng.choice(kind.notes)]
    for k, key in enumerate(rng.sample(list(values), len(values))):
        lines.append(f"{key}: {values[key]}")
        if k % 4 == 3:
            lines.append(rng.choice(kind.notes))
    return "\n".join(lines), values


def _goal_text(kind: Kind, title: str, keys: list[str], rng: random.Random) -> str:
    listed = ", ".join(k.lower() for k in keys[:-1]) + (" and " if len(keys) > 1 else "") + keys[-1].lower()
    return f"I need to {rng.choice(kind.purposes)} {title}: mainly the {listed}."


def synthetic_rows(
    seed: int = 0, contexts: int = 10, goals_per_context: int = 3, questions_per_goal: int = 4
) -> list[dict[str, Any]]:
    """Rows in the judge schema (see `synthetic`)."""
    for name, value in (
        ("contexts", contexts),
        ("goals_per_context", goals_per_context),
        ("questions_per_goal", questions_per_goal),
    ):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    rng = random.Random(seed)
    rows = []
    for c in range(contexts):
        kind = KINDS[rng.randrange(len(KINDS))]
        context, values = _document(kind, rng)
        title = context.splitlines()[0]
        context_id = f"syn-{seed}-{c:06d}"
        keys = rng.sample(list(values), len(values))
        for g in range(goals_per_context):
            start = g * questions_per_goal
            chosen = [keys[(start + q) % len(keys)] for q in range(questions_per_goal)]
            goal_id = f"{context_id}/g{g}"
            qs = [
                {"question_id": f"{goal_id}/q{q}", "question": f"What is the {key.lower()}?"}
                for q, key in enumerate(chosen)
            ]
            rows.append(
                {
                    "context_id": context_id,
                    "source": kind.name,
                    "context": context,
                    "goal_id": goal_id,
                    "goal": _goal_text(kind, title, list(dict.fromkeys(chosen)), rng),
                    "questions": qs,
                    "gold": [
                        {"question_id": q["question_id"], "references": [values[key]]}
                        for q, key in zip(qs, chosen, strict=True)
                    ],
                }
            )
    return rows


def synthetic(
    seed: int = 0, contexts: int = 10, goals_per_context: int = 3, questions_per_goal: int = 4
) -> datasets.Dataset:
    """A judge-config `datasets.Dataset` of record documents with exact gold, deterministic in `seed`."""
    return datasets.Dataset.from_list(
        synthetic_rows(seed, contexts, goals_per_context, questions_per_goal), features=JUDGE_FEATURES
    )
