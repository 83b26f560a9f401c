/* SPDX-License-Identifier: MIT */
/* Coulomb-friction residuals of a frictional-contact answer in the form FCLIB and Siconos use, so
 * contactd's numbers can be set beside other solvers' on the same problems. Convention (FCLIB):
 * per contact i the local velocity u_i and impulse r_i are (normal, tangent 1, tangent 2); the
 * friction cone is K_i = {r : ||r_T|| <= mu_i r_N}; the Coulomb law is the complementarity
 *     K_i* ∋ û_i ⊥ r_i ∈ K_i,   û_i = u_i + mu_i ||u_T,i|| e_N   (û: De Saxcé's velocity)
 * and its natural map is F_i(r, u) = r_i - P_K_i(r_i - û_i) (zero exactly on solutions). */
#ifndef CONTACTD_SOLVER_COULOMB_H
#define CONTACTD_SOLVER_COULOMB_H

typedef struct cs_sap_global cs_sap_global;

/* The two terms of Siconos' global residual (cs_coulomb_global_residual). Dimensionless. */
typedef struct cs_coulomb_error {
    double momentum; /* ||M v - H r - f|| / max(||f||, ||M v||, ||H r||) */
    double coulomb;  /* ||F(r, u)|| / max(||u||, ||r||), u = H^T v + w */
    double total;    /* momentum + coulomb: the number Siconos' gfc3d_compute_error reports */
} cs_coulomb_error;

/* ||F(r, u)||_2 over nc contacts, the absolute natural-map residual (units of r and u, which
 * FCLIB mixes: the map is only meaningful once the problem is scaled). mu: [nc] >= 0,
 * r, u: [3 nc]. thread: any. rt-safe: yes. */
double cs_coulomb_natural_map(int nc, const double *mu, const double *r, const double *u);

/* Siconos' fc3d_compute_error for the local problem u = W r + q:
 *     ||F(r, u)||_2 / max(norm, ||r||_2, ||u||_2),
 * left undivided when that scale is <= DBL_EPSILON (a zero problem). norm is the caller's
 * problem scale, ||q||_2 in Siconos' drivers (0 to use r and u alone). Arguments as
 * cs_coulomb_natural_map. thread: any. rt-safe: yes. */
double cs_coulomb_residual(int nc, const double *mu, const double *r, const double *u,
                           double norm);

/* Siconos' gfc3d_compute_error for the FCLIB global problem M v = H r + f, u = H^T v + w
 * (p: M nv x nv CSC holding both triangles, H nv x 3nc CSC, f, w, mu): the relative momentum
 * residual plus the relative natural map at the velocity u = H^T v + w recomputed from v (as
 * Siconos does), each divided by its scale only when that exceeds sqrt(DBL_EPSILON).
 * v: [nv], r: [3 nc]. work: [2 nv] scratch. ret_u: [3 nc] out, H^T v + w. ret_err (may be NULL):
 * both terms. Returns ret_err->total. thread: any. rt-safe: yes (no allocation). */
double cs_coulomb_global_residual(const cs_sap_global *p, const double *v, const double *r,
                                  double *work, double *ret_u, cs_coulomb_error *ret_err);

#endif /* CONTACTD_SOLVER_COULOMB_H */
