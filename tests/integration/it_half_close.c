/* SPDX-License-Identifier: MIT */
/* A client that shuts its sending side gets what its mode promises, whichever thread serves its
 * socket: every request answered, the newest stream frame solved at its tick, then the close.
 * The sessions here are the ones whose Welcome could not go out whole at admission (the client
 * left a flood of replies to its StatsRequests unread): one attached to its worker once the
 * client has read up to its Welcome, with frames the I/O thread took before, and ones the I/O
 * thread serves to their end, their frames and the shutdown sent before the client reads
 * anything. A message left unfinished at the
 * shutdown gets ERROR_DECODE, logged, on a connection before Hello and on a worker-served one,
 * whose frames before it are still answered. (A session whose worker's buffers could not be made
 * is served by the I/O thread as the ones here; nothing short of a failing allocation provokes
 * it.) Arguments: the contactd and contactctl executables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wire/codec.h"
#include "wire/scene_json.h"
#include "testlib.h"

// StatsRequests sent before the Hello: their replies, 16 Stats and the rest ERROR_LIMIT, are more
// than the Unix socket holds, and fewer refusals than close a connection (1000).
#define FLOOD 900

static const char *contactd_path;
static it_daemon d;
static cs_scene box;
static const cs_limits box_limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8};

static int setup(void **state) {
    (void)state;
    it_scene_load("box_on_plane.json", &box);
    return it_daemon_start(&d, contactd_path, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    cd_scene_json_free(&box);
    return 0;
}

// The daemon's log so far (the floods' refusals are logged at debug). It only grows, so a
// pointer into it stays good when it is read again.
static char log_text[8 << 20];

static const char *log_now(void) {
    assert_true(it_daemon_log(&d, log_text, sizeof log_text) >= 0);
    return log_text;
}

// Waits until the log holds needle; returns where, or NULL after IT_TIMEOUT_MS.
static const char *log_wait(const char *needle) {
    for (int tries = 0; tries < IT_TIMEOUT_MS / 10; tries++) {
        const char *at = strstr(log_now(), needle);
        if (at) {
            return at;
        }
        const struct timespec ms = {.tv_nsec = 10000000};
        nanosleep(&ms, NULL);
    }
    return NULL;
}

// The log line that says a session's worker serves its socket.
static void attached_line(uint64_t id, char *buf, size_t len) {
    snprintf(buf, len, "session %llu: its worker reads and answers the socket",
             (unsigned long long)id);
}

// Connects, floods StatsRequests, says Hello as client name (request or stream mode) and waits
// until the session is open, its Welcome stuck behind the unread replies: the worker does not
// serve it. Returns the socket; *ret_id is the session's id.
static int open_unread(const char *name, bool request, uint64_t *ret_id) {
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    size_t len;
    uint8_t *flood = it_stats_requests(FLOOD, &len);
    assert_int_equal(it_write_all(fd, flood, len), 0);
    free(flood);
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.client_name = (char *)name;
    h.mode = request ? CONTACTD__V1__SESSION_MODE__MODE_REQUEST
                     : CONTACTD__V1__SESSION_MODE__MODE_STREAM;
    Contactd__V1__Limits lim = CONTACTD__V1__LIMITS__INIT;
    lim.max_bodies = 1;
    lim.max_contacts = 4;
    lim.max_friction_directions = 8;
    h.limits = &lim;
    Contactd__V1__ClientMessage cm = it_hello_message(&h);
    assert_int_equal(it_send(fd, &cm.base), 0);
    // "session N opened on connection M (unix ..., client 'name')": the line begins with the id.
    char needle[96];
    snprintf(needle, sizeof needle, ", client '%s')", name);
    const char *line = log_wait(needle);
    assert_non_null(line);
    while (line > log_text && line[-1] != '\n') {
        line--;
    }
    unsigned long long id;
    assert_int_equal(sscanf(strstr(line, "session "), "session %llu opened", &id), 1);
    *ret_id = id;
    char attached[96];
    attached_line(id, attached, sizeof attached);
    if (strstr(log_text, attached)) {
        fail_msg("session %llu's Welcome went out whole: the flood did not fill the socket",
                 (unsigned long long)*ret_id);
    }
    return fd;
}

// Sends the box frames first..last, each with its length prefix.
static void send_frames(int fd, uint64_t first, uint64_t last) {
    cd_frame_msg fm = {0};
    assert_int_equal(cd_codec_frame_msg_init(&fm, &box_limits), 0);
    for (uint64_t q = first; q <= last; q++) {
        box.seq = q;
        uint8_t *buf;
        size_t len;
        it_pack(&cd_codec_frame_build(&fm, &box)->base, &buf, &len);
        assert_int_equal(it_write_all(fd, buf, len), 0);
        free(buf);
    }
    cd_codec_frame_msg_fini(&fm);
}

// Reads the replies to the flood, up to and with the Welcome.
static void read_to_welcome(int fd) {
    Contactd__V1__ServerMessage *m;
    while ((m = it_recv(fd, IT_TIMEOUT_MS)) &&
           m->msg_case != CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME) {
        assert_true(m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_STATS ||
                    (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR &&
                     m->error->code == CONTACTD__V1__ERROR_CODE__ERROR_LIMIT &&
                     m->error->seq == 0));
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    assert_non_null(m);
    contactd__v1__server_message__free_unpacked(m, NULL);
}

// Reads the Results for frames 1..n until the daemon closes the connection: each counted in
// answers[seq], in the order of their seqs; an Error (a refused frame) fails. Returns the seq
// of the last Result (0: none).
static uint64_t answers_until_close(int fd, int *answers, uint64_t n) {
    uint64_t last = 0;
    Contactd__V1__ServerMessage *m;
    while ((m = it_recv(fd, IT_TIMEOUT_MS))) {
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR) {
            fail_msg("Error %d for seq %llu: %s", m->error->code,
                     (unsigned long long)m->error->seq, m->error->message);
        }
        assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT);
        const uint64_t q = m->result->seq;
        assert_true(q > last);
        last = q;
        assert_true(q >= 1 && q <= n);
        answers[q]++;
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS)); // closed, not timed out
    return last;
}

static void assert_each_answered_once(const int *answers, int n) {
    for (int q = 1; q <= n; q++) {
        if (answers[q] != 1) {
            fail_msg("frame %d: %d answers", q, answers[q]);
        }
    }
}

// A session whose Welcome was stuck behind unread replies is handed to its worker once the
// client has read them. Its requests are all answered, once and in order: those the I/O thread
// took before (their answers queued behind the Welcome), and those sent after, then the shutdown.
static void session_attached_late_answers_after_shutdown(void **state) {
    (void)state;
    enum { REQUESTS = 6 }; // within the request queue and the rate's burst
    uint64_t id;
    const int fd = open_unread("late", true, &id);
    send_frames(fd, 1, REQUESTS / 2);
    read_to_welcome(fd);
    char attached[96];
    attached_line(id, attached, sizeof attached);
    assert_non_null(log_wait(attached));
    send_frames(fd, REQUESTS / 2 + 1, REQUESTS);
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    int answers[REQUESTS + 1] = {0};
    assert_true(answers_until_close(fd, answers, REQUESTS) > 0);
    assert_each_answered_once(answers, REQUESTS);
    close(fd);
}

// Sessions the I/O thread serves to their end: the client sends frames and shuts its sending
// side before it reads anything (the Welcome included). Request mode: every frame is answered;
// stream mode: the newest, at its tick. The worker never served them.
static void session_served_by_io_answers_after_shutdown(void **state) {
    (void)state;
    enum { REQUESTS = 6, STREAMED = 3 };
    for (int request = 1; request >= 0; request--) {
        const uint64_t n = request ? REQUESTS : STREAMED;
        uint64_t id;
        const int fd = open_unread(request ? "io-request" : "io-stream", request, &id);
        send_frames(fd, 1, n);
        assert_int_equal(shutdown(fd, SHUT_WR), 0);
        read_to_welcome(fd);
        int answers[REQUESTS + 1] = {0};
        const uint64_t last = answers_until_close(fd, answers, n);
        if (request) {
            assert_each_answered_once(answers, REQUESTS);
        } else {
            assert_int_equal(last, STREAMED);
        }
        close(fd);
        char attached[96];
        attached_line(id, attached, sizeof attached);
        assert_null(strstr(log_now(), attached));
    }
}

// Half a message and the shutdown: the Error that ends the connection names it, and the log
// says so, as for other bytes that cannot be decoded; the frame before it is answered first.
static void half_message_at_shutdown_gets_an_error(void **state) {
    (void)state;
    // Before Hello, on a connection the I/O thread serves: a length prefix announcing 10 bytes,
    // and 3 of them.
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    const uint8_t half[] = {10, 0x0a, 0x00, 0x00};
    assert_int_equal(it_write_all(fd, half, sizeof half), 0);
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_DECODE);
    assert_string_equal(m->error->message,
                        "message: the client shut its sending side 4 bytes into a message");
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
    close(fd);
    assert_non_null(log_wait("ERROR_DECODE: message: the client shut its sending side 4 bytes"));

    // A session its worker serves: a frame, then half of the next one.
    cdc_conn *c = it_session_open(&d, false, &(cdc_hello){.request_mode = true,
                                  .limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8}});
    cd_frame_msg fm = {0};
    assert_int_equal(cd_codec_frame_msg_init(&fm, &box_limits), 0);
    uint8_t *buf;
    size_t len;
    box.seq = 1;
    it_pack(&cd_codec_frame_build(&fm, &box)->base, &buf, &len);
    cd_codec_frame_msg_fini(&fm);
    assert_int_equal(cdc_wire_send_packed(c, buf, len), 0);
    assert_int_equal(it_write_all(cdc_conn_fd(c), buf, len / 2), 0);
    free(buf);
    assert_int_equal(shutdown(cdc_conn_fd(c), SHUT_WR), 0);
    int results = 0, cut = 0, r;
    while ((r = cdc_wire_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m)) == 1) {
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT) {
            assert_int_equal(m->result->seq, 1);
            results++;
        } else {
            assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
            assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_DECODE);
            assert_non_null(strstr(m->error->message, "shut its sending side"));
            // The Error ends the connection: it comes after the answer to the frame before.
            assert_int_equal(results, 1);
            cut++;
        }
        cdc_wire_free(m);
    }
    assert_true(r < 0); // closed, not timed out
    assert_int_equal(results, 1);
    assert_int_equal(cut, 1);
    cdc_conn_close(c);

    // A session the I/O thread serves: three requests and half a message sent, and the shutdown,
    // before anything is read. The three Results come first, the Error last.
    uint64_t id;
    const int io = open_unread("cut", true, &id);
    send_frames(io, 1, 3);
    assert_int_equal(it_write_all(io, half, sizeof half), 0);
    assert_int_equal(shutdown(io, SHUT_WR), 0);
    read_to_welcome(io);
    uint64_t last = 0;
    while ((m = it_recv(io, IT_TIMEOUT_MS)) &&
           m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT) {
        assert_int_equal(m->result->seq, ++last);
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    assert_int_equal(last, 3);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_DECODE);
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(io, IT_TIMEOUT_MS));
    close(io);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(session_attached_late_answers_after_shutdown),
        cmocka_unit_test(session_served_by_io_answers_after_shutdown),
        cmocka_unit_test(half_message_at_shutdown_gets_an_error),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
