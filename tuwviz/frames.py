"""DataFrames that show every cell in full, for notebooks.

pandas cuts each cell of a displayed DataFrame at 50 characters (``display.max_colwidth``),
so an algorithm's description or a parameter set such as
``alpha=3.2e-06, beta=1.1e-09, block_bytes=1048576`` loses exactly the part that matters
(``block_bytes=104…``).  :class:`FullFrame` shows every cell whole; the frames tuwviz
returns are of this type, and so is every frame taken from one (columns, rows, concat).
Only the display differs: a FullFrame is a :class:`pandas.DataFrame` in every other way.

Examples
--------
>>> long = "tuning parameters: " + ", ".join(f"p{i}={i}" for i in range(12))
>>> df = FullFrame({"name": ["pipelined"], "params": [long]})
>>> long in df[["params"]]._repr_html_(), long in pd.DataFrame(df)._repr_html_()
(True, False)
"""
from __future__ import annotations

import pandas as pd

__all__ = ["FullFrame"]


class FullFrame(pd.DataFrame):
    """A :class:`pandas.DataFrame` whose display (HTML and text) never cuts a cell."""

    @property
    def _constructor(self):
        # pandas' subclassing hook: slices, copies and concat stay FullFrames
        return FullFrame

    def _repr_html_(self):
        with pd.option_context("display.max_colwidth", None):
            return super()._repr_html_()

    def __repr__(self) -> str:
        with pd.option_context("display.max_colwidth", None):
            return super().__repr__()
