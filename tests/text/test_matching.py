"""The script-aware matcher, in English and Chinese: hand cases, the Chinese fixture, and a property test."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gacc_hf.data.schema import Question
from gacc_hf.scoring.evidence import evidence_flags
from gacc_hf.text.matching import contains, exact, f1, normalize_answer, occurs, tokens
from gacc_hf.text.sentences import split_sentences
from tests.helpers.paths import FIXTURES

FIXTURE = FIXTURES / "zh_fixture.jsonl"


def fixture_rows() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("  The  Quick-Brown fox. ", "quick brown fox"),  # English: articles out, punctuation separates
        ("A", "a"),  # the key "A" is not emptied
        ("The.", "the"),
        ("a the", "a the"),  # only articles: all kept
        ("答案：Ａ。", "答案a"),  # NFKC full-width, CJK punctuation, no article removal next to Han
        ("选项 A 和选项 B", "选项a和选项b"),
        ("使用 Dataset 加载", "使用dataset加载"),  # no space kept next to Han
        ("57.5%", "57.5"),  # a decimal point is part of its number
        ("1,000 rows", "1000 rows"),  # an ASCII thousands comma is dropped ...
        ("3，2 个", "3 2个"),  # ... a Chinese list comma separates
        ("num_proc=8", "num proc = 8"),  # a symbol is kept, as its own unit
    ],
)
def test_normalize(text, key):
    assert normalize_answer(text) == key


@pytest.mark.parametrize(
    ("answer", "references", "ok"),
    [
        ("It lasted 45 minutes in total.", ["45 minutes"], True),
        ("It lasted 145 minutes.", ["45 minutes"], False),  # English words stay bounded
        ("We call Dataset.from_generator() per file.", ["from_generator"], True),
        ("Set num_proc=8 on 16 cores.", ["num_proc"], True),
        ("Set num_procs=8.", ["num_proc"], False),
        ("It grew 57.5% this year.", ["57%"], False),
        ("Use 1.5 cm cores.", ["15 cm"], False),
        ("By 8:30 support had calls.", ["30"], False),
        ("The answer is A.", ["A"], True),  # an article-only key is looked for with articles kept
        ("The answer is B.", ["A"], False),
        ("服务从 02:10 到 03:05 不可用，持续 55 分钟。", ["55 分钟"], True),
        ("服务持续了55分钟。", ["55 分钟"], True),
        ("服务持续了 155 分钟。", ["55 分钟"], False),  # digits stay bounded inside Chinese
        ("网关 s3-gw-07 的证书过期了。", ["s3-gw-07"], True),
        ("网关 s3-gw-070 的证书过期了。", ["s3-gw-07"], False),
        ("安全团队改成了双向认证。", ["双向认证"], True),
        ("安全团队改成了单向认证。", ["双向认证"], False),
        ("正确选项是A。", ["A"], True),
        ("正确选项是B。", ["A"], False),
    ],
)
def test_contains(answer, references, ok):
    assert contains(answer, references) is ok


@pytest.mark.parametrize(
    ("answer", "reference", "ok"),
    [
        ("双向认证。", "双向认证", True),
        ("「双向认证」", "双向认证", True),
        ("55 分钟。", "55分钟", True),
        ("the 45 minutes.", "45 minutes", True),
        ("A", "A", True),
        ("The", "A", False),
        ("单向认证。", "双向认证", False),
        ("双向认证。", "双向", False),
    ],
)
def test_exact(answer, reference, ok):
    assert exact(answer, [reference]) is ok


def test_f1_by_hand():
    assert f1("双向认证。", "双向认证") == 1.0
    assert f1("双向认证", "单向认证") == 0.75  # 3 of 4 characters on each side
    assert f1("服务中断 55 分钟", "55 分钟") == pytest.approx(2 * (3 / 7) * 1 / (3 / 7 + 1))  # 7 units, 3 shared
    assert f1("primary database in us-east", "primary database") == pytest.approx(2 * 0.4 / 1.4)  # 5 words, 2 shared
    assert tokens("用 from_generator() 读取") == ["用", "from", "generator", "读", "取"]


def test_occurs_needs_a_boundary_only_between_spaced_words():
    assert occurs("数据", "加载数据集") and occurs("dataset", "加载dataset时")
    assert not occurs("data", "加载dataset时") and not occurs("", "anything")


def test_fixture_right_sentence_answers_are_right_and_other_references_wrong():
    checked = 0
    for row in fixture_rows():
        sentences = split_sentences(row["context"])
        gold = {g["question_id"]: g["references"] for g in row["gold"]}
        for qid, refs in gold.items():
            sentence = next(s for s in sentences if contains(s, refs))
            assert contains(sentence, refs) and exact(refs[0] + "。", refs) and f1(refs[0] + "。", refs[0]) == 1.0
            for other_id, other in gold.items():
                if other_id != qid:
                    wrong = f"答案是{other[0]}。"
                    assert not contains(wrong, refs) and not exact(other[0] + "。", refs), (qid, other)
            checked += 1
    assert checked == 14  # every question of the fixture, counted by hand


# --- property: a reference copied verbatim from a generated source is found there and in a quoting answer

HAN = st.text(alphabet="数据集加载日志证书网关服务续期任务告警分钟天团队配置", min_size=1, max_size=6)
WORD = st.from_regex(r"[a-z][a-z0-9]{1,7}", fullmatch=True)
NUMBER = st.from_regex(r"[1-9][0-9]{0,3}(\.[0-9]{1,2})?", fullmatch=True)
IDENT = st.builds(lambda a, b: f"{a}_{b}", WORD, WORD)
PIECE = st.one_of(HAN, WORD, NUMBER, IDENT, WORD.map(str.title))
GLUE = st.sampled_from([" ", "，", "。", "、", " (", ") ", ". ", "=", "：", "“", "”"])


@st.composite
def source_and_reference(draw: st.DrawFn) -> tuple[str, str]:
    """A mixed English / Chinese text of pieces joined by punctuation, and one verbatim run of its pieces."""
    pieces = draw(st.lists(PIECE, min_size=1, max_size=12))
    glues = draw(st.lists(GLUE, min_size=len(pieces) - 1, max_size=len(pieces) - 1))
    start = draw(st.integers(0, len(pieces) - 1))
    stop = draw(st.integers(start + 1, min(len(pieces), start + 3)))
    text = pieces[0] + "".join(g + p for g, p in zip(glues, pieces[1:], strict=True))
    reference = pieces[start] + "".join(
        g + p for g, p in zip(glues[start:stop], pieces[start + 1 : stop], strict=False)
    )
    # A colon between two digits joins them into one number (a time such as 8:30), so a run cut there is not verbatim
    # a whole token; those draws are skipped.
    before = glues[start - 1] if start else ""
    after = glues[stop - 1] if stop < len(pieces) else ""
    assume(not (before == "：" and pieces[start - 1][-1:].isdigit() and reference[:1].isdigit()))
    assume(not (after == "：" and reference[-1:].isdigit() and pieces[stop][:1].isdigit()))
    wrapper = draw(st.sampled_from([("Dataset.", "()"), ("", "=8"), ("调用", "时"), ("", "")]))
    return text.join(wrapper) if start == 0 and stop == 1 else text, reference


@settings(max_examples=300, deadline=None)
@given(source_and_reference())
def test_a_verbatim_reference_is_found_in_the_source_and_in_a_quoting_answer(pair):
    source, reference = pair
    assert evidence_flags(source, [Question("q", "?", (reference,))]) == [True]
    assert contains(f"答案是“{reference}”。", [reference]) and contains(f"It is {reference}.", [reference])


# --- what carries meaning is kept: signs, operators, `#` / `+` after a letter, symbols


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("-40 °C", "-40 ° c"),  # a sign is part of its number, a symbol its own unit
        ("\u221240\u2103", "-40 ° c"),  # the minus sign and `℃` (NFKC: `°C`) read as `-` and `° c`
        ("温度为-40°C", "温度为-40 ° c"),  # a sign after Han is still a sign
        ("s3-gw-07 on 2024-01-05", "s3 gw 07 on 2024 01 05"),  # a hyphen after a letter or digit separates
        ("x = -1", "x = -1"),
        ("C# and C++", "c# and c++"),  # `#` and `+` after a letter belong to its word
        ("用C#写", "用c#写"),
        ("i-- or i++", "i-- or i++"),
        ("x==y, x != y", "x == y x != y"),  # an operator run is one unit, spaced or not
        ("★★ / ★★★★", "★★ ★★★★"),
        ("**45 minutes**", "45 minutes"),  # markdown emphasis is punctuation
        ("a.b()", "a b"),  # not an article: it stands before `.`, not before a word
        ("The answer is A.", "answer is a"),
        ("。", "。"),  # punctuation only: compared as punctuation
        ("……", "......"),  # NFKC
        ("🎉", "🎉"),
    ],
)
def test_normalize_keeps_what_carries_meaning(text, key):
    assert normalize_answer(text) == key


UNEQUAL = [
    ("1", "-1"),
    ("40 °C", "-40 °C"),
    ("气温 40 度", "气温 -40 度"),
    ("C#", "C++"),
    ("We write C#.", "We write C++."),
    ("用 C# 写", "用 C++ 写"),
    ("C", "C#"),
    ("i--", "i++"),
    ("x == y", "x != y"),
    ("条件是 x == y", "条件是 x != y"),
    ("★★", "★★★★"),
    ("评分★★", "评分★★★★"),
    ("a.b()", "b()"),
    ("Plan A", "Plan B"),
]


@pytest.mark.parametrize(("one", "other"), UNEQUAL)
def test_texts_that_differ_in_a_sign_operator_or_symbol_are_unequal(one, other):
    assert normalize_answer(one) != normalize_answer(other)
    assert not exact(one, [other]) and not exact(other, [one])
    assert f1(one, other) < 1.0


@pytest.mark.parametrize(
    ("text", "reference"),
    [
        ("It was -40 °C at night.", "40 °C"),
        ("The balance is -1.", "1"),
        ("夜里气温-40°C。", "40°C"),
        ("The service is written in C#.", "C++"),
        ("The service is written in C#.", "C"),
        ("服务用C#写成。", "C++"),
        ("Decrement with i--.", "i++"),
        ("The guard is x != y.", "x == y"),
        ("评分：★★★★", "★★"),
        ("Plan B is the fallback.", "Plan A"),
    ],
)
def test_a_reference_is_not_found_in_a_text_that_differs_in_a_sign_operator_or_symbol(text, reference):
    assert not contains(text, [reference])


@pytest.mark.parametrize(
    ("text", "reference"),
    [
        ("It was -40 °C at night.", "-40 °C"),
        ("It was \u221240\u2103 at night.", "-40 °C"),
        ("夜里气温-40°C。", "-40 °C"),
        ("The service is written in C#.", "C#"),
        ("The guard is x!=y.", "x != y"),
        ("评分：★★★★", "★★★★"),
        ("Plan A is the fallback.", "Plan A"),  # articles kept in both forms
        ("The mood was 🎉 all day.", "🎉"),
        ("答案是。", "。"),
        ("The price is $25,000.", "25,000"),  # a symbol is its own unit: the number stands bounded
        ("ticket #1234 was closed", "1234"),
    ],
)
def test_a_reference_with_signs_operators_or_symbols_is_found_where_it_stands(text, reference):
    assert contains(text, [reference])


@pytest.mark.parametrize("reference", ["🎉", "。", "★★", "...", "→"])
def test_an_empty_answer_is_never_right(reference):
    assert not exact("", [reference]) and not contains("", [reference]) and f1("", reference) == 0.0
    assert exact(reference, [reference]) and contains(reference, [reference]) and f1(reference, reference) == 1.0


def test_an_empty_key_equals_nothing():
    assert not exact("", [""]) and not exact("\u200b", ["\u200b"]) and f1("", "") == 0.0
    assert not contains("anything", [""]) and not contains("", [""])


# --- invisible format characters never hide a match: removed in references and texts alike

FORMAT = ["\u200b", "\u200d", "\u00ad", "\u202e", "\u2066", "\u0640", "\ufeff"]


@pytest.mark.parametrize("mark", FORMAT)
def test_format_characters_are_removed_before_matching(mark):
    assert contains(f"It was stored as a data{mark}set.", ["dataset"])
    assert contains("It was stored as a dataset.", [f"data{mark}set"])
    assert contains(f"加载数{mark}据集时", ["数据集"]) and contains("加载数据集时", [f"数{mark}据集"])
    assert exact(f"{mark}45 minutes{mark}", ["45 minutes"]) and exact("主节点", [f"主{mark}节点"])
    assert not exact(mark, [mark]) and normalize_answer(mark * 3) == ""


# --- property: generated pairs that differ only in a sign, an operator or a symbol run are never one text

EN_WORDS = st.sampled_from(["value", "the guard", "rated", "written in", "at night"])
ZH_WORDS = st.sampled_from(["气温", "条件是", "评分", "服务用", "夜里"])
SIGNS = st.sampled_from(["", "-", "+", "±"])
OPERATORS = st.sampled_from(["=", "==", "!=", "<", "<=", ">", ">=", "+=", "-=", "->", "=>", "&&", "||", "++", "--"])
SUFFIXES = st.sampled_from(["", "#", "+", "++", "--"])
SYMBOLS = st.sampled_from(["★", "★★", "★★★", "★★★★", "☆", "✓", "→", "€", "$", "°", "🎉"])


@st.composite
def differing_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Two texts, English or Chinese around, that differ only in one sign, operator, suffix or symbol run."""
    kind = draw(st.sampled_from(["sign", "operator", "suffix", "symbol"]))
    options = {"sign": SIGNS, "operator": OPERATORS, "suffix": SUFFIXES, "symbol": SYMBOLS}[kind]
    one, other = draw(options), draw(options)
    assume(one != other)
    number = draw(st.from_regex(r"[1-9][0-9]{0,2}(\.[0-9])?", fullmatch=True))
    unit = draw(st.sampled_from(["", " °C", "%", " 分钟", " minutes"]))
    ident = draw(st.sampled_from(["x", "i", "count", "C", "F"]))
    fill = {
        "sign": lambda m: f"{m}{number}{unit}",
        "operator": lambda m: f"{ident}{m}y" if draw(st.booleans()) else f"{ident} {m} y",
        "suffix": lambda m: f"{ident}{m}",
        "symbol": lambda m: f"{number}{m}" if draw(st.booleans()) else m,
    }[kind]
    if draw(st.booleans()):
        before, after = draw(EN_WORDS), draw(EN_WORDS)
        return f"{before} {fill(one)} {after}.", f"{before} {fill(other)} {after}."
    before, after = draw(ZH_WORDS), draw(ZH_WORDS)
    return f"{before}{fill(one)}{after}。", f"{before}{fill(other)}{after}。"


@settings(max_examples=400, deadline=None)
@given(differing_pairs())
def test_pairs_that_differ_only_in_a_sign_operator_or_symbol_run_are_unequal(pair):
    one, other = pair
    assert normalize_answer(one) != normalize_answer(other)
    assert not exact(one, [other]) and not exact(other, [one])
    assert not contains(one, [other]) and not contains(other, [one])
