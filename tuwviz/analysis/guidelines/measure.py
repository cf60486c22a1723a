"""Planning and running the measurements a guideline needs that the results lack.

A guideline compares the operation under test with companion operations (Guideline (2)
of the gatherv paper needs ``MPI_Allreduce(1)`` and ``MPI_Gather(m')`` on the same p,
root and library).  :func:`missing_operations` names each companion measurement missing
from the results as a :class:`MissingOperation`; :func:`measure_missing` measures exactly
those with :func:`tuwviz.experiments.bench.bench`, with the repetitions and warm-up calls of the rows
they will be compared with.  :class:`MissingMeasurements` is the error
:func:`~tuwviz.analysis.guidelines.evaluate` raises when rows are missing.

Examples
--------
>>> mo = MissingOperation("gather", "native", 4, 2, "int", 5, "same", 5, 20, 20,
...                       guidelines=("Guideline (2)",))
>>> mo.describe()
"gather (native), p=4, root 2, 5 elements per process (m'=20) for Guideline (2)"
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from ...errors import TuwvizError
from .data import Guideline
from .load import load_results
from .rows import _Need, _select, _walk
from ...experiments.bench import ROW_FIELDS, bench
from ...problems import check_int

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd

__all__ = ["MissingMeasurements", "MissingOperation", "measure_missing", "missing_operations"]


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
            f"CSV --measure-missing' or tuwviz.analysis.guidelines.measure_missing())"
        )


def missing_operations(
    results: "pd.DataFrame | str | os.PathLike",
    guidelines: Iterable[str | Guideline] | None = None,
    algorithms: Iterable[str] | None = None,
) -> list[MissingOperation]:
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
    results: "pd.DataFrame | str | os.PathLike",
    out: str | os.PathLike | None = None,
    guidelines: Iterable[str | Guideline] | None = None,
    algorithms: Iterable[str] | None = None,
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
    run of :func:`tuwviz.experiments.bench.bench` per collective, algorithm, p and root.

    Parameters
    ----------
    results : DataFrame or path
        Bench rows; if a path, new rows are appended to that CSV unless `out` says otherwise.
    out : path, optional
        CSV to append the new rows to (flushed as measured).
    guidelines, algorithms
        As for :func:`missing_operations`.
    reps, warmup : int, optional
        Repetitions (at least 1) and warm-up calls (at least 0); default: those of the rows
        compared with.
    seed : int
        Seed for operations that use the problem's own (random) block sizes; it must be the
        seed the results were measured with (bench's default is 0).
    progress : bool
        Show progress bars.
    backend, backend_name
        Where to run (default: fresh ranks under mpiexec); see :func:`tuwviz.experiments.bench.bench`.

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

    reps = None if reps is None else check_int("reps", reps, lo=1)
    warmup = None if warmup is None else check_int("warmup", warmup, lo=0)
    seed = check_int("seed", seed, lo=0)
    df = load_results(results)
    if out is None and not isinstance(results, pd.DataFrame):
        out = results
    missing = missing_operations(df, guidelines, algorithms)
    if not missing:
        return pd.DataFrame(columns=ROW_FIELDS)
    groups: dict[tuple, list[int]] = {}
    for mo in missing:
        key = (mo.collective, mo.algorithm, mo.p, mo.root, mo.datatype,
               mo.reps if reps is None else reps, mo.warmup if warmup is None else warmup,
               mo.distribution)
        groups.setdefault(key, []).append(mo.b)
    frames = []
    for (coll, alg, p, root, datatype, r, w, dist), bs in groups.items():
        # a reduction on bytes: MPI has no sum there; bitwise or, as the circulant paper
        op = "bor" if datatype == "byte" else "sum"
        frames.append(bench(coll, [alg], ps=[p], dists=[dist], bs=sorted(set(bs)), out=out,
                            root=root, seed=seed, reps=r, warmup=w, datatype=datatype, op=op,
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
