"""``tuwviz assignment new``: a course assignment's workspace."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse


__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``assignment`` subcommand's options."""
    from ..course.workspace import ASSIGNMENTS

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
    return sp


def execute(args) -> int:
    from ..course.workspace import new

    ws = new(args.name, args.directory)
    print(f"created {ws}: edit its C files, then run: tuwviz grade {args.directory}")
    return 0
