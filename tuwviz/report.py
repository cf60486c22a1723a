"""Plain-text tables for the command line and notebooks."""
from __future__ import annotations

__all__ = ["pipeline_verdict", "text_table"]


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def text_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """Format dict rows as an aligned text table.

    Examples
    --------
    >>> print(text_table([{"a": 1, "b": 2.5}, {"a": 10, "b": 0.25}]))
    a   b
    --  ----
    1   2.50
    10  0.25
    """
    if not rows:
        return "(no rows)"
    columns = columns or list(rows[0])
    cells = [[_fmt(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def pipeline_verdict(df, distribution: str = "broadcast", alpha: float | None = None,
                     beta: float | None = None) -> str:
    """One sentence: is the pipelined ring ahead of the linear ring on `distribution`?

    Compares, on the largest base count measured for `distribution`, the linear ring's
    median with the best pipelined ring's (whatever its parameters), both from the same
    bench rows.  With `alpha` and `beta` (e.g. fitted by
    :func:`tuwviz.model.allgatherv.fit_ring_cost`) it adds the model's prediction for the
    same problem, so a loss is explained by this machine's numbers.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"algorithm": ["ring", "pipelined", "pipelined"], "p": 8,
    ...     "distribution": "broadcast", "b": 1000, "median_us": [900.0, 700.0, 1200.0],
    ...     "params": ["", "block_bytes=1024", "block_bytes=64"], "ranks": 8,
    ...     "oversubscribed": True, "datatype": "int"})
    >>> pipeline_verdict(rows)
    'measured, 8 ranks (oversubscribed), broadcast c=1000: pipelined ring (block_bytes=1024) 700 µs vs linear ring 900 µs: ×0.78, the pipelined ring is ahead.'
    """
    rows = df[df["distribution"] == distribution]
    if rows.empty:
        raise ValueError(f"no rows of distribution {distribution!r}")
    c = rows["b"].astype(int).max()
    rows = rows[rows["b"].astype(int) == c]
    ring = rows[rows["algorithm"] == "ring"]
    pipe = rows[rows["algorithm"] == "pipelined"]
    if ring.empty or pipe.empty:
        raise ValueError(f"need both 'ring' and 'pipelined' rows for {distribution} c={c}")
    best = pipe.loc[pipe["median_us"].astype(float).idxmin()]
    t_ring, t_pipe = float(ring["median_us"].astype(float).min()), float(best["median_us"])
    ratio = t_pipe / t_ring
    over = " (oversubscribed)" if str(best.get("oversubscribed", "")).lower() == "true" else ""
    params = f" ({best['params']})" if isinstance(best.get("params"), str) and best["params"] else ""
    text = (f"measured, {int(best.get('ranks', best['p']))} ranks{over}, {distribution} c={c}: "
            f"pipelined ring{params} {t_pipe:.0f} µs vs linear ring {t_ring:.0f} µs: ×{ratio:.2f}, "
            + ("the pipelined ring is ahead." if ratio < 1 else "the linear ring is ahead."))
    if alpha is not None and beta is not None:
        from .model import schedule, simulate
        from .problems import make_problem

        pr = make_problem("allgatherv", int(best["p"]), distribution, c,
                          datatype=str(best.get("datatype", "int")))
        t = {a: simulate(schedule("allgatherv", a, pr, **kw), alpha, beta).time
             for a, kw in (("ring", {}), ("pipelined", {"alpha": alpha, "beta": beta}))}
        text += (f" Model with this machine's alpha = {alpha * 1e6:.1f} µs, beta = "
                 f"{beta * 1e9:.3f} ns/B and B from Eq. (2): ×{t['pipelined'] / t['ring']:.2f}"
                 " (model).")
    return text
