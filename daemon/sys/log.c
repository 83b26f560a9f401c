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
#include <unistd.h>

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

void cd_log(cd_log_level level, const char *fmt, ...) {
    if (level > max_level) {
        return;
    }
    char line[1024];
    int n = to_journal ? snprintf(line, sizeof line, "<%d>", (int)level)
                       : snprintf(line, sizeof line, "contactd: %s: ", level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    const int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    // A message too long for the buffer is cut; the line still ends with its newline.
    n = m < 0 ? n : n + m;
    if ((size_t)n > sizeof line - 2) {
        n = (int)sizeof line - 2;
    }
    line[n++] = '\n';
    // One write per line keeps lines whole when threads log at once; a failed log write has
    // nowhere to be reported.
    (void)!write(STDERR_FILENO, line, (size_t)n);
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
