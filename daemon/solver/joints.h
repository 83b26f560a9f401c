/* SPDX-License-Identifier: MIT */
/* A scene's joints as the contact solvers see them (Baraff 1996, section 8): the bodies and
 * joints go through the articulated factor (articulated.h), the loop closures and every contact
 * row are anticipated (A = J_k Mhat^-1 J_k^T, k = loop rows + 3 per contact), and the loop rows
 * are eliminated by a Schur complement. What is left is the contacts' own problem with the
 * joints reacting: the reduced Delassus matrix W_c and the joint-reacted free velocity, which
 * cs_model carries (model.h), so every solver on the Delassus form takes joints unchanged. After
 * the solve, every joint's impulse follows from the contact impulses by one O(n) solve. */
#ifndef CONTACTD_SOLVER_JOINTS_H
#define CONTACTD_SOLVER_JOINTS_H
#include <stddef.h>
#include "solver/contact.h"

typedef struct cs_model cs_model;
typedef struct cs_articulated cs_articulated;
typedef struct cs_art_row cs_art_row;
typedef struct cs__meter cs__meter;

/* Baumgarte factor of the joint rows: each step removes this fraction of a joint's position
 * error (articulated.h). 0.2 closes an error within ~20 steps without exciting the stiff
 * response a factor near 1 gives at the velocity level (Baumgarte 1972; ODE's ERP default). */
#define CS_JOINTS_BETA 0.2

/* The joints of one step. Arrays in the workspace, with the model's lifetime.
 * thread: the workspace's caller. */
typedef struct cs_joints {
    const cs_articulated *art; /* the factored bodies and joints, every joint's rows */
    int nb, nc;
    int nl;           /* loop-closure rows (the articulated auxiliary rows) */
    int k;            /* nl + 3 nc: anticipated rows, and the leading dimension of A */
    const cs_art_row *rows; /* [k] loop rows, then n, t1, t2 of each contact (target 0) */
    double *L;        /* [nl x nl] A_LL's pivoted Cholesky factor (linalg.h), ld nl */
    int *piv, rank;   /* its pivots [nl] and rank */
    double *afree;    /* [nl] the loop rows' free velocity with no impulse on them */
    double *A;        /* [k x k] column-major, A = J_k Mhat^-1 J_k^T with W_c in its contact
                       * block; NULL when the deadline cut the reduction short */
    double *w0;       /* [3 nc] each contact row's Delassus diagonal over the bodies' own
                       * masses, joints ignored: the scale of its reduced one (joints.c, PINNED) */
    const double *vstar; /* [6 nb] free-motion velocity without joints */
    double *mu, *work, *y; /* scratch: [k], [max(nl, cs_psd_work(nl))], [6 nb] */
    bool reduced;     /* built by cs__joints_build (the model's vstar is v_f), not _rows */
} cs_joints;

/* Workspace bytes cs__joints_build() keeps for any scene within lim: 0 when lim->max_joints is
 * 0. thread: any. */
size_t cs__joints_size(const cs_limits *lim);

/* When s has joints, builds them for m (built from s by cs_model_build()): every joint's frames
 * from warm (captured at the joint's first frame and kept by joint id, recaptured when its kind
 * or bodies change: the rows then correct drift with CS_JOINTS_BETA); with warm NULL, captured
 * now (no drift correction). Sets m->jt and makes m->vstar the free velocity with the joints
 * reacting. Without joints, m->jt = NULL and nothing else changes. meter: the deadline of the
 * contacts' reduction (NULL: none); the joints themselves are built whatever it says.
 * Returns CS_CONVERGED; CS_DEADLINE with m->jt set but no Delassus matrix (cs_model_velocity
 * works, cs_model_delassus returns CS_DEADLINE); CS_ENOSPACE, CS_EINPUT, CS_SINGULAR (dependent
 * joint rows) with m->jt NULL or unusable. thread: the workspace's caller. rt-safe: yes. */
cs_status cs__joints_build(cs_model *m, cs_workspace *ws, const cs_scene *s, cs_warmstart *warm,
                           cs__meter *meter);

/* cs__joints_build() for a solver that takes the joints as rows of its own problem (SAP,
 * sap.c): the joints' frames, factor and loops as there, so that a carried answer and the
 * certificate see rigid joints (cs__joints_velocity), but no reduction onto the contacts: m->vstar
 * stays the free velocity without joints, cs_model_delassus() is not available, and the solver
 * reads the rows from cs__joints_rows(). SAP takes this path because its problem is the
 * momentum balance over all velocities with every constraint a row of its convex cost
 * (Castro et al. 2022; Drake's SapHolonomicConstraint): the joints become near-rigid
 * regularized rows there, at O(rows) cost, whereas the reduction would cost 3 nc articulated
 * solves and a dense k x k matrix SAP never reads. Returns as cs__joints_build() (never
 * CS_DEADLINE). thread: the workspace's caller. rt-safe: yes. */
cs_status cs__joints_build_rows(cs_model *m, cs_workspace *ws, const cs_scene *s,
                                cs_warmstart *warm);

/* Every joint's rows at the current poses into rows [jt->art->rows], in the order of the joint
 * impulses (joint j's at art->row_off[j]), loops included, with their Baumgarte targets (a
 * kinematic body_b as a moving world: ib = -1, its velocity in the target). Returns the number
 * of rows. thread: the workspace's caller. rt-safe: yes. */
int cs__joints_rows(const cs_joints *jt, cs_art_row *rows);

/* Post-step velocity v [6 nb] under contact impulses lambda [3 nc] (contact frame), the joints
 * and their loops reacting, and, when lambda_j is not NULL, every joint's impulse into it
 * ([jt->art->rows], each joint's row frame, on body_a). thread: the workspace's caller. */
void cs__joints_velocity(const cs_joints *jt, const double *lambda, double *v, double *lambda_j);

/* W = the reduced Delassus matrix of the first `rows` rows (1 or 3) of each contact, column-
 * major, ldw >= rows nc, with every immobile contact pinned (cs__joints_is_immobile): its rows
 * and columns zero but for its own-mass diagonal, w0. Returns CS_CONVERGED, or CS_DEADLINE when
 * the build was cut short. */
cs_status cs__joints_delassus(const cs_joints *jt, int rows, double *W, int ldw);

/* True when the joints leave contact i immobile: its reduced normal diagonal is at rounding level
 * against its own-mass one, so no impulse on any contact changes its normal velocity (W is PSD:
 * its whole normal row is as small). Its impulse is then pinned to 0 (cs__joints_delassus,
 * cs__joints_pin_velocity), the least of the impulses the velocity problem leaves free; the joints
 * carry the load. False after a build cut short by the deadline. thread: the workspace's caller. */
bool cs__joints_is_immobile(const cs_joints *jt, int i);

/* The free contact velocities u [rows nc] (J v_f, contact frames, the first `rows` rows of each
 * contact: 1 or 3) as the pinned rows of cs__joints_delassus see them: an immobile contact's
 * normal velocity raised to its bound bias [nc] and its tangential velocities 0, so that a zero
 * impulse is its rows' only answer. */
void cs__joints_pin_velocity(const cs_joints *jt, int rows, const double *bias, double *u);

/* gen[6 nb] += J_j^T lambda_j, the generalized impulse of joint impulses lambda_j
 * [jt->art->rows]. */
void cs__joints_jt(const cs_joints *jt, const double *lambda_j, double *gen);

/* max |J_j v - b_j| over every joint row, loops included, at velocity v [6 nb]; m/s or rad/s. */
double cs__joints_violation(const cs_joints *jt, const double *v);

#endif /* CONTACTD_SOLVER_JOINTS_H */
