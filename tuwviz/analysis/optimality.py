"""Is a gather or scatter round- and bandwidth-optimal?  Measured on its messages.

The course report (HPC course, TU Wien 2017, Sections 1.3, 1.4, 2.3, 2.4) argues three
properties of a good Gather or Scatter; here each is a number from the messages a kernel
really sent (its recorded trace, :func:`schedule_from_trace`) or from a model schedule:

* **rounds**: the schedule replayed one message per round in the one-ported model (every
  message costs 1, bytes cost nothing: :func:`tuwviz.model.simulate` with ``alpha = 1,
  beta = 0``), i.e. the longest chain of messages that must follow one another, a process
  sending or receiving one message at a time.  A tree needs ``ceil(log2 p)``; the linear
  algorithm ``p - 1`` (the root takes one message per round).
* **root bytes**: what the root receives (gather) or sends (scatter); it cannot be less
  than the other processes' blocks, ``(p-1)/p m`` for equal blocks, and an optimal
  algorithm moves exactly that.  **Most bytes any process sends** is bounded the same way.
* **latency**: the round in which the last process first takes part in a message (sends
  or receives).  The report's "no algorithmic latency": every process starts within the
  tree's ``ceil(log2 p)`` rounds, not after ``Theta(p)``.

Examples
--------
>>> from tuwviz import model
>>> from tuwviz.problems import make_problem
>>> pr = make_problem("gather", p=8, distribution="same", b=100, root=2)
>>> o = optimality(model.schedule("gather", "divide_conquer", pr))
>>> o.rounds, o.rounds_bound, o.root_bytes == o.root_bound, o.ok
(3, 3, True, True)
>>> from tuwviz.model.gatherv import linear      # every block straight to the root
>>> o = optimality(linear(pr))
>>> o.rounds, o.failed()
(7, ['rounds', 'latency'])
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, NamedTuple

from ..model.program import Recv, Schedule, ScheduleError, Send
from ..model.simulate import simulate
from ..problems import Problem, make_problem
from .. import model

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Optimality", "model_table", "optimality", "schedule_from_trace"]


class Optimality(NamedTuple):
    """The properties of one schedule (see the module docstring); ``None`` if unknown.

    Attributes
    ----------
    p, root : int
    rounds : int or None
        Rounds in the one-ported model (None: the recorded order cannot be replayed one
        blocking message at a time; `why` says why).
    rounds_bound : int
        ``ceil(log2 p)``.
    root_bytes : int
        Bytes the root receives (gather) or sends (scatter).
    root_bound : int
        Bytes of the other processes' blocks: the least the root can move.
    max_sent : int
        Most bytes any process sends.
    latency : int or None
        Round of the last process's first message.
    messages : int
        Messages in all.
    why : str
        Why `rounds` is unknown, else empty.
    """

    p: int
    root: int
    rounds: int | None
    rounds_bound: int
    root_bytes: int
    root_bound: int
    max_sent: int
    latency: int | None
    messages: int
    why: str = ""

    def failed(self) -> list[str]:
        """Names of the properties that do not hold: rounds, root_bytes, max_sent, latency."""
        bad = []
        if self.rounds is None or self.rounds > self.rounds_bound:
            bad.append("rounds")
        if self.root_bytes != self.root_bound:
            bad.append("root_bytes")
        if self.max_sent > self.root_bound:
            bad.append("max_sent")
        if self.latency is None or self.latency > self.rounds_bound:
            bad.append("latency")
        return bad

    @property
    def ok(self) -> bool:
        return not self.failed()


def schedule_from_trace(problem: Problem, algorithm: str, events: list[list[dict]]) -> Schedule:
    """The messages a kernel recorded (``cluster.trace`` / trace cases), as a schedule.

    Each rank's events become blocking sends and receives in the order it posted them.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> ev = [[{"dir": "recv", "peer": 1, "bytes": 4, "tag": 0}],
    ...       [{"dir": "send", "peer": 0, "bytes": 4, "tag": 0}]]
    >>> schedule_from_trace(make_problem("gather", 2, "same", 1), "mine", ev).messages(0)
    [('recv', 1, 4)]
    """
    programs = [[(Send if e["dir"] == "send" else Recv)(e["peer"], e["bytes"], e.get("tag", 0))
                 for e in rank_events] for rank_events in events]
    return Schedule(problem.collective, algorithm, problem.p, programs, problem)


def optimality(schedule: Schedule) -> Optimality:
    """Rounds, root bytes, most bytes sent and latency of a gather or scatter schedule.

    Raises
    ------
    ValueError
        If the schedule has no problem, or the problem is no gather or scatter.
    """
    pr = schedule.problem
    if pr is None or pr.collective not in ("gather", "gatherv", "scatter", "scatterv"):
        raise ValueError("optimality needs a gather(v) or scatter(v) schedule with its problem")
    p, root = pr.p, pr.root
    nbytes = [pr.nbytes(i) for i in range(p)]
    root_bound = sum(nbytes) - nbytes[root]
    gather = pr.collective.startswith("gather")
    sent = [sum(op.nbytes for op in prog if isinstance(op, Send)) for prog in schedule.programs]
    received = [sum(op.nbytes for op in prog if isinstance(op, Recv))
                for prog in schedule.programs]
    count = sum(isinstance(op, Send) for prog in schedule.programs for op in prog)
    rounds = latency = None
    why = ""
    try:
        sim = simulate(schedule, alpha=1.0, beta=0.0)
    except ScheduleError as exc:
        why = str(exc).splitlines()[0]
    else:
        rounds = round(sim.time)
        first = {}
        for m in sim.messages:
            for r in (m.src, m.dst):
                first[r] = min(first.get(r, m.start), m.start)
        # a process with no message at all (p = 1, or an empty role) has no latency
        latency = round(max(first.values())) if first else 0
    return Optimality(p, root, rounds, math.ceil(math.log2(p)) if p > 1 else 0,
                      received[root] if gather else sent[root], root_bound, max(sent, default=0),
                      latency, count, why)


def model_table(collective: str, algorithms: Iterable[str], ps: Iterable[int],
                roots: Iterable[int] = (0, 2), b: int = 100) -> "pd.DataFrame":
    """:func:`optimality` of model schedules: one row per (algorithm, p, root), blocks of
    `b` elements; roots at or beyond p are left out.

    Examples
    --------
    >>> df = model_table("gatherv", ["binomial", "linear"], [5, 8], roots=[0])
    >>> print(df[["algorithm", "p", "rounds", "rounds_bound", "ok"]].to_string(index=False))
    algorithm  p  rounds  rounds_bound    ok
     binomial  5       4             3 False
     binomial  8       5             3 False
       linear  5       4             3 False
       linear  8       7             3 False

    The binomial Gatherv sends its subtrees' sizes ahead of the data instead of probing
    for them (``kernels_c/common/tree.c``): those messages take rounds of their own.  The
    regular Gather on the same tree needs no sizes and takes the tree's rounds:

    >>> model_table("gather", ["binomial"], [5, 8], roots=[0])["rounds"].tolist()
    [3, 3]
    """
    import pandas as pd

    rows = []
    for alg in algorithms:
        for p in ps:
            for r in roots:
                if r >= p:
                    continue
                o = optimality(model.schedule(collective, alg,
                                              make_problem(collective, p, "same", b, root=r)))
                rows.append({"collective": collective, "algorithm": alg, **o._asdict(),
                             "ok": o.ok, "failed": " ".join(o.failed())})
    return pd.DataFrame(rows)
