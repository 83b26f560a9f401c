/* SPDX-License-Identifier: MIT */
/* Integration-test harness: starts the contactd that meson built with a temporary directory
 * (config, socket, notify socket), plays systemd by receiving its sd_notify datagrams (READY=1
 * with the addresses, STOPPING=1, WATCHDOG=1), stops it with SIGTERM and checks the exit (the
 * process itself is tests/lib/daemon_proc.h's; the harness adds the debug log level), drives it
 * through libcontactd-client with cmocka assertions, and offers raw-socket helpers for the
 * byte-level cases the client library cannot produce (half messages, oversized prefixes,
 * garbage). Waits are poll() with timeouts, never sleeps. */
#ifndef CONTACTD_TESTS_INTEGRATION_HARNESS_H
#define CONTACTD_TESTS_INTEGRATION_HARNESS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contactd.pb-c.h"
#include "client_wire.h"
#include "daemon_proc.h"
#include "wire/types.h"

/* Generous for a loaded 2-core CI machine; every wait ends as soon as its event happens. */
#define IT_TIMEOUT_MS T_DAEMON_TIMEOUT_MS

/* The daemon process: pid, pidfd, notify_fd, dir, config, log, socket, tcp, exit_status (see
 * daemon_proc.h). */
typedef t_daemon it_daemon;

/* Starts contactd (path) with a temporary config: socket in the temporary directory, TCP on
 * 127.0.0.1:0, [log] level = debug, plus extra_ini appended (may be NULL; sections may repeat
 * keys, the last wins). watchdog_usec > 0 sets $WATCHDOG_USEC. Waits for READY=1 and reads the
 * addresses from its STATUS. Returns 0, or -1 after printing why (the daemon exited, timed out,
 * no STATUS). */
int it_daemon_start(it_daemon *d, const char *contactd, const char *extra_ini,
                    long watchdog_usec);

/* The rest of the daemon's life is daemon_proc.h's, under the harness's names:
 * it_daemon_prepare(d): temporary directory /tmp/contactd-it-XXXXXX and notify socket.
 * it_daemon_spawn(d, contactd, argv): contactd with arbitrary arguments, no watchdog, without
 *   waiting for READY.
 * it_notify_wait(d, what, timeout_ms, buf, len), it_daemon_wait_exit(d, timeout_ms),
 * it_daemon_stop(d) (SIGTERM: STOPPING=1 and exit status 0), it_daemon_log(d, buf, len).
 * it_daemon_cleanup(d): kills it if still running and removes the temporary directory; its log
 *   goes to stderr first, where meson's test log keeps it. */
#define it_daemon_prepare(d) t_daemon_prepare((d), "it")
#define it_daemon_spawn(d, contactd, argv) t_daemon_spawn((d), (contactd), (argv), 0)
#define it_notify_wait t_daemon_notify_wait
#define it_daemon_wait_exit t_daemon_wait_exit
#define it_daemon_stop t_daemon_stop
#define it_daemon_cleanup(d) t_daemon_cleanup((d), stderr)
#define it_daemon_log t_daemon_log_read

/* A blocking connection to a Unix socket path or "HOST:PORT". Returns the fd or -1. */
int it_connect_unix(const char *path);
int it_connect_tcp(const char *hostport);

/* Writes all n bytes. Returns 0 or -1. */
int it_write_all(int fd, const void *buf, size_t n);

/* Packs msg with its varint length prefix into a malloc'd buffer (*ret, *ret_len). */
void it_pack(const ProtobufCMessage *msg, uint8_t **ret, size_t *ret_len);

/* n StatsRequests back to back, each with its length prefix, in a malloc'd buffer of *ret_len
 * bytes: a flood in one write. */
uint8_t *it_stats_requests(int n, size_t *ret_len);

/* Sends a packed message. Returns 0 or -1. */
int it_send(int fd, const ProtobufCMessage *msg);

/* A ClientMessage carrying h (which it points to). */
Contactd__V1__ClientMessage it_hello_message(Contactd__V1__Hello *h);

/* Sends a Hello (protocol_version given, everything else default). Returns 0 or -1. */
int it_send_hello(int fd, uint32_t protocol_version);

/* Receives one ServerMessage within timeout_ms. Returns it (free with
 * contactd__v1__server_message__free_unpacked(m, NULL)) or NULL on timeout, EOF or garbage. */
Contactd__V1__ServerMessage *it_recv(int fd, int timeout_ms);

/* True when the peer closes the connection within timeout_ms (any bytes before are skipped). */
bool it_wait_eof(int fd, int timeout_ms);

/* Ends a command started with popen: reads its stdout from p into out (len bytes, NUL-terminated;
 * the rest is dropped), closes p, and reads errpath, the file its stderr went to, into err
 * (errlen bytes, NUL-terminated; empty when there is no such file). Returns its exit status, or
 * 128 when it did not exit (a signal ended it). */
int it_command_end(FILE *p, char *out, size_t len, const char *errpath, char *err,
                   size_t errlen);

/* Opens a session with the client library over the daemon's Unix socket or its TCP port.
 * Fails the test on error. */
cdc_conn *it_session_open(const it_daemon *d, bool tcp, const cdc_hello *hello);

/* The next message on c within IT_TIMEOUT_MS; fails the test unless it is of kind want (the
 * unexpected message, an Error say, is printed). Free with cdc_wire_free. */
Contactd__V1__ServerMessage *it_session_recv(cdc_conn *c,
                                             Contactd__V1__ServerMessage__MsgCase want);

/* Sends s as frame seq (s->seq is set to seq) and waits for the next message on c, which must
 * be a Result carrying seq; fails the test otherwise. Returns it (free with cdc_wire_free). */
Contactd__V1__ServerMessage *it_frame_exchange(cdc_conn *c, cs_scene *s, uint64_t seq);

/* Asks for the daemon's Stats and waits for them; fails the test on error or any other reply.
 * Returns the message (free with cdc_wire_free); the Stats are its ->stats. */
Contactd__V1__ServerMessage *it_stats_fetch(cdc_conn *c);

/* Loads tests/data/<name> into s (free with cd_scene_json_free). Fails the test on error. */
void it_scene_load(const char *name, cs_scene *s);

/* The weight of s's first body, m |g|, N (the scenes these tests send have one body). */
double it_scene_weight(const cs_scene *s);

/* Sum over the Result's contacts of force . normal (the scene's normal of the same contact id):
 * the total normal force, N. Fails the test when an id is not in the scene. */
double it_normal_force_sum(const Contactd__V1__Result *r, const cs_scene *s);

/* Fails the test unless the timing record is consistent: 0 < received <= release, received <=
 * solve start, solve_ns > 0, solve start + solve_ns <= sent, deadline_met only when the solve
 * ended by the deadline, and a miss reason exactly when it did not hold. Never asserts that a
 * deadline held: that is the machine's load, not the daemon's correctness. */
void it_assert_timing(const Contactd__V1__Timing *t);

/* Reads a test executable's arguments, CONTACTD [CONTACTCTL]: the daemon and contactctl that
 * meson built. need_contactctl: exactly both are required (ret_contactctl is then set),
 * otherwise CONTACTD and anything after it is accepted (ret_contactctl may be NULL). Returns 0,
 * or -1 after printing the usage (main then exits with 2). */
int it_args(int argc, char **argv, bool need_contactctl, const char **ret_contactd,
            const char **ret_contactctl);

/* The cmocka test that ends each integration test: SIGTERM gives STOPPING=1 and exit status 0
 * (it_daemon_stop). *state is the it_daemon; add it with IT_SIGTERM_TEST(&d), which passes the
 * daemon as the test's initial state (the group setup must leave its own state NULL). */
void it_sigterm_stops_cleanly(void **state);
#define IT_SIGTERM_TEST(daemon)                                                                  \
    {.name = "sigterm_stops_cleanly", .test_func = it_sigterm_stops_cleanly,                       \
     .initial_state = (daemon)}

#endif /* CONTACTD_TESTS_INTEGRATION_HARNESS_H */
