/* SPDX-License-Identifier: MIT */
/* SAP: the projection and its Hessian against sap.md's table and finite differences, the
 * regularization from physical parameters, the worked examples of sap.md section 12 step by
 * step, the scene physics (box on a plane, incline stick/slide, compliant law), agreement with
 * the pivoting solvers on frictionless scenes, the FCLIB global form against the scene path and
 * an analytic case, islands, warm start, both line searches, the deadline and no allocation. */
#include "solver/sap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene_fixture.h"
#include "solver/dantzig.h"
#include "solver/deadline.h"
#include "solver/linalg.h"
#include "solver/sap_contact.h"
#include "solver/sap_core.h"
#include "solver/sap_linesearch.h"
#include "solver/workspace.h"
#include "alloc_count.h"
#include "testlib.h"

#define G 9.81


static const cs_options sap = {.solver = CS_SOLVER_SAP};

/* ---- the contact law ------------------------------------------------------------------- */

/* sap.md 12.4 (inputs from Drake's projection test). Rows in sap.md's (t1, t2, n) order. */
static void projection_table(void **state) {
    (void)state;
    static const struct {
        double mu, R[3], y[3];
        cs_contact_state region;
        double gamma[3];
    } rows[] = {
        {0.5, {0.1, 0.1, 1.5}, {0.4, 0, 1.0}, CS_STATE_STICK, {0.4, 0, 1.0}},
        {1.5, {0.01, 0.01, 2.0}, {1.0, -1.0, 2.0}, CS_STATE_STICK, {1.0, -1.0, 2.0}},
        {0.3, {0.2, 0.2, 1.2}, {-0.1, 0.01, 1.0}, CS_STATE_STICK, {-0.1, 0.01, 1.0}},
        {0.5, {0.1, 0.1, 1.5}, {1.0, 0, 1.0}, CS_STATE_SLIDE, {0.5081967213, 0, 1.0163934426}},
        {1.5, {0.01, 0.01, 2.0}, {4.0, 2.5, 2.0}, CS_STATE_SLIDE,
         {2.5601927436, 1.6001204648, 2.0127341698}},
        {0.3, {0.2, 0.2, 1.2}, {-0.5, 1.8, -0.01}, CS_STATE_SLIDE,
         {-0.0065980970, 0.0237531490, 0.0821750822}},
        {0.5, {0.1, 0.1, 1.5}, {0.5, 0, -0.2}, CS_STATE_SEPARATE, {0, 0, 0}},
        {1.5, {0.01, 0.01, 2.0}, {4.0, 2.5, -1.3}, CS_STATE_SEPARATE, {0, 0, 0}},
        {0.3, {0.2, 0.2, 1.2}, {-0.5, 1.8, -5.0}, CS_STATE_SEPARATE, {0, 0, 0}},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        cs__sap_contact c;
        cs__sap_contact_set(&c, rows[k].mu, rows[k].R[2], rows[k].R[0]);
        // To the model's (n, t1, t2) order.
        const double y[3] = {rows[k].y[2], rows[k].y[0], rows[k].y[1]};
        double g[3];
        assert_int_equal(cs__sap_project(&c, y, g, NULL), rows[k].region);
        // The table gives 10 decimals; the soft norm moves these by < 1e-13.
        assert_near(g[0], rows[k].gamma[2], 6e-11);
        assert_near(g[1], rows[k].gamma[0], 6e-11);
        assert_near(g[2], rows[k].gamma[1], 6e-11);
    }
}

/* G = d^2 cost / d vc^2 = -d gamma / d vc: symmetric, and equal to central differences of the
 * projection in every region (sap.md tests (b), (c)). */
static void hessian_matches_finite_differences(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x5a9);
    int seen[4] = {0};
    for (int trial = 0; trial < 3000; trial++) {
        cs__sap_contact c;
        const double rn = t_rng_range(&rng, 0.01, 2), rt = rn * t_rng_range(&rng, 1e-3, 1);
        cs__sap_contact_set(&c, t_rng_range(&rng, 0, 1.5), rn, rt);
        // y uniform in a cube reaches every region; vc = -R y.
        double vc[3], y[3], g[3], Gm[9];
        for (int k = 0; k < 3; k++)
            y[k] = t_rng_range(&rng, -1, 1);
        vc[0] = -rn * y[0], vc[1] = -rt * y[1], vc[2] = -rt * y[2];
        const cs_contact_state st = cs__sap_project(&c, y, g, Gm);
        seen[st]++;
        const double h = 1e-7 * rt;
        for (int j = 0; j < 3; j++) {
            double vp[3] = {vc[0], vc[1], vc[2]}, vm[3] = {vc[0], vc[1], vc[2]}, gp[3], gm[3];
            vp[j] += h, vm[j] -= h;
            const double yp[3] = {-vp[0] / rn, -vp[1] / rt, -vp[2] / rt};
            const double ym[3] = {-vm[0] / rn, -vm[1] / rt, -vm[2] / rt};
            // Skip points whose stencil crosses a region boundary (the Hessian jumps there).
            if (cs__sap_project(&c, yp, gp, NULL) != st || cs__sap_project(&c, ym, gm, NULL) != st)
                continue;
            for (int i = 0; i < 3; i++) {
                const double fd = -(gp[i] - gm[i]) / (2 * h);
                assert_near(Gm[3 * i + j], fd, 1e-6 * (1 + fabs(fd)));
                assert_near(Gm[3 * i + j], Gm[3 * j + i], 1e-12 * (1 + fabs(fd)));
            }
        }
    }
    // Every region was exercised.
    assert_true(seen[CS_STATE_STICK] > 100 && seen[CS_STATE_SLIDE] > 100 &&
                seen[CS_STATE_SEPARATE] > 100);
}

/* The line search's per-contact evaluation: at vc + alpha dvc, the same impulse and cost as
 * cs__sap_contact_eval() there, and a curvature dvc^T G dvc equal to the quadratic form of the
 * projection's G, in every region. */
static void contact_line_matches_hessian(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x11e);
    int seen[4] = {0};
    for (int trial = 0; trial < 3000; trial++) {
        cs__sap_contact c;
        const double rn = t_rng_range(&rng, 0.01, 2), rt = rn * t_rng_range(&rng, 1e-3, 1);
        cs__sap_contact_set(&c, t_rng_range(&rng, 0, 1.5), rn, rt);
        double vc[3], dvc[3];
        for (int k = 0; k < 3; k++) {
            vc[k] = t_rng_range(&rng, -1, 1) * (k ? rt : rn);
            dvc[k] = t_rng_range(&rng, -1, 1) * (k ? rt : rn);
        }
        const double alpha = t_rng_range(&rng, 0, 1.5);
        const double va[3] = {vc[0] + alpha * dvc[0], vc[1] + alpha * dvc[1],
                              vc[2] + alpha * dvc[2]};
        double g[3], gl[3], Gm[9], curv;
        uint8_t region;
        const double cost = cs__sap_contact_eval(&c, va, g, &region, Gm);
        seen[region]++;
        const double cost_line = cs__sap_contact_line(&c, vc, dvc, alpha, gl, &curv);
        assert_near(cost_line, cost, 1e-13 * (1e-12 + cost));
        double quad = 0, scale = 0;
        for (int r = 0; r < 3; r++) {
            assert_near(gl[r], g[r], 1e-13 * (1e-12 + fabs(g[r])));
            for (int k = 0; k < 3; k++) {
                quad += dvc[r] * Gm[3 * r + k] * dvc[k];
                scale += fabs(dvc[r] * Gm[3 * r + k] * dvc[k]);
            }
        }
        assert_near(curv, quad, 1e-12 * scale);
        assert_true(curv >= -1e-12 * scale);
    }
    assert_true(seen[CS_STATE_STICK] > 100 && seen[CS_STATE_SLIDE] > 100 &&
                seen[CS_STATE_SEPARATE] > 100);
}

/* A holonomic block (joint rows, cs__sap_holonomic_set) with a padding row: the impulse is
 * -vc / r per row and 0 on the padding row, the cost r gamma^2 / 2 with gradient -gamma (central
 * differences), G = diag(1 / r, 0 for the padding row), the region stick, and the line search's
 * evaluation agrees with it. */
static void holonomic_block_law(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x401);
    for (int trial = 0; trial < 500; trial++) {
        const int pad = (int)t_rng_below(&rng, 4); // 3: no padding row
        double r[3];
        for (int k = 0; k < 3; k++)
            r[k] = k == pad ? 0 : t_rng_range(&rng, 1e-8, 1e-2);
        cs__sap_contact c;
        cs__sap_holonomic_set(&c, r);
        double vc[3], dvc[3], g[3], Gm[9];
        for (int k = 0; k < 3; k++) {
            vc[k] = t_rng_range(&rng, -1, 1);
            dvc[k] = t_rng_range(&rng, -1, 1);
        }
        uint8_t region;
        const double cost = cs__sap_contact_eval(&c, vc, g, &region, Gm);
        assert_int_equal(region, CS_STATE_STICK);
        double want_cost = 0, curv_want = 0;
        for (int k = 0; k < 3; k++) {
            const double gk = k == pad ? 0 : -vc[k] / r[k];
            assert_near(g[k], gk, 1e-14 * fabs(gk));
            want_cost += 0.5 * (k == pad ? 0 : vc[k] * vc[k] / r[k]);
            curv_want += k == pad ? 0 : dvc[k] * dvc[k] / r[k];
            for (int l = 0; l < 3; l++)
                assert_near(Gm[3 * k + l], k == l && k != pad ? 1 / r[k] : 0, 0);
            // d cost / d vc_k = -gamma_k.
            const double h = 1e-6 * (1 + fabs(vc[k]));
            double vp[3] = {vc[0], vc[1], vc[2]}, vm[3] = {vc[0], vc[1], vc[2]}, gp[3];
            vp[k] += h, vm[k] -= h;
            const double fd = (cs__sap_contact_eval(&c, vp, gp, NULL, NULL) -
                               cs__sap_contact_eval(&c, vm, gp, NULL, NULL)) /
                              (2 * h);
            assert_near(fd, -g[k], 1e-6 * (1 + fabs(g[k])));
        }
        assert_near(cost, want_cost, 1e-14 * want_cost);
        double gl[3], curv;
        const double cost0 = cs__sap_contact_line(&c, vc, (double[3]){0, 0, 0}, 0.7, gl, NULL);
        assert_near(cost0, cost, 1e-14 * cost);
        cs__sap_contact_line(&c, vc, dvc, 0, gl, &curv);
        assert_near(curv, curv_want, 1e-13 * curv_want);
    }
}

/* sap.md 12 common data: one particle, h = 1 ms, k = 1e5, tau_d = 0.01, beta = 1,
 * sigma = 1e-3, mu = 0.5; the near-rigid switch at k = 1e7; the defaults when k or tau_d are not
 * given. */
static void regularization_from_physics(void **state) {
    (void)state;
    const double w = sqrt(3.0) / 3; // |I3|_F / 3
    double rn, rt, taud;
    cs__sap_regularize(w, 1e-3, 1e5, 0.01, 1, 1e-3, &rn, &rt, &taud);
    assert_near(w, 0.57735026919, 1e-11);
    assert_near(rt, 5.7735026919e-4, 1e-14);
    assert_near(rn, 0.909090909091, 1e-12);
    assert_near(taud, 0.01, 0);
    cs__sap_contact c;
    cs__sap_contact_set(&c, 0.5, rn, rt);
    assert_near(c.mu_hat, 3.17542648054e-4, 1e-15);
    assert_near(c.mu_tilde2, 1.58771324027e-4, 1e-15);
    // Too stiff for the step: the near-rigid value wins.
    cs__sap_regularize(w, 1e-3, 1e7, 0.01, 1, 1e-3, &rn, &rt, &taud);
    assert_near(rn, 0.0146244531626, 1e-13);
    // Not given: rigid, critically damped at the near-rigid period beta h.
    cs__sap_regularize(w, 1e-3, 0, 0, 1, 1e-3, &rn, &rt, &taud);
    assert_near(rn, 0.0146244531626, 1e-13);
    assert_near(taud, 1e-3 / M_PI, 1e-18);
    // Stiffness given, dissipation not: critical damping 2 sqrt(m_eff / k), m_eff = 1 / w.
    cs__sap_regularize(w, 1e-3, 1e3, 0, 1, 1e-3, &rn, &rt, &taud);
    assert_near(taud, 2 / sqrt(1e3 * w), 1e-15);
    assert_near(rn, 1 / (1e-3 * 1e3 * (1e-3 + taud)), 1e-12);
}

/* ---- the core on sap.md's particle ---------------------------------------------------------- */

/* One particle of mass 1 on static ground: A = I3, contact frame rows n = z, t1 = x, t2 = y. */
typedef struct particle {
    int a_colptr[4], a_rowind[3], j_ptr[2], j_col[3];
    double a_val[3], j_val[9], vstar[3], bias[3];
    cs__sap_contact c;
    cs__sap_problem p;
} particle;

/* sap.md 12: k = 1e5, tau_d = 0.01, mu = 0.5, h = 1 ms; applied force f (N), gap phi0 (m). */
static void particle_init(particle *P, const double v0[3], const double f[3], double phi0) {
    const double h = 1e-3, taud = 0.01, w = sqrt(3.0) / 3;
    *P = (particle){.a_colptr = {0, 1, 2, 3}, .a_rowind = {0, 1, 2}, .a_val = {1, 1, 1},
                    .j_ptr = {0, 3}, .j_col = {0, 1, 2}, .j_val = {0, 0, 1, 1, 0, 0, 0, 1, 0}};
    for (int k = 0; k < 3; k++)
        P->vstar[k] = v0[k] + h * f[k];
    double rn, rt, td;
    cs__sap_regularize(w, h, 1e5, taud, 1, 1e-3, &rn, &rt, &td);
    cs__sap_contact_set(&P->c, 0.5, rn, rt);
    P->bias[0] = phi0 / (h + taud); // -vhat_n
    P->p = (cs__sap_problem){.nv = 3, .nc = 1, .a_colptr = P->a_colptr, .a_rowind = P->a_rowind,
                             .a_val = P->a_val, .j_ptr = P->j_ptr, .j_col = P->j_col,
                             .j_val = P->j_val, .vstar = P->vstar,
                             .bias = P->bias, .contact = &P->c};
}

/* Runs the core on p from v (in/out). */
static cs_status run_core(const cs__sap_problem *p, const cs_sap_params *prm,
                          const cs_options *opt, double *v, double *gamma, uint8_t *region,
                          int *iterations) {
    void *im = malloc(cs__sap_islands_size(p->nv, p->nc));
    cs__sap_islands is;
    cs__sap_islands_init(&is, im, p->nv, p->nc);
    assert_true(cs__sap_partition(p, &is, NULL));
    void *wm = malloc(cs__sap_work_size(p->nv, p->nc, is.nmax));
    cs__sap_work w;
    cs__sap_work_init(&w, wm, p->nv, p->nc, is.nmax);
    const cs_sap_params P = cs__sap_params_resolve(prm);
    const cs_status st = cs__sap_newton(p, &is, &P, opt, &w, v, gamma, region, iterations);
    free(im);
    free(wm);
    return st;
}

/* Cost and gradient of the particle at v, from the projection alone (x, y, z order). */
static double particle_cost(const particle *P, const double v[3], double grad[3],
                            double gamma[3], cs_contact_state *region) {
    const double vc[3] = {v[2] + P->bias[0], v[0], v[1]};
    const double y[3] = {-vc[0] / P->c.rn, -vc[1] / P->c.rt, -vc[2] / P->c.rt};
    *region = cs__sap_project(&P->c, y, gamma, NULL);
    const double jtg[3] = {gamma[1], gamma[2], gamma[0]};
    double cost = 0.5 * (P->c.rn * gamma[0] * gamma[0] +
                         P->c.rt * (gamma[1] * gamma[1] + gamma[2] * gamma[2]));
    for (int k = 0; k < 3; k++) {
        cost += 0.5 * (v[k] - P->vstar[k]) * (v[k] - P->vstar[k]);
        grad[k] = v[k] - P->vstar[k] - jtg[k];
    }
    return cost;
}

/* sap.md 12.1: resting, pushed sideways by 2 N: stiction after one Newton step. */
static void worked_example_stiction(void **state) {
    (void)state;
    particle P;
    particle_init(&P, (double[3]){0, 0, 0}, (double[3]){2, 0, -G}, -G / 1e5);
    assert_near(-P.bias[0], 8.91818181818e-3, 1e-14);
    double v[3] = {0, 0, 0}, g[3], grad[3];
    cs_contact_state region;
    // Iteration 0 at v0.
    assert_near(particle_cost(&P, v, grad, g, &region), 9.38617318182e-5, 1e-15);
    assert_int_equal(region, CS_STATE_STICK);
    assert_near(g[0], 0.00981, 1e-15);
    assert_near(grad[0], -0.002, 1e-15);
    assert_near(grad[2], 0, 1e-15);
    double Gm[9];
    const double y[3] = {-(v[2] + P.bias[0]) / P.c.rn, 0, 0};
    cs__sap_project(&P.c, y, g, Gm);
    assert_near(Gm[4], 1732.050808, 1e-6);
    assert_near(Gm[0], 1.1, 1e-12);
    // One Newton step with alpha = 1 converges.
    uint8_t reg;
    int its;
    assert_int_equal(run_core(&P.p, NULL, NULL, v, g, &reg, &its), CS_CONVERGED);
    assert_int_equal(its, 1);
    assert_near(v[0], 1.15403425639e-6, 1e-16);
    assert_near(v[1], 0, 0);
    assert_near(v[2], 0, 1e-15);
    assert_near(g[1], -1.99884596574e-3, 1e-14);
    assert_near(g[0], 0.00981, 1e-15);
    assert_int_equal(reg, CS_STATE_STICK);
    particle_cost(&P, v, grad, g, &region);
    for (int k = 0; k < 3; k++)
        assert_near(grad[k], 0, 1e-17);
    // The slip is within sigma w mu m g h (sap.md 3.4).
    assert_true(v[0] <= 1e-3 * sqrt(3.0) / 3 * 0.5 * G * 1e-3);
}

/* sap.md 12.2: sliding at 0.2 m/s: region II, one Newton step, the gliding artifact. */
static void worked_example_sliding(void **state) {
    (void)state;
    particle P;
    particle_init(&P, (double[3]){0.2, 0, 0}, (double[3]){0, 0, -G}, -G / 1e5);
    double v[3] = {0.2, 0, 0}, g[3], grad[3];
    cs_contact_state region;
    assert_near(particle_cost(&P, v, grad, g, &region), 6.57182595408e-3, 1e-14);
    assert_int_equal(region, CS_STATE_SLIDE);
    assert_near(g[1], -0.0598954903137, 1e-13);
    assert_near(g[0], 0.119790980627, 1e-12);
    assert_near(grad[0], 0.0598954903137, 1e-13);
    assert_near(grad[2], -0.109980980627, 1e-12);
    // The Hessian block in (n, t1, t2) order.
    const double vc[3] = {v[2] + P.bias[0], v[0], v[1]};
    const double y[3] = {-vc[0] / P.c.rn, -vc[1] / P.c.rt, -vc[2] / P.c.rt};
    double Gm[9];
    cs__sap_project(&P.c, y, g, Gm);
    assert_near(Gm[4], 0.2749563448, 1e-10);
    assert_near(Gm[8], 0.2994774516, 1e-10);
    assert_near(Gm[1], -0.5499126896, 1e-10);
    assert_near(Gm[0], 1.099825379, 1e-9);
    uint8_t reg;
    int its;
    assert_int_equal(run_core(&P.p, NULL, NULL, v, g, &reg, &its), CS_CONVERGED);
    assert_int_equal(its, 1);
    assert_near(v[0], 0.172506890576, 1e-12);
    assert_near(v[1], 0, 0);
    assert_near(v[2], 0.0451762188485, 1e-12);
    assert_near(g[1], -0.0274931094243, 1e-12);
    assert_near(g[0], 0.0549862188485, 1e-12);
    assert_int_equal(reg, CS_STATE_SLIDE);
    assert_near(particle_cost(&P, v, grad, g, &region), 3.26420689447e-3, 1e-14);
    // By hand: v_x = 0.2 - mu gamma_n, v_z = -g h + gamma_n.
    assert_near(v[0], 0.2 - 0.5 * g[0], 1e-15);
    assert_near(v[2], -G * 1e-3 + g[0], 1e-15);
}

/* sap.md 12.3: 1 mm above the ground: no contact, v = v* after one step. */
static void worked_example_separated(void **state) {
    (void)state;
    particle P;
    particle_init(&P, (double[3]){0, 0, 0}, (double[3]){0, 0, -G}, 1e-3);
    assert_near(-P.bias[0], -0.0909090909091, 1e-13);
    double v[3] = {0, 0, 0}, g[3], grad[3];
    cs_contact_state region;
    particle_cost(&P, v, grad, g, &region);
    assert_int_equal(region, CS_STATE_SEPARATE);
    uint8_t reg;
    int its;
    assert_int_equal(run_core(&P.p, NULL, NULL, v, g, &reg, &its), CS_CONVERGED);
    assert_int_equal(its, 1);
    assert_near(v[2], -0.00981, 1e-17);
    assert_near(g[0], 0, 0);
    assert_int_equal(reg, CS_STATE_SEPARATE);
}

/* ---- the exact line search on one-dimensional costs ---------------------------------------- */

/* l(alpha) = l0 + d0 alpha + sum over pieces of c_k (alpha - a_k)_+^2 / 2 (a_0 = 0): convex, C^1,
 * piecewise quadratic with curvature jumps at the a_k, like SAP's cost along a line. */
typedef struct piecewise {
    int n;
    double d0, a[4], c[4];
    int evals;
} piecewise;

static void piecewise_eval(void *ctx, double x, double *l, double *d, double *dd) {
    piecewise *P = ctx;
    P->evals++;
    *l = P->d0 * x, *d = P->d0;
    double curv = 0;
    for (int k = 0; k < P->n; k++) {
        const double e = x > P->a[k] ? x - P->a[k] : 0;
        *l += 0.5 * P->c[k] * e * e;
        *d += P->c[k] * e;
        curv += x > P->a[k] ? P->c[k] : 0;
    }
    if (dd)
        *dd = curv;
}

/* The root of l' for the pieces (l' is increasing and piecewise linear), or 1.5 when l' < 0
 * up to there. */
static double piecewise_root(const piecewise *P) {
    double lo = 0, hi = 1.5, d, l, dd;
    piecewise Q = *P;
    piecewise_eval(&Q, hi, &l, &d, &dd);
    if (d <= 0)
        return hi;
    for (int it = 0; it < 200; it++) {
        const double mid = 0.5 * (lo + hi);
        piecewise_eval(&Q, mid, &l, &d, &dd);
        if (d < 0)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The exact search returns the minimizer to its tolerance |l'| < 1e-8 |l'(0)| (or within 1e-8 in
 * alpha, or 1.5 when the cost still falls there): in one evaluation when the cost is the
 * quadratic whose Newton step is 1 (as SAP's is near the answer), and in few when the curvature
 * changes along the line, the minimizer lies past 1.5 or Newton alone would overshoot. */
static void exact_line_search_finds_the_minimizer(void **state) {
    (void)state;
    // The quadratic model itself: l''(0) = -l'(0).
    piecewise P = {.n = 1, .d0 = -3, .a = {0}, .c = {3}};
    cs__sap_line line = {.eval = piecewise_eval, .ctx = &P, .l0 = 0, .d0 = P.d0};
    double alpha;
    assert_int_equal(cs__sap_line_exact(&line, 1e-30, 1e-15, &alpha), CS_CONVERGED);
    assert_near(alpha, 1, 0);
    assert_int_equal(P.evals, 1);
    // Still descending at 1.5: the interval's end.
    P = (piecewise){.n = 1, .d0 = -3, .a = {0}, .c = {1}};
    assert_int_equal(cs__sap_line_exact(&line, 1e-30, 1e-15, &alpha), CS_CONVERGED);
    assert_near(alpha, 1.5, 0);
    // Random curvature jumps, including steep ones beyond which Newton from 1 overshoots.
    t_rng rng = t_rng_seed(0x1e5);
    for (int trial = 0; trial < 2000; trial++) {
        P = (piecewise){.n = 1 + (int)(t_rng_range(&rng, 0, 3.999)), .d0 = -1};
        for (int k = 0; k < P.n; k++) {
            P.a[k] = k ? t_rng_range(&rng, 0, 1.6) : 0;
            P.c[k] = pow(10, t_rng_range(&rng, -1, 3));
        }
        const double root = piecewise_root(&P);
        assert_int_equal(cs__sap_line_exact(&line, 1e-30, 1e-15, &alpha), CS_CONVERGED);
        double l, d;
        piecewise Q = P;
        piecewise_eval(&Q, alpha, &l, &d, NULL);
        if (root < 1.5)
            assert_true(fabs(d) < 1e-8 || fabs(alpha - root) < 1e-8);
        else
            assert_near(alpha, 1.5, 1e-8);
        assert_true(P.evals <= 60);
    }
}

/* ---- a random core problem: monotone cost, both line searches ------------------------------ */

#define RNV 12
#define RNC 6

typedef struct random_problem {
    int a_colptr[RNV + 1], a_rowind[RNV * RNV], j_ptr[RNC + 1], j_col[RNC * RNV];
    double a_val[RNV * RNV], j_val[3 * RNC * RNV], vstar[RNV], bias[3 * RNC];
    cs__sap_contact c[RNC];
    cs__sap_problem p;
} random_problem;

/* Dense random SPD A (one island), dense random J, contacts in every regime. */
static void random_problem_init(random_problem *R, t_rng *rng) {
    double Gm[RNV * RNV];
    for (int k = 0; k < RNV * RNV; k++)
        Gm[k] = t_rng_range(rng, -1, 1);
    for (int j = 0; j < RNV; j++) {
        R->a_colptr[j] = j * RNV;
        for (int i = 0; i < RNV; i++) {
            double s = i == j ? 0.5 : 0;
            for (int k = 0; k < RNV; k++)
                s += Gm[i * RNV + k] * Gm[j * RNV + k];
            R->a_rowind[j * RNV + i] = i;
            R->a_val[j * RNV + i] = s;
        }
    }
    R->a_colptr[RNV] = RNV * RNV;
    // Every contact touches every dof: its block is rows 3 i .. 3 i + 2 of a dense J.
    for (int i = 0; i <= RNC; i++)
        R->j_ptr[i] = i * RNV;
    for (int q = 0; q < RNC * RNV; q++)
        R->j_col[q] = q % RNV;
    for (int r = 0; r < 3 * RNC; r++) {
        for (int j = 0; j < RNV; j++)
            R->j_val[r * RNV + j] = t_rng_range(rng, -1, 1);
        R->bias[r] = 0;
    }
    for (int j = 0; j < RNV; j++)
        R->vstar[j] = t_rng_range(rng, -1, 1);
    for (int i = 0; i < RNC; i++) {
        R->bias[3 * i] = t_rng_range(rng, -0.5, 0.5);
        cs__sap_contact_set(&R->c[i], t_rng_range(rng, 0, 1), t_rng_range(rng, 1e-3, 0.1),
                            t_rng_range(rng, 1e-5, 1e-2));
    }
    R->p = (cs__sap_problem){.nv = RNV, .nc = RNC, .a_colptr = R->a_colptr,
                             .a_rowind = R->a_rowind, .a_val = R->a_val,
                             .j_ptr = R->j_ptr, .j_col = R->j_col, .j_val = R->j_val,
                             .vstar = R->vstar, .bias = R->bias, .contact = R->c};
}

/* The cost of R at v, computed from its definition here. */
static double random_cost(const random_problem *R, const double *v) {
    double cost = 0;
    for (int j = 0; j < RNV; j++)
        for (int i = 0; i < RNV; i++)
            cost += 0.5 * (v[i] - R->vstar[i]) * R->a_val[j * RNV + i] * (v[j] - R->vstar[j]);
    for (int c = 0; c < RNC; c++) {
        double vc[3], g[3];
        for (int r = 0; r < 3; r++) {
            vc[r] = R->bias[3 * c + r];
            for (int j = 0; j < RNV; j++)
                vc[r] += R->j_val[(3 * c + r) * RNV + j] * v[j];
        }
        const cs__sap_contact *k = &R->c[c];
        const double y[3] = {-vc[0] / k->rn, -vc[1] / k->rt, -vc[2] / k->rt};
        cs__sap_project(k, y, g, NULL);
        cost += 0.5 * (k->rn * g[0] * g[0] + k->rt * (g[1] * g[1] + g[2] * g[2]));
    }
    return cost;
}

/* Every Newton iteration lowers the cost (sap.md test (f)), with either line search, and both
 * reach the same minimizer: the cost is strongly convex, so its minimizer is unique. */
static void line_searches_reach_the_same_optimum(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x11fe);
    for (int trial = 0; trial < 50; trial++) {
        random_problem R;
        random_problem_init(&R, &rng);
        double vopt[2][RNV], g[3 * RNC];
        uint8_t reg[RNC];
        for (int ls = 0; ls < 2; ls++) {
            const cs_sap_params prm = {.line_search = ls ? CS_SAP_LINE_BACKTRACK
                                                         : CS_SAP_LINE_EXACT,
                                       .rel_tol = 1e-12};
            // Iterate k steps from v = 0, for growing k: the cost never rises.
            double prev = INFINITY;
            int its = 0, k = 1;
            cs_status st = CS_MAXITER;
            for (; st == CS_MAXITER && k <= 100; k++) {
                cs_sap_params capped = prm;
                capped.max_iterations = k;
                memset(vopt[ls], 0, sizeof vopt[ls]);
                st = run_core(&R.p, &capped, NULL, vopt[ls], g, reg, &its);
                const double cost = random_cost(&R, vopt[ls]);
                assert_true(cost <= prev + 1e-13 * fabs(prev));
                prev = cost;
            }
            assert_int_equal(st, CS_CONVERGED);
        }
        for (int j = 0; j < RNV; j++)
            assert_near(vopt[0][j], vopt[1][j], 1e-8 * (1 + fabs(vopt[0][j])));
    }
}

/* ---- scenes -------------------------------------------------------------------------------- */

/* Sum of the world-frame contact forces on body id. */
static void net_force_on(const t_fixture *f, uint32_t id, double out[3]) {
    out[0] = out[1] = out[2] = 0;
    for (int i = 0; i < f->scene.nc; i++) {
        const cs_contact *c = &f->scene.contacts[i];
        const double sign = c->body_a == id ? 1 : c->body_b == id ? -1 : 0;
        for (int k = 0; k < 3; k++)
            out[k] += sign * f->res.force[3 * i + k];
    }
}

/* The model's Delassus matrix W (3 nc x 3 nc, contact rows n, t1, t2), J v* [3 nc] and the
 * contact velocities J v [3 nc] of velocities v [6 nb] (may be NULL), through model.c, a path
 * independent of sap.c's own estimate. */
static void scene_operators(t_fixture *f, double *W, double *jvstar, const double *v,
                            double *jv) {
    const size_t mark = cs__ws_mark(f->ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, f->ws, &f->scene), CS_CONVERGED);
    if (W)
        assert_int_equal(cs_model_delassus(&m, f->ws, 3, W, 3 * m.nc, NULL), CS_CONVERGED);
    if (jvstar)
        cs_model_jv(&m, m.vstar, jvstar);
    if (v)
        cs_model_jv(&m, v, jv);
    cs__ws_release(f->ws, mark);
}

/* Contact i's near-rigid regularization with the defaults (beta = 1, sigma = 1e-3), from W. */
static double rms_block(const double *W, int nc, int i) {
    double fro = 0;
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++)
            fro += pow(W[(size_t)(3 * i + s) * 3 * nc + 3 * i + r], 2);
    return sqrt(fro) / 3;
}

/* Box at rest on a plane, one step: every contact sticks and the normal forces sum to
 * m g / (1 + m R_n / 4), the paper's near-rigid compliance: with v_n = -R_n gamma_n at each of
 * the four symmetric contacts, momentum gives 4 gamma_n (1 + m R_n / 4) = m g h. */
static void box_on_plane(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
    const int nc = f->scene.nc;
    double *W = malloc(9 * (size_t)nc * nc * sizeof(double));
    scene_operators(f, W, NULL, NULL, NULL);
    const double m = f->scene.bodies[0].mass, rn = rms_block(W, nc, 0) / (4 * M_PI * M_PI);
    double F[3];
    net_force_on(f, 1, F);
    assert_near(F[2], m * G / (1 + m * rn / 4), 1e-9 * m * G);
    assert_near(F[0], 0, 1e-12);
    assert_near(F[1], 0, 1e-12);
    for (int i = 0; i < nc; i++)
        assert_int_equal(f->res.state[i], CS_STATE_STICK);
    // Certified as SAP is (certify.h): momentum balance and the exact cone.
    assert_true(f->res.cert.momentum <= 1e-9 * f->res.cert.impulse_scale);
    assert_near(f->res.cert.cone, 0, 0);
    assert_true(f->res.stats.iterations >= 1);
    free(W);
    t_fixture_free(f);
}

/* Streams f with SAP for ticks steps as a client would: each tick feeds the returned velocities
 * back and advances the contacts' signed distances by h v_n (positions held: the motion is
 * microns). Returns the Newton iterations summed over the ticks. */
static long stream(t_fixture *f, int ticks) {
    const int nc = f->scene.nc, nb = f->scene.nb;
    double *u = malloc(3 * (size_t)nc * sizeof(double));
    long iterations = 0;
    for (int t = 0; t < ticks; t++) {
        assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
        iterations += f->res.stats.iterations;
        for (int b = 0; b < nb; b++) {
            memcpy(f->scene.bodies[b].v, f->res.v + 6 * b, 3 * sizeof(double));
            memcpy(f->scene.bodies[b].w, f->res.v + 6 * b + 3, 3 * sizeof(double));
        }
        scene_operators(f, NULL, NULL, f->res.v, u);
        for (int i = 0; i < nc; i++)
            f->scene.contacts[i].distance += f->scene.dt * u[3 * i];
    }
    free(u);
    return iterations;
}

/* Normal and tangential magnitudes of the net contact force on body 1 w.r.t. normal n. */
static void split_force(const t_fixture *f, const double n[3], double *fn, double *ft) {
    double F[3];
    net_force_on(f, 1, F);
    *fn = F[0] * n[0] + F[1] * n[1] + F[2] * n[2];
    *ft = hypot(hypot(F[0] - *fn * n[0], F[1] - *fn * n[1]), F[2] - *fn * n[2]);
}

/* Box on a 20 degree incline with mu = 0.5 > tan(20 deg): the box sticks. Its contacts slip only
 * by the regularization, at most sigma w mu gamma_n (sap.md 3.4), and those in region I obey
 * v_t = -R_t gamma_t exactly. Streamed to steady state it creeps at that slip while friction
 * carries m g sin(theta) and the normal force is m g cos(theta). */
static void incline_sticks(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_incline_stick.json");
    const int nc = f->scene.nc;
    const double th = 20.0 * M_PI / 180, m = f->scene.bodies[0].mass;
    const double *n = f->scene.contacts[0].normal;
    double *W = malloc(9 * (size_t)nc * nc * sizeof(double)), u[12], fn = 0, ft = 0;
    for (int pass = 0; pass < 2; pass++) {
        // Pass 0: the first step from rest; pass 1: after streaming to steady state.
        if (pass)
            stream(f, 2000);
        assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
        scene_operators(f, W, NULL, f->res.v, u);
        double bound = 0;
        for (int i = 0; i < nc; i++) {
            const double rt = 1e-3 * rms_block(W, nc, i), *l = f->res.impulse + 3 * i;
            bound = fmax(bound, rt * f->scene.contacts[i].mu * l[0]);
            if (f->res.state[i] == CS_STATE_STICK) {
                assert_near(u[3 * i + 1], -rt * l[1], 1e-12);
                assert_near(u[3 * i + 2], -rt * l[2], 1e-12);
            }
            assert_true(hypot(l[1], l[2]) <= f->scene.contacts[i].mu * l[0] * (1 + 1e-12));
        }
        for (int i = 0; i < nc; i++)
            assert_true(hypot(u[3 * i + 1], u[3 * i + 2]) <= bound);
        split_force(f, n, &fn, &ft);
        assert_true(ft <= 0.5 * fn);
    }
    // Steady state: the body moves at the creep alone, forces balance gravity.
    const double *v = f->res.v, vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
    assert_true(fabs(vn) < 1e-9);
    for (int k = 3; k < 6; k++)
        assert_near(v[k], 0, 1e-9);
    assert_near(ft, m * G * sin(th), 1e-6 * m * G);
    assert_near(fn, m * G * cos(th), 1e-6 * m * G);
    free(W);
    t_fixture_free(f);
}

/* mu = 0.2 < tan(20 deg): every contact slides, with friction mu f_n opposing its slip. */
static void incline_slides(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_incline_slide.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
    const int nc = f->scene.nc;
    double u[12];
    scene_operators(f, NULL, NULL, f->res.v, u);
    const double th = 20.0 * M_PI / 180, h = f->scene.dt;
    for (int i = 0; i < nc; i++) {
        const double *l = f->res.impulse + 3 * i, mu = f->scene.contacts[i].mu;
        assert_int_equal(f->res.state[i], CS_STATE_SLIDE);
        assert_true(l[0] > 0);
        assert_near(hypot(l[1], l[2]), mu * l[0], 1e-12 * l[0]);
        // Opposes the slip, to within the soft norm's angle.
        const double slip = hypot(u[3 * i + 1], u[3 * i + 2]);
        assert_near(l[1] * u[3 * i + 1] + l[2] * u[3 * i + 2], -mu * l[0] * slip,
                    1e-9 * mu * l[0] * slip);
    }
    // The body slides downhill, slower than without friction.
    double F[3];
    net_force_on(f, 1, F);
    const double *n = f->scene.contacts[0].normal;
    const double fn = F[0] * n[0] + F[1] * n[1] + F[2] * n[2];
    const double ft = hypot(hypot(F[0] - fn * n[0], F[1] - fn * n[1]), F[2] - fn * n[2]);
    assert_near(ft, 0.2 * fn, 1e-12 * fn);
    const double speed = hypot(hypot(f->res.v[0], f->res.v[1]), f->res.v[2]);
    assert_true(speed > 0 && speed < G * sin(th) * h);
    t_fixture_free(f);
}

/* A compliant contact (stiffness and dissipation given, penetrating): in stiction SAP gives
 * exactly the compliant law gamma_n = h (-k (phi0 + h v_n) - tau_d k v_n) (paper eq. 2), with
 * v_n the post-step normal velocity; with the dissipation not given, tau_d is the critical
 * damping 2 / sqrt(k w). */
static void compliant_law(void **state) {
    (void)state;
    for (int given = 0; given < 2; given++) {
        t_fixture *f = t_fixture_load("box_on_plane.json");
        const double k = 2e4, h = f->scene.dt;
        for (int i = 0; i < f->scene.nc; i++) {
            f->scene.contacts[i].stiffness = k;
            f->scene.contacts[i].dissipation = given ? 0.02 : 0;
            f->scene.contacts[i].distance = -1e-4 * (1 + 0.5 * i);
        }
        assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
        const int nc = f->scene.nc;
        double *W = malloc(9 * (size_t)nc * nc * sizeof(double)), u[12];
        scene_operators(f, W, NULL, f->res.v, u);
        for (int i = 0; i < nc; i++) {
            const double w = rms_block(W, nc, i);
            const double taud = given ? 0.02 : 2 / sqrt(k * w);
            // The compliant regime holds: its R_n is above the near-rigid one.
            assert_true(1 / (h * k * (h + taud)) > w / (4 * M_PI * M_PI));
            const double phi0 = f->scene.contacts[i].distance, vn = u[3 * i];
            assert_int_equal(f->res.state[i], CS_STATE_STICK);
            assert_near(f->res.impulse[3 * i], h * (-k * (phi0 + h * vn) - taud * k * vn),
                        1e-9 * f->res.impulse[3 * i]);
        }
        free(W);
        t_fixture_free(f);
    }
}

/* Frictionless scenes against Dantzig and lemke-standard. With mu = 0, SAP's answer solves the
 * LCP with Delassus matrix W + R_n exactly (region II: v_n = -R_n gamma_n when gamma_n > 0), so
 * it must match Dantzig on that LCP to rounding. Against the rigid answer (gamma_0, v_0) of the
 * pivoting solvers the difference is the regularization's: the monotonicity of both LCPs gives
 *     |v_sap - v_0|_M^2 = |gamma_sap - gamma_0|_W^2
 *                       <= gamma_0^T R gamma_sap - gamma_sap^T R gamma_sap,
 * the tolerance checked here (a bound from the problem data, not a tuned number). */
static void frictionless_agrees_with_pivoting(void **state) {
    (void)state;
    const char *scenes[] = {"box_on_plane.json", "box_on_incline_slide.json", "peg_in_hole.json",
                            "stack_3.json"};
    const cs_solver rigid[] = {CS_SOLVER_DANTZIG, CS_SOLVER_LEMKE_STANDARD};
    for (size_t sc = 0; sc < sizeof scenes / sizeof scenes[0]; sc++) {
        t_fixture *f = t_fixture_load(scenes[sc]);
        const int nc = f->scene.nc, nb = f->scene.nb;
        for (int i = 0; i < nc; i++)
            f->scene.contacts[i].mu = 0;
        assert_int_equal(cs_step(f->ws, &f->scene, &sap, NULL, &f->res), CS_CONVERGED);
        double *gs = malloc(3 * (size_t)nc * sizeof(double));
        double *vs = malloc(6 * (size_t)nb * sizeof(double));
        memcpy(gs, f->res.impulse, 3 * (size_t)nc * sizeof(double));
        memcpy(vs, f->res.v, 6 * (size_t)nb * sizeof(double));
        for (int i = 0; i < nc; i++)
            assert_near(hypot(gs[3 * i + 1], gs[3 * i + 2]), 0, 0);

        // The regularized LCP (W_nn + R_n, J_n v*), solved by Dantzig.
        double *W = malloc(9 * (size_t)nc * nc * sizeof(double));
        double *jvs = malloc(3 * (size_t)nc * sizeof(double));
        double *A = malloc((size_t)nc * nc * sizeof(double));
        double *b = malloc((size_t)nc * sizeof(double)), *z = malloc((size_t)nc * sizeof(double));
        double *rn = malloc((size_t)nc * sizeof(double));
        scene_operators(f, W, jvs, NULL, NULL);
        for (int i = 0; i < nc; i++) {
            rn[i] = rms_block(W, nc, i) / (4 * M_PI * M_PI);
            b[i] = jvs[3 * i];
            for (int j = 0; j < nc; j++)
                A[(size_t)j * nc + i] = W[(size_t)(3 * j) * 3 * nc + 3 * i] + (i == j ? rn[i] : 0);
        }
        cs_stats st;
        const cs_limits big = {.max_bodies = nb, .max_contacts = nc, .max_dirs = 16};
        cs_workspace *ws = cs_workspace_new(&big);
        assert_int_equal(cs_dantzig_lcp(ws, nc, A, nc, b, NULL, z, &st), CS_CONVERGED);
        for (int i = 0; i < nc; i++)
            assert_near(gs[3 * i], z[i], 1e-9 * (1e-3 + fabs(z[i])));
        cs_workspace_free(ws);

        for (size_t r = 0; r < sizeof rigid / sizeof rigid[0]; r++) {
            const cs_options opt = {.solver = rigid[r]};
            assert_int_equal(cs_step(f->ws, &f->scene, &opt, NULL, &f->res), CS_CONVERGED);
            double bound = 0, dist = 0;
            for (int i = 0; i < nc; i++)
                bound += rn[i] * (f->res.impulse[3 * i] - gs[3 * i]) * gs[3 * i];
            for (int bb = 0; bb < nb; bb++) {
                const cs_body *B = &f->scene.bodies[bb];
                double dv[6], Iw[9], R[9], Idv[3];
                for (int k = 0; k < 6; k++)
                    dv[k] = vs[6 * bb + k] - f->res.v[6 * bb + k];
                cs_quat_to_mat3(R, B->quat);
                cs_mat3_rotate(Iw, R, B->inertia);
                cs_mat3_vec(Idv, Iw, dv + 3);
                dist += B->mass * cs_dot3(dv, dv) + cs_dot3(dv + 3, Idv);
            }
            assert_true(bound >= 0);
            assert_true(dist <= bound * (1 + 1e-6) + 1e-20);
            // And the bound is not vacuous: the answers do differ by the compliance.
            assert_true(dist > 0);
        }
        free(gs), free(vs), free(W), free(jvs), free(A), free(b), free(z), free(rn);
        t_fixture_free(f);
    }
}

/* ---- the FCLIB global form ------------------------------------------------------------------ */

/* A particle of mass m on the ground in global form: M = m I3, H = [e_z e_x e_y], f = m v*.
 * Near-rigid regime: w = |I3 / m|_F / 3 = 1 / (sqrt(3) m), R_n = w / (4 pi^2), and in stiction
 * r_n = m g h / (1 + m R_n) (momentum m (v_z + g h) = r_n with v_z = -R_n r_n). */
static void global_particle_analytic(void **state) {
    (void)state;
    const double m = 3.0, h = 1e-3;
    const int mcol[4] = {0, 1, 2, 3}, mrow[3] = {0, 1, 2}, hcol[4] = {0, 1, 2, 3},
              hrow[3] = {2, 0, 1};
    const double mval[3] = {m, m, m}, hval[3] = {1, 1, 1}, f[3] = {0, 0, -m * G * h},
                 w[3] = {0, 0, 0}, mu[1] = {0.5};
    const cs_sap_global p = {.nv = 3, .nc = 1, .m_colptr = mcol, .m_rowind = mrow,
                             .m_val = mval, .h_colptr = hcol, .h_rowind = hrow, .h_val = hval,
                             .f = f, .w = w, .mu = mu};
    double v[3], r[3], u[3];
    cs_stats st;
    assert_int_equal(cs_sap_global_solve(&p, NULL, v, r, u, &st), CS_CONVERGED);
    const double rn = 1 / (sqrt(3.0) * m) / (4 * M_PI * M_PI);
    assert_near(r[0], m * G * h / (1 + m * rn), 1e-15);
    assert_near(r[1], 0, 1e-18);
    assert_near(u[0], v[2], 0);
    assert_near(u[0], -rn * r[0], 1e-17);
    assert_int_equal(st.iterations, 1);
    // Bad input is refused.
    const double bad_mu[1] = {-1};
    cs_sap_global q = p;
    q.mu = bad_mu;
    assert_int_equal(cs_sap_global_solve(&q, NULL, v, r, u, &st), CS_EINPUT);
}

/* Appends the CSC of f's model in global form: M (block diagonal), H = J^T from the model's
 * Jacobian blocks, f = M v*, w = 0. Arrays are malloc'ed into g and freed by global_free. */
typedef struct global_scene {
    cs_sap_global p;
    int *mc, *mr, *hc, *hr;
    double *mv, *hv, *f, *w, *mu;
} global_scene;

static void global_from_scene(t_fixture *f, global_scene *g) {
    const size_t mark = cs__ws_mark(f->ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, f->ws, &f->scene), CS_CONVERGED);
    const int nb = m.nb, nc = m.nc, nv = 6 * nb;
    g->mc = malloc((size_t)(nv + 1) * sizeof(int));
    g->mr = malloc(36 * (size_t)nb * sizeof(int));
    g->mv = malloc(36 * (size_t)nb * sizeof(double));
    g->hc = malloc((size_t)(3 * nc + 1) * sizeof(int));
    g->hr = malloc(36 * (size_t)nc * sizeof(int));
    g->hv = malloc(36 * (size_t)nc * sizeof(double));
    g->f = malloc((size_t)nv * sizeof(double));
    g->w = calloc(3 * (size_t)nc, sizeof(double));
    g->mu = malloc((size_t)nc * sizeof(double));
    // M column by column (full 6 x 6 blocks, zeros included: structure is the caller's choice).
    int q = 0;
    for (int b = 0; b < nb; b++) {
        for (int c = 0; c < 6; c++) {
            g->mc[6 * b + c] = q;
            for (int r = 0; r < 6; r++) {
                double val = 0;
                if (r < 3 && c < 3)
                    val = r == c ? m.mass[b] : 0;
                else if (r >= 3 && c >= 3)
                    val = m.iw[9 * b + 3 * (r - 3) + (c - 3)];
                g->mr[q] = 6 * b + r;
                g->mv[q++] = val;
            }
        }
    }
    g->mc[nv] = q;
    cs_model_mul(&m, m.vstar, g->f);
    // H's column 3 i + r is J's row: the model's Jacobian table, body by body.
    double *js = malloc(72 * (size_t)nc * sizeof(double));
    assert_int_equal(cs_model_jacobian(&m, 3, js, NULL), CS_CONVERGED);
    q = 0;
    for (int i = 0; i < nc; i++) {
        g->mu[i] = m.mu[i];
        const int body[2] = {m.ia[i], m.ib[i]};
        for (int r = 0; r < 3; r++) {
            g->hc[3 * i + r] = q;
            for (int side = 0; side < 2; side++) {
                if (body[side] < 0)
                    continue;
                for (int k = 0; k < 6; k++) {
                    g->hr[q] = 6 * body[side] + k;
                    g->hv[q++] = js[((size_t)(3 * i + r) * 2 + side) * 12 + k];
                }
            }
        }
    }
    g->hc[3 * nc] = q;
    free(js);
    g->p = (cs_sap_global){.nv = nv, .nc = nc, .m_colptr = g->mc, .m_rowind = g->mr,
                           .m_val = g->mv, .h_colptr = g->hc, .h_rowind = g->hr,
                           .h_val = g->hv, .f = g->f, .w = g->w, .mu = g->mu};
    cs__ws_release(f->ws, mark);
}

static void global_free(global_scene *g) {
    free(g->mc), free(g->mr), free(g->mv), free(g->hc), free(g->hr), free(g->hv), free(g->f);
    free(g->w), free(g->mu);
}

/* The same problem through the global form and the scene path (cold) gives the same answer:
 * same regularization (exact Delassus blocks both ways), same start v*. */
static void global_agrees_with_scene(void **state) {
    (void)state;
    const char *scenes[] = {"box_on_plane.json", "box_on_incline_stick.json", "peg_in_hole.json",
                            "stack_3.json"};
    for (size_t sc = 0; sc < sizeof scenes / sizeof scenes[0]; sc++) {
        t_fixture *f = t_fixture_load(scenes[sc]);
        global_scene g;
        global_from_scene(f, &g);
        const int nv = g.p.nv, nc = g.p.nc;
        double *v = malloc((size_t)nv * sizeof(double));
        double *r = malloc(3 * (size_t)nc * sizeof(double));
        double *u = malloc(3 * (size_t)nc * sizeof(double));
        cs_stats st;
        assert_int_equal(cs_sap_global_solve(&g.p, NULL, v, r, u, &st), CS_CONVERGED);
        assert_int_equal(cs_step(f->ws, &f->scene, &sap, NULL, &f->res), CS_CONVERGED);
        assert_int_equal(st.iterations, f->res.stats.iterations);
        double vs = 0, is = 0;
        for (int k = 0; k < nv; k++)
            vs = fmax(vs, fabs(v[k]));
        for (int k = 0; k < 3 * nc; k++)
            is = fmax(is, fabs(r[k]));
        for (int k = 0; k < nv; k++)
            assert_near(v[k], f->res.v[k], 1e-9 * vs);
        for (int k = 0; k < 3 * nc; k++)
            assert_near(r[k], f->res.impulse[k], 1e-9 * is);
        // u = H^T v + w, in the contact frame: the model's J v.
        double *jv = malloc(3 * (size_t)nc * sizeof(double));
        scene_operators(f, NULL, NULL, v, jv);
        for (int k = 0; k < 3 * nc; k++)
            assert_near(u[k], jv[k], 1e-12 * (vs + 1e-9));
        free(v), free(r), free(u), free(jv);
        global_free(&g);
        t_fixture_free(f);
    }
}

/* A FEM-like global problem: a chain of n particles coupled by springs (M = mass + h^2 K,
 * tridiagonal in each axis), split into two chains and free particles, with contacts pressing
 * some particles into the ground. Islands: the two chains (one large enough for LAPACK's
 * blocked Cholesky) and the free particles, which must come out at v* = M^-1 f. Checked
 * against the definition: M v = H r + f, r in the cone, u = H^T v + w. */
static void global_fem_chain(void **state) {
    (void)state;
    enum { NP = 170, NV = 3 * NP, NCH = 150 }; // particles 0..149: chains, 150..169: free
    const double h = 1e-3, mass = 0.01, ks = 1e5;
    int *mc = malloc((NV + 1) * sizeof(int)), *mr = malloc(3 * NV * sizeof(int));
    double *mv = malloc(3 * NV * sizeof(double)), *f = malloc(NV * sizeof(double));
    int q = 0;
    for (int p = 0; p < NP; p++) {
        // Chains 0..139 and 140..149; springs only inside a chain.
        const bool left = p < NCH && p != 0 && p != 140, right = p < NCH - 1 && p != 139;
        for (int a = 0; a < 3; a++) {
            const int col = 3 * p + a;
            mc[col] = q;
            if (left)
                mr[q] = col - 3, mv[q++] = -h * h * ks;
            mr[q] = col, mv[q++] = mass + h * h * ks * (left + right);
            if (right)
                mr[q] = col + 3, mv[q++] = -h * h * ks;
            f[col] = (a == 2 ? -mass * G * h : 0) + (p >= NCH ? 0.001 * (a + 1) : 0);
        }
    }
    mc[NV] = q;
    // Contacts under every 10th particle of the chains, normal +z; w_n a small penetration.
    enum { NCON = NCH / 10 };
    int hc[3 * NCON + 1], hr[3 * NCON];
    double hv[3 * NCON], w[3 * NCON], mu[NCON], v[NV], r[3 * NCON], u[3 * NCON];
    for (int i = 0; i < NCON; i++) {
        const int p = 10 * i + 5;
        for (int k = 0; k < 3; k++) {
            hc[3 * i + k] = 3 * i + k;
            hr[3 * i + k] = 3 * p + (k == 0 ? 2 : k - 1);
            hv[3 * i + k] = 1;
            w[3 * i + k] = k == 0 ? -1e-4 : 0;
        }
        mu[i] = 0.3;
    }
    hc[3 * NCON] = 3 * NCON;
    const cs_sap_global p = {.nv = NV, .nc = NCON, .m_colptr = mc, .m_rowind = mr, .m_val = mv,
                             .h_colptr = hc, .h_rowind = hr, .h_val = hv, .f = f, .w = w,
                             .mu = mu};
    cs_stats st;
    assert_int_equal(cs_sap_global_solve(&p, NULL, v, r, u, &st), CS_CONVERGED);
    assert_true(st.iterations >= 2); // two islands with contacts, at least one step each
    // Momentum balance M v - H r - f, scaled by the applied impulses.
    double res = 0, scale = 0;
    for (int j = 0; j < NV; j++) {
        double s = -f[j];
        for (int k = mc[j]; k < mc[j + 1]; k++)
            s += mv[k] * v[mr[k]];
        for (int i = 0; i < 3 * NCON; i++)
            if (hr[i] == j)
                s -= r[i];
        res = fmax(res, fabs(s));
        scale = fmax(scale, fabs(f[j]));
    }
    assert_true(res <= 1e-6 * scale);
    for (int i = 0; i < NCON; i++) {
        assert_true(r[3 * i] > 0);
        assert_true(hypot(r[3 * i + 1], r[3 * i + 2]) <= mu[i] * r[3 * i] * (1 + 1e-12));
        assert_near(u[3 * i], v[hr[3 * i]] + w[3 * i], 0);
    }
    // Free particles: v = f / mass.
    for (int j = 3 * NCH; j < NV; j++)
        assert_near(v[j], f[j] / mass, 1e-15);
    free(mc), free(mr), free(mv), free(f);
}

/* ---- islands, warm start, deadline, memory -------------------------------------------------- */

/* Two boxes far apart on a plane and a free-flying body: three independent problems. Each box
 * gets exactly its answer alone; the free body moves at v*. */
static void islands_are_independent(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, NULL, &f->res), CS_CONVERGED);
    double alone_v[6], alone_l[12];
    memcpy(alone_v, f->res.v, sizeof alone_v);
    memcpy(alone_l, f->res.impulse, sizeof alone_l);
    const int alone_its = f->res.stats.iterations;

    cs_body bodies[3] = {f->scene.bodies[0], f->scene.bodies[0], f->scene.bodies[0]};
    cs_contact contacts[8];
    bodies[1].id = 2, bodies[1].pos[0] += 5;
    bodies[2].id = 3, bodies[2].pos[2] += 5;
    const double w3[3] = {0.3, -2, 1}, v3[3] = {1, 2, 3};
    memcpy(bodies[2].w, w3, sizeof w3);
    memcpy(bodies[2].v, v3, sizeof v3);
    // Body 2 first, so the islands are not in body order.
    for (int i = 0; i < 4; i++) {
        contacts[i] = f->scene.contacts[i];
        contacts[i].id += 100, contacts[i].body_a = 2, contacts[i].point[0] += 5;
        contacts[4 + i] = f->scene.contacts[i];
    }
    cs_scene s = f->scene;
    s.nb = 3, s.nc = 8, s.bodies = bodies, s.contacts = contacts;
    const cs_limits lim = {.max_bodies = 3, .max_contacts = 8, .max_dirs = 16};
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = malloc(cs_result_size(&lim));
    cs_result res;
    cs_result_init(&res, mem, &lim);
    assert_int_equal(cs_step(ws, &s, &sap, NULL, &res), CS_CONVERGED);
    assert_int_equal(res.stats.iterations, 2 * alone_its);
    // Equal up to the rounding of the shifted lever arms (5.1 - 5 != 0.1 in binary).
    for (int k = 0; k < 6; k++) {
        assert_near(res.v[k], alone_v[k], 1e-14);
        assert_near(res.v[6 + k], alone_v[k], 1e-14);
    }
    for (int k = 0; k < 12; k++) {
        assert_near(res.impulse[k], alone_l[k], 1e-12 * fabs(alone_l[k]) + 1e-18);
        assert_near(res.impulse[12 + k], alone_l[k], 1e-12 * fabs(alone_l[k]) + 1e-18);
    }
    // The free body: v* (no gyroscopic change for its isotropic inertia).
    for (int k = 0; k < 3; k++) {
        assert_near(res.v[12 + k], v3[k] + (k == 2 ? -G * s.dt : 0), 1e-15);
        assert_near(res.v[15 + k], w3[k], 1e-15);
    }
    free(mem);
    cs_workspace_free(ws);
    t_fixture_free(f);
}

/* Streams the resting box: each tick feeds the returned velocities back and advances the
 * contacts' signed distances by h v_n. With the warm start the average is at most one Newton
 * iteration per tick, and the box settles where the near-rigid law puts it: v = 0, forces m g,
 * penetration phi = -(h + tau_d) R_n gamma_n with the default tau_d = h / pi. */
static void warm_start_streams_at_most_one_iteration(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    const int nc = f->scene.nc, ticks = 2000;
    const double h = f->scene.dt, m = f->scene.bodies[0].mass;
    cs_body *B = &f->scene.bodies[0];
    const long iterations = stream(f, ticks);
    assert_true((double)iterations / ticks <= 1.0);
    double F[3], *W = malloc(9 * (size_t)nc * nc * sizeof(double));
    net_force_on(f, 1, F);
    assert_near(F[2], m * G, 1e-6 * m * G);
    for (int k = 0; k < 6; k++)
        assert_near(f->res.v[k], 0, 1e-9);
    scene_operators(f, W, NULL, NULL, NULL);
    const double rn = rms_block(W, nc, 0) / (4 * M_PI * M_PI), taud = h / M_PI;
    const double rest = -(h + taud) * rn * m * G * h / 4;
    for (int i = 0; i < nc; i++)
        assert_near(f->scene.contacts[i].distance, rest, 1e-6 * fabs(rest));
    // A body the warm start does not know starts cold, from v*: as with no warm start at all.
    B->id = 77;
    for (int i = 0; i < nc; i++)
        f->scene.contacts[i].body_a = 77;
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
    double warm_v[6];
    memcpy(warm_v, f->res.v, sizeof warm_v);
    const int warm_its = f->res.stats.iterations;
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, NULL, &f->res), CS_CONVERGED);
    assert_memory_equal(warm_v, f->res.v, sizeof warm_v);
    assert_int_equal(warm_its, f->res.stats.iterations);
    free(W);
    t_fixture_free(f);
}

static int64_t clock_past(void) {
    return 2000;
}

static int64_t fake_now;
static int64_t clock_ticking(void) {
    return fake_now++;
}

/* A tick that starts after its deadline gets no iterate (the step falls back: cold, there is
 * nothing to carry). A deadline that passes once SAP has set up answers its first iterate (zero
 * Newton iterations), labelled CS_DEADLINE and CS_ANSWER_ITERATE, consistent (impulses from the
 * projection at that velocity) and certified for what it is (momentum residual reported), and
 * never stored as certified. A deadline passing mid-solve stops inside or between iterations
 * with the last iterate. */
static void deadline_returns_labelled_iterate(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("stack_3.json");
    const cs_options late = {.solver = CS_SOLVER_SAP, .deadline_ns = 1000, .clock_ns = clock_past};
    assert_int_equal(cs_step(f->ws, &f->scene, &late, f->warm, &f->res), CS_NOANSWER);
    assert_int_equal(f->res.primary, CS_DEADLINE);
    assert_int_equal(f->res.answer, CS_ANSWER_NONE);

    // The clock ticks once per read, so a deadline at k passes at the k-th read. The converged
    // answer takes 2 iterations cold: the first k that gives an iterate gives v*'s, the first
    // that leaves one iteration done stops after it, or inside the second, with its iterate.
    int first = 0, one = 0;
    double mid_res = 0;
    for (int k = 1; k < 100 && !one; k++) {
        fake_now = 0;
        const cs_options mid = {.solver = CS_SOLVER_SAP, .deadline_ns = k,
                                .clock_ns = clock_ticking};
        const cs_status st = cs_step(f->ws, &f->scene, &mid, f->warm, &f->res);
        if (st == CS_NOANSWER) {
            // No iterate yet: only before the first one.
            assert_int_equal(first, 0);
            continue;
        }
        assert_int_equal(st, CS_DEADLINE);
        assert_int_equal(f->res.answer, CS_ANSWER_ITERATE);
        assert_int_equal(f->res.carried, 0);
        assert_true(f->res.stats.iterations <= 1);
        if (!first) {
            first = k;
            assert_int_equal(f->res.stats.iterations, 0);
            // Cold: the iterate is v*, and the impulses are the projection's there (all in the
            // cone).
            const double vstar_z = -G * f->scene.dt;
            for (int b = 0; b < f->scene.nb; b++)
                assert_near(f->res.v[6 * b + 2], vstar_z, 1e-15);
            // Ground contacts stick at v*; between boxes moving alike y = 0, on region II's edge.
            for (int i = 0; i < f->scene.nc; i++) {
                if (f->scene.contacts[i].body_b != 0)
                    continue;
                assert_true(f->res.impulse[3 * i] > 0);
                assert_int_equal(f->res.state[i], CS_STATE_STICK);
            }
            assert_near(f->res.cert.cone, 0, 0);
            assert_true(f->res.cert.momentum > 1e-3 * f->res.cert.impulse_scale);
        }
        one = f->res.stats.iterations == 1 ? k : 0;
        mid_res = f->res.cert.momentum;
    }
    assert_true(first > 1 && one > first);
    // No iterate was stored: a failing pivoting step has nothing to carry.
    const cs_options dantzig_late = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = 1000,
                                     .clock_ns = clock_past};
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig_late, f->warm, &f->res), CS_NOANSWER);
    assert_int_equal(f->res.answer, CS_ANSWER_NONE);
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, NULL, &f->res), CS_CONVERGED);
    assert_int_equal(f->res.answer, CS_ANSWER_SOLVER);
    assert_int_equal(f->res.stats.iterations, 2);
    assert_true(f->res.cert.momentum < mid_res);
    t_fixture_free(f);
}

/* Every scene solves with SAP, certified as SAP is certified, cold and then over a streamed
 * second of warm-started ticks (each tick must pass its certificate: SAP's stopping test and the
 * certificate agree). Every scene but the sliding box comes to rest, and there the warm start
 * needs at most one Newton iteration per tick on average. */
static void every_scene_streams_certified(void **state) {
    (void)state;
    const char *scenes[] = {"box_on_plane.json", "box_on_incline_stick.json",
                            "box_on_incline_slide.json", "peg_in_hole.json", "stack_3.json"};
    for (size_t sc = 0; sc < sizeof scenes / sizeof scenes[0]; sc++) {
        t_fixture *f = t_fixture_load(scenes[sc]);
        assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
        assert_true(f->res.cert.momentum <= 1e-6 * f->res.cert.impulse_scale);
        assert_true(f->res.cert.cone <= 1e-12 * f->res.cert.impulse_scale);
        assert_true(f->res.stats.peak_bytes <= cs_workspace_capacity(f->ws));
        const long its = stream(f, 1000);
        if (strcmp(scenes[sc], "box_on_incline_slide.json") != 0)
            assert_true(its <= 1000);
        t_fixture_free(f);
    }
}

/* Both line searches through the scene path reach the same answer. */
static void scene_line_searches_agree(void **state) {
    (void)state;
    const char *scenes[] = {"box_on_incline_stick.json", "peg_in_hole.json", "stack_3.json"};
    for (size_t sc = 0; sc < sizeof scenes / sizeof scenes[0]; sc++) {
        t_fixture *f = t_fixture_load(scenes[sc]);
        const int nc = f->scene.nc, nb = f->scene.nb;
        double *l[2], *v[2];
        uint8_t *state8 = malloc((size_t)nc);
        for (int ls = 0; ls < 2; ls++) {
            const cs_sap_params prm = {.line_search = ls ? CS_SAP_LINE_BACKTRACK
                                                         : CS_SAP_LINE_EXACT,
                                       .rel_tol = 1e-12};
            l[ls] = malloc(3 * (size_t)nc * sizeof(double));
            v[ls] = malloc(6 * (size_t)nb * sizeof(double));
            const size_t mark = cs__ws_mark(f->ws);
            cs_model m;
            assert_int_equal(cs_model_build(&m, f->ws, &f->scene), CS_CONVERGED);
            cs_stats st;
            bool no_iterate;
            assert_int_equal(cs_sap_solve(f->ws, &m, &f->scene, NULL, &prm, NULL, l[ls], v[ls],
                                          state8, &no_iterate, &st),
                             CS_CONVERGED);
            assert_true(st.iterations >= 1);
            cs__ws_release(f->ws, mark);
        }
        double is = 0;
        for (int k = 0; k < 3 * nc; k++)
            is = fmax(is, fabs(l[0][k]));
        // The minimizer v is unique; impulses follow from it with gain up to 1 / R_t = 1e3 / w.
        for (int k = 0; k < 6 * nb; k++)
            assert_near(v[0][k], v[1][k], 1e-10);
        for (int k = 0; k < 3 * nc; k++)
            assert_near(l[0][k], l[1][k], 1e-7 * is);
        for (int ls = 0; ls < 2; ls++)
            free(l[ls]), free(v[ls]);
        free(state8);
        t_fixture_free(f);
    }
}

/* ---- the Newton factor ------------------------------------------------------------------ */

/* cs__sap_chol on symmetric, diagonally dominant matrices whose lower triangle has a band of
 * random width per column, a few far entries (fill-in past the band) and now and then a column
 * that reaches the last row (ends that do not rise with the column): L L^T = H, L zero past
 * each column's end and that end's last entry non-zero, and the solve's residual, for the column
 * factor (metered and not) and the blocked one, whose ends are all n. */
static void chol_keeps_the_envelope(void **state) {
    (void)state;
    static const int sizes[] = {1, 2, 3, 5, 17, 48, 130, 400};
    t_rng rng = t_rng_seed(0xc401);
    for (size_t q = 0; q < sizeof sizes / sizeof *sizes; q++) {
        const int n = sizes[q];
        double *H = calloc((size_t)n * n, sizeof(double)), *L = malloc((size_t)n * n * 8);
        double *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
        int *end = malloc((size_t)n * sizeof(int));
        for (int j = 0; j < n; j++) {
            const int band = t_rng_below(&rng, 6);
            for (int i = j + 1; i < n; i++) {
                const bool far = t_rng_below(&rng, 40) == 0 || (i == n - 1 && j % 7 == 3);
                if (i <= j + band || far)
                    H[(size_t)j * n + i] = t_rng_range(&rng, -1, 1);
            }
        }
        for (int j = 0; j < n; j++) {
            double d = 1;
            for (int i = 0; i < n; i++)
                d += fabs(i > j ? H[(size_t)j * n + i] : H[(size_t)i * n + j]);
            H[(size_t)j * n + j] = d;
            b[j] = t_rng_range(&rng, -1, 1);
        }
        for (int metered = 0; metered < 2; metered++) {
            const cs_options opt = {.deadline_ns = INT64_MAX, .clock_ns = clock_past};
            cs__meter meter = cs__meter_start(&opt);
            memcpy(L, H, (size_t)n * n * sizeof(double));
            assert_int_equal(cs__sap_chol(n, L, end, metered ? &meter : NULL), 0);
            for (int j = 0; j < n; j++) {
                assert_true(end[j] > j && end[j] <= n);
                if (n >= 384 && !metered)
                    assert_int_equal(end[j], n);
                else if (end[j] > j + 1)
                    assert_true(L[(size_t)j * n + end[j] - 1] != 0);
                for (int i = end[j]; i < n; i++)
                    assert_true(L[(size_t)j * n + i] == 0);
            }
            double worst = 0;
            for (int j = 0; j < n; j++)
                for (int i = j; i < n; i++) {
                    double s = 0;
                    for (int k = 0; k <= j; k++)
                        s += L[(size_t)k * n + i] * L[(size_t)k * n + j];
                    worst = fmax(worst, fabs(s - H[(size_t)j * n + i]) / H[(size_t)j * n + j]);
                }
            assert_true(worst <= 1e-14);
            memcpy(x, b, (size_t)n * sizeof(double));
            cs__sap_chol_solve(n, L, end, 1, x, metered ? &meter : NULL);
            for (int i = 0; i < n; i++) {
                double r = -b[i];
                for (int k = 0; k < n; k++)
                    r += (i >= k ? H[(size_t)k * n + i] : H[(size_t)i * n + k]) * x[k];
                assert_true(fabs(r) <= 1e-13 * H[(size_t)i * n + i]);
            }
        }
        free(H), free(L), free(b), free(x), free(end);
    }
}

/* The column Cholesky reads the meter's clock as it works, about once per CS__METER_UNITS
 * multiply-adds: a dense order-200 matrix (n^3 / 6 of them) reads it at least half that often.
 * Counted once per column, it read 200 times: at n in the hundreds a column's stretch is
 * hundreds of us with no look at the deadline. The factor still solves. */
static void chol_reads_the_clock_as_it_works(void **state) {
    (void)state;
    enum { N = 200 };
    static double H[N * N], L[N * N], x[N], b[N];
    static int end[N];
    t_rng rng = t_rng_seed(200);
    for (int j = 0; j < N; j++) {
        for (int i = j; i < N; i++)
            H[j * N + i] = H[i * N + j] = t_rng_range(&rng, -1, 1) + (i == j ? N : 0);
        b[j] = t_rng_range(&rng, -1, 1);
    }
    memcpy(L, H, sizeof H);
    const cs_options opt = {.deadline_ns = INT64_MAX, .clock_ns = t_clock_counting};
    cs__meter meter = cs__meter_start(&opt);
    t_clock_reads = 0;
    assert_int_equal(cs__sap_chol(N, L, end, &meter), 0);
    assert_true(t_clock_reads * 2 * CS__METER_UNITS >= (long)N * N * N / 6);
    memcpy(x, b, sizeof b);
    cs__sap_chol_solve(N, L, end, 1, x, &meter);
    for (int i = 0; i < N; i++) {
        double r = -b[i];
        for (int k = 0; k < N; k++)
            r += H[k * N + i] * x[k];
        assert_true(fabs(r) <= 1e-12 * N);
    }
}

/* Each column's pass over its row reads one entry a column apart (a cache miss at n in the
 * hundreds) and counts as work even where the row is empty: here column 0 reaches the last row,
 * so every column scans its whole row, which holds no update but the diagonal. */
static void chol_counts_its_row_scans(void **state) {
    (void)state;
    enum { N = 400 };
    static double H[N * N];
    static int end[N];
    memset(H, 0, sizeof H);
    for (int j = 0; j < N; j++)
        H[j * N + j] = 2;
    H[N - 1] = H[(N - 1) * N] = 1;
    const cs_options opt = {.deadline_ns = INT64_MAX, .clock_ns = t_clock_counting};
    cs__meter meter = cs__meter_start(&opt);
    t_clock_reads = 0;
    assert_int_equal(cs__sap_chol(N, H, end, &meter), 0);
    // A read per CS__METER_UNITS of scans, each read dropping at most one column's surplus.
    assert_true(t_clock_reads * (CS__METER_UNITS + N) >= (long)N * (N - 1) / 2);
    // L: sqrt 2 on the diagonal but the last, 1 / sqrt 2 below the first.
    assert_near(H[N - 1], 1 / sqrt(2.0), 1e-15);
    assert_near(H[(size_t)(N - 1) * N + N - 1], sqrt(1.5), 1e-15);
    assert_near(H[(size_t)(N - 2) * N + N - 2], sqrt(2.0), 1e-15);
}

/* The partition into islands passes over every contact: at a session's limits (hundreds of
 * contacts on one body) that is tens of microseconds, so it reads the clock as it goes, gives the
 * same islands as unmetered, and stops (false) once the deadline has passed. */
static void partition_reads_the_clock_as_it_works(void **state) {
    (void)state;
    enum { NV = 6, NC = 512 };
    static int a_colptr[NV + 1], a_rowind[NV], j_ptr[NC + 1], j_col[NV * NC];
    for (int j = 0; j < NV; j++)
        a_colptr[j + 1] = j + 1, a_rowind[j] = j;
    for (int c = 0; c < NC; c++) {
        j_ptr[c + 1] = NV * (c + 1);
        for (int k = 0; k < NV; k++)
            j_col[NV * c + k] = k;
    }
    const cs__sap_problem p = {.nv = NV, .nc = NC, .a_colptr = a_colptr, .a_rowind = a_rowind,
                               .j_ptr = j_ptr, .j_col = j_col};
    void *mem0 = malloc(cs__sap_islands_size(NV, NC)), *mem = malloc(cs__sap_islands_size(NV, NC));
    assert_non_null(mem0);
    assert_non_null(mem);
    cs__sap_islands is0, is;
    cs__sap_islands_init(&is0, mem0, NV, NC);
    assert_true(cs__sap_partition(&p, &is0, NULL));
    cs__sap_islands_init(&is, mem, NV, NC);
    const cs_options opt = {.deadline_ns = INT64_MAX, .clock_ns = t_clock_counting};
    cs__meter meter = cs__meter_start(&opt);
    t_clock_reads = 0;
    assert_true(cs__sap_partition(&p, &is, &meter));
    // A union (two finds of a step or two) per contact and dof: at most 512 between reads.
    assert_true(t_clock_reads * 512 >= (long)NC * NV);
    assert_int_equal(is.n, 1);
    assert_int_equal(is.n, is0.n);
    assert_memory_equal(is.con, is0.con, NC * sizeof(int));
    assert_memory_equal(is.dof, is0.dof, NV * sizeof(int));
    // A deadline that passes on the way stops it.
    fake_now = 0;
    const cs_options soon = {.deadline_ns = 3, .clock_ns = clock_ticking};
    meter = cs__meter_start(&soon);
    assert_false(cs__sap_partition(&p, &is, &meter));
    assert_true(meter.passed);
    free(mem0);
    free(mem);
}

/* A steady-state stream allocates nothing and the same input gives bitwise the same output. */
static void deterministic_and_allocation_free(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("stack_3.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
    double first[36];
    memcpy(first, f->res.impulse, sizeof first);
    cs_warmstart_reset(f->warm);
    t_alloc_count_start();
    for (int tick = 0; tick < 10000; tick++) {
        // Alternate cold and warm ticks so both paths are counted.
        if (tick % 2)
            cs_warmstart_reset(f->warm);
        assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
    }
    const long allocations = t_alloc_count_stop();
    if (allocations >= 0)
        assert_int_equal(allocations, 0);
    cs_warmstart_reset(f->warm);
    assert_int_equal(cs_step(f->ws, &f->scene, &sap, f->warm, &f->res), CS_CONVERGED);
    assert_memory_equal(first, f->res.impulse, sizeof first);
    assert_true(f->res.stats.peak_bytes <= cs_workspace_capacity(f->ws));
    t_fixture_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(projection_table),
        cmocka_unit_test(hessian_matches_finite_differences),
        cmocka_unit_test(contact_line_matches_hessian),
        cmocka_unit_test(holonomic_block_law),
        cmocka_unit_test(regularization_from_physics),
        cmocka_unit_test(worked_example_stiction),
        cmocka_unit_test(worked_example_sliding),
        cmocka_unit_test(worked_example_separated),
        cmocka_unit_test(exact_line_search_finds_the_minimizer),
        cmocka_unit_test(line_searches_reach_the_same_optimum),
        cmocka_unit_test(box_on_plane),
        cmocka_unit_test(incline_sticks),
        cmocka_unit_test(incline_slides),
        cmocka_unit_test(compliant_law),
        cmocka_unit_test(frictionless_agrees_with_pivoting),
        cmocka_unit_test(global_particle_analytic),
        cmocka_unit_test(global_agrees_with_scene),
        cmocka_unit_test(global_fem_chain),
        cmocka_unit_test(islands_are_independent),
        cmocka_unit_test(warm_start_streams_at_most_one_iteration),
        cmocka_unit_test(deadline_returns_labelled_iterate),
        cmocka_unit_test(every_scene_streams_certified),
        cmocka_unit_test(scene_line_searches_agree),
        cmocka_unit_test(chol_keeps_the_envelope),
        cmocka_unit_test(chol_reads_the_clock_as_it_works),
        cmocka_unit_test(chol_counts_its_row_scans),
        cmocka_unit_test(partition_reads_the_clock_as_it_works),
        cmocka_unit_test(deterministic_and_allocation_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
