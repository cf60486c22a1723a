"""Shared pieces of the visualizations: layouts, block sizes, colours, data sources.

Layouts are plain ``{rank: (x, y)}`` dictionaries, as NetworkX layouts are, so any
NetworkX layout can be passed where one is expected.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from ..model.program import Send, SendRecv

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from bokeh.model import Model
    from bokeh.models import ColumnDataSource

    from ..model.program import Schedule

__all__ = [
    "LEVEL_GAP",
    "NODE_RADIUS",
    "NOTEBOOK_WIDTH",
    "block_bytes",
    "block_counts",
    "circular_layout",
    "data_direction",
    "fit_row",
    "player_row",
    "sources",
    "tree_layout",
]

#: Radius of a rank's circle in layout units (ranks are 1 unit apart in a tree layout).
NODE_RADIUS = 0.28
#: Vertical distance between tree levels in layout units.
LEVEL_GAP = 1.4

#: Colours by edge/message kind; the paper's Figure 2 draws tree edges blue and the
#: fixed roots' exchanges black.
KIND_COLORS = {"data": "#1f5fbf", "exchange": "#222222", "info": "#8c8c8c"}
ROOT_COLOR = "#f2b134"
NODE_COLOR = "#dce8f7"
ACTIVE_COLOR = "#ff7f0e"

#: Width (px) a notebook output gets in JupyterLab 4 in a 1400-px window with the file
#: browser open (968 measured): panels that do not fit side by side in it are stacked.
NOTEBOOK_WIDTH = 940

# Bokeh's default margin around each child of a row (px, left and right together).
_ROW_MARGIN = 10

# Collectives whose data flow from the root down a tree (edges point parent -> child).
_DOWNWARD = ("scatter", "scatterv", "bcast")


def tree_layout(parent: Sequence[int],
                level_gap: float = LEVEL_GAP) -> dict[int, tuple[float, float]]:
    """Layered layout of a tree (or forest) given as a parent array, roots on top.

    Every rank gets its own column: an in-order walk that visits a rank's lower-ranked
    children, then the rank, then its higher-ranked children.  In an *ordered* tree (each
    subtree a consecutive rank range, as in the gatherv paper) this puts rank ``i`` in
    column ``i``; in any tree, subtrees occupy consecutive columns, so no edges cross.
    Rows are the depth below the root, ``level_gap`` apart.

    Parameters
    ----------
    parent : sequence of int
        ``parent[i]`` is the parent of rank ``i``, or -1 for a root.
    level_gap : float, optional
        Vertical distance between levels.

    Returns
    -------
    dict
        ``{rank: (x, y)}`` with ``x`` the column and ``y = -depth * level_gap``.

    Raises
    ------
    ValueError
        If `parent` names a rank out of range or has a cycle.

    Examples
    --------
    A star with root 2 (linear gather):

    >>> tree_layout([2, 2, -1, 2], level_gap=1.0)
    {0: (0.0, -1.0), 1: (1.0, -1.0), 2: (2.0, 0.0), 3: (3.0, -1.0)}
    """
    p = len(parent)
    children: list[list[int]] = [[] for _ in range(p)]
    roots = []
    for i, q in enumerate(parent):
        if q is None or q < 0:
            roots.append(i)
        elif not 0 <= q < p or q == i:
            raise ValueError(f"parent[{i}] = {q} is not a rank 0..{p - 1} other than {i}")
        else:
            children[q].append(i)
    pos: dict[int, tuple[float, float]] = {}
    column = 0
    for root in sorted(roots):
        # iterative in-order walk: (rank, depth, expanded?)
        stack = [(root, 0, False)]
        while stack:
            r, depth, expanded = stack.pop()
            if expanded:
                pos[r] = (float(column), -depth * level_gap)
                column += 1
                continue
            kids = sorted(children[r])
            for c in reversed([c for c in kids if c > r]):
                stack.append((c, depth + 1, False))
            stack.append((r, depth, True))
            for c in reversed([c for c in kids if c < r]):
                stack.append((c, depth + 1, False))
    if len(pos) != p:
        cyclic = sorted(set(range(p)) - set(pos))
        raise ValueError(f"parent array has a cycle through rank(s) {cyclic[:8]}")
    return {r: pos[r] for r in range(p)}


def circular_layout(p: int, radius: float | None = None) -> dict[int, tuple[float, float]]:
    """Ranks on a circle, rank 0 on top, increasing clockwise.

    The radius defaults to one that puts neighbours about 1.4 units apart (at least 1.5).

    Examples
    --------
    >>> {r: (round(x, 6), round(y, 6)) for r, (x, y) in circular_layout(4, 1.0).items()}
    {0: (0.0, 1.0), 1: (1.0, 0.0), 2: (0.0, -1.0), 3: (-1.0, -0.0)}
    """
    if radius is None:
        radius = max(1.5, 1.4 * p / (2 * math.pi))
    out = {}
    for r in range(p):
        a = math.pi / 2 - 2 * math.pi * r / max(p, 1)
        out[r] = (radius * math.cos(a), radius * math.sin(a))
    return out


def block_counts(schedule: "Schedule") -> list[int] | None:
    """Block sizes ``m_i`` in elements (as the collective sees them), None without a problem."""
    if schedule.problem is None:
        return None
    return list(schedule.problem.block_counts())


def block_bytes(schedule: "Schedule") -> list[int] | None:
    """Block sizes in bytes, None without a problem."""
    counts = block_counts(schedule)
    if counts is None:
        return None
    return [c * schedule.problem.itemsize for c in counts]


def data_direction(schedule: "Schedule", child: int, parent: int) -> bool:
    """True if data on the tree edge ``child -- parent`` flows up (child to parent).

    Decided by the bytes of ``"data"`` messages each way in the programs; when neither
    way carries data, by the collective (scatters and broadcasts flow down).
    """
    up = down = 0
    for op in _data_sends(schedule, child):
        if op[0] == parent:
            up += 1 + op[1]
    for op in _data_sends(schedule, parent):
        if op[0] == child:
            down += 1 + op[1]
    if up or down:
        return up >= down
    return schedule.collective not in _DOWNWARD


def _data_sends(schedule: "Schedule", rank: int) -> list[tuple[int, int]]:
    """(peer, nbytes) of every data send of `rank`."""
    out = []
    for op in schedule.programs[rank]:
        if type(op) is Send and op.kind == "data":
            out.append((op.peer, op.nbytes))
        elif type(op) is SendRecv and op.kind == "data":
            out.append((op.send_peer, op.send_nbytes))
    return out


def sent_bytes(schedule: "Schedule", src: int, dst: int, kind: str = "data") -> int:
    """Total bytes `src` sends to `dst` in messages of `kind`."""
    total = 0
    for op in schedule.programs[src]:
        if type(op) is Send and op.peer == dst and op.kind == kind:
            total += op.nbytes
        elif type(op) is SendRecv and op.send_peer == dst and op.kind == kind:
            total += op.send_nbytes
    return total


def shorten(x0: float, y0: float, x1: float, y1: float, gap0: float, gap1: float,
            offset: float = 0.0) -> tuple[float, float, float, float]:
    """The segment from (x0, y0) to (x1, y1) cut by `gap0`/`gap1` at its ends.

    `offset` shifts it sideways (to the right of its direction), so that two messages
    in opposite directions between the same ranks are drawn side by side.
    """
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy)
    if length == 0:
        return x0, y0, x1, y1
    ux, uy = dx / length, dy / length
    ox, oy = uy * offset, -ux * offset
    return (x0 + ux * gap0 + ox, y0 + uy * gap0 + oy, x1 - ux * gap1 + ox, y1 - uy * gap1 + oy)


def block_text(blocks) -> str:
    """Compact text for a set of block indices, e.g. ``0-2, 5``; ``-`` when empty.

    Examples
    --------
    >>> block_text([5, 0, 1, 2])
    '0-2, 5'
    """
    if blocks is None:
        return "?"
    items = sorted(blocks)
    if not items:
        return "-"
    parts = []
    start = prev = items[0]
    for b in items[1:] + [None]:
        if b is not None and b == prev + 1:
            prev = b
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if b is not None:
            start = prev = b
    return ", ".join(parts)


def sources(obj: "Model") -> dict[str, "ColumnDataSource"]:
    """The named data sources inside a Bokeh figure or layout, by name.

    The figures of :mod:`tuwviz.viz` name every source they draw from (``"nodes"``,
    ``"edges"``, ``"frames"``, ``"bars"``, ...), so tests and notebooks can read the data
    that is drawn.

    Parameters
    ----------
    obj : bokeh Model
        A figure or layout.

    Returns
    -------
    dict
        ``{name: ColumnDataSource}`` for every named source reachable from `obj`.
    """
    from bokeh.models import ColumnDataSource

    return {s.name: s for s in obj.select({"type": ColumnDataSource}) if s.name}


def fit_row(*panels: "Model") -> "Model":
    """The panels side by side if they fit :data:`NOTEBOOK_WIDTH`, else one below the other.

    Examples
    --------
    >>> from bokeh.plotting import figure
    >>> type(fit_row(figure(width=400), figure(width=400))).__name__
    'Row'
    >>> type(fit_row(figure(width=600), figure(width=400))).__name__
    'Column'
    """
    from bokeh.layouts import column, row

    total = sum((p.width or 0) + _ROW_MARGIN for p in panels)
    return row(*panels) if total <= NOTEBOOK_WIDTH else column(*panels)


def player_row(button: "Model", slider: "Model", label: "Model") -> "Model":
    """An animation's controls in one row: play button, step slider and the step's label,
    which gets the width left of :data:`NOTEBOOK_WIDTH` (at least 200 px)."""
    from bokeh.layouts import row

    label.width = max(200, NOTEBOOK_WIDTH - button.width - slider.width - 3 * _ROW_MARGIN)
    return row(button, slider, label)
