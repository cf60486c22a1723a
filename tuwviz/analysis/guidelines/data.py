"""The vocabulary guidelines are written in, and the guidelines declared with it.

A :class:`Guideline` is data: a left and a right side, each a sum of measured
:class:`Operation` s (a collective, an algorithm, and how the problem's block sizes map to
that operation's size, see :data:`SIZES`), and a condition on the problems where it
applies (:data:`CONDITIONS`).  :data:`GUIDELINES` holds every declared one;
:func:`algorithm_title` and :func:`problem_title` name algorithms and problems the way the
papers' tables do.  Nothing here reads results: this module is the bottom of
:mod:`tuwviz.analysis.guidelines`.

Examples
--------
>>> g = GUIDELINES["gatherv-2"]
>>> g.statement
"MPI_Gatherv(m) ≤ MPI_Allreduce(1) + MPI_Gather(m')"
>>> g.subject, g.subject_side
(Operation(collective='gatherv', size='counts', algorithm=None, label=None), 'lhs')
>>> Operation("gather", "padded").describe(), SIZES["padded"].block(4, 5)
("MPI_Gather(m')", 5)
>>> CONDITIONS["regular"].test(4, 20, 20), CONDITIONS["regular"].test(4, 17, 20)
(True, False)

The circulant paper's guidelines compare implementations of one family: the operations
other than the one under test are measured with the same algorithm name (:data:`SAME`),
so the library's ``native`` Allreduce is held to the library's Reduce_scatter and
Allgatherv, and the ``circulant`` one to the circulant ones:

>>> g = GUIDELINES["circulant-4"]
>>> print(g.statement)
MPI_Allreduce(m) ≤ MPI_Reduce_scatter(m) + MPI_Allgatherv(m)
>>> [op.algorithm for op in g.rhs], g.where
(['=', '='], 'divisible')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...collectives import collective as collective_info

__all__ = [
    "ALGORITHM_PREFIXES",
    "CONDITIONS",
    "SAME",
    "GUIDELINES",
    "PAPERS",
    "SIZES",
    "STATS",
    "Condition",
    "Guideline",
    "Operation",
    "Size",
    "algorithm_title",
    "problem_title",
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
    distribution : str or None
        For an irregular operation: the named distribution (:data:`tuwviz.problems.
        DISTRIBUTIONS`) with ``b = block(p, max_block)`` instead of equal blocks, e.g.
        ``broadcast``: everything in process 0's block.
    """

    name: str
    symbol: str
    description: str
    block: Callable[[int, int], int] | None = None
    distribution: str | None = None


#: Problem-size mappings an :class:`Operation` can use.
SIZES: dict[str, Size] = {s.name: s for s in (
    Size("counts", "m", "the problem's block sizes m_i (padded to max m_i by a regular collective)"),
    Size("padded", "m'", "max m_i elements on every process (m' = p max m_i in total)",
         lambda p, blk: blk),
    Size("one", "1", "one element per process", lambda p, blk: 1),
    Size("total", "m'", "p max m_i elements on every process (a reduction of the whole vector)",
         lambda p, blk: p * blk),
    # the circulant paper's guidelines: m is the length of the vector reduced
    Size("vector", "m", "the vector of m = p max m_i elements (the whole vector of blocks "
         "max m_i)", lambda p, blk: p * blk),
    Size("share", "m", "the vector of m = max m_i elements cut into p blocks of m/p",
         lambda p, blk: blk // p),
    Size("root_block", "m, r", "all m = max m_i elements in the root's block, the others "
         "empty (distribution 'broadcast': root 0)", lambda p, blk: blk, "broadcast"),
)}


@dataclass(frozen=True)
class Condition:
    """Where a guideline applies: a predicate on (p, m, m', root)."""

    name: str
    description: str
    test: Callable[..., bool]


#: Conditions a :class:`Guideline` can be restricted to.
CONDITIONS: dict[str, Condition] = {c.name: c for c in (
    Condition("all", "every problem", lambda p, m, m_prime, root=0: True),
    Condition("regular", "all m_i equal (m = m')", lambda p, m, m_prime, root=0: m == m_prime),
    Condition("divisible", "p divides the vector of max m_i elements",
              lambda p, m, m_prime, root=0: (m_prime // p) % p == 0),
    Condition("root0", "root 0", lambda p, m, m_prime, root=0: root == 0),
)}

#: An :class:`Operation`'s algorithm that is the one under test's: the guideline compares
#: implementations of one family (the library's, or the circulant ones).  A guideline does
#: not apply to an algorithm whose name the other collective does not have.
SAME = "="

#: Statistics a guideline is evaluated with, by name: the bench column each one reads.
#: The gatherv paper reports average (no outlier removal) and minimum.
STATS: dict[str, str] = {"avg": "mean_us", "min": "min_us", "median": "median_us"}

#: Papers guidelines come from (file in ``../shared/papers`` and a short citation).
PAPERS: dict[str, str] = {
    "gatherv": "Träff 2017, irregular gather and scatter, Section 4 (000_924b1e2f94a4a598)",
    "circulant": "Träff et al., uniform reduce-scatter, Section IV-C (002_63d1fd77b02ec559)",
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
        collective present in the results; :data:`SAME` the algorithm of that name.
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
    # the circulant paper, Section IV-C, Guidelines (2)-(6); m is the vector's length
    Guideline("circulant-2", "(2)", PAPERS["circulant"],
              lhs=(Operation("reduce_scatter_block", "counts", None),),
              rhs=(Operation("allreduce", "vector", SAME),),
              note="Reduce_scatter_block where p divides m; its blocks are m/p"),
    Guideline("circulant-2v", "(2)", PAPERS["circulant"],
              lhs=(Operation("reduce_scatter", "counts", None),),
              rhs=(Operation("allreduce", "vector", SAME),),
              where="regular"),
    Guideline("circulant-3", "(3)", PAPERS["circulant"],
              lhs=(Operation("reduce_scatter_block", "counts", None),),
              rhs=(Operation("reduce", "vector", SAME),
                   Operation("scatter", "counts", SAME)),
              note="the regular form: MPI_Scatter for MPI_Scatterv"),
    Guideline("circulant-3v", "(3)", PAPERS["circulant"],
              lhs=(Operation("reduce_scatter", "counts", None),),
              rhs=(Operation("reduce", "vector", SAME),
                   Operation("scatterv", "counts", SAME)),
              where="regular"),
    Guideline("circulant-4", "(4)", PAPERS["circulant"],
              lhs=(Operation("allreduce", "counts", None),),
              rhs=(Operation("reduce_scatter", "share", SAME),
                   Operation("allgatherv", "share", SAME)),
              where="divisible",
              note="Figure 7's baseline; p almost equal blocks (here p divides m)"),
    Guideline("circulant-4b", "(4)", PAPERS["circulant"],
              lhs=(Operation("allreduce", "counts", None),),
              rhs=(Operation("reduce_scatter_block", "share", SAME),
                   Operation("allgather", "share", SAME)),
              where="divisible",
              note="the regular form the text allows when p divides m"),
    Guideline("circulant-5", "(5)", PAPERS["circulant"],
              lhs=(Operation("reduce", "counts", None),),
              rhs=(Operation("allreduce", "counts", SAME),)),
    Guideline("circulant-6", "(6)", PAPERS["circulant"],
              lhs=(Operation("reduce", "counts", None),),
              rhs=(Operation("reduce_scatter", "root_block", SAME),),
              where="root0",
              note="≈ read as ≤: a Reduce no slower than a Reduce_scatter whose only "
                   "non-empty block is the root's"),
)}


# -- names -------------------------------------------------------------------------------------
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
    """``two_blocks`` -> ``Two blocks`` (the paper's problem names).

    Examples
    --------
    >>> problem_title("two_blocks"), problem_title("spikes")
    ('Two blocks', 'Spikes')
    """
    return distribution.replace("_", " ").capitalize()
