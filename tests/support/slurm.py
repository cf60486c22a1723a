"""A real SLURM on this machine for the tests: munge, slurmctld and two slurmd "nodes".

:class:`Slurm` starts Debian's daemons in the foreground in a private folder: its own
munge key and socket, a ``slurm.conf`` on free ports with two node names (``n1``, ``n2``,
two CPUs each, both on this host: slurmd's ``-N NAME``), no accounting, no systemd.
Clients reach it through ``SLURM_CONF`` (:attr:`Slurm.env`).  :meth:`Slurm.stop` cancels
every job, ends the daemons and whatever their jobs started.

Under SLURM's rules the two nodes are two machines; the tests use them to see that a
run spans nodes (the rows' ``nodes``), that a job the scheduler refuses or keeps pending
is reported and leaves nothing queued, and that a node that dies mid-run is named.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from . import hang_guard

__all__ = ["DAEMONS", "NODES", "Slurm", "missing"]

#: What a test SLURM needs (Debian packages munge, slurmctld, slurmd, slurm-client).
DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sbatch", "squeue", "scancel", "sinfo")
#: The node names, CPUs each, and the most tasks SLURM puts on one node.
NODES, CPUS, MAX_TASKS = ("n1", "n2"), 2, 8


def missing() -> list[str]:
    """The programs of :data:`DAEMONS` not found (on PATH or in /usr/sbin)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return [d for d in DAEMONS if shutil.which(d, path=path) is None]


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _conf(root: Path, ports: list[int], oversubscribe: bool) -> str:
    ctld, *nodes = ports
    lines = [
        "ClusterName=tuwviztest", "SlurmctldHost=localhost", "SlurmUser=root",
        f"SlurmctldPort={ctld}", "AuthType=auth/munge", "CredType=cred/munge",
        f"AuthInfo=socket={root / 'munge.sock'}",
        f"StateSaveLocation={root / 'state'}", f"SlurmdSpoolDir={root / 'spool' / '%n'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}", f"SlurmdPidFile={root / 'slurmd-%n.pid'}",
        f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'log' / 'slurmd-%n.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SwitchType=switch/none",
        "MpiDefault=none", "SchedulerType=sched/backfill", "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU", "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none", "ReturnToService=2",
        # a dead slurmd is noticed within seconds, and a finished job leaves squeue soon
        "SlurmdTimeout=10", "InactiveLimit=0", "MinJobAge=2", "KillWait=2",
        # the most tasks a node takes, overcommitted or not: 16 on the two nodes
        f"MaxTasksPerNode={MAX_TASKS}",
    ]
    for name, port in zip(NODES, nodes):
        lines.append(f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} "
                     f"CPUs={CPUS} State=UNKNOWN")
    share = " OverSubscribe=FORCE:4" if oversubscribe else ""
    lines.append(f"PartitionName=debug Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE "
                 f"State=UP{share}")
    return "\n".join(lines) + "\n"


class Slurm:
    """munged, slurmctld and one slurmd per node name, all in `root` (started at once).

    Parameters
    ----------
    root : Path
        A private, empty folder (a short path: munge's socket path must fit 108 bytes).
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        for sub in ("state", "log", *(f"spool/{n}" for n in NODES)):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.conf = self.root / "slurm.conf"
        self.conf.write_text(_conf(self.root, _free_ports(1 + len(NODES)), oversubscribe=False))
        path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
        self.env = {**os.environ, "SLURM_CONF": str(self.conf), "PATH": path}
        for var in [v for v in self.env if v.startswith("SLURM_") and v != "SLURM_CONF"]:
            del self.env[var]  # a test SLURM inside a real job must not see that job
        self.procs: dict[str, subprocess.Popen] = {}
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        key = self.root / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        r = self.root
        self._spawn("munged", ["munged", "-F", "--force", f"--socket={r / 'munge.sock'}",
                               f"--key-file={key}", f"--log-file={r / 'log' / 'munged.log'}",
                               f"--pid-file={r / 'munged.pid'}", f"--seed-file={r / 'munged.seed'}"])
        self._wait(lambda: (r / "munge.sock").exists(), "munged's socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        self._wait(lambda: self.run("sinfo", "-h", check=False).returncode == 0, "slurmctld")
        for name in NODES:
            self._slurmd(name)
        self._wait(lambda: self.idle_nodes() == set(NODES), "both slurmd idle")

    def _slurmd(self, name: str) -> None:
        # the node's name in the environment of its slurmd and so of its slurmstepds: on
        # one host, that is how kill_node finds what runs "on" the node
        self._spawn(f"slurmd-{name}", ["slurmd", "-D", "-N", name, "-f", str(self.conf)],
                    {"TUWVIZ_TEST_NODE": name})

    def _spawn(self, name: str, cmd: list[str], extra: dict | None = None) -> None:
        log = open(self.root / "log" / f"{name}.out", "ab")
        self.procs[name] = subprocess.Popen(cmd, env={**self.env, **(extra or {})}, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def _wait(self, ready, what: str, limit: float = 60.0) -> None:
        deadline = time.monotonic() + hang_guard(limit)
        while not ready():
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = "\n".join(f"--- {f.name}\n{f.read_text(errors='replace')[-1500:]}"
                                 for f in sorted((self.root / "log").iterdir()))
                raise RuntimeError(f"test SLURM: {what} not ready ({', '.join(dead) or 'time-out'} "
                                   f"ended)\n{logs}")
            time.sleep(0.2)

    # -- clients -------------------------------------------------------------------------
    def run(self, *cmd: str, check: bool = True, timeout: float = 60.0,
            env: dict | None = None) -> subprocess.CompletedProcess:
        """A SLURM client command (argument list) against this SLURM (`env` added)."""
        return subprocess.run(list(cmd), env={**self.env, **(env or {})}, capture_output=True,
                              text=True, check=check, timeout=hang_guard(timeout))

    def idle_nodes(self) -> set[str]:
        out = self.run("sinfo", "-h", "-N", "-o", "%N %t", check=False).stdout
        return {n for n, state in (l.split() for l in out.splitlines() if l.strip())
                if state == "idle"}

    def queue(self) -> list[str]:
        """The jobs in the queue, one ``id state name`` each."""
        out = self.run("squeue", "-h", "-o", "%i %T %j").stdout
        return [l.strip() for l in out.splitlines() if l.strip()]

    def wait_queue_empty(self, limit: float = 60.0) -> list[str]:
        """Wait until no job is queued or running; what is left after `limit` s."""
        deadline = time.monotonic() + hang_guard(limit)
        while (jobs := self.queue()) and time.monotonic() < deadline:
            time.sleep(0.5)
        return jobs

    def kill_node(self, name: str) -> None:
        """The node dies: its slurmd, slurmstepds and job processes, at once (SIGKILL).

        Both nodes share this host, so what runs on the node is found by its environment:
        ``TUWVIZ_TEST_NODE`` (slurmd and its slurmstepds), ``SLURMD_NODENAME`` (tasks).
        Every node's tasks are held (SIGSTOP) while it dies and go on after (SIGCONT): a
        real node dies in an instant, and a run must not finish while this one is found."""
        held = [pid for node in NODES
                for pid in _pids_with_env(b"SLURMD_NODENAME=" + node.encode())]
        _signal(held, signal.SIGSTOP)
        try:
            self._kill_node(name)
        finally:
            _signal(held, signal.SIGCONT)

    def _kill_node(self, name: str) -> None:
        proc = self.procs[f"slurmd-{name}"]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        _signal(_pids_with_env(b"TUWVIZ_TEST_NODE=" + name.encode())
                + _pids_with_env(b"SLURMD_NODENAME=" + name.encode()), signal.SIGKILL)

    def revive_node(self, name: str) -> None:
        """Start the node's slurmd again and wait until the node is idle."""
        self._slurmd(name)
        self.run("scontrol", "update", f"NodeName={name}", "State=RESUME", check=False)
        self._wait(lambda: name in self.idle_nodes(), f"node {name} idle again", limit=120)

    # -- end -----------------------------------------------------------------------------
    def stop(self) -> None:
        """Cancel every job, end the daemons and anything their jobs left."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.run("scancel", "--signal=KILL", "--full", "--user=root", check=False)
            self.run("scancel", "--user=root", check=False)
            self.wait_queue_empty(20)
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(timeout=hang_guard(10))
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        # slurmstepd runs jobs in sessions of their own: whatever is left of them
        _signal(_pids_with_env(b"SLURM_CONF=" + str(self.conf).encode()), signal.SIGKILL)


def _signal(pids: list[int], sig: signal.Signals) -> None:
    """Send `sig` to each of `pids` that still exists."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _pids_with_env(entry: bytes) -> list[int]:
    """Processes whose environment holds `entry` exactly (``NAME=value``)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open(f"/proc/{d}/environ", "rb") as f:
                    if entry in f.read().split(b"\0"):
                        pids.append(int(d))
            except OSError:
                pass
    return pids
