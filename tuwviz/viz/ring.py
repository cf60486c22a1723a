"""The ring Allgatherv algorithms drawn and animated: processes on a ring, pieces in a pipeline.

Träff, Ripke, Siebert, Balaji, Thakur, Gropp, *A pipelined algorithm for large, irregular
all-gather problems*, IJHPCA 2010.  :func:`ring_figure` draws a schedule of
:mod:`tuwviz.model.allgatherv` as the paper's Figures 1 and 2 do; :func:`ring_frames` replays
it round by round as plain data; :func:`animate_ring` animates it in the browser.

Pieces
------
Both rings are drawn in *pieces*, the pipelined ring's virtual blocks: piece ``v`` is
``[owner rank, offset_bytes, nbytes]`` (``meta.pieces``), numbered in ring order, the
pieces of one owner consecutive.  The linear ring is the pipelined ring with
``B = max m_i``: one piece per process, its whole block.  A piece is drawn in a slot of
``B`` bytes, filled in proportion to its bytes, so partial pieces look partial (Figure 2)
and the pieces of processes without data (``m_i = 0``) are empty outlines.

Every process knows every ``m_i`` (the ``recvcounts``), so it holds the empty pieces from
the start: the pipelined ring never sends them; the linear ring does, as messages of zero
bytes that still cost a start-up each (Section 2.1).

Examples
--------
>>> from tuwviz.problems import Problem
>>> from tuwviz.model import schedule
>>> pr = Problem("allgatherv", 3, 0, (4, 0, 2), datatype="byte")
>>> s = schedule("allgatherv", "pipelined", pr, block_bytes=2)
>>> frames = ring_frames(s)
>>> len(frames), frames[1]["transfers"]    # [src, dst, piece, owner, nbytes]
(4, [[0, 1, 1, 0, 2], [2, 0, 3, 2, 2]])
>>> frames[0]["held"][1], frames[-1]["held"][1]    # bytes of each piece rank 1 holds
([0, 0, 0, 0], [2, 2, 0, 2])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from ..model.meta import PipelinedRingMeta, RingMeta

from ._common import (ACTIVE_COLOR, KIND_COLORS, NODE_COLOR, NODE_RADIUS, circular_layout, fit_row,
                      player_row, shorten)
from .animation import _PLAY_JS, CELL_COLORS
from ..model.program import Send, SendRecv
from .graph import _blank_figure
from ..model.simulate import simulate

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from bokeh.model import Model
    from bokeh.plotting import figure as Figure

    from ..model.program import Schedule
    from ..model.simulate import SimResult

__all__ = ["MAX_RING_CELLS", "RING_ALGORITHMS", "animate_ring", "ring_figure", "ring_frames"]

#: The allgatherv schedules these figures draw.
RING_ALGORITHMS = ("ring", "pipelined")

#: Most (steps x processes x pieces) a replay holds: every frame has every rank's pieces.
MAX_RING_CELLS = 400_000

# Gap between the owners' groups of pieces in the holdings grid, in slots.
_GROUP_GAP = 0.4
# Piece labels on the grid's x axis up to this many pieces, owner labels above.
_MAX_PIECE_TICKS = 48
# Colours of SMP nodes (Figure 1), cycled.
_NODE_PALETTE = ["#dce8f7", "#fde2c4", "#d9f0d3", "#f4d3e6", "#e8e0f5", "#fff4c2",
                 "#d4f1f0", "#f2d7d5", "#e6e6e6", "#e3f0c8"]

# The browser side: show frame `slider.value` (same pattern as animation.py).
_UPDATE_JS = """
const f = frames.data;
const k = Math.max(0, Math.min(Math.round(slider.value), f.step.length - 1));
const T = transfers.data;
const cols = Object.keys(T);
const cur = {};
for (const c of cols) { cur[c] = []; }
for (let i = 0; i < T.step.length; i++) {
    if (T.step[i] != k) continue;
    for (const c of cols) cur[c].push(T[c][i]);
}
current.data = cur;
const state = Array.from(f.cells[k]);
const cd = Object.assign({}, cells.data);
cd.state = state;
cd.fill_color = state.map((s) => cell_colors[s]);
cells.data = cd;
const active = new Set(f.active[k]);
const nd = Object.assign({}, nodes.data);
nd.held_text = f.held_text[k];
nd.line_color = nd.rank.map((r) => active.has(r) ? active_color : "#333333");
nd.line_width = nd.rank.map((r) => active.has(r) ? 4 : 1.5);
nodes.data = nd;
label.text = f.label[k];
"""


@dataclass(frozen=True)
class _Ring:
    """What the figures need of a ring schedule, the same for both algorithms."""

    order: list[int]           # rank at each ring position
    slot_bytes: int            # B: a piece's slot
    pieces: list[list[int]]    # [owner, offset_bytes, nbytes] per piece
    piece_pos: list[int]       # ring position of each piece's owner
    piece_index: list[int]     # index of the piece among its owner's
    labels: list[str]          # "3.1" (rank 3's piece 1), or "3" for the linear ring
    transfers: list[list[int]]  # [slot, src, dst, piece], sorted
    nslots: int

    @property
    def sizes(self) -> list[int]:
        return [pc[2] for pc in self.pieces]


def _ring_info(schedule: "Schedule", who: str) -> _Ring:
    """The pieces and transfers of a ring or pipelined schedule; ValueError for others."""
    if schedule.collective != "allgatherv" or schedule.algorithm not in RING_ALGORITHMS:
        raise ValueError(
            f"{who} draws the allgatherv schedules {', '.join(RING_ALGORITHMS)}, got "
            f"{schedule.collective}/{schedule.algorithm}; draw other schedules with "
            "animate_schedule or schedule_figure")
    if schedule.problem is None or not isinstance(schedule.meta, RingMeta):
        raise ValueError(f"{who} needs a schedule built by tuwviz.model.schedule (with its "
                         "problem and a RingMeta)")
    order = list(schedule.meta.ring)
    if isinstance(schedule.meta, PipelinedRingMeta):
        return _pipelined_info(schedule, order)
    return _linear_info(schedule, order)


def _pipelined_info(schedule: "Schedule", order: list[int]) -> _Ring:
    meta: PipelinedRingMeta = schedule.meta
    pos, index = [], []
    for k, nb in enumerate(meta.nblocks):
        pos += [k] * nb
        index += list(range(nb))
    labels = [f"{meta.pieces[v][0]}.{j}" for v, j in enumerate(index)]
    transfers = sorted(list(t) for t in meta.transfers)
    return _Ring(order, int(meta.block_bytes), [list(pc) for pc in meta.pieces], pos,
                 index, labels, transfers, _count_slots(transfers))


def _linear_info(schedule: "Schedule", order: list[int]) -> _Ring:
    """The linear ring as pieces: one per process, its whole block, numbered in ring order."""
    nbytes = [schedule.problem.nbytes(r) for r in order]
    position = {r: k for k, r in enumerate(order)}
    transfers = []
    for rank, program in enumerate(schedule.programs):
        for op in program:
            peer, blocks = ((op.send_peer, op.send_blocks) if type(op) is SendRecv else
                            (op.peer, op.blocks) if type(op) is Send else (None, None))
            if peer is not None:  # blocks is the owner's rank (range(owner, owner + 1))
                transfers.append([op.tag, rank, peer, position[blocks.start]])
    transfers.sort()
    p = len(order)
    return _Ring(order, max(max(nbytes, default=0), 1), [[r, 0, n] for r, n in zip(order, nbytes)],
                 list(range(p)), [0] * p, [str(r) for r in order], transfers,
                 _count_slots(transfers))


def _count_slots(transfers: list[list[int]]) -> int:
    return 1 + max((t[0] for t in transfers), default=-1)


def _check_size(info: _Ring, p: int, who: str) -> None:
    cells = (info.nslots + 1) * p * len(info.pieces)
    if cells > MAX_RING_CELLS:
        raise ValueError(
            f"{who}: {info.nslots + 1} steps x {p} processes x {len(info.pieces)} pieces = "
            f"{cells} cells, more than MAX_RING_CELLS = {MAX_RING_CELLS}; use a larger "
            "block_bytes (fewer pieces) or a smaller p, or draw timeline_figure instead")


# -- frames -----------------------------------------------------------------------------------
def ring_frames(schedule: "Schedule", result: "SimResult | None" = None) -> list[dict]:
    """Round-by-round replay of a ring or pipelined Allgatherv schedule, as plain data.

    Step 0 is the initial state; step ``s + 1`` is the state after slot ``s`` of the
    pipelined ring (a round in time: its messages happen together) or after round ``s`` of
    the linear ring.

    Parameters
    ----------
    schedule : Schedule
        ``schedule("allgatherv", "ring" | "pipelined", problem, ...)``.
    result : SimResult, optional
        Its simulation, to give each step its time span.

    Returns
    -------
    list of dict
        One per step, with ``step``, ``slot`` (None for step 0), ``start`` and ``end``
        (earliest start and latest end of the step's messages in `result`; None without
        it), ``transfers`` (``[src, dst, piece, owner, nbytes]`` of every message of the
        step), ``held`` (per rank, by rank: bytes held of every piece; a piece is held when
        that equals its bytes), ``new`` (per rank: pieces received in the step) and
        ``active`` (ranks sending or receiving in it).  Unchanged rows are shared between
        frames: do not modify them.

    Raises
    ------
    ValueError
        For another schedule, a `result` of another schedule, or more than
        :data:`MAX_RING_CELLS` steps x processes x pieces.

    Examples
    --------
    The linear ring sends the empty block of rank 1 too, as a message of 0 bytes:

    >>> from tuwviz.problems import Problem
    >>> from tuwviz.model import schedule
    >>> s = schedule("allgatherv", "ring", Problem("allgatherv", 3, 0, (4, 0, 2), datatype="byte"))
    >>> ring_frames(s)[1]["transfers"]
    [[0, 1, 0, 0, 4], [1, 2, 1, 1, 0], [2, 0, 2, 2, 2]]
    """
    info = _ring_info(schedule, "ring_frames")
    p = schedule.p
    _check_size(info, p, "ring_frames")
    sizes = info.sizes
    spans = _slot_spans(info, result)
    held = [[n if (owner == r or n == 0) else 0 for owner, _, n in info.pieces]
            for r in range(p)]
    frames = [{"step": 0, "slot": None, "start": None, "end": None, "transfers": [],
               "held": held, "new": [[] for _ in range(p)], "active": []}]
    by_slot: list[list[list[int]]] = [[] for _ in range(info.nslots)]
    for slot, src, dst, v in info.transfers:
        by_slot[slot].append([src, dst, v, info.pieces[v][0], sizes[v]])
    for slot, moves in enumerate(by_slot):
        held, new = list(held), [[] for _ in range(p)]
        for _, dst, v, _, n in moves:
            if not new[dst]:
                held[dst] = list(held[dst])  # copy on write: unchanged rows stay shared
            held[dst][v] = n
            new[dst].append(v)
        start, end = spans[slot] if spans is not None else (None, None)
        frames.append({"step": slot + 1, "slot": slot, "start": start, "end": end,
                       "transfers": moves, "held": held, "new": new,
                       "active": sorted({r for m in moves for r in m[:2]})})
    return frames


def _slot_spans(info: _Ring, result: "SimResult | None") -> list[tuple[float, float]] | None:
    """(earliest start, latest end) of each slot's messages in `result`."""
    if result is None:
        return None
    by_key = {(m.tag, m.src, m.dst): m for m in result.messages}
    if set(by_key) != {tuple(t[:3]) for t in info.transfers}:
        raise ValueError("result is not a simulation of this schedule: its messages do not "
                         "match the schedule's transfers")
    spans = [(float("inf"), float("-inf"))] * info.nslots
    for slot, src, dst, _ in info.transfers:
        m = by_key[slot, src, dst]
        a, b = spans[slot]
        spans[slot] = (min(a, m.start), max(b, m.end))
    return spans


# -- shared drawing ---------------------------------------------------------------------------
def _positions(p: int) -> list[tuple[float, float]]:
    """Coordinates of the ring positions: position 0 on top, clockwise (Figures 1, 2)."""
    layout = circular_layout(p)
    return [layout[k] for k in range(p)]


def _radial(x: float, y: float, by: float) -> tuple[float, float]:
    """The point (x, y) moved `by` away from the centre."""
    r = (x * x + y * y) ** 0.5
    if r < 1e-9:
        return x, y
    return x * (r + by) / r, y * (r + by) / r


def _node_colors(p: int, nodes: Sequence[int] | None) -> list[str]:
    if nodes is None:
        return [NODE_COLOR] * p
    if len(nodes) != p:
        raise ValueError(f"nodes gives {len(nodes)} node numbers for p={p} processes")
    return [_NODE_PALETTE[int(n) % len(_NODE_PALETTE)] for n in nodes]


def _node_columns(schedule: "Schedule", info: _Ring, xy: list, nodes) -> dict[str, list]:
    """One row per process (in ring order): where it is drawn and what it contributes."""
    pr, p = schedule.problem, schedule.p
    colors = _node_colors(p, nodes)
    cols: dict[str, list] = {k: [] for k in (
        "rank", "position", "x", "y", "lx", "ly", "align", "dy", "label", "m", "nbytes", "m_label",
        "npieces", "node", "fill_color", "line_color", "line_width")}
    npieces = [info.piece_pos.count(k) for k in range(p)]
    for k, rank in enumerate(info.order):
        x, y = xy[k]
        lx, ly = _radial(x, y, NODE_RADIUS + 0.12)
        # labels beside the circle lean away from it, so they never cover it
        align = "left" if x > 0.3 else "right" if x < -0.3 else "center"
        for key, value in (("rank", rank), ("position", k), ("x", x), ("y", y), ("lx", lx),
                           ("ly", ly), ("align", align),
                           # a second label line goes up above the top process
                           ("dy", 12 if align == "center" and y > 0 else -12),
                           ("label", str(rank)),
                           ("m", pr.counts[rank]),
                           ("nbytes", pr.nbytes(rank)), ("m_label", f"m={pr.counts[rank]}"),
                           ("npieces", npieces[k]),
                           ("node", -1 if nodes is None else int(nodes[rank])),
                           ("fill_color", colors[rank]), ("line_color", "#333333"),
                           ("line_width", 1.5)):
            cols[key].append(value)
    return cols


def _edge_columns(info: _Ring, xy: list, nodes) -> dict[str, list]:
    """The ring's arrows, position k to k + 1; off-node ones dark when `nodes` is given."""
    p = len(info.order)
    cols: dict[str, list] = {k: [] for k in ("src", "dst", "x0", "y0", "x1", "y1", "color",
                                             "between_nodes")}
    for k in range(p if p > 1 else 0):
        src, dst = info.order[k], info.order[(k + 1) % p]
        offset = 0.07 if p == 2 else 0.0  # the two arrows of a 2-ring side by side
        x0, y0, x1, y1 = shorten(*xy[k], *xy[(k + 1) % p], NODE_RADIUS + 0.04,
                                 NODE_RADIUS + 0.04, offset)
        between = nodes is not None and nodes[src] != nodes[dst]
        for key, value in (("src", src), ("dst", dst), ("x0", x0), ("y0", y0), ("x1", x1),
                           ("y1", y1), ("between_nodes", between),
                           ("color", KIND_COLORS["exchange"] if between or nodes is None
                            else KIND_COLORS["info"])):
            cols[key].append(value)
    return cols


def _draw_ring(fig: "Figure", nodes_src, edges_src, line_alpha: float = 0.8) -> None:
    """Arrows to the successors, then the processes with rank and ``m_i`` labels."""
    from bokeh.models import Arrow, Circle, HoverTool, LabelSet, NormalHead

    fig.add_layout(Arrow(source=edges_src, x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                         line_color="color", line_width=1.5, line_alpha=line_alpha,
                         end=NormalHead(size=8, fill_color="color", line_color="color",
                                        fill_alpha=line_alpha, line_alpha=line_alpha)))
    node = fig.add_glyph(nodes_src, Circle(x="x", y="y", radius=NODE_RADIUS,
                                           fill_color="fill_color", line_color="line_color",
                                           line_width="line_width"))
    fig.add_layout(LabelSet(source=nodes_src, x="x", y="y", text="label", text_align="center",
                            text_baseline="middle", text_font_size="11pt",
                            text_font_style="bold"))
    fig.add_layout(LabelSet(source=nodes_src, x="lx", y="ly", text="m_label",
                            text_align="align", text_baseline="middle", text_font_size="8pt",
                            text_color="#555555"))
    fig.add_tools(HoverTool(renderers=[node], tooltips=[
        ("rank", "@rank (ring position @position)"), ("m", "@m elements, @nbytes bytes"),
        ("pieces", "@npieces"), ("node", "@node")]))


def _title(schedule: "Schedule", info: _Ring) -> str:
    pr = schedule.problem
    head = f"p={schedule.p}, {pr.distribution} c={pr.b}"
    if schedule.algorithm == "ring":
        return f"linear ring: {head}, {info.nslots} rounds"
    text = f"pipelined ring: {head}, B={info.slot_bytes} B, {len(info.pieces)} pieces, " \
           f"{info.nslots} rounds"
    if info.nslots != schedule.meta.rounds:  # Section 2.3: empty pieces save rounds
        text += f" (Eq. (1): {schedule.meta.rounds})"
    return text


# -- static figure ----------------------------------------------------------------------------
def ring_figure(schedule: "Schedule", *, title: str | None = None, width: int | None = None,
                height: int | None = None, nodes: Sequence[int] | None = None) -> "Figure":
    """The ring of a ring or pipelined Allgatherv schedule, as in the paper's Figures 1 and 2.

    The processes sit on a circle in ring order (position 0 on top, clockwise), each
    labelled with its rank and ``m_i``, arrows from each to its successor.  Inside the
    circle each process's pieces form a small bar: one slot of ``B`` bytes per piece,
    filled in proportion to its bytes (Figure 2: partial pieces partially coloured; a
    process without data is one empty outline).  For the linear ring every process has
    one piece, its whole block, in a slot of ``max m_i`` bytes.

    Parameters
    ----------
    schedule : Schedule
        ``schedule("allgatherv", "ring" | "pipelined", problem, ...)``.
    title : str, optional
        Default: algorithm, p, distribution, B and rounds.
    width, height : int, optional
        Size in pixels (default: from p).
    nodes : sequence of int, optional
        SMP node of every rank (by rank): processes are coloured by node and arrows
        between nodes drawn dark, those within a node grey (Figure 1).

    Returns
    -------
    bokeh.plotting.figure
        Named sources ``"nodes"`` (one row per process in ring order: ``rank``,
        ``position``, ``m``, ``nbytes``, ``npieces``, ``node``, ...), ``"edges"`` (the
        arrows: ``src``, ``dst``, ``between_nodes``) and ``"pieces"`` (one row per piece:
        ``piece``, ``owner``, ``index``, ``nbytes``, ``fill``: ``nbytes / B``).

    Raises
    ------
    ValueError
        For other schedules, or a `nodes` list of the wrong length.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> from tuwviz.model import schedule
    >>> s = schedule("allgatherv", "pipelined", make_problem("allgatherv", 4, "spike", 12,
    ...              datatype="byte"), block_bytes=4)
    >>> from tuwviz.viz import sources
    >>> sources(ring_figure(s))["pieces"].data["fill"]
    [1.0, 0.5, 0.5, 0.5, 0.5]
    """
    from bokeh.models import ColumnDataSource

    info = _ring_info(schedule, "ring_figure")
    xy = _positions(schedule.p)
    nodes_src = ColumnDataSource(_node_columns(schedule, info, xy, nodes), name="nodes")
    edges_src = ColumnDataSource(_edge_columns(info, xy, nodes), name="edges")
    pieces_src = ColumnDataSource(_bar_columns(info, xy), name="pieces")
    fig = _blank_figure(dict(enumerate(xy)), {}, title or _title(schedule, info), width, height,
                        below_px=24)
    _draw_bars(fig, pieces_src)
    _draw_ring(fig, nodes_src, edges_src)
    return fig


def _bar_columns(info: _Ring, xy: list) -> dict[str, list]:
    """Each process's pieces as a bar inside the circle, one slot per piece."""
    p = len(info.order)
    most = max(info.piece_pos.count(k) for k in range(p)) if p else 1
    w = min(0.4, 0.8 / most)  # slot width: the longest bar stays 0.8 units
    cols: dict[str, list] = {k: [] for k in (
        "piece", "owner", "index", "label", "offset", "nbytes", "fill", "x", "y", "w", "fx",
        "fw", "hatch")}
    for v, (owner, offset, n) in enumerate(info.pieces):
        k, j = info.piece_pos[v], info.piece_index[v]
        cx, cy = _radial(*xy[k], -(NODE_RADIUS + 0.34))
        left = cx - w * info.piece_pos.count(k) / 2 + j * w
        fill = n / info.slot_bytes
        for key, value in (("piece", v), ("owner", owner), ("index", j),
                           ("label", info.labels[v]), ("offset", offset), ("nbytes", n),
                           ("fill", fill), ("x", left + w / 2), ("y", cy), ("w", w),
                           ("fx", left + w * fill / 2), ("fw", w * fill),
                           ("hatch", "/" if n == 0 else " ")):
            cols[key].append(value)
    return cols


def _draw_bars(fig: "Figure", src) -> None:
    from bokeh.models import HoverTool, Rect

    slots = fig.add_glyph(src, Rect(x="x", y="y", width="w", height=0.16, fill_color="white",
                                    line_color="#555555", line_width=1, hatch_pattern="hatch",
                                    hatch_color="#aaaaaa", hatch_scale=5))
    fig.add_glyph(src, Rect(x="fx", y="y", width="fw", height=0.16, fill_color="#6a9fd8",
                            line_color=None))
    fig.add_tools(HoverTool(renderers=[slots], tooltips=[
        ("piece", "@label (piece @piece)"), ("bytes", "@nbytes at offset @offset")]))


# -- animation --------------------------------------------------------------------------------
def animate_ring(schedule: "Schedule", alpha: float = 1.0, beta: float = 0.0, *,
                 result: "SimResult | None" = None, title: str | None = None,
                 nodes: Sequence[int] | None = None, interval_ms: int = 900) -> "Model":
    """Round-by-round animation of a ring or pipelined Allgatherv schedule (Figure 2).

    Left: the ring, with the step's messages as highlighted arrows labelled with the
    piece they carry (``"3.1"``: rank 3's piece 1; messages of zero bytes grey).  Right: a
    grid of processes (rows, in ring order) by pieces (columns, grouped by owner), each
    piece filled in proportion to its bytes, coloured not held / held / arriving in this
    step.  A slider and a play/pause button switch steps with ``CustomJS``, as in
    :func:`~tuwviz.viz.animate_schedule`, so a saved HTML file animates offline.

    Parameters
    ----------
    schedule : Schedule
        ``schedule("allgatherv", "ring" | "pipelined", problem, ...)``.
    alpha, beta : float, optional
        Cost parameters of the simulation giving each step its times (shown in the step
        text).  The defaults make every message one time unit.
    result : SimResult, optional
        Use this simulation instead.
    title : str, optional
        Title of the ring.
    nodes : sequence of int, optional
        SMP node of every rank, to colour the processes (Figure 1).
    interval_ms : int, optional
        Time per step when playing.

    Returns
    -------
    bokeh.models.Column
        Controls (``"play_button"``, ``"step_slider"``, text ``"step_label"``) above the
        ring and the grid.  Named sources: ``"frames"`` (per step: ``step``, ``label``,
        ``cells`` (grid states), ``held_text``, ``active``), ``"transfers"`` (every message
        with its ``step``, ``piece``, ``label``), ``"current"`` (those of the shown step),
        ``"nodes"``, ``"edges"`` and ``"cells"`` (one row per grid cell: ``rank``,
        ``position``, ``piece``, ``state``: 0 not held, 1 held, 2 arriving).

    Raises
    ------
    ValueError
        For other schedules (e.g. a gatherv schedule), or more than :data:`MAX_RING_CELLS`
        steps x processes x pieces.
    """
    from bokeh.layouts import column
    from bokeh.models import Button, ColumnDataSource, CustomJS, Div, Slider

    info = _ring_info(schedule, "animate_ring")
    _check_size(info, schedule.p, "animate_ring")
    if result is None:
        result = simulate(schedule, alpha, beta)
    frames = ring_frames(schedule, result)
    xy = _positions(schedule.p)
    nodes_src = ColumnDataSource(_node_columns(schedule, info, xy, nodes), name="nodes")
    nodes_src.data["held_text"] = _held_texts(info, frames[0])
    edges_src = ColumnDataSource(_edge_columns(info, xy, nodes), name="edges")
    moves = ColumnDataSource(_transfer_columns(info, xy), name="transfers")
    current = ColumnDataSource({k: [] for k in moves.data}, name="current")
    cells = ColumnDataSource(_cell_columns(info, frames[0]), name="cells")
    frame_src = ColumnDataSource(_frame_columns(info, frames), name="frames")

    ring = _blank_figure(dict(enumerate(xy)), {}, title or _title(schedule, info), None, None,
                         below_px=36)
    _draw_ring(ring, nodes_src, edges_src, line_alpha=0.25)
    _draw_current(ring, current, nodes_src)
    grid = _grid_figure(info, cells, ring.height)

    last = len(frames) - 1
    slider = Slider(start=0, end=max(last, 1), value=0, step=1, title="step",
                    name="step_slider", disabled=last == 0, width=360)
    button = Button(label="► Play", name="play_button", width=100, disabled=last == 0)
    label = Div(text=frame_src.data["label"][0], name="step_label", width=560)
    slider.js_on_change("value", CustomJS(
        args=dict(frames=frame_src, transfers=moves, current=current, cells=cells,
                  nodes=nodes_src, slider=slider, label=label, active_color=ACTIVE_COLOR,
                  cell_colors=CELL_COLORS), code=_UPDATE_JS))
    button.js_on_event("button_click", CustomJS(
        args=dict(button=button, slider=slider, interval=int(interval_ms)), code=_PLAY_JS))
    return column(player_row(button, slider, label), fit_row(ring, grid), name="ring_animation")


def _held_texts(info: _Ring, frame: dict) -> list[str]:
    """Per process in ring order: bytes held of all, e.g. ``24/40 B``."""
    total = sum(info.sizes)
    return [f"{sum(frame['held'][r])}/{total} B" for r in info.order]


def _cell_states(info: _Ring, frame: dict) -> list[int]:
    """Row-major (ring position x piece) grid states: 0 not held, 1 held, 2 arriving."""
    sizes, out = info.sizes, []
    for r in info.order:
        held, new = frame["held"][r], set(frame["new"][r])
        out.extend(2 if v in new else 1 if held[v] == sizes[v] else 0
                   for v in range(len(sizes)))
    return out


def _frame_columns(info: _Ring, frames: list[dict]) -> dict[str, list]:
    last, total = len(frames) - 1, sum(info.sizes)
    cols: dict[str, list] = {"step": [], "label": [], "cells": [], "held_text": [],
                             "active": []}
    for f in frames:
        cols["step"].append(f["step"])
        cols["cells"].append(_cell_states(info, f))
        cols["held_text"].append(_held_texts(info, f))
        cols["active"].append(f["active"])
        cols["label"].append(_frame_label(f, last, total))
    return cols


def _frame_label(f: dict, last: int, total: int) -> str:
    head = f"<b>step {f['step']} of {last}</b>"
    if f["step"] == 0:
        return head + ": before any message, every process holds its own pieces"
    n, nbytes = len(f["transfers"]), sum(t[4] for t in f["transfers"])
    text = (f"{head}: round {f['slot']}, "
            f"{n} message{'s' if n != 1 else ''}, {nbytes} B")
    if f["start"] is not None:
        text += f", t = {f['start']:g} → {f['end']:g}"
    if f["step"] == last:
        text += f"; now every process holds all {total} B"
    return text


def _transfer_columns(info: _Ring, xy: list) -> dict[str, list]:
    p = len(info.order)
    position = {r: k for k, r in enumerate(info.order)}
    cols: dict[str, list] = {k: [] for k in (
        "step", "src", "dst", "piece", "owner", "nbytes", "label", "x0", "y0", "x1", "y1",
        "lx", "ly", "color")}
    for slot, src, dst, v in info.transfers:
        a, b = position[src], position[dst]
        x0, y0, x1, y1 = shorten(*xy[a], *xy[b], NODE_RADIUS + 0.04, NODE_RADIUS + 0.04,
                                 0.07 if p == 2 else 0.0)
        lx, ly = _radial((x0 + x1) / 2, (y0 + y1) / 2, 0.28)  # outside the chord
        n = info.sizes[v]
        for key, value in (("step", slot + 1), ("src", src), ("dst", dst), ("piece", v),
                           ("owner", info.pieces[v][0]), ("nbytes", n),
                           ("label", info.labels[v]), ("x0", x0), ("y0", y0), ("x1", x1),
                           ("y1", y1), ("lx", lx), ("ly", ly),
                           ("color", ACTIVE_COLOR if n else KIND_COLORS["info"])):
            cols[key].append(value)
    return cols


def _draw_current(fig: "Figure", current, nodes_src) -> None:
    """The shown step's messages, and each process's bytes held under its ``m_i``."""
    from bokeh.models import Arrow, HoverTool, LabelSet, Segment, VeeHead

    seg = fig.add_glyph(current, Segment(x0="x0", y0="y0", x1="x1", y1="y1",
                                         line_color="color", line_width=4, line_alpha=0.95))
    fig.add_layout(Arrow(source=current, x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                         line_alpha=0.0, end=VeeHead(size=13, fill_color="color",
                                                     line_color="color")))
    fig.add_layout(LabelSet(source=current, x="lx", y="ly", text="label", text_align="center",
                            text_baseline="middle", text_font_size="9pt",
                            text_font_style="bold", text_color="color",
                            background_fill_color="white", background_fill_alpha=0.85))
    fig.add_layout(LabelSet(source=nodes_src, x="lx", y="ly", text="held_text",
                            text_align="align", text_baseline="middle", y_offset="dy",
                            text_font_size="8pt", text_color="#1f5fbf"))
    fig.add_tools(HoverTool(renderers=[seg], line_policy="interp", tooltips=[
        ("message", "@src → @dst"), ("piece", "@label"), ("bytes", "@nbytes")]))


def _cell_columns(info: _Ring, frame0: dict) -> dict[str, list]:
    """Grid cells: a slot of B bytes per piece (``x``), filled by its bytes (``fx``, ``fw``)."""
    state = _cell_states(info, frame0)
    npieces = len(info.pieces)
    cols: dict[str, list] = {k: [] for k in (
        "rank", "position", "piece", "label", "nbytes", "x", "y", "fx", "fw", "state",
        "fill_color", "hatch")}
    for k, rank in enumerate(info.order):
        for v, (_, _, n) in enumerate(info.pieces):
            x = v + _GROUP_GAP * info.piece_pos[v]
            fw = 0.9 * n / info.slot_bytes
            s = state[k * npieces + v]
            for key, value in (("rank", rank), ("position", k), ("piece", v),
                               ("label", info.labels[v]), ("nbytes", n), ("x", x),
                               ("y", k), ("fx", x - 0.45 + fw / 2), ("fw", fw), ("state", s),
                               ("fill_color", CELL_COLORS[s]),
                               ("hatch", "/" if n == 0 else " ")):
                cols[key].append(value)
    return cols


def _grid_figure(info: _Ring, cells, height: int) -> "Figure":
    """Processes (rows, ring order) x pieces (columns grouped by owner), as in Figure 2."""
    from bokeh.models import HoverTool, Rect
    from bokeh.plotting import figure

    p, npieces = len(info.order), len(info.pieces)
    right = npieces - 1 + _GROUP_GAP * (p - 1)
    row_px = max(12, min(28, int((height - 90) / max(p, 1))))
    col_px = max(5, min(28, int(820 / max(right + 1, 1))))
    fig = figure(title="pieces held (rows: ranks in ring order)",
                 width=max(int(col_px * (right + 1)) + 100, 320), height=row_px * p + 90,
                 x_range=(-0.6, right + 0.6), y_range=(p - 0.5, -0.5), tools="reset,save",
                 toolbar_location=None)
    # the slot shows the state faintly, the piece's bytes strongly: partial looks partial
    slot = fig.add_glyph(cells, Rect(x="x", y="y", width=0.9, height=0.84,
                                     fill_color="fill_color", fill_alpha=0.3,
                                     line_color="#999999", hatch_pattern="hatch",
                                     hatch_color="#999999", hatch_alpha=0.6, hatch_scale=6))
    fig.add_glyph(cells, Rect(x="fx", y="y", width="fw", height=0.84, fill_color="fill_color",
                              line_color=None))
    fig.yaxis.ticker = list(range(p))
    fig.yaxis.major_label_overrides = {k: str(r) for k, r in enumerate(info.order)}
    fig.yaxis.axis_label = "rank"
    fig.xaxis.axis_label = "piece (owner.index)" if npieces <= _MAX_PIECE_TICKS else "owner"
    ticks = _piece_ticks(info)
    fig.xaxis.ticker = list(ticks)
    fig.xaxis.major_label_overrides = ticks
    fig.xaxis.major_label_orientation = 0.9 if npieces > 16 else 0.0
    fig.grid.visible = False
    fig.add_tools(HoverTool(renderers=[slot], tooltips=[
        ("rank", "@rank (ring position @position)"), ("piece", "@label: @nbytes B"),
        ("state", "@state (0 not held, 1 held, 2 arriving)")]))
    return fig


def _piece_ticks(info: _Ring) -> dict[float, str]:
    """x tick -> label: every piece if few, else the centre of each owner's group."""
    xs = [v + _GROUP_GAP * info.piece_pos[v] for v in range(len(info.pieces))]
    if len(xs) <= _MAX_PIECE_TICKS:
        return dict(zip(xs, info.labels))
    groups: dict[int, list[float]] = {}
    for v, x in enumerate(xs):
        groups.setdefault(info.piece_pos[v], []).append(x)
    return {sum(g) / len(g): str(info.order[k]) for k, g in groups.items()}
