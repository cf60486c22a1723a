"""Model predictions for several algorithms side by side, labelled as model results.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> pr = make_problem("gatherv", 8, "same", 100, root=0)
>>> df = predict("gatherv", ["linear"], [pr], alpha=1e-6, beta=1e-9)
>>> df[["algorithm", "p", "time_us", "source"]].to_dict("records")
[{'algorithm': 'linear', 'p': 8, 'time_us': 9.8, 'source': 'model'}]
"""
from __future__ import annotations

import time
from typing import Iterable

from ..problems import Problem
from . import schedule as build_schedule
from .simulate import simulate

__all__ = ["predict"]


def predict(
    collective: str,
    algorithms: Iterable[str],
    problems: Iterable[Problem],
    alpha: float = 1e-6,
    beta: float = 1e-9,
    gamma: float = 0.0,
):
    """Simulate each algorithm on each problem; one row per (algorithm, problem).

    Parameters
    ----------
    collective : str
        The collective (``"gatherv"``).
    algorithms : iterable of str
        Algorithms with a model schedule (see :data:`tuwviz.model.SCHEDULES`).
    problems : iterable of Problem
        Problem instances, e.g. from :func:`tuwviz.problems.make_problem` at paper scale.
    alpha, beta, gamma : float
        Seconds per message, per byte, per reduced element.

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm, p, root, distribution, b, m, m_prime, time_us,
        ratio_to_best, messages, source`` (always ``"model"``), ``alpha, beta, gamma``
        and ``wall_s`` (how long building and simulating took).
    """
    import pandas as pd

    rows = []
    for pr in problems:
        group = []
        for alg in algorithms:
            t0 = time.perf_counter()
            sched = build_schedule(collective, alg, pr)
            res = simulate(sched, alpha, beta, gamma)
            group.append({
                "algorithm": alg, "p": pr.p, "root": pr.root, "distribution": pr.distribution,
                "b": pr.b, "m": pr.m, "m_prime": pr.m_prime,
                "time_us": round(res.time * 1e6, 6), "messages": len(res.messages),
                "source": "model", "alpha": alpha, "beta": beta, "gamma": gamma,
                "wall_s": round(time.perf_counter() - t0, 3),
            })
        best = min(r["time_us"] for r in group)
        for r in group:
            r["ratio_to_best"] = r["time_us"] / best if best > 0 else 1.0
        rows.extend(group)
    cols = ["algorithm", "p", "root", "distribution", "b", "m", "m_prime", "time_us",
            "ratio_to_best", "messages", "source", "alpha", "beta", "gamma", "wall_s"]
    return pd.DataFrame(rows, columns=cols)
