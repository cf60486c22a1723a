"""A student's kernel against the MPI library: relative and absolute runtimes.

The course report (``../shared/papers/004``, Section 3, Figures 1-8) compares MY_Gather
and MY_Scatter with the library's MPI_Gather and MPI_Scatter for root 0 and root 2 over
message sizes from 1 byte to 1 MB: the *relative* runtime (own / library) as box plots over
the repetitions, and the absolute runtime.  :func:`performance` measures exactly that in
one run per root (the library and the kernel side by side on the same ranks, timing loop
in C, a repetition's time is the slowest rank's), and :func:`latex_rows` prints the table
rows a course report template takes.

The relative runtime of one repetition is its time divided by the *median* time of the
library on the same problem; its spread is the spread of the kernel's repetitions.

Examples
--------
The sizes are each process's block in bytes:

>>> PERF_SIZES
(1, 10, 100, 1000, 10000, 100000, 1000000)
>>> size_label(1), size_label(10_000), size_label(1_000_000)
('1 B', '10 kB', '1 MB')
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from ..collectives import collective
from ..report import size_label
from ..run.metadata import measured_where
from ..experiments.bench import bench

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["PERF_P", "PERF_REPS", "PERF_ROOTS", "PERF_SIZES", "Performance", "latex_rows",
           "performance", "stem"]

#: Block sizes per process, in bytes: 1 B to 1 MB by decades, as in the report's figures.
PERF_SIZES = (1, 10, 100, 1000, 10_000, 100_000, 1_000_000)
#: The report's roots: 0 (no reordering needed) and 2 (a binomial tree must reorder).
PERF_ROOTS = (0, 2)
#: Default number of processes (more than the cores is allowed; the results say so).
PERF_P = 8
#: Default repetitions per size (after 10 warm-up runs).
PERF_REPS = 30


@dataclass
class Performance:
    """Measurements of one kernel and the library.

    ``rows``: one row per (root, size, algorithm) with the columns of
    :data:`tuwviz.experiments.bench.ROW_FIELDS` (``ratio_to_native`` is median / library median).
    ``samples``: one row per repetition of the kernel: ``collective, algorithm, root,
    bytes, rep, time_us, relative`` (time / library median).
    """

    rows: "pd.DataFrame"
    samples: "pd.DataFrame"

    @property
    def where(self) -> str:
        """Where it was measured: ranks, oversubscription, heavy yield, backend."""
        return measured_where(self.rows)


def performance(collective_name: str, algorithm: str, p: int = PERF_P,
                roots: Iterable[int] = PERF_ROOTS, sizes: Iterable[int] = PERF_SIZES,
                reps: int = PERF_REPS, warmup: int = 10, out: str | os.PathLike | None = None,
                backend=None, progress: bool = False,
                stall_limit: float | None = None) -> Performance:
    """Time `algorithm` and the library's collective for each root and block size.

    Parameters
    ----------
    collective_name : str
        A rooted collective (``"gather"``, ``"scatter"``, ...).
    algorithm : str
        The kernel's name in the algorithm table (a workspace's row, e.g. ``"mine"``, when
        ``TUWVIZ_WORKSPACE`` is set).
    p : int
        Number of processes.
    roots : iterable of int
        Roots, each below `p`.
    sizes : iterable of int
        Bytes per process block.
    reps, warmup : int
        Timed and untimed repetitions per measurement.
    out : path, optional
        CSV file the rows are appended to as they are measured (see
        :func:`tuwviz.experiments.bench.bench`).
    backend, progress, stall_limit
        As for :func:`tuwviz.experiments.bench.bench`.

    Raises
    ------
    ValueError
        An unrooted collective, a root outside ``0..p-1``, unknown names, bad sizes.
    """
    import pandas as pd

    info = collective(collective_name)
    if not info.rooted:
        raise ValueError(f"{info.name} has no root: the performance comparison is for rooted "
                         f"collectives (gather, scatter, ...)")
    roots = list(roots)
    for r in roots:
        if not 0 <= r < p:
            raise ValueError(f"root {r} out of range 0..{p - 1} for p={p}")
    frames = [bench(info.name, ["native", algorithm], ps=[p], bs=list(sizes), root=r,
                    datatype="byte", reps=reps, warmup=warmup, out=out, backend=backend,
                    progress=progress, stall_limit=stall_limit, samples=True)
              for r in roots]
    rows = pd.concat(frames, ignore_index=True)
    return Performance(rows, relative_samples(rows))


def stem(collective_name: str, algorithm: str) -> str:
    """The file name stem of one kernel's results in a workspace's ``grade/``."""
    return f"performance_{collective_name}_{algorithm}"


def _library_medians(rows: "pd.DataFrame") -> dict:
    """``{(root, b): median µs}`` of the library's rows."""
    return {(r.root, r.b): r.median_us for r in rows.itertuples() if r.algorithm == "native"}


def relative_samples(rows: "pd.DataFrame") -> "pd.DataFrame":
    """Each repetition of each non-library row, divided by the library's median."""
    import pandas as pd

    lib = _library_medians(rows)
    out = []
    for r in rows.itertuples():
        if r.algorithm == "native":
            continue
        base = lib[(r.root, r.b)]
        out += [{"collective": r.collective, "algorithm": r.algorithm, "root": r.root,
                 "bytes": r.b, "rep": k, "time_us": t, "relative": t / base if base else None}
                for k, t in enumerate(r.samples_us)]
    return pd.DataFrame(out, columns=["collective", "algorithm", "root", "bytes", "rep",
                                      "time_us", "relative"])


def latex_rows(perf: Performance) -> str:
    r"""Table rows for a report: ``root & size & library µs & own µs & own/library \\``.

    Medians over the repetitions, in microseconds; a comment line first says what was
    measured where.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"collective": "gather", "algorithm": ["native", "mine"],
    ...     "root": 2, "b": 1000, "median_us": [10.0, 25.0], "ratio_to_native": [1.0, 2.5],
    ...     "p": 8, "ranks": 8, "oversubscribed": True, "heavy_yield": "1",
    ...     "backend": "mpiexec", "mpi_library": "MPICH 4.2"})
    >>> print(latex_rows(Performance(rows, pd.DataFrame())), end="")
    % gather/mine against the library (MPICH 4.2), p = 8; medians in microseconds
    % measured on 8 ranks, oversubscribed, MPICH heavy yield on, backend mpiexec
    % root & block & library & mine & mine / library \\
    2 & 1 kB & 10.0 & 25.0 & 2.50 \\
    """
    rows = perf.rows
    own = rows[rows.algorithm != "native"]
    lib = _library_medians(rows)
    names = "/".join(dict.fromkeys(own.algorithm))
    library = "/".join(dict.fromkeys(str(v) for v in rows["mpi_library"]))
    lines = [f"% {'/'.join(dict.fromkeys(own.collective))}/{names} against the library "
             f"({library}), p = {'/'.join(str(v) for v in dict.fromkeys(rows.p))}; medians in "
             f"microseconds",
             f"% {perf.where}",
             f"% root & block & library & {names} & {names} / library \\\\"]
    for r in own.itertuples():
        lines.append(f"{r.root} & {size_label(int(r.b))} & {lib[(r.root, r.b)]:.1f} & "
                     f"{r.median_us:.1f} & {r.ratio_to_native:.2f} \\\\")
    return "\n".join(lines) + "\n"
