"""Problem distributions against the gatherv paper's definitions and table numbers."""
import numpy as np
import pytest

from tuwviz.problems import (DISTRIBUTIONS, PAPER_DISTRIBUTIONS, SPIKES_RHO, Problem, distribution_counts,
                             make_problem)

P = 560  # Tables 1-3: 35 x 16 processes


# (distribution, b) -> (m, m') as printed in Table 1 of the gatherv paper
TABLE1 = {
    ("same", 1): (560, 560), ("same", 10): (5600, 5600),
    ("decreasing", 1): (842, 1680), ("decreasing", 10): (5900, 11760),
    ("decreasing", 100): (56400, 112560),
    ("alternating", 1): (560, 560), ("alternating", 10): (5600, 8400),
    ("two_blocks", 1): (2, 560), ("two_blocks", 100): (200, 56000),
}


@pytest.mark.parametrize("key", TABLE1, ids=lambda k: f"{k[0]}-b{k[1]}")
def test_deterministic_distributions_match_table_1(key):
    dist, b = key
    pr = make_problem("gatherv", P, dist, b)
    assert (pr.m, pr.m_prime) == TABLE1[key]
    assert pr.root == P // 2  # the paper's fixed root r = floor(p/2)


def test_formulas_per_process():
    p, b = 7, 10
    assert distribution_counts("same", p, b).tolist() == [10] * 7
    assert distribution_counts("decreasing", p, b).tolist() == [2 * b * (p - i) // p + 1 for i in range(p)]
    assert distribution_counts("alternating", p, b).tolist() == [15, 5, 15, 5, 15, 5, 15]
    assert distribution_counts("two_blocks", p, b).tolist() == [10, 0, 0, 0, 0, 0, 10]
    assert distribution_counts("two_blocks", 1, b).tolist() == [10]


def test_random_is_uniform_in_1_to_2b_and_seeded():
    c = distribution_counts("random", P, 100, seed=3)
    assert c.min() >= 1 and c.max() <= 200
    assert abs(c.mean() - 100.5) < 8  # uniform on [1, 200]
    assert (c == distribution_counts("random", P, 100, seed=3)).all()
    assert not (c == distribution_counts("random", P, 100, seed=4)).all()


def test_spikes_take_rho_b_with_probability_1_over_rho():
    assert SPIKES_RHO == 5
    c = distribution_counts("spikes", P, 10, seed=1)
    assert set(c.tolist()) <= {1, 50}
    frac = np.mean(c == 50)
    assert 0.12 < frac < 0.28
    assert make_problem("gatherv", P, "spikes", 1, seed=1).m_prime == 2800  # Table 1


def test_all_gatherv_distributions_but_two_blocks_are_positive():
    for name in PAPER_DISTRIBUTIONS["gatherv"]:
        c = distribution_counts(name, 9, 3, seed=2)
        assert (c > 0).all() or name == "two_blocks"


def test_regular_collectives_use_the_padded_block():
    pr = make_problem("gather", 4, "decreasing", 10)
    assert pr.block_counts() == (pr.block,) * 4 == (21,) * 4
    assert pr.nbytes(3) == 21 * 4


@pytest.mark.parametrize("kwargs, message", [
    (dict(collective="gatherv", p=3, root=0, counts=(1, -2, 3)), "negative count m_1=-2"),
    (dict(collective="gatherv", p=3, root=3, counts=(1, 2, 3)), "root 3 out of range 0..2"),
    (dict(collective="gatherv", p=3, root=0, counts=(1, 2)), "2 block sizes for p=3"),
    (dict(collective="gatherq", p=1, root=0, counts=(1,)), "valid collectives: gather, gatherv"),
    (dict(collective="gatherv", p=1, root=0, counts=(1,), datatype="float128"), "valid datatypes"),
])
def test_bad_problems_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Problem(**kwargs)


def test_bad_distribution_arguments():
    with pytest.raises(ValueError, match="valid distributions: same, random, spikes"):
        make_problem("gatherv", 4, "lumpy", 1)
    with pytest.raises(ValueError, match="block size b must be at least 0, got -1"):
        make_problem("gatherv", 4, "same", -1)
    with pytest.raises(ValueError, match="at least 1"):
        make_problem("gatherv", 0, "same", 1)
    assert make_problem("gatherv", 4, "Two-Blocks", 1).distribution == "two_blocks"
