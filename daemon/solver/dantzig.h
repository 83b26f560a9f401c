/* SPDX-License-Identifier: MIT */
/* Baraff 1994, section 4: Dantzig's principal pivoting for the frictionless contact LCP
 *     w = A f + b >= 0,  f >= 0,  f . w = 0,  A symmetric positive semidefinite. */
#ifndef CONTACTD_SOLVER_DANTZIG_H
#define CONTACTD_SOLVER_DANTZIG_H
#include <stddef.h>
#include "solver/model.h"
#include "solver/solvers.h"

/* Scratch bytes cs_dantzig_lcp() / cs_dantzig_solve() need for any problem within lim. */
size_t cs_dantzig_size(const cs_limits *lim);
/* The same for a plain LCP of order n. */
size_t cs_dantzig_lcp_size(int n);

/* Solves the LCP (A, b). A: [n x n] column-major, symmetric PSD, lda >= n. b: [n]. f: [n] out:
 * the solution, or the last iterate when the status is not CS_CONVERGED. opt may be NULL (no
 * deadline). st: out, always set (pivots = steps taken, peak bytes).
 * Returns CS_CONVERGED; CS_DEADLINE or CS_MAXITER (f is a partial iterate: f >= 0 but some
 * w_i < 0); CS_RAY when a driving direction makes no progress (b far from the range of A:
 * no solution); CS_ENOSPACE; CS_EINPUT for non-finite data.
 * Pivot cap: 4 n (n + 1) + 8 steps (each drive-to-zero never repeats its clamped set, Baraff's
 * theorem 3; in practice a drive takes a few steps). thread: any, one caller per workspace.
 * rt-safe: yes. */
cs_status cs_dantzig_lcp(cs_workspace *ws, int n, const double *A, int lda, const double *b,
                         const cs_options *opt, double *f, cs_stats *st);

/* Frictionless contact: A = N M^-1 N^T, b = N v* - bias, from the model's normal rows.
 * lambda: [3 nc] out, contact-frame impulses (tangential parts zero). Same statuses. */
cs_status cs_dantzig_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                           double *lambda, cs_stats *st);

/* cs_dantzig_solve() behind the solver table's signature (solvers.h). */
cs_status cs__dantzig_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out);
/* Factors an identity of order max_contacts with the LAPACK path cs_dantzig_lcp() takes, so its
 * buffers are filled at admission (cs_workspace_warm_up). thread: any (not rt). */
void cs__dantzig_warm_up(cs_workspace *ws);

#endif /* CONTACTD_SOLVER_DANTZIG_H */
