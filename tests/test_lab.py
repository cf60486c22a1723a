"""The notebooks as a user meets them: in the real JupyterLab, in headless Chromium.

nbclient (tests/test_notebooks.py) checks what the notebooks compute; these tests check
what the page shows.  Each notebook is opened at 1400 x 900 with the file browser open
and run with Run All Cells: no cell may fail, every Bokeh figure must be drawn the first
time its cell runs (BokehJS draws into a canvas), no output may be wider than the space
the notebook gives it, and the saved notebook must stay small.  Screenshots of every
output with a figure or a table go to ``build/screenshots/<notebook>/`` for anyone to
look at.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import nbformat
import pytest

from conftest import hang_guard
from lab import (LabServer, cell_count, cell_figures, overflowing_outputs, run_all, save,
                 show_cell)

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
SCREENSHOTS = REPO / "build" / "screenshots"
WIDTH = 1400
#: A saved, executed notebook stays below this (BokehJS is in it once, about 1.7 MB).
MAX_SAVED_BYTES = 2_500_000


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab-root")
    shutil.copytree(REPO / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "results"))
    server = LabServer(root, tmp_path_factory.mktemp("lab-home"))
    yield server
    server.stop()


def _write_notebook(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


def _wait_drawn(page, cell: int, expected: int) -> list[bool]:
    """Whether each Bokeh figure of `cell` is drawn, once `expected` are there and all are
    drawn (or, after the hang guard, as they are: the assertion then says what is not)."""
    deadline = time.monotonic() + hang_guard(60)
    figures = cell_figures(page, cell)
    while (len(figures) < expected or not all(figures)) and time.monotonic() < deadline:
        page.wait_for_timeout(250)
        figures = cell_figures(page, cell)
    return figures


def _screenshot(page, cell, path: Path) -> None:
    """The whole cell, also when it is taller than the window: the window grows for the
    picture (its width, the one being checked, stays)."""
    height = cell.bounding_box()["height"]
    if height > 800:
        page.set_viewport_size({"width": WIDTH, "height": int(height) + 200})
        page.wait_for_timeout(500)  # Lab lays the taller window out
    cell.screenshot(path=str(path))
    if height > 800:
        page.set_viewport_size({"width": WIDTH, "height": 900})


def test_the_explorer_draws_its_figures_when_its_cell_first_runs(lab, browser):
    # notebook 01's explorer showed its controls but no figure until a control changed:
    # its figures were sent into the Output widget before the widget was in the page
    _write_notebook(lab.root / "explorer.ipynb", "from tuwviz import viz",
                    'viz.schedule_explorer("gatherv", "tuw")')
    page, errors = lab.open(browser, "explorer.ipynb", width=WIDTH)
    try:
        assert run_all(page, hang_guard(300_000)) is True
        show_cell(page, 1)
        figures = _wait_drawn(page, 1, 1)
        assert figures == [True], figures
        # tree and animation, each with its canvas (Bokeh's canvases sit in shadow DOM)
        assert page.locator(".jp-Notebook .jp-Cell").nth(1).locator("canvas").count() >= 2
        # a control change redraws: still drawn, no error
        slider = page.locator(".jp-Notebook .widget-slider").first
        slider.locator(".noUi-handle").first.focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => document.querySelector('.jp-Notebook .widget-html-content')"
                               ".innerText.includes('p=10')", timeout=hang_guard(60_000))
        figures = _wait_drawn(page, 1, 1)
        assert figures == [True], figures
        assert not [e for e in errors if "Bokeh" in e or "tuwviz" in e], errors
    finally:
        page.close()


@pytest.mark.timeout(hang_guard(1800))
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_notebook_in_jupyterlab(path, lab, browser):
    name = f"notebooks/{path.name}"
    page, errors = lab.open(browser, name, width=WIDTH)
    shots = SCREENSHOTS / path.stem
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    try:
        ok = run_all(page, hang_guard(1_200_000))
        failed = page.locator(".jp-OutputArea-output[data-mime-type="
                              "'application/vnd.jupyter.stderr']:has-text('Traceback'), "
                              ".jp-OutputArea-output:has(.ansi-red-fg)")
        assert ok, f"a cell failed: {failed.first.inner_text()[:3000] if failed.count() else '?'}"

        stored = nbformat.read(lab.root / name, as_version=4)
        cut, undrawn = [], []
        assert cell_count(page) == len(stored.cells)
        for i in range(len(stored.cells)):
            cell = show_cell(page, i)  # scrolled to, as a reader would
            shows = stored.cells[i].source.count("plots.show(") + \
                stored.cells[i].source.count("schedule_explorer(")
            figures = _wait_drawn(page, i, shows if stored.cells[i].cell_type == "code" else 0)
            if len(figures) < shows or not all(figures):
                undrawn.append(i)
            cut += [{"cell": i, **o} for o in overflowing_outputs(page, i)]
            # pandas cuts long cells to "..." (item 10: descriptions, params)
            cut += [{"cell": i, "truncated": t} for t in cell.locator(
                ".jp-OutputArea-output td").all_inner_texts() if t.rstrip().endswith("...")]
            if figures or cell.locator(".jp-OutputArea-output table").count():
                _screenshot(page, cell, shots / f"cell{i:02d}.png")
        assert not undrawn, f"figures missing or not drawn in cells {undrawn}"
        assert not cut, f"outputs cut off at {WIDTH} px: {cut}"
        assert not [e for e in errors if "Bokeh" in e or "tuwviz" in e], errors

        save(page)
        size = (lab.root / name).stat().st_size
        assert size < MAX_SAVED_BYTES, f"the saved notebook is {size:,} bytes"
    finally:
        page.close()
