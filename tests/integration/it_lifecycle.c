/* SPDX-License-Identifier: MIT */
/* The daemon's life as systemd sees it: --help and --version; a config error is exact and fatal
 * before READY=1; command-line options override the config file; READY=1 carries the bound
 * addresses; the watchdog is petted while the tick thread runs; a socket held by a live daemon is
 * refused and a stale one replaced; SIGTERM with sessions open gives STOPPING=1, exit 0, closed
 * connections and no socket file left behind; SIGHUP applies a new file (a higher
 * max_connections with the open files to take them), but not one that would leave a listener
 * beyond loopback without a token; sockets from socket activation are used (and left in place).
 * Arguments: the contactd and contactctl executables. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wire/scene_json.h"
#include "testlib.h"

static const char *contactd_path;
// The daemons of the running test; the per-test teardown stops whatever a failed test left.
static it_daemon d, d2;

static int reset(void **state) {
    (void)state;
    d = d2 = (it_daemon){.pid = -1, .pidfd = -1, .notify_fd = -1};
    return 0;
}

static int cleanup(void **state) {
    it_daemon_cleanup(&d);
    it_daemon_cleanup(&d2);
    return reset(state);
}

// Runs contactd with one option and returns its exit status; its stdout goes to out.
static int run_option(const char *option, char *out, size_t len) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s", contactd_path, option);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    const size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    const int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void help_and_version(void **state) {
    (void)state;
    static char out[8192];
    assert_int_equal(run_option("--help", out, sizeof out), 0);
    // Options with defaults, the config keys, signals and examples.
    static const char *const must[] = {"--config", "--socket", "--tcp HOST:PORT", "--rate",
                                       "'off'", "7411", "rate_hz", "deadline_fraction",
                                       "max_sessions", "SIGTERM", "Examples"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
        if (!strstr(out, must[i])) {
            fail_msg("--help does not mention %s", must[i]);
        }
    }
    assert_int_equal(run_option("--version", out, sizeof out), 0);
    assert_int_equal(strncmp(out, "contactd ", 9), 0);
    assert_int_equal(run_option("--no-such-option 2>/dev/null", out, sizeof out), 2);
}

static void config_error_is_exact_and_fatal(void **state) {
    (void)state;
    assert_int_equal(it_daemon_prepare(&d), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/bad.conf", d.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[server]\ntcp = 127.0.0.1:0\n\n[loop]\nrate_hz = fast\n", f);
    fclose(f);
    char *const argv[] = {"contactd", "--config", path, NULL};
    assert_int_equal(it_daemon_spawn(&d, contactd_path, argv), 0);
    assert_int_equal(it_daemon_wait_exit(&d, IT_TIMEOUT_MS), 0);
    assert_int_equal(d.exit_status, 1);
    // It never said READY=1.
    assert_int_equal(it_notify_wait(&d, "READY=1", 0, NULL, 0), -1);
    char log[2048], want[256];
    assert_true(it_daemon_log(&d, log, sizeof log) > 0);
    snprintf(want, sizeof want, "%s:5: [loop] rate_hz: expected an integer", path);
    if (!strstr(log, want)) {
        fail_msg("log '%s' lacks '%s'", log, want);
    }
}

static void command_line_overrides_config(void **state) {
    (void)state;
    // The file says 250 Hz; --rate says 500 and wins.
    assert_int_equal(it_daemon_start(&d, contactd_path, "[loop]\nrate_hz = 250\n", 0), 0);
    assert_int_equal(it_daemon_stop(&d), 0);
    char *const argv[] = {"contactd", "--config", d.config, "--rate", "500", NULL};
    assert_int_equal(it_daemon_spawn(&d, contactd_path, argv), 0);
    char dgram[1024];
    assert_int_equal(it_notify_wait(&d, "READY=1", IT_TIMEOUT_MS, dgram, sizeof dgram), 0);
    const char *tcp = strstr(dgram, "tcp:");
    assert_non_null(tcp);
    snprintf(d.tcp, sizeof d.tcp, "%s", tcp + 4);
    // Port 0 in the config: the READY status names the port actually bound.
    assert_true(atoi(strrchr(d.tcp, ':') + 1) > 0);
    cdc_conn *c = it_session_open(&d, true, NULL);
    assert_int_equal(cdc_wire_welcome(c)->rate_hz, 500);
    assert_int_equal(cdc_wire_welcome(c)->deadline_ns, 1600000); /* 80 % of 2 ms */
    cdc_conn_close(c);
    assert_int_equal(it_daemon_stop(&d), 0);
}

static void watchdog_is_petted(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, NULL, 200000), 0);
    // Every 100 ms (half of WATCHDOG_USEC) while the tick thread ticks.
    assert_int_equal(it_notify_wait(&d, "WATCHDOG=1", IT_TIMEOUT_MS, NULL, 0), 0);
    assert_int_equal(it_notify_wait(&d, "WATCHDOG=1", IT_TIMEOUT_MS, NULL, 0), 0);
    assert_int_equal(it_daemon_stop(&d), 0);
}

static void live_socket_refused_stale_socket_replaced(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, NULL, 0), 0);
    // A second daemon on the first one's socket path: refused, and the first is untouched.
    assert_int_equal(it_daemon_prepare(&d2), 0);
    char *const argv[] = {"contactd", "--config", d.config, "--tcp", "off", NULL};
    assert_int_equal(it_daemon_spawn(&d2, contactd_path, argv), 0);
    assert_int_equal(it_daemon_wait_exit(&d2, IT_TIMEOUT_MS), 0);
    assert_int_equal(d2.exit_status, 1);
    char log[2048];
    assert_true(it_daemon_log(&d2, log, sizeof log) > 0);
    assert_non_null(strstr(log, "another process is listening on it"));
    it_daemon_cleanup(&d2);
    cdc_conn *c = it_session_open(&d, false, NULL);
    cdc_conn_close(c);
    // A daemon that died without cleaning up leaves its socket file; the next one replaces it.
    kill(d.pid, SIGKILL);
    assert_int_equal(it_daemon_wait_exit(&d, IT_TIMEOUT_MS), 0);
    struct stat st;
    assert_int_equal(stat(d.socket, &st), 0);
    assert_int_equal(it_daemon_prepare(&d2), 0);
    char *const argv2[] = {"contactd", "--config", d.config, NULL};
    assert_int_equal(it_daemon_spawn(&d2, contactd_path, argv2), 0);
    assert_int_equal(it_notify_wait(&d2, "READY=1", IT_TIMEOUT_MS, NULL, 0), 0);
    snprintf(d2.socket, sizeof d2.socket, "%s", d.socket);
    c = it_session_open(&d2, false, NULL);
    cdc_conn_close(c);
    assert_int_equal(it_daemon_stop(&d2), 0);
}

static void sigterm_with_sessions_open(void **state) {
    (void)state;
    cs_scene box;
    it_scene_load("box_on_plane.json", &box);
    assert_int_equal(it_daemon_start(&d, contactd_path, NULL, 0), 0);
    cdc_conn *u = it_session_open(&d, false, NULL);
    cdc_conn *t = it_session_open(&d, true, NULL);
    for (uint64_t seq = 1; seq <= 10; seq++) {
        box.seq = seq;
        assert_int_equal(cdc_wire_frame_send(u, &box), 0);
        assert_int_equal(cdc_wire_frame_send(t, &box), 0);
        cdc_wire_free(it_session_recv(u, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT));
        cdc_wire_free(it_session_recv(t, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT));
    }
    // A frame in flight when the signal comes makes no difference.
    assert_int_equal(cdc_wire_frame_send(u, &box), 0);
    assert_int_equal(it_daemon_stop(&d), 0);
    // Both clients get what their sessions still held, then a Goodbye naming the signal, then
    // the close; and the socket file is gone.
    cdc_conn *both[2] = {u, t};
    for (int k = 0; k < 2; k++) {
        Contactd__V1__ServerMessage *m = NULL;
        int r, goodbyes = 0;
        while ((r = cdc_wire_recv(both[k], (int64_t)IT_TIMEOUT_MS * 1000000, &m)) == 1) {
            assert_int_equal(goodbyes, 0); // nothing after the Goodbye
            if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE) {
                assert_non_null(strstr(m->goodbye->reason, "SIGTERM"));
                goodbyes++;
            } else {
                assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT);
            }
            cdc_wire_free(m);
        }
        assert_int_equal(goodbyes, 1);
        assert_int_equal(r, -ECONNRESET);
    }
    struct stat st;
    assert_int_equal(stat(d.socket, &st), -1);
    cdc_conn_close(u);
    cdc_conn_close(t);
    cd_scene_json_free(&box);
}

// Appends text to the daemon's config file.
static void config_append(const char *text) {
    FILE *f = fopen(d.config, "a");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

// Waits until the daemon's log contains needle; fails the test after IT_TIMEOUT_MS.
static void log_wait(const char *needle) {
    static char log[1 << 16];
    for (int waited = 0; waited < IT_TIMEOUT_MS; waited += 10) {
        if (it_daemon_log(&d, log, sizeof log) >= 0 && strstr(log, needle)) {
            return;
        }
        usleep(10000);
    }
    fail_msg("the daemon's log never said '%s'", needle);
}

// The max_contacts a new session is granted.
static uint32_t granted_contacts(void) {
    cdc_conn *c = it_session_open(&d, false, NULL);
    const uint32_t n = cdc_wire_welcome(c)->limits->max_contacts;
    cdc_conn_close(c);
    return n;
}

static void sighup_reloads_config(void **state) {
    (void)state;
    assert_int_equal(it_daemon_start(&d, contactd_path, "[session]\nmax_contacts = 64\n", 0), 0);
    cdc_conn *old = it_session_open(&d, false, NULL);
    assert_int_equal(granted_contacts(), 64);
    // A key that applies live, and one that needs a restart (named in the log, kept).
    config_append("[session]\nmax_contacts = 32\n[loop]\nrate_hz = 500\n");
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    log_wait("needs a restart to change: [loop] rate_hz");
    assert_int_equal(granted_contacts(), 32);
    cdc_conn *c = it_session_open(&d, false, NULL);
    assert_int_equal(cdc_wire_welcome(c)->tick_period_ns, 1000000);
    cdc_conn_close(c);
    // A bad file is refused whole: the running configuration stays.
    config_append("[session]\nmax_contacts = 16\nno_such_key = 1\n");
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    log_wait("the running one stays");
    assert_int_equal(granted_contacts(), 32);
    // The session made before the reload goes on with what it was granted.
    cs_scene box;
    it_scene_load("box_on_plane.json", &box);
    cdc_wire_free(it_frame_exchange(old, &box, 1));
    cd_scene_json_free(&box);
    cdc_conn_close(old);
    assert_int_equal(it_daemon_stop(&d), 0);
}

// The reply to a TCP Hello without a token.
static Contactd__V1__ServerMessage__MsgCase tcp_hello_reply(void) {
    const int fd = it_connect_tcp(d.tcp);
    assert_true(fd >= 0);
    assert_int_equal(it_send_hello(fd, 1), 0);
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    const Contactd__V1__ServerMessage__MsgCase kind = m->msg_case;
    assert_true(kind == CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME ||
                m->error->code == CONTACTD__V1__ERROR_CODE__ERROR_DENIED);
    contactd__v1__server_message__free_unpacked(m, NULL);
    close(fd);
    return kind;
}

// A TCP listener beyond loopback needs the token, after a reload too: the listener needs a
// restart to change, so a file that moves it to loopback and drops the token is judged with the
// listener that stays, and refused, rather than opening it to every host without a token.
static void sighup_keeps_the_token_of_a_listener_beyond_loopback(void **state) {
    (void)state;
    char token[] = "/tmp/contactd-it-token-XXXXXX";
    const int fd = mkstemp(token);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "0123456789abcdef0123\n", 21), 21);
    close(fd);
    char ini[256];
    snprintf(ini, sizeof ini, "[server]\ntcp = 0.0.0.0:0\nauth_token_file = %s\n", token);
    const int started = it_daemon_start(&d, contactd_path, ini, 0);
    if (started == 0) {
        assert_int_equal(tcp_hello_reply(), CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
        config_append("[server]\ntcp = 127.0.0.1:0\nauth_token_file =\n"
                      "tcp_allow_any_local_user = yes\n");
        assert_int_equal(kill(d.pid, SIGHUP), 0);
        log_wait("reload: ");
        assert_int_equal(tcp_hello_reply(), CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR);
        assert_int_equal(it_daemon_stop(&d), 0);
    }
    unlink(token);
    assert_int_equal(started, 0);
}

// The open-files limit is raised to fit max_connections, also when a reload raises it: a daemon
// started under a limit of LIMIT files with room for FEW connections takes MANY once reloaded,
// each answered (none shed by an accept that ran out of descriptors).
static void sighup_raises_the_open_files_limit(void **state) {
    (void)state;
    enum { LIMIT = 200, FEW = 100, MANY = 300 };
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max < 2 * MANY) {
        printf("# the open-files hard limit (%llu) is too low\n", (unsigned long long)was.rlim_max);
        skip();
    }
    // The daemon inherits the low limit; this test takes its own back at once.
    struct rlimit low = {.rlim_cur = LIMIT, .rlim_max = was.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    // One worker CPU: the daemon's own descriptors (two per worker thread) stay few on any host.
    char ini[96];
    snprintf(ini, sizeof ini, "[server]\nmax_connections = %d\n[loop]\nworkers = 1\n", FEW);
    const int started = it_daemon_start(&d, contactd_path, ini, 0);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    assert_int_equal(started, 0);
    char more[64];
    snprintf(more, sizeof more, "[server]\nmax_connections = %d\n", 2 * MANY);
    config_append(more);
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    log_wait("reload: ");
    static int fds[MANY];
    for (int i = 0; i < MANY; i++) {
        fds[i] = it_connect_unix(d.socket);
        assert_true(fds[i] >= 0);
    }
    size_t len;
    uint8_t *request = it_stats_requests(1, &len);
    for (int i = 0; i < MANY; i++) {
        assert_int_equal(it_write_all(fds[i], request, len), 0);
        Contactd__V1__ServerMessage *m = it_recv(fds[i], IT_TIMEOUT_MS);
        if (!m) {
            fail_msg("connection %d of %d was not answered", i + 1, MANY);
        }
        assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS);
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    free(request);
    for (int i = 0; i < MANY; i++) {
        close(fds[i]);
    }
    assert_int_equal(it_daemon_stop(&d), 0);
}

static void socket_activation(void **state) {
    (void)state;
    static const char activate[] = "/usr/bin/systemd-socket-activate";
    if (access(activate, X_OK) != 0) {
        printf("# %s not installed\n", activate);
        skip();
    }
    assert_int_equal(it_daemon_prepare(&d), 0);
    char sock[128], tcp[32];
    snprintf(sock, sizeof sock, "%s/activated.sock", d.dir);
    // The activator does not take port 0: borrow a free port from the kernel.
    const int probe = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;
    assert_int_equal(bind(probe, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(probe, (struct sockaddr *)&sa, &salen), 0);
    close(probe);
    snprintf(tcp, sizeof tcp, "127.0.0.1:%d", ntohs(sa.sin_port));
    // systemd-socket-activate binds both sockets and execs contactd on the first connection
    // (passing on NOTIFY_SOCKET); the daemon must use them instead of its own defaults.
    // The activated TCP socket follows the same rule as a bound one: this user may use it.
    char conf[128];
    snprintf(conf, sizeof conf, "%s/activated.conf", d.dir);
    FILE *f = fopen(conf, "w");
    assert_non_null(f);
    fputs("[server]\ntcp_allow_any_local_user = yes\n", f);
    assert_int_equal(fclose(f), 0);
    char *const argv[] = {"systemd-socket-activate", "-E", "NOTIFY_SOCKET", "-l", sock, "-l", tcp,
                          (char *)contactd_path, "--config", conf, NULL};
    assert_int_equal(it_daemon_spawn(&d, activate, argv), 0);
    snprintf(d.socket, sizeof d.socket, "%s", sock);
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < IT_TIMEOUT_MS; tries++) {
        struct stat st;
        if (stat(sock, &st) == 0) {
            fd = it_connect_unix(sock);
        } else {
            const struct timespec ms = {.tv_nsec = 1000000};
            nanosleep(&ms, NULL); /* the activator has not bound its socket yet */
        }
    }
    assert_true(fd >= 0);
    char dgram[1024];
    assert_int_equal(it_notify_wait(&d, "READY=1", IT_TIMEOUT_MS, dgram, sizeof dgram), 0);
    char want[sizeof sock + sizeof tcp + 16];
    snprintf(want, sizeof want, "unix:%s tcp:%s", sock, tcp);
    if (!strstr(dgram, want)) {
        fail_msg("READY status '%s' does not name the activated sockets", dgram);
    }
    snprintf(d.tcp, sizeof d.tcp, "%s", tcp);
    assert_int_equal(it_send_hello(fd, 1), 0);
    Contactd__V1__ServerMessage *m = it_recv(fd, IT_TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->msg_case, CONTACTD__V1__SERVER_MESSAGE__MSG_WELCOME);
    contactd__v1__server_message__free_unpacked(m, NULL);
    close(fd);
    cdc_conn_close(it_session_open(&d, true, NULL));
    assert_int_equal(it_daemon_stop(&d), 0);
    // The socket file belongs to whoever passed it in: the daemon leaves it.
    struct stat st;
    assert_int_equal(stat(sock, &st), 0);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CONTACTD [CONTACTCTL]\n", argv[0]);
        return 2;
    }
    contactd_path = argv[1];
#define TEST(f) cmocka_unit_test_setup_teardown(f, reset, cleanup)
    const struct CMUnitTest tests[] = {
        TEST(help_and_version),
        TEST(config_error_is_exact_and_fatal),
        TEST(command_line_overrides_config),
        TEST(watchdog_is_petted),
        TEST(live_socket_refused_stale_socket_replaced),
        TEST(sigterm_with_sessions_open),
        TEST(sighup_reloads_config),
        TEST(sighup_keeps_the_token_of_a_listener_beyond_loopback),
        TEST(sighup_raises_the_open_files_limit),
        TEST(socket_activation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
