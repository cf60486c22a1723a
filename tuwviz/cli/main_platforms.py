"""``tuwviz platforms``: the papers' machines that SimGrid's SMPI simulates, and this one's.

``tuwviz platforms`` lists them, ``tuwviz platforms NAME`` shows one with the sources of its
numbers (``--xml``: the SimGrid file), ``tuwviz platform calibrate`` writes a platform of
this machine from ``tuwviz calibrate``'s alpha and beta, so simulated runs can be checked
against real ones here, and ``tuwviz platform check NAME`` sets the node-aware model beside
SMPI on it (:func:`tuwviz.experiments.crosscheck.model_vs_smpi`).
"""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import textwrap
from pathlib import Path

from .options import json_option, np_list

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``platforms`` subcommand's options (also reachable as ``platform``)."""
    sp = sub.add_parser(
        "platforms", aliases=["platform"],
        help="the papers' machines for simulated runs (--backend smpi); calibrate this one",
        description="List the platforms SimGrid's SMPI simulates for 'tuwviz verify|bench "
                    "--backend smpi --platform NAME': the papers' clusters, nodes x cores, "
                    "latency and bandwidth between and inside nodes, one network port per node. "
                    "'tuwviz platforms NAME' shows one with the sources of its numbers; "
                    "'tuwviz platform calibrate --out FILE' writes a platform of this machine "
                    "from 'tuwviz calibrate' (measured now unless cached), for --platform FILE; "
                    "'tuwviz platform check NAME --np P' runs every modelled algorithm under "
                    "SMPI on P ranks of NAME and prints its time beside the node-aware model's "
                    "('tuwviz model --platform NAME').",
    )
    sp.add_argument("name", nargs="?", metavar="NAME|calibrate|check",
                    help="a platform to show (or a platform .toml file), 'calibrate', or "
                         "'check' followed by a platform")
    sp.add_argument("target", nargs="?", metavar="PLATFORM", help="check: the platform")
    sp.add_argument("--xml", action="store_true", help="with NAME: print its SimGrid platform file")
    sp.add_argument("--np", help="calibrate: ranks of the calibration (default 2); the platform "
                                 "gets that many cores on one node. check: ranks (default 64)")
    sp.add_argument("--b", type=int, default=None,
                    help="check: block size in ints of every rank (default 1000)")
    sp.add_argument("--dist", default=None, help="check: the distribution (default same)")
    sp.add_argument("--ppn", type=int, default=None, metavar="N",
                    help="check: N processes per node (default: one per core)")
    sp.add_argument("--selector", default=None, help="check: SMPI's selector (default mpich)")
    sp.add_argument("--out", help="calibrate: the platform file to write (.toml)")
    sp.add_argument("--force", action="store_true", help="calibrate: measure even if cached")
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..platforms import platform, platforms, simgrid_xml
    from ..report import text_table

    if args.name == "check":
        return _check(args)
    for option in ("target", "b", "dist", "ppn", "selector"):
        if getattr(args, option) is not None:
            raise ValueError(f"{'the second name' if option == 'target' else '--' + option} "
                             f"is for 'tuwviz platform check NAME'")
    if args.name == "calibrate":
        return _calibrate(args)
    for option in ("np", "out", "force"):
        if getattr(args, option):
            raise ValueError(f"--{option} is for 'tuwviz platform calibrate'")
    if args.name is None:
        if args.xml:
            raise ValueError("--xml needs a platform NAME")
        found = platforms()
        if args.json:
            print(json.dumps([vars(p) for p in found.values()], indent=2))
            return 0
        print(text_table([{"name": p.name, "paper": p.paper, "nodes x cores": f"{p.nodes} x {p.cores}",
                           "between nodes": f"{p.inter_latency * 1e6:g} us, {p.inter_bandwidth / 1e9:g} GB/s",
                           "inside a node": f"{p.intra_latency * 1e6:g} us, {p.intra_bandwidth / 1e9:g} GB/s",
                           "per message": f"{p.overhead * 1e6:g} us" if p.overhead else "-"}
                          for p in found.values()]))
        print("details and sources: tuwviz platforms NAME; use: tuwviz verify --platform NAME")
        return 0
    plat = platform(args.name)
    if args.xml:
        print(simgrid_xml(plat), end="")
        return 0
    if args.json:
        print(json.dumps(vars(plat), indent=2))
        return 0
    print(f"{plat.title}\n{plat.describe()}\nnetwork model: {plat.network_model}; one full-duplex "
          f"port per node, a non-blocking switch")
    print(textwrap.fill(plat.source, width=92))
    return 0


def _check(args) -> int:
    from ..experiments.crosscheck import TOLERANCE, model_vs_smpi
    from ..platforms import platform
    from ..report import text_table
    from ..run.smpi import DEFAULT_SELECTOR, smpi_backend

    if args.target is None:
        raise ValueError("tuwviz platform check needs a platform: tuwviz platform check NAME")
    for option in ("out", "force", "xml"):
        if getattr(args, option):
            raise ValueError(f"--{option} is not for 'tuwviz platform check'")
    plat = platform(args.target)
    backend = smpi_backend(plat, args.selector or DEFAULT_SELECTOR, ppn=args.ppn)
    (p,) = np_list(args.np or "64", backend=backend)
    b = 1000 if args.b is None else args.b
    if b < 0:
        raise ValueError(f"--b must be at least 0, got {b}")
    df = model_vs_smpi(plat, p, b, args.dist or "same", ppn=args.ppn,
                       selector=args.selector or DEFAULT_SELECTOR)
    if args.json:
        print(df.to_json(orient="records", indent=2))
        return 0
    cols = ["collective", "algorithm", "smpi_us", "model_us", "flat_model_us",
            "model_over_smpi", "within"]
    print(text_table(df[cols].to_dict("records")))
    inside = int(df["within"].sum())
    print(f"{inside} of {len(df)} algorithms: the node-aware model within {TOLERANCE:.0%} of "
          f"SMPI (simulated, {df['platform'].iloc[0]}, p = {p}, {args.dist or 'same'}, b = {b}); "
          f"flat_model_us: the model without nodes. Where they differ: "
          f"help(tuwviz.experiments.crosscheck.model_vs_smpi)")
    return 0


def _calibrate(args) -> int:
    from ..experiments.calibrate import calibrate, load
    from ..platforms import Platform, to_toml

    if not args.out:
        raise ValueError("tuwviz platform calibrate needs --out FILE.toml (where to write it)")
    out = Path(args.out)
    if out.suffix != ".toml":
        raise ValueError(f"--out {out}: a platform file ends in .toml")
    if out.is_dir() or not out.parent.is_dir():
        raise ValueError(f"--out {out}: not a file in an existing folder")
    (ranks,) = np_list(args.np) if args.np is not None else [2]
    if ranks < 2:
        raise ValueError("--np: calibrating needs at least 2 ranks")
    cal = (None if args.force else load(ranks)) or calibrate(ranks, force=True, progress=False)
    over = ", oversubscribed" if cal.oversubscribed else ""
    plat = Platform(
        name=out.stem.replace(" ", "-"),
        title=f"this machine: {cal.host}, {ranks} ranks on {cal.cores} cores{over}",
        paper="", nodes=1, cores=ranks,
        inter_latency=cal.alpha, inter_bandwidth=1.0 / cal.beta,
        intra_latency=cal.alpha, intra_bandwidth=1.0 / cal.beta,
        source=(f"Measured by tuwviz calibrate on {cal.date or 'an unknown date'} with "
                f"{cal.mpi_library.splitlines()[0] if cal.mpi_library else 'MPI'}: alpha "
                f"{cal.alpha * 1e6:.3g} us (ring rounds), beta {cal.beta * 1e9:.3g} ns/B "
                f"(ping-pong). One node: every message is inside it, so the numbers between "
                f"nodes are the same."))
    out.write_text(to_toml(plat), encoding="utf-8")
    print(f"wrote {out}: {plat.describe()}")
    print(f"use: tuwviz verify --platform {out} --np {ranks}; tuwviz bench ... --platform {out}")
    return 0
