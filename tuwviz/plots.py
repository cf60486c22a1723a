"""Bokeh figures of benchmark results, shown and saved without any network access.

The figures take the DataFrames of :func:`tuwviz.bench.bench` (columns
:data:`tuwviz.bench.ROW_FIELDS`, or the same columns read back from a results CSV) and
draw one series per algorithm.  Every figure carries a caption saying where its numbers
were measured (ranks, oversubscription, MPICH heavy-yield mode, backend), taken from the
metadata columns of the rows themselves.

BokehJS is always embedded (``bokeh.resources.INLINE``): machines running tuwviz are
often offline, and Bokeh's default CDN resources then leave plots blank.  Use
:func:`show` in notebooks and :func:`save_html` for standalone pages; never
``bokeh.io.output_notebook()`` with its defaults.

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

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd
    from bokeh.model import Model
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure as Figure

__all__ = [
    "HOVER_COLUMNS",
    "META_COLUMNS",
    "bench_figure",
    "measured_where",
    "ratio_figure",
    "save_html",
    "series_sources",
    "show",
    "use_inline",
]

#: Columns shown when hovering over a measurement.
HOVER_COLUMNS = ["algorithm", "p", "b", "m", "min_us", "median_us", "mean_us", "max_us",
                 "ratio_to_native"]

#: Run metadata every figure's caption is made from.
META_COLUMNS = ["ranks", "oversubscribed", "heavy_yield", "backend"]

#: Columns that, when they take several values in one DataFrame, split series further
#: (e.g. one line per algorithm *and* distribution).
_SPLIT_COLUMNS = ["collective", "p", "root", "distribution", "datatype"]

_NUMERIC = ["p", "b", "m", "m_prime", "min_us", "median_us", "mean_us", "max_us",
            "ratio_to_native", "ranks"]

_inline_loaded = False


def use_inline(force: bool = False) -> None:
    """Make notebook output embed BokehJS itself instead of loading it from a CDN.

    Calls ``bokeh.io.output_notebook(resources=INLINE, hide_banner=True)``; the library
    (about 2 MB) goes into the cell's output.  It is loaded once per kernel: call it again
    with ``force=True`` after reloading the browser page with cleared outputs.

    Parameters
    ----------
    force : bool
        Load BokehJS again even if this kernel already did.
    """
    global _inline_loaded
    if _inline_loaded and not force:
        return
    from bokeh.io import output_notebook
    from bokeh.resources import INLINE

    output_notebook(resources=INLINE, hide_banner=True)
    _inline_loaded = True


def show(obj: "Model") -> None:
    """Show a Bokeh figure or layout in the notebook, BokehJS embedded (see :func:`use_inline`).

    Parameters
    ----------
    obj : bokeh Model
        A figure or layout, e.g. from :func:`bench_figure`.
    """
    from bokeh.io import show as bokeh_show

    use_inline()
    bokeh_show(obj)


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


def measured_where(df: "pd.DataFrame") -> str:
    """Caption saying where the rows of `df` were measured, from their metadata columns.

    Parameters
    ----------
    df : pandas.DataFrame
        Benchmark rows with the columns :data:`META_COLUMNS`.

    Returns
    -------
    str
        E.g. ``"measured on 4 ranks, oversubscribed, MPICH heavy yield on, backend
        ipyparallel"``; several values of a column are listed separated by ``/``.

    Raises
    ------
    ValueError
        If `df` is empty or lacks a metadata column.
    """
    _check(df, META_COLUMNS, "measured_where")
    ranks = "/".join(str(int(r)) for r in sorted(set(_numbers(df["ranks"]).dropna())))
    over = sorted({_truth(v) for v in df["oversubscribed"]}, key=str)
    over_text = "/".join({True: "oversubscribed", False: "not oversubscribed",
                          None: "oversubscription unknown"}[v] for v in over)
    yield_text = "/".join(sorted({_heavy_yield(v) for v in df["heavy_yield"]}))
    backends = "/".join(sorted({str(v) for v in df["backend"]}))
    return (f"measured on {ranks or '?'} ranks, {over_text}, MPICH heavy yield {yield_text}, "
            f"backend {backends}")


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
        Rows of :func:`tuwviz.bench.bench` or a results CSV read with pandas.
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
    :func:`tuwviz.bench.bench` computes it); a dashed line marks 1, below it an algorithm
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
    from bokeh.models import Span

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
    _draw_series(fig, df, x, "ratio_to_native")
    _add_hover(fig)
    _add_caption(fig, df)
    return fig


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


# -- helpers ----------------------------------------------------------------------------------
def _check(df: "pd.DataFrame", columns: list[str], who: str) -> None:
    if df is None or len(df) == 0:
        raise ValueError(f"{who}: no rows to plot (the DataFrame is empty)")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{who}: DataFrame lacks column(s) {', '.join(missing)}; pass rows of "
                         f"tuwviz.bench.bench or a results CSV it wrote")


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


def _truth(v) -> bool | None:
    text = str(v).strip().lower()
    if text in ("true", "1", "1.0", "yes"):
        return True
    if text in ("false", "0", "0.0", "no"):
        return False
    return None


def _heavy_yield(v) -> str:
    return {True: "on", False: "off", None: "default"}[_truth(v)]


def _axis_label(column: str) -> str:
    labels = {"b": "b: average block size (elements)", "m": "m: total elements",
              "m_prime": "m' = p max m_i (elements)", "p": "p: processes"}
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
    """(name, rows sorted by x) per algorithm, split further by columns that vary."""
    split = [c for c in _SPLIT_COLUMNS if c in df.columns and df[c].nunique(dropna=False) > 1]
    keys = ["algorithm", *split]
    for values, rows in df.groupby(keys, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        name = " ".join([str(values[0])] + [f"{k}={v}" for k, v in zip(split, values[1:])])
        yield name, rows.sort_values(x, kind="stable")


def _draw_series(fig: "Figure", df: "pd.DataFrame", x: str, y: str) -> None:
    from bokeh.models import ColumnDataSource
    from bokeh.palettes import Category10_10

    columns = list(dict.fromkeys([x, y, *HOVER_COLUMNS, *(c for c in _SPLIT_COLUMNS if c in df)]))
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
    fig.add_tools(HoverTool(renderers=markers, tooltips=[
        ("algorithm", "@algorithm"), ("p", "@p"), ("b", "@b"), ("m", "@m"),
        ("min µs", "@min_us{0.000}"), ("median µs", "@median_us{0.000}"),
        ("mean µs", "@mean_us{0.000}"), ("max µs", "@max_us{0.000}"),
        ("ratio to native", "@ratio_to_native{0.000}"),
    ]))


def _add_caption(fig: "Figure", df: "pd.DataFrame") -> None:
    from bokeh.models import Title

    fig.add_layout(Title(text=measured_where(df), name="measured_where", text_font_size="9pt",
                         text_font_style="italic", text_color="#444444"), "below")
