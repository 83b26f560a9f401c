/* SPDX-License-Identifier: MIT */
/* Certificates (see certify.h). With impulses lambda = (lambda_n, lambda_t) per contact, contact
 * velocities u = J v and bias b (v_n >= b), the Coulomb contact conditions at the velocity level
 * are
 *     lambda_n >= 0,  u_n - b >= 0,  lambda_n (u_n - b) = 0           (non-penetration)
 *     lambda_t in mu lambda_n F                                        (friction set)
 *     u_t != 0  =>  lambda_t minimises lambda_t . u_t over that set     (maximal dissipation)
 *     M (v - v*) = J^T lambda                                          (momentum balance)
 * where F is the unit disc (exact cone) or the polygon with vertices d_j (the pyramid of the
 * pivoting solvers), and each residual below measures the violation of one line in its own
 * units. Scales: impulses
 * compare with the largest impulse or free momentum, velocities with the largest body or contact
 * velocity plus the largest free-motion change over the step (g dt for a body at rest). */
#include "solver/certify.h"

#include <math.h>

#include "solver/linalg.h"
#include "solver/workspace.h"

/* Labels: an impulse below 1e-9 of the impulse scale is zero; a slip below 1e-6 of the velocity
 * scale is sticking (what the pivoting solvers resolve comfortably in double precision). */
#define LAMBDA_ZERO 1e-9
#define SLIP_ZERO 1e-6
#define CERT_TOL_DEFAULT 1e-6

size_t cs_certify_size(const cs_limits *lim) {
    return 3 * cs__ws_bytes(6 * (size_t)lim->max_bodies * sizeof(double)) +
           cs__ws_bytes(3 * (size_t)lim->max_contacts * sizeof(double));
}

/* Support function of the unit friction set in direction (x, y), |(x, y)| = 1: 1 for the disc,
 * max_j d_j . (x, y) for the polygon with vertices at angles 2 pi j / d. */
static double support(int dirs, double x, double y) {
    if (!dirs)
        return 1;
    // The best vertex is the one nearest in angle.
    const double step = 2 * M_PI / dirs;
    const double j = nearbyint(atan2(y, x) / step);
    return cos(j * step) * x + sin(j * step) * y;
}

/* How far (lx, ly) lies outside the friction set of radius r: the disc, or the polygon whose
 * edges have outward normals at angles (2k + 1) pi / d and distance r cos(pi / d). The largest
 * normal . l belongs to the edge normal nearest in angle to l. */
static double outside(int dirs, double lx, double ly, double r) {
    if (!dirs)
        return hypot(lx, ly) - r;
    const double step = 2 * M_PI / dirs;
    const double a = (floor(atan2(ly, lx) / step) + 0.5) * step;
    return cos(a) * lx + sin(a) * ly - r * cos(0.5 * step);
}

/* max that keeps a NaN from either side (fmax drops it, and is a libm call in the loops). */
static inline double maxn(double a, double b) {
    return a > b || a != a ? a : b;
}

cs_status cs_certify(cs_workspace *ws, const cs_model *m, const double *lambda, const double *v,
                     bool pyramid, cs_certificate *cert, uint8_t *state) {
    const int dirs = pyramid ? m->nd : 0;
    const int nb = m->nb, nc = m->nc;
    const size_t mark = cs__ws_mark(ws);
    double *gen = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *dv = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *mdv = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *u = cs__ws_alloc(ws, 3 * (size_t)nc * sizeof(double));
    if ((nb && (!gen || !dv || !mdv)) || (nc && !u)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    *cert = (cs_certificate){0};

    // Scales.
    double vscale = 0, iscale = 0, gdt = 0;
    for (int k = 0; k < 6 * nb; k++)
        vscale = maxn(vscale, maxn(fabs(v[k]), fabs(m->vstar[k])));
    cs_model_mul(m, m->vstar, mdv);
    for (int k = 0; k < 6 * nb; k++)
        iscale = maxn(iscale, fabs(mdv[k]));
    for (int k = 0; k < 3 * nc; k++)
        iscale = maxn(iscale, fabs(lambda[k]));
    for (int k = 0; k < 6 * nb; k++)
        gdt = maxn(gdt, fabs(m->vstar[k] - m->v0[k]));
    cs_model_jv(m, v, u);
    for (int k = 0; k < 3 * nc; k++)
        vscale = maxn(vscale, fabs(u[k]));
    for (int i = 0; i < nc; i++)
        vscale = maxn(vscale, fabs(m->bias[i]));
    // A body at rest with no load has no natural scale: fall back to 1 (SI units).
    vscale = vscale + gdt > 0 ? vscale + gdt : 1;
    iscale = iscale > 0 ? iscale : 1;
    cert->velocity_scale = vscale;
    cert->impulse_scale = iscale;

    // Momentum balance.
    cs_model_jt(m, lambda, gen);
    for (int k = 0; k < 6 * nb; k++)
        dv[k] = v[k] - m->vstar[k];
    cs_model_mul(m, dv, mdv);
    for (int k = 0; k < 6 * nb; k++)
        cert->momentum = maxn(cert->momentum, fabs(mdv[k] - gen[k]));

    for (int i = 0; i < nc; i++) {
        const double ln = lambda[3 * i], lt1 = lambda[3 * i + 1], lt2 = lambda[3 * i + 2];
        const double gap = u[3 * i] - m->bias[i];
        const double ut = hypot(u[3 * i + 1], u[3 * i + 2]);
        const double mu = m->mu[i];
        // A negative normal impulse is a cone violation too.
        cert->cone = maxn(cert->cone, maxn(0.0, outside(dirs, lt1, lt2, mu * maxn(ln, 0.0))));
        cert->cone = maxn(cert->cone, maxn(0.0, -ln));
        cert->normal_velocity = maxn(cert->normal_velocity, maxn(0.0, -gap));
        cert->complementarity = maxn(cert->complementarity, fabs(ln * gap));
        const bool sliding = ut > SLIP_ZERO * vscale;
        if (sliding && ln > 0) {
            // Maximal dissipation: lambda_t . t_hat must reach its minimum over the friction set,
            // -mu lambda_n h(t_hat); the gap is >= 0 whenever lambda_t lies in the set.
            const double tx = u[3 * i + 1] / ut, ty = u[3 * i + 2] / ut;
            const double gap = lt1 * tx + lt2 * ty + mu * ln * support(dirs, tx, ty);
            cert->dissipation = maxn(cert->dissipation, fabs(gap));
        }
        if (state) {
            if (ln <= LAMBDA_ZERO * iscale)
                state[i] = CS_STATE_SEPARATE;
            else
                state[i] = sliding ? CS_STATE_SLIDE : CS_STATE_STICK;
        }
    }
    cs__ws_release(ws, mark);
    return CS_CONVERGED;
}

bool cs_certificate_is_ok(const cs_certificate *c, double tol, bool frictional) {
    if (!(tol > 0))
        tol = CERT_TOL_DEFAULT;
    const double is = c->impulse_scale, vs = c->velocity_scale;
    const bool ok = c->complementarity <= tol * is * vs && c->normal_velocity <= tol * vs &&
                    c->momentum <= tol * is && c->cone <= tol * is;
    // A frictionless solver is not judged on the friction law it does not model.
    return ok && (!frictional || c->dissipation <= tol * is);
}

/* SAP's absolute stopping tolerance per island, sqrt(J) (its eps_a, sap.md section 9). */
#define SAP_ABS_TOL 1e-14

bool cs_certificate_is_ok_regularized(cs_workspace *ws, const cs_model *m, const double *lambda,
                                      const double *v, const cs_certificate *cert, double tol) {
    if (!(tol > 0))
        tol = CERT_TOL_DEFAULT;
    const int nv = 6 * m->nb;
    const size_t mark = cs__ws_mark(ws);
    double *jtl = cs__ws_alloc(ws, (size_t)nv * sizeof(double));
    double *mv = cs__ws_alloc(ws, (size_t)nv * sizeof(double));
    double *mvs = cs__ws_alloc(ws, (size_t)nv * sizeof(double));
    if (nv && (!jtl || !mv || !mvs)) {
        cs__ws_release(ws, mark);
        return false;
    }
    cs_model_jt(m, lambda, jtl);
    cs_model_mul(m, v, mv);
    cs_model_mul(m, m->vstar, mvs);
    double res = 0, scale = 0;
    for (int b = 0; b < m->nb; b++) {
        for (int k = 0; k < 6; k++) {
            const int j = 6 * b + k;
            // diag(M): the mass, then the world inertia's diagonal.
            const double d2 = 1 / (k < 3 ? m->mass[b] : m->iw[9 * b + 4 * (k - 3)]);
            const double g = mv[j] - mvs[j] - jtl[j];
            res += d2 * g * g;
            scale += d2 * (mv[j] * mv[j] + jtl[j] * jtl[j]);
        }
    }
    cs__ws_release(ws, mark);
    return sqrt(res) <= SAP_ABS_TOL * sqrt(nv) + tol * sqrt(scale) &&
           cert->cone <= tol * cert->impulse_scale;
}
