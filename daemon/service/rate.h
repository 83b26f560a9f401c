/* SPDX-License-Identifier: MIT */
/* A rate limit as a virtual-time bucket (the generic cell rate algorithm): one place for the
 * arithmetic of a session's frame limit and a connection's StatsRequest limit. */
#ifndef CONTACTD_SERVICE_RATE_H
#define CONTACTD_SERVICE_RATE_H
#include <stdbool.h>
#include <stdint.h>

/* True when an arrival at now_ns conforms to one per interval_ns on average with tolerance_ns
 * of slack (a burst of 1 + tolerance_ns / interval_ns), and then moves *tat_ns (the theoretical
 * arrival time, 0 at first) one interval on; false with *ret_early_ns, how much sooner than
 * allowed it came, and *tat_ns untouched. thread: the bucket's owner. rt-safe: yes. */
static inline bool cd_rate_conforms(int64_t *tat_ns, int64_t now_ns, int64_t interval_ns,
                                    int64_t tolerance_ns, int64_t *ret_early_ns) {
    if (now_ns < *tat_ns - tolerance_ns) {
        *ret_early_ns = *tat_ns - tolerance_ns - now_ns;
        return false;
    }
    *tat_ns = (*tat_ns > now_ns ? *tat_ns : now_ns) + interval_ns;
    return true;
}

#endif /* CONTACTD_SERVICE_RATE_H */
