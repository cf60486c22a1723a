"""``tuwviz list``: the collectives, the algorithm table's rows, their tuning parameters."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import textwrap

from .options import json_option, name_list

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``list`` subcommand's options."""
    sp = sub.add_parser("list", help="list collectives and registered algorithms")
    sp.add_argument("--collective", help="only this collective")
    json_option(sp)
    return sp


def execute(args) -> int:
    from ..collectives import collective
    from ..kernels import algorithms
    from ..report import text_table
    from ..table import RESTRICTIONS, load_table

    colls = name_list(args.collective)
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
