"""Starting MPI jobs: a job whose MPI never starts is tried again, a Python error is not."""
import os

import pytest

from tuwviz.run import launch
from tuwviz.errors import TuwvizError
from tuwviz.run.launch import THREAD_LEVEL, run_mpiexec
from tuwviz.problems import make_problem

CASES = [{"mode": "trace", "problem": make_problem("gatherv", 2, "same", 1).to_dict(),
          "algorithm": "linear"}]


def test_mpi_that_never_starts_is_tried_again_then_named(capfd, monkeypatch):
    # UCX refuses an unknown transport inside MPI_Init: no rank ever reports, as in the
    # launcher's rare start-up failures, but every time
    monkeypatch.setattr(launch, "STARTUP_ATTEMPTS", 2)  # one retry shows the loop
    with pytest.raises(TuwvizError) as err:
        run_mpiexec(2, CASES, extra_env={"UCX_TLS": "no-such-transport"})
    text = str(err.value)
    assert text.startswith(f"MPI did not start in {launch.STARTUP_ATTEMPTS} attempts")
    assert "MPIDI_UCX_init" in text  # MPI's own words are passed on
    notes = [l for l in capfd.readouterr().err.splitlines() if l.startswith("note: MPI did not start")]
    assert len(notes) == launch.STARTUP_ATTEMPTS - 1
    assert notes[-1].endswith(f"(attempt {launch.STARTUP_ATTEMPTS} of {launch.STARTUP_ATTEMPTS})")


def test_a_python_error_before_the_ranks_report_is_not_retried(tmp_path, capfd):
    # a broken mpi4py on the ranks' path: a Python traceback, the same on every attempt
    (tmp_path / "mpi4py").mkdir()
    (tmp_path / "mpi4py" / "__init__.py").write_text("raise ImportError('mpi4py is broken here')\n")
    with pytest.raises(TuwvizError) as err:
        run_mpiexec(2, CASES, extra_env={"PYTHONPATH": str(tmp_path)})
    assert "mpi4py is broken here" in str(err.value)
    assert "MPI did not start" not in str(err.value)
    assert "note: MPI did not start" not in capfd.readouterr().err


def test_heavy_yield_is_on_for_oversubscribed_measurements_only(monkeypatch):
    # the ranks report the setting they ran with (it is recorded in every bench row)
    monkeypatch.delenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", raising=False)
    n = os.cpu_count() + 1
    measure = [{**CASES[0], "mode": "measure", "reps": 2, "warmup": 0}]
    for cases, expected in [(CASES, "0"), (measure, "1")]:
        hellos = run_mpiexec(n, cases)
        assert [h["rank"] for h in hellos] == list(range(n))
        assert {h["heavy_yield"] for h in hellos} == {expected}, cases[0]["mode"]
    monkeypatch.setenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")  # the user's choice wins
    assert {h["heavy_yield"] for h in run_mpiexec(n, CASES)} == {"1"}


def test_ranks_ask_for_the_thread_level_they_need(monkeypatch):
    # mpi4py's default, MPI_THREAD_MULTIPLE, makes MPICH lock around every call; but
    # MPICH yields inside that lock, so oversubscribed runs keep it
    monkeypatch.delenv("MPI4PY_RC_THREAD_LEVEL", raising=False)
    monkeypatch.delenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", raising=False)
    assert {h["thread_level"] for h in run_mpiexec(2, CASES)} == {THREAD_LEVEL} == {"funneled"}
    n = os.cpu_count() + 1
    measure = [{**CASES[0], "mode": "measure", "reps": 2, "warmup": 0}]
    hellos = run_mpiexec(n, measure)
    assert {(h["heavy_yield"], h["thread_level"]) for h in hellos} == {("1", "multiple")}
    # oversubscribed and not timed: no heavy yield, but the lock's yield still helps
    hellos = run_mpiexec(n, CASES)
    assert {(h["heavy_yield"], h["thread_level"]) for h in hellos} == {("0", "multiple")}
    monkeypatch.setenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")  # the user's heavy yield
    assert {h["thread_level"] for h in run_mpiexec(2, CASES)} == {"multiple"}
    monkeypatch.setenv("MPI4PY_RC_THREAD_LEVEL", "serialized")  # the user's choice wins
    assert {h["thread_level"] for h in run_mpiexec(2, CASES)} == {"serialized"}


def test_ranks_that_ended_well_are_told_from_others_before_they_are_reaped():
    # a job is over once every rank ended with status 0, even before mpiexec reaps them
    import subprocess
    import sys
    import time

    from tuwviz.run.launch import _ranks_exited

    procs = {code: subprocess.Popen([sys.executable, "-c", f"raise SystemExit({code})"])
             for code in (0, 3)}
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for proc in procs.values():  # zombies: ended, not reaped (no wait() yet)
            while open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
                time.sleep(0.01)
        assert _ranks_exited([procs[0].pid])
        assert not _ranks_exited([procs[0].pid, procs[3].pid])  # one ended with code 3
        assert not _ranks_exited([procs[0].pid, running.pid])
        assert not _ranks_exited([])
    finally:
        running.kill()
        for proc in [*procs.values(), running]:
            proc.wait()
    assert _ranks_exited([procs[0].pid])  # reaped: gone, its launcher reports how it ended


def test_a_job_ended_before_its_ranks_report_leaves_no_shared_memory():
    # Ctrl-C while the ranks are still in MPI_Init: they have made MPICH's /dev/shm
    # segment (megabytes) but not reported it; ending the job removes it all the same
    import glob
    import subprocess
    import sys
    import time

    from support import hang_guard
    from tuwviz.run import reaper

    before = set(glob.glob("/dev/shm/mpich_shm_*"))
    began = time.time()
    script = "from mpi4py import MPI; import time; MPI.COMM_WORLD.Barrier(); time.sleep(600)"
    proc = subprocess.Popen([*launch.local_mpi_command(), "-n", "3", sys.executable, "-c", script],
                            env={**os.environ, **launch.loopback_env(), **launch.mpi_env(3)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        for _ in range(int(hang_guard(120) / 0.1)):  # until the ranks map their segment
            made = reaper.tree_segments(proc.pid)
            if made:
                break
            assert proc.poll() is None, "the job ended by itself"
            time.sleep(0.1)
        assert made and not set(made) & before
        launch._end_job(proc, [], began)  # no rank reported a segment
        proc.wait(timeout=hang_guard(30))
        assert not [s for s in made if os.path.exists(s)], made
    finally:
        launch._kill(proc)
