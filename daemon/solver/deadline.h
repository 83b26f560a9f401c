/* SPDX-License-Identifier: MIT */
/* Internal: the one deadline test every solver and cs_step use (the library reads no clock of
 * its own; the caller's clock_ns is called). */
#ifndef CONTACTD_SOLVER_DEADLINE_H
#define CONTACTD_SOLVER_DEADLINE_H
#include <stdbool.h>
#include "solver/types.h"

static inline bool cs__deadline_passed(const cs_options *opt) {
    return opt && opt->clock_ns && opt->deadline_ns && opt->clock_ns() >= opt->deadline_ns;
}

#endif /* CONTACTD_SOLVER_DEADLINE_H */
