/* SPDX-License-Identifier: MIT */
/* SAP's contact law (see sap_contact.h). Notation of /work/shared/docs/sap.md sections 3 and 5,
 * in the order (normal, t1, t2).
 *
 * THE LAW. With contact velocity v_c = J v + bias and y = -R^-1 (v_c - vhat), the impulse is the
 * projection gamma = P_F(y) = argmin over the cone F = {|g_t| <= mu g_n} of
 * (g - y)^T R (g - y) / 2, and the contact's cost is gamma^T R gamma / 2 (paper eq. 24; its
 * gradient w.r.t. v_c is -gamma). Scaling by R^1/2 turns this into a Euclidean projection onto
 * the cone of slope mu sqrt(R_t / R_n), whose three regions in unscaled variables are, with
 * y_r = |y_t| (soft norm) and mu_hat = mu R_t / R_n:
 *     I    stick     y_r <= mu y_n                gamma = y
 *     II   slide     -mu_hat y_r < y_n            gamma_n = (y_n + mu_hat y_r) / (1 + mu~^2),
 *                                                 gamma_t = mu gamma_n y_t / y_r
 *     III  separate  otherwise                    gamma = 0
 * (paper appendix C; Drake's CalcContactMode ordering, so boundaries go to I, then III). Region
 * II's test omits y_n < y_r / mu: outside region I it always holds, and it needs no 1/mu.
 *
 * THE REGULARIZATION (paper section V, eqs. 29-30). A contact of stiffness k and dissipation
 * time scale tau_d integrated with step h has R_n = 1 / (h k (h + tau_d)), which reproduces the
 * compliant law gamma_n = h (-k (phi0 + h v_n) - tau_d k v_n)_+ in stick. When the contact period
 * 2 pi / sqrt(k w) is shorter than beta h the step cannot resolve it; the near-rigid value
 * R_n = beta^2 w / (4 pi^2) (period exactly beta h) then caps the stiffness: the larger R_n wins.
 * Friction is regularized by R_t = sigma w, so stiction slips at most sigma w |gamma_t|.
 * A stiffness not given means rigid, i.e. near-rigid. A dissipation time scale not given means
 * critical damping at the stiffness actually modelled, k_eff = min(k, k_near_rigid) with
 * effective mass 1 / w: tau_d = 2 / sqrt(k_eff w), which is beta h / pi in the near-rigid regime
 * (the paper's own choice there, section V-B). */
#include "solver/sap_contact.h"

#include <math.h>

void cs__sap_regularize(double w, double h, double k, double taud, double beta, double sigma,
                        double *ret_rn, double *ret_rt, double *ret_taud) {
    const double near_rigid = beta * beta * w / (4 * M_PI * M_PI);
    if (!(taud > 0))
        taud = k > 0 ? fmax(beta * h / M_PI, 2 / sqrt(k * w)) : beta * h / M_PI;
    const double compliant = k > 0 ? 1 / (h * k * (h + taud)) : 0;
    *ret_rn = fmax(near_rigid, compliant);
    *ret_rt = sigma * w;
    *ret_taud = taud;
}

void cs__sap_contact_set(cs__sap_contact *c, double mu, double rn, double rt) {
    const double mu_tilde2 = mu * mu * rt / rn;
    *c = (cs__sap_contact){.mu = mu, .rn = rn, .rt = rt, .mu_hat = mu * rt / rn,
                           .mu_tilde2 = mu_tilde2, .inv_rn = 1 / rn, .inv_rt = 1 / rt,
                           .slide_gain = 1 / (1 + mu_tilde2)};
}

void cs__sap_holonomic_set(cs__sap_contact *c, const double r[3]) {
    *c = (cs__sap_contact){.holonomic = true};
    for (int k = 0; k < 3; k++) {
        c->r[k] = r[k];
        c->inv_r[k] = r[k] > 0 ? 1 / r[k] : 0;
    }
}

/* A holonomic block at velocity vc: gamma, G (may be NULL), and with d [3] (may be NULL)
 * *ret_curv = d^T G d; returns the cost. */
static double holonomic(const cs__sap_contact *c, const double vc[3], double gamma[3],
                        double G[9], const double *d, double *ret_curv) {
    double cost = 0, curv = 0;
    for (int k = 0; k < 3; k++) {
        gamma[k] = -vc[k] * c->inv_r[k];
        cost += 0.5 * c->r[k] * gamma[k] * gamma[k];
        if (d)
            curv += c->inv_r[k] * d[k] * d[k];
    }
    if (G)
        for (int k = 0; k < 9; k++)
            G[k] = k % 4 == 0 ? c->inv_r[k / 4] : 0;
    if (d)
        *ret_curv = curv;
    return cost;
}

/* cs__sap_project() with y = (yn, y1, y2) passed in registers: the callers compute y just
 * before, and read back from memory its fresh stores stall the loads (store forwarding fails on
 * the paired load of y1, y2), which cost a third of a projection. With d [3] (may be NULL), also
 * *ret_curv = d^T G d, in closed form (sap.md section 6, expanded):
 *     I   d_n^2 / R_n + |d_t|^2 / R_t
 *     II  f (d_n + mu tau)^2 / R_n + mu gamma_n (|d_t|^2 - tau^2) / (R_t y_r),  tau = t^T d_t
 *         (the tangential block's mu_hat f t t^T / R_t equals mu^2 f t t^T / R_n)
 *     III 0. */
static cs_contact_state project(const cs__sap_contact *c, double yn, double y1, double y2,
                                double gamma[3], double G[9], const double *d,
                                double *ret_curv) {
    // Locals, which the stores to gamma and G would otherwise force to be reloaded.
    const double mu = c->mu, mu_hat = c->mu_hat, inv_rn = c->inv_rn, inv_rt = c->inv_rt;
    const double yr = sqrt(y1 * y1 + y2 * y2 + CS__SAP_SOFT_NORM * CS__SAP_SOFT_NORM);
    if (yr <= mu * yn) {
        gamma[0] = yn, gamma[1] = y1, gamma[2] = y2;
        if (G) {
            for (int k = 0; k < 9; k++)
                G[k] = 0;
            G[0] = inv_rn;
            G[4] = G[8] = inv_rt;
        }
        if (d)
            *ret_curv = d[0] * d[0] * inv_rn + (d[1] * d[1] + d[2] * d[2]) * inv_rt;
        return CS_STATE_STICK;
    }
    if (yn > -mu_hat * yr) {
        const double f = c->slide_gain, inv_yr = 1 / yr;
        const double gn = (yn + mu_hat * yr) * f;
        const double t[2] = {y1 * inv_yr, y2 * inv_yr};
        gamma[0] = gn;
        gamma[1] = mu * gn * t[0];
        gamma[2] = mu * gn * t[1];
        if (G) {
            // dP/dy R^-1 (sap.md section 6): symmetric because mu_hat / R_t = mu / R_n.
            const double gt = mu * inv_rt, perp = gn * inv_yr, par = mu_hat * f;
            G[0] = f * inv_rn;
            for (int a = 0; a < 2; a++) {
                G[1 + a] = G[3 * (1 + a)] = mu * f * t[a] * inv_rn;
                for (int b = 0; b < 2; b++) {
                    const double P = t[a] * t[b], Pperp = (a == b) - P;
                    G[3 * (1 + a) + 1 + b] = gt * (perp * Pperp + par * P);
                }
            }
        }
        if (d) {
            const double tau = t[0] * d[1] + t[1] * d[2], dn = d[0] + mu * tau;
            *ret_curv = f * dn * dn * inv_rn +
                        mu * gn * inv_yr * inv_rt * (d[1] * d[1] + d[2] * d[2] - tau * tau);
        }
        return CS_STATE_SLIDE;
    }
    gamma[0] = gamma[1] = gamma[2] = 0;
    if (G)
        for (int k = 0; k < 9; k++)
            G[k] = 0;
    if (d)
        *ret_curv = 0;
    return CS_STATE_SEPARATE;
}

cs_contact_state cs__sap_project(const cs__sap_contact *c, const double y[3], double gamma[3],
                                 double G[9]) {
    return project(c, y[0], y[1], y[2], gamma, G, NULL, NULL);
}

/* The contact's cost at impulse gamma, J. */
static double cost(const cs__sap_contact *c, const double gamma[3]) {
    return 0.5 * (c->rn * gamma[0] * gamma[0] +
                  c->rt * (gamma[1] * gamma[1] + gamma[2] * gamma[2]));
}

double cs__sap_contact_eval(const cs__sap_contact *c, const double vc[3], double gamma[3],
                            uint8_t *region, double G[9]) {
    if (c->holonomic) {
        if (region)
            *region = CS_STATE_STICK;
        return holonomic(c, vc, gamma, G, NULL, NULL);
    }
    const cs_contact_state st = project(c, -vc[0] * c->inv_rn, -vc[1] * c->inv_rt,
                                        -vc[2] * c->inv_rt, gamma, G, NULL, NULL);
    if (region)
        *region = (uint8_t)st;
    return cost(c, gamma);
}

double cs__sap_contact_line(const cs__sap_contact *c, const double vc[3], const double dvc[3],
                            double alpha, double gamma[3], double *ret_curv) {
    const double va[3] = {vc[0] + alpha * dvc[0], vc[1] + alpha * dvc[1], vc[2] + alpha * dvc[2]};
    if (c->holonomic)
        return holonomic(c, va, gamma, NULL, ret_curv ? dvc : NULL, ret_curv);
    project(c, -va[0] * c->inv_rn, -va[1] * c->inv_rt, -va[2] * c->inv_rt, gamma, NULL,
            ret_curv ? dvc : NULL, ret_curv);
    return cost(c, gamma);
}
