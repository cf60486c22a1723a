"""The ipyparallel MPI engines (through the notebooks' LocalCluster): running, failing,
restarting, cleaning up."""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pandas as pd
import pytest

from support import REPO, as_from_a_terminal, hang_guard, mpi_processes
from tuwviz import model
from tuwviz.session import LocalCluster
from tuwviz.errors import RankFailure
from tuwviz.problems import make_problem

N = 4


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n=N) as c:
        yield c


def listening_outside(pids: set[int]) -> list[str]:
    """Sockets of `pids` listening on anything but loopback, as `ss` reports them."""
    out = subprocess.run(["ss", "-H", "-l", "-t", "-u", "-n", "-p"], capture_output=True,
                         text=True, check=True).stdout
    bad = []
    for line in out.splitlines():
        fields = line.split()
        owners = {int(p) for p in re.findall(r"pid=(\d+)", line)}
        local = fields[4] if len(fields) > 4 else ""
        if owners & pids and not local.startswith(("127.", "[::1]")):
            bad.append(line)
    return bad


def our_processes() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def test_engines_are_mpi_ranks_on_loopback(cluster):
    assert cluster.ranks() == list(range(N))
    assert cluster.oversubscribed == (N > os.cpu_count())
    info = json.loads(cluster.connection_file.read_text())
    assert info["interface"] == "tcp://127.0.0.1"
    assert info["key"]  # messages are signed
    # controller, launcher and engines (MPI initialised): nothing beyond loopback
    pids = our_processes()
    assert {i["pid"] for i in cluster.rank_infos()} <= pids
    # MPI is called from each engine's main thread only: no MPI_THREAD_MULTIPLE locking,
    # unless there are more engines than cores (MPICH yields the CPU inside that lock)
    over = cluster.oversubscribed
    assert {(i["heavy_yield"], i["thread_level"]) for i in cluster.rank_infos()} == \
        {("1", "multiple") if over else ("0", "funneled")}
    assert listening_outside(pids) == []


def test_a_batch_run_listens_on_loopback_only():
    from tuwviz.run.launch import run_mpiexec

    found = {}

    def on_start(hellos):  # every rank is inside MPI now
        pids = our_processes()
        found["ranks"] = {h["pid"] for h in hellos} <= pids
        found["outside"] = listening_outside(pids)

    case = {"mode": "verify", "algorithm": "linear", "data_seed": 0,
            "problem": make_problem("gatherv", 3, "same", 5).to_dict()}
    run_mpiexec(3, [case], on_start=on_start)
    assert found == {"ranks": True, "outside": []}


def test_verify_and_trace_on_engines(cluster):
    report = cluster.verify(["gatherv"], ["linear", "native"], bs=[0, 5])
    assert report.ok and {r["p"] for r in report.results} == {1, 2, 3, 4}
    pr = make_problem("gatherv", N, "random", 7, root=3, seed=5)
    events = cluster.trace(pr, "linear")
    sched = model.schedule("gatherv", "linear", pr)
    assert [[(e["dir"], e["peer"], e["bytes"]) for e in ev] for ev in events] == sched.all_messages()


def _heavy_yield_inside_and_after():
    from tuwviz import kernels

    lib = kernels.load()
    with kernels.heavy_yield(False) as before:
        inside = lib.tuw_heavy_yield(-1)
    return before, inside, lib.tuw_heavy_yield(-1)


_heavy_yield_inside_and_after.__module__ = "__main__"  # sent by value: engines cannot import tests


def test_heavy_yield_is_switched_off_for_a_while_on_running_engines(cluster):
    # the engines started with the value mpi_env chose (on: more engines than cores, for
    # timing); a verify batch switches it off and back, through MPI's tool interface
    started = int(cluster.rank_infos()[0]["heavy_yield"])
    assert cluster.apply(_heavy_yield_inside_and_after) == [(started, 0, started)] * N
    assert cluster.verify(["allreduce"], ["circulant"], ps=[N], bs=[3]).ok


def test_a_failing_case_in_a_batch_is_named_and_the_cases_before_it_kept(cluster):
    # verify cases go to the engines in batches: a failure inside one still names its case
    from tuwviz.experiments.verify import run_verify, verify_cases

    cases = verify_cases(["gatherv"], ["linear"], ps=[3], bs=[1, 2])[:20]
    cases[13] = {**cases[13], "algorithm": "no_such_algorithm"}
    with pytest.raises(RankFailure, match="no_such_algorithm") as info:
        run_verify(cases, backend=cluster.run_cases)
    assert info.value.case["index"] == 13 and info.value.case["of"] == 20
    assert len(info.value.report.results) == 13 and info.value.report.ok is not None
    assert cluster.verify(["gatherv"], ["linear"], ps=[2], dists=["same"], bs=[1]).ok


def test_bench_on_engines_labels_the_backend(cluster, tmp_path):
    df = cluster.bench("gatherv", ["native", "linear"], bs=[1, 1000], reps=10, warmup=2,
                       out=tmp_path / "r.csv", progress=False)
    assert list(df["algorithm"]) == ["native", "linear"] * 2
    assert set(df["backend"]) == {"ipyparallel"} and set(df["ranks"]) == {N}
    assert (df["min_us"] > 0).all()
    assert len(pd.read_csv(tmp_path / "r.csv")) == 4


def test_two_groups_on_engines_verify_bench_and_trace(cluster, tmp_path):
    # the engines split into A and B (and idle ones) for the intergroup collectives
    report = cluster.verify(["allgather", "allgatherv"], groups=["3,1", "2,2", "1,2"], bs=[0, 5])
    assert report.ok and {(r["p"], r["q"]) for r in report.results} == {(3, 1), (2, 2), (1, 2)}
    df = cluster.bench("allgatherv", ["native", "segmented"], groups=[(3, 1)], bs=[10],
                       reps=5, warmup=1, out=tmp_path / "g.csv", progress=False)
    assert list(df[["p", "q", "k_a", "k_b"]].itertuples(index=False, name=None)) == \
        [(3, 1, 30, 10)] * 2
    assert list(pd.read_csv(tmp_path / "g.csv")["q"]) == [1, 1]
    pr = make_problem("allgatherv", 2, "arithmetic", 3, q=2)
    assert model.schedule("allgatherv", "segmented", pr).matches_trace(
        cluster.trace(pr, "segmented"))


def test_a_dying_engine_is_named_rows_kept_and_cluster_restarts(cluster, tmp_path):
    out = tmp_path / "r.csv"
    pid = cluster.rank_infos()[2]["pid"]
    threading.Timer(2.0, os.kill, (pid, signal.SIGKILL)).start()
    # "died", not "stopped responding" or "no result": the run was aborted by the death,
    # not by the no-progress limit, and before its last case (rows < 180 below)
    with pytest.raises(RankFailure, match="rank 2 died") as info:
        cluster.bench("gatherv", ["native", "linear"], bs=[1, 100, 1000] * 30, reps=300,
                      out=out, progress=False, rounds=1)  # a row per case
    assert info.value.rank == 2
    kept = len(pd.read_csv(out))
    assert 0 < kept < 180
    # the case that was running: the first without a row
    assert info.value.case["index"] == kept and "running: gatherv/" in str(info.value)
    # the next call restarts the engines by itself
    assert cluster.verify(["gatherv"], ["linear"], ps=[N], dists=["same"], bs=[3]).ok
    assert cluster.ranks() == list(range(N))


def test_an_engine_that_raises_stops_the_run_within_seconds(cluster):
    code = textwrap.dedent("""
        from mpi4py import MPI
        if MPI.COMM_WORLD.rank == 1:
            raise ValueError("bad input on rank 1")
        MPI.COMM_WORLD.Barrier()  # the others wait for rank 1 forever
    """)
    # the error is rank 1's own, not the no-progress limit's "no result after ..."
    with pytest.raises(RankFailure, match="rank 1 raised ValueError: bad input on rank 1") as info:
        cluster.apply(exec, code)  # a builtin: the engines need not import this file
    assert info.value.rank == 1
    assert cluster.verify(["gatherv"], ["linear"], ps=[2], dists=["same"], bs=[1]).ok


@pytest.mark.full  # quick run: test_signals.py's stopped rank under mpiexec
def test_a_stopped_engine_is_named(cluster):
    # SIGSTOP: the engine neither answers nor dies; its heartbeat stops
    pid = cluster.rank_infos()[3]["pid"]
    cluster.stall_limit = 8  # a rank silent this long (or 30 s, if less) is named
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(RankFailure, match=rf"rank 3 \(pid {pid}\) stopped responding") as info:
            cluster.bench("gatherv", ["linear"], bs=[1], reps=10, progress=False)
    finally:
        cluster.stall_limit = 300
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert info.value.rank == 3


@pytest.mark.full  # a restart and a stop: ~25 s
def test_a_call_over_the_no_progress_limit_names_who_had_not_finished(cluster):
    cluster.stall_limit = 3
    try:
        with pytest.raises(RankFailure, match=r"no result after \d+ s: no rank had finished .*stall_limit=3"):
            cluster.apply(time.sleep, 30)
    finally:
        cluster.stall_limit = 300


SCRIPT = textwrap.dedent("""
    import sys
    from tuwviz.session import LocalCluster
    cluster = LocalCluster(n=3).start()
    print("started", flush=True)
    try:
        cluster.bench("gatherv", ["native", "linear"], bs=[1, 1000] * 500, reps=500, progress=False)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        cluster.stop()
""")


@pytest.mark.full  # quick run: test_interrupt.py (SIGINT while a LocalCluster runs)
def test_ctrl_c_leaves_no_engine_controller_or_mpiexec_behind(tmp_path):
    before = mpi_processes()
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO)},
                            preexec_fn=as_from_a_terminal)
    for line in proc.stdout:
        if "started" in line:
            break
    time.sleep(3)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C / "interrupt kernel" sends
    out, _ = proc.communicate(timeout=hang_guard(300))
    assert "interrupted" in out
    deadline = time.monotonic() + hang_guard(60)
    while mpi_processes() - before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert mpi_processes() - before == set()


def test_engines_whose_mpi_never_starts_are_tried_again_then_named(monkeypatch, capfd):
    # UCX refuses an unknown transport in MPI_Init: the engines' mpiexec ends every time,
    # as it does, rarely, by itself (tuwviz.run.launch.STARTUP_ATTEMPTS)
    from tuwviz.run import launch
    from tuwviz.errors import TuwvizError

    STARTUP_ATTEMPTS = 2  # one retry shows the loop; each attempt costs seconds
    monkeypatch.setattr(launch, "STARTUP_ATTEMPTS", STARTUP_ATTEMPTS)
    before = mpi_processes()
    monkeypatch.setenv("UCX_TLS", "no-such-transport")
    with pytest.raises(TuwvizError, match=f"MPI engines did not start in {STARTUP_ATTEMPTS} attempts"):
        LocalCluster(2).start()
    notes = [l for l in capfd.readouterr().err.splitlines() if l.startswith("note: MPI engines")]
    assert len(notes) == STARTUP_ATTEMPTS - 1
    assert mpi_processes() - before == set()  # every attempt's controller is gone


def test_bad_cluster_arguments():
    with pytest.raises(ValueError, match="at least 1"):
        LocalCluster(n=0)
    with pytest.raises(ValueError, match="valid profiles: local, slurm"):
        LocalCluster(n=2, profile="nope")
    with pytest.raises(ValueError, match="at most 64"):
        LocalCluster(n=1000)
