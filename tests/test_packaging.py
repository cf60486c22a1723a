"""Packaging stays consistent: pyproject.toml, environment.yml, Makefile, .ci/run, README.

pip users get their dependencies from ``pyproject.toml``, conda users from
``environment.yml``; these tests fail as soon as the two disagree on a package or a lower
bound. They also check that CI runs the README's ``make test``.
"""
from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from support import hang_guard

ROOT = Path(__file__).resolve().parent.parent

#: pip name -> conda-forge name, where they differ (none do today).
CONDA_NAME: dict[str, str] = {}
#: In environment.yml only: the interpreter, a C compiler for the kernels, pip itself.
CONDA_ONLY = {"python", "compilers", "pip"}
#: In pyproject.toml only: installed with pip everywhere (uses Debian's Chromium).
PIP_ONLY = {"playwright"}


# --- readers ---------------------------------------------------------------------------


def load_pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def parse_environment_yml(text: str) -> dict:
    """Read the small subset of YAML that environment.yml uses.

    Top-level ``key: value`` pairs and ``key:`` followed by ``- item`` lists, with one
    nested ``- pip:`` list. Anything else raises ``ValueError`` rather than being
    misread. (No PyYAML needed.)

    >>> parse_environment_yml("name: x\\nchannels:\\n  - a\\ndependencies:\\n"
    ...                       "  - b>=1\\n  - pip:\\n      - -e .\\n")
    {'name': 'x', 'channels': ['a'], 'dependencies': ['b>=1'], 'pip': ['-e .']}
    """
    out: dict = {}
    key = None  # top-level list being filled
    in_pip = False
    pip_indent = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if indent == 0:
            m = re.fullmatch(r"([A-Za-z_][\w-]*):\s*(.*)", body)
            if not m:
                raise ValueError(f"environment.yml:{lineno}: cannot read {raw!r}")
            key, value = m.group(1), m.group(2)
            in_pip = False
            if value:
                out[key] = value
                key = None
            else:
                out[key] = []
            continue
        if not body.startswith("- "):
            raise ValueError(f"environment.yml:{lineno}: expected '- item', got {raw!r}")
        item = body[2:].strip()
        if in_pip and indent > pip_indent:
            out["pip"].append(item)
            continue
        if key is None:
            raise ValueError(f"environment.yml:{lineno}: list item outside a list")
        in_pip = False
        if item == "pip:":
            if key != "dependencies":
                raise ValueError(f"environment.yml:{lineno}: 'pip:' outside dependencies")
            in_pip, pip_indent = True, indent
            out.setdefault("pip", [])
            continue
        out[key].append(item)
    return out


def load_environment() -> dict:
    return parse_environment_yml((ROOT / "environment.yml").read_text())


def conda_spec(spec: str) -> tuple[str, str]:
    """Split a conda MatchSpec like ``mpi4py>=4`` or ``python=3.11`` into name, constraint."""
    m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)\s*(.*)", spec)
    if not m:
        raise ValueError(f"cannot read conda spec {spec!r}")
    return canonicalize_name(m.group(1)), m.group(2).replace(" ", "")


def bounds(specifier: str) -> dict[str, Version]:
    """The ``>=`` and ``<`` bounds of a specifier (pip or conda syntax); other operators fail.

    Returns e.g. ``{">=": Version("6.29"), "<": Version("7")}``; versions compare as
    versions, so ``>=4`` and ``>=4.0`` agree.
    """
    out: dict[str, Version] = {}
    for part in filter(None, specifier.split(",")):
        m = re.fullmatch(r"(>=|<)([0-9][0-9A-Za-z.]*)", part)
        if not m:
            raise AssertionError(f"only '>=' and '<' bounds are kept in agreement, got {specifier!r}")
        assert m.group(1) not in out, f"two {m.group(1)!r} bounds in {specifier!r}"
        out[m.group(1)] = Version(m.group(2))
    return out


def pip_requirements() -> dict[str, Requirement]:
    """Runtime dependencies and every extra's, by canonical name."""
    project = load_pyproject()["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    out = {}
    for r in map(Requirement, reqs):
        name = canonicalize_name(r.name)
        assert name not in out, f"{name} listed twice in pyproject.toml"
        out[name] = r
    return out


def conda_requirements() -> dict[str, str]:
    out = {}
    for spec in load_environment()["dependencies"]:
        name, constraint = conda_spec(spec)
        assert name not in out, f"{name} listed twice in environment.yml"
        out[name] = constraint
    return out


# --- pyproject.toml --------------------------------------------------------------------


def test_pyproject_metadata():
    data = load_pyproject()
    project = data["project"]
    assert project["name"] == "tuwviz"
    assert project["dynamic"] == ["version"]
    assert data["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "tuwviz._version.__version__"}
    assert SpecifierSet(project["requires-python"]).contains("3.10")
    assert not SpecifierSet(project["requires-python"]).contains("3.9")
    assert project["scripts"]["tuwviz"] == "tuwviz.cli:main"
    assert data["tool"]["setuptools"]["packages"]["find"]["include"] == ["tuwviz*"]
    assert data["build-system"]["build-backend"] == "setuptools.build_meta"


def test_pyproject_pulls_mpi_from_pypi_only_as_extra():
    project = load_pyproject()["project"]
    runtime = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    assert "mpi4py" in runtime
    assert "mpich" not in runtime, "mpich must stay an extra (conda and module MPIs)"
    assert [canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["mpi"]] == ["mpich"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^EXTRAS\s*\?=\s*mpi,test\s*$", makefile, re.M), "make lab must install MPICH"


def test_pytest_configuration():
    opts = load_pyproject()["tool"]["pytest"]["ini_options"]
    assert set(opts["testpaths"]) == {"tests", "tuwviz"}
    assert "--doctest-modules" in opts["addopts"].split()
    assert int(opts["timeout"]) > 0


# --- environment.yml agrees with pyproject.toml ------------------------------------------


def test_environment_yml_shape():
    env = load_environment()
    assert env["name"] == "tuwviz"
    assert env["channels"] == ["conda-forge"]
    assert "-e ." in env["pip"], "the pip: section must install tuwviz itself"
    python = conda_requirements()["python"]
    version = python.lstrip("=")
    requires = load_pyproject()["project"]["requires-python"]
    assert SpecifierSet(requires).contains(version), f"python={version} vs {requires}"


def test_every_pip_dependency_is_in_environment_yml_with_the_same_bound():
    conda = conda_requirements()
    problems = []
    for name, req in pip_requirements().items():
        if name in PIP_ONLY:
            continue
        cname = CONDA_NAME.get(name, name)
        if cname not in conda:
            problems.append(f"{name}: missing from environment.yml (as {cname})")
            continue
        pip_bounds = bounds(str(req.specifier).replace(" ", ""))
        conda_bounds = bounds(conda[cname])
        if pip_bounds != conda_bounds:
            problems.append(f"{name}: pyproject {req.specifier or '(none)'}, environment.yml {conda[cname] or '(none)'}")
    assert not problems, "pyproject.toml and environment.yml disagree:\n" + "\n".join(problems)


def test_environment_yml_lists_nothing_pyproject_lacks():
    pip_names = {CONDA_NAME.get(n, n) for n in pip_requirements()}
    extra = set(conda_requirements()) - pip_names - CONDA_ONLY
    assert not extra, f"in environment.yml but not in pyproject.toml: {sorted(extra)}"
    assert CONDA_ONLY <= set(conda_requirements())


def test_bounds_reader_catches_a_difference():
    # The comparison above must be able to fail: a changed or missing bound is seen.
    assert bounds(">=4") == {">=": Version("4")}
    assert bounds(">=4") == bounds(">=4.0")
    assert bounds("") == {}
    assert bounds(">=3") != bounds(">=4")
    assert bounds(">=6.29,<7") != bounds(">=6.29")
    with pytest.raises(AssertionError):
        bounds("==5")


# --- CI, README, Makefile ---------------------------------------------------------------


def test_ci_runs_make_test():
    ci = ROOT / ".ci" / "run"
    text = ci.read_text()
    assert os.access(ci, os.X_OK), ".ci/run must be executable"
    assert text.startswith("#!/usr/bin/env bash") or text.startswith("#!/bin/bash")
    assert re.search(r"^set -euo pipefail$", text, re.M)
    # a command line (not a comment or an echo) that runs `make test`
    calls = re.findall(r"^\s*(?:exec\s+|time\s+)?make\s+test\b", text, re.M)
    assert calls, ".ci/run must call make test"


def test_readme_explains_make_lab_and_make_test():
    readme = (ROOT / "README.md").read_text()
    for phrase in ("make lab", "make test", "environment.yml", "cluster_profiles/slurm",
                   "notebooks/00_start_here.ipynb"):
        assert phrase in readme, f"README.md does not mention {phrase}"


def test_makefile_targets():
    run = lambda *args: subprocess.run(  # noqa: E731
        ["make", "--no-print-directory", "-C", str(ROOT), *args],
        capture_output=True, text=True, timeout=hang_guard(300),
    )
    help_ = run("help")
    assert help_.returncode == 0, help_.stderr
    for target in ("setup", "kernels", "lab", "test", "browser", "simgrid", "clean"):
        assert re.search(rf"make {target}\b", help_.stdout), f"make help lacks {target}"
    # A dry run of the test target, with a venv that cannot exist: shows the whole recipe.
    dry = run("-n", "test", "VENV=/nonexistent/venv")
    assert dry.returncode == 0, dry.stderr
    assert "-m venv /nonexistent/venv" in dry.stdout
    assert "-m tuwviz.kernels" in dry.stdout
    assert "-m pytest" in dry.stdout
    browser = run("-n", "browser", "CHROMIUM=/nonexistent/chromium")
    assert "apt-get install -y chromium" in browser.stdout
    simgrid = run("-n", "simgrid")
    assert "apt-get install -y libsimgrid-dev" in simgrid.stdout
    assert re.search(r"^test: .*\bbrowser simgrid\b", (ROOT / "Makefile").read_text(), re.M)
    assert "playwright install" not in dry.stdout
