/* SPDX-License-Identifier: MIT */
/* The certificate of an answer: how far impulses and post-step velocities are from satisfying
 * the contact conditions, whatever solver produced them, and the stick/slide/separate labels. */
#ifndef CONTACTD_SOLVER_CERTIFY_H
#define CONTACTD_SOLVER_CERTIFY_H
#include <stdbool.h>
#include <stddef.h>
#include "solver/model.h"

/* Workspace bytes cs_certify() takes for lim. */
size_t cs_certify_size(const cs_limits *lim);

/* Fills cert from contact impulses lambda [3 nc] (contact frame; joints: m->jt) and
 * post-step velocities v [6 nb], and, when state is not NULL, labels each contact [nc]: separate
 * when its normal impulse is ~0, slide when its tangential slip is above the velocity tolerance,
 * else stick. The friction set is the exact cone when pyramid is false, else the model's d-sided
 * pyramid (the polygon with vertices mu lambda_n d_j that the pivoting solvers use), so each
 * solver is judged on the law it solves. The numbers are defined in types.h (cs_certificate).
 * The momentum balance leaves out kinematic bodies (no impulse moves them).
 * Returns 0 or CS_ENOSPACE. thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_certify(cs_workspace *ws, const cs_model *m, const double *lambda, const double *v,
                     bool pyramid, cs_certificate *cert, uint8_t *state);

/* cs_certify() with the joints' impulses lambda_j [m->jt->art->rows] given (NULL: those of the
 * rigid joints under lambda, as cs_certify()): for a solver that solves the joint rows itself
 * (SAP), whose joint impulses follow its own law. Returns as cs_certify(). */
cs_status cs_certify_joints(cs_workspace *ws, const cs_model *m, const double *lambda,
                            const double *lambda_j, const double *v, bool pyramid,
                            cs_certificate *cert, uint8_t *state);

/* cs_certify() through a solve's meter (deadline.h): contacts a chunk at a time where their work
 * does not fit the meter's remaining count (the same numbers as cs_certify()). Returns as
 * cs_certify(), or CS_DEADLINE when the deadline passed on the way (cert and state are then
 * incomplete: no answer may be judged on them). The joints' rows are not counted.
 * thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs__certify_metered(cs_workspace *ws, const cs_model *m, const double *lambda,
                              const double *v, bool pyramid, cs_certificate *cert, uint8_t *state,
                              cs__meter *meter);

/* True when cert passes at relative tolerance tol (0: 1e-6) for a solver that enforces friction
 * (frictional = true) or one that ignores it (false: cone and dissipation are not judged). */
bool cs_certificate_is_ok(const cs_certificate *cert, double tol, bool frictional);

/* SAP's certificate (Castro et al. 2022, eq. 26), recomputed from lambda [3 nc], the joint
 * impulses lambda_j (SAP's joint rows, cs_sap_solve_joints; NULL without joints) and v [6 nb],
 * with cert from cs_certify_joints(..., pyramid = false, ...). With
 * g = M (v - v*) - J^T lambda - J_j^T lambda_j, the
 * momentum residual over the bodies that are not kinematic, and D = diag(M)^-1/2 (so every
 * component is in sqrt(J)), true when
 *     |D g|_2 <= 1e-14 sqrt(6 nb) + tol sqrt(|D M v|_2^2 + |D J^T lambda|_2^2)
 * and lambda lies in the exact cone (cert->cone <= tol cert->impulse_scale); tol 0 means 1e-6.
 * For lambda = P_F(y(v)), which SAP's answers satisfy by construction, g is the gradient of
 * SAP's convex cost, so this certifies the optimum of the problem SAP solves: it is SAP's own
 * stopping test (per island |D g| <= 1e-14 + tol max(|D M v|, |D J^T lambda|)) summed over
 * islands by Minkowski's inequality, so every answer SAP calls converged at tol passes.
 * Complementarity, normal velocity and maximal dissipation hold only up to the regularization
 * (compliance R_n gamma_n, stiction slip R_t |gamma_t|, gliding; sap.md section 3.4): they are
 * reported in cert, not judged. So is the joint residual: SAP's joint rows hold to their
 * compliance, J_j v - b_j = -R_j lambda_j (sap.h), not to the rigid rows' rounding. What is
 * judged of them is SAP's law itself: lambda_j is in g, and with lambda_j given, every row's
 * |J_r v - b_r + R_r lambda_r| <= tol cert->velocity_scale (R_r from
 * cs__sap_joint_regularization() at the defaults, which cs_step's SAP uses).
 * cs_certificate_is_ok() (the pivoting solvers') is unchanged.
 * Scratch from ws (within cs_certify_size); false when it is short. thread: any. rt-safe: yes. */
bool cs_certificate_is_ok_regularized(cs_workspace *ws, const cs_model *m, const double *lambda,
                                      const double *lambda_j, const double *v,
                                      const cs_certificate *cert, double tol);

#endif /* CONTACTD_SOLVER_CERTIFY_H */
