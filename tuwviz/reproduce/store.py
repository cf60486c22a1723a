"""Where a reproduction keeps its results: one JSON file per finished claim, tidy CSVs.

Layout under the output folder::

    report.html                 the page (tuwviz.reproduce.page)
    summary.csv                 one row per claim: paper, claim, title, source, verdict, reason
    values.csv                  one row per value: paper, claim, quantity, source, value, ...
    <paper>/findings/<id>.json  a finished claim: its key and its finding
    <paper>/*.csv               the raw rows of the runs behind the findings (bench rows)

A finding is written the moment its claim finishes, so an interrupted run keeps what it
did; a later run reuses a finding whose key (scale, the claim's published data, the
code that checks it, the tuwviz version) is unchanged.

Examples
--------
>>> import tempfile
>>> from tuwviz.reproduce.claims import Finding, REPRODUCED
>>> with tempfile.TemporaryDirectory() as d:
...     st = Store(d)
...     st.save("allgatherv", "headline", {"scale": "quick"}, Finding(REPRODUCED, "same"), 1.5)
...     print(st.load("allgatherv", "headline", {"scale": "quick"})[0].verdict,
...           st.load("allgatherv", "headline", {"scale": "paper"}))
reproduced None
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from ..errors import OutputPathError
from .claims import Finding

__all__ = ["Store", "outcome"]

SUMMARY_FIELDS = ["paper", "claim", "title", "source", "scale", "verdict", "reason", "wall_s"]
VALUE_FIELDS = ["paper", "claim", "quantity", "source", "value", "unit", "where", "verdict"]


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

    def load(self, paper: str, cid: str, key: dict) -> tuple[Finding, float] | None:
        """The stored finding and the seconds it took, if its key equals `key`; else None."""
        path = self._path(paper, cid)
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            if d.get("key") != key:
                return None
            return Finding.from_dict(d["finding"]), float(d["wall_s"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing, partly written or from another version: run again

    def save(self, paper: str, cid: str, key: dict, finding: Finding, wall_s: float) -> None:
        """Write a finding atomically (a crash leaves the old file or the new one)."""
        path = self._path(paper, cid)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"key": key, "finding": finding.to_dict(),
                                   "wall_s": round(wall_s, 2)}, indent=1, default=str),
                       encoding="utf-8")
        os.replace(tmp, path)

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
                             "reason": f.reason if f else r.get("error", ""),
                             "wall_s": round(r.get("wall_s", 0.0), 2)})
                for v in (f.values if f else []):
                    wv.writerow({"paper": r["paper"], "claim": r["claim"],
                                 "quantity": v.quantity, "source": v.source, "value": v.value,
                                 "unit": v.unit, "where": v.where, "verdict": f.verdict})
        return summary, values
