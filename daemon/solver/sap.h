/* SPDX-License-Identifier: MIT */
/* SAP, the Semi-Analytic Primal contact solver (Castro, Permenter, Han 2022): compliant contact
 * with regularized friction as an unconstrained convex minimization over generalized
 * velocities, solved by Newton's method with an exact line search. Two adapters share one core
 * (sap_core.h): the scene path (bodies and contacts, real time, used by cs_step) and the FCLIB
 * global form (offline). The maths and its sources are in sap_core.c and sap_contact.c. */
#ifndef CONTACTD_SOLVER_SAP_H
#define CONTACTD_SOLVER_SAP_H
#include <stddef.h>
#include <stdint.h>
#include "solver/model.h"
#include "solver/solvers.h"

/* FCLIB global form: M v = H r + f, u = H^T v + w; r, u per contact (normal, t1, t2). */
typedef struct cs_sap_global {
    int nv, nc;                  /* generalized dofs, contacts */
    const int *m_colptr;         /* M: nv x nv symmetric positive definite, CSC, 0-based */
    const int *m_rowind;         /*    (both triangles stored) */
    const double *m_val;
    const int *h_colptr;         /* H: nv x 3nc, CSC, 0-based */
    const int *h_rowind;
    const double *h_val;
    const double *f;             /* [nv] */
    const double *w;             /* [3 nc] */
    const double *mu;            /* [nc] */
} cs_sap_global;

/* Solves p with SAP (near-rigid regime, defaults of sap.md) for offline use: allocates its
 * own memory (not rt-safe). v [nv], r [3nc] (impulses), u [3nc] (= H^T v + w) out.
 * opt: may be NULL; deadline as in cs_options. st: iterations. Returns a cs_status.
 *
 * Details: the problem is solved cold from v* = M^-1 f. Islands are the connected components
 * of the graph of M + H H^T; each is factored densely (LAPACK dpotrf), so M may be any sparse
 * SPD matrix (FEM). Per contact the regularization is SAP's near-rigid one: R_n = w_i / (4 pi^2)
 * (beta = 1), R_t = 1e-3 w_i, w_i = ||H_i^T M^-1 H_i||_F / 3 computed exactly; w plays the role
 * of SAP's velocity bias (a gap term belongs in w_n). The answer satisfies the momentum balance
 * M v = H r + f to the stopping tolerance with r = P_F(-R^-1 u) inside the exact cone.
 * Returns CS_CONVERGED, CS_DEADLINE / CS_MAXITER (v, r, u: the last iterate, usable),
 * CS_SINGULAR (M or a Newton matrix not positive definite, or no descent), CS_EINPUT
 * (non-finite data, bad sizes or indices), CS_ENOSPACE (out of memory). thread: any. */
cs_status cs_sap_global_solve(const cs_sap_global *p, const cs_options *opt, double *v,
                              double *r, double *u, cs_stats *st);

/* Line searches along the Newton direction (sap.md section 8). */
typedef enum cs_sap_line_search {
    CS_SAP_LINE_EXACT = 0,     /* 1-D Newton on l'(alpha) safeguarded by bisection (default) */
    CS_SAP_LINE_BACKTRACK = 1, /* Armijo backtracking */
} cs_sap_line_search;

/* SAP's numerical parameters. Internal: clients give physical parameters (stiffness,
 * dissipation, mu) and never see these; tests and offline tools may. Zero fields take the
 * defaults in brackets (Drake's, sap.md section 9). */
typedef struct cs_sap_params {
    double beta;         /* near-rigid threshold: contact period below beta dt is near-rigid [1] */
    double sigma;        /* friction regularization R_t = sigma w_i, dimensionless [1e-3] */
    double beta_joint;   /* near-rigid factor of the joint rows: R = beta_joint^2 w / (4 pi^2),
                          * w the row's M^-1 norm [0.01; sap_core.c says why] */
    double rel_tol;      /* stopping: scaled momentum residual, relative [1e-6] */
    double abs_tol;      /* the same, absolute, sqrt(J) [1e-14] */
    double cost_rel_tol; /* stopping: cost change, relative [1e-15] */
    double cost_abs_tol; /* the same, absolute, J [1e-30] */
    int max_iterations;  /* Newton iterations per island [100] */
    cs_sap_line_search line_search; /* [CS_SAP_LINE_EXACT] */
} cs_sap_params;

/* Workspace bytes cs_sap_solve() takes for any scene within lim (besides the model). */
size_t cs_sap_size(const cs_limits *lim);

/* The scene path (cs_sap_solve_joints(), which it calls, also gives the joints' impulses).
 * Solves the contact step of model m (built from scene s, whose per-contact
 * distance, stiffness and dissipation set each contact's compliance; 0 = not given: near-rigid,
 * critically damped; see sap.c) starting from the previous velocities in warm (by body id; v*
 * for bodies it does not know; warm may be NULL). prm: NULL for the defaults.
 * lambda [3 nc] out: impulses on body_a, contact frame (n, t1, t2), N s. v [6 nb] out: post-step
 * velocities, consistent with lambda (lambda = P_F(y(J v))). state [nc] out: stick / slide /
 * separate from the projection region. st: out, iterations = Newton iterations summed over
 * islands, peak bytes. lambda, v and state are filled for every status >= 0 unless
 * *no_iterate is set.
 * Returns CS_CONVERGED, CS_DEADLINE (the current iterate: each iteration lowers the cost, so it
 * is a usable answer; islands not reached keep their initial guess; or, with *no_iterate, the
 * deadline passed while the problem was being set up and there is no iterate at all),
 * CS_MAXITER, CS_SINGULAR, CS_EINPUT, CS_ENOSPACE. thread: any, one caller per workspace.
 * rt-safe: yes. */
cs_status cs_sap_solve(cs_workspace *ws, const cs_model *m, const cs_scene *s,
                       const cs_options *opt, const cs_sap_params *prm,
                       const cs_warmstart *warm, double *lambda, double *v, uint8_t *state,
                       bool *no_iterate, cs_stats *st);

/* cs_sap_solve() for a model with joints too (m->jt from cs__joints_build_rows(); a model with
 * the joints' reduction is CS_EINPUT). Each joint row (cs__joints_rows) is a holonomic
 * constraint of SAP's convex problem: with w = row M^-1 row^T, its impulse is
 * gamma = -(row v - b) / R with R = beta_joint^2 w / (4 pi^2) (the near-rigid regime of Castro
 * et al. 2022 section V, period beta_joint dt; Drake's SapHolonomicConstraint), unbounded, at
 * the cost R gamma^2 / 2. So the joints hold to that compliance, |row v - b| = R |gamma|, about
 * beta_joint^2 / (4 pi^2) = 2.5e-6 of the velocity their impulse makes, and their impulses are
 * those of the rigid joints to that order times W's spread (W + R instead of W); b is the
 * articulated rows' Baumgarte target, so the drift is corrected as with the other solvers.
 * lambda_j [m->jt->art->rows] out (may be NULL): every joint's impulse, on body_a, in its row
 * frame (joints.h). Else as cs_sap_solve(). */
cs_status cs_sap_solve_joints(cs_workspace *ws, const cs_model *m, const cs_scene *s,
                              const cs_options *opt, const cs_sap_params *prm,
                              const cs_warmstart *warm, double *lambda, double *lambda_j,
                              double *v, uint8_t *state, bool *no_iterate, cs_stats *st);

typedef struct cs_art_row cs_art_row;
/* The regularization R of joint row R (cs__joints_rows) under prm (NULL: the defaults), 1/kg
 * or 1/(kg m^2): R = beta_joint^2 w / (4 pi^2), w = R M^-1 R^T over the model's bodies' own
 * mass, so SAP's law for that row is gamma = -(R v - b) / R. thread: any. rt-safe: yes. */
double cs__sap_joint_regularization(const cs_model *m, const cs_art_row *R,
                                    const cs_sap_params *prm);

/* cs_sap_solve() behind the solver table's signature (solvers.h), stopping at the tolerance its
 * answer is certified at (opt->cert_tol). */
cs_status cs__sap_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out);
/* Factors an identity of order 6 max_bodies (the largest island) with SAP's Cholesky, so its
 * LAPACK buffers are filled at admission (cs_workspace_warm_up). thread: any (not rt). */
void cs__sap_warm_up(cs_workspace *ws);

#endif /* CONTACTD_SOLVER_SAP_H */
