"""The course kit: a workspace from `tuwviz assignment new`, graded by `tuwviz grade`.

Real MPI runs throughout: the template compiles and is graded "not written yet"; the
reference solutions (the package's own gather and scatter kernels, renamed) pass; and a set
of deliberately broken kernels, kept here as edits of the reference files, fail with the
diagnostics a student needs: the wrong byte, the failing roots, the hung case, the
sanitizer's file:line.  All broken kernels are rows of one workspace, graded in one call:
each row runs on its own, so a hang in one does not stop the others.
"""
from __future__ import annotations

import csv
import json
import re

import pytest

from tuwviz import config
from tuwviz.course.workspace import new, use
from tuwviz.course.grade import grade
from tuwviz.table import WORKSPACE_VAR

from support.sources import renamed_kernel
from support import hang_guard

SMALL = dict(ps=(1, 2, 3, 5, 8), bs=(0, 100))
KDIR = config.KERNELS_DIR


def _row(coll: str, name: str, function: str) -> str:
    return (f'[[algorithm]]\ncollective = "{coll}"\nname = "{name}"\nfunction = "{function}"\n'
            f'in_place = true\ndescription = "test row {name}"\n\n')


def test_assignment_new_makes_a_workspace_and_never_overwrites(tmp_path, cli):
    r = cli("assignment", "new", "gather-scatter", str(tmp_path / "me"))
    assert r.returncode == 0, r.stderr
    ws = tmp_path / "me"
    assert sorted(f.name for f in ws.iterdir()) == ["README.md", "algorithms.toml",
                                                      "assignment.ipynb", "my_gather.c",
                                                      "my_scatter.c"]
    src = (ws / "my_gather.c").read_text()
    assert "int MY_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype," in src
    assert "TODO" in src and "TUW_Send" in src
    (ws / "my_gather.c").write_text("my work")
    r = cli("assignment", "new", "gather-scatter", str(ws))
    assert r.returncode == 2 and "not empty" in r.stderr
    assert (ws / "my_gather.c").read_text() == "my work"  # nothing overwritten
    r = cli("assignment", "new", "gather-scater", str(tmp_path / "x"))
    assert r.returncode == 2 and "valid: gather-scatter" in r.stderr
    with pytest.raises(ValueError, match="no algorithms.toml"):
        use(tmp_path)


def test_the_template_builds_and_is_graded_as_not_written(tmp_path, monkeypatch):
    monkeypatch.delenv(WORKSPACE_VAR, raising=False)
    ws = new("gather-scatter", tmp_path / "ws")
    report = grade(ws, ps=[1, 2], bs=[1], memory=False)
    main = [(c["stage"], c["ok"]) for c in report.checks if c["stage"] != "optimality"]
    assert main == [("build", True), ("correctness", False), ("correctness", False)]
    assert "MY_Gather is not written yet" in report.checks[1]["detail"]
    scatter = next(c for c in report.checks if c["collective"] == "scatter")
    assert "MY_Scatter is not written yet" in scatter["detail"]
    # every row gets the same checks (a teacher's sheet has the same columns for all)
    opt = [c for c in report.checks if c["stage"] == "optimality"]
    assert len(opt) == 8 and all(not c["ok"] and "not correct yet" in c["detail"] for c in opt)
    saved = json.loads((ws / "grade" / "result.json").read_text())
    assert saved["ok"] is False and len(saved["checks"]) == len(report.checks) == 11
    with open(ws / "grade" / "result.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["stage"], r["ok"]) for r in rows] == [
        (c["stage"], str(c["ok"])) for c in report.checks]


def test_a_compile_error_and_a_wrong_signature_show_file_and_line(tmp_path, cli):
    ws = new("gather-scatter", tmp_path / "ws")
    src = (ws / "my_gather.c").read_text()
    (ws / "my_gather.c").write_text(src.replace("int rank, p;", "int rank, p  /* ; */"))
    r = cli("grade", str(ws), "--np", "2", "--no-memory")
    assert r.returncode == 1
    assert "FAIL  build" in r.stdout and re.search(r"my_gather\.c:\d+:\d+: error", r.stdout), r.stdout
    # MPI_Gather's signature has `const void *sendbuf`; without const it is another function
    (ws / "my_gather.c").write_text(src.replace("int MY_Gather(const void *sendbuf",
                                                "int MY_Gather(void *sendbuf"))
    r = cli("grade", str(ws), "--np", "2", "--no-memory")
    assert r.returncode == 1 and re.search(r"conflicting types for .MY_Gather.", r.stdout), r.stdout
    assert "my_gather.c:" in r.stdout
    # a misnamed function: the row's MY_Gather is defined nowhere; the row is named
    (ws / "my_gather.c").write_text(src.replace("MY_Gather(", "My_Gather("))
    r = cli("grade", str(ws), "--np", "2", "--no-memory")
    assert r.returncode == 1 and "row gather/mine names function MY_Gather, which no .c file " \
        f"under {ws.resolve()} defines" in r.stdout, r.stdout


def test_the_reference_solutions_pass(tmp_path, monkeypatch):
    monkeypatch.delenv(WORKSPACE_VAR, raising=False)
    ws = new("gather-scatter", tmp_path / "ws")
    (ws / "my_gather.c").write_text(renamed_kernel("gather/gather_divide_conquer.c", "MY_Gather"))
    (ws / "my_scatter.c").write_text(renamed_kernel("scatter/scatter_binomial.c", "MY_Scatter"))
    report = grade(ws, **SMALL, memory_ps=[3], opt_ps=[2, 3, 5, 8])
    assert report.ok, report.table()
    stages = [(c["stage"], c["collective"]) for c in report.checks]
    assert stages == [("build", "")] + [("correctness", "gather")] + [("optimality", "gather")] * 4 \
        + [("correctness", "scatter")] + [("optimality", "scatter")] * 4 \
        + [("memory", "gather"), ("memory", "scatter")]
    assert all(c["cases"] > 50 for c in report.checks if c["stage"] == "correctness")
    assert all(c["cases"] == 26 for c in report.checks if c["stage"] == "memory")  # p = 3
    # the optimality table: rounds = ceil(log2 p) for the trees, the root moves (p-1)/p m
    assert len(report.optimality) == 2 * (2 + 2 + 3 + 3)  # roots 0, 2, p-1 of p = 2, 3, 5, 8
    for o in report.optimality:
        assert o["rounds"] == o["rounds_bound"] and o["root_bytes"] == o["root_bound"], o
    saved = (ws / "grade" / "optimality.csv").read_text().splitlines()
    assert len(saved) == 1 + len(report.optimality)


def test_a_folder_of_submissions_is_graded_one_by_one(tmp_path, cli):
    folder = tmp_path / "course"
    good = new("gather-scatter", folder / "alice")
    (good / "my_gather.c").write_text(renamed_kernel("gather/gather_binomial.c", "MY_Gather"))
    (good / "my_scatter.c").write_text(renamed_kernel("scatter/scatter_divide_conquer.c", "MY_Scatter"))
    new("gather-scatter", folder / "bob")  # handed in the template
    broken = new("gather-scatter", folder / "carol")
    (broken / "my_scatter.c").write_text("int MY_Scatter(void) { return 0 }\n")  # no build
    (folder / "notes").mkdir()  # not a workspace: left alone
    r = cli("grade", str(folder), "--np", "1-3", "--b", "1", "--opt-np", "2,3", "--no-memory",
            "--performance", "--perf-np", "3", "--perf-b", "1,1000", "--perf-reps", "3")
    assert r.returncode == 1, r.stdout + r.stderr
    with open(folder / "grades.csv", newline="") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert list(rows) == ["alice", "bob", "carol"]
    assert rows["alice"]["ok"] == "True" and rows["alice"]["passed"] == rows["alice"]["checks"]
    assert rows["bob"]["ok"] == "False" and "correctness: gather/mine" in rows["bob"]["failed"]
    assert rows["carol"]["failed"].startswith("build") and rows["carol"]["passed"] == "0"
    assert "1 of 3 submissions passed every check" in r.stdout
    # each submission's own results are in its workspace
    result = json.loads((good / "grade" / "result.json").read_text())
    assert result["ok"] is True
    # the performance stage: correct kernels timed against the library, roots 0 and 2
    perf = [c for c in result["checks"] if c["stage"] == "performance"]
    assert [(c["collective"], c["ok"]) for c in perf] == [("gather", True), ("scatter", True)]
    assert re.search(r"root 2: 1 B \d+\.\d\d, 1 kB \d+\.\d\d", perf[0]["detail"]), perf[0]
    assert "measured on 3 ranks" in perf[0]["detail"]
    for coll in ("gather", "scatter"):
        tex = (good / "grade" / f"performance_{coll}_mine.tex").read_text()
        rows_tex = [x for x in tex.splitlines() if not x.startswith("%")]
        assert len(rows_tex) == 4 and all(x.endswith(r"\\") for x in rows_tex)  # 2 roots x 2 b
        assert (good / "grade" / f"performance_{coll}_mine.html").stat().st_size > 0
    assert "performance: gather/mine" in rows["bob"]["failed"]  # not correct: not measured


# The broken kernels: (row name, collective, reference file, edits, what the grade says);
# the stage is correctness unless the name says otherwise
BROKEN = [
    # correct, but every block goes straight to the root: p - 1 rounds, not round-optimal
    ("linear_not_optimal", "gatherv", "gatherv/gatherv_linear.c", [], "3 rounds > ceil(log2 4) = 2"),
    # a subroot's own block at the start of its range, not at its place: wrong bytes
    ("wrong_displ", "gather", "gather/gather_divide_conquer.c",
     [("into + (MPI_Aint)(rank - t.lo) * per * extent, (int)per, unit);",
       "into, (int)per, unit);")],
     "expected"),
    # the root keeps block 0 instead of its own: wrong only when root != 0
    ("wrong_root", "scatter", "scatter/scatter_binomial.c",
     [("(const char *)sendbuf + (MPI_Aint)root * sendcount * extent", "(const char *)sendbuf")],
     "root != 0"),
    # the root's blocks stay in virtual order: wrong only when root != 0
    ("no_reorder", "gather", "gather/gather_binomial.c",
     [("int real = (v + root) % p;", "int real = v;")], "root != 0"),
    # when p is odd, rank 1 waits for a message nobody sends (and whoever needs its block
    # waits for rank 1)
    ("deadlock_odd", "gather", "gather/gather_divide_conquer.c",
     [("tuw_dc_tree_create(p, rank, root, &t);",
       "tuw_dc_tree_create(p, rank, root, &t);\n    if (p % 2 && rank == 1) { char c; "
       "TUW_Recv(&c, 1, MPI_BYTE, 0, 999, comm, MPI_STATUS_IGNORE); }")],
     "still inside the kernel call"),
    # rank 1 gives up: MPI_Abort ends every rank; the grade names the call, the rank, the code
    ("calls_abort", "scatter", "scatter/scatter_binomial.c",
     [("tuw_binomial_tree_create(p, rank, root, &t);",
       "tuw_binomial_tree_create(p, rank, root, &t);\n    if (rank == 1) MPI_Abort(comm, 7);")],
     "MPI_Abort"),
    # a subroot's buffer one block short: found by AddressSanitizer, at the kernel's line
    ("out_of_bounds", "gather", "gather/gather_divide_conquer.c",
     [("buf = malloc((t.hi - t.lo) * b > 0 ? (size_t)((t.hi - t.lo) * b) : 1);",
       "buf = malloc((t.hi - t.lo - 1) * b > 0 ? (size_t)((t.hi - t.lo - 1) * b) : 1);")],
     "AddressSanitizer: heap-buffer-overflow"),
]


def _expand(ranks: str) -> set[int]:
    """``0-2, 5`` -> {0, 1, 2, 5}"""
    out = set()
    for part in ranks.split(", "):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _broken_workspace(tmp_path, names):
    ws = tmp_path / "broken"
    ws.mkdir()
    table = ""
    for name, coll, rel, edits, _ in (b for b in BROKEN if b[0] in names):
        fn = f"BROKEN_{name}"
        (ws / f"{name}.c").write_text(renamed_kernel(rel, fn, edits))
        table += _row(coll, name, fn)
    (ws / "algorithms.toml").write_text(table)
    return ws


def test_wrong_kernels_fail_with_the_rank_byte_and_roots(tmp_path, monkeypatch):
    monkeypatch.delenv(WORKSPACE_VAR, raising=False)
    ws = _broken_workspace(tmp_path, {"wrong_displ", "no_reorder", "linear_not_optimal",
                                      "deadlock_odd", "calls_abort"})
    report = grade(ws, ps=(2, 3, 4), bs=(3,), memory=False, opt_ps=[2, 4],
                   stall_limit=hang_guard(3))
    by = {c["algorithm"]: c for c in report.checks if c["stage"] == "correctness"}
    # the hang: stopped, the case named, rank 1 among the ranks still inside the call
    hung = by["deadlock_odd"]["detail"]
    assert not by["deadlock_odd"]["ok"] and "p=3" in hung, hung
    stuck = re.search(r"alive: ranks? ([\d, -]+) (?:was|were) still inside the kernel call", hung)
    assert stuck and 1 in _expand(stuck.group(1)), hung
    aborted = by["calls_abort"]["detail"]
    assert not by["calls_abort"]["ok"] and "MPI_Abort" in aborted and "rank 1" in aborted, aborted
    assert "p=2" in aborted, aborted  # the first case with a rank 1
    assert not by["wrong_displ"]["ok"] and "expected" in by["wrong_displ"]["detail"]
    assert "byte" in by["wrong_displ"]["detail"] and "rank" in by["wrong_displ"]["detail"]
    assert not by["no_reorder"]["ok"] and "root != 0" in by["no_reorder"]["detail"]
    # a wrong kernel's optimality is not measured; a correct linear one is not round-optimal
    opt = [c for c in report.checks if c["stage"] == "optimality"]
    assert all("not correct yet" in c["detail"] for c in opt if c["algorithm"] != "linear_not_optimal")
    linear = {c["check"].split(":")[0]: c for c in opt if c["algorithm"] == "linear_not_optimal"}
    assert by["linear_not_optimal"]["ok"]
    assert not linear["round-optimal"]["ok"] and "3 rounds > ceil(log2 4) = 2" in linear["round-optimal"]["detail"]
    assert linear["bandwidth-optimal"]["ok"]


@pytest.mark.full
def test_broken_kernels_fail_with_the_right_diagnostics(tmp_path, monkeypatch):
    monkeypatch.delenv(WORKSPACE_VAR, raising=False)
    ws = _broken_workspace(tmp_path, {b[0] for b in BROKEN})
    report = grade(ws, ps=(1, 2, 3, 4, 5), bs=(1, 100), stall_limit=hang_guard(15),
                   memory_ps=[3, 5], opt_ps=[2, 4])
    by = {(c["stage"], c["algorithm"]): c for c in report.checks}
    assert by[("build", "")]["ok"]
    for name, coll, rel, edits, says in BROKEN:
        stage = {"out_of_bounds": "memory", "linear_not_optimal": "optimality"}.get(name, "correctness")
        checks = [c for c in report.checks if (c["stage"], c["algorithm"]) == (stage, name)]
        assert any(not c["ok"] and says in c["detail"] for c in checks), (name, checks)
    assert "rank" in by[("correctness", "wrong_displ")]["detail"]
    hung = by[("correctness", "deadlock_odd")]["detail"]
    assert "p=3" in hung  # the first odd p > 1 is the case named
    oob = by[("memory", "out_of_bounds")]["detail"]
    assert "out_of_bounds.c:" in oob and "BROKEN_out_of_bounds" in oob
    # the other rows were graded after the hang: each row runs on its own
    assert by[("correctness", "no_reorder")]["cases"] > 0
    assert not report.ok


def test_a_kernel_that_fails_only_while_traced_is_correct_and_its_optimality_says_why(
        tmp_path, monkeypatch):
    # correctness and optimality share one job (the traces run after the checked cases):
    # a failure in a trace does not undo the correctness the cases before it showed
    monkeypatch.delenv(WORKSPACE_VAR, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "abort3.c").write_text(renamed_kernel(
        "scatter/scatter_binomial.c", "BROKEN_abort3",
        [("tuw_binomial_tree_create(p, rank, root, &t);",
          "tuw_binomial_tree_create(p, rank, root, &t);\n    if (p == 3 && rank == 1) MPI_Abort(comm, 7);")]))
    (ws / "algorithms.toml").write_text(_row("scatter", "abort3", "BROKEN_abort3"))
    report = grade(ws, ps=(1, 2), bs=(1,), memory=False, opt_ps=[3], stall_limit=hang_guard(30))
    by = {c["stage"]: c for c in report.checks}
    assert by["correctness"]["ok"] and by["correctness"]["cases"] > 0, by["correctness"]
    opt = [c for c in report.checks if c["stage"] == "optimality"]
    assert len(opt) == 4 and not report.ok
    assert all(not c["ok"] and c["detail"].startswith("tracing failed:") and "MPI_Abort" in c["detail"]
               for c in opt), opt
