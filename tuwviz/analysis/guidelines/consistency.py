"""The circulant paper's consistency study: Guidelines (2)-(6) per implementation, Figures 6-7.

Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
collectives for MPI", Section IV-C, check whether the reductions of one implementation
family perform consistently with each other: the library's (``native``) against the
library's, the circulant ones against the circulant ones.  The rows come from one run of
``tuwviz bench --study circulant`` (:mod:`tuwviz.experiments.study`).

* :func:`consistency_table` evaluates the guidelines ``circulant-*`` of
  :data:`~tuwviz.analysis.guidelines.GUIDELINES` with the median, as the paper reports, and lists
  for every guideline, family and vector size both sides, their ratio and the verdict
  (violations only beyond the run's noise, as :func:`~tuwviz.analysis.guidelines.evaluate` says).
* :func:`figure7` draws every operation's median relative to the Guideline (4) baseline,
  the Allreduce made of a Reduce_scatter and an Allgatherv, measured as one operation
  (``allreduce/combined_native`` for the library, ``allreduce/combined`` for the circulant
  family), one panel per family.
* :func:`figure6` draws absolute Reduce_scatter_block times, library against circulant.

The vector's length ``m`` is what the paper's figures use on the x-axis for Allreduce and
Reduce (the count) and what a Reduce_scatter's blocks add up to; :func:`vector_length`.

Examples
--------
>>> vector_length("allreduce", b=64, m=256), vector_length("reduce_scatter_block", b=16, m=64)
(64, 64)
>>> FAMILIES["library"].baseline, FAMILIES["circulant"].baseline
('combined_native', 'combined')
"""
from __future__ import annotations

import html as _html
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .data import GUIDELINES, PAPERS, algorithm_title
from .evaluate import evaluate
from .load import load_results
from .tables import HTML_TABLE_STYLE, breakable
from ...report import text_table

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd
    from bokeh.model import Model

__all__ = ["CONSISTENCY_GUIDELINES", "FAMILIES", "ConsistencyTable", "Family",
           "consistency_table", "figure6", "figure7", "figure7_data", "vector_length"]

#: The circulant paper's guidelines, in its order.
CONSISTENCY_GUIDELINES = [k for k in GUIDELINES if k.startswith("circulant-")]


@dataclass(frozen=True)
class Family:
    """An implementation family: the algorithm name its operations share, and the
    Allreduce measured as Reduce_scatter + Allgatherv that Figure 7 divides by."""

    name: str
    algorithm: str
    baseline: str


#: The two panels of Figure 7.
FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("library", "native", "combined_native"),
    Family("circulant", "circulant", "combined"),
)}

#: Figure 7's lines: (collective, distribution, label).
_LINES = [("allreduce", "same", "Allreduce"), ("reduce", "same", "Reduce"),
          ("reduce_scatter_block", "same", "Reduce_scatter_block"),
          ("reduce_scatter", "same", "Reduce_scatter"),
          ("reduce_scatter", "broadcast", "Reduce_scatter, all in root's block (6)")]


def vector_length(collective: str, b: int, m: int) -> int:
    """Elements of the vector reduced: an Allreduce's or Reduce's count ``b``, or the sum
    ``m`` of a Reduce_scatter's blocks."""
    return int(b) if collective in ("allreduce", "reduce") else int(m)


def _family_of(algorithm: str) -> str:
    for f in FAMILIES.values():
        if f.algorithm == algorithm:
            return f.name
    return algorithm


@dataclass(repr=False)
class ConsistencyTable:
    """Guidelines (2)-(6) per family and vector size; see :func:`consistency_table`.

    Attributes
    ----------
    rows : list of dict
        guideline, number, statement, family, p, m (vector elements), lhs and rhs (µs),
        factor (lhs/rhs), noise (µs), verdict (``violated``, ``within noise``, ``holds``),
        lhs_terms, rhs_terms.
    caption : str
        Where it was measured.
    """

    rows: list[dict]
    caption: str
    evaluation: "pd.DataFrame" = field(repr=False, default=None)

    @property
    def violations(self) -> list[dict]:
        """Rows whose left side exceeds the right beyond the run's noise."""
        return [r for r in self.rows if r["verdict"] == "violated"]

    def summary(self) -> list[str]:
        """One line per guideline and family that is violated, in numbers."""
        out = []
        seen: dict[tuple, list[dict]] = {}
        for r in self.rows:
            seen.setdefault((r["guideline"], r["family"]), []).append(r)
        for (key, fam), rows in seen.items():
            bad = [r for r in rows if r["verdict"] == "violated"]
            if bad:
                worst = max(bad, key=lambda r: r["factor"])
                out.append(f"{fam}: Guideline {rows[0]['number']} {rows[0]['statement']} is "
                           f"violated at {len(bad)} of {len(rows)} sizes (p = "
                           f"{', '.join(sorted({str(r['p']) for r in bad}))}; worst "
                           f"{worst['factor']:.2f}x at m = {worst['m']})")
        return out or ["no guideline is violated beyond the run's noise"]

    def to_text(self) -> str:
        out = [self.caption]
        cols = ["family", "p", "m", "lhs", "rhs", "factor", "verdict"]
        for key in dict.fromkeys(r["guideline"] for r in self.rows):
            rows = [r for r in self.rows if r["guideline"] == key]
            out += ["", f"Guideline {rows[0]['number']}: {rows[0]['statement']}"
                        f"  (lhs, rhs in µs; m in elements)",
                    text_table([{c: (f"{r[c]:.2f}" if c in ("lhs", "rhs", "factor") else r[c])
                                 for c in cols} for r in rows])]
        return "\n".join([*out, "", *self.summary()])

    __str__ = __repr__ = to_text

    def to_html(self) -> str:
        esc = _html.escape
        head = "".join(f"<th style=\"padding:1px 4px\">{esc(h)}</th>" for h in
                       ("Guideline", "statement", "family", "p", "m", "lhs µs", "rhs µs",
                        "lhs/rhs", "verdict", "right side"))
        body = []
        for r in self.rows:
            style = ' style="color:#c00;font-weight:bold"' if r["verdict"] == "violated" else ""
            body.append(
                f"<tr{style}><td>{esc(r['number'])}</td><td>{breakable(r['statement'])}</td>"
                f"<td>{esc(r['family'])}</td><td>{r['p']}</td><td>{r['m']}</td>"
                f"<td>{r['lhs']:.2f}</td><td>{r['rhs']:.2f}</td><td>{r['factor']:.2f}</td>"
                f"<td>{esc(r['verdict'])}</td><td>{breakable(r['rhs_terms'])}</td></tr>")
        items = "".join(f"<li>{esc(s)}</li>" for s in self.summary())
        return (f"<table class=\"tuwviz-consistency\" style=\"{HTML_TABLE_STYLE}\">"
                f"<caption>{esc(self.caption)}</caption>"
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
                f"<ul>{items}</ul>")

    def _repr_html_(self) -> str:
        return self.to_html()


def _caption(df: "pd.DataFrame") -> str:
    first = df.iloc[0]
    over = "oversubscribed" if str(first["oversubscribed"]).lower() in ("true", "1") \
        else "not oversubscribed"
    ps = ", ".join(str(p) for p in sorted(set(df["p"])))
    return (f"{PAPERS['circulant']}: Guidelines (2)-(6), median of each operation, "
            f"{first['mpi_library']}, p = {ps}, {over}, heavy-yield="
            f"{first['heavy_yield'] or 'unset'}; red/'violated' = left side above the right "
            f"by more than the run's noise (median - min)")


def consistency_table(results: "pd.DataFrame | str | os.PathLike",
                      noise: bool = True) -> ConsistencyTable:
    """Evaluate Guidelines (2)-(6) on a study's rows for both families (median times).

    Parameters
    ----------
    results : DataFrame or path
        Rows of ``tuwviz bench --study circulant`` (or any rows with the operations).
    noise : bool
        Call a difference a violation only beyond the run's noise (default); with False
        every excess counts, as the paper's reading.

    Raises
    ------
    ValueError
        If the rows have no operation a consistency guideline tests.
    """
    df = load_results(results)
    present = [k for k in CONSISTENCY_GUIDELINES
               if (df["collective"] == GUIDELINES[k].subject.collective).any()]
    if not present:
        raise ValueError("no rows of Reduce_scatter(_block), Allreduce or Reduce: measure "
                         "them with 'tuwviz bench --study circulant --out FILE.csv'")
    algorithms = [f.algorithm for f in FAMILIES.values()
                  if (df["algorithm"] == f.algorithm).any()]
    ev = evaluate(df, present, stats=["median"], algorithms=None, missing="skip")
    ev = ev[ev["algorithm"].isin(algorithms)]
    if ev.empty:
        raise ValueError(
            f"no consistency guideline applies to these rows (they have "
            f"{', '.join(sorted(set(df['collective'])))}): Guidelines (2)-(6) compare "
            f"Reduce_scatter(_block), Allreduce and Reduce of the library's or the circulant "
            f"family with their companions, on vectors that p divides; measure them with "
            f"'tuwviz bench --study circulant --out FILE.csv'")
    rows = []
    for r in ev.itertuples():
        bad = r.beyond_noise if noise else r.violated
        rows.append({"guideline": r.guideline, "number": r.number, "statement": r.statement,
                     "family": _family_of(r.algorithm), "p": int(r.p),
                     "m": vector_length(r.collective, r.b, r.m), "lhs": float(r.lhs),
                     "rhs": float(r.rhs), "factor": float(r.factor), "noise": float(r.noise),
                     "verdict": "violated" if bad else ("within noise" if r.violated
                                                        else "holds"),
                     "lhs_terms": r.lhs_terms, "rhs_terms": r.rhs_terms})
    order = {k: i for i, k in enumerate(CONSISTENCY_GUIDELINES)}
    rows.sort(key=lambda r: (order[r["guideline"]], r["family"] != "library", r["p"], r["m"]))
    return ConsistencyTable(rows, _caption(df), ev)


def figure7_data(results: "pd.DataFrame | str | os.PathLike") -> "pd.DataFrame":
    """Figure 7's points: family, p, line, m (vector elements), median (µs), baseline (µs)
    and ratio = median / baseline, for every operation measured with the family's
    algorithm on a vector size where the baseline was measured too."""
    import pandas as pd

    df = load_results(results)
    out = []
    for fam in FAMILIES.values():
        base = df[(df["collective"] == "allreduce") & (df["algorithm"] == fam.baseline)]
        base_at = {(int(r.p), int(r.b)): float(r.median_us) for r in base.itertuples()}
        for coll, dist, label in _LINES:
            sel = df[(df["collective"] == coll) & (df["algorithm"] == fam.algorithm)
                     & (df["distribution"] == dist)]
            for r in sel.itertuples():
                m = vector_length(coll, r.b, r.m)
                b0 = base_at.get((int(r.p), m))
                if b0:
                    out.append({"family": fam.name, "p": int(r.p), "line": label, "m": m,
                                "median_us": float(r.median_us), "baseline_us": b0,
                                "ratio": float(r.median_us) / b0})
    return pd.DataFrame(out, columns=["family", "p", "line", "m", "median_us", "baseline_us",
                                      "ratio"])


_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]


def figure7(results: "pd.DataFrame | str | os.PathLike", width: int = 460) -> "Model":
    """Figure 7: each operation's median relative to the family's Reduce_scatter +
    Allgatherv Allreduce (dashed line at 1), over the vector size; one panel per family
    and p (library, then circulant)."""
    from bokeh.layouts import column, row
    from bokeh.models import ColumnDataSource, HoverTool, Span
    from bokeh.plotting import figure

    df = load_results(results)
    data = figure7_data(df)
    if data.empty:
        raise ValueError("no Figure 7 points: the rows need allreduce/combined_native or "
                         "allreduce/combined at the same vector sizes as the operations "
                         "('tuwviz bench --study circulant')")
    caption = _caption(df)
    rows = []
    for p in sorted(set(data["p"])):
        panels = []
        for fam in FAMILIES:
            d = data[(data["family"] == fam) & (data["p"] == p)]
            base = FAMILIES[fam].baseline
            lo = min([1.0, *d["ratio"]]) if len(d) else 1.0  # the line at 1 always shows
            hi = max([1.0, *d["ratio"]]) if len(d) else 1.0
            f = figure(width=width, height=420, x_axis_type="log", sizing_mode="fixed",
                       y_range=(lo * 0.9, hi * 1.1),
                       title=f"{fam} (p = {p}): median / {algorithm_title('allreduce', base)}",
                       x_axis_label="m (vector elements)", y_axis_label="relative time")
            f.add_layout(Span(location=1.0, dimension="width", line_dash="dashed",
                              line_color="black"))
            for i, (_, _, label) in enumerate(_LINES):
                pts = d[d["line"] == label].sort_values("m")
                if pts.empty:
                    continue
                src = ColumnDataSource(pts)
                color = _COLORS[i % len(_COLORS)]
                f.line("m", "ratio", source=src, color=color, legend_label=label, line_width=2)
                f.scatter("m", "ratio", source=src, color=color, size=6, legend_label=label)
            f.add_tools(HoverTool(tooltips=[("", "@line"), ("m", "@m"),
                                            ("median", "@median_us{0.00} µs"),
                                            ("baseline", "@baseline_us{0.00} µs"),
                                            ("ratio", "@ratio{0.00}")]))
            f.legend.label_text_font_size = "8pt"
            f.add_layout(f.legend[0], "below")  # never over the lines
            panels.append(f)
        rows.append(row(*panels))
    from bokeh.models import Div
    return column(*rows, Div(text=f"<small>{_html.escape(caption)}</small>", width=2 * width))


def figure6(results: "pd.DataFrame | str | os.PathLike", width: int = 460) -> "Model":
    """Figure 6: absolute median times of Reduce_scatter_block, library ("lib") and
    circulant ("circ"), log-log over the block size each process receives."""
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.plotting import figure

    df = load_results(results)
    sel = df[(df["collective"] == "reduce_scatter_block")
             & df["algorithm"].isin(["native", "circulant"])]
    if sel.empty:
        raise ValueError("no reduce_scatter_block rows of native or circulant")
    f = figure(width=width, height=340, x_axis_type="log", y_axis_type="log",
               title="Reduce_scatter_block: lib vs circ", x_axis_label="block per process (b)",
               y_axis_label="median µs")
    for i, ((alg, p), d) in enumerate(sel.groupby(["algorithm", "p"])):
        d = d.sort_values("b")
        lab = f"{'lib' if alg == 'native' else 'circ'} p={p}"
        src = ColumnDataSource(d[["b", "median_us", "min_us"]])
        f.line("b", "median_us", source=src, legend_label=lab, line_width=2,
               color=_COLORS[i % len(_COLORS)])
        f.scatter("b", "median_us", source=src, legend_label=lab, size=6,
                  color=_COLORS[i % len(_COLORS)])
    f.add_tools(HoverTool(tooltips=[("b", "@b"), ("median", "@median_us{0.00} µs")]))
    f.legend.location = "top_left"
    return f
