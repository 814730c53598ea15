"""`gacc run --num-processes N`: the `gacc` process itself is the launcher of its N ranks.

`accelerate launch` runs inside `gacc` (not as a child process), so its torchrun agent is `gacc`:
- a signal to `gacc` (SIGINT, SIGTERM, SIGHUP, SIGQUIT) is caught by the agent, which sends it to every
  rank, waits for them (SIGKILL after 30 s) and only then lets `gacc` end; a rank never outlives `gacc`,
  and one killed with SIGKILL takes its ranks along (`gacc_hf.run.rank.bind_to_launcher`);
- a rank that dies is reported in one line naming the rank and the signal, under its own exit code.
The processes are capped at the cores this process may use: more ranks than cores compute nothing
sooner (they share the cores) but each holds its own models in memory, and the results are the same for
any number of ranks, so a larger request is run on fewer ranks with a warning rather than refused.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence

from gacc_hf.errors import RANK_DIED

log = logging.getLogger("gacc_hf")

RESUME_HINT = "rerun the same command to resume: everything stored in the cache is reused"


class RankDied(RuntimeError):
    """A rank of the launch ended by a signal (killed, aborted, out of memory) before the run was done."""

    exit_code = RANK_DIED


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it), at least 1."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)


def capped_processes(requested: int, cores: int | None = None) -> int:
    """`requested`, or the usable cores when it is more (with a one-line warning saying so)."""
    cores = usable_cores() if cores is None else cores
    if requested <= cores:
        return requested
    log.warning(
        "--num-processes %d is more than the %d core(s) this process may use: running %d (more would only "
        "add a copy of the models per process; the results do not depend on the number)",
        requested,
        cores,
        cores,
    )
    return cores


def free_port() -> int:
    """A TCP port free on this machine now, for the rendezvous of a local launch."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def strip_option(argv: Sequence[str], option: str) -> list[str]:
    """`argv` without `option VALUE` / `option=VALUE`.

    >>> strip_option(["run", "--num-processes", "2", "--seed=1"], "--num-processes")
    ['run', '--seed=1']
    """
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(option + "="):
            out.append(arg)
    return out


def launch_arguments(argv: Sequence[str], num_processes: int, port: int) -> list[str]:
    """The `accelerate launch` arguments that run `python -m gacc_hf <argv>` on `num_processes` local ranks.

    `--multi_gpu` is what makes accelerate start one process per rank through torchrun; on a machine
    without GPUs the ranks simply run on the CPU (one thread each, as torchrun sets OMP_NUM_THREADS=1).
    """
    if num_processes < 2:
        raise ValueError(f"num_processes must be >= 2 to launch, got {num_processes}")
    return [
        "--multi_gpu",
        "--num_processes",
        str(num_processes),
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(port),
        "-m",
        "gacc_hf",
        *argv,
    ]


def describe_failure(rank: int, exitcode: int) -> str:
    """One line on a rank's end: the signal that killed it, or the exit code it chose.

    >>> describe_failure(1, -6)
    'rank 1 died of SIGABRT'
    >>> describe_failure(0, 2)
    'rank 0 ended with exit code 2'
    """
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"rank {rank} died of {name}"
    return f"rank {rank} ended with exit code {exitcode}"


def launch(argv: Sequence[str], num_processes: int) -> int:
    """Run `gacc <argv>` (without `--num-processes`) on `num_processes` local ranks; the exit status.

    A rank that exits with a code of its own has printed why; that code is returned. A rank killed by a
    signal raises RankDied. A signal to this process stops every rank first, then returns 128 + signal.
    """
    from accelerate.commands.launch import launch_command, launch_command_parser
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    args = launch_command_parser().parse_args(
        launch_arguments(strip_option(argv, "--num-processes"), num_processes, free_port())
    )
    os.environ["GACC_LAUNCHER_PID"] = str(os.getpid())
    _quiet_agent()
    try:
        launch_command(args)
    except ChildFailedError as exc:
        rank, failure = exc.get_first_failure()
        if failure.exitcode > 0:
            return failure.exitcode
        message = f"{describe_failure(rank, failure.exitcode)}; the other ranks were stopped; {RESUME_HINT}"
        raise RankDied(message) from None
    except SystemExit as exc:  # accelerate's answer to a signal, once the agent has stopped every rank
        code = exc.code if isinstance(exc.code, int) else 1
        if code > 128:
            name = signal.Signals(code - 128).name if code - 128 in signal.valid_signals() else f"signal {code - 128}"
            print(f"gacc run: stopped by {name}: every rank was stopped; {RESUME_HINT}", file=sys.stderr)
        return code
    finally:
        del os.environ["GACC_LAUNCHER_PID"]
    return 0


def _quiet_agent() -> None:
    """The torchrun agent's notes (workers started, stopped, "failed (exitcode: N)") kept back unless gacc
    itself logs DEBUG: a rank that ends with a code of its own has said why, and gacc says what happened to
    the ranks in its own line."""
    import torch.distributed.run  # noqa: F401  (creates the agent's loggers)

    level = logging.DEBUG if log.isEnabledFor(logging.DEBUG) else logging.CRITICAL
    for name in list(logging.Logger.manager.loggerDict):
        if name.startswith("torch.distributed"):
            logging.getLogger(name).setLevel(level)
