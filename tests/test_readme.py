"""The examples of the README and of every guide in docs/ run as written.

Documents run in order (README.md, then docs/*.md by name) in one working directory, so a guide may use a
results folder an earlier document wrote. Python blocks run in document order, one namespace per document
(unless marked `<!-- docs-test: skip (why) -->`);
bash blocks marked `<!-- docs-test: run -->` run their `gacc` commands through the CLI, which must exit 0
(or the code a trailing `# exits N` comment names), and may start a server with `&` and stop it with `kill %N`
(`tests/helpers/docs_bash.py`).
A statement followed by a comment that is a Python literal (`token_budget(100, 0.29)   # 29`), on its
line or the next, must evaluate to that literal. Everything runs in a fresh interpreter with a private
working directory and modules cache (so `evaluate.load("gacc")` resolves from the installed metric).
The Trainer recipe gets `model` and `tokenizer`: a tiny randomly initialised T5 and a word-level
tokenizer over the sample's words.
"""

from __future__ import annotations

import json
import os
import re

from tests.helpers.child import run_child
from tests.helpers.paths import ROOT

README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:^<!-- docs-test: (?P<mark>[^>]*) -->\n)?^```(?P<lang>\w*)\n(?P<code>.*?)^```$", re.M | re.S)

CHILD = r'''
import ast, io, json, sys, tokenize

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

import gacc_hf
from tests.helpers.docs_bash import run_bash
from tests.helpers.paths import ROOT
from gacc_hf.metric import install_metric

install_metric()
sample = gacc_hf.load_sample("judge")
texts = [q["question"] for r in sample for q in r["questions"]]
texts += [ref for r in sample for g in r["gold"] for ref in g["references"]]
words = sorted({w for t in texts for w in t.split()})
word_level = Tokenizer(models.WordLevel({"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(words)}},
                                        unk_token="<unk>"))
word_level.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=word_level, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
torch.manual_seed(0)
model = T5ForConditionalGeneration(T5Config(vocab_size=len(words) + 3, d_model=16, d_kv=8, d_ff=32, num_layers=1,
                                            num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0))


def literal_comments(code):
    """{line: value} for the comments that are Python literals: those ending a statement's last line, and
    those alone on the line after it."""
    trailing, alone = {}, {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            try:
                value = ast.literal_eval(tok.string[1:].strip())
            except (ValueError, SyntaxError):
                continue
            if tok.line.strip().startswith("#"):
                alone[tok.start[0] - 1] = value
            else:
                trailing[tok.start[0]] = value
    return {**alone, **trailing}


def run_python(code, namespace, where):
    tree, lines, checked = ast.parse(code), literal_comments(code), 0
    for stmt in tree.body:
        piece = compile(ast.Module([stmt], []), where, "exec")
        if isinstance(stmt, ast.Expr) and stmt.end_lineno in lines:
            want = lines[stmt.end_lineno]
            got = eval(compile(ast.Expression(stmt.value), where, "eval"), namespace)
            assert got == want, f"{where} line {stmt.lineno}: {ast.unparse(stmt)} gave {got!r}, not {want!r}"
            checked += 1
        else:
            exec(piece, namespace)
    return checked


namespaces = {}
report = {"python": 0, "bash": 0, "checked": 0}
for block in json.loads(sys.argv[1]):
    where = f"{block['document']} block at line {block['line']}"
    fresh = {"__name__": "__docs__", "model": model, "tokenizer": tokenizer}
    namespace = namespaces.setdefault(block["document"], fresh)
    if block["lang"] == "python":
        report["checked"] += run_python(block["code"], namespace, where)
        report["python"] += 1
    else:
        report["bash"] += run_bash(block["code"], where)
trainer_metrics = namespaces["docs/python-api.md"]["metrics"]
report["trainer_metrics"] = {k: v for k, v in trainer_metrics.items() if k.startswith("eval_n_")}
report["files"] = sorted(str(p) for p in __import__("pathlib").Path("runs").rglob("config.yaml"))
print(json.dumps(report))
'''


def blocks() -> tuple[list[dict], list[str]]:
    """The blocks to run, in document order, and the marks of those skipped on purpose."""
    run, skipped = [], []
    for path in DOCUMENTS:
        text, document = path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()
        for m in BLOCK.finditer(text):
            mark, lang = m["mark"] or "", m["lang"]
            line = text.count("\n", 0, m.start("code"))
            if mark.startswith("skip"):
                skipped.append(f"{document} line {line}: {mark}")
            elif lang == "python" or (lang == "bash" and mark == "run"):
                run.append({"lang": lang, "code": m["code"], "line": line, "document": document})
    return run, skipped


def test_only_the_marked_blocks_are_left_out():
    run, skipped = blocks()
    assert len(skipped) == 1 and "docs/python-api.md" in skipped[0] and "a loop over your own model" in skipped[0]
    assert {b["document"] for b in run if b["lang"] == "python"} >= {
        "README.md",
        "docs/protocol.md",
        "docs/python-api.md",
        "docs/baselines.md",
        "docs/adding-a-method.md",
        "docs/chinese.md",
    }
    assert [b["document"] for b in run if b["lang"] == "bash"] == [
        "README.md",
        "docs/cli.md",
        "docs/cli.md",  # the cost of a run: a dry run
        "docs/cli.md",  # a prices file and a priced dry run with a cost limit
        "docs/cli.md",  # spending limits
        "docs/cli.md",  # a board over two runs, its Space's dry run
        "docs/data.md",
        "docs/results-and-publishing.md",
        "docs/results-and-publishing.md",  # --only-defined on the recorded curve run
        "docs/scaling-and-servers.md",  # a served run against the stand-in: dry run, limit, resume
    ]


def test_the_guides_are_the_ones_docs_readme_lists():
    listed = set(re.findall(r"\]\(([\w-]+\.md)\)", (ROOT / "docs" / "README.md").read_text(encoding="utf-8")))
    assert listed == {p.name for p in DOCUMENTS[1:]} - {"README.md"}


def test_the_readme_stays_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_readme_examples_run_as_written(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("HF_DATASETS_CACHE", "HF_METRICS_CACHE")}
    env.update(
        PYTHONPATH=str(ROOT),
        HF_HUB_OFFLINE="1",
        HF_EVALUATE_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_MODULES_CACHE=str(tmp_path / "modules"),
        HF_HOME=str(tmp_path / "hf_home"),
        TOKENIZERS_PARALLELISM="false",
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")  # the data files the examples name
    (work / "docs").mkdir()  # the recorded runs and the shipped eval.yaml, read by the publishing examples
    (work / "docs" / "results").symlink_to(ROOT / "docs" / "results")
    (work / "dataset_scripts").symlink_to(ROOT / "dataset_scripts")
    run, _ = blocks()
    report = run_child(CHILD, work, env, json.dumps(run))
    assert report["python"] == sum(b["lang"] == "python" for b in run)
    # every gacc command of the run blocks: README, cli's five, data, results' two, servers
    assert report["bash"] == 4 + (9 + 2 + 1 + 2 + 3) + 9 + (8 + 2) + 4
    assert report["checked"] >= 5  # README values compared with what the code gives
    # the sample has 155 questions in 35 goals (README, Loading data): every one reached compute_metrics once
    assert report["trainer_metrics"] == {"eval_n_questions": 155, "eval_n_goals": 35}
    assert {"runs/again/config.yaml", "runs/quick/config.yaml", "runs/rules/config.yaml"} <= set(report["files"])
