/* SPDX-License-Identifier: MIT */
/* libcontactd-client: the C client of contactd, the real-time contact-force service. It connects
 * over a Unix-domain socket or TCP, does the Hello/Welcome handshake, sends frames built from the
 * plain structs of contactd/types.h and hands back each message the daemon sends (Result, Stats,
 * Error, Goodbye) as plain data. Build flags: `pkg-config --cflags --libs libcontactd-client`.
 *
 * Memory: a connection allocates when it opens, sized from the limits the Welcome grants; after
 * that, sending a frame within those limits and receiving its Result allocate nothing (the Result
 * is decoded into a fixed arena and converted into arrays held by the connection). What a
 * received message points to stays valid until the next cdc_msg_recv on that connection or
 * cdc_conn_close.
 *
 * Threads: nothing here starts a thread or keeps global state. A connection is used by one thread
 * at a time, except that one thread may send (cdc_frame_send, cdc_stats_request*) while another
 * receives (cdc_msg_recv): they share no state but the socket. Different connections are
 * independent.
 *
 * Times are int64_t nanoseconds; absolute times are CLOCK_MONOTONIC. Functions returning int give
 * 0 (or a count) on success and a negative errno on failure. */
#ifndef CONTACTD_CLIENT_H
#define CONTACTD_CLIENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "contactd/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest message the client accepts, bytes (a Result of ~100 000 contacts). */
#define CDC_MAX_MESSAGE_BYTES (8u << 20)
/* The daemon's default TCP port, on 127.0.0.1 ("127.0.0.1:7411"). */
#define CDC_TCP_PORT_DEFAULT 7411

typedef struct cdc_conn cdc_conn;

/* What the client asks for in its Hello. Zero-initialise and set what you need. */
typedef struct cdc_hello {
    const char *client_name; /* NULL: "libcontactd-client" */
    const char *solver_name; /* the session's default solver ("lemke", "sap", ...); NULL or "":
                              * the daemon's default */
    cdc_limits limits;       /* requested sizes; all 0: the daemon's defaults. The daemon may
                              * grant less: read cdc_conn_welcome()->limits */
    bool request_mode;       /* true: every frame is answered as soon as it is solved (a haptic
                              * or control loop); false: stream mode, the newest frame is solved
                              * at each of the daemon's ticks */
    int64_t budget_ns;       /* solve time per frame, ns; 0: the daemon's default */
    const char *const *solver_names; /* further solvers frames may name, NULL-terminated; NULL:
                                      * only the default solver */
    const char *token;       /* TCP: the daemon's auth token ([server] auth_token_file); NULL:
                              * none. Unused over the Unix socket. */
    bool record;             /* ask the daemon to record the session to a file (the Welcome's
                              * record_path names it); refused unless its [record] dir is set */
    bool no_session;         /* send no Hello and wait for no Welcome: a connection for
                              * cdc_stats_request* only (no frames), which the daemon closes
                              * after its [server] hello_timeout_ms */
} cdc_hello;

/* Writes the socket path a client should use when told nothing into buf (len bytes,
 * NUL-terminated): the system service's /run/contactd/contactd.sock when it exists, else
 * $XDG_RUNTIME_DIR/contactd.sock, else /tmp/contactd-$UID.sock (what a daemon of this user
 * takes). Returns 0, or -ENAMETOOLONG when len is too short. thread: any. */
int cdc_default_socket(char *buf, size_t len);

/* Connects to the daemon's Unix-domain socket at path, sends Hello (hello may be NULL for all
 * defaults) and waits for the Welcome, all within timeout_ns (0 or < 0: no limit, as the Python
 * client's timeout=0; not cdc_msg_recv's 0, which waits for nothing: an open always waits).
 * Returns 0 and sets *ret (release with cdc_conn_close), or a negative errno with a message in
 * err (errlen bytes): the connect error (-ENOENT, -ECONNREFUSED: no daemon listening there),
 * -ETIMEDOUT (no connection, its backlog full, or no Welcome in time), -ENOMEM, or, when the
 * daemon refused the Hello with an Error (its message is copied; also when it closed
 * the connection before the Hello could be written), by its code:
 * -EACCES (ERROR_DENIED: token or allow-list), -EBUSY (ERROR_BUSY: no session slot or
 * connection free, a later Hello may pass), -ENOSPC (ERROR_MEMORY: a smaller session may fit),
 * -EINVAL (ERROR_INVALID: a field of the Hello), -ETIMEDOUT (ERROR_LIMIT: the Hello came after
 * the daemon's hello_timeout_ms), -EPROTO (any other code or reply). thread: any. */
int cdc_conn_open_unix(const char *path, const cdc_hello *hello, int64_t timeout_ns,
                       cdc_conn **ret, char *err, size_t errlen);

/* As cdc_conn_open_unix over TCP. hostport is "HOST:PORT" ("127.0.0.1:7411", "[::1]:7411");
 * a malformed one gives -EINVAL. timeout_ns bounds the connect (an unreachable host gives
 * -ETIMEDOUT then, not after the kernel's minutes of retries) and the Welcome, but not the name
 * lookup of a HOST that is not an address literal: that is getaddrinfo's, which blocks as long as
 * the system's resolver takes (bounded by its own settings, such as resolv.conf's timeout and
 * attempts per nameserver: seconds each) and could be bounded only from another thread, which
 * this library does not start. The lookup's time counts against timeout_ns: one that outlasts
 * it leaves the connect no time (-ETIMEDOUT). A name that does not resolve gives -EINVAL. Give
 * an address literal (or resolve the name yourself) for an open bounded whole. The socket has
 * TCP_NODELAY set: frames are small and latency matters more than packet count. thread: any. */
int cdc_conn_open_tcp(const char *hostport, const cdc_hello *hello, int64_t timeout_ns,
                      cdc_conn **ret, char *err, size_t errlen);

/* What the daemon granted, owned by c (valid until cdc_conn_close); NULL for a no_session
 * connection. thread: any. */
const cdc_welcome *cdc_conn_welcome(const cdc_conn *c);

/* The connection's socket, for an event loop (poll, epoll, libuv's uv_poll_t): when it is
 * readable, cdc_msg_recv(c, 0, ...) has bytes to take. The socket is non-blocking; do not read
 * or write it yourself, and do not close it (cdc_conn_close does). thread: any. */
int cdc_conn_fd(const cdc_conn *c);

/* Closes the connection and frees c; accepts NULL. What received messages pointed to is gone.
 * thread: the connection's (no other thread may be using c). */
void cdc_conn_close(cdc_conn *c);

/* Sends f as a Frame. Within the granted limits this allocates nothing. A frame beyond them is
 * sent anyway (after growing the connection's buffers once), so that the daemon's Error names
 * the limit. Blocks until the bytes are written, at most 5 s (a daemon that reads nothing for
 * that long is stuck). Returns 0, -EINVAL (negative counts, or a count > 0 with a NULL array),
 * -ETIMEDOUT, -ENOMEM or the socket's negative errno (-EPIPE when the daemon closed the
 * connection). A send that fails after part of the message went (-ETIMEDOUT or another errno)
 * shuts the connection's sending side, since the daemon could not tell where the next message
 * starts: every later send gives -EPIPE, while cdc_msg_recv still takes what the daemon answers
 * before it closes (the Results of earlier frames, an ERROR_DECODE for the cut one); close the
 * connection and open another. A -ETIMEDOUT with nothing sent leaves the connection usable.
 * thread: the one sending thread of c. */
int cdc_frame_send(cdc_conn *c, const cdc_frame *f);

/* Asks for the daemon's Stats; the answer arrives through cdc_msg_recv as CDC_MSG_STATS. Returns
 * as cdc_frame_send. thread: the one sending thread of c. */
int cdc_stats_request(cdc_conn *c);

/* Same, with the daemon's statistics restricted to session session_id (0: every session).
 * thread: the one sending thread of c. */
int cdc_stats_request_session(cdc_conn *c, uint64_t session_id);

/* What cdc_msg_recv received. */
typedef enum cdc_msg_kind {
    CDC_MSG_RESULT = 1,  /* msg.result */
    CDC_MSG_STATS = 2,   /* msg.stats */
    CDC_MSG_ERROR = 3,   /* msg.error: a refused frame (the session goes on) or a fatal error */
    CDC_MSG_GOODBYE = 4, /* msg.error.message holds the reason; the daemon closes the
                          * connection next (the following cdc_msg_recv gives -ECONNRESET) */
} cdc_msg_kind;

/* One received message. Pointers are owned by the connection (see the top of this file). */
typedef struct cdc_msg {
    cdc_msg_kind kind;
    cdc_result result; /* CDC_MSG_RESULT */
    cdc_stats stats;   /* CDC_MSG_STATS */
    struct {
        int code;            /* contactd.v1.ErrorCode: 1 decode, 2 too large, 3 invalid (a field
                              * out of range), 4 protocol, 5 limit, 6 busy, 7 memory, 8 denied */
        uint64_t seq;        /* the frame it refers to, or 0 */
        const char *message; /* names the field: "contacts[3].normal: not unit length ..." */
    } error;           /* CDC_MSG_ERROR, CDC_MSG_GOODBYE */
} cdc_msg;

/* Receives the next message, waiting up to timeout_ns (0: only what has already arrived, the
 * non-blocking mode an event loop uses; < 0: forever). The wait ends as soon as a message is
 * complete. Returns 1 and fills *ret, 0 when nothing complete arrived in time, -ECONNRESET when
 * the daemon closed the connection, -EMSGSIZE or -EPROTO for a stream that cannot be decoded
 * (the connection is then unusable), or another negative errno. Allocates nothing for a Result
 * within the granted limits. thread: the one receiving thread of c. */
int cdc_msg_recv(cdc_conn *c, int64_t timeout_ns, cdc_msg *ret);

/* "ok", "deadline", "fallback", "failed"; "unknown" otherwise. thread: any. */
const char *cdc_status_name(cdc_status s);

#ifdef __cplusplus
}
#endif
#endif /* CONTACTD_CLIENT_H */
