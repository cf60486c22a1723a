"""Tests of tuwviz.model: per-rank programs, the alpha-beta-gamma simulator, linear gatherv.

Expected times are computed by hand from the model's rules (see tuwviz/model/simulate.py),
never by running the simulator a second way.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tuwviz.model import (
    SCHEDULES,
    Compute,
    Message,
    Recv,
    Schedule,
    ScheduleError,
    Send,
    SendRecv,
    Waitall,
    algorithms,
    format_report,
    schedule,
    simulate,
)
from tuwviz.model import gatherv
from tuwviz.problems import make_problem

ALPHA = 1e-6   # seconds per message
BETA = 1e-9    # seconds per byte
GAMMA = 1e-8   # seconds per compute unit


def sched(*programs) -> Schedule:
    """A schedule of the given per-rank programs, for hand-built cases."""
    return Schedule("test", "hand", len(programs), [list(prog) for prog in programs])


def cost(n: int) -> float:
    """alpha + beta n: the time of one n-byte message."""
    return ALPHA + BETA * n


# --- simulator semantics on hand-computed cases -------------------------------------------


def test_single_send_costs_alpha_plus_beta_n():
    r = simulate(sched([Send(1, 1000)], [Recv(0, 1000)]), ALPHA, BETA)
    assert r.time == pytest.approx(cost(1000))
    assert r.finish.tolist() == pytest.approx([cost(1000), cost(1000)])
    assert r.messages == [Message(0, 1, 1000, 0, 0.0, pytest.approx(cost(1000)))]


def test_zero_byte_message_still_costs_alpha():
    r = simulate(sched([Send(1, 0)], [Recv(0, 0)]), ALPHA, BETA)
    assert r.time == pytest.approx(ALPHA)
    assert r.time > 0


def test_two_sends_to_one_receiver_are_serialized():
    s = sched([Recv(1, 500), Recv(2, 500)], [Send(0, 500)], [Send(0, 500)])
    r = simulate(s, ALPHA, BETA)
    assert r.time == pytest.approx(2 * cost(500))
    # rank 1 is received first (program order at the receiver); rank 2 waits for it.
    assert r.finish.tolist() == pytest.approx([2 * cost(500), cost(500), 2 * cost(500)])
    assert [(m.src, m.start) for m in r.messages] == [(1, 0.0), (2, pytest.approx(cost(500)))]


def test_two_sends_from_one_sender_are_serialized():
    s = sched([Send(1, 300), Send(2, 300)], [Recv(0, 300)], [Recv(0, 300)])
    r = simulate(s, ALPHA, BETA)
    assert r.finish.tolist() == pytest.approx([2 * cost(300), cost(300), 2 * cost(300)])


def test_sendrecv_exchange_costs_one_message_not_two():
    s = sched([SendRecv(1, 800, 1, 800)], [SendRecv(0, 800, 0, 800)])
    r = simulate(s, ALPHA, BETA)
    assert r.time == pytest.approx(cost(800))
    assert len(r.messages) == 2


def test_sendrecv_completes_at_the_later_half():
    s = sched([SendRecv(1, 100, 1, 900)], [SendRecv(0, 900, 0, 100)])
    r = simulate(s, ALPHA, BETA)
    assert r.finish.tolist() == pytest.approx([cost(900), cost(900)])


def test_ring_shift_is_bidirectional():
    # Each rank sends right and receives from the left at the same time: one step.
    p, n = 5, 64
    s = sched(*[[SendRecv((i + 1) % p, n, (i - 1) % p, n)] for i in range(p)])
    assert simulate(s, ALPHA, BETA).time == pytest.approx(cost(n))


def test_chain_of_relays_adds_up():
    s = sched([Send(1, 100)], [Recv(0, 100), Send(2, 200)], [Recv(1, 200)])
    r = simulate(s, ALPHA, BETA)
    assert r.finish.tolist() == pytest.approx(
        [cost(100), cost(100) + cost(200), cost(100) + cost(200)]
    )


def test_compute_adds_gamma_units_and_delays_the_partner():
    s = sched([Compute(250, "reduce"), Send(1, 40)], [Recv(0, 40)])
    r = simulate(s, ALPHA, BETA, GAMMA)
    expected = GAMMA * 250 + cost(40)
    assert r.finish.tolist() == pytest.approx([expected, expected])
    assert r.messages[0].start == pytest.approx(GAMMA * 250)
    # Without gamma the computation is free.
    assert simulate(s, ALPHA, BETA).time == pytest.approx(cost(40))


def test_sendrecv_waits_for_a_late_partner_on_one_half():
    s = sched([SendRecv(1, 10, 2, 10)], [Recv(0, 10)], [Compute(1000), Send(0, 10)])
    r = simulate(s, ALPHA, BETA, GAMMA)
    late = GAMMA * 1000 + cost(10)
    assert r.finish.tolist() == pytest.approx([late, cost(10), late])


def test_messages_between_a_pair_are_fifo():
    s = sched([Send(1, 10), Send(1, 20)], [Recv(0, 10), Recv(0, 20)])
    r = simulate(s, ALPHA, BETA)
    assert [m.nbytes for m in r.messages] == [10, 20]
    assert r.time == pytest.approx(cost(10) + cost(20))


def test_empty_programs_finish_at_zero():
    r = simulate(sched([], []), ALPHA, BETA)
    assert r.finish.tolist() == [0.0, 0.0] and r.time == 0.0 and r.messages == []


def test_result_to_dict_is_json():
    r = simulate(sched([Send(1, 8)], [Recv(0, 8)]), ALPHA, BETA, GAMMA)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["time"] == pytest.approx(cost(8))
    assert d["messages"][0]["src"] == 0 and d["messages"][0]["nbytes"] == 8
    assert d["alpha"] == ALPHA and d["gamma"] == GAMMA


def test_negative_cost_parameter_is_rejected():
    with pytest.raises(ValueError, match="alpha"):
        simulate(sched([], []), -1.0, BETA)


# --- schedules that cannot run ------------------------------------------------------------


def test_deadlock_raises_and_names_the_blocked_ranks():
    s = sched([Recv(1, 4), Send(1, 4)], [Recv(0, 4), Send(0, 4)])
    s.validate()  # pairwise consistent, yet it deadlocks
    with pytest.raises(ScheduleError, match="rank 0") as err:
        simulate(s, ALPHA, BETA)
    assert "rank 1" in str(err.value)


def test_size_mismatch_raises():
    s = sched([Send(1, 8)], [Recv(0, 16)])
    with pytest.raises(ScheduleError, match="8 bytes"):
        simulate(s, ALPHA, BETA)


def test_fifo_order_mismatch_raises():
    s = sched([Send(1, 10), Send(1, 20)], [Recv(0, 20), Recv(0, 10)])
    with pytest.raises(ScheduleError):
        simulate(s, ALPHA, BETA)
    with pytest.raises(ScheduleError):
        s.validate()


def test_unreceived_message_raises():
    with pytest.raises(ScheduleError, match="rank 1"):
        simulate(sched([Send(1, 8)], []), ALPHA, BETA)


def test_schedule_error_is_a_value_error():
    assert issubclass(ScheduleError, ValueError)


# --- Schedule: messages, validate, to_dict ------------------------------------------------


def test_messages_lists_sendrecv_send_first():
    s = sched(
        [SendRecv(1, 4, 2, 8), Compute(3), Recv(2, 1)], [Recv(0, 4)], [Send(0, 8), Send(0, 1)]
    )
    assert s.messages(0) == [("send", 1, 4), ("recv", 2, 8), ("recv", 2, 1)]
    assert s.all_messages() == [s.messages(0), [("recv", 0, 4)], [("send", 0, 8), ("send", 0, 1)]]
    s.validate()


@pytest.mark.parametrize(
    "programs, fragment",
    [
        (([Send(1, 4)], [Recv(0, 8)]), "sends 1 message"),            # size differs
        (([Send(1, 4), Send(1, 4)], [Recv(0, 4)]), "sends 2 message"),  # count differs
        (([Send(1, 4)], [Recv(0, 4), Recv(0, 4)]), "receives 2"),
        (([Send(0, 4)], []), "itself"),
        (([SendRecv(1, 4, 0, 4)], [Recv(0, 4)]), "itself"),
        (([Send(2, 4)], []), "out of range"),
        (([Recv(-1, 4)], []), "out of range"),
        (([Send(1, -4)], [Recv(0, -4)]), "negative size"),
        (([Compute(-1)], []), "negative compute"),
    ],
)
def test_validate_rejects(programs, fragment):
    with pytest.raises(ScheduleError, match=fragment):
        sched(*programs).validate()


def test_validate_rejects_wrong_number_of_programs():
    with pytest.raises(ScheduleError, match="3 programs"):
        Schedule("x", "y", 2, [[], [], []]).validate()


def test_to_dict_is_json_and_round_trips():
    pr = make_problem("gatherv", p=3, distribution="same", b=2, root=0)
    s = Schedule(
        "gatherv", "hand", 3,
        [[Recv(1, 8, blocks=range(1, 2)), Compute(2, "copy")], [SendRecv(0, 8, 2, 0, tag=7)],
         [Send(1, 0, kind="exchange")]],
        problem=pr, meta={"parent": np.array([-1, 0, 1])},
    )
    d = json.loads(json.dumps(s.to_dict()))
    assert d["programs"][1] == [
        {"op": "sendrecv", "send_peer": 0, "send_nbytes": 8, "recv_peer": 2,
         "recv_nbytes": 0, "tag": 7, "send_blocks": None, "recv_blocks": None, "kind": "data"}
    ]
    assert d["programs"][0][0]["blocks"] == [1, 2] and d["programs"][2][0]["kind"] == "exchange"
    assert d["programs"][0][1] == {"op": "compute", "units": 2, "label": "copy"}
    assert d["meta"] == {"parent": [-1, 0, 1]}
    back = Schedule.from_dict(d)
    assert back.programs == s.programs and back.problem == pr


# --- Waitall: posted non-blocking sends and receives ----------------------------------------


def test_waitall_serves_receives_in_posting_order():
    # rank 1 posts the receive from 3 before the one from 0, so 0 waits although it is
    # ready at t=0; 0's second send (to 2) can only go out after its first
    s = sched([Waitall((("send", 1, 10), ("send", 2, 10)))],
              [Waitall((("recv", 3, 10), ("recv", 0, 10)))],
              [Recv(0, 10)], [Send(1, 10)])
    r = simulate(s, ALPHA, BETA)
    assert r.finish.tolist() == pytest.approx([3 * cost(10), 2 * cost(10), 3 * cost(10),
                                               cost(10)])
    assert [(m.src, m.dst) for m in r.messages] == [(3, 1), (0, 1), (0, 2)]


def test_waitall_overlaps_its_sends_with_its_receives():
    # both ranks post a receive and a send: one message time each way, at once
    s = sched([Waitall((("recv", 1, 100), ("send", 1, 50)))],
              [Waitall((("recv", 0, 50), ("send", 0, 100)))])
    assert simulate(s, ALPHA, BETA).finish.tolist() == pytest.approx([cost(100), cost(100)])


def test_waitall_recursive_doubling_takes_log_p_rounds():
    p, rounds = 8, []
    progs = [[] for _ in range(p)]
    d = 1
    while d < p:
        for r in range(p):
            posts = ([("recv", r - d, 8)] if r >= d else []) + \
                    ([("send", r + d, 8)] if r + d < p else [])
            progs[r].append(Waitall(tuple(posts), tag=d))
        d *= 2
    result = simulate(sched(*progs), ALPHA, BETA)
    assert result.time == pytest.approx(3 * cost(8))
    assert {m.tag for m in result.messages} == {1, 2, 4}
    assert sched(*progs).messages(4) == [("recv", 3, 8), ("send", 5, 8), ("recv", 2, 8),
                                         ("send", 6, 8), ("recv", 0, 8)]


def test_waitall_with_blocking_partners_and_an_empty_waitall():
    s = sched([Waitall(()), SendRecv(1, 4, 1, 4), Waitall((("send", 1, 4),))],
              [Waitall((("send", 0, 4), ("recv", 0, 4))), Recv(0, 4)])
    assert simulate(s, ALPHA, BETA).finish.tolist() == pytest.approx([2 * cost(4)] * 2)


def test_waitall_deadlock_and_bad_posts_are_reported():
    with pytest.raises(ScheduleError, match="2 rank.s. cannot finish"):
        simulate(sched([Waitall((("recv", 1, 8),))], [Waitall((("recv", 0, 8),))]), 1.0, 0.0)
    with pytest.raises(ScheduleError, match="size mismatch"):
        simulate(sched([Waitall((("send", 1, 8),))], [Recv(0, 4)]), 1.0, 0.0)
    with pytest.raises(ScheduleError, match="neither 'send' nor 'recv'"):
        sched([Waitall((("put", 1, 8),))], []).validate()
    with pytest.raises(ScheduleError, match="sends 1 message"):
        sched([Waitall((("send", 1, 8),))], [Waitall((("recv", 0, 4),))]).validate()


def test_waitall_round_trips_through_json_and_reports():
    s = sched([Waitall((("recv", 1, 8), ("send", 1, 4)), tag=3)],
              [Waitall((("send", 0, 8), ("recv", 0, 4)))])
    back = Schedule.from_dict(json.loads(json.dumps(s.to_dict())))
    assert back.programs == s.programs
    assert s.messages(0) == [("recv", 1, 8), ("send", 1, 4)]
    assert "[recv 1 (8 B) + send 1 (4 B)]" in format_report(s, simulate(s, ALPHA, BETA))


# --- linear gatherv -----------------------------------------------------------------------


def linear_cases():
    for p in range(1, 10):
        for root in range(p):
            for dist in ("same", "random", "two_blocks"):
                yield p, root, dist


@pytest.mark.parametrize("p, root, dist", list(linear_cases()))
def test_linear_gatherv_messages_and_time(p, root, dist):
    pr = make_problem("gatherv", p=p, distribution=dist, b=7, root=root, seed=p * 31 + root)
    s = schedule("gatherv", "linear", pr)
    nonempty = [i for i in range(p) if i != root and pr.counts[i] > 0]
    # The root receives from the non-empty ranks, in rank order, with their block sizes.
    assert s.messages(root) == [("recv", i, pr.counts[i] * 4) for i in nonempty]
    for i in range(p):
        if i != root:
            expected = [("send", root, pr.nbytes(i))] if pr.counts[i] > 0 else []
            assert s.messages(i) == expected
    r = simulate(s, ALPHA, BETA)
    total = sum(pr.nbytes(i) for i in range(p) if i != root)
    assert r.time == pytest.approx(len(nonempty) * ALPHA + BETA * total, rel=1e-12)
    assert r.finish[root] == r.time
    assert all(m.tag == 0 and m.dst == root for m in r.messages)


def test_linear_gatherv_all_nonempty_is_p_minus_1_alphas():
    pr = make_problem("gatherv", p=33, distribution="decreasing", b=100)
    r = simulate(gatherv.linear(pr), ALPHA, BETA)
    m_others = (pr.m - pr.counts[pr.root]) * pr.itemsize
    assert r.time == pytest.approx((pr.p - 1) * ALPHA + BETA * m_others, rel=1e-12)


def test_linear_gatherv_meta_is_the_star_tree():
    s = gatherv.linear(make_problem("gatherv", p=5, root=3, b=2))
    assert s.meta["root"] == 3 and s.meta["parent"] == [3, 3, 3, -1, 3]
    assert s.meta["edge_bytes"] == [8, 8, 8, 0, 8] and s.meta["fixed_exchanges"] == []


def test_linear_rejects_other_collectives():
    with pytest.raises(ValueError, match="gatherv"):
        gatherv.linear(make_problem("allgather", p=4))


# --- registry and report ------------------------------------------------------------------


def test_registry_lists_linear_gatherv():
    assert SCHEDULES["gatherv"]["linear"] is gatherv.linear
    assert algorithms("gatherv") == ["linear", "binomial", "tuw", "circulant"]  # table order


def test_unknown_algorithm_lists_valid_ones():
    pr = make_problem("gatherv", p=4)
    with pytest.raises(ValueError, match=r"no model for algorithm 'foo' of gatherv; .*linear"):
        schedule("gatherv", "foo", pr)


def test_unknown_collective_lists_valid_ones():
    with pytest.raises(ValueError, match=r"models exist for: .*gatherv"):
        schedule("nonsense", "linear", make_problem("gatherv", p=4))
    with pytest.raises(ValueError, match="gatherv"):
        algorithms("nonsense")


def test_an_algorithm_without_a_model_lists_the_collectives_models():
    with pytest.raises(ValueError, match=r"no model for algorithm 'linear' of allgather; "
                                         r"models exist for: circulant, bruck"):
        schedule("allgather", "linear", make_problem("allgather", p=4))


def test_problem_of_another_collective_is_rejected():
    with pytest.raises(ValueError, match="scatterv"):
        schedule("gatherv", "linear", make_problem("scatterv", p=4))


def test_report_lists_every_rank_and_the_prediction():
    pr = make_problem("gatherv", p=5, distribution="two_blocks", b=10, root=2)
    s = schedule("gatherv", "linear", pr)
    r = simulate(s, ALPHA, BETA)
    text = format_report(s, r)
    lines = text.splitlines()
    assert "gatherv" in lines[0] and "linear" in lines[0]
    assert "p=5" in lines[0] and "root=2" in lines[0] and "α=1 µs" in lines[0]
    assert "recv 0 (40 B), recv 4 (40 B)" in text
    assert sum(1 for line in lines if "send 2 (40 B)" in line) == 2
    expected_us = (2 * ALPHA + 80 * BETA) * 1e6
    assert lines[-1].startswith("model prediction")
    assert f"{expected_us:.3f} µs" in lines[-1]
    assert len(lines) == 2 + 5 + 1


def test_report_abbreviates_long_programs_and_many_ranks():
    pr = make_problem("gatherv", p=200, distribution="same", b=1, root=0)
    s = schedule("gatherv", "linear", pr)
    text = format_report(s, simulate(s, ALPHA, BETA), max_ranks=10, max_ops=4)
    assert "recv 1 (4 B), recv 2 (4 B), recv 3 (4 B), …, recv 199 (4 B)  [199 ops]" in text
    assert "(190 ranks not shown)" in text
    assert len(text.splitlines()) == 2 + 11 + 1


def test_report_always_shows_the_root_and_the_slowest_rank():
    pr = make_problem("gatherv", p=200, distribution="same", b=1, root=100)
    s = schedule("gatherv", "linear", pr)
    lines = format_report(s, simulate(s, ALPHA, BETA), max_ranks=4).splitlines()
    assert any(line.split()[:3] == ["100", "recv", "0"] for line in lines)
    assert [line.split()[-1] for line in lines if line.lstrip().startswith("…")] == [
        "shown)", "shown)"
    ]
    assert "(98 ranks not shown)" in "\n".join(lines)


# --- scale --------------------------------------------------------------------------------


def recursive_doubling(p: int, n: int) -> Schedule:
    """Allgather by recursive doubling: in round k rank i exchanges n*2^k bytes with i^2^k."""
    rounds = int(math.log2(p))
    programs = [
        [SendRecv(i ^ (1 << k), n << k, i ^ (1 << k), n << k) for k in range(rounds)]
        for i in range(p)
    ]
    return Schedule("allgather", "recursive_doubling", p, programs)


def binomial_broadcast(p: int, n: int) -> Schedule:
    """Binomial-tree broadcast from 0: in round k every rank i < 2^k sends n bytes to i+2^k."""
    rounds = int(math.log2(p))
    programs = []
    for i in range(p):
        first = i.bit_length()  # the round after the one in which i receives
        prog = [Recv(i - (1 << (first - 1)), n)] if i else []
        prog += [Send(i + (1 << k), n) for k in range(first, rounds)]
        programs.append(prog)
    return Schedule("bcast", "binomial", p, programs)


@pytest.mark.full  # paper scale: make test-full
def test_recursive_doubling_at_p_65536():
    p, n = 65536, 8
    s = recursive_doubling(p, n)
    r = simulate(s, ALPHA, BETA)
    # log2(p) rounds, doubling sizes: 16 alpha + beta n (p - 1) at every rank.
    expected = 16 * ALPHA + BETA * n * (p - 1)
    np.testing.assert_allclose(r.finish, expected, rtol=1e-12)
    assert len(r.messages) == p * 16


@pytest.mark.full  # paper scale: make test-full
def test_binomial_broadcast_at_p_65536():
    p, n = 65536, 100
    s = binomial_broadcast(p, n)
    s.validate()
    r = simulate(s, ALPHA, BETA)
    # Every rank is busy in the last round, so all finish after log2(p) message times.
    np.testing.assert_allclose(r.finish, 16 * cost(n), rtol=1e-12)
    assert len(r.messages) == p - 1
    # Rank i receives in round bit_length(i) - 1, i.e. it starts then.
    starts = {m.dst: m.start for m in r.messages}
    assert starts[1] == 0.0
    assert starts[p - 1] == pytest.approx(15 * cost(n))


def test_typed_meta_round_trips_through_json():
    from tuwviz.model.meta import PipelinedRingMeta, RingMeta, StarMeta, TreeMeta

    cases = [("gatherv", "linear", StarMeta), ("scatterv", "binomial", TreeMeta),
             ("gatherv", "tuw", TreeMeta), ("allgatherv", "ring", RingMeta),
             ("allgatherv", "pipelined", PipelinedRingMeta)]
    for coll, alg, cls in cases:
        s = schedule(coll, alg, make_problem(coll, 7, "random", 5, root=3))
        assert type(s.meta) is cls
        d = json.loads(json.dumps(s.to_dict()))
        assert d["meta"]["kind"] == cls.kind
        back = Schedule.from_dict(d)
        assert type(back.meta) is cls and json.loads(json.dumps(back.to_dict())) == d
        # dict-style reading, for callers from before the dataclasses
        first = back.meta.keys()[0]
        assert back.meta[first] == getattr(back.meta, first) and first in back.meta


@pytest.mark.parametrize("collective", ["gather", "scatter"])
def test_the_binomial_trees_reordering_copy_is_costed_at_a_root_other_than_0(collective):
    # the course report's overhead: the binomial kernels copy the p - 1 other blocks into
    # (Gather: out of) virtual order at root != 0; divide and conquer needs no copy
    gamma = 1e-9
    t = {}
    for alg in ("binomial", "divide_conquer"):
        for root in (0, 2):
            pr = make_problem(collective, 12, "same", 1000, root=root)
            t[alg, root] = simulate(schedule(collective, alg, pr), 1e-6, 1e-9, gamma).time
    assert t["binomial", 2] - t["binomial", 0] == pytest.approx(11 * 1000 * gamma)
    assert t["divide_conquer", 2] == pytest.approx(t["divide_conquer", 0], rel=0.2)
