/* SPDX-License-Identifier: MIT */
/* Streaming sessions: every scene of tests/data streamed for 200 frames through the daemon's
 * 1 kHz loop with each pivoting solver and SAP as the session's solver. Every Result answers its
 * frame on a later tick than the previous one, with all contacts and finite forces and a
 * consistent timing record; a Result is either OK (certified) or labelled with the deadline miss
 * and its reason. How many are OK depends on the machine's load and is printed, not asserted
 * (lemke-standard, the explicit baseline, needs ~2 ms on the peg). For the box resting on a
 * plane the normal forces of every OK answer carry its weight. `contactctl stream` ends once its
 * last frame is answered or refused (not after waiting for the frames a newer one superseded),
 * and says once that a daemon killed under it closed the connection.
 * Arguments: the contactd and contactctl executables. */
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "testlib.h"

#define FRAMES 200

static const char *contactd_path, *contactctl_path;
static it_daemon d;
static char out[1 << 16], err[1 << 16];

// Starts `contactctl stream` on daemon t with args, stderr to a file in t's directory. Returns
// the pipe of its stdout.
static FILE *stream_start(const it_daemon *t, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "timeout -s KILL 30 %s stream '%s' --socket '%s' %s 2>'%s/ctl.err'",
             contactctl_path, t_data_path("box_on_plane.json"), t->socket, args, t->dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    return p;
}

// Waits for the command of stream_start; its stdout into out, its stderr into err. Returns the
// exit status (137: the 30 s watchdog killed it).
static int stream_wait(const it_daemon *t, FILE *p) {
    char path[128];
    snprintf(path, sizeof path, "%s/ctl.err", t->dir);
    return it_command_end(p, out, sizeof out, path, err, sizeof err);
}

static double num(const cJSON *o, const char *name) {
    const cJSON *v = cJSON_GetObjectItem(o, name);
    if (!cJSON_IsNumber(v)) {
        fail_msg("no number '%s' in %s (stderr: %s)", name, out, err);
    }
    return cJSON_GetNumberValue(v);
}

// A daemon ticking at 1 Hz: a stream at 2 Hz has every other frame superseded, which no Result
// answers; a request-mode stream at 100 Hz has the frames beyond the rate limit's burst refused.
// Either ends once its last frame is answered or refused, within a tick or two. (It waited 100
// of its own periods for the missing Results: 50 s for the first, which the watchdog stops.)
static void contactctl_stream_waits_for_its_last_frame(void **state) {
    (void)state;
    it_daemon slow;
    assert_int_equal(it_daemon_start(&slow, contactd_path, "[loop]\nrate_hz = 1\n", 0), 0);
    int st = stream_wait(&slow, stream_start(&slow, "--rate 2 --duration 2 --json"));
    cJSON *j = cJSON_Parse(out);
    if (st != 0 || !j) {
        fail_msg("contactctl stream exited %d: %s %s", st, out, err);
    }
    assert_int_equal(num(j, "frames"), 4);
    assert_true(num(j, "results") >= 1 && num(j, "results") < 4);
    cJSON_Delete(j);
    st = stream_wait(&slow, stream_start(&slow, "--request --rate 100 --duration 1 --json"));
    j = cJSON_Parse(out);
    if (st != 4 || !j) {
        fail_msg("contactctl stream --request exited %d: %s %s", st, out, err);
    }
    assert_int_equal(num(j, "frames"), 100);
    assert_true(num(j, "results") >= 1 && num(j, "results") < 100);
    assert_non_null(strstr(err, "rate limit"));
    cJSON_Delete(j);
    assert_int_equal(it_daemon_stop(&slow), 0);
    it_daemon_cleanup(&slow);
}

// A daemon killed under a stream: contactctl says once that it closed the connection (a send
// that fails with EPIPE, then the read that finds the end, said it twice) and exits 4.
static void contactctl_stream_says_once_the_daemon_died(void **state) {
    (void)state;
    it_daemon dying;
    assert_int_equal(it_daemon_start(&dying, contactd_path, NULL, 0), 0);
    FILE *p = stream_start(&dying, "--rate 1000 --duration 20");
    char log[1 << 14] = "";
    for (int i = 0; i < 1000 && !strstr(log, "session 1 opened"); i++) {
        usleep(10000);
        it_daemon_log(&dying, log, sizeof log);
    }
    assert_non_null(strstr(log, "session 1 opened"));
    usleep(100000); // frames flowing
    assert_int_equal(kill(dying.pid, SIGKILL), 0);
    assert_int_equal(stream_wait(&dying, p), 4);
    assert_string_equal(err, "contactctl: the daemon closed the connection\n");
    it_daemon_cleanup(&dying);
}

static int setup(void **state) {
    (void)state;
    return it_daemon_start(&d, contactd_path, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    return 0;
}

static void stream(const char *scene, const char *solver) {
    cs_scene s;
    it_scene_load(scene, &s);
    const cdc_hello hello = {.client_name = "it_stream", .solver_name = solver,
                             .limits = {.max_bodies = s.nb, .max_contacts = s.nc,
                                        .max_dirs = 8}};
    cdc_conn *c = it_session_open(&d, false, &hello);
    const bool sap = strcmp(solver, "sap") == 0;
    const bool resting = strcmp(scene, "box_on_plane.json") == 0;
    const double mg = it_scene_weight(&s);
    uint64_t first_tick = 0, last_tick = 0;
    int ok = 0;
    for (int f = 0; f < FRAMES; f++) {
        Contactd__V1__ServerMessage *m = it_frame_exchange(c, &s, 1 + (uint64_t)f);
        const Contactd__V1__Result *r = m->result;
        // Not OK only past the deadline: a fallback, or no answer before the first certified one.
        if (r->status != CONTACTD__V1__STATUS__STATUS_OK &&
            (r->timing->deadline_met || (r->status != CONTACTD__V1__STATUS__STATUS_DEADLINE &&
                                         r->status != CONTACTD__V1__STATUS__STATUS_FAILED)))
            fail_msg("%s with %s, frame %d: status %d", scene, solver, f, (int)r->status);
        it_assert_timing(r->timing);
        ok += r->status == CONTACTD__V1__STATUS__STATUS_OK;
        assert_int_equal(r->n_contacts, s.nc);
        for (size_t i = 0; i < r->n_contacts; i++)
            assert_true(isfinite(r->contacts[i]->force->x) &&
                        isfinite(r->contacts[i]->force->y) &&
                        isfinite(r->contacts[i]->force->z));
        assert_true(r->tick > last_tick);
        first_tick = f == 0 ? r->tick : first_tick;
        last_tick = r->tick;
        if (r->status == CONTACTD__V1__STATUS__STATUS_OK) {
            // SAP's near-rigid compliance gives m g / (1 + m R_n / 4), about 1.3 % below m g
            // for this box (test_sap checks the exact value); the pivoting solvers give m g.
            if (resting)
                assert_near(it_normal_force_sum(r, &s), mg, (sap ? 3e-2 : 1e-6) * mg);
        }
        cdc_wire_free(m);
    }
    print_message("# %-26s %-16s %3d/%d OK over %llu ticks\n", scene, solver, ok, FRAMES,
                  (unsigned long long)(last_tick - first_tick + 1));
    cdc_conn_close(c);
    cd_scene_json_free(&s);
}

static const char *const scenes[] = {"box_on_plane.json", "box_on_incline_stick.json",
                                     "box_on_incline_slide.json", "peg_in_hole.json",
                                     "stack_3.json"};

static void all_scenes(const char *solver) {
    for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++)
        stream(scenes[k], solver);
}

static void lemke_sessions(void **state) {
    (void)state;
    all_scenes("lemke");
}

static void lemke_structural_sessions(void **state) {
    (void)state;
    all_scenes("lemke-structural");
}

static void lemke_standard_sessions(void **state) {
    (void)state;
    all_scenes("lemke-standard");
}

static void sap_sessions(void **state) {
    (void)state;
    all_scenes("sap");
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, true, &contactd_path, &contactctl_path) < 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lemke_sessions),
        cmocka_unit_test(lemke_structural_sessions),
        cmocka_unit_test(lemke_standard_sessions),
        cmocka_unit_test(sap_sessions),
        cmocka_unit_test(contactctl_stream_waits_for_its_last_frame),
        cmocka_unit_test(contactctl_stream_says_once_the_daemon_died),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
