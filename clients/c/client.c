/* SPDX-License-Identifier: MIT */
/* The client side of the wire: a non-blocking socket driven with poll(), the daemon's own framer
 * and codec for the bytes, and one reusable Frame holder and send buffer per connection, so a
 * client streaming at 1 kHz allocates only for the messages it receives. */
#include "client_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire/codec.h"
#include "wire/framing.h"

// How long a send may wait for the socket to drain before the daemon is declared stuck.
#define SEND_TIMEOUT_NS INT64_C(5000000000)
// Frame holder size when the Welcome grants no limits.
#define DEFAULT_BODIES 16
#define DEFAULT_CONTACTS 64

struct cdc_conn {
    int fd;
    cd_framer in;
    cd_frame_msg frame;                 // sized from the granted limits, grown on demand
    uint8_t *out;                       // send buffer
    size_t out_cap;
    Contactd__V1__ServerMessage *hello; // the Welcome envelope, kept for cdc_conn_welcome
    uint8_t rd[1 << 16];                // read chunk
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Waits until fd has events or left_ns (< 0: forever) passes. Returns > 0 ready, 0 timed out
// (or interrupted: callers re-check their deadline), < 0 a negative errno.
static int wait_fd(int fd, short events, int64_t left_ns) {
    struct pollfd pfd = {.fd = fd, .events = events};
    const struct timespec ts = {.tv_sec = left_ns / 1000000000, .tv_nsec = left_ns % 1000000000};
    const int r = ppoll(&pfd, 1, left_ns < 0 ? NULL : &ts, NULL);
    return r < 0 && errno != EINTR ? -errno : r < 0 ? 0 : r;
}

static int set_nonblocking(int fd) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        return -errno;
    }
    return 0;
}

static int write_all(cdc_conn *c, const uint8_t *p, size_t n) {
    const int64_t deadline = now_ns() + SEND_TIMEOUT_NS;
    while (n > 0) {
        const ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            return -errno;
        }
        const int64_t left = deadline - now_ns();
        const int r = left > 0 ? wait_fd(c->fd, POLLOUT, left) : 0;
        if (r < 0) {
            return r;
        }
        if (left <= 0) {
            return -ETIMEDOUT;
        }
    }
    return 0;
}

static int send_msg(cdc_conn *c, const ProtobufCMessage *m) {
    const size_t need = cd_codec_packed_size(m);
    if (need > c->out_cap) {
        uint8_t *bigger = realloc(c->out, need);
        if (!bigger) {
            return -ENOMEM;
        }
        c->out = bigger;
        c->out_cap = need;
    }
    size_t len;
    const int r = cd_codec_pack(m, c->out, c->out_cap, &len);
    return r < 0 ? r : write_all(c, c->out, len);
}

int cdc_msg_recv(cdc_conn *c, int64_t timeout_ns, Contactd__V1__ServerMessage **ret) {
    const int64_t deadline = timeout_ns > 0 ? now_ns() + timeout_ns : 0;
    for (;;) {
        const uint8_t *body;
        size_t len;
        const int r = cd_framer_next(&c->in, &body, &len);
        if (r < 0) {
            return r;
        }
        if (r == 1) {
            Contactd__V1__ServerMessage *m = contactd__v1__server_message__unpack(NULL, len, body);
            if (!m) {
                return -EPROTO;
            }
            *ret = m;
            return 1;
        }
        size_t want = cd_framer_space(&c->in);
        want = want < sizeof c->rd ? want : sizeof c->rd;
        const ssize_t n = recv(c->fd, c->rd, want, 0);
        if (n > 0) {
            // Cannot fail: at most cd_framer_space bytes were read.
            (void)cd_framer_feed(&c->in, c->rd, (size_t)n);
            continue;
        }
        if (n == 0) {
            return -ECONNRESET;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            return -errno;
        }
        int64_t left = -1;
        if (timeout_ns == 0) {
            return 0;
        }
        if (timeout_ns > 0) {
            left = deadline - now_ns();
            if (left <= 0) {
                return 0;
            }
        }
        const int w = wait_fd(c->fd, POLLIN, left);
        if (w < 0) {
            return w;
        }
    }
}

void cdc_msg_free(Contactd__V1__ServerMessage *m) {
    if (m) {
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
}

// Sends Hello and waits for Welcome; on success c->hello holds it and the frame holder is sized.
static int handshake(cdc_conn *c, const cdc_hello *h, int64_t timeout_ns, char *err,
                     size_t errlen) {
    Contactd__V1__ClientMessage env = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    Contactd__V1__Hello hello = CONTACTD__V1__HELLO__INIT;
    Contactd__V1__Limits lim = CONTACTD__V1__LIMITS__INIT;
    env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_HELLO;
    env.hello = &hello;
    hello.protocol_version = 1;
    hello.client_name = (char *)(h && h->client_name ? h->client_name : "libcontactd-client");
    if (h && h->token) {
        hello.token = (char *)h->token;
    }
    if (h && h->solver_name) {
        hello.default_solver_name = (char *)h->solver_name;
    }
    if (h && (h->limits.max_bodies > 0 || h->limits.max_contacts > 0 ||
              h->limits.max_joints > 0 || h->limits.max_dirs > 0)) {
        lim.max_bodies = h->limits.max_bodies > 0 ? (uint32_t)h->limits.max_bodies : 0;
        lim.max_contacts = h->limits.max_contacts > 0 ? (uint32_t)h->limits.max_contacts : 0;
        lim.max_joints = h->limits.max_joints > 0 ? (uint32_t)h->limits.max_joints : 0;
        lim.max_friction_directions = h->limits.max_dirs > 0 ? (uint32_t)h->limits.max_dirs : 0;
        hello.limits = &lim;
    }
    size_t nsolvers = 0;
    while (h && h->solver_names && h->solver_names[nsolvers]) {
        nsolvers++;
    }
    if (h) {
        hello.mode = h->request_mode ? CONTACTD__V1__SESSION_MODE__MODE_REQUEST
                                     : CONTACTD__V1__SESSION_MODE__MODE_STREAM;
        hello.budget_ns = h->budget_ns;
        hello.n_solvers = nsolvers;
        hello.solvers = (char **)h->solver_names;
    }
    int r = send_msg(c, &env.base);
    if (r < 0) {
        snprintf(err, errlen, "sending Hello: %s", strerror(-r));
        return r;
    }
    Contactd__V1__ServerMessage *m = NULL;
    r = cdc_msg_recv(c, timeout_ns, &m);
    if (r <= 0) {
        r = r == 0 ? -ETIMEDOUT : r;
        snprintf(err, errlen, "waiting for Welcome: %s", strerror(-r));
        return r;
    }
    if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR) {
        snprintf(err, errlen, "daemon refused the session: %s", m->error->message);
        cdc_msg_free(m);
        return -ECONNREFUSED;
    }
    if (m->msg_case != CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME) {
        snprintf(err, errlen, "expected Welcome, got message case %d", (int)m->msg_case);
        cdc_msg_free(m);
        return -EPROTO;
    }
    c->hello = m;
    const Contactd__V1__Limits *g = m->welcome->limits;
    const cs_limits size = {
        .max_bodies = g && g->max_bodies ? (int)g->max_bodies : DEFAULT_BODIES,
        .max_contacts = g && g->max_contacts ? (int)g->max_contacts : DEFAULT_CONTACTS,
        .max_joints = g ? (int)g->max_joints : 0,
    };
    r = cd_codec_frame_msg_init(&c->frame, &size);
    if (r < 0) {
        snprintf(err, errlen, "frame buffer: %s", strerror(-r));
    }
    return r;
}

// Takes ownership of the connected socket fd (closing it on failure).
static int open_fd(int fd, const cdc_hello *h, int64_t timeout_ns, cdc_conn **ret, char *err,
                   size_t errlen) {
    cdc_conn *c = calloc(1, sizeof *c);
    int r = c ? 0 : -ENOMEM;
    if (c) {
        c->fd = fd;
        r = cd_framer_init(&c->in, CDC_MAX_MESSAGE_BYTES);
    }
    if (r < 0) {
        snprintf(err, errlen, "%s", strerror(-r));
        free(c);
        close(fd);
        return r;
    }
    r = set_nonblocking(fd);
    if (r == 0) {
        r = h && h->no_session ? 0 : handshake(c, h, timeout_ns, err, errlen);
    } else {
        snprintf(err, errlen, "fcntl: %s", strerror(-r));
    }
    if (r < 0) {
        cdc_conn_close(c);
        return r;
    }
    *ret = c;
    return 0;
}

int cdc_conn_open_unix(const char *path, const cdc_hello *hello, int64_t timeout_ns,
                       cdc_conn **ret, char *err, size_t errlen) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "%s: socket path too long", path);
        return -ENAMETOOLONG;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)&sa, sizeof sa) < 0) {
        const int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        if (fd >= 0) {
            close(fd);
        }
        return -e;
    }
    return open_fd(fd, hello, timeout_ns, ret, err, errlen);
}

int cdc_conn_open_tcp(const char *hostport, const cdc_hello *hello, int64_t timeout_ns,
                      cdc_conn **ret, char *err, size_t errlen) {
    // HOST:PORT, with the host in brackets when it is an IPv6 literal.
    char host[256];
    const char *colon = strrchr(hostport, ':');
    const char *h = hostport;
    size_t hlen = colon ? (size_t)(colon - hostport) : 0;
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (!colon || hlen == 0 || hlen >= sizeof host || colon[1] == '\0') {
        snprintf(err, errlen, "%s: expected HOST:PORT", hostport);
        return -EINVAL;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';

    const struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    const int g = getaddrinfo(host, colon + 1, &hints, &ai);
    if (g != 0) {
        snprintf(err, errlen, "%s: %s", hostport, gai_strerror(g));
        return -EINVAL;
    }
    int fd = -1, e = ECONNREFUSED;
    for (const struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            e = errno;
            close(fd);
            fd = -1;
        } else if (fd < 0) {
            e = errno;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", hostport, strerror(e));
        return -e;
    }
    const int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return open_fd(fd, hello, timeout_ns, ret, err, errlen);
}

const Contactd__V1__Welcome *cdc_conn_welcome(const cdc_conn *c) {
    return c->hello ? c->hello->welcome : NULL;
}

int cdc_conn_fd(const cdc_conn *c) {
    return c->fd;
}

void cdc_conn_close(cdc_conn *c) {
    if (!c) {
        return;
    }
    close(c->fd);
    cd_framer_fini(&c->in);
    cd_codec_frame_msg_fini(&c->frame);
    cdc_msg_free(c->hello);
    free(c->out);
    free(c);
}

int cdc_frame_send(cdc_conn *c, const cs_scene *s) {
    Contactd__V1__ClientMessage *m = cd_codec_frame_build(&c->frame, s);
    if (!m) {
        // Bigger than the granted limits: send it anyway so the daemon's Error explains the
        // limit to the caller, rather than a local failure with less to say.
        const cs_limits size = {.max_bodies = s->nb, .max_contacts = s->nc, .max_joints = s->nj};
        cd_codec_frame_msg_fini(&c->frame);
        if (cd_codec_frame_msg_init(&c->frame, &size) < 0) {
            return -ENOMEM;
        }
        m = cd_codec_frame_build(&c->frame, s);
        if (!m) {
            return -EINVAL; // negative counts
        }
    }
    return send_msg(c, &m->base);
}

int cdc_stats_request(cdc_conn *c) {
    return cdc_stats_request_session(c, 0);
}

int cdc_stats_request_session(cdc_conn *c, uint64_t session_id) {
    Contactd__V1__ClientMessage env = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    Contactd__V1__StatsRequest req = CONTACTD__V1__STATS_REQUEST__INIT;
    req.session_id = session_id;
    env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST;
    env.stats_request = &req;
    return send_msg(c, &env.base);
}

int cdc_conn_send_packed(cdc_conn *c, const uint8_t *buf, size_t len) {
    return write_all(c, buf, len);
}
