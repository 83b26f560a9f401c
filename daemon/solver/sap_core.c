/* SPDX-License-Identifier: MIT */
/* The SAP core (see sap_core.h): islands and Newton's method on SAP's convex cost.
 *
 * THE PROBLEM (Castro et al. 2022, eq. 24; sap.md section 4). Minimize over generalized
 * velocities v
 *     l(v) = |v - v*|_A^2 / 2 + sum_i gamma_i^T R_i gamma_i / 2,
 *     gamma_i = P_F(y_i),  y_i = -R_i^-1 v_c,i,  v_c = J v + bias,
 * with A symmetric positive definite and P_F the R-norm projection onto the friction cone
 * (sap_contact.c). l is strongly convex and C^1 with gradient
 *     grad l = A (v - v*) - J^T gamma,
 * the momentum balance's residual, so the minimizer is the step's answer, and C^2 away from the
 * region boundaries with Hessian H = A + J^T G J, G = blockdiag(G_i) positive semidefinite.
 *
 * ISLANDS. Dofs coupled neither through A nor through a common contact are independent: the
 * components of the graph of A + J^T J split l into independent sums. Components without a
 * contact are solved by v = v*; each other one is minimized on its own, with a dense Newton
 * matrix of its own size, so the cost follows islands and contacts, not the square of all dofs.
 *
 * THE ALGORITHM (paper section IV, Algorithm 1; sap.md section 7), per island:
 *     evaluate gamma, l, grad at v; stop when |D grad| <= eps_a + eps_r max(|D A v|, |D J^T gamma|)
 *     (D = diag(A)^-1/2, so every component is in sqrt(J); paper eqs. 25-26) or when the last
 *     step changed l by round-off only (with alpha > 1/2);
 *     otherwise H dv = -grad (dense Cholesky), v += alpha dv with alpha from the line search.
 *
 * WHY IT TERMINATES. dv is a descent direction (H is SPD) and the line search minimizes l along
 * it (exact) or decreases it sufficiently (Armijo), so l decreases strictly; l is strongly
 * convex with Lipschitz gradient (paper appendix E), so the iteration converges globally, and
 * quadratically near the answer. In floating point the cap prm->max_iterations bounds it; the
 * deadline is checked before every factorization, and a meter (deadline.h) reads it inside the
 * long stretches of an iteration (assembly, factorization, solve, line search), which then stop
 * with v untouched. Each iterate lowers the cost, so the iterate at the deadline is a usable,
 * labelled answer. */
#include "solver/sap_core.h"

#include <math.h>
#include <string.h>

#include "solver/deadline.h"
#include "solver/linalg.h"
#include "solver/sap_linesearch.h"
#include "solver/simd.h"
#include "solver/workspace.h"

/* BLAS (BLIS) and LAPACK, Fortran interface. */
extern void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag,
                   const int *m, const int *n, const double *alpha, const double *a,
                   const int *lda, double *b, const int *ldb);
extern void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *beta,
                   double *c, const int *ldc);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info);

size_t cs__sap_islands_size(int nv, int nc) {
    const size_t n = (size_t)nv;
    return 3 * cs__ws_bytes(n * sizeof(int)) + 3 * cs__ws_bytes((n + 1) * sizeof(int)) +
           cs__ws_bytes((size_t)nc * sizeof(int));
}

/* Carves n bytes off *mem (64-byte steps, as the workspace does). */
static void *take(unsigned char **mem, size_t n) {
    void *p = *mem;
    *mem += cs__ws_bytes(n);
    return p;
}

void cs__sap_islands_init(cs__sap_islands *is, void *mem, int nv, int nc) {
    unsigned char *m = mem;
    const size_t n = (size_t)nv;
    *is = (cs__sap_islands){0};
    is->dof = take(&m, n * sizeof(int));
    is->local = take(&m, n * sizeof(int));
    is->comp = take(&m, n * sizeof(int));
    is->dof_ptr = take(&m, (n + 1) * sizeof(int));
    is->con_ptr = take(&m, (n + 1) * sizeof(int));
    is->scratch = take(&m, (n + 1) * sizeof(int));
    is->con = take(&m, (size_t)nc * sizeof(int));
}

/* Union-find with path halving; the smaller index becomes the root, so the partition does not
 * depend on the order of the unions. */
static int find(int *root, int i) {
    while (root[i] != i) {
        root[i] = root[root[i]];
        i = root[i];
    }
    return i;
}

static void unite(int *root, int a, int b) {
    a = find(root, a);
    b = find(root, b);
    if (a < b)
        root[b] = a;
    else if (b < a)
        root[a] = b;
}

/* First dof contact c touches, or -1. */
static int contact_dof(const cs__sap_problem *p, int c) {
    return p->j_ptr[c] < p->j_ptr[c + 1] ? p->j_col[p->j_ptr[c]] : -1;
}

/* Meter units of a union of two dofs (two finds of a few steps each). */
#define UNITE_UNITS 8

bool cs__sap_partition(const cs__sap_problem *p, cs__sap_islands *is, cs__meter *meter) {
    const int nv = p->nv, nc = p->nc;
    int *root = is->comp, *id = is->local;
    for (int i = 0; i < nv; i++)
        root[i] = i;
    for (int j = 0; j < nv; j++)
        for (int q = p->a_colptr[j]; q < p->a_colptr[j + 1]; q++)
            unite(root, p->a_rowind[q], j);
    // The contacts are the long part at a session's limits (hundreds, each on up to 12 dofs).
    for (int c = 0; c < nc; c++) {
        const int first = contact_dof(p, c);
        for (int q = p->j_ptr[c]; q < p->j_ptr[c + 1]; q++) {
            CS_ASSERT(q == p->j_ptr[c] || p->j_col[q] > p->j_col[q - 1]);
            unite(root, first, p->j_col[q]);
        }
        if (meter && cs__meter_add(meter, UNITE_UNITS * (int64_t)(p->j_ptr[c + 1] - p->j_ptr[c])))
            return false;
    }
    // Number the components, those with contacts first (in contact order).
    for (int i = 0; i < nv; i++)
        id[i] = -1;
    int n = 0;
    for (int c = 0; c < nc; c++) {
        const int d = contact_dof(p, c);
        if (d >= 0 && id[find(root, d)] < 0)
            id[find(root, d)] = n++;
        if (meter && cs__meter_add(meter, UNITE_UNITS))
            return false;
    }
    is->ncontact = n;
    for (int i = 0; i < nv; i++)
        if (id[find(root, i)] < 0)
            id[find(root, i)] = n++;
    is->n = n;
    // comp[i] = component of dof i (through dof[] as a temporary, since find reads root).
    for (int i = 0; i < nv; i++)
        is->dof[i] = id[find(root, i)];
    memcpy(is->comp, is->dof, (size_t)nv * sizeof(int));

    // Counting sort of dofs by component; local[] = position inside it.
    int *cur = is->scratch;
    memset(is->dof_ptr, 0, (size_t)(n + 1) * sizeof(int));
    for (int i = 0; i < nv; i++)
        is->dof_ptr[is->comp[i] + 1]++;
    for (int k = 0; k < n; k++)
        is->dof_ptr[k + 1] += is->dof_ptr[k];
    memcpy(cur, is->dof_ptr, (size_t)n * sizeof(int));
    for (int i = 0; i < nv; i++) {
        const int k = is->comp[i];
        is->local[i] = cur[k] - is->dof_ptr[k];
        is->dof[cur[k]++] = i;
    }
    is->nmax = is->nmax_all = 0;
    for (int k = 0; k < n; k++) {
        const int sz = is->dof_ptr[k + 1] - is->dof_ptr[k];
        is->nmax_all = sz > is->nmax_all ? sz : is->nmax_all;
        if (k < is->ncontact)
            is->nmax = sz > is->nmax ? sz : is->nmax;
    }

    // The same for contacts; those touching no dof go last.
    const int nk = is->ncontact;
    memset(is->con_ptr, 0, (size_t)(nk + 1) * sizeof(int));
    for (int c = 0; c < nc; c++) {
        const int d = contact_dof(p, c);
        if (d >= 0)
            is->con_ptr[is->comp[d] + 1]++;
    }
    for (int k = 0; k < nk; k++)
        is->con_ptr[k + 1] += is->con_ptr[k];
    memcpy(cur, is->con_ptr, (size_t)(nk + 1) * sizeof(int));
    for (int c = 0; c < nc; c++) {
        const int d = contact_dof(p, c);
        is->con[d >= 0 ? cur[is->comp[d]]++ : cur[nk]++] = c;
    }
    return !(meter && cs__meter_add(meter, 4 * (int64_t)nc));
}

size_t cs__sap_work_size(int nv, int nc, int nmax) {
    const size_t n = (size_t)nv, m = (size_t)nc, k = (size_t)nmax;
    return 7 * cs__ws_bytes(n * sizeof(double)) + 2 * cs__ws_bytes(3 * m * sizeof(double)) +
           cs__ws_bytes(9 * m * sizeof(double)) + cs__ws_bytes(k * k * sizeof(double)) +
           cs__ws_bytes(k * sizeof(double)) + cs__ws_bytes(3 * k * sizeof(double)) +
           2 * cs__ws_bytes(k * sizeof(int));
}

void cs__sap_work_init(cs__sap_work *w, void *mem, int nv, int nc, int nmax) {
    unsigned char *m = mem;
    const size_t n = (size_t)nv, c = (size_t)nc, k = (size_t)nmax;
    w->dinv = take(&m, n * sizeof(double));
    w->avs = take(&m, n * sizeof(double));
    w->r = take(&m, n * sizeof(double));
    w->jtg = take(&m, n * sizeof(double));
    w->grad = take(&m, n * sizeof(double));
    w->dv = take(&m, n * sizeof(double));
    w->dp = take(&m, n * sizeof(double));
    w->vc = take(&m, 3 * c * sizeof(double));
    w->dvc = take(&m, 3 * c * sizeof(double));
    w->G = take(&m, 9 * c * sizeof(double));
    w->H = take(&m, k * k * sizeof(double));
    w->b = take(&m, k * sizeof(double));
    w->gjc = take(&m, 3 * k * sizeof(double));
    w->lcol = take(&m, k * sizeof(int));
    w->hend = take(&m, k * sizeof(int));
}

cs_sap_params cs__sap_params_resolve(const cs_sap_params *prm) {
    cs_sap_params r = prm ? *prm : (cs_sap_params){0};
    // Drake's defaults (sap.md section 9): the paper's own values were lost with its equations.
    r.beta = r.beta > 0 ? r.beta : 1.0;
    r.sigma = r.sigma > 0 ? r.sigma : 1e-3;
    // Ten times below Drake's SapHolonomicConstraint default (0.1), which holds loop closures
    // and welds only (Drake's tree joints are coordinates, exact): here every joint is a row, so
    // the joint forces come from them. The dense island Newton factor takes the stiffer rows.
    r.beta_joint = r.beta_joint > 0 ? r.beta_joint : 0.01;
    r.rel_tol = r.rel_tol > 0 ? r.rel_tol : 1e-6;
    r.abs_tol = r.abs_tol > 0 ? r.abs_tol : 1e-14;
    r.cost_rel_tol = r.cost_rel_tol > 0 ? r.cost_rel_tol : 1e-15;
    r.cost_abs_tol = r.cost_abs_tol > 0 ? r.cost_abs_tol : 1e-30;
    r.max_iterations = r.max_iterations > 0 ? r.max_iterations : 100;
    return r;
}

/* One island: its dofs and contacts. */
typedef struct island {
    const int *dof;
    int n;
    const int *con;
    int m;
} island;

/* out = A (x - y) on the island's dofs (y may be NULL); A's rows stay inside the island. */
static void amul(const cs__sap_problem *p, const island *I, const double *x, const double *y,
                 double *out) {
    for (int k = 0; k < I->n; k++)
        out[I->dof[k]] = 0;
    for (int k = 0; k < I->n; k++) {
        const int j = I->dof[k];
        const double xj = y ? x[j] - y[j] : x[j];
        for (int q = p->a_colptr[j]; q < p->a_colptr[j + 1]; q++)
            out[p->a_rowind[q]] += p->a_val[q] * xj;
    }
}

/* out = J x (+ bias when bias is not NULL) on the island's contacts. */
static void jmul(const cs__sap_problem *p, const island *I, const double *x, const double *bias,
                 double *out) {
    for (int m = 0; m < I->m; m++) {
        const int c = I->con[m], q0 = p->j_ptr[c], k = p->j_ptr[c + 1] - q0;
        const int *col = p->j_col + q0;
        const double *J = p->j_val + 3 * (size_t)q0;
        double s0 = 0, s1 = 0, s2 = 0;
        for (int a = 0; a < k; a++) {
            const double xa = x[col[a]];
            s0 += J[a] * xa;
            s1 += J[k + a] * xa;
            s2 += J[2 * k + a] * xa;
        }
        if (bias)
            s0 += bias[3 * c], s1 += bias[3 * c + 1], s2 += bias[3 * c + 2];
        out[3 * c] = s0, out[3 * c + 1] = s1, out[3 * c + 2] = s2;
    }
}

/* out = J^T g on the island's dofs. */
static void jtmul(const cs__sap_problem *p, const island *I, const double *g, double *out) {
    for (int k = 0; k < I->n; k++)
        out[I->dof[k]] = 0;
    for (int m = 0; m < I->m; m++) {
        const int c = I->con[m], q0 = p->j_ptr[c], k = p->j_ptr[c + 1] - q0;
        const int *col = p->j_col + q0;
        const double *J = p->j_val + 3 * (size_t)q0;
        // Locals: out might alias g as far as the compiler knows, which would reload g per dof.
        const double g0 = g[3 * c], g1 = g[3 * c + 1], g2 = g[3 * c + 2];
        for (int a = 0; a < k; a++)
            out[col[a]] += J[a] * g0 + J[k + a] * g1 + J[2 * k + a] * g2;
    }
}

/* Cost at v, with w->r = A (v - v*), w->vc, gamma, region, w->G (when hessian), w->jtg and
 * w->grad for the island. */
static double evaluate(const cs__sap_problem *p, const island *I, cs__sap_work *w,
                       const double *v, double *gamma, uint8_t *region, bool hessian) {
    amul(p, I, v, p->vstar, w->r);
    double cost = 0;
    for (int k = 0; k < I->n; k++) {
        const int j = I->dof[k];
        cost += 0.5 * (v[j] - p->vstar[j]) * w->r[j];
    }
    jmul(p, I, v, p->bias, w->vc);
    for (int k = 0; k < I->m; k++) {
        const int c = I->con[k];
        cost += cs__sap_contact_eval(&p->contact[c], w->vc + 3 * c, gamma + 3 * c, region + c,
                                     hessian ? w->G + 9 * c : NULL);
    }
    jtmul(p, I, gamma, w->jtg);
    for (int k = 0; k < I->n; k++) {
        const int j = I->dof[k];
        w->grad[j] = w->r[j] - w->jtg[j];
    }
    return cost;
}

/* The cost along v + alpha dv (sap.md section 8): the quadratic part from cached products,
 * the contact part re-evaluated per contact, O(contacts) per call. */
typedef struct line_ctx {
    const cs__sap_problem *p;
    const island *I;
    const cs__sap_work *w;
    double la0; /* |v - v*|_A^2 / 2 */
    double dpr; /* dv^T A (v - v*) */
    double c2;  /* dv^T A dv */
} line_ctx;

static void line_eval(void *ctx, double alpha, double *l, double *d, double *dd) {
    const line_ctx *L = ctx;
    double cost = L->la0 + alpha * L->dpr + 0.5 * alpha * alpha * L->c2;
    double slope = L->dpr + alpha * L->c2, curv = L->c2;
    for (int k = 0; k < L->I->m; k++) {
        const int c = L->I->con[k];
        const double *dvc = L->w->dvc + 3 * c;
        double g[3], cc = 0;
        cost += cs__sap_contact_line(&L->p->contact[c], L->w->vc + 3 * c, dvc, alpha, g,
                                     dd ? &cc : NULL);
        slope -= dvc[0] * g[0] + dvc[1] * g[1] + dvc[2] * g[2];
        curv += cc;
    }
    *l = cost;
    *d = slope;
    if (dd)
        *dd = curv;
}

/* H = A + J^T G J on the island, lower triangle, column-major, local indices; region: the
 * contacts' regions (G = 0 in region III). Stops, H unusable, when meter's deadline passes. */
static void assemble(const cs__sap_problem *p, const cs__sap_islands *is, const island *I,
                     const uint8_t *region, cs__sap_work *w, double *H, cs__meter *meter) {
    const int n = I->n;
    for (int k = 0; k < n; k++) {
        double *col = H + (size_t)k * n;
        memset(col, 0, (size_t)n * sizeof(double));
        const int j = I->dof[k];
        for (int q = p->a_colptr[j]; q < p->a_colptr[j + 1]; q++) {
            const int li = is->local[p->a_rowind[q]];
            if (li >= k)
                col[li] += p->a_val[q];
        }
        if (cs__meter_add(meter, n))
            return;
    }
    // Per contact in contact (G = 0 otherwise), with Jc its 3 x k block over the k dofs it
    // touches: form G Jc, and add Jc^T (G Jc) to H's lower triangle: 9 k + 3 k (k + 1) / 2
    // multiply-adds (k = 6 per body). The dofs ascend, and so do their local indices (a
    // component numbers its dofs in order), so a >= b is the lower triangle. G's and G Jc's
    // entries are copied to locals, which the compiler would otherwise reload after every
    // store (the stores might alias them as far as it knows).
    int *lcol = w->lcol;
    double *gj0 = w->gjc;
    for (int m = 0; m < I->m; m++) {
        const int c = I->con[m], q0 = p->j_ptr[c], k = p->j_ptr[c + 1] - q0;
        if (region[c] == CS_STATE_SEPARATE)
            continue;
        const double *J0 = p->j_val + 3 * (size_t)q0, *J1 = J0 + k, *J2 = J1 + k;
        double *gj1 = gj0 + k, *gj2 = gj1 + k;
        double G[9];
        memcpy(G, w->G + 9 * c, sizeof G);
        for (int a = 0; a < k; a++) {
            lcol[a] = is->local[p->j_col[q0 + a]];
            const double x0 = J0[a], x1 = J1[a], x2 = J2[a];
            gj0[a] = G[0] * x0 + G[1] * x1 + G[2] * x2;
            gj1[a] = G[3] * x0 + G[4] * x1 + G[5] * x2;
            gj2[a] = G[6] * x0 + G[7] * x1 + G[8] * x2;
        }
        for (int b = 0; b < k; b++) {
            double *col = H + (size_t)lcol[b] * n;
            const double y0 = gj0[b], y1 = gj1[b], y2 = gj2[b];
            for (int a = b; a < k; a++)
                col[lcol[a]] += J0[a] * y0 + J1[a] * y1 + J2[a] * y2;
        }
        if (cs__meter_add(meter, 9 * (int64_t)k + 3 * (int64_t)k * (k + 1) / 2))
            return;
    }
}

/* Islands below this many dofs are factored by the plain column Cholesky here; LAPACK's dpotrf
 * over BLIS pays a per-call overhead in BLIS's level-3 object API that dominates small systems:
 * measured on the 2-core CI machine, factor + solve took 30 us (n = 6), 96 us (18), 275 us (64),
 * 1.5 ms (256), against 0.06, 0.6, 15 and 810 us here; the two cross near n = 400, where the
 * blocked factorization over BLAS takes over (and LAPACK's solve), unless a deadline must be kept
 * (BLAS cannot stop). */
#define CHOL_BLOCKED_MIN 384
/* Columns of a block of the blocked factorization (chol_blocked). */
#define CHOL_BLOCK 96

/* y -= l[0] c[0], then l[1] c[1], l[2] c[2], l[3] c[3] (each row's subtractions in that
 * order, as four axpys would make them), over n rows, two at a time. */
static void sub4(int n, const double *const c[4], const double l[4], double *y) {
    const cs__v2 v0 = {l[0], l[0]}, v1 = {l[1], l[1]}, v2 = {l[2], l[2]}, v3 = {l[3], l[3]};
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        cs__v2 t = cs__ld2(y + i);
        t -= cs__ld2(c[0] + i) * v0;
        t -= cs__ld2(c[1] + i) * v1;
        t -= cs__ld2(c[2] + i) * v2;
        t -= cs__ld2(c[3] + i) * v3;
        cs__st2(y + i, t);
    }
    for (; i < n; i++)
        y[i] = (((y[i] - l[0] * c[0][i]) - l[1] * c[1][i]) - l[2] * c[2][i]) - l[3] * c[3][i];
}

/* One past the last non-zero of column j's rows j .. n - 1 (at least j + 1). */
static int column_end(int n, const double *cj, int j) {
    int e = n;
    while (e > j + 1 && cj[e - 1] == 0)
        e--;
    return e;
}

/* The left-looking column Cholesky of the n x n block at H (leading dimension ldh), in place;
 * end [n]: one past the last non-zero of each column of L (cs__sap_chol). Returns 0, -1 (not
 * positive definite) or 1 (the meter's deadline passed). */
static int chol_columns(int n, double *H, int ldh, int *end, cs__meter *meter) {
    // Column j of L from column j of H minus the earlier columns' contributions (in order, four
    // adjacent columns per pass over cj, skipped where their four L_jk are zero; a zero among
    // them changes no entry, and gathering the columns with L_jk != 0 one by one cost 23 % more
    // instructions on a 4-box stack's W), then scaled by its pivot. Rows meet through
    // shared bodies only, so an island's or a stack's matrix keeps its envelope: column k's
    // contribution stops at end[k], and columns before lo end above row j (lo never falls).
    int lo = 0;
    for (int j = 0; j < n; j++) {
        double *cj = H + (size_t)j * ldh;
        while (lo < j && end[lo] <= j)
            lo++;
        // The column's work, counted at its end; where it may not fit the meter's count (at n
        // in the hundreds, a stretch of hundreds of us), four columns' update at a time. The
        // scan of row j over the columns lo .. j - 1 counts too: one read a column apart each
        // (a cache miss at that n), and a sparse row has few updates to count.
        int64_t units = j - lo;
        cs__meter *const mt = cs__meter_piecewise(meter, (int64_t)(j - lo) * (n - j) + n);
        int k = lo;
        for (; k + 4 <= j; k += 4) {
            const double *ck0 = H + (size_t)k * ldh + j;
            const double *const ck[4] = {ck0, ck0 + ldh, ck0 + 2 * ldh, ck0 + 3 * ldh};
            const double l[4] = {*ck[0], *ck[1], *ck[2], *ck[3]};
            if (l[0] == 0 && l[1] == 0 && l[2] == 0 && l[3] == 0)
                continue;
            int e = end[k] > end[k + 1] ? end[k] : end[k + 1];
            e = end[k + 2] > e ? end[k + 2] : e;
            e = end[k + 3] > e ? end[k + 3] : e;
            sub4(e - j, ck, l, cj + j);
            units += 4 * (int64_t)(e - j);
            if (mt) {
                if (cs__meter_add(mt, units))
                    return 1;
                units = 0;
            }
        }
        for (; k < j; k++) {
            const double lk = H[(size_t)k * ldh + j];
            if (lk != 0) {
                cs__axpy(end[k] - j, -lk, H + (size_t)k * ldh + j, cj + j);
                units += end[k] - j;
            }
        }
        if (!(cj[j] > 0) || !isfinite(cj[j]))
            return -1;
        end[j] = column_end(n, cj, j);
        // One division per column, then products.
        const double d = sqrt(cj[j]), inv_d = 1 / d;
        const cs__v2 vd = {inv_d, inv_d};
        cj[j] = d;
        int i = j + 1;
        for (; i + 2 <= end[j]; i += 2)
            cs__st2(cj + i, cs__ld2(cj + i) * vd);
        for (; i < end[j]; i++)
            cj[i] *= inv_d;
        if (meter && cs__meter_add(meter, units + end[j] - j))
            return 1;
    }
    return 0;
}

/* Right-looking by blocks of CHOL_BLOCK columns: each diagonal block by chol_columns, the panel
 * below it by BLAS's triangular solve and the trailing matrix by its rank-k update, which does
 * nearly all the work at BLIS's level-3 speed. LAPACK's dpotrf (reference LAPACK, 64-column
 * blocks, its recursive dpotrf2 on each diagonal block) took 23 ms at n = 860 here, as long as
 * the column loop; this 8-9 ms. Returns 0 or -1 (not positive definite). end: every column's
 * set to n (BLAS does not keep the envelope). */
static int chol_blocked(int n, double *H, int *end) {
    const double one = 1, minus_one = -1;
    for (int k = 0; k < n; k += CHOL_BLOCK) {
        const int b = cs__chunk_len(k, CHOL_BLOCK, n), rest = n - k - b;
        double *diag = H + (size_t)k * n + k;
        if (chol_columns(b, diag, n, end + k, NULL) != 0)
            return -1;
        if (rest > 0) {
            dtrsm_("R", "L", "T", "N", &rest, &b, &one, diag, &n, diag + b, &n);
            dsyrk_("L", "N", &rest, &b, &minus_one, diag + b, &n, &one, diag + (size_t)b * n + b,
                   &n);
        }
    }
    for (int j = 0; j < n; j++)
        end[j] = n;
    return 0;
}

int cs__sap_chol(int n, double *H, int *end, cs__meter *meter) {
    if (n >= CHOL_BLOCKED_MIN && !cs__meter_armed(meter))
        return chol_blocked(n, H, end);
    return chol_columns(n, H, n, end, meter);
}

void cs__sap_chol_solve(int n, const double *L, const int *end, int nrhs, double *B,
                        cs__meter *meter) {
    if (n >= CHOL_BLOCKED_MIN && !cs__meter_armed(meter)) {
        int info = 0;
        dpotrs_("L", &n, &nrhs, L, &n, B, &n, &info);
        return;
    }
    for (int r = 0; r < nrhs; r++) {
        double *x = B + (size_t)r * n;
        // L y = b, then L^T x = y, each column over its envelope.
        for (int j = 0; j < n; j++) {
            const double *cj = L + (size_t)j * n;
            x[j] /= cj[j];
            cs__axpy(end[j] - j - 1, -x[j], cj + j + 1, x + j + 1);
            if (meter && cs__meter_add(meter, end[j] - j))
                return;
        }
        for (int j = n - 1; j >= 0; j--) {
            const double *cj = L + (size_t)j * n;
            double s = x[j];
            for (int i = j + 1; i < end[j]; i++)
                s -= cj[i] * x[i];
            x[j] = s / cj[j];
            if (meter && cs__meter_add(meter, end[j] - j))
                return;
        }
    }
}

void cs__sap_dense_a(const cs__sap_problem *p, const cs__sap_islands *is, int k, double *H) {
    const int n = is->dof_ptr[k + 1] - is->dof_ptr[k];
    const int *dof = is->dof + is->dof_ptr[k];
    memset(H, 0, (size_t)n * n * sizeof(double));
    for (int c = 0; c < n; c++)
        for (int q = p->a_colptr[dof[c]]; q < p->a_colptr[dof[c] + 1]; q++)
            H[(size_t)c * n + is->local[p->a_rowind[q]]] += p->a_val[q];
}

/* Meter units of one cost evaluation: about 40 per contact for its law and, with the products
 * (A, J and J^T: up to 3 x 12 Jacobian entries per contact, two passes), 72 more per contact and
 * 9 per dof. */
static int64_t eval_units(const island *I, bool products) {
    return 40 * (int64_t)I->m + (products ? 72 * (int64_t)I->m + 9 * (int64_t)I->n : 0);
}

/* Newton's method on one island (the algorithm in the file header). meter: the solve's
 * deadline, shared by its islands: once passed, an island is evaluated at its initial guess
 * and left there, so that its impulses match its velocities. */
static cs_status solve_island(const cs__sap_problem *p, const cs__sap_islands *is,
                              const island *I, const cs_sap_params *prm, cs__meter *meter,
                              cs__sap_work *w, double *v, double *gamma, uint8_t *region,
                              int *iterations) {
    const int n = I->n;
    amul(p, I, p->vstar, NULL, w->avs);
    double cost_prev = 0, alpha = 1;
    for (int it = 0;; it++) {
        // Not stopped part-way: gamma and region must match v, whatever the deadline.
        const double cost = evaluate(p, I, w, v, gamma, region, true);
        cs__meter_add(meter, eval_units(I, true));
        // Scaled momentum residual and its scale (paper eq. 26).
        double res = 0, sav = 0, sjg = 0;
        for (int k = 0; k < n; k++) {
            const int j = I->dof[k];
            const double d = w->dinv[j];
            res += d * d * w->grad[j] * w->grad[j];
            sav += d * d * (w->r[j] + w->avs[j]) * (w->r[j] + w->avs[j]);
            sjg += d * d * w->jtg[j] * w->jtg[j];
        }
        res = sqrt(res);
        if (!isfinite(cost) || !isfinite(res))
            return CS_EINPUT;
        if (res <= prm->abs_tol + prm->rel_tol * sqrt(fmax(sav, sjg)))
            return CS_CONVERGED;
        // Round-off stall: the last full-ish step no longer changed the cost.
        if (it > 0 && alpha > 0.5 &&
            fabs(cost - cost_prev) <
                prm->cost_abs_tol + prm->cost_rel_tol * 0.5 * (fabs(cost) + fabs(cost_prev)))
            return CS_CONVERGED;
        if (cs__meter_check(meter))
            return CS_DEADLINE;
        if (it == prm->max_iterations)
            return CS_MAXITER;

        // Newton direction: H dv = -grad. From here to the step, a passed deadline returns v
        // as evaluated above.
        assemble(p, is, I, region, w, w->H, meter);
        if (meter->passed)
            return CS_DEADLINE;
        const int chol = cs__sap_chol(n, w->H, w->hend, meter);
        if (chol != 0)
            return chol > 0 ? CS_DEADLINE : CS_SINGULAR;
        for (int k = 0; k < n; k++)
            w->b[k] = -w->grad[I->dof[k]];
        cs__sap_chol_solve(n, w->H, w->hend, 1, w->b, meter);
        if (meter->passed)
            return CS_DEADLINE;
        for (int k = 0; k < n; k++)
            w->dv[I->dof[k]] = w->b[k];

        // Products the line search reuses.
        amul(p, I, w->dv, NULL, w->dp);
        jmul(p, I, w->dv, NULL, w->dvc);
        if (cs__meter_add(meter, eval_units(I, true)))
            return CS_DEADLINE;
        line_ctx L = {.p = p, .I = I, .w = w};
        double d0 = 0;
        for (int k = 0; k < n; k++) {
            const int j = I->dof[k];
            L.la0 += 0.5 * (v[j] - p->vstar[j]) * w->r[j];
            L.dpr += w->dp[j] * (v[j] - p->vstar[j]);
            L.c2 += w->dv[j] * w->dp[j];
            d0 += w->grad[j] * w->dv[j];
        }
        // H is SPD, so d0 = -grad^T H^-1 grad < 0 and c2 > 0 unless rounding destroyed it.
        if (!(d0 < 0) || !(L.c2 > 0))
            return CS_SINGULAR;
        const cs__sap_line line = {.eval = line_eval, .ctx = &L, .l0 = cost, .d0 = d0,
                                   .meter = meter, .units = eval_units(I, false)};
        const cs_status ls =
            prm->line_search == CS_SAP_LINE_BACKTRACK
                ? cs__sap_line_backtrack(&line, &alpha)
                : cs__sap_line_exact(&line, prm->cost_abs_tol, prm->cost_rel_tol, &alpha);
        if (ls != CS_CONVERGED)
            return ls;
        for (int k = 0; k < n; k++) {
            const int j = I->dof[k];
            v[j] += alpha * w->dv[j];
        }
        // Counted once the step is taken: an iteration the deadline cut short left v as it was.
        ++*iterations;
        cost_prev = cost;
    }
}

cs_status cs__sap_newton(const cs__sap_problem *p, const cs__sap_islands *is,
                         const cs_sap_params *prm, const cs_options *opt, cs__sap_work *w,
                         double *v, double *gamma, uint8_t *region, int *ret_iterations) {
    *ret_iterations = 0;
    // Dofs in islands without contacts move freely.
    for (int q = is->dof_ptr[is->ncontact]; q < p->nv; q++)
        v[is->dof[q]] = p->vstar[is->dof[q]];
    // Contacts that touch no dof cannot push anything.
    for (int q = is->con_ptr[is->ncontact]; q < p->nc; q++) {
        const int c = is->con[q];
        gamma[3 * c] = gamma[3 * c + 1] = gamma[3 * c + 2] = 0;
        region[c] = CS_STATE_SEPARATE;
    }
    // The stopping test's scaling; a non-positive diagonal means A is not positive definite.
    for (int q = 0; q < is->dof_ptr[is->ncontact]; q++) {
        const int j = is->dof[q];
        double a = 0;
        for (int k = p->a_colptr[j]; k < p->a_colptr[j + 1]; k++)
            if (p->a_rowind[k] == j)
                a += p->a_val[k];
        if (!(a > 0) || !isfinite(a))
            return CS_EINPUT;
        w->dinv[j] = 1 / sqrt(a);
    }
    cs__meter meter = cs__meter_start(opt);
    cs_status worst = CS_CONVERGED;
    for (int k = 0; k < is->ncontact; k++) {
        const island I = {.dof = is->dof + is->dof_ptr[k],
                          .n = is->dof_ptr[k + 1] - is->dof_ptr[k],
                          .con = is->con + is->con_ptr[k],
                          .m = is->con_ptr[k + 1] - is->con_ptr[k]};
        const cs_status st =
            solve_island(p, is, &I, prm, &meter, w, v, gamma, region, ret_iterations);
        if (st < 0)
            return st;
        // The deadline outranks an iteration cap: both are usable, the deadline says more.
        if (st == CS_DEADLINE || (st == CS_MAXITER && worst == CS_CONVERGED))
            worst = st;
    }
    return worst;
}
