"""A test session that is interrupted leaves nothing behind.

A small pytest session runs in a subprocess: its fixture starts a LocalCluster, its test
starts an mpiexec job that would run for minutes.  While both are up, the session gets
SIGINT (Ctrl-C) or SIGTERM (a CI time-out, ``kill``).  Afterwards no process it started
may be alive and no temporary file or folder it made may remain.  The session's processes
are found by the id :mod:`leaks` puts in their environment, so nothing else on the
machine is looked at.
"""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from support import REPO, hang_guard, leaks

INNER = textwrap.dedent('''
    import os
    from pathlib import Path

    import pytest

    from tuwviz.session import LocalCluster
    from tuwviz.run.launch import run_mpiexec
    from tuwviz.problems import make_problem

    READY = Path(os.environ["READY_FILE"])


    @pytest.fixture
    def cluster():
        c = LocalCluster(n=2).start()
        try:
            yield c
        finally:
            c.stop()


    def test_runs_for_minutes(cluster):
        READY.write_text("cluster")
        pr = make_problem("gatherv", 2, "same", 1000, root=0)
        cases = [{"mode": "measure", "problem": pr.to_dict(), "algorithm": "native",
                  "reps": 1000, "warmup": 0}] * 100_000
        run_mpiexec(2, cases, on_start=lambda hellos: READY.write_text("cluster mpiexec"))
''')

CONFTEST = textwrap.dedent('''
    import signal

    from support import leaks

    def pytest_configure(config):
        config.pluginmanager.register(leaks, "tuwviz-leaks")
        # A command started in the background by a non-interactive shell (`cmd &`, as CI
        # runners and nohup do) inherits SIGINT ignored, and Python then installs no
        # KeyboardInterrupt handler: be the session a user's terminal would interrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
''')


# SIGTERM (a CI time-out, kill) goes the same way once leaks.py has turned it into
# KeyboardInterrupt: the full tier checks that too
@pytest.mark.parametrize("sig", [
    pytest.param(signal.SIGINT, id="SIGINT"),
    pytest.param(signal.SIGTERM, id="SIGTERM", marks=pytest.mark.full)])
def test_an_interrupted_session_leaves_no_process_and_no_temporary_file(tmp_path, sig):
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_inner.py").write_text(INNER)
    (inner / "conftest.py").write_text(CONFTEST)
    # the inner session's TMPDIR, short (socket paths): must be empty afterwards
    tmp = Path(tempfile.mkdtemp(prefix="i"))
    ready = tmp_path / "ready"
    marker = uuid.uuid4().hex  # an id for the inner session's processes alone
    env = {**os.environ, "TMPDIR": str(tmp), "READY_FILE": str(ready),
           leaks.SESSION_VAR: f"{os.environ[leaks.SESSION_VAR]},{marker}",
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s", "--rootdir", str(inner),
         "-o", "addopts=", "-o", "timeout=0", str(inner)],
        cwd=inner, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + hang_guard(300)
        while not (ready.exists() and "mpiexec" in ready.read_text()):
            assert proc.poll() is None, f"the inner session ended early:\n{proc.stdout.read()}"
            assert time.monotonic() < deadline, "hang guard: the cluster and mpiexec did not start"
            time.sleep(0.2)
        started = leaks.session_processes(marker)
        kinds = " ".join(started.values())
        assert "ipyparallel" in kinds and "tuwviz.run.worker" in kinds, started  # both are up
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=hang_guard(180))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
    assert "LEFT BEHIND" not in out, out[-3000:]  # the inner session's own check found nothing
    # and, looking from outside: every process it started has ended ...
    deadline = time.monotonic() + hang_guard(30)
    while leaks.session_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert leaks.session_processes(marker) == {}, out[-3000:]
    # ... and every temporary file and folder it made is gone
    assert list(tmp.rglob("*")) == [], out[-3000:]
    tmp.rmdir()
