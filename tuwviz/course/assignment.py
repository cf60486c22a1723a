"""An assignment notebook's helpers: its sweeps, and its views of a graded workspace.

The notebook (``templates/<assignment>/assignment.ipynb``) calls :func:`use` on its own
directory (a workspace made by :func:`new`, both from :mod:`tuwviz.course.workspace`), grades
it with :func:`tuwviz.course.grade.grade` using :func:`settings`, and shows the report with
:func:`optimality_table`, :func:`draw_messages` and :func:`speed`.

Examples
--------
>>> sorted(settings())
['bs', 'memory_ps', 'opt_ps', 'performance', 'ps']
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import config
from .grade import GRADE_BS, GRADE_PS, MEMORY_PS, OPTIMALITY_PS
from ..analysis.performance import PERF_P, PERF_REPS, PERF_SIZES, performance, stem
from ..analysis.optimality import schedule_from_trace
from ..problems import make_problem
from ..run.trace import trace
from ..table import workspace_rows
from ..viz import animate_schedule, plots
from .workspace import ASSIGNMENTS, new, use

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from bokeh.model import Model

    from .grade import GradeReport

__all__ = ["ASSIGNMENTS", "QUICK_VAR", "draw_messages", "new", "optimality_table", "settings",
           "speed", "use"]

#: Set to 1, an assignment notebook grades a small sweep: an instructor's trial run, or
#: the tests; students get the full one.
QUICK_VAR = config.ASSIGNMENT_QUICK


def settings() -> dict:
    """The sweeps an assignment notebook runs: :func:`tuwviz.course.grade.grade`'s keyword
    arguments (``ps``, ``bs``, ``memory_ps``, ``opt_ps``) and, under ``"performance"``,
    :func:`tuwviz.performance.performance`'s (``p``, ``sizes``, ``reps``).  The full
    defaults, or small ones while ``TUWVIZ_ASSIGNMENT_QUICK=1``.

    Examples
    --------
    >>> import os
    >>> os.environ.pop(QUICK_VAR, None) and None
    >>> settings()["performance"]
    {'p': 8, 'sizes': (1, 10, 100, 1000, 10000, 100000, 1000000), 'reps': 30}
    """
    if config.assignment_quick():
        return {"ps": (1, 2, 3, 4, 5), "bs": (0, 100), "memory_ps": (3,), "opt_ps": (2, 3, 5),
                "performance": {"p": 3, "sizes": (1, 1000), "reps": 3}}
    return {"ps": GRADE_PS, "bs": GRADE_BS, "memory_ps": MEMORY_PS, "opt_ps": OPTIMALITY_PS,
            "performance": {"p": PERF_P, "sizes": PERF_SIZES, "reps": PERF_REPS}}


# The assignment notebook's views of a graded workspace: each takes the GradeReport, and a
# function that is not correct yet gets a sentence instead of a plot (no traceback).

def optimality_table(report: "GradeReport") -> "pd.DataFrame":
    """The optimality stage's cases as a table: one row per (function, p, root), the
    numbers and their bounds, and ``ok`` (or the names of what failed)."""
    import pandas as pd

    columns = ["collective", "algorithm", "p", "root", "rounds", "rounds_bound", "root_bytes",
               "root_bound", "max_sent", "latency", "ok"]
    rows = [{**o, "ok": "ok" if not o["failed"] else "FAILED: " + o["failed"]}
            for o in report.optimality]
    return pd.DataFrame(rows, columns=columns)


def _row(report: "GradeReport", collective: str):
    rows = [r for r in workspace_rows(report.workspace) if r.collective == collective]
    if not rows:
        raise ValueError(f"{report.workspace} has no {collective} row")
    return rows[0]


def _not_yet(report: "GradeReport", collective: str):
    """A Div saying why there is nothing to show, or None if the function is correct."""
    from bokeh.models import Div

    if report.passed("correctness", collective):
        return None
    function = _row(report, collective).function
    return Div(text=f"<p>{function} is not correct yet: nothing to show (see the grade "
                    f"table).</p>")


def draw_messages(report: "GradeReport", collective: str, p: int = 8, root: int = 2,
                  b: int = 100) -> "Model":
    """The workspace's `collective` function run once with tracing on (`p`, `root`,
    `b` elements per block) and animated round by round from the messages it sent."""
    stop = _not_yet(report, collective)
    if stop is not None:
        return stop
    row = _row(report, collective)
    problem = make_problem(collective, p, "same", b, root=root)
    (events,) = trace([problem], row.name)
    return animate_schedule(schedule_from_trace(problem, row.name, events),
                            title=f"{row.function}, p = {p}, root {root}: recorded messages")


def speed(report: "GradeReport", collective: str, **kwargs) -> "Model":
    """The workspace's `collective` function timed against the library
    (:func:`tuwviz.performance.performance`, `kwargs` e.g. ``p``, ``sizes``, ``reps``);
    the files go to the workspace's ``grade/``; returns the box plots and absolute times.
    Nothing is measured while nbgrader grades (``NBGRADER_EXECUTION`` set)."""
    from bokeh.models import Div

    if os.environ.get("NBGRADER_EXECUTION"):  # set while nbgrader autogrades or validates
        return Div(text="<p>Speed is not measured while nbgrader grades: it is not marked, "
                        "and it would add minutes to every submission.</p>")
    stop = _not_yet(report, collective)
    if stop is not None:
        return stop
    row = _row(report, collective)
    perf = performance(collective, row.name, **kwargs)
    plots.save_performance(perf, report.result_dir, stem(collective, row.name))
    return plots.performance_layout(perf.rows, perf.samples)
