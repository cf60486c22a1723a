"""Every setting tuwviz takes from the environment, in one place, read when asked.

Nothing is read at import: a notebook or a test that sets a variable after ``import
tuwviz`` is heard at the next call.  MPI ranks inherit the driver's environment, so a
setting made in the driver holds on the ranks too.

=============================  =============================================  ==================
variable                       what it sets                                   read by
=============================  =============================================  ==================
``TUWVIZ_KERNELS``             the C sources (a student's copy of kernels_c)  :func:`kernels_dir`
``TUWVIZ_BUILD_DIR``           where compiled kernel libraries go             :func:`build_dir`
``TUWVIZ_SANITIZE``            build and run under a sanitizer (``address``)  :func:`sanitize`
``TUWVIZ_WORKSPACE``           a course workspace's kernels and table         :func:`workspace`
``TUWVIZ_CACHE``               calibrations (else ``$XDG_CACHE_HOME/tuwviz``) :func:`cache_dir`
``TUWVIZ_PROFILES``            ipyparallel cluster profiles                   :func:`profiles_dir`
``TUWVIZ_MAX_RANKS``           most MPI ranks one run may start (64)          :func:`max_ranks`
``TUWVIZ_MAX_BUFFER_BYTES``    largest receive buffer per rank (1 GiB)        :func:`max_buffer_bytes`
``TUWVIZ_MAX_MODEL_MESSAGES``  most messages a model schedule may have (5e6)  :func:`max_model_messages`
``TUWVIZ_ASSIGNMENT_QUICK``    ``1``: an assignment's small settings          :func:`assignment_quick`
``TUWVIZ_NOTEBOOK_SCALE``      ``quick``: the notebooks' small settings       :func:`at_scale`
``TUWVIZ_LAUNCH_LOG``          a file each MPI launch is counted in           :func:`launch_log`
``TUWVIZ_WATCH``               the driver's watch socket (set for the ranks)  :func:`watch_address`
``TUWVIZ_SLURM_MPI``           ``hydra`` or an ``srun --mpi=`` PMI flavour    :func:`slurm_settings`
``TUWVIZ_SLURM_PARTITION``     a new job's ``--partition`` (srun, profile)    :func:`slurm_settings`
``TUWVIZ_SLURM_ACCOUNT``       a new job's ``--account``                      :func:`slurm_settings`
``TUWVIZ_SLURM_TIME``          a new job's ``--time``                         :func:`slurm_settings`
``TUWVIZ_SLURM_OPTIONS``       a new job's further options                    :func:`slurm_settings`
``TUWVIZ_SLURM_PENDING``       seconds a new job may stay pending (300)       :func:`slurm_pending`
=============================  =============================================  ==================

Examples
--------
>>> import os
>>> os.environ["TUWVIZ_MAX_RANKS"] = "8"
>>> max_ranks()
8
>>> os.environ["TUWVIZ_MAX_RANKS"] = "eight"
>>> max_ranks()
Traceback (most recent call last):
...
ValueError: TUWVIZ_MAX_RANKS=eight is not a whole number of at least 1
>>> del os.environ["TUWVIZ_MAX_RANKS"]
>>> max_ranks()
64
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "ASSIGNMENT_QUICK",
    "DEFAULT_MAX_MODEL_MESSAGES",
    "IMPORT_ROOT",
    "KERNELS",
    "KERNELS_DIR",
    "LAUNCH_LOG",
    "PROFILES",
    "WATCH",
    "WORKSPACE",
    "NOTEBOOK_SCALE",
    "assignment_quick",
    "at_scale",
    "notebook_scale",
    "build_dir",
    "cache_dir",
    "kernels_dir",
    "launch_log",
    "max_buffer_bytes",
    "max_model_messages",
    "max_ranks",
    "profiles_dir",
    "sanitize",
    "slurm_pending",
    "slurm_settings",
    "watch_address",
    "workspace",
]

#: The repository (or installed tree) tuwviz runs from.
_ROOT = Path(__file__).resolve().parent.parent
#: The folder holding the ``tuwviz`` package: put first on a child process's PYTHONPATH,
#: ranks, engines and the reaper import this very tuwviz, installed or not.
IMPORT_ROOT = str(_ROOT)
#: The C sources shipped with tuwviz.
KERNELS_DIR = _ROOT / "kernels_c"

# The variables other modules name (to set them for child processes, or in messages).
KERNELS = "TUWVIZ_KERNELS"
WORKSPACE = "TUWVIZ_WORKSPACE"
ASSIGNMENT_QUICK = "TUWVIZ_ASSIGNMENT_QUICK"
NOTEBOOK_SCALE = "TUWVIZ_NOTEBOOK_SCALE"
LAUNCH_LOG = "TUWVIZ_LAUNCH_LOG"
WATCH = "TUWVIZ_WATCH"
PROFILES = "TUWVIZ_PROFILES"

#: :func:`max_model_messages` without ``TUWVIZ_MAX_MODEL_MESSAGES``.
DEFAULT_MAX_MODEL_MESSAGES = 5_000_000


def _text(name: str) -> str:
    return os.environ.get(name, "").strip()


def _count(name: str, default: int) -> int:
    value = _text(name)
    if not value:
        return default
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{name}={value} is not a whole number of at least 1")
    return n


def kernels_dir() -> Path:
    """The C sources: ``TUWVIZ_KERNELS`` if set (e.g. a student's own copy), else
    :data:`KERNELS_DIR`."""
    return Path(_text(KERNELS) or KERNELS_DIR)


def build_dir() -> Path:
    """Where kernel libraries are compiled to: ``TUWVIZ_BUILD_DIR``, else ``build/kernels``
    beside the shipped sources."""
    return Path(_text("TUWVIZ_BUILD_DIR") or _ROOT / "build" / "kernels")


def sanitize() -> str:
    """The sanitizer asked for by ``TUWVIZ_SANITIZE`` ("" for none); :func:`tuwviz.kernels.sanitizer`
    checks it."""
    return _text("TUWVIZ_SANITIZE")


def workspace() -> str:
    """The course workspace ``TUWVIZ_WORKSPACE`` names ("" for none), unchecked:
    :func:`tuwviz.table.workspace_dir` checks it."""
    return _text(WORKSPACE)


def cache_dir() -> Path:
    """tuwviz's cache: ``TUWVIZ_CACHE``, else ``$XDG_CACHE_HOME/tuwviz`` (``~/.cache/tuwviz``)."""
    root = _text("TUWVIZ_CACHE")
    if root:
        return Path(root)
    return Path(_text("XDG_CACHE_HOME") or Path.home() / ".cache") / "tuwviz"


def profiles_dir() -> Path:
    """The ipyparallel profiles (``local``, ``slurm``): ``TUWVIZ_PROFILES``, else the
    repository's ``cluster_profiles``."""
    return Path(_text(PROFILES) or _ROOT / "cluster_profiles")


def max_ranks() -> int:
    """Most MPI ranks one run may start on this machine: ``TUWVIZ_MAX_RANKS``, else 64."""
    return _count("TUWVIZ_MAX_RANKS", 64)


def max_buffer_bytes() -> int:
    """Largest receive buffer in bytes one run on MPI ranks may allocate per rank:
    ``TUWVIZ_MAX_BUFFER_BYTES``, else 1 GiB.  The model has no such limit, only
    :func:`max_model_messages`."""
    return _count("TUWVIZ_MAX_BUFFER_BYTES", 2**30)


def max_model_messages() -> int:
    """Most messages a model schedule may have before it is built:
    ``TUWVIZ_MAX_MODEL_MESSAGES``, else about 5 million (some tens of seconds and a few GB;
    ``gatherv/tuw`` at p = 10^6 needs about 3 million, ``benchmarks/model_speed.py``)."""
    return _count("TUWVIZ_MAX_MODEL_MESSAGES", DEFAULT_MAX_MODEL_MESSAGES)


def assignment_quick() -> bool:
    """True while ``TUWVIZ_ASSIGNMENT_QUICK=1``: assignments use their small settings."""
    return _text(ASSIGNMENT_QUICK) == "1"


def notebook_scale() -> str:
    """``"full"`` (the default: the notebooks' own sizes, the papers' in their sections at
    the paper's scale) or ``"quick"`` (``TUWVIZ_NOTEBOOK_SCALE=quick``: small, as the quick
    test tier runs them)."""
    value = _text(NOTEBOOK_SCALE) or "full"
    if value not in ("full", "quick"):
        raise ValueError(f"{NOTEBOOK_SCALE}={value} is neither 'full' nor 'quick'")
    return value


def at_scale(full, quick, what: str = "p"):
    """`full`, a notebook's size of `what`, unless :func:`notebook_scale` is ``"quick"``:
    then `quick`, and a line saying so is printed, so that no output passes a quick run's
    number for the full one.

    >>> import os
    >>> at_scale(1152, quick=64)
    1152
    >>> os.environ["TUWVIZ_NOTEBOOK_SCALE"] = "quick"
    >>> at_scale(1152, quick=64)
    quick scale (TUWVIZ_NOTEBOOK_SCALE=quick): p = 64 instead of 1152
    64
    >>> del os.environ["TUWVIZ_NOTEBOOK_SCALE"]
    """
    if notebook_scale() == "full":
        return full
    print(f"quick scale ({NOTEBOOK_SCALE}=quick): {what} = {quick} instead of {full}")
    return quick


def launch_log() -> str:
    """The file each MPI launch is counted in ("" for none; the test suite sets it)."""
    return _text(LAUNCH_LOG)


def watch_address() -> str:
    """The driver's watch socket a rank connects to ("" outside a watched run)."""
    return _text(WATCH)


def slurm_settings(env: dict | None = None) -> dict[str, str]:
    """The SLURM settings of runs started under SLURM (and of the SLURM profile): ``mpi``
    (how ranks start: ``hydra``, or an ``srun --mpi=`` plugin such as ``pmi2``; "" when
    unset, :func:`tuwviz.run.slurm.mpi_flavour` then chooses), ``partition``, ``account``,
    ``time``, ``options`` ("" when unset), from `env` (default: this process's environment).

    >>> slurm_settings({"TUWVIZ_SLURM_PARTITION": " short "})["partition"], slurm_settings({})["mpi"]
    ('short', '')
    """
    env = os.environ if env is None else env
    return {key: env.get(f"TUWVIZ_SLURM_{key.upper()}", "").strip()
            for key in ("mpi", "partition", "account", "time", "options")}


def slurm_pending() -> int:
    """Seconds a job that ``srun`` asks for may stay pending before the run gives up (300)."""
    return _count("TUWVIZ_SLURM_PENDING", 300)
