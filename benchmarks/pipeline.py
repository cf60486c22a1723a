"""Does the pipelined ring's default block size beat the plain ring where the paper says?

The allgatherv paper's Broadcast problem (one process has all m bytes) is where pipelining
pays: the linear ring needs p - 1 rounds of m bytes, the pipelined ring about m/B + p - 2
rounds of B bytes.  Its default B is Eq. (2), sqrt(m alpha / (beta (p - 2))), so it is only
as good as alpha and beta.  This script, in one invocation on this machine:

1. calibrates alpha, beta on the ranks it measures on (``tuwviz calibrate``; cached);
2. times, side by side in rounds, the library's MPI_Allgatherv, the linear ring, the
   pipelined ring with its default B (Eq. (2) from the calibration, as ``tuwviz bench``
   gives it), and the pipelined ring with the B that Eq. (2) gives with the C defaults
   alpha = 1 us, beta = 1 ns/B (what it used before calibration);
3. prints each median against the library's and the ring's, per run (``--runs``), and
   whether the target holds: the pipelined ring with its default B is faster than the
   linear ring in every run ("met"), in some ("at par": within this machine's run-to-run
   spread), or in none ("NOT met");
4. prints what the alpha-beta model predicts for the same problem, labelled as model: with
   the calibrated alpha, beta and B (where the measurement should land), and with the
   alpha of 2 ranks on cores of their own (``calibrate(2)``) and its Eq. (2) B, i.e. what
   the pipeline gains where ranks do not wait for a CPU.  Oversubscribed ranks have an
   alpha of hundreds of microseconds, and Eq. (1)'s extra m/B - 1 rounds then eat most of
   the gain: the model itself predicts little more than a tie there.

Run::

    python benchmarks/pipeline.py                  # 8 ranks, 4 MiB (2^20 ints), 3 runs of 30 reps
    python benchmarks/pipeline.py --np 4 --b 262144 --runs 5 --recalibrate

A benchmark, not a test: the times depend on the machine and its load (printed).  Exit
status 0 if the target is met in every run, else 1.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# This checkout's tuwviz, also when another one is installed in the environment.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tuwviz.experiments.bench import bench  # noqa: E402
from tuwviz.experiments.calibrate import calibrate  # noqa: E402
from tuwviz.model import schedule, simulate  # noqa: E402
from tuwviz.model.topology.ring import allgatherv_block_elems  # noqa: E402
from tuwviz.params import DEFAULT_ALPHA, DEFAULT_BETA  # noqa: E402
from tuwviz.problems import DATATYPES, make_problem  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=8, help="ranks (default 8)")
    ap.add_argument("--b", type=int, default=1 << 20,
                    help="the broadcast's count c: process 0's block, in ints (default "
                         "2^20: 4 MiB)")
    ap.add_argument("--reps", type=int, default=30,
                    help="timed repetitions per run (default 30)")
    ap.add_argument("--runs", type=int, default=3,
                    help="runs (each its own mpiexec, the algorithms in turns; default 3)")
    ap.add_argument("--recalibrate", action="store_true", help="calibrate even if cached")
    ap.add_argument("--out", help="CSV to append the rows to")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.reps < 1:  # before the calibration, which may launch ranks
        ap.error("--runs and --reps must be at least 1")

    cal = calibrate(args.np, force=args.recalibrate)
    print(f"calibration ({cal.path}):\n{cal.summary()}")
    pr = make_problem("allgatherv", args.np, "broadcast", args.b)
    size = DATATYPES[pr.datatype]
    counts = list(pr.block_counts())

    def eq2_bytes(alpha, beta):
        return allgatherv_block_elems(args.np, counts, size, 0, alpha, beta) * size

    b_cal, b_def = eq2_bytes(cal.alpha, cal.beta), eq2_bytes(DEFAULT_ALPHA, DEFAULT_BETA)
    print(f"broadcast of m = {pr.m * size:,} bytes on {args.np} ranks; Eq. (2): "
          f"B = {b_cal:,} bytes calibrated, {b_def:,} bytes with the C defaults")
    ratios = []
    for run in range(1, args.runs + 1):
        load = os.getloadavg()
        df = bench("allgatherv", ["native", "ring", "pipelined"], ps=[args.np],
                   dists=["broadcast"], bs=[args.b], reps=args.reps, warmup=3,
                   params={"block_bytes": [0, b_def]}, out=args.out)
        med = {(r["algorithm"], r["params"]): float(r["median_us"]) for _, r in df.iterrows()}
        native, ring = med[("native", "")], med[("ring", "")]
        over = "oversubscribed" if df.iloc[0]["oversubscribed"] else "not oversubscribed"
        print(f"\nrun {run} of {args.runs}, measured, {args.np} ranks ({over}), load "
              f"{load[0]:.1f} before it, {args.reps} reps in rounds; median us, / native, "
              f"/ ring:")
        for (alg, params), t in med.items():
            what = alg
            if alg == "pipelined":
                what += (f" B={b_def:,} (defaults' Eq. (2))" if f"block_bytes={b_def}" in params
                         else f" B={b_cal:,} (default: calibrated Eq. (2))")
            print(f"  {what:<48} {t:>11.0f} {t / native:>7.2f}x {t / ring:>7.2f}x")
        pipe = next(t for (a, prm), t in med.items()
                    if a == "pipelined" and f"block_bytes={b_def}" not in prm)
        ratios.append(pipe / ring)

    def model(alpha, beta):
        """Model times (s) of the ring and the pipelined ring with Eq. (2)'s B for alpha, beta."""
        return [simulate(schedule("allgatherv", alg, pr, **prm), alpha, beta).time
                for alg, prm in (("ring", {}),
                                 ("pipelined", {"alpha": alpha, "beta": beta}))]

    ring_t, pipe_t = model(cal.alpha, cal.beta)
    print(f"\nmodel (alpha-beta, one link per process pair), this calibration (B={b_cal:,}): "
          f"ring {ring_t * 1e6:.0f} us, pipelined {pipe_t * 1e6:.0f} us, "
          f"{pipe_t / ring_t:.2f}x the ring")
    if args.np != 2:
        own = calibrate(2)
        ring_t, pipe_t = model(own.alpha, cal.beta)
        print(f"model with the alpha of 2 ranks on their own cores ({own.alpha * 1e6:.1f} us; "
              f"B={eq2_bytes(own.alpha, cal.beta):,}): ring {ring_t * 1e6:.0f} us, pipelined "
              f"{pipe_t * 1e6:.0f} us, {pipe_t / ring_t:.2f}x the ring")
    wins = sum(r < 1 for r in ratios)
    verdict = ("met" if wins == len(ratios) else "NOT met" if wins == 0
               else "at par (faster in some runs, slower in others)")
    print(f"target, the pipelined ring with its default B beats the linear ring: {verdict}; "
          f"measured {', '.join(f'{r:.2f}x' for r in ratios)} the ring in {len(ratios)} "
          f"run{'s' if len(ratios) > 1 else ''}")
    return 0 if wins == len(ratios) else 1


if __name__ == "__main__":
    sys.exit(main())
