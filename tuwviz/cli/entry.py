"""The ``tuwviz`` command: the top-level parser, the subcommands, errors and signals.

Each subcommand is one module, ``main_<command>.py``, with ``configure_parser(sub)`` and
``execute(args)``; :data:`COMMANDS` lists them in the order ``tuwviz --help`` shows.  Every
subcommand prints a readable table by default and JSON with ``--json``.  Errors print one
line, ``error: ...``, and exit with status 2 (bad input) or 1 (a failed run or failed
verification); tracebacks are for bugs only.
"""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import TuwvizError
from . import (main_assignment, main_bench, main_calibrate, main_grade, main_guidelines,
               main_lab, main_list, main_model, main_platforms, main_reproduce, main_verify)
from .options import Parser

__all__ = ["COMMANDS", "build_parser", "main"]

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
  tuwviz platforms                                  # the papers' machines, simulated by SimGrid
  tuwviz verify --platform gatherv-ib36 --np 64,576 --collective gatherv
  tuwviz bench allgatherv --platform anl-gige --np 96 --dist broadcast --b 100000 \\
      --algorithms native,ring,pipelined
  tuwviz model gatherv linear --np 8 --dist random --b 100 --json
  tuwviz reproduce allgatherv                       # the paper's claims, checked: reproduce/report.html
  tuwviz reproduce all --scale quick --out repro
  tuwviz lab
  tuwviz assignment new gather-scatter my_work      # a course workspace to edit
  tuwviz grade my_work                              # build, check against the library
"""

#: Subcommand name -> its module, in the order of ``tuwviz --help``.
COMMANDS = {"list": main_list, "verify": main_verify, "bench": main_bench,
            "calibrate": main_calibrate, "guidelines": main_guidelines, "model": main_model,
            "platforms": main_platforms, "reproduce": main_reproduce,
            "assignment": main_assignment, "grade": main_grade,
            "lab": main_lab}
#: Other names of a subcommand (``tuwviz platform calibrate`` reads better than platforms).
ALIASES = {"platform": "platforms"}


def build_parser() -> argparse.ArgumentParser:
    """The ``tuwviz`` parser with every subcommand's options."""
    p = Parser(
        prog="tuwviz",
        description="Teach, explore and reproduce MPI collective algorithms: run C kernels on "
                    "real MPI ranks, check them against the MPI library, time them side by "
                    "side, and predict their cost with an alpha-beta-gamma model.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS.values():
        command.configure_parser(sub)
    return p


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
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    import signal

    # `timeout`, schedulers and JupyterLab end a process with SIGTERM; Python's default
    # would die on the spot, leaving mpiexec, ranks and temporary files behind
    previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return COMMANDS[ALIASES.get(args.command, args.command)].execute(args)
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
    except KeyboardInterrupt as exc:
        how = f"ended by signal {_ended_by[0]}" if _ended_by else "interrupted"
        # only bench and guidelines write rows as they measure; reproduce says what it kept
        saved = "; rows measured so far are saved" if args.command in _SAVES_ROWS else ""
        if args.command == "reproduce" and str(exc) and not isinstance(exc, _Terminated):
            saved = f"; {exc}"
        print(f"{how}{saved}", file=sys.stderr)
        return 128 + (_ended_by[0] if _ended_by else signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _ended_by.clear()
