"""The saved ring animation works in a real headless Chromium: slider and play redraw it.

Needs Chromium at /usr/bin/chromium (``make browser`` installs it; override with
TUWVIZ_CHROMIUM) and the ``playwright`` package (never ``playwright install``: the
browser comes from the system).  See tests/viz/test_viz_browser.py for the general animation.
"""
from __future__ import annotations

import pytest

from tuwviz import viz
from tuwviz.model import schedule
from tuwviz.problems import make_problem
from tuwviz.viz.animation import CELL_COLORS

from support import hang_guard, play

INTERVAL_MS = 300  # the animation's step while playing

# JavaScript reading the drawn state back from the Bokeh document.
STATE_JS = """() => {
    const doc = Bokeh.documents[0];
    const get = (name) => doc.get_model_by_name(name);
    const cur = get("current").data;
    return {
        value: get("step_slider").value,
        label: get("step_label").text,
        button: get("play_button").label,
        cells: Array.from(get("cells").data.state),
        colors: Array.from(get("cells").data.fill_color),
        current: Array.from(cur.src).map((s, i) => [s, cur.dst[i], cur.label[i]]),
        held: Array.from(get("nodes").data.held_text),
    };
}"""


def slider_at(k: int) -> str:
    return f"() => Bokeh.documents[0].get_model_by_name('step_slider').value == {k}"


@pytest.fixture(scope="module")
def ring_page(browser, tmp_path_factory):
    # spike on 5 processes: rank 0 has 20 B in pieces of 8, 8, 4; the others one of 4 B
    s = schedule("allgatherv", "pipelined",
                 make_problem("allgatherv", 5, "spike", 40, datatype="byte"), block_bytes=8)
    path = viz.save_html(viz.animate_ring(s, interval_ms=INTERVAL_MS),
                         tmp_path_factory.mktemp("html") / "ring.html")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0 "
                           "&& Bokeh.documents[0].get_model_by_name('step_slider') !== null")
    page.locator(".noUi-handle").first.wait_for(state="visible", timeout=hang_guard(120_000))
    yield page, s, viz.ring_frames(s), errors
    page.close()


def expected(s, frame) -> dict:
    """What the page must show for `frame`: grid states (ring order x piece), arrows."""
    sizes = [n for _, _, n in s.meta["pieces"]]
    cells = [2 if v in frame["new"][r] else 1 if frame["held"][r][v] == n else 0
             for r in s.meta["ring"] for v, n in enumerate(sizes)]
    labels = [f"{o}.{j}" for o, j in _owner_index(s)]
    current = [[src, dst, labels[v]] for src, dst, v, _, _ in frame["transfers"]]
    return {"cells": cells, "colors": [CELL_COLORS[c] for c in cells], "current": current}


def _owner_index(s) -> list[tuple[int, int]]:
    out, seen = [], {}
    for owner, _, _ in s.meta["pieces"]:
        out.append((owner, seen.get(owner, 0)))
        seen[owner] = seen.get(owner, 0) + 1
    return out


def test_moving_the_slider_redraws_grid_arrows_and_label(ring_page):
    page, s, frames, errors = ring_page
    last = len(frames) - 1
    before = page.evaluate(STATE_JS)
    shot = page.screenshot()
    assert before["value"] == 0 and before["current"] == []
    assert "step 0 of" in before["label"]
    assert before["cells"] == expected(s, frames[0])["cells"]

    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(2):
        handle.press("ArrowRight")
    page.wait_for_function(slider_at(2))
    page.wait_for_timeout(300)
    now = page.evaluate(STATE_JS)
    want = expected(s, frames[2])
    assert f"step 2 of {last}" in now["label"]
    assert now["cells"] == want["cells"] and now["colors"] == want["colors"]
    assert 2 in now["cells"] and now["cells"] != before["cells"]
    assert sorted(now["current"]) == sorted(want["current"]) != []
    assert page.screenshot() != shot, "the canvas did not change"

    for _ in range(last):  # to the end: every process holds everything
        handle.press("ArrowRight")
    page.wait_for_function(slider_at(last))
    page.wait_for_timeout(300)
    end = page.evaluate(STATE_JS)
    assert "every process holds all 40 B" in end["label"]
    assert 0 not in end["cells"] and set(end["held"]) == {"40/40 B"}
    assert end["cells"] == expected(s, frames[last])["cells"]
    assert errors == []


def test_play_runs_to_the_end_and_pause_stops(ring_page):
    page, s, frames, errors = ring_page
    last = len(frames) - 1
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('step_slider').value = 0; }")
    play(page, (last + 1) * INTERVAL_MS)  # on the page's clock: no waiting in wall time
    assert page.evaluate(STATE_JS)["value"] == last
    assert page.evaluate("() => Bokeh.documents[0].get_model_by_name('play_button').label") \
        == "► Play"
    assert page.evaluate(STATE_JS)["cells"] == expected(s, frames[last])["cells"]
    # play again restarts from 0; pause holds the frame it shows
    play(page, INTERVAL_MS)
    page.get_by_role("button", name="❚❚ Pause").click()
    stopped = page.evaluate(STATE_JS)
    assert stopped["value"] == 1
    page.clock.run_for(3 * INTERVAL_MS)  # three intervals
    state = page.evaluate(STATE_JS)
    assert state["value"] == stopped["value"]
    assert state["cells"] == expected(s, frames[state["value"]])["cells"]
    assert sorted(state["current"]) == sorted(expected(s, frames[state["value"]])["current"])
    assert errors == []
