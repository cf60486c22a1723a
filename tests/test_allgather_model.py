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
from tuwviz.problems import make_problem

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
