"""tuwviz.analysis.performance: a kernel against the library, measured on real MPI ranks.

The relative runtimes are checked against the measured rows they come from, the LaTeX
rows against the medians, and the saved page is opened offline in Chromium, where its box
plots must hold one box per block size.
"""
from __future__ import annotations

import os

import pandas as pd
import pytest

from tuwviz.analysis.performance import latex_rows, performance
from tuwviz.viz import plots


@pytest.fixture(scope="module")
def perf():
    # p = 3: the smallest p with a root 2; 3 ranks on 2 cores are oversubscribed
    return performance("gather", "binomial", p=3, sizes=[1, 1000], reps=4, warmup=1)


def test_rows_samples_and_ratios_come_from_one_run_per_root(perf):
    rows = perf.rows
    assert sorted(zip(rows.root, rows.b, rows.algorithm)) == sorted(
        (r, b, a) for r in (0, 2) for b in (1, 1000) for a in ("native", "binomial"))
    assert set(rows.datatype) == {"byte"} and set(rows.p) == {3}
    assert (rows.oversubscribed == (3 > os.cpu_count())).all()
    samples = perf.samples
    assert len(samples) == 2 * 2 * 4 and set(samples.algorithm) == {"binomial"}
    lib = rows[rows.algorithm == "native"].set_index(["root", "b"]).median_us
    for s in samples.itertuples():
        assert s.relative == pytest.approx(s.time_us / lib[(s.root, s.bytes)])
    for r in rows[rows.algorithm == "binomial"].itertuples():
        mine = samples[(samples.root == r.root) & (samples.bytes == r.b)].time_us
        assert r.median_us == pytest.approx(mine.median())
        assert r.min_us == pytest.approx(mine.min()) and r.max_us == pytest.approx(mine.max())


def test_latex_rows_are_the_medians(perf):
    lines = latex_rows(perf).splitlines()
    assert lines[0].startswith("% gather/binomial against the library (")
    assert ("oversubscribed" if 3 > os.cpu_count() else "not oversubscribed") in lines[1]
    body = [line for line in lines if not line.startswith("%")]
    assert len(body) == 4 and all(line.endswith(r"\\") for line in body)
    first = perf.rows[(perf.rows.algorithm == "binomial") & (perf.rows.root == 0)
                      & (perf.rows.b == 1)].iloc[0]
    root, size, lib, own, ratio = (c.strip() for c in body[0].rstrip("\\").split("&"))
    assert (root, size) == ("0", "1 B")
    assert float(own) == pytest.approx(first.median_us, abs=0.05)
    assert float(ratio) == pytest.approx(first.ratio_to_native, abs=0.005)


def test_the_saved_page_draws_a_box_per_size_offline(perf, tmp_path, browser):
    paths = plots.save_performance(perf, tmp_path, "p")
    assert [p.name for p in paths] == ["p.csv", "p_samples.csv", "p.tex", "p.html"]
    assert len(pd.read_csv(paths[0])) == 8 and len(pd.read_csv(paths[1])) == 16
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:")
               else route.continue_())
    try:
        page.goto(paths[3].as_uri())
        page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0")
        boxes = page.evaluate("""() => Array.from(Bokeh.documents[0]._all_models.values())
            .filter(m => m.name === 'boxes').map(m => Array.from(m.data.size))""")
    finally:
        page.close()
    assert errors == []
    assert boxes == [["1 B", "1 kB"], ["1 B", "1 kB"]]  # root 0, root 2


def test_bad_input_is_refused_before_anything_runs():
    with pytest.raises(ValueError, match="allgatherv has no root"):
        performance("allgatherv", "ring")
    with pytest.raises(ValueError, match=r"root 2 out of range 0\.\.1 for p=2"):
        performance("gather", "binomial", p=2)
    with pytest.raises(ValueError, match="unknown algorithm"):
        performance("gather", "nosuch", p=3, sizes=[1])
