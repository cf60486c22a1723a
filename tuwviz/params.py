"""Tuning parameters of the kernels: settable without changing any MPI signature.

Some algorithms have knobs that are not part of the MPI call, e.g. the pipelined ring's
block size ``B`` (Träff et al. 2010, Section 2.4).  In C they are process-global settings
(``tuw_set_block_bytes`` and friends in ``kernels_c/common/params.c``), so a kernel keeps
the exact ``MPI_Allgatherv`` signature and a student's program can set them before calling
it.  In Python they travel as a small dict, ``{"block_bytes": 4096, "ring": "smp"}``, in a
case (:mod:`tuwviz.run.runner`), to a model schedule builder (:func:`tuwviz.model.schedule`)
and into result rows (:func:`label`).

Which parameters exist (type, range, default, help, C setter) and which algorithm takes
which is data: the ``[parameter.*]`` entries and the rows' ``params`` in the algorithm
table (:mod:`tuwviz.table`).  This module only applies that table: it checks values,
expands sweep grids and labels rows; :mod:`tuwviz.kernels.setters` calls the C setters.
``tuwviz list`` prints them.

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

from typing import Any, Iterable

from .config import KERNELS_DIR
from .table import load_table

__all__ = [
    "ALGORITHM_PARAMS",
    "COST_PARAMS",
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "RING_ORDERS",
    "check_params",
    "expand",
    "label",
    "uses_cost_model",
    "verify_variants",
]

_PACKAGE = load_table(KERNELS_DIR, workspace=False)  # the shipped table; a workspace may add rows

#: Cost model of the Eq. (2) block-size estimate, the same defaults as the C kernels'
#: ``TUW_DEFAULT_ALPHA``/``TUW_DEFAULT_BETA`` (checked when the library loads): 1 µs per
#: message, 1 ns per byte.
DEFAULT_ALPHA = _PACKAGE.parameter("alpha").default
DEFAULT_BETA = _PACKAGE.parameter("beta").default

#: Ring orders, in the order of the C enum (TUW_RING_RANK, TUW_RING_SMP, TUW_RING_SPREAD).
RING_ORDERS = _PACKAGE.parameter("ring").choices

#: Which parameters each algorithm of the package's table takes (algorithms not listed
#: take none); derived from the table, for reading.
ALGORITHM_PARAMS: dict[tuple[str, str], tuple[str, ...]] = {
    r.key: tuple(q.name for q in r.params) for r in _PACKAGE if r.params
}


def _row(collective: str, algorithm: str):
    return load_table().find(collective, algorithm)


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
    valid = [q.name for q in _row(collective, algorithm).params]
    unknown = [k for k in params if k not in valid]
    if unknown:
        if not valid:
            raise ValueError(f"{collective}/{algorithm} takes no parameters, got: "
                             f"{', '.join(unknown)}")
        raise ValueError(f"{collective}/{algorithm} has no parameter {unknown[0]!r}; "
                         f"valid parameters: {', '.join(valid)}")
    row = _row(collective, algorithm)
    return {k: row.parameter(k).check(v, p) for k, v in params.items()
            if not (v is None and row.parameter(k).default is None)}


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

    valid = [q.name for q in _row(collective, algorithm).params]
    keys = [k for k in (grid or {}) if k in valid and grid[k]]
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def verify_variants(collective: str, algorithm: str, p: int) -> list[dict]:
    """Parameter settings `tuwviz verify` checks for `algorithm` on `p` ranks.

    The defaults, then the row's ``verify`` entries of the algorithm table (node-map
    patterns such as ``cyclic:2`` expanded for `p`).

    Examples
    --------
    >>> verify_variants("allgatherv", "ring", 3)
    [{}, {'ring': 'smp', 'nodes': [0, 1, 0]}, {'ring': 'smp'}]
    >>> verify_variants("gatherv", "tuw", 3)
    [{}]
    """
    return _row(collective, algorithm).verify_variants(p)


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


#: Parameters whose defaults come from the cost model: given the calibrated values
#: (:mod:`tuwviz.experiments.calibrate`) when the user sets none of them.
COST_PARAMS = ("alpha", "beta")


def uses_cost_model(taken: Iterable[str], params: dict) -> bool:
    """Whether an algorithm taking the parameters `taken` gets ``alpha``/``beta`` from the
    cost model when the user gives `params`: it takes both, and `params` sets neither
    nor a fixed ``block_bytes`` (which makes them moot).

    Examples
    --------
    >>> uses_cost_model(["block_bytes", "alpha", "beta"], {})
    True
    >>> uses_cost_model(["block_bytes", "alpha", "beta"], {"block_bytes": 4096})
    False
    >>> uses_cost_model(["fanout"], {})
    False
    """
    return (set(COST_PARAMS) <= set(taken) and not any(k in params for k in COST_PARAMS)
            and not params.get("block_bytes"))
