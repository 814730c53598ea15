"""A deterministic generator of GACC groups with exact gold, at any size and length, in English and Chinese.

Each context is a multi-line record document of one of several kinds (incident report, service
configuration, product sheet, supplier contract; in Chinese an incident report and a supplier contract),
with `key: value` lines (`键：值` in Chinese) between short prose notes. Each goal covers a subset of the
fields; each question asks for one field, whose value is the exact gold. A target length in cl100k tokens
pads a document with paragraphs of filler prose between its lines (no digits, no colons, no field value:
the gold stays exact), so sources can be as long as long-context benchmarks' without losing exactness.
The same seed gives identical rows; 100,000 questions take a couple of seconds. Chinese contexts and
padding draw from their own random streams, so rows without them are the same as before they existed.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
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
    """One kind of record document: its fields (key, value generator), prose templates and language."""

    name: str
    title: Callable[[random.Random], str]
    fields: tuple[tuple[str, Pick], ...]
    notes: tuple[str, ...]
    purposes: tuple[str, ...]
    language: str = "en"


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

_ZH_PEOPLE = ["张伟", "李娜", "王芳", "刘洋", "陈静", "赵磊", "孙悦", "周杰", "吴敏", "郑浩"]
_ZH_TEAMS = ["支付", "搜索", "身份认证", "存储", "结算", "账务", "消息推送"]

ZH_KINDS: tuple[Kind, ...] = (
    Kind(
        "incident-report-zh",
        lambda rng: f"事故报告 {_code('INC')(rng)}",
        (
            ("严重级别", _choice(["一级", "二级", "三级", "四级"])),
            ("开始时间", _time),
            ("恢复时间", _time),
            ("受影响服务", lambda rng: f"{rng.choice(_ZH_TEAMS)}服务"),
            ("受影响地区", _choice(["华东", "华北", "华南", "西南", "东北"])),
            ("事故负责人", _choice(_ZH_PEOPLE)),
            ("根本原因", _choice(["证书过期", "连接池耗尽", "错误的配置推送", "主库磁盘写满", "域名解析错误"])),
            ("受影响用户数", _number(10, 90000, "人")),
            ("错误率峰值", _number(2, 99, "%")),
            ("缓解措施", _choice(["回滚版本", "切换到备库", "更换证书", "扩容工作节点", "关闭功能开关"])),
            ("后续工单", _code("OPS")),
            ("复盘负责人", _choice(_ZH_PEOPLE)),
        ),
        ("值班工程师收到了告警通知。", "客服团队开通了电话会议。", "事后根据日志整理了时间线。", "没有发生数据丢失。"),
        ("向值班团队通报", "撰写面向客户的说明，关于", "准备复盘会议，关于"),
        "zh",
    ),
    Kind(
        "supplier-contract-zh",
        lambda rng: f"供应商合同 {_code('CT', 5)(rng)}",
        (
            ("供应商", _choice(["北方零件公司", "远大金属", "顺达物流", "华美纺织"])),
            ("生效日期", _date),
            ("合同期限", _number(6, 60, "个月")),
            ("通知期", _number(15, 180, "天")),
            ("付款条件", _choice(["月结三十天", "月结四十五天", "月结六十天", "预付百分之三十"])),
            ("年度金额", lambda rng: f"{rng.randint(10, 900)}万元"),
            ("适用法律", _choice(["中国大陆法律", "香港法律", "新加坡法律"])),
            ("责任上限", lambda rng: f"{rng.randint(1, 20)}百万元"),
            ("交货周期", _number(2, 20, "周")),
            ("合同负责人", _choice(_ZH_PEOPLE)),
            ("续约方式", _choice(["自动续约", "人工续约", "书面通知后续约"])),
            ("审计权", _choice(["每年一次", "每季度一次", "按需", "无"])),
        ),
        ("双方以电子方式签署了本协议。", "附件构成合同的一部分。", "修改须经书面同意。", "价格不含增值税。"),
        ("核对商务条款，关于", "总结法律风险，关于", "规划续约，关于"),
        "zh",
    ),
)

# Filler prose for padding: no digits, no colons and no field value, so no line can be read as a field and
# no gold reference is found outside its own line.
_FILLER = {
    "en": (
        "The team reviewed the surrounding context during the weekly meeting and agreed to keep the notes brief.",
        "Several readers asked for background material, which was collected from older documents and summaries.",
        "Earlier drafts of this record went through two rounds of editing before they were shared more widely.",
        "The wording of this section follows the house style guide that the documentation group maintains.",
        "Questions about the process should go to the coordinators named elsewhere in this document.",
        "Some paragraphs repeat information from linked pages so that this record can be read on its own.",
        "A reviewer pointed out that the terminology had drifted over time and proposed a shorter glossary.",
        "The history of this topic is long, and only the parts that still matter today are retained here.",
        "Nothing in this paragraph changes the values recorded in the structured lines of the document.",
        "Feedback from the last review cycle was folded into the text without changing its overall meaning.",
        "Readers who need the complete archive can request access through the usual internal channels.",
        "This background section is informational and was written to help newcomers find their way around.",
    ),
    "zh": (
        "团队在每周例会上回顾了相关背景，并同意保持记录简洁。",
        "有几位读者希望了解背景资料，这些资料整理自以前的文件和摘要。",
        "本记录的早期草稿在更广泛分享之前经过了两轮修改。",
        "本节的措辞遵循文档小组维护的写作规范。",
        "关于流程的问题请联系本文件其他部分列出的协调人。",
        "部分段落重复了相关页面上的信息，以便本记录可以单独阅读。",
        "一位审阅者指出术语随着时间发生了变化，并建议编写更短的词汇表。",
        "这个话题的历史很长，这里只保留了今天仍然重要的部分。",
        "本段内容不会改变文件中结构化条目所记录的任何取值。",
        "上一轮审阅的意见已经并入正文，整体含义没有改变。",
        "需要完整档案的读者可以通过常规的内部渠道申请访问。",
        "这一背景部分仅供参考，旨在帮助新同事熟悉情况。",
    ),
}
_SEPARATOR = {"en": ": ", "zh": "："}


def _document(kind: Kind, rng: random.Random) -> tuple[str, dict[str, str]]:
    values = {key: pick(rng) for key, pick in kind.fields}
    separator = _SEPARATOR[kind.language]
    lines = [kind.title(rng), rng.choice(kind.notes)]
    for k, key in enumerate(rng.sample(list(values), len(values))):
        lines.append(f"{key}{separator}{values[key]}")
        if k % 4 == 3:
            lines.append(rng.choice(kind.notes))
    return "\n".join(lines), values


@functools.lru_cache(maxsize=2)
def _filler_costs(language: str) -> tuple[int, ...]:
    """The cl100k token count of each filler sentence of `language`, with the space that joins English ones."""
    from gacc_hf.tokenizer import get_codec

    codec = get_codec()
    joiner = " " if language == "en" else ""
    return tuple(len(codec.encode(sentence + joiner)) for sentence in _FILLER[language])


def _pad(document: str, language: str, tokens: int, rng: random.Random) -> str:
    """`document` with filler paragraphs between its lines until it holds `tokens` cl100k tokens, within 1%;
    a document already that long stays as it is. Joined sentences can count a few more tokens than apart, so
    each pass adds nine tenths of what is missing and measures again: it approaches the length from below."""
    from gacc_hf.tokenizer import get_codec

    codec = get_codec()
    while (missing := tokens - len(codec.encode(document))) > tokens // 100:
        lines = document.split("\n")
        for paragraph in _paragraphs(language, missing * 9 // 10 + 1, rng):
            lines.insert(rng.randint(1, len(lines)), paragraph)  # never before the title
        document = "\n".join(lines)
    return document


def _paragraphs(language: str, tokens: int, rng: random.Random) -> list[str]:
    """Paragraphs of filler sentences of 60-400 tokens each, about `tokens` in all."""
    costs, joiner = _filler_costs(language), " " if language == "en" else ""
    paragraphs: list[str] = []
    while tokens > 0:
        size = min(tokens, rng.randint(60, 400))
        tokens -= size
        sentences: list[str] = []
        while size > 0:
            k = rng.randrange(len(costs))
            sentences.append(_FILLER[language][k])
            size -= costs[k]
        paragraphs.append(joiner.join(sentences))
    return paragraphs


def _goal_text(kind: Kind, title: str, keys: list[str], rng: random.Random) -> str:
    if kind.language == "zh":
        listed = "、".join(keys[:-1]) + ("和" if len(keys) > 1 else "") + keys[-1]
        return f"我需要{rng.choice(kind.purposes)}{title}：主要是{listed}。"
    listed = ", ".join(k.lower() for k in keys[:-1]) + (" and " if len(keys) > 1 else "") + keys[-1].lower()
    return f"I need to {rng.choice(kind.purposes)} {title}: mainly the {listed}."


def _question_text(kind: Kind, key: str) -> str:
    return f"{key}是什么？" if kind.language == "zh" else f"What is the {key.lower()}?"


def _per_item(name: str, value: int | Sequence[int], count: int, of: str) -> list[int]:
    """`value` for each of `count` items (an int for all, or a sequence of one per item), each >= 1."""
    values = [value] * count if isinstance(value, int) else list(value)
    if len(values) != count:
        raise ValueError(f"{name} must give one value per {of} ({count}), got {len(values)}")
    for v in values:
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    return values


def synthetic_rows(
    seed: int = 0,
    contexts: int = 10,
    goals_per_context: int | Sequence[int] = 3,
    questions_per_goal: int | Sequence[int] = 4,
    *,
    chinese: int = 0,
    tokens: int | Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Rows in the judge schema (see `synthetic`).

    `goals_per_context` and `questions_per_goal` take one count for all, or one per context and one per goal
    (in row order); `chinese` contexts, drawn at random, are Chinese documents; `tokens` pads each context (or
    context by context) to about that many cl100k tokens."""
    if contexts < 1:
        raise ValueError(f"contexts must be >= 1, got {contexts}")
    if not 0 <= chinese <= contexts:
        raise ValueError(f"chinese must be between 0 and contexts ({contexts}), got {chinese}")
    goal_counts = _per_item("goals_per_context", goals_per_context, contexts, "context")
    question_counts = iter(_per_item("questions_per_goal", questions_per_goal, sum(goal_counts), "goal"))
    lengths = None if tokens is None else _per_item("tokens", tokens, contexts, "context")
    in_chinese = set(random.Random(f"zh-{seed}").sample(range(contexts), chinese))
    rng = random.Random(seed)
    rows = []
    for c in range(contexts):
        kinds = ZH_KINDS if c in in_chinese else KINDS
        kind = kinds[rng.randrange(len(kinds))]
        context, values = _document(kind, rng)
        title = context.splitlines()[0]
        if lengths is not None:
            context = _pad(context, kind.language, lengths[c], random.Random(f"pad-{seed}-{c}"))
        context_id = f"syn-{seed}-{c:06d}"
        keys = rng.sample(list(values), len(values))
        start = 0
        for g in range(goal_counts[c]):
            n_questions = next(question_counts)
            chosen = [keys[(start + q) % len(keys)] for q in range(n_questions)]
            start += n_questions
            goal_id = f"{context_id}/g{g}"
            qs = [
                {"question_id": f"{goal_id}/q{q}", "question": _question_text(kind, key)}
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
    seed: int = 0,
    contexts: int = 10,
    goals_per_context: int | Sequence[int] = 3,
    questions_per_goal: int | Sequence[int] = 4,
    *,
    chinese: int = 0,
    tokens: int | Sequence[int] | None = None,
) -> datasets.Dataset:
    """A judge-config `datasets.Dataset` of record documents with exact gold, deterministic in `seed`."""
    rows = synthetic_rows(seed, contexts, goals_per_context, questions_per_goal, chinese=chinese, tokens=tokens)
    return datasets.Dataset.from_list(rows, features=JUDGE_FEATURES)
