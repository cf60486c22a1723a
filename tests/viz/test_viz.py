"""tuwviz.viz and Schedule.holdings: what the figures draw, checked on their data sources."""
from __future__ import annotations

import re

import pytest

from tuwviz import model, viz
from tuwviz.model import Recv, Schedule, ScheduleError, Send, SendRecv, simulate
from tuwviz.model.meta import TreeMeta
from tuwviz.problems import Problem, make_problem

# Block sizes for the Figure-2-like instance: p = 11, root 9, some blocks empty.
FIG2_COUNTS = (3, 0, 2, 5, 1, 0, 4, 2, 0, 3, 1)


def ordered_tree_schedule(problem: Problem) -> Schedule:
    """A hand-made gather schedule with the meta keys of the TUW builders.

    Ordered hypercube merging (Lemma 2.1, the given root wins as in Lemma 2.2): in
    iteration d the fixed roots (last ranks) of adjacent subcubes exchange 16 bytes, and
    the gather root with the smaller gather time sends its subcube's blocks, as one
    consecutive range, to the other.  Empty subtrees send nothing.
    """
    p, root = problem.p, problem.root
    nbytes = [problem.nbytes(i) for i in range(p)]
    cubes = [(i, i + 1, i, 0) for i in range(p)]  # (lo, hi, gather root, gather time)
    parent, edge_bytes, exchanges = [-1] * p, [0] * p, []
    children: list[list[tuple[int, int, int]]] = [[] for _ in range(p)]
    d = 0
    while len(cubes) > 1:
        merged = []
        for k in range(0, len(cubes) - 1, 2):
            (alo, ahi, ga, ta), (blo, bhi, gb, tb) = cubes[k], cubes[k + 1]
            exchanges.append((d, ahi - 1, bhi - 1))
            a_wins = ga == root or (gb != root and ta >= tb)
            (child, lo, hi), par = ((gb, blo, bhi), ga) if a_wins else ((ga, alo, ahi), gb)
            parent[child], edge_bytes[child] = par, sum(nbytes[lo:hi])
            children[par].append((child, lo, hi))
            merged.append((alo, bhi, par, max(ta, tb) + edge_bytes[child]))
        if len(cubes) % 2:
            merged.append(cubes[-1])
        cubes, d = merged, d + 1
    programs: list[list] = [[] for _ in range(p)]
    for it, a, b in exchanges:
        programs[a].append(SendRecv(b, 16, b, 16, tag=it, kind="exchange"))
        programs[b].append(SendRecv(a, 16, a, 16, tag=it, kind="exchange"))
    for i in range(p):
        lo, hi = i, i + 1
        for child, clo, chi in children[i]:
            lo, hi = min(lo, clo), max(hi, chi)
            if edge_bytes[child]:
                programs[i].append(Recv(child, edge_bytes[child], blocks=range(clo, chi)))
        if parent[i] >= 0 and edge_bytes[i]:
            programs[i].append(Send(parent[i], edge_bytes[i], blocks=range(lo, hi)))
    return Schedule("gatherv", "ordered", p, programs, problem,
                    meta=TreeMeta(root=root, parent=parent, edge_bytes=edge_bytes,
                                  edge_sent=[b > 0 for b in edge_bytes],
                                  edge_iteration=[-1] * p,  # not drawn
                                  fixed_exchanges=exchanges,
                                  subtree_ranges=[[(i, i + 1)] for i in range(p)]))


@pytest.fixture(scope="module")
def fig2_schedule() -> Schedule:
    s = ordered_tree_schedule(Problem("gatherv", 11, 9, FIG2_COUNTS))
    s.validate()
    return s


def chain_schedule() -> Schedule:
    """Two steps: 0 sends block 0 to 1, then 1 sends blocks 0..1 to the root 2."""
    return Schedule("gatherv", "chain", 3, [
        [Send(1, 4, blocks=range(0, 1))],
        [Recv(0, 4, blocks=range(0, 1)), Send(2, 8, blocks=range(0, 2))],
        [Recv(1, 8, blocks=range(0, 2))],
    ], Problem("gatherv", 3, 2, (1, 1, 1)))


def ring_schedule(p: int = 4) -> Schedule:
    """Ring allgather: in round k rank i passes block (i - k) mod p to i + 1."""
    programs = [[SendRecv((i + 1) % p, 4, (i - 1) % p, 4, tag=k,
                          send_blocks=range((i - k) % p, (i - k) % p + 1),
                          recv_blocks=range((i - 1 - k) % p, (i - 1 - k) % p + 1))
                 for k in range(p - 1)] for i in range(p)]
    return Schedule("allgather", "ring", p, programs, Problem("allgather", p, 0, (1,) * p))


# -- layouts ----------------------------------------------------------------------------------
def test_tree_layout_puts_an_ordered_tree_in_rank_order_root_on_top(fig2_schedule):
    pos = viz.tree_layout(fig2_schedule.meta["parent"])
    assert [pos[r][0] for r in range(11)] == list(range(11))
    assert pos[9][1] == 0 and all(y < 0 for r, (x, y) in pos.items() if r != 9)
    for child, q in enumerate(fig2_schedule.meta["parent"]):
        if q >= 0:
            assert pos[child][1] < pos[q][1]


def test_tree_layout_keeps_subtrees_in_consecutive_columns():
    parent = [-1, 3, 0, 0, 2, 3]  # not ordered: subtree of 3 is {1, 3, 5}
    pos = viz.tree_layout(parent)
    assert sorted(x for x, _ in pos.values()) == [0, 1, 2, 3, 4, 5]
    assert sorted(pos[r][0] for r in (1, 3, 5)) in ([3, 4, 5], [0, 1, 2])
    with pytest.raises(ValueError, match="cycle"):
        viz.tree_layout([1, 0, -1])
    with pytest.raises(ValueError, match="not a rank"):
        viz.tree_layout([-1, 7])


# -- static drawing ---------------------------------------------------------------------------
def test_figure2_style_tree_edges_sizes_and_styles(fig2_schedule):
    fig = viz.gather_tree_figure(fig2_schedule)
    src = viz.sources(fig)
    nodes, edges = src["nodes"].data, src["edges"].data
    assert nodes["index"] == list(range(11))
    assert nodes["m"] == list(FIG2_COUNTS)
    assert nodes["m_label"][3] == "m=5"
    assert [c == viz.graph.ROOT_COLOR for c in nodes["fill_color"]] == [r == 9 for r in range(11)]

    parent, edge_bytes = fig2_schedule.meta["parent"], fig2_schedule.meta["edge_bytes"]
    cols = ("style", "nbytes", "line_dash", "line_width", "head_start", "head_end", "y0", "y1",
            "label")
    by_kind: dict[str, dict] = {"data": {}, "exchange": {}}
    for i, (a, b, kind) in enumerate(zip(edges["start"], edges["end"], edges["kind"])):
        by_kind[kind][a, b] = tuple(edges[c][i] for c in cols)
    tree = by_kind["data"]
    assert set(tree) == {(c, q) for c, q in enumerate(parent) if q >= 0}
    zero = {(c, parent[c]) for c in range(11) if parent[c] >= 0 and edge_bytes[c] == 0}
    assert zero, "the instance must have zero-size tree edges"
    for (c, q), (style, nbytes, dash, width, head_start, head_end, y0, y1, label) in tree.items():
        assert nbytes == edge_bytes[c]
        assert style == ("zero" if (c, q) in zero else "tree")
        assert dash == ("dotted" if (c, q) in zero else "solid")
        assert width == (2.0 if (c, q) in zero else 4.0)  # thick arrows for data
        assert head_end > 0 and head_start == 0           # one head, pointing up to the parent
        assert y1 > y0
        assert label == ("" if (c, q) in zero else f"{nbytes} B")

    exchanges = by_kind["exchange"]
    assert set(exchanges) == {(a, b) for _, a, b in fig2_schedule.meta["fixed_exchanges"]}
    for style, _, _, _, head_start, head_end, y0, y1, _ in exchanges.values():
        assert style == "exchange" and head_start > 0 and head_end > 0  # double arrow
        assert y0 == y1                                                  # horizontal
    # one row per iteration, below every rank
    row_y = {it: y for it, y in zip(edges["iteration"], edges["y0"])
             if it >= 0}
    assert len(set(row_y.values())) == 4 == len(row_y)
    assert max(row_y.values()) < min(nodes["y"])
    assert "double arrows" in fig.select_one({"name": "caption"}).text


def test_edge_bytes_default_to_what_the_programs_send():
    s = model.schedule("gatherv", "linear", make_problem("gatherv", 5, "two_blocks", 3, root=2))
    edges = viz.sources(viz.schedule_figure(s))["edges"].data
    got = {(a, b): (n, st) for a, b, n, st in zip(edges["start"], edges["end"], edges["nbytes"],
                                                  edges["style"])}
    assert got == {(0, 2): (12, "tree"), (1, 2): (0, "zero"), (3, 2): (0, "zero"),
                   (4, 2): (12, "tree")}


def test_without_a_tree_the_messages_are_drawn_on_a_circle():
    s = ring_schedule(4)
    g = viz.schedule_graph(s)
    assert sorted((u, v, d["nbytes"], d["count"]) for u, v, d in g.edges(data=True)) == [
        (0, 1, 12, 3), (1, 2, 12, 3), (2, 3, 12, 3), (3, 0, 12, 3)]
    fig = viz.schedule_figure(s)
    src = viz.sources(fig)
    assert set(src["edges"].data["style"]) == {"message"}
    assert src["edges"].data["label"][0] == "3× 12 B"
    xs, ys = src["nodes"].data["x"], src["nodes"].data["y"]
    radii = {round(x * x + y * y, 9) for x, y in zip(xs, ys)}
    assert len(radii) == 1 and ys[0] == max(ys)  # a circle, rank 0 on top
    # a two-way exchange without a tree is one double arrow
    ex = Schedule("x", "pair", 2, [[SendRecv(1, 8, 1, 8, kind="exchange")],
                                   [SendRecv(0, 8, 0, 8, kind="exchange")]])
    e = viz.sources(viz.schedule_figure(ex))["edges"].data
    assert (e["start"], e["end"], e["style"], e["nbytes"]) == ([0], [1], ["exchange"], [16])
    assert e["head_start"][0] > 0 and e["head_end"][0] > 0


def test_gather_tree_figure_needs_a_tree():
    with pytest.raises(ValueError, match="no gather tree"):
        viz.gather_tree_figure(ring_schedule(3))


# -- holdings (Schedule.holdings, program.py) -------------------------------------------------
def test_chain_schedule_gives_exactly_the_expected_frames():
    frames = viz.animation_frames(chain_schedule())
    assert frames == [
        {"step": 0, "time": None, "messages": [], "carried": [],
         "holdings": [[0], [1], [2]], "new": [[], [], []], "active": []},
        {"step": 1, "time": 0.0, "messages": [0], "carried": [[0]],
         "holdings": [[0], [0, 1], [2]], "new": [[], [0], []], "active": [0, 1]},
        {"step": 2, "time": 1.0, "messages": [1], "carried": [[0, 1]],
         "holdings": [[0], [0, 1], [0, 1, 2]], "new": [[], [], [0, 1]], "active": [1, 2]},
    ]
    # and exactly these frames are embedded in the animation
    src = viz.sources(viz.animate_schedule(chain_schedule()))
    f = src["frames"].data
    assert f["step"] == [0, 1, 2]
    assert f["msgs"] == [[], [0], [1]]
    assert f["held_text"] == [["{0}", "{1}", "{2}"], ["{0}", "{0–1}", "{2}"],
                              ["{0}", "{0–1}", "{0–2}"]]
    assert f["cells"][2] == [1, 0, 0, 1, 1, 0, 2, 2, 1]  # rank-major; 2 = just arrived
    m = src["messages"].data
    assert (m["src"], m["dst"], m["nbytes"], m["step"]) == ([0, 1], [1, 2], [4, 8], [1, 2])
    assert m["blocks"] == ["0", "0-1"]
    assert src["current"].data["src"] == [] and src["done"].data["src"] == []


def test_linear_gatherv_animation_frames_follow_simulate():
    s = model.schedule("gatherv", "linear", make_problem("gatherv", 5, "random", 3, root=2))
    result = simulate(s, 1.0, 0.0)
    layout = viz.animate_schedule(s)
    src = viz.sources(layout)
    frames, msgs = src["frames"].data, src["messages"].data
    starts = sorted({m.start for m in result.messages})
    assert len(frames["step"]) == len(starts) + 1
    for k, t in enumerate(starts, start=1):
        expected = sorted((m.src, m.dst, m.nbytes) for m in result.messages if m.start == t)
        highlighted = sorted((a, b, n) for a, b, n, st in zip(msgs["src"], msgs["dst"],
                                                              msgs["nbytes"], msgs["step"])
                             if st == k)
        assert highlighted == expected
        assert frames["time"][k] == t
        assert sorted(frames["msgs"][k]) == [i for i, st in enumerate(msgs["step"]) if st == k]
    # the linear builder sets no blocks: they are inferred from the byte counts
    assert frames["held_text"][-1][2] == "{0–4}"
    last = viz.animation_frames(s)[-1]
    assert last["holdings"][2] == [0, 1, 2, 3, 4]
    assert frames["n_held"][-1] == [1, 1, 5, 1, 1]
    s.check_blocks()
    slider = layout.select_one({"name": "step_slider"})
    assert (slider.start, slider.end, slider.value) == (0, len(starts), 0)


def test_animations_too_large_to_embed_are_refused_clearly():
    s = model.schedule("gatherv", "linear", make_problem("gatherv", 700, "same", 1))
    with pytest.raises(ValueError, match="700 steps x 700 ranks.*schedule_figure"):
        viz.animate_schedule(s)
    s.check_blocks()  # the symbolic check itself is fine at this size


def test_holdings_follow_beta_and_a_given_simulation():
    s = chain_schedule()
    steps = s.holdings(simulate(s, 1.0, 0.5))
    assert [st.time for st in steps] == [None, 0.0, 3.0]
    assert [st.index for st in steps] == [0, 1, 2]


def test_scatter_precondition_and_postcondition():
    p, root = 4, 1
    progs = [[] for _ in range(p)]
    for i in range(p):
        if i != root:
            progs[root].append(Send(i, 4, blocks=range(i, i + 1)))
            progs[i].append(Recv(root, 4, blocks=range(i, i + 1)))
    s = Schedule("scatterv", "linear", p, progs, Problem("scatterv", p, root, (1,) * p))
    assert s.initial_blocks() == [frozenset(), frozenset(range(4)), frozenset(), frozenset()]
    s.check_blocks()
    assert [sorted(h) for h in s.holdings()[-1].holdings] == [[0], [0, 1, 2, 3], [2], [3]]
    # a rank forwarding a block it never got is caught
    bad = Schedule("scatterv", "bad", 3, [[Send(1, 4, blocks=range(2, 3))],
                                          [Recv(0, 4, blocks=range(2, 3))], []],
                   Problem("scatterv", 3, 1, (1, 1, 1)))
    with pytest.raises(ScheduleError, match="rank 0 sends block"):
        bad.check_blocks()


def test_ring_allgather_holdings_and_the_tuw_like_tree_pass_the_check(fig2_schedule):
    ring = ring_schedule(5)
    ring.check_blocks()
    steps = ring.holdings()
    assert len(steps) == 5  # step 0 and p - 1 rounds
    assert all(len(h) == 5 for h in steps[-1].holdings)
    fig2_schedule.check_blocks()
    # every block reaches the root but 8: empty, on a dotted edge, never sent
    assert fig2_schedule.holdings()[-1].holdings[9] == frozenset(range(11)) - {8}


def test_send_and_receive_must_agree_on_blocks():
    s = Schedule("gatherv", "x", 2, [[Send(1, 4, blocks=range(0, 1))],
                                     [Recv(0, 4, blocks=range(1, 2))]])
    with pytest.raises(ScheduleError, match="sends blocks 0..0 to rank 1, which receives "
                                            "blocks 1..1"):
        s.holdings()


def test_meta_overrides_the_pre_and_postcondition():
    s = Schedule("bcast", "x", 2, [[Send(1, 4, blocks=range(0, 1))],
                                   [Recv(0, 4, blocks=range(0, 1))]],
                 meta={"initial_blocks": [[0], []], "final_blocks": [[0], [0]]})
    s.check_blocks()
    s.meta["final_blocks"] = [[0], [0, 1]]
    with pytest.raises(ScheduleError, match=re.escape("rank 1 lacks block(s) [1]")):
        s.check_blocks()


# -- timeline ---------------------------------------------------------------------------------
EVENTS = [
    [{"rank": 0, "peer": 1, "dir": "send", "tag": 0, "bytes": 40, "t_start": 100.0,
      "t_end": 104.0},
     {"rank": 0, "peer": 2, "dir": "recv", "tag": 1, "bytes": 8, "t_start": 106.0,
      "t_end": 109.0}],
    [{"rank": 1, "peer": 0, "dir": "recv", "tag": 0, "bytes": 40, "t_start": 101.0,
      "t_end": 104.0}],
    [{"rank": 2, "peer": 0, "dir": "send", "tag": 1, "bytes": 8, "t_start": 107.0,
      "t_end": 109.0}],
]


def test_timeline_bars_match_the_events():
    fig = viz.timeline_figure(EVENTS, scale=1.0, unit="s")
    bars = viz.sources(fig)["bars"].data
    rows = sorted(zip(bars["rank"], bars["what"], bars["peer"], bars["bytes"], bars["left"],
                      bars["right"]))
    assert rows == [
        (0, "recv", 2, 8, 7.0, 9.0),
        (0, "send", 1, 40, 1.0, 4.0),
        (0, "wait", 1, 40, 0.0, 1.0),   # rank 0 posted at 0, rank 1 only at 1
        (0, "wait", 2, 8, 6.0, 7.0),
        (1, "recv", 0, 40, 1.0, 4.0),
        (2, "send", 0, 8, 7.0, 9.0),
    ]
    # sends above the rank's line, receives below it (rank 0 on top)
    assert {(w, round(y - r, 2)) for r, w, y in zip(bars["rank"], bars["dir"], bars["y"])} == {
        ("send", -0.2), ("recv", 0.2)}
    summary = viz.sources(fig)["summary"].data
    assert summary["wait"] == [2.0, 0.0, 0.0]
    assert summary["idle"] == [2.0, 1.0, 7.0]   # rank 0 between 4 and 6; others before start
    assert summary["finish"] == [9.0, 4.0, 9.0]
    assert summary["after"] == [0.0, 5.0, 0.0]
    # a flat event list is the same trace
    flat = [e for evs in EVENTS for e in evs]
    assert viz.trace_bars(flat).equals(viz.trace_bars(EVENTS))


def test_model_timeline_has_the_simulated_transfers(fig2_schedule):
    result = simulate(fig2_schedule, 1e-6, 1e-9)
    events = viz.sim_events(result, fig2_schedule)
    assert [len(evs) for evs in events] == [len(fig2_schedule.messages(r)) for r in range(11)]
    for r, evs in enumerate(events):  # program order, as the kernels record traces
        assert [(e["dir"], e["peer"], e["bytes"]) for e in evs] == fig2_schedule.messages(r)
    bars = viz.trace_bars(events)
    transfers = bars[bars["what"] != "wait"]
    got = sorted((row.rank, row.dir, row.peer, round(row.start, 12), round(row.end, 12))
                 for row in transfers.itertuples())
    want = sorted([(m.src, "send", m.dst, round(m.start, 12), round(m.end, 12))
                   for m in result.messages] +
                  [(m.dst, "recv", m.src, round(m.start, 12), round(m.end, 12))
                   for m in result.messages])
    assert got == want
    idle = viz.idle_times(events)
    assert idle["finish"].max() == pytest.approx(result.time)
    assert list(idle["finish"]) == pytest.approx(list(result.finish))
    fig = viz.timeline_figure(result, schedule=fig2_schedule)
    assert len(viz.sources(fig)["bars"].data["rank"]) == len(bars)
    # without the schedule, post times are estimated from the messages alone
    assert len(viz.trace_bars(result)) >= len(result.messages) * 2


# -- offline HTML -----------------------------------------------------------------------------
def test_saved_html_embeds_bokehjs_and_names_no_cdn(tmp_path, fig2_schedule):
    figures = {"tree": viz.gather_tree_figure(fig2_schedule),
               "animation": viz.animate_schedule(fig2_schedule),
               "timeline": viz.timeline_figure(simulate(fig2_schedule, 1e-6, 1e-9),
                                               schedule=fig2_schedule)}
    for name, obj in figures.items():
        text = viz.save_html(obj, tmp_path / f"{name}.html").read_text(encoding="utf-8")
        assert "cdn.bokeh.org" not in text, name
        assert not re.search(r"<script[^>]+src=", text), name
        assert len(text) > 1_000_000, name  # BokehJS itself is inside


# -- widgets ----------------------------------------------------------------------------------
def test_explorer_rebuilds_tree_and_animation_when_controls_change():
    box = viz.schedule_explorer("gatherv", "linear", p=6, root=5, distribution="same", b=2,
                                display=False)
    ex = box.explorer
    assert ex.schedule.p == 6 and ex.problem.root == 5 and ex.error is None
    assert set(ex.figures) == {"tree", "animation"}
    assert viz.sources(ex.figures["tree"])["nodes"].data["index"] == list(range(6))
    ex.p.value = 4   # the observer clamps the root and redraws
    assert ex.root.max == 3 and ex.root.value == 3
    assert ex.schedule.p == 4 and ex.problem.root == 3
    assert viz.sources(ex.figures["animation"])["nodes"].data["index"] == [0, 1, 2, 3]
    ex.distribution.value = "two_blocks"
    ex.b.value = 7
    assert ex.problem.counts == (7, 0, 0, 7)
    assert "p=4 root=3 two_blocks b=7" in ex.status.value
    frames = viz.sources(ex.figures["animation"])["frames"].data
    assert frames["n_held"][-1][3] == 2  # the root got block 0; empty blocks 1, 2 never move


def test_explorer_reports_errors_instead_of_raising(monkeypatch):
    ex = viz.ScheduleExplorer("gatherv", p=3, display=False)

    def broken(*args, **kwargs):
        raise ScheduleError("rank 0 waits forever")

    monkeypatch.setattr(model, "schedule", broken)
    assert ex.update() == {}
    assert ex.error == "rank 0 waits forever" and "waits forever" in ex.status.value
    with pytest.raises(ValueError, match="no model for algorithm 'nope'"):
        viz.ScheduleExplorer("gatherv", "nope", display=False)


def test_timeline_of_a_real_kernel_trace():
    """The C kernel's recorded trace (mpiexec, 4 ranks) drawn as recorded."""
    from tuwviz.run.launch import run_mpiexec

    pr = make_problem("gatherv", 4, "same", 100, root=1)
    got = {}
    run_mpiexec(4, [{"mode": "trace", "problem": pr.to_dict(), "algorithm": "linear"}],
                lambda i, case, r: got.__setitem__(i, r))
    events = got[0]
    assert [len(evs) for evs in events] == [1, 3, 1, 1]
    fig = viz.timeline_figure(events, title="linear gatherv, 4 ranks (mpiexec)")
    bars = viz.sources(fig)["bars"].data
    t0 = min(e["t_start"] for evs in events for e in evs)
    for evs in events:
        for e in evs:
            mine = [k for k, (r, w, peer) in enumerate(zip(bars["rank"], bars["what"],
                                                           bars["peer"]))
                    if (r, w, peer) == (e["rank"], e["dir"], e["peer"])]
            assert len(mine) == 1
            k = mine[0]
            assert bars["right"][k] == pytest.approx((e["t_end"] - t0) * 1e6)
            assert bars["post"][k] == pytest.approx((e["t_start"] - t0) * 1e6)
            assert bars["bytes"][k] == e["bytes"] == 400
            assert bars["post"][k] <= bars["left"][k] <= bars["right"][k]
    idle = viz.idle_times(events, scale=1e6)
    assert list(idle["ops"]) == [1, 3, 1, 1]
    assert (idle[["send", "recv", "wait", "idle", "after"]] >= -1e-9).all().all()
    assert idle["finish"].max() == pytest.approx(max(bars["right"]))
