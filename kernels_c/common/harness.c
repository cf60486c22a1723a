/*
 * harness.c - the timing loop, in C so that Python and engine round trips (~100 ms each
 * under ipyparallel) never enter a measurement.
 *
 * Per repetition: MPI_Barrier, local start, kernel, local end (the gatherv paper's method,
 * Section 5; the time of a repetition is the maximum over ranks, taken by the caller).
 */
#include <stddef.h>

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
    /* The barrier and the stop flag span both groups of an inter-communicator: there a
     * Bcast from rank 0 would name the other group's rank 0 (MPI wants MPI_ROOT and
     * MPI_PROC_NULL), so both go over the groups merged into one intra-communicator. */
    MPI_Comm sync = comm;
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter && (rc = tuw_inter_merged(comm, &sync)) != MPI_SUCCESS)
        return rc;

    for (int k = 0; k < warmup; k++) {
        rc = tuw_invoke_unchecked(index, a, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (int k = 0; k < reps && !stop; k++) {
        rc = MPI_Barrier(sync);
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
            rc = MPI_Bcast(&stop, 1, MPI_INT, 0, sync);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return *done < reps ? TUW_TIME_LIMIT : MPI_SUCCESS;
}

/* Timed runs with more ranks than cores want heavy yield (a waiting rank sleeps instead of
 * taking the CPU from the one computing); runs that time nothing finish about twice as
 * fast without it.  MPICH reads the variable at every yield, so one set of engines can
 * serve both. */
int tuw_heavy_yield(int on)
{
    int provided, index, count, before = -1;
    MPI_T_cvar_handle handle;

    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return -1;
    if (MPI_T_cvar_get_index("MPIR_CVAR_ENABLE_HEAVY_YIELD", &index) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) == MPI_SUCCESS) {
        if (count == 1 && MPI_T_cvar_read(handle, &before) == MPI_SUCCESS && on >= 0)
            MPI_T_cvar_write(handle, &on);
        MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
    return before;
}
