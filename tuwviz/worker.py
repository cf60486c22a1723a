"""Entry point of the MPI ranks that ``mpiexec`` starts for batch runs.

Run as ``mpiexec -n P python -m tuwviz.worker TASK.json``.  The task file holds a list of
cases (see :mod:`tuwviz.runner`).  Every rank prints one ``hello`` line; rank 0 prints one
``result`` line per case as soon as it is done, so the driver (:mod:`tuwviz.launch`) can
save it before the next case starts.  If any rank raises, it prints an ``error`` line
naming itself and aborts the whole job, so no rank is left waiting.

Each line is ``TUWVIZ <json>`` on standard output.  Only rank 0 writes there, apart from
a failing rank's ``error`` line, because mpiexec may interleave lines of different ranks.
"""
from __future__ import annotations

import json
import sys

PREFIX = "TUWVIZ "


def emit(kind: str, **fields) -> None:
    """Print one protocol line and flush it at once (the driver reads it live)."""
    print("\n" + PREFIX + json.dumps({"kind": kind, **fields}), flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from mpi4py import MPI

    from . import watch
    from .runner import rank_info, run_case

    world = MPI.COMM_WORLD
    watch.connect(world.rank)
    try:
        with open(argv[0]) as f:
            task = json.load(f)
        ranks = world.gather(rank_info(world), root=0)
        if world.rank == 0:
            emit("hello", ranks=ranks)
        for i, case in enumerate(task["cases"]):
            result = run_case(world, case)
            if world.rank == 0:
                emit("result", index=i, result=result)
        world.Barrier()
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
