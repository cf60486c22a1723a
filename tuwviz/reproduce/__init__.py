"""``tuwviz reproduce``: every table, figure and headline of a paper, beside the paper's own
numbers, with a verdict per claim.

:func:`reproduce` runs a paper's claims (:mod:`tuwviz.reproduce.papers`) one by one; each
gives a :class:`~tuwviz.reproduce.claims.Finding` (labelled values from the paper, the
paper's formulas, the model, SimGrid's SMPI on the paper's platform and this machine, and a
verdict with its reason), saved the moment it is done.  The report is one HTML page
(offline) and two tidy CSVs (:mod:`tuwviz.reproduce.store`).  Rerunning reuses the
findings whose inputs did not change; an interrupted run keeps the finished ones and says
which did not run.

Scales: ``quick`` runs SMPI and this machine at smaller p with fewer repetitions (said so on
the page and in each finding), the model and formulas at the papers' sizes; ``paper`` uses
the papers' sizes wherever the backend allows.

Examples
--------
>>> [c.id for c in claims_of("allgatherv")][:2]
['headline', 'ring_broadcast_vs_spike']
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .._version import __version__
from ..config import KERNELS_DIR
from ..errors import TuwvizError
from ..run.smpi import simgrid_version
from .claims import DERIVED, NOT_HERE, VERDICTS, Claim, Finding
from .page import render
from .papers import MODULES
from .papers._common import latencies_times, read_a_platform
from .published import PAPERS, Published, published
from .store import Store, outcome, source_digest

__all__ = ["PAPERS", "SCALES", "VARY", "Context", "Reproduction", "available", "claims_of",
           "reproduce", "source_state"]

#: The scales, with what they mean.
SCALES = {"quick": "smaller p and fewer repetitions for SMPI and this machine (minutes)",
          "paper": "the papers' sizes wherever the backend allows (hours)"}

#: The factors a claim that reads a platform is run again with: its assumed latencies and
#: per-message overhead halved and doubled, the bandwidths unchanged (every number times
#: one factor would only scale every time).
VARY = (0.5, 2.0)


@dataclass
class Context:
    """What a claim's function gets: the paper's data, the scale, where to write rows."""

    paper: Published
    scale: str
    store: Store
    progress: bool = True
    #: Simulations this run has made, by rows file and arguments: claims that read the same
    #: simulation (the same figure's panels, say) run it once
    #: (:func:`tuwviz.reproduce.papers._common.smpi_bench`).
    runs: dict = field(default_factory=dict, repr=False, compare=False)

    def pick(self, quick, paper):
        """`quick` at the quick scale, else `paper`."""
        return quick if self.scale == "quick" else paper

    @property
    def dir(self) -> Path:
        """The paper's folder for raw rows (bench CSVs)."""
        return self.store.paper_dir(self.paper.key)

    def claim(self, cid: str) -> dict:
        """The claim's entry in the paper's data file."""
        return self.paper.claim(cid)

    def say(self, msg: str) -> None:
        """A progress line on stderr (if progress is on)."""
        if self.progress:
            print(msg, file=sys.stderr, flush=True)


@dataclass
class Reproduction:
    """The outcome of :func:`reproduce`: one dict per claim and where the files are."""

    results: list[dict]
    report: Path
    summary_csv: Path
    values_csv: Path
    scale: str
    interrupted: bool = False

    @property
    def failed(self) -> list[str]:
        """``paper/claim`` of every claim that failed."""
        return [f"{r['paper']}/{r['claim']}" for r in self.results if outcome(r) == "failed"]

    def counts(self, paper: str | None = None) -> dict[str, int]:
        """Verdict counts (plus ``failed``, ``not run``), for one paper or all."""
        out = {v: 0 for v in VERDICTS} | {"failed": 0, "not run": 0}
        for r in self.results:
            if paper is None or r["paper"] == paper:
                out[outcome(r)] += 1
        return out

    def verdict(self, paper: str, claim: str) -> str:
        """One claim's verdict (or ``failed`` / ``not run``)."""
        for r in self.results:
            if r["paper"] == paper and r["claim"] == claim:
                return outcome(r)
        raise KeyError(f"{paper}/{claim}")

    def table(self) -> list[dict]:
        """The summary as rows: paper, claim, verdict, reason."""
        return [{"paper": r["paper"], "claim": r["claim"],
                 "verdict": outcome(r),
                 "reason": r["finding"].reason if r["finding"] else r.get("error", "")}
                for r in self.results]


def available() -> list[str]:
    """The papers whose claims are written (a data file and a checking module)."""
    return [p for p in PAPERS if p in MODULES]


def claims_of(paper: str, data: Published | None = None) -> list[Claim]:
    """The paper's claims in data-file order, each with its checking function.

    Raises
    ------
    TuwvizError
        For an unknown paper, or a data file and module that do not match (a claim without
        a function or a function without a claim).
    """
    if paper not in PAPERS:
        raise TuwvizError(f"unknown paper {paper!r}; valid: {', '.join(PAPERS)}, all")
    if paper not in MODULES:
        raise TuwvizError(f"paper {paper!r}: its claims are not written yet; available: "
                          f"{', '.join(available())}")
    data = data or published(paper)
    mod = MODULES[paper]
    # the module's own functions only (imported helpers such as judge_range are not claims)
    fns = {kind: {name[len(kind) + 1:]: fn for name, fn in vars(mod).items()
                  if name.startswith(kind + "_") and callable(fn)
                  and getattr(fn, "__module__", None) == mod.__name__}
           for kind in ("claim", "measure", "judge")}
    unpaired = set(fns["measure"]) ^ set(fns["judge"])
    if unpaired:
        raise TuwvizError(f"{mod.__name__}: measure_ and judge_ come in pairs; alone: "
                          f"{sorted(unpaired)}")
    ids, have = data.claims(), set(fns["claim"]) | set(fns["measure"])
    if set(ids) != have:
        raise TuwvizError(f"{data.path.name} and {mod.__name__} disagree: claims without a "
                          f"function: {sorted(set(ids) - have)}; functions without a "
                          f"claim: {sorted(have - set(ids))}")
    return [Claim(paper, cid, fns["measure"][cid], fns["judge"][cid]) if cid in fns["judge"]
            else Claim(paper, cid, fns["claim"][cid]) for cid in ids]


def source_state() -> dict[str, str]:
    """What every finding runs through besides its published data: a digest of the
    package's sources (the judging code, the model, the platforms, ``problems.py``) and
    ``kernels_c/``, SimGrid's version and tuwviz's.  A saved finding is reused only while
    all of it is unchanged."""
    try:
        simgrid = simgrid_version()
    except (TuwvizError, OSError, subprocess.SubprocessError):
        simgrid = "not installed"
    return {"sources": source_digest([Path(__file__).resolve().parent.parent, KERNELS_DIR]),
            "simgrid": simgrid, "tuwviz": __version__}


def reproduce(papers: str | list[str] = "all", scale: str = "quick",
              out: str | os.PathLike = "reproduce", *, only: list[str] | None = None,
              reuse: bool = True, progress: bool = True,
              data: dict[str, str | os.PathLike] | None = None,
              vary: bool = True) -> Reproduction:
    """Run the claims of `papers`, write the report and CSVs under `out`.

    Parameters
    ----------
    papers : str or list of str
        Keys of :data:`PAPERS`, or ``"all"`` (every paper whose claims are written).
    scale : {"quick", "paper"}
        See :data:`SCALES`.
    out : path
        Output folder (created); ``report.html``, ``summary.csv``, ``values.csv`` and one
        folder per paper.
    only : list of str, optional
        Claim ids to run (others are left out of the report).
    reuse : bool
        Reuse findings of an earlier run whose inputs are unchanged (default).
    progress : bool
        Progress lines on stderr.
    data : dict, optional
        Paper -> data file to use instead of the package's (a test's altered copy).
    vary : bool
        Judge every claim that reads a platform again with the platform's latencies and
        overhead times each factor of :data:`VARY` (the finding's ``varied``); default on.
        Derivations and claims not reproducible here are not varied.

    Returns
    -------
    Reproduction

    Raises
    ------
    TuwvizError
        For an unknown paper, scale or claim id (before anything runs).
    KeyboardInterrupt
        After writing the report of the claims finished so far.
    """
    if scale not in SCALES:
        raise TuwvizError(f"unknown scale {scale!r}; valid: {', '.join(SCALES)}")
    names = available() if papers == "all" else [papers] if isinstance(papers, str) else list(papers)
    plan = [(pub, claims_of(paper, pub)) for paper in names
            for pub in [published(paper, (data or {}).get(paper))]]
    unchecked = {pub.key: pub.unchecked() for pub, _ in plan}  # malformed: fails before a run
    if only:
        unknown = set(only) - {c.id for _, cl in plan for c in cl}
        if unknown:
            raise TuwvizError(f"unknown claim(s) {', '.join(sorted(unknown))}; claims: "
                              + "; ".join(f"{pub.key}: {', '.join(c.id for c in cl)}"
                                          for pub, cl in plan))
        plan = [(pub, [c for c in cl if c.id in only]) for pub, cl in plan]
    store = Store(out)
    total = sum(len(cl) for _, cl in plan)
    results, interrupted, done = [], False, 0
    state = source_state()
    for pub, cl in plan:
        ctx = Context(pub, scale, store, progress)
        for c in cl:
            entry = pub.claim(c.id)
            r = {"paper": pub.key, "paper_title": pub.title, "claim": c.id,
                 "title": entry.get("title", c.id), "source": entry.get("source", ""),
                 "quote": entry.get("quote", ""), "judge": entry.get("judge", {}),
                 "scale": scale, "finding": None,
                 "wall_s": 0.0, "status": "not run"}
            results.append(r)
            if interrupted:
                r["error"] = "the run was interrupted before this claim"
                continue
            done += 1
            key = ({"scale": scale, "data": pub.digest(c.id), "vary": list(VARY) if vary else []}
                   | state)
            found = store.load(pub.key, c.id, key) if reuse else None
            if found is not None:
                r.update(finding=found[0], wall_s=found[1], made=found[2], reused=True)
                ctx.say(f"[{done}/{total}] {pub.key}/{c.id}: {found[0].verdict} (reused)")
                continue
            t0 = time.monotonic()
            try:
                ctx.say(f"[{done}/{total}] {pub.key}/{c.id} ...")
                with latencies_times(1):
                    finding, evidence = c.run(ctx)
                if not isinstance(finding, Finding):
                    raise TypeError(f"{c.id} returned {type(finding).__name__}, not a Finding")
                # a derivation judges algebra, not the assumed numbers
                if (vary and c.judge is not None and read_a_platform()
                        and finding.verdict not in (DERIVED, NOT_HERE)):
                    for f in VARY:
                        ctx.say(f"    {finding.verdict}; again with the assumed latencies and "
                                f"overhead x{f:g} ...")
                        try:  # a variation that fails must not lose the finding itself
                            with latencies_times(f):
                                finding.varied[f"{f:g}"] = c.judge(c.measure(ctx),
                                                                   entry).verdict
                        except Exception as exc:
                            finding.varied[f"{f:g}"] = "failed"
                            ctx.say(f"    failed: {type(exc).__name__}: {exc}")
                wall = time.monotonic() - t0
                r["made"] = store.save(pub.key, c.id, key, finding, wall, evidence)
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM: keep what is done, report it
                interrupted = True
                r["error"] = "interrupted while running"
                continue
            except Exception as exc:  # one claim's failure must not lose the others
                r.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                         wall_s=time.monotonic() - t0)
                ctx.say(f"    failed: {type(exc).__name__}: {exc}")
                continue
            r.update(finding=finding, wall_s=wall)
            ctx.say(f"    {finding.verdict} ({wall:.1f} s)")
    summary, values = store.write_csvs(results)
    report = store.root / "report.html"
    missing = [p for p in PAPERS if p not in MODULES]
    note = (f"Not covered yet: {', '.join(missing)}." if papers == "all" and missing else "")
    report.write_text(render(results, scale, note, state, unchecked), encoding="utf-8")
    rep = Reproduction(results, report, summary, values, scale, interrupted)
    if interrupted:
        raise KeyboardInterrupt(f"finished claims are saved; their report: {report}")
    return rep
