/* SPDX-License-Identifier: MIT */
/* Internal: workspace bytes cs_step() itself takes (impulses and velocities of one answer). */
#ifndef CONTACTD_SOLVER_STEP_H
#define CONTACTD_SOLVER_STEP_H
#include <stddef.h>
#include "wire/types.h"

size_t cs_step_size(const cs_limits *lim);

#endif /* CONTACTD_SOLVER_STEP_H */
