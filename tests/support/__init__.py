"""What the tests share: the repository's path, hang guards, the CLI, process checks.

Fixtures live in ``tests/conftest.py``; everything a test imports lives here (``from support
import hang_guard``), with the suite's plugins beside it: ``budget`` (where the time and
the launches go, and the count budget), ``leaks`` (every process the session starts is
marked, counted and checked) and ``lab`` (a real JupyterLab driven by Chromium).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .budget import full_tier

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "MPI_ERR_ARG", "MPI_PROCESS_MARKERS", "MPI_SUCCESS",
           "REPO", "SAMPLED_BS", "SAMPLED_PS", "TIMEOUT_SCALE", "as_from_a_terminal",
           "full_tier", "hang_guard", "mpi_processes", "notebook_scale", "open_bokeh_page",
           "play", "run_cli", "run_mpi_script", "sampled_roots"]

#: The repository: tests/support/ is two levels down.
REPO = Path(__file__).resolve().parents[2]

#: One setting scales every hang guard of the tests (time-outs, waits): a loaded machine
#: sets TUWVIZ_TIMEOUT_SCALE=4.  Guards catch hangs only; no test asserts a duration.
TIMEOUT_SCALE = float(os.environ.get("TUWVIZ_TIMEOUT_SCALE", "1"))


def as_from_a_terminal() -> None:
    """``preexec_fn`` for a process a test interrupts: SIGINT at its default, as a terminal
    starts it.  A suite started in the background by a non-interactive shell (``cmd &``,
    nohup, some CI runners) inherits SIGINT ignored, and a Python started so installs no
    KeyboardInterrupt handler: Ctrl-C would then do nothing, by the shell's choice."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def notebook_scale(config) -> str:
    """``TUWVIZ_NOTEBOOK_SCALE`` for the notebooks this run executes: ``quick`` in the quick
    tier (their simulations and measurements run small and say so), ``full`` in the full one."""
    return "full" if full_tier(config) else "quick"


def hang_guard(seconds: float) -> float:
    """`seconds`, a generous limit that only a hang should reach, times the scale."""
    return seconds * TIMEOUT_SCALE


#: MPICH's return codes the C-level tests compare with (checked against mpi4py by `kernel_lib`).
MPI_SUCCESS, MPI_ERR_ARG = 0, 12


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


def play(page, ms: int) -> None:
    """Click ► Play on a Bokeh animation page and let `ms` of its time pass on a fake clock.

    The page's timers run on Playwright's clock from then on, so the animation's own
    ``setInterval`` steps it exactly as in a browser, without the test waiting its intervals
    out in wall time (a 900 ms step is 900 ms of the fake clock).
    """
    if not getattr(page, "_tuwviz_clock", False):
        page.clock.install()
        page._tuwviz_clock = True
    page.get_by_role("button", name="► Play").click()
    page.clock.run_for(ms)


def run_mpi_script(script: str, nranks: int, *args: str, guard: float = 600) -> dict | list:
    """Run `script` with ``python -c`` on `nranks` MPI ranks; its one ``RESULT <json>``
    line, parsed (`guard`: a hang guard, seconds)."""
    from tuwviz.run.launch import local_mpi_command, mpi_env, record_launch

    record_launch("mpiexec", nranks)  # counted by tests/support/budget.py
    r = subprocess.run([*local_mpi_command(), "-n", str(nranks), sys.executable, "-c", script, *args],
                       capture_output=True, text=True, timeout=hang_guard(guard), cwd=REPO,
                       env={**os.environ, **mpi_env(nranks, timed=False)})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = [l.split("RESULT ", 1)[1] for l in r.stdout.splitlines() if "RESULT " in l]
    assert len(lines) == 1, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(lines[0])
