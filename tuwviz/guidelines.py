"""Self-consistent performance guidelines, declared as data and checked on measurements.

A performance guideline states that one way of doing something should be no slower than
another way of doing the same thing with other MPI operations (Träff, Gropp, Thakur 2010).
The gatherv paper (Träff 2017, Section 4) formulates two for irregular gather:

* Guideline (1): ``MPI_Gather(m) ≤ MPI_Gatherv(m)`` where MPI_Gather could be used, i.e.
  all ``m_i`` are equal (``m = m'``);
* Guideline (2): ``MPI_Gatherv(m) ≤ MPI_Allreduce(1) + MPI_Gather(m')``, the padding
  guideline, with ``m' = p max_i m_i``.

Here a :class:`Guideline` is data: a left and a right side, each a sum of measured
:class:`Operation` s (a collective, an algorithm, and how the problem's block sizes map to
that operation's size, see :data:`SIZES`), and a condition on the problems where it
applies (:data:`CONDITIONS`).  Exactly one operation of a guideline is *under test*
(``algorithm=None``): it stands for every algorithm of its collective in the results
(the library's ``native`` one, ``tuw``, ``linear``, ...); all others are fixed (the MPI
library's collective, ``native``, by default).  A guideline from another paper is one more
entry of :data:`GUIDELINES`, e.g. the circulant paper's ``Reduce_scatter_block(m) ≤
Reduce(m) + Scatter(m)``::

    Guideline("reduce_scatter_block-3", "(3)", PAPERS["circulant"],
              lhs=(Operation("reduce_scatter_block", "counts", None),),
              rhs=(Operation("reduce", "total", label="MPI_Reduce(m)"),
                   Operation("scatter", "counts")))

:func:`evaluate` computes both sides from benchmark rows (:func:`tuwviz.bench.bench`, or
the CSV it writes) for average and minimum times, as the paper's tables do;
:func:`missing_operations` names the measurements a guideline needs that the rows lack and
:func:`measure_missing` measures exactly those.  :func:`gatherv_table` lays the results
out like the paper's Tables 1-5 (violations red and bold in HTML, listed in words in
text), :func:`guideline_figure` plots measured times against a guideline's bound, and
:func:`save_page` writes both to one offline HTML page.

Each side is the *sum of separately measured statistics* (e.g. mean of Allreduce(1) plus
mean of Gather(m')).  The paper's "Guideline (2)" column was apparently timed as one
composite operation (in its Table 1 that column's average is sometimes below the
MPI_Gather column's average, which a sum cannot be).

Examples
--------
>>> g = GUIDELINES["gatherv-2"]
>>> print(g.name, g.statement)
Guideline (2) MPI_Gatherv(m) ≤ MPI_Allreduce(1) + MPI_Gather(m')
>>> print(GUIDELINES["gatherv-1"].statement, "where", CONDITIONS["regular"].description)
MPI_Gather(m) ≤ MPI_Gatherv(m) where all m_i equal (m = m')
>>> g.subject.collective, [op.collective for op in g.rhs]
('gatherv', ['allreduce', 'gather'])

References
----------
.. [1] J. L. Träff, "Practical, linear-time, fully distributed algorithms for irregular
   gather and scatter", EuroMPI/USA 2017, Section 4 and Tables 1-5.
.. [2] J. L. Träff, W. D. Gropp, R. Thakur, "Self-consistent MPI performance guidelines",
   IEEE TPDS 21(5), 2010.
"""
from __future__ import annotations

import html as _html
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from .collectives import collective as collective_info
from .errors import TuwvizError

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd
    from bokeh.model import Model

__all__ = [
    "CONDITIONS",
    "EVALUATION_COLUMNS",
    "GUIDELINES",
    "LAYOUTS",
    "PAPERS",
    "SIZES",
    "STATS",
    "Column",
    "Condition",
    "Guideline",
    "GuidelineTable",
    "MissingMeasurements",
    "MissingOperation",
    "Operation",
    "Size",
    "TableLayout",
    "evaluate",
    "gatherv_table",
    "guideline_figure",
    "guideline_table",
    "load_results",
    "measure_missing",
    "missing_operations",
    "save_page",
    "table_ps",
]


# -- the vocabulary guidelines are written in --------------------------------------------------
@dataclass(frozen=True)
class Size:
    """How a problem's block sizes become the size of one measured operation.

    Attributes
    ----------
    name : str
        Key in :data:`SIZES`.
    symbol : str
        How the papers write this size (``m``, ``m'``, ``1``).
    description : str
        In words, for error messages and docs.
    block : callable or None
        ``block(p, max_block)``: the elements every process contributes, or ``None`` for
        the problem's own block sizes ``m_i`` (which a regular collective pads to
        ``max m_i``, :meth:`tuwviz.problems.Problem.block_counts`).
    """

    name: str
    symbol: str
    description: str
    block: Callable[[int, int], int] | None = None


#: Problem-size mappings an :class:`Operation` can use.
SIZES: dict[str, Size] = {s.name: s for s in (
    Size("counts", "m", "the problem's block sizes m_i (padded to max m_i by a regular collective)"),
    Size("padded", "m'", "max m_i elements on every process (m' = p max m_i in total)",
         lambda p, blk: blk),
    Size("one", "1", "one element per process", lambda p, blk: 1),
    Size("total", "m'", "p max m_i elements on every process (a reduction of the whole vector)",
         lambda p, blk: p * blk),
)}


@dataclass(frozen=True)
class Condition:
    """Where a guideline applies: a predicate on (p, m, m')."""

    name: str
    description: str
    test: Callable[[int, int, int], bool]


#: Conditions a :class:`Guideline` can be restricted to.
CONDITIONS: dict[str, Condition] = {c.name: c for c in (
    Condition("all", "every problem", lambda p, m, m_prime: True),
    Condition("regular", "all m_i equal (m = m')", lambda p, m, m_prime: m == m_prime),
)}

#: Statistics a guideline is evaluated with, by name: the bench column each one reads.
#: The gatherv paper reports average (no outlier removal) and minimum.
STATS: dict[str, str] = {"avg": "mean_us", "min": "min_us", "median": "median_us"}

#: Papers guidelines come from (file in ``../shared/papers`` and a short citation).
PAPERS: dict[str, str] = {
    "gatherv": "Träff 2017, irregular gather and scatter, Section 4 (000_924b1e2f94a4a598)",
    "circulant": "Träff et al., uniform reduce-scatter, Section IV (002_63d1fd77b02ec559)",
}


@dataclass(frozen=True)
class Operation:
    """One measured operation on one side of a guideline.

    Parameters
    ----------
    collective : str
        The collective (``"gather"``).
    size : str
        Key of :data:`SIZES`: how the problem's sizes map to this operation.
    algorithm : str or None
        Registered algorithm measured (default ``"native"``, the MPI library's collective);
        ``None`` marks the operation under test, which stands for every algorithm of its
        collective present in the results.
    label : str, optional
        How to write it (default ``MPI_Name(symbol)``, e.g. ``MPI_Gather(m')``).
    """

    collective: str
    size: str = "counts"
    algorithm: str | None = "native"
    label: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "collective", collective_info(self.collective).name)
        if self.size not in SIZES:
            raise ValueError(f"size not supported: {self.size}; valid sizes: {', '.join(SIZES)}")

    def describe(self) -> str:
        """``MPI_Gather(m')`` or the explicit label."""
        if self.label:
            return self.label
        return f"{collective_info(self.collective).mpi_name}({SIZES[self.size].symbol})"


@dataclass(frozen=True)
class Guideline:
    """A performance guideline ``sum(lhs) ≤ sum(rhs)``, restricted to problems `where`.

    Parameters
    ----------
    key : str
        Unique key in :data:`GUIDELINES` (``"gatherv-2"``).
    number : str
        The paper's number, ``"(2)"``.
    paper : str
        Where it comes from (a value of :data:`PAPERS`).
    lhs, rhs : tuple of Operation
        The two sides; exactly one operation of both together has ``algorithm=None``.
    where : str
        Key of :data:`CONDITIONS`.
    note : str
        Anything a reader should know (shown in docs only).
    """

    key: str
    number: str
    paper: str
    lhs: tuple[Operation, ...]
    rhs: tuple[Operation, ...]
    where: str = "all"
    note: str = ""

    def __post_init__(self) -> None:
        if not self.lhs or not self.rhs:
            raise ValueError(f"guideline {self.key}: both sides need at least one operation")
        under_test = [op for op in (*self.lhs, *self.rhs) if op.algorithm is None]
        if len(under_test) != 1:
            raise ValueError(f"guideline {self.key}: exactly one operation must be under test "
                             f"(algorithm=None), found {len(under_test)}")
        if self.where not in CONDITIONS:
            raise ValueError(f"condition not supported: {self.where}; valid conditions: "
                             f"{', '.join(CONDITIONS)}")

    @property
    def name(self) -> str:
        """``Guideline (2)``."""
        return f"Guideline {self.number}"

    @property
    def subject(self) -> Operation:
        """The operation under test."""
        return next(op for op in (*self.lhs, *self.rhs) if op.algorithm is None)

    @property
    def subject_side(self) -> str:
        """``"lhs"`` or ``"rhs"``: where the operation under test is."""
        return "lhs" if self.subject in self.lhs else "rhs"

    @property
    def statement(self) -> str:
        """``MPI_Gatherv(m) ≤ MPI_Allreduce(1) + MPI_Gather(m')``."""
        return (" + ".join(op.describe() for op in self.lhs) + " ≤ "
                + " + ".join(op.describe() for op in self.rhs))


#: Every declared guideline, by key.
GUIDELINES: dict[str, Guideline] = {g.key: g for g in (
    Guideline("gatherv-1", "(1)", PAPERS["gatherv"],
              lhs=(Operation("gather", "counts"),),
              rhs=(Operation("gatherv", "counts", None),),
              where="regular",
              note="only where MPI_Gather can be used: all m_i equal"),
    Guideline("gatherv-2", "(2)", PAPERS["gatherv"],
              lhs=(Operation("gatherv", "counts", None),),
              rhs=(Operation("allreduce", "one"), Operation("gather", "padded")),
              note="the padding guideline: agree on max m_i, then a regular gather"),
)}


# -- results -----------------------------------------------------------------------------------
#: Columns of a bench CSV the guidelines read.
NEEDED_COLUMNS = ["collective", "algorithm", "p", "root", "distribution", "b", "m", "m_prime",
                  "datatype", "reps", "warmup", "min_us", "median_us", "mean_us",
                  "mpi_library", "ranks", "oversubscribed", "heavy_yield", "backend"]

_INT_COLUMNS = ["p", "root", "b", "m", "m_prime", "reps", "warmup"]


def load_results(results: "pd.DataFrame | str | os.PathLike") -> "pd.DataFrame":
    """Benchmark rows as a checked DataFrame (a copy), from a DataFrame or a bench CSV.

    Parameters
    ----------
    results : DataFrame or path
        Rows of :func:`tuwviz.bench.bench`, or the CSV file it wrote.

    Returns
    -------
    pandas.DataFrame
        Integer columns as integers, times as floats, string columns as strings.

    Raises
    ------
    ValueError
        If the file is missing, empty or not a bench CSV (it lacks bench columns).
    """
    import pandas as pd

    where = "results"
    if not isinstance(results, pd.DataFrame):
        path = Path(results)
        where = str(path)
        if not path.is_file():
            raise ValueError(f"{path}: no such file")
        try:
            results = pd.read_csv(path, keep_default_na=False, na_values=[""])
        except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path} is not a tuwviz bench CSV ({type(exc).__name__})") from None
    missing = [c for c in NEEDED_COLUMNS if c not in results.columns]
    if missing:
        raise ValueError(f"{where} is not a tuwviz bench CSV: it lacks the column(s) "
                         f"{', '.join(missing)}")
    if len(results) == 0:
        raise ValueError(f"{where} has no rows")
    df = results.copy()
    try:
        for c in _INT_COLUMNS:
            df[c] = pd.to_numeric(df[c], errors="raise").astype("int64")
        for c in STATS.values():
            df[c] = pd.to_numeric(df[c], errors="raise").astype(float)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where} is not a tuwviz bench CSV: {exc}") from None
    for c in ("collective", "algorithm", "distribution", "datatype", "mpi_library", "backend"):
        df[c] = df[c].astype(str)
    return df.reset_index(drop=True)


@dataclass(frozen=True)
class _Problem:
    """One problem of the operation under test, as the rows describe it."""

    collective: str
    p: int
    root: int
    distribution: str
    b: int
    m: int
    m_prime: int
    datatype: str
    mpi_library: str

    @property
    def block(self) -> int:
        return self.m_prime // self.p if self.p else 0


_DIST_ORDER = ["same", "random", "spikes", "decreasing", "alternating", "two_blocks"]


def _problem_sort_key(pr: _Problem):
    order = _DIST_ORDER.index(pr.distribution) if pr.distribution in _DIST_ORDER else len(_DIST_ORDER)
    return (pr.p, pr.root, pr.datatype, pr.mpi_library, order, pr.distribution, pr.b, pr.m)


def _problems(df: "pd.DataFrame", coll: str) -> list[_Problem]:
    keys = ["p", "root", "distribution", "b", "m", "m_prime", "datatype", "mpi_library"]
    rows = df.loc[df["collective"] == coll, keys].drop_duplicates()
    probs = [_Problem(coll, **{k: (int(v) if k in _INT_COLUMNS else str(v)) for k, v in r.items()})
             for r in rows.to_dict("records")]
    return sorted(probs, key=_problem_sort_key)


@dataclass(frozen=True)
class _Need:
    """Which rows measure an operation on a problem: the problem's counts or a uniform block."""

    collective: str
    algorithm: str
    p: int
    root: int | None
    datatype: str
    mpi_library: str
    block: int | None = None  # uniform elements per process, or None: the problem's counts
    distribution: str = ""
    b: int = 0
    m: int = 0
    m_prime: int = 0


def _need(op: Operation, pr: _Problem, algorithm: str) -> _Need:
    info = collective_info(op.collective)
    size = SIZES[op.size]
    base = dict(collective=info.name, algorithm=op.algorithm or algorithm, p=pr.p,
                root=pr.root if info.rooted else None, datatype=pr.datatype,
                mpi_library=pr.mpi_library)
    if size.block is None:
        if info.irregular:
            return _Need(**base, distribution=pr.distribution, b=pr.b, m=pr.m, m_prime=pr.m_prime)
        block = pr.block
    else:
        block = size.block(pr.p, pr.block)
    return _Need(**base, block=block, distribution=pr.distribution, b=pr.b)


class _Index:
    """Rows grouped by (collective, algorithm, p, datatype, library) for fast lookups."""

    def __init__(self, df: "pd.DataFrame"):
        self.df = df
        keys = ["collective", "algorithm", "p", "datatype", "mpi_library"]
        self.groups = {k: g for k, g in df.groupby(keys, sort=False)}

    def row(self, need: _Need):
        """The row measuring `need` (same distribution and b preferred, then the latest)."""
        g = self.groups.get((need.collective, need.algorithm, need.p, need.datatype,
                             need.mpi_library))
        if g is None:
            return None
        if need.root is not None:
            g = g[g["root"] == need.root]
        if need.block is None:
            g = g[(g["distribution"] == need.distribution) & (g["b"] == need.b)
                  & (g["m"] == need.m) & (g["m_prime"] == need.m_prime)]
        elif collective_info(need.collective).irregular:
            total = need.p * need.block
            g = g[(g["m"] == total) & (g["m_prime"] == total)]
        else:
            g = g[g["m_prime"] == need.p * need.block]
        if g.empty:
            return None
        same = (g["distribution"] == need.distribution) & (g["b"] == need.b)
        if same.any():
            g = g[same]
        return g.iloc[-1]


# -- missing measurements ----------------------------------------------------------------------
@dataclass(frozen=True)
class MissingOperation:
    """A measurement a guideline needs that the results lack.

    ``block`` is the uniform number of elements per process, or ``None`` when the
    operation uses the problem's own block sizes (``distribution``, ``b``, ``m``, ``m'``).
    """

    collective: str
    algorithm: str
    p: int
    root: int | None
    datatype: str
    block: int | None
    distribution: str
    b: int
    m: int
    m_prime: int
    reps: int = field(default=75, compare=False)
    warmup: int = field(default=10, compare=False)
    guidelines: tuple[str, ...] = field(default=(), compare=False)

    def describe(self) -> str:
        """E.g. ``gather (native), p=4, root 2, 5 elements per process (m'=20)``."""
        where = f"p={self.p}" + (f", root {self.root}" if self.root is not None else "")
        if self.block is None:
            size = f"{self.distribution} b={self.b} (m={self.m}, m'={self.m_prime})"
        else:
            size = (f"{self.block} element{'s' if self.block != 1 else ''} per process "
                    f"(m'={self.p * self.block})")
        dt = f", {self.datatype}" if self.datatype != "int" else ""
        needed = f" for {', '.join(self.guidelines)}" if self.guidelines else ""
        return f"{self.collective} ({self.algorithm}), {where}, {size}{dt}{needed}"

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in (
            "collective", "algorithm", "p", "root", "datatype", "block", "distribution", "b",
            "m", "m_prime", "reps", "warmup")} | {"guidelines": list(self.guidelines)}


class MissingMeasurements(ValueError):
    """Results lack measurements a guideline needs; ``missing`` lists them."""

    def __init__(self, missing: list[MissingOperation]):
        self.missing = missing
        shown = "; ".join(m.describe() for m in missing[:4])
        more = f"; and {len(missing) - 4} more" if len(missing) > 4 else ""
        super().__init__(
            f"missing measurements: {shown}{more} (measure them with 'tuwviz guidelines "
            f"CSV --measure-missing' or tuwviz.guidelines.measure_missing())"
        )


def _select(guidelines: Iterable[str | Guideline] | None, df: "pd.DataFrame") -> list[Guideline]:
    present = set(df["collective"])
    if guidelines is None:
        chosen = [g for g in GUIDELINES.values() if g.subject.collective in present]
        if not chosen:
            have = ", ".join(sorted(present))
            subjects = ", ".join(sorted({g.subject.collective for g in GUIDELINES.values()}))
            raise ValueError(f"no guideline applies: the results have rows of {have}, "
                             f"guidelines are declared for {subjects}")
        return chosen
    out = []
    for g in guidelines:
        if isinstance(g, Guideline):
            out.append(g)
        elif g in GUIDELINES:
            out.append(GUIDELINES[g])
        else:
            raise ValueError(f"guideline not supported: {g}; declared: {', '.join(GUIDELINES)}")
    return out


def _subject_algorithms(df: "pd.DataFrame", coll: str, algorithms: Iterable[str] | None) -> list[str]:
    have = list(dict.fromkeys(df.loc[df["collective"] == coll, "algorithm"]))
    have.sort(key=lambda a: a != "native")
    if algorithms is None:
        return have
    algorithms = list(algorithms)
    unknown = [a for a in algorithms if a not in have]
    if unknown:
        raise ValueError(f"no {coll} rows of algorithm(s) {', '.join(unknown)} in the results; "
                         f"they have {', '.join(have) or 'none'}")
    return algorithms


def _walk(df, guidelines, algorithms, on_missing):
    """Yield (guideline, problem, algorithm, lhs rows, rhs rows) with every row found."""
    index = _Index(df)
    for g in guidelines:
        subject = g.subject
        algs = _subject_algorithms(df, subject.collective, algorithms) \
            if subject.collective in set(df["collective"]) else []
        cond = CONDITIONS[g.where]
        for pr in _problems(df, subject.collective):
            if not cond.test(pr.p, pr.m, pr.m_prime):
                continue
            for alg in algs:
                subject_row = index.row(_need(subject, pr, alg))
                if subject_row is None:
                    continue  # this algorithm was not run on this problem: nothing to check
                sides = []
                complete = True
                for side in (g.lhs, g.rhs):
                    rows = []
                    for op in side:
                        need = _need(op, pr, alg)
                        row = index.row(need)
                        if row is None:
                            complete = False
                            on_missing(need, g, subject_row)
                        rows.append(row)
                    sides.append(rows)
                if complete:
                    yield g, pr, alg, sides[0], sides[1], subject_row


def missing_operations(results, guidelines=None, algorithms=None) -> list[MissingOperation]:
    """The measurements `guidelines` need on the problems in `results` that it lacks.

    Parameters
    ----------
    results : DataFrame or path
        Bench rows (see :func:`load_results`).
    guidelines : iterable of str or Guideline, optional
        Keys of :data:`GUIDELINES` or guidelines (default: every guideline whose operation
        under test has rows in `results`).
    algorithms : iterable of str, optional
        Algorithms under test to consider (default: all in `results`).

    Returns
    -------
    list of MissingOperation
        Each measurement once, with the guidelines needing it and the repetitions and
        warm-up calls of the rows it is compared with.
    """
    df = load_results(results)
    found: dict[MissingOperation, set] = {}

    def on_missing(need: _Need, g: Guideline, subject_row) -> None:
        mo = MissingOperation(
            need.collective, need.algorithm, need.p, need.root, need.datatype, need.block,
            need.distribution if need.block is None else "same",
            need.b if need.block is None else need.block,
            need.m if need.block is None else need.p * need.block,
            need.m_prime if need.block is None else need.p * need.block,
            int(subject_row["reps"]), int(subject_row["warmup"]))
        found.setdefault(mo, set()).add(g.name)

    for _ in _walk(df, _select(guidelines, df), algorithms, on_missing):
        pass
    out = []
    for mo, names in found.items():
        out.append(MissingOperation(**{**mo.to_dict(), "guidelines": tuple(sorted(names))}))
    return out


def measure_missing(
    results,
    out: str | os.PathLike | None = None,
    guidelines=None,
    algorithms=None,
    *,
    reps: int | None = None,
    warmup: int | None = None,
    seed: int = 0,
    progress: bool = True,
    backend=None,
    backend_name: str | None = None,
) -> "pd.DataFrame":
    """Measure exactly the operations :func:`missing_operations` names, with the same rules.

    Companion operations with a uniform block (``allreduce`` with 1 element, ``gather``
    with ``max m_i``) are measured with distribution ``same`` and ``b`` = that block; one
    run of :func:`tuwviz.bench.bench` per collective, algorithm, p and root.

    Parameters
    ----------
    results : DataFrame or path
        Bench rows; if a path, new rows are appended to that CSV unless `out` says otherwise.
    out : path, optional
        CSV to append the new rows to (flushed as measured).
    guidelines, algorithms
        As for :func:`missing_operations`.
    reps, warmup : int, optional
        Repetitions and warm-up calls (default: those of the rows compared with).
    seed : int
        Seed for operations that use the problem's own (random) block sizes; it must be the
        seed the results were measured with (bench's default is 0).
    progress : bool
        Show progress bars.
    backend, backend_name
        Where to run (default: fresh ranks under mpiexec); see :func:`tuwviz.bench.bench`.

    Returns
    -------
    pandas.DataFrame
        The new rows (empty if nothing was missing).

    Raises
    ------
    TuwvizError
        If the new rows still do not supply what is missing (e.g. the results were measured
        with another MPI library than this machine's, or with another seed).
    """
    import pandas as pd

    from .bench import ROW_FIELDS, bench

    df = load_results(results)
    if out is None and not isinstance(results, pd.DataFrame):
        out = results
    missing = missing_operations(df, guidelines, algorithms)
    if not missing:
        return pd.DataFrame(columns=ROW_FIELDS)
    groups: dict[tuple, list[int]] = {}
    for mo in missing:
        key = (mo.collective, mo.algorithm, mo.p, mo.root, mo.datatype,
               reps or mo.reps, warmup or mo.warmup, mo.distribution)
        groups.setdefault(key, []).append(mo.b)
    frames = []
    for (coll, alg, p, root, datatype, r, w, dist), bs in groups.items():
        frames.append(bench(coll, [alg], ps=[p], dists=[dist], bs=sorted(set(bs)), out=out,
                            root=root, seed=seed, reps=r, warmup=w, datatype=datatype,
                            backend=backend, backend_name=backend_name, progress=progress))
    new = pd.concat(frames, ignore_index=True)
    still = missing_operations(pd.concat([df, new[df.columns.intersection(new.columns)]],
                                         ignore_index=True), guidelines, algorithms)
    if still:
        libs = ", ".join(sorted(set(new["mpi_library"].astype(str))))
        raise TuwvizError(
            f"measured {len(new)} row(s) with {libs}, but still missing: "
            f"{'; '.join(m.describe() for m in still[:3])} (were the results measured with "
            f"another MPI library or another --seed?)"
        )
    return new


# -- evaluation --------------------------------------------------------------------------------
#: Columns of :func:`evaluate`'s table.
EVALUATION_COLUMNS = [
    "guideline", "number", "statement", "algorithm", "collective", "p", "root", "distribution",
    "b", "m", "m_prime", "datatype", "stat", "lhs", "rhs", "violated", "factor", "lhs_terms",
    "rhs_terms", "mpi_library", "ranks", "oversubscribed", "heavy_yield", "reps", "warmup",
]


def _terms(ops, rows, column: str, alg: str) -> str:
    return " + ".join(f"{_op_label(op, alg)}={float(r[column]):.2f}" for op, r in zip(ops, rows))


def _op_label(op: Operation, alg: str) -> str:
    if op.algorithm is not None or op.label:
        return op.describe()
    return f"{algorithm_title(op.collective, alg)}({SIZES[op.size].symbol})"


def evaluate(
    results,
    guidelines=None,
    stats: Iterable[str] = ("avg", "min"),
    algorithms: Iterable[str] | None = None,
    slack: float = 1.0,
    missing: str = "raise",
) -> "pd.DataFrame":
    """Evaluate guidelines on benchmark rows: one row per guideline, problem, algorithm, stat.

    Each side is the sum of the chosen statistic (``avg`` = mean_us, ``min`` = min_us,
    ``median``) of the rows measuring its operations on the problem.  Problems are the
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
        Columns :data:`EVALUATION_COLUMNS`; ``factor`` is ``lhs / rhs``, ``lhs_terms`` and
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
                "violated": bool(lhs > slack * rhs), "factor": factor,
                "lhs_terms": _terms(g.lhs, lrows, col, alg),
                "rhs_terms": _terms(g.rhs, rrows, col, alg),
                "mpi_library": pr.mpi_library, "ranks": int(srow["ranks"]),
                "oversubscribed": srow["oversubscribed"], "heavy_yield": srow["heavy_yield"],
                "reps": int(srow["reps"]), "warmup": int(srow["warmup"]),
            })
    if lost and missing == "raise":
        raise MissingMeasurements(missing_operations(df, chosen, algorithms))
    return pd.DataFrame(out, columns=EVALUATION_COLUMNS)


# -- tables ------------------------------------------------------------------------------------
#: How algorithms are named in table headings; others become ``Name_Collective``.
ALGORITHM_PREFIXES = {"tuw": "TUW"}


def algorithm_title(coll: str, algorithm: str) -> str:
    """Column title of an algorithm: ``MPI_Gatherv`` (native), ``TUW_Gatherv``, ``Linear_Gatherv``.

    Examples
    --------
    >>> algorithm_title("gatherv", "native"), algorithm_title("gatherv", "tuw")
    ('MPI_Gatherv', 'TUW_Gatherv')
    >>> algorithm_title("gatherv", "binomial")
    'Binomial_Gatherv'
    """
    mpi_name = collective_info(coll).mpi_name
    if algorithm == "native":
        return mpi_name
    prefix = ALGORITHM_PREFIXES.get(algorithm, algorithm[:1].upper() + algorithm[1:])
    return f"{prefix}_{mpi_name[4:]}"


def problem_title(distribution: str) -> str:
    """``two_blocks`` -> ``Two blocks`` (the paper's problem names)."""
    return distribution.replace("_", " ").capitalize()


@dataclass(frozen=True)
class Column:
    """A column pair (one cell per statistic) of a guideline table, before the algorithms.

    Either a fixed measured `operation`, or one `side` of a `guideline` whose side does not
    contain the operation under test (e.g. the right side of Guideline (2)).
    """

    title: str
    operation: Operation | None = None
    guideline: str | None = None
    side: str = "rhs"

    def __post_init__(self) -> None:
        if (self.operation is None) == (self.guideline is None):
            raise ValueError(f"column {self.title}: give an operation or a guideline side")
        if self.guideline is not None:
            g = GUIDELINES[self.guideline]
            if self.side not in ("lhs", "rhs") or g.subject_side == self.side:
                raise ValueError(f"column {self.title}: side must be the side of "
                                 f"{g.name} without the operation under test")


@dataclass(frozen=True)
class TableLayout:
    """The layout of a paper's table: fixed columns, then one column per algorithm under test.

    A violation is marked in the column of the operation on the guideline's left side:
    the algorithm's own column when the operation under test is on the left; a fixed
    column showing the left side's operation otherwise, judged against the library's
    algorithm (``native``) under test, as the paper does.
    """

    collective: str
    columns: tuple[Column, ...]
    guidelines: tuple[str, ...]
    title: str
    paper: str
    plot: str | None = None  # the guideline to plot against its bound


#: Table layouts by the collective under test.
LAYOUTS: dict[str, TableLayout] = {
    "gatherv": TableLayout(
        "gatherv",
        (Column("MPI_Gather", Operation("gather", "padded")),
         Column("Guideline (2)", guideline="gatherv-2", side="rhs")),
        ("gatherv-1", "gatherv-2"),
        "Irregular gather and the gatherv paper's guidelines (layout of its Tables 1-5)",
        PAPERS["gatherv"],
        plot="gatherv-2",
    ),
}


@dataclass
class GuidelineTable:
    """A table in a paper's layout with its guideline violations; see :func:`guideline_table`.

    Attributes
    ----------
    layout : TableLayout
    columns : list of str
        Column-pair titles, in order.
    stats : list of str
        Statistics per column pair (``avg``, ``min``).
    rows : list of dict
        Per problem: ``problem`` (p, root, distribution, b, m, m_prime, ...), ``cells``
        ``{(title, stat): µs or None}`` and ``marks`` ``{(title, stat): [violation]}``.
    violations : list of dict
        Every marked cell: guideline, column, algorithm, problem, stat, lhs, rhs, factor and
        ``text`` (one sentence).
    evaluation : pandas.DataFrame
        :func:`evaluate`'s table behind the marks.
    caption : str
    show_p : bool
        Whether rows are labelled with p and root (more than one in the results).
    """

    layout: TableLayout
    columns: list[str]
    stats: list[str]
    rows: list[dict]
    violations: list[dict]
    evaluation: "pd.DataFrame"
    caption: str
    show_p: bool = False

    def frame(self) -> "pd.DataFrame":
        """The cells as a DataFrame: index (problem, m, m'), columns (title, stat)."""
        import pandas as pd

        index_names = (["p", "root"] if self.show_p else []) + ["problem", "m", "m'"]
        index = [tuple(([r["problem"]["p"], r["problem"]["root"]] if self.show_p else [])
                       + [problem_title(r["problem"]["distribution"]), r["problem"]["m"],
                          r["problem"]["m_prime"]]) for r in self.rows]
        cols = pd.MultiIndex.from_tuples([(c, s) for c in self.columns for s in self.stats])
        data = [[r["cells"].get(k) for k in cols] for r in self.rows]
        return pd.DataFrame(data, index=pd.MultiIndex.from_tuples(index, names=index_names),
                            columns=cols)

    # text ---------------------------------------------------------------------------------
    def to_text(self) -> str:
        """Aligned text: two header lines, ``*`` after violated cells, violations in words."""
        lead = (["p", "root"] if self.show_p else []) + ["Problem", "m", "m'"]
        body = []
        last = None
        for r in self.rows:
            pr = r["problem"]
            group = (pr["p"], pr["root"], pr["distribution"])
            name = problem_title(pr["distribution"]) if group != last else ""
            last = group
            cells = ([str(pr["p"]), str(pr["root"])] if self.show_p else []) + \
                [name, str(pr["m"]), str(pr["m_prime"])]
            for c in self.columns:
                for s in self.stats:
                    v = r["cells"].get((c, s))
                    text = "-" if v is None else f"{v:.2f}"
                    cells.append(text + ("*" if (c, s) in r["marks"] else " "))
            body.append(cells)
        n_lead = len(lead)
        widths = [max(len(lead[i]), *(len(b[i]) for b in body)) for i in range(n_lead)]
        pair_w = []
        for j, c in enumerate(self.columns):
            ws = [max(len(s) + 1, *(len(b[n_lead + j * len(self.stats) + k]) for b in body))
                  for k, s in enumerate(self.stats)]
            extra = len(c) - (sum(ws) + 2 * (len(ws) - 1))
            if extra > 0:
                ws[-1] += extra
            pair_w.append(ws)
        flat_w = widths + [w for ws in pair_w for w in ws]
        head1 = "  ".join([l.ljust(w) for l, w in zip(lead, widths)]
                          + [c.ljust(sum(ws) + 2 * (len(ws) - 1)) for c, ws in zip(self.columns, pair_w)])
        head2 = "  ".join([" " * w for w in widths]
                          + [s.rjust(w - 1) + " " for ws in pair_w for s, w in zip(self.stats, ws)])
        lines = [self.caption, "", head1.rstrip(), head2.rstrip(),
                 "  ".join("-" * w for w in flat_w)]
        for b in body:
            lines.append("  ".join([v.ljust(w) for v, w in zip(b[:n_lead], widths)]
                                   + [v.rjust(w) for v, w in zip(b[n_lead:], flat_w[n_lead:])]).rstrip())
        lines.append("")
        lines.extend(self.violation_lines())
        return "\n".join(lines)

    def violation_lines(self, marked: str = "* above") -> list[str]:
        """The violations in words, one per line (or a line saying there are none)."""
        if not self.violations:
            return ["No guideline violations."]
        gs = [GUIDELINES[k] for k in self.layout.guidelines]
        head = (f"Violations ({marked}; " + "; ".join(f"{g.name}: {g.statement}" for g in gs)
                + "):")
        return [head] + [f"  {v['text']}" for v in self.violations]

    def __str__(self) -> str:
        return self.to_text()

    # HTML ---------------------------------------------------------------------------------
    def to_html(self, list_violations: bool = True) -> str:
        """A ``<table>`` (caption, two header rows, problem names spanning their rows),
        violated cells red and bold, then (optionally) the violations in words.

        Every value cell carries ``data-column``, ``data-stat``, ``data-distribution``,
        ``data-b``, ``data-m`` and ``data-m-prime`` attributes; violated cells also have
        ``class="violation"`` and a ``title`` saying which guideline and by how much.
        """
        esc = _html.escape
        lead = (["p", "root"] if self.show_p else []) + ["Problem", "m", "m'"]
        out = ['<table class="tuwviz-guideline-table" style="border-collapse:collapse;'
               'font-variant-numeric:tabular-nums">',
               f'<caption style="caption-side:top;text-align:left;max-width:60em">'
               f'{esc(self.caption)}</caption>', "<thead>", "<tr>"]
        th = 'style="padding:2px 8px;border-bottom:1px solid #999"'
        out += [f'<th rowspan="2" {th}>{esc(c)}</th>' for c in lead]
        out += [f'<th colspan="{len(self.stats)}" {th}>{esc(c)}</th>' for c in self.columns]
        out += ["</tr>", "<tr>"]
        out += [f'<th {th}>{esc(s)}</th>' for _ in self.columns for s in self.stats]
        out += ["</tr>", "</thead>", "<tbody>"]
        spans: dict[int, int] = {}
        last, start = None, 0
        for i, r in enumerate(self.rows):
            pr = r["problem"]
            group = (pr["p"], pr["root"], pr["distribution"])
            if group != last:
                start, last = i, group
            spans[start] = spans.get(start, 0) + 1
        td = "padding:2px 8px;text-align:right"
        for i, r in enumerate(self.rows):
            pr = r["problem"]
            attrs = (f'data-distribution="{esc(pr["distribution"])}" data-b="{pr["b"]}" '
                     f'data-m="{pr["m"]}" data-m-prime="{pr["m_prime"]}" data-p="{pr["p"]}"')
            out.append(f"<tr {attrs}>")
            if self.show_p:
                out.append(f'<td style="{td}">{pr["p"]}</td><td style="{td}">{pr["root"]}</td>')
            if i in spans:
                out.append(f'<th rowspan="{spans[i]}" style="text-align:left;vertical-align:top;'
                           f'padding:2px 8px">{esc(problem_title(pr["distribution"]))}</th>')
            out.append(f'<td style="{td}">{pr["m"]}</td><td style="{td}">{pr["m_prime"]}</td>')
            for c in self.columns:
                for s in self.stats:
                    v = r["cells"].get((c, s))
                    text = "–" if v is None else f"{v:.2f}"
                    cell = f'data-column="{esc(c)}" data-stat="{s}" {attrs}'
                    marks = r["marks"].get((c, s))
                    if marks:
                        why = "; ".join(f"{m['guideline_name']}: {m['lhs']:.2f} > {m['rhs']:.2f} "
                                        f"(×{m['factor']:.3g})" for m in marks)
                        out.append(f'<td class="violation" {cell} title="{esc(why)}" '
                                   f'style="{td};color:#d00000;font-weight:bold">{text}</td>')
                    else:
                        out.append(f'<td {cell} style="{td}">{text}</td>')
            out.append("</tr>")
        out += ["</tbody>", "</table>"]
        if list_violations:
            lines = self.violation_lines("red and bold above")
            if self.violations:
                out.append(f'<p class="tuwviz-violations-head">{esc(lines[0])}</p>')
                out.append('<ul class="tuwviz-violations">')
                out += [f"<li>{esc(v['text'])}</li>" for v in self.violations]
                out.append("</ul>")
            else:
                out.append(f'<p class="tuwviz-violations-head">{esc(lines[0])}</p>')
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return self.to_html()


def _caption(layout: TableLayout, used: "pd.DataFrame", stats, ps,
             mark_rules) -> str:
    from .plots import measured_where

    ps_text = ", ".join(f"p = {p}" + (f" (root {r})" if r is not None else "") for p, r in ps)
    libs = "; ".join(sorted(set(used["mpi_library"])))
    reps = "/".join(str(v) for v in sorted(set(used["reps"])))
    warm = "/".join(str(v) for v in sorted(set(used["warmup"])))
    stat_words = {"avg": "average (avg, no outlier removal)", "min": "minimum (min)",
                  "median": "median"}
    marks = "; ".join(f"{GUIDELINES[g].name} ({GUIDELINES[g].statement}) in {where}"
                      for g, where in mark_rules)
    bound_cols = [c for c in layout.columns if c.guideline]
    bound = "".join(
        f" The {c.title} column is the sum of the separately measured "
        f"{' and '.join(op.describe() for op in getattr(GUIDELINES[c.guideline], c.side))} times."
        for c in bound_cols)
    return (f"{layout.title}: {collective_info(layout.collective).mpi_name}, {ps_text}; "
            f"{measured_where(used)}; MPI library {libs}; {reps} repetitions after {warm} "
            f"warm-up calls, {' and '.join(stat_words[s] for s in stats)} times in µs. "
            f"Numbers in red, bold font violate a performance guideline: {marks}.{bound}")


def guideline_table(
    results,
    layout: str | TableLayout = "gatherv",
    algorithms: Iterable[str] | None = None,
    stats: Iterable[str] = ("avg", "min"),
    mark: Iterable[str] = ("avg", "min"),
    slack: float = 1.0,
    p: int | None = None,
) -> GuidelineTable:
    """Lay benchmark rows out as a paper's guideline table, violations marked.

    Rows are problems (distribution, m, m'; with p and root when the table has several),
    columns the layout's fixed column pairs and one pair per algorithm under test, each pair
    one cell per statistic.  Like the paper's tables, one table is usually for one p
    (see `p` and :func:`table_ps`).

    Parameters
    ----------
    results : DataFrame or path
        Bench rows including the companion operations (see :func:`measure_missing`).
    layout : str or TableLayout
        Key of :data:`LAYOUTS` (the collective under test) or a layout.
    algorithms : iterable of str, optional
        Algorithms of the collective under test to show (default: every one in the
        results, ``native`` first).
    stats : iterable of str
        Statistics per column pair.
    mark : iterable of str
        Statistics whose violations are marked.  The paper's tables mark the minimum only
        (``mark=("min",)``); by default both are marked.
    slack : float
        See :func:`evaluate`.
    p : int, optional
        Only the problems (and companion rows) with this number of processes.

    Returns
    -------
    GuidelineTable

    Raises
    ------
    MissingMeasurements
        If a companion operation was not measured.
    ValueError
        If the results have no rows of the layout's collective, or for unknown algorithms.
    """
    df = load_results(results)
    lay = LAYOUTS[layout] if isinstance(layout, str) and layout in LAYOUTS else layout
    if not isinstance(lay, TableLayout):
        raise ValueError(f"layout not supported: {layout}; layouts: {', '.join(LAYOUTS)}")
    coll = lay.collective
    if not (df["collective"] == coll).any():
        have = ", ".join(sorted(set(df["collective"])))
        raise ValueError(f"no {coll} rows in the results (they have {have})")
    if p is not None:
        ps = table_ps(df, lay)
        if p not in ps:
            raise ValueError(f"no {coll} rows with p={p} in the results (they have p="
                             f"{', '.join(map(str, ps))})")
        df = df[df["p"] == p].reset_index(drop=True)
    stats, mark = list(stats), list(mark)
    algs = _subject_algorithms(df, coll, algorithms)
    guides = [GUIDELINES[k] for k in lay.guidelines]
    ev = evaluate(df, guides, stats=list(dict.fromkeys(stats + mark)), algorithms=algs,
                  slack=slack)
    index = _Index(df)
    titles = [c.title for c in lay.columns] + [algorithm_title(coll, a) for a in algs]

    # where each guideline's violations are marked
    rules = []  # (guideline, column title or None = algorithm's own, algorithm filter)
    mark_rules = []
    for g in guides:
        if len(g.lhs) != 1:
            continue
        op = g.lhs[0]
        if op.algorithm is None:
            rules.append((g, None, None))
            mark_rules.append((g.key, f"the {algorithm_title(coll, 'native')} column and the "
                                      f"column of any other algorithm that violates it"
                               if "native" in algs else "the column of the algorithm"))
        else:
            for c in lay.columns:
                if c.operation is not None and (c.operation.collective, c.operation.algorithm) \
                        == (op.collective, op.algorithm):
                    rules.append((g, c.title, "native"))
                    mark_rules.append((g.key, f"the {c.title} column"))
                    break

    problems = _problems(df, coll)
    show_p = len({(pr.p, pr.root, pr.datatype, pr.mpi_library) for pr in problems}) > 1
    violated = ev[ev["violated"] & ev["stat"].isin(mark)]
    vkey = {}
    for v in violated.to_dict("records"):
        vkey.setdefault((v["guideline"], v["algorithm"], v["p"], v["root"], v["distribution"],
                         v["b"], v["m"], v["m_prime"], v["datatype"], v["mpi_library"],
                         v["stat"]), v)
    rows, violations = [], []
    used_rows = []
    for pr in problems:
        cells: dict = {}
        marks: dict = {}
        for c in lay.columns:
            ops = [c.operation] if c.operation else list(getattr(GUIDELINES[c.guideline], c.side))
            found = [index.row(_need(op, pr, "native")) for op in ops]
            for s in stats:
                cells[(c.title, s)] = None if any(r is None for r in found) else \
                    sum(float(r[STATS[s]]) for r in found)
            used_rows += [r for r in found if r is not None]
        subj = Operation(coll, "counts", None)
        for a, title in zip(algs, titles[len(lay.columns):]):
            r = index.row(_need(subj, pr, a))
            for s in stats:
                cells[(title, s)] = None if r is None else float(r[STATS[s]])
            if r is not None:
                used_rows.append(r)
        for g, col, alg_filter in rules:
            for a, title in zip(algs, titles[len(lay.columns):]):
                if alg_filter is not None and a != alg_filter:
                    continue
                target = title if col is None else col
                for s in mark:
                    v = vkey.get((g.key, a, pr.p, pr.root, pr.distribution, pr.b, pr.m,
                                  pr.m_prime, pr.datatype, pr.mpi_library, s))
                    if v is None:
                        continue
                    at = f" (p={pr.p}, root {pr.root})" if show_p else ""
                    text = (f"{g.name} violated by {target} for {problem_title(pr.distribution)} "
                            f"m={pr.m}, m'={pr.m_prime}{at}: {s} {v['lhs']:.2f} µs > "
                            f"{v['rhs']:.2f} µs (×{v['factor']:.3g})")
                    entry = {"guideline": g.key, "guideline_name": g.name, "column": target,
                             "algorithm": a, "p": pr.p, "root": pr.root,
                             "distribution": pr.distribution, "b": pr.b, "m": pr.m,
                             "m_prime": pr.m_prime, "stat": s, "lhs": v["lhs"], "rhs": v["rhs"],
                             "factor": v["factor"], "text": text}
                    marks.setdefault((target, s), []).append(entry)
                    violations.append(entry)
        rows.append({"problem": {"p": pr.p, "root": pr.root, "distribution": pr.distribution,
                                 "b": pr.b, "m": pr.m, "m_prime": pr.m_prime,
                                 "datatype": pr.datatype, "mpi_library": pr.mpi_library},
                     "cells": cells, "marks": marks})
    import pandas as pd

    used = pd.DataFrame(used_rows)
    ps = list(dict.fromkeys((pr.p, pr.root if collective_info(coll).rooted else None)
                            for pr in problems))
    caption = _caption(lay, used, stats, ps, mark_rules)
    return GuidelineTable(lay, titles, stats, rows, violations, ev, caption, show_p)


def table_ps(results, layout: str | TableLayout = "gatherv") -> list[int]:
    """The numbers of processes the results have rows of the layout's collective for."""
    df = load_results(results)
    lay = LAYOUTS[layout] if isinstance(layout, str) and layout in LAYOUTS else layout
    return sorted({int(v) for v in df.loc[df["collective"] == lay.collective, "p"]})


def gatherv_table(results, algorithms: Iterable[str] | None = None, **kwargs) -> GuidelineTable:
    """The gatherv paper's Tables 1-5: MPI_Gather, Guideline (2), then one pair per algorithm.

    Rows are problem type × (m, m'); column pairs avg/min for MPI_Gather (the library's,
    on ``m'``), the Guideline (2) bound ``MPI_Allreduce(1) + MPI_Gather(m')``, MPI_Gatherv
    (algorithm ``native``) and each tuwviz algorithm (``tuw`` is TUW_Gatherv).  Guideline
    (1) violations are marked in the MPI_Gather column, Guideline (2) violations in the
    column of the Gatherv algorithm that violates it.  See :func:`guideline_table` for the
    parameters (`algorithms` default: every gatherv algorithm in the results).
    """
    return guideline_table(results, "gatherv", algorithms=algorithms, **kwargs)


# -- plots and pages ---------------------------------------------------------------------------
def guideline_figure(
    results,
    guideline: str | Guideline = "gatherv-2",
    stats: Iterable[str] = ("avg", "min"),
    algorithms: Iterable[str] | None = None,
    x: str = "m",
) -> "Model":
    """Measured times against a guideline's bound, log-log, one panel per p and distribution.

    For every algorithm under test the side containing it is drawn as measured (solid for
    ``avg``, dashed for ``min``); the other side, the bound, in black.  Violations are
    circled in red.  Each panel has a caption saying where it was measured (ranks,
    oversubscription, heavy yield, backend).

    Parameters
    ----------
    results : DataFrame or path
        Bench rows with the guideline's companion operations.
    guideline : str or Guideline
    stats : iterable of str
    algorithms : iterable of str, optional
    x : str
        ``"m"`` (total elements) or ``"m_prime"`` or ``"b"``.

    Returns
    -------
    bokeh layout
        A column of figures, one per p and distribution; each series' ``ColumnDataSource`` is named (``"MPI_Gatherv avg"``,
        ``"bound min"``, ``"violations"``) and tagged ``"series"``.
    """
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, HoverTool, Legend, Title
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    from .plots import measured_where

    df = load_results(results)
    (g,) = _select([guideline], df)
    stats = list(stats)
    ev = evaluate(df, [g], stats=stats, algorithms=algorithms)
    if ev.empty:
        raise ValueError(f"{g.name} applies to none of the problems in the results")
    if x not in ("m", "m_prime", "b"):
        raise ValueError(f"x must be m, m_prime or b, got {x!r}")
    measured_side = g.subject_side
    bound_side = "rhs" if measured_side == "lhs" else "lhs"
    coll = g.subject.collective
    algs = list(dict.fromkeys(ev["algorithm"]))
    figs = []
    panels = sorted(set(zip(ev["p"], ev["distribution"])),
                    key=lambda k: (k[0], _DIST_ORDER.index(k[1]) if k[1] in _DIST_ORDER else 99))
    for p, dist in panels:
        part = ev[(ev["p"] == p) & (ev["distribution"] == dist)]
        part = part.sort_values([x, "b"], kind="stable")
        positive = bool((part[x] > 0).all())
        fig = figure(title=f"{problem_title(dist)}, p={p}: {g.name}, {g.statement}",
                     width=820, height=400, x_axis_type="log" if positive else "linear",
                     y_axis_type="log", x_axis_label={"m": "m (elements)",
                                                      "m_prime": "m' (elements)",
                                                      "b": "b (elements)"}[x],
                     y_axis_label="time per call (µs)", tools="pan,wheel_zoom,box_zoom,reset,save")
        fig.add_layout(Legend(location="top_left", click_policy="hide",
                              label_text_font_size="8pt"), "right")
        colors = iter(Category10_10)
        renderers = []
        for alg in algs:
            color = next(colors)
            for s in stats:
                rows = part[(part["algorithm"] == alg) & (part["stat"] == s)]
                if rows.empty:
                    continue
                name = f"{algorithm_title(coll, alg)} {s}"
                src = ColumnDataSource(_source(rows, x, measured_side), name=name, tags=["series"])
                dash = "solid" if s != "min" else "dashed"
                fig.line("x", "time", source=src, color=color, line_width=2, line_dash=dash,
                         legend_label=name)
                renderers.append(fig.scatter("x", "time", source=src, color=color, size=7,
                                             marker="circle" if s != "min" else "square",
                                             legend_label=name))
        for s in stats:
            rows = part[part["stat"] == s].drop_duplicates(["p", "root", "b", "m", "m_prime"])
            if rows.empty:
                continue
            name = f"bound {s}"
            src = ColumnDataSource(_source(rows, x, bound_side), name=name, tags=["series"])
            label = f"{' + '.join(op.describe() for op in getattr(g, bound_side))} {s}"
            fig.line("x", "time", source=src, color="black", line_width=2,
                     line_dash="solid" if s != "min" else "dashed", legend_label=label)
            renderers.append(fig.scatter("x", "time", source=src, color="black", size=6,
                                         marker="triangle", legend_label=label))
        bad = part[part["violated"]]
        if not bad.empty:
            src = ColumnDataSource(_source(bad, x, measured_side), name="violations",
                                   tags=["series"])
            renderers.append(fig.scatter("x", "time", source=src, size=16, fill_alpha=0,
                                         line_color="#d00000", line_width=2,
                                         legend_label="violation"))
        fig.add_tools(HoverTool(renderers=renderers, tooltips=[
            ("", "@series"), ("stat", "@stat"), ("m", "@m"), ("m'", "@m_prime"), ("b", "@b"),
            ("time µs", "@time{0.00}"), ("lhs µs", "@lhs{0.00}"), ("rhs µs", "@rhs{0.00}"),
            ("factor lhs/rhs", "@factor{0.000}"), ("violated", "@violated"),
        ]))
        fig.add_layout(Title(text=measured_where(df[df["p"] == p]), name="measured_where", text_font_size="9pt",
                             text_font_style="italic", text_color="#444444"), "below")
        figs.append(fig)
    return column(*figs)


def _source(rows: "pd.DataFrame", x: str, side: str) -> dict:
    return {
        "x": rows[x].tolist(), "time": rows[side].tolist(), "m": rows["m"].tolist(),
        "m_prime": rows["m_prime"].tolist(), "b": rows["b"].tolist(),
        "stat": rows["stat"].tolist(), "lhs": rows["lhs"].tolist(), "rhs": rows["rhs"].tolist(),
        "factor": rows["factor"].tolist(), "violated": [bool(v) for v in rows["violated"]],
        "algorithm": rows["algorithm"].tolist(),
        "series": [f"{a} {s}" for a, s in zip(rows["algorithm"], rows["stat"])],
    }


def save_page(path: str | os.PathLike,
              table: "GuidelineTable | Iterable[GuidelineTable] | None" = None,
              figure: "Model | None" = None, title: str = "tuwviz guidelines") -> Path:
    """Write an offline HTML page: the table(s) (real HTML), then the figure (BokehJS inline).

    Parameters
    ----------
    path : path
        File to write; parent directories are created.
    table : GuidelineTable or list of them, optional
    figure : bokeh Model, optional
        E.g. :func:`guideline_figure`.
    title : str
        The page's ``<title>``.

    Returns
    -------
    pathlib.Path
    """
    esc = _html.escape
    tables = [] if table is None else [table] if isinstance(table, GuidelineTable) else list(table)
    head, body = "", ""
    if figure is not None:
        from bokeh.embed import components
        from bokeh.resources import INLINE

        script, div = components(figure)
        head = INLINE.render() + script
        body = div
    html = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{esc(title)}</title>\n{head}\n</head>\n<body style=\"font-family:sans-serif\">\n"
            f"<h1>{esc(title)}</h1>\n{chr(10).join(t.to_html() for t in tables)}\n{body}\n"
            "</body>\n</html>\n")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
