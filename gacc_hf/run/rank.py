"""How a rank of a launch lives and ends: it dies with its launcher, and an interrupt ends it at once.

A rank is started by the launcher's agent in a session of its own, so a signal to the terminal's process
group or to `gacc` reaches it only through the agent. Should the agent itself be killed (SIGKILL, which
it cannot catch), the kernel kills the rank too (Linux `PR_SET_PDEATHSIG`), so no rank keeps computing
and writes a results folder after `gacc` has returned.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from gacc_hf.exiting import flush_output

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


def stop_quietly_on_interrupt() -> None:
    """Have SIGINT end this rank at once and quietly (set from the main thread only, as Python allows).

    The launcher's agent answers a signal to `gacc` by sending it to each rank's process group and reports
    the stop itself. Python's KeyboardInterrupt is no way to stop a rank: raised in whatever runs then, it
    can surface inside a callback of a C++ library (gloo, torch), which then aborts ("terminate called
    after throwing an instance of 'pybind11::error_already_set'"). Everything finished is in the cache by
    then, as after SIGTERM, which ends a rank at once too; child processes (`gacc_hf.run.aside`) go along.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _end_at_once)


def _end_at_once(signum: int, _frame: object) -> None:
    for child in multiprocessing.active_children():
        child.kill()
    flush_output()
    os._exit(128 + signum)
