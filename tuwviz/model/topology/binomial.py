"""The fixed binomial tree of the binomial Gatherv/Scatterv kernels, from integers only.

Mirror of ``kernels_c/topology/binomial.c`` (``tuw_binomial_tree_create``), the
block-size-oblivious baseline of Träff 2017, Section 1.  Virtual ranks relative to the root,
``v = (rank - root) mod p``: ``v > 0`` hangs below ``v - lowbit(v)``, joined in round
``log2 lowbit(v)``; its children are ``v + 2^k`` for every ``2^k < lowbit(v)`` with
``v + 2^k < p`` (the root: every ``2^k < p``), in increasing round ``k``.  The subtree of
``v`` is virtual ranks ``v .. v + size - 1``, ``size = min(lowbit(v), p - v)``, the own
block first and the child of round ``k``'s subtree from block ``2^k`` on.

Examples
--------
``p = 6``, root 2, the example of ``binomial.c``: rank 4 is virtual rank 2.

>>> binomial_tree_create(6, 4, 2)
BinomialTree(parent=2, round=1, size=2, children=(BinomialEdge(rank=5, round=0, first=1, size=1),))
>>> [e.rank for e in binomial_tree_create(6, 2, 2).children]
[3, 4, 0]
>>> virtual_blocks(6, 2, 4, 2)      # the subtree of rank 0 (v = 4): ranks 0 and 1
[(0, 2)]
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["BinomialEdge", "BinomialTree", "binomial_tree_create", "virtual_blocks"]


class BinomialEdge(NamedTuple):
    """A child edge (``tuw_binomial_edge``).

    Attributes
    ----------
    rank : int
        The child; its subtree's first block is its own.
    round : int
        ``k``: the child is virtual rank ``v + 2^k``; round and tag of the edge.
    first : int
        ``2^k``: its subtree starts at block `first` of its parent's (0 = the parent's own).
    size : int
        Blocks (processes) in its subtree.
    """

    rank: int
    round: int
    first: int
    size: int


class BinomialTree(NamedTuple):
    """The binomial tree as one rank sees it (``tuw_binomial_tree``).

    Attributes
    ----------
    parent : int
        Rank of the parent, -1 at the root.
    round : int
        Round (tag) of the edge to the parent, -1 at the root.
    size : int
        Processes in the subtree: virtual ranks ``v .. v + size - 1``.
    children : tuple of BinomialEdge
        In increasing round (C: ``nchildren`` and ``child[]``).
    """

    parent: int
    round: int
    size: int
    children: tuple[BinomialEdge, ...]


def binomial_tree_create(p: int, rank: int, root: int) -> BinomialTree:
    """The binomial tree rooted at `root` as `rank` sees it (``tuw_binomial_tree_create``).

    Parameters
    ----------
    p : int
        Number of processes.
    rank, root : int
        This process and the root, ``0 .. p-1``.

    Returns
    -------
    BinomialTree

    Raises
    ------
    ValueError
        If ``p < 1`` or `rank` or `root` is out of range (C: undefined).

    Examples
    --------
    >>> [binomial_tree_create(6, i, 2)[:3] for i in range(6)]
    [(2, 2, 2), (0, 0, 1), (-1, -1, 6), (2, 0, 1), (2, 1, 2), (4, 0, 1)]
    """
    if p < 1 or not 0 <= rank < p or not 0 <= root < p:
        raise ValueError(f"need 0 <= rank, root < p, got p={p}, rank={rank}, root={root}")
    v = (rank - root) % p
    low = v & -v if v else 1 << p.bit_length()  # the root: every 2^k < p is a child
    children = []
    k = 0
    while (1 << k) < low and v + (1 << k) < p:
        mask = 1 << k
        children.append(BinomialEdge((rank + mask) % p, k, mask, min(mask, p - v - mask)))
        k += 1
    if not v:
        return BinomialTree(-1, -1, p, tuple(children))
    return BinomialTree((rank - low) % p, low.bit_length() - 1, min(low, p - v), tuple(children))


def virtual_blocks(p: int, root: int, v: int, size: int) -> list[tuple[int, int]]:
    """Real rank ranges ``[lo, hi)`` of virtual ranks ``v .. v+size-1`` (relative to `root`).

    One range, or two when the run wraps from rank ``p - 1`` to rank 0.  Python only: in C
    ``tuw_block_range`` (``kernels_c/common/block_range.c``) takes the run as (first rank,
    count) and handles the wrap itself.

    Examples
    --------
    >>> virtual_blocks(8, 5, 2, 4)      # virtual 2..5 = ranks 7, 0, 1, 2
    [(7, 8), (0, 3)]
    """
    start = (root + v) % p
    if start + size <= p:
        return [(start, start + size)]
    return [(start, p), (0, start + size - p)]
