/*
 * block_range.h - a run of blocks in a root's counts/displs buffer, as one MPI message.
 *
 * Tree algorithms move consecutive runs of blocks (ranks lo..hi-1, or for a tree in
 * virtual ranks a run that wraps from rank p-1 to 0).  At the root those blocks live where
 * the user's counts[] and displs[] put them.  tuw_block_range describes such a run as
 * (buffer offset, count, datatype) for a single send or receive straight from or into the
 * user's buffer: if the run is one contiguous piece in this order (the usual case:
 * displacements are prefix sums and the run does not wrap), it is just `count` elements of
 * `type`; otherwise it is one element of a new indexed datatype (MPI then scatters or
 * gathers the pieces itself; the kernel copies nothing).
 */
#ifndef TUWVIZ_BLOCK_RANGE_H
#define TUWVIZ_BLOCK_RANGE_H

#include <mpi.h>

/* Blocks of ranks (first + k) % p for k = 0..n-1, in that order.  On success use
 * (char *)buf + *offset, *count, *dtype; free *dtype with tuw_block_range_free after the
 * operation has completed.  Returns an MPI error code. */
int tuw_block_range(const int counts[], const int displs[], int p, int first, int n,
                    MPI_Datatype type, MPI_Aint extent, MPI_Aint *offset, int *count,
                    MPI_Datatype *dtype);

/* Free *dtype if tuw_block_range created it (i.e. it differs from `type`). */
int tuw_block_range_free(MPI_Datatype *dtype, MPI_Datatype type);

#endif /* TUWVIZ_BLOCK_RANGE_H */
