"""Model schedules of the intergroup Allgather(v) on two groups (the intergroup paper).

Paper: Kang, Träff, Al-Bahrani, Agrawal, Choudhary, Liao, "Scalable algorithms for MPI
intergroup Allgather and Allgatherv", Parallel Computing 2019, Sections 3.1 and 4.  A
two-group problem (:attr:`tuwviz.problems.Problem.q` > 0) has ``p + q`` ranks in the
schedule: a_i is rank ``i``, b_j is rank ``p + j``, as :func:`tuwviz.run.trace.trace` names
them.  The paper's A is the larger group (p >= q) whichever place it has, on a tie the
first; the builders follow the C kernels step for step:

* :func:`root_gathering` (``kernels_c/allgather/allgather_root_gathering.c``, and the
  Allgatherv one): the gathers (Allgather: in each group to its rank 0 along the binomial
  tree; Allgatherv: every process of A to b_0, in rank order, empty blocks too), then A's
  data to B's rank 0 and a broadcast in B as MPICH chooses it (the binomial tree below
  :data:`BCAST_SHORT_MSG` bytes or :data:`BCAST_MIN_PROCS` processes, else a binomial
  scatter and a ring Allgatherv), then B's data to A the same way;
* :func:`segmented` (``kernels_c/allgather/allgather_segmented.c``, Algorithm 1): A cut
  into q subgroups (:func:`~tuwviz.model.topology.intergroup.ig_part`); a_i sends its block
  to b_j and receives its segment of b_j's (one ``SendRecv``); b_j sends its i-th segment
  to the i-th process of s_j and receives its block, round by round; then the circulant
  Allgatherv (:func:`tuwviz.model.allgather.allgatherv_circulant`) inside each group.

Examples
--------
>>> from tuwviz.problems import make_problem
>>> s = segmented(make_problem("allgather", 8, "regular", 6, q=3, datatype="byte"))
>>> s.p, s.messages(9)[:6]   # b_1 and s_1 = {a3, a4, a5}: a segment of 2 out, a block in
(11, [('send', 3, 2), ('recv', 3, 6), ('send', 4, 2), ('recv', 4, 6), ('send', 5, 2), ('recv', 5, 6)])
>>> root_gathering(make_problem("allgather", 3, "regular", 4, q=2, datatype="byte")).messages(0)
[('recv', 1, 4), ('recv', 2, 4), ('send', 3, 12), ('recv', 3, 8), ('send', 2, 8), ('send', 1, 8)]
"""
from __future__ import annotations

from itertools import accumulate

from ..problems import Problem, make_problem
from .program import Op, Recv, Schedule, Send, SendRecv, Waitall
from .topology.binomial import binomial_tree_create
from .topology.intergroup import ig_part, ig_part_of, ig_receivers, ig_recv_order
from .allgatherv import ring
from .gatherv import binomial
from .allgather import allgatherv_circulant

__all__ = ["BCAST_MIN_PROCS", "BCAST_SHORT_MSG", "groups_ab", "root_gathering", "segmented"]


def _check(problem: Problem, collectives: tuple[str, ...]) -> None:
    if not problem.inter:
        raise ValueError(f"{problem.label()} is one group; the intergroup algorithms need two "
                         f"(make_problem(..., q=Q))")
    if problem.collective not in collectives:
        raise ValueError(f"no intergroup model for {problem.collective}")


def groups_ab(problem: Problem) -> tuple[list[int], list[int]]:
    """The ranks of the paper's A (the larger group; on a tie the first) and B.

    >>> groups_ab(make_problem("allgather", 2, "regular", 1, q=3))
    ([2, 3, 4], [0, 1])
    """
    first, second = list(range(problem.p)), list(range(problem.p, problem.size))
    return (first, second) if problem.p >= problem.q else (second, first)


def _sub(programs: list[list[Op]], members: list[int], sub: Schedule) -> None:
    """Append `sub`'s programs (ranks 0..n-1 of a group) to the group's members'."""
    def peer(r):
        return members[r]

    for local, prog in enumerate(sub.programs):
        out = programs[members[local]]
        for op in prog:
            if isinstance(op, Send):
                out.append(Send(peer(op.peer), op.nbytes, op.tag))
            elif isinstance(op, Recv):
                out.append(Recv(peer(op.peer), op.nbytes, op.tag))
            elif isinstance(op, SendRecv):
                out.append(SendRecv(peer(op.send_peer), op.send_nbytes, peer(op.recv_peer),
                                    op.recv_nbytes, op.tag))
            elif isinstance(op, Waitall):
                out.append(Waitall(tuple((d, peer(x), n) for d, x, n in op.posts), op.tag))
            else:
                out.append(op)


def _bcast(programs: list[list[Op]], members: list[int], nbytes: int, root: int = 0) -> None:
    """``tuw_bcast_binomial`` (``kernels_c/bcast/bcast_binomial.c``) from the group's rank
    `root`: receive from the parent, then send to the children from the largest subtree
    down, tag = round."""
    n = len(members)
    for local, r in enumerate(members):
        t = binomial_tree_create(n, local, root)
        if t.parent >= 0:
            programs[r].append(Recv(members[t.parent], nbytes, t.round))
        for e in reversed(t.children):
            programs[r].append(Send(members[e.rank], nbytes, e.round))


#: ``tuw_bcast_library``'s switch to scatter + ring: MPICH's default
#: ``MPIR_CVAR_BCAST_SHORT_MSG_SIZE`` (bytes) and ``MPIR_CVAR_BCAST_MIN_PROCS``.
BCAST_SHORT_MSG = 12288
BCAST_MIN_PROCS = 8


def _bcast_library(programs: list[list[Op]], members: list[int], count: int,
                   problem: Problem) -> None:
    """``tuw_bcast_library`` (``kernels_c/bcast/bcast_library.c``) of `count` elements from
    the group's rank 0: the binomial tree for short messages or small groups, else a
    binomial scatter of almost equal pieces and a ring Allgatherv of them (MPICH's
    large-message broadcast)."""

    n, item = len(members), problem.itemsize
    if count * item < BCAST_SHORT_MSG or n < BCAST_MIN_PROCS:
        _bcast(programs, members, count * item)
        return
    first = [ig_part(count, n, i)[0] for i in range(n)] + [count]
    for local, r in enumerate(members):
        t = binomial_tree_create(n, local, 0)
        if t.parent >= 0:  # my subtree's pieces
            nbytes = (first[min(local + t.size, n)] - first[local]) * item
            programs[r].append(Recv(members[t.parent], nbytes, t.round))
        for e in reversed(t.children):
            nbytes = (first[min(e.rank + e.size, n)] - first[e.rank]) * item
            programs[r].append(Send(members[e.rank], nbytes, e.round))
    pieces = tuple(first[i + 1] - first[i] for i in range(n))
    _sub(programs, members, ring(Problem("allgatherv", n, 0, pieces, datatype=problem.datatype)))


def root_gathering(problem: Problem) -> Schedule:
    """The libraries' root gathering (Section 3.1), as the C kernels do it."""
    _check(problem, ("allgather", "allgatherv"))

    item = problem.itemsize
    programs: list[list[Op]] = [[] for _ in range(problem.size)]
    a, b = groups_ab(problem)
    regular = problem.collective == "allgather"
    size = {g[0]: sum(problem.block_counts()[r] for r in g) * item for g in (a, b)}
    if regular:  # each group gathers at its rank 0 along the binomial tree
        for g in (a, b):
            k = problem.block_counts()[g[0]]
            _sub(programs, g, binomial(make_problem("gather", len(g), "same", k, root=0,
                                                    datatype=problem.datatype)))
    for src, dst in ((a, b), (b, a)):  # A's data first, then B's
        if regular:
            programs[src[0]].append(Send(dst[0], size[src[0]], 1))
            programs[dst[0]].append(Recv(src[0], size[src[0]], 1))
        else:  # every process to the other group's root, in rank order
            for r in src:
                programs[r].append(Send(dst[0], problem.block_counts()[r] * item, 1))
                programs[dst[0]].append(Recv(r, problem.block_counts()[r] * item, 1))
        _bcast_library(programs, dst, size[src[0]] // item, problem)
    return Schedule(problem.collective, "root_gathering", problem.size, programs, problem)


def _count_sums(programs: list[list[Op]], members: list[int]) -> None:
    """``tuw_count_sums`` in a group: recursive doubling of one ``long long`` (tag = the
    distance; receive posted before send), then the total broadcast from the last rank."""
    n = len(members)
    d = 1
    while d < n:
        for local, r in enumerate(members):
            posts = []
            if local - d >= 0:
                posts.append(("recv", members[local - d], 8))
            if local + d < n:
                posts.append(("send", members[local + d], 8))
            programs[r].append(Waitall(tuple(posts), d))
        d <<= 1
    if n > 1:
        _bcast(programs, members, 8, root=n - 1)


def _algorithm_2(problem: Problem) -> Schedule:
    """Algorithm 2 (Section 4.1), as ``allgatherv_segmented.c`` does it."""

    item = problem.itemsize
    counts = problem.block_counts()
    programs: list[list[Op]] = [[] for _ in range(problem.size)]
    groups = groups_ab(problem)
    for g in groups:  # step 1: K and the exclusive prefix sums, in each group
        _count_sums(programs, g)
    for mine, other in (groups, groups[::-1]):  # step 2: one Waitall per process
        their = [counts[r] for r in other]
        starts = [0, *accumulate(their)]  # the other group's blocks in its global index
        k_mine = sum(counts[r] for r in mine)
        before = 0
        for local, r in enumerate(mine):
            posts = []
            f, n = ig_part(starts[-1], len(mine), local)  # my part of their data
            for i in ig_recv_order(len(other), their, len(mine), local):
                a, b = max(f, starts[i]), min(f + n, starts[i + 1])
                posts.append(("recv", other[i], (b - a) * item))
            nto, lo = ig_receivers(k_mine, len(other), before, counts[r])
            for j in range(lo, lo + nto):
                g, n = ig_part(k_mine, len(other), j)
                a, b = max(g, before), min(g + n, before + counts[r])
                posts.append(("send", other[j], (b - a) * item))
            programs[r].append(Waitall(tuple(posts)))
            before += counts[r]
        # step 3: the parts of the other group's data gathered inside mine
        parts = tuple(ig_part(starts[-1], len(mine), j)[1] for j in range(len(mine)))
        _sub(programs, mine, allgatherv_circulant(Problem("allgatherv", len(mine), 0, parts,
                                                          datatype=problem.datatype)))
    return Schedule(problem.collective, "segmented", problem.size, programs, problem)


def segmented(problem: Problem) -> Schedule:
    """Algorithm 1 (Section 4) for Allgather, as ``allgather_segmented.c`` does it, and
    Algorithm 2 (Section 4.1) for Allgatherv, as ``allgatherv_segmented.c`` does it.

    Algorithm 2: in each group the counts' sum and exclusive prefix by recursive doubling
    (:class:`~tuwviz.model.program.Waitall` rounds of 8 bytes, then the total broadcast
    from the group's last rank); then one :class:`~tuwviz.model.program.Waitall` per
    process: the receives of its part in Section 4.1's order
    (:func:`~tuwviz.model.topology.intergroup.ig_recv_order`), then the sends of its
    block's pieces in receiver order; then the circulant Allgatherv of the parts.

    >>> pr = make_problem("allgatherv", 6, "regular", 1, q=3, b_b=2, datatype="byte")
    >>> pr = Problem(**{**pr.__dict__, "counts": (3, 1, 4, 1, 5, 2, 2, 2, 2)})
    >>> [op for op in segmented(pr).programs[7] if type(op).__name__ == "Waitall"][-1].posts
    (('recv', 4, 2), ('recv', 3, 1), ('recv', 2, 2), ('send', 2, 1), ('send', 3, 1))
    """
    _check(problem, ("allgather", "allgatherv"))
    if problem.collective == "allgatherv":
        return _algorithm_2(problem)

    item = problem.itemsize
    a, b = groups_ab(problem)
    p, q = len(a), len(b)
    ka, kb = problem.block_counts()[a[0]], problem.block_counts()[b[0]]
    programs: list[list[Op]] = [[] for _ in range(problem.size)]

    def pair(r, peer, send, recv):
        if send and recv:
            programs[r].append(SendRecv(peer, send * item, peer, recv * item))
        elif send:
            programs[r].append(Send(peer, send * item))
        elif recv:
            programs[r].append(Recv(peer, recv * item))

    seg_counts = []
    for i in range(p):  # a_i: its block to b_j, its segment of b_j's block back
        j = ig_part_of(p, q, i)
        first, n = ig_part(p, q, j)
        seg_counts.append(ig_part(kb, n, i - first)[1])
        pair(a[i], b[j], ka, seg_counts[-1])
    for j in range(q):  # b_j, round i: its i-th segment out, a block in
        first, n = ig_part(p, q, j)
        for i in range(n):
            pair(b[j], a[first + i], ig_part(kb, n, i)[1], ka)
    # the Allgatherv in each group: A's segments, B's runs of |s_j| blocks
    _sub(programs, a, allgatherv_circulant(Problem("allgatherv", p, 0, tuple(seg_counts),
                                                   datatype=problem.datatype)))
    runs = tuple(ig_part(p, q, j)[1] * ka for j in range(q))
    _sub(programs, b, allgatherv_circulant(Problem("allgatherv", q, 0, runs,
                                                   datatype=problem.datatype)))
    return Schedule(problem.collective, "segmented", problem.size, programs, problem)
