/* SPDX-License-Identifier: MIT */
/* Sessions without threads or sockets: the test plays the I/O thread (publish frames, drain
 * results) and calls the tick directly, so each rule is checked deterministically: one frame per
 * session per tick, newest wins and superseded frames are counted, a result carries its tick and
 * a consistent timing record, a full output ring drops and counts, a closed session is released
 * by the next tick and then reaped, admission refuses bad limits and a full table. */
#include <errno.h>
#include <string.h>

#include "io/scene_json.h"
#include "service/clock.h"
#include "service/session.h"
#include "testlib.h"

static cs_scene box;
static const cs_limits lim = {.max_bodies = 2, .max_contacts = 8, .max_dirs = 8};

static int setup(void **state) {
    (void)state;
    char err[256];
    return cd_scene_json_load(t_data_path("box_on_plane.json"), &box, err, sizeof err);
}

static int teardown(void **state) {
    (void)state;
    cd_scene_json_free(&box);
    return 0;
}

// Copies the box scene into the session's input buffer with the given seq and publishes it.
static void publish_box(cd_session *s, uint64_t seq) {
    cs_scene *sc = cd_session_frame_scene(s);
    cs_body *bodies = sc->bodies;
    cs_contact *contacts = sc->contacts;
    *sc = box;
    sc->bodies = bodies;
    sc->contacts = contacts;
    memcpy(bodies, box.bodies, (size_t)box.nb * sizeof *bodies);
    memcpy(contacts, box.contacts, (size_t)box.nc * sizeof *contacts);
    sc->seq = seq;
    cd_session_frame_publish(s, cd_clock_ns());
}

// A deadline far enough ahead that no solve misses it.
static int64_t far_deadline(void) {
    return cd_clock_ns() + CD_NS_PER_S;
}

static void admission_checks(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(2);
    assert_non_null(t);
    cd_session *a, *b, *c;
    const cs_limits bad = {.max_bodies = 0, .max_contacts = 4, .max_dirs = 8};
    assert_int_equal(cd_session_admit(t, &bad, CS_SOLVER_DANTZIG, &a), -EINVAL);
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DEFAULT, &a), -EINVAL);
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &a), 0);
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &b), 0);
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &c), -EBUSY);
    assert_true(cd_session_id(b) > cd_session_id(a));
    assert_int_equal(cd_session_limits(a)->max_contacts, 8);
    cd_stats st = {0};
    cd_session_table_stats(t, &st);
    assert_int_equal(st.sessions, 2);
    // A closed session keeps its entry until the tick has let go of it and it is reaped.
    cd_session_close(a);
    cd_session_table_stats(t, &st);
    assert_int_equal(st.sessions, 1);
    assert_int_equal(cd_session_table_reap(t), 0);
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &c), -EBUSY);
    assert_int_equal(cd_session_table_tick(t, 1, far_deadline()), 1); /* the release */
    assert_int_equal(cd_session_table_reap(t), 1);
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &c), 0);
    cd_session_table_free(t); /* frees b and c */
}

static void one_frame_per_tick_newest_wins(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s;
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &s), 0);
    // Nothing published: the tick has nothing to do.
    assert_int_equal(cd_session_table_tick(t, 1, far_deadline()), 0);
    assert_null(cd_session_result_peek(s));
    publish_box(s, 10);
    publish_box(s, 11);
    publish_box(s, 12);
    const int64_t deadline = far_deadline();
    assert_int_equal(cd_session_table_tick(t, 2, deadline), 1);
    assert_int_equal(cd_session_table_tick(t, 3, far_deadline()), 0); /* nothing new */
    cd_output *o = cd_session_result_peek(s);
    assert_non_null(o);
    assert_int_equal(o->result.seq, 12);
    assert_int_equal(o->result.status, CS_CONVERGED);
    assert_int_equal(o->tick, 2);
    assert_false(o->late_start);
    assert_true(o->timing.received_ns <= o->timing.solve_start_ns);
    assert_true(o->timing.solve_ns > 0);
    assert_int_equal(o->timing.deadline_ns, deadline);
    assert_true(o->timing.deadline_met);
    assert_int_equal(o->timing.sent_ns, 0);
    double fz = 0.0;
    for (int i = 0; i < o->result.nc; i++) {
        fz += o->result.force[3 * i + 2];
    }
    assert_near(fz, box.bodies[0].mass * -box.gravity[2], 1e-6 * 20.0);
    cd_session_result_pop(s, false);
    assert_null(cd_session_result_peek(s));
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.frames_received, 3);
    assert_int_equal(st.frames_superseded, 2);
    assert_int_equal(st.frames_solved, 1);
    assert_int_equal(st.deadline_misses, 0);
    assert_int_equal(st.solve_ns.count, 1);
    cd_session_table_free(t);
}

static void past_deadline_still_answered(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s;
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &s), 0);
    publish_box(s, 1);
    // The tick reaches the session after its deadline: a labelled answer, not silence.
    assert_int_equal(cd_session_table_tick(t, 1, cd_clock_ns() - 1000), 1);
    const cd_output *o = cd_session_result_peek(s);
    assert_non_null(o);
    assert_true(o->late_start);
    assert_false(o->timing.deadline_met);
    assert_int_equal(o->result.status, CS_DEADLINE);
    cd_session_result_pop(s, false);
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.deadline_misses, 1);
    cd_session_table_free(t);
}

static void full_ring_drops_and_counts(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s;
    assert_int_equal(cd_session_admit(t, &lim, CS_SOLVER_DANTZIG, &s), 0);
    // The I/O thread does not drain: the ring fills, then results are dropped and counted.
    const int extra = 5;
    for (int i = 0; i < CD_SESSION_RESULTS + extra; i++) {
        publish_box(s, (uint64_t)i + 1);
        assert_int_equal(cd_session_table_tick(t, (uint64_t)i + 1, far_deadline()),
                         i < CD_SESSION_RESULTS ? 1 : 0);
    }
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.frames_solved, CD_SESSION_RESULTS + extra);
    assert_int_equal(st.results_dropped, extra);
    // What is in the ring is the oldest results, in order; one dropped by the I/O side counts.
    for (uint64_t seq = 1; seq <= CD_SESSION_RESULTS; seq++) {
        const cd_output *o = cd_session_result_peek(s);
        assert_non_null(o);
        assert_int_equal(o->result.seq, seq);
        cd_session_result_pop(s, seq == 1);
    }
    assert_null(cd_session_result_peek(s));
    cd_session_stats(s, &st);
    assert_int_equal(st.results_dropped, extra + 1);
    cd_stats global = {0};
    cd_session_table_stats(t, &global);
    assert_int_equal(global.results_dropped, extra + 1);
    assert_int_equal(global.frames_solved, CD_SESSION_RESULTS + extra);
    cd_session_table_free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(admission_checks),
        cmocka_unit_test(one_frame_per_tick_newest_wins),
        cmocka_unit_test(past_deadline_still_answered),
        cmocka_unit_test(full_ring_drops_and_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
