/* SPDX-License-Identifier: MIT */
/* The daemon's only log writer: one line per message on stderr. Under systemd (stderr is the
 * journal stream named by $JOURNAL_STREAM) each line starts with the sd-daemon "<N>" priority
 * prefix and journald adds the time and identifier; otherwise lines read "contactd: LEVEL: ...".
 * The tick thread never logs: it counts, and the I/O thread reports. */
#ifndef CONTACTD_SYS_LOG_H
#define CONTACTD_SYS_LOG_H
#include <stdbool.h>

/* Syslog priorities, as journald understands them. */
typedef enum cd_log_level {
    CD_LOG_ERR = 3,
    CD_LOG_WARNING = 4,
    CD_LOG_NOTICE = 5,
    CD_LOG_INFO = 6,
    CD_LOG_DEBUG = 7,
} cd_log_level;

/* Messages above max_level are not written. Decides once whether stderr goes to the journal.
 * thread: main, before other threads start. */
void cd_log_init(cd_log_level max_level);

/* Writes one message (printf format; no trailing newline needed) with a single write(2), so
 * lines from different threads do not interleave. thread: any but rt. rt-safe: no. */
void cd_log(cd_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses "err", "warning", "notice", "info" or "debug". Returns 0 and sets *ret, or -EINVAL.
 * thread: any. */
int cd_log_level_from_name(const char *name, cd_log_level *ret);

#endif /* CONTACTD_SYS_LOG_H */
