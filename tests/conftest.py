"""Shared test set-up: self-contained IPython/Jupyter dirs, a CLI runner, process checks."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import sys
from pathlib import Path

import pytest

import budget  # where the time and launches go, and the count budget (tests/budget.py)
from budget import full_tier  # noqa: F401 (the tests' way to ask for the tier)
import leaks  # marks, counts and checks every process the session starts (tests/leaks.py)
from tuwviz.run.launch import record_launch  # noqa: E402 (after leaks: it sets the log's path)

REPO = Path(__file__).resolve().parent.parent

# Keep ipyparallel/Jupyter state out of ~ (the Makefile sets these too).
for var, sub in [("IPYTHONDIR", "ipython"), ("JUPYTER_CONFIG_DIR", "jupyter/config"),
                 ("JUPYTER_DATA_DIR", "jupyter/data"), ("JUPYTER_RUNTIME_DIR", "jupyter/runtime")]:
    os.environ.setdefault(var, str(REPO / "build" / "home" / sub))
    Path(os.environ[var]).mkdir(parents=True, exist_ok=True)
# An empty calibration cache (tuwviz.experiments.calibrate): this machine's cached alpha/beta would
# change the pipelined ring's default block size in every bench the tests run.
# Emptied before every test (_no_calibration), kept afterwards for a look.
os.environ["TUWVIZ_CACHE"] = str(REPO / "build" / "home" / "cache")
# engines and mpiexec come from this Python's environment
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))


#: One setting scales every hang guard of the tests (time-outs, waits): a loaded machine
#: sets TUWVIZ_TIMEOUT_SCALE=4.  Guards catch hangs only; no test asserts a duration.
TIMEOUT_SCALE = float(os.environ.get("TUWVIZ_TIMEOUT_SCALE", "1"))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    config.pluginmanager.register(leaks, "tuwviz-leaks")
    config.pluginmanager.register(budget, "tuwviz-budget")
    # pytest-timeout's per-test limit is a hang guard too: scale it with the rest
    base = config.getoption("timeout", None) or config.getini("timeout")
    if base and TIMEOUT_SCALE != 1:
        config.option.timeout = float(base) * TIMEOUT_SCALE


def as_from_a_terminal() -> None:
    """``preexec_fn`` for a process a test interrupts: SIGINT at its default, as a terminal
    starts it.  A suite started in the background by a non-interactive shell (``cmd &``,
    nohup, some CI runners) inherits SIGINT ignored, and a Python started so installs no
    KeyboardInterrupt handler: Ctrl-C would then do nothing, by the shell's choice."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def hang_guard(seconds: float) -> float:
    """`seconds`, a generous limit that only a hang should reach, times the scale."""
    return seconds * TIMEOUT_SCALE

@pytest.fixture(scope="session", autouse=True)
def kernels_built():
    """The kernel library built before any test runs: a rebuild's "compiling C kernels"
    note on stderr would otherwise land in whichever test loads the kernels first (and
    break tests that expect exactly one line there)."""
    from tuwviz import kernels
    from tuwviz.errors import TuwvizError

    try:
        kernels.build()
    except TuwvizError:
        pass  # no compiler, or the sources do not compile: the tests that build say so


#: MPICH's return codes the C-level tests compare with (checked against mpi4py by `kernel_lib`).
MPI_SUCCESS, MPI_ERR_ARG = 0, 12


@pytest.fixture(scope="module")
def kernel_lib():
    """The loaded kernel library; tuning parameters back at their defaults afterwards."""
    from mpi4py import MPI

    from tuwviz import kernels

    lib = kernels.load()
    # a test that calls the library here needs MPI; a driver that loaded the kernels
    # first left it uninitialized on purpose (tuwviz.kernels.load._import_mpi)
    if not MPI.Is_initialized():
        MPI.Init()
    assert (MPI.SUCCESS, MPI.ERR_ARG) == (MPI_SUCCESS, MPI_ERR_ARG)
    yield lib
    lib.tuw_reset_params()



#: The quick run (`make test`) samples process counts: 1..5 and 8 (powers of two and not,
#: trees of one to three levels); `make test-full` (pytest -m full) sweeps every p up to 17.
#: Every rank busy-polls, so a job of 17 ranks on 2 cores costs far more than one of 8.
SAMPLED_PS = (1, 2, 3, 4, 5, 8)
#: Block sizes b of the quick run's verify CLI run: 0 (all blocks empty, with real
#: buffers; verify runs it once, not per distribution) and 17; the full run adds b = 1.
SAMPLED_BS = (0, 17)


def sampled_roots(p: int) -> list[int]:
    """The roots the quick run tries: 0, p/2 and p-1 (every root is `make test-full`'s)."""
    return sorted({0, p // 2, p - 1})


def run_cli(*args: str, env: dict | None = None, timeout: float = 1200) -> subprocess.CompletedProcess:
    """Run ``tuwviz ARGS`` in a fresh process, as a user would (`timeout` is a hang guard)."""
    return subprocess.run([sys.executable, "-m", "tuwviz.cli", *args], capture_output=True,
                          text=True, timeout=hang_guard(timeout), env={**os.environ, **(env or {})}, cwd=REPO)


@pytest.fixture(autouse=True)
def _no_calibration():
    """Every test starts without cached calibrations, whatever an earlier one measured."""
    shutil.rmtree(os.environ["TUWVIZ_CACHE"], ignore_errors=True)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def _kernels_tree(tmp_path_factory):
    """One copy of kernels_c for the session, its pristine files, and its build folder."""
    from tuwviz import config

    root = tmp_path_factory.mktemp("kernels-copy")
    src = root / "kernels_c"
    shutil.copytree(config.KERNELS_DIR, src, ignore=shutil.ignore_patterns("build"))
    pristine = {f.relative_to(src): f.read_bytes() for f in src.rglob("*") if f.is_file()}
    return src, root / "build", pristine


@pytest.fixture
def kernels_copy(_kernels_tree, monkeypatch):
    """A copy of kernels_c and its build dir, selected as a student would, to edit.

    The copy is the session's: afterwards every file is as it was and files the test added
    are gone, while the build folder keeps its objects, so the next test compiles only the
    files it edits (a fresh copy would compile all of them, seconds each time)."""
    src, build, pristine = _kernels_tree
    monkeypatch.setenv("TUWVIZ_KERNELS", str(src))
    monkeypatch.setenv("TUWVIZ_BUILD_DIR", str(build))
    try:
        yield src
    finally:
        for f in sorted(src.rglob("*"), reverse=True):  # files before their folders
            rel = f.relative_to(src)
            if f.is_dir():
                if not any(k.parts[:len(rel.parts)] == rel.parts for k in pristine):
                    shutil.rmtree(f)
            elif rel not in pristine:
                f.unlink()
            elif f.read_bytes() != pristine[rel]:
                f.write_bytes(pristine[rel])
        for rel, data in pristine.items():  # a file the test removed
            if not (src / rel).exists():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                (src / rel).write_bytes(data)


MPI_PROCESS_MARKERS = ("ipyparallel.engine", "ipyparallel.controller", "ipcontroller", "hydra_pmi_proxy",
                       "mpiexec", "tuwviz.run.worker")


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



def open_bokeh_page(browser, path: Path):
    """Open a saved Bokeh page (an animation with a ``step_slider``) in `browser`; return
    the page and the list its JavaScript errors and console errors are collected in."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(Path(path).as_uri())
    page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0 "
                           "&& Bokeh.documents[0].get_model_by_name('step_slider') !== null",
                           timeout=hang_guard(120_000))
    return page, errors

@pytest.fixture(scope="session")
def browser():
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make browser` (apt-get install "
                    "chromium) or set TUWVIZ_CHROMIUM to a Chromium binary")
    try:
        from playwright.sync_api import Error as PlaywrightError, sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: pip install playwright "
                    "(do not run `playwright install`; the system Chromium is used)")
    profile = tempfile.mkdtemp(prefix="tuwviz-chromium-")
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1300, "height": 900})
        ctx.set_default_timeout(hang_guard(120_000))  # hang guards only: a slow page is fine
        ctx.set_default_navigation_timeout(hang_guard(120_000))
        ctx.on("page", lambda page: record_launch("page", 1))  # counted by tests/budget.py
        try:
            yield ctx
        finally:
            try:
                ctx.close()
            except PlaywrightError:  # Chromium already gone (a signal ended the session)
                pass
            shutil.rmtree(profile, ignore_errors=True)




@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """A JupyterLab server (tests/lab.py) on a copy of ``notebooks/``, one for the session
    (a test shuts down the kernels it started: ``lab.shutdown_kernels()``).
    Every process it starts carries the environment variable ``TUWVIZ_TEST_NOTEBOOK`` set
    to ``lab.marker``: that is how a test finds what its notebooks left behind."""
    import uuid

    from lab import LabServer

    root = tmp_path_factory.mktemp("lab-root")
    shutil.copytree(REPO / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "results"))
    marker = uuid.uuid4().hex
    server = LabServer(root, tmp_path_factory.mktemp("lab-home"), env={"TUWVIZ_TEST_NOTEBOOK": marker})
    server.marker = marker
    yield server
    server.stop()
