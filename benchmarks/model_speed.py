"""Speed of the alpha-beta model at paper scale: build and simulate times, one run.

Cases (issue 8; targets on a 2-core machine, build + simulate):

* ``gatherv/tuw``, spikes distribution, p = 65,536        target <= 2 s
* ``gatherv/tuw``, spikes distribution, p = 1,000,000     target <= 30 s
* ``allgatherv/pipelined``, spike (one rank has 1 MB), p = 1,024, B = 64 KB   target <= 5 s

Run::

    python benchmarks/model_speed.py            # all three
    python benchmarks/model_speed.py --quick    # p = 65,536 and the ring only
    python benchmarks/model_speed.py --profile  # cProfile's 25 most expensive calls too

Times are wall-clock seconds of this process (``time.perf_counter``); they depend on the
machine's load, so the load average is printed with them.  The targets are goals to watch,
not assertions: a slow machine prints a slow figure, it does not fail.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

# This checkout's tuwviz, also when another one is installed in the environment.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tuwviz import model  # noqa: E402
from tuwviz.params import DEFAULT_ALPHA, DEFAULT_BETA  # noqa: E402
from tuwviz.problems import Problem, make_problem  # noqa: E402

#: (label, collective, algorithm, problem factory, parameters, target seconds)
CASES = [
    ("gatherv/tuw spikes p=65,536", "gatherv", "tuw",
     lambda: make_problem("gatherv", 65_536, "spikes", b=100, datatype="byte"), {}, 2.0),
    ("gatherv/tuw spikes p=1,000,000", "gatherv", "tuw",
     lambda: make_problem("gatherv", 1_000_000, "spikes", b=100, datatype="byte"), {}, 30.0),
    ("allgatherv/pipelined spike 1 MB p=1,024 B=64 KB", "allgatherv", "pipelined",
     lambda: Problem("allgatherv", 1024, 0, tuple([1 << 20] + [0] * 1023), datatype="byte"),
     {"block_bytes": 65_536}, 5.0),
]


def run_case(label, collective, algorithm, factory, params, target, profile=False):
    problem = factory()
    prof = cProfile.Profile() if profile else None
    if prof:
        prof.enable()
    t0 = time.perf_counter()
    sched = model.schedule(collective, algorithm, problem, **params)
    t1 = time.perf_counter()
    result = model.simulate(sched, alpha=DEFAULT_ALPHA, beta=DEFAULT_BETA)
    t2 = time.perf_counter()
    if prof:
        prof.disable()
    total = t2 - t0
    verdict = "ok" if total <= target else "SLOWER than target"
    print(f"{label:<50} build {t1 - t0:7.2f} s  simulate {t2 - t1:7.2f} s  "
          f"total {total:7.2f} s  (target {target:g} s: {verdict}; "
          f"predicted {result.time * 1e6:,.1f} µs)", flush=True)
    if prof:
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(25)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true", help="skip p = 1,000,000")
    ap.add_argument("--profile", action="store_true", help="print a cProfile summary per case")
    args = ap.parse_args(argv)
    print(f"model speed on {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for case in CASES:
        if args.quick and "1,000,000" in case[0]:
            continue
        run_case(*case, profile=args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
