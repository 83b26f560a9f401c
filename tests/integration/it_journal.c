/* SPDX-License-Identifier: MIT */
/* The daemon under systemd's journal: session events carry SESSION_ID= and CODE= fields. The
 * test plays journald in a private mount namespace (a tmpfs on /run, so the host's journal is
 * neither needed nor touched): it binds /run/systemd/journal/socket and starts contactd with
 * $JOURNAL_STREAM naming the daemon's stderr, as systemd does for a service. Needs root for the
 * namespace; otherwise the whole file is skipped, saying so. Arguments: the contactd executable. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "testlib.h"

#define JOURNAL_DIR "/run/systemd/journal"

static const char *contactd_path;
static it_daemon d;
static int journal_fd = -1;

// A private /run with an empty journal socket in it. Returns 0, or -1 with the reason in why.
static int journal_stand_in(char *why, size_t len) {
    const struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = JOURNAL_DIR "/socket"};
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0) {
        snprintf(why, len, "no private mount namespace for a stand-in journal (%s; needs root)",
                 strerror(errno));
        return -1;
    }
    journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (mkdir("/run/systemd", 0755) < 0 || mkdir(JOURNAL_DIR, 0755) < 0 || journal_fd < 0 ||
        bind(journal_fd, (const struct sockaddr *)&sa, sizeof sa) < 0) {
        snprintf(why, len, "cannot bind %s: %s", sa.sun_path, strerror(errno));
        return -1;
    }
    return 0;
}

// Starts the daemon with its stderr as the journal stream (extra_ini as it_daemon_start's).
static void start(const char *extra_ini) {
    d = (it_daemon){.pid = -1, .pidfd = -1, .notify_fd = -1};
    assert_int_equal(it_daemon_prepare(&d), 0);
    const int fd = open(d.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    close(fd);
    char stream[64];
    snprintf(stream, sizeof stream, "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
    assert_int_equal(setenv("JOURNAL_STREAM", stream, 1), 0);
    char ini[256];
    snprintf(ini, sizeof ini, "[log]\nlevel = debug\n%s", extra_ini ? extra_ini : "");
    assert_int_equal(t_daemon_launch(&d, contactd_path, ini, 0), 0);
}

// The journal entry's field (value copied into out), or NULL when the entry has none.
static const char *field(const char *entry, const char *name, char *out, size_t len) {
    const size_t n = strlen(name);
    for (const char *p = entry; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            const char *v = p + n + 1, *e = strchr(v, '\n');
            const size_t vl = e ? (size_t)(e - v) : strlen(v);
            snprintf(out, len, "%.*s", (int)vl, v);
            return out;
        }
    }
    return NULL;
}

// Waits for the journal entry whose CODE is code (earlier entries are dropped) into entry.
static void expect_entry(const char *code, char *entry, size_t len) {
    char got[64];
    for (;;) {
        struct pollfd p = {.fd = journal_fd, .events = POLLIN};
        if (poll(&p, 1, IT_TIMEOUT_MS) != 1) {
            fail_msg("no journal entry with CODE=%s", code);
        }
        const ssize_t n = recv(journal_fd, entry, len - 1, 0);
        assert_true(n > 0);
        entry[n] = '\0';
        if (field(entry, "CODE", got, sizeof got) && strcmp(got, code) == 0) {
            return;
        }
    }
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    return 0;
}

// Opening, a field-naming Error and closing each reach the journal with the session's id; the
// messages are the same as on stderr, and they are written once (not also to stderr).
static void session_events_carry_session_id(void **state) {
    (void)state;
    start(NULL);
    cs_scene box;
    it_scene_load("box_on_plane.json", &box);
    cdc_conn *c = it_session_open(&d, false, NULL);
    const uint64_t id = cdc_conn_welcome(c)->session_id;
    char entry[4096], v[64], want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)id);

    expect_entry("SESSION_OPENED", entry, sizeof entry);
    assert_string_equal(field(entry, "SESSION_ID", v, sizeof v), want);
    assert_string_equal(field(entry, "PRIORITY", v, sizeof v), "6");
    assert_non_null(strstr(entry, "MESSAGE=session "));
    assert_non_null(strstr(entry, " opened on connection "));

    box.contacts[0].normal[2] *= 0.5;
    box.seq = 1;
    assert_int_equal(cdc_wire_frame_send(c, &box), 0);
    cdc_wire_free(it_session_recv(c, CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR));
    expect_entry("ERROR_INVALID", entry, sizeof entry);
    assert_string_equal(field(entry, "SESSION_ID", v, sizeof v), want);
    assert_non_null(strstr(entry, "contacts[0].normal"));

    cdc_conn_close(c);
    expect_entry("SESSION_CLOSED", entry, sizeof entry);
    assert_string_equal(field(entry, "SESSION_ID", v, sizeof v), want);

    static char log[1 << 16];
    assert_true(it_daemon_log(&d, log, sizeof log) >= 0);
    assert_null(strstr(log, " opened on connection "));
    // Messages about no session or event keep going to stderr, with the journal's prefix.
    assert_non_null(strstr(log, "<"));
    cd_scene_json_free(&box);
    assert_int_equal(it_daemon_stop(&d), 0);
}

// A refused TCP Hello is an event of no session: CODE=ERROR_DENIED and no SESSION_ID.
static void refusal_has_code_and_no_session(void **state) {
    (void)state;
    start("[server]\ntcp_allow_any_local_user = no\n");
    const int fd = it_connect_tcp(d.tcp);
    assert_true(fd >= 0);
    assert_int_equal(it_send_hello(fd, 1), 0);
    assert_true(it_wait_eof(fd, IT_TIMEOUT_MS));
    close(fd);
    char entry[4096], v[64];
    expect_entry("ERROR_DENIED", entry, sizeof entry);
    assert_null(field(entry, "SESSION_ID", v, sizeof v));
    assert_non_null(strstr(entry, "TCP Hello refused"));
    assert_int_equal(it_daemon_stop(&d), 0);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0) {
        return 2;
    }
    char why[256];
    if (journal_stand_in(why, sizeof why) < 0) {
        printf("1..0 # SKIP %s\n", why);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(session_events_carry_session_id, teardown),
        cmocka_unit_test_teardown(refusal_has_code_and_no_session, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
