/* SPDX-License-Identifier: MIT */
/* The contactd that meson built, run as a child the way systemd runs it: a temporary directory
 * holds its config, its Unix socket, its log (stderr) and the NOTIFY_SOCKET datagram socket we
 * bind; READY=1 is awaited with a timeout and the addresses are read from its STATUS; SIGTERM
 * must give STOPPING=1 and exit status 0. Shared by the integration harness, which turns these
 * failures into test failures, and by bench_service, so it has no cmocka: a failure returns -1
 * with the reason on stderr. Waits are poll() on the notify socket and a pidfd, never sleeps.
 * thread: one thread per t_daemon. Not rt code. */
#ifndef CONTACTD_TESTS_LIB_DAEMON_PROC_H
#define CONTACTD_TESTS_LIB_DAEMON_PROC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* How long t_daemon_launch waits for READY=1 and t_daemon_stop for the exit: generous for a
 * loaded 2-core CI machine; every wait ends as soon as its event happens. */
#define T_DAEMON_TIMEOUT_MS 10000

typedef struct t_daemon {
    pid_t pid;          /* -1 when not running (not started yet, or reaped) */
    int pidfd;          /* readable once the daemon exits; -1 when none */
    int notify_fd;      /* our NOTIFY_SOCKET, bound at <dir>/notify */
    int exit_status;    /* once reaped: the exit code, or 128 + signal */
    char dir[64];       /* the temporary directory; "" once t_daemon_cleanup removed it */
    char config[128];   /* <dir>/contactd.conf, written by t_daemon_launch */
    char log[128];      /* <dir>/contactd.log: the daemon's stderr */
    char socket[128];   /* its Unix socket, from the READY=1 STATUS line */
    char tcp[64];       /* "127.0.0.1:PORT", the bound port from the READY=1 STATUS line */
} t_daemon;

/* Resets d (nothing running), makes the temporary directory /tmp/contactd-<tag>-XXXXXX and binds
 * the notify socket in it. Returns 0, or -1 after printing why. */
int t_daemon_prepare(t_daemon *d, const char *tag);

/* Starts exe with argv (argv[0] first, NULL-terminated) after t_daemon_prepare, without waiting
 * for READY=1. The child: stderr appended to d->log; NOTIFY_SOCKET ours; WATCHDOG_USEC set to
 * watchdog_usec when > 0 and removed otherwise; LISTEN_FDS and LISTEN_PID removed;
 * t_daemon_child_init(parent, SIGTERM). A pidfd of an earlier child of d is closed. Returns 0,
 * or -1 after printing why. */
int t_daemon_spawn(t_daemon *d, const char *exe, char *const argv[], long watchdog_usec);

/* After t_daemon_prepare: writes d->config ([server] socket = <dir>/contactd.sock and tcp =
 * 127.0.0.1:0, then ini, which may be NULL and may repeat sections and keys, the last winning;
 * everything else is the daemon's default), starts `exe --config d->config` (t_daemon_spawn),
 * waits up to T_DAEMON_TIMEOUT_MS for READY=1 and reads d->socket and d->tcp from its STATUS.
 * Returns 0, or -1 after printing why (the daemon exited, timed out, or named no addresses). */
int t_daemon_launch(t_daemon *d, const char *exe, const char *ini, long watchdog_usec);

/* t_daemon_prepare(d, tag), then t_daemon_launch(d, exe, ini, watchdog_usec). Returns 0 or -1. */
int t_daemon_start(t_daemon *d, const char *exe, const char *tag, const char *ini,
                   long watchdog_usec);

/* Waits up to timeout_ms (0: only what has arrived) for a notify datagram containing what (e.g.
 * "STOPPING=1"); other datagrams (WATCHDOG=1) are read and dropped. The whole datagram goes to
 * buf (NUL-terminated, cut to len - 1) when buf is not NULL. Returns 0, or -1 on timeout or once
 * the daemon exited and its last datagrams are read. */
int t_daemon_notify_wait(t_daemon *d, const char *what, int timeout_ms, char *buf, size_t len);

/* True while the daemon runs; once it has exited, reaps it (sets d->exit_status, d->pid = -1)
 * and returns false. Never blocks. */
bool t_daemon_is_running(t_daemon *d);

/* Waits up to timeout_ms for the daemon to exit and reaps it (d->exit_status). Returns 0, or -1
 * when it still runs or there is no child to wait for. */
int t_daemon_wait_exit(t_daemon *d, int timeout_ms);

/* SIGTERM; expects STOPPING=1 and exit status 0 within T_DAEMON_TIMEOUT_MS. Returns 0, or -1
 * after printing why; d->pid > 0 afterwards means it did not exit (t_daemon_cleanup kills it),
 * otherwise d->exit_status holds the status. */
int t_daemon_stop(t_daemon *d);

/* Kills a daemon still running (SIGKILL) and reaps it, closes the descriptors, copies the
 * daemon's log to log_to (when not NULL and there is a log) under a line naming the directory,
 * and removes the temporary directory. Safe to call twice, and on a d t_daemon_prepare failed
 * on. */
void t_daemon_cleanup(t_daemon *d, FILE *log_to);

/* Reads the daemon's log (its stderr) into buf, NUL-terminated and cut to len - 1 bytes.
 * Returns the bytes read or -1. */
int t_daemon_log_read(const t_daemon *d, char *buf, size_t len);

/* For a child just forked from parent (the daemon's, or another helper's such as cyclictest):
 * it gets death_signal when the thread that forked it ends, exits at once if parent is already
 * gone, and runs at SCHED_OTHER whatever policy (a benchmark's SCHED_FIFO) parent had.
 * thread: the child, before exec. */
void t_daemon_child_init(pid_t parent, int death_signal);

#endif /* CONTACTD_TESTS_LIB_DAEMON_PROC_H */
