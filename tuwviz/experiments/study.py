"""One-command studies: every measurement a paper's figures and guidelines need, in one run.

A :class:`Study` lists :class:`Part` s: a collective, the algorithms measured (the MPI
library's and a family of tuwviz's own, side by side), and how the study's sizes map to
that collective's problem.  :func:`study_cases` turns a study, process counts and block
sizes ``c`` into :func:`tuwviz.experiments.bench.bench_cases`' cases, and :func:`run_study` measures
them in one mpiexec run per p, appending every row to one CSV as it comes, which
``tuwviz guidelines`` then turns into tables and figures.

The circulant study (Träff, Hunold, Vardas, Funk, Section IV-C) measures, for a vector of
``m = p c`` bytes reduced with ``MPI_BOR`` on ``MPI_BYTE`` as the paper does, the
operations of Guidelines (2)-(6) and of Figures 6-7: Reduce_scatter_block and
Reduce_scatter with blocks of ``c``, Allreduce and Reduce on ``m`` (root 0), Allgather(v)
and Scatter(v) of blocks ``c``, Reduce_scatter with all ``m`` in the root's block
(Guideline (6)), and the two combined Allreduces (Figure 7's baselines).

Examples
--------
>>> [(c["problem"]["collective"], c["algorithm"], c["problem"]["b"])
...  for c in study_cases("circulant", [4], [2])][:4]
[('reduce_scatter_block', 'native', 2), ('reduce_scatter_block', 'circulant', 2), ('reduce_scatter', 'native', 2), ('reduce_scatter', 'circulant', 2)]
>>> len(study_cases("circulant", [4], [2]))
20
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from .bench import bench_cases, run_cases
from ..run.launch import check_ranks, mpiexec_backend
from .sweep import int_values

__all__ = ["STUDIES", "Part", "Study", "run_study", "study_cases"]


@dataclass(frozen=True)
class Part:
    """One collective of a study.

    Attributes
    ----------
    collective : str
    algorithms : tuple of str
        Measured side by side (``native`` first).
    size : {"block", "vector"}
        ``b = c`` (blocks of ``c`` elements per process) or ``b = p c`` (the whole vector).
    distribution : str
        Block sizes of an irregular collective (``same``; ``broadcast``: all in process 0).
    root : int or None
        Root of a rooted collective.
    """

    collective: str
    algorithms: tuple[str, ...]
    size: str = "block"
    distribution: str = "same"
    root: int | None = None


@dataclass(frozen=True)
class Study:
    """A named set of :class:`Part` s measured together, with its element type and operator."""

    name: str
    description: str
    parts: tuple[Part, ...]
    datatype: str = "byte"
    op: str = "bor"


_LIB_CIRC = ("native", "circulant")

#: Studies by name.
STUDIES: dict[str, Study] = {s.name: s for s in (
    Study("circulant",
          "the circulant paper's consistency study (Section IV-C, Guidelines (2)-(6), "
          "Figures 6-7): library and circulant implementations, MPI_BYTE with MPI_BOR",
          (Part("reduce_scatter_block", _LIB_CIRC),
           Part("reduce_scatter", _LIB_CIRC),
           Part("allreduce", ("native", "circulant", "combined_native", "combined"), "vector"),
           Part("reduce", _LIB_CIRC, "vector", root=0),
           Part("allgather", _LIB_CIRC),
           Part("allgatherv", _LIB_CIRC),
           Part("scatter", _LIB_CIRC, root=0),
           Part("scatterv", _LIB_CIRC, root=0),
           Part("reduce_scatter", _LIB_CIRC, "vector", "broadcast"))),
)}


def _study(name: str) -> Study:
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; valid studies: {', '.join(STUDIES)}")
    return STUDIES[name]


def study_cases(name: str, ps: Iterable[int], bs: Iterable[int], *, reps: int = 75,
                warmup: int = 10, time_limit: float = 0.0, max_time: float = 0.0,
                seed: int = 0) -> list[dict]:
    """The cases of study `name` for process counts `ps` and block sizes `bs` (``c``).

    Every part's cases come from :func:`tuwviz.experiments.bench.bench_cases`, so names, sizes and
    limits are checked the same way; the cases are ordered by p, then part.
    """
    study = _study(name)
    cases = []
    for p in ps:
        for part in study.parts:
            sizes = list(bs) if part.size == "block" else [p * b for b in bs]
            cases += bench_cases(part.collective, part.algorithms, [p], [part.distribution],
                                 sizes, part.root, seed, reps, warmup, time_limit,
                                 study.datatype, op=study.op, max_time=max_time)
    return cases


def run_study(name: str, ps: Iterable[int], bs: Iterable[int], *,
              out: str | os.PathLike | None = None, reps: int = 75, warmup: int = 10,
              time_limit: float = 0.0, max_time: float = 0.0, seed: int = 0,
              progress: bool = True, stall_limit: float | None = None, backend=None):
    """Measure study `name` (one mpiexec run per p); rows as :func:`tuwviz.experiments.bench.bench`.

    Parameters
    ----------
    name : str
        A key of :data:`STUDIES`.
    ps, bs : iterables of int
        Process counts, and block sizes ``c`` in elements (the vector is ``p c``).
    out : path, optional
        CSV each row is appended to as it is measured.
    reps, warmup, time_limit, max_time, seed
        As for :func:`tuwviz.experiments.bench.bench`; `max_time` ends a measurement's repetitions
        after that many seconds (ReproMPI's limit: the paper used 5000 or 3 s).
    backend : callable, optional
        Where to run (default: fresh ranks under mpiexec; e.g.
        :class:`tuwviz.run.smpi.SmpiBackend` for the paper's platform, simulated).
    """
    ps = int_values("ps", ps, lo=1)
    if backend is None:
        for p in ps:
            check_ranks(p)
    cases = study_cases(name, ps, bs, reps=reps, warmup=warmup, time_limit=time_limit,
                        max_time=max_time, seed=seed)
    return run_cases(cases, out=out, backend=backend or mpiexec_backend(stall_limit),
                     backend_name=None if backend else "mpiexec", progress=progress,
                     desc=f"study {name}")
