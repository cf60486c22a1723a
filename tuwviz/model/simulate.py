"""One-ported, bidirectional alpha-beta-gamma simulator for model schedules.

The model is the one the papers analyse (e.g. Träff 2017, Section 1: "homogeneous, fully
connected network with 1-ported, bidirectional (telephone-like) communication"):

* every rank runs its program sequentially, with its own clock starting at 0, and every
  operation is blocking;
* a message of ``n`` bytes costs ``alpha + beta * n``; a zero-byte message still costs
  ``alpha``;
* messages between an ordered pair of ranks ``(i, j)`` are matched in FIFO order (MPI's
  non-overtaking rule): the k-th send from ``i`` to ``j`` meets the k-th receive at ``j``
  from ``i``.  Tags are recorded, not matched on;
* a transfer starts when both sides have reached it, at
  ``max(time the sender reached its op, time the receiver reached its op)``, and ends
  ``alpha + beta * n`` later;
* a :class:`~tuwviz.model.program.Send` or :class:`~tuwviz.model.program.Recv` completes at
  the end of its transfer; a :class:`~tuwviz.model.program.SendRecv` has a send half and a
  receive half that proceed concurrently and completes at the later of their two ends;
* a :class:`~tuwviz.model.program.Waitall` posts its sends and receives in order: its k-th
  send is ready when its (k-1)-th send has ended (the op's start for the first), likewise
  for receives, and it completes when all have ended;
* ``Compute(u)`` advances the rank's clock by ``gamma * u``.

So a rank can send one message and receive one message at the same time (bidirectional),
but never two sends or two receives at once (one-ported).

Units are whatever ``alpha``, ``beta`` and ``gamma`` are in; tuwviz uses seconds (per
message, per byte, per compute unit), and reports show microseconds.

The simulation is event-driven: a worklist of runnable ranks and, per ordered pair of ranks,
the half of a transfer that was posted first and waits for its partner.  Each operation is
handled once, so the cost is linear in the total number of operations (p = 65,536 ranks
with p log2 p operations take seconds).

Examples
--------
Two ranks exchange 100 bytes each way with one ``SendRecv``: it costs one message time,
not two.

>>> from tuwviz.model.program import Schedule, SendRecv
>>> s = Schedule("x", "exchange", 2, [[SendRecv(1, 100, 1, 100)], [SendRecv(0, 100, 0, 100)]])
>>> simulate(s, alpha=1.0, beta=0.01).time
2.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .ops import Compute, Recv, ScheduleError, Send, SendRecv, Waitall, paused_gc

if TYPE_CHECKING:  # pragma: no cover - annotations only: program imports this module
    from .program import Schedule

__all__ = ["Message", "SimResult", "simulate"]

# How many blocked ranks a deadlock error names.
_MAX_BLOCKED_SHOWN = 6


class Message(NamedTuple):
    """One simulated transfer: `nbytes` bytes from `src` to `dst` during [`start`, `end`]."""

    src: int
    dst: int
    nbytes: int
    tag: int
    start: float
    end: float


@dataclass
class SimResult:
    """Outcome of :func:`simulate`.

    Attributes
    ----------
    finish : numpy.ndarray
        Time each rank finishes its program (float, one per rank).
    messages : list of Message
        All transfers, sorted by start time (ties by sender, then receiver).
    alpha, beta, gamma : float
        The cost parameters used (seconds per message, per byte, per compute unit).
    """

    finish: np.ndarray
    messages: list[Message]
    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0

    @property
    def time(self) -> float:
        """Completion time of the whole schedule: the latest finish over all ranks."""
        return float(self.finish.max()) if len(self.finish) else 0.0

    def to_dict(self) -> dict:
        """JSON-able form: parameters, finish times, messages as dicts, overall time."""
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "gamma": self.gamma,
            "time": self.time,
            "finish": self.finish.tolist(),
            "messages": [m._asdict() for m in self.messages],
        }


def simulate(schedule: Schedule, alpha: float, beta: float, gamma: float = 0.0) -> SimResult:
    """Run `schedule` in the one-ported, bidirectional alpha-beta-gamma model.

    Parameters
    ----------
    schedule : Schedule
        Programs of all ranks.
    alpha : float
        Start-up cost of every message (seconds).
    beta : float
        Cost per byte (seconds per byte).
    gamma : float, optional
        Cost per unit of :class:`~tuwviz.model.program.Compute` (seconds per unit).

    Returns
    -------
    SimResult
        Finish time of every rank and every transfer with its start and end.

    Raises
    ------
    ScheduleError
        If the programs cannot all finish: a send and its matching receive disagree on the
        size, or some ranks wait forever (deadlock, or a message nobody receives).  The
        message names blocked ranks and what they wait for.
    ValueError
        If a cost parameter is negative, NaN or infinite (or not a number).

    Examples
    --------
    Two ranks both sending to rank 0 are served one after the other (one-ported):

    >>> from tuwviz.model.program import Recv, Schedule, Send
    >>> s = Schedule("x", "y", 3, [[Recv(1, 10), Recv(2, 10)], [Send(0, 10)], [Send(0, 10)]])
    >>> r = simulate(s, alpha=1.0, beta=0.5)
    >>> r.finish.tolist()
    [12.0, 6.0, 12.0]
    >>> r.messages[1]
    Message(src=2, dst=0, nbytes=10, tag=0, start=6.0, end=12.0)
    """
    for name, value in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
        try:
            ok = not isinstance(value, bool) and math.isfinite(value) and value >= 0
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    p = schedule.p
    programs = schedule.programs
    if len(programs) != p:
        raise ScheduleError(f"{len(programs)} programs for p={p} ranks")
    with paused_gc():
        clock, messages, waiting = _run(programs, float(alpha), float(beta), float(gamma))
        if waiting:
            raise ScheduleError(_deadlock_message(programs, waiting))
        return SimResult(np.array(clock, dtype=float), _by_start(messages), alpha, beta, gamma)


def _by_start(messages: list[Message]) -> list[Message]:
    """`messages` sorted by start time, then sender, then receiver."""
    if not messages:
        return messages
    # numpy's lexsort is several times faster than list.sort with tuple keys at 10^6 items.
    start = np.array([m.start for m in messages])
    src = np.array([m.src for m in messages])
    dst = np.array([m.dst for m in messages])
    return [messages[k] for k in np.lexsort((dst, src, start))]


def _run(programs, alpha: float, beta: float, gamma: float):
    """Event-driven core of :func:`simulate`.

    Returns the clocks, the matched messages and the still-unmatched halves
    ``{(kind, src, dst): (posted time, nbytes, tag)}`` (empty when every rank finished).
    """
    p = len(programs)
    pc = [0] * p          # index of the current op of each rank
    clock = [0.0] * p     # time each rank reached its current op (or finished)
    pending = [0] * p     # halves of the current op still waiting for their partner
    done_at = [0.0] * p   # latest end among the matched halves of the current op
    posted = [False] * p  # has the current op posted its halves?
    # A transfer half posted before its partner waits here, keyed by (src, dst).  At most
    # one half per key waits, because every op blocks until its halves are matched.
    sends: dict[tuple[int, int], tuple[float, int, int]] = {}
    recvs: dict[tuple[int, int], tuple[float, int, int]] = {}
    messages: list[Message] = []
    work = list(range(p - 1, -1, -1))
    # A Waitall in progress: per rank, its send and its receive chain, each
    # [posts, next index, time the last one ended, waiting for a partner?]
    chain: list = [None] * p

    def partner_matched(q: int, end: float, chain_dir: int) -> None:
        """The half `q` posted first has been matched; it ends at `end`."""
        if end > done_at[q]:
            done_at[q] = end
        pending[q] -= 1
        c = chain[q]
        if c is not None:  # the chain may post its next half now
            c[chain_dir][2] = end
            c[chain_dir][3] = False
            work.append(q)
        elif pending[q] == 0:
            work.append(q)

    def advance(r: int) -> None:
        """Post the next halves of rank `r`'s Waitall chains, as far as they can go."""
        for d, link in enumerate(chain[r]):
            posts = link[0]
            while not link[3] and link[1] < len(posts):
                q, n = posts[link[1]][1], posts[link[1]][2]
                link[1] += 1
                t = link[2]
                if d == 0:  # send
                    waiting_, key, mine, theirs = recvs, (r, q), sends, 1
                else:
                    waiting_, key, mine, theirs = sends, (q, r), recvs, 0
                other = waiting_.pop(key, None)
                if other is None:
                    mine[key] = (t, n, tag_of[r])
                    link[3] = True
                    pending[r] += 1
                    continue
                t_o, n_o, tag_o = other
                if n != n_o:
                    raise (_size_mismatch(r, q, n, n_o) if d == 0 else _size_mismatch(q, r, n_o, n))
                start = t if t > t_o else t_o
                end = start + alpha + beta * n
                append(Message(r, q, n, tag_of[r], start, end) if d == 0
                       else Message(q, r, n, tag_o, start, end))
                link[2] = end
                if end > done_at[r]:
                    done_at[r] = end
                partner_matched(q, end, theirs)
        if not pending[r]:
            chain[r] = None

    tag_of = [0] * p

    # the transfers are written out inline below: this loop runs once per op, millions of
    # times at paper scale, and calls cost more than the work
    append = messages.append
    while work:
        r = work.pop()
        prog = programs[r]
        i = pc[r]
        t = clock[r]
        while True:
            if posted[r]:
                if chain[r] is not None:
                    advance(r)
                if pending[r]:
                    break
                t = done_at[r]
                posted[r] = False
                i += 1
            if i == len(prog):
                break
            op = prog[i]
            kind = type(op)
            if kind is Compute:
                t += gamma * op.units
                i += 1
                continue
            # peers and sizes of the halves, None for an absent half (no tuples: this
            # loop runs once per op, millions of times at paper scale)
            if kind is Send:
                s_peer, s_n, r_peer = op.peer, op.nbytes, None
            elif kind is Recv:
                s_peer, r_peer, r_n = None, op.peer, op.nbytes
            elif kind is SendRecv:
                s_peer, s_n, r_peer, r_n = op.send_peer, op.send_nbytes, op.recv_peer, op.recv_nbytes
            elif kind is Waitall:
                posted[r] = True
                pending[r] = 0
                done_at[r] = t
                tag_of[r] = op.tag
                chain[r] = ([[h for h in op.posts if h[0] == "send"], 0, t, False],
                            [[h for h in op.posts if h[0] == "recv"], 0, t, False])
                continue  # the loop's top posts them
            else:
                raise ScheduleError(f"rank {r}, op {i}: {op!r} is not an operation")
            posted[r] = True
            pending[r] = 0
            done_at[r] = t
            if s_peer is not None:
                q, n = s_peer, s_n
                other = recvs.pop((r, q), None)
                if other is None:
                    sends[r, q] = (t, n, op.tag)
                    pending[r] += 1
                else:
                    t_o, n_o, _ = other
                    if n != n_o:
                        raise _size_mismatch(r, q, n, n_o)
                    start = t if t > t_o else t_o
                    end = start + alpha + beta * n
                    append(Message(r, q, n, op.tag, start, end))
                    if end > done_at[r]:
                        done_at[r] = end
                    # `q` posted its half earlier; it may now be able to continue
                    partner_matched(q, end, 1)
            if r_peer is not None:
                q, n = r_peer, r_n
                other = sends.pop((q, r), None)
                if other is None:
                    recvs[q, r] = (t, n, op.tag)
                    pending[r] += 1
                else:
                    t_o, n_o, tag_o = other
                    if n_o != n:
                        raise _size_mismatch(q, r, n_o, n)
                    start = t_o if t_o > t else t
                    end = start + alpha + beta * n_o
                    append(Message(q, r, n_o, tag_o, start, end))
                    if end > done_at[r]:
                        done_at[r] = end
                    partner_matched(q, end, 0)
        pc[r] = i
        clock[r] = t
    waiting = {("send",) + k: v for k, v in sends.items()}
    waiting.update({("recv",) + k: v for k, v in recvs.items()})
    return clock, messages, waiting


def _size_mismatch(src: int, dst: int, n_send: int, n_recv: int) -> ScheduleError:
    """The error for a send and its matching receive of different sizes."""
    return ScheduleError(
        f"size mismatch: rank {src} sends {n_send} bytes to rank {dst}, "
        f"which posts a receive of {n_recv} bytes from it"
    )


def _deadlock_message(programs, waiting) -> str:
    """Describe some ranks that wait forever and what they wait for."""
    blocked: dict[int, list[str]] = {}
    for (kind, src, dst), (t, n, _tag) in sorted(waiting.items(), key=lambda kv: kv[0][1:]):
        if kind == "send":
            blocked.setdefault(src, []).append(
                f"rank {dst} to receive its send of {n} B (posted at t={t:g})"
            )
        else:
            blocked.setdefault(dst, []).append(
                f"rank {src} to send the {n} B it receives (posted at t={t:g})"
            )
    lines = []
    for rank in sorted(blocked)[:_MAX_BLOCKED_SHOWN]:
        lines.append(f"  rank {rank} waits for " + " and ".join(blocked[rank]))
    more = len(blocked) - _MAX_BLOCKED_SHOWN
    if more > 0:
        lines.append(f"  ... and {more} more blocked rank(s)")
    return (
        f"{len(blocked)} rank(s) cannot finish (deadlock or unmatched message):\n"
        + "\n".join(lines)
    )
