""" "Did you mean" for options gacc does not have: lm-eval's flags, and any option written with `_` for `-`.

People come to the `gacc` command from `lm_eval`, whose flags differ; argparse would only say "unrecognized
arguments". `HintingParser` adds, to that message, the gacc option that does the same job.
"""

from __future__ import annotations

import argparse

# lm-eval's flags (as `lm_eval --help` names them) and what does their job here
LM_EVAL: dict[str, str] = {
    "--model": "--compressors, --reader or --judge NAME (the methods themselves: `gacc list`)",
    "--model_args": "options after the method's name: --reader 'smollm2?device=cuda&dtype=bfloat16'",
    "--device": "the device option of a method: --reader 'smollm2?device=cuda:0' (several GPUs: --num-processes N)",
    "--tasks": "--data (sample, sample:zh, a file, a Hub id) or --preset",
    "--output_path": "--output-dir",
    "--use_cache": "--cache-dir",
    "--log_samples": "nothing: every answer is in the results folder's answers.parquet",
    "--num_fewshot": "nothing: the reader answers from the memory alone, with no examples",
}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of a parser and of its subcommands."""
    found = set(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found


def option_hints(unrecognized: list[str], known: set[str]) -> list[str]:
    """One "did you mean" line per unrecognized option that has a counterpart here (`--flag` or `--flag=value`).

    >>> option_hints(["--output_path=runs/x", "--cache_dir", "c", "--nope"], {"--output-dir", "--cache-dir"})
    ["--output_path is lm-eval's; did you mean --output-dir?", '--cache_dir: did you mean --cache-dir?']
    """
    hints = []
    for token in unrecognized:
        flag = token.split("=", 1)[0]
        if not flag.startswith("--"):
            continue
        if flag in LM_EVAL:
            hints.append(f"{flag} is lm-eval's; did you mean {LM_EVAL[flag]}?")
        elif "_" in flag and flag.replace("_", "-") in known:
            hints.append(f"{flag}: did you mean {flag.replace('_', '-')}?")
    return hints


class HintingParser(argparse.ArgumentParser):
    """An ArgumentParser whose "unrecognized arguments" error names the gacc option that was meant."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        parsed, extras = super().parse_known_args(args, namespace)
        hints = option_hints(extras, _options(self)) if self.prog.count(" ") == 0 else []
        if hints:
            self.error(f"unrecognized arguments: {' '.join(extras)}; " + "; ".join(hints))
        return parsed, extras
