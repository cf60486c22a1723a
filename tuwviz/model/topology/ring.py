"""Ring orders, the pipelined ring's slot clock and its block size, from integers only.

Mirror of ``kernels_c/topology/ring.c`` (Träff, Ripke, Siebert, Balaji, Thakur, Gropp,
*A pipelined algorithm for large, irregular all-gather problems*, IJHPCA 2010, Sections
2.2-2.4), function for function.  Every process computes the same answer from the counts,
which all processes know in ``MPI_Allgatherv``.

* :func:`ring_order`: which rank sits at which ring position - rank order, the SMP
  re-ranking of Figure 1 (nodes one after another, inside a node the processes without data
  first), or the processes with data spread equidistantly among those without (Section 2.3).
* :func:`ring_slot`: one slot of the pipelined ring's clock.  All ring positions step
  together; in each slot a position sends its next non-empty piece if it has it - one of
  its own, or one received in an earlier slot - and its successor receives it in the same
  slot.  Both ends of a message agree on its slot, which is its tag.
* :func:`allgatherv_block_elems`: the block size ``B`` in elements, given or the Eq. (2)
  estimate, bit for bit as C computes it.

Examples
--------
>>> ring_order(6, [1] * 6, [0, 1, 0, 1, 0, 1], RING_SMP)
[0, 2, 4, 1, 3, 5]
>>> ring_order(7, [5, 0, 0, 3, 0, 0, 0], None, "spread")
[1, 2, 4, 0, 5, 6, 3]

The slot clock of the example in ``allgatherv_pipelined.c`` (``m = (5, 0, 2)``, ``B = 2``):

>>> sent = [0, 0, 0]
>>> [ring_slot(3, [3, 0, 1], [4, 3, 1], sent) for _ in range(5)]
[(2, [1, 0, 1]), (2, [1, 1, 0]), (2, [1, 1, 0]), (2, [1, 1, 0]), (0, [0, 0, 0])]
>>> sent
[4, 3, 1]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...params import RING_ORDERS

__all__ = [
    "RING_RANK",
    "RING_SMP",
    "RING_SPREAD",
    "allgatherv_block_elems",
    "ring_order",
    "ring_slot",
]

#: Ring order kinds, the values of ``TUW_RING_*`` in ``kernels_c/include/tuwviz.h`` (their
#: names, in :data:`tuwviz.params.RING_ORDERS`, are accepted too).
RING_RANK, RING_SMP, RING_SPREAD = 0, 1, 2


def _kind(kind: int | str) -> int:
    """The ``TUW_RING_*`` value of `kind`, given as that value or as its name."""
    if isinstance(kind, str):
        if kind in RING_ORDERS:
            return RING_ORDERS.index(kind)
    elif kind in (RING_RANK, RING_SMP, RING_SPREAD):
        return kind
    raise ValueError(f"unknown ring order {kind!r}; valid ring orders: {', '.join(RING_ORDERS)}")


def ring_order(p: int, counts: Sequence[int], node_of_rank: Sequence[int] | None,
               kind: int | str) -> list[int]:
    """Ranks in ring order: ``order[k]`` is the rank at ring position ``k`` (``tuw_ring_order``).

    Parameters
    ----------
    p : int
        Number of processes.
    counts : sequence of int
        ``m_i`` of every rank.
    node_of_rank : sequence of int or None
        Any integer naming each rank's node; needed for ``RING_SMP`` only.
    kind : int or str
        ``RING_RANK`` (``"rank"``): rank order.  ``RING_SMP`` (``"smp"``, Figure 1): the
        nodes one after another, ordered by their lowest rank; inside a node first the
        processes without data, then those with data, each in rank order, so the process
        that sends off-node has data (Section 2.3, last paragraph).  ``RING_SPREAD``
        (``"spread"``, Section 2.3): for each rank with data, in increasing order, first its
        share of the ``z`` empty ranks (``z // n`` each of the ``n`` ranks with data, the
        first ``z % n`` one more), then itself.

    Returns
    -------
    list of int
        A permutation of ``0 .. p-1``.

    Raises
    ------
    ValueError
        For an unknown `kind`, ``p < 1`` or ``RING_SMP`` without `node_of_rank` (C:
        ``MPI_ERR_ARG``).

    Examples
    --------
    >>> ring_order(3, [3, 0, 1], None, RING_RANK)
    [0, 1, 2]
    """
    kind = _kind(kind)
    if p < 1:
        raise ValueError(f"number of processes must be at least 1, got p={p}")
    if kind == RING_RANK:
        return list(range(p))
    if kind == RING_SMP:
        if node_of_rank is None:
            raise ValueError("the smp ring order needs the node of every rank")
        members: dict[int, list[int]] = {}
        for i in range(p):  # dicts keep insertion order: nodes by their lowest rank
            members.setdefault(node_of_rank[i], []).append(i)
        return [i for ranks in members.values() for i in sorted(ranks, key=lambda i: counts[i] > 0)]
    full = [i for i in range(p) if counts[i] > 0]
    empty = [i for i in range(p) if counts[i] <= 0]
    if not full or not empty:  # nothing to spread: the identity
        return list(range(p))
    q, r = divmod(len(empty), len(full))
    order, e = [], 0
    for j, i in enumerate(full):
        share = q + (1 if j < r else 0)  # empty ranks in front of the j-th with data
        order += empty[e:e + share] + [i]
        e += share
    return order


def ring_slot(p: int, own: Sequence[int], nsend: Sequence[int],
              sent: list[int]) -> tuple[int, list[int]]:
    """One slot of the pipelined ring's clock (``tuw_ring_slot``).

    Position ``k`` sends in this slot if it has not sent all its ``nsend[k]`` non-empty
    pieces and has its next one: one of its ``own[k]`` own non-empty pieces, or one it
    received in an earlier slot (it has received ``sent[k-1]`` pieces).

    Parameters
    ----------
    p : int
        Number of ring positions.
    own, nsend : sequence of int
        Per position: own non-empty pieces, and non-empty pieces it sends in all.
    sent : list of int
        Per position: pieces sent before this slot; updated in place (C: in and out).

    Returns
    -------
    senders : int
        How many positions send in this slot (0: every position is done).
    now : list of int
        1 for the positions that send in this slot, 0 for the others (C: ``now[]``).
    """
    now = [int(sent[k] < nsend[k] and (sent[k] < own[k] or sent[k] - own[k] < sent[(k - 1) % p]))
           for k in range(p)]
    for k in range(p):
        sent[k] += now[k]
    return sum(now), now


def allgatherv_block_elems(p: int, counts: Sequence[int], extent: int, block_bytes: int,
                           alpha: float, beta: float) -> int:
    """Pipelined ring block size ``B`` in elements of `extent` bytes (Section 2.4).

    ``block_bytes > 0``: ``max(1, block_bytes // extent)``, no upper cap.  ``0``: the
    paper's estimate, Eq. (2), ``sqrt(m alpha / (beta D))`` bytes with ``m`` the total
    bytes, ``z`` the number of empty processes and ``D = (p + z)/2 - 1 + floor(z/(p-z))``
    (``p - 2`` for the broadcast case ``z = p - 1``), rounded down to elements and clamped
    to ``1 .. max counts``; ``max counts`` for a regular problem (the linear ring) or
    ``D <= 0``, 1 if all counts are 0.  Floating point as in C, bit for bit: ``beta = 0``
    gives the largest block, ``alpha < 0`` one element (``tuw_allgatherv_block_elems``).

    Examples
    --------
    >>> allgatherv_block_elems(3, [10, 0, 3], 4, 9, 1e-6, 1e-9)
    2
    >>> allgatherv_block_elems(5, [10**6, 0, 0, 0, 0], 4, 0, 1e-6, 1e-9)   # Eq. (2), z = p-1
    9128
    """
    extent = max(extent, 1)  # no element size to divide by: count in bytes
    if block_bytes > 0:
        return max(1, block_bytes // extent)
    counts = [int(c) for c in counts[:p]]
    largest = max(counts, default=0)
    if largest <= 0:
        return 1
    if all(c == counts[0] for c in counts):
        return largest
    z = sum(1 for c in counts if c == 0)
    d = float(p - 2) if z == p - 1 else (p + z) / 2.0 - 1.0 + float(z // (p - z))
    if d <= 0:
        return largest
    m = sum(counts) * extent
    with np.errstate(all="ignore"):  # IEEE results, as C: inf for beta = 0, nan for alpha < 0
        elems = np.floor(np.sqrt(np.float64(m) * alpha / (np.float64(beta) * d)) / extent)
    if not elems >= 1.0:
        return 1
    if elems >= largest:
        return largest
    return int(elems)
