"""Guideline tables in a paper's layout, as text and HTML, with violations marked.

A :class:`TableLayout` (see :data:`LAYOUTS`) says which fixed column pairs a paper's table
has before one pair per algorithm under test, and which guidelines it marks.
:func:`guideline_table` fills a layout from benchmark rows and :func:`evaluate`'s verdicts;
the :class:`GuidelineTable` it returns prints as aligned text (violations starred and
listed in words) and renders as an HTML ``<table>`` (violations red and bold); each
medium's caption says how that medium marks.  :func:`gatherv_table` is the gatherv
paper's Tables 1-5.

Only violations beyond the run's own noise are marked (``noise=True``, the default): the
excess ``lhs - rhs`` must be larger than the spread of the repetitions, median - min
(see :mod:`~tuwviz.analysis.guidelines.evaluate`).  Smaller excesses are not marked but counted,
and the caption says how many there are and what the thresholds were; on 4 ranks sharing
2 cores that turns some 30 "violations" of jitter into a count.

Examples
--------
>>> lay = LAYOUTS["gatherv"]
>>> [c.title for c in lay.columns], lay.guidelines
(['MPI_Gather', 'Guideline (2)'], ('gatherv-1', 'gatherv-2'))
>>> Column("MPI_Gather")
Traceback (most recent call last):
...
ValueError: column MPI_Gather: give an operation or a guideline side
"""
from __future__ import annotations

import html as _html
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from ...collectives import collective as collective_info
from ...run.metadata import measured_where
from .data import GUIDELINES, PAPERS, STATS, Operation, algorithm_title, problem_title
from .evaluate import evaluate
from .load import load_results
from .rows import _Index, _need, _problems, _subject_algorithms

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    import pandas as pd

__all__ = [
    "HTML_TABLE_STYLE",
    "LAYOUTS",
    "Column",
    "GuidelineTable",
    "TableLayout",
    "breakable",
    "check_stats",
    "gatherv_table",
    "guideline_table",
    "table_ps",
]

#: Inline style of tuwviz's HTML tables: compact (small type, narrow padding), so that a
#: paper's table fits a notebook beside JupyterLab's file browser.
HTML_TABLE_STYLE = "border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:0.85em"


def breakable(text: str) -> str:
    """`text` HTML-escaped, with a line-break opportunity after each ``_`` and ``+``.

    Examples
    --------
    >>> breakable("Binomial_Gatherv")
    'Binomial_<wbr>Gatherv'
    """
    return _html.escape(text).replace("_", "_<wbr>").replace("+", "+<wbr>")


@dataclass(frozen=True)
class Column:
    """A column pair (one cell per statistic) of a guideline table, before the algorithms.

    Either a fixed measured `operation`, or one `side` of a `guideline` whose side does not
    contain the operation under test (e.g. the right side of Guideline (2)).
    """

    title: str
    operation: Operation | None = None
    guideline: str | None = None
    side: str = "rhs"

    def __post_init__(self) -> None:
        if (self.operation is None) == (self.guideline is None):
            raise ValueError(f"column {self.title}: give an operation or a guideline side")
        if self.guideline is not None:
            g = GUIDELINES[self.guideline]
            if self.side not in ("lhs", "rhs") or g.subject_side == self.side:
                raise ValueError(f"column {self.title}: side must be the side of "
                                 f"{g.name} without the operation under test")


@dataclass(frozen=True)
class TableLayout:
    """The layout of a paper's table: fixed columns, then one column per algorithm under test.

    A violation is marked in the column of the operation on the guideline's left side:
    the algorithm's own column when the operation under test is on the left; a fixed
    column showing the left side's operation otherwise, judged against the library's
    algorithm (``native``) under test, as the paper does.
    """

    collective: str
    columns: tuple[Column, ...]
    guidelines: tuple[str, ...]
    title: str
    paper: str
    plot: str | None = None  # the guideline to plot against its bound


#: How each medium marks a violated cell, as its caption says it.
_MARKED = {"text": "Numbers followed by *", "html": "Numbers in red, bold font"}

#: Table layouts by the collective under test.
LAYOUTS: dict[str, TableLayout] = {
    "gatherv": TableLayout(
        "gatherv",
        (Column("MPI_Gather", Operation("gather", "padded")),
         Column("Guideline (2)", guideline="gatherv-2", side="rhs")),
        ("gatherv-1", "gatherv-2"),
        "Irregular gather and the gatherv paper's guidelines (layout of its Tables 1-5)",
        PAPERS["gatherv"],
        plot="gatherv-2",
    ),
}


@dataclass
class GuidelineTable:
    """A table in a paper's layout with its guideline violations; see :func:`guideline_table`.

    Attributes
    ----------
    layout : TableLayout
    columns : list of str
        Column-pair titles, in order.
    stats : list of str
        Statistics per column pair (``avg``, ``min``).
    rows : list of dict
        Per problem: ``problem`` (p, root, distribution, b, m, m_prime, ...), ``cells``
        ``{(title, stat): µs or None}``, ``marks`` ``{(title, stat): [violation]}``,
        ``within`` (the same for differences within the noise) and ``noise``
        ``{(title, stat): µs}``, the threshold of each cell a guideline is judged in.
    violations : list of dict
        Every marked cell: guideline, column, algorithm, problem, stat, lhs, rhs, factor,
        noise (µs) and ``text`` (one sentence).
    evaluation : pandas.DataFrame
        :func:`evaluate`'s table behind the marks.
    caption : str
        Where and how the times were measured, the same in every medium.
    show_p : bool
        Whether rows are labelled with p and root (more than one in the results).
    notes : str
        What a mark means, the noise rule with its thresholds and counts, and what the
        bound column sums; :meth:`caption_for` puts the medium's way of marking first.
    within_noise : list of dict
        Cells where the left side exceeds the right but by no more than the run's noise:
        not marked, counted in the caption (same keys as `violations`).
    noise : bool
        Whether marks are limited to violations beyond the run's noise.
    """

    layout: TableLayout
    columns: list[str]
    stats: list[str]
    rows: list[dict]
    violations: list[dict]
    evaluation: "pd.DataFrame"
    caption: str
    show_p: bool = False
    notes: str = ""
    within_noise: list[dict] = field(default_factory=list)
    noise: bool = True

    def caption_for(self, medium: str = "text") -> str:
        """The caption as `medium` shows it: ``"text"`` marks with ``*``, ``"html"`` red and bold.

        Raises
        ------
        ValueError
            For another medium.
        """
        if medium not in _MARKED:
            raise ValueError(f"medium not supported: {medium}; media: {', '.join(_MARKED)}")
        return f"{self.caption} {_MARKED[medium]} {self.notes}"

    def frame(self) -> "pd.DataFrame":
        """The cells as a DataFrame: index (problem, m, m'), columns (title, stat)."""
        import pandas as pd

        index_names = (["p", "root"] if self.show_p else []) + ["problem", "m", "m'"]
        index = [tuple(([r["problem"]["p"], r["problem"]["root"]] if self.show_p else [])
                       + [problem_title(r["problem"]["distribution"]), r["problem"]["m"],
                          r["problem"]["m_prime"]]) for r in self.rows]
        cols = pd.MultiIndex.from_tuples([(c, s) for c in self.columns for s in self.stats])
        data = [[r["cells"].get(k) for k in cols] for r in self.rows]
        return pd.DataFrame(data, index=pd.MultiIndex.from_tuples(index, names=index_names),
                            columns=cols)

    # text ---------------------------------------------------------------------------------
    def to_text(self) -> str:
        """Aligned text: two header lines, ``*`` after violated cells, violations in words."""
        lead = (["p", "root"] if self.show_p else []) + ["Problem", "m", "m'"]
        body = []
        last = None
        for r in self.rows:
            pr = r["problem"]
            group = (pr["p"], pr["root"], pr["distribution"])
            name = problem_title(pr["distribution"]) if group != last else ""
            last = group
            cells = ([str(pr["p"]), str(pr["root"])] if self.show_p else []) + \
                [name, str(pr["m"]), str(pr["m_prime"])]
            for c in self.columns:
                for s in self.stats:
                    v = r["cells"].get((c, s))
                    text = "-" if v is None else f"{v:.2f}"
                    cells.append(text + ("*" if (c, s) in r["marks"] else " "))
            body.append(cells)
        n_lead = len(lead)
        widths = [max(len(lead[i]), *(len(b[i]) for b in body)) for i in range(n_lead)]
        pair_w = []
        for j, c in enumerate(self.columns):
            ws = [max(len(s) + 1, *(len(b[n_lead + j * len(self.stats) + k]) for b in body))
                  for k, s in enumerate(self.stats)]
            extra = len(c) - (sum(ws) + 2 * (len(ws) - 1))
            if extra > 0:
                ws[-1] += extra
            pair_w.append(ws)
        flat_w = widths + [w for ws in pair_w for w in ws]
        head1 = "  ".join([l.ljust(w) for l, w in zip(lead, widths)]
                          + [c.ljust(sum(ws) + 2 * (len(ws) - 1)) for c, ws in zip(self.columns, pair_w)])
        head2 = "  ".join([" " * w for w in widths]
                          + [s.rjust(w - 1) + " " for ws in pair_w for s, w in zip(self.stats, ws)])
        lines = [self.caption_for("text"), "", head1.rstrip(), head2.rstrip(),
                 "  ".join("-" * w for w in flat_w)]
        for b in body:
            lines.append("  ".join([v.ljust(w) for v, w in zip(b[:n_lead], widths)]
                                   + [v.rjust(w) for v, w in zip(b[n_lead:], flat_w[n_lead:])]).rstrip())
        lines.append("")
        lines.extend(self.violation_lines())
        return "\n".join(lines)

    def violation_lines(self, marked: str = "* above") -> list[str]:
        """The violations in words, one per line (or a line saying there are none), then
        how many differences within the run's noise were not marked."""
        beyond = " beyond the run's noise" if self.noise else ""
        if self.violations:
            gs = [GUIDELINES[k] for k in self.layout.guidelines]
            head = (f"Violations{beyond} ({marked}; "
                    + "; ".join(f"{g.name}: {g.statement}" for g in gs) + "):")
            lines = [head] + [f"  {v['text']}" for v in self.violations]
        else:
            lines = [f"No guideline violations{beyond}."]
        if self.within_noise:
            lines.append(f"{_count(len(self.within_noise), 'difference')} within the run's "
                         f"noise not marked.")
        return lines

    def __str__(self) -> str:
        return self.to_text()

    # HTML ---------------------------------------------------------------------------------
    def to_html(self, list_violations: bool = True) -> str:
        """A ``<table>`` (caption, two header rows, problem names spanning their rows),
        violated cells red and bold, then (optionally) the violations in words.

        Every value cell carries ``data-column``, ``data-stat``, ``data-distribution``,
        ``data-b``, ``data-m`` and ``data-m-prime`` attributes; a cell a guideline is judged
        in also ``data-noise-us`` (the comparison's noise threshold).  Violated cells have
        ``class="violation"`` and a ``title`` saying which guideline and by how much;
        cells whose excess is within the noise ``class="within-noise"`` (not styled) and a
        ``title`` saying so.
        """
        esc = _html.escape
        lead = (["p", "root"] if self.show_p else []) + ["Problem", "m", "m'"]
        out = [f'<table class="tuwviz-guideline-table" style="{HTML_TABLE_STYLE}">',
               f'<caption style="caption-side:top;text-align:left;max-width:60em">'
               f'{esc(self.caption_for("html"))}</caption>', "<thead>", "<tr>"]
        th = 'style="padding:1px 4px;border-bottom:1px solid #999"'
        out += [f'<th rowspan="2" {th}>{esc(c)}</th>' for c in lead]
        out += [f'<th colspan="{len(self.stats)}" {th}>{breakable(c)}</th>' for c in self.columns]
        out += ["</tr>", "<tr>"]
        out += [f'<th {th}>{esc(s)}</th>' for _ in self.columns for s in self.stats]
        out += ["</tr>", "</thead>", "<tbody>"]
        spans: dict[int, int] = {}
        last, start = None, 0
        for i, r in enumerate(self.rows):
            pr = r["problem"]
            group = (pr["p"], pr["root"], pr["distribution"])
            if group != last:
                start, last = i, group
            spans[start] = spans.get(start, 0) + 1
        td = "padding:1px 4px;text-align:right"
        for i, r in enumerate(self.rows):
            pr = r["problem"]
            attrs = (f'data-distribution="{esc(pr["distribution"])}" data-b="{pr["b"]}" '
                     f'data-m="{pr["m"]}" data-m-prime="{pr["m_prime"]}" data-p="{pr["p"]}"')
            out.append(f"<tr {attrs}>")
            if self.show_p:
                out.append(f'<td style="{td}">{pr["p"]}</td><td style="{td}">{pr["root"]}</td>')
            if i in spans:
                out.append(f'<th rowspan="{spans[i]}" style="text-align:left;vertical-align:top;'
                           f'padding:1px 4px">{esc(problem_title(pr["distribution"]))}</th>')
            out.append(f'<td style="{td}">{pr["m"]}</td><td style="{td}">{pr["m_prime"]}</td>')
            for c in self.columns:
                for s in self.stats:
                    v = r["cells"].get((c, s))
                    text = "–" if v is None else f"{v:.2f}"
                    cell = f'data-column="{esc(c)}" data-stat="{s}" {attrs}'
                    noise = r.get("noise", {}).get((c, s))
                    if noise is not None:
                        cell += f' data-noise-us="{noise:.2f}"'
                    marks = r["marks"].get((c, s))
                    within = r.get("within", {}).get((c, s))
                    if marks:
                        why = "; ".join(f"{m['guideline_name']}: {m['lhs']:.2f} > {m['rhs']:.2f} "
                                        f"(×{m['factor']:.3g}; noise {m['noise']:.2f} µs)"
                                        for m in marks)
                        out.append(f'<td class="violation" {cell} title="{esc(why)}" '
                                   f'style="{td};color:#d00000;font-weight:bold">{text}</td>')
                    elif within:
                        why = "; ".join(f"{m['guideline_name']}: {m['lhs']:.2f} > {m['rhs']:.2f} "
                                        f"by {m['lhs'] - m['rhs']:.2f} µs, within the run's "
                                        f"noise of {m['noise']:.2f} µs: not marked"
                                        for m in within)
                        out.append(f'<td class="within-noise" {cell} title="{esc(why)}" '
                                   f'style="{td}">{text}</td>')
                    else:
                        out.append(f'<td {cell} style="{td}">{text}</td>')
            out.append("</tr>")
        out += ["</tbody>", "</table>"]
        if list_violations:
            lines = self.violation_lines("red and bold above")
            out.append(f'<p class="tuwviz-violations-head">{esc(lines[0])}</p>')
            if self.violations:
                out.append('<ul class="tuwviz-violations">')
                out += [f"<li>{esc(v['text'])}</li>" for v in self.violations]
                out.append("</ul>")
            if self.within_noise:
                out.append(f'<p class="tuwviz-within-noise">{esc(lines[-1])}</p>')
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return self.to_html()


def _count(n: int, word: str) -> str:
    """``1 violation``, ``3 violations``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _caption(layout: TableLayout, used: "pd.DataFrame", stats, ps) -> str:
    ps_text = ", ".join(f"p = {p}" + (f" (root {r})" if r is not None else "") for p, r in ps)
    libs = "; ".join(sorted(set(used["mpi_library"])))
    reps = "/".join(str(v) for v in sorted(set(used["reps"])))
    warm = "/".join(str(v) for v in sorted(set(used["warmup"])))
    stat_words = {"avg": "average (avg, no outlier removal)", "min": "minimum (min)",
                  "median": "median"}
    return (f"{layout.title}: {collective_info(layout.collective).mpi_name}, {ps_text}; "
            f"{measured_where(used)}; MPI library {libs}; {reps} repetitions after {warm} "
            f"warm-up calls, {' and '.join(stat_words[s] for s in stats)} times in µs.")


def _notes(layout: TableLayout, mark_rules, noise: bool, thresholds: list[float],
           n_marked: int, n_within: int) -> str:
    """What follows the medium's marking words in a caption (see :meth:`caption_for`)."""
    marks = "; ".join(f"{GUIDELINES[g].name} ({GUIDELINES[g].statement}) in {where}"
                      for g, where in mark_rules)
    bound = "".join(
        f" The {c.title} column is the sum of the separately measured "
        f"{' and '.join(op.describe() for op in getattr(GUIDELINES[c.guideline], c.side))} times."
        for c in layout.columns if c.guideline)
    if not noise:
        return (f"violate a performance guideline, however small the difference: {marks}. "
                f"{_count(n_marked, 'violation')} marked; the run's noise is not "
                f"considered.{bound}")
    lo, hi = (min(thresholds), max(thresholds)) if thresholds else (0.0, 0.0)
    here = f"{lo:.2f} µs" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f} µs"
    return (f"violate a performance guideline by more than the run's noise: {marks}. "
            f"A difference counts only when the left side exceeds the right by more than "
            f"the larger of the two sides' spreads, a side's spread being median - min of "
            f"the repetitions summed over its operations (here {here}). "
            f"{_count(n_marked, 'violation')} beyond the run's noise; "
            f"{_count(n_within, 'difference')} within noise not marked.{bound}")


def check_stats(names: Iterable[str], what: str = "mark") -> list[str]:
    """`names` as a list if every one is a key of :data:`STATS`; else ValueError naming them.

    Examples
    --------
    >>> check_stats(["min"])
    ['min']
    >>> check_stats(["foo"])
    Traceback (most recent call last):
    ...
    ValueError: mark: unknown statistic 'foo'; valid statistics: avg, min, median
    """
    names = [names] if isinstance(names, str) else list(names)
    for n in names:
        if n not in STATS:
            raise ValueError(f"{what}: unknown statistic {n!r}; valid statistics: "
                             f"{', '.join(STATS)}")
    return names


def guideline_table(
    results: "pd.DataFrame | str | os.PathLike",
    layout: str | TableLayout = "gatherv",
    algorithms: Iterable[str] | None = None,
    stats: Iterable[str] = ("avg", "min"),
    mark: Iterable[str] = ("avg", "min"),
    slack: float = 1.0,
    p: int | None = None,
    noise: bool = True,
) -> GuidelineTable:
    """Lay benchmark rows out as a paper's guideline table, violations marked.

    Rows are problems (distribution, m, m'; with p and root when the table has several),
    columns the layout's fixed column pairs and one pair per algorithm under test, each pair
    one cell per statistic.  Like the paper's tables, one table is usually for one p
    (see `p` and :func:`table_ps`).

    Parameters
    ----------
    results : DataFrame or path
        Bench rows including the companion operations (see :func:`measure_missing`).
    layout : str or TableLayout
        Key of :data:`LAYOUTS` (the collective under test) or a layout.
    algorithms : iterable of str, optional
        Algorithms of the collective under test to show (default: every one in the
        results, ``native`` first).
    stats : iterable of str
        Statistics per column pair.
    mark : iterable of str
        Statistics whose violations are marked.  The paper's tables mark the minimum only
        (``mark=("min",)``); by default both are marked.
    slack : float
        See :func:`evaluate`.
    p : int, optional
        Only the problems (and companion rows) with this number of processes.
    noise : bool
        Mark only violations beyond the run's noise (``lhs - slack * rhs`` larger than the
        repetitions' spread, see :func:`evaluate`) and count the others in the caption;
        ``False`` marks every ``lhs > slack * rhs``, as the paper's tables do.

    Returns
    -------
    GuidelineTable

    Raises
    ------
    MissingMeasurements
        If a companion operation was not measured.
    ValueError
        If the results have no rows of the layout's collective, or for unknown algorithms.
    """
    df = load_results(results)
    lay = LAYOUTS[layout] if isinstance(layout, str) and layout in LAYOUTS else layout
    if not isinstance(lay, TableLayout):
        raise ValueError(f"layout not supported: {layout}; layouts: {', '.join(LAYOUTS)}")
    coll = lay.collective
    if not (df["collective"] == coll).any():
        have = ", ".join(sorted(set(df["collective"])))
        raise ValueError(f"no {coll} rows in the results (they have {have})")
    if p is not None:
        ps = table_ps(df, lay)
        if p not in ps:
            raise ValueError(f"no {coll} rows with p={p} in the results (they have p="
                             f"{', '.join(map(str, ps))})")
        df = df[df["p"] == p].reset_index(drop=True)
    stats, mark = check_stats(stats, "stats"), check_stats(mark, "mark")
    algs = _subject_algorithms(df, coll, algorithms)
    guides = [GUIDELINES[k] for k in lay.guidelines]
    ev = evaluate(df, guides, stats=list(dict.fromkeys(stats + mark)), algorithms=algs,
                  slack=slack)
    index = _Index(df)
    titles = [c.title for c in lay.columns] + [algorithm_title(coll, a) for a in algs]

    # where each guideline's violations are marked
    rules = []  # (guideline, column title or None = algorithm's own, algorithm filter)
    mark_rules = []
    for g in guides:
        if len(g.lhs) != 1:
            continue
        op = g.lhs[0]
        if op.algorithm is None:
            rules.append((g, None, None))
            mark_rules.append((g.key, f"the {algorithm_title(coll, 'native')} column and the "
                                      f"column of any other algorithm that violates it"
                               if "native" in algs else "the column of the algorithm"))
        else:
            for c in lay.columns:
                if c.operation is not None and (c.operation.collective, c.operation.algorithm) \
                        == (op.collective, op.algorithm):
                    rules.append((g, c.title, "native"))
                    mark_rules.append((g.key, f"the {c.title} column"))
                    break

    problems = _problems(df, coll)
    show_p = len({(pr.p, pr.root, pr.datatype, pr.mpi_library) for pr in problems}) > 1
    vkey = {}  # every comparison a marked statistic makes, violated or not
    for v in ev[ev["stat"].isin(mark)].to_dict("records"):
        vkey.setdefault((v["guideline"], v["algorithm"], v["p"], v["root"], v["distribution"],
                         v["b"], v["m"], v["m_prime"], v["datatype"], v["mpi_library"],
                         v["stat"]), v)
    rows, violations, within_noise = [], [], []
    thresholds: list[float] = []
    used_rows = []
    for pr in problems:
        cells: dict = {}
        marks: dict = {}
        within: dict = {}
        noises: dict = {}
        for c in lay.columns:
            ops = [c.operation] if c.operation else list(getattr(GUIDELINES[c.guideline], c.side))
            found = [index.row(_need(op, pr, "native")) for op in ops]
            for s in stats:
                cells[(c.title, s)] = None if any(r is None for r in found) else \
                    sum(float(r[STATS[s]]) for r in found)
            used_rows += [r for r in found if r is not None]
        subj = Operation(coll, "counts", None)
        for a, title in zip(algs, titles[len(lay.columns):]):
            r = index.row(_need(subj, pr, a))
            for s in stats:
                cells[(title, s)] = None if r is None else float(r[STATS[s]])
            if r is not None:
                used_rows.append(r)
        for g, col, alg_filter in rules:
            for a, title in zip(algs, titles[len(lay.columns):]):
                if alg_filter is not None and a != alg_filter:
                    continue
                target = title if col is None else col
                for s in mark:
                    v = vkey.get((g.key, a, pr.p, pr.root, pr.distribution, pr.b, pr.m,
                                  pr.m_prime, pr.datatype, pr.mpi_library, s))
                    if v is None:
                        continue
                    thresholds.append(v["noise"])
                    noises[(target, s)] = max(noises.get((target, s), 0.0), v["noise"])
                    if not v["violated"]:
                        continue
                    at = f" (p={pr.p}, root {pr.root})" if show_p else ""
                    text = (f"{g.name} violated by {target} for {problem_title(pr.distribution)} "
                            f"m={pr.m}, m'={pr.m_prime}{at}: {s} {v['lhs']:.2f} µs > "
                            f"{v['rhs']:.2f} µs (×{v['factor']:.3g}; noise {v['noise']:.2f} µs)")
                    entry = {"guideline": g.key, "guideline_name": g.name, "column": target,
                             "algorithm": a, "p": pr.p, "root": pr.root,
                             "distribution": pr.distribution, "b": pr.b, "m": pr.m,
                             "m_prime": pr.m_prime, "stat": s, "lhs": v["lhs"], "rhs": v["rhs"],
                             "factor": v["factor"], "noise": v["noise"], "text": text}
                    if noise and not v["beyond_noise"]:  # jitter: counted, not marked
                        within.setdefault((target, s), []).append(entry)
                        within_noise.append(entry)
                    else:
                        marks.setdefault((target, s), []).append(entry)
                        violations.append(entry)
        rows.append({"problem": {"p": pr.p, "root": pr.root, "distribution": pr.distribution,
                                 "b": pr.b, "m": pr.m, "m_prime": pr.m_prime,
                                 "datatype": pr.datatype, "mpi_library": pr.mpi_library},
                     "cells": cells, "marks": marks, "within": within, "noise": noises})
    import pandas as pd

    used = pd.DataFrame(used_rows)
    ps = list(dict.fromkeys((pr.p, pr.root if collective_info(coll).rooted else None)
                            for pr in problems))
    caption = _caption(lay, used, stats, ps)
    notes = _notes(lay, mark_rules, noise, thresholds, len(violations), len(within_noise))
    return GuidelineTable(lay, titles, stats, rows, violations, ev, caption, show_p, notes,
                          within_noise, noise)


def table_ps(results: "pd.DataFrame | str | os.PathLike",
             layout: str | TableLayout = "gatherv") -> list[int]:
    """The numbers of processes the results have rows of the layout's collective for."""
    df = load_results(results)
    lay = LAYOUTS[layout] if isinstance(layout, str) and layout in LAYOUTS else layout
    return sorted({int(v) for v in df.loc[df["collective"] == lay.collective, "p"]})


def gatherv_table(results: "pd.DataFrame | str | os.PathLike",
                  algorithms: Iterable[str] | None = None, **kwargs) -> GuidelineTable:
    """The gatherv paper's Tables 1-5: MPI_Gather, Guideline (2), then one pair per algorithm.

    Rows are problem type × (m, m'); column pairs avg/min for MPI_Gather (the library's,
    on ``m'``), the Guideline (2) bound ``MPI_Allreduce(1) + MPI_Gather(m')``, MPI_Gatherv
    (algorithm ``native``) and each tuwviz algorithm (``tuw`` is TUW_Gatherv).  Guideline
    (1) violations are marked in the MPI_Gather column, Guideline (2) violations in the
    column of the Gatherv algorithm that violates it.  See :func:`guideline_table` for the
    parameters (`algorithms` default: every gatherv algorithm in the results).
    """
    return guideline_table(results, "gatherv", algorithms=algorithms, **kwargs)
