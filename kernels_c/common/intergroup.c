/*
 * intergroup.c - the inter-communicator side of the intergroup kernels (Kang, Träff et al.,
 * "Scalable algorithms for MPI intergroup Allgather and Allgatherv", ParCo 2019).
 *
 * An inter-communicator joins two disjoint groups; point-to-point ranks on it name the other
 * group.  The algorithms also communicate inside each group, which needs the group as an
 * intra-communicator: MPI has no call that returns it, so tuw_inter_begin builds it once
 * (MPI_Intercomm_merge, then MPI_Comm_split) and caches it on the inter-communicator as an
 * attribute, freed with it.  It also settles which group plays the paper's A (the larger,
 * p >= q); on a tie the group whose first process has the lower rank in MPI_COMM_WORLD, so
 * the model can say which one it is.
 *
 * The helpers below are what the intergroup kernels need inside a group, all through the
 * traced wrappers: where the other group's blocks travel packed, and their copy out.
 * Helpers call no algorithm: root gathering's broadcasts are kernels of their own
 * (kernels_c/bcast/), and Algorithm 2's sums are in allgatherv_segmented.c.
 */
#include <stdlib.h>
#include "tuwviz.h"
#include "topology.h"

typedef struct {
    MPI_Comm merged, local;
    int is_a;
} inter_cache;

static int keyval = MPI_KEYVAL_INVALID;

static int free_cache(MPI_Comm comm, int key, void *value, void *extra)
{
    inter_cache *c = value;
    (void)comm, (void)key, (void)extra;
    MPI_Comm_free(&c->local);
    MPI_Comm_free(&c->merged);
    free(c);
    return MPI_SUCCESS;
}

/* World rank of rank 0 of `group`, or INT_MAX if it is not in MPI_COMM_WORLD (spawned). */
static int leader_world_rank(MPI_Group group)
{
    MPI_Group world;
    int zero = 0, out = MPI_UNDEFINED;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(group, 1, &zero, world, &out);
    MPI_Group_free(&world);
    return out == MPI_UNDEFINED ? INT_MAX : out;
}

static int build_cache(MPI_Comm comm, inter_cache **out)
{
    int rc, size, remote, rank;
    MPI_Group mine, theirs;
    inter_cache *c = malloc(sizeof *c);
    if (!c)
        return MPI_ERR_NO_MEM;
    MPI_Comm_size(comm, &size);
    MPI_Comm_remote_size(comm, &remote);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_group(comm, &mine);
    MPI_Comm_remote_group(comm, &theirs);
    int lm = leader_world_rank(mine), lt = leader_world_rank(theirs);
    MPI_Group_free(&mine);
    MPI_Group_free(&theirs);
    /* every process of a group computes the same from the two groups alone */
    c->is_a = size > remote || (size == remote && lm < lt);
    rc = MPI_Intercomm_merge(comm, !c->is_a, &c->merged); /* A first */
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split(c->merged, c->is_a ? 0 : 1, rank, &c->local);
    if (rc != MPI_SUCCESS) {
        free(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

static int cached(MPI_Comm comm, inter_cache **c)
{
    int rc, found = 0;
    if (keyval == MPI_KEYVAL_INVALID &&
        (rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_cache, &keyval, NULL)) !=
            MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_get_attr(comm, keyval, c, &found)) != MPI_SUCCESS)
        return rc;
    if (found)
        return MPI_SUCCESS;
    if ((rc = build_cache(comm, c)) != MPI_SUCCESS)
        return rc;
    return MPI_Comm_set_attr(comm, keyval, *c);
}

int tuw_inter_merged(MPI_Comm comm, MPI_Comm *merged)
{
    inter_cache *c;
    int rc = cached(comm, &c);
    if (rc == MPI_SUCCESS)
        *merged = c->merged;
    return rc;
}

int tuw_inter_begin(MPI_Comm comm, tuw_inter_view *v)
{
    static int code = MPI_ERR_COMM;
    int inter = 0, rc = MPI_Comm_test_inter(comm, &inter);
    inter_cache *c;

    if (rc != MPI_SUCCESS)
        return rc;
    if (!inter) {
        if (code == MPI_ERR_COMM && MPI_Add_error_code(MPI_ERR_COMM, &code) == MPI_SUCCESS)
            MPI_Add_error_string(code, "tuwviz: this kernel needs an inter-communicator "
                                       "(it was given an intra-communicator)");
        return code;
    }
    if ((rc = cached(comm, &c)) != MPI_SUCCESS)
        return rc;
    v->inter = comm;
    v->local = c->local;
    v->is_a = c->is_a;
    MPI_Comm_rank(comm, &v->rank);
    MPI_Comm_size(comm, &v->size);
    MPI_Comm_remote_size(comm, &v->remote);
    return MPI_SUCCESS;
}

int tuw_intergroup_begin(MPI_Comm comm, const void *sendbuf, int sendcount, void *recvbuf,
                         tuw_inter_view *v)
{
    int rc = tuw_inter_begin(comm, v);
    if (rc != MPI_SUCCESS)
        return rc;
    if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE) /* not meaningful (MPI) */
        return MPI_ERR_BUFFER;
    return sendcount < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
}

int tuw_packed_blocks(void *recvbuf, int n, const int recvcounts[], const int rdispls[],
                      MPI_Datatype type, long long *K, char **packed, void **mem)
{
    int contiguous = 1;
    *K = 0;
    *mem = NULL;
    for (int i = 0; i < n; i++) {
        if (recvcounts[i] < 0)
            return MPI_ERR_COUNT;
        contiguous &= (long long)rdispls[i] == rdispls[0] + *K;
        *K += recvcounts[i];
    }
    if (tuw_fits_int(*K) != MPI_SUCCESS)
        return MPI_ERR_COUNT;
    MPI_Aint lb, ext;
    int rc = MPI_Type_get_extent(type, &lb, &ext);
    if (rc != MPI_SUCCESS)
        return rc;
    if (contiguous) {
        *packed = n ? (char *)recvbuf + (MPI_Aint)rdispls[0] * ext : recvbuf;
        return MPI_SUCCESS;
    }
    *packed = tuw_alloc_elems(*K, type, mem);
    return *packed ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int tuw_unpack_blocks(const char *packed, int n, const int counts[], const int displs[],
                      MPI_Datatype type, void *buf)
{
    MPI_Aint lb, ext;
    int rc = MPI_Type_get_extent(type, &lb, &ext);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        rc = tuw_local_copy(packed, counts[i], type, (char *)buf + (MPI_Aint)displs[i] * ext,
                            counts[i], type);
        packed += (MPI_Aint)counts[i] * ext;
    }
    return rc;
}
