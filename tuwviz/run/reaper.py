"""End what tuwviz started when the process that started it dies, however it dies.

A driver (the ``tuwviz`` command, a script, a Jupyter kernel) starts mpiexec, MPI ranks,
an ipyparallel controller and engines, or JupyterLab.  Its own clean-up (``finally``,
``atexit``, signal handlers) covers Ctrl-C and SIGTERM, but not SIGKILL, a crash, or a
Jupyter kernel that is killed on restart: the children would be reparented to PID 1 and
run on, holding cores and temporary files.

So the first time a driver starts such a process, it also starts one small *reaper*
process (``python -m tuwviz.run.reaper``) in its own session and keeps the write end of a
pipe to it.  The driver tells the reaper, one line each, which process trees it started
(``pid``) and which temporary files or folders belong to them (``path``).  The reaper
remembers every descendant of those processes as it sees them.  When the pipe reports
end-of-file -- the driver is gone, by any signal, since the kernel closes a dead
process's files -- the reaper terminates every remembered process still alive (SIGTERM,
then SIGKILL after 3 s), removes the paths, and exits.  A driver that cleans up by itself
leaves the reaper nothing to do.

Examples
--------
>>> import subprocess, sys
>>> from tuwviz.run import reaper
>>> child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
>>> reaper.watch(child.pid)   # killed within seconds if this interpreter dies
>>> child.kill(); _ = child.wait(); reaper.forget(child.pid)
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

from .. import config
from ..procfs import mapped_files

__all__ = ["watch", "forget", "remove_on_exit", "keep", "reaper_pid", "end_processes",
           "mapped_segments", "mpich_segments", "unmapped_segments", "job_segments", "tree_segments", "track_segments", "release_segments"]

#: Seconds between looks at the watched process trees (a child started and killed faster
#: than this, with the driver, is still caught: its parent is watched and killed too).
POLL = 0.5
#: Seconds between SIGTERM and SIGKILL.
GRACE = 3.0

_lock = threading.Lock()
_proc: subprocess.Popen | None = None
_owner: int | None = None  # pid of the driver that started _proc (a fork needs its own)


def _send(line: str) -> None:
    global _proc, _owner
    with _lock:
        if _proc is None or _owner != os.getpid() or _proc.poll() is not None:
            # argument list, no shell; the reaper ignores the driver's signals
            _proc = subprocess.Popen(
                [sys.executable, "-m", "tuwviz.run.reaper", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, text=True, close_fds=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
                    config.IMPORT_ROOT, os.environ.get("PYTHONPATH")]))},
            )
            _owner = os.getpid()
        try:
            _proc.stdin.write(line + "\n")
            _proc.stdin.flush()
        except (BrokenPipeError, OSError):  # the reaper died: clean-up is best effort
            _proc = None


def watch(pid: int) -> None:
    """Kill process `pid` and all its descendants if this process dies first."""
    _send(f"pid {int(pid)}")


def forget(pid: int) -> None:
    """`pid` was ended on purpose; stop watching it."""
    _send(f"forget {int(pid)}")


def remove_on_exit(path: str | os.PathLike) -> None:
    """Remove file or folder `path` (a glob pattern if it holds ``*``) if this process dies
    without removing it."""
    _send(f"path {os.fspath(path)}")


def keep(path: str | os.PathLike) -> None:
    """`path` was removed (or is to be kept); stop tracking it."""
    _send(f"keep {os.fspath(path)}")


def mpich_segments(pid: int | str = "self") -> list[str]:
    """The MPICH shared-memory segments (``/dev/shm/mpich_shm_*``) that process `pid` maps.

    MPICH removes a job's segments in ``MPI_Finalize``; a job that aborts or whose rank is
    killed leaves them in /dev/shm (megabytes each) until someone removes them.  So every
    rank reports its segments (:func:`tuwviz.run.runner.rank_info`) and the driver removes them
    when the job has ended (:func:`release_segments`), or its reaper does, if the driver
    dies first (:func:`track_segments`).

    >>> mpich_segments(os.getpid()) == mpich_segments()
    True
    """
    return [path for path in mapped_files(pid)
            if path.startswith("/dev/shm/mpich_shm_") and not path.endswith("(deleted)")]


def unmapped_segments(since: float) -> list[str]:
    """MPICH segments made since time `since` (``time.time()``) that no live process maps.

    For a job whose ranks died in ``MPI_Init``, before they could report theirs: a segment
    nobody maps is garbage, and one this recent is the failed job's.
    """
    import glob

    recent = []
    for path in glob.glob("/dev/shm/mpich_shm_*"):
        try:
            if os.stat(path).st_mtime >= since - 1:
                recent.append(path)
        except OSError:
            continue
    if not recent:
        return []
    mapped = mapped_segments()
    return [path for path in recent if path not in mapped]


def mapped_segments() -> set[str]:
    """The MPICH segments some live process maps: in use, never to be removed."""
    return {seg for pid in os.listdir("/proc") if pid.isdigit() for seg in mpich_segments(pid)}


def job_segments(infos) -> list[str]:
    """The segments that a job's ranks reported, from their ``rank_info`` dicts' ``shm``."""
    return sorted({path for info in infos for path in info.get("shm", ())})


def track_segments(paths) -> None:
    """Remove the segments `paths` if this process dies before :func:`release_segments`."""
    for path in paths:
        remove_on_exit(path)


def release_segments(paths, tell: bool = True) -> None:
    """Remove the segments `paths` of a job that has ended (gone already: nothing to do).

    With `tell`, the reaper stops tracking them (a rank, which has no reaper, says False).
    """
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass
        if tell:
            keep(path)


def tree_segments(pid: int) -> list[str]:
    """The MPICH segments mapped by process `pid` or any of its descendants (e.g. the
    ranks under an mpiexec), for processes that may end before they report them."""
    import psutil

    try:
        procs = [psutil.Process(pid)]
        procs += procs[0].children(recursive=True)
    except psutil.Error:
        return []
    return sorted({seg for proc in procs for seg in mpich_segments(proc.pid)})


def reaper_pid() -> int | None:
    """PID of this process's reaper, if one runs (for tests)."""
    with _lock:
        return _proc.pid if _proc is not None and _proc.poll() is None else None


# -- the reaper process ------------------------------------------------------------------
def _descendants(roots: dict[int, float]) -> dict[int, float]:
    """Every live descendant of the live roots, as {pid: create_time}."""
    import psutil

    found = {}
    for pid, created in roots.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() != created:
                continue  # the pid was reused by an unrelated process
            for child in proc.children(recursive=True):
                found[child.pid] = child.create_time()
        except psutil.Error:
            continue
    return found


def end_processes(procs: list, grace: float = GRACE, terminate: bool = True) -> None:
    """End the psutil processes `procs`: SIGTERM (with `terminate`), SIGKILL after `grace` s.

    Also used by :class:`~tuwviz.run.engines.Engines` for engines a stopped launcher left.
    """
    import psutil

    for proc in procs if terminate else ():
        try:
            proc.send_signal(signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            proc.terminate()
        except psutil.Error:
            pass
    alive = _wait_ended(procs, grace)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    _wait_ended(alive, max(grace, 5.0))  # killed: ended in moments


def _wait_ended(procs: list, timeout: float) -> list:
    """Wait up to `timeout` s for `procs` to end; return those still running.

    A zombie has ended: MPICH's ``mpiexec.gforker`` reaps its ranks about one per second,
    and waiting for that made stopping 8 engines take 5 s.
    """
    import psutil

    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for proc in procs:
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
            except psutil.Error:
                pass
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def _terminate(known: dict[int, float]) -> None:
    import psutil

    procs = []
    for pid, created in known.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == created:
                procs.append(proc)
        except psutil.Error:
            continue
    end_processes(procs)


def _remove(patterns: set[str]) -> None:
    import glob

    paths = [p for pattern in patterns for p in (glob.glob(pattern) if "*" in pattern else [pattern])]
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def _serve(driver: int) -> None:
    import psutil

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the driver, not for us
    roots: dict[int, float] = {}
    known: dict[int, float] = {}
    paths: set[str] = set()
    buf = ""
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], POLL)
        if ready:
            chunk = os.read(sys.stdin.fileno(), 65536).decode(errors="replace")
            if not chunk:
                break  # the driver is gone
            buf += chunk
            *lines, buf = buf.split("\n")
            for line in lines:
                verb, _, arg = line.partition(" ")
                if verb == "pid":
                    try:
                        roots[int(arg)] = known[int(arg)] = psutil.Process(int(arg)).create_time()
                    except (ValueError, psutil.Error):
                        pass
                elif verb == "forget":
                    roots.pop(int(arg), None)
                    known.pop(int(arg), None)
                elif verb == "path":
                    paths.add(arg)
                elif verb == "keep":
                    paths.discard(arg)
        known.update(_descendants(roots))
        if not psutil.pid_exists(driver):
            break
    known.update(_descendants(roots))  # children started since the last look
    # ranks killed now leave MPICH's segments, also those that never reported theirs
    paths.update(seg for pid in known for seg in mpich_segments(pid))
    _terminate(known)
    _remove(paths)


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
