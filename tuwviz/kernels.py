"""Build and load the C collective kernels.

The sources in ``kernels_c/`` are compiled with the ``mpicc`` of the MPI that mpi4py uses
into one shared library, cached under a hash of the sources, compiler and flags: edit a
``.c`` file, call a tuwviz function again, and the library is rebuilt and loaded under a
new name (so even a running engine picks up the new code).

Examples
--------
>>> [a.name for a in algorithms("gatherv")]
['native', 'linear', 'binomial', 'tuw']
"""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .collectives import COLLECTIVES, collective
from .errors import KernelBuildError, MPINotFoundError

__all__ = [
    "Algorithm",
    "KERNELS_DIR",
    "algorithms",
    "build",
    "find_algorithm",
    "find_mpicc",
    "library_path",
    "load",
    "sources_dir",
]

#: The C sources shipped with tuwviz.
KERNELS_DIR = Path(__file__).resolve().parent.parent / "kernels_c"


def sources_dir() -> Path:
    """Where the C sources are read from: ``TUWVIZ_KERNELS`` if set (e.g. a student's own
    copy; MPI ranks inherit it), else :data:`KERNELS_DIR`."""
    return Path(os.environ.get("TUWVIZ_KERNELS", KERNELS_DIR))

CFLAGS = ["-O2", "-g", "-Wall", "-fPIC", "-shared"]

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
    return sorted(p for p in kernels_dir.rglob("*") if p.suffix in (".c", ".h") and p.is_file())


def _build_dir() -> Path:
    default = KERNELS_DIR.parent / "build" / "kernels"
    return Path(os.environ.get("TUWVIZ_BUILD_DIR", default))


def library_path(kernels_dir: Path | None = None, mpicc: str | None = None) -> Path:
    """Path the library for the current sources would have (built or not)."""
    kernels_dir = Path(kernels_dir or sources_dir())
    mpicc = mpicc or find_mpicc()
    h = hashlib.sha256()
    h.update(" ".join([mpicc, *CFLAGS]).encode())
    for src in _sources(kernels_dir):
        h.update(str(src.relative_to(kernels_dir)).encode())
        h.update(src.read_bytes())
    return _build_dir() / f"libtuwviz-{h.hexdigest()[:16]}.so"


def build(kernels_dir: Path | None = None, mpicc: str | None = None) -> Path:
    """Compile the kernels if the cached library is missing; return its path.

    Safe to call from many processes at once (all MPI engines do): one compiles under a
    file lock, the others wait and reuse its result.

    Raises
    ------
    KernelBuildError
        If compilation fails; the message contains the compiler's ``file:line:`` output.
    MPINotFoundError
        If no ``mpicc`` is found.
    """
    kernels_dir = Path(kernels_dir or sources_dir())
    if not kernels_dir.is_dir():
        raise KernelBuildError(f"kernel sources not found: {kernels_dir} is not a directory")
    mpicc = mpicc or find_mpicc()
    lib = library_path(kernels_dir, mpicc)
    if lib.exists():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    with open(lib.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if lib.exists():  # another process built it while we waited
            return lib
        c_files = [str(s) for s in _sources(kernels_dir) if s.suffix == ".c"]
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=lib.parent)
        os.close(fd)
        cmd = [mpicc, *CFLAGS, "-I", str(kernels_dir / "include"), "-o", tmp, *c_files]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            os.unlink(tmp)
            raise KernelBuildError(
                f"C kernels failed to compile ({mpicc}):\n{proc.stderr.strip() or proc.stdout}"
            )
        os.replace(tmp, lib)  # atomic: nobody ever loads a half-written library
    return lib


def _comm_ctype():
    from mpi4py import MPI

    return ctypes.c_int if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_int) else ctypes.c_void_p


def comm_handle(comm):
    """The C handle of mpi4py communicator `comm`, as ctypes wants it (mpi4py's idiom)."""
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
    lib.tuw_collective_name.restype = ctypes.c_char_p
    lib.tuw_collective_name.argtypes = [ctypes.c_int]
    # tuning parameters (kernels_c/common/params.c)
    c_int, c_ll, c_double = ctypes.c_int, ctypes.c_longlong, ctypes.c_double
    int_p = ctypes.POINTER(ctypes.c_int)
    lib.tuw_set_block_bytes.restype = None
    lib.tuw_set_block_bytes.argtypes = [c_ll]
    lib.tuw_get_block_bytes.restype = c_ll
    lib.tuw_get_block_bytes.argtypes = []
    lib.tuw_set_cost_model.restype = None
    lib.tuw_set_cost_model.argtypes = [c_double, c_double]
    lib.tuw_get_cost_model.restype = None
    lib.tuw_get_cost_model.argtypes = [ctypes.POINTER(c_double), ctypes.POINTER(c_double)]
    lib.tuw_set_ring_order.restype = None
    lib.tuw_set_ring_order.argtypes = [c_int]
    lib.tuw_get_ring_order.restype = c_int
    lib.tuw_get_ring_order.argtypes = []
    lib.tuw_set_node_map.restype = c_int
    lib.tuw_set_node_map.argtypes = [c_int, int_p]
    lib.tuw_get_node_map.restype = c_int
    lib.tuw_get_node_map.argtypes = [ctypes.POINTER(int_p)]
    lib.tuw_reset_params.restype = None
    lib.tuw_reset_params.argtypes = []
    # ring order and block size of the ring Allgatherv kernels (allgatherv/ring_order.c)
    lib.tuw_ring_order.restype = c_int
    lib.tuw_ring_order.argtypes = [c_int, int_p, int_p, c_int, int_p]
    lib.tuw_allgatherv_block_elems.restype = c_ll
    lib.tuw_allgatherv_block_elems.argtypes = [c_int, int_p, c_int, c_ll, c_double, c_double]
    ll_p = ctypes.POINTER(c_ll)
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


def load(kernels_dir: Path | None = None) -> ctypes.CDLL:
    """Build (if needed) and load the kernel library; returns the ctypes handle."""
    _import_mpi()
    path = build(kernels_dir)
    if path not in _loaded:
        lib = ctypes.CDLL(str(path))
        _declare(lib)
        _check_collectives(lib)
        _loaded[path] = lib
    return _loaded[path]


def _check_collectives(lib: ctypes.CDLL) -> None:
    # The C enum and tuwviz.collectives must list collectives in the same order.
    for i, name in enumerate(COLLECTIVES):
        c_name = lib.tuw_collective_name(i).decode()
        if c_name != name:
            raise KernelBuildError(
                f"collective {i} is {c_name!r} in C but {name!r} in tuwviz.collectives"
            )


@dataclass(frozen=True)
class Algorithm:
    """One registry entry of ``kernels_c/common/registry.c``.

    Attributes
    ----------
    index : int
        Position in the registry (what the C entry points take).
    name, collective, description : str
    flags : int
    """

    index: int
    name: str
    collective: str
    description: str
    flags: int

    @property
    def needs_commutative(self) -> bool:
        """True if the algorithm reorders operands and so needs a commutative operator."""
        return bool(self.flags & 1)

    @property
    def is_library(self) -> bool:
        """True for the MPI library's own collective (``native``)."""
        return bool(self.flags & 2)


def algorithms(collective_name: str | None = None, kernels_dir: Path | None = None) -> list[Algorithm]:
    """All registered algorithms, or those of one collective, in registry order."""
    lib = load(kernels_dir)
    names = list(COLLECTIVES)
    out = []
    for i in range(lib.tuw_algorithm_count()):
        info = lib.tuw_algorithm_get(i).contents
        out.append(Algorithm(
            index=i, name=info.name.decode(), collective=names[info.collective],
            description=info.description.decode(), flags=info.flags,
        ))
    if collective_name is not None:
        coll = collective(collective_name).name
        out = [a for a in out if a.collective == coll]
    return out


def find_algorithm(collective_name: str, name: str, kernels_dir: Path | None = None) -> Algorithm:
    """The registered algorithm `name` of `collective_name`.

    Raises
    ------
    ValueError
        If there is no such algorithm; the message lists the valid ones.
    """
    candidates = algorithms(collective_name, kernels_dir)
    for a in candidates:
        if a.name == name:
            return a
    valid = ", ".join(a.name for a in candidates)
    raise ValueError(
        f"unknown algorithm {name!r} for {collective(collective_name).name}; valid algorithms: {valid}"
    )


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
