/* SPDX-License-Identifier: MIT */
/* The service as a user meets it. This program starts the contactd that meson built, with the
 * daemon's default configuration except a temporary Unix socket, TCP on 127.0.0.1:0 and, only
 * when the default max_sessions is below the 32 sessions of the stream case, max_sessions; it
 * plays systemd for it (NOTIFY_SOCKET, READY=1 with the addresses in STATUS=, through
 * tests/lib/daemon_proc.h as the integration tests do) and talks to it as an outside client,
 * from one poll()-driven thread that drives every session of a case: libcontactd-client for the
 * handshake and for reading (its plain API, cdc_msg_recv, as a program using it reads); each
 * frame packed ahead of its time with the daemon's codec (what cdc_wire_frame_send does) in an
 * idle moment, so at its send time on CLOCK_MONOTONIC only the write (cdc_wire_send_packed) is
 * left and a burst of 32 frames leaves in tens of us rather than hundreds. A frame is timed
 * from just before that write to just after its Result is read (send->result); just before an
 * aligned send the thread polls without sleeping for 50 us (this machine's timer wake-ups run
 * tens of us late). All cases run against one daemon in one run, so
 * every ratio is against a baseline of the same run:
 *   wake      cyclictest -m -p 80 -i 1000 (rt-tests) beside one streaming session: cyclictest's
 *             wake-up latency next to the daemon's own (Result.timing.wake_late_ns)
 *   request   MODE_REQUEST, one session, the 16-contact peg of tests/data/peg_in_hole.json with
 *             lemke, sent at 1 kHz from the client's clock, over UDS and over TCP; then over UDS
 *             by a client that polls its socket without sleeping while its Result is due; then
 *             the host's floor for both clients: the same bytes to an echo thread on the worker
 *             CPU (echo_floor.h), so the daemon's own share is p50 - solve p50 - floor p50; and
 *             that floor over loopback TCP, what TCP itself adds to request/tcp - request/uds
 *   stream    MODE_STREAM, 1, 8, 16 and 32 sessions (16-contact peg, lemke), each frame sent
 *             150 us before its tick (Welcome.tick_epoch_ns + k tick_period_ns)
 *   capacity  the most stream sessions held at 1 kHz (aligned as above) with >= 99.9 % answered
 *             and no miss the daemon caused (miss_reason HOST or SCHEDULING, or a miss it gave no
 *             reason for), and with at most 0.1 % of those, for pegs of 8, 16 and 32 contacts
 *             (tests/lib/scene_gen.h); SOLVER misses are listed apart
 *   hog       one lemke-standard session on a 32-contact peg at 100 Hz beside 8 light sessions
 *             (16-contact peg, lemke, 1 kHz), all MODE_REQUEST
 *   churn     one light session (MODE_REQUEST, 16-contact peg, lemke, 1 kHz, as request/uds)
 *             for the case's length, then again, back to back on the same session, while a
 *             second client thread opens a session with the daemon's default limits (a Hello
 *             with no limits: 64 bodies, 256 contacts, 16 directions, lemke; about 6.6 MiB) over
 *             UDS and closes it at once, 50 times a second: admission and teardown (allocation,
 *             page pre-fault, LAPACK warm-up) are to leave live sessions untouched. That thread
 *             times each connect + Hello -> Welcome and counts the Welcomes
 * --keep-awake on|off adds [loop] keep_awake = on|off to that configuration.
 * A client "at a random phase": each session's first frame goes out at a random offset within
 * one period, and its clock runs slow by one period over the case (1 kHz less 1/N for N frames),
 * so the phase against the daemon's ticks sweeps one whole period. Frames rotate through 256
 * instances of their scene (the wrench turned about (1, 1, 1) in 256 steps, as t_gen_peg_turn).
 * A frame the client itself could not send on time (more than 150 us late in stream mode, half a
 * period otherwise) is skipped and counted as a client skip, never against the daemon.
 * Every Result is checked: its seq is one sent on that session, its status one of OK, DEADLINE,
 * FALLBACK, FAILED, it carries timing and the scene's contacts (count and ids, in order);
 * results are counted by status (OK = solved and certified by the daemon), answer source and
 * miss reason. Under each row: the client's own send lag and write cost, the daemon's Stats over
 * the case, and the stages of send->result from Result.timing (in: send -> decoded, wait:
 * decoded -> solve start, solve, out: solve end -> handed to the socket, which for a stream frame
 * solved ahead of its tick includes the wait for the tick, back: socket -> read here; solve start
 * - release is negative for a frame solved ahead), for aligned frames how many the daemon decoded after the tick they were aimed at and
 * how far apart it decoded the frames of one burst. A case the daemon cannot serve (a refused
 * Hello, a mode not granted, a missing Welcome field) is reported as such in the table and the
 * run goes on; a daemon that exits is restarted for the next case and the exit reported.
 *
 * Output: header, one table per case, targets (reported, never asserted), <out>/service.csv
 * (bench_common.h columns; here n = sessions, scene = the peg, samples = send->result latencies
 * (cyclictest's wake-ups on the wake/cyclictest row, the daemon's wake-ups on wake/daemon),
 * solve_p50_ns from Result.timing.solve_ns, iters = pivots (SolverStats), certified = STATUS_OK
 * results out of `problems` results, residual = the worst absolute certificate term of the OK
 * results), <out>/service.png (service.gp) and <out>/service-contactd.log (the daemon's log).
 * On the churn/hello->welcome row, samples are connect + Hello -> Welcome times.
 * ratio_p50 baselines: wake/daemon against wake/cyclictest, request/tcp, request/uds-polling and
 * the floor rows against request/uds, stream rows against the 1-session stream row, hog/light rows
 * against request/uds, churn/light/churn-50Hz against churn/light/no-churn.
 * thread: one (plus the daemon and cyclictest processes), and during the churn case the churn
 * client's thread, which shares nothing with it but a struct read after the join. Not rt code:
 * it allocates. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_run.h"
#include "client_wire.h"
#include "daemon_proc.h"
#include "echo_floor.h"
#include "wire/codec.h"
#include "wire/framing.h"
#include "solver/contact.h"
#include "wire/scene_json.h"
#include "sys/config.h"
#include "testlib.h"

#ifndef CONTACTD_EXE
#define CONTACTD_EXE "contactd"
#endif
#ifndef CONTACTD_BENCH_DIR
#define CONTACTD_BENCH_DIR "tests/bench"
#endif

#define US INT64_C(1000)
#define MS INT64_C(1000000)
#define SEC INT64_C(1000000000)
#define LEAD_NS (150 * US)   /* stream: a frame goes out this long before its tick */
#define CLIENT_HZ 1000       /* the clients' rate */
#define HOG_HZ 100
#define CHURN_HZ 50          /* the churn client's admissions (and closes) per second */
#define POOL 256             /* instances of each scene, rotated */
#define RING 8192            /* send times kept per session, indexed by seq */
#define STREAM_MAX 32        /* most sessions of the stream case */
#define LIGHT 8              /* light sessions beside the hog */
#define MAX_RUN (STREAM_MAX + 1)
#define DIRS 8
#define MU 0.25
#define SEED UINT64_C(0x5e7f1ce)
#define OPEN_TIMEOUT_NS (5 * SEC)
#define SPIN_NS (50 * US)    /* aligned sends: poll without sleeping this long before a send */
#define PREP_GUARD_NS (100 * US) /* frames are packed ahead only when no send is due sooner */

/* ---- the daemon ----------------------------------------------------------------------------- */

typedef struct bench_daemon {
    t_daemon p;            /* the process, its temporary directory and its addresses */
    const char *exe;
    const char *out_dir;
    int max_sessions;      /* what the temporary config allows */
    bool raised;           /* max_sessions was set above the default */
    const char *keep_awake; /* --keep-awake on|off: [loop] keep_awake; NULL: the default */
    char tick_line[256];   /* the daemon's own log line about its tick thread or workers */
    int starts;
} bench_daemon;

static bench_daemon *g_daemon; /* for the atexit cleanup */

/* What a fatal signal's handler removes: built beforehand, since it may only make
 * async-signal-safe calls (kill, unlink, rmdir). */
#define TEMP_FILES 6
static char g_temp_dir[64], g_temp_file[TEMP_FILES][160];
static volatile pid_t g_daemon_pid = -1, g_cyclic_pid = -1;

static void on_fatal_signal(int sig) {
    if (g_daemon_pid > 0) {
        kill(g_daemon_pid, SIGKILL);
    }
    if (g_cyclic_pid > 0) {
        kill(g_cyclic_pid, SIGKILL);
    }
    if (g_temp_dir[0]) {
        for (int i = 0; i < TEMP_FILES; i++) {
            unlink(g_temp_file[i]);
        }
        rmdir(g_temp_dir);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Interrupted (or writing into a closed pipe): no daemon, cyclictest or temporary directory is
 * left behind. */
static void catch_fatal_signals(void) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    struct sigaction sa = {.sa_handler = on_fatal_signal};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        sigaction(sigs[i], &sa, NULL);
    }
}

static void temp_register(const char *dir) {
    static const char *const names[TEMP_FILES] = {"contactd.conf", "contactd.log", "notify",
                                                  "contactd.sock", "cyclictest.out",
                                                  "cyclictest.err"};
    for (int i = 0; i < TEMP_FILES; i++) {
        snprintf(g_temp_file[i], sizeof g_temp_file[i], "%s/%s", dir, names[i]);
    }
    snprintf(g_temp_dir, sizeof g_temp_dir, "%s", dir);
}

/* The first line of the daemon's log containing one of the keys, into buf. */
static void log_find(const bench_daemon *d, const char *const *keys, char *buf, size_t len) {
    char line[512];
    FILE *f = fopen(d->p.log, "r");
    buf[0] = '\0';
    if (!f) {
        return;
    }
    while (fgets(line, sizeof line, f) && !buf[0]) {
        for (int i = 0; keys[i] && !buf[0]; i++) {
            if (strstr(line, keys[i])) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(buf, len, "%.200s", line);
            }
        }
    }
    fclose(f);
}

/* Prints the last lines of the daemon's log (after a failure). */
static void log_tail(const bench_daemon *d, int lines) {
    char cmd[300];
    printf("# ---- last %d lines of the daemon's log ----\n", lines);
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "tail -n %d '%s' | sed 's/^/#   /'", lines, d->p.log);
    if (system(cmd) != 0) {
        printf("#   (no log)\n");
    }
}

/* Reaps the daemon when it has exited. Returns true while it runs. */
static bool daemon_alive(bench_daemon *d) {
    const bool alive = t_daemon_is_running(&d->p);
    g_daemon_pid = d->p.pid;
    return alive;
}

/* Appends the daemon's log to <out>/service-contactd.log, closes everything and removes the
 * temporary directory. Kills a daemon still running. Safe to call twice. */
static void daemon_cleanup(bench_daemon *d) {
    char path[1024];
    snprintf(path, sizeof path, "%s/service-contactd.log", d->out_dir);
    FILE *log = d->p.dir[0] ? fopen(path, "a") : NULL;
    t_daemon_cleanup(&d->p, log);
    if (log) {
        fclose(log);
    }
    g_daemon_pid = -1;
    g_temp_dir[0] = '\0';
}

static void cleanup_at_exit(void) {
    if (g_daemon) {
        daemon_cleanup(g_daemon);
    }
}

/* Starts the daemon with its default configuration but the addresses and (only when the default
 * is too small) max_sessions, and waits for READY=1. Returns 0, or -1 after printing why. */
static int daemon_start(bench_daemon *d) {
    d->tick_line[0] = '\0';
    if (t_daemon_prepare(&d->p, "bench") < 0) {
        return -1;
    }
    temp_register(d->p.dir);
    char ini[96] = "";
    if (d->raised) {
        snprintf(ini, sizeof ini, "[server]\nmax_sessions = %d\n", d->max_sessions);
    }
    if (d->keep_awake) {
        snprintf(ini + strlen(ini), sizeof ini - strlen(ini), "[loop]\nkeep_awake = %s\n",
                 d->keep_awake);
    }
    d->starts++;
    const int r = t_daemon_launch(&d->p, d->exe, ini, 0);
    if (r < 0) {
        const bool spawned = d->p.pidfd >= 0;
        if (spawned && !daemon_alive(d)) {
            printf("# contactd (%s) exited with status %d before READY=1\n", d->exe,
                   d->p.exit_status);
        } else {
            printf("# contactd (%s) did not start: no READY=1 with both addresses within %d ms "
                   "(the reason is on stderr)\n", d->exe, T_DAEMON_TIMEOUT_MS);
        }
        log_tail(d, 20);
        return -1;
    }
    g_daemon_pid = d->p.pid;
    static const char *const keys[] = {"tick thread", "worker", NULL};
    log_find(d, keys, d->tick_line, sizeof d->tick_line);
    return 0;
}

/* Daemon-wide Stats through a connection of their own (no Hello: no session slot used). */
typedef struct dstats {
    bool ok;
    uint64_t ticks, received, solved, superseded, misses, dropped;
    int64_t wake_max;
    uint32_t sessions;
    bool realtime;
} dstats;

static dstats daemon_stats(const bench_daemon *d) {
    dstats st = {0};
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%.107s", d->p.socket); /* sun_path: 108 bytes */
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (fd >= 0) {
            close(fd);
        }
        return st;
    }
    Contactd__V1__ClientMessage env = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    Contactd__V1__StatsRequest req = CONTACTD__V1__STATS_REQUEST__INIT;
    env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST;
    env.stats_request = &req;
    uint8_t out[64], chunk[4096];
    size_t len;
    cd_framer f;
    if (cd_codec_pack(&env.base, out, sizeof out, &len) < 0 ||
        send(fd, out, len, MSG_NOSIGNAL) != (ssize_t)len || cd_framer_init(&f, 1 << 16) < 0) {
        close(fd);
        return st;
    }
    const int64_t end = bench_now_ns() + 2 * SEC;
    while (!st.ok && bench_now_ns() < end) {
        const uint8_t *body;
        size_t blen;
        const int r = cd_framer_next(&f, &body, &blen);
        if (r < 0) {
            break;
        }
        if (r == 1) {
            Contactd__V1__ServerMessage *m =
                contactd__v1__server_message__unpack(NULL, blen, body);
            if (m && m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_STATS) {
                const Contactd__V1__Stats *s = m->stats;
                st = (dstats){.ok = true, .ticks = s->ticks, .received = s->frames_received,
                              .solved = s->frames_solved, .superseded = s->frames_superseded,
                              .misses = s->deadline_misses, .dropped = s->results_dropped,
                              .wake_max = s->wake_late_ns_max, .sessions = s->sessions,
                              .realtime = s->realtime};
            }
            if (m) {
                contactd__v1__server_message__free_unpacked(m, NULL);
            }
            continue;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) != 1) {
            continue;
        }
        size_t want = cd_framer_space(&f);
        want = want < sizeof chunk ? want : sizeof chunk;
        const ssize_t n = recv(fd, chunk, want, 0);
        if (n <= 0) {
            break;
        }
        (void)cd_framer_feed(&f, chunk, (size_t)n);
    }
    cd_framer_fini(&f);
    close(fd);
    return st;
}

/* ---- cyclictest ----------------------------------------------------------------------------- */

typedef struct cyclic {
    pid_t pid;
    int pidfd;
    char out[160], err[160];
} cyclic;

/* Starts cyclictest -m -p 80 -i 1000 -l loops -q -v -N (every wake-up's latency, ns) with its
 * output in dir. Returns false when it could not be started at all. */
static bool cyclic_start(cyclic *c, const char *dir, int loops) {
    *c = (cyclic){.pid = -1, .pidfd = -1};
    snprintf(c->out, sizeof c->out, "%s/cyclictest.out", dir);
    snprintf(c->err, sizeof c->err, "%s/cyclictest.err", dir);
    char l[32];
    snprintf(l, sizeof l, "%d", loops);
    const pid_t parent = getpid();
    fflush(NULL);
    c->pid = fork();
    if (c->pid < 0) {
        return false;
    }
    if (c->pid == 0) {
        t_daemon_child_init(parent, SIGKILL);
        const int o = open(c->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = open(c->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o >= 0) {
            dup2(o, STDOUT_FILENO);
        }
        if (e >= 0) {
            dup2(e, STDERR_FILENO);
        }
        execlp("cyclictest", "cyclictest", "-m", "-p", "80", "-i", "1000", "-l", l, "-q", "-v",
               "-N", (char *)NULL);
        fprintf(stderr, "cyclictest: %s (Debian package rt-tests)\n", strerror(errno));
        _exit(127);
    }
    g_cyclic_pid = c->pid;
    c->pidfd = pidfd_open(c->pid, 0);
    return true;
}

/* Waits up to timeout_ns for cyclictest to finish (kills it after), reads its samples into lat
 * and says why there are none in why. */
static void cyclic_finish(cyclic *c, int64_t timeout_ns, bench_samples *lat, char *why,
                          size_t len) {
    why[0] = '\0';
    if (c->pid <= 0) {
        snprintf(why, len, "could not fork cyclictest");
        return;
    }
    struct pollfd p = {.fd = c->pidfd, .events = POLLIN};
    if (c->pidfd < 0 || poll(&p, 1, (int)(timeout_ns / MS)) != 1) {
        kill(c->pid, SIGKILL);
        snprintf(why, len, "cyclictest did not finish in time; killed");
    }
    int st = 0;
    waitpid(c->pid, &st, 0);
    g_cyclic_pid = -1;
    if (c->pidfd >= 0) {
        close(c->pidfd);
    }
    FILE *f = fopen(c->out, "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        int thr, cnt;
        long long v;
        if (sscanf(line, " %d: %d: %lld", &thr, &cnt, &v) == 3) {
            bench_samples_push(lat, v);
        }
    }
    if (f) {
        fclose(f);
    }
    if (lat->n == 0 && !why[0]) {
        char msg[200] = "";
        FILE *e = fopen(c->err, "r");
        if (e) {
            if (!fgets(msg, sizeof msg, e)) {
                msg[0] = '\0';
            }
            fclose(e);
        }
        msg[strcspn(msg, "\n")] = '\0';
        snprintf(why, len, "cyclictest exited with %d and no samples: %s",
                 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), msg);
    }
}

/* ---- scenes --------------------------------------------------------------------------------- */

/* A scene whose wrench turns through POOL instances (frame k: the base wrench turned by
 * 2 pi (k mod POOL) / POOL about (1, 1, 1) / sqrt 3). */
typedef struct scene_src {
    char name[16];
    int nc;
    cs_scene s;
    double wrench[6];
    t_gen_scene *gen; /* owner of s's arrays when generated, else they are cd_scene_json's */
} scene_src;

static void src_json(scene_src *p) {
    char err[512];
    const char *path = t_data_path("peg_in_hole.json");
    if (cd_scene_json_load(path, cs_scene_validate, &p->s, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    p->nc = p->s.nc;
    snprintf(p->name, sizeof p->name, "peg-%d", p->nc);
    memcpy(p->wrench, p->s.bodies[0].f, sizeof(double[3]));
    memcpy(p->wrench + 3, p->s.bodies[0].tau, sizeof(double[3]));
}

static void src_gen(scene_src *p, int n) {
    p->gen = bench_alloc(sizeof *p->gen);
    t_gen_peg(p->gen, n, MU, DIRS, SEED + (uint64_t)n);
    p->s = p->gen->s; // points into *p->gen, which does not move
    p->nc = n;
    snprintf(p->name, sizeof p->name, "peg-%d", n);
    memcpy(p->wrench, p->gen->wrench, sizeof p->wrench);
}

static void src_free(scene_src *p) {
    if (p->gen) {
        free(p->gen);
    } else {
        cd_scene_json_free(&p->s);
    }
}

static void turn(const double u[3], double c, double s, const double v[3], double out[3]) {
    const double ux = u[1] * v[2] - u[2] * v[1], uy = u[2] * v[0] - u[0] * v[2],
                 uz = u[0] * v[1] - u[1] * v[0], d = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    out[0] = v[0] * c + ux * s + u[0] * d * (1 - c);
    out[1] = v[1] * c + uy * s + u[1] * d * (1 - c);
    out[2] = v[2] * c + uz * s + u[2] * d * (1 - c);
}

static void src_frame(scene_src *p, uint64_t k) {
    const double u[3] = {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)};
    const double th = 2 * M_PI * (double)(k % POOL) / POOL;
    turn(u, cos(th), sin(th), p->wrench, p->s.bodies[0].f);
    turn(u, cos(th), sin(th), p->wrench + 3, p->s.bodies[0].tau);
}

/* ---- sessions ------------------------------------------------------------------------------- */

/* Counters of one session (or of several, added up). */
enum {
    C_SENT,       /* frames sent in the measured window */
    C_SKIPPED,    /* frames the client could not send on time (its own fault) */
    C_RESULTS,    /* Results for frames of the window */
    C_UNMATCHED,  /* Results whose seq was not sent (or answered twice) */
    C_BAD,        /* Results that failed a check */
    C_ERR_LIMIT,  /* Errors ERROR_LIMIT for frames of the window */
    C_ERR_OTHER,  /* other Errors */
    C_ST_OTHER, C_ST_OK, C_ST_DEADLINE, C_ST_FALLBACK, C_ST_FAILED,
    C_MISSES,     /* Results with deadline_met false */
    C_MISS_NONE, C_MISS_HOST, C_MISS_SOLVER, C_MISS_SCHED, C_MISS_IO, /* their miss_reason */
    C_SRC_SOLVER, C_SRC_ITERATE, C_SRC_LAST, C_SRC_NONE, C_SRC_OTHER,
    C_AIMED,      /* Results of frames aimed at a tick (aligned sends) */
    C_LATE_IN,    /* ... that the daemon decoded after that tick */
    C_LATE_TICK,  /* ... that were solved at a later tick than that one */
    C_N
};

typedef struct counts {
    long v[C_N];
    double worst_residual;
    char first_bad[200], first_err[200];
} counts;

/* Stages of a send->result, from Result.timing (the daemon's CLOCK_MONOTONIC is the client's:
 * same host): in = send -> decoded (received_ns), wait = decoded -> solve start, solve, out =
 * solve end -> handed to the socket (sent_ns), back = handed to the socket -> read here. */
enum { S_IN, S_WAIT, S_SOLVE, S_OUT, S_BACK, S_N };
static const char *const stage_name[S_N] = {"in", "wait", "solve", "out", "back"};

typedef struct tally {
    counts n;
    bench_samples lat, solve, wake, lag, sendlag, piv, sendcost;
    bench_samples stage[S_N];
    bench_samples aim, rx; /* aligned frames: the tick aimed at and received_ns, in pairs */
} tally;

typedef struct grid {
    int64_t epoch, period;
    const char *source;
    bool ok;
} grid;

typedef struct sess {
    cdc_conn *c;
    scene_src *src;
    const Contactd__V1__Welcome *w;
    bool asked_request, granted_request;
    int64_t interval_ns, next_ns, late_limit_ns, count_from;
    uint64_t seq, k0;
    int pending;          /* frames sent, neither answered nor refused yet */
    bool dead;
    char dead_why[160];
    tally t;
    bool aligned;         /* frames aimed at ticks (sched_aligned) */
    bool polling;         /* the client does not sleep while a Result is due */
    cd_frame_msg fm;      /* the next frame, packed ahead of its send time into out[0 .. len) */
    uint8_t *out;
    size_t out_cap, out_len;
    bool prepared;
    int64_t sent_at[RING];
    int64_t aim[RING];    /* the tick a frame was aimed at (aligned), else 0 */
    uint64_t sent_seq[RING];
} sess;

static void samples_append(bench_samples *d, const bench_samples *s) {
    for (int i = 0; i < s->n; i++) {
        bench_samples_push(d, s->v[i]);
    }
}

static void tally_add(tally *d, const tally *s) {
    for (int i = 0; i < C_N; i++) {
        d->n.v[i] += s->n.v[i];
    }
    d->n.worst_residual = fmax(d->n.worst_residual, s->n.worst_residual);
    if (!d->n.first_bad[0]) {
        snprintf(d->n.first_bad, sizeof d->n.first_bad, "%s", s->n.first_bad);
    }
    if (!d->n.first_err[0]) {
        snprintf(d->n.first_err, sizeof d->n.first_err, "%s", s->n.first_err);
    }
    samples_append(&d->lat, &s->lat);
    samples_append(&d->solve, &s->solve);
    samples_append(&d->wake, &s->wake);
    samples_append(&d->lag, &s->lag);
    samples_append(&d->sendlag, &s->sendlag);
    samples_append(&d->piv, &s->piv);
    samples_append(&d->sendcost, &s->sendcost);
    samples_append(&d->aim, &s->aim);
    samples_append(&d->rx, &s->rx);
    for (int i = 0; i < S_N; i++) {
        samples_append(&d->stage[i], &s->stage[i]);
    }
}

static void tally_free(tally *t) {
    bench_samples_free(&t->lat);
    bench_samples_free(&t->solve);
    bench_samples_free(&t->wake);
    bench_samples_free(&t->lag);
    bench_samples_free(&t->sendlag);
    bench_samples_free(&t->piv);
    bench_samples_free(&t->sendcost);
    bench_samples_free(&t->aim);
    bench_samples_free(&t->rx);
    for (int i = 0; i < S_N; i++) {
        bench_samples_free(&t->stage[i]);
    }
    *t = (tally){0};
}

static const char *mode_name(int m) {
    return m == CONTACTD__V1__SESSION_MODE__MODE_REQUEST  ? "request"
           : m == CONTACTD__V1__SESSION_MODE__MODE_STREAM ? "stream"
                                                          : "unknown";
}

/* Opens a session (UDS or TCP) for src with solver; NULL with the reason in err. */
static sess *sess_open(const bench_daemon *d, bool tcp, bool request, const char *solver,
                       scene_src *src, char *err, size_t errlen) {
    const cdc_hello h = {.client_name = "bench_service",
                         .solver_name = solver,
                         .limits = {.max_bodies = 1, .max_contacts = src->nc, .max_dirs = DIRS},
                         .request_mode = request};
    cdc_conn *c = NULL;
    const int r = tcp ? cdc_conn_open_tcp(d->p.tcp, &h, OPEN_TIMEOUT_NS, &c, err, errlen)
                      : cdc_conn_open_unix(d->p.socket, &h, OPEN_TIMEOUT_NS, &c, err, errlen);
    if (r < 0) {
        return NULL;
    }
    sess *s = bench_alloc(sizeof *s);
    s->c = c;
    s->src = src;
    s->w = cdc_wire_welcome(c);
    s->asked_request = request;
    s->granted_request = s->w->mode == CONTACTD__V1__SESSION_MODE__MODE_REQUEST;
    const cs_limits lim = {.max_bodies = src->s.nb, .max_contacts = src->nc};
    if (cd_codec_frame_msg_init(&s->fm, &lim) < 0) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return s;
}

static void sess_close(sess *s) {
    if (s) {
        cdc_conn_close(s->c);
        cd_codec_frame_msg_fini(&s->fm);
        free(s->out);
        tally_free(&s->t);
        free(s);
    }
}

static void sess_kill(sess *s, const char *what, int err) {
    if (!s->dead) {
        s->dead = true;
        snprintf(s->dead_why, sizeof s->dead_why, "%s: %s", what, strerror(-err));
    }
}

/* Checks one Result of a counted frame (sent at ts, read at tr, aimed at tick aim or 0) and
 * counts it. */
static void check_result(sess *s, const cdc_result *r, int64_t ts, int64_t tr, int64_t aim) {
    counts *n = &s->t.n;
    char bad[200] = "";
    const int st = r->status;
    if (st < CDC_STATUS_OK || st > CDC_STATUS_FAILED) {
        snprintf(bad, sizeof bad, "seq %llu: status %d", (unsigned long long)r->seq, st);
    } else if (r->nc != s->src->nc) {
        snprintf(bad, sizeof bad, "seq %llu: %d contacts, the frame had %d",
                 (unsigned long long)r->seq, r->nc, s->src->nc);
    } else if (!r->timing.received_ns) {
        snprintf(bad, sizeof bad, "seq %llu: no timing", (unsigned long long)r->seq);
    } else {
        for (int i = 0; i < r->nc && !bad[0]; i++) {
            if (r->contacts[i].id != s->src->s.contacts[i].id) {
                snprintf(bad, sizeof bad, "seq %llu: contacts[%d].id %llu, the frame's is %llu",
                         (unsigned long long)r->seq, i, (unsigned long long)r->contacts[i].id,
                         (unsigned long long)s->src->s.contacts[i].id);
            }
        }
    }
    if (bad[0]) {
        n->v[C_BAD]++;
        if (!n->first_bad[0]) {
            snprintf(n->first_bad, sizeof n->first_bad, "%s", bad);
        }
        return;
    }
    n->v[C_ST_OK + st - CDC_STATUS_OK]++;
    const cdc_timing *t = &r->timing;
    bench_samples_push(&s->t.solve, t->solve_ns);
    bench_samples_push(&s->t.wake, t->wake_late_ns);
    // When the work became due: release_ns, else (daemons before it) the tick, which is the
    // absolute deadline less the session's relative deadline.
    const int64_t release = t->release_ns ? t->release_ns : t->deadline_ns - s->w->deadline_ns;
    bench_samples_push(&s->t.lag, t->solve_start_ns - release);
    if (t->received_ns && t->sent_ns) {
        bench_samples_push(&s->t.stage[S_IN], t->received_ns - ts);
        bench_samples_push(&s->t.stage[S_WAIT], t->solve_start_ns - t->received_ns);
        bench_samples_push(&s->t.stage[S_SOLVE], t->solve_ns);
        bench_samples_push(&s->t.stage[S_OUT], t->sent_ns - t->solve_start_ns - t->solve_ns);
        bench_samples_push(&s->t.stage[S_BACK], tr - t->sent_ns);
    }
    if (aim) {
        const int64_t half = s->interval_ns / 2;
        bench_samples_push(&s->t.aim, aim);
        bench_samples_push(&s->t.rx, t->received_ns);
        n->v[C_AIMED]++;
        n->v[C_LATE_IN] += t->received_ns > aim;
        n->v[C_LATE_TICK] += release > aim + half;
    }
    if (!t->deadline_met) {
        n->v[C_MISSES]++;
        switch (t->miss_reason) {
        case CONTACTD__V1__MISS_REASON__MISS_HOST: n->v[C_MISS_HOST]++; break;
        case CONTACTD__V1__MISS_REASON__MISS_SOLVER: n->v[C_MISS_SOLVER]++; break;
        case CONTACTD__V1__MISS_REASON__MISS_SCHEDULING: n->v[C_MISS_SCHED]++; break;
        case CONTACTD__V1__MISS_REASON__MISS_IO: n->v[C_MISS_IO]++; break;
        default: n->v[C_MISS_NONE]++; break;
        }
    }
    switch (r->source) {
    case CDC_ANSWER_SOLVER: n->v[C_SRC_SOLVER]++; break;
    case CDC_ANSWER_ITERATE: n->v[C_SRC_ITERATE]++; break;
    case CDC_ANSWER_LAST_CERTIFIED: n->v[C_SRC_LAST]++; break;
    case CDC_ANSWER_NONE: n->v[C_SRC_NONE]++; break;
    default: n->v[C_SRC_OTHER]++; break;
    }
    bench_samples_push(&s->t.piv, r->pivots);
    if (st == CDC_STATUS_OK) {
        const cdc_residuals *q = &r->residuals;
        const double w = fmax(fmax(fmax(q->complementarity, q->normal_velocity), q->cone),
                              fmax(q->dissipation, q->momentum));
        n->worst_residual = fmax(n->worst_residual, w);
    }
}

/* One message received at time t. */
static void on_message(sess *s, const cdc_msg *m, int64_t t) {
    counts *n = &s->t.n;
    if (m->kind == CDC_MSG_RESULT) {
        const uint64_t seq = m->result.seq;
        const size_t i = seq % RING;
        if (seq == 0 || s->sent_seq[i] != seq) {
            n->v[C_UNMATCHED]++;
            return;
        }
        s->sent_seq[i] = 0;
        s->pending--;
        if (s->sent_at[i] < s->count_from) {
            return;
        }
        n->v[C_RESULTS]++;
        bench_samples_push(&s->t.lat, t - s->sent_at[i]);
        check_result(s, &m->result, s->sent_at[i], t, s->aim[i]);
    } else if (m->kind == CDC_MSG_ERROR) {
        const uint64_t seq = m->error.seq;
        const size_t i = seq % RING;
        bool counted = true;
        if (seq && s->sent_seq[i] == seq) {
            s->sent_seq[i] = 0;
            s->pending--;
            counted = s->sent_at[i] >= s->count_from;
        }
        if (counted) {
            const int code = m->error.code;
            n->v[code == CONTACTD__V1__ERROR_CODE__ERROR_LIMIT ? C_ERR_LIMIT : C_ERR_OTHER]++;
            if (!n->first_err[0]) {
                snprintf(n->first_err, sizeof n->first_err, "error %d: %s", code,
                         m->error.message);
            }
        }
    }
}

/* Reads everything that has arrived on s, through the client library's plain API (as a user of
 * it reads a Result). */
static void sess_drain(sess *s) {
    for (;;) {
        cdc_msg m;
        const int r = cdc_msg_recv(s->c, 0, &m);
        if (r == 0) {
            return;
        }
        if (r < 0) {
            sess_kill(s, "receive", r);
            return;
        }
        on_message(s, &m, bench_now_ns());
    }
}

/* Packs s's next frame (seq s->seq + 1) with the daemon's codec, as cdc_wire_frame_send would, so
 * that at its send time only the write is left (cdc_wire_send_packed). */
static void prepare(sess *s) {
    const uint64_t seq = s->seq + 1;
    src_frame(s->src, s->k0 + seq);
    s->src->s.seq = seq;
    Contactd__V1__ClientMessage *m = cd_codec_frame_build(&s->fm, &s->src->s);
    const size_t need = m ? cd_codec_packed_size(&m->base) : 0;
    if (need > s->out_cap) {
        free(s->out);
        s->out = bench_alloc(need);
        s->out_cap = need;
    }
    if (!m || cd_codec_pack(&m->base, s->out, s->out_cap, &s->out_len) < 0) {
        fprintf(stderr, "cannot pack a frame of %s\n", s->src->name);
        exit(1);
    }
    s->prepared = true;
}

/* Sends the frame scheduled at s->next_ns (now is the time the loop saw), or skips it when the
 * client is later than s->late_limit_ns. */
static void send_due(sess *s, int64_t now) {
    const int64_t sched = s->next_ns;
    s->next_ns += s->interval_ns;
    const bool counted = sched >= s->count_from;
    if (now - sched > s->late_limit_ns) {
        s->t.n.v[C_SKIPPED] += counted;
        return;
    }
    if (!s->prepared) {
        prepare(s);
    }
    const uint64_t seq = ++s->seq;
    const int64_t t = bench_now_ns();
    const int r = cdc_wire_send_packed(s->c, s->out, s->out_len);
    const int64_t t1 = bench_now_ns();
    s->prepared = false;
    if (r < 0) {
        sess_kill(s, "send", r);
        return;
    }
    const size_t i = seq % RING;
    if (s->sent_seq[i] != 0) {
        s->pending--; // never answered, RING frames ago
    }
    s->sent_at[i] = counted ? t : INT64_MIN;
    s->aim[i] = s->aligned ? sched + LEAD_NS : 0;
    s->sent_seq[i] = seq;
    s->pending++;
    if (counted) {
        s->t.n.v[C_SENT]++;
        bench_samples_push(&s->t.sendlag, t - sched);
        bench_samples_push(&s->t.sendcost, t1 - t);
    }
}

/* Drives sessions ss[0 .. n) until stop (no frame scheduled at or after it is sent), then until
 * every frame is answered or drain_ns more have passed. Frames scheduled from count_from on are
 * counted. */
static void run_sessions(sess **ss, int n, int64_t count_from, int64_t stop, int64_t drain_ns) {
    struct pollfd pfd[MAX_RUN];
    sess *ps[MAX_RUN];
    for (int i = 0; i < n; i++) {
        ss[i]->count_from = count_from;
    }
    unsigned rot = 0;
    for (;;) {
        int64_t now = bench_now_ns();
        int64_t wake = stop + drain_ns;
        bool pending = false, spin = false, poll_now = false;
        // Due frames, starting from a different session each time so no session is always last.
        for (int j = 0; j < n; j++) {
            sess *s = ss[(j + rot) % (unsigned)n];
            while (!s->dead && s->next_ns < stop && s->next_ns <= now) {
                send_due(s, now);
                now = bench_now_ns();
            }
            if (!s->dead && s->next_ns < stop && s->next_ns <= wake) {
                spin = (s->next_ns < wake ? false : spin) || s->aligned;
                wake = s->next_ns;
            }
            pending |= !s->dead && s->pending > 0;
            poll_now |= !s->dead && s->pending > 0 && s->polling;
        }
        rot++;
        if (now >= stop && (!pending || now >= stop + drain_ns)) {
            break;
        }
        // Pack one frame ahead while no send is near; come back at once for the next one.
        bool more = false;
        if (wake - now > PREP_GUARD_NS) {
            for (int i = 0; i < n && !more; i++) {
                sess *s = ss[i];
                if (!s->dead && !s->prepared && s->next_ns < stop) {
                    prepare(s);
                    more = true;
                }
            }
            now = bench_now_ns();
        }
        int np = 0;
        for (int i = 0; i < n; i++) {
            if (!ss[i]->dead) {
                pfd[np] = (struct pollfd){.fd = cdc_conn_fd(ss[i]->c), .events = POLLIN};
                ps[np++] = ss[i];
            }
        }
        if (np == 0 && now < stop) {
            break; // every session died
        }
        // An aligned send is near: poll without sleeping (a timer wake-up can be tens of us late)
        // so the frame leaves on time; messages that arrive meanwhile are still read at once.
        int64_t left = wake > now ? wake - now : 0;
        if (more || poll_now || (spin && left <= SPIN_NS)) {
            left = 0;
        } else if (spin) {
            left -= SPIN_NS;
        }
        const struct timespec ts = {.tv_sec = left / SEC, .tv_nsec = left % SEC};
        const int r = ppoll(pfd, (nfds_t)np, &ts, NULL);
        if (r < 0 && errno != EINTR) {
            perror("ppoll");
            exit(1);
        }
        for (int i = 0; i < np && r > 0; i++) {
            if (pfd[i].revents) {
                sess_drain(ps[i]);
            }
        }
    }
}

/* ---- schedules ------------------------------------------------------------------------------ */

static grid g_probe; /* the tick grid found by a probe, for daemons whose Welcome has none */

/* The daemon's tick grid for s: Welcome's tick_epoch_ns and tick_period_ns, or else (a daemon
 * without them) one probe frame's Result: release_ns, or deadline_ns less Welcome.deadline_ns. */
static grid sess_grid(sess *s) {
    if (s->w->tick_period_ns > 0) {
        return (grid){.epoch = s->w->tick_epoch_ns, .period = s->w->tick_period_ns,
                      .source = "Welcome.tick_epoch_ns/tick_period_ns", .ok = true};
    }
    if (g_probe.ok) {
        return g_probe;
    }
    src_frame(s->src, 0);
    s->src->s.seq = ++s->seq;
    s->prepared = false; // its seq is taken
    if (cdc_wire_frame_send(s->c, &s->src->s) < 0) {
        return (grid){.source = "none (probe frame not sent)"};
    }
    const int64_t end = bench_now_ns() + SEC;
    while (bench_now_ns() < end) {
        Contactd__V1__ServerMessage *m = NULL;
        if (cdc_wire_recv(s->c, 100 * MS, &m) < 0) {
            break;
        }
        if (m && m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT && m->result->timing) {
            const Contactd__V1__Timing *t = m->result->timing;
            g_probe = (grid){.period = SEC / (s->w->rate_hz ? s->w->rate_hz : CLIENT_HZ),
                             .ok = true};
            if (t->release_ns) {
                g_probe.epoch = t->release_ns;
                g_probe.source = "a probe Result's timing.release_ns (Welcome has no tick grid)";
            } else {
                g_probe.epoch = t->deadline_ns - s->w->deadline_ns;
                g_probe.source = "a probe Result: timing.deadline_ns - Welcome.deadline_ns "
                                 "(Welcome has no tick grid)";
            }
            cdc_wire_free(m);
            return g_probe;
        }
        cdc_wire_free(m);
    }
    return (grid){.source = "none (no Result for a probe frame within 1 s)"};
}

/* Frames 150 us before each tick of g, the first one after start. */
static void sched_aligned(sess *s, const grid *g, int64_t start) {
    int64_t k = (start + LEAD_NS - g->epoch) / g->period;
    while (g->epoch + k * g->period - LEAD_NS < start) {
        k++;
    }
    s->next_ns = g->epoch + k * g->period - LEAD_NS;
    s->interval_ns = g->period;
    s->late_limit_ns = LEAD_NS;
    s->aligned = true;
}

/* Frames every period_ns of the client's clock from a random phase after start, the clock slow
 * by one period over nsends frames (the phase against the ticks sweeps one period). */
static void sched_free(sess *s, int64_t start, int64_t period_ns, int64_t nsends, t_rng *r) {
    s->interval_ns = period_ns + period_ns / (nsends > 1 ? nsends : 1);
    s->next_ns = start + (int64_t)(t_rng_unit(r) * (double)period_ns);
    s->late_limit_ns = period_ns / 2;
}

/* ---- report --------------------------------------------------------------------------------- */

typedef struct findings {
    bool wake, wake_proxy;
    bench_summary cyc, dwake;
    bool req[3], req_granted[3]; /* uds, tcp, uds with a polling client */
    bench_summary req_lat[3], req_solve[3];
    bool floor[3];               /* the echo floor: uds, uds with a polling client, tcp */
    bench_summary floor_lat[3];
    bool stream[4];
    int stream_n[4];
    bench_summary stream_worst[4], stream_solve[4];
    double stream_answered[4], stream_miss[4];
    bool hog, hog_granted;
    double light_answered;
    int64_t light_worst_p99, light_solve_p99;
    bool churn;                  /* both churn rows measured */
    bench_summary churn_lat[2];  /* the light session without, with churn */
    int churn_hellos, churn_welcomed, churn_slots;
} findings;

typedef struct ctx {
    bench_args a;
    bench_daemon d;
    FILE *csv;
    scene_src peg[3]; /* 8, 16 (tests/data/peg_in_hole.json), 32 contacts */
    t_rng rng;
    double case_s, warm_s, trial_s;
    findings f;
    dstats st0;
} ctx;

static void table_header(const char *title) {
    printf("\n## %s\n", title);
    printf("%-9s %-22s %4s %-7s %7s %9s %9s %9s %9s %8s %8s %8s %6s %s\n", "case", "variant",
           "ses", "scene", "samples", "p50_us", "p99_us", "p99.9_us", "max_us", "solve50",
           "solve99", "answered", "miss%", "ok/dl/fb/fail/bad");
}

/* Order statistics of a copy of s (s keeps its order). */
static bench_summary summary_of(const bench_samples *s) {
    bench_samples c = {0};
    samples_append(&c, s);
    const bench_summary r = bench_summarize(&c);
    bench_samples_free(&c);
    return r;
}

static double pct(long a, long b) {
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

/* A row from t (its lat samples are what the row's percentiles are of): table line, and a CSV
 * line when it has samples. t's samples get sorted. Returns its latency summary. */
static bench_summary emit(ctx *x, const char *bench, const char *variant, const char *scene,
                          int n, tally *t, double ratio) {
    const bench_summary lat = bench_summarize(&t->lat), sol = bench_summarize(&t->solve);
    const bench_summary piv = bench_summarize(&t->piv);
    const counts *c = &t->n;
    char ans[16] = "-", miss[16] = "-", st[64] = "-";
    if (c->v[C_SENT] > 0) {
        snprintf(ans, sizeof ans, "%.2f%%", pct(c->v[C_RESULTS], c->v[C_SENT]));
        snprintf(miss, sizeof miss, "%.2f", pct(c->v[C_MISSES], c->v[C_RESULTS]));
        snprintf(st, sizeof st, "%ld/%ld/%ld/%ld/%ld", c->v[C_ST_OK], c->v[C_ST_DEADLINE],
                 c->v[C_ST_FALLBACK], c->v[C_ST_FAILED], c->v[C_BAD] + c->v[C_ST_OTHER]);
    }
    printf("%-9s %-22s %4d %-7s %7d %9.1f %9.1f %9.1f %9.1f %8.1f %8.1f %8s %6s %s\n", bench,
           variant, n, scene, lat.samples, lat.p50 / 1e3, lat.p99 / 1e3, lat.p999 / 1e3,
           lat.max / 1e3, sol.p50 / 1e3, sol.p99 / 1e3, ans, miss, st);
    fflush(stdout);
    if (lat.samples > 0) {
        const bench_row r = {.bench = bench, .variant = variant, .scene = scene, .n = n,
                             .t = lat, .ratio_p50 = ratio, .iters_p50 = (double)piv.p50,
                             .iters_max = (int)piv.max, .solve_p50_ns = sol.p50,
                             .certified = (int)c->v[C_ST_OK], .problems = (int)c->v[C_RESULTS],
                             .residual = c->worst_residual};
        bench_csv_row(x->csv, &r);
    }
    return lat;
}

static void not_served(const char *bench, const char *variant, const char *scene, int n,
                       const char *why) {
    printf("%-9s %-22s %4d %-7s %7s  not served: %s\n", bench, variant, n, scene, "-", why);
    fflush(stdout);
}

typedef struct aimrx {
    int64_t aim, rx;
} aimrx;

static int cmp_aimrx(const void *a, const void *b) {
    const aimrx *x = a, *y = b;
    return x->aim != y->aim ? (x->aim > y->aim) - (x->aim < y->aim)
                            : (x->rx > y->rx) - (x->rx < y->rx);
}

/* How far apart the daemon decoded the frames of one burst (frames of different sessions aimed
 * at the same tick, which the client writes back to back): the I/O path's cost per frame. */
static bench_summary burst_spacing(const tally *t) {
    bench_samples sp = {0};
    aimrx *v = bench_alloc((size_t)(t->aim.n ? t->aim.n : 1) * sizeof *v);
    for (int i = 0; i < t->aim.n; i++) {
        v[i] = (aimrx){t->aim.v[i], t->rx.v[i]};
    }
    qsort(v, (size_t)t->aim.n, sizeof *v, cmp_aimrx);
    for (int i = 1; i < t->aim.n; i++) {
        if (v[i].aim == v[i - 1].aim) {
            bench_samples_push(&sp, v[i].rx - v[i - 1].rx);
        }
    }
    const bench_summary r = bench_summarize(&sp);
    bench_samples_free(&sp);
    free(v);
    return r;
}

/* Notes under a row: what the client and the daemon did beside the percentiles. */
static void notes(const tally *t, bool show_sendlag) {
    const counts *c = &t->n;
    const long unanswered = c->v[C_SENT] - c->v[C_RESULTS] - c->v[C_ERR_LIMIT] - c->v[C_ERR_OTHER];
    printf("    # sent %ld, results %ld, unanswered %ld, refused ERROR_LIMIT %ld, other errors "
           "%ld, client skips %ld, unmatched %ld\n",
           c->v[C_SENT], c->v[C_RESULTS], unanswered, c->v[C_ERR_LIMIT], c->v[C_ERR_OTHER],
           c->v[C_SKIPPED], c->v[C_UNMATCHED]);
    if (c->v[C_MISSES]) {
        printf("    # misses %ld: host %ld, solver %ld, scheduling %ld, io %ld, "
               "no reason given %ld\n",
               c->v[C_MISSES], c->v[C_MISS_HOST], c->v[C_MISS_SOLVER], c->v[C_MISS_SCHED],
               c->v[C_MISS_IO], c->v[C_MISS_NONE]);
    }
    if (c->v[C_RESULTS]) {
        printf("    # answer sources: solver %ld, iterate %ld, last-certified %ld, none %ld\n",
               c->v[C_SRC_SOLVER], c->v[C_SRC_ITERATE], c->v[C_SRC_LAST], c->v[C_SRC_NONE]);
    }
    if (show_sendlag && t->sendlag.n) {
        const bench_summary s = summary_of(&t->sendlag), k = summary_of(&t->sendcost);
        printf("    # client: send lag behind its schedule p50 %.1f us, p99 %.1f us, max %.1f us; "
               "cost of a write p50 %.1f us, p99 %.1f us\n", s.p50 / 1e3, s.p99 / 1e3, s.max / 1e3,
               k.p50 / 1e3, k.p99 / 1e3);
    }
    if (t->stage[S_IN].n) {
        char line[400] = "";
        for (int i = 0; i < S_N; i++) {
            const bench_summary q = summary_of(&t->stage[i]);
            const size_t k = strlen(line);
            snprintf(line + k, sizeof line - k, "%s %s %.1f/%.1f", i ? "," : "", stage_name[i],
                     q.p50 / 1e3, q.p99 / 1e3);
        }
        const bench_summary lag = summary_of(&t->lag);
        printf("    # stages p50/p99 us (Result.timing):%s; solve start - release %.1f/%.1f\n",
               line, lag.p50 / 1e3, lag.p99 / 1e3);
    }
    if (c->v[C_AIMED]) {
        printf("    # aimed at a tick: %ld; decoded by the daemon after that tick %ld (%.2f%%); "
               "solved at a later tick %ld (%.2f%%)\n", c->v[C_AIMED], c->v[C_LATE_IN],
               pct(c->v[C_LATE_IN], c->v[C_AIMED]), c->v[C_LATE_TICK],
               pct(c->v[C_LATE_TICK], c->v[C_AIMED]));
        const bench_summary b = burst_spacing(t);
        if (b.samples) {
            printf("    # daemon decode spacing within a burst (frames aimed at the same tick, "
                   "written back to back): p50 %.1f us, p99 %.1f us per frame\n", b.p50 / 1e3,
                   b.p99 / 1e3);
        }
    }
    if (c->first_bad[0]) {
        printf("    # first bad result: %s\n", c->first_bad);
    }
    if (c->first_err[0]) {
        printf("    # first error: %s\n", c->first_err);
    }
}

static void print_welcome(const char *what, const sess *s) {
    const Contactd__V1__Welcome *w = s->w;
    char solvers[256] = "";
    for (size_t i = 0; i < w->n_solvers; i++) {
        const size_t k = strlen(solvers);
        snprintf(solvers + k, sizeof solvers - k, "%s%s", i ? "," : "", w->solvers[i]);
    }
    printf("# welcome (%s): server %s, mode %s (asked %s), rate %u Hz, deadline %lld ns, "
           "budget %lld ns, tick grid %s, request_queue %u, workspace %llu bytes, solvers [%s]\n",
           what, w->server_version ? w->server_version : "?", mode_name(w->mode),
           s->asked_request ? "request" : "stream", w->rate_hz, (long long)w->deadline_ns,
           (long long)w->budget_ns, w->tick_period_ns > 0 ? "given" : "absent",
           w->request_queue, (unsigned long long)w->workspace_bytes, solvers);
}

/* Daemon-wide Stats since st0 (one line). */
static void stats_note(ctx *x, const dstats *a) {
    const dstats b = daemon_stats(&x->d);
    if (!a->ok || !b.ok) {
        printf("    # daemon Stats: not available\n");
        return;
    }
    printf("    # daemon Stats over the case: frames %llu received, %llu solved, %llu superseded, "
           "%llu deadline misses, %llu results dropped\n",
           (unsigned long long)(b.received - a->received),
           (unsigned long long)(b.solved - a->solved),
           (unsigned long long)(b.superseded - a->superseded),
           (unsigned long long)(b.misses - a->misses),
           (unsigned long long)(b.dropped - a->dropped));
}

/* Restarts the daemon when it has exited (and says so). Returns false when it cannot run. */
static bool daemon_ready(ctx *x) {
    if (daemon_alive(&x->d)) {
        return true;
    }
    printf("# !! contactd exited with status %d during the previous case; restarting it\n",
           x->d.p.exit_status);
    log_tail(&x->d, 15);
    daemon_cleanup(&x->d);
    if (daemon_start(&x->d) < 0) {
        return false;
    }
    g_probe.ok = false;
    return true;
}

static void sess_close_all(sess **ss, int n) {
    for (int i = 0; i < n; i++) {
        sess_close(ss[i]);
        ss[i] = NULL;
    }
    // Let the daemon see the closes before the next case opens sessions.
    const struct timespec ts = {.tv_nsec = 50 * MS};
    nanosleep(&ts, NULL);
}

/* Opens n sessions alike; returns how many opened (the first refusal's reason in err). */
static int open_many(ctx *x, sess **ss, int n, bool request, const char *solver, scene_src *src,
                     char *err, size_t errlen) {
    int k = 0;
    err[0] = '\0';
    for (int i = 0; i < n; i++) {
        char e[512];
        ss[k] = sess_open(&x->d, false, request, solver, src, e, sizeof e);
        if (ss[k]) {
            ss[k]->k0 = (uint64_t)i * 37;
            k++;
        } else if (!err[0]) {
            snprintf(err, errlen, "session %d of %d: %.400s", i + 1, n, e);
        }
    }
    return k;
}

/* ---- case 1: wake-up latency beside cyclictest ---------------------------------------------- */

static void case_wake(ctx *x) {
    table_header("wake: cyclictest -m -p 80 -i 1000 beside one stream session (peg-16, lemke, "
                 "frames 150 us before each tick)");
    if (!daemon_ready(x)) {
        return;
    }
    char err[512];
    sess *s = sess_open(&x->d, false, false, "lemke", &x->peg[1], err, sizeof err);
    if (!s) {
        not_served("wake", "daemon", "peg-16", 1, err);
        return;
    }
    print_welcome("stream session", s);
    const grid g = sess_grid(s);
    printf("# tick grid from %s\n", g.source);
    const int64_t start = bench_now_ns() + 5 * MS;
    if (g.ok) {
        sched_aligned(s, &g, start);
    } else {
        sched_free(s, start, SEC / CLIENT_HZ, (int64_t)((x->warm_s + x->case_s) * CLIENT_HZ),
                   &x->rng);
    }
    const int64_t count_from = start + (int64_t)(x->warm_s * SEC);
    const int64_t stop = count_from + (int64_t)(x->case_s * SEC);
    const dstats st = daemon_stats(&x->d);
    cyclic cy;
    const int loops = (int)((stop - bench_now_ns()) / MS) + 1;
    const bool started = cyclic_start(&cy, x->d.p.dir, loops);
    run_sessions(&s, 1, count_from, stop, 30 * MS);
    tally cyc = {0};
    char why[300] = "could not start cyclictest";
    if (started) {
        cyclic_finish(&cy, 5 * SEC + (int64_t)loops * MS, &cyc.lat, why, sizeof why);
    }
    // The daemon's wake-ups: Result.timing.wake_late_ns; a daemon that leaves it 0 everywhere
    // does not report it, and then the solve start's lateness after the tick stands in.
    bool proxy = true;
    for (int i = 0; i < s->t.wake.n && proxy; i++) {
        proxy = s->t.wake.v[i] == 0;
    }
    tally dw = {0};
    samples_append(&dw.lat, proxy ? &s->t.lag : &s->t.wake);
    samples_append(&dw.solve, &s->t.solve);
    samples_append(&dw.piv, &s->t.piv);
    dw.n = s->t.n;
    if (cyc.lat.n) {
        x->f.cyc = emit(x, "wake", "cyclictest", "-", 1, &cyc, 1.0);
    } else {
        not_served("wake", "cyclictest", "-", 1, why);
    }
    if (dw.lat.n) {
        const bench_summary d0 = summary_of(&dw.lat);
        x->f.dwake = emit(x, "wake", proxy ? "daemon-start-lag" : "daemon", "peg-16", 1, &dw,
                          x->f.cyc.p50 > 0 ? (double)d0.p50 / (double)x->f.cyc.p50 : 0);
        x->f.wake = x->f.cyc.samples > 0;
        x->f.wake_proxy = proxy;
        if (proxy) {
            printf("    # Result.timing.wake_late_ns is 0 in every Result: the daemon does not "
                   "report it; this row is timing.solve_start_ns - the tick instead\n");
        }
    } else {
        not_served("wake", "daemon", "peg-16", 1, s->dead ? s->dead_why : "no results");
    }
    notes(&s->t, true);
    if (x->f.cyc.samples) {
        const dstats now = daemon_stats(&x->d);
        printf("    # daemon Stats.wake_late_ns_max (since start): %.1f us; Stats.realtime %s\n",
               now.wake_max / 1e3, now.realtime ? "yes (SCHED_FIFO)" : "no");
    }
    stats_note(x, &st);
    tally_free(&cyc);
    tally_free(&dw);
    sess *ss[1] = {s};
    sess_close_all(ss, 1);
}

/* ---- case 2: request mode, one session, UDS and TCP ----------------------------------------- */

/* The echo floor (echo_floor.h) with frame's bytes, for a sleeping and a polling client over a
 * Unix socket and a sleeping one over TCP, with the worker CPU kept awake when the daemon's log
 * says it keeps its own awake (keep_awake = on). */
static void request_floor(ctx *x, const uint8_t *frame, size_t len, int64_t base_p50) {
    const bool awake = strstr(x->d.tick_line, "kept awake") &&
                       !strstr(x->d.tick_line, " 0 CPU(s) kept awake");
    static const char *const variants[3] = {"request/floor", "request/floor-polling",
                                            "request/floor-tcp"};
    for (int v = 0; v < 3; v++) {
        const char *variant = variants[v];
        const echo_floor_opts o = {.frame = frame, .len = len, .warm_ns = (int64_t)(x->warm_s * SEC),
                                   .measure_ns = (int64_t)(x->case_s * SEC), .polling = v == 1,
                                   .tcp = v == 2, .keep_awake = awake, .rng = &x->rng};
        tally t = {0};
        char why[128];
        bool fifo = false;
        if (echo_floor_run(&o, &t.lat, &fifo, why, sizeof why) < 0 || t.lat.n == 0) {
            not_served("request", variant, "bytes", 1, why);
        } else {
            const int64_t p50 = summary_of(&t.lat).p50;
            const double ratio = base_p50 > 0 ? (double)p50 / (double)base_p50 : 1.0;
            x->f.floor_lat[v] = emit(x, "request", variant, "bytes", 1, &t, ratio);
            x->f.floor[v] = true;
            printf("    # %zu bytes each way, echo thread %s on the worker CPU, that CPU %s\n",
                   len, fifo ? "SCHED_FIFO" : "at normal priority",
                   awake ? "kept awake" : "left to halt");
        }
        tally_free(&t);
    }
}

static void case_request(ctx *x) {
    table_header("request: MODE_REQUEST, 1 session, peg-16 (tests/data/peg_in_hole.json), lemke, "
                 "1 kHz from the client's clock at a random phase");
    int64_t base_p50 = 0;
    uint8_t *floor_frame = NULL;
    size_t floor_len = 0;
    // Over UDS and TCP, then over UDS with a client that polls its socket while a Result is due
    // (as a haptic loop spinning on its own CPU would): what is left of the daemon's share once
    // the client's own wake-up is gone.
    for (int v = 0; v < 3; v++) {
        const int tcp = v == 1;
        const char *name = v == 2 ? "uds-polling" : tcp ? "tcp" : "uds";
        char variant[40], err[512];
        snprintf(variant, sizeof variant, "request/%s", name);
        if (!daemon_ready(x)) {
            return;
        }
        sess *s = sess_open(&x->d, tcp, true, "lemke", &x->peg[1], err, sizeof err);
        if (!s) {
            not_served("request", variant, "peg-16", 1, err);
            continue;
        }
        s->polling = v == 2;
        print_welcome(name, s);
        if (!s->granted_request) {
            snprintf(variant, sizeof variant, "request/%s-as-%s", name, mode_name(s->w->mode));
            printf("# !! MODE_REQUEST not granted (Welcome.mode = %s): measured as the daemon "
                   "serves it, labelled %s\n", mode_name(s->w->mode), variant);
        }
        const int64_t start = bench_now_ns() + 5 * MS;
        const int64_t count_from = start + (int64_t)(x->warm_s * SEC);
        const int64_t stop = count_from + (int64_t)(x->case_s * SEC);
        sched_free(s, start, SEC / CLIENT_HZ, (stop - start) * CLIENT_HZ / SEC, &x->rng);
        const dstats st = daemon_stats(&x->d);
        run_sessions(&s, 1, count_from, stop, 300 * MS);
        const int64_t p50 = summary_of(&s->t.lat).p50;
        if (s->t.lat.n) {
            const double ratio = v && base_p50 > 0 ? (double)p50 / (double)base_p50 : 1.0;
            x->f.req_lat[v] = emit(x, "request", variant, "peg-16", 1, &s->t, ratio);
            x->f.req_solve[v] = bench_summarize(&s->t.solve);
            x->f.req[v] = true;
            x->f.req_granted[v] = s->granted_request;
            if (!v) {
                base_p50 = p50;
            }
        } else {
            not_served("request", variant, "peg-16", 1, s->dead ? s->dead_why : "no results");
        }
        notes(&s->t, true);
        stats_note(x, &st);
        if (v == 0 && !s->dead) {
            prepare(s); // the floor's frame: the bytes this client writes
            floor_frame = bench_alloc(s->out_len);
            memcpy(floor_frame, s->out, s->out_len);
            floor_len = s->out_len;
        }
        sess *ss[1] = {s};
        sess_close_all(ss, 1);
    }
    if (floor_frame) {
        request_floor(x, floor_frame, floor_len, base_p50);
        free(floor_frame);
    }
}

/* ---- case 3: stream mode, aligned sends, 1..32 sessions ------------------------------------- */

/* Index of the session with the highest p99 send->result (sorts their samples). */
static int worst_session(sess **ss, int n) {
    int w = 0;
    int64_t worst = -1;
    for (int i = 0; i < n; i++) {
        const bench_summary s = summary_of(&ss[i]->t.lat);
        if (s.samples && s.p99 > worst) {
            worst = s.p99;
            w = i;
        }
    }
    return w;
}

/* Opens n aligned stream sessions on src, runs them for seconds, adds them up into all and the
 * worst session into worst. Returns how many opened (err: why not all). */
static int stream_run(ctx *x, int n, scene_src *src, double seconds, tally *all, tally *worst,
                      char *err, size_t errlen, const char **grid_source) {
    sess *ss[MAX_RUN] = {0};
    const int k = open_many(x, ss, n, false, "lemke", src, err, errlen);
    if (k == 0) {
        return 0;
    }
    const int64_t start = bench_now_ns() + 5 * MS;
    for (int i = 0; i < k; i++) {
        const grid g = sess_grid(ss[i]);
        *grid_source = g.source;
        if (g.ok) {
            sched_aligned(ss[i], &g, start);
        } else {
            sched_free(ss[i], start, SEC / CLIENT_HZ,
                       (int64_t)((x->warm_s + seconds) * CLIENT_HZ), &x->rng);
        }
    }
    const int64_t count_from = start + (int64_t)(x->warm_s * SEC);
    const int64_t stop = count_from + (int64_t)(seconds * SEC);
    run_sessions(ss, k, count_from, stop, 30 * MS);
    for (int i = 0; i < k; i++) {
        tally_add(all, &ss[i]->t);
        if (ss[i]->dead && !all->n.first_err[0]) {
            snprintf(all->n.first_err, sizeof all->n.first_err, "session died: %s",
                     ss[i]->dead_why);
        }
    }
    tally_add(worst, &ss[worst_session(ss, k)]->t);
    sess_close_all(ss, k);
    return k;
}

static void case_stream(ctx *x) {
    table_header("stream: MODE_STREAM, peg-16, lemke, each frame 150 us before its tick; "
                 "rows: the worst session (highest p99), then all sessions together");
    static const int counts_[4] = {1, 8, 16, STREAM_MAX};
    int64_t base = 0;
    for (int c = 0; c < 4; c++) {
        const int n = counts_[c] < x->d.max_sessions ? counts_[c] : x->d.max_sessions;
        if (!daemon_ready(x)) {
            return;
        }
        tally all = {0}, worst = {0};
        char err[512], vw[40], va[40];
        const char *gs = "";
        const dstats st = daemon_stats(&x->d);
        const int k = stream_run(x, n, &x->peg[1], x->case_s, &all, &worst, err, sizeof err, &gs);
        if (k == 0) {
            not_served("stream", "aligned/worst", "peg-16", n, err);
            continue;
        }
        if (c == 0) {
            printf("# tick grid from %s\n", gs);
        }
        if (k < n) {
            printf("# !! only %d of %d sessions opened: %s\n", k, n, err);
        }
        snprintf(vw, sizeof vw, "aligned/worst");
        snprintf(va, sizeof va, "aligned/all");
        const int64_t p50 = summary_of(&worst.lat).p50;
        if (c == 0) {
            base = p50;
        }
        if (worst.lat.n) {
            x->f.stream_worst[c] = emit(x, "stream", vw, "peg-16", k, &worst,
                                        base > 0 ? (double)p50 / (double)base : 0);
            x->f.stream_solve[c] = bench_summarize(&all.solve);
            emit(x, "stream", va, "peg-16", k, &all, 0);
            x->f.stream[c] = true;
            x->f.stream_n[c] = k;
            x->f.stream_answered[c] = pct(all.n.v[C_RESULTS], all.n.v[C_SENT]);
            x->f.stream_miss[c] = pct(all.n.v[C_MISSES], all.n.v[C_RESULTS]);
        } else {
            not_served("stream", vw, "peg-16", k, all.n.first_err[0] ? all.n.first_err
                                                                   : "no results");
        }
        notes(&all, true);
        stats_note(x, &st);
        tally_free(&all);
        tally_free(&worst);
    }
}

/* ---- case 4: capacity --------------------------------------------------------------------- */

typedef enum { TRIAL_HELD, TRIAL_MISSED, TRIAL_CLIENT, TRIAL_REFUSED } trial_result;

/* One capacity trial: n aligned stream sessions on src for x->trial_s. Held: every session
 * opened, no bad result or error, >= 99.9 % answered and at most 0.1 % of the results missed
 * through the daemon (miss_reason HOST, SCHEDULING or IO, or no reason given); *strict: held with
 * no such miss at all. A trial the daemon held but where the client skipped more than 1 % of its
 * frames is client-limited. */
static trial_result trial(ctx *x, scene_src *src, int n, tally *all, bool *strict, char *why,
                          size_t len) {
    char err[512];
    tally worst = {0};
    const char *gs = "";
    const int k = stream_run(x, n, src, x->trial_s, all, &worst, err, sizeof err, &gs);
    tally_free(&worst);
    const counts *c = &all->n;
    const long daemon_misses =
        c->v[C_MISS_HOST] + c->v[C_MISS_SCHED] + c->v[C_MISS_IO] + c->v[C_MISS_NONE];
    const long slots = c->v[C_SENT] + c->v[C_SKIPPED];
    *strict = false;
    if (k < n) {
        snprintf(why, len, "refused: %.300s", err);
        return TRIAL_REFUSED;
    }
    if (pct(daemon_misses, c->v[C_RESULTS]) > 0.1 || c->v[C_BAD] || c->v[C_ERR_OTHER] ||
        c->v[C_ERR_LIMIT] || c->v[C_RESULTS] == 0 || pct(c->v[C_RESULTS], c->v[C_SENT]) < 99.9) {
        snprintf(why, len, "%ld daemon misses (host %ld, scheduling %ld, io %ld, no reason %ld), "
                 "answered %.2f%%, %ld bad, %ld errors", daemon_misses, c->v[C_MISS_HOST],
                 c->v[C_MISS_SCHED], c->v[C_MISS_IO], c->v[C_MISS_NONE],
                 pct(c->v[C_RESULTS], c->v[C_SENT]),
                 c->v[C_BAD], c->v[C_ERR_OTHER] + c->v[C_ERR_LIMIT]);
        return TRIAL_MISSED;
    }
    if (pct(c->v[C_SKIPPED], slots) > 1.0) {
        snprintf(why, len, "the client skipped %.1f%% of its frames", pct(c->v[C_SKIPPED], slots));
        return TRIAL_CLIENT;
    }
    *strict = daemon_misses == 0;
    if (!*strict) {
        snprintf(why, len, "%ld daemon misses (host %ld, scheduling %ld, io %ld, no reason %ld) "
                 "of %ld results", daemon_misses, c->v[C_MISS_HOST], c->v[C_MISS_SCHED],
                 c->v[C_MISS_IO], c->v[C_MISS_NONE], c->v[C_RESULTS]);
    } else {
        why[0] = '\0';
    }
    return TRIAL_HELD;
}

static void case_capacity(ctx *x) {
    char title[400];
    snprintf(title, sizeof title,
             "capacity: most stream sessions held at 1 kHz (lemke, frames 150 us before each "
             "tick, %.2f s per trial, up to max_sessions = %d). held: >= 99.9 %% answered and no "
             "miss of the daemon's (host, scheduling, io, or no reason given); held-0.1%%: at most "
             "0.1 %% such misses (the search follows this one). SOLVER misses are listed, not "
             "counted", x->trial_s, x->d.max_sessions);
    table_header(title);
    static const char *const tname[] = {"held", "MISSED", "client-limited", "refused"};
    for (int p = 0; p < 3; p++) {
        scene_src *src = &x->peg[p];
        tally best = {0}, best_strict = {0};
        int held = 0, held_strict = 0, fail = 0;
        char fail_why[400] = "", strict_why[400] = "", trail[800] = "";
        trial_result fail_kind = TRIAL_HELD;
        // Doubling, then (full runs) bisection between the last held and the first failed.
        int n = 1, lo = 0, hi = 0;
        bool bisect = false;
        while (n >= 1 && n <= x->d.max_sessions) {
            if (!daemon_ready(x)) {
                break;
            }
            tally all = {0};
            char why[400];
            bool strict = false;
            const trial_result r = trial(x, src, n, &all, &strict, why, sizeof why);
            const size_t k = strlen(trail);
            snprintf(trail + k, sizeof trail - k, " %d:%s%s", n, tname[r],
                     r == TRIAL_HELD && !strict ? "(not strictly)" : "");
            if (r == TRIAL_HELD && strict && n > held_strict) {
                held_strict = n;
                tally_free(&best_strict);
                tally_add(&best_strict, &all);
            } else if (r == TRIAL_HELD && !strict && !strict_why[0]) {
                snprintf(strict_why, sizeof strict_why, "%d sessions: %s", n, why);
            }
            if (r == TRIAL_HELD) {
                if (n > held) {
                    held = n;
                    tally_free(&best);
                    best = all;
                } else {
                    tally_free(&all);
                }
                lo = n;
            } else {
                if (!fail || n < fail) {
                    fail = n;
                    fail_kind = r;
                    snprintf(fail_why, sizeof fail_why, "%s", why);
                }
                hi = n;
                tally_free(&all);
                if (r == TRIAL_REFUSED || r == TRIAL_CLIENT) {
                    break;
                }
            }
            if (!bisect && r == TRIAL_HELD) {
                if (n == x->d.max_sessions) {
                    break;
                }
                n = 2 * n < x->d.max_sessions ? 2 * n : x->d.max_sessions;
                continue;
            }
            if (x->a.quick) {
                break;
            }
            bisect = true;
            if (hi - lo <= 1) {
                break;
            }
            n = (lo + hi) / 2;
        }
        printf("# %s trials:%s\n", src->name, trail);
        if (held_strict > 0) {
            emit(x, "capacity", "held", src->name, held_strict, &best_strict, 0);
            printf("    # solver misses at %d sessions: %ld\n", held_strict,
                   best_strict.n.v[C_MISS_SOLVER]);
        } else {
            not_served("capacity", "held", src->name, 0,
                       strict_why[0] ? strict_why : fail_why[0] ? fail_why : "no trial");
        }
        if (held > 0) {
            emit(x, "capacity", "held-0.1%", src->name, held, &best, 0);
            printf("    # solver misses at %d sessions: %ld; daemon misses %ld; next: %s\n", held,
                   best.n.v[C_MISS_SOLVER],
                   best.n.v[C_MISS_HOST] + best.n.v[C_MISS_SCHED] + best.n.v[C_MISS_IO] +
                       best.n.v[C_MISS_NONE],
                   fail ? fail_why : "not tried (max_sessions reached)");
            if (fail && fail_kind == TRIAL_CLIENT) {
                printf("    # the client, not the daemon, was the limit at %d sessions\n", fail);
            }
        } else {
            not_served("capacity", "held-0.1%", src->name, 0, fail_why[0] ? fail_why : "no trial");
        }
        tally_free(&best);
        tally_free(&best_strict);
    }
}

/* ---- case 5: a hog beside light sessions ---------------------------------------------------- */

static void case_hog(ctx *x) {
    table_header("hog: 1 session lemke-standard on peg-32 at 100 Hz beside 8 light sessions "
                 "(peg-16, lemke, 1 kHz), all MODE_REQUEST at random phases");
    if (!daemon_ready(x)) {
        return;
    }
    sess *ss[MAX_RUN] = {0};
    char err[512];
    ss[0] = sess_open(&x->d, false, true, "lemke-standard", &x->peg[2], err, sizeof err);
    if (!ss[0]) {
        not_served("hog", "hog", "peg-32", 1, err);
        return;
    }
    print_welcome("hog", ss[0]);
    const int k = open_many(x, ss + 1, LIGHT, true, "lemke", &x->peg[1], err, sizeof err);
    if (k == 0) {
        not_served("hog", "light", "peg-16", LIGHT, err);
        sess_close_all(ss, 1);
        return;
    }
    print_welcome("light", ss[1]);
    bool granted = ss[0]->granted_request;
    for (int i = 1; i <= k; i++) {
        granted &= ss[i]->granted_request;
    }
    if (!granted) {
        printf("# !! MODE_REQUEST not granted to every session: measured as the daemon serves "
               "them (variants labelled -as-stream)\n");
    }
    if (k < LIGHT) {
        printf("# !! only %d of %d light sessions opened: %s\n", k, LIGHT, err);
    }
    const int64_t start = bench_now_ns() + 5 * MS;
    const int64_t count_from = start + (int64_t)(x->warm_s * SEC);
    const int64_t stop = count_from + (int64_t)(x->case_s * SEC);
    sched_free(ss[0], start, SEC / HOG_HZ, (stop - start) * HOG_HZ / SEC, &x->rng);
    for (int i = 1; i <= k; i++) {
        sched_free(ss[i], start, SEC / CLIENT_HZ, (stop - start) * CLIENT_HZ / SEC, &x->rng);
    }
    const dstats st = daemon_stats(&x->d);
    run_sessions(ss, k + 1, count_from, stop, 500 * MS);
    tally light = {0}, worst = {0};
    for (int i = 1; i <= k; i++) {
        tally_add(&light, &ss[i]->t);
    }
    tally_add(&worst, &ss[1 + worst_session(ss + 1, k)]->t);
    const double base = x->f.req[0] ? (double)x->f.req_lat[0].p50 : 0;
    const char *suffix = granted ? "" : "-as-stream";
    char v[48];
    if (worst.lat.n) {
        const int64_t p50 = summary_of(&worst.lat).p50;
        snprintf(v, sizeof v, "light/worst%s", suffix);
        const bench_summary w = emit(x, "hog", v, "peg-16", k, &worst,
                                     base > 0 ? (double)p50 / base : 0);
        snprintf(v, sizeof v, "light/all%s", suffix);
        emit(x, "hog", v, "peg-16", k, &light, 0);
        x->f.hog = true;
        x->f.hog_granted = granted;
        x->f.light_answered = pct(light.n.v[C_RESULTS], light.n.v[C_SENT]);
        x->f.light_worst_p99 = w.p99;
        x->f.light_solve_p99 = bench_summarize(&light.solve).p99;
        notes(&light, true);
    } else {
        not_served("hog", "light", "peg-16", k, "no results");
    }
    snprintf(v, sizeof v, "hog%s", suffix);
    if (ss[0]->t.lat.n) {
        emit(x, "hog", v, "peg-32", 1, &ss[0]->t, 0);
    } else {
        not_served("hog", v, "peg-32", 1, ss[0]->dead ? ss[0]->dead_why : "no results");
    }
    const counts *h = &ss[0]->t.n;
    printf("    # hog statuses: ok %ld, deadline %ld, fallback %ld, failed %ld, bad %ld; "
           "sources: solver %ld, iterate %ld, last-certified %ld, none %ld\n",
           h->v[C_ST_OK], h->v[C_ST_DEADLINE], h->v[C_ST_FALLBACK], h->v[C_ST_FAILED],
           h->v[C_BAD], h->v[C_SRC_SOLVER], h->v[C_SRC_ITERATE], h->v[C_SRC_LAST],
           h->v[C_SRC_NONE]);
    notes(&ss[0]->t, false);
    stats_note(x, &st);
    tally_free(&light);
    tally_free(&worst);
    sess_close_all(ss, k + 1);
}

/* ---- case 6: admissions and closes beside a live session ------------------------------------ */

/* The churn client, on a thread of its own: at CHURN_HZ from start, it opens a session with the
 * daemon's default limits (a Hello with no limits; lemke, the daemon's default solver, named; the
 * default mode, stream) over UDS and closes it as soon as the Welcome is in. No Hello at or after
 * end, at most max of them. A slot it reaches more than one period late (an open took that long)
 * is skipped and counted, not made up in a burst. The main thread reads the results after the
 * join. */
typedef struct churn {
    const char *socket;
    int64_t start, end;
    int max;
    atomic_bool stop;     /* the main thread's early stop */
    int hellos, welcomed, refused, skipped;
    bench_samples hello;  /* connect + Hello -> Welcome of each welcomed Hello, ns */
    int64_t first_ns;     /* ... of the first one */
    char first_err[200];
    uint32_t bodies, contacts, dirs; /* granted in the first Welcome */
    uint64_t workspace;
    int mode;
} churn;

static void *churn_main(void *arg) {
    churn *ch = arg;
    const cdc_hello h = {.client_name = "bench_service-churn", .solver_name = "lemke"};
    const int64_t period = SEC / CHURN_HZ;
    int64_t next = ch->start;
    while (ch->hellos < ch->max && !atomic_load(&ch->stop)) {
        const struct timespec at = {.tv_sec = next / SEC, .tv_nsec = next % SEC};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
        }
        const int64_t t0 = bench_now_ns();
        if (t0 >= ch->end || atomic_load(&ch->stop)) {
            break;
        }
        ch->hellos++;
        cdc_conn *c = NULL;
        char err[256];
        const int r = cdc_conn_open_unix(ch->socket, &h, OPEN_TIMEOUT_NS, &c, err, sizeof err);
        const int64_t t1 = bench_now_ns();
        if (r == 0) {
            const Contactd__V1__Welcome *w = cdc_wire_welcome(c);
            if (ch->welcomed++ == 0) {
                ch->bodies = w->limits ? w->limits->max_bodies : 0;
                ch->contacts = w->limits ? w->limits->max_contacts : 0;
                ch->dirs = w->limits ? w->limits->max_friction_directions : 0;
                ch->workspace = w->workspace_bytes;
                ch->mode = w->mode;
                ch->first_ns = t1 - t0;
            }
            bench_samples_push(&ch->hello, t1 - t0);
        } else {
            ch->refused++;
            if (!ch->first_err[0]) {
                snprintf(ch->first_err, sizeof ch->first_err, "%.190s", err);
            }
        }
        cdc_conn_close(c);
        next += period;
        const int64_t late = bench_now_ns() - next;
        if (late > period) {
            ch->skipped += (int)(late / period);
            next += late / period * period;
        }
    }
    return NULL;
}

static void case_churn(ctx *x) {
    char title[400];
    snprintf(title, sizeof title,
             "churn: 1 light session (MODE_REQUEST, peg-16, lemke, 1 kHz from the client's "
             "clock at a random phase) without, then with a second client opening and closing "
             "a session with the daemon's default limits (no limits in its Hello; lemke) %d "
             "times a second, back to back on the same session", CHURN_HZ);
    table_header(title);
    if (!daemon_ready(x)) {
        return;
    }
    char err[512];
    sess *s = sess_open(&x->d, false, true, "lemke", &x->peg[1], err, sizeof err);
    if (!s) {
        not_served("churn", "light", "peg-16", 1, err);
        return;
    }
    print_welcome("light", s);
    const char *suffix = s->granted_request ? "" : "-as-stream";
    if (!s->granted_request) {
        printf("# !! MODE_REQUEST not granted (Welcome.mode = %s): measured as the daemon serves "
               "it (variants labelled %s)\n", mode_name(s->w->mode), suffix);
    }
    churn *ch = bench_alloc(sizeof *ch);
    bench_summary lat[2] = {{0}};
    bool measured[2] = {false, false};
    for (int w = 0; w < 2; w++) {
        char v[48];
        if (w) {
            snprintf(v, sizeof v, "light/churn-%dHz%s", CHURN_HZ, suffix);
        } else {
            snprintf(v, sizeof v, "light/no-churn%s", suffix);
        }
        if (s->dead) {
            not_served("churn", v, "peg-16", 1, s->dead_why);
            break;
        }
        const int64_t start = bench_now_ns() + 5 * MS;
        const int64_t count_from = start + (int64_t)(x->warm_s * SEC);
        const int64_t stop = count_from + (int64_t)(x->case_s * SEC);
        pthread_t th;
        if (w == 1) {
            // The churn runs through the warm-up too: the counted window sees it steady.
            *ch = (churn){.socket = x->d.p.socket, .start = start, .end = stop,
                          .max = (int)((stop - start) * CHURN_HZ / SEC) + 1};
            const int e = pthread_create(&th, NULL, churn_main, ch);
            if (e != 0) {
                not_served("churn", v, "peg-16", 1, strerror(e));
                break;
            }
        }
        sched_free(s, start, SEC / CLIENT_HZ, (stop - start) * CLIENT_HZ / SEC, &x->rng);
        const dstats st = daemon_stats(&x->d);
        run_sessions(&s, 1, count_from, stop, 300 * MS);
        if (w == 1) {
            atomic_store(&ch->stop, true);
            pthread_join(th, NULL);
        }
        if (s->t.lat.n) {
            const int64_t p50 = summary_of(&s->t.lat).p50;
            const double ratio = !w                ? 1.0
                                 : lat[0].p50 > 0 ? (double)p50 / (double)lat[0].p50
                                                  : 0;
            lat[w] = emit(x, "churn", v, "peg-16", 1, &s->t, ratio);
            measured[w] = true;
        } else {
            not_served("churn", v, "peg-16", 1, s->dead ? s->dead_why : "no results");
        }
        if (w == 1 && measured[0] && measured[1] && lat[0].p50 > 0 && lat[0].p99 > 0) {
            printf("    # with / without churn: p50 x%.2f, p99 x%.2f, p99.9 x%.2f, max x%.2f\n",
                   (double)lat[1].p50 / (double)lat[0].p50,
                   (double)lat[1].p99 / (double)lat[0].p99,
                   lat[0].p999 > 0 ? (double)lat[1].p999 / (double)lat[0].p999 : 0,
                   lat[0].max > 0 ? (double)lat[1].max / (double)lat[0].max : 0);
        }
        notes(&s->t, true);
        stats_note(x, &st);
        tally_free(&s->t); // the next window starts from zero on the same session
    }
    if (ch->hellos > 0) {
        tally hw = {0};
        samples_append(&hw.lat, &ch->hello);
        const bench_summary h = emit(x, "churn", "hello->welcome", "default", 1, &hw, 0);
        tally_free(&hw);
        const int slots = ch->hellos + ch->skipped;
        printf("    # churn client: %d Hellos at %d Hz (%d slots skipped: an open ran over a "
               "period), %d welcomed, %d refused or failed%s%s\n", ch->hellos, CHURN_HZ,
               ch->skipped, ch->welcomed, ch->refused, ch->first_err[0] ? "; first: " : "",
               ch->first_err);
        if (ch->welcomed) {
            printf("    # connect + Hello -> Welcome: p50 %.2f ms, p99 %.2f ms, max %.2f ms, "
                   "first %.2f ms; granted %u bodies, %u contacts, %u directions, workspace "
                   "%.2f MB, mode %s\n", h.p50 / 1e6, h.p99 / 1e6, h.max / 1e6,
                   ch->first_ns / 1e6, ch->bodies, ch->contacts, ch->dirs,
                   (double)ch->workspace / 1e6, mode_name(ch->mode));
        }
        x->f.churn_hellos = ch->hellos;
        x->f.churn_welcomed = ch->welcomed;
        x->f.churn_slots = slots;
    }
    const dstats now = daemon_stats(&x->d);
    if (now.ok) {
        printf("    # daemon Stats.sessions after the churn: %u (the light session still open)\n",
               now.sessions);
    }
    x->f.churn = measured[0] && measured[1];
    x->f.churn_lat[0] = lat[0];
    x->f.churn_lat[1] = lat[1];
    bench_samples_free(&ch->hello);
    free(ch);
    sess *ss[1] = {s};
    sess_close_all(ss, 1);
}

/* ---- targets ------------------------------------------------------------------------------ */

static void targets(const ctx *x) {
    const findings *f = &x->f;
    printf("\n## targets (reported, not asserted)\n");
    if (f->wake && f->cyc.p999 > 0) {
        bench_target(f->wake_proxy ? "daemon p99.9 / cyclictest p99.9 (start-lag proxy)"
                                   : "daemon wake-up p99.9 / cyclictest p99.9",
                     (double)f->dwake.p999 / (double)f->cyc.p999, 1.5, "x");
    } else {
        printf("target: daemon wake-up p99.9 / cyclictest p99.9: not measured\n");
    }
    for (int t = 0; t < 2; t++) {
        const char *name = t ? "tcp" : "uds";
        char what[96];
        if (!f->req[t]) {
            printf("target: request %s: not measured\n", name);
            continue;
        }
        if (!f->req_granted[t]) {
            printf("# request %s ran as a stream session (MODE_REQUEST not granted)\n", name);
        }
        if (!t) {
            snprintf(what, sizeof what, "request uds p50 - solve p50");
            bench_target(what, (f->req_lat[0].p50 - f->req_solve[0].p50) / 1e3, 40, "us");
            snprintf(what, sizeof what, "request uds p99 - solve p99");
            bench_target(what, (f->req_lat[0].p99 - f->req_solve[0].p99) / 1e3, 150, "us");
        } else if (f->req[0]) {
            bench_target("request tcp p50 - uds p50", (f->req_lat[1].p50 - f->req_lat[0].p50) / 1e3,
                         30, "us");
            bench_target("request tcp p99 - uds p99", (f->req_lat[1].p99 - f->req_lat[0].p99) / 1e3,
                         30, "us");
        }
    }
    if (f->req[2]) {
        // Not a target (the targets are for a client at a random phase that sleeps); the same
        // differences with a client that polls, so its own wake-up is not in them.
        printf("# request uds, polling client: p50 - solve p50 %.1f us, p99 - solve p99 %.1f us\n",
               (f->req_lat[2].p50 - f->req_solve[2].p50) / 1e3,
               (f->req_lat[2].p99 - f->req_solve[2].p99) / 1e3);
    }
    for (int v = 0; v < 2; v++) {
        // What the host costs a request with no server work at all, and what is left to the
        // daemon: its p50 - solve p50 less the floor's p50.
        const int r = v ? 2 : 0;
        if (f->floor[v] && f->req[r]) {
            printf("# request uds%s: echo floor p50 %.1f us; p50 - solve p50 - floor p50 = %.1f "
                   "us (the daemon's own share)\n", v ? ", polling client" : "",
                   f->floor_lat[v].p50 / 1e3,
                   (f->req_lat[r].p50 - f->req_solve[r].p50 - f->floor_lat[v].p50) / 1e3);
        }
    }
    if (f->floor[0] && f->floor[2] && f->req[0] && f->req[1]) {
        // What TCP itself costs this host: the same bytes echoed over loopback TCP and over a
        // Unix socket, against the daemon's tcp - uds difference.
        printf("# request tcp: echo floor p50 %.1f us, %.1f us above the uds floor's; tcp p50 - "
               "uds p50 beyond that = %.1f us\n",
               f->floor_lat[2].p50 / 1e3, (f->floor_lat[2].p50 - f->floor_lat[0].p50) / 1e3,
               ((f->req_lat[1].p50 - f->req_lat[0].p50) -
                (f->floor_lat[2].p50 - f->floor_lat[0].p50)) /
                   1e3);
    }
    for (int c = 0; c < 4; c++) {
        char what[96];
        if (!f->stream[c]) {
            continue;
        }
        snprintf(what, sizeof what, "stream %d: worst p50 - 150 us - solve p50", f->stream_n[c]);
        bench_target(what, (f->stream_worst[c].p50 - LEAD_NS - f->stream_solve[c].p50) / 1e3, 40,
                     "us");
        if (f->stream_n[c] == 16) {
            bench_target("stream 16: unanswered %", 100.0 - f->stream_answered[c], 0.1, "%");
            bench_target("stream 16: deadline misses %", f->stream_miss[c], 0.1, "%");
            bench_target("stream 16: worst session p99", f->stream_worst[c].p99 / 1e3, 1200, "us");
        }
    }
    if (f->hog) {
        if (!f->hog_granted) {
            printf("# hog ran as stream sessions (MODE_REQUEST not granted)\n");
        }
        bench_target("hog: light unanswered %", 100.0 - f->light_answered, 0.1, "%");
        bench_target("hog: light worst p99 - light solve p99",
                     (f->light_worst_p99 - f->light_solve_p99) / 1e3, 250, "us");
    } else {
        printf("target: hog beside light: not measured\n");
    }
    if (f->churn && f->churn_lat[0].p99 > 0) {
        // Live sessions' latency is to be "the same" with 50 admissions and closes a second as
        // without; 1.2 is our reading of "the same" on a noisy 2-core machine.
        bench_target("churn: light p99 with / without",
                     (double)f->churn_lat[1].p99 / (double)f->churn_lat[0].p99, 1.2, "x");
        printf("# churn: %d of %d Hellos welcomed (%d slots at %d Hz)\n", f->churn_welcomed,
               f->churn_hellos, f->churn_slots, CHURN_HZ);
    } else {
        printf("target: churn: not measured\n");
    }
}

/* ---- main --------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    void (*run)(ctx *);
} all_cases[] = {{"wake", case_wake},         {"request", case_request}, {"stream", case_stream},
                 {"capacity", case_capacity}, {"hog", case_hog},         {"churn", case_churn}};

int main(int argc, char **argv) {
    // The contactd path is the one positional argument; the rest is bench_common's.
    const char *exe = CONTACTD_EXE;
    const char *cases = bench_take_cases(&argc, argv, "wake,request,stream,capacity,hog,churn");
    bool exe_given = false;
    const char *keep_awake = NULL;
    char *rest[64];
    int nrest = 0;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc && nrest < 62; i++) {
        const bool valued = !strcmp(argv[i], "--repeat") || !strcmp(argv[i], "--budget") ||
                            !strcmp(argv[i], "--out") || !strcmp(argv[i], "--gnuplot");
        if (!strcmp(argv[i], "--keep-awake") && i + 1 < argc &&
            (!strcmp(argv[i + 1], "on") || !strcmp(argv[i + 1], "off"))) {
            keep_awake = argv[++i];
        } else if (valued && i + 1 < argc) {
            rest[nrest++] = argv[i++];
            rest[nrest++] = argv[i];
        } else if (argv[i][0] != '-' && !exe_given) {
            exe = argv[i];
            exe_given = true;
        } else {
            rest[nrest++] = argv[i];
        }
    }
    rest[nrest] = NULL;
    ctx *x = bench_alloc(sizeof *x);
    x->a = bench_parse(nrest, rest,
                       "  CONTACTD: the daemon to start (default: the one this build made).\n"
                       "The service as a client meets it (six cases, see bench_service.c); "
                       "writes service.csv and service.png to --out or $CONTACTD_BENCH_OUT.\n"
                       "--budget SECONDS: measured length of each case (default 4; --quick: "
                       "0.3).\n"
                       "--cases LIST: the cases to run, comma-separated (default: "
                       "wake,request,stream,capacity,hog,churn).\n"
                       "--keep-awake on|off: the daemon with [loop] keep_awake set so.\n",
                       1);
    // Timers of this thread (ppoll) wake on time, not up to 50 us late.
    prctl(PR_SET_TIMERSLACK, 1UL);
    if (!getenv("CONTACTD_DATA")) {
        setenv("CONTACTD_DATA", CONTACTD_BENCH_DIR "/../data", 1);
    }
    x->case_s = x->a.quick ? 0.3 : x->a.budget_s;
    x->warm_s = x->a.quick ? 0.1 : 0.3;
    x->trial_s = x->a.quick ? 0.3 : fmax(0.3, x->case_s / 4);
    x->rng = t_rng_seed(SEED);
    bench_header(stdout, "service", &x->a);
    printf("# cases: %.2f s measured each after %.2f s warm-up; capacity trials %.2f s\n",
           x->case_s, x->warm_s, x->trial_s);
    src_gen(&x->peg[0], 8);
    src_json(&x->peg[1]);
    src_gen(&x->peg[2], 32);
    printf("# scenes: peg-16 = tests/data/peg_in_hole.json (gravity on); peg-8, peg-32 = "
           "t_gen_peg (mu %.2f, d %d, gravity off); %d instances each (turning wrench)\n",
           MU, DIRS, POOL);

    bench_daemon *d = &x->d;
    d->exe = exe;
    d->keep_awake = keep_awake;
    d->out_dir = x->a.out_dir;
    d->max_sessions = CD_MAX_SESSIONS_DEFAULT;
    if (STREAM_MAX > CD_MAX_SESSIONS_DEFAULT) {
        d->max_sessions = STREAM_MAX;
        d->raised = true;
    }
    char logp[1024];
    snprintf(logp, sizeof logp, "%s/service-contactd.log", x->a.out_dir);
    remove(logp);
    g_daemon = d;
    atexit(cleanup_at_exit);
    catch_fatal_signals();
    printf("# contactd: %s\n# config: the daemon's defaults except socket (temporary) and "
           "tcp = 127.0.0.1:0 (tcp_allow_any_local_user = yes)\n", exe);
    if (d->raised) {
        printf("# config: max_sessions = %d (the default, %d, is below the %d sessions of the "
               "stream case)\n", d->max_sessions, CD_MAX_SESSIONS_DEFAULT, STREAM_MAX);
    }
    if (d->keep_awake) {
        printf("# config: keep_awake = %s (--keep-awake)\n", d->keep_awake);
    }
    if (daemon_start(d) < 0) {
        printf("# contactd did not start: no case can run\n");
        return 1;
    }
    printf("# contactd pid %d, listening on unix:%s tcp:%s\n", (int)d->p.pid, d->p.socket,
           d->p.tcp);
    if (d->tick_line[0]) {
        printf("# contactd log: %s\n", d->tick_line);
    }
    x->st0 = daemon_stats(d);
    printf("# daemon Stats.realtime: %s\n",
           !x->st0.ok ? "unknown (no Stats)" : x->st0.realtime ? "yes (SCHED_FIFO)" : "no");
    printf("# latency: client CLOCK_MONOTONIC before the send to after the Result is read; "
           "solve: Result.timing.solve_ns; answered: Results / frames sent; miss%%: of Results\n");
    x->csv = bench_csv_open(&x->a, "service");

    for (size_t i = 0; i < sizeof all_cases / sizeof all_cases[0]; i++) {
        if (bench_listed(cases, all_cases[i].name)) {
            all_cases[i].run(x);
        }
    }

    fclose(x->csv);
    printf("\n");
    // A daemon that already exited is reported by its status (t_daemon_stop prints its reasons).
    const int stop = daemon_alive(d) ? t_daemon_stop(&d->p) : 0;
    g_daemon_pid = d->p.pid;
    if (stop < 0 || d->p.exit_status != 0) {
        if (d->p.pid > 0) {
            printf("# !! contactd did not exit within %d s of SIGTERM\n",
                   T_DAEMON_TIMEOUT_MS / 1000);
        } else if (d->p.exit_status != 0) {
            printf("# !! contactd exited with a non-zero status after SIGTERM\n#    status %d\n",
                   d->p.exit_status);
        } else {
            printf("# !! contactd exited after SIGTERM without STOPPING=1\n");
        }
        log_tail(d, 15);
    } else {
        printf("# contactd stopped cleanly (SIGTERM, exit 0)%s\n",
               d->starts > 1 ? "; it had to be restarted during the run" : "");
    }
    daemon_cleanup(d);
    printf("# daemon log: %s\n", logp);
    bench_plot(&x->a, CONTACTD_BENCH_DIR "/service.gp", "service.csv", "service.png");
    targets(x);
    for (int p = 0; p < 3; p++) {
        src_free(&x->peg[p]);
    }
    g_daemon = NULL;
    free(x);
    return 0;
}
