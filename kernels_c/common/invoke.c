/*
 * invoke.c - call any registered algorithm through one entry point.
 *
 * Python (tuwviz/runner.py) fills one tuw_args for every collective; tuw_invoke casts the
 * registry's function pointer back to the collective's MPI-standard signature.  It first
 * checks that all ranks have the same tuning parameters (params.c), outside any kernel so
 * traces and the model are unaffected.
 */
#include <string.h>
#include "tuwviz.h"

static const char *collective_names[TUW_NUM_COLLECTIVES] = {
    "gather",    "gatherv",   "scatter", "scatterv",
    "allgather", "allgatherv", "allreduce", "reduce", "reduce_scatter_block", "reduce_scatter",
};

const char *tuw_collective_name(int coll)
{
    return coll >= 0 && coll < TUW_NUM_COLLECTIVES ? collective_names[coll] : "unknown";
}

MPI_Datatype tuw_datatype(int code)
{
    switch (code) {
    case TUW_DT_BYTE: return MPI_BYTE;
    case TUW_DT_INT: return MPI_INT;
    case TUW_DT_DOUBLE: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

/* user_sum: element-wise sum of bytes, ints or doubles, declared commutative */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    if (*type == MPI_INT)
        for (int i = 0; i < *len; i++)
            ((int *)inout)[i] += ((const int *)in)[i];
    else if (*type == MPI_DOUBLE)
        for (int i = 0; i < *len; i++)
            ((double *)inout)[i] += ((const double *)in)[i];
    else if (*type == MPI_BYTE)
        for (int i = 0; i < *len; i++)
            ((unsigned char *)inout)[i] += ((const unsigned char *)in)[i];
}

/* user_first: a o b = a, associative but not commutative (inout = in o inout = in) */
static void user_first(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int size = 0; /* a user function cannot return an error: on failure, copy nothing */
    if (MPI_Type_size(*type, &size) != MPI_SUCCESS)
        return;
    memcpy(inout, in, (size_t)*len * (size_t)size);
}

MPI_Op tuw_op(int code)
{
    static MPI_Op sum_op = MPI_OP_NULL, first_op = MPI_OP_NULL; /* made on first use */

    switch (code) {
    case TUW_OP_SUM: return MPI_SUM;
    case TUW_OP_MAX: return MPI_MAX;
    case TUW_OP_MIN: return MPI_MIN;
    case TUW_OP_BOR: return MPI_BOR;
    case TUW_OP_USER_SUM:
        if (sum_op == MPI_OP_NULL)
            MPI_Op_create(user_sum, 1, &sum_op);
        return sum_op;
    case TUW_OP_USER_FIRST:
        if (first_op == MPI_OP_NULL)
            MPI_Op_create(user_first, 0, &first_op);
        return first_op;
    default: return MPI_OP_NULL;
    }
}

int tuw_invoke(int index, const tuw_args *a, MPI_Comm comm)
{
    /* before the registry lookup: every rank of comm must join this collective */
    int rc = tuw_check_params(comm);
    return rc == MPI_SUCCESS ? tuw_invoke_unchecked(index, a, comm) : rc;
}

int tuw_invoke_unchecked(int index, const tuw_args *a, MPI_Comm comm)
{
    const tuw_algorithm *alg = tuw_algorithm_get(index);
    MPI_Datatype t = tuw_datatype(a->datatype);
    MPI_Op op = tuw_op(a->op);
    if (!alg || t == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
        return MPI_ERR_ARG;

    switch (alg->collective) {
    case TUW_GATHER:
        return ((tuw_gather_fn)alg->fn)(a->sendbuf, a->sendcount, t, a->recvbuf, a->recvcount,
                                        t, a->root, comm);
    case TUW_GATHERV:
        return ((tuw_gatherv_fn)alg->fn)(a->sendbuf, a->sendcount, t, a->recvbuf,
                                         a->recvcounts, a->rdispls, t, a->root, comm);
    case TUW_SCATTER:
        return ((tuw_scatter_fn)alg->fn)(a->sendbuf, a->sendcount, t, a->recvbuf, a->recvcount,
                                         t, a->root, comm);
    case TUW_SCATTERV:
        return ((tuw_scatterv_fn)alg->fn)(a->sendbuf, a->sendcounts, a->sdispls, t, a->recvbuf,
                                          a->recvcount, t, a->root, comm);
    case TUW_ALLGATHER:
        return ((tuw_allgather_fn)alg->fn)(a->sendbuf, a->sendcount, t, a->recvbuf,
                                           a->recvcount, t, comm);
    case TUW_ALLGATHERV:
        return ((tuw_allgatherv_fn)alg->fn)(a->sendbuf, a->sendcount, t, a->recvbuf,
                                            a->recvcounts, a->rdispls, t, comm);
    case TUW_ALLREDUCE:
        return ((tuw_allreduce_fn)alg->fn)(a->sendbuf, a->recvbuf, a->recvcount, t, op, comm);
    case TUW_REDUCE:
        return ((tuw_reduce_fn)alg->fn)(a->sendbuf, a->recvbuf, a->recvcount, t, op, a->root,
                                        comm);
    case TUW_REDUCE_SCATTER_BLOCK:
        return ((tuw_reduce_scatter_block_fn)alg->fn)(a->sendbuf, a->recvbuf, a->recvcount, t,
                                                      op, comm);
    case TUW_REDUCE_SCATTER:
        return ((tuw_reduce_scatter_fn)alg->fn)(a->sendbuf, a->recvbuf, a->recvcounts, t, op,
                                                comm);
    default:
        return MPI_ERR_ARG;
    }
}
