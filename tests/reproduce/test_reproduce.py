"""tuwviz reproduce: the papers' data, verdicts against known answers, the saved findings,
interruption, bad input, and the report in a real browser.

The quick tier runs the claims the model and the papers' formulas answer (no MPI, no
SMPI); the full tier runs ``reproduce all --scale quick`` end to end.
"""
from __future__ import annotations

import csv
import json
import math
from html import escape
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO, hang_guard
from tuwviz import model
from tuwviz.platforms import platform
from tuwviz.problems import DISTRIBUTIONS, make_problem
from tuwviz.reproduce import available, claims_of, reproduce
from tuwviz.reproduce.claims import (DERIVED, DIFFERS, IN_SHAPE, MEANINGS, NOT_HERE, REPRODUCED,
                                     VERDICTS, Finding, Value, judge_factor, judge_range)
from tuwviz.reproduce.papers.allgatherv import closed_forms
from tuwviz.reproduce.published import DATA_DIR, published


def _copy_data(tmp_path, paper: str, edit) -> str:
    """A copy of the paper's data file with `edit` applied to its parsed claims' text."""
    text = (DATA_DIR / f"{paper}.toml").read_text(encoding="utf-8")
    path = tmp_path / f"{paper}.toml"
    path.write_text(edit(text), encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------- the papers' numbers

def test_gatherv_tables_are_the_papers_cell_for_cell():
    pub = published("gatherv")
    for name, p in (("table1", 560), ("table2", 560), ("table3", 560), ("table4", 6400),
                    ("table5", 6400)):
        df = pub.table(name)
        assert len(df) == 30 and df.attrs["p"] == p
        assert set(df.problem) <= set(DISTRIBUTIONS)
        assert list(df.b.unique()) == [1, 10, 100, 1000, 10000]
        # the regular problems' m is p b, as the paper's m column says
        same = df[df.problem == "same"]
        assert list(same.m) == [p * b for b in same.b]
    t1 = pub.table("table1")
    first = t1.iloc[0]
    assert (first.gather_avg, first.gatherv_min, first.tuw_min) == (337.83, 1194.95, 20.98)
    assert first.marked == ["gatherv_min"]  # the red, bold cell of Table 1's first row
    t3 = pub.table("table3")
    assert t3[(t3.problem == "same") & (t3.b == 10000)].marked.iloc[0] == ["tuw_min"]


def test_tables_4_and_5_are_set_cell_by_cell_beside_the_model(tmp_path):
    from tuwviz.reproduce import Context
    from tuwviz.reproduce.papers.gatherv import _paper_rows, judge_guideline_6400
    from tuwviz.reproduce.store import Store

    pub = published("gatherv")
    ctx = Context(pub, "quick", Store(tmp_path), progress=False)
    entry = pub.claim("guideline_6400")
    # one modelled cell: Same, b = 1, its binomial Gatherv at exactly Table 5's k-nomial minimum
    cell = {"problem": "same", "b": 1, "rhs": 200.0, "gather": 70.1, "tuw": 100.0,
            "binomial": 123.98}
    ev = {"p": 6400, "root": 3200, "cells": [cell], "tables": _paper_rows(ctx, entry),
          "paper": {"Intel MPI 2017.1": {"gatherv": 13, "tuw": 0, "cells": 30}}}
    html = judge_guideline_6400(ev, entry).html
    assert "Table 4 (Intel MPI 2017.1, default algorithm settings) cell by cell" in html
    assert "Table 5 (Intel MPI 2017.1, binomial MPI_Gather, k-nomial MPI_Gatherv) cell by" in html
    table5 = html[html.index("<p>Table 5"):]
    same_b1 = table5[table5.index("<tr><td>same</td>"):].split("</tr>")[0]
    cells = re.findall(r'<td class="num">([^<]*)</td>', same_b1)
    # b, then paper / ours / ratio for MPI_Gather, Guideline (2), MPI_Gatherv, TUW_Gatherv
    assert cells[:1] == ["1"] and cells[1:4] == ["35.05", "70.1", "2"]
    assert cells[7:10] == ["124", "124", "1"] and cells[10:13] == ["53.17", "100", "1.9"]
    assert html.count("<tr><td>random</td>") == 2 * 5  # every row of both tables, unmeasured: -
    assert '<td class="num">-</td>' in html


def test_figure_6_shows_the_papers_stated_limits_as_markers():
    from tuwviz.reproduce.page import figure
    from tuwviz.reproduce.papers.intergroup import judge_improvement_curves

    pub = published("intergroup")
    limits = pub.claim("eq5_settings")["converge"]
    ev = {"sizes": [1024, 4 << 20], "curves": {"1": [1.5, 6.9], "2": [1.2, 4.8]},
          "eq5": {"1": 7.0, "2": 4.84}, "paper": {"1": limits[0], "2": limits[1]}}
    spec = judge_improvement_curves(ev, pub.claim("improvement_curves")).figure
    marks = spec["series"]["the paper's limits (Eq. (5))"]
    assert marks == {"x": [4 << 20, 4 << 20], "y": [7.0, 4.84], "source": "paper",
                     "line": False}
    glyphs = [type(r.glyph).__name__ for r in figure(spec).renderers]
    assert glyphs.count("Line") == 2 and glyphs.count("Scatter") == 3  # markers: no line


def test_every_claim_is_cited_and_has_a_check():
    for paper in available():
        pub = published(paper)
        ids = [c.id for c in claims_of(paper)]
        assert ids == pub.claims() and ids
        for cid in ids:
            entry = pub.claim(cid)
            assert entry["title"] and entry["source"] and entry["quote"], (paper, cid)


def test_a_data_file_and_its_checks_must_agree(tmp_path):
    path = _copy_data(tmp_path, "allgatherv",
                      lambda t: t + '\n[claims.extra]\ntitle = "x"\nsource = "y"\nquote = "z"\n')
    with pytest.raises(Exception, match="claims without a function: \\['extra'\\]"):
        claims_of("allgatherv", published("allgatherv", path))


# ---------------------------------------------------------------- verdict rules

def test_verdict_rules():
    assert judge_factor(15.2, 15.47, 0.1) == REPRODUCED
    assert judge_factor(5.0, 15.47, 0.1) == IN_SHAPE
    assert judge_factor(0.5, 15.47, 0.1) == DIFFERS
    assert judge_factor(1.8, 1.0, 0.2) == DIFFERS  # "similar" is not met by 1.8x
    assert judge_factor(float("nan"), 2.0) == NOT_HERE
    assert judge_range(14.3, 10, 15.47) == REPRODUCED
    assert judge_range(16, 10, 15.47) == IN_SHAPE
    assert judge_range(0.9, 5, None) == DIFFERS
    with pytest.raises(ValueError, match="needs its reason"):
        Finding(REPRODUCED, " ")
    with pytest.raises(ValueError, match="unknown source"):
        Value("x", "guess", 1.0)


# ---------------------------------------------------------------- closed forms

@pytest.mark.parametrize("dist", ["broadcast", "spike", "geometric", "half_full"])
def test_ring_closed_form_is_exact_and_the_pipelined_bound_holds(dist):
    alpha, beta = 3e-6, 2e-9
    for p in (5, 24, 96):
        pr = make_problem("allgatherv", p, dist, 50_000, datatype="byte")
        ring, bound = closed_forms(pr, 4096, alpha, beta)
        sim_ring = model.simulate(model.schedule("allgatherv", "ring", pr), alpha, beta).time
        sim_pipe = model.simulate(model.schedule("allgatherv", "pipelined", pr,
                                                 block_bytes=4096), alpha, beta).time
        assert ring == pytest.approx(sim_ring, rel=1e-9)
        assert sim_pipe <= bound * (1 + 1e-9)


# ---------------------------------------------------------------- known answers

def test_known_verdicts_and_a_wrong_paper_value(tmp_path):
    """Model and formula claims of both papers give their known verdicts; Figure 3's
    round count changed in a copy of the data turns its verdict into differs."""
    rep = reproduce(["gatherv", "allgatherv"], "quick", tmp_path / "a", progress=False,
                    only=["theorem_2_4", "binomial_worst_case", "k_ported", "eq1_rounds",
                          "eq2_block_size", "smp_reranking"], vary=False)
    assert rep.verdict("gatherv", "theorem_2_4") == REPRODUCED
    assert rep.verdict("gatherv", "binomial_worst_case") == REPRODUCED
    assert rep.verdict("gatherv", "k_ported") == NOT_HERE
    assert rep.verdict("allgatherv", "eq1_rounds") == REPRODUCED
    assert rep.verdict("allgatherv", "eq2_block_size") == IN_SHAPE  # Half full: 1.14x
    assert rep.verdict("allgatherv", "smp_reranking") == REPRODUCED
    assert rep.counts()["failed"] == 0 and not rep.failed
    eq1 = next(r["finding"] for r in rep.results if r["claim"] == "eq1_rounds")
    assert {(v.source, v.value) for v in eq1.values} >= {("paper", 11), ("paper", 9),
                                                         ("model", 11), ("model", 9)}

    wrong = _copy_data(tmp_path, "allgatherv", lambda t: t.replace("rounds = 11", "rounds = 12"))
    rep2 = reproduce("allgatherv", "quick", tmp_path / "b", progress=False,
                     only=["eq1_rounds"], data={"allgatherv": wrong})
    assert rep2.verdict("allgatherv", "eq1_rounds") == DIFFERS


def test_a_verdict_is_judged_again_with_the_assumed_latencies_halved_and_doubled(tmp_path):
    """A claim that reads a platform is judged again with its latencies and per-message
    overhead halved and doubled (bandwidths as assumed); the page and summary.csv say whether
    the verdict survives.  One that reads none is not varied."""
    rep = reproduce("allgatherv", "quick", tmp_path / "v", progress=False,
                    only=["eq1_rounds", "smp_reranking", "eq2_block_size"])
    f = {r["claim"]: r["finding"] for r in rep.results}
    assert f["eq1_rounds"].varied == {} and f["eq1_rounds"].survives is None  # counts rounds
    assert f["smp_reranking"].varied == {"0.5": REPRODUCED, "2": REPRODUCED}
    assert f["smp_reranking"].survives is True
    # Eq. (2)'s block size against the model's best on the SX-8's assumed numbers: with
    # start-ups twice as dear, Half full's estimate falls outside the claim's tolerance
    assert f["eq2_block_size"].verdict == IN_SHAPE
    assert f["eq2_block_size"].varied == {"0.5": IN_SHAPE, "2": DIFFERS}
    assert f["eq2_block_size"].survives is False
    html = rep.report.read_text()
    assert "the verdict <b>does not survive</b> them" in html and "the verdict survives them" in html
    assert re.search(r"2 verdicts depend on a platform's assumed numbers; .*: 1 survive both; "
                     r"these do not: <a href=\"#allgatherv-eq2_block_size\">", html)
    with open(tmp_path / "v" / "summary.csv", newline="") as fh:
        rows = {r["claim"]: r for r in csv.DictReader(fh)}
    assert (rows["eq2_block_size"]["latencies_x0.5"], rows["eq2_block_size"]["latencies_x2"]) \
        == (IN_SHAPE, DIFFERS)
    assert rows["eq1_rounds"]["latencies_x2"] == ""
    # a run that does not vary makes its own finding: the saved one's key says it was varied
    again = reproduce("allgatherv", "quick", tmp_path / "v", progress=False,
                      only=["eq2_block_size"], vary=False)
    assert again.results[0].get("reused") is None and again.results[0]["finding"].varied == {}


def test_known_verdicts_of_the_circulant_intergroup_and_course_papers(tmp_path):
    rep = reproduce(["circulant", "intergroup", "course"], "quick", tmp_path, progress=False,
                    only=["table_ii", "butterfly_allgather", "eq1_root_gathering",
                          "theorem_1", "euro_mpi_two_step", "rounds_bandwidth"])
    assert rep.verdict("circulant", "table_ii") == REPRODUCED
    assert rep.verdict("circulant", "butterfly_allgather") == DERIVED  # formula vs formula
    assert rep.verdict("intergroup", "eq1_root_gathering") == DERIVED  # Eq. (1)'s algebra
    assert rep.verdict("intergroup", "theorem_1") == REPRODUCED
    assert rep.verdict("intergroup", "euro_mpi_two_step") == NOT_HERE
    assert rep.verdict("course", "rounds_bandwidth") == REPRODUCED
    skips = next(r["finding"] for r in rep.results if r["claim"] == "table_ii")
    assert Value("skips[0..5], p = 33", "paper", "1 2 3 5 9 17", "", "Table II") in skips.values
    # Table II with a wrong published skip: the check must say so
    wrong = _copy_data(tmp_path, "circulant", lambda t: t.replace("p33 = [1, 2, 3, 5, 9, 17]",
                                                                  "p33 = [1, 2, 4, 8, 16, 32]"))
    rep2 = reproduce("circulant", "quick", tmp_path / "w", progress=False, only=["table_ii"],
                     data={"circulant": wrong})
    assert rep2.verdict("circulant", "table_ii") == DIFFERS


def test_the_model_gives_the_allgatherv_headline_bound():
    """32 x 29 / (29 + 31) = 15.47: the model without start-ups gives exactly the bound."""
    bound = published("allgatherv").claim("headline")["bound"]
    pr = make_problem("allgatherv", 30, "broadcast", 32 << 20, datatype="byte")
    ring = model.simulate(model.schedule("allgatherv", "ring", pr), 0, 1e-9).time
    pipe = model.simulate(model.schedule("allgatherv", "pipelined", pr, block_bytes=1 << 20),
                          0, 1e-9).time
    assert ring / pipe == pytest.approx(bound, rel=1e-9)
    assert judge_range(ring / pipe, 10, bound * 1.001) == REPRODUCED


# ---------------------------------------------------------------- saved, reused, failed

def _simulations() -> int:
    """SMPI runs this test session has started so far (its launch log)."""
    log = Path(os.environ["TUWVIZ_LAUNCH_LOG"])
    return sum(ln.startswith("smpi ") for ln in log.read_text().splitlines()) if log.exists() else 0


def test_claims_reading_the_same_simulation_run_it_once(tmp_path):
    from tuwviz.reproduce import Context
    from tuwviz.reproduce.papers._common import smpi_bench
    from tuwviz.reproduce.store import Store

    ctx = Context(published("allgatherv"), "quick", Store(tmp_path), progress=False)
    args = ("allgatherv", ["ring"], "sx8", 4, ["regular"])
    before = _simulations()
    first = smpi_bench(ctx, "shared", *args, [10], ppn=1)
    again = smpi_bench(ctx, "shared", *args, [10], ppn=1)  # a second claim, same simulation
    assert _simulations() == before + 1
    assert again.equals(first) and set(first.b) == {10}
    other = smpi_bench(ctx, "shared", *args, [20], ppn=1)  # other arguments: simulated
    assert _simulations() == before + 2 and set(other.b) == {20}
    fresh = Context(published("allgatherv"), "quick", Store(tmp_path), progress=False)
    smpi_bench(fresh, "shared", *args, [10], ppn=1)  # another run simulates again
    assert _simulations() == before + 3


def test_findings_are_saved_reused_and_rerun_when_their_data_change(tmp_path):
    # the claims are cheap ones (the mechanism is the same for every claim)
    out = tmp_path / "r"
    reproduce("allgatherv", "quick", out, progress=False, only=["eq1_rounds", "smp_reranking"])
    saved = out / "allgatherv" / "findings" / "smp_reranking.json"
    first = json.loads(saved.read_text())
    mtime = saved.stat().st_mtime_ns
    rep = reproduce("allgatherv", "quick", out, progress=False, only=["smp_reranking"])
    assert saved.stat().st_mtime_ns == mtime  # reused, not run again
    assert rep.verdict("allgatherv", "smp_reranking") == first["finding"]["verdict"]
    other = _copy_data(tmp_path, "allgatherv",
                       lambda t: t.replace('source = "Section 2.2, Figure 1"',
                                           'source = "Section 2.2, Figure 1, checked"'))
    assert "Figure 1, checked" in open(other).read()
    reproduce("allgatherv", "quick", out, progress=False, only=["smp_reranking"],
              data={"allgatherv": other})
    assert saved.stat().st_mtime_ns != mtime  # its claim's data changed: run again
    # a finding made from other sources (an edited module, kernel or platform, another
    # SimGrid) is run again too: here the file says it came from another source state
    d = json.loads(saved.read_text())
    assert d["made"] and d["key"]["sources"] and d["key"]["simgrid"]
    d["key"]["sources"] = "0" * 16
    saved.write_text(json.dumps(d))
    mtime = saved.stat().st_mtime_ns
    rep = reproduce("allgatherv", "quick", out, progress=False, only=["smp_reranking"])
    assert saved.stat().st_mtime_ns != mtime
    assert json.loads(saved.read_text())["key"]["sources"] != "0" * 16
    html = rep.report.read_text()
    assert "made " in html and escape(MEANINGS[DERIVED]) in html  # when; what verdicts mean
    rows = (out / "summary.csv").read_text().splitlines()
    assert rows[0].startswith("paper,claim,title,source,scale,verdict,reason")


def test_a_failing_claim_is_reported_and_the_others_kept(tmp_path, cli):
    broken = _copy_data(tmp_path, "allgatherv", lambda t: t.replace("spread_rounds = 9\n", ""))
    rep = reproduce("allgatherv", "quick", tmp_path / "r", progress=False,
                    only=["eq1_rounds", "smp_reranking"], data={"allgatherv": broken})
    assert rep.failed == ["allgatherv/eq1_rounds"]
    assert rep.verdict("allgatherv", "eq1_rounds") == "failed"
    assert rep.verdict("allgatherv", "smp_reranking") == REPRODUCED
    html = rep.report.read_text()
    assert "KeyError" in html and "spread_rounds" in html
    summary = (tmp_path / "r" / "summary.csv").read_text()
    assert "eq1_rounds" in summary and "failed" in summary


def test_an_interrupted_run_keeps_its_finished_claims_and_a_rerun_reuses_them(tmp_path):
    out = tmp_path / "r"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "tuwviz.cli", "reproduce", "intergroup",
                             "--claims", "min_links,improvement_curves,euro_mpi_two_step", "--out",
                             str(out)], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=REPO, env=env,
                            # a shell's background job ignores SIGINT, a terminal's does not
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    # min_links is done at once; interrupt while improvement_curves (seconds of model
    # schedules) runs; claims run in the data file's order
    for line in proc.stderr:
        lines.append(line)
        if "improvement_curves ..." in line:
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.communicate(timeout=hang_guard(300))[1]
    assert proc.returncode == 128 + signal.SIGINT, "".join(lines) + rest
    assert "finished claims are saved" in rest and "report.html" in rest
    summary = (out / "summary.csv").read_text()
    assert re.search(r"intergroup,min_links,.*,differs,", summary)
    assert re.search(r"intergroup,improvement_curves,.*,not run,interrupted while running",
                     summary)
    assert re.search(r"intergroup,euro_mpi_two_step,.*,not run,the run was interrupted before",
                     summary)
    assert (out / "report.html").is_file()
    again = subprocess.run([sys.executable, "-m", "tuwviz.cli", "reproduce", "intergroup",
                            "--claims", "min_links", "--out", str(out)],
                           capture_output=True, text=True, cwd=REPO, timeout=hang_guard(300))
    assert again.returncode == 0, again.stderr
    assert "min_links: differs (reused)" in again.stderr


# ---------------------------------------------------------------- the command

def test_cli_lists_claims_and_rejects_bad_input(cli, tmp_path):
    r = cli("reproduce", "allgatherv", "--list")
    assert r.returncode == 0 and "headline" in r.stdout and "Section 3.1" in r.stdout
    r = cli("reproduce", "gatherv", "--list", "--json")
    assert {c["claim"] for c in json.loads(r.stdout)} == set(published("gatherv").claims())
    r = cli("reproduce", "nopaper")
    assert r.returncode == 2 and "gatherv" in r.stderr and "allgatherv" in r.stderr
    r = cli("reproduce", "gatherv", "--claims", "headline,nosuch", "--out", str(tmp_path / "x"))
    assert r.returncode == 1 and "unknown claim(s) nosuch" in r.stderr and "k_ported" in r.stderr
    r = cli("reproduce", "gatherv", "--scale", "huge")
    assert r.returncode == 2 and "quick" in r.stderr
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = cli("reproduce", "gatherv", "--claims", "k_ported", "--out", str(blocker / "sub"))
    assert r.returncode == 2 and "cannot write there" in r.stderr


def test_cli_writes_the_report_and_tables(cli, tmp_path):
    out = tmp_path / "r"
    r = cli("reproduce", "allgatherv", "--claims", "eq1_rounds,smp_reranking", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "eq1_rounds" in r.stdout and "reproduced" in r.stdout
    values = (out / "values.csv").read_text()
    assert "allgatherv,eq1_rounds,r = b - min b_i,paper,11,rounds" in values
    html = (out / "report.html").read_text()
    assert "<h2>Summary</h2>" in html and "Figure 1" in html


# ---------------------------------------------------------------- the page, offline

def test_report_opens_offline_in_chromium(browser, tmp_path):
    rep = reproduce("allgatherv", "quick", tmp_path / "r", progress=False,
                    only=["eq2_block_size", "smp_reranking", "eq1_rounds"], vary=False)
    html = rep.report.read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=\"http", html)  # nothing fetched
    page = browser.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda req: requests.append(req.url))
    page.goto(rep.report.as_uri())
    page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0")
    page.locator("canvas").first.wait_for(state="visible", timeout=hang_guard(120_000))
    cells = page.locator("table").first.locator("td").all_inner_texts()
    assert cells[:3] == ["allgatherv", "2", "1"]  # two claims reproduced, Eq. (2) in shape
    assert page.locator("[id='allgatherv-eq2_block_size'] canvas").count() >= 1
    assert not errors
    assert all(u.startswith("file:") or u.startswith("data:") for u in requests), requests
    page.close()


# ---------------------------------------------------------------- end to end (full tier)

@pytest.mark.full
def test_reproduce_all_quick_from_the_command_line(cli, tmp_path, browser):
    out = tmp_path / "all"
    r = cli("reproduce", "all", "--out", str(out), timeout=3600)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out / "summary.csv", newline="") as f:
        verdicts = {(r["paper"], r["claim"]): r["verdict"] for r in csv.DictReader(f)}
    assert set(verdicts) == {(paper, cid) for paper in available()
                             for cid in published(paper).claims()}
    assert set(verdicts.values()) <= set(VERDICTS), verdicts
    assert verdicts["allgatherv", "headline"] == REPRODUCED
    assert verdicts["gatherv", "headline"] == REPRODUCED
    assert verdicts["gatherv", "k_ported"] == NOT_HERE
    assert verdicts["allgatherv", "regular_vs_half_full"] == DIFFERS
    # gatherv-ib36's 1 us per message is what platforms.toml says it is: the geometric mean
    # of the overheads the headline fits to the Same cells, which no verdict judges
    fits = json.loads((out / "gatherv" / "findings" / "headline.json").read_text())
    os_ = [fit["o"] for fit in fits["evidence"]["fits"].values()]
    assert math.prod(os_) ** (1 / len(os_)) == pytest.approx(
        platform("gatherv-ib36").overhead, rel=0.05)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto((out / "report.html").as_uri())
    page.locator("canvas").first.wait_for(state="visible", timeout=hang_guard(120_000))
    assert not errors
    page.close()
