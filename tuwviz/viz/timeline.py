"""Timelines (Gantt charts) of recorded traces and of simulations, with idle times.

Input is what the kernels' tracing records (``LocalCluster.trace`` and the runner's trace
mode): one list of events per rank, each a dict with ``rank``, ``peer``, ``dir``
(``"send"``/``"recv"``), ``tag``, ``bytes``, ``t_start`` (when the operation was posted)
and ``t_end`` (when it completed).  A simulated :class:`~tuwviz.model.SimResult` is turned
into the same form by :func:`sim_events`, so model and trace timelines look alike.

An operation's time splits into *waiting* and *transfer*: messages are paired as MPI pairs
them (the k-th send from ``i`` to ``j`` with the k-th receive at ``j`` from ``i``), and an
operation waits from its posting until its partner has posted too.  The time between a
rank's operations, from the earliest event of all ranks to the rank's last completion, is
*idle* (local work, or nothing to do).  Traces assume all ranks read one clock, as
``MPI_Wtime`` does on one node.

Examples
--------
>>> events = [[{"rank": 0, "peer": 1, "dir": "send", "tag": 0, "bytes": 8,
...             "t_start": 10.0, "t_end": 13.0}],
...           [{"rank": 1, "peer": 0, "dir": "recv", "tag": 0, "bytes": 8,
...             "t_start": 11.0, "t_end": 13.0}]]
>>> trace_bars(events)[["rank", "what", "left", "right"]].values.tolist()
[[0, 'wait', 0.0, 1.0], [0, 'send', 1.0, 3.0], [1, 'recv', 1.0, 3.0]]
>>> idle_times(events)[["rank", "wait", "idle", "finish"]].values.tolist()
[[0.0, 1.0, 0.0, 3.0], [1.0, 0.0, 1.0, 3.0]]
"""
from __future__ import annotations

import bisect
from collections import defaultdict
from typing import TYPE_CHECKING, Sequence

from ..model.program import Compute, Recv, Send, SendRecv
from ..model.simulate import SimResult

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import pandas as pd
    from bokeh.model import Model
    from bokeh.plotting import figure as Figure

    from ..model.program import Schedule

__all__ = ["BAR_COLORS", "comm_idle_figure", "compare_timelines", "idle_summary",
           "idle_times", "sim_events", "timeline_figure", "trace_bars"]

#: Bar colours by what the rank does.
BAR_COLORS = {"send": "#1f5fbf", "recv": "#2ca02c", "wait": "#f5b77a"}
#: Colours of :func:`comm_idle_figure`'s stacked bars (Figure 7, right: dark communication,
#: light idle).
SUMMARY_COLORS = {"comm": "#1f5fbf", "wait": "#f5b77a", "idle": "#d9d9d9"}

_BAR_COLUMNS = ["rank", "what", "dir", "peer", "tag", "bytes", "post", "start", "end", "wait",
                "left", "right"]


def sim_events(result: "SimResult", schedule: "Schedule | None" = None) -> list[list[dict]]:
    """A simulation's messages as per-rank trace events (the kernels' trace format).

    Parameters
    ----------
    result : SimResult
        What :func:`~tuwviz.model.simulate` returned.
    schedule : Schedule, optional
        The simulated schedule.  With it, every event's ``t_start`` is exactly when the
        rank posted the operation (its previous operation's completion, plus compute
        time), and events are in program order.  Without it, an operation counts as posted
        when the rank's latest earlier message ended (exact for blocking programs without
        computation), and events are in start order.

    Returns
    -------
    list of list of dict
        Per rank, events with ``rank``, ``peer``, ``dir``, ``tag``, ``bytes``,
        ``t_start`` (posted) and ``t_end`` (completed), as the kernels record them.

    Examples
    --------
    >>> from tuwviz.model import Recv, Schedule, Send, simulate
    >>> s = Schedule("x", "y", 3, [[Recv(1, 10), Recv(2, 10)], [Send(0, 10)], [Send(0, 10)]])
    >>> [(e["dir"], e["t_start"], e["t_end"]) for e in sim_events(simulate(s, 1, 0), s)[2]]
    [('send', 0.0, 2.0)]
    """
    if schedule is not None:
        return _events_from_programs(result, schedule)
    per_rank: list[list[dict]] = [[] for _ in range(len(result.finish))]
    touching: list[list] = [[] for _ in range(len(result.finish))]
    for m in result.messages:
        touching[m.src].append(("send", m.dst, m))
        touching[m.dst].append(("recv", m.src, m))
    for rank, items in enumerate(touching):
        items.sort(key=lambda it: (it[2].start, it[2].end))
        ends = sorted(m.end for _, _, m in items)
        for d, peer, m in items:
            k = bisect.bisect_right(ends, m.start)  # the latest end not after this start
            post = ends[k - 1] if k else 0.0
            per_rank[rank].append(_event(rank, peer, d, m, post, m.end))
    return per_rank


def _events_from_programs(result: "SimResult", schedule: "Schedule") -> list[list[dict]]:
    by_pair: dict[tuple[int, int], list] = defaultdict(list)
    for m in result.messages:  # sorted by start: per pair, in FIFO order
        by_pair[m.src, m.dst].append(m)
    sent: dict[tuple[int, int], int] = defaultdict(int)
    received: dict[tuple[int, int], int] = defaultdict(int)
    out: list[list[dict]] = []
    for rank, program in enumerate(schedule.programs):
        clock, events = 0.0, []
        for op in program:
            t = type(op)
            if t is Compute:
                clock += result.gamma * op.units
                continue
            halves = []
            if t in (Send, SendRecv):
                peer = op.peer if t is Send else op.send_peer
                k = sent[rank, peer]
                sent[rank, peer] = k + 1
                halves.append(("send", peer, by_pair[rank, peer][k]))
            if t in (Recv, SendRecv):
                peer = op.peer if t is Recv else op.recv_peer
                k = received[peer, rank]
                received[peer, rank] = k + 1
                halves.append(("recv", peer, by_pair[peer, rank][k]))
            done = max(m.end for _, _, m in halves)
            for d, peer, m in halves:
                events.append(_event(rank, peer, d, m, clock, m.end))
            clock = done
        out.append(events)
    return out


def _event(rank: int, peer: int, d: str, m, post: float, end: float) -> dict:
    return {"rank": rank, "peer": peer, "dir": d, "tag": m.tag, "bytes": m.nbytes,
            "t_start": float(post), "t_end": float(end)}


def _per_rank(events) -> list[list[dict]]:
    """Accept per-rank lists, a flat list of events, or a SimResult."""
    if isinstance(events, SimResult):
        return sim_events(events)
    events = list(events)
    if events and isinstance(events[0], dict):
        p = max(e["rank"] for e in events) + 1
        out: list[list[dict]] = [[] for _ in range(p)]
        for e in events:
            out[e["rank"]].append(e)
        return out
    return [list(evs) for evs in events]


def trace_bars(events: "Sequence | SimResult", scale: float = 1.0) -> "pd.DataFrame":
    """One bar per operation (and one per wait) of a trace, times from the earliest event.

    Parameters
    ----------
    events : list of list of dict, list of dict, or SimResult
        Per-rank trace events, a flat list of them, or a simulation (see
        :func:`sim_events`; pass ``sim_events(result, schedule)`` for exact post times).
    scale : float, optional
        Multiply times by this (e.g. ``1e6`` for µs from seconds).

    Returns
    -------
    pandas.DataFrame
        Columns ``rank``, ``what`` (``"send"``, ``"recv"``, or ``"wait"`` for the part of
        an operation spent waiting for its partner to post), ``dir``, ``peer``, ``tag``,
        ``bytes``, ``post``, ``start`` (transfer start: when both sides had posted),
        ``end``, ``wait`` (``start - post``), and the bar's ``left`` and ``right``.  Rows
        are per rank in event order, a wait bar before its operation's bar.
    """
    import pandas as pd

    per_rank = _per_rank(events)
    t0 = min((e["t_start"] for evs in per_rank for e in evs), default=0.0)
    partner = _partner_posts(per_rank)
    rows = []
    for evs in per_rank:
        for k, e in enumerate(evs):
            post, end = e["t_start"] - t0, e["t_end"] - t0
            other = partner.get((e["rank"], k))
            start = post if other is None else min(max(post, other - t0), end)
            base = {"rank": e["rank"], "dir": e["dir"], "peer": e["peer"], "tag": e["tag"],
                    "bytes": e["bytes"], "post": post * scale, "start": start * scale,
                    "end": end * scale, "wait": (start - post) * scale}
            if start > post:
                rows.append({**base, "what": "wait", "left": post * scale,
                             "right": start * scale})
            rows.append({**base, "what": e["dir"], "left": start * scale, "right": end * scale})
    return pd.DataFrame(rows, columns=_BAR_COLUMNS)


def _partner_posts(per_rank: list[list[dict]]) -> dict[tuple[int, int], float]:
    """(rank, event index) -> post time of the matching operation on the peer."""
    sends: dict[tuple[int, int], list] = defaultdict(list)
    recvs: dict[tuple[int, int], list] = defaultdict(list)
    for evs in per_rank:
        for k, e in enumerate(evs):
            if e["dir"] == "send":
                sends[e["rank"], e["peer"]].append((e["rank"], k, e["t_start"]))
            else:
                recvs[e["peer"], e["rank"]].append((e["rank"], k, e["t_start"]))
    out = {}
    for pair, ss in sends.items():
        for (sr, sk, st), (rr, rk, rt) in zip(ss, recvs.get(pair, [])):
            out[sr, sk] = rt
            out[rr, rk] = st
    return out


def idle_times(events: "Sequence | SimResult", scale: float = 1.0) -> "pd.DataFrame":
    """How long each rank transferred, waited and idled: one row per rank.

    Parameters
    ----------
    events : list of list of dict, list of dict, or SimResult
        As for :func:`trace_bars`.
    scale : float, optional
        Multiply times by this.

    Returns
    -------
    pandas.DataFrame
        Columns ``rank``, ``ops`` (operations), ``bytes_sent``, ``bytes_received``,
        ``send`` and ``recv`` (transfer time), ``wait`` (time posted but waiting for the
        partner), ``idle`` (time in no operation, from the earliest event of all ranks to
        the rank's last completion), ``finish`` (that last completion) and ``after`` (from
        it to the end of the whole trace).  Times are in the input's unit times `scale`,
        counted from the earliest event.
    """
    import pandas as pd

    per_rank = _per_rank(events)
    bars = trace_bars(per_rank, scale)
    t0 = min((e["t_start"] for evs in per_rank for e in evs), default=0.0)
    t_end = max((e["t_end"] for evs in per_rank for e in evs), default=t0)
    length = (bars["right"] - bars["left"]).groupby([bars["rank"], bars["what"]]).sum().to_dict()
    rows = []
    for rank, evs in enumerate(per_rank):
        busy = _union([((e["t_start"] - t0) * scale, (e["t_end"] - t0) * scale) for e in evs])
        finish = max(((e["t_end"] - t0) * scale for e in evs), default=0.0)
        rows.append({
            "rank": rank,
            "ops": len(evs),
            "bytes_sent": sum(e["bytes"] for e in evs if e["dir"] == "send"),
            "bytes_received": sum(e["bytes"] for e in evs if e["dir"] == "recv"),
            "send": float(length.get((rank, "send"), 0.0)),
            "recv": float(length.get((rank, "recv"), 0.0)),
            "wait": float(length.get((rank, "wait"), 0.0)),
            "idle": finish - busy,
            "finish": finish,
            "after": (t_end - t0) * scale - finish,
        })
    return pd.DataFrame(rows, columns=["rank", "ops", "bytes_sent", "bytes_received", "send",
                                       "recv", "wait", "idle", "finish", "after"])


def _union(intervals: list[tuple[float, float]]) -> float:
    """Total length covered by `intervals`."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def timeline_figure(events: "Sequence | SimResult", *, schedule: "Schedule | None" = None,
                    title: str | None = None, scale: float = 1e6, unit: str = "µs",
                    width: int = 860) -> "Figure":
    """Gantt chart of a trace or a simulation: per rank, when it sent, received or waited.

    Each rank has a row (rank 0 on top): sends in the upper half, receives in the lower
    half, each preceded by a lighter bar for the time it waited for its partner.  Hovering
    shows peer, bytes, tag and times.  Right of each row: the rank's total wait and idle
    time (:func:`idle_times`).

    Parameters
    ----------
    events : list of list of dict, list of dict, or SimResult
        A recorded trace (``LocalCluster.trace(problem, algorithm)``) or a simulation.
    schedule : Schedule, optional
        With a SimResult: the schedule, for exact post times (:func:`sim_events`).
    title : str, optional
        Figure title.
    scale, unit : float, str, optional
        Times are multiplied by `scale` and labelled `unit`; the defaults turn seconds
        (traces, and simulations with ``alpha``/``beta`` in seconds) into µs.  For a
        simulation with ``alpha = 1`` use ``scale=1, unit="α"``.
    width : int, optional
        Width in pixels.

    Returns
    -------
    bokeh.plotting.figure
        Named sources ``"bars"`` (the rows of :func:`trace_bars`, plus ``y``, ``height``,
        ``color``) and ``"summary"`` (the rows of :func:`idle_times`, plus label text).
    """
    from bokeh.models import CDSView, ColumnDataSource, GroupFilter, HoverTool, LabelSet
    from bokeh.plotting import figure

    if isinstance(events, SimResult):
        events = sim_events(events, schedule)
    per_rank = _per_rank(events)
    p = len(per_rank)
    bars = trace_bars(per_rank, scale)
    bars["y"] = [r + (-0.2 if d == "send" else 0.2) for r, d in zip(bars["rank"], bars["dir"])]
    bars["height"] = 0.36
    bars["color"] = [BAR_COLORS[w] for w in bars["what"]]
    src = ColumnDataSource({c: bars[c].tolist() for c in bars.columns}, name="bars")
    summary = idle_times(per_rank, scale)
    right = float(max(bars["right"].max() if len(bars) else 0.0, 1e-12))
    summary["x"] = right
    summary["y"] = summary["rank"].astype(float)
    summary["text"] = [f"wait {w:.3g}, idle {i:.3g} {unit}"
                       for w, i in zip(summary["wait"], summary["idle"])]
    ssrc = ColumnDataSource({c: summary[c].tolist() for c in summary.columns}, name="summary")

    fig = figure(title=title or f"timeline of {p} ranks", width=width,
                 height=max(200, 34 * p + 90), x_range=(-0.02 * right, right * 1.32),
                 y_range=(p - 0.5, -0.5), x_axis_label=f"time since the first event ({unit})",
                 y_axis_label="rank", tools="xpan,xwheel_zoom,reset,save")
    for what in ("wait", "send", "recv"):  # one renderer per kind, for the legend
        if what not in src.data["what"]:
            continue
        fig.hbar(y="y", left="left", right="right", height="height", color="color",
                 source=src, view=CDSView(filter=GroupFilter(column_name="what", group=what)),
                 legend_label=what, line_color="#333333", line_width=0.5,
                 alpha=0.9 if what != "wait" else 0.75)
    fig.add_layout(LabelSet(source=ssrc, x="x", y="y", text="text", x_offset=6,
                            text_baseline="middle", text_font_size="8pt", text_color="#444444"))
    fig.add_tools(HoverTool(tooltips=[
        ("rank", "@rank"), ("", "@what @dir, peer @peer"), ("bytes", "@bytes"), ("tag", "@tag"),
        ("posted", f"@post {unit}"), ("transfer", f"@start → @end {unit}"),
        ("waited", f"@wait {unit}")]))
    if p <= 40:
        fig.yaxis.ticker = list(range(p))
    fig.ygrid.visible = False
    if fig.legend:
        legend = fig.legend[0]
        legend.orientation = "horizontal"
        fig.center.remove(legend)
        fig.add_layout(legend, "above")
    return fig


# -- several algorithms (Träff et al. 2010, Figures 7 right and 8) ---------------------------
def _as_events(value) -> list[list[dict]]:
    """Per-rank events of a trace, a SimResult, or a (SimResult, Schedule) pair."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], SimResult):
        return sim_events(value[0], value[1])
    return _per_rank(value)


def _is_model(value) -> bool:
    return isinstance(value, SimResult) or (isinstance(value, tuple) and bool(value)
                                            and isinstance(value[0], SimResult))


def idle_summary(traces: "dict[str, Sequence | SimResult]", scale: float = 1.0) -> "pd.DataFrame":
    """Total communication, waiting and idle time of each algorithm, summed over its ranks.

    Over the span of each trace (its earliest event to its last completion) every rank is
    either transferring (``comm``: some send or receive of it is under way), waiting
    (``wait``: in an operation whose partner has not posted yet) or ``idle`` (in no
    operation, including after its own last completion: a rank done early waits for the
    slowest).  Overlapping operations (the two halves of a ``MPI_Sendrecv``) count once,
    so ``comm + wait + idle = ranks x span``.

    Parameters
    ----------
    traces : dict
        ``{algorithm: events}``; events are a recorded trace (per-rank lists of event
        dicts, as for :func:`trace_bars`), a :class:`~tuwviz.model.SimResult`, or a
        ``(SimResult, Schedule)`` pair (exact post times, :func:`sim_events`).
    scale : float, optional
        Multiply times by this (``1e6``: µs from seconds).

    Returns
    -------
    pandas.DataFrame
        One row per algorithm, in the order of `traces`: ``algorithm``, ``ranks``,
        ``span``, ``comm``, ``wait``, ``idle``, ``idle_total`` (``wait + idle``: the light
        bars of Figure 8) and ``total`` (``comm + wait + idle``).

    Examples
    --------
    >>> events = [[{"rank": 0, "peer": 1, "dir": "send", "tag": 0, "bytes": 8,
    ...             "t_start": 0.0, "t_end": 3.0}],
    ...           [{"rank": 1, "peer": 0, "dir": "recv", "tag": 0, "bytes": 8,
    ...             "t_start": 1.0, "t_end": 3.0}]]
    >>> idle_summary({"x": events})[["comm", "wait", "idle", "total"]].values.tolist()
    [[4.0, 1.0, 1.0, 6.0]]
    """
    import pandas as pd

    if not traces:
        raise ValueError("idle_summary: no traces given (pass {algorithm: events})")
    rows = []
    for name, value in traces.items():
        per_rank = _as_events(value)
        bars = trace_bars(per_rank, scale)
        t0 = min((e["t_start"] for evs in per_rank for e in evs), default=0.0)
        span = (max((e["t_end"] for evs in per_rank for e in evs), default=t0) - t0) * scale
        comm = wait = idle = 0.0
        for rank, evs in enumerate(per_rank):
            mine = bars[(bars["rank"] == rank) & (bars["what"] != "wait")]
            transfer = _union(list(zip(mine["left"], mine["right"])))
            busy = _union([((e["t_start"] - t0) * scale, (e["t_end"] - t0) * scale)
                           for e in evs])
            comm, wait, idle = comm + transfer, wait + busy - transfer, idle + span - busy
        rows.append({"algorithm": name, "ranks": len(per_rank), "span": span, "comm": comm,
                     "wait": wait, "idle": idle, "idle_total": wait + idle,
                     "total": comm + wait + idle})
    return pd.DataFrame(rows, columns=["algorithm", "ranks", "span", "comm", "wait", "idle",
                                       "idle_total", "total"])


def compare_timelines(traces: "dict[str, Sequence | SimResult]", *, scale: float = 1e6,
                      unit: str = "µs", title: str | None = None,
                      side_by_side: bool = False, width: int = 860) -> "Model":
    """Timelines of several algorithms on one time axis, as the paper's Figure 8.

    One :func:`timeline_figure` per algorithm, all sharing one x range (panning or
    zooming one moves all), each titled with the algorithm's total idle time (waiting plus
    idle, summed over its ranks, :func:`idle_summary`): the light bars that Figure 8 shows
    the linear ring has far more of than the pipelined ring.

    Parameters
    ----------
    traces : dict
        ``{algorithm: events}`` as for :func:`idle_summary`.
    scale, unit : float, str, optional
        Time scale and its name (defaults: seconds shown as µs; for a simulation with
        ``alpha = 1`` use ``scale=1, unit="α"``).
    title : str, optional
        A heading above the figures.
    side_by_side : bool, optional
        Put the timelines in a row (Figure 8) instead of a column.
    width : int, optional
        Width of each timeline in pixels.

    Returns
    -------
    bokeh.models.Column or Row
        The timelines (named ``"timeline <algorithm>"``), under a heading if `title` is
        given.  Each has the sources of :func:`timeline_figure`.
    """
    from bokeh.layouts import column, row
    from bokeh.models import Div, Range1d

    summary = idle_summary(traces, scale).set_index("algorithm")
    figs = []
    for name, value in traces.items():
        s = summary.loc[name]
        fig = timeline_figure(_as_events(value), scale=scale, unit=unit, width=width,
                              title=f"{name}: total idle {s['idle_total']:.3g} {unit} "
                                    f"(wait {s['wait']:.3g} + idle {s['idle']:.3g}) over "
                                    f"{int(s['ranks'])} ranks, {_source(value)}")
        fig.name = f"timeline {name}"
        figs.append(fig)
    right = max(float(summary["span"].max()), 1e-12)
    shared = Range1d(-0.02 * right, right * 1.32)  # as timeline_figure, for the longest
    for fig in figs:
        fig.x_range = shared
    body = row(*figs) if side_by_side else column(*figs)
    if title:
        return column(Div(text=f"<b>{title}</b>"), body, name="compare_timelines")
    body.name = "compare_timelines"
    return body


def _source(value) -> str:
    return "model (simulated)" if _is_model(value) else "recorded trace"


def comm_idle_figure(traces: "dict[str, Sequence | SimResult]", *, scale: float = 1e6,
                     unit: str = "µs", title: str | None = None,
                     caption: str | None = None) -> "Figure":
    """Total communication against idle time per algorithm, as the paper's Figure 7 (right).

    One stacked bar per algorithm: communication, waiting and idle time summed over the
    ranks (:func:`idle_summary`), labelled with the idle share.

    Parameters
    ----------
    traces : dict
        ``{algorithm: events}`` as for :func:`idle_summary`.
    scale, unit : float, str, optional
        Time scale and its name.
    title : str, optional
        Figure title.
    caption : str, optional
        Text below the plot saying where the times come from; default ``"model
        (simulated)"`` or ``"recorded trace"`` by the kind of input (say where a trace
        was recorded: ranks, oversubscription).

    Returns
    -------
    bokeh.plotting.figure
        Named source ``"comm_idle"``: the rows of :func:`idle_summary` plus ``label``.
    """
    from bokeh.models import ColumnDataSource, LabelSet, Title
    from bokeh.plotting import figure

    summary = idle_summary(traces, scale)
    names = summary["algorithm"].astype(str).tolist()
    cols = {c: summary[c].tolist() for c in summary.columns}
    cols["algorithm"] = names
    cols["label"] = [f"idle {100 * i / t:.0f}%" if t > 0 else "" for i, t in
                     zip(summary["idle_total"], summary["total"])]
    src = ColumnDataSource(cols, name="comm_idle")
    top = float(summary["total"].max()) or 1.0
    fig = figure(x_range=names, y_range=(0, top * 1.15), width=max(320, 130 * len(names) + 120),
                 height=380, title=title or "communication vs idle time, summed over ranks",
                 y_axis_label=f"time summed over ranks ({unit})", tools="save",
                 toolbar_location=None)
    parts = ["comm", "wait", "idle"]
    fig.vbar_stack(parts, x="algorithm", width=0.6, source=src, line_color="#333333",
                   color=[SUMMARY_COLORS[k] for k in parts],
                   legend_label=["communication", "waiting", "idle"])
    fig.add_layout(LabelSet(source=src, x="algorithm", y="total", text="label", y_offset=4,
                            text_align="center", text_font_size="9pt"))
    fig.legend.location = "top_right"
    fig.xgrid.visible = False
    kinds = {_source(v) for v in traces.values()}
    fig.add_layout(Title(text=caption or " and ".join(sorted(kinds)), name="caption",
                         text_font_size="9pt", text_font_style="italic",
                         text_color="#444444"), "below")
    return fig
