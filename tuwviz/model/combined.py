"""Model schedules of collectives composed of others: Allreduce as Reduce_scatter followed
by Allgatherv (the uniform reduce-scatter paper, Section III-G; Guideline (4)).

The builder follows ``kernels_c/common/reduction.c:tuw_allreduce_combined`` with the
circulant parts (``kernels_c/allreduce/allreduce_combined.c``): the ``m`` elements cut
into ``p`` blocks of ``floor(m/p)`` or ``ceil(m/p)`` elements (the first ``m mod p``
larger), the circulant Reduce_scatter's program for those blocks, then the circulant
Allgatherv's rounds in place (no copy of the own block).

Examples
--------
>>> from tuwviz.problems import make_problem
>>> s = allreduce_combined(make_problem("allreduce", 3, "same", 7, datatype="byte", op="bor"))
>>> split(7, 3)
[3, 2, 2]
>>> [(d, peer, n) for d, peer, n in s.messages(1)]
[('send', 0, 5), ('recv', 2, 5), ('send', 0, 3), ('recv', 2, 2), ('send', 0, 2), ('recv', 2, 2), ('send', 0, 2), ('recv', 2, 3)]
"""
from __future__ import annotations

from ..problems import Problem
from .allgather import allgatherv_rounds
from .program import Schedule
from .reduce import _check, _circulant_meta, _reduce_scatter_circulant
from ..problems import make_problem
from .reduce import allreduce_circulant
from .simulate import simulate

__all__ = ["allreduce_combined", "allreduce_crossover", "split"]


def split(m: int, p: int) -> list[int]:
    """``p`` almost equal blocks of ``m`` elements, the first ``m mod p`` one larger.

    >>> split(10, 4)
    [3, 3, 2, 2]
    """
    return [m // p + (i < m % p) for i in range(p)]


def allreduce_combined(problem: Problem) -> Schedule:
    """Circulant Reduce_scatter then circulant Allgatherv on :func:`split` blocks:
    ``2 ceil(log2 p)`` rounds."""
    _check(problem, "allreduce")
    p, counts = problem.p, tuple(split(problem.block, problem.p))
    rs = _reduce_scatter_circulant(problem, counts)
    ag = allgatherv_rounds(p, [c * problem.itemsize for c in counts])
    programs = [rs.programs[r] + ag[r] for r in range(p)]
    return Schedule("allreduce", "combined", p, programs, problem, _circulant_meta(p))


def allreduce_crossover(p: int, ms, alpha: float, beta: float, gamma: float):
    """Model times of the direct circulant Allreduce and the combined one for vectors of
    each ``m`` in `ms` bytes (``MPI_BYTE``, ``MPI_BOR``), and which is faster: the
    combined one has twice the rounds but sends under ``3m`` instead of ``q m``
    (Sections III-G, IV-B).  Model predictions (``source = "model"``).

    Examples
    --------
    >>> t = allreduce_crossover(8, [8, 80_000], 1e-6, 1e-9, 1e-9)
    >>> t["faster"].tolist()
    ['circulant', 'combined']
    """
    import pandas as pd

    rows = []
    for m in ms:
        pr = make_problem("allreduce", p, "same", m, datatype="byte", op="bor")
        direct = simulate(allreduce_circulant(pr), alpha, beta, gamma).time
        comb = simulate(allreduce_combined(pr), alpha, beta, gamma).time
        rows.append({"p": p, "m": m, "circulant_s": direct, "combined_s": comb,
                     "faster": "combined" if comb < direct else "circulant",
                     "source": "model"})
    return pd.DataFrame(rows)
