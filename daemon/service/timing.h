/* SPDX-License-Identifier: MIT */
/* The per-step timing record a Result carries: plain CLOCK_MONOTONIC nanoseconds filled by the
 * I/O thread (received, sent) and the tick thread (solve start, duration, deadline). It lives in
 * service/ so the result ring can hold it without seeing generated protobuf types; io/codec.c
 * turns it into contactd.v1.Timing. */
#ifndef CONTACTD_SERVICE_TIMING_H
#define CONTACTD_SERVICE_TIMING_H
#include <stdbool.h>
#include <stdint.h>

/* thread: written by its producer, then handed over whole (copied through the ring). */
typedef struct cd_timing {
    int64_t received_ns;    /* frame decoded by the I/O thread */
    int64_t solve_start_ns; /* tick thread began the solve */
    int64_t solve_ns;       /* wall time of the solve */
    int64_t deadline_ns;    /* absolute deadline the solve ran under */
    int64_t sent_ns;        /* result handed to the socket */
    bool deadline_met;
} cd_timing;

#endif /* CONTACTD_SERVICE_TIMING_H */
