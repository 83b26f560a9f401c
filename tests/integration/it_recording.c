/* SPDX-License-Identifier: MIT */
/* Recordings end to end: sessions recorded by the real daemon (Hello.record; request and stream
 * mode, several scenes so the warm start carries from one answer to the next) are replayed by
 * `contactctl replay` with zero differences, bit for bit, and a replay with another solver
 * reports its differences in force, and frames this build refuses are listed in its --json
 * (refusedFrames); `contactctl record` records a request session and a stream
 * faster than the ticks (its superseded frames left out of the replay too); a daemon with
 * recording off refuses a Hello that asks for it; a recording's buffer, rounded up to a power of
 * two, is what its session is counted for; `contactctl convert`
 * turns a scene into delimited Frames and back (solving to the same answer), a recording into
 * scene JSON and a scene into an FCLIB problem `contactctl fclib` solves; the exit statuses are
 * the documented ones, every command's --help has an example, and --version names the protocol.
 * A solve the daemon cut at its deadline may be reported as not reproducible (a loaded machine);
 * every other frame must be identical.
 * Arguments: the contactd and contactctl executables. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "wire/framing.h"
#include "wire/scene_json.h"
#include "solver/contact.h"
#include "testlib.h"

static const char *contactd_path, *contactctl_path;
static it_daemon d;
static char dir[64];           /* the daemon's [record] dir and the tests' scratch files */
static char request_rec[512];  /* the request-mode session's recording */
static char out[1 << 20], err[1 << 16];

static const char *const scenes[] = {"box_on_plane.json", "box_on_incline_slide.json",
                                     "stack_3.json", "box_on_incline_stick.json"};
#define PER_SCENE 5

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/contactd-it-rec-XXXXXX");
    if (!mkdtemp(dir)) {
        return -1;
    }
    char ini[256];
    snprintf(ini, sizeof ini, "[record]\ndir = %s\n[session]\nmax_budget_us = 100000\n", dir);
    return it_daemon_start(&d, contactd_path, ini, 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    (void)nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return 0;
}

// Runs contactctl with args (a shell fragment); stdout into out, stderr into err. Returns the
// exit status.
static int run(const char *args) {
    char cmd[2048], errpath[128];
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    snprintf(cmd, sizeof cmd, "%s %s 2>'%s'", contactctl_path, args, errpath);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    return it_command_end(p, out, sizeof out, errpath, err, sizeof err);
}

static double num(const cJSON *o, const char *name) {
    const cJSON *v = cJSON_GetObjectItem(o, name);
    if (!cJSON_IsNumber(v)) {
        fail_msg("no number '%s' in %s", name, out);
    }
    return cJSON_GetNumberValue(v);
}

// `contactctl replay path [extra] --json`, its summary parsed; *ret_exit its exit status. The
// recorder writes the file's end a few milliseconds after the session closed: until then the
// summary says complete = false, and the replay is run again.
static cJSON *replay(const char *path, const char *extra, int *ret_exit) {
    char args[1024];
    snprintf(args, sizeof args, "replay '%s' %s --json", path, extra);
    for (int attempt = 0;; attempt++) {
        *ret_exit = run(args);
        cJSON *j = cJSON_Parse(out);
        if (!j) {
            fail_msg("replay printed no JSON (exit %d): %s %s", *ret_exit, out, err);
        }
        if (cJSON_IsTrue(cJSON_GetObjectItem(j, "complete")) || attempt == 200) {
            return j;
        }
        cJSON_Delete(j);
        usleep(20000);
    }
}

// Records a session of every scene PER_SCENE times in mode request or stream, and checks its
// replay: every frame solved, none different; identical unless the daemon missed the deadline.
static void record_and_replay(bool request, char *ret_path, size_t len) {
    cs_scene s[sizeof scenes / sizeof scenes[0]];
    cdc_limits lim = {.max_dirs = 8};
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        it_scene_load(scenes[i], &s[i]);
        lim.max_bodies = s[i].nb > lim.max_bodies ? s[i].nb : lim.max_bodies;
        lim.max_contacts = s[i].nc > lim.max_contacts ? s[i].nc : lim.max_contacts;
    }
    // A generous budget: a deadline cut is a loaded machine's, not what this test is about.
    const cdc_hello hello = {.client_name = "it_record", .solver_name = "lemke", .limits = lim,
                             .request_mode = request, .budget_ns = 50000000, .record = true};
    cdc_conn *c = it_session_open(&d, false, &hello);
    const char *path = cdc_conn_welcome(c)->record_path;
    assert_non_null(path);
    assert_true(strncmp(path, dir, strlen(dir)) == 0);
    snprintf(ret_path, len, "%s", path);
    uint64_t seq = 1;
    for (int k = 0; k < PER_SCENE; k++) {
        for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
            Contactd__V1__ServerMessage *m = it_frame_exchange(c, &s[i], seq++);
            cdc_wire_free(m);
        }
    }
    cdc_conn_close(c);
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        cd_scene_json_free(&s[i]);
    }
    int st;
    cJSON *j = replay(ret_path, "", &st);
    const double n = (double)(PER_SCENE * (sizeof scenes / sizeof scenes[0]));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "complete")));
    assert_int_equal(num(j, "solved"), n);
    if (num(j, "different") != 0) {
        fail_msg("the replay differs from the recording: %s", out);
    }
    assert_int_equal(num(j, "identical") + num(j, "deadline"), n);
    assert_true(num(j, "identical") >= 1);
    assert_int_equal(num(j, "recordsDropped"), 0);
    assert_int_equal(num(j, "resultsMissing"), 0);
    assert_int_equal(num(j, "superseded"), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "differences")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "deadlineFrames")),
                     num(j, "deadline"));
    assert_int_equal(st, num(j, "deadline") == 0 ? 0 : 1);
    cJSON_Delete(j);
}

static void request_session_replays_bit_for_bit(void **state) {
    (void)state;
    record_and_replay(true, request_rec, sizeof request_rec);
}

static void stream_session_replays_bit_for_bit(void **state) {
    (void)state;
    char path[512];
    record_and_replay(false, path, sizeof path);
}

// Another solver answers differently, and replay says where: forces, named field by field.
static void another_solver_differs(void **state) {
    (void)state;
    int st;
    cJSON *j = replay(request_rec, "--solver sap", &st);
    assert_int_equal(st, 1);
    assert_true(num(j, "different") >= 1);
    assert_true(num(cJSON_GetObjectItem(j, "differencesByKind"), "force") >= 1);
    const cJSON *list = cJSON_GetObjectItem(j, "differences");
    bool force = false;
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(e, "kind"));
        const char *field = cJSON_GetStringValue(cJSON_GetObjectItem(e, "field"));
        assert_non_null(field);
        if (strcmp(kind, "force") == 0 && strstr(field, "contacts[")) {
            force = true;
            assert_string_not_equal(cJSON_GetStringValue(cJSON_GetObjectItem(e, "recorded")),
                                    cJSON_GetStringValue(cJSON_GetObjectItem(e, "replayed")));
        }
    }
    assert_true(force);
    cJSON_Delete(j);
    // The text form names each difference too.
    char args[1024];
    snprintf(args, sizeof args, "replay '%s' --solver sap", request_rec);
    assert_int_equal(run(args), 1);
    assert_non_null(strstr(out, "force: contacts[0]"));
    assert_non_null(strstr(out, "different"));
}

static size_t file_read(const char *path, uint8_t *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    const size_t n = fread(buf, 1, cap, f);
    assert_true(n < cap);
    fclose(f);
    return n;
}

static void file_write(const char *path, const uint8_t *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

// A recording cut in the middle (the daemon killed while writing) is replayed up to the entry
// the cut is in, and the summary names that entry and the byte it starts at: the file cut
// there replays the same frames and is whole. The cuts are placed inside the middle entry
// (after its first byte, and before its last), never between two entries, where the file would
// read as one still being written. A cut file exits 3 (its frames agree), and says so in text
// too; so does the one cut between entries, which lacks the session's end as much.
static void truncated_recording_replays_its_prefix(void **state) {
    (void)state;
    static uint8_t buf[1 << 20];
    const size_t n = file_read(request_rec, buf, sizeof buf);
    // The entry holding byte n / 2: its start, its number (the header's is 1) and its end.
    size_t start = 0, end = 0, record = 0;
    while (end <= n / 2) {
        uint64_t len;
        start = end;
        const int used = cd_varint_decode(buf + start, n - start, &len);
        assert_true(used > 0 && start + (size_t)used + len <= n);
        end = start + (size_t)used + len;
        record++;
    }
    char cut[128], prefix[128], args[1024];
    snprintf(cut, sizeof cut, "%s/cut.cdrec", dir);
    snprintf(prefix, sizeof prefix, "%s/prefix.cdrec", dir);
    double solved = -1;
    const size_t cuts[] = {start + 1, end - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        file_write(cut, buf, cuts[i]);
        snprintf(args, sizeof args, "replay '%s' --json", cut);
        const int st = run(args);
        cJSON *j = cJSON_Parse(out);
        if (!j) {
            fail_msg("replay of a cut file printed no JSON (exit %d): %s", st, err);
        }
        assert_int_equal(st, num(j, "deadline") == 0 ? 3 : 1);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
        assert_false(cJSON_IsTrue(cJSON_GetObjectItem(j, "complete")));
        assert_int_equal(num(j, "truncatedAtRecord"), record);
        assert_int_equal(num(j, "truncatedAtByte"), start);
        assert_true(solved < 0 || num(j, "solved") == solved);
        solved = num(j, "solved");
        assert_true(solved >= 1 && solved < PER_SCENE * 4);
        assert_int_equal(num(j, "different"), 0);
        assert_non_null(strstr(err, "truncated"));
        cJSON_Delete(j);
    }
    file_write(prefix, buf, start);
    snprintf(args, sizeof args, "replay '%s' --json", prefix);
    const int pst = run(args);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")));
    assert_int_equal(num(j, "solved"), solved);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(j, "complete")));
    // Without its end the file is as incomplete as the cut one, and exits alike.
    assert_int_equal(pst, num(j, "deadline") == 0 ? 3 : 1);
    cJSON_Delete(j);
    snprintf(args, sizeof args, "replay '%s'", cut);
    run(args);
    assert_non_null(strstr(out, "frames solved"));
    assert_non_null(strstr(out, "truncated"));
    // Cut inside the header: nothing to replay, and the file is told to be a cut recording, not
    // something else.
    uint64_t header_len;
    const int used = cd_varint_decode(buf, n, &header_len);
    assert_true(used > 0);
    file_write(cut, buf, (size_t)used + header_len / 2);
    snprintf(args, sizeof args, "replay '%s' --json", cut);
    assert_int_equal(run(args), 3);
    if (!strstr(err, "message 1 (byte 0): the file ends inside it (truncated)")) {
        fail_msg("replay of a file cut inside its header: %s", err);
    }
}

// Writes the request session's recording to path with edit applied to each entry.
static void rewrite_recording(const char *path, void (*edit)(Contactd__V1__RecordEntry *e)) {
    static uint8_t buf[1 << 20], rewritten[1 << 20];
    const size_t n = file_read(request_rec, buf, sizeof buf);
    size_t off = 0, w = 0;
    while (off < n) {
        uint64_t len;
        const int used = cd_varint_decode(buf + off, n - off, &len);
        assert_true(used > 0 && off + (size_t)used + len <= n);
        Contactd__V1__RecordEntry *e =
            contactd__v1__record_entry__unpack(NULL, len, buf + off + used);
        assert_non_null(e);
        off += (size_t)used + len;
        edit(e);
        const size_t size = contactd__v1__record_entry__get_packed_size(e);
        assert_true(w + CD_VARINT_MAX + size <= sizeof rewritten);
        w += cd_varint_encode(size, rewritten + w);
        w += contactd__v1__record_entry__pack(e, rewritten + w);
        contactd__v1__record_entry__free_unpacked(e, NULL);
    }
    file_write(path, rewritten, w);
}

// The request session's recording rewritten by edit into dir/name (that path in ret_path, len
// bytes) and replayed with extra: a difference (exit status 1), whose summary is returned.
static cJSON *replay_rewritten(const char *name, void (*edit)(Contactd__V1__RecordEntry *e),
                               const char *extra, char *ret_path, size_t len) {
    snprintf(ret_path, len, "%s/%s", dir, name);
    rewrite_recording(ret_path, edit);
    int st;
    cJSON *j = replay(ret_path, extra, &st);
    assert_int_equal(st, 1);
    return j;
}

static void mark_missed(Contactd__V1__RecordEntry *e) {
    if (e->entry_case == CONTACTD__V1__RECORD_ENTRY__ENTRY_SERVER &&
        e->server->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT) {
        assert_non_null(e->server->result->timing);
        e->server->result->timing->deadline_met = false;
    }
}

// A frame whose recorded solve missed its deadline lists its differing fields apart, in the
// text and in --json alike (deadlineDifferences): the recording's Results marked as missed,
// replayed with another solver.
static void deadline_frames_list_their_differences(void **state) {
    (void)state;
    char missed[128], args[1024];
    cJSON *j = replay_rewritten("missed.cdrec", mark_missed, "--solver sap", missed,
                                sizeof missed);
    const int frames = cJSON_GetArraySize(cJSON_GetObjectItem(j, "deadlineFrames"));
    const int fields = cJSON_GetArraySize(cJSON_GetObjectItem(j, "deadlineDifferences"));
    assert_true(frames >= 1);
    assert_int_equal(frames, num(j, "deadline"));
    assert_true(fields >= frames);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "differences")), 0);
    cJSON_Delete(j);
    // The text: each such frame's "N fields differ", then its N fields, indented.
    snprintf(args, sizeof args, "replay '%s' --solver sap", missed);
    assert_int_equal(run(args), 1);
    int said = 0, listed = 0, headers = 0;
    for (const char *line = out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
        const char *differ = strstr(line, " fields differ)");
        const char *eol = strchr(line, '\n');
        if (differ && (!eol || differ < eol)) {
            const char *count = differ;
            while (count > line && count[-1] >= '0' && count[-1] <= '9') {
                count--;
            }
            said += atoi(count);
            headers++;
        } else if (strncmp(line, "  ", 2) == 0) {
            listed++;
        }
    }
    assert_int_equal(headers, frames);
    assert_int_equal(said, fields);
    assert_int_equal(listed, fields);
}

static void zero_dt(Contactd__V1__RecordEntry *e) {
    if (e->entry_case == CONTACTD__V1__RECORD_ENTRY__ENTRY_CLIENT &&
        e->client->msg_case == CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME) {
        e->client->frame->dt = 0;
    }
}

// A recorded frame this build refuses (only a build other than the recording daemon's gets
// there; here every frame's dt made 0) is a difference, and --json lists it in refusedFrames,
// with the field the refusal names, rather than in a line of text that would spoil the JSON.
static void refused_frames_stay_in_the_json(void **state) {
    (void)state;
    char refused[128], args[1024];
    cJSON *j = replay_rewritten("refused.cdrec", zero_dt, "", refused, sizeof refused);
    const cJSON *frames = cJSON_GetObjectItem(j, "refusedFrames");
    assert_true(num(j, "solved") >= 1);
    assert_int_equal(cJSON_GetArraySize(frames), num(j, "solved"));
    assert_int_equal(num(j, "different"), num(j, "solved"));
    const cJSON *first = cJSON_GetArrayItem(frames, 0);
    assert_true(num(first, "seq") >= 1 && num(first, "record") >= 2);
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(first, "error"));
    if (!why || !strstr(why, "dt")) {
        fail_msg("a refused frame's error: %s", why ? why : "(none)");
    }
    cJSON_Delete(j);
    snprintf(args, sizeof args, "replay '%s'", refused);
    assert_int_equal(run(args), 1);
    assert_non_null(strstr(out, "the frame is refused here: dt"));
}

// contactctl record: a stream the daemon records, replayed without a difference.
static void contactctl_record_command(void **state) {
    (void)state;
    char args[1024];
    snprintf(args, sizeof args, "record '%s' --socket '%s' --request --budget 50000 --rate 200 "
             "--duration 0.1 --json", t_data_path("box_on_plane.json"), d.socket);
    const int st = run(args);
    cJSON *j = cJSON_Parse(out);
    if (!j) {
        fail_msg("record printed no JSON (exit %d): %s", st, err);
    }
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(j, "recordPath"));
    assert_non_null(path);
    char rec[512];
    snprintf(rec, sizeof rec, "%s", path);
    const double frames = num(j, "results");
    cJSON_Delete(j);
    int rst;
    j = replay(rec, "", &rst);
    assert_int_equal(num(j, "solved"), frames);
    assert_int_equal(num(j, "different"), 0);
    cJSON_Delete(j);
    // A stream faster than the ticks: the frames a newer one superseded before its tick were
    // never solved, and the replay leaves them out too; the rest are reproduced.
    snprintf(args, sizeof args, "record '%s' --socket '%s' --budget 50000 --rate 2000 "
             "--duration 0.1 --json", t_data_path("stack_3.json"), d.socket);
    const int sst = run(args);
    j = cJSON_Parse(out);
    if (!j) {
        fail_msg("record printed no JSON (exit %d): %s", sst, err);
    }
    snprintf(rec, sizeof rec, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(j, "recordPath")));
    const double sent = num(j, "frames"), answered = num(j, "results");
    cJSON_Delete(j);
    j = replay(rec, "", &rst);
    if (num(j, "different") != 0) {
        fail_msg("the replay differs from the recording: %s", out);
    }
    assert_int_equal(num(j, "solved"), answered);
    assert_int_equal(num(j, "solved") + num(j, "superseded") + num(j, "unanswered"), sent);
    assert_int_equal(num(j, "recordsDropped"), 0);
    cJSON_Delete(j);
}

// A daemon with recording off refuses a Hello that asks for it, naming the field and the key.
static void record_off_refuses_the_hello(void **state) {
    (void)state;
    it_daemon off;
    assert_int_equal(it_daemon_start(&off, contactd_path, "[record]\ndir = off\n", 0), 0);
    const cdc_hello hello = {.client_name = "it_record", .record = true};
    cdc_conn *c = NULL;
    char msg[512];
    const int r = cdc_conn_open_unix(off.socket, &hello, (int64_t)IT_TIMEOUT_MS * 1000000, &c,
                                     msg, sizeof msg);
    assert_int_equal(r, -EINVAL);
    assert_non_null(strstr(msg, "hello.record"));
    assert_non_null(strstr(msg, "[record] dir = off"));
    // Without record, the same daemon opens the session, unrecorded.
    const cdc_hello plain = {.client_name = "it_record"};
    assert_int_equal(cdc_conn_open_unix(off.socket, &plain, (int64_t)IT_TIMEOUT_MS * 1000000, &c,
                                        msg, sizeof msg), 0);
    assert_string_equal(cdc_conn_welcome(c)->record_path, "");
    cdc_conn_close(c);
    assert_int_equal(it_daemon_stop(&off), 0);
    it_daemon_cleanup(&off);
}

// The recording's buffer is what the session holds for it: [record] buffer_kb rounded up to a
// power of two (65 KiB: a 128 KiB ring), counted so in Welcome.workspace_bytes (the memory
// budget's count) and said so in the file's RecordHeader.buffer_bytes.
static void recording_buffer_is_counted_as_made(void **state) {
    (void)state;
    enum { RING = 128 << 10 };
    it_daemon odd;
    char ini[128];
    snprintf(ini, sizeof ini, "[record]\ndir = %s\nbuffer_kb = 65\n", dir);
    assert_int_equal(it_daemon_start(&odd, contactd_path, ini, 0), 0);
    uint64_t bytes[2];
    char path[512] = "";
    for (int k = 0; k < 2; k++) {
        cdc_conn *c = NULL;
        char msg[512];
        const cdc_hello hello = {.client_name = "it_record", .record = k == 1};
        assert_int_equal(cdc_conn_open_unix(odd.socket, &hello, (int64_t)IT_TIMEOUT_MS * 1000000,
                                            &c, msg, sizeof msg),
                         0);
        bytes[k] = cdc_wire_welcome(c)->workspace_bytes;
        snprintf(path, sizeof path, "%s", cdc_wire_welcome(c)->record_path);
        cdc_conn_close(c);
    }
    assert_int_equal(bytes[1] - bytes[0], RING);
    assert_int_equal(it_daemon_stop(&odd), 0);
    it_daemon_cleanup(&odd);
    // The daemon has stopped: its recorder wrote and closed the file. Its first entry is the
    // header.
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    uint64_t len;
    const int used = cd_varint_decode(buf, n, &len);
    assert_true(used > 0 && (size_t)used + len <= n);
    Contactd__V1__RecordEntry *e = contactd__v1__record_entry__unpack(NULL, len, buf + used);
    assert_non_null(e);
    assert_int_equal(e->entry_case, CONTACTD__V1__RECORD_ENTRY__ENTRY_HEADER);
    assert_int_equal(e->header->buffer_bytes, RING);
    contactd__v1__record_entry__free_unpacked(e, NULL);
}

// Scene JSON -> frames -> JSON solves to the same answer; a recording -> JSON holds its frames;
// a scene -> FCLIB is a problem contactctl fclib solves; what cannot convert says so.
static void convert_round_trips(void **state) {
    (void)state;
    char args[2048], frames[128], back[128], fcl[128], recjson[128];
    const char *box = t_data_path("box_on_plane.json");
    snprintf(frames, sizeof frames, "%s/box.frames", dir);
    snprintf(back, sizeof back, "%s/box.json", dir);
    snprintf(fcl, sizeof fcl, "%s/box.hdf5", dir);
    snprintf(recjson, sizeof recjson, "%s/rec.json", dir);
    snprintf(args, sizeof args, "convert '%s' '%s'", box, frames);
    assert_int_equal(run(args), 0);
    snprintf(args, sizeof args, "convert '%s' '%s'", frames, back);
    assert_int_equal(run(args), 0);
    snprintf(args, sizeof args, "solve '%s' --json", box);
    assert_int_equal(run(args), 0);
    cJSON *a = cJSON_Parse(out);
    snprintf(args, sizeof args, "solve '%s' --json", back);
    assert_int_equal(run(args), 0);
    cJSON *b = cJSON_Parse(out);
    assert_non_null(a);
    assert_non_null(b);
    // Timing aside, the same Result.
    cJSON_DeleteItemFromObject(a, "timing");
    cJSON_DeleteItemFromObject(b, "timing");
    assert_true(cJSON_Compare(a, b, true));
    cJSON_Delete(a);
    cJSON_Delete(b);
    // The output is never overwritten: a usage error.
    snprintf(args, sizeof args, "convert '%s' '%s'", box, frames);
    assert_int_equal(run(args), 2);
    assert_non_null(strstr(err, "exists"));
    // A recording's frames, as a JSON array (request_session_replays_bit_for_bit ran first).
    snprintf(args, sizeof args, "convert '%s' '%s'", request_rec, recjson);
    assert_int_equal(run(args), 0);
    {
        FILE *f = fopen(recjson, "r");
        assert_non_null(f);
        const size_t n = fread(out, 1, sizeof out - 1, f);
        out[n] = '\0';
        fclose(f);
        cJSON *arr = cJSON_Parse(out);
        assert_true(cJSON_IsArray(arr));
        assert_int_equal(cJSON_GetArraySize(arr), PER_SCENE * 4);
        cJSON_Delete(arr);
    }
    // FCLIB: the box's step, 4 contacts and 6 dofs, solved by SAP.
    snprintf(args, sizeof args, "convert '%s' '%s'", box, fcl);
    assert_int_equal(run(args), 0);
    snprintf(args, sizeof args, "fclib '%s' --json", fcl);
    assert_int_equal(run(args), 0);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    assert_int_equal(num(j, "contacts"), 4);
    assert_int_equal(num(j, "dofs"), 6);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")), "converged");
    // M v = H r + f holds to rounding: M, H and f are one consistent step.
    assert_true(num(j, "residualMomentum") < 1e-9);
    cJSON_Delete(j);
    // One FCLIB problem per file: a recording of many frames does not fit (a data error); an
    // unknown --to is a usage error.
    snprintf(args, sizeof args, "convert '%s' '%s/many.hdf5'", request_rec, dir);
    assert_int_equal(run(args), 3);
    assert_non_null(strstr(err, "an FCLIB file holds one problem"));
    snprintf(args, sizeof args, "convert '%s' '%s/x.bin' --to xml", box, dir);
    assert_int_equal(run(args), 2);
    // FCLIB holds no geometry: no frames come from it (a data error).
    snprintf(args, sizeof args, "convert '%s' '%s/x.json'", fcl, dir);
    assert_int_equal(run(args), 3);
    assert_non_null(strstr(err, "cannot become frames"));
}

static void exit_statuses_and_help(void **state) {
    (void)state;
    char args[1024];
    static const char *const cmds[] = {"solve", "bench", "send", "stream", "stats", "top",
                                       "fclib", "record", "replay", "convert"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        assert_int_equal(run(args), 0);
        assert_non_null(strstr(out, "Example:"));
        assert_non_null(strstr(out, cmds[i]));
    }
    assert_int_equal(run("--version"), 0);
    assert_non_null(strstr(out, "protocol 1"));
    assert_int_equal(run("--help"), 0);
    assert_non_null(strstr(out, "Exit status:"));
    assert_int_equal(run("no-such-command"), 2);
    assert_int_equal(run("replay"), 2);
    // A file that is not a recording, a missing one: data errors.
    snprintf(args, sizeof args, "replay '%s'", t_data_path("box_on_plane.json"));
    assert_int_equal(run(args), 3);
    assert_non_null(strstr(err, "not a contactd recording"));
    snprintf(args, sizeof args, "solve '%s/none.json'", dir);
    assert_int_equal(run(args), 3);
    // A directory says so (read(2)'s EISDIR, not an I/O error).
    static const char *const reads[] = {"solve", "replay", "convert"};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        snprintf(args, sizeof args, "%s '%s' %s", reads[i], dir,
                 strcmp(reads[i], "convert") == 0 ? "/dev/null/none.json" : "");
        assert_int_equal(run(args), 3);
        if (!strstr(err, "Is a directory")) {
            fail_msg("contactctl %s: %s", args, err);
        }
    }
    // A timeout of a day waits for the answer; a longer one is refused (its deadline in
    // nanoseconds overflowed, and the answer was late "within -1 ms").
    snprintf(args, sizeof args, "stats --socket '%s' --timeout 86400000", d.socket);
    assert_int_equal(run(args), 0);
    // 0 is no limit (it was refused, as below the range).
    snprintf(args, sizeof args, "stats --socket '%s' --timeout 0", d.socket);
    assert_int_equal(run(args), 0);
    snprintf(args, sizeof args, "stats --socket '%s' --timeout 9223372036854775807", d.socket);
    assert_int_equal(run(args), 2);
    assert_non_null(strstr(err, "--timeout"));
    // No daemon there: a daemon error.
    snprintf(args, sizeof args, "send '%s' --socket '%s/none.sock'",
             t_data_path("box_on_plane.json"), dir);
    assert_int_equal(run(args), 4);
}

// The set of --options named in text[0, len), as " --a --b " (each once; --help left out).
static void options_named(const char *text, size_t len, char *ret, size_t cap) {
    snprintf(ret, cap, " ");
    for (const char *p = text; (p = strstr(p, "--")) && p < text + len;) {
        const char *q = p + 2;
        while ((*q >= 'a' && *q <= 'z') || *q == '-') {
            q++;
        }
        char name[64];
        snprintf(name, sizeof name, " %.*s ", (int)(q - p), p);
        if (strcmp(name, " --help ") != 0 && !strstr(ret, name)) {
            strncat(ret, name + 1, cap - strlen(ret) - 1);
        }
        p = q;
    }
}

// Whether two " --a --b " sets hold the same options.
static bool same_options(const char *a, const char *b) {
    char name[64];
    for (int k = 0; k < 2; k++) {
        const char *x = k ? b : a, *y = k ? a : b;
        for (const char *p = x; (p = strstr(p, "--"));) {
            const size_t n = strcspn(p, " ");
            snprintf(name, sizeof name, " %.*s ", (int)n, p);
            if (!strstr(y, name)) {
                return false;
            }
            p += n;
        }
    }
    return true;
}

// Every command's usage, in `contactctl COMMAND --help` and in `contactctl --help`, names
// exactly the options the command takes: each option of the general help's option list is
// given to each command (with operands that cannot be read, or a socket that does not exist, so
// nothing runs), and the ones it refuses as not its own are told apart from the rest.
static void help_names_the_options_taken(void **state) {
    (void)state;
    static const char *const cmds[] = {"solve", "bench", "send", "stream", "stats", "top",
                                       "fclib", "record", "replay", "convert"};
    static char general[sizeof out];
    assert_int_equal(run("--help"), 0);
    snprintf(general, sizeof general, "%s", out);
    // The options: the "  --name" lines of the list, with a value when an upper-case word
    // follows the name.
    const char *list = strstr(general, "\nOptions:\n");
    assert_non_null(list);
    char all[64][32];
    bool valued[64];
    int nall = 0;
    for (const char *line = list + 1; (line = strchr(line, '\n')) && nall < 64;) {
        line++;
        const char *dash = strncmp(line, "  -h, ", 6) == 0 ? line + 6 : line + 2;
        if (strncmp(line, "  ", 2) != 0 || strncmp(dash, "--", 2) != 0) {
            continue;
        }
        const size_t n = strcspn(dash, " \n");
        snprintf(all[nall], sizeof all[nall], "%.*s", (int)n, dash);
        valued[nall] = dash[n] == ' ' && dash[n + 1] >= 'A' && dash[n + 1] <= 'Z';
        nall++;
    }
    assert_true(nall >= 17);
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        char args[1024], taken[1024] = " ", synopsis[1024], listed[1024];
        // The command's own usage line(s), up to the blank line before the example.
        snprintf(args, sizeof args, "%s --help", cmds[c]);
        assert_int_equal(run(args), 0);
        const char *u = strstr(out, cmds[c]);
        assert_non_null(u);
        const char *end = strstr(u, "\n\n");
        options_named(u, end ? (size_t)(end - u) : strlen(u), synopsis, sizeof synopsis);
        // Its operands: the words before the first '[' of the usage line.
        int operands = 0;
        for (const char *w = u + strlen(cmds[c]); *w == ' ' && w[1] != '['; operands++) {
            w = strchr(w + 1, ' ');
            if (!w) {
                break;
            }
        }
        char base[512] = "";
        for (int i = 0; i < operands; i++) {
            snprintf(base + strlen(base), sizeof base - strlen(base), " '%s/none%d'", dir, i);
        }
        if (operands == 0) {
            snprintf(base, sizeof base, " --socket '%s/none.sock'", dir);
        }
        for (int o = 0; o < nall; o++) {
            if (strcmp(all[o], "--help") == 0 || strcmp(all[o], "--version") == 0) {
                continue;
            }
            snprintf(args, sizeof args, "%s%s %.31s%s", cmds[c], base, all[o],
                     valued[o] ? " 1" : "");
            run(args);
            char refused[64];
            snprintf(refused, sizeof refused, "does not take %.31s", all[o]);
            if (!strstr(err, refused)) {
                snprintf(taken + strlen(taken), sizeof taken - strlen(taken), "%.31s ", all[o]);
            }
        }
        if (!same_options(taken, synopsis)) {
            fail_msg("contactctl %s --help names%s; the command takes%s", cmds[c], synopsis,
                     taken);
        }
        // The general help's entry: its line "  COMMAND ..." and the lines of '[...]' after it.
        char head[64];
        snprintf(head, sizeof head, "\n  %s ", cmds[c]);
        const char *g = strstr(strstr(general, "Commands:"), head);
        assert_non_null(g);
        const char *ge = strchr(g + 1, '\n');
        while (ge && strspn(ge + 1, " ") > 2 && ge[1 + strspn(ge + 1, " ")] == '[') {
            ge = strchr(ge + 1, '\n');
        }
        options_named(g, ge ? (size_t)(ge - g) : strlen(g), listed, sizeof listed);
        if (!same_options(taken, listed)) {
            fail_msg("contactctl --help lists %s with%s; the command takes%s", cmds[c], listed,
                     taken);
        }
    }
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, true, &contactd_path, &contactctl_path) < 0) {
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_session_replays_bit_for_bit),
        cmocka_unit_test(stream_session_replays_bit_for_bit),
        cmocka_unit_test(another_solver_differs),
        cmocka_unit_test(truncated_recording_replays_its_prefix),
        cmocka_unit_test(deadline_frames_list_their_differences),
        cmocka_unit_test(refused_frames_stay_in_the_json),
        cmocka_unit_test(contactctl_record_command),
        cmocka_unit_test(record_off_refuses_the_hello),
        cmocka_unit_test(recording_buffer_is_counted_as_made),
        cmocka_unit_test(convert_round_trips),
        cmocka_unit_test(exit_statuses_and_help),
        cmocka_unit_test(help_names_the_options_taken),
        IT_SIGTERM_TEST(&d),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
