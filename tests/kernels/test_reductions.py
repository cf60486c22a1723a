"""Reductions on real MPI ranks: operators, the commutativity restriction, MPI_IN_PLACE.

``tuwviz verify`` compares every reduction kernel with the library for every (datatype,
operator) of :data:`tuwviz.problems.REDUCTION_TYPES` (tests/experiments/test_verify.py runs it); here
the parts that verify does not reach: a kernel that needs a commutative operator returns
MPI_ERR_OP with a message when given a user-defined non-commutative one (``user_first``,
a o b = a), on every rank, before it communicates; the library itself honours that
operator's order (the result is rank 0's input); and the Python side refuses the
combination before any rank starts.
"""
from __future__ import annotations

import pytest

from tuwviz import kernels
from tuwviz.problems import make_problem
from tuwviz.experiments.verify import verify

from support import run_mpi_script


REFUSAL_SCRIPT = r'''
import json
import numpy as np
from mpi4py import MPI
from tuwviz import kernels
from tuwviz.errors import KernelError
from tuwviz.problems import make_problem
from tuwviz.run.runner import run_kernel

comm = MPI.COMM_WORLD
out = {}
for row in kernels.algorithms():
    if row.collective not in ("allreduce", "reduce", "reduce_scatter_block"):
        continue
    pr = make_problem(row.collective, comm.size, "same", 3, root=1, op="user_first")
    try:
        buf, _ = run_kernel(comm, pr, row.name)
        result = buf.recv.tolist() if buf.has_output else None
        out[row.collective + "/" + row.name] = ["ok", result, buf.send.tolist()]
    except KernelError as exc:
        out[row.collective + "/" + row.name] = ["error", str(exc), None]
res = comm.gather(out, root=0)
if comm.rank == 0:
    print("RESULT " + json.dumps(res), flush=True)
'''


def test_kernels_refuse_a_non_commutative_operator_and_the_library_honours_it():
    res = run_mpi_script(REFUSAL_SCRIPT, 3)
    rows = [r for r in kernels.algorithms() if r.collective in
            ("allreduce", "reduce", "reduce_scatter_block")]
    for rank, out in enumerate(res):
        for row in rows:
            status, detail, _ = out[f"{row.collective}/{row.name}"]
            if row.is_library or not row.needs_commutative:  # e.g. allreduce/combined_native
                assert status == "ok", (rank, row.name, detail)
            else:
                assert status == "error" and "commutative operator" in detail, (rank, detail)
    # kernels that keep the operand order (built from the library's Reduce_scatter) give the
    # same rank-0 result; and at least one kernel is refused (the check is not vacuous)
    keep_order = [f"allreduce/{r.name}" for r in rows
                  if r.collective == "allreduce" and not r.needs_commutative]
    assert "allreduce/combined_native" in keep_order
    for name in keep_order:
        assert [out[name][1] for out in res] == [res[0][name][2]] * 3, name
    assert any(r.needs_commutative for r in rows)
    # a o b = a: the library's result is rank 0's input (its block, for reduce_scatter_block)
    inputs = [out["allreduce/native"][2] for out in res]
    assert res[0]["allreduce/native"][1] == inputs[0]
    assert res[1]["reduce/native"][1] == inputs[0]  # root 1
    rsb = [out["reduce_scatter_block/native"] for out in res]
    for rank, (_, got, _) in enumerate(rsb):
        assert got == rsb[0][2][rank * 3:(rank + 1) * 3]


@pytest.mark.parametrize("collective", ["allreduce", "reduce", "reduce_scatter_block"])
def test_python_refuses_before_any_rank_starts(collective):
    for row in kernels.algorithms(collective):
        if row.needs_commutative:
            with pytest.raises(ValueError, match="needs a commutative operator, got 'user_first'"):
                row.check_problem(4, "user_first")


def test_operator_and_datatype_must_go_together():
    for dt, op in [("byte", "sum"), ("double", "bor"), ("byte", "max")]:
        with pytest.raises(ValueError, match=f"operator '{op}' is not defined on datatype '{dt}'"):
            make_problem("allreduce", 4, datatype=dt, op=op)
    assert make_problem("reduce", 4, datatype="byte", op="bor").op == "bor"
    # data movement ignores the operator
    assert make_problem("gather", 4, datatype="byte").datatype == "byte"


@pytest.mark.full
def test_every_reduce_kernel_equals_the_library_for_every_root():
    """Every root of every p up to 17, with the paper's byte:bor and int:sum, b = 0, 1, 5."""
    for p in range(1, 18):
        report = verify(["reduce"], None, [p], bs=[0, 1, 5], roots=range(p),
                        ops=["int:sum", "byte:bor"], types=["same"])
        assert report.ok, report.table()
        assert {r["root"] for r in report.results} == set(range(p))
        assert len(report.results) == len(kernels.algorithms("reduce")) * p * 3 * 2


def test_random_doubles_are_compared_with_the_stated_tolerance():
    """2 (p - 1) p 2^-53: a rounding difference passes, a lost or doubled input does not."""
    import numpy as np

    from tuwviz.run.runner import Buffers, _mismatch

    pr = make_problem("allreduce", 4, "same", 3, datatype="double", op="sum")
    ref = Buffers(np.zeros(3), np.array([0.5, -1.25, 2.0]))
    for delta, ok in [(5e-16, True), (2e-15, True), (1e-12, False), (0.3, False)]:
        got = Buffers(np.zeros(3), ref.recv + np.array([0.0, delta, 0.0]))
        assert got.recv[1] != ref.recv[1]
        found = _mismatch(pr, 0, ref, got, "random")
        assert (found is None) == ok, (delta, found)
        assert _mismatch(pr, 0, ref, got) is not None  # small integers: bit for bit
    nan = Buffers(np.zeros(3), np.array([0.5, np.nan, 2.0]))
    assert _mismatch(pr, 0, ref, nan, "random")["element"] == 1


def test_verify_runs_random_doubles_by_default():
    from tuwviz.experiments.verify import verify_cases

    cases = verify_cases(["allreduce"], ["circulant"], [3], bs=[2])
    random = [c for c in cases if c.get("data") == "random"]
    assert len(random) == 1 and random[0]["problem"]["datatype"] == "double"
    report = verify(["allreduce", "reduce_scatter"], None, [5, 7], bs=[3],
                    ops=["double:sum:random"], types=["same"])
    assert report.ok and {r["data"] for r in report.results} == {"random"}


@pytest.mark.full
def test_reductions_equal_the_library_at_sampled_larger_p():
    """p = 31, 32, 33 (Table II's), 48 and 63, oversubscribed: every reduction kernel,
    the paper's byte:bor and random doubles, b = 0, 1, 17, roots 0, p/2, p-1."""
    report = verify(["allreduce", "reduce", "reduce_scatter_block", "reduce_scatter"], None,
                    [31, 32, 33, 48, 63], bs=[0, 1, 17],
                    ops=["byte:bor", "double:sum:random"], types=["same", "in-place"])
    assert report.ok, report.table()
    assert {r["p"] for r in report.results} == {31, 32, 33, 48, 63}


def test_order_free_is_the_same_in_c_and_python(kernel_lib):
    """tuwviz.problems.order_free and tuw_order_free (which picks the circulant Allreduce's
    schedule) agree on every datatype and operator tuwviz runs, and C knows MPI's others."""
    import ctypes

    from mpi4py import MPI

    from tuwviz.problems import DATATYPES, OP_DATATYPES, OPS, order_free

    lib = kernel_lib
    lib.tuw_datatype.restype = lib.tuw_op.restype = ctypes.c_int  # MPICH: handles are ints
    lib.tuw_order_free.argtypes = [ctypes.c_int, ctypes.c_int]
    seen = set()
    for op, types in OP_DATATYPES.items():
        for dt in types:
            c = lib.tuw_order_free(lib.tuw_datatype(list(DATATYPES).index(dt)),
                                   lib.tuw_op(OPS.index(op)))
            assert bool(c) == order_free(dt, op), (dt, op)
            seen.add((dt, op, bool(c)))
    assert ("double", "sum", False) in seen and ("byte", "bor", True) in seen
    h = kernels.comm_handle
    for t, op, want in [(MPI.FLOAT, MPI.SUM, 0), (MPI.LONG_DOUBLE, MPI.PROD, 0),
                        (MPI.FLOAT, MPI.MAX, 1), (MPI.INT64_T, MPI.SUM, 1), (MPI.C_BOOL, MPI.LAND, 1),
                        (MPI.DOUBLE_INT, MPI.MINLOC, 1), (MPI.C_DOUBLE_COMPLEX, MPI.SUM, 0),
                        (MPI.UNSIGNED_CHAR, MPI.BXOR, 1), (MPI.DOUBLE, MPI.BOR, 0)]:
        assert lib.tuw_order_free(h(t), h(op)) == want, (t.Get_name(), op)
