"""Notebook controls that redraw a schedule's tree and animation.

:func:`schedule_explorer` returns an ipywidgets box with controls for the algorithm, the
number of processes p, the root, the block-size distribution and the average block size
b; every change rebuilds the problem, the model schedule, its tree drawing
(:func:`~tuwviz.viz.schedule_figure`) and its animation
(:func:`~tuwviz.viz.animate_schedule`) and shows them below the controls.  All logic is in
:class:`ScheduleExplorer`, whose :meth:`~ScheduleExplorer.update` can be called directly
(as the tests do).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.meta import TreeMeta
from .. import model
from ..collectives import collective as collective_info
from ..problems import DISTRIBUTIONS, make_problem
from ..model.program import ScheduleError
from .animation import animate_schedule
from .circulant import CIRCULANT_ALGORITHMS, animate_circulant
from .graph import gather_tree_figure, schedule_figure
from .plots import show, use_inline

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import ipywidgets
    from bokeh.model import Model

    from ..model.program import Schedule
    from ..problems import Problem

__all__ = ["ScheduleExplorer", "schedule_explorer"]


class ScheduleExplorer:
    """Controls (p, root, distribution, b, algorithm) and the figures they produce.

    Parameters
    ----------
    collective : str
        The collective, e.g. ``"gatherv"``; its algorithms with a model schedule
        (:func:`tuwviz.model.algorithms`) fill the algorithm menu.
    algorithm : str, optional
        The algorithm shown first (default: the last registered one).
    p, root, distribution, b, seed : optional
        The first problem (:func:`tuwviz.make_problem`); root defaults to ``p // 2``.
    alpha, beta : float, optional
        Cost parameters of the animation's simulation.
    max_p : int, optional
        Largest p the slider offers.
    display : bool, optional
        Show the figures in :attr:`output` (set False to build them only).

    Attributes
    ----------
    widget : ipywidgets.VBox
        Controls, a status line and the output area; display it in a notebook.
    algorithm, p, root, distribution, b : ipywidgets widgets
        The controls.
    status : ipywidgets.HTML
        What is shown (problem, model time) or why nothing could be drawn.
    output : ipywidgets.Output
        Where the figures appear.
    problem : Problem or None
    schedule : Schedule or None
    figures : dict
        ``{"tree": figure, "animation": layout}`` of the last successful update; empty
        after an error.
    error : str or None
        The last error message.
    """

    def __init__(self, collective: str = "gatherv", algorithm: str | None = None, *,
                 p: int = 11, root: int | None = None, distribution: str = "random",
                 b: int = 4, seed: int = 0, alpha: float = 1.0, beta: float = 0.0,
                 max_p: int = 32, display: bool = True) -> None:
        import ipywidgets as w

        self.collective = collective_info(collective).name
        self.rooted = collective_info(collective).rooted
        names = model.algorithms(self.collective)
        if algorithm is not None:
            model.check_algorithm(self.collective, algorithm)
        self.seed, self.alpha, self.beta, self.display = seed, alpha, beta, display
        p = max(1, min(p, max_p))
        style = {"description_width": "initial"}
        narrow = w.Layout(width="250px")  # the row fits a notebook beside the file browser
        self.algorithm = w.Dropdown(options=names, value=algorithm or names[-1],
                                    description="algorithm", style=style, layout=narrow)
        self.distribution = w.Dropdown(options=list(DISTRIBUTIONS), value=distribution,
                                       description="distribution", style=style,
                                       layout=w.Layout(width="250px"))
        self.p = w.IntSlider(value=p, min=1, max=max_p, description="p", style=style)
        self.root = w.IntSlider(value=p // 2 if root is None else root, min=0, max=p - 1,
                                description="root", disabled=not self.rooted, style=style)
        self.b = w.BoundedIntText(value=b, min=0, max=10**7, description="b (elements)",
                                  style=style, layout=w.Layout(width="180px"))
        self.status = w.HTML()
        self.output = w.Output()
        self.widget = w.VBox([w.HBox([self.algorithm, self.distribution, self.b]),
                              w.HBox([self.p, self.root]), self.status, self.output])
        self.problem: Problem | None = None
        self.schedule: Schedule | None = None
        self.figures: dict[str, Model] = {}
        self.error: str | None = None
        self._updating = False
        for control in (self.algorithm, self.distribution, self.p, self.root, self.b):
            control.observe(self._changed, names="value")
        if display:
            use_inline()  # BokehJS in the cell's own output, not inside the Output widget
        self.update()

    def _changed(self, change) -> None:
        if self._updating:
            return
        if change["owner"] is self.p:
            self._updating = True  # clamping the root must not redraw twice
            try:
                self.root.max = max(self.p.value - 1, 0)
            finally:
                self._updating = False
        self.update()

    def update(self) -> dict[str, "Model"]:
        """Rebuild problem, schedule and figures from the controls, and show them.

        Returns
        -------
        dict
            :attr:`figures`; empty if the problem or schedule could not be built (the
            reason is in :attr:`error` and the status line).
        """

        try:
            problem = make_problem(self.collective, self.p.value, self.distribution.value,
                                   self.b.value, root=self.root.value if self.rooted else None,
                                   seed=self.seed)
            sched = model.schedule(self.collective, self.algorithm.value, problem)
            result = model.simulate(sched, self.alpha, self.beta)
            tree = (gather_tree_figure(sched) if isinstance(sched.meta, TreeMeta)
                    else schedule_figure(sched))
            if (sched.collective, sched.algorithm) in CIRCULANT_ALGORITHMS:
                anim = animate_circulant(sched)  # partial sums, not blocks, travel
            else:
                anim = animate_schedule(sched, result=result)
        except (ValueError, ScheduleError) as exc:
            self.problem = self.schedule = None
            self.figures = {}
            self.error = str(exc)
            self.status.value = (f"<span style='color:#b00'>cannot draw: "
                                 f"{_escape(self.error)}</span>")
        else:
            self.problem, self.schedule, self.error = problem, sched, None
            self.figures = {"tree": tree, "animation": anim}
            self.status.value = (f"{_escape(problem.label())}: {len(result.messages)} messages, "
                                 f"model time {result.time:g} (α = {self.alpha:g}, "
                                 f"β = {self.beta:g} per byte)")
        if self.display:
            self._render()
        return self.figures

    def _render(self) -> None:
        from bokeh.layouts import column
        from IPython.display import clear_output

        with self.output:
            clear_output(wait=True)
            if self.figures:
                show(column(self.figures["tree"], self.figures["animation"]))


def _escape(text: str) -> str:
    import html

    return html.escape(text)


def schedule_explorer(collective: str = "gatherv", algorithm: str | None = None,
                      **kwargs) -> "ipywidgets.VBox":
    """Notebook controls for p, root, distribution, b and algorithm, redrawing the figures.

    Parameters
    ----------
    collective : str, optional
        The collective whose model schedules to explore.
    algorithm : str, optional
        The algorithm shown first.
    **kwargs
        Passed to :class:`ScheduleExplorer` (``p``, ``root``, ``distribution``, ``b``,
        ``seed``, ``alpha``, ``beta``, ``max_p``).

    Returns
    -------
    ipywidgets.VBox
        The explorer's :attr:`~ScheduleExplorer.widget`; the explorer itself is its
        ``explorer`` attribute.
    """
    explorer = ScheduleExplorer(collective, algorithm, **kwargs)
    box = explorer.widget
    box.explorer = explorer
    return box
