/* SPDX-License-Identifier: MIT */
/* Sessions without threads or sockets: the test plays the I/O thread (publish frames, drain
 * results) and the worker (cd_session_job, cd_session_run) with a fake clock, so each rule is
 * checked deterministically: stream mode answers the newest frame at the tick after its arrival
 * (solved ahead of the tick once a tick, when by a measured cost the solve ends before it, from
 * the warm start the answers sent so far left) and counts superseded ones on both sides of the hand-off; request mode answers every frame in
 * order, refuses a full queue, frames over the rate and frames with no room left for their
 * answer; a full output ring drops and counts; a session has unanswered frames until the newest
 * (stream) or every one (request) has its result taken or dropped; a
 * closed session is let go of by its worker and then reaped; a session is only ever stepped by
 * its owner; each solve's time, wake-up lateness, received -> sent latency, status and miss cause
 * land in the session's histograms and counts; the memory formula is what the session allocates
 * and grows with what it declares. */
#include <errno.h>
#include <string.h>

#include "wire/scene_json.h"
#include "service/session.h"
#include "solver/contact.h"
#include "testlib.h"

#define PERIOD 1000000
#define EPOCH 5000000000LL

static cs_scene box;
static int64_t fake_now;
static int64_t fake_step_once; /* added once, at the read after the next: a solve this long */
static bool fake_step_armed;

static int64_t fake_clock(void) {
    if (fake_step_armed) {
        fake_now += fake_step_once;
        fake_step_once = 0;
    }
    fake_step_armed = fake_step_once != 0;
    return fake_now;
}

static const cd_session_params stream_params = {
    .lim = {.max_bodies = 2, .max_contacts = 8, .max_dirs = 8,
            .solvers = 1u << CS_SOLVER_DANTZIG},
    .default_solver = CS_SOLVER_DANTZIG,
    .mode = CD_MODE_STREAM,
    .budget_ns = 800000,
    .period_ns = PERIOD,
};

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

// Copies the box scene into the session's input buffer with the given seq and publishes it at
// the fake time now.
static void publish_box(cd_session *s, uint64_t seq, int64_t now) {
    cs_scene *sc = cd_session_frame_scene(s);
    assert_non_null(sc);
    t_scene_copy(sc, &box, seq);
    cd_session_frame_publish(s, NULL, now, now, 0);
}

// Publishes the box as frame seq at now, sliding at vx (0: resting) when slide, counting for tick
// (0: the tick after now).
static void publish_box_moving(cd_session *s, uint64_t seq, int64_t now, double vx, int64_t tick) {
    cs_scene *sc = cd_session_frame_scene(s);
    assert_non_null(sc);
    t_scene_copy(sc, &box, seq);
    sc->bodies[0].v[0] = vx;
    cd_session_frame_publish(s, NULL, now, now, tick);
}

static cd_session *admit(cd_session_table *t, const cd_session_params *p) {
    cd_session *s = cd_session_new(p);
    assert_non_null(s);
    assert_int_equal(cd_session_table_insert(t, s, 0), 0);
    return s;
}

// Runs the job due at fake time now, if any. Returns 1 when one ran.
static int step(cd_session *s, cd_counts *wc) {
    cd_job job;
    if (!cd_session_job(s, fake_now, EPOCH, PERIOD, wc, &job)) {
        return 0;
    }
    (void)cd_session_run(s, &job, &(cd_run){.clock_ns = fake_clock, .counts = wc});
    return 1;
}

// s's first solve, of the box found at tick (its answer taken): a session solves ahead of a tick
// only once a solve has measured its cost.
static void first_solve(cd_session *s, cd_counts *wc, int64_t tick) {
    fake_now = tick;
    publish_box_moving(s, 100, tick, 0.0, tick);
    assert_int_equal(step(s, wc), 1);
    assert_non_null(cd_session_result_peek(s));
    cd_session_result_pop(s, false, NULL);
}

static void admission_checks(void **state) {
    (void)state;
    cd_session_params bad = stream_params;
    bad.lim.max_bodies = 0;
    assert_null(cd_session_new(&bad));
    bad = stream_params;
    bad.default_solver = CS_SOLVER_SAP; /* not among the declared solvers */
    assert_null(cd_session_new(&bad));
    bad = stream_params;
    bad.budget_ns = 0;
    assert_null(cd_session_new(&bad));

    cd_session_table *t = cd_session_table_new(2);
    cd_session *a = admit(t, &stream_params), *b = admit(t, &stream_params);
    assert_true(cd_session_id(b) > cd_session_id(a));
    cd_session *c = cd_session_new(&stream_params);
    assert_int_equal(cd_session_table_insert(t, c, 0), -EBUSY);
    cd_stats st = {0};
    cd_session_table_stats(t, &st);
    assert_int_equal(st.sessions, 2);
    // A closed session keeps its entry until its worker has let go of it; then it is reaped.
    cd_session_close(a);
    cd_session_table_stats(t, &st);
    assert_int_equal(st.sessions, 1);
    assert_null(cd_session_table_reap(t));
    int released = 0;
    // Another worker does not own it and cannot release it.
    assert_null(cd_session_table_claim(t, 0, 1, &released));
    assert_int_equal(released, 0);
    assert_null(cd_session_table_claim(t, 0, 0, &released));
    assert_int_equal(released, 1);
    assert_ptr_equal(cd_session_table_reap(t), a);
    assert_null(cd_session_table_reap(t));
    cd_session_free(a);
    assert_int_equal(cd_session_table_insert(t, c, 0), 0);
    // Only the owner claims a live session; a move hands it over.
    assert_null(cd_session_table_claim(t, 0, 1, &released));
    assert_ptr_equal(cd_session_table_claim(t, 0, 0, &released), c);
    cd_session_move(c, 1);
    assert_null(cd_session_table_claim(t, 0, 0, &released));
    assert_ptr_equal(cd_session_table_claim(t, 0, 1, &released), c);
    cd_session_table_free(t); /* frees b and c */
}

static void stream_solves_newest_at_the_next_tick(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &stream_params);
    first_solve(s, &wc, EPOCH + 9 * PERIOD);
    // Nothing published: nothing due.
    fake_now = EPOCH + 10 * PERIOD + 100;
    assert_int_equal(step(s, &wc), 0);
    assert_false(cd_session_has_unanswered(s));
    // Three frames during period 10: none is answered before tick 11, and the newest wins then.
    // 11 is solved ahead of the tick, but 12 supersedes it and waits for the tick (one solve
    // ahead a tick).
    publish_box(s, 10, fake_now);
    publish_box(s, 11, fake_now + 10);
    assert_int_equal(step(s, &wc), 1);
    assert_null(cd_session_result_peek(s));
    publish_box(s, 12, fake_now + 20);
    fake_now = EPOCH + 11 * PERIOD - 1;
    assert_int_equal(step(s, &wc), 0);
    assert_null(cd_session_result_peek(s));
    assert_true(cd_session_has_unanswered(s)); /* 12, held for its tick */
    fake_now = EPOCH + 11 * PERIOD + 30000;
    assert_int_equal(step(s, &wc), 1);
    assert_int_equal(step(s, &wc), 0); /* nothing new */
    assert_true(cd_session_has_unanswered(s)); /* its result not taken yet */
    cd_output *o = cd_session_result_peek(s);
    assert_non_null(o);
    assert_int_equal(o->result.seq, 12);
    assert_int_equal(o->result.status, CS_CONVERGED);
    assert_int_equal(o->result.answer, CS_ANSWER_SOLVER);
    assert_int_equal(o->timing.release_ns, EPOCH + 11 * PERIOD);
    assert_int_equal(o->timing.deadline_ns, EPOCH + 11 * PERIOD + stream_params.budget_ns);
    assert_int_equal(o->timing.solve_start_ns, fake_now);
    assert_true(o->timing.deadline_met);
    assert_int_equal(o->timing.miss, CD_MISS_NONE);
    double fz = 0.0;
    for (int i = 0; i < o->result.nc; i++) {
        fz += o->result.force[3 * i + 2];
    }
    assert_near(fz, box.bodies[0].mass * -box.gravity[2], 1e-6 * 20.0);
    cd_session_result_pop(s, false, NULL);
    assert_null(cd_session_result_peek(s));
    assert_false(cd_session_has_unanswered(s));
    cd_stats st = {0};
    cd_session_stats(s, &st);
    // 11 replaced 10 in the slot (the I/O side); 12 replaced 11 after the worker held it.
    assert_int_equal(st.frames_received, 4);
    assert_int_equal(st.frames_superseded, 2);
    assert_int_equal(st.frames_solved, 2);
    assert_int_equal(st.deadline_misses, 0);
    cd_stats w = {0};
    cd_counts_add(&wc, &w);
    assert_int_equal(w.frames_solved, 2);
    cd_session_table_free(t);
}

/* A frame its worker found in a tick's pass (woken for tick 11, late) counts for that tick: due at
 * once, released when it was read (after the tick), never held for the next tick where the next
 * frame would supersede it. One read between ticks waits for the tick after it. */
static void a_frame_found_at_a_tick_counts_for_it(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &stream_params);
    const int64_t tick = EPOCH + 11 * PERIOD, read = tick + 120000;
    fake_now = read + 5000;
    cs_scene *sc = cd_session_frame_scene(s);
    assert_non_null(sc);
    t_scene_copy(sc, &box, 20);
    cd_session_frame_publish(s, NULL, read, read, tick);
    assert_int_equal(step(s, &wc), 1);
    cd_output *o = cd_session_result_peek(s);
    assert_non_null(o);
    assert_int_equal(o->result.seq, 20);
    assert_int_equal(o->timing.release_ns, read); /* within tick 11's period */
    assert_int_equal(o->timing.received_ns, read);
    assert_int_equal(o->timing.deadline_ns, read + stream_params.budget_ns);
    cd_session_result_pop(s, false, NULL);
    // The same frame read between ticks, in a pass of no tick: due at tick 12 (solved ahead of it,
    // answered at it).
    publish_box(s, 21, read);
    assert_int_equal(step(s, &wc), 1);
    assert_null(cd_session_result_peek(s));
    fake_now = tick + PERIOD;
    assert_int_equal(step(s, &wc), 1);
    o = cd_session_result_peek(s);
    assert_non_null(o);
    assert_int_equal(o->result.seq, 21);
    assert_int_equal(o->timing.release_ns, tick + PERIOD);
    cd_session_result_pop(s, false, NULL);
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.frames_superseded, 0);
    cd_session_table_free(t);
}

// Asserts that a and b are the same answer, bit for bit, pivots included.
static void assert_same_answer(const cs_result *a, const cs_result *b) {
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->stats.pivots, b->stats.pivots);
    assert_int_equal(a->stats.iterations, b->stats.iterations);
    assert_int_equal(a->nc, b->nc);
    assert_memory_equal(a->impulse, b->impulse, 3 * (size_t)a->nc * sizeof(double));
    assert_memory_equal(a->v, b->v, 6 * (size_t)a->nb * sizeof(double));
}

/* A stream frame that arrives before its tick is solved then, and its answer is sent at the tick:
 * the same answer, bit for bit, as a session that solves its frames at their ticks; and a solve
 * ahead that a newer frame supersedes leaves the warm start as it was (lemke starts from the last
 * answer's basis, so a sliding box's answer kept would change the pivots that follow). */
static void a_stream_frame_is_solved_ahead_and_sent_at_its_tick(void **state) {
    (void)state;
    cd_session_params p = stream_params;
    p.lim.solvers = 1u << CS_SOLVER_LEMKE;
    p.default_solver = CS_SOLVER_LEMKE;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(2);
    cd_session *s = admit(t, &p), *at_tick = admit(t, &p);
    const int64_t tick = EPOCH + 21 * PERIOD;
    first_solve(s, &wc, tick - PERIOD);
    first_solve(at_tick, &wc, tick - PERIOD);
    // Round 1: s gets its frame 400 us before the tick; at_tick finds the same frame at the tick.
    fake_now = tick - 400000;
    publish_box_moving(s, 1, fake_now, 0.0, 0);
    assert_int_equal(step(s, &wc), 1);
    assert_null(cd_session_result_peek(s)); /* solved, not sent */
    assert_true(cd_session_has_unanswered(s));
    assert_int_equal(step(s, &wc), 0); /* nothing more before the tick */
    fake_now = tick;
    publish_box_moving(at_tick, 1, tick, 0.0, tick);
    assert_int_equal(step(s, &wc), 1);
    assert_int_equal(step(at_tick, &wc), 1);
    cd_output *o = cd_session_result_peek(s), *u = cd_session_result_peek(at_tick);
    assert_non_null(o);
    assert_non_null(u);
    assert_same_answer(&o->result, &u->result);
    assert_int_equal(o->timing.solve_start_ns, tick - 400000);
    assert_int_equal(o->timing.release_ns, tick);
    assert_int_equal(o->timing.deadline_ns, tick - 400000 + p.budget_ns); /* from its start */
    assert_true(o->timing.deadline_met);
    cd_session_result_pop(s, false, NULL);
    cd_session_result_pop(at_tick, false, NULL);
    assert_false(cd_session_has_unanswered(s));
    // Round 2: s solves a sliding box ahead, then a resting one supersedes it and is solved at the
    // tick; at_tick only ever sees the resting one. Round 3: s solves a sliding box ahead (from a
    // copy of its warm start), at_tick at the tick (from its own).
    fake_now = tick + PERIOD / 2;
    publish_box_moving(s, 2, fake_now, 0.5, 0);
    fake_step_once = 70000; /* the solve ahead that will be dropped takes 70 us */
    assert_int_equal(step(s, &wc), 1);
    publish_box_moving(s, 3, fake_now + 1000, 0.0, 0);
    publish_box_moving(at_tick, 3, fake_now + 1000, 0.0, 0);
    assert_int_equal(step(s, &wc), 0); /* one solve ahead a tick */
    fake_now = tick + PERIOD;
    assert_int_equal(step(s, &wc), 1);
    assert_int_equal(step(at_tick, &wc), 1);
    o = cd_session_result_peek(s);
    u = cd_session_result_peek(at_tick);
    assert_same_answer(&o->result, &u->result);
    assert_int_equal(o->timing.solve_start_ns, tick + PERIOD);
    cd_session_result_pop(s, false, NULL);
    cd_session_result_pop(at_tick, false, NULL);
    fake_now = tick + 3 * PERIOD / 2;
    publish_box_moving(s, 4, fake_now, 0.2, 0);
    assert_int_equal(step(s, &wc), 1);
    fake_now = tick + 2 * PERIOD;
    publish_box_moving(at_tick, 4, fake_now, 0.2, fake_now);
    assert_int_equal(step(s, &wc), 1);
    assert_int_equal(step(at_tick, &wc), 1);
    assert_same_answer(&cd_session_result_peek(s)->result,
                       &cd_session_result_peek(at_tick)->result);
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.frames_received, 5);
    assert_int_equal(st.frames_superseded, 1);
    assert_int_equal(st.frames_solved, 4);
    // The dropped solve's time is counted apart from the solves that answered.
    assert_int_equal(st.ahead_dropped_ns.count, 1);
    assert_int_equal(st.ahead_dropped_ns.sum, 70000);
    assert_int_equal(st.solve_ns.count, 4);
    cd_stats w = {0};
    cd_counts_add(&wc, &w);
    assert_int_equal(w.ahead_dropped_ns.sum, 70000);
    cd_session_table_free(t);
}

/* No solve ahead that would, by the session's cost so far, run into its tick: the worker's time
 * at the tick belongs to the solves due then. The frame is solved at the tick instead. */
static void no_solve_ahead_runs_into_the_tick(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &stream_params);
    const int64_t tick = EPOCH + 31 * PERIOD;
    // A first frame, 500 us before its tick: no cost measured yet, so not solved ahead.
    fake_now = tick - PERIOD - 500000;
    publish_box_moving(s, 1, fake_now, 0.0, 0);
    cd_job job;
    assert_false(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    // Solved at its tick: the clock moves 300 us during the solve.
    fake_now = tick - PERIOD;
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    assert_int_equal(job.kind, CD_JOB_SOLVE);
    assert_int_equal(job.release_ns, fake_now);
    fake_step_once = 300000;
    (void)cd_session_run(s, &job, &(cd_run){.clock_ns = fake_clock, .counts = &wc});
    assert_int_equal(cd_session_cost_ns(s), 300000);
    cd_session_result_pop(s, false, NULL);
    // 200 us before the tick: a 300 us solve would end after it.
    fake_now = tick - 200000;
    publish_box_moving(s, 2, fake_now, 0.0, 0);
    assert_false(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    fake_now = tick;
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    assert_int_equal(job.kind, CD_JOB_SOLVE);
    // 400 us before the next tick it fits.
    fake_now = tick + PERIOD - 400000;
    (void)cd_session_run(s, &job, &(cd_run){.clock_ns = fake_clock, .counts = &wc});
    cd_session_result_pop(s, false, NULL);
    publish_box_moving(s, 3, fake_now, 0.0, 0);
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    assert_int_equal(job.kind, CD_JOB_AHEAD);
    cd_session_table_free(t);
}

/* A solve ahead gets the session's budget from its start, and its timing record gives that
 * deadline, the one it ran under: one its budget stopped ended past it (the Result's detail says
 * by how much; by the tick's deadline it would have ended 100 us early and still missed). */
static void a_solve_ahead_is_timed_by_its_own_deadline(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &stream_params);
    const int64_t tick = EPOCH + 41 * PERIOD, start = tick - 900000;
    first_solve(s, &wc, tick - PERIOD);
    fake_now = start;
    publish_box(s, 1, fake_now);
    cd_job job;
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    assert_int_equal(job.kind, CD_JOB_AHEAD);
    // The clock passes the budget at the step's first read: the step stops there.
    fake_step_once = stream_params.budget_ns + 1;
    cd_run run = {.clock_ns = fake_clock, .counts = &wc};
    assert_int_equal(cd_session_run(s, &job, &run), 0);
    assert_true(fake_now < tick);
    fake_now = tick;
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    assert_int_equal(job.kind, CD_JOB_SEND);
    assert_int_equal(cd_session_run(s, &job, &run), 1);
    const cd_output *o = cd_session_result_peek(s);
    assert_int_equal(o->result.primary, CS_DEADLINE);
    assert_false(o->timing.deadline_met);
    assert_int_equal(o->timing.miss, CD_MISS_SOLVER);
    assert_int_equal(o->timing.release_ns, tick);
    assert_int_equal(o->timing.solve_start_ns, start);
    assert_int_equal(o->timing.deadline_ns, start + stream_params.budget_ns);
    assert_true(o->timing.solve_start_ns + o->timing.solve_ns > o->timing.deadline_ns);
    cd_session_table_free(t);
}

static void a_late_job_is_labelled_not_silent(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &stream_params);
    publish_box(s, 1, EPOCH + 3 * PERIOD + 5);
    // The worker reaches it two periods after its tick: past the deadline, answered at once.
    // 1.5 of the 2 periods went to other sessions' solves: the scheduler's miss.
    fake_now = EPOCH + 6 * PERIOD;
    cd_job job;
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    cd_run run = {.clock_ns = fake_clock, .counts = &wc, .others_ns = 3 * PERIOD / 2};
    assert_int_equal(cd_session_run(s, &job, &run), 1);
    const cd_output *o = cd_session_result_peek(s);
    assert_false(o->timing.deadline_met);
    assert_int_equal(o->result.status, CS_NOANSWER);
    assert_int_equal(o->result.answer, CS_ANSWER_NONE);
    assert_int_equal(o->timing.miss, CD_MISS_SCHEDULING);
    cd_session_result_pop(s, false, NULL);
    // The same delay with only a quarter period of other solves: the worker was not running
    // for the rest, the host's miss.
    publish_box(s, 2, EPOCH + 6 * PERIOD + 5);
    fake_now = EPOCH + 9 * PERIOD;
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    run.others_ns = PERIOD / 4;
    assert_int_equal(cd_session_run(s, &job, &run), 1);
    assert_int_equal(cd_session_result_peek(s)->timing.miss, CD_MISS_HOST);
    cd_session_result_pop(s, false, NULL);
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.deadline_misses, 2);
    cd_session_table_free(t);
}

// A solve that starts after its deadline had none of its budget: however promptly it started
// by the late-start bound, the miss is not the solver's. A 10 us budget, a wake-up 30 us late.
static void a_start_past_the_deadline_is_not_the_solvers_miss(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session_params p = stream_params;
    p.budget_ns = 10000;
    cd_session *s = admit(t, &p);
    publish_box(s, 1, EPOCH + 3 * PERIOD + 5);
    fake_now = EPOCH + 4 * PERIOD + 30000;
    cd_job job;
    assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
    cd_run run = {.clock_ns = fake_clock, .counts = &wc, .wake_late_ns = 30000};
    assert_int_equal(cd_session_run(s, &job, &run), 1);
    const cd_output *o = cd_session_result_peek(s);
    assert_false(o->timing.deadline_met);
    assert_true(o->timing.solve_start_ns > o->timing.deadline_ns);
    assert_int_equal(o->timing.miss, CD_MISS_HOST);
    cd_session_result_pop(s, false, NULL);
    cd_session_table_free(t);
}

static void request_answers_every_frame_in_order(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_params p = stream_params;
    p.mode = CD_MODE_REQUEST;
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &p);
    fake_now = EPOCH + 7 * PERIOD + 123;
    int64_t early;
    // CD_REQUEST_QUEUE frames at once wait in order; there is no buffer for one more.
    for (int i = 0; i < CD_REQUEST_QUEUE; i++) {
        assert_true(cd_session_frame_allowed(s, fake_now, &early));
        publish_box(s, 100 + (uint64_t)i, fake_now);
    }
    assert_null(cd_session_frame_scene(s));
    // Each is solved as it is due (at once, no tick wait), in arrival order; the session has
    // unanswered frames until the last result is taken.
    for (int i = 0; i < CD_REQUEST_QUEUE; i++) {
        assert_true(cd_session_has_unanswered(s));
        assert_int_equal(step(s, &wc), 1);
        const cd_output *o = cd_session_result_peek(s);
        assert_int_equal(o->result.seq, 100 + (uint64_t)i);
        assert_int_equal(o->timing.release_ns, fake_now);
        assert_int_equal(o->timing.deadline_ns, fake_now + p.budget_ns);
        assert_true(o->timing.deadline_met);
        cd_session_result_pop(s, false, NULL);
    }
    assert_false(cd_session_has_unanswered(s));
    assert_int_equal(step(s, &wc), 0);
    // The rate: CD_REQUEST_BURST frames at one instant conform in all, the next is a period
    // early; one period later exactly one more conforms.
    for (int i = CD_REQUEST_QUEUE; i < CD_REQUEST_BURST; i++) {
        assert_true(cd_session_frame_allowed(s, fake_now, &early));
    }
    assert_false(cd_session_frame_allowed(s, fake_now, &early));
    assert_int_equal(early, PERIOD);
    fake_now += PERIOD;
    assert_true(cd_session_frame_allowed(s, fake_now, &early));
    assert_false(cd_session_frame_allowed(s, fake_now, &early));
    cd_session_table_free(t);
}

static void a_request_always_has_room_for_its_answer(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_params p = stream_params;
    p.mode = CD_MODE_REQUEST;
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &p);
    // The I/O thread writes nothing: after CD_SESSION_RESULTS requests solved and waiting to be
    // written, the next one is refused (no buffer) although the queue itself is empty.
    for (int i = 0; i < CD_SESSION_RESULTS; i++) {
        fake_now = EPOCH + i * PERIOD;
        publish_box(s, (uint64_t)i + 1, fake_now);
        assert_int_equal(step(s, &wc), 1);
    }
    assert_null(cd_session_frame_scene(s));
    // Writing one answer makes room for one request; none was dropped.
    cd_session_result_pop(s, false, NULL);
    assert_non_null(cd_session_frame_scene(s));
    cd_stats st = {0};
    cd_session_stats(s, &st);
    assert_int_equal(st.results_dropped, 0);
    assert_int_equal(st.frames_solved, CD_SESSION_RESULTS);
    cd_session_table_free(t);
}

static void full_ring_drops_and_counts(void **state) {
    (void)state;
    cd_counts wc = {0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &stream_params);
    // The I/O thread does not drain: the ring fills, then results are dropped and counted. Each
    // frame after the first is solved ahead of its tick and sent at it while the ring has room; then there is no
    // room to solve ahead into, and the tick solves it (to keep the warm start) and drops it.
    const int extra = 5;
    for (int i = 0; i < CD_SESSION_RESULTS + extra; i++) {
        fake_now = EPOCH + i * PERIOD + 1;
        publish_box(s, (uint64_t)i + 1, fake_now);
        cd_job job;
        cd_run run = {.clock_ns = fake_clock, .counts = &wc};
        // The first frame waits for its tick (no cost measured yet).
        assert_int_equal(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job), i > 0);
        if (i > 0) {
            assert_int_equal(job.kind, CD_JOB_AHEAD);
            assert_int_equal(cd_session_run(s, &job, &run), 0);
        }
        fake_now = EPOCH + (i + 1) * PERIOD;
        assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
        assert_int_equal(job.kind, i == 0                    ? CD_JOB_SOLVE
                                   : i < CD_SESSION_RESULTS ? CD_JOB_SEND
                                                            : CD_JOB_SOLVE);
        assert_int_equal(cd_session_run(s, &job, &run), i < CD_SESSION_RESULTS ? 1 : 0);
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
        cd_session_result_pop(s, seq == 1, NULL);
    }
    assert_null(cd_session_result_peek(s));
    assert_false(cd_session_has_unanswered(s)); /* the results dropped are counted, not owed */
    st = (cd_stats){0};
    cd_session_stats(s, &st);
    assert_int_equal(st.results_dropped, extra + 1);
    cd_stats global = {0};
    cd_session_table_stats(t, &global);
    cd_counts_add(&wc, &global);
    assert_int_equal(global.results_dropped, extra + 1);
    assert_int_equal(global.frames_solved, CD_SESSION_RESULTS + extra);
    cd_session_table_free(t);
}

// A clock that moves on at every read, so every solve takes a non-zero time.
static int64_t ticking_clock(void) {
    return fake_now += 700;
}

static void records_histograms_and_misses(void **state) {
    (void)state;
    static cd_counts wc;
    static cd_hist solve, late, latency;
    wc = (cd_counts){0};
    solve = late = latency = (cd_hist){0};
    cd_session_table *t = cd_session_table_new(1);
    cd_session *s = admit(t, &stream_params);
    enum { N = 20, LATE = 5 };
    for (int k = 0; k < N; k++) {
        const int64_t tick = EPOCH + (20 + k) * PERIOD;
        publish_box(s, (uint64_t)k, tick - PERIOD + 100);
        // The last LATE wake-ups come after the budget: missed, and the host's doing.
        const int64_t wake_late = k < N - LATE ? 1000 * k : 900000;
        fake_now = tick + wake_late;
        cd_job job;
        assert_true(cd_session_job(s, fake_now, EPOCH, PERIOD, &wc, &job));
        cd_run run = {.tick = (uint64_t)(20 + k), .wake_late_ns = wake_late,
                      .clock_ns = ticking_clock, .counts = &wc};
        assert_int_equal(cd_session_run(s, &job, &run), 1);
        cd_output *o = cd_session_result_peek(s);
        assert_non_null(o);
        assert_true(o->timing.solve_ns > 0);
        assert_int_equal(o->timing.deadline_met, k < N - LATE);
        o->timing.sent_ns = fake_now + 5000 * k;
        cd_hist_record(&solve, o->timing.solve_ns);
        cd_hist_record(&late, o->timing.wake_late_ns);
        cd_hist_record(&latency, o->timing.sent_ns - o->timing.received_ns);
        cd_session_result_pop(s, false, NULL);
    }
    static cd_stats st, ws, io;
    st = ws = io = (cd_stats){0};
    cd_session_stats(s, &st);
    assert_int_equal(st.frames_solved, N);
    // The session's histograms hold exactly what its timing records said.
    static cd_hist_value want;
    want = (cd_hist_value){0};
    cd_hist_add(&solve, &want);
    assert_memory_equal(st.solve_hist.n, want.n, sizeof want.n);
    assert_int_equal(st.solve_hist.max, want.max);
    want = (cd_hist_value){0};
    cd_hist_add(&late, &want);
    assert_memory_equal(st.wake_late_hist.n, want.n, sizeof want.n);
    assert_int_equal(st.wake_late_hist.max, 900000);
    want = (cd_hist_value){0};
    cd_hist_add(&latency, &want);
    assert_memory_equal(st.latency_hist.n, want.n, sizeof want.n);
    assert_int_equal(st.latency_hist.count, N);
    cd_percentiles p;
    cd_hist_percentiles(&st.latency_hist, &p);
    assert_true(p.p50 <= p.p99 && p.p99 <= p.p999 && p.p999 <= p.max);
    // Misses by cause: the late wake-ups are the host's; every solve has a status.
    assert_int_equal(st.deadline_misses, LATE);
    assert_int_equal(st.misses[CD_MISS_HOST], LATE);
    assert_int_equal(st.misses[CD_MISS_SOLVER] + st.misses[CD_MISS_SCHEDULING] +
                     st.misses[CD_MISS_IO] + st.misses[CD_MISS_NONE], 0);
    uint64_t statuses = 0;
    for (int i = 0; i < CD_STATUS_KINDS; i++) {
        statuses += st.statuses[i];
    }
    assert_int_equal(statuses, N);
    assert_int_equal(st.statuses[CS_CONVERGED - CD_STATUS_MIN], N - LATE);
    // The worker's counts have the solves and misses; its wake-up histogram is the loop's (per
    // tick), not the sessions'. The latency went to the I/O thread's counts (the table's).
    cd_counts_add(&wc, &ws);
    assert_memory_equal(ws.solve_hist.n, st.solve_hist.n, sizeof st.solve_hist.n);
    assert_int_equal(ws.misses[CD_MISS_HOST], LATE);
    assert_int_equal(ws.wake_late_hist.count, 0);
    assert_int_equal(ws.latency_hist.count, 0);
    cd_session_table_stats(t, &io);
    assert_memory_equal(io.latency_hist.n, st.latency_hist.n, sizeof st.latency_hist.n);
    cd_session_table_free(t);
}

static void memory_follows_the_declaration(void **state) {
    (void)state;
    // The small session: 4 bodies, 16 contacts, 8 directions, lemke.
    const cd_session_params small = {
        .lim = {.max_bodies = 4, .max_contacts = 16, .max_dirs = 8,
                .solvers = 1u << CS_SOLVER_LEMKE},
        .default_solver = CS_SOLVER_LEMKE, .mode = CD_MODE_STREAM, .budget_ns = 1,
        .period_ns = PERIOD};
    const size_t bytes = cd_session_bytes(&small);
    print_message("# 4 bodies, 16 contacts, 8 directions, lemke: %zu bytes\n", bytes);
    assert_true(bytes <= 2u << 20);
    // The formula covers what the session allocates: its solver memory is in it.
    cd_session *s = cd_session_new(&small);
    assert_non_null(s);
    assert_true(cs_workspace_size(&small.lim) + cs_warmstart_size(&small.lim) < bytes);
    cd_session_free(s);
    // More contacts, more memory; lemke-standard's explicit matrix far more than lemke.
    cd_session_params big = small;
    big.lim.max_contacts = 64;
    assert_true(cd_session_bytes(&big) > bytes);
    cd_session_params standard = big;
    standard.lim.solvers |= 1u << CS_SOLVER_LEMKE_STANDARD;
    assert_true(cd_session_bytes(&standard) > 4 * cd_session_bytes(&big));
    // Request mode holds CD_REQUEST_QUEUE frames instead of the slot's three.
    cd_session_params request = big;
    request.mode = CD_MODE_REQUEST;
    assert_true(cd_session_bytes(&request) > cd_session_bytes(&big));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(admission_checks),
        cmocka_unit_test(stream_solves_newest_at_the_next_tick),
        cmocka_unit_test(a_frame_found_at_a_tick_counts_for_it),
        cmocka_unit_test(a_stream_frame_is_solved_ahead_and_sent_at_its_tick),
        cmocka_unit_test(no_solve_ahead_runs_into_the_tick),
        cmocka_unit_test(a_solve_ahead_is_timed_by_its_own_deadline),
        cmocka_unit_test(a_late_job_is_labelled_not_silent),
        cmocka_unit_test(a_start_past_the_deadline_is_not_the_solvers_miss),
        cmocka_unit_test(request_answers_every_frame_in_order),
        cmocka_unit_test(a_request_always_has_room_for_its_answer),
        cmocka_unit_test(full_ring_drops_and_counts),
        cmocka_unit_test(records_histograms_and_misses),
        cmocka_unit_test(memory_follows_the_declaration),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
