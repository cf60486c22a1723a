"""Intergroup segments: who sends which part to whom between two groups, from integers only.

Mirror of ``kernels_c/topology/intergroup.c`` (Kang, Träff, Al-Bahrani, Agrawal,
Choudhary, Liao, *Scalable algorithms for MPI intergroup Allgather and Allgatherv*,
Parallel Computing 2019, Sections 4 and 4.1), function for function.

One rule cuts everything: `total` items into `n` almost equal parts, in order, the first
``total mod n`` parts one item larger than the others (:func:`ig_part`).

* Algorithm 1 (Allgather), the indivisible case: the ``p`` processes of the larger group A
  cut into ``q`` subgroups ``s_j``; ``b_j`` exchanges with ``s_j`` and cuts its block into
  ``|s_j|`` segments, one per process of ``s_j``.
* Algorithm 2 (Allgatherv): one group's bytes, numbered in rank order (the global index),
  cut into as many parts as the other group has processes; a sender sends to every
  receiver whose part its block overlaps (:func:`ig_receivers`), and a receiver takes its
  senders in the order of Section 4.1 (:func:`ig_recv_order`).

Examples
--------
Figure 2 of the paper: p = 8, q = 3 gives subgroups {0, 1, 2}, {3, 4, 5}, {6, 7}:

>>> [ig_part(8, 3, j) for j in range(3)]
[(0, 3), (3, 3), (6, 2)]
>>> [ig_part_of(8, 3, i) for i in range(8)]
[0, 0, 0, 1, 1, 1, 2, 2]

Algorithm 2 with blocks of 3, 1, 4, 1, 5, 2 bytes cut into 3 parts ([0,6) [6,11) [11,16)):
sender 2 (bytes 4..7) sends to receivers 0 and 1, and receiver 1 takes sender 4 first
(it goes on to receiver 2), then 3, and sender 2 last (it came from receiver 0):

>>> ig_receivers(16, 3, 4, 4)
(2, 0)
>>> ig_recv_order(6, [3, 1, 4, 1, 5, 2], 3, 1)
[4, 3, 2]
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate

from typing import Sequence

__all__ = ["ig_part", "ig_part_of", "ig_receivers", "ig_recv_order"]


def _check(total: int, n: int) -> None:
    if n < 1 or total < 0:
        raise ValueError(f"cannot cut {total} items into {n} parts")


def ig_part(total: int, n: int, i: int) -> tuple[int, int]:
    """Part `i` of `total` items cut into `n`: ``(first, size)``.

    >>> ig_part(10, 4, 1), ig_part(10, 4, 3)
    ((3, 3), (8, 2))
    """
    _check(total, n)
    if not 0 <= i < n:
        raise ValueError(f"part {i} out of range 0..{n - 1}")
    c, r = divmod(total, n)
    if i < r:
        return i * (c + 1), c + 1
    return r * (c + 1) + (i - r) * c, c


def ig_part_of(total: int, n: int, index: int) -> int:
    """The part that holds item `index` of `total` cut into `n`.

    >>> ig_part_of(10, 4, 2), ig_part_of(10, 4, 9)
    (0, 3)
    """
    _check(total, n)
    if not 0 <= index < total:
        raise ValueError(f"item {index} out of range 0..{total - 1}")
    c, r = divmod(total, n)
    if index < r * (c + 1):
        return index // (c + 1)
    return r + (index - r * (c + 1)) // c


def ig_receivers(total: int, n: int, start: int, count: int) -> tuple[int, int]:
    """How many parts items ``[start, start + count)`` overlap, and the first: ``(n, lo)``.

    C returns the number and writes the first to ``*lo``; an empty range is ``(0, 0)``.

    >>> ig_receivers(16, 3, 0, 0)
    (0, 0)
    """
    if count <= 0:
        return 0, 0
    lo = ig_part_of(total, n, start)
    return ig_part_of(total, n, start + count - 1) - lo + 1, lo


def ig_recv_order(ns: int, counts: Sequence[int], n: int, k: int) -> list[int]:
    """Senders whose blocks (`counts`, one after another) overlap part `k` of ``n``, in
    the receive order of Section 4.1: first the sender that goes on to higher receivers,
    then those sending only to `k` in rank order, last the one that came from lower
    receivers.  Empty blocks are left out.

    >>> ig_recv_order(2, [0, 7], 3, 0)
    [1]
    """
    counts = [int(c) for c in counts[:ns]]
    starts = [0, *accumulate(counts)]
    first, size = ig_part(starts[-1], n, k)
    if size == 0:
        return []
    end = first + size
    # blocks overlapping [first, end): those starting before `end`, ending after `first`
    over = [i for i in range(bisect_right(starts, first) - 1, bisect_left(starts, end, hi=ns))
            if counts[i] > 0]
    lo, hi = over[0], over[-1]
    first_hi = hi != lo and starts[hi] + counts[hi] > end
    last_lo = hi != lo and starts[lo] < first
    middle = [i for i in over if not (first_hi and i == hi) and not (last_lo and i == lo)]
    return ([hi] if first_hi else []) + middle + ([lo] if last_lo else [])
