/* SPDX-License-Identifier: MIT */
/* The real-time workers and the tick grid. Ticks are at epoch + k * period on CLOCK_MONOTONIC. Each
 * worker CPU runs two threads: a foreground worker for the sessions whose solves are short and, one
 * priority below it on the same CPU, a background worker for the expensive ones, so the kernel
 * preempts a long solve whenever short work is due. A worker sleeps until the next tick, until the
 * I/O thread kicks it, or until a socket it serves itself (cd_loop_attach) has a frame; then runs
 * its due solves earliest deadline first (sched.h), writes the answers of the sockets it serves,
 * and wakes the I/O loop (uv_async_send, the only libuv call here) when results or ended
 * connections are left for it. Memory locking, SCHED_FIFO and CPU affinity are attempted when asked
 * for; whatever is refused is logged and the workers run without it. A pinned worker's CPU can be
 * kept from halting while it serves sessions (awake.h). */
#ifndef CONTACTD_SERVICE_LOOP_H
#define CONTACTD_SERVICE_LOOP_H
#include <stdbool.h>
#include <stdint.h>
#include "service/session.h"
#include "service/stats.h"

struct uv_async_s;

typedef struct cd_loop_params {
    int rate_hz;           /* ticks per second, 1..100000 */
    int workers;           /* worker CPUs, >= 1 (two threads each) */
    int64_t long_solve_ns; /* sessions whose solves take longer run in the background, > 0 */
    bool realtime;         /* attempt mlockall, SCHED_FIFO and CPU affinity */
    int priority;          /* foreground SCHED_FIFO priority, 2..99 (background: one less) */
    int cpu;               /* first worker's CPU, further workers the next lower ones; -1 = the
                            * highest CPUs allowed */
    bool keep_awake;       /* pinned workers' CPUs poll instead of halting while they serve
                            * sessions (awake.h), and their foreground workers poll the last
                            * stretch before each tick instead of sleeping to it */
} cd_loop_params;

/* thread: io creates, starts, stops and frees it; the workers run inside. */
typedef struct cd_loop cd_loop;

/* Stopped workers over the sessions of t that send wake whenever they leave work for the I/O
 * thread. Returns NULL on bad parameters or no memory. thread: io. */
cd_loop *cd_loop_new(cd_session_table *t, const cd_loop_params *p, struct uv_async_s *wake);

/* Frees a stopped loop. Accepts NULL. thread: io. */
void cd_loop_free(cd_loop *l);

/* Fixes the tick grid's epoch (now) and starts the workers; attempts (when p->realtime)
 * mlockall(MCL_CURRENT | MCL_FUTURE), SCHED_FIFO and pinning, logging each refusal, and then
 * (when p->keep_awake and the workers are pinned) a poller on each worker CPU. The calling
 * I/O thread keeps normal scheduling: libuv's event loop spins (sched_yield) while a
 * uv_async_send is between its two steps, so a SCHED_FIFO loop that preempted a lower-priority
 * sender on its CPU (a background worker, a pool thread) spins until the kernel's real-time
 * throttling stops it: 950 ms stalls, measured with sessions admitted and closed 50 times a
 * second, whether the loop ran above the background workers or on a CPU of its own. Returns 0,
 * or a negative errno when a worker could not be created at all. thread: io. */
int cd_loop_start(cd_loop *l);

/* Moves the calling thread to normal scheduling at nice 19 and off the workers' CPUs (when any
 * CPU is left): the admission work of libuv's pool threads (allocating, pre-faulting and freeing
 * megabytes) spends long stretches in the kernel, which on a kernel without full preemption
 * would hold a worker off its CPU, and at nice 0 it held clients sharing its CPU off it for up
 * to 1.8 ms. thread: any. */
void cd_loop_thread_off_workers(const cd_loop *l);

/* Stops and joins every worker (within one period) and every poller. Idempotent. thread: io. */
void cd_loop_stop(cd_loop *l);

/* The tick grid: a CLOCK_MONOTONIC time of one tick, and the period, ns. thread: any. */
int64_t cd_loop_epoch_ns(const cd_loop *l);
int64_t cd_loop_period_ns(const cd_loop *l);

/* Foreground workers (= worker CPUs). thread: any. */
int cd_loop_workers(const cd_loop *l);

/* The worker a new session goes to: the foreground worker whose sessions cost least, by their
 * measured solve times. thread: io. */
int cd_loop_place(const cd_loop *l);

/* Wakes the worker that owns s now (a frame this thread read is due). thread: io.
 * rt-safe: yes (one atomic add; a futex wake only when the worker sleeps). */
void cd_loop_kick(cd_loop *l, const cd_session *s);

/* Hands s's socket fd to the worker that owns s, which from now on reads its frames, solves
 * them as they come and writes the answers itself (cd_session_attach). thread: io. */
void cd_loop_attach(cd_loop *l, cd_session *s, int fd, const cd_endpoint_ops *ops, void *ctx);

/* Worker wake-ups at ticks so far (the watchdog checks that they move). thread: any. */
uint64_t cd_loop_ticks(const cd_loop *l);

/* Fills ticks, ticks_polled, overruns, wake_late_ns and realtime of *ret and adds the workers'
 * frame and solve counts (cd_counts_add); other fields untouched. thread: any. */
void cd_loop_stats(const cd_loop *l, cd_stats *ret);

#endif /* CONTACTD_SERVICE_LOOP_H */
