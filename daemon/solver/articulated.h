/* SPDX-License-Identifier: MIT */
/* Articulated bodies in linear time with Lagrange multipliers (Baraff 1996): joints between
 * rigid bodies (ball, hinge, slider, fixed) solved at the velocity level by a no-fill LDL^T of
 * the block-sparse matrix H = [M -J^T; -J 0] over the tree of bodies and joints (sections 6-7),
 * with joints that close loops, and any further one-dimensional rows (contacts, joint limits),
 * handled by constraint anticipation (section 8).
 *
 * How a caller feeds it: bodies as cs_art_body (mass, world inertia, pose; cs_articulated_body()
 * fills one from a scene body), joints as cs_art_joint with body indices and body-local anchors
 * and joint frames, captured once by cs_articulated_joint_capture() at the joint's first frame
 * (the protocol's single world anchor per frame cannot show drift). The position error the
 * drift term corrects is measured from those local anchors and frames at the current poses. */
#ifndef CONTACTD_SOLVER_ARTICULATED_H
#define CONTACTD_SOLVER_ARTICULATED_H
#include <stddef.h>
#include <stdint.h>
#include "wire/types.h"

typedef struct cs_workspace cs_workspace;
typedef struct cs__meter cs__meter;

/* Auxiliary rows a factored system anticipates at most: loop closures take up to 6 rows each,
 * and cs_articulated_size() reserves min(6 max_joints, this) of them. Anticipation costs k
 * O(n) solves plus O(k^3), so it is meant for few rows (Baraff's example: 12). */
#define CS_ARTICULATED_AUX_MAX 60

/* One body. thread: any (plain data). */
typedef struct cs_art_body {
    double mass;   /* kg */
    double iw[9];  /* world inertia about the COM, kg m^2, row-major */
    double pos[3]; /* COM, world, m */
    double rot[9]; /* body to world rotation, row-major */
} cs_art_body;

/* ret from a scene body: rotation from its quaternion, world inertia R I R^T. */
void cs_articulated_body(cs_art_body *ret, const cs_body *b);

/* One joint, in the frames of the bodies it joins (the world's for ib = -1). */
typedef struct cs_art_joint {
    cs_joint_kind kind; /* rows: ball 3, hinge 5 (3 positional, 2 angular perpendicular to the
                         * axis), slider 5 (2 positional perpendicular to the axis, 3 angular),
                         * fixed 6 */
    int ia, ib;         /* body indices; ib = -1: the world. ia != ib, ia >= 0 */
    double la[3], lb[3]; /* the anchor in body_a's frame, in body_b's frame, m */
    double fa[9], fb[9]; /* joint frame in body_a's / body_b's frame, row-major, rows: the axis
                          * and two unit vectors perpendicular to it */
    double vb[6];        /* ib = -1: the world side's velocity, linear at cb then angular; 0 for
                          * the fixed world, a kinematic body's prescribed velocity when the world
                          * side is one (its geometry in lb, fb at its current pose) */
    double cb[3];        /* ib = -1: the point vb's linear part is the velocity of, world */
} cs_art_joint;

/* Captures a joint whose anchor (world, m) and unit axis (world; ignored for ball and fixed,
 * may be NULL then) are those of the current poses: both bodies' anchors and frames coincide
 * now, so the position error starts at zero. bodies: the array ia and ib index. */
void cs_articulated_joint_capture(cs_art_joint *ret, cs_joint_kind kind, int ia, int ib,
                                  const cs_art_body *bodies, const double anchor[3],
                                  const double axis[3]);

/* A one-dimensional row on at most two bodies: row . v = ja . v_ia + jb . v_ib with target b.
 * ia or ib = -1: no body on that side. */
typedef struct cs_art_row {
    int ia, ib;
    double ja[6], jb[6]; /* generalized rows (linear, then angular), signs included */
    double b;            /* m/s or rad/s */
} cs_art_row;

typedef struct cs__art_node cs__art_node;
typedef struct cs__art_jrows cs__art_jrows;

/* A factored system: built by cs_articulated_factor(), arrays in the workspace until the
 * caller releases the mark taken before that call. thread: the workspace's caller. */
typedef struct cs_articulated {
    int nb, nj;          /* read-only */
    int rows;            /* rows of all joints: length of lambda */
    const int *row_off;  /* [nj + 1] joint j's rows are lambda[row_off[j] .. row_off[j + 1]) */
    const uint8_t *aux;  /* [nj] 1: the joint closes a loop and is auxiliary (section 8) */
    int naux;            /* rows of the auxiliary joints */
    const cs_art_row *aux_rows; /* [naux] their rows, in joint order */
    int nnodes;          /* bodies + primary joints: the block rows of H */
    const int *order;    /* [nnodes] elimination order: node id (body i: i, joint j: nb + j) */
    const int *parent;   /* [nnodes] position in order of each position's parent, -1 at a root */
    int64_t factor_work; /* multiply-adds of the factorization (O(n) evidence) */
    double dt;
    /* private */
    cs__art_node *node;   /* [nnodes] */
    cs__art_jrows *jr;    /* [nj] world rows of every joint at this frame */
    double *x;            /* [6 nnodes] solve scratch */
} cs_articulated;

/* Workspace bytes cs_articulated_factor() and then cs_articulated_step() take (the factor,
 * and anticipation of min(6 max_joints, CS_ARTICULATED_AUX_MAX) loop-closure rows) for any
 * problem within lim. Anticipating further rows (contacts) needs their k x k matrix besides. */
size_t cs_articulated_size(const cs_limits *lim);

/* Splits joints into a spanning forest (primary) and loop closures (auxiliary: a joint whose
 * bodies, the world counting as one, are already connected by earlier joints), orders the
 * nodes children before parents (section 7.1), forms H's blocks at the current poses and
 * factors H = U^T D U without fill-in (sparsefactor, section 7.3). Joint rows target
 * J v = -beta (position error) / dt, beta in [0, 1] (Baumgarte; 0: none).
 * bodies: [nb]; joints: [nj]. *ret points into ws (set on success only; the caller's release
 * of a mark taken before the call frees it, on failure too). meter: deadline (NULL: none).
 * Returns CS_CONVERGED, CS_EINPUT (a bad index or kind, dt <= 0), CS_ENOSPACE (beyond ws's
 * room or more than CS_ARTICULATED_AUX_MAX auxiliary rows), CS_SINGULAR (a joint's rows are
 * dependent, or a body's mass matrix is not positive definite), CS_DEADLINE.
 * thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_articulated_factor(cs_articulated **ret, cs_workspace *ws, int nb,
                                const cs_art_body *bodies, int nj, const cs_art_joint *joints,
                                double dt, double beta, cs__meter *meter);

/* Solves H [v; lambda] = [M v* + J_k^T mu; -b] for the primary joints (sparsesolve): the
 * velocity after impulses mu on k extra rows (k = 0: none) and the primary joints' reaction.
 * vstar: [6 nb]; rows: [k]; mu: [k] N s (or NULL when k = 0). v: [6 nb] out; lambda: [a->rows]
 * out, impulse on body_a in each joint's row frame, 0 for auxiliary joints (may be NULL).
 * Returns CS_CONVERGED or CS_DEADLINE. thread: the workspace's caller. rt-safe: yes. */
cs_status cs_articulated_solve(const cs_articulated *a, const double *vstar, int k,
                               const cs_art_row *rows, const double *mu, double *v,
                               double *lambda, cs__meter *meter);

/* Constraint anticipation (section 8.1): A = J_k Mhat^-1 J_k^T, where Mhat^-1 maps an impulse
 * to the velocity change it makes with the primary joints reacting, and the free auxiliary
 * velocity afree_i = row_i . v_free - b_i of the primary-only solution: the auxiliary rows then
 * see a = A mu + afree (bilateral rows: a = 0; contacts: a >= 0 complementary to mu >= 0).
 * k + 1 solves. A: [k x k] column-major, lda >= k; afree: [k]. Scratch from ws.
 * Returns CS_CONVERGED, CS_ENOSPACE, CS_DEADLINE. thread: the workspace's caller. rt-safe: yes. */
cs_status cs_articulated_anticipate(const cs_articulated *a, cs_workspace *ws,
                                    const double *vstar, int k, const cs_art_row *rows,
                                    double *A, int lda, double *afree, cs__meter *meter);

/* One step of the joints alone (section 8.2): anticipates the loop closures, solves their
 * bilateral system A mu = -afree by a rank-revealing Cholesky (a loop whose rows are redundant,
 * as in a planar linkage, gets the minimum-effort impulse), then solves the primary joints
 * under those impulses. v: [6 nb] out; lambda: [a->rows] out, every joint's impulse.
 * Returns CS_CONVERGED, CS_ENOSPACE, CS_DEADLINE. thread: the workspace's caller. rt-safe: yes. */
cs_status cs_articulated_step(const cs_articulated *a, cs_workspace *ws, const double *vstar,
                              double *v, double *lambda, cs__meter *meter);

/* World force (N, at the anchor on body_a) and torque (N m, about that anchor) that joint j
 * applies to body_a: its impulse rows of lambda ([a->rows]) over dt. */
void cs_articulated_joint_wrench(const cs_articulated *a, int j, const double *lambda,
                                 double force[3], double torque[3]);

/* Joint j's rows at this frame as generic rows (its row_off[j + 1] - row_off[j] of them). */
void cs_articulated_joint_rows(const cs_articulated *a, int j, cs_art_row *rows);

#endif /* CONTACTD_SOLVER_ARTICULATED_H */
