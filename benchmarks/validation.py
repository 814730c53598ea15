"""What validating a dataset costs beside what every run spends anyway: counting its context tokens.

Prints, for synthetic data, the best of 5 timings of `find_problems` (schema, text hygiene, ID collisions)
and of one tiktoken encode of every distinct context (the floor: a run needs N of each context).
"""

from __future__ import annotations

import time

from gacc_hf.data.schema import find_problems
from gacc_hf.data.synthetic import synthetic_rows
from gacc_hf.tokenizer import get_codec


def best(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    codec = get_codec()
    print(f"{'groups':>7} {'questions':>9} {'validate ms':>12} {'encode contexts ms':>19} {'ratio':>6}")
    for contexts in (200, 2000):
        rows = synthetic_rows(seed=0, contexts=contexts, goals_per_context=3, questions_per_goal=4)
        texts = list(dict.fromkeys(r["context"] for r in rows))
        assert find_problems(rows) == []
        validate = best(lambda rows=rows: find_problems(rows))
        encode = best(lambda texts=texts: codec.count_batch(texts))
        n_questions = sum(len(r["questions"]) for r in rows)
        ms = f"{validate * 1e3:>12.1f} {encode * 1e3:>19.1f}"
        print(f"{len(rows):>7} {n_questions:>9} {ms} {validate / encode:>6.2f}")


if __name__ == "__main__":
    main()
