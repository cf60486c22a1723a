"""Whatever ends a driver, every process it started ends within seconds and its files go.

A *driver* is what a user runs: ``tuwviz bench``, ``tuwviz verify``, a Python process
holding a :class:`~tuwviz.session.LocalCluster` (a script or a Jupyter kernel), ``tuwviz
lab``.  Each test starts one in its own session, waits until it has started its MPI ranks
(or engines, or JupyterLab), records every descendant, sends one signal to the driver
alone, and then requires that every recorded process is gone and that the driver's
temporary files (own TMPDIR, own cluster profile, own Jupyter runtime folder) are removed.

The quick run covers each driver and each signal once (SIGINT, SIGTERM, SIGKILL); `make
test-full` runs every driver with every signal.  Processes a failing test leaves are
killed by the fixture, so one failure does not leave a machine full of ranks.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from support import REPO, as_from_a_terminal, hang_guard

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
#: The quick run: each driver once, each signal at least once.
#: (SIGINT of a cluster driver is tests/run/test_engines.py's Ctrl-C test.)
QUICK = {("bench", "SIGTERM"), ("verify", "SIGINT"), ("cluster", "SIGKILL"), ("lab", "SIGTERM")}
DRIVERS = ("bench", "verify", "cluster", "lab")

CLUSTER_SCRIPT = textwrap.dedent("""
    from tuwviz.session import LocalCluster
    cluster = LocalCluster(n=3).start()
    print("started", flush=True)
    try:
        cluster.bench("gatherv", ["native", "linear"], bs=[1, 1000] * 500, reps=500, progress=False)
    finally:
        cluster.stop()
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    """One driver process in its own session, with private temporary folders."""

    def __init__(self, kind: str, tmp_path):
        self.kind = kind
        self.tmp = tmp_path / "tmp"
        self.profiles = tmp_path / "profiles"
        self.runtime = tmp_path / "runtime"
        for d in (self.tmp, self.runtime):
            d.mkdir()
        shutil.copytree(REPO / "cluster_profiles" / "local", self.profiles / "local",
                        ignore=shutil.ignore_patterns("security", "log", "pid"))
        env = {**os.environ, "TMPDIR": str(self.tmp), "TUWVIZ_PROFILES": str(self.profiles),
               "JUPYTER_RUNTIME_DIR": str(self.runtime), "PYTHONPATH": str(REPO)}
        cli = [sys.executable, "-m", "tuwviz.cli"]
        self.port = None
        if kind == "bench":
            argv = [*cli, "bench", "gatherv", "--np", "3", "--b", ",".join(["1,1000"] * 300),
                    "--algorithms", "native,linear", "--reps", "300", "--no-progress",
                    "--out", str(tmp_path / "r.csv")]
        elif kind == "verify":
            argv = [*cli, "verify", "--np", "3-5"]
        elif kind == "cluster":
            argv = [sys.executable, "-c", CLUSTER_SCRIPT]
        else:
            self.port = _free_port()
            argv = [*cli, "lab", "--no-browser", "--port", str(self.port)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env, cwd=tmp_path, start_new_session=True,
                                     preexec_fn=as_from_a_terminal)
        self.seen: dict[int, float] = {}

    def snapshot(self) -> list[psutil.Process]:
        """Record every live descendant of the driver (kept even after reparenting)."""
        try:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            kids = []
        for k in kids:
            try:
                self.seen.setdefault(k.pid, k.create_time())
            except psutil.NoSuchProcess:
                pass
        return kids

    def alive(self) -> list[str]:
        """Recorded processes still running (same pid and start time), as 'pid cmdline'."""
        out = []
        for pid, created in self.seen.items():
            try:
                p = psutil.Process(pid)
                if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(f"{pid} {' '.join(p.cmdline())[:120]}")
            except psutil.NoSuchProcess:
                pass
        return out

    def wait_started(self, timeout: float) -> None:
        """Until the ranks / engines / JupyterLab run (and a reaper watches them)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.stdout.read()
            kids = self.snapshot()
            cmds = []
            for k in kids:
                try:
                    cmds.append(" ".join(k.cmdline()))
                except psutil.NoSuchProcess:
                    pass
            reaped = any("tuwviz.run.reaper" in c for c in cmds)
            if self.kind in ("bench", "verify"):
                ready = sum("tuwviz.run.worker" in c for c in cmds) >= 3
            elif self.kind == "cluster":
                ready = sum("ipyparallel.engine" in c for c in cmds) >= 3
            else:
                ready = any("jupyter" in c and "lab" in c for c in cmds) and _listening(self.port)
            if ready and reaped:
                time.sleep(1.0)  # let the run get going, then look once more
                self.snapshot()
                return
            time.sleep(0.2)
        raise AssertionError(f"{self.kind} did not start within {timeout:.0f} s")

    def leftovers(self) -> list[str]:
        files = [str(p) for p in self.tmp.rglob("*")]
        for sub in ("security", "log"):
            files += [str(p) for p in (self.profiles / "local" / sub).glob("*tuwviz-*")]
        files += [str(p) for p in self.runtime.glob("jpserver-*")]
        return files

    def kill_all(self) -> None:
        for pid, created in self.seen.items():
            try:
                p = psutil.Process(pid)
                if p.create_time() == created:
                    p.kill()
            except psutil.NoSuchProcess:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def driver(tmp_path):
    started = []

    def start(kind):
        d = Driver(kind, tmp_path)
        started.append(d)
        return d

    yield start
    for d in started:  # even when the test failed: nothing may stay behind
        d.kill_all()


CASES = [pytest.param(kind, sig, marks=() if (kind, sig) in QUICK else pytest.mark.full,
                      id=f"{kind}-{sig}")
         for kind in DRIVERS for sig in SIGNALS]


@pytest.mark.parametrize("kind, sig", CASES)
def test_nothing_outlives_the_driver(driver, kind, sig):
    d = driver(kind)
    d.wait_started(hang_guard(120))
    d.proc.send_signal(SIGNALS[sig])
    try:
        d.proc.wait(timeout=hang_guard(60))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind} did not end within 60 s of {sig}")
    out = d.proc.stdout.read()
    # everything it started ends within seconds, by its own clean-up or by the reaper
    deadline = time.monotonic() + hang_guard(60)
    while (d.alive() or d.leftovers()) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert d.alive() == [], f"left running after {sig} of {kind}:\n{out[-2000:]}"
    assert d.leftovers() == [], f"files left after {sig} of {kind}"
    if kind in ("bench", "verify") and sig != "SIGKILL":
        assert "Traceback" not in out
        assert d.proc.returncode == 128 + SIGNALS[sig]
    if kind == "bench" and sig != "SIGKILL":
        assert "rows measured so far are saved" in out
    if kind in ("verify", "lab"):  # they write no rows: saying so would mislead
        assert "rows measured so far" not in out


def test_ctrl_c_while_a_cluster_starts_leaves_nothing(driver):
    """SIGINT at the most awkward moment: engines half started."""
    d = driver("cluster")
    deadline = time.monotonic() + hang_guard(60)
    while not any("ipcontroller" in " ".join(p.cmdline()) or "ipyparallel.controller" in " ".join(p.cmdline())
                  for p in d.snapshot() if p.is_running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    d.snapshot()
    d.proc.send_signal(signal.SIGINT)
    d.proc.wait(timeout=hang_guard(60))
    deadline = time.monotonic() + hang_guard(60)
    while (d.alive() or d.leftovers()) and time.monotonic() < deadline:
        d.snapshot() if d.proc.poll() is None else None
        time.sleep(0.25)
    assert d.alive() == []
    assert d.leftovers() == []


def test_ranks_of_a_killed_driver_exit_by_themselves(tmp_path):
    """Without a reaper, the ranks still notice that the driver died (the watch breaks)."""
    script = textwrap.dedent("""
        import os, subprocess, sys, time
        from tuwviz.run.watch import RankWatch
        from tuwviz.run.launch import local_mpi_command, loopback_env, record_launch
        w = RankWatch()
        rank = ("import time; from tuwviz.run import watch; from mpi4py import MPI; "
                "watch.connect(MPI.COMM_WORLD.rank); time.sleep(600)")
        record_launch("mpiexec", 2)  # counted by tests/support/budget.py
        p = subprocess.Popen([*local_mpi_command(), "-n", "2", sys.executable, "-c", rank],
                             env={**os.environ, **loopback_env(), "TUWVIZ_WATCH": w.address},
                             start_new_session=True)
        print(p.pid, flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)},
                            start_new_session=True)
    launcher = psutil.Process(int(proc.stdout.readline()))
    try:
        deadline = time.monotonic() + hang_guard(60)
        ranks = []
        while len(ranks) < 2 and time.monotonic() < deadline:
            ranks = [p for p in launcher.children(recursive=True) if "watch.connect" in " ".join(p.cmdline())]
            time.sleep(0.2)
        assert len(ranks) == 2
        time.sleep(2)  # connected and beating
        proc.kill()
        proc.wait()
        # nobody kills them: no reaper knows them (the script never registered them)
        _, alive = psutil.wait_procs(ranks, timeout=hang_guard(20))
        assert alive == []
    finally:
        for p in [launcher, *launcher.children(recursive=True)] if launcher.is_running() else []:
            p.kill()


def test_a_stopped_rank_is_named_within_the_limit(tmp_path, monkeypatch):
    """SIGSTOP on one rank of `bench`: the run stops, the error names that rank's pid."""
    import threading

    from tuwviz.run import launch
    from tuwviz.experiments.bench import bench
    from tuwviz.errors import RankFailure

    # the silent limit (30 s) shortened for this test: a live rank beats every second, so
    # 6 s (scaled) of silence is still far from what load delays a heartbeat by
    monkeypatch.setattr(launch, "SILENT_LIMIT", hang_guard(6))

    stopped = {}

    def stop_one():
        deadline = time.monotonic() + hang_guard(60)
        while time.monotonic() < deadline:
            ranks = [p for p in psutil.Process().children(recursive=True)
                     if p.cmdline()[1:3] == ["-m", "tuwviz.run.worker"]]  # not the launcher
            if len(ranks) == 3:
                time.sleep(2)  # running cases now
                ranks[1].suspend()
                stopped["pid"] = ranks[1].pid
                return
            time.sleep(0.1)

    threading.Thread(target=stop_one, daemon=True).start()
    # "stopped responding" names the silent rank (after launch.SILENT_LIMIT without a
    # heartbeat), long before the no-progress limit, which a slow case on a loaded
    # machine may come near: the run did not wait for the stopped rank's end
    with pytest.raises(RankFailure, match=r"rank \d \(pid (\d+)\) stopped responding") as info:
        bench("gatherv", ["native", "linear"], [3], ["same"], [1, 1000] * 500, reps=500,
              out=tmp_path / "r.csv", progress=False, stall_limit=hang_guard(120))
    assert f"(pid {stopped['pid']})" in str(info.value)
    assert len(open(tmp_path / "r.csv").readlines()) > 1  # rows so far are kept
