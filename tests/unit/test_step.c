/* SPDX-License-Identifier: MIT */
/* cs_step on the scene files: the physics of each analytic case with the frictionless Dantzig
 * solver, certificates, the honest fallback rule (what a result's answer is, and that only
 * certified answers are ever carried), the deadline checks of every solver, determinism, and no
 * allocation in a steady-state step. */
#include "solver/contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene_fixture.h"
#include "scene_gen.h"
#include "alloc_count.h"
#include "solver/certify.h"
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

/* Frictionless box on a 20 degree incline (the scene's mu set to 0): no normal velocity, it
 * accelerates at g sin(theta) down the slope, and the normal force is m g cos(theta). */
static void box_on_incline_frictionless(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_incline_slide.json");
    for (int i = 0; i < f->scene.nc; i++)
        f->scene.contacts[i].mu = 0;
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
    for (int i = 0; i < f->scene.nc; i++)
        f->scene.contacts[i].mu = 0; // frictionless: the walls leave the axial motion free
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

static const cs_options late_dantzig = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = 1000,
                                        .clock_ns = clock_past};

/* A session whose first tick hits the deadline has nothing certified to carry: zero forces,
 * CS_ANSWER_NONE, and a negative status the daemon reports as failed. */
static void first_tick_at_deadline_has_no_answer(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &late_dantzig, f->warm, &f->res), CS_NOANSWER);
    assert_true(f->res.status < 0);
    assert_int_equal(f->res.primary, CS_DEADLINE);
    assert_int_equal(f->res.answer, CS_ANSWER_NONE);
    assert_int_equal(f->res.carried, 0);
    for (int k = 0; k < 3 * f->scene.nc; k++) {
        assert_near(f->res.impulse[k], 0.0, 0.0);
        assert_near(f->res.force[k], 0.0, 0.0);
    }
    // Its certificate says what zero forces mean: the box falls into the plane.
    assert_true(f->res.cert.normal_velocity > 0);
    assert_string_equal(cs_status_name(CS_NOANSWER), "no-answer");
    assert_string_equal(cs_answer_name(CS_ANSWER_NONE), "none");
    assert_string_equal(cs_answer_name(CS_ANSWER_LAST_CERTIFIED), "last-certified");
    t_fixture_free(f);
}

/* After one certified tick, a deadline tick returns exactly the previous impulses (and forces),
 * carried for every contact; a contact with a new id gets zero and is not counted. Deadline
 * ticks store nothing, so the carried answer stays the certified one. For each pivoting
 * solver. */
static void deadline_carries_last_certified(void **state) {
    (void)state;
    const cs_solver pivoting[] = {CS_SOLVER_DANTZIG, CS_SOLVER_LEMKE, CS_SOLVER_LEMKE_STRUCTURAL,
                                  CS_SOLVER_LEMKE_STANDARD};
    for (size_t s = 0; s < sizeof pivoting / sizeof pivoting[0]; s++) {
        t_fixture *f = t_fixture_load("peg_in_hole.json");
        const int nc = f->scene.nc;
        const cs_options opt = {.solver = pivoting[s]};
        const cs_options late = {.solver = pivoting[s], .deadline_ns = 1000,
                                 .clock_ns = clock_past};
        assert_int_equal(cs_step(f->ws, &f->scene, &opt, f->warm, &f->res), CS_CONVERGED);
        assert_int_equal(f->res.answer, CS_ANSWER_SOLVER);
        assert_int_equal(f->res.carried, 0);
        double *prev = malloc(2 * 3 * (size_t)nc * sizeof(double));
        assert_non_null(prev);
        memcpy(prev, f->res.impulse, 3 * (size_t)nc * sizeof(double));
        memcpy(prev + 3 * nc, f->res.force, 3 * (size_t)nc * sizeof(double));
        for (int tick = 0; tick < 2; tick++) {
            assert_int_equal(cs_step(f->ws, &f->scene, &late, f->warm, &f->res), CS_DEADLINE);
            assert_int_equal(f->res.primary, CS_DEADLINE);
            assert_int_equal(f->res.answer, CS_ANSWER_LAST_CERTIFIED);
            assert_int_equal(f->res.carried, nc);
            assert_memory_equal(f->res.impulse, prev, 3 * (size_t)nc * sizeof(double));
            assert_memory_equal(f->res.force, prev + 3 * nc, 3 * (size_t)nc * sizeof(double));
        }
        // Contact 5 becomes a new contact: zero for it, the others unchanged.
        f->scene.contacts[5].id = 9999;
        assert_int_equal(cs_step(f->ws, &f->scene, &late, f->warm, &f->res), CS_DEADLINE);
        assert_int_equal(f->res.answer, CS_ANSWER_LAST_CERTIFIED);
        assert_int_equal(f->res.carried, nc - 1);
        assert_int_equal(f->res.contact_id[5], 9999);
        for (int i = 0; i < nc; i++)
            for (int k = 0; k < 3; k++)
                assert_near(f->res.impulse[3 * i + k], i == 5 ? 0.0 : prev[3 * i + k], 0.0);
        free(prev);
        t_fixture_free(f);
    }
}

static int64_t jump_reads, jump_at;
static int64_t jump_clock(void) {
    return ++jump_reads >= jump_at ? 2 : 0;
}

/* A solver whose iterates are answers (SAP, ncp) answers its iterate at the deadline, labelled
 * CS_ANSWER_ITERATE with its certificate, and never stores it: a later failed tick still
 * carries the last certified answer, not the iterate. push: a force sliding the top box (mu
 * 0.5, in m g), so that ncp, warm-started from dantzig's answer on the pyramid, iterates. */
static void iterate_is_never_carried(cs_solver solver, double push) {
    t_fixture *f = t_fixture_load("stack_3.json");
    const int nc = f->scene.nc;
    // Across a face of the 8-sided pyramid, where dantzig's friction falls short of the cone's.
    f->scene.bodies[2].f[0] = push * 9.81 * cos(M_PI / 8);
    f->scene.bodies[2].f[1] = push * 9.81 * sin(M_PI / 8);
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    double certified[36];
    memcpy(certified, f->res.impulse, sizeof certified);
    // The deadline passes at the solver's first clock read that finds an iterate (earlier
    // reads, a late start or its set-up, carry the certified answer and store nothing).
    const cs_options late = {.solver = solver, .deadline_ns = 1, .clock_ns = jump_clock};
    for (jump_at = 1;; jump_at++) {
        jump_reads = 0;
        assert_int_equal(cs_step(f->ws, &f->scene, &late, f->warm, &f->res), CS_DEADLINE);
        if (f->res.answer == CS_ANSWER_ITERATE)
            break;
        assert_int_equal(f->res.answer, CS_ANSWER_LAST_CERTIFIED);
        assert_memory_equal(f->res.impulse, certified, sizeof certified);
    }
    assert_int_equal(f->res.primary, CS_DEADLINE);
    assert_int_equal(f->res.answer, CS_ANSWER_ITERATE);
    assert_int_equal(f->res.carried, 0);
    // The iterate is an answer of its own, not the certified one.
    assert_true(memcmp(f->res.impulse, certified, sizeof certified) != 0);
    // ncp's iterate has its own certificate: each contact's impulse in the cone, the velocities
    // it gives the bodies off (a certificate carried over from a certified answer is rounding).
    const cs_certificate *c = &f->res.cert;
    print_message("# %s iterate at clock read %lld: cone %.2g, normal velocity %.2g m/s\n",
                  cs_solver_name(solver), (long long)jump_at, c->cone, c->normal_velocity);
    if (solver == CS_SOLVER_NCP) {
        assert_true(c->cone <= 1e-12 * c->impulse_scale);
        assert_true(c->normal_velocity > 1e-6 * c->velocity_scale);
    }
    assert_int_equal(cs_step(f->ws, &f->scene, &late_dantzig, f->warm, &f->res), CS_DEADLINE);
    assert_int_equal(f->res.answer, CS_ANSWER_LAST_CERTIFIED);
    assert_int_equal(f->res.carried, nc);
    assert_memory_equal(f->res.impulse, certified, sizeof certified);
    t_fixture_free(f);
}

static void sap_iterate_is_never_carried(void **state) {
    (void)state;
    iterate_is_never_carried(CS_SOLVER_SAP, 0);
}

static void ncp_iterate_is_never_carried(void **state) {
    (void)state;
    iterate_is_never_carried(CS_SOLVER_NCP, 3);
}

static int64_t ticks;
/* A clock that moves on 1000 at each read: time counts the reads. */
static int64_t ticking_clock(void) {
    return 1000 * ++ticks;
}

/* A session keeps from its solver's budget what its last step did after the solver (here one
 * read of the ticking clock: 1000), so the certificate runs before the deadline, not after it.
 * The deadline passes after the solver's last check, during the certificate (before the
 * solver's closing timestamp, read R): a session with nothing kept yet certifies and sends the
 * solver's answer, certified since its whole certificate ran, and returns late; the next step,
 * keeping 1000, finds the deadline passed at the solver's last check and carries that answer,
 * labelled. */
static void certificate_time_is_kept_from_the_budget(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("peg_in_hole.json");
    const int nc = f->scene.nc;
    // R: the reads of an undisturbed step up to its solver's closing timestamp (no warm start:
    // nothing kept, and no read after it), plus the read a step with a warm start takes first.
    const cs_options far = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = INT64_MAX,
                            .clock_ns = ticking_clock};
    ticks = 0;
    assert_int_equal(cs_step(f->ws, &f->scene, &far, NULL, &f->res), CS_CONVERGED);
    const int64_t R = ticks + 1;
    // Start, late-start check, the solver's checks (one at least), closing timestamp.
    assert_true(R >= 4);
    const cs_options opt = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = 1000 * R - 500,
                            .clock_ns = ticking_clock};
    ticks = 0;
    assert_int_equal(cs_step(f->ws, &f->scene, &opt, f->warm, &f->res), CS_CONVERGED);
    assert_int_equal(f->res.primary, CS_CONVERGED);
    assert_int_equal(f->res.answer, CS_ANSWER_SOLVER);
    t_assert_certified(&f->res, false);
    double certified[3 * 16];
    assert_true(nc <= 16);
    memcpy(certified, f->res.impulse, 3 * (size_t)nc * sizeof(double));
    ticks = 0;
    assert_int_equal(cs_step(f->ws, &f->scene, &opt, f->warm, &f->res), CS_DEADLINE);
    assert_int_equal(f->res.primary, CS_DEADLINE);
    assert_int_equal(f->res.answer, CS_ANSWER_LAST_CERTIFIED);
    assert_int_equal(f->res.carried, nc);
    assert_memory_equal(f->res.impulse, certified, 3 * (size_t)nc * sizeof(double));
    t_fixture_free(f);
}

static int64_t stall_at;
/* The ticking clock with a host stall of 1 s (1e9) before its read stall_at. */
static int64_t stalling_clock(void) {
    ticks++;
    return 1000 * ticks + (ticks >= stall_at ? 1000000000 : 0);
}

/* A stall after the solver is kept at most doubled, a kept time takes at most half of what a
 * step has left (the solver still runs), and a deadline long passed stays passed whatever is
 * kept. */
static void stalled_certificate_is_not_kept(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("peg_in_hole.json");
    const cs_options far = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = INT64_MAX,
                            .clock_ns = ticking_clock};
    ticks = 0;
    assert_int_equal(cs_step(f->ws, &f->scene, &far, NULL, &f->res), CS_CONVERGED);
    const int64_t R = ticks + 1; // the solver's closing timestamp, after the timed step's start
    // The first time kept: the step's own read after R comes after the stall, kept whole.
    const cs_options stalled = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = INT64_MAX,
                                .clock_ns = stalling_clock};
    ticks = 0;
    stall_at = R + 1;
    assert_int_equal(cs_step(f->ws, &f->scene, &stalled, f->warm, &f->res), CS_CONVERGED);
    // A budget far beyond the solve's but shorter than the stall: the stall is kept as half of
    // what the step has left, so the solver still runs; then its own tail (one read) is kept.
    const cs_options opt = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = 1000 * R + 100000,
                            .clock_ns = ticking_clock};
    ticks = 0;
    assert_int_equal(cs_step(f->ws, &f->scene, &opt, f->warm, &f->res), CS_CONVERGED);
    assert_int_equal(f->res.answer, CS_ANSWER_SOLVER);
    // Now a stall after a solve kept 1000: 2000 is kept, which leaves the solver its time.
    ticks = 0;
    assert_int_equal(cs_step(f->ws, &f->scene, &stalled, f->warm, &f->res), CS_CONVERGED);
    const cs_options tight = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = 1000 * R + 1500,
                              .clock_ns = ticking_clock};
    ticks = 0;
    assert_int_equal(cs_step(f->ws, &f->scene, &tight, f->warm, &f->res), CS_CONVERGED);
    assert_int_equal(f->res.answer, CS_ANSWER_SOLVER);
    // Kept: 1000. A deadline long passed (INT64_MIN) does not wrap round to a far one.
    const cs_options past = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = INT64_MIN,
                             .clock_ns = ticking_clock};
    assert_int_equal(cs_step(f->ws, &f->scene, &past, f->warm, &f->res), CS_DEADLINE);
    assert_int_equal(f->res.stats.pivots, 0);
    assert_int_equal(f->res.answer, CS_ANSWER_LAST_CERTIFIED);
    t_fixture_free(f);
}

/* An answer that fails its certificate is never labelled converged or the solver's: with a
 * tolerance no rounding meets, every pivoting solver's result is carried (or none), and it says
 * so; whatever the tolerance, a result labelled the solver's passes its certificate. */
static void uncertified_is_never_converged(void **state) {
    (void)state;
    const cs_solver pivoting[] = {CS_SOLVER_DANTZIG, CS_SOLVER_LEMKE, CS_SOLVER_LEMKE_STRUCTURAL,
                                  CS_SOLVER_LEMKE_STANDARD};
    const char *files[] = {"peg_in_hole.json", "stack_3.json", "box_on_incline_slide.json"};
    const double tols[] = {0, 1e-9, 1e-13, 1e-300};
    int refused = 0;
    for (size_t s = 0; s < sizeof pivoting / sizeof pivoting[0]; s++)
        for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
            t_fixture *f = t_fixture_load(files[fi]);
            // A certified answer to carry first (default tolerance).
            const cs_options first = {.solver = pivoting[s]};
            assert_int_equal(cs_step(f->ws, &f->scene, &first, f->warm, &f->res), CS_CONVERGED);
            for (size_t t = 0; t < sizeof tols / sizeof tols[0]; t++) {
                const cs_options opt = {.solver = pivoting[s], .cert_tol = tols[t]};
                const cs_status st = cs_step(f->ws, &f->scene, &opt, f->warm, &f->res);
                const bool solver = st == CS_CONVERGED || st == CS_MAXITER;
                assert_int_equal(solver, f->res.answer == CS_ANSWER_SOLVER);
                if (solver) {
                    assert_true(cs_certificate_is_ok(&f->res.cert, tols[t],
                                                     pivoting[s] != CS_SOLVER_DANTZIG));
                    continue;
                }
                refused++;
                assert_true(f->res.primary < 0);
                assert_int_equal(st, CS_FALLBACK);
                assert_int_equal(f->res.answer, CS_ANSWER_LAST_CERTIFIED);
                assert_int_equal(f->res.carried, f->scene.nc);
            }
            t_fixture_free(f);
        }
    print_message("# %d uncertified answers carried the last certified one\n", refused);
    // The 1e-300 tolerance is below rounding for every solver and scene.
    assert_true(refused >= (int)(sizeof pivoting / sizeof pivoting[0] * 3));
}

/* Nothing non-finite leaves a step. A caller that skips validation can ask for dt = 5e-324 after
 * a normal tick: carried to that tick, the last certified impulse over dt is infinite, and the
 * step says it has no answer instead of sending it. */
static void non_finite_answer_is_no_answer(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    f->scene.dt = 5e-324;
    assert_int_equal(cs_step(f->ws, &f->scene, &late_dantzig, f->warm, &f->res), CS_NOANSWER);
    assert_int_equal(f->res.answer, CS_ANSWER_NONE);
    for (int k = 0; k < 3 * f->scene.nc; k++)
        assert_true(f->res.force[k] == 0 && f->res.impulse[k] == 0);
    // Validation refuses such a dt, naming it.
    char err[128];
    assert_int_equal(cs_scene_validate(&f->scene, &f->lim, err, sizeof err), CS_EINPUT);
    assert_true(strncmp(err, "dt: must be in [1e-07, 1] s", 27) == 0);
    f->scene.dt = 1e300;
    assert_int_equal(cs_scene_validate(&f->scene, &f->lim, err, sizeof err), CS_EINPUT);
    t_fixture_free(f);
}

/* A solver kind cs_step does not run (DEFAULT, which the caller must resolve) is refused as the
 * caller's error, never a silent substitute: zero impulses, no answer. */
static void unavailable_solver_is_refused(void **state) {
    (void)state;
    t_fixture *f = t_fixture_load("box_on_plane.json");
    const cs_options unresolved = {.solver = CS_SOLVER_DEFAULT};
    assert_int_equal(cs_step(f->ws, &f->scene, &unresolved, NULL, &f->res), CS_EINPUT);
    assert_int_equal(f->res.primary, CS_EINPUT);
    assert_int_equal(f->res.answer, CS_ANSWER_NONE);
    for (int k = 0; k < 12; k++)
        assert_near(f->res.impulse[k], 0.0, 0.0);
    t_fixture_free(f);
}

/* A clock that reads 0 (before the deadline at 1) until its k-th read, then 2 ever after. */

/* Every deadline check of every solver is on an answer path: for each k, the clock jumps past
 * the deadline at its k-th read (the step's own check, the solver's checks before each pivot or
 * iteration, and the metered checks inside matrix builds, factorizations and B^-1 updates), and
 * the step must return the labelled deadline answer with the clock read only once more, the
 * step's closing read (twice when read k is the step's opening timestamp, which is no check:
 * the solver's first check comes next). So no check is ignored and none lets the solver carry
 * on. Scenes big enough that the metered checks fire (tens to hundreds of reads per solve). */
static void every_check_stops_every_solver(void **state) {
    (void)state;
    static t_gen_scene g;
    const struct {
        cs_solver s;
        int kind, n, d; /* kind 0: peg of n contacts, 1: clutter of n bodies */
        int reads;      /* fewer clock reads than this: the scene is too small to test */
    } cases[] = {
        /* at rest: the frictionless pass answers from the contacts that touch, in one
         * factorization (a handful of metered reads, however large the bin) */
        {CS_SOLVER_DANTZIG, 1, 40, 8, 8},
        {CS_SOLVER_DANTZIG, 0, 32, 8, 20}, /* pushed: the frictional pass */
        {CS_SOLVER_LEMKE_STANDARD, 0, 8, 4, 20},
        {CS_SOLVER_LEMKE_STRUCTURAL, 0, 16, 8, 20},
        {CS_SOLVER_LEMKE, 1, 10, 8, 20},
        {CS_SOLVER_SAP, 1, 40, 8, 20},
        {CS_SOLVER_NCP, 0, 16, 8, 20},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (cases[c].kind == 0) {
            t_gen_peg(&g, cases[c].n, 0.25, cases[c].d, 21);
        } else {
            t_gen_clutter(&g, cases[c].n, 22);
            g.s.friction_dirs = cases[c].d;
        }
        const cs_limits lim = {.max_bodies = g.s.nb, .max_contacts = g.s.nc,
                               .max_dirs = cases[c].d, .solvers = 1u << cases[c].s};
        cs_workspace *ws = cs_workspace_new(&lim);
        void *mem = malloc(cs_result_size(&lim));
        assert_non_null(ws);
        assert_non_null(mem);
        cs_result r;
        cs_result_init(&r, mem, &lim);
        const cs_options opt = {.solver = cases[c].s, .deadline_ns = 1, .clock_ns = jump_clock};
        // The undisturbed solve: its reads, the last being the step's closing one.
        jump_reads = 0;
        jump_at = INT64_MAX;
        assert_int_equal(cs_step(ws, &g.s, &opt, NULL, &r), CS_CONVERGED);
        const int64_t reads = jump_reads;
        print_message("# %s, %d contacts: %lld clock reads\n", cs_solver_name(cases[c].s),
                      g.s.nc, (long long)reads);
        assert_true(reads > cases[c].reads);
        // Read 1 is the step's late-start check and read 2 its timestamp.
        const int64_t stamp = 2;
        bool iterated = false;
        const bool iterates = cases[c].s == CS_SOLVER_SAP || cases[c].s == CS_SOLVER_NCP;
        for (int64_t k = 1; k < reads; k++) {
            jump_reads = 0;
            jump_at = k;
            const cs_status st = cs_step(ws, &g.s, &opt, NULL, &r);
            if (r.primary != CS_DEADLINE || jump_reads > k + 1 + (k == stamp))
                fail_msg("%s: deadline at read %lld of %lld: %s (primary %s), %lld reads",
                         cs_solver_name(cases[c].s), (long long)k, (long long)reads,
                         cs_status_name(st), cs_status_name(r.primary), (long long)jump_reads);
            if (iterates && st == CS_DEADLINE) {
                // SAP and ncp answer with their iterate once they have one: from some read on,
                // always.
                assert_int_equal(r.answer, CS_ANSWER_ITERATE);
                iterated = true;
            } else {
                // Before the first iterate (a late start, or while it sets up) there is none.
                assert_false(iterated);
                // Cold (no warm start): nothing to carry.
                assert_int_equal(st, CS_NOANSWER);
                assert_int_equal(r.answer, CS_ANSWER_NONE);
                for (int i = 0; i < 3 * g.s.nc; i++)
                    assert_near(r.impulse[i], 0.0, 0.0);
            }
        }
        // A late start has no iterate, the last check before the end has one.
        assert_true(!iterates || iterated);
        free(mem);
        cs_workspace_free(ws);
    }
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
        cmocka_unit_test(first_tick_at_deadline_has_no_answer),
        cmocka_unit_test(deadline_carries_last_certified),
        cmocka_unit_test(sap_iterate_is_never_carried),
        cmocka_unit_test(ncp_iterate_is_never_carried),
        cmocka_unit_test(certificate_time_is_kept_from_the_budget),
        cmocka_unit_test(stalled_certificate_is_not_kept),
        cmocka_unit_test(uncertified_is_never_converged),
        cmocka_unit_test(unavailable_solver_is_refused),
        cmocka_unit_test(non_finite_answer_is_no_answer),
        cmocka_unit_test(every_check_stops_every_solver),
        cmocka_unit_test(deterministic_and_allocation_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
