"""The ring Allgatherv figures (Träff et al. 2010): frames, data sources, idle times, plots.

Fast, no MPI: everything comes from the model schedules of tuwviz.model.allgatherv and their
simulations.
"""
from __future__ import annotations

import pandas as pd
import pytest
from bokeh.models import GridPlot, LogScale, Range1d, Span

from tuwviz import viz
from tuwviz.model import schedule, simulate
from tuwviz.model.allgatherv import estimate_block_bytes
from tuwviz.problems import Problem, make_problem
from tuwviz.viz import plots
from tuwviz.viz.animation import CELL_COLORS
from tuwviz.viz.ring import MAX_RING_CELLS

# The paper's distributions (Section 3).
DISTRIBUTIONS = ["regular", "broadcast", "spike", "half_full", "linear_decreasing", "geometric"]
ALPHA, BETA = 1e-6, 1e-9


def ring_schedules():
    """(id, schedule): both rings, every distribution, ring orders, partial pieces."""
    out = []
    for dist in DISTRIBUTIONS:
        pr = make_problem("allgatherv", 6, dist, 40, datatype="byte")
        out.append((f"ring-{dist}", schedule("allgatherv", "ring", pr)))
        for B in (8, 12, 1000):
            out.append((f"pipelined-{dist}-B{B}",
                        schedule("allgatherv", "pipelined", pr, block_bytes=B)))
        out.append((f"pipelined-{dist}-spread",
                    schedule("allgatherv", "pipelined", pr, block_bytes=8, ring="spread")))
    pr = make_problem("allgatherv", 7, "spike", 30, datatype="int")
    nodes = [0, 1, 0, 2, 1, 0, 2]
    out.append(("ring-smp", schedule("allgatherv", "ring", pr, ring="smp", nodes=nodes)))
    out.append(("pipelined-smp-int",
                schedule("allgatherv", "pipelined", pr, block_bytes=10, ring="smp", nodes=nodes)))
    return out


SCHEDULES = ring_schedules()


def pieces_of(s) -> list[list[int]]:
    """[owner, offset, nbytes] per piece: meta for the pipelined ring, one per rank else."""
    if s.algorithm == "pipelined":
        return s.meta["pieces"]
    return [[r, 0, s.problem.nbytes(r)] for r in s.meta["ring"]]


@pytest.mark.parametrize("s", [s for _, s in SCHEDULES], ids=[i for i, _ in SCHEDULES])
def test_frames_replay_the_schedule_to_its_postcondition(s):
    frames = viz.ring_frames(s)
    pieces = pieces_of(s)
    sizes = [n for _, _, n in pieces]
    p, order = s.p, s.meta["ring"]
    succ = {order[k]: order[(k + 1) % p] for k in range(p)}
    steps = s.meta["slots"] if s.algorithm == "pipelined" else s.meta["rounds"]
    assert [f["step"] for f in frames] == list(range(steps + 1))
    # precondition: a rank holds its own pieces, and the empty ones (it knows every m_i)
    assert frames[0]["held"] == [[n if (owner == r or n == 0) else 0 for owner, _, n in pieces]
                                 for r in range(p)]
    for before, f in zip(frames, frames[1:]):
        senders, receivers = [t[0] for t in f["transfers"]], [t[1] for t in f["transfers"]]
        # single-ported: one send and one receive per process and step, to the successor
        assert len(set(senders)) == len(senders) and len(set(receivers)) == len(receivers)
        for src, dst, v, owner, nbytes in f["transfers"]:
            assert dst == succ[src]
            assert (owner, nbytes) == (pieces[v][0], sizes[v])
            assert before["held"][src][v] == sizes[v], "sent a piece it did not hold"
            assert f["held"][dst][v] == sizes[v]
        for r in range(p):  # holdings change only by what arrives
            changed = {v for v in range(len(sizes)) if f["held"][r][v] != before["held"][r][v]}
            assert changed <= set(f["new"][r])
        assert f["active"] == sorted(set(senders) | set(receivers))
    # postcondition: every rank holds every byte of every piece
    assert all(row == sizes for row in frames[-1]["held"])
    if s.algorithm == "pipelined":
        assert sorted([f["step"] - 1, t[0], t[1], t[2]] for f in frames for t in f["transfers"]) \
            == sorted(s.meta["transfers"])


@pytest.mark.parametrize("s", [s for i, s in SCHEDULES if i.startswith("pipelined")],
                         ids=[i for i, _ in SCHEDULES if i.startswith("pipelined")])
def test_pieces_are_at_most_B_and_only_the_last_is_partial(s):
    B, pieces = s.meta["block_bytes"], s.meta["pieces"]
    for k, rank in enumerate(s.meta["ring"]):
        mine = [pc for pc in pieces if pc[0] == rank]
        assert len(mine) == s.meta["nblocks"][k] == max(1, -(-s.problem.nbytes(rank) // B))
        assert sum(n for _, _, n in mine) == s.problem.nbytes(rank)
        assert all(n == B for _, _, n in mine[:-1]) and 0 <= mine[-1][2] <= B
        assert [off for _, off, _ in mine] == [j * B for j in range(len(mine))]


def test_linear_ring_sends_every_block_even_empty_ones():
    pr = make_problem("allgatherv", 5, "broadcast", 100, datatype="byte")
    frames = viz.ring_frames(schedule("allgatherv", "ring", pr))
    assert len(frames) == 5  # p - 1 rounds
    assert all(len(f["transfers"]) == 5 for f in frames[1:])
    empty = [t for f in frames for t in f["transfers"] if t[4] == 0]
    assert len(empty) == 4 * 4  # the four empty blocks, each to the four others
    # round t: the process at position k sends the block of position k - t
    for f in frames[1:]:
        assert {(src, v) for src, _, v, _, _ in f["transfers"]} == \
            {(k, (k - f["slot"]) % 5) for k in range(5)}


def test_frames_carry_the_simulated_times():
    pr = make_problem("allgatherv", 6, "spike", 400, datatype="byte")
    s = schedule("allgatherv", "pipelined", pr, block_bytes=64)
    res = simulate(s, ALPHA, BETA)
    frames = viz.ring_frames(s, res)
    assert frames[0]["start"] is None
    for f in frames[1:]:
        mine = [m for m in res.messages if m.tag == f["slot"]]
        assert f["start"] == min(m.start for m in mine) and f["end"] == max(m.end for m in mine)
    assert frames[-1]["end"] == pytest.approx(res.time)
    other = simulate(schedule("allgatherv", "ring", pr), ALPHA, BETA)
    with pytest.raises(ValueError, match="not a simulation of this schedule"):
        viz.ring_frames(s, other)


# -- figures ----------------------------------------------------------------------------------
def test_ring_figure_draws_processes_in_ring_order_with_partial_pieces():
    nodes = [0, 1, 0, 1, 2, 2]
    pr = Problem("allgatherv", 6, 0, (10, 0, 3, 8, 4, 0), datatype="byte")
    s = schedule("allgatherv", "pipelined", pr, block_bytes=4, ring="smp", nodes=nodes)
    src = viz.sources(viz.ring_figure(s, nodes=nodes))
    order = s.meta["ring"]
    # by node, each node's processes without data first (they send nothing off-node)
    assert src["nodes"].data["rank"] == order == [0, 2, 1, 3, 5, 4]
    assert src["nodes"].data["m"] == [pr.counts[r] for r in order]
    assert src["nodes"].data["npieces"] == s.meta["nblocks"]
    # arrows to the successor; one leaves each node (Figure 1)
    assert list(zip(src["edges"].data["src"], src["edges"].data["dst"])) == \
        [(order[k], order[(k + 1) % 6]) for k in range(6)]
    assert sum(src["edges"].data["between_nodes"]) == 3
    colors = dict(zip(src["nodes"].data["rank"], src["nodes"].data["fill_color"]))
    assert colors[0] == colors[2] != colors[1] == colors[3] != colors[4]
    # pieces: 10 bytes in blocks of 4 are 4, 4 and a partial 2; empty processes an outline
    pieces = src["pieces"].data
    assert pieces["nbytes"] == [pc[2] for pc in s.meta["pieces"]]
    assert pieces["fill"] == [pc[2] / 4 for pc in s.meta["pieces"]]
    of_rank0 = [f for o, f in zip(pieces["owner"], pieces["fill"]) if o == 0]
    assert of_rank0 == [1.0, 1.0, 0.5]
    assert [h for o, h in zip(pieces["owner"], pieces["hatch"]) if o in (1, 5)] == ["/", "/"]
    assert all(fw == pytest.approx(w * f)
               for w, f, fw in zip(pieces["w"], pieces["fill"], pieces["fw"]))


def test_ring_figure_of_the_linear_ring_has_one_piece_per_process():
    pr = make_problem("allgatherv", 5, "linear_decreasing", 10, datatype="byte")
    pieces = viz.sources(viz.ring_figure(schedule("allgatherv", "ring", pr)))["pieces"].data
    assert pieces["owner"] == [0, 1, 2, 3, 4] and pieces["index"] == [0] * 5
    largest = max(pr.counts)
    assert pieces["fill"] == [c / largest for c in pr.counts]  # slot: the largest block


@pytest.fixture(scope="module")
def spike_animation():
    pr = make_problem("allgatherv", 5, "spike", 40, datatype="byte")
    s = schedule("allgatherv", "pipelined", pr, block_bytes=8)
    return s, viz.animate_ring(s), viz.ring_frames(s)


def expected_cells(s, frame) -> list[int]:
    """Grid states by ring position x piece: 2 arriving, 1 held, 0 not held."""
    sizes = [n for _, _, n in pieces_of(s)]
    return [2 if v in frame["new"][r] else 1 if frame["held"][r][v] == n else 0
            for r in s.meta["ring"] for v, n in enumerate(sizes)]


def test_animation_embeds_every_frame(spike_animation):
    s, layout, frames = spike_animation
    src = viz.sources(layout)
    data = src["frames"].data
    assert data["step"] == list(range(len(frames)))
    assert [list(c) for c in data["cells"]] == [expected_cells(s, f) for f in frames]
    assert all(state >= 1 for state in data["cells"][-1])
    assert "step 0 of" in data["label"][0] and "holds all 40 B" in data["label"][-1]
    assert data["held_text"][0][0] == "20/40 B" and set(data["held_text"][-1]) == {"40/40 B"}
    # the shown state is frame 0
    assert src["cells"].data["state"] == data["cells"][0]
    assert src["cells"].data["fill_color"] == [CELL_COLORS[c] for c in data["cells"][0]]
    assert src["current"].data["step"] == []
    # every message, labelled with its piece: rank 0's second piece is "0.1"
    t = src["transfers"].data
    assert sorted(zip([x - 1 for x in t["step"]], t["src"], t["dst"], t["piece"])) == \
        sorted(tuple(x) for x in s.meta["transfers"])
    labels = {f"{o}.{j}" for o, j in [(0, 0), (0, 1), (0, 2)]}
    assert labels <= set(t["label"])
    # partial pieces are drawn partial: width 0.9 of a slot times nbytes / B
    cells = src["cells"].data
    assert cells["fw"] == pytest.approx([0.9 * n / 8 for n in cells["nbytes"]])
    slider = layout.select_one({"name": "step_slider"})
    assert (slider.start, slider.end) == (0, len(frames) - 1)


def test_animate_ring_rejects_other_schedules_and_huge_ones():
    gather = schedule("gatherv", "linear", make_problem("gatherv", 4, "same", 2))
    for fn in (viz.animate_ring, viz.ring_frames, viz.ring_figure):
        with pytest.raises(ValueError, match="allgatherv schedules ring, pipelined, got "
                                             "gatherv/linear"):
            fn(gather)
    big = schedule("allgatherv", "pipelined",
                   make_problem("allgatherv", 32, "regular", 64, datatype="byte"), block_bytes=1)
    with pytest.raises(ValueError, match="MAX_RING_CELLS"):
        viz.animate_ring(big)
    assert (big.meta["slots"] + 1) * 32 * big.meta["b"] > MAX_RING_CELLS
    pr = make_problem("allgatherv", 4, "regular", 4, datatype="byte")
    with pytest.raises(ValueError, match="3 node numbers for p=4"):
        viz.ring_figure(schedule("allgatherv", "ring", pr), nodes=[0, 1, 0])


# -- timelines: Figures 7 (right) and 8 -------------------------------------------------------
@pytest.fixture(scope="module")
def broadcast_runs():
    """Both rings on the broadcast distribution, p = 8, 64 KiB, B by Eq. (2)."""
    pr = make_problem("allgatherv", 8, "broadcast", 1 << 16, datatype="byte")
    out = {}
    for alg in ("ring", "pipelined"):
        s = schedule("allgatherv", alg, pr)
        out[alg] = (simulate(s, ALPHA, BETA), s)
    return out


def test_pipelined_ring_idles_less_than_the_linear_ring(broadcast_runs):
    summary = viz.idle_summary(broadcast_runs, scale=1e6).set_index("algorithm")
    ring, pipe = summary.loc["ring"], summary.loc["pipelined"]
    # the linear ring's round is as slow as the one big block: the others wait (Figure 8)
    assert pipe["idle_total"] < ring["idle_total"] / 5
    assert pipe["span"] < ring["span"] / 3
    for row in (ring, pipe):
        assert row["total"] == pytest.approx(row["ranks"] * row["span"])
        assert row["idle_total"] == pytest.approx(row["wait"] + row["idle"])
    # the span is the simulated completion time
    assert ring["span"] == pytest.approx(broadcast_runs["ring"][0].time * 1e6)
    # a SimResult alone, or its events as a trace, give the same totals here
    as_results = {k: r for k, (r, _) in broadcast_runs.items()}
    as_traces = {k: viz.sim_events(r, s) for k, (r, s) in broadcast_runs.items()}
    for other in (as_results, as_traces):
        pd.testing.assert_frame_equal(viz.idle_summary(other, scale=1e6), summary.reset_index())


def test_idle_summary_of_a_hand_made_trace():
    # rank 0 posts its send at 0, rank 1 its receive at 1: 1 wait, 1 idle, 2 x 2 transfer
    events = [[{"rank": 0, "peer": 1, "dir": "send", "tag": 0, "bytes": 8,
                "t_start": 10.0, "t_end": 13.0}],
              [{"rank": 1, "peer": 0, "dir": "recv", "tag": 0, "bytes": 8,
                "t_start": 11.0, "t_end": 13.0}]]
    row = viz.idle_summary({"x": events}).iloc[0]
    assert (row["comm"], row["wait"], row["idle"], row["span"]) == (4.0, 1.0, 1.0, 3.0)


def test_compare_timelines_shares_one_time_axis(broadcast_runs):
    layout = viz.compare_timelines(broadcast_runs, title="broadcast, p = 8")
    heading, body = layout.children
    assert "broadcast, p = 8" in heading.text
    figs = body.children
    assert [f.name for f in figs] == ["timeline ring", "timeline pipelined"]
    assert figs[0].x_range is figs[1].x_range and isinstance(figs[0].x_range, Range1d)
    summary = viz.idle_summary(broadcast_runs, scale=1e6).set_index("algorithm")
    assert figs[0].x_range.end >= summary["span"].max()
    for fig, alg in zip(figs, ["ring", "pipelined"]):
        assert f"total idle {summary.loc[alg, 'idle_total']:.3g} µs" in fig.title.text
        assert "model (simulated)" in fig.title.text
    bars = [viz.sources(f)["bars"].data for f in figs]
    assert max(bars[0]["right"]) == pytest.approx(summary.loc["ring", "span"])


def test_comm_idle_figure_stacks_comm_wait_and_idle(broadcast_runs):
    fig = viz.comm_idle_figure(broadcast_runs)
    data = viz.sources(fig)["comm_idle"].data
    summary = viz.idle_summary(broadcast_runs, scale=1e6)
    assert data["algorithm"] == ["ring", "pipelined"]
    for col in ("comm", "wait", "idle", "total"):
        assert data[col] == pytest.approx(summary[col].tolist())
    assert list(fig.x_range.factors) == ["ring", "pipelined"]
    legend = [item.label["value"] for item in fig.legend[0].items]
    assert legend == ["communication", "waiting", "idle"]
    assert fig.select_one({"name": "caption"}).text == "model (simulated)"
    with pytest.raises(ValueError, match="no traces"):
        viz.idle_summary({})


# -- benchmark-style figures: Figures 4-6 and 5 -----------------------------------------------
def model_rows(dists, cs, p=8) -> pd.DataFrame:
    """Model predictions of both rings, labelled as model rows."""
    from tuwviz.model.compare import predict

    problems = [make_problem("allgatherv", p, d, c, datatype="byte") for d in dists for c in cs]
    return predict("allgatherv", ["ring", "pipelined"], problems, alpha=ALPHA, beta=BETA)


def test_time_vs_count_figure_one_per_distribution_labelled_model():
    df = model_rows(["broadcast", "spike"], [1 << 10, 1 << 14, 1 << 18])
    grid = plots.time_vs_count_figure(df)
    assert isinstance(grid, GridPlot)
    figs = [child[0] for child in grid.children]
    assert len(figs) == 2
    for fig, dist in zip(figs, ["broadcast", "spike"]):
        assert dist in fig.title.text
        assert isinstance(fig.x_scale, LogScale) and isinstance(fig.y_scale, LogScale)
        sources = {s.name: s for s in plots.series_sources(fig)}
        assert set(sources) == {"ring", "pipelined"}
        for alg, src in sources.items():
            rows = df[(df["distribution"] == dist) & (df["algorithm"] == alg)].sort_values("b")
            assert src.data["b"] == rows["b"].tolist()
            assert src.data["time_us"] == rows["time_us"].tolist()
        caption = fig.select_one({"name": "measured_where"}).text
        assert caption.startswith("model (simulated, not measured)") and "α = 1e-06" in caption
    # large broadcasts: the pipelined ring wins by a wide margin (Figure 4, top left)
    big = df[(df["distribution"] == "broadcast") & (df["b"] == 1 << 18)].set_index("algorithm")
    assert big.loc["pipelined", "time_us"] < big.loc["ring", "time_us"] / 3


def bench_like(rows: list[dict]) -> pd.DataFrame:
    """Rows shaped like tuwviz.bench output with a params column (values hand-made)."""
    meta = {"collective": "allgatherv", "p": 8, "distribution": "spike", "datatype": "byte",
            "ranks": 8, "oversubscribed": True, "heavy_yield": "1", "backend": "mpiexec",
            "min_us": 1.0, "mean_us": 1.0, "max_us": 1.0, "m": 1, "ratio_to_native": 1.0}
    return pd.DataFrame([{**meta, **r} for r in rows])


def test_time_vs_count_figure_names_series_by_params_and_says_where_measured():
    df = bench_like([
        {"algorithm": "ring", "params": float("nan"), "b": 100, "median_us": 50.0},
        {"algorithm": "ring", "params": float("nan"), "b": 1000, "median_us": 90.0},
        {"algorithm": "pipelined", "params": "block_bytes=1024", "b": 100, "median_us": 40.0},
        {"algorithm": "pipelined", "params": "block_bytes=1024", "b": 1000, "median_us": 60.0},
        {"algorithm": "pipelined", "params": "", "b": 100, "median_us": 45.0},
    ])
    fig = plots.time_vs_count_figure(df)
    names = [s.name for s in plots.series_sources(fig)]
    assert names == ["ring", "pipelined block_bytes=1024", "pipelined"]
    assert plots.series_sources(fig)[1].data["median_us"] == [40.0, 60.0]
    caption = fig.select_one({"name": "measured_where"}).text
    assert caption == plots.measured_where(df) and "on 8 ranks, oversubscribed" in caption
    with pytest.raises(ValueError, match="oversubscribed"):
        plots.time_vs_count_figure(df.drop(columns=["oversubscribed"]))


def test_param_value():
    assert plots.param_value("block_bytes=1024 ring=smp", "block_bytes") == "1024"
    assert plots.param_value("block_bytes=1024 ring=smp", "ring") == "smp"
    assert plots.param_value("ring=smp", "block_bytes") is None
    assert plots.param_value("", "ring") is None and plots.param_value(None, "ring") is None
    assert plots.param_value(float("nan"), "ring") is None


@pytest.fixture(scope="module")
def block_sweep():
    """Model times of the pipelined ring over B, and of the linear ring, for one problem."""
    pr = make_problem("allgatherv", 8, "broadcast", 1 << 16, datatype="byte")
    rows = []
    for B in (256, 1024, 2048, 4096, 8192, 16384, 65536):
        s = schedule("allgatherv", "pipelined", pr, block_bytes=B)
        rows.append({"algorithm": "pipelined", "params": f"block_bytes={B}",
                     "time_us": simulate(s, ALPHA, BETA).time * 1e6})
    ring_time = simulate(schedule("allgatherv", "ring", pr), ALPHA, BETA).time * 1e6
    rows.append({"algorithm": "ring", "params": "", "time_us": ring_time})
    df = pd.DataFrame(rows).assign(p=8, distribution="broadcast", b=1 << 16, source="model",
                                   alpha=ALPHA, beta=BETA)
    estimate = estimate_block_bytes([pr.nbytes(i) for i in range(pr.p)], ALPHA, BETA)
    return df, ring_time, estimate


def test_time_vs_block_figure_marks_ring_and_estimate(block_sweep):
    df, ring_time, estimate = block_sweep
    fig = plots.time_vs_block_figure(df, estimate=estimate)
    (span,) = [s for s in fig.select(type=Span) if s.name == "estimate"]
    assert span.location == estimate and span.dimension == "height"
    (ring,) = fig.select({"name": "ring"})
    assert list(ring.data_source.data["y"]) == [ring_time, ring_time]
    (src,) = plots.series_sources(fig)
    assert src.name == "pipelined"  # block_bytes is the x axis, not in the name
    assert src.data["block_bytes"] == [256, 1024, 2048, 4096, 8192, 16384, 65536]
    assert isinstance(fig.x_scale, LogScale)
    assert fig.select_one({"name": "measured_where"}).text.startswith("model")
    # the Eq. (2) estimate lands next to the best block size of the model (Section 2.4)
    best = src.data["block_bytes"][src.data["time_us"].index(min(src.data["time_us"]))]
    assert best / 2 <= estimate <= best * 2
    # with B = max m_i the pipelined ring is the linear ring
    assert src.data["time_us"][-1] == pytest.approx(ring_time)


def test_time_vs_block_figure_rejects_mixed_problems_and_no_blocks(block_sweep):
    df, _, _ = block_sweep
    with pytest.raises(ValueError, match="several problems"):
        plots.time_vs_block_figure(pd.concat([df, df.assign(b=1)]))
    with pytest.raises(ValueError, match="no rows with a positive block_bytes"):
        plots.time_vs_block_figure(df[df["algorithm"] == "ring"])
    with pytest.raises(ValueError, match="lacks column"):
        plots.time_vs_block_figure(df.drop(columns=["params"]))
