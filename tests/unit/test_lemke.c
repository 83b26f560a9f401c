/* SPDX-License-Identifier: MIT */
/* Lemke on plain LCPs: agreement with brute-force enumeration on random positive (semi)definite
 * problems, degenerate constructions that cycle without the lexicographic rule, infeasible input
 * (ray), the pivot cap and the deadline. */
#include "solver/lemke.h"

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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
