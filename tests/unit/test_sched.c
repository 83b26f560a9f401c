/* SPDX-License-Identifier: MIT */
/* One worker's scheduling with a fake clock (no threads, no wall time): due solves run earliest
 * deadline first whatever the table order; a session whose solve overruns (a clock that jumps
 * forward during its solve stands in for an expensive solver) is handed to the background worker
 * and cannot delay the foreground's sessions (its histograms keep every solve, whichever worker
 * ran it); misses are attributed to the host (late wake-up),
 * the scheduler (other work first), the I/O thread (frame handed over after it was due) or the
 * solver (a prompt start that used up the budget), and counted by cause; the
 * next wake-up is the next tick; closed sessions are let go of. */
#include <string.h>

#include "solver/contact.h"
#include "wire/scene_json.h"
#include "service/sched.h"
#include "testlib.h"

#define PERIOD 1000000
#define EPOCH 1000000000LL

static cs_scene box;
static int64_t fake_now;
static int64_t fake_step;      /* added at every clock read: how long the solve "takes" */
static int fake_exact_reads;   /* reads answered before fake_jump starts being added */
static int64_t fake_jump;      /* added at every read after those: a solver overrunning */

static int64_t fake_clock(void) {
    fake_now += fake_step;
    if (fake_exact_reads > 0) {
        fake_exact_reads--;
    } else {
        fake_now += fake_jump;
    }
    return fake_now;
}

static int setup(void **state) {
    (void)state;
    char err[256];
    return cd_scene_json_load(t_data_path("box_on_plane.json"), cs_scene_validate,
                              &box, err, sizeof err);
}

static int teardown(void **state) {
    (void)state;
    cd_scene_json_free(&box);
    return 0;
}

static cd_session *admit(cd_session_table *t, cd_mode mode, int64_t budget_ns, int worker) {
    const cd_session_params p = {
        .lim = {.max_bodies = 2, .max_contacts = 8, .max_dirs = 8,
                .solvers = 1u << CS_SOLVER_LEMKE},
        .default_solver = CS_SOLVER_LEMKE, .mode = mode, .budget_ns = budget_ns,
        .period_ns = PERIOD};
    cd_session *s = cd_session_new(&p);
    assert_non_null(s);
    assert_int_equal(cd_session_table_insert(t, s, worker), 0);
    return s;
}

// Publishes the box as frame seq, received at `at` and handed to the worker at `handed`.
static void publish_box_handed(cd_session *s, uint64_t seq, int64_t at, int64_t handed) {
    cs_scene *sc = cd_session_frame_scene(s);
    assert_non_null(sc);
    t_scene_copy(sc, &box, seq);
    cd_session_frame_publish(s, NULL, at, handed, 0);
}

static void publish_box(cd_session *s, uint64_t seq, int64_t at) {
    publish_box_handed(s, seq, at, at);
}

static cd_sched worker(cd_session_table *t, int index, bool background) {
    return (cd_sched){.table = t, .worker = index, .partner = index ^ 1,
                      .background = background, .long_ns = 200000, .epoch_ns = EPOCH,
                      .period_ns = PERIOD, .clock_ns = fake_clock};
}

// Pops every result of s and returns the last one's timing (all zero when there was none).
static cd_timing drain(cd_session *s) {
    cd_timing t = {0};
    cd_output *o;
    while ((o = cd_session_result_peek(s))) {
        t = o->timing;
        cd_session_result_pop(s, false, NULL);
    }
    return t;
}

static void earliest_deadline_first(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(4);
    // Table order: a long budget first, then shorter ones; requests arriving at once.
    cd_session *a = admit(t, CD_MODE_REQUEST, 700000, 0);
    cd_session *b = admit(t, CD_MODE_REQUEST, 100000, 0);
    cd_session *c = admit(t, CD_MODE_REQUEST, 300000, 0);
    cd_session *other = admit(t, CD_MODE_REQUEST, 50000, 2); /* another worker's */
    fake_now = EPOCH + 5 * PERIOD;
    fake_step = 1000; /* 1 us a clock read: solves are short, and start at distinct times */
    publish_box(a, 1, fake_now);
    publish_box(b, 2, fake_now);
    publish_box(c, 3, fake_now);
    publish_box(other, 4, fake_now);
    cd_sched w = worker(t, 0, false);
    int64_t next;
    int moved;
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 3);
    assert_int_equal(moved, 0);
    assert_int_equal(next, EPOCH + 6 * PERIOD);
    // The deadlines order them b (100 us), c (300 us), a (700 us), against the table's order.
    const cd_timing ta = drain(a), tb = drain(b), tc = drain(c);
    assert_true(tb.solve_start_ns < tc.solve_start_ns && tc.solve_start_ns < ta.solve_start_ns);
    assert_true(ta.deadline_met && tb.deadline_met && tc.deadline_met);
    assert_null(cd_session_result_peek(other));
    cd_session_table_free(t);
}

static void an_overrunning_session_moves_to_the_background(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(2);
    cd_session *hog = admit(t, CD_MODE_STREAM, 800000, 0);
    cd_session *light = admit(t, CD_MODE_STREAM, 800000, 0);
    cd_sched fg = worker(t, 0, false), bg = worker(t, 1, true);
    int64_t next;
    int moved;
    // Tick 1: only the hog has a frame, and every clock read advances 100 us: its solve is
    // longer than long_ns, so the foreground hands it to the background worker.
    publish_box(hog, 1, EPOCH + 10);
    fake_now = EPOCH + PERIOD;
    fake_step = 100000;
    assert_int_equal(cd_sched_run(&fg, 0, &next, &moved), 1);
    assert_int_equal(moved, 1);
    assert_int_equal(cd_session_worker(hog), 1);
    assert_true(drain(hog).solve_ns > 200000);
    // Tick 2: both have frames; the foreground runs only the light one, on time.
    fake_step = 0;
    publish_box(hog, 2, EPOCH + PERIOD + 10);
    publish_box(light, 3, EPOCH + PERIOD + 10);
    fake_now = EPOCH + 2 * PERIOD;
    assert_int_equal(cd_sched_run(&fg, 0, &next, &moved), 1);
    assert_null(cd_session_result_peek(hog));
    assert_true(drain(light).deadline_met);
    // The background worker answers the hog; once its solves are cheap for a while (its cost
    // decays below long_ns / 2) it goes back to the foreground.
    assert_int_equal(cd_sched_run(&bg, 0, &next, &moved), 1);
    assert_true(drain(hog).deadline_met);
    for (int k = 3; k < 40 && cd_session_worker(hog) == 1; k++) {
        publish_box(hog, 10 + (uint64_t)k, EPOCH + (k - 1) * PERIOD + 10);
        fake_now = EPOCH + k * PERIOD;
        assert_int_equal(cd_sched_run(&bg, 0, &next, &moved), 1);
        drain(hog);
    }
    assert_int_equal(cd_session_worker(hog), 0);
    assert_int_equal(cd_session_worker(light), 0);
    // The hog's histograms hold every solve, whichever worker ran it; the workers' own counts
    // split the same solves between them.
    static cd_stats hs, ls, ws;
    hs = ls = ws = (cd_stats){0};
    cd_session_stats(hog, &hs);
    cd_session_stats(light, &ls);
    assert_true(hs.frames_solved > 3);
    assert_int_equal(hs.solve_hist.count, hs.frames_solved);
    assert_int_equal(hs.wake_late_hist.count, hs.frames_solved);
    assert_int_equal(hs.solve_hist.max, hs.solve_ns.max);
    cd_counts_add(&fg.counts, &ws);
    cd_counts_add(&bg.counts, &ws);
    assert_int_equal(ws.solve_hist.count, hs.frames_solved + ls.frames_solved);
    assert_int_equal(ws.solve_hist.max,
                     hs.solve_ns.max > ls.solve_ns.max ? hs.solve_ns.max : ls.solve_ns.max);
    cd_session_table_free(t);
}

static void misses_say_why(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(2);
    cd_session *s = admit(t, CD_MODE_STREAM, 300000, 0);
    cd_sched w = worker(t, 0, false);
    int64_t next;
    int moved;
    // The host woke the worker 400 us late: past the 300 us budget before any work.
    publish_box(s, 1, EPOCH + 10);
    fake_step = 0;
    fake_now = EPOCH + PERIOD + 400000;
    cd_sched_run(&w, 400000, &next, &moved);
    cd_timing tm = drain(s);
    assert_false(tm.deadline_met);
    assert_int_equal(tm.miss, CD_MISS_HOST);
    assert_int_equal(tm.wake_late_ns, 400000);
    // Started at its tick (the scheduler's look and the solve's start read the exact time), but
    // the solver needs more than the budget: every read inside it is 1 ms later.
    publish_box(s, 2, EPOCH + PERIOD + 500000);
    fake_now = EPOCH + 2 * PERIOD;
    fake_exact_reads = 2;
    fake_jump = 1000000;
    cd_sched_run(&w, 0, &next, &moved);
    fake_jump = 0;
    tm = drain(s);
    assert_false(tm.deadline_met);
    assert_int_equal(tm.solve_start_ns, EPOCH + 2 * PERIOD);
    assert_int_equal(tm.miss, CD_MISS_SOLVER);
    // The worker reaches it 2 periods late with nothing else having run: the worker itself was
    // not running (how that splits between other work and the host: test_session).
    cd_session_move(s, 0);
    publish_box(s, 3, EPOCH + 2 * PERIOD + 500000);
    fake_step = 0;
    fake_now = EPOCH + 5 * PERIOD;
    cd_sched_run(&w, 0, &next, &moved);
    tm = drain(s);
    assert_false(tm.deadline_met);
    assert_int_equal(tm.miss, CD_MISS_HOST);
    // Received before tick 6, but the I/O thread handed it over 400 us after the tick: the
    // worker, on time for it, blames the I/O side.
    cd_session_move(s, 0);
    publish_box_handed(s, 4, EPOCH + 6 * PERIOD - 100, EPOCH + 6 * PERIOD + 400000);
    fake_now = EPOCH + 6 * PERIOD + 400000;
    cd_sched_run(&w, 0, &next, &moved);
    tm = drain(s);
    assert_false(tm.deadline_met);
    assert_int_equal(tm.miss, CD_MISS_IO);
    // The session and the worker counted each miss by its cause, and the late wake-up.
    static cd_stats st, ws;
    st = ws = (cd_stats){0};
    cd_session_stats(s, &st);
    cd_counts_add(&w.counts, &ws);
    const uint64_t want[CD_MISS_KINDS] = {[CD_MISS_HOST] = 2, [CD_MISS_SOLVER] = 1,
                                          [CD_MISS_IO] = 1};
    assert_memory_equal(st.misses, want, sizeof want);
    assert_memory_equal(ws.misses, want, sizeof want);
    assert_int_equal(st.deadline_misses, 4);
    assert_int_equal(st.wake_late_hist.count, 4);
    assert_int_equal(st.wake_late_hist.max, 400000);
    cd_session_table_free(t);
}

static void closed_sessions_are_let_go(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(2);
    cd_session *s = admit(t, CD_MODE_STREAM, 300000, 0);
    cd_sched w = worker(t, 0, false);
    int64_t next;
    int moved;
    cd_session_close(s);
    fake_step = 0;
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 1); /* the release wakes the I/O */
    assert_ptr_equal(cd_session_table_reap(t), s);
    cd_session_free(s);
    cd_session_table_free(t);
}

// A stream session the I/O thread serves, whose results it has not taken: the solve that finds
// the ring full still wakes it, since a client's EOF may be waiting on that frame (settled, its
// result dropped).
static void a_solve_into_a_full_ring_wakes_the_io(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(2);
    cd_session *s = admit(t, CD_MODE_STREAM, 300000, 0);
    cd_sched w = worker(t, 0, false);
    int64_t next;
    int moved;
    fake_step = 0;
    for (int k = 0; k <= CD_SESSION_RESULTS; k++) {
        fake_now = EPOCH + (int64_t)k * PERIOD + 100;
        publish_box(s, (uint64_t)k + 1, fake_now);
        fake_now += PERIOD;
        assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 1);
    }
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.results_dropped, 1);
    drain(s);
    assert_false(cd_session_has_unanswered(s));
    cd_session_table_free(t);
}

// A stream frame solved ahead of its tick takes only time nothing due wants: a request with a
// later deadline than the stream frame's (release at the tick + budget) still goes first. The
// stream frame's answer goes out at its tick, and the pass before it says the I/O has no work.
static void a_solve_ahead_waits_for_what_is_due(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(2);
    cd_session *a = admit(t, CD_MODE_STREAM, 300000, 0);
    cd_session *b = admit(t, CD_MODE_REQUEST, 2 * PERIOD, 0);
    cd_sched w = worker(t, 0, false);
    int64_t next;
    int moved;
    fake_step = 1000;
    // a's first frame, solved at its tick: a has a cost now (none before, no solve ahead).
    publish_box(a, 1, EPOCH + 4 * PERIOD + 100000);
    fake_now = EPOCH + 5 * PERIOD;
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 1);
    drain(a);
    fake_now = EPOCH + 5 * PERIOD + 100000;
    publish_box(a, 3, fake_now);
    publish_box(b, 2, fake_now);
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 1); /* b's result; a's is kept */
    assert_int_equal(next, EPOCH + 6 * PERIOD);
    assert_null(cd_session_result_peek(a));
    const cd_timing tb = drain(b);
    fake_now = EPOCH + 5 * PERIOD + 500000;
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 0);
    fake_now = EPOCH + 6 * PERIOD;
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 1);
    const cd_timing ta = drain(a);
    assert_true(tb.solve_start_ns < ta.solve_start_ns);
    assert_true(ta.solve_start_ns < EPOCH + 6 * PERIOD);
    assert_int_equal(ta.release_ns, EPOCH + 6 * PERIOD);
    assert_true(ta.deadline_met);
    cd_session_table_free(t);
}

// A pass solves at most one frame ahead of its tick and says so, so that the worker reads its
// sockets between two: two stream sessions' frames before the tick take two passes, the third
// finds nothing left to do before the tick.
static void one_solve_ahead_a_pass(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(2);
    cd_session *a = admit(t, CD_MODE_STREAM, 300000, 0);
    cd_session *b = admit(t, CD_MODE_STREAM, 300000, 0);
    cd_sched w = worker(t, 0, false);
    int64_t next;
    int moved;
    fake_step = 1000;
    // Their first frames, solved at their tick (a cost measured, none before).
    publish_box(a, 1, EPOCH + 4 * PERIOD + 100000);
    publish_box(b, 2, EPOCH + 4 * PERIOD + 100000);
    fake_now = EPOCH + 5 * PERIOD;
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 2);
    assert_false(w.ahead_ran);
    drain(a);
    drain(b);
    fake_now = EPOCH + 5 * PERIOD + 100000;
    publish_box(a, 3, fake_now);
    publish_box(b, 4, fake_now);
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 0);
    assert_true(w.ahead_ran);
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 0);
    assert_true(w.ahead_ran);
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 0);
    assert_false(w.ahead_ran);
    assert_int_equal(next, EPOCH + 6 * PERIOD);
    fake_now = EPOCH + 6 * PERIOD;
    assert_int_equal(cd_sched_run(&w, 0, &next, &moved), 2);
    const cd_timing ta = drain(a), tb = drain(b);
    assert_true(ta.solve_start_ns < EPOCH + 6 * PERIOD && tb.solve_start_ns < EPOCH + 6 * PERIOD);
    cd_session_table_free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(earliest_deadline_first),
        cmocka_unit_test(an_overrunning_session_moves_to_the_background),
        cmocka_unit_test(misses_say_why),
        cmocka_unit_test(closed_sessions_are_let_go),
        cmocka_unit_test(a_solve_into_a_full_ring_wakes_the_io),
        cmocka_unit_test(a_solve_ahead_waits_for_what_is_due),
        cmocka_unit_test(one_solve_ahead_a_pass),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
