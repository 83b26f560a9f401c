/* SPDX-License-Identifier: MIT */
/* Lemke on plain LCPs: agreement with brute-force enumeration on random positive (semi)definite
 * problems, degenerate constructions that cycle without the lexicographic rule, infeasible input
 * (ray), the pivot cap and the deadline (also the clock reads of the passes down B^-1's columns);
 * tolerances relative to the problem (the same path for q scaled by a power of two), accuracy
 * through nearly singular bases, and the degenerate frictional contact LCPs of a peg (Lloyd's
 * eq. 6) that once ended in a false ray. */
#include "solver/lemke.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_gen.h"
#include "solver/contact.h"
#include "solver/deadline.h"
#include "solver/lemke_contact.h"
#include "solver/lemke_passes.h"
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

/* Order of the LCPs whose passes go down the columns of B^-1: its rows lie a page apart. */
#define PAGE_ROWS 512

/* The LCP (I, q) of order PAGE_ROWS, q_i = 1 + i, and the solver's state for it on a workspace
 * sized for it, with a clock that never passes. Set up in place (L points into it); freed by
 * page_lcp_free. */
typedef struct page_lcp {
    double *M;
    double q[PAGE_ROWS];
    cs_workspace *ws;
    cs__lemke_ws L;
} page_lcp;

static void page_lcp_init(page_lcp *P) {
    P->ws = cs_workspace_new(&(cs_limits){.max_bodies = 1, .max_contacts = 52, .max_dirs = 8});
    assert_non_null(P->ws);
    P->M = calloc((size_t)PAGE_ROWS * PAGE_ROWS, sizeof(double));
    assert_non_null(P->M);
    for (int i = 0; i < PAGE_ROWS; i++) {
        P->M[(size_t)i * PAGE_ROWS + i] = 1;
        P->q[i] = 1 + i;
    }
    static const cs_options opt = {.clock_ns = t_clock_counting, .deadline_ns = INT64_MAX};
    assert_true(cs__lemke_ws_init(&P->L, P->ws, PAGE_ROWS, P->M, PAGE_ROWS, P->q, &opt));
}

static void page_lcp_free(page_lcp *P) {
    free(P->M);
    cs_workspace_free(P->ws);
}

/* A w entering reads its column of B^-1 down the rows, each access a cache miss at a session's
 * sizes once the rows lie a page apart (16 units, lemke.c): the clock is read at least half as
 * often as that work over CS__METER_UNITS (twice at n = 512). Counted as one unit an access, the
 * 512 accesses read it not at all. */
static void w_column_reads_the_clock(void **state) {
    (void)state;
    enum { N = PAGE_ROWS };
    static page_lcp P;
    page_lcp_init(&P);
    cs__lemke_ws *const L = &P.L;
    for (int i = 0; i < N; i++) {
        memset(L->binv + (size_t)i * N, 0, N * sizeof(double));
        L->binv[(size_t)i * N + i] = 1;
    }
    t_clock_reads = 0;
    cs__lemke_entering_column(L, 7);
    assert_true(t_clock_reads * 2 * CS__METER_UNITS >= 16 * N);
    for (int i = 0; i < N; i++)
        assert_true(L->col[i] == (i == 7));
    page_lcp_free(&P);
}

/* The refinement's residuals against a basis of w's (basis_residuals) visit every row twice:
 * five scattered updates behind an unpredictable branch (8 units), then the three largest entries
 * (12 units; lemke.c). The clock is read at least half as often as that work over
 * CS__METER_UNITS (four times at n = 512). With neither counted it was read not at all (at
 * n = 2560 they ran 20-50 us between two reads), with the maxima uncounted twice. */
static void residual_rows_read_the_clock(void **state) {
    (void)state;
    enum { N = PAGE_ROWS };
    static page_lcp P;
    page_lcp_init(&P);
    cs__lemke_ws *const L = &P.L;
    for (int r = 0; r < N; r++) {
        L->basic[r] = r;
        L->x[r] = P.q[r];
        L->col[r] = r == 7;
    }
    t_clock_reads = 0;
    cs__lemke_basis_residuals(L, 7);
    assert_true(t_clock_reads * 2 * CS__METER_UNITS >= 20 * N);
    // B = I holds x = q and col = e_7 exactly.
    for (int k = 0; k < N; k++)
        assert_true(L->rx[k] == 0 && L->rc[k] == 0);
    page_lcp_free(&P);
}

/* Rebuilding B^-1 writes B's columns down the columns of B^-1, searches each column for its
 * pivot and reads every row's multiplier down it: for a basis of w's and four z's of M = I
 * (elimination otherwise empty) about 2.5 n^2 accesses, each a cache miss at a session's sizes
 * once the rows lie a page apart (16 units, lemke.c). The clock is read at least half as often as
 * that work over CS__METER_UNITS, and B^-1 and x come out exact. Counted as one unit a column (the
 * multipliers not at all) it was read 512 times where this asks for 2560 (it reads 5296). */
static void rebuild_reads_the_clock(void **state) {
    (void)state;
    enum { N = PAGE_ROWS };
    static page_lcp P;
    page_lcp_init(&P);
    cs__lemke_ws *const L = &P.L;
    // z_r basic in rows 0..3 (B's column -e_r), w_r in the others: B = diag(-1, .., -1, 1, ..).
    for (int r = 0; r < N; r++)
        L->basic[r] = r < 4 ? N + r : r;
    t_clock_reads = 0;
    assert_int_equal(cs__lemke_rebuild(L), CS_CONVERGED);
    assert_true(t_clock_reads * 2 * CS__METER_UNITS >= 16 * (int64_t)N * N * 5 / 2);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            assert_true(L->binv[(size_t)i * N + j] == (i != j ? 0 : i < 4 ? -1 : 1));
        assert_true(L->x[i] == (i < 4 ? -P.q[i] : P.q[i]));
    }
    page_lcp_free(&P);
}

/* A degenerate tie that the lexicographic rule breaks only at the last columns of B^-1 reads B^-1
 * down its columns: each such read counts as the cache miss it is once the rows lie a page apart
 * (16 units, lemke.c). M = I but for 2 above the diagonal in column n - 1, q = (-2, -1, ..., -1):
 * z0 enters for row 0, and as z_0 rises every other w falls to 0 together; rows 1 .. n-1 of B^-1
 * are e_i - e_0, so column j drops only row j from the tie, and the rule reads n - 1 columns (n
 * entries each, and the candidates' n - 1 - j) before row n - 1 leaves. z_{n-1} then drives z0
 * out: z = e_{n-1}. With at least 7 passes of n^2 besides (B^-1's start, three entering columns
 * and three pivots), the clock is read at least half as often as that work over CS__METER_UNITS.
 * Counted as one unit each, those reads left it read 1568 times where this asks for 1981 (it
 * reads 3461). */
static void lexicographic_columns_read_the_clock(void **state) {
    (void)state;
    enum { N = 512 };
    cs_workspace *big =
        cs_workspace_new(&(cs_limits){.max_bodies = 1, .max_contacts = 52, .max_dirs = 8});
    assert_non_null(big);
    double *M = calloc((size_t)N * N, sizeof(double)), q[N], z[N];
    assert_non_null(M);
    for (int i = 0; i < N; i++) {
        M[(size_t)i * N + i] = 1;
        M[(size_t)(N - 1) * N + i] += i < N - 1 ? 2 : 0;
        q[i] = i == 0 ? -2 : -1;
    }
    const cs_options opt = {.clock_ns = t_clock_counting, .deadline_ns = INT64_MAX};
    cs_stats st;
    t_clock_reads = 0;
    assert_int_equal(cs_lemke_lcp(big, N, M, N, q, NULL, &opt, z, &st), CS_CONVERGED);
    assert_int_equal(st.pivots, 3);
    for (int i = 0; i < N; i++)
        assert_near(z[i], i == N - 1, 1e-12);
    const int64_t work = 7 * (int64_t)N * N + 16 * (int64_t)N * (N - 1) * 3 / 2;
    assert_true(t_clock_reads * 2 * CS__METER_UNITS >= work);
    free(M);
    cs_workspace_free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agrees_with_enumeration),
        cmocka_unit_test(infeasible_is_a_ray),
        cmocka_unit_test(degenerate_ties),
        cmocka_unit_test(frictional_contact),
        cmocka_unit_test(ray_on_negative_column),
        cmocka_unit_test(deadline_stops),
        cmocka_unit_test(w_column_reads_the_clock),
        cmocka_unit_test(residual_rows_read_the_clock),
        cmocka_unit_test(rebuild_reads_the_clock),
        cmocka_unit_test(lexicographic_columns_read_the_clock),
        cmocka_unit_test(q_scale_invariant),
        cmocka_unit_test(nearly_singular_stays_accurate),
        cmocka_unit_test(degenerate_contact_lcp),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
