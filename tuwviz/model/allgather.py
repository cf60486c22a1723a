"""Model schedules of Allgather and Allgatherv on the circulant graph (the uniform
reduce-scatter paper), and Bruck's Allgather.

Paper: Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most)
other collectives for MPI", Section III-E, Listing 7, Proposition 3.  The builder follows
``kernels_c/allgather/allgather_circulant.c`` step for step: the copy of the own block,
one ``SendRecv`` per round (``skips[k+1] - skips[k]`` blocks to ``r - jump_k``, from
``r + jump_k``, tag ``k``), then the copy of the range that wrapped past ``p - 1``:
``last = skips[q-1]`` blocks if ``r + last > p``, else ``p - last`` blocks (none at rank
0).  Copies are :class:`~tuwviz.model.program.Compute` ops of as many elements.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> s = circulant(make_problem("allgather", 5, "same", 2, datatype="byte"))
>>> s.messages(3)
[('send', 2, 2), ('recv', 4, 2), ('send', 2, 2), ('recv', 4, 2), ('send', 1, 4), ('recv', 0, 4)]
>>> [op.units for op in s.programs[3] if type(op).__name__ == "Compute"]
[2, 6]

The irregular version (Proposition 4) sends each round's run of blocks from and into
recvbuf itself, so only the own block is copied:

>>> from tuwviz.problems import Problem
>>> v = allgatherv_circulant(Problem("allgatherv", 5, 0, (2, 0, 1, 3, 1), datatype="byte"))
>>> v.messages(3)
[('send', 2, 3), ('recv', 4, 1), ('send', 2, 1), ('recv', 4, 2), ('send', 1, 3), ('recv', 0, 1)]
"""
from __future__ import annotations

from ..problems import Problem
from .program import Compute, Op, Schedule, SendRecv
from .reduce import _check, _circulant_meta
from .topology.circulant import circ_epsilon, circ_from, circ_skips, circ_to
from ..problems import make_problem
from .simulate import simulate

__all__ = ["allgather_table", "allgatherv_circulant", "allgatherv_rounds", "bruck", "circulant"]


def circulant(problem: Problem) -> Schedule:
    """The circulant Allgather of ``kernels_c/allgather/allgather_circulant.c``."""
    _check(problem, "allgather")
    p, c = problem.p, problem.block
    bs = c * problem.itemsize
    q, skips = circ_skips(p)
    programs: list[list[Op]] = []
    for r in range(p):
        prog: list[Op] = [Compute(c, "copy")]
        for k in range(q):
            b = skips[k + 1] - skips[k]
            assert b == skips[k] - circ_epsilon(skips, k)  # Lemma 1: the jump
            prog.append(SendRecv(circ_to(p, r, skips, k), b * bs, circ_from(p, r, skips, k),
                                 b * bs, tag=k))
        if q:
            last = skips[q - 1]
            if r + last > p:
                prog.append(Compute(last * c, "copy"))
            elif r > 0:
                prog.append(Compute((p - last) * c, "copy"))
        programs.append(prog)
    return Schedule("allgather", "circulant", p, programs, problem, _circulant_meta(p))


def bruck(problem: Problem) -> Schedule:
    """Bruck's Allgather of ``kernels_c/allgather/allgather_bruck.c``: the own block into
    the scratch buffer, round ``k`` sends ``min(2^k, p - 2^k)`` blocks to ``r - 2^k`` and
    receives as many from ``r + 2^k`` (tag ``k``), then all ``p`` blocks are copied into
    recvbuf in rank order."""
    _check(problem, "allgather")
    p, c = problem.p, problem.block
    bs = c * problem.itemsize
    programs: list[list[Op]] = []
    for r in range(p):
        prog: list[Op] = [Compute(c, "copy")]
        k, d = 0, 1
        while d < p:
            n = min(d, p - d)
            prog.append(SendRecv((r - d) % p, n * bs, (r + d) % p, n * bs, tag=k))
            k, d = k + 1, 2 * d
        if p > 1:
            prog.append(Compute(p * c, "copy"))
        programs.append(prog)
    return Schedule("allgather", "bruck", p, programs, problem)


def allgatherv_circulant(problem: Problem) -> Schedule:
    """The circulant Allgatherv of ``kernels_c/allgatherv/allgatherv_circulant.c``
    (Proposition 4): ``Compute(m_r, "copy")`` for the own block, then
    :func:`allgatherv_rounds`."""
    _check(problem, "allgatherv")
    rounds = allgatherv_rounds(problem.p, [problem.nbytes(i) for i in range(problem.p)])
    programs = [[Compute(problem.counts[r], "copy"), *ops] for r, ops in enumerate(rounds)]
    return Schedule("allgatherv", "circulant", problem.p, programs, problem,
                    _circulant_meta(problem.p))


def allgatherv_rounds(p: int, nbytes: list[int]) -> list[list[Op]]:
    """The rounds of the circulant Allgatherv for blocks of `nbytes` bytes, per rank: in
    round ``k`` one ``SendRecv`` (tag ``k``) of the blocks of ranks ``r + e_k .. r + e_k +
    b - 1`` to ``r - jump_k`` and of ranks ``r + skips[k] .. r + skips[k+1] - 1`` from
    ``r + jump_k``, ``b = skips[k+1] - skips[k]`` blocks each way, all modulo ``p``.

    >>> [(op.send_peer, op.send_nbytes, op.recv_peer, op.recv_nbytes)
    ...  for op in allgatherv_rounds(3, [1, 2, 4])[0]]
    [(2, 1, 1, 2), (2, 2, 1, 4)]
    """
    q, skips = circ_skips(p)

    def run(first: int, n: int) -> int:
        return sum(nbytes[(first + j) % p] for j in range(n))

    return [[SendRecv(circ_to(p, r, skips, k), run(r + circ_epsilon(skips, k),
                                                   skips[k + 1] - skips[k]),
                      circ_from(p, r, skips, k), run(r + skips[k], skips[k + 1] - skips[k]),
                      tag=k) for k in range(q)] for r in range(p)]


def allgather_table(ps, c: int, alpha: float, beta: float, gamma: float):
    """Table I's Allgather rows next to the model, blocks of `c` bytes (``m = p c``).

    The formulas, with the copy after the rounds in whole blocks: circulant
    ``q alpha + (p-1) c beta + gamma c ceil(p/2)`` (at most ``ceil(p/2)`` blocks, the
    ``gamma m/2`` of Table I), Bruck ``q alpha + (p-1) c beta + gamma p c`` (``gamma m``).
    ``difference_s`` = model - formula is the copy of the own block first, ``gamma c``,
    which Table I leaves out for both.  Model times, labelled ``source = "model"``.

    Examples
    --------
    >>> t = allgather_table([11], 10, 1e-6, 1e-9, 1e-9)
    >>> t[["algorithm", "model_s", "difference_s"]].round(10).values.tolist()
    [['circulant', 4.17e-06, 1e-08], ['bruck', 4.22e-06, 1e-08]]
    """
    import math

    import pandas as pd

    rows = []
    for p in ps:
        q = math.ceil(math.log2(p)) if p > 1 else 0
        base = q * alpha + (p - 1) * c * beta
        formulas = {"circulant": base + gamma * c * math.ceil(p / 2) * (p > 1),
                    "bruck": base + gamma * p * c * (p > 1)}
        pr = make_problem("allgather", p, "same", c, datatype="byte")
        for alg, formula in formulas.items():
            t = simulate({"circulant": circulant, "bruck": bruck}[alg](pr), alpha, beta,
                         gamma).time
            rows.append({"algorithm": alg, "p": p, "m": p * c, "model_s": t,
                         "formula_s": formula, "difference_s": t - formula,
                         "source": "model"})
    return pd.DataFrame(rows)
