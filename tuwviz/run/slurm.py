"""SLURM as the launcher of a batch run's ranks (``--launcher srun``).

On a cluster the same ``tuwviz verify|bench|calibrate`` command runs inside an allocation
(``salloc``, an ``sbatch`` script): the ranks are then started through SLURM instead of
this machine's ``mpiexec``, so they land on the allocation's nodes.  Outside an
allocation the run asks for a job itself and waits for it at most
``TUWVIZ_SLURM_PENDING`` seconds.  :func:`choose_launcher` picks SLURM by itself when
``SLURM_JOB_ID`` is set.

Two ways to start the ranks (:func:`mpi_flavour`, setting ``TUWVIZ_SLURM_MPI``):

``hydra`` (the default with pip's MPICH)
    MPICH's own ``mpiexec.hydra -bootstrap slurm``: one ``srun`` step starts a proxy per
    node, and Hydra serves the ranks' PMI itself.  SLURM 22.05's pmi2 plugin reads a PMI-1
    line in one 1,024-byte ``read``; MPICH's UCX address exchange writes longer lines
    whenever its padding holds no zeros (:data:`PMI_CUT`), so ranks on more than one node
    failed to start or hung in runs that depended on nothing but memory contents.
``pmi2``, ``pmix``, ... (an ``srun --mpi=`` plugin)
    ``srun`` starts every rank as a task and SLURM serves PMI: for an MPI built against
    SLURM's PMI (a site's module MPI).

The driver side of the run is :func:`tuwviz.run.launch.run_mpiexec`'s; this module holds
what differs: the command (:func:`start_command`), how SLURM reports how a task ended
or why the scheduler refused a job (:func:`task_report`, :func:`refusal`), how a run's job
step is ended (:func:`cancel`), and what a rank reports of its job (:func:`rank_slurm`).

The sites' settings are the environment variables the SLURM profile
(``cluster_profiles/slurm``) reads too (:func:`tuwviz.config.slurm_settings`):
``TUWVIZ_SLURM_MPI``, and for a job the run asks for itself ``TUWVIZ_SLURM_PARTITION``,
``_ACCOUNT``, ``_TIME``, ``_OPTIONS`` and ``TUWVIZ_SLURM_PENDING``
(:func:`tuwviz.config.slurm_pending`).
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

from .. import config
from ..errors import TuwvizError

__all__ = ["HOPELESS", "LAUNCHERS", "PMI_CUT", "cancel", "choose_launcher", "hydra_mpiexec",
           "in_allocation", "job_announced", "job_state", "mpi_flavour", "node_report",
           "pmi_cut", "rank_slurm", "refusal", "start_command", "stuck", "task_report"]

#: The ``--launcher`` choices: ``auto`` is ``srun`` inside an allocation, else ``mpiexec``.
LAUNCHERS = ("auto", "mpiexec", "srun")
#: srun's report of tasks that ended badly: ``srun: error: n1: task 2: Killed``,
#: ``srun: error: n2: tasks 3-4: Exited with exit code 1``.
_TASKS = re.compile(r"srun: error: (\S+): tasks? ([\d,\-]+): (.+)$")
#: Why a job pends that waiting will not mend (squeue's reason): it asks for more than the
#: partition or the nodes have, or for something the site does not allow.
HOPELESS = ("PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit", "BadConstraints",
            "InvalidAccount", "InvalidQOS", "QOSMaxCpuPerJobLimit", "QOSMaxNodePerJobLimit",
            "AssocMaxCpuPerJobLimit", "AssocMaxNodePerJobLimit", "DependencyNeverSatisfied",
            "JobHeldAdmin")
#: srun's or salloc's words about the job it asked for: ``srun: job 12 queued and waiting
#: for resources``, ``salloc: Granted job allocation 12``.
_JOB = re.compile(r"(?:srun|salloc): (?:job (\d+) (?:queued|has been allocated)|"
                  r"(?:Pending|Granted) job allocation (\d+))")
#: salloc's words for what srun calls "Unable to allocate resources".
_SALLOC_REFUSED = re.compile(r"salloc: error: Job submit/allocate failed: (.+)$")
#: srun's (or salloc's) words when the scheduler refuses or gives up on the allocation.
_REFUSED = re.compile(r"(?:srun|salloc): error: (Unable to allocate resources: .+|.*[Ii]mmediate.*|"
                      r"Unable to create step for job \d+: .+|"
                      r"Job request does not match any supported policy.*|"
                      r".*[Rr]equested node configuration is not available.*)$"
                      # no SLURM to talk to (no slurm.conf, no controller): srun gives up
                      r"|(?:srun|salloc): fatal: (.+)$")


def in_allocation(env: dict | None = None) -> bool:
    """Whether this process runs inside a SLURM allocation (``SLURM_JOB_ID`` is set).

    >>> in_allocation({"SLURM_JOB_ID": "17"}), in_allocation({})
    (True, False)
    """
    return bool((os.environ if env is None else env).get("SLURM_JOB_ID"))


def choose_launcher(name: str | None = "auto", env: dict | None = None) -> str:
    """``mpiexec`` or ``srun``: the launcher `name` stands for.

    ``auto`` (or None) is ``srun`` inside an allocation (:func:`in_allocation`), else
    ``mpiexec``.

    Raises
    ------
    ValueError
        An unknown name (the valid ones are listed).
    TuwvizError
        ``srun`` asked for (or chosen inside an allocation) but not on ``PATH``.

    Examples
    --------
    >>> choose_launcher("auto", env={})
    'mpiexec'
    >>> choose_launcher("mpirun")
    Traceback (most recent call last):
    ...
    ValueError: unknown launcher 'mpirun'; valid launchers: auto, mpiexec, srun
    """
    name = name or "auto"
    if name not in LAUNCHERS:
        raise ValueError(f"unknown launcher {name!r}; valid launchers: {', '.join(LAUNCHERS)}")
    if name == "auto":
        name = "srun" if in_allocation(env) else "mpiexec"
    if name == "srun" and shutil.which("srun") is None:
        raise TuwvizError("srun not found on PATH: run on a SLURM cluster's login or compute "
                          "node (module load slurm, where sites need it), or use "
                          "--launcher mpiexec")
    return name


def hydra_mpiexec() -> str | None:
    """MPICH's ``mpiexec.hydra`` next to this Python (pip's MPICH), else on ``PATH``, else None."""
    here = os.path.join(sys.prefix, "bin", "mpiexec.hydra")
    return here if os.access(here, os.X_OK) else shutil.which("mpiexec.hydra")


def mpi_flavour(env: dict | None = None) -> str:
    """How the ranks start under SLURM: ``TUWVIZ_SLURM_MPI`` if set, else ``hydra`` where
    MPICH's Hydra is installed (:func:`hydra_mpiexec`), else ``pmi2``.

    >>> mpi_flavour({"TUWVIZ_SLURM_MPI": "pmix"})
    'pmix'

    Raises
    ------
    TuwvizError
        ``hydra`` asked for, but no ``mpiexec.hydra`` is installed.
    """
    chosen = config.slurm_settings(env)["mpi"]
    if chosen and chosen != "hydra":
        return chosen
    if hydra_mpiexec() is not None:
        return "hydra"
    if chosen:
        raise TuwvizError("TUWVIZ_SLURM_MPI=hydra, but no mpiexec.hydra is installed (MPICH's "
                          "launcher): install MPICH, or set TUWVIZ_SLURM_MPI to your srun's "
                          "PMI plugin (srun --mpi=list shows them)")
    return "pmi2"


def start_command(nranks: int, env: dict | None = None) -> list[str]:
    """The command (an argument list) that starts `nranks` ranks under SLURM.

    With ``srun --mpi=PLUGIN`` (:func:`mpi_flavour`): one MPI job step of `nranks` tasks
    (unlabelled: ``srun --label`` cuts lines longer than 1 KiB in two, and the ranks'
    results are such lines); ``--overcommit`` because more ranks than allocated cores is
    allowed (the rows say oversubscribed); ``--kill-on-bad-exit`` so a rank that dies ends
    the step.  Outside an allocation the step gets its own job, named ``tuwviz``, with the
    site's partition, account, time and options from the environment, waiting at most
    ``TUWVIZ_SLURM_PENDING`` seconds for it (:func:`tuwviz.config.slurm_pending`).

    With ``hydra``: ``mpiexec.hydra -bootstrap slurm -n NRANKS`` (one step of one proxy per
    node; Hydra places the ranks as the allocation's tasks are placed and ends them all when
    one dies).  Outside an allocation ``salloc`` asks for the job (``--ntasks=NRANKS``, one
    CPU each: more ranks than CPUs runs inside your own ``salloc --overcommit``) and runs
    Hydra in it.

    Examples
    --------
    >>> start_command(4, env={"SLURM_JOB_ID": "7", "TUWVIZ_SLURM_MPI": "pmi2"})
    ['srun', '--mpi=pmi2', '--ntasks=4', '--overcommit', '--kill-on-bad-exit=1']
    >>> start_command(4, env={"SLURM_JOB_ID": "7", "TUWVIZ_SLURM_MPI": "hydra"})[1:]
    ['-bootstrap', 'slurm', '-n', '4']
    """
    env = os.environ if env is None else env
    site = config.slurm_settings(env)
    flavour = mpi_flavour(env)
    job = []
    if not in_allocation(env):
        job = ["--job-name=tuwviz", f"--immediate={config.slurm_pending()}"]
        job += [f"--{key}={site[key]}" for key in ("partition", "account", "time") if site[key]]
        job += shlex.split(site["options"])
    if flavour == "hydra":
        hydra = [hydra_mpiexec(), "-bootstrap", "slurm", "-n", str(nranks)]
        return hydra if not job else ["salloc", f"--ntasks={nranks}", *job, *hydra]
    return ["srun", f"--mpi={flavour}", f"--ntasks={nranks}", "--overcommit",
            "--kill-on-bad-exit=1", *job]


def node_report(line: str) -> tuple[str, list[int], str] | None:
    """``(node, tasks, how)`` from srun's line about tasks that ended badly, else None.

    >>> node_report("srun: error: n2: tasks 3-4: Exited with exit code 1")
    ('n2', [3, 4], 'exited with code 1')
    """
    m = _TASKS.search(line.strip())
    if not m:
        return None
    node, spans, how = m.groups()
    how = how.strip()
    code = re.match(r"Exited with exit code (\d+)", how)
    text = f"exited with code {code.group(1)}" if code else how[:1].lower() + how[1:]
    tasks = []
    for span in spans.split(","):
        lo, _, hi = span.partition("-")
        if lo.isdigit():
            tasks += range(int(lo), int(hi or lo) + 1)
    return node, tasks, text


def task_report(line: str) -> dict[int, str]:
    """How ranks ended, from one line of srun's own output (empty if it says nothing),
    where srun's tasks are the ranks (``srun --mpi=``; under Hydra they are its proxies).

    >>> task_report("srun: error: n2: tasks 3-4: Exited with exit code 1")
    {3: 'exited with code 1 (on node n2)', 4: 'exited with code 1 (on node n2)'}
    >>> task_report("srun: error: n1: task 0: Killed")
    {0: 'killed (on node n1)'}
    """
    report = node_report(line)
    if report is None:
        return {}
    node, tasks, how = report
    return {r: f"{how} (on node {node})" for r in tasks}


def refusal(line: str) -> str | None:
    """srun's or salloc's reason when the scheduler refused the allocation or it stayed
    pending (in srun's words).

    >>> refusal("srun: error: Unable to allocate resources: Invalid partition name specified")
    'Unable to allocate resources: Invalid partition name specified'
    >>> refusal("salloc: error: Job submit/allocate failed: Invalid partition name specified")
    'Unable to allocate resources: Invalid partition name specified'
    >>> refusal("srun: fatal: Could not establish a configuration source")
    'Could not establish a configuration source'
    """
    m = _SALLOC_REFUSED.search(line.strip())
    if m:
        return f"Unable to allocate resources: {m.group(1)}"
    m = _REFUSED.search(line.strip())
    return (m.group(1) or m.group(2)) if m else None


#: slurmstepd's words when its pmi2 plugin read only part of a rank's PMI line.
_PMI_CUT = re.compile(r"slurmstepd\S*: error: mpi/pmi2: value not properly terminated")
#: What that means and what helps (said with the error it caused).
PMI_CUT = (
    "SLURM's pmi2 cut a line of MPICH's address exchange (slurmstepd: 'value not properly "
    "terminated in client request'): MPICH's UCX netmod puts each node's addresses, padded "
    "with bytes that vary from run to run, through PMI in lines that can pass the 1,024 "
    "bytes SLURM reads at once; unset TUWVIZ_SLURM_MPI (pip's MPICH then starts under "
    "Hydra, which serves PMI itself), or set MPIR_CVAR_CH4_NETMOD=ofi, and run again "
    "(README: Clusters and SLURM)")


def pmi_cut(line: str) -> bool:
    """Whether `line` is slurmstepd saying that a rank's PMI line reached it cut
    (:data:`PMI_CUT` says why and what helps).

    >>> pmi_cut("slurmstepd-n1: error: mpi/pmi2: value not properly terminated in client request")
    True
    >>> pmi_cut("srun: error: n1: task 0: Exited with exit code 15")
    False
    """
    return bool(_PMI_CUT.search(line))


def job_announced(line: str) -> str | None:
    """The id of the job srun or salloc asked for, if `line` is its word about it (srun
    announces only a job that had to wait).

    >>> job_announced("srun: job 12 queued and waiting for resources")
    '12'
    >>> job_announced("salloc: Granted job allocation 13")
    '13'
    """
    m = _JOB.search(line)
    return (m.group(1) or m.group(2)) if m else None


def job_state(job: str) -> tuple[str, str]:
    """``(state, reason)`` of `job` as squeue tells (``("", "")`` once it left the queue)."""
    try:
        out = subprocess.run(["squeue", "-h", "-j", str(job), "-o", "%T %r"],
                             capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return "", ""
    return (out[0], " ".join(out[1:])) if out else ("", "")


def stuck(job: str, ended: bool = False) -> str | None:
    """squeue's words (``PENDING (PartitionConfig)``) when `job` pends for a reason that
    waiting will not mend (:data:`HOPELESS`); with `ended`, also when it has ended or
    failed ("it ended" once it left the queue).  None while it may still start or runs."""
    state, reason = job_state(job)
    if reason in HOPELESS or (ended and state in ("", "FAILED", "CANCELLED", "TIMEOUT",
                                                  "NODE_FAIL", "COMPLETED")):
        return f"{state} ({reason})" if state else "it ended"
    return None


def rank_slurm(env: dict | None = None) -> dict[str, str]:
    """What a rank knows of its SLURM job: job and step id, its node's SLURM name.

    >>> rank_slurm({"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "0", "SLURMD_NODENAME": "n2"})
    {'slurm_job': '12', 'slurm_step': '0', 'slurm_node': 'n2'}
    >>> rank_slurm({})
    {}
    """
    env = os.environ if env is None else env
    if not env.get("SLURM_JOB_ID"):
        return {}
    return {"slurm_job": env["SLURM_JOB_ID"], "slurm_step": env.get("SLURM_STEP_ID", ""),
            "slurm_node": env.get("SLURMD_NODENAME", "")}


def cancel(job: str, step: str | None = None) -> None:
    """End a job step (or, without `step`, the whole job) at once: its tasks on every node.

    Killing ``srun`` alone would leave tasks on other nodes running; ``scancel`` asks the
    controller, which ends them wherever they are.  Best effort: nothing is raised.
    """
    target = f"{job}.{step}" if step not in (None, "") else str(job)
    try:
        subprocess.run(["scancel", "--signal=KILL", target], capture_output=True, timeout=30)
        if step in (None, ""):
            subprocess.run(["scancel", target], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        pass
