"""The results page at the release's size: file size, render time in Python, and time to first render in Chromium.

Builds a results folder's rows without running a model: 2,571 questions (4 a goal, on the bundled sample's
sources, each under its own context id) × 10 compressors × 3 ratios × 3 conditions, plus the `full` rows that
carry the sources. Eight compressors keep whole source sentences in source order up to r of the source
(extractive, stored as spans), two reword them (abstractive, stored as text); answers and verdicts are drawn at
random. Then it renders `report.html` (`gacc_hf.results.page.render_page`) and loads it from file:// in Debian's
headless Chromium: time from navigation to the page's ready mark (data parsed, filters filled, the first goal
drawn), then the time of one filter change. Prints one line per figure; the render's floor is the page's data,
built once, written as JSON.

    PYTHONPATH=$PWD python benchmarks/page.py                    # the release's size
    PYTHONPATH=$PWD python benchmarks/page.py --questions 200    # a quick try
    PYTHONPATH=$PWD python benchmarks/page.py --folder DIR --no-browser  # a results folder's page, Python only
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import gacc_hf
from gacc_hf.results.folder import verify_folder
from gacc_hf.results.layout import RunResults
from gacc_hf.results.page import render_page, script_json
from gacc_hf.results.page_data import page_data
from gacc_hf.text.sentences import split_sentences

CONDITIONS = ("own", "none", "cross")
RATIOS = (0.1, 0.2, 0.5)
ABSTRACTIVE = 2


def _memory(source: str, ratio: float, rng: random.Random, abstractive: bool) -> str:
    sentences = split_sentences(source)
    keep = sorted(rng.sample(range(len(sentences)), max(1, int(ratio * len(sentences)))))
    if abstractive:
        return "\n".join(" ".join(rng.sample(s.split(), len(s.split()))) for s in (sentences[i] for i in keep))
    return "\n".join(sentences[i] for i in keep)


def build(n_questions: int, n_compressors: int, seed: int = 0, language: str = "en") -> RunResults:
    """Answer and memory rows of a run of that size (see the module docstring) on the sample's sources of that
    language (`gacc_hf.load_sample`: "en", "zh" or "all")."""
    rng = random.Random(seed)
    texts = list(dict.fromkeys(row["context"] for row in gacc_hf.load_sample("judge", language)))
    compressors = [f"method-{i}" for i in range(n_compressors)]
    cells = [(c, k, r) for c in compressors for k in CONDITIONS for r in RATIOS] + [("full-context", "full", 1.0)]
    memories, answers = [], []
    for g in range((n_questions + 3) // 4):
        source, cid = texts[(g // 3) % len(texts)], f"ctx-{g // 3:05d}"
        gid, words = f"{cid}/g{g % 3}", source.split()
        questions = [(f"{gid}/q{q}", rng.choice(words)) for q in range(min(4, n_questions - 4 * g))]
        for c, k, r in cells:
            full = k == "full"
            text = source if full else _memory(source, r, rng, compressors.index(c) < ABSTRACTIVE)
            base = {"context_id": cid, "goal_id": gid, "compressor": c, "condition": k, "ratio": r, "ceiling": full}
            memories.append({**base, "memory": text, "memory_sha256": f"{g}-{c}-{k}-{r}", "budget": 200})
            for qid, ref in questions:
                correct, evidence = rng.random() < 0.4, rng.random() < 0.5
                answer = f"The answer is {ref if correct else rng.choice(words)}."
                row = {**base, "question_id": qid, "question": f"Which word is {qid}?", "references": [ref]}
                answers.append({**row, "answer": answer, "correct": correct, "evidence": evidence})
    cfg = {"compressors": [{"name": c} for c in compressors], "reader": {"name": "fields"}, "ratios": list(RATIOS)}
    cfg |= {"judge": {"name": "exact"}, "conditions": list(CONDITIONS)}
    return RunResults({"config": cfg, "scores": [], "integrity": {"exposures": 0}}, answers, memories)


def first_render(path: Path) -> tuple[float, float]:
    """Seconds from navigation to the ready mark, and of one filter change (outcome: lost)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page()
        page.goto(path.as_uri(), wait_until="commit", timeout=600_000)
        page.wait_for_selector("body[data-ready='1']", timeout=600_000)
        ready = page.evaluate("performance.now()") / 1000
        start = time.perf_counter()
        page.select_option("#f-outcome", "lost")
        page.inner_text("#visible")
        browser.close()
    return ready, time.perf_counter() - start


def render_times(run: RunResults, repeats: int = 3) -> tuple[float, float, str]:
    """Best of `repeats` of `render_page`, the floor (the page's data, built once, written as JSON: what any
    page of this data costs) and the page."""
    html, best, floor = "", float("inf"), float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        html = render_page(run)
        best = min(best, time.perf_counter() - start)
    document = page_data(run)
    for _ in range(repeats):
        start = time.perf_counter()
        script_json(document)
        floor = min(floor, time.perf_counter() - start)
    return best, floor, html


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2571)
    parser.add_argument("--compressors", type=int, default=10)
    parser.add_argument("--folder", type=Path, help="a results folder to render instead of built rows")
    parser.add_argument("--no-browser", action="store_true", help="the render in Python only")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    run = verify_folder(args.folder) if args.folder else build(args.questions, args.compressors)
    print(f"rows: {len(run.answers)} answers, {len(run.memories)} memories")
    best, floor, html = render_times(run)
    print(f"render_page: {best:.2f} s (best of 3); floor: its data written as JSON {floor:.2f} s; {best / floor:.1f} x")
    if not args.no_browser:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "report.html"
            path.write_text(html, encoding="utf-8")
            print(f"report.html: {path.stat().st_size / 1e6:.1f} MB")
            ready, change = first_render(path)
        print(f"Chromium, navigation to first render: {ready:.2f} s; one filter change: {change:.2f} s")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
