"""Topology builders: who sends what to whom, from integers only - Python mirrors of C.

Every builder in ``kernels_c/topology/`` (declared in ``kernels_c/include/topology.h``) has
a twin here with the same signature, and ``tests/model/test_topology.py`` sweeps the two against
each other (p = 1..129, every root).  A builder takes (p, rank, root, sizes, parameters)
and has no communicator; the kernels and the model schedules only execute what it says.

Builders, C file (``kernels_c/topology/``) -> Python module (this package):

* ``binomial.c`` -> :mod:`.binomial`: ``binomial_tree_create``;
* ``divide_conquer.c`` -> :mod:`.divide_conquer`: ``dc_tree_create``;
* ``ordered_hypercube.c`` -> :mod:`.ordered_hypercube`: ``oh_dims``, ``oh_cube``,
  ``oh_fixed_root``, ``oh_is_fixed_root``, ``oh_has_sibling``, ``oh_partner``,
  ``oh_right_wins``;
* ``ring.c`` -> :mod:`.ring`: ``ring_order``, ``ring_slot``, ``allgatherv_block_elems``;
* ``circulant.c`` -> :mod:`.circulant`: ``circ_skips``, ``circ_epsilon``, ``circ_to``,
  ``circ_from``, ``circ_pathhead``, ``circ_tree_create``, ``circ_subtree_size``,
  ``circ_relative_blocks`` (and,
  Python only, ``circ_jump`` and ``circ_blocks`` built on them);
* ``intergroup.c`` -> :mod:`.intergroup`: ``ig_part``, ``ig_part_of``, ``ig_receivers``,
  ``ig_recv_order``.

The mapping rule, C to Python:

* **Names**: the C name without ``tuw_`` (``tuw_oh_partner`` -> ``oh_partner``); a C struct
  type becomes a :class:`~typing.NamedTuple` in CamelCase (``tuw_oh_state`` ->
  ``OhState``, ``tuw_binomial_tree`` -> ``BinomialTree``) with the same field names, except
  that a count and its array (``nchildren``, ``child[]``) become one tuple (``children``);
  ``TUW_RING_RANK`` -> ``RING_RANK``.
* **Arguments**: the same, in the same order and meaning; C arrays are sequences, and the
  length argument (``p``) stays, so a call reads the same in both languages.
* **Results**: out-arguments are returned, not passed: the C return value (if any and not
  a status code) first, then the out-arguments in argument order, as a tuple if more than
  one (``tuw_oh_cube(p, d, rank, &lo, &hi)`` -> ``lo, hi = oh_cube(p, d, rank)``).  An
  in-and-out array stays an argument and is updated in place, as in C (``ring_slot``'s
  ``sent``).  C truth values (``int`` 0/1) are ``bool``; ``unsigned char`` flags ``int``.
* **Errors**: a C status code other than ``MPI_SUCCESS`` raises :class:`ValueError`; so do
  arguments outside a function's domain, where C's result is undefined.  A C result that
  means "none" (``-1``) stays ``-1``.

:class:`tuwviz.kernels.topology.CTopology` applies this rule to the compiled kernels, so
C and Python builders can be called alike.

Examples
--------
>>> from tuwviz.model.topology import oh_cube, binomial_tree_create
>>> oh_cube(11, 2, 9)
(8, 11)
>>> binomial_tree_create(6, 2, 2).size
6
"""
from __future__ import annotations

from .binomial import BinomialEdge, BinomialTree, binomial_tree_create, virtual_blocks
from .circulant import (
    CircEdge,
    CircTree,
    circ_blocks,
    circ_epsilon,
    circ_from,
    circ_jump,
    circ_pathhead,
    circ_relative_blocks,
    circ_skips,
    circ_subtree_size,
    circ_to,
    circ_tree_create,
)
from .divide_conquer import DcEdge, DcTree, dc_tree_create
from .intergroup import ig_part, ig_part_of, ig_receivers, ig_recv_order
from .ordered_hypercube import (
    OhState,
    oh_cube,
    oh_dims,
    oh_fixed_root,
    oh_has_sibling,
    oh_is_fixed_root,
    oh_partner,
    oh_right_wins,
)
from .ring import (
    RING_RANK,
    RING_SMP,
    RING_SPREAD,
    allgatherv_block_elems,
    ring_order,
    ring_slot,
)

__all__ = [
    "RING_RANK",
    "RING_SMP",
    "RING_SPREAD",
    "BinomialEdge",
    "BinomialTree",
    "CircEdge",
    "CircTree",
    "DcEdge",
    "DcTree",
    "OhState",
    "allgatherv_block_elems",
    "binomial_tree_create",
    "circ_blocks",
    "circ_epsilon",
    "circ_from",
    "circ_jump",
    "circ_pathhead",
    "circ_relative_blocks",
    "circ_skips",
    "circ_subtree_size",
    "circ_to",
    "circ_tree_create",
    "dc_tree_create",
    "ig_part",
    "ig_part_of",
    "ig_receivers",
    "ig_recv_order",
    "oh_cube",
    "oh_dims",
    "oh_fixed_root",
    "oh_has_sibling",
    "oh_is_fixed_root",
    "oh_partner",
    "oh_right_wins",
    "ring_order",
    "ring_slot",
    "virtual_blocks",
]
