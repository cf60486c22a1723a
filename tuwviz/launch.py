"""Run cases on MPI ranks started by ``mpiexec`` (batch commands, tests, CI).

:func:`run_mpiexec` starts ``mpiexec -n P python -m tuwviz.worker``, hands each result to
a callback the moment rank 0 reports it (so results reach disk while the run goes on),
and turns every way a run can fail into a one-line :class:`~tuwviz.errors.TuwvizError`
naming the rank.  The job runs in its own process group, which is always killed on the
way out: no orphaned ranks after an error, a time-out or Ctrl-C.
"""
from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from .errors import MPINotFoundError, RankFailure, TimeLimitExceeded, TuwvizError
from .watch import ENV_VAR as WATCH_ENV
from .watch import RankWatch
from .worker import PREFIX

__all__ = ["MAX_RANKS", "check_ranks", "find_mpiexec", "mpi_env", "run_mpiexec"]

#: Most ranks one run may start on this machine, unless ``TUWVIZ_MAX_RANKS`` says otherwise;
#: oversubscription beyond this makes runs crawl and can exhaust memory.
MAX_RANKS = int(os.environ.get("TUWVIZ_MAX_RANKS", "64"))


def find_mpiexec() -> str:
    """The ``mpiexec`` of the MPI next to this Python, else the one on ``PATH``.

    Raises
    ------
    MPINotFoundError
        If there is none.
    """
    if os.environ.get("MPIEXEC"):
        path = shutil.which(os.environ["MPIEXEC"])
        if not path:
            raise MPINotFoundError(f"MPIEXEC={os.environ['MPIEXEC']} is not an executable")
        return path
    for c in (os.path.join(sys.prefix, "bin", "mpiexec"), "mpiexec"):
        path = shutil.which(c) if c else None
        if path:
            return path
    raise MPINotFoundError(
        "no mpiexec found: install MPI (pip install mpich mpi4py, or 'make lab'), load your "
        "cluster's MPI module, or set MPIEXEC=/path/to/mpiexec"
    )


def mpi_env(nranks: int, heavy_yield: bool | None = None) -> dict[str, str]:
    """Environment settings for MPI ranks that change timings.

    With more ranks than cores, MPICH's busy-polling ranks steal the CPU from the rank that
    computes; ``MPIR_CVAR_ENABLE_HEAVY_YIELD=1`` stops that at some latency cost.  By
    default it is turned on exactly when the run is oversubscribed (and left alone if the
    user set it).  Results record the value used.
    """
    if "MPIR_CVAR_ENABLE_HEAVY_YIELD" in os.environ and heavy_yield is None:
        return {}
    if heavy_yield is None:
        heavy_yield = nranks > (os.cpu_count() or 1)
    return {"MPIR_CVAR_ENABLE_HEAVY_YIELD": "1" if heavy_yield else "0"}


def check_ranks(nranks: int) -> None:
    """Raise ValueError unless 1 <= `nranks` <= :data:`MAX_RANKS`."""
    if nranks < 1:
        raise ValueError(f"number of ranks must be at least 1, got {nranks}")
    if nranks > MAX_RANKS:
        raise ValueError(
            f"{nranks} ranks asked, at most {MAX_RANKS} allowed on this machine "
            f"(set TUWVIZ_MAX_RANKS to raise the limit)"
        )


def run_mpiexec(
    nranks: int,
    cases: list[dict],
    on_result: Callable[[int, dict, dict], None] | None = None,
    *,
    on_start: Callable[[list[dict]], None] | None = None,
    heavy_yield: bool | None = None,
    stall_timeout: float = 300.0,
    extra_env: dict[str, str] | None = None,
) -> list[dict]:
    """Run `cases` on `nranks` fresh MPI ranks; return the per-rank ``hello`` records.

    Parameters
    ----------
    nranks : int
        Ranks to start; every case's ``p`` must be at most this.
    cases : list of dict
        Cases as :func:`tuwviz.runner.run_case` takes them.
    on_result : callable, optional
        Called as ``on_result(index, case, result)`` as soon as each case is done.
    on_start : callable, optional
        Called with the ranks' reports (:func:`tuwviz.runner.rank_info`) once all started.
    heavy_yield : bool, optional
        Force MPICH's heavy-yield mode on or off (default: see :func:`mpi_env`).
    stall_timeout : float, optional
        Seconds without any progress after which the run is killed as hung.

    Raises
    ------
    RankFailure
        A rank raised or died; the message names it.  Results already passed to
        `on_result` are kept by the caller.
    TimeLimitExceeded
        A measurement ran over its time limit.
    """
    check_ranks(nranks)
    mpiexec = find_mpiexec()
    env = {**os.environ, **mpi_env(nranks, heavy_yield), **(extra_env or {})}
    watch = RankWatch()
    env[WATCH_ENV] = watch.address
    env["PYTHONUNBUFFERED"] = "1"
    # the ranks import this very tuwviz, installed or not
    here = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"cases": cases}, f)
        task = f.name
    cmd = [mpiexec, "-n", str(nranks), sys.executable, "-m", "tuwviz.worker", task]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    hellos: dict[int, dict] = {}
    other: list[str] = []
    error = None
    done = False
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        last = time.monotonic()
        while True:
            if not sel.select(timeout=0.5):
                if watch.dead():
                    # end the job, but read what the ranks wrote before: a rank that raised
                    # reports its error, then aborts, and the others die after it
                    _signal_group(proc, signal.SIGKILL)
                    continue
                if time.monotonic() - last > stall_timeout:
                    raise RankFailure(f"no progress for {stall_timeout:.0f} s: run killed as hung")
                continue
            line = proc.stdout.readline()
            if not line:
                break
            last = time.monotonic()
            msg = _parse(line)
            if msg is None:
                other.append(line)
                continue
            if msg["kind"] == "hello":
                hellos = {h["rank"]: h for h in msg["ranks"]}
                if on_start is not None:
                    on_start([hellos[r] for r in sorted(hellos)])
            elif msg["kind"] == "result" and on_result is not None:
                on_result(msg["index"], cases[msg["index"]], msg["result"])
            elif msg["kind"] == "error" and error is None:
                error = msg
            elif msg["kind"] == "done":
                done = True
        proc.wait()
        dead = watch.dead()
        if dead and error is None:
            pid = hellos.get(dead[0], {}).get("pid", "?")
            raise RankFailure(f"rank {dead[0]} died (pid {pid}); the run was aborted", rank=dead[0])
    finally:
        _kill(proc)
        watch.close()
        os.unlink(task)
    if error is not None:
        if error["type"] == "TimeLimitExceeded":
            raise TimeLimitExceeded(error["message"])
        if error["type"] == "RankFailure":
            # raised on every rank after they agreed; its text names the rank that failed
            m = re.match(r".*?\brank (\d+)", error["message"])
            raise RankFailure(error["message"], rank=int(m.group(1)) if m else None)
        text = f"rank {error['rank']} raised {error['type']}: {error['message']}"
        raise RankFailure(text, rank=error["rank"])
    if proc.returncode != 0 or not done:
        output = "".join(other)
        tail = " | ".join(l.strip() for l in output.strip().splitlines()[-5:])
        raise TuwvizError(f"mpiexec failed with exit code {proc.returncode}: {tail}")
    return [hellos[r] for r in sorted(hellos)]


def _parse(line: str) -> dict | None:
    """The protocol message in `line`, if any (a rank's stray output may precede it)."""
    at = line.find(PREFIX)
    if at < 0:
        return None
    try:
        msg, _ = json.JSONDecoder().raw_decode(line[at + len(PREFIX):])
    except json.JSONDecodeError:
        return None
    return msg


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def _kill(proc: subprocess.Popen) -> None:
    """Kill mpiexec and every rank it started (they share its process group)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if proc.stdout:
        proc.stdout.close()
