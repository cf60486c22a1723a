"""Exceptions tuwviz raises; each message is one line a user can act on."""
from __future__ import annotations

__all__ = [
    "TuwvizError",
    "MPINotFoundError",
    "KernelBuildError",
    "KernelError",
    "RankFailure",
    "case_label",
    "TimeLimitExceeded",
    "OutputPathError",
]


class TuwvizError(RuntimeError):
    """Base class of tuwviz's own errors (the CLI prints these without a traceback)."""


class MPINotFoundError(TuwvizError):
    """No MPI, mpi4py or mpicc could be found."""


class KernelBuildError(TuwvizError):
    """The C kernels did not compile; the message holds the compiler's own output."""


class KernelError(TuwvizError):
    """A C kernel returned an MPI error code."""


class RankFailure(TuwvizError):
    """An MPI rank or engine died or raised during a run.

    The message starts with one line naming the rank and what happened; when known, lines
    follow with the case that was running and the rank's last output (a C runtime's or a
    sanitizer's report), so a notebook's traceback shows the same facts as the CLI.

    Attributes
    ----------
    rank : int or None
        The MPI rank that failed first, when known.
    case : dict or None
        The case running when it failed: ``collective, algorithm, p, root, distribution,
        b, params`` and its ``index`` (0-based) among ``of`` cases of the run.
    how : str or None
        How the rank ended, e.g. ``"killed by signal SIGSEGV (Segmentation fault)"`` or
        ``"exited with code 1"``, when the launcher reported it.
    output : list of str
        The last lines the rank printed (or the job, see `output_from`), oldest first.
    output_from : str or None
        Whose lines `output` holds: ``"rank 0"``, or ``"the job"`` when the launcher
        does not tell the ranks' lines apart.
    """

    def __init__(self, message: str, rank: int | None = None, *, case: dict | None = None,
                 how: str | None = None, output: list[str] | None = None,
                 output_from: str | None = None):
        super().__init__(message)
        self.headline = message
        self.rank = rank
        self.case = case
        self.how = how
        self.output = list(output or [])
        self.output_from = output_from

    def __str__(self) -> str:
        lines = [self.headline]
        if self.case:
            c = self.case
            done = f"; {c['index']} finished before it" if c.get("index") else ""
            where = f" (case {c['index'] + 1} of {c['of']}{done})" if "index" in c else ""
            lines.append(f"  running: {case_label(c)}{where}")
        if self.output:
            lines.append(f"  last output of {self.output_from or 'the job'}:")
            lines += [f"    {line}" for line in self.output]
        elif self.output_from:
            lines.append(f"  {self.output_from} printed nothing")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The failure as JSON-able data (for ``tuwviz verify --json``)."""
        return {"error": "RankFailure", "message": self.headline, "rank": self.rank,
                "how": self.how, "case": self.case, "output": self.output,
                "output_from": self.output_from}


def case_label(c: dict, name: bool = True) -> str:
    """``gatherv/linear p=3 root=1 dist=same b=17 block_bytes=64``: one case in words
    (without ``gatherv/linear`` if not `name`; `` types=root-vector`` for a datatype pair;
    ``calibration pingpong p=2 bytes=8`` for a part of ``tuwviz calibrate``)."""
    if c.get("mode") == "calibrate":
        return " ".join([f"calibration {c['what']} p={c['p']}"]
                        + [f"{k}={c[k]}" for k in ("bytes", "count", "datatype") if k in c])
    if c.get("q"):  # two groups
        text = f"groups={c['p']},{c['q']} dist={c['distribution']} b={c['b']},{c.get('b_b')}"
    else:
        text = f"p={c['p']} root={c['root']} dist={c['distribution']} b={c['b']}"
    if name:
        text = f"{c['collective']}/{c['algorithm']} {text}"
    text += f" {c['params']}" if c.get("params") else ""
    if c.get("op") is not None and (c.get("datatype"), c.get("op")) != ("int", "sum"):
        text += f" {c['datatype']}:{c['op']}"  # a reduction's datatype and operator
    if c.get("data", "small") != "small":
        text += f" data={c['data']}"
    return text + (f" types={c['types']}" if c.get("types", "same") != "same" else "")


class TimeLimitExceeded(TuwvizError):
    """A measurement ran longer than its time limit."""


class OutputPathError(ValueError):
    """An output file (``--out``, ``--html``, the CSV to append to) cannot be written.

    A ValueError, so the CLI reports it as bad input (exit status 2), and raised before
    any measurement starts; the message names the path and the system's reason.
    """
