"""The collective operations tuwviz knows, described as data.

Each entry says whether the collective has a root, whether its block sizes may differ
between processes (the ``v`` variants), and whether it reduces with an operator.  The C
side (``kernels_c/common/invoke.c``) has the same list, in the same order, as an enum;
:func:`tuwviz.kernels.algorithms` checks that the two agree when the library is loaded.

Examples
--------
>>> COLLECTIVES["gatherv"].rooted, COLLECTIVES["gatherv"].irregular
(True, True)
>>> collective("allgather").mpi_name
'MPI_Allgather'
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Collective", "COLLECTIVES", "collective"]


@dataclass(frozen=True)
class Collective:
    """What a collective operation is, independent of any algorithm for it.

    Attributes
    ----------
    name : str
        Lower-case name used everywhere in tuwviz (``"gatherv"``).
    mpi_name : str
        The MPI function it corresponds to (``"MPI_Gatherv"``).
    rooted : bool
        True if one process (the root) is special.
    irregular : bool
        True if processes may contribute different block sizes.
    reduction : bool
        True if the collective combines data with an operator.
    """

    name: str
    mpi_name: str
    rooted: bool
    irregular: bool
    reduction: bool

    @property
    def shared_result(self) -> bool:
        """True if every process receives the same result (Allgather(v) and Allreduce on
        one group), which must then be the same bits everywhere.

        >>> COLLECTIVES["allreduce"].shared_result, COLLECTIVES["reduce_scatter"].shared_result
        (True, False)
        """
        return self.name in ("allgather", "allgatherv", "allreduce")


#: Order matters: it is the order of ``enum tuw_collective`` in ``kernels_c/include/tuwviz.h``.
COLLECTIVES: dict[str, Collective] = {
    c.name: c
    for c in (
        Collective("gather", "MPI_Gather", rooted=True, irregular=False, reduction=False),
        Collective("gatherv", "MPI_Gatherv", rooted=True, irregular=True, reduction=False),
        Collective("scatter", "MPI_Scatter", rooted=True, irregular=False, reduction=False),
        Collective("scatterv", "MPI_Scatterv", rooted=True, irregular=True, reduction=False),
        Collective("allgather", "MPI_Allgather", rooted=False, irregular=False, reduction=False),
        Collective("allgatherv", "MPI_Allgatherv", rooted=False, irregular=True, reduction=False),
        Collective("allreduce", "MPI_Allreduce", rooted=False, irregular=False, reduction=True),
        Collective("reduce", "MPI_Reduce", rooted=True, irregular=False, reduction=True),
        Collective(
            "reduce_scatter_block", "MPI_Reduce_scatter_block",
            rooted=False, irregular=False, reduction=True,
        ),
        Collective(
            "reduce_scatter", "MPI_Reduce_scatter", rooted=False, irregular=True, reduction=True,
        ),
    )
}


def collective(name: str) -> Collective:
    """Return the :class:`Collective` called `name`.

    Raises
    ------
    ValueError
        If `name` is not a known collective; the message lists the valid names.
    """
    try:
        return COLLECTIVES[name.lower()]
    except KeyError:
        valid = ", ".join(COLLECTIVES)
        raise ValueError(f"unknown collective {name!r}; valid collectives: {valid}") from None
