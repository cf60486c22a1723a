"""The algorithm table is the one list of algorithms, and everything follows from it.

* Every kernel in the table meets bad arguments (root out of range, negative counts) and
  returns the MPI error class before it communicates; a new row is covered unedited.
* A throw-away algorithm (one C file, one table row, one model builder in a temporary
  kernels directory) is listed, verified against the library and traced = modelled with
  no other edit.
* A table and a library that disagree, or C and Python constants that disagree, are
  named at load time.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tuwviz import kernels, model
from tuwviz.collectives import COLLECTIVES
from tuwviz.errors import KernelBuildError
from tuwviz.run.launch import find_mpiexec, mpi_env, run_mpiexec
from tuwviz.problems import make_problem
from tuwviz.table import TableError, load_table
from tuwviz.experiments.verify import verify_cases

from support.sources import REVERSE_C, REVERSE_MODEL, REVERSE_ROW
from support import hang_guard

# --- bad arguments, every kernel of the table ---------------------------------------------

BAD_ARGS_SCRIPT = """
import ctypes, json
from mpi4py import MPI
from tuwviz import kernels
from tuwviz.collectives import COLLECTIVES
from tuwviz.problems import make_problem
from tuwviz.run.runner import _args, make_buffers

lib = kernels.load()
world = MPI.COMM_WORLD
# two-group kernels run on groups {0} and {1, 2}
local = world.Split(0 if world.rank == 0 else 1, world.rank)
inter = local.Create_intercomm(0, world, 1 if world.rank == 0 else 0, tag=7)
out = {}
for row in kernels.algorithms():
    if row.is_library:  # the library checks its own arguments (MPICH may abort instead)
        continue
    comm = inter if row.comm == "inter" else world
    if row.comm == "inter":
        pr = make_problem(row.collective, 1, "same", 2, q=2)
    else:
        pr = make_problem(row.collective, comm.size, "same", 2, root=0, datatype="int")
    bad = [("root", comm.size), ("root", -1)] if COLLECTIVES[row.collective].rooted else []
    codes = []
    for what, value in bad + [("count", -1)]:
        buf = make_buffers(pr, world.rank)
        if what == "count" and row.collective == "reduce_scatter":
            buf.recvcounts[:] = value  # its counts are a vector, the same on every rank
        args = _args(pr, buf)
        if what == "root":
            args.root = value
        else:  # every rank passes a negative own count, so no rank waits for another
            args.sendcount = args.recvcount = value
        rc = lib.tuw_invoke(row.index, ctypes.byref(args), kernels.comm_handle(comm))
        codes.append([what, MPI.Get_error_class(rc) if rc else 0])
    out[row.collective + "/" + row.name] = codes
# one writer: lines printed by several ranks can interleave on a shared pipe
res = world.gather({"rank": world.rank, "codes": out, "root": MPI.ERR_ROOT,
                   "count": MPI.ERR_COUNT}, root=0)
if world.rank == 0:
    print("RESULT " + json.dumps(res), flush=True)
"""


def test_every_kernel_returns_mpi_errors_for_bad_root_and_negative_counts(tmp_path):
    # A root out of range is the same on every rank, so every rank returns MPI_ERR_ROOT
    # before communicating and none hangs; a negative own count gives MPI_ERR_COUNT.
    script = tmp_path / "bad_args.py"
    script.write_text(BAD_ARGS_SCRIPT)
    r = subprocess.run([find_mpiexec(), "-n", "3", sys.executable, str(script)],
                       capture_output=True, text=True, timeout=hang_guard(300),
                       env={**os.environ, **mpi_env(3, timed=False)})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line[len("RESULT "):] for line in r.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, r.stdout + r.stderr
    results = json.loads(lines[0])
    assert sorted(res["rank"] for res in results) == [0, 1, 2]
    rows = [row for row in load_table().rows() if not row.is_library]
    keys = {f"{row.collective}/{row.name}" for row in rows}
    assert "gatherv/linear" in keys
    for res in results:
        assert set(res["codes"]) == keys  # every kernel of the table
        for row in rows:
            expected = ([["root", res["root"]], ["root", res["root"]]]
                        if COLLECTIVES[row.collective].rooted else [])
            expected.append(["count", res["count"]])
            key = f"{row.collective}/{row.name}"
            assert res["codes"][key] == expected, (res["rank"], key)


# --- a throw-away algorithm: one C file, one row, one model builder -----------------------



def test_a_new_algorithm_is_one_c_file_one_row_one_model(kernels_copy, cli):
    (kernels_copy / "gatherv" / "gatherv_reverse.c").write_text(REVERSE_C)
    (kernels_copy / "gatherv" / "gatherv_reverse.py").write_text(REVERSE_MODEL)
    table = kernels_copy / "algorithms.toml"
    table.write_text(table.read_text() + REVERSE_ROW)

    r = cli("list")
    assert r.returncode == 0, r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if ln.split()[:2] == ["gatherv", "reverse"]]
    assert "throw-away test algorithm" in line and line.split()[2] == "yes"  # has a model

    r = cli("verify", "--np", "1-4", "--collective", "gatherv", "--algorithms", "reverse",
            timeout=hang_guard(900))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all cases match the MPI library" in r.stdout
    (row,) = [ln for ln in r.stdout.splitlines() if ln.split()[:2] == ["gatherv", "reverse"]]
    # the cases of every in-place gatherv row without parameters, e.g. linear's: per p and
    # root 6 distributions x b = 1, 17, each distinct set of blocks of b = 0, 7 datatype pairs
    cases = len(verify_cases(["gatherv"], ["linear"], range(1, 5)))
    assert 9 * (6 * 2 + 1 + 7) <= cases < 9 * (6 * 3 + 7)
    assert row.split()[2:5] == [str(cases), str(cases), "0"]

    assert "reverse" in model.SCHEDULES["gatherv"]
    problems = [make_problem("gatherv", 5, d, 2, root=r, seed=3)
                for d in ("same", "spikes", "two_blocks") for r in (0, 2, 4)]
    cases = [{"mode": "trace", "problem": pr.to_dict(), "algorithm": "reverse", "params": {}}
             for pr in problems]
    traces = {}
    run_mpiexec(5, cases, lambda k, case, res: traces.__setitem__(k, res))
    compared = 0
    for k, pr in enumerate(problems):
        sched = model.schedule("gatherv", "reverse", pr)
        for rank in range(pr.p):
            got = [(e["dir"], e["peer"], e["bytes"]) for e in traces[k][rank]]
            assert got == sched.messages(rank), (pr.label(), rank)
            compared += len(got)
        senders = [i for i in range(pr.p) if i != pr.root and pr.counts[i] > 0]
        assert [e["peer"] for e in traces[k][pr.root]] == senders[::-1]  # really reversed
    assert compared > 20


def test_a_row_without_a_model_is_listed_and_verified(kernels_copy, cli):
    """The model builder is optional: verify compares with the library and needs none
    (the README's "Writing a kernel" says so)."""
    (kernels_copy / "gatherv" / "gatherv_reverse.c").write_text(REVERSE_C)
    table = kernels_copy / "algorithms.toml"
    row = REVERSE_ROW.replace('model = "gatherv/gatherv_reverse.py:reverse"\n', "")
    assert "model" not in row
    table.write_text(table.read_text() + row)

    r = cli("list", "--collective", "gatherv")
    assert r.returncode == 0, r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if ln.split()[:2] == ["gatherv", "reverse"]]
    assert line.split()[2] == "-"  # no model
    r = cli("verify", "--np", "2", "--collective", "gatherv", "--algorithms", "reverse",
            timeout=hang_guard(900))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all cases match the MPI library" in r.stdout
    r = cli("model", "gatherv", "reverse")
    assert r.returncode == 2 and "no model for algorithm 'reverse'" in r.stderr


# --- mismatches are named at load time ----------------------------------------------------


def test_row_without_c_function_names_the_row(kernels_copy):
    table = kernels_copy / "algorithms.toml"
    table.write_text(table.read_text() + REVERSE_ROW)  # the row, but no C file
    with pytest.raises(KernelBuildError, match="TUW_Gatherv_reverse") as err:
        kernels.load(kernels_copy)
    assert "gatherv/reverse" in str(err.value)


def test_c_and_python_constants_that_differ_are_named(kernels_copy):
    header = kernels_copy / "include" / "tuwviz.h"
    text = header.read_text()
    swapped = text.replace("TUW_RING_SMP = 1, TUW_RING_SPREAD = 2",
                           "TUW_RING_SMP = 2, TUW_RING_SPREAD = 1")
    assert swapped != text
    header.write_text(swapped)
    with pytest.raises(KernelBuildError,
                       match=r"TUW_RING_SMP is 2 in C but 1 in Python.*TUW_RING_SPREAD"):
        kernels.load(kernels_copy)


def test_struct_layout_that_differs_is_named(kernels_copy):
    header = kernels_copy / "include" / "tuwviz.h"
    text = header.read_text()
    grown = text.replace("    int root;\n} tuw_args;", "    int extra;\n    int root;\n} tuw_args;")
    assert grown != text
    header.write_text(grown)
    with pytest.raises(KernelBuildError, match=r"offsetof tuw_args.root is 76 in C but 72 in Python"):
        kernels.load(kernels_copy)


LINEAR_ROW = '''collective = "gatherv"
name = "linear"
function = "TUW_Gatherv_linear"
in_place = true
'''


@pytest.mark.parametrize("new, message", [
    (LINEAR_ROW, "gatherv/linear is listed twice"),
    (LINEAR_ROW + 'restrictions = ["sorted"]\n', "unknown restriction 'sorted'"),
])
def test_bad_table_rows_are_named(kernels_copy, new, message):
    table = kernels_copy / "algorithms.toml"
    text = table.read_text()
    if "twice" in message:
        text += "\n[[algorithm]]\n" + new + "description = \"again\"\n"
    else:  # the real row, with a restriction nobody knows
        text = text.replace(LINEAR_ROW, new, 1)
    table.write_text(text)
    with pytest.raises(TableError, match=message) as err:
        load_table(kernels_copy)
    assert "algorithms.toml" in str(err.value)


def test_model_builder_that_does_not_exist_is_named(kernels_copy):
    table = kernels_copy / "algorithms.toml"
    text = table.read_text()
    table.write_text(text.replace('model = "tuwviz.model.gatherv:linear"',
                                  'model = "tuwviz.model.gatherv:nope"'))
    row = load_table(kernels_copy).find("gatherv", "linear")
    with pytest.raises(TableError, match="tuwviz.model.gatherv has no function 'nope'"):
        row.builder()


def test_list_shows_restrictions_and_parameters(cli):
    r = cli("list", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    by_key = {(d["collective"], d["algorithm"]): d for d in rows["algorithms"]} \
        if isinstance(rows, dict) else {(d["collective"], d["algorithm"]): d for d in rows}
    table = load_table()
    assert set(by_key) == {(row.collective, row.name) for row in table}
    pipelined = by_key["allgatherv", "pipelined"]
    assert [q["name"] for q in pipelined["parameters"]] == [q.name for q in
                                                          table.find("allgatherv", "pipelined").params]
    r = cli("list")
    assert "restrictions" in r.stdout and "--block-bytes" in r.stdout
    for row in table:
        (line,) = [ln for ln in r.stdout.splitlines() if ln.split()[:2] == [row.collective, row.name]]
        assert ", ".join(q.name for q in row.params) in line or not row.params
