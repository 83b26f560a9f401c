/* SPDX-License-Identifier: MIT */
/* The CPU poller (awake.c): it runs on its CPU in the SCHED_IDLE class, polls only while its
 * busy() says so, sleeps otherwise, and stops when asked. Waits are bounded generously (a
 * SCHED_IDLE thread gets little CPU on a loaded machine) and end as soon as the awaited count
 * moves; no duration is asserted. */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "service/awake.h"
#include "service/clock.h"
#include "proc_threads.h"
#include "testlib.h"

/* A bound no healthy run comes near. */
#define WAIT_NS (60 * CD_NS_PER_S)

static bool read_flag(const void *ctx) {
    return atomic_load((const _Atomic bool *)ctx);
}

// Waits until f(a) exceeds above; false when WAIT_NS passed first.
static bool wait_above(uint64_t (*f)(const cd_awake *), const cd_awake *a, uint64_t above) {
    const int64_t end = cd_clock_ns() + WAIT_NS;
    while (f(a) <= above) {
        if (cd_clock_ns() > end) {
            return false;
        }
        cd_clock_sleep_until(cd_clock_ns() + 1000000);
    }
    return true;
}

// The CPU the test may use: the highest in its set, as the daemon picks for its workers.
static int some_cpu(void) {
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    for (int c = CPU_SETSIZE - 1; c >= 0; c--) {
        if (CPU_ISSET(c, &set)) {
            return c;
        }
    }
    fail_msg("no CPU in the affinity set");
    return -1;
}

static void polls_on_its_cpu_at_idle_class(void **state) {
    (void)state;
    _Atomic bool busy = true;
    const int cpu = some_cpu();
    cd_awake *a;
    assert_int_equal(cd_awake_start(cpu, read_flag, &busy, &a), 0);
    char name[16];
    snprintf(name, sizeof name, "cd-awake%d", cpu);
    const pid_t tid = t_thread_find(0, name);
    assert_true(tid > 0);
    assert_int_equal(sched_getscheduler(tid), SCHED_IDLE);
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(tid, sizeof set, &set), 0);
    assert_int_equal(CPU_COUNT(&set), 1);
    assert_true(CPU_ISSET(cpu, &set));
    assert_true(wait_above(cd_awake_rounds, a, 0));
    cd_awake_stop(a);
    assert_int_equal(t_thread_find(0, name), -1);
}

static void sleeps_while_not_busy(void **state) {
    (void)state;
    _Atomic bool busy = false;
    cd_awake *a;
    assert_int_equal(cd_awake_start(some_cpu(), read_flag, &busy, &a), 0);
    assert_true(wait_above(cd_awake_naps, a, 1));
    assert_int_equal(cd_awake_rounds(a), 0);
    // Busy: it polls; idle again: once it has gone to sleep, it polls no more.
    atomic_store(&busy, true);
    assert_true(wait_above(cd_awake_rounds, a, 0));
    atomic_store(&busy, false);
    const uint64_t naps = cd_awake_naps(a);
    assert_true(wait_above(cd_awake_naps, a, naps));
    const uint64_t rounds = cd_awake_rounds(a);
    assert_true(wait_above(cd_awake_naps, a, cd_awake_naps(a)));
    assert_int_equal(cd_awake_rounds(a), rounds);
    cd_awake_stop(a);
}

static void refuses_a_cpu_outside_the_set(void **state) {
    (void)state;
    _Atomic bool busy = false;
    cd_awake *a = (cd_awake *)&busy;
    assert_int_equal(cd_awake_start(-1, read_flag, &busy, &a), -EINVAL);
    assert_null(a);
    // A CPU the process may not run on: the thread's affinity is refused.
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    int outside = -1;
    for (int c = 0; c < CPU_SETSIZE && outside < 0; c++) {
        outside = CPU_ISSET(c, &set) ? -1 : c;
    }
    assert_true(outside >= 0);
    assert_true(cd_awake_start(outside, read_flag, &busy, &a) < 0);
    assert_null(a);
    cd_awake_stop(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(polls_on_its_cpu_at_idle_class),
        cmocka_unit_test(sleeps_while_not_busy),
        cmocka_unit_test(refuses_a_cpu_outside_the_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
