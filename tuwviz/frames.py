"""DataFrames that show every cell in full, for notebooks.

pandas cuts each cell of a displayed DataFrame at 50 characters (``display.max_colwidth``),
so an algorithm's description or a parameter set such as
``alpha=3.2e-06, beta=1.1e-09, block_bytes=1048576`` loses exactly the part that matters
(``block_bytes=104…``).  :class:`FullFrame` shows every cell whole; the frames tuwviz
returns are of this type, and so is every frame taken from one (columns, rows, concat).
Only the display differs: a FullFrame is a :class:`pandas.DataFrame` in every other way.

The class is made when first used, so importing this module (and the modules that return
FullFrames, e.g. :mod:`tuwviz.experiments.bench`) does not import pandas: ``tuwviz --help``
stays quick.  Use it as ``frames.FullFrame`` or ``from tuwviz.frames import FullFrame``.

Examples
--------
>>> import pandas as pd
>>> from tuwviz.frames import FullFrame
>>> long = "tuning parameters: " + ", ".join(f"p{i}={i}" for i in range(12))
>>> df = FullFrame({"name": ["pipelined"], "params": [long]})
>>> long in df[["params"]]._repr_html_(), long in pd.DataFrame(df)._repr_html_()
(True, False)
"""
from __future__ import annotations

__all__ = ["FullFrame"]

FullFrame: type  # made by __getattr__ below when first used


def _make_class() -> type:
    import pandas as pd

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

    # pickled and shown as tuwviz.frames.FullFrame, the name it is found by
    FullFrame.__module__, FullFrame.__qualname__ = __name__, "FullFrame"
    return FullFrame


def __getattr__(name: str):
    if name == "FullFrame":
        cls = globals()["FullFrame"] = _make_class()  # made once, then found directly
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
