"""Plain-text tables for the command line and notebooks."""
from __future__ import annotations

__all__ = ["text_table"]


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
