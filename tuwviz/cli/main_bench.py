"""``tuwviz bench``: algorithms timed side by side on MPI ranks, rows saved as they come."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import sys

from .options import (b_list, cost_type, distributions, int_type, json_option, name_list,
                      np_list, np_or_groups, param_grid, params_help, stall_option,
                      backend_from, backend_options)

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``bench`` subcommand's options."""
    dists = distributions()
    sp = sub.add_parser(
        "bench", help="time algorithms side by side, writing CSV rows as they are measured",
        description="Measure algorithms of one collective on fresh MPI ranks (one mpiexec run per "
                    "p). A repetition's time is the slowest rank's; rows give min/median/mean/max "
                    "in microseconds, the ratio to the library's collective ('native'), m and m', "
                    "and run metadata (MPI library, ranks, oversubscription, heavy-yield, commit).",
    )
    sp.add_argument("collective", nargs="?",
                    help="the collective, e.g. gatherv (not with --study)")
    sp.add_argument("--study", metavar="NAME",
                    help="measure a whole study instead of one collective: 'circulant' is the "
                         "circulant paper's consistency study (Guidelines (2)-(6), Figures 6-7): "
                         "every operation, library and circulant, on a vector of p*b bytes "
                         "(MPI_BYTE, MPI_BOR), one CSV for 'tuwviz guidelines'")
    sp.add_argument("--np", help="process counts, e.g. 4 or 2,4,8 (default 4)")
    sp.add_argument("--groups", nargs="+", metavar="P,Q",
                    help="two groups instead of --np: e.g. --groups 6,2 5,3 measures allgather "
                         "or allgatherv on inter-communicators of group A (P processes) and B "
                         "(Q); rows get the columns q, b_b, k_a, k_b")
    sp.add_argument("--b-b", metavar="B",
                    help="with --groups: group B's block sizes b (default: A's, each --b), "
                         "e.g. 25 with --b 100 for k_A = 4 k_B")
    sp.add_argument("--algorithms", help="comma-separated algorithms (default native)")
    sp.add_argument("--dist", help="comma-separated distributions (default: the first of the "
                                   f"collective's paper: same, or regular for allgather(v); {dists})")
    sp.add_argument("--b", default="1,100,10000",
                    help="block sizes b in elements: the gatherv paper's average b, the allgatherv "
                         "paper's base count c (default 1,100,10000)")
    sp.add_argument("--datatype", help="element type: byte, int, double (default int)")
    sp.add_argument("--op", help="the reductions' operator: sum, max, min, bor, user_sum, "
                                 "user_first (default sum, bor for --datatype byte as the "
                                 "circulant paper measures)")
    params_help(sp)
    sp.add_argument("--root", type=int_type(0), help="root (default p/2, as in the gatherv paper)")
    sp.add_argument("--reps", type=int_type(1), default=75, help="timed repetitions (default 75)")
    sp.add_argument("--warmup", type=int_type(0), default=10,
                    help="untimed warm-up calls (default 10)")
    sp.add_argument("--rounds", type=int_type(1),
                    help="the algorithms of a problem take turns in this many rounds, each "
                         "timing every algorithm for its share of --reps, so a burst of load "
                         "hits all alike; 1: each algorithm's repetitions in one block "
                         "(default 5, at most --reps; rows record it)")
    sp.add_argument("--time-limit", type=cost_type, default=0.0,
                    help="seconds one measurement may take; exceeding it is an error (default: none)")
    sp.add_argument("--max-time", type=cost_type, default=0.0,
                    help="seconds after which a measurement's repetitions end, keeping those "
                         "done (ReproMPI's limit; the paper: --reps 5000 --max-time 3; "
                         "default: none)")
    sp.add_argument("--seed", type=int_type(0), default=0, help="seed for random sizes and data")
    stall_option(sp)
    backend_options(sp)
    sp.add_argument("--statistic", choices=("slowest", "osu"), default="slowest",
                    help="how repetitions become a row: slowest (default) takes each "
                         "repetition's slowest rank, then min/median/mean/max over "
                         "repetitions (the gatherv paper, ReproMPI); osu averages each rank "
                         "over its repetitions, then over the ranks: mean_us is OSU "
                         "Micro-Benchmarks' Avg Latency, min_us/max_us its Min/Max Latency")
    sp.add_argument("--no-calibration", action="store_true",
                    help="give the pipelined ring's Eq. (2) block size the C defaults alpha = "
                         "1 us, beta = 1 ns/B instead of this machine's values from 'tuwviz "
                         "calibrate' (used by default when cached for the run's ranks)")
    sp.add_argument("--out", help="CSV file to append rows to (created with a header if new)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..experiments.bench import bench, bench_cases, check_output, row_fields
    from ..collectives import collective
    from ..problems import default_distributions, default_op
    from ..report import text_table

    if args.study is not None:
        return _bench_study(args)
    if args.collective is None:
        raise ValueError("give a collective (e.g. 'tuwviz bench gatherv') or --study NAME")
    args.algorithms = "native" if args.algorithms is None else args.algorithms
    args.datatype = args.datatype or "int"
    # every argument is checked before anything is measured or written
    backend = backend_from(args)
    ps, bs = np_or_groups(args, "4", backend), b_list(args.b)
    b_b = b_list(args.b_b, "--b-b") if args.b_b is not None else None
    coll = collective(args.collective)
    if args.root is not None and not coll.rooted:
        raise ValueError(f"--root: {coll.name} has no root")
    algorithms = name_list(args.algorithms)
    if not algorithms:
        raise ValueError(f"--algorithms: empty selection {args.algorithms!r}")
    dists = name_list(args.dist) or [default_distributions(coll.name)[0]]
    params = param_grid(args)
    cases = bench_cases(coll.name, algorithms, ps, dists, bs, args.root, args.seed, args.reps,
                        args.warmup, args.time_limit, args.datatype, params,
                        op=args.op or default_op(args.datatype), max_time=args.max_time,
                        groups=args.groups, b_b=b_b, rounds=args.rounds,
                        calibrated=not args.no_calibration, statistic=args.statistic,
                        cost=getattr(getattr(backend, "platform", None), "cost", None))
    for line in _cost_notes(cases, params, args.no_calibration, backend):
        print(line, file=sys.stderr)
    if args.out:
        check_output(args.out, fields=row_fields(args.groups is not None))
        print(f"writing rows to {args.out} as they are measured", file=sys.stderr)
    df = bench(
        coll.name, algorithms, ps, dists, bs, out=args.out, root=args.root, seed=args.seed,
        reps=args.reps, warmup=args.warmup, time_limit=args.time_limit, datatype=args.datatype,
        op=args.op or default_op(args.datatype), params=params,
        progress=not args.no_progress and not args.json,
        stall_limit=args.stall_limit, max_time=args.max_time, groups=args.groups, b_b=b_b,
        rounds=args.rounds, calibrated=not args.no_calibration, statistic=args.statistic,
        backend=backend,
    )
    if args.json:
        print(df.to_json(orient="records", indent=2))
        return 0
    cols = ["algorithm", "params", "p", "root", "distribution", "b", "m", "m_prime", "min_us",
            "median_us", "mean_us", "ratio_to_native"]
    if args.groups is not None:  # two groups: the paper's p, q, k_A, k_B (no root)
        cols[2:6] = ["p", "q", "distribution", "k_a", "k_b", "root"]
    if not df["params"].astype(bool).any():
        cols.remove("params")
    if not coll.rooted:  # the CSV has root 0 in every row (one layout); here it means nothing
        cols.remove("root")
    print(text_table(df[cols].to_dict("records")))
    _measured_line(df)
    return 0


def _cost_notes(cases: list[dict], params: dict, off: bool, backend=None) -> list[str]:
    """What Eq. (2)'s alpha, beta are in a bench run, per number of ranks: calibrated, or
    the defaults and how to calibrate (nothing when no algorithm uses them)."""
    from ..params import COST_PARAMS, uses_cost_model
    from ..kernels import find_algorithm
    from ..problems import case_ranks

    if any(k in params for k in COST_PARAMS):
        return []
    notes = {}
    for c in cases:
        if c["mode"] != "measure" or c["algorithm"] == "native":
            continue
        takes = [q.name for q in find_algorithm(c["problem"]["collective"], c["algorithm"]).params]
        given = {k: v for k, v in (c.get("params") or {}).items() if k not in COST_PARAMS}
        if not uses_cost_model(takes, given):  # alpha, beta in a case's params are calibration's
            continue
        n = case_ranks(c["problem"])
        plat = getattr(backend, "platform", None)
        if "alpha" in (c.get("params") or {}):
            a, b = c["params"]["alpha"], c["params"]["beta"]
            whose = (f"platform {plat.name}'s inter-node costs" if plat is not None
                     else f"this machine's calibration of {n} ranks")
            notes[n] = (f"{c['algorithm']}: Eq. (2) block size from {whose} "
                        f"(alpha = {a:.3g} s, beta = {b:.3g} s/B)")
        elif off:
            notes[n] = (f"{c['algorithm']}: Eq. (2) block size from the defaults alpha = 1 us, "
                        f"beta = 1 ns/B (--no-calibration)")
        else:
            notes[n] = (f"{c['algorithm']}: no calibration of {n} ranks here, so Eq. (2) uses "
                        f"alpha = 1 us, beta = 1 ns/B; 'tuwviz calibrate --np {n}' measures "
                        f"this machine's")
    return [notes[n] for n in sorted(notes)]


def _measured_line(df) -> None:
    first = df.iloc[0]
    if first["backend"] == "smpi":
        print(f"simulated: {first['mpi_library']}, platform {first['platform']}, "
              f"{first['ranks']} ranks on host(s) {_hosts_short(first['hosts'])}, commit "
              f"{first['git_commit']}")
        return
    label = "oversubscribed" if first["oversubscribed"] else "not oversubscribed"
    print(f"measured: {first['mpi_library']}, {label}, heavy-yield={first['heavy_yield'] or 'unset'}, "
          f"host(s) {first['hosts']}, commit {first['git_commit']}")
    if first.get("statistic") == "osu":
        print("statistic osu: each rank's mean over repetitions, then min/median/mean/max over "
              "ranks (mean_us = OSU's Avg Latency)")


def _hosts_short(hosts: str) -> str:
    names = str(hosts).split(";")
    return hosts if len(names) <= 4 else f"{len(names)} simulated nodes"


def _bench_study(args) -> int:
    from ..experiments.bench import ROW_FIELDS, check_output
    from ..report import text_table
    from ..experiments.study import run_study, study_cases

    if args.rounds is not None:
        raise ValueError("--rounds: a study times each of its parts in one block; leave it out")
    if args.statistic != "slowest":
        raise ValueError("--statistic: a study summarizes as its paper does (the slowest rank "
                         "of each repetition); leave it out")

    if args.collective is not None:
        raise ValueError(f"--study {args.study}: the study chooses the collectives; leave out "
                         f"{args.collective!r}")
    fixed = {"--algorithms": args.algorithms is not None, "--dist": args.dist is not None,
             "--root": args.root is not None, "--datatype": args.datatype is not None,
             "--op": args.op is not None, **{f"--{k.replace('_', '-')}": True
                                              for k in param_grid(args)}}
    fixed.update({"--groups": args.groups is not None, "--b-b": args.b_b is not None})
    given = [k for k, v in fixed.items() if v]
    if given:
        raise ValueError(f"--study {args.study} chooses {given[0]} itself (the paper's "
                         f"settings); leave it out")
    backend = backend_from(args)
    ps, bs = np_list(args.np if args.np is not None else "4", backend=backend), b_list(args.b)
    study_cases(args.study, ps, bs, reps=args.reps, warmup=args.warmup,
                time_limit=args.time_limit, max_time=args.max_time, seed=args.seed)
    if args.out:
        check_output(args.out, fields=ROW_FIELDS)
        print(f"writing rows to {args.out} as they are measured", file=sys.stderr)
    df = run_study(args.study, ps, bs, out=args.out, reps=args.reps, warmup=args.warmup,
                   time_limit=args.time_limit, max_time=args.max_time, seed=args.seed,
                   progress=not args.no_progress and not args.json,
                   stall_limit=args.stall_limit, backend=backend)
    if args.json:
        print(df.to_json(orient="records", indent=2))
        return 0
    cols = ["collective", "algorithm", "p", "distribution", "b", "m", "reps", "median_us",
            "ratio_to_native"]
    print(text_table(df[cols].to_dict("records")))
    _measured_line(df)
    if args.out:
        print(f"next: tuwviz guidelines {args.out} --html study.html", file=sys.stderr)
    return 0
