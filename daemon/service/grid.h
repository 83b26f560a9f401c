/* SPDX-License-Identifier: MIT */
/* The tick grid: ticks at epoch_ns + k period_ns on CLOCK_MONOTONIC. One place for the integer
 * arithmetic the workers, the sessions and the I/O thread all do on it. */
#ifndef CONTACTD_SERVICE_GRID_H
#define CONTACTD_SERVICE_GRID_H
#include <stdint.h>

/* The k of the tick at or before t (floor division, also before the epoch). thread: any. */
static inline int64_t cd_grid_index(int64_t t, int64_t epoch_ns, int64_t period_ns) {
    const int64_t d = t - epoch_ns;
    return d >= 0 ? d / period_ns : -((-d + period_ns - 1) / period_ns);
}

/* The first tick strictly after t. thread: any. */
static inline int64_t cd_grid_tick_after(int64_t t, int64_t epoch_ns, int64_t period_ns) {
    return epoch_ns + (cd_grid_index(t, epoch_ns, period_ns) + 1) * period_ns;
}

#endif /* CONTACTD_SERVICE_GRID_H */
