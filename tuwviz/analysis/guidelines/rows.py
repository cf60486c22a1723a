"""Which benchmark rows a guideline compares: problems, operations and the rows measuring them.

A *problem* is one distinct (p, root, distribution, b, m, m', datatype, MPI library) of the
rows of a guideline's operation under test.  For every operation of a guideline,
:func:`_need` says which row measures it on that problem (the problem's own block sizes,
or a uniform block such as ``max m_i``), :class:`_Index` finds that row, and
:func:`_walk` goes through guidelines × problems × algorithms, reporting each row it
cannot find.  Both :mod:`~tuwviz.analysis.guidelines.measure` (what is missing) and
:mod:`~tuwviz.analysis.guidelines.evaluate` (the sums) are built on this walk.

Everything here is internal to :mod:`tuwviz.analysis.guidelines`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ...collectives import collective as collective_info
from .data import CONDITIONS, GUIDELINES, SAME, SIZES, Guideline, Operation
from .load import _INT_COLUMNS
from ...problems import make_problem
from ...table import load_table

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd

__all__: list[str] = []


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
    base = dict(collective=info.name, algorithm=_resolve(op, algorithm), p=pr.p,
                root=pr.root if info.rooted else None, datatype=pr.datatype,
                mpi_library=pr.mpi_library)
    if size.distribution is not None:  # named counts, e.g. all in process 0's block
        b = size.block(pr.p, pr.block)
        counts = make_problem(info.name, pr.p, size.distribution, b).counts
        return _Need(**base, distribution=size.distribution, b=b, m=sum(counts),
                     m_prime=pr.p * max(counts))
    if size.block is None:
        if info.irregular:
            return _Need(**base, distribution=pr.distribution, b=pr.b, m=pr.m, m_prime=pr.m_prime)
        block = pr.block
    else:
        block = size.block(pr.p, pr.block)
    return _Need(**base, block=block, distribution=pr.distribution, b=pr.b)


def _resolve(op: Operation, algorithm: str) -> str:
    """The algorithm `op` is measured with when `algorithm` is under test."""
    return algorithm if op.algorithm is None or op.algorithm == SAME else op.algorithm


def _applies(g: Guideline, algorithm: str, registered: Callable[[str], set]) -> bool:
    """False if an operation of `g` would need an algorithm its collective does not have
    (e.g. the circulant family has no Scatter): the guideline says nothing about it."""
    return all(op.algorithm != SAME or algorithm in registered(op.collective)
               for op in (*g.lhs, *g.rhs))


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


def _walk(df: "pd.DataFrame", guidelines: list[Guideline], algorithms: Iterable[str] | None,
          on_missing: Callable[[_Need, Guideline, "pd.Series"], None]) -> Iterator[tuple]:
    """Yield (guideline, problem, algorithm, lhs rows, rhs rows) with every row found."""
    index = _Index(df)
    table = load_table()

    def registered(coll: str) -> set:
        return {row.name for row in table.rows(coll)} | set(
            df.loc[df["collective"] == coll, "algorithm"])

    for g in guidelines:
        subject = g.subject
        algs = _subject_algorithms(df, subject.collective, algorithms) \
            if subject.collective in set(df["collective"]) else []
        algs = [a for a in algs if _applies(g, a, registered)]
        cond = CONDITIONS[g.where]
        for pr in _problems(df, subject.collective):
            if not cond.test(pr.p, pr.m, pr.m_prime, pr.root):
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
