/* SPDX-License-Identifier: MIT */
/* One worker's scheduling, without threads: run every solve that is due among the worker's
 * sessions, earliest deadline first, and hand sessions whose solves turned expensive to a
 * background worker (and cheap ones back), so that a long solve never sits in front of short
 * ones. The worker thread (loop.c) calls cd_sched_run after every wake-up; tests call it with a
 * fake clock, so every rule here is checked deterministically. */
#ifndef CONTACTD_SERVICE_SCHED_H
#define CONTACTD_SERVICE_SCHED_H
#include <stdbool.h>
#include <stdint.h>
#include "service/session.h"
#include "service/stats.h"

/* thread: the worker's own (set up by io before the worker starts). */
typedef struct cd_sched {
    cd_session_table *table;
    int worker;                /* this worker's index (what cd_session_worker says) */
    int partner;               /* where sessions move when their cost changes class; -1: none */
    bool background;           /* runs the expensive sessions (below the foreground's priority) */
    int64_t long_ns;           /* solves longer than this make a session expensive */
    int64_t epoch_ns;          /* the tick grid: epoch_ns + k period_ns */
    int64_t period_ns;
    int64_t (*clock_ns)(void); /* the one clock the worker reads: cd_clock_ns, or a test's */
    int epfd;                  /* the worker's epoll (cd_session_flush), for attached sessions */
    cd_counts counts;          /* this worker's share of the daemon-wide counts */
    bool ahead_ran;            /* out of cd_sched_run: it returned after a solve ahead of a tick,
                                * with more perhaps to do: the worker reads its sockets, then
                                * calls again */
} cd_sched;

/* Runs the due solves of w's sessions, earliest deadline first (equal deadlines: the cheaper
 * session first), until none is due at the clock's time, then at most one solve ahead of a tick
 * (w->ahead_ran says whether it did: frames that arrive meanwhile are read before the next, else
 * a burst of them would wait for its tick behind the solves ahead and come after it), and lets go
 * of closed sessions. A session
 * whose cost crosses w->long_ns (upwards in the foreground, below half of it in the background) is
 * moved to w->partner after its solve. An attached session's result is written right after its
 * solve (cd_session_flush), not after the solves behind it. wake_late_ns: how late the wake-up
 * before this call was (recorded in each result's timing). Sets *ret_next_ns to the first tick
 * after the last clock reading and *ret_moved to the number of sessions moved. Returns the results
 * pushed for the I/O thread (an attached session's worker writes its own) plus the sessions let go
 * of and the attached connections that ended: when positive the I/O thread has work. thread: the
 * worker. rt-safe: yes (bounded: at most table size * (CD_REQUEST_QUEUE + 1) solves per call). */
int cd_sched_run(cd_sched *w, int64_t wake_late_ns, int64_t *ret_next_ns, int *ret_moved);

#endif /* CONTACTD_SERVICE_SCHED_H */
