/* SPDX-License-Identifier: MIT */
/* The three Lemke variants (lemke-standard, lemke-structural, lemke) on the analytic scenes: a box
 * on an incline sticks for mu > tan(theta) and slides with friction on the pyramid boundary for
 * mu < tan(theta); frictionless scenes agree with Dantzig's solver; a peg under random wrenches
 * and stacks of 1-5 boxes; every answer is certified against the pyramid. Each test runs once
 * per variant (cmocka prestate = the solver). */
#include "solver/contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_fixture.h"
#include "scene_gen.h"
#include "testlib.h"

#define G 9.81

static const cs_solver variants[] = {CS_SOLVER_LEMKE_STANDARD, CS_SOLVER_LEMKE_STRUCTURAL,
                                     CS_SOLVER_LEMKE};

static cs_options options(void **state) {
    return (cs_options){.solver = *(const cs_solver *)*state};
}

static void total_force(const t_fixture *f, double F[3]) {
    F[0] = F[1] = F[2] = 0;
    for (int i = 0; i < f->scene.nc; i++)
        for (int k = 0; k < 3; k++)
            F[k] += f->res.force[3 * i + k];
}

/* mu = 0.5 > tan(20 deg): the contacts hold the box; total contact force = -m g. */
static void incline_sticks(void **state) {
    const cs_options opt = options(state);
    t_fixture *f = t_fixture_load("box_on_incline_stick.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &opt, NULL, &f->res), CS_CONVERGED);
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
    const cs_options opt = options(state);
    t_fixture *f = t_fixture_load("box_on_incline_slide.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &opt, NULL, &f->res), CS_CONVERGED);
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
    const cs_options opt = options(state);
    const char *scenes[] = {"box_on_plane.json", "box_on_incline_slide.json", "peg_in_hole.json",
                            "stack_3.json"};
    for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++) {
        t_fixture *f = t_fixture_load(scenes[k]);
        for (int i = 0; i < f->scene.nc; i++)
            f->scene.contacts[i].mu = 0;
        assert_int_equal(cs_step(f->ws, &f->scene, &opt, NULL, &f->res), CS_CONVERGED);
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
    const cs_options opt = options(state);
    t_fixture *f = t_fixture_load("peg_in_hole.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &opt, NULL, &f->res), CS_CONVERGED);
    t_assert_certified(&f->res, true);
    t_fixture_free(f);
    f = t_fixture_load("stack_3.json");
    assert_int_equal(cs_step(f->ws, &f->scene, &opt, NULL, &f->res), CS_CONVERGED);
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

/* The peg under random wrenches (seeded) and stacks of 1-5 boxes, in every block-rotation variant
 * (4 to 36 contacts): certified on the pyramid. */
static void generated_scenes_certified(void **state) {
    const cs_options opt = options(state);
    static t_gen_scene g;
    const cs_limits lim = {.max_bodies = 5, .max_contacts = 36, .max_dirs = 8};
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = malloc(cs_result_size(&lim));
    cs_result r;
    cs_result_init(&r, mem, &lim);
    for (int seed = 1; seed <= 20; seed++) {
        t_gen_peg(&g, 16, 0.25, 8, (uint64_t)seed);
        assert_int_equal(cs_step(ws, &g.s, &opt, NULL, &r), CS_CONVERGED);
        t_assert_certified(&r, true);
    }
    for (int boxes = 1; boxes <= 5; boxes++)
        for (int variant = 0; variant < 1 << (boxes - 1); variant += boxes > 3 ? 5 : 1) {
            t_gen_stack(&g, boxes, variant, 0.3, 8, (uint64_t)(100 + variant));
            assert_int_equal(cs_step(ws, &g.s, &opt, NULL, &r), CS_CONVERGED);
            t_assert_certified(&r, true);
        }
    free(mem);
    cs_workspace_free(ws);
}

/* Pegs of the benchmark (bench_lemke.c's problems: mu drawn in [0.2, 0.3] from the seed) whose
 * LCP is so degenerate that lemke-standard once ended in a false secondary ray (n = 16, 24) or
 * cycled to the pivot cap (16, 32) and fell back: certified, unperturbed and cold. */
static void degenerate_pegs_certified(void **state) {
    const cs_options opt = options(state);
    static const struct {
        int n;
        uint64_t seed;
    } pegs[] = {{16, 0x10d23f8}, {24, 0x10d27fa}, {16, 0x10d2444}, {32, 0x10d2c01}};
    static t_gen_scene g;
    const cs_limits lim = {.max_bodies = 1, .max_contacts = 32, .max_dirs = 8};
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = malloc(cs_result_size(&lim));
    cs_result r;
    cs_result_init(&r, mem, &lim);
    for (size_t k = 0; k < sizeof pegs / sizeof pegs[0]; k++) {
        t_rng rng = t_rng_seed(pegs[k].seed);
        t_gen_peg(&g, pegs[k].n, t_rng_range(&rng, 0.2, 0.3), 8, pegs[k].seed);
        const cs_status st = cs_step(ws, &g.s, &opt, NULL, &r);
        if (st != CS_CONVERGED)
            fprintf(stderr, "peg %d seed 0x%llx: %s (solver: %s)\n", pegs[k].n,
                    (unsigned long long)pegs[k].seed, cs_status_name(st),
                    cs_status_name(r.primary));
        assert_int_equal(st, CS_CONVERGED);
        t_assert_certified(&r, true);
    }
    free(mem);
    cs_workspace_free(ws);
}

/* The benchmark's round pegs (bench_lemke.c, round-peg-16 and round-peg-32: 60 wrenches each, mu
 * drawn in [0.2, 0.3] from the seed), solved cold by lemke: certified, in at most 15 pivots at 16
 * contacts and 16 at 32, the frictionless solve's steps included (measured 15 and 15; 16 and 20
 * while a Lemke run solved it). Repairing the frictionless crash guess directly took up to 18
 * and 25: friction unloads contacts of the guess, and Lemke let them go one at a time while the
 * contacts taking over turned their pyramid direction by direction; the block step on the
 * guess's normal pairs (lemke_structural.c, crash_step) lets them go at once. A bound on work,
 * not on time. */
static void round_pegs_crash_step(void **state) {
    const cs_options opt = options(state);
    static t_gen_scene g;
    const cs_limits lim = {.max_bodies = 1, .max_contacts = 32, .max_dirs = 8};
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = malloc(cs_result_size(&lim));
    cs_result r;
    cs_result_init(&r, mem, &lim);
    int most[2] = {0, 0};
    for (int t = 0; t < 120; t++) {
        const int n = t < 60 ? 16 : 32, point = n / 8 - 1; // bench_lemke's points 8, 16, 24, 32
        const uint64_t seed = 0x10d2005ull + 3 * 1000003ull + 1009ull * (uint64_t)point +
                              (uint64_t)(t % 60);
        t_rng rng = t_rng_seed(seed);
        t_gen_round_peg(&g, n, t_rng_range(&rng, 0.2, 0.3), 8, seed);
        assert_int_equal(cs_step(ws, &g.s, &opt, NULL, &r), CS_CONVERGED);
        t_assert_certified(&r, true);
        most[n / 32] = r.stats.pivots > most[n / 32] ? r.stats.pivots : most[n / 32];
    }
    print_message("# round pegs: most pivots %d at 16 contacts, %d at 32\n", most[0], most[1]);
    assert_in_range(most[0], 1, 15);
    assert_in_range(most[1], 1, 16);
    free(mem);
    cs_workspace_free(ws);
}

/* Bodies with masses and inertias spread over decades, the contacts' Delassus blocks between ~0.1
 * and ~1e9 (a scene of fuzz_step, written out). Unscaled, lemke's runs cycled (2820 pivots in
 * all) to an uncertified answer; in units where each block is about 1 (lemke_structural.c,
 * SCALING) it takes 46. lemke-standard (106 pivots) solves it as it is; lemke-structural still
 * ends on a ray and is not run on it. Certified, in at most 4 N pivots (N = the LCP's order). */
static const double mixed_body[3][17] = {
    // mass, inertia (isotropic), pos, v, w, quat
    {8.1558110361652734, 7.3344854236185661e-05, 0.33043411917296095, 0.91476310368505387,
     0.090775921263446913, -0.51157396810864419, -1.8424048218509195, 0.35111009384298475,
     -1.4746013580529489, -1.2510261692225528, -1.835080491340505, 0.24936179783576429,
     -0.48239467292103688, 0.25092415757007508, -0.80134333494780452},
    {0.0017234265027820128, 3.043086234882331e-09, -0.99206530861371789, -0.9175402456702525,
     -0.45455100328068976, 0.18155184252689383, -0.58194857709620806, -0.94157320515754939,
     0.35111009384298475, 0.30740825513084591, -1.8187838559548333, -0.45268570270077285,
     -0.62009938647142127, 0.57563393688194497, 0.2814213498970316},
    {0.05841669263524997, 7.3515132657586107e-07, 0.25749599450675209, 0.87145799954222936,
     0.11213855191882205, -1.655634393835355, 0.4779430838483254, 1.0246433203631646,
     -1.653376058594644, -0.12436102845807584, -0.51157396810864419, -0.53031170900822389,
     -0.41868045925186981, 0.51945352452845339, -0.52311012242584976},
};
static const double mixed_contact[7][11] = {
    // body_a, body_b, point, normal, distance, mu
    {3, 2, -0.06218051422903792, 0.11213855191882205, 0.51232166018158232, 0.41618355893843473,
     0.77065657207936267, -0.48257610092111336, -0.008799420157167925, 0.91938658731975276},
    {2, 1, 0.85009536888685444, 0.062149996185244527, 0.099382009613183886,
     -0.19629196690686956, 0.1439695660351033, 0.96991867070569193, -0.0093948271915770196,
     1.2893339436942093},
    {3, 2, -0.38106355382619972, 0.87426565957122149, 0.14766155489433119, -0.34015414245928949,
     -0.6996805295404227, -0.62828521863069409, -0.0076964980544747081, 1.3761501487754635},
    {3, 1, 0.7976653696498055, 0.33696498054474699, -0.78771648737315936, -0.33047680924231743,
     -0.83116613060277822, -0.44715538897772689, -0.00092179751277943027, 0.5231631952391852},
    {2, 1, -0.4274509803921569, -0.4274509803921569, 0.0077973601892118438, 0.85578661472893136,
     -0.36580682747236676, -0.36580682747236676, -0.004218966964217594, 1.5},
    {2, 1, -0.4274509803921569, -0.4274509803921569, -0.4274509803921569, -0.57735026918962584,
     -0.57735026918962584, -0.57735026918962584, -0.0042745098039215683, 0.42941176470588233},
    {2, 1, -0.4274509803921569, -0.4274509803921569, -0.4274509803921569, -0.57735026918962584,
     -0.57735026918962584, -0.57735026918962584, -0.0042745098039215683, 0.42941176470588233},
};
static const double joint_body[17] = {
    0.0012713939943735215, 7.3639219757766442e-07, 0.21867704280155631, -0.99163805600061039,
    -0.79607843137254908, -1.8431372549019609, -1.9304798962386511, -1.5921568627450982,
    -1.8745098039215686, -0.42026398107881291, -1.5921568627450982, 0.70710678118654746,
    -0.49199319760711108, -0.49199319760711108, 0.12603724456151955};
static const double joint_contact[8][11] = {
    {1, 0, 1, 0.99301136797131306, -0.79607843137254908, -0.57735026918962573,
     -0.57735026918962573, -0.57735026918962573, -0.0079607843137254903, 0.15294117647058825},
    {1, 0, -0.79607843137254908, -0.79607843137254908, -0.79607843137254908,
     -0.57735026918962573, -0.57735026918962573, -0.57735026918962573, -0.0079607843137254903,
     0.15294117647058825},
    {1, 0, -0.79607843137254908, -0.79607843137254908, -0.79607843137254908,
     -0.57735026918962573, -0.57735026918962573, -0.57735026918962573, -0.0079607843137254903,
     0.15294117647058825},
    {1, 0, -0.79607843137254908, -0.79607843137254908, -0.79607843137254908, -0.6145466602247881,
     0.76913696678247734, 0.17538736766143959, -0.0092718394750896469, 1.0244907301441977},
    {1, 0, 0.33388265812161433, -0.85098039215686272, -0.85098039215686272,
     -0.57735026918962584, -0.57735026918962584, -0.57735026918962584, -0.0085098039215686268,
     0.11176470588235295},
    {1, 0, -0.85098039215686272, -0.85098039215686272, -0.85098039215686272,
     -0.57735026918962584, -0.57735026918962584, -0.57735026918962584, -0.0085098039215686268,
     0.11176470588235295},
    {1, 0, -0.05381857022964831, 0.43483634699015794, 0.90310521095597762, 0.43334119868211507,
     -0.75911078313892189, 0.48576354787793646, -0.0032411688410772868, 1.3214007782101167},
    {1, 0, -0.91625848783093, 0.017532616159304126, -0.47716487373159377, 0.87389743390371832,
     0.34036460463098106, 0.34706657996829993, -0.0038188754100862143, 0.67495994506752122},
};

static cs_body mixed_make_body(uint32_t id, const double *b) {
    cs_body o = {.id = id, .mass = b[0]};
    o.inertia[0] = o.inertia[4] = o.inertia[8] = b[1];
    memcpy(o.pos, b + 2, sizeof o.pos);
    memcpy(o.v, b + 5, sizeof o.v);
    memcpy(o.w, b + 8, sizeof o.w);
    memcpy(o.quat, b + 11, sizeof o.quat);
    return o;
}

static cs_contact mixed_make_contact(uint64_t id, const double *c) {
    cs_contact k = {.id = id, .body_a = (uint32_t)c[0], .body_b = (uint32_t)c[1],
                    .distance = c[8], .mu = c[9]};
    memcpy(k.point, c + 2, sizeof k.point);
    memcpy(k.normal, c + 5, sizeof k.normal);
    return k;
}

/* Steps s cold without a deadline: converged, the solver's own answer, certified on the pyramid,
 * in at most 4 N pivots. */
static void assert_mixed_scene_certified(const cs_scene *s, const cs_options *opt) {
    const cs_limits lim = {.max_bodies = 3, .max_contacts = 8, .max_joints = 1, .max_dirs = 8};
    char err[256];
    assert_int_equal(cs_scene_validate(s, &lim, err, sizeof err), 0);
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = malloc(cs_result_size(&lim));
    assert_non_null(ws);
    assert_non_null(mem);
    cs_result r;
    cs_result_init(&r, mem, &lim);
    const cs_status st = cs_step(ws, s, opt, NULL, &r);
    print_message("# %s: %s, %d pivots\n", cs_solver_name(opt->solver), cs_status_name(r.primary),
                  r.stats.pivots);
    assert_int_equal(st, CS_CONVERGED);
    assert_int_equal(r.answer, CS_ANSWER_SOLVER);
    t_assert_certified(&r, true);
    assert_true(r.stats.pivots <= 4 * s->nc * (2 + s->friction_dirs));
    free(mem);
    cs_workspace_free(ws);
}

static void mixed_scales_certified(void **state) {
    const cs_options opt = options(state);
    cs_body bodies[3];
    cs_contact contacts[7];
    for (int i = 0; i < 3; i++)
        bodies[i] = mixed_make_body((uint32_t)i + 1, mixed_body[i]);
    const uint64_t ids[7] = {769, 770, 259, 516, 261, 518, 263};
    for (int i = 0; i < 7; i++)
        contacts[i] = mixed_make_contact(ids[i], mixed_contact[i]);
    const cs_scene s = {.dt = 1e-3, .gravity = {0, 0, -9.81}, .friction_dirs = 8, .nb = 3,
                        .nc = 7, .bodies = bodies, .contacts = contacts};
    assert_mixed_scene_certified(&s, &opt);
}

/* One light body on a slider joint, 8 contacts (also from fuzz_step): lemke solves it as the
 * explicit LCP of the reduced Delassus matrix with its rows scaled (lemke_contact.c, SCALED).
 * Unscaled, it pivoted to the cap (2504) to an answer that failed its certificate; scaled, it
 * takes 6 pivots. */
static void mixed_scales_joint_certified(void **state) {
    const cs_options opt = options(state);
    cs_body body = mixed_make_body(1, joint_body);
    cs_contact contacts[8];
    const uint64_t ids[8] = {769, 514, 515, 516, 773, 774, 775, 776};
    for (int i = 0; i < 8; i++)
        contacts[i] = mixed_make_contact(ids[i], joint_contact[i]);
    cs_joint joint = {.id = 1, .kind = CS_JOINT_SLIDER, .body_a = 1, .body_b = 0,
                      .anchor = {-0.94622720683604178, 0.49336995498588543, -0.15391775387197681},
                      .axis = {-0.46310602460333716, -0.800698187753482, -0.38002002855689426}};
    const cs_scene s = {.dt = 1e-3, .friction_dirs = 4, .nb = 1, .nc = 8, .nj = 1,
                        .bodies = &body, .contacts = contacts, .joints = &joint};
    assert_mixed_scene_certified(&s, &opt);
}

int main(void) {
    const char *names[] = {"incline_sticks", "incline_slides", "frictionless_agrees_with_dantzig",
                           "peg_and_stack_certified", "generated_scenes_certified",
                           "degenerate_pegs_certified"};
    const CMUnitTestFunction fns[] = {incline_sticks, incline_slides,
                                      frictionless_agrees_with_dantzig, peg_and_stack_certified,
                                      generated_scenes_certified, degenerate_pegs_certified};
    enum { NT = sizeof fns / sizeof fns[0], NV = sizeof variants / sizeof variants[0] };
    static char label[NT * NV][96];
    struct CMUnitTest tests[NT * NV + 4];
    for (int v = 0; v < NV; v++)
        for (int t = 0; t < NT; t++) {
            snprintf(label[v * NT + t], sizeof label[0], "%s/%s", cs_solver_name(variants[v]),
                     names[t]);
            tests[v * NT + t] = (struct CMUnitTest){.name = label[v * NT + t], .test_func = fns[t],
                                                    .initial_state = (void *)&variants[v]};
        }
    // Not lemke-structural (see mixed_scales_certified).
    tests[NT * NV] = (struct CMUnitTest){.name = "lemke-standard/mixed_scales_certified",
                                         .test_func = mixed_scales_certified,
                                         .initial_state = (void *)&variants[0]};
    tests[NT * NV + 1] = (struct CMUnitTest){.name = "lemke/mixed_scales_certified",
                                             .test_func = mixed_scales_certified,
                                             .initial_state = (void *)&variants[2]};
    tests[NT * NV + 2] = (struct CMUnitTest){.name = "lemke/mixed_scales_joint_certified",
                                             .test_func = mixed_scales_joint_certified,
                                             .initial_state = (void *)&variants[2]};
    tests[NT * NV + 3] = (struct CMUnitTest){.name = "lemke/round_pegs_crash_step",
                                             .test_func = round_pegs_crash_step,
                                             .initial_state = (void *)&variants[2]};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
