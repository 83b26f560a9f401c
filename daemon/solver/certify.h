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

/* Fills cert from contact impulses lambda [3 nc] (contact frame) and post-step velocities
 * v [6 nb], and, when state is not NULL, labels each contact [nc]: separate when its normal
 * impulse is ~0, slide when its tangential slip is above the velocity tolerance, else stick.
 * The friction set is the exact cone when pyramid is false, else the model's d-sided pyramid
 * (the polygon with vertices mu lambda_n d_j that the pivoting solvers use), so each solver is
 * judged on the law it solves. The numbers are defined in types.h (cs_certificate).
 * Returns 0 or CS_ENOSPACE. thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_certify(cs_workspace *ws, const cs_model *m, const double *lambda, const double *v,
                     bool pyramid, cs_certificate *cert, uint8_t *state);

/* True when cert passes at relative tolerance tol (0: 1e-6) for a solver that enforces friction
 * (frictional = true) or one that ignores it (false: cone and dissipation are not judged). */
bool cs_certificate_is_ok(const cs_certificate *cert, double tol, bool frictional);

#endif /* CONTACTD_SOLVER_CERTIFY_H */
