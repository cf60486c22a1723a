"""The intergroup segments (Kang, Träff et al., ParCo 2019, Sections 4, 4.1): the paper's
examples, the properties Algorithms 1 and 2 rely on, and C = Python."""
from __future__ import annotations

import itertools
import random

import pytest

from tuwviz import kernels
from tuwviz.model import topology as py
from tuwviz.kernels.topology import CTopology


@pytest.fixture(scope="module")
def c():
    return CTopology(kernels.load())


def test_figure_2_subgroups():
    # p = 8, q = 3: s_0 = {0, 1, 2}, s_1 = {3, 4, 5}, s_2 = {6, 7}
    groups = [list(range(*(lambda f, s: (f, f + s))(*py.ig_part(8, 3, j)))) for j in range(3)]
    assert groups == [[0, 1, 2], [3, 4, 5], [6, 7]]
    # and Figure 1, p = 6, q = 2: three each, so b_j's block goes out in 3 segments
    assert [py.ig_part(6, 2, j) for j in range(2)] == [(0, 3), (3, 3)]


def test_parts_tile_in_order_and_differ_by_at_most_one():
    for total in range(0, 60):
        for n in range(1, 20):
            parts = [py.ig_part(total, n, i) for i in range(n)]
            assert parts[0][0] == 0 and sum(s for _, s in parts) == total
            assert all(a[0] + a[1] == b[0] for a, b in zip(parts, parts[1:]))
            sizes = [s for _, s in parts]
            assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
            for i, (f, s) in enumerate(parts):
                assert all(py.ig_part_of(total, n, x) == i for x in range(f, f + s))


def senders_of(counts, n, k):
    """Brute force: the senders overlapping part k, by byte."""
    total, start = sum(counts), 0
    f, s = py.ig_part(total, n, k)
    out = []
    for i, m in enumerate(counts):
        if any(f <= x < f + s for x in range(start, start + m)):
            out.append(i)
        start += m
    return out


def test_algorithm_2_every_byte_reaches_exactly_one_receiver_and_the_order_is_section_4_1():
    rng = random.Random(5)
    for _ in range(400):
        ns, n = rng.randint(1, 12), rng.randint(1, 12)
        counts = [rng.choice([0, 1, 2, 3, 7, 20]) for _ in range(ns)]
        total, start = sum(counts), 0
        received = [[] for _ in range(n)]
        for i, m in enumerate(counts):
            k, lo = py.ig_receivers(total, n, start, m)
            for r in range(lo, lo + k):
                received[r].append(i)
            start += m
        for r in range(n):
            order = py.ig_recv_order(ns, counts, n, r)
            assert sorted(order) == received[r] == senders_of(counts, n, r)
            # a sender with more receivers after r comes first, one with receivers before r
            # last; the others (they send only to r) in rank order
            if len(order) > 1:
                f, s = py.ig_part(total, n, r)
                starts = [sum(counts[:i]) for i in range(ns)]
                goes_on = [i for i in order if starts[i] + counts[i] > f + s]
                came = [i for i in order if starts[i] < f]
                assert order[:len(goes_on)] == goes_on
                assert order[len(order) - len(came):] == came
                middle = [i for i in order if i not in goes_on + came]
                assert middle == sorted(middle)


def test_section_4_1_example():
    # senders 3 1 4 1 5 2 into 3 receivers: receiver 1 takes a_4 (goes on), a_3, a_2 (came)
    assert py.ig_recv_order(6, [3, 1, 4, 1, 5, 2], 3, 1) == [4, 3, 2]
    assert py.ig_recv_order(6, [3, 1, 4, 1, 5, 2], 3, 0) == [2, 0, 1]
    assert py.ig_recv_order(6, [3, 1, 4, 1, 5, 2], 3, 2) == [5, 4]


def test_intergroup_c_equals_python(c):
    rng = random.Random(11)
    for total, n in itertools.product(range(0, 40), range(1, 12)):
        for i in range(n):
            assert c.ig_part(total, n, i) == py.ig_part(total, n, i)
        for x in range(total):
            assert c.ig_part_of(total, n, x) == py.ig_part_of(total, n, x)
        for start in range(0, total + 1, 3):
            for count in {0, 1, 5, total - start}:
                if start + count > total:  # outside the domain: C's result is undefined
                    continue
                assert c.ig_receivers(total, n, start, count) == \
                    py.ig_receivers(total, n, start, count)
    for _ in range(500):
        ns, n = rng.randint(1, 20), rng.randint(1, 20)
        counts = [rng.choice([0, 1, 2, 5, 13, 100]) for _ in range(ns)]
        for k in range(n):
            assert c.ig_recv_order(ns, counts, n, k) == py.ig_recv_order(ns, counts, n, k)
    big = 3 * 2**40 + 7  # long long totals, as a group's bytes can be
    assert c.ig_part(big, 7, 6) == py.ig_part(big, 7, 6)
    assert c.ig_part_of(big, 7, big - 1) == py.ig_part_of(big, 7, big - 1) == 6


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="cannot cut 5 items into 0 parts"):
        py.ig_part(5, 0, 0)
    with pytest.raises(ValueError, match="part 3 out of range 0..2"):
        py.ig_part(5, 3, 3)
    with pytest.raises(ValueError, match="item 5 out of range 0..4"):
        py.ig_part_of(5, 3, 5)
