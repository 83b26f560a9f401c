/* SPDX-License-Identifier: MIT */
/* The tick thread: wakes at a fixed rate on absolute CLOCK_MONOTONIC times, steps every session
 * with a new frame under the tick's deadline, and wakes the I/O loop (uv_async_send, its only
 * libuv call) when results are ready. Records the lateness of every wake-up and counts overruns.
 * Memory locking, SCHED_FIFO and CPU affinity are attempted when asked for; whatever is refused
 * is logged and the loop runs without it. */
#ifndef CONTACTD_SERVICE_LOOP_H
#define CONTACTD_SERVICE_LOOP_H
#include <stdbool.h>
#include <stdint.h>
#include "service/session.h"
#include "service/stats.h"

struct uv_async_s;

typedef struct cd_loop_params {
    int rate_hz;              /* ticks per second, 1..100000 */
    double deadline_fraction; /* deadline = tick start + fraction * period; in (0, 1] */
    bool realtime;            /* attempt mlockall, SCHED_FIFO and CPU affinity */
    int priority;             /* SCHED_FIFO priority, 1..99 */
    int cpu;                  /* CPU for the tick thread; -1 = the highest CPU allowed */
} cd_loop_params;

/* thread: io creates, starts, stops and frees it; the tick thread runs inside. */
typedef struct cd_loop cd_loop;

/* A stopped loop over the sessions of t that sends wake whenever a tick leaves work for the I/O
 * thread. Returns NULL on bad parameters or no memory. thread: io. */
cd_loop *cd_loop_new(cd_session_table *t, const cd_loop_params *p, struct uv_async_s *wake);

/* Frees a stopped loop. Accepts NULL. thread: io. */
void cd_loop_free(cd_loop *l);

/* Starts the tick thread; attempts (when p->realtime) mlockall(MCL_CURRENT | MCL_FUTURE),
 * SCHED_FIFO at p->priority and pinning to p->cpu, logging each refusal. Returns 0, or a
 * negative errno when no thread could be created at all. thread: io. */
int cd_loop_start(cd_loop *l);

/* Stops and joins the tick thread (within one period). Idempotent. thread: io. */
void cd_loop_stop(cd_loop *l);

/* The tick period and the solve budget after each tick start, ns. thread: any. */
int64_t cd_loop_period_ns(const cd_loop *l);
int64_t cd_loop_budget_ns(const cd_loop *l);

/* Ticks so far (the watchdog checks that it moves). thread: any. rt-safe: yes. */
uint64_t cd_loop_ticks(const cd_loop *l);

/* Fills ticks, overruns, wake_late_ns and realtime of *ret; other fields untouched.
 * thread: any. */
void cd_loop_stats(const cd_loop *l, cd_stats *ret);

#endif /* CONTACTD_SERVICE_LOOP_H */
