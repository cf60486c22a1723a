"""Benchmark results as the guidelines read them: a bench CSV or DataFrame, checked.

:func:`load_results` accepts the rows of :func:`tuwviz.experiments.bench.bench` or the CSV it wrote
and returns a copy with the columns the guidelines need (:data:`NEEDED_COLUMNS`) in their
proper types; anything else is refused with a one-line reason.

Examples
--------
>>> import pandas as pd
>>> load_results(pd.DataFrame({c: [0] for c in NEEDED_COLUMNS if c != "backend"}))
Traceback (most recent call last):
...
ValueError: results is not a tuwviz bench CSV: it lacks the column(s) backend
>>> load_results("no/such.csv")
Traceback (most recent call last):
...
ValueError: no/such.csv: no such file
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .data import STATS

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd

__all__ = ["NEEDED_COLUMNS", "load_results"]

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
        Rows of :func:`tuwviz.experiments.bench.bench`, or the CSV file it wrote.

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
