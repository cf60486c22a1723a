"""The intergroup pictures (tuwviz.viz.intergroup): Figures 1-3's exchanges, the replay of
model schedules and recorded traces, Figure 6's plot, and the saved animation playing in
a real headless Chromium."""
from __future__ import annotations

import pytest

from tuwviz import viz
from tuwviz.analysis.fits import intergroup_improvement
from tuwviz.model import schedule
from tuwviz.model.intergroup_cost import improvement_curve
from tuwviz.model.topology import ig_recv_order
from tuwviz.problems import Problem, make_problem
from tuwviz.run.trace import trace
from tuwviz.viz import sources
from tuwviz.viz.intergroup import intergroup_frames

from support import hang_guard, open_bokeh_page

ALGORITHMS = [("allgather", "root_gathering"), ("allgather", "segmented"),
              ("allgatherv", "root_gathering"), ("allgatherv", "segmented")]


def exchange(fig):
    d = sources(fig)["exchange"].data
    return list(zip(d["src"], d["dst"], d["bytes"], d["order"]))


def test_figure_1_algorithm_1_with_p_6_and_q_2():
    # s_0 = {a0, a1, a2} with b0, s_1 = {a3, a4, a5} with b1; b_j's block in 3 segments
    s = schedule("allgather", "segmented", make_problem("allgather", 6, "regular", 6, q=2,
                                                         datatype="byte"))
    got = exchange(viz.intergroup_figure(s))
    want = []
    for i in range(6):
        j = 6 + i // 3
        want += [(i, j, 6, i % 3 + 1), (j, i, 2, 1)]  # a_i's block: b_j's i-th receive
    assert got == want


def test_figure_3_algorithm_2_receive_order():
    # the worked example: blocks 3 1 4 1 5 2 to q = 3 (parts [0,6) [6,11) [11,16))
    pr = make_problem("allgatherv", 6, "regular", 1, q=3, b_b=2, datatype="byte")
    pr = Problem(**{**pr.__dict__, "counts": (3, 1, 4, 1, 5, 2, 2, 2, 2)})
    got = exchange(viz.intergroup_figure(schedule("allgatherv", "segmented", pr)))
    for k in range(3):
        into = sorted((order, src) for src, dst, _, order in got if dst == 6 + k)
        assert [src for _, src in into] == ig_recv_order(6, [3, 1, 4, 1, 5, 2], 3, k)
    assert sum(n for src, dst, n, _ in got if dst >= 6) == 16  # every byte of A once


@pytest.mark.parametrize("collective, algorithm", ALGORITHMS)
def test_frames_replay_every_message_once_and_everyone_ends_with_the_other_groups_data(
        collective, algorithm):
    for p, q in [(6, 2), (2, 5), (3, 3), (8, 3)]:
        pr = make_problem(collective, p, "arithmetic" if collective == "allgatherv"
                          else "regular", 5, q=q, b_b=3, datatype="byte")
        s = schedule(collective, algorithm, pr)
        frames = intergroup_frames(s)
        sent = sorted((t[0], t[1], t[2]) for f in frames for t in f["transfers"])
        assert sent == sorted((r, peer, n) for r in range(s.p)
                              for d, peer, n in s.messages(r) if d == "send")
        last = frames[-1]
        assert all(got >= need for got, need in zip(last["received"], last["needed"]))
        if algorithm == "segmented" and collective == "allgather":
            assert last["received"] == last["needed"]  # each byte of the other group once
        between = [t for f in frames for t in f["transfers"] if t[3]]
        in_a = set(range(p)) if p >= q else set(range(p, p + q))
        assert all((t[0] in in_a) != (t[1] in in_a) for t in between)


def test_a_recorded_trace_replays_like_the_model_and_a_wrong_one_is_refused():
    pr = make_problem("allgatherv", 5, "qiaok", 4, q=2, datatype="int")
    s = schedule("allgatherv", "segmented", pr)
    (events,) = trace([pr], "segmented")
    assert intergroup_frames(s, events) == intergroup_frames(s)
    wrong = [list(e) for e in events]
    wrong[3] = wrong[3][1:]
    with pytest.raises(ValueError, match="differs from the segmented model first at rank 3"):
        intergroup_frames(s, wrong)


def test_other_schedules_and_too_many_processes_are_refused():
    with pytest.raises(ValueError, match="draws the intergroup schedules"):
        viz.animate_intergroup(schedule("allgather", "circulant", make_problem("allgather", 4)))
    big = schedule("allgather", "segmented", make_problem("allgather", 40, "regular", 1, q=9))
    with pytest.raises(ValueError, match="too many to draw"):
        viz.intergroup_figure(big)


def test_improvement_figure_has_model_lines_and_measured_points():
    model_rows = improvement_curve([1, 2], 64, [1 << 14, 1 << 18])
    import pandas as pd

    rows = pd.DataFrame({"collective": "allgather",
                         "algorithm": ["root_gathering", "segmented", "native"], "p": 6,
                         "q": 2, "distribution": "regular", "b": 4096, "b_b": 4096,
                         "datatype": "int", "median_us": [1200.0, 400.0, 1000.0], "ranks": 8,
                         "oversubscribed": True})
    measured = intergroup_improvement(rows, setting=1)
    assert [(m["improvement"], m["bytes"], m["oversubscribed"]) for m in measured] == \
        [(3.0, 16384, True)]
    fig = viz.improvement_figure(model_rows, measured, measured_label="8 ranks on 2 cores")
    src = sources(fig)
    assert src["model"].data["improvement"] == [r["improvement"] for r in sorted(
        model_rows, key=lambda r: (r["setting"], r["bytes"]))]
    assert src["measured"].data["improvement"] == [3.0]
    labels = [item.label["value"] for item in fig.legend.items]
    assert "setting 1, Eq. (5)" in labels and "8 ranks on 2 cores" in labels
    with pytest.raises(ValueError, match="from one group"):
        intergroup_improvement(rows.drop(columns=["q"]))


STATE_JS = """() => {
    const doc = Bokeh.documents[0];
    const get = (name) => doc.get_model_by_name(name);
    return {
        value: get("step_slider").value,
        label: get("step_label").text,
        held: Array.from(get("nodes").data.held),
        color: Array.from(get("nodes").data.color),
        inter: get("current_inter").data.src.map((s, i) => [s, get("current_inter").data.dst[i]]),
        intra: get("current_intra").data.src.length,
    };
}"""


def test_the_saved_animation_plays_in_chromium(browser, tmp_path):
    s = schedule("allgather", "segmented", make_problem("allgather", 6, "regular", 4, q=2,
                                                         datatype="byte"))
    frames = intergroup_frames(s)
    path = viz.save_html(viz.animate_intergroup(s, interval_ms=150), tmp_path / "ig.html")
    page, errors = open_bokeh_page(browser, path)
    page.locator("canvas").first.wait_for(state="attached", timeout=hang_guard(120_000))
    first = page.evaluate(STATE_JS)
    assert first["value"] == 0 and first["held"] == ["0/8 B"] * 6 + ["0/24 B"] * 2
    handle = page.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function("() => Bokeh.documents[0].get_model_by_name('step_slider').value == 1",
                           timeout=hang_guard(60_000))
    one = page.evaluate(STATE_JS)  # the exchange's first round: a_0 -> b_0, a_3 -> b_1, back
    assert sorted(one["inter"]) == sorted([t[0], t[1]] for t in frames[1]["transfers"]) != []
    assert one["held"] != first["held"] and one["label"].startswith("step 1 of")
    page.get_by_role("button", name="► Play").click()
    end = len(frames) - 1
    page.wait_for_function(
        f"() => Bokeh.documents[0].get_model_by_name('step_slider').value == {end}",
        timeout=hang_guard(60_000))
    last = page.evaluate(STATE_JS)
    assert last["held"] == [f"{g}/{n} B" for g, n in zip(frames[-1]["received"],
                                                          frames[-1]["needed"])]
    assert set(last["color"]) == {"#f2b134"}  # everyone has all of the other group's data
    assert last["intra"] == sum(not t[3] for t in frames[-1]["transfers"]) > 0
    assert last["label"].startswith(f"step {end} of {end}")
    assert not errors, errors
    page.close()
