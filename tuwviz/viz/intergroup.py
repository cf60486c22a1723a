"""The intergroup Allgather(v) drawn and animated: two groups side by side (Figures 1-3 of
Kang, Träff et al., "Scalable algorithms for MPI intergroup Allgather and Allgatherv",
Parallel Computing 2019), and the improvement over root gathering (Figure 6).

:func:`intergroup_figure` draws the exchange between the groups as a bipartite graph: who
sends how many bytes to whom, numbered in each receiver's receive order (Figure 1 and 2
for Algorithm 1, Figure 3 for Algorithm 2).  :func:`intergroup_frames` replays a schedule
step by step (one time unit per message, as the one-ported model orders them) as plain
data; :func:`animate_intergroup` animates it in the browser: the exchange rounds between
the groups, then the Allgathers inside them.  :func:`improvement_figure` plots T_old / T_new
over the message size per setting, model lines and measured points (Figure 6).

What a process "has" is counted in bytes received so far against what it must end with,
the other group's whole data (K_A or K_B): a root of root gathering receives its own
group's data too and goes past the mark; the segmented algorithms receive each byte of the
other group's data exactly once (plus Algorithm 2's 8-byte count messages).

Examples
--------
>>> from tuwviz.model import schedule
>>> from tuwviz.problems import make_problem
>>> s = schedule("allgather", "segmented", make_problem("allgather", 6, "regular", 4, q=2,
...                                                      datatype="byte"))
>>> frames = intergroup_frames(s)
>>> frames[1]["transfers"][:2]          # [src, dst, bytes, between the groups?]
[[0, 6, 4, True], [3, 7, 4, True]]
>>> frames[-1]["received"], frames[-1]["needed"]
([8, 8, 8, 8, 8, 8, 24, 24], [8, 8, 8, 8, 8, 8, 24, 24])
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Sequence

from ..model.intergroup import groups_ab
from ._common import ACTIVE_COLOR, player_row
from .animation import _PLAY_JS
from ..model.simulate import simulate

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from bokeh.model import Model

    from ..model.program import Schedule

__all__ = ["INTERGROUP_ALGORITHMS", "MAX_DRAWN", "animate_intergroup", "bipartite_positions",
           "improvement_figure", "intergroup_figure", "intergroup_frames"]

#: The schedules these figures draw.
INTERGROUP_ALGORITHMS = (("allgather", "root_gathering"), ("allgather", "segmented"),
                         ("allgatherv", "root_gathering"), ("allgatherv", "segmented"))

#: Most processes (both groups) drawn; the labels of larger groups overlap.
MAX_DRAWN = 48

# Colours: messages between the groups, inside A, inside B; the groups' nodes.
_INTER_COLOR = ACTIVE_COLOR
_INTRA_COLORS = ("#1f5fbf", "#2ca02c")
_GROUP_COLORS = ("#dce8f7", "#d9f0d3")
_DONE_COLOR = "#f2b134"
_WIDTH = 4.0  # distance between the two columns, in layout units


def _check(schedule: "Schedule", who: str) -> None:
    if (schedule.collective, schedule.algorithm) not in INTERGROUP_ALGORITHMS or \
            schedule.problem is None or not schedule.problem.inter:
        valid = ", ".join(f"{c}/{a}" for c, a in INTERGROUP_ALGORITHMS)
        raise ValueError(f"{who} draws the intergroup schedules ({valid}) of a two-group "
                         f"problem, not {schedule.collective}/{schedule.algorithm}")
    if schedule.p > MAX_DRAWN:
        raise ValueError(f"{who}: {schedule.p} processes are too many to draw (at most "
                         f"{MAX_DRAWN}); the model and bounds go further "
                         f"(tuwviz.model.intergroup_cost)")


def bipartite_positions(schedule: "Schedule") -> dict[int, tuple[float, float]]:
    """The two groups in two columns, as the paper's figures draw them: A on the left, one
    unit between processes, B on the right spread over the same height, both in rank
    order from the top.  A ``{rank: (x, y)}`` layout like NetworkX's.

    >>> from tuwviz.model import schedule
    >>> from tuwviz.problems import make_problem
    >>> pos = bipartite_positions(schedule("allgather", "segmented",
    ...                                    make_problem("allgather", 1, "regular", 1, q=3)))
    >>> pos[1], pos[2], pos[3], pos[0]       # A is the second group here: ranks 1..3
    ((0.0, 1.0), (0.0, 0.0), (0.0, -1.0), (4.0, 0.0))
    """
    a, b = groups_ab(schedule.problem)
    top = (len(a) - 1) / 2
    out = {r: (0.0, top - i) for i, r in enumerate(a)}
    for i, r in enumerate(b):
        out[r] = (_WIDTH, top - 2 * top * i / (len(b) - 1) if len(b) > 1 else 0.0)
    return out


def _other_bytes(schedule: "Schedule") -> list[int]:
    """Bytes each process must end with: the other group's data."""
    pr = schedule.problem
    a, b = groups_ab(pr)
    counts = pr.block_counts()
    k_a, k_b = (sum(counts[r] for r in g) * pr.itemsize for g in (a, b))
    in_a = set(a)
    return [k_b if r in in_a else k_a for r in range(schedule.p)]


def intergroup_frames(schedule: "Schedule", trace: Sequence[Sequence[dict]] | None = None
                      ) -> list[dict]:
    """The steps of an intergroup schedule, as plain data.

    A step is the set of messages starting at the same time when every message takes one
    time unit (``simulate(schedule, alpha=1, beta=0)``): the one-ported model's rounds.

    Parameters
    ----------
    schedule : Schedule
        One of :data:`INTERGROUP_ALGORITHMS` on a two-group problem.
    trace : list of list of dict, optional
        A recorded run (:func:`tuwviz.run.trace.trace`); it must have exactly the schedule's
        messages (trace = model), which are then drawn in the model's order.

    Returns
    -------
    list of dict
        Step 0 is the start.  Keys: ``step``; ``label``; ``transfers``, a list of
        ``[src, dst, bytes, between]`` (``between``: the message crosses the groups);
        ``received``, bytes each process has received so far; ``needed``, what it must
        end with (the other group's data).

    Raises
    ------
    ValueError
        For another schedule, too many processes, or a trace that differs from it.
    """
    _check(schedule, "intergroup_frames")
    if trace is not None and not schedule.matches_trace([list(t) for t in trace]):
        bad = next((r for r in range(schedule.p)
                    if r >= len(trace) or [(e["dir"], e["peer"], e["bytes"]) for e in trace[r]]
                    != schedule.messages(r)), len(trace))
        raise ValueError(f"the trace differs from the {schedule.algorithm} model first at "
                         f"rank {bad}; record it with tuwviz.run.trace.trace for the same problem")
    a, _ = groups_ab(schedule.problem)
    in_a = set(a)
    result = simulate(schedule, 1.0, 0.0)
    needed = _other_bytes(schedule)
    received = [0] * schedule.p
    frames = [{"step": 0, "label": "start: every process holds only its own block",
               "transfers": [], "received": list(received), "needed": needed}]
    by_start: dict[float, list] = {}
    for m in result.messages:
        by_start.setdefault(m.start, []).append(m)
    for k, t in enumerate(sorted(by_start), start=1):
        transfers = []
        for m in by_start[t]:
            between = (m.src in in_a) != (m.dst in in_a)
            transfers.append([m.src, m.dst, m.nbytes, between])
            received[m.dst] += m.nbytes
        n_between = sum(tr[3] for tr in transfers)
        parts = []
        if n_between:
            parts.append(f"{n_between} between the groups")
        if len(transfers) - n_between:
            parts.append(f"{len(transfers) - n_between} inside them")
        frames.append({"step": k, "label": f"step {k} of {len(by_start)}: " + ", ".join(parts),
                       "transfers": transfers, "received": list(received), "needed": needed})
    return frames


def _names(schedule: "Schedule") -> list[str]:
    a, b = groups_ab(schedule.problem)
    names = [""] * schedule.p
    for letter, g in (("a", a), ("b", b)):
        for i, r in enumerate(g):
            names[r] = f"{letter}{i}"
    return names


def _figure(pos, title: str, size: int):
    from bokeh.plotting import figure

    ys = [y for _, y in pos.values()]
    span = max(ys) - min(ys) + 2
    fig = figure(width=size, height=max(260, int(size * span / (_WIDTH + 3.2))), title=title,
                 x_range=(-1.6, _WIDTH + 1.6), y_range=(min(ys) - 1, max(ys) + 1),
                 tools="pan,wheel_zoom,reset,save", toolbar_location="right",
                 match_aspect=False)
    fig.axis.visible = False
    fig.grid.visible = False
    return fig


def _draw_nodes(fig, schedule: "Schedule", pos, texts: list[str]):
    from bokeh.models import ColumnDataSource, LabelSet

    a, _ = groups_ab(schedule.problem)
    in_a = set(a)
    names = _names(schedule)
    ranks = list(range(schedule.p))
    src = ColumnDataSource({
        "x": [pos[r][0] for r in ranks], "y": [pos[r][1] for r in ranks],
        "name": names, "color": [_GROUP_COLORS[0 if r in in_a else 1] for r in ranks],
        "held": texts,
        # the text beside each node, outward: left of A, right of B
        "tx": [pos[r][0] + (-0.45 if r in in_a else 0.45) for r in ranks],
        "align": ["right" if r in in_a else "left" for r in ranks]}, name="nodes")
    fig.scatter("x", "y", source=src, size=26, fill_color="color", line_color="#333333")
    fig.add_layout(LabelSet(x="x", y="y", text="name", source=src, text_align="center",
                            text_baseline="middle", text_font_size="9pt"))
    fig.add_layout(LabelSet(x="tx", y="y", text="held", source=src, text_align="align",
                            text_baseline="middle", text_font_size="8pt",
                            text_color="#1f5fbf"))
    return src


def _fmt(n: int) -> str:
    return f"{n / 1024:.0f} KiB" if n >= 10240 else f"{n} B"


def intergroup_figure(schedule: "Schedule", *, title: str | None = None,
                      size: int = 560) -> "Model":
    """The exchange between the groups as a bipartite graph (Figures 1-3).

    Every message between the groups is an arrow labelled with its bytes and, after a
    colon, its place in the receiver's receive order (Algorithm 2's Section 4.1 order shows
    as 1, 2, ... at each b_j).  Messages inside the groups are left out: they are the
    Allgathers (or, for root gathering, the gathers and broadcasts) the animation shows.

    Returns
    -------
    bokeh.plotting.figure
        Named sources ``"nodes"`` and ``"exchange"`` (``src``, ``dst``, ``bytes``,
        ``order``).

    Examples
    --------
    >>> from tuwviz.model import schedule
    >>> from tuwviz.problems import make_problem
    >>> from tuwviz.viz import sources
    >>> s = schedule("allgather", "segmented", make_problem("allgather", 8, "regular", 6,
    ...                                                      q=3, datatype="byte"))
    >>> ex = sources(intergroup_figure(s))["exchange"].data
    >>> list(zip(ex["src"], ex["dst"], ex["bytes"]))[:4]   # Figure 2: s_0 = {a0, a1, a2}
    [(0, 8, 6), (8, 0, 2), (1, 8, 6), (8, 1, 2)]
    """
    from bokeh.models import Arrow, ColumnDataSource, LabelSet, VeeHead

    _check(schedule, "intergroup_figure")
    pos = bipartite_positions(schedule)
    a, _ = groups_ab(schedule.problem)
    in_a = set(a)
    fig = _figure(pos, title or f"{schedule.collective}/{schedule.algorithm}: the exchange "
                  f"between the groups (bytes: receive order)", size)
    rows = {k: [] for k in ("src", "dst", "bytes", "order", "x0", "y0", "x1", "y1", "xm", "ym",
                            "label", "color")}
    for r in range(schedule.p):  # in r's program order: its receives' order
        order = 0
        for d, peer, n in schedule.messages(r):
            if d != "recv" or (peer in in_a) == (r in in_a):
                continue
            order += 1
            (x0, y0), (x1, y1) = pos[peer], pos[r]
            # shorten to the node circles and offset the label toward the sender
            t0, t1 = 0.09, 0.91
            for key, v in (("src", peer), ("dst", r), ("bytes", n), ("order", order),
                           ("x0", x0 + (x1 - x0) * t0), ("y0", y0 + (y1 - y0) * t0),
                           ("x1", x0 + (x1 - x0) * t1), ("y1", y0 + (y1 - y0) * t1),
                           ("xm", x0 + (x1 - x0) * 0.3), ("ym", y0 + (y1 - y0) * 0.3),
                           ("label", f"{_fmt(n)}:{order}"),
                           ("color", _INTER_COLOR if peer in in_a else _INTRA_COLORS[0])):
                rows[key].append(v)
    # by the process of A, its send first: Figure 2's messages in round order
    def key(i):
        src, dst = rows["src"][i], rows["dst"][i]
        return (src, 0) if src in in_a else (dst, 1)

    idx = sorted(range(len(rows["src"])), key=key)
    rows = {k: [v[i] for i in idx] for k, v in rows.items()}
    src = ColumnDataSource(rows, name="exchange")
    fig.add_layout(Arrow(end=VeeHead(size=8, fill_color="#555555"), source=src,
                         x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                         line_color="color", line_width=1.6, line_alpha=0.8))
    fig.add_layout(LabelSet(x="xm", y="ym", text="label", source=src, text_font_size="7pt",
                            text_color="#444444"))
    _draw_nodes(fig, schedule, pos, ["" for _ in range(schedule.p)])
    return fig


_UPDATE_JS = """
const k = Math.round(slider.value);
const f = frames.data;
const t = transfers.data;
const inter = {x0: [], y0: [], x1: [], y1: [], xm: [], ym: [], label: [], src: [], dst: []};
const intra = {x0: [], y0: [], x1: [], y1: [], cx: [], cy: [], color: [], src: [], dst: []};
for (let i = 0; i < t.frame.length; i++) {
    if (t.frame[i] !== k) continue;
    if (t.between[i]) {
        for (const key of Object.keys(inter)) inter[key].push(t[key][i]);
    } else {
        for (const key of Object.keys(intra)) intra[key].push(t[key][i]);
    }
}
current_inter.data = inter;
current_intra.data = intra;
nodes.data = Object.assign({}, nodes.data,
                           {held: Array.from(f.held[k]), color: Array.from(f.color[k])});
label.text = f.label[k];
"""


def animate_intergroup(schedule: "Schedule", trace: Sequence[Sequence[dict]] | None = None,
                       *, title: str | None = None, size: int = 620,
                       interval_ms: int = 900) -> "Model":
    """Step-by-step animation of an intergroup schedule, from the model or a recorded trace.

    A on the left, B on the right (:func:`bipartite_positions`).  Each step's messages
    between the groups are straight arrows labelled with their bytes; messages inside a
    group are arcs beside it.  Next to each process: bytes received so far of what it must
    end with; it turns gold once it has received that much.  A slider and a play/pause
    button switch steps in the browser (``CustomJS``), so a saved HTML file animates
    offline.

    Returns
    -------
    bokeh.models.Column
        Controls (``"play_button"``, ``"step_slider"``, ``"step_label"``) above the figure.
        Named sources: ``"frames"`` (``label``, ``held``, ``color`` per step),
        ``"transfers"`` (every message with its ``frame``), ``"current_inter"`` and
        ``"current_intra"`` (the shown step's) and ``"nodes"``.

    Examples
    --------
    >>> from tuwviz.model import schedule
    >>> from tuwviz.problems import make_problem
    >>> from tuwviz.viz import sources
    >>> s = schedule("allgatherv", "segmented", make_problem("allgatherv", 6, "arithmetic",
    ...                                                       2, q=3, datatype="byte"))
    >>> src = sources(animate_intergroup(s))
    >>> src["frames"].data["held"][0][:2], src["frames"].data["held"][-1][6]
    (['0/6 B', '0/6 B'], '38/30 B')
    """
    from bokeh.layouts import column
    from bokeh.models import (Arrow, Button, ColumnDataSource, CustomJS, Div, LabelSet,
                              Slider, VeeHead)

    frames = intergroup_frames(schedule, trace)
    pos = bipartite_positions(schedule)
    a, _ = groups_ab(schedule.problem)
    in_a = set(a)

    def held(f):
        return [f"{got}/{need} B" for got, need in zip(f["received"], f["needed"])]

    def color(f):
        return [_DONE_COLOR if got >= need else _GROUP_COLORS[0 if r in in_a else 1]
                for r, (got, need) in enumerate(zip(f["received"], f["needed"]))]

    frame_src = ColumnDataSource({"label": [f["label"] for f in frames],
                                  "held": [held(f) for f in frames],
                                  "color": [color(f) for f in frames]}, name="frames")
    cols = ("frame", "src", "dst", "between", "x0", "y0", "x1", "y1", "xm", "ym", "label",
            "cx", "cy", "color")
    moves = {k: [] for k in cols}
    for i, f in enumerate(frames):
        for src, dst, n, between in f["transfers"]:
            (x0, y0), (x1, y1) = pos[src], pos[dst]
            side = -1.0 if src in in_a else 1.0  # arcs bulge outward
            cx = x0 + side * (0.6 + 0.25 * abs(y1 - y0))
            shrink = 0.09 if between else 0.0
            vals = (i, src, dst, between,
                    x0 + (x1 - x0) * shrink, y0 + (y1 - y0) * shrink,
                    x0 + (x1 - x0) * (1 - shrink), y0 + (y1 - y0) * (1 - shrink),
                    x0 + (x1 - x0) * 0.35, y0 + (y1 - y0) * 0.35, _fmt(n), cx,
                    (y0 + y1) / 2, _INTRA_COLORS[0 if src in in_a else 1])
            for k, v in zip(cols, vals):
                moves[k].append(v)
    transfers = ColumnDataSource(moves, name="transfers")
    current_inter = ColumnDataSource({k: [] for k in ("x0", "y0", "x1", "y1", "xm", "ym",
                                                      "label", "src", "dst")},
                                     name="current_inter")
    current_intra = ColumnDataSource({k: [] for k in ("x0", "y0", "x1", "y1", "cx", "cy",
                                                      "color", "src", "dst")},
                                     name="current_intra")
    names = ("A", "B")
    fig = _figure(pos, title or f"{schedule.collective}/{schedule.algorithm}: "
                  f"{names[0]} ({len(a)}) left, {names[1]} ({schedule.p - len(a)}) right", size)
    fig.quadratic(x0="x0", y0="y0", x1="x1", y1="y1", cx="cx", cy="cy", source=current_intra,
                  line_color="color", line_width=2)
    fig.scatter("x1", "y1", source=current_intra, marker="triangle", size=7, color="color")
    fig.add_layout(Arrow(end=VeeHead(size=9, fill_color=_INTER_COLOR), source=current_inter,
                         x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                         line_color=_INTER_COLOR, line_width=2))
    fig.add_layout(LabelSet(x="xm", y="ym", text="label", source=current_inter,
                            text_font_size="8pt", text_color="#7a3d00"))
    nodes = _draw_nodes(fig, schedule, pos, frame_src.data["held"][0])
    nodes.data["color"] = list(frame_src.data["color"][0])
    last = len(frames) - 1
    slider = Slider(start=0, end=max(last, 1), value=0, step=1, title="step",
                    name="step_slider", disabled=last == 0, width=300)
    button = Button(label="► Play", name="play_button", width=100, disabled=last == 0)
    label = Div(text=frames[0]["label"], name="step_label", width=420)
    slider.js_on_change("value", CustomJS(
        args=dict(frames=frame_src, transfers=transfers, current_inter=current_inter,
                  current_intra=current_intra, nodes=nodes, slider=slider, label=label),
        code=_UPDATE_JS))
    button.js_on_event("button_click", CustomJS(
        args=dict(button=button, slider=slider, interval=int(interval_ms)), code=_PLAY_JS))
    return column(player_row(button, slider, label), fig, name="intergroup_animation")


def improvement_figure(model_rows: Iterable[dict], measured: Iterable[dict] = (), *,
                       measured_label: str = "measured", title: str | None = None,
                       width: int = 760, height: int = 420) -> "Model":
    """Figure 6: the improvement T_old / T_new over the message size, per setting.

    Parameters
    ----------
    model_rows : iterable of dict
        ``setting``, ``bytes`` (message size per process) and ``improvement`` (model), as
        :func:`tuwviz.model.intergroup_cost.improvement_curve` gives them; optionally
        ``eq_5``, drawn as a dashed line (the paper's limit).
    measured : iterable of dict, optional
        The same keys from real runs (:func:`tuwviz.analysis.fits.intergroup_improvement`),
        drawn as diamonds.
    measured_label : str, optional
        Legend text for the measured points: say ranks and oversubscription.

    Returns
    -------
    bokeh.plotting.figure
        Named sources ``"model"`` and ``"measured"`` (``setting``, ``bytes``,
        ``improvement``, ``color``).

    Examples
    --------
    >>> from tuwviz.viz import sources
    >>> fig = improvement_figure([{"setting": 1, "bytes": 64, "improvement": 5.0,
    ...                            "eq_5": 7.0}])
    >>> sources(fig)["model"].data["improvement"]
    [5.0]
    """
    from bokeh.models import ColumnDataSource
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    model_rows = sorted(model_rows, key=lambda r: (r["setting"], r["bytes"]))
    measured = list(measured)
    settings = sorted({r["setting"] for r in model_rows} | {r["setting"] for r in measured})
    colors = {s: Category10_10[i % 10] for i, s in enumerate(settings)}
    fig = figure(width=width, height=height, x_axis_type="log",
                 title=title or "Improvement T_old / T_new over root gathering (Figure 6)",
                 x_axis_label="message size per process (bytes)",
                 y_axis_label="T_old / T_new", tools="pan,wheel_zoom,reset,save,hover")

    def source(rows, name):
        return ColumnDataSource({"setting": [r["setting"] for r in rows],
                                 "bytes": [r["bytes"] for r in rows],
                                 "improvement": [r["improvement"] for r in rows],
                                 "color": [colors[r["setting"]] for r in rows]}, name=name)

    fig.scatter("bytes", "improvement", source=source(model_rows, "model"), color="color",
                size=4)
    for s in settings:
        rows = [r for r in model_rows if r["setting"] == s]
        if not rows:
            continue
        fig.line([r["bytes"] for r in rows], [r["improvement"] for r in rows],
                 color=colors[s], line_width=2, legend_label=f"setting {s}, model")
        limit = rows[-1].get("eq_5")
        if limit is not None and math.isfinite(limit):
            fig.line([rows[0]["bytes"], rows[-1]["bytes"]], [limit, limit], color=colors[s],
                     line_dash="dashed", legend_label=f"setting {s}, Eq. (5)")
    msrc = source(measured, "measured")
    if measured:
        fig.scatter("bytes", "improvement", source=msrc, color="color", marker="diamond",
                    size=11, legend_label=measured_label)
    else:  # keep the named source in the document for callers that look it up
        fig.scatter("bytes", "improvement", source=msrc, size=0)
    if fig.legend:
        fig.legend.click_policy = "hide"
        fig.legend.label_text_font_size = "8pt"
        fig.legend.location = "top_right"
    return fig
