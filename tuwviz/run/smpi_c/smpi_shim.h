/*
 * smpi_shim.h - what SimGrid's SMPI lacks that the kernels use; included first in every
 * file of the SMPI build (tuwviz.run.smpi).
 *
 * SimGrid 3.32 has no MPI-4 large-count MPI_Get_count_c.  The kernels call it once
 * (common/p2p.c, the bytes of one received message, which fit SMPI's int counts), so a
 * wrapper over MPI_Get_count serves.
 *
 * Nor has it inter-communicators (MPI_Intercomm_create aborts the simulation), which the
 * intergroup kernels take: the driver makes them in intercomm.c, and the macros at the end
 * route the calls the kernels make on one there (on any other communicator those functions
 * call SMPI's own).
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

/* intercomm.c: inter-communicators built from two intra-communicators, at most
 * TUW_SMPI_MAX_INTER alive at once in a process (the driver keeps fewer: one per group
 * shape of its cache, freed together when that is full) */
#define TUW_SMPI_MAX_INTER 16
int tuw_smpi_intercomm(MPI_Comm local, MPI_Comm both, int a_size, MPI_Comm *out);
int tuw_smpi_send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm);
int tuw_smpi_recv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                  MPI_Status *st);
int tuw_smpi_isend(const void *buf, int count, MPI_Datatype t, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req);
int tuw_smpi_irecv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                   MPI_Request *req);
int tuw_smpi_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                      void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                      MPI_Comm comm, MPI_Status *st);
int tuw_smpi_probe(int source, int tag, MPI_Comm comm, MPI_Status *st);
int tuw_smpi_wait(MPI_Request *req, MPI_Status *st);
int tuw_smpi_test(MPI_Request *req, int *flag, MPI_Status *st);
int tuw_smpi_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st);
int tuw_smpi_comm_test_inter(MPI_Comm comm, int *flag);
int tuw_smpi_comm_remote_size(MPI_Comm comm, int *size);
int tuw_smpi_comm_remote_group(MPI_Comm comm, MPI_Group *group);
int tuw_smpi_intercomm_merge(MPI_Comm comm, int high, MPI_Comm *out);
int tuw_smpi_comm_free(MPI_Comm *comm);
int tuw_smpi_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, MPI_Comm comm);
int tuw_smpi_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm);

/* (intercomm.c undefines these again) */
#define MPI_Send tuw_smpi_send
#define MPI_Recv tuw_smpi_recv
#define MPI_Isend tuw_smpi_isend
#define MPI_Irecv tuw_smpi_irecv
#define MPI_Sendrecv tuw_smpi_sendrecv
#define MPI_Probe tuw_smpi_probe
#define MPI_Wait tuw_smpi_wait
#define MPI_Test tuw_smpi_test
#define MPI_Waitany tuw_smpi_waitany
#define MPI_Comm_test_inter tuw_smpi_comm_test_inter
#define MPI_Comm_remote_size tuw_smpi_comm_remote_size
#define MPI_Comm_remote_group tuw_smpi_comm_remote_group
#define MPI_Intercomm_merge tuw_smpi_intercomm_merge
#define MPI_Comm_free tuw_smpi_comm_free
#define MPI_Allgather tuw_smpi_allgather
#define MPI_Allgatherv tuw_smpi_allgatherv

#endif
