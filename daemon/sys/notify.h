/* SPDX-License-Identifier: MIT */
/* Talking to the service manager: sd_notify READY=1 (with a STATUS line saying where the daemon
 * listens), STOPPING=1, WATCHDOG=1 from a timer on the I/O loop while the tick thread is alive,
 * a STATUS line refreshed from another timer, and sockets handed over by socket activation.
 * Every call is a no-op when the daemon was not started by systemd (no $NOTIFY_SOCKET,
 * $WATCHDOG_USEC or $LISTEN_FDS). */
#ifndef CONTACTD_SYS_NOTIFY_H
#define CONTACTD_SYS_NOTIFY_H
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* Sends "READY=1" and "STATUS=<status>" (status may be NULL). Returns > 0 when sent, 0 when
 * there is no service manager to tell, or a negative errno. thread: io. */
int cd_notify_ready(const char *status);

/* Sends "STOPPING=1". Same returns. thread: io. */
int cd_notify_stopping(void);

/* The watchdog: a timer on the I/O loop that sends WATCHDOG=1 every half of $WATCHDOG_USEC
 * provided alive(arg) says the daemon still makes progress; otherwise it stays silent and the
 * service manager restarts the daemon. thread: io. */
typedef struct cd_watchdog {
    uv_timer_t timer;            /* private */
    bool (*alive)(void *arg);    /* private */
    void *arg;                   /* private */
    bool running;                /* private */
} cd_watchdog;

/* Starts the watchdog when the service manager asked for one. Returns 1 when started, 0 when
 * no watchdog was asked for, or a negative errno. thread: io. */
int cd_watchdog_start(cd_watchdog *w, uv_loop_t *loop, bool (*alive)(void *arg), void *arg);

/* Stops the watchdog and closes its timer (the loop must run once more to finish the close).
 * Idempotent. thread: io. */
void cd_watchdog_stop(cd_watchdog *w);

/* The STATUS= line kept fresh: a timer on the I/O loop calls line(arg, buf, len) once a second
 * (so line can keep per-second samples) and sends STATUS=<buf> after the first call and every
 * CD_STATUS_EVERY calls after. The datagram is sent without waiting: when the service manager
 * has not read the previous ones, this one is dropped (sd_notify would block the I/O thread).
 * thread: io. */
#define CD_STATUS_EVERY 5
typedef struct cd_status {
    uv_timer_t timer;                           /* private */
    void (*line)(void *arg, char *buf, size_t len); /* private */
    void *arg;                                  /* private */
    unsigned calls;                             /* private */
    int fd;                                     /* private: datagram socket, -1 */
    bool running;                               /* private */
} cd_status;

/* Starts the STATUS refresh when there is a service manager ($NOTIFY_SOCKET). Returns 1 when
 * started, 0 when there is none, or a negative errno. thread: io. */
int cd_status_start(cd_status *s, uv_loop_t *loop,
                    void (*line)(void *arg, char *buf, size_t len), void *arg);

/* Stops it and closes its timer (the loop must run once more to finish the close). Idempotent.
 * thread: io. */
void cd_status_stop(cd_status *s);

/* Sockets passed by socket activation ($LISTEN_FDS, e.g. config/contactd.socket): sets
 * *ret_unix_fd and *ret_tcp_fd to a listening Unix-domain and TCP stream socket, or -1 for
 * each that was not passed. Returns the number of sockets received (0 when not socket-activated)
 * or -EINVAL with a reason in err when one is neither kind or a kind comes twice.
 * thread: main, before other threads start. */
int cd_notify_listen_fds(int *ret_unix_fd, int *ret_tcp_fd, char *err, size_t errlen);

#endif /* CONTACTD_SYS_NOTIFY_H */
