"""The circulant and Bruck Allgather schedules against Table I's Allgather rows (the
uniform reduce-scatter paper, Section III-E, Proposition 3), computed exactly.

Costs are small integers (alpha = 3, beta = 5, gamma = 7) and blocks one byte, so
m = p and every time is an exact integer.  Table I counts the copy after the rounds,
gamma ceil(m/2) for the circulant algorithm and gamma m for Bruck's, but not the copy of
the own block (gamma m/p) that both make first: the tests add it, and only it.
"""
from __future__ import annotations

import math

import pytest

from tuwviz import model
from tuwviz.model import SendRecv, simulate
from tuwviz.problems import Problem, make_problem

A, B, G = 3, 5, 7
PS = list(range(2, 70)) + [100, 127, 128, 129, 1000, 1152]


def predict(algorithm, p, c=1):
    pr = make_problem("allgather", p, "same", c, datatype="byte")
    return simulate(model.schedule("allgather", algorithm, pr), A, B, G).time


@pytest.mark.parametrize("p", PS)
def test_circulant_allgather_is_table_i(p):
    q, m = math.ceil(math.log2(p)), p
    assert predict("circulant", p) == q * A + (p - 1) * B + G * math.ceil(m / 2) + G * m // p


@pytest.mark.parametrize("p", PS)
def test_bruck_allgather_is_table_i(p):
    q, m = math.ceil(math.log2(p)), p
    assert predict("bruck", p) == q * A + (p - 1) * B + G * m + G * m // p


@pytest.mark.parametrize("p", [2, 3, 5, 9, 11, 16, 33])
def test_proposition_3_volume_and_rounds(p):
    """ceil(log2 p) rounds; skips[k+1] - skips[k] blocks in round k, p - 1 in all."""
    c = 4
    s = model.schedule("allgather", "circulant", make_problem("allgather", p, "same", c,
                                                              datatype="byte"))
    for rank in range(p):
        rounds = [op for op in s.programs[rank] if isinstance(op, SendRecv)]
        assert len(rounds) == math.ceil(math.log2(p))
        assert sum(op.recv_nbytes for op in rounds) == (p - 1) * c
    # rank 0 copies nothing after the rounds (Section III-E)
    assert [op.units for op in s.programs[0] if not isinstance(op, SendRecv)] == [c]


def _rounds(s, rank):
    return [op for op in s.programs[rank] if isinstance(op, SendRecv)]


@pytest.mark.parametrize("p", [1, 2, 3, 5, 9, 11, 16, 17, 33])
def test_allgatherv_receives_every_block_once(p):
    """Proposition 4 for any counts: ceil(log2 p) rounds, and rank r receives exactly the
    m - m_r elements of the other blocks (each block once); with equal blocks the messages
    are the regular Allgather's."""
    import random
    rng = random.Random(p)
    counts = tuple(rng.choice([0, 1, 2, 7]) for _ in range(p))
    s = model.schedule("allgatherv", "circulant", Problem("allgatherv", p, 0, counts,
                                                          datatype="byte"))
    for rank in range(p):
        assert len(_rounds(s, rank)) == math.ceil(math.log2(p))
        assert sum(op.recv_nbytes for op in _rounds(s, rank)) == sum(counts) - counts[rank]
    regular = make_problem("allgather", p, "same", 3, datatype="byte")
    same = Problem("allgatherv", p, 0, (3,) * p, datatype="byte")
    ag = model.schedule("allgather", "circulant", regular)
    agv = model.schedule("allgatherv", "circulant", same)
    assert all(ag.messages(r) == agv.messages(r) for r in range(p))


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8, 9, 16, 31, 32, 33, 64])
def test_proposition_4_worst_case_one_process_holds_all(p):
    """All m elements at one rank j: nobody sends more than ceil(log2 p) m; for p a power of
    two (every e_k = 0) rank j sends its block in every round, exactly ceil(log2 p) m."""
    q, m = math.ceil(math.log2(p)), 10
    for j in {0, 1, p - 1}:
        counts = tuple(m if i == j else 0 for i in range(p))
        s = model.schedule("allgatherv", "circulant", Problem("allgatherv", p, 0, counts,
                                                              datatype="byte"))
        sent = [sum(op.send_nbytes for op in _rounds(s, r)) for r in range(p)]
        assert max(sent) <= q * m
        epsilons = s.meta.epsilon
        assert sent[j] == m * sum(1 for e in epsilons if e == 0)
        if p & (p - 1) == 0:
            assert sent[j] == q * m


def test_allgather_table_differs_from_table_i_by_the_own_block_only():
    from tuwviz.model.allgather import allgather_table

    t = allgather_table(list(range(2, 41)) + [1152], 6, A, B, G)
    assert (t.difference_s == G * 6).all() and set(t.source) == {"model"}
    # half the copy: the circulant's formula copies ceil(p/2) blocks, Bruck's p
    for p, g in t.groupby("p"):
        circ, bruck = (g[g.algorithm == a].formula_s.item() for a in ("circulant", "bruck"))
        assert bruck - circ == G * 6 * (p - -(-p // 2))


def test_combined_allreduce_crossover_table():
    from tuwviz.model.combined import allreduce_crossover

    t = allreduce_crossover(17, [1, 10, 100, 1000, 10_000], A, B, G)
    assert t.faster.tolist()[0] == "circulant" and t.faster.tolist()[-1] == "combined"
    # one crossing: once the combined one wins, it keeps winning
    wins = [f == "combined" for f in t.faster]
    assert wins == sorted(wins)
