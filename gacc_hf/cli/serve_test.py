"""`gacc serve-test`: a stand-in OpenAI-compatible server on 127.0.0.1, to try served runs without a model."""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gacc_hf.methods.stand_in import StandIn


def add_serve_test_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve-test",
        help="a stand-in OpenAI-compatible server on 127.0.0.1 (no model): try served runs, limits and resuming",
    )
    p.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0: any free port)")
    p.add_argument("--models", default="stand-in", help="model names it lists, comma-separated (default stand-in)")
    p.add_argument(
        "--replies",
        choices=("echo", "fixed", "content"),
        default="echo",
        help="echo: parts of the request back; fixed: --answer every time; content: a small model's kind of answer "
        "for synthetic data (default echo)",
    )
    p.add_argument("--answer", default="yes", help="the reply of --replies fixed (default yes)")
    p.add_argument("--latency", type=float, default=0.0, help="median seconds before each reply (default 0)")
    p.add_argument("--spread", type=float, default=0.5, help="sigma of the log-normal latency (default 0.5; 0: fixed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the latencies (default 0)")
    p.add_argument("--compressor-words", type=int, default=50, help="words an echo compressor keeps (default 50)")
    p.add_argument("--no-usage", action="store_true", help="report no `usage` (the run then counts tokens itself)")
    p.add_argument("--max-requests", type=int, help="stop after this many chat requests")
    p.add_argument("--idle", type=float, help="stop after this many seconds without a request")
    p.set_defaults(func=cmd_serve_test)


def cmd_serve_test(args: argparse.Namespace) -> int:
    from gacc_hf.localhost import check_port, until_stopped
    from gacc_hf.methods.stand_in import StandIn, base_url, listen

    check_port("--port", args.port)
    stand_in = StandIn(
        args.replies,
        answer=args.answer,
        models=tuple(args.models.split(",")),
        latency=args.latency,
        spread=args.spread,
        seed=args.seed,
        compressor_words=args.compressor_words,
        report_usage=not args.no_usage,
        max_requests=args.max_requests,
        idle=args.idle,
    )
    with listen(args.port) as sock, until_stopped("gacc serve-test"):  # Ctrl-C, or SIGTERM before the loop runs
        models = ", ".join(stand_in.models)
        print(f"{base_url(sock)} serves {models} ({args.replies} replies; Ctrl-C stops)", flush=True)
        why = asyncio.run(_serve(stand_in, sock))
        print(f"gacc serve-test: stopped serving{' ' + why if why else ''}", file=sys.stderr)
    return 0


async def _serve(stand_in: StandIn, sock: socket.socket) -> str:
    """Serve until stopped; SIGTERM stops it through the event loop, as its own `--max-requests` and `--idle` do."""
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stand_in.stop)
    return await stand_in.serve(sock)
