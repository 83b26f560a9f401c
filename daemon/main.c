/* SPDX-License-Identifier: MIT */
/* contactd, the real-time contact-force service. main() only connects the modules: it reads the
 * configuration (built-in defaults, then the --config file, then command-line overrides), brings
 * up logging, the session table, the I/O server, the tick thread and the systemd hooks in that
 * order, runs the I/O loop until SIGINT or SIGTERM, and takes everything down in reverse. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "io/server.h"
#include "service/clock.h"
#include "service/loop.h"
#include "service/session.h"
#include "sys/config.h"
#include "sys/log.h"
#include "sys/notify.h"

#define EXIT_USAGE 2

static void usage(FILE *f) {
    fprintf(f,
"Usage: contactd [OPTION]...\n"
"Real-time contact-force service: clients send contact configurations (protobuf, protocol\n"
"contactd.v1) over a Unix-domain socket or TCP; real-time workers solve them on a fixed tick\n"
"grid (stream mode) or as they arrive (request mode), earliest deadline first, each session\n"
"within its own budget, and send back forces, a certificate and a timing record.\n"
"\n"
"Options (each overrides the config file, which overrides the built-in default):\n"
"  -c, --config FILE     read this INI file (default: none, built-in defaults)\n"
"  -s, --socket PATH     Unix-domain socket, or 'off' (default: /run/contactd/contactd.sock\n"
"                        as root, else $XDG_RUNTIME_DIR/contactd.sock, else\n"
"                        /tmp/contactd-$UID.sock)\n"
"  -t, --tcp HOST:PORT   TCP address ([HOST6]:PORT for IPv6), port 0 for any free port, or\n"
"                        'off' (default: 127.0.0.1:7411)\n"
"  -r, --rate HZ         tick rate (default: 1000)\n"
"  -h, --help            show this help and exit\n"
"  -V, --version         show the version and exit\n"
"\n"
"Config keys (INI sections; config/contactd.conf documents each):\n"
"  [server]  socket, tcp, max_sessions = 16, max_message_bytes = 262144,\n"
"            max_queued_bytes = 1048576, memory_budget_mb = 1024, max_connections = 4096,\n"
"            max_connections_per_uid = 1024, max_sessions_per_uid = auto,\n"
"            hello_timeout_ms = 1000, socket_mode = 0660, socket_group, allow_uids,\n"
"            allow_gids, auth_token_file,\n"
"            tcp_allow_any_local_user = no\n"
"  [loop]    rate_hz = 1000, deadline_fraction = 0.8 (default budget), realtime = auto|off,\n"
"            keep_awake = on|off, priority = 50, cpu = auto, workers = auto (cores - 1),\n"
"            long_solve_us = 200\n"
"  [session] default_solver = lemke, max_bodies = 64, max_contacts = 256, max_joints = 64,\n"
"            max_dirs = 16, max_budget_us = 10000, max_session_mb = 64\n"
"  [record]  dir = off (recordings refused), or a directory, or state ($STATE_DIRECTORY,\n"
"            else the socket's), all_sessions = no, buffer_kb = 1024, max_file_mb = 1024\n"
"  [log]     level = info (err, warning, notice, info, debug)\n"
"\n"
"The daemon tells systemd READY=1 (STATUS= names the addresses it listens on, with the bound\n"
"port, and is refreshed every 5 s with sessions, ticks/s, p99 latency and deadline misses in\n"
"the last minute), STOPPING=1 on shutdown, and WATCHDOG=1 while the workers tick when\n"
"WatchdogSec= is set; it accepts sockets from socket activation. As root it creates the\n"
"socket's directory.\n"
"\n"
"Signals: SIGINT, SIGTERM: finish the current tick, send each client its last results and a\n"
"Goodbye, remove the socket file and exit 0. SIGHUP: read the config file again (a bad file\n"
"is refused whole); limits, defaults and access rules apply to new sessions, and the log names\n"
"the keys that need a restart.\n"
"\n"
"Examples:\n"
"  contactd                                   defaults: 1 kHz, default socket, 127.0.0.1:7411\n"
"  contactd --config /etc/contactd/contactd.conf\n"
"  contactd --socket /tmp/cd.sock --tcp off --rate 500\n"
"  contactd --tcp 127.0.0.1:0                 any free port; see the log or STATUS=\n");
}

// Command-line overrides, applied after the config file in the order given.
struct override {
    const char *option;
    const char *section;
    const char *key;
    const char *value;
};

// Returns 0 to run, 1 to exit successfully (help, version), or -1 on a usage error.
static int parse_args(int argc, char **argv, const char **ret_config, struct override *ov,
                      int *ret_nov) {
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'}, {"socket", required_argument, NULL, 's'},
        {"tcp", required_argument, NULL, 't'},    {"rate", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int n = 0, c;
    while ((c = getopt_long(argc, argv, "c:s:t:r:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            *ret_config = optarg;
            break;
        case 's':
            ov[n++] = (struct override){"--socket", "server", "socket", optarg};
            break;
        case 't':
            ov[n++] = (struct override){"--tcp", "server", "tcp", optarg};
            break;
        case 'r':
            ov[n++] = (struct override){"--rate", "loop", "rate_hz", optarg};
            break;
        case 'h':
            usage(stdout);
            return 1;
        case 'V':
            printf("contactd %s (protocol contactd.v1)\n", CONTACTD_VERSION);
            return 1;
        default:
            fprintf(stderr, "Try 'contactd --help' for more information.\n");
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "contactd: unexpected argument '%s'\n"
                        "Try 'contactd --help' for more information.\n", argv[optind]);
        return -1;
    }
    *ret_nov = n;
    return 0;
}

// Defaults, then the file, then the overrides. Returns 0 or -1 after logging the exact error.
static int load_config(cd_config *cfg, const char *path, const struct override *ov, int nov) {
    char err[512];
    if (cd_config_defaults(cfg) < 0) {
        cd_log(CD_LOG_ERR, "the default socket path is too long; set [server] socket");
        return -1;
    }
    if (path && cd_config_load(cfg, path, err, sizeof err) < 0) {
        cd_log(CD_LOG_ERR, "%s", err);
        return -1;
    }
    for (int i = 0; i < nov; i++) {
        if (cd_config_set(cfg, ov[i].section, ov[i].key, ov[i].value, err, sizeof err) < 0) {
            cd_log(CD_LOG_ERR, "%s %s: %s", ov[i].option, ov[i].value, err);
            return -1;
        }
    }
    if (cd_config_check(cfg, err, sizeof err) < 0) {
        cd_log(CD_LOG_ERR, "%s%s%s", path ? path : "", path ? ": " : "", err);
        return -1;
    }
    return 0;
}

// As root (a system service), the socket's directory (/run/contactd by default) is ours to make.
static int make_socket_dir(const char *socket) {
    if (socket[0] == '\0' || geteuid() != 0) {
        return 0;
    }
    char buf[CD_SOCKET_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", socket);
    const char *dir = dirname(buf);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        cd_log(CD_LOG_ERR, "cannot create the socket directory %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

// Every connection is a descriptor: lift the soft limit (often 1024) towards max_connections
// plus what the daemon itself holds, as far as the hard limit allows.
static void raise_fd_limit(int max_connections) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
        return;
    }
    const rlim_t want = (rlim_t)max_connections + CD_SERVER_LINGERING_MAX + 64;
    if (rl.rlim_cur >= want) {
        return;
    }
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < want) {
        cd_log(CD_LOG_WARNING, "open files limited to %llu, below [server] max_connections "
               "(%d) + %d", (unsigned long long)rl.rlim_cur, max_connections,
               CD_SERVER_LINGERING_MAX + 64);
    }
}

struct daemon {
    uv_loop_t loop;
    cd_config cfg;
    cd_session_table *table;
    cd_server *server;
    cd_loop *ticker;
    cd_watchdog watchdog;
    cd_status status;
    cd_headline headline;         /* the STATUS line's samples */
    uv_signal_t sigint, sigterm, sighup;
    bool signals_open;
    uint64_t ticks_seen;
    const char *config_path;      /* what SIGHUP reads again, with the same overrides */
    const struct override *ov;
    int nov;
};

// The watchdog is petted only while the tick thread keeps ticking.
static bool ticker_alive(void *arg) {
    struct daemon *d = arg;
    const uint64_t t = cd_loop_ticks(d->ticker);
    const bool moved = t != d->ticks_seen;
    d->ticks_seen = t;
    return moved;
}

// The STATUS= line: where the daemon listens, then the headline of a fresh snapshot.
static void status_line(void *arg, char *buf, size_t len) {
    struct daemon *d = arg;
    cd_stats st = {0};
    cd_loop_stats(d->ticker, &st);
    cd_session_table_stats(d->table, &st);
    const int n = snprintf(buf, len, "listening on %s; ", cd_server_address(d->server));
    if (n > 0 && (size_t)n < len) {
        cd_headline_update(&d->headline, &st, cd_clock_ns(), buf + n, len - (size_t)n);
    }
}

// Takes down what runs on the loop, in reverse order of start; uv_run returns once every handle
// has finished closing. The workers stop first (each finishes the tick it is in): they must not
// wake a closed handle. goodbye: as cd_server_close.
static void stop_running(struct daemon *d, const char *goodbye) {
    if (d->signals_open) {
        uv_close((uv_handle_t *)&d->sigterm, NULL);
        uv_close((uv_handle_t *)&d->sigint, NULL);
        uv_close((uv_handle_t *)&d->sighup, NULL);
        d->signals_open = false;
    }
    cd_status_stop(&d->status);
    cd_watchdog_stop(&d->watchdog);
    if (d->ticker) {
        cd_loop_stop(d->ticker);
    }
    if (d->server) {
        cd_server_close(d->server, goodbye);
    }
}

static void on_signal(uv_signal_t *h, int signum) {
    struct daemon *d = h->data;
    cd_log(CD_LOG_NOTICE, "%s: shutting down", strsignal(signum));
    (void)cd_notify_stopping();
    char reason[64];
    snprintf(reason, sizeof reason, "the daemon is shutting down (%s)",
             signum == SIGINT ? "SIGINT" : "SIGTERM");
    stop_running(d, reason);
}

// SIGHUP: reads the config file again, whole or not at all. What may change live applies to
// connections and sessions made from now on; the rest keeps its running value, named in the log.
static void on_reload(uv_signal_t *h, int signum) {
    (void)signum;
    struct daemon *d = h->data;
    cd_config next;
    if (load_config(&next, d->config_path, d->ov, d->nov) < 0) {
        cd_log(CD_LOG_ERR, "reload: the configuration above is refused; the running one stays");
        return;
    }
    char changed[512], err[512];
    cd_config_keep_restart(&next, &d->cfg, changed, sizeof changed);
    // Checked again with the running values it keeps: a file that moves a listener beyond
    // loopback to loopback and drops the token is fine alone, not beside the listener that stays.
    if (cd_config_check(&next, err, sizeof err) < 0) {
        cd_log(CD_LOG_ERR, "reload: %s (beside the running value of a key that needs a restart); "
               "the running one stays", err);
        return;
    }
    d->cfg = next;
    cd_log_init(d->cfg.log_level);
    // A live key: the connections it lets in need their descriptors now, as at start.
    raise_fd_limit(d->cfg.max_connections);
    cd_log(CD_LOG_NOTICE, "reload: %s read; new sessions get its values%s%s%s",
           d->config_path ? d->config_path : "(no config file: built-in defaults)",
           changed[0] ? "; needs a restart to change: " : "", changed,
           changed[0] ? " (unchanged until then)" : "");
}

static int start_signals(struct daemon *d) {
    // uv_signal_init cannot fail on Linux once the loop runs (it only adds to its lists).
    (void)uv_signal_init(&d->loop, &d->sigint);
    (void)uv_signal_init(&d->loop, &d->sigterm);
    (void)uv_signal_init(&d->loop, &d->sighup);
    d->signals_open = true;
    d->sigint.data = d->sigterm.data = d->sighup.data = d;
    int r = uv_signal_start(&d->sigint, on_signal, SIGINT);
    if (r == 0) {
        r = uv_signal_start(&d->sigterm, on_signal, SIGTERM);
    }
    if (r == 0) {
        r = uv_signal_start(&d->sighup, on_reload, SIGHUP);
    }
    return r;
}

int main(int argc, char **argv) {
    static struct daemon d;
    const char *config_path = NULL;
    struct override ov[64];
    int nov = 0;
    // Every option adds at most one override, so argc bounds them; cap it for the array.
    if (argc > (int)(sizeof ov / sizeof ov[0])) {
        fprintf(stderr, "contactd: too many arguments\n");
        return EXIT_USAGE;
    }
    const int a = parse_args(argc, argv, &config_path, ov, &nov);
    if (a != 0) {
        return a > 0 ? EXIT_SUCCESS : EXIT_USAGE;
    }
    cd_log_init(CD_LOG_INFO);
    d.config_path = config_path;
    d.ov = ov;
    d.nov = nov;
    if (load_config(&d.cfg, config_path, ov, nov) < 0) {
        return EXIT_FAILURE;
    }
    cd_log_init(d.cfg.log_level);

    char err[512];
    int ufd = -1, tfd = -1;
    const int nfds = cd_notify_listen_fds(&ufd, &tfd, err, sizeof err);
    if (nfds < 0) {
        cd_log(CD_LOG_ERR, "%s", err);
        return EXIT_FAILURE;
    }
    if (nfds == 0 && make_socket_dir(d.cfg.socket) < 0) {
        return EXIT_FAILURE;
    }
    // A client that disconnects while we write must cost an EPIPE, not the process.
    signal(SIGPIPE, SIG_IGN);
    // Sessions come and go all day, and with the memory locked (mlockall) whatever the allocator
    // keeps stays resident (madvise cannot release locked pages). So every block of a session's
    // size is its own mapping, returned whole when the session is freed (no threshold that
    // rises after the first frees), and the admission threads share a couple of arenas.
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    mallopt(M_ARENA_MAX, 2);
    raise_fd_limit(d.cfg.max_connections);

    int status = EXIT_FAILURE;
    int r = uv_loop_init(&d.loop);
    if (r < 0) {
        cd_log(CD_LOG_ERR, "uv_loop_init: %s", uv_strerror(r));
        return EXIT_FAILURE;
    }
    d.table = cd_session_table_new(d.cfg.max_sessions);
    if (!d.table) {
        cd_log(CD_LOG_ERR, "cannot allocate the session table");
        goto out_loop;
    }
    r = cd_server_new(&d.loop, &d.cfg, d.table, &d.server);
    if (r < 0) {
        cd_log(CD_LOG_ERR, "cannot create the server: %s", uv_strerror(r));
        goto out_table;
    }
    // One worker CPU per core but one (the I/O thread and the clients need a core), at least one.
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const cd_loop_params lp = {
        .rate_hz = d.cfg.rate_hz,
        .workers = d.cfg.workers > 0 ? d.cfg.workers : online > 2 ? (int)online - 1 : 1,
        .long_solve_ns = d.cfg.long_solve_ns,
        .realtime = d.cfg.realtime,
        .priority = d.cfg.priority,
        .cpu = d.cfg.cpu,
        .keep_awake = d.cfg.keep_awake,
    };
    d.ticker = cd_loop_new(d.table, &lp, cd_server_wake(d.server));
    if (!d.ticker) {
        cd_log(CD_LOG_ERR, "cannot create the tick loop");
        goto out_running;
    }
    r = cd_server_listen(d.server, d.ticker, ufd, tfd, err, sizeof err);
    if (r < 0) {
        cd_log(CD_LOG_ERR, "%s", err);
        goto out_running;
    }
    r = cd_loop_start(d.ticker);
    if (r < 0) {
        goto out_running;
    }
    r = start_signals(&d);
    if (r < 0) {
        cd_log(CD_LOG_ERR, "signal handlers: %s", uv_strerror(r));
        goto out_running;
    }
    r = cd_watchdog_start(&d.watchdog, &d.loop, ticker_alive, &d);
    if (r < 0) {
        cd_log(CD_LOG_ERR, "watchdog: %s", uv_strerror(r));
        goto out_running;
    }
    r = cd_status_start(&d.status, &d.loop, status_line, &d);
    if (r < 0) {
        cd_log(CD_LOG_ERR, "STATUS refresh: %s", uv_strerror(r));
        goto out_running;
    }
    cd_log(CD_LOG_NOTICE, "contactd %s listening on %s", CONTACTD_VERSION,
           cd_server_address(d.server));
    char ready[sizeof err];
    snprintf(ready, sizeof ready, "listening on %s", cd_server_address(d.server));
    (void)cd_notify_ready(ready);

    r = uv_run(&d.loop, UV_RUN_DEFAULT);
    status = EXIT_SUCCESS;

out_running:
    // On the error paths this closes what was started; after a signal it is already done.
    stop_running(&d, NULL);
    (void)uv_run(&d.loop, UV_RUN_DEFAULT);
    cd_server_free(d.server);
    cd_loop_free(d.ticker);
out_table:
    cd_session_table_free(d.table);
out_loop:
    r = uv_loop_close(&d.loop);
    if (r < 0) {
        cd_log(CD_LOG_WARNING, "uv_loop_close: %s", uv_strerror(r));
    }
    return status;
}
