"""``tuwviz calibrate``: this machine's alpha, beta, gamma, measured on MPI ranks and cached."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import shutil
import textwrap

from .options import int_type, json_option, launcher_backend, launcher_option, np_list

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``calibrate`` subcommand's options."""
    sp = sub.add_parser(
        "calibrate", help="measure this machine's alpha, beta, gamma on MPI ranks; cache them",
        description="Measure the cost model on real MPI ranks: alpha (start-up per message) "
                    "from rounds of a ring, every rank sending to the next at once (the "
                    "one-ported model's round, which Eq. (2) counts), and beta (time per byte) "
                    "from a ping-pong of two ranks, each over 8 B to 4 MiB; gamma by timing MPI_Reduce_local (sum) and memcpy on every rank. "
                    "One calibration per layout (host, cores, MPI library, ranks), cached in "
                    "$TUWVIZ_CACHE or ~/.cache/tuwviz; a cached layout is shown, not measured "
                    "again (--force). 'tuwviz bench' then gives the pipelined ring's block size "
                    "(Eq. (2)) these values for the same ranks, and 'tuwviz model --calibrated' "
                    "predicts with them.",
    )
    sp.add_argument("--np", help="ranks, e.g. 2 or 2,8 (default: the cores, at least 2); more "
                                 "ranks than cores is an oversubscribed layout of its own")
    sp.add_argument("--force", action="store_true", help="measure even if cached")
    sp.add_argument("--list", action="store_true",
                    help="show every cached calibration of this machine; measure nothing")
    sp.add_argument("--reps", type=int_type(10), default=200,
                    help="ping-pong repetitions per small size (default 200; large sizes fewer)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    launcher_option(sp)
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..experiments.calibrate import calibrate, load, load_all, local_layout
    from ..run.engines import free_cores
    from ..report import text_table

    if args.list:
        if args.np is not None or args.force:
            raise ValueError("--list shows the cache; leave out --np and --force")
        every = load_all(local_layout(2))
        if args.json:
            print(json.dumps([c.to_dict() for c in every], indent=2))
            return 0
        if not every:
            print("no calibration cached for this machine; run 'tuwviz calibrate'")
            return 0
        for c in every:
            text = c.summary().replace("\n", "\n" + " " * 12)
            print(f"{c.ranks:>4} ranks: {text}\n            {c.path}")
        return 0
    ranks = np_list(args.np) if args.np is not None else [max(2, free_cores())]
    small = [n for n in ranks if n < 2]
    if small:
        raise ValueError(f"--np {small[0]}: calibrating needs at least 2 ranks (alpha and beta "
                         f"are the costs of messages between them)")
    backend = launcher_backend(args)  # srun: other nodes, never this machine's cache entry
    results = []
    for n in ranks:
        cached = None if args.force or backend is not None else load(n)
        cal = cached or calibrate(n, reps=args.reps, force=True, backend=backend,
                                  progress=not args.no_progress and not args.json)
        results.append((cal, cached is not None))
    if args.json:
        print(json.dumps([{**c.to_dict(), "path": c.path, "cached": hit} for c, hit in results],
                         indent=2))
        return 0
    width = shutil.get_terminal_size((100, 24)).columns
    for cal, hit in results:
        print(f"{cal.ranks} ranks: one ring round (every rank sends to the next, all at once), "
              f"one message of a ping-pong between ranks 0 and 1, and the model's alpha + beta "
              f"m, in us:")
        print(text_table([{k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in r.items()}
                          for r in cal.table()]))
        print(cal.summary())
        print(textwrap.fill(
            f"Eq. (2) block size for a 4 MiB broadcast (allgatherv, one process has data) on "
            f"{cal.ranks} ranks: {_eq2_text(cal)}", width))
        how = (f"from the cache, {cal.path} ('--force' measures again)" if hit
               else f"saved to {cal.path}")
        print(f"{how}\n")
    return 0


def _eq2_text(cal) -> str:
    """Eq. (2)'s B for a 4 MiB broadcast with `cal` and with the C defaults, in words."""
    from ..model.topology.ring import allgatherv_block_elems
    from ..params import DEFAULT_ALPHA, DEFAULT_BETA

    p = max(cal.ranks, 3)
    counts = [4 << 20] + [0] * (p - 1)

    def kib(alpha, beta):
        return allgatherv_block_elems(p, counts, 1, 0, alpha, beta) / 1024

    return (f"B = {kib(cal.alpha, cal.beta):,.1f} KiB calibrated, "
            f"{kib(DEFAULT_ALPHA, DEFAULT_BETA):,.1f} KiB with the defaults (1 us, 1 ns/B)"
            + (" (p = 3: Eq. (2) needs D > 0)" if cal.ranks < 3 else ""))
