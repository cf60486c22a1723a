"""Pytest plugin: where the suite's time and launches go, per test module and per kind.

Every test's wall time (set-up, call and tear-down) and the MPI launches made while it ran
(``mpiexec`` jobs and ipyparallel clusters, with their ranks, from the launch log that
:mod:`leaks` keeps) are summed per test module and per *kind* of test: ``engines`` (it
started an ipyparallel cluster), ``mpi`` (mpiexec jobs), ``jupyterlab``, ``notebooks``
(executed headless), ``browser`` (headless Chromium) and ``python`` (none of these).  At
the end the session prints both tables, the slowest modules first, and writes every
test's row to ``build/test-times.csv`` (``tuwviz`` doctests count as one module each).

Times are reported, never asserted: the host pauses this machine now and then.
"""
from __future__ import annotations

import csv
import time
from collections import defaultdict
from pathlib import Path

import pytest

__all__ = ["rows", "module_table", "kind_table"]

_rows: list[dict] = []


def rows() -> list[dict]:
    """Every finished test's row: nodeid, module, kind, seconds, mpiexec, clusters, ranks."""
    return list(_rows)


def _launch_lines() -> list[str]:
    from leaks import LAUNCH_LOG

    try:
        return LAUNCH_LOG.read_text().splitlines()
    except OSError:
        return []


def _kind(item, launched: list[str]) -> str:
    module = Path(item.nodeid.split("::")[0]).stem
    if module == "test_lab":
        return "jupyterlab"
    if module in ("test_notebooks", "test_nbgrader"):
        return "notebooks"
    if "browser" in getattr(item, "fixturenames", ()):
        return "browser"
    if any(line.startswith("cluster ") for line in launched):
        return "engines"
    if launched:
        return "mpi"
    return "python"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = len(_launch_lines())
    start = time.monotonic()
    yield
    seconds = time.monotonic() - start
    launched = _launch_lines()[before:]
    _rows.append({
        "nodeid": item.nodeid, "module": item.nodeid.split("::")[0],
        "kind": _kind(item, launched), "seconds": round(seconds, 3),
        "mpiexec": sum(line.startswith("mpiexec ") for line in launched),
        "clusters": sum(line.startswith("cluster ") for line in launched),
        "ranks": sum(int(line.split()[1]) for line in launched if len(line.split()) > 1),
    })


def _table(key: str) -> list[dict]:
    out: dict[str, dict] = defaultdict(lambda: {"tests": 0, "seconds": 0.0, "mpiexec": 0,
                                                "clusters": 0, "ranks": 0})
    for r in _rows:
        t = out[r[key]]
        t["tests"] += 1
        for k in ("seconds", "mpiexec", "clusters", "ranks"):
            t[k] += r[k]
    return sorted(({key: k, **v} for k, v in out.items()), key=lambda t: -t["seconds"])


def module_table() -> list[dict]:
    """Per test module: tests, seconds, mpiexec jobs, clusters, ranks; slowest first."""
    return _table("module")


def kind_table() -> list[dict]:
    """The same per kind of test."""
    return _table("kind")


def _write(tr, table: list[dict], key: str) -> None:
    total = sum(t["seconds"] for t in table) or 1.0
    tr.write_line(f"{key:<36} {'tests':>5} {'seconds':>8} {'share':>6} {'mpiexec':>7} "
                  f"{'clusters':>8} {'ranks':>6}")
    for t in table:
        tr.write_line(f"{t[key]:<36} {t['tests']:>5} {t['seconds']:>8.1f} "
                      f"{100 * t['seconds'] / total:>5.1f}% {t['mpiexec']:>7} "
                      f"{t['clusters']:>8} {t['ranks']:>6}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _rows:
        return
    tr = terminalreporter
    tr.write_sep("-", "time and launches per test module (slowest first)")
    _write(tr, module_table(), "module")
    tr.write_sep("-", "time and launches per kind of test")
    _write(tr, kind_table(), "kind")
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
