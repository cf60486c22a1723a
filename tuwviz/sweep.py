"""What verification and benchmark sweeps share: picking ranks, backends, run metadata.

A *backend* runs a list of cases on MPI ranks and reports each result as it arrives:
``backend(nranks, cases, on_result, on_start=None)``, where ``on_start(rank_infos)`` hears
who the ranks are before the first result.  Two exist: fresh ranks under
``mpiexec`` for every call (:func:`tuwviz.launch.run_mpiexec`, the default for batch
commands) and the engines of a running ipyparallel cluster
(:meth:`tuwviz.cluster.LocalCluster.run_cases`).
"""
from __future__ import annotations

import datetime as _dt
import subprocess
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable

from .collectives import collective
from .problems import normalize_distribution

__all__ = ["Backend", "parse_int_list", "parse_names", "roots_for", "run_metadata"]

Backend = Callable[[int, list, Callable], list]


def parse_int_list(text: str | Iterable[int]) -> list[int]:
    """Parse ``"1-4,8,16"`` into ``[1, 2, 3, 4, 8, 16]`` (lists pass through).

    Examples
    --------
    >>> parse_int_list("1-3,8")
    [1, 2, 3, 8]
    """
    if not isinstance(text, str):
        return [int(x) for x in text]
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            if sep and lo:
                out.extend(range(int(lo), int(hi) + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise ValueError(f"cannot read {part!r} as a number or range like 1-9") from None
    return out


def parse_names(text: str | Iterable[str] | None) -> list[str] | None:
    """Split ``"a,b"`` into ``["a", "b"]``; ``None``/``"all"`` mean no restriction."""
    if text is None:
        return None
    items = text.split(",") if isinstance(text, str) else list(text)
    items = [s.strip() for s in items if s.strip()]
    return None if items in ([], ["all"]) else items


def distributions(names: Iterable[str] | None, collective_name: str | None = None) -> list[str]:
    """Canonical distribution names.

    ``None`` means the distributions of the paper that studies `collective_name`
    (:func:`tuwviz.problems.default_distributions`), or all of them without a collective.
    """
    from .problems import DISTRIBUTIONS, default_distributions

    if names is None:
        return list(default_distributions(collective_name) if collective_name else DISTRIBUTIONS)
    return [normalize_distribution(n) for n in names]


def roots_for(collective_name: str, p: int, roots: Iterable[int] | None = None) -> list[int]:
    """Roots to test: 0, p/2 and p-1 for rooted collectives (just 0 otherwise).

    Raises
    ------
    ValueError
        If an explicitly given root is outside ``0..p-1``.
    """
    if not collective(collective_name).rooted:
        return [0]
    if roots is None:
        return sorted({0, p // 2, p - 1})
    roots = list(roots)
    for r in roots:
        if not 0 <= r < p:
            raise ValueError(f"root {r} out of range 0..{p - 1} for p={p}")
    return roots


def git_commit() -> str:
    """Commit of the tuwviz checkout (with ``-dirty`` if it has changes), or ``unknown``."""
    repo = Path(__file__).resolve().parent.parent
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
    from . import __version__

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
