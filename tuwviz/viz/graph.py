"""Static drawings of a schedule: its communication tree or its messages, as a graph.

:func:`schedule_graph` turns a :class:`~tuwviz.model.Schedule` into a NetworkX
``MultiDiGraph`` of ranks; :func:`schedule_figure` lays it out and draws it with Bokeh
(``from_networkx``).  What is drawn depends on what the schedule's builder recorded in
``schedule.meta``:

a :class:`~tuwviz.model.meta.TreeMeta` (``parent``: a parent rank per rank, -1 at the root)
    The tree is drawn in layers, root on top, with :func:`~tuwviz.viz.tree_layout` (an
    ordered tree gets rank ``i`` in column ``i``).  Tree edges are thick arrows in the
    direction data flows, labelled with their bytes (``meta.edge_bytes[i]`` for the
    edge of rank ``i``, else the bytes the programs send along it); an edge of zero bytes,
    where nothing is sent, is dotted.
its ``fixed_exchanges`` (``(iteration, a, b)`` triples)
    Thin double arrows between ``a`` and ``b``, one row per iteration below the tree, as
    in Figure 2 of the gatherv paper (Träff 2017).  If there are none, messages of kind
    ``"exchange"`` are drawn that way.
neither
    Every pair of ranks that communicates gets an arrow per message kind, labelled with
    the number of messages and bytes, ranks on a circle (rings, circulant graphs, ...).

Every figure keeps what it draws in named data sources (:func:`~tuwviz.viz.sources`):
``"nodes"`` (rank, block size, position) and ``"edges"`` (start, end, kind, style,
bytes, geometry), so tests assert on data, not pixels.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> from tuwviz.model import schedule
>>> s = schedule("gatherv", "linear", make_problem("gatherv", 4, "same", 10, root=2))
>>> g = schedule_graph(s)
>>> sorted(g.edges(data="nbytes"))
[(0, 2, 40), (1, 2, 40), (3, 2, 40)]
>>> fig = schedule_figure(s)
>>> sorted(sources(fig)["edges"].data["style"])
['tree', 'tree', 'tree']

References
----------
.. [1] J. L. Träff, "Linear-time, ordered gather trees for irregular collectives",
   EuroMPI 2017 (the gatherv paper), Figures 1 and 2.
"""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from ..model.meta import TreeMeta

from ._common import (
    KIND_COLORS,
    NODE_COLOR,
    NODE_RADIUS,
    ROOT_COLOR,
    block_bytes,
    block_counts,
    circular_layout,
    data_direction,
    sent_bytes,
    shorten,
    sources,
    tree_layout,
)
from ..model.program import Send, SendRecv

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import networkx as nx
    from bokeh.plotting import figure as Figure

    from ..model.program import Schedule

__all__ = ["EDGE_STYLES", "gather_tree_figure", "schedule_figure", "schedule_graph"]

#: How each edge style is drawn: line width, dash, colour, arrow heads (end, start).
#: ``tree``: data along a tree edge; ``zero``: a tree edge carrying no data;
#: ``exchange``: a two-way exchange (fixed roots); ``message``: other communication.
EDGE_STYLES: dict[str, dict] = {
    "tree": {"line_width": 4.0, "line_dash": "solid", "line_color": KIND_COLORS["data"],
             "head_end": 14, "head_start": 0},
    "zero": {"line_width": 2.0, "line_dash": "dotted", "line_color": KIND_COLORS["data"],
             "head_end": 11, "head_start": 0},
    "exchange": {"line_width": 1.5, "line_dash": "solid", "line_color": KIND_COLORS["exchange"],
                 "head_end": 9, "head_start": 9},
    "message": {"line_width": 2.0, "line_dash": "solid", "line_color": KIND_COLORS["data"],
                "head_end": 10, "head_start": 0},
    "info": {"line_width": 1.2, "line_dash": "dashed", "line_color": KIND_COLORS["info"],
             "head_end": 8, "head_start": 0},
}

# Above this p, block sizes and holdings are in the hover only (labels would overlap).
_MAX_LABELLED = 64

# Rows of exchange arrows below the tree: distance between rows, in layout units.
_ROW_GAP = 0.8


def schedule_graph(schedule: "Schedule", show_info: bool = False) -> "nx.MultiDiGraph":
    """The communication structure of `schedule` as a NetworkX multigraph of ranks.

    Parameters
    ----------
    schedule : Schedule
        Any model schedule; see the module docstring for the ``meta`` keys used.
    show_info : bool, optional
        With a tree, also add the ``"info"`` messages (e.g. fixed root to gather root in
        Lemma 2.3), aggregated per pair.

    Returns
    -------
    networkx.MultiDiGraph
        Nodes ``0..p-1`` with attributes ``m`` (block size in elements, None without a
        problem), ``nbytes`` and ``is_root``.  Edges point the way data flows and carry
        ``kind`` (``"data"``, ``"exchange"``, ``"info"``, ...), ``style`` (a key of
        :data:`EDGE_STYLES`), ``nbytes`` (total bytes), ``count`` (messages),
        ``iteration`` (exchanges; -1 otherwise) and ``double`` (two-way).
    """
    import networkx as nx

    g = nx.MultiDiGraph(collective=schedule.collective, algorithm=schedule.algorithm)
    counts, nbytes = block_counts(schedule), block_bytes(schedule)
    root = _root(schedule)
    for r in range(schedule.p):
        g.add_node(r, m=None if counts is None else counts[r],
                   nbytes=None if nbytes is None else nbytes[r], is_root=r == root)
    if isinstance(schedule.meta, TreeMeta):
        _add_tree(g, schedule)
        _add_exchanges(g, schedule)
        if show_info:
            _add_messages(g, schedule, kinds=("info",))
    else:
        _add_messages(g, schedule)
    return g


def schedule_figure(schedule: "Schedule", *, layout: dict | None = None,
                    title: str | None = None, show_info: bool = False,
                    edge_labels: bool | None = None, width: int | None = None,
                    height: int | None = None) -> "Figure":
    """Draw `schedule` as a graph with Bokeh: its tree if it has one, else its messages.

    Parameters
    ----------
    schedule : Schedule
        Any model schedule.
    layout : dict, optional
        ``{rank: (x, y)}``, e.g. any NetworkX layout; default: :func:`tree_layout` of
        ``meta.parent`` (a :class:`~tuwviz.model.meta.TreeMeta`), else
        :func:`circular_layout`.
    title : str, optional
        Figure title (default: collective, algorithm, p, root, distribution).
    show_info : bool, optional
        Also draw ``"info"`` messages next to a tree.
    edge_labels : bool, optional
        Write bytes next to edges (default: when there are at most 60 edges).
    width, height : int, optional
        Size in pixels (default: grows with p).

    Returns
    -------
    bokeh.plotting.figure
        With named sources ``"nodes"`` (columns ``index``, ``x``, ``y``, ``m``,
        ``nbytes``, ``label``, ``m_label``, ``fill_color``) and ``"edges"`` (``start``,
        ``end``, ``kind``, ``style``, ``nbytes``, ``count``, ``iteration``, ``double``,
        ``label``, ``xs``/``ys`` and arrow geometry ``x0, y0, x1, y1``).
    """
    from bokeh.models import (
        Arrow,
        HoverTool,
        LabelSet,
        StaticLayoutProvider,
        VeeHead,
    )
    from bokeh.plotting import from_networkx

    g = schedule_graph(schedule, show_info=show_info)
    is_tree = isinstance(schedule.meta, TreeMeta)
    pos = dict(layout) if layout is not None else (
        tree_layout(schedule.meta.parent) if is_tree else circular_layout(schedule.p))
    pos = {r: (float(x), float(y)) for r, (x, y) in pos.items()}
    rows = _exchange_rows(g, pos) if is_tree and layout is None else {}
    edges = _edge_columns(g, pos, rows)

    plot = from_networkx(g, pos)
    plot.layout_provider = StaticLayoutProvider(graph_layout=pos)
    nodes = plot.node_renderer.data_source
    nodes.name = "nodes"
    nodes.data.update(_node_columns(g, pos))
    esrc = plot.edge_renderer.data_source
    esrc.name = "edges"
    esrc.data = edges
    _style_graph(plot)

    fig = _blank_figure(pos, rows, title or _title(schedule), width, height)
    fig.renderers.append(plot)
    fig.add_layout(Arrow(source=esrc, x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                         line_alpha=0.0,
                         end=VeeHead(size={"field": "head_end"}, fill_color={"field": "line_color"},
                                     line_color={"field": "line_color"}),
                         start=VeeHead(size={"field": "head_start"},
                                       fill_color={"field": "line_color"},
                                       line_color={"field": "line_color"})))
    fig.add_layout(LabelSet(source=nodes, x="x", y="y", text="label", text_align="center",
                            text_baseline="middle", text_font_size="11pt",
                            text_font_style="bold"))
    if schedule.p <= _MAX_LABELLED:
        fig.add_layout(LabelSet(source=nodes, x="x", y="y_below", text="m_label",
                                text_align="center", text_baseline="top", y_offset=-2,
                                text_font_size="9pt", text_color="#333333"))
    if edge_labels is None:
        edge_labels = len(edges["start"]) <= 60
    if edge_labels:
        fig.add_layout(LabelSet(source=esrc, x="lx", y="ly", text="label", text_align="center",
                                text_baseline="middle", text_font_size="8pt",
                                text_color={"field": "line_color"},
                                background_fill_color="white", background_fill_alpha=0.8))
    if rows:
        _draw_rows(fig, rows, pos)
    fig.add_tools(HoverTool(renderers=[plot.node_renderer], tooltips=[
        ("rank", "@index"), ("block m_i", "@m_label"), ("bytes", "@nbytes")]))
    fig.add_tools(HoverTool(renderers=[plot.edge_renderer], line_policy="interp", tooltips=[
        ("edge", "@start → @end"), ("kind", "@kind"), ("bytes", "@nbytes"),
        ("messages", "@count"), ("iteration", "@iteration")]))
    return fig


def gather_tree_figure(schedule: "Schedule", *, title: str | None = None,
                       caption: bool = True, **kwargs) -> "Figure":
    """A gather/scatter tree in the style of Figure 2 of the gatherv paper.

    Ranks in rank order (an ordered tree keeps rank ``i`` in column ``i``), the root on
    top, block sizes ``m_i`` under the ranks; thick arrows are tree edges with their bytes,
    dotted arrows edges of size zero (no communication), and the thin double arrows below
    the tree the exchanges between fixed roots in each iteration of the tree
    construction (Lemma 2.3), from ``meta.fixed_exchanges``.

    Parameters
    ----------
    schedule : Schedule
        A schedule whose ``meta`` is a :class:`~tuwviz.model.meta.TreeMeta` (with, for the
        double arrows, ``fixed_exchanges``), e.g. the TUW gatherv schedule for p = 11, root 9.
    title : str, optional
        Figure title (default names the tree, p and root).
    caption : bool, optional
        Add a caption explaining the arrows below the figure.
    **kwargs
        Passed to :func:`schedule_figure`.

    Returns
    -------
    bokeh.plotting.figure

    Raises
    ------
    ValueError
        If the schedule's ``meta`` is no :class:`~tuwviz.model.meta.TreeMeta`.
    """
    from bokeh.models import Title

    if not isinstance(schedule.meta, TreeMeta):
        raise ValueError(f"{schedule.collective}/{schedule.algorithm}: the schedule has no "
                         "gather tree (a TreeMeta); use schedule_figure to draw its messages")
    root = _root(schedule)
    fig = schedule_figure(schedule, title=title or (
        f"{schedule.algorithm} {schedule.collective} tree, p = {schedule.p}, root {root}"),
        **kwargs)
    if caption:
        parts = ["Thick arrows: tree edges with their bytes", "dotted: size 0, no communication"]
        if any(k == "exchange" for k in sources(fig)["edges"].data["kind"]):
            parts.append("double arrows: exchanges between fixed roots, one row per iteration")
        fig.add_layout(Title(text="; ".join(parts) + ".", name="caption", text_font_size="9pt",
                             text_font_style="italic", text_color="#444444"), "below")
    return fig


# -- graph construction -----------------------------------------------------------------------
def _root(schedule: "Schedule") -> int | None:
    if schedule.problem is not None:
        return schedule.problem.root
    if isinstance(schedule.meta, TreeMeta):
        return schedule.meta.root
    return schedule.meta.get("root")  # a hand-made schedule's dict


def _add_tree(g, schedule: "Schedule") -> None:
    parent = schedule.meta.parent
    edge_bytes = schedule.meta.edge_bytes
    for child, q in enumerate(parent):
        if q is None or q < 0:
            continue
        up = data_direction(schedule, child, q)
        src, dst = (child, q) if up else (q, child)
        if edge_bytes is not None:
            nbytes = int(edge_bytes[child])
        else:
            nbytes = sent_bytes(schedule, src, dst)
        g.add_edge(src, dst, kind="data", style="tree" if nbytes > 0 else "zero",
                   nbytes=nbytes, count=_count(schedule, src, dst, "data"), iteration=-1,
                   double=False)


def _add_exchanges(g, schedule: "Schedule") -> None:
    # a tree built without recording its exchanges still has their messages
    triples = schedule.meta.fixed_exchanges or _exchanges_from_messages(schedule)
    for it, a, b in triples:
        nbytes = sent_bytes(schedule, a, b, "exchange") + sent_bytes(schedule, b, a, "exchange")
        g.add_edge(int(a), int(b), kind="exchange", style="exchange", nbytes=nbytes,
                   count=_count(schedule, a, b, "exchange") + _count(schedule, b, a, "exchange"),
                   iteration=int(it), double=True)


def _exchanges_from_messages(schedule: "Schedule") -> list[tuple[int, int, int]]:
    """(iteration, a, b) for ranks exchanging ``"exchange"`` messages; the iteration is
    the position of the exchange in the lower rank's program."""
    seen: dict[tuple[int, int], int] = {}
    for rank, program in enumerate(schedule.programs):
        k = 0
        for op in program:
            if op.__class__ in (Send, SendRecv) and getattr(op, "kind", "") == "exchange":
                peer = op.peer if type(op) is Send else op.send_peer
                pair = (min(rank, peer), max(rank, peer))
                if rank == pair[0] and pair not in seen:
                    seen[pair] = k
                k += 1
    return [(it, a, b) for (a, b), it in sorted(seen.items(), key=lambda kv: (kv[1], kv[0]))]


def _add_messages(g, schedule: "Schedule", kinds: tuple[str, ...] | None = None) -> None:
    """One edge per (src, dst, kind) of the programs' sends; two-way exchanges as one."""
    total: dict[tuple[int, int, str], list[int]] = defaultdict(lambda: [0, 0])
    for src, program in enumerate(schedule.programs):
        for op in program:
            if type(op) is Send:
                dst, n = op.peer, op.nbytes
            elif type(op) is SendRecv:
                dst, n = op.send_peer, op.send_nbytes
            else:
                continue
            if kinds is not None and op.kind not in kinds:
                continue
            cell = total[src, dst, op.kind]
            cell[0] += n
            cell[1] += 1
    for (src, dst, kind), (n, count) in sorted(total.items()):
        if kind == "exchange" and (dst, src, kind) in total:
            if src > dst:
                continue
            back = total[dst, src, kind]
            g.add_edge(src, dst, kind=kind, style="exchange", nbytes=n + back[0],
                       count=count + back[1], iteration=-1, double=True)
            continue
        style = "info" if kind == "info" else "message"
        g.add_edge(src, dst, kind=kind, style=style, nbytes=n, count=count, iteration=-1,
                   double=False)


def _count(schedule: "Schedule", src: int, dst: int, kind: str) -> int:
    n = 0
    for op in schedule.programs[src]:
        if type(op) is Send and op.peer == dst and op.kind == kind:
            n += 1
        elif type(op) is SendRecv and op.send_peer == dst and op.kind == kind:
            n += 1
    return n


# -- geometry and columns ---------------------------------------------------------------------
def _exchange_rows(g, pos: dict) -> dict[int, float]:
    """y of the row of each exchange iteration, below the lowest rank."""
    its = sorted({d["iteration"] for _, _, d in g.edges(data=True) if d["kind"] == "exchange"})
    if not its:
        return {}
    bottom = min(y for _, y in pos.values()) - 2 * NODE_RADIUS - 0.6
    return {it: bottom - k * _ROW_GAP for k, it in enumerate(its)}


def _edge_columns(g, pos: dict, rows: dict[int, float]) -> dict[str, list]:
    cols: dict[str, list] = defaultdict(list)
    pairs = {(u, v) for u, v in g.edges()}
    for u, v, d in g.edges(data=True):
        style = EDGE_STYLES[d["style"]]
        (xu, yu), (xv, yv) = pos[u], pos[v]
        if d["kind"] == "exchange" and d["iteration"] in rows:
            y = rows[d["iteration"]]
            x0, y0, x1, y1 = shorten(xu, y, xv, y, 0.08, 0.08)
        else:
            # opposite messages between the same ranks are drawn side by side
            offset = 0.07 if (v, u) in pairs and not d["double"] else 0.0
            x0, y0, x1, y1 = shorten(xu, yu, xv, yv, NODE_RADIUS + 0.04, NODE_RADIUS + 0.04,
                                     offset)
        cols["start"].append(u)
        cols["end"].append(v)
        for key in ("kind", "style", "nbytes", "count", "iteration", "double"):
            cols[key].append(d[key])
        for key, value in style.items():
            cols[key].append(value)
        cols["xs"].append([x0, x1])
        cols["ys"].append([y0, y1])
        for key, value in zip(("x0", "y0", "x1", "y1"), (x0, y0, x1, y1)):
            cols[key].append(value)
        cols["lx"].append((x0 + x1) / 2)
        cols["ly"].append((y0 + y1) / 2 + (0.12 if d["kind"] == "exchange" else 0.0))
        cols["label"].append(_edge_label(d))
    keys = ["start", "end", "kind", "style", "nbytes", "count", "iteration", "double",
            *EDGE_STYLES["tree"], "xs", "ys", "x0", "y0", "x1", "y1", "lx", "ly", "label"]
    return {k: list(cols.get(k, [])) for k in keys}


def _edge_label(d: dict) -> str:
    if d["style"] == "zero":
        return ""
    if d["kind"] == "exchange":  # drawn in a row per iteration, labelled at its start
        return ""
    text = f"{d['nbytes']} B"
    return f"{d['count']}× {text}" if d["count"] > 1 else text


def _node_columns(g, pos: dict) -> dict[str, list]:
    ranks = list(g.nodes)
    m = [g.nodes[r]["m"] for r in ranks]
    return {
        "index": ranks,
        "x": [pos[r][0] for r in ranks],
        "y": [pos[r][1] for r in ranks],
        "y_below": [pos[r][1] - NODE_RADIUS for r in ranks],
        "m": [-1 if v is None else v for v in m],
        "nbytes": [-1 if g.nodes[r]["nbytes"] is None else g.nodes[r]["nbytes"] for r in ranks],
        "label": [str(r) for r in ranks],
        "m_label": ["" if v is None else f"m={v}" for v in m],
        "fill_color": [ROOT_COLOR if g.nodes[r]["is_root"] else NODE_COLOR for r in ranks],
    }


def _draw_rows(fig, rows: dict[int, float], pos: dict) -> None:
    """Row labels, faint guides from each rank down through the rows, rank numbers below."""
    from bokeh.models import ColumnDataSource, LabelSet, Segment

    left = min(x for x, _ in pos.values()) - 0.5
    bottom = min(rows.values()) - 0.35
    labels = ColumnDataSource({"x": [left] * len(rows), "y": list(rows.values()),
                               "text": [f"iteration {it}" for it in rows]},
                              name="exchange_rows")
    fig.add_layout(LabelSet(source=labels, x="x", y="y", text="text", text_align="right",
                            text_baseline="middle", text_font_size="8pt",
                            text_color=KIND_COLORS["exchange"]))
    ranks = sorted(pos)
    guides = ColumnDataSource({
        "rank": ranks, "text": [str(r) for r in ranks],
        "x": [pos[r][0] for r in ranks], "y0": [pos[r][1] - NODE_RADIUS - 0.45 for r in ranks],
        "y1": [bottom] * len(ranks)}, name="rank_guides")
    fig.add_glyph(guides, Segment(x0="x", y0="y0", x1="x", y1="y1", line_color="#bbbbbb",
                                  line_dash="dotted", line_width=1))
    fig.add_layout(LabelSet(source=guides, x="x", y="y1", text="text", text_align="center",
                            text_baseline="top", text_font_size="8pt", text_color="#555555"))


def _style_graph(plot) -> None:
    from bokeh.models import Circle, MultiLine

    plot.node_renderer.glyph = Circle(radius=NODE_RADIUS, fill_color="fill_color",
                                      line_color="#333333", line_width=1.5)
    plot.node_renderer.hover_glyph = Circle(radius=NODE_RADIUS, fill_color="#ffd27f",
                                            line_color="#333333", line_width=2)
    plot.edge_renderer.glyph = MultiLine(line_color="line_color", line_width="line_width",
                                         line_dash="line_dash", line_alpha=0.9)
    plot.edge_renderer.hover_glyph = MultiLine(line_color="#ff7f0e", line_width="line_width",
                                               line_dash="line_dash")


def _blank_figure(pos: dict, rows: dict, title: str, width: int | None,
                  height: int | None, below_px: int = 40) -> "Figure":
    """An empty figure around the layout `pos` (plus exchange `rows`), no axes.

    One layout unit has the same length across and up (so circles stay round); there is
    room for `below_px` pixels of labels under the lowest ranks.
    """
    from bokeh.plotting import figure

    xs = [x for x, _ in pos.values()]
    ys = [y for _, y in pos.values()]
    pad = 0.9
    x_range = (min(xs) - pad - (1.2 if rows else 0), max(xs) + pad)
    width = width or int(min(1100, max(420, 62 * (x_range[1] - x_range[0]))))
    px = width / (x_range[1] - x_range[0])  # pixels per layout unit
    bottom = min(ys) - max(pad, (below_px + 8) / px)
    if rows:
        bottom = min(bottom, min(rows.values()) - max(pad, 24 / px))
    y_range = (bottom, max(ys) + max(pad, 24 / px))
    height = height or int(min(900, max(260, px * (y_range[1] - y_range[0]) + 40)))
    x_range, y_range = _keep_aspect(x_range, y_range, width, height - 40)
    fig = figure(title=title, width=width, height=height, x_range=x_range, y_range=y_range,
                 tools="pan,wheel_zoom,reset,save",
                 toolbar_location="right")
    fig.axis.visible = False
    fig.grid.visible = False
    fig.outline_line_color = None
    return fig


def _keep_aspect(x_range: tuple, y_range: tuple, width: int, height: int) -> tuple:
    """Widen one range so that a layout unit is as long across as up (round circles)."""
    (x0, x1), (y0, y1) = x_range, y_range
    span_x, span_y = x1 - x0, y1 - y0
    if span_y * width < span_x * height:  # too little y for the height: widen y
        extra = (span_x * height / width - span_y) / 2
        y0, y1 = y0 - extra, y1 + extra
    else:
        extra = (span_y * width / height - span_x) / 2
        x0, x1 = x0 - extra, x1 + extra
    return (x0, x1), (y0, y1)


def _title(schedule: "Schedule") -> str:
    parts = [f"{schedule.collective}/{schedule.algorithm}", f"p = {schedule.p}"]
    root = _root(schedule)
    if root is not None:
        parts.append(f"root {root}")
    pr = schedule.problem
    if pr is not None and pr.b is not None:
        parts.append(f"{pr.distribution}, b = {pr.b}")
    return ", ".join(parts)
