/* SPDX-License-Identifier: MIT */
/* The contact model: rigid bodies and point contacts turned into the generalized velocity-level
 * problem every solver works on (Lloyd 2005, eq. 2). Per body 6 velocity coordinates (linear,
 * then angular, world frame); per contact a frame (normal n from body_b into body_a, tangents
 * t1, t2) and the Jacobian rows that map body velocities to the relative velocity of body_a
 * w.r.t. body_b at the contact point, expressed in that frame.
 *
 * Joints (joints.h) are not rows of the model: a scene with joints gets m->jt, and then the
 * mass matrix the contacts see is Baraff's Mhat, joints reacting (Baraff 1996, section 8): vstar
 * is the free velocity with the joints holding, cs_model_delassus() the contacts' reduced
 * Delassus matrix and cs_model_velocity() the articulated solve, so a solver needs no change. */
#ifndef CONTACTD_SOLVER_MODEL_H
#define CONTACTD_SOLVER_MODEL_H
#include <stddef.h>
#include "solver/contact.h"

/* thread: one owner (the workspace's caller). Arrays live in the workspace. */
typedef struct cs_model {
    int nb, nc, nd;   /* bodies, contacts, friction-pyramid directions d */
    double dt;        /* s */
    double *mass;     /* [nb] kg; 0 for a kinematic body (cs_model_is_kinematic) */
    double *iw;       /* [9 nb] world inertia about the COM, row-major; 0 when kinematic */
    double *iw_inv;   /* [9 nb] its inverse; 0 when kinematic (infinite mass) */
    double *v0;       /* [6 nb] velocity at the start of the step */
    double *vstar;    /* [6 nb] free-motion velocity v* = v0 + dt M^-1 (f + m g - w x I w);
                       * v0 for a kinematic body; with joints, the free velocity with them
                       * reacting (cs__joints_build) */
    int *ia, *ib;     /* [nc] body index of body_a / body_b, -1 for the world */
    double *frame;    /* [9 nc] rows n, t1, t2 (world, orthonormal, t1 x t2 = n) */
    double *ra, *rb;  /* [3 nc] contact point minus COM of body_a / body_b (0 for the world) */
    double *mu;       /* [nc] */
    double *bias;     /* [nc] lower bound on the normal velocity: v_n >= bias = -gap / dt for a
                       * gap (distance > 0), penetration_recovery depth / dt for a penetration */
    const struct cs_joints *jt; /* the scene's joints (joints.h), NULL: none */
} cs_model;

/* Workspace bytes cs_model_build() takes for any scene within lim. */
size_t cs_model_size(const cs_limits *lim);

/* Builds the model of a validated scene's bodies and contacts (m->jt = NULL: joints come from
 * cs__joints_build()), allocating its arrays on ws (they live until the caller
 * releases the workspace mark taken before the call). Returns CS_CONVERGED (0) or CS_ENOSPACE.
 * thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_model_build(cs_model *m, cs_workspace *ws, const cs_scene *s);

/* Tangent frame of a unit normal n: t1, t2 = R e_x, R e_y for the smallest rotation R taking
 * e_z onto n (ArtiSynth's convention, so pyramid directions match Lloyd's test data). */
void cs_model_tangents(const double n[3], double t1[3], double t2[3]);

/* out[3 nc] = J v: relative velocity of body_a w.r.t. body_b at each contact (contact frame).
 * v: [6 nb]. */
void cs_model_jv(const cs_model *m, const double *v, double *out);
/* out[rows nc] = the free contact velocities of the Delassus form, J_r v* (contact frames, the
 * first `rows` rows of each contact as cs_model_delassus() keeps them: 1 or 3), the velocity
 * every solver on cs_model_delassus() starts from: with joints, an immobile contact as its pinned
 * rows read (cs__joints_pin_velocity). The certificate judges the answer's own velocity
 * (cs_model_velocity), not this. */
void cs_model_free_velocity(const cs_model *m, int rows, double *out);
/* gen[6 nb] = J^T lambda: generalized impulse of impulses lambda [3 nc] (contact frame, acting
 * on body_a, body_b takes the opposite). */
void cs_model_jt(const cs_model *m, const double *lambda, double *gen);
/* True when body b's velocity is prescribed (cs_body.kinematic): infinite mass, so its M^-1
 * block is zero and no impulse changes its velocity. */
static inline bool cs_model_is_kinematic(const cs_model *m, int b) {
    return m->mass[b] == 0;
}

/* out[6 nb] = M^-1 x (zero on a kinematic body's block). */
void cs_model_minv(const cs_model *m, const double *x, double *out);
/* out[6 nb] = M x. A kinematic body's block is zero: its momentum is no part of the problem
 * (certify.c skips it in the momentum balance, SAP leaves its dofs out of the unknowns). */
void cs_model_mul(const cs_model *m, const double *x, double *out);
/* v[6 nb] = v* + M^-1 J^T lambda, lambda [3 nc]; with joints v* + Mhat^-1 J^T lambda, the
 * joints reacting (cs__joints_velocity). scratch: [6 nb]. */
void cs_model_velocity(const cs_model *m, const double *lambda, double *v, double *scratch);

typedef struct cs__meter cs__meter;

/* Bytes of the table cs_model_jacobian() fills for rows = 3 and any scene within lim. */
size_t cs_model_jacobian_size(const cs_limits *lim);
/* Rows of the Jacobian that keeps `rows` rows of each contact: rows nc. */
int cs_model_rows(const cs_model *m, int rows);
/* Jacobian table of the first `rows` frame rows of every contact, per row and side (side 0:
 * body_a, 1: body_b): for row k (contact i's row r is k = rows i + r), js[(k 2 + side) 12 +
 * 0..5] = the row's generalized 6-vector on that body (negated for body_b), [6..11] = M_b^-1
 * times it (the bodies' own mass, joints ignored). Zero for the world; [6..11] zero for a
 * kinematic body.
 * meter: the solve's deadline, checked contact by contact (solver/deadline.h; NULL: none).
 * Returns 0, or CS_DEADLINE (the table filled for the first contacts only). */
cs_status cs_model_jacobian(const cs_model *m, int rows, double *js, cs__meter *meter);

/* Workspace bytes of cs_model_delassus() scratch for lim. */
size_t cs_model_delassus_size(const cs_limits *lim);
/* W = J_r M^-1 J_r^T (column-major, ldw >= cs_model_rows(m, rows)) where J_r keeps the first
 * `rows` rows of each contact (1: normals only, 3: normal and both tangents), in contact order;
 * with joints J_r Mhat^-1 J_r^T, copied from m->jt, each immobile contact pinned
 * (cs__joints_delassus). Scratch from ws.
 * meter: the solve's deadline, checked per column (solver/deadline.h; NULL: none).
 * Returns 0, CS_ENOSPACE, or CS_DEADLINE (W partly formed). */
cs_status cs_model_delassus(const cs_model *m, cs_workspace *ws, int rows, double *W, int ldw,
                            cs__meter *meter);

/* cs_model_jv(), cs_model_jt() and cs_model_velocity() through a solve's meter (deadline.h; NULL:
 * none): a pass whose work does not fit the meter's remaining count is taken some contacts at a
 * time (summed in the same order, so the same numbers), else counted once at its end. True when
 * the deadline passed on the way (the output then partial). With joints the velocity's
 * articulated solve (joints.h) is not counted. thread: any. rt-safe: yes. */
bool cs__model_jv_metered(const cs_model *m, const double *v, double *out, cs__meter *meter);
bool cs__model_jt_metered(const cs_model *m, const double *lambda, double *gen, cs__meter *meter);
bool cs__model_velocity_metered(const cs_model *m, const double *lambda, double *v, double *scratch,
                                cs__meter *meter);

#endif /* CONTACTD_SOLVER_MODEL_H */
