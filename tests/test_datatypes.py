"""Every kernel handles what MPI allows with datatypes, and refuses inter-communicators.

MPI requires only that the *type signatures* of a message's two sides match, not the
datatypes or counts (MPI-4.1, Section 3.3.1 "type matching", and for collectives Section
6.5: "the type signature associated with sendcounts[j], sendtype at the root must be
equal to the type signature associated with recvcount, recvtype at process j").  So the
root of a Scatterv may send one ``MPI_Type_contiguous(2, MPI_INT)`` per element while a
process receives 2 ``MPI_INT``; every process may use a different type; and the root may
pass ``MPI_IN_PLACE`` for its own block (Section 6.6 and 6.7).

Each case below runs a kernel of the algorithm table and the MPI library's collective on
the same arguments, buffers filled with a pattern first, and compares every byte of every
receive buffer (gaps of non-contiguous types included: a kernel must not write there).

Type pairs, "root side" = the root's vector of blocks (sendtype of Scatterv, recvtype of
Gatherv, recvtype of Allgatherv at every process), "own side" = a process's own block:

=============  ========================================  =================================
pair           root side                                 own side
=============  ========================================  =================================
same           MPI_INT, n_i                              MPI_INT, n_i
root-contig    contiguous(2, INT), n_i / 2               MPI_INT, n_i
root-vector    vector(2, 1, stride 3, INT), n_i / 2      MPI_INT, n_i
               (size 8 B, extent 16 B: gaps)
root-resized   INT resized to extent 8 B, n_i            MPI_INT, n_i
own-mixed      MPI_INT, n_i                              even ranks contiguous(2, INT),
                                                         n_i / 2; odd ranks INT resized
                                                         to 8 B, n_i (types differ by rank)
in-place       root-contig, with MPI_IN_PLACE at the root (every process for Allgatherv)
=============  ========================================  =================================

Block sizes n_i = 2, 0, 6, 4, 2, 0, ... ints: zero blocks included.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tuwviz.launch import local_mpi_command, mpi_env
from tuwviz.table import load_table

from conftest import REPO, SAMPLED_PS, hang_guard, sampled_roots

PAIRS = ("same", "root-contig", "root-vector", "root-resized", "own-mixed", "in-place")
COLLECTIVES = ("gatherv", "scatterv", "allgatherv")

SCRIPT = r'''
import ctypes, json, sys
import numpy as np
from mpi4py import MPI
from tuwviz import kernels

lib = kernels.load()
world = MPI.COMM_WORLD
cfg = json.loads(sys.argv[1])
PAIRS, FILL = cfg["pairs"], 0x5A
IN_PLACE = ctypes.c_void_p(-1)  # MPICH's MPI_IN_PLACE, (void *) -1
INT = MPI.INT
CONTIG2 = INT.Create_contiguous(2).Commit()
VECTOR = INT.Create_vector(2, 1, 3).Commit()              # 2 ints, stride 3: size 8, extent 16
RESIZED = INT.Create_resized(0, 8).Commit()               # 1 int, extent 8


def dtype_handle(t):
    return ctypes.c_int.from_address(MPI._addressof(t)).value


def root_side(pair, n):
    """(datatype, counts) of the root side for block sizes n (ints)."""
    if pair in ("root-contig", "in-place"):
        return CONTIG2, [c // 2 for c in n]
    if pair == "root-vector":
        return VECTOR, [c // 2 for c in n]
    if pair == "root-resized":
        return RESIZED, list(n)
    return INT, list(n)


def own_side(pair, c, rank):
    if pair == "own-mixed":
        return (CONTIG2, c // 2) if rank % 2 == 0 else (RESIZED, c)
    return INT, c


def vector_buf(t, counts):
    """Bytes for blocks of `counts` elements of `t` back to back, and displs (in extents)."""
    displs = list(np.cumsum([0] + counts[:-1]))
    lb, extent = t.Get_extent()
    return bytearray([FILL]) * max(1, sum(counts) * extent), [int(d) for d in displs]


def own_buf(t, count):
    lb, extent = t.Get_extent()
    return bytearray([FILL]) * max(1, count * extent)


def fill_pattern(buf, seed):
    """Distinct bytes per process and position: a misplaced byte shows."""
    buf[:] = ((np.arange(len(buf)) * 7 + seed * 31 + 1) % 251).astype(np.uint8).tobytes()


def first_difference(got, want):
    if len(got) != len(want):
        return f"output has {len(got)} bytes, the library's {len(want)}"
    diff = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    return f"{len(diff)} bytes differ from the library's, first at byte {diff[0]}" if diff else ""


def ptr(buf):
    return ctypes.c_void_p(ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf)))


def int_array(values):
    return (ctypes.c_int * max(1, len(values)))(*values)


def run(coll, fn, comm, pair, root, n):
    """Run collective `coll` (fn None: the library's) once; return this rank's output bytes."""
    rank, p = comm.rank, comm.size
    rtype, rcounts = root_side(pair, n)
    otype, ocount = own_side(pair, n[rank], rank)
    in_place = pair == "in-place"
    c = kernels.comm_handle(comm)
    if coll == "scatterv":
        sbuf, displs = vector_buf(rtype, rcounts) if rank == root else (bytearray(1), [0] * p)
        if rank == root:
            fill_pattern(sbuf, 1000)
        rbuf = own_buf(otype, ocount)
        if fn is None:
            send = [sbuf, rcounts, displs, rtype] if rank == root else None
            comm.Scatterv(send, MPI.IN_PLACE if in_place and rank == root else [rbuf, ocount, otype], root)
        else:
            rc = fn(ptr(sbuf), int_array(rcounts), int_array(displs), dtype_handle(rtype),
                    IN_PLACE if in_place and rank == root else ptr(rbuf), ocount,
                    dtype_handle(otype), root, c)
            assert rc == 0, f"return code {rc}"
        return bytes(sbuf) + bytes(rbuf) if rank == root else bytes(rbuf)
    sbuf = own_buf(otype, ocount)
    fill_pattern(sbuf, rank)
    everyone = coll == "allgatherv"
    if rank == root or everyone:
        rbuf, displs = vector_buf(rtype, rcounts)
        if in_place:  # the own block is already in place, in the root side's layout
            lb, extent = rtype.Get_extent()
            start = displs[rank] * extent
            piece = bytearray(rbuf)
            fill_pattern(piece, rank)
            rbuf[start:start + rcounts[rank] * extent] = piece[start:start + rcounts[rank] * extent]
    else:
        rbuf, displs = bytearray(1), [0] * p
    place = in_place and (rank == root or everyone)
    if fn is None:
        recv = [rbuf, rcounts, displs, rtype]
        if everyone:
            comm.Allgatherv(MPI.IN_PLACE if place else [sbuf, ocount, otype], recv)
        else:
            comm.Gatherv(MPI.IN_PLACE if place else [sbuf, ocount, otype],
                         recv if rank == root else None, root)
    else:
        args = [IN_PLACE if place else ptr(sbuf), ocount, dtype_handle(otype), ptr(rbuf),
                int_array(rcounts), int_array(displs), dtype_handle(rtype)]
        rc = fn(*args, c) if everyone else fn(*args, root, c)
        assert rc == 0, f"return code {rc}"
    return bytes(rbuf)


failures, cases = [], 0
rows = [r for r in kernels.algorithms() if not r.is_library and r.collective in cfg["collectives"]]
for p in cfg["ps"]:
    comm = world.Split(0 if world.rank < p else MPI.UNDEFINED, world.rank)
    if comm != MPI.COMM_NULL:
        n = [2 * ((i * 3 + 1) % 4) for i in range(p)]
        roots = sorted({0, p // 2, p - 1}) if cfg["sampled_roots"] else range(p)
        for row in rows:
            fn = getattr(lib, row.function)
            fn.restype = ctypes.c_int
            for root in (roots if row.collective != "allgatherv" else [0]):
                for pair in PAIRS:
                    want = run(row.collective, None, comm, pair, root, n)
                    try:
                        got = run(row.collective, fn, comm, pair, root, n)
                        ok, why = got == want, first_difference(got, want)
                    except AssertionError as exc:
                        ok, why = False, str(exc)
                    everyone = comm.allgather((ok, why))
                    cases += 1
                    if comm.rank == 0 and not all(o for o, _ in everyone):
                        bad = [(r, w) for r, (o, w) in enumerate(everyone) if not o]
                        failures.append(f"{row.collective}/{row.name} p={p} root={root} pair={pair}: "
                                        + "; ".join(f"rank {r} {w}" for r, w in bad[:3]))
        comm.Free()
    world.Barrier()
if world.rank == 0:
    print("RESULT " + json.dumps({"cases": cases, "failures": failures}), flush=True)
'''

INTERCOMM_SCRIPT = r'''
import ctypes, json
from mpi4py import MPI
from tuwviz import kernels

lib = kernels.load()
world = MPI.COMM_WORLD
# groups {0} and {1, 2}: an inter-communicator between them
local = world.Split(0 if world.rank == 0 else 1, world.rank)
inter = local.Create_intercomm(0, world, 1 if world.rank == 0 else 0, tag=7)
c = kernels.comm_handle(inter)
buf = (ctypes.c_int * 64)()
counts = (ctypes.c_int * 8)(*([1] * 8))
displs = (ctypes.c_int * 8)(*range(8))
t = ctypes.c_int.from_address(MPI._addressof(MPI.INT)).value
out = {}
for row in kernels.algorithms():
    if row.is_library:
        continue
    fn = getattr(lib, row.function)
    fn.restype = ctypes.c_int
    if row.collective == "scatterv":
        rc = fn(buf, counts, displs, t, buf, 1, t, 0, c)
    elif row.collective == "gatherv":
        rc = fn(buf, 1, t, buf, counts, displs, t, 0, c)
    else:  # allgatherv
        rc = fn(buf, 1, t, buf, counts, displs, t, c)
    out[row.collective + "/" + row.name] = [MPI.Get_error_class(rc) if rc else 0,
                                            MPI.Get_error_string(rc) if rc else ""]
res = world.gather({"rank": world.rank, "codes": out, "err_comm": MPI.ERR_COMM}, root=0)
if world.rank == 0:
    print("RESULT " + json.dumps(res), flush=True)
'''


def _run(script: str, nranks: int, *args: str, guard: float = 600) -> dict | list:
    r = subprocess.run([*local_mpi_command(), "-n", str(nranks), sys.executable, "-c", script, *args],
                       capture_output=True, text=True, timeout=hang_guard(guard), cwd=REPO,
                       env={**os.environ, **mpi_env(nranks, timed=False)})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = [l.split("RESULT ", 1)[1] for l in r.stdout.splitlines() if "RESULT " in l]
    assert len(lines) == 1, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(lines[0])


def _kernel_rows():
    return [r for r in load_table().rows() if not r.is_library and r.collective in COLLECTIVES]


@pytest.mark.parametrize("ps, sampled", [
    pytest.param(SAMPLED_PS, True, id="sampled"),
    pytest.param(tuple(range(1, 18)), False, id="p1-17-every-root", marks=pytest.mark.full)])
def test_every_kernel_equals_the_library_for_every_datatype_pair(ps, sampled):
    res = _run(SCRIPT, max(ps), json.dumps({"ps": list(ps), "pairs": PAIRS, "sampled_roots": sampled,
                                            "collectives": COLLECTIVES}))
    assert res["failures"] == [], "\n".join(res["failures"])
    rooted = sum(len(sampled_roots(p)) if sampled else p for p in ps)
    per_rooted, per_all = rooted * len(PAIRS), len(ps) * len(PAIRS)
    expected = sum(per_all if r.collective == "allgatherv" else per_rooted for r in _kernel_rows())
    assert res["cases"] == expected  # every kernel x p x root x pair ran


def test_the_reported_scatterv_case_at_p_4():
    """The issue's reproducer: root sends 1 contiguous(2, INT) per process, each receives 2 INT."""
    res = _run(SCRIPT, 4, json.dumps({"ps": [4], "pairs": ["root-contig"], "sampled_roots": False,
                                      "collectives": ["scatterv"]}))
    assert res["failures"] == [] and res["cases"] == 4 * 3  # 4 roots x 3 kernels


def test_every_kernel_refuses_an_inter_communicator():
    results = _run(INTERCOMM_SCRIPT, 3, guard=300)  # a hang would end at the guard
    keys = {f"{r.collective}/{r.name}" for r in load_table().rows() if not r.is_library}
    assert sorted(r["rank"] for r in results) == [0, 1, 2]
    for res in results:
        assert set(res["codes"]) == keys  # every kernel of the table, a new one unedited
        for key, (cls, text) in res["codes"].items():
            assert cls == res["err_comm"], (res["rank"], key, cls, text)
            assert "needs an intra-communicator" in text, (key, text)
