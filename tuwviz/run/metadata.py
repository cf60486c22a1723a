"""Where and how a run happened: the columns every measured row carries.

A run's ranks each report their host, cores, MPI library and settings
(:func:`tuwviz.run.runner.rank_info`); :func:`run_metadata` sums them up into one row of
metadata, so a result says whether it was measured oversubscribed, under which MPI, at
which commit.
"""
from __future__ import annotations

import datetime as _dt
import subprocess
from collections import Counter

from .. import config
from .._version import __version__

__all__ = ["git_commit", "run_metadata"]


def git_commit() -> str:
    """Commit of the tuwviz checkout (with ``-dirty`` if it has changes), or ``unknown``."""
    repo = config.KERNELS_DIR.parent
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def run_metadata(rank_infos: list[dict], backend: str) -> dict:
    """Where and how a run happened, from the ranks' own reports (one dict per rank).

    ``oversubscribed`` is true when some host runs more ranks than it has cores; the
    MPICH heavy-yield setting is recorded because it changes latencies severalfold.
    """
    per_host = Counter(info["host"] for info in rank_infos)
    cores = {info["host"]: info["cores"] for info in rank_infos}
    first = rank_infos[0] if rank_infos else {}
    return {
        "mpi_library": first.get("mpi_library", ""),
        "mpi4py": first.get("mpi4py", ""),
        "ranks": len(rank_infos),
        "hosts": ";".join(sorted(per_host)),
        "oversubscribed": any(n > (cores[h] or 1) for h, n in per_host.items()),
        "heavy_yield": first.get("heavy_yield", ""),
        "backend": backend,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "tuwviz": __version__,
    }
