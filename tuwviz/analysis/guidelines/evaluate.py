"""Evaluating guidelines on benchmark rows: both sides summed, violations flagged.

:func:`evaluate` gives one row per guideline, problem, algorithm under test and statistic
(``avg``, ``min``, ``median``, see :data:`~tuwviz.analysis.guidelines.STATS`): the sum of the
separately measured statistics on each side, whether the left side exceeds the right
(times a `slack`), their ratio, the terms that were summed, and whether the excess is
larger than the run's own noise.

**Noise.**  A single run cannot tell a real violation from jitter by the difference alone:
4 ranks on 2 cores differ by tens of microseconds between repetitions of the same call.
The spread of an operation's repetitions is in every bench row: ``median_us - min_us``,
how far a typical repetition lies above the fastest one (robust, unlike ``max_us``, which
is one stray descheduling).  A side's spread is the sum of the spreads of the operations
it adds up (the bound of Guideline (2) jitters in its Allreduce and in its Gather); the
comparison's ``noise`` is the larger of the two sides' spreads, in µs.  A violation is
``beyond_noise`` only when ``lhs - slack * rhs > noise``: the excess is larger than the
jitter the run showed itself.  Like a checker that ignores differences below the time of
a barrier, this refuses to call a difference a violation when the run cannot resolve it;
the resolution comes from the rows themselves, so every bench CSV, old or new, has what
it needs.  On a quiet cluster node the spread is a few per cent of the time and the
paper's factor-of-5 violations stay; with one repetition the spread is 0 and every
difference counts.

Examples
--------
Made-up rows of one problem (gatherv, p = 4, every process 2 elements) and the two
companions Guideline (2) needs; real rows come from :func:`tuwviz.experiments.bench.bench`:

>>> import pandas as pd
>>> run = dict(p=4, root=0, distribution="same", datatype="int", reps=10, warmup=2,
...            mpi_library="MPICH", ranks=4, oversubscribed=False, heavy_yield="0",
...            backend="mpiexec")
>>> rows = pd.DataFrame([
...     run | dict(collective="gatherv", algorithm="native", b=2, m=8, m_prime=8, mean_us=30.0),
...     run | dict(collective="gather", algorithm="native", b=2, m=8, m_prime=8, mean_us=10.0),
...     run | dict(collective="allreduce", algorithm="native", b=1, m=4, m_prime=4, mean_us=5.0),
... ]).assign(min_us=lambda d: d["mean_us"] / 2, median_us=lambda d: d["mean_us"])
>>> ev = evaluate(rows, stats=["avg"])
>>> [(r.guideline, r.lhs, r.rhs, r.violated) for r in ev.itertuples()]
[('gatherv-1', 10.0, 30.0, False), ('gatherv-2', 30.0, 15.0, True)]

Each repetition spreads median - min = mean / 2 here: 15 µs for the Gatherv, 2.5 + 5 µs
for the bound, so Guideline (2)'s excess of 15 µs does not exceed the noise of 15 µs:

>>> r = ev.loc[1]
>>> float(r.noise), bool(r.beyond_noise)
(15.0, False)
>>> print(ev.loc[1, "rhs_terms"])
MPI_Allreduce(1)=5.00 + MPI_Gather(m')=10.00
"""
from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Iterable

from .data import SAME, SIZES, STATS, Guideline, Operation, algorithm_title
from .load import load_results
from .measure import MissingMeasurements, missing_operations
from .rows import _select, _walk

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd

__all__ = ["EVALUATION_COLUMNS", "evaluate"]

#: Columns of :func:`evaluate`'s table.
EVALUATION_COLUMNS = [
    "guideline", "number", "statement", "algorithm", "collective", "p", "root", "distribution",
    "b", "m", "m_prime", "datatype", "stat", "lhs", "rhs", "violated", "noise", "beyond_noise",
    "factor", "lhs_terms", "rhs_terms", "mpi_library", "ranks", "oversubscribed", "heavy_yield", "reps", "warmup",
]


def _terms(ops: Iterable[Operation], rows: list["pd.Series"], column: str, alg: str) -> str:
    return " + ".join(f"{_op_label(op, alg)}={float(r[column]):.2f}" for op, r in zip(ops, rows))


def _spread(rows: list["pd.Series"]) -> float:
    """A side's spread in µs: the sum of median - min of the rows it adds up."""
    return sum(max(0.0, float(r["median_us"]) - float(r["min_us"])) for r in rows)


def _op_label(op: Operation, alg: str) -> str:
    if (op.algorithm is not None and op.algorithm != SAME) or op.label:
        return op.describe()
    return f"{algorithm_title(op.collective, alg)}({SIZES[op.size].symbol})"


def evaluate(
    results: "pd.DataFrame | str | os.PathLike",
    guidelines: Iterable[str | Guideline] | None = None,
    stats: Iterable[str] = ("avg", "min"),
    algorithms: Iterable[str] | None = None,
    slack: float = 1.0,
    missing: str = "raise",
) -> "pd.DataFrame":
    """Evaluate guidelines on benchmark rows: one row per guideline, problem, algorithm, stat.

    Each side is the sum of the chosen statistic (``avg`` = mean_us, ``min`` = min_us,
    ``median``) of the rows measuring its operations on the problem; ``noise`` is the larger
    of the two sides' spreads (median - min, summed over a side's rows; see the module
    docstring), the same for every statistic.  Problems are the
    distinct (p, root, distribution, b, m, m', datatype, MPI library) of the rows of the
    operation under test; a guideline is evaluated only where its condition holds.

    Parameters
    ----------
    results : DataFrame or path
        Bench rows (see :func:`load_results`).
    guidelines : iterable of str or Guideline, optional
        Default: every guideline whose operation under test has rows in `results`.
    stats : iterable of str
        Keys of :data:`STATS`.
    algorithms : iterable of str, optional
        Algorithms under test (default: every one in the results, ``native`` first).
    slack : float
        A guideline is violated when ``lhs > slack * rhs`` (the paper: 1).
    missing : {"raise", "skip"}
        What to do when rows a side needs are missing.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`EVALUATION_COLUMNS`; ``violated`` is ``lhs > slack * rhs``,
        ``beyond_noise`` is ``lhs - slack * rhs > noise`` (µs), ``factor`` is ``lhs / rhs``,
        ``lhs_terms`` and
        ``rhs_terms`` show the summed values, e.g. ``MPI_Allreduce(1)=20.31 +
        MPI_Gather(m')=41.07``.

    Raises
    ------
    MissingMeasurements
        If rows are missing and `missing` is ``"raise"``; it names every missing one.
    ValueError
        For unknown guidelines, statistics or algorithms, or results that are not bench rows.
    """
    import pandas as pd

    df = load_results(results)
    stats = list(stats)
    for s in stats:
        if s not in STATS:
            raise ValueError(f"statistic not supported: {s}; valid statistics: {', '.join(STATS)}")
    if missing not in ("raise", "skip"):
        raise ValueError(f"missing must be 'raise' or 'skip', got {missing!r}")
    chosen = _select(guidelines, df)
    lost: list = []
    out = []
    for g, pr, alg, lrows, rrows, srow in _walk(df, chosen, algorithms,
                                                lambda need, g, row: lost.append(need)):
        noise = max(_spread(lrows), _spread(rrows))
        for s in stats:
            col = STATS[s]
            lhs = sum(float(r[col]) for r in lrows)
            rhs = sum(float(r[col]) for r in rrows)
            factor = lhs / rhs if rhs > 0 else (math.inf if lhs > 0 else 1.0)
            out.append({
                "guideline": g.key, "number": g.number, "statement": g.statement,
                "algorithm": alg, "collective": pr.collective, "p": pr.p, "root": pr.root,
                "distribution": pr.distribution, "b": pr.b, "m": pr.m, "m_prime": pr.m_prime,
                "datatype": pr.datatype, "stat": s, "lhs": lhs, "rhs": rhs,
                "violated": bool(lhs > slack * rhs), "noise": noise,
                "beyond_noise": bool(lhs - slack * rhs > noise), "factor": factor,
                "lhs_terms": _terms(g.lhs, lrows, col, alg),
                "rhs_terms": _terms(g.rhs, rrows, col, alg),
                "mpi_library": pr.mpi_library, "ranks": int(srow["ranks"]),
                "oversubscribed": srow["oversubscribed"], "heavy_yield": srow["heavy_yield"],
                "reps": int(srow["reps"]), "warmup": int(srow["warmup"]),
            })
    if lost and missing == "raise":
        raise MissingMeasurements(missing_operations(df, chosen, algorithms))
    return pd.DataFrame(out, columns=EVALUATION_COLUMNS)
