"""Model schedules of collective algorithms and their alpha-beta-gamma simulation.

Each algorithm has a *schedule builder*: a function from a
:class:`~tuwviz.problems.Problem` to a :class:`Schedule`, one program of blocking
sends/receives/computations per rank, built from the same rules as the algorithm's C kernel.
:func:`simulate` runs a schedule in the one-ported, bidirectional alpha-beta-gamma model and
predicts every rank's finish time, at any scale.

Which builder models which algorithm is a field of the algorithm table
(``model = "tuwviz.model.gatherv:tuw"`` in ``kernels_c/algorithms.toml``, see
:mod:`tuwviz.table`); :data:`SCHEDULES` is derived from it, so an algorithm's model is
registered by its table row.

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
model prediction: 3.120 µs  (latest finish over all ranks)
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Callable, Iterator

from .. import config
from ..collectives import collective as collective_info
from ..problems import Problem
from ..params import DEFAULT_ALPHA, DEFAULT_BETA, check_params, uses_cost_model
from ..table import load_table
from . import allgather, allgatherv, gatherv, reduce, scatterv
from .program import (Compute, Op, Recv, Schedule, ScheduleError, Send, SendRecv, Waitall,
                      paused_gc)
from .nodes import NodeNetwork, simulate_nodes
from .simulate import Message, SimResult, simulate
from .topology.ring import allgatherv_block_elems

__all__ = [
    "MIN_REPORT_WIDTH",
    "SCHEDULES",
    "Compute",
    "Message",
    "NodeNetwork",
    "Op",
    "Recv",
    "Schedule",
    "ScheduleError",
    "Send",
    "SendRecv",
    "Waitall",
    "SimResult",
    "algorithms",
    "check_algorithm",
    "estimate_messages",
    "format_report",
    "simulate_algorithms",
    "schedule",
    "simulate",
    "simulate_nodes",
]

def estimate_messages(collective: str, algorithm: str, problem: Problem, **params) -> int:
    """An upper estimate of the messages `algorithm`'s schedule for `problem` has.

    Computed from p, the block sizes and the parameters alone, in O(p), before anything
    is built: ``p (p - 1)`` for the ring Allgatherv, ``(p - 1)`` times the number of
    non-empty pieces for the pipelined ring, and ``3p`` for the others (linear, binomial
    and the linear-time trees of gatherv and scatterv send about p to 2.6p messages).

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> estimate_messages("allgatherv", "ring", make_problem("allgatherv", 10))
    90
    >>> estimate_messages("allgatherv", "pipelined", make_problem("allgatherv", 4, b=8),
    ...                   block_bytes=4)   # 8 pieces of 1 int per rank, each to 3 others
    96
    """
    p = problem.p
    key = (collective.lower(), algorithm)
    if problem.inter:  # exchange, gathers and broadcasts, Allgathervs of log rounds
        n = problem.size
        return 2 * n * (max(n - 1, 1).bit_length() + 2)
    if key == ("allgatherv", "ring"):
        return p * (p - 1)
    if key == ("allgatherv", "pipelined"):
        b_el = allgatherv_block_elems(p, problem.counts, problem.itemsize,
                                      int(params.get("block_bytes") or 0),
                                      float(params.get("alpha") or DEFAULT_ALPHA),
                                      float(params.get("beta") or DEFAULT_BETA))
        pieces = sum(-(-c // b_el) for c in problem.counts)
        return (p - 1) * max(pieces, 1)
    return 3 * p


def check_messages(collective: str, algorithm: str, problem: Problem,
                   max_messages: int | None = None, **params) -> int:
    """:func:`estimate_messages`, or ValueError if it is above `max_messages`.

    `max_messages` defaults to :func:`tuwviz.config.max_model_messages` (about 5 million,
    some tens of seconds and a few GB); the message gives the estimate and how to raise
    the bound.
    """
    bound = config.max_model_messages() if max_messages is None else max_messages
    n = estimate_messages(collective, algorithm, problem, **params)
    if n > bound:
        raise ValueError(
            f"model {collective}/{algorithm} on p={problem.p} would need about {n:,} messages, "
            f"above the bound of {bound:,}; raise it with --max-messages {n}, "
            f"schedule(..., max_messages={n}) or TUWVIZ_MAX_MODEL_MESSAGES, or choose a smaller problem")
    return n


class _Schedules(Mapping):
    """Collective -> {algorithm: builder}, read from the algorithm table on each access.

    Read anew each time so a student's table (``TUWVIZ_KERNELS``) and edits to it count.
    """

    def _rows(self) -> dict[str, list]:
        out: dict[str, list] = {}
        for row in load_table().modelled():
            out.setdefault(row.collective, []).append(row)
        return out

    def __getitem__(self, collective: str) -> dict[str, Callable[..., Schedule]]:
        return {row.name: row.builder() for row in self._rows()[collective]}

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows())

    def __len__(self) -> int:
        return len(self._rows())

    def __repr__(self) -> str:
        return repr({c: [r.name for r in rows] for c, rows in self._rows().items()})


#: Schedule builders by collective, then algorithm name, from the algorithm table (the
#: names are those of the C kernels, so a model and its kernel share one row).
SCHEDULES: Mapping[str, dict[str, Callable[..., Schedule]]] = _Schedules()


def algorithms(collective: str, kind: str | None = "intra") -> list[str]:
    """Names of the algorithms of `collective` that have a model schedule, on communicators
    of `kind` (``"intra"``, one group, the default; ``"inter"``, two groups; None: both).

    Raises
    ------
    ValueError
        If no algorithm of `collective` has a model; the message lists the collectives
        that have models.

    Examples
    --------
    >>> algorithms("gatherv"), algorithms("allgather", "inter")
    (['linear', 'binomial', 'tuw', 'circulant'], ['root_gathering', 'segmented'])
    """
    key = collective.lower()
    if key not in SCHEDULES:
        valid = ", ".join(SCHEDULES)
        raise ValueError(f"no model for collective {collective!r}; models exist for: {valid}")
    rows = [r for r in load_table().modelled() if r.collective == key]
    return [r.name for r in rows if kind is None or r.serves(kind)]


def check_algorithm(collective: str, algorithm: str, kind: str | None = "intra") -> None:
    """ValueError unless `algorithm` of `collective` has a model on communicators of `kind`
    (as for :func:`algorithms`); the message lists those that have.

    Examples
    --------
    >>> check_algorithm("allgather", "segmented", "inter")
    >>> check_algorithm("allgather", "segmented")
    Traceback (most recent call last):
    ...
    ValueError: no model for algorithm 'segmented' of allgather; models exist for: circulant, bruck
    """
    names = algorithms(collective, kind)  # raises for a collective without models
    if algorithm not in names:
        raise ValueError(f"no model for algorithm {algorithm!r} of {collective.lower()}; "
                         f"models exist for: {', '.join(names)}")


def schedule(collective: str, algorithm: str, problem: Problem, *,
             max_messages: int | None = None, **params) -> Schedule:
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
    max_messages : int, optional
        Refuse schedules estimated (:func:`estimate_messages`) to have more messages
        (default :func:`tuwviz.config.max_model_messages`), before building them.

    Returns
    -------
    Schedule
        Per-rank programs, already checked with :meth:`Schedule.validate`.

    Raises
    ------
    ValueError
        If there is no model for `collective` or `algorithm` (the message lists the valid
        names), `problem` is for another collective, a parameter is unknown or bad, or the
        schedule would have more than `max_messages` messages.
    ScheduleError
        If the builder produced an inconsistent schedule (a bug in the builder).

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> schedule("gatherv", "foo", make_problem("gatherv", p=2))
    Traceback (most recent call last):
    ...
    ValueError: no model for algorithm 'foo' of gatherv; models exist for: linear, binomial, tuw, circulant
    """
    key = collective.lower()
    check_algorithm(key, algorithm, None)
    if problem.collective != key:
        raise ValueError(f"problem is a {problem.collective} problem, not a {key} problem")
    if not isinstance(problem, Problem):
        raise ValueError(f"problem must be a tuwviz.problems.Problem, got {problem!r}")

    load_table().find(key, algorithm).check_comm(problem.inter, problem.label())
    params = check_params(key, algorithm, params, problem.p)
    check_messages(key, algorithm, problem, max_messages, **params)
    with paused_gc():
        result = SCHEDULES[key][algorithm](problem, **params)
        result.validate()
    return result


def simulate_algorithms(problem: Problem, algorithm: str | None = None, params: dict | None = None, *,
            alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA, gamma: float = 0.0,
            cost_params: bool = False,
            max_messages: int | None = None,
            network: NodeNetwork | None = None) -> list[tuple[Schedule, SimResult]]:
    """Model schedules for `problem`, simulated: what ``tuwviz model`` prints.

    Parameters
    ----------
    problem : Problem
        The instance; on two groups (``problem.inter``) the intergroup models are used.
    algorithm : str, optional
        One algorithm; it gets every parameter of `params`, so one it does not take is an
        error.  By default every modelled algorithm of the collective, each with the
        parameters it takes (one that none takes is an error).
    params : dict, optional
        Tuning parameters, one value each (e.g. ``{"block_bytes": 4096}``).
    alpha, beta, gamma : float, optional
        The cost model: seconds per message, per byte, per reduced element.
    cost_params : bool, optional
        Also give `alpha` and `beta` to the algorithms whose parameters come from the cost
        model (the pipelined ring's Eq. (2)), as ``tuwviz bench`` gives calibrated values.
    max_messages : int, optional
        As for :func:`schedule`; every schedule's size is estimated before any is built.
    network : NodeNetwork, optional
        Simulate on nodes (:func:`tuwviz.model.nodes.simulate_nodes`: intra- and inter-node
        costs, one port per node) instead of the flat model; `alpha`, `beta` are then not
        used (the cost-model parameters get the network's inter-node ones).

    Returns
    -------
    list of (Schedule, SimResult)
        In the order of :func:`algorithms`.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> [(s.algorithm, round(r.time * 1e6, 3)) for s, r in simulate_algorithms(make_problem("gatherv", 4))]
    [('linear', 3.012), ('binomial', 3.02), ('tuw', 5.084), ('circulant', 3.02)]
    >>> simulate_algorithms(make_problem("gatherv", 4), params={"block_bytes": 64})
    Traceback (most recent call last):
    ...
    ValueError: no gatherv algorithm takes the parameter block_bytes
    """
    grid = dict(params or {})
    kind = "inter" if problem.inter else "intra"
    if algorithm is not None:
        check_algorithm(problem.collective, algorithm, kind)
    names = [algorithm] if algorithm else algorithms(problem.collective, kind)
    takes = {name: [q.name for q in load_table().find(problem.collective, name).params]
             for name in names}
    unused = [k for k in grid if not any(k in taken for taken in takes.values())]
    if unused and not algorithm:  # one named algorithm: schedule() names the problem
        raise ValueError(f"no {problem.collective} algorithm takes the parameter {unused[0]}")

    def given(name):
        # a named algorithm gets every given parameter, so one it does not take is an error
        return grid if algorithm else {k: v for k, v in grid.items() if k in takes[name]}

    for name in names:  # estimate every schedule's size before building any
        checked = check_params(problem.collective, name, given(name), problem.p)
        check_messages(problem.collective, name, problem, max_messages, **checked)
    if network is not None:
        alpha, beta = network.inter
    out = []
    for name in names:
        chosen = given(name)
        if cost_params and uses_cost_model(takes[name], chosen):
            chosen = {**chosen, "alpha": alpha, "beta": beta}
        s = schedule(problem.collective, name, problem, max_messages=max_messages, **chosen)
        out.append((s, simulate(s, alpha, beta, gamma) if network is None
                    else simulate_nodes(s, network, gamma)))
    return out


#: The narrowest `width` :func:`format_report` fits into (narrower asks get this).
MIN_REPORT_WIDTH = 60


def format_report(
    schedule: Schedule, result: SimResult, max_ranks: int = 32, max_ops: int = 6,
    width: int | None = None,
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
    width : int, optional
        Fit every line into this many characters (a terminal's width; at least
        :data:`MIN_REPORT_WIDTH`): programs show fewer operations, or are cut with ``…``,
        and the header wraps.  Default: no limit.

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
    if width is not None:
        width = max(width, MIN_REPORT_WIDTH)
        w_rank, w_time = (max(len(c[k]) for c in [title, *cells]) for k in (0, 2))
        room = width - w_rank - w_time - 4  # two spaces between the columns
        cells = [(a, _fit_program(schedule.programs[int(a)], max_ops, room)
                  if a.isdigit() else b[:room], c) for a, b, c in cells]
    w_rank, w_prog, w_time = (max(len(c[k]) for c in [title, *cells]) for k in range(3))
    lines = _wrap(_header(schedule, result), width)
    lines += [
        f"{a:>{w_rank}}  {b:<{w_prog}}  {c:>{w_time}}".rstrip() for a, b, c in [title, *cells]
    ]
    lines += _wrap(f"model prediction: {result.time * 1e6:.3f} µs  (latest finish over all "
                   f"ranks)", width)
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


def _fit_program(program: list[Op], max_ops: int, room: int) -> str:
    """:func:`_program_text` in at most `room` characters: fewer operations, else cut."""
    for k in range(max_ops, 0, -1):
        text = _program_text(program, k)
        if len(text) <= room:
            return text
    return text[: room - 1] + "…"


def _wrap(header: str, width: int | None) -> list[str]:
    """The header's parts (separated by two spaces) on as few lines as fit `width`."""
    lines = [""]
    for part in header.split("  "):
        if lines[-1] and width is not None and len(lines[-1]) + 2 + len(part) > width:
            lines.append("  " + part)  # indented: a continuation, not a table row
        else:
            lines[-1] += ("  " if lines[-1] else "") + part
    return lines


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
    if isinstance(op, Waitall):
        return "[" + " + ".join(f"{d} {peer} ({n} B)" for d, peer, n in op.posts) + "]"
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
