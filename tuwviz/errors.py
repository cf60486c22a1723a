"""Exceptions tuwviz raises; each message is one line a user can act on."""
from __future__ import annotations

__all__ = [
    "TuwvizError",
    "MPINotFoundError",
    "KernelBuildError",
    "KernelError",
    "RankFailure",
    "TimeLimitExceeded",
]


class TuwvizError(RuntimeError):
    """Base class of tuwviz's own errors (the CLI prints these without a traceback)."""


class MPINotFoundError(TuwvizError):
    """No MPI, mpi4py or mpicc could be found."""


class KernelBuildError(TuwvizError):
    """The C kernels did not compile; the message holds the compiler's own output."""


class KernelError(TuwvizError):
    """A C kernel returned an MPI error code."""


class RankFailure(TuwvizError):
    """An MPI rank or engine died or raised during a run.

    Attributes
    ----------
    rank : int or None
        The MPI rank that failed first, when known.
    """

    def __init__(self, message: str, rank: int | None = None):
        super().__init__(message)
        self.rank = rank


class TimeLimitExceeded(TuwvizError):
    """A measurement ran longer than its time limit."""
