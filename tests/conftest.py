"""Shared test set-up: self-contained IPython/Jupyter dirs, a CLI runner, process checks."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Keep ipyparallel/Jupyter state out of ~ (the Makefile sets these too).
for var, sub in [("IPYTHONDIR", "ipython"), ("JUPYTER_CONFIG_DIR", "jupyter/config"),
                 ("JUPYTER_DATA_DIR", "jupyter/data"), ("JUPYTER_RUNTIME_DIR", "jupyter/runtime")]:
    os.environ.setdefault(var, str(REPO / "build" / "home" / sub))
    Path(os.environ[var]).mkdir(parents=True, exist_ok=True)
# engines and mpiexec come from this Python's environment
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))


def run_cli(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``tuwviz ARGS`` in a fresh process, as a user would."""
    return subprocess.run([sys.executable, "-m", "tuwviz.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})}, cwd=REPO)


@pytest.fixture
def cli():
    return run_cli


MPI_PROCESS_MARKERS = ("ipyparallel.engine", "ipyparallel.controller", "ipcontroller", "hydra_pmi_proxy",
                       "mpiexec", "tuwviz.worker")


def mpi_processes() -> set[int]:
    """PIDs of live (non-zombie) engine, controller, mpiexec and worker processes."""
    out = subprocess.run(["ps", "-eo", "pid=,stat=,args="], capture_output=True, text=True).stdout
    pids = set()
    for line in out.splitlines():
        pid, stat, args = line.strip().split(None, 2) if len(line.split(None, 2)) == 3 else (0, "Z", "")
        if "Z" not in stat and any(m in args for m in MPI_PROCESS_MARKERS):
            pids.add(int(pid))
    return pids


CHROMIUM = os.environ.get("TUWVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser():
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make browser` (apt-get install "
                    "chromium) or set TUWVIZ_CHROMIUM to a Chromium binary")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: pip install playwright "
                    "(do not run `playwright install`; the system Chromium is used)")
    profile = tempfile.mkdtemp(prefix="tuwviz-chromium-")
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1300, "height": 900})
        try:
            yield ctx
        finally:
            ctx.close()
            shutil.rmtree(profile, ignore_errors=True)


