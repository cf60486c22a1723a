"""The reproduction's report: one self-contained HTML page (BokehJS inline, opens offline).

At the top a summary counts the verdicts per paper; then, per paper, a table of its claims
and one section per claim: the paper's sentence and source, every value with its source
label, the verdict and its reason, a figure where the claim is a curve.

Examples
--------
>>> from tuwviz.reproduce.claims import Finding, Value, REPRODUCED
>>> f = Finding(REPRODUCED, "within 10 %", [Value("ratio", "paper", 15.47, "x")])
>>> html = render([{"paper": "allgatherv", "paper_title": "A pipelined algorithm",
...                 "claim": "headline", "title": "15x", "source": "Section 3.1",
...                 "quote": "...", "scale": "quick", "finding": f, "wall_s": 1.0}],
...               "quick")
>>> "reproduced" in html and "<table" in html
True
"""
from __future__ import annotations

import html as _html
from collections import Counter

from .claims import MEANINGS, SOURCES, VERDICTS
from .published import UNCHECKED
from .store import outcome

__all__ = ["figure", "render"]

_COLOURS = {"reproduced": "#1a7f37", "reproduced in shape": "#2f6f9f", "differs": "#b35900",
            "not reproducible here": "#666666", "derivation checked": "#7b3294"}
_LINE = {"paper": "#000000", "formula": "#7b3294", "model": "#1f77b4", "smpi": "#d62728",
         "measured": "#2ca02c"}
_STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; line-height: 1.35; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
blockquote { color: #333; border-left: 3px solid #aaa; margin: 0.4em 0; padding-left: 0.8em; }
.verdict { font-weight: bold; }
section.claim { border-top: 1px solid #ddd; margin-top: 1.2em; }
"""


def _verdict(v: str) -> str:
    return (f'<span class="verdict" style="color:{_COLOURS.get(v, "#a00")}">'
            f"{_html.escape(v)}</span>")


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def figure(spec: dict):
    """A Bokeh figure from a finding's JSON-able figure spec (see
    :class:`tuwviz.reproduce.claims.Finding`); a series with ``"line": False`` is drawn as
    markers only (values a paper states)."""
    from bokeh.models import HoverTool
    from bokeh.plotting import figure as bfigure

    fig = bfigure(title=spec.get("title", ""), width=620, height=340,
                  x_axis_type="log" if spec.get("log_x") else "linear",
                  y_axis_type="log" if spec.get("log_y") else "linear",
                  x_axis_label=spec.get("x_label", ""), y_axis_label=spec.get("y_label", ""),
                  tools="pan,wheel_zoom,box_zoom,reset,save")
    for name, s in spec.get("series", {}).items():
        colour = s.get("color") or _LINE.get(s.get("source", ""), "#444")
        dash = "dashed" if s.get("source") in ("formula", "paper") else "solid"
        if s.get("line", True):
            fig.line(s["x"], s["y"], legend_label=name, color=colour, line_dash=dash,
                     line_width=2)
            fig.scatter(s["x"], s["y"], legend_label=name, color=colour, size=6)
        else:  # values stated in a paper: markers, not a curve
            fig.scatter(s["x"], s["y"], legend_label=name, color=colour, size=11,
                        marker="diamond")
    fig.add_tools(HoverTool(tooltips=[("x", "@x"), ("y", "@y")]))
    fig.legend.location = spec.get("legend", "top_left")
    fig.legend.click_policy = "hide"
    return fig


def render(results: list[dict], scale: str, note: str = "", state: dict | None = None,
           unchecked: dict[str, list[dict]] | None = None) -> str:
    """The report page for `results` (dicts as :meth:`tuwviz.reproduce.store.Store.write_csvs`
    takes, plus ``paper_title``, ``quote`` and, optionally, ``made`` and ``reused``), as an
    HTML string; `state` is the source state the run had
    (:func:`tuwviz.reproduce.source_state`); `unchecked` maps a paper to its statements no
    claim checks (:meth:`tuwviz.reproduce.published.Published.unchecked`), listed on the
    page with why."""
    from bokeh.embed import components
    from bokeh.resources import INLINE

    esc = _html.escape
    papers: dict[str, list[dict]] = {}
    for r in results:
        papers.setdefault(r["paper"], []).append(r)
    figs = {(r["paper"], r["claim"]): figure(r["finding"].figure)
            for r in results if r["finding"] is not None and r["finding"].figure}
    script, divs = components(list(figs.values())) if figs else ("", [])
    div_of = dict(zip(figs, divs))

    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           "<title>tuwviz reproduce</title>", f"<style>{_STYLE}</style>",
           INLINE.render() if figs else "", script, "</head>", "<body>",
           "<h1>tuwviz reproduce: the papers' claims, checked</h1>"]
    out.append(f"<p>Scale: <b>{esc(scale)}</b>. "
               + ("The papers' sizes." if scale == "paper" else
                  "Smaller p and fewer repetitions than the papers where SMPI or this machine "
                  "runs them; the model and closed formulas run at the papers' sizes. Run "
                  "<code>tuwviz reproduce PAPER --scale paper</code> for the papers' sizes.")
               + "</p>")
    if note:
        out.append(f"<p>{esc(note)}</p>")
    out.append("<p>Sources: " + "; ".join(f"<b>{esc(k)}</b>: {esc(v)}" for k, v in SOURCES.items())
               + ". Simulated and model values are labelled as such; measured ones say how "
                 "many ranks shared this machine's cores.</p>")
    out.append("<p>Verdicts:</p><ul>" + "".join(
        f"<li>{_verdict(v)}: {esc(MEANINGS[v])}.</li>" for v in VERDICTS) + "</ul>"
        "<p>Each claim's section says what its shape is and the tolerances it is judged "
        "with, each with why (the claim's data). No rule turns one verdict into another.</p>")
    if state:
        out.append(f"<p>This run's sources: digest <code>{esc(state.get('sources', ''))}</code> "
                   f"(the tuwviz package and kernels_c/), {esc(state.get('simgrid', ''))}, "
                   f"tuwviz {esc(state.get('tuwviz', ''))}. A saved finding is reused only "
                   f"when all of these and its paper data are unchanged; each says when it "
                   f"was made.</p>")

    # summary: verdict counts per paper
    unchecked = unchecked or {}
    cols = list(VERDICTS) + ["failed", "not run"]
    out.append("<h2>Summary</h2><p>Derivations checked are counted apart: they check the "
               "papers' arithmetic, not their claims. The last column counts the papers' "
               "quantitative statements no claim checks, each listed in its paper's section "
               "with why.</p><table><tr><th>paper</th>"
               + "".join(f"<th>{_verdict(c) if c in VERDICTS else esc(c)}</th>" for c in cols)
               + "<th>claims</th><th>not checked (listed)</th></tr>")
    total: Counter = Counter()
    listed = 0
    for paper, rs in papers.items():
        c = Counter(outcome(r) for r in rs)
        total.update(c)
        n = len(unchecked.get(paper, []))
        listed += n
        out.append(f'<tr><td><a href="#{esc(paper)}">{esc(paper)}</a></td>'
                   + "".join(f'<td class="num">{c.get(k, 0)}</td>' for k in cols)
                   + f'<td class="num">{len(rs)}</td>'
                   + f'<td class="num"><a href="#{esc(paper)}-unchecked">{n}</a></td></tr>')
    out.append("<tr><th>all</th>" + "".join(f'<th class="num">{total.get(k, 0)}</th>' for k in cols)
               + f'<th class="num">{sum(total.values())}</th><th class="num">{listed}</th>'
               + "</tr></table>")
    varied = [r for r in results if r["finding"] is not None and r["finding"].varied]
    if varied:
        fragile = [f'<a href="#{esc(r["paper"])}-{esc(r["claim"])}">{esc(r["paper"])}/'
                   f'{esc(r["claim"])}</a>' for r in varied if not r["finding"].survives]
        out.append(f"<p>{len(varied)} verdicts depend on a platform's assumed numbers; each "
                   f"was judged again with the latencies and per-message overheads halved "
                   f"and doubled (bandwidths as assumed): {len(varied) - len(fragile)} "
                   f"survive both" + (f"; these do not: {', '.join(fragile)}" if fragile
                                       else "") + ".</p>")

    for paper, rs in papers.items():
        out.append(f'<h2 id="{esc(paper)}">{esc(paper)}: {esc(rs[0].get("paper_title", ""))}</h2>')
        out.append("<table><tr><th>claim</th><th>source</th><th>verdict</th></tr>")
        for r in rs:
            v = outcome(r)
            out.append(f'<tr><td><a href="#{esc(paper)}-{esc(r["claim"])}">{esc(r["title"])}'
                       f'</a></td><td>{esc(r["source"])}</td><td>{_verdict(v)}</td></tr>')
        out.append("</table>")
        for r in rs:
            out.append(_claim_section(r, div_of.get((paper, r["claim"]), "")))
        out.append(_unchecked_section(paper, unchecked.get(paper, [])))
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def _unchecked_section(paper: str, entries: list[dict]) -> str:
    """The paper's statements no claim checks: statement, source, status and why."""
    esc = _html.escape
    parts = [f'<section class="claim" id="{esc(paper)}-unchecked">',
             f"<h3>{esc(paper)}: not checked here ({len(entries)})</h3>"]
    if not entries:
        parts.append("<p>The data lists no statement that the claims above leave out.</p>")
        return "\n".join(parts + ["</section>"])
    parts.append("<p>" + "; ".join(f"<b>{esc(k)}</b>: {esc(v)}" for k, v in UNCHECKED.items())
                 + ".</p>")
    parts.append("<table><tr><th>statement</th><th>source</th><th>status</th><th>why</th></tr>")
    for u in entries:
        why = esc(u["reason"]) + (f" <small>(<code>{esc(u['test'])}</code>)</small>"
                                  if u.get("test") else "")
        parts.append(f"<tr><td>{esc(u['statement'])}</td><td>{esc(u['source'])}</td>"
                     f"<td>{esc(u['status'])}</td><td>{why}</td></tr>")
    parts.append("</table></section>")
    return "\n".join(parts)


def _claim_section(r: dict, div: str) -> str:
    esc = _html.escape
    f = r["finding"]
    parts = [f'<section class="claim" id="{esc(r["paper"])}-{esc(r["claim"])}">',
             f'<h3>{esc(r["title"])}</h3>',
             f'<p>{esc(r["source"])} <small>(claim <code>{esc(r["claim"])}</code>)</small></p>',
             f'<blockquote>{esc(r.get("quote", ""))}</blockquote>']
    if f is None:
        status = r.get("status", "not run")
        parts.append(f"<p>{_verdict(status)}: {esc(r.get('error', ''))}</p></section>")
        return "\n".join(parts)
    parts.append(f"<p>Verdict: {_verdict(f.verdict)}. {esc(f.reason)}</p>")
    if f.varied:
        said = "; ".join(f"times {k}: {_verdict(v)}" for k, v in f.varied.items())
        parts.append(f"<p><small>With the platform's assumed latencies and per-message "
                     f"overhead varied (bandwidths as assumed), {said}: the verdict "
                     f"{'survives' if f.survives else '<b>does not survive</b>'} them."
                     f"</small></p>")
    rules = r.get("judge") or {}
    if rules:
        parts.append("<p><small>Judged by: " + "; ".join(
            f"{esc(k)} = {esc(_fmt(v))}" for k, v in rules.items() if k != "why") + ". "
            + esc(rules.get("why", "")) + "</small></p>")
    if f.scale_note:
        parts.append(f"<p><i>{esc(f.scale_note)}</i></p>")
    if f.values:
        parts.append("<table><tr><th>quantity</th><th>source</th><th>value</th><th>unit</th>"
                     "<th>where</th></tr>")
        for v in f.values:
            parts.append(f"<tr><td>{esc(v.quantity)}</td><td>{esc(v.source)}</td>"
                         f'<td class="num">{esc(_fmt(v.value))}</td><td>{esc(v.unit)}</td>'
                         f"<td>{esc(v.where)}</td></tr>")
        parts.append("</table>")
    if f.html:
        parts.append(f.html)  # built by our own code from numbers (guideline tables)
    parts.append(div)
    made = r.get("made", "")
    parts.append(f'<p><small>{r.get("wall_s", 0):.1f} s'
                 + (f", made {esc(made)}" if made else "")
                 + (" (reused: its sources and data are unchanged since)" if r.get("reused")
                    else "") + "</small></p></section>")
    return "\n".join(parts)
