/* SPDX-License-Identifier: MIT */
/* The solver table (solver/solvers.h): one row per cs_solver value at its index, names unique and
 * round-tripping, every available solver complete, the flags consistent with what the
 * certificate and the warm start do with them, and each row's friction set and warm-start kind
 * true to what its solver does on a sliding box. A solver a session did not declare is refused. */
#include "solver/solvers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_gen.h"
#include "solver/certify.h"
#include "solver/workspace.h"
#include "testlib.h"

/* Every cs_solver value has its row at its index; nothing answers beyond the enum. */
static void every_value_has_its_row(void **state) {
    (void)state;
    for (int s = 0; s < CS_SOLVER_COUNT; s++) {
        const cs__solver_desc *d = cs__solver_row((cs_solver)s);
        assert_non_null(d);
        assert_int_equal(d->solver, s);
        assert_non_null(cs_solver_name((cs_solver)s));
    }
    assert_null(cs__solver_row(CS_SOLVER_COUNT));
    assert_null(cs__solver_row((cs_solver)-1));
    assert_null(cs_solver_name(CS_SOLVER_COUNT));
    assert_string_equal(cs_solver_name(CS_SOLVER_DEFAULT), "default");
    assert_false(cs_solver_is_available(CS_SOLVER_DEFAULT));
}

/* Names are distinct, non-empty, lower-case words and parse back to their value. */
static void names_are_unique_and_round_trip(void **state) {
    (void)state;
    for (int s = 0; s < CS_SOLVER_COUNT; s++) {
        const char *name = cs_solver_name((cs_solver)s);
        assert_true(name[0] != '\0');
        for (const char *c = name; *c; c++)
            assert_true((*c >= 'a' && *c <= 'z') || *c == '-');
        cs_solver back = CS_SOLVER_COUNT;
        assert_int_equal(cs_solver_from_name(name, &back), 0);
        assert_int_equal(back, s);
        for (int t = s + 1; t < CS_SOLVER_COUNT; t++)
            assert_true(strcmp(name, cs_solver_name((cs_solver)t)) != 0);
    }
    cs_solver untouched = CS_SOLVER_SAP;
    assert_int_equal(cs_solver_from_name("Lemke", &untouched), -1);
    assert_int_equal(cs_solver_from_name("", &untouched), -1);
    assert_int_equal(cs_solver_from_name(NULL, &untouched), -1);
    assert_int_equal(untouched, CS_SOLVER_SAP);
}

/* An available solver has a size and a run function, and a warm-up only if it runs; the masks
 * say the same as the rows. */
static void available_rows_are_complete(void **state) {
    (void)state;
    const cs_limits lim = {.max_bodies = 3, .max_contacts = 8, .max_dirs = 8};
    unsigned available = 0, named = 0;
    for (int s = CS_SOLVER_DEFAULT + 1; s < CS_SOLVER_COUNT; s++) {
        const cs__solver_desc *d = cs__solver_row((cs_solver)s);
        named |= 1u << s;
        assert_int_equal(cs_solver_is_available((cs_solver)s), d->run != NULL);
        assert_int_equal(d->size != NULL, d->run != NULL);
        assert_true(d->warm_up == NULL || d->run != NULL);
        if (d->run) {
            available |= 1u << s;
            assert_true(d->size(&lim) > 0);
        }
    }
    assert_int_equal(cs_solver_mask(false), named);
    assert_int_equal(cs_solver_mask(true), available);
    assert_true(available != 0);
    assert_int_equal(cs_limits_mask(&lim), available);
}

/* What the step does with a row needs: a regularized certificate judges the exact cone; the
 * iterates sent at the deadline are the cone solvers' (each a point of their own problem; a
 * pivoting solver's basis on the way is no answer); Lemke basis words belong to a pyramid; a
 * Delassus matrix of r rows per contact is in the solver's declared size (W [r nc x r nc] and the
 * scratch forming it). */
static void flags_fit_the_certificate(void **state) {
    (void)state;
    const cs_limits lims[] = {{.max_bodies = 1, .max_contacts = 1, .max_dirs = 4},
                              {.max_bodies = 5, .max_contacts = 24, .max_dirs = 8},
                              {.max_bodies = 40, .max_contacts = 200, .max_dirs = 16}};
    for (int s = 0; s < CS_SOLVER_COUNT; s++) {
        const cs__solver_desc *d = cs__solver_row((cs_solver)s);
        if (!d->run)
            continue;
        assert_true(!d->regularized || d->friction == CS__FRICTION_CONE);
        assert_true(!d->iterates || d->friction == CS__FRICTION_CONE);
        assert_true(d->warm != CS__WARM_BASIS || d->friction == CS__FRICTION_PYRAMID);
        assert_true(d->delassus_rows == 0 || d->delassus_rows == 1 || d->delassus_rows == 3);
        for (size_t k = 0; k < sizeof lims / sizeof lims[0]; k++) {
            const size_t n = (size_t)d->delassus_rows * (size_t)lims[k].max_contacts;
            const size_t W = d->delassus_rows ? n * n * sizeof(double) : 0;
            const size_t del = d->delassus_rows ? cs_model_delassus_size(&lims[k]) : 0;
            assert_true(d->size(&lims[k]) >= W + del);
        }
    }
}

/* The name list: the first solver leads, the rest in enum order, whole names only. */
static void solver_list_names_the_mask(void **state) {
    (void)state;
    char buf[128];
    const unsigned mask = (1u << CS_SOLVER_SAP) | (1u << CS_SOLVER_DANTZIG) |
                          (1u << CS_SOLVER_LEMKE);
    assert_int_equal(cs_solver_list(mask, CS_SOLVER_LEMKE, buf, sizeof buf),
                     strlen("lemke, dantzig, sap"));
    assert_string_equal(buf, "lemke, dantzig, sap");
    cs_solver_list(mask, CS_SOLVER_DEFAULT, buf, sizeof buf);
    assert_string_equal(buf, "dantzig, lemke, sap");
    cs_solver_list(mask, CS_SOLVER_LEMKE_STANDARD, buf, sizeof buf); /* not in mask: no lead */
    assert_string_equal(buf, "dantzig, lemke, sap");
    assert_int_equal(cs_solver_list(mask, CS_SOLVER_DEFAULT, buf, 12), strlen("dantzig"));
    assert_string_equal(buf, "dantzig");
    assert_int_equal(cs_solver_list(0, CS_SOLVER_DEFAULT, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
}

/* A session for one sliding box: its workspace (every solver), warm start and result. */
typedef struct session {
    cs_limits lim;
    cs_workspace *ws;
    cs_warmstart *warm;
    void *mem;
    cs_result res;
} session;

static void session_open(session *x, unsigned solvers) {
    x->lim = (cs_limits){.max_bodies = 1, .max_contacts = 8, .max_dirs = 8, .solvers = solvers};
    x->ws = cs_workspace_new(&x->lim);
    x->warm = cs_warmstart_new(&x->lim);
    x->mem = aligned_alloc(64, (cs_result_size(&x->lim) + 63) & ~(size_t)63);
    assert_true(x->ws && x->warm && x->mem);
    cs_result_init(&x->res, x->mem, &x->lim);
}

static void session_close(session *x) {
    cs_workspace_free(x->ws);
    cs_warmstart_free(x->warm);
    free(x->mem);
}

/* The answer of x->res on scene s judged on the cone (pyramid false) or the d-gon. */
static cs_certificate judge(session *x, const cs_scene *s, bool pyramid) {
    const size_t mark = cs__ws_mark(x->ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, x->ws, s), CS_CONVERGED);
    cs_certificate c;
    assert_int_equal(cs_certify(x->ws, &m, x->res.impulse, x->res.v, pyramid, &c, NULL), 0);
    cs__ws_release(x->ws, mark);
    return c;
}

/* Steps s with solver from a reset warm start: a certified answer of the solver's own. */
static void step_cold(session *x, const cs_scene *s, cs_solver solver) {
    const cs_options opt = {.solver = solver};
    cs_warmstart_reset(x->warm);
    assert_int_equal(cs_step(x->ws, s, &opt, x->warm, &x->res), CS_CONVERGED);
    assert_int_equal(x->res.answer, CS_ANSWER_SOLVER);
}

/* A box sliding on d = 4 directions at angle theta from the nearest one, |theta| in [25, 45]
 * degrees, so the square pyramid and the disc differ along the slip by at least 1 - cos 25deg
 * (9 %) of mu lambda_n. */
static void sliding_box(t_gen_scene *g) {
    for (uint64_t seed = 1; seed < 200; seed++) {
        t_gen_slide(g, 0.3, 4, seed);
        const double a = fabs(remainder(atan2(g->bodies[0].v[1], g->bodies[0].v[0]), M_PI / 2));
        if (a > 25 * M_PI / 180)
            return;
    }
    fail_msg("no seed below 200 slides away from the pyramid's directions");
}

/* A sliding box and a session for it that declared every solver. */
typedef struct box {
    t_gen_scene g;
    session x;
} box;

static int box_setup(void **state) {
    box *b = malloc(sizeof *b);
    if (!b)
        return -1;
    sliding_box(&b->g);
    session_open(&b->x, 0);
    *state = b;
    return 0;
}

static int box_teardown(void **state) {
    box *b = *state;
    session_close(&b->x);
    free(b);
    return 0;
}

/* Each solver's answer is certified on the friction set its row names, and fails on the other:
 * a frictionless answer has no tangential impulse (so a frictional judge finds friction
 * missing), a pyramid answer dissipates less than the disc allows, a cone answer's friction lies
 * outside the square. */
static void friction_set_is_what_the_solver_solves(void **state) {
    box *b = *state;
    const t_gen_scene *g = &b->g;
    session *x = &b->x;
    for (int s = 0; s < CS_SOLVER_COUNT; s++) {
        const cs__solver_desc *d = cs__solver_row((cs_solver)s);
        if (!d->run)
            continue;
        step_cold(x, &g->s, (cs_solver)s);
        const cs_certificate cone = judge(x, &g->s, false), gon = judge(x, &g->s, true);
        print_message("# %-16s cone: dissipation %.3g cone %.3g; d-gon: dissipation %.3g cone "
                      "%.3g (impulse scale %.3g)\n", cs_solver_name((cs_solver)s),
                      cone.dissipation, cone.cone, gon.dissipation, gon.cone, cone.impulse_scale);
        switch (d->friction) {
        case CS__FRICTION_NONE:
            for (int i = 0; i < g->s.nc; i++) {
                assert_near(x->res.impulse[3 * i + 1], 0.0, 0.0);
                assert_near(x->res.impulse[3 * i + 2], 0.0, 0.0);
            }
            assert_false(cs_certificate_is_ok(&cone, 0, true));
            assert_true(cs_certificate_is_ok(&cone, 0, false));
            break;
        case CS__FRICTION_PYRAMID:
            assert_true(cs_certificate_is_ok(&gon, 0, true));
            assert_false(cs_certificate_is_ok(&cone, 0, true));
            break;
        case CS__FRICTION_CONE:
            assert_true(cone.cone <= 1e-6 * cone.impulse_scale);
            assert_false(cs_certificate_is_ok(&gon, 0, true));
            break;
        }
    }
}

/* Solver work of one step: pivots for the pivoting solvers, iterations for the iterative. */
static int work(const cs_result *r) {
    return r->stats.pivots + r->stats.iterations;
}

/* A row's warm-start kind is what its solver uses: stepping the same scene again after a
 * certified answer takes the same work, to the bit the same answer, for a cold solver, and less
 * work for one warm-started from that answer (velocities or basis words). On a peg under a
 * wrench that every solver works at cold (lemke's crash start answers the sliding box, and some
 * pegs, with no pivot). */
static void warm_start_kind_is_what_the_solver_uses(void **state) {
    box *b = *state;
    static t_gen_scene peg;
    t_gen_peg(&peg, 8, 0.25, 8, 2);
    const t_gen_scene *g = &peg;
    session *x = &b->x;
    double first[3 * 8];
    for (int s = 0; s < CS_SOLVER_COUNT; s++) {
        const cs__solver_desc *d = cs__solver_row((cs_solver)s);
        if (!d->run)
            continue;
        step_cold(x, &g->s, (cs_solver)s);
        const int cold = work(&x->res);
        memcpy(first, x->res.impulse, 3 * (size_t)g->s.nc * sizeof(double));
        const cs_options opt = {.solver = (cs_solver)s};
        assert_int_equal(cs_step(x->ws, &g->s, &opt, x->warm, &x->res), CS_CONVERGED);
        const int warm = work(&x->res);
        print_message("# %-16s cold %d, warm %d\n", cs_solver_name((cs_solver)s), cold, warm);
        assert_true(cold > 0);
        if (d->warm == CS__WARM_NONE) {
            assert_int_equal(warm, cold);
            assert_memory_equal(first, x->res.impulse, 3 * (size_t)g->s.nc * sizeof(double));
        } else {
            assert_true(warm < cold);
        }
    }
}

/* For every pair of available solvers: a session that declared only a refuses b in validation
 * (naming b and a) and in cs_step (no answer, zero impulses), and still runs a. A mask naming a
 * solver this build lacks, or beyond the enum, gets no workspace. */
static void undeclared_solver_is_refused(void **state) {
    (void)state;
    static t_gen_scene g;
    sliding_box(&g);
    for (int a = 0; a < CS_SOLVER_COUNT; a++) {
        if (!cs_solver_is_available((cs_solver)a))
            continue;
        session x;
        session_open(&x, 1u << a);
        const cs_options run = {.solver = (cs_solver)a};
        assert_int_equal(cs_step(x.ws, &g.s, &run, x.warm, &x.res), CS_CONVERGED);
        for (int b = 0; b < CS_SOLVER_COUNT; b++) {
            if (b == a || !cs_solver_is_available((cs_solver)b))
                continue;
            assert_false(cs_limits_allow(&x.lim, (cs_solver)b));
            char err[160], want[160];
            g.s.solver = (cs_solver)b;
            assert_int_equal(cs_scene_validate(&g.s, &x.lim, err, sizeof err), CS_ENOSPACE);
            snprintf(want, sizeof want, "solver: '%s' was not declared for this session "
                     "(declared: %s)", cs_solver_name((cs_solver)b), cs_solver_name((cs_solver)a));
            assert_string_equal(err, want);
            g.s.solver = CS_SOLVER_DEFAULT;
            const cs_options refused = {.solver = (cs_solver)b};
            assert_int_equal(cs_step(x.ws, &g.s, &refused, x.warm, &x.res), CS_ENOSPACE);
            assert_int_equal(x.res.answer, CS_ANSWER_NONE);
            for (int i = 0; i < 3 * g.s.nc; i++)
                assert_near(x.res.impulse[i], 0.0, 0.0);
        }
        session_close(&x);
    }
    const unsigned missing = ~cs_solver_mask(true) & ((1u << CS_SOLVER_COUNT) - 1);
    for (int s = 0; s <= CS_SOLVER_COUNT; s++) {
        if (s < CS_SOLVER_COUNT && !(missing & (1u << s)))
            continue;
        const cs_limits lim = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8,
                               .solvers = 1u << s};
        assert_int_equal(cs_workspace_size(&lim), 0);
        assert_null(cs_workspace_new(&lim));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_value_has_its_row),
        cmocka_unit_test(names_are_unique_and_round_trip),
        cmocka_unit_test(available_rows_are_complete),
        cmocka_unit_test(flags_fit_the_certificate),
        cmocka_unit_test(solver_list_names_the_mask),
        cmocka_unit_test_setup_teardown(friction_set_is_what_the_solver_solves, box_setup,
                                        box_teardown),
        cmocka_unit_test_setup_teardown(warm_start_kind_is_what_the_solver_uses, box_setup,
                                        box_teardown),
        cmocka_unit_test(undeclared_solver_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
