/* SPDX-License-Identifier: MIT */
/* Incremental inverse of a pivoting method's clamped system (bordered.h; Baraff 1994, section 4.5).
 *
 * THE MATHS. With K (order p) and its inverse known, the bordered matrix [K u; v' d] has
 * the inverse
 *     [K^-1 + y z' / s,  -y / s;  -z' / s,  1 / s],   y = K^-1 u, z' = v' K^-1, s = d - v' y,
 * so adding a member costs two products with K^-1 and a rank-one update, O(p^2): one product when
 * K is symmetric (z = y), none when the caller has y from a solve. Removing member k
 * inverts the block formula: with the member's row and column of K^-1 (r', c) and its diagonal e,
 * the inverse of K without it is K^-1 - c r' / e (over the other members), also O(p^2).
 *
 * SINGULAR STEPS. s is the pivot Gaussian elimination would meet if the member were eliminated
 * last; |s| <= tol means the member's equation is (numerically) a combination of the others',
 * as with four coplanar contacts of a box (rank 3). Such a member is deferred: its unknown is 0
 * and its equation, consistent in exact arithmetic (Baraff's theorem: the right-hand side lies in
 * the range), is checked at each solve, and it is tried again when a removal or a new member
 * changes its pivot by more than tol (a face of the bounded problem, whose diagonal is 0, is
 * singular until the row it bounds joins). A removal whose e is tiny against the row and column it
 * leaves behind would blow the inverse up (the remaining block is nearly singular): the inverse is
 * then rebuilt from K by adding the members again, which defers whatever is dependent.
 *
 * ACCURACY. cs__bordered_solve takes one step of iterative refinement against K itself (kept entry
 * by entry for all members), so rounding in the updated inverse does not accumulate into the
 * answers; a refinement that still corrects more than 1e-6 of the answer triggers a rebuild.
 * cs__bordered_solve_once leaves that to a caller who reads the residual anyway. */
#include "solver/bordered.h"

#include <math.h>

#include "solver/deadline.h"
#include "solver/linalg.h"
#include "solver/workspace.h"

/* A refinement step that changes the answer by more than this fraction says the inverse has
 * drifted: rebuild (rounding alone leaves ~1e-16 x the condition number). */
#define DRIFT_TOL 1e-6

size_t cs__bordered_size(int cap, int nid) {
    const size_t c = (size_t)cap;
    return cs__ws_bytes(c * sizeof(int)) + cs__ws_bytes((size_t)nid * sizeof(int)) +
           cs__ws_bytes((size_t)nid) +
           2 * cs__ws_bytes(c * c * sizeof(double)) + 4 * cs__ws_bytes(c * sizeof(double));
}

int cs__bordered_init(cs__bordered *b, cs_workspace *ws, int cap, int nid, double tol,
                      cs__bordered_entry *entry, const void *ctx, cs__meter *meter) {
    const size_t c = (size_t)cap;
    *b = (cs__bordered){
        .cap = cap,
        .id = cs__ws_alloc(ws, c * sizeof(int)),
        .slot = cs__ws_alloc(ws, (size_t)nid * sizeof(int)),
        .retry = cs__ws_zalloc(ws, (size_t)nid),
        .K = cs__ws_alloc(ws, c * c * sizeof(double)),
        .inv = cs__ws_alloc(ws, c * c * sizeof(double)),
        .y = cs__ws_alloc(ws, c * sizeof(double)),
        .z = cs__ws_alloc(ws, c * sizeof(double)),
        .rs = cs__ws_alloc(ws, c * sizeof(double)),
        .xs = cs__ws_alloc(ws, c * sizeof(double)),
        .tol = tol,
        .entry = entry,
        .ctx = ctx,
        .meter = meter,
    };
    if (cap > 0 && (!b->id || !b->slot || !b->retry || !b->K || !b->inv || !b->y || !b->z ||
                    !b->rs || !b->xs))
        return -1;
    // A unit a slot, counted a chunk at a time (a bounded solve's ids are its rows and faces:
    // thousands at a session's limits). A passed deadline is the caller's to see; the slots are
    // all set.
    const int chunk = cs__meter_chunk(meter, nid, 1);
    for (int i0 = 0; i0 < nid; i0 += chunk) {
        const int k = cs__chunk_len(i0, chunk, nid);
        for (int i = i0; i < i0 + k; i++)
            b->slot[i] = -1;
        if (meter)
            (void)cs__meter_add(meter, k);
    }
    return 0;
}

void cs__bordered_clear(cs__bordered *b) {
    for (int s = 0; s < b->m; s++) {
        b->slot[b->id[s]] = -1;
        b->retry[b->id[s]] = 0;
    }
    b->p = b->m = 0;
    b->stale = false;
}

static inline double *at(double *M, int cap, int row, int col) {
    return M + (size_t)col * cap + row;
}

static inline void count(cs__bordered *b, int64_t units) {
    if (b->meter)
        (void)cs__meter_add(b->meter, units);
}

static inline void swap_d(double *x, double *y) {
    const double t = *x;
    *x = *y;
    *y = t;
}

/* Exchanges slots s and t (a symmetric permutation of K, and of the inverse when both are in
 * it). */
static void swap_slots(cs__bordered *b, int s, int t) {
    if (s == t)
        return;
    const int c = b->cap, is = b->id[s], it = b->id[t];
    b->id[s] = it;
    b->id[t] = is;
    b->slot[is] = t;
    b->slot[it] = s;
    for (int q = 0; q < 2; q++) {
        double *M = q == 0 ? b->K : b->inv;
        const int n = q == 0 ? b->m : b->p;
        if (s >= n || t >= n)
            continue;
        for (int j = 0; j < n; j++)
            swap_d(at(M, c, s, j), at(M, c, t, j));
        for (int i = 0; i < n; i++)
            swap_d(at(M, c, i, s), at(M, c, i, t));
    }
}

/* Brings the deferred member in slot s (>= p) into the inverse when its Schur pivot exceeds tol.
 * known: NULL, or K^-1 u by id up to the factor scale (u the member's column), as a solve gave it. */
static bool try_factor(cs__bordered *b, int s, const double *known, double scale) {
    swap_slots(b, s, b->p);
    const int c = b->cap, p = b->p;
    // y = K^-1 u and z' = v' K^-1, u and v the new column and row (v copied out of K's row, which
    // is strided, into rs: free outside cs__bordered_solve's use of it after any refresh; a
    // symmetric system's row is its column).
    double *restrict y = b->y, *restrict z = b->z, *restrict v = b->rs;
    const double *u = at(b->K, c, 0, p);
    if (b->symmetric)
        v = (double *)u;
    else
        for (int i = 0; i < p; i++)
            v[i] = *at(b->K, c, p, i);
    if (known) {
        for (int i = 0; i < p; i++)
            y[i] = scale * known[b->id[i]];
    } else {
        for (int i = 0; i < p; i++)
            y[i] = 0;
        cs__gaxpy_cols(p, b->inv, c, NULL, p, u, y);
        count(b, (int64_t)p * p);
    }
    if (b->symmetric) {
        for (int i = 0; i < p; i++)
            z[i] = y[i];
    } else {
        // Two columns at a time: independent sums, each in order.
        int j = 0;
        for (; j + 2 <= p; j += 2) {
            const double *restrict c0 = at(b->inv, c, 0, j), *restrict c1 = c0 + c;
            double z0 = 0, z1 = 0;
            for (int i = 0; i < p; i++) {
                z0 += v[i] * c0[i];
                z1 += v[i] * c1[i];
            }
            z[j] = z0;
            z[j + 1] = z1;
        }
        if (j < p) {
            const double *restrict c0 = at(b->inv, c, 0, j);
            double z0 = 0;
            for (int i = 0; i < p; i++)
                z0 += v[i] * c0[i];
            z[j] = z0;
        }
        count(b, (int64_t)p * p);
    }
    double sch = *at(b->K, c, p, p);
    for (int i = 0; i < p; i++)
        sch -= v[i] * y[i];
    count(b, p);
    if (!(fabs(sch) > b->tol))
        return false;
    // A deferred member X's pivot becomes s_X - (K_XY - v_X' y)(K_YX - z' u_X) / sch with this one
    // (Y) in: zero change when X's row or column is a combination of the members' (always so for a
    // symmetric PSD system), but an unsymmetric one (a face whose rows join after it) can become
    // independent. Those whose change is above tol are worth a try.
    for (int d = p + 1; d < b->m; d++) {
        double vy = *at(b->K, c, d, p);
        for (int i = 0; i < p; i++)
            vy -= *at(b->K, c, d, i) * y[i];
        double zu = vy;
        if (!b->symmetric) {
            zu = *at(b->K, c, p, d);
            for (int i = 0; i < p; i++)
                zu -= z[i] * *at(b->K, c, i, d);
        }
        if (fabs(vy * zu) > b->tol * fabs(sch))
            b->retry[b->id[d]] = 1;
    }
    count(b, 2 * (int64_t)(b->m - p - 1) * p);
    const double is = 1 / sch;
    for (int j = 0; j < p; j++) {
        z[j] *= is;
        *at(b->inv, c, p, j) = -z[j];
    }
    cs__ger(p, p, y, z, b->inv, c);
    double *restrict last = at(b->inv, c, 0, p);
    for (int i = 0; i < p; i++)
        last[i] = -y[i] * is;
    last[p] = is;
    b->p++;
    count(b, (int64_t)p * p);
    return true;
}

/* cs__bordered_add and cs__bordered_add_known: known as there, or NULL. */
static void add(cs__bordered *b, int id, const double *known, double scale) {
    CS_ASSERT(b->m < b->cap && b->slot[id] < 0);
    const int c = b->cap, s = b->m;
    b->id[s] = id;
    b->slot[id] = s;
    for (int t = 0; t < s; t++) {
        const double e = *at(b->K, c, t, s) = b->entry(b->ctx, b->id[t], id);
        *at(b->K, c, s, t) = b->symmetric ? e : b->entry(b->ctx, id, b->id[t]);
    }
    *at(b->K, c, s, s) = b->entry(b->ctx, id, id);
    b->m++;
    count(b, (b->symmetric ? 1 : 2) * (int64_t)s);
    // With deferred members the new one is tried after them (refresh), so they keep precedence.
    if (!b->stale && b->p == s)
        (void)try_factor(b, s, known, scale);
    else
        b->retry[id] = 1;
}

void cs__bordered_add(cs__bordered *b, int id) {
    add(b, id, NULL, 0);
}

void cs__bordered_add_known(cs__bordered *b, int id, const double *x, double scale) {
    add(b, id, x, scale);
}

void cs__bordered_remove(cs__bordered *b, int id) {
    const int c = b->cap;
    int s = b->slot[id];
    CS_ASSERT(s >= 0);
    if (s < b->p) {
        const int k = b->p - 1;
        swap_slots(b, s, k);
        if (!b->stale) {
            // K^-1 - c r' / e over the other members, unless that block is nearly singular.
            const double e = *at(b->inv, c, k, k);
            double cmax = 0, rmax = 0;
            for (int i = 0; i < k; i++) {
                cmax = fmax(cmax, fabs(*at(b->inv, c, i, k)));
                rmax = fmax(rmax, fabs(*at(b->inv, c, k, i)));
            }
            if (!(cmax * rmax * b->tol < fabs(e))) {
                b->stale = true;
            } else {
                // A deferred member's pivot becomes s + (v' K^-1 e_k)(e_k' K^-1 u) / e without
                // this one, s ~ 0: only those whose change is above tol are worth a try.
                for (int d = b->p; d < b->m; d++) {
                    double vc = 0, ru = 0;
                    for (int i = 0; i <= k; i++) {
                        vc += *at(b->K, c, d, i) * *at(b->inv, c, i, k);
                        ru += *at(b->inv, c, k, i) * *at(b->K, c, i, d);
                    }
                    if (fabs(vc * ru) > b->tol * fabs(e))
                        b->retry[b->id[d]] = 1;
                }
                count(b, 2 * (int64_t)(b->m - b->p) * k);
                const double ie = 1 / e;
                double *mr = b->z;
                for (int j = 0; j < k; j++)
                    mr[j] = -(*at(b->inv, c, k, j) * ie);
                cs__ger(k, k, at(b->inv, c, 0, k), mr, b->inv, c);
                count(b, (int64_t)k * k);
            }
        }
        b->p = k;
        s = k;
    }
    swap_slots(b, s, b->m - 1);
    b->m--;
    b->slot[id] = -1;
    b->retry[id] = 0;
}

void cs__bordered_refresh(cs__bordered *b) {
    if (b->stale) {
        b->p = 0;
        b->stale = false;
        for (int s = 0; s < b->m; s++)
            b->retry[b->id[s]] = 1;
    }
    // A success may mark deferred members already passed (try_factor): look at them all again.
    int s = b->p;
    while (s < b->m && !(b->meter && b->meter->passed)) {
        const int id = b->id[s];
        if (!b->retry[id]) {
            s++;
            continue;
        }
        b->retry[id] = 0;
        if (try_factor(b, s, NULL, 0))
            s = b->p;
        else
            s++;
    }
}

/* x = K^-1 rhs over the inverse's members (slot order), refined once; returns the largest
 * correction. */
static double solve_refined(cs__bordered *b, const double *rhs, double *x) {
    const int c = b->cap, p = b->p;
    double *restrict r = b->y, *restrict dx = b->z;
    for (int i = 0; i < p; i++) {
        x[i] = dx[i] = 0;
        r[i] = rhs[i];
    }
    cs__gaxpy_cols(p, b->inv, c, NULL, p, rhs, x);
    // r = rhs - K x, as r += K (-x) with -x in dx for the moment.
    for (int i = 0; i < p; i++)
        dx[i] = -x[i];
    cs__gaxpy_cols(p, b->K, c, NULL, p, dx, r);
    for (int i = 0; i < p; i++)
        dx[i] = 0;
    cs__gaxpy_cols(p, b->inv, c, NULL, p, r, dx);
    double corr = 0;
    for (int i = 0; i < p; i++) {
        x[i] += dx[i];
        corr = fabs(dx[i]) > corr ? fabs(dx[i]) : corr;
    }
    count(b, 3 * (int64_t)p * p);
    return corr;
}

int cs__bordered_solve_once(cs__bordered *b, const double *rhs, double *x) {
    if (b->stale)
        cs__bordered_refresh(b);
    if (b->meter && b->meter->passed)
        return 1;
    const int c = b->cap, p = b->p;
    double *restrict rs = b->rs, *restrict xs = b->xs;
    for (int s = 0; s < p; s++) {
        rs[s] = rhs[b->id[s]];
        xs[s] = 0;
    }
    cs__gaxpy_cols(p, b->inv, c, NULL, p, rs, xs);
    count(b, (int64_t)p * p);
    for (int s = 0; s < b->m; s++)
        x[b->id[s]] = s < p ? xs[s] : 0;
    return 0;
}

int cs__bordered_solve(cs__bordered *b, const double *rhs, double *x, double cons_tol) {
    double *rs = b->rs, *xs = b->xs;
    for (int pass = 0;; pass++) {
        if (b->stale)
            cs__bordered_refresh(b);
        for (int s = 0; s < b->m; s++)
            rs[s] = rhs[b->id[s]];
        const double corr = solve_refined(b, rs, xs);
        double xmax = 0;
        for (int i = 0; i < b->p; i++)
            xmax = fmax(xmax, fabs(xs[i]));
        if (pass > 0 || !(corr > DRIFT_TOL * xmax))
            break;
        b->stale = true;
    }
    if (b->meter && b->meter->passed)
        return 1;
    const int c = b->cap;
    for (int s = 0; s < b->m; s++)
        x[b->id[s]] = s < b->p ? xs[s] : 0;
    for (int d = b->p; d < b->m; d++) {
        double v = rs[d];
        for (int j = 0; j < b->p; j++)
            v -= *at(b->K, c, d, j) * xs[j];
        if (!(fabs(v) <= cons_tol))
            return -1;
    }
    count(b, (int64_t)(b->m - b->p) * b->p);
    return 0;
}
