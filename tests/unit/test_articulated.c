/* SPDX-License-Identifier: MIT */
/* The articulated solver (Baraff 1996): a pendulum and a hanging chain at rest carry the weight
 * below each joint, a hinge lets a wrench turn its body about the axis only and a slider move it
 * along the axis only (against the closed-form motion), random trees with and without loop
 * closures agree with a dense LU of the whole H (velocities, multipliers and the anticipated
 * matrix of section 8), a four-bar linkage stays closed over 10 000 integrated steps with the
 * drift term (and opens without it), each row's drift target is the rate of its error, the
 * elimination order has no fill-in while the work grows linearly with the chain's length,
 * deadlines stop the work, and ticks do not allocate. */
#include "solver/articulated.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "solver/contact.h"
#include "solver/deadline.h"
#include "solver/linalg.h"
#include "solver/workspace.h"
#include "testlib.h"

#define G 9.81
#define DT 1e-3
#define BETA 0.2

extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info);

static cs_workspace *ws_new(int nb, int nj) {
    cs_workspace *ws = cs_workspace_new(&(cs_limits){.max_bodies = nb, .max_joints = nj});
    assert_non_null(ws);
    return ws;
}

static void random_quat(t_rng *r, double q[4]) {
    double s = 0;
    do {
        s = 0;
        for (int k = 0; k < 4; k++) {
            q[k] = t_rng_range(r, -1, 1);
            s += q[k] * q[k];
        }
    } while (s < 0.05 || s > 1);
    for (int k = 0; k < 4; k++)
        q[k] /= sqrt(s);
}

static void random_unit(t_rng *r, double u[3]) {
    double s;
    do {
        for (int k = 0; k < 3; k++)
            u[k] = t_rng_range(r, -1, 1);
        s = sqrt(cs_dot3(u, u));
    } while (s < 0.1 || s > 1);
    for (int k = 0; k < 3; k++)
        u[k] /= s;
}

/* A body at pos with quaternion q, mass m and a body-frame inertia near diag(i0) with a small
 * off-diagonal part (positive definite). */
static cs_art_body make_body(const double pos[3], const double q[4], double m, double i0) {
    cs_body b = {.mass = m, .inertia = {i0, 0.01 * i0, 0, 0.01 * i0, 1.3 * i0, 0.02 * i0, 0,
                                        0.02 * i0, 0.8 * i0}};
    memcpy(b.pos, pos, sizeof b.pos);
    memcpy(b.quat, q, sizeof b.quat);
    cs_art_body ab;
    cs_articulated_body(&ab, &b);
    return ab;
}

/* v* = v0 + dt M^-1 (f + m g, tau) for each body; f, tau: [3 nb] or NULL. */
static void free_motion(int nb, const cs_art_body *B, const double *v0, const double *f,
                        const double *tau, double gz, double *vstar) {
    for (int i = 0; i < nb; i++) {
        double Iinv[9], t[3] = {0, 0, 0}, dw[3];
        assert_int_equal(cs_mat3_spd_inverse(Iinv, B[i].iw), 0);
        for (int k = 0; k < 3; k++) {
            const double fk = (f ? f[3 * i + k] : 0) + (k == 2 ? B[i].mass * gz : 0);
            vstar[6 * i + k] = (v0 ? v0[6 * i + k] : 0) + DT * fk / B[i].mass;
            t[k] = tau ? tau[3 * i + k] : 0;
        }
        cs_mat3_vec(dw, Iinv, t);
        for (int k = 0; k < 3; k++)
            vstar[6 * i + 3 + k] = (v0 ? v0[6 * i + 3 + k] : 0) + DT * dw[k];
    }
}

static double max_abs(int n, const double *x) {
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

static const cs_joint_kind kinds[4] = {CS_JOINT_BALL, CS_JOINT_HINGE, CS_JOINT_SLIDER,
                                       CS_JOINT_FIXED};

/* A chain of n bodies hanging straight down from the world: joint i (anchor at z = -i) holds
 * body i (body_a, COM at z = -i - 0.5) to body i - 1 (or the world). Kinds cycle through all
 * four; slider axes are horizontal, so gravity pulls none along its axis. At rest, joint i's
 * force on body_a is the weight of bodies i .. n - 1, upwards, and its torque is zero. */
static void hanging_chain(int n, uint64_t seed) {
    t_rng r = t_rng_seed(seed);
    cs_art_body *B = calloc((size_t)n, sizeof *B);
    cs_art_joint *J = calloc((size_t)n, sizeof *J);
    double *vstar = calloc(6 * (size_t)n, sizeof(double)), *v = calloc(6 * (size_t)n, 8);
    double *lambda = calloc(6 * (size_t)n, sizeof(double));
    for (int i = 0; i < n; i++) {
        double q[4];
        random_quat(&r, q);
        B[i] = make_body((double[3]){0, 0, -i - 0.5}, q, t_rng_range(&r, 0.5, 3), 0.2);
    }
    for (int i = 0; i < n; i++) {
        double axis[3];
        const cs_joint_kind k = kinds[(i + (int)seed) % 4];
        if (k == CS_JOINT_SLIDER) {
            const double phi = t_rng_range(&r, 0, 2 * M_PI);
            axis[0] = cos(phi), axis[1] = sin(phi), axis[2] = 0;
        } else
            random_unit(&r, axis);
        cs_articulated_joint_capture(&J[i], k, i, i - 1, B, (double[3]){0, 0, -i}, axis);
    }
    free_motion(n, B, NULL, NULL, NULL, -G, vstar);
    cs_workspace *ws = ws_new(n, n);
    cs_articulated *a;
    assert_int_equal(cs_articulated_factor(&a, ws, n, B, n, J, DT, BETA, NULL), CS_CONVERGED);
    assert_int_equal(a->naux, 0);
    assert_int_equal(cs_articulated_step(a, ws, vstar, v, lambda, NULL), CS_CONVERGED);
    assert_near(max_abs(6 * n, v), 0, 1e-12);
    double below = 0;
    for (int i = n - 1; i >= 0; i--) {
        below += B[i].mass * G;
        double f[3], tau[3];
        cs_articulated_joint_wrench(a, i, lambda, f, tau);
        assert_near(f[2], below, 1e-9 * below);
        assert_near(f[0], 0, 1e-9 * below);
        assert_near(f[1], 0, 1e-9 * below);
        assert_near(max_abs(3, tau), 0, 1e-9 * below);
    }
    cs_workspace_free(ws);
    free(B), free(J), free(vstar), free(v), free(lambda);
}

/* A pendulum of each kind (one body under the world) and chains of 2, 10 and 50. */
static void chains_at_rest_carry_the_weight_below(void **state) {
    (void)state;
    for (int k = 0; k < 4; k++)
        hanging_chain(1, (uint64_t)k);
    hanging_chain(2, 7);
    hanging_chain(10, 11);
    hanging_chain(50, 13);
}

/* A body hinged to the world at a random anchor and axis, under a random wrench: it turns about
 * the axis through the anchor only, at theta' = a . tau_O dt / (a^T I_O a) (tau_O and I_O about
 * the anchor); a slider instead moves along its axis only, at (a . f) dt / m. No drift term
 * (beta = 0): capture leaves position errors of rounding size, which beta / dt would turn into
 * velocities of 1e-14 m/s, near this test's tolerance. */
static void hinge_turns_and_slider_slides_along_axis_only(void **state) {
    (void)state;
    t_rng r = t_rng_seed(0x41e6e);
    cs_workspace *ws = ws_new(1, 1);
    for (int trial = 0; trial < 50; trial++) {
        double q[4], pos[3], anchor[3], axis[3], f[3], tau[3];
        random_quat(&r, q);
        random_unit(&r, axis);
        for (int k = 0; k < 3; k++) {
            pos[k] = t_rng_range(&r, -1, 1);
            anchor[k] = pos[k] + t_rng_range(&r, -1, 1);
            f[k] = t_rng_range(&r, -10, 10);
            tau[k] = t_rng_range(&r, -3, 3);
        }
        const cs_art_body B = make_body(pos, q, t_rng_range(&r, 0.5, 3), t_rng_range(&r, .1, 1));
        double vstar[6], v[6], lambda[6];
        free_motion(1, &B, NULL, f, tau, 0, vstar);
        const size_t mark = cs__ws_mark(ws);
        cs_art_joint J;
        cs_articulated *a;
        // Hinge.
        cs_articulated_joint_capture(&J, CS_JOINT_HINGE, 0, -1, &B, anchor, axis);
        assert_int_equal(cs_articulated_factor(&a, ws, 1, &B, 1, &J, DT, 0, NULL),
                         CS_CONVERGED);
        assert_int_equal(cs_articulated_step(a, ws, vstar, v, lambda, NULL), CS_CONVERGED);
        double d[3], tO[3], c[3], Iu[3];
        for (int k = 0; k < 3; k++)
            d[k] = pos[k] - anchor[k];
        cs_cross3(c, d, f);
        for (int k = 0; k < 3; k++)
            tO[k] = tau[k] + c[k];
        cs_mat3_vec(Iu, B.iw, axis);
        const double IO = cs_dot3(axis, Iu) + B.mass * (cs_dot3(d, d) - pow(cs_dot3(d, axis), 2));
        const double rate = cs_dot3(axis, tO) * DT / IO;
        double vw[3]; // expected linear velocity: w x d
        const double w[3] = {rate * axis[0], rate * axis[1], rate * axis[2]};
        cs_cross3(vw, w, d);
        const double scale = fabs(rate) * (1 + sqrt(cs_dot3(d, d)));
        for (int k = 0; k < 3; k++) {
            assert_near(v[3 + k], w[k], 1e-9 * scale);
            assert_near(v[k], vw[k], 1e-9 * scale);
        }
        cs__ws_release(ws, mark);
        // Slider.
        cs_articulated_joint_capture(&J, CS_JOINT_SLIDER, 0, -1, &B, anchor, axis);
        assert_int_equal(cs_articulated_factor(&a, ws, 1, &B, 1, &J, DT, 0, NULL),
                         CS_CONVERGED);
        assert_int_equal(cs_articulated_step(a, ws, vstar, v, lambda, NULL), CS_CONVERGED);
        const double speed = cs_dot3(axis, f) * DT / B.mass;
        for (int k = 0; k < 3; k++) {
            assert_near(v[k], speed * axis[k], 1e-9 * fabs(speed));
            assert_near(v[3 + k], 0, 1e-9 * fabs(speed));
        }
        cs__ws_release(ws, mark);
    }
    cs_workspace_free(ws);
}

/* Dense H = [M -J^T; -J 0] (column-major, order 6 nb + rows) from the module's joint rows, and
 * the right-hand side [M v*; -b]. */
static int dense_system(const cs_articulated *a, const cs_art_body *B, const double *vstar,
                        double **ret_H, double **ret_z) {
    const int nb = a->nb, N = 6 * nb + a->rows;
    double *H = calloc((size_t)N * (size_t)N, sizeof(double)), *z = calloc((size_t)N, 8);
    cs_art_row rows[6];
    for (int i = 0; i < nb; i++)
        for (int r = 0; r < 3; r++) {
            H[(size_t)(6 * i + r) * N + 6 * i + r] = B[i].mass;
            z[6 * i + r] = B[i].mass * vstar[6 * i + r];
            for (int c = 0; c < 3; c++) {
                H[(size_t)(6 * i + 3 + c) * N + 6 * i + 3 + r] = B[i].iw[3 * r + c];
                z[6 * i + 3 + r] += B[i].iw[3 * r + c] * vstar[6 * i + 3 + c];
            }
        }
    for (int j = 0; j < a->nj; j++) {
        cs_articulated_joint_rows(a, j, rows);
        for (int k = 0; k < a->row_off[j + 1] - a->row_off[j]; k++) {
            const int row = 6 * nb + a->row_off[j] + k;
            z[row] = -rows[k].b;
            for (int i = 0; i < 6; i++) {
                if (rows[k].ia >= 0) {
                    const int col = 6 * rows[k].ia + i;
                    H[(size_t)col * N + row] = H[(size_t)row * N + col] = -rows[k].ja[i];
                }
                if (rows[k].ib >= 0) {
                    const int col = 6 * rows[k].ib + i;
                    H[(size_t)col * N + row] = H[(size_t)row * N + col] = -rows[k].jb[i];
                }
            }
        }
    }
    *ret_H = H;
    *ret_z = z;
    return N;
}

/* A random tree of nb bodies (each hung from a random earlier body at a random anchor; now and
 * then a new tree, free or jointed to the world), joints of random kinds, plus `loops` ball
 * joints each closing a loop across four tree joints (ball and hinge only then, so the loops
 * keep freedom). Poses are then disturbed so every joint has a position error. bodies: [nb],
 * joints: [nb + loops]; returns the joint count, *ret_loops the closures placed. */
static int random_tree(t_rng *r, int nb, int loops, cs_art_body *B, cs_art_joint *J,
                       int *ret_loops) {
    int *up = calloc((size_t)nb, sizeof(int)), nj = 0;
    for (int i = 0; i < nb; i++) {
        double q[4], anchor[3], pos[3], axis[3];
        random_quat(r, q);
        random_unit(r, axis);
        const bool root = i == 0 || t_rng_unit(r) < 0.05;
        const int p = root ? -1 : t_rng_below(r, i);
        for (int k = 0; k < 3; k++) {
            anchor[k] = (p >= 0 ? B[p].pos[k] : 3.0 * i) + t_rng_range(r, -0.6, 0.6);
            pos[k] = anchor[k] + t_rng_range(r, -0.6, 0.6);
        }
        B[i] = make_body(pos, q, t_rng_range(r, 0.5, 3), t_rng_range(r, 0.05, 0.5));
        up[i] = p;
        if (root && t_rng_unit(r) < 0.5)
            continue; // a free tree
        const cs_joint_kind k = loops ? kinds[t_rng_below(r, 2)] : kinds[t_rng_below(r, 4)];
        cs_articulated_joint_capture(&J[nj++], k, i, p, B, anchor, axis);
    }
    *ret_loops = 0;
    for (int tries = 0; *ret_loops < loops && tries < 100 * loops; tries++) {
        int i = t_rng_below(r, nb), top = i;
        for (int s = 0; s < 4 && top >= 0; s++)
            top = up[top];
        if (top < 0)
            continue;
        double anchor[3];
        for (int k = 0; k < 3; k++)
            anchor[k] = 0.5 * (B[i].pos[k] + B[top].pos[k]);
        cs_articulated_joint_capture(&J[nj++], CS_JOINT_BALL, i, top, B, anchor, NULL);
        (*ret_loops)++;
    }
    for (int i = 0; i < nb; i++) {
        double dq[4] = {1, t_rng_range(r, -1e-3, 1e-3), t_rng_range(r, -1e-3, 1e-3),
                        t_rng_range(r, -1e-3, 1e-3)}, R[9], Rn[9];
        const double s = sqrt(cs_dot3(dq + 1, dq + 1) + 1);
        for (int k = 0; k < 4; k++)
            dq[k] /= s;
        cs_quat_to_mat3(R, dq);
        for (int row = 0; row < 3; row++)
            for (int c = 0; c < 3; c++)
                Rn[3 * row + c] = R[3 * row] * B[i].rot[c] + R[3 * row + 1] * B[i].rot[3 + c] +
                                  R[3 * row + 2] * B[i].rot[6 + c];
        memcpy(B[i].rot, Rn, sizeof Rn);
        for (int k = 0; k < 3; k++)
            B[i].pos[k] += t_rng_range(r, -1e-3, 1e-3);
    }
    free(up);
    return nj;
}

/* Random trees of 1 .. 200 bodies, some with loop closures: v and every lambda agree with a
 * dense LU solve of the whole H (primary and closing rows alike) to 1e-9 of their largest
 * entries, and the anticipated matrix A and free velocity with their dense definitions
 * (J_aux of the responses H^-1 [J_i^T; 0]). The workspace high-water mark stays within
 * cs_articulated_size(). */
static void random_trees_agree_with_dense_solve(void **state) {
    (void)state;
    static const int sizes[] = {1, 2, 3, 5, 8, 20, 40, 60, 100, 200};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    for (int t = 0; t < 2 * nsizes; t++) {
        const int nb = sizes[t % nsizes], loops = t >= nsizes && nb >= 8 ? 1 + nb / 60 : 0;
        const uint64_t seed = 0xba4aff + (uint64_t)t;
        t_rng r = t_rng_seed(seed);
        cs_art_body *B = calloc((size_t)nb, sizeof *B);
        cs_art_joint *J = calloc((size_t)(nb + loops), sizeof *J);
        int placed;
        const int nj = random_tree(&r, nb, loops, B, J, &placed);
        double *v0 = calloc(6 * (size_t)nb, 8), *vstar = calloc(6 * (size_t)nb, 8);
        double *v = calloc(6 * (size_t)nb, 8), *lambda = calloc(6 * (size_t)nj + 1, 8);
        for (int i = 0; i < 6 * nb; i++)
            v0[i] = t_rng_range(&r, -1, 1);
        free_motion(nb, B, v0, NULL, NULL, -G, vstar);
        const cs_limits lim = {.max_bodies = nb, .max_joints = nj};
        cs_workspace *ws = ws_new(nb, nj);
        cs__ws_reset_peak(ws);
        const size_t base = cs__ws_mark(ws);
        cs_articulated *a;
        assert_int_equal(cs_articulated_factor(&a, ws, nb, B, nj, J, DT, BETA, NULL),
                         CS_CONVERGED);
        assert_int_equal(cs_articulated_step(a, ws, vstar, v, lambda, NULL), CS_CONVERGED);
        int naux = 0;
        for (int j = 0; j < nj; j++)
            naux += a->aux[j] ? a->row_off[j + 1] - a->row_off[j] : 0;
        assert_int_equal(a->naux, naux);
        assert_int_equal(naux, 3 * placed); // every closing ball joint, nothing else

        double *H, *z;
        const int N = dense_system(a, B, vstar, &H, &z), one = 1;
        int *ipiv = calloc((size_t)N, sizeof(int)), info;
        dgetrf_(&N, &N, H, &N, ipiv, &info);
        assert_int_equal(info, 0);
        dgetrs_("N", &N, &one, H, &N, ipiv, z, &N, &info);
        const double vs = max_abs(6 * nb, z), ls = max_abs(a->rows, z + 6 * nb);
        for (int i = 0; i < 6 * nb; i++)
            assert_near(v[i], z[i], 1e-9 * vs);
        for (int i = 0; i < a->rows; i++)
            assert_near(lambda[i], z[6 * nb + i], 1e-9 * ls);

        if (placed) {
            // The dense response to each closing row with only the primary rows present: drop
            // the closing rows from H (their own rows and columns) by solving the full system
            // with the closing multipliers pinned is not what A means, so build H again
            // without them.
            const int k = a->naux, np = 6 * nb + a->rows - k;
            double *Hp = calloc((size_t)np * (size_t)np, sizeof(double));
            double *rhs = calloc((size_t)np * (size_t)(k + 1), sizeof(double));
            double *Hfull, *zfull;
            dense_system(a, B, vstar, &Hfull, &zfull);
            int *keep = calloc((size_t)N, sizeof(int)), m = 0;
            for (int i = 0; i < 6 * nb; i++)
                keep[m++] = i;
            for (int j = 0; j < nj; j++)
                if (!a->aux[j])
                    for (int i = a->row_off[j]; i < a->row_off[j + 1]; i++)
                        keep[m++] = 6 * nb + i;
            assert_int_equal(m, np);
            for (int c = 0; c < np; c++) {
                for (int rr = 0; rr < np; rr++)
                    Hp[(size_t)c * np + rr] = Hfull[(size_t)keep[c] * N + keep[rr]];
                rhs[c] = zfull[keep[c]];
            }
            for (int i = 0; i < k; i++) {
                const cs_art_row *R = &a->aux_rows[i];
                for (int c = 0; c < 6; c++) {
                    rhs[(size_t)(i + 1) * np + 6 * R->ia + c] += R->ja[c];
                    if (R->ib >= 0)
                        rhs[(size_t)(i + 1) * np + 6 * R->ib + c] += R->jb[c];
                }
            }
            const int nrhs = k + 1;
            int *ip = calloc((size_t)np, sizeof(int));
            dgetrf_(&np, &np, Hp, &np, ip, &info);
            assert_int_equal(info, 0);
            dgetrs_("N", &np, &nrhs, Hp, &np, ip, rhs, &np, &info);
            double *A = calloc((size_t)k * (size_t)k, 8), *afree = calloc((size_t)k, 8);
            assert_int_equal(cs_articulated_anticipate(a, ws, vstar, k, a->aux_rows, A, k, afree,
                                                       NULL),
                             CS_CONVERGED);
            const double As = max_abs(k * k, A);
            for (int i = 0; i < k; i++) {
                const cs_art_row *R = &a->aux_rows[i];
                double af = -R->b;
                for (int c = 0; c < 6; c++)
                    af += R->ja[c] * rhs[6 * R->ia + c] +
                          (R->ib >= 0 ? R->jb[c] * rhs[6 * R->ib + c] : 0);
                assert_near(afree[i], af, 1e-9 * (vs + fabs(R->b)));
                for (int col = 0; col < k; col++) {
                    const double *y = rhs + (size_t)(col + 1) * np;
                    double Aic = 0;
                    for (int c = 0; c < 6; c++)
                        Aic += R->ja[c] * y[6 * R->ia + c] +
                               (R->ib >= 0 ? R->jb[c] * y[6 * R->ib + c] : 0);
                    assert_near(A[(size_t)col * k + i], Aic, 1e-9 * As);
                }
            }
            free(Hp), free(rhs), free(Hfull), free(zfull), free(keep), free(ip), free(A),
                free(afree);
        }
        assert_true(cs__ws_peak(ws) - base <= cs_articulated_size(&lim));
        cs__ws_release(ws, base);
        cs_workspace_free(ws);
        free(H), free(z), free(ipiv), free(B), free(J), free(v0), free(vstar), free(v),
            free(lambda);
    }
}

/* Every block shape the factor's kernels are specialised for (a body under each kind of joint,
 * on either side of it; each kind of joint under a body; each kind's joint to the world as a
 * root; a body as a root), in three-body chains world -k1- B0 -k2- B1 -k3- B2 with each joint's
 * sides in either order, and the same chains free of the world: v and every lambda of a step
 * agree with a dense LU of H to 1e-9 of their largest entries, and so does a solve under an
 * extra row's impulse (the right-hand side J_r^T mu the anticipation uses). */
static void every_block_shape_agrees_with_dense_solve(void **state) {
    (void)state;
    t_rng r = t_rng_seed(0x5a4e5);
    cs_workspace *ws = ws_new(3, 3);
    for (int t = 0; t < 4 * 4 * 4 * 2 * 2; t++) {
        const cs_joint_kind k[3] = {kinds[t % 4], kinds[t / 4 % 4], kinds[t / 16 % 4]};
        const bool world = t / 64 % 2, flip = t / 128 % 2;
        cs_art_body B[3];
        for (int i = 0; i < 3; i++) {
            double q[4];
            random_quat(&r, q);
            B[i] = make_body((double[3]){i + 0.5, t_rng_range(&r, -0.2, 0.2), 0}, q,
                             t_rng_range(&r, 0.5, 3), t_rng_range(&r, 0.05, 0.5));
        }
        // Joint i between body i - 1 (the world for i = 0) and body i, at x = i.
        cs_art_joint J[3];
        int nj = 0;
        for (int i = world ? 0 : 1; i < 3; i++) {
            double axis[3];
            random_unit(&r, axis);
            const int lo = i - 1, hi = i;
            const bool swap = lo >= 0 && (flip ? i % 2 == 0 : i % 2 == 1);
            cs_articulated_joint_capture(&J[nj++], k[i], swap ? lo : hi, swap ? hi : lo, B,
                                         (double[3]){i, 0, 0}, axis);
        }
        double vstar[18], v[18], lambda[18];
        for (int i = 0; i < 3; i++)
            for (int c = 0; c < 3; c++)
                B[i].pos[c] += t_rng_range(&r, -1e-3, 1e-3);
        for (int i = 0; i < 18; i++)
            vstar[i] = t_rng_range(&r, -1, 1);
        cs_art_row row = {.ia = 1, .ib = 2, .b = 0};
        for (int c = 0; c < 6; c++)
            row.ja[c] = t_rng_range(&r, -1, 1), row.jb[c] = t_rng_range(&r, -1, 1);
        const double mu = 0.7;
        const size_t mark = cs__ws_mark(ws);
        cs_articulated *a;
        assert_int_equal(cs_articulated_factor(&a, ws, 3, B, nj, J, DT, BETA, NULL),
                         CS_CONVERGED);
        assert_int_equal(a->naux, 0);
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 0)
                assert_int_equal(cs_articulated_step(a, ws, vstar, v, lambda, NULL),
                                 CS_CONVERGED);
            else
                assert_int_equal(cs_articulated_solve(a, vstar, 1, &row, &mu, v, lambda, NULL),
                                 CS_CONVERGED);
            double *H, *z;
            const int N = dense_system(a, B, vstar, &H, &z), one = 1;
            for (int c = 0; c < 6 && pass == 1; c++) {
                z[6 * row.ia + c] += row.ja[c] * mu;
                z[6 * row.ib + c] += row.jb[c] * mu;
            }
            int ipiv[18 + 18], info;
            dgetrf_(&N, &N, H, &N, ipiv, &info);
            assert_int_equal(info, 0);
            dgetrs_("N", &N, &one, H, &N, ipiv, z, &N, &info);
            const double vs = max_abs(18, z), ls = max_abs(a->rows, z + 18);
            for (int i = 0; i < 18; i++)
                assert_near(v[i], z[i], 1e-9 * vs);
            for (int i = 0; i < a->rows; i++)
                assert_near(lambda[i], z[18 + i], 1e-9 * ls);
            free(H), free(z);
        }
        cs__ws_release(ws, mark);
    }
    cs_workspace_free(ws);
}

/* q <- normalize(q + dt/2 (0, w) q), w world. */
static void quat_step(double q[4], const double w[3], double dt) {
    const double dq[4] = {-w[0] * q[1] - w[1] * q[2] - w[2] * q[3],
                          w[0] * q[0] + w[1] * q[3] - w[2] * q[2],
                          -w[0] * q[3] + w[1] * q[0] + w[2] * q[1],
                          w[0] * q[2] - w[1] * q[1] + w[2] * q[0]};
    double s = 0;
    for (int k = 0; k < 4; k++) {
        q[k] += 0.5 * dt * dq[k];
        s += q[k] * q[k];
    }
    for (int k = 0; k < 4; k++)
        q[k] /= sqrt(s);
}

/* |p_a - p_b| of joint J at the poses of B. */
static double anchor_gap(const cs_art_joint *J, const cs_art_body *B) {
    double pa[3], pb[3];
    cs_mat3_vec(pa, B[J->ia].rot, J->la);
    if (J->ib >= 0)
        cs_mat3_vec(pb, B[J->ib].rot, J->lb);
    double d = 0;
    for (int k = 0; k < 3; k++) {
        const double e = B[J->ia].pos[k] + pa[k] - (J->ib >= 0 ? B[J->ib].pos[k] + pb[k]
                                                               : J->lb[k]);
        d += e * e;
    }
    return sqrt(d);
}

/* The planar four-bar: ground A = (0,0,0) .. D = (2,0,0), crank AB = 1, coupler BC = 2, rocker
 * CD = 1.5, hinges about y, rods of 1 kg per m; the crank starts at 60 degrees, at rest, under
 * gravity (-z). The hinge at D closes the loop (auxiliary; 3 of its 5 rows are redundant in
 * the plane, which the rank-revealing loop solve absorbs). 10 000 steps of 1 ms: positions by
 * explicit Euler, orientations by the quaternion rate. Returns the largest anchor gap of the
 * four hinges over the run. */
static double four_bar_gap(double beta) {
    const double L[3] = {1, 2, 1.5}, A[3] = {0, 0, 0}, D[3] = {2, 0, 0};
    const double th = M_PI / 3, Bp[3] = {cos(th), 0, sin(th)};
    // C: intersection of |C - B| = 2 and |C - D| = 1.5 above the ground line.
    const double dx = D[0] - Bp[0], dz = D[2] - Bp[2], dd = sqrt(dx * dx + dz * dz);
    const double al = (L[1] * L[1] - L[2] * L[2] + dd * dd) / (2 * dd),
                 h = sqrt(L[1] * L[1] - al * al);
    const double C[3] = {Bp[0] + al * dx / dd - h * dz / dd, 0, Bp[2] + al * dz / dd + h * dx / dd};
    const double *ends[4] = {A, Bp, C, D};
    double q[3][4], pos[3][3], v[18], vstar[18], lambda[20];
    cs_art_body bodies[3];
    cs_body sb[3];
    for (int i = 0; i < 3; i++) {
        // Rod i along its body x axis, from ends[i] to ends[i + 1]: a rotation about y.
        const double ex = ends[i + 1][0] - ends[i][0], ez = ends[i + 1][2] - ends[i][2];
        const double ang = -atan2(ez, ex); // rotating e_x about y by ang gives (cos, 0, -sin)
        q[i][0] = cos(ang / 2), q[i][1] = 0, q[i][2] = sin(ang / 2), q[i][3] = 0;
        for (int k = 0; k < 3; k++)
            pos[i][k] = 0.5 * (ends[i][k] + ends[i + 1][k]);
        const double m = L[i], il = m * L[i] * L[i] / 12, ir = 1e-3 * m;
        sb[i] = (cs_body){.mass = m, .inertia = {ir, 0, 0, 0, il, 0, 0, 0, il}};
        memcpy(sb[i].pos, pos[i], sizeof pos[i]);
        memcpy(sb[i].quat, q[i], sizeof q[i]);
        cs_articulated_body(&bodies[i], &sb[i]);
    }
    static const double y[3] = {0, 1, 0};
    cs_art_joint J[4];
    cs_articulated_joint_capture(&J[0], CS_JOINT_HINGE, 0, -1, bodies, A, y);
    cs_articulated_joint_capture(&J[1], CS_JOINT_HINGE, 1, 0, bodies, Bp, y);
    cs_articulated_joint_capture(&J[2], CS_JOINT_HINGE, 2, 1, bodies, C, y);
    cs_articulated_joint_capture(&J[3], CS_JOINT_HINGE, 2, -1, bodies, D, y);
    for (int k = 0; k < 4; k++)
        assert_near(anchor_gap(&J[k], bodies), 0, 1e-12);
    memset(v, 0, sizeof v);
    cs_workspace *ws = ws_new(3, 4);
    double gap = 0, swing = 0;
    for (int step = 0; step < 10000; step++) {
        for (int i = 0; i < 3; i++) {
            memcpy(sb[i].pos, pos[i], sizeof pos[i]);
            memcpy(sb[i].quat, q[i], sizeof q[i]);
            cs_articulated_body(&bodies[i], &sb[i]);
        }
        free_motion(3, bodies, v, NULL, NULL, -G, vstar);
        const size_t mark = cs__ws_mark(ws);
        cs_articulated *a;
        assert_int_equal(cs_articulated_factor(&a, ws, 3, bodies, 4, J, DT, beta, NULL),
                         CS_CONVERGED);
        if (step == 0) {
            assert_int_equal(a->aux[3], 1);
            assert_int_equal(a->naux, 5);
            assert_int_equal(a->aux[0] + a->aux[1] + a->aux[2], 0);
        }
        assert_int_equal(cs_articulated_step(a, ws, vstar, v, lambda, NULL), CS_CONVERGED);
        cs__ws_release(ws, mark);
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < 3; k++)
                pos[i][k] += DT * v[6 * i + k];
            quat_step(q[i], v + 6 * i + 3, DT);
        }
        for (int i = 0; i < 3; i++) {
            memcpy(sb[i].pos, pos[i], sizeof pos[i]);
            memcpy(sb[i].quat, q[i], sizeof q[i]);
            cs_articulated_body(&bodies[i], &sb[i]);
        }
        for (int k = 0; k < 4; k++) {
            const double g = anchor_gap(&J[k], bodies);
            gap = g > gap ? g : gap;
        }
        swing = fabs(v[4]) > swing ? fabs(v[4]) : swing;
    }
    assert_true(swing > 1.0); // the linkage really moves (crank rate, rad/s)
    cs_workspace_free(ws);
    return gap;
}

/* With beta = 0.2 the loop stays closed within 1e-3 m over 10 s (measured 9.2e-5 m: explicit
 * Euler drifts by about dt^2 w^2 L per step and the drift term removes beta of it per step);
 * without the drift term explicit Euler opens it well past that. */
static void four_bar_stays_closed(void **state) {
    (void)state;
    const double with = four_bar_gap(BETA), without = four_bar_gap(0);
    print_message("# four-bar: max anchor gap %.3g m with beta %.1f, %.3g m without\n", with, BETA,
                  without);
    assert_true(with < 1e-3);
    assert_true(without > 10 * with);
}

/* Hinge chain of n links hanging from the world along x. */
static cs_articulated *hinge_chain(cs_workspace *ws, int n, cs_art_body *B, cs_art_joint *J) {
    static const double q[4] = {1, 0, 0, 0}, y[3] = {0, 1, 0};
    for (int i = 0; i < n; i++)
        B[i] = make_body((double[3]){i + 0.5, 0, 0}, q, 1, 0.1);
    for (int i = 0; i < n; i++)
        cs_articulated_joint_capture(&J[i], CS_JOINT_HINGE, i, i - 1, B, (double[3]){i, 0, 0}, y);
    cs_articulated *a;
    assert_int_equal(cs_articulated_factor(&a, ws, n, B, n, J, DT, BETA, NULL), CS_CONVERGED);
    return a;
}

/* Fill-in of eliminating H's block graph in order `ord` (ord[p] = node id): the number of
 * positions whose node, when eliminated, still has more than one uneliminated neighbour (in a
 * tree those neighbours are never adjacent, so each such step creates fill). The graph: body i
 * and joint nb + j adjacent when primary joint j acts on body i. */
static int fill_steps(const cs_articulated *a, const int *ord) {
    const int nb = a->nb, ids = nb + a->nj;
    int *at = malloc((size_t)ids * sizeof(int)), fill = 0;
    for (int i = 0; i < ids; i++)
        at[i] = -1;
    for (int p = 0; p < a->nnodes; p++)
        at[ord[p]] = p;
    for (int j = 0; j < a->nj; j++) {
        if (a->aux[j])
            continue;
        cs_art_row rows[6];
        cs_articulated_joint_rows(a, j, rows);
        const int pj = at[nb + j], later_j =
            (at[rows[0].ia] > pj) + (rows[0].ib >= 0 && at[rows[0].ib] > pj);
        fill += later_j > 1;
    }
    // A body's neighbours are its primary joints.
    int *later = calloc((size_t)nb, sizeof(int));
    for (int j = 0; j < a->nj; j++) {
        if (a->aux[j])
            continue;
        cs_art_row rows[6];
        cs_articulated_joint_rows(a, j, rows);
        const int pj = at[nb + j];
        later[rows[0].ia] += pj > at[rows[0].ia];
        if (rows[0].ib >= 0)
            later[rows[0].ib] += pj > at[rows[0].ib];
    }
    for (int i = 0; i < nb; i++)
        fill += later[i] > 1;
    free(at);
    free(later);
    return fill;
}

/* Chains of 10, 100, 1000 hinge links: the order is a valid elimination order with no fill-in
 * (each node has exactly its parent left when eliminated, so the factor has exactly H's nonzero
 * blocks: one per edge), while eliminating a middle node first would fill; and the factor's
 * multiply-adds grow linearly: work(1000) / work(100) within 1 % of 10. */
static void chain_order_has_no_fill_and_linear_work(void **state) {
    (void)state;
    static const int ns[3] = {10, 100, 1000};
    int64_t work[3];
    for (int t = 0; t < 3; t++) {
        const int n = ns[t];
        cs_art_body *B = calloc((size_t)n, sizeof *B);
        cs_art_joint *J = calloc((size_t)n, sizeof *J);
        cs_workspace *ws = ws_new(n, n);
        const cs_articulated *a = hinge_chain(ws, n, B, J);
        assert_int_equal(a->nnodes, 2 * n);
        assert_int_equal(fill_steps(a, a->order), 0);
        // The same order with a middle node eliminated first: it has two neighbours left.
        int *bad = malloc((size_t)a->nnodes * sizeof(int)), edges = 0;
        const int mid = a->nnodes / 2;
        bad[0] = a->order[mid];
        for (int p = 0, q = 1; p < a->nnodes; p++)
            if (p != mid)
                bad[q++] = a->order[p];
        for (int p = 0; p < a->nnodes; p++) {
            edges += a->parent[p] >= 0;
            assert_true(a->parent[p] < 0 || a->parent[p] > p); // parents after children
        }
        assert_int_equal(edges, 2 * n - 1); // H's off-diagonal blocks (upper): a tree's edges
        assert_true(fill_steps(a, bad) > 0);
        work[t] = a->factor_work;
        print_message("# chain %d: %d nodes, %d off-diagonal blocks in H and in the factor, "
                      "%lld multiply-adds\n",
                      n, a->nnodes, edges, (long long)work[t]);
        free(bad);
        cs_workspace_free(ws);
        free(B), free(J);
    }
    assert_near((double)work[2] / (double)work[1], 10.0, 0.1);
    assert_near((double)work[1] / (double)work[0], 10.0, 0.1 * 10);
}

/* Each row's position error at the bodies' poses, recovered from its target b = -beta e / dt. */
static int row_errors(cs_workspace *ws, const cs_art_body *B, const cs_art_joint *J, double *e) {
    const size_t mark = cs__ws_mark(ws);
    cs_articulated *a;
    assert_int_equal(cs_articulated_factor(&a, ws, 2, B, 1, J, DT, BETA, NULL), CS_CONVERGED);
    cs_art_row rows[6];
    cs_articulated_joint_rows(a, 0, rows);
    const int d = a->rows;
    for (int k = 0; k < d; k++)
        e[k] = -rows[k].b * DT / BETA;
    cs__ws_release(ws, mark);
    return d;
}

/* The drift term is the time derivative of the position error it names: with both bodies
 * pushed off a joint of each kind (1e-3 m, 1e-3 rad) and no other motion, one step moves them
 * so that every row's error becomes (1 - beta) of itself, to first order (the residue, 1e-6 of
 * the error, is the step's second-order term). A sign or lever-arm slip in any error or row
 * breaks this. */
static void drift_term_is_the_rate_of_the_error(void **state) {
    (void)state;
    t_rng r = t_rng_seed(0xd41f7);
    cs_workspace *ws = ws_new(2, 1);
    for (int trial = 0; trial < 40; trial++) {
        const cs_joint_kind kind = kinds[trial % 4];
        const bool world = trial % 8 >= 4;
        cs_body sb[2];
        cs_art_body B[2];
        for (int i = 0; i < 2; i++) {
            double q[4], pos[3];
            random_quat(&r, q);
            for (int k = 0; k < 3; k++)
                pos[k] = t_rng_range(&r, -1, 1);
            sb[i] = (cs_body){.mass = t_rng_range(&r, 0.5, 3),
                              .inertia = {0.3, 0.01, 0, 0.01, 0.2, 0.02, 0, 0.02, 0.25}};
            memcpy(sb[i].pos, pos, sizeof pos);
            memcpy(sb[i].quat, q, sizeof q);
            cs_articulated_body(&B[i], &sb[i]);
        }
        double anchor[3], axis[3];
        random_unit(&r, axis);
        for (int k = 0; k < 3; k++)
            anchor[k] = 0.5 * (sb[0].pos[k] + sb[1].pos[k]);
        cs_art_joint J;
        cs_articulated_joint_capture(&J, kind, 0, world ? -1 : 1, B, anchor, axis);
        // Push both bodies off the joint.
        for (int i = 0; i < 2; i++) {
            double w[3];
            for (int k = 0; k < 3; k++) {
                sb[i].pos[k] += t_rng_range(&r, -1e-3, 1e-3);
                w[k] = t_rng_range(&r, -1e-3, 1e-3);
            }
            quat_step(sb[i].quat, w, 1.0);
            cs_articulated_body(&B[i], &sb[i]);
        }
        double e0[6], e1[6], v[12], lambda[6];
        const int d = row_errors(ws, B, &J, e0);
        const double vstar[12] = {0};
        const size_t mark = cs__ws_mark(ws);
        cs_articulated *a;
        assert_int_equal(cs_articulated_factor(&a, ws, 2, B, 1, &J, DT, BETA, NULL),
                         CS_CONVERGED);
        assert_int_equal(cs_articulated_step(a, ws, vstar, v, lambda, NULL), CS_CONVERGED);
        cs__ws_release(ws, mark);
        for (int i = 0; i < 2; i++) {
            for (int k = 0; k < 3; k++)
                sb[i].pos[k] += DT * v[6 * i + k];
            quat_step(sb[i].quat, v + 6 * i + 3, DT);
            cs_articulated_body(&B[i], &sb[i]);
        }
        row_errors(ws, B, &J, e1);
        const double scale = max_abs(d, e0);
        assert_true(scale > 1e-4);
        for (int k = 0; k < d; k++)
            assert_near(e1[k], (1 - BETA) * e0[k], 1e-3 * scale);
    }
    cs_workspace_free(ws);
}

static int64_t late_clock(void) {
    return 2;
}

/* A deadline already passed stops the factorization and a solve of a 1000-link chain with
 * CS_DEADLINE (the meter is read every CS__METER_UNITS of work); without one, 100 ticks of the
 * same chain (factor and step) allocate nothing. */
static void deadline_stops_and_steps_do_not_allocate(void **state) {
    (void)state;
    enum { N = 1000 };
    cs_art_body *B = calloc(N, sizeof *B);
    cs_art_joint *J = calloc(N, sizeof *J);
    double *vstar = calloc(6 * N, sizeof(double)), *v = calloc(6 * N, sizeof(double));
    double *lambda = calloc(5 * N, sizeof(double));
    cs_workspace *ws = ws_new(N, N);
    const cs_articulated *a = hinge_chain(ws, N, B, J);
    free_motion(N, B, NULL, NULL, NULL, -G, vstar);
    const cs_options late = {.deadline_ns = 1, .clock_ns = late_clock};
    cs__meter m = cs__meter_start(&late);
    assert_int_equal(cs_articulated_solve(a, vstar, 0, NULL, NULL, v, lambda, &m), CS_DEADLINE);
    cs_workspace_free(ws);
    ws = ws_new(N, N);
    m = cs__meter_start(&late);
    cs_articulated *b;
    const size_t base = cs__ws_mark(ws);
    assert_int_equal(cs_articulated_factor(&b, ws, N, B, N, J, DT, BETA, &m), CS_DEADLINE);
    cs__ws_release(ws, base);
    t_alloc_count_start();
    for (int tick = 0; tick < 100; tick++) {
        const size_t mark = cs__ws_mark(ws);
        assert_int_equal(cs_articulated_factor(&b, ws, N, B, N, J, DT, BETA, NULL),
                         CS_CONVERGED);
        assert_int_equal(cs_articulated_step(b, ws, vstar, v, lambda, NULL), CS_CONVERGED);
        cs__ws_release(ws, mark);
    }
    const long allocs = t_alloc_count_stop();
    if (allocs >= 0)
        assert_int_equal(allocs, 0);
    cs_workspace_free(ws);
    free(B), free(J), free(vstar), free(v), free(lambda);
}

/* Bad input is refused: a joint on itself, an unknown kind, a body out of range, dt <= 0. */
static void bad_input_is_refused(void **state) {
    (void)state;
    cs_workspace *ws = ws_new(2, 2);
    static const double q[4] = {1, 0, 0, 0};
    cs_art_body B[2] = {make_body((double[3]){0, 0, 0}, q, 1, 0.1),
                        make_body((double[3]){1, 0, 0}, q, 1, 0.1)};
    cs_art_joint J;
    cs_articulated *a = NULL;
    cs_articulated_joint_capture(&J, CS_JOINT_BALL, 0, 1, B, (double[3]){0.5, 0, 0}, NULL);
    J.ib = 0;
    assert_int_equal(cs_articulated_factor(&a, ws, 2, B, 1, &J, DT, BETA, NULL), CS_EINPUT);
    J.ib = 2;
    assert_int_equal(cs_articulated_factor(&a, ws, 2, B, 1, &J, DT, BETA, NULL), CS_EINPUT);
    J.ib = 1;
    J.kind = 0;
    assert_int_equal(cs_articulated_factor(&a, ws, 2, B, 1, &J, DT, BETA, NULL), CS_EINPUT);
    J.kind = CS_JOINT_BALL;
    assert_int_equal(cs_articulated_factor(&a, ws, 2, B, 1, &J, 0, BETA, NULL), CS_EINPUT);
    assert_int_equal(cs_articulated_factor(&a, ws, 3, B, 1, &J, DT, BETA, NULL), CS_ENOSPACE);
    assert_null(a);
    cs_workspace_free(ws);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chains_at_rest_carry_the_weight_below),
        cmocka_unit_test(hinge_turns_and_slider_slides_along_axis_only),
        cmocka_unit_test(random_trees_agree_with_dense_solve),
        cmocka_unit_test(every_block_shape_agrees_with_dense_solve),
        cmocka_unit_test(four_bar_stays_closed),
        cmocka_unit_test(drift_term_is_the_rate_of_the_error),
        cmocka_unit_test(chain_order_has_no_fill_and_linear_work),
        cmocka_unit_test(deadline_stops_and_steps_do_not_allocate),
        cmocka_unit_test(bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
