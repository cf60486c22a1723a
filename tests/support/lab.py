"""A real JupyterLab server driven by headless Chromium, for tests of what a user sees.

:class:`LabServer` starts ``jupyter lab`` (127.0.0.1, token, its own runtime and settings
folders) on a folder of notebooks; :meth:`LabServer.open` opens one in a Chromium page at
a given window size with the file browser open, as a user's first screen is, and
:func:`run_all` runs every cell through JupyterLab's own command, as Run > Run All Cells
does.  The page's JavaScript errors and console errors are collected.

The server is started with ``expose_app_in_browser`` so that the test can call
JupyterLab's commands (``window.jupyterapp``); nothing else differs from ``tuwviz lab``.
"""
from __future__ import annotations

import glob
import json
import shutil
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from . import hang_guard
from tuwviz.run.launch import record_launch

__all__ = ["LabServer", "WIDTH", "cell_count", "cell_figures", "overflowing_outputs",
           "run_all", "run_and_check_page", "save", "show_cell", "wait_drawn"]

#: The window width every notebook is checked at (outputs must fit it).
WIDTH = 1400
#: A saved, executed notebook stays below this (BokehJS is in it once, about 1.7 MB).
MAX_SAVED_BYTES = 2_500_000

# JupyterLab's news pop-up would cover the lower right corner of every screenshot.
_SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings":
             {"fetchNews": "false", "checkForUpdates": False}}


class LabServer:
    """``jupyter lab`` on `root` (a folder of notebooks), stopped by :meth:`stop`."""

    def __init__(self, root: Path, home: Path, env: dict[str, str] | None = None):
        self.root = Path(root)
        runtime, settings = home / "runtime", home / "settings"
        for name, value in _SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        with socket.socket() as s:  # a free port
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {**os.environ, **(env or {}), "JUPYTER_RUNTIME_DIR": str(runtime),
               "JUPYTERLAB_SETTINGS_DIR": str(settings)}
        self.log = home / "lab.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
                 "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
                 f"--ServerApp.root_dir={self.root}", "--LabApp.expose_app_in_browser=True"],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        info = None
        deadline = time.monotonic() + hang_guard(120)
        while info is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"JupyterLab did not start:\n{self.log.read_text()[-3000:]}")
            files = glob.glob(str(runtime / "jpserver-*.json"))
            info = json.loads(Path(files[0]).read_text()) if files else None
            time.sleep(0.3)
        self.token = info["token"]

    def url(self, notebook: str) -> str:
        # a fresh workspace: nothing restored from an earlier page
        return f"http://127.0.0.1:{self.port}/lab/tree/{notebook}?reset&token={self.token}"

    def open(self, browser, notebook: str, width: int = 1400, height: int = 900):
        """A page showing `notebook` at `width` x `height`, its kernel idle; returns
        ``(page, errors)``, `errors` filling with the page's JavaScript errors."""
        record_launch("jupyterlab", 1)  # counted by tests/support/budget.py (the kind of test)
        page = browser.new_page()
        page.set_viewport_size({"width": width, "height": height})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto(self.url(notebook))
        page.wait_for_function(
            "(path) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " return w && w.context && w.context.path === path"
            " && w.sessionContext && w.sessionContext.session"
            " && w.sessionContext.session.kernel"
            " && w.sessionContext.session.kernel.status === 'idle'; }",
            arg=notebook, timeout=hang_guard(180_000))
        # the file browser open, as when Lab starts: the notebook gets what is left
        page.evaluate("() => window.jupyterapp.shell.activateById('filebrowser')")
        return page, errors

    def _api(self, method: str, path: str):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=hang_guard(60)) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> int:
        """Shut down every session's kernel, as Kernel > Shut Down does (what the kernel
        started must stop with it); returns how many there were."""
        sessions = self._api("GET", "sessions")
        for session in sessions:
            self._api("DELETE", f"sessions/{session['id']}")
        return len(sessions)

    def stop(self) -> None:
        """End the server (its kernels shut down and stop what they started)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=hang_guard(60))
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def run_all(page, timeout_ms: float) -> bool:
    """Run every cell of the page's notebook (Run > Run All Cells) and wait until done;
    False if a cell raised (JupyterLab then stops there)."""
    page.set_default_timeout(timeout_ms)
    return page.evaluate(
        "async () => await window.jupyterapp.commands.execute('notebook:run-all-cells')")


def save(page) -> None:
    """Save the notebook as File > Save does, and wait until it is written."""
    page.evaluate("async () => await window.jupyterapp.commands.execute('docmanager:save')")


def cell_count(page) -> int:
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")


def show_cell(page, index: int):
    """Scroll cell `index` into view, as a user scrolling down does (JupyterLab attaches
    cells to the page only near the view), and return a locator of it."""
    page.evaluate("""async (i) => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        nb.activeCellIndex = i;
        await nb.scrollToItem(i, 'start');
        nb.widgets[i].node.setAttribute('data-tuwviz-cell', String(i));
    }""", index)
    return page.locator(f"[data-tuwviz-cell='{index}']")


# For each shown Bokeh figure (a div with data-root-id) in a cell's outputs: whether
# BokehJS drew it (a canvas somewhere below it, shadow roots included).
_FIGURES_JS = """(i) => {
    const drawn = (n) => {
        if (n.tagName === 'CANVAS') return true;
        if (n.shadowRoot && Array.from(n.shadowRoot.children).some(drawn)) return true;
        return Array.from(n.children).some(drawn);
    };
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[i].node;
    return Array.from(cell.querySelectorAll('.jp-OutputArea [data-root-id]')).map(drawn);
}"""


def cell_figures(page, index: int) -> list[bool]:
    """For every Bokeh figure in the outputs of cell `index`: whether it is drawn."""
    return page.evaluate(_FIGURES_JS, index)


# Outputs wider than the space the notebook gives them: the user would have to scroll
# sideways (or would not see the part beyond the edge).
_OVERFLOW_JS = """(i) => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[i].node;
    const out = [];
    for (const el of cell.querySelectorAll('.jp-OutputArea-output')) {
        const box = el.getBoundingClientRect();
        let widest = el.scrollWidth;
        for (const child of el.querySelectorAll('*')) {
            const r = child.getBoundingClientRect();
            if (r.width > 0) widest = Math.max(widest, r.right - box.left);
        }
        if (widest > el.clientWidth + 2)
            out.push({width: Math.round(widest), space: el.clientWidth,
                      what: (el.innerText || '').trim().split('\\n')[0].slice(0, 80)});
    }
    return out;
}"""


def overflowing_outputs(page, index: int) -> list[dict]:
    """Outputs of cell `index` wider than their space: ``[{"width", "space", "what"}]``."""
    return page.evaluate(_OVERFLOW_JS, index)


def wait_drawn(page, cell: int, expected: int) -> list[bool]:
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


def run_and_check_page(lab: LabServer, browser, name: str, shots: Path) -> None:
    """Open notebook `name` (relative to the server's root) at :data:`WIDTH` x 900, run all
    cells, and check the page as a reader sees it: no cell failed, every Bokeh figure is
    drawn the first time its cell runs, no output is wider than its space, no BokehJS or
    tuwviz error in the page; then save it (it must stay small).  Screenshots of every
    output with a figure or a table go to `shots`."""
    import nbformat

    page, errors = lab.open(browser, name, width=WIDTH)
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
            figures = wait_drawn(page, i, shows if stored.cells[i].cell_type == "code" else 0)
            if len(figures) < shows or not all(figures):
                undrawn.append(i)
            cut += [{"cell": i, **o} for o in overflowing_outputs(page, i)]
            # pandas cuts long cells to "..." (descriptions, params)
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
