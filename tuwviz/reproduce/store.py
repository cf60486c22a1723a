"""Where a reproduction keeps its results: one JSON file per finished claim, tidy CSVs.

Layout under the output folder::

    report.html                 the page (tuwviz.reproduce.page)
    summary.csv                 one row per claim: paper, claim, title, source, verdict, reason
    values.csv                  one row per value: paper, claim, quantity, source, value, ...
    <paper>/findings/<id>.json  a finished claim: its key and its finding
    <paper>/*.csv               the raw rows of the runs behind the findings (bench rows)

A finding is written the moment its claim finishes, so an interrupted run keeps what it
did; a later run reuses a finding only while everything it ran through is unchanged: its
key holds the scale, the claim's published data, a digest of the package's sources and
``kernels_c/`` (:func:`source_digest`; the platforms and the judging code are among them),
SimGrid's version and tuwviz's.  The file also keeps when the finding was made and the
evidence it was judged on.

Examples
--------
>>> import tempfile
>>> from tuwviz.reproduce.claims import Finding, REPRODUCED
>>> with tempfile.TemporaryDirectory() as d:
...     st = Store(d)
...     made = st.save("allgatherv", "headline", {"scale": "quick"}, Finding(REPRODUCED, "same"), 1.5)
...     print(st.load("allgatherv", "headline", {"scale": "quick"})[0].verdict,
...           st.load("allgatherv", "headline", {"scale": "paper"}))
reproduced None
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import time
from pathlib import Path

from ..errors import OutputPathError
from .claims import Finding

__all__ = ["Store", "outcome", "source_digest"]

#: ``latencies_x0.5`` and ``latencies_x2``: the verdict again with the platform's assumed
#: latencies and overhead halved and doubled (empty for a claim that reads no platform).
SUMMARY_FIELDS = ["paper", "claim", "title", "source", "scale", "verdict", "reason",
                  "latencies_x0.5", "latencies_x2", "wall_s"]
VALUE_FIELDS = ["paper", "claim", "quantity", "source", "value", "unit", "where", "verdict"]


#: Files under a source root that are not sources (caches, editor and build leftovers).
_NOT_SOURCES = ("__pycache__", ".pyc", ".o", ".so", ".swp", "~")


def source_digest(roots) -> str:
    """A digest of every source file under `roots` (paths and contents, in sorted order):
    it changes when any file is edited, added, removed or renamed.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = pathlib.Path(d, "a.py"); _ = f.write_text("x = 1")
    ...     before = source_digest([d]); _ = f.write_text("x = 2")
    ...     before != source_digest([d])
    True
    """
    h = hashlib.sha256()
    for root in map(Path, roots):
        files = sorted(f for f in root.rglob("*") if f.is_file() and not any(
            part.endswith(_NOT_SOURCES) for part in f.relative_to(root).parts))
        for f in files:
            h.update(f"{root.name}/{f.relative_to(root).as_posix()}\0".encode())
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()[:16]


def outcome(result: dict) -> str:
    """A result row's verdict, or its status (``failed``, ``not run``) without a finding.

    >>> outcome({"finding": None, "status": "failed"})
    'failed'
    """
    f = result["finding"]
    return f.verdict if f is not None else result.get("status", "not run")


class Store:
    """An output folder of a reproduction (created if missing).

    Raises
    ------
    OutputPathError
        If the folder cannot be created or written.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            probe = self.root / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise OutputPathError(f"{self.root}: cannot write there: "
                                  f"{exc.strerror or exc}") from None

    def paper_dir(self, paper: str) -> Path:
        """The folder of a paper's raw rows and findings."""
        d = self.root / paper / "findings"
        d.mkdir(parents=True, exist_ok=True)
        return d.parent

    def _path(self, paper: str, cid: str) -> Path:
        return self.paper_dir(paper) / "findings" / f"{cid}.json"

    def load(self, paper: str, cid: str, key: dict) -> tuple[Finding, float, str] | None:
        """The stored finding, the seconds it took and when it was made (UTC, ISO), if its
        key equals `key`; else None."""
        path = self._path(paper, cid)
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            if d.get("key") != key:
                return None
            return Finding.from_dict(d["finding"]), float(d["wall_s"]), str(d.get("made", ""))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing, partly written or from another version: run again

    def save(self, paper: str, cid: str, key: dict, finding: Finding, wall_s: float,
             evidence: dict | None = None) -> str:
        """Write a finding (with its key, the evidence it was judged on and when it was
        made) atomically: a crash leaves the old file or the new one.  Returns when (UTC)."""
        path = self._path(paper, cid)
        tmp = path.with_suffix(".json.tmp")
        made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        tmp.write_text(json.dumps({"key": key, "made": made, "finding": finding.to_dict(),
                                   "evidence": evidence, "wall_s": round(wall_s, 2)},
                                  indent=1, default=str),
                       encoding="utf-8")
        os.replace(tmp, path)
        return made

    def write_csvs(self, results: list[dict]) -> tuple[Path, Path]:
        """``summary.csv`` and ``values.csv`` of `results` (dicts with ``paper``, ``claim``,
        ``title``, ``source``, ``scale``, ``finding``, ``wall_s``; claims not run have
        finding None)."""
        summary, values = self.root / "summary.csv", self.root / "values.csv"
        with open(summary, "w", newline="", encoding="utf-8") as fs, \
                open(values, "w", newline="", encoding="utf-8") as fv:
            ws = csv.DictWriter(fs, SUMMARY_FIELDS)
            wv = csv.DictWriter(fv, VALUE_FIELDS)
            ws.writeheader()
            wv.writeheader()
            for r in results:
                f = r["finding"]
                ws.writerow({"paper": r["paper"], "claim": r["claim"], "title": r["title"],
                             "source": r["source"], "scale": r["scale"], "verdict": outcome(r),
                             **{f"latencies_x{k}": v for k, v in (f.varied if f else {}).items()},
                             "reason": f.reason if f else r.get("error", ""),
                             "wall_s": round(r.get("wall_s", 0.0), 2)})
                for v in (f.values if f else []):
                    wv.writerow({"paper": r["paper"], "claim": r["claim"],
                                 "quantity": v.quantity, "source": v.source, "value": v.value,
                                 "unit": v.unit, "where": v.where, "verdict": f.verdict})
        return summary, values
