"""Load the C kernels through ctypes, and check them against their Python mirrors.

:func:`load` builds the library if the sources changed (:mod:`tuwviz.kernels.build`) and
loads it; on loading, its registry and the C constants Python mirrors (datatype and
operator codes, ring orders, message sizes, struct layouts) are checked against their
Python copies, and a difference is an error that names it.  :func:`algorithms` and
:func:`find_algorithm` give the table's rows with the library known to hold them.

Examples
--------
>>> [a.name for a in algorithms("gatherv")]
['native', 'linear', 'binomial', 'tuw', 'circulant']
"""
from __future__ import annotations

import contextlib
import ctypes
import math
import sys
from pathlib import Path

from ..collectives import COLLECTIVES
from ..errors import KernelBuildError, MPINotFoundError
from ..table import Row, load_table, pinned_table, table_path
from .build import build
from ..model.ordered_hypercube import EXCHANGE_BYTES, INFO_BYTES
from ..problems import DATATYPES, OPS
from ..table import FLAGS

__all__ = [
    "Algorithm",
    "TRACE_DIRS",
    "TuwArgs",
    "TuwEvent",
    "algorithms",
    "comm_handle",
    "find_algorithm",
    "heavy_yield",
    "mirrored_constants",
    "load",
    "mpi_library_version",
    "pinned",
]

#: Libraries loaded in this process, by path (a rebuilt library has a new path).
_loaded: dict[Path, ctypes.CDLL] = {}


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
