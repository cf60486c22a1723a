"""The divide-and-conquer tree of the D&C Gather and Scatter kernels, from integers only.

Mirror of ``kernels_c/topology/divide_conquer.c`` (``tuw_dc_tree_create``), the course
project's divide-and-conquer strategy (HPC course report, TU Wien 2017, Section 2.2).  A
range of ranks ``[lo, hi)`` with its subroot ``r`` splits at ``mid = lo + ceil((hi-lo)/2)``;
the half without ``r`` gets the subroot next to the cut (``mid`` if ``r < mid``, else
``mid - 1``), ``r``'s child at depth ``d``, the edge's round and tag; both halves split
again until single processes remain.  Every subtree is a range of consecutive real ranks,
so the root sends (scatter) or receives (gather) each half straight from or into the
user's buffer, whatever the root: no virtual ranks and no reordering.  ``ceil(log2 p)``
rounds.

Examples
--------
``p = 6``, root 2, the example of ``divide_conquer.c``:

>>> dc_tree_create(6, 3, 2)
DcTree(parent=2, round=0, lo=3, hi=6, children=(DcEdge(rank=5, round=1, lo=5, hi=6), DcEdge(rank=4, round=2, lo=4, hi=5)))
>>> [t.parent for t in (dc_tree_create(6, i, 2) for i in range(6))]
[1, 2, -1, 2, 3, 3]
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["DcEdge", "DcTree", "dc_tree_create"]


class DcEdge(NamedTuple):
    """A child edge (``tuw_dc_edge``).

    Attributes
    ----------
    rank : int
        The child: the subroot of the half ``[lo, hi)``.
    round : int
        Depth ``d`` of the split: round and tag of the edge.
    lo, hi : int
        The child's subtree: ranks ``lo .. hi-1``.
    """

    rank: int
    round: int
    lo: int
    hi: int


class DcTree(NamedTuple):
    """The divide-and-conquer tree as one rank sees it (``tuw_dc_tree``).

    Attributes
    ----------
    parent : int
        Rank of the parent, -1 at the root.
    round : int
        Round (tag) of the edge to the parent, -1 at the root.
    lo, hi : int
        The subtree: ranks ``lo .. hi-1`` (``0, p`` at the root).
    children : tuple of DcEdge
        In increasing round, largest half first (C: ``nchildren`` and ``child[]``).
    """

    parent: int
    round: int
    lo: int
    hi: int
    children: tuple[DcEdge, ...]


def dc_tree_create(p: int, rank: int, root: int) -> DcTree:
    """The divide-and-conquer tree rooted at `root` as `rank` sees it (``tuw_dc_tree_create``).

    Parameters
    ----------
    p : int
        Number of processes.
    rank, root : int
        This process and the root, ``0 .. p-1``.

    Returns
    -------
    DcTree

    Raises
    ------
    ValueError
        If ``p < 1`` or `rank` or `root` is out of range (C: undefined).

    Examples
    --------
    Root 0 of 8: the root sends halves 4, 2, 1 processes wide, as the report's Figure-less
    description says ("on each round the number of senders doubles"):

    >>> [(e.rank, e.round, e.hi - e.lo) for e in dc_tree_create(8, 0, 0).children]
    [(4, 0, 4), (2, 1, 2), (1, 2, 1)]
    """
    if p < 1 or not 0 <= rank < p or not 0 <= root < p:
        raise ValueError(f"need 0 <= rank, root < p, got p={p}, rank={rank}, root={root}")
    lo, hi, r = 0, p, root
    parent, rnd, my_lo, my_hi = -1, -1, 0, p
    children = []
    d = 0
    while hi - lo > 1:
        mid = lo + (hi - lo + 1) // 2
        r_left = r < mid
        olo, ohi = (mid, hi) if r_left else (lo, mid)
        sub = mid if r_left else mid - 1
        if rank == r:
            children.append(DcEdge(sub, d, olo, ohi))
        if olo <= rank < ohi:  # follow the other half, below its subroot
            if rank == sub:
                parent, rnd, my_lo, my_hi = r, d, olo, ohi
            r, lo, hi = sub, olo, ohi
        elif r_left:
            hi = mid
        else:
            lo = mid
        d += 1
    return DcTree(parent, rnd, my_lo, my_hi, tuple(children))
