"""Cases on simulated ranks: SimGrid's SMPI runs the C kernels on a platform of the papers.

SMPI runs an unmodified MPI C program as simulated processes on a described machine
(:mod:`tuwviz.platforms`) and answers ``MPI_Wtime`` with simulated time; its own
collectives stand in for "the library", chosen by a named selector (MPICH's or Open MPI's
algorithms).  A Python rank cannot run there, so :func:`build_driver` compiles the kernels,
the registry and ``smpi_c/driver.c`` (the C counterpart of :mod:`tuwviz.run.runner` for
verify and measure cases) with ``smpicc``, each file once per content, as the kernel
library's are (:func:`tuwviz.kernels.build.compile_objects`).

:func:`smpi_backend` is a sweep backend (:data:`tuwviz.run.launch.Backend`), so
:func:`tuwviz.experiments.verify.verify` and :func:`tuwviz.experiments.bench.bench` run on
it unchanged, and results arrive as they are made.  Verification compares every received
byte with SMPI's collective; timing is simulated, deterministic, and free of the host's
load.  Local computation is not simulated (``smpi/simulate-computation:no``): copies inside
a process cost nothing, so a simulated time is the network's part only.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> pr = make_problem("gatherv", 2, "same", 1).to_dict()
>>> print(task_text([{"mode": "verify", "algorithm": "linear", "problem": pr}]), end="")
tuwviz-smpi-task 2 90 1
case 0 13 2 0 1 1 0 0 10 75 0.0 0
counts 1 1
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from .. import config
from ..errors import KernelBuildError, RankFailure, TimeLimitExceeded, TuwvizError
from ..kernels.build import (c_sources, compile_context, compile_objects, generated_file,
                             object_path, registry_source, setters_source)
from ..kernels.load import find_algorithm
from ..params import check_params
from ..platforms import Platform, hostfile, platform as get_platform, simgrid_xml
from ..problems import DATATYPES, FILL, OPS, Problem
from ..table import load_table, workspace_dir
from . import reaper
from .launch import STALL_LIMIT, check_stall_limit, record_launch
from .runner import summarize
from .worker import PREFIX

__all__ = ["DEFAULT_SELECTOR", "SELECTORS", "SimGridNotFoundError", "SmpiBackend", "build_driver",
           "find_simgrid", "placement", "run_smpi", "simgrid_version",
           "simulated_work", "smpi_backend", "task_text"]

#: SMPI's collective selectors: whose algorithms its MPI collectives use.
SELECTORS = ("mpich", "ompi", "mvapich2", "impi")
#: The library's counterpart unless asked otherwise.  Always named: SMPI's default
#: selection ran an irregular MPI_Allgatherv with empty blocks past 120 s at p = 256, where
#: a named selector took under a second.
DEFAULT_SELECTOR = "mpich"

_HERE = Path(__file__).resolve().parent / "smpi_c"
_MODES = {"verify": 0, "measure": 1}
#: How smpicc compiles every file of the driver (besides the prototypes and the shim).
_SMPI_CFLAGS = ["-O2", "-g", "-Wall"]
_DEADLOCK = "Deadlock detected"
_ACTOR = re.compile(r"Actor \d+ \((\d+)@([^)]+)\)(:? )(.*)$")


class SimGridNotFoundError(TuwvizError):
    """SimGrid's ``smpicc`` / ``smpirun`` are not installed."""


def find_simgrid() -> tuple[str, str]:
    """Paths of ``smpicc`` and ``smpirun``.

    Raises
    ------
    SimGridNotFoundError
        Saying how to install SimGrid.
    """
    smpicc, smpirun = shutil.which("smpicc"), shutil.which("smpirun")
    if not smpicc or not smpirun:
        raise SimGridNotFoundError(
            "SimGrid's SMPI (smpicc, smpirun) is not installed: on Debian or Ubuntu "
            "'sudo apt-get install libsimgrid-dev', elsewhere see simgrid.org")
    return smpicc, smpirun


@functools.lru_cache(maxsize=None)
def simgrid_version() -> str:
    """``SimGrid 3.32`` (what ``smpirun -version`` says, first line; asked once)."""
    _, smpirun = find_simgrid()
    out = subprocess.run([smpirun, "-version"], capture_output=True, text=True, timeout=60)
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0].replace("SimGrid version", "SimGrid").strip() if text else "SimGrid"


def _check_selector(selector: str) -> None:
    if selector not in SELECTORS:
        raise ValueError(f"unknown collective selector {selector!r}; valid: {', '.join(SELECTORS)}")


def _c_values(name: str, value) -> list[str]:
    """A checked parameter value as the words tuw_driver_set reads."""
    prm = load_table().parameter(name)
    if prm.type == "choice":
        return [str(prm.choices.index(value))]
    if prm.type == "int_list":
        return [str(int(x)) for x in value]
    if prm.type == "float":
        return [repr(float(value))]
    return [str(int(value))]


def simulated_work(cases: list[dict]) -> int:
    """The size of a simulation: every case's simulated ranks (``p + q``), summed.  What a
    run costs in wall time grows with it (SMPI runs every rank's calls in one process); the
    test suite's budget counts it.

    >>> from tuwviz.problems import make_problem
    >>> simulated_work([{"problem": make_problem("allreduce", 1152, b=1).to_dict()}] * 3)
    3456
    """
    return sum(Problem.from_dict(c["problem"]).size for c in cases)


def task_text(cases: list[dict]) -> str:
    """The driver's task file for `cases` (see ``smpi_c/driver.c``)."""
    out = [f"tuwviz-smpi-task 2 {FILL} {len(cases)}"]
    dtypes, ops = list(DATATYPES), list(OPS)
    for case in cases:
        pr = Problem.from_dict(case["problem"])
        mode = case.get("mode")
        if mode not in _MODES:
            raise ValueError(f"the SMPI backend runs verify and measure cases, not {mode!r}")
        if case.get("types", "same") != "same":
            raise ValueError(f"datatype pair {case['types']!r}: the SMPI backend runs the "
                             f"same datatype on every rank only")
        if case.get("data", "small") != "small":
            raise ValueError("the SMPI backend fills buffers with small integers only")
        alg = find_algorithm(pr.collective, case["algorithm"])
        params = check_params(pr.collective, case["algorithm"], case.get("params"), pr.p)
        words = [(k, _c_values(k, v)) for k, v in params.items() if v is not None]
        share = case.get("part", [0, 1])[1]
        limit = float(case.get("max_time") or case.get("time_limit") or 0.0) / share
        out.append(" ".join(map(str, [
            "case", _MODES[mode], alg.index, pr.p, pr.q, pr.root, dtypes.index(pr.datatype),
            ops.index(pr.op), int(case.get("data_seed", 0)), int(case.get("warmup", 10)),
            int(case.get("reps", 75)), repr(limit), len(words)])))
        out.append("counts " + " ".join(str(int(c)) for c in pr.block_counts()))
        out += [f"param {k} {len(v)} {' '.join(v)}".rstrip() for k, v in words]
    return "\n".join(out) + "\n"


# --- building ---------------------------------------------------------------------------

def build_driver(kernels_dir: Path | None = None) -> Path:
    """The SMPI driver program for the current sources, compiled with ``smpicc`` if needed.

    Each C file is compiled once per content, as the kernel library's are
    (:func:`tuwviz.kernels.build.compile_objects`, in ``<build>/smpi/obj``): editing one
    kernel recompiles that file and links again.  The program is named by its objects and
    SimGrid's version; safe to call from several processes at once.

    Raises
    ------
    KernelBuildError
        With the compiler's ``file:line:`` output.
    SimGridNotFoundError
        If SimGrid is not installed.
    """
    smpicc, _ = find_simgrid()
    kernels_dir = Path(kernels_dir or config.kernels_dir())
    ws = workspace_dir()
    folder = config.build_dir() / "smpi"
    objdir = folder / "obj"
    objdir.mkdir(parents=True, exist_ok=True)
    version = simgrid_version()
    shim = (_HERE / "smpi_shim.h",)
    # the package's files compile as without a workspace, so every workspace shares them
    own = compile_context(smpicc, kernels_dir, None, objdir, _SMPI_CFLAGS, shim, version)
    every = compile_context(smpicc, kernels_dir, ws, objdir, _SMPI_CFLAGS, shim, version)
    units = [(own, c_sources(kernels_dir)),
             (every, [*(c_sources(ws) if ws else []),
                      generated_file(objdir, "registry.c", registry_source(kernels_dir)),
                      generated_file(objdir, "setters.c", setters_source(kernels_dir)),
                      _HERE / "driver.c", _HERE / "intercomm.c"])]
    names = [object_path(context, c, objdir).name for (_, context), files in units
             for c in files]
    digest = hashlib.sha256("\0".join([version, *names]).encode()).hexdigest()[:16]
    exe = folder / f"tuwviz-smpi-{digest}"
    if exe.exists():
        return exe
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.exists():  # another process built it while we waited
            return exe
        objects = [o for (cmd, context), files in units
                   for o in compile_objects(cmd, context, files, objdir)]
        fd, tmp = tempfile.mkstemp(dir=folder)
        os.close(fd)
        proc = subprocess.run([smpicc, "-O2", "-o", tmp, *map(str, objects), "-lm"],
                              capture_output=True, text=True)
        if proc.returncode:
            os.unlink(tmp)
            raise KernelBuildError("the SMPI driver failed to link (smpicc):\n"
                                   + (proc.stderr.strip() or proc.stdout.strip()))
        os.chmod(tmp, 0o755)
        os.replace(tmp, exe)  # atomic: no run starts a half-written program
    return exe


# --- running ----------------------------------------------------------------------------

def _result(case: dict, raw: dict) -> dict:
    """The driver's result in the form :mod:`tuwviz.run.runner` gives."""
    if case["mode"] == "verify":
        pr = Problem.from_dict(case["problem"])
        return {"ok": raw["ok"], "mismatches": [_mismatch(pr, m) for m in raw["mismatches"]]}
    us = raw["times_us"]
    if not us:
        raise TimeLimitExceeded(f"{Problem.from_dict(case['problem']).label()} "
                                f"{case['algorithm']}: no repetition finished within the time "
                                f"limit of {case.get('time_limit')} s (simulated)")
    if raw["time_limited"] and not case.get("max_time"):
        raise TimeLimitExceeded(
            f"{Problem.from_dict(case['problem']).label()} {case['algorithm']}: time limit of "
            f"{case.get('time_limit')} s (simulated) exceeded after {raw['reps']} of "
            f"{case.get('reps', 75)} repetitions")
    result = {"reps": raw["reps"], "warmup": int(case.get("warmup", 10)), **summarize(us)}
    if case.get("samples"):
        result["samples_us"] = us
    return result


def _mismatch(pr: Problem, m: dict) -> dict:
    """Where a rank's output differs, in blocks, as the runner says it."""
    counts = list(pr.block_counts())
    name, i = pr.collective, m["index"]
    if name in ("gather", "gatherv", "allgather", "allgatherv"):
        sizes = [max(counts)] * pr.p if name in ("gather", "allgather") else counts
        start, owner = 0, None
        for r, c in enumerate(sizes):
            if start <= i < start + c:
                owner = r
                break
            start += c
        block, element = owner, i - start
    elif name in ("scatter", "scatterv", "reduce_scatter_block", "reduce_scatter"):
        block, element = m["rank"], i
    else:
        block, element = None, i
    value = (lambda x: int(x)) if pr.datatype != "double" else float
    return {"rank": m["rank"], "block": block, "element": element, "index": i,
            "expected": value(m["expected"]), "got": value(m["got"]),
            "never_written": m["never_written"], "differing_elements": m["differing_elements"],
            "elements": m["elements"], "blocks": [] if block is None else [block],
            "datatype": pr.datatype}


def _deadlock(stderr: str, case: dict | None) -> RankFailure:
    """SimGrid's deadlock report as one error naming the ranks and what they wait for."""
    waiting, inside = [], []
    for line in stderr.splitlines():
        m = _ACTOR.search(line)
        if m:
            (waiting if "waiting for communication" in m.group(4) else inside).append(int(m.group(1)))
    said = []
    if waiting:
        said.append(f"rank{'s' if len(waiting) > 1 else ''} {', '.join(map(str, sorted(waiting)))} "
                    f"wait{'' if len(waiting) > 1 else 's'} for a message that is never sent")
    if inside:
        said.append(f"rank{'s' if len(inside) > 1 else ''} {', '.join(map(str, sorted(inside)))} "
                    f"wait{'' if len(inside) > 1 else 's'} in a call that others never join")
    what = _case_words(case)
    return RankFailure(f"deadlock in the simulation{what}: " + "; ".join(said or ["no rank named"]),
                       rank=min(waiting or inside) if (waiting or inside) else None)


def _case_words(case: dict | None) -> str:
    if case is None:
        return ""
    pr = Problem.from_dict(case["problem"])
    return f" ({case['algorithm']} on {pr.label()})"


def run_smpi(nranks: int, cases: list[dict], on_result: Callable | None = None, *,
             platform: str | Platform, selector: str = DEFAULT_SELECTOR,
             on_start: Callable | None = None, stall_limit: float = STALL_LIMIT,
             oversubscribe: bool = False, ppn: int | None = None) -> list[dict]:
    """Run `cases` on `nranks` simulated ranks of `platform`; return the ranks' reports.

    Ranks fill the platform's nodes in order (node 0's cores first; `ppn` per node if
    given, see :func:`tuwviz.platforms.hostfile`).  `on_result(index,
    case, result)` hears each case as soon as it is done; `on_start(rank_infos)` hears the
    ranks (simulated hosts) before the first.

    Raises
    ------
    RankFailure
        A kernel returned an MPI error (naming the rank) or the simulation deadlocked
        (naming the ranks that wait); results before it were handed to `on_result`.
    ValueError
        For a selector or platform that does not exist, or more ranks than the platform's
        cores (or nodes times `ppn`) without `oversubscribe`.
    """
    _check_selector(selector)
    plat = get_platform(platform)
    hosts = hostfile(plat, nranks, oversubscribe, ppn)
    check_stall_limit(stall_limit)
    exe = build_driver()
    _, smpirun = find_simgrid()
    tmp = Path(tempfile.mkdtemp(prefix="tuwviz-smpi-"))
    reaper.remove_on_exit(tmp)
    try:
        (tmp / "platform.xml").write_text(simgrid_xml(plat), encoding="utf-8")
        (tmp / "hosts").write_text("\n".join(hosts) + "\n", encoding="utf-8")
        (tmp / "task").write_text(task_text(cases), encoding="utf-8")
        cmd = [smpirun, "-np", str(nranks), "-platform", str(tmp / "platform.xml"),
               "-hostfile", str(tmp / "hosts"), str(exe),
               f"--cfg=smpi/coll-selector:{selector}", f"--cfg=network/model:{plat.network_model}",
               "--cfg=smpi/simulate-computation:no", *_overhead_cfg(plat.overhead),
               # timing runs' shared buffers (smpi_c/driver.c, place()) are this block
               # mapped over and over: 64 MiB blocks keep a 576-rank run of 230 MB buffers
               # within Linux's 65,530 mappings a process (1 MiB blocks would need 132,000)
               f"--cfg=smpi/shared-malloc-blocksize:{SHARED_BLOCK}",
               "--log=root.thres:warning",
               "--log=ker_engine.thres:info", str(tmp / "task")]
        record_launch("smpi", nranks)
        record_launch("smpi-work", simulated_work(cases))  # the test budget's size of it
        library = (f"{simgrid_version()} SMPI, {selector} selector, {plat.network_model} network"
                   + (f", {plat.overhead * 1e6:g} us per message" if plat.overhead else ""))
        return _follow(cmd, cases, on_result, on_start, stall_limit, plat, library,
                       placement(plat, ppn))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        reaper.keep(tmp)


#: Bytes of the physical block SMPI's shared malloc maps over timing runs' buffers.
SHARED_BLOCK = 1 << 26


def _overhead_cfg(o: float) -> list[str]:
    """SMPI's per-message processor time (piecewise by size: from 0 bytes, o + 0 per byte)
    for blocking sends, non-blocking sends and receives."""
    if not o:
        return []
    return [f"--cfg=smpi/{key}:0:{o!r}:0" for key in ("os", "ois", "or")]


def placement(plat: Platform, ppn: int | None) -> str:
    """The platform's name, and ``ppn=N`` if not one process per core (rows' ``platform``)."""
    return plat.name + (f" ppn={ppn}" if ppn else "")


def _follow(cmd, cases, on_result, on_start, stall_limit, plat, library, where) -> list[dict]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    reaper.watch(proc.pid)
    infos: list[dict] = []
    finished, error, stderr = 0, None, []
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ, "out")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        partial = {"out": b"", "err": b""}
        quiet, turn = 0.0, time.monotonic()
        open_streams = 2
        while open_streams:
            events = sel.select(timeout=0.5)
            now = time.monotonic()
            # quiet time counts at most a second per turn: a paused machine is no hang
            quiet += min(now - turn, 1.0)
            turn = now
            if quiet > stall_limit:
                raise RankFailure(f"the simulation made no progress for {stall_limit:.0f} s of "
                                  f"wall time{_case_words(cases[finished] if finished < len(cases) else None)}; "
                                  f"it was stopped (the limit is a setting: --stall-limit)")
            for key, _ in events:
                chunk = os.read(key.fileobj.fileno(), 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                quiet = 0.0
                *lines, partial[key.data] = (partial[key.data] + chunk).split(b"\n")
                for raw in lines:
                    line = raw.decode(errors="replace")
                    if key.data == "err":
                        stderr.append(line)
                        continue
                    if not line.startswith(PREFIX):
                        continue
                    msg = json.loads(line[len(PREFIX):])
                    if msg["kind"] == "hello":
                        infos = [{"rank": r, "host": h, "cores": plat.cores, "pid": proc.pid,
                                  "mpi_library": library, "heavy_yield": "",
                                  "platform": where}
                                 for r, h in enumerate(msg["hosts"])]
                        if on_start is not None:
                            on_start(infos)
                    elif msg["kind"] == "result":
                        i = msg["case"]
                        result = _result(cases[i], msg)
                        finished = i + 1
                        if on_result is not None:
                            on_result(i, cases[i], result)
                    elif msg["kind"] == "error" and error is None:
                        error = msg
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reaper.forget(proc.pid)
    text = "\n".join(stderr)
    case = cases[finished] if finished < len(cases) else None
    if error is not None:
        case = cases[error["case"]]
        raise RankFailure(f"rank {error['rank']}: {error['what']} returned MPI error "
                          f"{error['code']} ({error['message'].strip()}){_case_words(case)}",
                          rank=error["rank"])
    if _DEADLOCK in text:
        raise _deadlock(text, case)
    if proc.returncode != 0 or finished < len(cases):
        tail = " | ".join(l.strip() for l in text.strip().splitlines()[-5:])
        raise RankFailure(f"the simulation ended (exit code {proc.returncode}) after {finished} "
                          f"of {len(cases)} cases{_case_words(case)}: {tail or 'no message'}")
    return infos


class SmpiBackend:
    """:func:`run_smpi` on one platform with one of SMPI's selectors, as a sweep backend.

    Checked when made: an unknown platform or selector, or SimGrid missing, fails here,
    before any case is built.  Besides running cases it says what it cannot run
    (:attr:`case_defaults`: one datatype on every rank, small-integer data) and names
    itself for the rows (:attr:`columns`).
    """

    #: Verify sweeps on this backend default to these (the driver has no datatype pairs
    #: and no random-double data).
    case_defaults = {"types": ("same",), "data": ("small",)}

    def __init__(self, platform: str | Platform, selector: str = DEFAULT_SELECTOR,
                 stall_limit: float | None = None, oversubscribe: bool = False,
                 ppn: int | None = None):
        self.platform = get_platform(platform)
        _check_selector(selector)
        hostfile(self.platform, 1, oversubscribe, ppn)  # a bad ppn fails here
        find_simgrid()
        self.selector = selector
        self.stall_limit = STALL_LIMIT if stall_limit is None else check_stall_limit(stall_limit)
        self.oversubscribe = oversubscribe
        self.ppn = ppn

    @property
    def capacity(self) -> int:
        """The most ranks this backend places without oversubscribing."""
        return self.platform.nodes * (self.ppn or self.platform.cores)

    @property
    def columns(self) -> dict[str, str]:
        """What a row measured here records: backend, platform (with ``ppn=N`` if given),
        the library's selector."""
        return {"backend": "smpi", "platform": placement(self.platform, self.ppn),
                "library": f"SMPI {self.selector} selector"}

    @property
    def library(self) -> str:
        """What kernels are compared with here, in words."""
        per = f"{self.ppn} per node" if self.ppn else f"{self.platform.cores}"
        return (f"SMPI's collectives ({self.selector} selector), simulated on "
                f"{self.platform.name} ({self.platform.nodes} x {per})")

    def __call__(self, nranks, cases, on_result=None, on_start=None):
        return run_smpi(nranks, cases, on_result, platform=self.platform,
                        selector=self.selector, on_start=on_start,
                        stall_limit=self.stall_limit, oversubscribe=self.oversubscribe,
                        ppn=self.ppn)

    def __repr__(self) -> str:
        return (f"<SmpiBackend platform={placement(self.platform, self.ppn)} "
                f"selector={self.selector}>")


def smpi_backend(platform: str | Platform, selector: str = DEFAULT_SELECTOR,
                 stall_limit: float | None = None, oversubscribe: bool = False,
                 ppn: int | None = None) -> SmpiBackend:
    """:class:`SmpiBackend` on `platform` with SMPI's `selector`, `ppn` processes per node
    (default: one per core)."""
    return SmpiBackend(platform, selector, stall_limit, oversubscribe, ppn)
