/* SPDX-License-Identifier: MIT */
/* Other clients cannot disturb a session: while one session streams in lock step (frame, result,
 * frame, ...), clients connect, say Hello, write half a frame and are killed with SIGKILL, over
 * the Unix socket and over TCP; the streaming session still gets every result, in order, with
 * correct forces, and the killed sessions are gone afterwards. A client that stops reading loses
 * its own results (counted as dropped) instead of growing the daemon's memory, and the streaming
 * session is not affected either; but a client that left more than max_queued_bytes unread
 * still gets its Welcome, the Error that refuses its TCP token and the Goodbye at shutdown, after
 * those replies. Arguments: the contactd and contactctl executables. */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wire/codec.h"
#include "wire/scene_json.h"
#include "testlib.h"

#define FRAMES 600
#define KILL_EVERY 100
// The smallest backlog allowed, so a client that stops reading soon loses results.
#define MAX_QUEUED_BYTES 1024

static const char *contactd_path;
static it_daemon d;
static cs_scene box;
static double mg;
static const cs_limits box_limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8};
static const cdc_limits box_hello_limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8};

static int setup(void **state) {
    (void)state;
    it_scene_load("box_on_plane.json", &box);
    mg = it_scene_weight(&box);
    // A client filling its backlog before its Hello takes as long as the machine's load makes it.
    char ini[128];
    snprintf(ini, sizeof ini, "[server]\nmax_queued_bytes = %d\nhello_timeout_ms = 600000\n",
             MAX_QUEUED_BYTES);
    return it_daemon_start(&d, contactd_path, ini, 0);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    cd_scene_json_free(&box);
    return 0;
}

// Connects and says Hello in a child process; the child's exit status says how far it got.
static int child_connect(bool tcp) {
    const int fd = tcp ? it_connect_tcp(d.tcp) : it_connect_unix(d.socket);
    if (fd < 0 || it_send_hello(fd, 1) < 0) {
        _exit(1);
    }
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    if (!m || m->msg_case != CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME) {
        _exit(2);
    }
    contactd__v1__server_message__free_unpacked(m, NULL);
    return fd;
}

// The box frame with its length prefix, as the client library would send it.
static void pack_box(uint64_t seq, uint8_t **ret, size_t *ret_len) {
    cd_frame_msg fm = {0};
    if (cd_codec_frame_msg_init(&fm, &box_limits) < 0) {
        _exit(3);
    }
    box.seq = seq;
    it_pack(&cd_codec_frame_build(&fm, &box)->base, ret, ret_len);
    cd_codec_frame_msg_fini(&fm);
}

// A client that writes half a frame and is then killed.
static void kill_client_mid_message(bool tcp) {
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const int fd = child_connect(tcp);
        uint8_t *buf;
        size_t len;
        pack_box(1, &buf, &len);
        if (it_write_all(fd, buf, len / 2) < 0) {
            _exit(4);
        }
        raise(SIGKILL);
        _exit(5);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    // Killed by SIGKILL means it got through Hello, Welcome and the half frame.
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
        fail_msg("the killed client stopped early (exit %d)", WEXITSTATUS(st));
    }
}

static Contactd__V1__Stats *stats(cdc_conn *c, Contactd__V1__ServerMessage **ret) {
    *ret = it_stats_fetch(c);
    return (*ret)->stats;
}

// Sends frame seq and checks its result; returns whether the deadline held.
static bool lockstep(cdc_conn *c, uint64_t seq) {
    Contactd__V1__ServerMessage *m = it_frame_exchange(c, &box, seq);
    const Contactd__V1__Result *r = m->result;
    const Contactd__V1__Timing *t = r->timing;
    // On a loaded machine (or a sanitizer build) a solve may miss its deadline; that frame is
    // still answered, and labelled (a fallback, or no answer yet on the session's first frame).
    if (r->status != CONTACTD__V1__STATUS__STATUS_OK) {
        assert_false(t->deadline_met);
        assert_true(r->status == CONTACTD__V1__STATUS__STATUS_DEADLINE ||
                    r->status == CONTACTD__V1__STATUS__STATUS_FAILED);
    } else {
        assert_near(it_normal_force_sum(r, &box), mg, 1e-6 * mg);
    }
    it_assert_timing(t);
    const bool met = t->deadline_met;
    cdc_wire_free(m);
    return met;
}

static void stream_survives_killed_clients(void **state) {
    (void)state;
    const cdc_hello hello = {.client_name = "streamer", .limits = box_hello_limits};
    cdc_conn *c = it_session_open(&d, false, &hello);
    int misses = 0;
    for (uint64_t seq = 1; seq <= FRAMES; seq++) {
        if (seq % KILL_EVERY == KILL_EVERY / 2) {
            kill_client_mid_message((seq / KILL_EVERY) % 2 == 1);
        }
        misses += !lockstep(c, seq);
    }
    printf("# %d frames, %d deadline misses\n", FRAMES, misses);
    // Every killed client's session was closed: only the streamer's is left.
    Contactd__V1__ServerMessage *m;
    assert_int_equal(stats(c, &m)->sessions, 1);
    cdc_wire_free(m);
    cdc_conn_close(c);
}

static void slow_reader_loses_only_its_own_results(void **state) {
    (void)state;
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        // Streams at about the tick rate and never reads: the daemon's backlog for this client
        // hits max_queued_bytes once the socket buffer is full.
        const int fd = child_connect(false);
        const struct timespec ms = {.tv_nsec = 1000000};
        for (uint64_t seq = 1;; seq++) {
            uint8_t *buf;
            size_t len;
            pack_box(seq, &buf, &len);
            if (it_write_all(fd, buf, len) < 0) {
                _exit(6);
            }
            free(buf);
            nanosleep(&ms, NULL);
        }
    }
    const cdc_hello hello = {.client_name = "streamer", .limits = box_hello_limits};
    cdc_conn *c = it_session_open(&d, true, &hello);
    Contactd__V1__ServerMessage *m;
    const uint64_t dropped_before = stats(c, &m)->results_dropped;
    cdc_wire_free(m);
    uint64_t dropped = dropped_before;
    // Lock step until the slow reader has lost some results; a bounded number of frames.
    uint64_t seq = 1;
    for (; seq <= 20000 && dropped == dropped_before; seq++) {
        (void)lockstep(c, seq);
        if (seq % 100 == 0) {
            dropped = stats(c, &m)->results_dropped;
            cdc_wire_free(m);
        }
    }
    kill(pid, SIGKILL);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st)); /* it was still streaming, not stopped by an error */
    assert_true(dropped > dropped_before);
    printf("# slow reader: %llu results dropped while the streamer sent %llu frames\n",
           (unsigned long long)(dropped - dropped_before), (unsigned long long)seq - 1);
    // The streamer goes on as before.
    for (int i = 0; i < 50; i++) {
        (void)lockstep(c, seq++);
    }
    cdc_conn_close(c);
}

// A Hello the daemon answers with an Error naming its budget (ERROR_INVALID; the connection
// waits for a better Hello), and that Error's text, which no other test provokes.
#define BAD_BUDGET_NS (-7)
#define BAD_BUDGET_TEXT "hello.budget_ns: -7 is negative"
// Bad Hellos per write while the socket fills: the daemon handles each write in one read, and
// three Errors (counted with their write requests, a few hundred bytes each) stay below
// MAX_QUEUED_BYTES, so none is dropped while the socket takes them. At least two: each Error is
// logged just before it is sent, so once the log shows a batch, its first Error was sent.
#define BAD_BATCH 3

// Lines of the daemon's log holding needle from *off on (whole lines only, each written at
// once); *off moves past them.
static int log_count(int log_fd, off_t *off, const char *needle) {
    static char buf[1 << 16];
    const ssize_t n = pread(log_fd, buf, sizeof buf - 1, *off);
    assert_true(n >= 0);
    buf[n] = '\0';
    char *end = strrchr(buf, '\n');
    if (!end) {
        return 0;
    }
    *++end = '\0';
    *off += end - buf;
    int count = 0;
    for (const char *p = buf; (p = strstr(p, needle)); p++) {
        count++;
    }
    return count;
}

// Waits until the daemon's log, from *off on, holds n more lines with needle (*seen counts
// those so far); fails the test after IT_TIMEOUT_MS.
static void log_wait(int log_fd, off_t *off, const char *needle, int n, int *seen) {
    const int want = *seen + n;
    const struct timespec pause = {.tv_nsec = 100000};
    for (long waited_us = 0; (*seen += log_count(log_fd, off, needle)) < want;
         waited_us += 100) {
        if (waited_us > (long)IT_TIMEOUT_MS * 1000) {
            fail_msg("the daemon's log shows %d of %d lines with '%s'", *seen, want, needle);
        }
        nanosleep(&pause, NULL);
    }
}

// Sends n bad Hellos in one write (hello: one, packed), then tail (tail_len bytes, may be 0) in
// the same write, and waits until the log shows that the daemon has answered the Hellos,
// *logged counting the ones before; with a tail, until it shows tail_logged, which the daemon
// logs once it has sent the tail's answer (after the Hellos' lines: it reads them in order).
static void send_bad_hellos(int fd, const uint8_t *hello, size_t len, int n, const uint8_t *tail,
                            size_t tail_len, const char *tail_logged, int log_fd, off_t *off,
                            int *logged) {
    uint8_t *all = malloc((size_t)n * len + tail_len);
    assert_non_null(all);
    for (int i = 0; i < n; i++) {
        memcpy(all + (size_t)i * len, hello, len);
    }
    if (tail_len) {
        memcpy(all + (size_t)n * len, tail, tail_len);
    }
    assert_int_equal(it_write_all(fd, all, (size_t)n * len + tail_len), 0);
    free(all);
    if (tail_len) {
        int seen = 0;
        log_wait(log_fd, off, tail_logged, 1, &seen);
        *logged += n;
    } else {
        log_wait(log_fd, off, BAD_BUDGET_TEXT, n, logged);
    }
}

// A connection whose backlog is past max_queued_bytes, for the must-send messages to pass. Bad
// Hellos, each answered with an Error, fill the daemon's socket buffer (its send buffer, some
// 200 KiB on a Unix socket), BAD_BATCH at a time so that none is dropped meanwhile, until one
// batch's Errors add nothing to what the client could read: the socket takes no more, and what
// the daemon sends from then on waits in its own queue. More bad Hellos fill that queue past
// max_queued_bytes. Not a byte is read: reading would make room.
typedef struct backlog {
    int fd;
    int log_fd; /* the daemon's log, read from off on */
    off_t off;
    int logged; /* bad Hellos the log shows answered */
    int unread; /* bytes the client could read when the socket took no more */
} backlog;

// Connects to dm (over TCP with token, else its Unix socket) and fills the backlog; last (may be
// NULL) goes out in the same write as the Hellos that fill the queue, so the daemon reads it
// while the queue is past its limit, whatever the sockets take meanwhile, and the fill ends once
// the log shows last_logged.
static backlog backlog_fill(const it_daemon *dm, const char *token, const ProtobufCMessage *last,
                            const char *last_logged) {
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.budget_ns = BAD_BUDGET_NS;
    h.token = (char *)(token ? token : "");
    Contactd__V1__ClientMessage cm = it_hello_message(&h);
    uint8_t *hello, *tail = NULL;
    size_t len, tail_len = 0;
    it_pack(&cm.base, &hello, &len);
    if (last) {
        it_pack(last, &tail, &tail_len);
    }
    backlog b = {.log_fd = open(dm->log, O_RDONLY | O_CLOEXEC)};
    assert_true(b.log_fd >= 0);
    b.off = lseek(b.log_fd, 0, SEEK_END);
    b.fd = token ? it_connect_tcp(dm->tcp) : it_connect_unix(dm->socket);
    assert_true(b.fd >= 0);
    // A TCP receive buffer grows as data comes (up to megabytes): a fixed small one fills soon.
    const int rcvbuf = 4096;
    assert_true(!token || setsockopt(b.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) == 0);
    int unread_before;
    do {
        // A bound far beyond any socket buffer, so a daemon that answers nothing fails the test.
        assert_true(b.logged < 100000);
        unread_before = b.unread;
        send_bad_hellos(b.fd, hello, len, BAD_BATCH, NULL, 0, NULL, b.log_fd, &b.off,
                        &b.logged);
        assert_int_equal(ioctl(b.fd, FIONREAD, &b.unread), 0);
    } while (b.unread != unread_before);
    // Each Error holds at least its text, so this many fill the daemon's queue past its limit.
    send_bad_hellos(b.fd, hello, len, MAX_QUEUED_BYTES / (int)strlen(BAD_BUDGET_TEXT) + 1, tail,
                    tail_len, last_logged, b.log_fd, &b.off, &b.logged);
    free(hello);
    free(tail);
    return b;
}

// Reads the bad Hellos' Errors and returns the message after them (NULL: none came), failing
// the test unless some Errors were dropped: the backlog was reached, and as the socket takes
// nothing more until the client reads, it still was when the message after them was sent.
static Contactd__V1__ServerMessage *backlog_read(backlog *b, const char *after) {
    close(b->log_fd);
    int errors = 0;
    Contactd__V1__ServerMessage *m;
    while ((m = it_recv(b->fd, IT_TIMEOUT_MS)) &&
           m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR &&
           m->error->code == CONTACTD__V1__ERROR_CODE__ERROR_INVALID) {
        assert_non_null(strstr(m->error->message, BAD_BUDGET_TEXT));
        errors++;
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    printf("# %s after %d Errors to %d bad Hellos, %d bytes left unread before it\n",
           m ? after : "nothing", errors, b->logged, b->unread);
    assert_true(errors < b->logged);
    return m;
}

// The replies a client left unread, over max_queued_bytes, do not cost it its Welcome: it comes
// after every Error the daemon queued.
static void welcome_passes_the_backlog(void **state) {
    (void)state;
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    Contactd__V1__ClientMessage cm = it_hello_message(&h);
    // The daemon logs the session when it has sent the Welcome.
    backlog b = backlog_fill(&d, NULL, &cm.base, " opened on connection ");
    Contactd__V1__ServerMessage *m = backlog_read(&b, "Welcome");
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME);
    assert_true(m->welcome->session_id > 0);
    const uint64_t id = m->welcome->session_id;
    contactd__v1__server_message__free_unpacked(m, NULL);
    // The session is the client's: its Stats name it.
    Contactd__V1__ClientMessage sr = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    Contactd__V1__StatsRequest req = CONTACTD__V1__STATS_REQUEST__INIT;
    sr.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST;
    sr.stats_request = &req;
    assert_int_equal(it_send(b.fd, &sr.base), 0);
    m = it_recv(b.fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS);
    assert_int_equal(m->stats->n_session_stats, 1);
    assert_int_equal(m->stats->session_stats[0]->session_id, id);
    contactd__v1__server_message__free_unpacked(m, NULL);
    close(b.fd);
}

// A second daemon, for the tests that stop it or need a token (TCP Hellos must carry it), its
// backlog as small.
static it_daemon second;
static const char token[] = "token-of-the-backlog-test";

static void second_start(char *token_file) {
    const int tfd = mkstemp(token_file);
    assert_true(tfd >= 0);
    assert_int_equal(write(tfd, token, sizeof token - 1), (ssize_t)sizeof token - 1);
    close(tfd);
    char ini[256];
    snprintf(ini, sizeof ini,
             "[server]\nmax_queued_bytes = %d\nhello_timeout_ms = 600000\nauth_token_file = %s\n"
             "tcp_allow_any_local_user = no\n",
             MAX_QUEUED_BYTES, token_file);
    assert_int_equal(it_daemon_start(&second, contactd_path, ini, 0), 0);
}

// The Error that refuses a TCP Hello's token ends the connection: it comes after every Error
// the daemon queued, and then the close.
static void token_refusal_passes_the_backlog(void **state) {
    (void)state;
    char token_file[] = "/tmp/contactd-token-XXXXXX";
    second_start(token_file);
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.token = "token-of-the-backlog-tesT";
    Contactd__V1__ClientMessage cm = it_hello_message(&h);
    backlog b = backlog_fill(&second, token, &cm.base, "TCP Hello refused");
    Contactd__V1__ServerMessage *m = backlog_read(&b, "the refusal");
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
    assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_DENIED);
    assert_non_null(strstr(m->error->message, "hello.token"));
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(b.fd, IT_TIMEOUT_MS));
    close(b.fd);
    assert_int_equal(it_daemon_stop(&second), 0);
    it_daemon_cleanup(&second);
    unlink(token_file);
}

// The Goodbye at shutdown comes after every Error the daemon queued, and then the close. The
// client reads once the daemon has logged that it queued the Goodbyes (reading before would make
// room in the queue), within the LINGER_MS it has to take them.
static void goodbye_passes_the_backlog(void **state) {
    (void)state;
    char token_file[] = "/tmp/contactd-token-XXXXXX";
    second_start(token_file);
    backlog b = backlog_fill(&second, NULL, NULL, NULL);
    assert_int_equal(kill(second.pid, SIGTERM), 0);
    int sent = 0;
    log_wait(b.log_fd, &b.off, "Goodbye queued for", 1, &sent);
    Contactd__V1__ServerMessage *m = backlog_read(&b, "Goodbye");
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE);
    contactd__v1__server_message__free_unpacked(m, NULL);
    assert_true(it_wait_eof(b.fd, IT_TIMEOUT_MS));
    close(b.fd);
    assert_int_equal(it_daemon_wait_exit(&second, IT_TIMEOUT_MS), 0);
    assert_int_equal(second.exit_status, 0);
    it_daemon_cleanup(&second);
    unlink(token_file);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_survives_killed_clients),
        cmocka_unit_test(slow_reader_loses_only_its_own_results),
        cmocka_unit_test(welcome_passes_the_backlog),
        cmocka_unit_test(token_refusal_passes_the_backlog),
        cmocka_unit_test(goodbye_passes_the_backlog),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
