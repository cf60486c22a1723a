/*
 * smpi_shim.h - what SimGrid's SMPI lacks that the kernels use; included first in every
 * file of the SMPI build (tuwviz.run.smpi).
 *
 * SimGrid 3.32 has no MPI-4 large-count MPI_Get_count_c.  The kernels call it once
 * (common/p2p.c, the bytes of one received message, which fit SMPI's int counts), so a
 * wrapper over MPI_Get_count serves.
 *
 * Nor has it MPI's tool interface (MPI_T), which the harness uses only to switch MPICH's
 * heavy-yield mode (kernels_c/common/harness.c, tuw_heavy_yield): meaningless for simulated
 * ranks, so each call fails and the harness reports the mode as unknown.
 */
#ifndef TUWVIZ_SMPI_SHIM_H
#define TUWVIZ_SMPI_SHIM_H

#include <mpi.h>

static inline int tuw_smpi_get_count_c(const MPI_Status *status, MPI_Datatype type,
                                       MPI_Count *count)
{
    int n = 0, rc = MPI_Get_count(status, type, &n);
    *count = n; /* MPI_UNDEFINED stays MPI_UNDEFINED */
    return rc;
}
#define MPI_Get_count_c tuw_smpi_get_count_c

typedef void *MPI_T_cvar_handle;
static inline int MPI_T_init_thread(int required, int *provided)
{
    (void)required;
    *provided = MPI_THREAD_SINGLE;
    return MPI_ERR_OTHER;
}
static inline int MPI_T_finalize(void) { return MPI_SUCCESS; }
static inline int MPI_T_cvar_get_index(const char *name, int *index)
{
    (void)name;
    *index = -1;
    return MPI_ERR_OTHER;
}
static inline int MPI_T_cvar_handle_alloc(int index, void *obj, MPI_T_cvar_handle *handle,
                                          int *count)
{
    (void)index, (void)obj, (void)handle;
    *count = 0;
    return MPI_ERR_OTHER;
}
static inline int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    (void)handle, (void)buf;
    return MPI_ERR_OTHER;
}
static inline int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    (void)handle, (void)buf;
    return MPI_ERR_OTHER;
}
static inline int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    (void)handle;
    return MPI_SUCCESS;
}

#endif
