"""Bokeh figures of benchmark results, shown and saved without any network access.

The figures take the DataFrames of :func:`tuwviz.experiments.bench.bench` (columns
:data:`tuwviz.experiments.bench.ROW_FIELDS`, or the same columns read back from a results CSV) and
draw one series per algorithm.  Every figure carries a caption saying where its numbers
were measured (ranks, oversubscription, MPICH heavy-yield mode, backend), taken from the
metadata columns of the rows themselves.

BokehJS is always embedded (``bokeh.resources.INLINE``): machines running tuwviz are
often offline, and Bokeh's default CDN resources then leave plots blank.  Use
:func:`show` in notebooks (BokehJS loaded once per kernel, figures drawn once their
output is in the page) and :func:`save_html` for standalone pages; never
``bokeh.io.output_notebook()``, which embeds the library twice.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({
...     "algorithm": ["native", "linear"], "p": 2, "b": 1, "m": 2,
...     "min_us": [1.0, 2.0], "median_us": [1.5, 2.5], "mean_us": [1.6, 2.6],
...     "max_us": [2.0, 3.0], "ratio_to_native": [1.0, 2.5 / 1.5],
...     "ranks": 2, "oversubscribed": False, "heavy_yield": "0", "backend": "mpiexec"})
>>> fig = bench_figure(df)
>>> sorted(s.name for s in series_sources(fig))
['linear', 'native']
>>> measured_where(df)
'measured on 2 ranks, not oversubscribed, MPICH heavy yield off, backend mpiexec'
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

# the caption of measured rows: where they were measured (kept importable from here)
from ..run.metadata import META_COLUMNS, measured_where
from ..report import size_label
from ..analysis.performance import latex_rows
from ._common import NOTEBOOK_WIDTH

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd
    from bokeh.model import Model
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure as Figure

    from ..analysis.performance import Performance

__all__ = [
    "HOVER_COLUMNS",
    "META_COLUMNS",
    "NOTEBOOK_COMPONENTS",
    "bench_figure",
    "measured_where",
    "notebook_html",
    "param_value",
    "performance_layout",
    "save_performance",
    "ratio_box_figure",
    "ratio_figure",
    "save_html",
    "series_sources",
    "show",
    "time_vs_block_figure",
    "time_vs_count_figure",
    "use_inline",
]

#: Columns shown when hovering over a measurement.
HOVER_COLUMNS = ["algorithm", "p", "b", "m", "min_us", "median_us", "mean_us", "max_us",
                 "ratio_to_native"]

#: Columns that, when they take several values in one DataFrame, split series further
#: (e.g. one line per algorithm *and* distribution, or model next to measured rows).
_SPLIT_COLUMNS = ["collective", "p", "root", "distribution", "datatype", "source"]

_NUMERIC = ["p", "b", "m", "m_prime", "min_us", "median_us", "mean_us", "max_us",
            "ratio_to_native", "ranks", "time_us", "block_bytes", "alpha", "beta"]

# Hover lines (label, column, format) of a series marker, shown for the columns it has.
_HOVER_LINES = [("algorithm", "algorithm", ""), ("params", "params", ""), ("p", "p", ""),
                ("b", "b", ""), ("m", "m", ""), ("block bytes", "block_bytes", ""),
                ("min µs", "min_us", "{0.000}"), ("median µs", "median_us", "{0.000}"),
                ("mean µs", "mean_us", "{0.000}"), ("max µs", "max_us", "{0.000}"),
                ("ratio to native", "ratio_to_native", "{0.000}"),
                ("time µs", "time_us", "{0.000}"), ("source", "source", "")]

# Horizontal reference lines of time_vs_block_figure: algorithms without blocks.
_REFERENCES = {"ring": ("#222222", "dashed"), "native": ("#8c8c8c", "dotdash")}

#: BokehJS components loaded into notebooks: the core and the widgets (sliders, buttons of
#: the animations).  WebGL, data tables and MathJax (together ~2.3 MB inline) are left out:
#: no tuwviz figure uses them, and a saved notebook carries whatever is loaded.
NOTEBOOK_COMPONENTS = ["bokeh", "bokeh-widgets"]

_inline_loaded = False


def use_inline(force: bool = False) -> None:
    """Load BokehJS into the notebook page from the kernel, never from a CDN.

    The library (core and widgets, about 1.7 MB) goes into this cell's output once per
    kernel, as one ``application/javascript`` output (Bokeh's own
    ``output_notebook`` writes it twice, under two MIME types, about 8 MB with every
    component).  :func:`show` calls it, so calling it yourself only chooses the cell
    that carries the library.  Call it again with ``force=True`` after reloading the
    browser page with cleared outputs.

    Parameters
    ----------
    force : bool
        Load BokehJS again even if this kernel already did.
    """
    global _inline_loaded
    if _inline_loaded and not force:
        return
    from bokeh.embed.bundle import bundle_for_objs_and_resources
    from bokeh.io.notebook import _loading_js
    from bokeh.resources import Resources
    from IPython.display import publish_display_data

    resources = Resources(mode="inline", components=NOTEBOOK_COMPONENTS)
    bundle = bundle_for_objs_and_resources(None, resources)
    publish_display_data({"application/javascript":
                          _loading_js(bundle, None, 5000, register_mime=False)})
    _inline_loaded = True


def show(obj: "Model") -> None:
    """Show a Bokeh figure or layout in the notebook, BokehJS embedded (see :func:`use_inline`).

    The figure is drawn once its place is in the page: inside an ipywidgets ``Output``
    (the schedule explorer) that happens only after the cell's output is attached, where
    Bokeh's own ``show`` looks too early and draws nothing.

    Parameters
    ----------
    obj : bokeh Model
        A figure or layout, e.g. from :func:`bench_figure`.
    """
    from IPython.display import publish_display_data

    use_inline()
    publish_display_data({"text/html": notebook_html(obj), "text/plain": f"<{type(obj).__name__}>"})


def notebook_html(obj: "Model") -> str:
    """`obj` as a ``<div>`` and a script that draws it once the div is in the page.

    Examples
    --------
    >>> from bokeh.plotting import figure
    >>> html = notebook_html(figure(width=100, height=100))
    >>> html.startswith("<div id=") and "isConnected" in html
    True
    """
    import re

    from bokeh.embed import components

    code, div = components(obj, wrap_script=False)
    element_id = re.search(r'id="([^"]+)"', div).group(1)
    # JupyterLab attaches a cell's output to the page only when it is near the view (and an
    # ipywidgets Output only once the widget is shown): wait for that, however long the
    # reader takes to scroll there, checking less often as time goes by.
    return (f"{div}\n<script type=\"text/javascript\">\n"
            f"(function () {{\n"
            f"  var id = {element_id!r}, delay = 50, waited = 0, told = false;\n"
            f"  function draw() {{\n"
            f"    var el = document.getElementById(id);\n"
            f"    if (el !== null && el.isConnected && window.Bokeh !== undefined) {{\n{code}\n"
            f"      return;\n"
            f"    }}\n"
            f"    if (el !== null && el.isConnected && (waited += delay) > 10000 && !told) {{\n"
            f"      told = true;\n"
            f"      el.textContent = 'BokehJS is not loaded in this page: run '\n"
            f"        + 'tuwviz.viz.plots.use_inline(force=True), then this cell again.';\n"
            f"    }}\n"
            f"    delay = Math.min(delay * 1.2, 1000);\n"
            f"    setTimeout(draw, delay);\n"
            f"  }}\n"
            f"  draw();\n"
            f"}})();\n</script>")


def save_html(obj: "Model", path: str | os.PathLike, title: str = "tuwviz") -> Path:
    """Write `obj` to a standalone HTML page with BokehJS inline (no CDN, works offline).

    Parameters
    ----------
    obj : bokeh Model
        A figure or layout.
    path : path
        File to write; missing parent directories are created.
    title : str
        The page's ``<title>``.

    Returns
    -------
    pathlib.Path
        `path`.
    """
    from bokeh.embed import file_html
    from bokeh.resources import INLINE

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(file_html(obj, resources=INLINE, title=title), encoding="utf-8")
    return path


def bench_figure(df: "pd.DataFrame", x: str = "b", y: str = "median_us",
                 title: str | None = None) -> "Figure":
    """Measured time against block size, one line with markers per algorithm.

    Axes are logarithmic when all values are positive (``b = 0`` rows make the x axis
    linear).  Hovering over a marker shows algorithm, p, b, m, min/median/mean/max µs and
    the ratio to ``native``.  A caption below the plot says where it was measured
    (:func:`measured_where`).

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of :func:`tuwviz.experiments.bench.bench` or a results CSV read with pandas.
    x, y : str
        Columns for the axes.
    title : str, optional
        Figure title (default: the collective, distribution and p of the rows).

    Returns
    -------
    bokeh.plotting.figure
        Each series' ``ColumnDataSource`` is named after its series (the algorithm, plus
        p or distribution when those vary); see :func:`series_sources`.

    Raises
    ------
    ValueError
        If `df` is empty or lacks a needed column.
    """
    needed = list(dict.fromkeys([x, y, *HOVER_COLUMNS, *META_COLUMNS]))
    df = _prepared(df, needed, "bench_figure")
    fig = _figure(df, x, y, title or _default_title(df, "time"),
                  x_label=_axis_label(x), y_label=_axis_label(y))
    _draw_series(fig, df, x, y)
    _add_hover(fig)
    _add_caption(fig, df)
    return fig


def ratio_figure(df: "pd.DataFrame", x: str = "b", title: str | None = None) -> "Figure":
    """Median time of each algorithm relative to ``native`` (the MPI library), per `x`.

    Uses the rows' ``ratio_to_native`` (median / native's median on the same problem, as
    :func:`tuwviz.experiments.bench.bench` computes it); a dashed line marks 1, below it an algorithm
    beats the library.  ``native`` itself is not drawn.

    Parameters
    ----------
    df : pandas.DataFrame
        Benchmark rows including ``native`` measurements.
    x : str
        Column for the x axis.
    title : str, optional
        Figure title.

    Returns
    -------
    bokeh.plotting.figure

    Raises
    ------
    ValueError
        If `df` is empty, lacks a needed column, or has no ratio to native (``native``
        was not measured) for any algorithm other than ``native``.
    """
    from bokeh.models import Range1d, Span

    needed = list(dict.fromkeys([x, *HOVER_COLUMNS, *META_COLUMNS]))
    df = _prepared(df, needed, "ratio_figure")
    df = df[(df["algorithm"] != "native") & df["ratio_to_native"].notna()]
    if df.empty:
        raise ValueError("ratio_figure: no ratio_to_native values for algorithms other than "
                         "native; benchmark 'native' alongside them")
    fig = _figure(df, x, "ratio_to_native", title or _default_title(df, "time relative to native"),
                  x_label=_axis_label(x), y_label="median time / native median", y_log=False)
    fig.add_layout(Span(location=1.0, dimension="width", line_dash="dashed",
                        line_color="black", line_width=1.5, name="native"))
    # the line at 1 stays in view, however far above or below it the ratios are
    low = min(1.0, float(df["ratio_to_native"].min()))
    high = max(1.0, float(df["ratio_to_native"].max()))
    pad = 0.06 * (high - low)
    fig.y_range = Range1d(max(0.0, low - pad), high + pad)
    _draw_series(fig, df, x, "ratio_to_native")
    _add_hover(fig)
    _add_caption(fig, df)
    return fig


def ratio_box_figure(samples: "pd.DataFrame", root: int, where: str = "",
                     title: str | None = None) -> "Figure":
    """Box plots of relative runtime (own time / library median) per block size.

    One box per block size: the middle half of the repetitions (quartiles), a line at the
    median, whiskers to the fastest and slowest repetition; a dashed line marks 1 (as
    fast as the library).  This is the course report's "relative runtime" (Figures 5-8).

    Parameters
    ----------
    samples : pandas.DataFrame
        :attr:`tuwviz.analysis.performance.Performance.samples`: ``algorithm, root, bytes,
        relative`` per repetition.
    root : int
        The root whose samples are drawn.
    where : str
        Caption: where it was measured (:func:`measured_where`).
    title : str, optional
        Figure title.

    Returns
    -------
    bokeh.plotting.figure
        Its ``ColumnDataSource`` named ``boxes`` has ``size, q1, median, q3, low, high``.

    Raises
    ------
    ValueError
        If there are no samples for `root`.
    """
    from bokeh.models import ColumnDataSource, FactorRange, Span, Title
    from bokeh.plotting import figure

    rows = samples[samples["root"] == root]
    if rows.empty:
        raise ValueError(f"ratio_box_figure: no samples for root {root}")
    stats = rows.groupby("bytes")["relative"].describe(percentiles=[0.25, 0.5, 0.75])
    sizes = [size_label(int(b)) for b in stats.index]
    src = ColumnDataSource({"size": sizes, "q1": stats["25%"].tolist(),
                            "median": stats["50%"].tolist(), "q3": stats["75%"].tolist(),
                            "low": stats["min"].tolist(), "high": stats["max"].tolist()},
                           name="boxes")
    names = "/".join(dict.fromkeys(rows["algorithm"]))
    fig = figure(x_range=FactorRange(*sizes), width=720, height=360,
                 title=title or f"{'/'.join(dict.fromkeys(rows['collective']))} {names}, "
                                f"root {root}: time relative to the library",
                 x_axis_label="block size per process", y_axis_label=f"{names} time / library median",
                 tools="pan,wheel_zoom,box_zoom,reset,save")
    fig.segment("size", "low", "size", "q1", source=src, color="black")
    fig.segment("size", "q3", "size", "high", source=src, color="black")
    fig.vbar("size", 0.6, "q3", "q1", source=src, fill_color="#9ecae1", line_color="black")
    fig.scatter("size", "median", source=src, marker="dash", size=36, line_color="black",
                line_width=2)
    fig.add_layout(Span(location=1.0, dimension="width", line_dash="dashed",
                        line_color="#d62728", line_width=1.5, name="library"))
    if where:
        fig.add_layout(Title(text=where, name="measured_where", text_font_size="9pt",
                             text_font_style="italic", text_color="#444444"), "below")
    return fig


def save_performance(perf: "Performance", directory: str | os.PathLike,
                     stem: str = "performance") -> list[Path]:
    """Write a :class:`~tuwviz.analysis.performance.Performance`: ``STEM.csv`` (rows),
    ``STEM_samples.csv``, ``STEM.tex`` (the report's table rows) and ``STEM.html``
    (:func:`performance_layout`, BokehJS inline, opens offline) to `directory`; return the
    four paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}{ext}" for ext in (".csv", "_samples.csv", ".tex", ".html")]
    perf.rows.drop(columns=["samples_us"], errors="ignore").to_csv(paths[0], index=False)
    perf.samples.to_csv(paths[1], index=False)
    paths[2].write_text(latex_rows(perf), encoding="utf-8")
    save_html(performance_layout(perf.rows, perf.samples), paths[3], title="tuwviz performance")
    return paths


def performance_layout(rows: "pd.DataFrame", samples: "pd.DataFrame") -> "Model":
    """Relative runtime box plots per root, then absolute medians against block size.

    The page :func:`save_performance` writes: what the course report
    shows for each root (relative runtime) and for all (absolute runtime).
    """
    from bokeh.layouts import column

    where = measured_where(rows)
    figs = [ratio_box_figure(samples, r, where) for r in dict.fromkeys(samples["root"])]
    absolute = bench_figure(rows, title="median time (absolute)")
    absolute.xaxis.axis_label = "block size per process (bytes)"
    return column(*figs, absolute)


def series_sources(fig: "Figure") -> list["ColumnDataSource"]:
    """The data sources of the series drawn by :func:`bench_figure` / :func:`ratio_figure`.

    Parameters
    ----------
    fig : bokeh.plotting.figure

    Returns
    -------
    list of ColumnDataSource
        One per series, named after it, in drawing order.
    """
    seen: dict[str, ColumnDataSource] = {}
    for r in fig.renderers:
        src = getattr(r, "data_source", None)
        if src is not None and "series" in src.tags:
            seen.setdefault(src.id, src)
    return list(seen.values())


def param_value(params_text, key: str) -> str | None:
    """The value of `key` in a ``params`` text of result rows, None if it is not set.

    Result rows carry an algorithm's tuning parameters as ``key=value`` words
    (:func:`tuwviz.params.label`), empty when the defaults were used.

    Parameters
    ----------
    params_text : str or None
        E.g. ``"block_bytes=1024 ring=smp"``; None, NaN (an empty CSV cell) or ``""``
        set nothing.
    key : str
        Parameter name.

    Returns
    -------
    str or None

    Examples
    --------
    >>> param_value("block_bytes=1024 ring=smp", "block_bytes")
    '1024'
    >>> param_value("ring=smp", "block_bytes") is None, param_value(float("nan"), "ring") is None
    (True, True)
    """
    if not isinstance(params_text, str):
        return None
    for word in params_text.split():
        k, sep, value = word.partition("=")
        if sep and k == key:
            return value
    return None


def time_vs_count_figure(df: "pd.DataFrame", *, y: str | None = None,
                         title: str | None = None) -> "Model":
    """Time against base count ``c`` per algorithm, log-log, as the paper's Figures 4 and 6.

    One series per algorithm and parameter setting (``"pipelined block_bytes=1024"``) over
    the rows' ``b`` (the base count ``c`` of the distributions, Section 3).  Several
    distributions in `df` give one figure each, in a grid (Figure 4).  The caption says
    where the rows were measured (:func:`measured_where`) or, for rows with
    ``source == "model"`` (:func:`tuwviz.model.compare.predict`), that they are a model.

    Parameters
    ----------
    df : pandas.DataFrame
        Benchmark rows (:func:`tuwviz.experiments.bench.bench`) or model rows.
    y : str, optional
        Time column; default ``median_us``, or ``time_us`` for model rows without it.
    title : str, optional
        Title (of every figure; default: collective, distribution and p).

    Returns
    -------
    bokeh.plotting.figure or bokeh.models.GridPlot
        One figure, or a grid of one per distribution.  Series sources as for
        :func:`bench_figure` (:func:`series_sources`).

    Raises
    ------
    ValueError
        If `df` is empty or lacks a needed column (measured rows need the run metadata
        columns for their caption).
    """
    from bokeh.layouts import gridplot

    y = _default_y(df, y)
    df = _prepared(df, _needed(df, ["algorithm", "b", y]), "time_vs_count_figure")
    groups = [df] if "distribution" not in df.columns or df["distribution"].nunique() <= 1 \
        else [rows for _, rows in df.groupby("distribution", sort=False)]

    figs = []
    for rows in groups:
        fig = _figure(rows, "b", y, title or _default_title(rows, "time"),
                      x_label="c: base count (elements)", y_label=_axis_label(y))
        if len(groups) > 1:  # two side by side within a notebook's width (toolbar aside)
            fig.width, fig.height = (NOTEBOOK_WIDTH - 80) // 2, 360
        _draw_series(fig, rows, "b", y)
        _add_hover(fig)
        _add_caption(fig, rows)
        figs.append(fig)
    if len(figs) == 1:
        return figs[0]
    return gridplot(figs, ncols=2)


def time_vs_block_figure(df: "pd.DataFrame", *, x: str = "block_bytes", y: str | None = None,
                         estimate: float | None = None, title: str | None = None) -> "Figure":
    """Time against block size ``B`` for one problem, as the paper's Figure 5.

    The pipelined ring's rows (any algorithm other than ``ring`` and ``native``) are
    drawn over `x` on a log axis, one series per remaining parameter setting; the linear
    ring and ``native`` (the MPI library), which have no block size, are horizontal
    reference lines, and `estimate` (the Eq. (2) block size, e.g.
    :func:`tuwviz.model.allgatherv.estimate_block_bytes`) a vertical one.  Rows with
    ``block_bytes = 0`` (the kernel chose B itself by Eq. (2)) have no x position and are
    left out.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of one problem.  Without an `x` column, ``block_bytes`` is read from the
        ``params`` column (:func:`param_value`).
    x : str, optional
        Block size column.
    y : str, optional
        Time column; default ``median_us``, or ``time_us`` for model rows without it.
    estimate : float, optional
        Block size to mark (bytes).
    title : str, optional
        Figure title.

    Returns
    -------
    bokeh.plotting.figure
        Series sources as for :func:`bench_figure` (their names without ``block_bytes``);
        reference lines are renderers named ``"ring"`` / ``"native"``, the estimate a
        ``Span`` named ``"estimate"``.

    Raises
    ------
    ValueError
        If `df` is empty, lacks a needed column, mixes several problems, or has no row
        with a block size.
    """
    y = _default_y(df, y)
    if df is not None and x not in df.columns and x == "block_bytes" and "params" in df.columns:
        df = df.assign(block_bytes=[param_value(v, "block_bytes") for v in df["params"]])
    df = _prepared(df, _needed(df, ["algorithm", x, y]), "time_vs_block_figure")
    _check_one_problem(df)
    refs = df[df["algorithm"].isin(list(_REFERENCES))]
    rows = df[~df["algorithm"].isin(list(_REFERENCES)) & (df[x] > 0)]
    if rows.empty:
        raise ValueError(f"time_vs_block_figure: no rows with a positive {x} (rows of "
                         "algorithms other than ring and native, e.g. pipelined)")
    if "params" in rows.columns:  # B is the x axis, not part of the series' names
        rows = rows.assign(params=[_drop_param(v, x) for v in rows["params"]])
    fig = _figure(rows, x, y, title or _default_title(df, "time against block size"),
                  x_label="B: block size (bytes)", y_label=_axis_label(y))
    _draw_series(fig, rows, x, y)
    xs = [float(v) for v in rows[x]] + ([float(estimate)] if estimate else [])
    _draw_references(fig, refs, y, min(xs), max(xs))
    if estimate:
        _mark_estimate(fig, float(estimate))
    _add_hover(fig)
    _add_caption(fig, df)
    return fig


def _check_one_problem(df: "pd.DataFrame") -> None:
    for c in ("collective", "p", "distribution", "b", "datatype"):
        if c in df.columns and df[c].nunique(dropna=False) > 1:
            values = ", ".join(str(v) for v in dict.fromkeys(df[c]))
            raise ValueError(f"time_vs_block_figure: rows of several problems ({c} = {values}); "
                             "select the rows of one problem")


def _draw_references(fig: "Figure", refs: "pd.DataFrame", y: str, x0: float, x1: float) -> None:
    """Horizontal lines at the times of the algorithms without blocks (linear ring, native).

    Lines, not Spans, so that the y range includes them.
    """
    for name, rows in refs.groupby("algorithm", sort=False):
        color, dash = _REFERENCES[str(name)]
        value = float(rows[y].median())
        label = f"{name} (no blocks): {value:.4g}"
        fig.line([x0, x1], [value, value], color=color, line_dash=dash, line_width=2,
                 legend_label=label, name=str(name))


def _mark_estimate(fig: "Figure", estimate: float) -> None:
    from bokeh.models import Label, Span

    fig.add_layout(Span(location=estimate, dimension="height", line_color="#d62728",
                        line_dash="dotted", line_width=2, name="estimate"))
    fig.add_layout(Label(x=estimate, y=0, y_units="screen", x_offset=4, y_offset=4,
                         text=f"Eq. (2): B ≈ {estimate:.4g} B", text_font_size="9pt",
                         text_color="#d62728", name="estimate_label"))


# -- helpers ----------------------------------------------------------------------------------
def _check(df: "pd.DataFrame", columns: list[str], who: str) -> None:
    if df is None or len(df) == 0:
        raise ValueError(f"{who}: no rows to plot (the DataFrame is empty)")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{who}: DataFrame lacks column(s) {', '.join(missing)}; pass rows of "
                         f"tuwviz.experiments.bench.bench or a results CSV it wrote")


def _numbers(col: "pd.Series") -> "pd.Series":
    import pandas as pd

    return pd.to_numeric(col, errors="coerce")


def _prepared(df: "pd.DataFrame", columns: list[str], who: str) -> "pd.DataFrame":
    """A checked copy with numeric columns as numbers (CSV cells may be '')."""
    _check(df, columns, who)
    df = df.copy()
    for c in _NUMERIC:
        if c in df.columns:
            df[c] = _numbers(df[c])
    return df


def _axis_label(column: str) -> str:
    labels = {"b": "b: average block size (elements)", "m": "m: total elements",
              "m_prime": "m' = p max m_i (elements)", "p": "p: processes",
              "time_us": "time per call (µs)"}
    if column in labels:
        return labels[column]
    if column.endswith("_us"):
        return f"{column[:-3]} time per call (µs)"
    return column


def _default_title(df: "pd.DataFrame", what: str) -> str:
    parts = []
    for c, fmt in (("collective", "{}"), ("distribution", "{}"), ("p", "p={}")):
        if c in df.columns:
            parts.append(fmt.format("/".join(str(v) for v in dict.fromkeys(df[c]))))
    return " ".join(parts + [what]) if parts else what


def _figure(df: "pd.DataFrame", x: str, y: str, title: str, x_label: str, y_label: str,
            y_log: bool = True) -> "Figure":
    from bokeh.plotting import figure

    x_log = bool((df[x] > 0).all())
    y_log = y_log and bool((df[y] > 0).all())
    fig = figure(title=title, width=720, height=420,
                 x_axis_type="log" if x_log else "linear",
                 y_axis_type="log" if y_log else "linear",
                 x_axis_label=x_label, y_axis_label=y_label,
                 tools="pan,wheel_zoom,box_zoom,reset,save")
    return fig


def _series(df: "pd.DataFrame", x: str) -> Iterator[tuple[str, "pd.DataFrame"]]:
    """(name, rows sorted by x) per algorithm and params, split further by columns that vary.

    A non-empty ``params`` text is part of the name (``"pipelined block_bytes=1024"``).
    """
    split = [c for c in _SPLIT_COLUMNS if c in df.columns and df[c].nunique(dropna=False) > 1]
    keys = ["algorithm", *split]
    with_params = "params" in df.columns
    if with_params:
        # empty CSV cells read back as NaN
        df = df.assign(params=[v.strip() if isinstance(v, str) else "" for v in df["params"]])
        keys.insert(1, "params")
    for values, rows in df.groupby(keys, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        head, rest = [str(values[0])], list(values[1:])
        if with_params and rest.pop(0):
            head.append(str(rows["params"].iloc[0]))
        name = " ".join(head + [f"{k}={v}" for k, v in zip(split, rest)])
        yield name, rows.sort_values(x, kind="stable")


def _draw_series(fig: "Figure", df: "pd.DataFrame", x: str, y: str) -> None:
    from bokeh.models import ColumnDataSource
    from bokeh.palettes import Category10_10

    extra = [c for _, c, _ in _HOVER_LINES] + _SPLIT_COLUMNS
    columns = list(dict.fromkeys([x, y, *(c for c in extra if c in df.columns)]))
    colors = itertools.cycle(Category10_10)
    markers = itertools.cycle(["circle", "square", "triangle", "diamond", "inverted_triangle"])
    for (name, rows), color, marker in zip(_series(df, x), colors, markers):
        src = ColumnDataSource({c: rows[c].tolist() for c in columns}, name=name, tags=["series"])
        fig.line(x, y, source=src, color=color, line_width=2, legend_label=name)
        fig.scatter(x, y, source=src, color=color, marker=marker, size=8, legend_label=name,
                    name=name)
    fig.legend.location = "top_left"
    fig.legend.click_policy = "hide"


def _add_hover(fig: "Figure") -> None:
    from bokeh.models import HoverTool, Scatter

    markers = [r for r in fig.renderers if isinstance(getattr(r, "glyph", None), Scatter)]
    have = {c for src in series_sources(fig) for c in src.data}
    fig.add_tools(HoverTool(renderers=markers, tooltips=[
        (label, f"@{col}{fmt}") for label, col, fmt in _HOVER_LINES if col in have]))


def _add_caption(fig: "Figure", df: "pd.DataFrame") -> None:
    import textwrap

    from bokeh.models import Title

    # a Title never wraps: lines that fit the figure (about 5.6 px per 9-pt character)
    lines = textwrap.wrap(_where(df), width=max(30, int((fig.width or 600) / 5.6) - 12))
    for i, line in enumerate(lines):
        fig.add_layout(Title(text=line, name="measured_where" if i == 0 else f"measured_where_{i}",
                             text_font_size="9pt", text_font_style="italic",
                             text_color="#444444"), "below")


def _is_model(df: "pd.DataFrame") -> "pd.Series":
    """True for the rows that are model predictions (``source == "model"``)."""
    import pandas as pd

    if "source" not in df.columns:
        return pd.Series(False, index=df.index)
    return df["source"].astype(str).str.strip().eq("model")


def _where(df: "pd.DataFrame") -> str:
    """Caption: where measured rows were measured; model rows labelled as model."""
    model = _is_model(df)
    parts = [measured_where(df[~model])] if (~model).any() else []
    if model.any():
        costs = []
        for col, sym, per in (("alpha", "α", "message"), ("beta", "β", "byte")):
            values = sorted(set(df.loc[model, col].dropna())) if col in df.columns else []
            if values:
                costs.append(sym + " = " + "/".join(f"{v:g}" for v in values) + f" s per {per}")
        text = "model (simulated, not measured)"
        parts.append(text + (": " + ", ".join(costs) if costs else ""))
    return "; ".join(parts)


def _needed(df: "pd.DataFrame", columns: list[str]) -> list[str]:
    """`columns`, plus the run metadata when some rows are measured (for their caption)."""
    measured = df is not None and len(df) > 0 and bool((~_is_model(df)).any())
    return list(dict.fromkeys(columns + (META_COLUMNS if measured else [])))


def _default_y(df: "pd.DataFrame", y: str | None) -> str:
    """`y`, or the time column `df` has: measured ``median_us``, else model ``time_us``."""
    if y is not None:
        return y
    return "median_us" if df is None or "median_us" in df.columns or "time_us" not in df.columns \
        else "time_us"


def _drop_param(text, key: str) -> str:
    """`text` (``key=value`` words) without `key`."""
    if not isinstance(text, str):
        return ""
    return " ".join(w for w in text.split() if w.split("=", 1)[0] != key)
