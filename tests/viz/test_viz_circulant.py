"""tuwviz.viz.circulant: the replay of the circulant reductions (the paper's invariant
checked on the model and on recorded traces), Figure 1's data, and the saved animation in
a real headless Chromium."""
from __future__ import annotations

import pytest

from tuwviz import viz
from tuwviz.model import SendRecv, schedule
from tuwviz.model.topology import circ_from, circ_skips, circ_to
from tuwviz.problems import Problem, make_problem
from tuwviz.run.trace import trace
from tuwviz.viz.circulant import (
    CIRCULANT_ALGORITHMS,
    animate_circulant,
    circulant_figure,
    circulant_frames,
    rank_ranges,
)

from support import hang_guard, open_bokeh_page


def problem(coll, p, root=0):
    if coll == "reduce_scatter":
        return Problem(coll, p, 0, tuple((i * 7) % 4 for i in range(p)), op="sum")
    return make_problem(coll, p, "same", 2, root=root)


@pytest.mark.parametrize("coll, alg", CIRCULANT_ALGORITHMS)
def test_every_schedule_sums_every_input_once_for_p_up_to_40(coll, alg):
    for p in range(1, 41):
        for root in sorted({0, p // 2, p - 1}) if coll == "reduce" else [0]:
            frames = circulant_frames(schedule(coll, alg, problem(coll, p, root)))
            q, _ = circ_skips(p)
            if alg in ("butterfly", "recursive_halving"):  # log2 p' rounds, and a pre- and
                q = p.bit_length() - 1 + (0 if p & (p - 1) == 0 else 2)  # post-step unless p = p'
            assert len(frames) == 1 + q
            if coll == "reduce":
                assert frames[-1]["sets"][root] == list(range(p))
            elif coll == "allgather":  # blocks held, not inputs summed
                assert frames[-1]["held"] == [rank_ranges(range(p), p)] * p
            else:
                assert frames[-1]["sets"] == [list(range(p))] * p


def test_figure_2_rounds_for_p_11():
    """Rank 0 of Figure 2: S grows 1, 2, 5, 10 inputs (ranges 1, 1-2, 1-5, 1-10)."""
    frames = circulant_frames(schedule("allreduce", "circulant", problem("allreduce", 11)))
    assert [f["held"][0] for f in frames] == ["0", "0-1", "0-2", "0-5", "0-10"]
    # round 3 (e = 1): rank 5 sends S_5 = inputs 6..10 to rank 0
    assert [5, 0, "6-10"] in frames[4]["transfers"]


def test_a_wrong_schedule_is_caught_by_the_replay():
    s = schedule("allreduce", "circulant", problem("allreduce", 6))
    prog = s.programs[2]
    i = next(i for i, op in enumerate(prog) if isinstance(op, SendRecv) and op.tag == 1)
    op = prog[i]
    prog[i] = SendRecv(op.send_peer, op.send_nbytes, (op.recv_peer + 1) % 6, op.recv_nbytes,
                       tag=1)
    with pytest.raises(ValueError, match="added twice|ends with the inputs"):
        circulant_frames(s)


def test_recorded_traces_replay_like_the_model():
    cases = [("allreduce", "circulant", 7), ("reduce_scatter_block", "circulant", 6),
             ("reduce_scatter", "circulant", 9), ("reduce", "circulant", 5),
             ("reduce_scatter", "recursive_halving", 6), ("allreduce", "butterfly", 6),
             ("allgather", "circulant", 7), ("allgather", "bruck", 6)]
    prs = [problem(coll, p, root=p - 1) for coll, _, p in cases]
    traces = trace(prs, [alg for _, alg, _ in cases])  # one run for all
    for (coll, alg, p), pr, events in zip(cases, prs, traces):
        assert circulant_frames(schedule(coll, alg, pr), events) == \
            circulant_frames(schedule(coll, alg, pr)), (coll, alg)


def test_figure_1_highlights_the_to_and_from_edges_of_a_rank():
    for p, rank in [(11, 0), (9, 8), (2, 1)]:
        q, skips = circ_skips(p)
        h = viz.sources(circulant_figure(p, rank))["highlight"].data
        want = [("to", rank, circ_to(p, rank, skips, k), k) for k in range(q)] + \
               [("from", circ_from(p, rank, skips, k), rank, k) for k in range(q)]
        assert list(zip(h["kind"], h["src"], h["dst"], h["round"])) == want
    with pytest.raises(ValueError, match="draws 1..64 processes"):
        circulant_figure(1000)


def test_rank_ranges():
    assert rank_ranges({6, 7, 8, 9, 10}, 11) == "6-10"
    assert rank_ranges({10, 0, 1, 5}, 11) == "5,10-1"


def test_other_schedules_are_refused():
    with pytest.raises(ValueError, match="replays allreduce/circulant"):
        circulant_frames(schedule("gatherv", "linear", make_problem("gatherv", 4)))


STATE_JS = """() => {
    const doc = Bokeh.documents[0];
    const get = (name) => doc.get_model_by_name(name);
    const cur = get("current").data;
    return {
        value: get("step_slider").value,
        label: get("step_label").text,
        current: Array.from(cur.label),
        held: Array.from(get("nodes").data.held),
    };
}"""


def test_the_saved_animation_plays_in_chromium(browser, tmp_path):
    s = schedule("allreduce", "circulant", problem("allreduce", 11))
    frames = circulant_frames(s)
    path = viz.save_html(animate_circulant(s, interval_ms=200), tmp_path / "circ.html")
    page, errors = open_bokeh_page(browser, path)
    page.locator("canvas").first.wait_for(state="attached", timeout=hang_guard(120_000))
    first = page.evaluate(STATE_JS)
    assert first["value"] == 0 and first["held"] == frames[0]["held"]
    assert page.locator("canvas").count() >= 1  # drawn (Bokeh's canvas sits in shadow DOM)
    page.get_by_role("button", name="► Play").click()
    page.wait_for_function("() => Bokeh.documents[0].get_model_by_name('step_slider').value == 4",
                           timeout=hang_guard(60_000))
    last = page.evaluate(STATE_JS)
    assert last["held"] == frames[4]["held"] == ["0-10"] * 11
    assert sorted(last["current"]) == sorted(t[2] for t in frames[4]["transfers"])
    assert last["label"].startswith("round 3")
    assert not errors, errors
    page.close()


def test_the_explorer_animates_reductions_with_their_partial_sums():
    ex = viz.ScheduleExplorer("allreduce", "circulant", p=6, b=2, distribution="same",
                              display=False)
    figures = ex.update()
    assert ex.error is None and figures["animation"].name == "circulant_animation"
    assert viz.sources(figures["animation"])["frames"].data["held"][-1] == ["0-5"] * 6


def test_allgather_buffers_copy_what_the_model_copies_for_p_up_to_40():
    """Listing 7's buffer trick drawn from the same rule the kernel and model follow: the
    blocks a rank copies after the rounds equal the model's last copy (at most ceil(p/2),
    none at rank 0), and every round fills exactly the positions Proposition 3 says."""
    from tuwviz.model import Compute
    from tuwviz.viz.circulant import allgather_buffer_figure, allgather_buffers

    for p in range(1, 41):
        s = schedule("allgather", "circulant", make_problem("allgather", p, "same", 1))
        q, skips = circ_skips(p)
        for r in range(p):
            b = allgather_buffers(p, r)
            copies = [op.units for op in s.programs[r] if isinstance(op, Compute)]
            assert b["copied"] == (copies[1] if len(copies) > 1 else 0), (p, r)
            assert b["copied"] <= -(-p // 2) and (r > 0 or b["copied"] == 0)
            for k, row in b["rounds"].items():
                n = 1 if k < 0 else skips[k + 1]
                assert row == [(r + j) % p if j < n else None for j in range(p)]
    cells = viz.sources(allgather_buffer_figure(9, 6))["cells"].data
    assert set(cells["buffer"]) == {"lowrbuf", "upprbuf"}
