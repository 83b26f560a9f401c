/* SPDX-License-Identifier: MIT */
/* sd_notify, watchdog and socket activation (see notify.h). */
#include "sys/notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "sys/log.h"

int cd_notify_ready(const char *status) {
    if (!status) {
        return sd_notify(0, "READY=1");
    }
    return sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

int cd_notify_stopping(void) {
    return sd_notify(0, "STOPPING=1");
}

static void on_watchdog(uv_timer_t *t) {
    cd_watchdog *w = t->data;
    if (w->alive(w->arg)) {
        (void)sd_notify(0, "WATCHDOG=1");
        return;
    }
    cd_log(CD_LOG_ERR, "watchdog: the tick thread made no progress, not petting the watchdog");
}

int cd_watchdog_start(cd_watchdog *w, uv_loop_t *loop, bool (*alive)(void *arg), void *arg) {
    uint64_t usec = 0;
    *w = (cd_watchdog){.alive = alive, .arg = arg};
    const int r = sd_watchdog_enabled(0, &usec);
    if (r <= 0) {
        return r;
    }
    int e = uv_timer_init(loop, &w->timer);
    if (e < 0) {
        return e;
    }
    w->timer.data = w;
    w->running = true;
    // Half the interval, as sd_watchdog_enabled(3) recommends, so one late pet is not fatal.
    const uint64_t ms = usec / 2000 > 0 ? usec / 2000 : 1;
    e = uv_timer_start(&w->timer, on_watchdog, ms, ms);
    if (e < 0) {
        cd_watchdog_stop(w);
        return e;
    }
    cd_log(CD_LOG_INFO, "watchdog: WATCHDOG=1 every %llu ms", (unsigned long long)ms);
    return 1;
}

void cd_watchdog_stop(cd_watchdog *w) {
    if (!w->running) {
        return;
    }
    w->running = false;
    uv_close((uv_handle_t *)&w->timer, NULL);
}

// $NOTIFY_SOCKET's address (a path, or "@name" for the abstract namespace). Returns its length,
// or -1 when it is unset or unusable.
static int notify_address(struct sockaddr_un *sa) {
    const char *e = getenv("NOTIFY_SOCKET");
    const size_t n = e ? strlen(e) : 0;
    if (n < 2 || n >= sizeof sa->sun_path || (e[0] != '/' && e[0] != '@')) {
        return -1;
    }
    *sa = (struct sockaddr_un){.sun_family = AF_UNIX};
    memcpy(sa->sun_path, e, n);
    if (e[0] == '@') {
        sa->sun_path[0] = '\0';
    }
    return (int)(offsetof(struct sockaddr_un, sun_path) + n);
}

static void on_status(uv_timer_t *t) {
    cd_status *s = t->data;
    char line[512], msg[sizeof line + 8];
    s->line(s->arg, line, sizeof line);
    if (s->calls++ % CD_STATUS_EVERY != 0) {
        return;
    }
    struct sockaddr_un sa;
    const int salen = notify_address(&sa);
    const int n = snprintf(msg, sizeof msg, "STATUS=%s", line);
    if (salen > 0 && n > 0) {
        // MSG_DONTWAIT: a manager that is behind loses this refresh rather than stalling us.
        (void)sendto(s->fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL,
                     (const struct sockaddr *)&sa, (socklen_t)salen);
    }
}

int cd_status_start(cd_status *s, uv_loop_t *loop,
                    void (*line)(void *arg, char *buf, size_t len), void *arg) {
    struct sockaddr_un sa;
    *s = (cd_status){.line = line, .arg = arg, .fd = -1};
    if (notify_address(&sa) < 0) {
        return 0;
    }
    s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        return -errno;
    }
    int e = uv_timer_init(loop, &s->timer);
    if (e < 0) {
        close(s->fd);
        s->fd = -1;
        return e;
    }
    s->timer.data = s;
    s->running = true;
    e = uv_timer_start(&s->timer, on_status, 1000, 1000);
    if (e < 0) {
        cd_status_stop(s);
        return e;
    }
    return 1;
}

void cd_status_stop(cd_status *s) {
    if (!s->running) {
        return;
    }
    s->running = false;
    uv_close((uv_handle_t *)&s->timer, NULL);
    close(s->fd);
    s->fd = -1;
}

int cd_notify_listen_fds(int *ret_unix_fd, int *ret_tcp_fd, char *err, size_t errlen) {
    int ufd = -1, tfd = -1;
    // unset_environment = 1: children (there are none) must not think the sockets are theirs.
    const int n = sd_listen_fds(1);
    if (n < 0) {
        snprintf(err, errlen, "socket activation: %s", strerror(-n));
        return n;
    }
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
        if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0 && ufd < 0) {
            ufd = fd;
        } else if (sd_is_socket_inet(fd, 0, SOCK_STREAM, 1, 0) > 0 && tfd < 0) {
            tfd = fd;
        } else {
            snprintf(err, errlen, "socket activation: fd %d is not a listening Unix or TCP stream "
                     "socket, or a second one of its kind", fd);
            return -EINVAL;
        }
    }
    *ret_unix_fd = ufd;
    *ret_tcp_fd = tfd;
    return n;
}
