"""Record the messages a kernel really sends, on real MPI ranks.

Every kernel communicates through the ``TUW_`` wrappers of ``kernels_c/common``, which
record each message (peer, bytes, blocks, time) when tracing is on.  :func:`trace` runs
one traced call per problem and returns, per problem, each rank's events: what
:func:`tuwviz.analysis.optimality.schedule_from_trace` turns into a schedule for the optimality
checks and the animations of :mod:`tuwviz.viz`.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> (events,) = trace([make_problem("gather", 4, "same", 10, root=2)], "binomial")
>>> len(events), sorted({e["dir"] for rank in events for e in rank})
(4, ['recv', 'send'])

Several algorithms in one run, one per problem:

>>> pr = make_problem("gather", 3, "same", 1)
>>> [len(ev) for ev in trace([pr, pr], ["binomial", "divide_conquer"])]
[3, 3]
"""
from __future__ import annotations

from typing import Iterable, Sequence

from ..problems import Problem
from .launch import Backend, mpiexec_backend

__all__ = ["trace", "trace_cases"]


def trace(problems: Iterable[Problem], algorithm: str | Sequence[str],
          params: dict | None = None,
          backend: Backend | None = None,
          stall_limit: float | None = None) -> list[list[list[dict]]]:
    """Run `algorithm` once per problem with tracing on; events per problem, per rank.

    Parameters
    ----------
    problems : iterable of Problem
        The problems (any p up to the machine's rank limit; one mpiexec run for all).
    algorithm : str or sequence of str
        A registered algorithm (or a workspace's, while ``TUWVIZ_WORKSPACE`` is set), or
        one per problem: many algorithms, still one run.
    params : dict, optional
        Its tuning parameters (:mod:`tuwviz.params`).
    backend : callable, optional
        Where to run (default: fresh ranks under mpiexec; a cluster's ``run_cases``).
    stall_limit : float, optional
        Seconds without progress before a hung kernel is stopped (mpiexec only).

    For a two-group problem (``q > 0``) events name processes by their place in the
    problem (a_i is ``i``, b_j is ``p + j``) in ``rank`` and ``peer``, and keep what the
    kernel saw: ``group`` and ``peer_group`` (``"A"``, ``"B"``), ``local_rank`` and
    ``local_peer``, and ``remote`` (sent over the inter-communicator).

    Raises
    ------
    RankFailure
        If a rank crashes or the kernel hangs (the case is named).
    """
    problems = list(problems)
    cases = trace_cases(problems, algorithm, params)
    if not cases:
        return []
    found: dict[int, list] = {}

    def on_result(i, case, events):
        found[i] = events

    nranks = max(pr.size for pr in problems)  # p, or p + q for two groups
    (backend or mpiexec_backend(stall_limit))(nranks, cases, on_result)
    return [found[i] for i in range(len(cases))]


def trace_cases(problems: Iterable[Problem], algorithm: str | Sequence[str],
                params: dict | None = None) -> list[dict]:
    """The cases :func:`trace` runs, for a job that runs other cases too
    (:func:`tuwviz.experiments.verify.run_verify`'s `also`); arguments as :func:`trace`'s.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> [c["mode"] for c in trace_cases([make_problem("gather", 4, "same", 1)], "binomial")]
    ['trace']
    """
    problems = list(problems)
    algs = [algorithm] * len(problems) if isinstance(algorithm, str) else list(algorithm)
    if len(algs) != len(problems):
        raise ValueError(f"{len(algs)} algorithms for {len(problems)} problems: give one, "
                         f"or one per problem")
    return [{"mode": "trace", "problem": pr.to_dict(), "algorithm": alg,
             "params": params or {}} for pr, alg in zip(problems, algs)]
