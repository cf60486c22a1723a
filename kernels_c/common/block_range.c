/*
 * block_range.c - a run of blocks of a root's counts/displs buffer as one message
 * (see block_range.h).  Used by the tree kernels at the root, where blocks must land in
 * (gather) or leave from (scatter) the places displs gives them, with no copies.
 */
#include <stdlib.h>
#include "block_range.h"

int tuw_block_range(const int counts[], const int displs[], int p, int first, int n,
                    MPI_Datatype type, MPI_Aint extent, MPI_Aint *offset, int *count,
                    MPI_Datatype *dtype)
{
    int rc = MPI_SUCCESS, contiguous = 1, started = 0;
    long long next = 0, total = 0, start = 0;
    int *len = NULL, *disp = NULL;

    for (int k = 0; k < n; k++) { /* contiguous = non-empty blocks follow each other */
        int i = (first + k) % p;
        if (counts[i] == 0)
            continue;
        if (!started) {
            start = displs[i];
            started = 1;
        } else if (displs[i] != next) {
            contiguous = 0;
        }
        next = (long long)displs[i] + counts[i];
        total += counts[i];
    }
    *dtype = type;
    if (contiguous && total <= 0x7fffffff) {
        *offset = (MPI_Aint)start * extent;
        *count = (int)total;
        return MPI_SUCCESS;
    }
    len = malloc((size_t)n * sizeof *len);
    disp = malloc((size_t)n * sizeof *disp);
    if (!len || !disp) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    for (int k = 0; k < n; k++) {
        len[k] = counts[(first + k) % p];
        disp[k] = displs[(first + k) % p];
    }
    rc = MPI_Type_indexed(n, len, disp, type, dtype);
    if (rc != MPI_SUCCESS) {
        *dtype = type;
        goto fn_exit;
    }
    rc = MPI_Type_commit(dtype);
    if (rc != MPI_SUCCESS) {
        MPI_Type_free(dtype);
        *dtype = type;
        goto fn_exit;
    }
    *offset = 0;
    *count = 1;

fn_exit:
    free(len);
    free(disp);
    return rc;
}

int tuw_block_range_free(MPI_Datatype *dtype, MPI_Datatype type)
{
    int rc = MPI_SUCCESS;
    if (*dtype != type && *dtype != MPI_DATATYPE_NULL)
        rc = MPI_Type_free(dtype);
    *dtype = type;
    return rc;
}
