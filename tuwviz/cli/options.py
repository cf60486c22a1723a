"""What the subcommands share: argument types, the common options, the error format.

Every subcommand module (``main_<command>.py``) builds its parser from these, so an option
that two commands take reads and fails the same way in both.  Argument types raise
``argparse.ArgumentTypeError``; list parsers raise ``ValueError`` naming the option, which
:func:`tuwviz.cli.main` prints as one ``error: ...`` line.
"""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse

from .. import config

__all__ = ["Parser", "b_list", "cost_type", "distributions", "int_texts", "int_type",
           "json_option", "launcher_backend", "launcher_option", "name_list", "np_list", "np_or_groups", "param_grid", "params_help",
           "seconds_type", "stall_option"]


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's error format: one line ``error: ...``, exit status 2."""

    def error(self, message: str):
        sub = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        hint = f" (see 'tuwviz {sub} --help')" if sub else " (see 'tuwviz --help')"
        self.exit(2, f"error: {message}{hint}\n")


def json_option(sp) -> None:
    """``--json``: the subcommand prints JSON instead of a table."""
    sp.add_argument("--json", action="store_true", help="print JSON instead of a table")


def distributions() -> str:
    """The distributions' names, for the options that take them."""
    from ..problems import DISTRIBUTIONS

    return ", ".join(DISTRIBUTIONS)


def params_help(sp, grid: bool = True, skip: tuple[str, ...] = ()) -> None:
    """One option per tuning parameter of the algorithm table (``--block-bytes``, ...).

    Derived from the table's ``[parameter.*]`` entries, so a new parameter gets its option
    without an edit here.  `skip` leaves out names the subcommand uses otherwise (``tuwviz
    model`` has its own ``--alpha``/``--beta``: the cost model it simulates with).
    """
    from ..table import load_table

    for q in load_table().parameters.values():
        if q.name in skip:
            continue
        many = "comma-separated values: " if grid and q.type != "int_list" else ""
        default = "" if q.default is None else f" (default {q.default})"
        users = ", ".join(f"{r.collective}/{r.name}" for r in load_table() if q in r.params)
        sp.add_argument(q.option, dest="param_" + q.name, metavar=q.type.upper(),
                        help=f"{many}{q.help}{default}; taken by {users or 'no algorithm'}")


def param_grid(args) -> dict[str, list]:
    """The tuning-parameter options as a grid of values (see tuwviz.params.expand)."""
    from ..table import load_table

    grid: dict[str, list] = {}
    for q in load_table().parameters.values():
        text = getattr(args, "param_" + q.name, None)
        if text is None:
            continue
        try:
            if q.type == "int_list":
                grid[q.name] = [q.check(q.parse(text))]  # one list, e.g. one node map
            elif q.type == "int":
                grid[q.name] = [q.check(v) for v in int_texts(text)]
            else:
                grid[q.name] = [q.check(v) for v in name_list(text) or []]
            if not grid[q.name] or grid[q.name] == [[]]:
                raise ValueError(f"empty selection: {text!r} gives no values")
        except ValueError as exc:
            raise ValueError(f"{q.option}: {exc}") from None
    return grid


def int_texts(text: str) -> list[str]:
    """Comma-separated integers as text, checked exactly by the parameter (no ranges:
    a value like 9223372036854775808 must reach the bound check unchanged)."""
    from ..experiments.sweep import MAX_LIST_VALUES

    items = [t.strip() for t in text.split(",") if t.strip()]
    if len(items) > MAX_LIST_VALUES:
        raise ValueError(f"{len(items)} values, at most {MAX_LIST_VALUES} allowed")
    return items


def int_type(lo: int | None = None, hi: int | None = None):
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


def cost_type(text: str) -> float:
    """An argparse type: a finite number >= 0 (a cost or a time)."""
    import math

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return v


def seconds_type(text: str) -> float:
    """An argparse type: a finite number of seconds > 0."""
    v = cost_type(text)
    if v == 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return v


def stall_option(sp) -> None:
    """``--stall-limit``: the no-progress limit of the runs a subcommand starts."""
    from ..run.launch import STALL_LIMIT

    sp.add_argument("--stall-limit", type=seconds_type, default=STALL_LIMIT, metavar="SECONDS",
                    help=f"stop a run that makes no progress for this long, naming the ranks "
                         f"that stopped responding (default {STALL_LIMIT:g}; a rank silent "
                         f"for 30 s is named at once)")


def np_list(text: str, name: str = "--np", backend=None) -> list[int]:
    """``--np`` of verify, bench and grade: at most the machine's rank limit (or, simulated,
    the platform's cores), checked while parsing (``1-10000000`` fails at once)."""
    from ..experiments.sweep import parse_int_list
    from ..experiments.verify import RANKS_HINT

    plat = getattr(backend, "platform", None)
    if plat is not None:
        where = (f"{plat.size} cores" if not backend.ppn else
                 f"{plat.nodes} nodes x {backend.ppn} per node = {backend.capacity}")
        return parse_int_list(text, name=name, lo=1, hi=backend.capacity,
                              hint=f" ranks (platform {plat.name} has {where})")
    return parse_int_list(text, name=name, lo=1, hi=config.max_ranks(), hint=RANKS_HINT)


def np_or_groups(args, default: str, backend=None) -> list[int]:
    """The --np list (`default` if not given); an error if --groups is given too."""
    if args.groups is not None and args.np is not None:
        raise ValueError("give --np (one group) or --groups (two groups), not both")
    return np_list(args.np if args.np is not None else default, backend=backend)


#: Where ranks run: real MPI ranks on this machine, or SimGrid's simulated ranks.
BACKENDS = ("mpiexec", "smpi")
#: What starts the real ranks (:data:`tuwviz.run.slurm.LAUNCHERS`; kept here as text so
#: that building the parser imports nothing).
LAUNCHERS = ("auto", "mpiexec", "srun")


def launcher_option(sp) -> None:
    """``--launcher``: mpiexec on this machine, or SLURM's srun."""
    sp.add_argument("--launcher", choices=LAUNCHERS, default="auto",
                    help="what starts the real MPI ranks: mpiexec (this machine), srun (SLURM: "
                         "the nodes of the allocation this command runs in, salloc or sbatch; "
                         "with pip's MPICH through mpiexec.hydra -bootstrap slurm, or srun "
                         "--mpi=$TUWVIZ_SLURM_MPI if that is set to a PMI plugin; "
                         "outside one, it asks for a job itself and waits at most "
                         "$TUWVIZ_SLURM_PENDING s, default 300, with $TUWVIZ_SLURM_PARTITION, "
                         "_ACCOUNT, _TIME, _OPTIONS), or auto (default: srun inside an "
                         "allocation, i.e. when SLURM_JOB_ID is set, else mpiexec). Rows record "
                         "the launcher, the SLURM job and its nodes")


def launcher_backend(args):
    """The backend for ``--launcher``: None for this machine's mpiexec, else an srun one."""
    from ..run.launch import mpiexec_backend
    from ..run.slurm import choose_launcher

    if choose_launcher(getattr(args, "launcher", "auto")) == "mpiexec":
        return None
    return mpiexec_backend(getattr(args, "stall_limit", None), launcher="srun")


def backend_options(sp) -> None:
    """``--backend``, ``--platform``, ``--selector``: real ranks here, or simulated ones."""
    sp.add_argument("--backend", choices=BACKENDS, default=None,
                    help="where the ranks run: mpiexec (real MPI ranks on this machine, the "
                         "default) or smpi (SimGrid's simulated ranks on --platform: the same "
                         "C kernels, simulated time, SMPI's collectives as the library)")
    sp.add_argument("--platform", metavar="NAME",
                    help="the simulated machine for --backend smpi: a name 'tuwviz platforms' "
                         "lists (the papers' clusters) or the path of a platform .toml file")
    sp.add_argument("--selector", default=None, metavar="NAME",
                    help="whose collective algorithms SMPI's library runs: mpich (default), "
                         "ompi, mvapich2 or impi (recorded in the rows)")
    sp.add_argument("--ppn", type=int, default=None, metavar="N",
                    help="processes per node for --backend smpi: fill each node with N ranks "
                         "before the next (default: one per core; the allgatherv paper runs "
                         "1, so that every message crosses the network)")
    launcher_option(sp)


def backend_from(args):
    """The SMPI backend the options ask for, an srun one (``--launcher``), or None for
    mpiexec (after checking that no SMPI option was given without it)."""
    backend = args.backend or ("smpi" if args.platform else "mpiexec")
    if backend == "mpiexec":
        if args.platform or args.selector or args.ppn is not None:
            raise ValueError("--platform, --selector and --ppn are for --backend smpi")
        return launcher_backend(args)
    if args.launcher not in ("auto", None):
        raise ValueError("--launcher is for real ranks; --backend smpi simulates them")
    if not args.platform:
        from ..platforms import platforms

        raise ValueError(f"--backend smpi needs --platform: one of "
                         f"{', '.join(sorted(platforms()))} (or a platform .toml file)")
    from ..run.smpi import DEFAULT_SELECTOR, smpi_backend

    return smpi_backend(args.platform, args.selector or DEFAULT_SELECTOR,
                        stall_limit=getattr(args, "stall_limit", None), ppn=args.ppn)


def b_list(text: str, name: str = "--b") -> list[int]:
    from ..problems import MAX_COUNT
    from ..experiments.sweep import parse_int_list

    return parse_int_list(text, name=name, lo=0, hi=MAX_COUNT)


def name_list(text):
    from ..experiments.sweep import parse_names

    return parse_names(text)
