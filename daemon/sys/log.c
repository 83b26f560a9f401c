/* SPDX-License-Identifier: MIT */
/* Logging to stderr, journald-aware (see log.h). */
#include "sys/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

static const char *const level_names[] = {
    [CD_LOG_ERR] = "err",   [CD_LOG_WARNING] = "warning", [CD_LOG_NOTICE] = "notice",
    [CD_LOG_INFO] = "info", [CD_LOG_DEBUG] = "debug",
};

static cd_log_level max_level = CD_LOG_INFO;
static bool to_journal;

// True when stderr is the stream systemd connected to journald: $JOURNAL_STREAM holds its
// "device:inode" (systemd.exec(5)), which tells it apart from a stderr the service redirected.
static bool stderr_is_journal(void) {
    const char *js = getenv("JOURNAL_STREAM");
    struct stat st;
    uintmax_t dev, ino;
    if (!js || sscanf(js, "%ju:%ju", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0) {
        return false;
    }
    return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

void cd_log_init(cd_log_level level) {
    max_level = level;
    to_journal = stderr_is_journal();
}

// One journal field "NAME=value" formatted into buf (cut to fit).
static struct iovec field(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static struct iovec field(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return (struct iovec){.iov_base = buf, .iov_len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n
                                                                                  : cap - 1};
}

// Formats one message into line (cut to fit) and writes it: to the journal with its fields
// when there are any and stderr is the journal, else as one stderr line.
static void vlog(cd_log_level level, uint64_t session_id, const char *code, const char *fmt,
                 va_list ap) {
    char line[1024];
    int n = to_journal ? snprintf(line, sizeof line, "<%d>", (int)level)
                       : snprintf(line, sizeof line, "contactd: %s: ", level_names[level]);
    const int head = n;
    const int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    // A message too long for the buffer is cut; the line still ends with its newline.
    n = m < 0 ? n : n + m;
    if ((size_t)n > sizeof line - 2) {
        n = (int)sizeof line - 2;
    }
    line[n] = '\0';
    if (to_journal && (session_id || code)) {
        char msg[sizeof line + 8], pri[16], sid[32], cod[64];
        struct iovec iov[5];
        int k = 0;
        iov[k++] = field(msg, sizeof msg, "MESSAGE=%s", line + head);
        iov[k++] = field(pri, sizeof pri, "PRIORITY=%d", (int)level);
        iov[k++] = (struct iovec){.iov_base = (char *)"SYSLOG_IDENTIFIER=contactd",
                                  .iov_len = strlen("SYSLOG_IDENTIFIER=contactd")};
        if (session_id) {
            iov[k++] = field(sid, sizeof sid, "SESSION_ID=%" PRIu64, session_id);
        }
        if (code) {
            iov[k++] = field(cod, sizeof cod, "CODE=%s", code);
        }
        // Without a journal socket to take it, the message goes to stderr as any other.
        if (sd_journal_sendv(iov, k) >= 0) {
            return;
        }
    }
    line[n++] = '\n';
    // One write per line keeps lines whole when threads log at once; a failed log write has
    // nowhere to be reported.
    (void)!write(STDERR_FILENO, line, (size_t)n);
}

void cd_log(cd_log_level level, const char *fmt, ...) {
    if (level > max_level) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vlog(level, 0, NULL, fmt, ap);
    va_end(ap);
}

void cd_log_event(cd_log_level level, uint64_t session_id, const char *code, const char *fmt,
                  ...) {
    if (level > max_level) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vlog(level, session_id, code, fmt, ap);
    va_end(ap);
}

int cd_log_level_from_name(const char *name, cd_log_level *ret) {
    for (int i = CD_LOG_ERR; i <= CD_LOG_DEBUG; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *ret = (cd_log_level)i;
            return 0;
        }
    }
    return -EINVAL;
}
