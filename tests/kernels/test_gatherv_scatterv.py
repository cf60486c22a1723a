"""Irregular gather and scatter (Träff 2017): kernels on real MPI ranks, the model's
schedules, and the paper's claims checked on random instances.

The trace-equals-model test for these algorithms is tests/run/test_trace_model.py (it runs
every entry of model.SCHEDULES).  Expected values here come from the paper's formulas or
are worked out by hand in comments; none comes from running the same code a second way.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict

import numpy as np
import pytest

from tuwviz import model
from tuwviz.errors import RankFailure
from tuwviz.run.launch import run_mpiexec
from tuwviz.model import ordered_hypercube as oh
from tuwviz.model.gatherv import COUNT_BYTES
from tuwviz.model.topology import oh_cube, oh_dims, oh_partner
from tuwviz.model.program import Recv, Schedule, Send, SendRecv
from tuwviz.problems import Problem, make_problem

from support import hang_guard

GATHERS = [("gatherv", a) for a in model.SCHEDULES["gatherv"]]
SCATTERS = [("scatterv", a) for a in model.SCHEDULES["scatterv"]]


def ceil_log2(p: int) -> int:
    return math.ceil(math.log2(p)) if p > 1 else 0


def random_problems(collective: str, n: int, p_max: int = 200, seed: int = 1):
    """`n` random instances: p in 1..p_max, sizes with many zeros and some spikes."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        p = int(rng.integers(1, p_max + 1))
        kind = rng.integers(0, 4)
        if kind == 0:    # uniform, about a third empty
            counts = rng.integers(0, 1000, p) * (rng.random(p) > 0.33)
        elif kind == 1:  # spikes: mostly 1, some huge
            counts = np.where(rng.random(p) < 0.1, rng.integers(1000, 100000, p), 1)
        elif kind == 2:  # almost all empty
            counts = np.where(rng.random(p) < 0.05, rng.integers(1, 5000, p), 0)
        else:            # all empty
            counts = np.zeros(p, dtype=int)
        root = int(rng.integers(0, p))
        yield Problem(collective, p, root, tuple(int(c) for c in counts), datatype="byte")


# --- the ordered hypercube (C = Python: tests/model/test_topology.py) ---------------------------


def test_partner_is_the_fixed_root_of_the_sibling_cube_and_p_minus_1_rule():
    # Brute force from the definition: cubes [c 2^d, (c+1) 2^d) cut at p, fixed root last.
    for p in range(1, 70):
        for d in range(oh_dims(p)):
            cubes = [(lo, min(lo + 2 ** d, p)) for lo in range(0, p, 2 ** d)]
            for c, (lo, hi) in enumerate(cubes):
                sib = c ^ 1
                expected = cubes[sib][1] - 1 if sib < len(cubes) else -1
                assert oh_partner(p, d, hi - 1) == expected, (p, d, c)
        # the paper's rule for p-1: with bit d set, partner (ceil(p/2^d) - 1) 2^d - 1
        for d in range(oh_dims(p)):
            if (p - 1) >> d & 1:
                assert oh_partner(p, d, p - 1) == (math.ceil(p / 2 ** d) - 1) * 2 ** d - 1
            else:
                assert oh_partner(p, d, p - 1) == -1


# --- hand-worked schedules ----------------------------------------------------------------


def test_tuw_gatherv_example_by_hand():
    # m = (1, 0, 3, 2) bytes, root 0 (worked in gatherv_tuw.c's header):
    # it. 0: 0<->1 (root wins, 1 -> 0 empty), 2<->3 (T equal, 2 has more: 3 -> 2, 2 bytes)
    # it. 1: 1<->3; info 1 -> 0 and 3 -> 2; root's cube wins: 2 -> 0 with blocks 2..3.
    s = model.schedule("gatherv", "tuw", Problem("gatherv", 4, 0, (1, 0, 3, 2), datatype="byte"))
    assert [(type(o).__name__, o.tag, o.kind) for o in s.programs[1]] == [
        ("SendRecv", 0, "exchange"), ("SendRecv", 1, "exchange"), ("Send", 1, "info")]
    assert s.programs[3][-1] == Send(2, 2, 0, blocks=range(3, 4))
    assert s.programs[2][-2:] == [Recv(3, 2, 0, blocks=range(3, 4)),
                                  Send(0, 5, 1, blocks=range(2, 4))]
    assert s.programs[0][-1] == Recv(2, 5, 1, blocks=range(2, 4))
    assert s.meta["parent"] == [-1, 0, 0, 2] and s.meta["edge_bytes"] == [0, 0, 5, 2]
    assert s.meta["fixed_exchanges"] == [(0, 0, 1), (0, 2, 3), (1, 1, 3)]
    assert s.meta["edge_sent"] == [False, False, True, True]  # 1 -> 0 is a dotted edge
    assert s.programs[0][0] == SendRecv(1, 24, 1, 24, tag=0, kind="exchange")
    # alpha = 1, beta = 0: exchanges of it. 0 (ends 1) and it. 1 (2), info (3), data
    # 3 -> 2 (4), 2 -> 0 (5): within 3 ceil(log2 4) = 6
    assert model.simulate(s, 1.0, 0.0).time == 5.0


def test_regular_problem_needs_no_info_messages():
    # Ties go to the right cube, whose fixed root stays fixed root: with equal blocks the
    # gather root of every cube not holding the root is its fixed root.
    s = model.schedule("gatherv", "tuw", make_problem("gatherv", 16, "same", 5, root=15))
    kinds = [op.kind for prog in s.programs for op in prog]
    assert "info" not in kinds and kinds.count("exchange") == 2 * 15
    # the tree is the binomial tree towards rank 15 in the ordered hypercube
    assert s.meta["parent"][14] == 15 and s.meta["parent"][7] == 15 and s.meta["parent"][0] == 1


def test_figure2_shape_p11_root9():
    # p = 11, root 9 as in the paper's Figure 2: fixed-root exchanges and the p-1 rule
    s = model.schedule("gatherv", "tuw", make_problem("gatherv", 11, "random", 3, root=9, seed=5))
    assert s.meta["fixed_exchanges"] == [
        (0, 0, 1), (0, 2, 3), (0, 4, 5), (0, 6, 7), (0, 8, 9),
        (1, 1, 3), (1, 5, 7), (1, 9, 10), (2, 3, 7), (3, 7, 10)]
    assert s.meta["root"] == 9 and s.meta["parent"][9] == -1
    # every rank reaches the root, through at most ceil(log2 11) = 4 edges
    for i in range(11):
        hops, j = 0, i
        while j != 9:
            j, hops = s.meta["parent"][j], hops + 1
        assert hops <= 4


# --- the paper's claims on random instances -----------------------------------------------


def root_children(s: Schedule):
    """(iteration, child, M_j) of the root's tree children, in iteration order."""
    meta = s.meta
    kids = [(meta["edge_iteration"][i], i, meta["edge_bytes"][i])
            for i in range(s.p) if meta["parent"][i] == meta["root"]]
    return sorted(kids)


def lemma22_penalties(s: Schedule, nbytes) -> dict[int, int]:
    """beta-free penalty M_d' - m_{r_d'} - sum_{j<d'} M_j for every root child d' (Lemma 2.2)."""
    out, before = {}, 0
    for d, child, m_j in root_children(s):
        out[d] = m_j - nbytes[child] - before
        before += m_j
    return out


def message_kinds(s: Schedule, result) -> list[str]:
    """Kind of the op behind each simulated message (k-th message i->j = k-th send i->j)."""
    queues = defaultdict(list)
    for rank, prog in enumerate(s.programs):
        for op in prog:
            if isinstance(op, Send):
                queues[rank, op.peer].append(op.kind)
            elif isinstance(op, SendRecv):
                queues[rank, op.send_peer].append(op.kind)
    taken = defaultdict(int)
    kinds = []
    for m in result.messages:
        kinds.append(queues[m.src, m.dst][taken[m.src, m.dst]])
        taken[m.src, m.dst] += 1
    return kinds


def last_waiting_iteration(s: Schedule, result, root: int):
    """Iteration of the last data message the root waited for (None if it never waited).

    The root waits when a data message starts later than the root's previous operation
    (its last construction message, or its previous data receive) ended.
    """
    kinds = message_kinds(s, result)
    busy_until = max((m.end for m, k in zip(result.messages, kinds)
                      if k != "data" and root in (m.src, m.dst)), default=0.0)
    waited = None
    for m, k in zip(result.messages, kinds):  # sorted by start time
        if k == "data" and m.dst == root:
            if m.start > busy_until * (1 + 1e-12):
                waited = m.tag
            busy_until = m.end
    return waited


@pytest.mark.parametrize("collective", ["gatherv", "scatterv"])
def test_tuw_time_within_theorem_2_4_bound(collective):
    rng = np.random.default_rng(7)
    checked = 0
    for pr in random_problems(collective, 300):
        s = model.schedule(collective, "tuw", pr)
        nbytes = list(pr.counts)  # datatype byte
        alpha = float(rng.choice([1e-6, 1e-7, 1e-9]))
        beta = float(rng.choice([1e-9, 1e-8, 1e-10]))
        r = model.simulate(s, alpha, beta)
        D = ceil_log2(pr.p)
        others = sum(nbytes) - nbytes[pr.root]
        # The paper counts each constant-size construction message as alpha; here each of
        # the <= 2D dependent ones costs alpha + 24 beta.
        construction = 2 * D * (alpha + oh.EXCHANGE_BYTES * beta)
        pen = lemma22_penalties(s, nbytes)
        worst = max([0, *pen.values()])
        bound = construction + D * alpha + beta * others + beta * worst
        assert r.time <= bound * (1 + 1e-12), (pr.p, pr.root, pr.counts)
        if collective == "gatherv":
            # the lemma's own d': the last root child the root had to wait for
            d_last = last_waiting_iteration(s, r, pr.root)
            exact = 0 if d_last is None else max(0, pen[d_last])
            assert r.time <= (construction + D * alpha + beta * others + beta * exact) * (1 + 1e-12)
            assert worst < max(others, 1)  # "the worst-case time penalty is less than ..."
        checked += 1
    assert checked == 300


def deepest_virtual_rank(p: int) -> int:
    """A virtual rank with the most ancestors in the binomial tree (popcount)."""
    return max(range(p), key=lambda v: (bin(v).count("1"), v))


@pytest.mark.parametrize("p", [2, 3, 4, 5, 7, 8, 11, 16, 17, 31, 32, 64, 100, 128, 200, 256])
def test_binomial_worst_case_is_log_p_times_everything(p):
    alpha, beta, m = 1e-6, 1e-9, 10000
    for root in sorted({0, 1, p // 2, p - 1}):
        v = deepest_virtual_rank(p)
        counts = [0] * p
        counts[(root + v) % p] = m
        pr = Problem("gatherv", p, root, tuple(counts), datatype="byte")
        sched = model.schedule("gatherv", "binomial", pr)
        r = model.simulate(data_only(sched), alpha, beta)
        D, depth = ceil_log2(p), bin(v).count("1")
        # the block crosses `depth` edges one after the other; the root also receives
        # D messages (empty ones cost alpha): D alpha + depth beta m
        assert r.time == pytest.approx(D * alpha + depth * beta * m, rel=1e-12)
        if p & (p - 1) == 0:  # the paper's statement, exact for powers of two
            assert depth == D and r.time == pytest.approx(D * (alpha + beta * m), rel=1e-12)
        # the subtrees' sizes, sent ahead instead of probing, add at most one int64_t
        # message per level below the root's children
        whole = model.simulate(sched, alpha, beta).time
        extra = (D - 1) * (alpha + COUNT_BYTES * beta)
        assert r.time <= whole <= r.time + extra + 1e-15
        # the same instance costs TUW at most 3 D alpha (+ constant-size beta) + beta m
        t = model.simulate(model.schedule("gatherv", "tuw", pr), alpha, beta).time
        assert t <= 3 * D * (alpha + 24 * beta) + beta * m + 1e-15


def data_only(s: Schedule) -> Schedule:
    """The schedule's data phase alone (construction messages dropped)."""
    progs = [[op for op in prog if op.kind == "data"] for prog in s.programs]
    return Schedule(s.collective, s.algorithm, s.p, progs, s.problem, s.meta)


def test_tuw_tree_depends_only_on_block_sizes_not_alpha_beta():
    # Lemma 2.1: t' <= t'' iff sum_{H'} m_i <= sum_{H''} m_i (beyond the gather roots), so
    # comparing bytes picks the slower cube as receiver for every alpha and beta.  Check
    # it: simulate the data phase alone for very different alpha/beta; (1) the messages
    # realise meta["parent"] every time; (2) in every merge not forced by the external
    # root, the winner finished gathering its cube no earlier than the loser.  (2) needs
    # all blocks non-empty and p a power of two (every level-d gather root then received d
    # messages, as the lemma's proof assumes).
    rng = np.random.default_rng(3)
    params = [(1e-6, 1e-12), (1e-9, 1e-6), (1e-6, 1e-9), (0.0, 1e-9), (1e-6, 0.0)]
    for trial in range(40):
        p = int(rng.choice([2, 4, 8, 16, 32, 64, 128]))
        counts = tuple(int(c) for c in rng.integers(1, 500, p))
        pr = Problem("gatherv", p, int(rng.integers(0, p)), counts, datatype="byte")
        s = model.schedule("gatherv", "tuw", pr)
        merges = [(s.meta["edge_iteration"][i], i, s.meta["parent"][i]) for i in range(p)
                  if s.meta["parent"][i] >= 0]
        for alpha, beta in params:
            r = model.simulate(data_only(s), alpha, beta)
            realised = [-1] * p
            for m in r.messages:
                realised[m.src] = m.dst
            assert realised == s.meta["parent"]
            done = defaultdict(float)  # (rank, iteration) -> time its cube was gathered
            for m in r.messages:
                done[m.dst, m.tag + 1] = max(done[m.dst, m.tag + 1], m.end)

            def gathered(rank, d):
                return max([0.0] + [t for (q, e), t in done.items() if q == rank and e <= d])

            for d, loser, winner in merges:
                if oh_cube(p, d, pr.root) in (oh_cube(p, d, loser), oh_cube(p, d, winner)):
                    continue  # Lemma 2.2 forces the root's cube to win
                assert gathered(winner, d) >= gathered(loser, d) - 1e-15, (trial, d, alpha)


# --- symbolic check: blocks move from the precondition to the postcondition ---------------


def replay(s: Schedule, result):
    """Replay data messages in time order; return per-rank lists of blocks received.

    Checks on the way that every message carries only blocks its sender holds (empty
    blocks need no message, so a sender may lack them) and that no rank receives a block
    twice.  Wrapped binomial messages (``blocks=None``) carry the
    sender's subtree (meta["subtree_ranges"]) - in the gather the sender's, in the
    scatter the receiver's.
    """
    gather = s.collective in ("gather", "gatherv")
    held = ([{i} for i in range(s.p)] if gather
            else [set(range(s.p)) if i == s.meta["root"] else set() for i in range(s.p)])
    queues = defaultdict(list)
    for rank, prog in enumerate(s.programs):
        for op in prog:
            if isinstance(op, Send):
                queues[rank, op.peer].append((op.kind, op.blocks))
            elif isinstance(op, SendRecv):
                queues[rank, op.send_peer].append((op.kind, op.send_blocks))
    taken = defaultdict(int)
    received = [[] for _ in range(s.p)]
    for m in result.messages:
        kind, op_blocks = queues[m.src, m.dst][taken[m.src, m.dst]]
        taken[m.src, m.dst] += 1
        if kind != "data":
            assert op_blocks is None
            continue
        if op_blocks is not None:
            blocks = list(op_blocks)
        else:
            owner = m.src if gather else m.dst
            blocks = [b for lo, hi in s.meta["subtree_ranges"][owner] for b in range(lo, hi)]
        lacking = {b for b in set(blocks) - held[m.src] if s.problem.counts[b] > 0}
        assert not lacking, f"rank {m.src} sends non-empty blocks {lacking} it lacks: {m}"
        assert not set(blocks) & held[m.dst], f"rank {m.dst} receives a block twice: {m}"
        held[m.dst] |= set(blocks)
        received[m.dst].append(blocks)
    return held, received


@pytest.mark.parametrize("collective, algorithm", GATHERS + SCATTERS)
def test_blocks_reach_their_destination_exactly_once(collective, algorithm):
    for pr in random_problems(collective, 120, p_max=70, seed=11):
        s = model.schedule(collective, algorithm, pr)
        held, received = replay(s, model.simulate(s, 1e-6, 1e-9))
        root, nonzero = pr.root, {i for i in range(pr.p) if pr.counts[i] > 0}
        if collective == "gatherv":
            # the root holds every non-empty block (each received once: see replay)
            assert nonzero | {root} <= held[root]
        else:
            for i in range(pr.p):  # every rank holds its block
                assert i in held[i] or i not in nonzero
        if algorithm == "tuw":
            # ordered: every message is one rank range, and at the gather side each one
            # attaches to the receiver's consecutive range (empty blocks may be skipped)
            for rank in range(pr.p):
                lo = hi = rank
                for blocks in received[rank]:
                    assert blocks == list(range(blocks[0], blocks[-1] + 1))
                    if collective == "gatherv":
                        assert blocks[-1] < lo or blocks[0] > hi
                        gap = range(blocks[-1] + 1, lo) if blocks[0] < lo else range(hi + 1, blocks[0])
                        assert all(pr.counts[b] == 0 for b in gap), (rank, blocks, lo, hi)
                        lo, hi = min(lo, blocks[0]), max(hi, blocks[-1])
                    else:  # a scatter receiver gets its own subtree, containing itself
                        assert blocks[0] <= rank <= blocks[-1]
            if collective == "gatherv":
                # in order at the root: the ranges tile 0..p-1 but for empty blocks
                got = sorted(b for blocks in received[root] for b in blocks) + [root]
                assert len(got) == len(set(got))
                assert nonzero <= set(got)


# --- paper scale --------------------------------------------------------------------------


@pytest.mark.parametrize("p", [6400, pytest.param(65536, marks=pytest.mark.full)])
def test_tuw_gatherv_at_paper_scale(p, capsys):
    alpha, beta = 1e-6, 1e-9
    pr = make_problem("gatherv", p, "spikes", 100)
    t0 = time.perf_counter()
    s = model.schedule("gatherv", "tuw", pr)  # builds and validates
    t1 = time.perf_counter()
    r = model.simulate(s, alpha, beta)
    t2 = time.perf_counter()
    with capsys.disabled():
        print(f"\n[model] tuw gatherv p={p}: build+validate {t1 - t0:.2f} s, "
              f"simulate {t2 - t1:.2f} s, {len(r.messages)} messages, "
              f"predicted {r.time * 1e6:.1f} µs")
    D = ceil_log2(p)
    nbytes = [c * 4 for c in pr.counts]
    others = sum(nbytes) - nbytes[pr.root]
    parent = s.meta["parent"]
    # a tree towards the root: every rank reaches it in at most D edges
    depth = [0] * p
    for i in sorted(range(p), key=lambda i: s.meta["edge_iteration"][i], reverse=True):
        depth[i] = 0 if parent[i] < 0 else depth[parent[i]] + 1
    assert parent[pr.root] == -1 and max(depth) <= D
    assert sum(1 for i in range(p) if parent[i] == pr.root) <= D
    # every rank's data reaches the root exactly once, in consecutive ranges
    held, _ = replay(s, r)
    assert held[pr.root] == set(range(p))
    # Lemma 2.3: in iteration d, one exchange per pair of sibling cubes
    assert len(s.meta["fixed_exchanges"]) == sum(math.ceil(p / 2 ** d) // 2 for d in range(D))
    assert {d for d, _, _ in s.meta["fixed_exchanges"]} == set(range(D))
    bound = 2 * D * (alpha + 24 * beta) + D * alpha + beta * others
    bound += beta * max([0, *lemma22_penalties(s, nbytes).values()])
    assert r.time <= bound
    assert r.time >= beta * others  # the root's port must take all data
    # the fixed binomial tree and the linear algorithm are slower here (the paper's point)
    lin = model.simulate(model.schedule("gatherv", "linear", pr), alpha, beta).time
    assert r.time < lin


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("collective, field", [("gatherv", "sendcount"), ("scatterv", "recvcount")])
def test_counts_that_disagree_with_the_root_fail_on_all_ranks(collective, field):
    pr = make_problem(collective, 5, "same", 3, root=2)
    base = {"mode": "verify", "problem": pr.to_dict(), "algorithm": "tuw"}
    bad = {**base, "count_override": {"rank": 4, "count": 7}}
    neg = {**base, "count_override": {"rank": 1, "count": -1}}
    # first the same count as the root's: the check does not fire on good input
    good = {**base, "count_override": {"rank": 4, "count": 3}}
    results = []
    with pytest.raises(RankFailure) as err:
        run_mpiexec(5, [good, bad], lambda i, c, r: results.append(r),
                    stall_limit=hang_guard(300))
    assert results == [{"ok": True, "mismatches": []}]
    msg = str(err.value)
    assert err.value.rank == 4  # the rank at fault, whichever rank reported first
    # one line says what is wrong; the next names the case that was running
    first, running = msg.splitlines()
    assert (f"{collective}: counts disagree: rank 4 passes {field} 7, but the root (rank 2) "
            f"has {'recvcounts' if collective == 'gatherv' else 'sendcounts'}[4] = 3") in first
    assert running.strip() == (f"running: {collective}/tuw p=5 root=2 dist=same b=3 "
                               f"(case 2 of 2; 1 finished before it)")
    with pytest.raises(RankFailure, match=f"rank 1 passes a negative {field} -1"):
        run_mpiexec(5, [neg], stall_limit=hang_guard(300))


def test_model_cli_bad_input(cli):
    for coll in ("gatherv", "scatterv"):
        r = cli("model", coll, "tuw", "--counts", "1,-2,3")
        assert r.returncode == 2 and r.stderr.strip() == "error: --counts must be at least 0, got -2"
        r = cli("model", coll, "tuw", "--counts", "1,2,3", "--root", "3")
        assert r.returncode == 2 and r.stderr.strip() == \
            "error: --root: root 3 out of range 0..2 for the 3 --counts"
        r = cli("model", coll, "binomial", "--counts", "1,2,3", "--root", "-1")
        assert r.returncode == 2 and r.stderr.strip().startswith(
            "error: argument --root: must be at least 0, got -1")
    r = cli("model", "scatterv", "tuw", "--counts", "4,0,2", "--root", "0")
    assert r.returncode == 0 and "model scatterv/tuw" in r.stdout


# Bad roots and negative counts, every kernel of the table: tests/test_table.py.


# Every p up to 17 with the CLI: tests/experiments/test_verify.py (its full sweep, one collective per
# run, gatherv and scatterv among them).
