"""Per-rank programs: the model side of "one truth per algorithm, seen three ways".

A model schedule is one straight-line program per rank, built in Python from the same rules
as the algorithm's C kernel.  Programs consist of five blocking operations:

* :class:`Send` and :class:`Recv`: one message to or from one peer;
* :class:`SendRecv`: a send and a receive that proceed concurrently (``MPI_Sendrecv``; the
  bidirectional port of the one-ported model);
* :class:`Waitall`: non-blocking sends and receives posted in order and then waited for
  together (``MPI_Isend``/``MPI_Irecv`` ..., ``MPI_Waitall``): the sends go out one after
  the other, the receives come in one after the other, in their posting order, both at once;
* :class:`Compute`: local work, e.g. reducing ``units`` elements, costing ``gamma * units``.

All sizes are in bytes and all peers are ranks ``0 .. p-1``.  A message may also say which
blocks it carries (``blocks``, a range of block indices: the gatherv paper's trees always
move consecutive rank ranges, a ring moves one block) and what kind of message it is
(``kind``: ``"data"``, or e.g. ``"exchange"`` for the constant-size tree-construction
messages of the gatherv paper's Lemma 2.3).  Neither changes timing; the visualizations
draw them, and :meth:`Schedule.holdings` replays them to show who holds which block after
every step (:meth:`Schedule.check_blocks` checks, msccl-style, that the collective's
precondition turns into its postcondition).  Messages between an ordered
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
from dataclasses import dataclass, field
from typing import get_args

import numpy as np

from ..problems import Problem
from .meta import ScheduleMeta, meta_from_dict, meta_to_dict
from .ops import (Compute, Op, Recv, ScheduleError, Send, SendRecv, Waitall, op_from_dict,
                  op_halves, op_to_dict, paused_gc)
from .simulate import SimResult, simulate

__all__ = [
    "BlockStep",
    "Compute",
    "Op",
    "Recv",
    "Schedule",
    "ScheduleError",
    "Send",
    "SendRecv",
    "Waitall",
    "op_from_dict",
    "op_to_dict",
    "paused_gc",
]



_OPS = get_args(Op)

# Who holds which block before and after each collective (msccl-style pre- and
# postconditions).  Block i is rank i's block (its contribution, for reductions).
# "own": rank i holds block i; "root": the root holds every block; "all": every rank
# holds every block; "none": no requirement.
_BLOCKS_BEFORE = {"scatter": "root", "scatterv": "root"}  # all others: "own"
_BLOCKS_AFTER = {
    "gather": "root", "gatherv": "root", "reduce": "root",
    "scatter": "own", "scatterv": "own",
    "allgather": "all", "allgatherv": "all", "allreduce": "all",
}  # others (e.g. reduce_scatter_block): unknown, nothing checked


@dataclass(frozen=True)
class BlockStep:
    """Who holds which block after one step of a simulated schedule.

    A *step* is the set of messages that start at the same simulated time; step 0 is the
    state before any message (the collective's precondition).

    Attributes
    ----------
    index : int
        Step number, 0 for the initial state.
    time : float or None
        Start time of this step's messages (None for step 0).
    messages : tuple of int
        Indices into ``SimResult.messages`` of the messages starting at `time`.
    carried : tuple
        For each of `messages`, the sorted tuple of block indices it carried, or None if
        unknown (the op has no ``blocks`` and they could not be inferred).
    holdings : tuple of frozenset of int
        Per rank, the blocks it holds once this step's messages have arrived.
    """

    index: int
    time: float | None
    messages: tuple[int, ...]
    carried: tuple[tuple[int, ...] | None, ...]
    holdings: tuple[frozenset[int], ...]


def _blocks_rule(rule: str, p: int, root: int) -> list[frozenset[int]]:
    """Per-rank block sets of a pre/postcondition rule (see ``_BLOCKS_BEFORE``)."""
    everything = frozenset(range(p))
    if rule == "own":
        return [frozenset({i}) for i in range(p)]
    if rule == "root":
        return [everything if i == root else frozenset() for i in range(p)]
    if rule == "all":
        return [everything] * p
    return [frozenset()] * p

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
    meta : ScheduleMeta or dict
        Extra structure for visualisations: the builders of :mod:`tuwviz.model` give a
        typed :mod:`tuwviz.model.meta` dataclass (a tree's ``parent`` array, a ring's
        pieces); a hand-made schedule may give a dict (``root``, ``initial_blocks``,
        ``final_blocks``).  Keep it JSON-able (lists, numbers, strings) so :meth:`to_dict`
        stays JSON-able.
    """

    collective: str
    algorithm: str
    p: int
    programs: list[list[Op]]
    problem: Problem | None = None
    meta: ScheduleMeta | dict = field(default_factory=dict)

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
        return [h for op in self.programs[rank] for h in op_halves(op)]

    def all_messages(self) -> list[list[tuple[str, int, int]]]:
        """:meth:`messages` of every rank, indexed by rank."""
        return [self.messages(rank) for rank in range(self.p)]

    def sent_bytes(self) -> list[int]:
        """Bytes every rank sends, indexed by rank.

        >>> Schedule("x", "y", 3, [[SendRecv(1, 4, 2, 8)], [], []]).sent_bytes()
        [4, 0, 0]
        """
        return [sum(n for d, _, n in self.messages(rank) if d == "send")
                for rank in range(self.p)]

    def matches_trace(self, events: list[list[dict]]) -> bool:
        """Whether a recorded trace (per rank, events with ``dir``, ``peer`` and ``bytes``,
        as :func:`tuwviz.run.trace.trace` returns) has exactly these messages, rank by rank."""
        return len(events) == self.p and all(
            [(e["dir"], e["peer"], e["bytes"]) for e in events[r]] == self.messages(r)
            for r in range(self.p))

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
        tuwviz.model.ops.ScheduleError: rank 0 sends 1 message(s) of [4] bytes to rank 1, \
which receives 1 message(s) of [8] bytes from it
        """
        p = self.p
        if len(self.programs) != p:
            raise ScheduleError(f"{len(self.programs)} programs for p={p} ranks")
        if self.problem is not None and self.problem.size != p:  # p + q for two groups
            raise ScheduleError(f"schedule has p={p} but its problem has p={self.problem.size}")
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
                elif t is Waitall:
                    for d, peer, nbytes in op.posts:
                        if d == "send":
                            s_rank.append(rank), s_peer.append(peer), s_size.append(nbytes)
                        elif d == "recv":
                            r_rank.append(rank), r_peer.append(peer), r_size.append(nbytes)
                        else:
                            return False
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
                for kind, peer, nbytes in op_halves(op):
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
        if t not in _OPS:
            raise ScheduleError(
                f"rank {rank}, op {k} ({op!r}): not an operation; valid: "
                "Send, Recv, SendRecv, Waitall, Compute"
            )
        if t is Waitall:
            bad = [h for h in op.posts if h[0] not in ("send", "recv")]
            if bad:
                raise ScheduleError(f"rank {rank}, op {k} ({op}): post {bad[0]} is neither "
                                    f"'send' nor 'recv'")
        for _, peer, nbytes in op_halves(op):
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

    # -- blocks: who holds what, step by step ---------------------------------------------
    @property
    def root(self) -> int:
        """The root: ``problem.root``, else ``meta["root"]``, else 0."""
        if self.problem is not None:
            return self.problem.root
        return int(self.meta.get("root", 0))

    def initial_blocks(self) -> list[frozenset[int]]:
        """The collective's precondition: which blocks each rank holds before it starts.

        ``meta["initial_blocks"]`` (a list of block-index lists, one per rank) overrides
        the rule by collective: for scatter and scatterv the root holds all ``p`` blocks;
        for every other collective (gathers, allgathers, reductions, unknown names) rank
        ``i`` holds block ``i``.

        Examples
        --------
        >>> Schedule("scatterv", "x", 3, [[], [], []], meta={"root": 1}).initial_blocks()
        [frozenset(), frozenset({0, 1, 2}), frozenset()]
        """
        if "initial_blocks" in self.meta:
            return [frozenset(b) for b in self.meta["initial_blocks"]]
        return _blocks_rule(_BLOCKS_BEFORE.get(self.collective, "own"), self.p, self.root)

    def final_blocks(self) -> list[frozenset[int]] | None:
        """The collective's postcondition: blocks each rank must hold at the end.

        ``meta["final_blocks"]`` overrides the rule: gather, gatherv and reduce need all
        blocks at the root (nothing elsewhere); scatter and scatterv need block ``i`` at
        rank ``i``; allgather, allgatherv and allreduce need all blocks everywhere.  None
        for other collectives (nothing can be checked).

        Examples
        --------
        >>> Schedule("gatherv", "x", 2, [[], []], meta={"root": 1}).final_blocks()
        [frozenset(), frozenset({0, 1})]
        """
        if "final_blocks" in self.meta:
            return [frozenset(b) for b in self.meta["final_blocks"]]
        rule = _BLOCKS_AFTER.get(self.collective)
        return None if rule is None else _blocks_rule(rule, self.p, self.root)

    def message_ops(self, result: "SimResult") -> list[tuple[range | None, str]]:
        """``(blocks, kind)`` of the operation behind each message of `result`.

        Messages are paired with send operations the way :func:`~tuwviz.model.simulate`
        matches them: the k-th message from ``i`` to ``j`` is the k-th send from ``i`` to
        ``j`` in ``i``'s program.  A send without ``blocks`` takes those of its receive.

        Parameters
        ----------
        result : SimResult
            What :func:`~tuwviz.model.simulate` returned for this schedule.

        Returns
        -------
        list of tuple
            One ``(blocks, kind)`` per ``result.messages`` entry, in the same order.

        Raises
        ------
        ScheduleError
            If `result` has a message this schedule does not send, or the send and the
            receive of a message name different blocks.
        """
        queues: dict[tuple[int, int], list] = defaultdict(list)
        recv_blocks: dict[tuple[int, int], list] = defaultdict(list)
        for rank, program in enumerate(self.programs):
            for op in program:
                t = type(op)
                if t is Send:
                    queues[rank, op.peer].append((op.blocks, op.kind))
                elif t is SendRecv:
                    queues[rank, op.send_peer].append((op.send_blocks, op.kind))
                    recv_blocks[op.recv_peer, rank].append(op.recv_blocks)
                elif t is Recv:
                    recv_blocks[op.peer, rank].append(op.blocks)
                elif t is Waitall:  # posts name no blocks
                    for d, peer, _ in op.posts:
                        if d == "send":
                            queues[rank, peer].append((None, op.kind))
                        else:
                            recv_blocks[peer, rank].append(None)
        taken: dict[tuple[int, int], int] = defaultdict(int)
        out = []
        for m in result.messages:
            key = (m.src, m.dst)
            k = taken[key]
            if k >= len(queues[key]):
                raise ScheduleError(f"message {m} is not sent by this schedule")
            taken[key] = k + 1
            blocks, kind = queues[key][k]
            theirs = recv_blocks[key][k] if k < len(recv_blocks[key]) else None
            if blocks is None:
                blocks = theirs
            elif theirs is not None and theirs != blocks:
                raise ScheduleError(
                    f"rank {m.src} sends blocks {_span(blocks)} to rank {m.dst}, which "
                    f"receives blocks {_span(theirs)} from it")
            out.append((blocks, kind))
        return out

    def holdings(self, result: "SimResult | None" = None, alpha: float = 1.0,
                 beta: float = 0.0) -> list[BlockStep]:
        """Replay the messages step by step: which blocks each rank holds after each step.

        Starts from :meth:`initial_blocks`; every message adds the blocks it carries to its
        receiver (holding means having a copy: senders keep theirs).  Messages that start
        at the same simulated time form one step and see the holdings from before it.

        A ``"data"`` message whose op has no ``blocks`` (older schedules) is inferred when
        the byte counts of ``problem`` allow it: the blocks its sender holds and its
        receiver lacks, if their sizes add up to the message's bytes, else those of them
        the receiver needs at the end (:meth:`final_blocks`), if those add up; otherwise
        it counts as unknown (``None`` in :attr:`BlockStep.carried`) and moves nothing.
        Other kinds (``"exchange"``, ``"info"``) never carry blocks.

        Parameters
        ----------
        result : SimResult, optional
            A simulation of this schedule; by default ``simulate(self, alpha, beta)``.
        alpha, beta : float, optional
            Cost parameters when `result` is not given.  The defaults (1, 0) make every
            message take one time unit, so steps are the schedule's rounds.

        Returns
        -------
        list of BlockStep
            Step 0 (the precondition), then one step per distinct message start time.

        Examples
        --------
        >>> s = Schedule("gatherv", "chain", 3, [
        ...     [Send(1, 4, blocks=range(0, 1))],
        ...     [Recv(0, 4, blocks=range(0, 1)), Send(2, 8, blocks=range(0, 2))],
        ...     [Recv(1, 8, blocks=range(0, 2))]], meta={"root": 2})
        >>> [sorted(map(sorted, step.holdings)) for step in s.holdings()]
        [[[0], [1], [2]], [[0], [0, 1], [2]], [[0], [0, 1], [0, 1, 2]]]
        >>> [step.carried for step in s.holdings()]
        [(), ((0,),), ((0, 1),)]
        """
        steps, _ = self._replay(result, alpha, beta)
        return steps

    def check_blocks(self, result: "SimResult | None" = None) -> None:
        """Check the schedule moves blocks correctly (msccl-style symbolic check).

        Replays :meth:`holdings`; every message must carry only blocks its sender holds,
        and at the end every rank must hold its :meth:`final_blocks`.  Blocks of zero
        bytes (by ``problem``) need no message: they may be missing at the end and may be
        named in a message's range by a rank that never received them.

        Raises
        ------
        ScheduleError
            Naming the first message that sends a block its sender lacks, or the first
            rank missing blocks at the end.

        Examples
        --------
        >>> s = Schedule("gatherv", "x", 2, [[Send(1, 4, blocks=range(0, 1))],
        ...                                  [Recv(0, 4, blocks=range(0, 1))]], meta={"root": 0})
        >>> s.check_blocks()
        Traceback (most recent call last):
        ...
        tuwviz.model.ops.ScheduleError: rank 0 lacks block(s) [1] at the end
        """
        steps, faults = self._replay(result, 1.0, 0.0, keep_steps=False)
        if faults:
            raise ScheduleError(faults[0])
        final = self.final_blocks()
        if final is None:
            return
        sizes = self._block_bytes()
        for rank, (need, have) in enumerate(zip(final, steps[-1].holdings)):
            missing = sorted(b for b in need - have
                             if sizes is None or b >= len(sizes) or sizes[b] > 0)
            if missing:
                raise ScheduleError(f"rank {rank} lacks block(s) {_short(missing)} at the end")

    def _replay(self, result, alpha: float, beta: float, keep_steps: bool = True):
        """(steps, faults) of :meth:`holdings`; faults describe blocks sent but not held.

        Every step's holdings take O(p) memory (unchanged ranks share their frozenset);
        with ``keep_steps=False`` only the last step is returned.
        """
        if result is None:
            result = simulate(self, alpha, beta)
        ops = self.message_ops(result)
        held = [set(b) for b in self.initial_blocks()]
        frozen = [frozenset(h) for h in held]
        steps = [BlockStep(0, None, (), (), tuple(frozen))]
        faults: list[str] = []
        final = self.final_blocks()
        sizes = self._block_bytes()
        k, n = 0, len(result.messages)
        while k < n:
            t = result.messages[k].start
            group = []
            while k < n and result.messages[k].start == t:
                group.append(k)
                k += 1
            carried = []
            for i in group:  # all see the holdings from before the step
                m = result.messages[i]
                blocks, kind = ops[i]
                if blocks is not None:
                    c = tuple(blocks)
                    lacking = sorted(b for b in set(c) - held[m.src]
                                     if sizes is None or b >= len(sizes) or sizes[b] > 0)
                    if lacking:
                        faults.append(f"rank {m.src} sends block(s) {_short(lacking)} it does "
                                      f"not hold to rank {m.dst} at t={m.start:g}")
                elif kind == "data":
                    c = _infer(held[m.src], held[m.dst], m.nbytes, sizes,
                               None if final is None else final[m.dst])
                else:
                    c = ()
                carried.append(c)
            for i, c in zip(group, carried):
                if c:
                    dst = result.messages[i].dst
                    held[dst].update(c)
                    if keep_steps:
                        frozen[dst] = frozenset(held[dst])
            if keep_steps:
                steps.append(BlockStep(steps[-1].index + 1, t, tuple(group), tuple(carried),
                                       tuple(frozen)))
            else:
                steps[-1] = BlockStep(steps[-1].index + 1, t, tuple(group), tuple(carried), ())
        if not keep_steps:
            steps[-1] = BlockStep(steps[-1].index, steps[-1].time, steps[-1].messages,
                                  steps[-1].carried, tuple(frozenset(h) for h in held))
        return steps, faults

    def _block_bytes(self) -> list[int] | None:
        """Bytes of each block, from the problem (None without one)."""
        if self.problem is None:
            return None
        return [c * self.problem.itemsize for c in self.problem.block_counts()]

    def to_dict(self) -> dict:
        """JSON-able description; each op is a dict with an ``"op"`` key (``"send"``, ...)."""
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "p": self.p,
            "problem": None if self.problem is None else self.problem.to_dict(),
            "meta": _jsonable(meta_to_dict(self.meta)),
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
            meta=meta_from_dict(d.get("meta", {})),
        )


def _short(values: list, limit: int = 8) -> str:
    """`values` as a list literal, cut after `limit` items for error messages."""
    if len(values) <= limit:
        return str(values)
    return "[" + ", ".join(map(str, values[:limit])) + ", ...]"


def _span(blocks) -> str:
    """A block range for messages, e.g. ``3..5``."""
    if isinstance(blocks, range) and blocks.step == 1:
        return f"{blocks.start}..{blocks.stop - 1}" if len(blocks) else "(none)"
    return _short(list(blocks))


def _infer(src_holds: set, dst_holds: set, nbytes: int, sizes: list[int] | None,
           dst_needs: frozenset | None) -> tuple[int, ...] | None:
    """Blocks a data message without ``blocks`` carries, if its size pins them down."""
    if sizes is None:
        return None
    new = sorted(src_holds - dst_holds)
    candidates = [new]
    if dst_needs is not None:
        candidates.append([b for b in new if b in dst_needs])
    for c in candidates:
        if c and sum(sizes[b] for b in c) == nbytes:
            return tuple(c)
    return None


def _jsonable(x):
    """Convert numpy arrays/scalars and tuples inside `x` to plain Python for JSON."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist"):  # numpy array or scalar
        return x.tolist()
    return x
