"""Performance guidelines on real measurements: sums, conditions, missing data, tables, CLI.

Every time here is measured on real MPI ranks (mpiexec, p = 4 on this machine, which is
oversubscribed on 2 cores; rows say so).  Expected values are recomputed in the tests from
the CSV rows themselves, never written down.  Where a test needs a violation it cannot
count on, it scales one algorithm's *measured* times in a copy of the results; the test
says so where it does.
"""
from __future__ import annotations

import ast
import csv
import importlib
import inspect
import json
import re
import subprocess
import sys
from html import escape
from html.parser import HTMLParser

import pandas as pd
import pytest

from tuwviz.analysis import guidelines as gl
from tuwviz.experiments.bench import ROW_FIELDS, bench
from tuwviz.problems import make_problem

from support import hang_guard

P, ROOT = 4, 2
DISTS = ["same", "spikes"]
BS = [1, 100]
REPS, WARMUP = 10, 2
TIME_COLUMNS = ["min_us", "median_us", "mean_us", "max_us"]


def _counts(dist, b, p=P):
    return make_problem("gatherv", p, dist, b).counts


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """gatherv native+linear on p=4, then the guidelines' companions measured into the CSV.

    Returns (csv path, gatherv-only rows as first written, rows measured by measure_missing).
    """
    path = tmp_path_factory.mktemp("guidelines") / "r.csv"
    first = bench("gatherv", ["native", "linear"], ps=[P], dists=DISTS, bs=BS, reps=REPS,
                  warmup=WARMUP, out=path, progress=False)
    new = gl.measure_missing(path, progress=False)
    return path, first, new


def _csv_rows(path):
    """The CSV read with the csv module, independently of tuwviz and pandas."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _stat(row, stat):
    return float(row[{"avg": "mean_us", "min": "min_us"}[stat]])


def _find(rows, **want):
    hits = [r for r in rows if all(str(r[k]) == str(v) for k, v in want.items())]
    assert len(hits) == 1, (want, len(hits))
    return hits[0]


# -- declarations --------------------------------------------------------------------------
def test_the_gatherv_papers_guidelines_are_declared_as_data():
    g1, g2 = gl.GUIDELINES["gatherv-1"], gl.GUIDELINES["gatherv-2"]
    assert g1.statement == "MPI_Gather(m) ≤ MPI_Gatherv(m)" and g1.where == "regular"
    assert g2.statement == "MPI_Gatherv(m) ≤ MPI_Allreduce(1) + MPI_Gather(m')"
    assert g2.where == "all" and g2.subject_side == "lhs" and g1.subject_side == "rhs"
    assert [(op.collective, op.algorithm, op.size) for op in g2.rhs] == \
        [("allreduce", "native", "one"), ("gather", "native", "padded")]
    assert "000_924b1e2f94a4a598" in g1.paper
    with pytest.raises(ValueError, match="exactly one operation must be under test"):
        gl.Guideline("x", "(9)", "", lhs=(gl.Operation("gather", "counts", None),),
                     rhs=(gl.Operation("gatherv", "counts", None),))
    with pytest.raises(ValueError, match="size not supported: huge"):
        gl.Operation("gather", "huge")
    with pytest.raises(ValueError, match="condition not supported"):
        gl.Guideline("x", "(9)", "", lhs=(gl.Operation("gather"),),
                     rhs=(gl.Operation("gatherv", algorithm=None),), where="sometimes")


# -- one module per concern ----------------------------------------------------------------
# Lowest first: each module may import only the ones before it.
LAYERS = ["data", "load", "rows", "measure", "evaluate", "tables", "figures", "consistency"]


def test_modules_import_only_the_modules_below_them():
    for i, name in enumerate(LAYERS):
        tree = ast.parse(inspect.getsource(importlib.import_module(f"tuwviz.analysis.guidelines.{name}")))
        used = {n.module.split(".")[0] for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}
        assert used <= set(LAYERS[:i]), f"{name} imports {sorted(used - set(LAYERS[:i]))}"


@pytest.mark.parametrize("name", LAYERS)
def test_each_module_imports_first_in_a_fresh_interpreter(name):
    # A cycle shows only when the module in it is imported first, so one process each.
    r = subprocess.run([sys.executable, "-c", f"import tuwviz.analysis.guidelines.{name}"],
                       capture_output=True, text=True, timeout=hang_guard(600))
    assert r.returncode == 0, r.stderr


def test_the_package_exports_every_modules_public_names():
    modules = [importlib.import_module(f"tuwviz.analysis.guidelines.{m}") for m in LAYERS]
    names = [n for mod in modules for n in mod.__all__]
    assert sorted(names) == sorted(gl.__all__) and len(set(names)) == len(names)
    for mod in modules:
        for n in mod.__all__:
            assert getattr(gl, n) is getattr(mod, n), n


# -- measuring exactly what is missing -----------------------------------------------------
def test_measure_missing_measures_exactly_the_companions(measured):
    path, first, new = measured
    blocks = sorted({max(_counts(d, b)) for d in DISTS for b in BS})
    # the companions: Allreduce(1) on p ranks, and Gather with block max m_i per problem
    expected = {("allreduce", 1)} | {("gather", blk) for blk in blocks}
    assert {(r["collective"], r["b"]) for r in new.to_dict("records")} == expected
    assert len(new) == len(expected)
    assert set(new["algorithm"]) == {"native"} and set(new["distribution"]) == {"same"}
    assert set(new["p"]) == {P} and set(new["reps"]) == {REPS} and set(new["warmup"]) == {WARMUP}
    assert set(new.loc[new["collective"] == "gather", "root"]) == {ROOT}
    # appended to the CSV after the gatherv rows, in the bench layout
    rows = _csv_rows(path)
    assert list(rows[0]) == ROW_FIELDS
    assert [r["collective"] for r in rows[:len(first)]] == ["gatherv"] * len(first)
    assert {(r["collective"], int(r["b"])) for r in rows[len(first):]} == expected
    # nothing left to measure, and measuring again adds nothing
    assert gl.missing_operations(path) == []
    assert gl.measure_missing(path, progress=False).empty
    assert len(_csv_rows(path)) == len(rows)


def test_missing_measurements_are_named(measured):
    path, first, _ = measured
    only_gatherv = pd.read_csv(path).query("collective == 'gatherv'")
    with pytest.raises(gl.MissingMeasurements) as err:
        gl.evaluate(only_gatherv)
    msg = str(err.value)
    assert "\n" not in msg
    assert "allreduce (native), p=4, 1 element per process" in msg
    assert f"gather (native), p=4, root {ROOT}, 100 elements per process (m'=400)" in msg
    described = {m.describe() for m in err.value.missing}
    assert len(described) == len(err.value.missing) == 1 + len({max(_counts(d, b))
                                                                for d in DISTS for b in BS})
    # without the allreduce row only Guideline (2) lacks something, and only that is named
    no_allreduce = pd.read_csv(path).query("collective != 'allreduce'")
    (mo,) = gl.missing_operations(no_allreduce)
    assert (mo.collective, mo.algorithm, mo.p, mo.block, mo.guidelines) == \
        ("allreduce", "native", P, 1, ("Guideline (2)",))
    partial = gl.evaluate(no_allreduce, missing="skip")
    assert set(partial["guideline"]) == {"gatherv-1"}


# -- evaluation ----------------------------------------------------------------------------
def test_evaluation_sums_the_measured_statistics(measured):
    path, _, _ = measured
    rows = _csv_rows(path)
    ev = gl.evaluate(path)
    allreduce = _find(rows, collective="allreduce", algorithm="native", b=1)
    regular = {(d, b) for d in DISTS for b in BS if len(set(_counts(d, b))) == 1}
    irregular = {(d, b) for d in DISTS for b in BS} - regular
    assert regular and irregular  # seed 0 gives both kinds: Guideline (1) must skip some

    # Guideline (2) on every problem, Guideline (1) only where all m_i are equal (m = m')
    g2 = ev[ev["guideline"] == "gatherv-2"]
    g1 = ev[ev["guideline"] == "gatherv-1"]
    assert len(g2) == len(DISTS) * len(BS) * 2 * 2  # problems x algorithms x stats
    assert set(zip(g1["distribution"], g1["b"])) == regular
    assert (g1["m"] == g1["m_prime"]).all()
    assert len(g1) == len(regular) * 2 * 2

    for e in ev.to_dict("records"):
        counts = _counts(e["distribution"], e["b"])
        assert (e["m"], e["m_prime"]) == (sum(counts), P * max(counts))
        gv = _find(rows, collective="gatherv", algorithm=e["algorithm"],
                   distribution=e["distribution"], b=e["b"])
        gather = _find(rows, collective="gather", algorithm="native", b=max(counts))
        assert int(gather["m_prime"]) == P * max(counts)
        if e["guideline"] == "gatherv-2":
            lhs = _stat(gv, e["stat"])
            rhs = _stat(allreduce, e["stat"]) + _stat(gather, e["stat"])
        else:
            lhs, rhs = _stat(gather, e["stat"]), _stat(gv, e["stat"])
        assert e["lhs"] == pytest.approx(lhs, rel=1e-12)
        assert e["rhs"] == pytest.approx(rhs, rel=1e-12)
        assert e["violated"] == (e["lhs"] > e["rhs"])
        assert e["factor"] == pytest.approx(e["lhs"] / e["rhs"])
        assert (e["ranks"], e["reps"], e["warmup"]) == (P, REPS, WARMUP)

    # slack loosens the bound: with a huge slack nothing is violated
    assert not gl.evaluate(path, slack=1e9)["violated"].any()


def test_evaluation_flags_follow_the_data(measured):
    """Scaling one algorithm's measured times (a copy of real data) flips its flags."""
    path, _, _ = measured
    df = gl.load_results(path)
    slow = df.copy()
    sel = (slow["collective"] == "gatherv") & (slow["algorithm"] == "linear")
    slow.loc[sel, TIME_COLUMNS] *= 1e6  # far above any bound measured here
    ev = gl.evaluate(slow, ["gatherv-2"], algorithms=["linear"])
    assert ev["violated"].all() and (ev["factor"] > 1).all()
    fast = df.copy()
    fast.loc[sel, TIME_COLUMNS] *= 1e-6
    assert not gl.evaluate(fast, ["gatherv-2"], algorithms=["linear"])["violated"].any()
    # Guideline (1) with linear as the operation under test: a very fast gatherv beats gather
    assert gl.evaluate(fast, ["gatherv-1"], algorithms=["linear"])["violated"].all()


# -- the table -----------------------------------------------------------------------------
class _Cells(HTMLParser):
    """Value cells (with data-column) of a guideline table, and its header texts."""

    def __init__(self):
        super().__init__()
        self.cells, self.headers, self.caption = [], [], ""
        self._cur = None
        self._in = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "data-column" in a:
            self._cur = {**a, "text": ""}
            self._in = "td"
        elif tag == "th":
            self.headers.append("")
            self._in = "th"
        elif tag == "caption":
            self._in = "caption"

    def handle_endtag(self, tag):
        if tag == "td" and self._cur is not None:
            self.cells.append(self._cur)
            self._cur = None
        if tag in ("td", "th", "caption"):
            self._in = None

    def handle_data(self, data):
        if self._in == "td" and self._cur is not None:
            self._cur["text"] += data
        elif self._in == "th":
            self.headers[-1] += data
        elif self._in == "caption":
            self.caption += data


def _parse(html):
    p = _Cells()
    p.feed(html)
    return p


def _red(html):
    """(column, stat, distribution, b) of the cells marked red and bold."""
    out = set()
    for c in _parse(html).cells:
        bold_red = "color:#d00000" in c.get("style", "") and "font-weight:bold" in c.get("style", "")
        assert bold_red == (c.get("class") == "violation")
        if bold_red:
            out.add((c["data-column"], c["data-stat"], c["data-distribution"], int(c["data-b"])))
    return out


def _spread(*rows):
    """A side's spread: median - min of its rows' repetitions, summed."""
    return sum(float(r["median_us"]) - float(r["min_us"]) for r in rows)


def _expected_marks(df, within=None):
    """Violations computed here from the rows: which cell the paper's rule marks, with values.

    Only those beyond the run's noise (excess > the larger side's spread); the others go
    into `within` if given.
    """
    rows = df.to_dict("records")
    allreduce = _find(rows, collective="allreduce", algorithm="native", b=1)
    marks = {}

    def judge(key, lhs, rhs, noise):
        if lhs - rhs > noise:
            marks[key[1:]] = key[:1] + (lhs, rhs, noise)
        elif lhs > rhs and within is not None:
            within[key[1:]] = key[:1] + (lhs, rhs, noise)

    for d in DISTS:
        for b in BS:
            counts = _counts(d, b)
            gather = _find(rows, collective="gather", algorithm="native", b=max(counts))
            for stat in ("avg", "min"):
                bound = _stat(allreduce, stat) + _stat(gather, stat)
                for alg, title in (("native", "MPI_Gatherv"), ("linear", "Linear_Gatherv")):
                    gv = _find(rows, collective="gatherv", algorithm=alg, distribution=d, b=b)
                    judge(("(2)", title, stat, d, b), _stat(gv, stat), bound,
                          max(_spread(gv), _spread(allreduce, gather)))
                native = _find(rows, collective="gatherv", algorithm="native", distribution=d,
                               b=b)
                if len(set(counts)) == 1:
                    judge(("(1)", "MPI_Gather", stat, d, b), _stat(gather, stat),
                          _stat(native, stat), max(_spread(gather), _spread(native)))
    return marks


def _sentences(marks):
    out = set()
    for (col, stat, d, b), (num, lhs, rhs, noise) in marks.items():
        counts = _counts(d, b)
        out.add(f"Guideline {num} violated by {col} for {d.replace('_', ' ').capitalize()} "
                f"m={sum(counts)}, m'={P * max(counts)}: {stat} {lhs:.2f} µs > {rhs:.2f} µs "
                f"(×{lhs / rhs:.3g}; noise {noise:.2f} µs)")
    return out


def test_table_layout_and_values(measured):
    path, _, _ = measured
    df = gl.load_results(path)
    t = gl.gatherv_table(df)
    assert t.columns == ["MPI_Gather", "Guideline (2)", "MPI_Gatherv", "Linear_Gatherv"]
    assert t.stats == ["avg", "min"]
    order = [(r["problem"]["distribution"], r["problem"]["b"]) for r in t.rows]
    assert order == [(d, b) for d in DISTS for b in BS]
    rows = df.to_dict("records")
    allreduce = _find(rows, collective="allreduce", b=1)
    frame = t.frame()
    assert list(frame.index.names) == ["problem", "m", "m'"]
    for r in t.rows:
        pr = r["problem"]
        counts = _counts(pr["distribution"], pr["b"])
        assert (pr["m"], pr["m_prime"]) == (sum(counts), P * max(counts))
        gather = _find(rows, collective="gather", b=max(counts))
        for stat in ("avg", "min"):
            assert r["cells"][("MPI_Gather", stat)] == _stat(gather, stat)
            assert r["cells"][("Guideline (2)", stat)] == pytest.approx(
                _stat(allreduce, stat) + _stat(gather, stat), rel=1e-12)
            for alg, title in (("native", "MPI_Gatherv"), ("linear", "Linear_Gatherv")):
                gv = _find(rows, collective="gatherv", algorithm=alg,
                           distribution=pr["distribution"], b=pr["b"])
                assert r["cells"][(title, stat)] == _stat(gv, stat)
                key = (pr["distribution"].capitalize(), pr["m"], pr["m_prime"])
                assert frame.loc[key, (title, stat)] == _stat(gv, stat)

    html = t.to_html()
    p = _parse(html)
    assert [h for h in p.headers[:7]] == ["Problem", "m", "m'", "MPI_Gather", "Guideline (2)",
                                          "MPI_Gatherv", "Linear_Gatherv"]
    assert p.headers[7:15] == ["avg", "min"] * 4
    assert len(p.cells) == len(t.rows) * 8
    for c in p.cells:
        r = next(r for r in t.rows if r["problem"]["distribution"] == c["data-distribution"]
                 and r["problem"]["b"] == int(c["data-b"]))
        assert c["text"] == f"{r['cells'][(c['data-column'], c['data-stat'])]:.2f}"
    # the caption says where and how it was measured
    assert "on 4 ranks" in p.caption and "p = 4 (root 2)" in p.caption
    assert ("not oversubscribed" in p.caption) != bool(df["oversubscribed"].iloc[0])
    assert f"{REPS} repetitions after {WARMUP} warm-up calls" in p.caption
    assert str(df["mpi_library"].iloc[0]) in p.caption and "heavy yield" in p.caption
    # the marks on the measured data, whatever they are, are the violations computed here:
    # those beyond the run's noise; the others are counted in the caption
    within = {}
    marks = _expected_marks(df, within)
    assert _red(html) == set(marks)
    assert {v["text"] for v in t.violations} == _sentences(marks)
    assert {(v["column"], v["stat"], v["distribution"], v["b"]) for v in t.within_noise} == \
        set(within)
    n, k = len(marks), len(within)
    assert (f"{n} violation{'' if n == 1 else 's'} beyond the run's noise; "
            f"{k} difference{'' if k == 1 else 's'} within noise not marked") in p.caption
    text = t.to_text()
    assert "MPI_Gather" in text.splitlines()[2] and "Linear_Gatherv" in text.splitlines()[2]
    assert text.splitlines()[3].split() == ["avg", "min"] * 4


@pytest.mark.parametrize("scaled, shift", [
    ("gatherv-native", 1e6),  # MPI_Gatherv far slower than the padding bound
    ("gather", 1e6),          # MPI_Gather far slower than MPI_Gatherv (and the bound huge)
    ("gatherv-linear", 1e6),  # a tuwviz algorithm violating Guideline (2) in its own column
])
def test_violations_are_red_bold_exactly_where_violated(measured, scaled, shift):
    """Forced violations: one operation's *measured* times shifted by `shift` µs in a copy of
    real rows; a shift keeps the repetitions' spread, so the excess is far beyond the noise."""
    path, _, _ = measured
    df = gl.load_results(path)
    coll, _, alg = scaled.partition("-")
    sel = (df["collective"] == coll) & (df["algorithm"] == (alg or "native"))
    df.loc[sel, TIME_COLUMNS] += shift
    marks = _expected_marks(df)
    t = gl.gatherv_table(df)
    html = t.to_html()
    assert _red(html) == set(marks)
    if scaled == "gatherv-native":
        assert {k for k in marks if k[0] == "MPI_Gatherv"} == \
            {("MPI_Gatherv", s, d, b) for s in ("avg", "min") for d in DISTS for b in BS}
        assert not any(k[0] == "MPI_Gather" for k in marks)
    elif scaled == "gather":
        # Guideline (1) only where m = m' (all blocks equal), never for the irregular problems
        regular = {(d, b) for d in DISTS for b in BS if len(set(_counts(d, b))) == 1}
        assert set(marks) == {("MPI_Gather", s, d, b) for s in ("avg", "min") for d, b in regular}
    else:
        assert {k for k in marks if k[0] == "Linear_Gatherv"} == \
            {("Linear_Gatherv", s, d, b) for s in ("avg", "min") for d in DISTS for b in BS}
    # the text lists exactly these, in words, and stars exactly these cells
    assert {v["text"] for v in t.violations} == _sentences(marks)
    text = t.to_text()
    listed = [line.strip() for line in text.splitlines() if " violated by " in line]
    assert set(listed) == _sentences(marks) and len(listed) == len(marks)
    assert _body_stars(text) == len(marks)  # one star per marked cell
    assert all(f"<li>{escape(s)}</li>" in html for s in _sentences(marks))
    # the paper's convention: only minimum times marked
    t_min = gl.gatherv_table(df, mark=("min",))
    assert _red(t_min.to_html()) == {k for k in marks if k[1] == "min"}


def test_table_algorithms_parameter(measured):
    path, _, _ = measured
    t = gl.gatherv_table(path, algorithms=["linear"])
    assert t.columns == ["MPI_Gather", "Guideline (2)", "Linear_Gatherv"]
    with pytest.raises(ValueError, match="no gatherv rows of algorithm.s. tuw .*native, linear"):
        gl.gatherv_table(path, algorithms=["native", "tuw"])
    assert gl.algorithm_title("gatherv", "tuw") == "TUW_Gatherv"
    assert gl.table_ps(path) == [P]
    assert gl.gatherv_table(path, p=P).rows == gl.gatherv_table(path).rows
    with pytest.raises(ValueError, match="no gatherv rows with p=3 in the results .they have p=4"):
        gl.gatherv_table(path, p=3)


# -- marking only what exceeds the run's noise ---------------------------------------------
# Constructed rows (table logic, not MPI timing): p = 4, problems Same b = 1 and b = 100.
# Times are (min, median, mean); a row's spread is median - min.  Per problem and stat the
# comparisons, their excess lhs - rhs and noise (the larger side's summed spread) are:
#   b=1:   G2 MPI_Gatherv avg 15-14=1, min 11.5-11=0.5, noise max(3.5, 1+2)=3.5: within
#          G2 Linear_Gatherv avg 40-14=26, min 30-11=19, noise max(2, 3)=3: beyond
#   b=100: G1 MPI_Gather avg 50-45=5, noise max(10, 1)=10: within (min 40 < 44: none)
#          G2 MPI_Gatherv avg 45 < 52: none, min 44-41=3, noise max(1, 1+10)=11: within
#          G2 Linear_Gatherv avg 60-52=8 within, min 55-41=14 beyond, noise max(5, 1+10)=11
NOISY = {  # (collective, algorithm, b): (min, median, mean)
    ("allreduce", "native", 1): (1.0, 2.0, 2.0),
    ("gather", "native", 1): (10.0, 12.0, 12.0),
    ("gather", "native", 100): (40.0, 50.0, 50.0),
    ("gatherv", "native", 1): (11.5, 15.0, 15.0),
    ("gatherv", "linear", 1): (30.0, 32.0, 40.0),
    ("gatherv", "native", 100): (44.0, 45.0, 45.0),
    ("gatherv", "linear", 100): (55.0, 60.0, 60.0),
}
BEYOND = {("Linear_Gatherv", "avg", 1), ("Linear_Gatherv", "min", 1), ("Linear_Gatherv", "min", 100)}
WITHIN = {("MPI_Gatherv", "avg", 1), ("MPI_Gatherv", "min", 1), ("MPI_Gather", "avg", 100),
          ("MPI_Gatherv", "min", 100), ("Linear_Gatherv", "avg", 100)}


def _noisy_rows(times=NOISY):
    """Bench rows (every ROW_FIELDS column) with the given times on 4 oversubscribed ranks."""
    rows = []
    for (coll, alg, b), (lo, med, mean) in times.items():
        pr = make_problem(coll, P, "same", b)
        rows.append({
            "collective": coll, "algorithm": alg, "params": "", "p": P, "root": pr.root,
            "distribution": "same", "b": b, "m": sum(pr.counts), "m_prime": P * max(pr.counts),
            "datatype": "int", "reps": REPS, "warmup": WARMUP, "min_us": lo, "median_us": med,
            "mean_us": mean, "max_us": 2 * mean, "ratio_to_native": "", "mpi_library": "MPICH 4",
            "mpi4py": "4", "ranks": P, "hosts": "h", "oversubscribed": True, "heavy_yield": "1",
            "backend": "mpiexec", "date": "2026-01-01", "git_commit": "x", "tuwviz": "0"})
    return pd.DataFrame(rows, columns=ROW_FIELDS)


def _cells(t, which):
    """(column, stat, b) of a table's cells with entries under `which` (marks/within)."""
    return {(col, stat, r["problem"]["b"]) for r in t.rows for (col, stat) in r[which]}


def _body_stars(text):
    """Stars after values in the table body (the caption mentions '*' too)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("---"))
    end = lines.index("", start)
    return sum(line.count("*") for line in lines[start + 1:end])


def test_evaluation_noise_is_the_larger_sides_summed_spread():
    ev = gl.evaluate(_noisy_rows()).set_index(["guideline", "algorithm", "b", "stat"])
    # Guideline (2)'s bound adds Allreduce(1) and Gather(m'): their spreads add up too
    assert ev.loc[("gatherv-2", "linear", 100, "avg"), "noise"] == 5.0 + 10.0 - 4.0  # 11
    assert ev.loc[("gatherv-2", "native", 1, "min"), "noise"] == 3.5
    assert ev.loc[("gatherv-1", "native", 100, "avg"), "noise"] == 10.0
    got = {k: (bool(r.violated), bool(r.beyond_noise)) for k, r in ev.iterrows()}
    assert got[("gatherv-2", "linear", 1, "min")] == (True, True)
    assert got[("gatherv-2", "linear", 100, "avg")] == (True, False)   # 8 µs < 11 µs noise
    assert got[("gatherv-2", "linear", 100, "min")] == (True, True)    # 14 µs > 11 µs
    assert got[("gatherv-1", "native", 100, "avg")] == (True, False)   # 5 µs < 10 µs
    assert not any(b and not v for v, b in got.values())  # beyond noise implies violated
    # an excess equal to the noise is still noise; one repetition (no spread) counts all
    one_rep = {k: (lo, lo, mean) for k, (lo, _, mean) in NOISY.items()}
    ev1 = gl.evaluate(_noisy_rows(one_rep))
    assert (ev1["noise"] == 0).all() and (ev1["beyond_noise"] == ev1["violated"]).all()


def test_table_marks_only_violations_beyond_the_runs_noise():
    t = gl.gatherv_table(_noisy_rows())
    assert _cells(t, "marks") == BEYOND
    assert _cells(t, "within") == WITHIN
    assert {(v["column"], v["stat"], v["b"]) for v in t.violations} == BEYOND
    assert {(v["column"], v["stat"], v["b"]) for v in t.within_noise} == WITHIN
    # the caption counts both and shows the thresholds (3.00 to 11.00 µs here)
    for medium in ("text", "html"):
        cap = t.caption_for(medium)
        assert "3 violations beyond the run's noise; 5 differences within noise not marked" in cap
        assert "median - min" in cap and "(here 3.00-11.00 µs)" in cap
    # HTML: red and bold exactly beyond the noise; within-noise cells say so, unstyled
    html = t.to_html()
    red = {(c, s, b) for c, s, _, b in _red(html)}
    assert red == BEYOND
    cells = _parse(html).cells
    within = {(c["data-column"], c["data-stat"], int(c["data-b"])) for c in cells
              if c.get("class") == "within-noise"}
    assert within == WITHIN
    noise = {(c["data-column"], c["data-stat"], int(c["data-b"])): c.get("data-noise-us")
             for c in cells}
    assert noise[("Linear_Gatherv", "avg", 100)] == "11.00"
    assert noise[("MPI_Gather", "avg", 100)] == "10.00"
    assert noise[("Guideline (2)", "avg", 1)] is None  # no guideline is judged in the bound
    assert "5 differences within the run&#x27;s noise not marked." in html
    # text: one star per marked cell, the within-noise count under the list
    text = t.to_text()
    assert _body_stars(text) == len(BEYOND)
    assert "5 differences within the run's noise not marked." in text.splitlines()
    listed = [line for line in text.splitlines() if " violated by " in line]
    assert len(listed) == 3 and all("noise" in line for line in listed)
    assert "Guideline (2) violated by Linear_Gatherv for Same m=400, m'=400: min 55.00 µs > " \
        "41.00 µs (×1.34; noise 11.00 µs)" in text


def test_table_without_noise_marks_every_difference():
    t = gl.gatherv_table(_noisy_rows(), noise=False)
    assert _cells(t, "marks") == BEYOND | WITHIN and not t.within_noise
    assert {(c, s, b) for c, s, _, b in _red(t.to_html())} == BEYOND | WITHIN
    assert "8 violations marked; the run's noise is not considered" in t.caption_for("html")
    assert _body_stars(t.to_text()) == 8


def test_each_medium_s_caption_says_how_it_marks():
    t = gl.gatherv_table(_noisy_rows())
    text, html = t.caption_for("text"), t.caption_for("html")
    assert "Numbers followed by * violate" in text and "red, bold" not in text
    assert "Numbers in red, bold font violate" in html and "*" not in html
    assert t.to_text().splitlines()[0] == text
    assert _parse(t.to_html()).caption == html
    with pytest.raises(ValueError, match="medium not supported: pdf"):
        t.caption_for("pdf")


def test_cli_guidelines_caption_and_marks_follow_the_noise(cli, tmp_path):
    csv_path, page = tmp_path / "noisy.csv", tmp_path / "noisy.html"
    _noisy_rows().to_csv(csv_path, index=False)
    r = cli("guidelines", str(csv_path), "--no-measure", "--html", str(page))
    assert r.returncode == 0, r.stderr
    caption = r.stdout.splitlines()[0]
    # the terminal prints *, so its caption must say *, not the HTML's red and bold
    assert "Numbers followed by * violate" in caption and "red, bold" not in caption
    assert "3 violations beyond the run's noise; 5 differences within noise not marked" in caption
    assert _body_stars(r.stdout) == 3
    assert "5 differences within the run's noise not marked." in r.stdout
    html = page.read_text(encoding="utf-8")
    assert "Numbers in red, bold font violate" in _parse(html).caption
    assert {(c, s, b) for c, s, _, b in _red(html)} == BEYOND
    r = cli("guidelines", str(csv_path), "--no-measure", "--no-noise")
    assert r.returncode == 0, r.stderr
    assert _body_stars(r.stdout) == 8 and "within" not in r.stdout


def test_cli_guidelines_on_a_real_two_rank_run_states_the_noise(cli, tmp_path):
    """Measured on 2 ranks: whatever the times, the caption's counts are the evaluation's."""
    out = tmp_path / "r2.csv"
    r = cli("bench", "gatherv", "--np", "2", "--b", "1,100", "--algorithms", "native,linear",
            "--reps", "10", "--warmup", "2", "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    r = cli("guidelines", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    caption = r.stdout.splitlines()[0]
    ev = gl.evaluate(out)
    # marked cells: G2 for every algorithm in its own column, G1 for native in MPI_Gather
    judged = ev[(ev["guideline"] == "gatherv-2") | (ev["algorithm"] == "native")]
    beyond = int(judged["beyond_noise"].sum())
    within = int((judged["violated"] & ~judged["beyond_noise"]).sum())
    assert (f"{beyond} violation{'' if beyond == 1 else 's'} beyond the run's noise; "
            f"{within} difference{'' if within == 1 else 's'} within noise not marked") in caption
    assert "Numbers followed by * violate" in caption and "red, bold" not in caption
    lo, hi = judged["noise"].min(), judged["noise"].max()
    assert (f"here {lo:.2f} µs" if f"{lo:.2f}" == f"{hi:.2f}" else f"here {lo:.2f}-{hi:.2f} µs") \
        in caption
    assert _body_stars(r.stdout) == beyond


# -- plot and page -------------------------------------------------------------------------
def test_figure_shows_measured_times_against_the_bound(measured, tmp_path):
    from bokeh.models import LogScale

    path, _, _ = measured
    ev = gl.evaluate(path, ["gatherv-2"])
    layout = gl.guideline_figure(path)
    figs = layout.children
    assert len(figs) == len(DISTS)
    for fig, dist in zip(figs, DISTS):
        assert isinstance(fig.x_scale, LogScale) and isinstance(fig.y_scale, LogScale)
        assert fig.title.text.startswith(f"{dist.capitalize()}, p=4: Guideline (2)")
        caption = fig.select_one({"name": "measured_where"}).text
        assert "on 4 ranks" in caption and "oversubscribed" in caption
        sources = {r.data_source.name: r.data_source for r in fig.renderers
                   if "series" in r.data_source.tags}
        names = {"MPI_Gatherv avg", "MPI_Gatherv min", "Linear_Gatherv avg",
                 "Linear_Gatherv min", "bound avg", "bound min"}
        assert names <= set(sources)
        for stat in ("avg", "min"):
            part = ev[(ev["distribution"] == dist) & (ev["stat"] == stat)].sort_values("m")
            for alg, title in (("native", "MPI_Gatherv"), ("linear", "Linear_Gatherv")):
                rows = part[part["algorithm"] == alg]
                src = sources[f"{title} {stat}"]
                assert src.data["x"] == rows["m"].tolist()
                assert src.data["time"] == rows["lhs"].tolist()
            bound = part.drop_duplicates("m")
            assert sources[f"bound {stat}"].data["time"] == bound["rhs"].tolist()
        bad = ev[(ev["distribution"] == dist) & ev["beyond_noise"]]  # as the table marks
        if len(bad):
            assert sorted(sources["violations"].data["time"]) == sorted(bad["lhs"])
        else:
            assert "violations" not in sources

    page = gl.save_page(tmp_path / "page.html", gl.gatherv_table(path), layout, title="p4")
    html = page.read_text(encoding="utf-8")
    assert 'class="tuwviz-guideline-table"' in html and "<title>p4</title>" in html
    assert "cdn.bokeh.org" not in html
    assert not re.search(r"<(?:script|link)\b[^>]*\b(?:src|href)=[\"']?https?:", html)


# -- a guideline from another paper is one more data entry ---------------------------------
def test_another_papers_guideline_is_one_data_entry(tmp_path):
    """Circulant paper: Reduce_scatter_block(m) ≤ Reduce(m) + Scatter(m), measured."""
    g = gl.Guideline(
        "rsb-3", "(3)", gl.PAPERS["circulant"],
        lhs=(gl.Operation("reduce_scatter_block", "counts", None),),
        rhs=(gl.Operation("reduce", "total", label="MPI_Reduce(m)"),
             gl.Operation("scatter", "counts", label="MPI_Scatter(m)")))
    assert g.statement == "MPI_Reduce_scatter_block(m) ≤ MPI_Reduce(m) + MPI_Scatter(m)"
    path = tmp_path / "rsb.csv"
    bench("reduce_scatter_block", ["native"], ps=[P], bs=[1, 10], reps=5, warmup=1, out=path,
          progress=False)
    missing = gl.missing_operations(path, [g])
    assert {(m.collective, m.block, m.root) for m in missing} == \
        {("reduce", P * 1, 0), ("reduce", P * 10, 0), ("scatter", 1, 0), ("scatter", 10, 0)}
    gl.measure_missing(path, guidelines=[g], progress=False)
    rows = _csv_rows(path)
    ev = gl.evaluate(path, [g])
    assert len(ev) == 2 * 2
    for e in ev.to_dict("records"):
        rsb = _find(rows, collective="reduce_scatter_block", b=e["b"])
        red = _find(rows, collective="reduce", b=P * e["b"])
        sca = _find(rows, collective="scatter", b=e["b"])
        assert e["lhs"] == _stat(rsb, e["stat"])
        assert e["rhs"] == pytest.approx(_stat(red, e["stat"]) + _stat(sca, e["stat"]), rel=1e-12)
        assert e["violated"] == (e["lhs"] > e["rhs"])


# -- command line --------------------------------------------------------------------------
def test_cli_guidelines_measures_companions_and_prints_the_table(cli, tmp_path):
    out, page = tmp_path / "r.csv", tmp_path / "t.html"
    r = cli("bench", "gatherv", "--np", "4", "--dist", "spikes", "--b", "1,10",
            "--algorithms", "native,linear", "--reps", "20", "--out", str(out))
    assert r.returncode == 0, r.stderr
    before = _csv_rows(out)
    assert {x["collective"] for x in before} == {"gatherv"}

    r = cli("guidelines", str(out), "--html", str(page))
    assert r.returncode == 0, r.stderr
    assert "measuring 3 missing companion operation(s)" in r.stderr
    rows = _csv_rows(out)
    blocks = {max(_counts("spikes", b)) for b in (1, 10)}
    assert {(x["collective"], int(x["b"])) for x in rows[len(before):]} == \
        {("allreduce", 1)} | {("gather", blk) for blk in blocks}
    lines = r.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Problem"))
    assert lines[header].split() == ["Problem", "m", "m'", "MPI_Gather", "Guideline", "(2)",
                                     "MPI_Gatherv", "Linear_Gatherv"]
    body = lines[header + 3: header + 5]
    assert body[0].startswith("Spikes")
    for b, line in zip((1, 10), body):
        counts = _counts("spikes", b)
        assert line.split()[-10:-8] == [str(sum(counts)), str(4 * max(counts))]
    assert "on 4 ranks" in r.stdout and "20 repetitions" in r.stdout
    assert "No guideline violations beyond the run's noise." in r.stdout or \
        " violated by " in r.stdout
    html = page.read_text(encoding="utf-8")
    assert 'class="tuwviz-guideline-table"' in html and "Linear_Gatherv" in html
    assert "cdn.bokeh.org" not in html
    assert not re.search(r"<(?:script|link)\b[^>]*\b(?:src|href)=[\"']?https?:", html)

    # a second run measures nothing; JSON is the evaluation
    r = cli("guidelines", str(out), "--json")
    assert r.returncode == 0 and "measuring" not in r.stderr
    assert len(_csv_rows(out)) == len(rows)
    ev = json.loads(r.stdout)
    assert {e["guideline"] for e in ev} == {"gatherv-2"} | (
        {"gatherv-1"} if any(len(set(_counts("spikes", b))) == 1 for b in (1, 10)) else set())
    assert {e["algorithm"] for e in ev} == {"native", "linear"}
    assert all(e["violated"] == (e["lhs"] > e["rhs"]) for e in ev)


def test_cli_guidelines_help(cli):
    r = cli("--help")
    assert r.returncode == 0 and "guidelines" in r.stdout
    r = cli("guidelines", "--help")
    assert r.returncode == 0
    for flag in ("--measure-missing", "--no-measure", "--html", "--json", "--algorithms"):
        assert flag in r.stdout


def test_cli_guidelines_bad_input(cli, tmp_path):
    def one_line_error(r, code, text):
        assert r.returncode == code, (r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: ")
        assert text in r.stderr, r.stderr

    one_line_error(cli("guidelines", str(tmp_path / "nope.csv")), 2, "no such file")
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    one_line_error(cli("guidelines", str(other)), 2, "is not a tuwviz bench CSV")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    one_line_error(cli("guidelines", str(empty)), 2, "is not a tuwviz bench CSV")
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"\x00\xff\xfe binary")
    one_line_error(cli("guidelines", str(garbage)), 2, "is not a tuwviz bench CSV")

    allreduce = tmp_path / "allreduce.csv"
    r = cli("bench", "allreduce", "--np", "2", "--b", "1", "--reps", "3", "--out", str(allreduce))
    assert r.returncode == 0, r.stderr
    # an Allreduce alone on p = 2, b = 1: no vector p divides, nothing to compare with
    one_line_error(cli("guidelines", str(allreduce)), 2,
                   "no consistency guideline applies to these rows (they have allreduce)")

    gv = tmp_path / "gv.csv"
    r = cli("bench", "gatherv", "--np", "2", "--b", "1", "--reps", "3", "--out", str(gv))
    assert r.returncode == 0, r.stderr
    one_line_error(cli("guidelines", str(gv), "--no-measure"), 2,
                   "missing measurements: gather (native), p=2, root 1, 1 element per process")
    one_line_error(cli("guidelines", str(gv), "--no-measure", "--algorithms", "tuw"), 2,
                   "--algorithms: 'tuw' has no rows in")
