/* SPDX-License-Identifier: MIT */
/* Integration-test harness (see harness.h). */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "io/codec.h"
#include "io/framing.h"
#include "io/scene_json.h"
#include "testlib.h"

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) {
        return -1;
    }
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

// Makes the temporary directory and binds the datagram socket systemd would provide.
int it_daemon_prepare(it_daemon *d) {
    *d = (it_daemon){.pid = -1, .pidfd = -1, .notify_fd = -1};
    snprintf(d->dir, sizeof d->dir, "/tmp/contactd-it-XXXXXX");
    if (!mkdtemp(d->dir)) {
        perror("mkdtemp");
        return -1;
    }
    d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/notify", d->dir);
    if (d->notify_fd < 0 || bind(d->notify_fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("notify socket");
        return -1;
    }
    return 0;
}

int it_daemon_spawn(it_daemon *d, const char *contactd, char *const argv[]) {
    char notify[128];
    snprintf(notify, sizeof notify, "%s/notify", d->dir);
    fflush(NULL);
    d->pid = fork();
    if (d->pid < 0) {
        perror("fork");
        return -1;
    }
    if (d->pid == 0) {
        // The daemon's log goes to a file the test can read; cleanup copies it to our stderr.
        char log[128];
        snprintf(log, sizeof log, "%s/contactd.log", d->dir);
        const int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dup2(fd, STDERR_FILENO);
        }
        setenv("NOTIFY_SOCKET", notify, 1);
        execv(contactd, argv);
        perror(contactd);
        _exit(127);
    }
    d->pidfd = pidfd_open(d->pid, 0);
    if (d->pidfd < 0) {
        perror("pidfd_open");
        return -1;
    }
    return 0;
}

// Parses "STATUS=listening on unix:PATH tcp:HOST:PORT" (either part may be missing).
static void parse_status(it_daemon *d, const char *dgram) {
    const char *u = strstr(dgram, "unix:");
    const char *t = strstr(dgram, "tcp:");
    if (u) {
        sscanf(u + 5, "%127s", d->socket);
    }
    if (t) {
        sscanf(t + 4, "%63s", d->tcp);
    }
}

int it_daemon_start(it_daemon *d, const char *contactd, const char *extra_ini,
                    long watchdog_usec) {
    if (it_daemon_prepare(d) < 0) {
        return -1;
    }
    char text[4096];
    snprintf(d->config, sizeof d->config, "%s/contactd.conf", d->dir);
    snprintf(text, sizeof text,
             "[server]\nsocket = %s/contactd.sock\ntcp = 127.0.0.1:0\n[log]\nlevel = debug\n%s",
             d->dir, extra_ini ? extra_ini : "");
    if (write_text(d->config, text) < 0) {
        perror(d->config);
        return -1;
    }
    char wd[32];
    snprintf(wd, sizeof wd, "%ld", watchdog_usec);
    if (watchdog_usec > 0) {
        setenv("WATCHDOG_USEC", wd, 1);
    }
    char *const argv[] = {"contactd", "--config", d->config, NULL};
    const int r = it_daemon_spawn(d, contactd, argv);
    unsetenv("WATCHDOG_USEC");
    if (r < 0) {
        return -1;
    }
    char dgram[1024];
    if (it_notify_wait(d, "READY=1", IT_TIMEOUT_MS, dgram, sizeof dgram) < 0) {
        fprintf(stderr, "harness: no READY=1 from contactd within %d ms\n", IT_TIMEOUT_MS);
        return -1;
    }
    parse_status(d, dgram);
    if (d->socket[0] == '\0' || d->tcp[0] == '\0') {
        fprintf(stderr, "harness: READY=1 without both addresses: '%s'\n", dgram);
        return -1;
    }
    return 0;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int it_notify_wait(it_daemon *d, const char *what, int timeout_ms, char *buf, size_t len) {
    char dgram[1024];
    struct pollfd p[2] = {{.fd = d->notify_fd, .events = POLLIN},
                          {.fd = d->pidfd, .events = POLLIN}};
    const int64_t end = now_ms() + timeout_ms;
    for (;;) {
        // Other datagrams (WATCHDOG=1) do not extend the wait. The daemon exiting ends it too,
        // but only after its last datagrams have been read.
        const int64_t left = end - now_ms();
        const int n = poll(p, 2, left > 0 ? (int)left : 0);
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

int it_daemon_wait_exit(it_daemon *d, int timeout_ms) {
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

int it_daemon_stop(it_daemon *d) {
    if (kill(d->pid, SIGTERM) < 0) {
        perror("kill");
        return -1;
    }
    if (it_notify_wait(d, "STOPPING=1", IT_TIMEOUT_MS, NULL, 0) < 0) {
        fprintf(stderr, "harness: no STOPPING=1 after SIGTERM\n");
        return -1;
    }
    if (it_daemon_wait_exit(d, IT_TIMEOUT_MS) < 0) {
        fprintf(stderr, "harness: contactd did not exit after SIGTERM\n");
        return -1;
    }
    if (d->exit_status != 0) {
        fprintf(stderr, "harness: contactd exited with status %d\n", d->exit_status);
        return -1;
    }
    return 0;
}

void it_daemon_cleanup(it_daemon *d) {
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
    if (d->dir[0] != '\0') {
        // The daemon's log goes into the test's output, where meson's log keeps it.
        char path[128], chunk[4096];
        snprintf(path, sizeof path, "%s/contactd.log", d->dir);
        FILE *f = fopen(path, "r");
        if (f) {
            fprintf(stderr, "---- contactd log (%s) ----\n", d->dir);
            size_t k;
            while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
                fwrite(chunk, 1, k, stderr);
            }
            fclose(f);
        }
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
        if (system(cmd) != 0) {
            fprintf(stderr, "harness: cannot remove %s\n", d->dir);
        }
        d->dir[0] = '\0';
    }
}

int it_daemon_log(const it_daemon *d, char *buf, size_t len) {
    char path[128];
    snprintf(path, sizeof path, "%s/contactd.log", d->dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        return -1;
    }
    const size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return (int)n;
}

int it_connect_unix(const char *path) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("connect unix");
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    return fd;
}

int it_connect_tcp(const char *hostport) {
    char host[64];
    int port;
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon - hostport >= (long)sizeof host) {
        return -1;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    port = atoi(colon + 1);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("connect tcp");
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    return fd;
}

int it_write_all(int fd, const void *buf, size_t n) {
    const uint8_t *p = buf;
    while (n > 0) {
        const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

void it_pack(const ProtobufCMessage *msg, uint8_t **ret, size_t *ret_len) {
    const size_t n = cd_codec_packed_size(msg);
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    assert_int_equal(cd_codec_pack(msg, buf, n, ret_len), 0);
    *ret = buf;
}

int it_send(int fd, const ProtobufCMessage *msg) {
    uint8_t *buf;
    size_t len;
    it_pack(msg, &buf, &len);
    const int r = it_write_all(fd, buf, len);
    free(buf);
    return r;
}

int it_send_hello(int fd, uint32_t protocol_version) {
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = protocol_version;
    h.client_name = "it-raw";
    Contactd__V1__ClientMessage m = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    m.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = &h;
    return it_send(fd, &m.base);
}

// Reads exactly n bytes, each wait bounded by timeout_ms. Returns 0, or -1 on EOF or timeout.
static int read_exact(int fd, uint8_t *buf, size_t n, int timeout_ms) {
    while (n > 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) != 1) {
            return -1;
        }
        const ssize_t k = read(fd, buf, n);
        if (k <= 0) {
            return -1;
        }
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

Contactd__V1__ServerMessage *it_recv(int fd, int timeout_ms) {
    uint8_t prefix[CD_VARINT_MAX];
    uint64_t len = 0;
    int used = 0;
    for (size_t i = 0; i < CD_VARINT_MAX && used == 0; i++) {
        if (read_exact(fd, &prefix[i], 1, timeout_ms) < 0) {
            return NULL;
        }
        used = cd_varint_decode(prefix, i + 1, &len);
    }
    if (used <= 0 || len > (64u << 20)) {
        return NULL;
    }
    uint8_t *body = malloc(len ? len : 1);
    Contactd__V1__ServerMessage *m = NULL;
    if (body && read_exact(fd, body, len, timeout_ms) == 0) {
        m = contactd__v1__server_message__unpack(NULL, len, body);
    }
    free(body);
    return m;
}

bool it_wait_eof(int fd, int timeout_ms) {
    uint8_t buf[4096];
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) != 1) {
            return false;
        }
        const ssize_t k = read(fd, buf, sizeof buf);
        if (k == 0 || (k < 0 && errno == ECONNRESET)) {
            return true;
        }
        if (k < 0) {
            return false;
        }
    }
}

cdc_conn *it_session_open(const it_daemon *d, bool tcp, const cdc_hello *hello) {
    cdc_conn *c = NULL;
    char err[512];
    const int64_t timeout_ns = (int64_t)IT_TIMEOUT_MS * 1000000;
    const int r = tcp ? cdc_conn_open_tcp(d->tcp, hello, timeout_ns, &c, err, sizeof err)
                      : cdc_conn_open_unix(d->socket, hello, timeout_ns, &c, err, sizeof err);
    if (r < 0) {
        fail_msg("open session over %s: %s", tcp ? d->tcp : d->socket, err);
    }
    return c;
}

Contactd__V1__ServerMessage *it_session_recv(cdc_conn *c,
                                             Contactd__V1__ServerMessage__MsgCase want) {
    Contactd__V1__ServerMessage *m = NULL;
    const int r = cdc_msg_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m);
    if (r != 1) {
        fail_msg("no message within %d ms (%d)", IT_TIMEOUT_MS, r);
    }
    if (m->msg_case != want) {
        const char *text = m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR
                               ? m->error->message
                               : "";
        fail_msg("expected message kind %d, got %d %s", (int)want, (int)m->msg_case, text);
    }
    return m;
}

Contactd__V1__ServerMessage *it_frame_exchange(cdc_conn *c, cs_scene *s, uint64_t seq) {
    s->seq = seq;
    assert_int_equal(cdc_frame_send(c, s), 0);
    Contactd__V1__ServerMessage *m = it_session_recv(c, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT);
    assert_int_equal(m->result->seq, seq);
    return m;
}

Contactd__V1__ServerMessage *it_stats_fetch(cdc_conn *c) {
    assert_int_equal(cdc_stats_request(c), 0);
    return it_session_recv(c, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS);
}

void it_scene_load(const char *name, cs_scene *s) {
    char err[512];
    if (cd_scene_json_load(t_data_path(name), s, err, sizeof err) != 0) {
        fail_msg("%s", err);
    }
}

double it_scene_weight(const cs_scene *s) {
    return s->bodies[0].mass * sqrt(s->gravity[0] * s->gravity[0] + s->gravity[1] * s->gravity[1] +
                                    s->gravity[2] * s->gravity[2]);
}

double it_normal_force_sum(const Contactd__V1__Result *r, const cs_scene *s) {
    double sum = 0.0;
    for (size_t i = 0; i < r->n_contacts; i++) {
        const Contactd__V1__ContactForce *cf = r->contacts[i];
        const cs_contact *c = NULL;
        for (int k = 0; k < s->nc && !c; k++) {
            c = s->contacts[k].id == cf->id ? &s->contacts[k] : NULL;
        }
        if (!c || !cf->force) {
            fail_msg("result contact %llu is not in the scene", (unsigned long long)cf->id);
        }
        sum += cf->force->x * c->normal[0] + cf->force->y * c->normal[1] +
               cf->force->z * c->normal[2];
    }
    return sum;
}

void it_assert_timing(const Contactd__V1__Timing *t) {
    assert_non_null(t);
    assert_true(t->received_ns > 0);
    assert_true(t->received_ns <= t->solve_start_ns);
    assert_true(t->release_ns >= t->received_ns);
    assert_true(t->solve_ns > 0);
    assert_true(t->solve_start_ns + t->solve_ns <= t->sent_ns);
    assert_true(t->wake_late_ns >= 0);
    // Whether the deadline held depends on the machine's load, so it is not asserted; what is
    // asserted is that the record says so consistently, and why when it did not.
    const bool in_time = t->solve_start_ns + t->solve_ns <= t->deadline_ns;
    if (t->deadline_met) {
        assert_true(in_time);
        assert_int_equal(t->miss_reason, CONTACTD__V1__MISS_REASON__MISS_NONE);
    } else {
        assert_int_not_equal(t->miss_reason, CONTACTD__V1__MISS_REASON__MISS_NONE);
    }
}

int it_args(int argc, char **argv, bool need_contactctl, const char **ret_contactd,
            const char **ret_contactctl) {
    if (need_contactctl ? argc != 3 : argc < 2) {
        fprintf(stderr, "usage: %s CONTACTD %s\n", argv[0],
                need_contactctl ? "CONTACTCTL" : "[CONTACTCTL]");
        return -1;
    }
    *ret_contactd = argv[1];
    if (need_contactctl) {
        *ret_contactctl = argv[2];
    }
    return 0;
}

void it_sigterm_stops_cleanly(void **state) {
    assert_int_equal(it_daemon_stop(*state), 0);
}
