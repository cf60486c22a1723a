"""tuwviz: teach, explore and reproduce MPI collective algorithms.

C kernels (``kernels_c/``) run on real MPI ranks; :mod:`tuwviz.model` predicts their
times with an alpha-beta-gamma cost model; notebooks draw and animate them.

Main entry points
-----------------
verify
    Compare every registered kernel with the MPI library's collective.
bench
    Time algorithms side by side and write tidy CSV rows as they are measured.
LocalCluster
    Start, use and stop a local ipyparallel cluster of MPI engines.
make_problem
    Build a problem instance from the papers' block-size distributions.

Layers
------
Each package imports only those below it (``tests/test_architecture.py`` checks it):

===============  ========================================================================
``cli``          the ``tuwviz`` command, one module per subcommand
``course``       a student's workspace and its grader
``session``      ``LocalCluster``: engines with the experiments as methods (notebooks)
``viz``          drawings, animations, plots and pages
``analysis``     fits, verdicts, optimality, the papers' guidelines
``experiments``  verify, bench, calibrate, the circulant study
``run``          MPI ranks: mpiexec jobs, ipyparallel engines, SimGrid SMPI, traces
``kernels``      the C kernels built and loaded
``model``        schedules and the alpha-beta-gamma simulator
``table``        the algorithm table and its parameters (``params``)
foundation       ``errors``, ``collectives``, ``problems``, ``frames``, ``report``,
                 ``config``, ``procfs``, ``platforms``, ``_version``
===============  ========================================================================
"""
from ._version import __version__
from .problems import Problem, make_problem

__all__ = ["Problem", "make_problem", "verify", "bench", "LocalCluster", "__version__"]

#: Imported when first used: they pull in pandas, ipyparallel and MPI, which ``import
#: tuwviz`` should not pay for.
_LAZY = {"verify": ".experiments.verify", "bench": ".experiments.bench",
         "LocalCluster": ".session"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # found directly from now on
        return value
    raise AttributeError(f"module 'tuwviz' has no attribute {name!r}")
