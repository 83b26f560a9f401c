/* SPDX-License-Identifier: MIT */
/* Integration-test harness (see harness.h). */
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "wire/codec.h"
#include "wire/framing.h"
#include "solver/contact.h"
#include "wire/scene_json.h"
#include "testlib.h"

int it_daemon_start(it_daemon *d, const char *contactd, const char *extra_ini,
                    long watchdog_usec) {
    // The tests read the daemon's debug lines from its log.
    char *ini = NULL;
    if (asprintf(&ini, "[log]\nlevel = debug\n%s", extra_ini ? extra_ini : "") < 0) {
        fprintf(stderr, "harness: out of memory\n");
        return -1;
    }
    const int r = t_daemon_start(d, contactd, "it", ini, watchdog_usec);
    free(ini);
    return r;
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

uint8_t *it_stats_requests(int n, size_t *ret_len) {
    const Contactd__V1__ClientMessage req = {
        .base = PROTOBUF_C_MESSAGE_INIT(&contactd__v1__client_message__descriptor),
        .msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST,
        .stats_request = &(Contactd__V1__StatsRequest)CONTACTD__V1__STATS_REQUEST__INIT};
    uint8_t *one;
    size_t len;
    it_pack(&req.base, &one, &len);
    uint8_t *all = malloc((size_t)n * len);
    assert_non_null(all);
    for (int i = 0; i < n; i++) {
        memcpy(all + (size_t)i * len, one, len);
    }
    free(one);
    *ret_len = (size_t)n * len;
    return all;
}

int it_send(int fd, const ProtobufCMessage *msg) {
    uint8_t *buf;
    size_t len;
    it_pack(msg, &buf, &len);
    const int r = it_write_all(fd, buf, len);
    free(buf);
    return r;
}

Contactd__V1__ClientMessage it_hello_message(Contactd__V1__Hello *h) {
    Contactd__V1__ClientMessage m = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    m.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_HELLO;
    m.hello = h;
    return m;
}

int it_send_hello(int fd, uint32_t protocol_version) {
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = protocol_version;
    h.client_name = "it-raw";
    const Contactd__V1__ClientMessage m = it_hello_message(&h);
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

int it_command_end(FILE *p, char *out, size_t len, const char *errpath, char *err,
                   size_t errlen) {
    out[fread(out, 1, len - 1, p)] = '\0';
    const int st = pclose(p);
    FILE *e = fopen(errpath, "r");
    err[e ? fread(err, 1, errlen - 1, e) : 0] = '\0';
    if (e) {
        fclose(e);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
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
    const int r = cdc_wire_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m);
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
    assert_int_equal(cdc_wire_frame_send(c, s), 0);
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
    if (cd_scene_json_load(t_data_path(name), cs_scene_validate, s, err, sizeof err) != 0) {
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
