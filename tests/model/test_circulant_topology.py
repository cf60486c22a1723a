"""The circulant builder (kernels_c/topology/circulant.c and its Python mirror) against the
uniform reduce-scatter paper's own numbers and properties, and C against Python.

Paper: Träff, Hunold, Vardas, Funk, "Uniform algorithms for reduce-scatter and (most) other
collectives for MPI", Section III: Table II (skips for p = 31, 32, 33), Lemma 1, the p = 9,
r = 8 example of Section III-D, |B_r^k| = 2^(q-1-k) and B_r^(k+1) a subset of B_r^k
(Proposition 2: 2^q - 1 blocks in all).
"""
from __future__ import annotations

import math

import pytest

from tuwviz import kernels
from tuwviz.model import topology as py
from tuwviz.kernels.topology import CTopology


@pytest.fixture(scope="module")
def c():
    return CTopology(kernels.load())


def test_table_ii():
    assert py.circ_skips(31) == (5, [1, 2, 4, 8, 16, 31])
    assert py.circ_skips(32) == (5, [1, 2, 4, 8, 16, 32])
    assert py.circ_skips(33) == (6, [1, 2, 3, 5, 9, 17, 33])


def test_lemma_1_for_every_p_up_to_10000():
    for p in range(1, 10_001):
        q, skips = py.circ_skips(p)
        assert q == math.ceil(math.log2(p)) and skips[0] == 1 and skips[q] == p
        for k in range(q):
            assert skips[k + 1] <= 2 * skips[k] <= skips[k + 1] + 1, (p, k)
            # the correction is 1 exactly when doubling overshoots by one (Section III-B)
            assert py.circ_epsilon(skips, k) == 2 * skips[k] - skips[k + 1]
        assert sum(skips[k + 1] - skips[k] for k in range(q)) == p - 1
        if p > 1:
            assert skips[1] == 2 and py.circ_epsilon(skips, 0) == 0


def test_the_papers_p9_example():
    q, skips = py.circ_skips(9)
    assert skips == [1, 2, 3, 5, 9]
    assert [py.circ_jump(skips, k) for k in range(q)] == [1, 1, 2, 4]
    assert [py.circ_to(9, 8, skips, k) for k in range(q)] == [7, 7, 6, 4]
    assert [py.circ_from(9, 8, skips, k) for k in range(q)] == [0, 0, 1, 3]
    assert py.circ_blocks(9, 8) == [[7, 6, 4, 0, 2, 5, 1, 3], [7, 5, 1, 3], [6, 2], [4]]
    # the sets received by rank 8: B_0^0, B_0^1, B_1^2, B_3^3
    received = [py.circ_blocks(9, py.circ_from(9, 8, skips, k))[k] for k in range(q)]
    assert received == [[8, 7, 5, 1, 3, 6, 2, 4], [8, 6, 2, 4], [8, 4], [8]]


def test_block_sets_halve_and_nest_for_every_p_up_to_200():
    for p in range(1, 201):
        q, skips = py.circ_skips(p)
        zero = py.circ_blocks(p, 0)  # the pattern is circulant: rank r's sets are shifted
        assert py.circ_blocks(p, p - 1) == [[(x - 1) % p for x in s] for s in zero]
        for r in range(p):
            sets = [[(x + r) % p for x in s] for s in zero]
            assert [len(s) for s in sets] == [2 ** (q - 1 - k) for k in range(q)]
            for k in range(q):
                t = py.circ_to(p, r, skips, k)
                assert sets[k][0] == t  # the to-process's own block goes first
                assert len(set(sets[k])) == len(sets[k]) and r not in sets[k]
                # What r receives in round k is its own block, then B_r^(k+1), ...,
                # B_r^(q-1), in the order it sends them: so B_r^(k+1) is a subset of what
                # it received in round k, the property the in-place reductions need (the
                # paper's parenthesis).  The paper's "B_r^(k+1) subset of B_r^k" holds for
                # its p = 9 example but not in general: p = 4, r = 0 sends {3, 1}, then {2}.
                f = py.circ_from(p, r, skips, k)
                got = [(x + f) % p for x in zero[k]]
                assert got == [r] + [x for s in sets[k + 1:] for x in s], (p, r, k)
    assert py.circ_blocks(4, 0) == [[3, 1], [2]]


def test_to_and_from_are_inverse_and_jumps_cover_the_ring():
    for p in range(1, 300):
        q, skips = py.circ_skips(p)
        for k in range(q):
            for r in range(p):
                assert py.circ_to(p, py.circ_from(p, r, skips, k), skips, k) == r


def reduce_trees(p, root, c=None):
    trees = [py.circ_tree_create(p, i, root) for i in range(p)]
    if c is not None:
        assert [c.circ_tree_create(p, i, root) for i in range(p)] == trees, (p, root)
    return trees


def check_reduce_tree(p, root, trees):
    """What a reduce tree must be: the root alone has no parent, parent and child agree,
    a child sends before its parent does, along the circulant to-edge of its round, and
    the longest path has q = ceil(log2 p) rounds, from rank root - 1 (Section III-C)."""
    q, skips = py.circ_skips(p)
    assert [i for i, t in enumerate(trees) if t.parent < 0] == [root]
    for i, t in enumerate(trees):
        for e in t.children:
            child = trees[e.rank]
            assert (child.parent, child.round) == (i, e.round)
            assert t.parent < 0 or e.round < t.round
        if t.parent >= 0:
            assert t.parent == py.circ_to(p, i, skips, t.round)
            assert py.CircEdge(i, t.round) in trees[t.parent].children
    # every rank reaches the root
    for i in range(p):
        hops, j = 0, i
        while trees[j].parent >= 0:
            j, hops = trees[j].parent, hops + 1
        assert j == root and hops <= q
    deepest, j = [], (root - 1) % p
    while trees[j].parent >= 0:
        deepest.append(trees[j].round)
        j = trees[j].parent
    assert deepest == list(range(q)), (p, root)


#: The quick tier's p: every p up to 64, then around powers of two up to the full tier's 300.
SUBTREE_PS = [*range(1, 65), 95, 127, 128, 129, 191, 255, 256, 257, 299, 300]


@pytest.mark.parametrize("ps", [SUBTREE_PS, pytest.param(range(1, 301), marks=pytest.mark.full)],
                         ids=["sampled", "every-p-up-to-300"])
def test_subtrees_are_consecutive_virtual_ranks(ps):
    """Section III-F: the tree Gather and Scatter use.  Every subtree is virtual ranks
    v .. v + size - 1 with the children's subtrees one after another in round order, so a
    gather appends and a scatter cuts without reordering; sizes by depth-first count."""
    for p in ps:
        for root in sorted({0, 1 % p, p - 1}):
            trees = reduce_trees(p, root)
            size = {}
            for v in range(p - 1, -1, -1):  # children have larger virtual ranks
                r = (v + root) % p
                size[r] = 1 + sum(size[e.rank] for e in trees[r].children)
            for r, t in enumerate(trees):
                at = (r - root) % p + 1
                for e in t.children:
                    assert (e.rank - root) % p == at, (p, root, r)
                    at += size[e.rank]
                assert at == (r - root) % p + size[r]
                assert py.circ_subtree_size(p, r, root) == size[r], (p, root, r)


def test_reduce_tree_is_a_tree_for_every_p_up_to_200_sampled_roots():
    for p in range(1, 201):
        for root in sorted({0, 1 % p, p // 2, p - 1}):
            check_reduce_tree(p, root, reduce_trees(p, root))


def test_circulant_c_equals_python(c):
    for p in range(1, 130):
        q, skips = py.circ_skips(p)
        assert c.circ_skips(p) == (q, skips)
        for k in range(q):
            assert c.circ_epsilon(skips, k) == py.circ_epsilon(skips, k)
            for r in range(p):
                assert c.circ_to(p, r, skips, k) == py.circ_to(p, r, skips, k)
                assert c.circ_from(p, r, skips, k) == py.circ_from(p, r, skips, k)
        for v in range(p):
            assert c.circ_pathhead(v, q, skips) == py.circ_pathhead(v, q, skips), (p, v)
        for k in range(q + 1):
            n = 2 ** (q - k) - 1
            a, b = [-1] * (n + 3), [-1] * (n + 3)
            assert c.circ_relative_blocks(5, k, q, skips, 2, a) == 2 + n
            assert py.circ_relative_blocks(5, k, q, skips, 2, b) == 2 + n
            assert a == b, (p, k)
        for root in sorted({0, 1 % p, p // 2, p - 1}):
            reduce_trees(p, root, c)
            assert [c.circ_subtree_size(p, r, root) for r in range(p)] == \
                [py.circ_subtree_size(p, r, root) for r in range(p)], (p, root)


@pytest.mark.full
def test_reduce_tree_c_equals_python_every_root(c):
    for p in range(1, 130):
        for root in range(p):
            check_reduce_tree(p, root, reduce_trees(p, root, c))


def test_large_p_has_31_rounds(c):
    p = 2**31 - 1
    q, skips = py.circ_skips(p)
    assert q == 31 and c.circ_skips(p) == (q, skips)
    assert c.circ_to(p, 0, skips, q - 1) == py.circ_to(p, 0, skips, q - 1)
    assert c.circ_from(p, p - 1, skips, q - 1) == py.circ_from(p, p - 1, skips, q - 1)


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError):
        py.circ_skips(0)
    _, skips = py.circ_skips(9)
    for bad in (-1, 4):
        with pytest.raises(ValueError, match="round"):
            py.circ_to(9, 0, skips, bad)
    with pytest.raises(ValueError):
        py.circ_tree_create(9, 9, 0)
    with pytest.raises(ValueError):
        py.circ_pathhead(10, 4, skips)
