"""Every notebook runs top to bottom, plots offline, and cleans up after itself.

Each notebook runs once per tier: the quick run opens :data:`IN_LAB_QUICK` in the real
JupyterLab in headless Chromium (tests/support/lab.py checks the page: every figure drawn, nothing
cut off) and executes the others headless with nbclient; the full run opens every one in
JupyterLab.  Either way the same checks then read the executed notebook's outputs and the
files it wrote under ``results/``.

Headless, a notebook runs in a copy of ``notebooks/`` under ``tmp_path``; in JupyterLab,
in the server's copy.  The kernel inherits ``PYTHONPATH`` (tuwviz from this checkout) and
a marker variable that every process it starts (controller, mpiexec, engines) inherits
too: that is how the test tells the notebook's processes from those of anything else
running on the machine.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from support import REPO, full_tier, hang_guard, notebook_scale, open_bokeh_page, play
from support.lab import run_and_check_page
from support.leaks import marked_processes
from tuwviz.config import NOTEBOOK_SCALE
from tuwviz.run.launch import record_launch

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
SCREENSHOTS = REPO / "build" / "screenshots"
START = "00_start_here.ipynb"
GATHERV = "01_irregular_gather_scatter.ipynb"
ALLGATHERV = "02_pipelined_allgatherv.ipynb"
COURSE = "05_course_gather_scatter.ipynb"
CIRCULANT = "03_circulant_reductions.ipynb"
ALLGATHER_STUDY = "04_circulant_allgather_guidelines.ipynb"
INTERGROUP = "06_intergroup_allgather.ipynb"

MARKER_VAR = "TUWVIZ_TEST_NOTEBOOK"
PROCESS_MARKERS = ("ipyparallel.engine", "ipyparallel.controller", "ipcontroller",
                   "hydra_pmi_proxy", "mpiexec")
# Inline BokehJS contains lazy-load fallbacks (MathJax, Tabler icons from cdn.jsdelivr.net)
# that are never fetched unless a plot uses TeX or icons; its bundles are delimited by these
# comments and left out of the CDN check.
BOKEHJS_BUNDLE = re.compile(r"/\* BEGIN (\S+) \*/.*?/\* END \1 \*/", re.S)
CDN_HOSTS = ("cdn.bokeh.org", "cdn.jsdelivr", "unpkg")


def _marked_processes(marker: str) -> list[str]:
    """``pid args`` of live MPI/ipyparallel processes whose environment carries `marker`."""
    return [f"{pid} {args[:120]}" for pid, args in sorted(marked_processes(MARKER_VAR, marker).items())
            if any(m in args for m in PROCESS_MARKERS)]


class _ProcessSampler(threading.Thread):
    """Notes, while a notebook runs, whether processes carrying the marker ever existed."""

    def __init__(self, marker: str):
        super().__init__(daemon=True)
        self.marker = marker
        self.seen: set[str] = set()
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(1.0):
            self.seen.update(_marked_processes(self.marker))

    def stop(self) -> None:
        self._done.set()
        self.join()


def _outputs_text(nb) -> str:
    """All outputs of all code cells as one string (MIME bundles JSON-encoded if not text)."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(out["text"])
            for value in out.get("data", {}).values():
                parts.append(value if isinstance(value, str) else json.dumps(value))
            parts.extend(out.get("traceback", []))
    return "\n".join(parts)


def _figures(nb) -> int:
    """Bokeh figures shown in the outputs (tuwviz.viz.plots.show: a div with data-root-id)."""
    return sum(out.get("data", {}).get("text/html", "").count("data-root-id")
               for cell in nb.cells for out in cell.get("outputs", []))


@pytest.fixture
def notebook_env(monkeypatch, tmp_path, request):
    """Environment for the kernel: tuwviz importable, MPI from this venv, a unique marker,
    the notebooks' simulations at the quick scale in the quick tier (the paper's in the full)."""
    def prepend(var: str, path: Path) -> None:
        monkeypatch.setenv(var, os.pathsep.join(filter(None, [str(path), os.environ.get(var)])))

    prepend("PYTHONPATH", REPO)
    prepend("PATH", Path(sys.executable).parent)
    for var in ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        if not os.environ.get(var):
            monkeypatch.setenv(var, str(tmp_path / "home" / var.lower()))
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER_VAR, marker)
    monkeypatch.setenv(NOTEBOOK_SCALE, notebook_scale(request.config))
    return marker


def test_there_are_notebooks():
    assert any(p.name == START for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: code cell {i} has stored outputs"
            assert cell.execution_count is None, \
                f"{path.name}: code cell {i} has an execution count"
    assert path.stat().st_size < 100_000, f"{path.name} is {path.stat().st_size} bytes on disk"


#: The notebook the quick run opens in JupyterLab: the first one a user opens.
IN_LAB_QUICK = START


@pytest.mark.timeout(hang_guard(3600))  # the per-cell guard below fires first, naming the cell
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, request):
    in_lab = path.name == IN_LAB_QUICK or full_tier(request.config)
    if in_lab:
        lab = request.getfixturevalue("lab")
        marker, workdir = lab.marker, lab.root / "notebooks"
    else:
        marker, workdir = request.getfixturevalue("notebook_env"), tmp_path / "notebooks"
        shutil.copytree(path.parent, workdir,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "results"))
    record_launch("notebook", 1)  # counted by tests/support/budget.py

    sampler = _ProcessSampler(marker)
    sampler.start()
    t0 = time.monotonic()
    try:
        if in_lab:
            run_and_check_page(lab, request.getfixturevalue("browser"),
                               f"notebooks/{path.name}", SCREENSHOTS / path.stem)
            lab.shutdown_kernels()  # what the notebook started must stop with its kernel
            nb = nbformat.read(workdir / path.name, as_version=4)
        else:
            nb = nbformat.read(workdir / path.name, as_version=4)
            # raises CellExecutionError (with the cell's traceback) if any cell fails
            NotebookClient(nb, timeout=hang_guard(600), kernel_name="python3",
                           resources={"metadata": {"path": str(workdir)}}).execute()
    finally:
        sampler.stop()
    print(f"{path.name} ran {'in JupyterLab' if in_lab else 'headless'} in "
          f"{time.monotonic() - t0:.0f} s")  # information, no limit
    # saved with its outputs it stays small: BokehJS is in it once
    saved = len(nbformat.writes(nb).encode())
    assert saved < 2_500_000, f"{path.name} with its outputs is {saved:,} bytes"

    text = _outputs_text(nb)
    outside_bokehjs = BOKEHJS_BUNDLE.sub("", text)
    for host in CDN_HOSTS:
        assert host not in outside_bokehjs, f"{path.name} refers to {host}"
    assert "cdn.bokeh.org" not in text
    assert not re.search(r"<(?:script|link)\b[^>]*\b(?:src|href)=[\\\"']*https?:", text), \
        f"{path.name} loads something from the network"
    assert not re.search(r"js_urls\s*=\s*\[\s*[\"']", text), f"{path.name} loads BokehJS from URLs"

    # the kernel has shut down: nothing the notebook started may survive it
    deadline = time.monotonic() + hang_guard(60)
    left = _marked_processes(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _marked_processes(marker)
    assert not left, f"{path.name} left processes behind:\n" + "\n".join(left)
    if "LocalCluster" in "".join(c.source for c in nb.cells if c.cell_type == "code"):
        assert sampler.seen, "no engines were seen while the notebook ran: is the check blind?"

    # a section at the paper's scale says when it ran smaller (the quick tier), never else
    if "at_scale(" in "".join(c.source for c in nb.cells if c.cell_type == "code"):
        said = f"quick scale ({NOTEBOOK_SCALE}=quick)" in text
        assert said == (notebook_scale(request.config) == "quick"), path.name

    if path.name == START:
        assert _figures(nb) == 2, "Figures 1 and 2 are not in the outputs"
        # BokehJS inline and once: one output holds it, as one MIME type
        loads = [o for c in nb.cells for o in c.get("outputs", [])
                 if "/* BEGIN bokeh.min.js */" in json.dumps(o.get("data", {}))]
        assert len(loads) == 1 and list(loads[0]["data"]) == ["application/javascript"], \
            [list(o["data"]) for o in loads]
        results = workdir / "results" / "00_start_here.csv"
        assert results.exists(), "the benchmark rows were not written under results/"
        import pandas as pd

        rows = pd.read_csv(results)  # 2 algorithms x 3 block sizes, one per core and on 4 ranks
        p_free = min(4, os.cpu_count() or 1)
        assert sorted(rows["ranks"]) == sorted([p_free] * 6 + [4] * 6)
        assert not rows[rows["ranks"] == p_free]["oversubscribed"].any()
        assert list(rows[rows["ranks"] == 4]["oversubscribed"]) == [4 > (os.cpu_count() or 1)] * 6

    if path.name == GATHERV:
        for name in ("01_gatherv.csv", "01_scatterv.csv", "01_tuw_gatherv_animation.html"):
            assert (workdir / "results" / name).exists(), f"results/{name} was not written"
        _animation_works_in_saved_html(nb, tmp_path, request.getfixturevalue("browser"))

    if path.name == COURSE:
        # the trees' optimality table holds only passes; the linear one fails its rounds
        tables = [o["data"]["text/plain"] for c in nb.cells for o in c.get("outputs", [])
                  if "text/plain" in o.get("data", {}) and "rounds_bound" in o["data"]["text/plain"]]
        assert len(tables) == 2, tables
        assert "False" not in tables[0] and "True" in tables[0]
        assert "rounds" in tables[1] and "False" in tables[1]
        assert _figures(nb) >= 1
        assert "496" in text and "512" in text  # the model at the report's scale

    if path.name == CIRCULANT:
        with open(workdir / "results" / "03_reductions.csv") as f:
            assert len(f.readlines()) == 1 + 27  # 3 collectives x 3 algorithms x 3 sizes
        assert "trace replays like the model: True" in text
        assert "B_8^0 = [7, 6, 4, 0, 2, 5, 1, 3]" in text  # the paper's example
        assert re.search(r"allreduce/circulant vs native, measured on 5 ranks", text)
        _circulant_animation_works(workdir / "results" / "03_circulant_allreduce.html",
                                   request.getfixturevalue("browser"))

    if path.name == INTERGROUP:
        with open(workdir / "results" / "06_intergroup.csv") as f:
            assert len(f.readlines()) == 1 + 24  # 2 group pairs x 2 collectives x 3 x 2 sizes
        assert "every one equals the library: True" in text
        assert "trace = model: True" in text and "trace replays like the model: True" in text
        assert re.search(r"groups 1,1, regular, 65536 B per process: T_old / T_new measured", text)
        assert "oversubscribed" in text
        _intergroup_animation_works(workdir / "results" / "06_algorithm_1.html",
                                    request.getfixturevalue("browser"))

    if path.name == ALLGATHER_STUDY:
        from tuwviz import make_problem, model
        from tuwviz.experiments.study import study_cases
        from tuwviz.viz.circulant import circulant_frames

        with open(workdir / "results" / "04_study.csv") as f:
            assert len(f.readlines()) == 1 + len(study_cases("circulant", [8], [1, 128, 8192]))
        assert text.count("trace = model: True") == 2 and "trace replays like the model: True" in text
        assert "bytes sent per rank [700, 700," in text  # equal blocks: (p-1)/p m each
        assert "bytes sent per rank [2400, 0," in text  # one holds all: q m (Proposition 4)
        # the study says in numbers what this machine's library violates, or that nothing is
        assert re.search(r"(library|circulant): Guideline \(\d\) .* is violated at \d+ of \d+ "
                         r"sizes|no guideline is violated beyond the run's noise", text)
        assert "Combined_native_Allreduce" in text or "combined_native" in text
        end = circulant_frames(model.schedule("allgather", "circulant",
                                              make_problem("allgather", 11, b=4)))[-1]["held"]
        _circulant_animation_works(workdir / "results" / "04_circulant_allgather.html",
                                   request.getfixturevalue("browser"), end)

    if path.name == ALLGATHERV:
        for name in ("02_allgatherv.csv", "02_allgatherv_blocks.csv"):
            with open(workdir / "results" / name) as f:
                assert len(f.readlines()) > 4, f"results/{name} has no measured rows"
        # the paper's headline number, computed by the model in the notebook
        assert "32*29/(29+31) = 15.47" in text and "pipelined ring = 15.47" in text
        assert "rounds in time: 9" in text  # Figure 3 with the spread placement
        assert re.search(r"the (pipelined|linear) ring is ahead\. Model with", text)
        _ring_animation_works(workdir / "results" / "02_pipelined_ring_animation.html",
                              request.getfixturevalue("browser"))


def _circulant_animation_works(path: Path, browser, end: list[str] | None = None) -> None:
    """Open the notebook's saved circulant animation (p = 11) offline in Chromium, play it to
    the end: every rank then holds the inputs (or blocks) of all 11, labelled `end`."""
    assert path.exists(), f"{path.name} was not written"
    page, errors = open_bokeh_page(browser, path)
    held = "() => Array.from(Bokeh.documents[0].get_model_by_name('nodes').data.held)"
    assert page.evaluate(held) == [str(r) for r in range(11)]
    play(page, 4 * 1200)  # four rounds of the notebook's 1.2 s steps, on the page's clock
    page.wait_for_function("() => Bokeh.documents[0].get_model_by_name('step_slider').value == 4",
                           timeout=hang_guard(120_000))
    assert page.evaluate(held) == (end or ["0-10"] * 11)
    assert errors == [], errors
    page.close()


def _intergroup_animation_works(path: Path, browser) -> None:
    """Open the notebook's saved Algorithm 1 animation (p = 8, q = 3, blocks of 6 bytes)
    offline in Chromium and play it to the end: every process of A has B's 18 bytes, every
    process of B A's 48, each exactly once."""
    assert path.exists(), f"{path.name} was not written"
    page, errors = open_bokeh_page(browser, path)
    held = "() => Array.from(Bokeh.documents[0].get_model_by_name('nodes').data.held)"
    assert page.evaluate(held) == ["0/18 B"] * 8 + ["0/48 B"] * 3
    end = page.evaluate("() => Bokeh.documents[0].get_model_by_name('step_slider').end")
    play(page, end * 900)  # the notebook's 0.9 s steps, on the page's clock
    page.wait_for_function("() => Bokeh.documents[0].get_model_by_name('step_slider').value == "
                           f"{end}", timeout=hang_guard(120_000))
    assert page.evaluate(held) == ["18/18 B"] * 8 + ["48/48 B"] * 3
    assert errors == [], errors
    page.close()


def _ring_animation_works(path: Path, browser) -> None:
    """Open the notebook's saved ring animation offline in Chromium and step to the end."""
    assert path.exists(), f"{path.name} was not written"
    page, errors = open_bokeh_page(browser, path)
    state = ("() => { const d = Bokeh.documents[0]; return {"
             "value: d.get_model_by_name('step_slider').value,"
             "end: d.get_model_by_name('step_slider').end,"
             "label: d.get_model_by_name('step_label').text,"
             "cells: Array.from(d.get_model_by_name('cells').data.state) }; }")
    before = page.evaluate(state)
    handle = page.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    for _ in range(before["end"]):
        handle.press("ArrowRight")
    page.wait_for_function("() => Bokeh.documents[0].get_model_by_name('step_slider').value"
                           f" == {before['end']}", timeout=hang_guard(120_000))
    after = page.evaluate(state)
    assert before["value"] == 0 and before["end"] > 0
    assert after["label"] != before["label"]
    assert after["cells"] != before["cells"] and 0 not in after["cells"], \
        "at the last step every process should hold every piece"
    assert errors == [], errors
    page.close()


def _animation_works_in_saved_html(nb, tmp_path, browser) -> None:
    """Export the executed notebook to HTML, open it in Chromium, move the slider."""
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(nb)
    page_path = tmp_path / "notebook.html"
    page_path.write_text(html)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(page_path.as_uri())
    find = ("() => window.Bokeh && Bokeh.documents.findIndex("
            "d => d.get_model_by_name('step_slider') !== null)")
    page.wait_for_function(f"({find})() >= 0", timeout=hang_guard(120_000))
    doc = page.evaluate(find)
    state = (f"() => {{ const d = Bokeh.documents[{doc}]; return {{"
             "value: d.get_model_by_name('step_slider').value,"
             "held: Array.from(d.get_model_by_name('nodes').data.held_text),"
             "current: d.get_model_by_name('current').data.src.length }; }")
    before = page.evaluate(state)
    last = page.evaluate(f"() => Bokeh.documents[{doc}].get_model_by_name('step_slider').end")
    handle = page.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    for _ in range(last):  # the first rounds build the tree; data moves in the last ones
        handle.press("ArrowRight")
    page.wait_for_function(
        f"() => Bokeh.documents[{doc}].get_model_by_name('step_slider').value == {last}",
        timeout=hang_guard(120_000))
    after = page.evaluate(state)
    assert before["value"] == 0 and last > 0
    assert after["held"] != before["held"], "moving the slider did not change who holds what"
    assert after["current"] > 0, "no message is highlighted at the last step"
    assert errors == [], errors
    page.close()
