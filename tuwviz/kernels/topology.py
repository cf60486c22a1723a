"""The C topology builders, called through ctypes under their Python twins' signatures.

:class:`CTopology` wraps the kernel library (:func:`tuwviz.kernels.load`) and applies the
mapping rule of :mod:`tuwviz.model.topology` in the other direction: every method has the
name and signature of the Python mirror and calls the C function behind it (out-arguments
returned, in-and-out arrays updated in place, status codes raised).  So one call can be
made both ways and the results compared, as ``tests/model/test_topology.py`` does.

Examples
--------
>>> from tuwviz import kernels
>>> from tuwviz.model import topology
>>> c = CTopology(kernels.load())
>>> c.oh_cube(11, 2, 9) == topology.oh_cube(11, 2, 9)
True
>>> c.binomial_tree_create(6, 4, 2) == topology.binomial_tree_create(6, 4, 2)
True
"""
from __future__ import annotations

import ctypes
from typing import Sequence

from ..model.topology.binomial import BinomialEdge, BinomialTree
from ..model.topology.circulant import CircEdge, CircTree
from ..model.topology.divide_conquer import DcEdge, DcTree
from ..model.topology.ordered_hypercube import OhState

__all__ = ["CTopology"]

_int, _ll, _double = ctypes.c_int, ctypes.c_longlong, ctypes.c_double
_int_p, _ll_p = ctypes.POINTER(_int), ctypes.POINTER(_ll)

#: ``TUW_BINOMIAL_MAX_CHILDREN`` (and ``TUW_DC_MAX_CHILDREN``) in
#: ``kernels_c/include/topology.h``.  C writes at most ceil(log2 p) <= 31 children, so the
#: structs below are large enough whatever the header says.
MAX_CHILDREN = 32


class _BinomialEdge(ctypes.Structure):
    _fields_ = [("rank", _int), ("round", _int), ("first", _int), ("size", _int)]


class _BinomialTree(ctypes.Structure):
    _fields_ = [("parent", _int), ("round", _int), ("size", _int), ("nchildren", _int),
                ("child", _BinomialEdge * MAX_CHILDREN)]


class _DcEdge(ctypes.Structure):
    _fields_ = [("rank", _int), ("round", _int), ("lo", _int), ("hi", _int)]


class _DcTree(ctypes.Structure):
    _fields_ = [("parent", _int), ("round", _int), ("lo", _int), ("hi", _int),
                ("nchildren", _int), ("child", _DcEdge * MAX_CHILDREN)]


class _CircEdge(ctypes.Structure):
    _fields_ = [("rank", _int), ("round", _int)]


#: ``TUW_CIRC_MAX_SKIPS``: skips[0..q], q <= 31.
MAX_SKIPS = 33


class _CircTree(ctypes.Structure):
    _fields_ = [("parent", _int), ("round", _int), ("nchildren", _int),
                ("child", _CircEdge * MAX_SKIPS)]


class _OhState(ctypes.Structure):
    _fields_ = [("groot", _ll), ("time", _ll), ("rootblock", _ll)]


def _ints(values: Sequence[int] | None, ctype=_int):
    """A C array of `values` (at least one element, so C never sees a NULL for []); None
    stays None (a NULL pointer)."""
    if values is None:
        return None
    return (ctype * max(len(values), 1))(*values)


class CTopology:
    """The C builders of a loaded kernel library, with the Python mirrors' signatures.

    Parameters
    ----------
    lib : ctypes.CDLL
        The kernel library, e.g. :func:`tuwviz.kernels.load()`; its topology functions get
        their argument and result types declared here.
    """

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        state_p = ctypes.POINTER(_OhState)
        for name, restype, argtypes in [
            ("tuw_binomial_tree_create", None, [_int, _int, _int, ctypes.POINTER(_BinomialTree)]),
            ("tuw_dc_tree_create", None, [_int, _int, _int, ctypes.POINTER(_DcTree)]),
            ("tuw_oh_dims", _int, [_int]),
            ("tuw_oh_cube", None, [_int, _int, _int, _int_p, _int_p]),
            ("tuw_oh_fixed_root", _int, [_int, _int, _int]),
            ("tuw_oh_is_fixed_root", _int, [_int, _int, _int]),
            ("tuw_oh_has_sibling", _int, [_int, _int, _int]),
            ("tuw_oh_partner", _int, [_int, _int, _int]),
            ("tuw_oh_right_wins", _int, [state_p, state_p, _int]),
            ("tuw_ring_order", _int, [_int, _int_p, _int_p, _int, _int_p]),
            ("tuw_ring_slot", _int, [_int, _ll_p, _ll_p, _ll_p, ctypes.POINTER(ctypes.c_ubyte)]),
            ("tuw_allgatherv_block_elems", _ll, [_int, _int_p, _int, _ll, _double, _double]),
            ("tuw_circ_skips", _int, [_int, _int_p]),
            ("tuw_circ_epsilon", _int, [_int_p, _int]),
            ("tuw_circ_to", _int, [_int, _int, _int_p, _int]),
            ("tuw_circ_from", _int, [_int, _int, _int_p, _int]),
            ("tuw_circ_pathhead", _int, [_int, _int, _int_p]),
            ("tuw_circ_tree_create", None, [_int, _int, _int, ctypes.POINTER(_CircTree)]),
            ("tuw_circ_subtree_size", _int, [_int, _int, _int]),
            ("tuw_circ_relative_blocks", _int, [_int, _int, _int, _int_p, _int, _int_p]),
            ("tuw_ig_part", None, [_ll, _int, _int, _ll_p, _ll_p]),
            ("tuw_ig_part_of", _int, [_ll, _int, _ll]),
            ("tuw_ig_receivers", _int, [_ll, _int, _ll, _ll, _int_p]),
            ("tuw_ig_recv_order", _int, [_int, _int_p, _int, _int, _int_p]),
        ]:
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes

    # ---- binomial.c
    def binomial_tree_create(self, p: int, rank: int, root: int) -> BinomialTree:
        t = _BinomialTree()
        self.lib.tuw_binomial_tree_create(p, rank, root, ctypes.byref(t))
        children = tuple(BinomialEdge(e.rank, e.round, e.first, e.size)
                         for e in t.child[:t.nchildren])
        return BinomialTree(t.parent, t.round, t.size, children)

    # ---- divide_conquer.c
    def dc_tree_create(self, p: int, rank: int, root: int) -> DcTree:
        t = _DcTree()
        self.lib.tuw_dc_tree_create(p, rank, root, ctypes.byref(t))
        children = tuple(DcEdge(e.rank, e.round, e.lo, e.hi) for e in t.child[:t.nchildren])
        return DcTree(t.parent, t.round, t.lo, t.hi, children)

    # ---- ordered_hypercube.c
    def oh_dims(self, p: int) -> int:
        return self.lib.tuw_oh_dims(p)

    def oh_cube(self, p: int, d: int, rank: int) -> tuple[int, int]:
        lo, hi = _int(), _int()
        self.lib.tuw_oh_cube(p, d, rank, ctypes.byref(lo), ctypes.byref(hi))
        return lo.value, hi.value

    def oh_fixed_root(self, p: int, d: int, rank: int) -> int:
        return self.lib.tuw_oh_fixed_root(p, d, rank)

    def oh_is_fixed_root(self, p: int, d: int, rank: int) -> bool:
        return bool(self.lib.tuw_oh_is_fixed_root(p, d, rank))

    def oh_has_sibling(self, p: int, d: int, rank: int) -> bool:
        return bool(self.lib.tuw_oh_has_sibling(p, d, rank))

    def oh_partner(self, p: int, d: int, f: int) -> int:
        return self.lib.tuw_oh_partner(p, d, f)

    def oh_right_wins(self, left: OhState, right: OhState, root: int) -> bool:
        return bool(self.lib.tuw_oh_right_wins(_OhState(*left), _OhState(*right), root))

    # ---- ring.c
    def ring_order(self, p: int, counts: Sequence[int], node_of_rank: Sequence[int] | None,
                   kind: int) -> list[int]:
        order = _ints([-1] * p)
        rc = self.lib.tuw_ring_order(p, _ints(counts), _ints(node_of_rank), kind, order)
        if rc != 0:
            raise ValueError(f"tuw_ring_order returned MPI error {rc}")
        return list(order)[:p]

    def ring_slot(self, p: int, own: Sequence[int], nsend: Sequence[int],
                  sent: list[int]) -> tuple[int, list[int]]:
        c_sent, now = _ints(sent, _ll), (ctypes.c_ubyte * max(p, 1))()
        senders = self.lib.tuw_ring_slot(p, _ints(own, _ll), _ints(nsend, _ll), c_sent, now)
        sent[:] = list(c_sent)[:len(sent)]
        return senders, list(now)[:p]

    def allgatherv_block_elems(self, p: int, counts: Sequence[int], extent: int,
                               block_bytes: int, alpha: float, beta: float) -> int:
        return self.lib.tuw_allgatherv_block_elems(p, _ints(counts), extent, block_bytes,
                                                   alpha, beta)

    # ---- circulant.c
    def circ_skips(self, p: int) -> tuple[int, list[int]]:
        skips = _ints([0] * MAX_SKIPS)
        q = self.lib.tuw_circ_skips(p, skips)
        return q, list(skips)[:q + 1]

    def circ_epsilon(self, skips: Sequence[int], k: int) -> int:
        return self.lib.tuw_circ_epsilon(_ints(skips), k)

    def circ_to(self, p: int, rank: int, skips: Sequence[int], k: int) -> int:
        return self.lib.tuw_circ_to(p, rank, _ints(skips), k)

    def circ_from(self, p: int, rank: int, skips: Sequence[int], k: int) -> int:
        return self.lib.tuw_circ_from(p, rank, _ints(skips), k)

    def circ_pathhead(self, virt: int, q: int, skips: Sequence[int]) -> int:
        return self.lib.tuw_circ_pathhead(virt, q, _ints(skips))

    def circ_tree_create(self, p: int, rank: int, root: int) -> CircTree:
        t = _CircTree()
        self.lib.tuw_circ_tree_create(p, rank, root, ctypes.byref(t))
        return CircTree(t.parent, t.round,
                        tuple(CircEdge(e.rank, e.round) for e in t.child[:t.nchildren]))

    def circ_subtree_size(self, p: int, rank: int, root: int) -> int:
        return self.lib.tuw_circ_subtree_size(p, rank, root)

    def circ_relative_blocks(self, off: int, k: int, q: int, skips: Sequence[int], b: int,
                             block: list[int]) -> int:
        c_block = _ints(block)
        end = self.lib.tuw_circ_relative_blocks(off, k, q, _ints(skips), b, c_block)
        block[:] = list(c_block)[:len(block)]
        return end

    # ---- intergroup.c
    def ig_part(self, total: int, n: int, i: int) -> tuple[int, int]:
        first, size = _ll(), _ll()
        self.lib.tuw_ig_part(total, n, i, ctypes.byref(first), ctypes.byref(size))
        return first.value, size.value

    def ig_part_of(self, total: int, n: int, index: int) -> int:
        return self.lib.tuw_ig_part_of(total, n, index)

    def ig_receivers(self, total: int, n: int, start: int, count: int) -> tuple[int, int]:
        lo = _int()
        k = self.lib.tuw_ig_receivers(total, n, start, count, ctypes.byref(lo))
        return k, lo.value

    def ig_recv_order(self, ns: int, counts: Sequence[int], n: int, k: int) -> list[int]:
        order = (_int * max(ns, 1))()
        got = self.lib.tuw_ig_recv_order(ns, _ints(counts), n, k, order)
        return list(order[:got])
