/* SPDX-License-Identifier: MIT */
/* Shared test helpers: near-equality that prints full precision, a seeded generator, random LCPs
 * and their brute-force solution, and paths to the test data. */
#ifndef CONTACTD_TESTS_TESTLIB_H
#define CONTACTD_TESTS_TESTLIB_H
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "wire/types.h"

#include <cmocka.h>

/* Fails the test unless |a - b| <= tol, printing both values with %.17g. */
#define assert_near(a, b, tol) t_assert_near((a), (b), (tol), #a, #b, __FILE__, __LINE__)
void t_assert_near(double a, double b, double tol, const char *as, const char *bs,
                   const char *file, int line);

/* splitmix64: small, fast, and the same sequence on every machine. */
typedef struct t_rng {
    uint64_t s;
} t_rng;
t_rng t_rng_seed(uint64_t seed);
uint64_t t_rng_next(t_rng *r);
/* Uniform in [0, 1). */
double t_rng_unit(t_rng *r);
/* Uniform in [lo, hi). */
double t_rng_range(t_rng *r, double lo, double hi);
/* Uniform integer in [0, n). */
int t_rng_below(t_rng *r, int n);
/* A random mutant of buf's len bytes in place: one to three edits, each a byte changed, dropped
 * or inserted, or the end cut. Returns the new length (at most len + 3: buf needs that room). */
size_t t_mutate(t_rng *r, uint8_t *buf, size_t len);
/* env (len bytes) is a message whose only field is field 2, length-delimited (a ClientMessage's
 * frame, a ServerMessage's result): writes into out that message with n extra bytes appended to
 * that field's contents, its length fixed up. Returns out's length (at most len + n + 10). */
size_t t_envelope_plus(const uint8_t *env, size_t len, const uint8_t *extra, size_t n,
                       uint8_t *out);

/* A cs_options clock that stays at 0 and counts its reads in t_clock_reads: with a deadline that
 * never comes, how often a solver's meter looks at the clock (deadline.h). */
extern long t_clock_reads;
int64_t t_clock_counting(void);

/* A = G G^T (n x n column-major) with G n x k, k in [1, n] random: PSD, rank k; b random in
 * [-1, 1] when in_range is false, else b = A x for a random x (the case Baraff's theory covers). */
void t_lcp_random_psd(t_rng *r, int n, int k, bool in_range, double *A, double *b);
/* A = G G^T (n x n column-major) for G n x k row-major: PSD, rank at most k. */
void t_gram(int n, int k, const double *G, double *A);
/* Brute force over all 2^n complementary index sets (n <= 12): true when some set S gives
 * f_S = -A_SS^+ b_S >= 0 with w = A f + b >= 0 (tolerance tol, relative to the data and to
 * 1 + |f|_inf);
 * f (if not NULL) receives one such solution. */
bool t_lcp_enumerate(int n, const double *A, const double *b, double tol, double *f);
/* max_i max(-f_i, -w_i, |f_i w_i|) for w = A f + b. */
double t_lcp_residual(int n, const double *A, const double *b, const double *f);
/* Asserts w = A f + b equals A fe + b within tol, row by row: on a PSD LCP w is unique even when
 * f is not (redundant rows), so two solvers' answers are compared through it. */
void t_lcp_assert_same_w(int n, const double *A, const double *b, const double *f,
                         const double *fe, double tol);
/* 1 + |f|_inf: the scale rounding errors of an LCP answer grow with. */
double t_lcp_scale(int n, const double *f);

/* Path of a file in tests/data ($CONTACTD_DATA) or in the shared test data: $CONTACTD_TEST_DATA
 * when set, else ../shared beside the source tree ($CONTACTD_SHARED, set by meson). */
const char *t_data_path(const char *name);

/* Copies src (its bodies and contacts too) into dst, keeping dst's own arrays, which must have
 * room for src's (a session's frame buffer). seq: dst's sequence number. */
void t_scene_copy(cs_scene *dst, const cs_scene *src, uint64_t seq);
const char *t_shared_path(const char *name);

/* x = A^-1 x for a dense n x n A (column-major, destroyed; a symmetric A may be given either
 * way) by Gaussian elimination with partial pivoting: the brute-force reference solvers are
 * checked against. False when a pivot's magnitude is not above tiny. */
bool t_dense_solve(int n, double *A, double *x, double tiny);

/* For a test whose every case reads ../shared/<dir> (or $CONTACTD_TEST_DATA/<dir>): when it is
 * absent (a user's own clone), says which path and exits so that meson reports the test skipped:
 * a TAP plan "1..0 # SKIP ..." under CMOCKA_MESSAGE_OUTPUT=TAP, else exit status 77. */
void t_require_shared(const char *dir);

/* True when ../shared/<dir> (or $CONTACTD_TEST_DATA/<dir>) is there; for a test with a few cases
 * that read it, which then leaves those out (saying which path) rather than skip the rest. */
bool t_shared_present(const char *dir);

#endif /* CONTACTD_TESTS_TESTLIB_H */
