"""The papers' statements no claim checks: listed in the data with why, named on the page.

Every entry of a paper's ``[[unchecked]]`` list has a statement, its source in the paper, a
status (:data:`tuwviz.reproduce.published.UNCHECKED`) and a reason; an entry the test suite
answers names a test that exists.  A malformed entry stops ``tuwviz reproduce`` before
anything runs, naming the file and the entry.
"""
from __future__ import annotations

import re
from html import escape

import pytest

from support import REPO
from tuwviz.errors import TuwvizError
from tuwviz.reproduce import reproduce
from tuwviz.reproduce.claims import REPRODUCED, Finding
from tuwviz.reproduce.page import render
from tuwviz.reproduce.published import DATA_DIR, PAPERS, UNCHECKED, published


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_lists_what_its_claims_leave_out(paper):
    entries = published(paper).unchecked()
    assert len(entries) >= 5, f"{paper}: {len(entries)} statements listed"
    for u in entries:
        assert u["status"] in UNCHECKED
        assert len(u["reason"]) > 20 and len(u["statement"]) > 20, u
        if u["status"] == "in the tests":
            path, name = u["test"].split("::")
            text = (REPO / path).read_text(encoding="utf-8")
            assert re.search(rf"^def {re.escape(name)}\(", text, re.M), \
                f"{paper}: {u['test']} does not exist"
    # the list says what the claims leave out: no statement is a claim's title again
    titles = {published(paper).claim(c)["title"] for c in published(paper).claims()}
    assert titles and not titles & {u["statement"] for u in entries}


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace('status = "not here"', 'status = "someday"', 1),
     "unknown status 'someday'; valid: not yet, not here, in the tests"),
    (lambda t: t.replace('test = "tests/kernels/test_gatherv_scatterv.py::test_figure2_shape_p11_root9"\n',
                         "", 1), "missing test"),
    (lambda t: t + '\n[[unchecked]]\nstatement = "x"\nsource = "Table 9"\nstatus = "not yet"\n',
     "unchecked entry 10 ('Table 9'): missing reason"),
    (lambda t: t.replace('status = "not yet"', 'status = "not yet"\nwhen = "later"', 1),
     "unknown keys when"),
])
def test_a_malformed_entry_is_named_before_anything_runs(tmp_path, edit, says):
    path = tmp_path / "gatherv.toml"
    path.write_text(edit((DATA_DIR / "gatherv.toml").read_text(encoding="utf-8")),
                    encoding="utf-8")
    with pytest.raises(TuwvizError, match=re.escape(says)) as info:
        reproduce("gatherv", "quick", tmp_path / "out", progress=False,
                  data={"gatherv": str(path)})
    assert "gatherv.toml: unchecked entry" in str(info.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.json"))


def test_the_page_lists_each_papers_unchecked_statements_and_counts_them():
    f = Finding(REPRODUCED, "within 10 %", [])
    results = [{"paper": p, "paper_title": p, "claim": "c", "title": "t", "source": "s",
                "quote": "q", "scale": "quick", "finding": f, "wall_s": 1.0}
               for p in ("gatherv", "course")]
    unchecked = {p: published(p).unchecked() for p in ("gatherv", "course")}
    html = render(results, "quick", unchecked=unchecked)
    n = len(unchecked["gatherv"]) + len(unchecked["course"])
    assert f'<th class="num">{n}</th></tr></table>' in html  # the summary's total
    for paper, entries in unchecked.items():
        assert f"{paper}: not checked here ({len(entries)})" in html
        assert f'href="#{paper}-unchecked">{len(entries)}</a>' in html
        for u in entries:
            assert escape(u["statement"]) in html and escape(u["reason"]) in html
    for status, meaning in UNCHECKED.items():
        assert escape(meaning) in html
