/* SPDX-License-Identifier: MIT */
/* Joints of every kind through cs_step (joints.c, Baraff 1996 sections 7-8), each solver that
 * takes joints checked against the physics:
 *   chain at rest          each joint carries the weight of everything below it (hinge, ball)
 *   kinematics             a hinge turns about its axis only, a slider moves along it only, a
 *                          fixed joint allows no relative motion, whatever the applied load
 *   four-bar linkage       a closed loop integrated for 10 000 steps with the warm start stays
 *                          closed (the drift term keeps the anchors together)
 *   arm on a table         a 7-link arm of hinges pressing its last link on a table: contact,
 *                          joint and gravity forces give the bodies' momentum change
 *   fallback               a failed solve carries the contact impulses, and the joints still
 *                          hold under them
 * Without contacts every solver has nothing to solve and the answer is the articulated solve's,
 * so the tolerances there are rounding-level for ncp too; with contacts each solver's answer
 * passes its own certificate inside cs_step, and the balances below hold to rounding whatever
 * the solver's tolerance, because the velocities are computed from its impulses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "solver/articulated.h"
#include "solver/certify.h"
#include "solver/joints.h"
#include "solver/linalg.h"
#include "solver/model.h"
#include "solver/sap.h"
#include "solver/solvers.h"
#include "solver/solvers.h"
#include "solver/workspace.h"
#include "testlib.h"

#define G 9.81
#define DT 1e-3

/* Every solver takes joints: the rigid ones through the reduction, sap as rows of its own
 * problem (sap.h). */
static const cs_solver joint_solvers[] = {CS_SOLVER_DANTZIG, CS_SOLVER_LEMKE,
                                          CS_SOLVER_LEMKE_STANDARD, CS_SOLVER_LEMKE_STRUCTURAL,
                                          CS_SOLVER_NCP, CS_SOLVER_SAP};
#define N_SOLVERS (int)(sizeof joint_solvers / sizeof joint_solvers[0])

/* SAP holds each joint row to its near-rigid compliance (sap.h): R = beta_joint^2 w / (4 pi^2)
 * = 2.5e-6 w (default beta_joint 0.01), w the row's own M^-1 norm. Its joint impulses then
 * solve (W + R) l = W l_rigid (W = J_j M^-1 J_j^T) rather than W l = ..., off by
 * |(W + R)^-1 R| <= 2.5e-6 max w / min eig(W) relative; on these scenes of up to 4 links W's
 * spread stays below 100 (the hanging chains' errors, 5e-5 .. 6.2e-5, say about 25), so
 * 2.5e-4 of the load; and the joints give way at R l, the same fraction of the velocity the
 * load makes in one step. The rigid solvers' tolerances are rounding. */
#define SAP_REL 2.5e-4
static double rel_tol(cs_solver sv, double rigid) {
    return sv == CS_SOLVER_SAP ? SAP_REL : rigid;
}

/* A session for s's sizes and solver sv, with a warm start when warm is true. */
typedef struct session {
    cs_workspace *ws;
    cs_warmstart *warm;
    void *mem;
    cs_result r;
} session;

static void session_open(session *x, const cs_scene *s, cs_solver sv, bool warm) {
    const cs_limits lim = {.max_bodies = s->nb, .max_contacts = s->nc, .max_joints = s->nj,
                           .max_dirs = 8, .solvers = 1u << sv};
    x->ws = cs_workspace_new(&lim);
    assert_non_null(x->ws);
    x->warm = warm ? cs_warmstart_new(&lim) : NULL;
    x->mem = malloc(cs_result_size(&lim));
    assert_non_null(x->mem);
    cs_result_init(&x->r, x->mem, &lim);
}

static void session_close(session *x) {
    cs_workspace_free(x->ws);
    cs_warmstart_free(x->warm);
    free(x->mem);
}

/* One certified step of s with sv. */
static const cs_result *step(session *x, const cs_scene *s, cs_solver sv) {
    const cs_options opt = {.solver = sv};
    char err[256];
    const cs_limits lim = {.max_bodies = s->nb, .max_contacts = s->nc, .max_joints = s->nj,
                           .max_dirs = 8};
    if (cs_scene_validate(s, &lim, err, sizeof err) != 0)
        fail_msg("invalid scene: %s", err);
    cs_step(x->ws, s, &opt, x->warm, &x->r);
    if (x->r.status != CS_CONVERGED || x->r.answer != CS_ANSWER_SOLVER)
        fail_msg("%s: status %s, primary %s, joint residual %g, momentum %g",
                 cs_solver_name(sv), cs_status_name(x->r.status), cs_status_name(x->r.primary),
                 x->r.cert.joint, x->r.cert.momentum);
    return &x->r;
}

/* A box-like body: mass m, a generic inertia (not diagonal, so axes couple). */
static cs_body body(uint32_t id, double m, const double pos[3]) {
    cs_body b = {.id = id, .mass = m, .quat = {1, 0, 0, 0},
                 .inertia = {0.02 * m, 0.001 * m, 0, 0.001 * m, 0.03 * m, 0.002 * m, 0,
                             0.002 * m, 0.025 * m}};
    memcpy(b.pos, pos, sizeof b.pos);
    return b;
}

/* Chain of N links hanging straight down from the world at the origin: link i's COM 0.2 m below
 * its top joint, joints 0.4 m apart; joint i joins link i (body_a) to link i - 1 (the world for
 * i = 0). Masses 1, 1.5, 2, ... kg. */
#define CHAIN 4
static void hanging_chain(cs_joint_kind kind, cs_body *B, cs_joint *J, cs_scene *s) {
    for (int i = 0; i < CHAIN; i++) {
        B[i] = body((uint32_t)(i + 1), 1 + 0.5 * i, (double[3]){0, 0, -0.2 - 0.4 * i});
        J[i] = (cs_joint){.id = (uint32_t)(10 + i), .body_a = (uint32_t)(i + 1),
                          .body_b = (uint32_t)i, .kind = kind, .anchor = {0, 0, -0.4 * i},
                          .axis = {0.6, 0.8, 0}};
    }
    *s = (cs_scene){.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = CHAIN,
                    .nj = CHAIN, .bodies = B, .joints = J};
}

/* A body welded to the world twice (a loop whose rows nothing can move: A_LL = 0): the redundant
 * weld takes no impulse, the other holds the weight, nothing moves. (A rank-0 loop once made the
 * minimum-effort solve read an unset permutation; found by tests/fuzz/fuzz_step.) */
static void redundant_weld_holds(void **state) {
    (void)state;
    cs_body B = body(1, 2, (double[3]){0, 0, -0.3});
    cs_joint J[2] = {{.id = 1, .body_a = 1, .kind = CS_JOINT_FIXED, .anchor = {0, 0, 0}},
                     {.id = 2, .body_a = 1, .kind = CS_JOINT_FIXED, .anchor = {0.1, 0, 0}}};
    const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 1, .nj = 2,
                        .bodies = &B, .joints = J};
    for (int k = 0; k < N_SOLVERS; k++) {
        session x;
        session_open(&x, &s, joint_solvers[k], false);
        const cs_result *r = step(&x, &s, joint_solvers[k]);
        assert_near(r->joint_force[2] + r->joint_force[5], B.mass * G,
                    rel_tol(joint_solvers[k], 1e-9) * B.mass * G);
        for (int c = 0; c < 6; c++)
            assert_near(r->v[c], 0, rel_tol(joint_solvers[k], 1e-12 / (G * DT)) * G * DT);
        session_close(&x);
    }
}

/* Each joint holds the weight of the links at and below it, straight up on its body_a, with no
 * torque (the load hangs under the anchor), and nothing moves. */
static void chain_carries_the_weight_below(void **state) {
    (void)state;
    const cs_joint_kind kinds[] = {CS_JOINT_HINGE, CS_JOINT_BALL, CS_JOINT_FIXED};
    for (int kk = 0; kk < 3; kk++) {
        cs_body B[CHAIN];
        cs_joint J[CHAIN];
        cs_scene s;
        hanging_chain(kinds[kk], B, J, &s);
        for (int k = 0; k < N_SOLVERS; k++) {
            session x;
            session_open(&x, &s, joint_solvers[k], false);
            const cs_result *r = step(&x, &s, joint_solvers[k]);
            for (int j = 0; j < CHAIN; j++) {
                double below = 0;
                for (int i = j; i < CHAIN; i++)
                    below += B[i].mass * G;
                const double ft = rel_tol(joint_solvers[k], 1e-9) * below;
                assert_int_equal(r->joint_id[j], J[j].id);
                if (joint_solvers[k] == CS_SOLVER_SAP)
                    print_message("# sap kind %d joint %d: force %.9g N of %.9g N (rel %.2g)\n",
                                  kinds[kk], j, r->joint_force[3 * j + 2], below,
                                  fabs(r->joint_force[3 * j + 2] / below - 1));
                assert_near(r->joint_force[3 * j + 2], below, ft);
                for (int c = 0; c < 2; c++)
                    assert_near(r->joint_force[3 * j + c], 0, ft);
                for (int c = 0; c < 3; c++)
                    assert_near(r->joint_torque[3 * j + c], 0, ft);
            }
            const double vt = rel_tol(joint_solvers[k], 1e-12 / (G * DT)) * G * DT;
            for (int k6 = 0; k6 < 6 * CHAIN; k6++)
                assert_near(r->v[k6], 0, vt);
            assert_true(r->cert.joint <= vt);
            session_close(&x);
        }
    }
}

/* v + w x (p - x): the velocity of body b's material point p. */
static void point_velocity(const double *v, const cs_body *b, const double p[3], double out[3]) {
    const double r[3] = {p[0] - b->pos[0], p[1] - b->pos[1], p[2] - b->pos[2]};
    double wxr[3];
    cs_cross3(wxr, v + 3, r);
    for (int k = 0; k < 3; k++)
        out[k] = v[k] + wxr[k];
}

/* Two bodies under random forces and torques (and spinning), joined by one joint of each kind:
 * after the step, the relative motion is what the joint allows. Body 2 is joined to the world
 * by the same kind too, so that both a world joint and a body-body joint are checked. */
static void joints_allow_only_their_motion(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(41);
    const double ax[3] = {2.0 / 7, 3.0 / 7, 6.0 / 7}; // unit
    const cs_joint_kind kinds[] = {CS_JOINT_HINGE, CS_JOINT_SLIDER, CS_JOINT_FIXED,
                                   CS_JOINT_BALL};
    for (int kk = 0; kk < 4; kk++) {
        for (int k = 0; k < N_SOLVERS; k++) {
            cs_body B[2] = {body(1, 1.3, (double[3]){0.1, -0.2, 0.3}),
                            body(2, 0.7, (double[3]){0.5, 0.1, -0.1})};
            for (int b = 0; b < 2; b++)
                for (int c = 0; c < 3; c++) {
                    B[b].f[c] = t_rng_range(&rng, -5, 5);
                    B[b].tau[c] = t_rng_range(&rng, -1, 1);
                }
            cs_joint J[2] = {
                {.id = 1, .body_a = 1, .body_b = 2, .kind = kinds[kk], .anchor = {0.3, 0, 0.1},
                 .axis = {ax[0], ax[1], ax[2]}},
                {.id = 2, .body_a = 2, .body_b = 0, .kind = kinds[kk],
                 .anchor = {0.6, 0.2, -0.3}, .axis = {ax[0], ax[1], ax[2]}}};
            const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 2,
                                .nj = 2, .bodies = B, .joints = J};
            session x;
            session_open(&x, &s, joint_solvers[k], false);
            const cs_result *r = step(&x, &s, joint_solvers[k]);
            // Velocity scale: what one step of the loads gives (fixed joints hold both still).
            double vs = G * DT;
            for (int c = 0; c < 12; c++)
                vs = fmax(vs, fabs(r->v[c]));
            const double tol = rel_tol(joint_solvers[k], 1e-12) * vs;
            for (int j = 0; j < 2; j++) {
                // Relative linear velocity at the anchor, relative angular velocity.
                const double *va = r->v + 6 * (J[j].body_a - 1);
                double pa[3], pb[3] = {0, 0, 0}, dw[3];
                point_velocity(va, &B[J[j].body_a - 1], J[j].anchor, pa);
                if (J[j].body_b)
                    point_velocity(r->v + 6 * (J[j].body_b - 1), &B[J[j].body_b - 1],
                                   J[j].anchor, pb);
                for (int c = 0; c < 3; c++)
                    dw[c] = va[3 + c] - (J[j].body_b ? r->v[6 * (J[j].body_b - 1) + 3 + c] : 0);
                const double dp[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]};
                const double wa = cs_dot3(dw, ax), pax = cs_dot3(dp, ax);
                switch (kinds[kk]) {
                case CS_JOINT_HINGE: // the anchor stays, the turn is about the axis
                    for (int c = 0; c < 3; c++) {
                        assert_near(dp[c], 0, tol);
                        assert_near(dw[c], wa * ax[c], tol);
                    }
                    assert_true(fabs(wa) > 1e-6 * vs);
                    break;
                case CS_JOINT_SLIDER: // no turn; the anchor moves along the axis
                    for (int c = 0; c < 3; c++) {
                        assert_near(dw[c], 0, tol);
                        assert_near(dp[c], pax * ax[c], tol);
                    }
                    assert_true(fabs(pax) > 1e-6 * vs);
                    break;
                case CS_JOINT_FIXED:
                    for (int c = 0; c < 3; c++) {
                        assert_near(dw[c], 0, tol);
                        assert_near(dp[c], 0, tol);
                    }
                    break;
                case CS_JOINT_BALL: // the anchor stays, any turn
                    for (int c = 0; c < 3; c++)
                        assert_near(dp[c], 0, tol);
                    assert_true(sqrt(cs_dot3(dw, dw)) > 1e-6 * vs);
                    break;
                }
            }
            session_close(&x);
        }
    }
}

/* q <- exp(w dt / 2) q (w in the world frame), renormalised. */
static void integrate_quat(double q[4], const double w[3], double dt) {
    const double n = sqrt(cs_dot3(w, w)), h = 0.5 * n * dt;
    const double s = n > 0 ? sin(h) / n : 0.5 * dt, c = cos(h);
    const double d[4] = {c, s * w[0], s * w[1], s * w[2]};
    const double r[4] = {d[0] * q[0] - d[1] * q[1] - d[2] * q[2] - d[3] * q[3],
                         d[0] * q[1] + d[1] * q[0] + d[2] * q[3] - d[3] * q[2],
                         d[0] * q[2] - d[1] * q[3] + d[2] * q[0] + d[3] * q[1],
                         d[0] * q[3] + d[1] * q[2] - d[2] * q[1] + d[3] * q[0]};
    const double rn = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    for (int k = 0; k < 4; k++)
        q[k] = r[k] / rn;
}

/* The world point of a point fixed in body b at body-frame offset l. */
static void body_point(const cs_body *b, const double l[3], double out[3]) {
    double R[9], rl[3];
    cs_quat_to_mat3(R, b->quat);
    cs_mat3_vec(rl, R, l);
    for (int k = 0; k < 3; k++)
        out[k] = b->pos[k] + rl[k];
}

/* l = R^T (p - x): p in body b's frame. */
static void to_body(const cs_body *b, const double p[3], double l[3]) {
    double R[9];
    cs_quat_to_mat3(R, b->quat);
    const double d[3] = {p[0] - b->pos[0], p[1] - b->pos[1], p[2] - b->pos[2]};
    for (int i = 0; i < 3; i++)
        l[i] = R[i] * d[0] + R[3 + i] * d[1] + R[6 + i] * d[2];
}

/* Largest distance between each joint's anchor as carried by body_a and by body_b (or the
 * world), from their anchors in the body frames at the start. */
static double anchor_mismatch(const cs_body *B, const cs_joint *J, int nj, double (*la)[3],
                              double (*lb)[3]) {
    double worst = 0;
    for (int j = 0; j < nj; j++) {
        double pa[3], pb[3];
        body_point(&B[J[j].body_a - 1], la[j], pa);
        if (J[j].body_b)
            body_point(&B[J[j].body_b - 1], lb[j], pb);
        else
            memcpy(pb, lb[j], sizeof pb);
        const double d[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]};
        worst = fmax(worst, sqrt(cs_dot3(d, d)));
    }
    return worst;
}

/* A planar four-bar linkage hanging from two pivots on the world (crank, coupler, rocker;
 * hinges about y), released from rest under gravity away from its equilibrium: its fourth hinge
 * closes a loop whose out-of-plane rows are redundant. Integrated for 10 000 steps of 1 ms
 * (symplectic Euler: the post-step velocities advance the poses, the orientation by the
 * exponential map), the client sending each frame's anchors as body_a sees them. Returns the
 * largest anchor mismatch over the run, and the fastest turn in *speed; the steps allocate
 * nothing. */
#define FOURBAR_STEPS 10000
static double run_four_bar(cs_solver sv, bool warm, double *speed) {
    const double A[3] = {0, 0, 0}, Bp[3] = {0.2, 0, -0.5}, C[3] = {0.95, 0, -0.5},
                 D[3] = {1, 0, 0};
    const double *ends[3][2] = {{A, Bp}, {Bp, C}, {C, D}};
    cs_body B[3];
    for (int i = 0; i < 3; i++) {
        const double mid[3] = {0.5 * (ends[i][0][0] + ends[i][1][0]), 0,
                               0.5 * (ends[i][0][2] + ends[i][1][2])};
        B[i] = body((uint32_t)(i + 1), 1 + 0.25 * i, mid);
    }
    // Hinges: world-crank at A, crank-coupler at B, coupler-rocker at C, rocker-world at D (the
    // loop closure).
    cs_joint J[4] = {
        {.id = 1, .body_a = 1, .body_b = 0, .kind = CS_JOINT_HINGE, .axis = {0, 1, 0}},
        {.id = 2, .body_a = 2, .body_b = 1, .kind = CS_JOINT_HINGE, .axis = {0, 1, 0}},
        {.id = 3, .body_a = 3, .body_b = 2, .kind = CS_JOINT_HINGE, .axis = {0, 1, 0}},
        {.id = 4, .body_a = 3, .body_b = 0, .kind = CS_JOINT_HINGE, .axis = {0, 1, 0}}};
    const double *anchor[4] = {A, Bp, C, D};
    double la[4][3], lb[4][3];
    for (int j = 0; j < 4; j++) {
        memcpy(J[j].anchor, anchor[j], sizeof J[j].anchor);
        to_body(&B[J[j].body_a - 1], anchor[j], la[j]);
        if (J[j].body_b)
            to_body(&B[J[j].body_b - 1], anchor[j], lb[j]);
        else
            memcpy(lb[j], anchor[j], sizeof lb[j]);
    }
    cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 3, .nj = 4,
                  .bodies = B, .joints = J};
    session x;
    session_open(&x, &s, sv, warm);
    double worst = 0;
    *speed = 0;
    t_alloc_count_start();
    for (int t = 0; t < FOURBAR_STEPS; t++) {
        s.seq = (uint64_t)t;
        for (int j = 0; j < 4; j++)
            body_point(&B[J[j].body_a - 1], la[j], J[j].anchor);
        const cs_result *r = step(&x, &s, sv);
        for (int b = 0; b < 3; b++) {
            const double *v = r->v + 6 * b;
            memcpy(B[b].v, v, sizeof B[b].v);
            memcpy(B[b].w, v + 3, sizeof B[b].w);
            for (int k = 0; k < 3; k++)
                B[b].pos[k] += DT * v[k];
            integrate_quat(B[b].quat, v + 3, DT);
            *speed = fmax(*speed, sqrt(cs_dot3(v + 3, v + 3)));
        }
        worst = fmax(worst, anchor_mismatch(B, J, 4, la, lb));
    }
    const long allocations = t_alloc_count_stop();
    if (allocations >= 0)
        assert_int_equal(allocations, 0);
    session_close(&x);
    return worst;
}

/* With the warm start each joint keeps its frames from the first frame, so the rows correct
 * the drift and the anchors stay within 1e-6 m of each other; without it (every frame captured
 * anew, no correction) the integration error piles up, ten times that at least. dantzig holds
 * the rows exactly; sap to its compliance, which gives way by dt R |lambda| per step
 * (R = 2.5e-6 w, sap.h: ~1e-10 m at these loads), and the drift term pulls that back as it
 * does the integration error, so the same bound holds. */
#define FOURBAR_DRIFT_MAX 1e-6
static void four_bar_stays_closed(void **state) {
    (void)state;
    const cs_solver solvers[] = {CS_SOLVER_DANTZIG, CS_SOLVER_SAP};
    for (int k = 0; k < 2; k++) {
        double speed, speed_free;
        const double held = run_four_bar(solvers[k], true, &speed);
        const double free_drift = run_four_bar(solvers[k], false, &speed_free);
        print_message("# %-7s four-bar, %d steps: largest anchor mismatch %.3g m with the drift "
                      "term, %.3g m without; fastest turn %.3g rad/s\n",
                      cs_solver_name(solvers[k]), FOURBAR_STEPS, held, free_drift, speed);
        assert_true(speed > 0.1); // the linkage did swing
        assert_true(held < FOURBAR_DRIFT_MAX);
        assert_true(free_drift > 10 * held);
    }
}

/* The warm start keeps a joint's frames from its first frame: a hinged body found 1 mm off its
 * captured anchor in a later frame (whatever anchor the frame says) is driven back, its anchor
 * point moving at -beta e / dt; a joint whose kind changes is captured anew, with no error. */
static void frames_are_kept_by_joint_id(void **state) {
    (void)state;
    const double e = 1e-3;
    cs_body B = body(1, 1, (double[3]){0, 0, -0.3});
    cs_joint J = {.id = 5, .body_a = 1, .kind = CS_JOINT_HINGE, .axis = {0, 1, 0}};
    const cs_scene s = {.dt = DT, .friction_dirs = 8, .nb = 1, .nj = 1, .bodies = &B,
                        .joints = &J};
    session x;
    session_open(&x, &s, CS_SOLVER_DANTZIG, true);
    step(&x, &s, CS_SOLVER_DANTZIG);
    B.pos[0] += e;
    J.anchor[0] += e;
    const cs_result *r = step(&x, &s, CS_SOLVER_DANTZIG);
    double pv[3];
    point_velocity(r->v, &B, J.anchor, pv);
    assert_near(pv[0], -CS_JOINTS_BETA * e / DT, 1e-12);
    assert_near(pv[1], 0, 1e-12);
    assert_near(pv[2], 0, 1e-12);
    J.kind = CS_JOINT_BALL;
    r = step(&x, &s, CS_SOLVER_DANTZIG);
    point_velocity(r->v, &B, J.anchor, pv);
    for (int c = 0; c < 3; c++)
        assert_near(pv[c], 0, 1e-12);
    session_close(&x);
}

/* A 7-link arm of hinges (axes alternating y and x) from a pivot 1 m above a table, zig-zagging
 * down so that its last link's end rests on the table (four contacts around it, mu = 0.5), let
 * go from rest under gravity. Over the step the bodies' momentum changes by the external
 * impulses only: the table's contact forces, the force of the world's hinge on the first link
 * and gravity (the joints between links are internal and cancel), so
 *     sum_i m_i (v_i - 0) / dt = F_contacts + F_joint0 + M g,
 * to 1e-6 of the weight; the foot presses on the table (positive normal force). The same
 * frictionless (mu = 0: dantzig's plain LCP of the normal rows). */
#define LINKS 7
static void arm_on_table_balances_forces(void **state) {
    (void)state;
    const cs_solver solvers[] = {CS_SOLVER_DANTZIG, CS_SOLVER_LEMKE, CS_SOLVER_NCP,
                                 CS_SOLVER_LEMKE_STANDARD, CS_SOLVER_LEMKE_STRUCTURAL,
                                 CS_SOLVER_SAP};
    double p[LINKS + 1][3];
    for (int i = 0; i <= LINKS; i++) {
        p[i][0] = i % 2 ? 0.12 : 0.0;
        p[i][1] = 0.02 * i;
        p[i][2] = 1.0 - (double)i / LINKS;
    }
    cs_body B[LINKS];
    cs_joint J[LINKS];
    double mtot = 0;
    for (int i = 0; i < LINKS; i++) {
        const double mid[3] = {0.5 * (p[i][0] + p[i + 1][0]), 0.5 * (p[i][1] + p[i + 1][1]),
                               0.5 * (p[i][2] + p[i + 1][2])};
        B[i] = body((uint32_t)(i + 1), 1 + 0.1 * i, mid);
        mtot += B[i].mass;
        J[i] = (cs_joint){.id = (uint32_t)(20 + i), .body_a = (uint32_t)(i + 1),
                          .body_b = (uint32_t)i, .kind = CS_JOINT_HINGE,
                          .axis = {i % 2 ? 1 : 0, i % 2 ? 0 : 1, 0}};
        memcpy(J[i].anchor, p[i], sizeof J[i].anchor);
    }
    cs_contact C[4];
    for (int c = 0; c < 4; c++)
        C[c] = (cs_contact){.id = (uint64_t)(c + 1), .body_a = LINKS, .normal = {0, 0, 1},
                            .point = {p[LINKS][0] + (c & 1 ? 0.02 : -0.02),
                                      p[LINKS][1] + (c & 2 ? 0.02 : -0.02), 0},
                            .mu = 0.5};
    const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = LINKS,
                        .nc = 4, .nj = LINKS, .bodies = B, .contacts = C, .joints = J};
    for (int run = 0; run < 2 * (int)(sizeof solvers / sizeof solvers[0]); run++) {
        const int k = run / 2;
        for (int c = 0; c < 4; c++)
            C[c].mu = run % 2 ? 0 : 0.5;
        session x;
        session_open(&x, &s, solvers[k], false);
        const cs_result *r = step(&x, &s, solvers[k]);
        double dp[3] = {0, 0, 0}, ext[3] = {0, 0, -mtot * G}, press = 0;
        for (int i = 0; i < LINKS; i++)
            for (int c = 0; c < 3; c++)
                dp[c] += B[i].mass * r->v[6 * i + c] / DT;
        for (int i = 0; i < 4; i++) {
            for (int c = 0; c < 3; c++)
                ext[c] += r->force[3 * i + c];
            press += r->force[3 * i + 2];
        }
        for (int c = 0; c < 3; c++)
            ext[c] += r->joint_force[c];
        print_message("# %-16s mu %.1f: foot %.6g N, world hinge (%.6g %.6g %.6g) N, weight "
                      "%.6g N\n", cs_solver_name(solvers[k]), C[0].mu, press, r->joint_force[0],
                      r->joint_force[1], r->joint_force[2], mtot * G);
        assert_true(press > 0.01 * mtot * G);
        for (int c = 0; c < 3; c++)
            assert_near(dp[c], ext[c], 1e-6 * mtot * G);
        print_message("# %-16s joint residual %.3g m/s\n", cs_solver_name(solvers[k]),
                      r->cert.joint);
        assert_true(r->cert.joint <= rel_tol(solvers[k], 1e-9 / (G * DT)) * G * DT);
        session_close(&x);
    }
}

/* A session's workspace holds a scene at its limits with every joint solver: a chain of six
 * links on ball joints closed twice (a hinge from the last link to the world, a fixed joint
 * between links 4 and 1: 11 loop rows), four contacts of link 3 on a table. Each step certifies
 * (an overflow would be CS_ENOSPACE) and its high-water mark stays within the workspace. */
static void workspace_holds_a_scene_at_its_limits(void **state) {
    (void)state;
    cs_body B[6];
    cs_joint J[8];
    for (int i = 0; i < 6; i++) {
        B[i] = body((uint32_t)(i + 1), 1, (double[3]){0.2 * i + 0.1, 0.05 * i, 0.5});
        J[i] = (cs_joint){.id = (uint32_t)(i + 1), .body_a = (uint32_t)(i + 1),
                          .body_b = (uint32_t)i, .kind = CS_JOINT_BALL,
                          .anchor = {0.2 * i, 0.05 * i, 0.5}};
    }
    J[6] = (cs_joint){.id = 7, .body_a = 6, .kind = CS_JOINT_HINGE, .anchor = {1.2, 0.3, 0.5},
                      .axis = {0, 0, 1}};
    J[7] = (cs_joint){.id = 8, .body_a = 4, .body_b = 1, .kind = CS_JOINT_FIXED,
                      .anchor = {0.4, 0.1, 0.5}};
    cs_contact C[4];
    for (int c = 0; c < 4; c++)
        C[c] = (cs_contact){.id = (uint64_t)(c + 1), .body_a = 3, .normal = {0, 0, 1},
                            .point = {0.5 + (c & 1 ? 0.03 : -0.03), 0.1 + (c & 2 ? 0.03 : -0.03),
                                      0.45},
                            .mu = 0.3};
    const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 6, .nc = 4,
                        .nj = 8, .bodies = B, .contacts = C, .joints = J};
    for (int k = 0; k < N_SOLVERS; k++) {
        session x;
        session_open(&x, &s, joint_solvers[k], true);
        const cs_result *r = step(&x, &s, joint_solvers[k]);
        print_message("# %-16s peak %zu of %zu bytes\n", cs_solver_name(joint_solvers[k]),
                      r->stats.peak_bytes, cs_workspace_capacity(x.ws));
        assert_true(r->stats.peak_bytes <= cs_workspace_capacity(x.ws));
        print_message("# %-16s joint residual %.3g m/s\n", cs_solver_name(joint_solvers[k]),
                      r->cert.joint);
        assert_true(r->cert.joint <= rel_tol(joint_solvers[k], 1e-9 / (G * DT)) * G * DT);
        session_close(&x);
    }
}

/* The reduction against the definition, on random poses: three bodies on a ball joint to the
 * world, a hinge and a slider, closed by a second ball joint to the world (a spatial loop, no
 * redundant row), two contacts. With the joints' rows J_j (every joint, loop included) and the
 * KKT matrix K = [M -J_j^T; -J_j 0], the model's reduced Delassus matrix must be J_c Mhat^-1
 * J_c^T (Mhat^-1: the velocity block of K^-1), its vstar the velocity K gives for the free
 * motion, and cs_model_velocity / the joint impulses what K gives under random contact
 * impulses, to 1e-10 of their scale. */
#define KB 3
#define KJ 4
#define KC 2
#define NV (6 * KB)
#define RMAX (3 + 5 + 5 + 3) /* ball, hinge, slider, ball */
#define NK (NV + RMAX)

/* The KKT system of the scene below: mass matrix Mv [NV x NV], joint rows Jj and targets bj. */
typedef struct kkt {
    double Mv[NV * NV], Jj[RMAX][NV], bj[RMAX];
} kkt;

/* x [NK] = K^-1 [M v0 + g; -b] (with_free) or K^-1 [g; 0]: velocity, then joint impulses. */
static void kkt_solve(const kkt *k, const double *v0, bool with_free, const double *g,
                      double *x) {
    static double K[NK * NK];
    memset(K, 0, sizeof K);
    for (int r = 0; r < NV; r++) {
        double mv = 0;
        for (int c = 0; c < NV; c++) {
            K[r * NK + c] = k->Mv[r * NV + c];
            mv += with_free ? k->Mv[r * NV + c] * v0[c] : 0;
        }
        for (int q = 0; q < RMAX; q++)
            K[r * NK + NV + q] = K[(NV + q) * NK + r] = -k->Jj[q][r];
        x[r] = mv + g[r];
    }
    for (int q = 0; q < RMAX; q++)
        x[NV + q] = with_free ? -k->bj[q] : 0;
    assert_true(t_dense_solve(NK, K, x, 1e-13)); // K is symmetric: either layout
}
static void reduction_matches_dense_kkt(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(77);
    const cs_limits lim = {.max_bodies = KB, .max_contacts = KC, .max_joints = KJ, .max_dirs = 8};
    cs_workspace *ws = cs_workspace_new(&lim);
    assert_non_null(ws);
    for (int trial = 0; trial < 20; trial++) {
        cs_body B[KB];
        for (int b = 0; b < KB; b++) {
            double q[4], qn = 0;
            for (int k = 0; k < 4; k++) {
                q[k] = t_rng_range(&rng, -1, 1);
                qn += q[k] * q[k];
            }
            B[b] = body((uint32_t)(b + 1), t_rng_range(&rng, 0.5, 2),
                        (double[3]){0.4 * b, t_rng_range(&rng, -0.2, 0.2), -0.3 * b});
            for (int k = 0; k < 4; k++)
                B[b].quat[k] = q[k] / sqrt(qn);
            for (int k = 0; k < 3; k++) {
                B[b].v[k] = t_rng_range(&rng, -1, 1);
                B[b].w[k] = t_rng_range(&rng, -1, 1);
                B[b].f[k] = t_rng_range(&rng, -3, 3);
            }
        }
        double ax[3] = {t_rng_range(&rng, -1, 1), t_rng_range(&rng, -1, 1), 1}, an;
        an = sqrt(cs_dot3(ax, ax));
        cs_joint J[KJ] = {
            {.id = 1, .body_a = 1, .kind = CS_JOINT_BALL, .anchor = {-0.2, 0, 0.1}},
            {.id = 2, .body_a = 2, .body_b = 1, .kind = CS_JOINT_HINGE, .anchor = {0.2, 0.1, -0.1},
             .axis = {0, 1, 0}},
            {.id = 3, .body_a = 3, .body_b = 2, .kind = CS_JOINT_SLIDER,
             .anchor = {0.6, 0, -0.5}, .axis = {ax[0] / an, ax[1] / an, ax[2] / an}},
            {.id = 4, .body_a = 3, .kind = CS_JOINT_BALL, .anchor = {1.0, -0.1, -0.7}}};
        cs_contact C[KC] = {
            {.id = 1, .body_a = 3, .point = {0.8, 0, -0.8}, .normal = {0, 0, 1}, .mu = 0.5},
            {.id = 2, .body_a = 1, .body_b = 2, .point = {0.2, 0, -0.2}, .normal = {0.6, 0, 0.8},
             .mu = 0.5}};
        const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = KB,
                            .nc = KC, .nj = KJ, .bodies = B, .contacts = C, .joints = J};
        const size_t mark = cs__ws_mark(ws);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
        double vstar0[6 * KB];
        memcpy(vstar0, m.vstar, sizeof vstar0);
        assert_int_equal(cs__joints_build(&m, ws, &s, NULL, NULL), CS_CONVERGED);
        const cs_articulated *a = m.jt->art;
        assert_int_equal(m.jt->nl, 3); // the second ball joint closes the loop
        // Dense J_j (every joint's rows) and the KKT matrix.
        const int R = a->rows;
        assert_int_equal(R, RMAX);
        static kkt kk;
        memset(&kk, 0, sizeof kk);
        for (int j = 0; j < KJ; j++) {
            cs_art_row rows[6];
            cs_articulated_joint_rows(a, j, rows);
            for (int r = 0; r < a->row_off[j + 1] - a->row_off[j]; r++) {
                const int q = a->row_off[j] + r;
                for (int i = 0; i < 6; i++) {
                    if (rows[r].ia >= 0)
                        kk.Jj[q][6 * rows[r].ia + i] += rows[r].ja[i];
                    if (rows[r].ib >= 0)
                        kk.Jj[q][6 * rows[r].ib + i] += rows[r].jb[i];
                }
                kk.bj[q] = rows[r].b;
            }
        }
        for (int b = 0; b < KB; b++)
            for (int i = 0; i < 3; i++) {
                kk.Mv[(6 * b + i) * NV + 6 * b + i] = m.mass[b];
                for (int k = 0; k < 3; k++)
                    kk.Mv[(6 * b + 3 + i) * NV + 6 * b + 3 + k] = m.iw[9 * b + 3 * i + k];
            }
        const double zero[NV] = {0};
        double x[NK];
        kkt_solve(&kk, vstar0, true, zero, x);
        double vs = 0;
        for (int k = 0; k < NV; k++)
            vs = fmax(vs, fabs(x[k]));
        for (int k = 0; k < NV; k++)
            assert_near(m.vstar[k], x[k], 1e-10 * vs);
        // W_c column by column.
        double W[3 * KC * 3 * KC];
        assert_int_equal(cs_model_delassus(&m, ws, 3, W, 3 * KC, NULL), CS_CONVERGED);
        double wmax = 0;
        for (int k = 0; k < 9 * KC * KC; k++)
            wmax = fmax(wmax, fabs(W[k]));
        for (int c = 0; c < 3 * KC; c++) {
            double e[3 * KC] = {0}, g[NV], u[3 * KC];
            e[c] = 1;
            cs_model_jt(&m, e, g);
            kkt_solve(&kk, vstar0, false, g, x);
            cs_model_jv(&m, x, u);
            for (int r = 0; r < 3 * KC; r++)
                assert_near(W[c * 3 * KC + r], u[r], 1e-10 * wmax);
        }
        // Velocity and joint impulses under random contact impulses.
        double lam[3 * KC], g[NV], v[NV], lj[RMAX];
        for (int k = 0; k < 3 * KC; k++)
            lam[k] = t_rng_range(&rng, -0.01, 0.01);
        cs_model_jt(&m, lam, g);
        kkt_solve(&kk, vstar0, true, g, x);
        cs__joints_velocity(m.jt, lam, v, lj);
        double ls = 0;
        for (int q = 0; q < R; q++)
            ls = fmax(ls, fabs(x[NV + q]));
        for (int k = 0; k < NV; k++)
            assert_near(v[k], x[k], 1e-10 * vs);
        for (int q = 0; q < R; q++)
            assert_near(lj[q], x[NV + q], 1e-10 * ls);
        cs__ws_release(ws, mark);
    }
    cs_workspace_free(ws);
}

/* Validation names the joint field at fault; every solver of the build takes joints, sap
 * too, so no solver is refused for them. */
static void validation_names_the_field(void **state) {
    (void)state;
    cs_body B = body(1, 1, (double[3]){0, 0, 0});
    cs_joint J = {.id = 1, .body_a = 1, .kind = CS_JOINT_SLIDER, .axis = {0, 0, 0.5}};
    cs_scene s = {.dt = DT, .friction_dirs = 8, .nb = 1, .nj = 1, .bodies = &B, .joints = &J};
    const cs_limits lim = {.max_bodies = 1, .max_joints = 1, .max_dirs = 8};
    char err[256];
    assert_int_equal(cs_scene_validate(&s, &lim, err, sizeof err), CS_EINPUT);
    assert_string_equal(err, "joints[0].axis: not unit length (|a| = 0.5)");
    J.kind = CS_JOINT_FIXED; // its axis is not used
    assert_int_equal(cs_scene_validate(&s, &lim, err, sizeof err), 0);
    J.body_a = 0;
    J.body_b = 1;
    assert_int_equal(cs_scene_validate(&s, &lim, err, sizeof err), CS_EINPUT);
    assert_string_equal(err, "joints[0].body_a: 0 is the world; the world goes in body_b");
    J.body_a = 1;
    J.body_b = 0;
    for (int sv = CS_SOLVER_DEFAULT + 1; sv < CS_SOLVER_COUNT; sv++) {
        if (!cs_solver_is_available((cs_solver)sv))
            continue;
        assert_true(cs_solver_takes_joints((cs_solver)sv));
        s.solver = (cs_solver)sv;
        assert_int_equal(cs_scene_validate(&s, &lim, err, sizeof err), 0);
    }
    // A kinematic body is a moving world: it goes in body_b.
    s.solver = CS_SOLVER_DEFAULT;
    B = (cs_body){.id = 1, .kinematic = true, .quat = {1, 0, 0, 0}};
    assert_int_equal(cs_scene_validate(&s, &lim, err, sizeof err), CS_EINPUT);
    assert_string_equal(err, "joints[0].body_a: body 1 is kinematic; put the body the joint "
                             "moves in body_a and the kinematic one in body_b");
}

/* SAP's joint rows approach rigid joints as their regularization shrinks: the hanging hinge
 * chain pushed sideways (so that every row carries load), solved by SAP alone at beta_joint =
 * 0.1, 0.01, 0.001 (R = beta_joint^2 w / (4 pi^2)), against dantzig's rigid joint forces. The
 * error is (W + R)^-1 R l, so it falls with R, a hundredfold per step of beta_joint (at least
 * fifty allowed), down to 1e-5 of the load at 0.001; the Newton tolerance is set far below. */
static void sap_joints_converge_to_rigid(void **state) {
    (void)state;
    cs_body B[CHAIN];
    cs_joint J[CHAIN];
    cs_scene s;
    hanging_chain(CS_JOINT_HINGE, B, J, &s);
    for (int i = 0; i < CHAIN; i++) {
        B[i].f[0] = 2.0 * (i + 1);
        B[i].f[1] = -1.5 + i;
        B[i].tau[2] = 0.3;
    }
    session x;
    session_open(&x, &s, CS_SOLVER_DANTZIG, false);
    const cs_result *rigid = step(&x, &s, CS_SOLVER_DANTZIG);
    double want[6 * CHAIN], load = 0;
    for (int j = 0; j < CHAIN; j++)
        for (int c = 0; c < 3; c++) {
            want[6 * j + c] = rigid->joint_force[3 * j + c];
            want[6 * j + 3 + c] = rigid->joint_torque[3 * j + c];
            load = fmax(load, fabs(want[6 * j + c]));
        }
    session_close(&x);
    const cs_limits lim = {.max_bodies = CHAIN, .max_joints = CHAIN, .max_dirs = 8,
                           .solvers = 1u << CS_SOLVER_SAP};
    cs_workspace *ws = cs_workspace_new(&lim);
    assert_non_null(ws);
    const double betas[] = {0.1, 0.01, 0.001};
    double prev = INFINITY;
    for (int k = 0; k < 3; k++) {
        const size_t mark = cs__ws_mark(ws);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
        assert_int_equal(cs__joints_build_rows(&m, ws, &s, NULL), CS_CONVERGED);
        const cs_sap_params prm = {.beta_joint = betas[k], .rel_tol = 1e-13};
        double lj[6 * CHAIN], v[6 * CHAIN];
        uint8_t st8[1];
        bool no_iterate;
        cs_stats st;
        assert_int_equal(cs_sap_solve_joints(ws, &m, &s, NULL, &prm, NULL, NULL, lj, v, st8,
                                             &no_iterate, &st),
                         CS_CONVERGED);
        double err = 0;
        for (int j = 0; j < CHAIN; j++) {
            double f[3], t[3];
            cs_articulated_joint_wrench(m.jt->art, j, lj, f, t);
            for (int c = 0; c < 3; c++)
                err = fmax(err, fmax(fabs(f[c] - want[6 * j + c]),
                                     fabs(t[c] - want[6 * j + 3 + c])));
        }
        print_message("# sap beta_joint %.3g: largest joint force/torque error %.3g of %.3g N "
                      "(%d Newton iterations)\n", betas[k], err, load, st.iterations);
        assert_true(err < prev / 50);
        prev = err;
        cs__ws_release(ws, mark);
    }
    assert_true(prev < 1e-5 * load);
    cs_workspace_free(ws);
}

/* SAP's certificate judges its joint rows on SAP's law (certify.h): its own answer passes;
 * the free motion with no joint impulse keeps the momentum balance exactly but breaks the law
 * (the joints give way with nothing pushing back), and is refused. */
static void sap_certificate_judges_the_joint_law(void **state) {
    (void)state;
    cs_body B[CHAIN];
    cs_joint J[CHAIN];
    cs_scene s;
    hanging_chain(CS_JOINT_BALL, B, J, &s);
    const cs_limits lim = {.max_bodies = CHAIN, .max_joints = CHAIN, .max_dirs = 8,
                           .solvers = 1u << CS_SOLVER_SAP};
    cs_workspace *ws = cs_workspace_new(&lim);
    assert_non_null(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
    assert_int_equal(cs__joints_build_rows(&m, ws, &s, NULL), CS_CONVERGED);
    double lj[6 * CHAIN] = {0}, v[6 * CHAIN];
    uint8_t st8[1];
    bool no_iterate;
    cs_stats st;
    assert_int_equal(cs_sap_solve_joints(ws, &m, &s, NULL, NULL, NULL, NULL, lj, v, st8,
                                         &no_iterate, &st),
                     CS_CONVERGED);
    cs_certificate c;
    assert_int_equal(cs_certify_joints(ws, &m, NULL, lj, v, false, &c, NULL), CS_CONVERGED);
    assert_true(cs_certificate_is_ok_regularized(ws, &m, NULL, lj, v, &c, 0));
    assert_true(c.momentum <= 1e-6 * c.impulse_scale);
    memset(lj, 0, sizeof lj);
    memcpy(v, m.vstar, sizeof v);
    assert_int_equal(cs_certify_joints(ws, &m, NULL, lj, v, false, &c, NULL), CS_CONVERGED);
    assert_true(c.momentum == 0);
    assert_true(c.joint > 0.5 * G * DT); // the chain falls freely
    assert_false(cs_certificate_is_ok_regularized(ws, &m, NULL, lj, v, &c, 0));
    cs_workspace_free(ws);
}

/* Frame time far past any deadline: the step's solver gives up at once. */
static int64_t late_clock(void) {
    return INT64_MAX / 2;
}

/* The arm's first step certified with a warm start; then the same scene on a tick already past
 * its deadline: the answer carries the certified contact impulses, and the joints, solved under
 * them, still hold (no joint row violated) and give the same forces: to rounding after lemke,
 * to sap's compliance after sap (its own answer held the joints to R, the carried one is the
 * rigid joints' under its contact impulses). */
static void fallback_keeps_the_joints(void **state) {
    (void)state;
    cs_body B[2] = {body(1, 1, (double[3]){0, 0, 0.5}), body(2, 2, (double[3]){0.1, 0, 0.1})};
    cs_joint J[2] = {{.id = 1, .body_a = 1, .kind = CS_JOINT_HINGE, .anchor = {0, 0, 0.8},
                      .axis = {0, 1, 0}},
                     {.id = 2, .body_a = 2, .body_b = 1, .kind = CS_JOINT_BALL,
                      .anchor = {0.05, 0, 0.3}}};
    cs_contact C = {.id = 9, .body_a = 2, .normal = {0, 0, 1}, .point = {0.15, 0, 0}, .mu = 0.5};
    const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 2, .nc = 1,
                        .nj = 2, .bodies = B, .contacts = &C, .joints = J};
    const cs_solver solvers[] = {CS_SOLVER_LEMKE, CS_SOLVER_SAP};
    for (int k = 0; k < 2; k++) {
        const cs_solver sv = solvers[k];
        session x;
        session_open(&x, &s, sv, true);
        const cs_result *r = step(&x, &s, sv);
        double f[6], tq[6], lam[3];
        memcpy(f, r->joint_force, sizeof f);
        memcpy(tq, r->joint_torque, sizeof tq);
        memcpy(lam, r->impulse, sizeof lam);
        assert_true(lam[0] > 0);
        const cs_options late = {.solver = sv, .clock_ns = late_clock, .deadline_ns = 1};
        cs_step(x.ws, &s, &late, x.warm, &x.r);
        assert_int_equal(x.r.status, CS_DEADLINE);
        assert_int_equal(x.r.answer, CS_ANSWER_LAST_CERTIFIED);
        assert_int_equal(x.r.carried, 1);
        for (int c = 0; c < 3; c++)
            assert_near(x.r.impulse[c], lam[c], 0);
        // The load: the bodies' weight, 3 G.
        const double tol = rel_tol(sv, 1e-9 / 3) * 3 * G;
        for (int c = 0; c < 6; c++) {
            assert_near(x.r.joint_force[c], f[c], tol);
            assert_near(x.r.joint_torque[c], tq[c], tol);
        }
        assert_true(x.r.cert.joint <= 1e-12);
        session_close(&x);
    }
}

/* A pendulum of `links` 0.2 m cubes (1 + i kg) on ball joints, link 0 hung from the world 0.3 m
 * above its centre, link 1 from link 0 0.3 m below it, 0.6 m between centres, pushed by P along
 * x against a wall at link 0's side (a contact at its centre's height, normal -x, friction mu).
 * At rest no force at link 0's centre has a moment about it but the joints', so the joints carry
 * the weight straight up and the wall the push: joint 0 (on link 0) (0, 0, sum m g), joint 1 (on
 * link 1) (0, 0, m_1 g), the wall's force (-P, 0, 0), nothing moves. Frictionless this answer is
 * the only one; with friction it is the one with no friction, which no velocity asks for. */
#define PUSH 3.0
typedef struct pendulum {
    cs_body B[2];
    cs_joint J[2];
    cs_contact C;
    cs_scene s;
} pendulum;

static void pendulum_init(pendulum *p, int links, double mu) {
    for (int i = 0; i < links; i++) {
        const double m = 1 + i, I = m * 0.2 * 0.2 / 6;
        p->B[i] = (cs_body){.id = (uint32_t)(i + 1), .mass = m,
                            .inertia = {I, 0, 0, 0, I, 0, 0, 0, I},
                            .pos = {0, 0, -0.3 - 0.6 * i}, .quat = {1, 0, 0, 0}};
        p->J[i] = (cs_joint){.id = (uint32_t)(7 + i), .body_a = (uint32_t)(i + 1),
                             .body_b = (uint32_t)i, .kind = CS_JOINT_BALL,
                             .anchor = {0, 0, -0.6 * i}};
    }
    p->B[0].f[0] = PUSH;
    p->C = (cs_contact){.id = 1, .body_a = 1, .normal = {-1, 0, 0}, .point = {0.1, 0, -0.3},
                        .mu = mu};
    p->s = (cs_scene){.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = links, .nc = 1,
                      .nj = links, .bodies = p->B, .contacts = &p->C, .joints = p->J};
}

/* The pendulum against the wall (one link and two, with friction and without) through every
 * rigid solver, the contact solved with the joints. Frictionless: joint forces m g exactly (to
 * 1e-9), the wall's force the push, nothing moving. With friction the statics is indeterminate
 * (wall friction along z can trade with the joints' forces and the wall's normal without moving
 * anything: the pivoting solvers take none, ncp's minimum-norm start some): nothing moves, and
 * the wall and the top joint together hold the push and the whole weight. SAP's compliant rows
 * are held to about 1e-4 elsewhere (sap_joints_converge_to_rigid). */
static void pendulum_against_a_wall(void **state) {
    (void)state;
    for (int sv = CS_SOLVER_DEFAULT + 1; sv < CS_SOLVER_COUNT; sv++) {
        if (!cs_solver_is_available((cs_solver)sv) || cs__solver_row((cs_solver)sv)->regularized)
            continue;
        for (int run = 0; run < 4; run++) {
            const int links = 1 + run / 2;
            const bool friction = run % 2;
            pendulum p;
            pendulum_init(&p, links, friction ? 0.5 : 0);
            const double load = (links == 2 ? 3 : 1) * G, want[2] = {load, 2 * G};
            session x;
            session_open(&x, &p.s, (cs_solver)sv, false);
            const cs_result *r = step(&x, &p.s, (cs_solver)sv);
            print_message("# %-16s %d links, mu %.1f: wall (%.9g %.9g %.9g), top joint %.9g\n",
                          cs_solver_name((cs_solver)sv), links, p.C.mu, r->force[0],
                          r->force[1], r->force[2], r->joint_force[2]);
            assert_true(r->cert.joint <= 1e-12);
            for (int k = 0; k < 6 * links; k++)
                assert_near(r->v[k], 0, 1e-12);
            for (int c = 0; c < 3; c++) {
                const double held = c == 0 ? -PUSH : c == 2 ? load : 0;
                assert_near(r->force[c] + r->joint_force[c], held, 1e-9 * load);
            }
            if (friction) {
                session_close(&x);
                continue;
            }
            assert_near(r->force[0], -PUSH, 1e-9 * load);
            assert_near(r->force[1], 0, 1e-9 * load);
            assert_near(r->force[2], 0, 1e-9 * load);
            for (int k = 0; k < 3 * links; k++)
                assert_near(r->joint_force[k], k % 3 == 2 ? want[k / 3] : 0, 1e-9 * load);
            session_close(&x);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reduction_matches_dense_kkt),
        cmocka_unit_test(chain_carries_the_weight_below),
        cmocka_unit_test(redundant_weld_holds),
        cmocka_unit_test(joints_allow_only_their_motion),
        cmocka_unit_test(four_bar_stays_closed),
        cmocka_unit_test(sap_joints_converge_to_rigid),
        cmocka_unit_test(sap_certificate_judges_the_joint_law),
        cmocka_unit_test(frames_are_kept_by_joint_id),
        cmocka_unit_test(arm_on_table_balances_forces),
        cmocka_unit_test(fallback_keeps_the_joints),
        cmocka_unit_test(pendulum_against_a_wall),
        cmocka_unit_test(workspace_holds_a_scene_at_its_limits),
        cmocka_unit_test(validation_names_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
