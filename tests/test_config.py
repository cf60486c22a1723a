"""Settings from the environment: read when asked, in one module, bad values refused clearly."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from support import hang_guard
from tuwviz import config, problems
from tuwviz.run import launch
from tuwviz.model import check_messages
from tuwviz.problems import make_problem

PACKAGE = Path(config.__file__).resolve().parent


def test_a_setting_made_after_import_is_heard_at_the_next_call(monkeypatch, tmp_path):
    monkeypatch.setenv("TUWVIZ_MAX_RANKS", "3")
    with pytest.raises(ValueError, match=r"4 ranks asked, at most 3 .*TUWVIZ_MAX_RANKS"):
        launch.check_ranks(4)
    monkeypatch.setenv("TUWVIZ_MAX_BUFFER_BYTES", "100")
    with pytest.raises(ValueError, match=r"above the limit of 100 bytes"):
        problems.check_buffer(make_problem("gatherv", 4, b=10))
    monkeypatch.setenv("TUWVIZ_MAX_MODEL_MESSAGES", "5")
    with pytest.raises(ValueError, match=r"above the bound of 5; .*TUWVIZ_MAX_MODEL_MESSAGES"):
        check_messages("allgatherv", "ring", make_problem("allgatherv", 4))
    monkeypatch.setenv("TUWVIZ_KERNELS", str(tmp_path))
    assert config.kernels_dir() == tmp_path
    monkeypatch.delenv("TUWVIZ_KERNELS")
    assert config.kernels_dir() == config.KERNELS_DIR
    assert (config.KERNELS_DIR / "algorithms.toml").is_file()


@pytest.mark.parametrize("value", ["0", "-3", "many", "2.5"])
def test_a_bad_count_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("TUWVIZ_MAX_BUFFER_BYTES", value)
    with pytest.raises(ValueError, match=rf"TUWVIZ_MAX_BUFFER_BYTES={value} is not a whole number"):
        config.max_buffer_bytes()


def test_the_command_line_refuses_a_bad_setting_without_a_traceback(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TUWVIZ_MAX_MODEL_MESSAGES": "lots"}
    out = subprocess.run([sys.executable, "-m", "tuwviz.cli", "model", "gatherv", "--np", "4"],
                         env=env, capture_output=True, text=True, timeout=hang_guard(60),
                         cwd=PACKAGE.parent)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == ("error: TUWVIZ_MAX_MODEL_MESSAGES=lots is not a whole "
                                  "number of at least 1")


def _reads_environment(tree: ast.AST) -> list[str]:
    """``TUWVIZ_*`` names a module reads with ``os.environ.get``/``[...]``/``os.getenv``."""
    found = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            f = node.func
            if f.attr == "getenv" or (f.attr == "get" and isinstance(f.value, ast.Attribute)
                                      and f.value.attr == "environ"):
                name = node.args[0]
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
              and isinstance(node.value, ast.Attribute) and node.value.attr == "environ"):
            name = node.slice
        if isinstance(name, ast.Constant) and str(name.value).startswith("TUWVIZ_"):
            found.append(name.value)
    return found


def test_only_config_reads_tuwviz_settings():
    readers = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        names = _reads_environment(ast.parse(path.read_text()))
        if names and path.name != "config.py":
            readers[str(path.relative_to(PACKAGE))] = names
    assert readers == {}
    # the scan sees a read written the old way
    planted = ast.parse('import os\nLIMIT = int(os.environ.get("TUWVIZ_MAX_RANKS", "64"))\n'
                        'w = os.environ["TUWVIZ_WATCH"]\n')
    assert sorted(_reads_environment(planted)) == ["TUWVIZ_MAX_RANKS", "TUWVIZ_WATCH"]
