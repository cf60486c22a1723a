"""Round and bandwidth optimality of gather and scatter schedules (tuwviz.analysis.optimality).

The properties are computed from schedules (a model's, or one rebuilt from a trace); the
reference algorithms must meet the course report's bounds for every p and root, and
schedules built to break one property must be caught on exactly that property.
"""
from __future__ import annotations

import math

import pytest

from tuwviz import model
from tuwviz.model.gatherv import linear as gather_linear
from tuwviz.model.program import Recv, Schedule, Send
from tuwviz.model.scatterv import linear as scatter_linear
from tuwviz.analysis.optimality import optimality, schedule_from_trace
from tuwviz.problems import make_problem


@pytest.mark.parametrize("coll, alg", [("gather", "binomial"), ("gather", "divide_conquer"),
                                       ("scatter", "binomial"), ("scatter", "divide_conquer")])
def test_the_reference_trees_are_round_and_bandwidth_optimal(coll, alg):
    for p in range(1, 34):
        for root in sorted({0, min(2, p - 1), p - 1}):
            o = optimality(model.schedule(coll, alg, make_problem(coll, p, "same", 10, root=root)))
            assert o.rounds == o.rounds_bound == (math.ceil(math.log2(p)) if p > 1 else 0), (p, root, o)
            assert o.root_bytes == o.root_bound == 40 * (p - 1), (p, root, o)
            assert o.ok, (p, root, o.failed())


@pytest.mark.parametrize("coll, build", [("gather", gather_linear), ("scatter", scatter_linear)])
def test_linear_is_flagged_as_not_round_optimal(coll, build):
    for p in (4, 5, 8, 17):  # p - 1 > ceil(log2 p) from p = 4 on
        o = optimality(build(make_problem(coll, p, "same", 10, root=0)))
        assert o.rounds == p - 1 > o.rounds_bound
        assert "rounds" in o.failed() and "root_bytes" not in o.failed()


def _problem(p=4):
    return make_problem("gather", p, "same", 1, root=0)  # blocks of 4 bytes


def test_a_root_that_receives_too_much_and_a_chain_are_caught():
    pr = _problem()
    # a chain 3 -> 2 -> 1 -> 0 forwarding everything: 3 rounds, the last process starts late
    chain = Schedule("gather", "chain", 4, [
        [Recv(1, 12)], [Recv(2, 8), Send(0, 12)], [Recv(3, 4), Send(1, 8)], [Send(2, 4)]], pr)
    o = optimality(chain)
    assert (o.rounds, o.latency) == (3, 2) and set(o.failed()) == {"rounds"}
    # blocks sent twice over: the root receives 24 bytes for 12, rank 2 sends 16
    extra = Schedule("gather", "extra", 4, [
        [Recv(1, 8), Recv(2, 16)], [Send(0, 8)], [Recv(3, 8), Send(0, 16)], [Send(2, 8)]], pr)
    o = optimality(extra)
    assert o.root_bytes == 24 > o.root_bound == 12 and o.max_sent == 16
    assert {"root_bytes", "max_sent"} <= set(o.failed())


def test_a_trace_that_cannot_be_replayed_one_message_at_a_time():
    # both ranks post their send first (non-blocking in the kernel): replayed as blocking
    # messages they would wait for each other, so the rounds are unknown, and said why
    pr = make_problem("gather", 2, "same", 1, root=0)
    events = [[{"dir": "send", "peer": 1, "bytes": 4, "tag": 0},
               {"dir": "recv", "peer": 1, "bytes": 4, "tag": 0}],
              [{"dir": "send", "peer": 0, "bytes": 4, "tag": 0},
               {"dir": "recv", "peer": 0, "bytes": 4, "tag": 0}]]
    o = optimality(schedule_from_trace(pr, "mine", events))
    assert o.rounds is None and o.why and "rounds" in o.failed()


def test_only_gather_and_scatter_schedules():
    pr = make_problem("allgatherv", 4, "regular", 1)
    with pytest.raises(ValueError, match="gather"):
        optimality(model.schedule("allgatherv", "ring", pr))
