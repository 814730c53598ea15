import subprocess
import sys
import warnings

import pytest

from gacc_hf import CompressorInput, get_codec
from gacc_hf.budget import token_budget
from gacc_hf.data.jsonl import read_rows
from gacc_hf.data.schema import validate
from gacc_hf.methods import bm25
from gacc_hf.methods.bm25 import BM25Compressor, rank
from gacc_hf.methods.registry import resolve
from gacc_hf.methods.rules import GoalLinesCompressor
from gacc_hf.scoring.evidence import evidence_flags
from gacc_hf.text.sentences import split_sentences
from tests.helpers.paths import FIXTURES

DB = [
    "The primary database node ran out of disk space at 09:41.",
    "Postgres stopped accepting writes once its database volume was full.",
    "The replica database was promoted but connections kept going to the old primary database.",
    "Database write-ahead logs were pruned too late by the cleanup job.",
]
LUNCH = "The team lunch on Friday had pizza, salad and lemon cake."
CONTEXT = " ".join([DB[0], LUNCH, *DB[1:]])


def test_goal_words_rank_first_shorter_sentence_before_longer():
    # both hold "disk" once; BM25 normalises by length, so the 3-word sentence beats the 4-word one
    assert rank(["Lunch was pizza.", "The disk filled up.", "Disk alerts fired much later."], "the disk") == [1, 2, 0]


def test_without_a_goal_the_central_sentences_come_first_and_the_outlier_last():
    sentences = split_sentences(CONTEXT)
    order = rank(sentences, "")
    assert sentences[order[-1]] == LUNCH  # it shares no word with any other sentence
    assert sentences[order[0]] == DB[2]  # "database" twice and "primary": the most shared vocabulary
    assert rank(sentences, "the of and was") == order  # a goal of stopwords only ranks like no goal


def test_goal_picks_the_relevant_sentence_within_its_cost():
    one = len(get_codec().encode(LUNCH + "\n"))
    assert BM25Compressor()(CompressorInput(CONTEXT, "What food was served at the team lunch?", one)) == LUNCH


def test_output_is_source_sentences_in_source_order_within_budget():
    codec = get_codec()
    comp = BM25Compressor()
    sentences = split_sentences(CONTEXT)
    for goal in ("Why did writes fail?", ""):
        for budget in (0, 1, 5, 20, 40, 60, 1000):
            out = comp(CompressorInput(CONTEXT, goal, budget))
            kept = split_sentences(out)
            positions = [sentences.index(s) for s in kept]
            assert positions == sorted(positions)
            assert len(codec.encode(out)) <= budget
    assert comp(CompressorInput(CONTEXT, "x", 1000)).replace("\n", " ") == CONTEXT


def test_text_without_indexable_words_keeps_source_order_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bm25s divides by the mean length: an all-empty index would warn
        assert rank(["🚨.", "A b.", "✓ c."], "goal") == [0, 1, 2]
        assert rank([], "goal") == []
        assert BM25Compressor()(CompressorInput("", "goal", 10)) == ""


def test_revision_binds_the_scoring_settings(monkeypatch):
    base = BM25Compressor().revision
    assert base.startswith("bm25-v2@") and BM25Compressor().revision == base
    monkeypatch.setitem(bm25.SETTINGS, "k1", 1.2)
    assert BM25Compressor().revision != base
    assert resolve("compressor", "bm25").name == "bm25"


@pytest.mark.parametrize("ratio", [0.1, 0.2])
def test_sample_memories_fit_and_own_goal_beats_no_goal_on_goal_words(ratio):
    from gacc_hf import load_sample, token_budget
    from gacc_hf.methods.rules import content_words

    comp = BM25Compressor()
    hits = {"own": 0, "none": 0}
    for row in load_sample("judge"):
        budget = token_budget(len(get_codec().encode(row["context"])), ratio)
        goal_words = content_words(row["goal"])
        for condition, goal in (("own", row["goal"]), ("none", "")):
            out = comp(CompressorInput(row["context"], goal, budget))
            assert len(get_codec().encode(out)) <= budget
            hits[condition] += len(goal_words & content_words(out))
    assert hits["own"] > hits["none"]  # ranking by the goal keeps more of the goal's words


def test_bm25_runs_without_torch():
    code = (
        "import sys, gacc_hf\n"
        "from gacc_hf.methods.registry import resolve\n"
        "out = resolve('compressor', 'bm25')(gacc_hf.CompressorInput('A disk filled. Lunch was late.', 'disk', 5))\n"
        "assert out == 'A disk filled.', out\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'heavy import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("compressor", [BM25Compressor(), GoalLinesCompressor()], ids=["bm25", "goal-lines"])
def test_chinese_goals_keep_more_evidence_than_no_goal(compressor):
    """Fixture figures (benchmarks/chinese_matching.py): bm25 6 vs 2 of 14 questions, goal-lines 2 vs 1."""
    groups = validate(read_rows(FIXTURES / "zh_fixture.jsonl"))
    codec = get_codec()

    def kept(goal: bool) -> int:
        total = 0
        for g in groups:
            budget = token_budget(len(codec.encode(g.context)), 0.2)
            memory = compressor(CompressorInput(g.context, g.goal if goal else "", budget))
            total += sum(evidence_flags(memory, g.questions))
        return total

    assert kept(goal=True) > kept(goal=False)


def _rank_as_a_plain_loop(sentences, goal):
    """The ranking as first written: centrality summed one score at a time in Python floats."""
    import bm25s

    docs = bm25._tokenize(sentences)
    index = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    index.index(docs, show_progress=False)
    query = bm25._tokenize([goal])[0] if goal.strip() else []
    relevance = index.get_scores(query).tolist() if query else [0.0] * len(sentences)
    centrality = [0.0] * len(sentences)
    for j, other in enumerate(docs):
        if other:
            for i, score in enumerate(index.get_scores(other).tolist()):
                if i != j:
                    centrality[i] += score
    return sorted(range(len(sentences)), key=lambda i: (-relevance[i], -centrality[i], i))


ZH_TEXT = (
    "主库磁盘在九点写满。团队午餐吃了披萨。数据库停止写入。副本被提升为主库。磁盘告警来得太晚。"
    "日志清理任务运行得太晚。团队午餐吃了披萨。"
)


@pytest.mark.parametrize("text", [CONTEXT + " " + LUNCH + " " + DB[2], ZH_TEXT], ids=["en", "zh"])
@pytest.mark.parametrize("goal", ["why did the database disk fill", "磁盘为何写满", ""])
def test_ranking_is_that_of_a_plain_loop_ties_included(text, goal):
    sentences = split_sentences(text)
    assert len(sentences) >= 6 and len(set(sentences)) < len(sentences)  # repeated sentences: tied centrality
    bm25._indexed.cache_clear()
    assert rank(sentences, goal) == _rank_as_a_plain_loop(sentences, goal)


@pytest.mark.parametrize("text", [CONTEXT, ZH_TEXT], ids=["en", "zh"])
def test_centrality_is_worked_out_once_per_source_whatever_the_goal(text, monkeypatch):
    import bm25s

    queries = []
    original = bm25s.BM25.get_scores
    monkeypatch.setattr(
        bm25s.BM25, "get_scores", lambda self, q, *a, **k: queries.append(q) or original(self, q, *a, **k)
    )
    bm25._indexed.cache_clear()
    sentences = split_sentences(text)
    rank(sentences, "database disk 磁盘")
    rank(sentences, "lunch 午餐")
    rank(sentences, "")
    # one query per sentence for centrality, once; then one per goal (the empty goal needs none)
    assert len(queries) == len(sentences) + 2
    rank(split_sentences(LUNCH + " " + DB[0]), "lunch")  # another source: its own centrality
    assert len(queries) == len(sentences) + 2 + 2 + 1
