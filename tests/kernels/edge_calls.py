"""Edge-case calls of every kernel, run as a plain MPI program; the driver is
``tests/kernels/test_edge_calls.py``.

MPICH's own collective tests found two bugs here: a circulant Allgather that failed a
zero-size call with NULL buffers on one rank while the others waited, and a circulant
Allreduce whose ranks disagreed on a floating-point sum.  These are the equivalent calls,
written for this project, for every row of the algorithm table and every communicator
size N from FIRST (default 1) to the world size (each on the first N ranks, the others
waiting asleep): ``mpiexec -n 17 python tests/kernels/edge_calls.py WHAT [FIRST]``.

``zero``: every kernel called with all counts 0 and NULL buffers (NULL count vectors where
MPI says they are not significant), and with MPI_IN_PLACE where the row allows it (the
ignored send count -1 and send type MPI_DATATYPE_NULL, as MPI permits); two-group kernels
on inter-communicators of every split.  Every rank must return MPI_SUCCESS.

``agree``: every Allreduce kernel on floating-point data whose sum depends on the order
of the additions (float and double, sum, product, max, min and a user-defined sum), in
place and not; every rank's result must be the same bits.

Rank 0 prints ``START name`` before each call (a hang shows where) and one ``RESULT
<json>`` line at the end: ``calls``, how many were made, and ``failed``, each with the
ranks' return codes or the differing results.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import sys

import numpy as np
from mpi4py import MPI

from tuwviz import kernels
from tuwviz.collectives import collective
from tuwviz.run.typepairs import REDUCTIONS, null_args, vector_length
from tuwviz.run.worker import quiet_barrier as wait_asleep

IN_PLACE = ctypes.c_void_p(-1)  # MPICH's MPI_IN_PLACE (checked at load time by tuwviz)
handle = kernels.comm_handle  # the C handle of an mpi4py communicator, datatype or operator


def selected(name: str) -> bool:
    """Whether call `name` runs: all, or those matching the regular expression $EDGE_ONLY
    (for debugging one call)."""
    return re.search(os.environ.get("EDGE_ONLY", ""), name) is not None


def run_zero(world, lib, first: int) -> tuple[int, list[dict]]:
    failed, calls = [], 0
    rows = kernels.algorithms()  # the library's own rows too: the calls are legal MPI
    byte, int_, sum_ = handle(MPI.BYTE), handle(MPI.INT), handle(MPI.SUM)
    for n in range(first, world.size + 1):
        sub = world.Split(0 if world.rank < n else MPI.UNDEFINED, world.rank)
        comms = [("intra", sub)]
        for k in sorted({1, n // 2}):  # two groups of n - k and k processes
            if not 1 <= k < n or sub == MPI.COMM_NULL:
                continue
            a = sub.rank < n - k
            local = sub.Split(0 if a else 1, sub.rank)
            comms.append((f"inter {n - k},{k}", local.Create_intercomm(0, sub, n - k if a else 0,
                                                                       tag=77)))
            local.Free()
        for kind, comm in comms:
            if comm == MPI.COMM_NULL:
                continue
            c = kernels.comm_handle(comm)
            for row in rows:
                if row.comm != "any" and (row.comm == "inter") != (kind != "intra"):
                    continue
                fn = getattr(lib, row.function)
                fn.restype = ctypes.c_int
                t = int_ if row.collective in REDUCTIONS else byte
                roots = sorted({0, comm.size - 1}) if collective(row.collective).rooted else [0]
                places = (False, True) if row.in_place and kind == "intra" else (False,)
                for root in roots:
                    for place in places:
                        name = (f"{row.collective}/{row.name} N={n} {kind}"
                                + (f" root={root}" if collective(row.collective).rooted else "")
                                + (" in-place" if place else ""))
                        if not selected(name):
                            continue
                        if sub.rank == 0:
                            print("START " + name, flush=True)
                        rc = fn(*null_args(row.collective, place, comm.rank, root, t, sum_,
                                           vector_length(comm)), c)
                        calls += sub.rank == 0
                        rcs = sub.gather(rc, root=0)  # over both groups
                        if sub.rank == 0 and any(rcs):
                            first = next(x for x in rcs if x)
                            failed.append({"call": name, "rc": rcs,
                                           "error": MPI.Get_error_string(first)})
            if kind != "intra":
                comm.Free()
        if sub != MPI.COMM_NULL:
            sub.Free()
        wait_asleep(world)
    return calls, failed


def _user_sum(inbuf, inoutbuf, datatype):
    t = np.float32 if datatype == MPI.FLOAT else np.float64
    out = np.frombuffer(inoutbuf, dtype=t)
    out += np.frombuffer(inbuf, dtype=t)


def run_agree(world, lib, first: int) -> tuple[int, list[dict]]:
    failed, calls = [], 0
    rows = [r for r in kernels.algorithms("allreduce") if r.comm != "inter"]
    user = MPI.Op.Create(_user_sum, commute=True)
    ops = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN, "user_sum": user}
    types = {"float": (MPI.FLOAT, np.float32), "double": (MPI.DOUBLE, np.float64)}
    count = 64
    for n in range(first, world.size + 1):
        sub = world.Split(0 if world.rank < n else MPI.UNDEFINED, world.rank)
        if sub != MPI.COMM_NULL:
            c = kernels.comm_handle(sub)
            rng = np.random.default_rng([7, sub.rank, n])
            for row in rows:
                fn = getattr(lib, row.function)
                fn.restype = ctypes.c_int
                for tname, (mpitype, nptype) in types.items():
                    for oname, op in ops.items():
                        # sums of values of different magnitudes round differently in
                        # every order; products of values near 1 likewise
                        if oname == "prod":
                            x = (1 + rng.uniform(-0.01, 0.01, count)).astype(nptype)
                        else:
                            x = (rng.uniform(-1, 1, count) * 10.0 ** rng.integers(-3, 4, count)
                                 ).astype(nptype)
                        for place in (False, True):
                            name = f"allreduce/{row.name} N={n} {tname}:{oname}" + (
                                " in-place" if place else "")
                            if sub.rank == 0:
                                print("START " + name, flush=True)
                            out = x.copy() if place else np.zeros(count, nptype)
                            send = IN_PLACE if place else ctypes.c_void_p(x.ctypes.data)
                            rc = fn(send, ctypes.c_void_p(out.ctypes.data), count,
                                    handle(mpitype), handle(op), c)
                            calls += sub.rank == 0
                            got = sub.gather((rc, out.tobytes()), root=0)
                            if sub.rank != 0:
                                continue
                            rcs = [g[0] for g in got]
                            if any(rcs):
                                failed.append({"call": name, "rc": rcs})
                                continue
                            differ = [r for r, g in enumerate(got) if g[1] != got[0][1]]
                            if differ:
                                mine = np.frombuffer(got[0][1], nptype)
                                theirs = np.frombuffer(got[differ[0]][1], nptype)
                                i = int(np.nonzero(mine.view(np.uint8).reshape(count, -1) !=
                                                   theirs.view(np.uint8).reshape(count, -1))[0][0])
                                failed.append({"call": name, "ranks_differing_from_0": differ,
                                               "element": i, "rank0": float(mine[i]),
                                               f"rank{differ[0]}": float(theirs[i])})
            sub.Free()
        wait_asleep(world)
    user.Free()
    return calls, failed


def main() -> int:
    world = MPI.COMM_WORLD
    lib = kernels.load()
    what = sys.argv[1]
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 1  # the smallest N
    calls, failed = {"zero": run_zero, "agree": run_agree}[what](world, lib, first)
    calls = world.reduce(calls, root=0)  # counted by rank 0 of each communicator size
    if world.rank == 0:
        print("RESULT " + json.dumps({"calls": calls, "failed": failed}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
