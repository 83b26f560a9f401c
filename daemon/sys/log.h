/* SPDX-License-Identifier: MIT */
/* The daemon's only log writer: one line per message on stderr. Under systemd (stderr is the
 * journal stream named by $JOURNAL_STREAM) each line starts with the sd-daemon "<N>" priority
 * prefix and journald adds the time and identifier; otherwise lines read "contactd: LEVEL: ...".
 * Messages about a session or a coded event go to the journal with the fields SESSION_ID= and
 * CODE= (sd_journal_send), so `journalctl SESSION_ID=7` or `CODE=ERROR_DENIED` finds them.
 * The tick thread never logs: it counts, and the I/O thread reports. */
#ifndef CONTACTD_SYS_LOG_H
#define CONTACTD_SYS_LOG_H
#include <stdbool.h>
#include <stdint.h>

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

/* As cd_log, and under systemd with the journal fields SESSION_ID=session_id (left out when 0)
 * and CODE=code (a stable upper-case event name such as "SESSION_OPENED" or an ErrorCode name;
 * left out when NULL). Outside systemd the line is cd_log's. thread: any but rt. rt-safe: no. */
void cd_log_event(cd_log_level level, uint64_t session_id, const char *code, const char *fmt,
                  ...) __attribute__((format(printf, 4, 5)));

/* Parses "err", "warning", "notice", "info" or "debug". Returns 0 and sets *ret, or -EINVAL.
 * thread: any. */
int cd_log_level_from_name(const char *name, cd_log_level *ret);

#endif /* CONTACTD_SYS_LOG_H */
