"""`gacc list` and `gacc install-metric`: what is built in, and the evaluate metric made loadable offline."""

from __future__ import annotations

import argparse


def add_list_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="the built-in methods, name prefixes and presets, one line each")
    p.add_argument("role", nargs="?", choices=[*LIST_ROLES, *(f"{r}s" for r in LIST_ROLES)], help="list only these")
    p.set_defaults(func=cmd_list)


LIST_ROLES = ("compressor", "reader", "judge", "preset")


def cmd_list(args: argparse.Namespace) -> int:
    from gacc_hf.methods import BUILTINS, PREFIXES
    from gacc_hf.run.presets import DEFAULT_PRESET, PRESETS

    roles = [args.role.removesuffix("s")] if args.role else list(LIST_ROLES)
    for role in roles:
        if role == "preset":
            rows = [(n, p.description + (" (default)" if n == DEFAULT_PRESET else "")) for n, p in PRESETS.items()]
        else:
            rows = [(e.name, e.description) for e in BUILTINS if e.role == role]
            rows += [(f"{e.name}:...", e.description) for e in PREFIXES if e.role == role]
        print(f"{role}s:")
        width = max(len(name) for name, _ in rows)
        for name, description in rows:
            print(f"  {name:<{width}}  {description}")
    return 0


def add_install_metric_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("install-metric", help="make evaluate.load('gacc') resolve offline from any directory")
    p.set_defaults(func=cmd_install_metric)


def cmd_install_metric(args: argparse.Namespace) -> int:
    from gacc_hf.metric import install_metric, quiet_cached_notice

    print(install_metric())
    quiet = quiet_cached_notice()
    print(
        f"evaluate's notice that it uses its cached copy of the metric is silenced by {quiet}"
        if quiet
        else "site-packages is not writable: evaluate will note on each load that it uses its cached copy (this one)"
    )
    return 0
