"""The circulant communication graph of the uniform reduce-scatter paper, from integers only.

Mirror of ``kernels_c/topology/circulant.c`` (Träff, Hunold, Vardas, Funk, "Uniform
algorithms for reduce-scatter and (most) other collectives for MPI", Sections III-A to
III-D).  ``q = ceil(log2 p)`` rounds; ``skips`` halve ``p`` repeatedly, rounding up
(Listing 1, Table II).  In round ``k`` rank ``r`` sends to ``(r - jump_k) mod p`` and
receives from ``(r + jump_k) mod p``, with the correction ``e_k = skips[k+1] mod 2`` and
``jump_k = skips[k] - e_k = skips[k+1] - skips[k]`` (Section III-B).

* :func:`circ_pathhead`: the round in which a virtual rank sends its partial sum to its
  parent in the Reduce tree (Listing 4); :func:`circ_tree_create` derives parent and
  children from it (Section III-C).
* :func:`circ_relative_blocks`: the sets ``B_r^k`` of blocks sent in round ``k`` as
  offsets ``x`` (the block of rank ``r - x``), depth first (Listing 5, Section III-D).

Examples
--------
The paper's example, p = 9 and rank 8 (Section III-D):

>>> q, skips = circ_skips(9)
>>> q, skips
(4, [1, 2, 3, 5, 9])
>>> [circ_to(9, 8, skips, k) for k in range(q)], [circ_from(9, 8, skips, k) for k in range(q)]
([7, 7, 6, 4], [0, 0, 1, 3])
>>> block = [0] * (2**q - 1)
>>> circ_relative_blocks(0, 0, q, skips, 0, block)
15
>>> [(8 - x) % 9 for x in block[:8]], [(8 - x) % 9 for x in block[8:12]]
([7, 6, 4, 0, 2, 5, 1, 3], [7, 5, 1, 3])
>>> circ_skips(33)[1]                      # Table II
[1, 2, 3, 5, 9, 17, 33]
"""
from __future__ import annotations

from typing import MutableSequence, NamedTuple, Sequence

__all__ = [
    "CircEdge",
    "CircTree",
    "circ_blocks",
    "circ_epsilon",
    "circ_from",
    "circ_jump",
    "circ_pathhead",
    "circ_relative_blocks",
    "circ_skips",
    "circ_subtree_size",
    "circ_to",
    "circ_tree_create",
]


def _check_p(p: int) -> None:
    if p < 1:
        raise ValueError(f"p must be at least 1, got {p}")


def _check_round(skips: Sequence[int], k: int) -> None:
    if not 0 <= k < len(skips) - 1:
        raise ValueError(f"round {k} out of range 0..{len(skips) - 2}")


def circ_skips(p: int) -> tuple[int, list[int]]:
    """``q = ceil(log2 p)`` and ``skips[0..q]`` (``tuw_circ_skips``, Listing 1).

    Repeated halving of ``p``, rounded up: ``skips[q] = p``, ``skips[k] = skips[k+1] -
    skips[k+1] // 2``.  (The paper's listing rounds down while counting the rounds, which
    gives ``floor(log2 p)``; Table II needs the ceiling.)

    Examples
    --------
    >>> circ_skips(31), circ_skips(1)
    ((5, [1, 2, 4, 8, 16, 31]), (0, [1]))
    """
    _check_p(p)
    q, n = 0, p
    while n > 1:
        q, n = q + 1, (n + 1) // 2
    skips = [0] * (q + 1)
    skips[q] = p
    for k in range(q - 1, -1, -1):
        skips[k] = skips[k + 1] - skips[k + 1] // 2
    return q, skips


def circ_epsilon(skips: Sequence[int], k: int) -> int:
    """The correction ``e_k = skips[k+1] mod 2`` of round `k` (``tuw_circ_epsilon``)."""
    _check_round(skips, k)
    return skips[k + 1] & 1


def circ_jump(skips: Sequence[int], k: int) -> int:
    """How far round `k` reaches: ``skips[k] - e_k = skips[k+1] - skips[k]``.

    Examples
    --------
    >>> [circ_jump([1, 2, 3, 5, 9], k) for k in range(4)]
    [1, 1, 2, 4]
    """
    return skips[k] - circ_epsilon(skips, k)


def circ_to(p: int, rank: int, skips: Sequence[int], k: int) -> int:
    """The to-process ``(rank - skips[k] + e_k) mod p`` of round `k` (``tuw_circ_to``)."""
    _check_p(p)
    return (rank - circ_jump(skips, k)) % p


def circ_from(p: int, rank: int, skips: Sequence[int], k: int) -> int:
    """The from-process ``(rank + skips[k] - e_k) mod p`` of round `k` (``tuw_circ_from``)."""
    _check_p(p)
    return (rank + circ_jump(skips, k)) % p


def circ_pathhead(virt: int, q: int, skips: Sequence[int]) -> int:
    """The round in which virtual rank `virt` sends towards virtual root 0 (Listing 4).

    `virt` is written greedily, from round ``q-1`` down, as a sum of jumps of distinct
    rounds; the lowest round used is the answer (``q`` for the root).

    Examples
    --------
    >>> q, skips = circ_skips(9)             # jumps 1 1 2 4
    >>> [circ_pathhead(v, q, skips) for v in range(9)]
    [4, 1, 2, 1, 3, 1, 2, 1, 0]
    """
    if not 0 <= virt <= skips[q]:
        raise ValueError(f"virtual rank {virt} out of range 0..{skips[q] - 1}")
    if virt == 0 or virt == skips[q]:
        return q
    offs, i = 0, q
    while True:
        i -= 1
        jump = circ_jump(skips, i)
        if offs + jump == virt:
            break
        if offs + jump < virt:
            offs += jump
        if i <= 0:
            break
    return i


def circ_relative_blocks(off: int, k: int, q: int, skips: Sequence[int], b: int,
                         block: MutableSequence[int]) -> int:
    """Write the offsets of ``B^k .. B^(q-1)`` relative to `off` into ``block[b:]``
    (Listing 5); return the index after the last one written.

    From ``(off, k) = (0, 0)`` it writes ``2^q - 1`` offsets: ``2^(q-1)`` of round 0 (the
    set ``B_r^0``, offset ``x`` naming the block of rank ``r - x``), then ``2^(q-2)`` of
    round 1, and so on.  `block` is updated in place, as in C.
    """
    for i in range(k, q):
        block[b] = off + circ_jump(skips, i)
        b = circ_relative_blocks(block[b], i + 1, q, skips, b + 1, block)
    return b


# ---- derived views ---------------------------------------------------------------------


def circ_blocks(p: int, rank: int) -> list[list[int]]:
    """The sets ``B_rank^0 .. B_rank^(q-1)`` as ranks, in the order they are sent.

    Examples
    --------
    >>> circ_blocks(9, 8)                      # Section III-D
    [[7, 6, 4, 0, 2, 5, 1, 3], [7, 5, 1, 3], [6, 2], [4]]
    """
    q, skips = circ_skips(p)
    block = [0] * max(2**q - 1, 1)
    circ_relative_blocks(0, 0, q, skips, 0, block)
    out, start = [], 0
    for k in range(q):
        n = 2 ** (q - 1 - k)
        out.append([(rank - x) % p for x in block[start:start + n]])
        start += n
    return out


class CircEdge(NamedTuple):
    """A child edge of the Reduce tree (``tuw_circ_edge``): the child `rank` sends its
    partial sum in round `round`."""

    rank: int
    round: int


class CircTree(NamedTuple):
    """The circulant Reduce tree as one rank sees it (``tuw_circ_tree``, Section III-C).

    Attributes
    ----------
    parent : int
        Rank to send the partial sum to, -1 at the root.
    round : int
        Round of that send (:func:`circ_pathhead`), -1 at the root.
    children : tuple of CircEdge
        In increasing round (C: ``nchildren`` and ``child[]``); each child sends once.
    """

    parent: int
    round: int
    children: tuple[CircEdge, ...]


def circ_tree_create(p: int, rank: int, root: int) -> CircTree:
    """Parent and children of `rank` in the circulant Reduce tree rooted at `root`
    (``tuw_circ_tree_create``).

    In virtual ranks ``v = (rank - root) mod p``, ``v`` sends in round
    ``k = circ_pathhead(v)`` to ``v - jump_k``, along its circulant to-edge; its children
    are ``v + jump_j`` for the rounds ``j < k`` with ``v + jump_j < p`` whose own pathhead
    is ``j``.  Every process but the root sends once.

    Examples
    --------
    >>> circ_tree_create(9, 0, 0).children
    (CircEdge(rank=1, round=1), CircEdge(rank=2, round=2), CircEdge(rank=4, round=3))
    >>> circ_tree_create(9, 3, 0)              # v = 3 = 2 + 1 (jumps of rounds 2, 1)
    CircTree(parent=2, round=1, children=())
    """
    _check_p(p)
    if not (0 <= rank < p and 0 <= root < p):
        raise ValueError(f"rank {rank} and root {root} must be in 0..{p - 1}")
    q, skips = circ_skips(p)
    v = (rank - root) % p
    head = circ_pathhead(v, q, skips)
    children = []
    for j in range(head):
        c = v + circ_jump(skips, j)
        if c < p and circ_pathhead(c, q, skips) == j:
            children.append(CircEdge((c + root) % p, j))
    if v == 0:
        return CircTree(-1, -1, tuple(children))
    return CircTree((rank - circ_jump(skips, head)) % p, head, tuple(children))


def circ_subtree_size(p: int, rank: int, root: int) -> int:
    """Processes in the subtree of `rank` in the tree of :func:`circ_tree_create`
    (``tuw_circ_subtree_size``): virtual ranks ``v .. v + size - 1``, consecutive, the
    children's subtrees one after another in round order, which is what lets Gather and
    Scatter use the tree (Section III-F).  ``v``'s subtree ends where its next sibling's
    begins; the last child's where its parent's does; the root's at ``p``.

    Examples
    --------
    >>> [circ_subtree_size(9, r, 0) for r in range(9)]
    [9, 1, 2, 1, 5, 1, 3, 2, 1]
    """
    v = (rank - root) % p
    x = rank
    while x != root:
        t = circ_tree_create(p, x, root)
        for e in circ_tree_create(p, t.parent, root).children:
            if e.round > t.round:
                return (e.rank - root) % p - v
        x = t.parent
    return p - v
