/* SPDX-License-Identifier: MIT */
/* The I/O side of contactd: libuv listeners on a Unix-domain socket and TCP, one connection per
 * client, the protocol (Hello/Welcome, Frame, StatsRequest/Stats, Error), decoding and
 * validating frames straight into the session's mailbox, admitting and freeing sessions on
 * libuv's thread pool (never on this thread or a worker), and writing the results the workers
 * leave in each session's ring when it wakes the loop. A client can only ever end its own
 * connection: bad input gets an Error naming the field, oversized or undecodable bytes an Error
 * and a clean close, a slow reader loses results (counted) instead of growing our memory. */
#ifndef CONTACTD_IO_SERVER_H
#define CONTACTD_IO_SERVER_H
#include <stddef.h>
#include <uv.h>
#include "service/loop.h"
#include "service/session.h"
#include "sys/config.h"

/* thread: io (everything, including the callbacks it registers on the loop). */
typedef struct cd_server cd_server;

/* Connections closed after an Error that may still be reading their client's last bytes (so
 * that the close does not reset the connection and lose the Error), beyond max_connections at
 * most: descriptors the daemon needs besides its connections. */
#define CD_SERVER_LINGERING_MAX 32

/* A server on loop for the sessions of t, configured by cfg (which must outlive it). It owns the
 * uv_async_t the workers wake it with (cd_server_wake). Sets *ret and returns 0, or a
 * negative errno. thread: io. */
int cd_server_new(uv_loop_t *loop, const cd_config *cfg, cd_session_table *t, cd_server **ret);

/* The handle the workers pass to uv_async_send (cd_loop_new). thread: any. */
uv_async_t *cd_server_wake(cd_server *s);

/* Starts listening: on unix_fd / tcp_fd when they are >= 0 (socket activation), else on the
 * configured socket path (a stale socket file is replaced; a live one is an error) and TCP address.
 * ticker supplies the tick grid, the workers (placement, kicks) and their statistics for Welcome
 * and Stats. Returns 0, or a negative errno with the reason (naming the address) in err. thread:
 * io. */
int cd_server_listen(cd_server *s, cd_loop *ticker, int unix_fd, int tcp_fd, char *err,
                     size_t errlen);

/* Where the server listens, e.g. "unix:/run/contactd/contactd.sock tcp:127.0.0.1:7411", with the
 * port actually bound (so port 0 in the config shows the one the kernel picked). Valid until
 * cd_server_free. thread: io. */
const char *cd_server_address(const cd_server *s);

/* Stops listening and closes every connection (their sessions are closed) and the wake handle.
 * goodbye: NULL to drop the connections at once; else each gets the results its session still
 * holds and a Goodbye with this reason, and closes once they are written (or after LINGER_MS
 * for a client that does not read). The workers must already be stopped (it could otherwise
 * send to a closed handle). Run the loop until it has no more handles, then call
 * cd_server_free. Idempotent. thread: io. */
void cd_server_close(cd_server *s, const char *goodbye);

/* Frees a closed server whose handles the loop has finished closing; removes the socket file it
 * created. Accepts NULL. thread: io. */
void cd_server_free(cd_server *s);

#endif /* CONTACTD_IO_SERVER_H */
