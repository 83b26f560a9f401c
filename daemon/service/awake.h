/* SPDX-License-Identifier: MIT */
/* Keeps one CPU from halting while it has real-time work: a thread pinned to the CPU at SCHED_IDLE,
 * the lowest class, polls (with the CPU's spin-wait hint) whenever its busy() callback says so and
 * sleeps otherwise. The kernel runs it only when nothing else on that CPU wants to, so it takes no
 * time from any thread; what it saves is the halt: a halted CPU, and above all a halted virtual
 * CPU, takes tens of microseconds to run a thread woken by a socket, a timer or another CPU, where
 * a running one takes a few. The price is power: the CPU shows busy while its workers serve
 * sessions. README (Sessions, Workers) has what it changes in numbers. */
#ifndef CONTACTD_SERVICE_AWAKE_H
#define CONTACTD_SERVICE_AWAKE_H
#include <stdbool.h>
#include <stdint.h>

/* thread: whoever starts it stops it; the polling thread reads only busy() and its own words. */
typedef struct cd_awake cd_awake;

/* Whether the CPU has work worth staying awake for; called from the polling thread every few tens
 * of microseconds while it polls and every CD_AWAKE_IDLE_CHECK_NS while it sleeps. Must be cheap
 * and thread-safe (an atomic load). */
typedef bool (*cd_awake_busy_fn)(const void *ctx);

/* How long the thread sleeps between looks at busy() when there is no work: a session's first
 * few milliseconds may run on a halting CPU. */
#define CD_AWAKE_IDLE_CHECK_NS (10 * 1000 * 1000)

/* Starts the polling thread on cpu (named "cd-awake<cpu>"), at SCHED_IDLE. Returns 0 and the
 * handle in *ret, or a negative errno (the CPU is outside the process's set, no memory, or no
 * thread) and *ret = NULL. thread: any but the CPU's workers. */
int cd_awake_start(int cpu, cd_awake_busy_fn busy, const void *ctx, cd_awake **ret);

/* Stops and joins the thread (within CD_AWAKE_IDLE_CHECK_NS) and frees a. Accepts NULL. */
void cd_awake_stop(cd_awake *a);

/* Rounds of polling done so far, and times the thread went to sleep for lack of work: what a
 * test looks at to see it poll only while busy. thread: any. */
uint64_t cd_awake_rounds(const cd_awake *a);
uint64_t cd_awake_naps(const cd_awake *a);

#endif /* CONTACTD_SERVICE_AWAKE_H */
