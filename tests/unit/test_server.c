/* SPDX-License-Identifier: MIT */
/* The server and the workers in one process (the daemon's own modules, its I/O loop on a thread
 * of this test), so that the workers' heap allocations can be counted: a session's socket, in
 * either mode, is read, decoded, validated, solved, encoded and written on its worker, and none of
 * that may allocate once the session is admitted, also when the session's solves make it move to
 * the background worker (its socket moves with it), nor may answering its StatsRequests there, or
 * refusing an invalid frame (the Error is handed to the I/O thread to log); recording such a
 * session (Hello.record) allocates nothing on the worker either: it copies
 * frames and results into the recording's ring, and the recorder thread ("contactd-rec", not
 * counted) writes the file.
 * Counted by thread name ("cd-"), so the client in this thread and the I/O thread do not count.
 * Correctness only: no duration is asserted. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "alloc_count.h"
#include "client_wire.h"
#include "solver/contact.h"
#include "wire/scene_json.h"
#include "io/server.h"
#include "service/loop.h"
#include "testlib.h"

#define FRAMES 200
#define WAIT_NS (60 * (int64_t)1000000000)

static cs_scene box;

struct daemon {
    uv_loop_t uv;
    uv_async_t stop;
    cd_config cfg;
    cd_session_table *table;
    cd_server *srv;
    cd_loop *loop;
    pthread_t io;
};

static void on_stop(uv_async_t *h) {
    struct daemon *d = h->data;
    cd_loop_stop(d->loop);
    cd_server_close(d->srv, NULL);
    uv_close((uv_handle_t *)h, NULL);
}

static void *io_main(void *arg) {
    struct daemon *d = arg;
    uv_run(&d->uv, UV_RUN_DEFAULT);
    return NULL;
}

// A daemon on a socket in /tmp whose sessions move to the background worker once a solve takes
// longer than long_solve_ns.
static void daemon_start(struct daemon *d, int64_t long_solve_ns) {
    char err[256];
    assert_int_equal(uv_loop_init(&d->uv), 0);
    assert_int_equal(uv_async_init(&d->uv, &d->stop, on_stop), 0);
    d->stop.data = d;
    assert_int_equal(cd_config_defaults(&d->cfg), 0);
    snprintf(d->cfg.socket, sizeof d->cfg.socket, "/tmp/test_server_%d.sock", (int)getpid());
    d->cfg.tcp_host[0] = '\0';
    d->cfg.realtime = false;
    snprintf(d->cfg.record_dir, sizeof d->cfg.record_dir, "/tmp");
    d->table = cd_session_table_new(4);
    assert_non_null(d->table);
    assert_int_equal(cd_server_new(&d->uv, &d->cfg, d->table, &d->srv), 0);
    const cd_loop_params lp = {.rate_hz = 1000, .workers = 1, .long_solve_ns = long_solve_ns,
                               .realtime = false, .priority = 50, .cpu = -1};
    d->loop = cd_loop_new(d->table, &lp, cd_server_wake(d->srv));
    assert_non_null(d->loop);
    assert_int_equal(cd_server_listen(d->srv, d->loop, -1, -1, err, sizeof err), 0);
    assert_int_equal(cd_loop_start(d->loop), 0);
    assert_int_equal(pthread_create(&d->io, NULL, io_main, d), 0);
}

static void daemon_stop(struct daemon *d) {
    uv_async_send(&d->stop);
    pthread_join(d->io, NULL);
    cd_server_free(d->srv);
    cd_loop_free(d->loop);
    cd_session_table_free(d->table);
    assert_int_equal(uv_loop_close(&d->uv), 0);
}

// One session (request or stream mode), recorded when record: a few exchanges first (the first
// solves and the socket's first reads are behind them), then FRAMES exchanges counted, paced at
// the tick rate, with a StatsRequest and an invalid frame every 50.
static void exchanges_allocate_nothing(int64_t long_solve_ns, bool record, bool request) {
    struct daemon d;
    daemon_start(&d, long_solve_ns);
    const cdc_hello hello = {.client_name = "test_server", .request_mode = request,
                             .limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8},
                             .record = record};
    cdc_conn *c = NULL;
    char err[256], path[512];
    assert_int_equal(cdc_conn_open_unix(d.cfg.socket, &hello, WAIT_NS, &c, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s", cdc_conn_welcome(c)->record_path);
    assert_int_equal(path[0] != '\0', record);
    for (uint64_t seq = 1; seq <= FRAMES + 5; seq++) {
        if (seq == 6) {
            t_alloc_count_threads_start("cd-");
        }
        box.seq = seq;
        assert_int_equal(cdc_wire_frame_send(c, &box), 0);
        Contactd__V1__ServerMessage *m = NULL;
        assert_int_equal(cdc_wire_recv(c, WAIT_NS, &m), 1);
        assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT);
        assert_int_equal(m->result->seq, seq);
        assert_int_equal(m->result->n_contacts, (size_t)box.nc);
        cdc_wire_free(m);
        if (seq % 50 == 0) {
            // Stats on this connection are built on the worker too: its own session only.
            assert_int_equal(cdc_stats_request(c), 0);
            assert_int_equal(cdc_wire_recv(c, WAIT_NS, &m), 1);
            assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS);
            assert_int_equal(m->stats->n_session_stats, 1);
            assert_int_equal(m->stats->session_stats[0]->frames_solved, seq);
            assert_int_equal(m->stats->session_stats[0]->solve->count, seq);
            cdc_wire_free(m);
            const double mass = box.bodies[0].mass;
            box.bodies[0].mass = -1;
            assert_int_equal(cdc_wire_frame_send(c, &box), 0);
            box.bodies[0].mass = mass;
            assert_int_equal(cdc_wire_recv(c, WAIT_NS, &m), 1);
            assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
            assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_INVALID);
            cdc_wire_free(m);
        }
        const struct timespec ms = {.tv_nsec = 1000000};
        nanosleep(&ms, NULL);
    }
    const long allocations = t_alloc_count_threads_stop();
    cdc_conn_close(c);
    daemon_stop(&d);
    if (record) {
        // Every frame and every result went into the file (a few hundred bytes each).
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_true(st.st_size > 2 * (FRAMES + 5) * 100);
        unlink(path);
    }
    // -1: counting is not available (a sanitizer build).
    if (allocations >= 0) {
        assert_int_equal(allocations, 0);
    }
}

static void request_on_foreground_worker(void **state) {
    (void)state;
    exchanges_allocate_nothing(INT64_C(1000000000), false, true);
}

static void recorded_request_allocates_nothing(void **state) {
    (void)state;
    exchanges_allocate_nothing(INT64_C(1000000000), true, true);
}

static void request_moved_to_background_worker(void **state) {
    (void)state;
    // Every solve takes longer than 1 ns: the session moves to the background worker after its
    // first solve, and its socket with it.
    exchanges_allocate_nothing(1, false, true);
}

static void stream_on_foreground_worker(void **state) {
    (void)state;
    exchanges_allocate_nothing(INT64_C(1000000000), false, false);
}

static void stream_moved_to_background_worker(void **state) {
    (void)state;
    exchanges_allocate_nothing(1, false, false);
}

int main(void) {
    char err[256];
    if (cd_scene_json_load(t_data_path("box_on_plane.json"), cs_scene_validate,
                           &box, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_on_foreground_worker),
        cmocka_unit_test(recorded_request_allocates_nothing),
        cmocka_unit_test(request_moved_to_background_worker),
        cmocka_unit_test(stream_on_foreground_worker),
        cmocka_unit_test(stream_moved_to_background_worker),
    };
    const int r = cmocka_run_group_tests(tests, NULL, NULL);
    cd_scene_json_free(&box);
    return r;
}
