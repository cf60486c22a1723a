"""Visualizations of schedules and traces: static graphs, animations, timelines, widgets.

General machinery for any collective and any algorithm:

:func:`schedule_figure`, :func:`gather_tree_figure`
    A schedule drawn as a graph (NetworkX layout, Bokeh rendering): its tree, if its
    builder recorded one in ``meta["parent"]``, else its messages.
:func:`animate_schedule`
    A round-by-round animation with play/pause and a slider, each rank showing which
    blocks it holds; runs in the browser (CustomJS), so saved HTML files work too.
:func:`timeline_figure`, :func:`idle_times`
    A Gantt chart of a recorded trace (or a simulation) and each rank's waiting and idle
    time.
:func:`schedule_explorer`
    ipywidgets controls (p, root, distribution, b, algorithm) redrawing tree and animation.

All figures embed BokehJS (``INLINE`` resources): show them with :func:`tuwviz.plots.show`
and save them with :func:`tuwviz.plots.save_html`, never with Bokeh's CDN defaults.
Every figure names its data sources; :func:`sources` returns them.
"""
from ..plots import save_html, show
from ._common import block_text, circular_layout, sources, tree_layout
from .animation import animate_schedule, animation_frames
from .graph import EDGE_STYLES, gather_tree_figure, schedule_figure, schedule_graph
from .timeline import idle_times, sim_events, timeline_figure, trace_bars
from .widgets import ScheduleExplorer, schedule_explorer

__all__ = [
    "EDGE_STYLES",
    "ScheduleExplorer",
    "animate_schedule",
    "animation_frames",
    "block_text",
    "circular_layout",
    "gather_tree_figure",
    "idle_times",
    "save_html",
    "schedule_explorer",
    "schedule_figure",
    "schedule_graph",
    "show",
    "sim_events",
    "sources",
    "timeline_figure",
    "trace_bars",
    "tree_layout",
]
