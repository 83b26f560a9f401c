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
 * bodies the warm start does not know. */
#include "solver/sap.h"

#include <math.h>
#include <string.h>

#include "solver/deadline.h"
#include "solver/sap_core.h"
#include "solver/warmstart.h"
#include "solver/workspace.h"

/* Entries per body in A (m on the linear diagonal, the full 3 x 3 world inertia) and dofs per
 * contact in J (6 for each of two bodies). */
#define A_NNZ_PER_BODY 12
#define J_DOFS_PER_CONTACT 12

/* Dofs of the largest island a scene within lim can form: an island of k >= 2 bodies needs
 * k - 1 contacts between them, a single body at least one contact. */
static int island_dofs_max(const cs_limits *lim) {
    if (lim->max_contacts <= 0)
        return 0;
    const int bodies = lim->max_contacts + 1 < lim->max_bodies ? lim->max_contacts + 1
                                                                : lim->max_bodies;
    return 6 * bodies;
}

size_t cs_sap_size(const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nc = (size_t)lim->max_contacts, nv = 6 * nb;
    return cs__ws_bytes((nv + 1) * sizeof(int)) +
           cs__ws_bytes(A_NNZ_PER_BODY * nb * sizeof(int)) +
           cs__ws_bytes(A_NNZ_PER_BODY * nb * sizeof(double)) +
           cs__ws_bytes((nc + 1) * sizeof(int)) +
           cs__ws_bytes(J_DOFS_PER_CONTACT * nc * sizeof(int)) +
           cs__ws_bytes(3 * J_DOFS_PER_CONTACT * nc * sizeof(double)) +
           cs__ws_bytes(3 * nc * sizeof(double)) + cs__ws_bytes(nc * sizeof(double)) +
           cs__ws_bytes(cs_model_jacobian_size(lim)) +
           cs__ws_bytes(nc * sizeof(cs__sap_contact)) +
           cs__ws_bytes(cs__sap_islands_size((int)nv, (int)nc)) +
           cs__ws_bytes(cs__sap_work_size((int)nv, (int)nc, island_dofs_max(lim)));
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

cs_status cs_sap_solve(cs_workspace *ws, const cs_model *m, const cs_scene *s,
                       const cs_options *opt, const cs_sap_params *prm,
                       const cs_warmstart *warm, double *lambda, double *v, uint8_t *state,
                       bool *no_iterate, cs_stats *st) {
    *st = (cs_stats){0};
    *no_iterate = false;
    const cs_sap_params P = cs__sap_params_resolve(prm);
    const int nb = m->nb, nc = m->nc, nv = 6 * nb;
    const int nmax = island_dofs_max(cs__ws_limits(ws));
    const size_t mark = cs__ws_mark(ws);
    int *a_colptr = cs__ws_alloc(ws, (size_t)(nv + 1) * sizeof(int));
    int *a_rowind = cs__ws_alloc(ws, A_NNZ_PER_BODY * (size_t)nb * sizeof(int));
    double *a_val = cs__ws_alloc(ws, A_NNZ_PER_BODY * (size_t)nb * sizeof(double));
    int *j_ptr = cs__ws_alloc(ws, (size_t)(nc + 1) * sizeof(int));
    int *j_col = cs__ws_alloc(ws, J_DOFS_PER_CONTACT * (size_t)nc * sizeof(int));
    double *j_val = cs__ws_alloc(ws, 3 * J_DOFS_PER_CONTACT * (size_t)nc * sizeof(double));
    double *bias = cs__ws_alloc(ws, 3 * (size_t)nc * sizeof(double));
    double *wdel = cs__ws_alloc(ws, (size_t)nc * sizeof(double));
    double *js = cs__ws_alloc(ws, cs_model_jacobian_size(cs__ws_limits(ws)));
    cs__sap_contact *con = cs__ws_alloc(ws, (size_t)nc * sizeof(cs__sap_contact));
    void *isl_mem = cs__ws_alloc(ws, cs__sap_islands_size(nv, nc));
    void *work_mem = cs__ws_alloc(ws, cs__sap_work_size(nv, nc, nmax));
    if (!a_colptr || !a_rowind || !a_val || !j_ptr || !j_col || !j_val || !bias || !wdel ||
        !js || !con || !isl_mem || !work_mem) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    // Setting up takes O(contacts) before the first iterate exists (tens of us at a session's
    // limits): a deadline that passes here leaves no iterate to answer with.
    cs__meter meter = cs__meter_start(opt);
    scene_mass(m, a_colptr, a_rowind, a_val);
    cs_model_jacobian(m, 3, js);
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
    }
    const cs__sap_problem prob = {
        .nv = nv, .nc = nc, .a_colptr = a_colptr, .a_rowind = a_rowind, .a_val = a_val,
        .j_ptr = j_ptr, .j_col = j_col, .j_val = j_val, .vstar = m->vstar,
        .bias = bias, .contact = con};
    for (int b = 0; b < nb; b++)
        if (!cs__warm_velocity(warm, s->bodies[b].id, v + 6 * b))
            memcpy(v + 6 * b, m->vstar + 6 * b, 6 * sizeof(double));
    cs__sap_islands is;
    cs__sap_islands_init(&is, isl_mem, nv, nc);
    cs__sap_partition(&prob, &is);
    CS_ASSERT(is.nmax <= nmax);
    cs__sap_work w;
    cs__sap_work_init(&w, work_mem, nv, nc, nmax);
    const cs_status status =
        cs__sap_newton(&prob, &is, &P, opt, &w, v, lambda, state, &st->iterations);
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs__sap_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out) {
    // SAP stops at the tolerance its answer is certified at.
    const cs_sap_params prm = {.rel_tol = in->opt->cert_tol};
    return cs_sap_solve(ws, in->m, in->s, in->opt, &prm, in->warm, out->lambda, out->v,
                        out->state, &out->no_iterate, out->st);
}

static void warm_factor(int n, double *A, double *b, void *scratch) {
    (void)scratch;
    if (cs__sap_chol(n, A, NULL) == 0)
        cs__sap_chol_solve(n, A, 1, b, NULL);
}

void cs__sap_warm_up(cs_workspace *ws) {
    cs__ws_warm_factor(ws, 6 * cs__ws_limits(ws)->max_bodies, 0, warm_factor);
}
