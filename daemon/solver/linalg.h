/* SPDX-License-Identifier: MIT */
/* Small dense kernels (3-vectors, 3x3 matrices, quaternions) and a thin wrapper over LAPACK's
 * pivoted Cholesky for the positive semidefinite systems the pivoting solvers meet. Kernels keep
 * BLAS argument order: destination first. */
#ifndef CONTACTD_SOLVER_LINALG_H
#define CONTACTD_SOLVER_LINALG_H
#include <stddef.h>

#include "solver/simd.h"

static inline double cs_dot3(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* res = a x b (res may not alias a or b). */
static inline void cs_cross3(double res[3], const double a[3], const double b[3]) {
    res[0] = a[1] * b[2] - a[2] * b[1];
    res[1] = a[2] * b[0] - a[0] * b[2];
    res[2] = a[0] * b[1] - a[1] * b[0];
}

/* res = M v, M 3x3 row-major. Written out, with v read first: in the model's per-contact loops
 * gcc -O2 otherwise keeps the 3-trip loop and reloads v after each store to res. */
static inline void cs_mat3_vec(double res[3], const double M[9], const double v[3]) {
    const double x = v[0], y = v[1], z = v[2];
    res[0] = M[0] * x + M[1] * y + M[2] * z;
    res[1] = M[3] * x + M[4] * y + M[5] * z;
    res[2] = M[6] * x + M[7] * y + M[8] * z;
}

/* R (row-major) from a unit quaternion (w, x, y, z). */
void cs_quat_to_mat3(double R[9], const double q[4]);
/* res = R A R^T, all 3x3 row-major. */
void cs_mat3_rotate(double res[9], const double R[9], const double A[9]);
/* inv = A^-1 for a symmetric positive definite A; returns 0, or -1 when A is not SPD (a leading
 * minor <= 0 relative to its diagonal scale). */
int cs_mat3_spd_inverse(double inv[9], const double A[9]);

/* A deadline's work counter (solver/deadline.h); NULL where a kernel takes one: never stop. */
typedef struct cs__meter cs__meter;

/* Workspace doubles cs_psd_factor() needs for order n. */
size_t cs_psd_work(int n);

/* Rank-revealing Cholesky P^T A P = L L^T of a symmetric positive semidefinite A (n x n,
 * column-major, lda >= n), in place (LAPACK's dpstf2 algorithm; dpstrf itself from order 384).
 * Pivots below rel_tol * max(diag A) end the factorization: *rank says how many columns of L are
 * kept. piv: [n] out (0-based). work: [cs_psd_work(n)]. Returns 0, or -1 when A has a
 * negative/non-finite diagonal. thread: any. rt-safe: yes (no allocation). */
int cs_psd_factor(int n, double *A, int lda, int *piv, int *rank, double rel_tol, double *work);
/* The same, stopping when meter's deadline passes (checked per column; with a deadline never
 * LAPACK's uninterruptible dpstrf): returns 1 with A partly factored. meter may be NULL (=
 * cs_psd_factor). */
int cs__psd_factor(int n, double *A, int lda, int *piv, int *rank, double rel_tol, double *work,
                   cs__meter *meter);

/* Solves A x = b with the factor from cs_psd_factor(): the minimum-effort solution that sets the
 * components beyond the rank to zero, exact when b lies in the range of A. b: [n] in, x: [n] out
 * (may alias b). work: [n]. */
void cs_psd_solve(int n, const double *L, int lda, const int *piv, int rank, const double *b,
                  double *x, double *work);
/* The same, stopping (x not written) when meter's deadline passes; meter may be NULL. */
void cs__psd_solve(int n, const double *L, int lda, const int *piv, int rank, const double *b,
                   double *x, double *work, cs__meter *meter);

/* In-place LU with partial pivoting, P A = L U, of a small dense A (n x n, column-major, lda >=
 * n): the kernels of the structural Lemke solver (n <= 6 bodies + 2). piv: [n] out.
 * *ret_growth = max |U_ii| / min |U_ii|, a cheap condition estimate for tolerances. meter: the
 * solve's deadline, checked per column (NULL: none). Returns 0; -1 when a pivot is below 1e-13 of
 * A's largest entry (numerically singular) or not finite; 1 when meter's deadline passed (A partly
 * factored). thread: any. rt-safe: yes. */
int cs_lu_factor(int n, double *A, int lda, int *piv, double *ret_growth, cs__meter *meter);
/* Solves A x = b in place (b: [n]) with the factor of cs_lu_factor(); stops (b unusable) when
 * meter's deadline passes, checked per column (NULL: never). */
void cs_lu_solve(int n, const double *LU, int lda, const int *piv, double *b, cs__meter *meter);

/* y[0 .. n) += x a, two rows at a time, each with the rounding of the scalar y[i] + x[i] a (so
 * y - x b is y + x (-b) exactly). y must not overlap x. thread: any. rt-safe: yes. */
static inline void cs__axpy(int n, double a, const double *x, double *y) {
    const cs__v2 va = {a, a};
    int i = 0;
    for (; i + 2 <= n; i += 2)
        cs__st2(y + i, cs__ld2(y + i) + cs__ld2(x + i) * va);
    for (; i < n; i++)
        y[i] += x[i] * a;
}
/* y[0 .. n) += A(:, c) x[c] for the k columns c = cols[0 .. k) (cols NULL: c = 0 .. k - 1) of A
 * (column-major, leading dimension lda), summed column after column in that order, so that the
 * rounding is that of k single updates; y is read and written once per four columns, two rows at
 * a time. y must not overlap A or x. thread: any. rt-safe: yes. */
void cs__gaxpy_cols(int n, const double *A, int lda, const int *cols, int k, const double *x,
                    double *y);
/* M(0 .. n, j) += x s[j] for j < k: a rank-one update (M column-major, leading dimension ldm), two
 * rows at a time with the rounding of the scalar loop. M must not overlap x or s. thread: any.
 * rt-safe: yes. */
void cs__ger(int n, int k, const double *x, const double *s, double *M, int ldm);

#endif /* CONTACTD_SOLVER_LINALG_H */
