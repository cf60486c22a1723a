"""What a model schedule tells the visualizations: typed ``Schedule.meta`` per algorithm family.

Every builder in :mod:`tuwviz.model` returns a :class:`~tuwviz.model.program.Schedule`
whose ``meta`` describes the structure behind its messages, which the programs alone do
not show: the tree a gather or scatter runs on, the ring order and the pieces of an
allgather.  One dataclass per family makes the contract visible:

* :class:`StarMeta` - ``gatherv/linear``, ``scatterv/linear``: every rank hangs below the
  root;
* :class:`TreeMeta` - ``gatherv/binomial``, ``gatherv/tuw`` and their scatters;
* :class:`RingMeta` - ``allgatherv/ring``;
* :class:`PipelinedRingMeta` - ``allgatherv/pipelined``;
* :class:`CirculantMeta` - the circulant-graph reductions (``allreduce/circulant``,
  ``reduce_scatter_block/circulant``; ``reduce/circulant`` is a :class:`TreeMeta`).

Readers: :mod:`tuwviz.viz.graph` and :mod:`tuwviz.viz.animation` draw the tree of a
:class:`TreeMeta` (a :class:`StarMeta` is one), :mod:`tuwviz.viz.ring` the ring and pieces
of a :class:`PipelinedRingMeta`; :meth:`Schedule.root
<tuwviz.model.program.Schedule.root>` falls back on ``root``.

A hand-made schedule may still carry a plain dict (``{"root": 1}``, ``initial_blocks``,
``final_blocks``); so that old readers keep working, the dataclasses can also be read like
one (``meta["parent"]``, ``"parent" in meta``, ``meta.get("root")``).

:func:`meta_to_dict` and :func:`meta_from_dict` carry them through JSON
(:meth:`Schedule.to_dict <tuwviz.model.program.Schedule.to_dict>`): the fields and a
``"kind"`` key naming the class.

Examples
--------
>>> m = StarMeta.of([4, 0, 4], root=1)
>>> m.parent, m.edge_sent
([1, -1, 1], [True, False, True])
>>> d = meta_to_dict(m)
>>> d["kind"], meta_from_dict(d) == m
('star', True)
>>> m["parent"] == m.parent, "ring" in m
(True, False)
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

__all__ = [
    "CirculantMeta",
    "PipelinedRingMeta",
    "RingMeta",
    "ScheduleMeta",
    "StarMeta",
    "TreeMeta",
    "meta_from_dict",
    "meta_to_dict",
]


@dataclass
class ScheduleMeta:
    """Base of the typed metas: the ``kind`` tag and dict-style reading."""

    #: Name of the class in JSON (:func:`meta_to_dict`).
    kind: ClassVar[str] = ""

    def _names(self) -> list[str]:
        return [f.name for f in fields(self)]

    def __contains__(self, key: object) -> bool:
        return key in self._names()

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        """``meta[key]`` if `key` is a field, else `default` (as :meth:`dict.get`)."""
        return getattr(self, key) if key in self else default

    def keys(self) -> list[str]:
        """The field names, in order."""
        return self._names()


@dataclass
class TreeMeta(ScheduleMeta):
    """The tree of a rooted collective (gather: towards the root; scatter: away from it).

    Built by :func:`tuwviz.model.gatherv.binomial` and :func:`~tuwviz.model.gatherv.tuw`
    and their scatters; read by :func:`tuwviz.viz.graph.gather_tree_figure`,
    :func:`tuwviz.viz.graph.schedule_graph` and the animation's tree layout.

    Attributes
    ----------
    root : int
        The root rank.
    parent : list of int
        Parent of every rank, ``-1`` at the root.
    edge_bytes : list of int
        Bytes on the edge from every rank to its parent (0 at the root and on the paper's
        dotted, zero-size edges).
    edge_sent : list of bool
        Whether that edge carries a message (the binomial tree sends even 0 bytes; linear
        and tuw send nothing for an empty block or subtree).
    edge_iteration : list of int
        Round (tag) of every rank's edge, ``-1`` at the root.
    fixed_exchanges : list of tuple of int
        ``(iteration, a, b)`` of every fixed-root exchange of the tree construction (tuw
        only; empty otherwise).
    subtree_ranges : list of list of tuple of int
        Per rank, the ``[lo, hi)`` rank ranges whose blocks it sends to (gather) or receives
        from (scatter) its parent, in message order; two when a binomial subtree wraps past
        rank ``p - 1``.
    """

    kind: ClassVar[str] = "tree"

    root: int
    parent: list[int]
    edge_bytes: list[int]
    edge_sent: list[bool]
    edge_iteration: list[int]
    fixed_exchanges: list[tuple[int, int, int]]
    subtree_ranges: list[list[tuple[int, int]]]


@dataclass
class StarMeta(TreeMeta):
    """The star of the linear algorithms: every rank's block goes straight to/from the root.

    The fields of :class:`TreeMeta`; every edge is of round 0 and carries one block.
    """

    kind: ClassVar[str] = "star"

    @classmethod
    def of(cls, nbytes: list[int], root: int) -> "StarMeta":
        """The star for blocks of `nbytes` bytes: only non-empty non-root blocks are sent."""
        p = len(nbytes)
        parent = [root] * p
        parent[root] = -1
        edge_bytes = list(nbytes)
        edge_bytes[root] = 0
        return cls(root=root, parent=parent, edge_bytes=edge_bytes,
                   edge_sent=[i != root and nbytes[i] > 0 for i in range(p)],
                   edge_iteration=[-1 if i == root else 0 for i in range(p)],
                   fixed_exchanges=[], subtree_ranges=[[(i, i + 1)] for i in range(p)])


@dataclass
class RingMeta(ScheduleMeta):
    """The linear ring of ``allgatherv/ring`` (:func:`tuwviz.model.allgatherv.ring`).

    Attributes
    ----------
    ring : list of int
        Ring order: ``ring[k]`` is the rank at ring position ``k``.
    rounds : int
        Rounds of the ring: ``p - 1`` for the linear ring, Eq. (1) for the pipelined one.
    """

    kind: ClassVar[str] = "ring"

    ring: list[int]
    rounds: int


@dataclass
class PipelinedRingMeta(RingMeta):
    """The blocked ring of ``allgatherv/pipelined`` (:func:`tuwviz.model.allgatherv.pipelined`).

    Read by :mod:`tuwviz.viz.ring` (figures, frames and the ring browser) and by
    :func:`tuwviz.model.allgatherv.block_sweep`.  The fields of :class:`RingMeta` and:

    Attributes
    ----------
    block_elems, block_bytes : int
        The block size ``B``, in elements and in bytes.
    nblocks : list of int
        ``b_k``, pieces of the process at every ring position.
    first : list of int
        Index of the first piece of every ring position.
    b : int
        All pieces, ``sum b_k``.
    slots : int
        Rounds in time actually used (at most ``rounds``; Section 2.3).
    pieces : list of list of int
        ``[owner rank, offset in bytes, bytes]`` of every piece, by piece index.
    transfers : list of list of int
        ``[slot, src rank, dst rank, piece]`` of every message, sorted.
    """

    kind: ClassVar[str] = "pipelined_ring"

    block_elems: int
    block_bytes: int
    nblocks: list[int]
    first: list[int]
    b: int
    slots: int
    pieces: list[list[int]]
    transfers: list[list[int]]


@dataclass
class CirculantMeta(ScheduleMeta):
    """The circulant graph of the uniform reduce-scatter paper (Section III-A).

    Attributes
    ----------
    skips : list of int
        ``skips[0..q]`` (:func:`tuwviz.model.topology.circ_skips`); round ``k`` sends to
        ``r - jump_k`` and receives from ``r + jump_k``.
    jumps : list of int
        ``jump_k = skips[k] - e_k`` of every round.
    epsilon : list of int
        The correction ``e_k`` of every round.
    """

    kind: ClassVar[str] = "circulant"

    skips: list[int]
    jumps: list[int]
    epsilon: list[int]


_KINDS = {cls.kind: cls for cls in (TreeMeta, StarMeta, RingMeta, PipelinedRingMeta,
                                    CirculantMeta)}


def meta_to_dict(meta: ScheduleMeta | dict) -> dict:
    """`meta` as a dict: the fields plus ``"kind"``; a plain dict is returned as it is.

    Not :func:`dataclasses.asdict`, which deep-copies: a field is a list of a million
    entries at paper scale.
    """
    if isinstance(meta, ScheduleMeta):
        return {"kind": meta.kind, **{name: getattr(meta, name) for name in meta.keys()}}
    return meta


def meta_from_dict(d: dict) -> ScheduleMeta | dict:
    """Inverse of :func:`meta_to_dict`: the dataclass its ``"kind"`` names, else a dict copy.

    Raises
    ------
    ValueError
        If ``"kind"`` names no meta class.
    """
    if "kind" not in d:
        return dict(d)
    kind = d["kind"]
    if kind not in _KINDS:
        raise ValueError(f"unknown schedule meta kind {kind!r}; known: {', '.join(_KINDS)}")
    return _KINDS[kind](**{k: v for k, v in d.items() if k != "kind"})
