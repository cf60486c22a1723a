"""The claim checks, one module per paper: ``claim_<id>`` functions, one per claim of the
paper's data file (``tuwviz/reproduce/data/<paper>.toml``).

:data:`MODULES` maps a paper key to its module; a paper not in it has no checks yet.
"""
from __future__ import annotations

from . import allgatherv, circulant, course, gatherv, intergroup

__all__ = ["MODULES"]

#: Paper key -> the module with its ``claim_<id>`` functions.
MODULES = {"gatherv": gatherv, "allgatherv": allgatherv, "circulant": circulant,
           "intergroup": intergroup, "course": course}
