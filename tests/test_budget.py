"""The test suite's count budget (tests/support/budget.py, tests/budget.txt) holds.

A real pytest session with the budget plugin runs two test modules that make real MPI
launches; over the budget it fails and names the module that added the most, within it
it passes.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support.budget import BUDGET_FILE, COUNTS, over_budget, read_budget

from support import REPO, hang_guard

LAUNCHING = '''
import os, subprocess
from tuwviz.run.launch import local_mpi_command, mpi_env, record_launch

def launch():
    record_launch("mpiexec", 2)
    subprocess.run([*local_mpi_command(), "-n", "2", "true"], check=True, timeout=300,
                   env={**os.environ, **mpi_env(2, timed=False)})
'''


def test_the_budget_gives_every_count_of_both_tiers_a_limit_and_a_reason():
    lines = read_budget(BUDGET_FILE)
    assert sorted((b.tier, b.count) for b in lines) == sorted(
        (t, c) for t in ("quick", "full") for c in COUNTS)
    assert all(len(b.reason.split()) >= 3 for b in lines), lines
    quick = {b.count: b.limit for b in lines if b.tier == "quick"}
    full = {b.count: b.limit for b in lines if b.tier == "full"}
    assert all(quick[c] <= full[c] for c in COUNTS)  # the full tier runs the quick one too


def test_a_malformed_budget_line_is_named(tmp_path):
    path = tmp_path / "budget.txt"
    path.write_text("# comment\nquick launches 10 a reason\nquick lunches 10 a typo\n")
    with pytest.raises(ValueError, match=r"budget.txt:3: .*COUNT one of launches, ranks"):
        read_budget(path)


def test_over_budget_names_the_count_the_module_and_the_test_adding_most(tmp_path):
    rows = [{"module": "a.py", "nodeid": "a.py::t1", "launches": 3},
            {"module": "b.py", "nodeid": "b.py::t1", "launches": 2},
            {"module": "b.py", "nodeid": "b.py::t2", "launches": 2},
            {"module": "b.py", "nodeid": "b.py::t3", "launches": 1}]
    path = tmp_path / "budget.txt"
    path.write_text("quick launches 7 seven is plenty\nfull launches 9 more\n")
    (line,) = [b for b in read_budget(path) if b.tier == "quick"]
    assert over_budget(rows, [line], "quick") == [
        "launches: 8 in the quick tier, over its budget of 7 (seven is plenty); "
        "most from b.py (5), the test adding most a.py::t1 (3)"]
    assert over_budget(rows, [line], "full") == []  # the line is the quick tier's


def _budgeted_session(tmp_path, files: dict[str, str], budget: str,
                      env: dict | None = None) -> subprocess.CompletedProcess:
    """A real pytest session with the budget plugin over `files` (name -> text) in
    `tmp_path`, held to the budget file text `budget`, its own launch log."""
    (tmp_path / "conftest.py").write_text("pytest_plugins = ['support.budget']\n")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "budget.txt").write_text(budget)
    log = tmp_path / "launches.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, **(env or {}), "TUWVIZ_LAUNCH_LOG": str(log),
           "TUWVIZ_TEST_BUDGET": str(tmp_path / "budget.txt"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO / "tests"), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-o", "addopts=", "-m", "not full", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=hang_guard(600))


def _session(tmp_path, limit: int) -> subprocess.CompletedProcess:
    return _budgeted_session(tmp_path, {
        "launching.py": LAUNCHING,
        "test_many.py": "from launching import launch\n\ndef test_two():\n    launch()\n"
                        "    launch()\n",
        "test_one.py": "from launching import launch\n\ndef test_one():\n    launch()\n"},
        f"quick launches {limit} the limit this test sets\n"
        "quick ranks 100 far more than it needs\n")


def test_a_module_launching_beyond_the_budget_fails_the_run_and_is_named(tmp_path):
    r = _session(tmp_path, 2)  # three real mpiexec jobs, two from test_many.py
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout  # every test passed: the budget failed the run
    assert ("launches: 3 in the quick tier, over its budget of 2 (the limit this test sets); "
            "most from test_many.py (2), the test adding most test_many.py::test_two (2)") \
        in r.stdout, r.stdout[-3000:]
    assert "OVER THE TEST BUDGET" in r.stdout

    r = _session(tmp_path, 3)  # the same run within its budget passes, counts printed
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "OVER THE TEST BUDGET" not in r.stdout
    counts = [ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith(
        ("launches ", "ranks "))]
    assert [c[:4] for c in counts] == [["launches", "3", "of", "3"], ["ranks", "6", "of", "100"]]


def _notebook_cell(name: str, needle: str) -> str:
    """The source of the code cell of notebook `name` that contains `needle`, as stored."""
    import nbformat

    nb = nbformat.read(REPO / "notebooks" / name, as_version=4)
    (cell,) = [c.source for c in nb.cells if c.cell_type == "code" and needle in c.source]
    return cell


def _cell_session(tmp_path, source: str, limit: int) -> subprocess.CompletedProcess:
    """A session held to ``quick simwork LIMIT`` whose one test runs `source`, the way the
    quick tier runs the notebooks (TUWVIZ_NOTEBOOK_SCALE=quick)."""
    return _budgeted_session(
        tmp_path, {"test_notebook_cell.py": f"SOURCE = {source!r}\n\n"
                                            "def test_the_cell():\n    exec(SOURCE, {})\n"},
        f"quick simwork {limit} the notebook's simulated cell at its quick scale\n",
        env={"TUWVIZ_NOTEBOOK_SCALE": "quick"})


def test_a_notebook_simulating_more_in_the_quick_tier_fails_the_budget(tmp_path):
    # notebook 04's paper-scale section, as stored: 3 algorithms on 64 simulated ranks
    # (quick), 1,152 at the paper's scale; the budget counts simulated ranks x cases
    source = ("from tuwviz.config import at_scale\n"  # the notebook imports it at the top
              + _notebook_cell("04_circulant_allgather_guidelines.ipynb", "on_platform("))
    r = _cell_session(tmp_path, source, 3 * 64)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    (line,) = [ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith("simwork ")]
    assert line[:4] == ["simwork", "192", "of", "192"], r.stdout[-2000:]

    raised = source.replace("quick=64", "quick=128")
    assert raised != source, "the notebook's quick scale is no longer quick=64"
    r = _cell_session(tmp_path, raised, 3 * 64)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout  # the cell ran; the budget failed the run
    assert ("simwork: 384 in the quick tier, over its budget of 192 (the notebook's simulated "
            "cell at its quick scale); most from test_notebook_cell.py (384), the test adding "
            "most test_notebook_cell.py::test_the_cell (384)") in r.stdout, \
        r.stdout[-3000:]
