/* SPDX-License-Identifier: MIT */
/* Configuration: defaults, INI file, overrides (see config.h). Every key is one row of `keys`:
 * a parser that checks its value, or an integer's range, unit and field, so the file, the command
 * line and the documentation in config/contactd.conf all describe the same set. */
#include "sys/config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <math.h>
#include <pwd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/contact.h"
#include "wire/paths.h"

// `dir = state`: recordings go to systemd's StateDirectory= (the first of the list) when the unit
// has one, else next to the default socket (the user's runtime directory, or /tmp).
static int default_record_dir(char *buf, size_t len) {
    const char *st = getenv("STATE_DIRECTORY");
    int n;
    if (st && st[0] != '\0' && st[0] != ':') {
        n = snprintf(buf, len, "%.*s", (int)strcspn(st, ":"), st);
    } else {
        char sock[CD_SOCKET_PATH_MAX];
        if (cd_paths_default_socket(sock, sizeof sock) < 0) {
            return -ENAMETOOLONG;
        }
        const char *slash = strrchr(sock, '/');
        n = snprintf(buf, len, "%.*s", slash && slash != sock ? (int)(slash - sock) : 1, sock);
    }
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cd_config_defaults(cd_config *c) {
    *c = (cd_config){
        .tcp_port = CD_TCP_PORT_DEFAULT,
        .max_sessions = CD_MAX_SESSIONS_DEFAULT,
        .max_message_bytes = CD_MAX_MESSAGE_BYTES_DEFAULT,
        .max_queued_bytes = CD_MAX_QUEUED_BYTES_DEFAULT,
        .rate_hz = CD_RATE_HZ_DEFAULT,
        .deadline_fraction = CD_DEADLINE_FRACTION_DEFAULT,
        .realtime = true,
        .keep_awake = true,
        .priority = CD_PRIORITY_DEFAULT,
        .cpu = -1,
        .workers = -1,
        .long_solve_ns = CD_LONG_SOLVE_US_DEFAULT * 1000,
        .max_budget_ns = CD_MAX_BUDGET_US_DEFAULT * 1000,
        .max_session_bytes = (size_t)CD_MAX_SESSION_MB_DEFAULT << 20,
        .memory_budget_bytes = (size_t)CD_MEMORY_BUDGET_MB_DEFAULT << 20,
        .max_connections = CD_MAX_CONNECTIONS_DEFAULT,
        .max_connections_per_uid = CD_MAX_CONNECTIONS_PER_UID_DEFAULT,
        .max_sessions_per_uid = -1,
        .hello_timeout_ns = (int64_t)CD_HELLO_TIMEOUT_MS_DEFAULT * 1000000,
        .socket_mode = CD_SOCKET_MODE_DEFAULT,
        .default_solver = CS_SOLVER_LEMKE,
        .limits = {.max_bodies = CD_MAX_BODIES_DEFAULT,
                   .max_contacts = CD_MAX_CONTACTS_DEFAULT,
                   .max_joints = CD_MAX_JOINTS_DEFAULT,
                   .max_dirs = CD_MAX_DIRS_DEFAULT},
        .record_buffer_bytes = (size_t)CD_RECORD_BUFFER_KB_DEFAULT << 10,
        .record_max_file_bytes = (uint64_t)CD_RECORD_MAX_FILE_MB_DEFAULT << 20,
        .log_level = CD_LOG_INFO,
    };
    snprintf(c->tcp_host, sizeof c->tcp_host, "%s", CD_TCP_HOST_DEFAULT);
    // Recording stays off (record_dir empty) until the operator names a directory: a client
    // must not be able to make the daemon fill a disk it was never told to write to.
    return cd_paths_default_socket(c->socket, sizeof c->socket);
}

// Parses a whole decimal integer in [lo, hi]. Returns 0, or -EINVAL with the reason in why.
static int parse_int(const char *v, long long lo, long long hi, long long *ret, char *why,
                     size_t len) {
    char *end;
    errno = 0;
    const long long x = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi) {
        snprintf(why, len, "expected an integer in [%lld, %lld], got '%s'", lo, hi, v);
        return -EINVAL;
    }
    *ret = x;
    return 0;
}

// Parses one of two words: on (*ret = true) or off (*ret = false). Returns 0, or -EINVAL with the
// reason in why.
static int parse_switch(const char *v, const char *on, const char *off, bool *ret, char *why,
                        size_t len) {
    if (strcmp(v, on) != 0 && strcmp(v, off) != 0) {
        snprintf(why, len, "expected '%s' or '%s', got '%s'", on, off, v);
        return -EINVAL;
    }
    *ret = strcmp(v, on) == 0;
    return 0;
}

// Parses "auto" (-1) or an integer in [lo, hi].
static int parse_auto_int(const char *v, long long lo, long long hi, long long *ret, char *why,
                          size_t len) {
    if (strcmp(v, "auto") == 0) {
        *ret = -1;
        return 0;
    }
    if (parse_int(v, lo, hi, ret, why, len) < 0) {
        snprintf(why, len, "expected 'auto' or an integer in [%lld, %lld], got '%s'", lo, hi, v);
        return -EINVAL;
    }
    return 0;
}

static int set_socket(cd_config *c, const char *v, char *why, size_t len) {
    if (strcmp(v, "off") == 0) {
        c->socket[0] = '\0';
        return 0;
    }
    if (v[0] == '\0') {
        // An empty value restores the default, which depends on who runs the daemon.
        return cd_paths_default_socket(c->socket, sizeof c->socket) < 0 ? -EINVAL : 0;
    }
    if (strlen(v) >= sizeof c->socket) {
        snprintf(why, len, "path longer than %zu bytes", sizeof c->socket - 1);
        return -EINVAL;
    }
    snprintf(c->socket, sizeof c->socket, "%s", v);
    return 0;
}

static int set_tcp(cd_config *c, const char *v, char *why, size_t len) {
    if (strcmp(v, "off") == 0) {
        c->tcp_host[0] = '\0';
        return 0;
    }
    // HOST:PORT with a numeric IPv4 host, or [HOST]:PORT with a numeric IPv6 host.
    const char *colon = strrchr(v, ':');
    const char *host = v;
    size_t hostlen = colon ? (size_t)(colon - v) : 0;
    if (v[0] == '[' && colon && colon > v + 1 && colon[-1] == ']') {
        host = v + 1;
        hostlen -= 2;
    }
    char h[sizeof c->tcp_host];
    long long port;
    unsigned char addr[16];
    if (!colon || hostlen == 0 || hostlen >= sizeof h) {
        snprintf(why, len, "expected HOST:PORT, [HOST6]:PORT or 'off', got '%s'", v);
        return -EINVAL;
    }
    memcpy(h, host, hostlen);
    h[hostlen] = '\0';
    if (inet_pton(host == v ? AF_INET : AF_INET6, h, addr) != 1) {
        snprintf(why, len, "'%s' is not a numeric IP%s address", h, host == v ? "v4" : "v6");
        return -EINVAL;
    }
    if (parse_int(colon + 1, 0, 65535, &port, why, len) < 0) {
        snprintf(why, len, "port: expected an integer in [0, 65535], got '%s'", colon + 1);
        return -EINVAL;
    }
    memcpy(c->tcp_host, h, hostlen + 1);
    c->tcp_port = (int)port;
    return 0;
}

static int set_socket_mode(cd_config *c, const char *v, char *why, size_t len) {
    char *end;
    errno = 0;
    const unsigned long x = strtoul(v, &end, 8);
    if (end == v || *end != '\0' || errno == ERANGE || x > 0777) {
        snprintf(why, len, "expected octal permission bits such as 0660, got '%s'", v);
        return -EINVAL;
    }
    c->socket_mode = (unsigned)x;
    return 0;
}

static int set_socket_group(cd_config *c, const char *v, char *why, size_t len) {
    if (strlen(v) >= sizeof c->socket_group) {
        snprintf(why, len, "group name longer than %zu bytes", sizeof c->socket_group - 1);
        return -EINVAL;
    }
    snprintf(c->socket_group, sizeof c->socket_group, "%s", v);
    return 0;
}

// A user or group, by number or by name (users when user is true), as its id.
static int parse_id(const char *v, bool user, uint32_t *ret) {
    char *end;
    errno = 0;
    const unsigned long x = strtoul(v, &end, 10);
    if (end != v && *end == '\0' && errno == 0 && x < UINT32_MAX) {
        *ret = (uint32_t)x;
        return 0;
    }
    if (user) {
        const struct passwd *pw = getpwnam(v);
        *ret = pw ? (uint32_t)pw->pw_uid : 0;
        return pw ? 0 : -ENOENT;
    }
    const struct group *gr = getgrnam(v);
    *ret = gr ? (uint32_t)gr->gr_gid : 0;
    return gr ? 0 : -ENOENT;
}

// A space- or comma-separated list of users or groups into ids[CD_ALLOW_MAX].
static int parse_ids(const char *v, bool user, uint32_t *ids, int *ret_n, char *why,
                     size_t len) {
    char buf[1024];
    if (strlen(v) >= sizeof buf) {
        snprintf(why, len, "list longer than %zu bytes", sizeof buf - 1);
        return -EINVAL;
    }
    snprintf(buf, sizeof buf, "%s", v);
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " ,\t", &save); t; t = strtok_r(NULL, " ,\t", &save)) {
        if (n == CD_ALLOW_MAX) {
            snprintf(why, len, "more than %d entries", CD_ALLOW_MAX);
            return -EINVAL;
        }
        if (parse_id(t, user, &ids[n]) < 0) {
            snprintf(why, len, "no %s '%s' on this system", user ? "user" : "group", t);
            return -EINVAL;
        }
        n++;
    }
    *ret_n = n;
    return 0;
}

static int set_allow_uids(cd_config *c, const char *v, char *why, size_t len) {
    uint32_t ids[CD_ALLOW_MAX];
    int n;
    const int r = parse_ids(v, true, ids, &n, why, len);
    if (r == 0) {
        memcpy(c->allow_uids, ids, sizeof ids);
        c->nallow_uids = n;
    }
    return r;
}

static int set_allow_gids(cd_config *c, const char *v, char *why, size_t len) {
    uint32_t ids[CD_ALLOW_MAX];
    int n;
    const int r = parse_ids(v, false, ids, &n, why, len);
    if (r == 0) {
        memcpy(c->allow_gids, ids, sizeof ids);
        c->nallow_gids = n;
    }
    return r;
}

static int set_auth_token_file(cd_config *c, const char *v, char *why, size_t len) {
    if (v[0] == '\0') {
        c->auth_token_file[0] = c->auth_token[0] = '\0';
        return 0;
    }
    if (strlen(v) >= sizeof c->auth_token_file) {
        snprintf(why, len, "path longer than %zu bytes", sizeof c->auth_token_file - 1);
        return -EINVAL;
    }
    FILE *f = fopen(v, "r");
    if (!f) {
        snprintf(why, len, "%s: cannot read: %s", v, strerror(errno));
        return -EINVAL;
    }
    char line[CD_TOKEN_MAX + 2] = "";
    const bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    const size_t n = strlen(line);
    if (!got || n < CD_TOKEN_MIN || n > CD_TOKEN_MAX) {
        snprintf(why, len, "%s: the first line must be the token, %d to %d bytes (got %zu)", v,
                 CD_TOKEN_MIN, CD_TOKEN_MAX, got ? n : 0);
        return -EINVAL;
    }
    snprintf(c->auth_token_file, sizeof c->auth_token_file, "%s", v);
    memcpy(c->auth_token, line, n + 1);
    return 0;
}

static int set_tcp_allow_any_local_user(cd_config *c, const char *v, char *why, size_t len) {
    return parse_switch(v, "yes", "no", &c->tcp_allow_any_local_user, why, len);
}

static int set_deadline_fraction(cd_config *c, const char *v, char *why, size_t len) {
    char *end;
    const double x = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(x) || x <= 0.0 || x > 1.0) {
        snprintf(why, len, "expected a number in (0, 1], got '%s'", v);
        return -EINVAL;
    }
    c->deadline_fraction = x;
    return 0;
}

static int set_realtime(cd_config *c, const char *v, char *why, size_t len) {
    return parse_switch(v, "auto", "off", &c->realtime, why, len);
}

static int set_keep_awake(cd_config *c, const char *v, char *why, size_t len) {
    return parse_switch(v, "on", "off", &c->keep_awake, why, len);
}

static int set_default_solver(cd_config *c, const char *v, char *why, size_t len) {
    cs_solver s;
    char avail[128];
    cs_solver_list(cs_solver_mask(true), CS_SOLVER_DEFAULT, avail, sizeof avail);
    if (cs_solver_from_name(v, &s) < 0 || s == CS_SOLVER_DEFAULT) {
        snprintf(why, len, "unknown solver '%s' (available: %s)", v, avail);
        return -EINVAL;
    }
    if (!cs_solver_is_available(s)) {
        snprintf(why, len, "solver '%s' is not available in this build (available: %s)", v,
                 avail);
        return -EINVAL;
    }
    c->default_solver = s;
    return 0;
}

static int set_max_dirs(cd_config *c, const char *v, char *why, size_t len) {
    long long x;
    int r = parse_int(v, 4, 256, &x, why, len);
    if (r == 0 && x % 2 != 0) {
        // The friction pyramid's directions come in opposite pairs.
        snprintf(why, len, "expected an even number, got %lld", x);
        return -EINVAL;
    }
    c->limits.max_dirs = r < 0 ? c->limits.max_dirs : (int)x;
    return r;
}

static int set_record_dir(cd_config *c, const char *v, char *why, size_t len) {
    if (strcmp(v, "off") == 0) {
        c->record_dir[0] = '\0';
        return 0;
    }
    if (strcmp(v, "state") == 0) {
        return default_record_dir(c->record_dir, sizeof c->record_dir) < 0 ? -EINVAL : 0;
    }
    if (v[0] != '/' || strlen(v) >= sizeof c->record_dir) {
        snprintf(why, len, "expected an absolute directory path shorter than %zu bytes, 'state' "
                 "or 'off', got '%s'", sizeof c->record_dir, v);
        return -EINVAL;
    }
    snprintf(c->record_dir, sizeof c->record_dir, "%s", v);
    return 0;
}

static int set_record_all(cd_config *c, const char *v, char *why, size_t len) {
    return parse_switch(v, "yes", "no", &c->record_all, why, len);
}

static int set_log_level(cd_config *c, const char *v, char *why, size_t len) {
    if (cd_log_level_from_name(v, &c->log_level) < 0) {
        snprintf(why, len, "expected err, warning, notice, info or debug, got '%s'", v);
        return -EINVAL;
    }
    return 0;
}

/* An integer key: the value written, in [lo, hi] (or "auto", stored as -1, where autoable), times
 * unit (ms to ns, MiB to bytes, ...), goes to the cd_config field at off, of size bytes: an int
 * or uint32_t, or an int64_t, size_t or uint64_t, whose values here all fit an int64_t. */
typedef struct int_key {
    long long lo, hi, unit;
    bool autoable;
    size_t off, size;
} int_key;

// A field's offset and size; a size set_int does not store (4 or 8 bytes) fails to compile.
#define INT_FIELD(field) offsetof(cd_config, field), INT_SIZE(sizeof(((cd_config *)0)->field))
#define INT_SIZE(n) ((n) + 0 * sizeof(char[(n) == 4 || (n) == 8 ? 1 : -1]))
#define INT_KEY(field, lo, hi, unit)                                                               \
    { lo, hi, unit, false, INT_FIELD(field) }
#define AUTO_INT_KEY(field, lo, hi, unit)                                                          \
    { lo, hi, unit, true, INT_FIELD(field) }

// Parses an integer key's value and stores it, times its unit, in its field. Returns 0, or
// -EINVAL with the reason in why.
static int set_int(cd_config *c, const int_key *k, const char *v, char *why, size_t len) {
    long long x;
    const int r = k->autoable ? parse_auto_int(v, k->lo, k->hi, &x, why, len)
                              : parse_int(v, k->lo, k->hi, &x, why, len);
    if (r < 0) {
        return r;
    }
    x = x < 0 ? x : x * k->unit; // "auto" stays -1
    char *field = (char *)c + k->off;
    if (k->size == sizeof(int32_t)) {
        const int32_t x32 = (int32_t)x;
        memcpy(field, &x32, sizeof x32);
    } else {
        const int64_t x64 = x;
        memcpy(field, &x64, sizeof x64);
    }
    return 0;
}

/* Every key: its own parser (set), or an integer (num, where set is NULL). */
static const struct key {
    const char *section;
    const char *name;
    int (*set)(cd_config *c, const char *v, char *why, size_t len);
    int_key num;
} keys[] = {
    {"server", "socket", .set = set_socket},
    {"server", "tcp", .set = set_tcp},
    {"server", "max_sessions", .num = INT_KEY(max_sessions, 1, 4096, 1)},
    // 1 KiB holds a Hello and a small frame; 64 MiB bounds what one client can make us buffer.
    {"server", "max_message_bytes", .num = INT_KEY(max_message_bytes, 1024, 64 << 20, 1)},
    {"server", "max_queued_bytes", .num = INT_KEY(max_queued_bytes, 1024, 1LL << 30, 1)},
    {"server", "memory_budget_mb", .num = INT_KEY(memory_budget_bytes, 1, 1 << 24, 1LL << 20)},
    {"server", "max_connections", .num = INT_KEY(max_connections, 1, 1 << 20, 1)},
    {"server", "max_connections_per_uid", .num = INT_KEY(max_connections_per_uid, 1, 1 << 20, 1)},
    {"server", "max_sessions_per_uid", .num = AUTO_INT_KEY(max_sessions_per_uid, 1, 4096, 1)},
    {"server", "hello_timeout_ms", .num = INT_KEY(hello_timeout_ns, 10, 600000, 1000000)},
    {"server", "socket_mode", .set = set_socket_mode},
    {"server", "socket_group", .set = set_socket_group},
    {"server", "allow_uids", .set = set_allow_uids},
    {"server", "allow_gids", .set = set_allow_gids},
    {"server", "auth_token_file", .set = set_auth_token_file},
    {"server", "tcp_allow_any_local_user", .set = set_tcp_allow_any_local_user},
    {"loop", "rate_hz", .num = INT_KEY(rate_hz, 1, 100000, 1)},
    {"loop", "deadline_fraction", .set = set_deadline_fraction},
    {"loop", "realtime", .set = set_realtime},
    {"loop", "keep_awake", .set = set_keep_awake},
    // The background workers run one priority below, and SCHED_FIFO starts at 1.
    {"loop", "priority", .num = INT_KEY(priority, 2, 99, 1)},
    {"loop", "cpu", .num = AUTO_INT_KEY(cpu, 0, 1023, 1)},
    {"loop", "workers", .num = AUTO_INT_KEY(workers, 1, 256, 1)},
    {"loop", "long_solve_us", .num = INT_KEY(long_solve_ns, 1, 10000000, 1000)},
    {"session", "default_solver", .set = set_default_solver},
    {"session", "max_bodies", .num = INT_KEY(limits.max_bodies, 1, 100000, 1)},
    {"session", "max_contacts", .num = INT_KEY(limits.max_contacts, 1, 100000, 1)},
    {"session", "max_joints", .num = INT_KEY(limits.max_joints, 0, 100000, 1)},
    {"session", "max_dirs", .set = set_max_dirs},
    {"session", "max_budget_us", .num = INT_KEY(max_budget_ns, 1, 10000000, 1000)},
    {"session", "max_session_mb", .num = INT_KEY(max_session_bytes, 1, 1 << 20, 1LL << 20)},
    {"record", "dir", .set = set_record_dir},
    {"record", "all_sessions", .set = set_record_all},
    {"record", "buffer_kb", .num = INT_KEY(record_buffer_bytes, 64, 1 << 20, 1LL << 10)},
    {"record", "max_file_mb", .num = INT_KEY(record_max_file_bytes, 1, 1 << 24, 1LL << 20)},
    {"log", "level", .set = set_log_level},
};

int cd_config_set(cd_config *c, const char *section, const char *key, const char *value,
                  char *err, size_t errlen) {
    if (key[0] == '\0') {
        snprintf(err, errlen, "[%s] (empty): a key name is missing", section);
        return -EINVAL;
    }
    bool section_known = false;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(section, keys[i].section) != 0) {
            continue;
        }
        section_known = true;
        if (strcmp(key, keys[i].name) == 0) {
            char why[256] = "invalid value";
            const int r = keys[i].set ? keys[i].set(c, value, why, sizeof why)
                                      : set_int(c, &keys[i].num, value, why, sizeof why);
            if (r < 0) {
                snprintf(err, errlen, "[%s] %s: %s", section, key, why);
                return -EINVAL;
            }
            return 0;
        }
    }
    snprintf(err, errlen, "[%s] %s: unknown %s", section, key, section_known ? "key" : "section");
    return -EINVAL;
}

// inih reads through this reader so the handler knows the line it is called for (Debian's
// libinih is built without INI_HANDLER_LINENO). A chunk not ending in '\n' is part of a line
// longer than inih's buffer, so the next chunk does not start a new line.
struct reader {
    FILE *f;
    int line;
    bool at_line_start;
};

static char *read_line(char *str, int num, void *stream) {
    struct reader *r = stream;
    char *s = fgets(str, num, r->f);
    if (s) {
        r->line += r->at_line_start;
        const size_t n = strlen(s);
        r->at_line_start = n > 0 && s[n - 1] == '\n';
    }
    return s;
}

struct load {
    cd_config *c;
    struct reader rd;
    int err_line;  /* line of the first key that failed, 0 if none */
    char why[384];
};

static int on_key(void *user, const char *section, const char *name, const char *value) {
    struct load *ld = user;
    // Only the first error is reported; later lines are not applied once one failed.
    if (ld->err_line != 0) {
        return 1;
    }
    if (cd_config_set(ld->c, section, name, value, ld->why, sizeof ld->why) < 0) {
        ld->err_line = ld->rd.line;
        return 0;
    }
    return 1;
}

int cd_config_load(cd_config *c, const char *path, char *err, size_t errlen) {
    struct load ld = {.c = c, .rd = {.at_line_start = true}};
    ld.rd.f = fopen(path, "r");
    if (!ld.rd.f) {
        const int e = errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        return -e;
    }
    const int first = ini_parse_stream(read_line, &ld.rd, on_key, &ld);
    fclose(ld.rd.f);
    if (first == 0) {
        return 0;
    }
    if (first < 0) {
        snprintf(err, errlen, "%s: cannot read", path);
        return -EIO;
    }
    // inih reports the first bad line, a key we refused or a line it could not parse; a
    // syntax error on an earlier line than our refusal is the one to report.
    if (ld.err_line != 0 && ld.err_line <= first) {
        snprintf(err, errlen, "%s:%d: %s", path, ld.err_line, ld.why);
    } else {
        snprintf(err, errlen, "%s:%d: syntax error: expected '[section]' or 'key = value'", path,
                 first);
    }
    return -EINVAL;
}

// Keeps cur's value of one restart-only field in next, naming the key when next wanted another.
// differs: whether next's value is another (strings compare as strings).
#define KEEP_IF(differs, field, key)                                                        \
    do {                                                                                    \
        if (differs) {                                                                      \
            n += (size_t)snprintf(changed + n, len > n ? len - n : 0, "%s%s", n ? " " : "", \
                                  key);                                                     \
            memcpy(&next->field, &cur->field, sizeof cur->field);                           \
        }                                                                                   \
    } while (0)
#define KEEP(field, key) KEEP_IF(next->field != cur->field, field, key)
#define KEEP_STR(field, key) KEEP_IF(strcmp(next->field, cur->field) != 0, field, key)

void cd_config_keep_restart(cd_config *next, const cd_config *cur, char *changed, size_t len) {
    size_t n = 0;
    if (len > 0) {
        changed[0] = '\0';
    }
    KEEP_STR(socket, "[server] socket");
    KEEP_STR(tcp_host, "[server] tcp");
    KEEP(tcp_port, "[server] tcp (port)");
    KEEP(socket_mode, "[server] socket_mode");
    KEEP_STR(socket_group, "[server] socket_group");
    KEEP(max_sessions, "[server] max_sessions");
    KEEP(rate_hz, "[loop] rate_hz");
    KEEP(realtime, "[loop] realtime");
    KEEP(keep_awake, "[loop] keep_awake");
    KEEP(priority, "[loop] priority");
    KEEP(cpu, "[loop] cpu");
    KEEP(workers, "[loop] workers");
    KEEP(long_solve_ns, "[loop] long_solve_us");
}

#undef KEEP_STR
#undef KEEP
#undef KEEP_IF

// 127.0.0.0/8 or ::1 (the address is numeric: set_tcp checked it).
static bool is_loopback(const char *host) {
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1) {
        return (ntohl(a4.s_addr) >> 24) == 127;
    }
    return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

int cd_config_check(const cd_config *c, char *err, size_t errlen) {
    if (c->socket[0] == '\0' && c->tcp_host[0] == '\0') {
        snprintf(err, errlen, "[server] socket and tcp are both off: nothing to listen on");
        return -EINVAL;
    }
    if (c->tcp_host[0] != '\0' && c->auth_token[0] == '\0' && !is_loopback(c->tcp_host)) {
        snprintf(err, errlen, "[server] tcp: %s is not a loopback address: a TCP listener that "
                 "other hosts can reach needs [server] auth_token_file", c->tcp_host);
        return -EINVAL;
    }
    if (c->max_session_bytes > c->memory_budget_bytes) {
        snprintf(err, errlen, "[session] max_session_mb: %zu MiB is more than the whole "
                 "[server] memory_budget_mb (%zu MiB)", c->max_session_bytes >> 20,
                 c->memory_budget_bytes >> 20);
        return -EINVAL;
    }
    return 0;
}
