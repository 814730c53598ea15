"""`gacc cache check|merge`: a cache folder checked, or the caches of several machines merged."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from gacc_hf import errors

if TYPE_CHECKING:
    from gacc_hf.run.cache.matches_check import MatchesCheck


def _recompute_matches(args: argparse.Namespace) -> MatchesCheck | None:
    """The recomputation of the cache's matches entries; None for a file SQLite cannot read (`check_cache` has
    said so). Unusable entries met on the way are not logged again: `check_cache` lists them."""
    from gacc_hf.run.cache import Cache
    from gacc_hf.run.cache.database import CacheError
    from gacc_hf.run.cache.matches_check import DEFAULT_SAMPLE, check_matches

    cache_log = logging.getLogger("gacc_hf.run.cache")
    level = cache_log.level
    cache_log.setLevel(logging.ERROR)
    try:
        with Cache(args.cache_dir) as cache:
            return check_matches(cache, None if args.full else (args.sample or DEFAULT_SAMPLE))
    except CacheError:
        return None
    finally:
        cache_log.setLevel(level)


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="check a cache folder, or merge the caches of several machines into one")
    cache = p.add_subparsers(dest="cache_command", required=True)
    c = cache.add_parser(
        "check",
        help="list every problem of a cache (damaged file, unusable entries, matches entries that differ from a "
        "recomputation); exit 2 if any",
    )
    c.add_argument("cache_dir", help="a --cache-dir folder")
    c.add_argument("--full", action="store_true", help="recompute every matches entry (default: a random sample)")
    c.add_argument("--sample", type=int, default=None, metavar="N", help="matches entries to recompute (default 200)")
    c.set_defaults(func=cmd_cache_check)
    m = cache.add_parser("merge", help="copy every usable entry of the SOURCE caches into TARGET")
    m.add_argument("target", help="the cache folder to fill (created if missing)")
    m.add_argument("sources", nargs="+", help="cache folders to read, e.g. one per machine")
    m.set_defaults(func=cmd_cache_merge)


def cmd_cache_check(args: argparse.Namespace) -> int:
    from gacc_hf.run.cache import CACHE_FILENAME, check_cache

    if not (Path(args.cache_dir) / CACHE_FILENAME).is_file():
        raise ValueError(f"{args.cache_dir} holds no cache ({CACHE_FILENAME})")
    if args.sample is not None and args.sample < 1:
        raise ValueError(f"--sample {args.sample}: give at least 1 (or --full for every entry)")
    problems = check_cache(args.cache_dir)
    found = _recompute_matches(args)
    if found is not None:  # a cache that opens, unusable entries or not: its matches entries recomputed
        problems += found.problems
        other = f", {found.other_revision} of another matcher revision not recomputed" if found.other_revision else ""
        print(f"matches: {found.checked} entries recomputed{' (all)' if args.full else ''}{other}")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s) in {args.cache_dir}" if problems else f"ok: no problems in {args.cache_dir}")
    return errors.BAD_INPUT if problems else errors.OK


def cmd_cache_merge(args: argparse.Namespace) -> int:
    from gacc_hf.run.cache import CACHE_FILENAME, merge_caches

    for source in args.sources:
        if not (Path(source) / CACHE_FILENAME).is_file():
            raise ValueError(f"{source} holds no cache ({CACHE_FILENAME})")
    print(f"{merge_caches(args.target, args.sources)} new entries in {args.target}")
    return errors.OK
