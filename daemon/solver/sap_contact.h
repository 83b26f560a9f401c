/* SPDX-License-Identifier: MIT */
/* Internal: SAP's law for one contact. Its regularization R = diag(R_n, R_t, R_t) from physical
 * parameters, and the analytic projection of y onto the friction cone in the R-norm, which
 * gives the impulse, the region (stick / slide / separate) and the Hessian block G.
 * Vectors are in the model's contact-frame order (normal, t1, t2). */
#ifndef CONTACTD_SOLVER_SAP_CONTACT_H
#define CONTACTD_SOLVER_SAP_CONTACT_H
#include <stdint.h>
#include "wire/types.h"

/* Soft norm of the tangential component, N s (Drake's constant): makes the slip direction and
 * G defined at y_t = 0. */
#define CS__SAP_SOFT_NORM 1e-7

/* One contact's constants for a step. The reciprocals are kept so that a projection, which
 * the Newton loop and its line search evaluate many times per step, takes one division. */
typedef struct cs__sap_contact {
    double mu;             /* friction coefficient >= 0 */
    double rn, rt;         /* regularization, normal and tangential, 1/kg (velocity per impulse) */
    double mu_hat;         /* mu rt / rn */
    double mu_tilde2;      /* mu^2 rt / rn */
    double inv_rn, inv_rt; /* 1 / rn, 1 / rt, kg */
    double slide_gain;     /* 1 / (1 + mu_tilde2): region II's normal gain */
    bool holonomic;        /* a block of joint rows (cs__sap_holonomic_set): no cone */
    double r[3], inv_r[3]; /* holonomic: each row's regularization and its inverse, 1/kg or
                            * 1/(kg m^2); 0 and 0 for a padding row */
} cs__sap_contact;

/* Physical parameters of a contact to its regularization. w: Delassus estimate of the contact,
 * 1/kg; h: time step, s; k: stiffness, N/m, 0 = not given (rigid); taud: dissipation time scale,
 * s, 0 = not given (critically damped at the stiffness the step resolves); beta, sigma as in
 * cs_sap_params. ret_rn, ret_rt: out, 1/kg; ret_taud: out, the dissipation time scale used, s. */
void cs__sap_regularize(double w, double h, double k, double taud, double beta, double sigma,
                        double *ret_rn, double *ret_rt, double *ret_taud);

/* Fills c from mu and the regularization (rn, rt > 0). */
void cs__sap_contact_set(cs__sap_contact *c, double mu, double rn, double rt);

/* Fills c as a block of up to three holonomic rows (joint rows, sap.c): row k's impulse is
 * gamma_k = -vc_k / r[k], unbounded, its cost r[k] gamma_k^2 / 2 and its Hessian 1 / r[k], the
 * quadratic law of a near-rigid bilateral constraint (Drake's SapHolonomicConstraint without
 * impulse limits). r[k] = 0 marks a padding row (no row: gamma_k = 0, no cost). The block's
 * region is always CS_STATE_STICK. */
void cs__sap_holonomic_set(cs__sap_contact *c, const double r[3]);

/* gamma = P_F(y) in the R-norm, and its region; G (3x3 row-major, may be NULL) = dP/dy R^-1,
 * the Hessian of the contact's cost w.r.t. its velocity. y, gamma: [3] N s.
 * Returns CS_STATE_STICK (region I), CS_STATE_SLIDE (II) or CS_STATE_SEPARATE (III). */
cs_contact_state cs__sap_project(const cs__sap_contact *c, const double y[3], double gamma[3],
                                 double G[9]);

/* The contact at contact velocity vc [3] (m/s, frame order; bias included): its impulse gamma
 * [3] = P_F(-R^-1 vc) (N s), region (may be NULL), G (may be NULL) as cs__sap_project(); returns
 * its cost gamma^T R gamma / 2, J. */
double cs__sap_contact_eval(const cs__sap_contact *c, const double vc[3], double gamma[3],
                            uint8_t *region, double G[9]);

/* The contact at vc + alpha dvc (vc, dvc [3], m/s), for a line search along dvc: its impulse
 * gamma [3] and cost as cs__sap_contact_eval(), and (ret_curv not NULL) the curvature of its
 * cost along dvc there, dvc^T G dvc (J), without forming G. */
double cs__sap_contact_line(const cs__sap_contact *c, const double vc[3], const double dvc[3],
                            double alpha, double gamma[3], double *ret_curv);

#endif /* CONTACTD_SOLVER_SAP_CONTACT_H */
