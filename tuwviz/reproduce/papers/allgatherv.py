"""The allgatherv paper's claims (Träff, Ripke, Siebert, Balaji, Thakur, Gropp, IJHPCA 2010),
checked.

Each claim is a ``measure_<id>`` (evidence: numbers only) and a ``judge_<id>`` (evidence
and the claim's data entry to a :class:`~tuwviz.reproduce.claims.Finding`, running
nothing); the published numbers and the tolerances and shapes, each with why, come from
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

import math
import random

from ... import model
from ...model import allgatherv as ag
from ...model.nodes import NodeNetwork, simulate_nodes
from ...problems import Problem, make_problem
from ..claims import (DERIVED, DIFFERS, IN_SHAPE, REPRODUCED, Finding, Value, judge_factor,
                      judge_range, rule)
from ._common import flat_costs, here, measure_here, model_us, network, ratio_text, smpi_bench

__all__ = ["closed_forms", "judge_eq1_rounds", "judge_eq2_block_size", "judge_fig5_block_size",
           "judge_fig4_other_panels", "judge_fig5_spike", "judge_geometric_5772",
           "judge_geometric_65536", "judge_geometric_96", "judge_geometric_processes",
           "judge_headline", "judge_permuted_communicator", "judge_pipelined_broadcast_vs_spike",
           "judge_regular_vs_half_full", "judge_ring_broadcast_vs_spike", "judge_smp_reranking",
           "measure_eq1_rounds", "measure_eq2_block_size", "measure_fig5_block_size",
           "measure_fig4_other_panels", "measure_fig5_spike", "measure_geometric_5772",
           "measure_geometric_65536", "measure_geometric_96", "measure_geometric_processes",
           "measure_headline", "measure_permuted_communicator",
           "measure_pipelined_broadcast_vs_spike", "measure_regular_vs_half_full",
           "measure_ring_broadcast_vs_spike", "measure_smp_reranking", "pipelined_bound",
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


def _ratio_rows(rows, dists, stat: str = "min_us") -> dict:
    """Per distribution, each algorithm's time (the paper reports minima)."""
    t = rows.pivot_table(index="distribution", columns="algorithm", values=stat)
    return {d: {a: float(t.loc[d, a]) for a in t.columns} for d in dists}


def measure_headline(ctx) -> dict:
    """Section 3.1: SX-8, 30 x 1, Broadcast 32 MB, B = 1 MB: model, SMPI and this machine."""
    e = ctx.claim("headline")
    p, c, bb = e["p"], e["c_bytes"], e["block_bytes"]
    pr = make_problem("allgatherv", p, "broadcast", c, datatype="byte")
    zero = (model.simulate(model.schedule("allgatherv", "ring", pr), 0, 1e-9).time
            / model.simulate(model.schedule("allgatherv", "pipelined", pr, block_bytes=bb),
                             0, 1e-9).time)
    net = network("sx8", p, ppn=1)
    nm = (model_us("allgatherv", "ring", pr, net)
          / model_us("allgatherv", "pipelined", pr, net, block_bytes=bb))
    rows = smpi_bench(ctx, "headline_smpi", "allgatherv", ["ring", "pipelined"], "sx8", p,
                      ["broadcast"], [c // 4], params={"block_bytes": [bb]}, ppn=1)
    t = _ratio_rows(rows, ["broadcast"])["broadcast"]
    pm = ctx.pick(4, 8)
    meas = measure_here(ctx, "headline_measured", "allgatherv", ["ring", "pipelined"], pm,
                        ["broadcast"], [c // 4], reps=ctx.pick(5, 20),
                        params={"block_bytes": [bb]})
    mt = _ratio_rows(meas, ["broadcast"])["broadcast"]
    return {"p": p, "zero": zero, "node_model": nm, "smpi": t["ring"] / t["pipelined"],
            "measured": mt["ring"] / mt["pipelined"], "pm": pm, "here": here(pm)}


def judge_headline(ev: dict, e: dict) -> Finding:
    """SMPI's linear ring / pipelined ring in the paper's range: more than `low`, at most
    the stated best possible `bound` (judge_range)."""
    sm, pm = ev["smpi"], ev["pm"]
    bound_here = 32 * (pm - 1) / (32 + pm - 2)
    vals = [Value("linear ring / pipelined ring", "paper", f"more than {e['low']:g}", "x",
                  "Section 3.1, 30 SX-8 nodes x 1"),
            Value("best possible: 32 x 29 / (29 + 31)", "formula", 32 * 29 / 60, "x",
                  "Section 3.1"),
            Value("linear ring / pipelined ring, alpha = 0", "model", ev["zero"], "x",
                  f"p = {ev['p']}, 32 MB, B = 1 MB, flat model"),
            Value("linear ring / pipelined ring", "model", ev["node_model"], "x",
                  "p = 30, node-aware model of sx8, 1 per node"),
            Value("linear ring / pipelined ring", "smpi", sm, "x",
                  "p = 30 on sx8, 1 per node, 32 MB (8 Mi ints), B = 1 MB"),
            Value(f"linear ring / pipelined ring (best possible at p = {pm}: "
                  f"{bound_here:.2f})", "measured", ev["measured"], "x",
                  ev["here"] + ", 32 MB, B = 1 MB")]
    verdict = judge_range(sm, e["low"], e["bound"] * (1 + rule(e, "bound_slack")))
    inside = verdict == REPRODUCED
    return Finding(verdict, f"SMPI on the SX-8 platform gives {sm:.1f}x, the node-aware model "
                            f"{ev['node_model']:.1f}x, the model without start-ups "
                            f"{ev['zero']:.2f}x (the paper's bound {e['bound']:.2f}x): "
                            + ("more than 10 and at most 15.47, as the paper says."
                               if inside else f"outside the paper's range {e['low']:g} to "
                                              f"{e['bound']:.2f}."), vals)


def _four(ctx, name: str, dists, c_bytes: int = 32 * MB, bb: int = MB) -> dict:
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
    return {"p": p, "c_bytes": c_bytes, "model": mod, "smpi": _ratio_rows(rows, dists)}


#: Figure 4's panels other than the headline's: (processes per node, distribution).
FIG4_OTHERS = ((1, "spike"), (1, "decreasing"), (1, "geometric"), (8, "broadcast"), (8, "spike"))


def measure_fig4_other_panels(ctx) -> dict:
    """Figure 4's other five panels: SX-8, 30 nodes with 1 and 8 processes each, 32 MB base
    data size, B = 1 MB: linear ring / pipelined ring under SMPI and in the node-aware
    model."""
    p_nodes, c, bb = 30, 32 * MB, MB
    out = {}
    for ppn in sorted({n for n, _ in FIG4_OTHERS}):
        dists = [d for n, d in FIG4_OTHERS if n == ppn]
        p = p_nodes * ppn
        net = network("sx8", p, ppn=ppn)
        rows = smpi_bench(ctx, f"fig4_smpi_{ppn}ppn", "allgatherv", ["ring", "pipelined"], "sx8",
                          p, dists, [c // 4], params={"block_bytes": [bb]}, ppn=ppn)
        t = _ratio_rows(rows, dists)
        for d in dists:
            pr = make_problem("allgatherv", p, d, c // 4)
            out[f"{d}, 30 x {ppn}"] = {
                "smpi": t[d]["ring"] / t[d]["pipelined"],
                "model": (model_us("allgatherv", "ring", pr, net)
                          / model_us("allgatherv", "pipelined", pr, net, block_bytes=bb))}
    return {"c_bytes": c, "block_bytes": bb, "panels": out}


def judge_fig4_other_panels(ev: dict, e: dict) -> Finding:
    """The pipelined ring faster by at least `significant` on every other panel under SMPI:
    reproduced; faster on every panel: in shape; otherwise it differs."""
    sig = rule(e, "significant")
    panels = ev["panels"]
    vals = [Value("pipelined ring's improvement on the other distributions", "paper",
                  "significant", "", e["source"])]
    for name, r in panels.items():
        where = f"sx8 {name.split(', ')[1]}, c = 32 MB, B = 1 MB"
        vals += [Value(f"linear ring / pipelined ring, {name}", "smpi", r["smpi"], "x", where),
                 Value(f"linear ring / pipelined ring, {name}", "model", r["model"], "x",
                       where + ", node-aware")]
    small = [f"{n} ({r['smpi']:.2f}x)" for n, r in panels.items() if r["smpi"] < sig]
    slower = [n for n, r in panels.items() if r["smpi"] <= 1]
    verdict = REPRODUCED if not small else IN_SHAPE if not slower else DIFFERS
    return Finding(verdict, f"Under SMPI the pipelined ring is "
                            f"{ratio_text(r['smpi'] for r in panels.values())}x faster than the "
                            f"linear ring on Figure 4's other panels (judged: 'significant' is "
                            f"at least {sig:g}x on each)"
                            + (f"; below that: {', '.join(small)}" if small else "")
                            + f". The node-aware model gives "
                              f"{ratio_text(r['model'] for r in panels.values())}x. The "
                              f"figure's numbers are not in the text.", vals)


def measure_ring_broadcast_vs_spike(ctx) -> dict:
    """Figure 4: both rings on Broadcast and Spike, 32 MB, SX-8 30 x 1."""
    return _four(ctx, "ring_bcast_spike_smpi", ["broadcast", "spike"])


def judge_ring_broadcast_vs_spike(ev: dict, e: dict) -> Finding:
    """The linear ring's Broadcast / Spike under SMPI against the paper's 2 (judge_factor
    within `rel`)."""
    where = f"p = {ev['p']}, c = 32 MB, sx8 1 per node"
    m = ev["model"]["broadcast"]["ring"] / ev["model"]["spike"]["ring"]
    s = ev["smpi"]["broadcast"]["ring"] / ev["smpi"]["spike"]["ring"]
    vals = [Value("linear ring: Broadcast / Spike", "paper", e["factor"], "x", e["source"]),
            Value("linear ring: Broadcast / Spike", "model", m, "x", where + ", node-aware"),
            Value("linear ring: Broadcast / Spike", "smpi", s, "x", where)]
    rel = rule(e, "rel")
    verdict = judge_factor(s, e["factor"], rel=rel)
    return Finding(verdict, f"The ring's rounds are bound by the largest block, c on Broadcast "
                            f"and c/2 on Spike: SMPI {s:.2f}x, model {m:.2f}x "
                            f"({'within' if verdict == REPRODUCED else 'not within'} "
                            f"{rel:.0%} of the paper's {e['factor']:g}).", vals)


def measure_pipelined_broadcast_vs_spike(ctx) -> dict:
    """Figure 4: both rings on Broadcast and Spike, with Eq. (1)'s rounds."""
    ev = _four(ctx, "pipe_bcast_spike_smpi", ["broadcast", "spike"])
    ev["rounds"] = {d: ag.rounds(make_problem("allgatherv", ev["p"], d, 32 * MB // 4).counts,
                                 MB // 4) for d in ("broadcast", "spike")}
    return ev


def judge_pipelined_broadcast_vs_spike(ev: dict, e: dict) -> Finding:
    """'Similar': the pipelined ring's Broadcast / Spike within `rel` of 1 is reproduced;
    the shape, closer to 1 than the linear ring's ratio (the penalty the paper contrasts it
    with), in shape; otherwise it differs."""
    rel = rule(e, "rel")
    where = f"p = {ev['p']}, c = 32 MB, B = 1 MB, sx8 1 per node"
    m = ev["model"]["broadcast"]["pipelined"] / ev["model"]["spike"]["pipelined"]
    s = ev["smpi"]["broadcast"]["pipelined"] / ev["smpi"]["spike"]["pipelined"]
    ring = ev["smpi"]["broadcast"]["ring"] / ev["smpi"]["spike"]["ring"]
    rb, rs = ev["rounds"]["broadcast"], ev["rounds"]["spike"]
    vals = [Value("pipelined ring: Broadcast / Spike", "paper", "similar (1)", "x", e["source"]),
            Value("pipelined ring: Broadcast / Spike", "model", m, "x", where + ", node-aware"),
            Value("pipelined ring: Broadcast / Spike", "smpi", s, "x", where),
            Value("linear ring: Broadcast / Spike", "smpi", ring, "x", where),
            Value("Eq. (1) rounds: Broadcast / Spike", "formula", rb / rs, "x",
                  f"{rb} and {rs} rounds of at most 1 MB")]
    if abs(s - 1) <= rel:
        verdict, how = REPRODUCED, f"within {rel:.0%} of 1: similar, as the paper says"
    elif abs(math.log(s)) < abs(math.log(ring)):
        verdict, how = IN_SHAPE, (f"closer to 1 than the linear ring's {ring:.2f}x, but not "
                                  f"within {rel:.0%}: Eq. (1) itself predicts {rb} against "
                                  f"{rs} rounds ({rb / rs:.2f}x), Broadcast's 32 pieces of 1 MB "
                                  f"crossing 29 hops, Spike's 16 pieces plus 29 small blocks")
    else:
        verdict, how = DIFFERS, (f"no closer to 1 than the linear ring's {ring:.2f}x: the "
                                 f"pipelined ring shows the same Broadcast penalty")
    return Finding(verdict, f"SMPI {s:.2f}x, model {m:.2f}x: {how}. The figure's numbers are "
                            f"not in the text.", vals)


def measure_regular_vs_half_full(ctx) -> dict:
    """Figure 4: both rings on Regular and Half full, SX-8 30 x 1."""
    return _four(ctx, "regular_half_full_smpi", ["regular", "half_full"],
                 c_bytes=ctx.pick(4 * MB, 32 * MB))


def judge_regular_vs_half_full(ev: dict, e: dict) -> Finding:
    """'Similar' on both: linear / pipelined within `rel` of 1 on Regular and on Half full
    (SMPI) is reproduced; otherwise it differs, naming where."""
    rel = rule(e, "rel")
    c = ev["c_bytes"]
    where = f"p = {ev['p']}, c = {c // MB} MB, B = 1 MB, sx8 1 per node"
    vals, ratio = [], {}
    for d in ("regular", "half_full"):
        ratio[d] = ev["smpi"][d]["ring"] / ev["smpi"][d]["pipelined"]
        vals += [Value(f"linear ring / pipelined ring, {d}", "paper", "similar (1)", "x",
                       e["source"]),
                 Value(f"linear ring / pipelined ring, {d}", "model",
                       ev["model"][d]["ring"] / ev["model"][d]["pipelined"], "x",
                       where + ", node-aware"),
                 Value(f"linear ring / pipelined ring, {d}", "smpi", ratio[d], "x", where)]
    similar = {d: abs(r - 1) <= rel for d, r in ratio.items()}
    text = "; ".join(f"{d.replace('_', ' ')} {r:.2f}x ({'similar' if similar[d] else 'not similar'})"
                     for d, r in ratio.items())
    why = ("" if similar["half_full"] else
           " On Half full the linear ring moves a 2c block in each of p - 1 rounds (2c (p - 1) "
           "per process), the pipelined ring only the m = pc that exist, so a one-ported "
           "network model predicts about 2x; what made the SX-8's ring as fast there (e.g. "
           "empty blocks skipped by its MPI) is not in the text.")
    return Finding(REPRODUCED if all(similar.values()) else DIFFERS,
                   f"Simulated, linear ring / pipelined ring: {text} (judged: within {rel:.0%} "
                   f"of 1).{why}", vals)


#: Figure 5's block sizes B (bytes) and its platform: 16 x 2 processes, InfiniBand.
FIG5_BLOCKS = (32 << 10, 64 << 10, 128 << 10, 512 << 10, 1 << 20)
FIG5 = "xeon-ib16x2"


def _fig5(ctx, name: str, dists) -> dict:
    """Figure 5: the linear ring and the pipelined ring at each of the paper's block sizes
    on `dists`, under SMPI and in the node-aware model of xeon-ib16x2 (16 x 2): per
    distribution and c (bytes) the ratio linear ring / pipelined ring per B."""
    p, ppn = 32, 2
    cs = ctx.pick([4 * MB], [4 * MB, 16 * MB])
    net = network(FIG5, p, ppn=ppn)
    mod, smpi = {}, {}
    for d in dists:
        mod[d], smpi[d] = {}, {}
        for c in cs:
            pr = make_problem("allgatherv", p, d, c // 4)
            ring = model_us("allgatherv", "ring", pr, net)
            mod[d][str(c)] = [ring / model_us("allgatherv", "pipelined", pr, net, block_bytes=b)
                              for b in FIG5_BLOCKS]
        rows = smpi_bench(ctx, f"{name}_{d}", "allgatherv", ["ring", "pipelined"], FIG5, p, [d],
                          [c // 4 for c in cs], params={"block_bytes": list(FIG5_BLOCKS)},
                          ppn=ppn)
        for c in cs:
            at = rows[rows.b == c // 4]
            ring = float(at[at.algorithm == "ring"].min_us.min())
            pipe = at[at.algorithm == "pipelined"]
            smpi[d][str(c)] = [ring / float(pipe[pipe.params.str.contains(f"block_bytes={b}\\b")]
                                            .min_us.min()) for b in FIG5_BLOCKS]
    return {"p": p, "ppn": ppn, "blocks": list(FIG5_BLOCKS), "scale": ctx.scale,
            "model": mod, "smpi": smpi}


def _fig5_values(ev: dict, d: str) -> tuple[list[Value], dict]:
    """The values and figure series of one distribution of Figure 5's evidence."""
    vals, series = [], {}
    colours = ["#d62728", "#ff7f0e", "#8c564b", "#e377c2"]
    kb = [b >> 10 for b in ev["blocks"]]
    for i, (c, ratios) in enumerate(ev["smpi"][d].items()):
        where = f"p = {ev['p']}, {FIG5} 16 x {ev['ppn']}, c = {int(c) // MB} MB"
        vals += [Value(f"linear ring / pipelined ring, {d}, B = {k} KB", "smpi", r, "x", where)
                 for k, r in zip(kb, ratios)]
        vals += [Value(f"linear ring / pipelined ring, {d}, B = {k} KB", "model", r, "x",
                       where + ", node-aware") for k, r in zip(kb, ev["model"][d][c])]
        series[f"{d}, c = {int(c) // MB} MB (SMPI)"] = {
            "x": kb, "y": ratios, "source": "smpi", "color": colours[i % len(colours)]}
        series[f"{d}, c = {int(c) // MB} MB (model)"] = {
            "x": kb, "y": ev["model"][d][c], "source": "model"}
    series["equal to the linear ring"] = {"x": [kb[0], kb[-1]], "y": [1, 1], "source": "formula",
                                          "color": "#999999"}
    return vals, series


def _fig5_figure(title: str, series: dict) -> dict:
    return {"title": title, "x_label": "block size B [KB]",
            "y_label": "linear ring / pipelined ring (above 1: pipelined faster)",
            "log_x": True, "series": series, "legend": "top_right"}


def measure_fig5_spike(ctx) -> dict:
    """Figure 5 (left): Spike on 16 x 2 processes, both rings, the paper's five B."""
    return _fig5(ctx, "fig5_smpi", ["spike"])


def judge_fig5_spike(ev: dict, e: dict) -> Finding:
    """The pipelined ring faster than the linear ring (by more than `margin`) for every
    block size and size simulated: reproduced; for most of them: in shape; otherwise it
    differs."""
    margin = rule(e, "margin")
    vals, series = _fig5_values(ev, "spike")
    cells = [(c, k, r) for c, rs in ev["smpi"]["spike"].items()
             for k, r in zip(ev["blocks"], rs)]
    slower = [f"B = {k >> 10} KB at c = {int(c) // MB} MB ({r:.2f}x)" for c, k, r in cells
              if r <= 1 + margin]
    verdict = (REPRODUCED if not slower else IN_SHAPE if len(slower) < len(cells) / 2
               else DIFFERS)
    rs = [r for _, _, r in cells]
    return Finding(verdict, f"Under SMPI on {FIG5}, Spike: linear ring / pipelined ring "
                            f"{ratio_text(rs)}x over the paper's five block sizes; the "
                            f"pipelined ring is faster by more than {margin:.0%} in "
                            f"{len(cells) - len(slower)} of {len(cells)}"
                            + (f" (not at {', '.join(slower)})" if slower else "")
                            + ". The figure's numbers are not in the text.", vals,
                   figure=_fig5_figure("Figure 5 (left): Spike, 16 x 2 processes", series),
                   scale_note="" if ev["scale"] == "paper" else
                   "Quick scale: c = 4 MB only (16 MB too at --scale paper).")


def measure_fig5_block_size(ctx) -> dict:
    """Figure 5 (right): Linearly decreasing, and Spike beside it for its best B."""
    return _fig5(ctx, "fig5_smpi", ["decreasing", "spike"])


def judge_fig5_block_size(ev: dict, e: dict) -> Finding:
    """On Linearly decreasing the smallest B makes the pipelined ring slower than the
    linear ring, and the best B differs from Spike's at the same c: reproduced; the smallest
    B the pipelined ring's worst on Linearly decreasing (too small hurts, but it still
    wins): in shape; otherwise it differs."""
    vals, series = _fig5_values(ev, "decreasing")
    kb = [b >> 10 for b in ev["blocks"]]
    dec, spike = ev["smpi"]["decreasing"], ev["smpi"]["spike"]
    slower = [c for c, rs in dec.items() if rs[0] < 1]
    worst = [c for c, rs in dec.items() if rs[0] == min(rs)]
    best = {c: (kb[max(range(len(kb)), key=dec[c].__getitem__)],
                kb[max(range(len(kb)), key=spike[c].__getitem__)]) for c in dec}
    differ = [c for c, (bd, bs) in best.items() if bd != bs]
    if slower and differ:
        verdict = REPRODUCED
    elif slower or worst:
        verdict = IN_SHAPE
    else:
        verdict = DIFFERS
    text = "; ".join(f"c = {int(c) // MB} MB: B = {kb[0]} KB gives {dec[c][0]:.2f}x (best "
                     f"{max(dec[c]):.2f}x at {best[c][0]} KB; Spike's best B {best[c][1]} KB)"
                     for c in dec)
    return Finding(verdict, f"Under SMPI on {FIG5}, Linearly decreasing, linear ring / "
                            f"pipelined ring: {text}. The smallest B is "
                            + ("slower than the linear ring" if slower else
                               "the pipelined ring's worst but still faster than the linear "
                               "ring" if worst else "neither slower than the linear ring nor "
                                                    "the worst block size")
                            + (", and the best B differs between the distributions"
                               if differ else ", and both distributions have the same best B")
                            + ". The figure's numbers are not in the text.", vals,
                   figure=_fig5_figure("Figure 5 (right): Linearly decreasing, 16 x 2 "
                                       "processes", series),
                   scale_note="" if ev["scale"] == "paper" else
                   "Quick scale: c = 4 MB only (16 MB too at --scale paper).")


def measure_permuted_communicator(ctx) -> dict:
    """Section 3.1: a randomly permuted communicator, 8 processes per SX-8 node (model)."""
    p, ppn, c, bb = 240, 8, MB // 4, MB
    base = network("sx8", p, ppn=ppn)
    rng = random.Random(2010)
    perm = list(range(p))
    rng.shuffle(perm)
    permuted = NodeNetwork(tuple(base.node[perm[i]] for i in range(p)), base.intra, base.inter,
                           True, base.label + ", randomly permuted")
    rows = []
    for d in ("broadcast", "regular"):
        pr = make_problem("allgatherv", p, d, c)
        for order in ("rank", "smp"):
            t = {}
            for net, key in ((base, "world"), (permuted, "permuted")):
                params = {"ring": order} | ({"nodes": list(net.node)} if order == "smp" else {})
                s = model.schedule("allgatherv", "pipelined", pr, block_bytes=bb, **params)
                t[key] = simulate_nodes(s, net).time
            rows.append({"distribution": d, "order": order, "ratio": t["permuted"] / t["world"]})
    return {"p": p, "ppn": ppn, "rows": rows}


def judge_permuted_communicator(ev: dict, e: dict) -> Finding:
    """'Almost identical': the re-ranked ring's permuted / MPI_COMM_WORLD within `rel` of 1.
    Re-ranked by node the ring is the same ring up to renaming on the model's homogeneous
    nodes, so this checks the construction (a derivation), not the SX-8."""
    rel = rule(e, "rel")
    vals = [Value("permuted / MPI_COMM_WORLD", "paper", "almost identical (1)", "x",
                  "Section 3.1")]
    for r in ev["rows"]:
        label = "re-ranked by node (Figure 1)" if r["order"] == "smp" else "in rank order"
        vals.append(Value(f"pipelined ring {label}, {r['distribution']}: permuted / "
                          f"MPI_COMM_WORLD", "model", r["ratio"], "x",
                          f"p = {ev['p']}, sx8 {ev['ppn']} per node, c = 1 MB, B = 1 MB, "
                          f"node-aware model"))
    worst = {o: max(max(r["ratio"], 1 / r["ratio"]) for r in ev["rows"] if r["order"] == o)
             for o in ("smp", "rank")}
    if worst["smp"] - 1 > rel:
        return Finding(DIFFERS, f"Re-ranked by node, a random permutation changes the model's "
                                f"time by up to {(worst['smp'] - 1) * 100:.1f} %, more than "
                                f"{rel:.0%}.", vals)
    return Finding(DERIVED, f"With the ring re-ranked by node (Section 2.3, as the paper's "
                            f"implementations do), a random permutation changes the model's "
                            f"time by at most {(worst['smp'] - 1) * 100:.1f} %: the construction "
                            f"makes every permutation the same ring on the model's identical "
                            f"nodes, so this checks the construction, not the SX-8 (SMPI does "
                            f"not run a permuted communicator here). A ring in the permuted "
                            f"rank order would be up to {worst['rank']:.1f}x slower (its "
                            f"processes share the node's one port).", vals)


def measure_eq1_rounds(ctx) -> dict:
    """Eq. (1) and Section 2.3's count for Figure 3's blocks; the schedules' rounds."""
    counts = tuple(ctx.claim("eq1_rounds")["counts"])
    pr = Problem("allgatherv", len(counts), 0, counts, datatype="byte", distribution="Figure 3")
    rank = model.schedule("allgatherv", "pipelined", pr, block_bytes=1, ring="rank")
    spread = model.schedule("allgatherv", "pipelined", pr, block_bytes=1, ring="spread")
    return {"eq1": ag.rounds(counts, 1), "section_2_3": ag.spread_rounds(counts, 1),
            "rank_rounds": rank.meta.rounds, "spread_slots": spread.meta.slots}


def judge_eq1_rounds(ev: dict, e: dict) -> Finding:
    """The schedule's rounds and the formulas equal Figure 3's 11 and 9: reproduced."""
    vals = [Value("r = b - min b_i", "paper", e["rounds"], "rounds", "Figure 3"),
            Value("rounds with the empty processes spread", "paper", e["spread_rounds"],
                  "rounds", "Figure 3"),
            Value("Eq. (1)", "formula", ev["eq1"], "rounds",
                  "Figure 3's blocks (inferred: " + e["inferred"] + ")"),
            Value("Section 2.3 count", "formula", ev["section_2_3"], "rounds", "Figure 3's blocks"),
            Value("rounds of the schedule (rank order)", "model", ev["rank_rounds"], "rounds",
                  "model schedule"),
            Value("rounds in time, empty processes spread", "model", ev["spread_slots"],
                  "rounds", "model schedule")]
    ok = (ev["rank_rounds"] == e["rounds"] == ev["eq1"]
          and ev["spread_slots"] == e["spread_rounds"] == ev["section_2_3"])
    return Finding(REPRODUCED if ok else DIFFERS,
                   f"The schedule built as the kernel runs has Eq. (1)'s {ev['rank_rounds']} "
                   f"rounds, and {ev['spread_slots']} in time with the empty processes spread "
                   f"(the paper: {e['rounds']} and {e['spread_rounds']})"
                   + ("." if ok else ": they differ."), vals)


EQ2_DISTRIBUTIONS = ("spike", "decreasing", "half_full")


def measure_eq2_block_size(ctx) -> dict:
    """Eq. (2)'s B against a model sweep over powers of two, 30 SX-8 nodes, on problems
    where Eq. (2) applies (some data everywhere or 0 < z < p - 1; Broadcast, z = p - 1, is
    Section 2.4's linear pipeline, another formula)."""
    p = 30
    alpha, beta = flat_costs("sx8")
    rows = []
    for d in EQ2_DISTRIBUTIONS:
        # about 32 MB in all, as Section 3.1 (Spike's c is the total, the others' per process)
        pr = make_problem("allgatherv", p, d, 32 * MB if d == "spike" else MB, datatype="byte")
        sweep = ag.block_sweep(pr, [1 << k for k in range(15, 25)], alpha=alpha, beta=beta)
        est = float(sweep.estimate_bytes[0])
        at = model.simulate(model.schedule("allgatherv", "pipelined", pr, block_bytes=int(est)),
                            alpha, beta).time * 1e6
        pipe = sweep[sweep.algorithm == "pipelined"]
        rows.append({"distribution": d, "m": sum(pr.nbytes(i) for i in range(p)),
                     "z": sum(pr.nbytes(i) == 0 for i in range(p)), "estimate": est,
                     "at_estimate_us": at, "sweep_b": [int(x) for x in pipe.block_bytes],
                     "sweep_us": [float(y) for y in pipe.time_us]})
    return {"p": p, "rows": rows}


def judge_eq2_block_size(ev: dict, e: dict) -> Finding:
    """The model's time at Eq. (2)'s B within `rel` of the sweep's best on every problem is
    reproduced; within `shape_rel` (the estimate near the optimum), in shape; beyond,
    differs."""
    rel, shape_rel = rule(e, "rel"), rule(e, "shape_rel")
    vals, series, worst, parts = [], {}, 1.0, []
    colours = ["#1f77b4", "#2ca02c", "#9467bd"]
    for i, r in enumerate(ev["rows"]):
        best = min(r["sweep_us"])
        ratio = r["at_estimate_us"] / best
        worst = max(worst, ratio)
        where = (f"p = {ev['p']}, {r['distribution']}, m = {r['m'] / MB:.0f} MB, z = {r['z']}, "
                 f"sx8 costs, flat model")
        vals += [Value("Eq. (2) estimate of B", "formula", r["estimate"], "B", where),
                 Value("best B of the sweep (powers of two)", "model",
                       r["sweep_b"][r["sweep_us"].index(best)], "B", where),
                 Value("time at the estimate / best time of the sweep", "model", ratio, "x",
                       where)]
        parts.append(f"{r['distribution'].replace('_', ' ')} {ratio:.3f}x")
        series[f"{r['distribution']} (model)"] = {"x": r["sweep_b"], "y": r["sweep_us"],
                                                  "source": "model", "color": colours[i % 3]}
        series[f"{r['distribution']}: Eq. (2)'s B (formula)"] = {
            "x": [r["estimate"]], "y": [r["at_estimate_us"]], "source": "formula",
            "color": colours[i % 3]}
    figure = {"title": "Pipelined ring against B (model), 30 SX-8 nodes, Eq. (2)'s B marked",
              "x_label": "block size B [bytes]", "y_label": "time [us]", "log_x": True,
              "log_y": True, "series": series}
    verdict = REPRODUCED if worst <= 1 + rel else IN_SHAPE if worst <= 1 + shape_rel else DIFFERS
    return Finding(verdict, f"The model's time at Eq. (2)'s B over the best power of two: "
                            f"{'; '.join(parts)} (judged: within {rel:.0%} reproduced, within "
                            f"{shape_rel:.0%} in shape). Eq. (2) assumes half the processes "
                            f"round their last block up, which the evenly divisible blocks of "
                            f"Half full do not.", vals, figure=figure)


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


def measure_smp_reranking(ctx) -> dict:
    """Figure 1: the linear ring in rank order and re-ranked by node, nodes of 1, 5, 2, 1,
    1, 1 processes (node-aware model)."""
    e = ctx.claim("smp_reranking")
    node = _placement(e["node_sizes"])
    p = len(node)
    plat_net = network("sx8", 2, ppn=1)
    pr = make_problem("allgatherv", p, "regular", MB // 4)
    net = NodeNetwork(tuple(node), plat_net.intra, plat_net.inter, True, "sx8 costs")
    out = {"node": node, "per_round": {}, "times_us": {}, "rings": {}}
    for order in ("rank", "smp"):
        params = {"ring": order} | ({"nodes": node} if order == "smp" else {})
        s = model.schedule("allgatherv", "ring", pr, **params)
        ring = out["rings"][order] = list(s.meta.ring)
        out["per_round"][order] = max(
            sum(1 for k, r in enumerate(ring) if node[r] == n and node[ring[(k + 1) % p]] != n)
            for n in range(len(e["node_sizes"])))
        out["times_us"][order] = simulate_nodes(s, net).time * 1e6
    out["optimal_us"] = (p - 1) * (plat_net.inter[0] + plat_net.inter[1] * MB) * 1e6
    return out


def judge_smp_reranking(ev: dict, e: dict) -> Finding:
    """Re-ranked: one process per node sending off-node per round, and the model's ring at
    the bandwidth-optimal (p - 1)(alpha + beta m'): reproduced; otherwise it differs."""
    node, per, times = ev["node"], ev["per_round"], ev["times_us"]
    p = len(node)
    vals = []
    for order, label in (("rank", "rank order"), ("smp", "re-ranked by node")):
        vals += [Value(f"most processes of one node sending off-node per round, {label}",
                       "model", per[order], "", f"nodes of {e['node_sizes']} processes, "
                       "ranks dealt round robin"),
                 Value(f"linear ring time, Regular 1 MB, {label}", "model", times[order], "us",
                       "node-aware model, sx8 costs, one port per node")]
    vals.append(Value("(p - 1)(alpha + beta m'): one message per port per round", "formula",
                      ev["optimal_us"], "us", "sx8 inter-node costs"))
    ok = per["smp"] == 1 and times["smp"] <= ev["optimal_us"] * 1.001
    figure = {"title": "Figure 1: node of each ring position, before and after re-ranking",
              "x_label": "position in the ring", "y_label": "node",
              "series": {"rank order (model)": {"x": list(range(p)), "y": node,
                                                "source": "model"},
                         "re-ranked by node (model)": {
                             "x": list(range(p)), "y": [node[r] for r in ev["rings"]["smp"]],
                             "source": "model", "color": "#d62728"}}}
    reason = (f"Re-ranked, every node has exactly one process sending to and one receiving "
              f"from another node per round, and the model's ring takes the bandwidth-optimal "
              f"(p - 1)(alpha + beta m'); in rank order up to {per['rank']} processes of a node "
              f"share its port ({times['rank'] / times['smp']:.1f}x slower)." if ok else
              f"Re-ranked, up to {per['smp']} processes of a node send off-node per round and "
              f"the model's ring takes {times['smp'] / ev['optimal_us']:.2f}x the "
              f"bandwidth-optimal time: not bandwidth optimal.")
    return Finding(REPRODUCED if ok else DIFFERS, reason, vals, figure=figure)


def _curve(ctx, name, plat, p, ppn, cs, bb, smpi_cs) -> dict:
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
        t = rows.pivot_table(index="b", columns="algorithm", values="min_us")
        smpi = {a: [float(t.loc[c, a]) for c in smpi_cs] for a in ("ring", "pipelined")}
    return {"cs": cs, "model": mod, "smpi_cs": smpi_cs, "smpi": smpi}


def _lead(ratios, e: dict, slight: float | None = None) -> tuple[str, str]:
    """A Geometric curve's verdict: the pipelined ring's lead grows (each point at least
    `grows` of the one before) and ends at `considerable` or more (and, with `slight`,
    starts at `slight` or less): reproduced; grows and ends above 1: in shape; otherwise it
    differs."""
    grows = all(b >= a * rule(e, "grows") for a, b in zip(ratios, ratios[1:]))
    first, last, considerable = ratios[0], ratios[-1], rule(e, "considerable")
    starts = slight is None or first <= slight
    if grows and last >= considerable and starts:
        return REPRODUCED, f"grows to {last:.2f}x (judged: at least {considerable:g}x)"
    if grows and last > 1:
        return IN_SHAPE, (f"grows to {last:.2f}x" + (f", not to {considerable:g}x"
                                                       if last < considerable else "")
                          + (f", but {first:.2f}x at the smallest c is more than slightly "
                             f"better" if not starts else ""))
    return DIFFERS, ("does not grow" if not grows else "grows") + f", to {last:.2f}x"


def _curve_figure(title, xs, mod, smpi_x, smpi, x_label="c (ints per process, base count)",
                  mod_source="model"):
    series = {f"{a} ({mod_source})": {"x": xs, "y": mod[a], "source": mod_source,
                                      "color": "#1f77b4" if a == "ring" else "#17becf"}
              for a in mod}
    for a, ys in smpi.items():
        series[f"{a} (SMPI)"] = {"x": smpi_x, "y": ys, "source": "smpi",
                                 "color": "#d62728" if a == "ring" else "#ff7f0e"}
    return {"title": title, "x_label": x_label, "y_label": "time [us]", "log_x": True,
            "log_y": True, "series": series}


def measure_geometric_96(ctx) -> dict:
    """Figure 6 (right): Geometric on 96 processes of the Gigabit cluster, B = 32 KB."""
    e = ctx.claim("geometric_96")
    cs = [10, 100, 1000, 10_000, 100_000]
    return _curve(ctx, "geometric_96_smpi", "anl-gige", e["p"], 4, cs, e["block_bytes"],
                  ctx.pick([100, 10_000], cs))


def judge_geometric_96(ev: dict, e: dict) -> Finding:
    """One rule (:func:`_lead` with `slight`): under SMPI the lead grows to `considerable`
    and starts 'only slightly better' (at most `slight`): reproduced; grows above 1: in
    shape; otherwise it differs."""
    cs, mod, smpi = ev["cs"], ev["model"], ev["smpi"]
    ratios = [r / q for r, q in zip(mod["ring"], mod["pipelined"])]
    sratios = [r / q for r, q in zip(smpi["ring"], smpi["pipelined"])]
    vals = [Value("pipelined ring's lead", "paper", "slight for small c, considerable for "
                  "large", "", e["source"])]
    vals += [Value(f"linear ring / pipelined ring, c = {c}", "model", r, "x",
                   "p = 96, anl-gige 24 x 4, node-aware") for c, r in zip(cs, ratios)]
    vals += [Value(f"linear ring / pipelined ring, c = {c}", "smpi", r, "x",
                   "p = 96, anl-gige 24 x 4") for c, r in zip(ev["smpi_cs"], sratios)]
    slight = rule(e, "slight")
    verdict, how = _lead(sratios, e, slight)
    return Finding(verdict, f"Under SMPI the pipelined ring's lead {how} ({sratios[0]:.2f}x at "
                            f"the smallest c; judged 'only slightly better' as at most "
                            f"{slight:g}x); the model gives {ratios[0]:.2f}x to "
                            f"{ratios[-1]:.2f}x. The figure's numbers are not in the text.",
                   vals, figure=_curve_figure("Figure 6 (right): Geometric, 96 processes, "
                                              "B = 32 KB", cs, mod, ev["smpi_cs"], smpi))


def measure_geometric_processes(ctx) -> dict:
    """Figure 7 (left): Geometric, c fixed, p varied on the Gigabit cluster."""
    e = ctx.claim("geometric_processes")
    bb, c = e["block_bytes"], 10_000
    ps = [8, 16, 32, 64, 96]
    mod = {"ring": [], "pipelined": []}
    for p in ps:
        net = network("anl-gige", p, ppn=4)
        pr = make_problem("allgatherv", p, "geometric", c)
        mod["ring"].append(model_us("allgatherv", "ring", pr, net))
        mod["pipelined"].append(model_us("allgatherv", "pipelined", pr, net, block_bytes=bb))
    sps = ctx.pick([16, 96], ps)
    smpi = {"ring": [], "pipelined": []}
    for p in sps:
        rows = smpi_bench(ctx, f"geometric_p{p}_smpi", "allgatherv", ["ring", "pipelined"],
                          "anl-gige", p, ["geometric"], [c], params={"block_bytes": [bb]}, ppn=4)
        t = rows.set_index("algorithm")["min_us"]
        for a in smpi:
            smpi[a].append(float(t[a]))
    return {"c": c, "ps": ps, "model": mod, "sps": sps, "smpi": smpi}


def judge_geometric_processes(ev: dict, e: dict) -> Finding:
    """The lead grows with p to a considerable one (:func:`_lead`), in the model (SMPI at
    two or five p beside it)."""
    ps, mod, smpi, c = ev["ps"], ev["model"], ev["smpi"], ev["c"]
    ratios = [r / q for r, q in zip(mod["ring"], mod["pipelined"])]
    sratios = [r / q for r, q in zip(smpi["ring"], smpi["pipelined"])]
    vals = [Value(f"linear ring / pipelined ring, p = {p}", "model", r, "x",
                  f"c = {c}, B = 32 KB, anl-gige 4 per node, node-aware")
            for p, r in zip(ps, ratios)]
    vals += [Value(f"linear ring / pipelined ring, p = {p}", "smpi", r, "x",
                   f"c = {c}, B = 32 KB, anl-gige 4 per node") for p, r in zip(ev["sps"], sratios)]
    verdict, how = _lead(ratios, e)
    slower = [p for p, r in zip(ps, ratios) if r < 1]
    reason = (f"In the model the pipelined ring's lead over the number of processes {how} "
              f"({ratios[0]:.2f}x at p = {ps[0]}; SMPI {ratio_text(sratios)}x), as the total "
              f"data m = pc grows"
              + (f"; at p = {', '.join(map(str, slower))} it is slower: 32 KB pieces cost a "
                 f"Gigabit start-up each" if slower else "")
              + ". The paper states no numbers for this panel; its conclusion (considerable "
                "improvements for irregular problems) is what is judged.")
    return Finding(verdict, reason, vals,
                   figure=_curve_figure("Figure 7 (left): Geometric, c = 10,000, B = 32 KB", ps,
                                        mod, ev["sps"], smpi, x_label="processes p"))


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


def measure_geometric_5772(ctx) -> dict:
    """Figure 9: Geometric on 5,772 SiCortex processes (closed forms of the flat model)."""
    e = ctx.claim("geometric_5772")
    cs = [8, 64, 512, 4096, 32768]
    ring, pipe = _closed_curve("sicortex", e["p"], cs, e["block_bytes"])
    return {"p": e["p"], "cs": cs, "ring": ring, "pipelined": pipe,
            "check": _closed_check("sicortex", e["block_bytes"])}


def judge_geometric_5772(ev: dict, e: dict) -> Finding:
    """'Significantly outperforms as the message size increases': :func:`_lead`."""
    cs, p = ev["cs"], ev["p"]
    ratios = [r / q for r, q in zip(ev["ring"], ev["pipelined"])]
    vals = [Value(f"linear ring / pipelined ring (bound), c = {c} B", "model", r, "x",
                  f"p = {p}, sicortex costs, flat model closed forms")
            for c, r in zip(cs, ratios)]
    vals.append(Value("closed form / simulation, p = 192, c = 4096 B", "model", ev["check"], "x",
                      "flat model: the closed forms are exact for the ring, an upper bound "
                      "for the pipelined ring"))
    verdict, how = _lead(ratios, e)
    return Finding(verdict, f"The pipelined ring's lead {how} ({ratios[0]:.2f}x at c = {cs[0]} "
                            f"B); closed forms of the flat model (SMPI and event simulation "
                            f"would need p(p - 1) = 33 million messages per call); the figure's "
                            f"numbers are not in the text.", vals,
                   figure=_curve_figure("Figure 9: Geometric, 5,772 processes, B = 32 KB "
                                        "(model closed forms)", cs,
                                        {"ring": ev["ring"], "pipelined": ev["pipelined"]}, [],
                                        {}, x_label="c [bytes]"),
                   scale_note="Model closed forms at the paper's p on both scales.")


def measure_geometric_65536(ctx) -> dict:
    """Figure 10: Geometric on Blue Gene/P, 65,536 processes, and against p at 64 bytes."""
    e = ctx.claim("geometric_65536")
    bb = e["block_bytes"]
    cs = [8, 64, 512, 4096, 32768]
    ring, pipe = _closed_curve("bgp", e["p"], cs, bb)
    ps = [1024, 4096, 16384, 65536]
    by_p = []
    for q in ps:
        r1, q1 = _closed_curve("bgp", q, [e["c_bytes"]], bb)
        by_p.append(r1[0] / q1[0])
    return {"p": e["p"], "cs": cs, "ring": ring, "pipelined": pipe, "ps": ps, "by_p": by_p}


def judge_geometric_65536(ev: dict, e: dict) -> Finding:
    """'Significantly outperforms' on both panels: the lead grows to a considerable one
    against the message size and against the system size at 64 bytes (:func:`_lead`, the
    worse of the two)."""
    cs, ps, p = ev["cs"], ev["ps"], ev["p"]
    ratios = [r / q for r, q in zip(ev["ring"], ev["pipelined"])]
    vals = [Value(f"linear ring / pipelined ring (bound), c = {c} B", "model", r, "x",
                  f"p = {p}, bgp costs, flat model closed forms") for c, r in zip(cs, ratios)]
    vals += [Value(f"linear ring / pipelined ring (bound), p = {q}, c = 64 B", "model", r, "x",
                   "bgp costs, flat model closed forms") for q, r in zip(ps, ev["by_p"])]
    v1, how1 = _lead(ratios, e)
    v2, how2 = _lead(ev["by_p"], e)
    order = (REPRODUCED, IN_SHAPE, DIFFERS)
    verdict = max(v1, v2, key=order.index)
    return Finding(verdict, f"Against the message size at p = {p} the lead {how1}; against the "
                            f"system size at 64 bytes it {how2}. Closed forms of the flat model "
                            f"(4.3 billion messages per linear-ring call rule out simulation); "
                            f"the figure's numbers are not in the text.", vals,
                   figure=_curve_figure("Figure 10 (left): Geometric, 65,536 processes, "
                                        "B = 32 KB (model closed forms)", cs,
                                        {"ring": ev["ring"], "pipelined": ev["pipelined"]}, [],
                                        {}, x_label="c [bytes]"),
                   scale_note="Model closed forms at the paper's p on both scales.")
