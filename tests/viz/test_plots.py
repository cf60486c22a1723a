"""Bokeh figures of real benchmark rows: data sources, captions, offline HTML."""
from __future__ import annotations

import re

import pandas as pd
import pytest
from bokeh.models import HoverTool, LogScale, Span

from tuwviz.experiments.bench import ROW_FIELDS, bench
from tuwviz.viz import plots

VALUE_COLUMNS = ["p", "b", "m", "min_us", "median_us", "mean_us", "max_us", "ratio_to_native"]


@pytest.fixture(scope="module")
def bench_df() -> pd.DataFrame:
    """A real, small measurement: native and linear gatherv on 2 ranks (about 2 s)."""
    return bench("gatherv", ["native", "linear"], ps=[2], bs=[1, 100], reps=5, warmup=1,
                 progress=False)


def _caption(fig) -> str:
    return fig.select_one({"name": "measured_where"}).text


def test_bench_figure_sources_hold_the_rows_of_each_algorithm(bench_df):
    fig = plots.bench_figure(bench_df)
    sources = plots.series_sources(fig)
    assert sorted(s.name for s in sources) == sorted(set(bench_df["algorithm"]))
    for src in sources:
        rows = bench_df[bench_df["algorithm"] == src.name].sort_values("b")
        for col in VALUE_COLUMNS:
            assert src.data[col] == rows[col].tolist(), (src.name, col)
        assert set(src.data["algorithm"]) == {src.name}
    # every series is a line and markers over b / median_us from its own source
    glyphs = [r.glyph for r in fig.renderers]
    assert {(g.x, g.y) for g in glyphs} == {("b", "median_us")}
    assert len(fig.renderers) == 2 * len(sources)


def test_bench_figure_is_log_log_with_legend_and_hover(bench_df):
    fig = plots.bench_figure(bench_df, title="gatherv on two ranks")
    assert isinstance(fig.x_scale, LogScale) and isinstance(fig.y_scale, LogScale)
    assert fig.title.text == "gatherv on two ranks"
    labels = {item.label["value"] for item in fig.legend[0].items}
    assert labels == {"native", "linear"}
    (hover,) = fig.select(type=HoverTool)
    fields = " ".join(value for _, value in hover.tooltips)
    for col in ["algorithm", "p", "b", "m", "min_us", "median_us", "mean_us", "max_us",
                "ratio_to_native"]:
        assert f"@{col}" in fields


def test_caption_says_where_it_was_measured(bench_df):
    caption = _caption(plots.bench_figure(bench_df))
    ranks = int(bench_df["ranks"].iloc[0])
    assert f"on {ranks} ranks" in caption
    over = bool(bench_df["oversubscribed"].iloc[0])
    assert ("not oversubscribed" in caption) == (not over)
    assert "oversubscribed" in caption
    assert "heavy yield" in caption and f"backend {bench_df['backend'].iloc[0]}" in caption

    elsewhere = bench_df.assign(ranks=4, oversubscribed=True, heavy_yield="1",
                                backend="ipyparallel")
    caption = _caption(plots.bench_figure(elsewhere))
    assert "on 4 ranks, oversubscribed, MPICH heavy yield on, backend ipyparallel" in caption


def test_rows_read_back_from_csv_plot_the_same(bench_df, tmp_path):
    path = tmp_path / "r.csv"
    bench_df.to_csv(path, index=False)
    back = pd.read_csv(path)
    assert list(back.columns) == ROW_FIELDS
    fig = plots.bench_figure(back)
    for src in plots.series_sources(fig):
        rows = bench_df[bench_df["algorithm"] == src.name].sort_values("b")
        assert src.data["median_us"] == pytest.approx(rows["median_us"].tolist())
    assert _caption(fig) == plots.measured_where(bench_df)


def test_ratio_figure(bench_df):
    fig = plots.ratio_figure(bench_df)
    (span,) = fig.select(type=Span)
    assert span.location == 1.0 and span.dimension == "width"
    (src,) = plots.series_sources(fig)
    assert src.name == "linear"
    rows = bench_df[bench_df["algorithm"] == "linear"].sort_values("b")
    assert src.data["ratio_to_native"] == rows["ratio_to_native"].tolist()
    assert fig.renderers[0].glyph.y == "ratio_to_native"
    assert "ranks" in _caption(fig)


@pytest.mark.parametrize("factor", [14.0, 0.2])
def test_ratio_figure_keeps_the_line_at_1_in_view(bench_df, factor):
    # notebook 00's oversubscribed ratios (12.8-16) once put the promised line off-screen
    rows = bench_df.assign(ratio_to_native=[1.0 if a == "native" else factor * (1 + 0.1 * i)
                                            for i, a in enumerate(bench_df["algorithm"])])
    fig = plots.ratio_figure(rows)
    ratios = rows[rows["algorithm"] != "native"]["ratio_to_native"]
    assert fig.y_range.start < 1.0 < fig.y_range.end
    assert fig.y_range.start <= ratios.min() and ratios.max() <= fig.y_range.end


def test_a_long_caption_wraps_to_the_figure_width(bench_df):
    many = pd.concat([bench_df.assign(distribution=d) for d in ("same", "spikes", "linear")])
    grid = plots.time_vs_count_figure(many)
    from bokeh.models import Title
    from bokeh.plotting import figure as Figure

    figs = list(grid.select({"type": Figure}))
    assert len(figs) == 3
    for fig in figs:
        lines = [t.text for t in fig.below if isinstance(t, Title)]
        assert " ".join(lines) == plots.measured_where(bench_df)
        assert all(len(line) * 5.6 <= fig.width for line in lines), (fig.width, lines)


def test_notebook_output_loads_bokehjs_once_and_draws_when_in_the_page(bench_df, monkeypatch):
    published = []
    monkeypatch.setattr("IPython.display.publish_display_data",
                        lambda data, *a, **k: published.append(data))
    monkeypatch.setattr(plots, "_inline_loaded", False)
    plots.show(plots.bench_figure(bench_df))
    plots.show(plots.ratio_figure(bench_df))
    load, first, second = published
    assert list(load) == ["application/javascript"]  # once, under one MIME type
    assert "/* BEGIN bokeh.min.js */" in load["application/javascript"]
    bundles = re.findall(r"/\* BEGIN (\S+) \*/", load["application/javascript"])
    assert bundles == ["bokeh.min.js", "bokeh-widgets.min.js"], bundles
    assert len(load["application/javascript"]) < 2_000_000
    for fig in (first, second):
        html = fig["text/html"]
        element = re.search(r'<div id="([^"]+)" data-root-id', html).group(1)
        # drawn only once its div is attached to the page (notebook 01's explorer drew
        # into a div that was not there yet)
        assert f"var id = '{element}'" in html and "el.isConnected" in html


def test_save_html_is_offline(bench_df, tmp_path):
    target = tmp_path / "figures" / "bench.html"
    out = plots.save_html(plots.bench_figure(bench_df), target, "gatherv bench")
    assert out == target
    html = target.read_text(encoding="utf-8")
    assert target.stat().st_size > 500_000
    assert "cdn.bokeh.org" not in html
    assert '<script src="http' not in html
    assert not re.search(r"<(?:script|link)\b[^>]*\b(?:src|href)=[\"']?https?:", html)
    inline = [body for body in re.findall(r'<script(?: type="text/javascript")?>(.*?)</script>',
                                          html, flags=re.S)
              if "Bokeh" in body and len(body) > 500_000]
    assert inline, "BokehJS is not embedded in a <script> block"
    assert "<title>gatherv bench</title>" in html


def test_viz_shows_and_saves_with_these_functions():
    from tuwviz import viz

    assert viz.show is plots.show and viz.save_html is plots.save_html
    assert viz.plots is plots and plots.__name__ == "tuwviz.viz.plots"


def test_bad_input_raises_value_error(bench_df):
    with pytest.raises(ValueError, match="empty"):
        plots.bench_figure(bench_df.iloc[0:0])
    with pytest.raises(ValueError, match="empty"):
        plots.bench_figure(pd.DataFrame(columns=ROW_FIELDS))
    with pytest.raises(ValueError, match="median_us"):
        plots.bench_figure(bench_df.drop(columns=["median_us"]))
    with pytest.raises(ValueError, match="oversubscribed"):
        plots.bench_figure(bench_df.drop(columns=["oversubscribed"]))
    with pytest.raises(ValueError, match="native"):
        plots.ratio_figure(bench_df[bench_df["algorithm"] == "native"])
