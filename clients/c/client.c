/* SPDX-License-Identifier: MIT */
/* The client side of the wire: a non-blocking socket driven with poll(), the wire library's
 * framer, arena and codec for the bytes. Everything a frame or a Result needs is sized when the
 * Welcome arrives (from the granted limits) and reused: a frame is copied into a cs_scene held by
 * the connection and built into a reusable Frame holder and send buffer; a Result is read
 * straight into arrays held by the connection (result.h), or, when that fast way declines it,
 * unpacked into an arena reset before the next message and converted into the same arrays.
 * So a client streaming at 1 kHz allocates nothing per frame (tests/integration/it_client.c
 * counts). Implements contactd/client.h and the in-tree client_wire.h. */
#include "contactd/client.h"

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
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client_wire.h"
#include "result.h"
#include "wire/arena.h"
#include "wire/codec.h"
#include "wire/framing.h"
#include "wire/paths.h"

_Static_assert(CDC_TCP_PORT_DEFAULT == CD_TCP_PORT_DEFAULT, "one default port");
_Static_assert(CDC_SOLVER_NCP == (int)CS_SOLVER_NCP && CDC_JOINT_FIXED == (int)CS_JOINT_FIXED &&
                   (int)CDC_STATUS_FAILED == (int)CONTACTD__V1__STATUS__STATUS_FAILED &&
                   (int)CDC_ANSWER_LAST_CERTIFIED ==
                       (int)CONTACTD__V1__ANSWER_SOURCE__ANSWER_LAST_CERTIFIED,
               "public enum values are the wire's");

// How long a send may wait for the socket to drain before the daemon is declared stuck.
#define SEND_TIMEOUT_NS INT64_C(5000000000)
// Sizes when the Welcome grants no limits (or there is no session).
#define DEFAULT_BODIES 16
#define DEFAULT_CONTACTS 64
// Arena bytes for a Result's fixed part (Result, Timing, SolverStats, Residuals, the solver name
// and detail strings) and for a Stats without many sessions, beyond the per-item parts.
#define ARENA_BASE_BYTES 16384
// Send-buffer bytes per body, contact and joint of a Frame, and for the rest of it: bounds of
// their packed sizes with every field present and every varint at its longest (a body packs to
// at most ~290 bytes, a contact ~125, a joint ~90), so that a frame within the limits never
// grows the buffer, however its seq or ids grow.
#define PACKED_BODY_MAX 400
#define PACKED_CONTACT_MAX 200
#define PACKED_JOINT_MAX 150
#define PACKED_FRAME_BASE 256
// Arena bytes per contact, body or joint of a Result: the nested message, two Vec3, its pointer
// in the repeated field, each rounded up to max_align_t.
#define ARENA_ITEM_BYTES(T) \
    (sizeof(T) + 2 * sizeof(Contactd__V1__Vec3) + sizeof(void *) + 3 * _Alignof(max_align_t))

struct cdc_conn {
    int fd;
    cd_framer in;
    cd_arena arena;            // the last message cdc_msg_recv unpacked; reset at the next
    cs_limits size;            // frames the two below hold
    cd_frame_msg frame;        // the Frame holder
    cs_scene scene;            // cdc_frame_send's copy of the caller's frame
    cdc_result_store results;  // the last Result's arrays and strings
    uint8_t *out;              // send buffer
    size_t out_cap;
    Contactd__V1__ServerMessage *hello; // the Welcome envelope, kept for cdc_wire_welcome
    cdc_welcome welcome;       // its plain copy; strings point into hello
    uint8_t rd[1 << 16];       // read chunk
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

// The time timeout_ns from now, saturated at INT64_MAX; -1 (none) when timeout_ns < 0.
static int64_t deadline_after(int64_t timeout_ns) {
    if (timeout_ns < 0) {
        return -1;
    }
    const int64_t now = now_ns();
    return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}

// What is left until deadline (-1: none, forever), 0 once it has passed.
static int64_t time_left(int64_t deadline) {
    if (deadline < 0) {
        return -1;
    }
    const int64_t left = deadline - now_ns();
    return left > 0 ? left : 0;
}

static int set_nonblocking(int fd) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        return -errno;
    }
    return 0;
}

// Writes the *n bytes at p until deadline; *n is left as what was not written.
static int write_some(cdc_conn *c, const uint8_t *p, size_t *n, int64_t deadline) {
    while (*n > 0) {
        const ssize_t w = send(c->fd, p, *n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            *n -= (size_t)w;
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

// Writes the n bytes at p within SEND_TIMEOUT_NS. A failure after part of them went (the daemon
// not reading, or gone) shuts the sending side: the daemon could not frame what came after the
// cut, so it sees the end of the stream instead (it answers the frames before, refuses the
// unfinished message with ERROR_DECODE and closes), and every later send fails with -EPIPE.
// Returns 0 or a negative errno (-ETIMEDOUT).
static int write_all(cdc_conn *c, const uint8_t *p, size_t n) {
    const int64_t deadline = now_ns() + SEND_TIMEOUT_NS;
    const size_t len = n;
    const int r = write_some(c, p, &n, deadline);
    if (r < 0 && n < len) {
        (void)shutdown(c->fd, SHUT_WR);
    }
    return r;
}

// Makes the send buffer hold at least need bytes. Returns 0 or -ENOMEM.
static int reserve_out(cdc_conn *c, size_t need) {
    if (need > c->out_cap) {
        uint8_t *bigger = realloc(c->out, need);
        if (!bigger) {
            return -ENOMEM;
        }
        c->out = bigger;
        c->out_cap = need;
    }
    return 0;
}

static int send_msg(cdc_conn *c, const ProtobufCMessage *m) {
    if (reserve_out(c, cd_codec_packed_size(m)) < 0) {
        return -ENOMEM;
    }
    size_t len;
    const int r = cd_codec_pack(m, c->out, c->out_cap, &len);
    return r < 0 ? r : write_all(c, c->out, len);
}

// Takes the next whole message's bytes from the socket, waiting up to timeout_ns (0: only what
// has arrived, < 0: forever). Returns 1 with *body, *len pointing into the framer (valid until
// the next call), 0 on timeout, or a negative errno.
static int next_message(cdc_conn *c, int64_t timeout_ns, const uint8_t **body, size_t *len) {
    const int64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        const int r = cd_framer_next(&c->in, body, len);
        if (r != 0) {
            return r;
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
        const int64_t left = time_left(deadline);
        if (left == 0) {
            return 0;
        }
        const int w = wait_fd(c->fd, POLLIN, left);
        if (w < 0) {
            return w;
        }
    }
}

int cdc_wire_recv(cdc_conn *c, int64_t timeout_ns, Contactd__V1__ServerMessage **ret) {
    const uint8_t *body;
    size_t len;
    const int r = next_message(c, timeout_ns, &body, &len);
    if (r <= 0) {
        return r;
    }
    Contactd__V1__ServerMessage *m = contactd__v1__server_message__unpack(NULL, len, body);
    if (!m) {
        return -EPROTO;
    }
    *ret = m;
    return 1;
}

void cdc_wire_free(Contactd__V1__ServerMessage *m) {
    if (m) {
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
}

// Points the arrays of s into one block sized for lim (the frame copy). Returns 0 or -ENOMEM.
static int scene_storage(cs_scene *s, const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nc = (size_t)lim->max_contacts,
                 nj = (size_t)lim->max_joints;
    char *mem = malloc(nb * sizeof(cs_body) + nc * sizeof(cs_contact) + nj * sizeof(cs_joint) + 1);
    if (!mem) {
        return -ENOMEM;
    }
    s->bodies = (cs_body *)(void *)mem;
    s->contacts = (cs_contact *)(void *)(mem + nb * sizeof(cs_body));
    s->joints = (cs_joint *)(void *)(mem + nb * sizeof(cs_body) + nc * sizeof(cs_contact));
    return 0;
}

// Sizes the send side of c for frames within lim: the frame copy and the Frame holder. Called
// when the Welcome arrives and when a frame is bigger than any before (never in the steady
// state). Returns 0 or -ENOMEM (then c holds nothing, and the next frame tries again).
static int size_send(cdc_conn *c, const cs_limits *lim) {
    cd_codec_frame_msg_fini(&c->frame);
    free(c->scene.bodies);
    c->scene = (cs_scene){0};
    c->size = (cs_limits){0};
    const size_t out_cap = PACKED_FRAME_BASE + (size_t)lim->max_bodies * PACKED_BODY_MAX +
                           (size_t)lim->max_contacts * PACKED_CONTACT_MAX +
                           (size_t)lim->max_joints * PACKED_JOINT_MAX;
    if (cd_codec_frame_msg_init(&c->frame, lim) < 0 || scene_storage(&c->scene, lim) < 0 ||
        reserve_out(c, out_cap) < 0) {
        return -ENOMEM;
    }
    c->size = *lim;
    return 0;
}

// Sizes the receive side of c for Results within lim: their arrays and the decode arena (once,
// when the Welcome arrives). Returns 0 or -ENOMEM.
static int size_recv(cdc_conn *c, const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nc = (size_t)lim->max_contacts,
                 nj = (size_t)lim->max_joints;
    const size_t arena_bytes = ARENA_BASE_BYTES +
                               nc * ARENA_ITEM_BYTES(Contactd__V1__ContactForce) +
                               nb * ARENA_ITEM_BYTES(Contactd__V1__BodyVelocity) +
                               nj * ARENA_ITEM_BYTES(Contactd__V1__JointForce);
    cd_arena_fini(&c->arena);
    return cd_arena_init(&c->arena, arena_bytes) < 0 ||
                   cdc_result_store_grow(&c->results, nb, nc, nj) < 0
               ? -ENOMEM
               : 0;
}

static void percentiles_out(const Contactd__V1__Percentiles *p, cdc_percentiles *out) {
    *out = p ? (cdc_percentiles){.count = p->count, .p50_ns = p->p50_ns, .p99_ns = p->p99_ns,
                                 .p999_ns = p->p999_ns, .max_ns = p->max_ns}
             : (cdc_percentiles){0};
}

static void stats_out(const Contactd__V1__Stats *m, cdc_stats *s) {
    *s = (cdc_stats){
        .ticks = m->ticks,
        .frames_received = m->frames_received,
        .frames_solved = m->frames_solved,
        .frames_superseded = m->frames_superseded,
        .frames_refused = m->frames_refused,
        .deadline_misses = m->deadline_misses,
        .results_dropped = m->results_dropped,
        .sessions = m->sessions,
        .realtime = m->realtime,
    };
    percentiles_out(m->solve, &s->solve);
    percentiles_out(m->latency, &s->latency);
}

int cdc_msg_recv(cdc_conn *c, int64_t timeout_ns, cdc_msg *ret) {
    const uint8_t *body;
    size_t len;
    int r = next_message(c, timeout_ns, &body, &len);
    if (r <= 0) {
        return r;
    }
    cdc_msg out = {.kind = CDC_MSG_RESULT};
    if (cdc_result_decode(&c->results, body, len, &out.result)) {
        *ret = out;
        return 1;
    }
    // What the previous message left in the arena is released now (its lifetime ends here). A
    // message that overflowed it (a Stats of many sessions) grows it once to what that took, up
    // to what the largest accepted message can unpack to (a few times its packed size).
    cd_arena_reset(&c->arena, 4 * (size_t)CDC_MAX_MESSAGE_BYTES);
    Contactd__V1__ServerMessage *m =
        contactd__v1__server_message__unpack(&c->arena.allocator, len, body);
    if (!m) {
        return -EPROTO;
    }
    out = (cdc_msg){0};
    switch (m->msg_case) {
    case CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT:
        out.kind = CDC_MSG_RESULT;
        r = cdc_result_from_message(&c->results, m->result, &out.result);
        break;
    case CONTACTD__V1__SERVER_MESSAGE__MSG_STATS:
        out.kind = CDC_MSG_STATS;
        stats_out(m->stats, &out.stats);
        break;
    case CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR:
        out.kind = CDC_MSG_ERROR;
        out.error.code = (int)m->error->code;
        out.error.seq = m->error->seq;
        out.error.message = m->error->message ? m->error->message : "";
        break;
    case CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE:
        out.kind = CDC_MSG_GOODBYE;
        out.error.message = m->goodbye->reason ? m->goodbye->reason : "";
        break;
    default:
        // A second Welcome, or a message of a newer protocol: not something a session expects.
        r = -EPROTO;
        break;
    }
    if (r < 0) {
        return r;
    }
    *ret = out;
    return 1;
}

const char *cdc_status_name(cdc_status s) {
    switch (s) {
    case CDC_STATUS_OK: return "ok";
    case CDC_STATUS_DEADLINE: return "deadline";
    case CDC_STATUS_FALLBACK: return "fallback";
    case CDC_STATUS_FAILED: return "failed";
    }
    return "unknown";
}

int cdc_default_socket(char *buf, size_t len) {
    return cd_paths_client_socket(buf, len);
}

// A refused Hello's errno, from the Error's code: apart from connect's -ECONNREFUSED (no daemon
// listening), so that a caller retries only what a later Hello may pass (-EBUSY).
static int refusal_errno(Contactd__V1__ErrorCode code) {
    switch (code) {
    case CONTACTD__V1__ERROR_CODE__ERROR_DENIED: return -EACCES;
    case CONTACTD__V1__ERROR_CODE__ERROR_BUSY: return -EBUSY;
    case CONTACTD__V1__ERROR_CODE__ERROR_MEMORY: return -ENOSPC;
    case CONTACTD__V1__ERROR_CODE__ERROR_INVALID: return -EINVAL;
    case CONTACTD__V1__ERROR_CODE__ERROR_LIMIT: return -ETIMEDOUT;
    default: return -EPROTO;
    }
}

// Sends Hello and waits for Welcome; on success c->hello holds it and the frame holder is sized.
static int handshake(cdc_conn *c, const cdc_hello *h, int64_t deadline, char *err,
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
        hello.record = h->record;
        hello.n_solvers = nsolvers;
        hello.solvers = (char **)h->solver_names;
    }
    int r = send_msg(c, &env.base);
    Contactd__V1__ServerMessage *m = NULL;
    if (r < 0) {
        // A daemon that refused the connection at accept may have closed it before the Hello
        // went (-EPIPE): its Error, already received, says why.
        const bool refused = cdc_wire_recv(c, 0, &m) > 0 &&
                             m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR;
        if (!refused) {
            cdc_wire_free(m);
            snprintf(err, errlen, "sending Hello: %s", strerror(-r));
            return r;
        }
    } else {
        r = cdc_wire_recv(c, time_left(deadline), &m);
        if (r <= 0) {
            r = r == 0 ? -ETIMEDOUT : r;
            snprintf(err, errlen, "waiting for Welcome: %s", strerror(-r));
            return r;
        }
    }
    if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR) {
        snprintf(err, errlen, "daemon refused the session: %s", m->error->message);
        r = refusal_errno(m->error->code);
        cdc_wire_free(m);
        return r;
    }
    if (m->msg_case != CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME) {
        snprintf(err, errlen, "expected Welcome, got message case %d", (int)m->msg_case);
        cdc_wire_free(m);
        return -EPROTO;
    }
    c->hello = m;
    const Contactd__V1__Welcome *w = m->welcome;
    const Contactd__V1__Limits *g = w->limits;
    const cs_limits size = {
        .max_bodies = g && g->max_bodies ? (int)g->max_bodies : DEFAULT_BODIES,
        .max_contacts = g && g->max_contacts ? (int)g->max_contacts : DEFAULT_CONTACTS,
        .max_joints = g ? (int)g->max_joints : 0,
        .max_dirs = g ? (int)g->max_friction_directions : 0,
    };
    c->welcome = (cdc_welcome){
        .session_id = w->session_id,
        .server_version = w->server_version ? w->server_version : "",
        .default_solver = w->default_solver_name ? w->default_solver_name : "",
        .limits = {.max_bodies = size.max_bodies, .max_contacts = size.max_contacts,
                   .max_joints = size.max_joints, .max_dirs = size.max_dirs},
        .max_message_bytes = g ? g->max_message_bytes : 0,
        .request_mode = w->mode == CONTACTD__V1__SESSION_MODE__MODE_REQUEST,
        .rate_hz = w->rate_hz,
        .tick_epoch_ns = w->tick_epoch_ns,
        .tick_period_ns = w->tick_period_ns,
        .budget_ns = w->budget_ns,
        .deadline_ns = w->deadline_ns,
        .workspace_bytes = w->workspace_bytes,
        .request_queue = w->request_queue,
        .record_path = w->record_path ? w->record_path : "",
    };
    r = size_send(c, &size);
    if (r == 0) {
        r = size_recv(c, &size);
    }
    if (r < 0) {
        snprintf(err, errlen, "frame and result buffers: %s", strerror(-r));
    }
    return r;
}

// Takes ownership of the connected, non-blocking socket fd (closing it on failure); the Welcome
// must come by deadline.
static int open_fd(int fd, const cdc_hello *h, int64_t deadline, cdc_conn **ret, char *err,
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
    if (h && h->no_session) {
        // Stats only: no frames, Results never come.
        r = size_recv(c, &(cs_limits){0});
        if (r < 0) {
            snprintf(err, errlen, "receive buffers: %s", strerror(-r));
        }
    } else {
        r = handshake(c, h, deadline, err, errlen);
    }
    if (r < 0) {
        cdc_conn_close(c);
        return r;
    }
    *ret = c;
    return 0;
}

// Connects the non-blocking TCP socket fd to sa by deadline: the handshake goes on after
// EINPROGRESS, and POLLOUT says it ended. Returns 0 or a negative errno (-ETIMEDOUT).
static int connect_tcp(int fd, const struct sockaddr *sa, socklen_t len, int64_t deadline) {
    if (connect(fd, sa, len) == 0) {
        return 0;
    }
    if (errno != EINPROGRESS && errno != EINTR) {
        return -errno;
    }
    for (;;) {
        const int64_t left = time_left(deadline);
        if (left == 0) {
            return -ETIMEDOUT;
        }
        const int r = wait_fd(fd, POLLOUT, left);
        if (r < 0) {
            return r;
        }
        if (r > 0) {
            break;
        }
    }
    int e = 0;
    socklen_t elen = sizeof e;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0) {
        return -errno;
    }
    return -e;
}

// Connects the blocking Unix socket fd to sa by deadline. A non-blocking connect to a listener
// whose backlog is full fails with EAGAIN and nothing polls for room, so the wait is the
// kernel's: a blocking connect gives up after SO_SNDTIMEO with EAGAIN. Returns 0 or a negative
// errno (-ETIMEDOUT).
static int connect_unix(int fd, const struct sockaddr_un *sa, int64_t deadline) {
    for (;;) {
        const int64_t left = time_left(deadline);
        if (left >= 0) {
            // A zero SO_SNDTIMEO means forever: a deadline already passed gets 1 us.
            const int64_t us = left / 1000 > 0 ? left / 1000 : 1;
            const struct timeval tv = {.tv_sec = (time_t)(us / 1000000),
                                       .tv_usec = (suseconds_t)(us % 1000000)};
            if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0) {
                return -errno;
            }
        }
        if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0) {
            return 0;
        }
        if (errno == EAGAIN) {
            return -ETIMEDOUT;
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

// An open's deadline: timeout_ns <= 0 is no limit (an open cannot end without waiting for its
// Welcome, so a 0 that took only what has arrived, as a receive's does, would always time out).
static int64_t open_deadline(int64_t timeout_ns) {
    return deadline_after(timeout_ns > 0 ? timeout_ns : -1);
}

int cdc_conn_open_unix(const char *path, const cdc_hello *hello, int64_t timeout_ns,
                       cdc_conn **ret, char *err, size_t errlen) {
    const int64_t deadline = open_deadline(timeout_ns);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "%s: socket path too long", path);
        return -ENAMETOOLONG;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int r = fd < 0 ? -errno : connect_unix(fd, &sa, deadline);
    if (r == 0) {
        r = set_nonblocking(fd);
    }
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-r));
        if (fd >= 0) {
            close(fd);
        }
        return r;
    }
    return open_fd(fd, hello, deadline, ret, err, errlen);
}

int cdc_conn_open_tcp(const char *hostport, const cdc_hello *hello, int64_t timeout_ns,
                      cdc_conn **ret, char *err, size_t errlen) {
    const int64_t deadline = open_deadline(timeout_ns);
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
    // Each address in turn, all of them within the one deadline.
    int fd = -1, r = -ECONNREFUSED;
    for (const struct addrinfo *a = ai; a && fd < 0 && r != -ETIMEDOUT; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        r = fd < 0 ? -errno : connect_tcp(fd, a->ai_addr, a->ai_addrlen, deadline);
        if (r < 0 && fd >= 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", hostport, strerror(-r));
        return r;
    }
    const int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return open_fd(fd, hello, deadline, ret, err, errlen);
}

const cdc_welcome *cdc_conn_welcome(const cdc_conn *c) {
    return c->hello ? &c->welcome : NULL;
}

const Contactd__V1__Welcome *cdc_wire_welcome(const cdc_conn *c) {
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
    cd_arena_fini(&c->arena);
    cd_codec_frame_msg_fini(&c->frame);
    free(c->scene.bodies);
    cdc_result_store_free(&c->results);
    cdc_wire_free(c->hello);
    free(c->out);
    free(c);
}

// Makes c's send side hold a frame of nb bodies, nc contacts and nj joints. A frame bigger than
// the granted limits is sent anyway so that the daemon's Error explains the limit to the caller,
// rather than a local failure with less to say. Returns 0, -EINVAL (a negative count) or
// -ENOMEM.
static int fit_send(cdc_conn *c, int nb, int nc, int nj) {
    if (nb < 0 || nc < 0 || nj < 0) {
        return -EINVAL;
    }
    if (nb <= c->size.max_bodies && nc <= c->size.max_contacts && nj <= c->size.max_joints) {
        return 0;
    }
    const cs_limits size = {
        .max_bodies = nb > c->size.max_bodies ? nb : c->size.max_bodies,
        .max_contacts = nc > c->size.max_contacts ? nc : c->size.max_contacts,
        .max_joints = nj > c->size.max_joints ? nj : c->size.max_joints,
    };
    return size_send(c, &size);
}

int cdc_wire_frame_send(cdc_conn *c, const cs_scene *s) {
    const int r = fit_send(c, s->nb, s->nc, s->nj);
    if (r < 0) {
        return r;
    }
    Contactd__V1__ClientMessage *m = cd_codec_frame_build(&c->frame, s);
    return m ? send_msg(c, &m->base) : -ENOMEM;
}

// The caller's frame into c's cs_scene (sized for it by fit_send). The public types mirror the
// wire's field by field but are their own, so that the library's ABI does not move with the
// daemon's internal types; the copy is a few hundred bytes a frame.
static void scene_in(cs_scene *s, const cdc_frame *f) {
    *s = (cs_scene){.seq = f->seq, .dt = f->dt, .friction_dirs = f->friction_dirs,
                    .penetration_recovery = f->penetration_recovery,
                    .solver = (cs_solver)f->solver, .nb = f->nb, .nc = f->nc, .nj = f->nj,
                    .bodies = s->bodies, .contacts = s->contacts, .joints = s->joints};
    memcpy(s->gravity, f->gravity, sizeof s->gravity);
    for (int i = 0; i < f->nb; i++) {
        const cdc_body *in = &f->bodies[i];
        cs_body *b = &s->bodies[i];
        b->id = in->id;
        b->mass = in->mass;
        memcpy(b->inertia, in->inertia, sizeof b->inertia);
        memcpy(b->pos, in->pos, sizeof b->pos);
        memcpy(b->quat, in->quat, sizeof b->quat);
        memcpy(b->v, in->v, sizeof b->v);
        memcpy(b->w, in->w, sizeof b->w);
        memcpy(b->f, in->f, sizeof b->f);
        memcpy(b->tau, in->tau, sizeof b->tau);
        b->kinematic = in->kinematic;
    }
    for (int i = 0; i < f->nc; i++) {
        const cdc_contact *in = &f->contacts[i];
        cs_contact *k = &s->contacts[i];
        k->id = in->id;
        k->body_a = in->body_a;
        k->body_b = in->body_b;
        memcpy(k->point, in->point, sizeof k->point);
        memcpy(k->normal, in->normal, sizeof k->normal);
        k->distance = in->distance;
        k->mu = in->mu;
        k->stiffness = in->stiffness;
        k->dissipation = in->dissipation;
    }
    for (int i = 0; i < f->nj; i++) {
        const cdc_joint *in = &f->joints[i];
        cs_joint *j = &s->joints[i];
        j->id = in->id;
        j->body_a = in->body_a;
        j->body_b = in->body_b;
        j->kind = (cs_joint_kind)in->kind;
        memcpy(j->anchor, in->anchor, sizeof j->anchor);
        memcpy(j->axis, in->axis, sizeof j->axis);
    }
}

int cdc_frame_send(cdc_conn *c, const cdc_frame *f) {
    if ((f->nb > 0 && !f->bodies) || (f->nc > 0 && !f->contacts) || (f->nj > 0 && !f->joints)) {
        return -EINVAL;
    }
    const int r = fit_send(c, f->nb, f->nc, f->nj);
    if (r < 0) {
        return r;
    }
    scene_in(&c->scene, f);
    Contactd__V1__ClientMessage *m = cd_codec_frame_build(&c->frame, &c->scene);
    return m ? send_msg(c, &m->base) : -ENOMEM;
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

int cdc_wire_send_packed(cdc_conn *c, const uint8_t *buf, size_t len) {
    return write_all(c, buf, len);
}
