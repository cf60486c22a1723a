"""Model schedules of the reductions: circulant-graph Allreduce, Reduce and Reduce_scatter_block.

Paper: Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most)
other collectives for MPI", Sections III-B to III-D.  The builders follow the kernels in
``kernels_c/allreduce/``, ``kernels_c/reduce/`` and ``kernels_c/reduce_scatter_block/``
step for step, with the topology of :mod:`tuwviz.model.topology.circulant`: every message
the kernel sends, with its tag (the round), and every local reduction and copy as a
:class:`~tuwviz.model.program.Compute` of as many elements (label ``"reduce"`` or
``"copy"``), so ``gamma`` is the paper's cost per element reduced or copied.  Sizes of
messages are in bytes; the datatype's size matters for ``beta``, not for ``gamma``.

allreduce/circulant (Listing 2): q = ceil(log2 p) rounds; a copy of the input, then per
round one ``SendRecv`` of m elements to ``r - jump_k`` / from ``r + jump_k`` and two
reductions (one in round 0).  Time ``q (alpha + beta m + 2 gamma m)``, Table I.  For a
(datatype, operator) whose result depends on the order of the operands (a sum of
doubles, a user-defined operator: :func:`~tuwviz.problems.order_free`) the kernel runs the
butterfly instead, so that every rank gets the same bits, and so does the model.

reduce/circulant (Listings 3-4): the tree of :func:`~tuwviz.model.topology.circ_tree_create`;
a rank receives each child's partial sum and reduces it (the first into the accumulator,
adding its own input), then sends once.  Time ``q (alpha + beta m + gamma m)``, Table I.

reduce_scatter_block/circulant (Listings 5-6): round 0 packs ``2^(q-1)`` blocks, exchanges
them, reduces the own block and builds the segments of rounds 1..q-1 (copy of own input
and reduction where ``e_k = 0``, a copy where ``e_k = 1``); rounds ``k >= 1`` exchange
``2^(q-1-k)`` blocks and reduce as many.  ``(2^q - 1)`` blocks sent in all (Proposition 2).

Examples
--------
>>> from tuwviz.problems import make_problem
>>> s = allreduce_circulant(make_problem("allreduce", p=11, b=4, datatype="byte", op="bor"))
>>> [op for op in s.programs[0] if type(op).__name__ == "SendRecv"][3]
SendRecv(send_peer=6, send_nbytes=4, recv_peer=5, recv_nbytes=4, tag=3, send_blocks=None, \
recv_blocks=None, kind='data')
>>> reduce_circulant(make_problem("reduce", p=9, b=1, root=0)).meta.parent
[-1, 0, 0, 2, 0, 4, 4, 6, 7]
"""
from __future__ import annotations

from itertools import accumulate

from ..problems import Problem, order_free
from .meta import CirculantMeta, TreeMeta
from .program import Compute, Op, Recv, Schedule, Send, SendRecv
from .topology.binomial import binomial_tree_create
from .topology.circulant import (
    circ_epsilon,
    circ_relative_blocks,
    circ_from,
    circ_jump,
    circ_skips,
    circ_to,
    circ_tree_create,
)
from ..problems import make_problem
from .simulate import simulate

__all__ = [
    "allreduce_butterfly",
    "allreduce_circulant",
    "reduce_binomial",
    "reduce_circulant",
    "reduce_scatter_block_circulant",
    "reduce_scatter_block_recursive_halving",
    "reduce_scatter_circulant",
    "reduce_scatter_recursive_halving",
    "table_i",
    "table_ii",
]


def _check(problem: Problem, collective: str) -> None:
    if problem.collective != collective:
        raise ValueError(f"{collective} schedule asked for a {problem.collective} problem")


def _circulant_meta(p: int) -> CirculantMeta:
    q, skips = circ_skips(p)
    return CirculantMeta(skips, [circ_jump(skips, k) for k in range(q)],
                         [circ_epsilon(skips, k) for k in range(q)])


def allreduce_circulant(problem: Problem) -> Schedule:
    """The circulant Allreduce of ``kernels_c/allreduce/allreduce_circulant.c``.

    Every rank: ``Compute(m, "copy")`` (sendbuf into recvbuf), then for each round ``k``
    one ``SendRecv`` of ``m`` elements with tag ``k`` and ``Compute(m, "reduce")`` twice
    (once in round 0).  If the problem's datatype and operator are not
    :func:`~tuwviz.problems.order_free`, the butterfly's schedule
    (:func:`allreduce_butterfly`), as the kernel does: one round more for p not a power of
    two, the price of every rank getting the same bits.

    >>> from tuwviz.problems import make_problem
    >>> def rounds(s): return sum(type(op).__name__ != "Compute" for op in s.programs[1])
    >>> rounds(allreduce_circulant(make_problem("allreduce", p=6, b=1, datatype="double",
    ...                                         op="max")))
    3
    >>> rounds(allreduce_circulant(make_problem("allreduce", p=6, b=1, datatype="double")))
    4
    """
    _check(problem, "allreduce")
    if not order_free(problem.datatype, problem.op):
        s = allreduce_butterfly(problem)
        return Schedule("allreduce", "circulant", s.p, s.programs, problem, s.meta)
    p, m = problem.p, problem.block
    nbytes = m * problem.itemsize
    q, skips = circ_skips(p)
    programs: list[list[Op]] = []
    for r in range(p):
        prog: list[Op] = [Compute(m, "copy")]
        for k in range(q):
            prog.append(SendRecv(circ_to(p, r, skips, k), nbytes,
                                 circ_from(p, r, skips, k), nbytes, tag=k))
            prog.extend([Compute(m, "reduce")] * (1 if k == 0 else 2))
        programs.append(prog)
    return Schedule("allreduce", "circulant", p, programs, problem, _circulant_meta(p))


def _subtree_ranges(p: int, children: list[list[int]], rank: int) -> list[tuple[int, int]]:
    """The ranks whose inputs `rank`'s partial sum holds, as sorted [lo, hi) ranges."""
    ranks, todo = [], [rank]
    while todo:
        i = todo.pop()
        ranks.append(i)
        todo.extend(children[i])
    ranges: list[tuple[int, int]] = []
    for i in sorted(ranks):
        if ranges and ranges[-1][1] == i:
            ranges[-1] = (ranges[-1][0], i + 1)
        else:
            ranges.append((i, i + 1))
    return ranges


def _tree_reduce(problem: Problem, algorithm: str, trees: list) -> Schedule:
    """Programs of ``tuw_tree_reduce`` (``kernels_c/common/reduction.c``) on `trees` (one
    per rank, each with ``parent``, ``round`` and ``children`` of ``rank, round``)."""
    p, m, root = problem.p, problem.block, problem.root
    nbytes = m * problem.itemsize
    programs: list[list[Op]] = []
    for t in trees:
        prog: list[Op] = []
        for e in t.children:
            prog += [Recv(e.rank, nbytes, tag=e.round), Compute(m, "reduce")]
        if t.parent >= 0:
            prog.append(Send(t.parent, nbytes, tag=t.round))
        elif not t.children:
            prog.append(Compute(m, "copy"))
        programs.append(prog)
    children = [[e.rank for e in t.children] for t in trees]
    meta = TreeMeta(
        root=root, parent=[t.parent for t in trees],
        edge_bytes=[nbytes if t.parent >= 0 else 0 for t in trees],
        edge_sent=[t.parent >= 0 for t in trees],
        edge_iteration=[t.round for t in trees], fixed_exchanges=[],
        subtree_ranges=[_subtree_ranges(p, children, i) if t.parent >= 0 else []
                        for i, t in enumerate(trees)])
    return Schedule("reduce", algorithm, p, programs, problem, meta)


def reduce_circulant(problem: Problem) -> Schedule:
    """The circulant Reduce of ``kernels_c/reduce/reduce_circulant.c``.

    A rank receives every child's partial sum in increasing round (tag = the child's
    round) and reduces it, then sends its own partial sum to its parent; a leaf sends
    without computing; for ``p = 1`` the root copies its input.  ``meta`` is the tree.
    """
    _check(problem, "reduce")
    p, root = problem.p, problem.root
    return _tree_reduce(problem, "circulant", [circ_tree_create(p, i, root) for i in range(p)])


def reduce_binomial(problem: Problem) -> Schedule:
    """The binomial-tree Reduce of ``kernels_c/reduce/reduce_binomial.c``: the programs of
    :func:`reduce_circulant` on the tree of
    :func:`~tuwviz.model.topology.binomial_tree_create`."""
    _check(problem, "reduce")
    p, root = problem.p, problem.root
    return _tree_reduce(problem, "binomial",
                        [binomial_tree_create(p, i, root) for i in range(p)])


def _power_split(p: int) -> tuple[int, int, int]:
    """``(p', log2 p', x)``: the largest power of two ``p' <= p`` and ``x = p - p'``."""
    pp, rounds = 1, 0
    while 2 * pp <= p:
        pp, rounds = 2 * pp, rounds + 1
    return pp, rounds, p - pp


def _new_rank(rank: int, x: int) -> int:
    return rank // 2 if rank < 2 * x else rank - x


def _old_rank(n: int, x: int) -> int:
    return 2 * n + 1 if n < x else n + x


def allreduce_butterfly(problem: Problem) -> Schedule:
    """The butterfly Allreduce of ``kernels_c/allreduce/allreduce_butterfly.c``.

    Pre-step (p not a power of two): even ranks below ``2x`` send their input to the
    next odd rank (tag 0), which reduces; then ``log2 p'`` rounds of ``SendRecv`` with
    ``n XOR 2^k`` (tag ``k + 1``) and a reduction; post-step: odd ranks below ``2x`` send
    the result back (tag ``log2 p' + 1``).  ``p = 1``: a copy.
    """
    _check(problem, "allreduce")
    p, m = problem.p, problem.block
    nbytes = m * problem.itemsize
    pp, rounds, x = _power_split(p)
    programs: list[list[Op]] = []
    for r in range(p):
        if p == 1:
            programs.append([Compute(m, "copy")])
            continue
        if r < 2 * x and r % 2 == 0:
            programs.append([Send(r + 1, nbytes, tag=0), Recv(r + 1, nbytes, tag=rounds + 1)])
            continue
        prog: list[Op] = []
        if r < 2 * x:
            prog += [Recv(r - 1, nbytes, tag=0), Compute(m, "reduce")]
        n = _new_rank(r, x)
        for k in range(rounds):
            peer = _old_rank(n ^ (1 << k), x)
            prog += [SendRecv(peer, nbytes, peer, nbytes, tag=k + 1), Compute(m, "reduce")]
        if r < 2 * x:
            prog.append(Send(r - 1, nbytes, tag=rounds + 1))
        programs.append(prog)
    return Schedule("allreduce", "butterfly", p, programs, problem)


def _recursive_halving(problem: Problem, counts: tuple[int, ...]) -> Schedule:
    """Programs of ``kernels_c/reduce_scatter/reduce_scatter_recursive_halving.c`` for block
    sizes `counts` (elements).  Every message names the blocks whose sums it carries (a
    range: the halves are consecutive blocks), for :mod:`tuwviz.viz.circulant`'s replay."""
    p, size = problem.p, problem.itemsize
    pp, rounds, x = _power_split(p)
    displ = [0]
    for c in counts:
        displ.append(displ[-1] + c)
    total = displ[-1]

    def first(n: int) -> int:  # first block of new rank n
        return 2 * n if n < x else n + x

    def start(n: int) -> int:  # its first element
        return displ[first(n)]

    every = range(0, p)

    programs: list[list[Op]] = []
    for r in range(p):
        if r < 2 * x and r % 2 == 0:
            programs.append([Send(r + 1, total * size, tag=0, blocks=every),
                             Recv(r + 1, counts[r] * size, tag=rounds + 1,
                                  blocks=range(r, r + 1))])
            continue
        prog: list[Op] = []
        if r < 2 * x:
            prog += [Recv(r - 1, total * size, tag=0, blocks=every), Compute(total, "reduce")]
        n, lo, hi = _new_rank(r, x), 0, pp
        for k in range(rounds):
            d = pp >> (k + 1)
            mid, peer = lo + d, _old_rank(n ^ d, x)
            keep = (lo, mid) if n < mid else (mid, hi)
            send = (mid, hi) if n < mid else (lo, mid)
            kn = start(keep[1]) - start(keep[0])
            sn = start(send[1]) - start(send[0])
            prog += [SendRecv(peer, sn * size, peer, kn * size, tag=k + 1,
                              send_blocks=range(first(send[0]), first(send[1])),
                              recv_blocks=range(first(keep[0]), first(keep[1]))),
                     Compute(kn, "reduce")]
            lo, hi = keep
        if p > 1:
            prog.append(Compute(counts[r], "copy"))
        if r < 2 * x:
            prog.append(Send(r - 1, counts[r - 1] * size, tag=rounds + 1,
                             blocks=range(r - 1, r)))
        programs.append(prog)
    return Schedule(problem.collective, "recursive_halving", p, programs, problem)


def reduce_scatter_block_recursive_halving(problem: Problem) -> Schedule:
    """The recursive-halving Reduce_scatter_block of
    ``kernels_c/reduce_scatter_block/reduce_scatter_block_recursive_halving.c``.

    Pre-step (p not a power of two): the whole input (``p c`` elements) from each even
    rank below ``2x`` to the next odd rank, reduced there; ``log2 p'`` halving rounds, each
    a ``SendRecv`` of the partner's half of the blocks and the reduction of the own half;
    the copy of the own block into recvbuf; post-step: one block back to the even rank.
    """
    _check(problem, "reduce_scatter_block")
    return _recursive_halving(problem, (problem.block,) * problem.p)


def reduce_scatter_recursive_halving(problem: Problem) -> Schedule:
    """The recursive-halving Reduce_scatter of
    ``kernels_c/reduce_scatter/reduce_scatter_recursive_halving.c``: the programs of
    :func:`reduce_scatter_block_recursive_halving` with block ``i`` of
    ``problem.counts[i]`` elements."""
    _check(problem, "reduce_scatter")
    return _recursive_halving(problem, problem.counts)


def _reduce_scatter_circulant(problem: Problem, counts: tuple[int, ...]) -> Schedule:
    """Programs of ``kernels_c/reduce_scatter/reduce_scatter_circulant.c`` for block sizes
    `counts` (elements; equal for the block variant)."""
    p, size = problem.p, problem.itemsize
    q, skips = circ_skips(p)
    programs: list[list[Op]] = []
    offsets = [0] * max(2**q - 1, 1)
    circ_relative_blocks(0, 0, q, skips, 0, offsets)
    equal = len(set(counts)) <= 1  # the block case: no per-rank order needed (p = 8192)
    for r in range(p):
        mine = counts[r]
        if q == 0:
            programs.append([Compute(mine, "copy")])
            continue
        b = 2 ** (q - 1)
        if equal:  # block k of the later rounds starts at k * mine: no list of 2^(q-1)
            first, rest = b * mine, (b - 1) * mine

            def start(k: int, mine: int = mine) -> int:
                return k * mine
        else:
            order = [(r - x) % p for x in offsets]
            first = sum(counts[i] for i in order[:b])
            later = [counts[i] for i in order[b:]]  # the segments of rounds 1 .. q-1
            start = list(accumulate(later, initial=0)).__getitem__
            rest = start(len(later))
        prog: list[Op] = [Compute(first, "copy"),
                          SendRecv(circ_to(p, r, skips, 0), first * size,
                                   circ_from(p, r, skips, 0), (mine + rest) * size, tag=0),
                          Compute(mine, "reduce")]
        boff, seg = 0, b
        for i in range(1, q):
            seg //= 2
            n = start(boff + seg) - start(boff)
            prog.append(Compute(n, "copy"))
            if circ_epsilon(skips, i) == 0:
                prog.append(Compute(n, "reduce"))
            boff += seg
        prog.append(Compute(mine, "copy"))
        boff, seg = 0, b
        for i in range(1, q):
            seg //= 2
            n, after = start(boff + seg) - start(boff), rest - start(boff + seg)
            prog += [SendRecv(circ_to(p, r, skips, i), n * size,
                              circ_from(p, r, skips, i), (mine + after) * size, tag=i),
                     Compute(mine, "reduce")]
            if after > 0:
                prog.append(Compute(after, "reduce"))
            boff += seg
        programs.append(prog)
    return Schedule(problem.collective, "circulant", p, programs, problem, _circulant_meta(p))


def reduce_scatter_block_circulant(problem: Problem) -> Schedule:
    """The circulant Reduce_scatter_block of
    ``kernels_c/reduce_scatter_block/reduce_scatter_block_circulant.c``: the irregular
    algorithm (:func:`reduce_scatter_circulant`) with ``p`` blocks of ``c = problem.block``
    elements.

    Round 0: ``Compute(2^(q-1) c, "copy")`` (the permute-pack), the exchange,
    ``Compute(c, "reduce")`` (own block), then per later round ``i``, ``2^(q-1-i)``
    blocks: copy of the own input and a reduction if ``e_i = 0``, else a copy;
    ``Compute(c, "copy")`` of the result block.  Rounds ``i >= 1``: the exchange of
    ``2^(q-1-i)`` blocks, ``Compute(c, "reduce")`` and the rest reduced.
    """
    _check(problem, "reduce_scatter_block")
    return _reduce_scatter_circulant(problem, (problem.block,) * problem.p)


def reduce_scatter_circulant(problem: Problem) -> Schedule:
    """The circulant Reduce_scatter of ``kernels_c/reduce_scatter/reduce_scatter_circulant.c``:
    the programs of :func:`reduce_scatter_block_circulant` with block ``i`` of
    ``problem.counts[i]`` elements, so a message's size is the sum of its blocks'."""
    _check(problem, "reduce_scatter")
    return _reduce_scatter_circulant(problem, problem.counts)


def table_ii(ps):
    """Table II of the uniform reduce-scatter paper for each p of `ps`, with each round's
    correction ``e_k`` and ``jump_k`` (Listing 1, Section III-B).

    Examples
    --------
    >>> table_ii([33]).loc[33, "skips"]
    [1, 2, 3, 5, 9, 17, 33]
    """
    import pandas as pd

    out = {}
    for p in ps:
        q, skips = circ_skips(p)
        out[p] = {"q": q, "skips": skips, "e_k": [circ_epsilon(skips, k) for k in range(q)],
                  "jumps": [circ_jump(skips, k) for k in range(q)]}
    return pd.DataFrame(out).T


def table_i(ps, m: int, alpha: float, beta: float, gamma: float):
    """Table I of the uniform reduce-scatter paper next to the model, for each p of `ps`.

    For every operation and algorithm here: the paper's formula and the simulated time of
    the schedule (``source`` = ``"model"``), in seconds, for ``m`` elements of one byte
    (``MPI_BYTE`` with ``MPI_BOR``, as the paper measures; the reduce-scatters use blocks
    of ``m // p``, so ``m`` is rounded down to a multiple of ``p``).  ``difference`` is
    model minus formula: zero for the Allreduce and Reduce rows; for the circulant
    reduce-scatter the copies Table I leaves out (the round-0 pack, the own input and the
    result block); for recursive halving the table's doubled volume.

    Examples
    --------
    >>> t = table_i([11], 100, 1e-6, 1e-9, 1e-9)
    >>> t[t.algorithm == "circulant"][["operation", "model_s", "formula_s"]].round(9).values.tolist()[:2]
    [['allreduce', 5.2e-06, 5.2e-06], ['reduce', 4.8e-06, 4.8e-06]]
    """
    import math

    import pandas as pd

    rows = []
    for p in ps:
        q = math.ceil(math.log2(p)) if p > 1 else 0
        pow2 = p & (p - 1) == 0
        c = m // p
        a, b, g = alpha, beta, gamma
        formulas = {
            ("allreduce", "circulant"): q * (a + b * m + 2 * g * m),
            ("allreduce", "butterfly"): q * (a + b * m + g * m) + (0 if pow2 else a + b * m),
            ("reduce", "circulant"): q * (a + b * m + g * m),
            ("reduce", "binomial"): q * (a + b * m + g * m),
            ("reduce_scatter_block", "circulant"): q * a + (b + g) * (2**q - 1) * c,
            ("reduce_scatter_block", "recursive_halving"):
                (0 if pow2 else a + b * c * p / 2 + g * c * p / 2 + a + b * c)
                + q * a + (b + g) * (2**q - 1) * 2 * c,
        }
        for (coll, alg), formula in formulas.items():
            size = c if coll == "reduce_scatter_block" else m
            pr = make_problem(coll, p, "same", size, datatype="byte", op="bor")
            t = simulate(_BUILDERS[coll, alg](pr), alpha, beta, gamma).time
            rows.append({"operation": coll, "algorithm": alg, "p": p, "m": size * (
                p if coll == "reduce_scatter_block" else 1), "model_s": t, "formula_s": formula,
                "difference_s": t - formula, "source": "model"})
    return pd.DataFrame(rows)


_BUILDERS = {
    ("allreduce", "circulant"): allreduce_circulant,
    ("allreduce", "butterfly"): allreduce_butterfly,
    ("reduce", "circulant"): reduce_circulant,
    ("reduce", "binomial"): reduce_binomial,
    ("reduce_scatter_block", "circulant"): reduce_scatter_block_circulant,
    ("reduce_scatter_block", "recursive_halving"): reduce_scatter_block_recursive_halving,
}
