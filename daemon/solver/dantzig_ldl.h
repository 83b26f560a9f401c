/* SPDX-License-Identifier: MIT */
/* Internal: the LDL^T with skipped members that dantzig's start factors A_GG with (dantzig.c), an
 * entry point of its own so that tests can count its clock reads (deadline.h) at orders no scene
 * of theirs reaches. */
#ifndef CONTACTD_SOLVER_DANTZIG_LDL_H
#define CONTACTD_SOLVER_DANTZIG_LDL_H
#include <stdbool.h>
#include "solver/deadline.h"

/* K = L D L^T (k x k, column-major, lower triangle read; L's strict lower part written over it,
 * D^-1 into d) with the members in order, one whose pivot is at or below tol skipped: d = 0 and
 * its column unused, so its unknown is held at zero as a deferred member of bordered.h is. end[j]:
 * one past the last non-zero of L's column j. x: NULL, or [k] replaced by L^-1 x as the columns
 * come, a skipped member's entry zeroed (the forward substitution). True when the meter's deadline
 * passed (K partly factored, x partly substituted). */
bool cs__ldl_skip(int k, double *K, double tol, double *d, int *end, double *x,
                  cs__meter *meter);

#endif /* CONTACTD_SOLVER_DANTZIG_LDL_H */
