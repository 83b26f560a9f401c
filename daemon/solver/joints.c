/* SPDX-License-Identifier: MIT */
/* The scene's joints reduced onto its contacts (see joints.h; Baraff 1996, sections 7-8).
 *
 * THE REDUCTION. With the primary joints factored (articulated.c), anticipation gives, for the
 * rows k = [L; C] (L: loop closures, C: n, t1, t2 of every contact),
 *     a = A mu + afree,    A = J_k Mhat^-1 J_k^T,    afree = J_k v_free - b_k     (section 8.1)
 * where Mhat^-1 is the response with the primary joints reacting. The loops are bilateral,
 * a_L = 0, so mu_L = -A_LL^+ (afree_L + A_LC mu_C), and the contacts see
 *     a_C = W_c mu_C + c,    W_c = A_CC - A_CL A_LL^+ A_LC,    c = afree_C - A_CL A_LL^+ afree_L,
 * the Schur complement of A_LL. A planar loop's out-of-plane rows are redundant: A_LL is
 * singular, and its pivoted Cholesky (linalg.h) drops those rows; W_c and the velocities do not
 * depend on which of the equivalent loop impulses is taken (the rows span the same space). The
 * contacts' targets are 0, so c = J_c v_f, with v_f the velocity of every joint and loop
 * holding and no contact pushing: the model's vstar becomes v_f, and its Delassus matrix W_c.
 *
 * AFTER THE SOLVE. Contact impulses mu_C give mu_L as above, then one sparsesolve with
 * J_k^T mu on the right gives the velocity and the primary joints' impulses (section 8.2).
 * afree_L + A_LC mu_C is read off a first sparsesolve with the contact impulses alone, so the
 * map needs only A_LL, not the reduction.
 *
 * PINNED. A contact the joints hold still (a body welded to the world or to a kinematic body,
 * or held by joints that together leave it no freedom) gets a reduced normal diagonal of pure
 * rounding (PIN_REL_TOL), and its free velocity J v_f is rounding too. Its impulse moves
 * nothing, so the velocity problem leaves it free, and a solver facing a zero row with a free
 * velocity of either sign stops on a ray, a singular basis or a cycle, or returns an arbitrary
 * impulse the joints then balance. Such a contact is pinned at zero impulse, the
 * least of those answers, before any solver sees it: its rows of W are decoupled with the
 * own-mass diagonal and its free velocity lifted to its bound (cs__joints_delassus,
 * cs__joints_pin_velocity), so zero is their only answer and no pivot is spent on them. The
 * certificate then judges the velocity it really has: rounding, or a genuine approach no impulse
 * can stop, which fails it.
 *
 * DEADLINE. The factor, A_LL and v_f (O(n) and nl + 2 O(n) solves, nl <= 60) are built
 * whatever the deadline: every answer that goes out, a carried one too, needs them so that the
 * joints hold. The contacts' anticipation and the Schur complement (3 nc solves and O(k^2 nc))
 * are metered; cut short, the model has no Delassus matrix and the step falls back. */
#include "solver/joints.h"

#include <math.h>
#include <string.h>

#include "solver/articulated.h"
#include "solver/deadline.h"
#include "solver/idmap.h"
#include "solver/linalg.h"
#include "solver/model.h"
#include "solver/warmstart.h"
#include "solver/workspace.h"

/* A_LL's pivots below this fraction of its largest are redundant loop rows: a planar linkage's
 * out-of-plane rows come out at rounding level (1e-16 .. 1e-14), as in articulated.c. */
#define LOOP_REL_TOL 1e-10
/* A contact whose reduced normal diagonal is below this fraction of its own-mass one is immobile
 * (PINNED). Rounding leaves about 2e-14 (L / 1 m)^2 of it for a 0.2 m box welded at an anchor L
 * away (test_physics.c's welds, measured: 2e-10 at L = 100 m; the factor refuses such joints
 * beyond a few hundred metres). A contact that moves keeps at least about its body's mass over
 * the mass that holds it, so only a mass ratio beyond 1e9 is pinned by mistake, and then the
 * certificate judges the velocity the pin leaves: a contact that needed an impulse fails it. */
#define PIN_REL_TOL 1e-9

/* Loop-closure rows the articulated factor anticipates at most for lim (articulated.h). */
static int loop_rows_max(const cs_limits *lim) {
    const int k = 6 * lim->max_joints;
    return k < CS_ARTICULATED_AUX_MAX ? k : CS_ARTICULATED_AUX_MAX;
}

static size_t work_doubles(int nl) {
    const size_t w = cs_psd_work(nl);
    return w > (size_t)nl ? w : (size_t)nl;
}

size_t cs__joints_size(const cs_limits *lim) {
    if (lim->max_joints <= 0)
        return 0;
    const int nl = loop_rows_max(lim);
    const size_t k = (size_t)nl + 3 * (size_t)lim->max_contacts, nb = (size_t)lim->max_bodies;
    const size_t keep = cs__ws_bytes(sizeof(cs_joints)) + cs__ws_bytes(nb * sizeof(cs_art_body)) +
                        cs__ws_bytes((size_t)lim->max_joints * sizeof(cs_art_joint)) +
                        cs__ws_bytes(k * sizeof(cs_art_row)) +
                        cs__ws_bytes((size_t)nl * (size_t)nl * sizeof(double)) +
                        cs__ws_bytes((size_t)nl * sizeof(int)) +
                        cs__ws_bytes((size_t)nl * sizeof(double)) +
                        cs__ws_bytes(k * sizeof(double)) +
                        cs__ws_bytes(3 * (size_t)lim->max_contacts * sizeof(double)) +
                        cs__ws_bytes(work_doubles(nl) * sizeof(double)) +
                        2 * cs__ws_bytes(6 * nb * sizeof(double)) + cs_articulated_size(lim) +
                        cs__ws_bytes(k * k * sizeof(double));
    // Before the factor the body id map, after it the contact rows' Jacobian table: never both.
    const size_t ids = cs__ws_bytes(nb * sizeof(cs_idpos)), js = cs_model_jacobian_size(lim);
    return keep + (ids > js ? ids : js);
}

/* The bodies as the articulated factor sees them, from the model's mass and world inertia (so
 * that joints and contacts share one mass matrix) and the scene's poses. The one place a body
 * becomes an articulated body. A kinematic body keeps its pose (its joints are captured in its
 * frame) and gets a unit mass that nothing ever pushes: its joints see it as a moving world
 * (moving_world) and the contacts' rows leave it out (contact_rows), so the factor solves it to
 * its prescribed velocity, v*. */
static void art_bodies(cs_art_body *bodies, const cs_model *m, const cs_scene *s) {
    for (int b = 0; b < s->nb; b++) {
        const cs_body *B = &s->bodies[b];
        cs_art_body *A = &bodies[b];
        // Renormalised as the model's inertia was (validation allows |q| within 1e-6 of 1).
        const double qn = sqrt(B->quat[0] * B->quat[0] + B->quat[1] * B->quat[1] +
                               B->quat[2] * B->quat[2] + B->quat[3] * B->quat[3]);
        const double q[4] = {B->quat[0] / qn, B->quat[1] / qn, B->quat[2] / qn, B->quat[3] / qn};
        cs_quat_to_mat3(A->rot, q);
        if (cs_model_is_kinematic(m, b)) {
            static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
            A->mass = 1;
            memcpy(A->iw, I3, sizeof A->iw);
        } else {
            A->mass = m->mass[b];
            memcpy(A->iw, m->iw + 9 * b, sizeof A->iw);
        }
        memcpy(A->pos, B->pos, sizeof A->pos);
    }
}

/* Joint J's body_b B (kinematic, scene body K) as the moving world it is: J's frames on that side
 * at B's current pose, in the world, and B's prescribed velocity (articulated.h, vb). */
static void moving_world(cs_art_joint *J, const cs_art_body *B, const cs_body *K) {
    double lb[3], fb[9];
    cs_mat3_vec(lb, B->rot, J->lb);
    for (int k = 0; k < 3; k++) {
        J->lb[k] = B->pos[k] + lb[k];
        cs_mat3_vec(fb + 3 * k, B->rot, J->fb + 3 * k);
    }
    memcpy(J->fb, fb, sizeof fb);
    memcpy(J->vb, K->v, 3 * sizeof(double));
    memcpy(J->vb + 3, K->w, 3 * sizeof(double));
    memcpy(J->cb, B->pos, sizeof J->cb);
    J->ib = -1;
}

/* Every joint of s with body indices and frames: those warm remembers for the same joint id,
 * kind and bodies, else captured at the current poses; warm then remembers these. ids: [nb]
 * scratch. Returns CS_CONVERGED or CS_EINPUT (a body unknown, or the world as body_a). */
static cs_status art_joints(cs_art_joint *joints, const cs_scene *s, const cs_art_body *bodies,
                            cs_warmstart *warm, cs_idpos *ids) {
    for (int b = 0; b < s->nb; b++)
        ids[b] = (cs_idpos){.id = s->bodies[b].id, .pos = b};
    cs__idmap_sort(ids, s->nb);
    for (int j = 0; j < s->nj; j++) {
        const cs_joint *J = &s->joints[j];
        const int ia = J->body_a ? cs__idmap_find(ids, s->nb, J->body_a) : -1;
        const int ib = J->body_b ? cs__idmap_find(ids, s->nb, J->body_b) : -1;
        if (ia < 0 || (J->body_b && ib < 0))
            return CS_EINPUT;
        if (!cs__warm_joint_frame(warm, J, &joints[j]))
            cs_articulated_joint_capture(&joints[j], J->kind, ia, ib, bodies, J->anchor,
                                         J->axis);
        joints[j].ia = ia;
        joints[j].ib = ib;
    }
    // Remembered in the bodies' own frames, then a kinematic body_b becomes a moving world.
    if (warm)
        cs__warm_store_joints(warm, s->joints, s->nj, joints);
    for (int j = 0; j < s->nj; j++) {
        const int ib = joints[j].ib;
        if (ib >= 0 && s->bodies[ib].kinematic)
            moving_world(&joints[j], &bodies[ib], &s->bodies[ib]);
    }
    return CS_CONVERGED;
}

/* The contacts' rows n, t1, t2 as generic rows with target 0, from the model's Jacobian, and
 * each row's own-mass Delassus diagonal into w0 [3 nc]. */
static cs_status contact_rows(const cs_model *m, cs_workspace *ws, cs_art_row *rows,
                              double *w0) {
    const size_t mark = cs__ws_mark(ws);
    double *js = cs__ws_alloc(ws, cs_model_jacobian_size(cs__ws_limits(ws)));
    if (!js && m->nc > 0)
        return CS_ENOSPACE;
    // Whatever the deadline: a carried answer's joints need these rows too (DEADLINE).
    (void)cs_model_jacobian(m, 3, js, NULL);
    for (int r = 0; r < 3 * m->nc; r++) {
        cs_art_row *R = &rows[r];
        // A kinematic side takes no impulse (its M^-1 is zero): the row leaves it out.
        const int ia = m->ia[r / 3], ib = m->ib[r / 3];
        R->ia = ia >= 0 && !cs_model_is_kinematic(m, ia) ? ia : -1;
        R->ib = ib >= 0 && !cs_model_is_kinematic(m, ib) ? ib : -1;
        memcpy(R->ja, js + (size_t)(2 * r) * 12, sizeof R->ja);
        memcpy(R->jb, js + (size_t)(2 * r + 1) * 12, sizeof R->jb);
        R->b = 0;
        // J_r M^-1 J_r^T: each side's row against its M_b^-1 image (zero for the world).
        const double *ja = js + (size_t)(2 * r) * 12, *jb = ja + 12;
        w0[r] = 0;
        for (int k = 0; k < 6; k++)
            w0[r] += ja[k] * ja[6 + k] + jb[k] * jb[6 + k];
    }
    cs__ws_release(ws, mark);
    return CS_CONVERGED;
}

/* R v - R.b: how far velocity v misses row R's target. */
static double row_miss(const cs_art_row *R, const double *v) {
    double s = -R->b;
    for (int i = 0; i < 6; i++)
        s += (R->ia >= 0 ? R->ja[i] * v[6 * R->ia + i] : 0) +
             (R->ib >= 0 ? R->jb[i] * v[6 * R->ib + i] : 0);
    return s;
}

/* x[nl] = A_LL^+ b[nl], the loop impulses' minimum-effort solve (x may alias b). */
static void loop_solve(const cs_joints *jt, const double *b, double *x) {
    cs_psd_solve(jt->nl, jt->L, jt->nl, jt->piv, jt->rank, b, x, jt->work);
}

/* The loops alone: A_LL, its factor, afree_L, and v_f into vf [6 nb] (no deadline). */
static cs_status close_loops(cs_joints *jt, cs_workspace *ws, double *vf) {
    const int nl = jt->nl;
    if (nl > 0) {
        cs_status st = cs_articulated_anticipate(jt->art, ws, jt->vstar, nl, jt->rows, jt->L, nl,
                                                 jt->afree, NULL);
        if (st == CS_CONVERGED &&
            cs_psd_factor(nl, jt->L, nl, jt->piv, &jt->rank, LOOP_REL_TOL, jt->work) != 0)
            st = CS_SINGULAR;
        if (st != CS_CONVERGED)
            return st;
        for (int l = 0; l < nl; l++)
            jt->mu[l] = -jt->afree[l];
        loop_solve(jt, jt->mu, jt->mu);
    }
    return cs_articulated_solve(jt->art, jt->vstar, nl, jt->rows, jt->mu, vf, NULL, NULL);
}

/* A over every row, and its contact block made W_c (the Schur complement of A_LL). */
static cs_status reduce(cs_joints *jt, cs_workspace *ws, cs__meter *meter) {
    const int nl = jt->nl, k = jt->k, n = 3 * jt->nc;
    double *A = jt->A;
    if (n == 0)
        return CS_CONVERGED;
    cs_status st = cs_articulated_anticipate(jt->art, ws, jt->vstar, k, jt->rows, A, k,
                                             jt->mu, meter);
    for (int c = 0; c < n && nl > 0 && st == CS_CONVERGED; c++) {
        double *col = A + (size_t)(nl + c) * k;
        loop_solve(jt, col, jt->mu);
        // Row nl + r of A_CL: A_CL = A_LC^T.
        for (int r = 0; r < n; r++) {
            double s = 0;
            for (int l = 0; l < nl; l++)
                s += A[(size_t)l * k + nl + r] * jt->mu[l];
            col[nl + r] -= s;
        }
        if (meter && cs__meter_add(meter, 2 * (int64_t)nl * (nl + n)))
            st = CS_DEADLINE;
    }
    if (st != CS_CONVERGED)
        return st;
    // Symmetric in exact arithmetic: average the halves' rounding.
    for (int c = 0; c < n; c++)
        for (int r = 0; r < c; r++) {
            double *x = &A[(size_t)(nl + c) * k + nl + r], *y = &A[(size_t)(nl + r) * k + nl + c];
            *x = *y = 0.5 * (*x + *y);
        }
    return CS_CONVERGED;
}

/* cs__joints_build() (reduce: the contacts' reduction and v_f in m->vstar) and
 * cs__joints_build_rows() (neither). */
static cs_status build(cs_model *m, cs_workspace *ws, const cs_scene *s, cs_warmstart *warm,
                       cs__meter *meter, bool reduced) {
    m->jt = NULL;
    if (s->nj == 0)
        return CS_CONVERGED;
    const cs_limits *lim = cs__ws_limits(ws);
    const int nb = s->nb, nlmax = loop_rows_max(lim), kmax = nlmax + 3 * s->nc;
    cs_joints *jt = cs__ws_zalloc(ws, sizeof *jt);
    cs_art_body *bodies = cs__ws_alloc(ws, (size_t)nb * sizeof(cs_art_body));
    cs_art_joint *joints = cs__ws_alloc(ws, (size_t)s->nj * sizeof(cs_art_joint));
    cs_art_row *rows = cs__ws_alloc(ws, (size_t)kmax * sizeof(cs_art_row));
    double *vstar = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *y = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    double *L = cs__ws_alloc(ws, (size_t)nlmax * (size_t)nlmax * sizeof(double));
    int *piv = cs__ws_alloc(ws, (size_t)nlmax * sizeof(int));
    double *afree = cs__ws_alloc(ws, (size_t)nlmax * sizeof(double));
    double *mu = cs__ws_alloc(ws, (size_t)kmax * sizeof(double));
    double *w0 = cs__ws_alloc(ws, 3 * (size_t)s->nc * sizeof(double));
    double *work = cs__ws_alloc(ws, work_doubles(nlmax) * sizeof(double));
    if (!jt || !bodies || !joints || !rows || !vstar || !y || !L || !piv || !afree || !mu ||
        (s->nc && !w0) || !work)
        return CS_ENOSPACE;
    memcpy(vstar, m->vstar, 6 * (size_t)nb * sizeof(double));
    *jt = (cs_joints){.nb = nb, .nc = s->nc, .rows = rows, .L = L, .piv = piv, .afree = afree,
                      .w0 = w0, .vstar = vstar, .mu = mu, .work = work, .y = y,
                      .reduced = reduced};

    art_bodies(bodies, m, s);
    const size_t mark = cs__ws_mark(ws);
    cs_idpos *ids = cs__ws_alloc(ws, (size_t)nb * sizeof(cs_idpos));
    cs_status st = ids ? art_joints(joints, s, bodies, warm, ids) : CS_ENOSPACE;
    cs__ws_release(ws, mark);
    cs_articulated *art = NULL;
    // With no warm start every frame is captured now: no error to correct, beta is moot.
    if (st == CS_CONVERGED)
        st = cs_articulated_factor(&art, ws, nb, bodies, s->nj, joints, s->dt, CS_JOINTS_BETA,
                                   NULL);
    if (st != CS_CONVERGED)
        return st;
    jt->art = art;
    jt->nl = art->naux;
    jt->k = art->naux + 3 * s->nc;
    memcpy(rows, art->aux_rows, (size_t)art->naux * sizeof(cs_art_row));
    st = contact_rows(m, ws, rows + art->naux, w0);
    // Without the reduction v_f is not the model's: the solver's own rows hold the joints.
    if (st == CS_CONVERGED)
        st = close_loops(jt, ws, reduced ? m->vstar : y);
    if (st != CS_CONVERGED)
        return st;
    m->jt = jt;
    if (!reduced)
        return CS_CONVERGED;
    double *A = cs__ws_alloc(ws, (size_t)jt->k * (size_t)jt->k * sizeof(double));
    if (!A && jt->k > 0)
        return CS_ENOSPACE;
    jt->A = A;
    st = reduce(jt, ws, meter);
    if (st != CS_CONVERGED)
        jt->A = NULL;
    return st;
}

cs_status cs__joints_build(cs_model *m, cs_workspace *ws, const cs_scene *s, cs_warmstart *warm,
                           cs__meter *meter) {
    return build(m, ws, s, warm, meter, true);
}

cs_status cs__joints_build_rows(cs_model *m, cs_workspace *ws, const cs_scene *s,
                                cs_warmstart *warm) {
    return build(m, ws, s, warm, NULL, false);
}

void cs__joints_velocity(const cs_joints *jt, const double *lambda, double *v, double *lambda_j) {
    const int nl = jt->nl, n = 3 * jt->nc;
    double *mu = jt->mu;
    // a_L = A_LL mu_L + (afree_L + A_LC mu_C) = 0, the bracket from the contacts' impulses alone.
    if (nl > 0) {
        cs_articulated_solve(jt->art, jt->vstar, n, jt->rows + nl, lambda, jt->y, NULL, NULL);
        for (int l = 0; l < nl; l++)
            mu[l] = -row_miss(&jt->rows[l], jt->y);
        loop_solve(jt, mu, mu);
    }
    memcpy(mu + nl, lambda, (size_t)n * sizeof(double));
    cs_articulated_solve(jt->art, jt->vstar, jt->k, jt->rows, mu, v, lambda_j, NULL);
    if (!lambda_j)
        return;
    // The loop joints' impulses are their anticipated rows', in joint order.
    const cs_articulated *a = jt->art;
    int r = 0;
    for (int j = 0; j < a->nj; j++)
        if (a->aux[j])
            for (int i = a->row_off[j]; i < a->row_off[j + 1]; i++)
                lambda_j[i] = mu[r++];
}

bool cs__joints_is_immobile(const cs_joints *jt, int i) {
    const size_t r = (size_t)jt->nl + 3 * (size_t)i;
    return jt->A && jt->A[r * (size_t)jt->k + r] <= PIN_REL_TOL * jt->w0[3 * i];
}

cs_status cs__joints_delassus(const cs_joints *jt, int rows, double *W, int ldw) {
    const int nl = jt->nl, k = jt->k;
    if (!jt->A)
        return CS_DEADLINE;
    for (int j = 0; j < jt->nc; j++) {
        const bool pin_j = cs__joints_is_immobile(jt, j);
        for (int q = 0; q < rows; q++) {
            const double *src = jt->A + (size_t)(nl + 3 * j + q) * k + nl;
            double *dst = W + (size_t)(rows * j + q) * ldw;
            for (int i = 0; i < jt->nc; i++) {
                const bool pin = pin_j || cs__joints_is_immobile(jt, i);
                for (int r = 0; r < rows; r++)
                    dst[rows * i + r] = !pin ? src[3 * i + r]
                                        : i == j && r == q ? jt->w0[3 * i + r]
                                                           : 0;
            }
        }
    }
    return CS_CONVERGED;
}

void cs__joints_pin_velocity(const cs_joints *jt, int rows, const double *bias, double *u) {
    for (int i = 0; i < jt->nc; i++)
        if (cs__joints_is_immobile(jt, i)) {
            double *ui = u + rows * i;
            ui[0] = ui[0] > bias[i] ? ui[0] : bias[i];
            for (int r = 1; r < rows; r++)
                ui[r] = 0;
        }
}

/* Joint j's rows (at most 6) into rows; returns their number. */
static int joint_rows(const cs_joints *jt, int j, cs_art_row rows[6]) {
    cs_articulated_joint_rows(jt->art, j, rows);
    return jt->art->row_off[j + 1] - jt->art->row_off[j];
}

int cs__joints_rows(const cs_joints *jt, cs_art_row *rows) {
    const cs_articulated *a = jt->art;
    for (int j = 0; j < a->nj; j++)
        joint_rows(jt, j, rows + a->row_off[j]);
    return a->rows;
}

void cs__joints_jt(const cs_joints *jt, const double *lambda_j, double *gen) {
    const cs_articulated *a = jt->art;
    for (int j = 0; j < a->nj; j++) {
        cs_art_row rows[6];
        const int d = joint_rows(jt, j, rows);
        for (int r = 0; r < d; r++) {
            const cs_art_row *R = &rows[r];
            const double l = lambda_j[a->row_off[j] + r];
            for (int i = 0; i < 6; i++) {
                if (R->ia >= 0)
                    gen[6 * R->ia + i] += R->ja[i] * l;
                if (R->ib >= 0)
                    gen[6 * R->ib + i] += R->jb[i] * l;
            }
        }
    }
}

double cs__joints_violation(const cs_joints *jt, const double *v) {
    double worst = 0;
    for (int j = 0; j < jt->art->nj; j++) {
        cs_art_row rows[6];
        const int d = joint_rows(jt, j, rows);
        for (int r = 0; r < d; r++) {
            const double miss = row_miss(&rows[r], v);
            // A NaN velocity must not pass as no violation.
            worst = fabs(miss) > worst || miss != miss ? fabs(miss) : worst;
        }
    }
    return worst;
}
