"""The algorithm table: every algorithm tuwviz knows, read from ``algorithms.toml``.

One table, as data, lists each algorithm once: its collective, name, C function,
description, communicator kind, restrictions, tuning parameters, model builder and the
parameter variants ``tuwviz verify`` checks.  It lives next to the C sources
(``kernels_c/algorithms.toml``, or ``$TUWVIZ_KERNELS/algorithms.toml`` for a student's own
copy), and everything else is derived from it: the C registry (generated at build time by
:mod:`tuwviz.kernels`), ``tuwviz list``, the CLI's tuning-parameter options
(:mod:`tuwviz.params`), :data:`tuwviz.model.SCHEDULES`, and the tests that iterate over its
rows.  Adding an algorithm is one C file, one ``[[algorithm]]`` row and one model builder.

A *workspace* adds rows without copying or editing the package: a directory with its own
``algorithms.toml`` (rows, and parameters of its own if any) and C files, named by the
``TUWVIZ_WORKSPACE`` environment variable (:func:`workspace_dir`; ``tuwviz assignment new``
makes one for a course).  Its rows come after the kernels' own, its C files are compiled
into the same library, and its model files are found relative to its table.  A row may
not take the name of one of the package's.

Reading the table needs no MPI and no compiler; :func:`tuwviz.kernels.load` checks that the
compiled library holds the same rows, in the same order, and says which one differs.

Examples
--------
>>> t = load_table()
>>> [r.name for r in t.rows("gatherv")]
['native', 'linear', 'binomial', 'tuw', 'circulant']
>>> row = t.find("allgatherv", "pipelined")
>>> [q.name for q in row.params]
['block_bytes', 'alpha', 'beta', 'ring', 'nodes']
>>> row.restrictions, row.in_place, row.comm
((), True, 'intra')
>>> t.find("gatherv", "bogus")
Traceback (most recent call last):
...
ValueError: unknown algorithm 'bogus' for gatherv; valid algorithms: native, linear, binomial, tuw, circulant
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from . import config
from .collectives import COLLECTIVES, collective
from .problems import COMMUTATIVE_OPS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "COMM_KINDS",
    "PARAM_TYPES",
    "RESTRICTIONS",
    "Parameter",
    "Row",
    "Table",
    "TableError",
    "WORKSPACE_VAR",
    "load_table",
    "pinned_table",
    "table_path",
    "workspace_dir",
    "workspace_rows",
]

#: Environment variable naming a workspace: a directory whose ``algorithms.toml`` rows and
#: C files are added to the kernels' own (MPI ranks and engines inherit it).
WORKSPACE_VAR = config.WORKSPACE

#: Restrictions a row may declare, with what they mean.
RESTRICTIONS = {
    "commutative": "needs a commutative operator",
    "power_of_two": "needs p a power of two",
}
#: Communicator kinds: one group (an intra-communicator), two groups (an
#: inter-communicator), or either (the MPI library's collectives that serve both).
COMM_KINDS = ("intra", "inter", "any")
#: Tuning-parameter types and the C setter each implies.
PARAM_TYPES = {
    "int": "void f(long long)",
    "float": "void f(double)",
    "choice": "void f(int index)",
    "int_list": "int f(int n, const int values[])",
}
#: C flag bits of the generated registry (``tuwviz.h``).
FLAGS = {"commutative": 1, "library": 2, "power_of_two": 4, "in_place": 8}


class TableError(ValueError):
    """``algorithms.toml`` is malformed; the message names the file, row and field."""


def table_path(kernels_dir: str | Path | None = None) -> Path:
    """Where the table of `kernels_dir` is (default: the kernels tuwviz builds).

    Examples
    --------
    >>> table_path().name
    'algorithms.toml'
    """
    if kernels_dir is None:
        kernels_dir = config.kernels_dir()
    return Path(kernels_dir) / "algorithms.toml"


@dataclass(frozen=True)
class Parameter:
    """A tuning parameter: a process-global C setting that keeps MPI signatures unchanged.

    Attributes
    ----------
    name : str
        As in Python dicts and result rows (``block_bytes``); the CLI option is
        ``--block-bytes``.
    type : str
        One of :data:`PARAM_TYPES`.
    help : str
    setter : str
        The C function that sets it (signature by type, see :data:`PARAM_TYPES`).
    default : object
        Value when not set (None: the kernel decides, e.g. asks MPI for the node map).
    min, max, above : float or None
        Inclusive bounds, and an exclusive lower bound.
    choices : tuple of str
        For ``choice``: the names, in the order of the C enum.
    """

    name: str
    type: str
    help: str
    setter: str
    default: Any = None
    min: float | None = None
    max: float | None = None
    above: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def option(self) -> str:
        """The CLI option, e.g. ``--block-bytes``."""
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any, p: int | None = None) -> Any:
        """`value` in canonical form (int, float, choice name, list of int).

        A node-map pattern ``"cyclic:K"`` / ``"block:K"`` becomes a list once `p` is known.

        Raises
        ------
        ValueError
            Naming the parameter, the bad value and what is allowed.

        Examples
        --------
        >>> q = load_table().parameter("nodes")
        >>> q.check("cyclic:2", p=5), q.check([1, 0], p=2)
        ([0, 1, 0, 1, 0], [1, 0])
        >>> load_table().parameter("ring").check("bogus")
        Traceback (most recent call last):
        ...
        ValueError: ring: unknown value 'bogus'; valid values: rank, smp, spread
        """
        if self.type == "choice":
            if value not in self.choices:
                raise ValueError(f"{self.name}: unknown value {value!r}; valid values: "
                                 f"{', '.join(self.choices)}")
            return value
        if self.type == "int_list":
            if isinstance(value, str):
                value = _node_pattern(self.name, value, p)
                if isinstance(value, str):
                    return value  # a pattern, expanded once p is known
            try:
                out = [_integer(self.name, v) for v in value]
            except TypeError:
                raise ValueError(f"{self.name} must be a list of integers, got {value!r}") from None
            if p is not None and len(out) != p:
                raise ValueError(f"{self.name} gives {len(out)} values for p={p} processes")
            for v in out:
                self._bounds(v)
            return out
        v = _integer(self.name, value) if self.type == "int" else _real(self.name, value)
        self._bounds(v)
        return v

    def _bounds(self, v: float) -> None:
        # the table's bounds are the C types' ranges too (e.g. long long): exact ints
        if self.min is not None and v < self.min:
            raise ValueError(f"{self.name} must be >= {_num(self.min)}, got {v!r}")
        if self.max is not None and v > self.max:
            raise ValueError(f"{self.name} must be <= {_num(self.max)}, got {v!r}")
        if self.above is not None and not v > self.above:
            raise ValueError(f"{self.name} must be > {_num(self.above)}, got {v!r}")

    def parse(self, text: str) -> Any:
        """One value from command-line text (``"1024"``, ``"smp"``, ``"0,1,0,1"``)."""
        if self.type == "int_list":
            if ":" in text:
                return text
            return [t.strip() for t in text.split(",") if t.strip()]
        return text

    def set(self, lib: Any, value: Any) -> None:
        """Call the C setter of this parameter on library `lib` with checked `value`.

        Raises
        ------
        ValueError
            If `value` does not fit the setter's C type (ctypes would wrap it silently:
            2**63 became a negative block size) or the setter refuses it (non-zero code).
        """
        import ctypes
        import math

        fn = getattr(lib, self.setter)
        if self.type == "int":
            v = int(value)
            if not -2**63 <= v < 2**63:
                raise ValueError(f"{self.name} = {v} does not fit a C long long "
                                 f"(-2**63 .. 2**63-1)")
            rc = fn(ctypes.c_longlong(v))
        elif self.type == "float":
            v = float(value)
            if not math.isfinite(v):
                raise ValueError(f"{self.name} must be a finite number, got {v!r}")
            rc = fn(ctypes.c_double(v))
        elif self.type == "choice":
            rc = fn(ctypes.c_int(self.choices.index(value)))
        else:
            v = [int(x) for x in value]
            bad = [x for x in v if not -2**31 <= x < 2**31]
            if bad or len(v) >= 2**31:
                raise ValueError(f"{self.name}: {bad[0] if bad else len(v)} does not fit a C int")
            arr = (ctypes.c_int * max(len(v), 1))(*v)
            rc = fn(ctypes.c_int(len(v)), arr)
        if rc is not None and rc != 0:
            raise ValueError(f"{self.setter} refused {self.name} = {value!r} (C error code "
                             f"{rc}: out of range, or no memory)")

    def describe(self) -> str:
        """``name (type, range, default): help`` for listings."""
        kind = "|".join(self.choices) if self.type == "choice" else self.type
        rng = []
        if self.min is not None:
            rng.append(f">= {_num(self.min)}")
        if self.above is not None:
            rng.append(f"> {_num(self.above)}")
        if self.max is not None:
            rng.append(f"<= {_num(self.max)}")
        default = "" if self.default is None else f", default {self.default}"
        return f"{self.name} ({kind}{', ' if rng else ''}{' '.join(rng)}{default}): {self.help}"


def _num(x: float) -> str:
    """A bound as text: ints exactly (``9223372036854775807``), floats short (``0``)."""
    return str(x) if isinstance(x, int) else f"{x:g}"


def _integer(name: str, value: Any) -> int:
    """`value` as an exact int (text is read as an integer, never through a float)."""
    import numbers

    try:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, str):
            text = value.strip()
            try:
                return int(text)
            except ValueError:
                value = float(text)  # "1e3" is an integer, "1.5" and "nan" are not
        f = float(value)
        if f != int(f):
            raise ValueError
        return int(f)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def _real(name: str, value: Any) -> float:
    """`value` as a finite float."""
    import math

    try:
        if isinstance(value, bool):
            raise ValueError
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return f


def _node_pattern(name: str, text: str, p: int | None) -> list[int] | str:
    kind, _, k = text.partition(":")
    if kind not in ("cyclic", "block") or not k.isdigit() or int(k) < 1:
        if ":" not in text:
            return [t for t in text.split(",")]  # "0,1,0,1" from a notebook
        raise ValueError(f"{name}: {text!r} is no node map; write numbers (0,1,0,1), "
                         f"cyclic:K (rank i on node i mod K) or block:K (K ranks per node)")
    if p is None:
        return text
    k = int(k)
    return [i % k for i in range(p)] if kind == "cyclic" else [i // k for i in range(p)]


@dataclass(frozen=True)
class Row:
    """One algorithm of the table.

    Attributes
    ----------
    collective, name, function, description : str
    comm : str
        Communicator kind (:data:`COMM_KINDS`): ``intra``, ``inter`` or ``any``.
    library : bool
        True for the MPI library's own collective (``native``).
    restrictions : tuple of str
        Keys of :data:`RESTRICTIONS`.
    in_place : bool
        Accepts ``MPI_IN_PLACE`` where the standard allows it.
    params : tuple of Parameter
    model : str or None
        ``"module:function"`` or ``"file.py:function"`` (relative to the table).
    verify : tuple of dict
        Parameter settings ``tuwviz verify`` checks besides the defaults.
    note : str or None
        A property a user should know before choosing the row (``tuwviz list`` prints it
        under the table), e.g. what giving every rank the same bits costs it.
    index : int
        Position in the table, which is the index of the C registry.
    source : Path
        The table file, for messages and relative model paths.
    """

    collective: str
    name: str
    function: str
    description: str
    comm: str = "intra"
    library: bool = False
    restrictions: tuple[str, ...] = ()
    in_place: bool = False
    params: tuple[Parameter, ...] = ()
    model: str | None = None
    verify: tuple[dict, ...] = ()
    note: str | None = None
    index: int = 0
    source: Path = field(default=Path("algorithms.toml"), compare=False)

    @property
    def key(self) -> tuple[str, str]:
        return (self.collective, self.name)

    @property
    def flags(self) -> int:
        """The C registry's flag bits (``TUW_NEEDS_COMMUTATIVE``, ``TUW_IS_LIBRARY``, ...)."""
        f = sum(FLAGS[r] for r in self.restrictions)
        return f | (FLAGS["library"] if self.library else 0) | (FLAGS["in_place"] if self.in_place else 0)

    def serves(self, kind: str) -> bool:
        """True if the algorithm runs on communicators of `kind` (``"intra"``/``"inter"``).

        >>> t = load_table()
        >>> t.find("allgather", "native").serves("inter"), t.find("allgather", "segmented").serves("intra")
        (True, False)
        """
        return self.comm in (kind, "any")

    def check_comm(self, inter: bool, what: str = "") -> None:
        """Raise ValueError unless the algorithm runs on two groups (`inter`) or one; the
        message names `what` (e.g. a problem's label) as the other kind if given.

        >>> load_table().find("allgather", "segmented").check_comm(False)
        Traceback (most recent call last):
        ...
        ValueError: allgather/segmented runs on two groups (--groups P,Q)
        """
        if self.serves("inter" if inter else "intra"):
            return
        need = "two groups (--groups P,Q)" if self.comm == "inter" else "one group (--np)"
        is_ = f"; {what} is {'two groups' if inter else 'one group'}" if what else ""
        raise ValueError(f"{self.collective}/{self.name} runs on {need}{is_}")

    @property
    def needs_commutative(self) -> bool:
        return "commutative" in self.restrictions

    @property
    def is_library(self) -> bool:
        return self.library

    def parameter(self, name: str) -> Parameter:
        for q in self.params:
            if q.name == name:
                return q
        raise KeyError(name)

    def builder(self) -> Callable | None:
        """The model schedule builder (imported on first use), or None without a model."""
        if not self.model:
            return None
        return _import_builder(self.model, self.source)

    def verify_variants(self, p: int) -> list[dict]:
        """Defaults first, then the row's verify settings with node patterns for `p`."""
        out: list[dict] = [{}]
        for v in self.verify:
            out.append({k: self.parameter(k).check(x, p) for k, x in v.items()})
        return out

    def check_problem(self, p: int, op: str | None = None) -> None:
        """Raise ValueError if `p` or `op` break a restriction of this algorithm."""
        if "power_of_two" in self.restrictions and (p < 1 or p & (p - 1)):
            raise ValueError(f"{self.collective}/{self.name} needs p a power of two, got p={p}")

        if "commutative" in self.restrictions and op is not None and op not in COMMUTATIVE_OPS:
            raise ValueError(f"{self.collective}/{self.name} needs a commutative operator, "
                             f"got {op!r}; commutative operators: {', '.join(COMMUTATIVE_OPS)}")

_builders: dict[tuple[str, Path], Callable] = {}


def _import_builder(spec: str, source: Path) -> Callable:
    key = (spec, source.parent)
    if key in _builders:
        return _builders[key]
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise TableError(f"{source}: model {spec!r} is not 'module:function' or 'file.py:function'")
    if target.endswith(".py"):
        path = (source.parent / target).resolve()
        name = "tuwviz_user_model_" + path.stem
        mod_spec = importlib.util.spec_from_file_location(name, path)
        if mod_spec is None or not path.is_file():
            raise TableError(f"{source}: model file {path} not found")
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[name] = module
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise TableError(f"{source}: model {spec!r}: {target} has no function {attr!r}")
    _builders[key] = fn
    return fn


class Table:
    """The rows and parameters of one ``algorithms.toml``."""

    def __init__(self, rows: list[Row], parameters: dict[str, Parameter], path: Path):
        self._rows = rows
        self.parameters = parameters
        self.path = path

    def __iter__(self):
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self, collective_name: str | None = None) -> list[Row]:
        """All rows, or those of one collective, in table order."""
        if collective_name is None:
            return list(self._rows)
        coll = collective(collective_name).name
        return [r for r in self._rows if r.collective == coll]

    def kernels(self) -> list[Row]:
        """Rows that are tuwviz's own kernels (not the MPI library's collectives)."""
        return [r for r in self._rows if not r.library]

    def modelled(self) -> list[Row]:
        """Rows with a model builder."""
        return [r for r in self._rows if r.model]

    def find(self, collective_name: str, name: str) -> Row:
        """The row `name` of `collective_name`; ValueError lists the valid names."""
        candidates = self.rows(collective_name)
        for r in candidates:
            if r.name == name:
                return r
        valid = ", ".join(r.name for r in candidates)
        raise ValueError(f"unknown algorithm {name!r} for {collective(collective_name).name}; "
                         f"valid algorithms: {valid}")

    def parameter(self, name: str) -> Parameter:
        """A parameter definition by name; ValueError lists the defined ones."""
        try:
            return self.parameters[name]
        except KeyError:
            raise ValueError(f"unknown parameter {name!r}; parameters: "
                             f"{', '.join(self.parameters)}") from None


_cache: dict[Path, tuple[float, Table]] = {}


def workspace_dir() -> Path | None:
    """The workspace ``TUWVIZ_WORKSPACE`` names, or None if it is unset or empty.

    Raises
    ------
    TableError
        If it is set to something that is not a directory.
    """
    value = config.workspace()
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        raise TableError(f"{WORKSPACE_VAR}={value}: no such directory (a workspace is a "
                         f"directory with an algorithms.toml, e.g. from 'tuwviz assignment new')")
    return path


def _read(path: Path) -> Table:
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        raise TableError(f"no algorithm table at {path}: every kernels directory and workspace "
                         f"needs an algorithms.toml (see tuwviz's kernels_c/)") from None
    hit = _cache.get(path)
    if hit and hit[0] == mtime:
        return hit[1]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TableError(f"{path}: {exc}") from None
    table = _parse(data, path)
    _cache[path] = (mtime, table)
    return table


#: Pins of :func:`pinned_table`, innermost last: [(kernels_dir, workspace), table or None].
_pins: list[list] = []


@contextlib.contextmanager
def pinned_table(kernels_dir: str | Path | None = None, workspace: bool = True):
    """Within the block, :func:`load_table` with the same arguments reads the files once,
    on its first call, and returns that table from then on (see
    :func:`tuwviz.kernels.pinned`).

    Examples
    --------
    >>> with pinned_table():
    ...     load_table() is load_table()
    True
    """
    _pins.append([(kernels_dir, workspace), None])
    try:
        yield
    finally:
        _pins.pop()


def load_table(kernels_dir: str | Path | None = None, workspace: bool = True) -> Table:
    """Read (and cache) the algorithm table of `kernels_dir` (default: the built kernels).

    With `workspace` (the default), the rows of the workspace :func:`workspace_dir` names,
    if any, follow the kernels' own.

    Raises
    ------
    TableError
        With the file, row and field of a malformed entry, or a workspace row whose name
        the kernels' table already has.
    """
    pin = _pins[-1] if _pins and _pins[-1][0] == (kernels_dir, workspace) else None
    if pin and pin[1] is not None:
        return pin[1]
    table = _read(table_path(kernels_dir).resolve())
    extra = workspace_dir() if workspace else None
    if extra is not None:
        table = _merged(table, _read(table_path(extra).resolve()))
    if pin:
        pin[1] = table
    return table


def _merged(base: Table, extra: Table) -> Table:
    """`base` with `extra`'s rows after its own (indices continued) and its parameters."""
    params = dict(base.parameters)
    for name, q in extra.parameters.items():
        if name in params and params[name] != q:
            raise TableError(f"{extra.path}: [parameter.{name}] is already defined by "
                             f"{base.path}; give the workspace's parameter another name")
        params[name] = q
    rows = list(base)
    for r in extra:
        if any(r.key == b.key for b in base):
            raise TableError(f"{extra.path}: algorithm {r.collective}/{r.name} is already one "
                             f"of tuwviz's ({base.path}); give it another name")
        rows.append(replace(r, index=len(rows)))
    return Table(rows, params, base.path)


_PARAM_KEYS = {"type", "help", "setter", "default", "min", "max", "above", "choices"}
_ROW_KEYS = {"collective", "name", "function", "description", "comm", "library",
             "restrictions", "in_place", "params", "model", "verify", "note"}


def _parse(data: dict, path: Path) -> Table:
    unknown = set(data) - {"parameter", "algorithm"}
    if unknown:
        raise TableError(f"{path}: unknown section(s) {', '.join(sorted(unknown))}; "
                         f"expected [parameter.*] and [[algorithm]]")
    params: dict[str, Parameter] = {}
    for name, d in data.get("parameter", {}).items():
        where = f"{path}: [parameter.{name}]"
        bad = set(d) - _PARAM_KEYS
        if bad:
            raise TableError(f"{where}: unknown field(s) {', '.join(sorted(bad))}")
        if d.get("type") not in PARAM_TYPES:
            raise TableError(f"{where}: type must be one of {', '.join(PARAM_TYPES)}")
        for req in ("help", "setter"):
            if not d.get(req):
                raise TableError(f"{where}: {req} is missing")
        if d["type"] == "choice" and not d.get("choices"):
            raise TableError(f"{where}: a choice parameter needs choices")
        params[name] = Parameter(name=name, type=d["type"], help=d["help"], setter=d["setter"],
                                 default=d.get("default"), min=d.get("min"), max=d.get("max"),
                                 above=d.get("above"), choices=tuple(d.get("choices", ())))
    rows: list[Row] = []
    seen: set[tuple[str, str]] = set()
    for i, d in enumerate(data.get("algorithm", [])):
        where = f"{path}: algorithm row {i + 1} ({d.get('collective', '?')}/{d.get('name', '?')})"
        bad = set(d) - _ROW_KEYS
        if bad:
            raise TableError(f"{where}: unknown field(s) {', '.join(sorted(bad))}; "
                             f"fields: {', '.join(sorted(_ROW_KEYS))}")
        for req in ("collective", "name", "function", "description"):
            if not d.get(req):
                raise TableError(f"{where}: {req} is missing")
        if d["collective"] not in COLLECTIVES:
            raise TableError(f"{where}: unknown collective {d['collective']!r}; "
                             f"valid: {', '.join(COLLECTIVES)}")
        if (d["collective"], d["name"]) in seen:
            raise TableError(f"{where}: {d['collective']}/{d['name']} is listed twice")
        seen.add((d["collective"], d["name"]))
        comm = d.get("comm", "intra")
        if comm not in COMM_KINDS:
            raise TableError(f"{where}: comm must be one of {', '.join(COMM_KINDS)}")
        restrictions = tuple(d.get("restrictions", ()))
        for r in restrictions:
            if r not in RESTRICTIONS:
                raise TableError(f"{where}: unknown restriction {r!r}; valid: "
                                 f"{', '.join(RESTRICTIONS)}")
        try:
            row_params = tuple(params[n] for n in d.get("params", ()))
        except KeyError as exc:
            raise TableError(f"{where}: parameter {exc.args[0]!r} has no [parameter.{exc.args[0]}] "
                             f"entry; defined: {', '.join(params) or 'none'}") from None
        names = {q.name for q in row_params}
        variants = tuple(dict(v) for v in d.get("verify", ()))
        for v in variants:
            extra = set(v) - names
            if extra:
                raise TableError(f"{where}: verify variant {v} sets {', '.join(sorted(extra))}, "
                                 f"which the row does not take")
            for k, x in v.items():
                try:
                    params[k].check(x)
                except ValueError as exc:
                    raise TableError(f"{where}: verify variant {v}: {exc}") from None
        if d.get("library") and d.get("model"):
            raise TableError(f"{where}: the MPI library's collective has no model")
        rows.append(Row(
            collective=d["collective"], name=d["name"], function=d["function"],
            description=" ".join(d["description"].split()), comm=comm,
            library=bool(d.get("library", False)), restrictions=restrictions,
            in_place=bool(d.get("in_place", False)), params=row_params,
            model=d.get("model"), verify=variants, index=i, source=path,
            note=" ".join(d["note"].split()) if d.get("note") else None,
        ))
    return Table(rows, params, path)


def workspace_rows(directory: str | Path) -> list[Row]:
    """The rows a workspace adds: its own ``algorithms.toml``, read alone."""
    return load_table(Path(directory).expanduser().resolve(), workspace=False).rows()
