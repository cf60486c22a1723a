"""Ordered hypercubes and the linear-time gather tree of Träff 2017 (Lemmas 2.1-2.3).

This module is the Python mirror, function for function, of the C topology in
``kernels_c/gatherv/ordered_hypercube.c`` (integers only, no communication), plus
:func:`build_tree`, which runs the distributed tree construction of Lemma 2.3 for all
ranks at once and records every message it needs.  The model schedules of
``gatherv/tuw`` and ``scatterv/tuw`` (:mod:`tuwviz.model.gatherv`,
:mod:`tuwviz.model.scatterv`) are built from its result.

Ordered hypercubes
------------------
At level ``d`` the ranks ``0..p-1`` fall into consecutive *cubes* of ``2^d`` ranks,
``[c 2^d, (c+1) 2^d)``; the last one is cut at ``p`` when ``p`` is not a power of two.
Cubes ``2c`` and ``2c+1`` of level ``d`` form cube ``c`` of level ``d+1``; after
``D = ceil(log2 p)`` iterations one cube holds all ranks.

Every cube has a *fixed root*, its last rank ``min((c+1) 2^d, p) - 1``, which any rank can
compute, and a *gather root*, which depends on the block sizes.  In iteration ``d`` the
fixed roots of two sibling cubes exchange ``(gather root, gather time T, root block m_g)``
(:data:`EXCHANGE_BYTES`, constant size), where ``T`` is the amount of data of the cube
outside its gather root (Lemma 2.1's estimate of the time to gather the cube).  Both then
apply the same rule (:func:`right_wins`): the cube containing the externally given root
``r`` wins (Lemma 2.2); otherwise the cube with the larger ``T`` wins, ties going to the
larger total, then to the right cube (Lemma 2.1: "the one with the smaller gather time,
with ties broken in favor of the hypercube with the smallest amount of data, sends").  The
loser's gather root will send its whole cube, a consecutive range of blocks, to the
winner's gather root.  A fixed root that is not also its cube's gather root tells the
gather root the outcome with one constant-size *info* message (:data:`INFO_BYTES`).

The fixed root of a level-``d`` cube finds the fixed root of its sibling by flipping bit
``d`` of its rank (:func:`partner`).  Only rank ``p - 1`` needs care when ``p`` is not a
power of two (Section 2, last paragraphs): a fixed root whose flipped rank is beyond
``p - 1`` takes ``p - 1`` instead; rank ``p - 1`` itself, with bit ``d`` set, pairs with
``floor((p-1) / 2^d) 2^d - 1``, and with bit ``d`` clear it has no partner (its cube has no
sibling) in iteration ``d``.

Examples
--------
``p = 11`` and root 9, as in Figure 2 of the paper (with block sizes of our own):

>>> [fixed_root(11, 1, i) for i in range(11)]
[1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 10]
>>> [partner(11, d, f) for d, f in [(1, 9), (1, 10), (2, 10), (3, 7), (3, 10)]]
[10, 9, -1, 10, 7]
>>> t = build_tree([1, 0, 3, 2, 0, 0, 4, 1, 2, 5, 1], root=9)
>>> t.parent
[2, 0, 9, 2, 5, 6, 2, 6, 9, -1, 9]
>>> t.edge_bytes
[1, 0, 11, 2, 0, 0, 5, 1, 2, 0, 1]
>>> t.exchanges[-3:]
[(1, 9, 10), (2, 3, 7), (3, 7, 10)]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from .program import Op, Recv, Send, SendRecv

__all__ = [
    "EXCHANGE_BYTES",
    "INFO_BYTES",
    "Edge",
    "Info",
    "State",
    "Tree",
    "build_tree",
    "construction_programs",
    "cube",
    "dims",
    "fixed_root",
    "has_sibling",
    "is_fixed_root",
    "partner",
    "right_wins",
]

#: Bytes of one fixed-root exchange message: gather root, gather time and root block as
#: three 64-bit integers (``tuw_oh_state`` in ``kernels_c/include/ordered_hypercube.h``).
EXCHANGE_BYTES = 24
#: Bytes of one fixed root -> gather root info message: winner, loser and the loser's total
#: bytes as three 64-bit integers (``tuw_oh_info`` in the same header).
INFO_BYTES = 24


def dims(p: int) -> int:
    """Number of iterations ``D = ceil(log2 p)`` (0 for ``p = 1``).

    Examples
    --------
    >>> [dims(p) for p in (1, 2, 3, 4, 5, 11, 16, 17)]
    [0, 1, 2, 2, 3, 4, 4, 5]
    """
    if p < 1:
        raise ValueError(f"number of processes must be at least 1, got p={p}")
    return (p - 1).bit_length()


def cube(p: int, d: int, rank: int) -> tuple[int, int]:
    """The level-`d` cube containing `rank`, as ``(lo, hi)``: ranks ``lo..hi-1``.

    Examples
    --------
    >>> cube(11, 2, 9), cube(11, 3, 2)
    ((8, 11), (0, 8))
    """
    lo = (rank >> d) << d
    return lo, min(lo + (1 << d), p)


def fixed_root(p: int, d: int, rank: int) -> int:
    """Fixed root of the level-`d` cube containing `rank`: its last rank."""
    return min(((rank >> d) + 1) << d, p) - 1


def is_fixed_root(p: int, d: int, rank: int) -> bool:
    """True if `rank` is the fixed root of its level-`d` cube."""
    return rank == p - 1 or ((rank + 1) & ((1 << d) - 1)) == 0


def has_sibling(p: int, d: int, rank: int) -> bool:
    """True if the level-`d` cube of `rank` has a sibling, i.e. takes part in iteration `d`.

    Only the last cube of a level can lack one: a left cube (bit `d` of its index clear)
    that ends at ``p``.
    """
    c = rank >> d
    return bool(c & 1) or ((c + 1) << d) < p


def partner(p: int, d: int, f: int) -> int:
    """Fixed root that fixed root `f` exchanges with in iteration `d`, or -1 if none.

    Flip bit `d` of `f`; a partner beyond ``p - 1`` is replaced by ``p - 1``.  Rank
    ``p - 1`` with bit `d` set pairs with ``floor((p-1)/2^d) 2^d - 1``; with bit `d` clear
    it has no role in iteration `d` (Träff 2017, Section 2).

    Raises
    ------
    ValueError
        If `f` is not the fixed root of its level-`d` cube (``tuw_oh_partner`` in C
        returns -1 instead).
    """
    if not is_fixed_root(p, d, f):
        raise ValueError(f"rank {f} is not a fixed root at level {d} for p={p}")
    bit = 1 << d
    if f == p - 1:
        return ((f >> d) << d) - 1 if f & bit else -1
    if f & bit:
        return f - bit
    return min(f + bit, p - 1)


class State(NamedTuple):
    """What a fixed root knows about its cube, and exchanges with its partner.

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


def right_wins(left: State, right: State, root: int) -> bool:
    """True if the right cube's gather root becomes the gather root of the union.

    The cube holding the external `root` wins (it is always its own gather root, Lemma
    2.2); else the larger gather time ``T`` wins, then the larger total, then the right
    cube (the one whose fixed root stays fixed root), so that the gather root of a regular
    problem always is the fixed root and needs no info messages.

    Examples
    --------
    >>> right_wins(State(0, 0, 5), State(1, 0, 5), root=7), right_wins(State(0, 0, 5),
    ...     State(1, 0, 4), root=7), right_wins(State(0, 0, 5), State(1, 9, 0), root=0)
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


class Edge(NamedTuple):
    """A data edge of the tree: `child` sends blocks ``lo..hi-1`` to `parent` (gather)."""

    iteration: int
    child: int
    parent: int
    lo: int
    hi: int
    nbytes: int


class Info(NamedTuple):
    """Info message of iteration `iteration` from fixed root `src` to gather root `dst`.

    It tells `dst` the outcome of the iteration: `winner` and `loser` (gather roots) and
    `nbytes`, the loser's total.
    """

    iteration: int
    src: int
    dst: int
    winner: int
    loser: int
    nbytes: int


@dataclass
class Tree:
    """The gather tree of :func:`build_tree` and the messages that built it.

    Attributes
    ----------
    p, root : int
        Number of ranks, external root.
    parent : list of int
        Parent of each rank (-1 at the root).
    edge_bytes : list of int
        Bytes on the edge from each rank to its parent (0 at the root and for the paper's
        dotted, zero-size edges, which carry no message).
    edge_iteration : list of int
        Iteration in which each rank's edge was made (-1 at the root).
    subtree : list of tuple of int
        ``(lo, hi)``: the ranks whose blocks each rank holds before it sends (its cube at
        ``edge_iteration``); ``(0, p)`` at the root.
    children : list of list of Edge
        Per rank, its child edges in iteration order.
    exchanges : list of tuple of int
        ``(iteration, left fixed root, right fixed root)`` of every exchange.
    infos : list of Info
        Every info message, by iteration.
    gather_roots : list of list of int
        ``gather_roots[d][c]``: gather root of cube ``c`` of level ``d`` (``d = 0..D``).
    """

    p: int
    root: int
    parent: list[int]
    edge_bytes: list[int]
    edge_iteration: list[int]
    subtree: list[tuple[int, int]]
    children: list[list[Edge]]
    exchanges: list[tuple[int, int, int]] = field(default_factory=list)
    infos: list[Info] = field(default_factory=list)
    gather_roots: list[list[int]] = field(default_factory=list)


def build_tree(nbytes: Sequence[int], root: int) -> Tree:
    """Run the tree construction of Lemma 2.3 for block sizes `nbytes` and root `root`.

    Parameters
    ----------
    nbytes : sequence of int
        ``m_i`` in bytes, one per rank (``p = len(nbytes)``).
    root : int
        The externally given root ``r``.

    Returns
    -------
    Tree
        Parents, edge sizes and iterations, and every exchange and info message, in the
        order the C construction (``tuw_oh_construct``) performs them.

    Raises
    ------
    ValueError
        If `nbytes` is empty or has a negative entry, or `root` is out of range.
    """
    p = len(nbytes)
    if p < 1:
        raise ValueError("need at least one block size")
    if not 0 <= root < p:
        raise ValueError(f"root {root} out of range 0..{p - 1}")
    for i, m in enumerate(nbytes):
        if m < 0:
            raise ValueError(f"negative block size {m} bytes for process {i}")
    states = [State(i, 0, int(m)) for i, m in enumerate(nbytes)]
    tree = Tree(p, root, [-1] * p, [0] * p, [-1] * p, [(i, i + 1) for i in range(p)],
                [[] for _ in range(p)], gather_roots=[list(range(p))])
    for d in range(dims(p)):
        merged: list[State] = []
        for c in range(0, len(states), 2):
            if c + 1 == len(states):  # last cube without sibling: passes through
                merged.append(states[c])
                continue
            left, right = states[c], states[c + 1]
            f_left = ((c + 1) << d) - 1
            f_right = min((c + 2) << d, p) - 1
            tree.exchanges.append((d, f_left, f_right))
            if right_wins(left, right, root):
                win, lose, lo, hi = right, left, c << d, (c + 1) << d
            else:
                win, lose, lo, hi = left, right, (c + 1) << d, min((c + 2) << d, p)
            for f, s in ((f_left, left), (f_right, right)):
                if f != s.groot:
                    tree.infos.append(Info(d, f, s.groot, win.groot, lose.groot, lose.total))
            g, w = lose.groot, win.groot
            edge = Edge(d, g, w, lo, hi, lose.total)
            tree.parent[g] = w
            tree.edge_bytes[g] = lose.total
            tree.edge_iteration[g] = d
            tree.subtree[g] = (lo, hi)
            tree.children[w].append(edge)
            merged.append(State(w, win.time + lose.total, win.rootblock))
        states = merged
        tree.gather_roots.append([s.groot for s in states])
    tree.subtree[root] = (0, p)
    return tree


def construction_programs(tree: Tree) -> list[list[Op]]:
    """Per-rank programs of the tree construction, as ``tuw_oh_construct`` runs it.

    In iteration ``d`` a fixed root with a partner first exchanges states with it
    (:class:`~tuwviz.model.program.SendRecv` of :data:`EXCHANGE_BYTES` each way, kind
    ``"exchange"``), then, if its cube's gather root is another rank, sends that rank the
    outcome (:data:`INFO_BYTES`, kind ``"info"``), which the gather root receives.  Tags are
    the iteration.  No rank has both roles for one cube, so this is each rank's program
    order.

    Examples
    --------
    >>> progs = construction_programs(build_tree([1, 0, 3, 2], root=0))
    >>> [[(type(op).__name__, op.tag, op.kind) for op in prog] for prog in progs]
    [[('SendRecv', 0, 'exchange'), ('Recv', 1, 'info')], \
[('SendRecv', 0, 'exchange'), ('SendRecv', 1, 'exchange'), ('Send', 1, 'info')], \
[('SendRecv', 0, 'exchange'), ('Recv', 1, 'info')], \
[('SendRecv', 0, 'exchange'), ('SendRecv', 1, 'exchange'), ('Send', 1, 'info')]]
    """
    programs: list[list[Op]] = [[] for _ in range(tree.p)]
    k = 0
    infos = tree.infos
    for i, (d, a, b) in enumerate(tree.exchanges):
        programs[a].append(SendRecv(b, EXCHANGE_BYTES, b, EXCHANGE_BYTES, tag=d, kind="exchange"))
        programs[b].append(SendRecv(a, EXCHANGE_BYTES, a, EXCHANGE_BYTES, tag=d, kind="exchange"))
        last_of_iteration = i + 1 == len(tree.exchanges) or tree.exchanges[i + 1][0] != d
        if last_of_iteration:
            while k < len(infos) and infos[k].iteration == d:
                info = infos[k]
                programs[info.src].append(Send(info.dst, INFO_BYTES, tag=d, kind="info"))
                programs[info.dst].append(Recv(info.src, INFO_BYTES, tag=d, kind="info"))
                k += 1
    return programs
