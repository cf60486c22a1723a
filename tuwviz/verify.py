"""Check every registered kernel against the MPI library's own collective.

For each case the same random input goes through the library's collective (called by
mpi4py) and through the kernel; every rank that holds output compares the two receive
buffers byte for byte (receive buffers start filled with a sentinel, so writing where a
kernel should not also shows).  The sweep covers every block-size distribution of the
collective's paper, roots 0, p/2 and p-1, every p asked for, b = 0 (all blocks empty),
and the parameter settings of :func:`tuwviz.params.verify_variants` (e.g. several block
sizes of the pipelined ring) by default.

Examples
--------
>>> report = verify(["gatherv"], ["linear"], ps=range(1, 4), dists=["random"])
>>> report.ok, len(report.results)
(True, 18)
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from . import kernels
from .collectives import COLLECTIVES, collective
from .launch import check_ranks, run_mpiexec
from .params import label, verify_variants
from .problems import make_problem
from .sweep import Backend, distributions, roots_for

__all__ = ["VerifyReport", "verify", "verify_cases", "DEFAULT_B"]

#: Average block sizes verified by default: all-empty blocks, single elements, and an odd
#: size that is no power of two.
DEFAULT_B = (0, 1, 17)


def _selected(collectives, algorithms) -> list[tuple[str, str]]:
    """(collective, algorithm) pairs to verify; unknown names raise with the valid ones."""
    colls = [collective(c).name for c in collectives] if collectives else list(COLLECTIVES)
    pairs = []
    for c in colls:
        registered = [a.name for a in kernels.algorithms(c)]
        wanted = registered if algorithms is None else [a for a in algorithms if a in registered]
        pairs.extend((c, a) for a in wanted)
    if algorithms:
        everywhere = {a for c in colls for a in (x.name for x in kernels.algorithms(c))}
        unknown = [a for a in algorithms if a not in everywhere]
        if unknown:
            raise ValueError(
                f"unknown algorithm {unknown[0]!r} for {', '.join(colls)}; valid algorithms: "
                f"{', '.join(sorted(everywhere))}"
            )
    return pairs


def verify_cases(
    collectives: Iterable[str] | None = None,
    algorithms: Iterable[str] | None = None,
    ps: Iterable[int] = range(1, 10),
    dists: Iterable[str] | None = None,
    bs: Iterable[int] = DEFAULT_B,
    roots: Iterable[int] | None = None,
    seed: int = 0,
) -> list[dict]:
    """The cases a verification sweep runs (see :func:`verify` for the parameters)."""
    algorithms = list(algorithms) if algorithms else None
    cases = []
    for p in sorted(set(ps)):
        if p < 1:
            raise ValueError(f"number of processes must be at least 1, got p={p}")
        for coll, alg in _selected(collectives, algorithms):
            for dist in distributions(dists, coll):
                for b in bs:
                    for root in roots_for(coll, p, roots):
                        pr = make_problem(coll, p, dist, b, root=root, seed=seed)
                        for params in verify_variants(coll, alg, p):
                            cases.append({"mode": "verify", "problem": pr.to_dict(),
                                          "algorithm": alg, "data_seed": seed, "params": params})
    return cases


@dataclass
class VerifyReport:
    """Outcome of a verification sweep: one record per case.

    Each record has ``collective, algorithm, p, root, distribution, b, params`` (the
    tuning parameters as text, :func:`tuwviz.params.label`), ``ok`` and
    ``mismatches``: for each rank whose output differs, its ``rank``, the first differing
    byte ``offset``, the ``expected`` and ``got`` byte values, and ``differing_bytes``.
    """

    results: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True if every case matched the library."""
        return all(r["ok"] for r in self.results)

    def failures(self) -> list[dict]:
        """Records of the cases that did not match."""
        return [r for r in self.results if not r["ok"]]

    def summary(self) -> list[dict]:
        """One row per (collective, algorithm): cases, passed, failed, p range."""
        groups: dict[tuple, list] = defaultdict(list)
        for r in self.results:
            groups[(r["collective"], r["algorithm"])].append(r)
        rows = []
        for (c, a), rs in groups.items():
            ps = sorted({r["p"] for r in rs})
            passed = sum(r["ok"] for r in rs)
            rows.append({"collective": c, "algorithm": a, "cases": len(rs), "passed": passed,
                         "failed": len(rs) - passed, "p": f"{ps[0]}-{ps[-1]}"})
        return rows

    def table(self) -> str:
        """The summary as a text table, followed by one line per failed case."""
        from .report import text_table

        lines = [text_table(self.summary())]
        for r in self.failures():
            lines.append("FAIL " + describe_failure(r))
        verdict = "all cases match the MPI library" if self.ok else f"{len(self.failures())} cases FAILED"
        lines.append(f"{len(self.results)} cases: {verdict}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"ok": self.ok, "summary": self.summary(), "failures": self.failures(),
                "cases": len(self.results)}


def describe_failure(r: dict) -> str:
    """One line naming algorithm, p, root, distribution, rank and first differing byte."""
    where = (f"{r['collective']}/{r['algorithm']} p={r['p']} root={r['root']} "
             f"dist={r['distribution']} b={r['b']}")
    if r.get("params"):
        where += f" {r['params']}"
    parts = [
        f"rank {m['rank']}: first differing byte at offset {m['offset']} "
        f"(expected 0x{m['expected']:02x}, got 0x{m['got']:02x}; {m['differing_bytes']} bytes differ)"
        for m in r["mismatches"]
    ]
    return where + ": " + "; ".join(parts)


def verify(
    collectives: Iterable[str] | None = None,
    algorithms: Iterable[str] | None = None,
    ps: Iterable[int] = range(1, 10),
    dists: Iterable[str] | None = None,
    bs: Iterable[int] = DEFAULT_B,
    roots: Iterable[int] | None = None,
    seed: int = 0,
    backend: Backend | None = None,
    progress: bool = False,
) -> VerifyReport:
    """Compare kernels with the MPI library's collectives on real MPI ranks.

    Parameters
    ----------
    collectives : iterable of str, optional
        Collectives to check (default: all).
    algorithms : iterable of str, optional
        Algorithm names (default: every registered one, ``native`` included).
    ps : iterable of int
        Process counts.
    dists : iterable of str, optional
        Block-size distributions (default: all).
    bs : iterable of int
        Average block sizes ``b``.
    roots : iterable of int, optional
        Roots (default: 0, p/2 and p-1).
    seed : int
        Seed of the random distributions and data.
    backend : callable, optional
        Where to run (default: fresh ranks under mpiexec, one run with ``max(ps)`` ranks).
    progress : bool
        Show a progress bar.

    Returns
    -------
    VerifyReport
    """
    cases = verify_cases(collectives, algorithms, ps, dists, bs, roots, seed)
    report = VerifyReport()
    if not cases:
        return report
    if backend is None:
        check_ranks(max(c["problem"]["p"] for c in cases))
    from tqdm.auto import tqdm

    bar = tqdm(total=len(cases), desc="verify", disable=not progress, unit="case")

    def on_result(i, case, result):
        pr = case["problem"]
        report.results.append({
            "collective": pr["collective"], "algorithm": case["algorithm"], "p": pr["p"],
            "root": pr["root"], "distribution": pr["distribution"], "b": pr["b"],
            "params": label(case.get("params")), **result,
        })
        bar.update()

    try:
        (backend or run_mpiexec)(max(c["problem"]["p"] for c in cases), cases, on_result)
    finally:
        bar.close()
    return report
