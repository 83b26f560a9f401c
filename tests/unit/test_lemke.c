/* SPDX-License-Identifier: MIT */
/* Lemke on plain LCPs: agreement with brute-force enumeration on random positive (semi)definite
 * problems, degenerate constructions that cycle without the lexicographic rule, infeasible input
 * (ray), the pivot cap and the deadline; tolerances relative to the problem (the same path for q
 * scaled by a power of two), accuracy through nearly singular bases, and the degenerate frictional
 * contact LCPs of a peg (Lloyd's eq. 6) that once ended in a false ray. */
#include "solver/lemke.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "scene_gen.h"
#include "solver/contact.h"
#include "solver/lemke_contact.h"
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

static void agrees_with_enumeration(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x1e3e);
    for (int trial = 0; trial < 3000; trial++) {
        const int n = 1 + t_rng_below(&rng, 10);
        const int k = 1 + t_rng_below(&rng, n);
        const bool in_range = trial % 2 == 0;
        double A[144], b[12], z[12], ze[12];
        t_lcp_random_psd(&rng, n, in_range ? k : n, in_range, A, b);
        if (!in_range)
            for (int i = 0; i < n; i++)
                A[i * n + i] += 0.1;
        cs_stats st;
        const cs_status s = cs_lemke_lcp(ws, n, A, n, b, NULL, NULL, z, &st);
        if (s != CS_CONVERGED)
            fprintf(stderr, "seed 0x1e3e trial %d n %d: %s\n", trial, n, cs_status_name(s));
        assert_int_equal(s, CS_CONVERGED);
        assert_true(t_lcp_enumerate(n, A, b, 1e-9, ze));
        const double sc = t_lcp_scale(n, z);
        assert_near(t_lcp_residual(n, A, b, z), 0.0, 1e-10 * sc * sc);
        t_lcp_assert_same_w(n, A, b, z, ze, 1e-8 * sc);
    }
}

/* PSD with b outside the range: a solution when one exists, else a ray; never a wrong answer. */
static void infeasible_is_a_ray(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(8);
    int rays = 0;
    for (int trial = 0; trial < 2000; trial++) {
        const int n = 2 + t_rng_below(&rng, 7);
        const int k = 1 + t_rng_below(&rng, n - 1);
        double A[144], b[12], z[12];
        t_lcp_random_psd(&rng, n, k, false, A, b);
        cs_stats st;
        const cs_status s = cs_lemke_lcp(ws, n, A, n, b, NULL, NULL, z, &st);
        const bool exists = t_lcp_enumerate(n, A, b, 1e-9, NULL);
        if (s == CS_CONVERGED) {
            assert_true(exists);
            const double sc = t_lcp_scale(n, z);
            assert_near(t_lcp_residual(n, A, b, z), 0.0, 1e-10 * sc * sc);
        } else {
            assert_int_equal(s, CS_RAY);
            assert_false(exists);
            rays++;
        }
    }
    assert_true(rays > 50);
}

/* Every ratio ties: identical rows and equal q. Without a tie rule Lemke may cycle; with it, it
 * must end at a solution. */
static void degenerate_ties(void **state) {
    (void)state;
    double A[16], b[4] = {-1, -1, -1, -1}, z[4];
    for (int i = 0; i < 16; i++)
        A[i] = 1;
    cs_stats st;
    assert_int_equal(cs_lemke_lcp(ws, 4, A, 4, b, NULL, NULL, z, &st), CS_CONVERGED);
    assert_near(z[0] + z[1] + z[2] + z[3], 1.0, 1e-12);
    assert_near(t_lcp_residual(4, A, b, z), 0.0, 1e-12);
}

/* A frictional single-contact LCP (eq. 6 of Lloyd 2005 with d = 4, G = I, contact at the COM):
 * not PSD, copositive-plus. Load along -normal 1 and along t1 0.5 with mu = 0.2: the contact
 * slides with theta = 1, friction mu theta against t1, sliding speed 0.3. */
static void frictional_contact(void **state) {
    (void)state;
    // Columns: theta, phi_0..phi_3 (directions +t1, +t2, -t1, -t2), lambda. n = (1, 0, 0).
    const double dirs[4][3] = {{0, 1, 0}, {0, 0, 1}, {0, -1, 0}, {0, 0, -1}};
    const double nrm[3] = {1, 0, 0}, mu = 0.2, k[3] = {-1, 0.5, 0};
    double M[36] = {0}, q[6], z[6];
    const double *cols[5] = {nrm, dirs[0], dirs[1], dirs[2], dirs[3]};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            M[b * 6 + a] = cols[a][0] * cols[b][0] + cols[a][1] * cols[b][1] +
                           cols[a][2] * cols[b][2];
    for (int j = 1; j <= 4; j++) {
        M[5 * 6 + j] = 1;  // E: sigma_j += lambda
        M[j * 6 + 5] = -1; // -E^T: gamma -= phi_j
    }
    M[0 * 6 + 5] = mu; // gamma += mu theta
    for (int a = 0; a < 5; a++)
        q[a] = cols[a][0] * k[0] + cols[a][1] * k[1] + cols[a][2] * k[2];
    q[5] = 0;
    cs_stats st;
    assert_int_equal(cs_lemke_lcp(ws, 6, M, 6, q, NULL, NULL, z, &st), CS_CONVERGED);
    assert_near(z[0], 1.0, 1e-12);
    assert_near(z[3], 0.2, 1e-12); // friction along -t1
    assert_near(z[1] + z[2] + z[4], 0.0, 1e-12);
    assert_near(z[5], 0.3, 1e-12); // sliding speed
    assert_near(t_lcp_residual(6, M, q, z), 0.0, 1e-12);
}

static void ray_on_negative_column(void **state) {
    (void)state;
    // w1 = -z1 - 1: z1 only makes it worse; no solution.
    double A[1] = {-1}, b[1] = {-1}, z[1];
    cs_stats st;
    assert_int_equal(cs_lemke_lcp(ws, 1, A, 1, b, NULL, NULL, z, &st), CS_RAY);
    assert_near(z[0], 0.0, 0.0);
}

/* Scaling q by a power of two scales x exactly, so a solver whose tolerances are relative to the
 * problem takes the same pivots and returns z scaled exactly. An absolute term in a tie band
 * breaks this: ties appear or vanish with the units of q. */
static void q_scale_invariant(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x5ca1);
    for (int trial = 0; trial < 500; trial++) {
        const int n = 1 + t_rng_below(&rng, 10);
        const int k = 1 + t_rng_below(&rng, n);
        double A[144], b[12], bs[12], z[12], zs[12];
        t_lcp_random_psd(&rng, n, k, trial % 2 == 0, A, b);
        cs_stats st, sts;
        const cs_status s = cs_lemke_lcp(ws, n, A, n, b, NULL, NULL, z, &st);
        for (int e = -40; e <= 40; e += 20) {
            for (int i = 0; i < n; i++)
                bs[i] = ldexp(b[i], e);
            const cs_status ss = cs_lemke_lcp(ws, n, A, n, bs, NULL, NULL, zs, &sts);
            if (ss != s || sts.pivots != st.pivots)
                fprintf(stderr, "seed 0x5ca1 trial %d scale 2^%d: %s after %d pivots, unscaled %s "
                                "after %d\n", trial, e, cs_status_name(ss), sts.pivots,
                        cs_status_name(s), st.pivots);
            assert_int_equal(ss, s);
            assert_int_equal(sts.pivots, st.pivots);
            for (int i = 0; i < n; i++)
                assert_near(zs[i], ldexp(z[i], e), 0.0);
        }
    }
}

/* Rank-deficient PSD plus 1e-9 I (condition ~1e9): Lemke's bases get as ill-conditioned, and a
 * B^-1 only updated by pivots drifts (on these problems its answers left residuals up to
 * 4e-7 sc^2 before columns were refined and B^-1 rebuilt). The answer must satisfy the LCP to
 * rounding. */
static void nearly_singular_stays_accurate(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(0x5ca1e);
    for (int trial = 0; trial < 1000; trial++) {
        const int n = 2 + t_rng_below(&rng, 9);
        const int k = 1 + t_rng_below(&rng, n - 1);
        double A[144], b[12], z[12];
        t_lcp_random_psd(&rng, n, k, false, A, b);
        for (int i = 0; i < n; i++)
            A[i * n + i] += 1e-9;
        cs_stats st;
        const cs_status s = cs_lemke_lcp(ws, n, A, n, b, NULL, NULL, z, &st);
        const double sc = t_lcp_scale(n, z), res = t_lcp_residual(n, A, b, z);
        if (s != CS_CONVERGED || res > 1e-10 * sc * sc)
            fprintf(stderr, "seed 0x5ca1e trial %d n %d: %s, residual %.3g (scale %.3g)\n", trial,
                    n, cs_status_name(s), res, sc);
        assert_int_equal(s, CS_CONVERGED);
        assert_near(res, 0.0, 1e-10 * sc * sc);
    }
}

/* Eq. (6) of a peg in a hole with 8 contacts and an 8-sided pyramid (N = 80): 8 contacts on one
 * body make N^T M^-1 N and D^T M^-1 D rank 6 of order 8 and 64, so the tableau is full of
 * entries that are zero but computed as rounding noise. These problems (mu = 0.2 + 0.1 (s mod 7)
 * / 7, seed s) ended in a secondary ray or at the pivot cap while noise above 1e-11 of its column
 * counted as a pivot, though the contact LCP always has a solution. */
static void degenerate_contact_lcp(void **state) {
    (void)state;
    const int seeds[] = {1060, 1285, 1825, 2598, 2787, 2849, 2875};
    static t_gen_scene g;
    const cs_limits lim = {.max_bodies = 1, .max_contacts = 8, .max_dirs = 8};
    for (size_t t = 0; t < sizeof seeds / sizeof seeds[0]; t++) {
        const int s = seeds[t];
        t_gen_peg(&g, 8, 0.2 + 0.1 * (s % 7) / 7.0, 8, (uint64_t)s);
        cs_workspace *form = cs_workspace_new(&lim);
        enum { N = 80 };
        double *M = malloc(N * N * sizeof(double));
        double q[N], z[N];
        cs_model m;
        assert_non_null(form);
        assert_non_null(M);
        assert_int_equal(cs_model_build(&m, form, &g.s), CS_CONVERGED);
        assert_int_equal(m.nc * (2 + m.nd), N);
        assert_int_equal(cs_lemke_contact_lcp(form, &m, M, q), CS_CONVERGED);
        cs_stats st;
        const cs_status r = cs_lemke_lcp(ws, N, M, N, q, NULL, NULL, z, &st);
        if (r != CS_CONVERGED)
            fprintf(stderr, "peg 8, seed %d: %s after %d pivots\n", s, cs_status_name(r),
                    st.pivots);
        assert_int_equal(r, CS_CONVERGED);
        const double sc = t_lcp_scale(N, z);
        assert_near(t_lcp_residual(N, M, q, z), 0.0, 1e-10 * sc * sc);
        free(M);
        cs_workspace_free(form);
    }
}

static int64_t clock_late(void) {
    return 1000;
}

static void deadline_stops(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(9);
    double A[144], b[12], z[12];
    t_lcp_random_psd(&rng, 12, 12, false, A, b);
    const cs_options opt = {.deadline_ns = 10, .clock_ns = clock_late};
    cs_stats st;
    const cs_status s = cs_lemke_lcp(ws, 12, A, 12, b, NULL, &opt, z, &st);
    // Either q >= 0 (no pivot needed) or stopped by the deadline at the first check.
    assert_true(s == CS_DEADLINE || st.pivots == 0);
    assert_true(st.pivots <= 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agrees_with_enumeration),
        cmocka_unit_test(infeasible_is_a_ray),
        cmocka_unit_test(degenerate_ties),
        cmocka_unit_test(frictional_contact),
        cmocka_unit_test(ray_on_negative_column),
        cmocka_unit_test(deadline_stops),
        cmocka_unit_test(q_scale_invariant),
        cmocka_unit_test(nearly_singular_stays_accurate),
        cmocka_unit_test(degenerate_contact_lcp),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
