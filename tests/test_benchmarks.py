"""The benchmark scripts' own failure paths (their numbers are not tested: see each
script's docstring)."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _osu(*args, env=None):
    import os

    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "osu.py"), *args],
                          capture_output=True, text=True, timeout=120,
                          env={**{k: v for k, v in os.environ.items() if k != "OSU_SOURCE"},
                               **(env or {})})


def test_osu_comparison_says_why_osu_could_not_be_built(tmp_path):
    r = _osu()
    assert r.returncode == 2
    assert "OSU Micro-Benchmarks could not be built: no OSU source given" in r.stderr
    assert "mvapich.cse.ohio-state.edu" in r.stderr and "--osu-source" in r.stderr
    r = _osu("--osu-source", str(tmp_path))
    assert r.returncode == 2 and "is not an OSU source tree (no configure script" in r.stderr
    (tmp_path / "configure").write_text("#!/bin/sh\n")
    r = _osu(env={"OSU_SOURCE": str(tmp_path)})
    assert r.returncode == 2 and "has no osu_gather.c" in r.stderr
