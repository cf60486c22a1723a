"""Fits of measured data and verdicts: what the bench rows say, in numbers and in words.

The model (:mod:`tuwviz.model`) predicts; the bench (:mod:`tuwviz.experiments.bench`) measures.  This
module puts the two together:

* :func:`fit_ring_cost` fits the machine's ``alpha`` and ``beta`` to measured linear-ring
  times, for the pipelined ring's block-size estimate (Eq. (2));
* :func:`ratio_verdicts` says, per algorithm, at which sizes it is faster or slower than the
  library (ratios of medians on the same problem);
* :func:`pipeline_verdict` says in one sentence whether the pipelined ring beats the linear
  ring on the measured rows, and with fitted ``alpha``/``beta`` what the model predicts;
* :func:`intergroup_improvement` measures the intergroup paper's T_old / T_new (root
  gathering over the segmented algorithms) on two-group rows, Figure 6's points, and
  :func:`intergroup_verdicts` sets each next to the model's prediction for the same problem.

All take bench rows as a :class:`pandas.DataFrame` (:data:`tuwviz.experiments.bench.ROW_FIELDS`).

Examples
--------
Two linear-ring measurements, blocks of 1,000 and 10,000 bytes on 4 ranks, 5 and 41 µs per
round: 1 µs start-up and 4 ns per byte.

>>> import pandas as pd
>>> ring = pd.DataFrame({"algorithm": "ring", "p": 4, "datatype": "byte",
...                      "m_prime": [4000, 40000], "median_us": [3 * 5.0, 3 * 41.0]})
>>> [f"{x:.3g}" for x in fit_ring_cost(ring)]
['1e-06', '4e-09']
"""
from __future__ import annotations

from ..problems import DATATYPES, make_problem
from ..model import schedule, simulate
from ..model.intergroup_cost import improvement

__all__ = ["fit_ring_cost", "intergroup_improvement", "intergroup_verdicts", "pipeline_verdict",
           "ratio_verdicts"]


def fit_ring_cost(df) -> tuple[float, float]:
    """Fit ``alpha`` and ``beta`` to measured linear-ring times, for Eq. (2) on this machine.

    The linear ring takes ``p - 1`` rounds of ``alpha + beta m'`` (Section 2.1), ``m'``
    the largest block in bytes; a least-squares line through ``time / (p - 1)`` against
    ``m'`` gives the machine's start-up ``alpha`` and time per byte ``beta``.

    Parameters
    ----------
    df : pandas.DataFrame
        Bench rows (:data:`tuwviz.experiments.bench.ROW_FIELDS`); those with ``algorithm == "ring"``
        and ``p > 1`` are used, at least two different ``m'``.

    Returns
    -------
    (float, float)
        ``alpha`` in seconds (at least 1 ns) and ``beta`` in seconds per byte (at least
        1e-15), to pass as the pipelined ring's ``alpha``/``beta`` parameters.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"algorithm": "ring", "p": 8, "datatype": "int",
    ...                      "m_prime": [8000, 800000], "median_us": [7 * 2.4, 7 * 42.0]})
    >>> a, b = fit_ring_cost(rows)
    >>> round(a * 1e6, 3), round(b * 1e9, 3)
    (2.0, 0.1)
    """
    import numpy as np

    rows = df[(df["algorithm"] == "ring") & (df["p"].astype(int) > 1)]
    if rows.empty:
        raise ValueError("no measured linear-ring rows (algorithm 'ring', p > 1) to fit")
    p = rows["p"].astype(int).to_numpy()
    size = rows["datatype"].map(DATATYPES).to_numpy()
    largest = rows["m_prime"].astype(float).to_numpy() / p * size  # m' in bytes
    if len(set(largest)) < 2:
        raise ValueError("fitting alpha and beta needs ring rows with two different block sizes")
    per_round = rows["median_us"].astype(float).to_numpy() * 1e-6 / (p - 1)
    beta, alpha = np.polyfit(largest, per_round, 1)
    return max(float(alpha), 1e-9), max(float(beta), 1e-15)


def pipeline_verdict(df, distribution: str = "broadcast", alpha: float | None = None,
                     beta: float | None = None) -> str:
    """One sentence: is the pipelined ring ahead of the linear ring on `distribution`?

    Compares, on the largest base count measured for `distribution`, the linear ring's
    median with the best pipelined ring's (whatever its parameters), both from the same
    bench rows.  With `alpha` and `beta` (e.g. fitted by
    :func:`fit_ring_cost`) it adds the model's prediction for the
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
        pr = make_problem("allgatherv", int(best["p"]), distribution, c,
                          datatype=str(best.get("datatype", "int")))
        t = {a: simulate(schedule("allgatherv", a, pr, **kw), alpha, beta).time
             for a, kw in (("ring", {}), ("pipelined", {"alpha": alpha, "beta": beta}))}
        text += (f" Model with this machine's alpha = {alpha * 1e6:.1f} µs, beta = "
                 f"{beta * 1e9:.3f} ns/B and B from Eq. (2): ×{t['pipelined'] / t['ring']:.2f}"
                 " (model).")
    return text


def ratio_verdicts(df, against: str = "native") -> list[str]:
    """One line per collective and algorithm: where it is faster or slower than `against`.

    For every (collective, algorithm) of the bench rows other than `against`, the ratio of
    its median to `against`'s median on the same problem (p, distribution, b), size by
    size, and which sizes it wins (ratio below 1) or loses.  Labelled with the ranks and
    whether they were oversubscribed, as measured.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"collective": "allreduce", "p": 5, "distribution": "same",
    ...     "b": [1, 1, 1000, 1000], "algorithm": ["native", "circulant"] * 2,
    ...     "median_us": [10.0, 8.0, 100.0, 150.0], "ranks": 5, "oversubscribed": True})
    >>> ratio_verdicts(rows)
    ['allreduce/circulant vs native, measured on 5 ranks (oversubscribed): ×0.80 at b=1, ×1.50 at b=1000; faster at b=1, slower at b=1000']
    """
    out = []
    keys = ["collective", "p", "distribution", "b"]
    base = df[df["algorithm"] == against].set_index(keys)["median_us"].astype(float)
    if base.empty:
        raise ValueError(f"no {against!r} rows to compare with")
    for (coll, alg), rows in df[df["algorithm"] != against].groupby(
            ["collective", "algorithm"], sort=False):
        parts, wins, losses = [], [], []
        for _, r in rows.sort_values("b").iterrows():
            key = tuple(r[k] for k in keys)
            if key not in base.index:
                continue
            ratio = float(r["median_us"]) / float(base.loc[key])
            parts.append(f"×{ratio:.2f} at b={r['b']}")
            (wins if ratio < 1 else losses).append(f"b={r['b']}")
        if not parts:
            continue
        first = rows.iloc[0]
        over = " (oversubscribed)" if str(first.get("oversubscribed", "")).lower() == "true" else ""
        verdict = ", ".join(x for x in (
            f"faster at {', '.join(wins)}" if wins else "",
            f"slower at {', '.join(losses)}" if losses else "") if x)
        out.append(f"{coll}/{alg} vs {against}, measured on {int(first.get('ranks', first['p']))} "
                   f"ranks{over}: {', '.join(parts)}; {verdict}")
    return out


def intergroup_improvement(df, old: str = "root_gathering", new: str = "segmented",
                           setting=None) -> list[dict]:
    """Measured T_old / T_new of two-group bench rows (Figure 6's points).

    Rows of the same problem (collective, p, q, distribution, b, b_b) are paired: the
    median time of `old` over that of `new`.

    Parameters
    ----------
    df : pandas.DataFrame
        Bench rows with the group columns (``bench --groups``).
    old, new : str, optional
        The algorithms compared.
    setting : optional
        The ``setting`` value of every returned row (e.g. a setting number); by default a
        description such as ``"6,2 regular"``.

    Returns
    -------
    list of dict
        ``setting``, ``collective``, ``p``, ``q``, ``b``, ``b_b``, ``bytes`` (A's block size
        ``b`` in bytes), ``old_us``, ``new_us``, ``improvement``, ``ranks`` and
        ``oversubscribed``, sorted by problem.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"collective": "allgather", "algorithm": ["root_gathering",
    ...     "segmented"], "p": 6, "q": 2, "distribution": "regular", "b": 1000, "b_b": 1000,
    ...     "datatype": "int", "median_us": [900.0, 300.0], "ranks": 8, "oversubscribed": True})
    >>> r = intergroup_improvement(rows)[0]
    >>> r["setting"], r["bytes"], r["improvement"]
    ('6,2 regular', 4000, 3.0)
    """
    if "q" not in df.columns:
        raise ValueError("these bench rows are from one group; T_old / T_new needs rows of "
                         "`tuwviz bench ... --groups P,Q`")
    keys = ["collective", "p", "q", "distribution", "b", "b_b", "datatype"]
    out = []
    for key, rows in df.groupby(keys, sort=True):
        times = dict(zip(rows["algorithm"], rows["median_us"].astype(float)))
        if old not in times or new not in times or not times[new]:
            continue
        coll, p, q, dist, b, b_b, dtype = key
        first = rows.iloc[0]
        out.append({"setting": f"{p},{q} {dist}" if setting is None else setting,
                    "collective": coll, "p": int(p), "q": int(q), "b": int(b),
                    "b_b": int(b_b), "bytes": int(b) * DATATYPES[dtype],
                    "old_us": times[old], "new_us": times[new],
                    "improvement": times[old] / times[new], "ranks": int(first["ranks"]),
                    "oversubscribed": bool(first["oversubscribed"])})
    return out


def intergroup_verdicts(df, alpha: float = 1.4e-6, beta: float = 1e-9, seed: int = 0,
                        close: float = 0.25) -> list[str]:
    """One sentence per measured two-group problem: measured T_old / T_new (root gathering
    over the segmented algorithm) against the model's, and whether they agree (within
    `close`, relative).

    The model is :func:`tuwviz.model.intergroup_cost.improvement` of the same problem with
    `alpha` and `beta` (seconds per message and per byte); rows measured with more ranks
    than cores say so, since waiting for a core then adds to every message.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"collective": "allgather", "algorithm": ["root_gathering",
    ...     "segmented"], "p": 4, "q": 4, "distribution": "regular", "b": 16384,
    ...     "b_b": 16384, "datatype": "int", "median_us": [6500.0, 1000.0], "ranks": 8,
    ...     "oversubscribed": True})
    >>> print(intergroup_verdicts(rows)[0])    # doctest: +NORMALIZE_WHITESPACE
    allgather, groups 4,4, regular, 65536 B per process: T_old / T_new measured 6.50,
    model 6.69 (alpha 1.4 us, beta 1 ns/B): agrees within 25% (8 ranks, oversubscribed)
    """
    lines = []
    for r in intergroup_improvement(df):
        dist = r["setting"].split(" ", 1)[1]
        pr = make_problem(r["collective"], r["p"], dist, r["b"], q=r["q"], b_b=r["b_b"],
                          seed=seed, datatype=str(df["datatype"].iloc[0]))
        predicted = improvement(pr, alpha, beta)
        ratio = r["improvement"] / predicted
        verdict = (f"agrees within {close:.0%}" if abs(ratio - 1) <= close else
                   f"measured is {ratio:.2f} of the model")
        where = f"{r['ranks']} ranks" + (", oversubscribed" if r["oversubscribed"] else "")
        lines.append(f"{r['collective']}, groups {r['p']},{r['q']}, {dist}, {r['bytes']} B per "
                     f"process: T_old / T_new measured {r['improvement']:.2f}, model "
                     f"{predicted:.2f} (alpha {alpha * 1e6:.2g} us, beta {beta * 1e9:.2g} "
                     f"ns/B): {verdict} ({where})")
    return lines
