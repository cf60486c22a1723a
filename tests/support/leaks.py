"""Pytest plugin: nothing the test session starts outlives it.

MPI ranks busy-poll: one rank left running by a failed test slows every later test and the
next run on the same machine.  So the session

* marks every process it starts: ``TUWVIZ_TEST_SESSIONS`` in the environment, inherited
  by every child (CLI runs, mpiexec, ranks, controller, engines, Jupyter, Chromium), holds
  one id per nested test session; a process is this session's if its environment, read
  from ``/proc/<pid>/environ``, carries this session's id -- even after it was reparented
  to PID 1.  Nothing without the id is ever touched;
* gives its processes a private temporary folder (``TMPDIR``), so a temporary file it
  leaves is found without guessing whose it is;
* turns SIGTERM into KeyboardInterrupt, so that a terminated run (a CI time-out, ``kill``)
  unwinds like Ctrl-C: every fixture's clean-up runs;
* at the very end (after every fixture's clean-up, also after Ctrl-C or SIGTERM) ends any
  of its processes still alive, removes its leftover temporary files and the
  ``mpich_shm_*`` segments its MPI jobs left in /dev/shm, and fails the run naming each
  one;
* gives :mod:`tuwviz.run.launch` a launch log (``TUWVIZ_LAUNCH_LOG``) in that folder, which
  :mod:`budget` counts.

``tuwviz.run.reaper`` processes of this very session are left alone: each one ends by itself
as soon as the session's process exits (that is its job).
"""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from tuwviz.run.reaper import mapped_segments

__all__ = ["SESSION_VAR", "marked_processes", "session_processes", "SESSION_ID"]

SESSION_VAR = "TUWVIZ_TEST_SESSIONS"
SESSION_ID = uuid.uuid4().hex[:16]
# nested sessions (a test that runs pytest) keep the outer ids: the outer check sees theirs
os.environ[SESSION_VAR] = ",".join(filter(None, [os.environ.get(SESSION_VAR), SESSION_ID]))

# pytest's own tmp_path folders stay where pytest keeps them (it prunes old ones itself);
# everything else the session's processes put in TMPDIR goes to a folder of our own.
os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
# (short: Unix socket paths made in it must stay under 108 bytes, also in nested sessions)
TMP = Path(tempfile.mkdtemp(prefix="tuwviz-t"))
os.environ["TMPDIR"] = tempfile.tempdir = str(TMP)
LAUNCH_LOG = TMP / ".launches"  # the one file there that is not a leftover
os.environ["TUWVIZ_LAUNCH_LOG"] = str(LAUNCH_LOG)

SHM = Path("/dev/shm")
SHM_PATTERN = "mpich_shm_*"
_shm_before = {p.name for p in SHM.glob(SHM_PATTERN)}
#: Seconds that processes get to end by themselves (reapers act within about 4 s) before
#: the check calls them leftovers; scaled like every hang guard.
SETTLE = 15.0 * float(os.environ.get("TUWVIZ_TIMEOUT_SCALE", "1"))


def session_processes(session_id: str = SESSION_ID) -> dict[int, str]:
    """Live processes whose environment carries `session_id`: ``{pid: command line}``."""
    return marked_processes(SESSION_VAR, session_id)


def marked_processes(var: str, value: str) -> dict[int, str]:
    """Live processes (not zombies, not this one) whose environment variable `var` holds
    `value` (among comma-separated values): ``{pid: command line}``."""
    found = {}
    needle = value.encode()
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if needle not in environ:
                continue
            stat = (entry / "stat").read_text()
            if stat[stat.rindex(")") + 2] == "Z":  # a zombie holds no CPU or memory
                continue
            args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or not readable: not ours to judge
            continue
        for item in environ.split(b"\0"):
            if item.startswith(var.encode() + b"=") and \
                    value in item.split(b"=", 1)[1].decode(errors="replace").split(","):
                found[int(entry.name)] = args.strip()
    return found


def _own_reaper(args: str) -> bool:
    return "tuwviz.run.reaper" in args and args.split()[-1] == str(os.getpid())


def _leftover_processes() -> list[str]:
    deadline = time.monotonic() + SETTLE
    while True:
        left = {pid: args for pid, args in session_processes().items() if not _own_reaper(args)}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + SETTLE  # gone before the files are judged (a rank maps its shm)
    while left and any(not _own_reaper(a) for a in session_processes().values()) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    return [f"process {pid}: {args[:160]}" for pid, args in sorted(left.items())]


def _leftover_files() -> list[str]:
    found = []
    for path in sorted(p for p in TMP.iterdir() if p != LAUNCH_LOG):
        found.append(f"temporary file {path}")
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    in_use = {Path(p).name for p in mapped_segments()}  # segments of live jobs
    for path in sorted(SHM.glob(SHM_PATTERN)):
        # a new segment nobody maps any more: an MPI job of this session died before
        # MPICH removed it (segments of jobs still running elsewhere are mapped)
        if path.name not in _shm_before and path.name not in in_use:
            found.append(f"shared memory {path} ({path.stat().st_size // 1024} KiB)")
            path.unlink(missing_ok=True)
    return found


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminate)
    config._tuwviz_leaks = []


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    # trylast: after pytest's own hook has torn down every fixture
    leaks = _leftover_processes() + _leftover_files()
    session.config._tuwviz_leaks = leaks
    if leaks and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tr = terminalreporter
    leaks = getattr(config, "_tuwviz_leaks", [])
    if leaks:
        tr.write_sep("=", "LEFT BEHIND by this test session (ended or removed now)", red=True)
        for line in leaks:
            tr.write_line(line, red=True)


def pytest_unconfigure(config):
    shutil.rmtree(TMP, ignore_errors=True)
