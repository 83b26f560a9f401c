/* SPDX-License-Identifier: MIT */
/* SAP's scene adapter onto the core (sap_core.c): turns a cs_model and its scene into SAP data
 * in the workspace every step (the FCLIB global form's adapter is sap_global.c).
 *
 * A = M = blockdiag(m I3, I_world) per body and v* = the model's free velocity (explicit
 * forces and gyroscopic term, model.c), i.e. Drake's stage 1 for free rigid bodies (sap.md
 * section 2). J is the model's contact Jacobian (rows n, t1, t2; up to two 3 x 6 body blocks).
 * The Delassus estimate of contact i is w_i = |W_ii|_F / 3 (Drake's RMS norm), W_ii =
 * sum over its bodies of J_i,b M_b^-1 J_i,b^T, exact because M is block diagonal (Drake
 * 0bfb29dc; Drake HEAD uses diag(M) instead). With the contact's stiffness k, dissipation time
 * scale tau_d and signed distance phi0 (sap_contact.c), SAP's velocity bias is
 * vhat_n = -phi0 / (dt + tau_d): a penetration is pushed out over dt + tau_d, a positive gap may
 * close before the contact pushes.
 *
 * A kinematic body's velocity is prescribed, so its dofs are no unknowns of the minimization: a
 * contact keeps only its free bodies' blocks in J (as for the world), and the kinematic side's
 * J_i,b v0_b, a constant, joins the bias. Those dofs then touch no contact, so the island rule
 * gives them v = v* = v0 (model.c), and A's zero block for them is never factored.
 *
 * Session defaults for a contact that gives no stiffness or dissipation (0 on the wire): rigid,
 * i.e. SAP's near-rigid regime with beta = 1 (the contact period is one time step), and
 * critical damping (tau_d = dt / pi there). Users set physics only; beta and sigma are not on the
 * wire. The initial guess is the previous answer's velocity of each body, by body id, and v* for
 * bodies the warm start does not know.
 *
 * JOINTS. SAP does not take the joints through Baraff's reduction onto the contacts (joints.h),
 * which the Delassus-form solvers read: its problem is the momentum balance over every velocity
 * with each constraint a term of one convex cost, so the joints join it as holonomic rows, as
 * in Drake's SAP (SapHolonomicConstraint; Castro et al. 2022 section VIII names bilateral
 * constraints as the extension). The step builds the joints with cs__joints_build_rows() (the
 * frames captured per session in the warm start, a kinematic body_b as a moving world, the
 * model's v* left free of them), and each joint's rows (cs__joints_rows: up to 6, with the
 * articulated module's Baumgarte target b) become blocks of up to three rows of the core's J,
 * each row with the quadratic law gamma = -(row v - b) / R, unbounded (sap_contact.h),
 * R = beta_joint^2 w / (4 pi^2), w = row M^-1 row^T exact for the block-diagonal M. Why
 * regularized rows rather than the reduction: the cost stays strongly convex whatever the
 * joints (redundant loop rows, a planar four-bar's, need no rank decision), a row costs O(1)
 * instead of the reduction's 3 nc articulated solves and k x k matrix, and Newton's matrix is
 * A + J^T G J as for contacts, so islands, line search and the deadline are unchanged. The
 * price is the law: the joints hold to R, about 2.5e-6 of the velocity their impulse makes (at
 * beta_joint = 0.01), and the certificate judges them on that law (certify.h). */
#include "solver/sap.h"

#include <math.h>
#include <string.h>

#include "solver/articulated.h"
#include "solver/deadline.h"
#include "solver/joints.h"
#include "solver/linalg.h"
#include "solver/sap_core.h"
#include "solver/warmstart.h"
#include "solver/workspace.h"

/* Entries per body in A (m on the linear diagonal, the full 3 x 3 world inertia) and dofs per
 * constraint block in J (6 for each of two bodies). */
#define A_NNZ_PER_BODY 12
#define J_DOFS_PER_CONTACT 12

/* Joint rows per constraint block of the core, and blocks per joint (at most 6 rows). */
#define BLOCK_ROWS 3
#define BLOCKS_PER_JOINT 2

/* Constraint blocks of a scene within lim: one per contact, up to two per joint. */
static int blocks_max(const cs_limits *lim) {
    return lim->max_contacts + BLOCKS_PER_JOINT * lim->max_joints;
}

/* Dofs of the largest island a scene within lim can form: an island of k >= 2 bodies needs
 * k - 1 contacts or joints between them, a single body at least one of either. */
static int island_dofs_max(const cs_limits *lim) {
    const int links = lim->max_contacts + lim->max_joints;
    if (links <= 0)
        return 0;
    return 6 * (links + 1 < lim->max_bodies ? links + 1 : lim->max_bodies);
}

size_t cs_sap_size(const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nc = (size_t)lim->max_contacts, nv = 6 * nb;
    const size_t nk = (size_t)blocks_max(lim), nr = 6 * (size_t)lim->max_joints;
    return cs__ws_bytes((nv + 1) * sizeof(int)) +
           cs__ws_bytes(A_NNZ_PER_BODY * nb * sizeof(int)) +
           cs__ws_bytes(A_NNZ_PER_BODY * nb * sizeof(double)) +
           cs__ws_bytes((nk + 1) * sizeof(int)) +
           cs__ws_bytes(J_DOFS_PER_CONTACT * nk * sizeof(int)) +
           cs__ws_bytes(3 * J_DOFS_PER_CONTACT * nk * sizeof(double)) +
           cs__ws_bytes(3 * nk * sizeof(double)) + cs__ws_bytes(nc * sizeof(double)) +
           cs__ws_bytes(cs_model_jacobian_size(lim)) +
           cs__ws_bytes(nk * sizeof(cs__sap_contact)) +
           cs__ws_bytes(cs__sap_islands_size((int)nv, (int)nk)) +
           cs__ws_bytes(cs__sap_work_size((int)nv, (int)nk, island_dofs_max(lim))) +
           (nr ? cs__ws_bytes(nr * sizeof(cs_art_row)) + cs__ws_bytes(3 * nk * sizeof(double)) +
                     cs__ws_bytes(nk)
               : 0);
}

/* A = blockdiag(m I3, I_world) in CSC. */
static void scene_mass(const cs_model *m, int *colptr, int *rowind, double *val) {
    int q = 0;
    for (int b = 0; b < m->nb; b++) {
        for (int k = 0; k < 3; k++) {
            colptr[6 * b + k] = q;
            rowind[q] = 6 * b + k;
            val[q++] = m->mass[b];
        }
        for (int k = 0; k < 3; k++) {
            colptr[6 * b + 3 + k] = q;
            for (int l = 0; l < 3; l++) {
                rowind[q] = 6 * b + 3 + l;
                val[q++] = m->iw[9 * b + 3 * l + k];
            }
        }
    }
    colptr[6 * m->nb] = q;
}

/* J by contact (sap_core.h) and, per contact, W_ii's RMS norm w[i] (1/kg), from the model's
 * Jacobian table js (cs_model_jacobian, rows n, t1, t2: each row's 6-vector per body and M_b^-1
 * times it). */
static void scene_jacobian(const cs_model *m, const double *js, int *ptr, int *col, double *val,
                           double *w, cs__meter *meter) {
    int q = 0;
    for (int i = 0; i < m->nc; i++) {
        // About 250 multiply-adds and copies per contact.
        if (cs__meter_add(meter, 250))
            return;
        // The contact's bodies in ascending order, the world (-1) left out.
        int body[2], side[2], nbody = 0;
        const int lo = m->ia[i] < m->ib[i] ? 0 : 1;
        for (int o = 0; o < 2; o++) {
            const int sd = o == 0 ? lo : 1 - lo, b = sd == 0 ? m->ia[i] : m->ib[i];
            if (b >= 0 && !cs_model_is_kinematic(m, b))
                body[nbody] = b, side[nbody++] = sd;
        }
        // W_ii = sum over its bodies of J_i,b M_b^-1 J_i,b^T (rows r of the table at
        // js + (6 i + 2 r + side) 12); symmetric, so the lower triangle gives its Frobenius norm.
        double W[3][3] = {{0}};
        for (int e = 0; e < nbody; e++) {
            const double *T = js + ((size_t)6 * i + side[e]) * 12;
            for (int r = 0; r < 3; r++)
                for (int s = 0; s <= r; s++)
                    for (int k = 0; k < 6; k++)
                        W[r][s] += T[24 * r + k] * T[24 * s + 6 + k];
        }
        w[i] = sqrt(W[0][0] * W[0][0] + W[1][1] * W[1][1] + W[2][2] * W[2][2] +
                    2 * (W[1][0] * W[1][0] + W[2][0] * W[2][0] + W[2][1] * W[2][1])) /
               3;
        // The bodies' dofs (6 each), then the contact's three rows over them.
        ptr[i] = q;
        for (int e = 0; e < nbody; e++)
            for (int k = 0; k < 6; k++)
                col[q++] = 6 * body[e] + k;
        const int nk = 6 * nbody;
        double *row = val + 3 * (size_t)ptr[i];
        for (int r = 0; r < 3; r++)
            for (int e = 0; e < nbody; e++)
                memcpy(row + r * nk + 6 * e, js + ((size_t)6 * i + 2 * r + side[e]) * 12,
                       6 * sizeof(double));
    }
    ptr[m->nc] = q;
}

/* out[r] += row r of contact i's Jacobian times the prescribed velocity of its kinematic
 * bodies (rows n, t1, t2; js as in scene_jacobian): their part of v_c = J v + bias. */
static void add_kinematic_velocity(const cs_model *m, const double *js, int i, double out[3]) {
    for (int side = 0; side < 2; side++) {
        const int b = side == 0 ? m->ia[i] : m->ib[i];
        if (b < 0 || !cs_model_is_kinematic(m, b))
            continue;
        for (int r = 0; r < 3; r++) {
            const double *g = js + ((size_t)6 * i + 2 * r + side) * 12, *v0 = m->v0 + 6 * b;
            for (int k = 0; k < 6; k++)
                out[r] += g[k] * v0[k];
        }
    }
}

/* g^T M_b^-1 g for a generalized row g [6] on body b: a row's Delassus diagonal there. */
static double row_minv(const cs_model *m, int b, const double *g) {
    double w = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / m->mass[b], x[3];
    cs_mat3_vec(x, m->iw_inv + 9 * b, g + 3);
    return w + g[3] * x[0] + g[4] * x[1] + g[5] * x[2];
}

double cs__sap_joint_regularization(const cs_model *m, const cs_art_row *R,
                                    const cs_sap_params *prm) {
    const cs_sap_params P = cs__sap_params_resolve(prm);
    const double w = (R->ia >= 0 ? row_minv(m, R->ia, R->ja) : 0) +
                     (R->ib >= 0 ? row_minv(m, R->ib, R->jb) : 0);
    // No stiffness given: the near-rigid branch, R = beta_joint^2 w / (4 pi^2).
    double r, rt, taud;
    cs__sap_regularize(w, m->dt, 0, 0, P.beta_joint, P.sigma, &r, &rt, &taud);
    return r;
}

/* The joints' part of SAP's problem, from block k0 on (ptr[k0] set): every joint's rows (rows,
 * cs__joints_rows) in blocks of up to three over the joint's bodies' dofs (ascending, the world
 * left out, padding rows zero), bias -b so that v_c = J v - b, and each row's near-rigid
 * regularization (sap.h, beta_joint). Returns the number of blocks. */
static int joint_blocks(const cs_model *m, const cs_articulated *a, const cs_art_row *rows,
                        const cs_sap_params *P, int k0, int *ptr, int *col, double *val,
                        double *bias, cs__sap_contact *con) {
    int k = k0, q = ptr[k0];
    for (int j = 0; j < a->nj; j++)
        for (int r0 = a->row_off[j]; r0 < a->row_off[j + 1]; r0 += BLOCK_ROWS, k++) {
            const int left = a->row_off[j + 1] - r0, nr = left < BLOCK_ROWS ? left : BLOCK_ROWS;
            // A joint's rows share its bodies: body_a always, body_b unless the (moving) world.
            const cs_art_row *R0 = &rows[r0];
            int body[2], side[2], nbody = 0;
            const int lo = R0->ib >= 0 && R0->ib < R0->ia ? 1 : 0;
            for (int o = 0; o < 2; o++) {
                const int sd = o == 0 ? lo : 1 - lo, b = sd == 0 ? R0->ia : R0->ib;
                if (b >= 0)
                    body[nbody] = b, side[nbody++] = sd;
            }
            ptr[k] = q;
            for (int e = 0; e < nbody; e++)
                for (int d = 0; d < 6; d++)
                    col[q++] = 6 * body[e] + d;
            const int nk = 6 * nbody;
            double *blk = val + 3 * (size_t)ptr[k], r[BLOCK_ROWS] = {0, 0, 0};
            for (int i = 0; i < BLOCK_ROWS; i++) {
                double *row = blk + i * nk;
                bias[3 * k + i] = 0;
                if (i >= nr) {
                    memset(row, 0, (size_t)nk * sizeof(double));
                    continue;
                }
                const cs_art_row *R = &rows[r0 + i];
                for (int e = 0; e < nbody; e++)
                    memcpy(row + 6 * e, side[e] == 0 ? R->ja : R->jb, 6 * sizeof(double));
                bias[3 * k + i] = -R->b;
                r[i] = cs__sap_joint_regularization(m, R, P);
            }
            cs__sap_holonomic_set(&con[k], r);
        }
    ptr[k] = q;
    return k - k0;
}

/* The joint impulses lambda_j [a->rows] from the joint blocks' gamma (from block k0 on). */
static void joint_impulses(const cs_articulated *a, const double *gamma, int k0,
                           double *lambda_j) {
    int k = k0;
    for (int j = 0; j < a->nj; j++)
        for (int r0 = a->row_off[j]; r0 < a->row_off[j + 1]; r0 += BLOCK_ROWS, k++)
            for (int i = 0; i < BLOCK_ROWS && r0 + i < a->row_off[j + 1]; i++)
                lambda_j[r0 + i] = gamma[3 * k + i];
}

/* Blocks the joints of jt take (0 without joints). */
static int joint_block_count(const cs_joints *jt) {
    int n = 0;
    for (int j = 0; jt && j < jt->art->nj; j++)
        n += (jt->art->row_off[j + 1] - jt->art->row_off[j] + BLOCK_ROWS - 1) / BLOCK_ROWS;
    return n;
}

cs_status cs_sap_solve_joints(cs_workspace *ws, const cs_model *m, const cs_scene *s,
                              const cs_options *opt, const cs_sap_params *prm,
                              const cs_warmstart *warm, double *lambda, double *lambda_j,
                              double *v, uint8_t *state, bool *no_iterate, cs_stats *st) {
    *st = (cs_stats){0};
    *no_iterate = false;
    const cs_sap_params P = cs__sap_params_resolve(prm);
    const cs_joints *jt = m->jt;
    // With the reduction the model's v* has the joints reacting, and SAP would hold them twice.
    if (jt && jt->reduced)
        return CS_EINPUT;
    const int nb = m->nb, nc = m->nc, nv = 6 * nb, nj = joint_block_count(jt), nk = nc + nj;
    const int nmax = island_dofs_max(cs__ws_limits(ws));
    const size_t mark = cs__ws_mark(ws);
    int *a_colptr = cs__ws_alloc(ws, (size_t)(nv + 1) * sizeof(int));
    int *a_rowind = cs__ws_alloc(ws, A_NNZ_PER_BODY * (size_t)nb * sizeof(int));
    double *a_val = cs__ws_alloc(ws, A_NNZ_PER_BODY * (size_t)nb * sizeof(double));
    int *j_ptr = cs__ws_alloc(ws, (size_t)(nk + 1) * sizeof(int));
    int *j_col = cs__ws_alloc(ws, J_DOFS_PER_CONTACT * (size_t)nk * sizeof(int));
    double *j_val = cs__ws_alloc(ws, 3 * J_DOFS_PER_CONTACT * (size_t)nk * sizeof(double));
    double *bias = cs__ws_alloc(ws, 3 * (size_t)nk * sizeof(double));
    double *wdel = cs__ws_alloc(ws, (size_t)nc * sizeof(double));
    double *js = cs__ws_alloc(ws, cs_model_jacobian_size(cs__ws_limits(ws)));
    cs__sap_contact *con = cs__ws_alloc(ws, (size_t)nk * sizeof(cs__sap_contact));
    void *isl_mem = cs__ws_alloc(ws, cs__sap_islands_size(nv, nk));
    void *work_mem = cs__ws_alloc(ws, cs__sap_work_size(nv, nk, nmax));
    // With joints the blocks' impulses and regions go past the contacts' own arrays.
    cs_art_row *rows = jt ? cs__ws_alloc(ws, (size_t)jt->art->rows * sizeof(cs_art_row)) : NULL;
    double *gamma = jt ? cs__ws_alloc(ws, 3 * (size_t)nk * sizeof(double)) : lambda;
    uint8_t *region = jt ? cs__ws_alloc(ws, (size_t)nk) : state;
    if (!a_colptr || !a_rowind || !a_val || !j_ptr || !j_col || !j_val || !bias || !wdel ||
        !js || !con || !isl_mem || !work_mem || (jt && (!rows || !gamma || !region))) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    // Setting up takes O(contacts) before the first iterate exists (tens of us at a session's
    // limits): a deadline that passes here leaves no iterate to answer with.
    cs__meter meter = cs__meter_start(opt);
    scene_mass(m, a_colptr, a_rowind, a_val);
    if (cs_model_jacobian(m, 3, js, &meter) == CS_CONVERGED)
        scene_jacobian(m, js, j_ptr, j_col, j_val, wdel, &meter);
    if (meter.passed) {
        cs__ws_release(ws, mark);
        *no_iterate = true;
        return CS_DEADLINE;
    }
    for (int i = 0; i < nc; i++) {
        const cs_contact *C = &s->contacts[i];
        double rn, rt, taud;
        cs__sap_regularize(wdel[i], m->dt, C->stiffness, C->dissipation, P.beta, P.sigma, &rn,
                           &rt, &taud);
        cs__sap_contact_set(&con[i], m->mu[i], rn, rt);
        // bias = -vhat, vhat_n = -phi0 / (dt + tau_d).
        bias[3 * i] = C->distance / (m->dt + taud);
        bias[3 * i + 1] = bias[3 * i + 2] = 0;
        add_kinematic_velocity(m, js, i, bias + 3 * i);
        // The regularization's divisions and square roots, the cone's set-up: about 60 units.
        (void)cs__meter_add(&meter, 60);
    }
    if (jt) {
        cs__joints_rows(jt, rows);
        joint_blocks(m, jt->art, rows, &P, nc, j_ptr, j_col, j_val, bias, con);
    }
    const cs__sap_problem prob = {
        .nv = nv, .nc = nk, .a_colptr = a_colptr, .a_rowind = a_rowind, .a_val = a_val,
        .j_ptr = j_ptr, .j_col = j_col, .j_val = j_val, .vstar = m->vstar,
        .bias = bias, .contact = con};
    for (int b = 0; b < nb; b++)
        if (!cs__warm_velocity(warm, s->bodies[b].id, v + 6 * b))
            memcpy(v + 6 * b, m->vstar + 6 * b, 6 * sizeof(double));
    cs__sap_islands is;
    cs__sap_islands_init(&is, isl_mem, nv, nk);
    if (meter.passed || !cs__sap_partition(&prob, &is, &meter)) {
        cs__ws_release(ws, mark);
        *no_iterate = true;
        return CS_DEADLINE;
    }
    CS_ASSERT(is.nmax <= nmax);
    cs__sap_work w;
    cs__sap_work_init(&w, work_mem, nv, nk, nmax);
    const cs_status status =
        cs__sap_newton(&prob, &is, &P, opt, &w, v, gamma, region, &st->iterations);
    if (jt && status >= 0 && nc > 0) {
        memcpy(lambda, gamma, 3 * (size_t)nc * sizeof(double));
        memcpy(state, region, (size_t)nc);
    }
    if (jt && status >= 0) {
        if (lambda_j)
            joint_impulses(jt->art, gamma, nc, lambda_j);
    }
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs_sap_solve(cs_workspace *ws, const cs_model *m, const cs_scene *s,
                       const cs_options *opt, const cs_sap_params *prm,
                       const cs_warmstart *warm, double *lambda, double *v, uint8_t *state,
                       bool *no_iterate, cs_stats *st) {
    return cs_sap_solve_joints(ws, m, s, opt, prm, warm, lambda, NULL, v, state, no_iterate,
                               st);
}

cs_status cs__sap_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out) {
    // SAP stops at the tolerance its answer is certified at.
    const cs_sap_params prm = {.rel_tol = in->opt->cert_tol};
    return cs_sap_solve_joints(ws, in->m, in->s, in->opt, &prm, in->warm, out->lambda,
                               out->lambda_j, out->v, out->state, &out->no_iterate, out->st);
}

static void warm_factor(int n, double *A, double *b, void *end) {
    if (cs__sap_chol(n, A, end, NULL) == 0)
        cs__sap_chol_solve(n, A, end, 1, b, NULL);
}

void cs__sap_warm_up(cs_workspace *ws) {
    const int n = 6 * cs__ws_limits(ws)->max_bodies;
    cs__ws_warm_factor(ws, n, (size_t)n * sizeof(int), warm_factor);
}
