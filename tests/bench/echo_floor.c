/* SPDX-License-Identifier: MIT */
/* The echo server and its client (see echo_floor.h). */
#include "echo_floor.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "service/awake.h"
#include "service/clock.h"

#define PERIOD_NS (1000 * 1000) /* the request client's 1 kHz */
#define ECHO_PRIORITY 50        /* the daemon's default foreground priority */
#define ECHO_MAX 65536

typedef struct echo {
    int fd;
    size_t len;
    _Atomic bool serving; /* for the poller: true while the client runs */
} echo;

static bool serving(const void *ctx) {
    return atomic_load_explicit(&((const echo *)ctx)->serving, memory_order_relaxed);
}

// Reads or writes exactly n bytes on fd; false on EOF or error.
static bool io_all(int fd, uint8_t *p, size_t n, bool out) {
    while (n > 0) {
        const ssize_t r = out ? write(fd, p, n) : read(fd, p, n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return false;
        }
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static void *echo_main(void *arg) {
    echo *e = arg;
    static uint8_t buf[ECHO_MAX]; // one echo thread at a time
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, e->fd, &ev) < 0) {
        return NULL;
    }
    for (;;) {
        if (epoll_wait(ep, &ev, 1, -1) < 0 && errno == EINTR) {
            continue;
        }
        if (!io_all(e->fd, buf, e->len, false) || !io_all(e->fd, buf, e->len, true)) {
            break;
        }
    }
    close(ep);
    return NULL;
}

// The highest CPU this process may use: where the daemon's first worker goes.
static int worker_cpu(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0) {
        return -1;
    }
    for (int c = CPU_SETSIZE - 1; c >= 0; c--) {
        if (CPU_ISSET(c, &set)) {
            return c;
        }
    }
    return -1;
}

// Starts e's thread on cpu, at SCHED_FIFO when allowed (*ret_fifo says). Returns 0 or an errno.
static int start_echo(echo *e, int cpu, pthread_t *t, bool *ret_fifo) {
    for (int fifo = 1; fifo >= 0; fifo--) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof set, &set);
        if (fifo) {
            const struct sched_param sp = {.sched_priority = ECHO_PRIORITY};
            pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
            pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
            pthread_attr_setschedparam(&attr, &sp);
        }
        const int r = pthread_create(t, &attr, echo_main, e);
        pthread_attr_destroy(&attr);
        if (r == 0 || !fifo) {
            *ret_fifo = fifo && r == 0;
            return r;
        }
    }
    return EINVAL;
}

// A connected pair of loopback TCP sockets, both TCP_NODELAY; 0, or -1 with errno set.
static int tcp_pair(int sv[2]) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    const int one = 1;
    const int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sv[1] = -1;
    const bool ok = ls >= 0 && sv[0] >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 &&
                    listen(ls, 1) == 0 && getsockname(ls, (struct sockaddr *)&a, &alen) == 0 &&
                    connect(sv[0], (struct sockaddr *)&a, sizeof a) == 0 &&
                    (sv[1] = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) >= 0 &&
                    setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0 &&
                    setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0;
    const int err = errno;
    if (ls >= 0) {
        close(ls);
    }
    if (!ok) {
        for (int k = 0; k < 2; k++) {
            if (sv[k] >= 0) {
                close(sv[k]);
            }
        }
        errno = err;
        return -1;
    }
    return 0;
}

int echo_floor_run(const echo_floor_opts *o, bench_samples *lat, bool *ret_fifo, char *why,
                   size_t whylen) {
    int sv[2];
    const int cpu = worker_cpu();
    if (o->len == 0 || o->len > ECHO_MAX || cpu < 0) {
        snprintf(why, whylen, "frame of %zu bytes or no CPU", o->len);
        return -1;
    }
    if ((o->tcp ? tcp_pair(sv) : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) < 0) {
        snprintf(why, whylen, "%s: %s", o->tcp ? "loopback TCP" : "socketpair", strerror(errno));
        return -1;
    }
    echo e = {.fd = sv[1], .len = o->len};
    atomic_init(&e.serving, true);
    pthread_t t;
    int r = start_echo(&e, cpu, &t, ret_fifo);
    if (r != 0) {
        snprintf(why, whylen, "echo thread: %s", strerror(r));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    cd_awake *awake = NULL;
    if (o->keep_awake) {
        (void)cd_awake_start(cpu, serving, &e, &awake);
    }
    // The request case's schedule: a random first offset, and a clock slow by one period over
    // the run so the phase sweeps a whole period.
    const int64_t n = (o->warm_ns + o->measure_ns) / PERIOD_NS;
    const int64_t interval = PERIOD_NS + PERIOD_NS / (n > 1 ? n : 1);
    const int64_t start = cd_clock_ns() + 5 * PERIOD_NS;
    const int64_t count_from = start + o->warm_ns;
    int64_t next = start + (int64_t)(t_rng_unit(o->rng) * PERIOD_NS);
    uint8_t reply[ECHO_MAX];
    r = 0;
    for (int64_t k = 0; k < n && r == 0; k++, next += interval) {
        cd_clock_sleep_until(next);
        const int64_t t0 = cd_clock_ns();
        if (!io_all(sv[0], (uint8_t *)o->frame, o->len, true)) {
            r = -1;
            break;
        }
        struct pollfd p = {.fd = sv[0], .events = POLLIN};
        while (o->polling && poll(&p, 1, 0) == 0) {
        }
        if (!io_all(sv[0], reply, o->len, false)) {
            r = -1;
            break;
        }
        if (next >= count_from) {
            bench_samples_push(lat, cd_clock_ns() - t0);
        }
    }
    if (r < 0) {
        snprintf(why, whylen, "echo: short read or write");
    }
    atomic_store(&e.serving, false);
    cd_awake_stop(awake);
    shutdown(sv[0], SHUT_RDWR);
    pthread_join(t, NULL);
    close(sv[0]);
    close(sv[1]);
    return r;
}
