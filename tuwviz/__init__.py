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
"""
import sys as _sys
import types as _types

from ._version import __version__
from .problems import Problem, make_problem

__all__ = ["Problem", "make_problem", "verify", "bench", "LocalCluster", "__version__"]


#: Package attributes that are functions of a submodule with the same name.
_FUNCTIONS = {"verify": ".verify", "bench": ".bench"}


class _Package(_types.ModuleType):
    """`tuwviz` itself: ``tuwviz.verify`` and ``tuwviz.bench`` stay the functions.

    Importing the submodule ``tuwviz.verify`` (lazily below, or by any other module) makes
    Python set the package attribute ``verify`` to that module, which would replace the
    function (``TypeError: 'module' object is not callable`` on the second call).  Such
    assignments are ignored here; the submodules stay importable by name
    (``from tuwviz.verify import verify_cases``).
    """

    def __setattr__(self, name, value):
        if name in _FUNCTIONS and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


def __getattr__(name):
    # Imported lazily: they pull in pandas, ipyparallel and MPI, which `import tuwviz`
    # should not pay for.
    if name in _FUNCTIONS:
        import importlib

        fn = getattr(importlib.import_module(_FUNCTIONS[name], __name__), name)
        globals()[name] = fn  # found directly from now on
        return fn
    if name == "LocalCluster":
        from .cluster import LocalCluster

        return LocalCluster
    raise AttributeError(f"module 'tuwviz' has no attribute {name!r}")
