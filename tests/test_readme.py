"""The README's examples run as written: quick start, Python API, CLI examples, metric and Trainer recipe.

Python blocks run in README order in one namespace (unless marked `<!-- docs-test: skip (why) -->`);
bash blocks marked `<!-- docs-test: run -->` run their `gacc` commands through the CLI, which must exit 0.
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
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"(?:^<!-- docs-test: (?P<mark>[^>]*) -->\n)?^```(?P<lang>\w*)\n(?P<code>.*?)^```$", re.M | re.S)

CHILD = r'''
import ast, io, json, shlex, sys, tokenize

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

import gacc_hf
from gacc_hf.cli import main
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
            assert got == want, f"{where} line {stmt.lineno}: {ast.unparse(stmt)} gave {got!r}, README says {want!r}"
            checked += 1
        else:
            exec(piece, namespace)
    return checked


def run_bash(code, where):
    ran = 0
    for line in code.replace("\\\n", " ").splitlines():
        argv = shlex.split(line, comments=True)
        if not argv:
            continue
        assert argv[0] == "gacc", f"{where}: only gacc commands run here, got {line!r}"
        try:
            status = main(argv[1:])
        except SystemExit as exc:  # --version and argparse errors exit
            status = exc.code or 0
        assert status == 0, f"{where}: `{line.strip()}` exited {status}"
        ran += 1
    return ran


namespace = {"__name__": "__readme__", "model": model, "tokenizer": tokenizer}
report = {"python": 0, "bash": 0, "checked": 0}
for block in json.loads(sys.argv[1]):
    where = f"README.md block at line {block['line']}"
    if block["lang"] == "python":
        report["checked"] += run_python(block["code"], namespace, where)
        report["python"] += 1
    else:
        report["bash"] += run_bash(block["code"], where)
report["trainer_metrics"] = {k: v for k, v in namespace["metrics"].items() if k.startswith("eval_n_")}
report["files"] = sorted(str(p) for p in __import__("pathlib").Path("runs").rglob("config.yaml"))
print(json.dumps(report))
'''


def blocks() -> tuple[list[dict], list[str]]:
    """The blocks to run, and the marks of those skipped on purpose."""
    text = README.read_text(encoding="utf-8")
    run, skipped = [], []
    for m in BLOCK.finditer(text):
        mark, lang = m["mark"] or "", m["lang"]
        line = text.count("\n", 0, m.start("code"))
        if mark.startswith("skip"):
            skipped.append(f"line {line}: {mark}")
        elif lang == "python" or (lang == "bash" and mark == "run"):
            run.append({"lang": lang, "code": m["code"], "line": line})
    return run, skipped


def test_only_the_marked_blocks_are_left_out():
    run, skipped = blocks()
    assert skipped == [s for s in skipped if "a loop over your own model and loader" in s] and len(skipped) == 1
    assert sum(b["lang"] == "python" for b in run) >= 6 and sum(b["lang"] == "bash" for b in run) == 3


def test_the_readme_examples_run_as_written(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("HF_DATASETS_CACHE", "HF_METRICS_CACHE")}
    env.update(
        PYTHONPATH=str(README.parent),
        HF_HUB_OFFLINE="1",
        HF_EVALUATE_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_MODULES_CACHE=str(tmp_path / "modules"),
        HF_HOME=str(tmp_path / "hf_home"),
        TOKENIZERS_PARALLELISM="false",
    )
    work = tmp_path / "work"
    work.mkdir()
    run, _ = blocks()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(run)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["python"] == sum(b["lang"] == "python" for b in run)
    assert report["bash"] >= 11  # every gacc command of the three run blocks
    assert report["checked"] >= 5  # README values compared with what the code gives
    # the sample has 155 questions in 35 goals (README, Loading data): every one reached compute_metrics once
    assert report["trainer_metrics"] == {"eval_n_questions": 155, "eval_n_goals": 35}
    assert "runs/again/config.yaml" in report["files"] and "runs/quick/config.yaml" in report["files"]
