"""`gacc report`, `gacc view`, `gacc compare` and `gacc publish`: what is done with a results folder once written."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any


def add_report_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="rebuild report.md, report.html and the plots of a results folder (no model called)"
    )
    p.add_argument("run_dir", help="results folder written by `gacc run`")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from gacc_hf.results.folder import rebuild

    for path in rebuild(args.run_dir):
        print(path)
    return 0


def add_view_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="print the path of a results folder's page, report.html, or serve the folder")
    p.add_argument("run_dir", help="results folder written by `gacc run`")
    p.add_argument("--serve", type=int, metavar="PORT", help="serve the folder on http://127.0.0.1:PORT (0: any port)")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    from gacc_hf.localhost import HOST, until_stopped
    from gacc_hf.results.serve import page_path, page_server

    if args.serve is None:
        print(page_path(args.run_dir))
        return 0
    server = page_server(args.run_dir, args.serve)
    with server, until_stopped("gacc view"):
        print(f"http://{HOST}:{server.server_address[1]}/{page_path(args.run_dir).name} (Ctrl-C stops)", flush=True)
        server.serve_forever()
    return 0


def add_compare_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="paired difference B − A with CIs, per condition and ratio; across readers or judges, whether the "
        "ranking of the compressors survives",
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="results folders: one (two compressors of it, --a and --b), two (side A and side B), or two or more on "
        "the same data under different readers or judges (the survival section)",
    )
    p.add_argument("--a", help="compressor of side A (needed when its run has several)")
    p.add_argument("--b", help="compressor of side B (needed when its run has several)")
    p.add_argument("--bootstrap", type=int, help="bootstrap resamples for the CIs (default: side A's run setting)")
    p.add_argument("--seed", type=int, help="bootstrap seed (default: side A's run seed)")
    p.add_argument(
        "--allow-different-data",
        action="store_true",
        help="compare runs on different data, readers or judges anyway, with a warning (refused by default)",
    )
    p.add_argument("--output", metavar="FILE.md", help="also write the survival section as Markdown to this file")
    p.add_argument("--json", metavar="FILE", help="also write the survival section as JSON to this file")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from gacc_hf.results.folder import read_folder
    from gacc_hf.results.views import several_settings
    from gacc_hf.scoring.compare import CompareError, setting

    if len(args.runs) > 2:
        return _survival_only(args)
    args.run_a, args.run_b = (*args.runs, None)[:2]
    run_a = read_folder(args.run_a)
    run_b = read_folder(args.run_b) if args.run_b else run_a
    several = several_settings(run_a.config) or several_settings(run_b.config)
    if several and args.run_b is not None and not _shared_settings(run_a.config, run_b.config):
        return _survival_only(args)  # each setting of each run, none in both: the survival section
    settings_differ = args.run_b is not None and not several and setting(run_a.config) != setting(run_b.config)
    if not settings_differ:
        if args.output or args.json:
            raise CompareError("--output and --json write the survival section: it needs two or more runs under "
                               "different readers or judges")  # fmt: skip
        return _by_setting(args, run_a, run_b)
    try:
        section = _survival(args, {args.run_a: run_a, args.run_b: run_b})
    except CompareError as exc:
        if args.allow_different_data and not (args.output or args.json):
            _paired(args, run_a, run_b)
            return 0
        raise CompareError(f"{_refusal(run_a.config, run_b.config, args)}; no survival section either: {exc}") from None
    if args.allow_different_data:
        _paired(args, run_a, run_b)
        print()
    else:
        print("(the paired table of one side against the other needs one reader and one judge: "
              "--allow-different-data prints it anyway)\n")  # fmt: skip
    print(section, end="")
    return 0


def _shared_settings(config_a: dict, config_b: dict) -> list:
    """The (reader, judge) settings two runs both have, by name."""
    from gacc_hf.scoring.settings import config_settings

    return [s for s in config_settings(config_a) if s in config_settings(config_b)]


def _by_setting(args: argparse.Namespace, run_a: Any, run_b: Any) -> int:
    """Two runs (or two compressors of one run) compared on each (reader, judge) setting both have, each
    setting on its own; runs of one setting each are compared as they are."""
    from gacc_hf.results.views import matched_views
    from gacc_hf.scoring.settings import setting_label

    if args.run_b is None and (args.a is None or args.b is None):
        raise ValueError("comparing two compressors of one run needs both --a and --b")
    pairs, unmatched = matched_views(run_a, run_b)
    for one, view_a, view_b in pairs:
        if one is not None:
            print(f"== {setting_label(one)} ==")
        _paired(args, view_a, view_b)
    if unmatched:
        print(f"skipped {len(unmatched)} setting(s) not in both runs: {'; '.join(map(setting_label, unmatched))}")
    return 0


def _refusal(config_a: dict, config_b: dict, args: argparse.Namespace) -> str:
    from gacc_hf.scoring.compare import setup_differences

    differ, _ = setup_differences(config_a, config_b, (args.run_a, args.run_b))
    return "the runs are not comparable: " + "; ".join(differ) + " (pass --allow-different-data to compare anyway)"


def _survival_only(args: argparse.Namespace) -> int:
    from gacc_hf.results.folder import read_folder
    from gacc_hf.scoring.compare import CompareError

    if args.a or args.b or args.allow_different_data:
        raise CompareError("--a, --b and --allow-different-data are for two runs of a shared setting; three or more, "
                           "or two of no setting in common, give the survival section of the compressors they all "
                           "hold")  # fmt: skip
    twice = [path for i, path in enumerate(args.runs) if path in args.runs[:i]]
    if twice:
        raise CompareError(f"{twice[0]} is given twice: give each run once")
    args.run_a = args.runs[0]
    print(_survival(args, _settings_of({path: read_folder(path) for path in args.runs})), end="")
    return 0


def _settings_of(runs: dict) -> dict:
    """Folders (path → results) as settings (label → results): a run of several (reader, judge) settings gives
    each its own view, labelled `PATH [reader X, judge Y]`."""
    from gacc_hf.results.views import setting_views, several_settings
    from gacc_hf.scoring.settings import setting_label

    out = {}
    for path, run in runs.items():
        if not several_settings(run.config):
            out[path] = run
            continue
        out.update({f"{path} [{setting_label(one)}]": view for one, view in setting_views(run)})
    return out


def _survival(args: argparse.Namespace, runs: dict) -> str:
    """The survival section of runs (folder → results) on the same data, each under its own (reader, judge):
    printed by the caller, written to --output and --json here."""
    from pathlib import Path

    from gacc_hf.scoring.compare import check_settings, setting
    from gacc_hf.scoring.survival import SurvivalError, format_survival, survival
    from gacc_hf.strict_json import dumps

    for line in check_settings({path: run.config for path, run in runs.items()}):
        print(f"WARNING: {line}: cannot check that every run is on the same data", file=sys.stderr)
    n_boot, seed = _resampling(args, next(iter(runs.values())).config)
    try:
        sections = survival({path: run.answers for path, run in runs.items()}, n_boot, seed)
    except SurvivalError as exc:
        from gacc_hf.scoring.compare import CompareError

        raise CompareError(str(exc)) from None
    about = {path: setting(run.config) for path, run in runs.items()}
    text = format_survival(sections, about)
    agreement, said = _agreement(runs, n_boot, seed)
    text += f"\n{said}"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    if args.json:
        document = {"settings": about, "n_bootstrap": n_boot, "seed": seed, "survival": sections}
        document["agreement"] = agreement
        Path(args.json).write_text(dumps(document, args.json, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return text


def _agreement(runs: dict, n_boot: int, seed: int) -> tuple[dict | None, str]:
    """Judge agreement of runs whose answers are the same reader's judged again (None and why not, otherwise)."""
    from gacc_hf.scoring.agreement import format_agreement, judge_agreement, verdict_table

    readers = {json.dumps(run.config.get("reader"), sort_keys=True) for run in runs.values()}
    if len(readers) > 1:
        return None, "(no judge agreement: the runs have different readers, so their answers differ)\n"
    try:
        table, left_out = verdict_table({path: run.answers for path, run in runs.items()})
    except ValueError as exc:
        return None, f"(no judge agreement: {exc})\n"
    if not table["goal_ids"]:
        return None, "(no judge agreement: every answer failed in one run or another)\n"
    measured = judge_agreement(table["goal_ids"], table["verdicts"], table["languages"], n_boot, seed)
    return {**measured, "n_left_out": left_out}, format_agreement(measured, left_out)


def _paired(args: argparse.Namespace, run_a: Any, run_b: Any) -> None:
    """Today's comparison of side A against side B: the paired table, by language, outcome moves and AUC."""
    from gacc_hf.scoring.by_language import format_by_language, paired_by_language
    from gacc_hf.scoring.compare import (
        CompareError,
        format_table,
        paired_table,
        select,
        setup_differences,
        shared_cells,
    )

    same_run = args.run_b is None  # two compressors of one run share its data, reader and judge
    differ, unknown = ([], []) if same_run else setup_differences(run_a.config, run_b.config, (args.run_a, args.run_b))
    if differ and not args.allow_different_data:
        raise CompareError(
            "the runs are not comparable: " + "; ".join(differ) + " (pass --allow-different-data to compare anyway)"
        )
    for line in [*differ, *(f"{u}: cannot check that both ran on the same data" for u in unknown)]:
        print(f"WARNING: {line}", file=sys.stderr)
    rows_a, rows_b = select(run_a.answers, args.a, args.run_a), select(run_b.answers, args.b, args.run_b or args.run_a)
    labels = (f"{args.run_a}:{rows_a[0]['compressor']}", f"{args.run_b or args.run_a}:{rows_b[0]['compressor']}")
    n_boot, seed = _resampling(args, run_a.config)
    rows_a, rows_b, skipped = shared_cells(rows_a, rows_b, ("A", "B"))
    table = format_table(paired_table(rows_a, rows_b, n_boot, seed, labels=labels), *labels)
    print("\n".join([*(f"WARNING, NOT COMPARABLE: {line}" for line in differ), table]))
    if tables := paired_by_language(rows_a, rows_b, n_boot, seed, labels):
        print(f"\nby language (each on its own questions):\n{format_by_language(tables, labels)}")
    print(_moves(rows_a, rows_b, n_boot, seed))
    if skipped:
        print(f"skipped {len(skipped)} cell(s) not in both runs: {'; '.join(skipped)}")


def _resampling(args: argparse.Namespace, config: dict) -> tuple[int, int]:
    """The bootstrap count and seed of a comparison (the options given, else side A's run's), checked as
    `gacc run` checks them before any resampling: a count past the cap would run for hours."""
    from gacc_hf.limits import check_resampling

    recorded = f"{args.run_a}: results.json config."
    n_boot, seed = args.bootstrap, args.seed
    names = ("--bootstrap" if n_boot is not None else f"{recorded}n_bootstrap",)
    names += ("--seed" if seed is not None else f"{recorded}seed",)
    n_boot = int(config.get("n_bootstrap", 1000) if n_boot is None else n_boot)
    seed = int(config.get("seed", 0) if seed is None else seed)
    check_resampling(n_boot, seed, names)
    return n_boot, seed


def _moves(rows_a: list, rows_b: list, n_boot: int, seed: int) -> str:
    """What `gacc compare` says under the score table: which outcomes moved, and the paired AUC difference
    (or, at one shared ratio, once, that there is no curve)."""
    from gacc_hf.scoring.auc import format_auc, paired_auc
    from gacc_hf.scoring.transitions import format_transitions, transitions

    parts = [format_transitions(transitions(rows_a, rows_b))]
    ratios = sorted({float(r["ratio"]) for r in rows_a})
    auc = paired_auc(rows_a, rows_b, n_boot, seed)
    parts.append(format_auc(auc) if auc else f"one shared ratio only (r = {ratios[0]:g}): no curve, no AUC")
    return "\n" + "\n\n".join(parts)


def add_publish_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish", help="add a run's results to a model's card on the Hugging Face Hub, or publish a board as a Space"
    )
    p.add_argument("run_dir", nargs="?", help="results folder written by `gacc run`")
    p.add_argument("--repo-id", help="the model repo whose card gets the results (owner/name; needed with RUN_DIR)")
    p.add_argument("--board", metavar="DIR", help="publish this board (`gacc board`) as the static Space --space")
    p.add_argument("--compressor", help="the run's compressor this model is (needed when the run has several)")
    p.add_argument("--reader", help="the reader whose setting is published (needed when the run has several)")
    p.add_argument("--judge", help="the judge whose setting is published (needed when the run has several)")
    p.add_argument(
        "--dataset-repo",
        help="the Hub dataset the run's data is (needed for a run on a local file; the sample and synthetic data "
        "are named as what they are)",
    )
    p.add_argument(
        "--split",
        help="the split of --dataset-repo the run's data is (needed to check a run that recorded no split, such as "
        "one on a local file, against the benchmark's eval.yaml)",
    )
    p.add_argument("--allow-errors", action="store_true", help="publish a run with failed calls, stating how many")
    p.add_argument("--card", help="merge into this local card instead of the model's current card on the Hub")
    p.add_argument("--details-repo-id", help="also push answers + memory ledger as this dataset repo, with a card")
    p.add_argument(
        "--eval-yaml",
        help="the benchmark's eval.yaml as a local file, to check the .eval_results task ids against (default: the "
        "dataset repo's; a dry run without it checks none)",
    )
    p.add_argument(
        "--only-defined",
        action="store_true",
        help="publish in .eval_results/ only the cells the benchmark's eval.yaml defines, listing those skipped "
        "(without it, a run holding a cell it does not define, such as another ratio, is refused)",
    )
    p.add_argument("--space", help="also upload the run's results page as this static Space (owner/name)")
    p.add_argument("--pr", action="store_true", help="open the model repo's commit as a pull request (community)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and the short generated files; push nothing")
    p.add_argument(
        "--dry-run-dir",
        metavar="DIR",
        help="a dry run that also writes every file of the plan under DIR/<models|datasets|spaces>/OWNER/NAME/ "
        "(DIR new or empty)",
    )
    p.set_defaults(func=cmd_publish)


def cmd_publish(args: argparse.Namespace) -> int:
    from gacc_hf.cli.board import publish_board
    from gacc_hf.hub import commit as hub

    args.dry_run = args.dry_run or args.dry_run_dir is not None
    if args.board is not None:
        return publish_board(args)
    if args.run_dir is None or args.repo_id is None:
        raise ValueError("publish needs RUN_DIR and --repo-id OWNER/NAME (or --board DIR --space OWNER/NAME)")
    if args.dry_run:
        return _publish(args)
    with hub.reaching_hub(f"publish to {args.repo_id}"):
        return _publish(args)


def _publish(args: argparse.Namespace) -> int:
    from pathlib import Path

    from huggingface_hub import HfApi

    from gacc_hf.hub import commit as hub
    from gacc_hf.hub import model_card
    from gacc_hf.hub.benchmark_yaml import parse_eval_yaml
    from gacc_hf.safe_yaml import check_front_matter

    for flag, path in (("--card", args.card), ("--eval-yaml", args.eval_yaml)):
        if path and not Path(path).is_file():
            raise ValueError(f"{flag} {path}: no such file")
    if args.dry_run_dir is not None:
        hub.check_dry_run_dir(args.dry_run_dir)
    eval_yaml = Path(args.eval_yaml).read_text(encoding="utf-8") if args.eval_yaml else None
    if eval_yaml is not None:
        parse_eval_yaml(eval_yaml, f"--eval-yaml {args.eval_yaml}")  # its faults named by the file given
    plan = functools.partial(
        model_card.publish_plan,
        args.run_dir,
        args.repo_id,
        compressor=args.compressor,
        dataset_repo=args.dataset_repo,
        split=args.split,
        allow_errors=args.allow_errors,
        details_repo_id=args.details_repo_id,
        space_id=args.space,
        pr=args.pr,
        only_defined=args.only_defined,
        reader=args.reader,
        judge=args.judge,
    )
    card = Path(args.card).read_text(encoding="utf-8") if args.card else None
    if card is not None:
        check_front_matter(card, f"--card {args.card}")
    plans = plan(existing_card=card, hub={"eval_yaml": eval_yaml})  # every check
    api = None if args.dry_run else HfApi()
    if api is not None:  # checked above, before the Hub is asked for anything
        hub_files = model_card.hub_state(api, args.run_dir, args.repo_id, args.dataset_repo, eval_yaml)
        plans = plan(existing_card=card or model_card.fetch_card(api, args.repo_id), hub=hub_files)
    for p in plans:
        print(p.describe())
    if api is None:
        return _dry_run(args, plans, eval_yaml is None)
    for url in model_card.publish(api, plans):
        print(url)
    return 0


def _dry_run(args: argparse.Namespace, plans: list, unchecked: bool) -> int:
    """What a publish dry run prints after the plans: what a real one would read first, every generated file short
    enough to read in a terminal, and where `--dry-run-dir` wrote them all."""
    from gacc_hf.hub import commit as hub
    from gacc_hf.hub import model_card

    if not args.card:
        print("(dry run: a real publish merges into the model's current card on the Hub, if it has one)")
    if model_card.EVAL_RESULTS_FILE in {op.path_in_repo for op in plans[0].operations}:
        print("(dry run: a real publish merges into the model's current .eval_results file, if it has one)")
        if unchecked:
            print("(dry run: task ids not checked; a real publish checks them against the dataset's eval.yaml)")
    if args.dry_run_dir is not None:
        print(f"(dry run: wrote {len(hub.write_plans(plans, args.dry_run_dir))} file(s) under {args.dry_run_dir})")
    for label, text in model_card.planned_texts(plans):
        print(hub.shown_file(label, text), end="")
    return 0
