/* SPDX-License-Identifier: MIT */
/* Lemke's complementary pivoting with a covering vector (Cottle, Pang & Stone, section 4.4;
 * Lloyd 2005, section IV) on an explicit matrix: the baseline the structural solvers are
 * measured against.
 *
 * THE PROBLEM. w = M z + q + c z0, w, z, z0 >= 0, w'z = 0. Written as I w - M z - c z0 = q, a
 * basis B is n of the 2n + 1 columns; basic values x = B^-1 q.
 *
 * THE ALGORITHM. Step 0: if q >= 0, z = 0. Else z0 enters at the level that makes the most
 * negative w_r/c_r zero, and w_r leaves: every basic value is then >= 0. Then repeatedly: the
 * driving variable (complement of the one that just left) enters; the ratio test picks the
 * basic variable that first reaches zero; if it is z0 the basis is complementary and feasible
 * (a solution); otherwise it leaves and its complement drives next. No blocking row means a
 * secondary ray.
 *
 * INVARIANTS. x >= 0 (up to rounding); exactly one complementary pair is non-basic together
 * while z0 is basic. B^-1 is kept explicitly and updated by each pivot (product form), which
 * is also what the lexicographic rule reads.
 *
 * WHY IT TERMINATES. With the lexicographic rule no basis repeats (the rows of [x, B^-1] are
 * lexicographically positive and the objective row strictly decreases), so Lemke ends at a
 * solution or a ray; for copositive-plus M (contact LCPs, PSD matrices) a ray only happens when
 * the LCP is infeasible. The pivot cap turns numerical cycling into a status.
 *
 * TOLERANCES. Column entries below 1e-11 of the column's largest are treated as zero; ratios
 * within 1e-12 (n |x|_inf + 1) of the minimum count as tied (rounding in x after many product-form
 * updates is of order n eps |x|). */
#include "solver/lemke.h"

#include <math.h>
#include <string.h>

#include "solver/deadline.h"
#include "solver/workspace.h"

#define COL_TOL 1e-11
#define TIE_TOL 1e-12

/* Variable ids: 0..n-1 are w_i, n..2n-1 are z_i, 2n is z0. */
typedef struct lemke_ws {
    int n;
    double *binv;  /* [n x n] row-major B^-1 */
    double *x;     /* [n] basic values */
    double *col;   /* [n] B^-1 times the entering column */
    int *basic;    /* [n] variable id basic in row i */
    int *row_of;   /* [2n + 1] row of a basic variable, -1 when non-basic */
    int *cand;     /* [n] ratio-test candidates */
} lemke_ws;

size_t cs_lemke_lcp_size(int n) {
    const size_t N = (size_t)n;
    return cs__ws_bytes(N * N * sizeof(double)) + 2 * cs__ws_bytes(N * sizeof(double)) +
           2 * cs__ws_bytes(N * sizeof(int)) + cs__ws_bytes((2 * N + 1) * sizeof(int));
}

/* col = B^-1 a for the column a of variable v in [I, -M, -c]. */
static void entering_column(const lemke_ws *L, const double *M, int ldm, const double *c, int v) {
    const int n = L->n;
    for (int i = 0; i < n; i++) {
        const double *bi = L->binv + (size_t)i * n;
        double s = 0;
        if (v < n)
            s = bi[v];
        else if (v < 2 * n) {
            const double *mc = M + (size_t)(v - n) * ldm;
            for (int k = 0; k < n; k++)
                s -= bi[k] * mc[k];
        } else {
            for (int k = 0; k < n; k++)
                s -= bi[k] * (c ? c[k] : 1.0);
        }
        L->col[i] = s;
    }
}

/* Lexicographic minimum ratio among candidates: first x_i / col_i, then column j of B^-1
 * divided by col_i for j = 0, 1, ... until one row remains. Prefers the z0 row when it ties on
 * the value (ends the run). Returns the chosen row. */
static int lexico_ratio(const lemke_ws *L, int ncand, int z0_row, double xtie) {
    const int n = L->n;
    int *cand = L->cand;
    for (int j = -1; j < n && ncand > 1; j++) {
        // Band of ties: xtie on the values; for a column of B^-1, the same relative band.
        double best = INFINITY, tie = xtie;
        if (j >= 0) {
            double nmax = 0;
            for (int k = 0; k < ncand; k++)
                nmax = fmax(nmax, fabs(L->binv[(size_t)cand[k] * n + j]));
            tie = TIE_TOL * (n * nmax + 1);
        }
        for (int k = 0; k < ncand; k++) {
            const int i = cand[k];
            const double num = j < 0 ? L->x[i] : L->binv[(size_t)i * n + j];
            best = fmin(best, num / L->col[i]);
        }
        int kept = 0;
        for (int k = 0; k < ncand; k++) {
            const int i = cand[k];
            const double num = j < 0 ? L->x[i] : L->binv[(size_t)i * n + j];
            if (num - best * L->col[i] <= tie)
                cand[kept++] = i;
        }
        ncand = kept;
        if (j < 0)
            for (int k = 0; k < ncand; k++)
                if (cand[k] == z0_row)
                    return z0_row;
    }
    return cand[0];
}

/* Pivot on row r with the entering column in L->col: variable v becomes basic in row r. */
static void pivot(lemke_ws *L, int r, int v) {
    const int n = L->n;
    const double p = L->col[r];
    double *br = L->binv + (size_t)r * n;
    for (int k = 0; k < n; k++)
        br[k] /= p;
    L->x[r] /= p;
    for (int i = 0; i < n; i++) {
        if (i == r)
            continue;
        const double f = L->col[i];
        if (f == 0)
            continue;
        double *bi = L->binv + (size_t)i * n;
        for (int k = 0; k < n; k++)
            bi[k] -= f * br[k];
        L->x[i] -= f * L->x[r];
    }
    L->row_of[L->basic[r]] = -1;
    L->basic[r] = v;
    L->row_of[v] = r;
}

cs_status cs_lemke_lcp(cs_workspace *ws, int n, const double *M, int ldm, const double *q,
                       const double *c, const cs_options *opt, double *z, cs_stats *st) {
    *st = (cs_stats){0};
    memset(z, 0, (size_t)n * sizeof(double));
    const size_t N = (size_t)n, mark = cs__ws_mark(ws);
    lemke_ws L = {
        .n = n,
        .binv = cs__ws_alloc(ws, N * N * sizeof(double)),
        .x = cs__ws_alloc(ws, N * sizeof(double)),
        .col = cs__ws_alloc(ws, N * sizeof(double)),
        .basic = cs__ws_alloc(ws, N * sizeof(int)),
        .row_of = cs__ws_alloc(ws, (2 * N + 1) * sizeof(int)),
        .cand = cs__ws_alloc(ws, N * sizeof(int)),
    };
    cs_status status = CS_CONVERGED;
    if (n > 0 && (!L.binv || !L.x || !L.col || !L.basic || !L.row_of || !L.cand)) {
        status = CS_ENOSPACE;
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (!isfinite(q[i]) || (c && !(c[i] > 0))) {
            status = CS_EINPUT;
            goto out;
        }
    // Start from the all-w basis: B = I, x = q.
    memset(L.binv, 0, N * N * sizeof(double));
    for (int i = 0; i < n; i++) {
        L.binv[(size_t)i * n + i] = 1;
        L.x[i] = q[i];
        L.basic[i] = i;
        L.row_of[i] = i;
    }
    for (int v = n; v <= 2 * n; v++)
        L.row_of[v] = -1;

    // Step 0: z0 enters at the level that lifts the most negative w_r / c_r to zero; among
    // ties (within rounding) the first index, as ArtiSynth does.
    double worst = 0, xmax = 0;
    for (int i = 0; i < n; i++) {
        worst = fmax(worst, -q[i] / (c ? c[i] : 1.0));
        xmax = fmax(xmax, fabs(q[i]));
    }
    if (worst <= 0)
        goto out;
    int r = 0;
    while (-q[r] / (c ? c[r] : 1.0) < worst - TIE_TOL * (n * xmax + 1))
        r++;
    entering_column(&L, M, ldm, c, 2 * n);
    pivot(&L, r, 2 * n);
    st->pivots = 1;
    int driving = n + r; // complement of the w_r that left

    const int cap = n * n + 4 * n + 8;
    for (;;) {
        if (st->pivots >= cap) {
            status = CS_MAXITER;
            break;
        }
        // A pivot costs far more than a clock read (a vDSO call): check before each one.
        if (cs__deadline_passed(opt)) {
            status = CS_DEADLINE;
            break;
        }
        entering_column(&L, M, ldm, c, driving);
        // Basic values fall as the driving variable rises where the column is positive.
        double cmax = 0;
        xmax = 0;
        for (int i = 0; i < n; i++) {
            cmax = fmax(cmax, fabs(L.col[i]));
            xmax = fmax(xmax, fabs(L.x[i]));
        }
        int ncand = 0;
        for (int i = 0; i < n; i++)
            if (L.col[i] > COL_TOL * cmax)
                L.cand[ncand++] = i;
        if (ncand == 0) {
            status = CS_RAY;
            break;
        }
        const int z0_row = L.row_of[2 * n];
        r = lexico_ratio(&L, ncand, z0_row, TIE_TOL * (n * xmax + 1));
        const int leaving = L.basic[r];
        pivot(&L, r, driving);
        st->pivots++;
        if (leaving == 2 * n)
            break; // z0 left: complementary and feasible
        driving = leaving < n ? leaving + n : leaving - n;
    }
    if (status == CS_CONVERGED)
        for (int i = 0; i < n; i++)
            if (L.basic[i] >= n && L.basic[i] < 2 * n)
                z[L.basic[i] - n] = fmax(L.x[i], 0.0);
out:
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}
