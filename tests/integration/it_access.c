/* SPDX-License-Identifier: MIT */
/* Who may connect and what a connection that does nothing costs: the socket file's mode, the
 * Hello timeout, the connection caps (total and per uid), the per-uid session cap, idle
 * connections and a flood of StatsRequests that must not lock out a real client, the uid
 * allow-list (checked with a peer of another uid, so that part needs root and is skipped without
 * it), and TCP's rule: the token (a wrong one, or one holding a NUL byte, is refused, counted
 * and the connection closed), or the operator's explicit tcp_allow_any_local_user; a refused
 * Hello is told from a daemon that is not there, by the client library and by contactctl, also
 * when the refusal closed the connection before the Hello was written; a TCP refusal's Error is
 * not lost to a reset, and a refused client that keeps its connection open loses its place.
 * Arguments: the contactd and contactctl executables. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "testlib.h"

static const char *contactd_path, *contactctl_path;
static it_daemon d;

static int reset(void **state) {
    (void)state;
    d = (it_daemon){.pid = -1, .pidfd = -1, .notify_fd = -1};
    return 0;
}

static int cleanup(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    return 0;
}

// The next message on fd must be an Error of this code whose text contains needle, and the
// daemon must then close the connection.
static void expect_error_and_close(int fd, Contactd__V1__ErrorCode code, const char *needle) {
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, code);
    if (!strstr(m->error->message, needle)) {
        fail_msg("error '%s' does not name '%s'", m->error->message, needle);
    }
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
}

// A session opened by the client library once the daemon has a place for it, tried every 10 ms
// up to tries times (the test fails if none frees).
static cdc_conn *open_when_free(int tries) {
    cdc_conn *c = NULL;
    for (int k = 0; !c && k < tries; k++) {
        char err[256];
        cdc_conn_open_unix(d.socket, NULL, (int64_t)IT_TIMEOUT_MS * 1000000, &c, err,
                           sizeof err);
        if (!c) {
            usleep(10000);
        }
    }
    assert_non_null(c);
    return c;
}

static void socket_file_mode(void **state) {
    (void)state;
    struct stat st;
    assert_int_equal(it_daemon_start(&d, contactd_path, NULL, 0), 0);
    assert_int_equal(stat(d.socket, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660);
    assert_int_equal(it_daemon_stop(&d), 0);
    it_daemon_cleanup(&d);
    reset(NULL);
    assert_int_equal(it_daemon_start(&d, contactd_path, "[server]\nsocket_mode = 0600\n", 0), 0);
    assert_int_equal(stat(d.socket, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(it_daemon_stop(&d), 0);
}

static void silent_connection_times_out(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, "[server]\nhello_timeout_ms = 200\n", 0),
                     0);
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    expect_error_and_close(fd, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT, "hello_timeout_ms");
    close(fd);
    // Counted; and a client that says Hello in time keeps its connection.
    cdc_conn *c = it_session_open(&d, false, NULL);
    Contactd__V1__ServerMessage *m = it_stats_fetch(c);
    assert_int_equal(m->stats->hello_timeouts, 1);
    cdc_wire_free(m);
    cs_scene box;
    it_scene_load("box_on_plane.json", &box);
    cdc_wire_free(it_frame_exchange(c, &box, 1));
    cdc_conn_close(c);
    cd_scene_json_free(&box);
    assert_int_equal(it_daemon_stop(&d), 0);
}

enum { IDLE = 1000 };

static void idle_connections_do_not_lock_out(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, NULL, 0), 0);
    static int fds[IDLE];
    for (int i = 0; i < IDLE; i++) {
        fds[i] = it_connect_unix(d.socket);
        assert_true(fds[i] >= 0);
    }
    // The idle connections were all accepted (the last one is answered like any other) ...
    assert_int_equal(it_send(fds[IDLE - 1], &(Contactd__V1__ClientMessage){
        .base = PROTOBUF_C_MESSAGE_INIT(&contactd__v1__client_message__descriptor),
        .msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST,
        .stats_request = &(Contactd__V1__StatsRequest)CONTACTD__V1__STATS_REQUEST__INIT}.base),
        0);
    Contactd__V1__ServerMessage *m = it_recv(fds[IDLE - 1], IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS);
    assert_int_equal(m->stats->connections_refused, 0);
    contactd__v1__server_message__free_unpacked(m, NULL);
    // ... and a real client still gets its Welcome and its forces.
    cdc_conn *c = it_session_open(&d, false, NULL);
    cs_scene box;
    it_scene_load("box_on_plane.json", &box);
    cdc_wire_free(it_frame_exchange(c, &box, 1));
    cdc_conn_close(c);
    cd_scene_json_free(&box);
    for (int i = 0; i < IDLE; i++) {
        close(fds[i]);
    }
    assert_int_equal(it_daemon_stop(&d), 0);
}

static void connections_per_uid_capped(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, "[server]\nmax_connections_per_uid = 3\n",
                                     0), 0);
    int fds[3];
    for (int i = 0; i < 3; i++) {
        fds[i] = it_connect_unix(d.socket);
        assert_true(fds[i] >= 0);
    }
    const int extra = it_connect_unix(d.socket);
    assert_true(extra >= 0);
    expect_error_and_close(extra, CONTACTD__V1__ERROR_CODE__ERROR_BUSY,
                           "max_connections_per_uid");
    close(extra);
    // The client library reports that Error, not the send's -EPIPE, when the daemon has closed
    // the connection before its Hello could be written: always so for a Hello bigger than the
    // socket holds unread (a long client name), which waits for room the daemon never makes.
    static char name[1 << 20];
    memset(name, 'n', sizeof name - 1);
    const cdc_hello big = {.client_name = name};
    cdc_conn *c = NULL;
    char err[512];
    assert_int_equal(cdc_conn_open_unix(d.socket, &big, (int64_t)IT_TIMEOUT_MS * 1000000, &c,
                                        err, sizeof err),
                     -EBUSY);
    assert_null(c);
    if (!strstr(err, "refused the session") || !strstr(err, "max_connections_per_uid")) {
        fail_msg("a refusal before the Hello went: %s", err);
    }
    // A freed place is taken again: the client library's Hello gets its Welcome.
    close(fds[0]);
    // The daemon sees the close on its next loop pass; until then the cap still counts it.
    cdc_conn_close(open_when_free(100));
    close(fds[1]);
    close(fds[2]);
    assert_int_equal(it_daemon_stop(&d), 0);
}

// Lines of log holding needle.
static int log_lines(const char *log, const char *needle) {
    int n = 0;
    for (const char *p = strstr(log, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

// The sum of N over the log's "(N Errors before it not logged)".
static long log_unlogged(const char *log) {
    static const char tail[] = " Errors before it not logged)";
    long sum = 0;
    for (const char *p = strstr(log, tail); p; p = strstr(p + 1, tail)) {
        const char *open = p;
        while (open > log && open[-1] != '(') {
            open--;
        }
        sum += strtol(open, NULL, 10);
    }
    return sum;
}

// A client that connects again and again to be refused cannot flood the log: Errors but refusals
// of one message are logged at most 10 a second, and the next line logged says how many were
// not, so every refusal is accounted for.
static void refusals_are_logged_at_a_bounded_rate(void **state) {
    (void)state;
    enum { TRIES = 200 };
    assert_int_equal(it_daemon_start(&d, contactd_path,
                                     "[server]\nmax_connections_per_uid = 1\n"
                                     "hello_timeout_ms = 600000\n",
                                     0),
                     0);
    const int held = it_connect_unix(d.socket);
    assert_true(held >= 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < TRIES; i++) {
        const int fd = it_connect_unix(d.socket);
        assert_true(fd >= 0);
        expect_error_and_close(fd, CONTACTD__V1__ERROR_CODE__ERROR_BUSY,
                               "max_connections_per_uid");
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    // One more, a window later: its line counts those left unlogged since the last one.
    usleep(1100 * 1000);
    const int last = it_connect_unix(d.socket);
    assert_true(last >= 0);
    expect_error_and_close(last, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, "max_connections_per_uid");
    close(last);
    close(held);
    assert_int_equal(it_daemon_stop(&d), 0);
    static char log[1 << 20];
    assert_true(it_daemon_log(&d, log, sizeof log) > 0);
    const int logged = log_lines(log, "ERROR_BUSY: connection: uid");
    const long unlogged = log_unlogged(log);
    print_message("# %d refusals in %.2f s: %d logged, %ld said not logged\n", TRIES + 1, seconds,
                  logged, unlogged);
    assert_int_equal(logged + unlogged, TRIES + 1);
    assert_true(logged <= 10 * ((int)seconds + 3));
}

// One uid holds at most max_sessions_per_uid sessions: the next Hello gets ERROR_BUSY naming the
// limit while sessions are still free, and a session closed frees a place for it. TCP peers have
// no uid, as for max_connections_per_uid.
static void sessions_per_uid_capped(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path,
                                     "[server]\nmax_sessions = 4\nmax_sessions_per_uid = 2\n", 0),
                     0);
    cdc_conn *a = it_session_open(&d, false, NULL);
    cdc_conn *b = it_session_open(&d, false, NULL);
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    assert_int_equal(it_send_hello(fd, 1), 0);
    expect_error_and_close(fd, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, "max_sessions_per_uid");
    close(fd);
    cdc_conn_close(it_session_open(&d, true, NULL));
    cdc_conn_close(a);
    // The daemon sees the close on its next loop pass; until then the cap still counts it.
    cdc_conn_close(open_when_free(100));
    cdc_conn_close(b);
    assert_int_equal(it_daemon_stop(&d), 0);
}

// A client that floods Stats requests and reads nothing cannot keep its connection (and its
// place under max_connections) past its Hello timeout: the Error that ends it cannot be written,
// and the daemon drops the connection anyway.
static void silent_reader_is_closed(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path,
                                     "[server]\nhello_timeout_ms = 200\nmax_connections = 1\n"
                                     "max_queued_bytes = 4096\n",
                                     0),
                     0);
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    // Replies of some 40 bytes each: far more than the socket's buffers and the queue take.
    const Contactd__V1__ClientMessage stats = {
        .base = PROTOBUF_C_MESSAGE_INIT(&contactd__v1__client_message__descriptor),
        .msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST,
        .stats_request = &(Contactd__V1__StatsRequest)CONTACTD__V1__STATS_REQUEST__INIT};
    for (int i = 0; i < 20000 && it_send(fd, &stats.base) == 0; i++) {
    }
    // The only place is the flooder's until the daemon drops it; then a client gets in.
    cdc_conn_close(open_when_free(1000));
    close(fd);
    assert_int_equal(it_daemon_stop(&d), 0);
}

// Clients that flood StatsRequests before their Hello get a burst answered and the rest refused
// with ERROR_LIMIT naming the rate; too many refusals close the connection with an Error saying
// so, though a request is answered now and then between them (the flood comes in rounds 10 ms
// apart: each round gets one answered, which a count of refusals in a row would start again
// from, and none refused 1000 in a row). Meanwhile another client's Hello gets its Welcome.
// What a flooder got (stats_flood_is_limited): Stats, refusals, and the Error that closed its
// connection.
typedef struct flood_replies {
    int answered, limited, closed;
} flood_replies;

// Takes every message that arrives on fd within timeout_ms of the one before (0: those already
// there), checking each refusal's text, until none does or the connection ends.
static void take_flood_replies(int fd, int timeout_ms, flood_replies *r) {
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) != 1) {
            return;
        }
        Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
        if (!m) {
            return;
        }
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_STATS) {
            r->answered++;
        } else {
            assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
            assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT);
            if (strstr(m->error->message, "the connection is closed")) {
                r->closed++;
            } else if (r->limited++ == 0 &&
                       !strstr(m->error->message, "stats_request: rate limit")) {
                fail_msg("error '%s' does not name the Stats rate limit", m->error->message);
            }
        }
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
}

static void stats_flood_is_limited(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, NULL, 0), 0);
    enum { FLOODERS = 8, ROUNDS = 40, PER_ROUND = 300 };
    size_t len;
    uint8_t *round = it_stats_requests(PER_ROUND, &len);
    int fds[FLOODERS];
    for (int i = 0; i < FLOODERS; i++) {
        fds[i] = it_connect_unix(d.socket);
        assert_true(fds[i] >= 0);
    }
    // The daemon closes a connection before it has read everything: writes then fail. The first
    // flooder reads as it goes: the closing Error waits LINGER_MS for a client to take it, and
    // on a loaded machine the rounds alone can outlast that.
    flood_replies got = {0};
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < FLOODERS; i++) {
            (void)it_write_all(fds[i], round, len);
        }
        take_flood_replies(fds[0], 0, &got);
        usleep(10000);
    }
    cdc_conn_close(it_session_open(&d, false, NULL));
    take_flood_replies(fds[0], IT_TIMEOUT_MS, &got);
    assert_true(got.answered >= 1 && got.answered < ROUNDS * PER_ROUND);
    assert_true(got.limited >= 1);
    assert_int_equal(got.closed, 1);
    assert_true(it_wait_eof(fds[0], IT_TIMEOUT_MS));
    for (int i = 0; i < FLOODERS; i++) {
        close(fds[i]);
    }
    free(round);
    assert_int_equal(it_daemon_stop(&d), 0);
}

// A client's name is logged as text: a newline or an escape sequence in it cannot forge a log
// line or reach the operator's terminal.
static void client_name_cannot_forge_log_lines(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, NULL, 0), 0);
    cdc_conn *c = it_session_open(
        &d, false, &(cdc_hello){.client_name = "x\ncontactd: notice: forged\x1b[31m"});
    cdc_conn_close(c);
    assert_int_equal(it_daemon_stop(&d), 0);
    static char log[1 << 16];
    assert_true(it_daemon_log(&d, log, sizeof log) > 0);
    assert_non_null(strstr(log, "x?contactd: notice: forged?[31m"));
    assert_null(strstr(log, "\ncontactd: notice: forged"));
    assert_null(strchr(log, 0x1b));
}

// In a child running as uid: connects, says Hello, and exits 0 when the reply is of kind want
// (for an Error, of code code), else 1.
static int hello_as(uid_t uid, Contactd__V1__ServerMessage__MsgCase want,
                    Contactd__V1__ErrorCode code) {
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(uid) < 0 || setuid(uid) < 0) {
            _exit(2);
        }
        const int fd = it_connect_unix(d.socket);
        if (fd < 0) {
            _exit(3);
        }
        // A refused peer may find the connection closed before its Hello goes out; the Error
        // that says why is waiting to be read either way.
        (void)it_send_hello(fd, 1);
        Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
        _exit(m && m->msg_case == want &&
                      (want != CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR || m->error->code == code)
                  ? 0
                  : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void allow_list_by_uid(void **state) {
    (void)state;
    if (geteuid() != 0) {
        printf("# needs root to connect as another uid\n");
        skip();
    }
    enum { OTHER = 64123, ALLOWED = 64124 };
    char ini[128];
    snprintf(ini, sizeof ini, "[server]\nsocket_mode = 0666\nallow_uids = %d\n", ALLOWED);
    assert_int_equal(it_daemon_start(&d, contactd_path, ini, 0), 0);
    // The socket's directory must let the other uids reach the socket.
    assert_int_equal(chmod(d.dir, 0755), 0);
    assert_int_equal(hello_as(OTHER, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR,
                              CONTACTD__V1__ERROR_CODE__ERROR_DENIED), 0);
    assert_int_equal(hello_as(ALLOWED, CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME, 0), 0);
    // Root (this process) always may.
    cdc_conn_close(it_session_open(&d, false, NULL));
    assert_int_equal(it_daemon_stop(&d), 0);
}

static const char the_token[] = "s3cret-token-of-the-test-0123456789";

// Starts the daemon with the_token in a new file (its name in token_file, a mkstemp template)
// and TCP open to that token only.
static void start_with_token(char *token_file) {
    const int tfd = mkstemp(token_file);
    assert_true(tfd >= 0);
    assert_int_equal(write(tfd, the_token, sizeof the_token - 1), (ssize_t)sizeof the_token - 1);
    assert_int_equal(write(tfd, "\n", 1), 1);
    close(tfd);
    char ini[256];
    snprintf(ini, sizeof ini, "[server]\nauth_token_file = %s\ntcp_allow_any_local_user = no\n",
             token_file);
    assert_int_equal(it_daemon_start(&d, contactd_path, ini, 0), 0);
}

// Sends a Hello with token on fd, a "#x" in it sent as a NUL byte and an x (which protobuf-c
// would cut off at the NUL).
static void send_hello_token(int fd, const char *token) {
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.token = (char *)token;
    Contactd__V1__ClientMessage env = it_hello_message(&h);
    uint8_t *bytes;
    size_t len;
    it_pack(&env.base, &bytes, &len);
    // protobuf-c packs a C string: the NUL byte goes in afterwards.
    uint8_t *nul = memmem(bytes, len, "#x", 2);
    if (nul) {
        *nul = '\0';
    }
    assert_int_equal(it_write_all(fd, bytes, len), 0);
    free(bytes);
}

static void tcp_needs_the_token(void **state) {
    (void)state;
    char token_file[] = "/tmp/contactd-token-XXXXXX";
    start_with_token(token_file);
    // No token, a wrong one, then the right one followed by a NUL byte (which protobuf-c would
    // cut off, leaving the right token): each refused as a failed authentication, naming the
    // field, and the connection closes.
    const char *wrong[] = {"", "s3cret-token-of-the-test-0123456788",
                           "s3cret-token-of-the-test-0123456789#x"};
    for (int k = 0; k < 3; k++) {
        const int fd = it_connect_tcp(d.tcp);
        assert_true(fd >= 0);
        send_hello_token(fd, wrong[k]);
        expect_error_and_close(fd, CONTACTD__V1__ERROR_CODE__ERROR_DENIED, "hello.token");
        close(fd);
    }
    // The right token opens a session over TCP; the Unix socket needs none.
    const cdc_hello hello = {.token = the_token};
    cdc_conn *c = NULL;
    char err[256];
    assert_int_equal(cdc_conn_open_tcp(d.tcp, &hello, (int64_t)IT_TIMEOUT_MS * 1000000, &c, err,
                                       sizeof err), 0);
    cdc_conn_close(c);
    c = it_session_open(&d, false, NULL);
    Contactd__V1__ServerMessage *m = it_stats_fetch(c);
    assert_int_equal(m->stats->connections_refused, 3);
    cdc_wire_free(m);
    cdc_conn_close(c);
    assert_int_equal(it_daemon_stop(&d), 0);
    unlink(token_file);
}

// A second Hello on a TCP connection that has a session ends it for that (ERROR_PROTOCOL), its
// token cut by a NUL byte or not, and whether the I/O thread or the session's worker reads the
// socket: a client cannot tell the two apart.
static void second_hello_ends_an_attached_tcp_connection(void **state) {
    (void)state;
    char token_file[] = "/tmp/contactd-token-XXXXXX";
    start_with_token(token_file);
    const cdc_hello hello = {.token = the_token};
    cdc_conn *c = it_session_open(&d, true, &hello);
    char attached[96];
    snprintf(attached, sizeof attached, "session %llu: its worker reads and answers the socket",
             (unsigned long long)cdc_conn_welcome(c)->session_id);
    static char log[1 << 20];
    bool seen = false;
    for (int tries = 0; !seen && tries < IT_TIMEOUT_MS / 10; tries++) {
        seen = it_daemon_log(&d, log, sizeof log) > 0 && strstr(log, attached);
        if (!seen) {
            usleep(10000);
        }
    }
    assert_true(seen);
    send_hello_token(cdc_conn_fd(c), "s3cret-token-of-the-test-0123456789#x");
    expect_error_and_close(cdc_conn_fd(c), CONTACTD__V1__ERROR_CODE__ERROR_PROTOCOL,
                           "already has a session");
    cdc_conn_close(c);
    assert_int_equal(it_daemon_stop(&d), 0);
    unlink(token_file);
}

// The Error that refuses a TCP Hello reaches a client that has not read the daemon's earlier
// replies and goes on sending: the daemon used to close the socket with the client's later bytes
// unread, so the kernel reset the connection and dropped what the client's full window had kept
// in the daemon's send queue, that Error last. Now it shuts its sending side and reads until the
// client closes, so everything sent arrives. Each round: a receive buffer of a few KiB, 200
// StatsRequests (16 answered, the rest refused with ERROR_LIMIT: some 20 KiB of replies), a Hello
// without the token and 16 KiB more, all sent before reading.
static void tcp_refusal_outlives_unread_replies(void **state) {
    (void)state;
    enum { ROUNDS = 10, REQUESTS = 200, AFTER = 16384 };
    assert_int_equal(it_daemon_start(&d, contactd_path,
                                     "[server]\ntcp_allow_any_local_user = no\n", 0), 0);
    size_t nreq;
    uint8_t *requests = it_stats_requests(REQUESTS, &nreq);
    uint8_t *hello;
    size_t nhello;
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    const Contactd__V1__ClientMessage env = it_hello_message(&h);
    it_pack(&env.base, &hello, &nhello);
    static uint8_t after[AFTER];
    int lost = 0;
    for (int round = 0; round < ROUNDS; round++) {
        const int fd = it_connect_tcp(d.tcp);
        assert_true(fd >= 0);
        const int rcvbuf = 2048;
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf), 0);
        assert_int_equal(it_write_all(fd, requests, nreq), 0);
        assert_int_equal(it_write_all(fd, hello, nhello), 0);
        (void)it_write_all(fd, after, sizeof after); // fails once the connection is reset
        int replies = 0;
        bool refused = false;
        Contactd__V1__ServerMessage *m;
        while (!refused && (m = it_recv(fd, IT_TIMEOUT_MS))) {
            replies++;
            refused = m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR &&
                      m->error->code == CONTACTD__V1__ERROR_CODE__ERROR_DENIED &&
                      strstr(m->error->message, "tcp_allow_any_local_user");
            contactd__v1__server_message__free_unpacked(m, NULL);
        }
        if (refused) {
            assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
        } else {
            print_message("# round %d: %d replies, then no Error\n", round, replies);
            lost++;
        }
        close(fd);
    }
    free(requests);
    free(hello);
    print_message("# the refusal lost in %d of %d rounds\n", lost, ROUNDS);
    assert_int_equal(lost, 0);
    assert_int_equal(it_daemon_stop(&d), 0);
}

// A refused client that keeps its connection open cannot keep the daemon's end of it, and the
// place it takes under max_connections: the daemon reads until the client closes, but for
// LINGER_MS at most.
static void refused_connection_left_open_ends(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path,
                                     "[server]\nmax_connections = 1\nhello_timeout_ms = 600000\n",
                                     0),
                     0);
    const int held = it_connect_tcp(d.tcp);
    assert_true(held >= 0);
    const int refused = it_connect_tcp(d.tcp);
    assert_true(refused >= 0);
    assert_int_equal(it_send_hello(refused, 1), 0);
    expect_error_and_close(refused, CONTACTD__V1__ERROR_CODE__ERROR_BUSY, "max_connections");
    close(held);
    // The place is free once the refused connection's end is closed too (open_when_free gives
    // up after 1 s).
    cdc_conn_close(open_when_free(100));
    close(refused);
    assert_int_equal(it_daemon_stop(&d), 0);
}

static void tcp_without_token_needs_the_operators_choice(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path,
                                     "[server]\ntcp_allow_any_local_user = no\n", 0), 0);
    const int fd = it_connect_tcp(d.tcp);
    assert_true(fd >= 0);
    assert_int_equal(it_send_hello(fd, 1), 0);
    expect_error_and_close(fd, CONTACTD__V1__ERROR_CODE__ERROR_DENIED,
                           "tcp_allow_any_local_user");
    close(fd);
    // The client library tells the refusal from a daemon that is not there (connect's -ENOENT
    // or -ECONNREFUSED), and contactctl says so instead of asking whether contactd runs.
    cdc_conn *c = NULL;
    char err[512];
    assert_int_equal(cdc_conn_open_tcp(d.tcp, NULL, (int64_t)IT_TIMEOUT_MS * 1000000, &c, err,
                                       sizeof err),
                     -EACCES);
    assert_non_null(strstr(err, "tcp_allow_any_local_user"));
    char cmd[1024], out[1024];
    snprintf(cmd, sizeof cmd, "'%s' send '%s' --tcp %s 2>&1", contactctl_path,
             t_data_path("box_on_plane.json"), d.tcp);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    out[fread(out, 1, sizeof out - 1, p)] = '\0';
    assert_int_equal(WEXITSTATUS(pclose(p)), 4);
    if (!strstr(out, "refused the session") || strstr(out, "is contactd running")) {
        fail_msg("contactctl on a refused Hello: %s", out);
    }
    cdc_conn_close(it_session_open(&d, false, NULL));
    assert_int_equal(it_daemon_stop(&d), 0);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, true, &contactd_path, &contactctl_path) < 0) {
        return 2;
    }
#define TEST(f) cmocka_unit_test_setup_teardown(f, reset, cleanup)
    const struct CMUnitTest tests[] = {
        TEST(socket_file_mode),
        TEST(silent_connection_times_out),
        TEST(idle_connections_do_not_lock_out),
        TEST(connections_per_uid_capped),
        TEST(refusals_are_logged_at_a_bounded_rate),
        TEST(sessions_per_uid_capped),
        TEST(silent_reader_is_closed),
        TEST(stats_flood_is_limited),
        TEST(client_name_cannot_forge_log_lines),
        TEST(allow_list_by_uid),
        TEST(tcp_needs_the_token),
        TEST(second_hello_ends_an_attached_tcp_connection),
        TEST(tcp_without_token_needs_the_operators_choice),
        TEST(tcp_refusal_outlives_unread_replies),
        TEST(refused_connection_left_open_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
