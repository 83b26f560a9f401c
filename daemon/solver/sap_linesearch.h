/* SPDX-License-Identifier: MIT */
/* Internal: SAP's line searches along a Newton direction (sap.md section 8): the exact one
 * (root of l'(alpha) by Newton's method safeguarded by bisection) and Armijo backtracking. They
 * see the cost only through its restriction to the line. */
#ifndef CONTACTD_SOLVER_SAP_LINESEARCH_H
#define CONTACTD_SOLVER_SAP_LINESEARCH_H
#include <stdint.h>
#include "wire/types.h"

typedef struct cs__meter cs__meter;

/* The cost along the line, l(alpha) = cost(v + alpha dv): convex, C^1, piecewise C^2. */
typedef struct cs__sap_line {
    /* l, l' and l'' at alpha (dd may be NULL when not needed). */
    void (*eval)(void *ctx, double alpha, double *l, double *d, double *dd);
    void *ctx;
    double l0;         /* l(0), J */
    double d0;         /* l'(0) < 0: the direction descends */
    cs__meter *meter;  /* the solve's deadline, counted per evaluation (solver/deadline.h); NULL:
                        * none */
    int64_t units;     /* work of one evaluation, in meter units */
} cs__sap_line;

/* Minimizes l over [0, 1.5] exactly (to |l'| < 1e-8 |l'(0)|), starting from the Newton step 1:
 * returns the step in *ret_alpha. cost_abs_tol, cost_rel_tol: below this slope relative to the
 * cost, the step is 1 (the gradient is round-off). Returns CS_CONVERGED, CS_SINGULAR when the
 * root finder does not converge in 100 evaluations, or CS_DEADLINE when f->meter's deadline
 * passed (no step). thread: any. rt-safe: yes. */
cs_status cs__sap_line_exact(const cs__sap_line *f, double cost_abs_tol, double cost_rel_tol,
                             double *ret_alpha);

/* Backtracks from alpha = 1.25 by rho = 0.8 to the best Armijo step (c = 1e-4) on that grid.
 * Returns CS_CONVERGED, CS_SINGULAR when no step in 40 trials satisfies Armijo's condition, or
 * CS_DEADLINE when f->meter's deadline passed (no step). thread: any. rt-safe: yes. */
cs_status cs__sap_line_backtrack(const cs__sap_line *f, double *ret_alpha);

#endif /* CONTACTD_SOLVER_SAP_LINESEARCH_H */
