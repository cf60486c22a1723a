"""Claims, findings and verdicts: what a paper says, what we get, and whether they agree.

A paper's *claim* is one table, figure or headline sentence; its text, source and
published numbers are in the paper's data file (:mod:`tuwviz.reproduce.published`).  A
claim's function computes a :class:`Finding`: values from each source that can speak to it
(the paper, a closed formula, the model, SimGrid's SMPI on the paper's platform, a run on
this machine), each labelled, and one verdict with its reason in a sentence.

A claim is checked in two steps kept apart: its ``measure_<id>`` function runs what can
speak to it (formula, model, SMPI, this machine) and returns *evidence*, a JSON-able dict
of numbers; its ``judge_<id>`` function turns evidence and the paper's data entry into the
finding.  Judges run nothing, so a test can hand one the evidence it would get if the paper
were wrong and see the verdict change (``tests/reproduce/test_can_fail.py``).  A claim that
nothing here can answer by construction has one ``claim_<id>`` function instead, returning
"not reproducible here" with the reason.

Verdicts
--------
The verdicts and what they mean are :data:`MEANINGS` (the report prints them).  What
"shape" means for a claim, and its tolerances, are in the claim's ``[claims.ID.judge]``
table of the data file, each with a sentence of why.

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
    "DERIVED",
    "DIFFERS",
    "IN_SHAPE",
    "MEANINGS",
    "NOT_HERE",
    "REPRODUCED",
    "SOURCES",
    "VERDICTS",
    "Claim",
    "Finding",
    "Value",
    "judge_factor",
    "judge_range",
    "rule",
]

REPRODUCED = "reproduced"
IN_SHAPE = "reproduced in shape"
DIFFERS = "differs"
NOT_HERE = "not reproducible here"
DERIVED = "derivation checked"
#: The verdicts (the report's summary counts them in this order; derivations apart).
VERDICTS = (REPRODUCED, IN_SHAPE, DIFFERS, NOT_HERE, DERIVED)

#: What each verdict means, once (the report page prints these).
MEANINGS = {
    REPRODUCED: "a source here that could have disagreed (the model's schedules, SMPI, a run "
                "on this machine, a listing's code) agrees with the paper's number within "
                "the tolerance the claim's data states, or every part of the stated "
                "ordering, trend or bound holds",
    IN_SHAPE: "the claim's shape, as its data names it (an ordering, a trend, a crossing, a "
              "minimum factor), holds, but the magnitude is outside the tolerance",
    DIFFERS: "our numbers contradict the claim (its magnitude and its shape); the reason "
             "says where",
    NOT_HERE: "no source here can answer the claim; the reason says what is missing",
    DERIVED: "the statement follows from the paper's own formulas, from inputs inferred "
             "from its results, or from the model's own algebra under a stated assumption, "
             "and evaluating them gives the paper's numbers or shape: this checks the "
             "arithmetic, not the claim, so it is counted apart",
}

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
    "log_x", "log_y", "series": {name: {"x": [...], "y": [...], "source": key}}}`` (a
    series with ``"line": False`` is drawn as markers: values a paper states);
    ``html`` an optional HTML fragment (e.g. a guideline table); ``scale_note`` says how
    this scale differs from the paper's.
    """

    verdict: str
    reason: str
    values: list[Value] = field(default_factory=list)
    figure: dict | None = None
    html: str = ""
    scale_note: str = ""
    #: The verdict again with the platform's assumed latencies and per-message overhead
    #: times a factor ("0.5", "2"), its bandwidths unchanged; empty when the claim reads no
    #: platform or was not varied.
    varied: dict = field(default_factory=dict)

    @property
    def survives(self) -> bool | None:
        """Whether every varied verdict is this one (None when not varied)."""
        return all(v == self.verdict for v in self.varied.values()) if self.varied else None

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
    """A claim of a paper: its id (a key of the data file's ``[claims]``), its ``measure``
    (a :class:`tuwviz.reproduce.Context` to evidence, a JSON-able dict) and its ``judge``
    (evidence and the claim's data entry to a :class:`Finding`).

    A claim with one ``claim_<id>`` function (nothing here can answer it) has ``judge`` None
    and that function as ``measure``; it returns the finding itself.
    """

    paper: str
    id: str
    measure: Callable = field(compare=False, repr=False)
    judge: Callable | None = field(default=None, compare=False, repr=False)

    def run(self, ctx) -> tuple[Finding, dict | None]:
        """The finding, and the evidence it was judged on (None for a one-function claim)."""
        if self.judge is None:
            return self.measure(ctx), None
        evidence = self.measure(ctx)
        return self.judge(evidence, ctx.claim(self.id)), evidence


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


def rule(entry: dict, name: str):
    """A tolerance, threshold or size from the claim's ``[claims.ID.judge]`` table (each
    stated there with a sentence of why).

    >>> rule({"judge": {"rel": 0.05, "why": "..."}}, "rel")
    0.05

    Raises
    ------
    KeyError
        Naming the claim and the missing key.
    """
    try:
        return entry["judge"][name]
    except KeyError:
        raise KeyError(f"claim {entry.get('title', '?')!r}: its data has no judge.{name}") from None
