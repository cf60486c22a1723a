"""The circulant paper's consistency study: Guidelines (2)-(6), the one-command study,
Figures 6-7 (Träff, Hunold, Vardas, Funk, Section IV-C).

The study runs once on real ranks (``tuwviz bench --study circulant``, p = 3 on this
2-core machine, so oversubscribed; rows say so).  Every expected number is recomputed
here from the CSV rows themselves with the csv module, never written down; the made-up
rows of the first tests only check which rows a guideline pairs.
"""
from __future__ import annotations

import csv
import json
import math

import pandas as pd
import pytest

from tuwviz.analysis import guidelines as gl
from tuwviz.experiments.bench import bench
from tuwviz.experiments.study import STUDIES, study_cases

P, BS, REPS = 3, [1, 8], 3


# -- declarations -----------------------------------------------------------------------------
def test_guidelines_2_to_6_are_the_papers():
    """Section IV-C, Eqs. (2)-(6), with the regular variants the text allows."""
    st = {k: gl.GUIDELINES[k].statement for k in gl.CONSISTENCY_GUIDELINES}
    assert st == {
        "circulant-2": "MPI_Reduce_scatter_block(m) ≤ MPI_Allreduce(m)",
        "circulant-2v": "MPI_Reduce_scatter(m) ≤ MPI_Allreduce(m)",
        "circulant-3": "MPI_Reduce_scatter_block(m) ≤ MPI_Reduce(m) + MPI_Scatter(m)",
        "circulant-3v": "MPI_Reduce_scatter(m) ≤ MPI_Reduce(m) + MPI_Scatterv(m)",
        "circulant-4": "MPI_Allreduce(m) ≤ MPI_Reduce_scatter(m) + MPI_Allgatherv(m)",
        "circulant-4b": "MPI_Allreduce(m) ≤ MPI_Reduce_scatter_block(m) + MPI_Allgather(m)",
        "circulant-5": "MPI_Reduce(m) ≤ MPI_Allreduce(m)",
        "circulant-6": "MPI_Reduce(m) ≤ MPI_Reduce_scatter(m, r)",
    }
    for k in gl.CONSISTENCY_GUIDELINES:  # one family: companions share the algorithm
        g = gl.GUIDELINES[k]
        assert all(op.algorithm == gl.SAME for op in (*g.lhs, *g.rhs) if op is not g.subject)
    assert gl.CONDITIONS["divisible"].test(4, 64, 64) and not gl.CONDITIONS["divisible"].test(4, 8, 8)
    assert gl.CONDITIONS["root0"].test(4, 1, 1, 0) and not gl.CONDITIONS["root0"].test(4, 1, 1, 2)


def _row(coll, alg, p, b, m, median, root=0, dist="same"):
    return dict(collective=coll, algorithm=alg, p=p, root=root, distribution=dist, b=b, m=m,
                m_prime=m if dist == "same" else p * m, datatype="byte", reps=5, warmup=1,
                mpi_library="MPICH", ranks=p, oversubscribed=True, heavy_yield="1",
                backend="mpiexec", median_us=median, min_us=median, mean_us=median)


def test_companions_are_the_same_family_and_missing_families_are_skipped():
    """The circulant Allreduce is held to the circulant Reduce_scatter + Allgatherv, the
    library's to the library's; a family whose companion does not exist (a butterfly
    Reduce_scatter) is not held to the guideline, and missing rows are skipped."""
    p, c = 4, 2
    rows = pd.DataFrame([
        _row("allreduce", "native", p, p * c, p * p * c, 10.0),
        _row("allreduce", "circulant", p, p * c, p * p * c, 30.0),
        _row("reduce_scatter", "native", p, c, p * c, 4.0),
        _row("allgatherv", "native", p, c, p * c, 5.0),
        _row("reduce_scatter", "circulant", p, c, p * c, 7.0),
        _row("allgatherv", "circulant", p, c, p * c, 8.0),
        _row("reduce_scatter_block", "circulant", p, c, p * c, 1.0),
        _row("reduce", "circulant", p, p * c, p * p * c, 2.0),
        _row("scatter", "native", p, c, p * c, 1.0),
        _row("allreduce", "butterfly", p, p * c, p * p * c, 20.0),
    ])
    # no reduce_scatter/butterfly exists: Guideline (4) does not apply to the butterfly, and
    # nothing is missing for it
    assert not [m for m in gl.missing_operations(rows, ["circulant-4"]) if m.algorithm == "butterfly"]
    ev = gl.evaluate(rows, ["circulant-4", "circulant-3"], stats=["median"], missing="skip")
    got = {(r.guideline, r.algorithm): (r.lhs, r.rhs, r.violated) for r in ev.itertuples()}
    assert got == {("circulant-4", "native"): (10.0, 9.0, True),
                   ("circulant-4", "circulant"): (30.0, 15.0, True)}
    assert ev.loc[ev["algorithm"] == "circulant", "rhs_terms"].item() == \
        "Circulant_Reduce_scatter(m)=7.00 + Circulant_Allgatherv(m)=8.00"
    # where p does not divide the vector, Guideline (4) does not apply
    ar = rows["collective"] == "allreduce"
    odd = rows.assign(b=rows["b"].where(~ar, 6), m=rows["m"].where(~ar, p * 6),
                      m_prime=rows["m_prime"].where(~ar, p * 6))
    assert gl.evaluate(odd, ["circulant-4"], stats=["median"], missing="skip").empty


# -- the one-command study on real ranks ------------------------------------------------------
def test_study_cases_cover_every_part():
    cases = study_cases("circulant", [4], [2])
    got = {(c["problem"]["collective"], c["algorithm"], c["problem"]["distribution"],
            c["problem"]["b"]) for c in cases}
    for part in STUDIES["circulant"].parts:
        b = 2 if part.size == "block" else 8
        assert {(part.collective, a, part.distribution, b) for a in part.algorithms} <= got
    assert all(c["problem"]["datatype"] == "byte" and c["problem"]["op"] == "bor"
               for c in cases if c["problem"]["collective"] in ("allreduce", "reduce"))
    assert {c["problem"]["root"] for c in cases if c["problem"]["collective"] == "reduce"} == {0}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """One study on p = 3, b = 1, 8, then `tuwviz guidelines` on its CSV."""
    from support import run_cli

    d = tmp_path_factory.mktemp("study")
    out, page = d / "study.csv", d / "study.html"
    r = run_cli("bench", "--study", "circulant", "--np", str(P), "--b",
                ",".join(map(str, BS)), "--reps", str(REPS), "--warmup", "1", "--max-time",
                "30", "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    g = run_cli("guidelines", str(out), "--html", str(page), "--json", "--no-progress")
    assert g.returncode == 0, g.stderr
    text = run_cli("guidelines", str(out), "--no-progress")
    assert text.returncode == 0, text.stderr
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows, json.loads(g.stdout), page, r, text.stdout


def _median(rows, **want):
    hits = [r for r in rows if all(str(r[k]) == str(v) for k, v in want.items())]
    assert len(hits) == 1, (want, len(hits))
    return float(hits[0]["median_us"])


def test_the_study_writes_every_measurement_to_one_csv(study):
    rows, _, _, r, _ = study
    assert len(rows) == len(study_cases("circulant", [P], BS))
    assert {row["oversubscribed"] for row in rows} == {"True"}  # 3 ranks on 2 cores
    assert all(0 < int(row["reps"]) <= REPS for row in rows)
    assert "tuwviz guidelines" in r.stderr  # says what to do next


def test_guideline_sides_are_the_measured_medians(study):
    """Each side of every verdict is recomputed from the CSV: subject and companions."""
    rows, verdicts, _, _, _ = study
    alg = {"library": "native", "circulant": "circulant"}
    checked = set()
    for v in verdicts:
        a, m = alg[v["family"]], v["m"]
        c = m // P
        vec = dict(collective="allreduce", algorithm=a, b=m)
        red = dict(collective="reduce", algorithm=a, b=m, root=0)
        rsb = dict(collective="reduce_scatter_block", algorithm=a, b=c)
        rs = dict(collective="reduce_scatter", algorithm=a, b=c, distribution="same")
        lhs, rhs = {
            "circulant-2": ([rsb], [vec]), "circulant-2v": ([rs], [vec]),
            "circulant-3": ([rsb], [red, dict(collective="scatter", algorithm=a, b=c)]),
            "circulant-3v": ([rs], [red, dict(collective="scatterv", algorithm=a, b=c)]),
            "circulant-4": ([vec], [rs, dict(collective="allgatherv", algorithm=a, b=c)]),
            "circulant-4b": ([vec], [rsb, dict(collective="allgather", algorithm=a, b=c)]),
            "circulant-5": ([red], [vec]),
            "circulant-6": ([red], [dict(collective="reduce_scatter", algorithm=a, b=m,
                                         distribution="broadcast")]),
        }[v["guideline"]]
        assert math.isclose(v["lhs"], sum(_median(rows, **w) for w in lhs)), v
        assert math.isclose(v["rhs"], sum(_median(rows, **w) for w in rhs)), v
        bad = v["lhs"] - v["rhs"] > v["noise"]
        assert v["verdict"] == ("violated" if bad else
                                "within noise" if v["lhs"] > v["rhs"] else "holds"), v
        checked.add((v["guideline"], v["family"], m))
    # both families: all 8 guidelines (the circulant Scatter(v) of Section III-F too), both sizes
    lib = {k for k, f, _ in checked if f == "library"}
    circ = {k for k, f, _ in checked if f == "circulant"}
    assert lib == circ == set(gl.CONSISTENCY_GUIDELINES)
    assert {m for _, _, m in checked} == {P * b for b in BS}


def test_figure7_ratios_are_medians_over_the_family_baseline(study):
    rows, _, _, _, _ = study
    data = gl.figure7_data(pd.DataFrame(rows).astype({"p": int, "b": int, "m": int,
                                                     "median_us": float}))
    assert len(data) == 2 * 5 * len(BS)  # families x lines x sizes
    for d in data.itertuples():
        a, base = {"library": ("native", "combined_native"),
                   "circulant": ("circulant", "combined")}[d.family]
        assert math.isclose(d.baseline_us, _median(rows, collective="allreduce",
                                                  algorithm=base, b=d.m))
        assert math.isclose(d.ratio, d.median_us / d.baseline_us)


def test_text_table_says_in_numbers_what_is_violated(study):
    _, verdicts, _, _, text = study
    bad = [v for v in verdicts if v["verdict"] == "violated"]
    assert "Guideline (5): MPI_Reduce(m) ≤ MPI_Allreduce(m)" in text
    if bad:
        for v in bad:
            assert f"{v['family']}: Guideline {v['number']}" in text
    else:
        assert "no guideline is violated beyond the run's noise" in text


def test_the_page_shows_figures_6_and_7_offline(study, browser):
    _, verdicts, page_path, _, _ = study
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:")
               else route.continue_())  # offline: nothing may come from the network
    page.goto(page_path.as_uri())
    page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0")
    page.wait_for_selector("canvas")
    titles = page.evaluate("() => [...Bokeh.documents[0].all_models].filter(m => "
                           "m.type == 'Title' || m.constructor.name == 'Title')"
                           ".map(m => m.text)")
    assert f"library (p = {P}): median / Combined_native_Allreduce" in titles, titles
    assert f"circulant (p = {P}): median / Combined_Allreduce" in titles, titles
    assert "Reduce_scatter_block: lib vs circ" in titles, titles
    assert page.locator("table.tuwviz-consistency tbody tr").count() == len(verdicts)
    assert page.locator("canvas").count() >= 3
    assert not errors, errors
    page.close()


def test_max_time_ends_repetitions_without_error():
    """ReproMPI's limit: a million repetitions asked, the run stops after about 0.3 s and
    keeps what it measured; the row says how many ran."""
    df = bench("allreduce", ["native"], ps=[2], bs=[1], reps=1_000_000, warmup=0,
               max_time=0.3, progress=False)
    assert 0 < int(df["reps"].iloc[0]) < 1_000_000
