"""What verification and benchmark sweeps share: lists of values, roots, backends.

A *backend* runs a list of cases on MPI ranks and reports each result as it arrives:
``backend(nranks, cases, on_result, on_start=None)``, where ``on_start(rank_infos)`` hears
who the ranks are before the first result.  Two exist: fresh ranks under
``mpiexec`` for every call (:func:`tuwviz.run.launch.run_mpiexec`, the default for batch
commands) and the engines of a running ipyparallel cluster
(:meth:`tuwviz.run.engines.Engines.run_cases`).
"""
from __future__ import annotations

import re
from typing import Iterable

from .. import config
from ..collectives import collective
from ..problems import check_int, normalize_distribution
from ..problems import DISTRIBUTIONS, default_distributions

__all__ = ["MAX_CASES", "MAX_LIST_VALUES", "check_groups_fit", "check_int", "int_values",
           "parse_groups", "parse_int_list", "parse_names", "parse_roots", "roots_for"]

#: Most cases one verify or bench sweep may build (they are all built before anything runs).
MAX_CASES = 100_000

#: Most values one list option may hold (``--b 1-10000000`` is refused, not built).
MAX_LIST_VALUES = 10_000


def int_values(name: str, values, lo: int | None = None, hi: int | None = None,
               hint: str = "", max_values: int = MAX_LIST_VALUES) -> list[int]:
    """Check a list (or range) of integers: non-empty, each an integer in bounds.

    A ``range`` is checked by its ends before anything is listed, so ``range(1, 10**7)``
    fails at once instead of filling memory.

    Raises
    ------
    ValueError
        Naming `name`: an empty selection, a non-integer, a value out of bounds, or more
        than `max_values` values.
    """
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a list of integers, got {values!r}")
    if isinstance(values, range):
        if len(values):
            check_int(name, min(values), lo, hi, hint)
            check_int(name, max(values), lo, hi, hint)
    else:
        try:
            values = list(values)
        except TypeError:
            raise ValueError(f"{name} must be a list of integers, got {values!r}") from None
    if len(values) == 0:
        raise ValueError(f"empty selection: no {name} given")
    if len(values) > max_values:
        raise ValueError(f"{len(values)} values of {name}, at most {max_values} allowed")
    return [check_int(name, v, lo, hi, hint) for v in values]


def parse_int_list(text: str | Iterable[int], name: str = "values", lo: int | None = None,
                   hi: int | None = None, hint: str = "",
                   max_values: int = MAX_LIST_VALUES) -> list[int]:
    """Parse ``"1-4,8,16"`` into ``[1, 2, 3, 4, 8, 16]`` (lists are checked and pass through).

    Every value and both ends of every range are checked against `lo` and `hi` before
    any range is expanded, and at most `max_values` values are produced, so an unbounded
    request fails at once.  The result is never empty.

    Raises
    ------
    ValueError
        Naming `name` (e.g. ``--np``): unreadable text, a reversed range like ``9-1``, an
        empty selection, a value out of bounds, or too many values.

    Examples
    --------
    >>> parse_int_list("1-3,8")
    [1, 2, 3, 8]
    >>> parse_int_list("9-1", name="--np")
    Traceback (most recent call last):
    ...
    ValueError: --np: reversed range '9-1' (write 1-9)
    """
    if not isinstance(text, str):
        return int_values(name, text, lo, hi, hint, max_values)
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo_text, sep, hi_text = part[1:].partition("-")  # a leading '-' is a sign
        lo_text = part[0] + lo_text
        try:
            if sep:
                a, b = int(lo_text), int(hi_text)
            else:
                a = b = int(part)
        except ValueError:
            raise ValueError(f"{name}: cannot read {part!r} as an integer or a range like "
                             f"1-9") from None
        if a > b:
            raise ValueError(f"{name}: reversed range {part!r} (write {b}-{a})")
        for v in (a, b):
            if lo is not None and v < lo:
                raise ValueError(f"{name} must be at least {lo}, got {v}")
            if hi is not None and v > hi:
                raise ValueError(f"{name} must be at most {hi}, got {v}{hint}")
        if len(out) + (b - a + 1) > max_values:
            raise ValueError(f"{name}: {text!r} gives more than {max_values} values")
        out.extend(range(a, b + 1))
    if not out:
        raise ValueError(f"empty selection: {name} {text!r} gives no values")
    return out


def parse_names(text: str | Iterable[str] | None) -> list[str] | None:
    """Split ``"a,b"`` into ``["a", "b"]``; ``None``/``"all"`` mean no restriction."""
    if text is None:
        return None
    items = text.split(",") if isinstance(text, str) else list(text)
    for s in items:
        if not isinstance(s, str):
            raise ValueError(f"expected names (strings), got {s!r}")
    items = [s.strip() for s in items if s.strip()]
    return None if items in ([], ["all"]) else items


def parse_groups(groups, max_total: int | None = None) -> list[tuple[int, int]]:
    """Two-group sizes ``(p, q)`` from ``"5,2"``, ``["5,2", "3,4"]`` or ``[(5, 2)]``.

    Each group has at least one process, and both together at most `max_total` if given
    (the model passes its own bound; :func:`check_groups_fit` checks this machine's).

    Raises
    ------
    ValueError
        For an empty selection, a pair that is not two integers, or sizes out of range.

    Examples
    --------
    >>> parse_groups("5,2"), parse_groups(["5,2", (3, 4)])
    ([(5, 2)], [(5, 2), (3, 4)])
    >>> parse_groups(["5"])
    Traceback (most recent call last):
    ...
    ValueError: groups '5' is not two sizes P,Q (e.g. 5,2: group A of 5 processes, B of 2)
    """
    if isinstance(groups, str):
        groups = [groups]
    out = []
    for g in groups:
        parts = g.split(",") if isinstance(g, str) else list(g)
        if len(parts) != 2:
            raise ValueError(f"groups {g!r} is not two sizes P,Q (e.g. 5,2: group A of 5 "
                             f"processes, B of 2)")
        p = check_int("size p of group A", _as_int(parts[0]), lo=1)
        q = check_int("size q of group B", _as_int(parts[1]), lo=1)
        if max_total is not None and p + q > max_total:
            raise ValueError(f"groups {p},{q}: {p + q} processes, more than {max_total:,}")
        out.append((p, q))
    if not out:
        raise ValueError("empty selection: no groups given")
    return out


def check_groups_fit(groups) -> list[tuple[int, int]]:
    """:func:`parse_groups`, and each pair's ``p + q`` ranks within this machine's
    :func:`tuwviz.config.max_ranks` (for real ranks here; a simulated platform has its own).

    >>> check_groups_fit("5,2")
    [(5, 2)]
    """
    out = parse_groups(groups)
    for p, q in out:
        if p + q > config.max_ranks():
            raise ValueError(f"groups {p},{q} need {p + q} ranks, more than {config.max_ranks()} "
                             f"(the limit of this machine; set TUWVIZ_MAX_RANKS to raise it)")
    return out


def _as_int(x):
    if isinstance(x, str):
        try:
            return int(x.strip())
        except ValueError:
            raise ValueError(f"group size must be an integer, got {x.strip()!r}") from None
    return x


def distributions(names: Iterable[str] | None, collective_name: str | None = None) -> list[str]:
    """Canonical distribution names.

    ``None`` means the distributions of the paper that studies `collective_name`
    (:func:`tuwviz.problems.default_distributions`), or all of them without a collective.
    """

    if names is None:
        return list(default_distributions(collective_name) if collective_name else DISTRIBUTIONS)
    return [normalize_distribution(n) for n in names]


_RELATIVE_ROOT = re.compile(r"p(?:/2|-(\d+))")


def parse_roots(text: str | Iterable) -> list[int | str]:
    """Parse roots: numbers (``"0,3"``, ranges ``"0-2"``) and roots relative to p,
    ``p/2`` and ``p-K`` (e.g. ``p-1``, the last rank), which :func:`roots_for` resolves
    for every p of a sweep.

    Examples
    --------
    >>> parse_roots("0,p-1")
    [0, 'p-1']
    >>> parse_roots("0-2,p/2")
    [0, 1, 2, 'p/2']
    >>> parse_roots("p+1")
    Traceback (most recent call last):
    ...
    ValueError: --roots: 'p+1' is not a root (give numbers, ranges like 0-2, p/2 or p-K)
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    out: list[int | str] = []
    for item in items:
        token = item.strip().replace(" ", "") if isinstance(item, str) else item
        if isinstance(token, str) and "p" in token:
            if not _RELATIVE_ROOT.fullmatch(token) or token == "p-0":
                raise ValueError(f"--roots: {token!r} is not a root (give numbers, ranges "
                                 f"like 0-2, p/2 or p-K)")
            out.append(token)
        elif isinstance(token, str):
            out += parse_int_list(token, name="--roots", lo=0)
        else:
            out += int_values("--roots", [token], lo=0)
    if not out:
        raise ValueError("--roots: empty selection")
    return out


def roots_for(collective_name: str, p: int, roots: Iterable[int | str] | None = None) -> list[int]:
    """Roots to test: 0, p/2 and p-1 for rooted collectives (just 0 otherwise); or the
    given `roots`, numbers or ``p/2`` and ``p-K`` (see :func:`parse_roots`), each once.

    Raises
    ------
    ValueError
        If a given root is outside ``0..p-1``.

    Examples
    --------
    >>> roots_for("gatherv", 8), roots_for("gatherv", 8, [0, "p-1"]), roots_for("allgather", 8)
    ([0, 4, 7], [0, 7], [0])
    """
    if not collective(collective_name).rooted:
        return [0]
    if roots is None:
        return sorted({0, p // 2, p - 1})
    out = []
    for spec in roots:
        if isinstance(spec, str):
            k = _RELATIVE_ROOT.fullmatch(spec)
            if k is None:
                raise ValueError(f"root {spec!r} is not a number, p/2 or p-K")
            r = p // 2 if k.group(1) is None else p - int(k.group(1))
        else:
            r = spec
        if not 0 <= r < p:
            named = f"{spec} = {r}" if isinstance(spec, str) else str(r)
            raise ValueError(f"root {named} out of range 0..{p - 1} for p={p}")
        if r not in out:
            out.append(r)
    return out
