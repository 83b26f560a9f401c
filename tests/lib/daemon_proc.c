/* SPDX-License-Identifier: MIT */
/* The contactd child process of the integration tests and bench_service (see daemon_proc.h). */
#include "daemon_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS INT64_C(1000000)

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 * MS + ts.tv_nsec;
}

int t_daemon_prepare(t_daemon *d, const char *tag) {
    *d = (t_daemon){.pid = -1, .pidfd = -1, .notify_fd = -1};
    snprintf(d->dir, sizeof d->dir, "/tmp/contactd-%s-XXXXXX", tag);
    if (!mkdtemp(d->dir)) {
        perror("mkdtemp");
        d->dir[0] = '\0';
        return -1;
    }
    snprintf(d->config, sizeof d->config, "%s/contactd.conf", d->dir);
    snprintf(d->log, sizeof d->log, "%s/contactd.log", d->dir);
    // The datagram socket systemd would provide.
    d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/notify", d->dir);
    if (d->notify_fd < 0 || bind(d->notify_fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("notify socket");
        return -1;
    }
    return 0;
}

void t_daemon_child_init(pid_t parent, int death_signal) {
    (void)prctl(PR_SET_PDEATHSIG, death_signal);
    if (getppid() != parent) {
        _exit(1); // the parent died before prctl took effect
    }
    const struct sched_param sp = {.sched_priority = 0};
    (void)sched_setscheduler(0, SCHED_OTHER, &sp);
}

int t_daemon_spawn(t_daemon *d, const char *exe, char *const argv[], long watchdog_usec) {
    char notify[128], wd[32];
    snprintf(notify, sizeof notify, "%s/notify", d->dir);
    snprintf(wd, sizeof wd, "%ld", watchdog_usec);
    if (d->pidfd >= 0) {
        close(d->pidfd);
        d->pidfd = -1;
    }
    const pid_t parent = getpid();
    fflush(NULL);
    d->pid = fork();
    if (d->pid < 0) {
        perror("fork");
        return -1;
    }
    if (d->pid == 0) {
        // The daemon stops should the test die before stopping it; its log goes to a file the
        // test can read, and its environment is systemd's, not whatever the test runs under.
        t_daemon_child_init(parent, SIGTERM);
        const int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dup2(fd, STDERR_FILENO);
        }
        setenv("NOTIFY_SOCKET", notify, 1);
        if (watchdog_usec > 0) {
            setenv("WATCHDOG_USEC", wd, 1);
        } else {
            unsetenv("WATCHDOG_USEC");
        }
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_PID");
        execv(exe, argv);
        perror(exe);
        _exit(127);
    }
    d->pidfd = pidfd_open(d->pid, 0);
    if (d->pidfd < 0) {
        perror("pidfd_open");
        return -1;
    }
    return 0;
}

// Parses "STATUS=listening on unix:PATH tcp:HOST:PORT" (either part may be missing). The widths
// are those of d->socket and d->tcp, less the NUL.
static void parse_status(t_daemon *d, const char *dgram) {
    const char *u = strstr(dgram, "unix:");
    const char *t = strstr(dgram, "tcp:");
    if (u) {
        sscanf(u + 5, "%127s", d->socket);
    }
    if (t) {
        sscanf(t + 4, "%63s", d->tcp);
    }
}

int t_daemon_launch(t_daemon *d, const char *exe, const char *ini, long watchdog_usec) {
    FILE *f = fopen(d->config, "w");
    if (!f) {
        perror(d->config);
        return -1;
    }
    // One user runs the tests: TCP is open to it without a token.
    const int w = fprintf(f, "[server]\nsocket = %s/contactd.sock\ntcp = 127.0.0.1:0\n"
                          "tcp_allow_any_local_user = yes\n%s", d->dir, ini ? ini : "");
    if (fclose(f) != 0 || w < 0) {
        perror(d->config);
        return -1;
    }
    char *const argv[] = {"contactd", "--config", d->config, NULL};
    if (t_daemon_spawn(d, exe, argv, watchdog_usec) < 0) {
        return -1;
    }
    char dgram[1024];
    if (t_daemon_notify_wait(d, "READY=1", T_DAEMON_TIMEOUT_MS, dgram, sizeof dgram) < 0) {
        if (t_daemon_is_running(d)) {
            fprintf(stderr, "daemon_proc: no READY=1 from %s within %d ms\n", exe,
                    T_DAEMON_TIMEOUT_MS);
        } else {
            fprintf(stderr, "daemon_proc: %s exited with status %d before READY=1\n", exe,
                    d->exit_status);
        }
        return -1;
    }
    parse_status(d, dgram);
    if (d->socket[0] == '\0' || d->tcp[0] == '\0') {
        fprintf(stderr, "daemon_proc: READY=1 without both addresses: '%s'\n", dgram);
        return -1;
    }
    return 0;
}

int t_daemon_start(t_daemon *d, const char *exe, const char *tag, const char *ini,
                   long watchdog_usec) {
    if (t_daemon_prepare(d, tag) < 0) {
        return -1;
    }
    return t_daemon_launch(d, exe, ini, watchdog_usec);
}

int t_daemon_notify_wait(t_daemon *d, const char *what, int timeout_ms, char *buf, size_t len) {
    char dgram[1024];
    struct pollfd p[2] = {{.fd = d->notify_fd, .events = POLLIN},
                          {.fd = d->pidfd, .events = POLLIN}};
    const int64_t end_ns = now_ns() + timeout_ms * MS;
    for (;;) {
        // Other datagrams (WATCHDOG=1) do not extend the wait. The daemon exiting ends it too,
        // but only after its last datagrams have been read.
        const int64_t left_ns = end_ns - now_ns();
        const int n = poll(p, 2, left_ns > 0 ? (int)((left_ns + MS - 1) / MS) : 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        if (p[0].revents & POLLIN) {
            const ssize_t k = recv(d->notify_fd, dgram, sizeof dgram - 1, 0);
            if (k < 0) {
                return -1;
            }
            dgram[k] = '\0';
            if (strstr(dgram, what)) {
                if (buf) {
                    snprintf(buf, len, "%s", dgram);
                }
                return 0;
            }
            continue;
        }
        if (p[1].revents & POLLIN) {
            return -1;
        }
    }
}

int t_daemon_wait_exit(t_daemon *d, int timeout_ms) {
    if (d->pid <= 0) {
        return -1;
    }
    struct pollfd p = {.fd = d->pidfd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) != 1) {
        return -1;
    }
    int st;
    if (waitpid(d->pid, &st, 0) != d->pid) {
        return -1;
    }
    d->pid = -1;
    d->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

bool t_daemon_is_running(t_daemon *d) {
    return d->pid > 0 && t_daemon_wait_exit(d, 0) < 0;
}

int t_daemon_stop(t_daemon *d) {
    if (d->pid <= 0) {
        fprintf(stderr, "daemon_proc: no daemon running to stop\n");
        return -1;
    }
    if (kill(d->pid, SIGTERM) < 0) {
        perror("kill");
        return -1;
    }
    // One deadline for both: STOPPING=1, then the exit.
    const int64_t end_ns = now_ns() + T_DAEMON_TIMEOUT_MS * MS;
    const bool stopping =
        t_daemon_notify_wait(d, "STOPPING=1", T_DAEMON_TIMEOUT_MS, NULL, 0) == 0;
    if (!stopping) {
        fprintf(stderr, "daemon_proc: no STOPPING=1 after SIGTERM\n");
    }
    const int64_t left_ms = (end_ns - now_ns()) / MS;
    if (t_daemon_wait_exit(d, left_ms > 0 ? (int)left_ms : 0) < 0) {
        fprintf(stderr, "daemon_proc: contactd did not exit within %d ms of SIGTERM\n",
                T_DAEMON_TIMEOUT_MS);
        return -1;
    }
    if (d->exit_status != 0) {
        fprintf(stderr, "daemon_proc: contactd exited with status %d after SIGTERM\n",
                d->exit_status);
        return -1;
    }
    return stopping ? 0 : -1;
}

void t_daemon_cleanup(t_daemon *d, FILE *log_to) {
    if (d->pid > 0) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, NULL, 0);
        d->pid = -1;
    }
    if (d->pidfd >= 0) {
        close(d->pidfd);
        d->pidfd = -1;
    }
    if (d->notify_fd >= 0) {
        close(d->notify_fd);
        d->notify_fd = -1;
    }
    if (d->dir[0] == '\0') {
        return;
    }
    FILE *f = log_to ? fopen(d->log, "r") : NULL;
    if (f) {
        char chunk[4096];
        size_t k;
        fprintf(log_to, "---- contactd log (%s) ----\n", d->dir);
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
            fwrite(chunk, 1, k, log_to);
        }
        fclose(f);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "daemon_proc: cannot remove %s\n", d->dir);
    }
    d->dir[0] = '\0';
}

int t_daemon_log_read(const t_daemon *d, char *buf, size_t len) {
    FILE *f = fopen(d->log, "r");
    if (!f) {
        return -1;
    }
    const size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return (int)n;
}
