/* SPDX-License-Identifier: MIT */
/* contactd-haptic: a haptic rendering loop at 1 kHz. A scripted device handle drives a tool (the
 * probe: a dynamic rigid body of 0.1 kg) through a virtual coupling, a spring-damper between the
 * handle and the probe. Every millisecond the loop finds the probe's contacts with the
 * environment, sends the probe's state with the coupling force as its external force (request
 * mode, solver `lemke`), receives the contact forces and the probe's post-step velocity, moves
 * the probe with that velocity, and renders the coupling force: the force the device would
 * display, F = -(k (x_dev - x_probe) + b (v_dev - v_probe)). The probe cannot enter the
 * environment, so pressing the handle into it stretches the spring and the user feels the
 * contact; in static contact the rendered force equals the contact force minus the probe's
 * weight.
 *
 * Two phases, each half of --duration. The plane: a sphere of radius 1 cm is lowered onto the
 * plane z = 0, the handle sinks 4 mm below the contact (4 N rendered), holds, and lifts. The peg
 * and hole: the tool becomes a square peg (half-width 10 mm, half-height 25 mm), lowered into a
 * square hole (half-width 10.5 mm, 20 mm deep, centred at x = 0.1 m); while it goes in the
 * handle moves 2 mm sideways, so the peg slides down the +x wall and seats on the bottom.
 *
 * The geometry is the simplest that shows wall contacts. The peg stays axis-aligned: a 3-DOF
 * device renders force, not torque, and the tool's orientation is held by the handle's gimbal;
 * the peg is given a rotational inertia (1 kg m^2) so large that contact torques do not turn it
 * within a step, and its returned angular velocity is dropped. Its contacts: the four corners
 * of its bottom face against the surface under each (the hole's bottom once the peg is in the
 * hole or the corner is over the opening, else the top surface z = 0), and, once the peg's
 * bottom is near or below the rim, each of the hole's four walls against the peg's facing side
 * (one contact per wall at the middle of their overlap, normal into the hole). A contact is
 * sent while its gap is under 5 mm: the solver lets a gap close within the step but not be
 * passed, so the probe lands on a surface without sinking into it.
 *
 * Output: a line ten times a second (time, segment, handle and probe height, rendered and
 * contact force, status, send-to-result latency) and, with --csv, one row per millisecond for
 * clients/examples/haptic_plot.gp. */
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
#include <unistd.h>

#include <contactd/client.h>

#define DT 1e-3             // s: the device loop's period, 1 kHz
#define G 9.81              // m/s^2
#define MASS 0.1            // kg, the probe
#define ROT_INERTIA 1.0     // kg m^2, each axis: orientation held by the handle (see above)
#define COUPLING_K 1000.0   // N/m
#define COUPLING_B 14.0     // N s/m: 0.7 of critical damping, 2 sqrt(k m) = 20
#define MARGIN 0.005        // m: contacts with a larger gap are not sent
#define MU 0.3              // the plane, the hole's bottom and the top surface
#define MU_WALL 0.1         // the hole's walls
#define SPHERE_R 0.01       // m
#define PEG_A 0.010         // m, the peg's half-width (square section)
#define PEG_H 0.025         // m, the peg's half-height
#define HOLE_A 0.0105       // m, the hole's half-width: 0.5 mm clearance each side
#define HOLE_D 0.02         // m, the hole's depth
#define HOLE_X 0.1          // m, the hole's centre (y = 0)
#define START_HEIGHT 0.02   // m, the tool's bottom above the surface at each phase's start
#define PRESS_DEPTH 0.004   // m, the handle below the sphere's resting height while pressing
#define SEAT_DEPTH 0.003    // m, the handle below the seated peg's height
#define ENTRY_OFFSET 0.0003 // m, the handle's x offset from the hole's centre as the peg enters
#define WALL_OFFSET 0.002   // m, its x offset once seated: past the clearance, onto the +x wall
#define MAX_CONTACTS 8
#define PRINT_EVERY 100     // ticks: ten lines a second
#define PERIOD_NS INT64_C(1000000) // DT in ns
#define LATE_TICKS 10       // ticks behind before the pacing starts a new grid

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// From a to b as s goes 0 to 1, with zero slope at both ends (s clamped).
static double blend(double a, double b, double s) {
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    return a + (b - a) * (1 - cos(M_PI * s)) / 2;
}

typedef enum tool { TOOL_SPHERE, TOOL_PEG } tool;

// The scripted handle: its position at time t of a phase lasting half seconds (tool's phase).
static const char *device_pose(tool phase, double t, double half, double p[3]) {
    const double u = t / half;
    if (phase == TOOL_SPHERE) {
        const double top = SPHERE_R + START_HEIGHT, press = SPHERE_R - PRESS_DEPTH;
        p[0] = p[1] = 0;
        if (u < 0.3) {
            p[2] = blend(top, press, u / 0.3);
            return "plane-approach";
        }
        p[2] = blend(press, top, (u - 0.7) / 0.3);
        return u < 0.7 ? "plane-hold" : "plane-lift";
    }
    const double top = PEG_H + START_HEIGHT, seat = PEG_H - HOLE_D - SEAT_DEPTH;
    p[0] = HOLE_X + blend(ENTRY_OFFSET, WALL_OFFSET, (u - 0.25) / 0.25);
    p[1] = 0;
    p[2] = blend(top, seat, u / 0.5);
    return u < 0.5 ? "peg-insert" : "peg-seat";
}

static void add_contact(cdc_contact *out, int *nc, uint64_t id, const double point[3],
                        const double normal[3], double distance, double mu) {
    if (distance >= MARGIN) {
        return;
    }
    out[*nc] = (cdc_contact){.id = id, .body_a = 1, .body_b = 0, .distance = distance, .mu = mu};
    memcpy(out[*nc].point, point, sizeof out[*nc].point);
    memcpy(out[*nc].normal, normal, sizeof out[*nc].normal);
    (*nc)++;
}

// The contacts of the tool at p with the environment (see the file's comment); returns how many.
static int find_contacts(tool t, const double p[3], cdc_contact out[MAX_CONTACTS]) {
    static const double up[3] = {0, 0, 1};
    int nc = 0;
    if (t == TOOL_SPHERE) {
        const double point[3] = {p[0], p[1], 0};
        add_contact(out, &nc, 1, point, up, p[2] - SPHERE_R, MU);
        return nc;
    }
    const double bottom = p[2] - PEG_H;
    for (int i = 0; i < 4; i++) {
        const double x = p[0] + (i & 1 ? PEG_A : -PEG_A), y = p[1] + (i & 2 ? PEG_A : -PEG_A);
        const bool over_hole = fabs(x - HOLE_X) < HOLE_A && fabs(y) < HOLE_A;
        const double floor = bottom < 0 || over_hole ? -HOLE_D : 0;
        const double point[3] = {x, y, floor};
        add_contact(out, &nc, (uint64_t)(11 + i), point, up, bottom - floor, MU);
    }
    // The walls, once the peg's bottom nears the rim with its axis over the opening (a peg
    // beside the hole rests on the top surface and meets no wall).
    if (bottom >= MARGIN || fabs(p[0] - HOLE_X) >= HOLE_A || fabs(p[1]) >= HOLE_A) {
        return nc;
    }
    // +x, -x, +y, -y; each normal points into the hole, towards the peg; the point halfway
    // down the part of the wall the peg's side faces.
    const double z = fmin(fmax(bottom, -HOLE_D), 0) / 2;
    const double c[2] = {HOLE_X, 0};
    for (int w = 0; w < 4; w++) {
        const int axis = w / 2;
        const double side = w % 2 ? -1 : 1;
        double point[3] = {p[0], p[1], z}, normal[3] = {0, 0, 0};
        point[axis] = c[axis] + side * HOLE_A;
        normal[axis] = -side;
        const double gap = side * (c[axis] + side * HOLE_A - p[axis]) - PEG_A;
        add_contact(out, &nc, (uint64_t)(21 + w), point, normal, gap, MU_WALL);
    }
    return nc;
}

static int connect_daemon(const char *socket, const char *tcp, const char *token,
                          const char *solver, int64_t budget_ns, cdc_conn **ret) {
    char path[256], err[512];
    const cdc_hello hello = {.client_name = "contactd-haptic", .request_mode = true,
                             .solver_name = solver, .budget_ns = budget_ns, .token = token,
                             .limits = {.max_bodies = 1, .max_contacts = MAX_CONTACTS,
                                        .max_dirs = 8}};
    if (!tcp && !socket) {
        if (cdc_default_socket(path, sizeof path) < 0) {
            fprintf(stderr, "contactd-haptic: no default socket path fits; give --socket\n");
            return -ENAMETOOLONG;
        }
        socket = path;
    }
    const int64_t wait_ns = INT64_C(2000000000);
    const int r = tcp ? cdc_conn_open_tcp(tcp, &hello, wait_ns, ret, err, sizeof err)
                      : cdc_conn_open_unix(socket, &hello, wait_ns, ret, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "contactd-haptic: %s\n", err);
    }
    return r;
}

static const char usage[] =
    "Usage: contactd-haptic [--socket PATH | --tcp HOST:PORT [--token-file PATH]]\n"
    "                       [--duration S] [--csv FILE] [--solver NAME] [--budget-us US]\n"
    "\n"
    "A 1 kHz haptic loop through a running contactd (request mode): a scripted handle presses a\n"
    "sphere probe into a plane and lifts it (first half of the run), then seats a peg in a hole\n"
    "(second half), both through a virtual coupling (k 1000 N/m, b 14 N s/m, probe 0.1 kg).\n"
    "\n"
    "  --socket PATH      daemon socket (default: /run/contactd/contactd.sock when it exists,\n"
    "                     else $XDG_RUNTIME_DIR/contactd.sock, else /tmp/contactd-$UID.sock)\n"
    "  --tcp HOST:PORT    connect over TCP instead; --token-file: the daemon's auth token\n"
    "  --duration S       seconds to run, both phases (default 6)\n"
    "  --csv FILE         one row per millisecond (plot: clients/examples/haptic_plot.gp)\n"
    "  --solver NAME      the session's solver (default lemke)\n"
    "  --budget-us US     solve budget per frame (default 500)\n"
    "\n"
    "Columns: time, script segment, handle and probe height (m), rendered force and total\n"
    "contact force on the probe (z, N), contacts, the Result's status, send-to-result latency.\n";

// The Result's status as the CSV names it ("OK", "DEADLINE", ...).
static const char *status_label(cdc_status s) {
    switch (s) {
    case CDC_STATUS_OK: return "OK";
    case CDC_STATUS_DEADLINE: return "DEADLINE";
    case CDC_STATUS_FALLBACK: return "FALLBACK";
    case CDC_STATUS_FAILED: return "FAILED";
    }
    return "?";
}

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"socket", required_argument, NULL, 's'}, {"tcp", required_argument, NULL, 't'},
        {"token-file", required_argument, NULL, 'k'}, {"duration", required_argument, NULL, 'd'},
        {"csv", required_argument, NULL, 'c'}, {"solver", required_argument, NULL, 'S'},
        {"budget-us", required_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *socket = NULL, *tcp = NULL, *token_file = NULL, *csv_path = NULL;
    const char *solver = "lemke";
    double duration = 6, budget_us = 500;
    for (int c; (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
        switch (c) {
        case 's': socket = optarg; break;
        case 't': tcp = optarg; break;
        case 'k': token_file = optarg; break;
        case 'd': duration = strtod(optarg, NULL); break;
        case 'c': csv_path = optarg; break;
        case 'S': solver = optarg; break;
        case 'b': budget_us = strtod(optarg, NULL); break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (optind < argc || !(duration >= 0.2 && duration <= 3600) ||
        !(budget_us >= 1 && budget_us <= 1e6)) {
        fprintf(stderr, "contactd-haptic: --duration in [0.2, 3600] s, --budget-us in [1, 1e6]"
                "\n%s", usage);
        return 2;
    }
    char token[512] = "";
    if (token_file) {
        FILE *f = fopen(token_file, "r");
        if (!f || !fgets(token, sizeof token, f)) {
            fprintf(stderr, "contactd-haptic: --token-file %s: cannot read it\n", token_file);
            if (f) {
                fclose(f);
            }
            return 1;
        }
        fclose(f);
        token[strcspn(token, "\r\n")] = '\0';
    }
    FILE *csv = NULL;
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "contactd-haptic: --csv %s: %s\n", csv_path, strerror(errno));
        return 1;
    }
    // No SA_RESTART: Ctrl-C must interrupt the tick sleep at once.
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    cdc_conn *c;
    if (connect_daemon(socket, tcp, token_file ? token : NULL, solver,
                       (int64_t)(budget_us * 1e3), &c) < 0) {
        if (csv) {
            fclose(csv);
        }
        return 1;
    }
    const cdc_welcome *wel = cdc_conn_welcome(c);
    if (wel->rate_hz < 1000) {
        fprintf(stderr, "contactd-haptic: the daemon runs at %u Hz; a 1 kHz request-mode loop "
                "needs 1000\n", (unsigned)wel->rate_hz);
        cdc_conn_close(c);
        if (csv) {
            fclose(csv);
        }
        return 2;
    }
    printf("contactd %s: session %llu, solver %s, budget %.0f us; 1 kHz for %.1f s\n",
           wel->server_version, (unsigned long long)wel->session_id, solver,
           (double)wel->budget_ns / 1e3, duration);
    printf("    t  segment           dev z     probe z    rendered   contact  nc  status    "
           "latency\n");
    if (csv) {
        fprintf(csv, "# k=%g b=%g m=%g g=%g sphere_r=%g peg_h=%g hole_d=%g hole_x=%g\n",
                COUPLING_K, COUPLING_B, MASS, G, SPHERE_R, PEG_H, HOLE_D, HOLE_X);
        fprintf(csv, "t,segment,dev_x,dev_z,probe_x,probe_z,bottom_z,render_x,render_z,"
                "contact_x,contact_z,contacts,status,solve_us,latency_us\n");
    }

    const double half = duration / 2;
    const long ticks = lround(duration / DT);
    cdc_body probe = {.id = 1, .mass = MASS, .quat = {1, 0, 0, 0},
                     .inertia = {ROT_INERTIA, 0, 0, 0, ROT_INERTIA, 0, 0, 0, ROT_INERTIA}};
    cdc_contact contacts[MAX_CONTACTS];
    cdc_frame scene = {.dt = DT, .gravity = {0, 0, -G}, .nb = 1, .bodies = &probe,
                      .contacts = contacts};
    tool current = TOOL_PEG; // so that tick 0 starts the sphere's phase
    long not_ok = 0, results = 0, regrids = 0;
    double latency_sum = 0, latency_max = 0;
    int rc = 0;
    int64_t start = now_ns();
    for (long k = 0; k < ticks && !stop; k++) {
        const double t = (double)k * DT;
        const tool phase = t < half ? TOOL_SPHERE : TOOL_PEG;
        const double tp = phase == TOOL_SPHERE ? t : t - half; // time into the phase
        double dev[3], next[3], vdev[3];
        const char *segment = device_pose(phase, tp, half, dev);
        device_pose(phase, tp + DT, half, next);
        if (phase != current) {
            // A new tool, at rest, hanging from the handle by its weight (m g / k).
            current = phase;
            memcpy(probe.pos, dev, sizeof probe.pos);
            probe.pos[2] -= MASS * G / COUPLING_K;
            memset(probe.v, 0, sizeof probe.v);
        }
        // The virtual coupling's force on the probe; the device renders its opposite.
        double fc[3];
        for (int i = 0; i < 3; i++) {
            vdev[i] = (next[i] - dev[i]) / DT;
            fc[i] = COUPLING_K * (dev[i] - probe.pos[i]) + COUPLING_B * (vdev[i] - probe.v[i]);
            probe.f[i] = fc[i];
        }
        scene.nc = find_contacts(phase, probe.pos, contacts);
        scene.seq = (uint64_t)k + 1;
        const int64_t sent = now_ns();
        int r = cdc_frame_send(c, &scene);
        if (r < 0) {
            fprintf(stderr, "contactd-haptic: send: %s\n", strerror(-r));
            rc = 1;
            break;
        }
        cdc_msg m;
        r = cdc_msg_recv(c, INT64_C(1000000000), &m);
        const double latency_us = (double)(now_ns() - sent) / 1e3;
        if (r != 1) {
            fprintf(stderr, "contactd-haptic: receive: %s\n",
                    r == 0 ? "no answer within 1 s" : strerror(-r));
            rc = 1;
            break;
        }
        if (m.kind != CDC_MSG_RESULT) {
            fprintf(stderr, "contactd-haptic: %s\n",
                    m.kind == CDC_MSG_ERROR || m.kind == CDC_MSG_GOODBYE ? m.error.message
                                                                        : "unexpected message");
            rc = 1;
            break;
        }
        const cdc_result *res = &m.result;
        results++;
        not_ok += res->status != CDC_STATUS_OK;
        latency_sum += latency_us;
        latency_max = fmax(latency_max, latency_us);
        double fcontact[3] = {0, 0, 0}; // total contact force on the probe, world, N
        for (int i = 0; i < res->nc; i++) {
            for (int j = 0; j < 3; j++) {
                fcontact[j] += res->contacts[i].force[j];
            }
        }
        // The probe moves with its post-step velocity. A FAILED answer has no forces: the probe
        // is held where it is rather than let through the surface.
        const bool usable = res->status != CDC_STATUS_FAILED;
        memset(probe.v, 0, sizeof probe.v);
        for (int b = 0; usable && b < res->nb; b++) {
            if (res->bodies[b].id == probe.id) {
                memcpy(probe.v, res->bodies[b].v, sizeof probe.v);
            }
        }
        for (int i = 0; i < 3; i++) {
            probe.pos[i] += probe.v[i] * DT;
        }
        const double bottom = probe.pos[2] - (phase == TOOL_SPHERE ? SPHERE_R : PEG_H);
        const char *status = status_label(res->status);
        const double solve_us = (double)res->timing.solve_ns / 1e3;
        if (csv) {
            fprintf(csv, "%.3f,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%.4f,%.4f,%d,%s,%.1f,%.1f\n",
                    t, segment, dev[0], dev[2], probe.pos[0], probe.pos[2], bottom, -fc[0],
                    -fc[2], fcontact[0], fcontact[2], scene.nc, status, solve_us, latency_us);
        }
        if (k % PRINT_EVERY == 0) {
            printf("%5.2f  %-15s  %+.4f m  %+.4f m  %+6.2f N  %+6.2f N  %d   %-8s  %6.1f us\n", t,
                   segment, dev[2], probe.pos[2], -fc[2], fcontact[2], scene.nc, status,
                   latency_us);
            fflush(stdout);
        }
        // Absolute-time pacing: sleep out what is left of this millisecond. A loop more than
        // LATE_TICKS behind (the host took the CPU) starts a new grid from now rather than send
        // a burst the daemon's request-mode rate limit would refuse; the simulation still
        // advances one millisecond a tick.
        int64_t due = start + (k + 1) * PERIOD_NS;
        if (now_ns() > due + LATE_TICKS * PERIOD_NS) {
            start = now_ns() - (k + 1) * PERIOD_NS;
            due = start + (k + 1) * PERIOD_NS;
            regrids++;
        }
        const struct timespec ts = {.tv_sec = due / 1000000000, .tv_nsec = due % 1000000000};
        while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    cdc_conn_close(c);
    if (csv && fclose(csv) != 0) {
        fprintf(stderr, "contactd-haptic: --csv %s: %s\n", csv_path, strerror(errno));
        rc = 1;
    }
    printf("%ld ticks, %ld results, %ld not STATUS_OK (labelled); latency mean %.1f us, max %.1f"
           " us; %ld times over %d ms late\n", ticks, results, not_ok,
           results ? latency_sum / (double)results : 0, latency_max, regrids, LATE_TICKS);
    return rc;
}
