/* SPDX-License-Identifier: MIT */
/* cs_step on the scene files: the physics of each analytic case with the frictionless Dantzig
 * solver, certificates, the fallback and deadline rules, determinism, and no allocation in a
 * steady-state step. */
#include "solver/contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene_fixture.h"
#include "alloc_count.h"
#include "testlib.h"

#define G 9.81


static const cs_options dantzig = {.solver = CS_SOLVER_DANTZIG};

/* Sum of the world-frame contact forces acting on body id from all its contacts. */
static void net_force_on(const t_fixture *f, uint32_t id, double out[3]) {
    out[0] = out[1] = out[2] = 0;
    for (int i = 0; i < f->scene.nc; i++) {
        const cs_contact *c = &f->scene.contacts[i];
        const double sign = c->body_a == id ? 1 : c->body_b == id ? -1 : 0;
        for (int k = 0; k < 3; k++)
            out[k] += sign * f->res.force[3 * i + k];
    }
}

/* Box at rest on a plane: normal forces sum to m g, the box stays at rest. */
static void box_on_plane(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    const double mg = f->scene.bodies[0].mass * G;
    double F[3];
    net_force_on(f, 1, F);
    assert_near(F[2], mg, 1e-6 * mg);
    assert_near(F[0], 0.0, 1e-9 * mg);
    assert_near(F[1], 0.0, 1e-9 * mg);
    for (int k = 0; k < 6; k++)
        assert_near(f->res.v[k], 0.0, 1e-12);
    t_assert_certified(&f->res, false);
    for (int i = 0; i < f->scene.nc; i++)
        assert_true(f->res.impulse[3 * i] >= 0);
    t_fixture_free(f);
}

/* Frictionless box on a 20 degree incline: no normal velocity, it accelerates at g sin(theta)
 * down the slope, and the normal force is m g cos(theta). Dantzig ignores mu, so the
 * certificate reports the violated maximal-dissipation law rather than hiding it. */
static void box_on_incline_frictionless(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_incline_slide.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    const double th = 20.0 * M_PI / 180, m = f->scene.bodies[0].mass, dt = f->scene.dt;
    const double *n = f->scene.contacts[0].normal;
    const double vstar[3] = {0, 0, -G * dt};
    const double vn = vstar[0] * n[0] + vstar[1] * n[1] + vstar[2] * n[2];
    for (int k = 0; k < 3; k++)
        assert_near(f->res.v[k], vstar[k] - vn * n[k], 1e-12);
    assert_near(hypot(hypot(f->res.v[0], f->res.v[1]), f->res.v[2]), G * sin(th) * dt, 1e-12);
    for (int k = 3; k < 6; k++)
        assert_near(f->res.v[k], 0.0, 1e-12);
    double F[3];
    net_force_on(f, 1, F);
    assert_near(hypot(hypot(F[0], F[1]), F[2]), m * G * cos(th), 1e-6 * m * G);
    for (int i = 0; i < f->scene.nc; i++)
        if (f->res.impulse[3 * i] > 0)
            assert_int_equal(f->res.state[i], CS_STATE_SLIDE);
    t_assert_certified(&f->res, false);
    // Every loaded contact slides with zero friction: the violation is mu times its load.
    double lmax = 0;
    for (int i = 0; i < f->scene.nc; i++)
        lmax = fmax(lmax, f->res.impulse[3 * i]);
    assert_near(f->res.cert.dissipation, f->scene.contacts[0].mu * lmax, 1e-12);
    t_fixture_free(f);
}

/* Peg in a square hole: the walls block every motion but sliding along the hole's axis, so the
 * post-step velocity is the free velocity's z component alone. */
static void peg_in_hole(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("peg_in_hole.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    const cs_body *B = &f->scene.bodies[0];
    const double vz = f->scene.dt * (B->f[2] / B->mass - G);
    const double want[6] = {0, 0, vz, 0, 0, 0};
    for (int k = 0; k < 6; k++)
        assert_near(f->res.v[k], want[k], 1e-12);
    // The contact forces balance the applied lateral force.
    double F[3];
    net_force_on(f, 1, F);
    assert_near(F[0], -B->f[0], 1e-6);
    assert_near(F[1], -B->f[1], 1e-6);
    assert_near(F[2], 0.0, 1e-9);
    t_assert_certified(&f->res, false);
    t_fixture_free(f);
}

/* Stack of three unit-mass boxes: each interface carries the weight of the boxes above it. */
static void stack_of_three(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("stack_3.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    for (int level = 0; level < 3; level++) {
        double load = 0;
        for (int i = 0; i < f->scene.nc; i++)
            if (f->scene.contacts[i].body_b == (uint32_t)level)
                load += f->res.force[3 * i + 2];
        assert_near(load, (3 - level) * 1.0 * G, 1e-6 * G);
    }
    for (int k = 0; k < 18; k++)
        assert_near(f->res.v[k], 0.0, 1e-12);
    t_assert_certified(&f->res, false);
    t_fixture_free(f);
}

static int64_t clock_past(void) {
    return 2000;
}

/* Past the deadline the answer is the previous tick's impulses for persisting ids and zero for
 * new ones, labelled CS_DEADLINE, with its own certificate. */
static void deadline_falls_back_to_previous(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    double prev[12];
    memcpy(prev, f->res.impulse, sizeof prev);
    // Contact 4 becomes a new contact: it must get zero.
    f->scene.contacts[3].id = 99;
    const cs_options late = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = 1000,
                             .clock_ns = clock_past};
    assert_int_equal(cs_step(f->ws, &f->scene, &late, f->warm, &f->res), CS_DEADLINE);
    assert_int_equal(f->res.primary, CS_DEADLINE);
    for (int k = 0; k < 9; k++)
        assert_near(f->res.impulse[k], prev[k], 0.0);
    for (int k = 9; k < 12; k++)
        assert_near(f->res.impulse[k], 0.0, 0.0);
    assert_int_equal(f->res.contact_id[3], 99);
    t_fixture_free(f);
}

/* A solver kind cs_step does not run (DEFAULT, which the caller must resolve) is a labelled
 * fallback, never a silent substitute. */
static void unavailable_solver_is_fallback(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    const cs_options unresolved = {.solver = CS_SOLVER_DEFAULT};
    assert_int_equal(cs_step(f->ws, &f->scene, &unresolved, NULL, &f->res), CS_FALLBACK);
    assert_int_equal(f->res.primary, CS_EINPUT);
    for (int k = 0; k < 12; k++)
        assert_near(f->res.impulse[k], 0.0, 0.0);
    // With zero impulses the box falls into the plane: the certificate says so.
    assert_true(f->res.cert.normal_velocity > 0);
    t_fixture_free(f);
}

/* The same input twice gives bitwise-identical output, and a steady-state step allocates
 * nothing. */
static void deterministic_and_allocation_free(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("stack_3.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    double first[36];
    memcpy(first, f->res.impulse, sizeof first);
    t_alloc_count_start();
    for (int tick = 0; tick < 10000; tick++)
        assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    const long allocations = t_alloc_count_stop();
    if (allocations >= 0)
        assert_int_equal(allocations, 0);
    assert_memory_equal(first, f->res.impulse, sizeof first);
    assert_true(f->res.stats.peak_bytes <= cs_workspace_capacity(f->ws));
    t_fixture_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_on_plane),
        cmocka_unit_test(box_on_incline_frictionless),
        cmocka_unit_test(peg_in_hole),
        cmocka_unit_test(stack_of_three),
        cmocka_unit_test(deadline_falls_back_to_previous),
        cmocka_unit_test(unavailable_solver_is_fallback),
        cmocka_unit_test(deterministic_and_allocation_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
