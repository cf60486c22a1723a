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
__version__ = "0.1.0"

from .problems import Problem, make_problem  # noqa: E402

__all__ = ["Problem", "make_problem", "verify", "bench", "LocalCluster", "__version__"]


def __getattr__(name):
    # Imported lazily: they pull in pandas, ipyparallel and MPI, which `import tuwviz`
    # should not pay for.
    if name == "verify":
        from .verify import verify

        return verify
    if name == "bench":
        from .bench import bench

        return bench
    if name == "LocalCluster":
        from .cluster import LocalCluster

        return LocalCluster
    raise AttributeError(f"module 'tuwviz' has no attribute {name!r}")
