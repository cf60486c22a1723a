"""The gatherv paper's claims (Träff, EuroMPI/USA 2017), checked.

Each ``claim_<id>`` takes a :class:`tuwviz.reproduce.Context` and returns a
:class:`~tuwviz.reproduce.claims.Finding`; the published numbers come from
``data/gatherv.toml``.  Paper-scale runs use the paper's two clusters as SMPI platforms
(``gatherv-ib36``: 35 x 16 = 560 processes; ``vsc3``: 400 x 16 = 6,400) and the node-aware
model on the same placement; the root is ``floor(p / 2)`` as in Section 5.
"""
from __future__ import annotations

from ... import model
from ...analysis.guidelines import gatherv_table
from ...analysis.guidelines.measure import measure_missing
from ...model import ordered_hypercube as oh
from ...model.simulate import simulate
from ...platforms import platform
from ...problems import Problem, make_problem
from ...run.smpi import smpi_backend
from ..claims import (DIFFERS, IN_SHAPE, NOT_HERE, REPRODUCED, Finding, Value, judge_range)
from ._common import clog2, flat_costs, here, measure_here, model_us, network, ratio_text, smpi_bench

__all__ = ["claim_binomial_worst_case", "claim_guideline2_560", "claim_guideline_6400",
           "claim_headline", "claim_k_ported", "claim_large_blocks", "claim_theorem_2_4"]

#: The paper's problem types; the four irregular ones with every m_i > 0.
PROBLEMS = ("same", "random", "spikes", "decreasing", "alternating", "two_blocks")
IRREGULAR = ("random", "spikes", "decreasing", "alternating")
SMALL, LARGE = "gatherv-ib36", "vsc3"
P_SMALL, P_LARGE = 560, 6400


def claim_headline(ctx) -> Finding:
    """Section 5: TUW_Gatherv 5 to more than 20 times faster than the libraries'."""
    e = ctx.claim("headline")
    vals = []
    for t in ("table1", "table2", "table3"):
        df = ctx.paper.table(t)
        for _, row in df[(df.b == 1) & df.problem.isin(IRREGULAR)].iterrows():
            vals.append(Value(f"MPI_Gatherv / TUW_Gatherv, {row.problem}, b = 1 (min)", "paper",
                              row.gatherv_min / row.tuw_min, "x",
                              f"{df.attrs['source']}, {df.attrs['library']}, p = 560"))
    p, root = P_SMALL, P_SMALL // 2
    net = network(SMALL, p)
    model_ratios = []
    for d in IRREGULAR:
        pr = make_problem("gatherv", p, d, 1, root=root)
        r = model_us("gatherv", "linear", pr, net) / model_us("gatherv", "tuw", pr, net)
        model_ratios.append(r)
        vals.append(Value(f"linear Gatherv / TUW_Gatherv, {d}, b = 1", "model", r, "x",
                          f"p = {p}, root {root}, node-aware model of {SMALL}"))
    smpi = smpi_bench(ctx, "headline_smpi", "gatherv", ["native", "linear", "tuw"], SMALL, p,
                      IRREGULAR, [1], root=root)
    t = smpi.pivot_table(index="distribution", columns="algorithm", values="median_us")
    smpi_ratios = []
    for d in IRREGULAR:
        r = t.loc[d, "native"] / t.loc[d, "tuw"]
        smpi_ratios.append(r)
        vals.append(Value(f"SMPI's MPI_Gatherv / TUW_Gatherv, {d}, b = 1", "smpi", r, "x",
                          f"p = {p}, root {root}, {SMALL}"))
    pm = ctx.pick(8, 16)
    meas = measure_here(ctx, "headline_measured", "gatherv", ["native", "tuw"], pm, IRREGULAR,
                        [1], reps=ctx.pick(20, 75))
    mt = meas.pivot_table(index="distribution", columns="algorithm", values="median_us")
    meas_ratios = []
    for d in IRREGULAR:
        r = mt.loc[d, "native"] / mt.loc[d, "tuw"]
        meas_ratios.append(r)
        vals.append(Value(f"MPICH's MPI_Gatherv / TUW_Gatherv, {d}, b = 1 (median)",
                          "measured", r, "x", here(pm)))
    paper_r = [v.value for v in vals if v.source == "paper"]
    verdicts = {judge_range(r, e["low"], None) for r in smpi_ratios}
    verdict = (REPRODUCED if verdicts == {REPRODUCED}
               else IN_SHAPE if DIFFERS not in verdicts else DIFFERS)
    reason = (f"SMPI at the paper's p = {p} gives {ratio_text(smpi_ratios)}x "
              f"(the paper's tables: {ratio_text(paper_r)}x, NEC MPI and MVAPICH above 20, Open "
              f"MPI about 2); the node-aware model gives {ratio_text(model_ratios)}x (it "
              f"charges the linear root a full latency per message, SMPI only the overhead); "
              f"on this machine's {pm} ranks {ratio_text(meas_ratios)}x, too few ranks for "
              f"the linear root's p - 1 messages to dominate.")
    return Finding(verdict, reason, vals)


def _g2_counts(violations: list[dict], algorithm: str, bs, stat: str = "min") -> int:
    return sum(1 for v in violations
               if v["guideline"].endswith("2") and v["algorithm"] == algorithm
               and v["stat"] == stat and v["distribution"] != "two_blocks" and int(v["b"]) in bs)


def claim_guideline2_560(ctx) -> Finding:
    """Tables 1-3 under SMPI at p = 560, in the paper's layout, with the guideline marks."""
    import pandas as pd

    e = ctx.claim("guideline2_560")
    small_b = e["small_b"]
    vals, paper_counts = [], []
    for t in e["tables"]:
        df = ctx.paper.table(t)
        cells = df[(df.problem != "two_blocks") & df.b.isin(small_b)]
        marked = sum("gatherv_min" in m for m in cells.marked)
        tuw = sum("tuw_min" in m for m in cells.marked)
        paper_counts.append(f"{marked} ({df.attrs['library']})")
        where = f"{df.attrs['source']}, {df.attrs['library']}, p = 560, min"
        vals.append(Value("MPI_Gatherv cells violating Guideline (2), b <= 100, not Two blocks",
                          "paper", f"{marked} of {len(cells)}", "", where))
        vals.append(Value("TUW_Gatherv cells violating Guideline (2), same cells", "paper",
                          f"{tuw} of {len(cells)}", "", where))
    p, root = P_SMALL, P_SMALL // 2
    bs = ctx.pick(small_b, [1, 10, 100, 1000, 10000])
    rows = smpi_bench(ctx, "tables_560_smpi", "gatherv", ["native", "tuw"], SMALL, p, PROBLEMS,
                      bs, root=root)
    extra = measure_missing(rows, out=ctx.dir / "tables_560_smpi.csv", progress=ctx.progress,
                            backend=smpi_backend(platform(SMALL)))
    allrows = pd.concat([rows, extra[rows.columns.intersection(extra.columns)]],
                        ignore_index=True)
    table = gatherv_table(allrows, noise=False)
    n = len([1 for d in PROBLEMS if d != "two_blocks"]) * len(small_b)
    native = _g2_counts(table.violations, "native", small_b)
    tuw = _g2_counts(table.violations, "tuw", small_b)
    where = f"p = {p}, root {root}, {SMALL}, min of 2 repetitions"
    vals.append(Value("SMPI's MPI_Gatherv cells violating Guideline (2), b <= 100, not Two "
                      "blocks", "smpi", f"{native} of {n}", "", where))
    vals.append(Value("TUW_Gatherv cells violating Guideline (2), same cells", "smpi",
                      f"{tuw} of {n}", "", where))
    if native >= 0.75 * n and tuw == 0:
        verdict = REPRODUCED
    elif native > tuw:
        verdict = IN_SHAPE
    else:
        verdict = DIFFERS
    reason = (f"Simulated at p = {p}: the library's MPI_Gatherv (SMPI's own) violates Guideline "
              f"(2) in {native} of {n} small irregular cells, TUW_Gatherv in {tuw}; in the "
              f"paper's tables {', '.join(paper_counts)} of {n}, TUW_Gatherv in none.")
    return Finding(verdict, reason, vals, html=table.to_html(),
                   scale_note="" if ctx.scale == "paper" else
                   f"Quick scale: b = {', '.join(map(str, bs))} only (the paper: 1 to 10,000).")


def claim_guideline_6400(ctx) -> Finding:
    """Tables 4-5 at p = 6,400 from the node-aware model of VSC-3."""
    e = ctx.claim("guideline_6400")
    vals, library = [], {}
    for t in e["tables"]:
        df = ctx.paper.table(t)
        g2 = library[t] = sum("gatherv_min" in m for m in df.marked)
        tuw = sum("tuw_min" in m for m in df.marked)
        where = f"{df.attrs['source']}, {df.attrs['library']}, p = 6400, min"
        vals.append(Value("MPI_Gatherv cells violating Guideline (2)", "paper",
                          f"{g2} of {len(df)}", "", where))
        vals.append(Value("TUW_Gatherv cells violating Guideline (2)", "paper",
                          f"{tuw} of {len(df)}", "", where))
    p, root = P_LARGE, P_LARGE // 2
    net = network(LARGE, p)
    bs = ctx.pick([1, 100, 10000], [1, 10, 100, 1000, 10000])
    viol = {"tuw": 0, "binomial": 0}
    margins, cells = [], []
    for d in PROBLEMS:
        for b in bs:
            pr = make_problem("gatherv", p, d, b, root=root)
            reg = make_problem("gather", p, "same", max(pr.counts), root=root)
            rhs = (model_us("allreduce", "butterfly", make_problem("allreduce", p, "same", 1), net)
                   + model_us("gather", "binomial", reg, net))
            for alg in viol:
                lhs = model_us("gatherv", alg, pr, net)
                viol[alg] += lhs > rhs
                if alg == "tuw":
                    margins.append(rhs / lhs)
                    if lhs > rhs:
                        cells.append(f"{d} b={b}")
    n = len(PROBLEMS) * len(bs)
    where = f"p = {p}, root {root}, node-aware model of {LARGE}"
    vals.append(Value("TUW_Gatherv cells violating Guideline (2)", "model", f"{viol['tuw']} of {n}",
                      "", where))
    vals.append(Value("binomial (k-nomial, k = 2) Gatherv cells violating Guideline (2)", "model",
                      f"{viol['binomial']} of {n}", "", where))
    vals.append(Value("Guideline (2) bound / TUW_Gatherv, smallest", "model", min(margins), "x",
                      where))
    verdict = REPRODUCED if viol["tuw"] == 0 else IN_SHAPE if viol["tuw"] < n / 4 else DIFFERS
    found = (f"The model at p = {p} (the guideline's right side from the binomial MPI_Gather "
             f"and the butterfly MPI_Allreduce) finds TUW_Gatherv within Guideline (2) in "
             f"{n - viol['tuw']} of {n} cells")
    if viol["tuw"]:
        found += (f", above it in {', '.join(cells)} (at worst {1 / min(margins):.2f}x the "
                  f"bound): its 3 ceil(log2 p) start-ups against the 2 ceil(log2 p) of the "
                  f"ideal library operations the model has; the paper's libraries were slower "
                  f"than ideal, and its tables show no violation")
    reason = (found + f". The binomial Gatherv (Table 5's k-nomial) violates it in "
              f"{viol['binomial']} cells of the model, {library['table5']} of 30 in Table 5: the "
              f"paper blames overhead in determining block sizes, which the model does not "
              f"have. SMPI at 6,400 ranks is not run (hours here).")
    return Finding(verdict, reason, vals)


def _theorem_bound(pr: Problem, alpha: float, beta: float) -> float:
    """Theorem 2.4 in seconds: 3 ceil(log2 p) (alpha + beta INFO) + beta sum_{i != r} m_i +
    the Lemma 2.2 penalty, at most the largest over the root's subcubes."""
    nb = [pr.nbytes(i) for i in range(pr.p)]
    tree = oh.build_tree(nb, pr.root)
    rest = sum(nb) - nb[pr.root]
    penalty, before = 0, 0
    for edge in tree.children[pr.root]:
        penalty = max(penalty, edge.nbytes - nb[edge.child] - before)
        before += edge.nbytes
    d = clog2(pr.p)
    return 3 * d * (alpha + beta * oh.INFO_BYTES) + beta * (rest + penalty)


def claim_theorem_2_4(ctx) -> Finding:
    """Theorem 2.4's bound against the model of TUW_Gatherv, both clusters' sizes."""
    alpha, beta = flat_costs(SMALL)
    worst, checked, over = 0.0, 0, 0
    vals = []
    for p in (P_SMALL, P_LARGE):
        for d in PROBLEMS:
            for b in (1, 100, 10000):
                pr = make_problem("gatherv", p, d, b, root=p // 2)
                t = simulate(model.schedule("gatherv", "tuw", pr), alpha, beta).time
                bound = _theorem_bound(pr, alpha, beta)
                checked += 1
                over += t > bound * (1 + 1e-9)
                worst = max(worst, t / bound)
        vals.append(Value(f"TUW_Gatherv time / Theorem 2.4 bound, largest, p = {p}", "model",
                          worst, "x", f"flat model, alpha = {alpha * 1e6:.2f} us, "
                          f"beta = {beta * 1e9:.3f} ns/B, 6 problems x b = 1, 100, 10^4"))
    vals.insert(0, Value("time <= 3 ceil(log2 p) alpha + beta sum m_i + penalty", "paper",
                         "bound", "", "Theorem 2.4"))
    verdict = REPRODUCED if over == 0 else DIFFERS
    reason = (f"The model's TUW_Gatherv stays within the bound in {checked - over} of {checked} "
              f"problems (largest time / bound {worst:.3f}); the bound counts each construction "
              f"message as alpha plus its 24 bytes.")
    return Finding(verdict, reason, vals)


def claim_binomial_worst_case(ctx) -> Finding:
    """The fixed binomial tree's worst case against its formula, TUW_Gatherv beside it."""
    alpha, beta = flat_costs(SMALL)
    vals = []
    ok, extra = True, 0.0
    for p, m in ((512, 10000), (8192, 10000)):
        counts = [0] * p
        counts[p - 1] = m  # the deepest rank of the binomial tree rooted at 0
        pr = Problem("gatherv", p, 0, tuple(counts), distribution="worst case")
        t_bin = simulate(model.schedule("gatherv", "binomial", pr), alpha, beta).time
        t_tuw = simulate(model.schedule("gatherv", "tuw", pr), alpha, beta).time
        formula = clog2(p) * (alpha + beta * pr.nbytes(p - 1))
        ok &= 1 - 1e-9 <= t_bin / formula <= 1.1
        extra = max(extra, (t_bin - formula) / formula)
        where = f"p = {p}, root 0, m_{p - 1} = {m} ints, all others 0, flat model"
        vals += [Value("ceil(log2 p)(alpha + beta m)", "formula", formula * 1e6, "us", where),
                 Value("binomial Gatherv", "model", t_bin * 1e6, "us", where),
                 Value("TUW_Gatherv", "model", t_tuw * 1e6, "us", where)]
    verdict = REPRODUCED if ok else DIFFERS
    reason = (f"The model's binomial tree takes ceil(log2 p)(alpha + beta m) on this instance "
              f"(the block is forwarded at every level) plus at most {extra * 100:.0f} % for "
              f"its 8-byte size messages (the kernel learns each subtree's size before its "
              f"data); TUW_Gatherv sends the block once." if ok else
              "The model's binomial tree does not take the formula's time on this instance.")
    return Finding(verdict, reason, vals)


def claim_large_blocks(ctx) -> Finding:
    """b = 10,000 at p = 560: the direct-to-root MPI_Gatherv against TUW_Gatherv and
    MPI_Gather(m')."""
    e = ctx.claim("large_blocks")
    vals = []
    paper_wins = paper_n = 0
    for t in e["tables"]:
        df = ctx.paper.table(t)
        big = df[df.b == 10000]
        wins = int((big.gatherv_min < big.tuw_min).sum())
        g1 = int((big.gatherv_min < big.gather_min).sum())
        paper_wins += wins
        paper_n += len(big)
        where = f"{df.attrs['source']}, {df.attrs['library']}, p = 560, b = 10,000, min"
        vals.append(Value("problems where MPI_Gatherv beats TUW_Gatherv", "paper",
                          f"{wins} of {len(big)}", "", where))
        vals.append(Value("problems where MPI_Gatherv beats MPI_Gather(m') (Guideline (1) "
                          "fails)", "paper", f"{g1} of {len(big)}", "", where))
    p, root = P_SMALL, P_SMALL // 2
    rows = smpi_bench(ctx, "large_blocks_smpi", "gatherv", ["native", "tuw"], SMALL, p, PROBLEMS,
                      [10000], root=root)
    t = rows.pivot_table(index="distribution", columns="algorithm", values="median_us")
    wins = int((t["native"] < t["tuw"]).sum())
    where = f"p = {p}, root {root}, b = 10,000, {SMALL}"
    vals.append(Value("problems where SMPI's (linear) MPI_Gatherv beats TUW_Gatherv", "smpi",
                      f"{wins} of {len(t)}", "", where))
    for d in PROBLEMS:
        vals.append(Value(f"MPI_Gatherv / TUW_Gatherv, {d}", "smpi",
                          t.loc[d, "native"] / t.loc[d, "tuw"], "x", where))
    ties = int((t["native"] <= 1.05 * t["tuw"]).sum())
    verdict = (REPRODUCED if wins >= 2 / 3 * len(t) and paper_wins >= 2 / 3 * paper_n
               else IN_SHAPE if wins else DIFFERS)
    reason = (f"Under SMPI the direct-to-root MPI_Gatherv beats TUW_Gatherv on {wins} of "
              f"{len(t)} problems at b = 10,000 and is within 5 % on {ties} (the paper's "
              f"tables: beats it on {paper_wins} of {paper_n}): TUW's tree forwards large "
              f"blocks several times, the linear root receives each once; SMPI's linear "
              f"Gatherv also sends the 558 empty blocks of Two blocks, which the libraries "
              f"skip.")
    return Finding(verdict, reason, vals)


def claim_k_ported(ctx) -> Finding:
    """The k-ported variant: only its round count is in the paper."""
    vals = [Value(f"ceil(log_{k + 1} p) rounds, p = {p}", "formula",
                  _clog(p, k + 1), "rounds", "Section 2") for p in (P_SMALL, P_LARGE)
            for k in (1, 2, 3)]
    reason = ("The paper states the round count in one sentence and gives no construction "
              "(which subcubes merge, who sends what, in which order) and no cost; building one "
              "would be our algorithm, not the paper's. The model and the SMPI platforms here "
              "are one-ported, so nothing could check the rounds against a k-ported machine. "
              "The formula is evaluated.")
    return Finding(NOT_HERE, reason, vals)


def _clog(p: int, base: int) -> int:
    """ceil(log_base p) in integers.

    >>> _clog(560, 2), _clog(560, 3), _clog(9, 3), _clog(10, 3)
    (10, 6, 2, 3)
    """
    n, reach = 0, 1
    while reach < p:
        reach *= base
        n += 1
    return n
