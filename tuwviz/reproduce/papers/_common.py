"""What the papers' claim checks share: model times on a platform, SMPI rows, runs here.

Every helper labels what it returns (the ``where`` of a
:class:`~tuwviz.reproduce.claims.Value`), and the runs save their raw rows in the paper's
folder as they come.
"""
from __future__ import annotations

import math
import os

from ... import model
from ...experiments.bench import bench, run_cases
from ...experiments.study import study_cases
from ...model.nodes import NodeNetwork, simulate_nodes
from ...platforms import platform as get_platform
from ...problems import Problem
from ...run.smpi import DEFAULT_SELECTOR, smpi_backend

__all__ = ["clog2", "flat_costs", "here", "measure_here", "model_us", "network", "ratio_text", "smpi_bench",
           "smpi_study"]


def clog2(n: int) -> int:
    """ceil(log2 n) for n >= 1.

    >>> clog2(1), clog2(560), clog2(6400)
    (0, 10, 13)
    """
    return (n - 1).bit_length()


def network(plat: str, p: int, ppn: int | None = None) -> NodeNetwork:
    """`p` ranks on the platform's nodes, one port per node (the node-aware model)."""
    return NodeNetwork.from_platform(plat, p, ppn=ppn)


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


def smpi_bench(ctx, name: str, collective: str, algorithms, plat: str, p: int, dists, bs, *,
               root: int | None = None, params: dict | None = None, ppn: int | None = None,
               reps: int = 2, datatype: str = "int", op: str = "sum",
               selector: str = DEFAULT_SELECTOR, groups: tuple[int, int] | None = None,
               b_b=None):
    """Bench rows of `algorithms` under SMPI on `p` ranks of `plat` (or two `groups` of
    sizes (p, q), `b_b` group B's block sizes; the library's collectives: SMPI's
    `selector`), saved to ``<paper>/<name>.csv`` as they come (a new file each run)."""
    path = ctx.dir / f"{name}.csv"
    path.unlink(missing_ok=True)
    return bench(collective, list(algorithms), ps=[p], dists=list(dists), bs=list(bs), root=root,
                 reps=reps, warmup=1, params=params, out=path, datatype=datatype, op=op,
                 groups=[groups] if groups else None, b_b=b_b,
                 backend=smpi_backend(get_platform(plat), selector, ppn=ppn),
                 progress=ctx.progress)


def smpi_study(ctx, name: str, study: str, plat: str, p: int, cs, *, ppn: int | None = None,
               selector: str = DEFAULT_SELECTOR, reps: int = 2):
    """The rows of a one-command study (:mod:`tuwviz.experiments.study`) under SMPI, saved to
    ``<paper>/<name>.csv`` as they come."""
    path = ctx.dir / f"{name}.csv"
    path.unlink(missing_ok=True)
    cases = study_cases(study, [p], list(cs), reps=reps, warmup=1)
    return run_cases(cases, out=path, backend=smpi_backend(get_platform(plat), selector, ppn=ppn),
                     progress=ctx.progress, desc=study)


def measure_here(ctx, name: str, collective: str, algorithms, p: int, dists, bs, *,
                 root: int | None = None, reps: int = 20, params: dict | None = None):
    """Bench rows of `algorithms` on `p` real MPI ranks of this machine, saved to
    ``<paper>/<name>.csv`` as they come."""
    path = ctx.dir / f"{name}.csv"
    path.unlink(missing_ok=True)
    return bench(collective, list(algorithms), ps=[p], dists=list(dists), bs=list(bs), root=root,
                 reps=reps, warmup=3, params=params, out=path, progress=ctx.progress)


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
