"""Grade a workspace: build the student's kernels, then check each against the MPI library.

``tuwviz grade DIR`` (or :func:`grade`) takes a workspace (``tuwviz assignment new``) and
grades every row its ``algorithms.toml`` adds, in stages:

1. **build** - the workspace's C files compiled with tuwviz's kernels; a compile error is
   the compiler's ``file:line:`` messages, a function whose signature is not its
   collective's is one too, and a row naming a function no file defines is named;
2. **correctness** - each row against the library's collective on real MPI ranks
   (:func:`grade_cases`): many p, roots 0, 2 and p-1, block sizes 0, 1 and large, ``int``
   and ``double``, and every datatype pair of :mod:`tuwviz.run.typepairs` (a vector with
   gaps, other types at the root, ``MPI_IN_PLACE``), byte for byte.  A mismatch says p,
   root, datatypes, the rank and the first wrong byte; a kernel that hangs is stopped
   after `stall_limit` seconds without progress and the case named; a crash names the
   rank and the signal.  Each row runs on its own, so one row's hang does not stop the
   next row's grading;
3. **optimality** - for a gather or scatter that is correct, its messages recorded for
   p = :data:`OPTIMALITY_PS`, roots 0, 2, p-1 (:mod:`tuwviz.analysis.optimality`): rounds against
   ``ceil(log2 p)``, the root's bytes and the most any process sends against the other
   processes' blocks ``(p-1)/p m``, and the round in which the last process starts;
   one check each, with the first failing case's numbers;
4. **performance** (with ``performance=True``; information, not a pass mark) - each correct
   rooted kernel timed against the library for roots 0 and 2 and blocks of 1 B to 1 MB
   (:mod:`tuwviz.analysis.performance`): ``DIR/grade/performance_COLL_NAME.csv|_samples.csv|.tex|
   .html`` (box plots of the relative runtime, absolute times, LaTeX rows);
5. **memory** - a smaller sweep (:data:`MEMORY_PS`, :data:`MEMORY_BS`) again, the kernels
   built with AddressSanitizer: a write or read outside a buffer is reported with the
   sanitizer's ``file:line`` lines.

The results are written as they come to ``DIR/grade/result.json`` and
``DIR/grade/result.csv`` (one line per check), so a teacher can collect them.
:func:`grade_folder` (``tuwviz grade FOLDER``) grades every workspace in a folder of
submissions, each in its own process, and writes ``FOLDER/grades.csv``.

Examples
--------
p = 3: roots 0 and 2 (= p-1), each with 2 types x 2 block sizes and the in-place pair

>>> len(grade_cases("gather", "mine", ps=[3], bs=[0, 2], pairs=["same", "in-place"]))
10
>>> sorted({(c["problem"]["root"], c["problem"]["datatype"])
...         for c in grade_cases("gather", "mine", ps=[5], bs=[2], pairs=["same"])})
[(0, 'double'), (0, 'int'), (2, 'double'), (2, 'int'), (4, 'double'), (4, 'int')]
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..collectives import collective
from ..errors import KernelBuildError, RankFailure, TuwvizError
from ..run.launch import mpiexec_backend
from ..analysis.performance import (PERF_P, PERF_REPS, PERF_ROOTS, PERF_SIZES, performance,
                                     stem as performance_stem)
from ..problems import make_problem
from ..report import ranges, size_label
from ..table import WORKSPACE_VAR, TableError, table_path, workspace_rows
from ..run.typepairs import NULL_PAIRS, pairs_for
from ..viz.plots import save_performance
from ..experiments.verify import describe_group, run_verify, verify_case
from .. import kernels
from ..run import reaper
from ..analysis.optimality import optimality, schedule_from_trace
from ..run.trace import trace_cases

__all__ = ["GRADE_BS", "GRADE_PS", "MEMORY_BS", "MEMORY_PS", "GradeReport", "grade",
           "grade_cases", "grade_folder", "submissions"]

#: Process counts graded: every p up to 17, then larger ones, powers of two and not.
GRADE_PS = (*range(1, 18), 24, 32, 33)
#: Block sizes in elements: empty, one element, large (40 KB of int).
GRADE_BS = (0, 1, 10_000)
#: Element types of the one-type cases.
GRADE_DATATYPES = ("int", "double")
#: Process counts and block sizes of the AddressSanitizer run.
MEMORY_PS = (1, 2, 3, 4, 5, 8, 9)
MEMORY_BS = (0, 1, 100)
#: Process counts and block size (elements) of the optimality stage, traced.
OPTIMALITY_PS = (2, 3, 4, 5, 7, 8, 9, 12, 16, 17)
OPTIMALITY_B = 100
#: Collectives whose optimality is measured (:mod:`tuwviz.analysis.optimality`).
OPTIMALITY_COLLECTIVES = ("gather", "gatherv", "scatter", "scatterv")
#: The optimality stage's checks: property of :class:`tuwviz.analysis.optimality.Optimality`, words.
OPTIMALITY_CHECKS = {
    "rounds": "round-optimal: at most ceil(log2 p) rounds",
    "root_bytes": "bandwidth-optimal: the root moves only the other processes' blocks",
    "max_sent": "no process sends more than the other processes' blocks",
    "latency": "no algorithmic latency: every process starts within ceil(log2 p) rounds",
}
#: Seconds without progress after which a kernel is stopped as hung (a deadlock).
STALL_LIMIT = 60.0
#: Where in the workspace the results go.
RESULT_DIR = "grade"


def grade_roots(p: int) -> list[int]:
    """Roots 0, 2 and p-1 (the course report's root 0 and root 2, and the last rank).

    >>> grade_roots(1), grade_roots(2), grade_roots(8)
    ([0], [0, 1], [0, 2, 7])
    """
    return sorted({0, min(2, p - 1), p - 1})


def grade_cases(coll: str, algorithm: str, ps: Iterable[int] = GRADE_PS,
                bs: Iterable[int] = GRADE_BS, pairs: Iterable[str] | None = None) -> list[dict]:
    """The correctness cases of one row: verify cases (:func:`tuwviz.experiments.verify.run_verify`).

    For every p, root (:func:`grade_roots`), element type of :data:`GRADE_DATATYPES` and
    b: one case with one datatype on both sides; then, per p and root, one case per other
    datatype pair that applies (`pairs`, default all), at the largest b (the null pairs,
    the zero-size call with NULL buffers, at b = 0).
    """
    rooted = collective(coll).rooted
    bs = list(bs)
    wanted = [t for t in pairs_for(coll) if pairs is None or t in set(pairs)]
    cases = []
    for p in ps:
        for root in grade_roots(p) if rooted else [0]:
            if "same" in wanted:
                for dtype in GRADE_DATATYPES:
                    for b in bs:
                        pr = make_problem(coll, p, "same", b, root=root, datatype=dtype)
                        cases.append(verify_case(pr, algorithm, seed=p))
            for pair in (t for t in wanted if t != "same"):
                b = 0 if pair in NULL_PAIRS else max(bs)  # the null pairs: a zero-size call
                pr = make_problem(coll, p, "same", b, root=root, datatype="int")
                cases.append(verify_case(pr, algorithm, seed=p, types=pair))
    return cases


@dataclass
class GradeReport:
    """The checks of one workspace, in the order they ran.

    Each check is a dict: ``stage`` (``build``, ``correctness``), ``collective`` and
    ``algorithm`` (empty for the build), ``check`` (what was checked), ``ok``, ``detail``
    (what went wrong, in words; or what was covered) and ``cases`` (how many ran).
    """

    workspace: Path
    checks: list[dict] = field(default_factory=list)
    #: One record per traced case of the optimality stage (:class:`tuwviz.analysis.optimality.Optimality`
    #: fields, ``collective``, ``algorithm`` and ``failed``).
    optimality: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c["ok"] for c in self.checks)

    def passed(self, stage: str, collective: str | None = None) -> bool:
        """Whether `stage` ran (for `collective`, if given) and every check of it passed:
        what an autograder cell asserts, one stage and collective per mark."""
        checks = [c for c in self.checks if c["stage"] == stage
                  and (collective is None or c["collective"] == collective)]
        return bool(checks) and all(c["ok"] for c in checks)

    def add(self, stage: str, check: str, ok: bool, detail: str, coll: str = "",
            algorithm: str = "", cases: int = 0) -> None:
        self.checks.append({"stage": stage, "collective": coll, "algorithm": algorithm,
                            "check": check, "ok": ok, "detail": detail, "cases": cases})
        self.write()

    def table(self) -> str:
        """The checks as lines a student reads: PASS/FAIL, what, and the details."""
        lines = [f"grading {self.workspace}"]
        for c in self.checks:
            what = f"{c['collective']}/{c['algorithm']} " if c["collective"] else ""
            lines.append(f"{'PASS' if c['ok'] else 'FAIL'}  {c['stage']}: {what}{c['check']}")
            lines += ["      " + line for line in c["detail"].splitlines()]
        verdict = "all checks passed" if self.ok else \
            f"{sum(not c['ok'] for c in self.checks)} of {len(self.checks)} checks FAILED"
        lines.append(f"{verdict}; results in {self.result_dir}")
        return "\n".join(lines)

    @property
    def result_dir(self) -> Path:
        return self.workspace / RESULT_DIR

    def to_json(self) -> dict:
        return {"workspace": str(self.workspace), "ok": self.ok, "checks": self.checks,
                "optimality": self.optimality}

    def write(self) -> None:
        """``result.json`` and ``result.csv`` in the workspace's ``grade/`` (replaced)."""
        out = self.result_dir
        out.mkdir(exist_ok=True)
        tmp = out / "result.json.tmp"
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, out / "result.json")
        tmp = out / "result.csv.tmp"
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, ["workspace", "stage", "collective", "algorithm", "check",
                                   "ok", "cases", "detail"])
            w.writeheader()
            for c in self.checks:
                w.writerow({"workspace": str(self.workspace), **c})
        os.replace(tmp, out / "result.csv")
        if self.optimality:
            tmp = out / "optimality.csv.tmp"
            with open(tmp, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, list(self.optimality[0]))
                w.writeheader()
                w.writerows(self.optimality)
            os.replace(tmp, out / "optimality.csv")


def grade(workspace: str | Path, ps: Iterable[int] = GRADE_PS, bs: Iterable[int] = GRADE_BS,
          stall_limit: float = STALL_LIMIT, progress: bool = False,
          memory: bool = True, memory_ps: Iterable[int] = MEMORY_PS,
          opt_ps: Iterable[int] = OPTIMALITY_PS, performance: bool = False,
          perf_p: int = PERF_P, perf_sizes: Iterable[int] = PERF_SIZES,
          perf_reps: int = PERF_REPS) -> GradeReport:
    """Build and check every row of `workspace`; results also in ``workspace/grade/``.

    Parameters
    ----------
    workspace : str or Path
        A directory with an ``algorithms.toml`` and C files (``tuwviz assignment new``).
    ps, bs : iterable of int
        Process counts and block sizes (default :data:`GRADE_PS`, :data:`GRADE_BS`).
    stall_limit : float
        Seconds without progress after which a run is stopped as hung.
    progress : bool
        Show a progress bar per row.
    memory : bool
        Run the AddressSanitizer stage (needs the compiler's libasan).
    memory_ps : iterable of int
        Its process counts (default :data:`MEMORY_PS`).
    opt_ps : iterable of int
        Process counts of the optimality stage (default :data:`OPTIMALITY_PS`).
    performance : bool
        Time each correct rooted kernel against the library (:mod:`tuwviz.analysis.performance`).
    perf_p, perf_sizes, perf_reps
        Its process count, block sizes in bytes and repetitions.

    Returns
    -------
    GradeReport
        Failed checks are in the report, not raised: a student's kernel that fails to
        compile, computes wrong results, hangs or crashes is graded, not an error.

    Raises
    ------
    ValueError
        If `workspace` is not a workspace (no ``algorithms.toml``) or adds no rows.
    """
    ws = Path(workspace).expanduser().resolve()
    if not table_path(ws).is_file():
        raise ValueError(f"{ws} is no workspace: it has no algorithms.toml (make one with "
                         f"'tuwviz assignment new gather-scatter DIR')")
    try:
        rows = [r for r in workspace_rows(ws) if not r.library]
    except TableError as exc:
        raise ValueError(str(exc)) from None
    if not rows:
        raise ValueError(f"{table_path(ws)} lists no algorithm to grade")
    ps, bs, memory_ps, opt_ps = list(ps), list(bs), list(memory_ps), list(opt_ps)
    report = GradeReport(ws)
    with _environment({WORKSPACE_VAR: str(ws)}):
        try:
            kernels.load()
        except (KernelBuildError, TableError) as exc:
            report.add("build", "compiles with tuwviz's kernels", False, str(exc))
            return report
        report.add("build", "compiles with tuwviz's kernels", True,
                   f"{', '.join(f'{r.collective}/{r.name} ({r.function})' for r in rows)}")
        for row in rows:
            # the optimality stage's traces run in the correctness stage's job: one launch
            traced = _Traced(row, [p for p in opt_ps if p > 1]
                             if row.collective in OPTIMALITY_COLLECTIVES else [])
            correct = _correctness(
                report, row, grade_cases(row.collective, row.name, ps, bs),
                "correctness", "equals the MPI library", stall_limit, progress,
                f"p = {ranges(ps)}, roots 0, 2, p-1, b = {', '.join(map(str, bs))}, "
                f"{' and '.join(GRADE_DATATYPES)}, datatype pairs "
                f"{', '.join(t for t in pairs_for(row.collective) if t != 'same')}",
                traced=traced)
            if row.collective in OPTIMALITY_COLLECTIVES:
                _optimality(report, row, correct, traced)
            if performance and collective(row.collective).rooted:
                _performance(report, row, correct, perf_p, list(perf_sizes), perf_reps,
                             stall_limit, progress)
        if memory:
            # the ranks get the sanitizer's runtime preloaded; this process only builds
            # (the compiler must not run with libasan preloaded)
            env = kernels.sanitize_env()
            with _environment({k: env[k] for k in ("TUWVIZ_SANITIZE",)}):
                kernels.build()  # here, once: not counted against the ranks' stall limit
            sanitized = mpiexec_backend(stall_limit, extra_env=env)
            for row in rows:
                cases = grade_cases(row.collective, row.name, memory_ps, MEMORY_BS)
                _correctness(report, row, cases, "memory",
                             "no access outside its buffers (AddressSanitizer)",
                             stall_limit, progress,
                             f"p = {ranges(list(memory_ps))}, b = "
                             f"{', '.join(map(str, MEMORY_BS))}, every datatype pair", sanitized)
    return report


def submissions(folder: str | Path) -> list[Path]:
    """The workspaces in `folder`: its subdirectories with an ``algorithms.toml``, by name."""
    folder = Path(folder).expanduser().resolve()
    return sorted(d for d in folder.iterdir() if d.is_dir() and table_path(d).is_file())


def grade_folder(folder: str | Path, options: list[str] = (),
                 progress: bool = False) -> list[dict]:
    """Grade every submission in `folder`, each in its own ``tuwviz grade`` process.

    One submission that fails to build, hangs or crashes does not stop the others: its
    own grader stops it and the next one starts.  Each submission's checks are in its
    ``grade/`` as with :func:`grade`; one summary row per submission (``submission, ok,
    passed, checks, failed``: the names of the failed checks) goes to
    ``FOLDER/grades.csv``, rewritten after each submission.

    Parameters
    ----------
    folder : str or Path
        A directory whose subdirectories are workspaces (:func:`submissions`).
    options : list of str
        ``tuwviz grade`` options for every submission, e.g. ``["--np", "1-8"]``.
    progress : bool
        Print one line per submission as it starts.

    Raises
    ------
    ValueError
        If `folder` holds no workspace.
    """
    folder = Path(folder).expanduser().resolve()
    subs = submissions(folder)
    if not subs:
        raise ValueError(f"{folder} holds no workspace (no subdirectory with an algorithms.toml)")
    rows: list[dict] = []
    for k, sub in enumerate(subs):
        if progress:
            print(f"[{k + 1}/{len(subs)}] grading {sub.name} ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, "-m", "tuwviz.cli", "grade", str(sub), "--json", *options]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        reaper.watch(proc.pid)
        try:
            out, err = proc.communicate()
        finally:
            if proc.poll() is None:  # interrupted: the grader ends its own runs on SIGTERM
                proc.terminate()
                proc.wait()
            reaper.forget(proc.pid)
        try:
            result = json.loads(out)
            checks = result["checks"]
        except (ValueError, KeyError):
            why = (err.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            result, checks = {"ok": False}, [{"stage": "grader", "check": why, "ok": False}]
        failed = [f"{c['stage']}: {c.get('collective', '')}/{c.get('algorithm', '')} "
                  f"{c['check']}".replace(": / ", ": ") for c in checks if not c["ok"]]
        rows.append({"submission": sub.name, "ok": bool(result.get("ok")),
                     "passed": sum(bool(c["ok"]) for c in checks), "checks": len(checks),
                     "failed": "; ".join(failed)})
        tmp = folder / "grades.csv.tmp"
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, folder / "grades.csv")
    return rows


class _Traced:
    """One row's optimality problems (p of `ps`, roots 0, 2, p-1), traced in the job that
    checks its correctness (:func:`tuwviz.experiments.verify.run_verify`'s `also`)."""

    def __init__(self, row, ps: list[int]):
        self.ps = ps
        self.problems = [make_problem(row.collective, p, "same", OPTIMALITY_B, root=r)
                         for p in ps for r in grade_roots(p)]
        self.cases = trace_cases(self.problems, row.name)
        self.events: dict[int, list] = {}
        self.error: TuwvizError | None = None  # why the traces did not finish

    def on_result(self, i: int, case: dict, events: list) -> None:
        self.events[i] = events


def _optimality(report: GradeReport, row, correct: bool, traced: _Traced) -> None:
    """The optimality checks of one row, from its traces."""
    def add(name: str, ok: bool, detail: str, cases: int = 0) -> None:
        report.add("optimality", OPTIMALITY_CHECKS[name], ok, detail, row.collective, row.name,
                   cases)

    ps = traced.ps
    if not correct or not ps:
        for name in OPTIMALITY_CHECKS:
            add(name, False, "not measured: the kernel is not correct yet" if not correct
                else "not measured: no p > 1 given")
        return
    if len(traced.events) < len(traced.problems):
        for name in OPTIMALITY_CHECKS:
            add(name, False, f"tracing failed: {traced.error}")
        return
    results = [optimality(schedule_from_trace(pr, row.name, traced.events[i]))
               for i, pr in enumerate(traced.problems)]
    report.optimality += [{"collective": row.collective, "algorithm": row.name, **o._asdict(),
                           "failed": " ".join(o.failed())} for o in results]
    silent = [o for o in results if o.messages == 0]
    for name in OPTIMALITY_CHECKS:
        bad = [o for o in results if name in o.failed()]
        if silent:
            o = silent[0]
            add(name, False, f"no message was recorded at p={o.p} root {o.root}: communicate "
                             f"with the TUW_ wrappers (TUW_Send, TUW_Recv, ...), they record "
                             f"what the grader measures", len(results))
        elif bad:
            add(name, False, f"{len(bad)} of {len(results)} cases; first: {_told(name, bad[0])}",
                len(results))
        else:
            add(name, True, f"p = {ranges(ps)}, roots 0, 2, p-1, b = {OPTIMALITY_B}",
                len(results))


def _performance(report: GradeReport, row, correct: bool, p: int, sizes: list[int],
                 reps: int, stall_limit: float, progress: bool) -> None:
    """Time one row against the library; files in ``grade/``, a summary as a check."""
    check = "runtime against the library (information, not graded)"
    if not correct:
        report.add("performance", check, False, "not measured: the kernel is not correct yet",
                   row.collective, row.name)
        return
    stem = performance_stem(row.collective, row.name)
    for old in report.result_dir.glob(f"{stem}*"):  # a new grading replaces the last one
        old.unlink()
    roots = [r for r in PERF_ROOTS if r < p]
    try:
        perf = performance(row.collective, row.name, p=p, roots=roots, sizes=sizes, reps=reps,
                           out=report.result_dir / f"{stem}.csv", progress=progress,
                           stall_limit=stall_limit)
    except TuwvizError as exc:
        report.add("performance", check, False, f"measuring failed: {exc}", row.collective,
                   row.name)
        return
    html = save_performance(perf, report.result_dir, stem)[-1]
    own = perf.rows[perf.rows.algorithm != "native"]
    lines = [f"root {r}: " + ", ".join(f"{size_label(int(x.b))} {x.ratio_to_native:.2f}"
                                      for x in own[own.root == r].itertuples())
             for r in roots]
    report.add("performance", check, True,
               "median time / library median per block size:\n" + "\n".join(lines) +
               f"\n{perf.where}; plots: {html}", row.collective, row.name, len(perf.rows))


def _told(name: str, o) -> str:
    """One failed property of one case, with its numbers."""
    where = f"p={o.p} root {o.root}: "
    if name == "rounds":
        if o.rounds is None:
            return where + f"rounds unknown ({o.why})"
        return where + f"{o.rounds} rounds > ceil(log2 {o.p}) = {o.rounds_bound}"
    if name == "root_bytes":
        return where + f"the root moved {o.root_bytes} bytes, the other blocks are {o.root_bound}"
    if name == "max_sent":
        return where + f"a process sent {o.max_sent} bytes > {o.root_bound}"
    if o.latency is None:
        return where + f"latency unknown ({o.why})"
    return where + f"the last process first communicates in round {o.latency} > {o.rounds_bound}"


def _correctness(report: GradeReport, row, cases: list[dict], stage: str, check: str,
                 stall_limit: float, progress: bool, covered: str, backend=None,
                 traced: _Traced | None = None) -> bool:
    """Run one row's cases (and its `traced` problems, in the same job); add a check that
    passes, or says what failed in words."""
    args = (stage, check)
    also = traced.cases if traced else []
    try:
        result = run_verify(cases, backend, progress=progress, stall_limit=stall_limit,
                            also=also, on_also=traced.on_result if also else None)
    except TuwvizError as exc:
        result = getattr(exc, "report", None)
        if result is None or len(result.results) < len(cases):
            if isinstance(exc, RankFailure):
                done = len(result.results) if result is not None else 0
                report.add(*args, False, f"{exc}\n({done} of {len(cases)} cases finished "
                           f"before)", row.collective, row.name, done)
            else:
                report.add(*args, False, str(exc), row.collective, row.name)
            return False
        traced.error = exc  # every verify case finished: the traces after them failed
    groups = result.failure_groups()
    detail = "\n".join(describe_group(g) for g in groups) if groups else covered
    report.add(*args, not groups, detail, row.collective, row.name, len(result.results))
    return not groups


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """`values` in ``os.environ`` for this block (the MPI ranks started in it inherit them)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
