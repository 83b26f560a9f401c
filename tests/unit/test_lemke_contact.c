/* SPDX-License-Identifier: MIT */
/* lemke-standard on the analytic scenes: a box on an incline sticks for mu > tan(theta) and
 * slides with friction on the pyramid boundary for mu < tan(theta); frictionless scenes agree
 * with Dantzig's solver; every answer is certified against the pyramid. */
#include "solver/contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene_fixture.h"
#include "testlib.h"

#define G 9.81

static const cs_options standard = {.solver = CS_SOLVER_LEMKE_STANDARD};

static void total_force(const t_fixture *f, double F[3]) {
    F[0] = F[1] = F[2] = 0;
    for (int i = 0; i < f->scene.nc; i++)
        for (int k = 0; k < 3; k++)
            F[k] += f->res.force[3 * i + k];
}

/* mu = 0.5 > tan(20 deg): the contacts hold the box; total contact force = -m g. */
static void incline_sticks(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_incline_stick.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &standard, NULL, &f->res), CS_CONVERGED);
    const double mg = f->scene.bodies[0].mass * G;
    double F[3];
    total_force(f, F);
    assert_near(F[0], 0.0, 1e-9 * mg);
    assert_near(F[1], 0.0, 1e-9 * mg);
    assert_near(F[2], mg, 1e-9 * mg);
    for (int k = 0; k < 6; k++)
        assert_near(f->res.v[k], 0.0, 1e-12);
    for (int i = 0; i < f->scene.nc; i++)
        assert_true(f->res.state[i] != CS_STATE_SLIDE);
    t_assert_certified(&f->res, true);
    t_fixture_free(f);
}

/* mu = 0.2 < tan(20 deg): the box slides downhill at (g sin - mu g cos) dt; the friction force is
 * mu times the normal force (the downhill direction is a pyramid vertex), pointing uphill. */
static void incline_slides(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_incline_slide.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &standard, NULL, &f->res), CS_CONVERGED);
    const double th = 20.0 * M_PI / 180, mu = 0.2, m = f->scene.bodies[0].mass;
    const double dt = f->scene.dt;
    const double *n = f->scene.contacts[0].normal;
    const double up[3] = {cos(th), 0, sin(th)}; // uphill, in the incline's surface
    double F[3];
    total_force(f, F);
    const double fn = F[0] * n[0] + F[1] * n[1] + F[2] * n[2];
    const double ft = F[0] * up[0] + F[1] * up[1] + F[2] * up[2];
    assert_near(fn, m * G * cos(th), 1e-9 * m * G);
    assert_near(ft, mu * fn, 1e-9 * m * G);
    const double speed = (G * sin(th) - mu * G * cos(th)) * dt;
    for (int k = 0; k < 3; k++)
        assert_near(f->res.v[k], -speed * up[k], 1e-12);
    for (int i = 0; i < f->scene.nc; i++)
        if (f->res.impulse[3 * i] > 0)
            assert_int_equal(f->res.state[i], CS_STATE_SLIDE);
    t_assert_certified(&f->res, true);
    t_fixture_free(f);
}

/* With mu = 0 the pyramid LCP is the frictionless one: post-step velocities (unique, unlike the
 * impulses on redundant contacts) agree with Dantzig's to rounding. */
static void frictionless_agrees_with_dantzig(void **state) {
    (void)state;
    const char *scenes[] = {"box_on_plane.json", "box_on_incline_slide.json", "peg_in_hole.json",
                            "stack_3.json"};
    for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++) {
        t_fixture *f = t_fixture_load(scenes[k]);
        for (int i = 0; i < f->scene.nc; i++)
            f->scene.contacts[i].mu = 0;
        assert_int_equal(cs_step(f->ws, &f->scene, &standard, NULL, &f->res), CS_CONVERGED);
        double v[36];
        memcpy(v, f->res.v, 6 * (size_t)f->scene.nb * sizeof(double));
        const cs_options dz = {.solver = CS_SOLVER_DANTZIG};
        assert_int_equal(cs_step(f->ws, &f->scene, &dz, NULL, &f->res), CS_CONVERGED);
        for (int j = 0; j < 6 * f->scene.nb; j++)
            assert_near(v[j], f->res.v[j], 1e-12);
        t_fixture_free(f);
    }
}

/* Peg and stack with friction: certified answers; the stack is at rest and each interface
 * carries the weight above it. */
static void peg_and_stack_certified(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("peg_in_hole.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &standard, NULL, &f->res), CS_CONVERGED);
    t_assert_certified(&f->res, true);
    t_fixture_free(f);
    f = t_fixture_load("stack_3.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &standard, NULL, &f->res), CS_CONVERGED);
    t_assert_certified(&f->res, true);
    for (int level = 0; level < 3; level++) {
        double load = 0;
        for (int i = 0; i < f->scene.nc; i++)
            if (f->scene.contacts[i].body_b == (uint32_t)level)
                load += f->res.force[3 * i + 2];
        assert_near(load, (3 - level) * G, 1e-9 * G);
    }
    for (int k = 0; k < 18; k++)
        assert_near(f->res.v[k], 0.0, 1e-12);
    t_fixture_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(incline_sticks),
        cmocka_unit_test(incline_slides),
        cmocka_unit_test(frictionless_agrees_with_dantzig),
        cmocka_unit_test(peg_and_stack_certified),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
