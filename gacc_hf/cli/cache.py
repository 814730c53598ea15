"""`gacc cache check|merge`: a cache folder checked, or the caches of several machines merged."""

from __future__ import annotations

import argparse
from pathlib import Path

from gacc_hf import errors


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="check a cache folder, or merge the caches of several machines into one")
    cache = p.add_subparsers(dest="cache_command", required=True)
    c = cache.add_parser("check", help="list every problem of a cache (damaged file, unusable entries); exit 2 if any")
    c.add_argument("cache_dir", help="a --cache-dir folder")
    c.set_defaults(func=cmd_cache_check)
    m = cache.add_parser("merge", help="copy every usable entry of the SOURCE caches into TARGET")
    m.add_argument("target", help="the cache folder to fill (created if missing)")
    m.add_argument("sources", nargs="+", help="cache folders to read, e.g. one per machine")
    m.set_defaults(func=cmd_cache_merge)


def cmd_cache_check(args: argparse.Namespace) -> int:
    from gacc_hf.run.cache import CACHE_FILENAME, check_cache

    if not (Path(args.cache_dir) / CACHE_FILENAME).is_file():
        raise ValueError(f"{args.cache_dir} holds no cache ({CACHE_FILENAME})")
    problems = check_cache(args.cache_dir)
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
