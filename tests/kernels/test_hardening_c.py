"""Hardening of the C side (issue 9): range-checked setters, tuning parameters that differ
between ranks, counts MPI's ints cannot hold.  Real ranks through mpiexec, no mocks; every
run has a hang guard, since the bugs fixed here were hangs."""
from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tuwviz import kernels
from tuwviz.run import runner
from tuwviz.run.launch import find_mpiexec, mpi_env
from tuwviz.table import load_table

from support import MPI_ERR_ARG, MPI_SUCCESS, hang_guard



@pytest.fixture(scope="module")
def lib(kernel_lib):
    return kernel_lib


# --- setters ------------------------------------------------------------------------------


def test_c_setters_refuse_out_of_range_values(lib):
    lib.tuw_reset_params()
    assert lib.tuw_set_block_bytes(4096) == MPI_SUCCESS and lib.tuw_get_block_bytes() == 4096
    assert lib.tuw_set_block_bytes(-1) == MPI_ERR_ARG
    assert lib.tuw_get_block_bytes() == 0  # the default, not a clamped or stale value
    for bad in (float("nan"), float("inf"), -1.0):
        assert lib.tuw_set_cost_alpha(bad) == MPI_ERR_ARG, bad
        assert lib.tuw_set_cost_beta(bad) == MPI_ERR_ARG, bad
        assert lib.tuw_set_cost_model(bad, 1e-9) == MPI_ERR_ARG, bad
    assert lib.tuw_set_cost_alpha(2e-6) == MPI_SUCCESS
    assert lib.tuw_set_ring_order(7) == MPI_ERR_ARG and lib.tuw_get_ring_order() == 0
    assert lib.tuw_set_ring_order(-1) == MPI_ERR_ARG
    assert lib.tuw_set_node_map(2, (ctypes.c_int * 2)(0, -3)) == MPI_ERR_ARG
    lib.tuw_reset_params()


@pytest.mark.parametrize("name,value", [
    ("block_bytes", 2**63), ("block_bytes", -1), ("block_bytes", -2**63 - 1),
    ("alpha", float("nan")), ("alpha", -1.0), ("beta", float("inf")),
    ("nodes", [0, 2**31]), ("nodes", [0, -1])])
def test_parameter_set_raises_on_values_c_cannot_take(lib, name, value):
    with pytest.raises(ValueError, match=name):
        load_table().parameter(name).set(lib, value)
    lib.tuw_reset_params()
    load_table().parameter("block_bytes").set(lib, 2**63 - 1)  # the largest that fits
    assert lib.tuw_get_block_bytes() == 2**63 - 1
    lib.tuw_reset_params()


# --- sizes the runner cannot pass ---------------------------------------------------------


def test_prefix_rejects_displacements_beyond_int():
    with pytest.raises(ValueError, match="2147483648"):
        runner._prefix([2**30, 2**30, 5])
    assert list(runner._prefix([2**30, 2**30 - 1, 5])) == [0, 2**30, 2**31 - 1]


@pytest.mark.parametrize("coll,counts,match", [
    ("gatherv", (2**30, 2**30, 5), "displacement of rank 2 would be 2147483648"),
    ("allgatherv", (2**31, 1, 1), "count of rank 0 is 2147483648"),
    ("gather", (2**30, 1, 1), "3221225472 elements")])
def test_make_buffers_rejects_sizes_before_allocating(coll, counts, match):
    from tuwviz.problems import Problem

    pr = Problem(collective=coll, p=3, root=0, counts=counts, datatype="byte")
    with pytest.raises(ValueError, match=match):
        runner.make_buffers(pr, 0)  # would allocate > 2 GB if it got that far


# --- real ranks ---------------------------------------------------------------------------

# Each case: an algorithm, counts, per-rank settings through the C setters ("c") or through
# tuwviz.run.runner ("runner": run_kernel; "measure": run_case in measure mode, i.e. tuw_time).
# Buffers are tiny whatever the counts: the overflow cases must fail before touching them.
ENGINE = textwrap.dedent(r'''
    import ctypes, json, sys
    import numpy as np
    from mpi4py import MPI
    from tuwviz import kernels
    from tuwviz.run import runner
    from tuwviz.problems import Problem
    RING = {"rank": 0, "smp": 1, "spread": 2}
    lib = kernels.load()
    world = MPI.COMM_WORLD
    for case in json.load(open(sys.argv[1])):
        comm = world.Split(0 if world.rank < case["p"] else MPI.UNDEFINED, world.rank)
        if comm == MPI.COMM_NULL:
            continue
        prm = case.get("params", [{}] * case["p"])[comm.rank]
        out = {"rank": comm.rank}
        if case["via"] == "c":
            lib.tuw_reset_params()
            if "block_bytes" in prm: lib.tuw_set_block_bytes(prm["block_bytes"])
            if "alpha" in prm: lib.tuw_set_cost_alpha(prm["alpha"])
            if "ring" in prm: lib.tuw_set_ring_order(RING[prm["ring"]])
            if "nodes" in prm:
                lib.tuw_set_node_map(len(prm["nodes"]), (ctypes.c_int * len(prm["nodes"]))(*prm["nodes"]))
            counts = np.array(case["counts"], dtype=np.int64)
            displs = case.get("displs") or [0] * case["p"]
            tiny = np.zeros(64, np.uint8)
            c32 = np.array(counts, dtype=np.int32)
            d32 = np.array(displs, dtype=np.int32)
            coll = case["coll"]
            mine = int(counts[comm.rank])
            if "tiny" not in case:  # real buffers for parameter cases
                send = np.zeros(max(mine, 1), np.uint8); recv = np.zeros(int(counts.sum()) + 1, np.uint8)
                d32 = np.array(np.concatenate([[0], np.cumsum(counts)[:-1]]), dtype=np.int32)
            else:
                send = recv = tiny
            alg = kernels.find_algorithm(coll, case["algorithm"])
            own = dict(sendcount=mine) if coll != "scatterv" else dict(recvcount=mine)
            vec = dict(recvcounts=c32.ctypes.data, rdispls=d32.ctypes.data) if coll != "scatterv" \
                else dict(sendcounts=c32.ctypes.data, sdispls=d32.ctypes.data)
            args = kernels.TuwArgs(sendbuf=send.ctypes.data, recvbuf=recv.ctypes.data,
                                   datatype=0, op=0, root=case.get("root", 0), **own, **vec)
            out["rc"] = lib.tuw_invoke(alg.index, ctypes.byref(args), kernels.comm_handle(comm))
            out["error"] = lib.tuw_last_error().decode()
            lib.tuw_reset_params()
        else:
            pr = Problem(collective=case["coll"], p=case["p"], root=0, counts=tuple(case["counts"]))
            try:
                if case["via"] == "runner":
                    runner.run_kernel(comm, pr, case["algorithm"], params=prm)
                else:
                    runner.run_case(comm, {"mode": "measure", "problem": pr.to_dict(),
                                           "algorithm": case["algorithm"], "reps": 3,
                                           "warmup": 1, "params": prm})
                out["error"] = ""
            except Exception as exc:
                out["error"] = f"{type(exc).__name__}: {exc}"
        res = comm.gather(out, root=0)
        if comm.rank == 0:
            print("RESULT " + json.dumps(res), flush=True)
        comm.Free()
''')


def run_engine(tmp_path, cases, n):
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    r = subprocess.run([find_mpiexec(), "-n", str(n), sys.executable, str(tmp_path / "engine.py"),
                        str(tmp_path / "cases.json")], capture_output=True, text=True,
                       timeout=hang_guard(180), env={**os.environ, **mpi_env(n, timed=False)})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = [json.loads(l[len("RESULT "):]) for l in r.stdout.splitlines() if l.startswith("RESULT ")]
    assert len(res) == len(cases), r.stdout[-3000:] + r.stderr[-3000:]
    return res


def differing(algorithm, via, name, values, counts=(3, 0, 5, 2)):
    p = len(counts)
    base = {"ring": "smp", "nodes": [0, 1, 0, 1]} if name == "nodes" else {}
    params = [{**base, name: values[0]} for _ in range(p)]
    params[2] = {**base, name: values[1]}
    return {"coll": "allgatherv", "algorithm": algorithm, "p": p, "counts": list(counts),
            "via": via, "params": params}


DIFFERING = {
    "ring_c": (differing("ring", "c", "ring", ["rank", "spread"]), "ring", "rank", "spread"),
    "ring_pipelined_c": (differing("pipelined", "c", "ring", ["rank", "smp"]), "ring", "rank", "smp"),
    "nodes_c": (differing("ring", "c", "nodes", [[0, 1, 0, 1], [0, 0, 1, 1]]), "nodes",
                "0,1,0,1", "0,0,1,1"),
    "nodes_pipelined_runner": (differing("pipelined", "runner", "nodes",
                                         [[0, 1, 0, 1], [1, 1, 0, 0]]), "nodes", "0,1,0,1", "1,1,0,0"),
    "block_bytes_c": (differing("pipelined", "c", "block_bytes", [4096, 8192]), "block_bytes",
                      "4096", "8192"),
    "block_bytes_runner": (differing("pipelined", "runner", "block_bytes", [1, 2]),
                           "block_bytes", "1", "2"),
    "alpha_c": (differing("pipelined", "c", "alpha", [1e-6, 4e-6]), "alpha", "9.9999999999999995e-07",
                "3.9999999999999998e-06"),
    "alpha_measure": (differing("pipelined", "measure", "alpha", [1e-6, 2e-6]), "alpha", "", ""),
}

OVERFLOW = {  # (case, ranks that must return MPI_ERR_COUNT)
    "gatherv_tuw": ({"coll": "gatherv", "algorithm": "tuw", "p": 3, "root": 2, "tiny": True,
                     "counts": [2**31 - 10, 20, 0], "via": "c"}, [0, 2]),
    "scatterv_tuw": ({"coll": "scatterv", "algorithm": "tuw", "p": 3, "root": 2, "tiny": True,
                      "counts": [2**31 - 10, 20, 0], "via": "c"}, [0, 1, 2]),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cases = {**{k: v[0] for k, v in DIFFERING.items()}, **{k: v[0] for k, v in OVERFLOW.items()}}
    res = run_engine(tmp_path_factory.mktemp("hardening"), list(cases.values()), 4)
    return dict(zip(cases, res))


@pytest.mark.parametrize("name", list(DIFFERING))
def test_differing_tuning_parameter_fails_on_every_rank_with_one_message(runs, name):
    _, param, a, b = DIFFERING[name]
    ranks = runs[name]
    messages = {r["error"] for r in ranks}
    assert len(messages) == 1, messages  # the same text on every rank
    msg = messages.pop()
    expect = f"tuning parameter {param} differs between ranks: rank 0 has {a}, rank 2 has {b}"
    if a:
        assert expect in msg, msg
    else:
        assert f"tuning parameter {param} differs between ranks: rank 0 has" in msg, msg
    if "rc" in ranks[0]:
        assert [r["rc"] for r in ranks] == [MPI_ERR_ARG] * len(ranks)


@pytest.mark.parametrize("name", list(OVERFLOW))
def test_subtree_beyond_int_is_an_error_not_a_truncation_or_hang(runs, name):
    from mpi4py import MPI

    ranks, failing = runs[name], OVERFLOW[name][1]
    assert [r["rank"] for r in ranks if r["rc"] == MPI.ERR_COUNT] == failing, ranks
    assert all(r["rc"] == MPI_SUCCESS for r in ranks if r["rank"] not in failing), ranks
