"""Engine side: run one case of a collective on the MPI ranks of a communicator.

This module runs inside every MPI process (an ipyparallel engine or a rank started by
``mpiexec``).  A *case* is a JSON-able dict::

    {"mode": "verify" | "measure" | "trace",
     "problem": Problem.to_dict(), "algorithm": "linear",
     "warmup": 10, "reps": 75, "time_limit": 0.0, "data_seed": 0,
     "count_override": {"rank": 2, "count": 5},      # optional, for tests of bad input
     "params": {"block_bytes": 4096},                # optional tuning parameters
     "types": "root-contig",                         # optional datatype pair (verify)
     "data": "random"}                               # optional: random doubles (verify)

:func:`run_case` takes the world communicator, splits off the first ``p`` ranks, runs the
case there and returns its result on world rank 0 (``None`` elsewhere).  Every rank first
prepares its buffers locally and all ranks agree that this worked before any kernel runs,
so a failure on one rank raises on all of them instead of leaving the others waiting.
For irregular collectives the ranks then check that every rank's own count agrees with
the root's count vector (MPI requires it; a kernel given disagreeing counts may hang or
truncate), and all raise the same one-line :class:`~tuwviz.errors.RankFailure` if not.
``count_override`` makes one rank pass a different own count (sendcount, or recvcount for
scatterv) to that check, to test it; a case that passes the check runs with true counts.
``params`` are the algorithm's tuning parameters (:mod:`tuwviz.params`), set in C on
every rank just before the kernel runs and reset to the defaults afterwards.  ``types``
other than ``"same"`` runs a verify case with the root's and the processes' datatypes
different (:mod:`tuwviz.run.typepairs`), the problem's counts as units of two ints.
``data`` ``"random"`` fills a reduction's doubles from (-1, 1), of many magnitudes, instead of small
integers; results are then compared within :data:`tuwviz.problems.RANDOM_SUM_TOLERANCE`.
"""
from __future__ import annotations

import ctypes
import os
import socket
from dataclasses import dataclass

import numpy as np

from .. import kernels
from . import reaper, slurm, typepairs, watch
from .. import params as tuning
from ..kernels import setters
from ..collectives import collective
from ..errors import KernelError, RankFailure, TimeLimitExceeded
from ..problems import DATATYPES, FILL, MAX_COUNT, OPS, Problem

__all__ = ["STATISTICS", "Buffers", "check_counts", "make_buffers", "run_case", "run_kernel",
           "rank_info", "summarize"]

_NUMPY_TYPES = {"byte": np.uint8, "int": np.int32, "double": np.float64}


@dataclass
class Buffers:
    """A rank's arguments for one call of a collective (numpy arrays kept alive here)."""

    send: np.ndarray
    recv: np.ndarray
    sendcount: int = 0
    recvcount: int = 0
    sendcounts: np.ndarray | None = None
    sdispls: np.ndarray | None = None
    recvcounts: np.ndarray | None = None
    rdispls: np.ndarray | None = None
    has_output: bool = True  # False where MPI leaves recvbuf undefined (non-roots)


def _data(problem: Problem, rank: int, n: int, seed: int, data: str = "small") -> np.ndarray:
    rng = np.random.default_rng([seed, rank, problem.p])
    t = _NUMPY_TYPES[problem.datatype]
    if problem.datatype == "byte":
        return rng.integers(0, 256, size=n, dtype=np.uint8)
    if data == "random":  # doubles in (-1, 1): sums depend on the order (RANDOM_SUM_TOLERANCE)
        # of magnitudes 2^-k, k < 24: uniform doubles alone lie on a grid of 2^-52 and
        # mostly add up exactly in any order, which hid rank-dependent orders
        return (rng.uniform(-1.0, 1.0, size=n) * 2.0 ** -rng.integers(0, 24, size=n)).astype(t)
    # small integers: sums are exact in any order, so reductions compare bit for bit
    return rng.integers(-1000, 1000, size=n).astype(t)


def _empty(problem: Problem, n: int) -> np.ndarray:
    a = np.empty(n, dtype=_NUMPY_TYPES[problem.datatype])
    a.view(np.uint8)[:] = FILL
    return a


INT_MAX = MAX_COUNT  # MPI's counts and displacements are C ints


def _prefix(counts) -> np.ndarray:
    """Displacements as prefix sums of `counts`, as C ints.

    Raises ValueError (before anything is allocated) if a displacement does not fit an int:
    an unchecked cast turned (2**30, 2**30, 5) into displacements [0, 2**30, -2**31].
    """
    sums = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))[:-1]])
    if len(sums) and int(sums.max()) > INT_MAX:
        r = int(np.argmax(sums > INT_MAX))
        raise ValueError(f"displacement of rank {r} would be {int(sums[r])} elements, more "
                         f"than MPI's int displacements can address ({INT_MAX}); counts "
                         f"sum to {int(np.sum(counts, dtype=np.int64))}")
    return sums.astype(np.int32)


def _check_sizes(problem: Problem) -> np.ndarray:
    """The problem's block counts as C ints, or ValueError naming what does not fit.

    Checked before any buffer is allocated: per-rank counts must fit an int, displacements
    (prefix sums) too, and buffer sizes in bytes must fit the address space (int64).
    """
    counts = np.asarray(problem.block_counts(), dtype=object)
    big = [(r, int(c)) for r, c in enumerate(counts) if not 0 <= int(c) <= INT_MAX]
    if big:
        r, c = big[0]
        raise ValueError(f"count of rank {r} is {c}: MPI counts are ints in 0..{INT_MAX}")
    item = np.dtype(_NUMPY_TYPES[problem.datatype]).itemsize
    total = sum(int(c) for c in counts)
    regular = max((int(c) for c in counts), default=0) * problem.p
    if max(total, regular) * item > 2**63 - 1:
        raise ValueError(f"buffers of {max(total, regular)} elements of {item} bytes "
                         f"overflow a 64-bit size")
    if problem.collective in ("gatherv", "scatterv", "allgatherv", "reduce_scatter"):
        _prefix(counts.astype(np.int64))
    elif problem.collective in ("gather", "scatter", "allgather", "reduce_scatter_block"):
        if regular > INT_MAX:  # displacement of the last block: (p - 1) block
            raise ValueError(f"{problem.p} blocks of {max(counts)} elements are {regular} "
                             f"elements, more than MPI's int counts can address ({INT_MAX})")
    return counts.astype(np.int32)


def make_buffers(problem: Problem, rank: int, data_seed: int = 0, data: str = "small") -> Buffers:
    """Send and receive buffers of `rank` for `problem`, with deterministic random data
    (small integers, or with `data` ``"random"`` doubles in (-1, 1) of many magnitudes).

    Irregular collectives use ``problem.counts``; regular ones use the padded block
    ``max(counts)`` on every rank.  Displacements are the prefix sums of the counts.

    Raises
    ------
    ValueError
        If a count, a displacement or a buffer size cannot be represented (MPI's ints),
        before anything is allocated.
    """
    if problem.inter:
        return _inter_buffers(problem, rank, data_seed, data)
    name, p, root = problem.collective, problem.p, problem.root
    counts = _check_sizes(problem)
    blk, mine, total = problem.block, int(counts[rank]), int(counts.sum())
    is_root = rank == root
    if name == "gather":
        return Buffers(_data(problem, rank, blk, data_seed, data), _empty(problem, p * blk if is_root else 0),
                       sendcount=blk, recvcount=blk, has_output=is_root)
    if name == "gatherv":
        return Buffers(_data(problem, rank, mine, data_seed, data), _empty(problem, total if is_root else 0),
                       sendcount=mine, recvcounts=counts, rdispls=_prefix(counts), has_output=is_root)
    if name == "scatter":
        return Buffers(_data(problem, rank, p * blk if is_root else 0, data_seed, data), _empty(problem, blk),
                       sendcount=blk, recvcount=blk)
    if name == "scatterv":
        return Buffers(_data(problem, rank, total if is_root else 0, data_seed, data), _empty(problem, mine),
                       sendcounts=counts, sdispls=_prefix(counts), recvcount=mine)
    if name == "allgather":
        return Buffers(_data(problem, rank, blk, data_seed, data), _empty(problem, p * blk),
                       sendcount=blk, recvcount=blk)
    if name == "allgatherv":
        return Buffers(_data(problem, rank, mine, data_seed, data), _empty(problem, total),
                       sendcount=mine, recvcounts=counts, rdispls=_prefix(counts))
    if name == "allreduce":
        return Buffers(_data(problem, rank, blk, data_seed, data), _empty(problem, blk), recvcount=blk)
    if name == "reduce":
        return Buffers(_data(problem, rank, blk, data_seed, data), _empty(problem, blk),
                       recvcount=blk, has_output=is_root)
    if name == "reduce_scatter_block":
        return Buffers(_data(problem, rank, p * blk, data_seed, data), _empty(problem, blk), recvcount=blk)
    if name == "reduce_scatter":
        return Buffers(_data(problem, rank, total, data_seed, data), _empty(problem, mine),
                       recvcount=mine, recvcounts=counts)
    raise ValueError(f"no buffer layout for collective {name!r}")


def _inter_buffers(problem: Problem, rank: int, data_seed: int, data: str) -> Buffers:
    """Buffers of process `rank` (0..p+q-1) of an intergroup problem: its own block, and
    the other group's blocks in their rank order (MPI_Allgather(v) on an inter-communicator)."""
    counts = _check_sizes(problem)
    g, _ = problem.group(rank)
    remote = counts[problem.p:] if g == 0 else counts[:problem.p]
    mine, total = int(counts[rank]), int(remote.sum())
    send = _data(problem, rank, mine, data_seed, data)
    if problem.collective == "allgather":
        return Buffers(send, _empty(problem, total), sendcount=mine,
                       recvcount=int(remote[0]) if len(remote) else 0)
    return Buffers(send, _empty(problem, total), sendcount=mine, recvcounts=remote,
                   rdispls=_prefix(remote))


# Irregular collectives: which own count each rank passes, and which vector it must match.
_SENDS_OWN_COUNT = ("gatherv", "allgatherv")  # sendcount vs recvcounts[rank]
_RECVS_OWN_COUNT = ("scatterv",)              # recvcount vs sendcounts[rank]


def check_counts(comm, problem: Problem, buf: Buffers) -> None:
    """Raise the same RankFailure on all ranks if the ranks' counts disagree with the root's.

    Every rank contributes its own count (sendcount for gatherv and allgatherv, recvcount
    for scatterv) to an allgather, the root with its count vector (recvcounts, or
    sendcounts for scatterv; rank 0's for allgatherv); all ranks compare the same data and
    so raise the same error.  On two groups, each process's own count must be what the
    other group's first process has for it.  Regular collectives are not checked.
    Collective: every rank of `comm` must call it.

    Raises
    ------
    RankFailure
        Naming the first rank whose count is negative or differs, and both counts.
    """
    _judge_counts(problem, comm.allgather(_count_claim(problem, buf, comm.rank)))


def _count_claim(problem: Problem, buf: Buffers, rank: int) -> tuple | None:
    """What `rank` brings to :func:`check_counts`: (its own count, the count vector it holds
    if another rank's count is checked against it, else None); None if nothing is checked."""
    name = problem.collective
    if problem.inter:
        vector = ([int(c) for c in buf.recvcounts] if buf.recvcounts is not None
                  else [int(buf.recvcount)])
        return int(buf.sendcount), vector if rank in (0, problem.p) else None
    root = problem.root if collective(name).rooted else 0
    if name in _SENDS_OWN_COUNT:
        own, vector = buf.sendcount, buf.recvcounts
    elif name in _RECVS_OWN_COUNT:
        own, vector = buf.recvcount, buf.sendcounts
    else:
        return None
    return int(own), [int(c) for c in vector] if rank == root else None


def _judge_counts(problem: Problem, claims: list) -> None:
    """Raise RankFailure for the first rank whose count in `claims` (every rank's
    :func:`_count_claim`, in rank order) is negative or differs from the reference's."""
    name = problem.collective
    if problem.inter:
        _judge_inter_counts(problem, claims)
        return
    if name in _SENDS_OWN_COUNT:
        mine, theirs = "sendcount", "recvcounts"
    elif name in _RECVS_OWN_COUNT:
        mine, theirs = "recvcount", "sendcounts"
    else:
        return
    root = problem.root if collective(name).rooted else 0
    ref = claims[root][1]
    who = f"the root (rank {root})" if collective(name).rooted else f"rank {root}"
    for r, ((c, _), e) in enumerate(zip(claims, ref)):
        if c < 0:
            raise RankFailure(f"{name}: rank {r} passes a negative {mine} {c}", rank=r)
        if c != e:
            raise RankFailure(
                f"{name}: counts disagree: rank {r} passes {mine} {c}, but {who} has "
                f"{theirs}[{r}] = {e}", rank=r)


def _judge_inter_counts(problem: Problem, claims: list) -> None:
    """_judge_counts for two groups: every process's own count must be what the other
    group's first process has for it (recvcounts, or recvcount for Allgather)."""
    p = problem.p
    vectors = problem.collective == "allgatherv"
    for r, (own, _) in enumerate(claims):
        g, local = problem.group(r)
        ref_rank = p if g == 0 else 0  # the other group's first process
        ref = claims[ref_rank][1]
        expected = ref[local] if vectors else ref[0]
        what = "recvcounts" if vectors else "recvcount"
        if own < 0:
            raise RankFailure(f"{problem.collective}: rank {r} passes a negative sendcount {own}",
                              rank=r)
        if own != expected:
            raise RankFailure(
                f"{problem.collective}: counts disagree: rank {r} (group {'AB'[g]}) passes "
                f"sendcount {own}, but rank {ref_rank} of the other group has "
                f"{what}{f'[{local}]' if vectors else ''} = {expected}",
                rank=r)


def _ptr(a: np.ndarray | None):
    return None if a is None else a.ctypes.data


def _args(problem: Problem, buf: Buffers) -> kernels.TuwArgs:
    return kernels.TuwArgs(
        sendbuf=_ptr(buf.send), sendcount=buf.sendcount,
        sendcounts=_ptr(buf.sendcounts), sdispls=_ptr(buf.sdispls),
        recvbuf=_ptr(buf.recv), recvcount=buf.recvcount,
        recvcounts=_ptr(buf.recvcounts), rdispls=_ptr(buf.rdispls),
        datatype=list(DATATYPES).index(problem.datatype), op=OPS.index(problem.op),
        root=problem.root,
    )


def _check(rc: int, what: str, rank: int, lib=None) -> None:
    if rc != 0:
        from mpi4py import MPI

        # tuw_check_params leaves the same text on every rank: report that, not the rank
        detail = lib.tuw_last_error().decode() if lib is not None else ""
        if detail:
            raise KernelError(f"{what}: {detail}")
        raise KernelError(f"rank {rank}: {what} returned MPI error {rc}: {MPI.Get_error_string(rc)}")


def _validate(problem: Problem, algorithm: kernels.Algorithm) -> None:
    algorithm.check_problem(problem.p, problem.op)  # the table row's restrictions
    algorithm.check_comm(problem.inter, problem.label())


def run_kernel(comm, problem: Problem, algorithm: str, *, trace: bool = False, data_seed: int = 0,
               params: dict | None = None, data: str = "small", index: int | None = None):
    """Run `algorithm` once on `comm` (size ``problem.p``, or for two groups the
    inter-communicator of ``p`` and ``q``); return (buffers, trace events).

    Trace events are this rank's recorded messages as a list of dicts (empty unless
    `trace`).  `params` are the algorithm's tuning parameters (:mod:`tuwviz.params`).
    `index` is this process's place in the problem (0..p+q-1; default ``comm.rank``).
    """
    lib = kernels.load()
    alg = kernels.find_algorithm(problem.collective, algorithm)
    buf = make_buffers(problem, comm.rank if index is None else index, data_seed, data)
    args = _args(problem, buf)
    setters.apply(lib, params)
    if trace:
        lib.tuw_trace_start()
    try:
        with watch.inside():
            rc = lib.tuw_invoke(alg.index, ctypes.byref(args), kernels.comm_handle(comm))
        _check(rc, f"{problem.collective}/{algorithm}", comm.rank, lib)
    finally:
        lib.tuw_trace_stop()
        setters.reset(lib)
    return buf, (_events(lib) if trace else [])


def _events(lib) -> list[dict]:
    n = lib.tuw_trace_count()
    arr = (kernels.TuwEvent * max(n, 1))()
    n = lib.tuw_trace_copy(arr, n)
    return [
        {"rank": e.rank, "peer": e.peer, "dir": kernels.TRACE_DIRS[e.dir], "tag": e.tag,
         "bytes": e.bytes, "t_start": e.t_start, "t_end": e.t_end, "remote": bool(e.remote)}
        for e in arr[:n]
    ]


def _global_events(problem: Problem, index: int, events: list[dict]) -> list[dict]:
    """Events of process `index` of a two-group problem with ranks as places in the problem
    (a_i = i, b_j = p + j), keeping the group and the local ranks the kernel saw."""
    g, _ = problem.group(index)
    offset = (0, problem.p)
    out = []
    for e in events:
        pg = 1 - g if e["remote"] else g
        out.append({**e, "group": "AB"[g], "local_rank": e["rank"], "peer_group": "AB"[pg],
                    "local_peer": e["peer"], "rank": index, "peer": offset[pg] + e["peer"]})
    return out


def _agree(comm, error: str | None, problem: Problem | None = None, claim=None) -> None:
    """Raise the same RankFailure on every rank if any rank reports an error, or, given
    the `problem` and this rank's count `claim`, if the counts disagree (what
    :func:`check_counts` does, in the same one allgather: each call costs a scheduler
    slice or more when ranks outnumber cores)."""
    gathered = comm.allgather((error, claim))
    failed = [(r, e) for r, (e, _) in enumerate(gathered) if e]
    if failed:
        r, e = failed[0]
        raise RankFailure(f"rank {r} failed: {e}", rank=r)
    if problem is not None and gathered[0][1] is not None:
        _judge_counts(problem, [c for _, c in gathered])


def _reference(comm, problem: Problem, data_seed: int, data: str = "small",
               index: int | None = None) -> Buffers:
    """The library's own collective, called through mpi4py on the same input (on two
    groups the library's intergroup collective, `comm` the inter-communicator).

    Independent of tuwviz's C registry and argument marshalling, so even ``native``
    (the same MPI function reached through ``tuw_invoke``) is checked against something.
    """
    from mpi4py import MPI

    b = make_buffers(problem, comm.rank if index is None else index, data_seed, data)
    t = {"byte": MPI.BYTE, "int": MPI.INT, "double": MPI.DOUBLE}[problem.datatype]
    op = _mpi4py_op(problem.op)
    root, name = problem.root, problem.collective
    if name == "gather":
        comm.Gather([b.send, t], [b.recv, t] if b.has_output else None, root=root)
    elif name == "gatherv":
        comm.Gatherv([b.send, t], [b.recv, b.recvcounts, b.rdispls, t] if b.has_output else None,
                     root=root)
    elif name == "scatter":
        comm.Scatter([b.send, t] if comm.rank == root else None, [b.recv, t], root=root)
    elif name == "scatterv":
        comm.Scatterv([b.send, b.sendcounts, b.sdispls, t] if comm.rank == root else None,
                      [b.recv, t], root=root)
    elif name == "allgather":
        comm.Allgather([b.send, t], [b.recv, t])
    elif name == "allgatherv":
        comm.Allgatherv([b.send, t], [b.recv, b.recvcounts, b.rdispls, t])
    elif name == "allreduce":
        comm.Allreduce([b.send, t], [b.recv, t], op=op)
    elif name == "reduce":
        comm.Reduce([b.send, t], [b.recv, t], op=op, root=root)
    elif name == "reduce_scatter_block":
        comm.Reduce_scatter_block([b.send, t], [b.recv, t], op=op)
    elif name == "reduce_scatter":
        comm.Reduce_scatter([b.send, t], [b.recv, t], recvcounts=[int(c) for c in b.recvcounts],
                            op=op)
    else:
        raise ValueError(f"no reference for collective {name!r}")
    return b


_USER_OPS: dict = {}


def _mpi4py_op(name: str):
    """The mpi4py operator for `name`: the built-ins, or the user-defined ones made here in
    Python (independent of the C side's, so the reference checks those too)."""
    from mpi4py import MPI

    builtin = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "bor": MPI.BOR}
    if name in builtin:
        return builtin[name]
    if name not in _USER_OPS:
        def combine(inbuf, inoutbuf, datatype, first=(name == "user_first")):
            if first:  # a o b = a, with a the lower rank's (MPI_Reduce_local(in, inout))
                memoryview(inoutbuf).cast("B")[:] = memoryview(inbuf).cast("B")
                return
            t = (np.uint8 if datatype == MPI.BYTE else np.int32 if datatype == MPI.INT
                 else np.float64)
            out = np.frombuffer(inoutbuf, dtype=t)
            out += np.frombuffer(inbuf, dtype=t)

        _USER_OPS[name] = MPI.Op.Create(combine, commute=name != "user_first")
    return _USER_OPS[name]


def _blocks(problem: Problem, rank: int, buf: Buffers) -> list[tuple[int | None, int, int]]:
    """The receive buffer of `rank` as blocks: (whose block, first element, count).

    Whose: the rank the block comes from (gather-like), goes to (scatter-like, and a
    rank's part of a reduce_scatter), or None for a reduction's whole result.  For two
    groups the other group's processes, named by their place (b_j is p + j).
    """
    name, p = problem.collective, problem.p
    if problem.inter:
        first = problem.p if problem.group(rank)[0] == 0 else 0
        counts = problem.group_counts(1 - problem.group(rank)[0])
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if counts else []
        return [(first + j, int(starts[j]), int(c)) for j, c in enumerate(counts)]
    if name in ("gatherv", "allgatherv"):
        return [(i, int(buf.rdispls[i]), int(buf.recvcounts[i])) for i in range(p)]
    if name in ("gather", "allgather"):
        return [(i, i * problem.block, problem.block) for i in range(p)]
    if name in ("scatter", "scatterv", "reduce_scatter_block", "reduce_scatter"):
        return [(rank, 0, buf.recv.size)]
    return [(None, 0, buf.recv.size)]


def _value(x) -> int | float | str:
    """One element as the datatype's value (non-finite doubles as text: JSON has none)."""
    if isinstance(x, np.floating):
        return float(x) if np.isfinite(x) else str(x)
    return int(x)


def _differing_elements(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Indices of the elements whose bytes differ between arrays `a` and `b` (one dtype):
    bit for bit, so NaN patterns and stray partial writes count."""
    item = a.itemsize
    return np.nonzero((a.view(np.uint8).reshape(-1, item)
                       != b.view(np.uint8).reshape(-1, item)).any(axis=1))[0]


def _mismatch(problem: Problem, rank: int, ref: Buffers, got: Buffers,
              data: str = "small") -> dict | None:
    """Where `got`'s output differs from the library's, in elements and blocks (or None).

    Compared byte for byte per element, so NaN patterns and stray partial writes count;
    sums of random doubles (`data` ``"random"``) within
    :data:`~tuwviz.problems.RANDOM_SUM_TOLERANCE` of the library's.
    """
    if data == "random" and problem.op in ("sum", "user_sum"):
        p = problem.p
        tol = 2 * (p - 1) * p * 2.0**-53
        bad = np.nonzero(~(np.abs(got.recv - ref.recv) <= tol))[0]  # NaN counts as bad
    else:
        bad = _differing_elements(ref.recv, got.recv)
    if not bad.size:
        return None
    blocks = [blk for blk in _blocks(problem, rank, got) if blk[2] > 0]
    starts = np.array([s for _, s, _ in blocks])
    where = np.searchsorted(starts, bad, side="right") - 1  # block of each differing element
    i = int(bad[0])
    owner, start, _ = blocks[where[0]]
    return {"rank": rank, "block": owner, "element": i - start, "index": i,
            "expected": _value(ref.recv[i]), "got": _value(got.recv[i]),
            "never_written": bool((got.recv[i:i + 1].view(np.uint8) == FILL).all()),
            "differing_elements": int(bad.size), "elements": int(ref.recv.size),
            "blocks": sorted({blocks[k][0] for k in set(where.tolist())} - {None}),
            "datatype": problem.datatype}


def _disagreement(comm, problem: Problem, got: Buffers, digests: list[bytes]) -> dict | None:
    """Where this rank's result differs bit for bit from rank 0's, for a collective that
    gives every process the same result (Allreduce; Allgather(v) on one group).

    Compared with the library's within a tolerance, sums of random doubles could differ
    between ranks unseen: MPI's Allreduce gives every process *the* result, and programs
    branch on it.  `digests` are the SHA-256 of every rank's result.  Collective over `comm`
    when the digests differ: every rank calls it.
    """
    if len(set(digests)) == 1:
        return None
    first = comm.bcast(got.recv if comm.rank == 0 else None, root=0)
    if digests[comm.rank] == digests[0]:
        return None
    bad = _differing_elements(first, got.recv)
    i = int(bad[0])
    return {"rank": comm.rank, "block": None, "element": i, "index": i,
            "expected": _value(first[i]), "got": _value(got.recv[i]), "never_written": False,
            "differing_elements": int(bad.size), "elements": int(got.recv.size), "blocks": [],
            "datatype": problem.datatype, "differs_from_rank": 0}


def _verify(comm, problem: Problem, algorithm: str, data_seed: int, params: dict,
            data: str = "small", kcomm=None) -> dict:
    kcomm = comm if kcomm is None else kcomm  # the kernel's: an inter-communicator for two groups
    ref = _reference(kcomm, problem, data_seed, data, index=comm.rank)
    got, _ = run_kernel(kcomm, problem, algorithm, data_seed=data_seed, params=params, data=data,
                        index=comm.rank)
    mismatch = _mismatch(problem, comm.rank, ref, got, data) if ref.has_output else None
    if collective(problem.collective).shared_result and not problem.inter:
        import hashlib

        # one allgather brings rank 0 the mismatches and every rank the digests; only
        # results that differ between ranks take more calls
        both = comm.allgather((mismatch, hashlib.sha256(got.recv.tobytes()).digest()))
        digests = [d for _, d in both]
        if len(set(digests)) == 1:
            found = [m for m, _ in both if m] if comm.rank == 0 else []
            return {"ok": not found, "mismatches": found}
        mismatch = _disagreement(comm, problem, got, digests) or mismatch
    found = [m for m in comm.gather(mismatch, root=0) or [] if m]
    return {"ok": not found, "mismatches": found}


def _measure(comm, problem: Problem, algorithm: str, case: dict, kcomm=None) -> dict | None:
    from mpi4py import MPI

    lib = kernels.load()
    alg = kernels.find_algorithm(problem.collective, algorithm)
    buf = make_buffers(problem, comm.rank, case.get("data_seed", 0))
    kcomm = comm if kcomm is None else kcomm
    args = _args(problem, buf)
    reps, warmup = int(case.get("reps", 75)), int(case.get("warmup", 10))
    times = np.zeros(reps, dtype=np.float64)
    done = ctypes.c_int(0)
    # a measurement's limits, shared by its rounds when it takes turns with others
    share = case.get("part", [0, 1])[1]
    max_time = float(case.get("max_time") or 0.0) / share  # repetitions end there, no error
    setters.apply(lib, case.get("params"))
    try:
        with watch.inside():
            rc = lib.tuw_time(alg.index, ctypes.byref(args), kernels.comm_handle(kcomm), warmup,
                              reps, max_time or float(case.get("time_limit") or 0.0) / share,
                              times.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                              ctypes.byref(done))
    finally:
        setters.reset(lib)
    if rc == -1 and max_time:  # TUW_TIME_LIMIT as asked: keep the repetitions done
        rc = 0
    if rc == -1:  # TUW_TIME_LIMIT: every rank stopped after the same repetition
        raise TimeLimitExceeded(
            f"{problem.label()} {algorithm}: time limit of {case.get('time_limit')} s exceeded "
            f"after {done.value} of {reps} repetitions"
            + (f" (round {case['part'][0] + 1} of {share}, {case['time_limit'] / share:g} s each)"
               if share > 1 else ""))
    _check(rc, f"timing {problem.collective}/{algorithm}", comm.rank, lib)
    statistic = case.get("statistic", "slowest")
    if statistic == "osu":  # every rank's own times: OSU averages each rank's first
        every = comm.gather(times[: done.value] * 1e6, root=0)
        if comm.rank != 0:
            return None
        ranks_us = np.asarray(every)
        us = ranks_us.max(axis=0)
    else:
        # a repetition's time is the slowest rank's (gatherv paper, Section 5)
        slowest = np.zeros_like(times) if comm.rank == 0 else None
        comm.Reduce(times, slowest, op=MPI.MAX, root=0)
        if comm.rank != 0:
            return None
        us = ranks_us = slowest[: done.value] * 1e6
    result = {"reps": int(done.value), "warmup": warmup, **summarize(ranks_us, statistic)}
    if case.get("samples"):  # every repetition (the slowest rank's), for box plots
        result["samples_us"] = us.tolist()
        if statistic == "osu":  # for joining rounds (tuwviz.bench)
            result["rank_samples_us"] = ranks_us.tolist()
    return result


#: How a measurement's repetitions become a row's min/median/mean/max (:func:`summarize`).
STATISTICS = ("slowest", "osu")


def summarize(us, statistic: str = "slowest") -> dict:
    """``min_us``, ``median_us``, ``mean_us``, ``max_us`` of a measurement.

    ``slowest`` (tuwviz's, the gatherv paper's and ReproMPI's with barrier
    synchronization): `us` holds one time per repetition, the slowest rank's, and the
    statistics are over repetitions.  ``osu`` (OSU Micro-Benchmarks'): `us` is ranks x
    repetitions; each rank's times are averaged over the repetitions first, and the
    statistics are over ranks: ``mean_us`` is OSU's "Avg Latency", ``min_us`` and
    ``max_us`` its "Min Latency" and "Max Latency".

    Examples
    --------
    >>> summarize([3.0, 1.0, 2.0])
    {'min_us': 1.0, 'median_us': 2.0, 'mean_us': 2.0, 'max_us': 3.0}
    >>> summarize([[1.0, 3.0], [2.0, 2.0], [5.0, 9.0]], "osu")  # rank means 2, 2, 7
    {'min_us': 2.0, 'median_us': 2.0, 'mean_us': 3.6666666666666665, 'max_us': 7.0}
    """
    a = np.asarray(us, dtype=np.float64)
    if statistic == "osu":
        a = a.mean(axis=1)
    elif statistic != "slowest":
        raise ValueError(f"unknown statistic {statistic!r}; valid: {', '.join(STATISTICS)}")
    return {"min_us": float(a.min()), "median_us": float(np.median(a)),
            "mean_us": float(a.mean()), "max_us": float(a.max())}


def _calibration_part(comm, case: dict) -> dict | None:
    """One part of a calibration (:mod:`tuwviz.experiments.calibrate`): ``what`` is ``ring`` or
    ``pingpong`` (``bytes``), ``copy`` (``bytes``) or ``reduce`` (``count`` of ``datatype``,
    ``op``).
    All ranks time it at once; each repetition's time is the slowest rank's (as in
    :func:`_measure`), in microseconds, on rank 0."""
    from mpi4py import MPI

    lib = kernels.load()
    reps, what = int(case["reps"]), case["what"]
    times = np.zeros(reps, dtype=np.float64)
    out = times.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    with watch.inside():
        if what == "pingpong":
            rc = lib.tuw_pingpong(kernels.comm_handle(comm), int(case["bytes"]),
                                  int(case.get("warmup", 2)), reps, out)
        elif what == "ring":
            rc = lib.tuw_ring_shift(kernels.comm_handle(comm), int(case["bytes"]),
                                    int(case.get("warmup", 2)), reps, out)
        elif what == "copy":
            rc = lib.tuw_copy_time(int(case["bytes"]), reps, out)
        elif what == "reduce":
            rc = lib.tuw_reduce_time(int(case["count"]), list(DATATYPES).index(case["datatype"]),
                                     OPS.index(case["op"]), reps, out)
        else:
            raise ValueError(f"unknown calibration part {what!r}; valid: pingpong, ring, copy, "
                             f"reduce")
    _check(rc, f"calibration {what}", comm.rank)
    slowest = np.zeros_like(times) if comm.rank == 0 else None
    comm.Reduce(times, slowest, op=MPI.MAX, root=0)
    return {"samples_us": (slowest * 1e6).tolist()} if comm.rank == 0 else None


def _trace(comm, problem: Problem, algorithm: str, data_seed: int, params: dict,
           kcomm=None) -> list | None:
    _, events = run_kernel(comm if kcomm is None else kcomm, problem, algorithm, trace=True,
                           data_seed=data_seed, params=params, index=comm.rank)
    if problem.inter:
        events = _global_events(problem, comm.rank, events)
    return comm.gather(events, root=0)


_intercomms: dict[tuple[int, int], object] = {}


def _intercomm(comm, p: int):
    """The inter-communicator joining ranks 0..p-1 (group A) and the rest of `comm` (group
    B); cached per (size, p), collective over `comm`."""
    key = (comm.size, p)
    if key not in _intercomms:
        a = comm.rank < p
        local = comm.Split(0 if a else 1, comm.rank)
        _intercomms[key] = local.Create_intercomm(0, comm, p if a else 0, tag=4242)
        local.Free()
    return _intercomms[key]


_subcomms: dict[int, object] = {}


def _subcomm(world, p: int):
    """The first `p` ranks of `world` (None on the others); cached per size, collective."""
    if p > world.size:
        raise ValueError(f"case needs p={p} ranks but only {world.size} are running")
    if p == world.size:
        return world
    if p not in _subcomms:
        from mpi4py import MPI

        color = 0 if world.rank < p else MPI.UNDEFINED
        sub = world.Split(color, world.rank)
        _subcomms[p] = sub if sub != MPI.COMM_NULL else None
    return _subcomms[p]


def run_case(world, case: dict):
    """Run one case (see module docstring) on the first ``p`` ranks of `world`.

    Must be called by every rank of `world`.  Returns the result on rank 0 of `world`:
    a verify dict, a measurement dict or the gathered trace; ``None`` on other ranks.

    Raises
    ------
    RankFailure
        On every participating rank, if any of them could not prepare the case.
    """
    if case.get("mode") == "calibrate":
        comm = _subcomm(world, int(case["problem"]["p"]))
        return None if comm is None else _calibration_part(comm, case)
    problem = Problem.from_dict(case["problem"])
    algorithm, mode = case["algorithm"], case["mode"]
    comm = _subcomm(world, problem.size)
    if comm is None:
        return None
    kcomm = _intercomm(comm, problem.p) if problem.inter else comm
    error, params = None, {}
    try:  # purely local preparation; failures are shared before anyone communicates
        _validate(problem, kernels.find_algorithm(problem.collective, algorithm))
        if case.get("types", "same") not in ("same", "null") and problem.inter:
            raise ValueError("datatype pairs other than null are not run on two groups")
        params = tuning.check_params(problem.collective, algorithm, case.get("params"), problem.p)
        buf = make_buffers(problem, comm.rank, case.get("data_seed", 0))
    except Exception as exc:  # noqa: BLE001 - reported to all ranks, then re-raised
        error = f"{type(exc).__name__}: {exc}"
    pair = case.get("types", "same")
    if pair == "same":
        claim = None
        if error is None:
            override = case.get("count_override") or {}
            if override.get("rank") == comm.rank:  # bad input on purpose (tests)
                own = "recvcount" if problem.collective in _RECVS_OWN_COUNT else "sendcount"
                setattr(buf, own, int(override["count"]))
            claim = _count_claim(problem, buf, comm.rank)
        _agree(comm, error, problem, claim)  # and check_counts, in one call
    else:  # counts agree by construction; the types are the point
        _agree(comm, error)
        if mode != "verify":
            raise ValueError(f"datatype pair {pair!r}: only verify cases take a pair")
        setters.apply(kernels.load(), params)
        try:
            return typepairs.run_pair(comm, problem.collective,
                                      kernels.find_algorithm(problem.collective, algorithm).function,
                                      pair, problem.root, list(problem.block_counts()),
                                      case.get("data_seed", 0), kcomm)
        finally:
            setters.reset(kernels.load())
    if mode == "verify":
        return _verify(comm, problem, algorithm, case.get("data_seed", 0), params,
                       case.get("data", "small"), kcomm)
    if mode == "measure":
        return _measure(comm, problem, algorithm, {**case, "params": params}, kcomm)
    if mode == "trace":
        return _trace(comm, problem, algorithm, case.get("data_seed", 0), params, kcomm)
    raise ValueError(f"unknown mode {mode!r}; valid modes: verify, measure, trace")


def rank_info(world) -> dict:
    """Who this process is: rank, pid, host, cores, MPI library, settings that change timings."""
    from mpi4py import MPI

    return {
        "rank": world.rank, "size": world.size, "pid": os.getpid(),
        "host": MPI.Get_processor_name() or socket.gethostname(), "cores": os.cpu_count(),
        "mpi_library": kernels.mpi_library_version(),
        "mpi4py": __import__("mpi4py").__version__,
        "heavy_yield": os.environ.get("MPIR_CVAR_ENABLE_HEAVY_YIELD", ""),
        "thread_level": {MPI.THREAD_SINGLE: "single", MPI.THREAD_FUNNELED: "funneled",
                         MPI.THREAD_SERIALIZED: "serialized",
                         MPI.THREAD_MULTIPLE: "multiple"}.get(MPI.Query_thread(), "?"),
        # what MPICH leaves in /dev/shm if this job is killed: the driver removes it then
        "shm": reaper.mpich_segments(),
        **slurm.rank_slurm(),  # under SLURM: the job, step and node
    }
