"""Checks of `gacc run`'s folders that need no model and must fail before any work."""

from __future__ import annotations

from pathlib import Path


def check_output_option(output_dir: str | None) -> None:
    """`--output-dir ''` names no folder (it would mean the working directory): refuse it."""
    if output_dir is not None and not output_dir.strip():
        raise ValueError("--output-dir is empty; name a results folder (or leave the option out for runs/<time>-...)")


def check_cache_outside_output(output_dir: str | None, cache_dir: str | None) -> None:
    """A cache inside (or equal to) the results folder would be replaced with it: refuse it before any work."""
    if output_dir is None or cache_dir is None:
        return
    out, cache = Path(output_dir).resolve(), Path(cache_dir).resolve()
    if cache == out or out in cache.parents:
        raise ValueError(
            f"--cache-dir {cache_dir} is inside the results folder --output-dir {output_dir}, which each run "
            "replaces as a whole (the cache with it): put the cache beside it, e.g. --cache-dir "
            f"{out.parent / 'cache'}"
        )
