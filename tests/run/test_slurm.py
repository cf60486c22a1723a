"""The batch commands under a real SLURM (full tier): ``--launcher srun`` inside ``salloc``
and on its own, and the ways a SLURM run fails; and (quick tier) the ``--launcher`` option's
bad input, which needs no SLURM.

The SLURM is real (tests/support/slurm.py: munged, slurmctld, two slurmd node names on this
host); the ranks are real MPI ranks that MPICH's Hydra starts on its nodes through one srun
step (the default with pip's MPICH), or that ``srun --mpi=pmi2`` starts itself.
"""
from __future__ import annotations

import csv
import re
import subprocess
import sys
import threading
import time

import pytest

from support import REPO, hang_guard, run_cli
from tuwviz import config
from tuwviz.cli import options
from tuwviz.errors import TuwvizError
from tuwviz.run import slurm as slurm_launcher

full = pytest.mark.full


def test_launcher_choices_agree():
    assert options.LAUNCHERS == slurm_launcher.LAUNCHERS


@pytest.mark.parametrize("args, error", [
    (["verify", "--launcher", "mpirun"],
     "argument --launcher: invalid choice: 'mpirun' (choose from 'auto', 'mpiexec', 'srun')"),
    (["bench", "gatherv", "--launcher", "srun", "--backend", "smpi", "--platform", "hydra"],
     "--launcher is for real ranks; --backend smpi simulates them"),
    (["verify", "--launcher", "srun"], "srun not found on PATH"),
    (["calibrate", "--launcher", "srun"], "srun not found on PATH"),
])
def test_launcher_bad_input(args, error):
    """One clear line, before anything runs (srun hidden from PATH: no SLURM here)."""
    import os

    r = run_cli(*args, env={"PATH": os.path.dirname(sys.executable)},
                timeout=120)
    assert r.returncode in (1, 2)
    assert error in r.stderr.strip().splitlines()[-1], r.stderr


def test_srun_reports_name_ranks_and_reasons():
    assert slurm_launcher.task_report("srun: error: n1: tasks 0,2-3: Killed") == {
        0: "killed (on node n1)", 2: "killed (on node n1)", 3: "killed (on node n1)"}
    assert slurm_launcher.task_report("srun: error: some other trouble") == {}
    assert slurm_launcher.refusal("srun: error: Unable to create step for job 14: Task count "
                                  "specification invalid") == (
        "Unable to create step for job 14: Task count specification invalid")
    assert slurm_launcher.refusal("srun: job 3 queued and waiting for resources") is None
    # slurmstepd read a PMI line cut: said, with what helps
    assert slurm_launcher.pmi_cut("slurmstepd-n2: error: mpi/pmi2: value not properly terminated "
                                  "in client request")
    assert not slurm_launcher.pmi_cut("slurmstepd-n2: error: *** STEP 4.0 ON n1 CANCELLED ***")
    assert "MPIR_CVAR_CH4_NETMOD=ofi" in slurm_launcher.PMI_CUT
    # srun with no SLURM to talk to: one line, not three attempts
    assert slurm_launcher.refusal("srun: fatal: Could not establish a configuration source") == (
        "Could not establish a configuration source")


def test_start_command_outside_an_allocation_carries_the_site_settings(monkeypatch):
    monkeypatch.setenv("TUWVIZ_SLURM_PENDING", "7")
    env = {"TUWVIZ_SLURM_MPI": "pmix", "TUWVIZ_SLURM_PARTITION": "short",
           "TUWVIZ_SLURM_TIME": "0:10:00", "TUWVIZ_SLURM_OPTIONS": "--qos=low --exclusive"}
    assert slurm_launcher.start_command(3, env) == [
        "srun", "--mpi=pmix", "--ntasks=3", "--overcommit", "--kill-on-bad-exit=1",
        "--job-name=tuwviz", "--immediate=7", "--partition=short", "--time=0:10:00",
        "--qos=low", "--exclusive"]
    env["SLURM_JOB_ID"] = "5"  # inside an allocation: its own settings hold
    assert slurm_launcher.start_command(3, env)[-1] == "--kill-on-bad-exit=1"


def test_hydra_under_slurm_is_the_default_with_pips_mpich(monkeypatch):
    """pip's MPICH (mpiexec.hydra in this venv): Hydra starts the ranks, in salloc's own job
    outside an allocation; hydra asked for where there is none is one clear error."""
    monkeypatch.setenv("TUWVIZ_SLURM_PENDING", "7")
    hydra = slurm_launcher.hydra_mpiexec()
    assert hydra and hydra.startswith(sys.prefix)
    assert slurm_launcher.mpi_flavour({}) == "hydra"
    env = {"TUWVIZ_SLURM_PARTITION": "short", "TUWVIZ_SLURM_OPTIONS": "--nodes=2"}
    assert slurm_launcher.start_command(3, env) == [
        "salloc", "--ntasks=3", "--job-name=tuwviz", "--immediate=7", "--partition=short",
        "--nodes=2", hydra, "-bootstrap", "slurm", "-n", "3"]
    assert slurm_launcher.start_command(3, {**env, "SLURM_JOB_ID": "5"}) == [
        hydra, "-bootstrap", "slurm", "-n", "3"]
    assert slurm_launcher.job_announced("salloc: Pending job allocation 21") == "21"
    monkeypatch.setattr(sys, "prefix", "/nonexistent")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert slurm_launcher.mpi_flavour({}) == "pmi2"
    with pytest.raises(TuwvizError, match="no mpiexec.hydra is installed"):
        slurm_launcher.mpi_flavour({"TUWVIZ_SLURM_MPI": "hydra"})


def test_hydras_reports_name_the_rank_not_its_proxy():
    """Under Hydra srun's tasks are the proxies (one per node): Hydra's banner names the
    dead process by pid, srun's report a dead node's proxy; the rank named is the one
    there, not srun's task number (lines as Hydra and srun printed them here)."""
    from tuwviz.run.launch import _Output

    hellos = {0: {"pid": 100, "slurm_node": "n1"}, 1: {"pid": 101, "slurm_node": "n1"},
              2: {"pid": 102, "slurm_node": "n2"}, 3: {"pid": 103, "slurm_node": "n2"}}
    out = _Output(proxies=True)
    for line in ["=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
                 "=   PID 103 RUNNING AT n2", "=   EXIT CODE: 9",
                 "srun: error: n1: task 0: Exited with exit code 7",
                 "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)"]:
        out.add(line)
    assert out.name_ranks(hellos)[0] == 3 and out.how(3) == "killed by signal SIGKILL (Killed)"
    node = _Output(proxies=True)  # a node died: its proxy was killed with it
    for line in ["srun: error: n2: task 1: Killed",
                 "[mpiexec@vm] control_cb (pmiserv_cb.c:280): assert (!closed) failed"]:
        node.add(line)
    assert node.name_ranks(hellos) == [2] and node.how(2) == "killed (on node n2)"
    assert node.how(1) is None  # srun's task 1 is n2's proxy, not rank 1


def _tuwviz(slurm, *args, inside: str | None = None, env: dict | None = None,
            timeout: float = 900) -> subprocess.CompletedProcess:
    """``tuwviz ARGS`` against the test SLURM; inside ``salloc INSIDE`` if given."""
    cmd = [sys.executable, "-m", "tuwviz.cli", *args]
    if inside is not None:
        cmd = ["salloc", *inside.split(), *cmd]
    return subprocess.run(cmd, env={**slurm.env, **(env or {})}, capture_output=True, text=True,
                          cwd=REPO, timeout=hang_guard(timeout))


def _job_of(salloc_stderr: str) -> str:
    m = re.search(r"Granted job allocation (\d+)", salloc_stderr)
    assert m, salloc_stderr
    return m.group(1)


def _launches() -> list[str]:
    path = config.launch_log()
    try:
        with open(path) as f:
            return f.read().split("\n")
    except OSError:
        return []


def _worker_processes() -> list[str]:
    out = subprocess.run(["ps", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if "tuwviz.run.worker" in l and not l.startswith("Z")]


def _nothing_left(slurm) -> None:
    assert slurm.wait_queue_empty() == []
    for _ in range(int(hang_guard(40))):  # a cancelled step's ranks take a moment to go
        if not _worker_processes():
            break
        time.sleep(0.5)
    assert _worker_processes() == []


@full
def test_verify_inside_salloc(slurm):
    """`tuwviz verify --launcher srun --np 1-5` inside salloc (2 nodes, 5 tasks): every case
    of every collective matches the library, the ranks started by srun."""
    before = len(_launches())
    r = _tuwviz(slurm, "verify", "--launcher", "srun", "--np", "1-5",
                inside="--nodes=2 --ntasks=5 --overcommit")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert re.search(r"\d+ cases: all cases match the MPI library", r.stdout), r.stdout[-2000:]
    assert "srun 5" in _launches()[before:]
    _nothing_left(slurm)


@full
def test_the_zero_size_calls_at_33_under_srun(slurm):
    """Issue 69 where users verify at scale: the null pairs of every collective at p = 33,
    ranks started by srun on both nodes (the count vectors once had 32 entries)."""
    before = len(_launches())
    r = _tuwviz(slurm, "verify", "--launcher", "srun", "--np", "33",
                "--types", "null,null-in-place", inside="--nodes=2 --ntasks=33 --overcommit")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert re.search(r"\d+ cases: all cases match the MPI library", r.stdout), r.stdout[-2000:]
    assert "srun 33" in _launches()[before:]
    _nothing_left(slurm)


@full
def test_srun_pmi2_on_one_node(slurm):
    """TUWVIZ_SLURM_MPI=pmi2: srun starts every rank as a task with SLURM's PMI (for MPIs
    built against it); pip's MPICH works so on one node (not across nodes: README)."""
    before = len(_launches())
    r = _tuwviz(slurm, "verify", "--launcher", "srun", "--np", "3", "--collective", "allgatherv",
                env={"TUWVIZ_SLURM_MPI": "pmi2"}, inside="--nodes=1 --ntasks=3 --overcommit")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert re.search(r"\d+ cases: all cases match the MPI library", r.stdout), r.stdout[-2000:]
    assert "srun 3" in _launches()[before:]
    _nothing_left(slurm)


@full
def test_bench_and_calibrate_inside_salloc_record_the_job(slurm, tmp_path):
    """Inside an allocation, --launcher auto picks srun; rows say srun, the job and both
    nodes, and that 4 ranks on this host's 2 cores are oversubscribed."""
    import socket

    out = tmp_path / "rows.csv"
    r = _tuwviz(slurm, "bench", "gatherv", "--np", "4", "--b", "1", "--algorithms", "native,tuw",
                "--reps", "10", "--rounds", "1", "--no-progress", "--out", str(out),
                inside="--nodes=2 --ntasks=4 --overcommit")
    assert r.returncode == 0, r.stderr[-3000:]
    job = _job_of(r.stderr)
    rows = list(csv.DictReader(open(out)))
    assert [(row["algorithm"], row["p"]) for row in rows] == [("native", "4"), ("tuw", "4")]
    for row in rows:
        assert (row["backend"], row["slurm_job"], row["nodes"]) == ("srun", job, "n1;n2")
        assert row["hosts"] == socket.gethostname() and row["oversubscribed"] == "True"
        assert float(row["median_us"]) > 0

    cal = _tuwviz(slurm, "calibrate", "--np", "2", "--reps", "10", "--no-progress", "--json",
                  inside="--nodes=2 --ntasks=2")
    assert cal.returncode == 0, cal.stderr[-3000:]
    assert '"alpha"' in cal.stdout and '"cached": false' in cal.stdout
    _nothing_left(slurm)


@full
def test_srun_outside_an_allocation_is_its_own_job(slurm, tmp_path):
    """Outside an allocation, --launcher srun asks for a job itself (named tuwviz)."""
    out = tmp_path / "rows.csv"
    r = _tuwviz(slurm, "bench", "allgatherv", "--np", "3", "--b", "2", "--reps", "10",
                "--rounds", "1", "--no-progress", "--launcher", "srun", "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = list(csv.DictReader(open(out)))
    assert row["backend"] == "srun" and row["slurm_job"].isdigit() and row["nodes"]
    _nothing_left(slurm)


@full
def test_rejected_partition(slurm):
    """A partition the scheduler does not know: one clear line, nothing runs or stays."""
    r = _tuwviz(slurm, "verify", "--collective", "gatherv", "--np", "2", "--launcher", "srun",
                env={"TUWVIZ_SLURM_PARTITION": "nosuchpart"}, timeout=300)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        "error: SLURM did not start the ranks: Unable to allocate resources: Invalid "
        "partition name specified (nothing ran; nothing is left in the queue)"), r.stderr
    assert "starting again" not in r.stderr  # a refusal is not retried
    _nothing_left(slurm)


@full
def test_too_many_tasks(slurm):
    """More tasks than the nodes take (8 each): refused once, clearly."""
    from support.slurm import MAX_TASKS, NODES

    r = _tuwviz(slurm, "verify", "--collective", "gatherv", "--algorithms", "linear",
                "--np", str(MAX_TASKS * len(NODES) + 1), "--b", "1", "--dist", "same",
                "--roots", "0", "--types", "same", "--launcher", "srun", timeout=300)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: SLURM did not start the ranks: ") and "nothing ran" in last, r.stderr
    assert "starting again" not in r.stderr
    _nothing_left(slurm)


@full
def test_pending_beyond_the_limit(slurm):
    """Every CPU taken by another job: the run gives up after TUWVIZ_SLURM_PENDING seconds
    and its request leaves the queue; the other job is untouched."""
    blocker = slurm.run("sbatch", "--parsable", "--nodes=2", "--ntasks=4", "--job-name=blocker",
                        "--output=/dev/null", "--wrap", "sleep 600").stdout.strip()
    try:
        for _ in range(int(hang_guard(60))):
            if f"{blocker} RUNNING blocker" in slurm.queue():
                break
            time.sleep(0.5)
        r = _tuwviz(slurm, "verify", "--collective", "gatherv", "--np", "2", "--launcher",
                    "srun", env={"TUWVIZ_SLURM_PENDING": "3"}, timeout=300)
        assert r.returncode == 1
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("error: SLURM did not start the ranks: "), r.stderr
        assert slurm.queue() == [f"{blocker} RUNNING blocker"]
    finally:
        slurm.run("scancel", blocker, check=False)
    _nothing_left(slurm)


@full
@pytest.mark.parametrize("watched", [True, False], ids=["watched", "launcher-report"])
def test_node_dies_mid_run(slurm, tmp_path, watched):
    """A node dies (its slurmd, slurmstepd and ranks killed) while bench runs across two
    nodes: the error names a rank on that node, the rows measured before stay on disk,
    nothing is left queued or running.

    watched: inside salloc, Hydra's ranks reach the driver's watch (one host), which names
    the rank.  launcher-report: the run's own job, its ranks given a watch address they
    cannot reach (Hydra's own configuration file sets it), as ranks on another machine
    than the driver's are: neither srun (its slurmstepd died with the node) nor Hydra
    says which node it was, so the error says where each rank ran."""
    out = tmp_path / "rows.csv"
    cmd = [sys.executable, "-m", "tuwviz.cli", "bench", "gatherv", "--np", "4",
           "--b", ",".join(map(str, range(1, 49))), "--reps", "200", "--rounds", "1",
           "--no-progress", "--out", str(out)]
    if watched:
        cmd, env = ["salloc", "--nodes=2", "--ntasks=4", "--overcommit", *cmd], slurm.env
    else:
        cmd = [*cmd, "--launcher", "srun"]
        hydra = tmp_path / "hydra.conf"  # mpiexec's own defaults: -genv beats the driver's
        hydra.write_text(f"-genv {config.WATCH} {tmp_path}/elsewhere/watch.sock\n")
        env = {**slurm.env, "HYDRA_CONFIG_FILE": str(hydra),
               "TUWVIZ_SLURM_OPTIONS": "--nodes=2"}
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(int(hang_guard(600))):  # until a first row is on disk
            if out.exists() and len(out.read_text().splitlines()) >= 2:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        slurm.kill_node("n2")
        stdout, stderr = proc.communicate(timeout=hang_guard(300))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    try:
        assert proc.returncode != 0, f"the run ended before n2 died:\n{stdout}{stderr}"
        error = [l for l in stderr.splitlines() if l.startswith("error: ")]
        assert error, stderr
        if watched:  # block placement: ranks 2 and 3 ran on n2
            assert re.match(r"error: rank [23] died", error[0]), stderr
        else:  # the node's slurmstepd died too: srun says nothing, Hydra not which node
            assert error[0].startswith("error: a node's Hydra proxy ended without a word"), stderr
            assert "(n1: ranks 0, 1; n2: ranks 2, 3)" in error[0], stderr
        rows = list(csv.DictReader(open(out)))
        assert rows and all(r["nodes"] == "n1;n2" for r in rows)
        _nothing_left(slurm)
    finally:
        slurm.revive_node("n2")


@full
def test_paper_scale_template(slurm, tmp_path):
    """The profile's sbatch template, as it is, on 2 x 2 tasks instead of 36 x 32 (options
    on the command line override its #SBATCH lines): each step leaves its output, the
    study's rows name srun, the job and both nodes, and the guidelines were evaluated."""
    import json

    script = REPO / "cluster_profiles" / "slurm" / "paper-scale.sbatch"
    r = slurm.run("sbatch", "--wait", "--parsable", "--nodes=2", "--ntasks-per-node=2",
                  f"--chdir={tmp_path}", f"--output={tmp_path}/job.out", str(script),
                  timeout=1800, check=False, env={"TUWVIZ_VENV": sys.prefix})
    log = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert r.returncode == 0, r.stderr + log[-3000:]
    job = r.stdout.strip().split(";")[0]
    out = tmp_path / "results" / f"paper-scale-{job}"
    assert f"job {job}: 4 ranks on 2 nodes" in log and f"done: results/paper-scale-{job}" in log
    verify = json.loads((out / "verify.json").read_text())
    assert verify["ok"] is True and verify["cases"] > 0, verify
    (cal,) = json.loads((out / "calibration.json").read_text())
    assert cal["ranks"] == 4 and cal["alpha"] > 0
    rows = list(csv.DictReader(open(out / "circulant.csv")))
    assert rows and {(r["backend"], r["slurm_job"], r["nodes"]) for r in rows} == {
        ("srun", job, "n1;n2")}
    assert "Guideline" in (out / "guidelines.txt").read_text()
    assert (out / "guidelines.html").stat().st_size > 0
    _nothing_left(slurm)


@full
@pytest.mark.parametrize("when", ["pending", "running"])
def test_interrupted_srun_run_leaves_nothing(slurm, tmp_path, when):
    """Ctrl-C while srun waits for its job, SIGTERM while the job runs: the command ends,
    its job leaves the queue, no rank is left (another job is untouched)."""
    import signal

    from support import as_from_a_terminal

    out = tmp_path / "rows.csv"
    blocker = None
    if when == "pending":
        blocker = slurm.run("sbatch", "--parsable", "--nodes=2", "--ntasks=4",
                            "--job-name=blocker", "--output=/dev/null",
                            "--wrap", "sleep 600").stdout.strip()
    cmd = [sys.executable, "-m", "tuwviz.cli", "bench", "gatherv", "--np", "2", "--b",
           "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "--reps", "200", "--rounds", "1",
           "--no-progress", "--launcher", "srun", "--out", str(out)]
    proc = subprocess.Popen(cmd, env=slurm.env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=as_from_a_terminal)
    try:
        for _ in range(int(hang_guard(600))):
            jobs = [j for j in slurm.queue() if j.endswith(" tuwviz")]
            if when == "pending" and any(" PENDING " in j for j in jobs):
                break
            if when == "running" and out.exists() and len(out.read_text().splitlines()) >= 2:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT if when == "pending" else signal.SIGTERM)
        _, stderr = proc.communicate(timeout=hang_guard(120))
        assert proc.returncode in (130, 143, 1), stderr
        left = slurm.wait_queue_empty(30) if blocker is None else None
        if blocker is not None:
            for _ in range(int(hang_guard(60))):
                if slurm.queue() == [f"{blocker} RUNNING blocker"]:
                    break
                time.sleep(0.5)
            assert slurm.queue() == [f"{blocker} RUNNING blocker"]
        else:
            assert left == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if blocker is not None:
            slurm.run("scancel", blocker, check=False)
    _nothing_left(slurm)


@pytest.fixture
def slurm_profile(slurm, tmp_path, monkeypatch):
    """The SLURM profile against the test SLURM, as a user copies it (its job script and
    logs go to its own folder); yields the MPI processes alive before."""
    import shutil

    from support import mpi_processes

    shutil.copytree(REPO / "cluster_profiles", tmp_path / "profiles",
                    ignore=shutil.ignore_patterns("security", "log", "pid", "db", "*.json"))
    for var in ("SLURM_CONF", "PATH"):
        monkeypatch.setenv(var, slurm.env[var])
    monkeypatch.setenv("TUWVIZ_PROFILES", str(tmp_path / "profiles"))
    monkeypatch.setenv("TUWVIZ_CONTROLLER_IP", "127.0.0.1")  # one host: no open port
    before = mpi_processes()
    yield before
    assert slurm.wait_queue_empty() == []
    for _ in range(int(hang_guard(40))):
        if not mpi_processes() - before:
            break
        time.sleep(0.5)
    assert mpi_processes() - before == set()


@full
def test_slurm_profile_engines(slurm, slurm_profile, tmp_path):
    """The SLURM profile for real: 4 engines as one batch job on the two nodes, engine i
    = MPI rank i; one kernel per collective verified on them; bench rows name the job;
    stopping cancels it (squeue empty) and leaves no engine (the fixture checks)."""
    from tuwviz.kernels.load import algorithms
    from tuwviz.session import LocalCluster

    kernels = {}
    for row in algorithms():
        if row.comm == "intra" and not row.library:
            kernels.setdefault(row.collective, row.name)
    out = tmp_path / "rows.csv"
    with LocalCluster(profile="slurm", n=4) as cluster:
        infos = cluster.rank_infos()
        assert [i["rank"] for i in infos] == [0, 1, 2, 3]
        assert [i["slurm_node"] for i in infos] == ["n1", "n1", "n2", "n2"]
        job = infos[0]["slurm_job"]
        assert {i["slurm_job"] for i in infos} == {job}
        (line,) = slurm.queue()
        assert line.startswith(f"{job} RUNNING tuwviz-engines-")
        for coll, alg in kernels.items():
            report = cluster.verify([coll], [alg], bs=[0, 5])
            assert report.ok and len(report.results) > 0, (coll, alg, report.table())
        rows = cluster.bench("gatherv", ["native", "tuw"], bs=[1], reps=10, rounds=1,
                             out=out, progress=False)
    assert len(kernels) >= 10
    assert list(rows["algorithm"]) == ["native", "tuw"]
    assert set(rows["backend"]) == {"ipyparallel"} and set(rows["nodes"]) == {"n1;n2"}
    assert [r["slurm_job"] for r in csv.DictReader(open(out))] == [job, job]


@full
@pytest.mark.parametrize("trouble", ["partition", "tasks", "pending"])
def test_slurm_profile_job_refused_or_pending(slurm, slurm_profile, monkeypatch, trouble):
    """A bad partition, more engines than the nodes take, a job still pending at the
    limit: one clear error, nothing queued after (the fixture checks), no engine left."""
    from support.slurm import MAX_TASKS, NODES
    from tuwviz.errors import TuwvizError
    from tuwviz.session import LocalCluster

    n, timeout, blocker = 4, None, None
    if trouble == "partition":
        monkeypatch.setenv("TUWVIZ_SLURM_PARTITION", "nosuchpart")
    elif trouble == "tasks":
        n = MAX_TASKS * len(NODES) + 1
    else:
        timeout = 5
        blocker = slurm.run("sbatch", "--parsable", "--nodes=2", "--ntasks=4",
                            "--job-name=blocker", "--output=/dev/null",
                            "--wrap", "sleep 600").stdout.strip()
    try:
        with pytest.raises(TuwvizError) as info:
            with LocalCluster(profile="slurm", n=n, start_timeout=timeout):
                pass
    finally:
        if blocker is not None:
            slurm.run("scancel", blocker, check=False)
    if trouble == "pending":
        assert re.fullmatch(r"the engines' job \d+ did not bring up 4 engines in 5 s \(0 "
                            r"registered; the job: PENDING \(Resources\)\); it was cancelled "
                            r"\(start_timeout= waits longer\)", str(info.value)), info.value
    elif trouble == "tasks":  # accepted, but it would pend for ever: said at once
        assert re.fullmatch(r"the engines' job \d+ cannot run: SLURM says PENDING "
                            r"\(PartitionConfig\); it was cancelled", str(info.value)), info.value
    else:
        assert str(info.value) == ("the engines' batch job was not accepted: sbatch ended with "
                                   "exit status 1 (its message is above); nothing is queued")


@full
def test_slurm_profile_node_dies(slurm, slurm_profile, tmp_path):
    """A node dies while its engines run a benchmark: the error names a rank on it, rows
    so far are on disk, the job is cancelled and nothing is left (the fixture checks)."""
    from tuwviz.errors import RankFailure
    from tuwviz.session import LocalCluster

    out = tmp_path / "rows.csv"
    try:
        with LocalCluster(profile="slurm", n=4) as cluster:
            killer = threading.Thread(target=_kill_when_rows, args=(slurm, out, "n2"))
            killer.start()
            try:
                with pytest.raises(RankFailure) as info:
                    cluster.bench("gatherv", ["native", "tuw"], bs=list(range(1, 33)),
                                  reps=200, rounds=1, out=out, progress=False)
            finally:
                killer.join()
        assert re.match(r"rank [23] ", str(info.value)), info.value
        rows = list(csv.DictReader(open(out)))
        assert rows and {r["nodes"] for r in rows} == {"n1;n2"}
    finally:
        slurm.revive_node("n2")


def _kill_when_rows(slurm, out, node: str) -> None:
    for _ in range(int(hang_guard(1200))):
        if out.exists() and len(out.read_text().splitlines()) >= 2:
            break
        time.sleep(0.1)
    slurm.kill_node(node)
