"""Pytest plugin: where the suite's time and launches go, and a budget of counts it keeps.

Every test's wall time (set-up, call and tear-down) and what it started while it ran are
summed per test module and per *kind* of test.  What it started comes from the launch log
(``TUWVIZ_LAUNCH_LOG``, one ``kind n`` line per event, written by :mod:`tuwviz.run.launch`,
:mod:`tuwviz.run.engines`, :mod:`tuwviz.experiments.verify` and the tests' own helpers):

========= ==========================================================================
count     lines it sums
========= ==========================================================================
launches  ``mpiexec n``, ``srun n`` and ``cluster n``: MPI jobs and ipyparallel clusters
ranks     the ``n`` of those: ranks started
verify    ``verify n``: cases run by tuwviz verify (the grader's too)
simulations ``smpi n``: SimGrid SMPI runs (all ranks simulated in one process)
simwork   ``smpi-work n``: their size, every simulated case's ranks summed
notebooks ``notebook 1``: notebook executions, headless or in JupyterLab
pages     ``page 1``: browser pages opened (headless Chromium)
========= ==========================================================================

The kinds are ``jupyterlab`` (it used a JupyterLab server), ``notebooks`` (it executed one
headless), ``browser``, ``engines`` (an ipyparallel cluster), ``mpi`` (mpiexec jobs),
``simulated`` (SimGrid SMPI runs) and ``python`` (none of these).  At the end the session prints the per-module and per-kind
tables, the slowest first, and writes every test's row to ``build/test-times.csv``.

**The budget.**  Time is noisy here (the host pauses this machine now and then), so it is
reported, never asserted.  The counts are not noisy: ``tests/budget.txt`` (or the file
named by ``TUWVIZ_TEST_BUDGET``) gives, per tier (``quick``: `make test`, ``full``: `make
test-full`), a limit for each count with its reason.  A run over a limit fails, naming the
count, and the module and the test that added the most to it.  Raising a limit is a
deliberate edit of that file, with its reason.
"""
from __future__ import annotations

import csv
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

__all__ = ["COUNTS", "BudgetLine", "full_tier", "kind_table", "module_table", "over_budget",
           "read_budget", "rows", "tier"]

#: The counted things: name -> (launch-log kinds summed, what the count is)
COUNTS = {
    "launches": (("mpiexec", "srun", "cluster"),
                 "MPI launches: mpiexec and srun jobs, ipyparallel clusters"),
    "ranks": (("mpiexec", "srun", "cluster"), "ranks started, summed over the launches"),
    "verify": (("verify",), "verify cases run (tuwviz verify and the grader)"),
    "simulations": (("smpi",), "SimGrid SMPI runs (simulated ranks in one process)"),
    "simwork": (("smpi-work",), "simulated ranks x cases: each SMPI case counts its ranks"),
    "notebooks": (("notebook",), "notebook executions, headless or in JupyterLab"),
    "pages": (("page",), "browser pages opened"),
}
BUDGET_FILE = Path(__file__).resolve().parents[1] / "budget.txt"
BUDGET_ENV = "TUWVIZ_TEST_BUDGET"

_rows: list[dict] = []


def rows() -> list[dict]:
    """Every finished test's row: nodeid, module, kind, seconds and the :data:`COUNTS`."""
    return list(_rows)


def full_tier(config) -> bool:
    """Whether this run is the full tier: its marker expression (``-m``) selects the tests
    marked ``full`` (`make test-full` gives ``-m "full or not full"``; no ``-m``, all)."""
    from _pytest.mark.expression import Expression

    expr = config.getoption("markexpr") or ""
    return not expr or Expression.compile(expr).evaluate(lambda name, **kw: name == "full")


def tier(config) -> str:
    """``"full"`` or ``"quick"``: the budget this run is held to."""
    return "full" if full_tier(config) else "quick"


def _launch_lines() -> list[str]:
    try:
        return Path(os.environ["TUWVIZ_LAUNCH_LOG"]).read_text().splitlines()
    except (KeyError, OSError):
        return []


def _counts(lines: list[str]) -> dict[str, int]:
    out = dict.fromkeys(COUNTS, 0)
    for line in lines:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        for name, (kinds, _) in COUNTS.items():
            if parts[0] in kinds:
                out[name] += 1 if name in ("launches", "simulations") else int(parts[1])
    return out


def _kind(item, lines: list[str]) -> str:
    started = {line.split()[0] for line in lines if line.split()}
    if "jupyterlab" in started or Path(item.nodeid.split("::")[0]).stem == "test_lab":
        return "jupyterlab"
    if "notebook" in started or Path(item.nodeid.split("::")[0]).stem == "test_nbgrader":
        return "notebooks"
    if "page" in started or "browser" in getattr(item, "fixturenames", ()):
        return "browser"
    if "cluster" in started:
        return "engines"
    if "mpiexec" in started or "srun" in started:
        return "mpi"
    if "smpi" in started:
        return "simulated"
    return "python"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = len(_launch_lines())
    start = time.monotonic()
    yield
    seconds = time.monotonic() - start
    lines = _launch_lines()[before:]
    _rows.append({"nodeid": item.nodeid, "module": item.nodeid.split("::")[0],
                  "kind": _kind(item, lines), "seconds": round(seconds, 3), **_counts(lines)})


def _table(key: str) -> list[dict]:
    out: dict[str, dict] = defaultdict(lambda: {"tests": 0, "seconds": 0.0,
                                                **dict.fromkeys(COUNTS, 0)})
    for r in _rows:
        t = out[r[key]]
        t["tests"] += 1
        for k in ("seconds", *COUNTS):
            t[k] += r[k]
    return sorted(({key: k, **v} for k, v in out.items()), key=lambda t: -t["seconds"])


def module_table() -> list[dict]:
    """Per test module: tests, seconds and the counts; slowest first."""
    return _table("module")


def kind_table() -> list[dict]:
    """The same per kind of test."""
    return _table("kind")


class BudgetLine:
    """One line of the budget file: the `limit` of `count` in `tier`, and its `reason`."""

    def __init__(self, tier: str, count: str, limit: int, reason: str):
        self.tier, self.count, self.limit, self.reason = tier, count, limit, reason

    def __repr__(self) -> str:
        return f"BudgetLine({self.tier!r}, {self.count!r}, {self.limit}, {self.reason!r})"


def read_budget(path: Path) -> list[BudgetLine]:
    """The lines of budget file `path`: ``tier count limit reason...``, ``#`` comments.

    A malformed line is an error naming it (a budget that is silently not read would let
    anything through)."""
    out = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 3)
        if (len(parts) < 4 or parts[0] not in ("quick", "full") or parts[1] not in COUNTS
                or not parts[2].isdigit()):
            raise ValueError(f"{path}:{number}: expected 'quick|full COUNT LIMIT reason' with "
                             f"COUNT one of {', '.join(COUNTS)}, got {line!r}")
        out.append(BudgetLine(parts[0], parts[1], int(parts[2]), parts[3].strip()))
    return out


def over_budget(test_rows: list[dict], budget: list[BudgetLine], run_tier: str) -> list[str]:
    """One message per count of `run_tier` over its limit, naming the module and the test
    that added the most to it; empty when every count is within the budget."""
    out = []
    for line in (b for b in budget if b.tier == run_tier):
        total = sum(r[line.count] for r in test_rows)
        if total <= line.limit:
            continue
        per_module: dict[str, int] = defaultdict(int)
        for r in test_rows:
            per_module[r["module"]] += r[line.count]
        top = max(per_module, key=per_module.get)
        test = max(test_rows, key=lambda r: r[line.count])
        out.append(f"{line.count}: {total:,} in the {run_tier} tier, over its budget of "
                   f"{line.limit:,} ({line.reason}); most from {top} ({per_module[top]:,}), "
                   f"the test adding most {test['nodeid']} "
                   f"({test[line.count]:,})")
    return out


def _budget_path() -> Path:
    return Path(os.environ.get(BUDGET_ENV) or BUDGET_FILE)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    config._tuwviz_limits = {}
    try:
        budget = read_budget(_budget_path())
    except (OSError, ValueError) as exc:
        config._tuwviz_over = [f"the budget could not be read: {exc}"]
    else:
        config._tuwviz_over = over_budget(_rows, budget, tier(config))
        config._tuwviz_limits = {b.count: b.limit for b in budget if b.tier == tier(config)}
    # only a run that did not stop early is held to it (an interrupted run counts less)
    if config._tuwviz_over and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _write(tr, table: list[dict], key: str) -> None:
    total = sum(t["seconds"] for t in table) or 1.0
    tr.write_line(f"{key:<36} {'tests':>5} {'seconds':>8} {'share':>6} {'launch':>6} "
                  f"{'ranks':>6} {'verify':>7} {'simwork':>8} {'nb':>3} {'pages':>5}")
    for t in table:
        tr.write_line(f"{t[key]:<36} {t['tests']:>5} {t['seconds']:>8.1f} "
                      f"{100 * t['seconds'] / total:>5.1f}% {t['launches']:>6} {t['ranks']:>6} "
                      f"{t['verify']:>7} {t['simwork']:>8} {t['notebooks']:>3} {t['pages']:>5}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _rows:
        return
    tr = terminalreporter
    tr.write_sep("-", "time and counts per test module (slowest first)")
    _write(tr, module_table(), "module")
    tr.write_sep("-", "time and counts per kind of test")
    _write(tr, kind_table(), "kind")
    run_tier = tier(config)
    tr.write_sep("-", f"counts of this run against {_budget_path().name} ({run_tier} tier)")
    limits = getattr(config, "_tuwviz_limits", {})
    for name, (_, what) in COUNTS.items():
        total = sum(r[name] for r in _rows)
        limit = f"{limits[name]:>8,}" if name in limits else "  (none)"
        tr.write_line(f"  {name:<10} {total:>8,} of {limit}  {what}")
    over = getattr(config, "_tuwviz_over", [])
    if over:
        tr.write_sep("=", "OVER THE TEST BUDGET", red=True)
        for line in over:
            tr.write_line(line, red=True)
    out = Path(config.rootpath) / "build" / "test-times.csv"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(_rows[0]))
            w.writeheader()
            w.writerows(_rows)
        tr.write_line(f"(every test's row: {out})")
    except OSError as exc:  # a report, never a reason to fail
        tr.write_line(f"(could not write {out}: {exc})")
