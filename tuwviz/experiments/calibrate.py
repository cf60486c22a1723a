"""Calibrate the alpha-beta-gamma cost model on this machine's MPI ranks, and cache it.

The model (:mod:`tuwviz.model`) and the pipelined ring's block size (Eq. (2) of Träff et
al. 2010, ``B = sqrt(m alpha / (beta D))``) need a start-up cost ``alpha`` per message, a
time ``beta`` per byte and, for reductions, a time ``gamma`` per element.  The C defaults
(1 µs, 1 ns/B) are a guess; :func:`calibrate` measures them on the ranks that will run:

* ``alpha``: every rank sends a message to its successor and receives one from its
  predecessor at the same time (``MPI_Sendrecv``), the smallest message's median (8 B).
  That is one round of a ring algorithm and the unit of the one-ported, bidirectional
  model, whose rounds Eq. (2) counts: the start-up of a round in which every process
  starts a message.  All ranks take part, so a layout with more ranks than cores gets its
  own, much larger, ``alpha``: a round there waits for every process to be scheduled.
* ``beta``: ranks 0 and 1 ping-pong while the others wait (OSU's ``osu_latency``), half a
  round trip per message; the least-squares slope over the sizes from 64 KiB up
  (:func:`fit_alpha_beta`).  The model's links are independent, so its time per byte is
  that of one transfer alone; when every rank moves megabytes at once (the ring sweep's
  slope, ``ring_beta``) they also share the memory bandwidth, which the model does not
  charge.  Both sweeps run over 8 B to 4 MiB (:data:`SIZES`), a repetition's time is the
  slowest rank's as in every tuwviz measurement, and the other two fits are kept for
  reference (``ring_beta``, ``pingpong_alpha``).
* ``gamma``: every rank at once times ``MPI_Reduce_local`` on 1 Mi elements of each
  datatype with its default operator (sum; bitwise or on bytes) (seconds per element, what :func:`tuwviz.model.simulate` takes), and a
  ``memcpy`` of 4 MiB (seconds per byte, for reference).

A calibration belongs to one *layout*: host, core count, MPI library and number of ranks
(oversubscription follows from the last two).  It is saved as JSON under
:func:`cache_dir` and reused: :func:`load` finds it; ``tuwviz calibrate`` measures or shows
it; ``tuwviz model --calibrated`` simulates with it; :func:`tuwviz.experiments.bench.bench` gives the
pipelined ring the calibrated ``alpha``/``beta`` for the ranks it runs on when the user
sets neither, so its default ``B`` fits this machine (rows show the values in ``params``).

Examples
--------
A machine with 5 µs start-up and 0.25 ns per byte; the fit recovers both:

>>> sizes = [8, 1024, 65536, 1 << 20, 4 << 20]
>>> one_way = [5e-6 + 0.25e-9 * s for s in sizes]
>>> a, b = fit_alpha_beta(sizes, one_way)
>>> f"{a * 1e6:.3f} us, {b * 1e9:.3f} ns/B"
'5.000 us, 0.250 ns/B'
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from .. import config
from ..kernels import mpi_library_version
from ..problems import default_op
from ..run.launch import check_ranks, run_mpiexec
from ..run.metadata import run_metadata

__all__ = ["Calibration", "SIZES", "cache_dir", "calibrate", "calibration_cases",
           "fit_alpha_beta", "layout_key", "load", "load_all", "local_layout"]

#: Message sizes of the ring-round and ping-pong sweeps, bytes.
SIZES: tuple[int, ...] = (8, 64, 512, 4096, 32768, 65536, 262144, 1 << 20, 4 << 20)
#: Sizes from here up are in the linear regime the slope ``beta`` is fitted on.
BETA_FROM = 65536
#: Elements per ``MPI_Reduce_local`` timing, bytes per ``memcpy`` timing.
REDUCE_COUNT = 1 << 20
COPY_BYTES = 4 << 20
#: Datatypes whose sum is timed (``gamma`` per element, by datatype).
GAMMA_DATATYPES = ("byte", "int", "double")


def cache_dir() -> Path:
    """Where calibrations are kept: ``$TUWVIZ_CACHE/calibration``, else
    ``$XDG_CACHE_HOME/tuwviz/calibration`` (``~/.cache/tuwviz/calibration``)."""
    return config.cache_dir() / "calibration"


def layout_key(host: str, cores: int, mpi_library: str, ranks: int) -> str:
    """File stem of a layout's calibration: readable host and ranks, plus a hash of all.

    >>> layout_key("node1", 2, "MPICH Version: 5.0.2", 8)[:14]
    'node1-8ranks-a'
    """
    text = json.dumps([host, int(cores), mpi_library, int(ranks)])
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in host)[:40]
    return f"{safe}-{int(ranks)}ranks-a{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def local_layout(ranks: int) -> dict:
    """This machine's layout for `ranks` ranks started here by mpiexec (the driver's view:
    no MPI is initialized)."""

    return {"host": socket.gethostname(), "cores": os.cpu_count() or 1,
            "mpi_library": mpi_library_version(), "ranks": int(ranks)}


@dataclass
class Calibration:
    """The cost model measured on one layout (see the module docstring).

    ``alpha`` seconds per message (a ring round's start-up), ``beta`` seconds per byte (the
    ping-pong's), ``gamma`` seconds per reduced element by datatype (sum, bor on bytes),
    ``copy`` seconds per copied byte; ``ring`` and ``pingpong`` the measured times per
    size (µs: a ring round, a one-way ping-pong message) behind the fits; ``ring_beta``
    and ``pingpong_alpha`` the sweeps' other fits, for reference.
    """

    alpha: float
    beta: float
    gamma: dict[str, float]
    copy: float
    host: str
    cores: int
    mpi_library: str
    ranks: int
    oversubscribed: bool
    heavy_yield: str = ""
    date: str = ""
    reps: int = 0
    ring: dict[int, float] = field(default_factory=dict)
    pingpong: dict[int, float] = field(default_factory=dict)
    ring_beta: float = 0.0
    pingpong_alpha: float = 0.0
    path: str = ""

    @property
    def key(self) -> str:
        return layout_key(self.host, self.cores, self.mpi_library, self.ranks)

    def gamma_for(self, datatype: str) -> float:
        """``gamma`` per element of `datatype` (the int one if that type was not timed)."""
        return self.gamma.get(datatype, self.gamma.get("int", 0.0))

    def where(self) -> str:
        """The layout in words, e.g. ``8 ranks on host (2 cores, oversubscribed)``."""
        over = ", oversubscribed" if self.oversubscribed else ""
        return f"{self.ranks} ranks on {self.host} ({self.cores} cores{over})"

    def summary(self) -> str:
        """Four short lines: the values, and where and when they were measured."""
        g = ", ".join(f"{t} {v * 1e9:.3g}" for t, v in self.gamma.items())
        return (f"alpha = {self.alpha * 1e6:.3g} us (a ring round's start-up), beta = "
                f"{self.beta * 1e9:.3g} ns/B (ping-pong, {1 / self.beta / 1e9:.3g} GB/s)\n"
                f"also fitted: ping-pong alpha {self.pingpong_alpha * 1e6:.3g} us, "
                f"ring beta {self.ring_beta * 1e9:.3g} ns/B (all ranks moving data at once)\n"
                f"gamma, ns per reduced element: {g}; memcpy {self.copy * 1e9:.3g} ns/B\n"
                f"measured on {self.where()}, {self.date}")

    def table(self) -> list[dict]:
        """Per size: a ring round and a ping-pong message as measured, and the model's
        ``alpha + beta m`` (µs)."""
        return [{"bytes": int(s), "ring_round_us": self.ring.get(s, float("nan")),
                 "pingpong_us": self.pingpong.get(s, float("nan")),
                 "model_us": (self.alpha + self.beta * s) * 1e6}
                for s in sorted(set(self.ring) | set(self.pingpong))]

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("path")
        for k in ("ring", "pingpong"):
            d[k] = {str(size): v for size, v in d[k].items()}
        return d

    @classmethod
    def from_dict(cls, d: dict, path: str = "") -> "Calibration":
        d = dict(d)
        for k in ("ring", "pingpong"):
            d[k] = {int(size): float(v) for size, v in d.get(k, {}).items()}
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known and k != "path"}, path=path)

    def save(self, directory: Path | None = None) -> Path:
        """Write to the cache (atomically: a reader never sees half a file)."""
        directory = Path(directory or cache_dir())
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.key}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        os.replace(tmp, path)
        self.path = str(path)
        return path


def fit_alpha_beta(sizes: Iterable[int], seconds: Iterable[float],
                   beta_from: int = BETA_FROM) -> tuple[float, float]:
    """``alpha`` and ``beta`` from message times (seconds) per size (bytes).

    ``beta`` is the least-squares slope over the sizes of at least `beta_from` bytes (at
    least two of them; else over all sizes), ``alpha`` the smallest size's time less
    ``beta`` times that size.  Both are kept positive (at least 1 ns and 1e-15 s/B), as
    Eq. (2) takes the square root of their ratio.
    """
    import numpy as np

    s = np.asarray(list(sizes), dtype=float)
    t = np.asarray(list(seconds), dtype=float)
    if len(s) < 2 or len(s) != len(t):
        raise ValueError("fitting alpha and beta needs times for at least two sizes")
    large = s >= beta_from
    if large.sum() < 2:
        large = np.ones_like(s, dtype=bool)
    beta = float(np.polyfit(s[large], t[large], 1)[0])
    beta = max(beta, 1e-15)
    i = int(np.argmin(s))
    alpha = max(float(t[i] - beta * s[i]), 1e-9)
    return alpha, beta


def _reps(nbytes: int, reps: int) -> int:
    # fewer repetitions of the large messages: each moves megabytes
    return max(20, min(reps, int(reps * (1 << 16) / max(nbytes, 1 << 16))))


def calibration_cases(ranks: int, reps: int = 200) -> list[dict]:
    """The runner cases of one calibration on `ranks` ranks (mode ``calibrate``)."""

    base = {"mode": "calibrate", "problem": {"p": int(ranks)}}
    cases = [{**base, "what": what, "bytes": s, "reps": _reps(s, reps), "warmup": 3}
             for what in ("ring", "pingpong") for s in SIZES]
    cases.append({**base, "what": "copy", "bytes": COPY_BYTES, "reps": max(10, reps // 10)})
    cases += [{**base, "what": "reduce", "count": REDUCE_COUNT, "datatype": t,
               "op": default_op(t), "reps": max(10, reps // 10)} for t in GAMMA_DATATYPES]
    return cases


def load(ranks: int, layout: dict | None = None) -> Calibration | None:
    """The cached calibration of `ranks` ranks on this machine (or `layout`), or None."""
    layout = layout or local_layout(ranks)
    path = cache_dir() / f"{layout_key(layout['host'], layout['cores'], layout['mpi_library'], ranks)}.json"
    if not path.is_file():
        return None
    try:
        return Calibration.from_dict(json.loads(path.read_text()), str(path))
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"calibration file {path} is damaged ({exc}); delete it or run "
                         f"'tuwviz calibrate --np {ranks} --force'") from exc


def load_all(layout: dict | None = None) -> list[Calibration]:
    """Every cached calibration (of this machine and MPI library if `layout` is given,
    e.g. :func:`local_layout`), fewest ranks first."""
    out = []
    for path in sorted(cache_dir().glob("*.json")):
        try:
            c = Calibration.from_dict(json.loads(path.read_text()), str(path))
        except (ValueError, TypeError, KeyError):
            continue  # a damaged file is reported by load() when it is asked for
        if layout is None or (c.host, c.cores, c.mpi_library) == (
                layout["host"], layout["cores"], layout["mpi_library"]):
            out.append(c)
    return sorted(out, key=lambda c: (c.ranks, c.date))


def calibrate(ranks: int = 2, *, reps: int = 200, force: bool = False, backend=None,
              progress: bool = True, save: bool = True) -> Calibration:
    """Measure ``alpha``, ``beta``, ``gamma`` on `ranks` ranks (or return the cached ones).

    Parameters
    ----------
    ranks : int
        Ranks to calibrate (the layout the values are for).
    reps : int
        Repetitions per small message size (large sizes use fewer, at least 20).
    force : bool
        Measure even if this layout is cached (and replace the cache).
    backend : callable, optional
        Where to run (:mod:`tuwviz.experiments.sweep`; a :class:`~tuwviz.run.engines.Engines`'s
        ``run_cases``); default: `ranks` fresh ranks under mpiexec.  A backend's ranks
        are cached under the hosts they report.
    progress : bool
        Show a progress bar.
    save : bool
        Write the result to the cache (:func:`cache_dir`).

    Returns
    -------
    Calibration
    """
    import numpy as np
    from tqdm.auto import tqdm

    check_ranks(int(ranks))
    if int(ranks) < 2:
        raise ValueError("calibrating needs at least 2 ranks: alpha and beta are the costs of "
                         "messages between them")
    reps = int(reps)
    if reps < 10:
        raise ValueError(f"reps must be at least 10, got {reps}")
    if not force:  # a remote backend's hosts differ from this one's: no hit, it measures
        cached = load(ranks)
        if cached is not None:
            return cached
    cases = calibration_cases(ranks, reps)
    results: dict[int, dict] = {}
    meta: dict = {}
    infos: list = []
    bar = tqdm(total=len(cases), desc=f"calibrate {ranks} ranks", disable=not progress,
               unit="part", mininterval=0.5)

    def on_start(rank_infos):
        infos[:] = rank_infos
        meta.update(run_metadata(rank_infos, "calibrate"))

    def on_result(i, case, result):
        results[i] = result
        bar.update()

    try:
        (backend or run_mpiexec)(int(ranks), cases, on_result, on_start=on_start)
    finally:
        bar.close()
    times: dict[str, dict[int, float]] = {"ring": {}, "pingpong": {}}
    for i, case in enumerate(cases):
        if case["what"] in times:  # medians, µs; a ping-pong message is half a round trip
            half = 2 if case["what"] == "pingpong" else 1
            times[case["what"]][case["bytes"]] = float(np.median(results[i]["samples_us"])) / half
    (alpha, ring_beta), (pp_alpha, beta) = (
        fit_alpha_beta(list(t), [x * 1e-6 for x in t.values()]) for t in times.values())
    med = {i: float(np.median(r["samples_us"])) * 1e-6 for i, r in results.items()}
    gamma = {c["datatype"]: med[i] / c["count"] for i, c in enumerate(cases) if c["what"] == "reduce"}
    copy = next(med[i] / c["bytes"] for i, c in enumerate(cases) if c["what"] == "copy")
    first = infos[0] if infos else {}
    host = meta.get("hosts") or socket.gethostname()
    cal = Calibration(
        alpha=alpha, beta=beta, gamma=gamma, copy=copy, host=host,
        cores=int(first.get("cores") or os.cpu_count() or 1),
        mpi_library=meta.get("mpi_library", ""), ranks=int(ranks),
        oversubscribed=bool(meta.get("oversubscribed")), heavy_yield=meta.get("heavy_yield", ""),
        date=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), reps=reps,
        ring=times["ring"], pingpong=times["pingpong"], ring_beta=ring_beta,
        pingpong_alpha=pp_alpha)
    if save:
        cal.save()
    return cal
