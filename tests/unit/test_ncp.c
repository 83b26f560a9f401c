/* SPDX-License-Identifier: MIT */
/* ncp (Todorov 2010): analytic cases on the Delassus form (a particle at the stick/slip
 * threshold of an incline) and through the model (a box at rest, a box sticking and sliding on
 * an incline, a spinning puck), agreement with SAP at a small regularization, the residual of
 * eq. 15 and the project's cone certificate on stacks and random scenes (redundant contacts too),
 * iteration counts on 16-contact stacks, units far from 1 (W x 1e-5, 1e5), FCLIB local files
 * (../shared/fclib, skipped when absent), exact ties without regularization, warm start, the
 * deadline (also in and after the restart from the pivoting answer), the LAPACK/BLAS and the
 * plain kernels agreeing at order 390, non-finite input, a non-finite iterate's residual,
 * Gauss-Seidel sweeps on blocks far from isotropic, and no allocation. */
#include "solver/ncp.h"
/* The static residual (eval) and sweeps (pgs) of nan_residual_is_not_converged and
 * sweeps_on_anisotropic_blocks. */
#include "solver/ncp.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "fclib_io.h"
#include "scene_gen.h"
#include "solver/certify.h"
#include "solver/contact.h"
#include "solver/deadline.h"
#include "solver/sap.h"
#include "solver/workspace.h"
#include "testlib.h"

#define G 9.81
/* The residual (eq. 15) a converged answer reaches (the default tolerance). */
#define RESIDUAL_TARGET 1e-10
/* Cold iterations on the stacks below: at most 34 measured (1..5 boxes); the cap catches a fall
 * back to the gradient's crawl, which takes hundreds. */
#define STACK_ITERATIONS_MAX 40
/* 16-contact 4-box stacks, 200 seeds per mu: at most 8 (mu 0.2) and 11 (mu 0.5) iterations
 * measured, a mean of 5.2 and 4.4; 0 and 8 of 200 take more than 8 (the target; 0 and 9,
 * at most 8 and 12, means 5.4 and 4.6, before a refused Newton point was followed by the Newton
 * point of the regions it entered; 7 and 25, at most 21 and 23, before the plain Newton point's
 * Tikhonov term grew with the residual: its steps ran far along W's null space and were
 * refused). */
#define STACK16_ITERATIONS_MAX 11
#define STACK16_OVER8_MAX 0.05

/* One solve of a scene through the model: impulses, post-step velocities and the certificate
 * (exact cone, as cs_step judges ncp). */
typedef struct solved {
    cs_status status;
    cs_ncp_info info;
    cs_stats st;
    double lambda[3 * T_GEN_MAX_CONTACTS];
    double v[6 * T_GEN_MAX_BODIES];
    cs_certificate cert;
    uint8_t state[T_GEN_MAX_CONTACTS];
} solved;

static cs_workspace *new_ws(const cs_scene *s) {
    const cs_limits lim = {.max_bodies = s->nb, .max_contacts = s->nc, .max_dirs = 16};
    cs_workspace *ws = cs_workspace_new(&lim);
    assert_non_null(ws);
    // The workspace is sized for the registered solvers; ncp must fit besides the model.
    assert_true(cs_workspace_capacity(ws) >= cs_model_size(&lim) + cs_ncp_size(&lim));
    return ws;
}

static void solve_prm(const cs_scene *s, const cs_options *opt, const cs_ncp_params *prm,
                      const double *lambda0, solved *out) {
    cs_workspace *ws = new_ws(s);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, s), CS_CONVERGED);
    out->status = cs_ncp_solve(ws, &m, opt, prm, lambda0, out->lambda, &out->st, &out->info);
    if (out->status >= 0) {
        double scratch[6 * T_GEN_MAX_BODIES];
        cs_model_velocity(&m, out->lambda, out->v, scratch);
        assert_int_equal(cs_certify(ws, &m, out->lambda, out->v, false, &out->cert, out->state),
                         CS_CONVERGED);
    }
    assert_true(out->st.peak_bytes <= cs_workspace_capacity(ws));
    cs_workspace_free(ws);
}

static void solve(const cs_scene *s, const cs_options *opt, const double *lambda0, solved *out) {
    solve_prm(s, opt, NULL, lambda0, out);
}

/* Converged to the residual target and certified as cs_step certifies ncp (exact cone,
 * frictional, default tolerance), and with a margin: every residual <= 1e-9 of its scale. */
static void assert_solved(const solved *r, const char *what) {
    if (r->status != CS_CONVERGED || r->info.residual > RESIDUAL_TARGET)
        fail_msg("%s: %s after %d iterations, residual %.3g", what, cs_status_name(r->status),
                 r->info.iterations, r->info.residual);
    assert_true(cs_certificate_is_ok(&r->cert, 0, true));
    assert_true(cs_certificate_is_ok(&r->cert, 1e-9, true));
}

/* ---- the Delassus form ------------------------------------------------------------------- */

/* A particle of mass m on an incline of angle th, one step from rest: W = I / m, b = h g
 * (-cos th, sin th, 0). With tan th <= mu it sticks (lambda = -m b); above, it slides with
 * lambda_t = -mu lambda_n along the slope and lambda_n = m h g cos th. Checked a hair on each
 * side of the threshold mu = tan th and at it. */
static void particle_incline_thresholds(void **state) {
    (void)state;
    const double m = 2, h = 1e-3, th = 25 * M_PI / 180, W[9] = {1 / m, 0, 0, 0, 1 / m, 0, 0, 0,
                                                                1 / m};
    const double b[3] = {-h * G * cos(th), h * G * sin(th), 0};
    void *scratch = malloc(cs_ncp_delassus_size(1));
    const double mus[] = {tan(th) * (1 + 1e-6), tan(th), tan(th) * (1 - 1e-6), 0.1, 0};
    for (size_t k = 0; k < sizeof mus / sizeof mus[0]; k++) {
        const double mu = mus[k];
        double lambda[3];
        cs_ncp_info info;
        assert_int_equal(cs_ncp_delassus(1, W, 3, b, &mu, NULL, NULL, NULL, scratch, lambda,
                                         &info),
                         CS_CONVERGED);
        assert_true(info.residual <= RESIDUAL_TARGET);
        const double ln = m * h * G * cos(th), lt = fmin(m * h * G * sin(th), mu * ln);
        assert_near(lambda[0], ln, 1e-12 * ln);
        assert_near(lambda[1], -lt, 1e-12 * ln);
        assert_near(lambda[2], 0, 1e-15);
    }
    free(scratch);
}

/* A contact moving apart (b_n > 0) takes no impulse; one moving apart while sliding too. */
static void particle_separates(void **state) {
    (void)state;
    const double W[9] = {1, 0.2, 0, 0.2, 1, 0, 0, 0, 1}, b[3] = {0.1, -0.3, 0.2}, mu = 0.5;
    void *scratch = malloc(cs_ncp_delassus_size(1));
    double lambda[3] = {1, 1, 1};
    cs_ncp_info info;
    assert_int_equal(cs_ncp_delassus(1, W, 3, b, &mu, NULL, NULL, NULL, scratch, lambda, &info),
                     CS_CONVERGED);
    for (int k = 0; k < 3; k++)
        assert_near(lambda[k], 0, 0);
    free(scratch);
}

/* A clock long past any deadline. */
static int64_t clock_past(void) {
    return INT64_MAX / 2;
}

/* The solver's state for the Delassus problem (W, b, mu) of nc contacts, as cs_ncp_delassus()
 * sets it up before its start. */
static void setup_state(ncp *P, void *scratch, int nc, const double *W, const double *b,
                        const double *mu) {
    *P = (ncp){.nc = nc, .n = 3 * nc, .ldw = 3 * nc, .mu = mu, .lam = LM_MIN, .hm = -1,
               .meter = cs__meter_start(NULL)};
    layout(P, scratch, nc);
    scale_problem(P, W, 3 * nc, b);
}

/* Gauss-Seidel sweeps (the restarts' and the start's) on one contact whose 3 x 3 block is far
 * from isotropic: a stiff normal (the old common step 3 / tr W went past the normal row's
 * minimum by nearly twice its distance, and f_n cycled between 0 and 3 times its answer), a stiff
 * tangent coupled to the normal (the soft normal crawled), a soft tangent beside a stiff one. From
 * f = 0, 400 sweeps end at the contact's answer: u = W f + b with f_n u_n = 0, u_n >= 0, and f_t
 * on the cone against the slip (or, with no slip, inside it), to 1e-12 of the scale. */
static void sweeps_on_anisotropic_blocks(void **state) {
    (void)state;
    const double W[3][9] = {{10, 0, 0, 0, 0.1, 0, 0, 0, 0.1},
                            {0.1, 0.2, 0, 0.2, 10, 0, 0, 0, 1},
                            {1, 0.1, 0.1, 0.1, 5, 0.3, 0.1, 0.3, 0.05}};
    const double b[3][3] = {{-1, 0.05, 0}, {-0.2, 0.5, -0.3}, {-1, 0.2, 0.2}}, mu = 0.5;
    void *scratch = aligned_alloc(64, (cs_ncp_delassus_size(1) + 63) & ~(size_t)63);
    for (int c = 0; c < 3; c++) {
        ncp P;
        setup_state(&P, scratch, 1, W[c], b[c], &mu);
        double f[3] = {0}, u[3];
        assert_false(pgs(&P, f, 400));
        for (int i = 0; i < 3; i++)
            u[i] = b[c][i] + W[c][i] * f[0] + W[c][3 + i] * f[1] + W[c][6 + i] * f[2];
        const double ft = hypot(f[1], f[2]), ut = hypot(u[1], u[2]), tol = 1e-12;
        printf("# block %d: f (%.6g, %.6g, %.6g), u (%.3g, %.3g, %.3g)\n", c, f[0], f[1], f[2],
               u[0], u[1], u[2]);
        assert_true(f[0] > 0);
        assert_near(u[0], 0, tol);
        assert_true(ft <= mu * f[0] * (1 + tol));
        if (ut > tol) {
            assert_near(f[1], -mu * f[0] * u[1] / ut, tol);
            assert_near(f[2], -mu * f[0] * u[2] / ut, tol);
        }
    }
    free(scratch);
}

/* An iterate gone non-finite (here one NaN tangential entry of x: f(x) takes it, and the product
 * with W spreads it to every row) has a NaN residual, never one below the tolerance: the
 * residual's maximum dropped NaN entries, so this x measured 0, as if converged. */
static void nan_residual_is_not_converged(void **state) {
    (void)state;
    const double W[36] = {1, 0, 0, 0.5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                          0.5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    const double b[6] = {-1, 0.1, 0, -1, 0, 0.1}, mu[2] = {0.5, 0.5};
    void *scratch = aligned_alloc(64, (cs_ncp_delassus_size(2) + 63) & ~(size_t)63);
    ncp P;
    setup_state(&P, scratch, 2, W, b, mu);
    for (int i = 0; i < 6; i++)
        P.x[i] = i == 4 ? NAN : 0;
    double res;
    const double l = eval(&P, P.x, P.f, P.r, &res);
    assert_true(isnan(l));
    assert_false(res <= TOL_DEFAULT);
    free(scratch);
}

/* Non-finite W, b, lambda0 or a negative / NaN mu: CS_EINPUT, lambda untouched. */
static void non_finite_input(void **state) {
    (void)state;
    void *scratch = malloc(cs_ncp_delassus_size(1));
    for (int which = 0; which < 5; which++) {
        double W[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, b[3] = {-1, 0, 0}, l0[3] = {0}, mu = 0.5;
        switch (which) {
        case 0: W[4] = NAN; break;
        case 1: b[2] = INFINITY; break;
        case 2: l0[1] = NAN; break;
        case 3: mu = -0.1; break;
        case 4: mu = NAN; break;
        }
        double lambda[3] = {7, 7, 7};
        cs_ncp_info info;
        assert_int_equal(cs_ncp_delassus(1, W, 3, b, &mu, l0, NULL, NULL, scratch, lambda, &info),
                         CS_EINPUT);
        assert_near(lambda[0], 7, 0);
    }
    free(scratch);
    // The same with the deadline long past, on a problem whose scan of W reads the clock before
    // the last row (20 contacts): b, mu and the warm start are judged whole all the same (a NaN
    // warm start past that read once came back as the answer, labelled CS_DEADLINE).
    enum { NC = 20, N = 3 * NC };
    static double W[N * N], b[N], l0[N], mu[NC], lambda[N];
    for (int i = 0; i < N; i++) {
        W[i * N + i] = 1;
        b[i] = i % 3 ? 0 : -1;
    }
    for (int k = 0; k < NC; k++)
        mu[k] = 0.5;
    l0[N - 1] = NAN;
    scratch = malloc(cs_ncp_delassus_size(NC));
    const cs_options late = {.deadline_ns = 1, .clock_ns = clock_past};
    cs_ncp_info info;
    assert_int_equal(cs_ncp_delassus(NC, W, N, b, mu, l0, NULL, &late, scratch, lambda, &info),
                     CS_EINPUT);
    free(scratch);
}

/* ---- through the model ------------------------------------------------------------------- */

/* Box at rest on a plane, four coplanar contacts (W has rank 6 of 12: an exact tie), no
 * regularization: it stays at rest, the normal impulses carry m g h, and the stick start's
 * minimum-norm solution shares it evenly. */
static void box_at_rest(void **state) {
    (void)state;
    t_gen_scene g;
    t_gen_single(&g, 3, 0.5, 8, 1);
    // No wrench: the box rests.
    g.s.bodies[0].f[0] = g.s.bodies[0].f[1] = g.s.bodies[0].f[2] = 0;
    memset(g.s.bodies[0].tau, 0, sizeof g.s.bodies[0].tau);
    solved r;
    solve(&g.s, NULL, NULL, &r);
    assert_solved(&r, "box at rest");
    const double mgh = g.s.bodies[0].mass * G * g.s.dt;
    for (int i = 0; i < g.s.nc; i++) {
        // Even to the damping's accuracy (lam = 1e-10 of W's scale, then refined).
        assert_near(r.lambda[3 * i], mgh / 4, 1e-5 * mgh);
        assert_int_equal(r.state[i], CS_STATE_STICK);
    }
    for (int k = 0; k < 6; k++)
        assert_near(r.v[k], 0, 1e-12);
}

/* Sum of the world-frame impulses of the contacts on body index 0 (body_a of every contact). */
static void net_impulse(const cs_scene *s, const double *lambda, double out[3]) {
    out[0] = out[1] = out[2] = 0;
    for (int i = 0; i < s->nc; i++) {
        double t1[3], t2[3];
        const double *n = s->contacts[i].normal, *l = lambda + 3 * i;
        cs_model_tangents(n, t1, t2);
        for (int k = 0; k < 3; k++)
            out[k] += l[0] * n[k] + l[1] * t1[k] + l[2] * t2[k];
    }
}

/* A box on a 20 degree incline from rest. mu = 0.5 > tan 20: it sticks, and the contacts carry
 * m g h exactly (normal part m g h cos, tangential m g h sin). mu = 0.2: it slides down the slope
 * at h g (sin - mu cos) after the step, every contact on the cone's surface, friction opposing
 * the slip. */
static void box_on_incline(void **state) {
    (void)state;
    const double th = 20 * M_PI / 180, mus[2] = {0.5, 0.2};
    for (int k = 0; k < 2; k++) {
        // A box face down on the plane (single situation 3), the plane tilted by th about y.
        t_gen_scene g;
        t_gen_single(&g, 3, mus[k], 8, 1);
        cs_body *B = &g.s.bodies[0];
        memset(B->f, 0, sizeof B->f);
        memset(B->tau, 0, sizeof B->tau);
        // Tilting gravity instead of the box: the plane keeps normal +z, gravity leans by th.
        g.s.gravity[0] = G * sin(th), g.s.gravity[1] = 0, g.s.gravity[2] = -G * cos(th);
        solved r;
        solve(&g.s, NULL, NULL, &r);
        assert_solved(&r, k ? "incline, sliding" : "incline, sticking");
        const double m = B->mass, h = g.s.dt;
        double P[3];
        net_impulse(&g.s, r.lambda, P);
        assert_near(P[2], m * G * h * cos(th), 1e-9 * m * G * h);
        // Within the solver's tolerance (1e-10 of the scale), as P[0] and P[2].
        assert_near(P[1], 0, 1e-10 * m * G * h);
        if (k == 0) {
            assert_near(P[0], -m * G * h * sin(th), 1e-9 * m * G * h);
            for (int q = 0; q < 6; q++)
                assert_near(r.v[q], 0, 1e-12);
        } else {
            assert_near(P[0], -mus[k] * m * G * h * cos(th), 1e-9 * m * G * h);
            assert_near(r.v[0], h * G * (sin(th) - mus[k] * cos(th)), 1e-12);
            for (int q = 1; q < 6; q++)
                assert_near(r.v[q], 0, 1e-12);
            for (int i = 0; i < g.s.nc; i++) {
                const double *l = r.lambda + 3 * i;
                assert_int_equal(r.state[i], CS_STATE_SLIDE);
                assert_near(hypot(l[1], l[2]), mus[k] * l[0], 1e-12 * l[0]);
            }
        }
    }
}

/* A puck (disc of radius R) spinning at w about its axis on a plane, n contacts evenly on its
 * rim. Each contact slips tangentially; friction mu m g h / n opposes it, so the net force is
 * m g h up, the torque impulse -mu m g h R, and the spin drops by mu m g h R / I_zz. */
static void spinning_puck(void **state) {
    (void)state;
    const int n = 8;
    const double R = 0.1, m = 0.5, mu = 0.3, w = 20, h = 1e-3;
    const double Izz = m * R * R / 2, Ixx = m * R * R / 4 + m * 0.02 * 0.02 / 12;
    cs_body body = {.id = 1, .mass = m, .inertia = {Ixx, 0, 0, 0, Ixx, 0, 0, 0, Izz},
                    .pos = {0, 0, 0.01}, .quat = {1, 0, 0, 0}, .w = {0, 0, w}};
    cs_contact c[8];
    for (int i = 0; i < n; i++) {
        const double a = 2 * M_PI * i / n;
        c[i] = (cs_contact){.id = (uint64_t)i + 1, .body_a = 1, .body_b = 0,
                            .point = {R * cos(a), R * sin(a), 0}, .normal = {0, 0, 1}, .mu = mu};
    }
    const cs_scene s = {.seq = 1, .dt = h, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 1,
                        .nc = n, .bodies = &body, .contacts = c};
    solved r;
    solve(&s, NULL, NULL, &r);
    assert_solved(&r, "spinning puck");
    const double mgh = m * G * h;
    double P[3];
    net_impulse(&s, r.lambda, P);
    assert_near(P[0], 0, 1e-12 * mgh);
    assert_near(P[1], 0, 1e-12 * mgh);
    assert_near(P[2], mgh, 1e-9 * mgh);
    assert_near(r.v[5], w - mu * mgh * R / Izz, 1e-9 * w);
    for (int i = 0; i < n; i++) {
        const double *l = r.lambda + 3 * i;
        // The normal impulses of a rim are a tie (only their sum and moments are determined):
        // a contact may carry none (then it separates, no impulse at all); the others slide on
        // the cone's surface against their own slip.
        if (r.state[i] == CS_STATE_SEPARATE) {
            assert_near(l[0], 0, 1e-12 * mgh);
            assert_near(hypot(l[1], l[2]), 0, 1e-12 * mgh);
            continue;
        }
        assert_int_equal(r.state[i], CS_STATE_SLIDE);
        assert_near(hypot(l[1], l[2]), mu * l[0], 1e-12 * mgh);
        // Opposing the rim's velocity w e_z x p: tangential direction (-sin a, cos a).
        const double a = 2 * M_PI * i / n;
        double t1[3], t2[3], F[3];
        cs_model_tangents(c[i].normal, t1, t2);
        for (int k = 0; k < 3; k++)
            F[k] = l[1] * t1[k] + l[2] * t2[k];
        assert_near(F[0] * -sin(a) + F[1] * cos(a), -mu * l[0], 1e-9 * mgh);
    }
}

/* Box stacks (1..5 boxes, square and octagonal interfaces: redundant coplanar contacts, exact
 * ties) and 16-contact stacks under many wrenches, cold, without regularization: converged
 * within the iteration target and certified. */
static void stacks_converge_cold(void **state) {
    (void)state;
    int worst = 0;
    for (int boxes = 1; boxes <= 5; boxes++)
        for (int variant = 0; variant < (1 << (boxes - 1)) && variant < 8; variant++)
            for (uint64_t seed = 1; seed <= 20; seed++) {
                t_gen_scene g;
                t_gen_stack(&g, boxes, variant, seed % 2 ? 0.5 : 0.2, 8, seed);
                solved r;
                solve(&g.s, NULL, NULL, &r);
                char what[96];
                snprintf(what, sizeof what, "stack %d variant %d seed %llu", boxes, variant,
                         (unsigned long long)seed);
                assert_solved(&r, what);
                if (r.info.iterations > STACK_ITERATIONS_MAX)
                    fail_msg("%s: %d iterations", what, r.info.iterations);
                worst = r.info.iterations > worst ? r.info.iterations : worst;
            }
    printf("# stacks: at most %d iterations\n", worst);
}

/* The random scene of seed as these tests draw it (t_gen_random: 1..5 bodies, 1..32 contacts)
 * into g, when its contacts outnumber the bodies' freedoms (3 nc > 6 nb: W singular) or not as
 * redundant asks; false, g untouched, when they do not. */
static bool random_scene(t_gen_scene *g, uint64_t seed, bool redundant) {
    t_rng rng = t_rng_seed(seed);
    const int nb = 1 + t_rng_below(&rng, 5), nc = 1 + t_rng_below(&rng, 32);
    if ((3 * nc > 6 * nb) != redundant)
        return false;
    t_gen_random(g, nb, nc, 8, seed);
    return true;
}

/* Lloyd's single-body situations (edges, grooves, corners) and random multi-body scenes with
 * gaps and mu in [0, 1] whose contacts do not outnumber the bodies' freedoms (3 nc <= 6 nb):
 * converged and certified. */
static void random_scenes_converge(void **state) {
    (void)state;
    for (int kind = 0; kind < T_GEN_SINGLE_KINDS; kind++)
        for (uint64_t seed = 1; seed <= 20; seed++) {
            t_gen_scene g;
            t_gen_single(&g, kind, 0.1 + 0.05 * (double)seed, 8, seed);
            solved r;
            solve(&g.s, NULL, NULL, &r);
            char what[96];
            snprintf(what, sizeof what, "%s seed %llu", t_gen_single_name(kind),
                     (unsigned long long)seed);
            assert_solved(&r, what);
        }
    for (uint64_t seed = 1; seed <= 200; seed++) {
        t_gen_scene g;
        if (!random_scene(&g, seed, false))
            continue;
        solved r;
        solve(&g.s, NULL, NULL, &r);
        char what[64];
        snprintf(what, sizeof what, "random seed %llu", (unsigned long long)seed);
        assert_solved(&r, what);
    }
}

/* The case: 16-contact 4-box stacks (4 contacts per interface), 200 seeds at mu 0.2 and
 * 0.5, cold, no regularization: every one converged and certified, the iteration count bounded
 * and at most STACK16_OVER8_MAX of them above 8 (the median is 5 to 6). */
static void stack16_iterations(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        int over8 = 0, worst = 0, total = 0;
        for (uint64_t seed = 1; seed <= 200; seed++) {
            t_gen_scene g;
            t_gen_stack(&g, 4, 0, k ? 0.5 : 0.2, 8, seed);
            assert_int_equal(g.s.nc, 16);
            solved r;
            solve(&g.s, NULL, NULL, &r);
            char what[64];
            snprintf(what, sizeof what, "stack16 mu %.1f seed %llu", k ? 0.5 : 0.2,
                     (unsigned long long)seed);
            assert_solved(&r, what);
            if (r.info.iterations > STACK16_ITERATIONS_MAX)
                fail_msg("%s: %d iterations", what, r.info.iterations);
            over8 += r.info.iterations > 8;
            worst = r.info.iterations > worst ? r.info.iterations : worst;
            total++;
        }
        printf("# stack16 mu %.1f: %d of %d above 8 iterations, at most %d\n", k ? 0.5 : 0.2,
               over8, total, worst);
        assert_true(over8 <= STACK16_OVER8_MAX * total);
    }
}

/* Random scenes whose contacts outnumber the bodies' freedoms (3 nc > 6 nb: W singular, many
 * contacts separating), seeds 1..REDUNDANT_SEEDS. Every answer has a usable status and a finite
 * iterate; the converged ones are certified. A few end in a local minimum of |r|^2 (section
 * V-A), or crawl along a curved valley, and neither the Gauss-Seidel restarts nor the restart
 * from the pivoting answer get them out within the 50 iterations: 9 of 1645 measured (15 of 3241
 * on seeds 1..4000). 35 (61) before that restart, sweeps that cannot go past a block's minimum
 * and the Newton point of the regions a refused step entered; 51 (98) before the plain Newton
 * point's Tikhonov term grew with the residual and refused Newton steps were backtracked.
 * REDUNDANT_FAILURES_MAX holds that line. */
#define REDUNDANT_SEEDS 2000
#define REDUNDANT_FAILURES_MAX 9
static void redundant_random_scenes(void **state) {
    (void)state;
    int failures = 0, scenes = 0;
    for (uint64_t seed = 1; seed <= REDUNDANT_SEEDS; seed++) {
        t_gen_scene g;
        if (!random_scene(&g, seed, true))
            continue;
        solved r;
        solve(&g.s, NULL, NULL, &r);
        scenes++;
        for (int i = 0; i < 3 * g.s.nc; i++)
            assert_true(isfinite(r.lambda[i]));
        if (r.status == CS_CONVERGED) {
            char what[64];
            snprintf(what, sizeof what, "redundant seed %llu", (unsigned long long)seed);
            assert_solved(&r, what);
        } else {
            assert_true(r.status == CS_MAXITER || r.status == CS_RAY);
            printf("# redundant seed %llu (nb %d nc %d): %s, residual %.2g\n",
                   (unsigned long long)seed, g.s.nb, g.s.nc, cs_status_name(r.status),
                   r.info.residual);
            failures++;
        }
    }
    printf("# redundant: %d of %d scenes not converged\n", failures, scenes);
    assert_true(failures <= REDUNDANT_FAILURES_MAX);
}

/* The status describes the iterate returned: CS_CONVERGED exactly when its residual is within
 * the tolerance, on the random scenes with redundant contacts of seeds 1..4000 at a tolerance of
 * 1e-3. The best iterate by l = |r|^2 / 2 was returned over a converged one of higher l (l is
 * scaled and summed, the residual relative and a maximum) under CS_CONVERGED: 3 of these scenes
 * (seeds 1952, 2643, 3759; 9 of 20000 seeds), none at the default 1e-10 in 40000. */
static void status_describes_the_iterate(void **state) {
    (void)state;
    const cs_ncp_params prm = {.tol = 1e-3};
    int converged = 0, scenes = 0;
    for (uint64_t seed = 1; seed <= 4000; seed++) {
        t_gen_scene g;
        if (!random_scene(&g, seed, true))
            continue;
        solved r;
        solve_prm(&g.s, NULL, &prm, NULL, &r);
        scenes++;
        converged += r.status == CS_CONVERGED;
        if ((r.status == CS_CONVERGED) != (r.info.residual <= prm.tol))
            fail_msg("redundant seed %llu: %s with residual %.3g", (unsigned long long)seed,
                     cs_status_name(r.status), r.info.residual);
    }
    printf("# tolerance 1e-3: %d of %d scenes converged\n", converged, scenes);
}

/* FCLIB local problems (state: the file under ../shared/fclib; left out when absent): ncp
 * converges cold to eq. 15's default tolerance, and Siconos' residual of the answer on the
 * symmetrized W is small (1e-6: these W are stored in single precision or nearly so). */
static void fclib_local_converges(void **state) {
    const char *name = *state;
    const char *path = t_shared_path(name);
    fclib_io_problem p;
    char err[512];
    if (fclib_io_load(path, &p, err, sizeof err) < 0)
        fail_msg("%s", err);
    fclib_io_result res;
    const cs_options opt = {.solver = CS_SOLVER_NCP};
    assert_int_equal(fclib_io_solve_local(&p, &opt, 0, &res, err, sizeof err), 0);
    if (res.status != CS_CONVERGED || res.ncp.residual > RESIDUAL_TARGET)
        fail_msg("%s: %s after %d iterations, residual %.3g", name, cs_status_name(res.status),
                 res.ncp.iterations, res.ncp.residual);
    printf("# %s: %d iterations, Siconos residual %.2g\n", name, res.ncp.iterations,
           res.error.total);
    assert_true(res.error.total <= 1e-6);
    fclib_io_result_free(&res);
    fclib_io_free(&p);
}

/* SAP at a small regularization (beta = 1e-2: R_n = 2.5e-6 w; sigma = 1e-6) against ncp's rigid
 * answer, on scenes that stick (no wrench, mu 0.9: SAP's convex friction model glides where
 * Coulomb's slides, so sliding scenes differ by design). Impulses of redundant contacts are not
 * unique, so the post-step velocities are compared (unique: M (v - v*) = J^T lambda). SAP's
 * compliance moves them by about R lambda ~ 1e-5 of the scale h g; the bound is 1e-4 h g. */
static void agrees_with_sap(void **state) {
    (void)state;
    const cs_sap_params prm = {.beta = 1e-2, .sigma = 1e-6, .rel_tol = 1e-10};
    for (int sc = 0; sc < 4; sc++) {
        t_gen_scene g;
        if (sc < 3)
            t_gen_stack(&g, 2 + sc, sc, 0.9, 8, 7 + (uint64_t)sc);
        else
            t_gen_single(&g, 6, 0.9, 8, 3);
        for (int b = 0; b < g.s.nb; b++) {
            memset(g.s.bodies[b].f, 0, sizeof g.s.bodies[b].f);
            memset(g.s.bodies[b].tau, 0, sizeof g.s.bodies[b].tau);
        }
        solved r;
        solve(&g.s, NULL, NULL, &r);
        assert_solved(&r, "sap scene");
        for (int i = 0; i < g.s.nc; i++)
            assert_true(r.state[i] != CS_STATE_SLIDE);
        cs_workspace *ws = new_ws(&g.s);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &g.s), CS_CONVERGED);
        double lambda[3 * T_GEN_MAX_CONTACTS], v[6 * T_GEN_MAX_BODIES];
        uint8_t st8[T_GEN_MAX_CONTACTS];
        cs_stats st;
        const cs_options sap = {.solver = CS_SOLVER_SAP};
        bool no_iterate;
        assert_int_equal(cs_sap_solve(ws, &m, &g.s, &sap, &prm, NULL, lambda, v, st8, &no_iterate,
                                      &st),
                         CS_CONVERGED);
        const double scale = g.s.dt * G;
        for (int k = 0; k < 6 * g.s.nb; k++)
            assert_near(v[k], r.v[k], 1e-4 * scale);
        cs_workspace_free(ws);
    }
}

/* The converged answer as the warm start: 0 iterations (the start x = v - f is the solution),
 * at most 1 if rounding leaves the residual a hair above tolerance; same velocities. The cold
 * answer is converged to 1e-13: the start x = u - lambda of an answer with residual r has a
 * residual of about (I - W) r, above the default tolerance when r is just below it. */
static void warm_start_from_answer(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        t_gen_scene g;
        t_gen_stack(&g, 4, (int)seed % 8, 0.5, 8, seed);
        solved cold, warm;
        solve_prm(&g.s, NULL, &(cs_ncp_params){.tol = 1e-13}, NULL, &cold);
        assert_solved(&cold, "cold");
        solve(&g.s, NULL, cold.lambda, &warm);
        assert_solved(&warm, "warm");
        if (warm.info.iterations > 1)
            fail_msg("seed %llu: %d iterations warm", (unsigned long long)seed,
                     warm.info.iterations);
        // Velocities (unique; impulses of redundant contacts are not) agree to what a residual
        // of 1e-10 allows once mapped through J's conditioning.
        for (int k = 0; k < 6 * g.s.nb; k++)
            assert_near(warm.v[k], cold.v[k], 1e-6 * g.s.dt * G);
    }
}

static int64_t fake_now;
static int64_t clock_ticking(void) {
    return fake_now++;
}

/* A deadline already passed: CS_DEADLINE at once with a finite iterate, cold and warm (then
 * the warm start itself). A deadline passing mid-solve stops with an iterate no worse than the
 * start. */
static void deadline(void **state) {
    (void)state;
    t_gen_scene g;
    t_gen_stack(&g, 4, 0, 0.5, 8, 3);
    const cs_options late = {.solver = CS_SOLVER_DANTZIG, .deadline_ns = 1000,
                             .clock_ns = clock_past};
    solved r, ok;
    solve(&g.s, &late, NULL, &r);
    assert_int_equal(r.status, CS_DEADLINE);
    for (int i = 0; i < 3 * g.s.nc; i++)
        assert_true(isfinite(r.lambda[i]));
    solve(&g.s, NULL, NULL, &ok);
    assert_solved(&ok, "stack");
    solve(&g.s, &late, ok.lambda, &r);
    assert_int_equal(r.status, CS_DEADLINE);
    for (int i = 0; i < 3 * g.s.nc; i++)
        assert_near(r.lambda[i], ok.lambda[i], 0);
    // Mid-solve: every deadline k gives a labelled status and finite impulses.
    int deadlines = 0;
    for (int k = 1; k < 60; k++) {
        fake_now = 0;
        const cs_options mid = {.deadline_ns = k, .clock_ns = clock_ticking};
        solve(&g.s, &mid, NULL, &r);
        assert_true(r.status == CS_DEADLINE || r.status == CS_CONVERGED);
        deadlines += r.status == CS_DEADLINE;
        for (int i = 0; i < 3 * g.s.nc; i++)
            assert_true(isfinite(r.lambda[i]));
    }
    assert_true(deadlines > 0);
}

/* The restart from the pivoting answer (cs_ncp_solve): on the random scenes with redundant
 * contacts of seeds 1..400 that take it (st.pivots > 0), an answer converged is certified, and a
 * deadline anywhere in such a solve (15 points spread over its clock reads) stops it with a
 * labelled status and finite impulses, some of them inside or after the pivoting solve. */
static void restarts_from_pivots(void **state) {
    (void)state;
    int restarted = 0, converged = 0, cut_late = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        t_gen_scene g;
        if (!random_scene(&g, seed, true))
            continue;
        const cs_options far = {.deadline_ns = INT64_MAX / 2, .clock_ns = t_clock_counting};
        solved r;
        t_clock_reads = 0;
        solve(&g.s, &far, NULL, &r);
        const long reads = t_clock_reads;
        if (r.st.pivots == 0)
            continue;
        restarted++;
        if (r.status == CS_CONVERGED) {
            char what[64];
            snprintf(what, sizeof what, "restarted seed %llu", (unsigned long long)seed);
            assert_solved(&r, what);
            converged++;
        }
        for (int j = 1; j < 16; j++) {
            fake_now = 0;
            const cs_options mid = {.deadline_ns = reads * j / 16, .clock_ns = clock_ticking};
            solved c;
            solve(&g.s, &mid, NULL, &c);
            assert_true(c.status == CS_DEADLINE || c.status == r.status);
            for (int i = 0; i < 3 * g.s.nc; i++)
                assert_true(isfinite(c.lambda[i]));
            cut_late += c.status == CS_DEADLINE && c.st.pivots > 0;
        }
    }
    printf("# pivoting restart: %d scenes, %d converged; %d deadlines in or after it\n",
           restarted, converged, cut_late);
    assert_true(restarted > 0 && cut_late > 0);
}

/* A deadline anywhere in a solve that restarts returns an iterate under its own residual: two
 * deadlines that report the same finite residual report the same impulses. Cut short, the
 * restart's Gauss-Seidel sweeps left their forces (a different set at each clock read) under the
 * residual of the point they started from, and those went out as the best iterate. */
static void a_deadline_answer_has_its_own_residual(void **state) {
    (void)state;
    int scenes = 0, same = 0;
    static solved prev, c;
    for (uint64_t seed = 1; seed <= 400 && scenes < 3; seed++) {
        t_gen_scene g;
        if (!random_scene(&g, seed, true))
            continue;
        const cs_options far = {.deadline_ns = INT64_MAX / 2, .clock_ns = t_clock_counting};
        t_clock_reads = 0;
        solve(&g.s, &far, NULL, &c);
        const long reads = t_clock_reads;
        if (c.st.pivots == 0)
            continue; // no restart
        scenes++;
        prev.status = CS_CONVERGED;
        for (long k = 1; k < reads; k++) {
            fake_now = 0;
            const cs_options mid = {.deadline_ns = k, .clock_ns = clock_ticking};
            solve(&g.s, &mid, NULL, &c);
            if (c.status == CS_DEADLINE && prev.status == CS_DEADLINE &&
                isfinite(c.info.residual) && c.info.residual == prev.info.residual) {
                same++;
                for (int i = 0; i < 3 * g.s.nc; i++) {
                    if (c.lambda[i] != prev.lambda[i])
                        fail_msg("seed %llu, deadline at read %ld of %ld: residual %.17g, "
                                 "impulse %d %.17g, at the read before %.17g",
                                 (unsigned long long)seed, k, reads, c.info.residual, i,
                                 c.lambda[i], prev.lambda[i]);
                }
            }
            prev = c;
        }
    }
    printf("# %d restarting scenes, %d deadlines on the same iterate as the read before\n", scenes,
           same);
    assert_true(scenes > 0 && same > 0);
}

static int64_t clock_zero(void) {
    return 0;
}

/* A dense Delassus-form problem of nc contacts: W = F F^T / r (n = 3 nc rows, F n x r uniform in
 * [-1, 1]: rank min(n, r)), normal velocities in [-1, 0.2], tangential in [-1, 1], mu 0.8. */
static void dense_problem(t_rng *rng, int nc, int r, double *W, double *b, double *mu) {
    const int n = 3 * nc;
    double *F = malloc(sizeof(double) * n * r);
    assert_non_null(F);
    for (int i = 0; i < n * r; i++)
        F[i] = t_rng_range(rng, -1, 1);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double w = 0;
            for (int k = 0; k < r; k++)
                w += F[(size_t)k * n + i] * F[(size_t)k * n + j];
            W[(size_t)j * n + i] = w / r;
        }
    for (int k = 0; k < nc; k++) {
        b[3 * k] = t_rng_range(rng, -1, 0.2);
        b[3 * k + 1] = t_rng_range(rng, -1, 1);
        b[3 * k + 2] = t_rng_range(rng, -1, 1);
        mu[k] = 0.8;
    }
    free(F);
}

/* Orders >= 384 without a deadline take LAPACK's LU and BLAS's dsyrk for J^T J of the
 * Levenberg-Marquardt point; with a deadline armed (never reached here) the plain kernels. A
 * rank-deficient W (390 rows, rank 200) from a warm start far off, where the plain Newton points
 * get rejected and LM points of order 389-390 are formed (23 of them measured): both kernel sets
 * converge, to velocities u = W lambda + b that agree (impulses of redundant rows are not
 * unique). */
static void large_kernels_agree(void **state) {
    (void)state;
    enum { NC = 130, N = 3 * NC, R = 200 };
    double *W = malloc(sizeof(double) * N * N);
    double b[N], mu[NC], lambda0[N], lambda[2][N], u[2][N];
    t_rng rng = t_rng_seed(4);
    dense_problem(&rng, NC, R, W, b, mu);
    for (int i = 0; i < N; i++)
        lambda0[i] = 20 * t_rng_range(&rng, i % 3 ? -1 : 0, 1);
    void *scratch = aligned_alloc(64, (cs_ncp_delassus_size(NC) + 63) & ~(size_t)63);
    const cs_options far = {.deadline_ns = INT64_MAX / 2, .clock_ns = clock_zero};
    const cs_options *opts[2] = {NULL, &far};
    for (int v = 0; v < 2; v++) {
        cs_ncp_info info;
        const cs_status st = cs_ncp_delassus(NC, W, N, b, mu, lambda0, NULL, opts[v], scratch,
                                             lambda[v], &info);
        printf("# large, %s kernels: %s, %d iterations (%d Newton points), residual %.2g\n",
               v ? "plain" : "LAPACK/BLAS", cs_status_name(st), info.iterations, info.newton,
               info.residual);
        assert_int_equal(st, CS_CONVERGED);
        assert_true(info.residual <= RESIDUAL_TARGET);
        assert_true(info.newton < info.iterations);
        for (int i = 0; i < N; i++) {
            u[v][i] = b[i];
            for (int j = 0; j < N; j++)
                u[v][i] += W[(size_t)j * N + i] * lambda[v][j];
        }
    }
    for (int i = 0; i < N; i++)
        assert_near(u[0][i], u[1][i], 1e-8);
    free(scratch);
    free(W);
}

/* The plain kernels read the meter's clock as they work, about once per CS__METER_UNITS
 * multiply-adds: one iteration from cold on a dense W of order 390 (the stick start's Cholesky,
 * n^3 / 6, and the Newton point's LU, n^3 / 3, at the least) reads it at least half that often.
 * When the factorizations counted a column or two steps at a time it read about 600 times: at
 * a session's limits (768 rows) a stretch of a millisecond with no look at the deadline. */
static void reads_the_clock_as_it_works(void **state) {
    (void)state;
    enum { NC = 130, N = 3 * NC, R = 400 };
    double *W = malloc(sizeof(double) * N * N);
    double b[N], mu[NC], lambda[N];
    t_rng rng = t_rng_seed(5);
    dense_problem(&rng, NC, R, W, b, mu);
    void *scratch = aligned_alloc(64, (cs_ncp_delassus_size(NC) + 63) & ~(size_t)63);
    const cs_options far = {.deadline_ns = INT64_MAX / 2, .clock_ns = t_clock_counting};
    const cs_ncp_params one = {.max_iterations = 1};
    cs_ncp_info info;
    t_clock_reads = 0;
    const cs_status st = cs_ncp_delassus(NC, W, N, b, mu, NULL, &one, &far, scratch, lambda, &info);
    printf("# one iteration at order %d: %s, %ld clock reads\n", N, cs_status_name(st),
           t_clock_reads);
    assert_int_equal(info.iterations, 1);
    assert_true(t_clock_reads * 2 * CS__METER_UNITS >= (long)N * N * N / 2);
    for (int i = 0; i < N; i++)
        assert_true(isfinite(lambda[i]));
    free(scratch);
    free(W);
}

/* Units far from 1 (LMGC's PerioBox: W ~ 1e-5, impulses ~ 1e4). The Delassus form of 4-box
 * stacks (16 redundant coplanar contacts, seeds 1..10) with W c and b, c = 1e-5 (bodies 1e5
 * times heavier) and 1e5: every answer converged is certified by the residual in the caller's
 * units (info.residual, checked against u = W c lambda + b here), and at most
 * UNITS_FAILURES_MAX of the 20 solves fail. Measured: 1 (13 before the solver scaled W: at
 * c = 1e-5 Newton's matrix was singular to its LU, at 1e5 the Levenberg-Marquardt steps
 * crawled). */
#define UNITS_FAILURES_MAX 2
static void units_far_from_one(void **state) {
    (void)state;
    const double cs[2] = {1e-5, 1e5};
    int failures = 0;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        t_gen_scene g;
        t_gen_stack(&g, 4, 0, seed % 2 ? 0.5 : 0.2, 8, seed);
        enum { NC = 16, N = 3 * NC };
        assert_int_equal(g.s.nc, NC);
        cs_workspace *ws = new_ws(&g.s);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &g.s), CS_CONVERGED);
        double W[N * N], Wc[N * N], b[N], lambda[N];
        assert_int_equal(cs_model_delassus(&m, ws, 3, W, N, NULL), CS_CONVERGED);
        cs_model_jv(&m, m.vstar, b);
        for (int i = 0; i < NC; i++)
            b[3 * i] -= m.bias[i];
        void *scratch = aligned_alloc(64, (cs_ncp_delassus_size(NC) + 63) & ~(size_t)63);
        for (int v = 0; v < 2; v++) {
            for (int i = 0; i < N * N; i++)
                Wc[i] = cs[v] * W[i];
            cs_ncp_info info;
            const cs_status st =
                cs_ncp_delassus(NC, Wc, N, b, m.mu, NULL, NULL, NULL, scratch, lambda, &info);
            if (st != CS_CONVERGED) {
                printf("# units: seed %llu, W x %g: %s, %d iterations, residual %.2g\n",
                       (unsigned long long)seed, cs[v], cs_status_name(st), info.iterations,
                       info.residual);
                failures++;
                continue;
            }
            // Eq. 15 in the caller's units: r = u - v with v = f + x, so for a converged answer
            // the contact law holds for u = W c lambda + b to the residual's order.
            double scale = 0, u[N];
            for (int i = 0; i < N; i++) {
                u[i] = b[i];
                for (int j = 0; j < N; j++)
                    u[i] += Wc[(size_t)j * N + i] * lambda[j];
                scale = fmax(scale, fabs(b[i]));
            }
            for (int k = 0; k < NC; k++) {
                const double *l = lambda + 3 * k;
                assert_true(l[0] >= 0);
                assert_true(hypot(l[1], l[2]) <= m.mu[k] * l[0] * (1 + 1e-12) + 1e-300);
                assert_true(u[3 * k] >= -1e-8 * scale);
            }
        }
        free(scratch);
        cs_workspace_free(ws);
    }
    printf("# units: %d of 20 not converged\n", failures);
    assert_true(failures <= UNITS_FAILURES_MAX);
}

/* A second solve of the same scene allocates nothing and gives bitwise-identical impulses. */
static void deterministic_and_allocation_free(void **state) {
    (void)state;
    t_gen_scene g;
    t_gen_stack(&g, 5, 5, 0.5, 8, 11);
    cs_workspace *ws = new_ws(&g.s);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &g.s), CS_CONVERGED);
    double l1[3 * T_GEN_MAX_CONTACTS], l2[3 * T_GEN_MAX_CONTACTS];
    cs_stats st;
    assert_int_equal(cs_ncp_solve(ws, &m, NULL, NULL, NULL, l1, &st, NULL), CS_CONVERGED);
    t_alloc_count_start();
    assert_int_equal(cs_ncp_solve(ws, &m, NULL, NULL, NULL, l2, &st, NULL), CS_CONVERGED);
    const long allocs = t_alloc_count_stop();
    assert_true(allocs == 0 || allocs == -1);
    assert_memory_equal(l1, l2, 3 * (size_t)g.s.nc * sizeof(double));
    cs_workspace_free(ws);
}

int main(void) {
#define FCLIB(file) \
    {.name = file, .test_func = fclib_local_converges, .initial_state = (void *)file}
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(particle_incline_thresholds),
        cmocka_unit_test(particle_separates),
        cmocka_unit_test(non_finite_input),
        cmocka_unit_test(sweeps_on_anisotropic_blocks),
        cmocka_unit_test(nan_residual_is_not_converged),
        cmocka_unit_test(box_at_rest),
        cmocka_unit_test(box_on_incline),
        cmocka_unit_test(spinning_puck),
        cmocka_unit_test(stacks_converge_cold),
        cmocka_unit_test(random_scenes_converge),
        cmocka_unit_test(stack16_iterations),
        cmocka_unit_test(redundant_random_scenes),
        cmocka_unit_test(status_describes_the_iterate),
        cmocka_unit_test(agrees_with_sap),
        cmocka_unit_test(warm_start_from_answer),
        cmocka_unit_test(deadline),
        cmocka_unit_test(restarts_from_pivots),
        cmocka_unit_test(a_deadline_answer_has_its_own_residual),
        cmocka_unit_test(large_kernels_agree),
        cmocka_unit_test(reads_the_clock_as_it_works),
        cmocka_unit_test(units_far_from_one),
        cmocka_unit_test(deterministic_and_allocation_free),
        // Last: left out when the shared data is absent (a user's own clone).
        FCLIB("fclib/Rover/Rover1039.hdf5"),
        FCLIB("fclib/Rover/Rover4609.hdf5"),
        FCLIB("fclib/OneObject/OneObject-i100000-316.hdf5"),
        FCLIB("fclib/BoxesStack/BoxesStack1-i100000-32.hdf5"),
        FCLIB("fclib/100_PR_PerioBox/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5"),
    };
    size_t n = sizeof tests / sizeof tests[0];
    if (!t_shared_present("fclib")) {
        printf("# %s is absent: its 5 FCLIB cases are left out\n", t_shared_path("fclib"));
        n -= 5;
    }
    return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
