/* SPDX-License-Identifier: MIT */
/* SAP on FCLIB's global form (see sap.h): M v = H r + f, u = H^T v + w, offline.
 *
 * Mapped onto the core as A = M, J = H^T (H's columns are J's rows; a contact's block spans the
 * union of its three columns' nonzeros, explicit zeros dropped, so a contact's dofs are the ones
 * it really touches), bias = w and v* = M^-1 f. M may be any sparse SPD matrix, so the islands
 * are the components of the graph of M + H H^T and each is factored densely: once for v* and the
 * exact Delassus blocks W_ii = H_i^T M^-1 H_i of its contacts, then once per Newton iteration by
 * the core. With no time step and no physical parameters, every contact is near-rigid:
 * R_n = beta^2 w_i / (4 pi^2), R_t = sigma w_i with the defaults of sap_core.c,
 * w_i = |W_ii|_F / 3. All memory is taken from the heap here and freed on return. */
#include "solver/sap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/sap_core.h"

/* Checks a CSC matrix with nrow rows and ncol columns: monotone column pointers from 0, row
 * indices in range, finite values. */
static bool csc_is_valid(int nrow, int ncol, const int *colptr, const int *rowind,
                         const double *val) {
    if (!colptr || colptr[0] != 0)
        return false;
    for (int j = 0; j < ncol; j++)
        if (colptr[j + 1] < colptr[j])
            return false;
    if (colptr[ncol] > 0 && (!rowind || !val))
        return false;
    for (int q = 0; q < colptr[ncol]; q++)
        if (rowind[q] < 0 || rowind[q] >= nrow || !isfinite(val[q]))
            return false;
    return true;
}

static bool finite_all(int n, const double *x) {
    if (n > 0 && !x)
        return false;
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

static bool input_is_valid(const cs_sap_global *p, const double *v, const double *r,
                           const double *u) {
    if (!p || p->nv < 0 || p->nc < 0 || (p->nv > 0 && !v) || (p->nc > 0 && (!r || !u || !p->mu)))
        return false;
    if (!csc_is_valid(p->nv, p->nv, p->m_colptr, p->m_rowind, p->m_val) ||
        !csc_is_valid(p->nv, 3 * p->nc, p->h_colptr, p->h_rowind, p->h_val))
        return false;
    if (!finite_all(p->nv, p->f) || !finite_all(3 * p->nc, p->w) || !finite_all(p->nc, p->mu))
        return false;
    for (int i = 0; i < p->nc; i++)
        if (p->mu[i] < 0)
            return false;
    return true;
}

/* Heap blocks of one solve. */
typedef struct global_mem {
    int *ptr, *col, *slot;
    double *val, *vstar, *X;
    cs__sap_contact *con;
    uint8_t *region;
    void *isl, *work;
} global_mem;

static void global_mem_free(global_mem *g) {
    free(g->ptr);
    free(g->col);
    free(g->slot);
    free(g->val);
    free(g->vstar);
    free(g->X);
    free(g->con);
    free(g->region);
    free(g->isl);
    free(g->work);
}

/* malloc that returns a valid pointer for 0 bytes too. */
static void *alloc(size_t n) {
    return malloc(n ? n : 1);
}

/* J = H^T by contact (sap_core.h): each contact's dofs are the rows its three columns of H hold
 * nonzeros in, each listed once, ascending. slot: [nv] scratch, all -1 on entry and on return.
 * val holds up to 3 nnz(H) entries. */
static void transpose_h(const cs_sap_global *p, int *ptr, int *col, double *val, int *slot) {
    int q = 0;
    for (int c = 0; c < p->nc; c++) {
        ptr[c] = q;
        for (int e = p->h_colptr[3 * c]; e < p->h_colptr[3 * c + 3]; e++) {
            const int j = p->h_rowind[e];
            if (p->h_val[e] == 0 || slot[j] >= 0)
                continue;
            // Insertion into the contact's sorted list (a contact touches few dofs).
            slot[j] = 0;
            int a = q++;
            for (; a > ptr[c] && col[a - 1] > j; a--)
                col[a] = col[a - 1];
            col[a] = j;
        }
        for (int a = ptr[c]; a < q; a++)
            slot[col[a]] = a;
        const int k = q - ptr[c];
        double *J = val + 3 * (size_t)ptr[c];
        for (int a = 0; a < 3 * k; a++)
            J[a] = 0;
        for (int r = 0; r < 3; r++)
            for (int e = p->h_colptr[3 * c + r]; e < p->h_colptr[3 * c + r + 1]; e++)
                if (p->h_val[e] != 0)
                    J[r * k + slot[p->h_rowind[e]] - ptr[c]] += p->h_val[e];
        for (int a = ptr[c]; a < q; a++)
            slot[col[a]] = -1;
    }
    ptr[p->nc] = q;
}

/* Factors M on every component, sets v* = M^-1 f there, and each contact's constants from its
 * exact Delassus block. Returns 0, or CS_SINGULAR when M is not positive definite. */
static cs_status prepare(const cs_sap_global *p, const cs__sap_problem *prob,
                         const cs__sap_islands *is, const cs_sap_params *prm, cs__sap_work *w,
                         double *vstar, double *X, cs__sap_contact *con) {
    for (int k = 0; k < is->n; k++) {
        const int n = is->dof_ptr[k + 1] - is->dof_ptr[k];
        const int *dof = is->dof + is->dof_ptr[k];
        cs__sap_dense_a(prob, is, k, w->H);
        if (cs__sap_chol(n, w->H, w->hend, NULL) < 0)
            return CS_SINGULAR;
        for (int i = 0; i < n; i++)
            w->b[i] = p->f[dof[i]];
        cs__sap_chol_solve(n, w->H, w->hend, 1, w->b, NULL);
        for (int i = 0; i < n; i++)
            vstar[dof[i]] = w->b[i];
        if (k >= is->ncontact)
            continue;
        for (int q = is->con_ptr[k]; q < is->con_ptr[k + 1]; q++) {
            // X = M^-1 J_c^T (three columns), then W = J_c X.
            const int c = is->con[q], q0 = prob->j_ptr[c], nk = prob->j_ptr[c + 1] - q0;
            const int *col = prob->j_col + q0;
            const double *J = prob->j_val + 3 * (size_t)q0;
            memset(X, 0, 3 * (size_t)n * sizeof(double));
            for (int r = 0; r < 3; r++)
                for (int a = 0; a < nk; a++)
                    X[(size_t)r * n + is->local[col[a]]] += J[r * nk + a];
            cs__sap_chol_solve(n, w->H, w->hend, 3, X, NULL);
            double fro = 0;
            for (int r = 0; r < 3; r++) {
                for (int s = 0; s < 3; s++) {
                    double W = 0;
                    for (int a = 0; a < nk; a++)
                        W += J[s * nk + a] * X[(size_t)r * n + is->local[col[a]]];
                    fro += W * W;
                }
            }
            double rn, rt, taud;
            cs__sap_regularize(sqrt(fro) / 3, 0, 0, 0, prm->beta, prm->sigma, &rn, &rt, &taud);
            cs__sap_contact_set(&con[c], p->mu[c], rn, rt);
        }
    }
    return CS_CONVERGED;
}

cs_status cs_sap_global_solve(const cs_sap_global *p, const cs_options *opt, double *v,
                              double *r, double *u, cs_stats *st) {
    cs_stats stats = {0};
    if (!input_is_valid(p, v, r, u)) {
        if (st)
            *st = stats;
        return CS_EINPUT;
    }
    const int nv = p->nv, nc = p->nc, nnz = p->h_colptr[3 * nc];
    const cs_sap_params prm = cs__sap_params_resolve(NULL);
    global_mem g = {
        .ptr = alloc((size_t)(nc + 1) * sizeof(int)),
        .col = alloc((size_t)nnz * sizeof(int)),
        .slot = alloc((size_t)nv * sizeof(int)),
        .val = alloc(3 * (size_t)nnz * sizeof(double)),
        .vstar = alloc((size_t)nv * sizeof(double)),
        .con = alloc((size_t)nc * sizeof(cs__sap_contact)),
        .region = alloc((size_t)nc),
        .isl = alloc(cs__sap_islands_size(nv, nc)),
    };
    cs_status status = CS_ENOSPACE;
    if (!g.ptr || !g.col || !g.slot || !g.val || !g.vstar || !g.con || !g.region || !g.isl)
        goto out;
    for (int j = 0; j < nv; j++)
        g.slot[j] = -1;
    transpose_h(p, g.ptr, g.col, g.val, g.slot);
    const cs__sap_problem prob = {
        .nv = nv, .nc = nc, .a_colptr = p->m_colptr, .a_rowind = p->m_rowind,
        .a_val = p->m_val, .j_ptr = g.ptr, .j_col = g.col, .j_val = g.val,
        .vstar = g.vstar, .bias = p->w, .contact = g.con};
    cs__sap_islands is;
    cs__sap_islands_init(&is, g.isl, nv, nc);
    (void)cs__sap_partition(&prob, &is, NULL);
    // Every component is factored once for v*, so the dense block fits the largest of all.
    const size_t work_bytes = cs__sap_work_size(nv, nc, is.nmax_all);
    g.work = alloc(work_bytes);
    g.X = alloc(3 * (size_t)is.nmax_all * sizeof(double));
    if (!g.work || !g.X)
        goto out;
    cs__sap_work w;
    cs__sap_work_init(&w, g.work, nv, nc, is.nmax_all);
    status = prepare(p, &prob, &is, &prm, &w, g.vstar, g.X, g.con);
    if (status != CS_CONVERGED)
        goto out;
    // Cold start from v*.
    memcpy(v, g.vstar, (size_t)nv * sizeof(double));
    status = cs__sap_newton(&prob, &is, &prm, opt, &w, v, r, g.region, &stats.iterations);
    if (status >= 0) {
        // u = H^T v + w, the contact velocities of the answer.
        for (int k = 0; k < 3 * nc; k++) {
            double s = p->w[k];
            for (int e = p->h_colptr[k]; e < p->h_colptr[k + 1]; e++)
                s += p->h_val[e] * v[p->h_rowind[e]];
            u[k] = s;
        }
    }
    stats.peak_bytes = work_bytes + cs__sap_islands_size(nv, nc);
out:
    global_mem_free(&g);
    if (st)
        *st = stats;
    return status;
}
