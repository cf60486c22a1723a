"""Every kernel against the MPI library on regular problems: median / native, one run.

For each collective, every algorithm of the table that runs on one communicator (the
library's ``native`` included) is timed side by side with ``tuwviz.bench`` on regular
problems (every block b elements) at b = 1, 100, 10^4, 10^6, on 2 ranks and on 8 ranks,
the algorithms taking turns in rounds (``rounds``).  It prints, per collective and rank
count, the median time of each algorithm divided by the library's (below 1: faster), and
says whether the ranks were oversubscribed (more ranks than cores).  Rows are appended to
the CSV given with ``--out`` as they are measured.

Run::

    python benchmarks/ratios.py                       # 2 and 8 ranks, 20 repetitions
    python benchmarks/ratios.py --np 2 --reps 50 --collectives gatherv,scatterv
    python benchmarks/ratios.py --out build/ratios.csv

A benchmark, not a test: it asserts nothing; the numbers depend on the machine and its
load (the load average is printed with them).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# This checkout's tuwviz, also when another one is installed in the environment.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tuwviz.experiments.bench import bench  # noqa: E402
from tuwviz.collectives import COLLECTIVES  # noqa: E402
from tuwviz.kernels import algorithms  # noqa: E402
from tuwviz.problems import default_distributions, default_op, make_problem  # noqa: E402

SIZES = [1, 100, 10_000, 1_000_000]


def runnable(collective: str, p: int) -> list[str]:
    """The table's one-communicator algorithms of `collective` that take p ranks."""
    names = []
    for row in algorithms():
        if row.collective != collective or row.comm == "inter":  # native: "any"
            continue
        try:
            row.check_problem(p, default_op("int"))
        except ValueError:
            continue
        names.append(row.name)
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", default="2,8", help="rank counts (default 2,8)")
    ap.add_argument("--b", default=",".join(map(str, SIZES)),
                    help="block sizes b in elements (default 1,100,10000,1000000)")
    ap.add_argument("--collectives", help="comma-separated (default: every collective)")
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up calls (default 3)")
    ap.add_argument("--out", help="CSV to append the rows to as they are measured")
    args = ap.parse_args(argv)
    ps = [int(x) for x in args.np.split(",")]
    bs = [int(x) for x in args.b.split(",")]
    chosen = args.collectives.split(",") if args.collectives else list(COLLECTIVES)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    started = time.monotonic()
    for coll in chosen:
        dist = default_distributions(coll)[0]  # regular: every block b elements
        for p in ps:
            names = runnable(coll, p)
            if len(names) < 2 or "native" not in names:
                continue
            try:
                make_problem(coll, p, dist, bs[0])
            except ValueError as exc:
                print(f"{coll} p={p}: skipped ({exc})")
                continue
            df = bench(coll, names, ps=[p], dists=[dist], bs=bs, reps=args.reps,
                       warmup=args.warmup, out=args.out, progress=False)
            table = df.pivot_table(index="algorithm", columns="b", values="ratio_to_native",
                                   sort=False)
            over = "oversubscribed" if df["oversubscribed"].iloc[0] else "not oversubscribed"
            print(f"\n{coll}, {dist}, p = {p} ({over}): median / native")
            print(table.map(lambda v: f"{v:.2f}").to_string())
    print(f"\n{time.monotonic() - started:.0f} s, load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
