"""Claims, findings and verdicts: what a paper says, what we get, and whether they agree.

A paper's *claim* is one table, figure or headline sentence; its text, source and
published numbers are in the paper's data file (:mod:`tuwviz.reproduce.published`).  A
claim's function computes a :class:`Finding`: values from each source that can speak to it
(the paper, a closed formula, the model, SimGrid's SMPI on the paper's platform, a run on
this machine), each labelled, and one verdict with its reason in a sentence.

Verdicts
--------
``reproduced``
    our number agrees with the paper's within the stated tolerance (or falls in its range);
``reproduced in shape``
    the same direction, order or trend, but not the published magnitude (e.g. absolute
    times of a 2017 machine);
``differs``
    our number contradicts the claim; the reason says why;
``not reproducible here``
    nothing here can answer it; the reason says what is missing.

Examples
--------
>>> judge_factor(15.2, 15.47, rel=0.1)
'reproduced'
>>> judge_factor(5.0, 15.47, rel=0.1)
'reproduced in shape'
>>> judge_factor(0.8, 15.47, rel=0.1)
'differs'
>>> judge_range(14.3, 10, None)
'reproduced'
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Callable

__all__ = [
    "DIFFERS",
    "IN_SHAPE",
    "NOT_HERE",
    "REPRODUCED",
    "SOURCES",
    "VERDICTS",
    "Claim",
    "Finding",
    "Value",
    "judge_factor",
    "judge_range",
]

REPRODUCED = "reproduced"
IN_SHAPE = "reproduced in shape"
DIFFERS = "differs"
NOT_HERE = "not reproducible here"
#: The verdicts, best first (the report's summary counts them in this order).
VERDICTS = (REPRODUCED, IN_SHAPE, DIFFERS, NOT_HERE)

#: Where a value comes from, as the report labels it.
SOURCES = {
    "paper": "as published",
    "formula": "the paper's formula, evaluated",
    "model": "alpha-beta model (simulated schedule)",
    "smpi": "SimGrid SMPI on the paper's platform (simulated)",
    "measured": "measured on this machine",
}


@dataclass
class Value:
    """One labelled number (or short text) of a finding.

    Parameters
    ----------
    quantity : str
        What it is, e.g. ``"MPI_Gatherv / TUW_Gatherv, Spikes, b = 1"``.
    source : str
        A key of :data:`SOURCES`.
    value : float, str or None
        The value (None: not available).
    unit : str
        ``"x"`` for factors, ``"us"``, ``"rounds"``, ...
    where : str
        The setting: ``"p = 560, gatherv-ib36"``, ``"Table 1, min"``, ``"8 ranks on 2
        cores (oversubscribed)"``.
    """

    quantity: str
    source: str
    value: float | str | None
    unit: str = ""
    where: str = ""

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"unknown source {self.source!r}; valid: {', '.join(SOURCES)}")
        if isinstance(self.value, float) and math.isfinite(self.value):
            self.value = float(f"{self.value:.4g}")


@dataclass
class Finding:
    """What a claim's function found: the values, the verdict and its reason.

    ``figure`` (optional) is a JSON-able plot: ``{"title", "x_label", "y_label",
    "log_x", "log_y", "series": {name: {"x": [...], "y": [...], "source": key}}}``;
    ``html`` an optional HTML fragment (e.g. a guideline table); ``scale_note`` says how
    this scale differs from the paper's.
    """

    verdict: str
    reason: str
    values: list[Value] = field(default_factory=list)
    figure: dict | None = None
    html: str = ""
    scale_note: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; valid: {', '.join(VERDICTS)}")
        if not self.reason.strip():
            raise ValueError("a verdict needs its reason")

    def to_dict(self) -> dict:
        """JSON-able form (values as dicts)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Finding":
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        d["values"] = [Value(**v) for v in d.get("values", [])]
        return cls(**d)


@dataclass(frozen=True)
class Claim:
    """A claim of a paper: its id (a key of the data file's ``[claims]``) and its function.

    The function takes a :class:`tuwviz.reproduce.Context` and returns a :class:`Finding`.
    """

    paper: str
    id: str
    run: Callable = field(compare=False, repr=False)


def judge_factor(ours: float, paper: float, rel: float = 0.15) -> str:
    """A factor (a ratio of two times) against the paper's: within `rel` is reproduced,
    the same side of 1 is reproduced in shape, the other side differs.

    >>> judge_factor(2.1, 2.0), judge_factor(1.3, 2.0), judge_factor(1.9, 1.0, rel=0.2)
    ('reproduced', 'reproduced in shape', 'differs')
    """
    if not (ours == ours and paper == paper):
        return NOT_HERE
    if abs(ours / paper - 1) <= rel:
        return REPRODUCED
    if paper == 1 or (ours - 1) * (paper - 1) <= 0:
        return DIFFERS
    return IN_SHAPE


def judge_range(ours: float, low: float | None, high: float | None) -> str:
    """A value against the paper's range ``[low, high]`` (either end open with None):
    inside is reproduced, beyond 1 on the same side as the range is reproduced in shape,
    otherwise it differs.

    >>> judge_range(7, 5, 20), judge_range(3, 5, 20), judge_range(0.5, 5, 20)
    ('reproduced', 'reproduced in shape', 'differs')
    """
    if ours != ours:
        return NOT_HERE
    if (low is None or ours >= low) and (high is None or ours <= high):
        return REPRODUCED
    side = low if low is not None else high
    if (ours - 1) * (side - 1) > 0:
        return IN_SHAPE
    return DIFFERS
