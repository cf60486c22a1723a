"""The saved animation works in a real headless Chromium: slider and play change the drawing.

Needs Chromium at /usr/bin/chromium (``make browser`` installs it; override with
TUWVIZ_CHROMIUM) and the ``playwright`` package (never ``playwright install``: the
browser comes from the system).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tuwviz import model, viz
from tuwviz.problems import make_problem

from support import hang_guard, play

# JavaScript reading the drawn state back from the Bokeh document.
STATE_JS = """() => {
    const doc = Bokeh.documents[0];
    const get = (name) => doc.get_model_by_name(name);
    return {
        value: get("step_slider").value,
        current: get("current").data.src.map((s, i) => [s, get("current").data.dst[i]]),
        done: get("done").data.src.length,
        held: Array.from(get("nodes").data.held_text),
        cells: Array.from(get("cells").data.state),
        label: get("step_label").text,
        button: get("play_button").label,
    };
}"""


@pytest.fixture(scope="module")
def animation_page(browser, tmp_path_factory):
    s = model.schedule("gatherv", "linear", make_problem("gatherv", 5, "random", 3, root=2))
    layout = viz.animate_schedule(s, interval_ms=1000)
    path = viz.save_html(layout, tmp_path_factory.mktemp("html") / "animation.html")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0 "
                           "&& Bokeh.documents[0].get_model_by_name('step_slider') !== null")
    page.locator(".noUi-handle").first.wait_for(state="visible", timeout=hang_guard(120_000))
    yield page, s, viz.animation_frames(s), errors
    page.close()


def _expected(schedule, frame) -> list[list[int]]:
    result = model.simulate(schedule, 1.0, 0.0)
    return [[result.messages[i].src, result.messages[i].dst] for i in frame["messages"]]


def test_moving_the_slider_redraws_the_animation(animation_page):
    page, schedule, frames, errors = animation_page
    before = page.evaluate(STATE_JS)
    shot_before = page.screenshot()
    assert before["value"] == 0 and before["current"] == [] and before["done"] == 0
    assert before["held"] == ["{0}", "{1}", "{2}", "{3}", "{4}"]

    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")
    page.wait_for_function("() => Bokeh.documents[0].get_model_by_name('step_slider').value == 3")
    page.wait_for_timeout(300)
    after = page.evaluate(STATE_JS)
    assert after["value"] == 3
    assert after["current"] == _expected(schedule, frames[3]) != []
    assert after["done"] == sum(len(f["messages"]) for f in frames[1:3])
    held = viz.block_text(frames[3]["holdings"][2]).replace("-", "–")
    assert after["held"][2] == "{" + held + "}"
    assert after["held"] != before["held"] and after["cells"] != before["cells"]
    assert "step 3 of 4" in after["label"]
    assert page.screenshot() != shot_before, "the canvas did not change"
    assert errors == []

    # the end of the slider: the root holds every block
    for _ in range(5):
        handle.press("ArrowRight")
    page.wait_for_function("() => Bokeh.documents[0].get_model_by_name('step_slider').value == 4")
    assert page.evaluate(STATE_JS)["held"][2] == "{0–4}"


def test_play_advances_the_slider_and_pause_stops_it(animation_page):
    page, schedule, frames, errors = animation_page
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('step_slider').value = 0; }")
    play(page, 2000)  # two of its 1 s steps, on the page's clock
    state = page.evaluate(STATE_JS)
    assert state["value"] == 2 and state["button"] == "❚❚ Pause"
    page.clock.run_for(1000 * len(frames))
    # at the end it stops by itself; play again restarts from step 0, pause stops it
    state = page.evaluate(STATE_JS)
    assert state["value"] == len(frames) - 1 and state["button"] == "► Play"
    play(page, 1000)
    page.get_by_role("button", name="❚❚ Pause").click()
    stopped = page.evaluate(STATE_JS)["value"]
    assert stopped == 1
    page.clock.run_for(1500)  # longer than one step
    assert page.evaluate(STATE_JS)["value"] == stopped
    assert page.evaluate(STATE_JS)["current"] == _expected(schedule, frames[stopped])
    assert errors == []
