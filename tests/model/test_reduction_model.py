"""The reduction schedules against Table I and Proposition 2 of the uniform reduce-scatter
paper (Träff, Hunold, Vardas, Funk, Section III), computed exactly.

Costs are small integers (alpha = 3, beta = 5, gamma = 7 per element) and the datatype is
MPI_BYTE, as in the paper's experiments, so an element is a byte and every simulated time
is an exact sum of integers: equality, not closeness, is asserted.  Table I assumes p is
not a power of two; powers of two are checked too (the circulant formulas do not change).
"""
from __future__ import annotations

import math

import pytest

from tuwviz import model
from tuwviz.model import SendRecv, simulate
from tuwviz.model.topology import circ_epsilon, circ_skips
from tuwviz.problems import make_problem

A, B, G = 3, 5, 7
PS = list(range(2, 70)) + [100, 127, 128, 129, 1000, 1152]


def predict(collective, algorithm, p, m, root=0):
    pr = make_problem(collective, p, "same", m, root=root, datatype="byte", op="bor")
    return simulate(model.schedule(collective, algorithm, pr), A, B, G).time


@pytest.mark.parametrize("p", PS)
def test_allreduce_circulant_is_table_i(p):
    q, m = math.ceil(math.log2(p)), 24
    assert predict("allreduce", "circulant", p, m) == q * (A + B * m + 2 * G * m)


@pytest.mark.parametrize("p", PS)
def test_reduce_circulant_is_table_i_for_every_root(p):
    q, m = math.ceil(math.log2(p)), 24
    for root in sorted({0, 1, p // 2, p - 1}):
        assert predict("reduce", "circulant", p, m, root) == q * (A + B * m + G * m), root


@pytest.mark.parametrize("p", PS)
def test_reduce_scatter_block_circulant_is_table_i_plus_the_copies_it_makes(p):
    """Table I: q alpha + (beta + gamma)(2^q - 1) m/p, m/p = c per block; gamma counts every
    received block reduced (or copied, where there is no own input to add: e_k = 1).
    Table I leaves out copies of the own input: round 0's permute-pack of 2^(q-1) blocks,
    V_r's blocks of the rounds with e_k = 0, and the result block into recvbuf."""
    q, skips = circ_skips(p)
    c = 6
    own_input = sum(2 ** (q - 1 - i) for i in range(1, q) if circ_epsilon(skips, i) == 0)
    copies = 2 ** (q - 1) + own_input + 1
    expected = q * A + (B + G) * (2**q - 1) * c + G * copies * c
    assert predict("reduce_scatter_block", "circulant", p, c) == expected


@pytest.mark.parametrize("p", [2, 3, 5, 9, 11, 16, 33, 100])
def test_proposition_2_volume_from_the_schedule(p):
    """(2^q - 1)/p m elements sent and received per process, 2^(q-1-k) blocks in round k."""
    q, _ = circ_skips(p)
    c = 4
    s = model.schedule("reduce_scatter_block", "circulant",
                       make_problem("reduce_scatter_block", p, "same", c, datatype="byte", op="bor"))
    for rank in range(p):
        rounds = [op for op in s.programs[rank] if isinstance(op, SendRecv)]
        assert [op.send_nbytes for op in rounds] == [2 ** (q - 1 - k) * c for k in range(q)]
        assert sum(op.recv_nbytes for op in rounds) == (2**q - 1) * c


def test_proposition_1_every_round_moves_m():
    p, m = 11, 10
    s = model.schedule("allreduce", "circulant", make_problem("allreduce", p, "same", m))
    for rank in range(p):
        ops = [op for op in s.programs[rank] if isinstance(op, SendRecv)]
        assert len(ops) == 4 and {(op.send_nbytes, op.recv_nbytes) for op in ops} == {(40, 40)}


def test_paper_scale_process_counts_are_modelled():
    """p = 1,152 (36 x 32, Hydra), 4,800 (100 x 48, Irene), 8,192: only the model goes there."""
    for p in (1152, 4800, 8192):
        t = predict("allreduce", "circulant", p, 1)
        assert t == math.ceil(math.log2(p)) * (A + B + 2 * G)


# ---- the baselines of Table I's "Standard" column ------------------------------------------


@pytest.mark.parametrize("p", PS)
def test_allreduce_butterfly_is_table_i_with_its_correction(p):
    q, m = math.ceil(math.log2(p)), 24
    correction = 0 if p & (p - 1) == 0 else A + B * m  # the post-step
    assert predict("allreduce", "butterfly", p, m) == q * (A + B * m + G * m) + correction


@pytest.mark.parametrize("p", PS)
def test_reduce_binomial_is_table_i(p):
    q, m = math.ceil(math.log2(p)), 24
    for root in sorted({0, 1, p // 2, p - 1}):
        assert predict("reduce", "binomial", p, m, root) == q * (A + B * m + G * m), root


@pytest.mark.parametrize("p", [2, 4, 8, 16, 32, 64, 128])
def test_recursive_halving_for_p_a_power_of_two(p):
    """q rounds halving the vector: (p - 1)/p m sent and reduced, plus the own block's copy.
    Table I's butterfly entry says (2^q - 1) 2m/p here, twice this volume."""
    q, c = int(math.log2(p)), 6
    assert predict("reduce_scatter_block", "recursive_halving", p, c) == \
        q * A + (B + G) * (p - 1) * c + G * c


def test_recursive_halving_worked_example_p6():
    """p = 6 (p' = 4, x = 2), the kernel's example; rank 1's path decides.  Pre-step: 6
    blocks received and reduced; round 0: 4 blocks received from rank 4 (it sends 2),
    reduced; round 1: 2 blocks each way with rank 3, reduced; its block copied; post-step:
    1 block to rank 0.  Table I's entry would be 5 alpha + 18 beta c + 17 gamma c."""
    c = 6
    assert predict("reduce_scatter_block", "recursive_halving", 6, c) == \
        4 * A + 13 * B * c + 13 * G * c


@pytest.mark.parametrize("p", [2, 3, 5, 9, 11, 16, 17])
def test_irregular_reduce_scatter_degrades_to_q_m_when_one_block_holds_everything(p):
    """Section III-D: with all m elements in one block, its owner receives m in each of
    the q rounds; with equal blocks the circulant irregular schedule is the block one."""
    from tuwviz.problems import Problem

    q, m = math.ceil(math.log2(p)), 10
    for owner in sorted({0, p // 2, p - 1}):
        counts = tuple(m if i == owner else 0 for i in range(p))
        s = model.schedule("reduce_scatter", "circulant",
                           Problem("reduce_scatter", p, 0, counts, datatype="byte", op="bor"))
        got = [op.recv_nbytes for op in s.programs[owner] if isinstance(op, SendRecv)]
        assert got == [m] * q
    even = Problem("reduce_scatter", p, 0, (4,) * p, datatype="byte", op="bor")
    block = make_problem("reduce_scatter_block", p, "same", 4, datatype="byte", op="bor")
    assert model.schedule("reduce_scatter", "circulant", even).all_messages() == \
        model.schedule("reduce_scatter_block", "circulant", block).all_messages()


def test_table_i_as_the_notebook_shows_it():
    from tuwviz.model.reduce import table_i

    t = table_i([11, 16, 1152], 1152 * 4, A, B, G)
    exact = t[t.operation.isin(["allreduce", "reduce"])]
    assert len(exact) == 12 and (exact.difference_s == 0).all()
    for p in (11, 16, 1152):
        q, skips = circ_skips(p)
        c = 1152 * 4 // p
        own = sum(2 ** (q - 1 - i) for i in range(1, q) if circ_epsilon(skips, i) == 0)
        row = t[(t.p == p) & (t.operation == "reduce_scatter_block")
                & (t.algorithm == "circulant")].iloc[0]
        assert row.difference_s == G * (2 ** (q - 1) + own + 1) * c  # the copies
    pow2 = t[(t.p == 16) & (t.algorithm == "recursive_halving")].iloc[0]
    assert pow2.formula_s - pow2.model_s == (B + G) * 15 * 1152 * 4 // 16 - G * 1152 * 4 // 16
    assert set(t.source) == {"model"}


@pytest.mark.parametrize("p", list(range(2, 40)) + [64, 100, 129])
def test_combined_allreduce_is_reduce_scatter_block_plus_allgather(p):
    """Section III-G: with p | m the combined Allreduce costs the circulant
    Reduce_scatter_block on m/p plus the Allgather rounds q alpha + (p-1)/p beta m, with no
    copy (the Allgatherv runs in place); 2q rounds."""
    q, c = math.ceil(math.log2(p)), 6
    m = p * c
    assert predict("allreduce", "combined", p, m) == (
        predict("reduce_scatter_block", "circulant", p, c) + q * A + (p - 1) * c * B)
    s = model.schedule("allreduce", "combined",
                       make_problem("allreduce", p, "same", m, datatype="byte", op="bor"))
    assert all(sum(isinstance(op, SendRecv) for op in prog) == 2 * q for prog in s.programs)


def test_combined_allreduce_overtakes_the_direct_one_for_large_m():
    """Section IV-B: twice the rounds, so slower for small m; under 3 beta m in volume
    instead of q beta m, so faster for large m.  With alpha = 3, beta = 5, gamma = 7 and
    p = 17 the crossing lies between 1 and 1000 elements."""
    p = 17
    assert predict("allreduce", "combined", p, 1) > predict("allreduce", "circulant", p, 1)
    assert predict("allreduce", "combined", p, 1000) < predict("allreduce", "circulant", p, 1000)
