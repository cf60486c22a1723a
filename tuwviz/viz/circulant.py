"""The circulant-graph reductions drawn and animated (Figures 1 and 2 of the uniform
reduce-scatter paper: Träff, Hunold, Vardas, Funk, Sections III-A to III-D).

:func:`circulant_figure` draws the circulant graph of ``p`` processes with the to- and
from-edges of one rank highlighted by round (Figure 1).  :func:`circulant_frames` replays a
circulant schedule round by round as plain data: which partial sums travel and which each
rank holds.  :func:`animate_circulant` animates it in the browser (Figure 2 for Allreduce).

What a message holds
--------------------
A partial sum is drawn as the set of ranks whose inputs it adds up, written as cyclic
ranges (``"3-7"``, ``"9-1"`` wrapping past ``p - 1``).  The replay follows the rules of the
algorithms, applied to the messages of the schedule (or of a recorded trace, which has
the same peers in the same order):

* **allreduce/circulant** (Listing 2): rank ``r`` keeps ``V_r + S_r`` (recvbuf) and
  ``S_r`` (partbuf, without its own input); in round ``k`` it sends the first if
  ``e_k = 0``, the second if ``e_k = 1``, and adds what it receives to both.
* **allreduce/butterfly**: every message carries the sender's whole sum, which the
  receiver adds, except the post-step's (p not a power of two), which hands the result
  to a rank that gave its input away: that one replaces.
* **reduce/circulant** and **reduce/binomial**: a rank adds its children's sums to its
  own input and sends the total once.
* **reduce_scatter(_block)/circulant** (Listings 5-6): a message carries one partial sum
  per block of ``B_r^k``; shown is what each rank holds of its *own* block.
* **allgather/circulant** (Listing 7) and **allgather/bruck**: blocks are concatenated,
  not summed: a rank holds the blocks of a range of ranks starting at its own, and sends
  the first ones (from position ``e_k``, circulant; from 0, Bruck); shown is which blocks
  each rank holds.
* **reduce_scatter(_block)/recursive_halving**: a message carries the sums of the blocks
  its op names (the partner's half; the whole vector in the pre-step); a rank that gave
  its vector away gets its block's result in the post-step.

Every addition must join disjoint sets of ranks (no input counted twice) and the replay
raises if one does not: with every rank holding all ``p`` inputs of its result at the end,
that is the paper's invariant checked on the model, independent of the C kernel.

Examples
--------
>>> from tuwviz.model import schedule
>>> from tuwviz.problems import make_problem
>>> s = schedule("allreduce", "circulant", make_problem("allreduce", 11, b=1))
>>> frames = circulant_frames(s)
>>> [f["round"] for f in frames]
[-1, 0, 1, 2, 3]
>>> frames[1]["held"][0], frames[2]["held"][0], frames[-1]["held"][0]
('0-1', '0-2', '0-10')
>>> frames[3]["transfers"][0]    # round 2 (e = 0): rank 0 sends V_0 + S_0 to rank 8
[0, 8, '0-2']
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from ..model.program import Recv, Send, SendRecv
from ..model.topology.circulant import (
    circ_from,
    circ_jump,
    circ_relative_blocks,
    circ_skips,
    circ_to,
)
from ._common import ACTIVE_COLOR, NODE_COLOR, ROOT_COLOR, player_row
from .animation import _PLAY_JS

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from bokeh.model import Model
    from bokeh.plotting import figure as Figure

    from ..model.program import Schedule

__all__ = ["CIRCULANT_ALGORITHMS", "allgather_buffer_figure", "allgather_buffers",
           "animate_circulant", "circulant_figure", "circulant_frames", "rank_ranges"]

#: (collective, algorithm) pairs :func:`circulant_frames` replays.
CIRCULANT_ALGORITHMS = (("allreduce", "circulant"), ("allreduce", "butterfly"),
                        ("reduce", "circulant"),
                        ("reduce", "binomial"), ("reduce_scatter_block", "circulant"),
                        ("reduce_scatter", "circulant"),
                        ("reduce_scatter_block", "recursive_halving"),
                        ("reduce_scatter", "recursive_halving"), ("allgather", "circulant"),
                        ("allgather", "bruck"))

#: Most processes drawn (the labels of larger rings overlap; the model goes further).
MAX_DRAWN = 64

#: One colour per round (Figure 1 labels the edges with the round as subscript).
ROUND_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                "#bcbd22", "#7f7f7f", "#ff7f0e"]


def rank_ranges(ranks, p: int) -> str:
    """`ranks` (a set of ranks 0..p-1) as cyclic ranges: ``"3-7"``, ``"9-1"``, ``"0,2,4"``.

    Examples
    --------
    >>> rank_ranges({9, 10, 0, 1}, 11), rank_ranges(set(range(11)), 11), rank_ranges({2, 5}, 11)
    ('9-1', '0-10', '2,5')
    >>> rank_ranges(set(), 4)
    '-'
    """
    s = set(ranks)
    if not s:
        return "-"
    if len(s) == p:
        return f"0-{p - 1}"
    # start each run at a rank whose predecessor (cyclically) is missing
    runs = []
    for r in sorted(s):
        if (r - 1) % p not in s:
            n = 1
            while (r + n) % p in s:
                n += 1
            runs.append((r, (r + n - 1) % p, n))
    return ",".join(f"{a}" if n == 1 else f"{a}-{b}" for a, b, n in runs)


def _check(schedule: "Schedule", who: str) -> None:
    key = (schedule.collective, schedule.algorithm)
    if key not in CIRCULANT_ALGORITHMS:
        valid = ", ".join("/".join(k) for k in CIRCULANT_ALGORITHMS)
        raise ValueError(f"{who} replays {valid}; got {'/'.join(key)}")


def _peers(schedule: "Schedule", trace: Sequence[dict] | None):
    """Per rank, its messages in order as (direction, peer, tag): from the schedule, or from
    trace events (dicts with rank, dir, peer, tag) of a recorded run."""
    if trace is not None:
        events = [e for per_rank in trace for e in per_rank] if trace and not isinstance(
            trace[0], dict) else list(trace)  # per rank, as tuwviz.run.trace.trace gives, or flat
        out: list[list[tuple[str, int, int]]] = [[] for _ in range(schedule.p)]
        for e in events:
            out[e["rank"]].append((e["dir"], e["peer"], e["tag"]))
        return out
    out = []
    for prog in schedule.programs:
        msgs = []
        for op in prog:
            if isinstance(op, SendRecv):
                msgs += [("send", op.send_peer, op.tag), ("recv", op.recv_peer, op.tag)]
            elif isinstance(op, Send):
                msgs.append(("send", op.peer, op.tag))
            elif isinstance(op, Recv):
                msgs.append(("recv", op.peer, op.tag))
        out.append(msgs)
    return out


def _add(into: set, new: set, what: str) -> None:
    if into & new:
        raise ValueError(f"{what}: inputs of ranks {sorted(into & new)} would be added twice")
    into |= new


def circulant_frames(schedule: "Schedule", trace: Sequence[dict] | None = None) -> list[dict]:
    """Replay a circulant (or binomial Reduce) schedule round by round, as plain data.

    Parameters
    ----------
    schedule : Schedule
        One of :data:`CIRCULANT_ALGORITHMS`.
    trace : list, optional
        Events of a recorded run of the same problem (dicts with ``rank``, ``dir``,
        ``peer``, ``tag``; per rank, as :func:`tuwviz.run.trace.trace` returns one problem's,
        or one flat list): the rounds are replayed from its messages instead of the
        schedule's.

    Returns
    -------
    list of dict
        Frame 0 (``round`` -1) is the start; then one frame per round (the tag) with
        ``transfers`` (``[src, dst, label]``: the ranks whose inputs the message sums, or
        for a reduce-scatter the blocks it carries), ``held`` (per rank, the ranks whose
        inputs its result holds so far, as :func:`rank_ranges`) and ``sets`` (the same as
        sorted lists).

    Raises
    ------
    ValueError
        For other schedules, or if the messages would add an input twice or leave a result
        incomplete (a schedule or trace that does not compute the collective).
    """
    _check(schedule, "circulant_frames")
    p, coll = schedule.p, schedule.collective
    msgs = _peers(schedule, trace)
    rounds = sorted({tag for m in msgs for (_, _, tag) in m})
    if coll == "allgather":
        frames = _allgather_frames(p, msgs, rounds, schedule.algorithm)
    elif coll == "reduce" or schedule.algorithm == "butterfly":
        frames = _whole_sum_frames(p, msgs, rounds)
    elif schedule.algorithm == "recursive_halving":
        frames = _block_range_frames(schedule, msgs, rounds)
    elif coll == "allreduce":
        frames = _allreduce_frames(p, msgs, rounds)
    else:
        frames = _reduce_scatter_frames(p, msgs, rounds)
    final = frames[-1]["sets"]
    want = [list(range(p))] * p
    if coll == "reduce":
        want = [list(range(p)) if r == schedule.root else final[r] for r in range(p)]
    if final != want:
        bad = next(r for r in range(p) if final[r] != want[r])
        raise ValueError(f"rank {bad} ends with the inputs of {rank_ranges(final[bad], p)}, "
                         f"not of all {p} ranks")
    return frames


def _frame(k: int, transfers: list, held: list[set], p: int) -> dict:
    return {"round": k, "transfers": transfers, "held": [rank_ranges(h, p) for h in held],
            "sets": [sorted(h) for h in held]}


def _by_round(msgs, rank: int, k: int, direction: str):
    return [peer for (d, peer, tag) in msgs[rank] if tag == k and d == direction]


def _allreduce_frames(p: int, msgs, rounds: list[int]) -> list[dict]:
    q, skips = circ_skips(p)
    full = [{r} for r in range(p)]       # recvbuf: V_r + S_r
    part: list[set] = [set() for _ in range(p)]  # partbuf: S_r
    frames = [_frame(-1, [], full, p)]
    for k in rounds:
        eps = skips[k + 1] & 1
        sent = [set(part[r] if eps else full[r]) for r in range(p)]
        transfers = []
        for r in range(p):
            for dst in _by_round(msgs, r, k, "send"):
                transfers.append([r, dst, rank_ranges(sent[r], p)])
        for r in range(p):
            for src in _by_round(msgs, r, k, "recv"):
                _add(full[r], sent[src], f"round {k}, rank {r}")
                _add(part[r], set(sent[src]), f"round {k}, rank {r}")
        frames.append(_frame(k, transfers, full, p))
    return frames


def _allgather_frames(p: int, msgs, rounds: list[int], algorithm: str) -> list[dict]:
    """Rank r holds the blocks of ranks r, r+1, ... (positions); a message carries the
    sender's positions e_k .. e_k + n - 1 (circulant) or 0 .. n - 1 (Bruck)."""
    q, skips = circ_skips(p)
    held = [[r] for r in range(p)]  # in position order
    frames = [_frame(-1, [], [set(h) for h in held], p)]
    for k in rounds:
        if algorithm == "circulant":
            first, n = skips[k + 1] & 1, skips[k + 1] - skips[k]
        else:
            first, n = 0, min(2**k, p - 2**k)
        sent = [h[first:first + n] for h in held]
        if any(len(x) < n for x in sent):
            raise ValueError(f"round {k}: a rank would send blocks it does not hold yet")
        transfers = []
        for r in range(p):
            for dst in _by_round(msgs, r, k, "send"):
                transfers.append([r, dst, "blocks " + rank_ranges(set(sent[r]), p)])
        for r in range(p):
            for src in _by_round(msgs, r, k, "recv"):
                mine = set(held[r])
                _add(mine, set(sent[src]), f"round {k}, rank {r}")
                held[r] = held[r] + sent[src]
        frames.append(_frame(k, transfers, [set(h) for h in held], p))
    return frames


def _whole_sum_frames(p: int, msgs, rounds: list[int]) -> list[dict]:
    """Every message carries the sender's whole sum, which the receiver adds; a rank that
    gave its sum away (sent without receiving, in an earlier round) and receives again
    gets the result: it replaces (the butterfly's post-step).  Reduce trees send once."""
    acc = [{r} for r in range(p)]
    gave: set[int] = set()
    frames = [_frame(-1, [], acc, p)]
    for k in rounds:
        transfers, arriving = [], []
        for r in range(p):
            for dst in _by_round(msgs, r, k, "send"):
                transfers.append([r, dst, rank_ranges(acc[r], p)])
                arriving.append((r, dst, set(acc[r])))
        for _, dst, got in arriving:
            if dst in gave:
                acc[dst] = got
            else:
                _add(acc[dst], got, f"round {k}, rank {dst}")
        gave |= {r for r, _, _ in arriving} - {d for _, d, _ in arriving}
        frames.append(_frame(k, transfers, acc, p))
    return frames


def _block_range_frames(schedule: "Schedule", msgs, rounds: list[int]) -> list[dict]:
    """Per rank and block, the inputs summed so far; each message carries the sums of the
    blocks its schedule op names.  A recorded trace must send the schedule's messages."""
    p = schedule.p
    if msgs != _peers(schedule, None):
        raise ValueError("the trace's messages are not the schedule's (peers, order, tags)")
    sends: dict[tuple[int, int], list[range]] = {}
    for r, prog in enumerate(schedule.programs):
        for op in prog:
            if isinstance(op, SendRecv):
                sends.setdefault((r, op.tag), []).append((op.send_peer, op.send_blocks))
            elif isinstance(op, Send):
                sends.setdefault((r, op.tag), []).append((op.peer, op.blocks))
    sums = [{b: {r} for b in range(p)} for r in range(p)]
    gave: set[int] = set()  # sent everything away (the pre-step): results replace
    frames = [_frame(-1, [], [sums[r][r] for r in range(p)], p)]
    for k in rounds:
        transfers, arriving = [], []
        for r in range(p):
            for dst, blocks in sends.get((r, k), []):
                transfers.append([r, dst, "blocks " + (f"{blocks.start}-{blocks.stop - 1}"
                                                       if len(blocks) > 1 else f"{blocks.start}")])
                arriving.append((r, dst, {b: set(sums[r][b]) for b in blocks}))
        for _, dst, got in arriving:
            for b, s in got.items():
                if dst in gave:
                    sums[dst][b] = s
                else:
                    _add(sums[dst][b], s, f"round {k}, rank {dst}, block {b}")
        gave |= {r for r, _, _ in arriving} - {d for _, d, _ in arriving}
        frames.append(_frame(k, transfers, [sums[r][r] for r in range(p)], p))
    return frames


def _reduce_scatter_frames(p: int, msgs, rounds: list[int]) -> list[dict]:
    """Per rank and block, the inputs summed so far; a message carries B_r^k's sums."""
    q, skips = circ_skips(p)
    offsets = [0] * max(2**q - 1, 1)
    circ_relative_blocks(0, 0, q, skips, 0, offsets)
    start = [sum(2 ** (q - 1 - i) for i in range(k)) for k in range(q)]
    sums = [{b: {r} for b in range(p)} for r in range(p)]  # what r has of every block
    frames = [_frame(-1, [], [sums[r][r] for r in range(p)], p)]
    for k in rounds:
        eps = skips[k + 1] & 1
        blocks = [[(r - x) % p for x in offsets[start[k]:start[k] + 2 ** (q - 1 - k)]]
                  for r in range(p)]
        # e_k = 1: a block goes out without the sender's own input (Section III-B)
        sent = [{b: (sums[r][b] - {r}) if eps and k > 0 else set(sums[r][b])
                 for b in blocks[r]} for r in range(p)]
        if k == 0:  # round 0 sends the packed input: V_r's blocks alone
            sent = [{b: {r} for b in blocks[r]} for r in range(p)]
        transfers = []
        for r in range(p):
            for dst in _by_round(msgs, r, k, "send"):
                transfers.append([r, dst, "blocks " + " ".join(map(str, blocks[r]))])
        for r in range(p):
            for src in _by_round(msgs, r, k, "recv"):
                for b, got in sent[src].items():
                    _add(sums[r][b], got, f"round {k}, rank {r}, block {b}")
        frames.append(_frame(k, transfers, [sums[r][r] for r in range(p)], p))
    return frames


# ---- drawing ----------------------------------------------------------------------------


def _layout(p: int) -> list[tuple[float, float]]:
    """Ranks on a circle, rank 0 at the top, clockwise (as Figure 1)."""
    radius = max(2.0, 0.45 * p / math.pi)
    return [(radius * math.sin(2 * math.pi * r / p), radius * math.cos(2 * math.pi * r / p))
            for r in range(p)]


def _check_p(p: int, who: str) -> None:
    if p < 1 or p > MAX_DRAWN:
        raise ValueError(f"{who} draws 1..{MAX_DRAWN} processes, got p={p} (the model "
                         f"goes further: tuwviz.model.schedule)")


def _figure(xy, title: str, size: int) -> "Figure":
    from bokeh.plotting import figure

    r = max(abs(c) for pt in xy for c in pt) + 1.4
    fig = figure(title=title, width=size, height=size, x_range=(-r, r), y_range=(-r, r),
                 tools="pan,wheel_zoom,reset,save", toolbar_location="right")
    fig.axis.visible = False
    fig.grid.visible = False
    fig.outline_line_color = None
    return fig


def _draw_nodes(fig: "Figure", xy, colors: list[str], name: str = "nodes"):
    from bokeh.models import ColumnDataSource, LabelSet

    src = ColumnDataSource({"x": [x for x, _ in xy], "y": [y for _, y in xy],
                            "rank": list(range(len(xy))), "color": colors,
                            "label": [str(r) for r in range(len(xy))]}, name=name)
    fig.scatter("x", "y", source=src, size=26, fill_color="color", line_color="#333333")
    fig.add_layout(LabelSet(x="x", y="y", text="label", source=src, text_align="center",
                            text_baseline="middle", text_font_size="10pt"))
    return src


def circulant_figure(p: int, rank: int = 0, *, title: str | None = None,
                     size: int = 520) -> "Model":
    """The circulant graph of `p` processes, `rank`'s to- and from-edges by round (Figure 1).

    Every edge ``r -> r - jump_k`` of every round is drawn faintly; `rank`'s to-edges
    (solid) and from-edges (dashed) are coloured by round and labelled ``t_k`` and ``f_k``.

    Returns
    -------
    bokeh.plotting.figure
        Named sources: ``"nodes"``, ``"edges"`` (all rounds: ``src``, ``dst``, ``round``)
        and ``"highlight"`` (`rank`'s: ``src``, ``dst``, ``round``, ``kind`` ``"to"`` or
        ``"from"``).

    Examples
    --------
    >>> from tuwviz.viz import sources
    >>> fig = circulant_figure(11, 0)
    >>> h = sources(fig)["highlight"].data
    >>> list(zip(h["kind"], h["dst"]))[:4]
    [('to', 10), ('to', 10), ('to', 8), ('to', 6)]
    """
    from bokeh.models import Arrow, ColumnDataSource, LabelSet, VeeHead

    _check_p(p, "circulant_figure")
    if not 0 <= rank < p:
        raise ValueError(f"rank {rank} out of range 0..{p - 1}")
    q, skips = circ_skips(p)
    xy = _layout(p)
    jumps = [circ_jump(skips, k) for k in range(q)]
    fig = _figure(xy, title or f"circulant graph, p={p}: skips {skips}, jumps {jumps}; "
                  f"edges of rank {rank}", size)
    edges = {"src": [], "dst": [], "round": [], "x0": [], "y0": [], "x1": [], "y1": []}
    for k in range(q):
        for r in range(p):
            t = circ_to(p, r, skips, k)
            for key, v in zip(edges, (r, t, k, xy[r][0], xy[r][1], xy[t][0], xy[t][1])):
                edges[key].append(v)
    esrc = ColumnDataSource(edges, name="edges")
    fig.segment("x0", "y0", "x1", "y1", source=esrc, line_color="#bbbbbb", line_alpha=0.35)
    hl = {"src": [], "dst": [], "round": [], "kind": [], "x0": [], "y0": [], "x1": [],
          "y1": [], "xm": [], "ym": [], "label": [], "color": [], "dash": []}
    for kind in ("to", "from"):
        for k in range(q):
            a, b = (rank, circ_to(p, rank, skips, k)) if kind == "to" else \
                (circ_from(p, rank, skips, k), rank)
            (x0, y0), (x1, y1) = xy[a], xy[b]
            # labels sit off the middle, towards the outside, so t_k and f_k do not collide
            side = 0.18 if kind == "to" else -0.18
            for key, v in zip(hl, (a, b, k, kind, x0, y0, x1, y1, (x0 + x1) / 2 + side,
                                   (y0 + y1) / 2 + side, f"{kind[0]}{k}",
                                   ROUND_COLORS[k % len(ROUND_COLORS)],
                                   "solid" if kind == "to" else "dashed")):
                hl[key].append(v)
    hsrc = ColumnDataSource(hl, name="highlight")
    fig.add_layout(Arrow(end=VeeHead(size=9, fill_color="black"), source=hsrc, x_start="x0",
                         y_start="y0", x_end="x1", y_end="y1", line_color="color",
                         line_width=2.5, line_dash="dash"))
    fig.add_layout(LabelSet(x="xm", y="ym", text="label", source=hsrc, text_color="color",
                            text_font_size="10pt", text_font_style="bold"))
    colors = [ROOT_COLOR if r == rank else NODE_COLOR for r in range(p)]
    _draw_nodes(fig, xy, colors)
    return fig


_UPDATE_JS = """
const k = slider.value;
const f = frames.data;
const t = transfers.data;
const cur = {x0: [], y0: [], x1: [], y1: [], xm: [], ym: [], label: []};
for (let i = 0; i < t.frame.length; i++) {
    if (t.frame[i] !== k) continue;
    for (const key of Object.keys(cur)) cur[key].push(t[key][i]);
}
current.data = cur;
const held = f.held[k];
const n = nodes.data;
const texts = [];
for (let r = 0; r < held.length; r++) texts.push(held[r]);
nodes.data = Object.assign({}, n, {held: texts});
label.text = f.label[k];
"""


def animate_circulant(schedule: "Schedule", trace: Sequence[dict] | None = None, *,
                      title: str | None = None, size: int = 560,
                      interval_ms: int = 1200) -> "Model":
    """Round-by-round animation of a circulant schedule (Figure 2 for Allreduce).

    The ranks on a circle, each labelled with the ranks whose inputs its result holds so
    far (its own block's, for a reduce-scatter); the round's messages as arrows labelled
    with the partial sum they carry (or the blocks).  A slider and a play/pause button
    switch rounds in the browser (``CustomJS``), so a saved HTML file animates offline.

    Parameters
    ----------
    schedule : Schedule
        One of :data:`CIRCULANT_ALGORITHMS`.
    trace : list of dict, optional
        Replay a recorded run's messages instead (:func:`circulant_frames`).

    Returns
    -------
    bokeh.models.Column
        Controls (``"play_button"``, ``"step_slider"``, ``"step_label"``) above the figure.
        Named sources: ``"frames"`` (``round``, ``label``, ``held``), ``"transfers"``
        (every message with its ``frame``), ``"current"`` (the shown frame's) and
        ``"nodes"`` (``held``: the shown frame's texts).
    """
    from bokeh.layouts import column
    from bokeh.models import Arrow, Button, ColumnDataSource, CustomJS, Div, LabelSet, Slider, VeeHead

    _check_p(schedule.p, "animate_circulant")
    frames = circulant_frames(schedule, trace)
    p = schedule.p
    xy = _layout(p)
    what = ("own block's inputs" if schedule.collective.startswith("reduce_scatter")
            else "blocks" if schedule.collective == "allgather" else "inputs")
    labels = []
    for f in frames:
        if f["round"] < 0:
            labels.append(f"start: every rank holds its own input ({what} per rank shown)")
        else:
            labels.append(f"round {f['round']}: {len(f['transfers'])} messages; "
                          f"labels: {what} " + ("held" if what == "blocks" else "summed so far"))
    frame_src = ColumnDataSource({"round": [f["round"] for f in frames], "label": labels,
                                  "held": [f["held"] for f in frames]}, name="frames")
    moves = {"frame": [], "x0": [], "y0": [], "x1": [], "y1": [], "xm": [], "ym": [], "label": []}
    for i, f in enumerate(frames):
        for src, dst, text in f["transfers"]:
            (x0, y0), (x1, y1) = xy[src], xy[dst]
            for key, v in zip(moves, (i, x0, y0, x1, y1, (x0 + x1) / 2, (y0 + y1) / 2, text)):
                moves[key].append(v)
    transfers = ColumnDataSource(moves, name="transfers")
    current = ColumnDataSource({k: [] for k in moves if k != "frame"}, name="current")
    root = schedule.root if schedule.collective == "reduce" else -1
    fig = _figure(xy, title or f"{schedule.collective}/{schedule.algorithm}, p={p}", size)
    fig.add_layout(Arrow(end=VeeHead(size=9, fill_color=ACTIVE_COLOR), source=current,
                         x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                         line_color=ACTIVE_COLOR, line_width=2))
    fig.add_layout(LabelSet(x="xm", y="ym", text="label", source=current,
                            text_font_size="8pt", text_color="#7a3d00"))
    nodes = _draw_nodes(fig, xy, [ROOT_COLOR if r == root else NODE_COLOR for r in range(p)])
    nodes.data["held"] = list(frames[0]["held"])
    nodes.data["hx"] = [x * 1.16 for x, _ in xy]
    nodes.data["hy"] = [y * 1.16 - 0.1 for _, y in xy]
    fig.add_layout(LabelSet(x="hx", y="hy", text="held", source=nodes, text_align="center",
                            text_font_size="8pt", text_color="#1f5fbf"))
    last = len(frames) - 1
    slider = Slider(start=0, end=max(last, 1), value=0, step=1, title="round",
                    name="step_slider", disabled=last == 0, width=300)
    button = Button(label="► Play", name="play_button", width=100, disabled=last == 0)
    label = Div(text=labels[0], name="step_label", width=520)
    slider.js_on_change("value", CustomJS(
        args=dict(frames=frame_src, transfers=transfers, current=current, nodes=nodes,
                  slider=slider, label=label), code=_UPDATE_JS))
    button.js_on_event("button_click", CustomJS(
        args=dict(button=button, slider=slider, interval=int(interval_ms)), code=_PLAY_JS))
    return column(player_row(button, slider, label), fig, name="circulant_animation")


def allgather_buffers(p: int, rank: int) -> dict:
    """Listing 7's two buffers at `rank`, round by round (Section III-E).

    Position ``j`` holds the block of rank ``rank + j mod p``; positions ``0 .. last - 1``
    (``last = skips[q-1]``) live in ``lowrbuf``, ``last .. p - 1`` in ``upprbuf``, filled
    by the last round alone.  Of the two ranges of ranks at most one wraps past ``p - 1``:
    that buffer is scratch space and is copied into recvbuf after the rounds; the other is
    recvbuf itself (``kernels_c/allgather/allgather_circulant.c``).

    Returns
    -------
    dict
        ``last``; ``scratch``: ``"lowrbuf"``, ``"upprbuf"`` or ``None`` (rank 0: nothing
        wraps); ``copied``: blocks copied after the rounds (at most ``ceil(p/2)``);
        ``rounds``: per round ``k`` (``-1``: the start, the own block) the list of the
        blocks (ranks) at positions ``0 .. p - 1``, ``None`` where nothing is yet.

    Examples
    --------
    >>> b = allgather_buffers(5, 3)
    >>> b["last"], b["scratch"], b["copied"]
    (3, 'lowrbuf', 3)
    >>> b["rounds"][-1], b["rounds"][0]
    ([3, None, None, None, None], [3, 4, None, None, None])
    >>> allgather_buffers(5, 0)["scratch"], allgather_buffers(5, 1)["copied"]
    (None, 2)
    """
    if p < 1 or not 0 <= rank < p:
        raise ValueError(f"need p >= 1 and 0 <= rank < p, got p={p}, rank={rank}")
    q, skips = circ_skips(p)
    last = skips[q - 1] if q else p
    filled = [1] + [skips[k + 1] for k in range(q)]
    rounds = {k - 1: [(rank + j) % p if j < n else None for j in range(p)]
              for k, n in enumerate(filled)}
    if q == 0 or rank == 0 and rank + last <= p:
        scratch, copied = None, 0
    elif rank + last > p:
        scratch, copied = "lowrbuf", last
    else:
        scratch, copied = "upprbuf", p - last
    return {"last": last, "scratch": scratch, "copied": copied, "rounds": rounds}


def allgather_buffer_figure(p: int, rank: int, *, width: int = 640) -> "Model":
    """The buffer trick of Listing 7 drawn for one rank: one row per round, one cell per
    position (the block of rank ``rank + j``), ``lowrbuf`` blue and ``upprbuf`` orange,
    hatched where the buffer is scratch space copied afterwards; below, the blocks every
    rank copies after the rounds, against Bruck's ``p`` (Table I: ``gamma m/2`` vs
    ``gamma m``).

    Returns
    -------
    bokeh.layouts.column
        Named sources ``"cells"`` (``round``, ``position``, ``block``, ``buffer``) and
        ``"copies"`` (``rank``, ``circulant``, ``bruck``).

    Examples
    --------
    >>> from tuwviz.viz import sources
    >>> src = sources(allgather_buffer_figure(5, 3))
    >>> src["copies"].data["circulant"]
    [0, 2, 2, 3, 3]
    """
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, LabelSet
    from bokeh.plotting import figure

    _check_p(p, "allgather_buffer_figure")
    b = allgather_buffers(p, rank)
    cells = {"round": [], "position": [], "block": [], "buffer": [], "color": [],
             "alpha": [], "hatch": [], "label": [], "y": []}
    for k, row in b["rounds"].items():
        for j, blk in enumerate(row):
            buf = "lowrbuf" if j < b["last"] else "upprbuf"
            for key, v in zip(cells, (k, j, -1 if blk is None else blk, buf,
                                      "#1f77b4" if buf == "lowrbuf" else "#ff7f0e",
                                      0.15 if blk is None else 0.75,
                                      "/" if buf == b["scratch"] else " ",
                                      "" if blk is None else str(blk), -k)):
                cells[key].append(v)
    src = ColumnDataSource(cells, name="cells")
    where = {None: "nothing wraps: both buffers are recvbuf itself, no copy",
             "lowrbuf": f"lowrbuf wraps past rank {p - 1}: scratch, {b['copied']} blocks "
                        f"copied after the rounds",
             "upprbuf": f"upprbuf wraps past rank {p - 1}: scratch, {b['copied']} blocks "
                        f"copied after the rounds"}[b["scratch"]]
    fig = figure(width=width, height=60 + 40 * (len(b["rounds"])), x_range=(-0.5, p - 0.5),
                 y_range=(-len(b["rounds"]) + 1.5, 1.5), tools="save",
                 title=f"rank {rank} of {p}: position j = block of rank {rank} + j; {where}",
                 x_axis_label="position (blue: lowrbuf, orange: upprbuf)",
                 y_axis_label="after round")
    fig.rect("position", "y", 0.92, 0.8, source=src, fill_color="color", fill_alpha="alpha",
             line_color="#555555", hatch_pattern="hatch", hatch_color="#333333",
             hatch_alpha=0.5)
    fig.add_layout(LabelSet(x="position", y="y", text="label", source=src,
                            text_align="center", text_baseline="middle"))
    fig.yaxis.ticker = [-k for k in b["rounds"]]
    fig.yaxis.major_label_overrides = {-k: ("start" if k < 0 else str(k)) for k in b["rounds"]}
    fig.grid.visible = False
    copies = {"rank": list(range(p)),
              "circulant": [allgather_buffers(p, r)["copied"] for r in range(p)],
              "bruck": [p if p > 1 else 0] * p}
    csrc = ColumnDataSource(copies, name="copies")
    bar = figure(width=width, height=220, title=f"blocks copied after the rounds: circulant "
                 f"(at most ceil(p/2) = {-(-p // 2)}) vs Bruck ({p})",
                 x_axis_label="rank", y_axis_label="blocks", tools="save")
    bar.vbar(x="rank", top="bruck", width=0.8, source=csrc, fill_color="#cccccc",
             legend_label="Bruck")
    bar.vbar(x="rank", top="circulant", width=0.5, source=csrc, fill_color="#2ca02c",
             legend_label="circulant")
    bar.legend.location = "top_left"
    return column(fig, bar)
