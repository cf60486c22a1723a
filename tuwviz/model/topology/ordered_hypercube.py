"""Ordered hypercubes of Träff 2017 (Section 2, Lemmas 2.1-2.3), from integers only.

Mirror of ``kernels_c/topology/ordered_hypercube.c``, function for function.  At level
``d`` the ranks ``0..p-1`` fall into consecutive *cubes* ``[c 2^d, (c+1) 2^d)``, the last
one cut at ``p``; cubes ``2c`` and ``2c+1`` of level ``d`` form cube ``c`` of level
``d+1``.  Every cube has a *fixed root*, its last rank, which any rank can compute, and a
*gather root*, which depends on the block sizes.  In iteration ``d`` the fixed roots of two
sibling cubes exchange their :class:`OhState` and both apply :func:`oh_right_wins`, so they
agree on the winner without further messages.

A fixed root finds its partner by flipping bit ``d`` of its rank (:func:`oh_partner`); one
beyond ``p - 1`` is replaced by ``p - 1``.  Rank ``p - 1`` itself, with bit ``d`` set, pairs
with ``floor((p-1) / 2^d) 2^d - 1``; with bit ``d`` clear it has no partner in iteration
``d`` (Section 2, last paragraphs).

The tree these rules build, by communicating, is ``tuw_oh_construct``
(``kernels_c/common/ordered_hypercube_tree.c``), modelled by
:func:`tuwviz.model.ordered_hypercube.build_tree`.

Examples
--------
``p = 11``, as in Figure 2 of the paper:

>>> [oh_fixed_root(11, 1, i) for i in range(11)]
[1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 10]
>>> [oh_partner(11, d, f) for d, f in [(1, 9), (1, 10), (2, 10), (3, 7), (3, 10)]]
[10, 9, -1, 10, 7]
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "OhState",
    "oh_cube",
    "oh_dims",
    "oh_fixed_root",
    "oh_has_sibling",
    "oh_is_fixed_root",
    "oh_partner",
    "oh_right_wins",
]


class OhState(NamedTuple):
    """What a fixed root knows about its cube and exchanges with its partner (``tuw_oh_state``).

    Attributes
    ----------
    groot : int
        The cube's gather root.
    time : int
        Gather time estimate ``T``: bytes of the cube outside the gather root.
    rootblock : int
        Bytes of the gather root's own block ``m_g``.
    """

    groot: int
    time: int
    rootblock: int

    @property
    def total(self) -> int:
        """All bytes of the cube, ``T + m_g``."""
        return self.time + self.rootblock


def oh_dims(p: int) -> int:
    """Number of iterations ``D = ceil(log2 p)`` (0 for ``p = 1``).

    Raises
    ------
    ValueError
        If ``p < 1`` (C returns 0).

    Examples
    --------
    >>> [oh_dims(p) for p in (1, 2, 3, 4, 5, 11, 16, 17)]
    [0, 1, 2, 2, 3, 4, 4, 5]
    """
    if p < 1:
        raise ValueError(f"number of processes must be at least 1, got p={p}")
    return (p - 1).bit_length()


def oh_cube(p: int, d: int, rank: int) -> tuple[int, int]:
    """The level-`d` cube containing `rank`, as ``(lo, hi)``: ranks ``lo..hi-1``.

    Examples
    --------
    >>> oh_cube(11, 2, 9), oh_cube(11, 3, 2)
    ((8, 11), (0, 8))
    """
    lo = (rank >> d) << d
    return lo, min(lo + (1 << d), p)


def oh_fixed_root(p: int, d: int, rank: int) -> int:
    """Fixed root of the level-`d` cube containing `rank`: its last rank."""
    return min(((rank >> d) + 1) << d, p) - 1


def oh_is_fixed_root(p: int, d: int, rank: int) -> bool:
    """True if `rank` is the fixed root of its level-`d` cube."""
    return rank == p - 1 or ((rank + 1) & ((1 << d) - 1)) == 0


def oh_has_sibling(p: int, d: int, rank: int) -> bool:
    """True if the level-`d` cube of `rank` has a sibling, i.e. takes part in iteration `d`.

    Only the last cube of a level can lack one: a left cube (bit `d` of its index clear)
    that ends at ``p``.
    """
    c = rank >> d
    return bool(c & 1) or ((c + 1) << d) < p


def oh_partner(p: int, d: int, f: int) -> int:
    """Fixed root that fixed root `f` exchanges with in iteration `d`; -1 if none.

    Flip bit `d` of `f`; a partner beyond ``p - 1`` is replaced by ``p - 1``.  Rank
    ``p - 1`` with bit `d` set pairs with ``floor((p-1)/2^d) 2^d - 1``; with bit `d` clear
    it has no role in iteration `d` (Träff 2017, Section 2).  Also -1 if `f` is not the
    fixed root of its level-`d` cube.

    Examples
    --------
    >>> oh_partner(11, 0, 4), oh_partner(11, 1, 4)     # 4 is no fixed root at level 1
    (5, -1)
    """
    if not oh_is_fixed_root(p, d, f):
        return -1
    bit = 1 << d
    if f == p - 1:
        return ((f >> d) << d) - 1 if f & bit else -1
    if f & bit:
        return f - bit
    return min(f + bit, p - 1)


def oh_right_wins(left: OhState, right: OhState, root: int) -> bool:
    """True if the right cube's gather root becomes the gather root of the union.

    The cube holding the external `root` wins (it is always its own gather root, Lemma
    2.2); else the larger gather time ``T`` wins, then the larger total (Lemma 2.1: the cube
    with the smaller gather time, ties broken towards the smaller amount of data, sends),
    then the right cube (the one whose fixed root stays fixed root), so that the gather root
    of a regular problem always is the fixed root and needs no info messages.

    Examples
    --------
    >>> oh_right_wins(OhState(0, 0, 5), OhState(1, 0, 5), root=7), oh_right_wins(
    ...     OhState(0, 0, 5), OhState(1, 0, 4), root=7), oh_right_wins(OhState(0, 0, 5),
    ...     OhState(1, 9, 0), root=0)
    (True, False, False)
    """
    if left.groot == root:
        return False
    if right.groot == root:
        return True
    if left.time != right.time:
        return right.time > left.time
    if left.total != right.total:
        return right.total > left.total
    return True
