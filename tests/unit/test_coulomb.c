/* SPDX-License-Identifier: MIT */
/* Coulomb residuals (Siconos' definitions) on answers built by hand: exact separating, sticking
 * and sliding contacts give zero; perturbed ones give the value worked out in the comments. */
#include "solver/coulomb.h"

#include <float.h>
#include <math.h>

#include "solver/sap.h"
#include "testlib.h"

/* Four exact contacts, (normal, t1, t2) each:
 *  0 separating, mu 0.5: r = 0, u = (0.3, 0.1, -0.2); r - û = -û lies in the polar cone
 *    (0.5 |û_T| <= û_N), so P_K = 0 = r.
 *  1 sticking, mu 0.5: u = 0, r = (1, 0.3, -0.2), |r_T| = 0.36 <= 0.5: r - û = r, inside K.
 *  2 sliding, mu 0.5: u = (0, 0.4, 0.3) (|u_T| = 0.5), r = (2, -0.8, -0.6) on the cone's edge,
 *    opposite the slip: r - û = (1.75, -1.2, -0.9) projects to ((1.75 + 0.75) / 1.25,
 *    0.5 * 2 * (-1.2, -0.9) / 1.5) = (2, -0.8, -0.6) = r.
 *  3 frictionless sliding, mu 0: r = (1, 0, 0), u = (0, 0.3, 0.4): r - û = (1, -0.3, -0.4)
 *    projects onto the normal ray at (1, 0, 0) = r. */
static const double mu_ok[4] = {0.5, 0.5, 0.5, 0};
static const double r_ok[12] = {0, 0, 0, 1, 0.3, -0.2, 2, -0.8, -0.6, 1, 0, 0};
static const double u_ok[12] = {0.3, 0.1, -0.2, 0, 0, 0, 0, 0.4, 0.3, 0, 0.3, 0.4};

static void exact_contacts_give_zero(void **state) {
    (void)state;
    assert_near(cs_coulomb_natural_map(4, mu_ok, r_ok, u_ok), 0, 1e-15);
    assert_near(cs_coulomb_residual(4, mu_ok, r_ok, u_ok, 1), 0, 1e-15);
    // Each contact alone, so one wrong branch cannot hide behind another.
    for (int i = 0; i < 4; i++) {
        assert_near(cs_coulomb_natural_map(1, mu_ok + i, r_ok + 3 * i, u_ok + 3 * i), 0, 1e-15);
    }
}

/* Three violations, mu 0.5:
 *  impulse on a separating contact: r = (0.1, 0, 0), u = (0.3, 0, 0): r - û = (-0.2, 0, 0) is
 *    polar, P = 0, F = r, |F| = 0.1;
 *  friction outside the cone while sticking: r = (1, 0.8, 0), u = 0: P(r) = (1.12, 0.56, 0)
 *    ((1 + 0.5 * 0.8) / 1.25 = 1.12, 0.5 * 1.12 = 0.56), F = (-0.12, 0.24, 0), |F|^2 = 0.072;
 *  penetrating without impulse: r = 0, u = (-0.2, 0, 0): r - û = (0.2, 0, 0) is inside K, so
 *    F = -(0.2, 0, 0), |F| = 0.2.
 * Total |F| = sqrt(0.01 + 0.072 + 0.04) = sqrt(0.122). */
static const double mu_bad[3] = {0.5, 0.5, 0.5};
static const double r_bad[9] = {0.1, 0, 0, 1, 0.8, 0, 0, 0, 0};
static const double u_bad[9] = {0.3, 0, 0, 0, 0, 0, -0.2, 0, 0};

static void violations_give_hand_values(void **state) {
    (void)state;
    assert_near(cs_coulomb_natural_map(1, mu_bad, r_bad, u_bad), 0.1, 1e-15);
    assert_near(cs_coulomb_natural_map(1, mu_bad + 1, r_bad + 3, u_bad + 3), sqrt(0.072), 1e-15);
    assert_near(cs_coulomb_natural_map(1, mu_bad + 2, r_bad + 6, u_bad + 6), 0.2, 1e-15);
    assert_near(cs_coulomb_natural_map(3, mu_bad, r_bad, u_bad), sqrt(0.122), 1e-15);
}

/* fc3d normalization: divided by max(norm, |r|, |u|) with |r|^2 = 0.01 + 1.64 = 1.65 and
 * |u|^2 = 0.09 + 0.04 = 0.13, so |r| wins unless norm is larger; an all-zero problem stays 0. */
static void local_residual_scaling(void **state) {
    (void)state;
    const double f = sqrt(0.122);
    assert_near(cs_coulomb_residual(3, mu_bad, r_bad, u_bad, 0), f / sqrt(1.65), 1e-15);
    assert_near(cs_coulomb_residual(3, mu_bad, r_bad, u_bad, 10), f / 10, 1e-15);
    const double zero[3] = {0};
    assert_near(cs_coulomb_residual(1, mu_bad, zero, zero, 0), 0, 0);
    // Below DBL_EPSILON the scale is ignored: the absolute value comes back.
    const double tiny_r[3] = {1e-17, 0, 0}, tiny_u[3] = {1e-17, 0, 0};
    assert_near(cs_coulomb_residual(1, mu_bad, tiny_r, tiny_u, 0), 1e-17, 1e-32);
}

/* One particle, M = diag(2, 2, 2), contact frame = world axes (H = I): u = v.
 * Pushed down and sideways, f = (-1, 0.2, 0), mu 0.5: it sticks, v = 0, r = -f = (1, -0.2, 0)
 * (|r_T| = 0.2 <= 0.5): both terms 0.
 * Perturbed to v = (0.1, 0, 0) with the same r: f + H r - M v = (-0.2, 0, 0), scale
 * max(|f|, |M v|, |H r|) = sqrt(1.04); u = (0.1, 0, 0), r - û = (0.9, -0.2, 0) is inside K so
 * F = (0.1, 0, 0), scale max(|u|, |r|) = sqrt(1.04). Total 0.3 / sqrt(1.04). */
static const int diag_colptr[4] = {0, 1, 2, 3}, diag_rowind[3] = {0, 1, 2};
static const double m_diag[3] = {2, 2, 2}, h_eye[3] = {1, 1, 1};

static void global_residual_particle(void **state) {
    (void)state;
    const double f[3] = {-1, 0.2, 0}, w[3] = {0}, mu = 0.5;
    const cs_sap_global p = {.nv = 3, .nc = 1,
                             .m_colptr = diag_colptr, .m_rowind = diag_rowind, .m_val = m_diag,
                             .h_colptr = diag_colptr, .h_rowind = diag_rowind, .h_val = h_eye,
                             .f = f, .w = w, .mu = &mu};
    double work[6], u[3];
    cs_coulomb_error e;
    const double r[3] = {1, -0.2, 0}, v0[3] = {0};
    assert_near(cs_coulomb_global_residual(&p, v0, r, work, u, &e), 0, 0);
    assert_near(e.momentum, 0, 0);
    assert_near(e.coulomb, 0, 0);

    const double v1[3] = {0.1, 0, 0};
    assert_near(cs_coulomb_global_residual(&p, v1, r, work, u, &e), 0.3 / sqrt(1.04), 1e-15);
    assert_near(e.momentum, 0.2 / sqrt(1.04), 1e-15);
    assert_near(e.coulomb, 0.1 / sqrt(1.04), 1e-15);
    assert_near(u[0], 0.1, 0);
    assert_near(u[1], 0, 0);
}

/* The same particle sliding: f = (-1, 0.8, 0) exceeds mu |f_N| = 0.5, so r = (1, -0.5, 0),
 * M v = H r + f = (0, 0.3, 0), v = (0, 0.15, 0) = u, û = (0.075, 0.15, 0), r - û =
 * (0.925, -0.65, 0) projects to ((0.925 + 0.325) / 1.25, -0.5 * 1) = (1, -0.5, 0) = r: zero. */
static void global_residual_sliding_exact(void **state) {
    (void)state;
    const double f[3] = {-1, 0.8, 0}, w[3] = {0}, mu = 0.5;
    const cs_sap_global p = {.nv = 3, .nc = 1,
                             .m_colptr = diag_colptr, .m_rowind = diag_rowind, .m_val = m_diag,
                             .h_colptr = diag_colptr, .h_rowind = diag_rowind, .h_val = h_eye,
                             .f = f, .w = w, .mu = &mu};
    double work[6], u[3];
    const double r[3] = {1, -0.5, 0}, v[3] = {0, 0.15, 0};
    assert_near(cs_coulomb_global_residual(&p, v, r, work, u, NULL), 0, 1e-16);
}

/* A coupled M (both triangles, CSC) and an H whose columns (n, t1, t2) are the world's
 * (z, x, y): the sparse products are checked against dense ones written out here, and the
 * Coulomb term against the natural map of u = H^T v + w. f is built so that
 * f + H r - M v = delta exactly. */
static void global_residual_coupled(void **state) {
    (void)state;
    // M = [4 1 0; 1 3 -1; 0 -1 2], stored by columns.
    const int m_colptr[4] = {0, 2, 5, 7}, m_rowind[7] = {0, 1, 0, 1, 2, 1, 2};
    const double m_val[7] = {4, 1, 1, 3, -1, -1, 2};
    const double M[3][3] = {{4, 1, 0}, {1, 3, -1}, {0, -1, 2}};
    // H columns: n = e_z, t1 = e_x, t2 = e_y.
    const int h_colptr[4] = {0, 1, 2, 3}, h_rowind[3] = {2, 0, 1};
    const double h_val[3] = {1, 1, 1};
    const double v[3] = {0.3, -0.1, 0.2}, r[3] = {0.7, 0.1, -0.3}, delta[3] = {0.01, -0.02, 0};
    const double w[3] = {0.05, 0, 0}, mu = 0.4;
    // H r in world coordinates: (r_t1, r_t2, r_n).
    const double hr[3] = {r[1], r[2], r[0]};
    double mv[3], f[3];
    for (int i = 0; i < 3; i++) {
        mv[i] = M[i][0] * v[0] + M[i][1] * v[1] + M[i][2] * v[2];
        f[i] = mv[i] - hr[i] + delta[i];
    }
    const cs_sap_global p = {.nv = 3, .nc = 1,
                             .m_colptr = m_colptr, .m_rowind = m_rowind, .m_val = m_val,
                             .h_colptr = h_colptr, .h_rowind = h_rowind, .h_val = h_val,
                             .f = f, .w = w, .mu = &mu};
    double work[6], u[3];
    cs_coulomb_error e;
    const double total = cs_coulomb_global_residual(&p, v, r, work, u, &e);
    // u = H^T v + w = (v_z, v_x, v_y) + w.
    const double u_want[3] = {v[2] + w[0], v[0], v[1]};
    for (int i = 0; i < 3; i++) {
        assert_near(u[i], u_want[i], 1e-16);
    }
    const double nd = sqrt(delta[0] * delta[0] + delta[1] * delta[1]);
    const double nf = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    const double nmv = sqrt(mv[0] * mv[0] + mv[1] * mv[1] + mv[2] * mv[2]);
    const double nhr = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    assert_near(e.momentum, nd / fmax(nf, fmax(nmv, nhr)), 1e-15);
    const double nu = sqrt(u_want[0] * u_want[0] + u_want[1] * u_want[1] + u_want[2] * u_want[2]);
    assert_near(e.coulomb, cs_coulomb_natural_map(1, &mu, r, u_want) / fmax(nu, nhr), 1e-15);
    assert_near(total, e.momentum + e.coulomb, 0);
    assert_true(e.coulomb > 0.01); // r = (0.7, 0.1, -0.3) with u_n = 0.25 > 0: not a solution
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_contacts_give_zero),
        cmocka_unit_test(violations_give_hand_values),
        cmocka_unit_test(local_residual_scaling),
        cmocka_unit_test(global_residual_particle),
        cmocka_unit_test(global_residual_sliding_exact),
        cmocka_unit_test(global_residual_coupled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
