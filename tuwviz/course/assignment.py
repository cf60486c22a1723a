"""Course assignments: a student's workspace, outside the package, added to tuwviz's kernels.

``tuwviz assignment new gather-scatter DIR`` (or :func:`new`) copies an assignment's
templates into a new directory: C files with the exact MPI signatures and TODO markers,
the ``algorithms.toml`` rows naming their functions, and a README.  While
``TUWVIZ_WORKSPACE`` names that directory (:func:`use`, :func:`tuwviz.course.grade.grade`), its
rows come after tuwviz's own and its C files are compiled into the same library
(:mod:`tuwviz.table`, :mod:`tuwviz.kernels`): no copy of ``kernels_c/``, no edit of the
package.

Examples
--------
>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as tmp:
...     ws = new("gather-scatter", pathlib.Path(tmp) / "me")
...     sorted(f.name for f in ws.iterdir())
['README.md', 'algorithms.toml', 'assignment.ipynb', 'my_gather.c', 'my_scatter.c']
>>> new("gather-scater", "me")
Traceback (most recent call last):
...
ValueError: unknown assignment 'gather-scater'; valid: gather-scatter
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from .. import config
from ..table import table_path, workspace_rows

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from bokeh.model import Model

    from .grade import GradeReport

__all__ = ["ASSIGNMENTS", "QUICK_VAR", "draw_messages", "new", "optimality_table", "settings",
           "speed", "use"]

#: Set to 1, an assignment notebook grades a small sweep: an instructor's trial run, or
#: the tests; students get the full one.
QUICK_VAR = config.ASSIGNMENT_QUICK

#: Assignment names and their template directories (``tuwviz/course/templates/``).
ASSIGNMENTS = {"gather-scatter": "gather_scatter"}

_TEMPLATES = Path(__file__).resolve().parent / "templates"


def _template(name: str) -> Path:
    if name not in ASSIGNMENTS:
        raise ValueError(f"unknown assignment {name!r}; valid: {', '.join(ASSIGNMENTS)}")
    return _TEMPLATES / ASSIGNMENTS[name]


def new(name: str, directory: str | Path) -> Path:
    """Create the workspace of assignment `name` in `directory` (new, or empty).

    Parameters
    ----------
    name : str
        An assignment of :data:`ASSIGNMENTS`.
    directory : str or Path
        Where; created with its parents.  An existing directory must be empty: nothing a
        student wrote is ever overwritten.

    Returns
    -------
    Path
        The workspace, absolute.

    Raises
    ------
    ValueError
        For an unknown assignment (listing the valid ones), a directory that is a file
        or not empty, or one that cannot be created or written (with the system's reason).
    """
    src = _template(name)
    dest = Path(directory).expanduser().resolve()
    if dest.exists() and not dest.is_dir():
        raise ValueError(f"{dest} is a file; give a new directory for the workspace")
    if dest.is_dir() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty; give a new directory (nothing there is "
                         f"overwritten)")
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for f in sorted(src.iterdir()):
            if f.is_file() and not f.name.startswith(("_", ".")):
                shutil.copy2(f, dest / f.name)
    except OSError as exc:
        raise ValueError(f"cannot create the workspace {dest}: {exc.strerror or exc}") from None
    return dest


def use(directory: str | Path | None) -> Path | None:
    """Make `directory` the workspace of this process and what it starts from now on.

    Sets ``TUWVIZ_WORKSPACE`` (None unsets it).  MPI runs started afterwards (``verify``,
    ``bench``, ``grade``) see the workspace's rows; an ipyparallel cluster started
    *before* does not: start it after this call.

    Raises
    ------
    ValueError
        If `directory` has no ``algorithms.toml``.
    """
    if directory is None:
        os.environ.pop(config.WORKSPACE, None)
        return None
    path = Path(directory).expanduser().resolve()
    if not table_path(path).is_file():
        raise ValueError(f"{path} is no workspace: it has no algorithms.toml (make one with "
                         f"'tuwviz assignment new gather-scatter {directory}')")
    # the environment, not a module variable: MPI ranks and engines started later inherit it
    os.environ[config.WORKSPACE] = str(path)
    return path


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
    from .grade import GRADE_BS, GRADE_PS, MEMORY_PS, OPTIMALITY_PS
    from ..analysis.performance import PERF_P, PERF_REPS, PERF_SIZES

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
    from ..analysis.optimality import schedule_from_trace
    from ..problems import make_problem
    from ..run.trace import trace
    from ..viz import animate_schedule

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
    from ..analysis.performance import performance, stem
    from ..viz import plots

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
