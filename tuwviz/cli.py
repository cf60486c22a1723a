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
import textwrap
from pathlib import Path

from . import config
from .errors import TuwvizError

__all__ = ["main"]

# \\ prints \, the shell's line continuation (a lone \ would join the lines right here)
EXAMPLES = """\
examples:
  tuwviz list
  tuwviz verify --np 1-9
  tuwviz verify --np 1-17 --collective gatherv --algorithms linear
  tuwviz bench gatherv --np 4 --dist same --b 1,100,10000 --algorithms native,linear --out r.csv
  tuwviz bench allgatherv --np 8 --dist broadcast,spike,regular --b 1000,100000,1000000 \\
      --algorithms native,ring,pipelined --out ag.csv
  tuwviz bench allgatherv --np 8 --dist spike --b 1000000 --algorithms ring,pipelined \\
      --block-bytes 0,16384,65536,262144 --out blocks.csv
  tuwviz model allgatherv pipelined --np 30 --dist broadcast --b 33554432 --datatype byte \\
      --block-bytes 1048576
  tuwviz calibrate --np 2,8                          # this machine's alpha, beta, gamma
  tuwviz model allgatherv --np 8 --dist broadcast --b 1048576 --calibrated
  tuwviz guidelines r.csv --html r.html
  tuwviz model gatherv linear --np 8 --dist random --b 100 --json
  tuwviz lab
  tuwviz assignment new gather-scatter my_work      # a course workspace to edit
  tuwviz grade my_work                              # build, check against the library
"""


def params_help(sp, grid: bool = True, skip: tuple[str, ...] = ()) -> None:
    """One option per tuning parameter of the algorithm table (``--block-bytes``, ...).

    Derived from the table's ``[parameter.*]`` entries, so a new parameter gets its option
    without an edit here.  `skip` leaves out names the subcommand uses otherwise (``tuwviz
    model`` has its own ``--alpha``/``--beta``: the cost model it simulates with).
    """
    from .table import load_table

    for q in load_table().parameters.values():
        if q.name in skip:
            continue
        many = "comma-separated values: " if grid and q.type != "int_list" else ""
        default = "" if q.default is None else f" (default {q.default})"
        users = ", ".join(f"{r.collective}/{r.name}" for r in load_table() if q in r.params)
        sp.add_argument(q.option, dest="param_" + q.name, metavar=q.type.upper(),
                        help=f"{many}{q.help}{default}; taken by {users or 'no algorithm'}")


def _param_grid(args) -> dict[str, list]:
    """The tuning-parameter options as a grid of values (see tuwviz.params.expand)."""
    from .table import load_table

    grid: dict[str, list] = {}
    for q in load_table().parameters.values():
        text = getattr(args, "param_" + q.name, None)
        if text is None:
            continue
        try:
            if q.type == "int_list":
                grid[q.name] = [q.check(q.parse(text))]  # one list, e.g. one node map
            elif q.type == "int":
                grid[q.name] = [q.check(v) for v in _int_texts(text)]
            else:
                grid[q.name] = [q.check(v) for v in _names(text) or []]
            if not grid[q.name] or grid[q.name] == [[]]:
                raise ValueError(f"empty selection: {text!r} gives no values")
        except ValueError as exc:
            raise ValueError(f"{q.option}: {exc}") from None
    return grid


def _int_texts(text: str) -> list[str]:
    """Comma-separated integers as text, checked exactly by the parameter (no ranges:
    a value like 9223372036854775808 must reach the bound check unchanged)."""
    from .sweep import MAX_LIST_VALUES

    items = [t.strip() for t in text.split(",") if t.strip()]
    if len(items) > MAX_LIST_VALUES:
        raise ValueError(f"{len(items)} values, at most {MAX_LIST_VALUES} allowed")
    return items


def _int_type(lo: int | None = None, hi: int | None = None):
    """An argparse type: an integer in ``lo..hi``; the message names the option."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if lo is not None and v < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, got {v}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi}, got {v}")
        return v
    parse.__name__ = "integer"
    return parse


def _cost(text: str) -> float:
    """An argparse type: a finite number >= 0 (a cost or a time)."""
    import math

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return v


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0."""
    v = _cost(text)
    if v == 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return v


def stall_option(sp) -> None:
    """``--stall-limit``: the no-progress limit of the runs a subcommand starts."""
    from .launch import STALL_LIMIT

    sp.add_argument("--stall-limit", type=_seconds, default=STALL_LIMIT, metavar="SECONDS",
                    help=f"stop a run that makes no progress for this long, naming the ranks "
                         f"that stopped responding (default {STALL_LIMIT:g}; a rank silent "
                         f"for 30 s is named at once)")


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's error format: one line ``error: ...``, exit status 2."""

    def error(self, message: str):
        sub = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        hint = f" (see 'tuwviz {sub} --help')" if sub else " (see 'tuwviz --help')"
        self.exit(2, f"error: {message}{hint}\n")


def _np_list(text: str, name: str = "--np") -> list[int]:
    """``--np`` of verify, bench and grade: at most the machine's rank limit, checked while
    parsing (``1-10000000`` fails at once)."""
    from .sweep import parse_int_list
    from .verify import RANKS_HINT

    return parse_int_list(text, name=name, lo=1, hi=config.max_ranks(), hint=RANKS_HINT)


def _np_or_groups(args, default: str) -> list[int]:
    """The --np list (`default` if not given); an error if --groups is given too."""
    if args.groups is not None and args.np is not None:
        raise ValueError("give --np (one group) or --groups (two groups), not both")
    return _np_list(args.np if args.np is not None else default)


def _b_list(text: str, name: str = "--b") -> list[int]:
    from .problems import MAX_COUNT
    from .sweep import parse_int_list

    return parse_int_list(text, name=name, lo=0, hi=MAX_COUNT)


def _parser() -> argparse.ArgumentParser:
    from .problems import DISTRIBUTIONS

    dists = ", ".join(DISTRIBUTIONS)
    p = _Parser(
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
                    "byte: every distribution, roots 0, p/2 and p-1, every p in the range, and "
                    "datatype pairs (the root's types and counts differing from the others').",
    )
    sp.add_argument("--np", help="process counts, e.g. 1-9 or 2,4,8 (default 1-9)")
    sp.add_argument("--groups", nargs="+", metavar="P,Q",
                    help="two groups instead of one: e.g. --groups 5,2 2,5 runs Allgather and "
                         "Allgatherv on inter-communicators of group A (P processes) and B (Q), "
                         "against the library's intergroup collectives (not with --np); B's "
                         "blocks are b, 2b+3, and A's 2b+3 with B's b")
    sp.add_argument("--collective", help="comma-separated collectives (default: all)")
    sp.add_argument("--algorithms", help="comma-separated algorithm names (default: all)")
    sp.add_argument("--dist", help=f"comma-separated distributions (default: all six of the "
                                   f"collective's paper for Gatherv, Scatterv, Allgatherv; the "
                                   f"first alone for collectives with equal blocks, whose b "
                                   f"--b varies; known: {dists})")
    sp.add_argument("--b", default="0,1,17",
                    help="block sizes b in elements: the gatherv paper's average b, the allgatherv "
                         "paper's base count c (default 0,1,17). Tuning parameters (e.g. the "
                         "pipelined ring's block size) are varied too: see 'tuwviz list'")
    sp.add_argument("--roots", help="comma-separated roots: numbers, ranges, or relative to "
                                    "each p: p/2, p-1, p-K (default: 0,p/2,p-1)")
    sp.add_argument("--types", help="comma-separated datatype pairs (default: all that apply): "
                                    "same (one type both sides, every distribution and b), "
                                    "root-contig, root-vector, root-resized, own-mixed, in-place "
                                    "(the root's datatype and counts differ from each process's "
                                    "own, as MPI allows; once per p, root and parameter setting, "
                                    "at the largest b). Applies to gather(v), scatter(v), "
                                    "allgather(v); reductions run same and in-place. Every "
                                    "collective also runs null and null-in-place: a zero-size "
                                    "call with NULL buffers (two groups: same and null)")
    sp.add_argument("--ops", help="comma-separated datatype:op pairs for the reductions "
                                  "(default: int:sum,int:max,int:min,double:sum,double:max,"
                                  "double:min,byte:bor,int:user_sum; ops: sum, max, min, bor, "
                                  "user_sum (user-defined, commutative), user_first "
                                  "(user-defined, not commutative: refused by the kernels "
                                  "that need a commutative one))")
    sp.add_argument("--seed", type=_int_type(0), default=0, help="seed for random sizes and data")
    stall_option(sp)
    common(sp)

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
    sp.add_argument("--root", type=_int_type(0), help="root (default p/2, as in the gatherv paper)")
    sp.add_argument("--reps", type=_int_type(1), default=75, help="timed repetitions (default 75)")
    sp.add_argument("--warmup", type=_int_type(0), default=10,
                    help="untimed warm-up calls (default 10)")
    sp.add_argument("--rounds", type=_int_type(1),
                    help="the algorithms of a problem take turns in this many rounds, each "
                         "timing every algorithm for its share of --reps, so a burst of load "
                         "hits all alike; 1: each algorithm's repetitions in one block "
                         "(default 5, at most --reps; rows record it)")
    sp.add_argument("--time-limit", type=_cost, default=0.0,
                    help="seconds one measurement may take; exceeding it is an error (default: none)")
    sp.add_argument("--max-time", type=_cost, default=0.0,
                    help="seconds after which a measurement's repetitions end, keeping those "
                         "done (ReproMPI's limit; the paper: --reps 5000 --max-time 3; "
                         "default: none)")
    sp.add_argument("--seed", type=_int_type(0), default=0, help="seed for random sizes and data")
    stall_option(sp)
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
    common(sp)

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
    sp.add_argument("--reps", type=_int_type(10), default=200,
                    help="ping-pong repetitions per small size (default 200; large sizes fewer)")
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
                    "the gatherv paper's Tables 1-5, violations marked * and listed in words: only "
                    "those beyond the run's own noise (the left side exceeds the right by more "
                    "than the repetitions' spread, median - min); smaller differences are "
                    "counted in the caption, not marked.",
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
    sp.add_argument("--no-noise", dest="noise", action="store_false",
                    help="mark every difference, however small, as the paper's tables do "
                         "(default: only differences beyond the run's noise)")
    sp.add_argument("--reps", type=_int_type(1),
                    help="repetitions for new measurements (default: the CSV's)")
    sp.add_argument("--warmup", type=_int_type(0),
                    help="warm-up calls for new measurements (default: the CSV's)")
    sp.add_argument("--seed", type=_int_type(0), default=0,
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
    sp.add_argument("--np", type=_int_type(1), help="number of processes p (default 8)")
    sp.add_argument("--groups", metavar="P,Q",
                    help="two groups instead of --np (allgather, allgatherv on an "
                         "inter-communicator): A of P processes, B of Q, e.g. --groups 50,14; "
                         "also prints the intergroup paper's bounds")
    sp.add_argument("--b-b", type=_int_type(0), metavar="B",
                    help="with --groups: group B's block size b (default: --b)")
    sp.add_argument("--root", type=_int_type(0), help="root (default p/2)")
    sp.add_argument("--dist", default="same", help=f"distribution ({dists})")
    sp.add_argument("--b", type=_int_type(0), default=100,
                    help="average block size b in elements (default 100)")
    sp.add_argument("--counts", help="explicit block sizes m_0,...,m_{p-1} instead of --dist/--b")
    sp.add_argument("--datatype", default="int", help="element type: byte, int, double")
    sp.add_argument("--op", help="the reductions' operator (default sum, bor for --datatype "
                                 "byte)")
    params_help(sp, grid=False, skip=("alpha", "beta"))
    sp.add_argument("--alpha", type=_cost, help="latency per message, s (default 1e-6)")
    sp.add_argument("--beta", type=_cost, help="time per byte, s (default 1e-9)")
    sp.add_argument("--gamma", type=_cost, help="time per reduced element, s (default 0)")
    sp.add_argument("--calibrated", nargs="?", const=0, type=_int_type(2), metavar="RANKS",
                    help="simulate with this machine's alpha, beta, gamma from 'tuwviz "
                         "calibrate' (of RANKS ranks; default: --np's if cached, else the "
                         "latest), also for the pipelined ring's Eq. (2); not with "
                         "--alpha/--beta/--gamma")
    sp.add_argument("--seed", type=_int_type(0), default=0,
                    help="seed for the random block sizes of --dist random and spikes "
                         "(default 0)")
    sp.add_argument("--max-messages", type=_int_type(1), default=config.max_model_messages(),
                    help=f"refuse schedules estimated to have more messages (default "
                         f"{config.max_model_messages():,}, or TUWVIZ_MAX_MODEL_MESSAGES)")
    common(sp)

    from .assignment import ASSIGNMENTS
    from .grade import GRADE_BS, GRADE_PS, OPTIMALITY_PS, STALL_LIMIT as GRADE_STALL
    from .performance import PERF_P, PERF_REPS, PERF_SIZES

    sp = sub.add_parser(
        "assignment", help="create a course assignment's workspace (C templates, README)",
        description="Create the workspace of a course assignment in a new directory: C files "
                    "with the exact MPI signatures and TODO markers, the algorithms.toml rows "
                    "naming their functions, and a README. Edit the C files, then run "
                    "'tuwviz grade DIR'. The workspace is compiled together with tuwviz's own "
                    "kernels (TUWVIZ_WORKSPACE=DIR); nothing of tuwviz is copied or edited.",
    )
    asub = sp.add_subparsers(dest="action", metavar="ACTION", required=True,
                             help="new: create a workspace")
    ap = asub.add_parser("new", help="create a workspace",
                         description="Create a new workspace; an existing directory must be "
                                     "empty (nothing is overwritten).")
    ap.add_argument("name", help=f"the assignment: {', '.join(ASSIGNMENTS)}")
    ap.add_argument("directory", help="the workspace to create (new or empty)")

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
    sp.add_argument("--stall-limit", type=_seconds, default=GRADE_STALL, metavar="SECONDS",
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
    sp.add_argument("--perf-np", type=_int_type(3), default=PERF_P, metavar="P",
                    help=f"processes of the performance run, at least 3 for root 2 "
                         f"(default {PERF_P}; more than the cores is labelled oversubscribed)")
    sp.add_argument("--perf-b", default=",".join(map(str, PERF_SIZES)), metavar="BYTES",
                    help=f"block sizes in bytes of the performance run (default "
                         f"{','.join(map(str, PERF_SIZES))})")
    sp.add_argument("--perf-reps", type=_int_type(1, 100_000), default=PERF_REPS,
                    help=f"timed repetitions per size (default {PERF_REPS})")
    common(sp)

    sp = sub.add_parser(
        "lab", help="start JupyterLab on 127.0.0.1 (token on), showing notebooks/",
        description="Start JupyterLab bound to 127.0.0.1 with a token. Its root is the "
                    "repository, so the C kernels (kernels_c/) can be opened and edited next to "
                    "the notebooks; it opens in notebooks/. On a login node, reach it through "
                    "an SSH tunnel (ssh -L 8888:127.0.0.1:8888).",
    )
    sp.add_argument("--port", type=_int_type(1, 65535), default=8888,
                    help="port, 1-65535 (default 8888)")
    sp.add_argument("--ip", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    sp.add_argument("--no-browser", action="store_true", help="do not open a browser")
    sp.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    sp.add_argument("--json", action="store_true",
                    help="print the command as JSON instead of running it")
    return p


def _names(text):
    from .sweep import parse_names

    return parse_names(text)


def cmd_list(args) -> int:
    from .collectives import collective
    from .kernels import algorithms
    from .report import text_table
    from .table import RESTRICTIONS, load_table

    colls = _names(args.collective)
    wanted = None if colls is None else {collective(c).name for c in colls}  # unknown: raises
    listed = [a for a in algorithms() if wanted is None or a.collective in wanted]
    rows = [
        {"collective": a.collective, "algorithm": a.name,
         "model": "yes" if a.model else "-",
         "groups": {"intra": "one", "inter": "two", "any": "one, two"}[a.comm],
         "restrictions": ", ".join(RESTRICTIONS[r] for r in a.restrictions) or "-",
         "in_place": "yes" if a.in_place else "-",
         "parameters": ", ".join(q.name for q in a.params) or "-",
         "description": a.description}
        for a in listed
    ]
    used = {q.name: q for r in load_table() for q in r.params
            if wanted is None or r.collective in wanted}
    if args.json:
        spec = {q.name: {"name": q.name, "option": q.option, "type": q.type,
                         "default": q.default, "min": q.min, "max": q.max, "above": q.above,
                         "choices": list(q.choices), "help": q.help, "c_setter": q.setter}
                for q in used.values()}
        for r, a in zip(rows, listed):  # the full definitions, not just names
            r["parameters"] = [spec[n] for n in r["parameters"].split(", ") if n in spec]
            r["note"] = a.note
        print(json.dumps(rows, indent=2))
        return 0
    print(text_table(rows))
    notes = [a for a in listed if a.note]
    if notes:
        print("\nnotes:")
        for a in notes:
            print(textwrap.fill(a.note, 92, initial_indent=f"  {a.collective}/{a.name}: ",
                                subsequent_indent="    "))
    if used:
        print("\ntuning parameters (set with the option, e.g. --block-bytes 4096, or "
              "params={...} in Python):")
        for q in used.values():
            print(f"  {q.option:<14} {q.describe()}  [C: {q.setter}]")
    return 0


def cmd_verify(args) -> int:
    from .sweep import parse_roots
    from .verify import verify

    # verify() checks everything and builds every case before it starts any rank
    ps, bs = _np_or_groups(args, "1-9"), _b_list(args.b)
    roots = parse_roots(args.roots) if args.roots is not None else None
    colls, algs, dists = _names(args.collective), _names(args.algorithms), _names(args.dist)
    try:
        report = verify(colls, algs, ps, dists, bs, roots, args.seed,
                        progress=not args.json and sys.stderr.isatty(), stall_limit=args.stall_limit,
                        types=_names(args.types), ops=_names(args.ops), groups=args.groups)
    except TuwvizError as exc:
        report = getattr(exc, "report", None)
        if report is None or report.aborted is None:
            raise
        # a rank died or hung: the cases finished before it are results too
        print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
    return 0 if report.ok else 1


def cmd_bench(args) -> int:
    from .bench import bench, bench_cases, check_output, row_fields
    from .collectives import collective
    from .problems import default_distributions, default_op
    from .report import text_table

    if args.study is not None:
        return _bench_study(args)
    if args.collective is None:
        raise ValueError("give a collective (e.g. 'tuwviz bench gatherv') or --study NAME")
    args.algorithms = "native" if args.algorithms is None else args.algorithms
    args.datatype = args.datatype or "int"
    # every argument is checked before anything is measured or written
    ps, bs = _np_or_groups(args, "4"), _b_list(args.b)
    b_b = _b_list(args.b_b, "--b-b") if args.b_b is not None else None
    coll = collective(args.collective)
    if args.root is not None and not coll.rooted:
        raise ValueError(f"--root: {coll.name} has no root")
    algorithms = _names(args.algorithms)
    if not algorithms:
        raise ValueError(f"--algorithms: empty selection {args.algorithms!r}")
    dists = _names(args.dist) or [default_distributions(coll.name)[0]]
    params = _param_grid(args)
    cases = bench_cases(coll.name, algorithms, ps, dists, bs, args.root, args.seed, args.reps,
                        args.warmup, args.time_limit, args.datatype, params,
                        op=args.op or default_op(args.datatype), max_time=args.max_time,
                        groups=args.groups, b_b=b_b, rounds=args.rounds,
                        calibrated=not args.no_calibration, statistic=args.statistic)
    for line in _cost_notes(cases, params, args.no_calibration):
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


def _cost_notes(cases: list[dict], params: dict, off: bool) -> list[str]:
    """What Eq. (2)'s alpha, beta are in a bench run, per number of ranks: calibrated, or
    the defaults and how to calibrate (nothing when no algorithm uses them)."""
    from .bench import COST_PARAMS, uses_cost_model
    from .kernels import find_algorithm
    from .problems import case_ranks

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
        if "alpha" in (c.get("params") or {}):
            a, b = c["params"]["alpha"], c["params"]["beta"]
            notes[n] = (f"{c['algorithm']}: Eq. (2) block size from this machine's calibration "
                        f"of {n} ranks (alpha = {a:.3g} s, beta = {b:.3g} s/B)")
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
    label = "oversubscribed" if first["oversubscribed"] else "not oversubscribed"
    print(f"measured: {first['mpi_library']}, {label}, heavy-yield={first['heavy_yield'] or 'unset'}, "
          f"host(s) {first['hosts']}, commit {first['git_commit']}")
    if first.get("statistic") == "osu":
        print("statistic osu: each rank's mean over repetitions, then min/median/mean/max over "
              "ranks (mean_us = OSU's Avg Latency)")


def _bench_study(args) -> int:
    from .bench import ROW_FIELDS, check_output
    from .report import text_table
    from .study import run_study, study_cases

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
                                              for k in _param_grid(args)}}
    fixed.update({"--groups": args.groups is not None, "--b-b": args.b_b is not None})
    given = [k for k, v in fixed.items() if v]
    if given:
        raise ValueError(f"--study {args.study} chooses {given[0]} itself (the paper's "
                         f"settings); leave it out")
    ps, bs = _np_list(args.np if args.np is not None else "4"), _b_list(args.b)
    study_cases(args.study, ps, bs, reps=args.reps, warmup=args.warmup,
                time_limit=args.time_limit, max_time=args.max_time, seed=args.seed)
    if args.out:
        check_output(args.out, fields=ROW_FIELDS)
        print(f"writing rows to {args.out} as they are measured", file=sys.stderr)
    df = run_study(args.study, ps, bs, out=args.out, reps=args.reps, warmup=args.warmup,
                   time_limit=args.time_limit, max_time=args.max_time, seed=args.seed,
                   progress=not args.no_progress and not args.json,
                   stall_limit=args.stall_limit)
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


def cmd_guidelines(args) -> int:
    from . import guidelines as gl
    from .bench import check_output

    # every argument is checked before anything is measured or written
    mark = gl.check_stats(_names(args.mark) or [], "--mark")
    if args.html:
        check_output(args.html, "--html")
    df = gl.load_results(args.csv)
    layouts = [k for k in gl.LAYOUTS if (df["collective"] == k).any()]
    consistency = any((df["collective"] == gl.GUIDELINES[k].subject.collective).any()
                      for k in gl.CONSISTENCY_GUIDELINES)
    if not layouts and not consistency:
        have = ", ".join(sorted(set(df["collective"])))
        raise ValueError(f"{args.csv} has no rows of {', '.join(gl.LAYOUTS)} or of the "
                         f"reductions (it has {have}); benchmark first, e.g. 'tuwviz bench "
                         f"gatherv --out {args.csv}' or 'tuwviz bench --study circulant --out "
                         f"{args.csv}'")
    if not layouts:
        return _consistency(args, df)
    algorithms = _names(args.algorithms)
    if algorithms:
        have = set(df["algorithm"])
        unknown = [a for a in algorithms if a not in have]
        if unknown:
            raise ValueError(f"--algorithms: {unknown[0]!r} has no rows in {args.csv}; it has: "
                             f"{', '.join(sorted(have))}")
    if args.measure:
        df = _measure_companions(args, df, algorithms=algorithms)
    # one table per collective and p, as in the paper
    tables = [gl.guideline_table(df, k, algorithms=algorithms, mark=mark, p=p,
                                 noise=args.noise)
              for k in layouts for p in gl.table_ps(df, k)]
    if args.html:
        plots = [gl.LAYOUTS[k].plot for k in layouts if gl.LAYOUTS[k].plot]
        figure = gl.guideline_figure(df, plots[0], algorithms=algorithms,
                                     noise=args.noise) if plots else None
        path = gl.save_page(args.html, tables, figure,
                            title=f"tuwviz guidelines: {Path(args.csv).name}")
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        ev = gl.evaluate(df, algorithms=algorithms)
        print(ev.to_json(orient="records", indent=2, force_ascii=False))
        return 0
    print("\n\n".join(t.to_text() for t in tables))
    return 0


def _measure_companions(args, df, guidelines=None, algorithms=None):
    """Measure the companion operations the CSV lacks, append them; return all rows."""
    from . import guidelines as gl
    from .bench import check_output

    missing = gl.missing_operations(df, guidelines, algorithms=algorithms)
    if not missing:
        return df
    check_output(args.csv, "the CSV")  # rows are appended to it
    print(f"measuring {len(missing)} missing companion operation(s), appending to "
          f"{args.csv}:", file=sys.stderr)
    for mo in missing:
        print(f"  {mo.describe()}", file=sys.stderr)
    gl.measure_missing(args.csv, guidelines=guidelines, algorithms=algorithms, reps=args.reps,
                       warmup=args.warmup, seed=args.seed,
                       progress=not args.no_progress and not args.json)
    return gl.load_results(args.csv)


def _consistency(args, df) -> int:
    """The circulant paper's study: Guidelines (2)-(6) per family, Figures 6 and 7."""
    from . import guidelines as gl

    keys = [k for k in gl.CONSISTENCY_GUIDELINES
            if (df["collective"] == gl.GUIDELINES[k].subject.collective).any()]
    if args.measure:
        df = _measure_companions(args, df, guidelines=keys)
    table = gl.consistency_table(df, noise=args.noise)
    if args.html:
        from bokeh.layouts import column

        parts = []
        try:
            parts.append(gl.figure7(df))
        except ValueError as exc:  # no baseline rows: the tables still come
            print(f"no Figure 7: {exc}", file=sys.stderr)
        if (df["collective"] == "reduce_scatter_block").any():
            parts.append(gl.figure6(df))
        path = gl.save_page(args.html, [table], column(*parts) if parts else None,
                            title=f"tuwviz guidelines: {Path(args.csv).name}")
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(table.rows, indent=2, ensure_ascii=False))
        return 0
    print(table.to_text())
    return 0


def cmd_model(args) -> int:
    from . import model
    from .bench import uses_cost_model
    from .collectives import collective
    from .params import check_params
    from .problems import Problem, default_op, make_problem

    info = collective(args.collective)
    if args.root is not None and not info.rooted:
        raise ValueError(f"--root: {info.name} has no root")
    groups = _model_groups(args, info.name)
    kind = "intra" if groups is None else "inter"
    names = [args.algorithm] if args.algorithm else model.algorithms(info.name, kind)
    valid = model.algorithms(info.name, kind)
    for name in names:  # unknown names fail before the problem is built
        if name not in valid:
            raise ValueError(f"no model for algorithm {name!r} of {info.name}; "
                             f"models exist for: {', '.join(valid)}")
    if args.counts is not None:
        from .sweep import parse_int_list

        counts = parse_int_list(args.counts, name="--counts", lo=0,
                                max_values=args.max_messages + 1)
        p = len(counts)
        root = (p // 2 if info.rooted else 0) if args.root is None else args.root
        if root >= p:
            raise ValueError(f"--root: root {root} out of range 0..{p - 1} for the {p} --counts")
        problem = Problem(info.name, p, root, counts, datatype=args.datatype,
                          op=args.op or default_op(args.datatype))
    elif groups is not None:
        problem = make_problem(info.name, groups[0], args.dist, args.b, seed=args.seed,
                               datatype=args.datatype, q=groups[1], b_b=args.b_b)
    else:
        args.np = 8 if args.np is None else args.np
        if args.np - 1 > args.max_messages:  # every model sends at least p - 1 messages
            raise ValueError(
                f"--np {args.np}: a model on p={args.np} needs at least {args.np - 1:,} "
                f"messages, above the bound of {args.max_messages:,}; raise it with "
                f"--max-messages")
        problem = make_problem(info.name, args.np, args.dist, args.b, root=args.root,
                               seed=args.seed, datatype=args.datatype,
                               op=args.op or default_op(args.datatype))
    from .table import load_table

    grid = {k: v[0] for k, v in _param_grid(args).items()}
    cal = _model_cost(args, problem.size)
    gamma_note = ""
    if cal is not None:
        args.alpha, args.beta = cal.alpha, cal.beta
        args.gamma = cal.gamma_for(problem.datatype)
        gamma_note = (f"cost model calibrated on {cal.where()} ({cal.date}): alpha = "
                      f"{cal.alpha:.3g} s, beta = {cal.beta:.3g} s/B, gamma = {args.gamma:.3g} "
                      f"s per {problem.datatype} element")
    out = []
    takes = {name: [q.name for q in load_table().find(problem.collective, name).params]
             if name in model.algorithms(problem.collective) else list(grid) for name in names}
    unused = [k for k in grid if not any(k in valid for valid in takes.values())]
    if unused and not args.algorithm:  # one named algorithm: schedule() names the problem
        raise ValueError(f"no {problem.collective} algorithm takes the parameter {unused[0]}")
    # estimate every schedule's size before building any
    for name in names:
        params = grid if args.algorithm else {k: v for k, v in grid.items() if k in takes[name]}
        params = check_params(problem.collective, name, params, problem.p)
        model.check_messages(problem.collective, name, problem, args.max_messages, **params)
    for name in names:
        # a named algorithm gets every given parameter, so one it does not take is an error
        params = grid if args.algorithm else {k: v for k, v in grid.items() if k in takes[name]}
        if cal is not None and uses_cost_model(takes[name], params):  # as bench gives it
            params = {**params, "alpha": cal.alpha, "beta": cal.beta}
        s = model.schedule(problem.collective, name, problem, max_messages=args.max_messages,
                           **params)
        r = model.simulate(s, args.alpha, args.beta, args.gamma)
        out.append((s, r))
    bounds = _intergroup_bounds(problem) if groups is not None else None
    if args.json:
        rows = [{"schedule": s.to_dict(), "prediction": r.to_dict(), "label": "model",
                 "cost_model": {"alpha": args.alpha, "beta": args.beta, "gamma": args.gamma,
                                "calibration": cal.to_dict() if cal is not None else None}}
                for s, r in out]
        if bounds is not None:
            for row in rows:
                row["bounds_bytes"] = bounds
        print(json.dumps(rows, indent=2))
    else:
        # fit the terminal (or COLUMNS); piped into a file, lines keep their full length
        width = shutil.get_terminal_size((0, 0)).columns or None
        if gamma_note:
            print(textwrap.fill(gamma_note, width or 10**6) + "\n")
        print("\n\n".join(model.format_report(s, r, width=width) for s, r in out))
        if bounds is not None:
            print("\nThe intergroup paper's transfer terms for this problem (bytes; times "
                  f"beta = {args.beta:g} s/B):")
            for name, value in bounds.items():
                print(f"  {name:<26} {value:,.2f}" if isinstance(value, float)
                      else f"  {name:<26} {value:,}")
    return 0


def _model_cost(args, ranks: int):
    """The calibration `tuwviz model --calibrated` simulates with (None without the flag);
    fills in the C defaults of --alpha, --beta, --gamma otherwise."""
    from .params import DEFAULT_ALPHA, DEFAULT_BETA

    if args.calibrated is None:
        args.alpha = DEFAULT_ALPHA if args.alpha is None else args.alpha
        args.beta = DEFAULT_BETA if args.beta is None else args.beta
        args.gamma = 0.0 if args.gamma is None else args.gamma
        return None
    given = [f"--{k}" for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None]
    if given:
        raise ValueError(f"give --calibrated or {given[0]}, not both")
    from .calibrate import load, load_all, local_layout

    layout = local_layout(ranks)
    if args.calibrated:
        cal = load(args.calibrated, {**layout, "ranks": args.calibrated})
        if cal is None:
            raise ValueError(f"--calibrated {args.calibrated}: no calibration of "
                             f"{args.calibrated} ranks here; run 'tuwviz calibrate --np "
                             f"{args.calibrated}'")
        return cal
    cal = load(ranks, layout)
    if cal is None:
        every = load_all(layout)
        if not every:
            raise ValueError("--calibrated: this machine has no calibration yet; run "
                             "'tuwviz calibrate' (or 'tuwviz calibrate --np N' for N ranks)")
        cal = max(every, key=lambda c: c.date)
    return cal


def _model_groups(args, collective_name: str) -> tuple[int, int] | None:
    """--groups for `tuwviz model`: one pair, the model's own bound on its size."""
    if args.groups is None:
        if args.b_b is not None:
            raise ValueError("--b-b (group B's block size) needs --groups P,Q")
        return None
    from .problems import INTERGROUP_COLLECTIVES
    from .sweep import parse_groups

    if args.np is not None or args.counts is not None or args.root is not None:
        raise ValueError("give --groups P,Q or --np/--counts/--root, not both")
    if collective_name not in INTERGROUP_COLLECTIVES:
        raise ValueError(f"--groups is for {', '.join(INTERGROUP_COLLECTIVES)} (on an "
                         f"inter-communicator), not {collective_name}")
    (pair,) = parse_groups(args.groups, max_total=args.max_messages)
    return pair


def _intergroup_bounds(problem) -> dict:
    """The intergroup paper's bounds of `problem` (tuwviz.model.intergroup_cost)."""
    from .model import intergroup_cost as cost

    out = {"lower bound M": cost.lower_bound(problem), "Eq. (2) root gathering": cost.eq_2(problem)}
    if problem.collective == "allgather":
        out["Theorem 1: M + k_B"] = cost.theorem_1(problem)
        out["Algorithm 1 bound"] = cost.algorithm_1_bound(problem)
    out["Theorem 3 (Algorithm 2)"] = round(cost.theorem_3(problem), 2)
    if problem.collective == "allgatherv":
        out["Algorithm 2 bound"] = cost.algorithm_2_bound(problem)
    out["Eq. (5) improvement"] = round(cost.eq_5(problem), 3)
    return out


def cmd_lab(args) -> int:
    # the repository is the root, so kernels_c/ is in Lab's file browser, editable; Lab
    # opens in notebooks/, where a student starts
    repo = Path(__file__).resolve().parent.parent
    jupyter = shutil.which("jupyter", path=os.path.join(sys.prefix, "bin")) or shutil.which("jupyter")
    if jupyter is None:
        raise TuwvizError("jupyter is not installed in this environment: run 'make lab'")
    cmd = [jupyter, "lab", f"--ServerApp.ip={args.ip}", f"--ServerApp.port={args.port}",
           f"--ServerApp.root_dir={repo}", "--LabApp.default_url=/lab/tree/notebooks"]
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
    from . import reaper

    proc = subprocess.Popen(cmd, env=env)
    reaper.watch(proc.pid)  # if this process is killed outright, JupyterLab and its kernels go too
    try:
        return proc.wait()
    finally:
        if proc.poll() is None:
            # SIGTERM lets JupyterLab shut its kernels down (they stop their clusters)
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reaper.forget(proc.pid)


def cmd_assignment(args) -> int:
    from .assignment import new

    ws = new(args.name, args.directory)
    print(f"created {ws}: edit its C files, then run: tuwviz grade {args.directory}")
    return 0


def cmd_grade(args) -> int:
    from .grade import grade, grade_folder, submissions
    from .report import text_table
    from .table import table_path

    # every value is checked here, before any submission is graded
    ps, bs, opt_ps = _np_list(args.np), _b_list(args.b), _np_list(args.opt_np, "--opt-np")
    perf_sizes = _b_list(args.perf_b, "--perf-b")
    if args.performance:
        _np_list(str(args.perf_np), "--perf-np")  # at most the machine's rank limit
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


def cmd_calibrate(args) -> int:
    from .calibrate import calibrate, load, load_all, local_layout
    from .cluster import free_cores
    from .report import text_table

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
    ranks = _np_list(args.np) if args.np is not None else [max(2, free_cores())]
    small = [n for n in ranks if n < 2]
    if small:
        raise ValueError(f"--np {small[0]}: calibrating needs at least 2 ranks (alpha and beta "
                         f"are the costs of messages between them)")
    results = []
    for n in ranks:
        cached = None if args.force else load(n)
        cal = cached or calibrate(n, reps=args.reps, force=True,
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
    from .model.topology.ring import allgatherv_block_elems
    from .params import DEFAULT_ALPHA, DEFAULT_BETA

    p = max(cal.ranks, 3)
    counts = [4 << 20] + [0] * (p - 1)

    def kib(alpha, beta):
        return allgatherv_block_elems(p, counts, 1, 0, alpha, beta) / 1024

    return (f"B = {kib(cal.alpha, cal.beta):,.1f} KiB calibrated, "
            f"{kib(DEFAULT_ALPHA, DEFAULT_BETA):,.1f} KiB with the defaults (1 us, 1 ns/B)"
            + (" (p = 3: Eq. (2) needs D > 0)" if cal.ranks < 3 else ""))


COMMANDS = {"list": cmd_list, "verify": cmd_verify, "bench": cmd_bench,
            "calibrate": cmd_calibrate,
            "guidelines": cmd_guidelines, "model": cmd_model, "lab": cmd_lab,
            "assignment": cmd_assignment, "grade": cmd_grade}


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C, so every clean-up runs."""


_ended_by: list[int] = []


def _terminate(signum, frame) -> None:
    if _ended_by:
        return  # already unwinding: let the clean-up finish
    _ended_by.append(signum)
    raise _Terminated(f"ended by signal {signum}")


#: Commands that append result rows to a CSV as they are measured.
_SAVES_ROWS = ("bench", "guidelines")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tuwviz`` command."""
    try:
        parser = _parser()
    except ValueError as exc:  # a bad TUWVIZ_* setting read for a default
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    import signal

    # `timeout`, schedulers and JupyterLab end a process with SIGTERM; Python's default
    # would die on the spot, leaving mpiexec, ranks and temporary files behind
    previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return COMMANDS[args.command](args)
    except (TuwvizError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, TuwvizError) else 2
    except BrokenPipeError:
        # the reader stopped (`tuwviz model ... | head`): end quietly, as Unix tools do,
        # and keep Python from failing again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as exc:  # e.g. the disk filled up while rows were being written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        how = f"ended by signal {_ended_by[0]}" if _ended_by else "interrupted"
        # only bench and guidelines write rows as they measure
        saved = "; rows measured so far are saved" if args.command in _SAVES_ROWS else ""
        print(f"{how}{saved}", file=sys.stderr)
        return 128 + (_ended_by[0] if _ended_by else signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _ended_by.clear()


if __name__ == "__main__":
    sys.exit(main())
