/* SPDX-License-Identifier: MIT */
/* Certificates on hand-made answers whose violations are known in closed form, and the labels. */
#include "solver/certify.h"

#include <math.h>
#include <string.h>

#include "solver/workspace.h"
#include "testlib.h"

static cs_workspace *ws;
static cs_body body = {.id = 1, .mass = 2, .inertia = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                       .quat = {1, 0, 0, 0}};
/* One contact at the COM of a unit-inertia body, normal +z against the world. */
static cs_contact contact = {.id = 1, .body_a = 1, .normal = {0, 0, 1}, .mu = 0.5};
static const cs_scene scene = {.dt = 0.01, .gravity = {0, 0, -10}, .nb = 1, .nc = 1,
                               .bodies = &body, .contacts = &contact};

static int setup(void **state) {
    (void)state;
    ws = cs_workspace_new(&(cs_limits){.max_bodies = 1, .max_contacts = 1, .max_dirs = 64});
    return ws ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    cs_workspace_free(ws);
    return 0;
}

/* The exact resting answer: lambda_n = m g dt, v = 0: every residual zero, label stick. */
static void exact_rest(void **state) {
    (void)state;
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &scene), CS_CONVERGED);
    const double lambda[3] = {2 * 10 * 0.01, 0, 0}, v[6] = {0};
    cs_certificate c;
    uint8_t st;
    assert_int_equal(cs_certify(ws, &m, lambda, v, false, &c, &st), CS_CONVERGED);
    assert_near(c.complementarity, 0, 0);
    assert_near(c.normal_velocity, 0, 0);
    assert_near(c.cone, 0, 0);
    assert_near(c.dissipation, 0, 0);
    assert_near(c.momentum, 0, 1e-17);
    assert_int_equal(st, CS_STATE_STICK);
    assert_true(cs_certificate_is_ok(&c, 0, true));
    cs__ws_release(ws, mark);
}

/* Known violations: too little normal impulse (sinking), too much friction (outside the cone),
 * friction along the slip instead of against it, and momentum not balanced. */
static void known_violations(void **state) {
    (void)state;
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &scene), CS_CONVERGED);
    // v* = (0, 0, -0.1). Answer: lambda = (0.1, 0.08, 0), v = (0.3, 0, -0.05, 0, 0, 0).
    const double lambda[3] = {0.1, 0.08, 0}, v[6] = {0.3, 0, -0.05, 0, 0, 0};
    cs_certificate c;
    uint8_t st;
    assert_int_equal(cs_certify(ws, &m, lambda, v, false, &c, &st), CS_CONVERGED);
    assert_near(c.normal_velocity, 0.05, 1e-15);            // sinks at 5 cm/s
    assert_near(c.complementarity, 0.1 * 0.05, 1e-15);      // lambda_n * |v_n|
    assert_near(c.cone, 0.08 - 0.5 * 0.1, 1e-15);           // |lambda_t| - mu lambda_n
    assert_near(c.dissipation, 0.08 + 0.5 * 0.1, 1e-15);    // lambda_t . x_hat + mu lambda_n
    // M (v - v*) - J^T lambda = (2*0.3 - 0.08, 0, 2*0.05 - 0.1) = (0.52, 0, 0).
    assert_near(c.momentum, 0.52, 1e-15);
    assert_int_equal(st, CS_STATE_SLIDE);
    assert_false(cs_certificate_is_ok(&c, 0, true));
    cs__ws_release(ws, mark);
}

/* Separation: no impulse, the body moves away. */
static void separating_label(void **state) {
    (void)state;
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &scene), CS_CONVERGED);
    const double lambda[3] = {0, 0, 0}, v[6] = {0, 0, -0.1, 0, 0, 0};
    cs_certificate c;
    uint8_t st;
    assert_int_equal(cs_certify(ws, &m, lambda, v, false, &c, &st), CS_CONVERGED);
    assert_int_equal(st, CS_STATE_SEPARATE);
    // ... but into the plane: the certificate flags it and a frictionless check fails too.
    assert_near(c.normal_velocity, 0.1, 1e-15);
    assert_false(cs_certificate_is_ok(&c, 0, false));
    cs__ws_release(ws, mark);
}

/* The pyramid (d = 4: vertices +-t1, +-t2) is a square inscribed in the disc: an impulse that
 * fits the disc can lie outside the square, by a distance known in closed form. */
static void pyramid_is_stricter_than_cone(void **state) {
    (void)state;
    const size_t mark = cs__ws_mark(ws);
    cs_scene sq = scene;
    sq.friction_dirs = 4;
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &sq), CS_CONVERGED);
    const double r = 0.5 * 0.2; // mu lambda_n
    const double lambda[3] = {0.2, 0.6 * r, 0.6 * r}, v[6] = {0, 0, -0.1, 0, 0, 0};
    cs_certificate c;
    uint8_t st;
    assert_int_equal(cs_certify(ws, &m, lambda, v, false, &c, &st), CS_CONVERGED);
    assert_near(c.cone, 0.0, 0.0);
    assert_int_equal(cs_certify(ws, &m, lambda, v, true, &c, &st), CS_CONVERGED);
    assert_near(c.cone, (1.2 - 1) * sqrt(0.5) * r, 1e-15);
    cs__ws_release(ws, mark);
}

/* Brute force over all d edges of the pyramid of radius r, edge k's outward normal at angle
 * (2 k + 1) pi / d and distance r cos(pi / d): how far l lies outside. */
static double brute_outside(int d, double lx, double ly, double r) {
    double h = -INFINITY;
    for (int k = 0; k < d; k++) {
        const double a = (2 * k + 1) * M_PI / d;
        h = fmax(h, cos(a) * lx + sin(a) * ly);
    }
    return h - r * cos(M_PI / d);
}

/* Brute force over all d vertices d_j (angle 2 pi j / d): the support function at t_hat. */
static double brute_support(int d, double tx, double ty) {
    double h = -INFINITY;
    for (int j = 0; j < d; j++)
        h = fmax(h, cos(2 * M_PI * j / d) * tx + sin(2 * M_PI * j / d) * ty);
    return h;
}

/* A test direction: random, or exactly at a vertex angle 2 pi j / d (even k = 2 j) or at an edge
 * normal's angle (odd k), where the nearest vertex or edge changes. */
static double test_angle(t_rng *rng, int d, int trial) {
    const int k = t_rng_below(rng, 2 * d);
    return trial % 3 == 0 ? t_rng_range(rng, -M_PI, M_PI) : k * M_PI / d;
}

/* The pyramid's cone distance and support function against brute force over every edge and
 * vertex, for even d including d = 2 mod 4 (an edge normal on the t2 axis) and the largest d a
 * session may ask for. The contact (normal +z, t1 = x, t2 = y) sits at the body's COM, so the
 * body's velocity is the contact velocity. Points at vertex and edge-normal angles, on the
 * polygon (rho = 1: outside by rounding only) and inside it are included. */
static void pyramid_matches_brute_force(void **state) {
    (void)state;
    static const int dirs[] = {4, 6, 8, 10, 16, 64};
    t_rng rng = t_rng_seed(0xc0de);
    for (size_t q = 0; q < sizeof dirs / sizeof dirs[0]; q++) {
        const int d = dirs[q];
        cs_scene sd = scene;
        sd.friction_dirs = d;
        const size_t mark = cs__ws_mark(ws);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &sd), CS_CONVERGED);
        for (int trial = 0; trial < 600; trial++) {
            const double ln = t_rng_range(&rng, 0.1, 1), r = 0.5 * ln; // mu lambda_n
            // Radius relative to r: inside, on a vertex or edge, or well outside.
            const double rho = trial % 4 == 0 ? 1 : t_rng_range(&rng, 0, 3);
            const double a = test_angle(&rng, d, trial);
            const double lambda[3] = {ln, rho * r * cos(a), rho * r * sin(a)};
            const double want = fmax(0, brute_outside(d, lambda[1], lambda[2], r));
            // Slide along another test direction with no friction impulse: the dissipation gap
            // is then mu lambda_n h(t_hat) alone.
            const double b = test_angle(&rng, d, trial + 1);
            const double v[6] = {cos(b), sin(b), 0, 0, 0, 0};
            const double slide[3] = {ln, 0, 0};
            cs_certificate c;
            uint8_t st;
            assert_int_equal(cs_certify(ws, &m, lambda, v, true, &c, &st), CS_CONVERGED);
            assert_near(c.cone, want, 1e-15);
            assert_int_equal(cs_certify(ws, &m, slide, v, true, &c, &st), CS_CONVERGED);
            assert_int_equal(st, CS_STATE_SLIDE);
            assert_near(c.dissipation, r * brute_support(d, cos(b), sin(b)), 1e-15);
        }
        cs__ws_release(ws, mark);
    }
}

/* The disc's distance |lambda_t| - mu lambda_n keeps its relative accuracy where the sum of
 * squares would overflow or underflow (3-4-5 impulses at 1e+-200). */
static void cone_distance_at_extreme_scales(void **state) {
    (void)state;
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &scene), CS_CONVERGED);
    static const double scales[] = {1e-200, 1e-160, 1, 1e160, 1e200};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        const double s = scales[k], lambda[3] = {s, 3 * s, -4 * s}, v[6] = {0};
        cs_certificate c;
        uint8_t st;
        assert_int_equal(cs_certify(ws, &m, lambda, v, false, &c, &st), CS_CONVERGED);
        assert_near(c.cone, (5 - 0.5) * s, 1e-15 * s);
    }
    cs__ws_release(ws, mark);
}

/* A NaN or an infinity anywhere in the answer makes the certificate fail, with the pyramid or
 * the cone: in a friction impulse, in a normal impulse, or in the velocities (scales that are
 * infinite themselves must not excuse infinite residuals). */
static void nan_or_inf_fails(void **state) {
    (void)state;
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &scene), CS_CONVERGED);
    static const double bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
        for (int where = 0; where < 4; where++) {
            double lambda[3] = {2 * 10 * 0.01, 0, 0}, v[6] = {0};
            if (where < 3)
                lambda[where] = bad[b];
            else
                v[0] = bad[b];
            for (int pyramid = 0; pyramid < 2; pyramid++) {
                cs_certificate c;
                uint8_t st;
                assert_int_equal(cs_certify(ws, &m, lambda, v, pyramid, &c, &st), CS_CONVERGED);
                if (isnan(bad[b]) && (where == 1 || where == 2))
                    assert_true(isnan(c.cone));
                assert_false(cs_certificate_is_ok(&c, 0, true));
                assert_false(cs_certificate_is_ok(&c, 0, false));
            }
        }
    cs__ws_release(ws, mark);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_rest),
        cmocka_unit_test(known_violations),
        cmocka_unit_test(separating_label),
        cmocka_unit_test(pyramid_is_stricter_than_cone),
        cmocka_unit_test(pyramid_matches_brute_force),
        cmocka_unit_test(cone_distance_at_extreme_scales),
        cmocka_unit_test(nan_or_inf_fails),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
