/*
 * registry.c - every algorithm tuwviz can run, as data.
 *
 * One line per algorithm: name (unique within its collective), collective, function with
 * the collective's MPI-standard signature, one-line description, flags.  Python reads this
 * table (tuwviz.kernels.algorithms) - nothing else lists algorithms.  The MPI library's own
 * collectives are registered as "native" so every comparison runs side by side.
 */
#include <stddef.h>
#include "tuwviz.h"
#include "kernels.h"

#define ALG(name, coll, fn, desc, flags) {name, coll, (void (*)(void))(fn), desc, flags}

const tuw_algorithm tuw_algorithms[] = {
    /* the MPI library's collectives */
    ALG("native", TUW_GATHER, MPI_Gather, "the MPI library's MPI_Gather", TUW_IS_LIBRARY),
    ALG("native", TUW_GATHERV, MPI_Gatherv, "the MPI library's MPI_Gatherv", TUW_IS_LIBRARY),
    ALG("native", TUW_SCATTER, MPI_Scatter, "the MPI library's MPI_Scatter", TUW_IS_LIBRARY),
    ALG("native", TUW_SCATTERV, MPI_Scatterv, "the MPI library's MPI_Scatterv", TUW_IS_LIBRARY),
    ALG("native", TUW_ALLGATHER, MPI_Allgather, "the MPI library's MPI_Allgather",
        TUW_IS_LIBRARY),
    ALG("native", TUW_ALLGATHERV, MPI_Allgatherv, "the MPI library's MPI_Allgatherv",
        TUW_IS_LIBRARY),
    ALG("native", TUW_ALLREDUCE, MPI_Allreduce, "the MPI library's MPI_Allreduce",
        TUW_IS_LIBRARY),
    ALG("native", TUW_REDUCE, MPI_Reduce, "the MPI library's MPI_Reduce", TUW_IS_LIBRARY),
    ALG("native", TUW_REDUCE_SCATTER_BLOCK, MPI_Reduce_scatter_block,
        "the MPI library's MPI_Reduce_scatter_block", TUW_IS_LIBRARY),

    /* gatherv */
    ALG("linear", TUW_GATHERV, TUW_Gatherv_linear,
        "every process sends its block directly to the root", 0),
    ALG("binomial", TUW_GATHERV, TUW_Gatherv_binomial,
        "fixed binomial tree in virtual ranks, block-size oblivious (children always send)", 0),
    ALG("tuw", TUW_GATHERV, TUW_Gatherv,
        "Träff 2017 ordered-hypercube tree built from the block sizes, linear time", 0),

    /* scatterv */
    ALG("linear", TUW_SCATTERV, TUW_Scatterv_linear,
        "the root sends every block directly to its process", 0),
    ALG("binomial", TUW_SCATTERV, TUW_Scatterv_binomial,
        "fixed binomial tree in virtual ranks, block-size oblivious; counts sent ahead", 0),
    ALG("tuw", TUW_SCATTERV, TUW_Scatterv,
        "Träff 2017 ordered-hypercube tree built from the block sizes, linear time", 0),

    /* allgatherv */
    ALG("ring", TUW_ALLGATHERV, TUW_Allgatherv_ring,
        "standard linear ring (Träff et al. 2010, Section 2.1): p-1 rounds, each as slow as "
        "the largest block", 0),
    ALG("pipelined", TUW_ALLGATHERV, TUW_Allgatherv_pipelined,
        "pipelined ring: blocks of at most B bytes, at most r = b - min b_i rounds (Eq. 1), "
        "empty blocks skipped; B from tuw_set_block_bytes or Eq. (2)", 0),
};

const int tuw_num_algorithms = sizeof tuw_algorithms / sizeof tuw_algorithms[0];

int tuw_algorithm_count(void) { return tuw_num_algorithms; }

const tuw_algorithm *tuw_algorithm_get(int index)
{
    return index >= 0 && index < tuw_num_algorithms ? &tuw_algorithms[index] : NULL;
}
