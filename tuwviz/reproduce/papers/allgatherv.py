"""The allgatherv paper's claims (Träff, Ripke, Siebert, Balaji, Thakur, Gropp, IJHPCA 2010),
checked.

Each ``claim_<id>`` takes a :class:`tuwviz.reproduce.Context` and returns a
:class:`~tuwviz.reproduce.claims.Finding`; the published numbers come from
``data/allgatherv.toml``.  The paper's machines are SMPI platforms (``sx8``, ``anl-gige``,
``sicortex``, ``bgp``); the figures' numbers are not in the text, so curve claims are
checked for their shape.  At 5,772 and 65,536 processes no simulation is possible here
(the linear ring alone is p (p - 1) messages, 33 million and 4.3 billion per call); there
the flat model's closed forms answer, checked against simulation where it can run:
the linear ring takes exactly ``(p - 1)(alpha + beta m')`` (the largest block passes p - 1
send-receives, none costs more), the pipelined ring at most Eq. (1)'s rounds times
``alpha + beta B``.
"""
from __future__ import annotations

import random

from ... import model
from ...model import allgatherv as ag
from ...model.nodes import NodeNetwork, simulate_nodes
from ...problems import Problem, make_problem
from ..claims import DIFFERS, IN_SHAPE, REPRODUCED, Finding, Value, judge_factor, judge_range
from ._common import flat_costs, here, measure_here, model_us, network, smpi_bench

__all__ = ["claim_eq1_rounds", "claim_eq2_block_size", "claim_geometric_5772",
           "claim_geometric_65536", "claim_geometric_96", "claim_geometric_processes",
           "claim_headline", "claim_permuted_communicator", "claim_pipelined_broadcast_vs_spike",
           "claim_regular_vs_half_full", "claim_ring_broadcast_vs_spike", "claim_smp_reranking",
           "closed_forms", "pipelined_bound",
           "ring_closed_form"]

MB = 1 << 20


def ring_closed_form(nbytes, alpha: float, beta: float) -> float:
    """The linear ring's time in the flat one-ported model: ``(p - 1)(alpha + beta m')``.

    >>> ring_closed_form([4, 0, 0], 1.0, 0.5)
    6.0
    """
    return (len(nbytes) - 1) * (alpha + beta * max(nbytes))


def pipelined_bound(problem: Problem, block_bytes: int, alpha: float, beta: float) -> float:
    """Eq. (1)'s rounds times the dearest round, ``alpha + beta min(B, m')``: the pipelined
    ring's time at most (no round moves a larger piece).

    >>> from tuwviz.problems import make_problem
    >>> pr = make_problem("allgatherv", 4, "broadcast", 8, datatype="byte")
    >>> pipelined_bound(pr, 2, 1.0, 0.5)   # 4 pieces + 3 - 1 rounds of 1 + 0.5 * 2
    12.0
    """
    size = problem.itemsize
    b_el = max(1, block_bytes // size)
    piece = min(b_el, max(problem.counts)) * size
    return ag.rounds(problem.counts, b_el) * (alpha + beta * piece)


def closed_forms(problem: Problem, block_bytes: int, alpha: float, beta: float) -> tuple[float, float]:
    """(linear ring, pipelined ring bound) in seconds."""
    nb = [problem.nbytes(i) for i in range(problem.p)]
    return ring_closed_form(nb, alpha, beta), pipelined_bound(problem, block_bytes, alpha, beta)


def _ratio_rows(rows, dists) -> dict:
    t = rows.pivot_table(index="distribution", columns="algorithm", values="median_us")
    return {d: t.loc[d] for d in dists}


def claim_headline(ctx) -> Finding:
    """Section 3.1: SX-8, 30 x 1, Broadcast 32 MB, B = 1 MB."""
    e = ctx.claim("headline")
    p, c, bb = e["p"], e["c_bytes"], e["block_bytes"]
    vals = [Value("linear ring / pipelined ring", "paper", "more than 10", "x",
                  "Section 3.1, 30 SX-8 nodes x 1"),
            Value("best possible: 32 x 29 / (29 + 31)", "formula", 32 * 29 / 60, "x",
                  "Section 3.1")]
    pr = make_problem("allgatherv", p, "broadcast", c, datatype="byte")
    zero = (model.simulate(model.schedule("allgatherv", "ring", pr), 0, 1e-9).time
            / model.simulate(model.schedule("allgatherv", "pipelined", pr, block_bytes=bb),
                             0, 1e-9).time)
    vals.append(Value("linear ring / pipelined ring, alpha = 0", "model", zero, "x",
                      f"p = {p}, 32 MB, B = 1 MB, flat model"))
    net = network("sx8", p, ppn=1)
    nm = (model_us("allgatherv", "ring", pr, net)
          / model_us("allgatherv", "pipelined", pr, net, block_bytes=bb))
    vals.append(Value("linear ring / pipelined ring", "model", nm, "x",
                      "p = 30, node-aware model of sx8, 1 per node"))
    rows = smpi_bench(ctx, "headline_smpi", "allgatherv", ["ring", "pipelined"], "sx8", p,
                      ["broadcast"], [c // 4], params={"block_bytes": [bb]}, ppn=1)
    t = _ratio_rows(rows, ["broadcast"])["broadcast"]
    sm = t["ring"] / t["pipelined"]
    vals.append(Value("linear ring / pipelined ring", "smpi", sm, "x",
                      "p = 30 on sx8, 1 per node, 32 MB (8 Mi ints), B = 1 MB"))
    pm = ctx.pick(4, 8)
    meas = measure_here(ctx, "headline_measured", "allgatherv", ["ring", "pipelined"], pm,
                        ["broadcast"], [c // 4], reps=ctx.pick(5, 20),
                        params={"block_bytes": [bb]})
    mt = _ratio_rows(meas, ["broadcast"])["broadcast"]
    bound_here = 32 * (pm - 1) / (32 + pm - 2)
    vals.append(Value(f"linear ring / pipelined ring (best possible at p = {pm}: "
                      f"{bound_here:.2f})", "measured", mt["ring"] / mt["pipelined"], "x",
                      here(pm) + ", 32 MB, B = 1 MB"))
    verdict = judge_range(sm, e["low"], e["bound"] * 1.001)
    reason = (f"SMPI on the SX-8 platform gives {sm:.1f}x, the node-aware model {nm:.1f}x, "
              f"the model without start-ups exactly the paper's bound "
              f"{e['bound']:.2f}x: more than 10 and at most 15.47, as the paper says.")
    return Finding(verdict, reason, vals)


def _four(ctx, name: str, dists, c_bytes: int = 32 * MB, bb: int = MB) -> tuple[dict, dict, int]:
    """Model (node-aware, sx8 30 x 1) and SMPI times of both rings on `dists`."""
    p = 30
    net = network("sx8", p, ppn=1)
    mod = {}
    for d in dists:
        pr = make_problem("allgatherv", p, d, c_bytes // 4)
        mod[d] = {"ring": model_us("allgatherv", "ring", pr, net),
                  "pipelined": model_us("allgatherv", "pipelined", pr, net, block_bytes=bb)}
    rows = smpi_bench(ctx, name, "allgatherv", ["ring", "pipelined"], "sx8", p, dists,
                      [c_bytes // 4], params={"block_bytes": [bb]}, ppn=1)
    return mod, _ratio_rows(rows, dists), p


def claim_ring_broadcast_vs_spike(ctx) -> Finding:
    """Figure 4: the linear ring on Broadcast vs Spike."""
    e = ctx.claim("ring_broadcast_vs_spike")
    mod, sm, p = _four(ctx, "ring_bcast_spike_smpi", ["broadcast", "spike"])
    where = f"p = {p}, c = 32 MB, sx8 1 per node"
    m = mod["broadcast"]["ring"] / mod["spike"]["ring"]
    s = sm["broadcast"]["ring"] / sm["spike"]["ring"]
    vals = [Value("linear ring: Broadcast / Spike", "paper", e["factor"], "x", e["source"]),
            Value("linear ring: Broadcast / Spike", "model", m, "x", where + ", node-aware"),
            Value("linear ring: Broadcast / Spike", "smpi", s, "x", where)]
    verdict = judge_factor(s, e["factor"], rel=0.1)
    return Finding(verdict, f"The ring's rounds are bound by the largest block, c on Broadcast "
                            f"and c/2 on Spike: SMPI {s:.2f}x, model {m:.2f}x.", vals)


def claim_pipelined_broadcast_vs_spike(ctx) -> Finding:
    """Figure 4: the pipelined ring on Broadcast vs Spike."""
    e = ctx.claim("pipelined_broadcast_vs_spike")
    mod, sm, p = _four(ctx, "pipe_bcast_spike_smpi", ["broadcast", "spike"])
    where = f"p = {p}, c = 32 MB, B = 1 MB, sx8 1 per node"
    m = mod["broadcast"]["pipelined"] / mod["spike"]["pipelined"]
    s = sm["broadcast"]["pipelined"] / sm["spike"]["pipelined"]
    vals = [Value("pipelined ring: Broadcast / Spike", "paper", "similar (1)", "x", e["source"]),
            Value("pipelined ring: Broadcast / Spike", "model", m, "x", where + ", node-aware"),
            Value("pipelined ring: Broadcast / Spike", "smpi", s, "x", where)]
    pieces = {d: make_problem("allgatherv", p, d, 32 * MB // 4).counts for d in mod}
    rounds = {d: ag.rounds(c, MB // 4) for d, c in pieces.items()}
    vals.append(Value("Eq. (1) rounds: Broadcast / Spike", "formula",
                      rounds["broadcast"] / rounds["spike"], "x",
                      f"{rounds['broadcast']} and {rounds['spike']} rounds of at most 1 MB"))
    ring = sm["broadcast"]["ring"] / sm["spike"]["ring"]
    verdict = judge_factor(s, e["factor"], rel=0.2)
    if verdict == DIFFERS and s < ring:
        verdict = IN_SHAPE
    reason = (f"Much closer than the linear ring's {ring:.2f}x, but not equal: SMPI {s:.2f}x, "
              f"model {m:.2f}x, and Eq. (1) itself predicts {rounds['broadcast']} against "
              f"{rounds['spike']} rounds ({rounds['broadcast'] / rounds['spike']:.2f}x): "
              f"Broadcast's 32 pieces of 1 MB cross 29 hops, Spike's 16 pieces plus 29 small "
              f"blocks. The paper calls the two similar; its figure's numbers are not in the "
              f"text.")
    return Finding(verdict, reason, vals)


def claim_regular_vs_half_full(ctx) -> Finding:
    """Figure 4: both rings on Regular and on Half full."""
    e = ctx.claim("regular_vs_half_full")
    c = ctx.pick(4 * MB, 32 * MB)
    mod, sm, p = _four(ctx, "regular_half_full_smpi", ["regular", "half_full"], c_bytes=c)
    where = f"p = {p}, c = {c // MB} MB, B = 1 MB, sx8 1 per node"
    vals = []
    for d in ("regular", "half_full"):
        vals.append(Value(f"linear ring / pipelined ring, {d}", "paper", "similar (1)", "x",
                          e["source"]))
        vals.append(Value(f"linear ring / pipelined ring, {d}", "model",
                          mod[d]["ring"] / mod[d]["pipelined"], "x", where + ", node-aware"))
        vals.append(Value(f"linear ring / pipelined ring, {d}", "smpi",
                          sm[d]["ring"] / sm[d]["pipelined"], "x", where))
    half = sm["half_full"]["ring"] / sm["half_full"]["pipelined"]
    reg = sm["regular"]["ring"] / sm["regular"]["pipelined"]
    verdict = DIFFERS if judge_factor(half, 1.0, rel=0.2) == DIFFERS else judge_factor(reg, 1, 0.2)
    reason = (f"Regular agrees ({reg:.2f}x), Half full does not: SMPI and the model give "
              f"{half:.2f}x for the pipelined ring. On Half full the linear ring moves a 2c "
              f"block in each of p - 1 rounds (2c (p - 1) per process), the pipelined ring only "
              f"the m = pc that exist, so a one-ported network model must predict about 2x. "
              f"The paper measured no difference and gives no numbers; what made the SX-8's "
              f"ring faster there (e.g. empty blocks skipped by its MPI) is not in the text.")
    return Finding(verdict, reason, vals)


def claim_permuted_communicator(ctx) -> Finding:
    """Section 3.1: a randomly permuted communicator, 8 processes per SX-8 node."""
    p, ppn, c, bb = 240, 8, MB // 4, MB
    base = network("sx8", p, ppn=ppn)
    rng = random.Random(2010)
    perm = list(range(p))
    rng.shuffle(perm)
    permuted = NodeNetwork(tuple(base.node[perm[i]] for i in range(p)), base.intra, base.inter,
                           True, base.label + ", randomly permuted")
    vals, worst_smp, worst_rank = [], 1.0, 1.0
    for d in ("broadcast", "regular"):
        pr = make_problem("allgatherv", p, d, c)
        for order in ("rank", "smp"):
            t = {}
            for net, key in ((base, "world"), (permuted, "permuted")):
                params = {"ring": order} | ({"nodes": list(net.node)} if order == "smp" else {})
                s = model.schedule("allgatherv", "pipelined", pr, block_bytes=bb, **params)
                t[key] = simulate_nodes(s, net).time
            r = t["permuted"] / t["world"]
            if order == "smp":
                worst_smp = max(worst_smp, r, 1 / r)
            else:
                worst_rank = max(worst_rank, r, 1 / r)
            label = "re-ranked by node (Figure 1)" if order == "smp" else "in rank order"
            vals.append(Value(f"pipelined ring {label}, {d}: permuted / MPI_COMM_WORLD",
                              "model", r, "x", f"p = {p}, sx8 {ppn} per node, c = 1 MB, "
                              "B = 1 MB, node-aware model"))
    vals.insert(0, Value("permuted / MPI_COMM_WORLD", "paper", "almost identical (1)", "x",
                         "Section 3.1"))
    verdict = REPRODUCED if worst_smp < 1.05 else DIFFERS
    reason = (f"With the ring re-ranked by node (Section 2.3, as the paper's implementations "
              f"do), a random permutation changes the model's time by at most "
              f"{(worst_smp - 1) * 100:.1f} %; a ring in the permuted rank order would be up "
              f"to {worst_rank:.1f}x slower (its processes share the node's one port). SMPI "
              f"cannot place a permuted communicator here (its ranks follow the host file).")
    return Finding(verdict, reason, vals)


def claim_eq1_rounds(ctx) -> Finding:
    """Eq. (1) and Figure 3's 11 and 9 rounds."""
    e = ctx.claim("eq1_rounds")
    counts = tuple(e["counts"])
    pr = Problem("allgatherv", len(counts), 0, counts, datatype="byte", distribution="Figure 3")
    rank = model.schedule("allgatherv", "pipelined", pr, block_bytes=1, ring="rank")
    spread = model.schedule("allgatherv", "pipelined", pr, block_bytes=1, ring="spread")
    vals = [Value("r = b - min b_i", "paper", e["rounds"], "rounds", "Figure 3"),
            Value("rounds with the empty processes spread", "paper", e["spread_rounds"],
                  "rounds", "Figure 3"),
            Value("Eq. (1)", "formula", ag.rounds(counts, 1), "rounds", "Figure 3's blocks"),
            Value("Section 2.3 count", "formula", ag.spread_rounds(counts, 1), "rounds",
                  "Figure 3's blocks"),
            Value("rounds of the schedule (rank order)", "model", rank.meta.rounds, "rounds",
                  "model schedule"),
            Value("rounds in time, empty processes spread", "model", spread.meta.slots,
                  "rounds", "model schedule")]
    ok = (rank.meta.rounds == e["rounds"] == ag.rounds(counts, 1)
          and spread.meta.slots == e["spread_rounds"] == ag.spread_rounds(counts, 1))
    return Finding(REPRODUCED if ok else DIFFERS,
                   "The schedule built as the kernel runs has Eq. (1)'s 11 rounds, and 9 in "
                   "time with the empty processes spread." if ok else
                   "The schedule's rounds differ from Figure 3's.", vals)


def claim_eq2_block_size(ctx) -> Finding:
    """Eq. (2) against a model sweep over B, Broadcast of 32 MB on 30 SX-8 nodes."""
    p = 30
    alpha, beta = flat_costs("sx8")
    pr = make_problem("allgatherv", p, "broadcast", 32 * MB, datatype="byte")
    sweep = ag.block_sweep(pr, [1 << k for k in range(12, 26)], alpha=alpha, beta=beta)
    est = float(sweep.estimate_bytes[0])
    at_est = model.simulate(model.schedule("allgatherv", "pipelined", pr, block_bytes=int(est)),
                            alpha, beta).time * 1e6
    pipe = sweep[sweep.algorithm == "pipelined"]
    best = pipe.loc[pipe.time_us.idxmin()]
    where = f"p = {p}, Broadcast 32 MB, sx8 costs, flat model"
    vals = [Value("Eq. (2) estimate of B", "formula", est, "B", where),
            Value("best B of the sweep (powers of two)", "model", int(best.block_bytes), "B", where),
            Value("time at the estimate / best time of the sweep", "model",
                  at_est / best.time_us, "x", where)]
    ok = at_est <= best.time_us * 1.05
    figure = {"title": "Pipelined ring against B (model), Broadcast 32 MB, 30 SX-8 nodes",
              "x_label": "block size B [bytes]", "y_label": "time [us]", "log_x": True,
              "log_y": True,
              "series": {"pipelined ring (model)": {"x": [int(x) for x in pipe.block_bytes],
                                                    "y": list(pipe.time_us), "source": "model"},
                         "Eq. (2) estimate": {"x": [est, est],
                                              "y": [float(pipe.time_us.min()),
                                                    float(pipe.time_us.max())],
                                              "source": "formula"}}}
    return Finding(REPRODUCED if ok else DIFFERS,
                   f"At the estimate the model's time is {at_est / best.time_us:.3f} times that "
                   f"of the best power of two." if ok else
                   "The estimate is more than 5 % slower than the model's best B.", vals,
                   figure=figure)


def _placement(sizes) -> list[int]:
    """Ranks dealt to the nodes round robin (node ``k`` gets ``sizes[k]`` ranks), so
    neighbours in rank order sit on different nodes."""
    left, node = list(sizes), []
    while any(left):
        for k, n in enumerate(left):
            if n:
                node.append(k)
                left[k] -= 1
    return node


def claim_smp_reranking(ctx) -> Finding:
    """Figure 1: the ring re-ranked by node on nodes of 1, 5, 2, 1, 1, 1 processes."""
    e = ctx.claim("smp_reranking")
    node = _placement(e["node_sizes"])
    p = len(node)
    plat_net = network("sx8", 2, ppn=1)
    pr = make_problem("allgatherv", p, "regular", MB // 4)
    net = NodeNetwork(tuple(node), plat_net.intra, plat_net.inter, True, "sx8 costs")
    vals, per_round, times, rings = [], {}, {}, {}
    for order in ("rank", "smp"):
        params = {"ring": order} | ({"nodes": node} if order == "smp" else {})
        s = model.schedule("allgatherv", "ring", pr, **params)
        ring = rings[order] = s.meta.ring
        off = [sum(1 for k, r in enumerate(ring) if node[r] == n and node[ring[(k + 1) % p]] != n)
               for n in range(len(e["node_sizes"]))]
        per_round[order] = max(off)
        times[order] = simulate_nodes(s, net).time * 1e6
        label = "re-ranked by node" if order == "smp" else "rank order"
        vals.append(Value(f"most processes of one node sending off-node per round, {label}",
                          "model", per_round[order], "", f"nodes of {e['node_sizes']} processes, "
                          "ranks dealt round robin"))
        vals.append(Value(f"linear ring time, Regular 1 MB, {label}", "model", times[order],
                          "us", "node-aware model, sx8 costs, one port per node"))
    optimal = (p - 1) * (plat_net.inter[0] + plat_net.inter[1] * MB)
    vals.append(Value("(p - 1)(alpha + beta m'): one message per port per round", "formula",
                      optimal * 1e6, "us", "sx8 inter-node costs"))
    ok = per_round["smp"] == 1 and times["smp"] <= optimal * 1e6 * 1.001
    figure = {"title": "Figure 1: node of each ring position, before and after re-ranking",
              "x_label": "position in the ring", "y_label": "node",
              "series": {"rank order": {"x": list(range(p)), "y": node, "source": "model"},
                         "re-ranked by node": {"x": list(range(p)),
                                               "y": [node[r] for r in rings["smp"]],
                                               "source": "formula", "color": "#d62728"}}}
    reason = (f"Re-ranked, every node has exactly one process sending to and one receiving "
              f"from another node per round, and the model's ring takes the bandwidth-optimal "
              f"(p - 1)(alpha + beta m'); in rank order up to {per_round['rank']} processes of "
              f"a node share its port ({times['rank'] / times['smp']:.1f}x slower)."
              if ok else "The re-ranked ring is not bandwidth optimal in the model.")
    return Finding(REPRODUCED if ok else DIFFERS, reason, vals, figure=figure)


def _curve(ctx, name, plat, p, ppn, cs, bb, smpi_cs) -> tuple[list, dict, dict]:
    """Model (node-aware) and SMPI times of both rings, Geometric, against c (ints)."""
    net = network(plat, p, ppn=ppn)
    mod = {"ring": [], "pipelined": []}
    for c in cs:
        pr = make_problem("allgatherv", p, "geometric", c)
        mod["ring"].append(model_us("allgatherv", "ring", pr, net))
        mod["pipelined"].append(model_us("allgatherv", "pipelined", pr, net, block_bytes=bb))
    smpi = {}
    if smpi_cs:
        rows = smpi_bench(ctx, name, "allgatherv", ["ring", "pipelined"], plat, p, ["geometric"],
                          smpi_cs, params={"block_bytes": [bb]}, ppn=ppn)
        t = rows.pivot_table(index="b", columns="algorithm", values="median_us")
        smpi = {a: [float(t.loc[c, a]) for c in smpi_cs] for a in ("ring", "pipelined")}
    return cs, mod, smpi


def _shape(ratios) -> tuple[str, str]:
    grows = all(b >= a * 0.95 for a, b in zip(ratios, ratios[1:]))
    if ratios[-1] > 1.5 and grows:
        return IN_SHAPE, "grows with the data size"
    return DIFFERS, "does not grow with the data size"


def _curve_figure(title, xs, mod, smpi_x, smpi, x_label="c (ints per process, base count)"):
    series = {f"{a} (model)": {"x": xs, "y": mod[a], "source": "model",
                               "color": "#1f77b4" if a == "ring" else "#17becf"}
              for a in mod}
    for a, ys in smpi.items():
        series[f"{a} (SMPI)"] = {"x": smpi_x, "y": ys, "source": "smpi",
                                 "color": "#d62728" if a == "ring" else "#ff7f0e"}
    return {"title": title, "x_label": x_label, "y_label": "time [us]", "log_x": True,
            "log_y": True, "series": series}


def claim_geometric_96(ctx) -> Finding:
    """Figure 6 (right): Geometric on 96 processes of the Gigabit cluster, B = 32 KB."""
    e = ctx.claim("geometric_96")
    p, bb = e["p"], e["block_bytes"]
    cs = [10, 100, 1000, 10_000, 100_000]
    smpi_cs = ctx.pick([100, 10_000], cs)
    xs, mod, smpi = _curve(ctx, "geometric_96_smpi", "anl-gige", p, 4, cs, bb, smpi_cs)
    ratios = [r / q for r, q in zip(mod["ring"], mod["pipelined"])]
    sratios = [r / q for r, q in zip(smpi["ring"], smpi["pipelined"])]
    vals = [Value("pipelined ring's lead", "paper", "slight for small c, considerable for "
                  "large", "", e["source"])]
    vals += [Value(f"linear ring / pipelined ring, c = {c}", "model", r, "x",
                   "p = 96, anl-gige 24 x 4, node-aware") for c, r in zip(cs, ratios)]
    vals += [Value(f"linear ring / pipelined ring, c = {c}", "smpi", r, "x",
                   "p = 96, anl-gige 24 x 4") for c, r in zip(smpi_cs, sratios)]
    verdict, how = _shape(sratios)
    return Finding(verdict, f"The ratio {how} under SMPI ({sratios[0]:.2f}x to "
                            f"{sratios[-1]:.2f}x) and in the model ({ratios[0]:.2f}x to "
                            f"{ratios[-1]:.2f}x); the figure's numbers are not in the text.",
                   vals, figure=_curve_figure("Figure 6 (right): Geometric, 96 processes, "
                                              "B = 32 KB", xs, mod, smpi_cs, smpi))


def claim_geometric_processes(ctx) -> Finding:
    """Figure 7 (left): Geometric, c fixed, p varied on the Gigabit cluster."""
    e = ctx.claim("geometric_processes")
    bb, c = e["block_bytes"], 10_000
    ps = [8, 16, 32, 64, 96]
    ratios, mod = [], {"ring": [], "pipelined": []}
    for p in ps:
        net = network("anl-gige", p, ppn=4)
        pr = make_problem("allgatherv", p, "geometric", c)
        mod["ring"].append(model_us("allgatherv", "ring", pr, net))
        mod["pipelined"].append(model_us("allgatherv", "pipelined", pr, net, block_bytes=bb))
        ratios.append(mod["ring"][-1] / mod["pipelined"][-1])
    sps = ctx.pick([16, 96], ps)
    smpi = {"ring": [], "pipelined": []}
    for p in sps:
        rows = smpi_bench(ctx, f"geometric_p{p}_smpi", "allgatherv", ["ring", "pipelined"],
                          "anl-gige", p, ["geometric"], [c], params={"block_bytes": [bb]}, ppn=4)
        t = rows.set_index("algorithm")["median_us"]
        for a in smpi:
            smpi[a].append(float(t[a]))
    sratios = [r / q for r, q in zip(smpi["ring"], smpi["pipelined"])]
    vals = [Value(f"linear ring / pipelined ring, p = {p}", "model", r, "x",
                  f"c = {c}, B = 32 KB, anl-gige 4 per node, node-aware")
            for p, r in zip(ps, ratios)]
    vals += [Value(f"linear ring / pipelined ring, p = {p}", "smpi", r, "x",
                   f"c = {c}, B = 32 KB, anl-gige 4 per node") for p, r in zip(sps, sratios)]
    verdict, how = _shape(ratios)
    slower = [p for p, r in zip(ps, ratios) if r < 1]
    reason = (f"The pipelined ring's lead {how.replace('data size', 'number of processes')} "
              f"(model {ratios[0]:.2f}x at p = {ps[0]} to {ratios[-1]:.2f}x at {ps[-1]}, SMPI "
              f"{sratios[0]:.2f}x to {sratios[-1]:.2f}x), as the total data m = pc grows"
              + (f"; at p = {', '.join(map(str, slower))} it is slower: 32 KB pieces cost "
                 f"a Gigabit start-up each" if slower else "")
              + "; the figure's numbers are not in the text.")
    return Finding(verdict, reason, vals,
                   figure=_curve_figure("Figure 7 (left): Geometric, c = 10,000, B = 32 KB", ps,
                                        mod, sps, smpi, x_label="processes p"))


def _closed_curve(plat: str, p: int, cs, bb: int):
    alpha, beta = flat_costs(plat)
    ring, pipe = [], []
    for c in cs:
        pr = make_problem("allgatherv", p, "geometric", c, datatype="byte")
        r, q = closed_forms(pr, bb, alpha, beta)
        ring.append(r * 1e6)
        pipe.append(q * 1e6)
    return ring, pipe


def _closed_check(plat: str, bb: int, p: int = 192, c: int = 4096) -> float:
    """Closed form / simulation of the flat model at a size it can simulate (both rings,
    the larger deviation)."""
    alpha, beta = flat_costs(plat)
    pr = make_problem("allgatherv", p, "geometric", c, datatype="byte")
    r, q = closed_forms(pr, bb, alpha, beta)
    sr = model.simulate(model.schedule("allgatherv", "ring", pr), alpha, beta).time
    sq = model.simulate(model.schedule("allgatherv", "pipelined", pr, block_bytes=bb),
                        alpha, beta).time
    return max(r / sr, q / sq)


def claim_geometric_5772(ctx) -> Finding:
    """Figure 9: Geometric on 5,772 SiCortex processes (closed forms of the flat model)."""
    e = ctx.claim("geometric_5772")
    p, bb = e["p"], e["block_bytes"]
    cs = [8, 64, 512, 4096, 32768]
    ring, pipe = _closed_curve("sicortex", p, cs, bb)
    ratios = [r / q for r, q in zip(ring, pipe)]
    check = _closed_check("sicortex", bb)
    vals = [Value(f"linear ring / pipelined ring (bound), c = {c} B", "formula", r, "x",
                  f"p = {p}, sicortex costs, flat model closed forms")
            for c, r in zip(cs, ratios)]
    vals.append(Value("closed form / simulation, p = 192, c = 4096 B", "model", check, "x",
                      "flat model: the closed forms are exact for the ring, an upper bound "
                      "for the pipelined ring"))
    verdict, how = _shape(ratios)
    return Finding(verdict, f"The pipelined ring's lead {how} ({ratios[0]:.2f}x to "
                            f"{ratios[-1]:.0f}x); closed forms of the flat model (SMPI and "
                            f"event simulation would need p(p - 1) = 33 million messages per "
                            f"call); the figure's numbers are not in the text.", vals,
                   figure=_curve_figure("Figure 9: Geometric, 5,772 processes, B = 32 KB "
                                        "(closed forms)", cs, {"ring": ring, "pipelined": pipe},
                                        [], {}, x_label="c [bytes]"),
                   scale_note="Model closed forms at the paper's p on both scales.")


def claim_geometric_65536(ctx) -> Finding:
    """Figure 10: Geometric on Blue Gene/P, 65,536 processes, and against p at 64 bytes."""
    e = ctx.claim("geometric_65536")
    p, bb, c64 = e["p"], e["block_bytes"], e["c_bytes"]
    cs = [8, 64, 512, 4096, 32768]
    ring, pipe = _closed_curve("bgp", p, cs, bb)
    ratios = [r / q for r, q in zip(ring, pipe)]
    ps = [1024, 4096, 16384, 65536]
    by_p = []
    for q in ps:
        r1, q1 = _closed_curve("bgp", q, [c64], bb)
        by_p.append(r1[0] / q1[0])
    vals = [Value(f"linear ring / pipelined ring (bound), c = {c} B", "formula", r, "x",
                  f"p = {p}, bgp costs, flat model closed forms") for c, r in zip(cs, ratios)]
    vals += [Value(f"linear ring / pipelined ring (bound), p = {q}, c = 64 B", "formula", r, "x",
                   "bgp costs, flat model closed forms") for q, r in zip(ps, by_p)]
    verdict, how = _shape(ratios)
    by_p_verdict, by_p_how = _shape(by_p)
    if by_p_verdict == DIFFERS:
        verdict = DIFFERS
    return Finding(verdict, f"The pipelined ring's lead {how} ({ratios[0]:.2f}x to "
                            f"{ratios[-1]:.0f}x) and at 64 bytes it {by_p_how.replace('data size', 'system size')} "
                            f"({by_p[0]:.1f}x to {by_p[-1]:.1f}x); closed forms of the flat "
                            f"model (4.3 billion messages per linear-ring call rule out "
                            f"simulation); the figure's numbers are not in the text.", vals,
                   figure=_curve_figure("Figure 10 (left): Geometric, 65,536 processes, "
                                        "B = 32 KB (closed forms)", cs,
                                        {"ring": ring, "pipelined": pipe}, [], {},
                                        x_label="c [bytes]"),
                   scale_note="Model closed forms at the paper's p on both scales.")
