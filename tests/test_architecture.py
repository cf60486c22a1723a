"""The package keeps its layers, and the C helpers call no algorithm.

The layers are in ``pyproject.toml`` (``[tool.importlinter]``): ``lint-imports`` reads
every import, those inside functions too.  Neither contract has an exception
(``ignore_imports`` is empty), and an entry that matches no import would fail the check.
The checks must be able to fail: a planted upward import, a planted circle and a stale
exception each break a copy of the package.
"""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import hang_guard
from tuwviz.table import load_table

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` on the package under `root` (its own copy, not the installed one)."""
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run([str(LINT_IMPORTS), "pyproject.toml", "--no-cache"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=hang_guard(120))


def test_the_package_keeps_its_layers_and_has_no_circles():
    out = lint_imports(REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 2 kept, 0 broken." in out.stdout
    # with no exceptions
    allowed = re.findall(r"^ignore_imports = (.*)$", (REPO / "pyproject.toml").read_text(), re.M)
    assert allowed == ["[]", "[]"]


PLANTS = {
    # file, code appended, what the report must say
    "upward import inside a function": (
        "errors.py", "\n\ndef _planted():\n    from .viz import plots\n",
        ["layers: cli > reproduce > course", "foundation BROKEN",
         "tuwviz.errors is not allowed to import tuwviz.viz", "tuwviz.errors -> tuwviz.viz.plots"]),
    # problems imports collectives; both are in the bottom layer, so only the circle is wrong
    "circle within one layer": (
        "collectives.py", "\n\ndef _planted():\n    from . import problems\n",
        ["foundation KEPT", "no import circles among the modules of any one package BROKEN",
         "No cycles are allowed in tuwviz."]),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_import_breaks_the_contracts(tmp_path, plant):
    name, code, said = PLANTS[plant]
    copy = _package_copy(tmp_path)
    with open(copy / "tuwviz" / name, "a") as f:
        f.write(code)
    out = lint_imports(copy)
    assert out.returncode == 1, out.stdout + out.stderr
    report = " ".join(out.stdout.split())  # the contract's name is wrapped
    for words in said:
        assert words in report, out.stdout


def test_a_stale_exception_breaks_the_contracts(tmp_path):
    # an allow-list entry whose import is gone (a step moved it) must be removed
    copy = _package_copy(tmp_path)
    path = copy / "pyproject.toml"
    text = path.read_text()
    anchor = "ignore_imports = []\n"  # the layers contract's allow-list comes first
    assert anchor in text
    path.write_text(text.replace(anchor, 'ignore_imports = ["tuwviz.problems -> tuwviz.viz.plots"]\n', 1))
    out = lint_imports(copy)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "tuwviz.problems -> tuwviz.viz.plots" in out.stdout + out.stderr


def _package_copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "tuwviz", tmp_path / "tuwviz",
                    ignore=shutil.ignore_patterns("__pycache__", "templates"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    return tmp_path


# --- C: helpers wrap point-to-point calls and local copies, never an algorithm ----------

def algorithms(kernels: Path) -> set[str]:
    """The functions the algorithm files define: every ``TUW_``/``tuw_`` function of a file
    outside ``common/`` and ``topology/`` (the table's rows, and the broadcasts of
    ``bcast/`` that other kernels build on)."""
    names = set()
    for path in sorted(kernels.glob("*/*.c")):
        if path.parent.name not in ("common", "topology"):
            names |= set(re.findall(r"^int\s+(tuw_\w+|TUW_\w+)\s*\(", path.read_text(), re.M))
    return names


def helper_calls(common: Path, functions: set[str]) -> set[tuple[str, str]]:
    """(file, function) for each of `functions` that a file of `common` calls."""
    found = set()
    for path in sorted(common.glob("*.c")):
        code = re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(), flags=re.S)  # no comments
        for fn in functions:
            if re.search(rf"\b{fn}\s*\(", code):
                found.add((path.name, fn))
    return found


def test_c_helpers_call_no_algorithm():
    kernels = REPO / "kernels_c"
    functions = algorithms(kernels)
    # every row of the table is among them, and so are the broadcasts
    table = {row.function for row in load_table(kernels).rows() if not row.library}
    assert table <= functions
    assert {"tuw_bcast_binomial", "tuw_bcast_library"} <= functions
    assert helper_calls(kernels / "common", functions) == set()


def test_a_helper_calling_an_algorithm_is_seen(tmp_path):
    common = tmp_path / "common"
    common.mkdir()
    (common / "p2p.c").write_text("/* TUW_Gather_binomial( in a comment */\n"
                                  "int f(void) { return TUW_Gather_binomial (0); }\n")
    assert helper_calls(common, {"TUW_Gather_binomial", "tuw_bcast_binomial"}) == {
        ("p2p.c", "TUW_Gather_binomial")}


# --- tests: folders mirror the package; shared helpers in tests/support/ ---------------

def test_the_tests_mirror_the_package_and_share_only_support():
    tests = REPO / "tests"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    packages = {p.name for p in (REPO / "tuwviz").iterdir() if (p / "__init__.py").is_file()}
    assert folders - {"support"} <= packages | {"notebooks"}, folders - packages
    # a test imports helpers from support, never from conftest or another test module
    borrowed = [f"{f.relative_to(tests)}: {m.group(0).strip()}"
                for f in sorted(tests.rglob("*.py")) if "support" not in f.parts
                for m in re.finditer(r"^\s*(from|import) (conftest|test_\w+)\b.*$",
                                     f.read_text(), re.M)]
    assert borrowed == []


#: tuwviz's own modules imported inside function bodies are invisible at the top of a file,
#: so the reader cannot see a module's dependencies: there are none, except in modules whose
#: top says why in a comment ``# imports inside functions: WHY`` (the command line's modules:
#: ``tuwviz --help`` must not pull in pandas, Bokeh or MPI).  The layers keep imports at the
#: top free of circles.


def inner_own_imports(package: Path) -> list[str]:
    """``file:line`` of each import of a tuwviz module inside a function body, in modules
    that do not say why (``# imports inside functions: ...``)."""
    found = set()
    for path in sorted(package.rglob("*.py")):
        text = path.read_text()
        if re.search(r"^# imports inside functions: \S", text, re.M):
            continue
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                own = (isinstance(node, ast.ImportFrom)
                       and (node.level > 0 or (node.module or "").startswith("tuwviz"))) or \
                      (isinstance(node, ast.Import)
                       and any(a.name.startswith("tuwviz") for a in node.names))
                if own:
                    found.add(f"{path.relative_to(package.parent)}:{node.lineno}")
    return sorted(found)


def test_no_unexplained_import_inside_a_function(tmp_path):
    inner = inner_own_imports(REPO / "tuwviz")
    assert inner == [], (
        "imports of tuwviz modules inside functions: import at the top of the module (the "
        "layers keep that free of circles), or say why at its top")
    # the count sees one planted import
    pkg = tmp_path / "tuwviz"
    pkg.mkdir()
    (pkg / "m.py").write_text("import os\n\ndef f():\n    from . import problems\n"
                              "    import json\n    return os, json, problems\n")
    assert inner_own_imports(pkg) == ["tuwviz/m.py:4"]
    # and not once the module says why
    (pkg / "m.py").write_text("# imports inside functions: a reason\n" + (pkg / "m.py").read_text())
    assert inner_own_imports(pkg) == []
