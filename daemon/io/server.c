/* SPDX-License-Identifier: MIT */
/* libuv servers and connections (see server.h).
 *
 * Protocol, per connection: the first message must be a Hello with protocol_version 1. The
 * session it asks for is sized (cd_session_bytes) and checked against the per-session cap and
 * what is left of the daemon's memory budget, then made on libuv's thread pool (allocation, page
 * pre-fault, LAPACK warm-up), never on this thread; the reply is a Welcome with the granted
 * limits, solvers, mode, budget, tick grid and memory. Once the Welcome is out whole (at
 * admission, or once the client has read what was queued before it), the connection is attached
 * to the session's worker (attach), which reads the socket, decodes and validates each Frame
 * straight into the session's mailbox (wire/frame_decode.h; protobuf-c for what that fast path
 * declines), and writes its Result: at the tick after it (stream mode) or at once (request mode;
 * frames beyond the rate limit or the queue get ERROR_LIMIT). Until then, after the client's
 * EOF, or without the worker's buffers, this thread does the same and kicks the worker. The
 * functions that handle messages run on either thread. Closed sessions are freed on the pool too. A
 * frame that fails validation gets an Error (ERROR_INVALID, or ERROR_LIMIT when it exceeds the
 * session's limits) carrying its seq and naming the field, and no Result; the session goes on; so
 * does a message protobuf-c would unpack otherwise than sent (wire/strict.h), but for a Hello's
 * token holding a NUL byte where tokens are checked (TCP with an auth_token_file), which is a wrong
 * token (ERROR_DENIED, and the close). A StatsRequest, before or after Hello, gets the daemon-wide
 * Stats with every open session's (or the one it names; on an attached session's own connection,
 * only that session), or ERROR_LIMIT beyond the connection's Stats rate (CD_STATS_INTERVAL_NS);
 * refusals beyond a rate of their own end the connection. Errors after which the connection
 * closes (once the Error is written): undecodable bytes (ERROR_DECODE), a message over
 * max_message_bytes, the daemon's or the one the session asked for (ERROR_TOO_LARGE), a wrong
 * protocol version, a second Hello or a Frame before Hello (ERROR_PROTOCOL), no session free, or
 * the peer uid's max_sessions_per_uid reached (ERROR_BUSY). A Hello naming an unknown solver gets
 * ERROR_INVALID, one over the memory limits ERROR_MEMORY, and the connection waits for a better
 * Hello. A client that shuts its sending side is still answered (its Hello's Welcome or Error,
 * replies queued, and the frames it sent, as its mode promises: cd_session_has_unanswered, on
 * either thread) before the connection ends; a message it left unfinished is named last, by the
 * ERROR_DECODE that ends it.
 *
 * Output: an attached connection's worker writes it, into a buffer sized at admission that keeps
 * room for the Error that ends the connection; the Errors it sends reach this thread's log
 * through a ring (note_error). Otherwise the workers wake the loop through one uv_async_t, whose
 * wake drains every session's ring here. Any message is written only while the connection's
 * unsent backlog has room (max_queued_bytes here); otherwise it is dropped (results are counted,
 * Errors too), so a client that does not read costs only itself. Three messages are must-send,
 * queued past the backlog: the Welcome (the client could not use its session without it), the
 * Error that ends the connection (a TCP Hello's refusal is one) and the Goodbye at shutdown. A
 * connection gets each at most once, so they hold the backlog over its limit by at most their
 * bytes. */
#include "io/server.h"

#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "contactd.pb-c.h"
#include "io/ingest.h"
#include "io/record.h"
#include "solver/contact.h"
#include "wire/arena.h"
#include "wire/codec.h"
#include "wire/frame_decode.h"
#include "wire/framing.h"
#include "wire/strict.h"
#include "service/clock.h"
#include "service/grid.h"
#include "service/rate.h"
#include "service/ring.h"
#include "sys/log.h"

#define PROTOCOL_VERSION 1
#define LISTEN_BACKLOG 64
// Bytes taken from the socket per read: big enough for a typical frame in one go.
#define READ_CHUNK 65536
// A connection's decoding arena: a 16-contact frame unpacks into about 3 KiB. It grows to the
// largest message the connection sent, up to this many bytes per byte of max_message_bytes
// (protobuf-c's structs take a few times the wire size: a 27-byte Vec3 becomes 48 bytes).
#define ARENA_BYTES 16384
#define ARENA_MOST_PER_BYTE 8
// How often connections are checked for a Hello that is overdue: the timeout's granularity.
#define SWEEP_MS 50
// How long a client has to take its last message: at shutdown its last results and Goodbye, and
// the Error that ends its connection.
#define LINGER_MS 500
// Frames refused in a row (rate, queue, validation) after which the session is closed: a second
// of nothing but refusals at 1 kHz.
#define CD_REFUSED_IN_ROW_MAX 1000
// A connection's StatsRequests: one per 10 ms on average, in bursts of up to 16 (one for each of
// the default max_sessions at once). Each costs this thread some 10 us, so a client polling
// every 10 ms costs it 0.1 %, and a flood gets ERROR_LIMIT. The refusals have a rate of their
// own, one per ms on average in bursts of 1000, beyond which the connection is closed: answered
// or refused, a flood costs a bounded amount of work a second (requests accepted between the
// refusals do not reset it, as they would a count in a row).
#define CD_STATS_INTERVAL_NS 10000000
#define CD_STATS_BURST 16
#define CD_STATS_REFUSAL_INTERVAL_NS 1000000
#define CD_STATS_REFUSAL_BURST 1000
// Reads an attached connection's worker makes per readiness event before it looks at its other
// sessions (epoll reports what is left).
#define DIRECT_READS 4
// Errors an attached connection's worker can hand this thread to log before it next wakes; more
// are counted and logged as a number.
#define NOTES 8
// Bytes an attached connection's output keeps for the Error that ends the connection: a packed
// Error with the longest text, its envelope and length prefix.
#define FINAL_ERROR_BYTES (sizeof ((cd_error_msg *)0)->text + 64)

// An Error a worker sent on an attached connection, for this thread to log.
struct note {
    Contactd__V1__ErrorCode code;
    bool final;
    char text[sizeof ((cd_error_msg *)0)->text];
};

// An attached connection's buffers, which its worker reads and writes: its replies in flight, its
// read buffer, the framer's buffer and the decoding arena, each a multiple of 64 bytes in one
// block.
struct direct_sizes {
    size_t out, in, framer, arena;
    size_t backlog; /* of out: the unsent bytes beyond which a new message is dropped */
};

struct conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } h;
    uv_shutdown_t shutdown;
    cd_server *srv;
    struct conn *prev, *next;
    uint64_t id;
    char peer[64];
    cd_framer framer;
    cd_arena arena;           /* every message is unpacked into it, then it is reset */
    cd_session *session;      /* NULL until a Hello was accepted, and after close */
    struct admission *admitting; /* the session being made for this connection's Hello */
    cd_result_msg *result_msg; /* sized for the session's limits, made on the pool */
    cd_error_msg error_msg;
    cd_recording *rec;        /* the session's recording, or NULL; written by its reader */
    const uint8_t *msg;       /* the message being handled, as received (msg_len bytes) */
    size_t msg_len;
    bool closing;             /* no more reading or sending */
    bool eof;                 /* the client shut its sending side: it is answered, then ended */
    size_t cut;               /* at eof: bytes of a message it left unfinished (message_cut) */
    bool lingering;           /* written and shut after conn_finish: reading and discarding
                               * until the client closes (on_discard) or on_sweep ends it */
    int64_t finish_ns;        /* when conn_finish began; the connection ends LINGER_MS after,
                               * written or not */
    size_t queued;            /* bytes the unwritten replies hold: messages and requests */
    int64_t accepted_ns;      /* a connection without a Hello is closed hello_timeout after */
    bool tcp;                 /* a TCP peer: its Hello must carry the token (tcp_admitted) */
    bool has_uid;             /* a Unix-socket peer, whose credentials the kernel told us */
    uint32_t uid, gid;
    size_t arena_most;        /* the arena grows to at most this */
    int refused_in_row;       /* frames refused since one was accepted */
    int64_t stats_tat_ns;     /* the StatsRequest rate limit's theoretical arrival time */
    int64_t stats_refused_tat_ns; /* the same for its refusals (CD_STATS_REFUSAL_INTERVAL_NS) */
    // Attached (cd_loop_attach, once the Welcome is out): the session's worker reads the socket,
    // handles its messages with the functions below and writes every reply itself; from then on the
    // fields above (framer, arena, messages) are the worker's. This thread keeps the handle, and
    // takes the connection back once the worker has let go of the session (reaped).
    bool direct;
    int fd;                   /* direct: the socket */
    cd_counts *counts;        /* direct: the worker's counts for the call in progress */
    int64_t read_ns;          /* direct: when the worker's wait found the bytes it is handling
                               * (the frames' received time) */
    int64_t read_tick_ns;     /* direct: the tick that wait ended at, or 0 (the frames' tick) */
    bool end_after_flush;     /* direct: the connection ends once its output is written */
    bool session_closed;      /* direct: closed by this thread; the worker may still read
                               * session until it lets go of it (then take_back) */
    bool write_failed;        /* direct: the peer is gone; output is dropped */
    uint8_t *out;             /* direct: replies not yet written, [out_off, out_len) */
    size_t out_off, out_len, out_cap;
    uint8_t *in;              /* direct: the worker's read buffer, in_cap bytes */
    size_t in_cap;
    void *direct_mem;         /* the block out, in, the framer's buffer and the arena are lent
                               * from when attached (direct_sizes), made on the pool */
    struct direct_sizes dsz;
    cd_ring notes;            /* Errors sent by the worker (producer) to log here (consumer) */
    _Atomic uint32_t notes_lost; /* Errors the worker found no room for in notes */
    bool must_send;           /* the message being sent goes out whatever the client left
                               * unread (conn_send_must); attached, only the Error that ends the
                               * connection is, and it may use the room kept for it */
    uint32_t errors_unsent;   /* Errors with no room left because the client did not read */
};

struct cd_server {
    uv_loop_t *loop;
    const cd_config *cfg;
    cd_session_table *table;
    cd_loop *ticker;
    size_t reserved_bytes;    /* sessions admitted, being made or being freed */
    uv_async_t wake;
    uv_check_t pass_end;      /* runs after each event-loop pass's I/O callbacks */
    int64_t pass_ns;          /* when this pass's first read began; 0 between passes */
    uv_pipe_t unix_listener;
    uv_tcp_t tcp_listener;
    bool unix_open, tcp_open, wake_open, check_open;
    bool closed;
    bool unlink_socket; /* the socket file is ours to remove */
    uv_timer_t sweep;   /* closes connections that said no Hello in time */
    uv_timer_t linger;  /* at shutdown: ends connections that do not take their Goodbye */
    bool sweep_open, linger_open;
    struct conn *conns;
    int nconns;
    int lingering;            /* of conns, at most CD_SERVER_LINGERING_MAX */
    cd_recorder *recorder;    /* started with the first recording */
    uint64_t next_conn_id;
    _Atomic uint64_t hello_timeouts, refused; /* io writes; a worker answering Stats reads */
    _Atomic uint64_t stats_refused; /* StatsRequests over their rate: io and workers add */
    int64_t ends_window_ns;   /* log_end: when its window of a second began */
    int ends_logged;          /* ... Errors logged in it */
    uint64_t ends_unlogged;   /* ... and those not logged since the last that was */
    char address[CD_SOCKET_PATH_MAX + 96];
    // One read buffer for every connection: libuv hands each read to on_read before the next,
    // and the framer copies what it keeps, so an idle connection holds none.
    uint8_t rbuf[READ_CHUNK];
};

// A session being made (or freed) on libuv's thread pool, with what its connection will hold.
struct admission {
    uv_work_t req;
    cd_server *srv;
    struct conn *conn;        /* NULL once the connection is gone */
    cd_session_params params;
    size_t bytes;
    cd_session *session;      /* made by the pool thread; or the one to free */
    cd_result_msg *result_msg; /* made by the pool thread for the connection */
    struct direct_sizes dsz;
    void *direct_mem;         /* made (and written) by the pool thread; or the one to free */
    char client[65];
    // A recording (record_plan on io at the Hello, record_open on the pool, record_start on io):
    uint8_t *rec_header;      /* the RecordHeader, packed; NULL: the session is not recorded */
    size_t rec_header_len;
    size_t rec_buffer_bytes;
    uint64_t rec_max_file_bytes;
    cd_recording *rec;        /* made on the pool; the connection's once started */
    char rec_path[sizeof ((cd_config *)0)->record_dir + 96];
    char rec_err[sizeof ((cd_config *)0)->record_dir + 160]; /* why rec is NULL */
};

struct wreq {
    uv_write_t req;
    uv_buf_t buf;
    uint8_t data[];
};

static void attach(struct conn *c);
static void finish_answered(struct conn *c);
static void conn_abort(struct conn *c);
static void conn_finish(struct conn *c);
static void drain(struct conn *c);
static void take_back(struct conn *c);
static const cd_endpoint_ops direct_ops;

// Writes what the socket takes of a direct connection's output, without blocking.
// thread: the session's worker.
static void direct_write(struct conn *c) {
    while (c->out_off < c->out_len && !c->write_failed) {
        const ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                               MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            // The peer is gone: the next read says so and ends the connection (after its
            // shutdown no read comes: the session ends once what it asked is answered).
            c->write_failed = true;
        }
    }
    if (c->out_off == c->out_len) {
        c->out_off = c->out_len = 0;
    }
}

// Packs msg behind its length prefix into a direct connection's output and writes what the
// socket takes. Returns 0, or -ENOBUFS when the output (sized at attach) has no room: the
// client has not read what came before. thread: the session's worker. rt-safe: yes.
static int direct_send(struct conn *c, const ProtobufCMessage *msg) {
    if (c->write_failed) {
        return -EPIPE;
    }
    if (c->out_off > 0) {
        // Unwritten bytes to the front, so all the room is in one piece.
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    // Like the I/O thread's queue: nothing more while the backlog is reached, but the Error that
    // ends the connection, which always has its room.
    const size_t keep = c->must_send ? 0 : FINAL_ERROR_BYTES;
    const size_t room = c->out_cap - c->out_len;
    size_t len;
    const int r = (c->must_send || c->out_len < c->dsz.backlog) && room > keep
                      ? cd_codec_pack(msg, c->out + c->out_len, room - keep, &len)
                      : -ENOBUFS;
    if (r < 0) {
        return r;
    }
    c->out_len += len;
    direct_write(c);
    return 0;
}

static void on_written(uv_write_t *req, int status) {
    struct conn *c = req->handle->data;
    struct wreq *w = (struct wreq *)req;
    c->queued -= sizeof *w + w->buf.len;
    free(w);
    // ECANCELED: the connection is closing and took the queue with it.
    if (status < 0 && status != UV_ECANCELED) {
        cd_log(CD_LOG_DEBUG, "connection %llu (%s): write failed: %s", (unsigned long long)c->id,
               c->peer, uv_strerror(status));
        conn_abort(c);
        return;
    }
    // A Welcome that did not go out whole at admission is out now (with all before it).
    attach(c);
}

// Queues w's len bytes of data on c's stream, counted in c->queued until written. Returns 0 or
// a negative errno (w is then the caller's to free).
static int write_out(struct conn *c, struct wreq *w, size_t len) {
    w->buf = uv_buf_init((char *)w->data, (unsigned)len);
    const int r = uv_write(&w->req, &c->h.stream, &w->buf, 1, on_written);
    if (r == 0) {
        c->queued += sizeof *w + len;
    }
    return r;
}

// Packs msg behind its length prefix and queues it. Returns 0 or a negative errno: -ENOBUFS
// when the client has not read what was queued before (max_queued_bytes, counted with each
// reply's request: many small replies hold several times their bytes), whatever the message
// but a must-send one; a client that does not read cannot make us buffer Errors or Stats
// without bound either.
static int conn_send(struct conn *c, const ProtobufCMessage *msg) {
    if (c->direct) {
        return direct_send(c, msg);
    }
    if (c->closing) {
        return -ECANCELED;
    }
    if (c->queued >= c->srv->cfg->max_queued_bytes && !c->must_send) {
        return -ENOBUFS;
    }
    const size_t n = cd_codec_packed_size(msg);
    struct wreq *w = malloc(sizeof *w + n);
    if (!w) {
        return -ENOMEM;
    }
    size_t len;
    int r = cd_codec_pack(msg, w->data, n, &len);
    if (r == 0) {
        r = write_out(c, w, len);
    }
    if (r < 0) {
        free(w);
    }
    return r;
}

// Sends a must-send message, past the backlog (the file's header says which). Returns as
// conn_send.
static int conn_send_must(struct conn *c, const ProtobufCMessage *msg) {
    c->must_send = true;
    const int r = conn_send(c, msg);
    c->must_send = false;
    return r;
}

/* Errors logged at notice a second at most (all but a refusal of one message: log_error): a
 * client refused again and again (connection caps, allow-list, token, memory budget) cannot flood
 * the log. */
#define ENDS_LOGGED_PER_SECOND 10

// Logs the Error (code_name, text) sent to c at notice, at most ENDS_LOGGED_PER_SECOND a second
// (not all end c: a Hello's ERROR_MEMORY, an unknown message's ERROR_PROTOCOL); the next line
// logged says how many were not. thread: io.
static void log_end(const struct conn *c, const char *code_name, const char *text) {
    cd_server *s = c->srv;
    const int64_t now = cd_clock_ns();
    if (now - s->ends_window_ns >= 1000000000) {
        s->ends_window_ns = now;
        s->ends_logged = 0;
    }
    if (s->ends_logged >= ENDS_LOGGED_PER_SECOND) {
        s->ends_unlogged++;
        return;
    }
    s->ends_logged++;
    char more[96] = "";
    if (s->ends_unlogged) {
        snprintf(more, sizeof more, " (%llu Errors before it not logged)",
                 (unsigned long long)s->ends_unlogged);
        s->ends_unlogged = 0;
    }
    cd_log_event(CD_LOG_NOTICE, c->session ? cd_session_id(c->session) : 0, code_name,
                 "connection %llu (%s): %s: %s%s", (unsigned long long)c->id, c->peer, code_name,
                 text, more);
}

// Logs an Error sent to c (final: one that ends the connection). Refusals of one message
// (invalid, or over a limit while the connection goes on) can come at the tick rate or faster:
// they are logged at debug only, and counted in Stats (frames_refused, stats_requests_refused);
// the rest at notice, a bounded number a second (log_end). thread: io.
static void log_error(const struct conn *c, Contactd__V1__ErrorCode code, bool final,
                      const char *text) {
    const ProtobufCEnumValue *name =
        protobuf_c_enum_descriptor_get_value(&contactd__v1__error_code__descriptor, (int)code);
    const char *code_name = name ? name->name : "ERROR_UNSPECIFIED";
    if (code == CONTACTD__V1__ERROR_CODE__ERROR_INVALID ||
        (code == CONTACTD__V1__ERROR_CODE__ERROR_LIMIT && !final)) {
        cd_log_event(CD_LOG_DEBUG, c->session ? cd_session_id(c->session) : 0, code_name,
                     "connection %llu (%s): %s: %s", (unsigned long long)c->id, c->peer,
                     code_name, text);
        return;
    }
    log_end(c, code_name, text);
}

// Hands an Error its worker sent to this thread to log, and wakes it. thread: c's worker.
// rt-safe: yes.
static void note_error(struct conn *c, Contactd__V1__ErrorCode code, bool final,
                       const char *text) {
    struct note *n = cd_ring_claim(&c->notes);
    if (!n) {
        atomic_fetch_add_explicit(&c->notes_lost, 1, memory_order_relaxed);
        return;
    }
    n->code = code;
    n->final = final;
    snprintf(n->text, sizeof n->text, "%s", text);
    cd_ring_push(&c->notes);
    (void)uv_async_send(&c->srv->wake);
}

// Logs the Errors c's worker handed over (note_error). thread: io.
static void notes_log(struct conn *c) {
    const struct note *n;
    while ((n = cd_ring_peek(&c->notes))) {
        log_error(c, n->code, n->final, n->text);
        cd_ring_pop(&c->notes);
    }
    const uint32_t lost = atomic_exchange_explicit(&c->notes_lost, 0, memory_order_relaxed);
    if (lost) {
        cd_log_event(CD_LOG_NOTICE, c->session ? cd_session_id(c->session) : 0, NULL,
                     "connection %llu (%s): %u more Errors sent, not logged",
                     (unsigned long long)c->id, c->peer, (unsigned)lost);
    }
}

// Sends an Error with text; one that does not fit what the client has left unread is counted
// (errors_unsent). An attached connection's worker logs nothing (the log may block): it hands
// the Error to this thread (notes), which logs it at its next wake. final: the Error that ends
// the connection, a must-send one (conn_send_must).
static void error_send(struct conn *c, Contactd__V1__ErrorCode code, uint64_t seq,
                       const char *text, bool final) {
    if (c->direct) {
        note_error(c, code, final, text);
    } else {
        log_error(c, code, final, text);
    }
    const ProtobufCMessage *m = &cd_codec_error_build(&c->error_msg, code, seq, text)->base;
    const int r = final ? conn_send_must(c, m) : conn_send(c, m);
    c->errors_unsent += r == -ENOBUFS;
}

// Formats an Error's text and sends it (error_send).
static void error_sendv(struct conn *c, Contactd__V1__ErrorCode code, uint64_t seq, bool final,
                        const char *fmt, va_list ap) {
    char text[sizeof c->error_msg.text];
    vsnprintf(text, sizeof text, fmt, ap);
    error_send(c, code, seq, text, final);
}

static void send_error(struct conn *c, Contactd__V1__ErrorCode code, uint64_t seq,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void send_error(struct conn *c, Contactd__V1__ErrorCode code, uint64_t seq,
                       const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_sendv(c, code, seq, false, fmt, ap);
    va_end(ap);
}

static void fail(struct conn *c, Contactd__V1__ErrorCode code, uint64_t seq, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));

// Sends the Error that says why the connection ends, then ends it once that is written.
static void fail(struct conn *c, Contactd__V1__ErrorCode code, uint64_t seq, const char *fmt,
                 ...) {
    va_list ap;
    va_start(ap, fmt);
    error_sendv(c, code, seq, true, fmt, ap);
    va_end(ap);
    conn_finish(c);
}

// Ends c's recording, if any, with its session's counts; the recorder writes the rest and closes
// the file. thread: io, once no worker reads c's socket.
static void record_stop(struct conn *c) {
    if (!c->rec) {
        return;
    }
    cd_stats st = {0};
    cd_session_stats(c->session, &st);
    cd_recording_end(c->rec, &(cd_record_end){.frames_received = st.frames_received,
                                              .frames_solved = st.frames_solved,
                                              .frames_superseded = st.frames_superseded});
    c->rec = NULL;
}

static void release_session(struct conn *c) {
    if (c->admitting) {
        // The pool thread is still making it; admitted() frees it when it comes back.
        c->admitting->conn = NULL;
        c->admitting = NULL;
    }
    if (!c->session || c->session_closed) {
        return;
    }
    cd_stats st = {0};
    cd_session_stats(c->session, &st);
    cd_log_event(CD_LOG_INFO, cd_session_id(c->session), "SESSION_CLOSED",
                 "session %llu closed: %llu frames received, %llu solved, %llu superseded, "
                 "%llu invalid, %llu over the rate or queue limit, %llu deadline misses, "
                 "%llu results dropped, solve max %lld ns",
                 (unsigned long long)cd_session_id(c->session),
                 (unsigned long long)st.frames_received, (unsigned long long)st.frames_solved,
                 (unsigned long long)st.frames_superseded, (unsigned long long)st.frames_invalid,
                 (unsigned long long)st.frames_limited,
                 (unsigned long long)st.deadline_misses, (unsigned long long)st.results_dropped,
                 (long long)st.solve_ns.max);
    cd_session_close(c->session);
    if (c->direct) {
        c->session_closed = true;
        return;
    }
    record_stop(c);
    c->session = NULL;
}

static void result_msg_free(cd_result_msg *m) {
    if (m) {
        cd_codec_result_msg_fini(m);
        free(m);
    }
}

static void on_closed(uv_handle_t *h) {
    struct conn *c = h->data;
    cd_server *s = c->srv;
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        s->conns = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    s->nconns--;
    s->lingering -= c->lingering;
    if (s->closed && !s->conns && s->linger_open) {
        // Every connection took its Goodbye: nothing is left to wait for.
        uv_close((uv_handle_t *)&s->linger, NULL);
        s->linger_open = false;
    }
    cd_framer_fini(&c->framer);
    cd_arena_fini(&c->arena);
    cd_ring_fini(&c->notes);
    // Only when never attached; otherwise the pool freed them with the session.
    free(c->direct_mem);
    result_msg_free(c->result_msg);
    free(c);
}

// Ends a connection now: the peer is gone, a write failed, or the server is closing. A
// connection its worker serves is closed once the worker has let go of the session (take_back).
static void conn_abort(struct conn *c) {
    release_session(c);
    c->closing = true;
    if (c->direct) {
        return;
    }
    if (!uv_is_closing(&c->h.handle)) {
        uv_close(&c->h.handle, on_closed);
    }
}

// A lingering connection's reads all go to the server's buffer, and nowhere after.
static void on_discard_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    const struct conn *c = h->data;
    *buf = uv_buf_init((char *)c->srv->rbuf, sizeof c->srv->rbuf);
}

// Ends a lingering connection when its client has closed (EOF, or a reset): nothing it sent is
// left unread, so the close resets nothing.
static void on_discard(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    if (nread < 0) {
        conn_abort(stream->data);
    }
}

// Once the last output is written and the sending side shut: closing now, with bytes the client
// sent still unread (a refused connection's Hello, frames after a refused Hello), would make the
// kernel reset the connection, and a reset drops what the client has not received yet, the
// Error that says why last. So the connection reads and discards until the client closes, or
// on_sweep ends it LINGER_MS after conn_finish began; CD_SERVER_LINGERING_MAX at a time, beyond
// which (and when the server is closing) it closes at once.
static void on_shutdown(uv_shutdown_t *req, int status) {
    struct conn *c = req->data;
    cd_server *s = c->srv;
    if (status == 0 && !s->closed && s->lingering < CD_SERVER_LINGERING_MAX &&
        uv_read_start(&c->h.stream, on_discard_alloc, on_discard) == 0) {
        c->lingering = true;
        s->lingering++;
        return;
    }
    conn_abort(c);
}

// Ends a connection once what is queued (the Error that explains why) has been written and the
// client has closed (on_shutdown), or LINGER_MS after (on_sweep): a client that reads nothing
// must not keep it, and its place, open.
static void conn_finish(struct conn *c) {
    if (c->direct) {
        // On the worker: it stops reading, writes what is queued and hands the connection back.
        c->end_after_flush = true;
        return;
    }
    if (c->closing) {
        return;
    }
    release_session(c);
    c->closing = true;
    c->finish_ns = cd_clock_ns();
    (void)uv_read_stop(&c->h.stream);
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, &c->h.stream, on_shutdown) < 0) {
        conn_abort(c);
    }
}

// A limit the client asked for (0 = not given), lowered to what the daemon allows.
static int grant(uint32_t asked, int most) {
    return asked > 0 && asked < (uint32_t)most ? (int)asked : most;
}

// The open connections of a Unix peer's uid (the caller's own included), or only those that hold
// a session or are being given one.
static int uid_connections(const cd_server *s, uint32_t uid, bool with_session) {
    int n = 0;
    for (const struct conn *o = s->conns; o; o = o->next) {
        n += o->has_uid && o->uid == uid && !o->closing &&
             (!with_session || o->session || o->admitting);
    }
    return n;
}

// Parses a solver name the Hello gives in field. Returns 0, or -EINVAL after telling the client.
static int hello_solver_name(struct conn *c, const char *field, const char *name,
                             cs_solver *ret) {
    cs_solver s;
    if (cs_solver_from_name(name, &s) < 0 || s == CS_SOLVER_DEFAULT) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, 0, "%s: unknown solver '%.64s'",
                   field, name);
        return -EINVAL;
    }
    if (!cs_solver_is_available(s)) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, 0,
                   "%s: solver '%s' is not available in this build", field, cs_solver_name(s));
        return -EINVAL;
    }
    *ret = s;
    return 0;
}

// The default solver a Hello asks for (name wins over the enum) and every solver its frames may
// name (the default and hello.solvers) as a mask. Returns 0, or -EINVAL after telling the client
// which field is wrong.
static int hello_solvers(struct conn *c, const Contactd__V1__Hello *h, cs_solver *ret,
                         unsigned *ret_mask) {
    cs_solver s = (cs_solver)h->default_solver;
    if (h->default_solver_name && h->default_solver_name[0] != '\0') {
        if (hello_solver_name(c, "hello.default_solver_name", h->default_solver_name, &s) < 0) {
            return -EINVAL;
        }
    } else if ((int)s < 0 || (int)s >= CS_SOLVER_COUNT) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, 0,
                   "hello.default_solver: unknown solver value %d", (int)s);
        return -EINVAL;
    } else if (s == CS_SOLVER_DEFAULT) {
        s = c->srv->cfg->default_solver;
    } else if (hello_solver_name(c, "hello.default_solver", cs_solver_name(s), &s) < 0) {
        return -EINVAL;
    }
    unsigned mask = 1u << s;
    for (size_t i = 0; i < h->n_solvers; i++) {
        char field[48];
        snprintf(field, sizeof field, "hello.solvers[%zu]", i);
        cs_solver x;
        if (hello_solver_name(c, field, h->solvers[i], &x) < 0) {
            return -EINVAL;
        }
        mask |= 1u << x;
    }
    *ret = s;
    *ret_mask = mask;
    return 0;
}

// At most what a Result within lim packs to: ids, three vectors and a state per contact, two
// vectors per body and per joint, the timing, stats and detail.
static size_t result_bytes(const cs_limits *lim) {
    return 1024 + 128 * (size_t)lim->max_contacts +
           96 * ((size_t)lim->max_bodies + (size_t)lim->max_joints);
}

// An attached connection's backlog, as the I/O thread's (max_queued_bytes) but no more than its
// session's results in flight and room for Errors: a message is taken while less is unsent.
static size_t attach_backlog_bytes(const cs_limits *lim, size_t most) {
    const size_t want = CD_SESSION_RESULTS * result_bytes(lim) + 4096;
    return want < most ? want : most;
}

// An attached connection's decoding arena: what protobuf-c allocates for a Frame within lim
// (every message and array, rounded up to 16 bytes, with the same again for strings and the
// like). A larger message fails to decode and gets ERROR_LIMIT; the session goes on.
static size_t attach_arena_bytes(const cs_limits *lim) {
    const size_t vec = sizeof(Contactd__V1__Vec3) + 16, quat = sizeof(Contactd__V1__Quat) + 16;
    const size_t body = sizeof(Contactd__V1__Body) + 16 + 5 * vec + quat + 9 * sizeof(double) +
                        32;
    const size_t contact = sizeof(Contactd__V1__Contact) + 16 + 2 * vec + 16;
    const size_t joint = sizeof(Contactd__V1__Joint) + 16 + 2 * vec + 16;
    const size_t frame = sizeof(Contactd__V1__ClientMessage) + sizeof(Contactd__V1__Frame) +
                         vec + 256;
    return 2 * (frame + (size_t)lim->max_bodies * body + (size_t)lim->max_contacts * contact +
                (size_t)lim->max_joints * joint) + 16384;
}

static size_t round64(size_t n) {
    return (n + 63) & ~(size_t)63;
}

// The output holds the backlog, one more message taken just below it (a Result at most) and the
// Error that ends the connection.
static struct direct_sizes direct_sizes(const struct conn *c, const cd_session_params *p) {
    const size_t backlog = attach_backlog_bytes(&p->lim, c->srv->cfg->max_queued_bytes);
    const size_t out = backlog + result_bytes(&p->lim) + FINAL_ERROR_BYTES;
    return (struct direct_sizes){.out = round64(out), .in = READ_CHUNK,
                                 .framer = round64(cd_framer_most(&c->framer)),
                                 .arena = round64(attach_arena_bytes(&p->lim)),
                                 .backlog = backlog};
}

static size_t direct_bytes(const struct direct_sizes *z) {
    return z->out + z->in + z->framer + z->arena;
}

// What a session admitted with p on c holds of the daemon's memory: the session itself
// (cd_session_bytes), the connection's buffers when attached, the holder its Results are built in
// and the recording's buffer.
static size_t held_bytes(const struct conn *c, const cd_session_params *p, bool recorded) {
    const struct direct_sizes z = direct_sizes(c, p);
    return cd_session_bytes(p) + direct_bytes(&z) + round64(cd_codec_result_msg_bytes(&p->lim)) +
           (recorded ? cd_recording_buffer_bytes(c->srv->cfg->record_buffer_bytes) : 0);
}

// The most contacts a session like p on c may declare and still hold at most cap bytes (0: none).
static int contacts_within(const struct conn *c, cd_session_params p, bool recorded, size_t cap) {
    int lo = 0, hi = p.lim.max_contacts;
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        p.lim.max_contacts = mid;
        if (held_bytes(c, &p, recorded) <= cap) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

// The declared limits that size a session like p, for an ERROR_MEMORY: the client sees which to
// lower.
static void sized_by(const cd_session_params *p, char *buf, size_t len) {
    char solvers[96];
    cs_solver_list(p->lim.solvers, p->default_solver, solvers, sizeof solvers);
    snprintf(buf, len, "%d bodies, %d contacts, %d joints, %d directions with %s",
             p->lim.max_bodies, p->lim.max_contacts, p->lim.max_joints, p->lim.max_dirs, solvers);
}

// Fits p under the per-session cap: a max_contacts the client left to the daemon is lowered
// until it fits; one it asked for is kept, and then the Hello is refused. Returns the bytes the
// session holds (held_bytes), or 0 after sending ERROR_MEMORY.
static size_t hello_memory(struct conn *c, cd_session_params *p, bool contacts_asked,
                           bool recorded) {
    const cd_config *cfg = c->srv->cfg;
    size_t bytes = held_bytes(c, p, recorded);
    char what[192];
    if (bytes > cfg->max_session_bytes) {
        const int fit = contacts_within(c, *p, recorded, cfg->max_session_bytes);
        if (contacts_asked || fit == 0) {
            sized_by(p, what, sizeof what);
            send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_MEMORY, 0,
                       "hello.limits: %s need %.1f MiB, over the per-session cap of %zu MiB "
                       "([session] max_session_mb); at most %d contacts fit%s", what,
                       (double)bytes / (1 << 20), cfg->max_session_bytes >> 20, fit,
                       fit == 0 ? " beside these bodies and joints" : "");
            return 0;
        }
        p->lim.max_contacts = fit;
        bytes = held_bytes(c, p, recorded);
    }
    // A reload may have lowered the budget below what is reserved.
    const size_t left = cfg->memory_budget_bytes > c->srv->reserved_bytes
                            ? cfg->memory_budget_bytes - c->srv->reserved_bytes : 0;
    if (bytes > left) {
        sized_by(p, what, sizeof what);
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_MEMORY, 0,
                   "hello.limits: %s need %.1f MiB and %.1f MiB of the daemon's memory budget "
                   "([server] memory_budget_mb = %zu) are left", what, (double)bytes / (1 << 20),
                   (double)left / (1 << 20), cfg->memory_budget_bytes >> 20);
        return 0;
    }
    return bytes;
}

// The solvers a session admitted with p may name, the default first, into names; returns how many.
static size_t session_solver_names(const cd_session_params *p, char *names[CS_SOLVER_COUNT]) {
    size_t n = 0;
    names[n++] = (char *)cs_solver_name(p->default_solver);
    for (int i = 1; i < CS_SOLVER_COUNT; i++) {
        if ((p->lim.solvers & (1u << i)) && i != (int)p->default_solver) {
            names[n++] = (char *)cs_solver_name((cs_solver)i);
        }
    }
    return n;
}

// The limits a session on c admitted with p holds, as the Welcome and the recording give them.
static void granted_limits(const struct conn *c, const cd_session_params *p,
                           Contactd__V1__Limits *ret) {
    contactd__v1__limits__init(ret);
    ret->max_bodies = (uint32_t)p->lim.max_bodies;
    ret->max_contacts = (uint32_t)p->lim.max_contacts;
    ret->max_joints = (uint32_t)p->lim.max_joints;
    ret->max_friction_directions = (uint32_t)p->lim.max_dirs;
    ret->max_message_bytes = (uint32_t)c->framer.max_msg;
}

// Plans the recording of the session a admits: its file's path in [record] dir and its
// RecordHeader, everything a replay needs, known at the Hello (the session's id is reserved for
// it); the pool then creates the file and buffer (record_open). A recording that cannot be
// planned is logged; the session goes on unrecorded (its Welcome has no record_path).
// thread: io.
static void record_plan(cd_server *srv, struct admission *a) {
    const cd_session_params *p = &a->params;
    if (!srv->recorder) {
        const int r = cd_recorder_new(&srv->recorder);
        if (r < 0) {
            cd_log(CD_LOG_WARNING, "session %llu is not recorded: cannot start the recorder: %s",
                   (unsigned long long)p->id, strerror(-r));
            return;
        }
    }
    char *names[CS_SOLVER_COUNT];
    Contactd__V1__Limits granted;
    granted_limits(a->conn, p, &granted);
    Contactd__V1__RecordHeader h = CONTACTD__V1__RECORD_HEADER__INIT;
    h.protocol_version = PROTOCOL_VERSION;
    h.daemon_version = (char *)CONTACTD_VERSION;
    h.session_id = p->id;
    h.client_name = a->client;
    h.n_solvers = session_solver_names(p, names);
    h.solvers = names;
    h.default_solver_name = names[0];
    h.limits = &granted;
    h.mode = (Contactd__V1__SessionMode)p->mode;
    h.budget_ns = p->budget_ns;
    h.tick_period_ns = cd_loop_period_ns(srv->ticker);
    h.tick_epoch_ns = cd_loop_epoch_ns(srv->ticker);
    h.warm_start = true;
    h.buffer_bytes = cd_recording_buffer_bytes(srv->cfg->record_buffer_bytes);
    const size_t n = protobuf_c_message_get_packed_size(&h.base);
    a->rec_header = malloc(n);
    if (!a->rec_header) {
        cd_log(CD_LOG_WARNING, "session %llu is not recorded: no memory",
               (unsigned long long)p->id);
        return;
    }
    a->rec_header_len = protobuf_c_message_pack(&h.base, a->rec_header);
    a->rec_buffer_bytes = srv->cfg->record_buffer_bytes;
    a->rec_max_file_bytes = srv->cfg->record_max_file_bytes;
    char when[32];
    const time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    snprintf(a->rec_path, sizeof a->rec_path, "%s/session-%s-%d-%llu.cdrec",
             srv->cfg->record_dir, when, (int)getpid(), (unsigned long long)p->id);
}

// Hands the recording the pool made for a's session to the recorder and to c, whose reader
// writes it from now on; or logs why there is none. thread: io.
static void record_start(struct conn *c, struct admission *a) {
    if (!a->rec_header) {
        return;
    }
    const unsigned long long id = cd_session_id(c->session);
    if (!a->rec) {
        cd_log(CD_LOG_WARNING, "session %llu is not recorded: %s", id, a->rec_err);
        return;
    }
    cd_recording_start(c->srv->recorder, a->rec);
    c->rec = a->rec;
    a->rec = NULL;
    cd_log(CD_LOG_INFO, "session %llu is recorded to %s", id, cd_recording_path(c->rec));
}

static void send_welcome(struct conn *c, const struct admission *a) {
    cd_server *srv = c->srv;
    const cd_session_params *p = &a->params;
    Contactd__V1__Limits granted;
    granted_limits(c, p, &granted);
    char *names[CS_SOLVER_COUNT];
    const size_t n = session_solver_names(p, names);
    Contactd__V1__Welcome w = CONTACTD__V1__WELCOME__INIT;
    w.protocol_version = PROTOCOL_VERSION;
    w.server_version = (char *)CONTACTD_VERSION;
    w.session_id = cd_session_id(c->session);
    w.default_solver_name = names[0];
    w.limits = &granted;
    w.rate_hz = (uint32_t)srv->cfg->rate_hz;
    w.deadline_ns = p->budget_ns;
    w.mode = (Contactd__V1__SessionMode)p->mode;
    w.tick_epoch_ns = cd_loop_epoch_ns(srv->ticker);
    w.tick_period_ns = cd_loop_period_ns(srv->ticker);
    w.budget_ns = p->budget_ns;
    w.workspace_bytes = a->bytes;
    w.n_solvers = n;
    w.solvers = names;
    w.request_queue = p->mode == CD_MODE_REQUEST ? CD_REQUEST_QUEUE : 0;
    w.record_path = c->rec ? (char *)cd_recording_path(c->rec) : "";
    Contactd__V1__ServerMessage env = CONTACTD__V1__SERVER_MESSAGE__INIT;
    env.msg_case = CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME;
    env.welcome = &w;
    (void)conn_send_must(c, &env.base);
    char solvers[96];
    cs_solver_list(p->lim.solvers, p->default_solver, solvers, sizeof solvers);
    cd_log_event(CD_LOG_INFO, w.session_id, "SESSION_OPENED",
                 "session %llu opened on connection %llu (%s, client '%s'): %s mode, solvers %s, "
                 "%d bodies, %d contacts, %d directions, budget %lld ns, %.2f MiB, worker %d",
                 (unsigned long long)w.session_id, (unsigned long long)c->id, c->peer, a->client,
                 p->mode == CD_MODE_REQUEST ? "request" : "stream", solvers, p->lim.max_bodies,
                 p->lim.max_contacts, p->lim.max_dirs, (long long)p->budget_ns,
                 (double)a->bytes / (1 << 20), cd_session_worker(c->session));
}

// thread: pool. Frees a session no one uses any more, and the recording it never started.
static void free_work(uv_work_t *req) {
    struct admission *a = req->data;
    cd_loop_thread_off_workers(a->srv->ticker);
    cd_session_free(a->session);
    cd_recording_discard(a->rec);
    result_msg_free(a->result_msg);
    free(a->direct_mem);
}

static void admission_free(struct admission *a) {
    free(a->rec_header);
    free(a);
}

// thread: io. The memory is back in the budget.
static void freed(uv_work_t *req, int status) {
    (void)status; // a cancelled free cannot happen: nothing cancels pool work here
    struct admission *a = req->data;
    a->srv->reserved_bytes -= a->bytes;
    admission_free(a);
}

// Frees a's session on the pool and then a itself.
static void free_later(struct admission *a) {
    a->req.data = a;
    if (uv_queue_work(a->srv->loop, &a->req, free_work, freed) < 0) {
        // Only fails for a closing loop; free here rather than leak.
        free_work(&a->req);
        freed(&a->req, 0);
    }
}

// thread: pool. Allocates, pre-faults and warms the session (cd_session_new).
static void admit_work(uv_work_t *req) {
    struct admission *a = req->data;
    cd_loop_thread_off_workers(a->srv->ticker);
    a->session = cd_session_new(&a->params);
    a->result_msg = malloc(sizeof *a->result_msg);
    if (a->result_msg && cd_codec_result_msg_init(a->result_msg, &a->params.lim) < 0) {
        free(a->result_msg);
        a->result_msg = NULL;
    }
    const size_t direct = direct_bytes(&a->dsz);
    if (direct > 0) {
        // Written now, on this thread, so the worker takes no page fault on it. Without it the
        // I/O thread serves the connection (attach).
        a->direct_mem = aligned_alloc(64, direct);
        if (a->direct_mem) {
            memset(a->direct_mem, 0, direct);
        }
    }
    if (a->session && a->rec_header) {
        a->rec = cd_recording_open(a->rec_path, a->rec_buffer_bytes, a->rec_max_file_bytes,
                                   a->rec_header, a->rec_header_len, a->rec_err,
                                   sizeof a->rec_err);
    }
}

// Hands the connection to its session's worker (cd_loop_attach), which then reads each frame,
// solves it (at once, or at its tick) and writes the answer with no thread in between (two
// wake-ups per frame instead of four, and none on this thread, which may share its CPU with
// clients), in the buffers the pool made for it. Only once everything this thread queued is out
// whole (at admission, or later when the client reads: on_written), as the worker writes all
// that follows. Frames this thread handed over before are answered once and in order all the
// same: the worker takes over as the reader of the very mailbox and result ring (their
// reader-side state published by cd_session_attach), and the framer keeps a message's bytes read
// so far. Not after the client's EOF (this thread then answers what is left and ends the
// session), nor without the pool's buffers: this thread keeps serving it.
static void attach(struct conn *c) {
    int fd;
    if (c->direct || !c->session || c->closing || c->eof || !c->direct_mem ||
        uv_stream_get_write_queue_size(&c->h.stream) != 0 || uv_fileno(&c->h.handle, &fd) < 0) {
        return;
    }
    uint8_t *m = c->direct_mem;
    c->out = m;
    c->out_cap = c->dsz.out;
    c->in = m += c->dsz.out;
    c->in_cap = c->dsz.in;
    cd_framer_lend(&c->framer, m += c->dsz.in);
    cd_arena_fix(&c->arena, m + c->dsz.framer, c->dsz.arena);
    (void)uv_read_stop(&c->h.stream);
    c->fd = fd;
    c->direct = true;
    cd_log(CD_LOG_DEBUG, "session %llu: its worker reads and answers the socket",
           (unsigned long long)cd_session_id(c->session));
    cd_loop_attach(c->srv->ticker, c->session, fd, &direct_ops, c);
}

// thread: io. Puts the new session in the table and welcomes the client, unless it left.
static void admitted(uv_work_t *req, int status) {
    struct admission *a = req->data;
    struct conn *c = a->conn;
    (void)status;
    if (!c) {
        free_later(a);
        return;
    }
    c->admitting = NULL;
    const cd_loop *l = c->srv->ticker;
    const int r = a->session && a->result_msg
                      ? cd_session_table_insert(c->srv->table, a->session, cd_loop_place(l))
                      : -ENOMEM;
    if (r < 0) {
        free_later(a);
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, 0, "hello: %s",
             r == -EBUSY ? "no session free (max_sessions)"
                         : "cannot allocate the session's memory");
        return;
    }
    c->session = a->session;
    c->result_msg = a->result_msg;
    c->direct_mem = a->direct_mem;
    c->dsz = a->dsz;
    a->result_msg = NULL;
    a->direct_mem = NULL;
    record_start(c, a);
    send_welcome(c, a);
    if (c->eof) {
        finish_answered(c); // no frame can come: the Welcome goes out, and the session ends
    } else {
        attach(c);
    }
    // The session's bytes are now the table's: the reaper returns them when it is freed.
    admission_free(a);
}

// True when a and b are equal, in a time that depends on their lengths only (a wrong token must
// not tell how much of it was right).
static bool same_secret(const char *a, const char *b) {
    const size_t na = strlen(a), nb = strlen(b);
    unsigned char diff = na != nb;
    for (size_t i = 0; i < na; i++) {
        diff |= (unsigned char)(a[i] ^ (i < nb ? b[i] : 0));
    }
    return diff == 0;
}

// A TCP peer's Hello passes with the configured token, or with none configured when the
// operator chose tcp_allow_any_local_user (a TCP peer's user is unknown: the Unix socket's mode
// and allow-lists cannot apply). Otherwise it gets ERROR_DENIED saying what is missing, logged as
// every Error that ends a connection is (log_end), so a guessing client cannot flood the log.
static bool tcp_admitted(struct conn *c, const char *token) {
    const cd_config *cfg = c->srv->cfg;
    const char *why = NULL;
    if (cfg->auth_token[0] != '\0') {
        why = token && same_secret(token, cfg->auth_token) ? NULL : "hello.token: wrong or missing";
    } else if (!cfg->tcp_allow_any_local_user) {
        why = "hello: TCP clients need the daemon's token ([server] auth_token_file), or the "
              "operator's choice [server] tcp_allow_any_local_user = yes";
    }
    if (!why) {
        return true;
    }
    // It ends the connection: must-send, like every final Error. Logged here once queued.
    (void)conn_send_must(c, &cd_codec_error_build(&c->error_msg,
                                                  CONTACTD__V1__ERROR_CODE__ERROR_DENIED, 0,
                                                  why)->base);
    char text[sizeof c->error_msg.text];
    snprintf(text, sizeof text, "TCP Hello refused: %s", why);
    log_end(c, "ERROR_DENIED", text);
    return false;
}

// token_cut: the token held a NUL byte (token_is_cut), so it matches no token.
static void on_hello(struct conn *c, const Contactd__V1__Hello *h, bool token_cut) {
    cd_server *srv = c->srv;
    if (c->session || c->admitting) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_PROTOCOL, 0,
             "hello: this connection already has a session");
        return;
    }
    if (c->tcp && !tcp_admitted(c, token_cut ? NULL : h->token)) {
        atomic_fetch_add_explicit(&srv->refused, 1, memory_order_relaxed);
        conn_finish(c);
        return;
    }
    if (h->protocol_version != PROTOCOL_VERSION) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_PROTOCOL, 0,
             "hello.protocol_version: %u is not supported (this daemon speaks %d)",
             (unsigned)h->protocol_version, PROTOCOL_VERSION);
        return;
    }
    // Like max_connections_per_uid: one local user, root too, must not take every session.
    const int uid_most = srv->cfg->max_sessions_per_uid;
    if (c->has_uid && uid_most > 0 && uid_connections(srv, c->uid, true) >= uid_most) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, 0,
             "hello: uid %u holds %d sessions ([server] max_sessions_per_uid)", (unsigned)c->uid,
             uid_most);
        return;
    }
    if (h->mode != CONTACTD__V1__SESSION_MODE__MODE_STREAM &&
        h->mode != CONTACTD__V1__SESSION_MODE__MODE_REQUEST) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, 0,
                   "hello.mode: unknown mode %d (MODE_STREAM = 0, MODE_REQUEST = 1)",
                   (int)h->mode);
        return;
    }
    if (h->record && srv->cfg->record_dir[0] == '\0') {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, 0,
                   "hello.record: recording is off on this daemon ([record] dir = off)");
        return;
    }
    if (h->budget_ns < 0) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, 0,
                   "hello.budget_ns: %lld is negative (0 = the daemon's default)",
                   (long long)h->budget_ns);
        return;
    }
    cd_session_params p = {
        .mode = h->mode == CONTACTD__V1__SESSION_MODE__MODE_REQUEST ? CD_MODE_REQUEST
                                                                    : CD_MODE_STREAM,
        .period_ns = cd_loop_period_ns(srv->ticker),
    };
    if (hello_solvers(c, h, &p.default_solver, &p.lim.solvers) < 0) {
        return;
    }
    const cs_limits *most = &srv->cfg->limits;
    const Contactd__V1__Limits none = CONTACTD__V1__LIMITS__INIT;
    const Contactd__V1__Limits *ask = h->limits ? h->limits : &none;
    p.lim.max_bodies = grant(ask->max_bodies, most->max_bodies);
    p.lim.max_contacts = grant(ask->max_contacts, most->max_contacts);
    // Joints are declared, never defaulted: a session that asks for none holds no joint rows.
    p.lim.max_joints = ask->max_joints < (uint32_t)most->max_joints ? (int)ask->max_joints
                                                                    : most->max_joints;
    p.lim.max_dirs = grant(ask->max_friction_directions, most->max_dirs);
    // Friction directions come in opposite pairs and a pyramid needs at least two pairs.
    p.lim.max_dirs = p.lim.max_dirs < 4 ? 4 : p.lim.max_dirs & ~1;
    const int64_t budget = (int64_t)(srv->cfg->deadline_fraction * (double)p.period_ns);
    p.budget_ns = h->budget_ns == 0 ? (budget > 0 ? budget : 1)
                : h->budget_ns < srv->cfg->max_budget_ns ? h->budget_ns
                                                          : srv->cfg->max_budget_ns;
    const bool recorded = srv->cfg->record_dir[0] != '\0' && (h->record || srv->cfg->record_all);
    // A session may lower the cap on its client's messages (a longer one gets ERROR_TOO_LARGE):
    // from now on, as the connection's buffers are sized for it; a refused Hello restores it.
    c->framer.max_msg = (size_t)grant(ask->max_message_bytes, (int)srv->cfg->max_message_bytes);
    const size_t bytes = hello_memory(c, &p, ask->max_contacts > 0, recorded);
    if (bytes == 0) {
        c->framer.max_msg = srv->cfg->max_message_bytes;
        return;
    }
    c->arena_most = ARENA_MOST_PER_BYTE * c->framer.max_msg;
    p.held_bytes = bytes;
    struct admission *a = calloc(1, sizeof *a);
    if (!a) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, 0, "hello: out of memory");
        return;
    }
    *a = (struct admission){.srv = srv, .conn = c, .params = p, .bytes = bytes,
                            .dsz = direct_sizes(c, &p)};
    a->params.id = cd_session_table_take_id(srv->table);
    snprintf(a->client, sizeof a->client, "%s", h->client_name ? h->client_name : "");
    // The name goes into the log and the recording: no control byte may forge a line there.
    for (char *q = a->client; *q; q++) {
        if ((unsigned char)*q < 0x20 || *q == 0x7f) {
            *q = '?';
        }
    }
    if (recorded) {
        record_plan(srv, a);
    }
    a->req.data = a;
    const int r = uv_queue_work(srv->loop, &a->req, admit_work, admitted);
    if (r < 0) {
        admission_free(a);
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, 0, "hello: %s", uv_strerror(r));
        return;
    }
    srv->reserved_bytes += bytes;
    c->admitting = a;
}

// Counts a refused frame (its Error is sent; limited: by the rate limit or the request queue, not
// by validation); a session whose every frame for CD_REFUSED_IN_ROW_MAX of them was refused is
// closed, with an Error saying so: a client that does nothing but break the rules costs only
// itself.
static void frame_refused(struct conn *c, cd_session *s, bool limited) {
    cd_session_frame_rejected(s, c->counts, limited);
    if (++c->refused_in_row < CD_REFUSED_IN_ROW_MAX) {
        return;
    }
    fail(c, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, 0,
         "frame: %d frames in a row refused; the session is closed (%u Errors not sent: the "
         "client left too much unread)", c->refused_in_row, (unsigned)c->errors_unsent);
}

// The rate limit, for a frame of c's session arriving now: false when it refused the frame (its
// Error sent).
static bool frame_allowed(struct conn *c, cd_session *s, uint64_t seq) {
    const int64_t now = c->direct ? c->read_ns : c->srv->pass_ns;
    int64_t early;
    if (cd_session_frame_allowed(s, now, &early)) {
        return true;
    }
    const cd_session_params *sp = cd_session_params_of(s);
    const bool request = sp->mode == CD_MODE_REQUEST;
    send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, seq,
               "frame: %s rate limit: %d frame%s per tick period (%lld ns) on average, "
               "bursts of %d periods' worth; this frame came %lld ns too early",
               request ? "request" : "stream", request ? 1 : CD_STREAM_FRAMES_PER_PERIOD,
               request ? "" : "s", (long long)sp->period_ns, CD_REQUEST_BURST, (long long)early);
    frame_refused(c, s, true);
    return false;
}

// A frame whose scene has been filled (r = 0) or refused (r < 0, err says why): an Error, or the
// frame recorded and handed to its worker.
static void frame_filled(struct conn *c, cd_session *s, uint64_t seq, int r, const char *err) {
    if (r != 0) {
        send_error(c, r == CS_ENOSPACE ? CONTACTD__V1__ERROR_CODE__ERROR_LIMIT
                                       : CONTACTD__V1__ERROR_CODE__ERROR_INVALID,
                   seq, "%s", err);
        frame_refused(c, s, false);
        return;
    }
    c->refused_in_row = 0;
    // Recorded before its worker may solve it, so the file has every frame before its Result.
    if (c->rec) {
        (void)cd_recording_put(c->rec, CD_RECORD_CLIENT, c->msg, c->msg_len);
    }
    const int64_t now = c->direct ? c->read_ns : c->srv->pass_ns;
    cd_session_frame_publish(s, c->counts, now, cd_clock_ns(), c->direct ? c->read_tick_ns : 0);
    // A request is due now; so is a stream frame whose tick passed while this thread was busy
    // with the frames before it. Either way the worker must not sleep until its next tick (one
    // that read the frame itself runs it next anyway).
    const cd_loop *l = c->srv->ticker;
    if (c->direct) {
        return;
    }
    if (cd_session_params_of(s)->mode == CD_MODE_REQUEST ||
        cd_grid_tick_after(now, cd_loop_epoch_ns(l), cd_loop_period_ns(l)) <= cd_clock_ns()) {
        cd_loop_kick(c->srv->ticker, s);
    }
}

// The fast path for a frame on a session (wire/frame_decode.h): decoded straight into the scene
// it will be solved from, then judged as on_frame judges it. Returns false when the fast path
// declines the bytes (nothing is consumed then: the scene is only claimed on publish).
static bool on_frame_bytes(struct conn *c, const uint8_t *data, size_t len) {
    cd_session *s = c->session;
    const cd_session_params *sp = cd_session_params_of(s);
    cs_scene *scene = cd_session_frame_scene(s);
    if (!scene || !cd_frame_decode(data, len, &sp->lim, sp->default_solver, scene)) {
        return false;
    }
    if (frame_allowed(c, s, scene->seq)) {
        char err[sizeof c->error_msg.text];
        const int r = cs_scene_validate(scene, &sp->lim, err, sizeof err);
        frame_filled(c, s, scene->seq, r, err);
    }
    return true;
}

static void on_frame(struct conn *c, const Contactd__V1__Frame *f) {
    if (!c->session) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_PROTOCOL, f->seq,
             c->admitting ? "frame: the session is not open yet (wait for the Welcome)"
                          : "frame: no session on this connection (send Hello first)");
        return;
    }
    cd_session *s = c->session;
    if (!frame_allowed(c, s, f->seq)) {
        return;
    }
    cs_scene *scene = cd_session_frame_scene(s);
    if (!scene) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, f->seq,
                   "frame: request queue full: %d frames wait to be solved or %d to be "
                   "answered", CD_REQUEST_QUEUE, CD_SESSION_RESULTS);
        frame_refused(c, s, true);
        return;
    }
    const cd_session_params *sp = cd_session_params_of(s);
    char err[sizeof c->error_msg.text];
    const int r = cd_ingest_frame(f, &sp->lim, sp->default_solver, scene, err, sizeof err);
    frame_filled(c, s, f->seq, r, err);
}

// The nested messages of a Stats or a SessionStats, built from a cd_stats snapshot.
struct stats_parts {
    Contactd__V1__MissCounts misses;
    Contactd__V1__Percentiles solve, latency, wake_late;
    Contactd__V1__StatusCount status[CD_STATUS_KINDS];
    Contactd__V1__StatusCount *status_ptr[CD_STATUS_KINDS];
    size_t n_status;
};

struct session_stats_msg {
    Contactd__V1__SessionStats m;
    struct stats_parts parts;
};

static void percentiles_build(Contactd__V1__Percentiles *m, const cd_hist_value *v) {
    cd_percentiles p;
    cd_hist_percentiles(v, &p);
    contactd__v1__percentiles__init(m);
    m->count = p.count;
    m->p50_ns = p.p50;
    m->p99_ns = p.p99;
    m->p999_ns = p.p999;
    m->max_ns = p.max;
}

static void stats_parts_build(struct stats_parts *p, const cd_stats *st) {
    contactd__v1__miss_counts__init(&p->misses);
    p->misses.host = st->misses[CD_MISS_HOST];
    p->misses.solver = st->misses[CD_MISS_SOLVER];
    p->misses.scheduling = st->misses[CD_MISS_SCHEDULING];
    p->misses.io = st->misses[CD_MISS_IO];
    percentiles_build(&p->solve, &st->solve_hist);
    percentiles_build(&p->latency, &st->latency_hist);
    percentiles_build(&p->wake_late, &st->wake_late_hist);
    p->n_status = 0;
    for (int i = 0; i < CD_STATUS_KINDS; i++) {
        if (st->statuses[i] == 0) {
            continue;
        }
        Contactd__V1__StatusCount *m = &p->status[p->n_status];
        contactd__v1__status_count__init(m);
        m->status = (char *)cs_status_name((cs_status)(i + CD_STATUS_MIN));
        m->count = st->statuses[i];
        p->status_ptr[p->n_status++] = m;
    }
}

// st: scratch, overwritten.
static void session_stats_build(struct session_stats_msg *sm, const cd_session *s, cd_stats *st) {
    *st = (cd_stats){0};
    cd_session_stats(s, st);
    stats_parts_build(&sm->parts, st);
    Contactd__V1__SessionStats *m = &sm->m;
    contactd__v1__session_stats__init(m);
    m->session_id = cd_session_id(s);
    m->mode = (Contactd__V1__SessionMode)cd_session_params_of(s)->mode;
    m->frames_received = st->frames_received;
    m->frames_solved = st->frames_solved;
    m->frames_superseded = st->frames_superseded;
    m->frames_refused = st->frames_invalid + st->frames_limited;
    m->deadline_misses = st->deadline_misses;
    m->misses = &sm->parts.misses;
    m->results_dropped = st->results_dropped;
    m->solve = &sm->parts.solve;
    m->latency = &sm->parts.latency;
    m->wake_late = &sm->parts.wake_late;
    m->n_statuses = sm->parts.n_status;
    m->statuses = sm->parts.status_ptr;
    m->solves_ahead_dropped = st->ahead_dropped_ns.count;
    m->solves_ahead_dropped_ns = st->ahead_dropped_ns.sum;
}

// Whether c's session is open and asked for (want_id 0: every session). thread: io.
static bool conn_session_is_listed(const struct conn *c, uint64_t want_id) {
    return c->session && !c->session_closed &&
           (want_id == 0 || cd_session_id(c->session) == want_id);
}

// thread: io, or the worker of a direct connection; there it allocates nothing and lists only
// the connection's own session (another worker's session may be freed under it), here every
// open session, in one allocation freed once the reply is packed.
static void on_stats(struct conn *c, const Contactd__V1__StatsRequest *req) {
    const int64_t now = c->direct ? c->read_ns : c->srv->pass_ns;
    int64_t early, ignored;
    if (!cd_rate_conforms(&c->stats_tat_ns, now, CD_STATS_INTERVAL_NS,
                          (CD_STATS_BURST - 1) * CD_STATS_INTERVAL_NS, &early)) {
        atomic_fetch_add_explicit(&c->srv->stats_refused, 1, memory_order_relaxed);
        if (!cd_rate_conforms(&c->stats_refused_tat_ns, now, CD_STATS_REFUSAL_INTERVAL_NS,
                              (CD_STATS_REFUSAL_BURST - 1) * (int64_t)CD_STATS_REFUSAL_INTERVAL_NS,
                              &ignored)) {
            fail(c, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, 0,
                 "stats_request: refused more than %d times at once or once per %d ms on "
                 "average; the connection is closed (%u Errors not sent: the client left too "
                 "much unread)", CD_STATS_REFUSAL_BURST, CD_STATS_REFUSAL_INTERVAL_NS / 1000000,
                 (unsigned)c->errors_unsent);
            return;
        }
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, 0,
                   "stats_request: rate limit: one StatsRequest per %d ms on average, bursts of "
                   "%d; this one came %lld ns too early", CD_STATS_INTERVAL_NS / 1000000,
                   CD_STATS_BURST, (long long)early);
        return;
    }
    const uint64_t want_id = req ? req->session_id : 0;
    _Static_assert(sizeof(cd_stats) < 16384, "two cd_stats sit on a worker's stack");
    cd_stats st = {0}, scratch;
    cd_loop_stats(c->srv->ticker, &st);
    cd_session_table_stats(c->srv->table, &st);
    Contactd__V1__Stats m = CONTACTD__V1__STATS__INIT;
    m.ticks = st.ticks;
    m.ticks_polled = st.ticks_polled;
    m.frames_received = st.frames_received;
    m.frames_solved = st.frames_solved;
    m.frames_superseded = st.frames_superseded;
    m.deadline_misses = st.deadline_misses;
    m.results_dropped = st.results_dropped;
    m.solve_ns_max = st.solve_ns.max;
    m.solve_ns_sum = st.solve_ns.sum;
    m.wake_late_ns_max = st.wake_late_ns.max;
    m.sessions = st.sessions;
    m.realtime = st.realtime;
    m.hello_timeouts = atomic_load_explicit(&c->srv->hello_timeouts, memory_order_relaxed);
    m.connections_refused = atomic_load_explicit(&c->srv->refused, memory_order_relaxed);
    m.stats_requests_refused = atomic_load_explicit(&c->srv->stats_refused, memory_order_relaxed);
    m.frames_refused = st.frames_invalid + st.frames_limited;
    m.solves_ahead_dropped = st.ahead_dropped_ns.count;
    m.solves_ahead_dropped_ns = st.ahead_dropped_ns.sum;
    struct stats_parts parts;
    stats_parts_build(&parts, &st);
    m.misses = &parts.misses;
    m.solve = &parts.solve;
    m.latency = &parts.latency;
    m.wake_late = &parts.wake_late;
    m.n_statuses = parts.n_status;
    m.statuses = parts.status_ptr;

    struct session_stats_msg own, *list = NULL;
    Contactd__V1__SessionStats *own_ptr = &own.m, **ptrs = NULL;
    if (c->direct) {
        // session_closed is the I/O thread's; the session itself stays ours until we let go.
        if (want_id == 0 || cd_session_id(c->session) == want_id) {
            session_stats_build(&own, c->session, &scratch);
            m.n_session_stats = 1;
            m.session_stats = &own_ptr;
        }
    } else {
        size_t n = 0;
        for (const struct conn *k = c->srv->conns; k; k = k->next) {
            n += conn_session_is_listed(k, want_id);
        }
        list = n ? malloc(n * (sizeof *list + sizeof *ptrs)) : NULL;
        if (list) {
            ptrs = (Contactd__V1__SessionStats **)(list + n);
            for (const struct conn *k = c->srv->conns; k && m.n_session_stats < n; k = k->next) {
                if (conn_session_is_listed(k, want_id)) {
                    session_stats_build(&list[m.n_session_stats], k->session, &scratch);
                    ptrs[m.n_session_stats] = &list[m.n_session_stats].m;
                    m.n_session_stats++;
                }
            }
            m.session_stats = ptrs;
        }
    }
    Contactd__V1__ServerMessage env = CONTACTD__V1__SERVER_MESSAGE__INIT;
    env.msg_case = CONTACTD__V1__SERVER_MESSAGE__MSG_STATS;
    env.stats = &m;
    (void)conn_send(c, &env.base);
    if (list) {
        free(list);
    }
}

// True when what protobuf-c unpacked otherwise than sent (k at path) is a TCP Hello's token
// that the daemon checks: a token holding a NUL byte is then a wrong one, refused and counted as
// a failed authentication that ends the connection, not as invalid input the client may retry.
// On a connection with a session on_hello refuses the Hello for that, whatever its token, and
// without reading the token setting: a reload rewrites it, and only this thread may read it (an
// attached connection, which has a session, is its worker's).
static bool token_is_cut(const struct conn *c, const Contactd__V1__ClientMessage *m, cd_strict k,
                         const char *path) {
    return k == CD_STRICT_NUL && c->tcp && m->msg_case == CONTACTD__V1__CLIENT_MESSAGE__MSG_HELLO &&
           strcmp(path, "hello.token") == 0 &&
           (c->session || c->admitting || c->srv->cfg->auth_token[0] != '\0');
}

static void handle_message(struct conn *c, const uint8_t *data, size_t len) {
    // Unpacked into the connection's arena, which is reset when the message has been handled.
    cd_arena *a = &c->arena;
    c->msg = data;
    c->msg_len = len;
    if (c->session && on_frame_bytes(c, data, len)) {
        return;
    }
    Contactd__V1__ClientMessage *m = contactd__v1__client_message__unpack(&a->allocator, len, data);
    if (!m && a->exhausted) {
        // A worker's fixed arena holds a frame within the session's limits (attach_arena_bytes):
        // a frame beyond them is refused as any frame over a limit is, with its seq, and counted.
        cd_arena_reset(a, 0);
        uint64_t seq = 0;
        const bool frame = cd_frame_seq(data, len, &seq);
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, seq,
                   "%s: %zu bytes decode to more than a frame within this session's limits "
                   "(bodies, contacts, joints) takes",
                   frame ? "frame" : "message", len);
        if (frame) {
            frame_refused(c, c->session, false); // only an attached connection's arena is fixed
        }
        return;
    }
    if (!m) {
        cd_arena_reset(a, 0);
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_DECODE, 0,
             "message: %zu bytes are not a valid contactd.v1.ClientMessage", len);
        return;
    }
    // What protobuf-c unpacked otherwise than sent (wire/strict.h) is refused, not solved.
    char path[96];
    const cd_strict k =
        cd_strict_check(&contactd__v1__client_message__descriptor, data, len, path, sizeof path);
    const bool token_cut = token_is_cut(c, m, k, path);
    if (k != CD_STRICT_OK && !token_cut) {
        const bool frame = m->msg_case == CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME;
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_INVALID, frame ? m->frame->seq : 0,
                   "%s: %s", path, cd_strict_reason(k));
        if (frame && c->session) {
            frame_refused(c, c->session, false);
        }
        cd_arena_reset(a, c->arena_most);
        return;
    }
    switch (m->msg_case) {
    case CONTACTD__V1__CLIENT_MESSAGE__MSG_HELLO:
        on_hello(c, m->hello, token_cut);
        break;
    case CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME:
        on_frame(c, m->frame);
        break;
    case CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST:
        on_stats(c, m->stats_request);
        break;
    default:
        // A newer client's message kind, or none: say so, and keep the connection.
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_PROTOCOL, 0,
                   "message: empty ClientMessage or a kind protocol %d does not have",
                   PROTOCOL_VERSION);
        break;
    }
    cd_arena_reset(a, c->arena_most);
}

// At the client's EOF, the bytes of a message it did not finish (a length prefix, or part of a
// body): undecodable, as a bad prefix is. Noted now (an attached connection's framer goes back
// with its buffers before the end) and said by the Error that ends the connection
// (finish_answered), after the answers to the messages before it. thread: io, or c's worker
// when attached.
static void message_cut(struct conn *c) {
    c->cut = cd_framer_pending(&c->framer);
}

// A connection this thread serves whose client shut its sending side ends once every frame it
// accepted is answered (cd_session_has_unanswered; on_wake looks again as results come, and
// on_sweep in case a wake was missed), with an Error for a message it left unfinished.
// thread: io.
static void finish_answered(struct conn *c) {
    if (c->session && cd_session_has_unanswered(c->session)) {
        return;
    }
    if (c->cut > 0) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_DECODE, 0,
             "message: the client shut its sending side %zu bytes into a message", c->cut);
    } else {
        conn_finish(c);
    }
}

// Feeds n bytes read from c's socket to its framer and handles every whole message; a bad or
// oversized length prefix ends the connection with an Error. thread: io, or c's worker when
// attached.
static void take_messages(struct conn *c, const uint8_t *data, size_t n) {
    (void)cd_framer_feed(&c->framer, data, n);
    const uint8_t *msg;
    size_t len;
    int r;
    while ((r = cd_framer_next(&c->framer, &msg, &len)) == 1) {
        handle_message(c, msg, len);
        // (closing is this thread's: a worker ends its connection through end_after_flush)
        if (c->direct ? c->end_after_flush : c->closing) {
            return;
        }
    }
    if (r == -ENOMEM) {
        // Only a framer still growing gets here, and that one is this thread's (not attached).
        cd_log(CD_LOG_ERR, "connection %llu (%s): no memory for a %s", (unsigned long long)c->id,
               c->peer, "message's buffer");
        conn_abort(c);
    } else if (r == -EMSGSIZE) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_TOO_LARGE, 0,
             "message: length prefix announces more than max_message_bytes (%zu)",
             c->framer.max_msg);
    } else if (r < 0) {
        fail(c, CONTACTD__V1__ERROR_CODE__ERROR_DECODE, 0,
             "message: length prefix is not a valid varint");
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    struct conn *c = h->data;
    // Never read more than the framer can take, so a feed cannot fail. After the framer is
    // drained its space is never 0: what remains is less than one whole message.
    size_t n = cd_framer_space(&c->framer);
    n = n < sizeof c->srv->rbuf ? n : sizeof c->srv->rbuf;
    *buf = uv_buf_init((char *)c->srv->rbuf, (unsigned)n);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    struct conn *c = stream->data;
    if (nread == 0 || c->closing) {
        return;
    }
    if (nread == UV_EOF) {
        // The client may only have shut its sending side: what it asked for is still answered
        // (its Hello's Welcome or Error, replies queued, its frames), then the connection ends.
        c->eof = true;
        (void)uv_read_stop(stream);
        message_cut(c);
        if (!c->admitting) {
            finish_answered(c);
        }
        return;
    }
    if (nread < 0) {
        // A reset, perhaps in the middle of a message: only this session ends.
        cd_log(CD_LOG_DEBUG, "connection %llu (%s): read: %s", (unsigned long long)c->id, c->peer,
               uv_strerror((int)nread));
        conn_abort(c);
        return;
    }
    // Every socket this pass reads was readable when the pass began: that instant, not when this
    // thread got round to the socket, is when its frames reached the daemon.
    if (c->srv->pass_ns == 0) {
        c->srv->pass_ns = cd_clock_ns();
    }
    take_messages(c, (const uint8_t *)buf->base, (size_t)nread);
}

// thread: the session's worker, for an attached connection (cd_endpoint_ops.pump). At most a
// few reads per call, so one chatty client cannot hold the worker; epoll reports the rest.
static cd_pump direct_pump(void *ctx, cd_counts *counts, int64_t seen_ns, int64_t tick_ns) {
    struct conn *c = ctx;
    c->counts = counts;
    c->read_ns = seen_ns;
    c->read_tick_ns = tick_ns;
    for (int reads = 0; reads < DIRECT_READS && !c->end_after_flush; reads++) {
        size_t want = cd_framer_space(&c->framer);
        want = want < c->in_cap ? want : c->in_cap;
        const ssize_t n = recv(c->fd, c->in, want, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        }
        if (n < 0) {
            return CD_PUMP_END; // a reset: only this session ends
        }
        if (n == 0) {
            // The client may only have shut its sending side: what it sent is still answered.
            c->eof = true;
            message_cut(c);
            break;
        }
        take_messages(c, c->in, (size_t)n);
        if ((size_t)n < want) {
            break;
        }
    }
    direct_write(c);
    return c->end_after_flush || c->write_failed ? CD_PUMP_END
           : c->eof                              ? CD_PUMP_EOF
                                                 : CD_PUMP_OPEN;
}

// thread: the session's worker, for an attached connection (cd_endpoint_ops.flush).
static bool direct_flush(void *ctx, cd_counts *counts) {
    struct conn *c = ctx;
    c->counts = counts;
    drain(c);
    direct_write(c);
    return c->out_len > c->out_off;
}

static const cd_endpoint_ops direct_ops = {.pump = direct_pump, .flush = direct_flush};

// True when the peer's uid or one of its groups is on the allow-lists. The daemon's own uid and
// root always are; a TCP peer, whose credentials nobody knows, never is.
static bool allowed(const cd_config *cfg, const struct conn *c, int fd) {
    if (!c->has_uid) {
        return false;
    }
    if (c->uid == 0 || c->uid == (uint32_t)geteuid()) {
        return true;
    }
    for (int i = 0; i < cfg->nallow_uids; i++) {
        if (cfg->allow_uids[i] == c->uid) {
            return true;
        }
    }
    // The supplementary groups too, as the kernel saw them at connect.
    gid_t groups[256];
    socklen_t n = sizeof groups;
    if (cfg->nallow_gids == 0 || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &n) < 0) {
        n = 0;
    }
    for (int i = 0; i < cfg->nallow_gids; i++) {
        if (cfg->allow_gids[i] == c->gid) {
            return true;
        }
        for (size_t k = 0; k < n / sizeof groups[0]; k++) {
            if (cfg->allow_gids[i] == (uint32_t)groups[k]) {
                return true;
            }
        }
    }
    return false;
}

// Sends the Error that refuses a new connection, or returns false to let it in. Pre-Hello
// connections take no session slot: only the connection caps and the allow-list apply here.
static bool refuse(struct conn *c) {
    const cd_server *s = c->srv;
    const cd_config *cfg = s->cfg;
    int fd = -1;
    (void)uv_fileno(&c->h.handle, &fd);
    if ((cfg->nallow_uids || cfg->nallow_gids) && !allowed(cfg, c, fd)) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_DENIED, 0,
                   "connection: %s is not allowed ([server] allow_uids, allow_gids)",
                   c->has_uid ? "this uid" : "a peer without credentials (TCP)");
        return true;
    }
    if (s->nconns > cfg->max_connections) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, 0,
                   "connection: %d connections are open ([server] max_connections)",
                   cfg->max_connections);
        return true;
    }
    if (c->has_uid && uid_connections(s, c->uid, false) > cfg->max_connections_per_uid) {
        send_error(c, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, 0,
                   "connection: uid %u has %d connections open "
                   "([server] max_connections_per_uid)", (unsigned)c->uid,
                   cfg->max_connections_per_uid);
        return true;
    }
    return false;
}

static void on_connection(uv_stream_t *listener, int status) {
    cd_server *s = listener->data;
    if (status < 0) {
        cd_log(CD_LOG_WARNING, "accept: %s", uv_strerror(status));
        return;
    }
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        cd_log(CD_LOG_ERR, "accept: out of memory");
        return;
    }
    c->srv = s;
    c->id = ++s->next_conn_id;
    const bool tcp = listener == (uv_stream_t *)&s->tcp_listener;
    int r = tcp ? uv_tcp_init(s->loop, &c->h.tcp) : uv_pipe_init(s->loop, &c->h.pipe, 0);
    if (r < 0) {
        free(c);
        cd_log(CD_LOG_ERR, "accept: %s", uv_strerror(r));
        return;
    }
    c->h.handle.data = c;
    c->next = s->conns;
    if (s->conns) {
        s->conns->prev = c;
    }
    s->conns = c;
    s->nconns++;
    r = uv_accept(listener, &c->h.stream);
    if (r < 0) {
        cd_log(CD_LOG_WARNING, "accept: %s", uv_strerror(r));
        conn_abort(c);
        return;
    }
    snprintf(c->peer, sizeof c->peer, "unix");
    if (tcp) {
        struct sockaddr_storage ss;
        int n = sizeof ss;
        char host[48] = "?";
        if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &n) == 0) {
            (void)uv_ip_name((struct sockaddr *)&ss, host, sizeof host);
        }
        snprintf(c->peer, sizeof c->peer, "tcp %s", host);
        // Results are small and latency-bound: do not let Nagle hold them back.
        (void)uv_tcp_nodelay(&c->h.tcp, 1);
    }
    c->accepted_ns = cd_clock_ns();
    c->tcp = tcp;
    if (!tcp) {
        struct ucred cred;
        socklen_t n = sizeof cred;
        int fd;
        if (uv_fileno(&c->h.handle, &fd) == 0 &&
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &n) == 0) {
            c->has_uid = true;
            c->uid = (uint32_t)cred.uid;
            c->gid = (uint32_t)cred.gid;
            snprintf(c->peer, sizeof c->peer, "unix uid %u pid %d", (unsigned)cred.uid,
                     (int)cred.pid);
        }
    }
    if (refuse(c)) {
        atomic_fetch_add_explicit(&s->refused, 1, memory_order_relaxed);
        conn_finish(c);
        return;
    }
    c->arena_most = ARENA_MOST_PER_BYTE * (size_t)s->cfg->max_message_bytes;
    r = cd_framer_init(&c->framer, s->cfg->max_message_bytes);
    if (r == 0) {
        r = cd_arena_init(&c->arena, ARENA_BYTES);
    }
    if (r == 0) {
        r = cd_ring_init(&c->notes, NOTES, sizeof(struct note));
    }
    if (r == 0) {
        r = uv_read_start(&c->h.stream, on_alloc, on_read);
    }
    if (r < 0) {
        cd_log(CD_LOG_ERR, "connection %llu: %s", (unsigned long long)c->id, strerror(-r));
        conn_abort(c);
        return;
    }
    cd_log(CD_LOG_DEBUG, "connection %llu (%s) accepted", (unsigned long long)c->id, c->peer);
}

static const char *const miss_names[] = {
    [CD_MISS_NONE] = "none",
    [CD_MISS_HOST] = "the worker was not running (host)",
    [CD_MISS_SOLVER] = "the solve used up the budget (solver)",
    [CD_MISS_SCHEDULING] = "the worker was solving other sessions first (scheduling)",
    [CD_MISS_IO] = "the frame was read and decoded late (io)",
};

// What a Result says beyond its status: where its forces come from and why the deadline did not
// hold. Empty for a certified answer on time.
static void result_detail(const cd_output *o, char *buf, size_t len) {
    const cs_result *r = &o->result;
    int n = 0;
    buf[0] = '\0';
    switch (r->answer) {
    case CS_ANSWER_SOLVER:
        if (r->status != CS_CONVERGED) {
            n = snprintf(buf, len, "solver: %s", cs_status_name(r->primary));
        }
        break;
    case CS_ANSWER_ITERATE:
        n = snprintf(buf, len, "best iterate at the deadline (%s)", cs_status_name(r->primary));
        break;
    case CS_ANSWER_LAST_CERTIFIED:
        n = snprintf(buf, len, "fallback: the last certified answer (%d of %d contacts and "
                     "joints carried over, new ones zero); solver: %s", r->carried, r->nc + r->nj,
                     cs_status_name(r->primary));
        break;
    case CS_ANSWER_NONE:
        n = snprintf(buf, len, "no answer: no certified answer exists for these contacts, "
                     "forces are zero; solver: %s", cs_status_name(r->primary));
        break;
    }
    if (!o->timing.deadline_met && n >= 0 && (size_t)n < len) {
        snprintf(buf + n, len - (size_t)n, "%sdeadline missed by %lld ns: %s", n ? "; " : "",
                 (long long)(o->timing.solve_start_ns + o->timing.solve_ns -
                             o->timing.deadline_ns),
                 miss_names[o->timing.miss]);
    }
}

// Packs a Result straight into the recording's buffer (dropped and counted when it is full).
// thread: the session's reader. rt-safe: yes.
static void record_result(cd_recording *rec, const Contactd__V1__ServerMessage *env) {
    const size_t n = protobuf_c_message_get_packed_size(&env->base);
    uint8_t *p = cd_recording_claim(rec, n);
    if (p) {
        cd_recording_commit(rec, CD_RECORD_SERVER, protobuf_c_message_pack(&env->base, p));
    }
}

static void drain(struct conn *c) {
    cd_output *o;
    while (c->session && (o = cd_session_result_peek(c->session))) {
        char detail[sizeof c->result_msg->detail];
        result_detail(o, detail, sizeof detail);
        o->timing.sent_ns = cd_clock_ns();
        const Contactd__V1__ServerMessage *env =
            cd_codec_result_build(c->result_msg, &o->result, &o->timing, o->tick, detail);
        if (env && c->rec) {
            record_result(c->rec, env);
        }
        const bool sent = env && conn_send(c, &env->base) == 0;
        cd_session_result_pop(c->session, !sent, c->counts);
    }
}

static void on_wake(uv_async_t *a) {
    cd_server *s = a->data;
    for (struct conn *c = s->conns; c; c = c->next) {
        if (!c->direct) {
            drain(c);
            if (c->eof && !c->closing && !c->admitting) {
                finish_answered(c);
            }
            continue;
        }
        notes_log(c);
        if (!c->closing && cd_session_has_ended(c->session)) {
            // Its worker found the connection over: close the session; take_back ends it.
            release_session(c);
            c->closing = true;
        }
    }
    // Sessions the workers let go of are freed on the pool, and their bytes returned then.
    cd_session *gone;
    while ((gone = cd_session_table_reap(s->table))) {
        struct conn *c = cd_session_attached_ctx(gone);
        void *direct_mem = NULL;
        cd_result_msg *result_msg = NULL; // a connection without its session builds no Result
        if (c) {
            direct_mem = c->direct_mem;
            c->direct_mem = NULL;
            result_msg = c->result_msg;
            c->result_msg = NULL;
            take_back(c);
        }
        const size_t bytes = cd_session_params_of(gone)->held_bytes;
        struct admission *f = calloc(1, sizeof *f);
        if (!f) {
            s->reserved_bytes -= bytes;
            cd_session_free(gone);
            free(direct_mem);
            result_msg_free(result_msg);
            continue;
        }
        *f = (struct admission){.srv = s, .session = gone, .direct_mem = direct_mem,
                                .result_msg = result_msg, .bytes = bytes};
        free_later(f);
    }
}

// Closes the connections that have not said Hello within hello_timeout, and those whose last
// Error has not been taken LINGER_MS after they began to finish: they hold a file descriptor and
// buffers each, and a flood of them must not lock out real clients.
static void on_sweep(uv_timer_t *t) {
    cd_server *s = t->data;
    const int64_t now = cd_clock_ns(), limit = s->cfg->hello_timeout_ns;
    for (struct conn *c = s->conns; c; c = c->next) {
        if (c->closing && !c->direct && c->finish_ns &&
            now - c->finish_ns > (int64_t)LINGER_MS * 1000000) {
            conn_abort(c);
            continue;
        }
        // A client's EOF waits for its answers; a lost wake must not make it wait forever. (An
        // attached connection's eof is its worker's: not read here.)
        if (!c->direct && c->eof && !c->closing && !c->admitting) {
            finish_answered(c);
            continue;
        }
        if (!c->session && !c->admitting && !c->closing && now - c->accepted_ns > limit) {
            atomic_fetch_add_explicit(&s->hello_timeouts, 1, memory_order_relaxed);
            fail(c, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, 0,
                 "hello: none within %lld ms ([server] hello_timeout_ms); connection "
                 "closed", (long long)(limit / 1000000));
        }
    }
}

// An attached connection comes back to this thread (its worker let go of the session, or the
// workers stopped): what the worker could not write yet is queued here.
static void undirect(struct conn *c) {
    c->direct = false;
    const size_t left = c->write_failed ? 0 : c->out_len - c->out_off;
    struct wreq *w = left ? malloc(sizeof *w + left) : NULL;
    if (w) {
        memcpy(w->data, c->out + c->out_off, left);
        if (write_out(c, w, left) < 0) {
            free(w);
        }
    }
    // The buffers were lent from direct_mem, which the reaper frees on the pool; the connection
    // reads no more.
    cd_framer_fini(&c->framer);
    cd_arena_fini(&c->arena);
    c->out = c->in = NULL;
    c->out_off = c->out_len = c->out_cap = c->in_cap = 0;
}

// An attached connection whose session its worker has let go of (reaped): the connection ends,
// after its last output when it was asked to finish (an Error that explains why) or its client
// shut its sending side (the answers to its last frames).
static void take_back(struct conn *c) {
    notes_log(c);
    undirect(c);
    record_stop(c);
    c->session = NULL;
    c->closing = false;
    if (c->write_failed) {
        conn_abort(c);
    } else if (c->end_after_flush) {
        conn_finish(c);
    } else if (c->eof) {
        finish_answered(c);
    } else {
        conn_abort(c);
    }
}

static void on_pass_end(uv_check_t *h) {
    cd_server *s = h->data;
    s->pass_ns = 0;
}

int cd_server_new(uv_loop_t *loop, const cd_config *cfg, cd_session_table *t, cd_server **ret) {
    cd_server *s = calloc(1, sizeof *s);
    if (!s) {
        return -ENOMEM;
    }
    s->loop = loop;
    s->cfg = cfg;
    s->table = t;
    const int r = uv_async_init(loop, &s->wake, on_wake);
    if (r < 0) {
        free(s);
        return r;
    }
    s->wake.data = s;
    s->wake_open = true;
    (void)uv_check_init(loop, &s->pass_end);
    s->pass_end.data = s;
    s->check_open = uv_check_start(&s->pass_end, on_pass_end) == 0;
    // The check handle must not keep the loop alive by itself, nor the sweep timer.
    uv_unref((uv_handle_t *)&s->pass_end);
    (void)uv_timer_init(loop, &s->sweep);
    s->sweep.data = s;
    s->sweep_open = uv_timer_start(&s->sweep, on_sweep, SWEEP_MS, SWEEP_MS) == 0;
    uv_unref((uv_handle_t *)&s->sweep);
    *ret = s;
    return 0;
}

uv_async_t *cd_server_wake(cd_server *s) {
    return &s->wake;
}

// A socket file left by a daemon that died is replaced; a live daemon's, or any other file, is
// an error rather than something to delete.
static int clear_stale_socket(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (lstat(path, &st) < 0) {
        return 0;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "unix:%s: exists and is not a socket", path);
        return -EEXIST;
    }
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        const int e = errno;
        snprintf(err, errlen, "unix:%s: socket: %s", path, strerror(e));
        return -e;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    const int r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    const int e = errno;
    close(fd);
    if (r == 0) {
        snprintf(err, errlen, "unix:%s: another process is listening on it", path);
        return -EADDRINUSE;
    }
    if (e != ECONNREFUSED) {
        snprintf(err, errlen, "unix:%s: cannot tell whether it is in use: %s", path, strerror(e));
        return -e;
    }
    if (unlink(path) < 0) {
        const int u = errno;
        snprintf(err, errlen, "unix:%s: cannot remove the stale socket: %s", path, strerror(u));
        return -u;
    }
    cd_log(CD_LOG_NOTICE, "removed stale socket %s", path);
    return 0;
}

// Gives the socket file the configured mode and group (socket activation leaves both to the
// .socket unit's SocketMode= and SocketGroup=).
static int socket_owner(const cd_config *cfg, char *err, size_t errlen) {
    if (chmod(cfg->socket, (mode_t)cfg->socket_mode) < 0) {
        const int e = errno;
        snprintf(err, errlen, "unix:%s: [server] socket_mode %04o: %s", cfg->socket,
                 cfg->socket_mode, strerror(e));
        return -e;
    }
    if (cfg->socket_group[0] == '\0') {
        return 0;
    }
    char *end;
    gid_t gid = (gid_t)strtoul(cfg->socket_group, &end, 10);
    if (*end != '\0' || end == cfg->socket_group) {
        const struct group *g = getgrnam(cfg->socket_group);
        if (!g) {
            snprintf(err, errlen, "unix:%s: [server] socket_group: no group '%s'", cfg->socket,
                     cfg->socket_group);
            return -ENOENT;
        }
        gid = g->gr_gid;
    }
    if (chown(cfg->socket, (uid_t)-1, gid) < 0) {
        const int e = errno;
        snprintf(err, errlen, "unix:%s: [server] socket_group %s: %s", cfg->socket,
                 cfg->socket_group, strerror(e));
        return -e;
    }
    return 0;
}

static int listen_unix(cd_server *s, int fd, char *path, size_t pathlen, char *err,
                       size_t errlen) {
    int r = uv_pipe_init(s->loop, &s->unix_listener, 0);
    if (r < 0) {
        snprintf(err, errlen, "unix: %s", uv_strerror(r));
        return r;
    }
    s->unix_open = true;
    s->unix_listener.data = s;
    if (fd >= 0) {
        r = uv_pipe_open(&s->unix_listener, fd);
    } else {
        r = clear_stale_socket(s->cfg->socket, err, errlen);
        if (r < 0) {
            return r;
        }
        // Created with the configured mode from the start: no moment with a wider one.
        const mode_t old = umask(0777 & ~(mode_t)s->cfg->socket_mode);
        r = uv_pipe_bind(&s->unix_listener, s->cfg->socket);
        umask(old);
        s->unlink_socket = r == 0;
        if (r == 0) {
            r = socket_owner(s->cfg, err, errlen);
            if (r < 0) {
                return r;
            }
        }
    }
    if (r == 0) {
        r = uv_listen((uv_stream_t *)&s->unix_listener, LISTEN_BACKLOG, on_connection);
    }
    if (r == 0) {
        r = uv_pipe_getsockname(&s->unix_listener, path, &pathlen);
        path[r == 0 ? pathlen : 0] = '\0';
        r = 0;
    }
    if (r < 0) {
        snprintf(err, errlen, "unix:%s: %s", fd >= 0 ? "(activated)" : s->cfg->socket,
                 uv_strerror(r));
    }
    return r;
}

static int listen_tcp(cd_server *s, int fd, int *ret_port, char *host, size_t hostlen, char *err,
                      size_t errlen) {
    int r = uv_tcp_init(s->loop, &s->tcp_listener);
    if (r < 0) {
        snprintf(err, errlen, "tcp: %s", uv_strerror(r));
        return r;
    }
    s->tcp_open = true;
    s->tcp_listener.data = s;
    struct sockaddr_storage ss;
    if (fd >= 0) {
        r = uv_tcp_open(&s->tcp_listener, fd);
    } else {
        const char *h = s->cfg->tcp_host;
        r = strchr(h, ':') ? uv_ip6_addr(h, s->cfg->tcp_port, (struct sockaddr_in6 *)&ss)
                           : uv_ip4_addr(h, s->cfg->tcp_port, (struct sockaddr_in *)&ss);
        if (r == 0) {
            r = uv_tcp_bind(&s->tcp_listener, (struct sockaddr *)&ss, 0);
        }
    }
    if (r == 0) {
        r = uv_listen((uv_stream_t *)&s->tcp_listener, LISTEN_BACKLOG, on_connection);
    }
    int n = sizeof ss;
    if (r == 0) {
        r = uv_tcp_getsockname(&s->tcp_listener, (struct sockaddr *)&ss, &n);
    }
    if (r == 0) {
        r = uv_ip_name((struct sockaddr *)&ss, host, hostlen);
        *ret_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                   : ((struct sockaddr_in *)&ss)->sin_port);
    }
    if (r < 0) {
        snprintf(err, errlen, "tcp:%s:%d: %s", fd >= 0 ? "(activated)" : s->cfg->tcp_host,
                 s->cfg->tcp_port, uv_strerror(r));
    }
    return r;
}

int cd_server_listen(cd_server *s, cd_loop *ticker, int unix_fd, int tcp_fd, char *err,
                     size_t errlen) {
    s->ticker = ticker;
    char path[CD_SOCKET_PATH_MAX] = "";
    char host[48] = "";
    int port = 0;
    // With socket activation the service manager chose the sockets; the config's are unused.
    const bool activated = unix_fd >= 0 || tcp_fd >= 0;
    int r = 0;
    if (unix_fd >= 0 || (!activated && s->cfg->socket[0] != '\0')) {
        r = listen_unix(s, unix_fd, path, sizeof path, err, errlen);
    }
    if (r == 0 && (tcp_fd >= 0 || (!activated && s->cfg->tcp_host[0] != '\0'))) {
        r = listen_tcp(s, tcp_fd, &port, host, sizeof host, err, errlen);
    }
    if (r < 0) {
        return r;
    }
    int n = 0;
    if (s->unix_open) {
        n = snprintf(s->address, sizeof s->address, "unix:%s", path);
    }
    if (s->tcp_open) {
        snprintf(s->address + n, sizeof s->address - (size_t)n, "%stcp:%s%s%s:%d", n ? " " : "",
                 strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
    }
    return 0;
}

const char *cd_server_address(const cd_server *s) {
    return s->address;
}

// Ends the connections that did not finish taking their Goodbye in time.
static void on_linger(uv_timer_t *t) {
    cd_server *s = t->data;
    for (struct conn *c = s->conns; c; c = c->next) {
        conn_abort(c);
    }
    uv_close((uv_handle_t *)t, NULL);
    s->linger_open = false;
}

void cd_server_close(cd_server *s, const char *goodbye) {
    if (s->closed) {
        return;
    }
    s->closed = true;
    if (s->unix_open) {
        uv_close((uv_handle_t *)&s->unix_listener, NULL);
    }
    if (s->tcp_open) {
        uv_close((uv_handle_t *)&s->tcp_listener, NULL);
    }
    if (s->sweep_open) {
        uv_close((uv_handle_t *)&s->sweep, NULL);
    }
    // Connections unlink themselves from the list only in their close callback, later. The
    // workers are stopped: the connections they served are this thread's again.
    int said = 0;
    for (struct conn *c = s->conns; c; c = c->next) {
        if (c->direct) {
            undirect(c);
            if (c->session_closed) {
                record_stop(c);
                c->session = NULL;
            }
        }
        if (!goodbye) {
            conn_abort(c);
            continue;
        }
        // The last tick's results first, then the Goodbye, then the close once both are out.
        drain(c);
        Contactd__V1__Goodbye g = CONTACTD__V1__GOODBYE__INIT;
        g.reason = (char *)goodbye;
        Contactd__V1__ServerMessage env = CONTACTD__V1__SERVER_MESSAGE__INIT;
        env.msg_case = CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE;
        env.goodbye = &g;
        said += conn_send_must(c, &env.base) == 0;
        conn_finish(c);
    }
    if (goodbye && s->conns) {
        cd_log(CD_LOG_NOTICE, "Goodbye queued for %d connections; they have %d ms to take it",
               said, LINGER_MS);
    }
    if (s->conns && goodbye && uv_timer_init(s->loop, &s->linger) == 0) {
        s->linger.data = s;
        s->linger_open = uv_timer_start(&s->linger, on_linger, LINGER_MS, 0) == 0;
        if (!s->linger_open) {
            uv_close((uv_handle_t *)&s->linger, NULL);
        }
    }
    if (s->wake_open) {
        uv_close((uv_handle_t *)&s->wake, NULL);
    }
    if (s->check_open) {
        uv_close((uv_handle_t *)&s->pass_end, NULL);
    }
}

void cd_server_free(cd_server *s) {
    if (!s) {
        return;
    }
    if (s->unlink_socket) {
        (void)unlink(s->cfg->socket);
    }
    cd_recorder_free(s->recorder);
    free(s);
}
