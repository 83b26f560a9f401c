/* SPDX-License-Identifier: MIT */
/* Soak: the daemon under steady use for a long time, watched for leaks and lost answers.
 * SESSIONS request-mode sessions (peg-16, lemke) at 1 kHz from one client thread, every frame
 * of which must come back exactly once and in order; beside them one client that connects, says
 * Hello and leaves every 100 ms, and one that sends garbage every 100 ms (random bytes, a bogus
 * length prefix, a Hello followed by junk). Every second the daemon's resident memory and open
 * descriptors are sampled from /proc. Verdict: every frame answered or refused (by the rate
 * limit, with its seq) exactly once, descriptors flat (the last third's peak within 2 of the
 * first third's, after a warm-up) and, for runs of a minute or more, memory flat (the last
 * third's median resident size within 10 % + 1 MiB of the first third's; peaks are reported).
 * Output: a table, <out>/soak.csv, <out>/soak.png.
 * Usage: soak CONTACTD [--duration S] [--sessions N] [--out DIR] [--long-solve-us US]
 * [--gnuplot PATH]
 * (the long run: 600 s; tests/bench/meson.build runs 5 s in the bench-smoke suite). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client_wire.h"
#include "daemon_proc.h"
#include "solver/contact.h"
#include "wire/scene_json.h"

#define PERIOD_NS 1000000
#define MAX_SESSIONS 64
#define MAX_SAMPLES 100000

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_until(int64_t t_ns) {
    const struct timespec ts = {.tv_sec = t_ns / 1000000000, .tv_nsec = t_ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

struct session {
    cdc_conn *c;
    uint8_t *seen;  /* [frames + 1]: ANSWERED or REFUSED by seq */
    uint64_t sent, answered, refused, lost, duplicated, other;
};

enum { ANSWERED = 1, REFUSED = 2 };

struct sample {
    double t_s;
    long rss_kb, fds;
    uint64_t answered;
};

static t_daemon d;
static _Atomic bool running = true;
static _Atomic uint64_t churned, churn_failed, garbage_sent;

// The daemon's resident memory (kB), or -1.
static long rss_kb(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return kb;
}

// The daemon's open descriptors, or -1.
static long open_fds(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *dir = opendir(path);
    if (!dir) {
        return -1;
    }
    long n = 0;
    for (const struct dirent *e; (e = readdir(dir));) {
        n += e->d_name[0] != '.';
    }
    closedir(dir);
    return n;
}

// A client that connects, says Hello, gets its Welcome and leaves, every 100 ms.
static void *churn(void *arg) {
    (void)arg;
    const cdc_hello hello = {.client_name = "soak-churn",
                             .limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8}};
    for (int64_t t = now_ns(); atomic_load(&running); t += 100 * PERIOD_NS) {
        cdc_conn *c = NULL;
        char err[256];
        if (cdc_conn_open_unix(d.socket, &hello, (int64_t)5 * 1000000000, &c, err, sizeof err) ==
            0) {
            cdc_conn_close(c);
            atomic_fetch_add(&churned, 1);
        } else {
            atomic_fetch_add(&churn_failed, 1);
        }
        sleep_until(t + 100 * PERIOD_NS);
    }
    return NULL;
}

// A client that sends garbage every 100 ms: random bytes, a length prefix announcing 2^60
// bytes, or a Hello followed by junk; then reads what the daemon says until it closes.
static void *garbage(void *arg) {
    (void)arg;
    uint64_t x = 0x2545f4914f6cdd1du;
    for (int64_t t = now_ns(), k = 0; atomic_load(&running); t += 100 * PERIOD_NS, k++) {
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        const size_t len = strnlen(d.socket, sizeof sa.sun_path - 1);
        memcpy(sa.sun_path, d.socket, len);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            uint8_t buf[512];
            size_t n = 0;
            if (k % 3 == 0) {
                for (n = 0; n < sizeof buf; n++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    buf[n] = (uint8_t)x;
                }
            } else if (k % 3 == 1) {
                static const uint8_t huge[] = {0x80, 0x80, 0x80, 0x80, 0x80,
                                               0x80, 0x80, 0x80, 0x10};
                memcpy(buf, huge, sizeof huge);
                n = sizeof huge;
            } else {
                // Hello{protocol_version: 1} framed, then a frame field of junk.
                static const uint8_t hello[] = {4, 0x0a, 2, 0x08, 1, 9, 0x12, 7, 1, 2,
                                                3, 4, 5, 6, 7, 8, 9};
                memcpy(buf, hello, sizeof hello);
                n = sizeof hello;
            }
            (void)!send(fd, buf, n, MSG_NOSIGNAL);
            struct timeval tv = {.tv_sec = 2};
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            while (recv(fd, buf, sizeof buf, 0) > 0) {
            }
            atomic_fetch_add(&garbage_sent, 1);
        }
        if (fd >= 0) {
            close(fd);
        }
        sleep_until(t + 100 * PERIOD_NS);
    }
    return NULL;
}

// Marks seq of s as answered or refused; a second answer, or an answer of a frame never sent,
// is a duplicate.
static void mark(struct session *s, uint64_t seq, uint8_t how) {
    if (seq == 0 || seq > s->sent || s->seen[seq]) {
        s->duplicated++;
        return;
    }
    s->seen[seq] = how;
    *(how == ANSWERED ? &s->answered : &s->refused) += 1;
}

// Reads every message waiting on s (wait_ns for the first): each frame's Result, or the
// ERROR_LIMIT that refused it (the rate limit: said, not lost), must come exactly once.
static void drain(struct session *s, int64_t wait_ns) {
    Contactd__V1__ServerMessage *m = NULL;
    while (cdc_wire_recv(s->c, wait_ns, &m) == 1) {
        wait_ns = 0;
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT) {
            mark(s, m->result->seq, ANSWERED);
        } else if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR &&
                   m->error->code == CONTACTD__V1__ERROR_CODE__ERROR_LIMIT) {
            mark(s, m->error->seq, REFUSED);
        } else {
            // Anything else is unexpected: the first few are shown.
            if (s->other++ < 3) {
                printf("# unexpected: %s%s\n",
                       m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR ? "Error: " :
                       m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE ? "Goodbye: "
                                                                                : "message ",
                       m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR ? m->error->message
                       : m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE
                           ? m->goodbye->reason
                           : "of another kind");
            }
        }
        cdc_wire_free(m);
    }
}

static int cmp_long(const void *a, const void *b) {
    const long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long median_rss(const struct sample *v, int from, int to) {
    static long tmp[MAX_SAMPLES];
    if (to <= from) {
        return 0;
    }
    for (int i = from; i < to; i++) {
        tmp[i - from] = v[i].rss_kb;
    }
    qsort(tmp, (size_t)(to - from), sizeof tmp[0], cmp_long);
    return tmp[(to - from) / 2];
}

static long peak(const struct sample *v, int from, int to, bool fds) {
    long p = 0;
    for (int i = from; i < to; i++) {
        const long x = fds ? v[i].fds : v[i].rss_kb;
        p = x > p ? x : p;
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: soak CONTACTD [--duration S] [--sessions N] [--out DIR] "
                "[--long-solve-us US] [--gnuplot PATH]\n"
                "16 request sessions (default) at 1 kHz, a Hello-and-leave client and a garbage "
                "client every 100 ms;\nchecks every frame answered once and memory and "
                "descriptors flat; writes DIR/soak.csv (and .png with --gnuplot).\n"
                "--long-solve-us sets the daemon's [loop] long_solve_us: a value near the solve "
                "time (~20)\nmakes sessions move between the foreground and background workers "
                "all the time.\n"
                "example: soak build/daemon/contactd --duration 600 --out /tmp/soak "
                "--gnuplot gnuplot\n");
        return argc < 2 ? 2 : 0;
    }
    const char *exe = argv[1], *out = getenv("CONTACTD_BENCH_OUT"), *gnuplot = NULL;
    double duration = 600;
    int nses = 16, long_solve_us = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--duration")) {
            duration = atof(argv[i + 1]);
        } else if (!strcmp(argv[i], "--sessions")) {
            nses = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--out")) {
            out = argv[i + 1];
        } else if (!strcmp(argv[i], "--long-solve-us")) {
            long_solve_us = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--gnuplot")) {
            gnuplot = argv[i + 1];
        } else {
            fprintf(stderr, "soak: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!(duration >= 3) || nses < 1 || nses > MAX_SESSIONS) {
        fprintf(stderr, "soak: --duration >= 3 s and --sessions in [1, %d]\n", MAX_SESSIONS);
        return 2;
    }
    out = out ? out : "bench-out";
    mkdir(out, 0755);
    char scene_path[512], err[512];
    const char *data = getenv("CONTACTD_DATA");
    snprintf(scene_path, sizeof scene_path, "%s/peg_in_hole.json", data ? data : "tests/data");
    cs_scene peg;
    if (cd_scene_json_load(scene_path, cs_scene_validate, &peg, err, sizeof err) < 0) {
        fprintf(stderr, "soak: %s\n", err);
        return 1;
    }
    char ini[128];
    int len = snprintf(ini, sizeof ini, "[server]\nmax_sessions = %d\n", nses + 8);
    if (long_solve_us > 0) {
        snprintf(ini + len, sizeof ini - (size_t)len, "[loop]\nlong_solve_us = %d\n",
                 long_solve_us);
    }
    if (t_daemon_start(&d, exe, "soak", ini, 0) < 0) {
        t_daemon_cleanup(&d, stderr);
        return 1;
    }
    static struct session ses[MAX_SESSIONS];
    const size_t frames = (size_t)(duration * 1000) + 2;
    const cdc_hello hello = {.client_name = "soak", .request_mode = true,
                             .limits = {.max_bodies = 1, .max_contacts = peg.nc, .max_dirs = 8}};
    for (int i = 0; i < nses; i++) {
        ses[i].seen = calloc(frames + 1, 1);
        if (!ses[i].seen || cdc_conn_open_unix(d.socket, &hello, (int64_t)5 * 1000000000,
                                               &ses[i].c, err, sizeof err) < 0) {
            fprintf(stderr, "soak: session %d: %s\n", i, err);
            t_daemon_cleanup(&d, stderr);
            return 1;
        }
    }
    pthread_t tc, tg;
    pthread_create(&tc, NULL, churn, NULL);
    pthread_create(&tg, NULL, garbage, NULL);
    static struct sample samples[MAX_SAMPLES];
    int ns = 0;
    const int64_t start = now_ns(), end = start + (int64_t)(duration * 1e9);
    int64_t next_sample = start;
    for (int64_t t = start; t < end; t += PERIOD_NS) {
        sleep_until(t);
        // A client that fell behind (a loaded host) skips ticks rather than bursting to catch
        // up: the sessions keep to the rate the daemon grants.
        const int64_t late = now_ns() - t;
        if (late > PERIOD_NS) {
            t += late / PERIOD_NS * PERIOD_NS;
        }
        for (int i = 0; i < nses; i++) {
            if (ses[i].sent + 1 > frames) {
                continue;
            }
            peg.seq = ++ses[i].sent;
            const int r = cdc_wire_frame_send(ses[i].c, &peg);
            if (r < 0 && ses[i].other++ < 3) {
                printf("# session %d: send: %s\n", i, strerror(-r));
            }
        }
        for (int i = 0; i < nses; i++) {
            drain(&ses[i], 0);
        }
        if (t >= next_sample && ns < MAX_SAMPLES) {
            uint64_t answered = 0;
            for (int i = 0; i < nses; i++) {
                answered += ses[i].answered;
            }
            samples[ns++] = (struct sample){(double)(t - start) / 1e9, rss_kb(d.pid),
                                            open_fds(d.pid), answered};
            next_sample += 1000 * PERIOD_NS;
        }
    }
    atomic_store(&running, false);
    pthread_join(tc, NULL);
    pthread_join(tg, NULL);
    uint64_t sent = 0, answered = 0, refused = 0, lost = 0, dup = 0, other = 0;
    // The last frames' answers: up to 2 s for all sessions together, and no wait for a session
    // that has every answer already (a duplicate would still be read: drain takes what came).
    const int64_t last = now_ns() + 2000 * (int64_t)PERIOD_NS;
    for (int i = 0; i < nses; i++) {
        drain(&ses[i], 0);
        while (ses[i].answered + ses[i].refused < ses[i].sent && now_ns() < last) {
            drain(&ses[i], last - now_ns());
        }
        // Frames neither answered nor refused by the end are lost.
        for (uint64_t q = 1; q <= ses[i].sent; q++) {
            ses[i].lost += ses[i].seen[q] == 0;
        }
        sent += ses[i].sent, answered += ses[i].answered, refused += ses[i].refused;
        lost += ses[i].lost, dup += ses[i].duplicated, other += ses[i].other;
        cdc_conn_close(ses[i].c);
        free(ses[i].seen);
    }
    // Flat: after a warm-up of a tenth of the run (at least 2 s), the last third against the
    // first. Memory is judged by each third's median, the resident baseline a leak would raise:
    // a single sample can catch sessions in admission or teardown (each garbage Hello asks for
    // the default limits, about 5 MiB), so peaks are reported, not judged.
    int warm = (int)(ns / 10);
    warm = warm < 2 ? 2 : warm;
    const int third = (ns - warm) / 3;
    const long rss0 = median_rss(samples, warm, warm + third);
    const long rss1 = median_rss(samples, ns - third, ns);
    const long peak0 = peak(samples, warm, warm + third, false);
    const long peak1 = peak(samples, ns - third, ns, false);
    const long fd0 = peak(samples, warm, warm + third, true);
    const long fd1 = peak(samples, ns - third, ns, true);
    // Memory settles in the first minute (the allocator's per-thread arenas for the admission
    // threads): a shorter run reports it and judges only what cannot settle (fds, answers).
    const bool judge_rss = duration >= 60;
    const bool rss_flat = !judge_rss || (third > 0 && rss1 <= rss0 + rss0 / 10 + 1024);
    const bool fds_flat = third > 0 && fd1 <= fd0 + 2;
    const bool alive = t_daemon_is_running(&d);
    char csv[600], png[600];
    snprintf(csv, sizeof csv, "%s/soak.csv", out);
    snprintf(png, sizeof png, "%s/soak.png", out);
    FILE *f = fopen(csv, "w");
    if (f) {
        fprintf(f, "t_s,rss_kb,fds,answered\n");
        for (int i = 0; i < ns; i++) {
            fprintf(f, "%.3f,%ld,%ld,%llu\n", samples[i].t_s, samples[i].rss_kb, samples[i].fds,
                    (unsigned long long)samples[i].answered);
        }
        fclose(f);
    }
    printf("# soak: %d request sessions (peg-16, lemke) at 1 kHz for %.0f s, a Hello-and-leave "
           "client and a garbage client every 100 ms each\n", nses, duration);
    printf("frames %llu  answered %llu  refused %llu  lost %llu  duplicated %llu  other %llu\n",
           (unsigned long long)sent, (unsigned long long)answered, (unsigned long long)refused,
           (unsigned long long)lost, (unsigned long long)dup, (unsigned long long)other);
    printf("churn: %llu welcomed, %llu failed; garbage connections: %llu\n",
           (unsigned long long)atomic_load(&churned),
           (unsigned long long)atomic_load(&churn_failed),
           (unsigned long long)atomic_load(&garbage_sent));
    printf("rss median: first third %ld kB, last third %ld kB (%s; peaks %ld, %ld kB); fds "
           "peak: %ld, %ld (%s); daemon %s\n", rss0, rss1,
           !judge_rss ? "not judged under 60 s" : rss_flat ? "flat" : "GROWING", peak0, peak1,
           fd0, fd1, fds_flat ? "flat" : "GROWING", alive ? "running" : "EXITED");
    printf("csv: %s\n", csv);
    if (gnuplot && ns > 1) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "%s -e \"set terminal pngcairo size 900,500; set output '%s'; set datafile "
                 "separator ','; set key autotitle columnhead; set xlabel 's'; set ylabel 'kB'; "
                 "set y2label 'descriptors'; set y2tics; plot '%s' using 1:2 with lines "
                 "title 'RSS (kB)', '' using 1:3 axes x1y2 with lines title 'open fds'\"",
                 gnuplot, png, csv);
        if (system(cmd) == 0) {
            printf("png: %s\n", png);
        }
    }
    // A clean exit (0 after SIGTERM) also says a sanitizer build found no leak at the end.
    const bool stopped = alive && t_daemon_stop(&d) == 0;
    printf("daemon stop: %s\n", stopped ? "clean (exit 0)" : "NOT CLEAN");
    const bool ok = stopped && lost == 0 && dup == 0 && other == 0 && rss_flat && fds_flat &&
                    atomic_load(&churn_failed) == 0;
    printf("soak: %s\n", ok ? "PASS" : "FAIL");
    t_daemon_cleanup(&d, ok ? NULL : stderr);
    cd_scene_json_free(&peg);
    return ok ? 0 : 1;
}
