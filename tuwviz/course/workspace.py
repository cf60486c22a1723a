"""A student's workspace: a directory outside the package whose kernels tuwviz adds to its own.

``tuwviz assignment new gather-scatter DIR`` (or :func:`new`) copies an assignment's
templates into a new directory: C files with the exact MPI signatures and TODO markers,
the ``algorithms.toml`` rows naming their functions, and a README.  While
``TUWVIZ_WORKSPACE`` names that directory (:func:`use`, :func:`tuwviz.course.grade.grade`), its
rows come after tuwviz's own and its C files are compiled into the same library
(:mod:`tuwviz.table`, :mod:`tuwviz.kernels`): no copy of ``kernels_c/``, no edit of the
package.  This module is light (the command line lists :data:`ASSIGNMENTS` in its help);
the assignment notebook's views of a grade are in :mod:`tuwviz.course.assignment`.

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

from .. import config
from ..table import table_path

__all__ = ["ASSIGNMENTS", "new", "use"]

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
