"""GACC-Bench in Inspect AI (the optional extra `inspect`): the task `gacc_hf/gacc_bench`.

This package is the entry point Inspect loads (`[project.entry-points.inspect_ai]`): importing it registers the
task, so `inspect eval gacc_hf/gacc_bench` finds it.
"""

from gacc_hf.inspect_eval.task import gacc_bench

__all__ = ["gacc_bench"]
