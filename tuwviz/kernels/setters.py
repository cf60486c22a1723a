"""The C kernels' tuning parameters, set through their C setters on a loaded library.

The values are checked first (:func:`tuwviz.params.check_params`); here each goes to the
setter the algorithm table names for it (``tuw_set_block_bytes`` and friends in
``kernels_c/common/params.c``), on the rank that is about to run a kernel.
"""
from __future__ import annotations

import ctypes

from ..table import load_table

__all__ = ["apply", "reset"]


def apply(lib: ctypes.CDLL, params: dict | None) -> None:
    """Set the C kernels' tuning parameters to `params` (defaults for the rest).

    Engine side: called on every rank just before a kernel runs; each value goes to its
    parameter's C setter as named in the algorithm table.
    """
    lib.tuw_reset_params()
    table = load_table()
    for name, value in (params or {}).items():
        if value is not None:
            table.parameter(name).set(lib, value)


def reset(lib: ctypes.CDLL) -> None:
    """Restore the C kernels' default tuning parameters."""
    lib.tuw_reset_params()
