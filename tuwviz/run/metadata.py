"""Where and how a run happened: the columns every measured row carries, and its caption.

A run's ranks each report their host, cores, MPI library and settings
(:func:`tuwviz.run.runner.rank_info`); :func:`run_metadata` sums them up into one row of
metadata, so a result says whether it was measured oversubscribed, under which MPI, at
which commit.
"""
from __future__ import annotations

import datetime as _dt
import subprocess
from collections import Counter
from typing import TYPE_CHECKING

from .. import config
from .._version import __version__

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import pandas as pd

__all__ = ["META_COLUMNS", "git_commit", "measured_where", "run_metadata"]

#: The metadata columns a caption of measured rows reads (:func:`measured_where`).
META_COLUMNS = ["ranks", "oversubscribed", "heavy_yield", "backend"]


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
        "platform": first.get("platform", ""),  # a simulated machine (SMPI), else empty
        # under SLURM (srun, the SLURM profile's engines): the job and its nodes' names
        "slurm_job": ";".join(sorted({str(i["slurm_job"]) for i in rank_infos
                                      if i.get("slurm_job")})),
        "nodes": ";".join(sorted({i["slurm_node"] for i in rank_infos if i.get("slurm_node")})),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "tuwviz": __version__,
    }


def measured_where(df: "pd.DataFrame") -> str:
    """Caption saying where the rows of `df` were measured, from their metadata columns.

    Parameters
    ----------
    df : pandas.DataFrame
        Benchmark rows with the columns :data:`META_COLUMNS`.

    Returns
    -------
    str
        E.g. ``"measured on 4 ranks, oversubscribed, MPICH heavy yield on, backend
        ipyparallel"``; several values of a column are listed separated by ``/``.

    Raises
    ------
    ValueError
        If `df` is empty or lacks a metadata column.
    """
    import pandas as pd

    if df is None or len(df) == 0:
        raise ValueError("measured_where: no rows to plot (the DataFrame is empty)")
    missing = [c for c in META_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"measured_where: DataFrame lacks column(s) {', '.join(missing)}; pass "
                         f"rows of tuwviz.experiments.bench.bench or a results CSV it wrote")
    ranks = "/".join(str(int(r)) for r in
                     sorted(set(pd.to_numeric(df["ranks"], errors="coerce").dropna())))
    over = sorted({_truth(v) for v in df["oversubscribed"]}, key=str)
    over_text = "/".join({True: "oversubscribed", False: "not oversubscribed",
                          None: "oversubscription unknown"}[v] for v in over)
    backends = "/".join(sorted({str(v) for v in df["backend"]}))
    if set(df["backend"].astype(str)) == {"smpi"}:  # simulated: no cores shared, no MPICH
        places = "/".join(sorted({str(v) for v in df.get("platform", pd.Series(["?"]))}))
        return f"simulated (SimGrid SMPI) on {ranks or '?'} ranks of platform {places}"
    yield_text = "/".join(sorted({_heavy_yield(v) for v in df["heavy_yield"]}))
    return (f"measured on {ranks or '?'} ranks, {over_text}, MPICH heavy yield {yield_text}, "
            f"backend {backends}")


def _truth(v) -> bool | None:
    text = str(v).strip().lower()
    if text in ("true", "1", "1.0", "yes"):
        return True
    if text in ("false", "0", "0.0", "no"):
        return False
    return None


def _heavy_yield(v) -> str:
    return {True: "on", False: "off", None: "default"}[_truth(v)]
