"""``tuwviz grade``: a workspace's kernels built and checked against the MPI library."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import sys
from pathlib import Path

from .options import b_list, int_type, json_option, np_list, seconds_type

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``grade`` subcommand's options."""
    from ..course.grade import GRADE_BS, GRADE_PS, OPTIMALITY_PS, STALL_LIMIT as GRADE_STALL
    from ..analysis.performance import PERF_P, PERF_REPS, PERF_SIZES

    sp = sub.add_parser(
        "grade", help="grade a workspace: build, then check each kernel against the MPI library",
        description="Grade the kernels of a workspace (tuwviz assignment new): compile them with "
                    "tuwviz's kernels (a compile error shows the compiler's file:line), then "
                    "run each against the MPI library's collective on real MPI ranks: many p, "
                    "roots 0, 2 and p-1, block sizes 0, 1 and large, int and double, datatypes "
                    "with gaps, other types at the root, MPI_IN_PLACE. A hang is stopped after "
                    "--stall-limit seconds without progress; a crash names the rank and signal. "
                    "Then, for a correct gather or scatter, optimality from its recorded "
                    "messages (rounds against ceil(log2 p), bytes at the root and the most any "
                    "process sends against (p-1)/p m, the round the last process starts in); "
                    "with --performance, its time against the library for roots 0 and 2 and "
                    "blocks of 1 B to 1 MB (box plots, CSV, LaTeX rows); last, a memory check "
                    "under AddressSanitizer (file:line of a write outside a buffer). "
                    "Results go to DIR/grade/result.json and result.csv. Exit status 0 if every "
                    "check passed, 1 if one failed.",
    )
    sp.add_argument("directory", help="the workspace, or a folder of submissions (workspaces "
                                      "as subdirectories: each graded in its own process, "
                                      "a summary in FOLDER/grades.csv)")
    sp.add_argument("--np", default=",".join(map(str, GRADE_PS)),
                    help=f"process counts (default {','.join(map(str, GRADE_PS))})")
    sp.add_argument("--b", default=",".join(map(str, GRADE_BS)),
                    help=f"block sizes in elements (default {','.join(map(str, GRADE_BS))})")
    sp.add_argument("--stall-limit", type=seconds_type, default=GRADE_STALL, metavar="SECONDS",
                    help=f"stop a kernel that makes no progress for this long as hung "
                         f"(default {GRADE_STALL:g})")
    sp.add_argument("--opt-np", default=",".join(map(str, OPTIMALITY_PS)),
                    help=f"process counts whose messages are recorded for the optimality checks "
                         f"(default {','.join(map(str, OPTIMALITY_PS))})")
    sp.add_argument("--no-memory", action="store_true",
                    help="skip the AddressSanitizer run (out-of-bounds reads and writes)")
    sp.add_argument("--performance", action="store_true",
                    help="also time each correct kernel against the library (roots 0 and 2, "
                         "blocks 1 B to 1 MB): DIR/grade/performance_*.csv, .tex and .html")
    sp.add_argument("--perf-np", type=int_type(3), default=PERF_P, metavar="P",
                    help=f"processes of the performance run, at least 3 for root 2 "
                         f"(default {PERF_P}; more than the cores is labelled oversubscribed)")
    sp.add_argument("--perf-b", default=",".join(map(str, PERF_SIZES)), metavar="BYTES",
                    help=f"block sizes in bytes of the performance run (default "
                         f"{','.join(map(str, PERF_SIZES))})")
    sp.add_argument("--perf-reps", type=int_type(1, 100_000), default=PERF_REPS,
                    help=f"timed repetitions per size (default {PERF_REPS})")
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..course.grade import grade, grade_folder, submissions
    from ..report import text_table
    from ..table import table_path

    # every value is checked here, before any submission is graded
    ps, bs, opt_ps = np_list(args.np), b_list(args.b), np_list(args.opt_np, "--opt-np")
    perf_sizes = b_list(args.perf_b, "--perf-b")
    if args.performance:
        np_list(str(args.perf_np), "--perf-np")  # at most the machine's rank limit
    target = Path(args.directory)
    if target.is_dir() and not table_path(target).is_file() and submissions(target):
        options = ["--np", args.np, "--b", args.b, "--opt-np", args.opt_np,
                   "--stall-limit", str(args.stall_limit),
                   *(["--no-memory"] if args.no_memory else []),
                   *(["--performance", "--perf-np", str(args.perf_np), "--perf-b", args.perf_b,
                      "--perf-reps", str(args.perf_reps)] if args.performance else [])]
        rows = grade_folder(target, options, progress=not args.json)
        print(json.dumps(rows, indent=2) if args.json else
              text_table(rows) + f"\n{sum(r['ok'] for r in rows)} of {len(rows)} submissions "
              f"passed every check; summary in {target / 'grades.csv'}")
        return 0 if all(r["ok"] for r in rows) else 1
    report = grade(target, ps, bs, stall_limit=args.stall_limit,
                   progress=not args.json and sys.stderr.isatty(), memory=not args.no_memory,
                   opt_ps=opt_ps, performance=args.performance, perf_p=args.perf_np,
                   perf_sizes=perf_sizes, perf_reps=args.perf_reps)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
    return 0 if report.ok else 1
