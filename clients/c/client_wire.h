/* SPDX-License-Identifier: MIT */
/* libcontactd-client: a thin client for contactd. It connects over a Unix-domain socket or TCP,
 * does the Hello/Welcome handshake, sends frames built from plain cs_scene values and hands back
 * each ServerMessage (Result, Stats, Error) as the generated protobuf-c struct. Receiving takes a
 * timeout; a timeout of 0 is the non-blocking variant a streaming loop polls with. Nothing here
 * starts threads. A connection is used by one thread at a time, except that one thread may send
 * (cdc_frame_send, cdc_conn_send_packed, cdc_stats_request) while another receives
 * (cdc_msg_recv): they share no state but the socket. Times are CLOCK_MONOTONIC nanoseconds. */
#ifndef CONTACTD_CLIENTS_CLIENT_WIRE_H
#define CONTACTD_CLIENTS_CLIENT_WIRE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "contactd.pb-c.h"
#include "wire/types.h"

/* Largest ServerMessage the client accepts, bytes (a Result of ~100 000 contacts). */
#define CDC_MAX_MESSAGE_BYTES (8u << 20)

typedef struct cdc_conn cdc_conn;

/* What the client asks for in its Hello. */
typedef struct cdc_hello {
    const char *client_name; /* NULL: "libcontactd-client" */
    const char *solver_name; /* NULL or "": the daemon's default solver */
    cs_limits limits;        /* requested sizes; all 0: the daemon's defaults (solvers unused:
                              * see solver_names) */
    bool request_mode;       /* MODE_REQUEST: every frame answered as soon as it arrives */
    int64_t budget_ns;       /* solve time per frame; 0: the daemon's default */
    const char *const *solver_names; /* further solvers frames may name, NULL-terminated; NULL:
                                      * only the default solver */
    const char *token;       /* TCP: the daemon's auth token ([server] auth_token_file); NULL:
                              * none. Unused over the Unix socket. */
    bool no_session;         /* send no Hello and wait for no Welcome: a connection for
                              * cdc_stats_request* only (no frames), which the daemon closes
                              * after its [server] hello_timeout_ms */
} cdc_hello;

/* Connects to the daemon's Unix-domain socket at path, sends Hello (hello may be NULL for all
 * defaults) and waits up to timeout_ns (< 0: forever) for the Welcome. Returns 0 and sets *ret,
 * or a negative errno with a message in err: the connect error, -ETIMEDOUT, -ECONNREFUSED when
 * the daemon answered with an Error (its message is copied), -EPROTO for any other reply.
 * thread: any. */
int cdc_conn_open_unix(const char *path, const cdc_hello *hello, int64_t timeout_ns,
                       cdc_conn **ret, char *err, size_t errlen);

/* As cdc_conn_open_unix over TCP. hostport is "HOST:PORT" ("127.0.0.1:7411", "[::1]:7411");
 * a malformed one gives -EINVAL. The socket has TCP_NODELAY set: frames are small and latency
 * matters more than packet count. */
int cdc_conn_open_tcp(const char *hostport, const cdc_hello *hello, int64_t timeout_ns,
                      cdc_conn **ret, char *err, size_t errlen);

/* The daemon's Welcome (granted limits, rate, deadline), owned by c; NULL for a no_session
 * connection. */
const Contactd__V1__Welcome *cdc_conn_welcome(const cdc_conn *c);

/* The socket, for callers that poll several sources (readable = cdc_msg_recv has work). */
int cdc_conn_fd(const cdc_conn *c);

/* Closes the connection and frees c; accepts NULL. */
void cdc_conn_close(cdc_conn *c);

/* Sends s as a Frame (every field, s->solver as the solver enum). A body is marked kinematic by
 * its cs_body.kinematic (mass and inertia left 0): it goes without inertia. Blocks until the
 * bytes are written, at most a few seconds. Returns 0, -ETIMEDOUT, -ENOMEM or the socket's negative errno
 * (-EPIPE when the daemon closed the connection). thread: the one sending thread of c. */
int cdc_frame_send(cdc_conn *c, const cs_scene *s);

/* Sends len bytes the caller packed beforehand: whole ClientMessages, each with its varint
 * length prefix (what cd_codec_pack writes), so that at send time only the write is left.
 * Blocks like cdc_frame_send; the bytes are not checked. Returns 0, -ETIMEDOUT or the socket's
 * negative errno (-EPIPE when the daemon closed the connection). thread: the one sending thread
 * of c. */
int cdc_conn_send_packed(cdc_conn *c, const uint8_t *buf, size_t len);

/* Asks for the daemon's Stats; the answer arrives through cdc_msg_recv. Returns as
 * cdc_frame_send. thread: the one sending thread of c. */
int cdc_stats_request(cdc_conn *c);

/* Same, for the daemon's Stats with only session session_id's SessionStats (0: every open
 * session's, as cdc_stats_request). */
int cdc_stats_request_session(cdc_conn *c, uint64_t session_id);

/* Receives the next ServerMessage, waiting up to timeout_ns (0: only what has arrived, < 0:
 * forever; the wait ends as soon as a message is complete, so arrival times can be measured).
 * Returns 1 and sets *ret (release with cdc_msg_free), 0 when nothing complete arrived in time,
 * -ECONNRESET when the daemon closed the connection, -EMSGSIZE or -EPROTO for a stream that
 * cannot be decoded (the connection is then unusable), or another negative errno.
 * thread: the one receiving thread of c. */
int cdc_msg_recv(cdc_conn *c, int64_t timeout_ns, Contactd__V1__ServerMessage **ret);

/* Frees a message from cdc_msg_recv; accepts NULL. */
void cdc_msg_free(Contactd__V1__ServerMessage *m);

#endif /* CONTACTD_CLIENTS_CLIENT_WIRE_H */
