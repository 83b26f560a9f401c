/* SPDX-License-Identifier: MIT */
/* The session workspace and warm start: sized for the solvers a session declares (not for every
 * solver), allocating exactly what their _size() functions say, and a solver the session did not
 * declare refused by validation and by cs_step rather than run out of memory. */
#include "solver/contact.h"

#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "scene_fixture.h"
#include "scene_gen.h"
#include "testlib.h"

static const cs_solver solvers[] = {CS_SOLVER_DANTZIG, CS_SOLVER_LEMKE,
                                    CS_SOLVER_LEMKE_STRUCTURAL, CS_SOLVER_LEMKE_STANDARD,
                                    CS_SOLVER_SAP};
enum { NSOLVERS = sizeof solvers / sizeof solvers[0] };

static unsigned only(cs_solver s) {
    return 1u << s;
}

/* 0 allows every available solver and never the unresolved default; a mask allows its own. */
static void limits_allow_follows_the_mask(void **state) {
    (void)state;
    const cs_limits all = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8};
    assert_false(cs_limits_allow(&all, CS_SOLVER_DEFAULT));
    for (int k = 0; k < NSOLVERS; k++)
        assert_true(cs_limits_allow(&all, solvers[k]));
    const cs_limits two = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8,
                           .solvers = only(CS_SOLVER_LEMKE) | only(CS_SOLVER_DANTZIG)};
    for (int k = 0; k < NSOLVERS; k++)
        assert_int_equal(cs_limits_allow(&two, solvers[k]),
                         solvers[k] == CS_SOLVER_LEMKE || solvers[k] == CS_SOLVER_DANTZIG);
    assert_false(cs_limits_allow(&two, CS_SOLVER_DEFAULT));
}

/* A lemke-only session of 4 bodies, 16 contacts and 8 directions costs tens of KiB, not the
 * hundreds lemke-standard's explicit matrix would add; at the daemon's largest limits the gap is
 * megabytes against hundreds of megabytes. */
static void lemke_only_workspace_is_small(void **state) {
    (void)state;
    cs_limits lim = {.max_bodies = 4, .max_contacts = 16, .max_dirs = 8};
    const size_t all = cs_workspace_size(&lim);
    lim.solvers = only(CS_SOLVER_LEMKE);
    const size_t lemke = cs_workspace_size(&lim);
    print_message("# 4/16/8: lemke %zu bytes, every solver %zu bytes\n", lemke, all);
    assert_true(lemke > 0 && lemke < 256 * 1024);
    assert_true(6 * lemke < all);

    cs_limits big = {.max_bodies = 64, .max_contacts = 256, .max_dirs = 16,
                     .solvers = only(CS_SOLVER_LEMKE)};
    const size_t big_lemke = cs_workspace_size(&big);
    big.solvers = only(CS_SOLVER_LEMKE_STANDARD);
    const size_t big_standard = cs_workspace_size(&big);
    big.solvers = 0;
    print_message("# 64/256/16: lemke %zu bytes, lemke-standard %zu bytes, every solver %zu\n",
                  big_lemke, big_standard, cs_workspace_size(&big));
    assert_true(big_lemke < 16u << 20);
    assert_true(50 * big_lemke < big_standard);
    assert_int_equal(cs_workspace_size(&big), big_standard);
}

/* Every mask's size is the largest of its solvers' alone (the solvers share the scratch). */
static void size_is_the_largest_declared(void **state) {
    (void)state;
    const cs_limits base = {.max_bodies = 3, .max_contacts = 12, .max_dirs = 8};
    size_t alone[NSOLVERS];
    for (int k = 0; k < NSOLVERS; k++) {
        cs_limits lim = base;
        lim.solvers = only(solvers[k]);
        alone[k] = cs_workspace_size(&lim);
        assert_true(alone[k] > 0);
    }
    for (unsigned mask = 1; mask < 1u << NSOLVERS; mask++) {
        cs_limits lim = base;
        size_t want = 0;
        for (int k = 0; k < NSOLVERS; k++)
            if (mask & 1u << k) {
                lim.solvers |= only(solvers[k]);
                want = alone[k] > want ? alone[k] : want;
            }
        assert_int_equal(cs_workspace_size(&lim), want);
    }
}

/* cs_workspace_new and cs_warmstart_new each make one allocation of exactly the size the
 * _size() functions report (counted by the interposed allocator). */
static void allocations_are_what_size_says(void **state) {
    (void)state;
    const cs_limits lims[] = {
        {.max_bodies = 4, .max_contacts = 16, .max_dirs = 8, .solvers = only(CS_SOLVER_LEMKE)},
        {.max_bodies = 1, .max_contacts = 32, .max_dirs = 8},
        {.max_bodies = 7, .max_contacts = 0, .max_dirs = 4, .solvers = only(CS_SOLVER_SAP)},
        {.max_bodies = 5, .max_contacts = 33, .max_dirs = 16,
         .solvers = only(CS_SOLVER_DANTZIG) | only(CS_SOLVER_SAP)},
    };
    for (size_t k = 0; k < sizeof lims / sizeof lims[0]; k++) {
        t_alloc_count_start();
        cs_workspace *ws = cs_workspace_new(&lims[k]);
        const long n_ws = t_alloc_count_stop();
        const size_t bytes_ws = t_alloc_count_bytes();
        t_alloc_count_start();
        cs_warmstart *w = cs_warmstart_new(&lims[k]);
        const long n_warm = t_alloc_count_stop();
        const size_t bytes_warm = t_alloc_count_bytes();
        assert_non_null(ws);
        assert_non_null(w);
        if (n_ws >= 0) {
            assert_int_equal(n_ws, 1);
            assert_int_equal(bytes_ws, cs_workspace_size(&lims[k]));
            assert_int_equal(n_warm, 1);
            assert_int_equal(bytes_warm, cs_warmstart_size(&lims[k]));
        }
        // The stack is what is left after the struct: most of the block.
        assert_true(cs_workspace_capacity(ws) < cs_workspace_size(&lims[k]));
        assert_true(cs_workspace_capacity(ws) + 256 >= cs_workspace_size(&lims[k]));
        cs_warmstart_free(w);
        cs_workspace_free(ws);
    }
}

/* Limits out of range, or declaring a solver this build does not have, give no workspace. */
static void bad_limits_have_no_size(void **state) {
    (void)state;
    const cs_limits bad[] = {
        {.max_bodies = 0, .max_contacts = 4, .max_dirs = 8},
        {.max_bodies = 1, .max_contacts = -1, .max_dirs = 8},
        {.max_bodies = 1, .max_contacts = 4, .max_dirs = 65},
        {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8, .solvers = only(CS_SOLVER_DEFAULT)},
        {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8, .solvers = 1u << CS_SOLVER_COUNT},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(cs_workspace_size(&bad[k]), 0);
        assert_null(cs_workspace_new(&bad[k]));
    }
}

/* One solve of s on sc in a workspace sized for sc's own limits (d directions) and s alone: it
 * must not run out (the primary outcome is never CS_ENOSPACE) and must give its own answer.
 * tight: sc uses the d the workspace is sized for, so the solve needs at least half of it (a
 * workspace sized for another solver as well would be mostly idle). */
static void solve_alone(cs_solver s, const cs_scene *sc, int d, bool tight, const char *what) {
    const cs_limits lim = {.max_bodies = sc->nb, .max_contacts = sc->nc, .max_dirs = d,
                           .solvers = only(s)};
    cs_workspace *ws = cs_workspace_new(&lim);
    void *mem = malloc(cs_result_size(&lim));
    assert_non_null(ws);
    assert_non_null(mem);
    cs_result r;
    cs_result_init(&r, mem, &lim);
    const cs_options opt = {.solver = s};
    const cs_status st = cs_step(ws, sc, &opt, NULL, &r);
    if (r.primary == CS_ENOSPACE || r.answer != CS_ANSWER_SOLVER)
        fail_msg("%s with %s alone: %s (primary %s), peak %zu of %zu", what, cs_solver_name(s),
                 cs_status_name(st), cs_status_name(r.primary), r.stats.peak_bytes,
                 cs_workspace_capacity(ws));
    print_message("# %-17s %-22s peak %9zu of %9zu (%.0f %%)\n", cs_solver_name(s), what,
                  r.stats.peak_bytes, cs_workspace_capacity(ws),
                  100.0 * r.stats.peak_bytes / cs_workspace_capacity(ws));
    if (tight)
        assert_true(2 * r.stats.peak_bytes >= cs_workspace_capacity(ws));
    free(mem);
    cs_workspace_free(ws);
}

/* Each solver alone in its mask solves the scene files and generated scenes (a peg of 32
 * contacts, stacks, random scenes, clutter) within the workspace sized for it, and uses much of
 * it: the sizing follows the declared solver. */
static void each_solver_runs_in_its_own_workspace(void **state) {
    (void)state;
    const char *files[] = {"box_on_plane.json", "box_on_incline_stick.json",
                           "box_on_incline_slide.json", "peg_in_hole.json", "stack_3.json"};
    static t_gen_scene g;
    for (int k = 0; k < NSOLVERS; k++) {
        for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
            t_fixture *fx = t_fixture_load_for(files[f], only(solvers[k]));
            solve_alone(solvers[k], &fx->scene, 16, false, files[f]);
            t_fixture_free(fx);
        }
        t_gen_peg(&g, 32, 0.25, 8, 11);
        solve_alone(solvers[k], &g.s, 8, true, "peg 32");
        t_gen_stack(&g, 4, 5, 0.3, 8, 12);
        solve_alone(solvers[k], &g.s, 8, true, "stack 4/5");
        t_gen_random(&g, 3, 12, 8, 13);
        solve_alone(solvers[k], &g.s, 8, true, "random 3/12");
        // At rest: dantzig answers it from its frictionless pass (no contact slides), which
        // needs a fraction of what the frictional one, the sizing's worst case, takes.
        t_gen_clutter(&g, 10, 14);
        solve_alone(solvers[k], &g.s, 8, solvers[k] != CS_SOLVER_DANTZIG, "clutter 10");
    }
}

/* A scene asking for a solver the session did not declare is refused by validation, naming the
 * field and the declared solvers; cs_step refuses it too (zero forces, no answer) instead of
 * running out of the workspace. */
static void undeclared_solver_is_refused(void **state) {
    (void)state;
    t_fixture *f =
        t_fixture_load_for("box_on_plane.json", only(CS_SOLVER_LEMKE) | only(CS_SOLVER_DANTZIG));
    char err[160];
    f->scene.solver = CS_SOLVER_SAP;
    assert_int_equal(cs_scene_validate(&f->scene, &f->lim, err, sizeof err), CS_ENOSPACE);
    assert_string_equal(err, "solver: 'sap' was not declared for this session "
                             "(declared: dantzig, lemke)");
    f->scene.solver = CS_SOLVER_LEMKE_STANDARD;
    assert_int_equal(cs_scene_validate(&f->scene, &f->lim, err, sizeof err), CS_ENOSPACE);
    assert_non_null(strstr(err, "'lemke-standard'"));
    f->scene.solver = CS_SOLVER_DEFAULT;
    assert_int_equal(cs_scene_validate(&f->scene, &f->lim, err, sizeof err), 0);
    f->scene.solver = CS_SOLVER_DANTZIG;
    assert_int_equal(cs_scene_validate(&f->scene, &f->lim, err, sizeof err), 0);

    // cs_step: a certified answer first, so that a refusal visibly carries nothing.
    const cs_options dantzig = {.solver = CS_SOLVER_DANTZIG};
    assert_int_equal(cs_step(f->ws, &f->scene, &dantzig, f->warm, &f->res), CS_CONVERGED);
    const cs_solver refused[] = {CS_SOLVER_SAP, CS_SOLVER_LEMKE_STANDARD,
                                 CS_SOLVER_LEMKE_STRUCTURAL};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        const cs_options opt = {.solver = refused[k]};
        assert_int_equal(cs_step(f->ws, &f->scene, &opt, f->warm, &f->res), CS_ENOSPACE);
        assert_int_equal(f->res.primary, CS_ENOSPACE);
        assert_int_equal(f->res.answer, CS_ANSWER_NONE);
        assert_int_equal(f->res.nc, f->scene.nc);
        for (int i = 0; i < 3 * f->scene.nc; i++) {
            assert_near(f->res.impulse[i], 0.0, 0.0);
            assert_near(f->res.force[i], 0.0, 0.0);
        }
    }
    // The unresolved default is the caller's error, not a space problem.
    const cs_options unresolved = {.solver = CS_SOLVER_DEFAULT};
    assert_int_equal(cs_step(f->ws, &f->scene, &unresolved, f->warm, &f->res), CS_EINPUT);
    assert_int_equal(f->res.answer, CS_ANSWER_NONE);
    t_fixture_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_allow_follows_the_mask),
        cmocka_unit_test(lemke_only_workspace_is_small),
        cmocka_unit_test(size_is_the_largest_declared),
        cmocka_unit_test(allocations_are_what_size_says),
        cmocka_unit_test(bad_limits_have_no_size),
        cmocka_unit_test(each_solver_runs_in_its_own_workspace),
        cmocka_unit_test(undeclared_solver_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
