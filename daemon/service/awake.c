/* SPDX-License-Identifier: MIT */
/* The polling thread of one CPU (see awake.h). */
#include "service/awake.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "service/clock.h"

/* Spin-wait hints between two looks at busy(): about 30 us on the machine here (an x86 `pause`
 * lasts about a hundred cycles there), so a session's end is seen within a tick while the look
 * itself costs nothing measurable. */
#define HINTS_PER_ROUND 1024

struct cd_awake {
    pthread_t thread;
    int cpu;
    cd_awake_busy_fn busy;
    const void *ctx;
    _Atomic bool running;
    _Atomic uint64_t rounds;
    _Atomic uint64_t naps;
    sem_t ready;   /* posted once the thread has its class: start waits for it */
    int class_err; /* 0 or the errno refusing SCHED_IDLE; the thread then ends at once */
};

// Tells the CPU (and a hypervisor that watches for it) that this is a spin-wait: on x86 `pause`
// lets an SMT sibling run and keeps the loop from flooding the memory pipeline.
static inline void spin_hint(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

static void *awake_main(void *arg) {
    cd_awake *a = arg;
    char name[16];
    snprintf(name, sizeof name, "cd-awake%d", a->cpu % 10000);
    (void)pthread_setname_np(pthread_self(), name);
    // glibc's thread attributes take only OTHER, FIFO and RR, so the class is set here, and a
    // thread that cannot have it never polls at a class that would compete for the CPU.
    const struct sched_param sp = {.sched_priority = 0};
    a->class_err = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    const bool ok = a->class_err == 0;
    sem_post(&a->ready);
    if (!ok) {
        return NULL;
    }
    // relaxed: the flag carries no data; a stop is seen within one round or one nap.
    while (atomic_load_explicit(&a->running, memory_order_relaxed)) {
        if (!a->busy(a->ctx)) {
            atomic_fetch_add_explicit(&a->naps, 1, memory_order_relaxed);
            cd_clock_sleep_until(cd_clock_ns() + CD_AWAKE_IDLE_CHECK_NS);
            continue;
        }
        for (int i = 0; i < HINTS_PER_ROUND; i++) {
            spin_hint();
        }
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    return NULL;
}

int cd_awake_start(int cpu, cd_awake_busy_fn busy, const void *ctx, cd_awake **ret) {
    *ret = NULL;
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        return -EINVAL;
    }
    cd_awake *a = calloc(1, sizeof *a);
    if (!a) {
        return -ENOMEM;
    }
    *a = (cd_awake){.cpu = cpu, .busy = busy, .ctx = ctx};
    atomic_init(&a->running, true);
    atomic_init(&a->rounds, 0);
    atomic_init(&a->naps, 0);
    if (sem_init(&a->ready, 0, 0) < 0) {
        free(a);
        return -errno;
    }
    pthread_attr_t attr;
    int r = pthread_attr_init(&attr);
    if (r == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        r = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
        if (r == 0) {
            // Every signal blocked, as on the workers: handlers run on the I/O thread.
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);
            r = pthread_create(&a->thread, &attr, awake_main, a);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        pthread_attr_destroy(&attr);
    }
    if (r == 0) {
        // SCHED_IDLE needs no privilege (it is the class that yields to every other), so a
        // refusal is rare: a kernel without it, or a seccomp filter.
        while (sem_wait(&a->ready) < 0 && errno == EINTR) {
        }
        r = a->class_err;
        if (r != 0) {
            pthread_join(a->thread, NULL);
        }
    }
    if (r != 0) {
        sem_destroy(&a->ready);
        free(a);
        return -r;
    }
    *ret = a;
    return 0;
}

void cd_awake_stop(cd_awake *a) {
    if (!a) {
        return;
    }
    atomic_store_explicit(&a->running, false, memory_order_relaxed);
    pthread_join(a->thread, NULL);
    sem_destroy(&a->ready);
    free(a);
}

uint64_t cd_awake_rounds(const cd_awake *a) {
    return atomic_load_explicit(&a->rounds, memory_order_relaxed);
}

uint64_t cd_awake_naps(const cd_awake *a) {
    return atomic_load_explicit(&a->naps, memory_order_relaxed);
}
