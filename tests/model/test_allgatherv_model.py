"""The allgatherv paper's model: distributions, Eq. (1), Section 2.3, Eq. (2), the headline."""
import math
import random

import pytest

from tuwviz import model
from tuwviz.model import allgatherv as ag
from tuwviz.model.topology.ring import allgatherv_block_elems, ring_order
from tuwviz.problems import PAPER_DISTRIBUTIONS, Problem, make_problem


def test_paper_distributions_follow_section_3():
    p, c = 8, 1000
    m = {d: make_problem("allgatherv", p, d, c).counts for d in PAPER_DISTRIBUTIONS["allgatherv"]}
    assert m["regular"] == (c,) * p                                   # (1) m = pc
    assert m["broadcast"] == (c,) + (0,) * (p - 1)                    # (2) m = c
    assert sum(m["spike"]) == c and m["spike"][1:] == (c // 14,) * 7  # (3) m_i = c/(2(p-1))
    assert abs(m["spike"][0] - c / 2) <= p                            #     m_0 ~ c/2
    assert m["half_full"] == (2 * c, 0) * 4                           # (4) m = pc
    assert m["linear_decreasing"] == tuple(2 * c * (p - 1 - i) // (p - 1) for i in range(p))
    assert m["linear_decreasing"][0] == 2 * c and m["linear_decreasing"][-1] == 0
    # (6) groups i = 1, 2, 4, 8 of i processes each get c p / (i log2 p)
    assert m["geometric"] == (2666, 1333, 1333, 666, 666, 666, 666, 333)
    for d, counts in m.items():
        assert make_problem("allgatherv", 1, d, c).counts == (c,) or d == "half_full"


def test_default_sweeps_use_the_collectives_own_paper():
    from tuwviz.experiments.sweep import distributions
    assert distributions(None, "allgatherv") == list(PAPER_DISTRIBUTIONS["allgatherv"])
    assert distributions(None, "gatherv") == list(PAPER_DISTRIBUTIONS["gatherv"])


def _random_counts(rng, p, zeros=True):
    return [rng.choice([0, 0, rng.randint(1, 12)]) if zeros else rng.randint(1, 12)
            for _ in range(p)]


def test_rounds_never_exceed_eq1_and_equal_it_without_empty_processes():
    rng = random.Random(4)
    checked = 0
    for _ in range(400):
        p, B = rng.randint(1, 12), rng.randint(1, 5)
        counts = _random_counts(rng, p, zeros=rng.random() < 0.6)
        pr = Problem("allgatherv", p, 0, counts, datatype="byte")
        for order in ("rank", "spread"):
            s = model.schedule("allgatherv", "pipelined", pr, block_bytes=B, ring=order)
            eq1 = sum(max(1, math.ceil(c / B)) for c in counts) - min(
                max(1, math.ceil(c / B)) for c in counts)
            assert s.meta["rounds"] == ag.rounds(counts, B) == eq1
            # unit cost per message: the simulated time counts rounds in time (slots)
            t = model.simulate(s, alpha=1.0, beta=0.0).time
            assert t == s.meta["slots"] <= eq1, (counts, B, order)
            if 0 not in counts:
                assert t == eq1
            s.check_blocks()  # every rank ends with every block
            checked += 1
    assert checked == 800


def test_spread_placement_reaches_the_section_2_3_count():
    """Equidistant processes with data: sum ceil(m_i/B) - 1 + z/(p-z) rounds (Section 2.3)."""
    rng = random.Random(5)
    hits = 0
    while hits < 150:
        full, gap, B = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 3)
        p, z = full * (gap + 1), full * gap
        if not 0 < z < p - 1:
            continue
        data = [rng.randint(gap * B + 1, 12 + gap * B) for _ in range(full)]  # b_i > z'
        counts = data + [0] * z
        rng.shuffle(counts)
        s = model.schedule("allgatherv", "pipelined",
                           Problem("allgatherv", p, 0, counts, datatype="byte"),
                           block_bytes=B, ring="spread")
        expected = sum(math.ceil(c / B) for c in counts) - 1 + z // (p - z)
        assert ag.spread_rounds(counts, B) == expected
        assert s.meta["slots"] == model.simulate(s, 1.0, 0.0).time == expected, (counts, B)
        assert expected < ag.rounds(counts, B)  # a real saving over Eq. (1)
        hits += 1


def test_figure_3_example_saves_two_rounds():
    """Figure 3: r = 11 by Eq. (1), 9 with the empty processes spread out."""
    counts, B = [3, 3, 3, 0, 0, 0], 1  # the figure's numbers: 3 processes of 3 blocks, z = 3
    s = model.schedule("allgatherv", "pipelined",
                       Problem("allgatherv", 6, 0, counts, datatype="byte"),
                       block_bytes=B, ring="spread")
    assert s.meta["ring"] == [3, 0, 4, 1, 5, 2]
    assert (ag.rounds(counts, B), s.meta["slots"]) == (11, 9)


def test_eq2_estimate_and_special_cases():
    alpha, beta = 2e-6, 1e-9
    counts = [300_000, 0, 100_000, 0, 0, 50_000, 7, 0]
    p, z, m = 8, 4, sum(counts)
    expected = math.sqrt(m * alpha / beta / ((p + z) / 2 - 1 + z // (p - z)))
    assert ag.estimate_block_bytes(counts, alpha, beta) == pytest.approx(expected, rel=1e-12)
    in_ints = math.sqrt(4 * m * alpha / beta / ((p + z) / 2 - 1 + z // (p - z)))  # 4-byte elements
    assert allgatherv_block_elems(p, counts, 4, 0, alpha, beta) == math.floor(in_ints / 4)
    # regular: B = m', the pipelined ring is the linear ring
    assert allgatherv_block_elems(3, [5, 5, 5], 4, 0, 1e-6, 1e-9) == 5
    reg = Problem("allgatherv", 3, 0, (5, 5, 5))
    assert (model.schedule("allgatherv", "pipelined", reg).all_messages()
            == model.schedule("allgatherv", "ring", reg).all_messages())
    # broadcast (z = p-1): a linear pipeline of m/B + p - 2 rounds
    bcast = [10**6] + [0] * 9
    assert ag.estimate_block_bytes(bcast, alpha, beta) == pytest.approx(
        math.sqrt(10**6 * alpha / beta / 8))
    assert allgatherv_block_elems(2, [0, 0], 4, 0, alpha, beta) == 1
    assert allgatherv_block_elems(2, [9, 0], 1, 5, alpha, beta) == 5


def test_model_sweep_finds_its_optimum_next_to_the_estimate():
    pr = make_problem("allgatherv", 16, "spike", 4 << 20, datatype="byte")
    sizes = [1 << k for k in range(10, 22)]
    df = ag.block_sweep(pr, sizes, alpha=5e-6, beta=1e-9)
    pipe = df[df.algorithm == "pipelined"]
    best = pipe.loc[pipe.time_us.idxmin()]
    est = df.estimate_bytes[0]
    assert est / 2 <= best.block_bytes <= est * 2
    assert (df.source == "model").all()
    # near the optimum, the pipelined ring beats the linear ring on spikes by a wide margin
    assert best.ratio_to_ring < 0.25


def test_headline_broadcast_30_processes_32mb_1mb_blocks():
    """Section 3.1: best possible improvement 32 * 29 / (29 + 31) ~ 15 (alpha -> 0)."""
    mb = 1 << 20
    pr = make_problem("allgatherv", 30, "broadcast", 32 * mb, datatype="byte")
    pipe = model.schedule("allgatherv", "pipelined", pr, block_bytes=mb)
    ring = model.schedule("allgatherv", "ring", pr)
    assert pipe.meta["slots"] == pipe.meta["rounds"] == 32 + 29 - 1
    t_ring = model.simulate(ring, alpha=0.0, beta=1e-9).time
    t_pipe = model.simulate(pipe, alpha=0.0, beta=1e-9).time
    assert t_ring / t_pipe == pytest.approx(32 * 29 / (29 + 31), rel=1e-12)
    assert round(t_ring / t_pipe) == 15
    # with start-up costs the improvement is a little smaller, never larger
    assert (model.simulate(ring, 5e-6, 1e-9).time / model.simulate(pipe, 5e-6, 1e-9).time
            < t_ring / t_pipe)


def test_ring_orders():
    assert ring_order(11, [1] * 11, [0, 1, 1, 1, 1, 1, 2, 2, 3, 4, 5], "smp") == list(range(11))
    # round-robin placement over 2 nodes: the ring visits each node's processes together
    assert ring_order(6, [1, 0, 1, 1, 0, 1], [0, 1] * 3, "smp") == [4, 0, 2, 1, 3, 5]
    assert ring_order(6, [0, 3, 0, 0, 3, 0], None, "spread") == [0, 2, 1, 3, 5, 4]
    s = model.schedule("allgatherv", "ring", Problem("allgatherv", 4, 0, (1, 2, 3, 4)),
                       ring="smp", nodes=[0, 1, 0, 1])
    assert s.meta["ring"] == [0, 2, 1, 3]
    assert [op.send_peer for op in s.programs[0]] == [2, 2, 2]


def test_bad_parameters_are_clear_errors():
    pr = make_problem("allgatherv", 4, "spike", 100)
    with pytest.raises(ValueError, match="ring: unknown value 'snake'; valid values: rank, smp, spread"):
        model.schedule("allgatherv", "pipelined", pr, ring="snake")
    with pytest.raises(ValueError, match="no parameter 'block_bytes'; valid parameters: ring, nodes"):
        model.schedule("allgatherv", "ring", pr, block_bytes=8)
    with pytest.raises(ValueError, match="nodes gives 3 values for p=4 processes"):
        model.schedule("allgatherv", "ring", pr, ring="smp", nodes=[0, 0, 1])
    with pytest.raises(ValueError, match="block_bytes must be >= 0"):
        model.schedule("allgatherv", "pipelined", pr, block_bytes=-1)
    with pytest.raises(ValueError, match="takes no parameters"):
        model.schedule("gatherv", "linear", make_problem("gatherv", 2), block_bytes=8)
