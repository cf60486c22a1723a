"""Build and load the C collective kernels.

The sources in ``kernels_c/`` are compiled with the ``mpicc`` of the MPI that mpi4py uses
into one shared library, cached under a hash of the sources, compiler and flags: edit a
``.c`` file, call a tuwviz function again, and the library is rebuilt and loaded under a
new name (so even a running engine picks up the new code).

The C registry of algorithms is generated from the algorithm table,
``kernels_c/algorithms.toml`` (:mod:`tuwviz.table`), and compiled with the sources; when
the library is loaded, its registry and the C constants Python mirrors (datatype and
operator codes, ring orders, message sizes, struct layouts) are checked against their
Python copies, and a difference is an error that names it.

Examples
--------
>>> [a.name for a in algorithms("gatherv")]
['native', 'linear', 'binomial', 'tuw', 'circulant']
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import json
import math
from pathlib import Path

from . import config
from .collectives import COLLECTIVES
from .errors import KernelBuildError, MPINotFoundError
from .table import Row, load_table, pinned_table, table_path, workspace_dir

__all__ = [
    "Algorithm",
    "KEEP_LIBRARIES",
    "algorithms",
    "build",
    "clean_stale",
    "find_algorithm",
    "find_mpicc",
    "heavy_yield",
    "mirrored_constants",
    "prototypes_source",
    "registry_source",
    "library_path",
    "load",
    "loaded_libraries",
    "mpi_library_version",
    "pinned",
    "sanitize_env",
    "sanitizer",
]

CFLAGS = ["-O2", "-g", "-Wall", "-fPIC", "-shared"]
#: Version of how :func:`build` compiles (generated files, options beyond CFLAGS); part of
#: the library's hash, so a change of recipe rebuilds cached libraries.
BUILD_RECIPE = 3

#: ``TUWVIZ_SANITIZE`` values and the flags they add (a separate library, see
#: :func:`library_path`, so normal and sanitized builds coexist).
SANITIZERS = {"address": ["-fsanitize=address", "-fno-omit-frame-pointer", "-g"]}


def sanitizer() -> str | None:
    """The sanitizer ``TUWVIZ_SANITIZE`` asks for (None if unset or empty).

    Raises
    ------
    KernelBuildError
        For a value other than those of :data:`SANITIZERS`.
    """
    name = config.sanitize()
    if not name:
        return None
    if name not in SANITIZERS:
        raise KernelBuildError(f"TUWVIZ_SANITIZE={name} is not supported; valid values: "
                               f"{', '.join(SANITIZERS)}")
    return name


def _cflags() -> list[str]:
    name = sanitizer()
    return CFLAGS + (SANITIZERS[name] if name else [])


def sanitize_env(name: str = "address", compiler: str = "gcc") -> dict[str, str]:
    """Environment the MPI ranks of a sanitized run need.

    Python itself is not built with ASan, so its runtime must be loaded first
    (``LD_PRELOAD`` of the compiler's ``libasan.so``); leak checking is off because Python
    and MPICH keep memory until exit on purpose, which would drown the kernels' reports.

    Examples
    --------
    >>> env = sanitize_env()
    >>> env["TUWVIZ_SANITIZE"], "libasan" in env["LD_PRELOAD"]
    ('address', True)
    """
    if name not in SANITIZERS:
        raise KernelBuildError(f"no sanitizer {name!r}; valid: {', '.join(SANITIZERS)}")
    lib = subprocess.run([compiler, "-print-file-name=libasan.so"], capture_output=True,
                         text=True).stdout.strip()
    if not lib or not os.path.isabs(lib) or not os.path.exists(lib):
        raise KernelBuildError(f"{compiler} has no libasan.so (got {lib!r}): install the "
                               f"compiler's AddressSanitizer runtime (libasan)")
    return {"TUWVIZ_SANITIZE": name, "LD_PRELOAD": lib,
            # abort_on_error: a report ends the rank with a non-zero status
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:halt_on_error=1"}

_loaded: dict[Path, ctypes.CDLL] = {}


def find_mpicc() -> str:
    """Return the MPI C compiler wrapper to build kernels with.

    Looked up in this order: the ``MPICC`` environment variable; ``mpicc`` next to this
    Python (the one ``pip install mpich`` puts in a venv, matching mpi4py's MPI); ``mpicc``
    on ``PATH``.

    Raises
    ------
    MPINotFoundError
        If none exists.
    """
    if os.environ.get("MPICC"):
        path = shutil.which(os.environ["MPICC"])
        if not path:
            raise MPINotFoundError(f"MPICC={os.environ['MPICC']} is not an executable compiler")
        return path
    candidates = []
    candidates.append(os.path.join(sys.prefix, "bin", "mpicc"))
    candidates.append(shutil.which("mpicc") or "")
    for c in candidates:
        path = shutil.which(c) if c else None
        if path:
            return path
    raise MPINotFoundError(
        "no mpicc found: install MPI into this environment (pip install mpich mpi4py, or "
        "'make lab'), load your cluster's MPI module, or set MPICC=/path/to/mpicc"
    )


def _sources(kernels_dir: Path) -> list[Path]:
    return [kernels_dir / rel for rel, _ in _stat_sources(kernels_dir)]


def _stat_sources(kernels_dir: Path, prefix: str = "") -> list[tuple[str, tuple[int, int, int]]]:
    # (relative path, (mtime_ns, size, inode)) of every source, sorted: a cheap walk
    found = []
    try:
        entries = sorted(os.scandir(kernels_dir), key=lambda e: e.name)
    except FileNotFoundError:  # removed while we walked
        return found
    for entry in entries:
        rel = prefix + entry.name
        if entry.name.startswith("."):  # .ipynb_checkpoints: JupyterLab's copies of edited files
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                found += _stat_sources(Path(entry.path), rel + "/")
            elif entry.name.endswith((".c", ".h", ".toml")) and entry.is_file():
                st = entry.stat()
                found.append((rel, (st.st_mtime_ns, st.st_size, st.st_ino)))
        except FileNotFoundError:
            continue
    return found


#: Digest of the sources per (directory, compiler flags, file stats): library_path runs
#: on every case an engine runs, and reading every source each time cost milliseconds.
#: A file that is edited changes its mtime, size or inode, so the digest is recomputed.
_digests: dict[tuple, str] = {}


def registry_source(kernels_dir: Path | None = None) -> str:
    """The C registry generated from the algorithm table of `kernels_dir`.

    One prototype per kernel (``TUW_PROTO``: the collective's MPI signature) and one
    ``tuw_algorithms[]`` entry per row, in table order, so a row's index is the same in C
    and Python.

    Examples
    --------
    >>> print(registry_source().splitlines()[0])
    /* generated by tuwviz.kernels from algorithms.toml: do not edit */
    """
    table = load_table(kernels_dir)
    lines = ["/* generated by tuwviz.kernels from algorithms.toml: do not edit */",
             "#include \"tuwviz.h\"", ""]
    for r in table:
        if not r.library:
            lines.append(f"TUW_PROTO({r.collective.upper()}, {r.function});")
    lines += ["", "const tuw_algorithm tuw_algorithms[] = {"]
    for r in table:
        desc = json.dumps(r.description, ensure_ascii=False)
        lines.append(f"    {{{json.dumps(r.name)}, TUW_{r.collective.upper()}, "
                     f"(void (*)(void)){r.function}, {desc}, {r.flags}}},")
    lines += ["};", "const int tuw_num_algorithms = "
              "(int)(sizeof tuw_algorithms / sizeof tuw_algorithms[0]);", ""]
    return "\n".join(lines)


def prototypes_source(kernels_dir: Path | None = None, workspace: bool = True) -> str:
    """A header declaring every kernel of the table with its collective's MPI signature.

    Every C file is compiled with it (``-include``), so a kernel whose definition differs
    from the signature (a missing ``const``, a wrong parameter) is a compile error at the
    kernel's own ``file:line``.  Without `workspace`, the package's rows only (what the
    package's own files are compiled with, so a workspace does not recompile them).

    Examples
    --------
    >>> [l for l in prototypes_source().splitlines() if "Gatherv_binomial" in l]
    ['TUW_PROTO(GATHERV, TUW_Gatherv_binomial);']
    """
    lines = ["/* generated by tuwviz.kernels from algorithms.toml: do not edit */",
             "#include \"tuwviz.h\""]
    lines += [f"TUW_PROTO({r.collective.upper()}, {r.function});"
              for r in load_table(kernels_dir, workspace=workspace) if not r.library]
    return "\n".join(lines) + "\n"


#: Kernel libraries of one variant (plain, ``asan``) that a build leaves in the build folder,
#: itself included, besides any that a running process has loaded: the most recently built,
#: so going back and forth between a few source states (an edit undone, a workspace on and
#: off) does not recompile, while edits no longer pile up libraries.
KEEP_LIBRARIES = 3


def loaded_libraries(folder: Path) -> set[Path]:
    """The ``.so`` files in `folder` that some live process has mapped (loaded)."""
    from .procfs import mapped_files

    prefix = str(Path(folder).resolve()) + os.sep
    return {Path(path) for pid in os.listdir("/proc") if pid.isdigit()
            for path in mapped_files(pid) if path.startswith(prefix) and path.endswith(".so")}


def clean_stale(current: Path, keep: int = KEEP_LIBRARIES) -> list[Path]:
    """Remove the libraries of `current`'s variant (``libtuwviz-*.so``, ``libtuwviz-asan-*.so``)
    beyond the `keep` most recently built (`current` among them) that no live process has
    loaded, with their generated ``.registry.c`` and list of objects; return them.  Objects
    (``obj/``) that no remaining library was linked from go as well.

    :func:`build` calls it after each compilation, under the build lock.
    """
    variant = current.name.rsplit("-", 1)[0]
    mtimes = {}
    for lib in current.parent.glob(f"{variant}-*.so"):
        if lib != current and lib.name.rsplit("-", 1)[0] == variant:
            try:
                mtimes[lib] = lib.stat().st_mtime
            except FileNotFoundError:
                continue
    loaded = loaded_libraries(current.parent)
    removed = []
    for lib in sorted(mtimes, key=mtimes.get, reverse=True)[max(keep - 1, 0):]:
        if lib.resolve() in loaded:
            continue
        for f in (lib, lib.with_suffix(".registry.c"), lib.with_suffix(".objects")):
            f.unlink(missing_ok=True)
        removed.append(lib)
    # what a failed build left (its library never came), and the objects no remaining
    # library (of any variant) was linked from
    for f in [*current.parent.glob("*.registry.c"), *current.parent.glob("*.objects"),
              *current.parent.glob("*.prototypes.h")]:
        if not f.with_name(f.name.split(".", 1)[0] + ".so").exists():
            f.unlink(missing_ok=True)
    objdir = current.parent / "obj"
    if objdir.is_dir():
        used = {name for m in current.parent.glob("libtuwviz*.objects")
                for name in m.read_text().split()}
        for f in [*objdir.glob("*.o"), *objdir.glob("prototypes-*.h")]:
            if f.name not in used:
                f.unlink(missing_ok=True)
    return removed


def library_path(kernels_dir: Path | None = None, mpicc: str | None = None) -> Path:
    """Path the library for the current sources would have (built or not)."""
    kernels_dir = Path(kernels_dir or config.kernels_dir())
    mpicc = mpicc or find_mpicc()
    compiler = " ".join([mpicc, *_cflags(), f"recipe {BUILD_RECIPE}"])
    dirs = [(kernels_dir, "")]
    ws = workspace_dir()
    if ws is not None:  # a workspace's sources count as well, marked apart from the kernels'
        dirs.append((ws, "workspace:"))
    stats = tuple((d, mark, tuple(_stat_sources(d))) for d, mark in dirs)
    key = (compiler, stats)
    if key not in _digests:
        h = hashlib.sha256()
        h.update(compiler.encode())
        for d, mark, files in stats:
            for rel, _ in files:
                h.update((mark + rel).encode())
                h.update((d / rel).read_bytes())
        _digests[key] = h.hexdigest()[:16]
    tag = f"-{sanitizer()}" if sanitizer() else ""
    return config.build_dir() / f"libtuwviz{tag}-{_digests[key]}.so"


def build(kernels_dir: Path | None = None, mpicc: str | None = None) -> Path:
    """Compile the kernels if the cached library is missing; return its path.

    Safe to call from many processes at once (all MPI engines do): one compiles under a
    file lock, the others wait and reuse its result.  A compilation is announced on
    stderr, with the time it took (outside MPI ranks; see :func:`_announcing`).

    Raises
    ------
    KernelBuildError
        If compilation fails; the message contains the compiler's ``file:line:`` output.
    MPINotFoundError
        If no ``mpicc`` is found.
    """
    kernels_dir = Path(kernels_dir or config.kernels_dir())
    if not kernels_dir.is_dir():
        raise KernelBuildError(f"kernel sources not found: {kernels_dir} is not a directory")
    mpicc = mpicc or find_mpicc()
    lib = library_path(kernels_dir, mpicc)
    if lib.exists():
        return lib
    ws = workspace_dir()
    lib.parent.mkdir(parents=True, exist_ok=True)
    with open(lib.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if lib.exists():  # another process built it while we waited
            return lib
        announce = _announcing()
        if announce:  # a rebuild takes up to a minute: say so, or the command looks hung
            why = ("sources changed" if any(lib.parent.glob("libtuwviz*.so"))
                   else "first build")
            where = f"{kernels_dir} and workspace {ws}" if ws else str(kernels_dir)
            print(f"compiling C kernels from {where} ({why})...", file=sys.stderr, flush=True)
        started = time.monotonic()
        registry = lib.with_suffix(".registry.c")
        registry.write_text(registry_source(kernels_dir), encoding="utf-8")
        objdir = lib.parent / "obj"
        objdir.mkdir(parents=True, exist_ok=True)
        # The package's files compile as without a workspace (its prototypes only, none of
        # its headers), so every workspace, and the package alone, share their objects: a
        # folder of submissions, each with its own function names, compiles them once.
        # The workspace's files and the registry see everything.
        cmd_own, context_own = _compile_context(mpicc, kernels_dir, None, objdir)
        objects = _compile_objects(cmd_own, context_own, _sources_c(kernels_dir), objdir)
        cmd_all, context_all = _compile_context(mpicc, kernels_dir, ws, objdir)
        objects += _compile_objects(cmd_all, context_all,
                                    [*(_sources_c(ws) if ws else []), registry], objdir)
        prototypes = sorted({Path(cmd_own[-1]), Path(cmd_all[-1])})
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=lib.parent)
        os.close(fd)
        # -z defs: a row naming a function no file defines fails here, not at load time
        cmd = [mpicc, *_cflags(), "-Wl,-z,defs", "-o", tmp, *map(str, objects), "-lm"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise KernelBuildError(
                f"C kernels failed to compile ({mpicc}):\n{proc.stderr.strip() or proc.stdout}"
                + _undefined_hint(proc.stderr, kernels_dir)
            )
        lib.with_suffix(".objects").write_text(
            "".join(f"{f.name}\n" for f in [*objects, *prototypes]))
        os.replace(tmp, lib)  # atomic: nobody ever loads a half-written library
        clean_stale(lib)
        if announce:
            print(f"compiled C kernels in {time.monotonic() - started:.1f} s", file=sys.stderr,
                  flush=True)
    return lib


def _sources_c(folder: Path) -> list[Path]:
    return [s for s in _sources(folder) if s.suffix == ".c"]


def _compile_context(mpicc: str, kernels_dir: Path, ws: Path | None,
                     objdir: Path) -> tuple[list[str], str]:
    """The compiler command for the package's files (`ws` None) or for a workspace's, and
    what its objects depend on besides their own source (:func:`_compile_objects`)."""
    # the rows' prototypes, -included: a kernel defined with another signature than its
    # collective's fails at its own file:line, not in a run; named by content, so that
    # objects compiled with it stay valid across builds
    protos = prototypes_source(kernels_dir, workspace=ws is not None)
    prototypes = objdir / f"prototypes-{hashlib.sha256(protos.encode()).hexdigest()[:16]}.h"
    if not prototypes.exists():
        prototypes.write_text(protos, encoding="utf-8")
    compile_cmd = [mpicc, *_cflags(), "-I", str(kernels_dir / "include"),
                   *(["-I", str(ws)] if ws else []), "-include", str(prototypes)]
    # the command, with the workspace's path left out (a workspace file compiles the same
    # wherever the student's folder is), and every header
    key_cmd = "\0".join(compile_cmd)
    context = hashlib.sha256((key_cmd.replace(str(ws), "<workspace>") if ws else key_cmd)
                             .encode())
    for d, mark in [(kernels_dir, ""), *([(ws, "workspace:")] if ws else [])]:
        for h in (s for s in _sources(d) if s.suffix == ".h"):
            context.update(f"{mark}{h.relative_to(d)}".encode() + b"\0" + h.read_bytes())
    return compile_cmd, context.hexdigest()


def _compile_objects(compile_cmd: list[str], context: str, c_files: list[Path],
                     objdir: Path) -> list[Path]:
    """Compile each of `c_files` to an object in `objdir` unless one is cached; return them.

    An object is named by a hash of `context` (the compiler command and every header) and
    its source's path and content, so editing one kernel recompiles that one file (a
    second, not a whole build) and editing a header recompiles all.  Files compile in
    parallel, one per core.  Called under :func:`build`'s lock.

    Raises
    ------
    KernelBuildError
        Naming every file that failed, with the compiler's ``file:line:`` output.
    """
    objects, todo = [], []
    for c in c_files:
        key = hashlib.sha256(f"{context}\0{c}\0".encode() + c.read_bytes())
        obj = objdir / f"{c.stem}-{key.hexdigest()[:16]}.o"
        objects.append(obj)
        if not obj.exists():
            todo.append((c, obj))

    def compile_one(job: tuple[Path, Path]) -> str:
        c, obj = job
        tmp = obj.with_name(f"{obj.name}.{os.getpid()}.tmp")
        proc = subprocess.run([*compile_cmd, "-c", "-o", str(tmp), str(c)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            return proc.stderr.strip() or proc.stdout.strip() or f"{c}: compiler failed"
        os.replace(tmp, obj)  # atomic: a half-written object is never taken as cached
        return ""

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        errors = [e for e in pool.map(compile_one, todo) if e]
    if errors:
        raise KernelBuildError(f"C kernels failed to compile ({compile_cmd[0]}):\n"
                               + "\n".join(errors))
    return objects


#: Environment variables an MPI launcher sets in each rank (MPICH's Hydra, PMIx, Open MPI).
_RANK_ENV = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")


def _announcing() -> bool:
    """Whether :func:`build` announces a compilation on stderr: only outside MPI ranks (the
    CLI, a notebook's kernel), so p engines that find the sources changed stay quiet (the
    driver builds before it starts them, and announces)."""
    return not any(v in os.environ for v in _RANK_ENV)


def _undefined_hint(stderr: str, kernels_dir: Path) -> str:
    missing = [r for r in load_table(kernels_dir) if f"`{r.function}'" in stderr
               or f"'{r.function}'" in stderr]
    return "".join(f"\n{r.source}: row {r.collective}/{r.name} names function "
                   f"{r.function}, which no .c file under {r.source.parent} defines"
                   for r in missing)


def _comm_ctype():
    from mpi4py import MPI

    return ctypes.c_int if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_int) else ctypes.c_void_p


def comm_handle(comm):
    """The C handle of mpi4py communicator `comm`, as ctypes wants it (mpi4py's idiom).

    Serves any mpi4py handle whose C type is the communicator's (in MPICH an int, like
    ``MPI_Datatype``): :mod:`tuwviz.run.typepairs` passes derived datatypes this way."""
    from mpi4py import MPI

    if _comm_ctype() is ctypes.c_int:
        return ctypes.c_int.from_address(MPI._addressof(comm)).value
    return ctypes.c_void_p(MPI._handleof(comm))


class TuwArgs(ctypes.Structure):
    """Mirror of ``tuw_args`` in ``kernels_c/include/tuwviz.h``."""

    _fields_ = [
        ("sendbuf", ctypes.c_void_p),
        ("sendcount", ctypes.c_int),
        ("sendcounts", ctypes.c_void_p),
        ("sdispls", ctypes.c_void_p),
        ("recvbuf", ctypes.c_void_p),
        ("recvcount", ctypes.c_int),
        ("recvcounts", ctypes.c_void_p),
        ("rdispls", ctypes.c_void_p),
        ("datatype", ctypes.c_int),
        ("op", ctypes.c_int),
        ("root", ctypes.c_int),
    ]


class TuwEvent(ctypes.Structure):
    """Mirror of ``tuw_event`` in ``kernels_c/include/tuwviz.h``."""

    _fields_ = [
        ("rank", ctypes.c_int),
        ("peer", ctypes.c_int),
        ("dir", ctypes.c_int),
        ("tag", ctypes.c_int),
        ("remote", ctypes.c_int),
        ("bytes", ctypes.c_longlong),
        ("t_start", ctypes.c_double),
        ("t_end", ctypes.c_double),
    ]


class _AlgorithmInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("collective", ctypes.c_int),
        ("fn", ctypes.c_void_p),
        ("description", ctypes.c_char_p),
        ("flags", ctypes.c_int),
    ]


def _declare(lib: ctypes.CDLL) -> None:
    comm = _comm_ctype()
    lib.tuw_algorithm_count.restype = ctypes.c_int
    lib.tuw_algorithm_get.restype = ctypes.POINTER(_AlgorithmInfo)
    lib.tuw_algorithm_get.argtypes = [ctypes.c_int]
    lib.tuw_invoke.restype = ctypes.c_int
    lib.tuw_invoke.argtypes = [ctypes.c_int, ctypes.POINTER(TuwArgs), comm]
    lib.tuw_time.restype = ctypes.c_int
    lib.tuw_time.argtypes = [
        ctypes.c_int, ctypes.POINTER(TuwArgs), comm, ctypes.c_int, ctypes.c_int,
        ctypes.c_double, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int),
    ]
    lib.tuw_trace_count.restype = ctypes.c_int
    lib.tuw_trace_copy.restype = ctypes.c_int
    lib.tuw_trace_copy.argtypes = [ctypes.POINTER(TuwEvent), ctypes.c_int]
    lib.tuw_heavy_yield.restype = ctypes.c_int
    lib.tuw_heavy_yield.argtypes = [ctypes.c_int]
    lib.tuw_collective_name.restype = ctypes.c_char_p
    lib.tuw_collective_name.argtypes = [ctypes.c_int]
    lib.tuw_constant.restype = ctypes.c_double
    lib.tuw_constant.argtypes = [ctypes.c_char_p]
    # tuning parameters (kernels_c/common/params.c)
    c_int, c_ll, c_double = ctypes.c_int, ctypes.c_longlong, ctypes.c_double
    int_p = ctypes.POINTER(ctypes.c_int)
    # setters return MPI_SUCCESS or MPI_ERR_ARG (value out of range)
    lib.tuw_set_block_bytes.restype = c_int
    lib.tuw_set_block_bytes.argtypes = [c_ll]
    lib.tuw_get_block_bytes.restype = c_ll
    lib.tuw_get_block_bytes.argtypes = []
    lib.tuw_set_cost_model.restype = c_int
    lib.tuw_set_cost_model.argtypes = [c_double, c_double]
    for name in ("tuw_set_cost_alpha", "tuw_set_cost_beta"):
        getattr(lib, name).restype = c_int
        getattr(lib, name).argtypes = [c_double]
    lib.tuw_get_cost_model.restype = None
    lib.tuw_get_cost_model.argtypes = [ctypes.POINTER(c_double), ctypes.POINTER(c_double)]
    lib.tuw_set_ring_order.restype = c_int
    lib.tuw_set_ring_order.argtypes = [c_int]
    lib.tuw_get_ring_order.restype = c_int
    lib.tuw_get_ring_order.argtypes = []
    lib.tuw_set_node_map.restype = c_int
    lib.tuw_set_node_map.argtypes = [c_int, int_p]
    lib.tuw_get_node_map.restype = c_int
    lib.tuw_get_node_map.argtypes = [ctypes.POINTER(int_p)]
    lib.tuw_reset_params.restype = None
    lib.tuw_reset_params.argtypes = []
    lib.tuw_check_params.restype = c_int
    lib.tuw_check_params.argtypes = [comm]
    lib.tuw_last_error.restype = ctypes.c_char_p
    lib.tuw_last_error.argtypes = []
    lib.tuw_clear_error.restype = None
    lib.tuw_clear_error.argtypes = []
    lib.tuw_invoke_unchecked.restype = ctypes.c_int
    lib.tuw_invoke_unchecked.argtypes = [ctypes.c_int, ctypes.POINTER(TuwArgs), comm]
    # ring order and block size of the ring Allgatherv kernels (allgatherv/ring_order.c)
    lib.tuw_ring_order.restype = c_int
    lib.tuw_ring_order.argtypes = [c_int, int_p, int_p, c_int, int_p]
    lib.tuw_allgatherv_block_elems.restype = c_ll
    lib.tuw_allgatherv_block_elems.argtypes = [c_int, int_p, c_int, c_ll, c_double, c_double]
    ll_p = ctypes.POINTER(c_ll)
    # calibration loops (common/calibrate.c, tuwviz.experiments.calibrate)
    dbl_p = ctypes.POINTER(c_double)
    lib.tuw_pingpong.restype = c_int
    lib.tuw_pingpong.argtypes = [comm, c_ll, c_int, c_int, dbl_p]
    lib.tuw_ring_shift.restype = c_int
    lib.tuw_ring_shift.argtypes = [comm, c_ll, c_int, c_int, dbl_p]
    lib.tuw_copy_time.restype = c_int
    lib.tuw_copy_time.argtypes = [c_ll, c_int, dbl_p]
    lib.tuw_reduce_time.restype = c_int
    lib.tuw_reduce_time.argtypes = [c_int, c_int, c_int, c_int, dbl_p]
    lib.tuw_ring_slot.restype = c_int
    lib.tuw_ring_slot.argtypes = [c_int, ll_p, ll_p, ll_p, ctypes.POINTER(ctypes.c_ubyte)]


def _import_mpi():
    """Import mpi4py so libmpi is loaded, without initializing MPI in a driver process."""
    try:
        import mpi4py
    except ImportError as exc:
        raise MPINotFoundError(
            "mpi4py is not installed: pip install mpich mpi4py (or 'make lab')"
        ) from exc
    if "mpi4py.MPI" not in sys.modules:
        # A process that only lists algorithms or drives mpiexec need not join MPI; engines
        # and workers import mpi4py.MPI themselves first, which initializes it as usual.
        mpi4py.rc.initialize = False
        mpi4py.rc.finalize = False
    from mpi4py import MPI  # noqa: F401  (loads libmpi with RTLD_GLOBAL)


def mpi_library_version() -> str:
    """The MPI library's version line (``MPI_Get_library_version``, callable before
    ``MPI_Init``), as the ranks report it in :func:`tuwviz.run.runner.rank_info`."""
    _import_mpi()
    from mpi4py import MPI

    return " ".join(MPI.Get_library_version().splitlines()[0].split())


@contextlib.contextmanager
def heavy_yield(on: bool):
    """Within the block, MPICH's heavy yield is `on` in this process (a rank), then back
    to what it was; yields the value before (-1: this MPI has no such setting, nothing
    changes).  Engines started for timing (heavy yield on, see
    :func:`tuwviz.run.launch.mpi_env`) switch it off for a batch that times nothing.
    """
    lib = load()
    before = lib.tuw_heavy_yield(int(on))
    try:
        yield before
    finally:
        if before >= 0:
            lib.tuw_heavy_yield(before)


#: Pins of :func:`pinned`, innermost last: [kernels_dir, library or None].
_pins: list[list] = []


@contextlib.contextmanager
def pinned(kernels_dir: Path | None = None):
    """One build for a whole run: within the block, :func:`load`, :func:`find_algorithm`
    and :func:`algorithms` look at the sources once, on the first call, and reuse that
    library and table from then on.

    A run (an MPI job's task, an engine's batch) pins its build, for two reasons: every
    case of it runs the same kernels (a file saved while a sweep runs is compiled for the
    next run, never in its middle), and a case does not pay for a walk of the sources
    (about a millisecond, several times per case).  Nothing is built before the first
    call, so a compile error surfaces where it always did.

    Examples
    --------
    >>> with pinned():
    ...     load() is load()
    True
    """
    with pinned_table(kernels_dir):
        _pins.append([kernels_dir, None])
        try:
            yield
        finally:
            _pins.pop()


def load(kernels_dir: Path | None = None) -> ctypes.CDLL:
    """Build (if needed) and load the kernel library; returns the ctypes handle."""
    pin = _pins[-1] if _pins and _pins[-1][0] == kernels_dir else None
    if pin and pin[1] is not None:
        return pin[1]
    _import_mpi()
    path = build(kernels_dir)
    if path not in _loaded:
        lib = ctypes.CDLL(str(path))
        _declare(lib)
        _check_collectives(lib)
        _check_registry(lib, kernels_dir)
        _check_constants(lib, kernels_dir)
        _loaded[path] = lib
    if pin:
        pin[1] = _loaded[path]
    return _loaded[path]


def _check_collectives(lib: ctypes.CDLL) -> None:
    # The C enum and tuwviz.collectives must list collectives in the same order.
    for i, name in enumerate(COLLECTIVES):
        c_name = lib.tuw_collective_name(i).decode()
        if c_name != name:
            raise KernelBuildError(
                f"collective {i} is {c_name!r} in C but {name!r} in tuwviz.collectives"
            )


#: An algorithm is a row of the table (:class:`tuwviz.table.Row`); its ``index`` is also
#: the position in the C registry.
Algorithm = Row

#: Trace directions, in the order of ``TUW_DIR_SEND``/``TUW_DIR_RECV``.
TRACE_DIRS = ("send", "recv")


def _check_registry(lib: ctypes.CDLL, kernels_dir: Path | None) -> None:
    # The library was generated from a table; the table on disk must still be that one.
    table = load_table(kernels_dir)
    for q in table.parameters.values():
        if not hasattr(lib, q.setter):
            raise KernelBuildError(f"parameter {q.name} of {table.path} names the C setter "
                                   f"{q.setter}, which the library does not define")
    rows = table.rows()
    names = list(COLLECTIVES)
    n = lib.tuw_algorithm_count()
    for i in range(max(n, len(rows))):
        if i >= n:
            raise KernelBuildError(f"algorithm {rows[i].collective}/{rows[i].name} is in "
                                   f"{rows[i].source} but not in the C registry")
        info = lib.tuw_algorithm_get(i).contents
        c = (names[info.collective], info.name.decode(), info.flags)
        if i >= len(rows):
            raise KernelBuildError(f"algorithm {c[0]}/{c[1]} is in the C registry but not in "
                                   f"{table_path(kernels_dir)}")
        py = (rows[i].collective, rows[i].name, rows[i].flags)
        if c != py:
            raise KernelBuildError(f"algorithm {i} is {c[0]}/{c[1]} (flags {c[2]}) in the C "
                                   f"registry but {py[0]}/{py[1]} (flags {py[2]}) in "
                                   f"{rows[i].source}")


def mirrored_constants(kernels_dir: Path | None = None) -> dict[str, float]:
    """Python's copies of C constants, by their ``tuw_constant`` names.

    Examples
    --------
    >>> c = mirrored_constants()
    >>> c["TUW_DT_INT"], c["TUW_RING_SMP"], c["sizeof tuw_oh_state"]
    (1, 1, 24)
    """
    from .model.ordered_hypercube import EXCHANGE_BYTES, INFO_BYTES
    from .problems import DATATYPES, OPS
    from .table import FLAGS

    table = load_table(kernels_dir)
    out: dict[str, float] = {}
    out.update({f"TUW_DT_{t.upper()}": i for i, t in enumerate(DATATYPES)})
    out.update({f"TUW_OP_{o.upper()}": i for i, o in enumerate(OPS)})
    if "ring" in table.parameters:
        out.update({f"TUW_RING_{c.upper()}": i
                    for i, c in enumerate(table.parameter("ring").choices)})
    for name in ("alpha", "beta"):
        if name in table.parameters:
            out[f"TUW_DEFAULT_{name.upper()}"] = table.parameter(name).default
    out.update({"TUW_NEEDS_COMMUTATIVE": FLAGS["commutative"], "TUW_IS_LIBRARY": FLAGS["library"],
                "TUW_NEEDS_POWER_OF_TWO": FLAGS["power_of_two"], "TUW_IN_PLACE": FLAGS["in_place"]})
    out.update({f"TUW_DIR_{d.upper()}": i for i, d in enumerate(TRACE_DIRS)})
    out["sizeof tuw_oh_state"], out["sizeof tuw_oh_info"] = EXCHANGE_BYTES, INFO_BYTES
    for cname, struct in (("tuw_args", TuwArgs), ("tuw_event", TuwEvent),
                          ("tuw_algorithm", _AlgorithmInfo)):
        out[f"sizeof {cname}"] = ctypes.sizeof(struct)
        for fname, *_ in struct._fields_:
            out[f"offsetof {cname}.{fname}"] = getattr(struct, fname).offset
    return out


def _check_constants(lib: ctypes.CDLL, kernels_dir: Path | None) -> None:
    bad = []
    for name, value in mirrored_constants(kernels_dir).items():
        c = lib.tuw_constant(name.encode())
        if math.isnan(c):
            bad.append(f"{name} (Python {value}) is unknown to the C library")
        elif c != value:
            bad.append(f"{name} is {c:g} in C but {value:g} in Python")
    if bad:
        raise KernelBuildError("C and Python disagree: " + "; ".join(bad))


def algorithms(collective_name: str | None = None, kernels_dir: Path | None = None) -> list[Row]:
    """All algorithms of the table, or those of one collective, in table order.

    Loads (and if needed builds) the library, so the rows are known to be compiled in.
    """
    load(kernels_dir)
    return load_table(kernels_dir).rows(collective_name)


def find_algorithm(collective_name: str, name: str, kernels_dir: Path | None = None) -> Row:
    """The algorithm `name` of `collective_name`, with the library loaded.

    Raises
    ------
    ValueError
        If there is no such algorithm; the message lists the valid ones.
    """
    load(kernels_dir)
    return load_table(kernels_dir).find(collective_name, name)


def main() -> int:
    """``python -m tuwviz.kernels``: build the library and print its path."""
    from .errors import TuwvizError

    try:
        print(build())
    except TuwvizError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
