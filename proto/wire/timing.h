/* SPDX-License-Identifier: MIT */
/* The per-step timing record a Result carries: plain CLOCK_MONOTONIC nanoseconds filled by the
 * I/O thread (received, sent) and a worker (release, solve start, duration, deadline, why
 * missed). It lives in the wire library's plain part, free of generated types, so that service/'s
 * result ring holds it as it is and wire/codec.c turns it into contactd.v1.Timing. */
#ifndef CONTACTD_WIRE_TIMING_H
#define CONTACTD_WIRE_TIMING_H
#include <stdbool.h>
#include <stdint.h>

/* Why a deadline did not hold; values equal contactd.v1.MissReason. */
typedef enum cd_miss {
    CD_MISS_NONE = 0,
    CD_MISS_HOST = 1,       /* the worker was not running: a late wake-up, or the host took it */
    CD_MISS_SOLVER = 2,     /* the solve started on time and used up the budget */
    CD_MISS_SCHEDULING = 3, /* the worker was solving other sessions first */
    CD_MISS_IO = 4,         /* the frame was read and decoded after it was due (by the I/O
                             * thread, or by the worker that serves its socket) */
} cd_miss;

/* thread: written by its producer, then handed over whole (copied through the ring). */
typedef struct cd_timing {
    int64_t received_ns;    /* frame reached the daemon (start of the I/O pass, or of the
                             * worker's wait, that found it) */
    int64_t solve_start_ns; /* tick thread began the solve */
    int64_t solve_ns;       /* wall time of the solve */
    int64_t deadline_ns;    /* absolute deadline the solve ran under */
    int64_t sent_ns;        /* result handed to the socket */
    bool deadline_met;
    cd_miss miss;           /* CD_MISS_NONE when deadline_met */
    int64_t release_ns;     /* when the solve became due: the tick, or the frame's arrival */
    int64_t wake_late_ns;   /* lateness of the worker's wake-up before the solve */
} cd_timing;

#endif /* CONTACTD_WIRE_TIMING_H */
