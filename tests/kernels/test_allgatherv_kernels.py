"""Irregular all-gather (Träff et al. 2010, pipelined ring): the C ring order and block
size on hand-checked examples, and the ring kernels on real MPI ranks.

Expected values are worked out by hand in comments (ring orders, piece sizes) or come
straight from the paper's formulas (Eq. 1, Eq. 2); none comes from running the same code
a second way.  The kernels' tuning parameters are set on every rank through the C setters
(tuw_set_block_bytes, ...) by a small engine script started with mpiexec; it also covers
what tuwviz's runner cannot pass (displacements that are no prefix sums, MPI_IN_PLACE, a
bad node map reaching C).  Trace equals model: tests/run/test_trace_model.py.
"""
from __future__ import annotations

import ctypes
import json
import math
import os
import subprocess
import sys
from collections import Counter

import pytest

from tuwviz.run.launch import find_mpiexec, mpi_env

from support import MPI_ERR_ARG, MPI_SUCCESS, hang_guard

RANK, SMP, SPREAD = 0, 1, 2  # TUW_RING_* in kernels_c/include/tuwviz.h
INT = 4  # bytes of MPI_INT, the element type of the engine script


@pytest.fixture(scope="module")
def lib(kernel_lib):
    return kernel_lib


def ints(values):
    return (ctypes.c_int * max(len(values), 1))(*values)


def ring_order(lib, counts, kind, nodes=None):
    order = ints([-1] * len(counts))
    rc = lib.tuw_ring_order(len(counts), ints(counts), ints(nodes) if nodes else None, kind,
                            order)
    assert rc == MPI_SUCCESS
    return list(order)[: len(counts)]


def block_elems(lib, counts, extent, block_bytes=0, alpha=1e-6, beta=1e-9):
    return lib.tuw_allgatherv_block_elems(len(counts), ints(counts), extent, block_bytes,
                                          alpha, beta)


# --- ring order (integers only) -----------------------------------------------------------


def test_rank_order_is_the_identity_and_bad_kinds_are_errors(lib):
    assert ring_order(lib, [3, 0, 1, 0], RANK) == [0, 1, 2, 3]
    order = ints([0] * 3)
    assert lib.tuw_ring_order(3, ints([1, 1, 1]), None, 7, order) == MPI_ERR_ARG
    assert lib.tuw_ring_order(3, ints([1, 1, 1]), None, SMP, order) == MPI_ERR_ARG  # no nodes
    assert lib.tuw_ring_order(0, ints([]), None, RANK, order) == MPI_ERR_ARG


# Figure 1: nodes with 1, 5, 2, 1, 1, 1 processes.  Round-robin placement deals ranks to
# nodes in turn, skipping full nodes: ranks 0..5 go to nodes 0..5, then 6 -> node 1 and
# 7 -> node 2 (node 0 is full), then 8, 9, 10 -> node 1 (nodes 2..5 are full).  Node ids are
# arbitrary labels (here decreasing), so only the nodes' lowest ranks can order them.
FIG1_NODE = [0, 1, 2, 3, 4, 5, 1, 2, 1, 1, 1]
FIG1_LABELS = [50 - 10 * n for n in FIG1_NODE]


def test_smp_order_figure1_nodes_consecutive_by_lowest_rank(lib):
    # node 0: 0 | node 1: 1, 6, 8, 9, 10 | node 2: 2, 7 | nodes 3, 4, 5: 3 | 4 | 5
    assert ring_order(lib, [1] * 11, SMP, FIG1_LABELS) == [0, 1, 6, 8, 9, 10, 2, 7, 3, 4, 5]


def test_smp_order_puts_empty_processes_first_on_their_node(lib):
    counts = [1] * 11
    counts[1] = counts[8] = counts[7] = 0
    # node 1: empty 1, 8 then 6, 9, 10;  node 2: empty 7 then 2 - each node's last process,
    # the one that sends off-node, has data (Section 2.3, last paragraph)
    assert ring_order(lib, counts, SMP, FIG1_LABELS) == [0, 1, 8, 6, 9, 10, 7, 2, 3, 4, 5]
    # every process on its own node: the identity; all on one node: empty ones first
    assert ring_order(lib, counts, SMP, list(range(11))) == list(range(11))
    assert ring_order(lib, counts, SMP, [3] * 11) == [1, 7, 8, 0, 2, 3, 4, 5, 6, 9, 10]


def test_spread_order_places_data_equidistantly(lib):
    # p = 7, z = 4 empty (1, 2, 4, 6), n = 3 with data (0, 3, 5): q = 1, r = 1, so two empty
    # processes before 0, one before 3, one before 5
    assert ring_order(lib, [3, 0, 0, 5, 0, 1, 0], SPREAD) == [1, 2, 0, 4, 3, 6, 5]
    # p = 7, z = 4, data on 0, 1, 2 (the paper's Figure 3 situation: all data at one end)
    assert ring_order(lib, [3, 5, 2, 0, 0, 0, 0], SPREAD) == [3, 4, 0, 5, 1, 6, 2]
    # nothing to spread: z = 0 or n = 0
    assert ring_order(lib, [1, 2, 3], SPREAD) == [0, 1, 2]
    assert ring_order(lib, [0, 0, 0], SPREAD) == [0, 1, 2]
    # broadcast: z = p - 1 = 4, q = 4: all empty ones first
    assert ring_order(lib, [0, 0, 9, 0, 0], SPREAD) == [0, 1, 3, 4, 2]


def test_slot_clock_of_the_by_hand_example(lib):
    # header of allgatherv_pipelined.c: m = (5, 0, 2), B = 2: own non-empty pieces (3, 0, 1),
    # all 4 non-empty pieces but the successor's are sent: nsend = (4 - 0, 4 - 1, 4 - 3)
    own, nsend = (ctypes.c_longlong * 3)(3, 0, 1), (ctypes.c_longlong * 3)(4, 3, 1)
    sent, now = (ctypes.c_longlong * 3)(), (ctypes.c_ubyte * 3)()
    senders = []
    while lib.tuw_ring_slot(3, own, nsend, sent, now):
        senders.append(list(now))
    # slot 0: own pieces of 0 and 2; rank 1 has nothing yet; then 0 and 1 pass pieces on
    assert senders == [[1, 0, 1], [1, 1, 0], [1, 1, 0], [1, 1, 0]]
    assert list(sent) == [4, 3, 1]


# --- block size (Section 2.4) ---------------------------------------------------------------


def test_block_size_given_in_bytes_is_cut_to_whole_elements(lib):
    assert block_elems(lib, [5, 0, 3], 4, block_bytes=10) == 2      # 10 // 4
    assert block_elems(lib, [5, 0, 3], 4, block_bytes=3) == 1       # at least one element
    assert block_elems(lib, [5, 0, 3], 1, block_bytes=1000) == 1000  # no cap at max count
    assert block_elems(lib, [5, 0, 3], 8, block_bytes=0) == 5        # Eq. (2) instead, below


def test_block_size_estimate_eq2(lib):
    # nothing to send; regular problem (B = m', the linear ring)
    assert block_elems(lib, [0, 0, 0], 4) == 1
    assert block_elems(lib, [7, 7, 7], 4) == 7
    # z = 0, p = 4: D = (4 + 0)/2 - 1 + 0 = 1; m = 100 bytes, alpha = beta: B = sqrt(100) = 10
    assert block_elems(lib, [10, 20, 30, 40], 1, alpha=1.0, beta=1.0) == 10
    # broadcast, z = p - 1 = 4: linear pipeline, D = p - 2 = 3; m = 4e6 bytes:
    # B = sqrt(4e6 * 1e-6 / (1e-9 * 3)) = 36514.8 bytes = 9128 ints
    assert math.sqrt(4e6 * 1e-6 / (1e-9 * 3)) == pytest.approx(36514.837, abs=1e-3)
    assert block_elems(lib, [10**6, 0, 0, 0, 0], 4) == 9128
    # p = 7, z = 4: D = 11/2 - 1 + 4 // 3 = 5.5; m = 9000 doubles = 72000 bytes:
    # B = sqrt(72000 * 1e-6 / (1e-9 * 5.5)) = 3618.14 bytes = 452 doubles
    assert math.sqrt(72000 * 1e-6 / (1e-9 * 5.5)) == pytest.approx(3618.136, abs=1e-3)
    assert block_elems(lib, [3000, 0, 0, 5000, 0, 1000, 0], 8) == 452
    # clamped to 1 .. max count: tiny alpha, huge alpha
    assert block_elems(lib, [3000, 0, 0, 5000, 0, 1000, 0], 8, alpha=1e-15) == 1
    assert block_elems(lib, [3000, 0, 0, 5000, 0, 1000, 0], 8, alpha=1.0) == 5000
    # p = 2, z = 1: D = p - 2 = 0, no pipeline to fill: the whole block
    assert block_elems(lib, [0, 123], 4) == 123
    # beta = 0 (B infinite) and alpha < 0 (NaN) do not crash: clamped
    assert block_elems(lib, [10, 20, 30, 40], 1, beta=0.0) == 40
    assert block_elems(lib, [10, 20, 30, 40], 1, alpha=-1.0) == 1


def test_parameters_are_stored_copied_and_reset(lib):
    lib.tuw_reset_params()
    assert (lib.tuw_get_block_bytes(), lib.tuw_get_ring_order()) == (0, RANK)
    lib.tuw_set_block_bytes(4096)
    lib.tuw_set_block_bytes(-5)  # negative: stored as 0 (the estimate)
    assert lib.tuw_get_block_bytes() == 0
    lib.tuw_set_block_bytes(4096)
    lib.tuw_set_ring_order(SPREAD)
    lib.tuw_set_cost_model(2e-6, 3e-9)
    nodes = ints([0, 0, 1])
    assert lib.tuw_set_node_map(3, nodes) == MPI_SUCCESS
    nodes[0] = 9  # the kernel keeps its own copy
    got = ctypes.POINTER(ctypes.c_int)()
    assert lib.tuw_get_node_map(ctypes.byref(got)) == 3 and got[:3] == [0, 0, 1]
    a, b = ctypes.c_double(), ctypes.c_double()
    lib.tuw_get_cost_model(ctypes.byref(a), ctypes.byref(b))
    assert (a.value, b.value, lib.tuw_get_block_bytes()) == (2e-6, 3e-9, 4096)
    assert lib.tuw_set_node_map(-1, None) == MPI_ERR_ARG
    lib.tuw_reset_params()
    lib.tuw_get_cost_model(ctypes.byref(a), ctypes.byref(b))
    assert (a.value, b.value) == (1e-6, 1e-9)
    assert (lib.tuw_get_block_bytes(), lib.tuw_get_ring_order()) == (0, RANK)
    assert lib.tuw_get_node_map(ctypes.byref(got)) == 0 and not got


# --- real ranks ---------------------------------------------------------------------------


# Every p up to 17, every distribution and parameter variant verify checks (block sizes,
# SMP and spread ring orders): tests/experiments/test_verify.py (sampled p quick, every p full).


# Runs on every rank: sets the case's parameters through the C setters, calls the kernel
# through tuw_invoke with tracing on, compares with mpi4py's Allgatherv.  Rank 0 prints one
# RESULT line per case: per rank its return code, whether recvbuf matched, and its events
# [peer, "send"/"recv", tag, bytes].
ENGINE = r'''
import ctypes, json, sys
import numpy as np
from mpi4py import MPI
from tuwviz import kernels

RING = {"rank": 0, "smp": 1, "spread": 2}
lib = kernels.load()
world = MPI.COMM_WORLD
index = {a.name: a.index for a in kernels.algorithms("allgatherv")}
for case in json.load(open(sys.argv[1])):
    p = case["p"]
    comm = world.Split(0 if world.rank < p else MPI.UNDEFINED, world.rank)
    if comm == MPI.COMM_NULL:
        continue
    lib.tuw_reset_params()
    prm = case.get("params", {})
    if "block_bytes" in prm:
        lib.tuw_set_block_bytes(prm["block_bytes"])
    if "alpha" in prm:
        lib.tuw_set_cost_model(prm["alpha"], prm["beta"])
    if "ring" in prm:
        lib.tuw_set_ring_order(RING[prm["ring"]])
    if "nodes" in prm:
        nodes = (ctypes.c_int * len(prm["nodes"]))(*prm["nodes"])
        assert lib.tuw_set_node_map(len(prm["nodes"]), nodes) == 0
    counts = np.array(case["counts"], dtype=np.int32)
    displs = np.array(case.get("displs") or np.concatenate([[0], np.cumsum(counts)[:-1]]),
                      dtype=np.int32)
    size = int((displs + counts).max())
    mine = np.random.default_rng([comm.rank, p]).integers(-1000, 1000, int(counts[comm.rank]))
    mine = mine.astype(np.int32)
    ref = np.full(size, -7, np.int32)
    comm.Allgatherv(mine, [ref, counts, displs, MPI.INT])
    got = np.full(size, -7, np.int32)
    in_place = case.get("in_place", False)
    if in_place:
        got[displs[comm.rank]:displs[comm.rank] + len(mine)] = mine
    args = kernels.TuwArgs(
        sendbuf=int(MPI.IN_PLACE) if in_place else mine.ctypes.data, sendcount=len(mine),
        recvbuf=got.ctypes.data, recvcounts=counts.ctypes.data, rdispls=displs.ctypes.data,
        datatype=1, op=0, root=0)
    lib.tuw_trace_start()
    rc = lib.tuw_invoke(index[case["algorithm"]], ctypes.byref(args), kernels.comm_handle(comm))
    lib.tuw_trace_stop()
    n = lib.tuw_trace_count()
    ev = (kernels.TuwEvent * max(n, 1))()
    n = lib.tuw_trace_copy(ev, n)
    events = [[e.peer, "send" if e.dir == 0 else "recv", e.tag, e.bytes] for e in ev[:n]]
    res = comm.gather({"rc": rc, "ok": bool((got == ref).all()), "events": events}, root=0)
    if comm.rank == 0:
        print("RESULT " + json.dumps(res), flush=True)
    lib.tuw_reset_params()
    comm.Free()
'''

# Figure 1 on 11 ranks, and the same with three empty processes (see the ctypes tests)
FIG1_COUNTS = [2, 0, 3, 1, 1, 1, 2, 0, 0, 5, 1]

CASES = {
    # m = (5, 0, 2), B = 2 ints: worked out in the header of allgatherv_pipelined.c
    "by_hand": {"p": 3, "counts": [5, 0, 2], "algorithm": "pipelined",
                "params": {"block_bytes": 2 * INT}},
    "rank_B1": {"p": 7, "counts": [3, 0, 0, 5, 0, 2, 0], "algorithm": "pipelined",
                "params": {"block_bytes": INT}},
    "spread_B1": {"p": 7, "counts": [3, 5, 2, 0, 0, 0, 0], "algorithm": "pipelined",
                  "params": {"block_bytes": 5, "ring": "spread"}},  # 5 // 4 = 1 int
    # Figure 3: three processes with 3 blocks each, z = 3 empty, B = 1 int
    "fig3_rank": {"p": 6, "counts": [3, 3, 3, 0, 0, 0], "algorithm": "pipelined",
                  "params": {"block_bytes": INT}},
    "fig3_spread": {"p": 6, "counts": [3, 3, 3, 0, 0, 0], "algorithm": "pipelined",
                    "params": {"block_bytes": INT, "ring": "spread"}},
    "no_empty_B3": {"p": 5, "counts": [7, 1, 3, 9, 4], "algorithm": "pipelined",
                    "params": {"block_bytes": 3 * INT}},
    "smp_fig1": {"p": 11, "counts": FIG1_COUNTS, "algorithm": "pipelined",
                 "params": {"block_bytes": 2 * INT, "ring": "smp", "nodes": FIG1_LABELS}},
    "smp_fig1_ring": {"p": 11, "counts": FIG1_COUNTS, "algorithm": "ring",
                      "params": {"ring": "smp", "nodes": FIG1_LABELS}},
    # all ranks share this machine: one node, the empty processes first
    "smp_from_comm": {"p": 6, "counts": [2, 0, 3, 0, 1, 0], "algorithm": "pipelined",
                      "params": {"block_bytes": INT, "ring": "smp"}},
    # Eq. (2) with the default cost model, broadcast: D = p - 2 = 2, m = 16000 bytes,
    # B = sqrt(16000 * 1e-6 / (1e-9 * 2)) = 2828.4 bytes = 707 ints: 4000 = 5 * 707 + 465
    "eq2_bcast": {"p": 4, "counts": [4000, 0, 0, 0], "algorithm": "pipelined"},
    # alpha 4x: B = sqrt(4 * 8e6) = 5656.9 bytes = 1414 ints: 4000 = 2 * 1414 + 1172
    "eq2_alpha": {"p": 4, "counts": [4000, 0, 0, 0], "algorithm": "pipelined",
                  "params": {"alpha": 4e-6, "beta": 1e-9}},
    # blocks in reverse order with gaps, and MPI_IN_PLACE
    "displs": {"p": 4, "counts": [3, 0, 4, 2], "displs": [20, 9, 10, 0],
               "algorithm": "pipelined", "params": {"block_bytes": 2 * INT}},
    "displs_ring": {"p": 4, "counts": [3, 0, 4, 2], "displs": [20, 9, 10, 0],
                    "algorithm": "ring", "params": {"ring": "spread"}},
    "in_place": {"p": 5, "counts": [3, 0, 4, 2, 0], "in_place": True,
                 "algorithm": "pipelined", "params": {"block_bytes": INT, "ring": "spread"}},
    "in_place_ring": {"p": 5, "counts": [3, 0, 4, 2, 0], "in_place": True,
                      "algorithm": "ring"},
    "p1": {"p": 1, "counts": [4], "algorithm": "pipelined", "params": {"block_bytes": INT}},
    # the circulant Allgatherv's rounds go straight from and into recvbuf: blocks out of
    # rank order with gaps (each round's run an indexed datatype), and MPI_IN_PLACE
    "displs_circulant": {"p": 4, "counts": [3, 0, 4, 2], "displs": [20, 9, 10, 0],
                         "algorithm": "circulant"},
    "displs_circulant_7": {"p": 7, "counts": [1, 5, 0, 2, 3, 0, 4],
                           "displs": [40, 30, 29, 20, 10, 9, 0], "algorithm": "circulant"},
    "in_place_circulant": {"p": 5, "counts": [3, 0, 4, 2, 0], "in_place": True,
                           "algorithm": "circulant"},
    # a node map for another number of processes: MPI_ERR_ARG on every rank, no hang
    "bad_nodes": {"p": 3, "counts": [1, 2, 3], "algorithm": "ring",
                  "params": {"ring": "smp", "nodes": [0, 1]}},
}

# ring order of each case, worked out by hand (see the ctypes tests for the rules)
ORDERS = {
    "spread_B1": [3, 4, 0, 5, 1, 6, 2],
    "fig3_spread": [3, 0, 4, 1, 5, 2],
    "smp_fig1": [0, 1, 8, 6, 9, 10, 7, 2, 3, 4, 5],
    "smp_fig1_ring": [0, 1, 8, 6, 9, 10, 7, 2, 3, 4, 5],
    "smp_from_comm": [1, 3, 5, 0, 2, 4],
    "displs_ring": [1, 0, 2, 3],   # z = 1, n = 3: q = 0, r = 1: empty 1 before 0
    "in_place": [1, 0, 4, 2, 3],   # z = 2, n = 3: q = 0, r = 2: 1 before 0, 4 before 2
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every case of CASES on real ranks, in one mpiexec run of 11 ranks."""
    d = tmp_path_factory.mktemp("allgatherv")
    (d / "engine.py").write_text(ENGINE)
    (d / "cases.json").write_text(json.dumps(list(CASES.values())))
    n = max(c["p"] for c in CASES.values())
    r = subprocess.run([find_mpiexec(), "-n", str(n), sys.executable, str(d / "engine.py"),
                        str(d / "cases.json")], capture_output=True, text=True, timeout=hang_guard(900),
                       env={**os.environ, **mpi_env(n, timed=False)})
    assert r.returncode == 0, r.stdout + r.stderr
    results = [json.loads(line[len("RESULT "):]) for line in r.stdout.splitlines()
               if line.startswith("RESULT ")]
    assert len(results) == len(CASES)
    return dict(zip(CASES, results))


def messages(ranks):
    """(sender, receiver, tag, bytes) of every send and of every receive, as two Counters."""
    sent, received = Counter(), Counter()
    for me, r in enumerate(ranks):
        for peer, d, tag, nbytes in r["events"]:
            if d == "send":
                sent[(me, peer, tag, nbytes)] += 1
            else:
                received[(peer, me, tag, nbytes)] += 1
    return sent, received


def neighbours(order):
    p = len(order)
    succ = {order[k]: order[(k + 1) % p] for k in range(p)}
    return succ, {v: k for k, v in succ.items()}


RINGS = [n for n in CASES if n != "bad_nodes" and CASES[n]["algorithm"] != "circulant"]


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n]["algorithm"] == "circulant"])
def test_circulant_with_any_displacements_equals_mpi_allgatherv(runs, name):
    """Round k: to r - jump_k and from r + jump_k, tag k, sizes as the model says."""
    from tuwviz import model
    from tuwviz.problems import Problem
    case, ranks = CASES[name], runs[name]
    assert [r["rc"] for r in ranks] == [MPI_SUCCESS] * case["p"]
    assert all(r["ok"] for r in ranks), [r["ok"] for r in ranks]
    sched = model.schedule("allgatherv", "circulant",
                           Problem("allgatherv", case["p"], 0, tuple(case["counts"])))
    for me, r in enumerate(ranks):
        assert [(d, peer, nbytes) for peer, d, _, nbytes in r["events"]] == sched.messages(me)


@pytest.mark.parametrize("name", RINGS)
def test_kernel_with_parameters_equals_mpi_allgatherv(runs, name):
    case, ranks = CASES[name], runs[name]
    assert [r["rc"] for r in ranks] == [MPI_SUCCESS] * case["p"]
    assert all(r["ok"] for r in ranks), [r["ok"] for r in ranks]
    sent, received = messages(ranks)
    assert sent == received  # every message is received as sent: peer, tag and size
    succ, pred = neighbours(ORDERS.get(name, list(range(case["p"]))))
    for me, r in enumerate(ranks):
        for peer, d, _, _ in r["events"]:
            assert peer == (succ[me] if d == "send" else pred[me])


def test_node_map_of_wrong_length_is_an_error_on_every_rank(runs):
    assert [r["rc"] for r in runs["bad_nodes"]] == [MPI_ERR_ARG] * 3
    assert all(r["events"] == [] for r in runs["bad_nodes"])


def test_ring_sends_every_block_also_empty_ones_in_p_minus_1_rounds(runs):
    for name in ("smp_fig1_ring", "displs_ring", "in_place_ring"):
        case, ranks = CASES[name], runs[name]
        p = case["p"]
        for r in ranks:
            assert sorted(tag for _, d, tag, _ in r["events"] if d == "send") == list(range(p - 1))
            assert sorted(tag for _, d, tag, _ in r["events"] if d == "recv") == list(range(p - 1))
        # every rank receives every other block once, empty ones as 0-byte messages
        for me, r in enumerate(ranks):
            got = sorted(n for _, d, _, n in r["events"] if d == "recv")
            assert got == sorted(INT * c for i, c in enumerate(case["counts"]) if i != me)


def test_pipelined_by_hand_example(runs):
    # header of allgatherv_pipelined.c: m = (5, 0, 2), B = 2 ints, pieces 0, 1, 2 of rank 0
    # (2, 2, 1 ints), 3 of rank 1 (empty), 4 of rank 2 (2 ints); tag = slot
    ev = [r["events"] for r in runs["by_hand"]]
    assert ev[0] == [[1, "send", 0, 4], [2, "recv", 0, 8],  # Sendrecv: piece 2, piece 4
                     [1, "send", 1, 8], [1, "send", 2, 8],  # pieces 1, 0
                     [1, "send", 3, 8]]                     # piece 4, received in slot 0
    assert ev[1] == [[0, "recv", 0, 4], [2, "send", 1, 4], [0, "recv", 1, 8],
                     [2, "send", 2, 8], [0, "recv", 2, 8], [2, "send", 3, 8],
                     [0, "recv", 3, 8]]
    assert ev[2] == [[0, "send", 0, 8], [1, "recv", 1, 4], [1, "recv", 2, 8],
                     [1, "recv", 3, 8]]


@pytest.mark.parametrize("name", ["by_hand", "rank_B1", "spread_B1", "fig3_rank",
                                  "fig3_spread", "no_empty_B3",
                                  "smp_fig1", "smp_from_comm", "in_place"])
def test_pipelined_sends_each_piece_once_within_eq1_rounds(runs, name):
    case, ranks = CASES[name], runs[name]
    counts = case["counts"]
    B = case["params"]["block_bytes"] // INT
    b_i = [max(1, math.ceil(c / B)) for c in counts]
    r_eq1 = sum(b_i) - min(b_i)
    for me, r in enumerate(ranks):
        recv = [n for _, d, _, n in r["events"] if d == "recv"]
        # only real pieces travel: ceil(m_i / B) of each other process, none empty, <= B
        assert len(recv) == sum(math.ceil(c / B) for i, c in enumerate(counts) if i != me)
        assert sum(recv) == INT * (sum(counts) - counts[me])
        assert all(0 < n <= B * INT for _, _, _, n in r["events"])
        # slots in order, each at most once per direction, all within Eq. (1)
        for d in ("send", "recv"):
            tags = [tag for _, dd, tag, _ in r["events"] if dd == d]
            assert tags == sorted(set(tags)) and all(t < r_eq1 for t in tags)
    if 0 not in counts:  # no piece is skipped: exactly Eq. (1)'s r rounds
        assert slots(ranks) == r_eq1


def slots(ranks):
    """Rounds in time the kernel used: its tags are slots (see allgatherv_pipelined.c)."""
    return 1 + max(e[2] for r in ranks for e in r["events"])


def test_spread_ring_saves_the_rounds_of_figure_3(runs):
    # Figure 3: "The actual number of rounds required in this example is 9, whereas r is
    # 11": b = 9 + 3 = 12 pieces, min b_i = 1, r = 11 (Eq. 1); Section 2.3 with the empty
    # processes spread out: sum ceil(m_i/B) - 1 + floor(z/(p-z)) = 9 - 1 + 1 = 9
    assert slots(runs["fig3_spread"]) == 9
    # all empty processes in a row in front of rank 0: rank 0's pieces wait 3 slots longer
    # (Section 2.3: b - z - 1 + z_0 = 12 - 3 - 1 + 3 = 11)
    assert slots(runs["fig3_rank"]) == 11


def test_pipelined_block_size_from_eq2_and_cost_model(runs):
    for name, pieces in [("eq2_bcast", [465] + [707] * 5), ("eq2_alpha", [1172, 1414, 1414])]:
        ranks = runs[name]
        # rank 0 sends its pieces last to first; ranks 1..3 form a linear pipeline
        assert [n for _, d, _, n in ranks[0]["events"] if d == "send"] == [INT * x for x in pieces]
        for r in ranks[1:]:
            assert [n for _, d, _, n in r["events"] if d == "recv"] == [INT * x for x in pieces]
        assert [n for _, d, _, n in ranks[3]["events"] if d == "send"] == []  # 0 needs nothing
