"""The intergroup paper's claims (Kang, Träff et al., Parallel Computing 2019), checked.

Each claim is a ``measure_<id>`` (a :class:`tuwviz.reproduce.Context` to evidence, numbers
only) and a ``judge_<id>`` (evidence and the claim's data entry to a
:class:`~tuwviz.reproduce.claims.Finding`, running nothing); the published numbers and the
tolerances, each with why, come from ``data/intergroup.toml``.  Transfer terms are the model with alpha = 0 and beta = 1 per
byte (a simulated time is then the bytes one port carries), as the paper compares them.
The library's root gathering is tuwviz's ``root_gathering`` kernel (MPICH's algorithm);
under SMPI ``native`` is not root gathering (SimGrid has no inter-communicators; tuwviz's
stand-in is SMPI's Allgatherv over both groups), so it is left out.
"""
from __future__ import annotations

from ... import model
from ...model import intergroup_cost as cost
from ...problems import make_problem
from ..claims import DERIVED, DIFFERS, IN_SHAPE, NOT_HERE, REPRODUCED, Finding, Value, rule
from ._common import ratio_text, smpi_bench

__all__ = ["claim_euro_mpi_two_step", "judge_eq1_root_gathering", "judge_eq5_settings",
           "judge_headline", "judge_improvement_curves", "judge_min_links", "judge_theorem_1",
           "judge_theorem_3", "measure_eq1_root_gathering", "measure_eq5_settings",
           "measure_headline", "measure_improvement_curves", "measure_min_links",
           "measure_theorem_1", "measure_theorem_3", "schedule_links"]


def _transfer(pr, algorithm: str) -> float:
    """Bytes the busiest port carries: the schedule simulated with alpha 0, beta 1."""
    return model.simulate(model.schedule(pr.collective, algorithm, pr), 0.0, 1.0).time


def schedule_links(schedule) -> int:
    """Distinct pairs of processes that exchange a message in `schedule`.

    >>> pr = make_problem("allgather", 4, "regular", 2, q=2, datatype="byte")
    >>> schedule_links(model.schedule("allgather", "segmented", pr)) >= 4
    True
    """
    res = model.simulate(schedule, 0.0, 1.0)
    return len({frozenset((m.src, m.dst)) for m in res.messages if m.nbytes})


def measure_eq1_root_gathering(ctx) -> dict:
    """Eq. (1) and Eq. (2) over M for setting 1 at three sizes; the model's root gathering."""
    rows = []
    for n in (64, 256, 2048):
        pr = cost.setting_problem(1, n, 1 << 14)
        m = cost.lower_bound(pr)
        rows.append({"n": n, "eq1": cost.eq_1(pr) / m, "eq2": cost.eq_2(pr) / m,
                     "model": _transfer(pr, "root_gathering") / m if n <= 256 else None})
    return {"rows": rows}


def judge_eq1_root_gathering(ev: dict, e: dict) -> Finding:
    """Eq. (1) / M against the paper's "about three": arithmetic of the paper's own
    formula, so a derivation, not a reproduction."""
    rel, paper = rule(e, "rel"), e["factor"]
    vals = [Value("best root gathering / M", "paper", f"about {paper:g}", "x", e["source"])]
    for r in ev["rows"]:
        where = f"setting 1, {r['n']} processes (p = q = {r['n'] // 2}), 64 KiB blocks"
        vals += [Value("Eq. (1) / M", "formula", r["eq1"], "x", where),
                 Value("Eq. (2) / M (MPICH's root gathering)", "formula", r["eq2"], "x", where)]
        if r["model"] is not None:
            vals.append(Value("root gathering (tuwviz, MPICH's) / M, transfer", "model",
                              r["model"], "x", where))
    eq1 = [r["eq1"] for r in ev["rows"]]
    ok = all(abs(x / paper - 1) <= rel for x in eq1)
    return Finding(DERIVED if ok else DIFFERS,
                   f"Eq. (1) gives {min(eq1):.3f} M to {max(eq1):.3f} M "
                   + (f"(within {rel:.0%} of the paper's {paper:g} M: 3 - 1/p by the formula's "
                      f"algebra, so this checks the arithmetic). " if ok else
                      f"outside {rel:.0%} of the paper's {paper:g} M. ")
                   + "MPICH's variant (Eq. (2), the kernel tuwviz runs as root_gathering) is "
                     "about 7 M when the groups carry the same data.", vals)


def measure_eq5_settings(ctx) -> dict:
    """Eq. (5) for settings 1-8 at 256 processes, and the model's transfer ratios."""
    rows = []
    for s in cost.SETTINGS:
        pr = cost.setting_problem(s, 256, 1 << 14)
        rows.append({"setting": s, "p": pr.p, "q": pr.q, "formula": cost.eq_5(pr),
                     "model": cost.improvement(pr),  # alpha = 0: the limit of the curves
                     "new_over_m": _transfer(pr, "segmented") / cost.lower_bound(pr)})
    return {"rows": rows}


def judge_eq5_settings(ev: dict, e: dict) -> Finding:
    """Eq. (5) evaluated against the paper's eight limits: a derivation.  Settings whose
    block ratios were inferred from these very limits check nothing and are said so."""
    digits, inferred = rule(e, "decimals"), set(e["inferred"])
    vals, wrong, low, extra = [], [], [], []
    for r, paper in zip(ev["rows"], e["converge"]):
        s = r["setting"]
        where = f"setting {s}, 256 processes (p = {r['p']}, q = {r['q']})"
        if round(r["formula"], digits) != paper:
            wrong.append(s)
        low.append(1 - r["model"] / r["formula"])
        extra.append(r["new_over_m"])
        vals += [Value(f"setting {s}: limit", "paper", paper, "x", e["source"]),
                 Value(f"setting {s}: Eq. (5)" + (" (block ratio inferred from this limit)"
                                                  if s in inferred else ""),
                       "formula", r["formula"], "x", where),
                 Value(f"setting {s}: root gathering / new, transfer", "model", r["model"], "x",
                       where + ", 16 Ki-element blocks"),
                 Value(f"setting {s}: new / M, transfer", "model", r["new_over_m"], "x", where)]
    checked = [r["setting"] for r in ev["rows"] if r["setting"] not in inferred]
    note = (f"The simulated ratios are {min(low) * 100:.1f} to {max(low) * 100:.0f} % lower, "
            f"for two reasons Eq. (5) leaves out: with p/q = 25/7 the new algorithms carry up "
            f"to {max(extra):.2f} M (ceil(p/q) exchange rounds, Theorem 1's extra k_B), and "
            f"for Allgatherv the library's root gathering (Eq. (2)) has no separate gather, "
            f"6 M where Eq. (5) counts 7 M.")
    if wrong:
        return Finding(DIFFERS, f"Eq. (5) does not give the paper's limit for setting"
                                f"{'s' if len(wrong) > 1 else ''} "
                                f"{', '.join(map(str, wrong))}. " + note, vals)
    return Finding(DERIVED, f"Eq. (5) gives the paper's eight limits to {digits} decimals; "
                            f"only settings {', '.join(map(str, checked))} check the "
                            f"arithmetic, since the block ratios of settings "
                            f"{', '.join(map(str, sorted(inferred)))} are not in the text and "
                            f"were inferred from these limits. " + note, vals)


def measure_theorem_1(ctx) -> dict:
    """Algorithm 1's simulated transfer and Theorem 1's bound (settings 1-4)."""
    rows = []
    for s in (1, 2, 3, 4):
        for n in (64, 256):
            pr = cost.setting_problem(s, n, 1000)
            rows.append({"setting": s, "n": n, "p": pr.p, "q": pr.q,
                         "transfer": _transfer(pr, "segmented"),
                         "bound": cost.theorem_1(pr) if s == 1 else cost.algorithm_1_bound(pr)})
    return {"rows": rows}


def judge_theorem_1(ev: dict, e: dict) -> Finding:
    """Theorem 1 (M + k_B where q divides p; the paper's 'largest send size' otherwise)
    against the simulated Algorithm 1: any simulated transfer above its bound differs."""
    vals, over = [], []
    for r in ev["rows"]:
        which = "M + k_B" if r["setting"] == 1 else "bound with the largest send"
        vals.append(Value(f"setting {r['setting']}, {r['n']} processes: transfer / {which}",
                          "model", r["transfer"] / r["bound"], "x", f"p = {r['p']}, q = {r['q']}"))
        if r["transfer"] > r["bound"]:
            over.append(f"setting {r['setting']} at {r['n']}")
    if over:
        return Finding(DIFFERS, f"The simulated Algorithm 1 exceeds the bound in "
                                f"{len(over)} case(s): {', '.join(over)}.", vals)
    return Finding(REPRODUCED, "Algorithm 1's simulated transfer stays within M + k_B where the "
                               "theorem's assumptions hold (q divides p) and within the paper's "
                               "'largest send size' variant otherwise.", vals)


def measure_theorem_3(ctx) -> dict:
    """Algorithm 2's simulated transfer, Theorem 3's bound and M (settings 5-8)."""
    rows = []
    for s in (5, 6, 7, 8):
        pr = cost.setting_problem(s, 64 if s in (5, 6) else 256, 100)
        rows.append({"setting": s, "p": pr.p, "q": pr.q, "transfer": _transfer(pr, "segmented"),
                     "bound": cost.theorem_3(pr), "M": cost.lower_bound(pr)})
    return {"rows": rows}


def judge_theorem_3(ev: dict, e: dict) -> Finding:
    """Theorem 3 against the simulated Algorithm 2: any transfer above the bound differs."""
    vals, over = [], []
    for r in ev["rows"]:
        where = f"p = {r['p']}, q = {r['q']}"
        vals += [Value(f"setting {r['setting']}: transfer / Theorem 3", "model",
                       r["transfer"] / r["bound"], "x", where),
                 Value(f"setting {r['setting']}: M / transfer", "model", r["M"] / r["transfer"],
                       "x", where)]
        if r["transfer"] > r["bound"]:
            over.append(f"setting {r['setting']}")
    if over:
        return Finding(DIFFERS, f"The simulated Algorithm 2 exceeds Theorem 3 in "
                                f"{', '.join(over)}.", vals)
    return Finding(REPRODUCED, "Algorithm 2's simulated transfer is within Theorem 3's bound "
                               "in all four settings.", vals)


def measure_min_links(ctx) -> dict:
    """The links tuwviz's Algorithm 1 schedule uses, at three group shapes."""
    rows = []
    for p, q in ((6, 2), (50, 14), (128, 128)):
        pr = make_problem("allgather", p, "regular", 100, q=q, datatype="byte")
        rows.append({"p": p, "q": q,
                     "links": schedule_links(model.schedule("allgather", "segmented", pr))})
    return {"rows": rows}


def judge_min_links(ev: dict, e: dict) -> Finding:
    """Fewer than p + q + p/q links: met if a construction here (the paper's own count or
    tuwviz's schedule) uses fewer; otherwise it differs."""
    vals, met, counts = [], True, []
    for r in ev["rows"]:
        p, q = r["p"], r["q"]
        bound, own = p + q + p / q, 2 * p + q  # p exchange links, rings of p and of q
        met &= min(own, r["links"]) < bound
        counts.append(f"{own} and {r['links']} against {bound:.4g} at p = {p}, q = {q}")
        where = f"p = {p}, q = {q}"
        vals += [Value("p + q + p/q", "paper", bound, "links", where),
                 Value("the paper's argument: p (exchange) + p (ring in A) + q (ring in B)",
                       "formula", own, "links", where),
                 Value("pairs exchanging messages in tuwviz's Algorithm 1 (circulant "
                       "Allgathers)", "model", r["links"], "links", where)]
    if met:
        return Finding(REPRODUCED, "A construction here uses fewer than p + q + p/q links "
                                   "at every shape: " + "; ".join(counts) + ".", vals)
    return Finding(DIFFERS, "Neither the paper's own argument (p exchange links and rings of p "
                            "and q: 2p + q, more than p + q + p/q whenever q > 1) nor tuwviz's "
                            "schedule (circulant Allgathers, log p partners each) uses fewer "
                            "than p + q + p/q links: " + "; ".join(counts) + ". The count is "
                            "linear in p + q for the paper's rings.", vals)


def measure_headline(ctx) -> dict:
    """Root gathering / new under SMPI on Cori's platform, 128 + 128, one per node."""
    e = ctx.claim("headline")
    # the paper's 8 MiB per process is a 2 GiB receive buffer on each of the 256 simulated
    # ranks (the buffer limit is 1 GiB); at 2 MiB the kernels' own buffers, private to each
    # simulated rank, outgrew this machine's 24 GiB (killed, stop 53): 512 KiB is the most
    sizes = ctx.pick([1 << 18], [1 << 16, 1 << 19])
    reps = ctx.pick(rule(e, "quick_reps"), rule(e, "reps"))
    stat = rule(e, "statistic")
    ratios = {}
    for coll in ("allgather", "allgatherv"):
        rows = smpi_bench(ctx, f"headline_{coll}", coll, ["root_gathering", "segmented"], "cori",
                          128, ["regular"], [s // 4 for s in sizes], ppn=1, groups=(128, 128),
                          reps=reps)
        t = rows.pivot_table(index="b", columns="algorithm", values=stat)
        ratios[coll] = {str(s): float(t.loc[s // 4, "root_gathering"] / t.loc[s // 4, "segmented"])
                        for s in sizes}
    return {"scale": ctx.scale, "reps": reps, "ratios": ratios,
            "eq5": cost.eq_5(cost.setting_problem(1, 256, 1 << 14))}


def judge_headline(ev: dict, e: dict) -> Finding:
    """The best simulated improvement against the paper's 23.67x: within `rel` reproduced;
    at least `shape_min` (the paper's "significant" improvement at large messages) in shape."""
    rel, shape_min, paper = rule(e, "rel"), rule(e, "shape_min"), e["factor"]
    vals = [Value("largest improvement over the library (256 nodes)", "paper", paper, "x",
                  e["source"])]
    best = 0.0
    for coll, by in ev["ratios"].items():
        for s, r in by.items():
            best = max(best, r)
            vals.append(Value(f"{coll}: root gathering / new, {int(s) // 1024} KiB per process",
                              "smpi", r, "x", f"128 + 128 on cori, 1 per node, "
                                              f"{rule(e, 'statistic')} of {ev['reps']}"))
    vals.append(Value("Eq. (5), setting 1", "formula", ev["eq5"], "x", "p = q = 128"))
    why = (f"the paper's 23.67x exceeds its own Eq. (5) ({ev['eq5']:.0f}x), which it explains "
           f"by MPICH's ring-based gather on Cori's not quite fully connected network; the "
           f"platform here has one homogeneous network")
    if abs(best / paper - 1) <= rel:
        verdict, head = REPRODUCED, f"Simulated, up to {best:.1f}x, within {rel:.0%} of 23.67x"
    elif best >= shape_min:
        verdict, head = IN_SHAPE, (f"Simulated, the new algorithms are up to {best:.1f}x faster "
                                   f"than root gathering (at least {shape_min:g}x: a significant "
                                   f"improvement), not 23.67x")
    else:
        verdict, head = DIFFERS, (f"Simulated, the new algorithms are at most {best:.2f}x "
                                  f"faster than root gathering, below the {shape_min:g}x that "
                                  f"'significant improvements' is judged by")
    f = Finding(verdict, f"{head}: {why}.", vals)
    if ev["scale"] == "quick":
        f.scale_note = (f"Quick scale: 256 KiB per process only, {ev['reps']} repetitions "
                        f"(64 and 512 KiB and the paper's {rule(e, 'reps')} at --scale paper).")
    else:
        f.scale_note = ("64 and 512 KiB per process: the paper's 8 MiB is a 2 GiB receive "
                        "buffer on each of the 256 simulated ranks, and at 2 MiB the kernels' "
                        "own buffers (private to every simulated rank) exceed this machine's "
                        "memory.")
    return f


_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"]


def measure_improvement_curves(ctx) -> dict:
    """Figure 6 from the model: improvement against message size, settings 1-8, 256
    processes; and Eq. (5)'s limit of each setting."""
    sizes = [1 << k for k in range(10, 24, 2)]
    rows = cost.improvement_curve(list(cost.SETTINGS), 256, sizes)
    limits = ctx.paper.claim("eq5_settings")["converge"]  # the paper's, in the same paragraph
    return {"sizes": sizes,
            "curves": {str(s): [r["improvement"] for r in rows if r["setting"] == s]
                       for s in cost.SETTINGS},
            "eq5": {str(s): cost.eq_5(cost.setting_problem(s, 256, 1 << 14))
                    for s in cost.SETTINGS},
            "paper": {str(s): v for s, v in zip(cost.SETTINGS, limits)}}


def judge_improvement_curves(ev: dict, e: dict) -> Finding:
    """Every curve grows with the message size and ends within `rel` of Eq. (5)'s limit:
    reproduced; grows and ends at least `shape_min`: in shape; otherwise differs."""
    rel, shape_min = rule(e, "rel"), rule(e, "shape_min")
    sizes, curves = ev["sizes"], ev["curves"]
    series, vals, flat, far = {}, [], [], []
    for i, (s, ys) in enumerate(curves.items()):
        series[f"setting {s}"] = {"x": sizes, "y": ys, "source": "model",
                                  "color": _COLOURS[i % len(_COLOURS)]}
        if not ys[-1] > ys[0]:
            flat.append(s)
        if abs(ys[-1] / ev["eq5"][s] - 1) > rel:
            far.append(s)
        vals.append(Value(f"setting {s}: improvement at {sizes[0] // 1024} KiB and "
                          f"{sizes[-1] >> 20} MiB", "model", f"{ys[0]:.2f} -> {ys[-1]:.2f}", "x",
                          "256 processes, alpha = 1.4 us, beta = 1 ns/B"))
        vals.append(Value(f"setting {s}: Eq. (5)", "formula", ev["eq5"][s], "x", "the limit"))
    if ev.get("paper"):  # the paper's stated limits, one marker per setting
        series["the paper's limits (Eq. (5))"] = {
            "x": [sizes[-1]] * len(ev["paper"]), "y": list(ev["paper"].values()),
            "source": "paper", "line": False}
    figure = {"title": "Figure 6 from the model: T_old / T_new, 256 processes; the paper's "
                       "limits (Eq. (5), Section 5) as markers at the largest size",
              "x_label": "largest message per process [bytes]", "y_label": "improvement",
              "log_x": True, "series": series, "legend": "top_right"}
    last = [ys[-1] for ys in curves.values()]
    grows = not flat
    if grows and not far:
        verdict = REPRODUCED
    elif grows and min(last) >= shape_min:
        verdict = IN_SHAPE
    else:
        verdict = DIFFERS
    first = [ys[0] for ys in curves.values()]
    trend = ("every setting's improvement grows with the message size" if grows else
             f"the improvement falls as messages grow for setting(s) {', '.join(flat)} "
             f"({ratio_text(first)}x at {sizes[0] // 1024} KiB), the opposite of the "
             f"paper's trend: the model's start-ups favour the new algorithms most at small "
             f"messages, where on Cori they were not necessarily better")
    reason = (f"In the model {trend}. At {sizes[-1] >> 20} MiB it gives {ratio_text(last)}x, "
              + (f"within {rel:.0%} of Eq. (5)'s limits" if not far else
                 f"setting(s) {', '.join(far)} more than {rel:.0%} below Eq. (5)'s limits")
              + ". The figure's numbers are not in the paper's text: the curves are judged "
                "against its sentences.")
    return Finding(verdict, reason, vals, figure=figure)


def claim_euro_mpi_two_step(ctx) -> Finding:
    """The two-step algorithm of [1]: not described well enough to build."""
    return Finding(NOT_HERE, "The paper describes [1]'s algorithm in one sentence (group A "
                             "gathers group B's messages in two steps of intragroup "
                             "Allgathers) and says it has Algorithm 1's transfer time; which "
                             "processes form the two steps' groups, how segments are assigned "
                             "and in which order are in [1], not here. A kernel built from "
                             "this sentence would be our algorithm, not theirs; its curve in "
                             "Figure 4 is therefore not reproduced.")
