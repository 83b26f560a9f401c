/* SPDX-License-Identifier: MIT */
/* One physics suite for every solver of the table: each analytic case runs through cs_step with
 * every solver this build has, and each answer is checked against the closed-form motion.
 *   box at rest on a plane   normal forces carry m g, the box stays at rest
 *   incline, sticking        tan(theta) < mu: the box stays, friction carries m g sin(theta)
 *   incline, sliding         tan(theta) > mu: v = g dt (sin(theta) - mu cos(theta)) down the slope
 *   spinning puck            Coulomb torque mu m g r slows the spin about the normal
 *   pendulum                 ball joints carry the weight below them (solvers that take joints)
 *   kinematic bodies         velocity prescribed by the client, infinite mass: a two-finger
 *                            squeeze, a finger catching a box, a probe pushing a box over the
 *                            floor, a box hung from a moving crane by a ball joint; at rest,
 *                            a kinematic body gives the answer the world gives
 *   welded box on the floor  joints hold it still (welded to the world or to a kinematic body,
 *                            hinge + slider, a table with a box on it): the joints carry the
 *                            weight, the immobile contacts nothing; driven into the floor, no
 *                            rigid answer exists and none is certified
 * A frictionless solver gets the frictionless answer of each case. The incline slopes along the
 * contact frame's first tangent and the puck's corners slip at multiples of 45 degrees, so the
 * friction pyramid of the pivoting solvers (d = 8) and the exact cone give the same motion. The
 * incline is gravity turned about y: the plane stays z = 0.
 *
 * The complementarity solvers must give the rigid answer to rounding. A regularized solver
 * (SAP) solves a different law, and is held to what that law promises: its near-rigid normal
 * compliance (R_n = w / 4 pi^2) leaves up to 1 / (1 + 4 pi^2) = 2.5 % of a resting load to the
 * next step, a sticking contact creeps by R_t lambda_t (sigma = 1e-3), and its convex relaxation
 * of Coulomb's law lifts a sliding contact (v_n = mu |v_t|; Anitescu's model), which pushes a
 * fast-sliding body off the ground and brakes it harder than Coulomb friction would. So on the
 * sliding cases it is checked for the direction of the effect, not its size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/contact.h"
#include "wire/scene_json.h"
#include "solver/solvers.h"
#include "testlib.h"

#define G 9.81
#define MASS 1.0
#define HALF 0.1 /* the box is a 0.2 m cube */
#define DT 1e-3
#define MU 0.5

/* The box resting on z = 0 with its four bottom corners in contact, at rest, spinning at w_z. */
typedef struct box_scene {
    cs_body body;
    cs_contact contacts[4];
    cs_scene scene;
} box_scene;

static void box_init(box_scene *b, double theta, double w_z) {
    const double I = MASS * (2 * HALF) * (2 * HALF) / 6;
    b->body = (cs_body){.id = 1, .mass = MASS, .inertia = {I, 0, 0, 0, I, 0, 0, 0, I},
                        .pos = {0, 0, HALF}, .quat = {1, 0, 0, 0}, .w = {0, 0, w_z}};
    for (int i = 0; i < 4; i++) {
        const double x = i & 1 ? HALF : -HALF, y = i & 2 ? HALF : -HALF;
        b->contacts[i] = (cs_contact){.id = (uint64_t)(i + 1), .body_a = 1, .point = {x, y, 0},
                                      .normal = {0, 0, 1}, .mu = MU};
    }
    b->scene = (cs_scene){.dt = DT, .gravity = {G * sin(theta), 0, -G * cos(theta)},
                          .friction_dirs = 8, .nb = 1, .nc = 4, .bodies = &b->body,
                          .contacts = b->contacts};
}

/* Steps s once with solver; returns the result (arrays owned by the caller's *mem). */
static cs_result step(cs_solver solver, const cs_scene *s, void **mem) {
    const cs_limits lim = {.max_bodies = s->nb, .max_contacts = s->nc, .max_joints = s->nj,
                           .max_dirs = 8, .solvers = 1u << solver};
    cs_workspace *ws = cs_workspace_new(&lim);
    assert_non_null(ws);
    *mem = malloc(cs_result_size(&lim));
    assert_non_null(*mem);
    cs_result r;
    cs_result_init(&r, *mem, &lim);
    const cs_options opt = {.solver = solver};
    cs_step(ws, s, &opt, NULL, &r);
    cs_workspace_free(ws);
    print_message("# %-16s status %s, v = (%.9g %.9g %.9g), w = (%.9g %.9g %.9g)\n",
                  cs_solver_name(solver), cs_status_name(r.status), r.v[0], r.v[1], r.v[2],
                  r.v[3], r.v[4], r.v[5]);
    assert_int_equal(r.status, CS_CONVERGED);
    assert_int_equal(r.answer, CS_ANSWER_SOLVER);
    return r;
}

static bool frictional(cs_solver s) {
    return cs__solver_row(s)->friction != CS__FRICTION_NONE;
}

static bool regularized(cs_solver s) {
    return cs__solver_row(s)->regularized;
}

/* Velocity tolerance of a body at rest: rounding, or the regularized law's creep and
 * compliance (within 2 % of the speed g dt that one step of gravity gives). */
static double vtol(cs_solver s) {
    return regularized(s) ? 0.02 * G * DT : 1e-12;
}

/* The box is at rest: no point of it moves faster than vtol(s). */
static void assert_at_rest(cs_solver s, const double v[6]) {
    for (int k = 0; k < 6; k++)
        assert_near(k < 3 ? v[k] : HALF * v[k], 0, vtol(s));
}

/* Force tolerance: rounding, or the near-rigid compliance's 2.5 % of the load. */
static double ftol(cs_solver s, double load) {
    return regularized(s) ? 0.025 * load : 1e-9 * load;
}

/* Sum of the contact forces on the box, world frame. */
static void net_force(const cs_result *r, double F[3]) {
    F[0] = F[1] = F[2] = 0;
    for (int i = 0; i < r->nc; i++)
        for (int k = 0; k < 3; k++)
            F[k] += r->force[3 * i + k];
}

/* Ends this solver's checks: frees its result storage and goes on with the next solver. */
#define continue_free(mem)                                                                        \
    {                                                                                             \
        free(mem);                                                                                \
        continue;                                                                                 \
    }

#define FOR_EACH_SOLVER(s)                                                                        \
    for (cs_solver s = CS_SOLVER_DEFAULT + 1; s < CS_SOLVER_COUNT; s = (cs_solver)(s + 1))        \
        if (cs_solver_is_available(s))

static void box_at_rest(void **state) {
    (void)state;
    box_scene b;
    box_init(&b, 0, 0);
    FOR_EACH_SOLVER(s) {
        void *mem;
        const cs_result r = step(s, &b.scene, &mem);
        double F[3];
        net_force(&r, F);
        assert_near(F[2], MASS * G, ftol(s, MASS * G));
        assert_near(F[0], 0, ftol(s, MASS * G));
        assert_near(F[1], 0, ftol(s, MASS * G));
        assert_at_rest(s, r.v);
        free(mem);
    }
}

/* The box sunk DEPTH into the plane: a rigid solver's answer opens the fraction of the
 * penetration the frame asks in this step (the box rises at fraction DEPTH / dt, not turning;
 * the contacts carry m g and that rise's impulse), and 0 holds it (at rest). SAP pushes a
 * penetration apart by its own compliance, whatever the fraction says. */
static void penetration_recovery(void **state) {
    (void)state;
    enum { DEPTH_UM = 100 };
    const double depth = DEPTH_UM * 1e-6, fractions[] = {0, 0.2, 1};
    box_scene b;
    box_init(&b, 0, 0);
    for (int i = 0; i < 4; i++)
        b.contacts[i].distance = -depth;
    FOR_EACH_SOLVER(s) {
        double sap_v[6];
        for (int k = 0; k < 3; k++) {
            b.scene.penetration_recovery = fractions[k];
            void *mem;
            const cs_result r = step(s, &b.scene, &mem);
            if (regularized(s)) {
                if (k == 0)
                    memcpy(sap_v, r.v, sizeof sap_v);
                assert_memory_equal(r.v, sap_v, sizeof sap_v);
                assert_true(r.v[2] > 0);
                continue_free(mem);
            }
            const double rise = fractions[k] * depth / DT;
            assert_near(r.v[2], rise, 1e-12 + 1e-9 * rise);
            const double v[6] = {r.v[0], r.v[1], 0, r.v[3], r.v[4], r.v[5]};
            assert_at_rest(s, v);
            double F[3];
            net_force(&r, F);
            assert_near(F[2], MASS * (G + rise / DT), ftol(s, MASS * (G + rise / DT)));
            free(mem);
        }
    }
}

static void incline_sticks(void **state) {
    (void)state;
    const double theta = atan(0.8 * MU);
    box_scene b;
    box_init(&b, theta, 0);
    FOR_EACH_SOLVER(s) {
        void *mem;
        const cs_result r = step(s, &b.scene, &mem);
        double F[3];
        net_force(&r, F);
        assert_near(F[2], MASS * G * cos(theta), ftol(s, MASS * G));
        if (frictional(s)) {
            // Friction holds the box against the slope's pull.
            assert_near(F[0], -MASS * G * sin(theta), ftol(s, MASS * G));
            assert_at_rest(s, r.v);
        } else {
            assert_near(F[0], 0, 1e-9 * MASS * G);
            assert_near(r.v[0], G * sin(theta) * DT, vtol(s));
        }
        free(mem);
    }
}

static void incline_slides(void **state) {
    (void)state;
    const double theta = atan(1.4 * MU);
    box_scene b;
    box_init(&b, theta, 0);
    FOR_EACH_SOLVER(s) {
        void *mem;
        const cs_result r = step(s, &b.scene, &mem);
        const double mu = frictional(s) ? MU : 0;
        const double want = G * DT * (sin(theta) - mu * cos(theta));
        if (regularized(s)) {
            // It slides down the slope, braked, and does not leave the plane's directions
            // sideways.
            assert_true(r.v[0] > 0 && r.v[0] < G * DT * sin(theta));
            assert_near(r.v[1], 0, 1e-12);
            continue_free(mem);
        }
        assert_near(r.v[0], want, 1e-12);
        for (int k = 1; k < 6; k++)
            assert_near(r.v[k], 0, 1e-12);
        free(mem);
    }
}

static void spinning_puck(void **state) {
    (void)state;
    const double w0 = 5;
    box_scene b;
    box_init(&b, 0, w0);
    // Each corner carries m g / 4 and slips at radius r = sqrt(2) HALF: friction torque
    // mu m g r about z, against the spin.
    const double Izz = b.body.inertia[8], r = sqrt(2.0) * HALF;
    FOR_EACH_SOLVER(s) {
        void *mem;
        const cs_result res = step(s, &b.scene, &mem);
        const double dw = frictional(s) ? -MU * MASS * G * r * DT / Izz : 0;
        if (regularized(s)) {
            // Friction brakes the spin and never reverses it; no sideways drift or tilt.
            assert_true(res.v[5] > 0 && res.v[5] < w0);
            for (int k = 0; k < 5; k++)
                if (k != 2)
                    assert_near(res.v[k], 0, 1e-12);
            continue_free(mem);
        }
        assert_near(res.v[5], w0 + dw, 1e-12);
        for (int k = 0; k < 5; k++)
            assert_near(res.v[k], 0, 1e-12);
        free(mem);
    }
}

/* A 1 kg box hanging at rest from a ball joint to the world 0.3 m above its centre, and a second
 * box hanging from the first by another: each joint carries the weight below it, exactly, and
 * nothing moves. Solvers that take no joints are not asked. */
static void pendulum_on_ball_joints(void **state) {
    (void)state;
    const double I = MASS * (2 * HALF) * (2 * HALF) / 6;
    cs_body B[2];
    for (int b = 0; b < 2; b++)
        B[b] = (cs_body){.id = (uint32_t)(b + 1), .mass = MASS * (b + 1),
                         .inertia = {I, 0, 0, 0, I, 0, 0, 0, I}, .pos = {0, 0, -0.3 - 0.6 * b},
                         .quat = {1, 0, 0, 0}};
    cs_joint J[2] = {{.id = 7, .body_a = 1, .body_b = 0, .kind = CS_JOINT_BALL},
                     {.id = 8, .body_a = 2, .body_b = 1, .kind = CS_JOINT_BALL,
                      .anchor = {0, 0, -0.6}}};
    const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 2, .nj = 2,
                        .bodies = B, .joints = J};
    int ran = 0;
    FOR_EACH_SOLVER(sv) {
        if (!cs_solver_takes_joints(sv))
            continue;
        void *mem;
        const cs_result r = step(sv, &s, &mem);
        // Joint 7 holds both boxes (3 m g up on body 1); joint 8 holds the lower one (2 m g up
        // on body 2, its body_a).
        const double want[2] = {3 * MASS * G, 2 * MASS * G};
        for (int j = 0; j < 2; j++) {
            assert_int_equal(r.joint_id[j], J[j].id);
            assert_near(r.joint_force[3 * j], 0, ftol(sv, want[j]));
            assert_near(r.joint_force[3 * j + 1], 0, ftol(sv, want[j]));
            assert_near(r.joint_force[3 * j + 2], want[j], ftol(sv, want[j]));
        }
        for (int k = 0; k < 12; k++)
            assert_near(r.v[k], 0, vtol(sv));
        assert_true(r.cert.joint <= vtol(sv));
        free(mem);
        ran++;
    }
    assert_true(ran > 0);
}

/* A kinematic body with velocity v (linear) at pos: no mass, no inertia. */
static cs_body kinematic_body(uint32_t id, double x, double z, double vx, double vz) {
    return (cs_body){.id = id, .kinematic = true, .pos = {x, 0, z}, .quat = {1, 0, 0, 0},
                     .v = {vx, 0, vz}};
}

/* Asserts that the result's velocity of body b is the one it was given, bit for bit: no impulse
 * moves a kinematic body. */
static void assert_unchanged(const cs_result *r, int b, const cs_body *B) {
    for (int k = 0; k < 3; k++) {
        assert_true(r->v[6 * b + k] == B->v[k]);
        assert_true(r->v[6 * b + 3 + k] == B->w[k]);
    }
}

/* The box (id 1) at the origin between two kinematic fingers (ids 2, 3) at x = -/+ (HALF + 0.05),
 * each moving inwards at FINGER_V with its pad FINGER_V dt away: the pads close on the box's
 * faces exactly at the end of the step. Contact i has the normal from finger into box (body_a
 * is the box), whose first tangent is -z for the left finger and +z for the right one
 * (cs_model_tangents), a vertex of the pyramid, so pyramid and cone give the same friction. */
#define FINGER_V 0.1
typedef struct grasp {
    cs_body body[3];
    cs_contact contacts[2];
    cs_scene scene;
} grasp;

static void grasp_init(grasp *g, double mu) {
    const double I = MASS * (2 * HALF) * (2 * HALF) / 6;
    g->body[0] = (cs_body){.id = 1, .mass = MASS, .inertia = {I, 0, 0, 0, I, 0, 0, 0, I},
                           .quat = {1, 0, 0, 0}};
    g->body[1] = kinematic_body(2, -HALF - 0.05, 0, FINGER_V, 0);
    g->body[2] = kinematic_body(3, HALF + 0.05, 0, -FINGER_V, 0);
    for (int i = 0; i < 2; i++) {
        const double side = i == 0 ? -1 : 1;
        g->contacts[i] = (cs_contact){.id = (uint64_t)(i + 1), .body_a = 1,
                                      .body_b = (uint32_t)(i + 2), .point = {side * HALF, 0, 0},
                                      .normal = {-side, 0, 0}, .distance = FINGER_V * DT,
                                      .mu = mu};
    }
    g->scene = (cs_scene){.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 3, .nc = 2,
                          .bodies = g->body, .contacts = g->contacts};
}

/* Two kinematic fingers squeeze a box (no table) against gravity. With rigid contact the squeeze
 * is statically indeterminate: the two normal rows are opposite, so any equal pair of normal
 * impulses N keeps the box between the closing pads, and every such N has a Coulomb answer, in
 * which friction (mu N per side at most) takes what it can of the weight:
 *     v_z = -max(0, g dt - 2 mu N / m),  friction on the box = m (v_z + g dt) upwards.
 * Each rigid solver is checked against that law at the N it returns (they return the least
 * grip, N = 0: a free fall). SAP's compliance determines N (the pads' closing speed against the
 * contact's stiffness), so it is held to the regimes: with 2 mu N well above m g dt the box is
 * held, within SAP's stiction creep (sigma = 1e-3 of the load, see vtol); with mu tiny it slides
 * and its friction sits on the cone's rim (mu N each side), so v_z follows the law above to the
 * momentum residual SAP stops at (rel_tol 1e-6 of N). The fingers keep their velocities. */
static void kinematic_grasp(void **state) {
    (void)state;
    const double mus[2] = {MU, 0.002};
    for (int c = 0; c < 2; c++) {
        grasp g;
        grasp_init(&g, mus[c]);
        FOR_EACH_SOLVER(s) {
            void *mem;
            const cs_result r = step(s, &g.scene, &mem);
            const double N = r.impulse[0], mu = frictional(s) ? mus[c] : 0;
            const double want = -fmax(0, G * DT - 2 * mu * N / MASS);
            // Opposite rows, equal impulses; the box stays between the pads.
            assert_true(N >= 0);
            assert_near(r.impulse[3], N, 1e-9 * (N + MASS * G * DT));
            assert_near(r.v[0], 0, vtol(s));
            assert_unchanged(&r, 1, &g.body[1]);
            assert_unchanged(&r, 2, &g.body[2]);
            // Upward friction on the box: both contacts' world force, z.
            const double lift = (r.force[2] + r.force[5]) * DT;
            if (regularized(s) && c == 0) {
                print_message("#   grip N = %.9g N s per finger, mu N / (m g dt / 2) = %.4g\n", N,
                              2 * MU * N / (MASS * G * DT));
                assert_true(2 * MU * N > 10 * MASS * G * DT);
                assert_near(r.v[2], 0, vtol(s));
                assert_near(lift, MASS * G * DT, ftol(s, MASS * G * DT));
            } else if (regularized(s)) {
                assert_true(2 * mus[c] * N < MASS * G * DT);
                assert_near(r.v[2], want, 1e-6 * N / MASS);
            } else {
                assert_near(r.v[2], want, 1e-12);
            }
            assert_near(lift, MASS * (r.v[2] + G * DT), regularized(s) ? 1e-6 * N : 1e-12);
            free(mem);
        }
    }
}

/* A box flying at W into a resting kinematic finger on its left (the right finger is open: its
 * pad 2 W dt away does not close) is caught: the finger's normal impulse N = m W stops it, and
 * friction at the pad, off the centre by HALF, holds it or lets it slip while the box turns about
 * y. With I = k m HALF^2 (k = 2/3 for a cube), sticking at the pad needs the friction impulse
 *     f = m g dt k / (1 + k)   (v_z + w_y HALF = 0, m v_z = f - m g dt, I w_y = HALF f),
 * so the catch holds when mu m W >= f; else f = mu m W, v_z = mu W - g dt, w_y = HALF f / I.
 * Determinate with rigid contact, so the rigid solvers must give it to rounding; SAP's compliant
 * pad leaves part of the impact and of the stiction to creep, and is held to the direction. */
#define CATCH_W 0.1
static void kinematic_catch(void **state) {
    (void)state;
    const double I = MASS * (2 * HALF) * (2 * HALF) / 6, k = I / (MASS * HALF * HALF);
    const double f_stick = MASS * G * DT * k / (1 + k);
    const double mus[2] = {MU, 0.2 * f_stick / (MASS * CATCH_W)};
    for (int c = 0; c < 2; c++) {
        grasp g;
        grasp_init(&g, mus[c]);
        g.body[0].v[0] = -CATCH_W;
        g.body[1].v[0] = 0;
        g.body[2].v[0] = 0;
        g.contacts[0].distance = 0;
        g.contacts[1].distance = 2 * CATCH_W * DT;
        FOR_EACH_SOLVER(s) {
            void *mem;
            const cs_result r = step(s, &g.scene, &mem);
            const bool holds = mus[c] * MASS * CATCH_W >= f_stick;
            const double mu = frictional(s) ? mus[c] : 0;
            const double f = holds && mu > 0 ? f_stick : mu * MASS * CATCH_W;
            assert_unchanged(&r, 1, &g.body[1]);
            assert_unchanged(&r, 2, &g.body[2]);
            assert_true(r.impulse[3] == 0);
            if (regularized(s)) {
                // Stopped (up to the pad's compliance), braked downwards, turned the right way.
                assert_true(r.v[0] < 0 && r.v[0] > -0.05 * CATCH_W);
                assert_true(r.v[2] < 0 && r.v[2] > -G * DT && r.v[4] > 0);
                // Held: the pad point creeps by no more than vtol; slipping: it falls faster.
                const double pad_vz = r.v[2] + HALF * r.v[4];
                if (holds)
                    assert_near(pad_vz, 0, vtol(s));
                else
                    assert_true(pad_vz < -vtol(s));
                continue_free(mem);
            }
            assert_near(r.impulse[0], MASS * CATCH_W, 1e-12);
            assert_near(r.v[0], 0, 1e-12);
            assert_near(r.v[2], f / MASS - G * DT, 1e-12);
            assert_near(r.v[4], HALF * f / I, 1e-12);
            assert_near(r.v[1], 0, 1e-12);
            assert_near(r.v[3], 0, 1e-12);
            assert_near(r.v[5], 0, 1e-12);
            free(mem);
        }
    }
}

/* A kinematic probe moving at V_PROBE along x pushes the resting box over the floor at its
 * left face's centre (COM height, frictionless tip). Rigid contact: the box moves with the probe,
 * v_x = V_PROBE, and slides on the floor, whose friction mu m g dt (the contacts slip along
 * their first tangent, a pyramid vertex) the probe overcomes too: its impulse is
 * m V_PROBE + mu m g dt. The floor's friction tilts the load to the front corners, which with
 * mu < 1 all stay loaded, so the box does not tip. The probe's own velocity is unchanged. SAP's
 * compliant tip lets the box lag a little and its relaxed friction lifts a sliding box
 * (v_n = mu |v_t|): it is held to the direction. */
#define V_PROBE 0.05
static void kinematic_probe_pushes(void **state) {
    (void)state;
    box_scene b;
    box_init(&b, 0, 0);
    cs_body bodies[2] = {b.body, kinematic_body(2, -2 * HALF, HALF, V_PROBE, 0)};
    cs_contact contacts[5];
    for (int i = 0; i < 4; i++)
        contacts[i] = b.contacts[i];
    contacts[4] = (cs_contact){.id = 5, .body_a = 1, .body_b = 2, .point = {-HALF, 0, HALF},
                               .normal = {1, 0, 0}};
    cs_scene s = b.scene;
    s.nb = 2, s.nc = 5, s.bodies = bodies, s.contacts = contacts;
    // The probe on either side of its contact: body_b, then body_a (normal turned round).
    for (int swap = 0; swap < 2; swap++) {
        if (swap) {
            contacts[4].body_a = 2, contacts[4].body_b = 1;
            contacts[4].normal[0] = -1;
        }
        FOR_EACH_SOLVER(sv) {
            void *mem;
            const cs_result r = step(sv, &s, &mem);
            const double mu = frictional(sv) ? MU : 0;
            assert_unchanged(&r, 1, &bodies[1]);
            if (regularized(sv)) {
                assert_true(r.v[0] > 0.9 * V_PROBE && r.v[0] <= V_PROBE);
                assert_true(r.impulse[12] > MASS * 0.9 * V_PROBE);
                continue_free(mem);
            }
            assert_near(r.v[0], V_PROBE, 1e-12);
            for (int k = 1; k < 6; k++)
                assert_near(r.v[k], 0, 1e-12);
            assert_near(r.impulse[12], MASS * V_PROBE + mu * MASS * G * DT, 1e-12);
            free(mem);
        }
    }
}

/* A box hangs at rest from a kinematic crane by a ball joint at CRANE_L above its centre; the
 * crane moves at V_CRANE along x. The joint makes the box's anchor point move with the crane's:
 * with lambda the joint impulse on the box, v = v* + lambda / m and w = I^-1 (r x lambda),
 * r = (0, 0, L), so lambda_z = m g dt and lambda_x (1/m + L^2/I) = V: the box is jerked along
 * and starts to swing back (w_y = L lambda_x / I). Solvers that take joints only. */
#define V_CRANE 0.2
#define CRANE_L 0.3
static void kinematic_crane_joint(void **state) {
    (void)state;
    const double I = MASS * (2 * HALF) * (2 * HALF) / 6;
    cs_body B[2] = {{.id = 1, .mass = MASS, .inertia = {I, 0, 0, 0, I, 0, 0, 0, I},
                     .quat = {1, 0, 0, 0}},
                    kinematic_body(2, 0, CRANE_L + 0.5, V_CRANE, 0)};
    cs_joint J = {.id = 4, .body_a = 1, .body_b = 2, .kind = CS_JOINT_BALL,
                  .anchor = {0, 0, CRANE_L}};
    const cs_scene s = {.dt = DT, .gravity = {0, 0, -G}, .friction_dirs = 8, .nb = 2, .nj = 1,
                        .bodies = B, .joints = &J};
    const double lx = V_CRANE / (1 / MASS + CRANE_L * CRANE_L / I);
    int ran = 0;
    FOR_EACH_SOLVER(sv) {
        if (!cs_solver_takes_joints(sv))
            continue;
        void *mem;
        const cs_result r = step(sv, &s, &mem);
        assert_unchanged(&r, 1, &B[1]);
        const bool reg = regularized(sv);
        assert_near(r.joint_force[0] * DT, lx, reg ? ftol(sv, lx) : 1e-12);
        assert_near(r.joint_force[1], 0, reg ? ftol(sv, lx / DT) : 1e-9);
        assert_near(r.joint_force[2] * DT, MASS * G * DT, reg ? ftol(sv, lx) : 1e-12);
        assert_near(r.v[0], lx / MASS, vtol(sv));
        assert_near(r.v[4], CRANE_L * lx / I, vtol(sv) / CRANE_L);
        assert_near(r.v[0] + CRANE_L * r.v[4], V_CRANE, vtol(sv));
        for (int k = 1; k < 4; k++)
            assert_near(r.v[k], 0, vtol(sv));
        assert_near(r.v[5], 0, vtol(sv));
        free(mem);
        ran++;
    }
    assert_true(ran > 0);
}

/* A kinematic body at rest is the world: the catch with resting fingers, and the same scene with
 * the fingers' contacts on the world (body_b = 0) and the fingers gone, give every solver the
 * same problem (W, the free contact velocities, the friction law), so the same impulses and box
 * velocity to rounding. */
static void kinematic_at_rest_is_world(void **state) {
    (void)state;
    grasp g;
    grasp_init(&g, MU);
    g.body[0].v[0] = -CATCH_W;
    g.body[1].v[0] = g.body[2].v[0] = 0;
    g.contacts[0].distance = 0;
    grasp w = g;
    w.scene.bodies = w.body, w.scene.contacts = w.contacts;
    w.scene.nb = 1;
    w.contacts[0].body_b = w.contacts[1].body_b = 0;
    FOR_EACH_SOLVER(s) {
        void *mk, *mw;
        const cs_result rk = step(s, &g.scene, &mk), rw = step(s, &w.scene, &mw);
        for (int k = 0; k < 6; k++) {
            assert_near(rk.impulse[k], rw.impulse[k], 1e-12 * MASS * CATCH_W);
            assert_near(rk.v[k], rw.v[k], 1e-12);
        }
        free(mk);
        free(mw);
    }
}

/* A box on the floor (box_init's four corners) that its joints hold still, so that no contact
 * impulse can move it: the reduced Delassus matrix of its contacts and their free velocity are
 * rounding noise (joints.h). The rigid answer is the least one: the contacts carry nothing and
 * the joints carry the weight. Four ways to hold it:
 *   WELD_WORLD          a fixed joint to the world;
 *   WELD_KINEMATIC      a fixed joint to a kinematic body above it, which carries the box along
 *                       x at WELD_V: the immobile contacts slide;
 *   WELD_HINGE_SLIDER   a hinge about z and a slider along x, both to the world: each leaves one
 *                       freedom, together none (the second joint closes a loop);
 *   WELD_TABLE          WELD_WORLD's box as a table with a free 2 kg box resting on its top: the
 *                       top's four contacts move and carry 2 m g, the floor's do not. */
enum { WELD_WORLD, WELD_KINEMATIC, WELD_HINGE_SLIDER, WELD_TABLE, WELD_KINDS };
#define WELD_V 0.1
#define WELD_X 0.1
#define WELD_Y -0.21
#define WELD_YAW 1.1
typedef struct weld_scene {
    cs_body body[2];
    cs_contact contacts[8];
    cs_joint joints[2];
    cs_scene scene;
} weld_scene;

static void weld_init(weld_scene *w, int kind) {
    box_scene b;
    box_init(&b, 0, 0);
    // Off the origin and turned about z by WELD_YAW, so that the reduction's rounding is not
    // zero by symmetry.
    const double c = cos(WELD_YAW), sn = sin(WELD_YAW);
    b.body.pos[0] = WELD_X, b.body.pos[1] = WELD_Y;
    b.body.quat[0] = cos(WELD_YAW / 2), b.body.quat[3] = sin(WELD_YAW / 2);
    for (int i = 0; i < 4; i++) {
        double *p = b.contacts[i].point;
        const double x = p[0], y = p[1];
        p[0] = WELD_X + c * x - sn * y, p[1] = WELD_Y + sn * x + c * y;
    }
    w->body[0] = b.body;
    memcpy(w->contacts, b.contacts, sizeof b.contacts);
    w->joints[0] = (cs_joint){.id = 1, .body_a = 1, .kind = CS_JOINT_FIXED};
    w->scene = b.scene;
    w->scene.bodies = w->body, w->scene.contacts = w->contacts, w->scene.joints = w->joints;
    w->scene.nj = 1;
    if (kind == WELD_KINEMATIC) {
        w->body[0].v[0] = WELD_V;
        w->body[1] = kinematic_body(2, WELD_X, 0.5, WELD_V, 0);
        w->joints[0].body_b = 2;
        w->scene.nb = 2;
    } else if (kind == WELD_HINGE_SLIDER) {
        w->joints[0] = (cs_joint){.id = 1, .body_a = 1, .kind = CS_JOINT_HINGE,
                                  .anchor = {WELD_X, WELD_Y, HALF}, .axis = {0, 0, 1}};
        w->joints[1] = (cs_joint){.id = 2, .body_a = 1, .kind = CS_JOINT_SLIDER,
                                  .anchor = {WELD_X, WELD_Y, HALF}, .axis = {1, 0, 0}};
        w->scene.nj = 2;
    } else if (kind == WELD_TABLE) {
        w->body[1] = b.body;
        w->body[1].id = 2;
        w->body[1].mass = 2 * MASS;
        for (int k = 0; k < 9; k++)
            w->body[1].inertia[k] *= 2;
        w->body[1].pos[2] = 3 * HALF;
        for (int i = 0; i < 4; i++) {
            w->contacts[4 + i] = b.contacts[i];
            w->contacts[4 + i].id = (uint64_t)(5 + i);
            w->contacts[4 + i].body_a = 2, w->contacts[4 + i].body_b = 1;
            w->contacts[4 + i].point[2] = 2 * HALF;
        }
        w->scene.nb = 2, w->scene.nc = 8;
    }
}

/* Every solver answers each weld, with friction and without (a frictionless scene takes
 * dantzig's normal rows alone), certified, and every body's impulses balance its momentum:
 * joints and contacts together hold the weight. The rigid solvers give the least answer: the
 * bodies keep their velocities, the floor's contacts carry nothing. SAP's joints are compliant
 * rows of its own problem (sap.h), which share the load with the floor and give a little: it
 * is held to the balance, at its tolerance. */
static void welded_box_on_floor(void **state) {
    (void)state;
    for (int run = 0; run < 2 * WELD_KINDS; run++) {
        const int kind = run / 2;
        weld_scene w;
        weld_init(&w, kind);
        for (int i = 0; run % 2 && i < w.scene.nc; i++)
            w.contacts[i].mu = 0;
        print_message("# weld %d%s\n", kind, run % 2 ? ", no friction" : "");
        FOR_EACH_SOLVER(s) {
            void *mem;
            const cs_result r = step(s, &w.scene, &mem);
            const double ptol = regularized(s) ? 1e-6 * r.cert.impulse_scale : 1e-9 * MASS * G * DT;
            // Each free body: sum of its impulses = m (v - v0) - m g dt, world frame.
            const int free_bodies = kind == WELD_TABLE ? 2 : 1;
            for (int b = 0; b < free_bodies; b++) {
                const double m = w.body[b].mass;
                double p[3] = {0, 0, 0};
                for (int i = 0; i < r.nc; i++)
                    for (int k = 0; k < 3; k++) {
                        const double sign = w.contacts[i].body_a == w.body[b].id   ? 1
                                            : w.contacts[i].body_b == w.body[b].id ? -1
                                                                                   : 0;
                        p[k] += sign * r.force[3 * i + k] * DT;
                    }
                for (int j = 0; j < r.nj && b == 0; j++)
                    for (int k = 0; k < 3; k++)
                        p[k] += r.joint_force[3 * j + k] * DT;
                for (int k = 0; k < 3; k++)
                    assert_near(p[k], m * (r.v[6 * b + k] - w.body[b].v[k]) +
                                          (k == 2 ? m * G * DT : 0), ptol);
            }
            for (int i = 0; i < r.nc; i++)
                assert_true(r.impulse[3 * i] >= 0);
            if (regularized(s))
                continue_free(mem);
            assert_true(r.cert.normal_velocity <= 1e-12 && r.cert.joint <= 1e-12);
            // The bodies keep their velocities (at rest, or carried along x).
            for (int k = 0; k < 6 * free_bodies; k++)
                assert_near(r.v[k], k == 0 ? w.body[0].v[0] : 0, 1e-12);
            for (int i = 0; i < 4; i++)
                assert_true(r.impulse[3 * i] == 0 && r.impulse[3 * i + 1] == 0 &&
                            r.impulse[3 * i + 2] == 0);
            free(mem);
        }
    }
}

/* WELD_KINEMATIC with the kinematic body and the box moving down at WELD_V: the floor's
 * contacts approach at WELD_V and no impulse can stop them (rigid contact has no answer). The
 * pinned contacts (joints.c, PINNED) do not hide that: each rigid solver's answer fails its
 * certificate, and with nothing certified to carry the step says so (CS_NOANSWER). SAP's
 * compliant joint gives way instead, which its law allows: it is not asked. */
static void welded_box_driven_into_floor(void **state) {
    (void)state;
    weld_scene w;
    weld_init(&w, WELD_KINEMATIC);
    w.body[0].v[2] = w.body[1].v[2] = -WELD_V;
    FOR_EACH_SOLVER(s) {
        if (regularized(s))
            continue;
        const cs_limits lim = {.max_bodies = 2, .max_contacts = 4, .max_joints = 1,
                               .max_dirs = 8, .solvers = 1u << s};
        cs_workspace *ws = cs_workspace_new(&lim);
        void *mem = malloc(cs_result_size(&lim));
        assert_true(ws && mem);
        cs_result r;
        cs_result_init(&r, mem, &lim);
        const cs_options opt = {.solver = s};
        cs_step(ws, &w.scene, &opt, NULL, &r);
        print_message("# %-16s status %s, primary %s\n", cs_solver_name(s),
                      cs_status_name(r.status), cs_status_name(r.primary));
        assert_int_equal(r.status, CS_NOANSWER);
        assert_int_equal(r.answer, CS_ANSWER_NONE);
        cs_workspace_free(ws);
        free(mem);
    }
}

/* A C caller's kinematic body with a mass or an inertia value is refused naming the field (the
 * wire has its own check for the inertia count, test_codec.c): neither would be used. */
/* tests/data/arm_on_table.json (the README's jointed scene): two 1 kg rods hinged to the world
 * at the shoulder and welded at the elbow, the tip on a table. At rest the tip carries m g, the
 * shoulder the other m g, and the weld the torque 0.2 m g about y that keeps the outer rod
 * straight; every solver that takes joints says so (SAP within its compliance). */
static void arm_on_table_file(void **state) {
    (void)state;
    cs_scene s;
    char err[256];
    if (cd_scene_json_load(t_data_path("arm_on_table.json"), cs_scene_validate,
                           &s, err, sizeof err) < 0)
        fail_msg("%s", err);
    const double mg = s.bodies[0].mass * G;
    int ran = 0;
    FOR_EACH_SOLVER(sv) {
        if (!cs_solver_takes_joints(sv))
            continue;
        void *mem;
        const cs_result r = step(sv, &s, &mem);
        // SAP's compliance leaves up to R_n / (R_n + w_eff) of the tip's load to the next step:
        // R_n = w / 4 pi^2 from the tip's own Delassus w = 1/m + r^2/I = 4 1/kg, against
        // w_eff = 1.5 1/kg through the hinge (the two rods turning about the shoulder): 6.3 %.
        const double ftol_arm = regularized(sv) ? 0.063 * mg : 1e-6 * mg;
        assert_near(r.force[2], mg, ftol_arm);
        assert_near(r.joint_force[2], mg, ftol_arm);
        assert_near(r.joint_force[5], 0, ftol_arm);
        assert_near(r.joint_torque[3 + 1], 0.2 * mg, ftol_arm);
        // The same fraction of the turn one unsupported step would give the rods about the
        // shoulder (omega = 2 m g 0.4 dt / (2 m 0.8^2 / 3)), in rad/s and, at most 0.8 m out,
        // in m/s.
        const double omega = 2 * mg * 0.4 * s.dt / (2 * s.bodies[0].mass * 0.64 / 3);
        for (int k = 0; k < 12; k++)
            assert_near(r.v[k], 0, regularized(sv) ? 0.063 * omega : 1e-9);
        free(mem);
        ran++;
    }
    assert_true(ran > 0);
    cd_scene_json_free(&s);
}

static void kinematic_mass_fields_refused(void **state) {
    (void)state;
    grasp g;
    grasp_init(&g, MU);
    const cs_limits lim = {.max_bodies = 3, .max_contacts = 2, .max_dirs = 8};
    char err[160];
    assert_int_equal(cs_scene_validate(&g.scene, &lim, err, sizeof err), 0);
    g.body[2].inertia[4] = 1e-3;
    assert_int_equal(cs_scene_validate(&g.scene, &lim, err, sizeof err), CS_EINPUT);
    assert_string_equal(err, "bodies[2].inertia: " CS_KINEMATIC_NO_MASS);
    g.body[2].inertia[4] = 0;
    g.body[1].mass = 0.1;
    assert_int_equal(cs_scene_validate(&g.scene, &lim, err, sizeof err), CS_EINPUT);
    assert_string_equal(err, "bodies[1].mass: " CS_KINEMATIC_NO_MASS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_at_rest),
        cmocka_unit_test(penetration_recovery),
        cmocka_unit_test(incline_sticks),
        cmocka_unit_test(incline_slides),
        cmocka_unit_test(spinning_puck),
        cmocka_unit_test(pendulum_on_ball_joints),
        cmocka_unit_test(kinematic_grasp),
        cmocka_unit_test(kinematic_catch),
        cmocka_unit_test(kinematic_probe_pushes),
        cmocka_unit_test(kinematic_crane_joint),
        cmocka_unit_test(kinematic_at_rest_is_world),
        cmocka_unit_test(kinematic_mass_fields_refused),
        cmocka_unit_test(arm_on_table_file),
        cmocka_unit_test(welded_box_on_floor),
        cmocka_unit_test(welded_box_driven_into_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
