"""The node-aware model (tuwviz.model.nodes): the flat model where nodes make no
difference, cheaper messages inside a node, one port per node where it is asked for."""
import numpy as np
import pytest

from tuwviz import model
from tuwviz.model.nodes import NodeNetwork, simulate_nodes
from tuwviz.model.program import Recv, Schedule, Send, SendRecv
from tuwviz.model.simulate import simulate
from tuwviz.problems import make_problem

ALPHA, BETA = 2e-6, 1e-9


def _every_schedule():
    for coll in model.SCHEDULES:
        for alg in model.algorithms(coll, None):
            for p, q in [(1, 0), (5, 0), (8, 0), (3, 2), (6, 3)]:
                inter = alg in model.algorithms(coll, "inter")
                if inter != bool(q) or (coll in ("reduce_scatter_block", "allreduce", "reduce")
                                        and alg in ("recursive_halving", "butterfly")
                                        and p & (p - 1)):
                    continue
                for dist in ("same", "random"):
                    pr = make_problem(coll, p, dist, 3, root=p // 2 if not q else 0,
                                      **({"q": q} if q else {}))
                    yield coll, alg, pr


@pytest.mark.parametrize("where", ["one node", "a node each"])
def test_without_node_costs_it_is_the_flat_model_for_every_algorithm(where):
    ran = set()
    for coll, alg, pr in _every_schedule():
        s = model.schedule(coll, alg, pr)
        n = pr.size
        node = (0,) * n if where == "one node" else tuple(range(n))
        got = simulate_nodes(s, NodeNetwork(node, (ALPHA, BETA), (ALPHA, BETA)))
        want = simulate(s, ALPHA, BETA)
        assert np.allclose(got.finish, want.finish, rtol=1e-12, atol=0), (coll, alg, pr.label())
        assert [(m.src, m.dst, m.nbytes) for m in got.messages] == \
               [(m.src, m.dst, m.nbytes) for m in want.messages], (coll, alg)
        ran.add((coll, alg))
    assert len(ran) == sum(len(model.algorithms(c, None)) for c in model.SCHEDULES)


def test_messages_inside_a_node_cost_the_intra_node_alpha_beta():
    # rank 0 receives from 1 (same node), then from 2 (other node)
    s = Schedule("x", "y", 3, [[Recv(1, 1000), Recv(2, 1000)], [Send(0, 1000)], [Send(0, 1000)]])
    net = NodeNetwork((0, 0, 1), intra=(1e-6, 1e-10), inter=(5e-6, 1e-9))
    r = simulate_nodes(s, net)
    assert r.finish[1] == pytest.approx(1e-6 + 1e-7)
    assert r.finish[0] == pytest.approx(1.1e-6 + 5e-6 + 1e-6)


def test_one_port_per_node_serializes_the_bytes_but_not_the_latency():
    # node 0 = ranks 0-3, node 1 = ranks 4-7; every rank of node 0 sends n bytes to its
    # partner on node 1 at once
    n, a, b = 10_000, 5e-6, 1e-9
    progs = [[Send(i + 4, n)] for i in range(4)] + [[Recv(i, n)] for i in range(4)]
    s = Schedule("x", "y", 8, progs)
    node = (0,) * 4 + (1,) * 4
    free = simulate_nodes(s, NodeNetwork(node, (0, 0), (a, b), one_port=False))
    shared = simulate_nodes(s, NodeNetwork(node, (0, 0), (a, b), one_port=True))
    assert free.time == pytest.approx(a + b * n)
    assert sorted(shared.finish[4:]) == pytest.approx([a + k * b * n for k in (1, 2, 3, 4)])
    # full duplex: the same exchange both ways at once takes no longer
    both = [[SendRecv(i + 4, n, i + 4, n)] for i in range(4)] + \
           [[SendRecv(i, n, i, n)] for i in range(4)]
    assert simulate_nodes(Schedule("x", "y", 8, both),
                          NodeNetwork(node, (0, 0), (a, b), one_port=True)).time == \
        pytest.approx(a + 4 * b * n)


def test_the_port_goes_to_the_message_that_is_ready_first():
    # node 0: ranks 0 and 1, node 1: ranks 2 and 3.  Rank 0 sends 1 MB to rank 2 at once;
    # rank 1 first waits for an empty message from rank 3 (one latency), then sends 1 MB to
    # rank 3: it finds node 0's port taken by rank 0's bytes and waits for them
    a, b, mb = 1e-6, 1e-9, 1_000_000
    progs = [[Send(2, mb)], [Recv(3, 0), Send(3, mb)], [Recv(0, mb)], [Send(1, 0), Recv(1, mb)]]
    r = simulate_nodes(Schedule("x", "y", 4, progs),
                       NodeNetwork((0, 0, 1, 1), (0, 0), (a, b), one_port=True))
    end = {(m.src, m.dst): m.end for m in r.messages}
    assert end[0, 2] == pytest.approx(a + b * mb)
    assert end[1, 3] == pytest.approx(a + 2 * b * mb)


def test_a_deadlock_and_bad_networks_are_refused():
    s = Schedule("x", "y", 2, [[Recv(1, 4)], [Recv(0, 4)]])
    with pytest.raises(model.ScheduleError, match="cannot finish"):
        simulate_nodes(s, NodeNetwork((0, 1), (0, 0), (1e-6, 0)))
    with pytest.raises(ValueError, match="places 3 ranks, the schedule has 2"):
        simulate_nodes(s, NodeNetwork((0, 0, 1), (0, 0), (0, 0)))
    with pytest.raises(ValueError, match="inter must be"):
        NodeNetwork((0,), (0, 0), (-1, 0))


def test_a_platform_places_ranks_as_the_smpi_backend_does():
    net = NodeNetwork.from_platform("anl-gige", 9, ppn=2)
    assert net.node == (0, 0, 1, 1, 2, 2, 3, 3, 4) and net.one_port
    gv = NodeNetwork.from_platform("gatherv-ib36", 20)
    assert gv.node == (0,) * 16 + (1,) * 4
    assert gv.inter[0] == pytest.approx(1.5e-6 + 2e-6)  # latency + overhead at both ends
