/* SPDX-License-Identifier: MIT */
/* contactd-demo: a haptic-style client loop. A 2 kg box of 0.2 m rests on a plane with its four
 * bottom corners in contact. A virtual-coupling "haptic probe" (a spring-damper between the box
 * and a probe point that sways slowly from side to side) pushes it sideways. At every tick
 * (1 kHz by default, absolute-time pacing) the demo sends the box's state to contactd, takes
 * whatever answers arrive before the next tick and integrates the box with the newest post-step
 * velocities: with friction mu = 0.1 (the daemon's default solver, frictional), the box sticks
 * while the coupling pushes less than mu m g = 1.96 N and slides when it pushes more, so it
 * visibly starts, slides and stops as the probe sways.
 * About ten times a second it prints one line: tick, seq, status, total contact force, the four
 * normal forces, the daemon's solve time and the measured latency over the last interval, and
 * deadline misses. Ctrl-C prints a summary. The session is in request mode, as a haptic loop's
 * should be: each frame is solved as soon as it arrives, so its answer usually comes back within
 * the same period; --stream puts it on the daemon's tick grid instead (an answer then waits for
 * the daemon's next tick, and a frame replaced before it is not answered). */
// A template for programs outside this tree: it asks for POSIX clocks, sigaction and M_PI
// itself rather than relying on the build's flags.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <contactd/client.h>

#define HALF 0.1     // box half-extent, m
#define MASS 2.0     // kg
#define GRAVITY 9.81 // m/s^2
#define MU 0.1       // Coulomb friction of each contact: the push (up to ~9 N) beats it at times
// Virtual coupling: a critically damped spring pulling the box towards the probe point, which
// sways +-0.15 m with a 6 s period, so the push varies slowly and stays a few newtons.
#define COUPLING_K 60.0                               // N/m
#define COUPLING_B (2.0 * 0.9 * sqrt(COUPLING_K * MASS)) // N s/m
#define PROBE_AMPLITUDE 0.15                          // m
#define PROBE_PERIOD_S 6.0
#define PRINT_HZ 10
#define CONNECT_RETRY_NS INT64_C(5000000000) // the daemon may still be starting
#define DRAIN_NS INT64_C(500000000)          // at the end, how long answers still in flight get

static volatile sig_atomic_t stop;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

// The box and its four contacts, kept as the scene that is sent every tick.
typedef struct world {
    cdc_body box;
    cdc_contact contacts[4];
    cdc_frame frame;
} world;

static void world_init(world *w, double dt) {
    const double inertia = MASS * (2 * HALF) * (2 * HALF) / 6.0; // solid cube about its centre
    w->box = (cdc_body){
        .id = 1,
        .mass = MASS,
        .inertia = {inertia, 0, 0, 0, inertia, 0, 0, 0, inertia},
        .pos = {0, 0, HALF},
        .quat = {1, 0, 0, 0},
    };
    for (int i = 0; i < 4; i++) {
        w->contacts[i] = (cdc_contact){
            .id = (uint64_t)(i + 1),
            .body_a = 1,
            .body_b = 0,
            .normal = {0, 0, 1},
            .mu = MU,
        };
    }
    w->frame = (cdc_frame){
        .dt = dt,
        .gravity = {0, 0, -GRAVITY},
        .nb = 1,
        .nc = 4,
        .bodies = &w->box,
        .contacts = w->contacts,
    };
}

// Rotates body-frame v by the unit quaternion q (w, x, y, z).
static void rotate(const double q[4], const double v[3], double out[3]) {
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    const double r[9] = {
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
        2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y),
    };
    for (int i = 0; i < 3; i++) {
        out[i] = r[3 * i] * v[0] + r[3 * i + 1] * v[1] + r[3 * i + 2] * v[2];
    }
}

// Contact points at the bottom corners, gaps from their height above the plane; the probe's push.
static double world_prepare(world *w, double t) {
    static const double corner[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    for (int i = 0; i < 4; i++) {
        const double local[3] = {corner[i][0] * HALF, corner[i][1] * HALF, -HALF};
        double p[3];
        rotate(w->box.quat, local, p);
        cdc_contact *c = &w->contacts[i];
        c->point[0] = w->box.pos[0] + p[0];
        c->point[1] = w->box.pos[1] + p[1];
        c->point[2] = 0.0;
        c->distance = w->box.pos[2] + p[2];
    }
    const double probe = PROBE_AMPLITUDE * sin(2.0 * M_PI * t / PROBE_PERIOD_S);
    const double push = COUPLING_K * (probe - w->box.pos[0]) - COUPLING_B * w->box.v[0];
    w->box.f[0] = push;
    return push;
}

// Semi-implicit Euler with the post-step velocities contactd returned.
static void world_advance(world *w, const cdc_body_velocity *bv, double dt) {
    memcpy(w->box.v, bv->v, sizeof w->box.v);
    memcpy(w->box.w, bv->w, sizeof w->box.w);
    for (int i = 0; i < 3; i++) {
        w->box.pos[i] += dt * w->box.v[i];
    }
    // q <- q + dt/2 [0, w] q, renormalised: enough for the small rotations a resting box sees.
    double *q = w->box.quat;
    const double *o = w->box.w;
    const double dq[4] = {
        -o[0] * q[1] - o[1] * q[2] - o[2] * q[3],
        o[0] * q[0] + o[1] * q[3] - o[2] * q[2],
        -o[0] * q[3] + o[1] * q[0] + o[2] * q[1],
        o[0] * q[2] - o[1] * q[1] + o[2] * q[0],
    };
    double n = 0.0;
    for (int i = 0; i < 4; i++) {
        q[i] += 0.5 * dt * dq[i];
        n += q[i] * q[i];
    }
    n = sqrt(n);
    for (int i = 0; i < 4; i++) {
        q[i] /= n;
    }
}

static const char usage_text[] =
    "Usage: contactd-demo [--socket PATH | --tcp HOST:PORT [--token-file PATH]] [--rate HZ]\n"
    "                     [--duration S] [--stream]\n"
    "\n"
    "Streams a box-on-a-plane scene to a running contactd, pushed sideways by a virtual-coupling\n"
    "haptic probe, integrates the box with the returned velocities and prints forces and timing\n"
    "about ten times a second until Ctrl-C (or --duration), then a summary.\n"
    "\n"
    "  --socket PATH    daemon socket (default: /run/contactd/contactd.sock when it exists,\n"
    "                   else $XDG_RUNTIME_DIR/contactd.sock, else /tmp/contactd-$UID.sock)\n"
    "  --tcp HOST:PORT  connect over TCP (the daemon's default is 127.0.0.1:7411);\n"
    "                   --token-file: the daemon's auth token, on the file's first line\n"
    "  --rate HZ        loop rate (default 1000)\n"
    "  --duration S     stop after S seconds (default: run until Ctrl-C)\n"
    "  --stream         stream mode: the newest frame is solved at the daemon's next tick\n"
    "                   (default: request mode, every frame solved as soon as it arrives; its\n"
    "                   rate may not exceed the daemon's tick rate)\n"
    "\n"
    "Columns: tick and seq of the last result, its status, |total contact force| (N), the four\n"
    "normal forces (N), the probe's push (N), the box's x (m), the daemon's solve time and the\n"
    "latency from send to receive over the last interval (p50/max, us), deadline misses so far.\n";

static int connect_daemon(const char *socket, const char *tcp, const char *token, bool stream,
                          cdc_conn **ret) {
    char path[256], err[512];
    const cdc_hello hello = {
        .client_name = "contactd-demo",
        .token = token,
        .request_mode = !stream,
        .limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8},
    };
    if (!tcp && !socket) {
        if (cdc_default_socket(path, sizeof path) < 0) {
            fprintf(stderr, "contactd-demo: cannot form the default socket path\n");
            return -ENAMETOOLONG;
        }
        socket = path;
    }
    const int64_t give_up = now_ns() + CONNECT_RETRY_NS;
    for (;;) {
        const int64_t wait_ns = INT64_C(2000000000);
        const int r = tcp ? cdc_conn_open_tcp(tcp, &hello, wait_ns, ret, err, sizeof err)
                          : cdc_conn_open_unix(socket, &hello, wait_ns, ret, err, sizeof err);
        const bool starting = r == -ENOENT || r == -ECONNREFUSED;
        if (r == 0 || !starting || now_ns() > give_up || stop) {
            if (r < 0) {
                fprintf(stderr, "contactd-demo: %s%s\n", err,
                        starting ? " (is contactd running?)" : "");
            }
            return r;
        }
        const struct timespec pause = {.tv_nsec = 100000000};
        nanosleep(&pause, NULL);
    }
}

// Running numbers, per print interval and overall.
typedef struct tally {
    int64_t solve[1024], latency[1024]; // this interval's samples (rate / PRINT_HZ of them)
    size_t n;
    uint64_t results, deadline_misses, errors, not_ok;
    int64_t solve_max, latency_max;
    double solve_sum, latency_sum;
} tally;

static void print_line(tally *t, const cdc_result *r, double push, double x, double dt) {
    qsort(t->solve, t->n, sizeof t->solve[0], cmp_i64);
    qsort(t->latency, t->n, sizeof t->latency[0], cmp_i64);
    double fsum[3] = {0, 0, 0}, fn[4] = {0, 0, 0, 0};
    for (int i = 0; i < r->nc; i++) {
        const cdc_contact_force *c = &r->contacts[i];
        fsum[0] += c->force[0];
        fsum[1] += c->force[1];
        fsum[2] += c->force[2];
        if (i < 4) {
            fn[i] = c->impulse[0] / dt; // the impulse's first component is along the normal
        }
    }
    printf("tick %8" PRIu64 "  seq %7" PRIu64 "  %-15s  F %6.2f N  [%5.2f %5.2f %5.2f %5.2f]"
           "  push %+6.2f N  x %+.3f m  solve %5.1f/%5.1f us  latency %6.1f/%6.1f us"
           "  misses %" PRIu64 "\n",
           r->tick, r->seq, cdc_status_name(r->status),
           sqrt(fsum[0] * fsum[0] + fsum[1] * fsum[1] + fsum[2] * fsum[2]), fn[0], fn[1], fn[2],
           fn[3], push, x, t->n ? (double)t->solve[t->n / 2] / 1e3 : 0.0,
           t->n ? (double)t->solve[t->n - 1] / 1e3 : 0.0,
           t->n ? (double)t->latency[t->n / 2] / 1e3 : 0.0,
           t->n ? (double)t->latency[t->n - 1] / 1e3 : 0.0, t->deadline_misses);
    fflush(stdout);
    t->n = 0;
}

// What the loop keeps between periods: the box, the numbers, the newest result (copied: what
// cdc_msg_recv hands back lasts until its next call) and the send time of each recent seq, to
// measure latency when its result arrives (a result older than the table is no longer matched).
typedef struct loop_state {
    world w;
    tally t;
    double dt;
    cdc_result last;
    cdc_contact_force last_forces[4];
    bool have_last;
    int64_t sent_at[4096];
} loop_state;

// Takes every message that arrives until until_ns, or sooner, when all is set, once each of the
// `sent` frames (seq 1 .. sent) has its Result or Error. Returns 0, or a negative errno from the
// connection.
static int receive(cdc_conn *c, loop_state *s, int64_t until_ns, uint64_t sent, bool all) {
    tally *t = &s->t;
    for (int64_t left = until_ns - now_ns(); left > 0 && !stop; left = until_ns - now_ns()) {
        if (all && t->results + t->errors >= sent) {
            return 0;
        }
        cdc_msg m;
        const int r = cdc_msg_recv(c, left, &m);
        if (r <= 0) {
            return r;
        }
        const int64_t arrived = now_ns();
        if (m.kind == CDC_MSG_ERROR) {
            fprintf(stderr, "contactd-demo: daemon error: %s\n", m.error.message);
            t->errors++;
        } else if (m.kind == CDC_MSG_GOODBYE) {
            fprintf(stderr, "contactd-demo: the daemon ended the session: %s\n", m.error.message);
            stop = 1;
        } else if (m.kind == CDC_MSG_RESULT && m.result.seq + 4096 > sent) {
            const cdc_result *res = &m.result;
            const int64_t solve = res->timing.solve_ns;
            const int64_t lat = arrived - s->sent_at[res->seq % 4096];
            if (t->n < sizeof t->solve / sizeof t->solve[0]) {
                t->solve[t->n] = solve;
                t->latency[t->n] = lat;
                t->n++;
            }
            t->results++;
            t->solve_sum += (double)solve;
            t->latency_sum += (double)lat;
            t->solve_max = solve > t->solve_max ? solve : t->solve_max;
            t->latency_max = lat > t->latency_max ? lat : t->latency_max;
            t->deadline_misses += !res->timing.deadline_met;
            t->not_ok += res->status != CDC_STATUS_OK;
            if (res->nb > 0 && res->status != CDC_STATUS_FAILED) {
                world_advance(&s->w, &res->bodies[0], s->dt);
            }
            s->last = *res;
            s->last.nc = res->nc < 4 ? res->nc : 4;
            memcpy(s->last_forces, res->contacts, (size_t)s->last.nc * sizeof s->last_forces[0]);
            s->last.contacts = s->last_forces;
            s->have_last = true;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"socket", required_argument, NULL, 's'}, {"tcp", required_argument, NULL, 't'},
        {"rate", required_argument, NULL, 'r'},   {"duration", required_argument, NULL, 'd'},
        {"stream", no_argument, NULL, 'S'},       {"token-file", required_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *socket = NULL, *tcp = NULL, *token_file = NULL;
    double rate = 1000.0, duration = 0.0;
    bool stream = false;
    for (int c; (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
        switch (c) {
        case 's': socket = optarg; break;
        case 't': tcp = optarg; break;
        case 'r': rate = strtod(optarg, NULL); break;
        case 'd': duration = strtod(optarg, NULL); break;
        case 'S': stream = true; break;
        case 'k': token_file = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (optind < argc || !(rate >= 1.0 && rate <= 100000.0) || !(duration >= 0.0)) {
        fputs(usage_text, stderr);
        return 2;
    }
    char token[512] = "";
    if (token_file) {
        FILE *f = fopen(token_file, "r");
        if (!f || !fgets(token, sizeof token, f)) {
            fprintf(stderr, "contactd-demo: --token-file %s: cannot read it\n", token_file);
            if (f) {
                fclose(f);
            }
            return 1;
        }
        fclose(f);
        token[strcspn(token, "\r\n")] = '\0';
    }

    // No SA_RESTART: Ctrl-C must interrupt the tick sleep at once.
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    cdc_conn *c = NULL;
    if (connect_daemon(socket, tcp, token_file ? token : NULL, stream, &c) < 0) {
        return 1;
    }
    const cdc_welcome *wel = cdc_conn_welcome(c);
    if (!stream && rate > wel->rate_hz) {
        fprintf(stderr, "contactd-demo: --rate %.0f is above the daemon's %" PRIu32 " Hz, the most "
                "a request-mode session may send; use --stream or a lower rate\n", rate,
                wel->rate_hz);
        cdc_conn_close(c);
        return 2;
    }
    printf("contactd %s: session %" PRIu64 ", daemon %" PRIu32 " Hz, deadline %.0f us, solver %s;"
           " %s mode at %.0f Hz (Ctrl-C to stop)\n",
           wel->server_version, wel->session_id, wel->rate_hz, (double)wel->deadline_ns / 1e3,
           wel->default_solver, stream ? "stream" : "request", rate);

    const int64_t period_ns = (int64_t)llround(1e9 / rate);
    const double dt = 1.0 / rate;
    const uint64_t per_line = (uint64_t)(rate / PRINT_HZ) ? (uint64_t)(rate / PRINT_HZ) : 1;
    static loop_state st; // large: keep it off the stack
    world_init(&st.w, dt);
    st.dt = dt;
    tally *const t = &st.t;
    double push = 0.0;
    const int64_t start = now_ns();
    const int64_t end = duration > 0.0 ? start + (int64_t)(duration * 1e9) : INT64_MAX;
    int rc = 0;
    uint64_t k = 0;
    for (int64_t target = start; !stop && target < end; target += period_ns, k++) {
        push = world_prepare(&st.w, (double)(target - start) * 1e-9);
        st.w.frame.seq = k + 1;
        st.sent_at[(k + 1) % 4096] = now_ns();
        int r = cdc_frame_send(c, &st.w.frame);
        if (r < 0) {
            fprintf(stderr, "contactd-demo: send: %s\n", strerror(-r));
            rc = 1;
            break;
        }
        // Until the next tick is due, take every result that arrives, as a haptic loop running
        // one daemon tick behind would: the newest answer moves the box. The daemon ticks on its
        // own clock, so an answer usually lands in the following period.
        const int64_t due = target + period_ns;
        r = receive(c, &st, due, k + 1, false);
        if (r < 0) {
            fprintf(stderr, "contactd-demo: receive: %s\n", strerror(-r));
            rc = 1;
            break;
        }
        if ((k + 1) % per_line == 0 && st.have_last) {
            print_line(t, &st.last, push, st.w.box.pos[0], dt);
        }
        // Absolute-time pacing: sleep out whatever is left of this period.
        const struct timespec ts = {.tv_sec = due / 1000000000, .tv_nsec = due % 1000000000};
        while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    const double secs = (double)(now_ns() - start) * 1e-9;
    // The answers still on their way (a loaded machine can hold one past its period) are
    // counted before the summary, so "not answered" means not answered.
    const int r = rc ? 0 : receive(c, &st, now_ns() + DRAIN_NS, k, true);
    if (r < 0) {
        fprintf(stderr, "contactd-demo: receive: %s\n", strerror(-r));
        rc = 1;
    }
    printf("\n%" PRIu64 " frames in %.1f s: %" PRIu64 " results (%" PRIu64
           " frames not answered: superseded in stream mode, refused in request mode), %" PRIu64
           " not STATUS_OK, %" PRIu64
           " deadline misses, %" PRIu64 " errors\n",
           k, secs, t->results, k > t->results ? k - t->results : 0, t->not_ok, t->deadline_misses,
           t->errors);
    if (t->results) {
        printf("solve mean %.1f us, max %.1f us; latency mean %.1f us, max %.1f us\n",
               t->solve_sum / (double)t->results / 1e3, (double)t->solve_max / 1e3,
               t->latency_sum / (double)t->results / 1e3, (double)t->latency_max / 1e3);
    }
    cdc_conn_close(c);
    return rc ? rc : t->errors ? 1 : 0;
}
