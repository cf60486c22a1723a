"""tuwviz.analysis.fits: fits of measured data and verdicts."""
import pandas as pd
import pytest

from tuwviz import model
from tuwviz.analysis.fits import fit_ring_cost, pipeline_verdict
from tuwviz.problems import make_problem


def test_fit_ring_cost_recovers_the_model_parameters():
    """Fit alpha, beta to linear-ring times the model predicts; they come back."""
    import pandas as pd

    alpha, beta = 37e-6, 0.25e-9
    rows = []
    for dist, c in (("broadcast", 1000), ("broadcast", 10**6), ("regular", 5000)):
        pr = make_problem("allgatherv", 8, dist, c)
        t = model.simulate(model.schedule("allgatherv", "ring", pr), alpha, beta).time
        rows.append({"algorithm": "ring", "p": 8, "datatype": "int", "m_prime": pr.m_prime,
                     "median_us": t * 1e6})
    a, b = fit_ring_cost(pd.DataFrame(rows))
    assert a == pytest.approx(alpha, rel=1e-6) and b == pytest.approx(beta, rel=1e-6)
    with pytest.raises(ValueError, match="two different block sizes"):
        fit_ring_cost(pd.DataFrame(rows[:1]))


def test_fit_ring_cost_needs_ring_rows():
    rows = pd.DataFrame({"algorithm": ["pipelined"], "p": [8], "datatype": ["int"],
                         "m_prime": [1000], "median_us": [10.0]})
    with pytest.raises(ValueError, match="no measured linear-ring rows"):
        fit_ring_cost(rows)


def _bench_rows(c, ring_us, pipe_us):
    """Bench rows of one broadcast problem: a linear ring and two pipelined rings."""
    return pd.DataFrame({"algorithm": ["ring", "pipelined", "pipelined"], "p": 8,
                         "distribution": "broadcast", "b": c,
                         "median_us": [ring_us, *pipe_us],
                         "params": ["", "block_bytes=1024", "block_bytes=64"], "ranks": 8,
                         "oversubscribed": False, "datatype": "int"})


def test_pipeline_verdict_uses_the_largest_count_and_the_best_pipelined_ring():
    df = pd.concat([_bench_rows(10, 50.0, [10.0, 20.0]), _bench_rows(1000, 900.0, [1200.0, 950.0])])
    text = pipeline_verdict(df)
    assert text.startswith("measured, 8 ranks, broadcast c=1000: pipelined ring (block_bytes=64)")
    assert text.endswith("×1.06, the linear ring is ahead.")


def test_pipeline_verdict_adds_the_model_with_alpha_and_beta():
    alpha, beta = 2e-6, 1e-9
    text = pipeline_verdict(_bench_rows(1000, 900.0, [700.0, 800.0]), alpha=alpha, beta=beta)
    pr = make_problem("allgatherv", 8, "broadcast", 1000, datatype="int")
    t_ring = model.simulate(model.schedule("allgatherv", "ring", pr), alpha, beta).time
    t_pipe = model.simulate(model.schedule("allgatherv", "pipelined", pr, alpha=alpha, beta=beta),
                            alpha, beta).time
    assert text.endswith(f"B from Eq. (2): ×{t_pipe / t_ring:.2f} (model).")
    assert "alpha = 2.0 µs, beta = 1.000 ns/B" in text


def test_pipeline_verdict_errors():
    with pytest.raises(ValueError, match="no rows of distribution 'spike'"):
        pipeline_verdict(_bench_rows(1000, 900.0, [700.0, 800.0]), "spike")
    rows = _bench_rows(1000, 900.0, [700.0, 800.0])
    with pytest.raises(ValueError, match="need both 'ring' and 'pipelined' rows"):
        pipeline_verdict(rows[rows.algorithm == "ring"])
