"""Verification against the MPI library on real MPI ranks, and that it catches wrong kernels."""
import json
import shutil
from collections import Counter

import pytest

from tuwviz import config
from tuwviz.run import typepairs
from tuwviz.collectives import COLLECTIVES
from tuwviz.errors import RankFailure
from tuwviz.table import load_table
from tuwviz.run.typepairs import NULL_PAIRS, pairs_for
from tuwviz.experiments.verify import verify, verify_cases

from support import SAMPLED_BS, SAMPLED_PS, hang_guard


def _row(case: dict) -> tuple[str, str]:
    return case["problem"]["collective"], case["algorithm"]


# The quick run crosses the reductions with the paper's byte:bor and random doubles; the full
# run with every datatype:op of tuwviz.problems.REDUCTION_TYPES (the default).
QUICK_OPS = "byte:bor,double:sum:random"


def _check_cli_sweep(cli, ps, bs, ops, collectives=None, roots=None, types=None):
    # every algorithm of the table x every distribution x every parameter variant x every
    # datatype pair (the default) x the roots (default 0, p/2, p-1), in one mpiexec job
    r = cli("verify", "--np", ",".join(map(str, ps)), "--b", ",".join(map(str, bs)), "--json",
            *(["--ops", ops] if ops else []), *(["--roots", roots] if roots else []),
            *(["--types", types] if types else []),
            *(["--collective", ",".join(collectives)] if collectives else []))
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["ok"] and out["complete"] and not out["failures"], r.stdout[-3000:]
    # every row of the algorithm table ran every case the sweep has for it, pairs included
    roots = roots.split(",") if roots else None
    expected = Counter(_row(c) for c in verify_cases(
        collectives, None, ps, bs=bs, ops=ops.split(",") if ops else None, roots=roots,
        types=types.split(",") if types else None))
    # one group: the two-group rows are tests/kernels/test_intergroup.py's
    rows = {(row.collective, row.name) for row in load_table() if row.serves("intra")
            and (collectives is None or row.collective in collectives)}
    assert rows == set(expected)
    # every row also ran b = 0 with real buffers (all blocks empty), once, not per
    # distribution
    if 0 in bs:
        empty = Counter(_row(c) for c in verify_cases(
            collectives, None, ps, bs=[0], ops=ops.split(",") if ops else None, roots=roots)
            if c.get("types", "same") == "same")
        assert set(empty) == rows
        assert all(empty[r] < expected[r] for r in rows)
    assert {(s["collective"], s["algorithm"]): s["cases"] for s in out["summary"]} == expected
    assert all(s["passed"] == s["cases"] for s in out["summary"])


def test_cli_verify_passes_for_every_algorithm(cli):
    # the sampled p, roots 0 and p-1 (the full run: p/2 too, every p up to 17;
    # tests/run/test_datatypes.py every root for the pairs)
    _check_cli_sweep(cli, SAMPLED_PS, SAMPLED_BS, QUICK_OPS, roots="0,p-1")


@pytest.mark.full
@pytest.mark.parametrize("collective", list(COLLECTIVES))
def test_cli_verify_passes_for_every_algorithm_and_every_p_up_to_17(cli, collective):
    # every p up to 17, every b of the default and every datatype:op of the reductions, one
    # collective per run: each run keeps its own hang guard, and a failure names it.  One
    # datatype on both sides where tests/run/test_datatypes.py runs every pair at every root of
    # every p up to 17 (a superset of this sweep's roots); the reductions' pairs run here
    types = "same" if collective in typepairs.COLLECTIVES else None
    _check_cli_sweep(cli, range(1, 18), (0, 1, 17), None, [collective], types=types)


# Issue 69: the zero-size call's count vectors had 32 entries, so from p = 33 up the
# library (and the kernels) read whatever followed them: MPICH refused 'Negative count' at
# the first Gatherv.  Above every former fixed size, on one group and on two; the group of
# one reads the other group's 40 entries (with 32 it failed; 33 happened to pass).  The
# quick tier runs one group (the vectors are typepairs.null_args's either way).
@pytest.mark.parametrize("where", [
    ("--np", "33"),
    pytest.param(("--groups", "1,40"), marks=pytest.mark.full),
    pytest.param(("--np", "48"), marks=pytest.mark.full),
    pytest.param(("--groups", "40,1", "24,24"), marks=pytest.mark.full),
], ids=" ".join)
def test_the_zero_size_calls_pass_above_32_processes(cli, where):
    inter = where[0] == "--groups"
    types = ["null"] if inter else list(NULL_PAIRS)
    r = cli("verify", *where, "--types", ",".join(types), "--json", timeout=hang_guard(600))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert out["ok"] and out["complete"] and not out["failures"], r.stdout[-3000:]
    # every algorithm of every collective made its zero-size calls, and passed them all
    sweep = (dict(groups=list(where[1:])) if inter else dict(ps=[int(where[1])]))
    expected = Counter(_row(c) for c in verify_cases(types=types, **sweep))
    assert set(expected) == {(row.collective, row.name) for row in load_table()
                             if row.serves("inter" if inter else "intra")}
    assert {(s["collective"], s["algorithm"]): s["passed"] for s in out["summary"]} == expected


def test_the_default_sweep_crosses_every_datatype_pair_with_data():
    cases = verify_cases(None, None, SAMPLED_PS, bs=SAMPLED_BS)
    for row in (r for r in load_table() if r.serves("intra")):
        pairs = {c.get("types", "same") for c in cases if _row(c) == (row.collective, row.name)}
        assert pairs == set(pairs_for(row.collective)), (row, pairs)
    # a pair case moves data (the largest b), it is not an empty run; the null pairs are
    # the zero-size calls
    pair_cases = [c for c in cases if c.get("types", "same") != "same"]
    assert all(sum(c["problem"]["counts"]) > 0 for c in pair_cases
               if c["types"] not in NULL_PAIRS and c["problem"]["p"] > 1
               and c["problem"]["distribution"] == "same")
    assert all(sum(c["problem"]["counts"]) == 0 for c in pair_cases if c["types"] in NULL_PAIRS)


def test_cases_cover_roots_distributions_and_empty_blocks():
    cases = verify_cases(["gatherv"], ["linear"], ps=[1, 2, 7])
    roots = {(c["problem"]["p"], c["problem"]["root"]) for c in cases}
    assert roots == {(1, 0), (2, 0), (2, 1), (7, 0), (7, 3), (7, 6)}
    assert {c["problem"]["distribution"] for c in cases} == {
        "same", "random", "spikes", "decreasing", "alternating", "two_blocks"}
    assert any(sum(c["problem"]["counts"]) == 0 for c in cases)  # b = 0: all blocks empty
    # b = 0 gives most distributions the same empty blocks: each distinct one runs once
    # per p and root, not once per distribution
    empty = [(c["problem"]["p"], c["problem"]["root"], tuple(c["problem"]["counts"]))
             for c in cases if c.get("types", "same") == "same" and c["problem"]["b"] == 0]
    assert len(empty) == len(set(empty)) and len(empty) < 3 * len(roots)
    assert {(p, r) for p, r, counts in empty if not any(counts)} == roots


@pytest.fixture
def broken_linear(tmp_path, monkeypatch):
    """A copy of the kernels whose linear Gatherv puts block i one element too far."""
    src = tmp_path / "kernels_c"
    shutil.copytree(config.KERNELS_DIR, src)
    c_file = src / "gatherv" / "gatherv_linear.c"
    text = c_file.read_text()
    wrong = text.replace("(MPI_Aint)displs[i] * extent", "(MPI_Aint)(displs[i] + 1) * extent")
    assert wrong != text
    c_file.write_text(wrong)
    monkeypatch.setenv("TUWVIZ_KERNELS", str(src))
    monkeypatch.setenv("TUWVIZ_BUILD_DIR", str(tmp_path / "build"))
    return src


def test_a_wrong_kernel_is_caught_and_located(broken_linear):
    report = verify(["gatherv"], ["linear"], ps=[4], dists=["same"], bs=[2], roots=[3],
                    types=["same"])  # one datatype: told in elements
    assert not report.ok
    (failure,) = report.failures()
    (m,) = failure["mismatches"]
    # block of rank 0 (elements 0-1) lands at element 1: element 0 keeps the fill pattern
    assert (failure["p"], failure["root"], m["rank"], m["block"], m["element"]) == (4, 3, 3, 0, 0)
    assert m["got"] == 0x5A5A5A5A and m["never_written"] and m["datatype"] == "int"
    # the root copies its own block (3, not shifted) while block 2 arrives one element too
    # far, onto block 3's first element: which write lands last is up to MPI
    assert m["blocks"] in ([0, 1, 2], [0, 1, 2, 3]) and 6 <= m["elements"] <= 8
    text = report.table()
    assert ("FAIL gatherv/linear: wrong in every case (1 cases); first: p=4 root=3 dist=same "
            "b=2: at rank 3: rank 0's block, element 0 (byte 0 of the buffer): expected ") in text


def _kernel_copy(src, *edits: tuple[str, str]):
    """`src`, a copy of the kernels (the `kernels_copy` fixture, which the ranks use), with
    edits (old, new) to the linear Gatherv."""
    c_file = src / "gatherv" / "gatherv_linear.c"
    text = c_file.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    c_file.write_text(text)
    return src


def test_mismatches_are_grouped_and_told_in_elements(kernels_copy, cli):
    # off by one element only for p >= 3 and a root other than 0 (the pattern)
    _kernel_copy(kernels_copy, ("(MPI_Aint)displs[i] * extent",
                                "(MPI_Aint)(displs[i] + (p >= 3 && root != 0)) * extent"))
    r = cli("verify", "--np", "1-4", "--collective", "gatherv", "--algorithms", "linear",
            "--dist", "same", "--b", "5", "--types", "same")
    assert r.returncode == 1, r.stdout + r.stderr
    fails = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    # one line for the algorithm, whatever the number of failing cases
    assert fails == [
        "FAIL gatherv/linear: wrong for every case with p >= 3 and root != 0 (4 of 9 cases); "
        "first: p=3 root=1 dist=same b=5: at rank 1: rank 0's block, element 0 (byte 0 of the buffer): expected "
        f"{_first_element(3, 0)}, got 1515870810 (never written); 11 of 15 int elements "
        "differ, in the blocks of ranks 0-2"], r.stdout
    assert "bytes differ" not in r.stdout  # told in elements (with the byte offset), not bytes
    # --json keeps every case, element by element
    r = cli("verify", "--np", "1-4", "--collective", "gatherv", "--algorithms", "linear",
            "--dist", "same", "--b", "5", "--types", "same", "--json")
    report = json.loads(r.stdout)
    assert [(f["p"], f["root"]) for f in report["failures"]] == [(3, 1), (3, 2), (4, 2), (4, 3)]
    m = report["failures"][-1]["mismatches"][0]
    assert (m["rank"], m["block"], m["element"], m["never_written"]) == (3, 0, 0, True)
    assert report["groups"][0]["where"] == "p >= 3 and root != 0"


def _first_element(p: int, rank: int) -> int:
    """Element 0 of `rank`'s send block, as the runner makes it."""
    from tuwviz.problems import make_problem
    from tuwviz.run.runner import make_buffers

    return int(make_buffers(make_problem("gatherv", p, "same", 5, root=1), rank).send[0])


def test_a_crashing_kernel_names_case_signal_and_output_and_keeps_results(kernels_copy, cli):
    # the root writes through a null pointer once p >= 3, after saying so on stderr
    _kernel_copy(kernels_copy, ("#include <stdlib.h>", "#include <stdio.h>\n#include <stdlib.h>"),
                ("    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);\n",
                 "    rc = TUW_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);\n"
                 "    if (p >= 3) {\n"
                 "        fprintf(stderr, \"linear: about to write through NULL\\n\");\n"
                 "        *(volatile int *)0 = 1;\n"
                 "    }\n"))
    args = ["verify", "--np", "2,3", "--collective", "gatherv", "--algorithms", "linear",
            "--dist", "same", "--b", "1", "--types", "same"]
    r = cli(*args)
    assert r.returncode == 1
    # the two p = 2 cases finished before the crash: their table is printed
    assert "gatherv     linear     2      2       0       2-2" in r.stdout, r.stdout
    assert "2 cases finished before the run was aborted" in r.stdout
    err = r.stderr
    assert "error: rank 0 died" in err and "killed by signal SIGSEGV" in err, err
    assert "running: gatherv/linear p=3 root=0 dist=same b=1 (case 3 of 5; 2 finished" in err
    assert "last output of rank 0:\n    linear: about to write through NULL" in err
    r = cli(*args, "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["ok"] is False and report["complete"] is False and report["cases"] == 2
    assert [row["cases"] for row in report["summary"]] == [2]
    failure = report["aborted"]
    assert failure["rank"] == 0 and "SIGSEGV" in failure["how"]
    assert (failure["case"]["p"], failure["case"]["root"], failure["case"]["b"]) == (3, 0, 1)
    assert failure["output"][-1] == "linear: about to write through NULL"
    assert failure["output_from"] == "rank 0"
    # the Python API: the same facts in the exception, the finished cases on it; on 12
    # ranks, where mpiexec.gforker would take a second per rank to say how they ended (past
    # the launch's grace), the rank's own fault handler names the signal
    with pytest.raises(RankFailure, match="running: gatherv/linear p=12 root=0") as info:
        verify(["gatherv"], ["linear"], ps=[2, 12], dists=["same"], bs=[1], types=["same"],
               stall_limit=hang_guard(120))
    assert len(info.value.report.results) == 2 and info.value.report.aborted is info.value
    assert info.value.rank == 0 and "SIGSEGV" in info.value.how, info.value
    assert info.value.output[-1] == "linear: about to write through NULL"


def test_cli_verify_fails_with_exit_1_and_json_report(broken_linear, cli):
    r = cli("verify", "--np", "3", "--collective", "gatherv", "--algorithms", "linear",
            "--dist", "same", "--b", "1", "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["ok"] is False and report["failures"][0]["algorithm"] == "linear"


def test_cli_verify_bad_input(cli):
    r = cli("verify", "--np", "4", "--roots", "4")
    assert r.returncode == 2 and "root 4 out of range 0..3" in r.stderr
    r = cli("verify", "--np", "1,4", "--roots", "0,p-2")  # relative roots resolve per p
    assert r.returncode == 2 and "root p-2 = -1 out of range 0..0 for p=1" in r.stderr
    r = cli("verify", "--np", "4", "--roots", "p+1")
    assert r.returncode == 2 and "'p+1' is not a root (give numbers, ranges like 0-2, p/2 " \
        "or p-K)" in r.stderr
    r = cli("verify", "--np", "4", "--algorithms", "nope")
    assert r.returncode == 2 and "valid algorithms:" in r.stderr and "linear" in r.stderr
    r = cli("verify", "--np", "100")
    assert r.returncode == 2 and "at most" in r.stderr
