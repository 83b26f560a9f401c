/* SPDX-License-Identifier: MIT */
/* Configuration: defaults, a full file, single-key overrides, and exact errors (file, line,
 * section, key, reason) for bad values, unknown keys and sections, syntax errors and missing
 * files. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solver/contact.h"
#include "sys/config.h"
#include "wire/paths.h"
#include "testlib.h"

// Writes text to a new temporary file; its path goes into path (64 bytes).
static void write_file(char path[64], const char *text) {
    snprintf(path, 64, "/tmp/test_config_XXXXXX");
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    const size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

// Loads text over the defaults; returns the result and leaves the message in err.
static int load_text(cd_config *c, const char *text, char *err, size_t errlen, char path[64]) {
    assert_int_equal(cd_config_defaults(c), 0);
    write_file(path, text);
    const int r = cd_config_load(c, path, err, errlen);
    unlink(path);
    return r;
}

// Fails unless err is exactly "PATH:LINE: " followed by something starting with rest.
static void assert_error_at(const char *err, const char *path, int line, const char *rest) {
    char want[256];
    snprintf(want, sizeof want, "%s:%d: %s", path, line, rest);
    if (strncmp(err, want, strlen(want)) != 0) {
        fail_msg("error '%s' does not start with '%s'", err, want);
    }
}

static void defaults(void **state) {
    (void)state;
    cd_config c;
    assert_int_equal(cd_config_defaults(&c), 0);
    assert_true(c.socket[0] != '\0');
    assert_string_equal(c.tcp_host, "127.0.0.1");
    assert_int_equal(c.tcp_port, 7411);
    assert_int_equal(c.rate_hz, 1000);
    assert_near(c.deadline_fraction, 0.8, 0.0);
    assert_true(c.realtime);
    assert_true(c.keep_awake);
    assert_int_equal(c.cpu, -1);
    assert_int_equal(c.workers, -1);
    assert_int_equal(c.max_session_bytes, (size_t)64 << 20);
    assert_int_equal(c.default_solver, CS_SOLVER_LEMKE);
    assert_int_equal(c.limits.max_bodies, CD_MAX_BODIES_DEFAULT);
    assert_int_equal(c.log_level, CD_LOG_INFO);
    // Recording is off until the operator names a directory; "state" names the default one.
    assert_string_equal(c.record_dir, "");
    char err[256], path[64];
    assert_int_equal(cd_config_check(&c, err, sizeof err), 0);
    assert_int_equal(setenv("STATE_DIRECTORY", "/var/lib/contactd:/var/lib/other", 1), 0);
    assert_int_equal(load_text(&c, "[record]\ndir = state\n", err, sizeof err, path), 0);
    assert_string_equal(c.record_dir, "/var/lib/contactd");
    assert_int_equal(unsetenv("STATE_DIRECTORY"), 0);
}

static void full_file(void **state) {
    (void)state;
    cd_config c;
    char err[512], path[64];
    const char *text = "; a comment\n"
                       "[server]\n"
                       "socket = /tmp/x.sock\n"
                       "tcp = [::1]:0\n"
                       "max_sessions = 3\n"
                       "max_message_bytes = 4096 ; inline comment\n"
                       "max_queued_bytes = 2048\n"
                       "memory_budget_mb = 512\n"
                       "max_sessions_per_uid = 2\n"
                       "[loop]\n"
                       "rate_hz = 250\n"
                       "deadline_fraction = 0.5\n"
                       "realtime = off\n"
                       "keep_awake = off\n"
                       "priority = 10\n"
                       "cpu = 1\n"
                       "workers = 3\n"
                       "long_solve_us = 150\n"
                       "[session]\n"
                       "default_solver = dantzig\n"
                       "max_bodies = 2\n"
                       "max_contacts = 9\n"
                       "max_joints = 3\n"
                       "max_dirs = 12\n"
                       "max_budget_us = 2500\n"
                       "max_session_mb = 32\n"
                       "[log]\n"
                       "level = debug\n";
    assert_int_equal(load_text(&c, text, err, sizeof err, path), 0);
    assert_string_equal(c.socket, "/tmp/x.sock");
    assert_string_equal(c.tcp_host, "::1");
    assert_int_equal(c.tcp_port, 0);
    assert_int_equal(c.max_sessions, 3);
    assert_int_equal(c.max_message_bytes, 4096);
    assert_int_equal(c.max_queued_bytes, 2048);
    assert_int_equal(c.max_sessions_per_uid, 2);
    assert_int_equal(c.rate_hz, 250);
    assert_near(c.deadline_fraction, 0.5, 0.0);
    assert_false(c.realtime);
    assert_false(c.keep_awake);
    assert_int_equal(c.priority, 10);
    assert_int_equal(c.cpu, 1);
    assert_int_equal(c.workers, 3);
    assert_int_equal(c.long_solve_ns, 150000);
    assert_int_equal(c.memory_budget_bytes, (size_t)512 << 20);
    assert_int_equal(c.max_budget_ns, 2500000);
    assert_int_equal(c.max_session_bytes, (size_t)32 << 20);
    assert_int_equal(c.limits.max_bodies, 2);
    assert_int_equal(c.limits.max_contacts, 9);
    assert_int_equal(c.limits.max_joints, 3);
    assert_int_equal(c.limits.max_dirs, 12);
    assert_int_equal(c.log_level, CD_LOG_DEBUG);
}

// Every solver of the build is a default_solver by its wire name.
static void every_solver_is_a_default(void **state) {
    (void)state;
    cd_config c;
    char err[256], path[64], text[96];
    int named = 0;
    for (int k = 1; k < CS_SOLVER_COUNT; k++) {
        if (!cs_solver_is_available((cs_solver)k))
            continue;
        snprintf(text, sizeof text, "[session]\ndefault_solver = %s\n",
                 cs_solver_name((cs_solver)k));
        assert_int_equal(load_text(&c, text, err, sizeof err, path), 0);
        assert_int_equal(c.default_solver, k);
        named++;
    }
    assert_int_equal(named, CS_SOLVER_COUNT - 1);
}

static void bad_value_names_file_line_key(void **state) {
    (void)state;
    cd_config c;
    char err[512], path[64];
    const char *text = "[server]\n"
                       "max_sessions = 4\n"
                       "\n"
                       "[loop]\n"
                       "rate_hz = fast\n"
                       "deadline_fraction = 2\n";
    assert_int_equal(load_text(&c, text, err, sizeof err, path), -EINVAL);
    // The first error is reported: line 5, not the bad fraction on line 6.
    assert_error_at(err, path, 5, "[loop] rate_hz: expected an integer in [1, 100000], got 'fast'");
}

static void each_error_kind(void **state) {
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } cases[] = {
        {"[loop]\ndeadline_fraction = 0\n", 2,
         "[loop] deadline_fraction: expected a number in (0, 1]"},
        {"[loop]\nrealtime = yes\n", 2, "[loop] realtime: expected 'auto' or 'off', got 'yes'"},
        {"[loop]\nkeep_awake = auto\n", 2,
         "[loop] keep_awake: expected 'on' or 'off', got 'auto'"},
        {"[loop]\ncpu = -3\n", 2, "[loop] cpu: expected 'auto' or an integer"},
        {"[loop]\npriority = 1\n", 2, "[loop] priority: expected an integer in [2, 99]"},
        {"[loop]\nworkers = 0\n", 2, "[loop] workers: expected 'auto' or an integer"},
        {"[loop]\nrate_hz = 1000x\n", 2, "[loop] rate_hz: expected an integer"},
        {"[server]\ntcp = localhost:7411\n", 2, "[server] tcp: 'localhost' is not a numeric IPv4"},
        {"[server]\ntcp = 127.0.0.1:70000\n", 2,
         "[server] tcp: port: expected an integer in [0, 65535]"},
        {"[server]\ntcp = 127.0.0.1\n", 2, "[server] tcp: expected HOST:PORT"},
        {"[server]\nlisten = 1\n", 2, "[server] listen: unknown key"},
        {"\n\n[srv]\nsocket = /x\n", 4, "[srv] socket: unknown section"},
        {"[session]\nmax_dirs = 7\n", 2, "[session] max_dirs: expected an even number, got 7"},
        {"[session]\ndefault_solver = simplex\n", 2,
         "[session] default_solver: unknown solver 'simplex'"},
        {"[log]\nlevel = loud\n", 2, "[log] level: expected err, warning"},
        {"[record]\ndir = recordings\n", 2, "[record] dir: expected an absolute directory"},
        {"[record]\nall_sessions = 1\n", 2, "[record] all_sessions: expected 'yes' or 'no'"},
        {"[record]\nbuffer_kb = 8\n", 2, "[record] buffer_kb: expected an integer in [64, "},
        {"[loop]\nrate_hz\n", 2, "syntax error"},
        {"[loop\nrate_hz = 5\n", 1, "syntax error"},
        // A syntax error before a bad value is the first error.
        {"[loop]\nrate_hz 3\nrate_hz = 0\n", 2, "syntax error"},
        {"[loop]\n= 3\n", 2, "[loop] (empty): a key name is missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cd_config c;
        char err[512], path[64];
        assert_int_equal(load_text(&c, cases[i].text, err, sizeof err, path), -EINVAL);
        assert_error_at(err, path, cases[i].line, cases[i].msg);
    }
}

/* Every integer key at both ends of its range lands in its own field, times its unit, and nothing
 * else in the configuration changes; one past either end is refused naming the range. */
static void integer_keys_take_their_range(void **state) {
    (void)state;
#define FIELD(f) offsetof(cd_config, f), sizeof(((cd_config *)0)->f)
    static const struct {
        const char *section, *key;
        long long lo, hi, unit;
        bool autoable;
        size_t off, size;
    } keys[] = {
        {"server", "max_sessions", 1, 4096, 1, false, FIELD(max_sessions)},
        {"server", "max_message_bytes", 1024, 64 << 20, 1, false, FIELD(max_message_bytes)},
        {"server", "max_queued_bytes", 1024, 1LL << 30, 1, false, FIELD(max_queued_bytes)},
        {"server", "memory_budget_mb", 1, 1 << 24, 1 << 20, false, FIELD(memory_budget_bytes)},
        {"server", "max_connections", 1, 1 << 20, 1, false, FIELD(max_connections)},
        {"server", "max_connections_per_uid", 1, 1 << 20, 1, false,
         FIELD(max_connections_per_uid)},
        {"server", "max_sessions_per_uid", 1, 4096, 1, true, FIELD(max_sessions_per_uid)},
        {"server", "hello_timeout_ms", 10, 600000, 1000000, false, FIELD(hello_timeout_ns)},
        {"loop", "rate_hz", 1, 100000, 1, false, FIELD(rate_hz)},
        {"loop", "priority", 2, 99, 1, false, FIELD(priority)},
        {"loop", "cpu", 0, 1023, 1, true, FIELD(cpu)},
        {"loop", "workers", 1, 256, 1, true, FIELD(workers)},
        {"loop", "long_solve_us", 1, 10000000, 1000, false, FIELD(long_solve_ns)},
        {"session", "max_bodies", 1, 100000, 1, false, FIELD(limits.max_bodies)},
        {"session", "max_contacts", 1, 100000, 1, false, FIELD(limits.max_contacts)},
        {"session", "max_joints", 0, 100000, 1, false, FIELD(limits.max_joints)},
        {"session", "max_budget_us", 1, 10000000, 1000, false, FIELD(max_budget_ns)},
        {"session", "max_session_mb", 1, 1 << 20, 1 << 20, false, FIELD(max_session_bytes)},
        {"record", "buffer_kb", 64, 1 << 20, 1 << 10, false, FIELD(record_buffer_bytes)},
        {"record", "max_file_mb", 1, 1 << 24, 1 << 20, false, FIELD(record_max_file_bytes)},
    };
#undef FIELD
    cd_config d, c;
    char err[512], v[32], want[128];
    memset(&d, 0, sizeof d);
    assert_int_equal(cd_config_defaults(&d), 0);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        for (int end = 0; end < 3; end++) {
            const long long x = end == 0 ? keys[i].lo : end == 1 ? keys[i].hi : -1;
            if (end == 2 && !keys[i].autoable) {
                continue;
            }
            snprintf(v, sizeof v, end == 2 ? "auto" : "%lld", x);
            memcpy(&c, &d, sizeof c);
            assert_int_equal(cd_config_set(&c, keys[i].section, keys[i].key, v, err, sizeof err),
                             0);
            int64_t got;
            if (keys[i].size == sizeof(int32_t)) {
                int32_t g;
                memcpy(&g, (char *)&c + keys[i].off, sizeof g);
                got = g;
            } else {
                memcpy(&got, (char *)&c + keys[i].off, sizeof got);
            }
            print_message("# [%s] %s = %s\n", keys[i].section, keys[i].key, v);
            assert_int_equal(got, end == 2 ? -1 : x * keys[i].unit);
            memcpy((char *)&c + keys[i].off, (char *)&d + keys[i].off, keys[i].size);
            assert_memory_equal(&c, &d, sizeof c);
        }
        for (int end = 0; end < 2; end++) {
            snprintf(v, sizeof v, "%lld", end ? keys[i].hi + 1 : keys[i].lo - 1);
            assert_int_equal(cd_config_set(&c, keys[i].section, keys[i].key, v, err, sizeof err),
                             -EINVAL);
            snprintf(want, sizeof want, "[%s] %s: expected %san integer in [%lld, %lld], got",
                     keys[i].section, keys[i].key, keys[i].autoable ? "'auto' or " : "",
                     keys[i].lo, keys[i].hi);
            assert_memory_equal(err, want, strlen(want));
        }
    }
}

static void long_socket_path_refused(void **state) {
    (void)state;
    cd_config c;
    char err[512], v[200];
    assert_int_equal(cd_config_defaults(&c), 0);
    memset(v, 'a', sizeof v - 1);
    v[0] = '/';
    v[sizeof v - 1] = '\0';
    assert_int_equal(cd_config_set(&c, "server", "socket", v, err, sizeof err), -EINVAL);
    assert_string_equal(err, "[server] socket: path longer than 107 bytes");
}

static void overrides_and_off(void **state) {
    (void)state;
    cd_config c;
    char err[512];
    assert_int_equal(cd_config_defaults(&c), 0);
    assert_int_equal(cd_config_set(&c, "server", "tcp", "127.0.0.1:0", err, sizeof err), 0);
    assert_int_equal(c.tcp_port, 0);
    assert_int_equal(cd_config_set(&c, "loop", "rate_hz", "500", err, sizeof err), 0);
    assert_int_equal(c.rate_hz, 500);
    // A refused value leaves the previous one.
    assert_int_equal(cd_config_set(&c, "loop", "rate_hz", "0", err, sizeof err), -EINVAL);
    assert_int_equal(c.rate_hz, 500);
    assert_int_equal(cd_config_set(&c, "server", "tcp", "off", err, sizeof err), 0);
    assert_int_equal(cd_config_check(&c, err, sizeof err), 0);
    assert_int_equal(cd_config_set(&c, "server", "socket", "off", err, sizeof err), 0);
    assert_int_equal(cd_config_check(&c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "nothing to listen on"));
    // An empty socket value restores the default path.
    assert_int_equal(cd_config_set(&c, "server", "socket", "", err, sizeof err), 0);
    assert_true(c.socket[0] == '/');
}

static void missing_file(void **state) {
    (void)state;
    cd_config c;
    char err[512];
    assert_int_equal(cd_config_defaults(&c), 0);
    assert_int_equal(cd_config_load(&c, "/nonexistent/contactd.conf", err, sizeof err), -ENOENT);
    assert_string_equal(err, "/nonexistent/contactd.conf: cannot open: No such file or directory");
}

static void assert_same_config(const cd_config *a, const cd_config *b) {
    assert_string_equal(a->socket, b->socket);
    assert_string_equal(a->tcp_host, b->tcp_host);
    assert_int_equal(a->tcp_port, b->tcp_port);
    assert_int_equal(a->max_sessions, b->max_sessions);
    assert_int_equal(a->max_message_bytes, b->max_message_bytes);
    assert_int_equal(a->max_queued_bytes, b->max_queued_bytes);
    assert_int_equal(a->rate_hz, b->rate_hz);
    assert_near(a->deadline_fraction, b->deadline_fraction, 0.0);
    assert_int_equal(a->realtime, b->realtime);
    assert_int_equal(a->keep_awake, b->keep_awake);
    assert_int_equal(a->priority, b->priority);
    assert_int_equal(a->cpu, b->cpu);
    assert_int_equal(a->default_solver, b->default_solver);
    assert_int_equal(a->limits.max_bodies, b->limits.max_bodies);
    assert_int_equal(a->limits.max_contacts, b->limits.max_contacts);
    assert_int_equal(a->limits.max_joints, b->limits.max_joints);
    assert_int_equal(a->limits.max_dirs, b->limits.max_dirs);
    assert_int_equal(a->log_level, b->log_level);
    assert_int_equal(a->workers, b->workers);
    assert_int_equal(a->long_solve_ns, b->long_solve_ns);
    assert_int_equal(a->max_budget_ns, b->max_budget_ns);
    assert_int_equal(a->max_session_bytes, b->max_session_bytes);
    assert_int_equal(a->memory_budget_bytes, b->memory_budget_bytes);
    assert_int_equal(a->max_connections, b->max_connections);
    assert_int_equal(a->max_connections_per_uid, b->max_connections_per_uid);
    assert_int_equal(a->max_sessions_per_uid, b->max_sessions_per_uid);
    assert_int_equal(a->hello_timeout_ns, b->hello_timeout_ns);
    assert_int_equal(a->socket_mode, b->socket_mode);
    assert_string_equal(a->socket_group, b->socket_group);
    assert_int_equal(a->nallow_uids, b->nallow_uids);
    assert_int_equal(a->nallow_gids, b->nallow_gids);
    assert_string_equal(a->auth_token, b->auth_token);
    assert_int_equal(a->tcp_allow_any_local_user, b->tcp_allow_any_local_user);
    assert_string_equal(a->record_dir, b->record_dir);
    assert_int_equal(a->record_all, b->record_all);
    assert_int_equal(a->record_buffer_bytes, b->record_buffer_bytes);
    assert_int_equal(a->record_max_file_bytes, b->record_max_file_bytes);
}

static void shipped_config_documents_the_defaults(void **state) {
    (void)state;
    // config/contactd.conf shows every key commented out at its default. With each ";key ="
    // line switched on, loading it must give exactly the built-in defaults.
    char path[512], line[512], tmp[64];
    snprintf(path, sizeof path, "%s/../../config/contactd.conf", t_data_path(""));
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    snprintf(tmp, sizeof tmp, "/tmp/test_config_XXXXXX");
    const int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    int keys = 0;
    while (fgets(line, sizeof line, in)) {
        const bool key = line[0] == ';' && strchr(line, '=') != NULL;
        keys += key;
        fputs(key ? line + 1 : line, out);
    }
    fclose(in);
    fclose(out);
    assert_int_equal(keys, 36);
    cd_config def, c;
    char err[512];
    assert_int_equal(cd_config_defaults(&def), 0);
    assert_int_equal(cd_config_defaults(&c), 0);
    // Start from values that differ from every default, so each key has to be read.
    c.tcp_port = 1;
    c.max_sessions = c.rate_hz = c.priority = c.cpu = 2;
    c.max_message_bytes = 3;
    c.max_queued_bytes = 4;
    c.deadline_fraction = 0.1;
    c.realtime = false;
    c.keep_awake = false;
    c.workers = 2;
    c.long_solve_ns = 1;
    c.max_budget_ns = 1;
    c.max_session_bytes = 1;
    c.memory_budget_bytes = 2;
    c.limits = (cs_limits){.max_bodies = 5, .max_contacts = 6, .max_joints = 8, .max_dirs = 7};
    c.log_level = CD_LOG_ERR;
    c.max_connections = c.max_connections_per_uid = c.max_sessions_per_uid = 1;
    c.hello_timeout_ns = 1;
    c.socket_mode = 0;
    snprintf(c.socket_group, sizeof c.socket_group, "x");
    c.nallow_uids = c.nallow_gids = 1;
    c.tcp_allow_any_local_user = true;
    snprintf(c.auth_token, sizeof c.auth_token, "x");
    snprintf(c.record_dir, sizeof c.record_dir, "/x");
    c.record_all = true;
    c.record_buffer_bytes = 1;
    c.record_max_file_bytes = 1;
    const int r = cd_config_load(&c, tmp, err, sizeof err);
    unlink(tmp);
    if (r != 0) {
        fail_msg("%s", err);
    }
    assert_same_config(&def, &c);
}

static void access_keys(void **state) {
    (void)state;
    cd_config c;
    char err[256];
    assert_int_equal(cd_config_defaults(&c), 0);
    assert_int_equal(c.socket_mode, 0660);
    assert_int_equal(cd_config_set(&c, "server", "socket_mode", "0640", err, sizeof err), 0);
    assert_int_equal(c.socket_mode, 0640);
    assert_int_equal(cd_config_set(&c, "server", "socket_mode", "0999", err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "[server] socket_mode: expected octal"));
    // Numbers and names, either separator; root's name and group exist everywhere.
    assert_int_equal(cd_config_set(&c, "server", "allow_uids", "1000, root 77", err, sizeof err),
                     0);
    assert_int_equal(c.nallow_uids, 3);
    assert_int_equal(c.allow_uids[0], 1000);
    assert_int_equal(c.allow_uids[1], 0);
    assert_int_equal(c.allow_uids[2], 77);
    assert_int_equal(cd_config_set(&c, "server", "allow_gids", "root", err, sizeof err), 0);
    assert_int_equal(c.nallow_gids, 1);
    assert_int_equal(cd_config_set(&c, "server", "allow_uids", "no-such-user-here", err,
                                   sizeof err), -EINVAL);
    assert_non_null(strstr(err, "no user 'no-such-user-here'"));
    assert_int_equal(c.nallow_uids, 3); // a refused value changes nothing
    assert_int_equal(cd_config_set(&c, "server", "allow_uids", "", err, sizeof err), 0);
    assert_int_equal(c.nallow_uids, 0);
    assert_int_equal(cd_config_set(&c, "server", "hello_timeout_ms", "5", err, sizeof err),
                     -EINVAL);
    assert_int_equal(cd_config_set(&c, "server", "hello_timeout_ms", "250", err, sizeof err), 0);
    assert_int_equal(c.hello_timeout_ns, 250000000);
}

static void tcp_beyond_loopback_needs_a_token(void **state) {
    (void)state;
    cd_config c;
    char err[256], path[64];
    assert_int_equal(cd_config_defaults(&c), 0);
    assert_int_equal(cd_config_set(&c, "server", "tcp", "0.0.0.0:7411", err, sizeof err), 0);
    assert_int_equal(cd_config_check(&c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "[server] tcp: 0.0.0.0 is not a loopback address"));
    // A token too short to be one is refused; a good one lets the address pass.
    write_file(path, "short\n");
    assert_int_equal(cd_config_set(&c, "server", "auth_token_file", path, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "16 to 255 bytes (got 5)"));
    unlink(path);
    write_file(path, "0123456789abcdef-long-enough\n");
    assert_int_equal(cd_config_set(&c, "server", "auth_token_file", path, err, sizeof err), 0);
    unlink(path);
    assert_string_equal(c.auth_token, "0123456789abcdef-long-enough");
    assert_int_equal(cd_config_check(&c, err, sizeof err), 0);
    // Loopback needs none (the daemon then asks TCP clients for tcp_allow_any_local_user).
    assert_int_equal(cd_config_set(&c, "server", "auth_token_file", "", err, sizeof err), 0);
    assert_int_equal(cd_config_set(&c, "server", "tcp", "[::1]:7411", err, sizeof err), 0);
    assert_int_equal(cd_config_check(&c, err, sizeof err), 0);
}

// Under a systemd unit the daemon's socket goes into the unit's runtime directory.
static void socket_in_runtime_directory(void **state) {
    (void)state;
    char path[128];
    assert_int_equal(setenv("RUNTIME_DIRECTORY", "/run/contactd-arm:/run/other", 1), 0);
    assert_int_equal(cd_paths_default_socket(path, sizeof path), 0);
    assert_string_equal(path, "/run/contactd-arm/contactd.sock");
    assert_int_equal(unsetenv("RUNTIME_DIRECTORY"), 0);
    assert_int_equal(cd_paths_default_socket(path, sizeof path), 0);
    assert_string_not_equal(path, "/run/contactd-arm/contactd.sock");
}

static void reload_keeps_restart_keys(void **state) {
    (void)state;
    cd_config cur, next;
    char err[256], changed[512];
    assert_int_equal(cd_config_defaults(&cur), 0);
    next = cur;
    cd_config_keep_restart(&next, &cur, changed, sizeof changed);
    assert_string_equal(changed, "");
    // Live keys pass; restart keys keep the running value and are named.
    assert_int_equal(cd_config_set(&next, "session", "max_contacts", "32", err, sizeof err), 0);
    assert_int_equal(cd_config_set(&next, "server", "hello_timeout_ms", "300", err, sizeof err),
                     0);
    assert_int_equal(cd_config_set(&next, "loop", "rate_hz", "500", err, sizeof err), 0);
    assert_int_equal(cd_config_set(&next, "server", "tcp", "127.0.0.1:9", err, sizeof err), 0);
    assert_int_equal(cd_config_set(&next, "server", "max_sessions", "3", err, sizeof err), 0);
    assert_int_equal(cd_config_set(&next, "loop", "keep_awake", "off", err, sizeof err), 0);
    cd_config_keep_restart(&next, &cur, changed, sizeof changed);
    assert_string_equal(changed, "[server] tcp (port) [server] max_sessions [loop] rate_hz "
                        "[loop] keep_awake");
    assert_true(next.keep_awake);
    assert_int_equal(next.limits.max_contacts, 32);
    assert_int_equal(next.hello_timeout_ns, 300000000);
    assert_int_equal(next.rate_hz, cur.rate_hz);
    assert_int_equal(next.tcp_port, cur.tcp_port);
    assert_int_equal(next.max_sessions, cur.max_sessions);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(full_file),
        cmocka_unit_test(every_solver_is_a_default),
        cmocka_unit_test(bad_value_names_file_line_key),
        cmocka_unit_test(each_error_kind),
        cmocka_unit_test(integer_keys_take_their_range),
        cmocka_unit_test(long_socket_path_refused),
        cmocka_unit_test(overrides_and_off),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(shipped_config_documents_the_defaults),
        cmocka_unit_test(access_keys),
        cmocka_unit_test(reload_keeps_restart_keys),
        cmocka_unit_test(socket_in_runtime_directory),
        cmocka_unit_test(tcp_beyond_loopback_needs_a_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
