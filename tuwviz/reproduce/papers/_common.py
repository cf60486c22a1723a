"""What the papers' claim checks share: model times on a platform, SMPI rows, runs here.

Every helper labels what it returns (the ``where`` of a
:class:`~tuwviz.reproduce.claims.Value`), and the runs save their raw rows in the paper's
folder as they come.

Every platform a claim reads goes through :func:`sim_platform` (:func:`network`,
:func:`flat_costs`, :func:`smpi_bench` and :func:`smpi_study` call it), so the reproduction
can run a claim again with the assumed latencies and overheads halved and doubled
(:func:`latencies_times`) and see whether its verdict survives; rows measured on this
machine are reused then, not measured again.
"""
from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path

from ... import model
from ...experiments.bench import bench, run_cases
from ...experiments.study import study_cases
from ...model.nodes import NodeNetwork, simulate_nodes
from ...platforms import Platform, platform as get_platform
from ...problems import Problem
from ...run.smpi import DEFAULT_SELECTOR, smpi_backend

__all__ = ["clog2", "flat_costs", "here", "latencies_times", "measure_here", "model_us", "network",
           "ratio_text", "read_a_platform", "rows_file", "sim_platform", "smpi_bench", "smpi_study"]


class _Assumed:
    """The latency factor the claim being run sees, whether it read a platform, and the rows
    it measured on this machine (reused while the factor is not 1)."""

    def __init__(self):
        self.factor = 1.0
        self.read = False
        self.measured: dict = {}


_ASSUMED = _Assumed()


@contextlib.contextmanager
def latencies_times(factor: float):
    """Run a claim's measurement with every platform's latencies and overhead times `factor`
    (:meth:`tuwviz.platforms.Platform.latencies_times`); at factor 1 it starts afresh.

    Raw rows of a varied run go to files named ``..._latencies_xF.csv``; rows measured on
    this machine are those of the factor-1 run.
    """
    if factor == 1:
        _ASSUMED.read, _ASSUMED.measured = False, {}
    old, _ASSUMED.factor = _ASSUMED.factor, factor
    try:
        yield
    finally:
        _ASSUMED.factor = old


def read_a_platform() -> bool:
    """Whether the claim run since the last ``latencies_times(1)`` read a platform's
    numbers (its verdict can depend on them)."""
    return _ASSUMED.read


def sim_platform(plat: str | Platform) -> Platform:
    """`plat` as the claim being run sees it (latencies and overhead varied, if they are).

    >>> with latencies_times(0.5):
    ...     sim_platform("sx8").inter_latency == get_platform("sx8").inter_latency / 2
    True
    """
    _ASSUMED.read = True
    p = get_platform(plat)
    return p if _ASSUMED.factor == 1 else p.latencies_times(_ASSUMED.factor)


def rows_file(ctx, name: str) -> Path:
    """Where a run's raw rows `name` go: ``<paper>/<name>.csv`` (``<name>_latencies_xF.csv``
    while latencies are varied)."""
    return ctx.dir / (f"{name}.csv" if _ASSUMED.factor == 1
                      else f"{name}_latencies_x{_ASSUMED.factor:g}.csv")


def clog2(n: int) -> int:
    """ceil(log2 n) for n >= 1.

    >>> clog2(1), clog2(560), clog2(6400)
    (0, 10, 13)
    """
    return (n - 1).bit_length()


def network(plat: str | Platform, p: int, ppn: int | None = None) -> NodeNetwork:
    """`p` ranks on the platform's nodes, one port per node (the node-aware model)."""
    return NodeNetwork.from_platform(sim_platform(plat), p, ppn=ppn)


def flat_costs(plat: str) -> tuple[float, float]:
    """The flat model's alpha, beta on `plat`: its message between two nodes."""
    return network(plat, 2, ppn=1).inter


def model_us(collective: str, algorithm: str, problem: Problem, net: NodeNetwork | None = None,
             alpha: float | None = None, beta: float | None = None, gamma: float = 0.0,
             **params) -> float:
    """The model's time of one algorithm in microseconds: node-aware on `net`, or flat with
    `alpha`, `beta` (`gamma` per element of local work in both)."""
    s = model.schedule(collective, algorithm, problem, **params)
    if net is not None:
        return simulate_nodes(s, net, gamma).time * 1e6
    return model.simulate(s, alpha, beta, gamma).time * 1e6


def here(p: int) -> str:
    """The ``where`` of a value measured on this machine: ranks, cores, oversubscription.

    >>> here(1).startswith("1 rank")
    True
    """
    cores = os.cpu_count() or 1
    return (f"{p} rank{'s' if p != 1 else ''} on this machine's {cores} core"
            f"{'s' if cores != 1 else ''}" + (" (oversubscribed)" if p > cores else ""))


def smpi_bench(ctx, name: str, collective: str, algorithms, plat: str | Platform, p: int,
               dists, bs, *, root: int | None = None, params: dict | None = None,
               ppn: int | None = None,
               reps: int = 1, datatype: str = "int", op: str = "sum",
               selector: str = DEFAULT_SELECTOR, groups: tuple[int, int] | None = None,
               b_b=None):
    """Bench rows of `algorithms` under SMPI on `p` ranks of `plat` (or two `groups` of
    sizes (p, q), `b_b` group B's block sizes; the library's collectives: SMPI's
    `selector`), saved to ``<paper>/<name>.csv`` as they come (a new file each run).

    A simulation this run already made with the same file and arguments (another claim's)
    is not made again: its rows are returned.

    One repetition after one warm-up call by default: SMPI repeats a call's simulated time
    (within 0.1 % over the 60 cases at p = 560 of the gatherv claims, stop 72), so one is
    the minimum, median and mean alike, and each repetition costs as much as the first.
    """
    path = rows_file(ctx, name)
    plat = sim_platform(plat)
    key = repr((str(path), collective, list(algorithms), plat, p, list(dists), list(bs), root,
                params, ppn, reps, datatype, op, selector, groups, b_b))
    if key in ctx.runs:  # another claim of this run read the same simulation
        return ctx.runs[key].copy()
    path.unlink(missing_ok=True)
    rows = bench(collective, list(algorithms), ps=[p], dists=list(dists), bs=list(bs), root=root,
                 reps=reps, warmup=1, params=params, out=path, datatype=datatype, op=op,
                 groups=[groups] if groups else None, b_b=b_b,
                 backend=smpi_backend(plat, selector, ppn=ppn), progress=ctx.progress)
    ctx.runs[key] = rows.copy()
    return rows


def smpi_study(ctx, name: str, study: str, plat: str, p: int, cs, *, ppn: int | None = None,
               selector: str = DEFAULT_SELECTOR, reps: int = 1):
    """The rows of a one-command study (:mod:`tuwviz.experiments.study`) under SMPI, saved to
    ``<paper>/<name>.csv`` as they come."""
    path = rows_file(ctx, name)
    path.unlink(missing_ok=True)
    cases = study_cases(study, [p], list(cs), reps=reps, warmup=1)
    return run_cases(cases, out=path, backend=smpi_backend(sim_platform(plat), selector, ppn=ppn),
                     progress=ctx.progress, desc=study)


def measure_here(ctx, name: str, collective: str, algorithms, p: int, dists, bs, *,
                 root: int | None = None, reps: int = 20, params: dict | None = None):
    """Bench rows of `algorithms` on `p` real MPI ranks of this machine, saved to
    ``<paper>/<name>.csv`` as they come."""
    if _ASSUMED.factor != 1 and name in _ASSUMED.measured:
        return _ASSUMED.measured[name]  # this machine's latencies are not assumed
    path = ctx.dir / f"{name}.csv"
    path.unlink(missing_ok=True)
    rows = bench(collective, list(algorithms), ps=[p], dists=list(dists), bs=list(bs), root=root,
                 reps=reps, warmup=3, params=params, out=path, progress=ctx.progress)
    _ASSUMED.measured[name] = rows
    return rows


def ratio_text(values) -> str:
    """A range of factors for a sentence.

    >>> ratio_text([6.8, 9.04, 7.8])
    '6.8-9'
    >>> ratio_text([2.0])
    '2'
    """
    vals = [v for v in values if v == v and not math.isinf(v)]
    if not vals:
        return "n/a"
    lo, hi = min(vals), max(vals)
    return f"{lo:.2g}" if f"{lo:.2g}" == f"{hi:.2g}" else f"{lo:.2g}-{hi:.2g}"
