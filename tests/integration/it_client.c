/* SPDX-License-Identifier: MIT */
/* libcontactd-client's public API (contactd/client.h only) against the real daemon, over the
 * Unix socket and TCP: the Welcome's granted limits; 1000 request-mode frames of a 2 kg box
 * resting on a plane, each answered by its own Result whose normal forces carry the weight, with
 * zero heap allocations counted (malloc, calloc, realloc and aligned_alloc interposed in this
 * executable) across the 1000 sends and receives; a hinge and a kinematic body; the
 * non-blocking mode (poll on cdc_conn_fd,
 * then cdc_msg_recv with timeout 0); an Error naming the bad field, after which the session
 * goes on; Stats; an open's timeout bounding a connect that cannot complete, and its 0 meaning
 * no limit; a send cut by its timeout shutting the sending side; and the Goodbye at SIGTERM
 * followed by -ECONNRESET.
 * Arguments: the contactd executable. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <contactd/client.h>

#include "alloc_count.h"
#include "harness.h"
#include "testlib.h"

#define FRAMES 1000
#define MASS 2.0
#define G 9.81
#define HALF 0.1

static const char *contactd_path;
static it_daemon d;

static int setup(void **state) {
    (void)state;
    return it_daemon_start(&d, contactd_path, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    it_daemon_cleanup(&d);
    return 0;
}

// A 2 kg cube of 0.2 m resting on the plane z = 0 with its four bottom corners in contact.
typedef struct box_frame {
    cdc_body box;
    cdc_contact corners[4];
    cdc_frame frame;
} box_frame;

static void box_frame_init(box_frame *b) {
    const double I = MASS * (2 * HALF) * (2 * HALF) / 6;
    b->box = (cdc_body){.id = 1, .mass = MASS, .inertia = {I, 0, 0, 0, I, 0, 0, 0, I},
                        .pos = {0, 0, HALF}, .quat = {1, 0, 0, 0}};
    static const double corner[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    for (int i = 0; i < 4; i++) {
        b->corners[i] = (cdc_contact){.id = (uint64_t)(i + 1), .body_a = 1, .body_b = 0,
                                      .point = {corner[i][0] * HALF, corner[i][1] * HALF, 0},
                                      .normal = {0, 0, 1}, .mu = 0.5};
    }
    b->frame = (cdc_frame){.dt = 1e-3, .gravity = {0, 0, -G}, .nb = 1, .nc = 4,
                           .bodies = &b->box, .contacts = b->corners};
}

static cdc_conn *open_session(bool tcp) {
    const cdc_hello hello = {.client_name = "it_client", .request_mode = true,
                             .limits = {.max_bodies = 1, .max_contacts = 4, .max_dirs = 8}};
    cdc_conn *c = NULL;
    char err[512];
    const int64_t timeout_ns = (int64_t)IT_TIMEOUT_MS * 1000000;
    const int r = tcp ? cdc_conn_open_tcp(d.tcp, &hello, timeout_ns, &c, err, sizeof err)
                      : cdc_conn_open_unix(d.socket, &hello, timeout_ns, &c, err, sizeof err);
    if (r < 0) {
        fail_msg("open over %s: %s", tcp ? d.tcp : d.socket, err);
    }
    const cdc_welcome *w = cdc_conn_welcome(c);
    assert_non_null(w);
    assert_true(w->request_mode);
    assert_int_equal(w->limits.max_bodies, 1);
    assert_int_equal(w->limits.max_contacts, 4);
    assert_true(w->session_id > 0);
    assert_true(w->budget_ns > 0);
    assert_true(strlen(w->default_solver) > 0);
    return c;
}

// Sends frame seq and takes its Result; the normal forces must carry the box's weight. No
// cmocka call on the success path allocates, so the counted stretch sees only the client.
static void exchange(cdc_conn *c, box_frame *b, uint64_t seq) {
    b->frame.seq = seq;
    const int s = cdc_frame_send(c, &b->frame);
    if (s != 0) {
        fail_msg("send %llu: %d", (unsigned long long)seq, s);
    }
    cdc_msg m;
    const int r = cdc_msg_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m);
    if (r != 1 || m.kind != CDC_MSG_RESULT || m.result.seq != seq || m.result.nc != 4 ||
        m.result.nb != 1) {
        fail_msg("frame %llu: recv %d kind %d seq %llu %s", (unsigned long long)seq, r,
                 r == 1 ? (int)m.kind : 0, r == 1 ? (unsigned long long)m.result.seq : 0ull,
                 r == 1 && m.kind == CDC_MSG_ERROR ? m.error.message : "");
    }
    if (m.result.status != CDC_STATUS_OK) {
        return; // labelled (a deadline on a loaded machine): forces are not the solver's
    }
    double fz = 0;
    for (int i = 0; i < 4; i++) {
        fz += m.result.contacts[i].force[2];
    }
    // The certified answer holds the box still: the normal forces sum to m g (certificate
    // tolerance 1e-6 relative).
    if (fabs(fz - MASS * G) > 1e-4 * MASS * G) {
        fail_msg("frame %llu: sum of normal forces %.17g, expected %.17g",
                 (unsigned long long)seq, fz, MASS * G);
    }
}

// Sleeps until *next_ns + period_ns (CLOCK_MONOTONIC), the next send's time, kept in *next_ns. A
// client that fell behind (a stall of a loaded machine) goes on from now, not in a burst that
// would catch up the sends it missed: the daemon would refuse that burst by its rate limit.
static void pace(int64_t *next_ns, int64_t period_ns) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const int64_t now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    *next_ns = *next_ns + period_ns > now_ns ? *next_ns + period_ns : now_ns;
    ts = (struct timespec){.tv_sec = *next_ns / 1000000000, .tv_nsec = *next_ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void frames_allocate_nothing(bool tcp) {
    cdc_conn *c = open_session(tcp);
    box_frame b;
    box_frame_init(&b);
    // A request session may send one frame per tick period on average: pace just below that.
    const int64_t period_ns = cdc_conn_welcome(c)->tick_period_ns * 21 / 20;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t next_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    // The first exchanges may grow the framer and the arena to this session's message sizes.
    for (uint64_t k = 1; k <= 10; k++) {
        exchange(c, &b, k);
        pace(&next_ns, period_ns);
    }
    t_alloc_count_start();
    for (uint64_t k = 11; k < 11 + FRAMES; k++) {
        exchange(c, &b, k);
        pace(&next_ns, period_ns);
    }
    const long allocs = t_alloc_count_stop();
    cdc_conn_close(c);
    if (allocs < 0) {
        // Sanitizer build: malloc is not interposed (cmocka's skip() would read as a failure
        // under TAP, so the case says so and passes on its other checks).
        print_message("# %s: allocations not counted in this build\n", tcp ? "tcp" : "uds");
        return;
    }
    print_message("# %s: %d frames, %ld allocations\n", tcp ? "tcp" : "uds", FRAMES, allocs);
    assert_int_equal(allocs, 0);
}

static void uds_frames_allocate_nothing(void **state) {
    (void)state;
    frames_allocate_nothing(false);
}

static void tcp_frames_allocate_nothing(void **state) {
    (void)state;
    frames_allocate_nothing(true);
}

// An event loop's use: wait on the fd, then take what arrived without blocking.
static void nonblocking_receive(void **state) {
    (void)state;
    cdc_conn *c = open_session(false);
    box_frame b;
    box_frame_init(&b);
    cdc_msg m;
    assert_int_equal(cdc_msg_recv(c, 0, &m), 0); // nothing sent, nothing there
    b.frame.seq = 7;
    assert_int_equal(cdc_frame_send(c, &b.frame), 0);
    int r = 0;
    for (int polls = 0; r == 0 && polls < 100; polls++) {
        struct pollfd p = {.fd = cdc_conn_fd(c), .events = POLLIN};
        assert_true(poll(&p, 1, IT_TIMEOUT_MS) > 0);
        r = cdc_msg_recv(c, 0, &m);
    }
    assert_int_equal(r, 1);
    assert_int_equal(m.kind, CDC_MSG_RESULT);
    assert_int_equal(m.result.seq, 7);
    cdc_conn_close(c);
}

// A bad frame gets an Error naming the field; the next good frame is answered.
static void error_names_the_field(void **state) {
    (void)state;
    cdc_conn *c = open_session(true);
    box_frame b;
    box_frame_init(&b);
    b.corners[2].normal[2] = 0.5;
    b.frame.seq = 1;
    assert_int_equal(cdc_frame_send(c, &b.frame), 0);
    cdc_msg m;
    assert_int_equal(cdc_msg_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m), 1);
    assert_int_equal(m.kind, CDC_MSG_ERROR);
    assert_int_equal(m.error.seq, 1);
    assert_int_equal(m.error.code, 3); // ERROR_INVALID: the session goes on
    assert_non_null(strstr(m.error.message, "contacts[2].normal"));
    b.corners[2].normal[2] = 1.0;
    exchange(c, &b, 2);
    cdc_conn_close(c);
}

static void stats_count_the_frames(void **state) {
    (void)state;
    cdc_conn *c = open_session(false);
    box_frame b;
    box_frame_init(&b);
    exchange(c, &b, 1);
    assert_int_equal(cdc_stats_request(c), 0);
    cdc_msg m;
    assert_int_equal(cdc_msg_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m), 1);
    assert_int_equal(m.kind, CDC_MSG_STATS);
    // Every earlier test's frames too: at least this session's one and the 2 x 1010 above.
    assert_true(m.stats.frames_solved >= 1 + 2 * (FRAMES + 10));
    assert_true(m.stats.sessions >= 1);
    assert_true(m.stats.solve.count >= 1);
    cdc_conn_close(c);
}

// A timeout as long as int64_t holds means forever, as a negative one does: the open and the
// receive wait for their message. (Adding it to the clock overflowed, which the sanitized build
// stops at, and the plain build's wrapped deadline ended the wait at once.)
static void longest_timeout_waits(void **state) {
    (void)state;
    const cdc_hello hello = {.client_name = "it_client", .request_mode = true};
    cdc_conn *c = NULL;
    char err[512];
    assert_int_equal(cdc_conn_open_unix(d.socket, &hello, INT64_MAX, &c, err, sizeof err), 0);
    static const int64_t longest[] = {INT64_MAX, INT64_MAX - 1};
    for (size_t i = 0; i < sizeof longest / sizeof longest[0]; i++) {
        assert_int_equal(cdc_stats_request(c), 0);
        cdc_msg m;
        assert_int_equal(cdc_msg_recv(c, longest[i], &m), 1);
        assert_int_equal(m.kind, CDC_MSG_STATS);
    }
    cdc_conn_close(c);
}

// An open's timeout 0 is no limit, as the Python client's timeout=0: the open waits for its
// Welcome, over the Unix socket and TCP, and the session answers. (It waited for nothing and
// gave -ETIMEDOUT, the Welcome not having come yet.)
static void open_with_timeout_0_waits(void **state) {
    (void)state;
    const cdc_hello hello = {.client_name = "it_client", .request_mode = true,
                             .limits = {.max_bodies = 1, .max_contacts = 4}};
    for (int tcp = 0; tcp <= 1; tcp++) {
        cdc_conn *c = NULL;
        char err[512];
        const int r = tcp ? cdc_conn_open_tcp(d.tcp, &hello, 0, &c, err, sizeof err)
                          : cdc_conn_open_unix(d.socket, &hello, 0, &c, err, sizeof err);
        if (r < 0) {
            fail_msg("open over %s with timeout 0: %d %s", tcp ? d.tcp : d.socket, r, err);
        }
        box_frame b;
        box_frame_init(&b);
        exchange(c, &b, 1);
        cdc_conn_close(c);
    }
}

// A hinge and a kinematic body go through the plain structs: the box hangs from a hinge above it
// (axis x) with a torque about y applied, which the hinge must hold, and a kinematic probe body
// (no mass) touches nothing. The hinge carries the weight and the torque; the probe's velocity
// comes back as it was prescribed.
static void joints_and_kinematic_bodies(void **state) {
    (void)state;
    const cdc_hello hello = {.client_name = "it_client", .request_mode = true,
                             .solver_name = "dantzig",
                             .limits = {.max_bodies = 2, .max_contacts = 1, .max_joints = 1,
                                        .max_dirs = 8}};
    cdc_conn *c = NULL;
    char err[512];
    if (cdc_conn_open_unix(d.socket, &hello, (int64_t)IT_TIMEOUT_MS * 1000000, &c, err,
                           sizeof err) < 0) {
        fail_msg("open: %s", err);
    }
    assert_int_equal(cdc_conn_welcome(c)->limits.max_joints, 1);
    box_frame b;
    box_frame_init(&b);
    b.box.tau[1] = 0.7;
    const cdc_body bodies[2] = {
        b.box,
        {.id = 9, .kinematic = true, .pos = {1, 0, 0}, .quat = {1, 0, 0, 0}, .v = {0.25, 0, 0}},
    };
    const cdc_joint hinge = {.id = 6, .body_a = 1, .body_b = 0, .kind = CDC_JOINT_HINGE,
                             .anchor = {0, 0, HALF + 0.5}, .axis = {1, 0, 0}};
    const cdc_frame f = {.seq = 3, .dt = 1e-3, .gravity = {0, 0, -G}, .nb = 2, .nj = 1,
                         .bodies = bodies, .joints = &hinge};
    assert_int_equal(cdc_frame_send(c, &f), 0);
    cdc_msg m;
    assert_int_equal(cdc_msg_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m), 1);
    if (m.kind != CDC_MSG_RESULT) {
        fail_msg("kind %d: %s", (int)m.kind, m.kind == CDC_MSG_ERROR ? m.error.message : "");
    }
    assert_int_equal(m.result.status, CDC_STATUS_OK);
    assert_int_equal(m.result.nj, 1);
    assert_int_equal(m.result.joints[0].id, 6);
    assert_near(m.result.joints[0].force[2], MASS * G, 1e-9 * MASS * G);
    assert_near(m.result.joints[0].force[0], 0, 1e-9 * MASS * G);
    assert_near(m.result.joints[0].torque[1], -0.7, 1e-9);
    assert_int_equal(m.result.nb, 2);
    assert_int_equal(m.result.bodies[1].id, 9);
    assert_near(m.result.bodies[1].v[0], 0.25, 1e-15);
    assert_true(m.result.residuals.joint <= 1e-12);
    assert_string_equal(m.result.solver, "dantzig");
    cdc_conn_close(c);
}

// The default path is a path, and a short buffer is refused.
static void default_socket_path(void **state) {
    (void)state;
    char path[256], tiny[4];
    assert_int_equal(cdc_default_socket(path, sizeof path), 0);
    assert_true(path[0] == '/');
    assert_non_null(strstr(path, "contactd"));
    assert_int_equal(cdc_default_socket(tiny, sizeof tiny), -ENAMETOOLONG);
    assert_string_equal(cdc_status_name(CDC_STATUS_DEADLINE), "deadline");
}

// A listener with backlog 0 that never accepts: the first connection fills its queue, so the
// next connect waits for room (Unix socket) or has its SYN dropped (TCP). Returns the listener
// and its one queued connection in fds[0], fds[1]; a TCP listener's "127.0.0.1:PORT" in hostport.
static void full_listener(bool tcp, const char *path, int fds[2], char *hostport, size_t len) {
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = tcp ? sizeof in : sizeof un;
    struct sockaddr *sa = tcp ? (struct sockaddr *)&in : (struct sockaddr *)&un;
    snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    fds[0] = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fds[0] >= 0);
    assert_int_equal(bind(fds[0], sa, alen), 0);
    assert_int_equal(listen(fds[0], 0), 0);
    assert_int_equal(getsockname(fds[0], sa, &alen), 0);
    snprintf(hostport, len, "127.0.0.1:%u", (unsigned)ntohs(in.sin_port));
    fds[1] = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fds[1] >= 0);
    assert_int_equal(connect(fds[1], sa, alen), 0);
}

// An open whose connect cannot complete (a remote host that does not answer; here a listener
// whose backlog is full) gives up at the timeout with -ETIMEDOUT, over TCP and the Unix socket.
// A connect that ignored it would wait for the kernel (minutes of SYN retries over TCP, forever
// on the Unix socket): the alarm ends the test long before.
static void open_times_out_on_a_full_backlog(void **state) {
    (void)state;
    char path[sizeof d.dir + 16], hostport[64], err[512];
    snprintf(path, sizeof path, "%s/full.sock", d.dir);
    for (int tcp = 0; tcp <= 1; tcp++) {
        int fds[2];
        full_listener(tcp, path, fds, hostport, sizeof hostport);
        cdc_conn *c = NULL;
        const int64_t timeout_ns = 200000000;
        alarm(30);
        const int r = tcp ? cdc_conn_open_tcp(hostport, NULL, timeout_ns, &c, err, sizeof err)
                          : cdc_conn_open_unix(path, NULL, timeout_ns, &c, err, sizeof err);
        alarm(0);
        assert_int_equal(r, -ETIMEDOUT);
        assert_null(c);
        assert_non_null(strstr(err, tcp ? hostport : path));
        close(fds[1]);
        close(fds[0]);
        unlink(path);
    }
}

// A send cut by its timeout leaves a stream the daemon cannot frame any more, so the client
// shuts its sending side: the peer (here the test's own listener, which reads nothing until the
// send has given up) reads the cut message's first bytes and then the end of the stream, and the
// next send fails at once with -EPIPE rather than writing a message that would be read from the
// middle of the cut one. The frame is several times what the socket holds unread.
static void cut_send_shuts_the_sending_side(void **state) {
    (void)state;
    enum { BODIES = 4000 };
    char path[sizeof d.dir + 16], err[512];
    snprintf(path, sizeof path, "%s/mute.sock", d.dir);
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(listener >= 0);
    assert_int_equal(bind(listener, (struct sockaddr *)&un, sizeof un), 0);
    assert_int_equal(listen(listener, 1), 0);
    cdc_conn *c = NULL;
    const cdc_hello no_hello = {.no_session = true};
    assert_int_equal(cdc_conn_open_unix(path, &no_hello, (int64_t)IT_TIMEOUT_MS * 1000000, &c,
                                        err, sizeof err),
                     0);
    const int peer = accept(listener, NULL, NULL);
    assert_true(peer >= 0);
    static cdc_body bodies[BODIES];
    for (int i = 0; i < BODIES; i++) {
        bodies[i] = (cdc_body){.id = (uint64_t)(i + 1), .mass = 1, .quat = {1, 0, 0, 0},
                               .inertia = {0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1}, .pos = {i, 0, 1}};
    }
    cdc_frame f = {.seq = 1, .dt = 1e-3, .gravity = {0, 0, -G}, .nb = BODIES, .bodies = bodies};
    alarm(30);
    assert_int_equal(cdc_frame_send(c, &f), -ETIMEDOUT);
    f = (cdc_frame){.seq = 2, .dt = 1e-3, .nb = 1, .bodies = bodies};
    assert_int_equal(cdc_frame_send(c, &f), -EPIPE);
    assert_int_equal(cdc_stats_request(c), -EPIPE);
    alarm(0);
    size_t got = 0;
    ssize_t n;
    static char buf[1 << 16];
    while ((n = recv(peer, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
        got += (size_t)n;
    }
    assert_int_equal(n, 0);
    assert_true(got > 0);
    cdc_conn_close(c);
    close(peer);
    close(listener);
    unlink(path);
}

// Last: SIGTERM gives each session a Goodbye naming the signal, then the close.
static void goodbye_at_sigterm(void **state) {
    (void)state;
    cdc_conn *c = open_session(false);
    assert_int_equal(it_daemon_stop(&d), 0);
    cdc_msg m;
    int r, goodbyes = 0;
    while ((r = cdc_msg_recv(c, (int64_t)IT_TIMEOUT_MS * 1000000, &m)) == 1) {
        assert_int_equal(m.kind, CDC_MSG_GOODBYE);
        assert_non_null(strstr(m.error.message, "SIGTERM"));
        goodbyes++;
    }
    assert_int_equal(goodbyes, 1);
    assert_int_equal(r, -ECONNRESET);
    cdc_conn_close(c);
}

int main(int argc, char **argv) {
    if (it_args(argc, argv, false, &contactd_path, NULL) < 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_socket_path),
        cmocka_unit_test(open_times_out_on_a_full_backlog),
        cmocka_unit_test(cut_send_shuts_the_sending_side),
        cmocka_unit_test(uds_frames_allocate_nothing),
        cmocka_unit_test(tcp_frames_allocate_nothing),
        cmocka_unit_test(nonblocking_receive),
        cmocka_unit_test(error_names_the_field),
        cmocka_unit_test(joints_and_kinematic_bodies),
        cmocka_unit_test(stats_count_the_frames),
        cmocka_unit_test(longest_timeout_waits),
        cmocka_unit_test(open_with_timeout_0_waits),
        cmocka_unit_test(goodbye_at_sigterm),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
