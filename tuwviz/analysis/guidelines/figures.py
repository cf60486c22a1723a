"""Guideline figures and offline pages.

:func:`guideline_figure` plots measured times against a guideline's bound (Bokeh, one
panel per p and distribution, violations beyond the run's noise circled), and :func:`save_page` writes tables
(:class:`~tuwviz.analysis.guidelines.GuidelineTable`) and a figure to one HTML page with BokehJS
inline, so it opens without network access.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as tmp:
...     page = save_page(Path(tmp) / "guidelines.html", title="no results yet")
...     "<h1>no results yet</h1>" in page.read_text(encoding="utf-8")
True
"""
from __future__ import annotations

import html as _html
import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ...run.metadata import measured_where
from .data import Guideline, algorithm_title, problem_title
from .evaluate import evaluate
from .load import load_results
from .rows import _DIST_ORDER, _select
from .tables import GuidelineTable
from ...errors import OutputPathError

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd
    from bokeh.model import Model

__all__ = ["guideline_figure", "save_page"]


def guideline_figure(
    results: "pd.DataFrame | str | os.PathLike",
    guideline: str | Guideline = "gatherv-2",
    stats: Iterable[str] = ("avg", "min"),
    algorithms: Iterable[str] | None = None,
    x: str = "m",
    noise: bool = True,
) -> "Model":
    """Measured times against a guideline's bound, log-log, one panel per p and distribution.

    For every algorithm under test the side containing it is drawn as measured (solid for
    ``avg``, dashed for ``min``); the other side, the bound, in black.  Violations are
    circled in red: those beyond the run's noise, as the tables mark them (see
    :func:`evaluate`), or every one with ``noise=False``.  Each panel has a caption saying where it was measured (ranks,
    oversubscription, heavy yield, backend).

    Parameters
    ----------
    results : DataFrame or path
        Bench rows with the guideline's companion operations.
    guideline : str or Guideline
    stats : iterable of str
    algorithms : iterable of str, optional
    x : str
        ``"m"`` (total elements) or ``"m_prime"`` or ``"b"``.
    noise : bool
        Circle only violations beyond the run's noise (default), or all.

    Returns
    -------
    bokeh layout
        A column of figures, one per p and distribution; each series' ``ColumnDataSource`` is named (``"MPI_Gatherv avg"``,
        ``"bound min"``, ``"violations"``) and tagged ``"series"``.
    """
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, HoverTool, Legend, Title
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    df = load_results(results)
    (g,) = _select([guideline], df)
    stats = list(stats)
    ev = evaluate(df, [g], stats=stats, algorithms=algorithms)
    if ev.empty:
        raise ValueError(f"{g.name} applies to none of the problems in the results")
    if x not in ("m", "m_prime", "b"):
        raise ValueError(f"x must be m, m_prime or b, got {x!r}")
    measured_side = g.subject_side
    bound_side = "rhs" if measured_side == "lhs" else "lhs"
    coll = g.subject.collective
    algs = list(dict.fromkeys(ev["algorithm"]))
    figs = []
    panels = sorted(set(zip(ev["p"], ev["distribution"])),
                    key=lambda k: (k[0], _DIST_ORDER.index(k[1]) if k[1] in _DIST_ORDER else 99))
    for p, dist in panels:
        part = ev[(ev["p"] == p) & (ev["distribution"] == dist)]
        part = part.sort_values([x, "b"], kind="stable")
        positive = bool((part[x] > 0).all())
        fig = figure(title=f"{problem_title(dist)}, p={p}: {g.name}, {g.statement}",
                     width=820, height=400, x_axis_type="log" if positive else "linear",
                     y_axis_type="log", x_axis_label={"m": "m (elements)",
                                                      "m_prime": "m' (elements)",
                                                      "b": "b (elements)"}[x],
                     y_axis_label="time per call (µs)", tools="pan,wheel_zoom,box_zoom,reset,save")
        fig.add_layout(Legend(location="top_left", click_policy="hide",
                              label_text_font_size="8pt"), "right")
        colors = iter(Category10_10)
        renderers = []
        for alg in algs:
            color = next(colors)
            for s in stats:
                rows = part[(part["algorithm"] == alg) & (part["stat"] == s)]
                if rows.empty:
                    continue
                name = f"{algorithm_title(coll, alg)} {s}"
                src = ColumnDataSource(_source(rows, x, measured_side), name=name, tags=["series"])
                dash = "solid" if s != "min" else "dashed"
                fig.line("x", "time", source=src, color=color, line_width=2, line_dash=dash,
                         legend_label=name)
                renderers.append(fig.scatter("x", "time", source=src, color=color, size=7,
                                             marker="circle" if s != "min" else "square",
                                             legend_label=name))
        for s in stats:
            rows = part[part["stat"] == s].drop_duplicates(["p", "root", "b", "m", "m_prime"])
            if rows.empty:
                continue
            name = f"bound {s}"
            src = ColumnDataSource(_source(rows, x, bound_side), name=name, tags=["series"])
            label = f"{' + '.join(op.describe() for op in getattr(g, bound_side))} {s}"
            fig.line("x", "time", source=src, color="black", line_width=2,
                     line_dash="solid" if s != "min" else "dashed", legend_label=label)
            renderers.append(fig.scatter("x", "time", source=src, color="black", size=6,
                                         marker="triangle", legend_label=label))
        bad = part[part["beyond_noise" if noise else "violated"]]
        if not bad.empty:
            src = ColumnDataSource(_source(bad, x, measured_side), name="violations",
                                   tags=["series"])
            renderers.append(fig.scatter("x", "time", source=src, size=16, fill_alpha=0,
                                         line_color="#d00000", line_width=2,
                                         legend_label="violation"))
        fig.add_tools(HoverTool(renderers=renderers, tooltips=[
            ("", "@series"), ("stat", "@stat"), ("m", "@m"), ("m'", "@m_prime"), ("b", "@b"),
            ("time µs", "@time{0.00}"), ("lhs µs", "@lhs{0.00}"), ("rhs µs", "@rhs{0.00}"),
            ("factor lhs/rhs", "@factor{0.000}"), ("noise µs", "@noise{0.00}"),
            ("violated", "@violated"), ("beyond noise", "@beyond_noise"),
        ]))
        fig.add_layout(Title(text=measured_where(df[df["p"] == p]), name="measured_where", text_font_size="9pt",
                             text_font_style="italic", text_color="#444444"), "below")
        figs.append(fig)
    return column(*figs)


def _source(rows: "pd.DataFrame", x: str, side: str) -> dict:
    return {
        "x": rows[x].tolist(), "time": rows[side].tolist(), "m": rows["m"].tolist(),
        "m_prime": rows["m_prime"].tolist(), "b": rows["b"].tolist(),
        "stat": rows["stat"].tolist(), "lhs": rows["lhs"].tolist(), "rhs": rows["rhs"].tolist(),
        "factor": rows["factor"].tolist(), "violated": [bool(v) for v in rows["violated"]],
        "noise": rows["noise"].tolist(),
        "beyond_noise": [bool(v) for v in rows["beyond_noise"]],
        "algorithm": rows["algorithm"].tolist(),
        "series": [f"{a} {s}" for a, s in zip(rows["algorithm"], rows["stat"])],
    }


def save_page(path: str | os.PathLike,
              table: "GuidelineTable | Iterable[GuidelineTable] | None" = None,
              figure: "Model | None" = None, title: str = "tuwviz guidelines") -> Path:
    """Write an offline HTML page: the table(s) (real HTML), then the figure (BokehJS inline).

    Parameters
    ----------
    path : path
        File to write; parent directories are created.
    table : GuidelineTable or list of them, optional
    figure : bokeh Model, optional
        E.g. :func:`guideline_figure`.
    title : str
        The page's ``<title>``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    OutputPathError
        A ValueError naming the path and the reason if it cannot be written.
    """
    esc = _html.escape
    tables = [] if table is None else [table] if isinstance(table, GuidelineTable) else list(table)
    head, body = "", ""
    if figure is not None:
        from bokeh.embed import components
        from bokeh.resources import INLINE

        script, div = components(figure)
        head = INLINE.render() + script
        body = div
    html = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{esc(title)}</title>\n{head}\n</head>\n<body style=\"font-family:sans-serif\">\n"
            f"<h1>{esc(title)}</h1>\n{chr(10).join(t.to_html() for t in tables)}\n{body}\n"
            "</body>\n</html>\n")
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return path
