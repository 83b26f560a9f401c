/* SPDX-License-Identifier: MIT */
/* Certificates (see certify.h). With impulses lambda = (lambda_n, lambda_t) per contact, contact
 * velocities u = J v and bias b (v_n >= b), the Coulomb contact conditions at the velocity level
 * are
 *     lambda_n >= 0,  u_n - b >= 0,  lambda_n (u_n - b) = 0           (non-penetration)
 *     lambda_t in mu lambda_n F                                        (friction set)
 *     u_t != 0  =>  lambda_t minimises lambda_t . u_t over that set     (maximal dissipation)
 *     M (v - v*) = J^T lambda                                          (momentum balance)
 *     J_j v = b_j, lambda_j free                                       (joint rows)
 * where F is the unit disc (exact cone) or the polygon with vertices d_j (the pyramid of the
 * pivoting solvers), and each residual below measures the violation of one line in its own
 * units. Scales: impulses
 * compare with the largest impulse or free momentum, velocities with the largest body or contact
 * velocity plus the largest free-motion change over the step (g dt for a body at rest).
 *
 * With joints (joints.h) the momentum balance is taken on the full system, not the reduced one:
 * M (v - v*) = J_c^T lambda + J_j^T lambda_j with v* the free velocity without joints and
 * lambda_j every joint's impulse (loops included) under the contact impulses, so it checks the
 * articulated solve as well; the joint residual is the largest |J_j v - b_j| over every joint
 * row. A solver that solves the joint rows itself (SAP) gives its own lambda_j instead
 * (cs_certify_joints). */
#include "solver/certify.h"

#include <math.h>
#include <string.h>

#include "solver/articulated.h"
#include "solver/deadline.h"
#include "solver/joints.h"
#include "solver/linalg.h"
#include "solver/sap.h"
#include "solver/workspace.h"

/* Labels: an impulse below 1e-9 of the impulse scale is zero; a slip below 1e-6 of the velocity
 * scale is sticking (what the pivoting solvers resolve comfortably in double precision). */
#define LAMBDA_ZERO 1e-9
#define SLIP_ZERO 1e-6
#define CERT_TOL_DEFAULT 1e-6

size_t cs_certify_size(const cs_limits *lim) {
    return 4 * cs__ws_bytes(6 * (size_t)lim->max_bodies * sizeof(double)) +
           cs__ws_bytes(3 * (size_t)lim->max_contacts * sizeof(double)) +
           cs__ws_bytes(6 * (size_t)lim->max_joints * sizeof(double)) +
           cs__ws_bytes(2 * (size_t)lim->max_dirs * sizeof(double));
}

/* max that keeps a NaN from either side (fmax drops it, and is a libm call in the loops). */
static inline double maxn(double a, double b) {
    return a > b || a != a ? a : b;
}

/* |(x, y)|: the plain square root where the sum of squares s can be trusted, else libm's hypot
 * (which also keeps its rules for NaN and infinity). s < 2^1000 has not overflowed; s > 2^-1000
 * means the larger square is a normal number, so underflow in the smaller one costs < 2^-70
 * relative. Both zero (a contact without friction impulse or slip) is exact too. */
static inline double norm2(double x, double y) {
    const double s = x * x + y * y;
    if ((s > 0x1p-1000 && s < 0x1p1000) || (x == 0 && y == 0))
        return sqrt(s);
    return hypot(x, y);
}

/* The d-sided friction set of unit radius. Since d is even the polygon is symmetric about the
 * origin (d_{j + d/2} = -d_j), so a maximum over all d vertices or edges is a maximum of |.|
 * over the first d/2. tab[2 k], tab[2 k + 1] = cos, sin of k pi / d for k in [0, d): even k are
 * the vertex directions d_j (cs_lemke_direction's, 2 pi j / d), odd k the outward edge normals
 * ((2 j + 1) pi / d), which lie cos(pi / d) from the origin. */
typedef struct polygon {
    int half; /* d / 2; 0: the disc */
    const double *tab;
} polygon;

/* The polygon of d (even) directions, its table written to tab [2 d]. Only the angles up to
 * pi / 4 need libm: the rest are their mirror images about pi / 4 and pi / 2, so a certificate
 * costs d / 4 + 1 sincos calls instead of an atan2, a sincos and a cos per contact. */
static polygon polygon_build(int d, double *tab) {
    // Angle 0 is libm's cos 0 and sin 0 exactly.
    tab[0] = 1;
    tab[1] = 0;
    for (int k = 1; 4 * k <= d; k++) {
        tab[2 * k] = cos(k * M_PI / d);
        tab[2 * k + 1] = sin(k * M_PI / d);
    }
    // k pi / d = pi / 2 - (d / 2 - k) pi / d, then pi - (d - k) pi / d.
    for (int k = d / 4 + 1; 2 * k <= d; k++) {
        tab[2 * k] = tab[2 * (d / 2 - k) + 1];
        tab[2 * k + 1] = tab[2 * (d / 2 - k)];
    }
    for (int k = d / 2 + 1; k < d; k++) {
        tab[2 * k] = -tab[2 * (d - k)];
        tab[2 * k + 1] = tab[2 * (d - k) + 1];
    }
    return (polygon){.half = d / 2, .tab = tab};
}

/* max_k |(c_k, s_k) . (x, y)| over the table entries k = first, first + 2, ... below d. A NaN
 * in (x, y) makes the first term NaN, and the plain max below keeps it. */
static inline double max_projection(const polygon *p, int first, double x, double y) {
    const double *t = p->tab + 2 * first;
    double h = fabs(t[0] * x + t[1] * y);
    for (int j = 1; j < p->half; j++) {
        const double hj = fabs(t[4 * j] * x + t[4 * j + 1] * y);
        h = hj > h ? hj : h;
    }
    return h;
}

/* Support function of the unit friction set in direction (x, y), |(x, y)| = 1: 1 for the disc,
 * max_j d_j . (x, y) for the polygon. */
static double support(const polygon *p, double x, double y) {
    return p->half ? max_projection(p, 0, x, y) : 1;
}

/* How far (lx, ly) lies outside the friction set of radius r: the disc, or the polygon, whose
 * distance is the largest of edge normal . l - r cos(pi / d). */
static double outside(const polygon *p, double lx, double ly, double r) {
    if (!p->half)
        return norm2(lx, ly) - r;
    return max_projection(p, 1, lx, ly) - r * p->tab[2];
}

/* Work a contact's residuals take (certify()): the slip's norm, the polygon's projections (up to
 * d / 2 products of 2 terms for the cone and again for the support) and a dozen comparisons. */
static int64_t residual_units(const polygon *p) {
    return 4 * (int64_t)p->half + 12;
}

/* cs_certify_joints() through a solve's meter (NULL: none), per chunk of contacts or per pass
 * over the bodies; the joints' rows are not counted. Returns 0, CS_ENOSPACE, or CS_DEADLINE when
 * the deadline passed on the way (cert and state then incomplete). */
static cs_status certify(cs_workspace *ws, const cs_model *m, const double *lambda,
                         const double *lambda_j, const double *v, bool pyramid,
                         cs_certificate *cert, uint8_t *state, cs__meter *meter) {
    const int dirs = pyramid ? m->nd : 0;
    const int nb = m->nb, nc = m->nc;
    const int nrj = m->jt ? m->jt->art->rows : 0;
    const size_t mark = cs__ws_mark(ws);
    double *gen = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *dv = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *mdv = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *u = cs__ws_alloc(ws, 3 * (size_t)nc * sizeof(double));
    double *tab = dirs ? cs__ws_alloc(ws, 2 * (size_t)dirs * sizeof(double)) : NULL;
    double *lj = cs__ws_alloc(ws, (size_t)nrj * sizeof(double));
    double *vj = m->jt ? cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double)) : NULL;
    if ((nb && (!gen || !dv || !mdv)) || (nc && !u) || (dirs && !tab) ||
        (m->jt && (!lj || !vj))) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    *cert = (cs_certificate){0};
    const polygon set = dirs ? polygon_build(dirs, tab) : (polygon){0};
    cs_status status = CS_DEADLINE;

    // Scales. With joints v* is the free velocity without them, and their impulses count.
    const double *vstar = m->jt ? m->jt->vstar : m->vstar;
    double vscale = 0, iscale = 0, gdt = 0;
    cs_model_mul(m, vstar, mdv);
    for (int k = 0; k < 6 * nb; k++) {
        vscale = maxn(vscale, maxn(fabs(v[k]), fabs(vstar[k])));
        iscale = maxn(iscale, fabs(mdv[k]));
        gdt = maxn(gdt, fabs(vstar[k] - m->v0[k]));
    }
    // One pass of 6 a body (three maxima each) and M v* (3 products and a 3 x 3 block).
    if ((meter && cs__meter_add(meter, 30 * (int64_t)nb)) || cs__model_jv_metered(m, v, u, meter))
        goto out;
    // Six comparisons a contact.
    const int chunk = cs__meter_chunk(meter, nc, 6);
    for (int i0 = 0; i0 < nc; i0 += chunk) {
        const int i1 = i0 + cs__chunk_len(i0, chunk, nc);
        for (int i = i0; i < i1; i++) {
            const double *l = lambda + 3 * i, *ui = u + 3 * i;
            iscale = maxn(iscale, maxn(fabs(l[0]), maxn(fabs(l[1]), fabs(l[2]))));
            vscale = maxn(vscale, maxn(fabs(ui[0]), maxn(fabs(ui[1]), fabs(ui[2]))));
            vscale = maxn(vscale, fabs(m->bias[i]));
        }
        if (meter && cs__meter_add(meter, 6 * (int64_t)(i1 - i0)))
            goto out;
    }
    if (m->jt) {
        if (lambda_j)
            memcpy(lj, lambda_j, (size_t)nrj * sizeof(double));
        else
            cs__joints_velocity(m->jt, lambda, vj, lj);
        for (int r = 0; r < nrj; r++)
            iscale = maxn(iscale, fabs(lj[r]));
    }
    // A body at rest with no load has no natural scale: fall back to 1 (SI units).
    vscale = vscale + gdt > 0 ? vscale + gdt : 1;
    iscale = iscale > 0 ? iscale : 1;
    cert->velocity_scale = vscale;
    cert->impulse_scale = iscale;

    // Momentum balance; a kinematic body's is not the solve's to keep (its velocity is given).
    if (cs__model_jt_metered(m, lambda, gen, meter))
        goto out;
    if (m->jt)
        cs__joints_jt(m->jt, lj, gen);
    for (int k = 0; k < 6 * nb; k++)
        dv[k] = v[k] - vstar[k];
    cs_model_mul(m, dv, mdv);
    double momentum = 0;
    for (int b = 0; b < nb; b++)
        for (int k = 6 * b; k < 6 * b + 6 && !cs_model_is_kinematic(m, b); k++)
            momentum = maxn(momentum, fabs(mdv[k] - gen[k]));
    cert->momentum = momentum;
    // Two passes of 6 a body and M dv.
    if (meter && cs__meter_add(meter, 24 * (int64_t)nb))
        goto out;

    const int64_t units = residual_units(&set);
    const int rchunk = cs__meter_chunk(meter, nc, units);
    // The residuals in locals (state[] is bytes, whose stores could alias cert's), stored after
    // each chunk.
    double cone = 0, normal_velocity = 0, complementarity = 0, dissipation = 0;
    for (int i0 = 0; i0 < nc; i0 += rchunk) {
        const int i1 = i0 + cs__chunk_len(i0, rchunk, nc);
        for (int i = i0; i < i1; i++) {
            const double ln = lambda[3 * i], lt1 = lambda[3 * i + 1], lt2 = lambda[3 * i + 2];
            const double gap = u[3 * i] - m->bias[i];
            const double ut = norm2(u[3 * i + 1], u[3 * i + 2]);
            const double mu = m->mu[i];
            // The residuals start at 0, so a negative term leaves them as they are. A negative
            // normal impulse is a cone violation too.
            cone = maxn(cone, outside(&set, lt1, lt2, mu * maxn(ln, 0.0)));
            cone = maxn(cone, -ln);
            normal_velocity = maxn(normal_velocity, -gap);
            complementarity = maxn(complementarity, fabs(ln * gap));
            const bool sliding = ut > SLIP_ZERO * vscale;
            if (sliding && ln > 0) {
                // Maximal dissipation: lambda_t . t_hat must reach its minimum over the friction
                // set, -mu lambda_n h(t_hat); the gap is >= 0 whenever lambda_t lies in the set.
                const double tx = u[3 * i + 1] / ut, ty = u[3 * i + 2] / ut;
                const double gap = lt1 * tx + lt2 * ty + mu * ln * support(&set, tx, ty);
                dissipation = maxn(dissipation, fabs(gap));
            }
            if (state) {
                if (ln <= LAMBDA_ZERO * iscale)
                    state[i] = CS_STATE_SEPARATE;
                else
                    state[i] = sliding ? CS_STATE_SLIDE : CS_STATE_STICK;
            }
        }
        cert->cone = cone;
        cert->normal_velocity = normal_velocity;
        cert->complementarity = complementarity;
        cert->dissipation = dissipation;
        if (meter && cs__meter_add(meter, units * (i1 - i0)))
            goto out;
    }
    // Joint rows hold with impulses of either sign: only their velocity is judged.
    if (m->jt)
        cert->joint = cs__joints_violation(m->jt, v);
    status = CS_CONVERGED;
out:
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs_certify_joints(cs_workspace *ws, const cs_model *m, const double *lambda,
                            const double *lambda_j, const double *v, bool pyramid,
                            cs_certificate *cert, uint8_t *state) {
    return certify(ws, m, lambda, lambda_j, v, pyramid, cert, state, NULL);
}

cs_status cs_certify(cs_workspace *ws, const cs_model *m, const double *lambda, const double *v,
                     bool pyramid, cs_certificate *cert, uint8_t *state) {
    return cs_certify_joints(ws, m, lambda, NULL, v, pyramid, cert, state);
}

cs_status cs__certify_metered(cs_workspace *ws, const cs_model *m, const double *lambda,
                              const double *v, bool pyramid, cs_certificate *cert, uint8_t *state,
                              cs__meter *meter) {
    return certify(ws, m, lambda, NULL, v, pyramid, cert, state, meter);
}

bool cs_certificate_is_ok(const cs_certificate *c, double tol, bool frictional) {
    if (!(tol > 0))
        tol = CERT_TOL_DEFAULT;
    const double is = c->impulse_scale, vs = c->velocity_scale;
    const bool ok = c->complementarity <= tol * is * vs && c->normal_velocity <= tol * vs &&
                    c->momentum <= tol * is && c->cone <= tol * is && c->joint <= tol * vs;
    // A frictionless solver is not judged on the friction law it does not model.
    return ok && (!frictional || c->dissipation <= tol * is);
}

/* max |J_r v - b_r + R_r lambda_r| over the joint rows r, R_r SAP's regularization of the row
 * (cs__sap_joint_regularization, the step's defaults): how far the joint impulses lambda_j are
 * from SAP's law at v, m/s (a NaN stays). */
static double joint_law(const cs_model *m, const double *lambda_j, const double *v) {
    const cs_articulated *a = m->jt->art;
    double worst = 0;
    for (int j = 0; j < a->nj; j++) {
        cs_art_row rows[6];
        cs_articulated_joint_rows(a, j, rows);
        for (int r = 0; r < a->row_off[j + 1] - a->row_off[j]; r++) {
            const cs_art_row *R = &rows[r];
            double miss = -R->b + cs__sap_joint_regularization(m, R, NULL) *
                                      lambda_j[a->row_off[j] + r];
            for (int i = 0; i < 6; i++)
                miss += (R->ia >= 0 ? R->ja[i] * v[6 * R->ia + i] : 0) +
                        (R->ib >= 0 ? R->jb[i] * v[6 * R->ib + i] : 0);
            worst = maxn(worst, fabs(miss));
        }
    }
    return worst;
}

/* SAP's absolute stopping tolerance per island, sqrt(J) (its eps_a, sap.md section 9). */
#define SAP_ABS_TOL 1e-14

bool cs_certificate_is_ok_regularized(cs_workspace *ws, const cs_model *m, const double *lambda,
                                      const double *lambda_j, const double *v,
                                      const cs_certificate *cert, double tol) {
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
    // The joints' rows are SAP's too: their impulses are in its momentum balance.
    if (m->jt && lambda_j)
        cs__joints_jt(m->jt, lambda_j, jtl);
    cs_model_mul(m, v, mv);
    cs_model_mul(m, m->vstar, mvs);
    double res = 0, scale = 0;
    for (int b = 0; b < m->nb; b++) {
        if (cs_model_is_kinematic(m, b))
            continue;
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
           cert->cone <= tol * cert->impulse_scale &&
           (!m->jt || !lambda_j || joint_law(m, lambda_j, v) <= tol * cert->velocity_scale);
}
