/* SPDX-License-Identifier: MIT */
/* Stats end to end: a stream-mode and a request-mode session each answer FRAMES frames; then
 * Stats asked without a session (a connection that sent no Hello, so it opens none) list both
 * sessions, each with frames solved = FRAMES = the count of its solve-time, latency and wake-up
 * histograms and of its statuses, misses by cause summing to its deadline misses, and
 * percentiles in order (p50 <= p99 <= p99.9 <= max); the daemon's totals agree with the sessions'.
 * Asking for one session id lists that one only, an unknown id none, and the request-mode
 * session's own connection (served by its worker) gets its own session only. `contactctl stats
 * --json` prints the same (parsed with cJSON), `contactctl top` draws a row per session,
 * StatsRequests refused by a connection's rate are counted (and printed by contactctl), and
 * the STATUS= line the daemon refreshes names its address and the headline.
 * Arguments: the contactd and contactctl executables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "testlib.h"

#define FRAMES 50

static const char *contactd_path, *contactctl_path;
static it_daemon d;
static cdc_conn *stream_conn, *request_conn;
static uint64_t stream_id, request_id;

static int setup(void **state) {
    (void)state;
    return it_daemon_start(&d, contactd_path, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    cdc_conn_close(stream_conn);
    cdc_conn_close(request_conn);
    it_daemon_cleanup(&d);
    return 0;
}

static void assert_in_order(const Contactd__V1__Percentiles *p, uint64_t count) {
    assert_non_null(p);
    assert_int_equal(p->count, count);
    assert_true(p->p50_ns <= p->p99_ns);
    assert_true(p->p99_ns <= p->p999_ns);
    assert_true(p->p999_ns <= p->max_ns);
}

static uint64_t statuses_sum(size_t n, Contactd__V1__StatusCount *const *st) {
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(st[i]->count > 0);
        sum += st[i]->count;
    }
    return sum;
}

static uint64_t misses_sum(const Contactd__V1__MissCounts *m) {
    assert_non_null(m);
    return m->host + m->solver + m->scheduling + m->io;
}

static void check_session(const Contactd__V1__SessionStats *ss, Contactd__V1__SessionMode mode) {
    assert_int_equal(ss->mode, mode);
    assert_int_equal(ss->frames_solved, FRAMES);
    assert_int_equal(ss->frames_received, FRAMES);
    assert_int_equal(ss->frames_refused, 0);
    assert_in_order(ss->solve, FRAMES);
    assert_true(ss->solve->max_ns > 0);
    // Every Result reached us before we asked: each was handed to the socket and timed.
    assert_in_order(ss->latency, FRAMES);
    // received <= solve start and solve end <= sent, frame by frame, and the buckets keep order.
    assert_true(ss->latency->p50_ns >= ss->solve->p50_ns);
    assert_true(ss->latency->max_ns >= ss->solve->max_ns);
    assert_in_order(ss->wake_late, FRAMES);
    assert_int_equal(statuses_sum(ss->n_statuses, ss->statuses), FRAMES);
    assert_int_equal(misses_sum(ss->misses), ss->deadline_misses);
}

static const Contactd__V1__SessionStats *find(const Contactd__V1__Stats *st, uint64_t id) {
    for (size_t i = 0; i < st->n_session_stats; i++) {
        if (st->session_stats[i]->session_id == id) {
            return st->session_stats[i];
        }
    }
    return NULL;
}

static cdc_conn *observer(void) {
    char err[256];
    cdc_conn *c = NULL;
    const cdc_hello hello = {.no_session = true};
    assert_int_equal(cdc_conn_open_unix(d.socket, &hello, (int64_t)IT_TIMEOUT_MS * 1000000, &c,
                                        err, sizeof err), 0);
    assert_null(cdc_wire_welcome(c));
    return c;
}

static Contactd__V1__ServerMessage *stats_of(cdc_conn *c, uint64_t session_id) {
    assert_int_equal(cdc_stats_request_session(c, session_id), 0);
    return it_session_recv(c, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS);
}

static void sessions_answer(void **state) {
    (void)state;
    cs_scene s;
    it_scene_load("box_on_plane.json", &s);
    const cdc_limits lim = {.max_bodies = s.nb, .max_contacts = s.nc, .max_dirs = 8};
    stream_conn = it_session_open(&d, false, &(cdc_hello){.client_name = "it_stats",
                                                         .limits = lim});
    request_conn = it_session_open(&d, false, &(cdc_hello){.client_name = "it_stats",
                                                          .limits = lim, .request_mode = true});
    stream_id = cdc_wire_welcome(stream_conn)->session_id;
    request_id = cdc_wire_welcome(request_conn)->session_id;
    for (int f = 0; f < FRAMES; f++) {
        cdc_wire_free(it_frame_exchange(stream_conn, &s, 1 + (uint64_t)f));
        cdc_wire_free(it_frame_exchange(request_conn, &s, 1 + (uint64_t)f));
    }
    cd_scene_json_free(&s);
}

static void stats_list_every_session(void **state) {
    (void)state;
    cdc_conn *c = observer();
    Contactd__V1__ServerMessage *m = stats_of(c, 0);
    const Contactd__V1__Stats *st = m->stats;
    assert_int_equal(st->sessions, 2); /* the observer opened none */
    assert_int_equal(st->n_session_stats, 2);
    check_session(find(st, stream_id), CONTACTD__V1__SESSION_MODE__MODE_STREAM);
    check_session(find(st, request_id), CONTACTD__V1__SESSION_MODE__MODE_REQUEST);
    // The daemon's totals: these two sessions are all it ever had.
    assert_int_equal(st->frames_solved, 2 * FRAMES);
    assert_in_order(st->solve, 2 * FRAMES);
    assert_in_order(st->latency, 2 * FRAMES);
    assert_int_equal(statuses_sum(st->n_statuses, st->statuses), 2 * FRAMES);
    assert_int_equal(misses_sum(st->misses), st->deadline_misses);
    assert_true(st->wake_late->count > 0);
    assert_true(st->wake_late->p50_ns <= st->wake_late->max_ns);
    cdc_wire_free(m);
    cdc_conn_close(c);
}

static void stats_of_one_session(void **state) {
    (void)state;
    cdc_conn *c = observer();
    Contactd__V1__ServerMessage *m = stats_of(c, stream_id);
    assert_int_equal(m->stats->n_session_stats, 1);
    assert_int_equal(m->stats->session_stats[0]->session_id, stream_id);
    check_session(m->stats->session_stats[0], CONTACTD__V1__SESSION_MODE__MODE_STREAM);
    assert_int_equal(m->stats->frames_solved, 2 * FRAMES);
    cdc_wire_free(m);
    m = stats_of(c, request_id + stream_id + 100); /* no such session */
    assert_int_equal(m->stats->n_session_stats, 0);
    assert_int_equal(m->stats->sessions, 2);
    cdc_wire_free(m);
    cdc_conn_close(c);
    // The request-mode session's connection is served by its worker: its own session only.
    m = stats_of(request_conn, 0);
    assert_int_equal(m->stats->n_session_stats, 1);
    check_session(m->stats->session_stats[0], CONTACTD__V1__SESSION_MODE__MODE_REQUEST);
    assert_int_equal(m->stats->frames_solved, 2 * FRAMES);
    cdc_wire_free(m);
}

// Runs contactctl with args against the daemon's socket; returns its output (static buffer).
static const char *contactctl(const char *args, int *ret_exit) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s --socket %s", contactctl_path, args, d.socket);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char out[1 << 17];
    const size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    *ret_exit = pclose(p);
    return out;
}

// A proto3 JSON uint64 (a string) or uint32 (a number).
static uint64_t json_u64(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItem(o, key);
    assert_non_null(v);
    return cJSON_IsString(v) ? strtoull(cJSON_GetStringValue(v), NULL, 10)
                             : (uint64_t)cJSON_GetNumberValue(v);
}

static void json_percentiles_in_order(const cJSON *p, uint64_t count) {
    assert_non_null(p);
    assert_int_equal(json_u64(p, "count"), count);
    assert_true(json_u64(p, "p50Ns") <= json_u64(p, "p99Ns"));
    assert_true(json_u64(p, "p99Ns") <= json_u64(p, "p999Ns"));
    assert_true(json_u64(p, "p999Ns") <= json_u64(p, "maxNs"));
}

static void contactctl_stats_json(void **state) {
    (void)state;
    int status;
    cJSON *j = cJSON_Parse(contactctl("stats --json", &status));
    assert_int_equal(status, 0);
    assert_non_null(j);
    assert_int_equal(json_u64(j, "sessions"), 2);
    assert_int_equal(json_u64(j, "framesSolved"), 2 * FRAMES);
    const cJSON *list = cJSON_GetObjectItem(j, "sessionStats");
    assert_int_equal(cJSON_GetArraySize(list), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *ss = cJSON_GetArrayItem(list, i);
        const uint64_t id = json_u64(ss, "sessionId");
        assert_true(id == stream_id || id == request_id);
        assert_int_equal(json_u64(ss, "framesSolved"), FRAMES);
        json_percentiles_in_order(cJSON_GetObjectItem(ss, "solve"), FRAMES);
        json_percentiles_in_order(cJSON_GetObjectItem(ss, "latency"), FRAMES);
    }
    cJSON_Delete(j);
    char args[64];
    snprintf(args, sizeof args, "stats --json --session %llu", (unsigned long long)request_id);
    j = cJSON_Parse(contactctl(args, &status));
    assert_int_equal(status, 0);
    list = cJSON_GetObjectItem(j, "sessionStats");
    assert_int_equal(cJSON_GetArraySize(list), 1);
    assert_int_equal(json_u64(cJSON_GetArrayItem(list, 0), "sessionId"), request_id);
    assert_string_equal(cJSON_GetStringValue(
                            cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "mode")),
                        "MODE_REQUEST");
    cJSON_Delete(j);
    // A session that is not open: the daemon's figures alone, and exit 1 to say so.
    snprintf(args, sizeof args, "stats --json --session %llu",
             (unsigned long long)(stream_id > request_id ? stream_id : request_id) + 1000);
    j = cJSON_Parse(contactctl(args, &status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "sessionStats")), 0);
    cJSON_Delete(j);
}

static void contactctl_top_draws_sessions(void **state) {
    (void)state;
    int status;
    const char *out = contactctl("top --iterations 2", &status);
    assert_int_equal(status, 0);
    // Two screens, each with the headline, the header and a row per session.
    const char *second = strstr(out, "contactd: 2 sessions, - ticks/s");
    assert_non_null(second);
    second = strstr(second + 1, "contactd: 2 sessions, ");
    assert_non_null(second);
    assert_null(strstr(second, ", - ticks/s")); /* the second screen has a rate */
    char row[64];
    snprintf(row, sizeof row, "\n%8llu stream ", (unsigned long long)stream_id);
    assert_non_null(strstr(second, row));
    snprintf(row, sizeof row, "\n%8llu request ", (unsigned long long)request_id);
    assert_non_null(strstr(second, row));
    assert_non_null(strstr(second, "SOLVED/S"));
}

// StatsRequests beyond their connection's rate get ERROR_LIMIT, and each one refused is counted
// in Stats.stats_requests_refused, which `contactctl stats` prints (text and JSON). A burst of
// REQUESTS in one write: the first 16 are answered, and whatever the rate refuses after them is
// what the count must say; how many that is depends on how fast the daemon reads, not asserted
// beyond at least one.
static void refused_stats_requests_are_counted(void **state) {
    (void)state;
    enum { REQUESTS = 500 }; // below the 1000 refusals that would close the connection
    size_t len;
    uint8_t *burst = it_stats_requests(REQUESTS, &len);
    // The daemon's count before (another test's refusals would be in it).
    int status;
    cJSON *j = cJSON_Parse(contactctl("stats --json", &status));
    assert_int_equal(status, 0);
    assert_non_null(j);
    const uint64_t before = json_u64(j, "statsRequestsRefused");
    cJSON_Delete(j);
    const int fd = it_connect_unix(d.socket);
    assert_true(fd >= 0);
    assert_int_equal(it_write_all(fd, burst, len), 0);
    int answered = 0, refused = 0;
    for (int i = 0; i < REQUESTS; i++) {
        Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
        assert_non_null(m);
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR) {
            assert_int_equal(m->error->code, CONTACTD__V1__ERROR_CODE__ERROR_LIMIT);
            refused++;
        } else {
            assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS);
            answered++;
        }
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    close(fd);
    free(burst);
    assert_true(answered >= 16 && refused >= 1);
    j = cJSON_Parse(contactctl("stats --json", &status));
    assert_int_equal(status, 0);
    assert_non_null(j);
    assert_int_equal(json_u64(j, "statsRequestsRefused"), before + (uint64_t)refused);
    cJSON_Delete(j);
    char line[64];
    snprintf(line, sizeof line, "\nstats refused      %llu\n",
             (unsigned long long)(before + (uint64_t)refused));
    const char *out = contactctl("stats", &status);
    assert_int_equal(status, 0);
    if (!strstr(out, line)) {
        fail_msg("contactctl stats does not print '%s':\n%s", line + 1, out);
    }
    // The connection counters beside it (this daemon refused and timed out none).
    if (!strstr(out, "\nconns refused      0\n") || !strstr(out, "\nhello timeouts     0\n")) {
        fail_msg("contactctl stats does not print the connection counters:\n%s", out);
    }
}

// The STATUS= refresh (the harness plays systemd): where the daemon listens and the headline.
static void status_line_refreshes(void **state) {
    (void)state;
    char dgram[1024];
    assert_int_equal(it_notify_wait(&d, "STATUS=listening on", IT_TIMEOUT_MS, dgram,
                                    sizeof dgram), 0);
    // The first refresh may predate the sessions; a later one counts both.
    if (!strstr(dgram, "; 2 sessions, ")) {
        assert_int_equal(it_notify_wait(&d, "; 2 sessions, ", IT_TIMEOUT_MS, dgram,
                                        sizeof dgram), 0);
    }
    assert_non_null(strstr(dgram, d.socket));
    assert_non_null(strstr(dgram, " ticks/s, p99 latency "));
    assert_non_null(strstr(dgram, " deadline misses in the last minute"));
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, true, &contactd_path, &contactctl_path) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sessions_answer),
        cmocka_unit_test(stats_list_every_session),
        cmocka_unit_test(stats_of_one_session),
        cmocka_unit_test(contactctl_stats_json),
        cmocka_unit_test(contactctl_top_draws_sessions),
        cmocka_unit_test(refused_stats_requests_are_counted),
        cmocka_unit_test(status_line_refreshes),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
