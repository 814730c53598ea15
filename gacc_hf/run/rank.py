"""How a rank of a launch lives and ends: it dies with its launcher, and it ends without C++ teardown.

A rank is started by the launcher's agent in a session of its own, so a signal to the terminal's process
group or to `gacc` reaches it only through the agent. Should the agent itself be killed (SIGKILL, which
it cannot catch), the kernel kills the rank too (Linux `PR_SET_PDEATHSIG`), so no rank keeps computing
and writes a results folder after `gacc` has returned.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

_PR_SET_PDEATHSIG = 1
# (rank, world size, local rank) variables: torchrun / `accelerate launch`, then the MPI launchers
# `accelerate launch` uses for multi-CPU runs across machines.
_ENV_TRIPLES = (
    ("RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK"),
)


@dataclass(frozen=True)
class Topology:
    """Where this process stands among the processes of one run."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def detect(environ: Mapping[str, str] | None = None) -> Topology:
    """The topology the launcher put in the environment; a plain process is rank 0 of 1.

    >>> detect({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"})
    Topology(rank=1, world_size=2, local_rank=1)
    >>> detect({})
    Topology(rank=0, world_size=1, local_rank=0)
    """
    env = os.environ if environ is None else environ
    for rank_var, world_var, local_var in _ENV_TRIPLES:
        if rank_var in env and world_var in env:
            try:
                rank, world = int(env[rank_var]), int(env[world_var])
                local = int(env.get(local_var, rank))
            except ValueError as exc:
                raise ValueError(f"{rank_var}/{world_var}/{local_var} must be integers: {exc}") from exc
            if world < 1 or not 0 <= rank < world or local < 0:
                raise ValueError(f"inconsistent {rank_var}={rank} {world_var}={world} {local_var}={local}")
            return Topology(rank, world, local)
    return Topology()


def bind_to_launcher() -> None:
    """Have the kernel SIGKILL this process when its parent (the launcher's agent) ends (Linux only).

    The parent may have ended before this call: when `gacc` started the launch it names itself in
    `$GACC_LAUNCHER_PID`, and a rank whose parent is no longer that process ends now.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return  # not allowed here (a sandbox): the agent still stops its ranks on every catchable signal
    launcher = os.environ.get("GACC_LAUNCHER_PID")
    if launcher and os.getppid() != int(launcher):
        os._exit(128 + signal.SIGKILL)


def end_rank(code: int) -> NoReturn:
    """End a rank of a launch with `code` without running the interpreter's and C++ libraries' teardown.

    By the time a rank returns, its part is delivered (rank 0 has it) or the results folder is written
    (rank 0), its cache transactions are committed and its files closed: teardown has nothing left to
    save. It can only do harm: a library thread still joinable when C++ static destructors run aborts
    the process (SIGABRT), which the launcher takes for a failed rank, answering it by killing the
    ranks still at work, rank 0 while it writes the results folder among them. Output is flushed first.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more to say there
            stream.flush()
    os._exit(code)


def finish(code: int) -> NoReturn:
    """End `python -m gacc_hf` with `code`: a rank of a launch through `end_rank`, any other process as usual."""
    try:
        launched = detect().world_size > 1
    except ValueError:  # malformed launcher variables: `gacc` has said so already
        launched = False
    if launched:
        end_rank(code)
    raise SystemExit(code)
