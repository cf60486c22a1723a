"""Every kernel handles what MPI allows with datatypes, and refuses inter-communicators.

MPI requires only that the *type signatures* of a message's two sides match, not the
datatypes or counts (MPI-4.1, Section 3.3.1 "type matching", and for collectives Section
6.5).  ``tuwviz verify`` crosses *datatype pairs* for that (:mod:`tuwviz.run.typepairs` has
the table of pairs): the root's datatype and counts differ from each process's own, a
type may have gaps or another extent, processes may use different types, and the root
may pass ``MPI_IN_PLACE``.  Here every kernel of the table runs every pair against the
library, byte for byte; a kernel that counts in someone else's datatype units is caught
with the pair named; and every kernel refuses an inter-communicator.
"""
from __future__ import annotations

import json

import pytest

from tuwviz.run import typepairs
from tuwviz.collectives import collective
from tuwviz.params import verify_variants
from tuwviz.table import load_table
from tuwviz.experiments.verify import verify

from support import hang_guard, run_mpi_script
from support.sources import REVERSE_C, REVERSE_ROW

PAIRS = typepairs.PAIRS[1:]  # "same" is every other verify test

INTERCOMM_SCRIPT = r'''
import ctypes, json
from mpi4py import MPI
from tuwviz import kernels

lib = kernels.load()
world = MPI.COMM_WORLD
# groups {0} and {1, 2}: an inter-communicator between them
local = world.Split(0 if world.rank == 0 else 1, world.rank)
inter = local.Create_intercomm(0, world, 1 if world.rank == 0 else 0, tag=7)
c = kernels.comm_handle(inter)
buf = (ctypes.c_int * 64)()
counts = (ctypes.c_int * 8)(*([1] * 8))
displs = (ctypes.c_int * 8)(*range(8))
t = ctypes.c_int.from_address(MPI._addressof(MPI.INT)).value
op = ctypes.c_int.from_address(MPI._addressof(MPI.SUM)).value
out = {}
for row in kernels.algorithms():
    if row.is_library:
        continue
    fn = getattr(lib, row.function)
    fn.restype = ctypes.c_int
    args = {  # the MPI-standard signatures, root 0
        "gather": (buf, 1, t, buf, 1, t, 0), "scatter": (buf, 1, t, buf, 1, t, 0),
        "gatherv": (buf, 1, t, buf, counts, displs, t, 0),
        "scatterv": (buf, counts, displs, t, buf, 1, t, 0),
        "allgather": (buf, 1, t, buf, 1, t), "allgatherv": (buf, 1, t, buf, counts, displs, t),
        "allreduce": (buf, buf, 1, t, op), "reduce": (buf, buf, 1, t, op, 0),
        "reduce_scatter_block": (buf, buf, 1, t, op), "reduce_scatter": (buf, buf, counts, t, op),
    }[row.collective]
    # a kernel for two groups gets an intra-communicator instead: the other wrong kind
    rc = fn(*args, c if row.comm != "inter" else kernels.comm_handle(world))
    out[row.collective + "/" + row.name] = [MPI.Get_error_class(rc) if rc else 0,
                                            MPI.Get_error_string(rc) if rc else ""]
res = world.gather({"rank": world.rank, "codes": out, "err_comm": MPI.ERR_COMM}, root=0)
if world.rank == 0:
    print("RESULT " + json.dumps(res), flush=True)
'''


def _rows():
    return [r for r in load_table().rows() if r.collective in typepairs.COLLECTIVES]


def _expected_cases(ps) -> int:
    """Pair cases of a sweep over every root of every p in `ps` (one communicator: the
    intergroup algorithms' pairs are test_intergroup's)."""
    n = 0
    for r in _rows():
        if r.comm == "inter":
            continue
        for p in ps:
            roots = p if collective(r.collective).rooted else 1
            n += roots * len(verify_variants(r.collective, r.name, p)) * len(PAIRS)
    return n


# The sampled p and roots (0, p/2, p-1) with every pair are the CLI verify run's
# default (tests/experiments/test_verify.py); here every root of every p up to 17.
@pytest.mark.full
def test_every_kernel_equals_the_library_for_every_pair_p_and_root():
    ps = range(1, 18)
    colls = sorted({r.collective for r in _rows()})
    results = []
    for p in ps:  # every root of every p: one verify run per p
        report = verify(colls, None, [p], bs=[3], roots=range(p), types=PAIRS)
        assert report.ok, report.table()
        results += report.results
    assert len(results) == _expected_cases(ps)


def test_the_reported_scatterv_case_for_every_root():
    """The issue's reproducer: the root sends 1 contiguous(2, INT) per process, each
    process receives 2 INT; p = 4 failed before the fix, p = 3 passed."""
    kernels = [r.name for r in _rows() if r.collective == "scatterv"]
    for p in (3, 4):
        report = verify("scatterv", None, [p], dists=["same"], bs=[1], roots=range(p),
                        types=["root-contig"])
        assert report.ok, report.table()
        assert len(report.results) == p * len(kernels)
        assert {r["algorithm"] for r in report.results} == set(kernels)


# The table test's throw-away Gatherv with the bug class of issue 21 put in: the root places
# block i at displs[i] in units of its *own* sendtype's extent instead of recvtype's, which
# is right whenever both sides use one datatype.
UNITS_C = REVERSE_C.replace("TUW_Gatherv_reverse", "TUW_Gatherv_units").replace(
    "MPI_Type_get_extent(recvtype, &lb, &extent);",
    "MPI_Type_get_extent(sendbuf == MPI_IN_PLACE ? recvtype : sendtype, &lb, &extent);")
UNITS_ROW = (REVERSE_ROW.replace('"reverse"', '"units"').replace("TUW_Gatherv_reverse", "TUW_Gatherv_units")
             .replace('model = "gatherv/gatherv_reverse.py:reverse"\n', ""))


def test_a_kernel_counting_in_the_wrong_units_fails_with_the_pair_named(kernels_copy, cli):
    assert UNITS_C != REVERSE_C.replace("reverse", "units") and "model" not in UNITS_ROW
    (kernels_copy / "gatherv" / "gatherv_units.c").write_text(UNITS_C)
    table = kernels_copy / "algorithms.toml"
    table.write_text(table.read_text() + UNITS_ROW)
    # root-contig: the root's recvtype is 2 ints wide, its sendtype 1: blocks land short
    r = cli("verify", "--np", "2-4", "--collective", "gatherv", "--algorithms", "units",
            "--types", "same,root-contig", "--b", "5", timeout=hang_guard(900))
    assert r.returncode == 1, r.stdout + r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("FAIL gatherv/units")]
    assert "types = root-contig" in line, line
    assert "(types root-contig): its receive buffer, byte" in line, line
    r = cli("verify", "--np", "2-4", "--collective", "gatherv", "--algorithms", "units",
            "--types", "same,root-contig", "--b", "5", "--json", timeout=hang_guard(900))
    res = json.loads(r.stdout)
    assert res["complete"] and res["failures"]
    assert all(f["types"] == "root-contig" for f in res["failures"]), res["failures"]
    m = res["failures"][0]["mismatches"][0]
    assert m["rank"] == res["failures"][0]["root"] and m["expected"] != m["got"]
    # with one datatype (types = same, run in the same sweep) the kernel is right: no
    # failure above is of that pair


def test_every_kernel_refuses_the_wrong_kind_of_communicator():
    # one-group kernels get an inter-communicator, two-group kernels an intra-communicator
    results = run_mpi_script(INTERCOMM_SCRIPT, 3, guard=300)  # a hang would end at the guard
    rows = {f"{r.collective}/{r.name}": r for r in load_table().rows() if not r.is_library}
    assert sorted(r["rank"] for r in results) == [0, 1, 2]
    assert {r.comm for r in rows.values()} == {"intra", "inter"}
    for res in results:
        assert set(res["codes"]) == set(rows)  # every kernel of the table, a new one unedited
        for key, (cls, text) in res["codes"].items():
            assert cls == res["err_comm"], (res["rank"], key, cls, text)
            want = "an inter-communicator" if rows[key].comm == "inter" else "an intra-communicator"
            assert f"needs {want}" in text, (key, text)
