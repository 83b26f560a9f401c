/* SPDX-License-Identifier: MIT */
/* Dantzig/Baraff pivoting on plain LCPs: agreement with brute-force enumeration on random PSD
 * problems (full rank and rank-deficient), degenerate constructions, infeasible input, the pivot
 * cap and the deadline. */
#include "solver/dantzig.h"

#include <math.h>
#include <stdio.h>

#include "solver/contact.h"
#include "testlib.h"

static cs_workspace *ws;

static int setup(void **state) {
    (void)state;
    ws = cs_workspace_new(&(cs_limits){.max_bodies = 1, .max_contacts = 12, .max_dirs = 8});
    return ws ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    cs_workspace_free(ws);
    return 0;
}

/* Random PSD LCPs with b in the range of A (Baraff's theory: always solvable): the solver must
 * converge and its answer must satisfy the LCP, as enumeration confirms one exists. */
static void agrees_with_enumeration_in_range(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x5eed);
    for (int trial = 0; trial < 3000; trial++) {
        const int n = 1 + t_rng_below(&rng, 10);
        const int k = 1 + t_rng_below(&rng, n);
        double A[144], b[12], f[12], fe[12];
        t_lcp_random_psd(&rng, n, k, true, A, b);
        cs_stats st;
        const cs_status s = cs_dantzig_lcp(ws, n, A, n, b, NULL, f, &st);
        if (s != CS_CONVERGED)
            fprintf(stderr, "seed 0x5eed trial %d n %d rank %d: status %s\n", trial, n, k,
                    cs_status_name(s));
        assert_int_equal(s, CS_CONVERGED);
        assert_true(t_lcp_enumerate(n, A, b, 1e-9, fe));
        const double sc = t_lcp_scale(n, f);
        assert_near(t_lcp_residual(n, A, b, f), 0.0, 1e-10 * sc * sc);
        t_lcp_assert_same_w(n, A, b, f, fe, 1e-8 * sc);
        assert_true(st.pivots <= 4 * n * (n + 1) + 8);
    }
}

/* Full-rank random problems with arbitrary b: a PD LCP always has a unique solution. */
static void solves_positive_definite(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(42);
    for (int trial = 0; trial < 2000; trial++) {
        const int n = 1 + t_rng_below(&rng, 10);
        double A[144], b[12], f[12], fe[12];
        t_lcp_random_psd(&rng, n, n, false, A, b);
        for (int i = 0; i < n; i++)
            A[i * n + i] += 0.1; // keep it well conditioned
        cs_stats st;
        assert_int_equal(cs_dantzig_lcp(ws, n, A, n, b, NULL, f, &st), CS_CONVERGED);
        assert_true(t_lcp_enumerate(n, A, b, 1e-9, fe));
        for (int i = 0; i < n; i++)
            assert_near(f[i], fe[i], 1e-7);
    }
}

/* PSD with b outside the range of A: either enumeration finds a solution and the solver returns
 * a certified one, or there is none and the solver must say so (never a silent wrong answer). */
static void infeasible_is_a_status(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(7);
    int infeasible = 0;
    for (int trial = 0; trial < 2000; trial++) {
        const int n = 2 + t_rng_below(&rng, 7);
        const int k = 1 + t_rng_below(&rng, n - 1);
        double A[144], b[12], f[12];
        t_lcp_random_psd(&rng, n, k, false, A, b);
        cs_stats st;
        const cs_status s = cs_dantzig_lcp(ws, n, A, n, b, NULL, f, &st);
        const bool exists = t_lcp_enumerate(n, A, b, 1e-9, NULL);
        if (s == CS_CONVERGED) {
            assert_true(exists);
            const double sc = t_lcp_scale(n, f);
            assert_near(t_lcp_residual(n, A, b, f), 0.0, 1e-10 * sc * sc);
        } else {
            assert_true(s == CS_RAY || s == CS_MAXITER);
            assert_false(exists);
            infeasible++;
        }
    }
    // The construction must actually exercise the infeasible branch.
    assert_true(infeasible > 50);
}

/* Four identical rows (a box face on a plane in one dimension): A = 11^T, b = -1. Any f >= 0 with
 * sum 1 solves it; the solver must find one despite A_CC being singular after the first. */
static void redundant_rows(void **state) {
    (void)state;
    double A[16], b[4], f[4];
    for (int i = 0; i < 16; i++)
        A[i] = 1;
    for (int i = 0; i < 4; i++)
        b[i] = -1;
    cs_stats st;
    assert_int_equal(cs_dantzig_lcp(ws, 4, A, 4, b, NULL, f, &st), CS_CONVERGED);
    assert_near(f[0] + f[1] + f[2] + f[3], 1.0, 1e-12);
    assert_near(t_lcp_residual(4, A, b, f), 0.0, 1e-12);
}

/* Ties in every ratio: all b equal on a rank-1 problem with a zero row. */
static void degenerate_ties(void **state) {
    (void)state;
    double A[9] = {2, 2, 0, 2, 2, 0, 0, 0, 0};
    double b[3] = {-1, -1, 0};
    double f[3];
    cs_stats st;
    assert_int_equal(cs_dantzig_lcp(ws, 3, A, 3, b, NULL, f, &st), CS_CONVERGED);
    assert_near(t_lcp_residual(3, A, b, f), 0.0, 1e-12);
    assert_near(f[2], 0.0, 0.0);
}

/* A zero matrix with b < 0 has no solution: raising f changes nothing. */
static void ray_on_zero_matrix(void **state) {
    (void)state;
    double A[4] = {0, 0, 0, 0}, b[2] = {-1, 0.5}, f[2];
    cs_stats st;
    assert_int_equal(cs_dantzig_lcp(ws, 2, A, 2, b, NULL, f, &st), CS_RAY);
}

static void rejects_non_finite(void **state) {
    (void)state;
    double A[1] = {1}, b[1] = {NAN}, f[1];
    cs_stats st;
    assert_int_equal(cs_dantzig_lcp(ws, 1, A, 1, b, NULL, f, &st), CS_EINPUT);
}

static int64_t clock_late(void) {
    return 1000;
}

/* A deadline already past stops the solve before its first step with a definite status. */
static void deadline_stops(void **state) {
    (void)state;
    double A[4] = {1, 0, 0, 1}, b[2] = {-1, -1}, f[2];
    const cs_options opt = {.deadline_ns = 10, .clock_ns = clock_late};
    cs_stats st;
    assert_int_equal(cs_dantzig_lcp(ws, 2, A, 2, b, &opt, f, &st), CS_DEADLINE);
    assert_int_equal(st.pivots, 0);
}

/* The workspace bound holds: the peak never exceeds the capacity it was sized with. */
static void peak_within_capacity(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(3);
    double A[144], b[12], f[12];
    t_lcp_random_psd(&rng, 12, 6, true, A, b);
    cs_stats st;
    assert_int_equal(cs_dantzig_lcp(ws, 12, A, 12, b, NULL, f, &st), CS_CONVERGED);
    assert_true(st.peak_bytes > 0);
    assert_true(st.peak_bytes <= cs_workspace_capacity(ws));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agrees_with_enumeration_in_range),
        cmocka_unit_test(solves_positive_definite),
        cmocka_unit_test(infeasible_is_a_status),
        cmocka_unit_test(redundant_rows),
        cmocka_unit_test(degenerate_ties),
        cmocka_unit_test(ray_on_zero_matrix),
        cmocka_unit_test(rejects_non_finite),
        cmocka_unit_test(deadline_stops),
        cmocka_unit_test(peak_within_capacity),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
