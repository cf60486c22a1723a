"""Datatype pairs: run a kernel with the root's and each process's own datatypes different.

MPI requires only that the *type signatures* of the two sides of a message match, not the
datatypes or counts (MPI-4.1, Section 3.3.1, and for collectives Section 6.5: "the type
signature associated with sendcounts[j], sendtype at the root must be equal to the type
signature associated with recvcount, recvtype at process j").  A kernel that counts what
an inner process forwards in units of someone else's datatype passes every case with one
datatype on both sides and fails these (the scatterv/binomial bug of issue 21).

Here the *root side* is the vector of all blocks (the root's sendbuf of Scatter(v), the
root's recvbuf of Gather(v), every recvbuf of Allgather(v)) and the *own side* is one
process's own block.  A problem's count ``c_i`` is, in a pair case, ``c_i`` *units* of two
ints, described on each side as:

=============  ==========================================  =================================
pair           root side                                   own side
=============  ==========================================  =================================
same           MPI_INT, 2 c_i                              MPI_INT, 2 c_i
root-contig    contiguous(2, INT), c_i                     MPI_INT, 2 c_i
root-vector    vector(2, 1, stride 3, INT), c_i            MPI_INT, 2 c_i
               (size 8 B, extent 16 B: gaps)
root-resized   INT resized to extent 8 B, 2 c_i (gaps)     MPI_INT, 2 c_i
own-mixed      MPI_INT, 2 c_i                              even ranks contiguous(2, INT), c_i;
                                                           odd ranks INT resized to 8 B, 2 c_i
in-place       root-contig, with MPI_IN_PLACE at the root (at every process for Allgather(v))
=============  ==========================================  =================================

Two more "pairs" are about the buffers, not the datatypes, and apply to every collective,
on one group and on two: ``null``, a zero-size call with every count 0 and every buffer
NULL (count vectors NULL where only the root reads them), as MPI allows; and
``null-in-place``, the same with MPI_IN_PLACE where MPI allows it, the ignored count -1
and datatype MPI_DATATYPE_NULL (MPICH's own allgather3 test ends with such a call).  Every
rank must return MPI_SUCCESS, and none may wait for another that has returned: there is no
output to compare.  Data-movement collectives use MPI_BYTE, reductions MPI_INT and MPI_SUM
(:func:`null_args`).

Reductions have one datatype (the operator's), so only two of the others apply to them:
``same``, and ``in-place`` with MPI_INT and MPI_SUM (sums of any ints are exact in any
order): MPI_IN_PLACE at every process (Allreduce, Reduce_scatter(_block): the input is in
recvbuf, all ``p`` blocks of it for the reduce-scatters) or at the root (Reduce), and
the result compared: all of recvbuf for Allreduce and Reduce, the process's own block at
the start of recvbuf for Reduce_scatter(_block) (MPI leaves the rest undefined).

The library's collective (the MPI function itself, called with exactly the same arguments)
and the kernel each run on buffers filled with the same byte pattern; every byte of each
process's output buffers is compared, gaps of non-contiguous types included (a kernel
must not write there), and for Scatter(v) the root's send buffer too.  :func:`run_pair`
runs on the ranks; :mod:`tuwviz.experiments.verify` makes the cases (``tuwviz verify --types``).

Examples
--------
>>> PAIRS[0], len(PAIRS)
('same', 8)
>>> pairs_for("scatterv") == PAIRS, pairs_for("allreduce")
(True, ('same', 'in-place', 'null', 'null-in-place'))
>>> pairs_for("allgather", inter=True)
('same', 'null')
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..collectives import collective
from ..problems import FILL
from .. import kernels
from . import watch
from ..errors import KernelError

__all__ = ["PAIRS", "NULL_PAIRS", "COLLECTIVES", "REDUCTIONS", "pairs_for", "check_pairs",
           "null_args", "vector_length", "run_pair"]

#: Every datatype pair, "same" first (the plain case with the problem's own datatype).
PAIRS = ("same", "root-contig", "root-vector", "root-resized", "own-mixed", "in-place", "null",
         "null-in-place")

#: The zero-size calls with NULL buffers, without and with MPI_IN_PLACE.
NULL_PAIRS = ("null", "null-in-place")

#: Collectives whose two sides may use different datatypes here (the data-movement ones;
#: a reduction's operator works on one datatype).
COLLECTIVES = ("gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv")

#: Reductions: the pairs "same" and "in-place" apply.
REDUCTIONS = ("allreduce", "reduce", "reduce_scatter_block", "reduce_scatter")


def pairs_for(collective_name: str, inter: bool = False,
              in_place: bool = True) -> tuple[str, ...]:
    """The datatype pairs that apply to a collective ("same", "in-place" and the null pairs
    for reductions; "same" and "null" on two groups, where MPI has no MPI_IN_PLACE), for an
    algorithm that takes MPI_IN_PLACE (`in_place`; else without ``null-in-place``).

    >>> pairs_for("allreduce"), pairs_for("allreduce", in_place=False)[-1]
    (('same', 'in-place', 'null', 'null-in-place'), 'null')
    """
    if inter:
        return ("same", "null")
    if collective_name in COLLECTIVES:
        pairs = PAIRS
    else:
        pairs = ("same", "in-place", *NULL_PAIRS) if collective_name in REDUCTIONS else ("same",)
    return pairs if in_place else tuple(t for t in pairs if t != "null-in-place")


def check_pairs(names) -> list[str]:
    """`names` as a list of known pairs, or ValueError listing the valid ones.

    >>> check_pairs(["same", "in-place"])
    ['same', 'in-place']
    >>> check_pairs(["root-vectr"])
    Traceback (most recent call last):
    ...
    ValueError: unknown datatype pair 'root-vectr'; valid pairs: same, root-contig, root-vector, root-resized, own-mixed, in-place, null, null-in-place
    """
    out = []
    for n in names:
        if n not in PAIRS:
            raise ValueError(f"unknown datatype pair {n!r}; valid pairs: {', '.join(PAIRS)}")
        out.append(n)
    return out


@dataclass
class _Side:
    """One side's datatype and how many of it make one unit (two ints) of the problem."""

    dtype: object
    per_unit: int  # elements of dtype per unit: 1 for a 2-int type, 2 for an int type


def _types():
    from mpi4py import MPI

    if not hasattr(_types, "cache"):
        INT = MPI.INT
        _types.cache = {
            "int": INT,
            "contig": INT.Create_contiguous(2).Commit(),      # 2 ints, no gaps
            "vector": INT.Create_vector(2, 1, 3).Commit(),    # 2 ints, size 8, extent 16
            "resized": INT.Create_resized(0, 8).Commit(),     # 1 int, extent 8
        }
    return _types.cache


def _root_side(pair: str) -> _Side:
    t = _types()
    return {"root-contig": _Side(t["contig"], 1), "in-place": _Side(t["contig"], 1),
            "root-vector": _Side(t["vector"], 1), "root-resized": _Side(t["resized"], 2)
            }.get(pair, _Side(t["int"], 2))


def _own_side(pair: str, rank: int) -> _Side:
    t = _types()
    if pair == "own-mixed":
        return _Side(t["contig"], 1) if rank % 2 == 0 else _Side(t["resized"], 2)
    return _Side(t["int"], 2)


def _extent(dtype) -> int:
    return dtype.Get_extent()[1]


def _pattern(n: int, seed: int) -> bytearray:
    """Distinct bytes per process and position (never FILL's pattern), so a misplaced byte
    shows."""
    return bytearray(((np.arange(n) * 7 + seed * 31 + 1) % 251).astype(np.uint8).tobytes())


def _ptr(buf: bytearray):
    return ctypes.c_void_p(ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf)))


def _ints(values) -> ctypes.Array:
    return (ctypes.c_int * max(1, len(values)))(*values)


_IN_PLACE = ctypes.c_void_p(-1)  # MPICH's MPI_IN_PLACE, (void *) -1 (checked at load time)


def _call_reduction(fn, coll: str, comm, root: int, units: list[int], seed: int):
    """The in-place pair of a reduction: MPI_INT, MPI_SUM, the input in recvbuf."""
    from mpi4py import MPI

    rank, p = comm.rank, comm.size
    count = 2 * max(units)  # a unit is two ints; the regular reductions pad to the largest
    c, t, op = (kernels.comm_handle(x) for x in (comm, MPI.INT, MPI.SUM))
    if coll == "reduce":
        place = rank == root
        data = _pattern(max(1, count * 4), rank + seed)
        buf = data if place else bytearray([FILL]) * max(1, count * 4)
        rc = fn(_IN_PLACE if place else _ptr(data), _ptr(buf), count, t, op, root, c)
        return rc, ([("its receive buffer", bytes(buf), None)] if place else [])
    if coll == "reduce_scatter":  # irregular: all blocks in, my block out
        counts = [2 * u for u in units]
        buf = _pattern(max(1, sum(counts) * 4), rank + seed)
        rc = fn(_IN_PLACE, _ptr(buf), _ints(counts), t, op, c)
        return rc, [("its receive buffer", bytes(buf[:counts[rank] * 4]), None)]
    n = count * (p if coll == "reduce_scatter_block" else 1)
    buf = _pattern(max(1, n * 4), rank + seed)
    rc = fn(_IN_PLACE, _ptr(buf), count, t, op, c)
    return rc, [("its receive buffer", bytes(buf[:count * 4]), None)]


def null_args(coll: str, in_place: bool, rank: int, root: int, t: int, op: int,
              n: int) -> tuple:
    """The arguments of a zero-size call of `coll` by `rank` (the MPI-standard signature
    without the communicator): every count 0, every buffer NULL, count vectors (`n` zeros,
    `n` the entries MPI reads: :func:`vector_length`) NULL where only the root reads them;
    with `in_place` MPI_IN_PLACE where MPI allows it (at the root of a rooted collective,
    at every process otherwise), with the count -1 and the datatype MPI_DATATYPE_NULL that
    MPI then ignores.  `t`, `op`: C handles of the datatype and operator.

    >>> null_args("allreduce", False, 1, 0, 7, 9, 4)
    (None, None, 0, 7, 9)
    >>> null_args("gatherv", False, 1, 0, 7, 9, 4)
    (None, 0, 7, None, None, None, 7, 0)
    >>> counts = null_args("allgatherv", False, 1, 0, 7, 9, 48)[4]
    >>> len(counts), sum(counts)
    (48, 0)
    """
    if n < 1:
        raise ValueError(f"a count vector has one entry per process: n={n} is not positive")
    z = (ctypes.c_int * n)()
    zr = z if rank == root else None
    rooted = collective(coll).rooted
    place = in_place and (rank == root or not rooted)
    if place:
        from mpi4py import MPI

        none = kernels.comm_handle(MPI.DATATYPE_NULL)
    if coll == "gather":
        return (_IN_PLACE, -1, none, None, 0, t, root) if place else (None, 0, t, None, 0, t, root)
    if coll == "gatherv":
        return ((_IN_PLACE, -1, none, None, z, z, t, root) if place
                else (None, 0, t, None, zr, zr, t, root))
    if coll == "scatter":
        return (None, 0, t, _IN_PLACE, -1, none, root) if place else (None, 0, t, None, 0, t, root)
    if coll == "scatterv":
        return ((None, z, z, t, _IN_PLACE, -1, none, root) if place
                else (None, zr, zr, t, None, 0, t, root))
    if coll == "allgather":
        return (_IN_PLACE, -1, none, None, 0, t) if place else (None, 0, t, None, 0, t)
    if coll == "allgatherv":
        return (_IN_PLACE, -1, none, None, z, z, t) if place else (None, 0, t, None, z, z, t)
    send = _IN_PLACE if place else None
    if coll == "reduce":
        return (send, None, 0, t, op, root)
    if coll in ("allreduce", "reduce_scatter_block"):
        return (send, None, 0, t, op)
    if coll == "reduce_scatter":
        return (send, None, z, t, op)
    raise ValueError(f"no zero-size call for collective {coll!r}")


def _call_null(fn, coll: str, comm, pair: str, root: int):
    """A null pair: the zero-size call (:func:`null_args`); no output to compare."""
    from mpi4py import MPI

    t = MPI.INT if coll in REDUCTIONS else MPI.BYTE
    args = null_args(coll, pair == "null-in-place", comm.rank, root, kernels.comm_handle(t),
                     kernels.comm_handle(MPI.SUM), vector_length(comm))
    return fn(*args, kernels.comm_handle(comm)), []


def vector_length(comm) -> int:
    """How many entries MPI reads from a count or displacement vector of a collective on
    `comm` (an mpi4py communicator): one per process of the group whose blocks it counts,
    the communicator's size, or on an inter-communicator the other group's size."""
    return comm.Get_remote_size() if comm.Is_inter() else comm.Get_size()


def _call(fn, coll: str, comm, pair: str, root: int, units: list[int], seed: int):
    """Call `fn` (the library's MPI function or a kernel) once; return this process's
    output buffers as [(name, bytes, root-side layout or None)]."""

    if pair in NULL_PAIRS:
        return _call_null(fn, coll, comm, pair, root)
    if coll in REDUCTIONS:
        return _call_reduction(fn, coll, comm, root, units, seed)
    rank = comm.rank
    regular, rooted = not collective(coll).irregular, collective(coll).rooted
    rs, own = _root_side(pair), _own_side(pair, rank)
    rcounts = [u * rs.per_unit for u in units]
    ocount = units[rank] * own.per_unit
    rext, oext = _extent(rs.dtype), _extent(own.dtype)
    displs = [int(d) for d in np.cumsum([0] + rcounts[:-1])]
    layout = (rext, rcounts, displs)
    in_place = pair == "in-place"
    c = kernels.comm_handle(comm)
    rt, ot = kernels.comm_handle(rs.dtype), kernels.comm_handle(own.dtype)
    vec = bytearray([FILL]) * max(1, sum(rcounts) * rext)
    mine = bytearray([FILL]) * max(1, ocount * oext)
    is_root = rank == root or not rooted
    if coll in ("scatter", "scatterv"):
        if rank == root:
            vec = _pattern(len(vec), 1000 + seed)
        else:
            vec = bytearray(1)
        place = in_place and rank == root
        recv = _IN_PLACE if place else _ptr(mine)
        if regular:
            rc = fn(_ptr(vec), rcounts[0], rt, recv, ocount, ot, root, c)
        else:
            rc = fn(_ptr(vec), _ints(rcounts), _ints(displs), rt, recv, ocount, ot, root, c)
        out = [("its receive buffer", bytes(mine), None)]
        if rank == root:
            out.append(("the root's send buffer", bytes(vec), layout))
        return rc, out
    # gather-like: every process sends its own block
    mine = _pattern(len(mine), rank + seed)
    if not is_root:
        vec = bytearray(1)
    place = in_place and is_root
    if place:  # the own block is already in place, in the root side's layout
        start, size = displs[rank] * rext, rcounts[rank] * rext
        vec[start:start + size] = _pattern(len(vec), rank + seed)[start:start + size]
    send = _IN_PLACE if place else _ptr(mine)
    args = [send, ocount, ot, _ptr(vec)]
    args += [rcounts[0], rt] if regular else [_ints(rcounts), _ints(displs), rt]
    rc = fn(*args, root, c) if rooted else fn(*args, c)
    return rc, ([("its receive buffer", bytes(vec), layout)] if is_root else [])


def _difference(rank: int, name: str, want: bytes, got: bytes, layout, pair: str) -> dict | None:
    a, b = np.frombuffer(want, np.uint8), np.frombuffer(got, np.uint8)
    if a.size != b.size:
        raise AssertionError(f"{name}: {b.size} bytes, the library's {a.size}")  # same layout
    bad = np.nonzero(a != b)[0]
    if not bad.size:
        return None
    i = int(bad[0])
    block = rank  # a buffer without a layout holds the process's own block
    if layout is not None:  # whose block the byte is in (None: a gap between blocks)
        ext, counts, displs = layout
        block = next((r for r in range(len(counts))
                      if displs[r] * ext <= i < (displs[r] + counts[r]) * ext), None)
    return {"rank": rank, "pair": pair, "buffer": name, "byte": i, "expected": int(a[i]),
            "got": int(b[i]), "never_written": bool(b[i] == FILL and a[i] != FILL),
            "differing_bytes": int(bad.size), "bytes": int(a.size), "block": block}


def run_pair(comm, collective_name: str, function: str, pair: str, root: int,
             units: list[int], seed: int = 0, kcomm=None) -> dict | None:
    """Run kernel `function` and the library's collective with datatype pair `pair`.

    Collective over `comm`; the collectives run on `kcomm` (default `comm`; for two
    groups the inter-communicator, only the null pair).  `units` are the problem's block
    counts (units of two ints).
    Returns on rank 0 ``{"ok": bool, "mismatches": [...]}``, one mismatch per process
    whose output differs (its rank, the pair, which buffer, the first differing byte with
    the expected and received values, whether it was never written, how many bytes
    differ and in whose block); None on the other ranks.

    Raises
    ------
    KernelError
        If the kernel returns an MPI error code (on the ranks that got it).
    """
    from mpi4py import MPI

    kcomm = comm if kcomm is None else kcomm
    if pair not in pairs_for(collective_name, kcomm.Is_inter()) or pair == "same":
        raise ValueError(f"datatype pair {pair!r} does not apply to {collective_name}"
                         + (" on two groups" if kcomm.Is_inter() else ""))
    lib = kernels.load()
    reference = getattr(lib, collective(collective_name).mpi_name)
    kernel = getattr(lib, function)
    reference.restype = kernel.restype = ctypes.c_int
    rc, want = _call(reference, collective_name, kcomm, pair, root, units, seed)
    if rc:
        raise KernelError(f"the library's {collective_name} failed with datatype pair {pair}: "
                          f"{MPI.Get_error_string(rc)}")
    with watch.inside():
        rc, got = _call(kernel, collective_name, kcomm, pair, root, units, seed)
    if rc:
        raise KernelError(f"rank {comm.rank}: {function} returned MPI error {rc} with datatype "
                          f"pair {pair}: {MPI.Get_error_string(rc)}")
    found = None
    for (name, w, layout), (_, g, _) in zip(want, got):
        found = found or _difference(comm.rank, name, w, g, layout, pair)
    everyone = comm.gather(found, root=0)
    if comm.rank != 0:
        return None
    found = [m for m in everyone if m]
    return {"ok": not found, "mismatches": found}
