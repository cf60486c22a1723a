"""Bokeh figures of real benchmark rows: data sources, captions, offline HTML."""
from __future__ import annotations

import re

import pandas as pd
import pytest
from bokeh.models import HoverTool, LogScale, Span

from tuwviz.bench import ROW_FIELDS, bench
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
