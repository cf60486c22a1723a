"""Every C topology builder equals its Python mirror, and both obey their definitions.

The C builders (``kernels_c/topology/``) are called through
:class:`tuwviz.kernels.topology.CTopology`, under the Python mirrors' signatures, so each
check is one call made both ways.  The sweeps cover p = 1..129; every root for the cheap
builders, a sample of roots (0, 1, p/2, p-1) for the binomial tree in the quick run and
every root in the ``full`` run (``pytest -m full``).  Independent of the formulas, the
binomial tree is checked against what a tree is (one root, consecutive subtrees), and the
ordered hypercube's dims against ceil(log2 p).
"""
from __future__ import annotations

import math
import random

import pytest

from tuwviz import kernels
from tuwviz.model import topology as py
from tuwviz.kernels.topology import CTopology

P_MAX = 129
KINDS = (py.RING_RANK, py.RING_SMP, py.RING_SPREAD)


@pytest.fixture(scope="module")
def c():
    return CTopology(kernels.load())


def sample_roots(p):
    return sorted({0, 1 % p, p // 2, p - 1})


# --- binomial tree ------------------------------------------------------------------------


def binomial_trees(c, p, root):
    """The tree as every rank sees it, after checking that C and Python agree."""
    trees = [py.binomial_tree_create(p, i, root) for i in range(p)]
    assert [c.binomial_tree_create(p, i, root) for i in range(p)] == trees, (p, root)
    return trees


def check_binomial(c, p, root):
    trees = binomial_trees(c, p, root)
    # what a tree is: the root alone has no parent; every subtree is its own block, then
    # its children's subtrees one after another, each child's tree agreeing with its edge
    assert [i for i, t in enumerate(trees) if t.parent < 0] == [root]
    for i, t in enumerate(trees):
        nxt = 1
        for e in t.children:
            child = trees[e.rank]
            assert e.first == nxt and e.rank == (i + e.first) % p
            assert (child.parent, child.round, child.size) == (i, e.round, e.size)
            nxt += e.size
        assert nxt == t.size
    assert trees[root].size == p and max(t.round for t in trees) == math.ceil(math.log2(p)) - 1


def test_binomial_tree_c_equals_python_sampled_roots(c):
    for p in range(1, P_MAX + 1):
        for root in sample_roots(p):
            check_binomial(c, p, root)


@pytest.mark.full
def test_binomial_tree_c_equals_python_every_root(c):
    for p in range(1, P_MAX + 1):
        for root in range(p):
            binomial_trees(c, p, root)


def test_binomial_bad_arguments_are_errors():
    for args in [(0, 0, 0), (4, 4, 0), (4, 0, -1)]:
        with pytest.raises(ValueError):
            py.binomial_tree_create(*args)


# --- divide and conquer --------------------------------------------------------------------


def check_dc(c, p, root):
    trees = [py.dc_tree_create(p, i, root) for i in range(p)]
    assert [c.dc_tree_create(p, i, root) for i in range(p)] == trees, (p, root)
    # what the tree is: one root owning [0, p); every subtree a range of consecutive ranks
    # holding its subroot, cut by its children into itself and their ranges, the larger
    # halves first; each child's tree agrees with its edge; ceil(log2 p) rounds
    assert [i for i, t in enumerate(trees) if t.parent < 0] == [root]
    assert (trees[root].lo, trees[root].hi) == (0, p)
    for i, t in enumerate(trees):
        assert t.lo <= i < t.hi
        covered = {i}
        rounds = [e.round for e in t.children]
        assert rounds == sorted(set(rounds)) and all(r > t.round for r in rounds)
        sizes = [e.hi - e.lo for e in t.children]
        assert sizes == sorted(sizes, reverse=True)
        for e in t.children:
            child = trees[e.rank]
            assert (child.parent, child.round, child.lo, child.hi) == (i, e.round, e.lo, e.hi)
            assert e.lo <= e.rank < e.hi and e.rank in (e.lo, e.hi - 1)  # next to the cut
            assert covered.isdisjoint(range(e.lo, e.hi))
            covered |= set(range(e.lo, e.hi))
        assert covered == set(range(t.lo, t.hi))
    depth = max((t.round for t in trees), default=-1) + 1
    assert depth == math.ceil(math.log2(p))


def test_dc_tree_c_equals_python_sampled_roots(c):
    for p in range(1, P_MAX + 1):
        for root in sample_roots(p):
            check_dc(c, p, root)


@pytest.mark.full
def test_dc_tree_c_equals_python_every_root(c):
    for p in range(1, P_MAX + 1):
        for root in range(p):
            check_dc(c, p, root)


def test_dc_tree_matches_the_worked_example():
    # kernels_c/topology/divide_conquer.c, p = 6, root 2
    trees = [py.dc_tree_create(6, i, 2) for i in range(6)]
    assert [t.parent for t in trees] == [1, 2, -1, 2, 3, 3]
    assert [t.round for t in trees] == [2, 1, -1, 0, 2, 1]
    assert [(t.lo, t.hi) for t in trees] == [(0, 1), (0, 2), (0, 6), (3, 6), (4, 5), (5, 6)]


def test_dc_bad_arguments_are_errors():
    for args in [(0, 0, 0), (4, 4, 0), (4, 0, -1)]:
        with pytest.raises(ValueError):
            py.dc_tree_create(*args)


# --- ordered hypercube --------------------------------------------------------------------


def test_ordered_hypercube_c_equals_python(c):
    fns = ("oh_fixed_root", "oh_is_fixed_root", "oh_has_sibling", "oh_partner", "oh_cube")
    for p in range(1, P_MAX + 1):
        d_max = py.oh_dims(p)
        assert c.oh_dims(p) == d_max == math.ceil(math.log2(p))
        for name in fns:
            cf, pf = getattr(c, name), getattr(py, name)
            got = [cf(p, d, i) for d in range(d_max + 1) for i in range(p)]
            assert got == [pf(p, d, i) for d in range(d_max + 1) for i in range(p)], (name, p)
        fixed = sum(py.oh_is_fixed_root(p, d, i) for d in range(d_max) for i in range(p))
        partners = sum(py.oh_partner(p, d, i) >= 0 for d in range(d_max) for i in range(p))
        assert partners <= fixed and (partners > 0) == (p > 1)


def test_right_wins_c_equals_python_on_all_small_states(c):
    # every combination of gather roots, T and root blocks in a small range, every root
    values = range(3)
    states = [py.OhState(g, t, m) for g in range(4) for t in values for m in values]
    pairs = [(a, b) for a in states for b in states if a.groot != b.groot]
    outcomes = set()
    for left, right in pairs:
        for root in range(5):  # root 4 is in neither cube
            wins = py.oh_right_wins(left, right, root)
            assert c.oh_right_wins(left, right, root) == wins, (left, right, root)
            outcomes.add(wins)
    assert outcomes == {True, False}


# --- rings --------------------------------------------------------------------------------


def count_patterns(p, rng):
    """Counts with no, some, most and all processes empty, and one spike."""
    yield [1] * p
    yield [0] * p
    yield [rng.randrange(1, 50) for _ in range(p)]
    yield [rng.randrange(0, 3) for _ in range(p)]
    yield [rng.randrange(1, 9) if rng.random() < 0.2 else 0 for _ in range(p)]
    yield [5 if i == p // 3 else 0 for i in range(p)]


def node_maps(p, rng):
    """One node, nodes of 4 consecutive ranks, ranks dealt round robin to 3 nodes, random
    node labels (any ints: not the lowest rank, not sorted)."""
    yield [0] * p
    yield [i // 4 for i in range(p)]
    yield [i % 3 for i in range(p)]
    yield [rng.choice([7, -2, 40, 3, 11]) for _ in range(p)]


def test_ring_order_c_equals_python_every_kind_counts_and_node_map(c):
    rng = random.Random(1)
    checked = 0
    for p in range(1, P_MAX + 1):
        for counts in count_patterns(p, rng):
            for kind in KINDS:
                for nodes in node_maps(p, rng) if kind == py.RING_SMP else [None]:
                    order = py.ring_order(p, counts, nodes, kind)
                    assert c.ring_order(p, counts, nodes, kind) == order, (p, kind, counts)
                    assert sorted(order) == list(range(p))
                    checked += 1
    assert checked > 4000


def test_ring_order_errors_and_kind_names(c):
    for args in [(3, [1, 1, 1], None, 7), (3, [1, 1, 1], None, py.RING_SMP),
                 (0, [], None, py.RING_RANK)]:
        with pytest.raises(ValueError):
            c.ring_order(*args)
        with pytest.raises(ValueError):
            py.ring_order(*args)
    with pytest.raises(ValueError, match="valid ring orders: rank, smp, spread"):
        py.ring_order(3, [1, 1, 1], None, "ring")
    counts, nodes = [0, 3, 0, 1, 2], [0, 1, 0, 1, 1]
    for name, kind in zip(("rank", "smp", "spread"), KINDS):
        assert py.ring_order(5, counts, nodes, name) == c.ring_order(5, counts, nodes, kind)


def run_clock(ring, p, own, nsend):
    """Every slot of the clock until it stops: [(senders, now, sent after)], at most a
    generous bound of slots (a clock that does not stop fails the comparison)."""
    sent, slots = [0] * p, []
    for _ in range(sum(nsend) + p + 1):
        senders, now = ring.ring_slot(p, own, nsend, sent)
        slots.append((senders, now, list(sent)))
        if senders == 0:
            break
    return slots


@pytest.mark.parametrize("full", [pytest.param(True, marks=pytest.mark.full), False])
def test_ring_slot_c_equals_python_on_random_clocks(c, full):
    rng = random.Random(3)
    ps = range(1, P_MAX + 1) if full else [1, 2, 3, 5, 8, 17, 64, 129]
    for p in ps:
        for _ in range(2 if full else 3):
            own = [rng.choice([0, 0, 1, 2, 5]) for _ in range(p)]
            total = sum(own)
            # what the pipelined ring sends: all non-empty pieces but the successor's; and
            # arbitrary targets, which the clock must treat alike in C and Python
            nsend = ([total - own[(k + 1) % p] if p > 1 else 0 for k in range(p)]
                     if rng.random() < 0.5 else [rng.randrange(0, total + 2) for _ in range(p)])
            slots = run_clock(py, p, own, nsend)
            assert run_clock(c, p, own, nsend) == slots, (p, own, nsend)
            assert slots[-1][0] == 0


def test_block_elems_c_equals_python_bit_for_bit(c):
    rng = random.Random(5)
    costs = [(1e-6, 1e-9), (2.5e-6, 3.3e-10), (1.0, 1.0), (1e-15, 1e-9), (1e-6, 0.0),
             (-1.0, 1e-9), (0.0, 1e-9)]
    checked = 0
    for p in range(1, P_MAX + 1):
        for counts in count_patterns(p, rng):
            counts = [x * rng.choice([1, 1000, 100000]) for x in counts]
            for block_bytes in (0, 0, rng.choice([1, 4097])):  # mostly Eq. (2)
                for alpha, beta in rng.sample(costs, 2):
                    args = (p, counts, rng.choice([1, 4, 8, 0]), block_bytes, alpha, beta)
                    assert c.allgatherv_block_elems(*args) == py.allgatherv_block_elems(*args), args
                    checked += 1
    assert checked > 4000
