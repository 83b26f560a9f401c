/* SPDX-License-Identifier: MIT */
/* Streaming sessions: every scene of tests/data streamed for 200 frames through the daemon's
 * 1 kHz loop with each pivoting solver and SAP as the session's solver. Every Result answers its
 * frame on a later tick than the previous one, with all contacts and finite forces and a
 * consistent timing record; a Result is either OK (certified) or labelled with the deadline miss
 * and its reason. How many are OK depends on the machine's load and is printed, not asserted
 * (lemke-standard, the explicit baseline, needs ~2 ms on the peg). For the box resting on a
 * plane the normal forces of every OK answer carry its weight.
 * Arguments: the contactd and contactctl executables. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "testlib.h"

#define FRAMES 200

static const char *contactd_path;
static it_daemon d;

static int setup(void **state) {
    (void)state;
    return it_daemon_start(&d, contactd_path, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    return 0;
}

static void stream(const char *scene, const char *solver) {
    cs_scene s;
    it_scene_load(scene, &s);
    const cdc_hello hello = {.client_name = "it_stream", .solver_name = solver,
                             .limits = {.max_bodies = s.nb, .max_contacts = s.nc,
                                        .max_dirs = 8}};
    cdc_conn *c = it_session_open(&d, false, &hello);
    const bool sap = strcmp(solver, "sap") == 0;
    const bool resting = strcmp(scene, "box_on_plane.json") == 0;
    const double mg = it_scene_weight(&s);
    uint64_t first_tick = 0, last_tick = 0;
    int ok = 0;
    for (int f = 0; f < FRAMES; f++) {
        Contactd__V1__ServerMessage *m = it_frame_exchange(c, &s, 1 + (uint64_t)f);
        const Contactd__V1__Result *r = m->result;
        // Not OK only past the deadline: a fallback, or no answer before the first certified one.
        if (r->status != CONTACTD__V1__STATUS__STATUS_OK &&
            (r->timing->deadline_met || (r->status != CONTACTD__V1__STATUS__STATUS_DEADLINE &&
                                         r->status != CONTACTD__V1__STATUS__STATUS_FAILED)))
            fail_msg("%s with %s, frame %d: status %d", scene, solver, f, (int)r->status);
        it_assert_timing(r->timing);
        ok += r->status == CONTACTD__V1__STATUS__STATUS_OK;
        assert_int_equal(r->n_contacts, s.nc);
        for (size_t i = 0; i < r->n_contacts; i++)
            assert_true(isfinite(r->contacts[i]->force->x) &&
                        isfinite(r->contacts[i]->force->y) &&
                        isfinite(r->contacts[i]->force->z));
        assert_true(r->tick > last_tick);
        first_tick = f == 0 ? r->tick : first_tick;
        last_tick = r->tick;
        if (r->status == CONTACTD__V1__STATUS__STATUS_OK) {
            // SAP's near-rigid compliance gives m g / (1 + m R_n / 4), about 1.3 % below m g
            // for this box (test_sap checks the exact value); the pivoting solvers give m g.
            if (resting)
                assert_near(it_normal_force_sum(r, &s), mg, (sap ? 3e-2 : 1e-6) * mg);
        }
        cdc_wire_free(m);
    }
    print_message("# %-26s %-16s %3d/%d OK over %llu ticks\n", scene, solver, ok, FRAMES,
                  (unsigned long long)(last_tick - first_tick + 1));
    cdc_conn_close(c);
    cd_scene_json_free(&s);
}

static const char *const scenes[] = {"box_on_plane.json", "box_on_incline_stick.json",
                                     "box_on_incline_slide.json", "peg_in_hole.json",
                                     "stack_3.json"};

static void all_scenes(const char *solver) {
    for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++)
        stream(scenes[k], solver);
}

static void lemke_sessions(void **state) {
    (void)state;
    all_scenes("lemke");
}

static void lemke_structural_sessions(void **state) {
    (void)state;
    all_scenes("lemke-structural");
}

static void lemke_standard_sessions(void **state) {
    (void)state;
    all_scenes("lemke-standard");
}

static void sap_sessions(void **state) {
    (void)state;
    all_scenes("sap");
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lemke_sessions),
        cmocka_unit_test(lemke_structural_sessions),
        cmocka_unit_test(lemke_standard_sessions),
        cmocka_unit_test(sap_sessions),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
