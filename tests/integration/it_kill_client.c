/* SPDX-License-Identifier: MIT */
/* Other clients cannot disturb a session: while one session streams in lock step (frame, result,
 * frame, ...), clients connect, say Hello, write half a frame and are killed with SIGKILL, over
 * the Unix socket and over TCP; the streaming session still gets every result, in order, with
 * correct forces, and the killed sessions are gone afterwards. A client that stops reading loses
 * its own results (counted as dropped) instead of growing the daemon's memory, and the streaming
 * session is not affected either. Arguments: the contactd and contactctl executables. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wire/codec.h"
#include "wire/scene_json.h"
#include "testlib.h"

#define FRAMES 600
#define KILL_EVERY 100

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
    // The smallest backlog allowed, so a client that stops reading soon loses results.
    return it_daemon_start(&d, contactd_path, "[server]\nmax_queued_bytes = 1024\n", 0);
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

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_survives_killed_clients),
        cmocka_unit_test(slow_reader_loses_only_its_own_results),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
