/* SPDX-License-Identifier: MIT */
/* Dense kernels for libcontact. The semidefinite factorization is a pivoted Cholesky with rank
 * detection: contact matrices built from redundant contacts are singular, and the rank-revealing
 * factor is what lets a pivoting solver solve the consistent systems it meets (Baraff 1994,
 * section 4.4 and footnote 3). It is LAPACK's unblocked dpstf2 written out, so that a real-time
 * solve can stop it at its deadline (a cs__meter per column); without a deadline, large matrices
 * go to LAPACK's blocked dpstrf (BLAS calls resolve to BLIS), which is faster there but cannot
 * be interrupted. */
#include "solver/linalg.h"

#include <math.h>

#include "solver/deadline.h"
#include "solver/simd.h"

/* LAPACK (Fortran interface). */
extern void dpstrf_(const char *uplo, const int *n, double *a, const int *lda, int *piv, int *rank,
                    const double *tol, double *work, int *info);

void cs_quat_to_mat3(double R[9], const double q[4]) {
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z);
    R[1] = 2 * (x * y - w * z);
    R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);
    R[4] = 1 - 2 * (x * x + z * z);
    R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);
    R[7] = 2 * (y * z + w * x);
    R[8] = 1 - 2 * (x * x + y * y);
}

/* Row i of R A R^T from row r = (r0, r1, r2) of R (see cs_mat3_rotate). */
static inline void rotate_row(double out[3], double r0, double r1, double r2, const cs__v2 a[3],
                              const double ac[3], const cs__v2 t[3], const double tc[3]) {
    const cs__v2 ra = (cs__v2){r0, r0} * a[0] + (cs__v2){r1, r1} * a[1] + (cs__v2){r2, r2} * a[2];
    const double x = ra[0], y = ra[1], z = r0 * ac[0] + r1 * ac[1] + r2 * ac[2];
    cs__st2(out, (cs__v2){x, x} * t[0] + (cs__v2){y, y} * t[1] + (cs__v2){z, z} * t[2]);
    out[2] = x * tc[0] + y * tc[1] + z * tc[2];
}

void cs_mat3_rotate(double res[9], const double R[9], const double A[9]) {
    // RA = R A, then res = RA R^T, each entry's three products summed in index order: columns 0
    // and 1 of a row in the two lanes, column 2 alone. Every entry of R and A is read before
    // res is written.
    const cs__v2 a[3] = {cs__ld2(A), cs__ld2(A + 3), cs__ld2(A + 6)};
    const double ac[3] = {A[2], A[5], A[8]};
    // R^T's first two columns by row of R, and its third column.
    const cs__v2 t[3] = {{R[0], R[3]}, {R[1], R[4]}, {R[2], R[5]}};
    const double tc[3] = {R[6], R[7], R[8]};
    const double r[9] = {R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8]};
    rotate_row(res, r[0], r[1], r[2], a, ac, t, tc);
    rotate_row(res + 3, r[3], r[4], r[5], a, ac, t, tc);
    rotate_row(res + 6, r[6], r[7], r[8], a, ac, t, tc);
}

int cs_mat3_spd_inverse(double inv[9], const double A[9]) {
    // Cholesky A = L L^T; a pivot that is not clearly positive relative to the diagonal means
    // the inertia is not positive definite (1e-12: far above rounding, far below any real body).
    const double d0 = fabs(A[0]), d1 = fabs(A[4]), d2 = fabs(A[8]);
    // fmax's value where no diagonal is NaN; else NaN or another diagonal, refused either way (a
    // NaN pivot fails its test below).
    const double d01 = d1 > d0 ? d1 : d0, scale = d2 > d01 ? d2 : d01;
    if (!(scale > 0) || !isfinite(scale))
        return -1;
    const double tol = 1e-12 * scale;
    double l00 = A[0];
    if (!(l00 > tol))
        return -1;
    l00 = sqrt(l00);
    const double l10 = A[3] / l00, l20 = A[6] / l00;
    double l11 = A[4] - l10 * l10;
    if (!(l11 > tol))
        return -1;
    l11 = sqrt(l11);
    const double l21 = (A[7] - l20 * l10) / l11;
    double l22 = A[8] - l20 * l20 - l21 * l21;
    if (!(l22 > tol))
        return -1;
    l22 = sqrt(l22);
    // inv = L^-T L^-1 with L^-1 lower triangular.
    const double i00 = 1 / l00, i11 = 1 / l11, i22 = 1 / l22;
    const double i10 = -l10 * i00 * i11;
    const double i21 = -l21 * i11 * i22;
    const double i20 = -(l20 * i00 + l21 * i10) * i22;
    // inv_ij = L^-1's column i . its column j, the zeros kept in the sums (a zero's sign can reach
    // an entry); inv_ji is the same products in the same order, so inv is symmetric exactly.
    const double c0[3] = {i00, i10, i20}, c1[3] = {0, i11, i21}, c2[3] = {0, 0, i22};
    inv[0] = cs_dot3(c0, c0);
    inv[1] = inv[3] = cs_dot3(c0, c1);
    inv[2] = inv[6] = cs_dot3(c0, c2);
    inv[4] = cs_dot3(c1, c1);
    inv[5] = inv[7] = cs_dot3(c1, c2);
    inv[8] = cs_dot3(c2, c2);
    return 0;
}

size_t cs_psd_work(int n) {
    return 2 * (size_t)n;
}

/* Order from which a factorization without a deadline goes to LAPACK's blocked dpstrf: the
 * blocking pays off only beyond a few cache-sized panels (dpstrf itself runs dpstf2 below its
 * block size 64). */
#define PSD_LAPACK_MIN 384

int cs__psd_factor(int n, double *A, int lda, int *piv, int *rank, double rel_tol, double *work,
                   cs__meter *meter) {
    *rank = 0;
    if (n == 0)
        return 0;
    double dmax = 0;
    for (int i = 0; i < n; i++) {
        const double d = A[(size_t)i * lda + i];
        if (!(d >= 0) || !isfinite(d))
            return -1;
        dmax = fmax(dmax, d);
    }
    if (dmax == 0) {
        // Rank 0: the solve zeroes every direction, through the identity permutation.
        for (int i = 0; i < n; i++)
            piv[i] = i;
        return 0;
    }
    const double tol = rel_tol * dmax;
    if (n >= PSD_LAPACK_MIN && !cs__meter_armed(meter)) {
        int info = 0;
        dpstrf_("L", &n, A, &lda, piv, rank, &tol, work, &info);
        if (info < 0)
            return -1;
        // LAPACK's pivots are 1-based.
        for (int i = 0; i < n; i++)
            piv[i] -= 1;
        return 0;
    }
#define AT(i, j) A[(size_t)(j) * lda + (i)]
    // dpstf2: work[i] sums the squares of row i's factored entries, work[n + i] is the diagonal
    // left to factor, A_ii - work[i]; the largest one is the next pivot.
    for (int i = 0; i < n; i++) {
        piv[i] = i;
        work[i] = 0;
    }
    for (int j = 0; j < n; j++) {
        for (int i = j; i < n; i++) {
            if (j > 0)
                work[i] += AT(i, j - 1) * AT(i, j - 1);
            work[n + i] = AT(i, i) - work[i];
        }
        int p = j;
        for (int i = j + 1; i < n; i++)
            p = work[n + i] > work[n + p] ? i : p;
        const double ajj = work[n + p];
        // The first pivot is the largest diagonal (> 0); a later one at the tolerance ends it.
        if (j > 0 && (ajj <= tol || isnan(ajj))) {
            AT(j, j) = ajj;
            *rank = j;
            return 0;
        }
        if (p != j) {
            // Symmetric interchange of j and p within the lower triangle.
            AT(p, p) = AT(j, j);
            for (int k = 0; k < j; k++) {
                const double t = AT(j, k);
                AT(j, k) = AT(p, k);
                AT(p, k) = t;
            }
            for (int i = p + 1; i < n; i++) {
                const double t = AT(i, j);
                AT(i, j) = AT(i, p);
                AT(i, p) = t;
            }
            for (int i = j + 1; i < p; i++) {
                const double t = AT(i, j);
                AT(i, j) = AT(p, i);
                AT(p, i) = t;
            }
            const double tw = work[j];
            work[j] = work[p];
            work[p] = tw;
            const int tp = piv[j];
            piv[j] = piv[p];
            piv[p] = tp;
        }
        const double d = sqrt(ajj);
        AT(j, j) = d;
        // Column j below the diagonal: minus the factored columns' part, over the pivot.
        for (int k = 0; k < j; k++) {
            const double ajk = AT(j, k);
            const double *ck = A + (size_t)k * lda;
            double *cj = A + (size_t)j * lda;
            for (int i = j + 1; i < n; i++)
                cj[i] -= ck[i] * ajk;
        }
        const double inv = 1 / d;
        for (int i = j + 1; i < n; i++)
            AT(i, j) *= inv;
        if (meter && cs__meter_add(meter, (int64_t)(n - j) * (j + 1)))
            return 1;
    }
#undef AT
    *rank = n;
    return 0;
}

int cs_psd_factor(int n, double *A, int lda, int *piv, int *rank, double rel_tol, double *work) {
    return cs__psd_factor(n, A, lda, piv, rank, rel_tol, work, NULL);
}

void cs__psd_solve(int n, const double *L, int lda, const int *piv, int rank, const double *b,
                   double *x, double *work, cs__meter *meter) {
    // P^T A P = L L^T  =>  A x = b  with  y = P^T x:  L L^T y = P^T b.
    double *y = work;
    for (int i = 0; i < n; i++)
        y[i] = b[piv[i]];
    for (int i = 0; i < rank; i++) {
        double s = y[i];
        for (int k = 0; k < i; k++)
            s -= L[(size_t)k * lda + i] * y[k];
        y[i] = s / L[(size_t)i * lda + i];
        if (meter && cs__meter_add(meter, i + 1))
            return;
    }
    for (int i = rank - 1; i >= 0; i--) {
        double s = y[i];
        for (int k = i + 1; k < rank; k++)
            s -= L[(size_t)i * lda + k] * y[k];
        y[i] = s / L[(size_t)i * lda + i];
        if (meter && cs__meter_add(meter, rank - i))
            return;
    }
    // Directions beyond the numerical rank carry no information: zero them.
    for (int i = rank; i < n; i++)
        y[i] = 0;
    for (int i = 0; i < n; i++)
        x[piv[i]] = y[i];
}

void cs_psd_solve(int n, const double *L, int lda, const int *piv, int rank, const double *b,
                  double *x, double *work) {
    cs__psd_solve(n, L, lda, piv, rank, b, x, work, NULL);
}

/* Step k of the LU: the pivot of column k (rows k..n), that row swapped with row k across all
 * columns, the multipliers below it; *ret_last: the last row with a non-zero multiplier (rows
 * past it take no update: banded matrices, contacts coupled through neighbouring bodies only).
 * Returns 0, or -1 when the pivot is below 1e-13 amax. */
static int lu_pivot(int n, double *A, int lda, int k, double amax, int *piv, double *umin,
                    double *umax, int *ret_last) {
    double *ck = A + (size_t)k * lda;
    int p = k;
    double best = fabs(ck[k]);
    for (int i = k + 1; i < n; i++)
        if (fabs(ck[i]) > best) {
            best = fabs(ck[i]);
            p = i;
        }
    piv[k] = p;
    const double d = ck[p];
    if (!(best > 1e-13 * amax))
        return -1;
    if (p != k)
        for (int j = 0; j < n; j++) {
            double *c = A + (size_t)j * lda;
            const double t = c[k];
            c[k] = c[p];
            c[p] = t;
        }
    *umin = fabs(d) < *umin ? fabs(d) : *umin;
    *umax = fabs(d) > *umax ? fabs(d) : *umax;
    int last = k;
    for (int i = k + 1; i < n; i++) {
        ck[i] /= d;
        last = ck[i] != 0 ? i : last;
    }
    *ret_last = last;
    return 0;
}

/* y[0 .. n) = (y + x0 a0) + x1 a1, two rows at a time: two rank-one updates in one pass over y,
 * with the rounding of the two in turn. */
static inline void axpy2(int n, double a0, const double *x0, double a1, const double *x1,
                         double *y) {
    const cs__v2 v0 = {a0, a0}, v1 = {a1, a1};
    int i = 0;
    for (; i + 2 <= n; i += 2)
        cs__st2(y + i, (cs__ld2(y + i) + cs__ld2(x0 + i) * v0) + cs__ld2(x1 + i) * v1);
    for (; i < n; i++)
        y[i] = (y[i] + x0[i] * a0) + x1[i] * a1;
}

int cs_lu_factor(int n, double *A, int lda, int *piv, double *ret_growth, cs__meter *meter) {
    // The largest |A_ij|; 0 x sums to 0 over finite entries and to NaN over any other, without a
    // branch each (a max forgets a NaN at the next entry).
    double amax = 0, z = 0;
    for (int j = 0; j < n; j++) {
        const double *cj = A + (size_t)j * lda;
        for (int i = 0; i < n; i++) {
            const double x = fabs(cj[i]);
            amax = x > amax ? x : amax;
            z += 0 * cj[i];
        }
        if (meter && cs__meter_add(meter, n))
            return 1;
    }
    if (z != 0 || !isfinite(amax))
        return -1;
    double umin = INFINITY, umax = 0;
    // Two steps at a time: column k + 1 takes step k's update and its own pivot, then the columns
    // after it take both updates in one pass (cj - f ck as cj + ck (-f), step k's first: the
    // rounding of one step after the other; the row swaps commute with the updates, which act
    // row by row on multipliers swapped alike).
    for (int k = 0; k < n; k += 2) {
        int last0, last1;
        if (lu_pivot(n, A, lda, k, amax, piv, &umin, &umax, &last0) < 0)
            return -1;
        if (k + 1 == n) {
            if (meter && cs__meter_add(meter, 1))
                return 1;
            break;
        }
        const double *c0 = A + (size_t)k * lda, *c1 = A + (size_t)(k + 1) * lda;
        double *d1 = A + (size_t)(k + 1) * lda;
        if (d1[k] != 0)
            cs__axpy(last0 - k, -d1[k], c0 + k + 1, d1 + k + 1);
        if (lu_pivot(n, A, lda, k + 1, amax, piv, &umin, &umax, &last1) < 0)
            return -1;
        // Step k + 1's swap moved a row of step k's multipliers too.
        last0 = piv[k + 1] > last0 ? piv[k + 1] : last0;
        const int rows = (last0 > last1 ? last0 : last1) - k - 1;
        // The two steps' update is counted once at its end where that reads no clock, else
        // column by column: at n in the hundreds it is a stretch of hundreds of us.
        const int64_t units = (int64_t)(n - k) * (n - k) + (int64_t)(n - k - 1) * (n - k - 1);
        cs__meter *const mt = cs__meter_piecewise(meter, units);
        for (int j = k + 2; j < n; j++) {
            double *cj = A + (size_t)j * lda;
            const double u0 = cj[k];
            if (u0 != 0)
                cj[k + 1] += c0[k + 1] * -u0;
            const double u1 = cj[k + 1];
            if (u0 != 0 && u1 != 0)
                axpy2(rows, -u0, c0 + k + 2, -u1, c1 + k + 2, cj + k + 2);
            else if (u0 != 0)
                cs__axpy(last0 - k - 1, -u0, c0 + k + 2, cj + k + 2);
            else if (u1 != 0)
                cs__axpy(last1 - k - 1, -u1, c1 + k + 2, cj + k + 2);
            if (mt && cs__meter_add(mt, 2 * (int64_t)(n - k)))
                return 1;
        }
        if (meter && !mt && cs__meter_add(meter, units))
            return 1;
    }
    *ret_growth = n > 0 ? umax / umin : 1;
    return 0;
}

void cs_lu_solve(int n, const double *LU, int lda, const int *piv, double *b, cs__meter *meter) {
    // The factor swapped whole rows (L included), so P b first, then L y = P b.
    for (int k = 0; k < n; k++) {
        const double t = b[k];
        b[k] = b[piv[k]];
        b[piv[k]] = t;
    }
    for (int k = 0; k < n; k++) {
        cs__axpy(n - k - 1, -b[k], LU + (size_t)k * lda + k + 1, b + k + 1);
        if (meter && cs__meter_add(meter, n - k))
            return;
    }
    for (int k = n - 1; k >= 0; k--) {
        b[k] /= LU[(size_t)k * lda + k];
        cs__axpy(k, -b[k], LU + (size_t)k * lda, b);
        if (meter && cs__meter_add(meter, k + 1))
            return;
    }
}

void cs__gaxpy_cols(int n, const double *A, int lda, const int *cols, int k, const double *x,
                    double *y) {
    int q = 0;
    for (; q + 4 <= k; q += 4) {
        const int j0 = cols ? cols[q] : q, j1 = cols ? cols[q + 1] : q + 1;
        const int j2 = cols ? cols[q + 2] : q + 2, j3 = cols ? cols[q + 3] : q + 3;
        const double *c0 = A + (size_t)j0 * lda, *c1 = A + (size_t)j1 * lda;
        const double *c2 = A + (size_t)j2 * lda, *c3 = A + (size_t)j3 * lda;
        const double x0 = x[j0], x1 = x[j1], x2 = x[j2], x3 = x[j3];
        const cs__v2 v0 = {x0, x0}, v1 = {x1, x1}, v2 = {x2, x2}, v3 = {x3, x3};
        int i = 0;
        for (; i + 2 <= n; i += 2) {
            cs__v2 t = cs__ld2(y + i);
            t += cs__ld2(c0 + i) * v0;
            t += cs__ld2(c1 + i) * v1;
            t += cs__ld2(c2 + i) * v2;
            t += cs__ld2(c3 + i) * v3;
            cs__st2(y + i, t);
        }
        for (; i < n; i++) {
            double t = y[i];
            t += c0[i] * x0;
            t += c1[i] * x1;
            t += c2[i] * x2;
            t += c3[i] * x3;
            y[i] = t;
        }
    }
    for (; q < k; q++) {
        const int j = cols ? cols[q] : q;
        cs__axpy(n, x[j], A + (size_t)j * lda, y);
    }
}

void cs__ger(int n, int k, const double *x, const double *s, double *M, int ldm) {
    for (int j = 0; j < k; j++)
        cs__axpy(n, s[j], x, M + (size_t)j * ldm);
}
