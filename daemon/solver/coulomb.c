/* SPDX-License-Identifier: MIT */
/* Coulomb residuals (see coulomb.h), written from the definitions Siconos uses
 * (numerics/src/FrictionContact/fc3d_compute_error.c and gfc3d_compute_error.c) so the numbers
 * are comparable with Siconos' and FCLIB's published results:
 *
 *   natural map     F_i = r_i - P_K_i(r_i - û_i),  û_i = u_i + mu_i ||u_T,i|| e_N
 *   local error     ||F|| / max(||q||, ||r||, ||u||)
 *   global error    ||f + H r - M v|| / max(||f||, ||M v||, ||H r||)
 *                   + ||F(r, H^T v + w)|| / max(||u||, ||r||)
 *
 * F_i = 0 exactly when (r_i, u_i) obeys Coulomb's law: r_i in the cone, û_i in its dual and
 * û_i . r_i = 0 (De Saxcé's bipotential form of the law; Acary and Brogliato, "Numerical Methods
 * for Nonsmooth Dynamical Systems", 2008). P_K is the Euclidean projection onto the cone. */
#include "solver/coulomb.h"

#include <float.h>
#include <math.h>

#include "solver/sap.h"

/* Euclidean projection of x = (n, t1, t2) onto K = {||x_T|| <= mu x_N}, in place: zero in the
 * polar cone, unchanged inside K, else onto the boundary along the normal of the cone's
 * surface. The else branch has ||x_T|| > 0 (mu = 0 included), so the division is safe. */
static void project_cone(double x[3], double mu) {
    const double t = hypot(x[1], x[2]);
    if (mu * t <= -x[0]) {
        x[0] = x[1] = x[2] = 0;
    } else if (t > mu * x[0]) {
        const double n = (x[0] + mu * t) / (1 + mu * mu);
        x[0] = n;
        x[1] *= mu * n / t;
        x[2] *= mu * n / t;
    }
}

/* ||F_i(r_i, u_i)||^2 for one contact. */
static double natural_map_sq(double mu, const double r[3], const double u[3]) {
    double x[3] = {r[0] - (u[0] + mu * hypot(u[1], u[2])), r[1] - u[1], r[2] - u[2]};
    project_cone(x, mu);
    const double d[3] = {r[0] - x[0], r[1] - x[1], r[2] - x[2]};
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

static double nrm2(int n, const double *x) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* x / scale, unless scale is at most floor (an all-zero problem keeps its absolute error). */
static double relative(double x, double scale, double floor) {
    return scale > floor ? x / scale : x;
}

double cs_coulomb_natural_map(int nc, const double *mu, const double *r, const double *u) {
    double s = 0;
    for (int i = 0; i < nc; i++)
        s += natural_map_sq(mu[i], r + 3 * i, u + 3 * i);
    return sqrt(s);
}

double cs_coulomb_residual(int nc, const double *mu, const double *r, const double *u,
                           double norm) {
    const double scale = fmax(norm, fmax(nrm2(3 * nc, r), nrm2(3 * nc, u)));
    return relative(cs_coulomb_natural_map(nc, mu, r, u), scale, DBL_EPSILON);
}

double cs_coulomb_global_residual(const cs_sap_global *p, const double *v, const double *r,
                                  double *work, double *ret_u, cs_coulomb_error *ret_err) {
    const int nv = p->nv, m = 3 * p->nc;
    double *mv = work, *hr = work + nv;
    // M v and H r, column by column (CSC).
    for (int i = 0; i < nv; i++)
        mv[i] = hr[i] = 0;
    for (int j = 0; j < nv; j++)
        for (int k = p->m_colptr[j]; k < p->m_colptr[j + 1]; k++)
            mv[p->m_rowind[k]] += p->m_val[k] * v[j];
    for (int j = 0; j < m; j++)
        for (int k = p->h_colptr[j]; k < p->h_colptr[j + 1]; k++)
            hr[p->h_rowind[k]] += p->h_val[k] * r[j];
    const double norm_mv = nrm2(nv, mv), norm_hr = nrm2(nv, hr), norm_f = nrm2(nv, p->f);
    double res = 0;
    for (int i = 0; i < nv; i++) {
        const double e = p->f[i] + hr[i] - mv[i];
        res += e * e;
    }
    // Siconos divides by a scale only above sqrt(eps) in the global error.
    const double floor = sqrt(DBL_EPSILON);
    const double momentum = relative(sqrt(res), fmax(norm_f, fmax(norm_mv, norm_hr)), floor);

    // u = H^T v + w, recomputed from v so the equation is exact to rounding (as Siconos does).
    for (int j = 0; j < m; j++) {
        double s = p->w[j];
        for (int k = p->h_colptr[j]; k < p->h_colptr[j + 1]; k++)
            s += p->h_val[k] * v[p->h_rowind[k]];
        ret_u[j] = s;
    }
    const double coulomb = relative(cs_coulomb_natural_map(p->nc, p->mu, r, ret_u),
                                    fmax(nrm2(m, ret_u), nrm2(m, r)), floor);
    if (ret_err)
        *ret_err = (cs_coulomb_error){
            .momentum = momentum, .coulomb = coulomb, .total = momentum + coulomb};
    return momentum + coulomb;
}
