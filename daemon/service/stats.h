/* SPDX-License-Identifier: MIT */
/* Statistics as data: {count, sum, max} accumulators and the counters a session and the whole
 * daemon keep (frames received, solved, superseded, deadline misses, dropped results, solve time,
 * wake-up lateness). Every live field has exactly one writer thread, named next to it, so updates
 * are plain relaxed stores; readers on other threads take snapshots with relaxed loads. A
 * snapshot may mix two updates in flight, which statistics tolerate; no field is ever torn. */
#ifndef CONTACTD_SERVICE_STATS_H
#define CONTACTD_SERVICE_STATS_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/histogram.h"

/* Solver statuses counted: cs_status from CS_NOANSWER (-6) to CS_FALLBACK (3), at index
 * status - CD_STATUS_MIN. */
#define CD_STATUS_MIN (-6)
#define CD_STATUS_KINDS 10
/* Miss causes counted, by cd_miss (index 0, CD_MISS_NONE, stays 0). */
#define CD_MISS_KINDS 5

/* {count, sum, max} of a series of values (ns). Zero-initialised storage is an empty counter.
 * thread: one writer, any readers. */
typedef struct cd_counter {
    _Atomic uint64_t count;
    _Atomic int64_t sum;
    _Atomic int64_t max;
} cd_counter;

/* A snapshot of a cd_counter. */
typedef struct cd_counter_value {
    uint64_t count;
    int64_t sum;
    int64_t max;
} cd_counter_value;

/* Live counters of one session, or of the whole daemon. Zero-initialised storage is all zero. */
typedef struct cd_counts {
    _Atomic uint64_t frames_received;   /* io: decoded, validated and handed to the tick thread */
    _Atomic uint64_t frames_superseded; /* io: replaced by a newer frame before a tick took it */
    _Atomic uint64_t frames_invalid;    /* io: rejected by validation (an Error was sent) */
    _Atomic uint64_t frames_limited;    /* io: refused by the rate limit or the request queue */
    _Atomic uint64_t results_unsent;    /* io: dropped because the client's write queue was full */
    _Atomic uint64_t frames_passed;     /* rt: held for a tick, then replaced by a newer frame */
    _Atomic uint64_t frames_solved;     /* rt: taken by a tick and answered */
    _Atomic uint64_t deadline_misses;   /* rt: answered after the deadline, or CS_DEADLINE */
    _Atomic uint64_t results_overflow;  /* rt: dropped because the output ring was full */
    cd_counter solve_ns;                /* rt: wall time of cs_step */
    cd_counter ahead_dropped_ns;        /* rt: wall time of solves ahead of a tick whose frame
                                         * was then superseded (no answer) */
    _Atomic uint64_t misses[CD_MISS_KINDS];     /* rt: deadline misses by cause (cd_miss) */
    _Atomic uint64_t statuses[CD_STATUS_KINDS]; /* rt: solves by cs_status (CD_STATUS_MIN) */
    cd_hist solve_hist;     /* rt: wall time of cs_step */
    cd_hist wake_late_hist; /* rt: a session's: how late the wake-up before each solve was; a
                             * foreground worker's: how late each wake-up at a tick was */
    cd_hist latency_hist;   /* whoever writes the results (io, or the worker of an attached
                             * session): frame received -> its result handed to the socket */
} cd_counts;

/* A snapshot of everything the daemon counts, plain data (what a Stats message carries). About
 * 12 KiB (three histograms): fine on any thread's stack, never in a ring. */
typedef struct cd_stats {
    uint64_t ticks;             /* tick-thread wake-ups */
    uint64_t ticks_polled;      /* of those, the ones a worker reached polling (keep_awake) */
    uint64_t overruns;          /* ticks whose work ran past the next tick's start */
    uint64_t frames_received;
    uint64_t frames_solved;
    uint64_t frames_superseded; /* replaced before solved, on either side of the hand-off */
    uint64_t frames_invalid;
    uint64_t frames_limited;    /* refused by the rate limit or the request queue */
    uint64_t deadline_misses;
    uint64_t results_dropped;   /* output ring full + client write queue full */
    cd_counter_value solve_ns;
    cd_counter_value ahead_dropped_ns; /* solves ahead of a tick dropped with their frame */
    cd_counter_value wake_late_ns; /* how late each tick-thread wake-up was */
    uint64_t misses[CD_MISS_KINDS];
    uint64_t statuses[CD_STATUS_KINDS];
    cd_hist_value solve_hist;
    cd_hist_value wake_late_hist;
    cd_hist_value latency_hist;
    uint32_t sessions;          /* sessions admitted and not yet closed */
    bool realtime;              /* SCHED_FIFO obtained for the tick thread */
} cd_stats;

/* Adds v to c. thread: c's one writer. rt-safe: yes. */
void cd_counter_add(cd_counter *c, int64_t v);

/* Reads c into *ret. thread: any. rt-safe: yes. */
void cd_counter_read(const cd_counter *c, cd_counter_value *ret);

/* Adds 1 to n. thread: n's one writer (a plain load + store, no read-modify-write needed).
 * rt-safe: yes. */
void cd_stat_inc(_Atomic uint64_t *n);

/* Reads n. thread: any. rt-safe: yes. */
uint64_t cd_stat_get(const _Atomic uint64_t *n);

/* Adds c's frame, result, miss, status and solve-time counts and its histograms to those of
 * *ret (a snapshot summed over several writers: the I/O thread's counts and each worker's);
 * leaves the other fields (ticks, wake_late_ns, sessions, realtime) as they are. thread: any.
 * rt-safe: yes. */
void cd_counts_add(const cd_counts *c, cd_stats *ret);

/* Seconds of per-second deadline-miss samples the headline keeps. */
#define CD_HEADLINE_SECONDS 60

/* The daemon's headline (the STATUS= line) from snapshots taken about once a second: open
 * sessions, ticks per second and the p99 of received -> sent latency since the previous
 * snapshot, and deadline misses in the last minute, from a ring of the cumulative miss counts of
 * the last CD_HEADLINE_SECONDS + 1 snapshots. Zero-initialised storage is empty.
 * thread: one (io). */
typedef struct cd_headline {
    uint64_t misses[CD_HEADLINE_SECONDS + 1]; /* ring: cumulative misses at each snapshot */
    int n, next;                              /* snapshots in the ring; where the next goes */
    uint64_t ticks;                           /* at the previous snapshot */
    int64_t at_ns;                            /* the previous snapshot's time, 0 before one */
    cd_hist_value latency;                    /* at the previous snapshot */
} cd_headline;

/* Takes the snapshot st (made at now_ns) and writes the headline into buf, e.g. "2 sessions,
 * 1000 ticks/s, p99 latency 41 us, 0 deadline misses in the last minute" ("-" for a rate or
 * percentile that needs a previous snapshot, or results, it does not have yet). thread: h's. */
void cd_headline_update(cd_headline *h, const cd_stats *st, int64_t now_ns, char *buf,
                        size_t len);

#endif /* CONTACTD_SERVICE_STATS_H */
