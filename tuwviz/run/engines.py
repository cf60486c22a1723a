"""MPI engines (ipyparallel) that run tuwviz cases: the pool under the notebooks' cluster.

:class:`Engines` starts an ipyparallel controller on 127.0.0.1 and ``n`` engines
under ``mpiexec`` from ``cluster_profiles/local`` (or another profile), maps engines to
their MPI ranks, and runs tuwviz cases on them with the same engine-side code as batch
runs (:mod:`tuwviz.run.runner`).  Use it as a context manager so the engines always stop::

    with Engines(n=4) as engines:
        events = engines.trace(make_problem("gatherv", 4, "same", 1), "linear")

Experiments take :meth:`Engines.run_cases` as their backend; notebooks use
:class:`tuwviz.session.LocalCluster`, which has them as methods (``cluster.verify(...)``).

If a rank raises, dies or stops responding during a run, the run stops within seconds,
the error names the rank, and the engines are stopped (others would wait forever inside
MPI); the next call restarts them.  Ctrl-C (interrupting the notebook kernel) does the
same.  A run with no result for ``stall_limit`` seconds is stopped as hung, naming the
ranks that have not finished.

Nothing outlives the driver: if the Python process holding the cluster ends in any way
(SIGTERM, SIGKILL, a Jupyter kernel restart), its :mod:`~tuwviz.run.reaper` stops the
controller, mpiexec and the engines within seconds and removes the cluster's files, and
the engines exit by themselves once their connection to the driver breaks
(:mod:`tuwviz.run.watch`).  Everything listens on 127.0.0.1 only (see the README's
"What listens where").
"""
from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

from .. import config
from . import reaper, slurm
from ..errors import RankFailure, TuwvizError
from .launch import (SILENT_LIMIT, STALL_LIMIT, TIMED_MODES, check_ranks, check_stall_limit,
                     describe_case, find_mpiexec)
from .launch import local_mpi_command, loopback_env, mpi_env, record_launch, start_with_retries
from .. import kernels
from . import watch
from .metadata import run_metadata
from .runner import rank_info, run_case
from .watch import RankWatch

__all__ = ["Engines", "free_cores"]

#: Milliseconds between the controller's heartbeats.  ipyparallel's 3 s made every start
#: wait 3-6 s: an engine counts as registered only at the beat after its first answer.
#: The allowed misses scale with it, so the tolerances stay ipyparallel's: the controller
#: drops an engine silent for 30 s; an engine gives up on a controller silent for 3 minutes
#: (it checks every beat + 0.5 s).
HEARTBEAT_MS = 500
HEARTBEAT_ARGS = {
    "controller": [f"--HeartMonitor.period={HEARTBEAT_MS}",
                   f"--HeartMonitor.max_heartmonitor_misses={30_000 // HEARTBEAT_MS}"],
    "engine": [f"--IPEngine.max_heartbeat_misses={180_000 // (HEARTBEAT_MS + 500)}"],
}
#: Seconds the other ranks get to finish after one rank failed before engines are stopped.
FAILURE_GRACE = 1.5
#: Verify cases handed to the engines in one call.  A call costs a round trip of 90-170 ms,
#: more than most verify cases take, so they go in batches; timed cases (bench, calibrate)
#: go one per call, so their rows are saved as each one ends.
BATCH = 64


def free_cores() -> int:
    """How many local ranks run one per core: this machine's core count.

    It is the count a run's ``oversubscribed`` flag compares the ranks of a host with
    (:func:`tuwviz.run.metadata.run_metadata`), so a cluster of at most this many engines is
    measured without oversubscription.

    Examples
    --------
    >>> free_cores() >= 1
    True
    """
    return os.cpu_count() or 1


# The _engine_* functions run on the engines (ipyparallel sends them by reference); mpi4py
# is imported inside them because importing it starts MPI, which the driver must not do.
def _engine_info():
    from mpi4py import MPI

    watch.connect(MPI.COMM_WORLD.rank)
    return rank_info(MPI.COMM_WORLD)


def _engine_run_case(case):
    from mpi4py import MPI

    with kernels.pinned():
        return run_case(MPI.COMM_WORLD, case)


def _engine_run_cases(cases, first):
    """Run `cases` (numbered from `first`) one after the other; rank 0 returns the results.

    Before each case every rank publishes its number, rank 0 also the results so far
    (ipyparallel's datapub): if a rank dies or raises inside the batch, the driver still
    names the case and keeps the results before it."""
    from ipyparallel.datapub import publish_data
    from mpi4py import MPI

    results = []
    timed = any(case.get("mode") in TIMED_MODES for case in cases)
    # one build for the batch; heavy yield (engines oversubscribed for timing) off when
    # nothing is timed: busy-polling ranks verify twice as fast
    with kernels.pinned(), (contextlib.nullcontext() if timed else kernels.heavy_yield(False)):
        for i, case in enumerate(cases):
            publish_data({"at": first + i, "results": results} if MPI.COMM_WORLD.rank == 0
                         else {"at": first + i})
            results.append(run_case(MPI.COMM_WORLD, case))
    return results


def _started_here(since: float) -> list:
    """This process's descendants started at or after `since` (time.time()) that are
    ipyparallel's controller or engines or an mpiexec, with all their own descendants."""
    import psutil

    found = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            line = " ".join(proc.cmdline())
            if proc.create_time() >= since - 0.5 and (
                    "ipyparallel." in line or "mpiexec" in line or "hydra_pmi_proxy" in line):
                for q in [proc, *proc.children(recursive=True)]:
                    found[q.pid] = q
        except psutil.Error:
            pass
    return list(found.values())


class Engines:
    """Start, use and stop ipyparallel MPI engines, and run cases on them.

    The notebooks use its subclass :class:`tuwviz.session.LocalCluster`, which adds
    ``verify``, ``bench``, ``calibrate`` and ``measure_missing`` (experiments and analysis sit
    above this layer, so they are reached from there).

    Parameters
    ----------
    n : int
        Number of engines (= MPI ranks).  More than the machine's cores is allowed
        (oversubscription); results are labelled so.
    profile : str
        Name of a profile directory under :func:`tuwviz.config.profiles_dir` (``local`` or ``slurm``).
    heavy_yield : bool, optional
        MPICH heavy-yield mode for the engines (default: on when oversubscribed).
    start_timeout : float, optional
        Seconds to wait for all engines to register (default 120; a batch profile's job
        may first wait in the queue: ``TUWVIZ_SLURM_PENDING``, default 300, more).
    stall_limit : float
        Seconds a call may go without any rank finishing before it is stopped as hung
        (default :data:`tuwviz.run.launch.STALL_LIMIT`); a rank that sends no heartbeat for
        30 s (stopped, frozen) is named at once.

    Examples
    --------
    Starting engines takes seconds, so this example is tested in ``tests/run/test_engines.py``
    rather than as a doctest::

        with Engines(n=2) as engines:
            print(engines.ranks())          # [0, 1]
    """

    def __init__(self, n: int = 4, profile: str = "local", heavy_yield: bool | None = None,
                 start_timeout: float | None = None, stall_limit: float = STALL_LIMIT):
        check_ranks(n)
        self.stall_limit = check_stall_limit(stall_limit)
        self.n = n
        profiles = config.profiles_dir()
        self.profile_dir = profiles / profile
        if not (self.profile_dir / "ipcluster_config.py").exists():
            valid = ", ".join(sorted(p.name for p in profiles.iterdir() if p.is_dir()))
            raise ValueError(f"unknown profile {profile!r}; valid profiles: {valid}")
        self.heavy_yield = heavy_yield
        self.start_timeout = start_timeout
        self._timeout = start_timeout or 120.0
        self._cluster = None
        self._client = None
        self._watch: RankWatch | None = None
        self._engines: list[int] = []  # engine ids, in MPI rank order
        self._infos: list[dict] = []
        self._broken = False

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> "Engines":
        """Start controller and engines; returns self.

        Engines whose MPI never starts (see :data:`tuwviz.run.launch.STARTUP_ATTEMPTS`) are
        started again, with a note on stderr.
        """
        from ipyparallel.error import EngineError

        # EngineError: the engines' mpiexec ended before they registered
        return start_with_retries(self._start_once, EngineError, "MPI engines")

    def _start_once(self) -> "Engines":
        import ipyparallel as ipp
        from ipyparallel.cluster.launcher import LocalProcessLauncher
        from traitlets.config import Config

        cfg = Config()
        self._watch = RankWatch()
        # the profile's own engine settings (a SLURM profile's PATH, --mpi), which
        # tuwviz's are added to: set on the profile's launcher class, they would otherwise
        # hide the ones set here for all launchers
        profile = ipp.Cluster(profile_dir=str(self.profile_dir), shutdown_atexit=False,
                              log_level=40)
        launcher = profile.engine_launcher_class
        name, mine = launcher.__name__, profile.profile_config.get(launcher.__name__, {})
        base = profile.profile_config.get("EngineLauncher", {})
        # engines on this machine (mpiexec here), or a batch job's on other nodes: those
        # must reach the controller and each other beyond the loopback interface, and
        # their cores are not this machine's
        local = issubclass(launcher, LocalProcessLauncher)  # mpiexec here; not a batch job
        self._timeout = self.start_timeout or (120.0 if local else 120.0 + config.slurm_pending())
        environment = {
            **base.get("environment", {}), **mine.get("environment", {}),
            **(loopback_env() if local else {}),
            **(mpi_env(self.n, self.heavy_yield) if local or self.heavy_yield is not None
               else {}),
            "PYTHONPATH": os.pathsep.join(filter(None, [config.IMPORT_ROOT,
                                                        os.environ.get("PYTHONPATH")])),
            config.WATCH: self._watch.address,
        }
        engine_args = [*mine.get("engine_args", base.get("engine_args", [])),
                       *HEARTBEAT_ARGS["engine"]]
        for cls in {"EngineLauncher", name}:
            cfg[cls].environment = environment
            cfg[cls].engine_args = engine_args
        # engines start as `mpiexec ... python -m ipyparallel.engine`: use this Python's
        # MPI, whatever PATH says, and its single-machine launcher (no TCP port)
        cfg.MPILauncher.mpi_cmd = local_mpi_command()
        cluster_id = f"tuwviz-{uuid.uuid4().hex[:8]}"
        # delay=0: engines start with the controller (ipyparallel waits 1 s between them);
        # each waits for the controller's connection file by itself
        self._cluster = ipp.Cluster(
            profile_dir=str(self.profile_dir), n=self.n, config=cfg,
            cluster_id=cluster_id, controller_args=HEARTBEAT_ARGS["controller"], delay=0,
            shutdown_atexit=True, log_level=40, engine_timeout=self._timeout,
            # on this machine only, whatever the profile says; a batch job's engines
            # connect from other nodes: the profile says where the controller listens
            **({"controller_ip": "127.0.0.1"} if local else {}),
        )
        for sub in ("security", "log"):  # if the driver is killed, these go too
            reaper.remove_on_exit(self.profile_dir / sub / f"*{cluster_id}*")
        record_launch("cluster", self.n)
        since = time.time()
        try:
            with self._watching_processes():
                if local:
                    self._client = self._cluster.start_and_connect_sync(n=self.n)
                else:
                    self._cluster.start_cluster_sync(n=self.n)
                    self._client = self._cluster.connect_client_sync()
                    self._await_job()
            self._connect_engines()
        except BaseException as exc:
            # Ctrl-C or a failure while starting: stop what did start, also a controller or
            # mpiexec whose launcher was interrupted before it learnt the pid
            failure = self._batch_failure(exc)  # asked before the job is cancelled
            try:
                self.stop()
            finally:
                reaper.end_processes(_started_here(since))
            if failure is not None:
                raise failure from None
            raise
        return self

    def _await_job(self) -> None:
        """Wait for a batch job's engines to register, giving up at once when SLURM says
        the job cannot run (:data:`tuwviz.run.slurm.HOPELESS`) or it ended; TimeoutError
        after the start time-out (:meth:`_batch_failure` words both)."""
        jobs = [l.job_id for l in list(self._cluster.engines.values()) if getattr(l, "job_id", "")]
        t0 = self._watch.clock()  # a paused machine is not a slow queue
        looked = t0
        while len(self._client.ids) < self.n:
            now = self._watch.clock()
            if now - t0 > self._timeout:
                raise TimeoutError(f"engines not registered in {self._timeout:g} s")
            if jobs and now - looked >= 2.0 and "Slurm" in type(next(iter(
                    self._cluster.engines.values()))).__name__:
                looked = now
                for job in jobs:
                    why = slurm.stuck(job, ended=True)
                    if why:
                        raise TuwvizError(f"the engines' job {job} cannot run: SLURM says "
                                          f"{why}; it was cancelled")
            time.sleep(0.25)

    def _batch_failure(self, exc: BaseException) -> TuwvizError | None:
        """What went wrong with a batch profile's engine job, in one sentence (None for
        engines on this machine, or an error that is not the job's)."""
        import subprocess

        jobs = [l.job_id for l in list(self._cluster.engines.values()) if hasattr(l, "job_id")]
        if not jobs or isinstance(exc, TuwvizError):  # none, or worded already (_await_job)
            return None
        if isinstance(exc, subprocess.CalledProcessError) and not any(jobs):
            return TuwvizError(f"the engines' batch job was not accepted: {' '.join(exc.cmd[:1])} "
                               f"ended with exit status {exc.returncode} (its message is above); "
                               f"nothing is queued")
        if isinstance(exc, TimeoutError) and any(jobs):
            job = next(j for j in jobs if j)
            state, reason = slurm.job_state(job)
            state = f"{state} ({reason})" if state else ""
            registered = len(self._client.ids) if self._client is not None else 0
            return TuwvizError(f"the engines' job {job} did not bring up {self.n} engines in "
                               f"{self._timeout:g} s ({registered} registered; the job: "
                               f"{state or 'gone'}); it was cancelled (start_timeout= waits "
                               f"longer)")
        return None

    @contextlib.contextmanager
    def _watching_processes(self):
        """Hand the controller and each engines' mpiexec to the reaper the moment it exists.

        ipyparallel starts them deep inside one call that takes seconds; a driver killed
        meanwhile must not leave them behind, so a thread looks for new ones every 0.1 s.
        """
        done = threading.Event()
        handed: set[int] = set()

        def look():
            cluster = self._cluster
            for launcher in [cluster.controller, *list(cluster.engines.values())]:
                pid = getattr(launcher, "pid", None) if launcher is not None else None
                if pid and pid not in handed:
                    handed.add(pid)
                    reaper.watch(pid)

        def loop():
            while not done.wait(0.1):
                look()

        thread = threading.Thread(target=loop, name="tuwviz-reaper-handover", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            look()

    def _connect_engines(self) -> None:
        self._client.wait_for_engines(self.n, timeout=self._timeout)
        ids = list(self._client.ids)[-self.n:]
        infos = self._client[ids].apply_sync(_engine_info)
        order = sorted(range(len(ids)), key=lambda k: infos[k]["rank"])
        self._engines = [ids[k] for k in order]
        self._infos = [infos[k] for k in order]
        reaper.track_segments(self._local_segments())
        self._broken = False

    def stop(self) -> None:
        """Stop engines and controller and remove the cluster's files (safe to call twice)."""
        if self._cluster is not None:
            cluster, self._cluster = self._cluster, None
            # engines stopped half-started have not reported their MPICH segments: look
            segments = set(self._local_segments())
            launchers = [l.pid for l in list(cluster.engines.values()) if getattr(l, "pid", None)]
            for pid in launchers:
                segments.update(reaper.tree_segments(pid))
            for key, l in list(cluster.engines.items()):
                if hasattr(l, "job_id") and not getattr(l, "job_id", None):
                    cluster.engines.pop(key)  # a batch job never submitted: nothing to cancel
            try:
                self._watch.forget(release=True)
                # idle engines owe nothing: ended at once with their mpiexec, the job ends
                # in moments, where mpiexec's SIGTERM takes 3-4 s for the engines' orderly
                # shutdown, then mpiexec.gforker reaps about one engine a second (8: 5 s)
                _end_processes(launchers, grace=0.0)
                cluster.stop_cluster_sync()
            finally:
                if self._client is not None:
                    self._client.close()
                self._watch.close()
                self._client = None
                reaper.release_segments(sorted(segments))  # left if an engine was killed
                for sub in ("security", "log"):
                    for path in (self.profile_dir / sub).glob(f"*{cluster.cluster_id}*"):
                        path.unlink(missing_ok=True)

    def restart(self) -> None:
        """Stop the engines if any are left and start a fresh set (after a failure)."""
        if self._cluster is None:
            self.start()
            return
        self._stop_engines()
        with self._watching_processes():
            self._cluster.start_engines_sync(n=self.n)
        self._connect_engines()

    def _stop_engines(self) -> None:
        self._watch.forget(release=True)  # engines exit by themselves, even if stuck in MPI
        try:
            self._cluster.stop_engines_sync()
        except Exception:  # noqa: BLE001 - they may already be dead
            pass
        _end_processes([i["pid"] for i in self._infos if i.get("host") == socket.gethostname()])
        reaper.release_segments(self._local_segments())
        self._broken = True
        # wait until the controller has seen them go, or a restart would count them (their
        # orderly shutdown unregisters them; killed ones would be seen after 30 s)
        t0 = time.monotonic()
        while self._client.ids and time.monotonic() - t0 < 30:
            time.sleep(0.1)

    def _local_segments(self) -> list[str]:
        """MPICH's /dev/shm segments of the engines on this host (see :mod:`tuwviz.run.reaper`)."""
        return reaper.job_segments(i for i in self._infos if i.get("host") == socket.gethostname())

    def __enter__(self) -> "Engines":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _ensure(self) -> None:
        if self._cluster is None:
            raise TuwvizError(f"cluster is not running: call start() or use "
                              f"'with {type(self).__name__}(...)'")
        if self._broken:
            self.restart()

    # -- information -----------------------------------------------------------------------
    def rank_infos(self, p: int | None = None) -> list[dict]:
        """Reports of the engines (rank, pid, host, cores, MPI library, ...), by rank."""
        self._ensure()
        return self._infos[: p or self.n]

    @property
    def connection_file(self) -> Path:
        """The controller's connection file for clients (address, ports, signing key)."""
        return self.profile_dir / "security" / f"ipcontroller-{self._cluster.cluster_id}-client.json"

    def ranks(self) -> list[int]:
        """MPI ranks of the engines, in order."""
        return [i["rank"] for i in self.rank_infos()]

    @property
    def oversubscribed(self) -> bool:
        """True if more engines run than the machine has cores."""
        return run_metadata(self.rank_infos(), "cluster")["oversubscribed"]

    # -- running ---------------------------------------------------------------------------
    def apply(self, func: Callable, *args, timeout: float | None = None) -> list:
        """Run ``func(*args)`` on every engine at once; results in MPI rank order.

        `func` runs on all ranks together, so it may use ``MPI.COMM_WORLD`` collectively.
        """
        return self._wait(self._submit(func, *args), timeout)

    def _submit(self, func: Callable, *args) -> list:
        """Start ``func(*args)`` on every engine; its AsyncResults in MPI rank order."""
        import ipyparallel as ipp

        self._ensure()
        self._raise_if_dead()
        try:
            return [self._client[e].apply_async(func, *args) for e in self._engines]
        except (IndexError, ipp.error.NoEnginesRegistered):
            # an engine unregistered between two calls: it died while idle
            self._raise_if_dead(wait=5.0)
            self._stop_engines()
            raise RankFailure("an engine vanished; engines stopped (the next call restarts them)")

    def _raise_if_dead(self, wait: float = 0.0) -> None:
        """Raise RankFailure naming the first rank that died, if one did (waits up to `wait` s)."""
        t0 = time.monotonic()
        while True:
            dead = self._watch.dead()
            if dead:
                self._stop_engines()
                raise RankFailure(f"rank {dead[0]} died (pid {self._infos[dead[0]]['pid']}); the "
                                  f"run was aborted and the engines stopped (the next call "
                                  f"restarts them)", rank=dead[0])
            if time.monotonic() - t0 >= wait:
                return
            time.sleep(0.1)

    def _wait(self, pending: list, timeout: float | None) -> list:
        """Wait for one result per rank; stop everything within seconds if one fails."""
        t0 = self._watch.clock()  # a paused machine is not a hung run
        limit = self.stall_limit if timeout is None else timeout
        failed_at = None
        try:
            while True:
                done = [ar.ready() for ar in pending]
                if all(done):
                    break
                bad = [r for r, ar in enumerate(pending) if done[r] and not ar.successful()]
                if bad and failed_at is None:
                    failed_at = time.monotonic()
                self._raise_if_dead()
                if failed_at is not None and time.monotonic() - failed_at > FAILURE_GRACE:
                    break  # the others are stuck waiting for the failed rank
                silent = self._watch.silent(min(SILENT_LIMIT, limit))
                if silent or self._watch.clock() - t0 > limit:
                    self._stop_engines()
                    raise self._stalled(silent, [r for r, d in enumerate(done) if not d],
                                        self._watch.clock() - t0)
                # returns as soon as all are done: a fixed sleep here cost 50 ms per case
                self._client.wait(pending, timeout=0.05)
        except KeyboardInterrupt:
            self._stop_engines()
            raise KeyboardInterrupt("interrupted: engines stopped, the next call restarts them") from None

        errors = []
        for rank, ar in enumerate(pending):
            if ar.ready() and not ar.successful():
                try:
                    ar.get(0)
                except Exception as exc:  # noqa: BLE001 - RemoteError, or EngineError if it died
                    errors.append((rank, exc))
        if not errors:
            return [ar.get(0) for ar in pending]
        failure = self._describe(errors)
        if not all(ar.ready() for ar in pending) or any(_died(e) for _, e in errors):
            self._stop_engines()
        raise failure

    def _stalled(self, silent: list[int], unfinished: list[int], waited: float) -> RankFailure:
        """The error for a call that stopped making progress, naming the ranks to blame."""
        def names(ranks):
            return ", ".join(f"rank {r} (pid {self._infos[r]['pid']})" for r in ranks)

        tail = "; engines stopped (the next call restarts them)"
        if silent:
            return RankFailure(f"{names(silent)} stopped responding (no heartbeat for "
                               f"{min(SILENT_LIMIT, self.stall_limit):.0f} s or more: stopped or "
                               f"frozen){tail}", rank=silent[0])
        who = (f"{names(unfinished)} had not finished while the others had"
               if len(unfinished) < len(self._engines) else "no rank had finished")
        return RankFailure(f"no result after {waited:.0f} s: {who} (the no-progress limit is "
                           f"stall_limit={self.stall_limit:g}){tail}", rank=unfinished[0])

    def _describe(self, errors: list) -> RankFailure:
        """Turn engine errors into one RankFailure naming the rank that failed first."""
        died = [(r, e) for r, e in errors if _died(e)]
        if died:
            dead = self._watch.dead()
            rank = dead[0] if dead else died[0][0]
            return RankFailure(f"rank {rank} died; the run was aborted and the engines stopped "
                               f"(the next call restarts them)", rank=rank)
        rank, exc = errors[0]
        ename = getattr(exc, "ename", None)
        if ename == "RankFailure":  # raised on all ranks; its text already names the rank
            return RankFailure(exc.evalue, rank=getattr(exc, "rank", None) or _rank_in(exc.evalue))
        if ename:
            return RankFailure(f"rank {rank} raised {ename}: {exc.evalue}", rank=rank)
        return RankFailure(f"rank {rank} failed: {exc}", rank=rank)

    def run_cases(self, nranks: int, cases: list[dict], on_result: Callable | None = None,
                  on_start: Callable | None = None) -> None:
        """A :data:`~tuwviz.run.launch.Backend` for :func:`tuwviz.verify` and :func:`tuwviz.bench`."""
        if nranks > self.n:
            raise ValueError(f"cases need {nranks} ranks but the cluster has {self.n} engines")
        if on_start is not None:
            on_start(self.rank_infos(nranks))

        i = 0
        while i < len(cases):
            n = 1
            while (n < BATCH and i + n < len(cases)
                   and cases[i]["mode"] == cases[i + n]["mode"] == "verify"):
                n += 1
            pending, failure = [], None  # an engine that vanished fails the submission
            try:
                pending = self._submit(_engine_run_cases, cases[i:i + n], i)
                results = self._wait(pending, None)[0]
            except RankFailure as exc:  # say which case it was, as mpiexec runs do
                failure = exc
                at, results = _progress(pending, i)  # the batch's cases before it
                exc.case = exc.case or describe_case(cases[at], at, len(cases))
            if on_result is not None:
                for j, result in enumerate(results):
                    on_result(i + j, cases[i + j], result)
            if failure is not None:
                raise failure
            i += n

    def trace(self, problem, algorithm: str, **params) -> list[list[dict]]:
        """Run `algorithm` once on `problem` with tracing on; events per rank.

        `params` are the algorithm's tuning parameters (:mod:`tuwviz.params`), e.g.
        ``block_bytes=65536`` for the pipelined ring.
        """
        case = {"mode": "trace", "problem": problem.to_dict(), "algorithm": algorithm,
                "params": params}
        return self.apply(_engine_run_case, case)[0]

    def __repr__(self) -> str:
        state = "running" if self._cluster is not None else "stopped"
        return f"<{type(self).__name__} n={self.n} profile={self.profile_dir.name} {state}>"


def _progress(pending: list, first: int) -> tuple[int, list]:
    """After a failed batch (its AsyncResults `pending`, in rank order) that began with case
    `first`: the case that was running and the results of the batch's cases before it, as
    :func:`_engine_run_cases` announced them."""
    time.sleep(0.2)  # announcements travel apart from replies: let the last ones land
    data = []
    for ar in pending:
        try:
            data.append(ar.data or {})
        except AttributeError:  # nothing arrived from this engine
            data.append({})
    # rank 0 takes part in every case; ranks outside a case's p run ahead of it
    if data and "at" in data[0]:
        return data[0]["at"], data[0].get("results", [])
    return min([d["at"] for d in data if "at" in d] or [first]), []


def _end_processes(pids: list[int], grace: float = 3.0) -> None:
    """Make sure the processes `pids` and their descendants (an engine's nanny; an
    mpiexec's engines) are gone: those still there after `grace` seconds are killed."""
    import psutil

    procs = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            procs += [proc, *proc.children(recursive=True)]
        except psutil.Error:
            pass
    reaper.end_processes(procs, grace, terminate=False)  # they were asked to stop already


def _rank_in(text: str) -> int | None:
    import re

    m = re.match(r"rank (\d+)", text)
    return int(m.group(1)) if m else None


def _died(exc) -> bool:
    return type(exc).__name__ == "EngineError" or getattr(exc, "ename", "") == "EngineError"


def _mpiexec() -> str:
    return find_mpiexec()
