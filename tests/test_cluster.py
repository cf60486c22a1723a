"""The ipyparallel cluster of MPI engines: running, failing, restarting, cleaning up."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pandas as pd
import pytest

from conftest import REPO, mpi_processes
from tuwviz import model
from tuwviz.cluster import LocalCluster
from tuwviz.errors import RankFailure
from tuwviz.problems import make_problem

N = 4


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n=N) as c:
        yield c


def test_engines_are_mpi_ranks_on_loopback(cluster):
    assert cluster.ranks() == list(range(N))
    assert cluster.oversubscribed == (N > os.cpu_count())
    info = json.loads(cluster.connection_file.read_text())
    assert info["interface"] == "tcp://127.0.0.1"
    assert info["key"]  # messages are signed


def test_verify_and_trace_on_engines(cluster):
    report = cluster.verify(["gatherv"], ["linear", "native"], bs=[0, 5])
    assert report.ok and {r["p"] for r in report.results} == {1, 2, 3, 4}
    pr = make_problem("gatherv", N, "random", 7, root=3, seed=5)
    events = cluster.trace(pr, "linear")
    sched = model.schedule("gatherv", "linear", pr)
    assert [[(e["dir"], e["peer"], e["bytes"]) for e in ev] for ev in events] == sched.all_messages()


def test_bench_on_engines_labels_the_backend(cluster, tmp_path):
    df = cluster.bench("gatherv", ["native", "linear"], bs=[1, 1000], reps=10, warmup=2,
                       out=tmp_path / "r.csv", progress=False)
    assert list(df["algorithm"]) == ["native", "linear"] * 2
    assert set(df["backend"]) == {"ipyparallel"} and set(df["ranks"]) == {N}
    assert (df["min_us"] > 0).all()
    assert len(pd.read_csv(tmp_path / "r.csv")) == 4


def test_a_dying_engine_is_named_rows_kept_and_cluster_restarts(cluster, tmp_path):
    out = tmp_path / "r.csv"
    pid = cluster.rank_infos()[2]["pid"]
    threading.Timer(2.0, os.kill, (pid, signal.SIGKILL)).start()
    t0 = time.monotonic()
    with pytest.raises(RankFailure, match="rank 2 died") as info:
        cluster.bench("gatherv", ["native", "linear"], bs=[1, 100, 1000] * 30, reps=300,
                      out=out, progress=False)
    assert time.monotonic() - t0 < 30  # aborted within seconds of the death, not hung
    assert info.value.rank == 2
    assert 0 < len(pd.read_csv(out)) < 180
    # the next call restarts the engines by itself
    assert cluster.verify(["gatherv"], ["linear"], ps=[N], dists=["same"], bs=[3]).ok
    assert cluster.ranks() == list(range(N))


def test_an_engine_that_raises_stops_the_run_within_seconds(cluster):
    pid = cluster.rank_infos()[1]["pid"]
    done = threading.Event()

    def interrupt():
        # An idle engine (between two tasks) ignores SIGINT, as an idle kernel does: keep
        # interrupting until one lands while rank 1 is running a case.
        while not done.wait(0.3):
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:  # the engines were stopped after the failure
                return

    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with pytest.raises(RankFailure, match="rank 1 raised KeyboardInterrupt") as info:
            cluster.bench("gatherv", ["native", "linear"], bs=[1, 10, 1000] * 200, reps=300,
                          progress=False)
    finally:
        done.set()
    assert info.value.rank == 1
    assert cluster.verify(["gatherv"], ["linear"], ps=[2], dists=["same"], bs=[1]).ok


SCRIPT = textwrap.dedent("""
    import sys
    from tuwviz.cluster import LocalCluster
    cluster = LocalCluster(n=3).start()
    print("started", flush=True)
    try:
        cluster.bench("gatherv", ["native", "linear"], bs=[1, 1000] * 500, reps=500, progress=False)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        cluster.stop()
""")


def test_ctrl_c_leaves_no_engine_controller_or_mpiexec_behind(tmp_path):
    before = mpi_processes()
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    for line in proc.stdout:
        if "started" in line:
            break
    time.sleep(3)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C / "interrupt kernel" sends
    out, _ = proc.communicate(timeout=120)
    assert "interrupted" in out
    deadline = time.monotonic() + 20
    while mpi_processes() - before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert mpi_processes() - before == set()


def test_bad_cluster_arguments():
    with pytest.raises(ValueError, match="at least 1"):
        LocalCluster(n=0)
    with pytest.raises(ValueError, match="valid profiles: local, slurm"):
        LocalCluster(n=2, profile="nope")
    with pytest.raises(ValueError, match="at most 64"):
        LocalCluster(n=1000)
