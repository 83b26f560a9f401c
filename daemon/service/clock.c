/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC reads and absolute sleeps in nanoseconds (see clock.h). */
#include "service/clock.h"

#include <errno.h>
#include <time.h>

int64_t cd_clock_ns(void) {
    struct timespec ts;
    // CLOCK_MONOTONIC cannot fail on Linux with a valid pointer; no error path is needed.
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * CD_NS_PER_S + ts.tv_nsec;
}

void cd_clock_sleep_until(int64_t t_ns) {
    const struct timespec ts = {.tv_sec = (time_t)(t_ns / CD_NS_PER_S),
                                .tv_nsec = (long)(t_ns % CD_NS_PER_S)};
    // clock_nanosleep returns the error number directly; EINTR (a signal) restarts the same
    // absolute wait, which is why TIMER_ABSTIME is used rather than a relative delay.
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}
