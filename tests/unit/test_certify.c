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
    ws = cs_workspace_new(&(cs_limits){.max_bodies = 1, .max_contacts = 1, .max_dirs = 8});
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_rest),
        cmocka_unit_test(known_violations),
        cmocka_unit_test(separating_label),
        cmocka_unit_test(pyramid_is_stricter_than_cone),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
