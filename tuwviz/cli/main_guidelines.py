"""``tuwviz guidelines``: the papers' performance guidelines checked on a bench CSV."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import sys
from pathlib import Path

from .options import int_type, json_option, launcher_backend, launcher_option, name_list

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``guidelines`` subcommand's options."""
    sp = sub.add_parser(
        "guidelines", help="check performance guidelines on a bench CSV; print the paper's table",
        description="Evaluate the performance guidelines declared in tuwviz.analysis.guidelines (for "
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
    sp.add_argument("--reps", type=int_type(1),
                    help="repetitions for new measurements (default: the CSV's)")
    sp.add_argument("--warmup", type=int_type(0),
                    help="warm-up calls for new measurements (default: the CSV's)")
    sp.add_argument("--seed", type=int_type(0), default=0,
                    help="seed the CSV was measured with (for random block sizes; default 0)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    launcher_option(sp)
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..analysis import guidelines as gl
    from ..experiments.bench import check_output

    # every argument is checked before anything is measured or written
    mark = gl.check_stats(name_list(args.mark) or [], "--mark")
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
    algorithms = name_list(args.algorithms)
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
    from ..analysis import guidelines as gl
    from ..experiments.bench import check_output

    missing = gl.missing_operations(df, guidelines, algorithms=algorithms)
    if not missing:
        return df
    check_output(args.csv, "the CSV")  # rows are appended to it
    print(f"measuring {len(missing)} missing companion operation(s), appending to "
          f"{args.csv}:", file=sys.stderr)
    for mo in missing:
        print(f"  {mo.describe()}", file=sys.stderr)
    gl.measure_missing(args.csv, guidelines=guidelines, algorithms=algorithms, reps=args.reps,
                       warmup=args.warmup, seed=args.seed, backend=launcher_backend(args),
                       progress=not args.no_progress and not args.json)
    return gl.load_results(args.csv)


def _consistency(args, df) -> int:
    """The circulant paper's study: Guidelines (2)-(6) per family, Figures 6 and 7."""
    from ..analysis import guidelines as gl

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
