"""The linear-time gather tree of Träff 2017 (Lemma 2.3), built for all ranks at once.

:func:`build_tree` runs the distributed tree construction of ``tuw_oh_construct``
(``kernels_c/common/ordered_hypercube_tree.c``) for every rank together and records every
message it needs; :func:`construction_programs` turns those messages into per-rank
programs.  The model schedules of ``gatherv/tuw`` and ``scatterv/tuw``
(:mod:`tuwviz.model.gatherv`, :mod:`tuwviz.model.scatterv`) are built from its result.

The integer rules it applies - cubes, fixed roots, partners and who wins an exchange - are
the topology builders of :mod:`tuwviz.model.topology.ordered_hypercube`, the mirror of
``kernels_c/topology/ordered_hypercube.c``.

Construction
------------
In iteration ``d`` the fixed roots of two sibling level-``d`` cubes exchange
``(gather root, gather time T, root block m_g)`` (:data:`EXCHANGE_BYTES`, constant size),
where ``T`` is the amount of data of the cube outside its gather root (Lemma 2.1's
estimate of the time to gather the cube).  Both then apply the same rule
(:func:`~tuwviz.model.topology.ordered_hypercube.oh_right_wins`): the cube containing the
externally given root ``r`` wins (Lemma 2.2); otherwise the cube with the larger ``T``
wins, ties going to the larger total, then to the right cube.  The loser's gather root
will send its whole cube, a consecutive range of blocks, to the winner's gather root.  A
fixed root that is not also its cube's gather root tells the gather root the outcome with
one constant-size *info* message (:data:`INFO_BYTES`).

Examples
--------
``p = 11`` and root 9, as in Figure 2 of the paper (with block sizes of our own):

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
from .topology.ordered_hypercube import OhState, oh_dims, oh_right_wins

__all__ = [
    "EXCHANGE_BYTES",
    "INFO_BYTES",
    "Edge",
    "Info",
    "Tree",
    "build_tree",
    "construction_programs",
]

#: Bytes of one fixed-root exchange message: gather root, gather time and root block as
#: three 64-bit integers (``tuw_oh_state`` in ``kernels_c/include/ordered_hypercube.h``).
EXCHANGE_BYTES = 24
#: Bytes of one fixed root -> gather root info message: winner, loser and the loser's total
#: bytes as three 64-bit integers (``tuw_oh_info`` in the same header).
INFO_BYTES = 24


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
    states = [OhState(i, 0, int(m)) for i, m in enumerate(nbytes)]
    tree = Tree(p, root, [-1] * p, [0] * p, [-1] * p, [(i, i + 1) for i in range(p)],
                [[] for _ in range(p)], gather_roots=[list(range(p))])
    # Local names: this loop runs p - 1 times, a million at paper scale.
    parent, edge_bytes, edge_iteration = tree.parent, tree.edge_bytes, tree.edge_iteration
    subtree, children = tree.subtree, tree.children
    exchanges, infos, gather_roots = tree.exchanges, tree.infos, tree.gather_roots
    right_wins = oh_right_wins
    for d in range(oh_dims(p)):
        merged: list[OhState] = []
        n = len(states)
        for c in range(0, n - 1, 2):
            left, right = states[c], states[c + 1]
            f_left = ((c + 1) << d) - 1
            f_right = min((c + 2) << d, p) - 1
            exchanges.append((d, f_left, f_right))
            if right_wins(left, right, root):
                win, lose, lo, hi = right, left, c << d, (c + 1) << d
            else:
                win, lose, lo, hi = left, right, (c + 1) << d, min((c + 2) << d, p)
            w, w_time, w_rootblock = win
            g, g_time, g_rootblock = lose
            g_total = g_time + g_rootblock
            if f_left != left[0]:
                infos.append(Info(d, f_left, left[0], w, g, g_total))
            if f_right != right[0]:
                infos.append(Info(d, f_right, right[0], w, g, g_total))
            parent[g] = w
            edge_bytes[g] = g_total
            edge_iteration[g] = d
            subtree[g] = (lo, hi)
            children[w].append(Edge(d, g, w, lo, hi, g_total))
            merged.append(OhState(w, w_time + g_total, w_rootblock))
        if n % 2:  # last cube without sibling: passes through
            merged.append(states[-1])
        states = merged
        gather_roots.append([st[0] for st in states])
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
    infos, exchanges = tree.infos, tree.exchanges
    n_infos, n_exchanges = len(infos), len(exchanges)
    nx = EXCHANGE_BYTES
    k = 0
    for i, (d, a, b) in enumerate(exchanges):
        # positional arguments: a million ops at paper scale, keywords cost time
        programs[a].append(SendRecv(b, nx, b, nx, d, None, None, "exchange"))
        programs[b].append(SendRecv(a, nx, a, nx, d, None, None, "exchange"))
        if i + 1 == n_exchanges or exchanges[i + 1][0] != d:  # last of its iteration
            while k < n_infos and infos[k][0] == d:
                _, src, dst, _, _, _ = infos[k]
                programs[src].append(Send(dst, INFO_BYTES, d, None, "info"))
                programs[dst].append(Recv(src, INFO_BYTES, d, None, "info"))
                k += 1
    return programs
