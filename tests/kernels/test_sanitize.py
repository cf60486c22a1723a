"""Every kernel of the algorithm table under AddressSanitizer, on real MPI ranks.

``TUWVIZ_SANITIZE=address`` makes tuwviz.kernels build a separate ``-fsanitize=address``
library that the ranks load; :func:`tuwviz.kernels.sanitize_env` gives the environment
(``LD_PRELOAD`` of libasan, since Python itself is not sanitized).  A case fails on any
ASan report (the rank aborts, the output names "AddressSanitizer") and on any mismatch
with the MPI library's own collective.  Rows and their parameter variants come from the
table (tuwviz.experiments.verify.verify_cases), so a new algorithm is checked without editing this file.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tuwviz import kernels
from tuwviz.run.launch import local_mpi_command, loopback_env, mpi_env, record_launch
from tuwviz.table import load_table
from tuwviz.experiments.verify import verify_cases

from support import hang_guard

# Runs the cases of a JSON file rank by rank (tuwviz.run.runner.run_case) and prints one line
# per failed case; ASan reports go to stderr and abort the rank.
ENGINE = textwrap.dedent('''
    import json, sys
    from mpi4py import MPI
    from tuwviz import kernels
    from tuwviz.run.runner import run_case
    world = MPI.COMM_WORLD
    bad = 0
    with kernels.pinned():  # one build for the run, as tuwviz.run.worker does
        for case in json.load(open(sys.argv[1])):
            res = run_case(world, case)
            if world.rank == 0 and not res["ok"]:
                bad += 1
                print("BAD CASE", case["algorithm"], case["problem"], res["mismatches"][:1], flush=True)
    if world.rank == 0:
        print("LIBRARY", kernels.build(), flush=True)
        print(f"CASES {len(json.load(open(sys.argv[1])))} MISMATCHES {bad}", flush=True)
''')


# quick sweep: an odd, non-power-of-two rank count (a three-level binomial tree) with empty
# and odd blocks; every p from 1 to 9 is full
QUICK = dict(ps=[5], bs=[0, 17], dists=["random", "broadcast"])


def sanitized_cases(ps, bs, dists):
    cases = []
    for p in ps:
        cases += verify_cases(ps=[p], bs=bs, dists=dists, roots=sorted({0, p - 1}))
    # the two-group kernels on an inter-communicator of the largest size, both orders
    n = max(ps)
    return cases + verify_cases(groups=[(n - 2, 2), (2, n - 2)], bs=bs)


def run_sanitized(tmp_path, cases, nranks):
    import json

    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    # nothing is timed: busy-polling ranks finish twice as fast as yielding ones
    env = {**os.environ, **loopback_env(), **kernels.sanitize_env(), **mpi_env(nranks, timed=False)}
    # build once here (not in every rank), with the sanitizer flags the ranks will ask for
    subprocess.run([sys.executable, "-m", "tuwviz.kernels"], check=True, env=env,
                   capture_output=True, timeout=hang_guard(300))
    record_launch("mpiexec", nranks)  # counted by tests/support/budget.py
    return subprocess.run([*local_mpi_command(), "-n", str(nranks), sys.executable,
                           str(tmp_path / "engine.py"), str(tmp_path / "cases.json")],
                          capture_output=True, text=True, env=env, timeout=hang_guard(600))


def check(r, cases):
    out = r.stdout + r.stderr
    assert "AddressSanitizer" not in out, out[-6000:]
    assert r.returncode == 0, out[-6000:]
    assert "BAD CASE" not in r.stdout, r.stdout[-6000:]
    assert "LIBRARY" in r.stdout and "libtuwviz-address-" in r.stdout, r.stdout[-3000:]
    assert f"CASES {len(cases)} MISMATCHES 0" in r.stdout, out[-3000:]


def test_every_row_and_variant_is_swept():
    cases = sanitized_cases(**QUICK)
    swept = {(c["problem"]["collective"], c["algorithm"], str(c["params"])) for c in cases}
    for row in load_table():
        for params in row.verify_variants(5):
            assert (row.collective, row.name, str(params)) in swept


def test_sanitized_library_is_separate_and_reports_bad_writes(monkeypatch):
    monkeypatch.delenv("TUWVIZ_SANITIZE", raising=False)
    plain = kernels.library_path()
    monkeypatch.setenv("TUWVIZ_SANITIZE", "address")
    asan = kernels.library_path()
    assert plain != asan and "-address-" in asan.name
    monkeypatch.setenv("TUWVIZ_SANITIZE", "bogus")
    with pytest.raises(Exception, match="TUWVIZ_SANITIZE=bogus"):
        kernels.library_path()


def test_all_kernels_under_asan_quick(tmp_path):
    cases = sanitized_cases(**QUICK)
    check(run_sanitized(tmp_path, cases, 5), cases)


@pytest.mark.full
def test_all_kernels_under_asan_full(tmp_path):
    cases = sanitized_cases(range(1, 10), [0, 1, 17, 1000], None)
    # root gathering's large broadcast (binomial scatter + ring, >= 12,288 bytes to >= 8
    # processes) and its scratch buffer
    cases += verify_cases(["allgather", "allgatherv"], ["root_gathering"], groups=[(8, 1)],
                          bs=[4000])
    check(run_sanitized(tmp_path, cases, 9), cases)
