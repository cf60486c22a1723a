/*
 * reduction.c - what every reduction kernel does first: check the communicator and the
 * operator, and get scratch buffers for elements of any datatype.
 */
#include <stdlib.h>
#include "tuwviz.h"

int tuw_reduction_begin(MPI_Comm comm, MPI_Op op, int needs_commutative, int *rank, int *p)
{
    static int code = MPI_ERR_OP; /* an error code of class MPI_ERR_OP with our text */
    int commute = 1, rc = tuw_require_intracomm(comm);

    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, p);
    if (!needs_commutative)
        return MPI_SUCCESS;
    rc = MPI_Op_commutative(op, &commute);
    if (rc != MPI_SUCCESS)
        return rc;
    if (commute)
        return MPI_SUCCESS;
    /* every rank has the same op, so every rank returns here before anyone communicates */
    if (code == MPI_ERR_OP && MPI_Add_error_code(MPI_ERR_OP, &code) == MPI_SUCCESS)
        MPI_Add_error_string(code, "tuwviz: this kernel reorders the operands of the "
                                   "reduction and needs a commutative operator");
    return code;
}

char *tuw_alloc_elems(MPI_Aint n, MPI_Datatype type, void **mem)
{
    MPI_Aint lb, extent, true_lb, true_extent;

    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    /* n elements span (n - 1) extents plus one true extent; at least one byte, so a
     * 0-element buffer is still a valid, distinct pointer */
    MPI_Aint bytes = n > 0 ? true_extent + (n - 1) * extent : 0;
    *mem = malloc(bytes > 0 ? (size_t)bytes : 1);
    return *mem ? (char *)*mem - true_lb : NULL;
}
