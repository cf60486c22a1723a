/*
 * constants.c - the values Python keeps copies of, by name.
 *
 * tuwviz mirrors a few C facts: datatype and operator codes (tuwviz.problems), ring orders
 * (the "ring" parameter's choices in algorithms.toml), the ordered hypercube's message
 * sizes (tuwviz.model), the cost-model defaults, and the layouts of tuw_args and tuw_event
 * (ctypes structures in tuwviz.kernels).  A copy that drifts would pass wrong arguments
 * silently, so tuwviz.kernels compares every copy with tuw_constant() when it loads the
 * library and names the one that differs.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "tuwviz.h"
#include "ordered_hypercube.h"

#define CONST(name) {#name, (double)(name)}
#define SIZE(type) {"sizeof " #type, (double)sizeof(type)}
#define OFFSET(type, field) {"offsetof " #type "." #field, (double)offsetof(type, field)}

static const struct {
    const char *name;
    double value;
} constants[] = {
    CONST(TUW_DT_BYTE), CONST(TUW_DT_INT), CONST(TUW_DT_DOUBLE),
    CONST(TUW_OP_SUM), CONST(TUW_OP_MAX), CONST(TUW_OP_MIN), CONST(TUW_OP_BOR),
    CONST(TUW_OP_USER_SUM), CONST(TUW_OP_USER_FIRST),
    CONST(TUW_RING_RANK), CONST(TUW_RING_SMP), CONST(TUW_RING_SPREAD),
    CONST(TUW_DEFAULT_ALPHA), CONST(TUW_DEFAULT_BETA),
    CONST(TUW_NEEDS_COMMUTATIVE), CONST(TUW_IS_LIBRARY), CONST(TUW_NEEDS_POWER_OF_TWO),
    CONST(TUW_IN_PLACE), CONST(TUW_DIR_SEND), CONST(TUW_DIR_RECV),
    SIZE(tuw_oh_state), SIZE(tuw_oh_info),
    SIZE(tuw_args),
    OFFSET(tuw_args, sendbuf), OFFSET(tuw_args, sendcount), OFFSET(tuw_args, sendcounts),
    OFFSET(tuw_args, sdispls), OFFSET(tuw_args, recvbuf), OFFSET(tuw_args, recvcount),
    OFFSET(tuw_args, recvcounts), OFFSET(tuw_args, rdispls), OFFSET(tuw_args, datatype),
    OFFSET(tuw_args, op), OFFSET(tuw_args, root),
    SIZE(tuw_event),
    OFFSET(tuw_event, rank), OFFSET(tuw_event, peer), OFFSET(tuw_event, dir),
    OFFSET(tuw_event, tag), OFFSET(tuw_event, remote), OFFSET(tuw_event, bytes),
    OFFSET(tuw_event, t_start),
    OFFSET(tuw_event, t_end),
    SIZE(tuw_algorithm),
    OFFSET(tuw_algorithm, name), OFFSET(tuw_algorithm, collective), OFFSET(tuw_algorithm, fn),
    OFFSET(tuw_algorithm, description), OFFSET(tuw_algorithm, flags),
};

#define NUM_CONSTANTS ((int)(sizeof constants / sizeof constants[0]))

double tuw_constant(const char *name)
{
    for (int i = 0; i < NUM_CONSTANTS; i++)
        if (name && strcmp(constants[i].name, name) == 0)
            return constants[i].value;
    return NAN;
}

const char *tuw_constant_name(int index)
{
    return index >= 0 && index < NUM_CONSTANTS ? constants[index].name : NULL;
}
