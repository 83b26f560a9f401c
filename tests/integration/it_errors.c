/* SPDX-License-Identifier: MIT */
/* Bad input only ever costs its own sender: an invalid frame gets an Error naming the field and
 * carrying its seq while the session keeps streaming; an oversized message gets ERROR_TOO_LARGE,
 * undecodable bytes ERROR_DECODE, a frame before Hello or a wrong version ERROR_PROTOCOL, each
 * followed by a clean close; a Hello naming an unknown solver gets ERROR_INVALID and may be
 * retried, as may one with a solver's name holding a NUL byte; a message field given twice in a
 * frame gets ERROR_INVALID naming it; a frame too large for its worker's decoding arena gets
 * ERROR_LIMIT with its seq and is counted; a Hello beyond max_sessions gets ERROR_BUSY. A Hello may
 * lower max_message_bytes for its session, a session granted fewer friction directions than the
 * default solves frames that name none, and a client that shuts its sending side after its Hello
 * or its frames is still answered (every request; the newest stream frame, at its tick). Through
 * all of it a streaming session gets an answer to every frame.
 * Arguments: the contactd and contactctl executables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "wire/codec.h"
#include "wire/framing.h"
#include "wire/scene_json.h"
#include "testlib.h"

// Small enough that a crafted prefix is cheap to exceed, large enough for the box frame.
#define MAX_MESSAGE 4096
#define MAX_SESSIONS 3

static const char *contactd_path;
static it_daemon d;
static cs_scene box;
static cdc_conn *streamer; /* the session that must not notice anything */
static uint64_t seq;

static int setup(void **state) {
    (void)state;
    it_scene_load("box_on_plane.json", &box);
    char ini[128];
    snprintf(ini, sizeof ini, "[server]\nmax_message_bytes = %d\nmax_sessions = %d\n",
             MAX_MESSAGE, MAX_SESSIONS);
    return it_daemon_start(&d, contactd_path, ini, 0);
}

static int teardown(void **state) {
    (void)state;
    cdc_conn_close(streamer);
    it_daemon_cleanup(&d);
    cd_scene_json_free(&box);
    return 0;
}

// One more frame of the streaming session, answered.
static void stream_one(void) {
    Contactd__V1__ServerMessage *m = it_frame_exchange(streamer, &box, ++seq);
    // Not OK only when a loaded machine delayed the solve past its deadline: answered all the
    // same, and labelled.
    it_assert_timing(m->result->timing);
    assert_true(m->result->status == CONTACTD__V1__STATUS__STATUS_OK ||
                !m->result->timing->deadline_met);
    cdc_wire_free(m);
}

// Receives an Error of the given code on a raw connection, and returns its message.
static Contactd__V1__ServerMessage *expect_error(int fd, Contactd__V1__ErrorCode code) {
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, code);
    return m;
}

static void invalid_frame_named_session_goes_on(void **state) {
    (void)state;
    streamer = it_session_open(&d, false, NULL);
    stream_one();
    // contacts[2].normal is 0.5 long: an Error names it and carries the frame's seq.
    const double saved = box.contacts[2].normal[2];
    box.contacts[2].normal[2] = 0.5 * saved;
    box.seq = ++seq;
    assert_int_equal(cdc_wire_frame_send(streamer, &box), 0);
    box.contacts[2].normal[2] = saved;
    Contactd__V1__ServerMessage *m =
        it_session_recv(streamer, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
    assert_int_equal(m->error->seq, seq);
    if (strncmp(m->error->message, "contacts[2].normal", 18) != 0) {
        fail_msg("error does not name contacts[2].normal: '%s'", m->error->message);
    }
    cdc_wire_free(m);
    // A NaN mass, likewise.
    const double mass = box.bodies[0].mass;
    box.bodies[0].mass = 0.0 / 0.0;
    box.seq = ++seq;
    assert_int_equal(cdc_wire_frame_send(streamer, &box), 0);
    box.bodies[0].mass = mass;
    m = it_session_recv(streamer, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->seq, seq);
    if (strncmp(m->error->message, "bodies[0].mass", 14) != 0) {
        fail_msg("error does not name bodies[0].mass: '%s'", m->error->message);
    }
    cdc_wire_free(m);
    // A penetration recovery beyond the whole penetration.
    box.penetration_recovery = 1.5;
    box.seq = ++seq;
    assert_int_equal(cdc_wire_frame_send(streamer, &box), 0);
    box.penetration_recovery = 0;
    m = it_session_recv(streamer, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->seq, seq);
    if (strncmp(m->error->message, "penetration_recovery: must be in [0, 1]", 39) != 0) {
        fail_msg("error does not name penetration_recovery: '%s'", m->error->message);
    }
    cdc_wire_free(m);
    // The session carries on.
    for (int i = 0; i < 20; i++) {
        stream_one();
    }
}

// A raw connection (TCP or the Unix socket) whose Hello was welcomed.
static int raw_session(bool tcp) {
    const int fd = tcp ? it_connect_tcp(d.tcp) : it_connect_unix(d.socket);
    assert_true(fd >= 0);
    assert_int_equal(it_send_hello(fd, 1), 0);
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME);
    contactd__v1__server_message__free_unpacked(m, NULL);
    return fd;
}

static void oversized_message_closes_only_its_connection(void **state) {
    (void)state;
    const int fd = raw_session(true);
    stream_one();
    // A prefix announcing one byte more than allowed, and the start of a body.
    uint8_t buf[CD_VARINT_MAX + 64] = {0};
    const size_t n = cd_varint_encode(MAX_MESSAGE + 1, buf);
    assert_int_equal(it_write_all(fd, buf, n + 64), 0);
    Contactd__V1__ServerMessage *m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_TOO_LARGE);
    assert_non_null(strstr(m->error->message, "max_message_bytes"));
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
    close(fd);
    for (int i = 0; i < 20; i++) {
        stream_one();
    }
}

// Sends a Hello with these limits on fd and returns the reply.
static Contactd__V1__ServerMessage *hello_with(int fd, const Contactd__V1__Limits *lim) {
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.limits = (Contactd__V1__Limits *)lim;
    Contactd__V1__ClientMessage cm = it_hello_message(&h);
    assert_int_equal(it_send(fd, &cm.base), 0);
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    return m;
}

// A Hello may lower max_message_bytes for its session: the Welcome grants what it asked, and a
// message longer than that is refused as one over the daemon's own cap would be.
static void hello_lowers_max_message_bytes(void **state) {
    (void)state;
    enum { ASKED = 2048 };
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    Contactd__V1__Limits lim = CONTACTD__V1__LIMITS__INIT;
    lim.max_message_bytes = ASKED;
    Contactd__V1__ServerMessage *m = hello_with(fd, &lim);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME);
    assert_int_equal(m->welcome->limits->max_message_bytes, ASKED);
    contactd__v1__server_message__free_unpacked(m, NULL);
    uint8_t buf[CD_VARINT_MAX + 64] = {0};
    const size_t n = cd_varint_encode(ASKED + 1, buf);
    assert_int_equal(it_write_all(fd, buf, n + 64), 0);
    m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_TOO_LARGE);
    assert_non_null(strstr(m->error->message, "max_message_bytes (2048)"));
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
    close(fd);
    // Asking for more than the daemon allows, or nothing, grants the daemon's.
    lim.max_message_bytes = 10 * MAX_MESSAGE;
    for (int k = 0; k < 2; k++) {
        const int f = it_connect_unix(d.socket);
        assert_true(f >= 0);
        m = hello_with(f, k == 0 ? &lim : NULL);
        assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME);
        assert_int_equal(m->welcome->limits->max_message_bytes, MAX_MESSAGE);
        contactd__v1__server_message__free_unpacked(m, NULL);
        close(f);
    }
    stream_one();
}

// A frame far beyond its session's limits (1500 contacts for a session of one): too much for the
// decoding arena of the worker that serves the socket. Like any frame refused for a limit, it
// gets ERROR_LIMIT carrying its seq and is counted in the session's frames_refused; the session
// goes on.
static void frame_beyond_the_decoding_arena_is_a_refused_frame(void **state) {
    (void)state;
    enum { CONTACTS = 1500, SEQ = 77 };
    cdc_conn *c =
        it_session_open(&d, false, &(cdc_hello){.limits = {.max_bodies = 1, .max_contacts = 1}});
    // Frame{seq, dt = 1e-3, contacts: CONTACTS empty ones} in its envelope, behind its prefix.
    static uint8_t msg[2 * CONTACTS + 32];
    const size_t frame_len = 2 + 9 + 2 * CONTACTS;
    size_t n = cd_varint_encode(frame_len + 3, msg);
    msg[n++] = 0x12; // ClientMessage.frame
    n += cd_varint_encode(frame_len, msg + n);
    msg[n++] = 0x08; // seq
    msg[n++] = SEQ;
    msg[n++] = 0x11; // dt
    const double dt = 1e-3;
    memcpy(msg + n, &dt, sizeof dt);
    n += sizeof dt;
    for (int i = 0; i < CONTACTS; i++) {
        msg[n++] = 0x32; // contacts, empty
        msg[n++] = 0;
    }
    assert_true(n <= MAX_MESSAGE);
    assert_int_equal(cdc_wire_send_packed(c, msg, n), 0);
    Contactd__V1__ServerMessage *m = it_session_recv(c, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT);
    assert_int_equal(m->error->seq, SEQ);
    cdc_wire_free(m);
    m = it_stats_fetch(c);
    assert_int_equal(m->stats->n_session_stats, 1);
    assert_int_equal(m->stats->session_stats[0]->frames_refused, 1);
    cdc_wire_free(m);
    cdc_conn_close(c);
    stream_one();
}

// A session granted fewer friction directions than the default (a Hello asking 2 gets 4, the
// fewest a pyramid has) solves frames that leave them out with what it was granted.
static void few_friction_directions_are_the_frames_default(void **state) {
    (void)state;
    cdc_conn *c = it_session_open(&d, false, &(cdc_hello){.limits = {.max_dirs = 2}});
    assert_int_equal(cdc_wire_welcome(c)->limits->max_friction_directions, 4);
    const int dirs = box.friction_dirs;
    box.friction_dirs = 0;
    Contactd__V1__ServerMessage *m = it_frame_exchange(c, &box, 1);
    box.friction_dirs = dirs;
    assert_true(m->result->status == CONTACTD__V1__STATUS__STATUS_OK ||
                !m->result->timing->deadline_met);
    cdc_wire_free(m);
    cdc_conn_close(c);
    stream_one();
}

// Packs m (with its length prefix) and turns the '@' of name, a string in it, into a NUL byte,
// which protobuf-c would pack only up to.
static void pack_with_nul(const ProtobufCMessage *m, const char *name, uint8_t **ret,
                          size_t *ret_len) {
    it_pack(m, ret, ret_len);
    uint8_t *at = memmem(*ret, *ret_len, name, strlen(name));
    assert_non_null(at);
    *(uint8_t *)memchr(at, '@', strlen(name)) = 0;
}

// A solver's name with a NUL byte in it is refused naming the field, not read as the name before
// the NUL: in a Hello (which may then be retried) and in a frame (the session goes on).
static void solver_name_with_nul_is_invalid(void **state) {
    (void)state;
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    Contactd__V1__ClientMessage cm = it_hello_message(&h);
    char *solvers[] = {"sap", "dantzig@x"};
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    for (int k = 0; k < 2; k++) {
        h.default_solver_name = k == 0 ? "lemke@x" : "";
        h.n_solvers = k == 0 ? 0 : 2;
        h.solvers = solvers;
        uint8_t *buf;
        size_t len;
        pack_with_nul(&cm.base, k == 0 ? "lemke@x" : "dantzig@x", &buf, &len);
        assert_int_equal(it_write_all(fd, buf, len), 0);
        free(buf);
        Contactd__V1__ServerMessage *m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
        const char *field = k == 0 ? "hello.default_solver_name: " : "hello.solvers[1]: ";
        if (strncmp(m->error->message, field, strlen(field)) != 0) {
            fail_msg("error does not name %s'%s'", field, m->error->message);
        }
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    close(fd);
    cdc_conn *c = it_session_open(&d, false, NULL);
    Contactd__V1__Frame f = CONTACTD__V1__FRAME__INIT;
    f.seq = 9;
    f.dt = 0.001;
    f.solver_name = "lemke@x";
    cm.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME;
    cm.frame = &f;
    uint8_t *buf;
    size_t len;
    pack_with_nul(&cm.base, "lemke@x", &buf, &len);
    assert_int_equal(cdc_wire_send_packed(c, buf, len), 0);
    free(buf);
    Contactd__V1__ServerMessage *m = it_session_recv(c, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
    assert_int_equal(m->error->seq, 9);
    if (strncmp(m->error->message, "frame.solver_name: ", 19) != 0) {
        fail_msg("error does not name frame.solver_name: '%s'", m->error->message);
    }
    cdc_wire_free(m);
    cdc_wire_free(it_frame_exchange(c, &box, 10));
    cdc_conn_close(c);
    stream_one();
}

// A client that says Hello and shuts its sending side still gets the answer, a Welcome or an
// Error, before the connection closes.
static void hello_then_shutdown_is_answered(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        const int fd = it_connect_unix(d.socket);
        assert_true(fd >= 0);
        Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
        h.protocol_version = 1;
        h.default_solver_name = k == 0 ? "" : "simplex"; // unknown: an Error
        Contactd__V1__ClientMessage cm = it_hello_message(&h);
        assert_int_equal(it_send(fd, &cm.base), 0);
        assert_int_equal(shutdown(fd, SHUT_WR), 0);
        Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
        assert_non_null(m);
        assert_int_equal(m->msg_case, k == 0 ? CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME
                                             : CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
        contactd__v1__server_message__free_unpacked(m, NULL);
        assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
        close(fd);
    }
    stream_one();
}

// The answers on c until the daemon closes the connection: each Result's or Error's seq is
// counted in answers[seq] (seq 1..n), Results must come in the order of their seqs, and the
// seq of the last Result is returned (0: none). Fails the test if the connection stays open.
static uint64_t answers_until_close(cdc_conn *c, int *answers, uint64_t n) {
    uint64_t last = 0;
    Contactd__V1__ServerMessage *m;
    int r;
    while ((r = cdc_wire_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m)) == 1) {
        const uint64_t q = m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT ? m->result->seq
                           : m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR ? m->error->seq
                                                                                     : 0;
        assert_true(q >= 1 && q <= n);
        answers[q]++;
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT) {
            assert_true(q > last);
            last = q;
        }
        cdc_wire_free(m);
    }
    assert_true(r < 0); // closed, not timed out
    return last;
}

// A session's client that sends frames and shuts its sending side still gets what its mode
// promises before the close. Request mode: every frame is answered (a Result, or ERROR_LIMIT for
// one over the rate or the queue), also when the client reads nothing until it has shut its side
// and the Results no longer fit in the socket (they go out after the EOF). Stream mode: the
// newest frame is solved at its tick and its Result sent.
static void frames_then_shutdown_are_answered(void **state) {
    (void)state;
    enum { REQUESTS = 400, GROUP = 4 }; // 4 frames every 5 ms: within the rate and the queue
    int answers[REQUESTS + 1] = {0};
    cdc_conn *c = it_session_open(&d, false, &(cdc_hello){.request_mode = true});
    for (uint64_t q = 1; q <= REQUESTS; q++) {
        box.seq = q;
        assert_int_equal(cdc_wire_frame_send(c, &box), 0);
        if (q % GROUP == 0) {
            usleep(5000);
        }
    }
    assert_int_equal(shutdown(cdc_conn_fd(c), SHUT_WR), 0);
    usleep(20000); // reading only a while later, as a client may; far within the 0.5 s linger
    assert_true(answers_until_close(c, answers, REQUESTS) > 0);
    for (int q = 1; q <= REQUESTS; q++) {
        if (answers[q] != 1) {
            fail_msg("request frame %d: %d answers", q, answers[q]);
        }
    }
    cdc_conn_close(c);
    // Stream mode: three frames at once, then the shutdown; the last one is answered at its tick
    // (the others too if a tick fell between them).
    memset(answers, 0, sizeof answers);
    c = it_session_open(&d, false, NULL);
    for (uint64_t q = 1; q <= 3; q++) {
        box.seq = q;
        assert_int_equal(cdc_wire_frame_send(c, &box), 0);
    }
    assert_int_equal(shutdown(cdc_conn_fd(c), SHUT_WR), 0);
    assert_int_equal(answers_until_close(c, answers, 3), 3);
    cdc_conn_close(c);
    stream_one();
}

static void undecodable_bytes_close_only_their_connection(void **state) {
    (void)state;
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    // A well-framed body that is not a ClientMessage (field 1 with a truncated length).
    const uint8_t junk[] = {6, 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(it_write_all(fd, junk, sizeof junk), 0);
    Contactd__V1__ServerMessage *m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_DECODE);
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
    close(fd);
    stream_one();
}

static void frame_before_hello_is_a_protocol_error(void **state) {
    (void)state;
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    Contactd__V1__Frame f = CONTACTD__V1__FRAME__INIT;
    f.seq = 42;
    f.dt = 0.001;
    Contactd__V1__ClientMessage cm = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    cm.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME;
    cm.frame = &f;
    assert_int_equal(it_send(fd, &cm.base), 0);
    Contactd__V1__ServerMessage *m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_PROTOCOL);
    assert_int_equal(m->error->seq, 42);
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
    close(fd);
    stream_one();
}

static void wrong_version_is_a_protocol_error(void **state) {
    (void)state;
    const int fd = it_connect_tcp(d.tcp);
    assert_true(fd >= 0);
    assert_int_equal(it_send_hello(fd, 2), 0);
    Contactd__V1__ServerMessage *m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_PROTOCOL);
    assert_non_null(strstr(m->error->message, "hello.protocol_version"));
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
    close(fd);
    stream_one();
}

static void unknown_solver_in_hello_can_be_retried(void **state) {
    (void)state;
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.default_solver_name = "simplex";
    Contactd__V1__ClientMessage cm = it_hello_message(&h);
    assert_int_equal(it_send(fd, &cm.base), 0);
    Contactd__V1__ServerMessage *m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
    assert_non_null(strstr(m->error->message, "hello.default_solver_name"));
    contactd__v1__server_message__free_unpacked(m, NULL);
    // The connection waits for a better Hello.
    h.default_solver_name = "dantzig";
    assert_int_equal(it_send(fd, &cm.base), 0);
    m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME);
    contactd__v1__server_message__free_unpacked(m, NULL);
    close(fd);
    stream_one();
}

// A Vec3 given twice in one frame: protobuf-c would solve with the last one alone, so the frame
// is refused, naming the field, and the session goes on.
static void message_field_given_twice_is_named(void **state) {
    (void)state;
    const int fd = raw_session(false);
    const cs_limits lim = {.max_bodies = box.nb, .max_contacts = box.nc, .max_dirs = 16};
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &lim), 0);
    box.seq = 7;
    static uint8_t frame[MAX_MESSAGE], twice[MAX_MESSAGE + 16], out[MAX_MESSAGE + 32];
    const ProtobufCMessage *env = &cd_codec_frame_build(&fm, &box)->base;
    const size_t n = protobuf_c_message_pack(env, frame);
    cd_codec_frame_msg_fini(&fm);
    // gravity again: {x: 1}
    static const uint8_t gx[] = {0x1a, 0x09, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    const size_t len = t_envelope_plus(frame, n, gx, sizeof gx, twice);
    size_t at = cd_varint_encode(len, out);
    memcpy(out + at, twice, len);
    assert_int_equal(it_write_all(fd, out, at + len), 0);
    Contactd__V1__ServerMessage *m = expect_error(fd, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
    assert_int_equal(m->error->seq, 7);
    if (strncmp(m->error->message, "frame.gravity: given twice", 26) != 0) {
        fail_msg("error does not name frame.gravity: '%s'", m->error->message);
    }
    contactd__v1__server_message__free_unpacked(m, NULL);
    // The same frame sent once is answered.
    at = cd_varint_encode(n, out);
    memcpy(out + at, frame, n);
    assert_int_equal(it_write_all(fd, out, at + n), 0);
    m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT);
    assert_int_equal(m->result->seq, 7);
    contactd__v1__server_message__free_unpacked(m, NULL);
    close(fd);
    stream_one();
}

// Opens raw sessions until one is refused; returns how many were admitted. fds receives them.
static int fill_sessions(int *fds, int max) {
    for (int i = 0; i < max; i++) {
        fds[i] = it_connect_unix(d.socket);
        assert_true(fds[i] >= 0);
        assert_int_equal(it_send_hello(fds[i], 1), 0);
        Contactd__V1__ServerMessage *m = it_recv(fds[i], IT_TIMEOUT_MS);
        assert_non_null(m);
        const bool busy = m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR &&
                          m->error->code == CONTACTD__V1__ERROR_CODE__ERROR_BUSY;
        assert_true(busy || m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME);
        contactd__v1__server_message__free_unpacked(m, NULL);
        if (busy) {
            assert_true(it_wait_eof(fds[i], IT_TIMEOUT_MS));
            close(fds[i]);
            return i;
        }
    }
    return max;
}

static void sessions_beyond_the_maximum_are_refused(void **state) {
    (void)state;
    // Earlier tests' connections may still be closing: retry until the table settles.
    int fds[MAX_SESSIONS + 1];
    int n = fill_sessions(fds, MAX_SESSIONS + 1);
    assert_true(n <= MAX_SESSIONS - 1); /* the streamer holds one */
    for (int tries = 0; n < MAX_SESSIONS - 1 && tries < 100; tries++) {
        n += fill_sessions(fds + n, MAX_SESSIONS + 1 - n);
    }
    assert_int_equal(n, MAX_SESSIONS - 1);
    stream_one();
    // Closing one makes room again (once the tick thread has let go of it).
    close(fds[--n]);
    int again = 0;
    for (int tries = 0; again == 0 && tries < 1000; tries++) {
        again = fill_sessions(fds + n, 1);
    }
    assert_int_equal(again, 1);
    n++;
    for (int i = 0; i < n; i++) {
        close(fds[i]);
    }
    stream_one();
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invalid_frame_named_session_goes_on),
        cmocka_unit_test(oversized_message_closes_only_its_connection),
        cmocka_unit_test(hello_lowers_max_message_bytes),
        cmocka_unit_test(frame_beyond_the_decoding_arena_is_a_refused_frame),
        cmocka_unit_test(few_friction_directions_are_the_frames_default),
        cmocka_unit_test(solver_name_with_nul_is_invalid),
        cmocka_unit_test(hello_then_shutdown_is_answered),
        cmocka_unit_test(frames_then_shutdown_are_answered),
        cmocka_unit_test(undecodable_bytes_close_only_their_connection),
        cmocka_unit_test(frame_before_hello_is_a_protocol_error),
        cmocka_unit_test(wrong_version_is_a_protocol_error),
        cmocka_unit_test(unknown_solver_in_hello_can_be_retried),
        cmocka_unit_test(message_field_given_twice_is_named),
        cmocka_unit_test(sessions_beyond_the_maximum_are_refused),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
