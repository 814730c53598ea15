"""`gacc data validate|build|stats|push`: the dataset commands."""

from __future__ import annotations

import argparse
import sys

from gacc_hf import errors


def add_data_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="validate, build, describe and publish GACC datasets")
    data = p.add_subparsers(dest="data_command", required=True)
    v = data.add_parser("validate", help="list every problem of a dataset (file, row and field); exit 2 if any")
    v.add_argument(
        "path", help="'sample', a .jsonl/.parquet/.csv/.tsv file or folder, a save_to_disk folder or a Hub repo id"
    )
    v.add_argument(
        "--config", choices=["judge", "public"], default=None, help="view to check (default: every view the data holds)"
    )
    v.add_argument("--columns", type=_columns, default=None, help="the data's names for schema columns (see gacc run)")
    v.set_defaults(func=cmd_data_validate)
    b = data.add_parser("build", help="write a Hub-ready folder: Parquet for both views, its card and eval.yaml")
    b.add_argument("src", help="'sample' or a .jsonl/.parquet/.csv/.tsv file or folder in the judge schema")
    b.add_argument("out", help="output folder (its README.md and <view>/*.parquet are rewritten)")
    b.add_argument("--pretty-name", default=None, help="card title (default: GACC-Bench)")
    b.add_argument("--license", default=None, help="card license (default: apache-2.0)")
    b.add_argument("--description", default=None, help="card description paragraph")
    b.add_argument("--repo-id", default=None, help="Hub repo id shown in the card's loading example")
    b.set_defaults(func=cmd_data_build)
    s = data.add_parser("stats", help="contexts, goals, questions and the token-length distribution")
    s.add_argument("path", help="any data spec that `gacc run --data` accepts")
    s.add_argument("--config", choices=["judge", "public"], default="judge", help="view to read (default: judge)")
    s.add_argument("--split", default=None, help="split to describe when the data has several")
    s.add_argument("--columns", type=_columns, default=None, help="the data's names for schema columns (see gacc run)")
    s.set_defaults(func=cmd_data_stats)
    u = data.add_parser("push", help="upload a folder built by `gacc data build` to a Hub dataset repo")
    u.add_argument("path", help="folder written by `gacc data build`")
    u.add_argument("repo_id", help="Hub dataset repo id, owner/name")
    u.add_argument("--dry-run", action="store_true", help="print the upload plan and stop")
    u.add_argument(
        "--no-eval-yaml",
        action="store_true",
        help="push the data without eval.yaml (the dataset is then no Benchmark: no leaderboard shows results on it)",
    )
    u.add_argument("--message", default="Upload GACC-Bench data", help="commit message")
    u.set_defaults(func=cmd_data_push)


def _columns(text: str) -> dict[str, str]:
    from gacc_hf.cli.run import _columns as parse

    return parse(text)


def cmd_data_validate(args: argparse.Namespace) -> int:
    from gacc_hf.data.loading import find_spec_problems

    problems = find_spec_problems(args.path, args.config, args.columns)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) in {args.path}")
        return errors.BAD_INPUT
    print(f"ok: no problems in {args.path}")
    return 0


def cmd_data_build(args: argparse.Namespace) -> int:
    from gacc_hf.data.builder import file_languages, read_files, write_hub_folder
    from gacc_hf.data.card import DEFAULT_DESCRIPTION, DEFAULT_PRETTY_NAME, SAMPLE_CARD
    from gacc_hf.data.loading import data_files
    from gacc_hf.data.schema import SAMPLE_PATH
    from gacc_hf.hub.benchmark_yaml import FRAMEWORK, framework_warning, write_eval_yaml

    sample = args.src == "sample"
    paths, _ = data_files(SAMPLE_PATH if sample else args.src, "judge")
    files = read_files(paths)  # once: the folder and eval.yaml describe the same bytes
    given = {"pretty_name": args.pretty_name, "license": args.license, "description": args.description}
    card = {**(SAMPLE_CARD if sample else {}), **{k: v for k, v in given.items() if v is not None}}
    for path in write_hub_folder(files, args.out, repo_id=args.repo_id, **card):
        print(path)
    name, about = card.get("pretty_name", DEFAULT_PRETTY_NAME), card.get("description", DEFAULT_DESCRIPTION)
    path = write_eval_yaml(args.out, name, about, file_languages(files))
    print(path)
    warning = framework_warning(FRAMEWORK, str(path))
    if warning:
        print(warning, file=sys.stderr)
    return 0


def cmd_data_stats(args: argparse.Namespace) -> int:
    from gacc_hf.data.loading import load_any
    from gacc_hf.data.stats import stats_text

    print(stats_text(load_any(args.path, args.config, split=args.split, columns=args.columns)))
    return 0


def cmd_data_push(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gacc_hf.data.loading import DataSourceError, check_hub_folder
    from gacc_hf.hub.benchmark_yaml import EVAL_YAML, framework_warning, read_eval_yaml
    from gacc_hf.hub.commit import (
        check_repo_id,
        commit,
        describe_plan,
        folder_operations,
        operation_text,
        reaching_hub,
        shown_file,
    )

    check_repo_id("repo id", args.repo_id, "dataset")
    check_hub_folder(args.path)
    has_eval_yaml = (Path(args.path) / EVAL_YAML).is_file()
    if not has_eval_yaml and not args.no_eval_yaml:
        raise DataSourceError(
            f"{args.path} has no {EVAL_YAML}, the file `gacc data build` writes that makes the dataset a Benchmark "
            "(its leaderboard): rebuild the folder with `gacc data build`, or pass --no-eval-yaml to push the data "
            "without it"
        )
    # What `gacc data build` writes (the card, the benchmark's eval.yaml and the Parquet shards); anything else in
    # the folder, such as the script that builds it, stays local.
    names = ("README.md",) if args.no_eval_yaml else ("README.md", EVAL_YAML)
    built = [
        op for op in folder_operations(args.path) if op.path_in_repo in names or op.path_in_repo.endswith(".parquet")
    ]
    if args.no_eval_yaml:
        print(f"(--no-eval-yaml: {EVAL_YAML} is not pushed; the dataset is no Benchmark)")
    else:  # refused here, in one line, rather than by the Hub at push time
        where = str(Path(args.path) / EVAL_YAML)
        warning = framework_warning(read_eval_yaml(Path(where).read_text(encoding="utf-8"), where)[0], where)
        if warning:
            print(warning, file=sys.stderr)
    print(describe_plan(args.repo_id, "dataset", built))
    if args.dry_run:  # the text files in full (the card, eval.yaml); the Parquet shards by size above
        texts = [(f"{args.repo_id}:{op.path_in_repo}", operation_text(op)) for op in built]
        print("".join(shown_file(label, text) for label, text in texts if text is not None), end="")
        return 0
    from huggingface_hub import HfApi

    with reaching_hub(f"push to {args.repo_id}"):
        print(commit(HfApi(), args.repo_id, "dataset", built, args.message))
    return 0
