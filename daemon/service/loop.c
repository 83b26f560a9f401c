/* SPDX-License-Identifier: MIT */
/* The fixed-rate tick thread (see loop.h). Tick k is scheduled at t0 + k * period on the
 * CLOCK_MONOTONIC grid, slept for with TIMER_ABSTIME so no error accumulates, and its deadline is
 * its scheduled start plus the budget (not its actual wake-up), so a late wake-up shortens the
 * budget instead of moving the grid. */
#include "service/loop.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <uv.h>

#include "service/clock.h"
#include "sys/log.h"

struct cd_loop {
    cd_session_table *table;
    uv_async_t *wake;
    int64_t period_ns;
    int64_t budget_ns;
    cd_loop_params p;
    pthread_t thread;        /* io */
    bool started;            /* io */
    bool realtime;           /* io: SCHED_FIFO obtained */
    _Atomic bool running;    /* io writes, rt reads */
    _Atomic uint64_t ticks;  /* rt */
    _Atomic uint64_t overruns; /* rt */
    cd_counter wake_late_ns; /* rt */
};

cd_loop *cd_loop_new(cd_session_table *t, const cd_loop_params *p, struct uv_async_s *wake) {
    if (p->rate_hz < 1 || p->rate_hz > 100000 || !(p->deadline_fraction > 0.0) ||
        p->deadline_fraction > 1.0 || p->priority < 1 || p->priority > 99 || p->cpu < -1) {
        return NULL;
    }
    cd_loop *l = calloc(1, sizeof *l);
    if (!l) {
        return NULL;
    }
    l->table = t;
    l->wake = wake;
    l->p = *p;
    l->period_ns = CD_NS_PER_S / p->rate_hz;
    l->budget_ns = (int64_t)(p->deadline_fraction * (double)l->period_ns);
    atomic_init(&l->running, false);
    return l;
}

void cd_loop_free(cd_loop *l) {
    free(l);
}

// thread: rt. The whole life of the tick thread; no malloc, no locks, no logging.
static void *tick_main(void *arg) {
    cd_loop *l = arg;
    int64_t next = cd_clock_ns() + l->period_ns;
    uint64_t tick = 0;
    // acquire: pairs with the release in cd_loop_stop; nothing else is published through it,
    // it only ends the loop.
    while (atomic_load_explicit(&l->running, memory_order_acquire)) {
        cd_clock_sleep_until(next);
        cd_counter_add(&l->wake_late_ns, cd_clock_ns() - next);
        tick++;
        cd_stat_inc(&l->ticks);
        if (cd_session_table_tick(l->table, tick, next + l->budget_ns) > 0) {
            // One non-blocking eventfd write; libuv coalesces wakes the I/O loop has not seen.
            (void)uv_async_send(l->wake);
        }
        next += l->period_ns;
        const int64_t done = cd_clock_ns();
        if (done > next) {
            // The work ran into the next tick. That tick starts late (its lateness is recorded);
            // whole periods already gone are skipped rather than run back to back.
            cd_stat_inc(&l->overruns);
            next += (done - next) / l->period_ns * l->period_ns;
        }
    }
    return NULL;
}

// The CPU to pin to: p->cpu, or the highest-numbered CPU this process may run on (CPU 0 usually
// takes the most interrupts). Returns -1 when there is none to choose.
static int pick_cpu(const cd_loop *l) {
    if (l->p.cpu >= 0) {
        return l->p.cpu;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0) {
        return -1;
    }
    for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--) {
        if (CPU_ISSET(cpu, &set)) {
            return cpu;
        }
    }
    return -1;
}

// Returns true when all present and future memory of the process is locked.
static bool lock_memory(void) {
#if defined(__SANITIZE_ADDRESS__)
    // ASan maps terabytes of shadow memory; locking it all would exhaust the machine.
    cd_log(CD_LOG_WARNING, "mlockall skipped in an AddressSanitizer build, memory stays pageable");
    return false;
#else
    if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0) {
        cd_log(CD_LOG_WARNING, "mlockall refused (%s), continuing with pageable memory",
               strerror(errno));
        return false;
    }
    return true;
#endif
}

static int create_thread(cd_loop *l, bool fifo) {
    pthread_attr_t attr;
    int r = pthread_attr_init(&attr);
    if (r != 0) {
        return r;
    }
    if (fifo) {
        const struct sched_param sp = {.sched_priority = l->p.priority};
        r = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        if (r == 0) {
            r = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
        }
        if (r == 0) {
            r = pthread_attr_setschedparam(&attr, &sp);
        }
    }
    if (r == 0) {
        // The tick thread starts with every signal blocked (it inherits the mask), so signal
        // handlers run on the I/O thread and never interrupt a solve.
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = pthread_create(&l->thread, &attr, tick_main, l);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_attr_destroy(&attr);
    return r;
}

int cd_loop_start(cd_loop *l) {
    if (l->started) {
        return -EALREADY;
    }
    const bool locked = l->p.realtime && lock_memory();
    // release: pairs with the acquire in tick_main (and the thread start orders it anyway).
    atomic_store_explicit(&l->running, true, memory_order_release);
    int r = l->p.realtime ? create_thread(l, true) : EPERM;
    l->realtime = r == 0;
    if (r != 0) {
        if (l->p.realtime) {
            cd_log(CD_LOG_WARNING, "SCHED_FIFO refused (%s), continuing at normal priority",
                   strerror(r));
        }
        r = create_thread(l, false);
        if (r != 0) {
            atomic_store_explicit(&l->running, false, memory_order_relaxed);
            cd_log(CD_LOG_ERR, "cannot start the tick thread: %s", strerror(r));
            return -r;
        }
    }
    l->started = true;
    int cpu = -1;
    if (l->p.realtime) {
        cpu = pick_cpu(l);
        cpu_set_t set;
        CPU_ZERO(&set);
        if (cpu >= 0 && cpu < CPU_SETSIZE) {
            CPU_SET(cpu, &set);
        }
        r = cpu >= 0 ? pthread_setaffinity_np(l->thread, sizeof set, &set) : EINVAL;
        if (r != 0) {
            cd_log(CD_LOG_WARNING, "pinning the tick thread to CPU %d refused (%s), continuing "
                   "unpinned", cpu, strerror(r));
            cpu = -1;
        }
    }
    char where[32] = "";
    if (cpu >= 0) {
        snprintf(where, sizeof where, " on CPU %d", cpu);
    }
    cd_log(CD_LOG_INFO,
           "tick thread: %d Hz, deadline %lld ns after each tick start, %s%s, memory %s",
           l->p.rate_hz, (long long)l->budget_ns, l->realtime ? "SCHED_FIFO" : "normal priority",
           where, locked ? "locked" : "pageable");
    return 0;
}

void cd_loop_stop(cd_loop *l) {
    if (!l->started) {
        return;
    }
    // release: pairs with the acquire in tick_main.
    atomic_store_explicit(&l->running, false, memory_order_release);
    pthread_join(l->thread, NULL);
    l->started = false;
}

int64_t cd_loop_period_ns(const cd_loop *l) {
    return l->period_ns;
}

int64_t cd_loop_budget_ns(const cd_loop *l) {
    return l->budget_ns;
}

uint64_t cd_loop_ticks(const cd_loop *l) {
    return cd_stat_get(&l->ticks);
}

void cd_loop_stats(const cd_loop *l, cd_stats *ret) {
    ret->ticks = cd_stat_get(&l->ticks);
    ret->overruns = cd_stat_get(&l->overruns);
    cd_counter_read(&l->wake_late_ns, &ret->wake_late_ns);
    ret->realtime = l->realtime;
}
