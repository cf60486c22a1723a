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

static int one_of(MPI_Datatype t, const MPI_Datatype *list, int n)
{
    for (int i = 0; i < n; i++)
        if (t == list[i])
            return 1;
    return 0;
}

int tuw_order_free(MPI_Datatype type, MPI_Op op)
{
    static const MPI_Datatype integer[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT,
        MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG,
        MPI_UNSIGNED_LONG_LONG, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
        MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_AINT, MPI_OFFSET, MPI_COUNT};
    static const MPI_Datatype real[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
    static const MPI_Datatype pair[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT,
                                        MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};
    int is_int = one_of(type, integer, sizeof integer / sizeof *integer);

    if (op == MPI_MAX || op == MPI_MIN)
        return is_int || one_of(type, real, sizeof real / sizeof *real);
    if (op == MPI_MINLOC || op == MPI_MAXLOC)
        return one_of(type, pair, sizeof pair / sizeof *pair);
    if (op == MPI_SUM || op == MPI_PROD || op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR ||
        op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return is_int;
    return 0; /* user-defined: nothing is known of its rounding */
}

int tuw_reduce_scatter_begin(MPI_Comm comm, MPI_Op op, const int recvcounts[], int *rank,
                             int *p)
{
    int rc = tuw_reduction_begin(comm, op, 1, rank, p);

    for (int i = 0; rc == MPI_SUCCESS && i < *p; i++) /* the same on every rank */
        if (recvcounts[i] < 0)
            rc = MPI_ERR_COUNT;
    return rc;
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

int tuw_tree_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int parent, int parent_tag, int nchildren, const int child[],
                    const int child_tag[], MPI_Comm comm)
{
    int rc = MPI_SUCCESS, is_root = parent < 0;
    void *mem_acc = NULL, *mem_temp = NULL;
    int in_place = is_root && sendbuf == MPI_IN_PLACE;
    const void *own = in_place ? recvbuf : sendbuf;

    if (count < 0) /* the same count on every rank: every rank returns here */
        return MPI_ERR_COUNT;

    if (nchildren == 0) { /* a leaf sends its input as it is; a lone root copies it */
        if (!is_root)
            return TUW_Send(sendbuf, count, datatype, parent, parent_tag, comm);
        return in_place ? MPI_SUCCESS
                        : tuw_local_copy(sendbuf, count, datatype, recvbuf, count, datatype);
    }
    char *acc = is_root ? recvbuf : tuw_alloc_elems(count, datatype, &mem_acc);
    int need_temp = nchildren > 1 || in_place;
    char *temp = need_temp ? tuw_alloc_elems(count, datatype, &mem_temp) : NULL;
    if ((!is_root && !acc) || (need_temp && !temp)) { /* the root's recvbuf may be NULL */
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    for (int c = 0; c < nchildren; c++) {
        int first = c == 0 && !in_place; /* the accumulator does not hold my input yet */
        rc = TUW_Recv(first ? acc : temp, count, datatype, child[c], child_tag[c], comm,
                      MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Reduce_local(first ? own : temp, acc, count, datatype, op);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
    }
    if (!is_root)
        rc = TUW_Send(acc, count, datatype, parent, parent_tag, comm);

fn_exit:
    free(mem_acc);
    free(mem_temp);
    return rc;
}

int tuw_reduce_scatter_regular(tuw_reduce_scatter_fn fn, const void *sendbuf, void *recvbuf,
                               int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int p, rc = tuw_require_intracomm(comm);

    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_size(comm, &p);
    int *counts = malloc(sizeof(int) * (size_t)p);
    if (!counts)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++)
        counts[i] = recvcount;
    rc = fn(sendbuf, recvbuf, counts, datatype, op, comm);
    free(counts);
    return rc;
}

int tuw_allreduce_combined(tuw_reduce_scatter_fn rs, tuw_allgatherv_fn agv,
                           int needs_commutative, const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int rank, p, *counts = NULL, *displs;
    void *mem = NULL;
    MPI_Aint lb, extent;
    int rc = tuw_reduction_begin(comm, op, needs_commutative, &rank, &p);

    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0) /* the same count on every rank */
        return MPI_ERR_COUNT;
    MPI_Type_get_extent(datatype, &lb, &extent);
    counts = malloc(2 * sizeof(int) * (size_t)p);
    if (!counts)
        return MPI_ERR_NO_MEM;
    displs = counts + p;
    for (int i = 0, at = 0; i < p; at += counts[i++]) {
        counts[i] = count / p + (i < count % p);
        displs[i] = at;
    }
    char *mine = (char *)recvbuf + (MPI_Aint)displs[rank] * extent;
    if (sendbuf != MPI_IN_PLACE) {
        rc = rs(sendbuf, mine, counts, datatype, op, comm);
    } else { /* rs may not write into its own input: reduce into scratch, then move */
        char *block = tuw_alloc_elems(counts[rank], datatype, &mem);
        rc = block ? rs(recvbuf, block, counts, datatype, op, comm) : MPI_ERR_NO_MEM;
        if (rc == MPI_SUCCESS)
            rc = tuw_local_copy(block, counts[rank], datatype, mine, counts[rank], datatype);
    }
    /* agv's messages cannot be taken for rs's: they share (source, tag) pairs, but MPI
     * matches messages of one sender in the order they were sent */
    if (rc == MPI_SUCCESS)
        rc = agv(MPI_IN_PLACE, 0, datatype, recvbuf, counts, displs, datatype, comm);
    free(mem);
    free(counts);
    return rc;
}
