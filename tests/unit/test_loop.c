/* SPDX-License-Identifier: MIT */
/* The real worker threads (loop.c) with real time, checked for what does not depend on the
 * machine's speed: a stream session is answered at ticks, one result per tick at most, each
 * result at a tick time of the grid; a request session gets every frame answered, in order,
 * after a kick; the workers make no heap allocation once the sessions are admitted (counted by
 * thread name, so the I/O side of this test does not count); Stats add up; new sessions go to
 * the CPU whose sessions cost least, by their measured solve times; a background worker with no
 * session keeps no tick. Waits are bounded
 * generously and end as soon as the answer is there; no duration is asserted. */
#include <dirent.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <uv.h>

#include "alloc_count.h"
#include "solver/contact.h"
#include "wire/scene_json.h"
#include "service/clock.h"
#include "service/loop.h"
#include "testlib.h"

#define FRAMES 200
/* A bound no healthy run comes near (200 frames at 1 kHz take 0.2 s). */
#define WAIT_NS (60 * CD_NS_PER_S)
/* The tick period of the loops made here (1 kHz). */
#define PERIOD_NS 1000000

static cs_scene box;
/* The handle the workers wake the I/O side with; no loop runs it here. */
static uv_loop_t uv;
static uv_async_t wake;

static int setup(void **state) {
    (void)state;
    char err[256];
    if (uv_loop_init(&uv) < 0 || uv_async_init(&uv, &wake, NULL) < 0) {
        return -1;
    }
    return cd_scene_json_load(t_data_path("box_on_plane.json"), cs_scene_validate,
                              &box, err, sizeof err);
}

static int teardown(void **state) {
    (void)state;
    cd_scene_json_free(&box);
    uv_close((uv_handle_t *)&wake, NULL);
    uv_run(&uv, UV_RUN_DEFAULT);
    return uv_loop_close(&uv);
}

// Stopped workers on `workers` CPUs at normal priority over t.
static cd_loop *new_loop(cd_session_table *t, int workers) {
    const cd_loop_params lp = {.rate_hz = 1000, .workers = workers, .long_solve_ns = 200000,
                               .realtime = false, .priority = 50, .cpu = -1};
    cd_loop *l = cd_loop_new(t, &lp, &wake);
    assert_non_null(l);
    return l;
}

// A box session of l's tick period in the given mode.
static cd_session *new_session(const cd_loop *l, cd_mode mode) {
    const cd_session_params p = {
        .lim = {.max_bodies = 2, .max_contacts = 8, .max_dirs = 8,
                .solvers = 1u << CS_SOLVER_LEMKE},
        .default_solver = CS_SOLVER_LEMKE, .mode = mode, .budget_ns = 800000,
        .period_ns = cd_loop_period_ns(l)};
    cd_session *s = cd_session_new(&p);
    assert_non_null(s);
    return s;
}

static void publish_box(cd_session *s, uint64_t seq) {
    cs_scene *sc = cd_session_frame_scene(s);
    assert_non_null(sc);
    t_scene_copy(sc, &box, seq);
    cd_session_frame_publish(s, NULL, cd_clock_ns(), cd_clock_ns(), 0);
}

static void nap(void) {
    const struct timespec ts = {.tv_nsec = 100000};
    nanosleep(&ts, NULL);
}

// Waits (bounded) for s's next result; fails the test on timeout.
static cd_output *next_result(cd_session *s) {
    const int64_t until = cd_clock_ns() + WAIT_NS;
    cd_output *o;
    while (!(o = cd_session_result_peek(s))) {
        assert_true(cd_clock_ns() < until);
        nap();
    }
    return o;
}

static void workers_answer_without_allocating(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(4);
    cd_loop *l = new_loop(t, 1);
    cd_session *stream = new_session(l, CD_MODE_STREAM);
    cd_session *request = new_session(l, CD_MODE_REQUEST);
    assert_int_equal(cd_session_table_insert(t, stream, cd_loop_place(l)), 0);
    assert_int_equal(cd_session_table_insert(t, request, cd_loop_place(l)), 0);
    assert_int_equal(cd_loop_start(l), 0);
    const int64_t epoch = cd_loop_epoch_ns(l), period = cd_loop_period_ns(l);

    // One exchange each before counting: the workers' first solves are behind them.
    publish_box(stream, 1);
    (void)next_result(stream);
    cd_session_result_pop(stream, false, NULL);
    t_alloc_count_threads_start("cd-");
    uint64_t last_tick = 0;
    for (uint64_t seq = 2; seq <= FRAMES; seq++) {
        publish_box(stream, seq);
        publish_box(request, seq);
        cd_loop_kick(l, request);
        cd_output *o = next_result(request);
        assert_int_equal(o->result.seq, seq);
        assert_true(o->result.status >= 0 || !o->timing.deadline_met);
        assert_int_equal(o->timing.release_ns, o->timing.received_ns);
        cd_session_result_pop(request, false, NULL);
        o = next_result(stream);
        assert_int_equal(o->result.seq, seq);
        // Solved at a tick of the grid after the frame arrived, never twice in one tick.
        assert_int_equal((o->timing.release_ns - epoch) % period, 0);
        assert_true(o->timing.release_ns > o->timing.received_ns);
        assert_true(o->tick > last_tick);
        last_tick = o->tick;
        cd_session_result_pop(stream, false, NULL);
    }
    const long allocations = t_alloc_count_threads_stop();
    cd_loop_stop(l);
    if (allocations >= 0) {
        assert_int_equal(allocations, 0);
    }
    cd_stats st = {0};
    cd_loop_stats(l, &st);
    cd_session_table_stats(t, &st);
    assert_int_equal(st.frames_solved, 2 * FRAMES - 1);
    assert_true(st.ticks > 0);
    cd_loop_free(l);
    cd_session_table_free(t);
}

// A background worker that owns no session keeps no tick (its timer would fire at the
// foreground worker's tick): every tick the loop counts is a foreground worker's, while those
// count on. cd_loop_ticks counts both, cd_loop_stats the foreground's.
static void idle_background_workers_keep_no_tick(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(4);
    cd_loop *l = new_loop(t, 2);
    cd_session *s = new_session(l, CD_MODE_STREAM);
    assert_int_equal(cd_session_table_insert(t, s, cd_loop_place(l)), 0);
    assert_int_equal(cd_loop_start(l), 0);
    cd_stats st = {0};
    const int64_t end = cd_clock_ns() + WAIT_NS;
    while (st.ticks < 50 && cd_clock_ns() < end) {
        nap();
        st = (cd_stats){0};
        cd_loop_stats(l, &st);
    }
    cd_loop_stop(l);
    st = (cd_stats){0};
    cd_loop_stats(l, &st);
    assert_true(st.ticks >= 50);
    assert_int_equal(cd_loop_ticks(l), st.ticks);
    cd_loop_free(l);
    cd_session_table_free(t);
}

static int64_t fake_now;

// Each read is 1 ms after the last: every solve under it costs milliseconds, far more than any
// real solve of the box, even in a sanitizer build.
static int64_t slow_clock(void) {
    fake_now += 1000000;
    return fake_now;
}

static void sessions_go_where_the_measured_cost_is_least(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(4);
    // Three worker CPUs, never started: placement reads only the sessions' measured costs.
    cd_loop *l = new_loop(t, 3);
    // An expensive session on CPU 0's foreground worker and a cheap one on CPU 1's: a new
    // session goes to CPU 2, the one with no cost at all; with CPU 2 busier still, to CPU 1.
    cd_session *dear = new_session(l, CD_MODE_REQUEST), *cheap = new_session(l, CD_MODE_REQUEST);
    assert_int_equal(cd_session_table_insert(t, dear, 0), 0);
    assert_int_equal(cd_session_table_insert(t, cheap, 2), 0);
    cd_counts wc = {0};
    cd_job job;
    publish_box(dear, 1);
    assert_true(cd_session_job(dear, cd_clock_ns(), 0, PERIOD_NS, &wc, &job));
    cd_session_run(dear, &job, &(cd_run){.clock_ns = slow_clock, .counts = &wc});
    publish_box(cheap, 1);
    assert_true(cd_session_job(cheap, cd_clock_ns(), 0, PERIOD_NS, &wc, &job));
    cd_session_run(cheap, &job, &(cd_run){.clock_ns = cd_clock_ns, .counts = &wc});
    assert_true(cd_session_cost_ns(dear) > cd_session_cost_ns(cheap));
    assert_int_equal(cd_loop_place(l), 4);
    cd_session *busy = new_session(l, CD_MODE_REQUEST);
    assert_int_equal(cd_session_table_insert(t, busy, 4), 0);
    publish_box(busy, 1);
    assert_true(cd_session_job(busy, cd_clock_ns(), 0, PERIOD_NS, &wc, &job));
    cd_session_run(busy, &job, &(cd_run){.clock_ns = slow_clock, .counts = &wc});
    assert_int_equal(cd_loop_place(l), 2);
    cd_loop_free(l);
    cd_session_table_free(t);
}

// Descriptors this process has open.
static int open_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    while (readdir(d)) {
        n++;
    }
    closedir(d);
    return n;
}

// Workers whose descriptors run out half-way: cd_loop_new fails and closes what it opened.
static void a_failed_start_leaks_no_descriptor(void **state) {
    (void)state;
    cd_session_table *t = cd_session_table_new(4);
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    const int before = open_fds();
    // Room for three of the eight descriptors four workers need (an epoll and an eventfd each),
    // counting the one opendir takes above the current ones.
    struct rlimit low = saved;
    low.rlim_cur = (rlim_t)before + 2;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    const cd_loop_params lp = {.rate_hz = 1000, .workers = 2, .long_solve_ns = 200000,
                               .realtime = false, .priority = 50, .cpu = -1};
    cd_loop *l = cd_loop_new(t, &lp, &wake);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    assert_null(l);
    assert_int_equal(open_fds(), before);
    cd_session_table_free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_failed_start_leaks_no_descriptor),
        cmocka_unit_test(workers_answer_without_allocating),
        cmocka_unit_test(idle_background_workers_keep_no_tick),
        cmocka_unit_test(sessions_go_where_the_measured_cost_is_least),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
