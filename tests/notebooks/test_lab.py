"""The schedule explorer as a user meets it: in the real JupyterLab, in headless Chromium.

The notebooks themselves are opened in JupyterLab by tests/notebooks/test_notebooks.py (one of them
in the quick run, every one in the full run), which checks their pages and their outputs
in the same run.
"""
from __future__ import annotations

from pathlib import Path

import nbformat

from support import hang_guard
from support.lab import WIDTH, run_all, show_cell, wait_drawn


def _write_notebook(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


def test_the_explorer_draws_its_figures_when_its_cell_first_runs(lab, browser):
    # notebook 01's explorer showed its controls but no figure until a control changed:
    # its figures were sent into the Output widget before the widget was in the page
    _write_notebook(lab.root / "explorer.ipynb", "from tuwviz import viz",
                    'viz.schedule_explorer("gatherv", "tuw")')
    page, errors = lab.open(browser, "explorer.ipynb", width=WIDTH)
    try:
        assert run_all(page, hang_guard(300_000)) is True
        show_cell(page, 1)
        figures = wait_drawn(page, 1, 1)
        assert figures == [True], figures
        # tree and animation, each with its canvas (Bokeh's canvases sit in shadow DOM)
        assert page.locator(".jp-Notebook .jp-Cell").nth(1).locator("canvas").count() >= 2
        # a control change redraws: still drawn, no error
        slider = page.locator(".jp-Notebook .widget-slider").first
        slider.locator(".noUi-handle").first.focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => document.querySelector('.jp-Notebook .widget-html-content')"
                               ".innerText.includes('p=10')", timeout=hang_guard(60_000))
        figures = wait_drawn(page, 1, 1)
        assert figures == [True], figures
        assert not [e for e in errors if "Bokeh" in e or "tuwviz" in e], errors
    finally:
        page.close()
        lab.shutdown_kernels()  # the server is the session's: leave it as it was
