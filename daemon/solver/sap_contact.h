/* SPDX-License-Identifier: MIT */
/* Internal: SAP's law for one contact. Its regularization R = diag(R_n, R_t, R_t) from physical
 * parameters, and the analytic projection of y onto the friction cone in the R-norm, which
 * gives the impulse, the region (stick / slide / separate) and the Hessian block G.
 * Vectors are in the model's contact-frame order (normal, t1, t2). */
#ifndef CONTACTD_SOLVER_SAP_CONTACT_H
#define CONTACTD_SOLVER_SAP_CONTACT_H
#include "solver/types.h"

/* Soft norm of the tangential component, N s (Drake's constant): makes the slip direction and
 * G defined at y_t = 0. */
#define CS__SAP_SOFT_NORM 1e-7

/* One contact's constants for a step. */
typedef struct cs__sap_contact {
    double mu;        /* friction coefficient >= 0 */
    double rn, rt;    /* regularization, normal and tangential, 1/kg (velocity per impulse) */
    double mu_hat;    /* mu rt / rn */
    double mu_tilde2; /* mu^2 rt / rn */
} cs__sap_contact;

/* Physical parameters of a contact to its regularization. w: Delassus estimate of the contact,
 * 1/kg; h: time step, s; k: stiffness, N/m, 0 = not given (rigid); taud: dissipation time scale,
 * s, 0 = not given (critically damped at the stiffness the step resolves); beta, sigma as in
 * cs_sap_params. ret_rn, ret_rt: out, 1/kg; ret_taud: out, the dissipation time scale used, s. */
void cs__sap_regularize(double w, double h, double k, double taud, double beta, double sigma,
                        double *ret_rn, double *ret_rt, double *ret_taud);

/* Fills c from mu and the regularization (rn, rt > 0). */
void cs__sap_contact_set(cs__sap_contact *c, double mu, double rn, double rt);

/* gamma = P_F(y) in the R-norm, and its region; G (3x3 row-major, may be NULL) = dP/dy R^-1,
 * the Hessian of the contact's cost w.r.t. its velocity. y, gamma: [3] N s.
 * Returns CS_STATE_STICK (region I), CS_STATE_SLIDE (II) or CS_STATE_SEPARATE (III). */
cs_contact_state cs__sap_project(const cs__sap_contact *c, const double y[3], double gamma[3],
                                 double G[9]);

#endif /* CONTACTD_SOLVER_SAP_CONTACT_H */
