"""Model schedules for MPI_Gatherv.

linear: direct-to-root gather
-----------------------------
Every non-root rank ``i`` with a non-empty block sends it straight to the root ``r``; the
root receives the blocks one by one in increasing rank order ``0, 1, ..., p-1`` (skipping
itself and ranks with ``m_i = 0``) and copies its own block locally (no message).  This is
the "direct communication with the root" baseline of Träff 2017 (Section 1) and mirrors
the C kernel exactly, message for message.

Cost in the one-ported model, when all blocks are non-empty::

    (p-1) alpha + beta * sum_{i != r} m_i        (m_i in bytes)

The root is the bottleneck: it receives ``p-1`` messages one after the other, while the
senders are ready at time 0.  With ``k`` non-empty non-root blocks the cost is
``k alpha + beta * sum_{i != r} m_i``.  Extra memory: none.

Example, ``p = 4``, root ``r = 2``, all blocks 40 bytes::

    rank 0: send 2 (40 B)
    rank 1: send 2 (40 B)
    rank 2: recv 0 (40 B), recv 1 (40 B), recv 3 (40 B)      -> 3 alpha + 120 beta
    rank 3: send 2 (40 B)

Examples
--------
>>> from tuwviz.problems import make_problem
>>> s = linear(make_problem("gatherv", p=4, distribution="same", b=10, root=2))
>>> s.messages(2)
[('recv', 0, 40), ('recv', 1, 40), ('recv', 3, 40)]
>>> s.messages(0)
[('send', 2, 40)]
"""
from __future__ import annotations

from ..problems import Problem
from .program import Op, Recv, Schedule, Send

__all__ = ["linear"]

# Collectives whose data flow is "every block to the root"; gather is gatherv with
# padded (equal) blocks, see Problem.block_counts.
_GATHERS = ("gather", "gatherv")


def linear(problem: Problem) -> Schedule:
    """Linear (direct-to-root) gather schedule for `problem`.

    Parameters
    ----------
    problem : Problem
        A gather or gatherv problem.

    Returns
    -------
    Schedule
        The root receives ``problem.nbytes(i)`` bytes from every other rank ``i`` with a
        non-empty block, in increasing rank order; each such rank sends its block to the
        root with tag 0.  ``meta`` holds ``root`` and the star tree as ``parent``
        (``parent[i] = root`` for ``i != root``, ``parent[root] = -1``).

    Raises
    ------
    ValueError
        If `problem` is not a gather or gatherv problem.

    Examples
    --------
    Ranks with empty blocks send nothing:

    >>> from tuwviz.problems import make_problem
    >>> s = linear(make_problem("gatherv", p=4, distribution="two_blocks", b=5, root=1))
    >>> s.all_messages()
    [[('send', 1, 20)], [('recv', 0, 20), ('recv', 3, 20)], [], [('send', 1, 20)]]
    """
    if problem.collective not in _GATHERS:
        raise ValueError(
            f"linear gather needs a gather or gatherv problem, got {problem.collective!r}"
        )
    p, root = problem.p, problem.root
    # block_counts once: for regular gather it builds a p-tuple per call.
    nbytes = [c * problem.itemsize for c in problem.block_counts()]
    senders = [i for i in range(p) if i != root and nbytes[i] > 0]
    programs: list[list[Op]] = [[] for _ in range(p)]
    for i in senders:
        programs[i].append(Send(root, nbytes[i], 0))
    programs[root] = [Recv(i, nbytes[i], 0) for i in senders]
    parent = [root] * p
    parent[root] = -1
    return Schedule(
        collective=problem.collective,
        algorithm="linear",
        p=p,
        programs=programs,
        problem=problem,
        meta={"root": root, "parent": parent},
    )
