"""Per-rank programs: the model side of "one truth per algorithm, seen three ways".

A model schedule is one straight-line program per rank, built in Python from the same rules
as the algorithm's C kernel.  Programs consist of four blocking operations:

* :class:`Send` and :class:`Recv`: one message to or from one peer;
* :class:`SendRecv`: a send and a receive that proceed concurrently (``MPI_Sendrecv``; the
  bidirectional port of the one-ported model);
* :class:`Compute`: local work, e.g. reducing ``units`` elements, costing ``gamma * units``.

All sizes are in bytes and all peers are ranks ``0 .. p-1``.  A message may also say which
blocks it carries (``blocks``, a range of block indices: the gatherv paper's trees always
move consecutive rank ranges, a ring moves one block) and what kind of message it is
(``kind``: ``"data"``, or e.g. ``"exchange"`` for the constant-size tree-construction
messages of the gatherv paper's Lemma 2.3).  Neither changes timing; the visualizations
draw them and :meth:`Schedule.holdings` checks that blocks really end where they should.  Messages between an ordered
pair of ranks are matched in program order, as MPI's non-overtaking rule guarantees for a
fixed (source, tag, communicator); tags are recorded for the reader but not matched on.

:meth:`Schedule.messages` lists a rank's communication in exactly the form the kernels'
point-to-point wrapper layer records it, so a test can compare model and trace directly.

Examples
--------
>>> s = Schedule("gatherv", "linear", 2, [[Recv(1, 8)], [Send(0, 8)]])
>>> s.validate()
>>> s.messages(0), s.messages(1)
([('recv', 1, 8)], [('send', 0, 8)])
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, fields
from typing import Union

import numpy as np

from ..problems import Problem

__all__ = [
    "Compute",
    "Op",
    "Recv",
    "Schedule",
    "ScheduleError",
    "Send",
    "SendRecv",
    "op_from_dict",
    "op_to_dict",
]


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
class Compute:
    """Local computation on `units` elements, costing ``gamma * units``."""

    units: int
    label: str = ""


Op = Union[Send, Recv, SendRecv, Compute]

# Name of each operation in dictionaries (`to_dict`) and reports.
_OP_NAMES = {Send: "send", Recv: "recv", SendRecv: "sendrecv", Compute: "compute"}
_OP_TYPES = {name: cls for cls, name in _OP_NAMES.items()}


def op_to_dict(op: Op) -> dict:
    """JSON-able form of `op`: its fields plus an ``"op"`` key naming its kind."""
    d = {"op": _OP_NAMES[type(op)]}
    for f in fields(op):
        v = getattr(op, f.name)
        d[f.name] = [v.start, v.stop] if isinstance(v, range) else v
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
    return _OP_TYPES[name](**values)


def _halves(op: Op):
    """The (kind, peer, nbytes) communication halves of `op`, send before recv."""
    t = type(op)
    if t is Send:
        return (("send", op.peer, op.nbytes),)
    if t is Recv:
        return (("recv", op.peer, op.nbytes),)
    if t is SendRecv:
        return (("send", op.send_peer, op.send_nbytes), ("recv", op.recv_peer, op.recv_nbytes))
    return ()


@dataclass
class Schedule:
    """One program per rank for one algorithm on one problem.

    Attributes
    ----------
    collective, algorithm : str
        What the schedule implements, e.g. ``"gatherv"``, ``"linear"``.
    p : int
        Number of ranks.
    programs : list of list of Op
        ``programs[i]`` is rank ``i``'s program, executed in order.
    problem : Problem or None
        The problem the schedule was built for, if any.
    meta : dict
        Free-form extra structure for visualisations (e.g. a tree's ``parent`` array).
        Keep it JSON-able (lists, numbers, strings) so :meth:`to_dict` stays JSON-able.
    """

    collective: str
    algorithm: str
    p: int
    programs: list[list[Op]]
    problem: Problem | None = None
    meta: dict = field(default_factory=dict)

    def messages(self, rank: int) -> list[tuple[str, int, int]]:
        """Communication of `rank` in program order, as the kernels' traces record it.

        Returns
        -------
        list of tuple
            ``("send", peer, nbytes)`` or ``("recv", peer, nbytes)``; a :class:`SendRecv`
            gives its send, then its receive.

        Examples
        --------
        >>> Schedule("x", "y", 3, [[SendRecv(1, 4, 2, 8)], [], []]).messages(0)
        [('send', 1, 4), ('recv', 2, 8)]
        """
        return [h for op in self.programs[rank] for h in _halves(op)]

    def all_messages(self) -> list[list[tuple[str, int, int]]]:
        """:meth:`messages` of every rank, indexed by rank."""
        return [self.messages(rank) for rank in range(self.p)]

    def validate(self) -> None:
        """Check the schedule can be matched up, without simulating it.

        Raises
        ------
        ScheduleError
            If the number of programs is not `p`, an operation has an unknown type, a peer
            is outside ``0..p-1`` or is the rank itself, a size is negative, or for some
            ordered pair ``(i, j)`` the sizes ``i`` sends to ``j`` (in program order) differ
            from the sizes ``j`` receives from ``i``.  Passing does not rule out deadlock;
            :func:`~tuwviz.model.simulate` finds that.

        Examples
        --------
        >>> Schedule("x", "y", 2, [[Send(1, 4)], [Recv(0, 8)]]).validate()
        Traceback (most recent call last):
        ...
        tuwviz.model.program.ScheduleError: rank 0 sends 1 message(s) of [4] bytes to rank 1, \
which receives 1 message(s) of [8] bytes from it
        """
        p = self.p
        if len(self.programs) != p:
            raise ScheduleError(f"{len(self.programs)} programs for p={p} ranks")
        if self.problem is not None and self.problem.p != p:
            raise ScheduleError(f"schedule has p={p} but its problem has p={self.problem.p}")
        # Fast check with numpy (schedules reach millions of ops); on failure the slow,
        # per-op and per-pair checks below find the first culprit and describe it.
        if not self._looks_valid():
            for rank, program in enumerate(self.programs):
                for k, op in enumerate(program):
                    self._check_op(rank, k, op)
            self._check_pairs()

    def _looks_valid(self) -> bool:
        """True if every op is well-formed and the per-pair size sequences match."""
        s_rank: list[int] = []
        s_peer: list[int] = []
        s_size: list[int] = []
        r_rank: list[int] = []
        r_peer: list[int] = []
        r_size: list[int] = []
        for rank, program in enumerate(self.programs):
            for op in program:
                t = type(op)
                if t is Send:
                    s_rank.append(rank), s_peer.append(op.peer), s_size.append(op.nbytes)
                elif t is Recv:
                    r_rank.append(rank), r_peer.append(op.peer), r_size.append(op.nbytes)
                elif t is SendRecv:
                    s_rank.append(rank), s_peer.append(op.send_peer), s_size.append(op.send_nbytes)
                    r_rank.append(rank), r_peer.append(op.recv_peer), r_size.append(op.recv_nbytes)
                elif t is not Compute or op.units < 0:
                    return False
        if len(s_rank) != len(r_rank):
            return False
        s_rank, s_peer, s_size, r_rank, r_peer, r_size = (
            np.asarray(a, dtype=np.int64) for a in (s_rank, s_peer, s_size, r_rank, r_peer, r_size)
        )
        for rank, peer, size in ((s_rank, s_peer, s_size), (r_rank, r_peer, r_size)):
            if np.any((peer < 0) | (peer >= self.p) | (peer == rank) | (size < 0)):
                return False
        # Group halves by ordered pair (src, dst); a stable sort keeps program order within
        # a pair, so equal arrays mean equal per-pair size sequences.
        s_key = s_rank * self.p + s_peer
        r_key = r_peer * self.p + r_rank
        s_order = np.argsort(s_key, kind="stable")
        r_order = np.argsort(r_key, kind="stable")
        return bool(
            np.array_equal(s_key[s_order], r_key[r_order])
            and np.array_equal(s_size[s_order], r_size[r_order])
        )

    def _check_pairs(self) -> None:
        """Raise ScheduleError for the first ordered pair whose sends and receives differ."""
        sent: dict[tuple[int, int], list[int]] = defaultdict(list)
        received: dict[tuple[int, int], list[int]] = defaultdict(list)
        for rank, program in enumerate(self.programs):
            for op in program:
                for kind, peer, nbytes in _halves(op):
                    if kind == "send":
                        sent[rank, peer].append(nbytes)
                    else:
                        received[peer, rank].append(nbytes)
        for pair in sorted(set(sent) | set(received)):
            s, r = sent.get(pair, []), received.get(pair, [])
            if s != r:
                i, j = pair
                raise ScheduleError(
                    f"rank {i} sends {len(s)} message(s) of {_short(s)} bytes to rank {j}, "
                    f"which receives {len(r)} message(s) of {_short(r)} bytes from it"
                )
        raise AssertionError("fast validation failed but no culprit found")  # a bug here

    def _check_op(self, rank: int, k: int, op: Op) -> None:
        """Raise ScheduleError if operation `k` of `rank` is malformed on its own."""
        t = type(op)
        if t is Compute:
            if op.units < 0:
                raise ScheduleError(f"rank {rank}, op {k} ({op}): negative compute units")
            return
        if t not in _OP_NAMES:
            raise ScheduleError(
                f"rank {rank}, op {k} ({op!r}): not an operation; valid: "
                "Send, Recv, SendRecv, Compute"
            )
        for _, peer, nbytes in _halves(op):
            # The message is built only on failure: validate runs over millions of ops.
            if not 0 <= peer < self.p:
                problem = f"peer {peer} out of range 0..{self.p - 1}"
            elif peer == rank:
                problem = f"rank {rank} communicates with itself"
            elif nbytes < 0:
                problem = f"negative size {nbytes}"
            else:
                continue
            raise ScheduleError(f"rank {rank}, op {k} ({op}): {problem}")

    def to_dict(self) -> dict:
        """JSON-able description; each op is a dict with an ``"op"`` key (``"send"``, ...)."""
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "p": self.p,
            "problem": None if self.problem is None else self.problem.to_dict(),
            "meta": _jsonable(self.meta),
            "programs": [[op_to_dict(op) for op in program] for program in self.programs],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Schedule":
        """Inverse of :meth:`to_dict`."""
        return cls(
            collective=d["collective"],
            algorithm=d["algorithm"],
            p=d["p"],
            programs=[[op_from_dict(o) for o in program] for program in d["programs"]],
            problem=None if d.get("problem") is None else Problem.from_dict(d["problem"]),
            meta=dict(d.get("meta", {})),
        )


def _short(values: list, limit: int = 8) -> str:
    """`values` as a list literal, cut after `limit` items for error messages."""
    if len(values) <= limit:
        return str(values)
    return "[" + ", ".join(map(str, values[:limit])) + ", ...]"


def _jsonable(x):
    """Convert numpy arrays/scalars and tuples inside `x` to plain Python for JSON."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist"):  # numpy array or scalar
        return x.tolist()
    return x
