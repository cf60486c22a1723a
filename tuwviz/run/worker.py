"""Entry point of the MPI ranks that ``mpiexec`` starts for batch runs.

Run as ``mpiexec -n P python -m tuwviz.run.worker TASK.json``.  The task file holds a list of
cases (see :mod:`tuwviz.run.runner`).  Every rank prints one ``hello`` line; rank 0 prints one
``result`` line per case as soon as it is done, so the driver (:mod:`tuwviz.run.launch`) can
save it before the next case starts.  If any rank raises, it prints an ``error`` line
naming itself and aborts the whole job, so no rank is left waiting.

Each line is ``TUWVIZ <json>`` on standard output.  Only rank 0 writes there, apart from
a failing rank's ``error`` line, because mpiexec may interleave lines of different ranks.
"""
from __future__ import annotations

import json
import os
import sys
import time

from .. import kernels
from . import watch
from ..problems import case_ranks
from .runner import rank_info, run_case

PREFIX = "TUWVIZ "


def emit(kind: str, **fields) -> None:
    """Write one protocol line at once (the driver reads it live).

    One ``write`` of the whole line: with a single-machine launcher the ranks share the
    driver's pipe, and a line written in pieces could interleave with another rank's.
    """
    sys.stdout.flush()
    line = "\n" + PREFIX + json.dumps({"kind": kind, **fields}) + "\n"
    data = line.encode()
    while data:
        data = data[os.write(sys.stdout.fileno(), data):]


def quiet_barrier(comm, poll: float = 0.001) -> None:
    """A barrier that sleeps while it waits.

    MPI's blocking calls spin (or yield in a loop); ranks that sit out cases with a smaller
    p would otherwise take CPU from the ranks doing the work on an oversubscribed machine.
    """
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(poll)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    watch.connect(world.rank)
    try:
        with open(argv[0]) as f:
            task = json.load(f)
        ranks = world.gather(rank_info(world), root=0)
        if world.rank == 0:
            emit("hello", ranks=ranks)
        sizes = [case_ranks(case["problem"]) for case in task["cases"]]
        with kernels.pinned():  # the whole task runs one build of the kernels
            for i, case in enumerate(task["cases"]):
                if i and sizes[i] > sizes[i - 1]:  # ranks that sat out join: they waited asleep
                    quiet_barrier(world)
                result = run_case(world, case)
                if world.rank == 0:
                    emit("result", index=i, result=result)
        quiet_barrier(world)
        if world.rank == 0:
            emit("done")
        watch.goodbye()
    except BaseException as exc:  # noqa: BLE001 - any failure must end the whole job
        emit("error", rank=world.rank, type=type(exc).__name__, message=str(exc))
        sys.stdout.flush()
        world.Abort(3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
