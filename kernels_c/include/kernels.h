/*
 * kernels.h - prototypes of tuwviz's own collective kernels, one per algorithm file.
 * Names follow one pattern: TUW_<Collective>_<algorithm>.
 */
#ifndef TUWVIZ_KERNELS_H
#define TUWVIZ_KERNELS_H

#include <mpi.h>

/* gatherv/gatherv_linear.c */
int TUW_Gatherv_linear(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm);

/* gatherv/gatherv_binomial.c */
int TUW_Gatherv_binomial(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, int root, MPI_Comm comm);

/* gatherv/gatherv_tuw.c (tree: gatherv/ordered_hypercube*.c) */
int TUW_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm);

/* scatterv/scatterv_linear.c */
int TUW_Scatterv_linear(const void *sendbuf, const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm);

/* scatterv/scatterv_binomial.c */
int TUW_Scatterv_binomial(const void *sendbuf, const int sendcounts[], const int displs[],
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm);

/* scatterv/scatterv_tuw.c (tree: gatherv/ordered_hypercube*.c) */
int TUW_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm);

/* allgatherv/allgatherv_ring.c (ring order: allgatherv/ring_order.c) */
int TUW_Allgatherv_ring(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm);

/* allgatherv/allgatherv_pipelined.c (block size: allgatherv/ring_order.c) */
int TUW_Allgatherv_pipelined(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm);

#endif /* TUWVIZ_KERNELS_H */
