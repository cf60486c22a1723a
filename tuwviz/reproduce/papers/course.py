"""The course report's claims (MY_Gather and MY_Scatter, TU Wien 2017), checked.

Each ``claim_<id>`` takes a :class:`tuwviz.reproduce.Context` and returns a
:class:`~tuwviz.reproduce.claims.Finding`; the report's statements come from
``data/course.toml``.  The report names neither its cluster nor its message sizes' range;
its 31 x 16 and 32 x 16 processes run here on the gatherv paper's TU Wien cluster
(``gatherv-ib36``, 16 cores per node), labelled.  The reordering copy is local work: the
node-aware model charges it gamma per element (a copy at the node's memory speed,
assumed: the platform's intra-node bytes per second); SMPI does not simulate local work,
so there the copy is free and only the model can show the penalty.
"""
from __future__ import annotations

from ... import model
from ...platforms import platform
from ...problems import make_problem
from ..claims import DIFFERS, IN_SHAPE, REPRODUCED, Finding, Value
from ._common import clog2, model_us, network, ratio_text, smpi_bench

__all__ = ["claim_gather_root0", "claim_gather_root2", "claim_gather_vs_library",
           "claim_rounds_bandwidth", "claim_scatter_496_512", "claim_scatter_root2"]

PLATFORM = "gatherv-ib36"
PS = (496, 512)
SIZES = (1_000, 10_000, 100_000, 1_000_000)  # bytes per block


def _gamma() -> float:
    """Seconds per int of a local copy (assumed: the node's intra-node bandwidth)."""
    return 4 / platform(PLATFORM).intra_bandwidth


def _pair(collective: str, root: int, sizes=SIZES) -> list[tuple[int, int, float]]:
    """(p, bytes, binomial / divide-and-conquer) from the node-aware model with the copy."""
    out = []
    for p in PS:
        net = network(PLATFORM, p)
        for nbytes in sizes:
            pr = make_problem(collective, p, "same", nbytes // 4, root=root)
            b = model_us(collective, "binomial", pr, net, gamma=_gamma())
            d = model_us(collective, "divide_conquer", pr, net, gamma=_gamma())
            out.append((p, nbytes, b / d))
    return out


def _values(rows, collective: str, root: int) -> list[Value]:
    return [Value(f"{collective}: binomial / divide and conquer, {n // 1000} kB per block",
                  "model", r, "x", f"p = {p}, root {root}, node-aware model of {PLATFORM} "
                  f"with the reordering copy (gamma = {_gamma() * 1e9:.1f} ns per int)")
            for p, n, r in rows]


def claim_gather_root0(ctx) -> Finding:
    """Figure 1: binomial vs divide and conquer at root 0."""
    rows = _pair("gather", 0)
    ratios = [r for *_, r in rows]
    ok = all(abs(r - 1) <= 0.1 for r in ratios)
    return Finding(REPRODUCED if ok else DIFFERS,
                   f"At root 0 the model's two trees are within {max(abs(r - 1) for r in ratios) * 100:.0f} % "
                   f"of each other ({ratio_text(ratios)}x); no reordering is needed.",
                   _values(rows, "gather", 0))


def claim_gather_root2(ctx) -> Finding:
    """Figure 2: the reordering penalty at root 2."""
    rows = _pair("gather", 2)
    ratios = [r for *_, r in rows]
    big = [r for _, n, r in rows if n >= 100_000]
    vals = _values(rows, "gather", 2)
    verdict = REPRODUCED if all(r > 1.02 for r in big) else IN_SHAPE if max(ratios) > 1 else DIFFERS
    return Finding(verdict, f"With the copy of the p - 1 other blocks at root 2 the binomial "
                            f"Gather takes {ratio_text(ratios)}x divide and conquer's time in "
                            f"the model, growing with the block size (the copy grows with m, "
                            f"the start-ups do not). SMPI cannot show it: it does not simulate "
                            f"local copies.", vals)


def claim_scatter_root2(ctx) -> Finding:
    """Figures 3-4: the reordering penalty of the binomial Scatter at root 2."""
    rows0, rows2 = _pair("scatter", 0), _pair("scatter", 2)
    r2 = [r for *_, r in rows2]
    vals = _values(rows0, "scatter", 0) + _values(rows2, "scatter", 2)
    big = [r for _, n, r in rows2 if n >= 100_000]
    verdict = REPRODUCED if all(r > 1.02 for r in big) else IN_SHAPE if max(r2) > 1 else DIFFERS
    return Finding(verdict, f"At root 2 the binomial Scatter first reorders the p - 1 blocks "
                            f"at the root: {ratio_text(r2)}x divide and conquer's time in the "
                            f"model (at root 0 {ratio_text([r for *_, r in rows0])}x).", vals)


def claim_rounds_bandwidth(ctx) -> Finding:
    """Rounds and the root's volume of both trees, from the model schedules."""
    vals, ok = [], True
    for coll in ("gather", "scatter"):
        for alg in ("binomial", "divide_conquer"):
            for p in PS:
                pr = make_problem(coll, p, "same", 250, root=0)
                s = model.schedule(coll, alg, pr)
                rounds = round(model.simulate(s, 1.0, 0.0).time)
                res = model.simulate(s, 0.0, 1.0)
                moved = sum(m.nbytes for m in res.messages
                            if (m.dst if coll == "gather" else m.src) == 0)
                share = moved / (p * pr.nbytes(0))
                ok &= rounds == clog2(p) and abs(share - (p - 1) / p) < 1e-12
                where = f"{coll} {alg}, p = {p}, root 0, model schedule"
                vals += [Value("rounds (alpha = 1, beta = 0)", "model", rounds, "rounds", where),
                         Value("ceil(log2 p)", "formula", clog2(p), "rounds", where),
                         Value("root's volume / m", "model", share, "", where)]
    return Finding(REPRODUCED if ok else DIFFERS,
                   "Every tree takes ceil(log2 p) rounds and the root moves (p - 1)/p of m, "
                   "as the report argues." if ok else "A tree's rounds or volume differ.", vals)


def _vs_library(ctx, collective: str, name: str) -> tuple[list[Value], dict]:
    sizes = ctx.pick([1_000, 100_000], list(SIZES))
    mine = "binomial" if collective == "gather" else "divide_conquer"
    vals, ratio = [], {}
    for p in PS:
        rows = smpi_bench(ctx, f"{name}_{p}", collective, ["native", mine], PLATFORM, p, ["same"],
                          [n // 4 for n in sizes], root=0, selector="ompi")
        t = rows.pivot_table(index="b", columns="algorithm", values="median_us")
        for n in sizes:
            r = float(t.loc[n // 4, mine] / t.loc[n // 4, "native"])
            ratio[p, n] = r
            vals.append(Value(f"MY_{collective.title()} ({mine}) / SMPI's Open MPI "
                              f"MPI_{collective.title()}, {n // 1000} kB per block", "smpi", r,
                              "x", f"p = {p}, root 0, {PLATFORM}, 16 per node"))
    return vals, ratio


def _library_verdict(ratio: dict) -> tuple[str, list, list]:
    small = [r for (p, n), r in ratio.items() if n < 100_000]
    big = [r for (p, n), r in ratio.items() if n >= 100_000]
    similar = all(0.8 <= r <= 1.25 for r in small)
    library_faster = all(r > 1.05 for r in big)
    verdict = (REPRODUCED if similar and library_faster
               else IN_SHAPE if similar or library_faster else DIFFERS)
    return verdict, small, big


def _library_reason(collective: str, mine: str, small, big) -> str:
    def how(rs):
        med = sorted(rs)[len(rs) // 2]
        return ("about as fast as" if 0.8 <= med <= 1.25 else "faster than" if med < 0.8
                else "slower than")
    return (f"Simulated, MY_{collective.title()} ({mine}) is {how(small)} SMPI's Open MPI "
            f"{collective.title()} below 100 kB per block ({ratio_text(small)}x its time) and "
            f"{how(big)} it from 100 kB ({ratio_text(big)}x); the report: similar, then Open "
            f"MPI faster. SMPI's ompi selector is its own version of Open MPI's algorithm "
            f"choice, not Open MPI 1.10.3, whose large-message optimization the report "
            f"assumes but does not name.")


def claim_gather_vs_library(ctx) -> Finding:
    """Figure 5: MY_Gather against Open MPI's MPI_Gather (SMPI's ompi selector)."""
    vals, ratio = _vs_library(ctx, "gather", "gather_library")
    verdict, small, big = _library_verdict(ratio)
    return Finding(verdict, _library_reason("gather", "binomial", small, big), vals)


def claim_scatter_496_512(ctx) -> Finding:
    """Figure 7: MY_Scatter against Open MPI's MPI_Scatter at 496 and 512 processes."""
    vals, ratio = _vs_library(ctx, "scatter", "scatter_library")
    verdict, small, big = _library_verdict(ratio)
    by_p = {p: [r for (q, n), r in ratio.items() if q == p] for p in PS}
    return Finding(verdict, _library_reason("scatter", "divide and conquer", small, big)
                   + f" At 496 and 512 processes: {ratio_text(by_p[496])}x and "
                     f"{ratio_text(by_p[512])}x.", vals)
