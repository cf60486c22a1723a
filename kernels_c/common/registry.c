/*
 * registry.c - read access to the algorithm table.
 *
 * The table itself, tuw_algorithms[], is generated from kernels_c/algorithms.toml at build
 * time (tuwviz/kernels.py writes it next to the library and compiles it with these
 * sources), so no C file lists algorithms.  Python checks the compiled table against
 * algorithms.toml when it loads the library.
 */
#include <stddef.h>
#include "tuwviz.h"

int tuw_algorithm_count(void) { return tuw_num_algorithms; }

const tuw_algorithm *tuw_algorithm_get(int index)
{
    return index >= 0 && index < tuw_num_algorithms ? &tuw_algorithms[index] : NULL;
}
