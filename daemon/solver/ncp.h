/* SPDX-License-Identifier: MIT */
/* Todorov 2010: implicit nonlinear complementarity. Frictional contact on the exact Coulomb cone
 * in contact space (3 unknowns per contact), solved by Gauss-Newton with adaptive
 * Levenberg-Marquardt damping and a dogleg between the Newton and Cauchy points. Two entries: the
 * Delassus form (W, b, mu), which FCLIB local problems and the tests use directly, and the model
 * (W and b built from a cs_model), which cs_step's solver table calls. */
#ifndef CONTACTD_SOLVER_NCP_H
#define CONTACTD_SOLVER_NCP_H
#include <stddef.h>
#include "solver/model.h"
#include "solver/solvers.h"

/* Numerical parameters. Zero fields take the defaults in brackets. */
typedef struct cs_ncp_params {
    double tol;         /* stop when |r(x)|_inf <= tol max(|b|_inf, |W f|_inf), r of eq. 15
                         * [1e-10] */
    int max_iterations; /* Gauss-Newton iterations, the initial solve not counted [50] */
} cs_ncp_params;

/* What a solve did, besides the impulses. */
typedef struct cs_ncp_info {
    int iterations; /* Gauss-Newton iterations (the stick-assumption initial solve not counted) */
    int newton;     /* iterations that took the Newton point (the rest: the dogleg search) */
    double residual; /* |r(x)|_inf / max(|b|_inf, |W f|_inf) at the returned iterate (eq. 15;
                      * the absolute value when that scale is 0) */
    bool no_iterate; /* CS_DEADLINE before the first iterate was evaluated: lambda is the warm
                      * start (or zero), not an answer of this solve */
} cs_ncp_info;

/* Scratch bytes of cs_ncp_delassus() for nc contacts. */
size_t cs_ncp_delassus_size(int nc);

/* Solves the contact problem in Delassus form: find impulses lambda and velocities u with
 *     u = W lambda + b,  0 <= lambda_n,i  perp  u_n,i >= 0,
 *     |lambda_t,i| <= mu_i lambda_n,i,  lambda_t,i = -mu_i lambda_n,i u_t,i / |u_t,i| when sliding
 * for every contact i (rows n, t1, t2 of each contact, contact order).
 * W: [3nc x 3nc] column-major, ldw >= 3 nc, symmetric positive semidefinite (rank deficiency is
 * fine). b: [3nc] the free relative velocity, its normal entries already shifted by any
 * penetration-recovery bound (the condition is u_n >= 0). mu: [nc] >= 0. lambda0: [3nc] initial
 * impulses (a warm start), or NULL for the paper's stick-assumption start. prm: NULL for the
 * defaults. opt: the deadline (NULL: none). scratch: cs_ncp_delassus_size(nc) bytes, 64-byte
 * aligned. lambda: [3nc] out, filled for every status >= 0 (the best iterate: each iteration
 * lowers |r|). ret_info: may be NULL; filled for every status.
 * Returns CS_CONVERGED; CS_DEADLINE (opt's deadline passed: the best iterate so far, or, with
 * ret_info->no_iterate, none yet: lambda is lambda0, or f(x) of a start it could not evaluate);
 * CS_MAXITER; CS_RAY (no descent: a non-zero local minimum of |r|, lambda its iterate);
 * CS_EINPUT (non-finite W, b, lambda0 or mu, or mu < 0; lambda untouched).
 * thread: any, one caller per scratch block. rt-safe: yes (no allocation; bounded: every loop
 * has a cap from nc and max_iterations). */
cs_status cs_ncp_delassus(int nc, const double *W, int ldw, const double *b, const double *mu,
                          const double *lambda0, const cs_ncp_params *prm, const cs_options *opt,
                          void *scratch, double *lambda, cs_ncp_info *ret_info);

/* Workspace bytes cs_ncp_solve() takes for any scene within lim (besides the model). */
size_t cs_ncp_size(const cs_limits *lim);

/* The model path: W = J M^-1 J^T (cs_model_delassus) and b = J v* with each normal entry minus
 * m->bias (the velocity-level bound v_n >= bias), then cs_ncp_delassus(). Where Gauss-Newton
 * stalls a second time, has used three quarters of its iterations or ends at a local minimum,
 * it restarts once, with the iterations left, from the pivoting solver's answer on the friction
 * pyramid (cs_dantzig_solve_bounded, m->nd sides), and the better of the two answers is
 * returned. lambda0: [3 nc] the caller's warm start (the last certified impulses by contact id,
 * zero for new contacts), or NULL for a cold start. lambda: [3 nc] out, contact-frame impulses
 * on body_a (n, t1, t2), N s. st: out, always set (iterations, the restart's pivots, peak
 * bytes). ret_info: may be NULL.
 * Returns cs_ncp_delassus()'s statuses, CS_DEADLINE while W is formed (lambda = lambda0, or 0;
 * ret_info->no_iterate) or during the restart's pivots (lambda: the best iterate before it), or
 * CS_ENOSPACE.
 * thread: any, one caller per workspace. rt-safe: yes (the pivoting solve has its own cap and
 * reads the deadline). */
cs_status cs_ncp_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                       const cs_ncp_params *prm, const double *lambda0, double *lambda,
                       cs_stats *st, cs_ncp_info *ret_info);

/* The solver table's entry (solvers.h): starts from the warm start's impulses by contact id
 * (zero for new contacts; the stick start when it knows none of them). At the deadline its best
 * iterate is the step's answer (an `iterates` solver), or out->no_iterate when it had none. */
size_t cs__ncp_run_size(const cs_limits *lim);
cs__solver_run cs__ncp_run;

#endif /* CONTACTD_SOLVER_NCP_H */
