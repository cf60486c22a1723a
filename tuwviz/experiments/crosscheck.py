"""The node-aware model against SimGrid's SMPI: each algorithm's predicted time beside its
simulated one, on one of the papers' platforms.

Two views of the same algorithm at a scale no machine here has: the model schedule
simulated by :func:`tuwviz.model.nodes.simulate_nodes` (the platform's nodes, its costs
inside and between nodes, one port per node) and the C kernel run by SMPI on the same
platform (:mod:`tuwviz.run.smpi`).  Where they agree, the model can answer the questions
SMPI takes too long for; where they do not, the reason is in how the two model a network
(see :func:`model_vs_smpi`).

The flat model's time (:func:`tuwviz.model.simulate.simulate` with the inter-node costs
everywhere) is in the table too: the difference is what nodes and ports change.
"""
from __future__ import annotations

from typing import Iterable

from .. import frames, model
from ..collectives import collective
from ..model.nodes import NodeNetwork, simulate_nodes
from ..model.simulate import simulate
from ..params import COST_PARAMS, uses_cost_model
from ..platforms import Platform
from ..platforms import platform as get_platform
from ..problems import make_problem
from ..run.smpi import DEFAULT_SELECTOR, smpi_backend
from ..table import load_table
from .bench import bench_cases, run_cases

__all__ = ["TOLERANCE", "model_vs_smpi", "on_platform"]

#: How far the node-aware model may be from SMPI and still agree: 25 %, the spread of the
#: papers' own repeated measurements of one algorithm on one machine.
TOLERANCE = 0.25


def on_platform(collective_name: str, algorithms: Iterable[str], platform: str | Platform,
                p: int, dists: Iterable[str] = ("same",), bs: Iterable[int] = (1000,), *,
                root: int | None = None, params: dict | None = None,
                groups: tuple[int, int] | None = None, b_b: Iterable[int] | None = None,
                ppn: int | None = None, selector: str = DEFAULT_SELECTOR,
                tolerance: float = TOLERANCE, reps: int = 2, stall_limit: float | None = None,
                progress: bool = False):
    """`algorithms` of one collective on `p` ranks of `platform` (or two groups `groups`):
    SMPI's simulated time and the node-aware model's, side by side, one row each.

    The C kernels run under SMPI (:func:`tuwviz.experiments.bench.bench`'s cases on
    :func:`tuwviz.run.smpi.smpi_backend`: median of `reps` repetitions after 1 warm-up;
    simulated times have no noise); each algorithm's model schedule is simulated by
    :func:`tuwviz.model.nodes.simulate_nodes` on the same placement, with the same
    parameters (the cost-model ones from the platform's inter-node alpha, beta, as bench
    gives them).  ``native`` (the library's collective, SMPI's) has no model: NaN.

    Returns
    -------
    pandas.DataFrame
        ``collective, algorithm, params, p, q, root, distribution, b, m, smpi_us, model_us,
        flat_model_us, model_over_smpi, within, platform, source``: ``within`` where
        ``|model / smpi - 1| <= tolerance`` (None without a model); ``flat_model_us`` is
        the model without nodes (the inter-node costs everywhere).

    Examples
    --------
    The allgatherv paper's SX-8, one process on each of 30 nodes (Section 3.1), as
    notebook 02 runs it (a few seconds)::

        on_platform("allgatherv", ["ring", "pipelined"], "sx8", 30, ["broadcast"],
                    [8 << 20], params={"block_bytes": 1 << 20}, ppn=1)
    """
    spec = dict(collective_name=collective(collective_name).name, algorithms=list(algorithms),
                dists=list(dists), bs=list(bs), root=root, params=params, groups=groups,
                b_b=list(b_b) if b_b is not None else None)
    return _compare([spec], get_platform(platform), p, ppn, selector, tolerance, reps,
                    stall_limit, progress)


def _compare(specs: list[dict], plat: Platform, p: int, ppn, selector, tolerance, reps,
             stall_limit, progress):
    """Run every spec's cases in one SMPI launch, then simulate each row's model."""
    backend = smpi_backend(plat, selector, stall_limit=stall_limit, ppn=ppn)
    cases = []
    for sp in specs:
        grid = {k: [v] for k, v in (sp["params"] or {}).items()}
        cases += bench_cases(sp["collective_name"], sp["algorithms"], [p], sp["dists"],
                             sp["bs"], sp["root"], reps=reps, warmup=1, params=grid or None,
                             groups=[sp["groups"]] if sp["groups"] else None, b_b=sp["b_b"],
                             cost=plat.cost)
    measured = run_cases(cases, backend=backend, progress=progress, desc="SMPI")
    given_by = {sp["collective_name"]: sp["params"] or {} for sp in specs}
    table = load_table()
    rows = []
    for _, row in measured.iterrows():
        name, alg = row["collective"], row["algorithm"]
        q = int(row["q"]) if "q" in row and row["q"] == row["q"] and row["q"] else 0
        root = int(row["root"]) if collective(name).rooted else None
        problem = make_problem(name, int(row["p"]), row["distribution"], int(row["b"]),
                               root=root, **({"q": q, "b_b": int(row["b_b"])} if q else {}))
        net = NodeNetwork.from_platform(plat, problem.size, ppn=ppn)
        node_us = flat_us = float("nan")
        if table.find(name, alg).model:
            taken = [x.name for x in table.find(name, alg).params]
            given = {k: v for k, v in given_by[name].items() if k in taken}
            if uses_cost_model(taken, given):  # Eq. (2) from the platform's alpha, beta
                given.update(zip(COST_PARAMS, plat.cost))
            s = model.schedule(name, alg, problem, **given)
            node_us = simulate_nodes(s, net).time * 1e6
            flat_us = simulate(s, *net.inter).time * 1e6
        smpi_us = float(row["median_us"])
        ratio = node_us / smpi_us if smpi_us > 0 else float("nan")
        rows.append({"collective": name, "algorithm": alg, "params": row["params"],
                     "p": int(row["p"]), "q": q, "root": root,
                     "distribution": row["distribution"],
                     "b": int(row["b"]), "m": int(row["m"]), "smpi_us": round(smpi_us, 3),
                     "model_us": round(node_us, 3), "flat_model_us": round(flat_us, 3),
                     "model_over_smpi": round(ratio, 3),
                     "within": bool(abs(ratio - 1) <= tolerance) if ratio == ratio else None,
                     "platform": row["platform"],
                     "source": "model (nodes) vs simulated (SMPI)"})
    return frames.FullFrame(rows)


def model_vs_smpi(platform: str | Platform, p: int, b: int = 1000, dist: str = "same",
                  collectives: Iterable[str] | None = None, *, ppn: int | None = None,
                  selector: str = DEFAULT_SELECTOR, tolerance: float = TOLERANCE,
                  stall_limit: float | None = None, progress: bool = False):
    """Every modelled one-group algorithm on `p` ranks of `platform`: :func:`on_platform`
    for each collective with model schedules (root 0, default parameters).

    Parameters
    ----------
    platform : str
        A platform name or ``.toml`` path (:func:`tuwviz.platforms.platform`).
    p, b, dist : int, int, str
        The problem: ranks, block size, distribution.
    collectives : iterable of str, optional
        Default: every collective with model schedules.
    ppn : int, optional
        Processes per node (default: one per core).
    tolerance : float
        ``within`` is True where ``|model / smpi - 1| <= tolerance``.

    Returns
    -------
    pandas.DataFrame
        :func:`on_platform`'s columns, all collectives.

    Notes
    -----
    Known differences between the two (the model is the papers' one-ported model):

    * the model holds a process for a message's whole alpha, so a root receiving p - 1
      messages one by one pays (p - 1) alpha; under SMPI the latencies overlap and only the
      per-message overhead is paid one by one (the linear Gather(v), Scatter(v));
    * SMPI shares a port's bandwidth between the messages crossing it, the model lets
      them pass one by one: the last one ends at the same time, earlier ones sooner;
    * likewise a process's own sends: the model's process sends one message after the
      other, SMPI lets the sends it posts at once share its bandwidth, so a root that posts
      all its children's subtrees at once delays the largest one, on the critical path (at
      p = 576 the Scatter(v) trees that do so take 1.7-1.8 times the model's time).

    At p = 64 on ``gatherv-ib36`` 26 of 28 algorithms agree within 25 %; at p = 576, 22.
    """
    plat = get_platform(platform)
    names = [collective(c).name for c in collectives] if collectives else [
        c for c in model.SCHEDULES if model.algorithms(c)]
    table = load_table()
    specs = []
    for coll in names:
        algs = []
        for a in model.algorithms(coll):
            try:
                table.find(coll, a).check_problem(p)
            except ValueError:
                continue  # e.g. recursive halving needs p a power of two
            algs.append(a)
        specs.append(dict(collective_name=coll, algorithms=algs, dists=[dist], bs=[b],
                          root=0 if collective(coll).rooted else None, params=None,
                          groups=None, b_b=None))
    # one SMPI launch for all of them: a communicator of p ranks is made once
    return _compare(specs, plat, p, ppn, selector, tolerance, 2, stall_limit, progress)
