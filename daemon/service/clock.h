/* SPDX-License-Identifier: MIT */
/* The daemon's one time base: CLOCK_MONOTONIC in int64_t nanoseconds, and an absolute-time sleep
 * on it. Every timestamp in a timing record, every deadline and every tick time comes from here,
 * so they can be compared with each other and with a client's clock on the same host. */
#ifndef CONTACTD_SERVICE_CLOCK_H
#define CONTACTD_SERVICE_CLOCK_H
#include <stdint.h>

#define CD_NS_PER_S INT64_C(1000000000)

/* Now, CLOCK_MONOTONIC, in ns. Also the solver's deadline clock (cs_options.clock_ns).
 * thread: any. rt-safe: yes (vDSO, no syscall on Linux/x86-64). */
int64_t cd_clock_ns(void);

/* Sleeps until the absolute CLOCK_MONOTONIC time t_ns (TIMER_ABSTIME, so there is no drift from
 * computing a relative delay). Returns at once when t_ns has passed; an interrupting signal
 * resumes the same absolute sleep. thread: any. rt-safe: yes (the blocking is the point). */
void cd_clock_sleep_until(int64_t t_ns);

#endif /* CONTACTD_SERVICE_CLOCK_H */
