"""C sources and table rows the tests write into a copy of kernels_c or a workspace."""
from __future__ import annotations

from tuwviz import config

__all__ = ["REVERSE_C", "REVERSE_MODEL", "REVERSE_ROW", "renamed_kernel"]

#: A throw-away Gatherv, its table row and its model: what adding an algorithm takes.
REVERSE_C = r"""
/*
 * gatherv_reverse.c - a throw-away Gatherv for the table test: the root receives the
 * blocks one by one in decreasing rank order, blocking.  Cost: k alpha + beta sum m_i.
 */
#include "tuwviz.h"

int TUW_Gatherv_reverse(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS, rank, p;
    MPI_Aint lb, extent;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (root < 0 || root >= p)
        return MPI_ERR_ROOT;
    if (sendcount < 0 && !(rank == root && sendbuf == MPI_IN_PLACE))
        return MPI_ERR_COUNT;
    if (rank != root)
        return sendcount > 0 ? TUW_Send(sendbuf, sendcount, sendtype, root, 0, comm) : rc;
    MPI_Type_get_extent(recvtype, &lb, &extent);
    for (int i = p - 1; i >= 0 && rc == MPI_SUCCESS; i--) {
        char *dst = (char *)recvbuf + (MPI_Aint)displs[i] * extent;
        if (i == root && sendbuf != MPI_IN_PLACE)
            rc = tuw_local_copy(sendbuf, sendcount, sendtype, dst, recvcounts[i], recvtype);
        else if (i != root && recvcounts[i] > 0)
            rc = TUW_Recv(dst, recvcounts[i], recvtype, i, 0, comm, MPI_STATUS_IGNORE);
    }
    return rc;
}
"""

REVERSE_ROW = """
[[algorithm]]
collective = "gatherv"
name = "reverse"
function = "TUW_Gatherv_reverse"
in_place = true
description = "throw-away test algorithm: the root receives in decreasing rank order"
model = "gatherv/gatherv_reverse.py:reverse"
"""

REVERSE_MODEL = '''
"""Model of the throw-away gatherv/reverse: the root receives from p-1 down to 0."""
from tuwviz.model.program import Recv, Schedule, Send


def reverse(problem):
    p, root = problem.p, problem.root
    nbytes = [c * problem.itemsize for c in problem.block_counts()]
    senders = [i for i in reversed(range(p)) if i != root and nbytes[i] > 0]
    programs = [[] for _ in range(p)]
    for i in senders:
        programs[i].append(Send(root, nbytes[i], 0, blocks=range(i, i + 1)))
    programs[root] = [Recv(i, nbytes[i], 0, blocks=range(i, i + 1)) for i in senders]
    return Schedule(problem.collective, "reverse", p, programs, problem, {})
'''


def renamed_kernel(rel: str, function: str, edits: list[tuple[str, str]] = ()) -> str:
    """A package kernel's source, its function renamed, with `edits` (old, new) applied."""
    text = (config.KERNELS_DIR / rel).read_text()
    name = text.split("int TUW_", 1)[1].split("(", 1)[0]
    text = text.replace(f"TUW_{name}(", f"{function}(")
    for old, new_ in edits:
        assert old in text, (rel, old)
        text = text.replace(old, new_)
    return text
