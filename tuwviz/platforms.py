"""The papers' machines as data: nodes, cores, and the costs of messages inside and between nodes.

Each platform of ``platforms.toml`` (shipped with the package) is a cluster of ``nodes``
nodes with ``cores`` cores, one port per node (a full-duplex link that all of the node's
processes share) and a non-blocking switch between the nodes.  :func:`simgrid_xml` turns
one into a SimGrid platform file, :func:`hostfile` places ranks on its nodes (block by
block, as ``mpiexec`` fills nodes), so SimGrid's SMPI (:mod:`tuwviz.run.smpi`) runs the C
kernels on it; the same numbers are meant for the node-aware model.

A user's own platform is a TOML file with one ``[platform.NAME]`` table of the same keys
(``tuwviz platform calibrate`` writes one for this machine); pass its path wherever a
platform name is asked for.

Examples
--------
>>> gv = platform("gatherv-ib36")
>>> gv.nodes, gv.cores, gv.size
(36, 16, 576)
>>> hostfile(gv, 18)[15:18]
['node-0', 'node-1', 'node-1']
>>> platform("jupyter")
Traceback (most recent call last):
...
ValueError: unknown platform 'jupyter'; valid: anl-gige, bgp, cori, gatherv-ib36, hydra, irene, sicortex, sx8, theta, vsc3, xeon-ib16x2 (or the path of a platform .toml file)
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["PLATFORMS_FILE", "NETWORK_MODELS", "Platform", "hostfile", "platform", "platforms",
           "simgrid_xml", "to_toml"]

#: The papers' platforms, shipped with the package.
PLATFORMS_FILE = Path(__file__).resolve().parent / "platforms.toml"

#: SimGrid network models a platform may ask for.  ``CM02``: a message costs exactly
#: latency + bytes / bandwidth on a free link (links shared fairly), so the file's numbers
#: mean what they say; ``SMPI``: SimGrid's default, whose piecewise factors were fitted to
#: one real cluster's MPI and scale the file's numbers by message size.
NETWORK_MODELS = ("CM02", "SMPI")

_KEYS = {"title": str, "paper": str, "nodes": int, "cores": int, "inter_latency": float,
         "inter_bandwidth": float, "intra_latency": float, "intra_bandwidth": float,
         "source": str, "network_model": str, "overhead": float}
_OPTIONAL = {"paper": "", "source": "", "network_model": "CM02", "overhead": 0.0}


@dataclass(frozen=True)
class Platform:
    """A cluster of `nodes` x `cores`, with per-message latency (s) and bandwidth (B/s)
    between nodes (``inter_*``) and inside one (``intra_*``).

    `overhead` is the processor time (s) a process spends on each message it sends and on
    each it receives (LogP's o), which no link models: a root receiving p - 1 messages
    spends (p - 1) o on them however fast the network is.  0 leaves it out."""

    name: str
    title: str
    paper: str
    nodes: int
    cores: int
    inter_latency: float
    inter_bandwidth: float
    intra_latency: float
    intra_bandwidth: float
    source: str = ""
    network_model: str = "CM02"
    overhead: float = 0.0

    @property
    def cost(self) -> tuple[float, float]:
        """(alpha, beta) between nodes: seconds per message and per byte, for the cost
        model's defaults (the pipelined ring's Eq. (2))."""
        return self.inter_latency, 1.0 / self.inter_bandwidth

    @property
    def size(self) -> int:
        """Processes the platform holds, one per core."""
        return self.nodes * self.cores

    def latencies_times(self, factor: float) -> "Platform":
        """This platform with both latencies and the per-message overhead times `factor`,
        the bandwidths unchanged: start-ups weigh `factor` times as much against bytes.
        (Every number times one factor would only scale every time by it.)

        >>> p = platform("gatherv-ib36").latencies_times(2)
        >>> p.inter_latency, p.overhead, p.inter_bandwidth, p.name
        (3e-06, 2e-06, 3200000000.0, 'gatherv-ib36')
        """
        return replace(self, inter_latency=self.inter_latency * factor,
                       intra_latency=self.intra_latency * factor,
                       overhead=self.overhead * factor)

    def describe(self) -> str:
        """One line: name, shape, costs."""
        return (f"{self.name}: {self.nodes} x {self.cores} = {self.size:,} cores; between nodes "
                f"{self.inter_latency * 1e6:g} us, {self.inter_bandwidth / 1e9:g} GB/s; inside "
                f"{self.intra_latency * 1e6:g} us, {self.intra_bandwidth / 1e9:g} GB/s"
                + (f"; {self.overhead * 1e6:g} us per message sent or received"
                   if self.overhead else ""))


def _parse(name: str, entry: dict, where: str) -> Platform:
    unknown = sorted(set(entry) - set(_KEYS))
    missing = sorted(set(_KEYS) - set(entry) - set(_OPTIONAL))
    if unknown or missing:
        raise ValueError(f"{where}: platform {name!r}: "
                         + "; ".join(([f"unknown keys {', '.join(unknown)}"] if unknown else [])
                                     + ([f"missing {', '.join(missing)}"] if missing else [])))
    values = {**_OPTIONAL, **entry}
    for key, kind in _KEYS.items():
        v = values[key]
        ok = isinstance(v, kind) or (kind is float and isinstance(v, int))
        if not ok or isinstance(v, bool):
            raise ValueError(f"{where}: platform {name!r}: {key} must be a {kind.__name__}, "
                             f"got {v!r}")
    if values["nodes"] < 1 or values["cores"] < 1:
        raise ValueError(f"{where}: platform {name!r}: nodes and cores must be at least 1")
    for key in ("inter_latency", "intra_latency", "overhead"):
        if not values[key] >= 0:
            raise ValueError(f"{where}: platform {name!r}: {key} must be at least 0")
    for key in ("inter_bandwidth", "intra_bandwidth"):
        if not values[key] > 0:
            raise ValueError(f"{where}: platform {name!r}: {key} must be above 0")
    if values["network_model"] not in NETWORK_MODELS:
        raise ValueError(f"{where}: platform {name!r}: network_model must be one of "
                         f"{', '.join(NETWORK_MODELS)}")
    return Platform(name=name, **{k: (float(v) if _KEYS[k] is float else v)
                                  for k, v in values.items()})


def _load(path: Path) -> dict[str, Platform]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read platforms: {exc}") from None
    table = data.get("platform")
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{path}: no [platform.NAME] table")
    return {name: _parse(name, entry, str(path)) for name, entry in table.items()}


def platforms() -> dict[str, Platform]:
    """The shipped platforms by name (``platforms.toml``)."""
    return _load(PLATFORMS_FILE)


def platform(name: str | os.PathLike | Platform) -> Platform:
    """The platform `name`: a shipped one, or the path of a ``.toml`` file holding one.

    Raises
    ------
    ValueError
        For an unknown name (listing the valid ones) or a malformed file.
    """
    if isinstance(name, Platform):
        return name
    text = os.fspath(name)
    if text.endswith(".toml") or os.sep in text:
        found = _load(Path(text).expanduser())
        if len(found) != 1:
            raise ValueError(f"{text}: holds {len(found)} platforms ({', '.join(found)}); "
                             f"give a file with one")
        return next(iter(found.values()))
    known = platforms()
    if text not in known:
        raise ValueError(f"unknown platform {text!r}; valid: {', '.join(sorted(known))} "
                         f"(or the path of a platform .toml file)")
    return known[text]


def _host(i: int) -> str:
    return f"node-{i}"


def hostfile(plat: Platform, p: int, oversubscribe: bool = False,
             ppn: int | None = None) -> list[str]:
    """The host of each of `p` ranks: node 0's first, then node 1's, ...; `ppn` processes
    per node (default: as many as it has cores).  The allgatherv paper runs one process
    per node, so that every message crosses the network.

    >>> hostfile(platform("anl-gige"), 3, ppn=1)
    ['node-0', 'node-1', 'node-2']

    Raises
    ------
    ValueError
        If `p` exceeds the nodes times `ppn`, or `ppn` a node's cores, and `oversubscribe`
        is not set.
    """
    if p < 1:
        raise ValueError(f"p must be at least 1, got {p}")
    per = plat.cores if ppn is None else ppn
    if isinstance(per, bool) or not isinstance(per, int) or per < 1:
        raise ValueError(f"processes per node must be an integer of at least 1, got {ppn!r}")
    if per > plat.cores and not oversubscribe:
        raise ValueError(f"{per} processes per node exceed the {plat.cores} cores of each "
                         f"{plat.name} node; use fewer, or allow more than one process per "
                         f"core (oversubscribe)")
    if p > plat.nodes * per and not oversubscribe:
        shape = (f"{plat.nodes} x {plat.cores} = {plat.size} cores" if ppn is None else
                 f"{plat.nodes} nodes x {per} per node = {plat.nodes * per} processes")
        raise ValueError(f"{p} processes do not fit platform {plat.name} ({shape}); use fewer, "
                         f"or allow more than one process per core (oversubscribe)")
    return [_host((r // per) % plat.nodes) for r in range(p)]


def simgrid_xml(plat: Platform) -> str:
    """The platform as a SimGrid (version 4.1) platform file.

    One ``<cluster>``: each node a host with `cores` cores and a private full-duplex link
    to a non-blocking switch.  A message between nodes crosses two such links (the
    sender's and the receiver's), so each has half the platform's latency; messages inside
    a node use the node's loopback link.

    Examples
    --------
    >>> print(simgrid_xml(platform("gatherv-ib36")).splitlines()[5].strip())
    <cluster id="gatherv-ib36" prefix="node-" radical="0-35" suffix="" core="16" speed="1Gf"
    """
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {plat.title}
     generated by tuwviz.platforms (the numbers and their sources: tuwviz platforms {plat.name}) -->
<platform version="4.1">
  <cluster id="{plat.name}" prefix="node-" radical="0-{plat.nodes - 1}" suffix="" core="{plat.cores}" speed="1Gf"
           bw="{plat.inter_bandwidth!r}Bps" lat="{plat.inter_latency / 2!r}s" sharing_policy="SPLITDUPLEX"
           loopback_bw="{plat.intra_bandwidth!r}Bps" loopback_lat="{plat.intra_latency!r}s"/>
</platform>
"""


def to_toml(plat: Platform) -> str:
    """`plat` as a platform file of its own (``[platform.NAME]``), readable by :func:`platform`.

    Examples
    --------
    >>> here = Platform("here", "this machine", "", 1, 2, 1e-6, 1e9, 3e-7, 5e9, "measured")
    >>> print(to_toml(here).splitlines()[0])
    [platform.here]
    >>> _parse("here", tomllib.loads(to_toml(here))["platform"]["here"], "") == here
    True
    """
    # JSON's string escapes are valid in a TOML basic string, numbers' reprs are TOML too
    lines = [f"[platform.{plat.name}]"]
    lines += [f"{key} = {json.dumps(getattr(plat, key), ensure_ascii=False)}" for key in _KEYS]
    return "\n".join(lines) + "\n"
