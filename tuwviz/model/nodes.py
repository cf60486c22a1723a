"""The alpha-beta model with nodes: processes on multi-core nodes, one network port per node.

:func:`~tuwviz.model.simulate.simulate` is the papers' flat model: every message costs
``alpha + beta n``, wherever its two processes are.  The papers' machines are clusters of
multi-core nodes, and some of their results depend on it (the allgatherv paper's SMP ring,
whose messages mostly stay inside nodes; the circulant and intergroup papers' intra- versus
inter-node messages).  :func:`simulate_nodes` runs the same schedules with

* a node for every process (:class:`NodeNetwork`, e.g. :meth:`NodeNetwork.from_platform`:
  the ranks of a :mod:`tuwviz.platforms` platform, block by block as ``mpiexec`` places
  them);
* separate ``alpha, beta`` inside a node and between nodes;
* optionally ONE port per node (``one_port=True``): a node's processes share its link, a
  full-duplex one (one stream out and one in at a time), as in the allgatherv paper's model
  of SMP clusters.  A message between nodes passes the sender's port out and the
  receiver's port in, each first come, first served, after its latency: it ends when both
  have passed its bytes, ``max(max(start + alpha, out port free), max(start + alpha, in
  port free)) + beta n``.  Latencies overlap; bytes through one port do not.

Everything else is :func:`~tuwviz.model.simulate.simulate`'s model (blocking operations,
one-ported bidirectional processes, FIFO matching per pair, Waitall chains), and with one
node kind of cost and no ports the two give the same times (a test sweeps every algorithm).

Unlike :func:`~tuwviz.model.simulate.simulate`, which may handle the ranks in any order
(its times do not depend on it), this one handles events in time order (a heap): a port is
given first come, first served, and "first" must mean first in time.

Examples
--------
Two ranks on one node and one on another, all sending 1,000 bytes to rank 0 (node 0):
the message from inside the node is cheap, the other crosses the network.

>>> from tuwviz.model.program import Recv, Schedule, Send
>>> s = Schedule("x", "y", 3, [[Recv(1, 1000), Recv(2, 1000)], [Send(0, 1000)], [Send(0, 1000)]])
>>> net = NodeNetwork(node=(0, 0, 1), intra=(1e-6, 1e-10), inter=(5e-6, 1e-9))
>>> [round(float(x) * 1e6, 3) for x in simulate_nodes(s, net).finish]
[7.1, 1.1, 7.1]
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from ..platforms import Platform, hostfile
from ..platforms import platform as get_platform
from .ops import Compute, Recv, ScheduleError, Send, SendRecv, Waitall, paused_gc
from .program import Schedule
from .simulate import Message, SimResult, _by_start, _deadlock_message, _size_mismatch

__all__ = ["NodeNetwork", "simulate_nodes"]


@dataclass(frozen=True)
class NodeNetwork:
    """Where each process runs, and what a message costs inside a node and between nodes.

    Attributes
    ----------
    node : tuple of int
        The node of every rank.
    intra, inter : (alpha, beta)
        Seconds per message and per byte inside a node, and between nodes.
    one_port : bool
        Whether a node's processes share one full-duplex network port (bytes between nodes
        pass one message at a time in each direction).
    label : str
        Where the numbers come from, for reports (e.g. the platform's name).
    """

    node: tuple[int, ...]
    intra: tuple[float, float]
    inter: tuple[float, float]
    one_port: bool = False
    label: str = ""

    def describe(self) -> str:
        """One sentence for reports: the model, nodes, costs, ports.

        >>> print(NodeNetwork((0, 0, 1), (1e-6, 1e-10), (5e-6, 1e-9), True, "x").describe())
        node-aware model (x): 3 ranks on 2 nodes; inside a node alpha = 1 us, beta = 0.1 ns/B; between nodes alpha = 5 us, beta = 1 ns/B; one port per node
        """
        return (f"node-aware model{f' ({self.label})' if self.label else ''}: "
                f"{len(self.node)} ranks on {len(set(self.node))} nodes; inside a node "
                f"alpha = {self.intra[0] * 1e6:.3g} us, beta = {self.intra[1] * 1e9:.3g} ns/B; "
                f"between nodes alpha = {self.inter[0] * 1e6:.3g} us, beta = "
                f"{self.inter[1] * 1e9:.3g} ns/B; "
                + ("one port per node" if self.one_port else "no port contention"))

    def to_dict(self) -> dict:
        """JSON-able form."""
        return {"node": list(self.node), "intra": list(self.intra), "inter": list(self.inter),
                "one_port": self.one_port, "label": self.label}

    def __post_init__(self):
        for name, pair in (("intra", self.intra), ("inter", self.inter)):
            if len(pair) != 2 or not all(
                    not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
                    and v >= 0 for v in pair):
                raise ValueError(f"{name} must be (alpha, beta), finite numbers >= 0, got {pair!r}")
        if any(n < 0 for n in self.node):
            raise ValueError("node numbers must be >= 0")

    @classmethod
    def from_platform(cls, plat: str | Platform, p: int, ppn: int | None = None,
                      one_port: bool = True) -> "NodeNetwork":
        """`p` ranks on `plat`, placed as :func:`tuwviz.platforms.hostfile` places them.

        A message's alpha is the platform's latency plus its per-message overhead at both
        ends (the processor time of sending and of receiving, :attr:`Platform.overhead`).

        >>> net = NodeNetwork.from_platform("anl-gige", 6)
        >>> net.node, net.inter
        ((0, 0, 0, 0, 1, 1), (5e-05, 8.547008547008547e-09))
        """
        plat = get_platform(plat)
        nodes = tuple(int(h.split("-")[-1]) for h in hostfile(plat, p, ppn=ppn))
        o = 2 * plat.overhead
        return cls(nodes, (plat.intra_latency + o, 1.0 / plat.intra_bandwidth),
                   (plat.inter_latency + o, 1.0 / plat.inter_bandwidth), one_port,
                   plat.name + (f", {ppn} per node" if ppn else ""))


_NEXT, _CHAIN = 0, 1  # events: a rank starts its next op; a Waitall chain posts its next half


def simulate_nodes(schedule: Schedule, network: NodeNetwork, gamma: float = 0.0) -> SimResult:
    """Run `schedule` on `network`'s nodes (see the module's description of the model).

    Returns
    -------
    SimResult
        As :func:`~tuwviz.model.simulate.simulate`'s; its ``alpha`` and ``beta`` are the
        between-nodes ones.

    Raises
    ------
    ScheduleError
        As :func:`~tuwviz.model.simulate.simulate` (sizes that disagree, deadlocks).
    ValueError
        If the network has another number of ranks than the schedule, or gamma is negative.
    """
    if not (not isinstance(gamma, bool) and isinstance(gamma, (int, float))
            and math.isfinite(gamma) and gamma >= 0):
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma!r}")
    p = schedule.p
    if len(network.node) != p:
        raise ValueError(f"the network places {len(network.node)} ranks, the schedule has {p}")
    with paused_gc():
        sim = _Sim(schedule.programs, network, float(gamma))
        sim.run()
        if sim.waiting():
            raise ScheduleError(_deadlock_message(schedule.programs, sim.waiting()))
        return SimResult(np.array(sim.finish, dtype=float), _by_start(sim.messages),
                         network.inter[0], network.inter[1], gamma)


class _Sim:
    """The event loop of :func:`simulate_nodes`."""

    def __init__(self, programs, net: NodeNetwork, gamma: float):
        p = len(programs)
        self.programs, self.net, self.gamma = programs, net, gamma
        self.pc = [0] * p
        self.open = [0] * p          # halves of the current op not yet ended or posted
        self.done_at = [0.0] * p     # latest end among the current op's halves
        self.finish = [0.0] * p
        self.chain: list = [None] * p  # Waitall: per direction [posts, next index]
        self.tag = [0] * p
        # a half posted before its partner: (src, dst) -> (time, nbytes, tag, chain dir)
        self.sends: dict = {}
        self.recvs: dict = {}
        self.messages: list[Message] = []
        self.port_out = [0.0] * (max(net.node, default=0) + 1)
        self.port_in = list(self.port_out)
        self.events: list = []
        self.seq = 0
        for r in range(p):
            self.push(0.0, r, _NEXT, 0)

    def push(self, t: float, r: int, kind: int, d: int) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, r, kind, d))

    def run(self) -> None:
        while self.events:
            t, _, r, kind, d = heapq.heappop(self.events)
            if kind == _NEXT:
                self.start_op(r, t)
            else:  # the chain's reservation guards the op while it posts
                self.post_chain(r, d, t)
                self.open[r] -= 1
                self.check_done(r)

    def waiting(self) -> dict:
        out = {("send",) + k: v[:3] for k, v in self.sends.items()}
        out.update({("recv",) + k: v[:3] for k, v in self.recvs.items()})
        return out

    # --- ranks ---------------------------------------------------------------------------

    def start_op(self, r: int, t: float) -> None:
        prog = self.programs[r]
        if self.pc[r] == len(prog):
            self.finish[r] = t
            return
        op = prog[self.pc[r]]
        kind = type(op)
        if kind is Compute:
            self.pc[r] += 1
            self.push(t + self.gamma * op.units, r, _NEXT, 0)
            return
        self.done_at[r] = t
        self.open[r] = 1  # guard: the op cannot end while its halves are being posted
        if kind is Send:
            self.post(r, 0, op.peer, op.nbytes, op.tag, t, None)
        elif kind is Recv:
            self.post(r, 1, op.peer, op.nbytes, op.tag, t, None)
        elif kind is SendRecv:
            self.post(r, 0, op.send_peer, op.send_nbytes, op.tag, t, None)
            self.post(r, 1, op.recv_peer, op.recv_nbytes, op.tag, t, None)
        elif kind is Waitall:
            self.tag[r] = op.tag
            self.chain[r] = [[[h for h in op.posts if h[0] == "send"], 0],
                             [[h for h in op.posts if h[0] == "recv"], 0]]
            for d in (0, 1):
                self.post_chain(r, d, t)
        else:
            raise ScheduleError(f"rank {r}, op {self.pc[r]}: {op!r} is not an operation")
        self.open[r] -= 1
        self.check_done(r)

    def post_chain(self, r: int, d: int, t: float) -> None:
        """Post the next half of rank `r`'s Waitall chain `d` (0 sends, 1 receives)."""
        posts, i = self.chain[r][d]
        if i < len(posts):
            self.chain[r][d][1] = i + 1
            _, q, n = posts[i]
            self.post(r, d, q, n, self.tag[r], t, d)

    def check_done(self, r: int) -> None:
        if self.open[r] == 0:
            self.chain[r] = None
            self.pc[r] += 1
            self.push(self.done_at[r], r, _NEXT, 0)

    def half_ended(self, r: int, end: float, d: int | None, was_waiting: bool) -> None:
        if end > self.done_at[r]:
            self.done_at[r] = end
        if was_waiting:
            self.open[r] -= 1
        if d is not None:
            posts, i = self.chain[r][d]
            if i < len(posts):  # the chain's next half leaves when this one has ended
                self.open[r] += 1
                self.push(end, r, _CHAIN, d)
        if was_waiting:
            self.check_done(r)

    # --- messages ------------------------------------------------------------------------

    def post(self, r: int, d: int, q: int, n: int, tag: int, t: float, chain_dir) -> None:
        """Rank `r` posts a send (`d` = 0) to or a receive (1) from `q` at time `t`."""
        if d == 0:
            key, theirs, mine = (r, q), self.recvs, self.sends
        else:
            key, theirs, mine = (q, r), self.sends, self.recvs
        other = theirs.pop(key, None)
        if other is None:
            mine[key] = (t, n, tag, chain_dir)
            self.open[r] += 1
            return
        t_o, n_o, tag_o, dir_o = other
        src, dst = key
        if n != n_o:
            raise (_size_mismatch(src, dst, n, n_o) if d == 0 else _size_mismatch(src, dst, n_o, n))
        start = t if t > t_o else t_o
        end = self.transfer(src, dst, n, start)
        self.messages.append(Message(src, dst, n, tag if d == 0 else tag_o, start, end))
        self.half_ended(r, end, chain_dir, False)
        self.half_ended(q, end, dir_o, True)

    def transfer(self, src: int, dst: int, n: int, start: float) -> float:
        """When a message of `n` bytes from `src` to `dst` that may start at `start` ends."""
        net = self.net
        src_node, dst_node = net.node[src], net.node[dst]
        if src_node == dst_node:
            alpha, beta = net.intra
            return start + alpha + beta * n
        alpha, beta = net.inter
        if not net.one_port or n == 0:
            return start + alpha + beta * n
        # each port passes bytes one message at a time, first come first served; the two
        # ports queue independently (holding both at once would let a busy receiving node
        # idle the sender's port too, which a switched network does not)
        ready = start + alpha
        out_done = max(ready, self.port_out[src_node]) + beta * n
        in_done = max(ready, self.port_in[dst_node]) + beta * n
        self.port_out[src_node], self.port_in[dst_node] = out_done, in_done
        return max(out_done, in_done)
