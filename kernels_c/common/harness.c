/*
 * harness.c - the timing loop, in C so that Python and engine round trips (~100 ms each
 * under ipyparallel) never enter a measurement.
 *
 * Per repetition: MPI_Barrier, local start, kernel, local end (the gatherv paper's method,
 * Section 5; the time of a repetition is the maximum over ranks, taken by the caller).
 */
#include "tuwviz.h"

int tuw_time(int index, const tuw_args *a, MPI_Comm comm, int warmup, int reps,
             double time_limit, double *times, int *done)
{
    int rc = MPI_SUCCESS, stop = 0;
    *done = 0;
    double begin = MPI_Wtime();

    rc = tuw_check_params(comm); /* once, outside the timed repetitions */
    if (rc != MPI_SUCCESS)
        return rc;

    for (int k = 0; k < warmup; k++) {
        rc = tuw_invoke_unchecked(index, a, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (int k = 0; k < reps && !stop; k++) {
        rc = MPI_Barrier(comm);
        if (rc != MPI_SUCCESS)
            return rc;
        double t0 = MPI_Wtime();
        rc = tuw_invoke_unchecked(index, a, comm);
        double t1 = MPI_Wtime();
        if (rc != MPI_SUCCESS)
            return rc;
        times[k] = t1 - t0;
        *done = k + 1;
        if (time_limit > 0) {
            /* rank 0's clock decides, so all ranks stop after the same repetition */
            stop = MPI_Wtime() - begin > time_limit;
            rc = MPI_Bcast(&stop, 1, MPI_INT, 0, comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return *done < reps ? TUW_TIME_LIMIT : MPI_SUCCESS;
}
