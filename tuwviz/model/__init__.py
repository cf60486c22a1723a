"""Model schedules of collective algorithms and their alpha-beta-gamma simulation.

Each algorithm has a *schedule builder*: a function from a
:class:`~tuwviz.problems.Problem` to a :class:`Schedule`, one program of blocking
sends/receives/computations per rank, built from the same rules as the algorithm's C kernel.
:func:`simulate` runs a schedule in the one-ported, bidirectional alpha-beta-gamma model and
predicts every rank's finish time, at any scale.

The builders are registered, as data, in :data:`SCHEDULES`; adding an algorithm is one line
there.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> pr = make_problem("gatherv", p=4, distribution="same", b=10, root=2)
>>> s = schedule("gatherv", "linear", pr)
>>> r = simulate(s, alpha=1e-6, beta=1e-9)
>>> round(r.time * 1e6, 3)      # 3 alpha + 120 beta, in microseconds
3.12
>>> print(format_report(s, r))
model gatherv/linear  p=4 root=2 (same, b=10, int)  α=1 µs  β=0.001 µs/B  γ=0 µs/unit
rank  program                                      finish [µs]
   0  send 2 (40 B)                                      1.040
   1  send 2 (40 B)                                      2.080
   2  recv 0 (40 B), recv 1 (40 B), recv 3 (40 B)        3.120
   3  send 2 (40 B)                                      3.120
model prediction: 3.120 µs (latest finish over all ranks)
"""
from __future__ import annotations

from typing import Callable

from ..collectives import collective as collective_info
from ..problems import Problem
from ..params import check_params
from . import allgatherv, gatherv, scatterv
from .program import Compute, Op, Recv, Schedule, ScheduleError, Send, SendRecv
from .simulate import Message, SimResult, simulate

__all__ = [
    "SCHEDULES",
    "Compute",
    "Message",
    "Op",
    "Recv",
    "Schedule",
    "ScheduleError",
    "Send",
    "SendRecv",
    "SimResult",
    "algorithms",
    "format_report",
    "schedule",
    "simulate",
]

#: Schedule builders by collective, then algorithm name.  The names are those of the C
#: kernels' registry, so a model and its kernel can be looked up with the same pair.
SCHEDULES: dict[str, dict[str, Callable[[Problem], Schedule]]] = {
    "gatherv": {"linear": gatherv.linear, "binomial": gatherv.binomial, "tuw": gatherv.tuw},
    "scatterv": {"linear": scatterv.linear, "binomial": scatterv.binomial, "tuw": scatterv.tuw},
    "allgatherv": {"ring": allgatherv.ring, "pipelined": allgatherv.pipelined},
}


def algorithms(collective: str) -> list[str]:
    """Names of the algorithms of `collective` that have a model schedule.

    Raises
    ------
    ValueError
        If no algorithm of `collective` has a model; the message lists the collectives
        that have models.

    Examples
    --------
    >>> algorithms("gatherv")
    ['linear', 'binomial', 'tuw']
    """
    key = collective.lower()
    if key not in SCHEDULES:
        valid = ", ".join(SCHEDULES)
        raise ValueError(f"no model for collective {collective!r}; models exist for: {valid}")
    return list(SCHEDULES[key])


def schedule(collective: str, algorithm: str, problem: Problem, **params) -> Schedule:
    """Build and validate the model schedule of `algorithm` for `problem`.

    Parameters
    ----------
    collective : str
        Name of the collective, e.g. ``"gatherv"``; must be ``problem.collective``.
    algorithm : str
        Name of the algorithm, a key of ``SCHEDULES[collective]``.
    problem : Problem
        The instance (p, root, block sizes, datatype).
    **params
        The algorithm's tuning parameters, as for its C kernel (:mod:`tuwviz.params`),
        e.g. ``block_bytes=4096`` for the pipelined ring.

    Returns
    -------
    Schedule
        Per-rank programs, already checked with :meth:`Schedule.validate`.

    Raises
    ------
    ValueError
        If there is no model for `collective` or `algorithm` (the message lists the valid
        names), `problem` is for another collective, or a parameter is unknown or bad.
    ScheduleError
        If the builder produced an inconsistent schedule (a bug in the builder).

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> schedule("gatherv", "foo", make_problem("gatherv", p=2))
    Traceback (most recent call last):
    ...
    ValueError: no model for algorithm 'foo' of gatherv; models exist for: linear, binomial, tuw
    """
    key = collective.lower()
    names = algorithms(key)  # raises for a collective without models
    if algorithm not in names:
        raise ValueError(
            f"no model for algorithm {algorithm!r} of {key}; "
            f"models exist for: {', '.join(names)}"
        )
    if problem.collective != key:
        raise ValueError(f"problem is a {problem.collective} problem, not a {key} problem")
    params = check_params(key, algorithm, params, problem.p)
    result = SCHEDULES[key][algorithm](problem, **params)
    result.validate()
    return result


def format_report(
    schedule: Schedule, result: SimResult, max_ranks: int = 32, max_ops: int = 6
) -> str:
    """Plain-text report of a simulated schedule, times in microseconds.

    The cost parameters are taken from `result` (they are in seconds there).

    Parameters
    ----------
    schedule : Schedule
        The simulated schedule.
    result : SimResult
        What :func:`simulate` returned for it.
    max_ranks : int, optional
        For larger `p`, show the first and last ``max_ranks / 2`` ranks plus the root and
        the rank finishing last; each run of left-out ranks becomes one ``…`` line.
    max_ops : int, optional
        Show at most this many operations per rank; longer programs are abbreviated with
        ``…`` and their operation count.

    Returns
    -------
    str
        A header line (collective, algorithm, p, root, problem, alpha, beta, gamma), a table
        of rank, program and finish time, and a last line with the model's predicted
        completion time (the latest finish).
    """
    slowest = int(result.finish.argmax()) if schedule.p else 0
    keep = {slowest} | ({schedule.problem.root} if schedule.problem is not None else set())
    cells = []
    for row in _shown_ranks(schedule.p, max_ranks, keep):
        if isinstance(row, tuple):  # a gap of ranks not shown
            cells.append(("…", f"({row[1] - row[0]} ranks not shown)", ""))
        else:
            program = _program_text(schedule.programs[row], max_ops)
            cells.append((str(row), program, f"{result.finish[row] * 1e6:.3f}"))
    title = ("rank", "program", "finish [µs]")
    w_rank, w_prog, w_time = (max(len(c[k]) for c in [title, *cells]) for k in range(3))
    lines = [_header(schedule, result)]
    lines += [
        f"{a:>{w_rank}}  {b:<{w_prog}}  {c:>{w_time}}".rstrip() for a, b, c in [title, *cells]
    ]
    lines.append(f"model prediction: {result.time * 1e6:.3f} µs (latest finish over all ranks)")
    return "\n".join(lines)


def _header(schedule: Schedule, result: SimResult) -> str:
    """First report line: what was simulated, with which parameters."""
    parts = [f"model {schedule.collective}/{schedule.algorithm}", f"p={schedule.p}"]
    pr = schedule.problem
    root = schedule.meta.get("root")
    if pr is not None and collective_info(pr.collective).rooted:
        root = pr.root
    where = f" root={root}" if root is not None else ""
    if pr is not None:
        where += f" ({pr.distribution}, b={pr.b}, {pr.datatype})"
    parts[-1] += where
    parts += [
        f"α={result.alpha * 1e6:g} µs",
        f"β={result.beta * 1e6:g} µs/B",
        f"γ={result.gamma * 1e6:g} µs/unit",
    ]
    return "  ".join(parts)


def _shown_ranks(p: int, max_ranks: int, keep: set[int]) -> list:
    """Ranks to list: the first and last ones and those in `keep` (the root, the slowest).

    Runs of ranks left out appear as ``(first, end)`` tuples, in their place.
    """
    if p <= max_ranks:
        return list(range(p))
    head = max(1, max_ranks // 2)
    tail = max(1, max_ranks - head)
    shown = sorted(set(range(head)) | set(range(p - tail, p)) | keep)
    rows: list = []
    for a, b in zip(shown, shown[1:]):
        rows.append(a)
        if b > a + 1:
            rows.append((a + 1, b))
    rows.append(shown[-1])
    return rows


def _op_text(op: Op) -> str:
    """One operation in the report's compact form, e.g. ``recv 3 (40 B)``."""
    if isinstance(op, Send):
        return f"send {op.peer} ({op.nbytes} B)"
    if isinstance(op, Recv):
        return f"recv {op.peer} ({op.nbytes} B)"
    if isinstance(op, SendRecv):
        return (
            f"[send {op.send_peer} ({op.send_nbytes} B)"
            f" + recv {op.recv_peer} ({op.recv_nbytes} B)]"
        )
    label = f" {op.label}" if op.label else ""
    return f"compute {op.units}{label}"


def _program_text(program: list[Op], max_ops: int) -> str:
    """A rank's program as comma-separated operations, abbreviated past `max_ops`."""
    if not program:
        return "-"
    if len(program) <= max_ops:
        return ", ".join(_op_text(op) for op in program)
    head = [_op_text(op) for op in program[: max(1, max_ops - 1)]]
    return ", ".join(head + ["…", _op_text(program[-1])]) + f"  [{len(program)} ops]"
