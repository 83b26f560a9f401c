/* SPDX-License-Identifier: MIT */
/* Never silence: with a deadline no solve can meet (1 ns after each tick start, and a 1 ns budget
 * for a solve ahead of its tick), every frame still gets a Result with deadline_met false and a
 * detail saying why; the session never had a
 * certified answer, so it is STATUS_FAILED with zero forces (never a silent zero labelled OK),
 * and the deadline misses are counted in Stats. Arguments: the contactd and contactctl
 * executables. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "testlib.h"

#define FRAMES 20

static const char *contactd_path;
static it_daemon d;
static cs_scene box;

static int setup(void **state) {
    (void)state;
    it_scene_load("box_on_plane.json", &box);
    return it_daemon_start(&d, contactd_path, "[loop]\ndeadline_fraction = 0.000001\n", 0);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    cd_scene_json_free(&box);
    return 0;
}

static void every_frame_answered_past_the_deadline(void **state) {
    (void)state;
    cdc_conn *c = it_session_open(&d, false, NULL);
    assert_int_equal(cdc_wire_welcome(c)->deadline_ns, 1);
    for (uint64_t seq = 1; seq <= FRAMES; seq++) {
        Contactd__V1__ServerMessage *m = it_frame_exchange(c, &box, seq);
        const Contactd__V1__Result *r = m->result;
        // No answer was ever certified in this session: no answer, zero force, FAILED.
        assert_int_equal(r->status, CONTACTD__V1__STATUS__STATUS_FAILED);
        assert_int_equal(r->source, CONTACTD__V1__ANSWER_SOURCE__ANSWER_NONE);
        assert_non_null(strstr(r->detail, "deadline missed"));
        assert_false(r->timing->deadline_met);
        if (r->timing->solve_start_ns < r->timing->release_ns) {
            // Solved ahead of its tick (stream mode): its 1 ns budget from its start ran out there.
            assert_int_equal(r->timing->miss_reason, CONTACTD__V1__MISS_REASON__MISS_SOLVER);
            assert_int_equal(r->timing->deadline_ns, r->timing->solve_start_ns + 1);
        } else {
            assert_true(r->timing->solve_start_ns > r->timing->deadline_ns);
        }
        // The deadline given is the one the solve missed: the detail's "missed by" is positive.
        assert_true(r->timing->solve_start_ns + r->timing->solve_ns > r->timing->deadline_ns);
        assert_true(r->timing->solve_start_ns + r->timing->solve_ns <= r->timing->sent_ns);
        assert_int_equal(r->n_contacts, 4);
        for (size_t i = 0; i < r->n_contacts; i++) {
            assert_near(r->contacts[i]->force->z, 0.0, 0.0);
        }
        cdc_wire_free(m);
    }
    Contactd__V1__ServerMessage *m = it_stats_fetch(c);
    assert_true(m->stats->deadline_misses >= FRAMES);
    assert_int_equal(m->stats->frames_solved, m->stats->deadline_misses);
    cdc_wire_free(m);
    cdc_conn_close(c);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_frame_answered_past_the_deadline),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
