/* SPDX-License-Identifier: MIT */
/* sd_notify, watchdog and socket activation (see notify.h). */
#include "sys/notify.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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
