"""Plain-text tables for the command line and notebooks."""
from __future__ import annotations

__all__ = ["ranges", "size_label", "text_table"]


def ranges(values) -> str:
    """Sorted integers with runs of three or more shortened, for messages.

    Examples
    --------
    >>> ranges([5, 0, 1, 2, 3, 7, 8])
    '0-3, 5, 7, 8'
    """
    out, run = [], []
    for v in sorted(values):
        if run and v != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)))
            run = []
        run.append(v)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)))
    return ", ".join(out)


def size_label(nbytes: int) -> str:
    """A size in decimal units, as the course report's axes give it.

    Examples
    --------
    >>> size_label(1), size_label(10_000), size_label(1_000_000), size_label(1500)
    ('1 B', '10 kB', '1 MB', '1500 B')
    """
    for unit, scale in (("MB", 10**6), ("kB", 10**3)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def text_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """Format dict rows as an aligned text table.

    Examples
    --------
    >>> print(text_table([{"a": 1, "b": 2.5}, {"a": 10, "b": 0.25}]))
    a   b
    --  ----
    1   2.50
    10  0.25
    """
    if not rows:
        return "(no rows)"
    columns = columns or list(rows[0])
    cells = [[_fmt(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)
