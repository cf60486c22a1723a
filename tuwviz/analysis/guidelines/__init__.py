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

:func:`evaluate` computes both sides from benchmark rows (:func:`tuwviz.experiments.bench.bench`, or
the CSV it writes) for average and minimum times, as the paper's tables do;
:func:`missing_operations` names the measurements a guideline needs that the rows lack and
:func:`measure_missing` measures exactly those.  :func:`gatherv_table` lays the results
out like the paper's Tables 1-5 (violations red and bold in HTML, starred and listed in
words in text; only those beyond the run's own noise, the spread median - min of the
repetitions, see :mod:`~tuwviz.analysis.guidelines.evaluate`), :func:`guideline_figure` plots measured times against a guideline's bound, and
:func:`save_page` writes both to one offline HTML page.

Each side is the *sum of separately measured statistics* (e.g. mean of Allreduce(1) plus
mean of Gather(m')).  The paper's "Guideline (2)" column was apparently timed as one
composite operation (in its Table 1 that column's average is sometimes below the
MPI_Gather column's average, which a sum cannot be).

One module per concern, each importing only those above it in this list:

:mod:`~tuwviz.analysis.guidelines.data`
    The vocabulary (sizes, conditions, statistics, operations), :data:`GUIDELINES`, and
    the names of algorithms and problems.
:mod:`~tuwviz.analysis.guidelines.load`
    :func:`load_results`: a bench CSV or DataFrame, checked.
:mod:`~tuwviz.analysis.guidelines.rows`
    Which rows measure which operation on which problem (internal).
:mod:`~tuwviz.analysis.guidelines.measure`
    :func:`missing_operations` and :func:`measure_missing`.
:mod:`~tuwviz.analysis.guidelines.evaluate`
    :func:`evaluate`.
:mod:`~tuwviz.analysis.guidelines.tables`
    :data:`LAYOUTS`, :func:`guideline_table`, :func:`gatherv_table`, text and HTML.
:mod:`~tuwviz.analysis.guidelines.figures`
    :func:`guideline_figure` and :func:`save_page`.
:mod:`~tuwviz.analysis.guidelines.consistency`
    The circulant paper's Guidelines (2)-(6) per implementation family
    (:func:`consistency_table`) and its Figures 6-7.

Every public name is importable from :mod:`tuwviz.analysis.guidelines` itself.

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
from .data import (
    ALGORITHM_PREFIXES,
    CONDITIONS,
    GUIDELINES,
    PAPERS,
    SAME,
    SIZES,
    STATS,
    Condition,
    Guideline,
    Operation,
    Size,
    algorithm_title,
    problem_title,
)
from .consistency import (
    CONSISTENCY_GUIDELINES,
    FAMILIES,
    ConsistencyTable,
    Family,
    consistency_table,
    figure6,
    figure7,
    figure7_data,
    vector_length,
)
from .evaluate import EVALUATION_COLUMNS, evaluate
from .figures import guideline_figure, save_page
from .load import NEEDED_COLUMNS, load_results
from .measure import MissingMeasurements, MissingOperation, measure_missing, missing_operations
from .tables import (
    HTML_TABLE_STYLE,
    LAYOUTS,
    Column,
    GuidelineTable,
    TableLayout,
    breakable,
    check_stats,
    gatherv_table,
    guideline_table,
    table_ps,
)

__all__ = [
    "ALGORITHM_PREFIXES",
    "CONDITIONS",
    "CONSISTENCY_GUIDELINES",
    "EVALUATION_COLUMNS",
    "FAMILIES",
    "GUIDELINES",
    "HTML_TABLE_STYLE",
    "LAYOUTS",
    "NEEDED_COLUMNS",
    "PAPERS",
    "SIZES",
    "STATS",
    "Column",
    "Condition",
    "ConsistencyTable",
    "Family",
    "Guideline",
    "GuidelineTable",
    "MissingMeasurements",
    "MissingOperation",
    "Operation",
    "Size",
    "TableLayout",
    "SAME",
    "algorithm_title",
    "breakable",
    "check_stats",
    "consistency_table",
    "evaluate",
    "figure6",
    "figure7",
    "figure7_data",
    "gatherv_table",
    "guideline_figure",
    "guideline_table",
    "load_results",
    "measure_missing",
    "missing_operations",
    "problem_title",
    "save_page",
    "table_ps",
    "vector_length",
]
