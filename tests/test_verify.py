"""Verification against the MPI library on real MPI ranks, and that it catches wrong kernels."""
import json
import shutil

import pytest

from tuwviz import kernels
from tuwviz.verify import verify, verify_cases


def test_cli_verify_np_1_to_9_passes(cli):
    r = cli("verify", "--np", "1-9")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all cases match the MPI library" in r.stdout
    # every collective and algorithm appears in the table, with no failures
    for name in ["gather ", "gatherv", "scatterv", "allreduce", "reduce_scatter_block", "linear"]:
        assert name in r.stdout
    assert "FAIL" not in r.stdout


def test_cases_cover_roots_distributions_and_empty_blocks():
    cases = verify_cases(["gatherv"], ["linear"], ps=[1, 2, 7])
    roots = {(c["problem"]["p"], c["problem"]["root"]) for c in cases}
    assert roots == {(1, 0), (2, 0), (2, 1), (7, 0), (7, 3), (7, 6)}
    assert {c["problem"]["distribution"] for c in cases} == {
        "same", "random", "spikes", "decreasing", "alternating", "two_blocks"}
    assert any(sum(c["problem"]["counts"]) == 0 for c in cases)  # b = 0: all blocks empty


@pytest.fixture
def broken_linear(tmp_path, monkeypatch):
    """A copy of the kernels whose linear Gatherv puts block i one element too far."""
    src = tmp_path / "kernels_c"
    shutil.copytree(kernels.KERNELS_DIR, src)
    c_file = src / "gatherv" / "gatherv_linear.c"
    text = c_file.read_text()
    wrong = text.replace("(MPI_Aint)displs[i] * extent", "(MPI_Aint)(displs[i] + 1) * extent")
    assert wrong != text
    c_file.write_text(wrong)
    monkeypatch.setenv("TUWVIZ_KERNELS", str(src))
    monkeypatch.setenv("TUWVIZ_BUILD_DIR", str(tmp_path / "build"))
    return src


def test_a_wrong_kernel_is_caught_and_located(broken_linear):
    report = verify(["gatherv"], ["linear"], ps=[4], dists=["same"], bs=[2], roots=[3])
    assert not report.ok
    (failure,) = report.failures()
    (m,) = failure["mismatches"]
    # block of rank 0 (8 bytes at offset 0) lands at offset 4: byte 0 is the sentinel
    assert (failure["p"], failure["root"], m["rank"], m["offset"]) == (4, 3, 3, 0)
    assert m["got"] == 0x5A
    text = report.table()
    assert "FAIL gatherv/linear p=4 root=3 dist=same b=2: rank 3: first differing byte at offset 0" in text


def test_cli_verify_fails_with_exit_1_and_json_report(broken_linear, cli):
    r = cli("verify", "--np", "3", "--collective", "gatherv", "--algorithms", "linear",
            "--dist", "same", "--b", "1", "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["ok"] is False and report["failures"][0]["algorithm"] == "linear"


def test_cli_verify_bad_input(cli):
    r = cli("verify", "--np", "4", "--roots", "4")
    assert r.returncode == 2 and "root 4 out of range 0..3" in r.stderr
    r = cli("verify", "--np", "4", "--algorithms", "nope")
    assert r.returncode == 2 and "valid algorithms:" in r.stderr and "linear" in r.stderr
    r = cli("verify", "--np", "100")
    assert r.returncode == 2 and "at most" in r.stderr
