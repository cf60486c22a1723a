"""Model schedules for MPI_Gatherv: linear, binomial, Träff's ordered-hypercube tree, and the
circulant tree of the uniform reduce-scatter paper (Section III-F).

Each builder mirrors its C kernel message for message (``kernels_c/gatherv/``): the same
peers, sizes, per-rank order and tags.  Data messages carry ``blocks`` (the ranks whose
blocks they hold, a ``range``) and ``kind="data"``; the ordered-hypercube tree's
construction messages have ``kind="exchange"`` (between fixed roots) and ``kind="info"``
(fixed root to gather root).  ``meta`` describes the tree for the visualizations, a
:class:`~tuwviz.model.meta.StarMeta` (linear) or :class:`~tuwviz.model.meta.TreeMeta`:

* ``root``: the root;
* ``parent``: parent rank of every rank, ``-1`` at the root;
* ``edge_bytes``: bytes on the edge from every rank to its parent (0 at the root and on the
  paper's dotted, zero-size edges);
* ``edge_sent``: whether that edge carries a message (the binomial tree sends even 0
  bytes; linear and tuw send nothing for an empty block or subtree);
* ``edge_iteration``: round (tag) of every rank's edge, ``-1`` at the root;
* ``fixed_exchanges``: ``(iteration, a, b)`` of every fixed-root exchange (tuw only);
* ``subtree_ranges``: per rank, the ``[lo, hi)`` rank ranges whose blocks it sends to its
  parent, in message order (two ranges when a binomial subtree wraps past rank ``p-1``).

linear: direct-to-root gather
-----------------------------
Every non-root rank ``i`` with a non-empty block sends it straight to the root ``r``; the
root receives the blocks one by one in increasing rank order ``0, 1, ..., p-1`` (skipping
itself and ranks with ``m_i = 0``) and copies its own block locally (no message).  This is
the "direct communication with the root" baseline of Träff 2017 (Section 1).

Cost in the one-ported model, when all blocks are non-empty::

    (p-1) alpha + beta * sum_{i != r} m_i        (m_i in bytes)

With ``k`` non-empty non-root blocks the cost is ``k alpha + beta * sum_{i != r} m_i``.

Example, ``p = 4``, root ``r = 2``, all blocks 40 bytes::

    rank 0: send 2 (40 B)
    rank 1: send 2 (40 B)
    rank 2: recv 0 (40 B), recv 1 (40 B), recv 3 (40 B)      -> 3 alpha + 120 beta
    rank 3: send 2 (40 B)

binomial: fixed, block-size-oblivious binomial tree
---------------------------------------------------
The tree of :func:`~tuwviz.model.topology.binomial.binomial_tree_create`: virtual ranks
``v = (i - r) mod p``.  A rank receives from its children ``v + 2^k``
(``2^k`` below the lowest set bit of ``v``, ``v + 2^k < p``) in increasing ``k``, each
message holding the child's subtree (virtual ranks ``v + 2^k .. min(v + 2^(k+1), p) - 1``),
then sends its own subtree to ``v - lowbit(v)``.  Every edge carries a message, even of 0
bytes: the tree ignores block sizes.  Tag = round ``k``.  Worst case (all blocks empty but
the deepest one): ``ceil(log2 p) (alpha + beta m)`` for ``p`` a power of two.

divide_conquer: halves of consecutive ranks
-------------------------------------------
The tree of :func:`~tuwviz.model.topology.divide_conquer.dc_tree_create` (HPC course
report, TU Wien 2017, Section 2.2): the ranks split into halves, the half without the root
gets a subroot next to the cut, recursively.  Every subtree is a range ``[lo, hi)`` of
consecutive real ranks, so the root receives each half in place for any root (no
reordering).  A rank receives its children's ranges, the latest round (smallest half)
first, then sends its range to its parent; every edge carries a message, even of 0 bytes.
Tag = the edge's round.  ``ceil(log2 p)`` rounds; the root's port carries
``beta sum_{i != r} m_i``.

tuw: Träff's linear-time ordered-hypercube tree
-----------------------------------------------
The tree construction of Lemma 2.3 (:mod:`tuwviz.model.ordered_hypercube`), then every
rank receives its children's subtrees in iteration order and sends its own subtree - a
consecutive range of ranks - to its parent.  Empty subtrees send nothing.  Tag = iteration.
Cost: at most ``3 ceil(log2 p) alpha + beta sum_{i != r} m_i`` plus the Lemma 2.2 penalty.

Examples
--------
>>> from tuwviz.problems import Problem, make_problem
>>> s = linear(make_problem("gatherv", p=4, distribution="same", b=10, root=2))
>>> s.messages(2)
[('recv', 0, 40), ('recv', 1, 40), ('recv', 3, 40)]
>>> s.messages(0)
[('send', 2, 40)]

The example of ``kernels_c/gatherv/gatherv_tuw.c`` (blocks of 1, 0, 3, 2 bytes, root 0):

>>> t = tuw(Problem("gatherv", 4, 0, (1, 0, 3, 2), datatype="byte"))
>>> t.meta.parent, t.meta.edge_bytes, t.meta.fixed_exchanges
([-1, 0, 0, 2], [0, 0, 5, 2], [(0, 0, 1), (0, 2, 3), (1, 1, 3)])
>>> [m for m in t.messages(0)]
[('send', 1, 24), ('recv', 1, 24), ('recv', 1, 24), ('recv', 2, 5)]
"""
from __future__ import annotations

from ..problems import Problem
from . import ordered_hypercube as oh
from .meta import StarMeta, TreeMeta
from .program import Compute, Op, Recv, Schedule, Send
from .topology.binomial import BinomialTree, binomial_tree_create, virtual_blocks
from .topology.circulant import circ_subtree_size, circ_tree_create
from .topology.divide_conquer import DcTree, dc_tree_create

__all__ = ["COUNT_BYTES", "binomial", "circulant", "divide_conquer", "linear", "tuw", "tuw_meta"]

#: Bytes per entry of the tree kernels' sizes messages (C ``int64_t``, ``MPI_INT64_T``:
#: sizes in bytes, which may exceed an ``int`` where counts do not): a Gatherv child's
#: subtree size sent ahead of its data, a Scatterv child's sizes of the rest of its subtree.
COUNT_BYTES = 8

# Collectives whose data flow is "every block to the root"; gather is gatherv with
# padded (equal) blocks, see Problem.block_counts.
_GATHERS = ("gather", "gatherv")


def _check(problem: Problem, algorithm: str) -> list[int]:
    """Bytes of every block, after checking that `problem` is a gather problem."""
    if problem.collective not in _GATHERS:
        raise ValueError(
            f"{algorithm} gather needs a gather or gatherv problem, got {problem.collective!r}"
        )
    return [c * problem.itemsize for c in problem.block_counts()]


def linear(problem: Problem) -> Schedule:
    """Linear (direct-to-root) gather schedule for `problem`.

    Parameters
    ----------
    problem : Problem
        A gather or gatherv problem.

    Returns
    -------
    Schedule
        The root receives ``problem.nbytes(i)`` bytes from every other rank ``i`` with a
        non-empty block, in increasing rank order; each such rank sends its block to the
        root with tag 0.  ``meta`` holds the star tree (see the module docstring).

    Raises
    ------
    ValueError
        If `problem` is not a gather or gatherv problem.

    Examples
    --------
    Ranks with empty blocks send nothing:

    >>> from tuwviz.problems import make_problem
    >>> s = linear(make_problem("gatherv", p=4, distribution="two_blocks", b=5, root=1))
    >>> s.all_messages()
    [[('send', 1, 20)], [('recv', 0, 20), ('recv', 3, 20)], [], [('send', 1, 20)]]
    """
    nbytes = _check(problem, "linear")
    p, root = problem.p, problem.root
    senders = [i for i in range(p) if i != root and nbytes[i] > 0]
    programs: list[list[Op]] = [[] for _ in range(p)]
    for i in senders:
        programs[i].append(Send(root, nbytes[i], 0, blocks=range(i, i + 1)))
    programs[root] = [Recv(i, nbytes[i], 0, blocks=range(i, i + 1)) for i in senders]
    return Schedule(problem.collective, "linear", p, programs, problem, StarMeta.of(nbytes, root))


def _binomial_trees(p: int, root: int) -> list[BinomialTree]:
    """The binomial tree as every rank sees it, by rank."""
    return [binomial_tree_create(p, i, root) for i in range(p)]


def _binomial_meta(p: int, root: int, tree: list[BinomialTree],
                   nbytes: list[int]) -> tuple[TreeMeta, list[int]]:
    """``meta`` of the binomial tree and the bytes of every rank's subtree."""
    return _ordered_meta(p, root, tree, [t.size for t in tree], nbytes)


def _ordered_meta(p: int, root: int, tree: list, sizes: list[int],
                  nbytes: list[int]) -> tuple[TreeMeta, list[int]]:
    """``meta`` of an ordered tree (every subtree ``sizes[i]`` consecutive virtual ranks
    from its own: binomial, circulant) and the bytes of every rank's subtree."""
    sub_bytes = []
    ranges = []
    for i, t in enumerate(tree):
        rr = virtual_blocks(p, root, (i - root) % p, sizes[i])
        ranges.append(rr)
        sub_bytes.append(sum(sum(nbytes[lo:hi]) for lo, hi in rr))
    meta = TreeMeta(root=root, parent=[t.parent for t in tree],
                    edge_bytes=[0 if i == root else sub_bytes[i] for i in range(p)],
                    edge_sent=[i != root for i in range(p)],
                    edge_iteration=[t.round for t in tree], fixed_exchanges=[],
                    subtree_ranges=ranges)
    return meta, sub_bytes


def _blocks(ranges: list[tuple[int, int]]) -> range | None:
    """The ``blocks`` field for a message of these rank ranges (None if it wraps)."""
    return range(*ranges[0]) if len(ranges) == 1 else None


def binomial(problem: Problem) -> Schedule:
    """Fixed binomial-tree gather schedule for `problem` (virtual ranks relative to root).

    Parameters
    ----------
    problem : Problem
        A gather or gatherv problem.

    Returns
    -------
    Schedule
        Each rank receives its children's subtrees (increasing round ``k``, tag ``k``),
        then sends its own subtree to its parent; every edge carries a message, even of 0
        bytes.  Gatherv: the subtrees' sizes first, see :func:`_ordered_gather`.  A
        message whose blocks wrap from rank ``p-1`` to rank 0 has ``blocks=None`` (its two
        ranges are in ``meta.subtree_ranges``).

    Raises
    ------
    ValueError
        If `problem` is not a gather or gatherv problem.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> s = binomial(make_problem("gatherv", p=6, distribution="same", b=1, root=2))
    >>> s.messages(2)
    [('recv', 3, 4), ('recv', 4, 8), ('recv', 0, 8)]
    >>> s.messages(4), s.meta.parent
    ([('recv', 5, 8), ('recv', 5, 4), ('send', 2, 8)], [2, 0, -1, 2, 2, 4])

    Rank 4 first learns the size of rank 5's subtree (8 bytes, an ``int64_t``): it posts
    the data's receive knowing it, without probing.  Its own size goes to nobody, as its
    parent is the root.

    MPI_Gather (``kernels_c/gather/gather_binomial.c``, the course report's) receives in
    virtual order and then reorders at a root other than 0: one local copy of the p - 1
    other blocks, a :class:`~tuwviz.model.program.Compute` of as many elements at the
    root's end (``gamma`` each; Gatherv's kernel receives in place, no copy):

    >>> g = binomial(make_problem("gather", p=6, distribution="same", b=3, root=2))
    >>> g.programs[2][-1], binomial(make_problem("gather", p=6, b=3, root=0)).programs[0][-1]
    (Compute(units=15, label='reorder copy'), Recv(peer=4, nbytes=24, tag=2, blocks=range(4, 6), kind='data'))
    """
    nbytes = _check(problem, "binomial")
    tree = _binomial_trees(problem.p, problem.root)
    s = _ordered_gather(problem, "binomial", tree, [t.size for t in tree], nbytes)
    if problem.collective == "gather" and problem.root != 0:
        s.programs[problem.root].append(
            Compute((problem.p - 1) * problem.block_counts()[0], "reorder copy"))
    return s


def circulant(problem: Problem) -> Schedule:
    """Circulant-tree gather schedule (the uniform reduce-scatter paper, Section III-F):
    the tree of :func:`~tuwviz.model.topology.circ_tree_create` with subtrees of
    :func:`~tuwviz.model.topology.circ_subtree_size`, run as :func:`binomial` runs its tree
    (``kernels_c/common/tree.c``).

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> s = circulant(make_problem("gatherv", p=9, distribution="same", b=1, root=0))
    >>> s.messages(0)
    [('recv', 1, 4), ('recv', 2, 8), ('recv', 4, 20)]
    >>> s.messages(7)
    [('recv', 8, 8), ('send', 6, 8), ('recv', 8, 4), ('send', 6, 8)]
    """
    nbytes = _check(problem, "circulant")
    p, root = problem.p, problem.root
    tree = [circ_tree_create(p, i, root) for i in range(p)]
    sizes = [circ_subtree_size(p, i, root) for i in range(p)]
    return _ordered_gather(problem, "circulant", tree, sizes, nbytes)


def _ordered_gather(problem: Problem, name: str, tree: list, sizes: list[int],
                    nbytes: list[int]) -> Schedule:
    """Each rank receives its children's subtrees (in the order given, tag = round), then
    sends its own subtree to its parent; every edge carries a message, even of 0 bytes.

    A Gatherv's sizes go first (``kernels_c/common/tree.c:tuw_tree_gatherv``): a non-root
    rank receives its children's subtree sizes (``kind="counts"``, :data:`COUNT_BYTES`
    each), then sends its own to a parent that is not the root (which knows recvcounts).
    A Gather's blocks are all as large, so it sends none."""
    p, root = problem.p, problem.root
    meta, sub_bytes = _ordered_meta(p, root, tree, sizes, nbytes)
    ranges = meta.subtree_ranges
    ahead = problem.collective == "gatherv"
    programs: list[list[Op]] = [[] for _ in range(p)]
    for i, t in enumerate(tree):
        prog = programs[i]
        if ahead and i != root:
            for e in t.children:
                prog.append(Recv(e.rank, COUNT_BYTES, e.round, kind="counts"))
            if t.parent != root:
                prog.append(Send(t.parent, COUNT_BYTES, t.round, kind="counts"))
        for e in t.children:
            c = e.rank
            prog.append(Recv(c, sub_bytes[c], e.round, blocks=_blocks(ranges[c])))
        if t.parent >= 0:
            prog.append(Send(t.parent, sub_bytes[i], t.round, blocks=_blocks(ranges[i])))
    return Schedule(problem.collective, name, p, programs, problem, meta)


def _dc_trees(p: int, root: int) -> list[DcTree]:
    """The divide-and-conquer tree as every rank sees it, by rank."""
    return [dc_tree_create(p, i, root) for i in range(p)]


def _dc_meta(root: int, tree: list[DcTree], nbytes: list[int]) -> tuple[TreeMeta, list[int]]:
    """``meta`` of the divide-and-conquer tree and the bytes of every rank's range."""
    sub_bytes = [sum(nbytes[t.lo:t.hi]) for t in tree]
    p = len(tree)
    meta = TreeMeta(root=root, parent=[t.parent for t in tree],
                    edge_bytes=[0 if i == root else sub_bytes[i] for i in range(p)],
                    edge_sent=[i != root for i in range(p)],
                    edge_iteration=[t.round for t in tree], fixed_exchanges=[],
                    subtree_ranges=[[(t.lo, t.hi)] for t in tree])
    return meta, sub_bytes


def divide_conquer(problem: Problem) -> Schedule:
    """Divide-and-conquer gather schedule for `problem` (TUW_Gather_divide_conquer).

    Parameters
    ----------
    problem : Problem
        A gather or gatherv problem.

    Returns
    -------
    Schedule
        Each rank receives its children's ranges, latest round first (tag = round), then
        sends its own range ``[lo, hi)`` to its parent; every edge carries a message, even
        of 0 bytes.

    Raises
    ------
    ValueError
        If `problem` is not a gather or gatherv problem.

    Examples
    --------
    The example of ``kernels_c/gather/gather_divide_conquer.c``: ``p = 6``, root 2, one
    int each.

    >>> from tuwviz.problems import make_problem
    >>> s = divide_conquer(make_problem("gather", p=6, distribution="same", b=1, root=2))
    >>> s.messages(2), s.messages(3)
    ([('recv', 1, 8), ('recv', 3, 12)], [('recv', 4, 4), ('recv', 5, 4), ('send', 2, 12)])
    >>> from tuwviz.model import simulate
    >>> simulate(s, alpha=1, beta=0).time      # rounds: ceil(log2 6)
    3.0
    """
    nbytes = _check(problem, "divide_conquer")
    p, root = problem.p, problem.root
    tree = _dc_trees(p, root)
    meta, sub_bytes = _dc_meta(root, tree, nbytes)
    programs: list[list[Op]] = [[] for _ in range(p)]
    for i, t in enumerate(tree):
        prog = programs[i]
        for e in reversed(t.children):
            prog.append(Recv(e.rank, sub_bytes[e.rank], e.round, blocks=range(e.lo, e.hi)))
        if t.parent >= 0:
            prog.append(Send(t.parent, sub_bytes[i], t.round, blocks=range(t.lo, t.hi)))
    return Schedule(problem.collective, "divide_conquer", p, programs, problem, meta)


def tuw_meta(tree: oh.Tree) -> TreeMeta:
    """``meta`` of a tuw schedule (gather or scatter) from its constructed tree."""
    return TreeMeta(root=tree.root, parent=tree.parent, edge_bytes=tree.edge_bytes,
                    edge_sent=[b > 0 for b in tree.edge_bytes],
                    edge_iteration=tree.edge_iteration, fixed_exchanges=tree.exchanges,
                    subtree_ranges=[[r] for r in tree.subtree])


def tuw(problem: Problem) -> Schedule:
    """Träff's ordered-hypercube gather schedule (TUW_Gatherv) for `problem`.

    Parameters
    ----------
    problem : Problem
        A gather or gatherv problem.

    Returns
    -------
    Schedule
        The construction messages of :func:`~tuwviz.model.ordered_hypercube.construction_programs`,
        then the data phase: each rank receives its non-empty child subtrees in iteration
        order and sends its non-empty subtree (``blocks = range(lo, hi)``) to its parent.

    Raises
    ------
    ValueError
        If `problem` is not a gather or gatherv problem.
    """
    nbytes = _check(problem, "tuw")
    tree = oh.build_tree(nbytes, problem.root)
    programs = oh.construction_programs(tree)
    for i in range(problem.p):
        prog = programs[i]
        for e in tree.children[i]:
            if e.nbytes > 0:
                prog.append(Recv(e.child, e.nbytes, e.iteration, blocks=range(e.lo, e.hi)))
        if tree.parent[i] >= 0 and tree.edge_bytes[i] > 0:
            prog.append(Send(tree.parent[i], tree.edge_bytes[i], tree.edge_iteration[i],
                             blocks=range(*tree.subtree[i])))
    return Schedule(problem.collective, "tuw", problem.p, programs, problem, tuw_meta(tree))
