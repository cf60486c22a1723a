"""ipyparallel profile: MPI engines as one SLURM job, controller on the login node.

A starting point, to be adapted to your site (see README.md beside this file). Use it from
the login node, inside the venv or conda environment that has tuwviz::

    import ipyparallel as ipp
    cluster = ipp.Cluster(profile_dir="cluster_profiles/slurm", n=16)
    rc = cluster.start_and_connect_sync()      # waits until the job runs and engines register

or ``ipcluster start --profile-dir=cluster_profiles/slurm --n=16 --daemonize``.

What happens: the controller starts on the login node, listening on an address that the
compute nodes can reach; ipyparallel writes a batch script (shown by the template below)
into this directory and submits it with ``sbatch``; inside the job, MPICH's
``mpiexec.hydra -bootstrap slurm`` (or ``srun --mpi=...``, see TUWVIZ_SLURM_MPI) starts one
engine per task as one MPI job, so the engines share ``MPI.COMM_WORLD`` and engine id i is
MPI rank i. Stopping the cluster runs ``scancel`` on the job.

The settings most sites need can be given without editing this file, as environment
variables set before starting the cluster:

==========================  ===========================================  ===============
variable                    meaning                                      default
==========================  ===========================================  ===============
TUWVIZ_SLURM_PARTITION      ``--partition`` of the engine job            (site default)
TUWVIZ_SLURM_ACCOUNT        ``--account`` to charge                      (site default)
TUWVIZ_SLURM_TIME           ``--time`` limit of the engine job           ``00:30:00``
TUWVIZ_SLURM_OPTIONS        further ``sbatch`` options                   (none)
TUWVIZ_SLURM_MPI            ``hydra``, or an ``srun --mpi=`` plugin       ``hydra`` [1]_
TUWVIZ_CONTROLLER_IP        address the controller listens on            ``*`` (all)
TUWVIZ_CONTROLLER_HOST      name/address engines use to reach it         login node name
==========================  ===========================================  ===============

.. [1] ``hydra`` where MPICH's ``mpiexec.hydra`` is next to this Python (pip's MPICH), else
   ``pmi2``. Hydra starts one proxy per node with srun and serves the ranks' PMI itself:
   SLURM 22.05's pmi2 plugin cuts MPICH's (UCX) address lines longer than 1,024 bytes, so
   ranks on several nodes failed to start or hung. A module MPI built for SLURM's PMI
   wants its plugin here, e.g. ``pmix`` for Open MPI.
"""
import os
import shlex
import sys

c = get_config()  # noqa: F821 (provided by ipyparallel when it loads a profile)

# --- site settings -------------------------------------------------------------------
PARTITION = os.environ.get("TUWVIZ_SLURM_PARTITION", "")  # e.g. "debug"
ACCOUNT = os.environ.get("TUWVIZ_SLURM_ACCOUNT", "")  # e.g. "p12345"
TIMELIMIT = os.environ.get("TUWVIZ_SLURM_TIME", "00:30:00")  # sbatch --time formats
OPTIONS = os.environ.get("TUWVIZ_SLURM_OPTIONS", "")  # e.g. "--exclusive --qos=short"
# How the engines start (footnote [1] above): MPICH's Hydra, or srun with this PMI plugin
# (pip's MPICH works with "pmi2" on one node; `--mpi=pmix` does not work with it).
_HYDRA = os.path.join(os.path.dirname(sys.executable), "mpiexec.hydra")
SLURM_MPI = os.environ.get("TUWVIZ_SLURM_MPI", "").strip() or (
    "hydra" if os.access(_HYDRA, os.X_OK) else "pmi2")

# --- controller: on this (login) node, reachable from the compute nodes -----------------
# The local profile binds everything to 127.0.0.1. Here the engines run on other machines,
# so the controller must listen on an interface they can reach. "*" means all interfaces;
# prefer the login node's address on the cluster's internal network if you know it.
# (This is passed to ipcontroller as --ip, i.e. IPController.ip.) Connections are still
# authenticated with the key in this profile's security/ directory.
c.Cluster.controller_ip = os.environ.get("TUWVIZ_CONTROLLER_IP", "*")
# The name engines use to connect, written into the connection info they receive.
if os.environ.get("TUWVIZ_CONTROLLER_HOST"):
    c.Cluster.controller_location = os.environ["TUWVIZ_CONTROLLER_HOST"]

# --- engines: one SLURM job, one engine per MPI rank ------------------------------------
c.Cluster.engine_launcher_class = "slurm"
c.Cluster.n = 4  # default number of engines (= MPI ranks); pass n=... to override
# A queued job can take a while to start: wait up to 10 minutes for engines to register.
c.Cluster.engine_timeout = 600

c.SlurmEngineSetLauncher.queue = PARTITION
c.SlurmEngineSetLauncher.account = ACCOUNT
c.SlurmEngineSetLauncher.timelimit = TIMELIMIT
# Engines are started with this Python (same venv; it must be on a shared file system)
# and with --mpi, so that each engine takes its MPI rank as its engine id.
c.SlurmEngineSetLauncher.engine_cmd = [sys.executable, "-m", "ipyparallel.engine"]
c.SlurmEngineSetLauncher.engine_args = ["--mpi"]
# Environment of the job (sbatch passes the submitting environment on, plus this):
# this venv's bin first (mpiexec, mpicc), one thread per rank.
c.SlurmEngineSetLauncher.environment = {
    "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    "OMP_NUM_THREADS": "1",
}


def _batch_template():
    """The engine job's script. {n}, {queue}, ... are filled in by ipyparallel."""
    lines = [
        "#!/bin/sh",
        "#SBATCH --job-name=tuwviz-engines-{cluster_id}",
        "#SBATCH --ntasks={n}",
        "#SBATCH --output={output_file}",
        "#SBATCH --export=ALL",
    ]
    if TIMELIMIT:
        lines.append("#SBATCH --time={timelimit}")
    if PARTITION:
        lines.append("#SBATCH --partition={queue}")
    if ACCOUNT:
        lines.append("#SBATCH --account={account}")
    # One #SBATCH line per option ("--qos short" stays together); braces escaped for the
    # template formatter.
    groups = []
    for word in shlex.split(OPTIONS):
        if word.startswith("-") or not groups:
            groups.append([word])
        else:
            groups[-1].append(word)
    for group in groups:
        option = " ".join(group).replace("{", "{{").replace("}", "}}")
        lines.append("#SBATCH " + option)
    if SLURM_MPI == "hydra":  # one srun step of proxies; Hydra places the job's tasks
        lines.append(f"{shlex.quote(_HYDRA)} -bootstrap slurm -n {{n}} {{program_and_args}}")
    else:
        lines.append(f"srun --mpi={SLURM_MPI} {{program_and_args}}")
    return "\n".join(lines) + "\n"


c.SlurmEngineSetLauncher.batch_template = _batch_template()
# Write the instantiated script into this profile's log/ (not the current directory).
_log_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log")
os.makedirs(_log_dir, exist_ok=True)
c.SlurmEngineSetLauncher.batch_file_name = os.path.join(_log_dir, "slurm_engines.sbatch")
