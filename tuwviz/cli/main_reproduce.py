"""``tuwviz reproduce PAPER``: a paper's tables, figures and headlines, beside the paper's own
numbers, with a verdict per claim (:mod:`tuwviz.reproduce`)."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import sys

from .options import json_option

__all__ = ["configure_parser", "execute"]

PAPER_CHOICES = ("gatherv", "allgatherv", "circulant", "intergroup", "course", "all")


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``reproduce`` subcommand's options."""
    sp = sub.add_parser(
        "reproduce", help="regenerate a paper's tables, figures and headlines, with verdicts",
        description="Check every table, figure and headline claim of a paper against the "
                    "paper's own published numbers (kept in the package, cited): the paper's "
                    "value, its formulas evaluated, the alpha-beta model, SimGrid's SMPI on "
                    "the paper's platform and this machine where it can measure, each "
                    "labelled, and a verdict per claim with its reason: reproduced, "
                    "reproduced in shape, differs, not reproducible here, or derivation "
                    "checked (the paper's own formulas, or the model's algebra under a stated "
                    "assumption, evaluated: counted apart); the report "
                    "says what each means. Writes OUT/report.html "
                    "(offline), OUT/summary.csv and OUT/values.csv; each finished claim is "
                    "saved at once (OUT/PAPER/findings/), so an interrupted run keeps its "
                    "work and a rerun reuses it (--fresh: run everything again). Each claim "
                    "that reads a platform's assumed numbers is judged again with its "
                    "latencies and per-message overhead halved and doubled, and the page "
                    "says whether its verdict survives (--no-vary: not).",
        epilog="papers: gatherv (Träff 2017), allgatherv (Träff et al. 2010), circulant "
               "(Träff et al.), intergroup (Kang et al. 2019), course (TU Wien report 2017). "
               "Scales: quick (minutes: SMPI and this machine at smaller sizes where needed, "
               "said on the page) and paper (the papers' sizes; hours).",
    )
    sp.add_argument("paper", choices=PAPER_CHOICES, metavar="PAPER",
                    help=f"one of {', '.join(PAPER_CHOICES)}")
    sp.add_argument("--scale", choices=("quick", "paper"), default="quick",
                    help="quick (default) or paper")
    sp.add_argument("--out", default="reproduce", metavar="DIR",
                    help="output folder (default ./reproduce)")
    sp.add_argument("--claims", metavar="ID,ID",
                    help="run only these claims (ids as the report and summary.csv name them)")
    sp.add_argument("--fresh", action="store_true",
                    help="run every claim again instead of reusing finished ones")
    sp.add_argument("--no-vary", action="store_true",
                    help="do not judge each claim that reads a platform again with its "
                         "assumed latencies and per-message overhead halved and doubled "
                         "(saves two of every three simulations; the page then cannot say "
                         "whether a verdict survives them)")
    sp.add_argument("--list", action="store_true",
                    help="list the paper's claims with their sources and stop")
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..report import text_table
    from ..reproduce import available, claims_of, reproduce
    from ..reproduce.published import published

    papers = available() if args.paper == "all" else [args.paper]
    if args.list:
        rows = []
        for paper in papers:
            pub = published(paper)
            for c in claims_of(paper, pub):
                e = pub.claim(c.id)
                rows.append({"paper": paper, "claim": c.id, "source": e.get("source", ""),
                             "title": e.get("title", "")})
        print(json.dumps(rows, indent=2) if args.json else text_table(rows))
        return 0
    only = [c.strip() for c in args.claims.split(",") if c.strip()] if args.claims else None
    rep = reproduce(args.paper, args.scale, args.out, only=only, reuse=not args.fresh,
                    progress=not args.json, vary=not args.no_vary)
    if args.json:
        print(json.dumps({"report": str(rep.report), "summary": rep.table(),
                          "counts": rep.counts()}, indent=2))
    else:
        print(text_table([{"paper": r["paper"], "claim": r["claim"], "verdict": r["verdict"]}
                          for r in rep.table()]))
        counts = rep.counts()
        print("verdicts: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v))
        print(f"report: {rep.report}  (tables: {rep.summary_csv}, {rep.values_csv})")
    if rep.failed:
        print(f"error: {len(rep.failed)} claim(s) failed: {', '.join(rep.failed)} "
              f"(their errors are in the report)", file=sys.stderr)
        return 1
    return 0
