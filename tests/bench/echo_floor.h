/* SPDX-License-Identifier: MIT */
/* The host's floor under a request's send -> result: what the same client pattern costs against a
 * server that does nothing. An echo thread is pinned to the CPU the daemon's first worker takes
 * (the highest this process may use), at SCHED_FIFO 50 when allowed, and that CPU kept awake as the
 * daemon keeps its workers' CPUs with keep_awake = on (awake.h) when asked; it waits in epoll as a
 * worker does, reads one frame's bytes and writes as many back. The client writes a frame's bytes
 * at 1 kHz at a random phase (the request case's schedule) and times write -> whole reply read,
 * sleeping or polling in between, over a Unix socket pair or loopback TCP. No protobuf on either
 * side, so the floor is if anything low: the daemon's own share of a request is at least its p50 -
 * solve p50 - this floor's p50. */
#ifndef CONTACTD_BENCH_ECHO_FLOOR_H
#define CONTACTD_BENCH_ECHO_FLOOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_common.h"
#include "testlib.h"

typedef struct echo_floor_opts {
    const uint8_t *frame; /* the bytes sent each time (a packed request frame) */
    size_t len;
    int64_t warm_ns;      /* sent first and not counted */
    int64_t measure_ns;   /* sent and counted */
    bool polling;         /* the client polls its socket while the reply is due */
    bool tcp;             /* over a loopback TCP connection (TCP_NODELAY, as the daemon's and
                             the client library's) rather than a Unix socket pair */
    bool keep_awake;      /* the echo CPU is kept awake, as the daemon's keep_awake = on does */
    t_rng *rng;           /* the phase */
} echo_floor_opts;

/* Runs the floor and pushes each counted round trip (ns) into lat. Returns 0, or -1 with the
 * reason in why (no socket pair, no thread, a short read or write). *ret_fifo says whether the
 * echo thread got SCHED_FIFO. thread: the caller's (plus the echo thread it starts and joins). */
int echo_floor_run(const echo_floor_opts *o, bench_samples *lat, bool *ret_fifo, char *why,
                   size_t whylen);

#endif /* CONTACTD_BENCH_ECHO_FLOOR_H */
