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
 * solution or a ray; for copositive-plus M (PSD matrices) a ray only happens when the LCP is
 * infeasible, and the contact LCP of Lloyd's eq. (6) always ends at a solution (his refs. [6],
 * [7], [9]). The pivot cap turns numerical cycling into a status.
 *
 * ACCURACY. Contact LCPs with redundant contacts are massively degenerate ("numerically
 * sensitive", Lloyd section I): with n contacts on one body, N^T M^-1 N and D^T M^-1 D have rank
 * 6 but order n and n d, so many tableau entries are zero in exact arithmetic and come out as
 * rounding noise of size eps |B^-1| |a|. A pivot on such noise
 * makes B numerically singular; the product-form B^-1 then loses every digit, and the run ends
 * in a false secondary ray or cycles to the cap. So an entry counts only above its own error
 * bound, not above a fixed fraction of its column:
 *  - each entering column and the basic values are refined once against the basis itself
 *    (col += B^-1 (a - B col), the same for x), which makes their componentwise error at most
 *    about n eps |B^-1| (|B| |col| + |a|) while the product-form B^-1 keeps half its digits
 *    (one step of fixed-precision refinement: Skeel 1980; Higham, Accuracy and Stability of
 *    Numerical Algorithms, 2nd ed., section 12.2; n eps is gamma_n of the inner products);
 *  - column entries within that bound are zero for the ratio test, and rows whose x_i - t col_i
 *    lie within the bound of the minimum tie (the lexicographic rule decides among them);
 *  - when a refinement corrects by more than sqrt(eps) of the vector, B^-1 has lost half its
 *    digits and one step no longer reaches working accuracy: B^-1 is rebuilt from the basis
 *    (Gauss-Jordan, in place).
 * The lexicographic rule compares entries of B^-1 within their bound n eps |B^-1||B||B^-1| in
 * the same way: otherwise rounding noise decides degenerate ties, and the run cycles.
 *
 * DEADLINE. Read before each pivot and, through a meter (deadline.h), per row of every O(n^2)
 * pass (B^-1's initialization, the entering column, the refinement, the bounds of the ratio
 * test, the pivot) and of the O(n^3) rebuild: at n = 4608 one pass is tens of milliseconds. A
 * pass the deadline interrupts leaves B^-1 unusable, so the run ends there. B^-1 is stored by
 * rows, and the passes that go down one of its columns (a w column entering, the scale of the
 * lexicographic rule's column, the rebuild's columns and pivot searches) count each access as
 * COLUMN_UNITS once its rows lie a page apart: every access is then a cache and TLB miss, and
 * counted as one unit such a pass ran 100-300 us between two reads on a 256-contact grid. */
#include "solver/lemke.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "solver/deadline.h"
#include "solver/lemke_passes.h"
#include "solver/workspace.h"

#define TIE_TOL 1e-12     /* value ties of the data itself, relative to the values */
#define LOSS_TOL 0x1p-26 /* sqrt(DBL_EPSILON): half the digits */

/* An error bound not formed yet in this pivot. */
#define UNKNOWN (-1.0)

/* Meter units of an access down a column of B^-1 (rows n doubles apart) once its rows lie a page
 * or more apart: each access is then a cache and TLB miss, 60-70 ns on the CI VM at n >= 1024
 * (and 4 ns at n = 512, which the caches still hold), where the loops along a row take 0.5-4 ns a
 * unit (deadline.h). Closer rows count one unit, as every access always did. */
#define COLUMN_UNITS 16

static int64_t column_units(int n) {
    return (size_t)n * sizeof(double) >= 4096 ? COLUMN_UNITS : 1;
}

/* Meter units of a w row of cs__lemke_basis_residuals() (see there). */
#define W_ROW_UNITS 8

size_t cs_lemke_lcp_size(int n) {
    const size_t N = (size_t)n;
    return cs__ws_bytes(N * N * sizeof(double)) + 13 * cs__ws_bytes(N * sizeof(double)) +
           3 * cs__ws_bytes(N * sizeof(int)) + cs__ws_bytes((2 * N + 1) * sizeof(int));
}

/* Column of z-variable or z0 v (v >= n) in [I, -M, -c], negated: M's column or c. */
static const double *z_column(const cs__lemke_ws *L, int v) {
    return v < 2 * L->n ? L->M + (size_t)(v - L->n) * L->ldm : L->cov;
}

/* a . b with four partial sums: the products with B^-1 are the solver's inner loops, and one
 * running sum would wait on each addition. */
static double dot(int n, const double *a, const double *b) {
    double s[4] = {0, 0, 0, 0};
    int k = 0;
    for (; k + 4 <= n; k += 4)
        for (int l = 0; l < 4; l++)
            s[l] += a[k + l] * b[k + l];
    for (; k < n; k++)
        s[0] += a[k] * b[k];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

void cs__lemke_entering_column(cs__lemke_ws *L, int v) {
    const int n = L->n;
    const double *a = v < n ? NULL : z_column(L, v);
    for (int i = 0; i < n; i++) {
        const double *bi = L->binv + (size_t)i * n;
        L->col[i] = a ? -dot(n, bi, a) : bi[v];
        // A w column is B^-1's column v, read down its rows.
        if (cs__meter_add(&L->meter, a ? n : L->col_units))
            return;
    }
}

void cs__lemke_basis_residuals(cs__lemke_ws *L, int v) {
    const int n = L->n;
    const double *a = v < n ? NULL : z_column(L, v);
    for (int k = 0; k < n; k++) {
        L->rx[k] = L->q[k];
        L->ax[k] = fabs(L->q[k]);
        L->rc[k] = a ? -a[k] : k == v;
        L->ac[k] = fabs(L->rc[k]);
        L->ab[k] = 0;
    }
    for (int r = 0; r < n; r++) {
        const int u = L->basic[r];
        const double xr = L->x[r], cr = L->col[r];
        if (u < n) {
            L->rx[u] -= xr;
            L->ax[u] += fabs(xr);
            L->rc[u] -= cr;
            L->ac[u] += fabs(cr);
            L->ab[u] += 1;
            // Five scattered updates behind a branch no predictor learns: 10-20 ns a row, and
            // thousands of rows ran 20-50 us between two reads at 256 contacts.
            if (cs__meter_add(&L->meter, W_ROW_UNITS))
                return;
            continue;
        }
        const double *b = z_column(L, u), axr = fabs(xr), acr = fabs(cr);
        for (int k = 0; k < n; k++) {
            const double bk = fabs(b[k]);
            L->rx[k] += b[k] * xr;
            L->ax[k] += bk * axr;
            L->rc[k] += b[k] * cr;
            L->ac[k] += bk * acr;
            L->ab[k] += bk;
        }
        if (cs__meter_add(&L->meter, 4 * (int64_t)n))
            return;
    }
    // The largest entries: 8-12 ns a row at n = 2560 (20-30 us a pass between two reads before
    // it was counted), so 12 units a row, a chunk of rows per count.
    L->axmax = L->acmax = L->abmax = 0;
    const int chunk = cs__meter_chunk(&L->meter, n, 12);
    for (int k0 = 0; k0 < n; k0 += chunk) {
        const int k1 = k0 + cs__chunk_len(k0, chunk, n);
        for (int k = k0; k < k1; k++) {
            L->axmax = fmax(L->axmax, L->ax[k]);
            L->acmax = fmax(L->acmax, L->ac[k]);
            L->abmax = fmax(L->abmax, L->ab[k]);
        }
        if (cs__meter_add(&L->meter, 12 * (int64_t)(k1 - k0)))
            return;
    }
}

/* One step of iterative refinement of x and col (the entering column of v); row norms of B^-1
 * for the cheap bounds; the componentwise bounds marked UNKNOWN. Returns true when a correction
 * exceeded LOSS_TOL of its vector: B^-1 has lost half its digits (false when the meter stopped
 * it). */
static bool refine(cs__lemke_ws *L, int v) {
    const int n = L->n;
    cs__lemke_basis_residuals(L, v);
    if (L->meter.passed)
        return false;
    double fx = 0, fc = 0, xmax = 0, cmax = 0;
    for (int i = 0; i < n; i++) {
        const double *bi = L->binv + (size_t)i * n;
        double sx[2] = {0, 0}, sc[2] = {0, 0}, s1[2] = {0, 0};
        int k = 0;
        for (; k + 2 <= n; k += 2)
            for (int l = 0; l < 2; l++) {
                sx[l] += bi[k + l] * L->rx[k + l];
                sc[l] += bi[k + l] * L->rc[k + l];
                s1[l] += fabs(bi[k + l]);
            }
        for (; k < n; k++) {
            sx[0] += bi[k] * L->rx[k];
            sc[0] += bi[k] * L->rc[k];
            s1[0] += fabs(bi[k]);
        }
        const double cx = sx[0] + sx[1], cc = sc[0] + sc[1];
        L->x[i] += cx;
        L->col[i] += cc;
        L->norm1[i] = s1[0] + s1[1];
        L->dx[i] = L->dcol[i] = L->dbinv[i] = UNKNOWN;
        fx = fmax(fx, fabs(cx));
        fc = fmax(fc, fabs(cc));
        xmax = fmax(xmax, fabs(L->x[i]));
        cmax = fmax(cmax, fabs(L->col[i]));
        if (cs__meter_add(&L->meter, 3 * (int64_t)n))
            return false;
    }
    return fx > LOSS_TOL * xmax || fc > LOSS_TOL * cmax;
}

/* Error bound n eps |B^-1_i| y of row i of a product with B^-1 whose rounding y (ax, ac or ab)
 * bounds; formed once per pivot into the cache d, and only for rows whose decision needs more
 * than the cheap bound n eps |B^-1_i|_1 |y|_inf >= it (row_cap()). */
static double row_bound(cs__lemke_ws *L, int i, const double *y, double *d) {
    // Past the deadline the caller's result is discarded: do not form any more bounds.
    if (d[i] == UNKNOWN && !L->meter.passed) {
        const double *bi = L->binv + (size_t)i * L->n;
        double s = 0;
        for (int k = 0; k < L->n; k++)
            s += fabs(bi[k]) * y[k];
        d[i] = L->n * DBL_EPSILON * s;
        cs__meter_add(&L->meter, L->n);
    }
    return d[i];
}

/* The cheap bound n eps |B^-1_i|_1 |y|_inf >= row_bound(). */
static double row_cap(const cs__lemke_ws *L, int i, double ymax) {
    return L->n * DBL_EPSILON * L->norm1[i] * ymax;
}

cs_status cs__lemke_rebuild(cs__lemke_ws *L) {
    const int n = L->n;
    double *A = L->binv, amax = 0;
    const int64_t cu = L->col_units;
    // Column r of B is written down column r of A, a chunk of rows per count.
    for (int r = 0; r < n; r++) {
        const int u = L->basic[r];
        const double *b = u < n ? NULL : z_column(L, u);
        const int chunk = cs__meter_chunk(&L->meter, n, cu);
        for (int i0 = 0; i0 < n; i0 += chunk) {
            const int i1 = i0 + cs__chunk_len(i0, chunk, n);
            for (int i = i0; i < i1; i++) {
                A[(size_t)i * n + r] = b ? -b[i] : i == u;
                amax = fmax(amax, fabs(A[(size_t)i * n + r]));
            }
            if (cs__meter_add(&L->meter, cu * (i1 - i0)))
                return CS_DEADLINE;
        }
    }
    for (int k = 0; k < n; k++) {
        // The pivot search goes down column k, a chunk of rows per count.
        int p = k;
        const int chunk = cs__meter_chunk(&L->meter, n - k, cu);
        for (int i0 = k + 1; i0 < n; i0 += chunk) {
            const int i1 = i0 + cs__chunk_len(i0, chunk, n);
            for (int i = i0; i < i1; i++)
                if (fabs(A[(size_t)i * n + k]) > fabs(A[(size_t)p * n + k]))
                    p = i;
            if (cs__meter_add(&L->meter, cu * (i1 - i0)))
                return CS_DEADLINE;
        }
        L->piv[k] = p;
        double *ak = A + (size_t)k * n;
        if (!(fabs(A[(size_t)p * n + k]) > n * DBL_EPSILON * amax))
            return CS_SINGULAR;
        if (cs__meter_add(&L->meter, n))
            return CS_DEADLINE;
        if (p != k)
            for (int j = 0; j < n; j++) {
                const double t = ak[j];
                ak[j] = A[(size_t)p * n + j];
                A[(size_t)p * n + j] = t;
            }
        // Row k becomes row k of B^-1 as the identity's column k is carried in column k.
        const double d = ak[k];
        ak[k] = 1;
        for (int j = 0; j < n; j++)
            ak[j] /= d;
        // Each row's multiplier is read down column k; rows it leaves alone cost that read.
        for (int i = 0; i < n; i++) {
            double *ai = A + (size_t)i * n;
            const double f = ai[k];
            if (i == k || f == 0) {
                if (cs__meter_add(&L->meter, cu))
                    return CS_DEADLINE;
                continue;
            }
            ai[k] = 0;
            for (int j = 0; j < n; j++)
                ai[j] -= f * ak[j];
            if (cs__meter_add(&L->meter, n))
                return CS_DEADLINE;
        }
    }
    // Columns k and piv[k] are swapped down their rows, a chunk of rows per count.
    for (int k = n - 1; k >= 0; k--) {
        const int pk = L->piv[k];
        const int chunk = pk != k ? cs__meter_chunk(&L->meter, n, 2 * cu) : n;
        for (int i0 = 0; pk != k && i0 < n; i0 += chunk) {
            const int i1 = i0 + cs__chunk_len(i0, chunk, n);
            for (int i = i0; i < i1; i++) {
                double *ai = A + (size_t)i * n;
                const double t = ai[k];
                ai[k] = ai[pk];
                ai[pk] = t;
            }
            if (cs__meter_add(&L->meter, 2 * cu * (i1 - i0)))
                return CS_DEADLINE;
        }
        if (cs__meter_add(&L->meter, n))
            return CS_DEADLINE;
    }
    for (int i = 0; i < n; i++) {
        L->x[i] = dot(n, A + (size_t)i * n, L->q);
        if (cs__meter_add(&L->meter, n))
            return CS_DEADLINE;
    }
    return CS_CONVERGED;
}

/* Whether row i, whose num_i - best col_i exceeds the band by excess, still ties within the
 * error bounds of that difference: scale times the bound of y (cache d, |y|_inf ymax) for num_i,
 * and the bound of col_i. */
static bool within_bounds(cs__lemke_ws *L, int i, double excess, double best, double scale,
                          const double *y, double ymax, double *d) {
    if (excess <= 0)
        return true;
    if (excess > scale * row_cap(L, i, ymax) + fabs(best) * row_cap(L, i, L->acmax))
        return false;
    return excess <= scale * row_bound(L, i, y, d) + fabs(best) * row_bound(L, i, L->ac, L->dcol);
}

/* Lexicographic minimum ratio among candidates: first x_i / col_i, then column j of B^-1
 * divided by col_i for j = 0, 1, ... until one row remains. Rows whose num_i - best col_i lies
 * within the error bounds of that difference tie, and for the values also within TIE_TOL of the
 * candidates' largest (ties of the data itself, which rounding broke: q in the range of a
 * singular M lies there only to rounding). The bound of B^-1_ij is
 * n eps (|B^-1||B||B^-1|)_ij <= n eps (|B^-1||B| 1)_i max_k |B^-1_kj|. Prefers the z0 row when it
 * ties on the value (ends the run). Returns the chosen row. */
static int lexico_ratio(cs__lemke_ws *L, int ncand, int z0_row) {
    const int n = L->n;
    int *cand = L->cand;
    for (int j = -1; j < n && ncand > 1; j++) {
        // Column j of B^-1 scales the bound of its entries: max_k |B^-1_kj| over every row, read
        // down the column first, a chunk of rows per count (the candidates' entries, counted with
        // the last chunk, are then in cache).
        double scale = j < 0;
        const int64_t units = j < 0 ? 1 : L->col_units;
        const int chunk = cs__meter_chunk(&L->meter, n + ncand, units);
        for (int k0 = 0; k0 < n; k0 += chunk) {
            const int k1 = k0 + cs__chunk_len(k0, chunk, n);
            for (int k = k0; j >= 0 && k < k1; k++)
                scale = fmax(scale, fabs(L->binv[(size_t)k * n + j]));
            if (cs__meter_add(&L->meter, units * (k1 - k0 + (k1 == n ? ncand : 0))))
                return cand[0];
        }
        double best = INFINITY, band = 0;
        int ibest = cand[0];
        for (int k = 0; k < ncand; k++) {
            const int i = cand[k];
            const double num = j < 0 ? L->x[i] : L->binv[(size_t)i * n + j];
            if (num / L->col[i] < best) {
                best = num / L->col[i];
                ibest = i;
            }
            band = fmax(band, fabs(num));
        }
        band = j < 0 ? n * TIE_TOL * band : 0;
        int kept = 0;
        for (int k = 0; k < ncand; k++) {
            const int i = cand[k];
            const double num = j < 0 ? L->x[i] : L->binv[(size_t)i * n + j];
            const double excess = num - best * L->col[i] - band;
            if (i == ibest || (j < 0 ? within_bounds(L, i, excess, best, 1, L->ax, L->axmax, L->dx)
                                     : within_bounds(L, i, excess, best, scale, L->ab, L->abmax,
                                                     L->dbinv)))
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

/* Pivot on row r with the entering column in L->col: variable v becomes basic in row r. Stops
 * part-way, B^-1 lost, when the meter's deadline passes. */
static void pivot(cs__lemke_ws *L, int r, int v) {
    if (L->meter.passed)
        return;
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
        if (cs__meter_add(&L->meter, n))
            return;
    }
    L->row_of[L->basic[r]] = -1;
    L->basic[r] = v;
    L->row_of[v] = r;
}

bool cs__lemke_ws_init(cs__lemke_ws *L, cs_workspace *ws, int n, const double *M, int ldm,
                       const double *q, const cs_options *opt) {
    const size_t N = (size_t)n;
    *L = (cs__lemke_ws){
        .n = n,
        .M = M,
        .ldm = ldm,
        .q = q,
        .cov = cs__ws_alloc(ws, N * sizeof(double)),
        .binv = cs__ws_alloc(ws, N * N * sizeof(double)),
        .x = cs__ws_alloc(ws, N * sizeof(double)),
        .col = cs__ws_alloc(ws, N * sizeof(double)),
        .dx = cs__ws_alloc(ws, N * sizeof(double)),
        .dcol = cs__ws_alloc(ws, N * sizeof(double)),
        .rx = cs__ws_alloc(ws, N * sizeof(double)),
        .rc = cs__ws_alloc(ws, N * sizeof(double)),
        .ax = cs__ws_alloc(ws, N * sizeof(double)),
        .ac = cs__ws_alloc(ws, N * sizeof(double)),
        .ab = cs__ws_alloc(ws, N * sizeof(double)),
        .norm1 = cs__ws_alloc(ws, N * sizeof(double)),
        .dbinv = cs__ws_alloc(ws, N * sizeof(double)),
        .piv = cs__ws_alloc(ws, N * sizeof(int)),
        .basic = cs__ws_alloc(ws, N * sizeof(int)),
        .row_of = cs__ws_alloc(ws, (2 * N + 1) * sizeof(int)),
        .cand = cs__ws_alloc(ws, N * sizeof(int)),
        .col_units = column_units(n),
        .meter = cs__meter_start(opt),
    };
    return n == 0 || (L->cov && L->binv && L->x && L->col && L->dcol && L->dx && L->dbinv &&
                      L->rx && L->rc && L->ax && L->ac && L->ab && L->norm1 && L->piv &&
                      L->basic && L->row_of && L->cand);
}

cs_status cs_lemke_lcp(cs_workspace *ws, int n, const double *M, int ldm, const double *q,
                       const double *c, const cs_options *opt, double *z, cs_stats *st) {
    *st = (cs_stats){0};
    memset(z, 0, (size_t)n * sizeof(double));
    const size_t mark = cs__ws_mark(ws);
    cs__lemke_ws L;
    cs_status status = CS_CONVERGED;
    if (!cs__lemke_ws_init(&L, ws, n, M, ldm, q, opt)) {
        status = CS_ENOSPACE;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        L.cov[i] = c ? c[i] : 1.0;
        if (!isfinite(q[i]) || !(L.cov[i] > 0) || !isfinite(L.cov[i])) {
            status = CS_EINPUT;
            goto out;
        }
    }
    // Start from the all-w basis: B = I, x = q (row by row: B^-1 may take a hundred MB).
    for (int i = 0; i < n; i++) {
        memset(L.binv + (size_t)i * n, 0, (size_t)n * sizeof(double));
        L.binv[(size_t)i * n + i] = 1;
        L.x[i] = q[i];
        L.basic[i] = i;
        L.row_of[i] = i;
        if (cs__meter_add(&L.meter, n)) {
            status = CS_DEADLINE;
            goto out;
        }
    }
    for (int v = n; v <= 2 * n; v++)
        L.row_of[v] = -1;

    // Step 0: z0 enters at the level that lifts the most negative w_r / c_r to zero; among
    // ties (within rounding) the first index, as ArtiSynth does.
    double worst = 0, qmax = 0;
    for (int i = 0; i < n; i++) {
        worst = fmax(worst, -q[i] / L.cov[i]);
        qmax = fmax(qmax, fabs(q[i]));
    }
    if (worst <= 0)
        goto out;
    int r = 0;
    while (-q[r] / L.cov[r] < worst - TIE_TOL * n * qmax)
        r++;
    cs__lemke_entering_column(&L, 2 * n);
    pivot(&L, r, 2 * n);
    st->pivots = 1;
    int driving = n + r; // complement of the w_r that left

    // Each O(n^2) stretch below stops once the meter's deadline has passed; its results are then
    // unusable, so the loop ends at the next test of L.meter.passed.
    const int cap = n * n + 4 * n + 8;
    for (;;) {
        if (st->pivots >= cap) {
            status = CS_MAXITER;
            break;
        }
        // A pivot costs far more than a clock read (a vDSO call): check before each one.
        if (cs__meter_check(&L.meter)) {
            status = CS_DEADLINE;
            break;
        }
        cs__lemke_entering_column(&L, driving);
        if (refine(&L, driving)) {
            status = cs__lemke_rebuild(&L);
            if (status != CS_CONVERGED)
                break;
            cs__lemke_entering_column(&L, driving);
            refine(&L, driving);
        }
        // Basic values fall as the driving variable rises where the column is positive beyond
        // its error bound.
        int ncand = 0;
        for (int i = 0; i < n && !L.meter.passed; i++)
            if (L.col[i] > 0 && (L.col[i] > row_cap(&L, i, L.acmax) ||
                                 L.col[i] > row_bound(&L, i, L.ac, L.dcol)))
                L.cand[ncand++] = i;
        if (L.meter.passed) {
            status = CS_DEADLINE;
            break;
        }
        if (ncand == 0) {
            status = CS_RAY;
            break;
        }
        r = lexico_ratio(&L, ncand, L.row_of[2 * n]);
        const int leaving = L.basic[r];
        pivot(&L, r, driving);
        if (L.meter.passed) {
            status = CS_DEADLINE;
            break;
        }
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
