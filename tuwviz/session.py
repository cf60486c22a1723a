"""The notebooks' one object: MPI engines with the experiments as methods.

:class:`LocalCluster` is :class:`tuwviz.run.engines.Engines` (start, stop, run cases,
trace) plus ``verify``, ``bench``, ``calibrate`` and ``measure_missing`` on those engines.
The engines sit in the ``run`` layer, below the experiments that use them; this module sits
above both, so the methods need no upward import.  Use it as a context manager so the
engines always stop::

    with LocalCluster(n=4) as cluster:
        report = cluster.verify(["gatherv"])
        df = cluster.bench("gatherv", ["native", "linear"], bs=[1, 100, 10000])

Everything :class:`~tuwviz.run.engines.Engines` says holds here: a rank that raises, dies
or stops responding is named within seconds, and nothing outlives the driver.
"""
from __future__ import annotations

from .analysis.guidelines import measure_missing
from .experiments.bench import bench
from .experiments.calibrate import calibrate
from .experiments.verify import verify
from .run.engines import Engines, free_cores

__all__ = ["LocalCluster", "free_cores"]


class LocalCluster(Engines):
    """Start, use and stop ipyparallel MPI engines; verify and time kernels on them.

    Parameters are those of :class:`tuwviz.run.engines.Engines`: ``n`` engines (= MPI
    ranks, more than the cores is allowed and labelled), ``profile`` (``local`` or
    ``slurm``), ``heavy_yield``, ``start_timeout``, ``stall_limit``.

    Examples
    --------
    Starting engines takes seconds, so this example is tested in ``tests/test_session.py``
    rather than as a doctest::

        with LocalCluster(n=2) as cluster:
            print(cluster.verify(["gatherv"], ["linear"]).ok)   # True
    """

    def verify(self, collectives=None, algorithms=None, **kwargs):
        """:func:`tuwviz.experiments.verify.verify` on the engines (p defaults to 1..n)."""
        kwargs.setdefault("ps", range(1, self.n + 1))
        return verify(collectives, algorithms, backend=self.run_cases, **kwargs)

    def bench(self, collective_name: str, algorithms=("native",), **kwargs):
        """:func:`tuwviz.experiments.bench.bench` on the engines (p defaults to n)."""
        kwargs.setdefault("ps", [self.n])
        return bench(collective_name, algorithms, backend=self.run_cases,
                     backend_name="ipyparallel", **kwargs)

    def calibrate(self, **kwargs):
        """:func:`tuwviz.experiments.calibrate.calibrate` on all engines: this layout's
        ``alpha``, ``beta``, ``gamma`` (cached; ``force=True`` measures again)."""
        return calibrate(self.n, backend=self.run_cases, **kwargs)

    def measure_missing(self, results, **kwargs):
        """:func:`tuwviz.analysis.guidelines.measure_missing` on the engines: measure the
        companion operations (e.g. MPI_Gather(m'), MPI_Allreduce(1)) the guidelines need."""
        return measure_missing(results, backend=self.run_cases, backend_name="ipyparallel",
                               **kwargs)
