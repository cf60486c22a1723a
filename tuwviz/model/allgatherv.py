"""Model schedules for MPI_Allgatherv: the linear ring and the pipelined (blocked) ring.

Träff, Ripke, Siebert, Balaji, Thakur, Gropp, *A pipelined algorithm for large, irregular
all-gather problems*, IJHPCA 2010.  Each builder mirrors its C kernel in
``kernels_c/allgatherv/`` message for message.

Ring order
----------
Both rings run over a *ring order* ``order`` (``order[k]`` is the rank at ring position
``k``; :func:`~tuwviz.model.topology.ring.ring_order`): rank order, the SMP re-ranking of
Figure 1 (one process per node receives from and one sends to another node), or the
equidistant placement of the processes with data among those without (Section 2.3).
Blocks stay where ``displs`` put them, by rank.

ring: the standard linear ring (Section 2.1)
--------------------------------------------
``p - 1`` rounds; in round ``t`` the process at position ``k`` sends the block of position
``k - t`` to its successor and receives that of position ``k - 1 - t`` from its
predecessor, one ``MPI_Sendrecv`` with tag ``t``.  Every block travels, empty or not, so
every round is as slow as the largest block: time ``(p - 1)(alpha + beta m')``.

pipelined: the blocked ring (Sections 2.2 and 2.3)
--------------------------------------------------
Process ``k``'s block of ``m_k`` elements is cut into ``b_k = max(1, ceil(m_k / B))``
pieces of at most ``B`` elements
(:func:`~tuwviz.model.topology.ring.allgatherv_block_elems`), the virtual processes of a
virtual node (Figure 2); ``first_k`` is the index of its first piece and ``b = sum_k b_k``.  The
linear ring over the ``b`` virtual processes sends, in round ``t``, piece
``(first_k + b_k - 1 - t) mod b`` from position ``k`` to its successor while
``t < b - b_{k+1}``: first the process's own pieces, then what it received, in the order
received.  That takes ``r = b - min_k b_k`` rounds (Eq. (1), :func:`rounds`).

Empty pieces (of processes with ``m_k = 0``) are neither sent nor received, and rounds
that would only move empty pieces should cost nothing (Section 2.3).  So the messages are
not run in Eq. (1)'s rounds but in *slots*, rounds in time: all positions step together
and in each slot a process sends its next piece as soon as it has it (its own pieces at
once, a received piece one slot after it arrived); the receiver receives it in the same
slot.  Each process runs its slots in order, one blocking ``MPI_Sendrecv`` (or send, or
receive) per slot, tag = slot.  Both ends of a message agree on its slot, so no process can
wait for one that waits for it.  The number of slots never exceeds Eq. (1); without empty
processes it is Eq. (1), and with the ``p - z`` processes with data placed equidistantly
(``ring="spread"``, ``z`` a multiple of ``p - z``, every ``b_i > z/(p-z)``) it is the
paper's ``sum_i ceil(m_i/B) - 1 + z/(p-z)`` (:func:`spread_rounds`; tests check both).

Every message's ``blocks`` is the rank whose block (or piece of it) it carries; the pieces
themselves are in ``meta.pieces`` and ``meta.transfers`` (a
:class:`~tuwviz.model.meta.PipelinedRingMeta`, for the animation).

Examples
--------
>>> from tuwviz.problems import Problem
>>> pr = Problem("allgatherv", 3, 0, (4, 0, 2), datatype="byte")
>>> ring(pr).messages(0)
[('send', 1, 4), ('recv', 2, 2), ('send', 1, 2), ('recv', 2, 0)]
>>> s = pipelined(pr, block_bytes=2)
>>> s.meta.nblocks, s.meta.b, rounds(pr.counts, 2)
([2, 1, 1], 4, 3)
>>> s.messages(1)
[('recv', 0, 2), ('send', 2, 2), ('recv', 0, 2), ('send', 2, 2), ('recv', 0, 2)]
"""
from __future__ import annotations

import math
from itertools import accumulate
from typing import Sequence

from ..params import DEFAULT_ALPHA, DEFAULT_BETA, check_params
from ..problems import Problem
from .meta import PipelinedRingMeta, RingMeta
from .program import Op, Recv, Schedule, Send, SendRecv
from .topology.ring import allgatherv_block_elems, ring_order, ring_slot
from .simulate import simulate

__all__ = [
    "block_sweep",
    "estimate_block_bytes",
    "pipelined",
    "ring",
    "rounds",
    "spread_rounds",
]


def estimate_block_bytes(nbytes: Sequence[int], alpha: float = DEFAULT_ALPHA,
                         beta: float = DEFAULT_BETA) -> float:
    """The paper's block-size estimate, Eq. (2), in bytes (not rounded).

    With ``m`` the total bytes and ``z`` the number of processes without data, the
    pipelined ring needs about ``m/B + (p+z)/2 - 1 + floor(z/(p-z))`` rounds of
    ``alpha + beta B`` each (Section 2.4); minimizing gives

        B = sqrt(m alpha / (beta ((p+z)/2 - 1 + floor(z/(p-z))))).

    Special cases, as Section 2.4 lists them: a regular problem gets ``B = m'`` (the
    linear ring); the broadcast case ``z = p - 1`` is a linear pipeline of ``m/B + p - 2``
    rounds; a non-positive denominator (p <= 2) gets one block, ``B = max m_i``.

    Examples
    --------
    >>> round(estimate_block_bytes([8_000_000] + [0] * 9, 1e-6, 1e-9))  # sqrt(8e9/8)
    31623
    >>> estimate_block_bytes([100, 100, 100])
    100.0
    """
    p, m = len(nbytes), sum(nbytes)
    z, largest = sum(1 for n in nbytes if n == 0), max(nbytes)
    if largest == 0 or min(nbytes) == largest:
        return float(largest)
    d = (p - 2.0) if z == p - 1 else (p + z) / 2.0 - 1.0 + float(z // (p - z))
    if d <= 0:
        return float(largest)
    return math.sqrt(m * alpha / (beta * d))


def _pieces(counts: Sequence[int], b_el: int) -> list[int]:
    """``b_i = max(1, ceil(m_i / B))`` for every entry of `counts`."""
    return [max(1, -(-c // b_el)) for c in counts]


def rounds(counts: Sequence[int], b_el: int) -> int:
    """Rounds of the pipelined ring with blocks of `b_el` elements, Eq. (1).

    ``r = max_i (b - b_i) = b - min_i b_i`` with ``b_i = max(1, ceil(m_i / B))``.

    Examples
    --------
    >>> rounds([8, 0, 0, 0], 2)     # broadcast of 4 blocks to 3 others: 4 + 3 - 1
    6
    >>> rounds([5, 5, 5], 5)        # B = m': the linear ring's p - 1
    2
    """
    nb = _pieces(counts, b_el)
    return sum(nb) - min(nb)


def spread_rounds(counts: Sequence[int], b_el: int) -> int:
    """Rounds in time after the Section 2.3 refinement, for ``0 < z < p - 1``.

    With the ``p - z`` processes with data placed equidistantly (``ring="spread"``) and
    ``b_i > floor(z / (p - z))`` for all of them, the paper counts

        sum_i ceil(m_i / B) - 1 + floor(z / (p - z))

    rounds instead of Eq. (1)'s ``b - min b_i``.

    Examples
    --------
    >>> spread_rounds([4, 0, 4, 0], 2), rounds([4, 0, 4, 0], 2)
    (4, 5)
    """
    p, z = len(counts), sum(1 for c in counts if c == 0)
    if not 0 < z < p - 1:
        raise ValueError(f"the Section 2.3 count needs 0 < z < p-1 empty processes, got z={z}")
    return sum(-(-c // b_el) for c in counts) - 1 + z // (p - z)


def _send_lists(nb: list[int], first: list[int], b: int, sizes: list[int]) -> list[list[int]]:
    """Non-empty pieces each ring position sends, in the order of Eq. (1)'s rounds.

    Round ``t`` of position ``k`` sends piece ``(first_k + b_k - 1 - t) mod b`` for
    ``t < b - b_{k+1}``: its own pieces (last first), then what it received, in the order
    received (the linear ring over the ``b`` virtual processes).  Empty pieces are dropped:
    they are neither sent nor received.  Position ``k`` receives exactly the list of
    position ``k - 1``.
    """
    p = len(nb)
    return [[v for v in ((first[k] + nb[k] - 1 - t) % b for t in range(b - nb[(k + 1) % p]))
             if sizes[v] > 0] for k in range(p)]


def _slots(sends: list[list[int]], own: list[int]) -> list[list[tuple[int, int]]]:
    """Assign every message a slot (a round in time): ``[(slot, piece), ...]`` per sender.

    The slot clock of :func:`~tuwviz.model.topology.ring.ring_slot`: all positions step
    together; in each slot, position ``k`` sends its next piece if it has it, one of its
    ``own[k]`` own pieces or a piece received in an earlier slot, and the receiver gets it
    in the same slot.  Skipped empty pieces so cost no time, and the rounds Section 2.3
    saves for processes preceded by empty ones are really saved.  Because both ends of
    every message share its slot, running the slots in order with blocking operations
    cannot deadlock.
    """
    p = len(sends)
    nsend = [len(x) for x in sends]
    sent = [0] * p
    out: list[list[tuple[int, int]]] = [[] for _ in range(p)]  # by sender
    slot = 0
    while True:
        before = sent[:]  # ring_slot advances sent in place
        senders, now = ring_slot(p, own, nsend, sent)
        if not senders:
            return out
        for k in range(p):
            if now[k]:
                out[k].append((slot, sends[k][before[k]]))
        slot += 1


def _op(succ: int, pred: int, slot: int, vs: int | None, vr: int | None, pieces: list) -> Op:
    """The blocking operation of one slot: send piece `vs` and/or receive piece `vr`."""
    def owner(v):
        return range(pieces[v][0], pieces[v][0] + 1)

    if vs is not None and vr is not None:
        return SendRecv(succ, pieces[vs][2], pred, pieces[vr][2], slot,
                        send_blocks=owner(vs), recv_blocks=owner(vr))
    if vs is not None:
        return Send(succ, pieces[vs][2], slot, blocks=owner(vs))
    return Recv(pred, pieces[vr][2], slot, blocks=owner(vr))


def _check(problem: Problem, algorithm: str, params: dict) -> dict:
    if problem.collective != "allgatherv":
        raise ValueError(f"{algorithm} ring needs an allgatherv problem, "
                         f"got {problem.collective!r}")
    return check_params("allgatherv", algorithm, params, problem.p)


def _order(problem: Problem, params: dict) -> list[int]:
    kind, nodes = params.get("ring", "rank"), params.get("nodes")
    if kind == "smp" and nodes is None:  # no node map given: all processes on one node
        nodes = [0] * problem.p
    return ring_order(problem.p, problem.counts, nodes, kind)


def ring(problem: Problem, **params) -> Schedule:
    """Linear-ring Allgatherv schedule for `problem` (Section 2.1).

    Parameters
    ----------
    problem : Problem
        An allgatherv problem.
    **params
        ``ring`` and ``nodes`` (see :mod:`tuwviz.params`).

    Returns
    -------
    Schedule
        ``p - 1`` rounds of one :class:`SendRecv` per rank (tag = round), empty blocks
        included; ``meta`` is a :class:`~tuwviz.model.meta.RingMeta`.
    """
    params = _check(problem, "ring", params)
    p, order = problem.p, _order(problem, params)
    nbytes = [problem.nbytes(i) for i in range(p)]
    programs: list[list[Op]] = [[] for _ in range(p)]
    for k, rank in enumerate(order):
        succ, pred = order[(k + 1) % p], order[(k - 1) % p]
        for t in range(p - 1):
            s, r = order[(k - t) % p], order[(k - 1 - t) % p]
            programs[rank].append(SendRecv(succ, nbytes[s], pred, nbytes[r], t,
                                           send_blocks=range(s, s + 1),
                                           recv_blocks=range(r, r + 1)))
    meta = RingMeta(ring=order, rounds=max(p - 1, 0))
    return Schedule("allgatherv", "ring", p, programs, problem, meta)


def pipelined(problem: Problem, **params) -> Schedule:
    """Pipelined (blocked) ring Allgatherv schedule for `problem` (Sections 2.2, 2.3).

    Parameters
    ----------
    problem : Problem
        An allgatherv problem.
    **params
        ``block_bytes`` (0: Eq. (2)), ``alpha``, ``beta``, ``ring``, ``nodes`` (see
        :mod:`tuwviz.params`).

    Returns
    -------
    Schedule
        Per rank, the non-empty piece transfers of rounds ``0 .. r-1`` (tag = round).
        ``meta`` is a :class:`~tuwviz.model.meta.PipelinedRingMeta`: the ring order, ``B``,
        the pieces and every transfer.
    """
    params = _check(problem, "pipelined", params)
    p, order, size = problem.p, _order(problem, params), problem.itemsize
    counts = [problem.counts[i] for i in order]  # by ring position
    b_el = allgatherv_block_elems(p, problem.counts, size, params.get("block_bytes", 0),
                                  params.get("alpha", DEFAULT_ALPHA),
                                  params.get("beta", DEFAULT_BETA))
    nb = _pieces(counts, b_el)
    first = [0, *accumulate(nb)][:p]
    b = sum(nb)
    pieces = []  # virtual block v -> [owner rank, offset in bytes, bytes]
    for k in range(p):
        for j in range(nb[k]):
            lo = j * b_el
            pieces.append([order[k], lo * size, max(0, min(b_el, counts[k] - lo)) * size])
    sizes = [pc[2] for pc in pieces]
    sends = _send_lists(nb, first, b, sizes)
    slots = _slots(sends, [nb[k] if counts[k] > 0 else 0 for k in range(p)])
    per_rank: list[dict[int, list]] = [{} for _ in range(p)]  # slot -> [send, recv]
    for k in range(p):
        for slot, v in slots[k]:
            per_rank[order[k]].setdefault(slot, [None, None])[0] = v
            per_rank[order[(k + 1) % p]].setdefault(slot, [None, None])[1] = v
    programs: list[list[Op]] = [[] for _ in range(p)]
    for k, rank in enumerate(order):
        succ, pred = order[(k + 1) % p], order[(k - 1) % p]
        for slot in sorted(per_rank[rank]):
            vs, vr = per_rank[rank][slot]
            programs[rank].append(_op(succ, pred, slot, vs, vr, pieces))
    transfers = sorted([slot, order[k], order[(k + 1) % p], v]
                       for k in range(p) for slot, v in slots[k])
    meta = PipelinedRingMeta(ring=order, rounds=b - min(nb), block_elems=b_el,
                             block_bytes=b_el * size, nblocks=nb, first=first, b=b,
                             slots=transfers[-1][0] + 1 if transfers else 0,
                             pieces=pieces, transfers=transfers)
    return Schedule("allgatherv", "pipelined", p, programs, problem, meta)


def block_sweep(problem: Problem, block_bytes: Sequence[int], alpha: float = DEFAULT_ALPHA,
                beta: float = DEFAULT_BETA, **params):
    """Model times of the pipelined ring for several block sizes, next to the linear ring.

    The block-size trade-off of Section 2.4: small ``B`` means many start-ups, large
    ``B`` rounding up to whole blocks.  Labelled ``source="model"``.

    Parameters
    ----------
    problem : Problem
        An allgatherv problem.
    block_bytes : sequence of int
        Block sizes ``B`` in bytes to simulate (0 means the Eq. (2) estimate).
    alpha, beta : float
        Seconds per message and per byte; also the estimate's cost model.
    **params
        Other parameters of both rings (``ring``, ``nodes``).

    Returns
    -------
    pandas.DataFrame
        One row per ``B`` (algorithm ``"pipelined"``) plus one for ``"ring"``:
        ``algorithm, block_bytes, block_elems, rounds, slots, time_us, ratio_to_ring,
        estimate_bytes, source``.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> pr = make_problem("allgatherv", 8, "broadcast", 1 << 20, datatype="byte")
    >>> df = block_sweep(pr, [4096, 16384, 65536])
    >>> int(df.loc[df.time_us.idxmin(), "block_bytes"]), round(df.estimate_bytes[0])
    (16384, 13220)
    """
    import pandas as pd

    est = estimate_block_bytes([problem.nbytes(i) for i in range(problem.p)], alpha, beta)
    ring_time = simulate(ring(problem, **params), alpha, beta).time
    rows = [{"algorithm": "ring", "block_bytes": None, "block_elems": None,
             "rounds": max(problem.p - 1, 0), "slots": max(problem.p - 1, 0),
             "time_us": ring_time * 1e6}]
    for bb in block_bytes:
        s = pipelined(problem, block_bytes=bb, alpha=alpha, beta=beta, **params)
        rows.append({"algorithm": "pipelined", "block_bytes": s.meta.block_bytes,
                     "block_elems": s.meta.block_elems, "rounds": s.meta.rounds,
                     "slots": s.meta.slots, "time_us": simulate(s, alpha, beta).time * 1e6})
    df = pd.DataFrame(rows)
    df["ratio_to_ring"] = df["time_us"] / (ring_time * 1e6) if ring_time > 0 else 1.0
    df["estimate_bytes"] = est
    df["source"] = "model"
    return df
