"""Run cases on MPI ranks started by ``mpiexec`` (batch commands, tests, CI).

:func:`run_mpiexec` starts ``mpiexec -n P python -m tuwviz.run.worker``, hands each result to
a callback the moment rank 0 reports it (so results reach disk while the run goes on),
and turns every way a run can fail into a one-line :class:`~tuwviz.errors.TuwvizError`
naming the rank.  The job runs in its own process group, which is always killed on the
way out: no orphaned ranks after an error, a time-out, Ctrl-C or SIGTERM; if the driver
is killed outright (SIGKILL), its :mod:`~tuwviz.run.reaper` ends the job and the ranks notice
by themselves (:mod:`tuwviz.run.watch`).

Single-machine runs stay on the loopback interface (:func:`local_mpi_command`,
:func:`loopback_env`): nothing they open is reachable from other machines.
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
from collections import deque
from typing import Callable

from .. import config
from . import reaper, slurm
from ..report import ranges
from ..errors import MPINotFoundError, RankFailure, TimeLimitExceeded, TuwvizError
from ..problems import case_ranks
from .watch import RankWatch
from .worker import PREFIX
from ..params import label

__all__ = ["Backend", "STALL_LIMIT", "STARTUP_ATTEMPTS", "THREAD_LEVEL", "check_ranks", "check_stall_limit", "describe_case",
           "find_mpiexec", "key_lines",
           "local_mpi_command", "loopback_env", "mpi_env", "mpiexec_backend", "record_launch", "run_mpiexec",
           "start_with_retries"]

#: What runs a sweep's cases: ``backend(nranks, cases, on_result)`` returns the results in
#: case order and hands each to ``on_result(index, case, result)`` as it comes;
#: :func:`run_mpiexec` is one, :meth:`tuwviz.run.engines.Engines.run_cases` another.
Backend = Callable[[int, list, Callable], list]

#: Default no-progress limit, seconds: a run with no result and no new output for this
#: long is stopped as hung, naming the ranks that stopped responding.
STALL_LIMIT = 300.0
#: A rank that sends no heartbeat for this long (or the no-progress limit, if shorter) is
#: stopped or frozen: the run is stopped at once, naming it.
SILENT_LIMIT = 30.0
#: Launches tried before a job whose ranks never started is reported as failed.  MPICH's
#: single-machine launcher (mpiexec.gforker) fails in MPI_Init about once in a hundred
#: starts (pmodels/mpich#7478); nothing has run then, so starting again loses nothing.
STARTUP_ATTEMPTS = 3
#: Lines of a dead rank's output its error shows (a sanitizer's report is cut to its key
#: lines instead).
OUTPUT_LINES = 10
#: Seconds a launcher gets, after a rank died, to end the other ranks and report how each
#: ended, before the job is killed (it reports last; a loaded machine took 3.5 s), plus
#: :data:`REPORT_PER_RANK` per rank.  Only a job that does not end by itself waits this long.
REPORT_GRACE = 10.0
#: Seconds mpiexec.gforker sleeps for each rank that ends abnormally before it reports
#: (MPICH's MPIE_KillWorld): the report grace grows by this per rank.
REPORT_PER_RANK = 1.0
#: Seconds, after a rank's fault handler named the signal that killed it, for the
#: launcher to pass on what the ranks wrote before (then the job is ended: the launcher
#: would sleep a second for every rank it ends before it reports, p seconds in all).
#: The output must also have been quiet for :data:`DRAIN_QUIET` seconds, which is all a
#: job waits after a rank that reported its own error (a Python exception) has ended.
DRAIN = 2.0
DRAIN_QUIET = 0.5
#: Label MPICH's gforker puts before each line a rank prints (``MPIEXEC_PREFIX_STDOUT``,
#: ``%d`` is the rank), so a dead rank's own last lines can be told apart.  Other
#: launchers ignore the setting; their lines are then the job's.
RANK_LABEL = "[tuwviz-rank %d] "
_LABELLED = re.compile(r"^\[tuwviz-rank (\d+)\] ?(.*)$")
#: gforker's report of how a rank ended: ``[0]2:Return code = 0, signaled with Killed``.
_RETURN_CODE = re.compile(r"^\[\d+\](\d+):Return code = (-?\d+)(?:, signaled with (.+))?$")
#: Hydra's summary, when MPIEXEC names it: ``... EXIT STRING: Segmentation fault (signal 11)``.
_HYDRA_SIGNAL = re.compile(r"EXIT STRING: .*\(signal (\d+)\)")
#: Hydra's banner line naming the process that ended badly: ``=   PID 26682 RUNNING AT n2``.
_HYDRA_PID = re.compile(r"^=\s+PID (\d+) RUNNING AT (\S+)")
#: Hydra's mpiexec when a proxy's connection closed without a word (its node died).
_HYDRA_LOST = re.compile(r"^\[mpiexec@\S+\] control_cb .*assert \(!closed\) failed")
#: MPICH's line when a process calls MPI_Abort: "... called MPI_Abort(comm, code) - process N".
_MPI_ABORT = re.compile(r"called MPI_Abort\(.*?, (-?\d+)\) - process (\d+)")



def record_launch(kind: str, nranks: int) -> None:
    """Append ``kind nranks`` to the file named by ``TUWVIZ_LAUNCH_LOG``, if it is set
    (``nranks``: the ranks started, or for kind ``verify`` the cases run); the test suite
    counts its launches with it (tests/support/budget.py).

    One short ``O_APPEND`` write per launch, so concurrent processes do not mix lines.
    """
    path = config.launch_log()
    if path:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{kind} {nranks}\n".encode())
            finally:
                os.close(fd)
        except OSError:  # counting is a courtesy: never fail a run for it
            pass


class _StartupFailed(TuwvizError):
    """The ranks ended before any of them reported: MPI did not start."""


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


def local_mpi_command(mpiexec: str | None = None) -> list[str]:
    """The launcher for a run on this machine only.

    MPICH's Hydra ``mpiexec`` always listens for its proxies on all interfaces (0.0.0.0),
    whatever ``-iface``/``-localhost`` say.  MPICH's single-machine process manager,
    ``mpiexec.gforker`` (installed next to it), opens no TCP port at all: use it when it
    is there.  An explicit ``MPIEXEC`` is used as given.
    """
    mpiexec = mpiexec or find_mpiexec()
    if not os.environ.get("MPIEXEC"):
        gforker = os.path.join(os.path.dirname(mpiexec), "mpiexec.gforker")
        if os.access(gforker, os.X_OK):
            return [gforker]
    return [mpiexec]


def loopback_env() -> dict[str, str]:
    """Environment that keeps the ranks' own sockets on the loopback interface.

    MPICH from PyPI uses UCX, which otherwise listens on every network device; libfabric
    (MPICH's OFI netmod) and Open MPI have their own settings.  Shared memory carries the
    data between ranks on one machine either way, so this changes no timing.
    """
    return {"UCX_NET_DEVICES": "lo", "FI_TCP_IFACE": "lo", "FI_SOCKETS_IFACE": "lo",
            "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo"}


#: MPI thread level the ranks ask for (mpi4py's ``MPI4PY_RC_THREAD_LEVEL``) when they are
#: no more than the cores: only the main thread of a rank or engine calls MPI.  mpi4py's
#: default, "multiple", makes MPICH lock around every call: about 0.4-0.8 µs more per
#: small collective at 2 ranks, the library's Gather 1.4-1.5x OSU's up to 4 KB.  More
#: ranks than cores keep "multiple": MPICH yields the CPU inside that lock, and without it
#: 8 ranks on 2 cores wait out whole scheduler time slices (4 ms per Gather of 1 int
#: instead of 0.7 ms with heavy yield; a verify sweep of 264 cases at p = 8 takes 17 s
#: instead of 7 s without).
THREAD_LEVEL = "funneled"


#: Case modes that time something (the others: verify, trace).
TIMED_MODES = ("measure", "calibrate")


def mpi_env(nranks: int, heavy_yield: bool | None = None, timed: bool = True) -> dict[str, str]:
    """Environment settings for MPI ranks that change timings.

    With more ranks than cores, MPICH's busy-polling ranks steal the CPU from the rank that
    computes; ``MPIR_CVAR_ENABLE_HEAVY_YIELD=1`` stops that at some latency cost.  By
    default it is turned on exactly when a `timed` run is oversubscribed (and left alone if
    the user set it).  Runs that time nothing (verify, trace) leave it off: on 2 cores
    they finish about twice as fast with 9 or 17 ranks.  Results record the value used.
    Ranks no more than the cores and without heavy yield ask MPI for :data:`THREAD_LEVEL`,
    others for ``multiple`` (unless the user set ``MPI4PY_RC_THREAD_LEVEL``); they report
    the level.

    Examples
    --------
    >>> mpi_env(1, heavy_yield=True)
    {'MPIR_CVAR_ENABLE_HEAVY_YIELD': '1', 'MPI4PY_RC_THREAD_LEVEL': 'multiple'}
    """
    env = {}
    users = os.environ.get("MPIR_CVAR_ENABLE_HEAVY_YIELD")
    if users is not None and heavy_yield is None:
        heavy_yield = users.strip() not in ("", "0")
    else:
        if heavy_yield is None:
            heavy_yield = timed and nranks > (os.cpu_count() or 1)
        env["MPIR_CVAR_ENABLE_HEAVY_YIELD"] = "1" if heavy_yield else "0"
    if "MPI4PY_RC_THREAD_LEVEL" not in os.environ:
        oversubscribed = nranks > (os.cpu_count() or 1)
        env["MPI4PY_RC_THREAD_LEVEL"] = ("multiple" if heavy_yield or oversubscribed
                                         else THREAD_LEVEL)
    return env


def check_ranks(nranks: int) -> None:
    """Raise ValueError unless 1 <= `nranks` <= :func:`tuwviz.config.max_ranks` (more
    oversubscription makes runs crawl and can exhaust memory)."""
    if nranks < 1:
        raise ValueError(f"number of ranks must be at least 1, got {nranks}")
    limit = config.max_ranks()
    if nranks > limit:
        raise ValueError(
            f"{nranks} ranks asked, at most {limit} allowed on this machine "
            f"(set TUWVIZ_MAX_RANKS to raise the limit)"
        )


def run_mpiexec(
    nranks: int,
    cases: list[dict],
    on_result: Callable[[int, dict, dict], None] | None = None,
    *,
    on_start: Callable[[list[dict]], None] | None = None,
    heavy_yield: bool | None = None,
    stall_limit: float = STALL_LIMIT,
    extra_env: dict[str, str] | None = None,
    launcher: str = "mpiexec",
) -> list[dict]:
    """Run `cases` on `nranks` fresh MPI ranks; return the per-rank ``hello`` records.

    Parameters
    ----------
    nranks : int
        Ranks to start; every case's ``p`` must be at most this.
    cases : list of dict
        Cases as :func:`tuwviz.run.runner.run_case` takes them.
    on_result : callable, optional
        Called as ``on_result(index, case, result)`` as soon as each case is done.
    on_start : callable, optional
        Called with the ranks' reports (:func:`tuwviz.run.runner.rank_info`) once all started.
    heavy_yield : bool, optional
        Force MPICH's heavy-yield mode on or off (default: see :func:`mpi_env`; the run
        is timed when any case measures).
    stall_limit : float, optional
        Seconds without any progress after which the run is killed as hung; the error
        names the ranks that stopped responding (default :data:`STALL_LIMIT`).
    launcher : str, optional
        ``mpiexec`` (this machine's, the default) or ``srun`` (SLURM: the allocation's
        nodes, or a job of its own; see :mod:`tuwviz.run.slurm`).

    A job whose ranks all end before reporting (MPI_Init failed; no Python error) is
    started again, up to :data:`STARTUP_ATTEMPTS` times, with a note on stderr.

    Raises
    ------
    RankFailure
        A rank raised or died; the message names it.  Results already passed to
        `on_result` are kept by the caller.
    TimeLimitExceeded
        A measurement ran over its time limit.
    """
    check_ranks(nranks)
    check_stall_limit(stall_limit)
    if launcher not in ("mpiexec", "srun"):
        raise ValueError(f"unknown launcher {launcher!r}; valid launchers: mpiexec, srun")
    return start_with_retries(
        lambda: _run_once(nranks, cases, on_result, on_start, heavy_yield, stall_limit, extra_env,
                          launcher),
        _StartupFailed, "MPI")


def start_with_retries(start: Callable, failed: type[BaseException], what: str):
    """``start()``, tried again while it raises `failed` (MPI did not start), up to
    :data:`STARTUP_ATTEMPTS` times, with a note on stderr each time; then TuwvizError
    saying `what` did not start, with the last failure's words."""
    for attempt in range(1, STARTUP_ATTEMPTS + 1):
        began = time.time()
        try:
            return start()
        except failed as exc:
            # ranks that died in MPI_Init reported no segments: find the ones they made
            reaper.release_segments(reaper.unmapped_segments(since=began))
            if attempt == STARTUP_ATTEMPTS:
                raise TuwvizError(f"{what} did not start in {attempt} attempts; last: {exc}") from None
            print(f"note: {what} did not start ({exc}); starting again "
                  f"(attempt {attempt + 1} of {STARTUP_ATTEMPTS})", file=sys.stderr, flush=True)
    raise AssertionError("unreachable")


def _run_once(nranks, cases, on_result, on_start, heavy_yield, stall_limit, extra_env,
              launcher="mpiexec"):
    srun = launcher == "srun"
    timed = any(case.get("mode") in TIMED_MODES for case in cases)
    # srun's ranks may be on other nodes: their MPI must not be held to the loopback
    env = {**os.environ, **({} if srun else loopback_env()), **mpi_env(nranks, heavy_yield, timed),
           **(extra_env or {})}
    watch = RankWatch()
    env[config.WATCH] = watch.address
    env["PYTHONUNBUFFERED"] = "1"
    env["MPIEXEC_PREFIX_STDOUT"] = env["MPIEXEC_PREFIX_STDERR"] = RANK_LABEL
    # the ranks import this very tuwviz, installed or not
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [config.IMPORT_ROOT, env.get("PYTHONPATH")]))
    with tempfile.NamedTemporaryFile("w", prefix="tuwviz-task-", suffix=".json", delete=False) as f:
        reaper.remove_on_exit(f.name)
        json.dump({"cases": cases}, f)
        task = f.name
    start = slurm.start_command(nranks, env) if srun else [*local_mpi_command(), "-n", str(nranks)]
    cmd = [*start, sys.executable, "-m", "tuwviz.run.worker", task]
    record_launch(launcher, nranks)
    began = time.time()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # bytes: read with os.read below
    except BaseException:
        watch.close()
        os.unlink(task)
        raise
    reaper.watch(proc.pid)
    hellos: dict[int, dict] = {}
    segments: list[str] = []
    out = _Output(proxies=srun and slurm.mpi_flavour(env) == "hydra")  # Hydra's own reports
    error = None
    done = False
    reporters: set[int] = set()  # ranks that reported an error (then abort)
    finished = 0  # cases run strictly in order: the first one without a result was running
    dead_since = None
    cut_short = False  # mpiexec ended by us once every rank had ended well
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        last = watch.clock()  # not time.monotonic(): a paused machine is not a hung run
        looked = last  # when squeue was last asked about a job that still waits
        # lines read from the pipe but not handled yet: select() sees only the pipe, so
        # lines that arrived together must not wait in a buffer for more output (a result
        # followed by a hang would be reported as still running)
        lines: deque[str] = deque()
        partial = b""
        while True:
            if not lines and partial is not None:
                if sel.select(timeout=0.05 if done else 0.5):
                    chunk = os.read(proc.stdout.fileno(), 1 << 16)
                    if chunk:
                        *complete, partial = (partial + chunk).split(b"\n")
                    else:  # end of output: the job ended
                        complete, partial = ([partial] if partial else []), None
                    lines.extend(c.decode(errors="replace") + "\n" for c in complete)
                    continue
            elif not lines:
                break
            if not lines:
                if done and not srun and _ranks_exited([h.get("pid") for h in hellos.values()]):
                    # every rank ended well: mpiexec.gforker has nothing left to do, but
                    # may take up to 2 s to notice (one launch in four did)
                    _signal_group(proc, signal.SIGKILL)
                    proc.wait()
                    cut_short = True
                    break
                dead = watch.dead()
                if dead:
                    # end the job, but read what the ranks wrote before: a rank that raised
                    # reports its error, then aborts, and the others die after it; the
                    # launcher gets a moment to say how the dead rank ended, unless the
                    # rank's fault handler said it already
                    now = watch.clock()
                    dead_since = dead_since or now
                    how = _fatal_how(watch.fatal(dead[0]))
                    if how and dead[0] not in out.ended:
                        out.ended[dead[0]] = how
                    # a rank that reported its own error and then aborted: the report says
                    # it all and came after the rank's other output; nothing to wait for
                    reported = (error is not None and error["type"] != "KeyboardInterrupt"
                                and error["rank"] in dead)
                    drained = ((how and now - dead_since > DRAIN) or reported) \
                        and now - last > DRAIN_QUIET
                    if drained or now - dead_since > REPORT_GRACE + REPORT_PER_RANK * nranks:
                        _signal_group(proc, signal.SIGKILL)
                    continue
                if srun and not hellos and out.slurm_job and watch.clock() - looked >= 2.0:
                    looked = watch.clock()  # a job that pends for good: say so now, not
                    why = slurm.stuck(out.slurm_job)  # after TUWVIZ_SLURM_PENDING seconds
                    if why:
                        raise TuwvizError(
                            f"SLURM did not start the ranks: job {out.slurm_job} cannot start "
                            f"as asked (squeue: {why}; more than its partition or nodes "
                            f"have?) (nothing ran; nothing is left in the queue)")
                silent = watch.silent(min(SILENT_LIMIT, stall_limit))
                if silent or watch.clock() - last > stall_limit:
                    running = case_ranks(cases[finished]["problem"]) if finished < len(cases) else nranks
                    raise _with_case(_stalled(silent, hellos, watch.clock() - last,
                                              *watch.inside(), running, cause=out.cause()),
                                     cases, finished)
                continue
            line = lines.popleft()
            last = watch.clock()
            msg = _parse(line)
            if msg is None:
                out.add(line)
                continue
            out.labelled = out.labelled or line.startswith(RANK_LABEL.split("%")[0])
            if msg["kind"] == "hello":
                hellos = {h["rank"]: h for h in msg["ranks"]}
                segments = reaper.job_segments(hellos.values())
                reaper.track_segments(segments)
                if on_start is not None:
                    on_start([hellos[r] for r in sorted(hellos)])
            elif msg["kind"] == "result":
                finished = msg["index"] + 1
                if on_result is not None:
                    on_result(msg["index"], cases[msg["index"]], msg["result"])
            elif msg["kind"] == "error":
                error = error or msg
                reporters.add(msg["rank"])  # its MPI_Abort that follows is the worker's
            elif msg["kind"] == "done":
                done = True
        proc.wait()
        if not hellos and error is None and not done:
            if out.refused:  # nothing ran: the scheduler said no, or kept the job pending
                raise TuwvizError(f"SLURM did not start the ranks: {out.refused} (nothing ran; "
                                  f"nothing is left in the queue)")
            output = out.text()
            if "Traceback" not in output:  # MPI_Init failed, not our Python: nothing ran
                tail = " | ".join(l.strip() for l in output.strip().splitlines()[-3:])
                raise _StartupFailed(f"exit code {proc.returncode}: {tail}{out.cause()}")
        dead = watch.dead()
        if srun and not dead and not done:
            # srun's ranks on other nodes cannot reach the watch: srun's report names them,
            # the first task it reports first (the others were ended because of it), or
            # Hydra's report of the process, or of the node whose proxy died
            dead = (out.name_ranks(hellos) if out.proxies else [r for r in out.ended if r >= 0])[:1]
        # a kernel that called MPI_Abort: the launcher then ends every rank, the caller
        # often last, so the first lost rank is not the one to name; not the worker's own
        # abort after it reported an error, nor one after a rank died of a signal (a crash,
        # a sanitizer's abort): that rank is the one to name
        crashed = [r for r in dead if (out.how(r) or "").startswith("killed by signal")]
        if (out.aborted and out.aborted[0] not in reporters and not crashed
                and (error is None or error["type"] == "KeyboardInterrupt")):
            rank, code = out.aborted
            lines, whose = out.last(rank)
            raise _with_case(RankFailure(
                f"rank {rank} called MPI_Abort (error code {code}); the launcher ended every "
                f"rank", rank=rank, how=f"called MPI_Abort({code})", output=lines,
                output_from=whose), cases, finished)
        # a rank that died takes precedence over one that the launcher then interrupted
        # (its KeyboardInterrupt is the consequence, not the cause)
        if dead and (error is None or error["type"] == "KeyboardInterrupt"):
            rank = dead[0]
            pid = hellos.get(rank, {}).get("pid", "?")
            how = out.how(rank)
            lines, whose = out.last(rank)
            raise _with_case(RankFailure(
                f"rank {rank} died (pid {pid}, {how or 'how it ended was not reported'}); the run "
                f"was aborted", rank=rank, how=how, output=lines, output_from=whose), cases, finished)
    finally:
        if srun:  # killing srun would leave the ranks on other nodes running
            _cancel_step(proc, hellos, out.slurm_job)
        _end_job(proc, segments, began)
        reaper.forget(proc.pid)
        watch.close()
        os.unlink(task)
        reaper.keep(task)
    if error is not None:
        if error["type"] == "TimeLimitExceeded":
            raise TimeLimitExceeded(error["message"])
        if error["type"] == "RankFailure":
            # raised on every rank after they agreed; its text names the rank that failed
            m = re.match(r".*?\brank (\d+)", error["message"])
            raise _with_case(RankFailure(error["message"], rank=int(m.group(1)) if m else None),
                             cases, finished)
        text = f"rank {error['rank']} raised {error['type']}: {error['message']}"
        raise _with_case(RankFailure(text, rank=error["rank"]), cases, finished)
    if out.proxies and out.proxy_lost and not done:
        # a node died with its slurmstepd: srun has nothing to report, and Hydra does not
        # say whose proxy it lost; say where the ranks were, so the node can be told
        where = "; ".join(f"{node}: ranks {ranges(rs)}" for node, rs in _by_node(hellos).items())
        raise _with_case(RankFailure(
            f"a node's Hydra proxy ended without a word (the node died, or its connection to "
            f"this machine broke); Hydra does not say which node ({where or 'no rank started'});"
            f" the run was aborted", rank=None, how="its node's proxy was lost"), cases, finished)
    if not done or (proc.returncode != 0 and not cut_short):
        tail = " | ".join(l.strip() for l in out.text().strip().splitlines()[-5:])
        raise TuwvizError(f"mpiexec failed with exit code {proc.returncode}: {tail}")
    return [hellos[r] for r in sorted(hellos)]


class _Output:
    """What the job printed besides protocol lines: per rank where the launcher labels
    lines (:data:`RANK_LABEL`), and the launcher's reports of how ranks ended."""

    def __init__(self, keep: int = 400, proxies: bool = False):
        self.proxies = proxies  # Hydra under SLURM: srun's tasks are its proxies, not ranks
        self.nodes_ended: dict[str, str] = {}  # Hydra: how a node's proxy ended, by node
        self.bad_pid: int | None = None  # Hydra: the process its banner says ended badly
        self.proxy_lost = False  # Hydra: a proxy's connection closed without a word
        self.refused: str | None = None  # srun: why SLURM refused or gave up the allocation
        self.slurm_job: str | None = None  # srun: the job it asked for and announced (it waited)
        self.pmi_cut = False  # srun: slurmstepd read a rank's PMI line cut (MPI cannot start)
        self.job: deque[str] = deque(maxlen=keep * 4)  # every line, labels removed
        self.ranks: dict[int, deque[str]] = {}
        self.ended: dict[int, str] = {}
        self.labelled = False  # the launcher labels each rank's lines
        self.aborted: tuple[int, int] | None = None  # (rank, code) of the first MPI_Abort

    def add(self, line: str) -> None:
        line = line.rstrip("\n")
        m = _LABELLED.match(line)
        if m:
            self.labelled = True
            rank, line = int(m.group(1)), m.group(2)
            if line.strip():  # the protocol's empty separator lines
                self.ranks.setdefault(rank, deque(maxlen=self.job.maxlen // 4)).append(line)
        m = _RETURN_CODE.match(line.strip())
        if m:
            rank, code, sig = int(m.group(1)), int(m.group(2)), m.group(3)
            self.ended[rank] = _signal_text(sig) if sig else f"exited with code {code}"
            return
        if self.proxies:
            report = slurm.node_report(line)
            if report:
                self.nodes_ended.setdefault(report[0], f"{report[2]} (on node {report[0]})")
            self.proxy_lost = self.proxy_lost or bool(_HYDRA_LOST.match(line.strip()))
            m = _HYDRA_PID.match(line.strip())
            if m and self.bad_pid is None:
                self.bad_pid = int(m.group(1))
        else:
            for rank, how in slurm.task_report(line).items():
                self.ended.setdefault(rank, how)
        self.refused = self.refused or slurm.refusal(line)
        self.slurm_job = self.slurm_job or slurm.job_announced(line)
        self.pmi_cut = self.pmi_cut or slurm.pmi_cut(line)
        m = _HYDRA_SIGNAL.search(line)
        if m:
            self.ended.setdefault(-1, _signal_text(int(m.group(1))))
        m = _MPI_ABORT.search(line)
        if m and self.aborted is None:
            self.aborted = (int(m.group(2)), int(m.group(1)))
        if line.strip():
            self.job.append(line)

    def text(self) -> str:
        return "\n".join(self.job)

    def name_ranks(self, hellos: dict[int, dict]) -> list[int]:
        """Under Hydra: the ranks its reports name, first the one its banner names (by pid),
        then those on a node whose proxy srun reports ended (killed with its node); each
        gets how it ended.  The others' proxies end after it, so they are not named."""
        named = [r for r in sorted(hellos)
                 if self.bad_pid is not None and hellos[r].get("pid") == self.bad_pid]
        nodes = _by_node(hellos)
        for node, how in self.nodes_ended.items():
            on = nodes.get(node, [])
            for r in on:
                self.ended.setdefault(r, how)
            named += on[:1]
        return named

    def cause(self) -> str:
        """``; `` and what the launcher's lines said that explains a failed start or a
        hang (:data:`tuwviz.run.slurm.PMI_CUT`), or "" when they said nothing of it."""
        return f"; {slurm.PMI_CUT}" if self.pmi_cut else ""

    def how(self, rank: int) -> str | None:
        """How `rank` ended, as the launcher reported it (None if it did not)."""
        return self.ended.get(rank) or self.ended.get(-1)

    def last(self, rank: int) -> tuple[list[str], str]:
        """Key lines of `rank`'s output and whose they are (the job's if unlabelled)."""
        if self.labelled:  # this rank's own lines, even if there are none
            return key_lines(list(self.ranks.get(rank, ()))), f"rank {rank}"
        return key_lines(list(self.job)), "the job (the launcher does not tell ranks apart)"


def key_lines(lines: list[str], n: int = OUTPUT_LINES) -> list[str]:
    """The lines of a rank's output that say why it died: the last `n`, or, for a
    sanitizer's report, its error line, the top of its stack and its summary (the report
    ends with a legend of shadow bytes, useless here).

    Examples
    --------
    >>> key_lines(["a", "b", "c"], n=2)
    ['b', 'c']
    """
    start = next((i for i, l in enumerate(lines) if "ERROR: AddressSanitizer" in l
                  or "runtime error:" in l), None)
    if start is None:
        return lines[-n:]
    report = lines[start:]
    summary = [l for l in report if l.lstrip().startswith("SUMMARY:")]
    frames = [l for l in report[1:] if re.match(r"\s*#\d+ ", l)]
    # the top frame, then the kernels' own frames (the ones a student can fix): in the
    # library, or at a C source line outside the sanitizer (a workspace's my_gather.c:86)
    ours = [l for l in frames[1:] if "libtuwviz" in l or "TUW_" in l or "tuw_" in l
            or (re.search(r"\.c:\d+", l) and not re.search(r"libsanitizer|Python|/Objects/", l))]
    frames = frames[:1] + ours if ours else frames
    return [report[0], *frames[:n - 2], *summary[:1]]


def _signal_text(sig: str | int) -> str:
    """``killed by signal SIGSEGV (Segmentation fault)`` from a signal number or the
    description strsignal gives (gforker prints the latter)."""
    for s in signal.Signals:
        if sig == s.value or sig == signal.strsignal(s):
            return f"killed by signal {s.name} ({signal.strsignal(s)})"
    return f"killed by signal {sig}"


def _fatal_how(name: str | None) -> str | None:
    """``killed by signal SIGSEGV (Segmentation fault)`` from a fault handler's name of
    the signal, or None if `name` is no signal's (another fatal Python error)."""
    if name and any(name == signal.strsignal(s) for s in signal.Signals):
        return _signal_text(name)
    return None


def describe_case(case: dict, index: int | None = None, of: int | None = None) -> dict:
    """A case in the user's terms (see :class:`~tuwviz.errors.RankFailure` ``case``)."""
    pr = case["problem"]
    if case.get("mode") == "calibrate":  # not a collective: what was being timed
        info = {"mode": "calibrate", "p": pr["p"], "what": case["what"],
                **{k: case[k] for k in ("bytes", "count", "datatype") if k in case}}
        return {**info, **({"index": index, "of": of} if index is not None else {})}
    info = {"collective": pr["collective"], "algorithm": case["algorithm"], "p": pr["p"],
            "root": pr["root"], "distribution": pr["distribution"], "b": pr["b"],
            "params": label(case.get("params")), "mode": case.get("mode"),
            "datatype": pr.get("datatype", "int"), "op": pr.get("op", "sum")}
    if pr.get("q"):
        info.update(q=pr["q"], b_b=pr.get("b_b"))
    if case.get("types", "same") != "same":
        info["types"] = case["types"]
    if case.get("data", "small") != "small":
        info["data"] = case["data"]
    if index is not None:
        info.update(index=index, of=of)
    return info


def _with_case(exc: RankFailure, cases: list[dict], finished: int) -> RankFailure:
    """`exc` naming the case that was running: the first one without a result."""
    if finished < len(cases) and exc.case is None:
        exc.case = describe_case(cases[finished], finished, len(cases))
    return exc


def check_stall_limit(seconds) -> float:
    """`seconds` if it is a usable no-progress limit (finite, > 0), else ValueError."""
    import math

    try:
        ok = not isinstance(seconds, bool) and math.isfinite(seconds) and seconds > 0
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"stall_limit must be a positive, finite number of seconds, got {seconds!r}")
    return float(seconds)


def mpiexec_backend(stall_limit: float | None = None,
                    extra_env: dict[str, str] | None = None, launcher: str = "mpiexec") -> Callable:
    """:func:`run_mpiexec` as a sweep backend, with its no-progress limit fixed and
    `extra_env` added to the ranks' environment (e.g. :func:`tuwviz.kernels.sanitize_env`);
    `launcher` ``srun`` starts the ranks under SLURM (the rows' ``backend`` says which)."""
    limit = STALL_LIMIT if stall_limit is None else check_stall_limit(stall_limit)

    def backend(nranks, cases, on_result=None, on_start=None):
        return run_mpiexec(nranks, cases, on_result, on_start=on_start, stall_limit=limit,
                           extra_env=extra_env, launcher=launcher)

    backend.columns = {"backend": launcher}
    return backend


def _stalled(silent: list[int], hellos: dict[int, dict], idle: float, inside: list[int] = (),
             returned: list[int] = (), p: int | None = None, cause: str = "") -> RankFailure:
    """The error for a run that stopped making progress, naming the ranks to blame.

    `inside` and `returned` are the ranks in a kernel call and those that returned from one
    (:meth:`tuwviz.run.watch.RankWatch.inside`); only the running case's first `p` count.
    `cause` ends the sentence: what the launcher said that explains it
    (:meth:`_Output.cause`).
    """
    if silent:
        names = ", ".join(f"rank {r} (pid {hellos.get(r, {}).get('pid', '?')})" for r in silent)
        return RankFailure(f"{names} stopped responding (no heartbeat for {SILENT_LIMIT:.0f} s or "
                           f"more: stopped, frozen or swapped out); the run was killed{cause}",
                           rank=silent[0])
    return RankFailure(f"no progress for {idle:.0f} s while every rank was alive"
                       f"{inside_text(inside, returned, p)} (a kernel waiting for a message that "
                       f"never comes?); the run was killed as hung (the no-progress limit is a "
                       f"setting: --stall-limit / stall_limit=){cause}",
                       rank=next((r for r in inside if p is None or r < p), None))


def inside_text(inside: list[int], returned: list[int], p: int | None) -> str:
    """``: ranks 1, 3 were still inside the kernel call, ranks 0, 2 had returned from it``

    Examples
    --------
    >>> inside_text([1, 3, 9], [0, 2], p=5)
    ': ranks 1, 3 were still inside the kernel call, ranks 0, 2 had returned from it'
    >>> inside_text([0], [], p=1)
    ': rank 0 was still inside the kernel call'
    >>> inside_text([], [], p=4)
    ''
    """
    def ranks(rs):
        return f"rank {rs[0]}" if len(rs) == 1 else f"ranks {ranges(rs)}"

    inside = [r for r in inside if p is None or r < p]
    returned = [r for r in returned if p is None or r < p]
    if not inside:
        return ""
    text = f": {ranks(inside)} {'was' if len(inside) == 1 else 'were'} still inside the kernel call"
    return text + (f", {ranks(returned)} had returned from it" if returned else "")


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


def _ranks_exited(pids: list) -> bool:
    """Whether every rank process in `pids` has exited with status 0 (reaped by mpiexec,
    or a zombie waiting for it: Linux gives a zombie's status in ``/proc/PID/stat``)."""
    if not pids or None in pids:
        return False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # reaped: mpiexec saw it end, and says so if it ended badly
        if fields[0] != "Z" or len(fields) < 50 or fields[49] != "0":
            return False  # still running, or ended with a signal or an exit code
    return True


def _by_node(hellos: dict[int, dict]) -> dict[str, list[int]]:
    """The ranks on each SLURM node, as the ranks reported them (nodes in rank order)."""
    nodes: dict[str, list[int]] = {}
    for r in sorted(hellos):
        nodes.setdefault(hellos[r].get("slurm_node") or hellos[r].get("host", "?"), []).append(r)
    return nodes


def _cancel_step(proc: subprocess.Popen, hellos: dict[int, dict], job: str | None) -> None:
    """End an srun run's job step on every node (before srun itself is killed), unless
    srun ended by itself; a job srun still waits for (`job`, as it announced it) is
    cancelled, so that it does not start later for nobody."""
    if proc.poll() is not None:
        return
    first = hellos[min(hellos)] if hellos else {}
    if first.get("slurm_job") and slurm.in_allocation():  # the user's job: this step only
        slurm.cancel(first["slurm_job"], first.get("slurm_step"))
    elif first.get("slurm_job") or job:  # the job srun asked for: all of it
        slurm.cancel(first.get("slurm_job") or job)


def _end_job(proc: subprocess.Popen, segments: list[str], began: float) -> None:
    """Kill the job (:func:`_kill`) and remove the MPICH segments it leaves in /dev/shm.

    `segments` are the ones its ranks reported; MPICH leaves them when a rank died or
    aborted.  A job ended before its ranks reported (Ctrl-C while they were in MPI_Init)
    made segments all the same: the ones its processes map when it is killed, and any
    made since `began` (``time.time()`` at its start) that no live process maps.
    """
    found = set(segments)
    if proc.poll() is None:
        found.update(reaper.tree_segments(proc.pid))
    _kill(proc)
    if not segments:
        found.update(reaper.unmapped_segments(since=began))
    reaper.release_segments(sorted(found))


def _kill(proc: subprocess.Popen) -> None:
    """Kill mpiexec and every rank it started (they share its process group).

    SIGTERM ends the ranks at once (none handles it); mpiexec.gforker then reaps them one
    about every second, so it gets a moment to end by itself, not five seconds.
    """
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=0.5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if proc.stdout:
        proc.stdout.close()
