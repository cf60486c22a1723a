"""Model schedules for MPI_Scatterv: linear, binomial, Träff's ordered-hypercube tree, and
the circulant tree of the uniform reduce-scatter paper (Section III-F).

Each builder mirrors its C kernel in ``kernels_c/scatterv/`` message for message, and uses
the same ``blocks``/``kind`` fields and ``meta`` keys as :mod:`tuwviz.model.gatherv` (the
tree edges point from child to parent; data flows the other way).

linear: direct-from-root scatter
--------------------------------
The root sends every non-root rank ``i`` with ``m_i > 0`` its block, in increasing rank
order (tag 0); rank ``i`` receives it.  Cost ``k alpha + beta sum_{i != r} m_i`` for ``k``
non-empty non-root blocks.

binomial: fixed, block-size-oblivious binomial tree
---------------------------------------------------
Virtual ranks ``v = (i - r) mod p``.  A rank receives its subtree (virtual ranks
``v .. v + size - 1``) from its parent, then sends each child ``v + 2^k`` its subtree,
largest ``k`` first.  Only the root knows the counts, so a child whose subtree has more
than one rank first receives the sizes (in bytes) of the rest of its subtree as one
``int64`` message (``8 (size - 1)`` bytes, ``kind="counts"``, same tag), then the data.  Every edge carries a
data message, even of 0 bytes.  Tag = round ``k``.

divide_conquer: halves of consecutive ranks
-------------------------------------------
The gather's divide-and-conquer tree (:func:`tuwviz.model.gatherv.divide_conquer`) run
forwards: a rank receives its range ``[lo, hi)`` from its parent, then sends each child its
half, earliest round (largest half) first.  The root sends straight from its buffer for
any root.  Every edge carries a message, even of 0 bytes; all sizes are known (Scatter),
so none are sent ahead.  Tag = the edge's round.

tuw: Träff's linear-time ordered-hypercube tree
-----------------------------------------------
The tree construction of Lemma 2.3 with ``m_i`` = each rank's receive count, exactly as for
gatherv, then the gather's data phase reversed in time: every non-root rank receives its
non-empty subtree from its parent, then sends its non-empty child subtrees, latest
iteration first.  Tag = iteration.  Same cost bound as TUW_Gatherv.

Examples
--------
>>> from tuwviz.problems import Problem, make_problem
>>> linear(make_problem("scatterv", p=4, distribution="two_blocks", b=5, root=1)).all_messages()
[[('recv', 1, 20)], [('send', 0, 20), ('send', 3, 20)], [], [('recv', 1, 20)]]
>>> s = binomial(make_problem("scatterv", p=6, distribution="same", b=1, root=2))
>>> s.messages(2)
[('send', 0, 8), ('send', 0, 8), ('send', 4, 8), ('send', 4, 8), ('send', 3, 4)]
>>> t = tuw(Problem("scatterv", 4, 0, (1, 0, 3, 2), datatype="byte"))
>>> t.messages(2)[-2:]
[('recv', 0, 5), ('send', 3, 2)]
"""
from __future__ import annotations

from ..problems import Problem
from . import ordered_hypercube as oh
from .gatherv import COUNT_BYTES, _binomial_trees, _blocks, _dc_meta, _dc_trees, _ordered_meta, tuw_meta
from .topology.circulant import circ_subtree_size, circ_tree_create
from .meta import StarMeta
from .program import Compute, Op, Recv, Schedule, Send

__all__ = ["COUNT_BYTES", "binomial", "binomial_regular", "circulant", "circulant_regular",
           "divide_conquer", "linear", "tuw"]


_SCATTERS = ("scatter", "scatterv")


def _check(problem: Problem, algorithm: str) -> list[int]:
    """Bytes of every block, after checking that `problem` is a scatter problem."""
    if problem.collective not in _SCATTERS:
        raise ValueError(
            f"{algorithm} scatter needs a scatter or scatterv problem, got "
            f"{problem.collective!r}"
        )
    return [c * problem.itemsize for c in problem.block_counts()]


def linear(problem: Problem) -> Schedule:
    """Linear (direct-from-root) scatter schedule for `problem`.

    Parameters
    ----------
    problem : Problem
        A scatter or scatterv problem.

    Returns
    -------
    Schedule
        The root sends ``problem.nbytes(i)`` bytes to every other rank ``i`` with a
        non-empty block, in increasing rank order, tag 0; ``meta`` is the star tree.

    Raises
    ------
    ValueError
        If `problem` is not a scatter or scatterv problem.
    """
    nbytes = _check(problem, "linear")
    p, root = problem.p, problem.root
    receivers = [i for i in range(p) if i != root and nbytes[i] > 0]
    programs: list[list[Op]] = [[] for _ in range(p)]
    for i in receivers:
        programs[i].append(Recv(root, nbytes[i], 0, blocks=range(i, i + 1)))
    programs[root] = [Send(i, nbytes[i], 0, blocks=range(i, i + 1)) for i in receivers]
    return Schedule(problem.collective, "linear", p, programs, problem, StarMeta.of(nbytes, root))


def binomial(problem: Problem) -> Schedule:
    """Fixed binomial-tree scatter schedule for `problem`, counts sent ahead of the data.

    Parameters
    ----------
    problem : Problem
        A scatter or scatterv problem.

    Returns
    -------
    Schedule
        Each non-root rank receives (counts, if its subtree has more than one rank, then)
        its subtree's data from its parent, then serves its children, largest round
        first; the root starts.  Wrapping messages have ``blocks=None`` as in
        :func:`tuwviz.model.gatherv.binomial`.

    Raises
    ------
    ValueError
        If `problem` is not a scatter or scatterv problem.
    """
    return _binomial(problem, "binomial", counts_ahead=True)


def binomial_regular(problem: Problem) -> Schedule:
    """The binomial-tree scatter when every process knows every block's size.

    MPI_Scatter's blocks are all equal, so no sizes are sent ahead
    (``kernels_c/scatter/scatter_binomial.c``): the schedule of :func:`binomial` without
    its ``counts`` messages.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> binomial_regular(make_problem("scatter", p=6, distribution="same", b=1, root=2)).messages(2)
    [('send', 0, 8), ('send', 4, 8), ('send', 3, 4)]

    At a root other than 0 the kernel first reorders the blocks into virtual order (the
    course report's overhead, Figures 3 and 4): one local copy of the p - 1 other blocks,
    a :class:`~tuwviz.model.program.Compute` of as many elements before the first send.

    >>> binomial_regular(make_problem("scatter", p=6, distribution="same", b=1, root=2)).programs[2][0]
    Compute(units=5, label='reorder copy')
    """
    s = _binomial(problem, "binomial", counts_ahead=False)
    if problem.collective == "scatter" and problem.root != 0:
        s.programs[problem.root].insert(
            0, Compute((problem.p - 1) * problem.block_counts()[0], "reorder copy"))
    return s


def _binomial(problem: Problem, name: str, counts_ahead: bool) -> Schedule:
    nbytes = _check(problem, name)
    tree = _binomial_trees(problem.p, problem.root)
    return _ordered_scatter(problem, name, tree, [t.size for t in tree], nbytes, counts_ahead)


def circulant(problem: Problem) -> Schedule:
    """Circulant-tree scatter schedule (the uniform reduce-scatter paper, Section III-F):
    :func:`tuwviz.model.gatherv.circulant` backwards, counts sent ahead as in
    :func:`binomial` (``kernels_c/scatterv/scatterv_circulant.c``).

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> circulant(make_problem("scatterv", p=9, distribution="same", b=1, root=0)).messages(0)
    [('send', 4, 32), ('send', 4, 20), ('send', 2, 8), ('send', 2, 8), ('send', 1, 4)]
    """
    nbytes = _check(problem, "circulant")
    return _circulant(problem, nbytes, counts_ahead=True)


def circulant_regular(problem: Problem) -> Schedule:
    """The circulant-tree Scatter: :func:`circulant` without the counts messages, as every
    block is as large as the receiver's own (``kernels_c/scatter/scatter_circulant.c``).

    >>> from tuwviz.problems import make_problem
    >>> circulant_regular(make_problem("scatter", p=9, distribution="same", b=1, root=0)).messages(4)
    [('recv', 0, 20), ('send', 6, 12), ('send', 5, 4)]
    """
    nbytes = _check(problem, "circulant")
    return _circulant(problem, nbytes, counts_ahead=False)


def _circulant(problem: Problem, nbytes: list[int], counts_ahead: bool) -> Schedule:
    p, root = problem.p, problem.root
    tree = [circ_tree_create(p, i, root) for i in range(p)]
    sizes = [circ_subtree_size(p, i, root) for i in range(p)]
    return _ordered_scatter(problem, "circulant", tree, sizes, nbytes, counts_ahead)


def _ordered_scatter(problem: Problem, name: str, tree: list, sizes: list[int],
                     nbytes: list[int], counts_ahead: bool) -> Schedule:
    """Each non-root rank receives (counts, if its subtree has more than one rank and
    `counts_ahead`, then) its subtree's data, then serves its children, last first
    (``kernels_c/common/tree.c:tuw_tree_scatterv``)."""
    p, root = problem.p, problem.root
    meta, sub_bytes = _ordered_meta(p, root, tree, sizes, nbytes)
    ranges = meta.subtree_ranges
    programs: list[list[Op]] = [[] for _ in range(p)]
    for i, t in enumerate(tree):
        prog = programs[i]
        if t.parent >= 0:
            if counts_ahead and sizes[i] > 1:
                prog.append(Recv(t.parent, COUNT_BYTES * (sizes[i] - 1), t.round, kind="counts"))
            prog.append(Recv(t.parent, sub_bytes[i], t.round, blocks=_blocks(ranges[i])))
        for e in reversed(t.children):
            c = e.rank
            if counts_ahead and sizes[c] > 1:
                prog.append(Send(c, COUNT_BYTES * (sizes[c] - 1), e.round, kind="counts"))
            prog.append(Send(c, sub_bytes[c], e.round, blocks=_blocks(ranges[c])))
    return Schedule(problem.collective, name, p, programs, problem, meta)


def divide_conquer(problem: Problem) -> Schedule:
    """Divide-and-conquer scatter schedule for `problem` (TUW_Scatter_divide_conquer).

    Parameters
    ----------
    problem : Problem
        A scatter or scatterv problem.

    Returns
    -------
    Schedule
        Each non-root rank receives its range from its parent, then every rank sends its
        children their halves, largest first (tag = round); every edge carries a message.

    Raises
    ------
    ValueError
        If `problem` is not a scatter or scatterv problem.

    Examples
    --------
    The example of ``kernels_c/scatter/scatter_divide_conquer.c``: ``p = 6``, root 2.

    >>> from tuwviz.problems import make_problem
    >>> s = divide_conquer(make_problem("scatter", p=6, distribution="same", b=1, root=2))
    >>> s.messages(2), s.messages(3)
    ([('send', 3, 12), ('send', 1, 8)], [('recv', 2, 12), ('send', 5, 4), ('send', 4, 4)])
    """
    nbytes = _check(problem, "divide_conquer")
    p, root = problem.p, problem.root
    tree = _dc_trees(p, root)
    meta, sub_bytes = _dc_meta(root, tree, nbytes)
    programs: list[list[Op]] = [[] for _ in range(p)]
    for i, t in enumerate(tree):
        prog = programs[i]
        if t.parent >= 0:
            prog.append(Recv(t.parent, sub_bytes[i], t.round, blocks=range(t.lo, t.hi)))
        for e in t.children:
            prog.append(Send(e.rank, sub_bytes[e.rank], e.round, blocks=range(e.lo, e.hi)))
    return Schedule(problem.collective, "divide_conquer", p, programs, problem, meta)


def tuw(problem: Problem) -> Schedule:
    """Träff's ordered-hypercube scatter schedule (TUW_Scatterv) for `problem`.

    Parameters
    ----------
    problem : Problem
        A scatter or scatterv problem.

    Returns
    -------
    Schedule
        The construction messages (as for gatherv), then each non-root rank receives its
        non-empty subtree from its parent and sends its non-empty child subtrees, latest
        iteration first.

    Raises
    ------
    ValueError
        If `problem` is not a scatter or scatterv problem.
    """
    nbytes = _check(problem, "tuw")
    tree = oh.build_tree(nbytes, problem.root)
    programs = oh.construction_programs(tree)
    for i in range(problem.p):
        prog = programs[i]
        if tree.parent[i] >= 0 and tree.edge_bytes[i] > 0:
            prog.append(Recv(tree.parent[i], tree.edge_bytes[i], tree.edge_iteration[i],
                             blocks=range(*tree.subtree[i])))
        for e in reversed(tree.children[i]):
            if e.nbytes > 0:
                prog.append(Send(e.child, e.nbytes, e.iteration, blocks=range(e.lo, e.hi)))
    return Schedule(problem.collective, "tuw", problem.p, programs, problem, tuw_meta(tree))
