/* SPDX-License-Identifier: MIT */
/* Lemke's method for the standard LCP w = Mz + q, w >= 0, z >= 0, w'z = 0 (covering vector c). */
#ifndef CONTACTD_SOLVER_LEMKE_H
#define CONTACTD_SOLVER_LEMKE_H
#include <stddef.h>
#include "solver/model.h"

/* Scratch bytes cs_lemke_lcp() needs for order n. */
size_t cs_lemke_lcp_size(int n);

/* Solves the LCP (M, q) with covering vector c (NULL: all ones). M: [n x n] column-major,
 * ldm >= n. z: [n] out, the solution (or zero when the status is negative). opt may be NULL.
 * st: always set (pivots, peak bytes). Degenerate ties are broken lexicographically (rows of
 * [q', B^-1] divided by the entering column), so the method cannot cycle.
 * Column entries and ratio ties are judged against their own rounding-error bounds (lemke.c,
 * ACCURACY), so degenerate problems whose tableau is full of rounding noise do not end early.
 * Returns CS_CONVERGED; CS_RAY (secondary ray: no solution found); CS_MAXITER after
 * n^2 + 4n + 8 pivots; CS_DEADLINE; CS_SINGULAR (the basis is numerically singular when B^-1,
 * having lost half its digits, is rebuilt);
 * CS_EINPUT (non-finite data); CS_ENOSPACE.
 * thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_lemke_lcp(cs_workspace *ws, int n, const double *M, int ldm, const double *q,
                       const double *c, const cs_options *opt, double *z, cs_stats *st);

#endif /* CONTACTD_SOLVER_LEMKE_H */
