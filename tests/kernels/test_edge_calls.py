"""The two kernel bugs MPICH's own collective tests found, as calls of this project, and
verify's checks that catch their kind.

1. ``allgather/circulant`` returned MPI_ERR_NO_MEM on rank 0 for a zero-size call with
   NULL buffers (it took its own NULL recvbuf for a failed allocation) while the other
   ranks waited for it forever.  Every kernel now takes such calls, with and without
   MPI_IN_PLACE, at every N from 1 to 17 (1 to 8 in the quick run), on one group and on
   two.
2. ``allreduce/circulant`` gave ranks different floating-point sums: each rank adds the
   inputs in its own order.  Every Allreduce kernel now gives every rank the same bits,
   for float and double, sum, product, max, min and a user-defined sum, at every N.

``tuwviz verify`` has both as checks (the ``null`` and ``null-in-place`` pairs, and the
bitwise agreement of results every rank shares); each fails a planted kernel with the bug.
The calls themselves are in ``tests/kernels/edge_calls.py``: one mpiexec of 8 ranks per kind (N =
1..8) in the quick run, one of 17 (N = 9..17) in the full run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tuwviz import config
from tuwviz.collectives import collective
from tuwviz.run.launch import local_mpi_command, mpi_env, record_launch
from tuwviz.table import load_table

from support import REPO, hang_guard

#: (first N, last N = ranks of the launch): the quick run's sizes, and the full run's rest
SIZES = {"quick": (1, 8), "full": (9, 17)}
TIERS = ["quick", pytest.param("full", marks=pytest.mark.full)]


def _edge_calls(what: str, tier: str) -> dict:
    first, n = SIZES[tier]
    record_launch("mpiexec", n)  # counted by tests/support/budget.py
    r = subprocess.run([*local_mpi_command(), "-n", str(n), sys.executable,
                        str(REPO / "tests" / "kernels" / "edge_calls.py"), what, str(first)],
                       capture_output=True, text=True, timeout=hang_guard(900), cwd=REPO,
                       env={**os.environ, **mpi_env(n, timed=False)})
    started = [ln for ln in r.stdout.splitlines() if ln.startswith("START ")]
    assert r.returncode == 0, (f"last call started: {started[-1:]}\n" + r.stdout[-2000:]
                               + r.stderr[-3000:])
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    result = json.loads(line.split(" ", 1)[1])
    assert result["calls"] == len(started)
    return result


def _zero_size_calls(sizes: range) -> int:
    """How many calls edge_calls.py zero makes: every row, every N of `sizes`, roots 0 and
    N-1, in place or not; two-group rows on the splits (N-1, 1) and (N - N//2, N//2)."""
    n = 0
    for row in load_table().rows():
        for size in sizes:
            kinds = []
            if row.comm in ("intra", "any"):
                kinds.append(("intra", len({0, size - 1}) if collective(row.collective).rooted
                              else 1))
            if row.comm in ("inter", "any"):
                kinds += [("inter", 1)] * len({k for k in (1, size // 2) if 1 <= k < size})
            for kind, roots in kinds:
                n += roots * (2 if row.in_place and kind == "intra" else 1)
    return n


@pytest.mark.parametrize("tier", TIERS)
def test_every_kernel_takes_a_zero_size_call_with_null_buffers_at_every_n(tier):
    result = _edge_calls("zero", tier)
    assert result["failed"] == []
    first, last = SIZES[tier]
    assert result["calls"] == _zero_size_calls(range(first, last + 1))


@pytest.mark.parametrize("tier", TIERS)
def test_every_allreduce_gives_every_rank_the_same_bits_at_every_n(tier):
    result = _edge_calls("agree", tier)
    assert result["failed"] == []
    rows = [r for r in load_table().rows() if r.collective == "allreduce" and r.comm != "inter"]
    # sizes x rows x (float, double) x (sum, prod, max, min, user_sum) x (in place or not)
    first, last = SIZES[tier]
    assert result["calls"] == (last - first + 1) * len(rows) * 2 * 5 * 2


# Planted kernels with the two bugs, made from today's sources so they stay close to them.
def _plant(kernels_copy, collective_name: str, source: str, name: str, bug) -> None:
    src = (config.KERNELS_DIR / collective_name / f"{collective_name}_{source}.c").read_text()
    fn = f"TUW_{collective_name.capitalize()}_{source}"
    planted = bug(src).replace(fn, f"TUW_{collective_name.capitalize()}_{name}")
    assert planted != src.replace(fn, f"TUW_{collective_name.capitalize()}_{name}"), "bug not planted"
    (kernels_copy / collective_name / f"{collective_name}_{name}.c").write_text(planted)
    table = kernels_copy / "algorithms.toml"
    table.write_text(table.read_text() + f'''
[[algorithm]]
collective = "{collective_name}"
name = "{name}"
function = "TUW_{collective_name.capitalize()}_{name}"
restrictions = {'["commutative"]' if collective(collective_name).reduction else "[]"}
in_place = true
description = "throw-away test kernel with a planted bug"
''')


def _rotating(src: str) -> str:
    """The paper's circulant Allreduce as it was: every rank adds in its own order."""
    lines = [ln for ln in src.splitlines(keepends=True) if "tuw_order_free" not in ln
             and "return TUW_Allreduce_butterfly(" not in ln]
    return "".join(lines)


def test_verify_fails_an_allreduce_whose_ranks_disagree(kernels_copy, cli):
    _plant(kernels_copy, "allreduce", "circulant", "rotating", _rotating)
    r = cli("verify", "--collective", "allreduce", "--algorithms", "rotating", "--np", "2-4",
            "--b", "5", "--ops", "double:sum:random,int:sum,double:max", timeout=hang_guard(600))
    assert r.returncode == 1, r.stdout + r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("FAIL allreduce/rotating")]
    assert "p >= 3" in line and "double:sum" in line, line  # p = 2: one order only
    assert "is not rank 0's bit for bit" in line, line
    # integers are exact in every order, the maximum too: the same kernel passes there
    assert "int:sum" not in line and "double:max" not in line, line
    assert "18 cases: 2 cases FAILED" in r.stdout, r.stdout  # double:sum at p = 3 and 4


def _null_is_no_mem(src: str) -> str:
    """The circulant Allgather as it was: its own NULL recvbuf taken for a failed malloc."""
    start = src.index("        if (rank == 0) { /* recvbuf itself")
    end = src.index("        if (!in_place)", start)
    return src[:start] + '''        upprbuf = rank == 0 ? rbuf + (MPI_Aint)last * bs
                            : tuw_alloc_elems((MPI_Aint)(p - last) * recvcount, recvtype, &mem);
        if (!upprbuf)
            return MPI_ERR_NO_MEM;
''' + src[end:]


def test_verify_fails_a_kernel_that_errs_on_a_zero_size_call(kernels_copy, cli):
    _plant(kernels_copy, "allgather", "circulant", "nullbug", _null_is_no_mem)
    # a kernel's MPI error ends the run: the cases with data (run first) pass, then the
    # zero-size call with NULL buffers fails, named; the in-place one in a run of its own
    for pairs, bad in (("same,in-place,null", "null"), ("null-in-place", "null-in-place")):
        r = cli("verify", "--collective", "allgather", "--algorithms", "nullbug", "--np", "3",
                "--types", pairs, "--json", timeout=hang_guard(600))
        assert r.returncode == 1, r.stdout + r.stderr
        report = json.loads(r.stdout)
        aborted = report["aborted"]
        assert "TUW_Allgather_nullbug returned MPI error" in aborted["message"], aborted
        assert aborted["case"]["types"] == bad, aborted
        assert report["failures"] == []  # every case before it was right: those with data
        assert report["cases"] == (4 if bad == "null" else 0), report["summary"]


def test_list_says_what_identical_results_cost(cli):
    r = cli("list", "--collective", "allreduce")
    assert r.returncode == 0, r.stderr
    notes = r.stdout.split("\nnotes:\n", 1)[1]
    assert notes.startswith("  allreduce/circulant: every rank gets the same bits.")
    assert "one round more" in notes and "Measured here" in notes
    rows = json.loads(cli("list", "--collective", "allreduce", "--json").stdout)
    note = {r["algorithm"]: r["note"] for r in rows}
    assert note["circulant"] == load_table().find("allreduce", "circulant").note
    assert note["butterfly"] is None
