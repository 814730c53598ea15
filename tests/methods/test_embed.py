import pytest

from gacc_hf import CompressorInput, get_codec
from gacc_hf.methods.embed import EmbedCompressor, pack, split_sentences
from gacc_hf.methods.registry import resolve

DB = [
    "The primary database node ran out of disk space at 09:41.",
    "Postgres stopped accepting writes once its data volume was full.",
    "The replica database was promoted but connections kept going to the old primary.",
    "Database write-ahead logs were pruned too late by the cleanup job.",
]
LUNCH = "The team lunch on Friday had pizza, salad and lemon cake."
CONTEXT = " ".join([DB[0], LUNCH, *DB[1:]])


@pytest.fixture(scope="module")
def embed():
    return EmbedCompressor()


def test_split_sentences_keeps_lines_and_cuts_at_sentence_ends():
    text = "Title\n\nFirst one. Second at 9.5 km! Third? yes.\n- item: v1.2 is out"
    assert split_sentences(text) == ["Title", "First one.", "Second at 9.5 km!", "Third? yes.", "- item: v1.2 is out"]


def test_pack_fits_the_budget_keeps_source_order_and_skips_what_does_not_fit():
    codec = get_codec()
    sentences = ["one two three four five six seven eight.", "short.", "tiny."]
    cost = [len(codec.encode(s + "\n")) for s in sentences]
    # the long sentence ranks first but does not fit; the two short ones do, and come out in source order
    budget = cost[1] + cost[2]
    assert budget < cost[0]
    assert pack(sentences, [0.9, 0.1, 0.5], budget, codec) == "short.\ntiny."
    assert pack(sentences, [0.9, 0.1, 0.5], 0, codec) == ""
    for budget in range(0, 30):
        assert len(codec.encode(pack(sentences, [0.3, 0.2, 0.1], budget, codec))) <= budget


def test_goal_picks_the_relevant_sentence(embed):
    one = len(get_codec().encode(LUNCH + "\n"))
    out = embed(CompressorInput(CONTEXT, "What food was served at the team lunch?", one))
    assert out == LUNCH


def test_no_goal_keeps_the_central_sentences_not_the_outlier(embed):
    codec = get_codec()
    budget = len(codec.encode(CONTEXT)) // 2
    out = embed(CompressorInput(CONTEXT, "", budget))
    assert out and LUNCH not in out
    assert set(split_sentences(out)) <= set(DB)
    assert len(codec.encode(out)) <= budget


def test_output_is_source_sentences_in_source_order_within_budget(embed):
    codec = get_codec()
    for budget in (0, 5, 20, 60, 1000):
        out = embed(CompressorInput(CONTEXT, "Why did writes fail?", budget))
        kept = split_sentences(out)
        order = [split_sentences(CONTEXT).index(s) for s in kept]
        assert order == sorted(order)
        assert len(codec.encode(out)) <= budget
    assert embed(CompressorInput(CONTEXT, "Why did writes fail?", 1000)).replace("\n", " ") == CONTEXT


def test_registered_name_and_revision(embed):
    method = resolve("compressor", "embed")
    assert method.name == "embed"
    assert method.revision == embed.revision and method.revision.startswith("embed-v1@")
    assert method.encoder is embed.encoder  # one loaded MiniLM serves every embed instance
