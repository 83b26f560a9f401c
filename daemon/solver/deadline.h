/* SPDX-License-Identifier: MIT */
/* Internal: the deadline tests every solver and cs_step use (the library reads no clock of its
 * own; the caller's clock_ns is called).
 *
 * Two kinds of check. cs__deadline_passed() reads the clock at once: before each pivot or Newton
 * iteration. A cs__meter reads it inside the long stretches between those (forming a matrix,
 * a factorization, a product with B^-1), which at a session's limits take milliseconds: the
 * stretch counts its work in units of about one multiply-add, and the clock is read once
 * CS__METER_UNITS units have accrued. So no stretch between two reads exceeds that much work
 * (plus one row or column of it), whatever the problem size, and small problems, whose pivots
 * are shorter than that, read the clock only before each pivot as they always did. */
#ifndef CONTACTD_SOLVER_DEADLINE_H
#define CONTACTD_SOLVER_DEADLINE_H
#include <stdbool.h>
#include <stdint.h>
#include "wire/types.h"

/* Work between two clock reads of a meter: 2048 units took 2-8 us on the 2-core CI VM (0.5 ns a
 * unit in cache-resident loops, up to 4 ns in memory-bound updates of a B^-1 beyond L2), so a
 * stretch stays well inside the 50 us a solve may run past its deadline even with that VM's own
 * 20-40 us stalls, while a clock read (34 ns there, vDSO) adds about 1 %. */
#define CS__METER_UNITS 2048

static inline bool cs__deadline_passed(const cs_options *opt) {
    return opt && opt->clock_ns && opt->deadline_ns && opt->clock_ns() >= opt->deadline_ns;
}

/* Work counter of one solve. thread: the solve's. */
typedef struct cs__meter {
    const cs_options *opt; /* NULL: no deadline */
    int64_t units;         /* work since the last clock read */
    bool passed;           /* the deadline has passed (sticky) */
} cs__meter;

static inline cs__meter cs__meter_start(const cs_options *opt) {
    return (cs__meter){.opt = opt};
}

/* True when m can stop at all (a deadline and a clock were given): kernels with a faster but
 * uninterruptible path (LAPACK's blocked factorizations) take it only when this is false. */
static inline bool cs__meter_armed(const cs__meter *m) {
    return m && m->opt && m->opt->clock_ns && m->opt->deadline_ns;
}

/* Counts `units` of work; reads the clock when CS__METER_UNITS have accrued since the last read.
 * True once the deadline has passed, and from then on: the caller stops what it is doing. */
static inline bool cs__meter_add(cs__meter *m, int64_t units) {
    if (m->passed)
        return true;
    m->units += units;
    if (m->units < CS__METER_UNITS)
        return false;
    m->units = 0;
    return m->passed = cs__deadline_passed(m->opt);
}

/* True when `units` more work would read no clock and the deadline has not passed: a stretch
 * that fits may count its work once, at its end, rather than piece by piece (same reads: none). */
static inline bool cs__meter_fits(const cs__meter *m, int64_t units) {
    return !m->passed && m->units + units < CS__METER_UNITS;
}

/* Items per count of a pass over n items of `units` work each (units > 0): all n when their work
 * reads no clock or m is NULL (no deadline), so a small pass counts once at its end; else as many
 * as make about CS__METER_UNITS, at least one. */
static inline int cs__meter_chunk(const cs__meter *m, int n, int64_t units) {
    if (!m || cs__meter_fits(m, (int64_t)n * units))
        return n > 0 ? n : 1;
    return CS__METER_UNITS / units > 1 ? (int)(CS__METER_UNITS / units) : 1;
}

/* The meter to count a stretch of `units` piece by piece with: m, or NULL where the whole reads
 * no clock (the caller then counts it once at its end, with no meter calls in its loops) or
 * there is no deadline (m NULL). */
static inline cs__meter *cs__meter_piecewise(cs__meter *m, int64_t units) {
    return m && !cs__meter_fits(m, units) ? m : NULL;
}

/* Items in the piece of a chunked pass over n items that starts at item i. */
static inline int cs__chunk_len(int i, int chunk, int n) {
    return chunk < n - i ? chunk : n - i;
}

/* Reads the clock now (before a pivot or an iteration, whatever the work so far). */
static inline bool cs__meter_check(cs__meter *m) {
    if (m->passed)
        return true;
    m->units = 0;
    return m->passed = cs__deadline_passed(m->opt);
}

#endif /* CONTACTD_SOLVER_DEADLINE_H */
