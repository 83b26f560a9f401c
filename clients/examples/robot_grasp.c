/* SPDX-License-Identifier: MIT */
/* contactd-grasp: a robot controller's loop. Two fingers, kinematic bodies whose velocities the
 * controller prescribes, close on a 0.5 kg box held in the air (mu 0.5 at the pads). Every
 * period the controller sends the scene (request mode, the `sap` solver, whose compliant
 * contact gives a two-sided squeeze a definite force: a rigid one has none, any equal pair of
 * pad forces being an answer), reads the pad forces back, and moves the fingers to hold a
 * target grip force with a proportional law. The box moves with the velocities contactd
 * returns. The target starts above what holding needs (2 mu N >= m g: N >= 4.9 N), drops below
 * it for a while (the box slips down between the pads), then rises again (the grip catches it).
 * While the box slips, SAP's convex relaxation of friction (Anitescu's) pushes the pads apart
 * a little: the grip it reports then stays somewhat above the target. Ten lines a second: time,
 * target and measured grip, finger gap, the box's height and vertical speed, and held /
 * slipping. */
// A template for programs outside this tree: it asks for POSIX clocks, sigaction and M_PI
// itself rather than relying on the build's flags.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <contactd/client.h>

#define HALF 0.04       // box half-width, m
#define MASS 0.5        // kg
#define MU 0.5          // at each pad
#define G 9.81          // m/s^2
#define STIFFNESS 2e4   // pad contact stiffness, N/m (SAP's compliant contact)
#define GAIN 0.001      // finger closing speed per newton of grip error, m/s/N
#define SPEED_MAX 0.05  // m/s
#define HELD_SPEED 1e-3 // m/s: slower than this the box counts as held
#define LATE_PERIODS 2  // periods behind before the loop starts a new grid

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

// The grip force the controller aims at, N per pad: holds, lets slip, holds again.
static double target_at(double t) {
    return t < 1.5 ? 8.0 : t < 2.5 ? 4.2 : 8.0;
}

typedef struct hand {
    cdc_body body[3]; // the box, the left finger, the right finger
    cdc_contact pad[2];
    cdc_frame frame;
    double gap;      // each pad's distance to its face of the box, m (< 0: pressing in)
} hand;

static void hand_init(hand *h) {
    const double I = MASS * (2 * HALF) * (2 * HALF) / 6;
    h->body[0] = (cdc_body){.id = 1, .mass = MASS, .quat = {1, 0, 0, 0},
                            .inertia = {I, 0, 0, 0, I, 0, 0, 0, I}};
    h->gap = 0; // the pads start on the box's faces
    for (int f = 0; f < 2; f++) {
        const double side = f ? 1 : -1; // left finger at -x, right at +x
        h->body[1 + f] = (cdc_body){.id = (uint32_t)(2 + f), .kinematic = true,
                                    .quat = {1, 0, 0, 0}};
        // Normal from the finger (body_b) into the box (body_a).
        h->pad[f] = (cdc_contact){.id = (uint64_t)(1 + f), .body_a = 1,
                                  .body_b = (uint32_t)(2 + f), .point = {side * HALF, 0, 0},
                                  .normal = {-side, 0, 0}, .mu = MU, .stiffness = STIFFNESS};
    }
    h->frame = (cdc_frame){.dt = 0, .gravity = {0, 0, -G}, .nb = 3, .nc = 2, .bodies = h->body,
                           .contacts = h->pad};
}

// The scene as it stands: the fingers at the gap, closing at speed (both towards the box).
static void hand_pose(hand *h, double speed, double dt) {
    const double *box = h->body[0].pos;
    for (int f = 0; f < 2; f++) {
        const double side = f ? 1 : -1;
        cdc_body *F = &h->body[1 + f];
        F->pos[0] = box[0] + side * (HALF + h->gap + 0.01); // the finger's centre, 1 cm behind
        F->pos[1] = box[1];
        F->pos[2] = box[2];
        F->v[0] = -side * speed;
        h->pad[f].point[0] = box[0] + side * HALF;
        h->pad[f].point[1] = box[1];
        h->pad[f].point[2] = box[2];
        h->pad[f].distance = h->gap;
    }
    h->frame.dt = dt;
}

static int connect_daemon(const char *socket, const char *tcp, const char *token,
                          cdc_conn **ret) {
    char path[256], err[512];
    static const char *const solvers[] = {NULL};
    const cdc_hello hello = {.client_name = "contactd-grasp", .request_mode = true,
                             .solver_name = "sap", .solver_names = solvers, .token = token,
                             .limits = {.max_bodies = 3, .max_contacts = 2, .max_dirs = 8}};
    if (!tcp && !socket) {
        if (cdc_default_socket(path, sizeof path) < 0) {
            return -ENAMETOOLONG;
        }
        socket = path;
    }
    const int r = tcp ? cdc_conn_open_tcp(tcp, &hello, INT64_C(2000000000), ret, err, sizeof err)
                      : cdc_conn_open_unix(socket, &hello, INT64_C(2000000000), ret, err,
                                           sizeof err);
    if (r < 0) {
        fprintf(stderr, "contactd-grasp: %s\n", err);
    }
    return r;
}

static const char usage[] =
    "Usage: contactd-grasp [--socket PATH | --tcp HOST:PORT [--token-file PATH]] [--rate HZ]\n"
    "                      [--duration S]\n"
    "\n"
    "A two-finger grasp through a running contactd: kinematic fingers squeeze a 0.5 kg box\n"
    "(request mode, solver sap) and a proportional law holds a grip force that drops below what\n"
    "holding needs at 1.5 s (the box slips) and rises again at 2.5 s (the grip catches it).\n"
    "\n"
    "  --socket PATH      daemon socket (default: the system daemon's, else this user's)\n"
    "  --tcp HOST:PORT    connect over TCP instead; --token-file: the daemon's auth token\n"
    "  --rate HZ          control rate (default 500)\n"
    "  --duration S       seconds to run (default 4)\n";

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"socket", required_argument, NULL, 's'}, {"tcp", required_argument, NULL, 't'},
        {"token-file", required_argument, NULL, 'k'}, {"rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *socket = NULL, *tcp = NULL, *token_file = NULL;
    double rate = 500, duration = 4;
    for (int c; (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
        switch (c) {
        case 's': socket = optarg; break;
        case 't': tcp = optarg; break;
        case 'k': token_file = optarg; break;
        case 'r': rate = atof(optarg); break;
        case 'd': duration = atof(optarg); break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (!(rate >= 1 && rate <= 1000) || !(duration > 0)) {
        fprintf(stderr, "contactd-grasp: --rate in [1, 1000] Hz and --duration > 0 s\n%s", usage);
        return 2;
    }
    char token[512] = "";
    if (token_file) {
        FILE *f = fopen(token_file, "r");
        if (!f || !fgets(token, sizeof token, f)) {
            fprintf(stderr, "contactd-grasp: --token-file %s: cannot read it\n", token_file);
            return 1;
        }
        fclose(f);
        token[strcspn(token, "\r\n")] = '\0';
    }
    signal(SIGINT, on_signal);
    cdc_conn *c;
    if (connect_daemon(socket, tcp, token_file ? token : NULL, &c) < 0) {
        return 1;
    }
    hand h;
    hand_init(&h);
    const double dt = 1 / rate;
    const int64_t period = (int64_t)(1e9 / rate);
    int64_t start = now_ns();
    double grip = 0, speed = 0;
    int failures = 0, printed = -1;
    printf("    t   target    grip     gap      box z    box vz   \n");
    for (int64_t k = 0; !stop && (double)k * dt < duration; k++) {
        const double t = (double)k * dt;
        // The controller: close faster the further the grip is below its target.
        const double err = target_at(t) - grip;
        speed = fmax(-SPEED_MAX, fmin(SPEED_MAX, GAIN * err));
        hand_pose(&h, speed, dt);
        h.frame.seq = (uint64_t)k + 1;
        if (cdc_frame_send(c, &h.frame) < 0) {
            fprintf(stderr, "contactd-grasp: the connection broke\n");
            return 1;
        }
        cdc_msg m;
        if (cdc_msg_recv(c, INT64_C(1000000000), &m) != 1) {
            fprintf(stderr, "contactd-grasp: no answer within 1 s\n");
            return 1;
        }
        if (m.kind != CDC_MSG_RESULT) {
            fprintf(stderr, "contactd-grasp: %s\n",
                    m.kind == CDC_MSG_ERROR ? m.error.message : "unexpected");
            return 1;
        }
        const cdc_result *r = &m.result;
        if (r->status != CDC_STATUS_OK) {
            failures++; // labelled; the velocities below are what contactd answered with
        }
        // The pads' normal force (impulse / dt along each normal), averaged over both.
        grip = 0;
        for (int i = 0; i < r->nc && i < 2; i++) {
            grip += r->contacts[i].impulse[0] / dt / 2;
        }
        // The box moves with the answered velocity; the fingers as commanded.
        double vz = 0;
        for (int b = 0; b < r->nb; b++) {
            if (r->bodies[b].id == 1) {
                memcpy(h.body[0].v, r->bodies[b].v, sizeof h.body[0].v);
                vz = r->bodies[b].v[2];
            }
        }
        for (int i = 0; i < 3; i++) {
            h.body[0].pos[i] += h.body[0].v[i] * dt;
        }
        h.gap -= speed * dt;
        const int tenth = (int)(t * 10);
        if (tenth != printed) {
            printed = tenth;
            printf("%5.1f  %5.2f N  %5.2f N  %+.4f m  %+.4f m  %+.4f m/s  %s\n", t, target_at(t),
                   grip, h.gap, h.body[0].pos[2], vz,
                   fabs(vz) < HELD_SPEED ? "held" : "slipping");
            fflush(stdout);
        }
        // A loop that fell behind (the host took the CPU) starts a new grid from now rather than
        // send the missed frames back to back, which request mode's rate limit would refuse.
        if (now_ns() > start + (k + 1 + LATE_PERIODS) * period) {
            start = now_ns() - (k + 1) * period;
        }
        const int64_t next = start + (k + 1) * period;
        const struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    cdc_conn_close(c);
    if (failures) {
        printf("%d answers were not STATUS_OK (labelled fallbacks)\n", failures);
    }
    return 0;
}
