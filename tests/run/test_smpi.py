"""The C kernels on SimGrid's simulated ranks: verified against SMPI's collectives, timed in
simulated time, and every failure named (a wrong byte, an MPI error, a deadlock)."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from support import REPO, hang_guard, run_cli
from support.sources import renamed_kernel
from tuwviz import config
from tuwviz.errors import RankFailure
from tuwviz.experiments.bench import bench
from tuwviz.experiments.verify import run_verify, verify, verify_cases
from tuwviz import model
from tuwviz.kernels import algorithms
from tuwviz.model.nodes import NodeNetwork, simulate_nodes
from tuwviz.platforms import platform, platforms
from tuwviz.problems import make_problem
from tuwviz.run.smpi import SmpiBackend, run_smpi, smpi_backend, task_text
from tuwviz.table import WORKSPACE_VAR



@pytest.fixture(autouse=True, scope="module")
def simgrid():
    if shutil.which("smpirun") is None or shutil.which("smpicc") is None:
        pytest.fail("SimGrid's SMPI (smpicc, smpirun) is not installed: run `make simgrid` "
                    "(apt-get install libsimgrid-dev)")

#: The gatherv paper's 36 x 16 cluster: 64 ranks fill 4 nodes.
PLATFORM = "gatherv-ib36"


def _one_group_algorithms() -> set[tuple[str, str]]:
    return {(a.collective, a.name) for a in algorithms() if a.serves("intra")}


#: The quick tier samples a size (3 nodes of the 36 x 16 cluster, the last one part full),
#: the full tier runs 4 whole nodes.
SWEEP_PS = [40, pytest.param(64, marks=pytest.mark.full)]


@pytest.mark.parametrize("p", SWEEP_PS)
def test_every_one_group_kernel_matches_smpi(p):
    report = verify(ps=[p], bs=[0, 3], backend=smpi_backend(PLATFORM, stall_limit=hang_guard(600)))
    assert report.ok, report.table()
    ran = {(r["collective"], r["algorithm"]) for r in report.results}
    assert ran == _one_group_algorithms()
    # every distribution, roots 0, p/2, p-1, and the reductions' small-integer operators
    assert {r["root"] for r in report.results if r["collective"] == "gatherv"} == {0, p // 2, p - 1}
    assert {r["types"] for r in report.results} == {"same"}
    assert {r["op"] for r in report.results if r["collective"] == "allreduce"} >= {"sum", "max", "bor"}
    # ranks fill the platform's nodes block by block: 16 per node
    hosts = []
    run_smpi(p, verify_cases(["allgatherv"], ["ring"], ps=[p], dists=["same"], bs=[1],
                             types=["same"]), platform=PLATFORM,
             on_start=lambda infos: hosts.extend(i["host"] for i in infos))
    assert hosts == [f"node-{r // 16}" for r in range(p)]


def _workspace(tmp_path, monkeypatch, kernels: dict[str, tuple]):
    """A workspace of broken kernels: name -> (collective, source, edits[, comm])."""
    ws = tmp_path / "ws"
    ws.mkdir()
    rows = ""
    for name, (coll, rel, edits, *comm) in kernels.items():
        (ws / f"{name}.c").write_text(renamed_kernel(rel, f"BROKEN_{name}", edits))
        kind = f'comm = "{comm[0]}"\n' if comm else 'in_place = true\n'
        rows += (f'[[algorithm]]\ncollective = "{coll}"\nname = "{name}"\n'
                 f'function = "BROKEN_{name}"\n{kind}description = "test"\n\n')
    (ws / "algorithms.toml").write_text(rows)
    monkeypatch.setenv(WORKSPACE_VAR, str(ws))
    return ws


def _intergroup_algorithms() -> set[tuple[str, str]]:
    return {(a.collective, a.name) for a in algorithms() if a.serves("inter")}


@pytest.mark.parametrize("p, q", [(20, 12), pytest.param(64, 64, marks=pytest.mark.full)])
def test_intergroup_kernels_match_smpi(p, q):
    # SMPI has no inter-communicators: the driver's own (smpi_c/intercomm.c) carry the
    # kernels' messages, and the reference is SMPI's Allgatherv over both groups
    report = verify(groups=[(p, q)], bs=[0, 3],
                    backend=smpi_backend(PLATFORM, stall_limit=hang_guard(600)))
    assert report.ok, report.table()
    assert {(r["collective"], r["algorithm"]) for r in report.results} == _intergroup_algorithms()
    assert {(r["p"], r["q"]) for r in report.results} == {(p, q)}
    # B's blocks as large as A's, larger and smaller; the paper's distributions
    assert {r["distribution"] for r in report.results} >= {"regular", "qiaok"}


def test_more_group_shapes_than_the_driver_keeps_inter_communicators_for():
    # issue 69's sweep for fixed sizes: the driver cached an inter-communicator per group
    # shape (p, q) for up to 64 shapes while smpi_c/intercomm.c holds 16, so from the 17th
    # shape of one run on every case failed as a "deadlock"; now all ranks free them together
    shapes = [(p, q) for n in range(2, 8) for p in range(1, n) for q in [n - p]][:20]
    report = verify(["allgatherv"], ["native", "root_gathering"], groups=shapes, bs=[1],
                    dists=["regular"], backend=smpi_backend(PLATFORM, stall_limit=hang_guard(300)))
    assert report.ok, report.table()
    assert {(r["p"], r["q"]) for r in report.results} == set(shapes)


def test_blocks_of_the_other_group_in_the_wrong_order_are_found(tmp_path, monkeypatch):
    _workspace(tmp_path, monkeypatch, {
        # each group's root receives the other group's blocks in reverse rank order
        "reversed": ("allgatherv", "allgatherv/allgatherv_root_gathering.c",
                     [("recvtype, i, 1, comm,", "recvtype, v.remote - 1 - i, 1, comm,")],
                     "inter")})
    report = verify(["allgatherv"], ["reversed"], groups=[(3, 2), (1, 1)], bs=[2],
                    dists=["regular"], backend=smpi_backend(PLATFORM, stall_limit=hang_guard(120)))
    by_groups = {(r["p"], r["q"]): r for r in report.results}
    assert by_groups[(1, 1)]["ok"]  # one block each way: nothing to reorder
    bad = by_groups[(3, 2)]
    assert not bad["ok"] and {m["rank"] for m in bad["mismatches"]} == set(range(5))
    assert all(m["expected"] != m["got"] for m in bad["mismatches"])


def test_intergroup_bench_on_smpi_stops_at_its_time_limit_in_both_groups(tmp_path):
    out = tmp_path / "g.csv"
    df = bench("allgatherv", ["native", "root_gathering", "segmented"], groups=[(24, 8)],
               dists=["regular"], bs=[1000], b_b=[1000], reps=4, warmup=1, time_limit=60.0,
               out=out, progress=False, backend=smpi_backend(PLATFORM, stall_limit=hang_guard(300)))
    assert len(df) == 3 and set(df["q"]) == {8} and set(df["platform"]) == {PLATFORM}
    assert (df["median_us"] > 0).all() and set(df["backend"]) == {"smpi"}


def test_a_wrong_byte_is_found_and_placed(tmp_path, monkeypatch):
    _workspace(tmp_path, monkeypatch, {
        # the root's blocks stay in virtual order: wrong only when root != 0
        "no_reorder": ("gather", "gather/gather_binomial.c",
                       [("int real = (v + root) % p;", "int real = v;")])})
    report = verify(["gather"], ["no_reorder"], ps=[5], bs=[2], roots=[0, 2],
                    backend=smpi_backend(PLATFORM, stall_limit=hang_guard(120)))
    by_root = {r["root"]: r for r in report.results}
    assert by_root[0]["ok"] and not by_root[2]["ok"]
    (m,) = by_root[2]["mismatches"]
    assert m["rank"] == 2 and m["block"] is not None and m["expected"] != m["got"]
    assert m["elements"] == 10 and 0 < m["differing_elements"] <= 10
    assert "FAILED" in report.table()


def test_an_mpi_error_names_the_rank_and_keeps_the_results_before(tmp_path, monkeypatch):
    _workspace(tmp_path, monkeypatch, {
        # the last rank, a leaf, sends its block and then reports an error (p > 2)
        "last_fails": ("gather", "gather/gather_binomial.c",
                       [("return TUW_Send(sendbuf, sendcount, sendtype, t.parent, t.round, comm);",
                         "{ int rc_ = TUW_Send(sendbuf, sendcount, sendtype, t.parent, t.round, "
                         "comm); return rank == p - 1 && p > 2 ? MPI_ERR_OTHER : rc_; }")])})
    with pytest.raises(RankFailure, match=r"rank 3: kernel returned MPI error .*last_fails on "
                                          r"gather p=4") as exc:
        verify(["gather"], ["last_fails"], ps=[2, 4], bs=[1], roots=[0],
               backend=smpi_backend(PLATFORM, stall_limit=hang_guard(120)))
    report = exc.value.report
    assert [(r["p"], r["ok"]) for r in report.results] == [(2, True)]


def test_a_deadlock_names_the_waiting_ranks(tmp_path, monkeypatch):
    _workspace(tmp_path, monkeypatch, {
        # when p is odd, rank 1 waits for a message nobody sends
        "deadlock_odd": ("gather", "gather/gather_divide_conquer.c",
                         [("tuw_dc_tree_create(p, rank, root, &t);",
                           "tuw_dc_tree_create(p, rank, root, &t);\n    if (p % 2 && rank == 1) "
                           "{ char c; TUW_Recv(&c, 1, MPI_BYTE, 0, 999, comm, MPI_STATUS_IGNORE); }")])})
    with pytest.raises(RankFailure, match=r"deadlock in the simulation \(deadlock_odd on gather "
                                          r"p=3.*\): .*rank.* 1\b.* wait") as exc:
        verify(["gather"], ["deadlock_odd"], ps=[2, 3], bs=[1], roots=[0],
               backend=smpi_backend(PLATFORM, stall_limit=hang_guard(120)))
    assert exc.value.rank is not None


def test_bench_rows_are_simulated_deterministic_and_labelled(tmp_path):
    out = tmp_path / "rows.csv"
    kw = dict(ps=[96], dists=["broadcast"], bs=[100_000], reps=3, warmup=1, rounds=1,
              progress=False)
    backend = smpi_backend("anl-gige", stall_limit=hang_guard(300))
    df = bench("allgatherv", ["native", "ring", "pipelined"], out=out, backend=backend, **kw)
    again = bench("allgatherv", ["native", "ring", "pipelined"], backend=backend, **kw)
    assert list(df["median_us"]) == list(again["median_us"])  # simulated: no noise
    assert set(df["backend"]) == {"smpi"} and set(df["platform"]) == {"anl-gige"}
    assert df["mpi_library"].iloc[0].startswith("SimGrid") and "mpich selector" in df["mpi_library"].iloc[0]
    assert not df["oversubscribed"].any()  # 96 ranks on 24 nodes of 4 cores
    assert out.read_text().splitlines()[0].split(",") == list(df.columns)
    t = dict(zip(df["algorithm"], df["median_us"]))
    # the allgatherv paper (Section 3.3, Figure 7 right): on the broadcast distribution the
    # pipelined ring beats the linear ring by a large factor on Gigabit Ethernet
    assert t["pipelined"] * 3 < t["ring"], t
    pipelined = df[df["algorithm"] == "pipelined"]["params"].iloc[0]
    assert "alpha=5e-05" in pipelined  # Eq. (2) from the platform's own alpha, beta


@pytest.mark.parametrize("p", [128, pytest.param(560, marks=pytest.mark.full)])
def test_tuw_gatherv_beats_the_linear_gatherv_on_small_irregular_problems(p):
    # the gatherv paper, Tables 1-3: p = 35 x 16 = 560, blocks of 1 int on average; the
    # libraries' MPI_Gatherv (direct to the root) took 0.85-1.8 ms (NEC MPI, MVAPICH) and
    # TUW_Gatherv 21-50 us (minimum times): 34 to 57 times faster; with Open MPI 1.6 to 2.2
    # times.  Simulated on its cluster (1 us per message at each end): about 7 to 9 times
    # at 560 (the full tier), the quick tier on 8 of its nodes.
    df = bench("gatherv", ["linear", "tuw"], ps=[p], root=0, bs=[1], reps=2, warmup=1,
               dists=["random", "spikes", "decreasing", "alternating"], progress=False,
               backend=smpi_backend(PLATFORM, stall_limit=hang_guard(600)))
    t = df.pivot_table(index="distribution", columns="algorithm", values="median_us")
    ratio = t["linear"] / t["tuw"]
    assert len(ratio) == 4 and (ratio > 3).all(), t
    # the root's p - 1 receives dominate the linear one: at least (p - 1) x 1 us / 2
    # (measured here: half of them overlap the senders' own overhead)
    assert (t["linear"] > (p - 1) / 2).all(), t


def test_the_pipelined_ring_beats_the_linear_ring_by_the_papers_factor_on_the_sx8():
    # the allgatherv paper, Section 3.1: 30 SX-8 nodes, 1 process per node, broadcast
    # distribution of 32 MB, B = 1 MB: "more than a factor of 10", and 32 x 29 / (29 + 31)
    # (about 15) "would have been best possible"
    df = bench("allgatherv", ["ring", "pipelined"], ps=[30], dists=["broadcast"],
               bs=[8 * 1024 * 1024], params={"block_bytes": [1024 * 1024]}, reps=2, warmup=1,
               progress=False, backend=smpi_backend("sx8", ppn=1, stall_limit=hang_guard(300)))
    assert set(df["platform"]) == {"sx8 ppn=1"} and set(df["m"]) == {8 * 1024 * 1024}
    t = dict(zip(df["algorithm"], df["median_us"]))
    assert 10 < t["ring"] / t["pipelined"] < 32 * 29 / (29 + 31), t


def test_cases_it_cannot_run_are_refused_in_words():
    gv = make_problem("gatherv", 2, "same", 1).to_dict()
    with pytest.raises(ValueError, match="same datatype on every rank only"):
        task_text([{"mode": "verify", "algorithm": "linear", "problem": gv, "types": "in-place"}])
    with pytest.raises(ValueError, match="small integers only"):
        task_text([{"mode": "verify", "algorithm": "linear", "problem": gv, "data": "random"}])
    with pytest.raises(ValueError, match="verify and measure cases, not 'trace'"):
        task_text([{"mode": "trace", "algorithm": "linear", "problem": gv}])
    with pytest.raises(ValueError, match="unknown collective selector 'mpi'; valid: mpich, ompi"):
        SmpiBackend(PLATFORM, "mpi")
    with pytest.raises(ValueError, match="do not fit platform anl-gige .24 x 4 = 96 cores"):
        run_smpi(97, [], platform="anl-gige")


@pytest.mark.parametrize("argv, said", [
    (["verify", "--backend", "smpi", "--np", "4"], "--backend smpi needs --platform: one of anl-gige"),
    (["verify", "--platform", "nosuch"], "unknown platform 'nosuch'; valid: anl-gige, bgp"),
    (["verify", "--platform", "anl-gige", "--np", "97"], "at most 96, got 97 ranks (platform anl-gige"),
    (["verify", "--platform", "anl-gige", "--groups", "64,64"],
     "128 processes do not fit platform anl-gige (24 x 4 = 96 cores)"),
    (["bench", "gatherv", "--selector", "ompi"], "--platform, --selector and --ppn are for --backend smpi"),
    (["bench", "gatherv", "--ppn", "1"], "--platform, --selector and --ppn are for --backend smpi"),
    (["verify", "--platform", "anl-gige", "--ppn", "1", "--np", "25"],
     "at most 24, got 25 ranks (platform anl-gige has 24 nodes x 1 per node = 24)"),
    (["verify", "--platform", "anl-gige", "--ppn", "5", "--np", "4"],
     "5 processes per node exceed the 4 cores of each anl-gige node"),
    (["verify", "--platform", "anl-gige", "--ppn", "0", "--np", "4"],
     "processes per node must be an integer of at least 1, got 0"),
    (["bench", "gatherv", "--platform", "hydra", "--selector", "nope"], "unknown collective selector 'nope'"),
])
def test_bad_smpi_options_are_one_line(argv, said):
    out = run_cli(*argv, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip().splitlines() == [f"error: {out.stderr.strip()[7:]}"]
    assert said in out.stderr, out.stderr


def test_without_simgrid_the_error_says_how_to_install_it(tmp_path):
    empty = tmp_path / "bin"  # a PATH with nothing of SimGrid's on it
    empty.mkdir()
    out = subprocess.run([sys.executable, "-m", "tuwviz.cli", "verify", "--platform", "hydra",
                          "--np", "4"], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PATH": str(empty)}, timeout=hang_guard(120))
    assert out.returncode == 1, out.stdout + out.stderr  # what is missing here, not bad input
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "SimGrid's SMPI (smpicc, smpirun) is not installed" in out.stderr
    assert "apt-get install libsimgrid-dev" in out.stderr


def test_cli_verify_and_bench_on_a_platform():
    out = run_cli("verify", "--platform", "hydra", "--np", "33", "--collective", "allreduce",
                  "--algorithms", "circulant,native", "--b", "5", timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all cases match SMPI's collectives (mpich selector), simulated on hydra (36 x 32)" in out.stdout
    out = run_cli("bench", "gatherv", "--backend", "smpi", "--platform", "gatherv-ib36",
                  "--selector", "ompi", "--np", "64", "--algorithms", "native,tuw", "--b", "1",
                  "--dist", "decreasing", "--reps", "2", "--no-progress", timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"simulated: SimGrid [\d.]+ SMPI, ompi selector, CM02 network, 1 us per "
                     r"message, platform "
                     r"gatherv-ib36, 64 ranks", out.stdout), out.stdout


@pytest.mark.full
@pytest.mark.parametrize("p, plat", [(256, "gatherv-ib36"), (576, "gatherv-ib36"),
                                     (1152, "hydra")])
def test_every_one_group_kernel_matches_smpi_at_scale(p, plat):
    # one case per algorithm, its default parameters: a ring sends p (p - 1) messages.
    # gatherv-ib36 is 36 x 16, hydra (the circulant paper's) 36 x 32.  Wall time here: 7 s,
    # 43 s and 255 s; the rings take 50 s each at p = 1152 (1.3 million messages a call)
    cases = [c for c in verify_cases(None, None, ps=[p], dists=["random"], bs=[3], roots=[0],
                                     types=["same"], ops=["int:sum"]) if not c.get("params")]
    report = run_verify(cases, smpi_backend(plat, stall_limit=hang_guard(1800)))
    assert report.ok, report.table()
    assert {(r["collective"], r["algorithm"]) for r in report.results} == _one_group_algorithms()


@pytest.mark.full
def test_timing_runs_share_their_buffers_so_large_messages_fit_at_scale():
    # 576 ranks of an Allgatherv of 100,000 ints each: 230 MB of receive buffer per rank,
    # 132 GB in all if private; SMPI's shared malloc maps one 64 MiB block over all of them
    df = bench("allgatherv", ["ring"], ps=[576], dists=["same"], bs=[100_000], reps=1,
               warmup=0, progress=False,
               backend=smpi_backend(PLATFORM, stall_limit=hang_guard(1800)))
    s = model.schedule("allgatherv", "ring", make_problem("allgatherv", 576, "same", 100_000))
    predicted = simulate_nodes(s, NodeNetwork.from_platform(PLATFORM, 576)).time * 1e6
    assert df["median_us"].iloc[0] == pytest.approx(predicted, rel=0.1)


@pytest.mark.full
def test_intergroup_kernels_match_smpi_with_uneven_groups_at_scale():
    cases = [c for c in verify_cases(None, None, groups=[(256, 64), (64, 256)], bs=[3],
                                     types=["same"])
             if c["problem"]["distribution"] == "qiaok"]
    report = run_verify(cases, smpi_backend(PLATFORM, stall_limit=hang_guard(1800)))
    assert report.ok, report.table()
    assert {(r["collective"], r["algorithm"]) for r in report.results} == _intergroup_algorithms()


def test_the_driver_is_built_once_per_state_of_the_sources(tmp_path, monkeypatch):
    from tuwviz.run.smpi import build_driver

    first = build_driver()
    assert build_driver() == first and first.parent == config.build_dir() / "smpi"
    assert platform(PLATFORM).size == 576


def test_the_driver_prints_events_with_the_ranks_prefix():
    # one protocol: the C driver's event lines start as the Python ranks' do
    from tuwviz.run.worker import PREFIX

    source = (REPO / "tuwviz" / "run" / "smpi_c" / "driver.c").read_text()
    assert re.findall(r'#define TUW_EVENT "([^"]*)"', source) == [PREFIX]
    assert "TUWVIZ " not in source.replace('#define TUW_EVENT "TUWVIZ "', "").replace(
        '"TUWVIZ <json>"', "")  # every printf uses the macro


def test_an_edited_kernel_recompiles_its_own_object_only(tmp_path, monkeypatch):
    # the driver's files are cached one by one, as the kernel library's are
    # (tuwviz.kernels.build.compile_objects): a comment added to one kernel compiles that
    # file again and links a new driver; every other object is reused
    from tuwviz.run.smpi import build_driver

    source = tmp_path / "kernels_c"
    shutil.copytree(config.kernels_dir(), source)
    monkeypatch.setenv("TUWVIZ_KERNELS", str(source))
    monkeypatch.setenv("TUWVIZ_BUILD_DIR", str(tmp_path / "build"))
    first = build_driver()
    objdir = tmp_path / "build" / "smpi" / "obj"
    before = {o.name for o in objdir.glob("*.o")}
    kernel = source / "gatherv" / "gatherv_linear.c"
    kernel.write_text(kernel.read_text() + "\n/* edited */\n")
    second = build_driver()
    after = {o.name for o in objdir.glob("*.o")}
    assert second != first and second.exists()
    assert [n for n in after - before] and all(n.startswith("gatherv_linear-")
                                               for n in after - before), after - before


def test_every_shipped_platform_runs_in_simgrid():
    case = verify_cases(["allgatherv"], ["ring"], ps=[2], dists=["same"], bs=[1], roots=None,
                        types=["same"])[0]
    for name, plat in platforms().items():
        hosts, results = [], []
        # two ranks: on one node, or on two where a node has one core
        run_smpi(2, [case], lambda i, c, r: results.append(r), platform=plat,
                 on_start=lambda infos: hosts.extend(i["host"] for i in infos),
                 stall_limit=hang_guard(300))
        assert results == [{"ok": True, "mismatches": []}], name
        assert hosts == ["node-0", "node-0" if plat.cores > 1 else "node-1"], name


def test_this_machine_as_a_platform(tmp_path):
    out = tmp_path / "here.toml"
    made = run_cli("platform", "calibrate", "--np", "2", "--out", str(out), timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    here = platform(str(out))
    assert (here.name, here.nodes, here.cores) == ("here", 1, 2)
    from tuwviz.experiments.calibrate import load

    cal = load(2)  # what the platform was made from
    assert here.intra_latency == cal.alpha and here.intra_bandwidth == 1.0 / cal.beta
    assert "Measured by tuwviz calibrate" in here.source
    ran = run_cli("verify", "--platform", str(out), "--np", "1-2", "--collective", "gatherv",
                  "--algorithms", "linear", "--b", "4", timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "simulated on here (1 x 2)" in ran.stdout
    bad = run_cli("platform", "calibrate", "--out", str(tmp_path / "here.xml"), timeout=60)
    assert bad.returncode == 2 and "a platform file ends in .toml" in bad.stderr
