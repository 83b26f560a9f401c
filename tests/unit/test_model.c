/* SPDX-License-Identifier: MIT */
/* The contact model: tangent frames, Jacobian adjointness, the Jacobian table and its clock
 * reads, the Delassus operator against its definition, free-motion velocities (gravity, applied
 * wrench, gyroscopic term), the world inertia of a rotated body and each contact's bodies. Joints
 * are not the model's rows (test_joints.c). */
#include "solver/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene_gen.h"
#include "solver/deadline.h"
#include "solver/linalg.h"
#include "solver/workspace.h"
#include "testlib.h"

#define NB 3
#define NC 6
#define NT NC               /* contact triplets */
#define NR1 NC              /* rows with one row per contact */

static cs_workspace *ws;
static cs_body bodies[NB];
static cs_contact contacts[NC];

static int setup(void **state) {
    (void)state;
    ws = cs_workspace_new(
        &(cs_limits){.max_bodies = NB, .max_contacts = NC, .max_dirs = 8});
    return ws ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    cs_workspace_free(ws);
    return 0;
}

static void random_unit(t_rng *r, double n[3]) {
    double s;
    do {
        for (int k = 0; k < 3; k++)
            n[k] = t_rng_range(r, -1, 1);
        s = sqrt(cs_dot3(n, n));
    } while (s < 0.1 || s > 1);
    for (int k = 0; k < 3; k++)
        n[k] /= s;
}

/* Body ids a, b of a random pair: b may be the world (0), never a. */
static void random_pair(t_rng *r, uint32_t *a, uint32_t *b) {
    const int i = t_rng_below(r, NB);
    const int j = (i + 1 + t_rng_below(r, NB)) % (NB + 1); // may be NB: the world
    *a = bodies[i].id;
    *b = j < NB && j != i ? bodies[j].id : 0;
}

/* A random scene of NB bodies with random poses and NC contacts between random pairs. */
static cs_scene random_scene(t_rng *r) {
    for (int b = 0; b < NB; b++) {
        double q[4], qn = 0;
        for (int k = 0; k < 4; k++) {
            q[k] = t_rng_range(r, -1, 1);
            qn += q[k] * q[k];
        }
        cs_body *B = &bodies[b];
        *B = (cs_body){.id = (uint32_t)(10 + b), .mass = t_rng_range(r, 0.5, 3)};
        for (int k = 0; k < 4; k++)
            B->quat[k] = q[k] / sqrt(qn);
        const double a = t_rng_range(r, 0.1, 1), c = t_rng_range(r, 0.1, 1);
        const double I[9] = {a, 0.01, 0, 0.01, c, 0.02, 0, 0.02, a + c};
        memcpy(B->inertia, I, sizeof I);
        for (int k = 0; k < 3; k++) {
            B->pos[k] = t_rng_range(r, -1, 1);
            B->v[k] = t_rng_range(r, -1, 1);
            B->w[k] = t_rng_range(r, -1, 1);
        }
    }
    for (int i = 0; i < NC; i++) {
        cs_contact *C = &contacts[i];
        *C = (cs_contact){.id = (uint64_t)i, .mu = 0.5};
        random_pair(r, &C->body_a, &C->body_b);
        random_unit(r, C->normal);
        for (int k = 0; k < 3; k++)
            C->point[k] = t_rng_range(r, -1, 1);
    }
    return (cs_scene){.dt = 1e-3, .gravity = {0, 0, -9.81}, .nb = NB, .nc = NC,
                      .bodies = bodies, .contacts = contacts};
}

static void tangents_are_orthonormal(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(11);
    for (int trial = 0; trial < 1000; trial++) {
        double n[3], t1[3], t2[3], x[3];
        if (trial == 0)
            n[0] = 0, n[1] = 0, n[2] = 1;
        else if (trial == 1)
            n[0] = 0, n[1] = 0, n[2] = -1;
        else
            random_unit(&rng, n);
        cs_model_tangents(n, t1, t2);
        assert_near(cs_dot3(t1, t1), 1.0, 1e-14);
        assert_near(cs_dot3(t2, t2), 1.0, 1e-14);
        assert_near(cs_dot3(t1, n), 0.0, 1e-14);
        assert_near(cs_dot3(t2, n), 0.0, 1e-14);
        cs_cross3(x, t1, t2);
        for (int k = 0; k < 3; k++)
            assert_near(x[k], n[k], 1e-14);
    }
}

/* lambda . (J v) == (J^T lambda) . v for random scenes, impulses and velocities. */
static void jacobian_is_adjoint(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(12);
    for (int trial = 0; trial < 200; trial++) {
        const cs_scene s = random_scene(&rng);
        const size_t mark = cs__ws_mark(ws);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
        double v[6 * NB], l[3 * NT], jv[3 * NT], jt[6 * NB];
        for (int k = 0; k < 6 * NB; k++)
            v[k] = t_rng_range(&rng, -1, 1);
        for (int k = 0; k < 3 * NT; k++)
            l[k] = t_rng_range(&rng, -1, 1);
        cs_model_jv(&m, v, jv);
        cs_model_jt(&m, l, jt);
        double lhs = 0, rhs = 0;
        for (int k = 0; k < 3 * NT; k++)
            lhs += l[k] * jv[k];
        for (int k = 0; k < 6 * NB; k++)
            rhs += jt[k] * v[k];
        assert_near(lhs, rhs, 1e-12);
        cs__ws_release(ws, mark);
    }
}

/* Row of triplet row q (3 rows per triplet) in the Jacobian with one row per contact; -1 for a
 * contact's tangent row, which that Jacobian leaves out. */
static int one_row_index(int q) {
    return q % 3 == 0 ? q / 3 : -1;
}

/* W = J M^-1 J^T, column by column through jt, minv and jv on unit impulses; the free velocities
 * of the normal rows alone are those of the whole frames, bit for bit. */
static void delassus_matches_definition(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(13);
    for (int trial = 0; trial < 50; trial++) {
        const cs_scene s = random_scene(&rng);
        const size_t mark = cs__ws_mark(ws);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
        assert_int_equal(cs_model_rows(&m, 3), 3 * NT);
        assert_int_equal(cs_model_rows(&m, 1), NR1);
        double W[3 * NT * 3 * NT], Wn[NR1 * NR1];
        assert_int_equal(cs_model_delassus(&m, ws, 3, W, 3 * NT, NULL), CS_CONVERGED);
        assert_int_equal(cs_model_delassus(&m, ws, 1, Wn, NR1, NULL), CS_CONVERGED);
        double u[3 * NT], un[NR1];
        cs_model_free_velocity(&m, 3, u);
        cs_model_free_velocity(&m, 1, un);
        for (int i = 0; i < NR1; i++)
            assert_memory_equal(&un[i], &u[3 * i], sizeof(double));
        for (int q = 0; q < 3 * NT; q++) {
            double l[3 * NT] = {0}, g[6 * NB], mg[6 * NB], col[3 * NT];
            l[q] = 1;
            cs_model_jt(&m, l, g);
            cs_model_minv(&m, g, mg);
            cs_model_jv(&m, mg, col);
            for (int p = 0; p < 3 * NT; p++)
                assert_near(W[q * 3 * NT + p], col[p], 1e-12);
            const int qn = one_row_index(q);
            for (int p = 0; qn >= 0 && p < 3 * NT; p++)
                if (one_row_index(p) >= 0)
                    assert_near(Wn[qn * NR1 + one_row_index(p)], col[p], 1e-12);
        }
        cs__ws_release(ws, mark);
    }
}

/* cs_model_delassus() takes no more scratch than cs_model_delassus_size() says, whatever the
 * rounding of its allocations: every contact between the two bodies of a scene (the most entries
 * a row can have), 1 to 16 contacts, one row and three a contact. */
static void delassus_scratch_within_its_size(void **state) {
    (void)state;
    for (int nc = 1; nc <= 16; nc++) {
        const cs_limits lim = {.max_bodies = 2, .max_contacts = nc, .max_dirs = 4};
        cs_workspace *w = cs_workspace_new(&lim);
        assert_non_null(w);
        cs_body B[2] = {{.id = 1, .mass = 1, .inertia = {0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01}},
                        {.id = 2, .mass = 2, .inertia = {0.02, 0, 0, 0, 0.02, 0, 0, 0, 0.02}}};
        B[0].quat[0] = B[1].quat[0] = 1;
        cs_contact C[16];
        for (int i = 0; i < nc; i++)
            C[i] = (cs_contact){.id = (uint64_t)i + 1, .body_a = 2, .body_b = 1, .mu = 0.5,
                                .normal = {0, 0, 1},
                                .point = {0.1 * cos(1.3 * i), 0.1 * sin(1.3 * i), 0}};
        const cs_scene s = {.dt = 1e-3, .gravity = {0, 0, -9.81}, .nb = 2, .nc = nc,
                            .bodies = B, .contacts = C};
        cs_model m;
        assert_int_equal(cs_model_build(&m, w, &s), CS_CONVERGED);
        for (int rows = 1; rows <= 3; rows += 2) {
            double *W = cs__ws_alloc(w, (size_t)(rows * nc) * (size_t)(rows * nc) * sizeof(double));
            assert_non_null(W);
            const size_t mark = cs__ws_mark(w);
            cs__ws_reset_peak(w);
            assert_int_equal(cs_model_delassus(&m, w, rows, W, rows * nc, NULL), CS_CONVERGED);
            const size_t used = cs__ws_peak(w) - mark, bound = cs_model_delassus_size(&lim);
            if (used > bound)
                fail_msg("%d contacts, %d rows: %zu bytes used, %zu bound", nc, rows, used, bound);
            cs__ws_release(w, mark);
        }
        cs_workspace_free(w);
    }
}

/* The Jacobian table against J^T and M^-1 on unit impulses: block (row, side) holds the part of
 * J^T e_row on that side's body and M_b^-1 times it, and zeros for the world. The table starts
 * as NaN, so an entry left unwritten fails too. */
static void jacobian_table_matches_jt(void **state) {
    (void)state;
    t_rng rng = t_rng_seed(14);
    for (int trial = 0; trial < 50; trial++) {
        const cs_scene s = random_scene(&rng);
        const size_t mark = cs__ws_mark(ws);
        cs_model m;
        assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
        for (int rows = 1; rows <= 3; rows += 2) {
            double js[3 * NT * 2 * 12];
            for (size_t k = 0; k < sizeof js / sizeof js[0]; k++)
                js[k] = NAN;
            assert_int_equal(cs_model_jacobian(&m, rows, js, NULL), CS_CONVERGED);
            for (int i = 0; i < NT; i++) {
                const int first = rows * i;
                for (int r = 0; r < rows; r++) {
                    double l[3 * NT] = {0}, g[6 * NB], mg[6 * NB];
                    l[3 * i + r] = 1;
                    cs_model_jt(&m, l, g);
                    cs_model_minv(&m, g, mg);
                    for (int side = 0; side < 2; side++) {
                        const int b = side == 0 ? m.ia[i] : m.ib[i];
                        const double *J = js + ((size_t)(first + r) * 2 + side) * 12;
                        for (int k = 0; k < 12; k++) {
                            const double *want = k < 6 ? g + k : mg + k - 6;
                            assert_near(J[k], b < 0 ? 0 : want[6 * b], 1e-14);
                        }
                    }
                }
            }
        }
        cs__ws_release(ws, mark);
    }
}

/* The table reads the clock as it fills (deadline.h): at a session's 256 contacts, once for each
 * CS__METER_UNITS of its work (21 multiply-adds a row side, 6 row sides a contact), so it is no
 * unmetered stretch of a solver's set-up; a deadline found passed stops it there, the later
 * contacts' rows unwritten. */
static void jacobian_reads_the_clock_as_it_fills(void **state) {
    (void)state;
    static t_gen_scene g;
    t_gen_grid(&g, 16, 0.5, 8, 1);
    const int nc = g.s.nc;
    const cs_limits lim = {.max_bodies = g.s.nb, .max_contacts = nc, .max_dirs = 8};
    cs_workspace *w = cs_workspace_new(&lim);
    assert_non_null(w);
    cs_model m;
    assert_int_equal(cs_model_build(&m, w, &g.s), CS_CONVERGED);
    const size_t n = 3 * (size_t)nc * 2 * 12;
    double *js = malloc(n * sizeof(double));
    assert_non_null(js);
    const cs_options far = {.clock_ns = t_clock_counting, .deadline_ns = INT64_MAX};
    cs__meter meter = cs__meter_start(&far);
    t_clock_reads = 0;
    assert_int_equal(cs_model_jacobian(&m, 3, js, &meter), CS_CONVERGED);
    print_message("# %d contacts: %ld clock reads\n", nc, t_clock_reads);
    assert_true(t_clock_reads * CS__METER_UNITS >= 6 * 21 * (int64_t)nc);
    // The counting clock reads 0: a deadline at -1 has passed at the first read.
    for (size_t k = 0; k < n; k++)
        js[k] = NAN;
    const cs_options late = {.clock_ns = t_clock_counting, .deadline_ns = -1};
    meter = cs__meter_start(&late);
    t_clock_reads = 0;
    assert_int_equal(cs_model_jacobian(&m, 3, js, &meter), CS_DEADLINE);
    assert_int_equal(t_clock_reads, 1);
    assert_true(meter.passed);
    assert_true(isnan(js[n - 1]));
    free(js);
    cs_workspace_free(w);
}

/* A clock that reads how many times it was read: a deadline at k passes at the k-th read. */
static int64_t reads_so_far;
static int64_t clock_reads_so_far(void) {
    return ++reads_so_far;
}

/* The model of nc contacts (C: [nc], filled here) with random points and normals on one body,
 * which every contact meets every other through (W has no zero entry), in a workspace for them
 * (returned). */
static cs_workspace *one_body_model(int nc, cs_contact *C, cs_model *m) {
    const cs_limits lim = {.max_bodies = 1, .max_contacts = nc, .max_dirs = 8,
                           .solvers = 1u << CS_SOLVER_SAP};
    cs_workspace *w = cs_workspace_new(&lim);
    assert_non_null(w);
    cs_body B = {.id = 1, .mass = 1, .inertia = {0.01, 0, 0, 0, 0.02, 0, 0, 0, 0.03},
                 .quat = {1, 0, 0, 0}};
    t_rng rng = t_rng_seed(3);
    for (int i = 0; i < nc; i++) {
        C[i] = (cs_contact){.id = (uint64_t)i + 1, .body_a = 1, .mu = 0.5};
        double n2 = 0;
        for (int k = 0; k < 3; k++) {
            C[i].point[k] = t_rng_range(&rng, -0.1, 0.1);
            C[i].normal[k] = t_rng_range(&rng, 0.1, 1);
            n2 += C[i].normal[k] * C[i].normal[k];
        }
        for (int k = 0; k < 3; k++)
            C[i].normal[k] /= sqrt(n2);
    }
    const cs_scene s = {.dt = 1e-3, .nb = 1, .nc = nc, .bodies = &B, .contacts = C};
    assert_int_equal(cs_model_build(m, w, &s), CS_CONVERGED);
    return w;
}

/* W (rows 3, nr = 2100) with its deadline at read k; the entries above its diagonal that are
 * set (the lower half has none zero: every contact meets every other on the one body). */
static int64_t upper_set_at(const cs_model *m, cs_workspace *w, double *W, int nr, int64_t k) {
    const cs_options opt = {.clock_ns = clock_reads_so_far, .deadline_ns = k};
    cs__meter meter = cs__meter_start(&opt);
    memset(W, 0, (size_t)nr * nr * sizeof(double)); // a stop in W's zeroing leaves no older W
    reads_so_far = 0;
    const cs_status st = cs_model_delassus(m, w, 3, W, nr, &meter);
    assert_true(st == CS_DEADLINE || st == CS_CONVERGED);
    int64_t set = 0;
    for (int c = 1; c < nr; c++)
        for (int r = 0; r < c; r++)
            set += W[(size_t)c * nr + r] != 0;
    return set;
}

/* The copy of W's upper half reads the clock within about CS__METER_UNITS of its stores, however
 * large W is (deadline.h): at 2100 rows a pair of columns is 4199 strided stores, which were
 * once counted in one piece. The first read of the copy is found by bisection on the deadline:
 * the fewest reads whose deadline leaves part of the upper half set. */
static void delassus_copy_reads_the_clock(void **state) {
    (void)state;
    enum { NCB = 700, NRB = 3 * NCB };
    static cs_contact C[NCB];
    cs_model m;
    cs_workspace *w = one_body_model(NCB, C, &m);
    double *W = malloc((size_t)NRB * NRB * sizeof(double));
    assert_non_null(W);
    // Without a deadline: every entry above the diagonal set, and the reads of the whole.
    const int64_t all = upper_set_at(&m, w, W, NRB, INT64_MAX), total = reads_so_far;
    assert_int_equal(all, (int64_t)NRB * (NRB - 1) / 2);
    int64_t lo = 1, hi = total; // none set at lo - 1 (no deadline read yet), some at hi
    while (lo < hi) {
        const int64_t k = lo + (hi - lo) / 2;
        if (upper_set_at(&m, w, W, NRB, k) > 0)
            hi = k;
        else
            lo = k + 1;
    }
    const int64_t first = upper_set_at(&m, w, W, NRB, lo);
    print_message("# %d rows: %lld reads, the copy's first after %lld stores\n", NRB,
                  (long long)total, (long long)first);
    assert_true(first > 0 && first <= 2 * CS__METER_UNITS);
    free(W);
    cs_workspace_free(w);
}

/* W's zeroing reads the clock within about CS__METER_UNITS of its stores, however large W is
 * (deadline.h): at 4500 rows one column is 4500 stores, which were counted in one piece (at a
 * session's 12288 rows, 10 us at the median between clock reads). With its deadline at the k-th
 * read, a stop inside the zeroing: the entries zeroed since the (k - 1)-th, of the first columns
 * (the rest of W is never written before these reads). */
static void delassus_zeroing_reads_the_clock(void **state) {
    (void)state;
    enum { NCB = 1500, NRB = 3 * NCB, PROBE = 4 * NRB };
    static cs_contact C[NCB];
    cs_model m;
    cs_workspace *w = one_body_model(NCB, C, &m);
    double *W = malloc((size_t)NRB * NRB * sizeof(double));
    assert_non_null(W);
    int64_t before = 0;
    for (int64_t k = 1; k <= 3; k++) {
        for (int i = 0; i < PROBE; i++)
            W[i] = NAN;
        const cs_options opt = {.clock_ns = clock_reads_so_far, .deadline_ns = k};
        cs__meter meter = cs__meter_start(&opt);
        reads_so_far = 0;
        assert_int_equal(cs_model_delassus(&m, w, 3, W, NRB, &meter), CS_DEADLINE);
        int64_t zeroed = 0;
        for (int i = 0; i < PROBE; i++)
            zeroed += W[i] == 0;
        print_message("# %d rows: %lld entries zeroed at read %lld\n", NRB, (long long)zeroed,
                      (long long)k);
        assert_true(zeroed > before && zeroed < PROBE);
        assert_true(zeroed - before <= 2 * CS__METER_UNITS);
        before = zeroed;
    }
    free(W);
    cs_workspace_free(w);
}

/* v* = v0 + dt M^-1 (f + m g, tau - w x I w) on a body with an asymmetric inertia. */
static void free_motion(void **state) {
    (void)state;
    cs_body B = {.id = 1, .mass = 2, .inertia = {1, 0, 0, 0, 2, 0, 0, 0, 3}, .quat = {1, 0, 0, 0},
                 .v = {1, 2, 3}, .w = {0.5, -1, 2}, .f = {4, 0, -2}, .tau = {0.1, 0.2, 0.3}};
    const cs_scene s = {.dt = 0.01, .gravity = {0, 0, -10}, .nb = 1, .bodies = &B};
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
    assert_near(m.vstar[0], 1 + 0.01 * 4 / 2, 1e-15);
    assert_near(m.vstar[1], 2, 1e-15);
    assert_near(m.vstar[2], 3 + 0.01 * (-2.0 / 2 - 10), 1e-15);
    // I w = (0.5, -2, 6); w x I w = (-1*6 - 2*(-2), 2*0.5 - 0.5*6, 0.5*(-2) - (-1)*0.5)
    const double gyro[3] = {-2, -2, -0.5};
    const double I[3] = {1, 2, 3};
    for (int k = 0; k < 3; k++)
        assert_near(m.vstar[3 + k], B.w[k] + 0.01 * (B.tau[k] - gyro[k]) / I[k], 1e-15);
    cs__ws_release(ws, mark);
}

/* A body turned 90 degrees about z swaps its x and y principal moments in the world frame. */
static void world_inertia_rotates(void **state) {
    (void)state;
    const double h = sqrt(0.5);
    cs_body B = {.id = 1, .mass = 1, .inertia = {1, 0, 0, 0, 2, 0, 0, 0, 3}, .quat = {h, 0, 0, h}};
    const cs_scene s = {.dt = 0.01, .nb = 1, .bodies = &B};
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
    const double want[9] = {2, 0, 0, 0, 1, 0, 0, 0, 3};
    for (int k = 0; k < 9; k++) {
        assert_near(m.iw[k], want[k], 1e-15);
        assert_near(m.iw_inv[k], want[k] ? 1 / want[k] : 0, 1e-15);
    }
    cs__ws_release(ws, mark);
}

/* The bias lets a positive gap close within the step and never pushes a penetration apart. */
static void gap_bias(void **state) {
    (void)state;
    cs_body B = {.id = 1, .mass = 1, .inertia = {1, 0, 0, 0, 1, 0, 0, 0, 1}, .quat = {1, 0, 0, 0}};
    cs_contact C[2] = {{.id = 1, .body_a = 1, .normal = {0, 0, 1}, .distance = 0.002},
                       {.id = 2, .body_a = 1, .normal = {0, 0, 1}, .distance = -0.002}};
    const cs_scene s = {.dt = 0.01, .nb = 1, .nc = 2, .bodies = &B, .contacts = C};
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
    assert_near(m.bias[0], -0.2, 1e-15);
    assert_near(m.bias[1], 0.0, 0.0);
    cs__ws_release(ws, mark);
}

/* A contact's bodies are the right ones whatever the order of the contacts: the same pair again,
 * the pair swapped, one side shared, the world on either side, and an unknown id refused. */
static void bodies_found_in_any_contact_order(void **state) {
    (void)state;
    cs_body B[NB];
    const uint32_t ids[NB] = {30, 10, 20}; // not in id order
    for (int b = 0; b < NB; b++)
        B[b] = (cs_body){.id = ids[b], .mass = 1, .inertia = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                         .quat = {1, 0, 0, 0}};
    // body_a, body_b of each contact and the indices they must map to (-1: the world).
    const uint32_t pairs[NC][2] = {{30, 10}, {30, 10}, {10, 30}, {10, 20}, {0, 20}, {20, 0}};
    const int want[NC][2] = {{0, 1}, {0, 1}, {1, 0}, {1, 2}, {-1, 2}, {2, -1}};
    cs_contact C[NC];
    for (int i = 0; i < NC; i++)
        C[i] = (cs_contact){.id = (uint64_t)i + 1, .body_a = pairs[i][0], .body_b = pairs[i][1],
                            .normal = {0, 0, 1}};
    cs_scene s = {.dt = 0.01, .nb = NB, .nc = NC, .bodies = B, .contacts = C};
    const size_t mark = cs__ws_mark(ws);
    cs_model m;
    assert_int_equal(cs_model_build(&m, ws, &s), CS_CONVERGED);
    for (int i = 0; i < NC; i++) {
        assert_int_equal(m.ia[i], want[i][0]);
        assert_int_equal(m.ib[i], want[i][1]);
    }
    cs__ws_release(ws, mark);
    C[NC - 1].body_b = 40;
    assert_int_equal(cs_model_build(&m, ws, &s), CS_EINPUT);
    cs__ws_release(ws, mark);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tangents_are_orthonormal),
        cmocka_unit_test(jacobian_is_adjoint),
        cmocka_unit_test(delassus_matches_definition),
        cmocka_unit_test(delassus_scratch_within_its_size),
        cmocka_unit_test(jacobian_table_matches_jt),
        cmocka_unit_test(jacobian_reads_the_clock_as_it_fills),
        cmocka_unit_test(delassus_copy_reads_the_clock),
        cmocka_unit_test(delassus_zeroing_reads_the_clock),
        cmocka_unit_test(free_motion),
        cmocka_unit_test(world_inertia_rotates),
        cmocka_unit_test(gap_bias),
        cmocka_unit_test(bodies_found_in_any_contact_order),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
