"""Intergroup Allgather and Allgatherv on inter-communicators (Kang, Träff et al., ParCo
2019): the kernels against the library's intergroup collectives, the messages Algorithms 1
and 2 and root gathering really send, and bad input."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from tuwviz.errors import RankFailure
from tuwviz.model.topology import ig_part, ig_part_of, ig_recv_order
from tuwviz.problems import make_problem
from tuwviz.run.trace import trace
from tuwviz.experiments.verify import verify, verify_cases

from support import hang_guard

INTER = {"allgather": ["native", "root_gathering", "segmented"],
         "allgatherv": ["native", "root_gathering", "segmented"]}

# Figure 1 (6, 2) and Figure 2 (8, 3) of the paper, both orders, single processes, a tie
QUICK_GROUPS = ["1,1", "6,2", "2,6", "8,3", "3,3", "1,4"]


def _full_groups():
    out = set()
    for n in range(2, 18):  # every total p + q up to 17
        for q in {1, n // 4, n // 2, n - n // 2}:
            if 1 <= q < n:
                out |= {(n - q, q), (q, n - q)}
    return sorted(out)


@pytest.mark.parametrize("groups, bs", [
    pytest.param(QUICK_GROUPS, (0, 17), id="quick"),
    # root gathering's broadcast in A by scatter and ring (>= 12,288 bytes, >= 8 processes)
    pytest.param(["9,3"], (1100,), id="large"),
    pytest.param(_full_groups(), (0, 1, 17), id="p+q<=17", marks=pytest.mark.full)])
def test_every_intergroup_algorithm_equals_the_librarys(groups, bs):
    report = verify(["allgather", "allgatherv"], groups=groups, bs=bs)
    assert report.ok, report.table()
    runs = Counter((r["collective"], r["algorithm"]) for r in report.results)
    assert set(runs) == {(c, a) for c, algs in INTER.items() for a in algs}
    # every group pair, distribution (regular, arithmetic, QiaoK's) and block-size ratio ran,
    # and the zero-size call with NULL buffers once per group pair
    per = len(groups) * (3 * len(bs) * 3 + 1)  # B's b as A's, 2b+3, and A's 2b+3
    assert set(runs.values()) == {per}
    assert Counter(r["types"] for r in report.results)["null"] == len(groups) * len(runs)
    assert {(r["p"], r["q"]) for r in report.results} == {
        tuple(map(int, g.split(","))) if isinstance(g, str) else g for g in groups}


def test_the_papers_settings_scaled_down_equal_the_librarys():
    # settings 1-8 (Section 5) on 4+4 and 1+1 processes (p = q) or 7+2 and 11+3 (about
    # 25/7), empty and non-empty blocks, k_A = 4 k_B and k_B = 4 k_A, arithmetic counts
    from tuwviz.model.intergroup_cost import SETTINGS, setting_problem
    from tuwviz.experiments.verify import run_verify, verify_case

    cases = []
    for number, s in SETTINGS.items():
        for groups in ([(4, 4), (1, 1)] if s.equal_groups else [(7, 2), (11, 3)]):
            for b in (0, 5):
                pr = setting_problem(number, 0, b, groups=groups)
                cases += [verify_case(pr, alg) for alg in INTER[s.collective]]
    report = run_verify(cases)
    assert report.ok, report.table()
    assert len(report.results) == 8 * 2 * 2 * 3


def _by_dir(events, rank, remote=True):
    return [e for e in events[rank] if e["remote"] == remote]


def _algorithm_2_problem():
    # blocks 3 1 4 1 5 2 in A (K_A = 16) go to q = 3 receivers in parts [0,6) [6,11) [11,16)
    pr = make_problem("allgatherv", 6, "regular", 1, q=3, b_b=2)
    return type(pr)(**{**pr.__dict__, "counts": (3, 1, 4, 1, 5, 2, 2, 2, 2), "meta": {}})


#: The problems whose messages the tests below read, traced in one run (the module's
#: `figures` fixture): name -> (problem, algorithm)
FIGURES = {
    # p = 8, q = 3 (Figure 2), k_A = 5, k_B = 7 ints
    "figure_2": (make_problem("allgather", 8, "regular", 5, q=3, b_b=7), "segmented"),
    "algorithm_2": (_algorithm_2_problem(), "segmented"),
    "larger_second": (make_problem("allgather", 2, "regular", 3, q=6), "segmented"),
    "rg_allgather": (make_problem("allgather", 3, "regular", 4, q=2), "root_gathering"),
    "rg_allgatherv": (make_problem("allgatherv", 3, "arithmetic", 2, q=2), "root_gathering"),
    # B's 3 x 1100 ints (13,200 bytes) into A's 9 processes
    "rg_large": (make_problem("allgather", 9, "regular", 10, q=3, b_b=1100), "root_gathering"),
}


def _sweep_problems(collective: str, sweep: str) -> list:
    """The problems of `collective` that trace = model compares in `sweep` (TRACE_SWEEPS)."""
    return [make_problem(collective, p, dist, b, q=q, b_b=bb, seed=p + q)
            for groups, dists, sizes in TRACE_SWEEPS[sweep]
            for p, q in groups for dist in dists for b, bb in sizes]


@pytest.fixture(scope="module")
def traced():
    """``traced(key)``: traces of FIGURES ("figures") or of a TRACE_SWEEPS sweep, as
    ``[(problem, algorithm, events)]``.  One mpiexec job per tier: the figures and the
    quick sweep run together, the full sweep alone."""
    cache: dict[str, list] = {}

    def get(key: str) -> list:
        if key not in cache:
            keys = ["figures", "quick"] if key in ("figures", "quick") else [key]
            jobs = {k: list(FIGURES.values()) if k == "figures" else
                    [(pr, alg) for coll, alg in MODELLED for pr in _sweep_problems(coll, k)]
                    for k in keys}
            flat = [job for k in keys for job in jobs[k]]
            events = iter(trace([pr for pr, _ in flat], [alg for _, alg in flat]))
            for k in keys:
                cache[k] = [(pr, alg, next(events)) for pr, alg in jobs[k]]
        return cache[key]

    return get


@pytest.fixture(scope="module")
def figures(traced):
    return {name: events for name, (_, _, events) in zip(FIGURES, traced("figures"))}


def test_algorithm_1_sends_figure_2s_messages(figures):
    # p = 8, q = 3 (Figure 2): s_0 = {a0..a2}, s_1 = {a3..a5}, s_2 = {a6, a7}; k_A = 5,
    # k_B = 7 ints: b_j cuts its block into |s_j| segments (3 2 2, 3 2 2, 4 3)
    ev = figures["figure_2"]
    for i in range(8):
        j = ig_part_of(8, 3, i)
        first, n = ig_part(8, 3, j)
        _, seg = ig_part(7, n, i - first)
        sends, recvs = (
            [(e["peer"], e["bytes"]) for e in _by_dir(ev, i) if e["dir"] == d] for d in ("send", "recv"))
        assert sends == [(8 + j, 5 * 4)] and recvs == [(8 + j, seg * 4)], i
        assert all(e["group"] == "A" and e["peer_group"] == "B" for e in _by_dir(ev, i))
    for j in range(3):
        first, n = ig_part(8, 3, j)
        sends = [(e["peer"], e["bytes"]) for e in _by_dir(ev, 8 + j) if e["dir"] == "send"]
        assert sends == [(first + i, ig_part(7, n, i)[1] * 4) for i in range(n)]
        # then B gathers the blocks inside B, A the segments inside A: only local messages
        local = _by_dir(ev, 8 + j, remote=False)
        assert local and all(e["peer_group"] == "B" and 8 <= e["peer"] < 11 for e in local)
        assert ev[8 + j][0]["local_rank"] == j


def test_algorithm_2_receives_in_section_4_1s_order(figures):
    # blocks 3 1 4 1 5 2 in A (K_A = 16) go to q = 3 receivers in parts [0,6) [6,11) [11,16)
    ev = figures["algorithm_2"]
    for k in range(3):
        recvs = [e["peer"] for e in _by_dir(ev, 6 + k) if e["dir"] == "recv"]
        assert recvs == ig_recv_order(6, [3, 1, 4, 1, 5, 2], 3, k)
    assert [e["peer"] for e in _by_dir(ev, 6 + 1) if e["dir"] == "recv"] == [4, 3, 2]
    # a_2 (elements 4..7) sends 2 to b_0, then 2 to b_1, in receiver order
    assert [(e["peer"], e["bytes"]) for e in _by_dir(ev, 2) if e["dir"] == "send"] == \
        [(6, 8), (7, 8)]
    # every element of A reached exactly one process of B
    got = sum(e["bytes"] for k in range(3) for e in _by_dir(ev, 6 + k) if e["dir"] == "recv")
    assert got == 16 * 4


def test_root_gathering_sends_everything_through_the_roots_one_direction_after_the_other(figures):
    ev = figures["rg_allgather"]
    remote = sorted((e["rank"], e["peer"], e["bytes"]) for r in range(5) for e in _by_dir(ev, r)
                    if e["dir"] == "send")
    assert remote == [(0, 3, 3 * 16), (3, 0, 2 * 16)]  # a_0 -> b_0 (A's), b_0 -> a_0 (B's)
    a0 = [(e["dir"], e["peer"]) for e in _by_dir(ev, 0)]
    assert a0 == [("send", 3), ("recv", 3)]  # A's data goes first
    ev = figures["rg_allgatherv"]  # blocks 0 2 4 | 0 2
    into_b0 = [(e["peer"], e["bytes"]) for e in _by_dir(ev, 3) if e["dir"] == "recv"]
    assert into_b0 == [(0, 0), (1, 8), (2, 16)]  # every block, empty ones too, in rank order


def test_root_gathering_broadcasts_large_messages_by_scatter_and_ring(figures):
    # B's 3 x 1100 ints = 13,200 bytes >= 12,288 reach A's 9 processes as MPICH sends them:
    # a binomial scatter of 9 pieces from a_0, then a ring Allgatherv of the pieces
    ev = figures["rg_large"]
    piece = 3 * 1100 * 4 // 9  # 1466 or 1467 bytes
    a4 = [(e["dir"], e["peer"], e["bytes"]) for e in _by_dir(ev, 4, remote=False)]
    tree = [x for x in a4 if x[2] > 2.5 * piece]  # the scatter: pieces 4..7 from a_0
    assert len(tree) == 1 and tree[0][:2] == ("recv", 0) and abs(tree[0][2] - 4 * piece) <= 4
    ring = a4[-16:]  # 8 rounds of (send to a_5, receive from a_3), one piece each
    assert [(d, peer) for d, peer, _ in ring] == [("send", 5), ("recv", 3)] * 8
    assert all(abs(n - piece) <= 4 for _, _, n in ring)
    # A's 9 x 10 ints (360 bytes) go to B's 3 processes along the binomial tree, whole
    b1 = [(e["dir"], e["peer"], e["bytes"]) for e in _by_dir(ev, 10, remote=False)]
    assert ("recv", 9, 360) in b1  # from b_0


def test_the_larger_group_plays_a_whatever_its_place(figures):
    # groups 2,6: the paper's A (p >= q) is the second group here; Algorithm 1 cuts it
    ev = figures["larger_second"]
    assert [len([e for e in _by_dir(ev, r) if e["dir"] == "send"]) for r in range(2)] == [3, 3]
    assert all(len([e for e in _by_dir(ev, r) if e["dir"] == "send"]) == 1 for r in range(2, 8))


def test_counts_that_disagree_between_the_groups_fail_on_every_rank():
    from tuwviz.run.launch import mpiexec_backend

    pr = make_problem("allgatherv", 3, "regular", 4, q=2)
    case = {**verify_cases(["allgatherv"], ["segmented"], groups="3,2", bs=[4], dists=["regular"],
                           types="same")[0],
            "problem": pr.to_dict(), "count_override": {"rank": 4, "count": 3}}
    with pytest.raises(RankFailure, match=r"rank 4 \(group B\) passes sendcount 3, but rank 0 "
                                          r"of the other group has recvcounts\[1\] = 4"):
        mpiexec_backend()(5, [case], lambda *a: None)


@pytest.mark.parametrize("args, message", [
    (["--groups", "3,2", "--np", "4"], "give --np (one group) or --groups (two groups), not both"),
    (["--groups", "3,2", "--collective", "gatherv"],
     "two groups (--groups) are for allgather, allgatherv on an inter-communicator, not gatherv"),
    (["--groups", "3"], "groups '3' is not two sizes P,Q"),
    (["--groups", "3,0"], "size q of group B must be at least 1, got 0"),
    (["--groups", "3,x"], "group size must be an integer, got 'x'"),
    (["--groups", "60,10"], "groups 60,10 need 70 ranks, more than"),
    (["--groups", "3,2", "--algorithms", "ring"], "algorithm 'ring' runs on one group (--np)"),
    (["--np", "3", "--collective", "allgather", "--algorithms", "segmented"],
     "algorithm 'segmented' runs on two groups (--groups P,Q)"),
    (["--groups", "3,2", "--roots", "1"], "has no root"),
    (["--groups", "3,2", "--types", "root-vector"], "datatype pairs are not run on two groups"),
])
def test_verify_groups_bad_input(cli, args, message):
    r = cli("verify", *args, timeout=120)
    assert r.returncode == 2 and message in r.stderr and r.stdout == "", r.stderr


def test_cli_verify_groups_json(cli):
    r = cli("verify", "--groups", "5,2", "--collective", "allgatherv", "--b", "3",
            "--dist", "qiaok", "--json", timeout=hang_guard(600))
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    # 3 algorithms x 3 block-size ratios, and each one's zero-size call with NULL buffers
    assert out["ok"] and out["cases"] == 12 and {s["q"] for s in out["summary"]} == {"2-2"}


def test_bench_groups_writes_rows_with_the_group_columns(cli, tmp_path):
    out = tmp_path / "g.csv"
    r = cli("bench", "allgatherv", "--groups", "6,2", "5,3", "--b", "40", "--b-b", "10",
            "--dist", "regular,arithmetic", "--algorithms", "native,root_gathering,segmented",
            "--reps", "3", "--warmup", "1", "--out", str(out), "--no-progress",
            timeout=hang_guard(600))
    assert r.returncode == 0, r.stdout + r.stderr
    import csv

    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2 * 2 * 3
    assert list(rows[0])[3:8] == ["p", "q", "b_b", "k_a", "k_b"]
    for row in rows:
        p, q = int(row["p"]), int(row["q"])
        pr = make_problem("allgatherv", p, row["distribution"], 40, q=q, b_b=10)
        # Allgatherv: each group's sum K_A, K_B
        assert (int(row["k_a"]), int(row["k_b"])) == (sum(pr.counts[:p]), sum(pr.counts[p:]))
        assert int(row["ranks"]) == p + q and row["oversubscribed"] == "True"
    assert {(r_["p"], r_["q"]) for r_ in rows} == {("6", "2"), ("5", "3")}
    # a regular Allgather row gives the blocks themselves
    out2 = tmp_path / "r.csv"
    r = cli("bench", "allgather", "--groups", "3,2", "--b", "8", "--b-b", "2", "--reps", "2",
            "--warmup", "0", "--algorithms", "segmented", "--out", str(out2), "--no-progress",
            # a time limit makes the harness agree on stopping after each repetition: over
            # both groups (a Bcast from rank 0 of an inter-communicator would wait forever)
            "--time-limit", "600", timeout=hang_guard(600))
    assert r.returncode == 0, r.stdout + r.stderr
    (row,) = csv.DictReader(out2.open())
    assert (row["k_a"], row["k_b"], row["m"]) == ("8", "2", str(3 * 8 + 2 * 2))


@pytest.mark.parametrize("args, message", [
    (["allgather", "--groups", "3,2", "--np", "4"], "not both"),
    (["gatherv", "--groups", "3,2"], "two groups (--groups) are for allgather, allgatherv"),
    (["allgather", "--b-b", "3"], "B's block sizes (--b-b) need two groups (--groups P,Q)"),
    (["allgather", "--np", "3", "--algorithms", "segmented"],
     "allgather/segmented runs on two groups (--groups P,Q)"),
    (["allgatherv", "--groups", "3,2", "--algorithms", "ring"],
     "allgatherv/ring runs on one group (--np)"),
    (["allgatherv", "--groups", "3,2", "--b-b", "-1"], "--b-b must be at least 0, got -1"),
])
def test_bench_groups_bad_input(cli, args, message):
    r = cli("bench", *args, timeout=120)
    assert r.returncode == 2 and message in r.stderr and r.stdout == "", r.stderr


MODELLED = [("allgather", "root_gathering"), ("allgather", "segmented"),
            ("allgatherv", "root_gathering"), ("allgatherv", "segmented")]


# (groups, distributions, (b, b_b) sizes); "large" broadcasts by scatter and ring in every
# group of 8 or more processes (12,288 bytes or more: tuw_bcast_library)
TRACE_SWEEPS = {
    "quick": [([(1, 1), (6, 2), (2, 6), (8, 3)], ("regular", "qiaok"), ((0, 0), (7, 2))),
              # the large broadcast into a group of 9, first and second: 3 x 1100 ints
              # (13,200 bytes); 12 ranks, not (8, 8)'s 16 (the full sweep has that)
              ([(9, 3)], ("regular", "arithmetic"), ((400, 1100),)),
              ([(3, 9)], ("regular", "arithmetic"), ((1100, 400),))],
    "full": [(_full_groups(), ("regular", "arithmetic", "qiaok"),
              ((0, 0), (3, 3), (7, 2), (2, 9))),
             ([(9, 3), (3, 9), (8, 8), (13, 4)], ("regular", "arithmetic", "qiaok"),
              ((400, 1100), (3100, 0)))],
}


@pytest.mark.parametrize("sweep", ["quick", pytest.param("full", marks=pytest.mark.full)])
@pytest.mark.parametrize("collective, algorithm", MODELLED)
def test_trace_equals_model(collective, algorithm, sweep, traced):
    from tuwviz import model

    runs = [(pr, events) for pr, alg, events in traced(sweep)
            if (pr.collective, alg) == (collective, algorithm)]
    assert len(runs) == len(_sweep_problems(collective, sweep))
    for pr, events in runs:
        s = model.schedule(collective, algorithm, pr)
        assert s.matches_trace(events), (pr.label(), [
            (r, [(e["dir"], e["peer"], e["bytes"]) for e in events[r]], s.messages(r))
            for r in range(pr.size)
            if [(e["dir"], e["peer"], e["bytes"]) for e in events[r]] != s.messages(r)][:1])
        assert model.simulate(s, alpha=1e-6, beta=1e-9).time > 0 or pr.m == 0


def test_cli_model_on_two_groups_prints_the_schedule_and_the_papers_bounds(cli):
    from tuwviz.model.intergroup_cost import eq_2, lower_bound, theorem_1

    r = cli("model", "allgather", "--groups", "50,14", "--b", "1000", "--datatype", "byte")
    assert r.returncode == 0, r.stderr
    pr = make_problem("allgather", 50, "same", 1000, q=14, datatype="byte")
    assert "model allgather/root_gathering" in r.stdout and "model allgather/segmented" in r.stdout
    for name, value in (("lower bound M", lower_bound(pr)), ("Eq. (2) root gathering", eq_2(pr)),
                        ("Theorem 1: M + k_B", theorem_1(pr))):
        assert f"{name:<26} {value:,}" in r.stdout
    assert "Eq. (5) improvement        4.84" in r.stdout
    r = cli("model", "allgatherv", "segmented", "--groups", "1600,448", "--dist",
            "arithmetic", "--b", "2", "--b-b", "7", "--json")  # paper scale: the model's
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)
    assert row["schedule"]["p"] == 2048 and row["label"] == "model"
    assert row["bounds_bytes"]["lower bound M"] == 4 * max(2 * 1599 * 800, 7 * 447 * 224)


@pytest.mark.parametrize("args, message", [
    (["allgather", "--groups", "3,2", "--np", "4"], "give --groups P,Q or --np/--counts/--root"),
    (["gatherv", "--groups", "3,2"], "--groups is for allgather, allgatherv"),
    (["allgather", "--b-b", "3"], "--b-b (group B's block size) needs --groups P,Q"),
    (["allgather", "--groups", "3"], "groups '3' is not two sizes P,Q"),
    (["allgather", "circulant", "--groups", "3,2"], "no model for algorithm 'circulant'"),
])
def test_cli_model_groups_bad_input(cli, args, message):
    r = cli("model", *args)
    assert r.returncode == 2 and message in r.stderr and r.stdout == "", r.stderr


def test_the_model_refuses_the_wrong_kind_of_problem():
    from tuwviz import model

    with pytest.raises(ValueError, match="allgather/segmented runs on two groups"):
        model.schedule("allgather", "segmented", make_problem("allgather", 4))
    with pytest.raises(ValueError, match="allgather/circulant runs on one group"):
        model.schedule("allgather", "circulant", make_problem("allgather", 4, q=2))


SCATTERED_SCRIPT = r'''
import ctypes, json, sys
import numpy as np
from mpi4py import MPI
from tuwviz import kernels

lib = kernels.load()
world = MPI.COMM_WORLD
a_counts, b_counts = json.loads(sys.argv[1])  # the first group's blocks, the second's
p = len(a_counts)
a = world.rank < p
local = world.Split(0 if a else 1, world.rank)
inter = local.Create_intercomm(0, world, p if a else 0, tag=9)
counts = {True: a_counts, False: b_counts}
mine = counts[a][local.rank]
theirs = counts[not a]
send = np.arange(mine, dtype=np.int32) + 100 * world.rank
# the other group's blocks in reverse order with gaps of 3 elements between them
displs, at = [0] * len(theirs), 1
for i in reversed(range(len(theirs))):
    displs[i] = at
    at += theirs[i] + 3
out = {}
for name in ("native", "root_gathering", "segmented"):
    recv = np.full(at, -7, dtype=np.int32)
    if name == "native":
        inter.Allgatherv([send, MPI.INT], [recv, theirs, displs, MPI.INT])
    else:
        fn = getattr(lib, "TUW_Allgatherv_" + name)
        fn.restype = ctypes.c_int
        t = kernels.comm_handle(MPI.INT)
        rc = fn(ctypes.c_void_p(send.ctypes.data), ctypes.c_int(mine), t,
                ctypes.c_void_p(recv.ctypes.data),
                (ctypes.c_int * len(theirs))(*theirs), (ctypes.c_int * len(theirs))(*displs), t,
                kernels.comm_handle(inter))
        assert rc == 0, rc
    out[name] = recv.tolist()
res = world.gather(out, root=0)
if world.rank == 0:
    print("RESULT " + json.dumps(res), flush=True)
'''


@pytest.mark.parametrize("counts", [
    ([2, 0, 5], [4, 1]),
    # B's 3,500 ints (14,000 bytes) broadcast in A's 9 processes by scatter and ring
    ([3 * i for i in range(9)], [2000, 1500]),
], ids=["small", "scatter-ring-broadcast"])
def test_allgatherv_with_scattered_displacements_equals_the_library(counts):
    # rdispls out of rank order and with gaps: Algorithm 2 and root gathering assemble the
    # blocks in a scratch buffer and copy them out; the gaps keep the fill value as the
    # library leaves them
    import os
    import subprocess
    import sys

    from tuwviz.run.launch import local_mpi_command, mpi_env, record_launch
    from support import REPO

    n = len(counts[0]) + len(counts[1])
    record_launch("mpiexec", n)  # counted by tests/support/budget.py
    r = subprocess.run([*local_mpi_command(), "-n", str(n), sys.executable, "-c",
                        SCATTERED_SCRIPT, json.dumps(counts)],
                       capture_output=True, text=True, timeout=hang_guard(300), cwd=REPO,
                       env={**os.environ, **mpi_env(n, timed=False)})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (line,) = [l.split("RESULT ", 1)[1] for l in r.stdout.splitlines() if "RESULT " in l]
    for rank, out in enumerate(json.loads(line)):
        assert out["segmented"] == out["native"] == out["root_gathering"], rank
        assert -7 in out["native"] and max(out["native"]) >= 100  # gaps kept, data arrived
