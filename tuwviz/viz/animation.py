"""Round-by-round animation of any schedule, running in the browser.

:func:`animate_schedule` simulates a schedule (by default with ``alpha = 1, beta = 0``, so
every message takes one time unit and the steps are the schedule's rounds), replays the
blocks the messages carry (:meth:`~tuwviz.model.Schedule.holdings`) and draws, for each
step, the ranks with the blocks they hold and the messages of that step highlighted.  A
*step* is the set of messages starting at the same simulated time; step 0 is the state
before any message.

All frames are embedded in the document and a slider and a play/pause button switch
between them with Bokeh ``CustomJS`` callbacks, so the animation works in a saved HTML
file with no Python or server behind it.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> from tuwviz.model import schedule
>>> s = schedule("gatherv", "linear", make_problem("gatherv", 3, "same", 1, root=1))
>>> [(f["step"], f["messages"], f["holdings"][1]) for f in animation_frames(s)]
[(0, [], [1]), (1, [0], [0, 1]), (2, [1], [0, 1, 2])]
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.meta import TreeMeta

from ._common import (
    ACTIVE_COLOR,
    KIND_COLORS,
    NODE_COLOR,
    NODE_RADIUS,
    ROOT_COLOR,
    block_bytes,
    block_counts,
    block_text,
    circular_layout,
    fit_row,
    player_row,
    shorten,
    tree_layout,
)
from ..model.simulate import simulate
from .graph import _MAX_LABELLED, _blank_figure, _title

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from bokeh.model import Model

    from ..model.program import Schedule
    from ..model.simulate import SimResult

__all__ = ["CELL_COLORS", "MAX_FRAME_CELLS", "animate_schedule", "animation_frames"]

#: Colours of the holdings matrix by cell state: 0 not held, 1 held, 2 arrived this step.
CELL_COLORS = ["#eeeeee", "#6a9fd8", ACTIVE_COLOR]

# Above this p the holdings matrix (p x p cells, in every frame) is left out.
_MATRIX_MAX_P = 48
# Most (steps x ranks) an animation embeds: each frame holds every rank's blocks.
MAX_FRAME_CELLS = 400_000

# The browser side: show frame `slider.value`.  Everything it needs is in the sources.
_UPDATE_JS = """
const f = frames.data;
const k = Math.max(0, Math.min(Math.round(slider.value), f.step.length - 1));
const active = new Set(f.active[k]);
const nd = Object.assign({}, nodes.data);
nd.held_text = f.held_text[k];
nd.n_held = f.n_held[k];
nd.line_color = nd.index.map((r) => active.has(r) ? active_color : "#333333");
nd.line_width = nd.index.map((r) => active.has(r) ? 4 : 1.5);
nodes.data = nd;
const M = messages.data;
const cols = Object.keys(M);
const cur = {}, past = {};
for (const c of cols) { cur[c] = []; past[c] = []; }
for (let i = 0; i < M.step.length; i++) {
    const target = M.step[i] == k ? cur : (M.step[i] < k ? past : null);
    if (target === null) continue;
    for (const c of cols) target[c].push(M[c][i]);
}
current.data = cur;
done.data = past;
if (cells !== null) {
    const state = f.cells[k];
    const cd = Object.assign({}, cells.data);
    cd.state = state;
    cd.fill_color = state.map((s) => cell_colors[s]);
    cells.data = cd;
}
label.text = f.label[k];
"""

_PLAY_JS = """
const key = "__tuwviz_timer_" + button.id;
const stop = () => { clearInterval(window[key]); window[key] = null; button.label = "► Play"; };
if (window[key]) { stop(); return; }
if (slider.value >= slider.end) { slider.value = slider.start; }
button.label = "❚❚ Pause";
window[key] = setInterval(() => {
    if (slider.value >= slider.end) { stop(); return; }
    slider.value = slider.value + 1;
}, interval);
"""


def animation_frames(schedule: "Schedule", result: "SimResult | None" = None,
                     alpha: float = 1.0, beta: float = 0.0) -> list[dict]:
    """The frames of :func:`animate_schedule`, as plain Python data.

    Parameters
    ----------
    schedule : Schedule
        Any model schedule.
    result : SimResult, optional
        Its simulation; by default ``simulate(schedule, alpha, beta)``.
    alpha, beta : float, optional
        Cost parameters when `result` is not given.

    Returns
    -------
    list of dict
        One per step (step 0: before any message), with keys ``step``, ``time`` (start
        time of the step's messages; None for step 0), ``messages`` (indices into
        ``result.messages``), ``carried`` (blocks per message, None if unknown),
        ``holdings`` (sorted block list per rank after the step), ``new`` (blocks each
        rank received in this step) and ``active`` (ranks sending or receiving in it).
    """
    if result is None:
        result = simulate(schedule, alpha, beta)
    steps = schedule.holdings(result)
    frames = []
    before = steps[0].holdings
    as_list: dict[int, list[int]] = {}  # unchanged ranks share their frozenset, and list
    for st in steps:
        active = sorted({r for i in st.messages
                         for r in (result.messages[i].src, result.messages[i].dst)})
        frames.append({
            "step": st.index,
            "time": st.time,
            "messages": list(st.messages),
            "carried": [None if c is None else list(c) for c in st.carried],
            "holdings": [as_list[id(h)] if id(h) in as_list else
                         as_list.setdefault(id(h), sorted(h)) for h in st.holdings],
            "new": [[] if h is b else sorted(h - b) for h, b in zip(st.holdings, before)],
            "active": active,
        })
        before = st.holdings
    return frames


def animate_schedule(schedule: "Schedule", alpha: float = 1.0, beta: float = 0.0, *,
                     result: "SimResult | None" = None, layout: dict | None = None,
                     interval_ms: int = 900, title: str | None = None,
                     matrix: bool | None = None) -> "Model":
    """A round-by-round animation of `schedule` with a slider and play/pause.

    Each rank shows, under its number, which blocks it holds after the current step; the
    step's messages are drawn as arrows (hover: sender, receiver, bytes, kind, blocks,
    start and end time), earlier messages faintly.  Next to the graph a matrix of ranks
    (rows) and blocks (columns) shows the holdings, blocks that just arrived highlighted,
    blocks of zero bytes hatched.

    Parameters
    ----------
    schedule : Schedule
        Any model schedule (gather, scatter, ring, circulant ...).
    alpha, beta : float, optional
        Cost parameters of the simulation that orders the messages.  The defaults (1, 0)
        make steps the schedule's rounds; with ``beta > 0`` long messages start later.
    result : SimResult, optional
        Use this simulation instead of simulating.
    layout : dict, optional
        ``{rank: (x, y)}``; default: the tree layout of a :class:`~tuwviz.model.meta.TreeMeta`,
        else ranks on a circle.
    interval_ms : int, optional
        Time per step when playing.
    title : str, optional
        Title of the graph.
    matrix : bool, optional
        Draw the holdings matrix (default: for ``p <= 48``).

    Raises
    ------
    ValueError
        If steps times ranks exceeds :data:`MAX_FRAME_CELLS` (every frame embeds every
        rank's holdings; e.g. the linear gather at p = 6400 has 6400 steps).

    Returns
    -------
    bokeh.models.Column
        Controls (play/pause button, step slider, a text saying what happens) above the
        graph and the matrix.  Named sources: ``"frames"`` (one row per step: ``step``,
        ``time``, ``msgs``, ``active``, ``held_text``, ``n_held``, ``cells``, ``label``),
        ``"messages"`` (every message with its ``step``), ``"current"`` and ``"done"``
        (the messages of the shown step and of earlier steps: what the browser draws),
        ``"nodes"`` and ``"cells"``.  The slider is named ``"step_slider"``, the button
        ``"play_button"``.
    """
    from bokeh.layouts import column
    from bokeh.models import Button, ColumnDataSource, CustomJS, Div, Slider

    if result is None:
        result = simulate(schedule, alpha, beta)
    nsteps = len({m.start for m in result.messages}) + 1
    if nsteps * schedule.p > MAX_FRAME_CELLS:
        raise ValueError(
            f"an animation of {nsteps} steps x {schedule.p} ranks would embed "
            f"{nsteps * schedule.p} rank states (at most {MAX_FRAME_CELLS}); animate a smaller "
            "p, or draw schedule_figure / timeline_figure instead")
    frames = animation_frames(schedule, result)
    p = schedule.p
    pos = dict(layout) if layout is not None else (
        tree_layout(schedule.meta.parent) if isinstance(schedule.meta, TreeMeta)
        else circular_layout(p))
    pos = {r: (float(x), float(y)) for r, (x, y) in pos.items()}
    nblocks = _block_count(schedule, frames)
    matrix = p <= _MATRIX_MAX_P if matrix is None else matrix

    msgs = ColumnDataSource(_message_columns(schedule, result, frames, pos), name="messages")
    current = ColumnDataSource({k: [] for k in msgs.data}, name="current")
    done = ColumnDataSource({k: [] for k in msgs.data}, name="done")
    nodes = ColumnDataSource(_node_columns(schedule, pos, frames[0]), name="nodes")
    frame_src = ColumnDataSource(_frame_columns(schedule, result, frames, nblocks, matrix),
                                 name="frames")
    cells = ColumnDataSource(_cell_columns(schedule, frames[0], nblocks), name="cells") \
        if matrix else None

    graph = _graph_figure(schedule, pos, nodes, msgs, current, done, title)
    last = len(frames) - 1
    slider = Slider(start=0, end=max(last, 1), value=0, step=1, title="step",
                    name="step_slider", disabled=last == 0, width=360)
    button = Button(label="► Play", name="play_button", width=100, disabled=last == 0)
    label = Div(text=frame_src.data["label"][0], name="step_label", width=520)
    update = CustomJS(args=dict(frames=frame_src, nodes=nodes, messages=msgs, current=current,
                                done=done, cells=cells, slider=slider, label=label,
                                active_color=ACTIVE_COLOR, cell_colors=CELL_COLORS),
                      code=_UPDATE_JS)
    slider.js_on_change("value", update)
    button.js_on_event("button_click", CustomJS(
        args=dict(button=button, slider=slider, interval=int(interval_ms)), code=_PLAY_JS))
    panels = [graph]
    if matrix:
        panels.append(_matrix_figure(schedule, cells, nblocks, graph.height))
    return column(player_row(button, slider, label), fit_row(*panels), name="animation")


# -- data -------------------------------------------------------------------------------------
def _block_count(schedule: "Schedule", frames: list[dict]) -> int:
    """Number of blocks: p, or more if a precondition or message names higher blocks."""
    highest = max((b for f in frames for h in f["holdings"] for b in h), default=-1)
    return max(schedule.p, highest + 1)


def _message_columns(schedule, result, frames, pos) -> dict[str, list]:
    ops = schedule.message_ops(result)
    step_of, carried_of = {}, {}
    for f in frames:
        for i, c in zip(f["messages"], f["carried"]):
            step_of[i], carried_of[i] = f["step"], c
    pairs = {(m.src, m.dst) for m in result.messages}
    cols: dict[str, list] = {k: [] for k in (
        "id", "src", "dst", "nbytes", "tag", "kind", "blocks", "start", "end", "step",
        "x0", "y0", "x1", "y1", "lx", "ly", "label", "color")}
    for i, m in enumerate(result.messages):
        (xa, ya), (xb, yb) = pos[m.src], pos[m.dst]
        offset = 0.07 if (m.dst, m.src) in pairs else 0.0
        x0, y0, x1, y1 = shorten(xa, ya, xb, yb, NODE_RADIUS + 0.04, NODE_RADIUS + 0.04, offset)
        kind = ops[i][1]
        for key, value in (("id", i), ("src", m.src), ("dst", m.dst), ("nbytes", m.nbytes),
                           ("tag", m.tag), ("kind", kind),
                           ("blocks", block_text(carried_of[i])), ("start", m.start),
                           ("end", m.end), ("step", step_of[i]), ("x0", x0), ("y0", y0),
                           # labels 40% along: the two of a two-way pair do not overlap
                           ("x1", x1), ("y1", y1), ("lx", x0 + 0.4 * (x1 - x0)),
                           ("ly", y0 + 0.4 * (y1 - y0)),
                           ("label", _message_label(m.nbytes, carried_of[i])),
                           ("color", KIND_COLORS.get(kind, KIND_COLORS["data"]))):
            cols[key].append(value)
    return cols


def _message_label(nbytes: int, carried) -> str:
    """``40 B`` or, when the blocks are known, ``40 B {0-3}``."""
    if not carried:
        return f"{nbytes} B"
    return f"{nbytes} B " + _held_text(carried)


def _node_columns(schedule, pos, frame0) -> dict[str, list]:
    counts = block_counts(schedule)
    root = schedule.root if (schedule.problem is not None or "root" in schedule.meta) else None
    ranks = list(range(schedule.p))
    return {
        "index": ranks,
        "x": [pos[r][0] for r in ranks],
        "y": [pos[r][1] for r in ranks],
        "y_below": [pos[r][1] - NODE_RADIUS for r in ranks],
        "label": [str(r) for r in ranks],
        "m_label": ["" if counts is None else f"m={counts[r]}" for r in ranks],
        "fill_color": [ROOT_COLOR if r == root else NODE_COLOR for r in ranks],
        "line_color": ["#333333"] * len(ranks),
        "line_width": [1.5] * len(ranks),
        "held_text": [_held_text(h) for h in frame0["holdings"]],
        "n_held": [len(h) for h in frame0["holdings"]],
    }


def _held_text(blocks: list[int]) -> str:
    return "{" + block_text(blocks).replace("-", "–") + "}" if blocks else "{}"


def _frame_columns(schedule, result, frames, nblocks: int, matrix: bool) -> dict[str, list]:
    last = len(frames) - 1
    cols: dict[str, list] = {k: [] for k in (
        "step", "time", "msgs", "active", "held_text", "n_held", "cells", "label")}
    texts: dict[int, str] = {}  # by list identity: unchanged ranks share their list
    for f in frames:
        cols["step"].append(f["step"])
        cols["time"].append(float("nan") if f["time"] is None else f["time"])
        cols["msgs"].append(f["messages"])
        cols["active"].append(f["active"])
        cols["held_text"].append([texts[id(h)] if id(h) in texts else
                                  texts.setdefault(id(h), _held_text(h))
                                  for h in f["holdings"]])
        cols["n_held"].append([len(h) for h in f["holdings"]])
        cols["cells"].append(_cell_states(f, nblocks) if matrix else [])
        cols["label"].append(_frame_label(f, last, result))
    return cols


def _cell_states(frame: dict, nblocks: int) -> list[int]:
    """Row-major rank x block states: 0 not held, 1 held, 2 arrived in this step."""
    out = []
    for held, new in zip(frame["holdings"], frame["new"]):
        held, new = set(held), set(new)
        out.extend(2 if b in new else 1 if b in held else 0 for b in range(nblocks))
    return out


def _frame_label(f: dict, last: int, result) -> str:
    head = f"<b>step {f['step']} of {last}</b>"
    if f["step"] == 0:
        return head + ": before any message (each rank holds its initial blocks)"
    n = len(f["messages"])
    nbytes = sum(result.messages[i].nbytes for i in f["messages"])
    return (head + f": t = {f['time']:g}, {n} message{'s' if n != 1 else ''}, "
            f"{nbytes} B (hover over an arrow for details)")


def _cell_columns(schedule, frame0, nblocks: int) -> dict[str, list]:
    sizes = block_bytes(schedule)
    state = _cell_states(frame0, nblocks)
    cols: dict[str, list] = {k: [] for k in ("rank", "block", "x", "y", "state", "fill_color",
                                            "hatch", "block_bytes")}
    for r in range(schedule.p):
        for b in range(nblocks):
            s = state[r * nblocks + b]
            size = None if sizes is None or b >= len(sizes) else sizes[b]
            cols["rank"].append(r)
            cols["block"].append(b)
            cols["x"].append(b)
            cols["y"].append(r)
            cols["state"].append(s)
            cols["fill_color"].append(CELL_COLORS[s])
            cols["hatch"].append("/" if size == 0 else " ")
            cols["block_bytes"].append(-1 if size is None else size)
    return cols


# -- figures ----------------------------------------------------------------------------------
def _graph_figure(schedule, pos, nodes, msgs, current, done, title):
    from bokeh.models import Arrow, Circle, HoverTool, LabelSet, Segment, VeeHead

    fig = _blank_figure(pos, {}, title or _title(schedule), None, None, below_px=52)
    seg = dict(x0="x0", y0="y0", x1="x1", y1="y1")
    fig.add_glyph(msgs, Segment(**seg, line_color="#999999", line_alpha=0.10, line_width=1))
    fig.add_glyph(done, Segment(**seg, line_color="#777777", line_alpha=0.45, line_width=1.5))
    cur = fig.add_glyph(current, Segment(**seg, line_color="color", line_alpha=0.95,
                                         line_width=4))
    fig.add_layout(Arrow(source=current, x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                         line_alpha=0.0, end=VeeHead(size=13, fill_color="color",
                                                     line_color="color")))
    fig.add_layout(LabelSet(source=current, x="lx", y="ly", text="label", text_align="center",
                            text_baseline="middle", text_font_size="8pt", text_color="color",
                            background_fill_color="white", background_fill_alpha=0.85))
    node = fig.add_glyph(nodes, Circle(x="x", y="y", radius=NODE_RADIUS,
                                       fill_color="fill_color", line_color="line_color",
                                       line_width="line_width"))
    fig.add_layout(LabelSet(source=nodes, x="x", y="y", text="label", text_align="center",
                            text_baseline="middle", text_font_size="11pt",
                            text_font_style="bold"))
    if schedule.p <= _MAX_LABELLED:
        fig.add_layout(LabelSet(source=nodes, x="x", y="y_below", text="m_label",
                                text_align="center", text_baseline="top", y_offset=-2,
                                text_font_size="8pt", text_color="#555555"))
        fig.add_layout(LabelSet(source=nodes, x="x", y="y_below", text="held_text",
                                text_align="center", text_baseline="top", y_offset=-14,
                                text_font_size="8pt", text_color="#1f5fbf"))
    fig.add_tools(HoverTool(renderers=[cur], line_policy="interp", tooltips=[
        ("message", "@src → @dst"), ("bytes", "@nbytes"), ("kind", "@kind"),
        ("blocks", "@blocks"), ("time", "@start → @end")]))
    fig.add_tools(HoverTool(renderers=[node], tooltips=[
        ("rank", "@index"), ("block", "@m_label"), ("holds", "@held_text"),
        ("blocks held", "@n_held")]))
    return fig


def _matrix_figure(schedule, cells, nblocks: int, height: int):
    from bokeh.models import HoverTool, Rect
    from bokeh.plotting import figure

    p = schedule.p
    size = max(12, min(26, int((height - 80) / max(p, 1))))
    fig = figure(title="blocks held (row: rank, column: block)",
                 width=max(size * nblocks + 90, 280),
                 height=size * p + 80, x_range=(-0.5, nblocks - 0.5), y_range=(p - 0.5, -0.5),
                 tools="reset,save", toolbar_location=None)
    fig.add_glyph(cells, Rect(x="x", y="y", width=0.92, height=0.92, fill_color="fill_color",
                              line_color="#bbbbbb", hatch_pattern="hatch", hatch_color="#999999",
                              hatch_alpha=0.6, hatch_scale=6))
    fig.xaxis.axis_label = "block"
    fig.yaxis.axis_label = "rank"
    if nblocks <= 32:
        fig.xaxis.ticker = list(range(nblocks))
    if p <= 32:
        fig.yaxis.ticker = list(range(p))
    fig.grid.visible = False
    fig.add_tools(HoverTool(tooltips=[("rank", "@rank"), ("block", "@block"),
                                      ("block bytes", "@block_bytes"),
                                      ("state", "@state (0 not held, 1 held, 2 just arrived)")]))
    return fig
