"""``tuwviz verify``: every kernel against the MPI library's collective, byte for byte."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import sys

from ..errors import TuwvizError
from .options import (b_list, backend_from, backend_options, distributions, int_type,
                      json_option, name_list, np_or_groups, stall_option)

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``verify`` subcommand's options."""
    dists = distributions()
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
    sp.add_argument("--seed", type=int_type(0), default=0, help="seed for random sizes and data")
    stall_option(sp)
    backend_options(sp)
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..experiments.sweep import parse_roots
    from ..experiments.verify import verify

    # verify() checks everything and builds every case before it starts any rank
    backend = backend_from(args)
    ps, bs = np_or_groups(args, "1-9", backend), b_list(args.b)
    roots = parse_roots(args.roots) if args.roots is not None else None
    colls, algs, dists = name_list(args.collective), name_list(args.algorithms), name_list(args.dist)
    try:
        report = verify(colls, algs, ps, dists, bs, roots, args.seed,
                        progress=not args.json and sys.stderr.isatty(), stall_limit=args.stall_limit,
                        types=name_list(args.types), ops=name_list(args.ops), groups=args.groups,
                        backend=backend)
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
