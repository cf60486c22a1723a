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
:func:`compare_timelines`, :func:`comm_idle_figure`, :func:`idle_summary`
    Several algorithms' timelines on one time axis, and their total communication against
    idle time (the pipelined ring paper's Figures 8 and 7, right).

For the ring Allgatherv algorithms (Träff et al. 2010):

:func:`ring_figure`
    The processes on a ring with their pieces of at most B bytes (Figures 1 and 2).
:func:`ring_frames`, :func:`animate_ring`
    The pipeline replayed round by round, as data and as a slider/play animation of the
    ring and a grid of the pieces each process holds.
:func:`schedule_explorer`
    ipywidgets controls (p, root, distribution, b, algorithm) redrawing tree and animation.

For the circulant-graph reductions (Träff, Hunold, Vardas, Funk; :mod:`tuwviz.viz.circulant`):

:func:`circulant_figure`
    The circulant graph of p processes, one rank's to- and from-edges by round (Figure 1).
:func:`circulant_frames`, :func:`animate_circulant`
    The rounds replayed (from the model or a recorded trace) as data, checking that every
    input is added once, and animated: who has summed which inputs (Figure 2).

For the intergroup Allgather(v) (Kang, Träff et al.; :mod:`tuwviz.viz.intergroup`):

:func:`intergroup_figure`
    The exchange between the two groups as a bipartite graph (Figures 1-3).
:func:`intergroup_frames`, :func:`animate_intergroup`
    The steps replayed (model or recorded trace) and animated: exchange, then Allgathers.
:func:`improvement_figure`
    T_old / T_new over the message size per setting, model and measured (Figure 6).

For benchmark results (:mod:`tuwviz.viz.plots`):

:func:`~tuwviz.viz.plots.bench_figure`, :func:`~tuwviz.viz.plots.ratio_figure`
    Measured time, and time relative to the MPI library, against block size.
:func:`~tuwviz.viz.plots.time_vs_count_figure`, :func:`~tuwviz.viz.plots.time_vs_block_figure`
    The pipelined ring paper's Figures 4-6: time against base count and block size.

All figures embed BokehJS (``INLINE`` resources): show them with :func:`show` and save
them with :func:`save_html` (both from :mod:`tuwviz.viz.plots`), never with Bokeh's CDN
defaults.  Every figure names its data sources; :func:`sources` returns them.
"""
from ._common import block_text, circular_layout, sources, tree_layout
from .animation import animate_schedule, animation_frames
from .circulant import animate_circulant, circulant_figure, circulant_frames
from .graph import EDGE_STYLES, gather_tree_figure, schedule_figure, schedule_graph
from .intergroup import (animate_intergroup, improvement_figure, intergroup_figure,
                         intergroup_frames)
from .plots import save_html, show
from .ring import animate_ring, ring_figure, ring_frames
from .timeline import (
    comm_idle_figure,
    compare_timelines,
    idle_summary,
    idle_times,
    sim_events,
    timeline_figure,
    trace_bars,
)
from .widgets import ScheduleExplorer, schedule_explorer

__all__ = [
    "EDGE_STYLES",
    "ScheduleExplorer",
    "animate_circulant",
    "animate_intergroup",
    "animate_ring",
    "animate_schedule",
    "animation_frames",
    "block_text",
    "circulant_figure",
    "circulant_frames",
    "circular_layout",
    "comm_idle_figure",
    "compare_timelines",
    "gather_tree_figure",
    "idle_summary",
    "idle_times",
    "improvement_figure",
    "intergroup_figure",
    "intergroup_frames",
    "ring_figure",
    "ring_frames",
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
