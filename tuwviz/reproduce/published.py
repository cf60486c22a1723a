"""The papers' published numbers, as data files in the package, each cited.

One TOML file per paper in ``tuwviz/reproduce/data/``: ``[paper]`` (title, citation),
``[claims.ID]`` (one per table, figure or headline: ``title``, ``source`` (the table,
figure, equation or section), ``quote`` (the sentence, verbatim) and the numbers it states),
``[tables.NAME]`` (a published table: ``columns``, ``rows``, ``source``) and
``[[unchecked]]`` (each of the paper's quantitative statements no claim checks, with why:
see :data:`UNCHECKED`).  These are facts of the papers; the code that checks them is in
:mod:`tuwviz.reproduce.papers`.

Examples
--------
>>> pub = published("allgatherv")
>>> pub.claim("headline")["source"]
'Section 3.1'
>>> round(pub.claim("headline")["bound"], 2)
15.47
>>> pub.table("table1")  # doctest: +SKIP
>>> sorted({u["status"] for u in published("gatherv").unchecked()})
['in the tests', 'not here', 'not yet']
"""
from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import TuwvizError

__all__ = ["DATA_DIR", "PAPERS", "Published", "UNCHECKED", "published"]

#: Where the data files are.
DATA_DIR = Path(__file__).parent / "data"

#: Paper keys, in the order of ``../shared/papers`` (and of ``tuwviz reproduce all``).
PAPERS = ("gatherv", "allgatherv", "circulant", "intergroup", "course")

#: The ``status`` of a statement no claim checks, and what it means.
UNCHECKED = {
    "not yet": "tuwviz has what it takes (the reason says what); no claim checks it yet",
    "not here": "it needs a machine, a library or a measurement that nothing here has or "
                "simulates",
    "in the tests": "a property of an algorithm, not a measurement: the test named checks it "
                    "on every run of the test suite",
}
_UNCHECKED_KEYS = {"statement", "source", "status", "reason", "test"}


@dataclass(frozen=True)
class Published:
    """One paper's data file, read."""

    key: str
    data: dict
    path: Path

    @property
    def title(self) -> str:
        """The paper's title."""
        return self.data["paper"]["title"]

    @property
    def citation(self) -> str:
        """Authors, venue, year."""
        return self.data["paper"]["citation"]

    def claims(self) -> list[str]:
        """The claim ids, in file order."""
        return list(self.data.get("claims", {}))

    def claim(self, cid: str) -> dict:
        """A claim's entry (``title``, ``source``, ``quote`` and its numbers)."""
        try:
            return self.data["claims"][cid]
        except KeyError:
            raise TuwvizError(f"{self.path.name}: no claim {cid!r}; claims: "
                              f"{', '.join(self.claims())}") from None

    def table(self, name: str):
        """A published table as a DataFrame (its ``source`` etc. in ``.attrs``)."""
        import pandas as pd

        try:
            t = self.data["tables"][name]
        except KeyError:
            raise TuwvizError(f"{self.path.name}: no table {name!r}") from None
        df = pd.DataFrame(t["rows"], columns=t["columns"])
        df.attrs.update({k: v for k, v in t.items() if k not in ("rows", "columns")})
        return df

    def unchecked(self) -> list[dict]:
        """The paper's quantitative statements that no claim checks: each a dict with
        ``statement``, ``source``, ``status`` (a key of :data:`UNCHECKED`), ``reason`` and,
        for ``"in the tests"``, the ``test`` (``path::name``) that checks it.

        Raises
        ------
        TuwvizError
            Naming the file and the entry, for a missing or unknown key or status.
        """
        entries = self.data.get("unchecked", [])
        for i, u in enumerate(entries, 1):
            where = f"{self.path.name}: unchecked entry {i} ({str(u.get('source', '?'))!r})"
            unknown = sorted(set(u) - _UNCHECKED_KEYS)
            missing = [k for k in ("statement", "source", "status", "reason")
                       if not str(u.get(k, "")).strip()]
            if u.get("status") == "in the tests" and not u.get("test"):
                missing.append("test")
            if unknown or missing:
                raise TuwvizError(f"{where}: " + "; ".join(
                    ([f"unknown keys {', '.join(unknown)}"] if unknown else [])
                    + ([f"missing {', '.join(missing)}"] if missing else [])))
            if u["status"] not in UNCHECKED:
                raise TuwvizError(f"{where}: unknown status {u['status']!r}; valid: "
                                  f"{', '.join(UNCHECKED)}")
        return entries

    def digest(self, cid: str) -> str:
        """A hash of a claim's entry and the paper's tables: a cached finding is reused only
        while these are unchanged."""
        blob = json.dumps([self.data.get("claims", {}).get(cid), self.data.get("tables")],
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def published(paper: str, path: str | os.PathLike | None = None) -> Published:
    """Read a paper's data file (`path` overrides the package's, e.g. a test's copy).

    Raises
    ------
    TuwvizError
        For an unknown paper (the valid ones are listed) or a file without ``[paper]``.
    """
    if paper not in PAPERS:
        raise TuwvizError(f"unknown paper {paper!r}; valid: {', '.join(PAPERS)}")
    p = Path(path) if path is not None else DATA_DIR / f"{paper}.toml"
    try:
        with open(p, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise TuwvizError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TuwvizError(f"{p}: not valid TOML: {exc}") from None
    if "paper" not in data or "title" not in data["paper"]:
        raise TuwvizError(f"{p}: no [paper] title")
    return Published(paper, data, p)
