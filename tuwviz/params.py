"""Tuning parameters of the kernels: settable without changing any MPI signature.

Some algorithms have knobs that are not part of the MPI call, e.g. the pipelined ring's
block size ``B`` (Träff et al. 2010, Section 2.4).  In C they are process-global settings
(``tuw_set_block_bytes`` and friends in ``kernels_c/common/params.c``), so a kernel keeps
the exact ``MPI_Allgatherv`` signature and a student's program can set them before calling
it.  In Python they travel as a small dict, ``{"block_bytes": 4096, "ring": "smp"}``, in a
case (:mod:`tuwviz.runner`), to a model schedule builder (:func:`tuwviz.model.schedule`)
and into result rows (:func:`label`).

Parameters, by name:

* ``block_bytes`` (int >= 0): the pipelined ring's block size ``B`` in bytes, rounded down
  to whole elements (at least one); 0, the default, is the paper's estimate, Eq. (2).
* ``alpha``, ``beta`` (float > 0): seconds per message and per byte, used only by the
  Eq. (2) estimate (defaults :data:`DEFAULT_ALPHA`, :data:`DEFAULT_BETA`).
* ``ring`` (``"rank"``, ``"smp"`` or ``"spread"``): the order of processes around the
  ring.  ``"rank"`` is rank order; ``"smp"`` re-ranks so that exactly one process per node
  receives from and one sends to another node (Figure 1); ``"spread"`` places the
  processes with data equidistantly among those without (Section 2.3).
* ``nodes`` (list of int, one per rank): the node of every rank, for ``ring="smp"``;
  by default the kernel asks the communicator (``MPI_Comm_split_type`` shared memory).
  Set it to teach SMP re-ranking on a single machine.

Examples
--------
>>> check_params("allgatherv", "pipelined", {"block_bytes": 1024, "ring": "smp"}, p=4)
{'block_bytes': 1024, 'ring': 'smp'}
>>> label({"block_bytes": 1024, "ring": "smp"})
'block_bytes=1024 ring=smp'
>>> check_params("gatherv", "linear", {"block_bytes": 8})
Traceback (most recent call last):
...
ValueError: gatherv/linear takes no parameters, got: block_bytes
"""
from __future__ import annotations

import ctypes
from typing import Any

__all__ = [
    "ALGORITHM_PARAMS",
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "RING_ORDERS",
    "apply",
    "check_params",
    "expand",
    "label",
    "reset",
    "verify_variants",
]

#: Cost model of the Eq. (2) block-size estimate, the same defaults as the C kernels'
#: ``TUW_DEFAULT_ALPHA``/``TUW_DEFAULT_BETA``: 1 µs per message, 1 ns per byte.
DEFAULT_ALPHA = 1e-6
DEFAULT_BETA = 1e-9

#: Ring orders, in the order of the C enum (TUW_RING_RANK, TUW_RING_SMP, TUW_RING_SPREAD).
RING_ORDERS = ("rank", "smp", "spread")

_RING = ("ring", "nodes")
#: Which parameters each algorithm takes; algorithms not listed take none.
ALGORITHM_PARAMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("allgatherv", "ring"): _RING,
    ("allgatherv", "pipelined"): ("block_bytes", "alpha", "beta", *_RING),
}


def check_params(collective: str, algorithm: str, params: dict | None,
                 p: int | None = None) -> dict[str, Any]:
    """Check `params` for `algorithm` of `collective`; return them normalized.

    Parameters
    ----------
    collective, algorithm : str
        What the parameters are for.
    params : dict or None
        Parameter values by name (see the module docstring).
    p : int, optional
        Number of processes; if given, a ``nodes`` list must have ``p`` entries.

    Returns
    -------
    dict
        The parameters with canonical types (ints, floats, a ring-order name, a list).

    Raises
    ------
    ValueError
        For a parameter the algorithm does not take (listing those it takes) or a bad
        value.
    """
    params = dict(params or {})
    valid = ALGORITHM_PARAMS.get((collective, algorithm), ())
    unknown = [k for k in params if k not in valid]
    if unknown:
        if not valid:
            raise ValueError(f"{collective}/{algorithm} takes no parameters, got: "
                             f"{', '.join(unknown)}")
        raise ValueError(f"{collective}/{algorithm} has no parameter {unknown[0]!r}; "
                         f"valid parameters: {', '.join(valid)}")
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key == "block_bytes":
            if int(value) != value or value < 0:
                raise ValueError(f"block_bytes must be a non-negative integer (0 = Eq. (2) "
                                 f"estimate), got {value!r}")
            out[key] = int(value)
        elif key in ("alpha", "beta"):
            if not float(value) > 0:
                raise ValueError(f"{key} must be positive (seconds), got {value!r}")
            out[key] = float(value)
        elif key == "ring":
            if value not in RING_ORDERS:
                raise ValueError(f"unknown ring order {value!r}; valid ring orders: "
                                 f"{', '.join(RING_ORDERS)}")
            out[key] = value
        elif key == "nodes":
            if value is None:
                continue
            nodes = [int(n) for n in value]
            if p is not None and len(nodes) != p:
                raise ValueError(f"nodes gives {len(nodes)} node numbers for p={p} processes")
            if any(n < 0 for n in nodes):
                raise ValueError("node numbers must be non-negative")
            out[key] = nodes
    return out


def expand(collective: str, algorithm: str, grid: dict[str, list] | None) -> list[dict]:
    """Every combination of the values in `grid` that `algorithm` takes, as params dicts.

    Keys the algorithm does not take are ignored, so one grid serves a whole sweep.

    Examples
    --------
    >>> expand("allgatherv", "pipelined", {"block_bytes": [0, 1024], "ring": ["rank"]})
    [{'block_bytes': 0, 'ring': 'rank'}, {'block_bytes': 1024, 'ring': 'rank'}]
    >>> expand("allgatherv", "ring", {"block_bytes": [0, 1024]}), expand("gatherv", "tuw", None)
    ([{}], [{}])
    """
    import itertools

    valid = ALGORITHM_PARAMS.get((collective, algorithm), ())
    keys = [k for k in (grid or {}) if k in valid and grid[k]]
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def verify_variants(collective: str, algorithm: str, p: int) -> list[dict]:
    """Parameter settings `tuwviz verify` checks by default for `algorithm` on `p` ranks.

    For the rings: defaults, SMP re-ranking with a round-robin node map (ranks alternate
    between two nodes) and with the communicator's own node map; for the pipelined ring
    also blocks of one element, of 12 bytes (several pieces, partial last pieces), larger
    than every block, and the spread placement.
    """
    if (collective, algorithm) not in ALGORITHM_PARAMS:
        return [{}]
    rings = [{"ring": "smp", "nodes": [i % 2 for i in range(p)]}, {"ring": "smp"}]
    if algorithm == "ring":
        return [{}, *rings]
    return [{}, {"block_bytes": 1}, {"block_bytes": 12}, {"block_bytes": 1 << 30},
            {"block_bytes": 8, "ring": "spread"}, {**rings[0], "block_bytes": 12},
            {**rings[1], "block_bytes": 12}]


def label(params: dict | None) -> str:
    """Compact ``key=value`` text of `params` for result rows and plot legends."""
    if not params:
        return ""
    parts = []
    for k, v in params.items():
        if k == "nodes":
            v = "/".join(map(str, v))
        elif isinstance(v, float):
            v = f"{v:.4g}"
        parts.append(f"{k}={v}")
    return " ".join(parts)


def apply(lib: ctypes.CDLL, params: dict | None) -> None:
    """Set the C kernels' tuning parameters to `params` (defaults for the rest).

    Engine side: called on every rank just before a kernel runs.
    """
    lib.tuw_reset_params()
    params = params or {}
    if "block_bytes" in params:
        lib.tuw_set_block_bytes(int(params["block_bytes"]))
    if "alpha" in params or "beta" in params:
        lib.tuw_set_cost_model(float(params.get("alpha", DEFAULT_ALPHA)),
                               float(params.get("beta", DEFAULT_BETA)))
    if "ring" in params:
        lib.tuw_set_ring_order(RING_ORDERS.index(params["ring"]))
    if params.get("nodes") is not None:
        nodes = params["nodes"]
        arr = (ctypes.c_int * len(nodes))(*nodes)
        if lib.tuw_set_node_map(len(nodes), arr) != 0:
            raise MemoryError("tuw_set_node_map could not allocate the node map")


def reset(lib: ctypes.CDLL) -> None:
    """Restore the C kernels' default tuning parameters."""
    lib.tuw_reset_params()
