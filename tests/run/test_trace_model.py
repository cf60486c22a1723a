"""The C kernels' recorded traces equal the model schedules' messages."""
import pytest

from tuwviz import model
from tuwviz.collectives import COLLECTIVES
from tuwviz.run.launch import run_mpiexec
from tuwviz.params import verify_variants
from tuwviz.problems import default_distributions, make_problem
from tuwviz.experiments.sweep import roots_for
from tuwviz.table import load_table

from support import SAMPLED_PS, sampled_roots

P_MAX = 17
P_ALL_ROOTS = 9  # full sweep: every root up to here; above, roots 0, 1, p/2, p-2, p-1


def traced(cases):
    """Trace every case; cases up to P_ALL_ROOTS ranks run in a smaller job (less idling)."""
    results = {}
    small = [i for i, c in enumerate(cases) if c["problem"]["p"] <= P_ALL_ROOTS]
    large = [i for i, c in enumerate(cases) if c["problem"]["p"] > P_ALL_ROOTS]
    for group in (small, large):
        if group:
            group.sort(key=lambda i: cases[i]["problem"]["p"])  # ranks that sit out sleep
            nranks = max(cases[i]["problem"]["p"] for i in group)
            run_mpiexec(nranks, [cases[i] for i in group],
                        lambda k, case, r, group=group: results.__setitem__(group[k], r))
    return [results[i] for i in range(len(cases))]


def _tags(sched, rank):
    """Tag of every recorded message of `rank` in the model (a SendRecv records two)."""
    return [op.tag for op in sched.programs[rank] if not isinstance(op, model.Compute)
            for _ in range(2 if isinstance(op, model.SendRecv) else 1)]


def every_root(p):
    return range(p) if p <= P_ALL_ROOTS else sorted({0, 1, p // 2, p - 2, p - 1})


def sweep_runs(collective, algorithm, ps, roots, rotate):
    """(problem, params) of one algorithm's sweep, each distinct problem once.

    Every distribution, b in {0, 3}, every parameter variant, every p of `ps`.  With
    `rotate` (the quick run), the roots of p take turns over the distributions, so every
    root and every distribution is still traced at every p; otherwise every root is
    crossed with every distribution.  With b = 0 all distributions give the same (empty)
    blocks: such repeats are traced once.
    """
    rooted = COLLECTIVES[collective].rooted
    runs, seen = [], set()
    for p in ps:
        rs = list(roots(p)) if rooted else [0]
        dists = default_distributions(collective)
        # rotating: as many turns as distributions or roots, whichever are more
        for k in range(max(len(dists), len(rs)) if rotate else len(dists)):
            d = dists[k % len(dists)]
            for b in (0, 3):
                for r in ([rs[k % len(rs)]] if rotate else rs):
                    pr = make_problem(collective, p, d, b, root=r, seed=p)
                    for params in verify_variants(collective, algorithm, p):
                        key = (p, r, tuple(pr.counts), repr(sorted(params.items())))
                        if key not in seen:
                            seen.add(key)
                            runs.append((pr, params))
    return runs


#: (process counts, roots of p, rotate roots over distributions): quick sample, full sweep
SWEEPS = {"sampled": (SAMPLED_PS, sampled_roots, True),
          "every-root": (tuple(range(1, P_MAX + 1)), every_root, False)}
# one group; the two-group algorithms' traces are tests/kernels/test_intergroup.py's
ALGORITHMS = [(row.collective, row.name) for row in load_table().modelled() if row.serves("intra")]


@pytest.fixture(scope="module")
def sweep_traces():
    """Traces of every modelled algorithm's sweep, all in two mpiexec jobs per sweep."""
    cache = {}

    def get(sweep):
        if sweep not in cache:
            ps, roots, rotate = SWEEPS[sweep]
            runs = {alg: sweep_runs(*alg, ps, roots, rotate) for alg in ALGORITHMS}
            cases = [{"mode": "trace", "problem": pr.to_dict(), "algorithm": alg[1],
                      "params": params} for alg in ALGORITHMS for pr, params in runs[alg]]
            events = iter(traced(cases))
            cache[sweep] = {alg: [(pr, params, next(events)) for pr, params in runs[alg]]
                            for alg in ALGORITHMS}
        return cache[sweep]

    return get


@pytest.mark.parametrize("sweep", [
    "sampled", pytest.param("every-root", marks=pytest.mark.full)])
@pytest.mark.parametrize("collective, algorithm", ALGORITHMS)
def test_trace_equals_model_for_all_p_roots_and_distributions(collective, algorithm, sweep,
                                                              sweep_traces):
    """Every distribution of the collective's paper, every parameter variant `tuwviz
    verify` checks (e.g. block sizes and ring orders of the pipelined ring), for the
    sampled p and roots (`make test`) or every p up to 17 and root (`make test-full`)."""
    traces = sweep_traces(sweep)[(collective, algorithm)]
    compared = 0
    for pr, params, events in traces:
        # mpiexec runs every rank on this one host: the model's default node map
        sched = model.schedule(collective, algorithm, pr, **params)
        for rank in range(pr.p):
            got = [(e["dir"], e["peer"], e["bytes"]) for e in events[rank]]
            assert got == sched.messages(rank), f"{pr.label()} {params} rank {rank}"
            if collective in ("allgather", "allgatherv"):  # tags are rounds: equal too
                assert [e["tag"] for e in events[rank]] == _tags(sched, rank)
            assert all(e["rank"] == rank and e["t_end"] >= e["t_start"] for e in events[rank])
            compared += len(got)
    assert compared >= 100  # the comparison was not vacuous
    ps, roots, _ = SWEEPS[sweep]
    assert {pr.p for pr, _, _ in traces} == set(ps)
    if COLLECTIVES[collective].rooted:  # every sampled root of every p was traced
        assert {(pr.p, pr.root) for pr, _, _ in traces} == {(p, r) for p in ps for r in roots(p)}


def test_trace_records_what_was_really_sent():
    pr = make_problem("gatherv", 4, "same", 5, root=1)
    (events,) = traced([{"mode": "trace", "problem": pr.to_dict(), "algorithm": "linear"}])
    assert [e["peer"] for e in events[1]] == [0, 2, 3]  # rank order
    assert [(e["dir"], e["bytes"]) for e in events[1]] == [("recv", 20)] * 3
    assert [(e["dir"], e["peer"], e["bytes"]) for e in events[0]] == [("send", 1, 20)]
    # the library's own collective is not traced: its internals are not ours to record
    (native,) = traced([{"mode": "trace", "problem": pr.to_dict(), "algorithm": "native"}])
    assert native == [[], [], [], []]


def test_roots_for_rooted_and_unrooted():
    assert roots_for("gatherv", 9) == [0, 4, 8]
    assert roots_for("allgather", 9) == [0]


def test_the_circulant_allreduce_traces_the_butterfly_where_order_matters():
    """A sum of doubles (rank-dependent orders would round differently) runs the
    butterfly's schedule, in kernel and model alike; max on doubles and integer sums the
    paper's circulant rounds."""
    runs = [(p, dt, op) for p in (3, 4, 5, 6, 8) for dt, op in
            (("double", "sum"), ("double", "user_sum"), ("double", "max"), ("int", "sum"))]
    problems = [make_problem("allreduce", p, "same", 3, datatype=dt, op=op) for p, dt, op in runs]
    traces = traced([{"mode": "trace", "problem": pr.to_dict(), "algorithm": "circulant"}
                     for pr in problems])
    for pr, events in zip(problems, traces):
        sched = model.schedule("allreduce", "circulant", pr)
        butterfly = model.schedule("allreduce", "butterfly", pr)
        circulant = pr.op == "max" or pr.datatype == "int"
        assert (sched.programs == butterfly.programs) is (not circulant), pr.label()
        for rank in range(pr.p):
            assert [(e["dir"], e["peer"], e["bytes"]) for e in events[rank]] == \
                sched.messages(rank), f"{pr.label()} rank {rank}"


def test_trace_takes_one_algorithm_or_one_per_problem():
    from tuwviz.run.trace import trace

    pr = make_problem("gather", 3, "same", 1)
    with pytest.raises(ValueError, match="2 algorithms for 1 problems: give one, or one per"):
        trace([pr], ["binomial", "divide_conquer"])
