/* SPDX-License-Identifier: MIT */
/* keep_awake end to end: with the default configuration (keep_awake = on), the daemon's worker
 * CPU has a poller ("cd-awake<cpu>", SCHED_IDLE, pinned to the foreground worker's CPU) that
 * sleeps while no session is open, polls (gains CPU time) while one is, and sleeps again once it
 * closes; the foreground worker serving a session polls before its ticks (Stats.ticks_polled);
 * with keep_awake = off there is no poller and no tick is reached polling. Waits are bounded
 * generously (a SCHED_IDLE thread gets little CPU on a loaded machine) and end as soon as the
 * awaited state is seen; no duration is asserted. Arguments: the contactd and contactctl
 * executables. */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "proc_threads.h"
#include "testlib.h"
#include "wire/scene_json.h"

/* A bound no healthy run comes near. */
#define WAIT_S 60
/* CPU time a polling thread gains for sure once it polls at all: far above what a thread that
 * wakes every 10 ms to look at one word spends in the same wait. */
#define POLLED_NS (20 * 1000 * 1000)

static const char *contactd_path, *contactctl_path;
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

static void pause_ms(long ms) {
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000}, NULL);
}

// The one CPU thread tid of the daemon may run on; fails the test when it is not pinned.
static int pinned_cpu(pid_t tid) {
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(tid, sizeof set, &set), 0);
    assert_int_equal(CPU_COUNT(&set), 1);
    for (int c = 0;; c++) {
        if (CPU_ISSET(c, &set)) {
            return c;
        }
    }
}

// Thread `name` of process pid: a thread names itself when it starts, which may be after the
// daemon is ready; fails the test when it has not appeared within WAIT_S.
static pid_t named_thread(pid_t pid, const char *name) {
    pid_t tid = t_thread_find(pid, name);
    for (int i = 0; i < WAIT_S * 1000 && tid <= 0; i++) {
        pause_ms(1);
        tid = t_thread_find(pid, name);
    }
    assert_true(tid > 0);
    return tid;
}

// The poller of the foreground worker's CPU.
static pid_t poller(void) {
    const int cpu = pinned_cpu(named_thread(d.pid, "cd-fg0"));
    char name[16];
    snprintf(name, sizeof name, "cd-awake%d", cpu);
    const pid_t tid = named_thread(d.pid, name);
    assert_int_equal(sched_getscheduler(tid), SCHED_IDLE);
    assert_int_equal(pinned_cpu(tid), cpu);
    return tid;
}

// Waits until thread tid is seen asleep; fails the test after WAIT_S.
static void assert_sleeps(pid_t tid) {
    for (int i = 0; i < WAIT_S * 1000 && t_thread_state(d.pid, tid) != 'S'; i++) {
        pause_ms(1);
    }
    assert_int_equal(t_thread_state(d.pid, tid), 'S');
}

// A request session that has had its one frame answered (so its worker serves it), then idles.
static cdc_conn *open_session(it_daemon *dm) {
    cs_scene s;
    it_scene_load("box_on_plane.json", &s);
    const cdc_limits lim = {.max_bodies = s.nb, .max_contacts = s.nc, .max_dirs = 8};
    cdc_conn *c = it_session_open(dm, false, &(cdc_hello){.client_name = "it_keep_awake",
                                                         .limits = lim, .request_mode = true});
    cdc_wire_free(it_frame_exchange(c, &s, 1));
    cd_scene_json_free(&s);
    return c;
}

static void poller_sleeps_without_sessions(void **state) {
    (void)state;
    assert_sleeps(poller());
}

static void poller_polls_while_a_session_is_open(void **state) {
    (void)state;
    const pid_t tid = poller();
    cdc_conn *c = open_session(&d);
    const int64_t before = t_thread_run_ns(d.pid, tid);
    assert_true(before >= 0);
    for (int i = 0; i < WAIT_S * 100 && t_thread_run_ns(d.pid, tid) - before < POLLED_NS; i++) {
        pause_ms(10);
    }
    assert_true(t_thread_run_ns(d.pid, tid) - before >= POLLED_NS);
    cdc_conn_close(c);
    assert_sleeps(tid);
}

// Stats.ticks_polled over a stretch of an idle session's ticks (and the ticks), from the
// session's own connection.
static uint64_t polled_over(cdc_conn *c, uint64_t *ret_ticks) {
    Contactd__V1__ServerMessage *m = it_stats_fetch(c);
    const uint64_t ticks0 = m->stats->ticks, polled0 = m->stats->ticks_polled;
    cdc_wire_free(m);
    pause_ms(500);
    m = it_stats_fetch(c);
    *ret_ticks = m->stats->ticks - ticks0;
    const uint64_t polled = m->stats->ticks_polled - polled0;
    cdc_wire_free(m);
    printf("# %" PRIu64 " of %" PRIu64 " ticks reached polling\n", polled, *ret_ticks);
    return polled;
}

// The foreground worker serving a session polls before its ticks: some of them find it polling
// (a tick whose timer wake-up came late past the poll's start is reached by the timer, so how
// many depends on the host; none would mean it never polls).
static void worker_polls_before_its_ticks(void **state) {
    (void)state;
    cdc_conn *c = open_session(&d);
    uint64_t ticks;
    uint64_t polled = polled_over(c, &ticks);
    for (int i = 0; i < WAIT_S * 2 && polled == 0; i++) {
        polled = polled_over(c, &ticks);
    }
    assert_true(ticks > 0);
    assert_true(polled > 0);
    assert_true(polled <= ticks);
    cdc_conn_close(c);
}

// keep_awake = off: no poller, and a session's worker sleeps to every tick.
static void no_poller_when_off(void **state) {
    (void)state;
    it_daemon off;
    assert_int_equal(it_daemon_start(&off, contactd_path, "[loop]\nkeep_awake = off\n", 0), 0);
    const pid_t fg = named_thread(off.pid, "cd-fg0");
    char name[16];
    snprintf(name, sizeof name, "cd-awake%d", pinned_cpu(fg));
    assert_int_equal(t_thread_find(off.pid, name), -1);
    cdc_conn *c = open_session(&off);
    uint64_t ticks;
    assert_int_equal(polled_over(c, &ticks), 0);
    assert_true(ticks > 0);
    cdc_conn_close(c);
    assert_int_equal(it_daemon_stop(&off), 0);
    it_daemon_cleanup(&off);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, true, &contactd_path, &contactctl_path) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(poller_sleeps_without_sessions),
        cmocka_unit_test(poller_polls_while_a_session_is_open),
        cmocka_unit_test(worker_polls_before_its_ticks),
        cmocka_unit_test(no_poller_when_off),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
