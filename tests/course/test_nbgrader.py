"""The assignment notebook in a real nbgrader course: generate, submit, autograde.

An instructor's course directory gets the workspace template as its source; nbgrader
generates the student version; two students hand in (alice: the reference solutions, bob:
a gather that drops the reordering, a correct scatter); ``nbgrader autograde`` executes
each submission's notebook, which grades its own C files on real MPI ranks; the gradebook
must then hold the marks the notebook's test cells carry: all for alice, the scatter
marks only for bob.  The notebook runs the small sweeps (TUWVIZ_ASSIGNMENT_QUICK=1).
The quick tier executes the notebook of a fresh workspace, as a student first sees it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tuwviz.course.assignment import QUICK_VAR
from tuwviz.course.workspace import new
from tuwviz.run.launch import record_launch
from tuwviz.table import WORKSPACE_VAR

from support import REPO, hang_guard
from support.sources import renamed_kernel

ASSIGNMENT = "gather_scatter"
TEMPLATE = REPO / "tuwviz" / "course" / "templates" / ASSIGNMENT / "assignment.ipynb"
#: The marks the notebook's test cells carry, by grade_id.
MARKS = {"gather_correct": 3, "scatter_correct": 3, "gather_optimal": 2, "scatter_optimal": 2,
         "memory_clean": 1}


def test_the_notebook_carries_nbgrader_marks():
    nb = nbformat.read(TEMPLATE, as_version=4)
    graded = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
              for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    assert graded == MARKS
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
    assert len(ids) == len(set(ids)) == len(nb.cells)  # every cell locked under its own id
    assert all(c.metadata["nbgrader"]["locked"] for c in nb.cells)
    assert all(c.outputs == [] for c in nb.cells if c.cell_type == "code")


def _nbgrader(course: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                       capture_output=True, text=True, timeout=hang_guard(1800))
    assert r.returncode == 0, f"nbgrader {' '.join(args)}:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    return r


@pytest.mark.full  # two submissions graded (each built twice): 45 s; the quick tier runs
def test_generate_submit_autograde_gives_the_right_marks(tmp_path):  # the template below
    course = tmp_path / "course"
    new("gather-scatter", course / "source" / ASSIGNMENT)  # the instructor's source version
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.CourseDirectory.course_id = 'hpc'\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{course}/gradebook.db'\n"
        "c.ExecutePreprocessor.timeout = None\n"  # the notebook's own stall limits apply
        "c.CourseDirectory.ignore = ['.ipynb_checkpoints', '__pycache__', 'grade']\n"
        # autograde puts the source's files over a submission's, except these: the
        # students' work is in the C files, not in the notebook
        f"c.Autograde.exclude_overwriting = {{{ASSIGNMENT!r}: ['my_gather.c', 'my_scatter.c']}}\n")
    env = {**os.environ, QUICK_VAR: "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter"), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    env.pop(WORKSPACE_VAR, None)
    _nbgrader(course, "generate_assignment", ASSIGNMENT, "--force", env=env)
    release = course / "release" / ASSIGNMENT
    assert {"assignment.ipynb", "my_gather.c", "my_scatter.c", "algorithms.toml"} <= {
        f.name for f in release.iterdir()}

    solutions = {
        "alice": (renamed_kernel("gather/gather_binomial.c", "MY_Gather"),
                  renamed_kernel("scatter/scatter_divide_conquer.c", "MY_Scatter")),
        # the root's blocks stay in virtual order: wrong for root != 0 only
        "bob": (renamed_kernel("gather/gather_binomial.c", "MY_Gather",
                        [("int real = (v + root) % p;", "int real = v;")]),
                renamed_kernel("scatter/scatter_binomial.c", "MY_Scatter")),
    }
    for student, (gather_c, scatter_c) in solutions.items():
        sub = course / "submitted" / student / ASSIGNMENT
        shutil.copytree(release, sub)
        (sub / "my_gather.c").write_text(gather_c)
        (sub / "my_scatter.c").write_text(scatter_c)
        (sub / "timestamp.txt").write_text("2026-11-24 10:00:00.000000 UTC")
    _nbgrader(course, "autograde", ASSIGNMENT, "--create", env=env)

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course}/gradebook.db", course_id="hpc") as gb:
        marks = {}
        for student in solutions:
            nb = gb.find_submission_notebook("assignment", ASSIGNMENT, student)
            marks[student] = {g.name: g.score for g in nb.grades}
            assert nb.max_score == sum(MARKS.values())
    assert marks["alice"] == MARKS, marks
    assert marks["bob"] == {**MARKS, "gather_correct": 0, "gather_optimal": 0, "memory_clean": 0}, marks
    # the notebook ran the grader in the submission: its results are there, and bob's
    # failure says what went wrong
    bob = json.loads((course / "autograded" / "bob" / ASSIGNMENT / "grade" / "result.json").read_text())
    gather = next(c for c in bob["checks"] if c["stage"] == "correctness" and c["collective"] == "gather")
    assert "root != 0" in gather["detail"], gather
    # alice's notebook ran without an error: the grade table, the messages drawn (Bokeh,
    # inline); the speed is not measured while nbgrader grades (no marks, minutes each)
    done = nbformat.read(course / "autograded" / "alice" / ASSIGNMENT / "assignment.ipynb", 4)
    outputs = [o for c in done.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    assert any("all checks passed" in o.get("text", "") for o in outputs)
    # a figure is a div with data-root-id (tuwviz.viz.plots.show; test_notebooks._figures)
    shown = [c.metadata["nbgrader"]["grade_id"] for c in done.cells if c.cell_type == "code"
             and any("data-root-id" in o.get("data", {}).get("text/html", "") for o in c.outputs)]
    assert shown == ["draw", "speed_gather", "speed_scatter"], shown
    assert "not measured while nbgrader grades" in json.dumps(outputs)
    results = course / "autograded" / "alice" / ASSIGNMENT / "grade"
    assert not list(results.glob("performance_*"))


def test_a_fresh_workspace_notebook_runs_and_says_what_is_missing(tmp_path, monkeypatch):
    """Nothing written yet: every cell runs, the marks fail with sentences, no plot breaks."""
    from nbclient import NotebookClient

    ws = new("gather-scatter", tmp_path / "ws")
    monkeypatch.setenv(QUICK_VAR, "1")
    monkeypatch.delenv(WORKSPACE_VAR, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(ws / "assignment.ipynb", as_version=4)
    record_launch("notebook", 1)  # counted by tests/support/budget.py
    NotebookClient(nb, timeout=hang_guard(600), kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(ws)}}).execute()
    failed = {c.metadata["nbgrader"]["grade_id"]: o.evalue for c in nb.cells if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"}
    assert set(failed) == set(MARKS), failed  # only the mark cells fail, each with its sentence
    assert failed["gather_correct"] == "MY_Gather is not correct yet: see the grade table in section 1"
    text = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "MY_Gather is not written yet: fill in the TODO markers" in text
    assert "MY_Scatter is not correct yet: nothing to show" in text  # the speed cell's sentence
