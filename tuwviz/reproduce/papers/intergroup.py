"""The intergroup paper's claims (Kang, Träff et al., Parallel Computing 2019), checked.

Each ``claim_<id>`` takes a :class:`tuwviz.reproduce.Context` and returns a
:class:`~tuwviz.reproduce.claims.Finding`; the published numbers come from
``data/intergroup.toml``.  Transfer terms are the model with alpha = 0 and beta = 1 per
byte (a simulated time is then the bytes one port carries), as the paper compares them.
The library's root gathering is tuwviz's ``root_gathering`` kernel (MPICH's algorithm);
under SMPI ``native`` is not root gathering (SimGrid has no inter-communicators; tuwviz's
stand-in is SMPI's Allgatherv over both groups), so it is left out.
"""
from __future__ import annotations

from ... import model
from ...model import intergroup_cost as cost
from ...problems import make_problem
from ..claims import DIFFERS, IN_SHAPE, NOT_HERE, REPRODUCED, Finding, Value
from ._common import ratio_text, smpi_bench

__all__ = ["claim_eq1_root_gathering", "claim_eq5_settings", "claim_euro_mpi_two_step",
           "claim_headline", "claim_improvement_curves", "claim_min_links", "claim_theorem_1",
           "claim_theorem_3", "schedule_links"]


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


def claim_eq1_root_gathering(ctx) -> Finding:
    """Eq. (1): the best root gathering over M, beside MPICH's Eq. (2) and the model."""
    e = ctx.claim("eq1_root_gathering")
    vals, ratios = [Value("best root gathering / M", "paper", "about 3", "x", e["source"])], []
    for n in (64, 256, 2048):
        pr = cost.setting_problem(1, n, 1 << 14)
        m = cost.lower_bound(pr)
        r1 = cost.eq_1(pr) / m
        ratios.append(r1)
        where = f"setting 1, {n} processes (p = q = {n // 2}), 64 KiB blocks"
        vals += [Value("Eq. (1) / M", "formula", r1, "x", where),
                 Value("Eq. (2) / M (MPICH's root gathering)", "formula", cost.eq_2(pr) / m,
                       "x", where)]
        if n <= 256:
            vals.append(Value("root gathering (tuwviz, MPICH's) / M, transfer", "model",
                              _transfer(pr, "root_gathering") / m, "x", where))
    ok = all(2.9 <= r <= 3.0 for r in ratios)
    return Finding(REPRODUCED if ok else DIFFERS,
                   f"Eq. (1) gives {min(ratios):.3f} M to {max(ratios):.3f} M, approaching 3 M "
                   f"as the groups grow; "
                   f"MPICH's variant (Eq. (2), the kernel tuwviz runs as root_gathering) is "
                   f"about 7 M when the groups carry the same data.", vals)


def claim_eq5_settings(ctx) -> Finding:
    """Eq. (5)'s limits for settings 1-8, and the model's improvement at large blocks."""
    e = ctx.claim("eq5_settings")
    vals, ok, low, extra = [], True, [], []
    for s, paper in zip(cost.SETTINGS, e["converge"]):
        pr = cost.setting_problem(s, 256, 1 << 14)
        formula = cost.eq_5(pr)
        sim = cost.improvement(pr)  # alpha = 0: the limit of the curves
        ok &= round(formula, 2) == paper
        low.append(1 - sim / formula)
        extra.append(_transfer(pr, "segmented") / cost.lower_bound(pr))
        where = f"setting {s}, 256 processes (p = {pr.p}, q = {pr.q})"
        vals += [Value(f"setting {s}: limit", "paper", paper, "x", e["source"]),
                 Value(f"setting {s}: Eq. (5)", "formula", formula, "x", where),
                 Value(f"setting {s}: root gathering / new, transfer", "model", sim, "x",
                       where + ", 16 Ki-element blocks"),
                 Value(f"setting {s}: new / M, transfer", "model", extra[-1], "x", where)]
    reason = (f"Eq. (5) gives the paper's eight limits to two decimals. The simulated "
              f"ratios are {min(low) * 100:.1f} to {max(low) * 100:.0f} % lower, for two "
              f"reasons Eq. (5) leaves out: with p/q = 25/7 the new algorithms carry up to "
              f"{max(extra):.2f} M (ceil(p/q) exchange rounds, Theorem 1's extra k_B), and "
              f"for Allgatherv the library's root gathering (Eq. (2)) has no separate gather, "
              f"6 M where Eq. (5) counts 7 M.")
    verdict = REPRODUCED if ok and max(low) <= 0.1 else IN_SHAPE if ok else DIFFERS
    return Finding(verdict, reason if ok else "Eq. (5) does not give the paper's limits.", vals)


def claim_theorem_1(ctx) -> Finding:
    """Theorem 1 (and its indivisible case) against the simulated Algorithm 1."""
    vals, over = [], 0
    for s in (1, 2, 3, 4):
        for n in (64, 256):
            pr = cost.setting_problem(s, n, 1000)
            t = _transfer(pr, "segmented")
            bound = cost.theorem_1(pr) if s == 1 else cost.algorithm_1_bound(pr)
            over += t > bound
            vals.append(Value(f"setting {s}, {n} processes: transfer / "
                              f"{'M + k_B' if s == 1 else 'bound with the largest send'}",
                              "model", t / bound, "x", f"p = {pr.p}, q = {pr.q}"))
    return Finding(REPRODUCED if over == 0 else DIFFERS,
                   "Algorithm 1's simulated transfer stays within M + k_B where the theorem's "
                   "assumptions hold (q divides p) and within the paper's 'largest send size' "
                   "variant otherwise." if over == 0 else
                   f"{over} settings exceed the bound.", vals)


def claim_theorem_3(ctx) -> Finding:
    """Theorem 3 against the simulated Algorithm 2 (settings 5-8)."""
    vals, over = [], 0
    for s in (5, 6, 7, 8):
        pr = cost.setting_problem(s, 64 if s in (5, 6) else 256, 100)
        t = _transfer(pr, "segmented")
        over += t > cost.theorem_3(pr)
        vals += [Value(f"setting {s}: transfer / Theorem 3", "model", t / cost.theorem_3(pr),
                       "x", f"p = {pr.p}, q = {pr.q}"),
                 Value(f"setting {s}: M / transfer", "model", cost.lower_bound(pr) / t, "x",
                       f"p = {pr.p}, q = {pr.q}")]
    return Finding(REPRODUCED if over == 0 else DIFFERS,
                   "Algorithm 2's simulated transfer is within Theorem 3's bound and close to "
                   "M in all four settings." if over == 0 else
                   f"{over} settings exceed Theorem 3.", vals)


def claim_min_links(ctx) -> Finding:
    """The number of links: the paper's bound, its own count, our schedule's."""
    vals, over = [], 0
    for p, q in ((6, 2), (50, 14), (128, 128)):
        pr = make_problem("allgather", p, "regular", 100, q=q, datatype="byte")
        bound = p + q + p / q
        own = p + p + q  # the argument's p exchange links, a ring of p, a ring of q
        links = schedule_links(model.schedule("allgather", "segmented", pr))
        over += own >= bound
        where = f"p = {p}, q = {q}"
        vals += [Value("p + q + p/q", "paper", bound, "links", where),
                 Value("the argument's count: p (exchange) + p (ring in A) + q (ring in B)",
                       "formula", own, "links", where),
                 Value("pairs exchanging messages in tuwviz's Algorithm 1 (circulant "
                       "Allgathers)", "model", links, "links", where)]
    reason = ("Linear in p and q, as the paper says, but not below p + q + p/q: the paper's "
              "own argument counts p exchange links and rings of p and q, 2p + q links, more "
              "than p + q + p/q whenever q > 1. tuwviz's schedule uses more (its intragroup "
              "Allgathers are circulant, log p partners each, for fewer rounds).")
    return Finding(IN_SHAPE if over else REPRODUCED, reason, vals)


def claim_headline(ctx) -> Finding:
    """Up to 23.67x on 256 nodes: SMPI on Cori, 128 + 128 processes, one per node."""
    e = ctx.claim("headline")
    # the paper's 8 MiB per process is a 2 GiB receive buffer on each of the 256 simulated
    # ranks (the buffer limit is 1 GiB); at 2 MiB the kernels' own buffers, private to each
    # simulated rank, outgrew this machine's 24 GiB (killed, stop 53): 512 KiB is the most
    sizes = ctx.pick([1 << 18], [1 << 16, 1 << 19])
    vals = [Value("largest improvement over the library (256 nodes)", "paper", e["factor"], "x",
                  e["source"])]
    best, by = 0.0, {}
    for coll in ("allgather", "allgatherv"):
        rows = smpi_bench(ctx, f"headline_{coll}", coll, ["root_gathering", "segmented"], "cori",
                          128, ["regular"], [s // 4 for s in sizes], ppn=1, groups=(128, 128))
        t = rows.pivot_table(index="b", columns="algorithm", values="median_us")
        for s in sizes:
            r = float(t.loc[s // 4, "root_gathering"] / t.loc[s // 4, "segmented"])
            best = max(best, r)
            by[coll, s] = r
            vals.append(Value(f"{coll}: root gathering / new, {s // 1024} KiB per process",
                              "smpi", r, "x", "128 + 128 on cori, 1 per node"))
    eq5 = cost.eq_5(cost.setting_problem(1, 256, 1 << 14))
    vals.append(Value("Eq. (5), setting 1", "formula", eq5, "x", "p = q = 128"))
    verdict = IN_SHAPE if best > 1 else DIFFERS
    f = Finding(verdict, f"Simulated, the new algorithms are up to {best:.1f}x faster than "
                         f"root gathering, bounded by Eq. (5)'s {eq5:.0f}x; the paper's 23.67x "
                         f"exceeds its own Eq. (5), which it explains by MPICH's ring-based "
                         f"gather on Cori's not quite fully connected network, which the "
                         f"platform here (one homogeneous network) does not have.", vals)
    if ctx.scale == "quick":
        f.scale_note = ("Quick scale: 256 KiB per process only (64 and 512 KiB at --scale "
                        "paper).")
    else:
        f.scale_note = ("64 and 512 KiB per process: the paper's 8 MiB is a 2 GiB receive "
                        "buffer on each of the 256 simulated ranks, and at 2 MiB the kernels' "
                        "own buffers (private to every simulated rank) exceed this machine's "
                        "memory.")
    return f


def claim_improvement_curves(ctx) -> Finding:
    """Figure 6 from the model: improvement against message size, settings 1-8."""
    sizes = [1 << k for k in range(10, 24, 2)]
    rows = cost.improvement_curve(list(cost.SETTINGS), 256, sizes)
    series, grows = {}, True
    for s in cost.SETTINGS:
        pts = [r for r in rows if r["setting"] == s]
        ys = [r["improvement"] for r in pts]
        series[f"setting {s}"] = {"x": [r["bytes"] for r in pts], "y": ys, "source": "model",
                                  "color": ["#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                            "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"][s - 1]}
        grows &= ys[-1] > ys[0]
    vals = [Value(f"setting {s}: improvement at {sizes[0] // 1024} KiB and "
                  f"{sizes[-1] >> 20} MiB", "model",
                  " -> ".join(f"{r['improvement']:.2f}" for r in rows
                              if r["setting"] == s and r["bytes"] in (sizes[0], sizes[-1])),
                  "x", "256 processes, alpha = 1.4 us, beta = 1 ns/B") for s in cost.SETTINGS]
    figure = {"title": "Figure 6 from the model: T_old / T_new, 256 processes",
              "x_label": "largest message per process [bytes]", "y_label": "improvement",
              "log_x": True, "series": series, "legend": "top_right"}
    last = [v["y"][-1] for v in series.values()]
    first = [v["y"][0] for v in series.values()]
    verdict = IN_SHAPE if min(last) > 3 else DIFFERS
    reason = (f"At large messages the model's new algorithms are many times faster "
              f"({ratio_text(last)}x at {sizes[-1] >> 20} MiB, approaching Eq. (5) less the "
              f"differences named for it), as the paper says. At small messages the model "
              f"is {'above' if not grows else 'below'} that ({ratio_text(first)}x at "
              f"{sizes[0] // 1024} KiB): its start-ups favour the new algorithms, while the "
              f"paper measured them not necessarily better there and left that out of its "
              f"scope; the figure's numbers are not in the text.")
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
