"""The operations of a model program: what one rank does, in order.

Five blocking operations (:class:`Send`, :class:`Recv`, :class:`SendRecv`,
:class:`Waitall`, :class:`Compute`), their dictionary form, and the error a schedule that
cannot run raises.  :mod:`tuwviz.model.program` strings them into per-rank programs and
:mod:`tuwviz.model.simulate` times them; both import this module, and neither the other,
so a schedule can simulate itself (:meth:`~tuwviz.model.program.Schedule.holdings`).

Examples
--------
>>> op_to_dict(Send(1, 8))
{'op': 'send', 'peer': 1, 'nbytes': 8, 'tag': 0, 'blocks': None, 'kind': 'data'}
>>> op_from_dict({"op": "recv", "peer": 0, "nbytes": 8, "blocks": [0, 1]})
Recv(peer=0, nbytes=8, tag=0, blocks=range(0, 1), kind='data')
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Union

__all__ = [
    "Compute",
    "Op",
    "Recv",
    "ScheduleError",
    "Send",
    "SendRecv",
    "Waitall",
    "op_from_dict",
    "op_halves",
    "op_to_dict",
    "paused_gc",
]


@contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector for a block that makes millions of objects.

    Building or simulating a schedule at paper scale allocates an op, a message or a tuple
    per message and frees almost none of them; every so many allocations the collector
    would walk all of them again, which cost more than the work itself.  None of these
    objects form cycles, so nothing is lost by collecting only afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class ScheduleError(ValueError):
    """A schedule that cannot run: bad peers or sizes, unmatched messages, deadlock."""


@dataclass(frozen=True, slots=True)
class Send:
    """Blocking send of `nbytes` bytes to rank `peer` (carrying `blocks`, if known)."""

    peer: int
    nbytes: int
    tag: int = 0
    blocks: range | None = None
    kind: str = "data"


@dataclass(frozen=True, slots=True)
class Recv:
    """Blocking receive of `nbytes` bytes from rank `peer` (carrying `blocks`, if known)."""

    peer: int
    nbytes: int
    tag: int = 0
    blocks: range | None = None
    kind: str = "data"


@dataclass(frozen=True, slots=True)
class SendRecv:
    """Send to `send_peer` and receive from `recv_peer` at the same time.

    The operation completes when both halves have completed.  `send_peer` and `recv_peer`
    may be the same rank (a pairwise exchange).
    """

    send_peer: int
    send_nbytes: int
    recv_peer: int
    recv_nbytes: int
    tag: int = 0
    send_blocks: range | None = None
    recv_blocks: range | None = None
    kind: str = "data"


@dataclass(frozen=True, slots=True)
class Waitall:
    """Non-blocking sends and receives, posted in order, completing together.

    `posts` lists ``("send" | "recv", peer, nbytes)`` in posting order, as a kernel posts
    ``MPI_Isend``/``MPI_Irecv`` before one ``MPI_Waitall``.  In the one-ported model the
    sends leave one after the other and the receives arrive one after the other, each in
    posting order (so the order of the receives is the algorithm's receive order), while
    sends and receives overlap.  The operation completes when every post has.

    >>> Waitall((("recv", 2, 8), ("send", 1, 4))).messages()
    [('recv', 2, 8), ('send', 1, 4)]
    """

    posts: tuple[tuple[str, int, int], ...]
    tag: int = 0
    kind: str = "data"

    def messages(self) -> list[tuple[str, int, int]]:
        """The posts as ``(dir, peer, nbytes)`` tuples, in posting order."""
        return [tuple(h) for h in self.posts]


@dataclass(frozen=True, slots=True)
class Compute:
    """Local computation on `units` elements, costing ``gamma * units``."""

    units: int
    label: str = ""


Op = Union[Send, Recv, SendRecv, Waitall, Compute]

# Name of each operation in dictionaries (`to_dict`) and reports.
_OP_NAMES = {Send: "send", Recv: "recv", SendRecv: "sendrecv", Waitall: "waitall",
             Compute: "compute"}
_OP_TYPES = {name: cls for cls, name in _OP_NAMES.items()}


def op_to_dict(op: Op) -> dict:
    """JSON-able form of `op`: its fields plus an ``"op"`` key naming its kind."""
    d = {"op": _OP_NAMES[type(op)]}
    for f in fields(op):
        v = getattr(op, f.name)
        if isinstance(v, range):
            v = [v.start, v.stop]
        elif f.name == "posts":
            v = [list(h) for h in v]
        d[f.name] = v
    return d


def op_from_dict(d: dict) -> Op:
    """Inverse of :func:`op_to_dict`.

    Raises
    ------
    ValueError
        If ``d["op"]`` names no operation; the message lists the valid names.
    """
    values = dict(d)
    name = values.pop("op")
    if name not in _OP_TYPES:
        raise ValueError(f"unknown op {name!r}; valid ops: {', '.join(_OP_TYPES)}")
    for k in ("blocks", "send_blocks", "recv_blocks"):
        if isinstance(values.get(k), list):
            values[k] = range(*values[k])
    if "posts" in values:
        values["posts"] = tuple((str(d), int(pe), int(n)) for d, pe, n in values["posts"])
    return _OP_TYPES[name](**values)


def op_halves(op: Op) -> tuple:
    """The (kind, peer, nbytes) communication halves of `op`, send before recv."""
    t = type(op)
    if t is Send:
        return (("send", op.peer, op.nbytes),)
    if t is Recv:
        return (("recv", op.peer, op.nbytes),)
    if t is SendRecv:
        return (("send", op.send_peer, op.send_nbytes), ("recv", op.recv_peer, op.recv_nbytes))
    if t is Waitall:
        return op.posts
    return ()
