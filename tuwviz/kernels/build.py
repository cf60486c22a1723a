"""Build the C kernels: one shared library per state of the sources, cached.

The sources in ``kernels_c/`` are compiled with the ``mpicc`` of the MPI that mpi4py uses
into one shared library, cached under a hash of the sources, compiler and flags: edit a
``.c`` file, call a tuwviz function again, and the library is rebuilt under a new name (so
even a running engine picks up the new code).  The C registry of algorithms is generated
from the algorithm table, ``kernels_c/algorithms.toml`` (:mod:`tuwviz.table`), and
compiled with the sources.  Each object is compiled once and shared by every library that
needs it; libraries beyond the few most recent, and objects none of them uses, are removed.

Examples
--------
>>> library_path().name.startswith("libtuwviz-")
True
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import config
from ..errors import KernelBuildError, MPINotFoundError
from ..table import load_table, workspace_dir
from ..procfs import mapped_files

__all__ = [
    "KEEP_LIBRARIES",
    "build",
    "c_sources",
    "clean_stale",
    "compile_context",
    "compile_objects",
    "find_mpicc",
    "generated_file",
    "prototypes_source",
    "registry_source",
    "library_path",
    "object_path",
    "setters_source",
    "loaded_libraries",
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


#: How each tuning parameter's value reaches C in :func:`setters_source`: a converter of
#: its text and the C type.
_C_KIND = {"int": ("atoll", "long long"), "float": ("atof", "double"), "choice": ("atoi", "int")}


def setters_source(kernels_dir: Path | None = None) -> str:
    """C of ``tuw_driver_set`` (SMPI's driver sets a case's parameters with it): each tuning
    parameter of the table to its C setter.

    Examples
    --------
    >>> [l.strip() for l in setters_source().splitlines() if "block_bytes" in l][0]
    'if (strcmp(name, "block_bytes") == 0 && n == 1) return tuw_set_block_bytes(atoll(v[0]));'
    """
    lines = ["/* generated by tuwviz.kernels from algorithms.toml: do not edit */",
             "#include <stdlib.h>", "#include <string.h>", "#include \"tuwviz.h\"", "",
             "int tuw_driver_set(const char *name, int n, char **v)", "{"]
    for prm in load_table(kernels_dir).parameters.values():
        if prm.type in _C_KIND:
            conv, _ = _C_KIND[prm.type]
            lines.append(f"    if (strcmp(name, {json.dumps(prm.name)}) == 0 && n == 1) "
                         f"return {prm.setter}({conv}(v[0]));")
        else:  # int_list: (n, int[])
            lines += [f"    if (strcmp(name, {json.dumps(prm.name)}) == 0) {{",
                      "        int *a = malloc(sizeof(int) * (n > 0 ? n : 1)), rc;",
                      "        for (int i = 0; i < n; i++) a[i] = atoi(v[i]);",
                      f"        rc = {prm.setter}(n, a);", "        free(a);",
                      "        return rc;", "    }"]
    lines += ["    return -1; /* unknown: the driver reports it */", "}", ""]
    return "\n".join(lines)


def generated_file(objdir: Path, name: str, text: str) -> Path:
    """`text` (generated C) as a file in `objdir` named by its content, written once: the
    same content keeps the same path, so objects compiled from it stay cached.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     first = generated_file(Path(d), "registry.c", "int x;")
    ...     first == generated_file(Path(d), "registry.c", "int x;"), first.name[:9]
    (True, 'registry-')
    """
    stem, suffix = os.path.splitext(name)
    path = objdir / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}{suffix}"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(suffix=suffix, dir=objdir)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)  # atomic: a concurrent reader never sees half of it
    return path


#: Kernel libraries of one variant (plain, ``asan``) that a build leaves in the build folder,
#: itself included, besides any that a running process has loaded: the most recently built,
#: so going back and forth between a few source states (an edit undone, a workspace on and
#: off) does not recompile, while edits no longer pile up libraries.
KEEP_LIBRARIES = 3


def loaded_libraries(folder: Path) -> set[Path]:
    """The ``.so`` files in `folder` that some live process has mapped (loaded)."""

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
        cmd_own, context_own = compile_context(mpicc, kernels_dir, None, objdir)
        objects = compile_objects(cmd_own, context_own, c_sources(kernels_dir), objdir)
        cmd_all, context_all = compile_context(mpicc, kernels_dir, ws, objdir)
        objects += compile_objects(cmd_all, context_all,
                                    [*(c_sources(ws) if ws else []), registry], objdir)
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


def c_sources(folder: Path) -> list[Path]:
    """The C files of a kernels folder or a workspace, as the build compiles them (hidden
    folders such as JupyterLab's checkpoints left out)."""
    return [s for s in _sources(folder) if s.suffix == ".c"]


def compile_context(compiler: str, kernels_dir: Path, ws: Path | None, objdir: Path,
                    cflags: list[str] | None = None, include: tuple[Path, ...] = (),
                    salt: str = "") -> tuple[list[str], str]:
    """The compiler command for the package's files (`ws` None) or for a workspace's, and
    what its objects depend on besides their own source (:func:`compile_objects`).

    `cflags` default to the kernel library's; `include` are headers every file is compiled
    with (``-include``, after the prototypes), `salt` anything else the objects depend on
    (a compiler's version).  Every header counts, by content.
    """
    # the rows' prototypes, -included: a kernel defined with another signature than its
    # collective's fails at its own file:line, not in a run; named by content, so that
    # objects compiled with it stay valid across builds
    prototypes = generated_file(objdir, "prototypes.h",
                                prototypes_source(kernels_dir, workspace=ws is not None))
    compile_cmd = [compiler, *(_cflags() if cflags is None else cflags),
                   "-I", str(kernels_dir / "include"), *(["-I", str(ws)] if ws else []),
                   "-include", str(prototypes)]
    for h in include:
        compile_cmd += ["-include", str(h)]
    # the command, with the workspace's path left out (a workspace file compiles the same
    # wherever the student's folder is), and every header
    key_cmd = "\0".join([*compile_cmd, salt])
    context = hashlib.sha256((key_cmd.replace(str(ws), "<workspace>") if ws else key_cmd)
                             .encode())
    for d, mark in [(kernels_dir, ""), *([(ws, "workspace:")] if ws else [])]:
        for h in (s for s in _sources(d) if s.suffix == ".h"):
            context.update(f"{mark}{h.relative_to(d)}".encode() + b"\0" + h.read_bytes())
    for h in include:
        context.update(str(h).encode() + b"\0" + h.read_bytes())
    return compile_cmd, context.hexdigest()


def object_path(context: str, c: Path, objdir: Path) -> Path:
    """Where :func:`compile_objects` keeps the object of `c`: named by `context`, the
    source's path and its content."""
    key = hashlib.sha256(f"{context}\0{c}\0".encode() + c.read_bytes())
    return objdir / f"{c.stem}-{key.hexdigest()[:16]}.o"


def compile_objects(compile_cmd: list[str], context: str, c_files: list[Path],
                     objdir: Path) -> list[Path]:
    """Compile each of `c_files` to an object in `objdir` unless one is cached; return them.

    An object is named by a hash of `context` (the compiler command and every header) and
    its source's path and content, so editing one kernel recompiles that one file (a
    second, not a whole build) and editing a header recompiles all.  Files compile in
    parallel, one per core.  Called under a lock (:func:`build`'s, SMPI's driver's).

    Raises
    ------
    KernelBuildError
        Naming every file that failed, with the compiler's ``file:line:`` output.
    """
    objects, todo = [], []
    for c in c_files:
        obj = object_path(context, c, objdir)
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
