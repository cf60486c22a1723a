"""Shared test set-up: self-contained IPython/Jupyter dirs, the plugins, the fixtures.

What tests import is in ``tests/support/``."""
from __future__ import annotations

import os
import shutil
import tempfile
import sys
from pathlib import Path

import pytest

# budget: where the time and launches go, and the count budget; leaks: marks, counts and
# checks every process the session starts (both in tests/support/)
from support import (CHROMIUM, CHROMIUM_ARGS, MPI_ERR_ARG, MPI_SUCCESS, REPO, TIMEOUT_SCALE,
                     budget, hang_guard, leaks, run_cli)
from tuwviz.run.launch import record_launch  # noqa: E402 (after leaks: it sets the log's path)

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


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    config.pluginmanager.register(leaks, "tuwviz-leaks")
    config.pluginmanager.register(budget, "tuwviz-budget")
    # pytest-timeout's per-test limit is a hang guard too: scale it with the rest
    base = config.getoption("timeout", None) or config.getini("timeout")
    if base and TIMEOUT_SCALE != 1:
        config.option.timeout = float(base) * TIMEOUT_SCALE


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
        ctx.on("page", lambda page: record_launch("page", 1))  # counted by tests/support/budget.py
        try:
            yield ctx
        finally:
            try:
                ctx.close()
            except PlaywrightError:  # Chromium already gone (a signal ended the session)
                pass
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def lab(tmp_path_factory, request):
    """A JupyterLab server (tests/support/lab.py) on a copy of ``notebooks/``, one for the session
    (a test shuts down the kernels it started: ``lab.shutdown_kernels()``).
    Every process it starts carries the environment variable ``TUWVIZ_TEST_NOTEBOOK`` set
    to ``lab.marker``: that is how a test finds what its notebooks left behind."""
    import uuid

    from support.lab import LabServer

    root = tmp_path_factory.mktemp("lab-root")
    shutil.copytree(REPO / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "results"))
    marker = uuid.uuid4().hex
    from support import notebook_scale
    from tuwviz.config import NOTEBOOK_SCALE

    server = LabServer(root, tmp_path_factory.mktemp("lab-home"),
                       env={"TUWVIZ_TEST_NOTEBOOK": marker,
                            NOTEBOOK_SCALE: notebook_scale(request.config)})
    server.marker = marker
    yield server
    server.stop()


@pytest.fixture(scope="session")
def slurm():
    """A real SLURM for the session (tests/support/slurm.py): munged, slurmctld and two
    slurmd node names on this host, in a private folder; every job cancelled and every
    daemon ended afterwards.  `make test-full` installs the packages (`make slurm`)."""
    from support.slurm import Slurm, missing

    gone = missing()
    if gone:
        pytest.fail(f"SLURM is not installed ({', '.join(gone)} not found): run `make slurm` "
                    f"(apt-get install munge slurmctld slurmd slurm-client)")
    root = Path(tempfile.mkdtemp(prefix="tuwviz-slurm-", dir="/tmp"))  # munge's socket path is short
    try:
        cluster = Slurm(root)
        try:
            yield cluster
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
