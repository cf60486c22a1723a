"""The ``tuwviz`` command: verify, bench, guidelines, model, list, lab.

Every subcommand prints a readable table by default and JSON with ``--json``.  Errors
print one line, ``error: ...``, and exit with status 2 (bad input) or 1 (a failed run or
failed verification); tracebacks are for bugs only.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .errors import TuwvizError

__all__ = ["main"]

EXAMPLES = """\
examples:
  tuwviz list
  tuwviz verify --np 1-9
  tuwviz verify --np 1-17 --collective gatherv --algorithms linear
  tuwviz bench gatherv --np 4 --dist same --b 1,100,10000 --algorithms native,linear --out r.csv
  tuwviz bench allgatherv --np 8 --dist broadcast,spike,regular --b 1000,100000,1000000 \
      --algorithms native,ring,pipelined --out ag.csv
  tuwviz bench allgatherv --np 8 --dist spike --b 1000000 --algorithms ring,pipelined \
      --block-bytes 0,16384,65536,262144 --out blocks.csv
  tuwviz model allgatherv pipelined --np 30 --dist broadcast --b 33554432 --datatype byte \
      --block-bytes 1048576
  tuwviz guidelines r.csv --html r.html
  tuwviz model gatherv linear --np 8 --dist random --b 100 --json
  tuwviz lab
"""


def params_help(sp, grid: bool = True) -> None:
    """Options for the algorithms' tuning parameters (tuwviz.params)."""
    many = "comma-separated " if grid else ""
    sp.add_argument("--block-bytes", help=f"{many}block sizes B in bytes of the pipelined ring "
                                          "(0 = the paper's estimate, Eq. (2); default 0)")
    sp.add_argument("--ring", help=f"{many}ring orders of the rings: rank (default), smp "
                                   "(one process per node sends off-node, Figure 1), spread "
                                   "(processes with data placed equidistantly, Section 2.3)")
    sp.add_argument("--nodes", help="node of every rank for --ring smp, e.g. 0,1,0,1 "
                                    "(default: asked from MPI, shared-memory nodes)")


def _param_grid(args) -> dict[str, list]:
    """The tuning-parameter options as a grid of values (see tuwviz.params.expand)."""
    from .sweep import parse_int_list

    grid: dict[str, list] = {}
    if args.block_bytes:
        grid["block_bytes"] = parse_int_list(args.block_bytes)
    if args.ring:
        grid["ring"] = _names(args.ring)
    if args.nodes:
        grid["nodes"] = [parse_int_list(args.nodes)]
    return grid


def _parser() -> argparse.ArgumentParser:
    from .problems import DISTRIBUTIONS

    dists = ", ".join(DISTRIBUTIONS)
    p = argparse.ArgumentParser(
        prog="tuwviz",
        description="Teach, explore and reproduce MPI collective algorithms: run C kernels on "
                    "real MPI ranks, check them against the MPI library, time them side by "
                    "side, and predict their cost with an alpha-beta-gamma model.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def common(sp):
        sp.add_argument("--json", action="store_true", help="print JSON instead of a table")

    sp = sub.add_parser("list", help="list collectives and registered algorithms")
    sp.add_argument("--collective", help="only this collective")
    common(sp)

    sp = sub.add_parser(
        "verify", help="compare every kernel with the MPI library's collective",
        description="Run each registered algorithm and the MPI library's collective on the same "
                    "random input on real MPI ranks (mpiexec) and compare the results byte for "
                    "byte: every distribution, roots 0, p/2 and p-1, every p in the range.",
    )
    sp.add_argument("--np", default="1-9", help="process counts, e.g. 1-9 or 2,4,8 (default 1-9)")
    sp.add_argument("--collective", help="comma-separated collectives (default: all)")
    sp.add_argument("--algorithms", help="comma-separated algorithm names (default: all)")
    sp.add_argument("--dist", help=f"comma-separated distributions (default: all six of the "
                                   f"collective's paper; known: {dists})")
    sp.add_argument("--b", default="0,1,17",
                    help="block sizes b in elements: the gatherv paper's average b, the allgatherv "
                         "paper's base count c (default 0,1,17). Tuning parameters (e.g. the "
                         "pipelined ring's block size) are varied too: see 'tuwviz list'")
    sp.add_argument("--roots", help="comma-separated roots (default: 0, p/2, p-1)")
    sp.add_argument("--seed", type=int, default=0, help="seed for random sizes and data")
    common(sp)

    sp = sub.add_parser(
        "bench", help="time algorithms side by side, writing CSV rows as they are measured",
        description="Measure algorithms of one collective on fresh MPI ranks (one mpiexec run per "
                    "p). A repetition's time is the slowest rank's; rows give min/median/mean/max "
                    "in microseconds, the ratio to the library's collective ('native'), m and m', "
                    "and run metadata (MPI library, ranks, oversubscription, heavy-yield, commit).",
    )
    sp.add_argument("collective", help="the collective, e.g. gatherv")
    sp.add_argument("--np", default="4", help="process counts, e.g. 4 or 2,4,8 (default 4)")
    sp.add_argument("--algorithms", default="native", help="comma-separated algorithms (default native)")
    sp.add_argument("--dist", help="comma-separated distributions (default: the first of the "
                                   f"collective's paper: same, or regular for allgather(v); {dists})")
    sp.add_argument("--b", default="1,100,10000",
                    help="block sizes b in elements: the gatherv paper's average b, the allgatherv "
                         "paper's base count c (default 1,100,10000)")
    sp.add_argument("--datatype", default="int", help="element type: byte, int, double (default int)")
    params_help(sp)
    sp.add_argument("--root", type=int, help="root (default p/2, as in the gatherv paper)")
    sp.add_argument("--reps", type=int, default=75, help="timed repetitions (default 75)")
    sp.add_argument("--warmup", type=int, default=10, help="untimed warm-up calls (default 10)")
    sp.add_argument("--time-limit", type=float, default=0.0,
                    help="seconds one measurement may take; exceeding it is an error (default: none)")
    sp.add_argument("--seed", type=int, default=0, help="seed for random sizes and data")
    sp.add_argument("--out", help="CSV file to append rows to (created with a header if new)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    common(sp)

    sp = sub.add_parser(
        "guidelines", help="check performance guidelines on a bench CSV; print the paper's table",
        description="Evaluate the performance guidelines declared in tuwviz.guidelines (for "
                    "gatherv: (1) MPI_Gather(m) <= MPI_Gatherv(m) where all m_i are equal, (2) "
                    "MPI_Gatherv(m) <= MPI_Allreduce(1) + MPI_Gather(m')) on the rows of a "
                    "'tuwviz bench' CSV, with average and minimum times. Companion operations "
                    "the CSV lacks (the library's gather and allreduce on the same p) are "
                    "measured first and appended to the CSV. Prints the table in the layout of "
                    "the gatherv paper's Tables 1-5, violations marked * and listed in words.",
    )
    sp.add_argument("csv", help="results CSV written by 'tuwviz bench ... --out'")
    group = sp.add_mutually_exclusive_group()
    group.add_argument("--measure-missing", dest="measure", action="store_true", default=True,
                       help="measure missing companion operations and append them to CSV (default)")
    group.add_argument("--no-measure", dest="measure", action="store_false",
                       help="do not measure; missing companion operations are an error")
    sp.add_argument("--html", metavar="OUT.html",
                    help="also write the table and a plot against the Guideline (2) bound to a "
                         "standalone HTML page (BokehJS inline, works offline)")
    sp.add_argument("--algorithms", help="comma-separated algorithms under test to show "
                                         "(default: all in the CSV, native first)")
    sp.add_argument("--mark", default="avg,min",
                    help="statistics whose violations are marked (default avg,min; the paper "
                         "marks min only)")
    sp.add_argument("--reps", type=int, help="repetitions for new measurements (default: the CSV's)")
    sp.add_argument("--warmup", type=int, help="warm-up calls for new measurements (default: the CSV's)")
    sp.add_argument("--seed", type=int, default=0,
                    help="seed the CSV was measured with (for random block sizes; default 0)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    common(sp)

    sp = sub.add_parser(
        "model", help="print a model schedule and its alpha-beta-gamma prediction",
        description="Build the per-rank programs of an algorithm (the same rules as its C kernel) "
                    "and simulate them in the one-ported, bidirectional alpha-beta-gamma model. "
                    "Results are model predictions, not measurements.",
    )
    sp.add_argument("collective", help="the collective, e.g. gatherv")
    sp.add_argument("algorithm", nargs="?", help="algorithm (default: every modelled one)")
    sp.add_argument("--np", type=int, default=8, help="number of processes p (default 8)")
    sp.add_argument("--root", type=int, help="root (default p/2)")
    sp.add_argument("--dist", default="same", help=f"distribution ({dists})")
    sp.add_argument("--b", type=int, default=100, help="average block size b in elements (default 100)")
    sp.add_argument("--counts", help="explicit block sizes m_0,...,m_{p-1} instead of --dist/--b")
    sp.add_argument("--datatype", default="int", help="element type: byte, int, double")
    params_help(sp, grid=False)
    sp.add_argument("--alpha", type=float, default=1e-6, help="latency per message, s (default 1e-6)")
    sp.add_argument("--beta", type=float, default=1e-9, help="time per byte, s (default 1e-9)")
    sp.add_argument("--gamma", type=float, default=0.0, help="time per reduced element, s")
    sp.add_argument("--seed", type=int, default=0)
    common(sp)

    sp = sub.add_parser(
        "lab", help="start JupyterLab on 127.0.0.1 (token on) in notebooks/",
        description="Start JupyterLab in the notebooks folder, bound to 127.0.0.1 with a token. "
                    "On a login node, reach it through an SSH tunnel (ssh -L 8888:127.0.0.1:8888).",
    )
    sp.add_argument("--port", type=int, default=8888)
    sp.add_argument("--ip", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    sp.add_argument("--no-browser", action="store_true", help="do not open a browser")
    sp.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    common(sp)
    return p


def _names(text):
    from .sweep import parse_names

    return parse_names(text)


def cmd_list(args) -> int:
    from .collectives import COLLECTIVES
    from .kernels import algorithms
    from .model import SCHEDULES
    from .report import text_table

    colls = _names(args.collective)
    rows = [
        {"collective": a.collective, "algorithm": a.name,
         "model": "yes" if a.name in SCHEDULES.get(a.collective, {}) else "-",
         "description": a.description}
        for a in algorithms()
        if colls is None or a.collective in [COLLECTIVES[c].name if c in COLLECTIVES else c for c in colls]
    ]
    if colls:
        for c in colls:
            from .collectives import collective

            collective(c)  # unknown names raise with the valid ones
    print(json.dumps(rows, indent=2) if args.json else text_table(rows))
    return 0


def cmd_verify(args) -> int:
    from .sweep import parse_int_list
    from .verify import verify

    report = verify(
        _names(args.collective), _names(args.algorithms), parse_int_list(args.np),
        _names(args.dist), parse_int_list(args.b),
        parse_int_list(args.roots) if args.roots else None, args.seed,
        progress=not args.json and sys.stderr.isatty(),
    )
    print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
    return 0 if report.ok else 1


def cmd_bench(args) -> int:
    from .bench import bench
    from .report import text_table
    from .sweep import parse_int_list

    if args.out:
        print(f"writing rows to {args.out} as they are measured", file=sys.stderr)
    from .problems import default_distributions

    dists = _names(args.dist) or [default_distributions(args.collective)[0]]
    df = bench(
        args.collective, _names(args.algorithms) or ["native"], parse_int_list(args.np),
        dists, parse_int_list(args.b), out=args.out, root=args.root, seed=args.seed,
        reps=args.reps, warmup=args.warmup, time_limit=args.time_limit, datatype=args.datatype,
        params=_param_grid(args), progress=not args.no_progress and not args.json,
    )
    if args.json:
        print(df.to_json(orient="records", indent=2))
        return 0
    cols = ["algorithm", "params", "p", "root", "distribution", "b", "m", "m_prime", "min_us",
            "median_us", "mean_us", "ratio_to_native"]
    if not df["params"].astype(bool).any():
        cols.remove("params")
    print(text_table(df[cols].to_dict("records")))
    first = df.iloc[0]
    label = "oversubscribed" if first["oversubscribed"] else "not oversubscribed"
    print(f"measured: {first['mpi_library']}, {label}, heavy-yield={first['heavy_yield'] or 'unset'}, "
          f"host(s) {first['hosts']}, commit {first['git_commit']}")
    return 0


def cmd_guidelines(args) -> int:
    from . import guidelines as gl

    df = gl.load_results(args.csv)
    layouts = [k for k in gl.LAYOUTS if (df["collective"] == k).any()]
    if not layouts:
        have = ", ".join(sorted(set(df["collective"])))
        raise ValueError(f"{args.csv} has no rows of {', '.join(gl.LAYOUTS)} (it has {have}); "
                         f"benchmark one first, e.g. 'tuwviz bench gatherv --out {args.csv}'")
    algorithms = _names(args.algorithms)
    mark = _names(args.mark) or []
    if args.measure:
        missing = gl.missing_operations(df, algorithms=algorithms)
        if missing:
            print(f"measuring {len(missing)} missing companion operation(s), appending to "
                  f"{args.csv}:", file=sys.stderr)
            for mo in missing:
                print(f"  {mo.describe()}", file=sys.stderr)
            gl.measure_missing(args.csv, algorithms=algorithms, reps=args.reps,
                               warmup=args.warmup, seed=args.seed,
                               progress=not args.no_progress and not args.json)
            df = gl.load_results(args.csv)
    # one table per collective and p, as in the paper
    tables = [gl.guideline_table(df, k, algorithms=algorithms, mark=mark, p=p)
              for k in layouts for p in gl.table_ps(df, k)]
    if args.html:
        plots = [gl.LAYOUTS[k].plot for k in layouts if gl.LAYOUTS[k].plot]
        figure = gl.guideline_figure(df, plots[0], algorithms=algorithms) if plots else None
        path = gl.save_page(args.html, tables, figure,
                            title=f"tuwviz guidelines: {Path(args.csv).name}")
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        ev = gl.evaluate(df, algorithms=algorithms)
        print(ev.to_json(orient="records", indent=2, force_ascii=False))
        return 0
    print("\n\n".join(t.to_text() for t in tables))
    return 0


def cmd_model(args) -> int:
    from . import model
    from .problems import Problem, make_problem

    if args.counts:
        from .sweep import parse_int_list

        counts = parse_int_list(args.counts)
        p = len(counts)
        root = p // 2 if args.root is None else args.root
        problem = Problem(args.collective, p, root, counts, datatype=args.datatype)
    else:
        problem = make_problem(args.collective, args.np, args.dist, args.b, root=args.root,
                               seed=args.seed, datatype=args.datatype)
    from .params import ALGORITHM_PARAMS

    names = [args.algorithm] if args.algorithm else model.algorithms(problem.collective)
    grid = {k: v[0] for k, v in _param_grid(args).items()}
    out = []
    for name in names:
        valid = ALGORITHM_PARAMS.get((problem.collective, name), ())
        s = model.schedule(problem.collective, name, problem,
                           **{k: v for k, v in grid.items() if k in valid})
        r = model.simulate(s, args.alpha, args.beta, args.gamma)
        out.append((s, r))
    if args.json:
        print(json.dumps([{"schedule": s.to_dict(), "prediction": r.to_dict(), "label": "model"}
                          for s, r in out], indent=2))
    else:
        print("\n\n".join(model.format_report(s, r) for s, r in out))
    return 0


def cmd_lab(args) -> int:
    notebooks = Path(__file__).resolve().parent.parent / "notebooks"
    jupyter = shutil.which("jupyter", path=os.path.join(sys.prefix, "bin")) or shutil.which("jupyter")
    if jupyter is None:
        raise TuwvizError("jupyter is not installed in this environment: run 'make lab'")
    cmd = [jupyter, "lab", f"--ServerApp.ip={args.ip}", f"--ServerApp.port={args.port}",
           f"--ServerApp.root_dir={notebooks}"]
    if args.no_browser:
        cmd.append("--no-browser")
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    if args.ip not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: JupyterLab will accept connections on {args.ip}; keep the token secret",
              file=sys.stderr)
    if args.dry_run or args.json:
        print(json.dumps({"command": cmd}) if args.json else " ".join(cmd))
        return 0
    # engines started from notebooks must find this environment's mpiexec
    env = {**os.environ, "PATH": os.pathsep.join([os.path.join(sys.prefix, "bin"), os.environ.get("PATH", "")])}
    return subprocess.call(cmd, env=env)


COMMANDS = {"list": cmd_list, "verify": cmd_verify, "bench": cmd_bench,
            "guidelines": cmd_guidelines, "model": cmd_model, "lab": cmd_lab}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tuwviz`` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command](args)
    except (TuwvizError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, TuwvizError) else 2
    except KeyboardInterrupt:
        print("interrupted; rows measured so far are saved", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
