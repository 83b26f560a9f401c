/* SPDX-License-Identifier: MIT */
/* Baraff 1996's linear-time claim, measured against peers in the same run: hinge chains of
 * N = 10, 50, 200, 1000 links (rods of random mass along x, random hinge axes near y, random
 * joint rates, gravity) hanging from the world, and the same chains with the tip tied to the
 * world by a ball joint (one loop), solved by
 *   baraff            cs_articulated_factor + cs_articulated_step: one tick of the joints (rows
 *                     at the poses, order, sparsefactor, sparsesolve), velocity level
 *   baraff-solve      cs_articulated_solve alone on the factored system (sparsesolve: what each
 *                     further right-hand side of section 8 costs)
 *   dense-lu          LAPACK dgetrf + dgetrs on the dense H of the same rows, N <= 200
 *   dense-chol        LAPACK dpotrf + dpotrs on the dense J M^-1 J^T of the same rows (the
 *                     issue's baseline; both dense systems are formed untimed)
 *   kdl-vereshchagin  KDL's constrained forward dynamics (kdl_peer.h): joint accelerations of
 *                     the open chain from q, qdot, acceleration level
 *   kdl-rne           KDL's recursive Newton-Euler inverse dynamics: joint torques for given
 *                     accelerations (a simpler problem)
 *   mujoco            MuJoCo's mj_forward (mujoco_peer.h) on the open chain
 *   baraff-loop       baraff on the chain with the tip-world ball joint (anticipated, section 8)
 *   kdl-vereshchagin-loop  Vereshchagin with the tip's linear acceleration held by three
 *                     end-effector constraints: that ball joint at the acceleration level
 *   mujoco-loop       mj_forward with that ball joint as an equality connect: a soft
 *                     constraint, a different formulation from the rigid rows of baraff-loop
 * The peers get the chain at its nominal poses (q = 0) and the joint rates; baraff gets the
 * same bodies with poses disturbed by 1e-4 m so its drift term is live, and the body velocities
 * those rates give (v*: plus gravity over one dt).
 * Checks, untimed, once per chain: baraff's momentum and joint-row residuals below 1e-9 of
 * their scales (the loop's too, and the loop rows' velocity residual in m/s, the loop
 * residual); the dense baselines, while their budget lasts, on v's agreement with baraff; and
 * agreement with the peers where the formulations meet: at rest (zero rates, nominal poses, no
 * drift term) one velocity step of baraff is v = dt a exactly, a the acceleration-level answer
 * (no velocity-product terms exist at rest), so KDL's and MuJoCo's qdd, mapped to body
 * accelerations, must equal baraff's v / dt, and RNE must give zero torques for baraff's joint
 * accelerations (relative to its gravity torques); the same for the loop (KDL's constrained
 * tip against baraff-loop). With rates the two differ by the terms a velocity step leaves out
 * (d/dt J v), so they are not compared there. Joint forces are not compared: KDL returns no
 * reaction wrenches of its hinges, only torques about their axes. MuJoCo's loop is soft: its
 * distance from baraff-loop at rest is shown, not checked.
 * Pools of 256 chains (64 at N = 1000, whose inputs alone exceed L2; fewer MuJoCo models at
 * large N, whose data grows as N^2) are rotated, then timed passes rotate over chains and
 * variants until `repeat` passes or the point's budget. The ratio column is p50 over
 * dense-chol's at the same N (loop rows: over baraff-loop's). Output: a table,
 * <out>/articulated.csv (bench_common.h), <out>/articulated.png (articulated.gp), and the
 * issue's goals with the measured values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "kdl_peer.h"
#include "mujoco_peer.h"
#include "solver/articulated.h"
#include "solver/linalg.h"
#include "solver/workspace.h"
#include "testlib.h"

extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info);
extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info);

#define DT 1e-3
#define BETA 0.2
#define G 9.81
#define DENSE_MAX 200
#define AGREE_TOL 1e-9 /* relative: peers' accelerations against baraff's at rest */
#define LOOP_TOL 1e-10 /* m/s: the loop rows' velocity residual (the goal) */

enum { BARAFF, SOLVE, DENSE_LU, DENSE_CHOL, KDL_HD, KDL_RNE, MUJOCO, BARAFF_LOOP, KDL_HD_LOOP,
       MUJOCO_LOOP, NVAR };
static const char *variant_name[NVAR] = {
    "baraff",      "baraff-solve",          "dense-lu",   "dense-chol",  "kdl-vereshchagin",
    "kdl-rne",     "mujoco",                "baraff-loop", "kdl-vereshchagin-loop",
    "mujoco-loop"};

static bool is_loop(int var) {
    return var >= BARAFF_LOOP;
}

/* The agreement tolerance of a variant: AGREE_TOL; for MuJoCo, whose error grows as n^3 on
 * these chains (1e-12 at 10 links, 8e-6 at 1000) while KDL's recursive solvers hold 1e-13 (its
 * dense factor of the joint-space mass matrix), 1e-13 n^3. */
static double agree_tol(int var, int n) {
    return var == MUJOCO ? 1e-13 * n * n * n : AGREE_TOL;
}

typedef struct chain {
    int n;
    cs_art_body *B, *B0; /* [n] poses disturbed (the timed problem), nominal (agreement) */
    cs_art_joint *J;     /* [n + 1] the hinges, then the tip-world ball joint of the loop */
    double *vstar;       /* [6 n] */
    /* The peers' description (kdl_peer.h) and state: joint angles and rates, accelerations */
    double *mass, *com, *inertia, *axis, *tip, *q, *qd, *qdd;
    kdl_peer *kdl;
    mujoco_peer *mj[2]; /* open, loop */
} chain;

/* Body velocities [6 n] (COM linear, angular) of a chain from joint rates [n] at the nominal
 * poses; at rest the same map takes joint accelerations to body accelerations. */
static void chain_kinematics(const chain *c, const double *rate, double *v) {
    double w[3] = {0}, vj[3] = {0}; // angular velocity so far, velocity of joint i
    for (int i = 0; i < c->n; i++) {
        double x[3];
        for (int k = 0; k < 3; k++)
            w[k] += c->axis[3 * i + k] * rate[i];
        cs_cross3(x, w, c->com + 3 * i);
        for (int k = 0; k < 3; k++)
            v[6 * i + k] = vj[k] + x[k], v[6 * i + 3 + k] = w[k];
        cs_cross3(x, w, c->tip + 3 * i);
        for (int k = 0; k < 3; k++)
            vj[k] += x[k];
    }
}

/* The joint rates [n] of body velocities [6 n]: each hinge's share of the relative angular
 * velocity. */
static void chain_rates(const chain *c, const double *v, double *rate) {
    for (int i = 0; i < c->n; i++) {
        double rel[3];
        for (int k = 0; k < 3; k++)
            rel[k] = v[6 * i + 3 + k] - (i ? v[6 * (i - 1) + 3 + k] : 0);
        rate[i] = cs_dot3(c->axis + 3 * i, rel);
    }
}

/* Chain s of n links along x from the world at the origin: link i from x = i to i + 1. */
static void chain_make(chain *c, int n, uint64_t seed) {
    t_rng r = t_rng_seed(seed);
    const size_t nb = (size_t)n, d = sizeof(double);
    *c = (chain){.n = n, .B = bench_alloc(nb * sizeof(cs_art_body)),
                 .B0 = bench_alloc(nb * sizeof(cs_art_body)),
                 .J = bench_alloc((nb + 1) * sizeof(cs_art_joint)),
                 .vstar = bench_alloc(6 * nb * d), .mass = bench_alloc(nb * d),
                 .com = bench_alloc(3 * nb * d), .inertia = bench_alloc(9 * nb * d),
                 .axis = bench_alloc(3 * nb * d), .tip = bench_alloc(3 * nb * d),
                 .q = bench_alloc(nb * d), .qd = bench_alloc(nb * d), .qdd = bench_alloc(nb * d)};
    for (int i = 0; i < n; i++) {
        const double m = t_rng_range(&r, 0.5, 2);
        cs_body b = {.mass = m, .pos = {i + 0.5, 0, 0}, .quat = {1, 0, 0, 0},
                     .inertia = {1e-3 * m, 0, 0, 0, m / 12, 0, 0, 0, m / 12}};
        cs_articulated_body(&c->B[i], &b);
        c->mass[i] = m;
        c->com[3 * i] = 0.5;
        c->tip[3 * i] = 1;
        memcpy(c->inertia + 9 * i, b.inertia, sizeof(b.inertia));
    }
    for (int i = 0; i < n; i++) {
        double *axis = c->axis + 3 * i;
        axis[0] = t_rng_range(&r, -0.3, 0.3), axis[1] = 1, axis[2] = t_rng_range(&r, -0.3, 0.3);
        const double s = sqrt(cs_dot3(axis, axis));
        for (int k = 0; k < 3; k++)
            axis[k] /= s;
        cs_articulated_joint_capture(&c->J[i], CS_JOINT_HINGE, i, i - 1, c->B,
                                     (double[3]){i, 0, 0}, axis);
    }
    cs_articulated_joint_capture(&c->J[n], CS_JOINT_BALL, n - 1, -1, c->B, (double[3]){n, 0, 0},
                                 NULL);
    memcpy(c->B0, c->B, nb * sizeof(cs_art_body));
    for (int i = 0; i < n; i++)
        c->qd[i] = t_rng_range(&r, -0.1, 0.1);
    chain_kinematics(c, c->qd, c->vstar);
    for (int i = 0; i < n; i++) {
        c->vstar[6 * i + 2] -= G * DT;
        for (int k = 0; k < 3; k++)
            c->B[i].pos[k] += t_rng_range(&r, -1e-4, 1e-4);
    }
}

static void chain_free(chain *c) {
    kdl_peer_free(c->kdl);
    mujoco_peer_free(c->mj[0]);
    mujoco_peer_free(c->mj[1]);
    free(c->B), free(c->B0), free(c->J), free(c->vstar), free(c->mass), free(c->com);
    free(c->inertia), free(c->axis), free(c->tip), free(c->q), free(c->qd), free(c->qdd);
}

/* Worst of the momentum residual |M (v - v*) - J^T lambda| over |M v*| + |lambda| and the row
 * residual |J v - b| over |v| + |b|, both infinity norms. */
static double residual(const cs_articulated *a, const chain *c, const double *v,
                       const double *lambda) {
    const int nb = c->n;
    double *g = bench_alloc(6 * (size_t)nb * sizeof(double));
    double mom = 0, rows = 0, pscale = 0, vscale = 0;
    cs_art_row R[6];
    for (int j = 0; j < a->nj; j++) {
        cs_articulated_joint_rows(a, j, R);
        for (int k = 0; k < a->row_off[j + 1] - a->row_off[j]; k++) {
            const double l = lambda[a->row_off[j] + k];
            double jv = 0;
            for (int i = 0; i < 6; i++) {
                g[6 * R[k].ia + i] += R[k].ja[i] * l;
                jv += R[k].ja[i] * v[6 * R[k].ia + i];
                if (R[k].ib >= 0) {
                    g[6 * R[k].ib + i] += R[k].jb[i] * l;
                    jv += R[k].jb[i] * v[6 * R[k].ib + i];
                }
            }
            rows = fmax(rows, fabs(jv - R[k].b));
            vscale = fmax(vscale, fabs(R[k].b));
            pscale = fmax(pscale, fabs(l));
        }
    }
    for (int i = 0; i < nb; i++) {
        double dv[3], Iw[3], Iws[3];
        for (int k = 0; k < 3; k++) {
            mom = fmax(mom, fabs(c->B[i].mass * (v[6 * i + k] - c->vstar[6 * i + k]) -
                                 g[6 * i + k]));
            pscale = fmax(pscale, fabs(c->B[i].mass * c->vstar[6 * i + k]));
            dv[k] = v[6 * i + 3 + k] - c->vstar[6 * i + 3 + k];
            vscale = fmax(vscale, fmax(fabs(v[6 * i + k]), fabs(v[6 * i + 3 + k])));
        }
        cs_mat3_vec(Iw, c->B[i].iw, dv);
        cs_mat3_vec(Iws, c->B[i].iw, c->vstar + 6 * i + 3);
        for (int k = 0; k < 3; k++) {
            mom = fmax(mom, fabs(Iw[k] - g[6 * i + 3 + k]));
            pscale = fmax(pscale, fabs(Iws[k]));
        }
    }
    free(g);
    return fmax(mom / pscale, rows / vscale);
}

/* The dense system of a factored chain: H (column-major) and [M v*; -b]. */
static int dense_form(const cs_articulated *a, const chain *c, double *H, double *z) {
    const int nb = c->n, N = 6 * nb + a->rows;
    memset(H, 0, (size_t)N * (size_t)N * sizeof(double));
    for (int i = 0; i < nb; i++)
        for (int r = 0; r < 3; r++) {
            H[(size_t)(6 * i + r) * N + 6 * i + r] = c->B[i].mass;
            z[6 * i + r] = c->B[i].mass * c->vstar[6 * i + r];
            z[6 * i + 3 + r] = 0;
            for (int k = 0; k < 3; k++) {
                H[(size_t)(6 * i + 3 + k) * N + 6 * i + 3 + r] = c->B[i].iw[3 * r + k];
                z[6 * i + 3 + r] += c->B[i].iw[3 * r + k] * c->vstar[6 * i + 3 + k];
            }
        }
    cs_art_row R[6];
    for (int j = 0; j < a->nj; j++) {
        cs_articulated_joint_rows(a, j, R);
        for (int k = 0; k < a->row_off[j + 1] - a->row_off[j]; k++) {
            const int row = 6 * nb + a->row_off[j] + k;
            z[row] = -R[k].b;
            for (int i = 0; i < 6; i++) {
                int col = 6 * R[k].ia + i;
                H[(size_t)col * N + row] = H[(size_t)row * N + col] = -R[k].ja[i];
                if (R[k].ib >= 0) {
                    col = 6 * R[k].ib + i;
                    H[(size_t)col * N + row] = H[(size_t)row * N + col] = -R[k].jb[i];
                }
            }
        }
    }
    return N;
}

/* Rows a body of a chain takes part in, at most: two hinges of 5 and a ball of 3. */
#define BODY_ROWS 13

/* The dense A = J M^-1 J^T (column-major [rows x rows]) of a factored chain and z = b - J v*
 * [rows]: A lambda = z gives the joint impulses and v = v* + M^-1 J^T lambda. Each body's
 * inverse mass couples the rows on it. R: scratch [a->rows]. Returns rows. */
static int chol_form(const cs_articulated *a, const chain *c, cs_art_row *R, double *A,
                     double *z) {
    const int nb = c->n, rows = a->rows;
    int *cnt = bench_alloc((size_t)nb * sizeof(int));
    int *idx = bench_alloc((size_t)nb * BODY_ROWS * sizeof(int));
    const double **vec = bench_alloc((size_t)nb * BODY_ROWS * sizeof(double *));
    for (int j = 0; j < a->nj; j++)
        cs_articulated_joint_rows(a, j, R + a->row_off[j]);
    for (int r = 0; r < rows; r++) {
        z[r] = R[r].b;
        const int side[2] = {R[r].ia, R[r].ib};
        for (int s = 0; s < 2; s++) {
            const int i = side[s];
            if (i < 0)
                continue;
            if (cnt[i] == BODY_ROWS) {
                fprintf(stderr, "body %d: more than %d rows\n", i, BODY_ROWS);
                exit(1);
            }
            const double *row = s ? R[r].jb : R[r].ja;
            idx[BODY_ROWS * i + cnt[i]] = r;
            vec[BODY_ROWS * i + cnt[i]++] = row;
            z[r] -= cs_dot3(row, c->vstar + 6 * i) + cs_dot3(row + 3, c->vstar + 6 * i + 3);
        }
    }
    memset(A, 0, (size_t)rows * (size_t)rows * sizeof(double));
    for (int i = 0; i < nb; i++) {
        double inv[9];
        cs_mat3_spd_inverse(inv, c->B[i].iw);
        for (int p = 0; p < cnt[i]; p++) {
            const double *u = vec[BODY_ROWS * i + p];
            double y[6];
            for (int k = 0; k < 3; k++)
                y[k] = u[k] / c->B[i].mass;
            cs_mat3_vec(y + 3, inv, u + 3);
            for (int q = 0; q < cnt[i]; q++) {
                const double *w = vec[BODY_ROWS * i + q];
                A[(size_t)idx[BODY_ROWS * i + p] * rows + idx[BODY_ROWS * i + q]] +=
                    cs_dot3(w, y) + cs_dot3(w + 3, y + 3);
            }
        }
    }
    free(cnt), free(idx), free(vec);
    return rows;
}

/* v = v* + M^-1 J^T lambda for the rows R [rows] of chol_form. v: [6 nb]. */
static void chol_velocity(const chain *c, const cs_art_row *R, int rows, const double *lambda,
                          double *v) {
    double *g = bench_alloc(6 * (size_t)c->n * sizeof(double));
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < 6; k++) {
            g[6 * R[r].ia + k] += R[r].ja[k] * lambda[r];
            if (R[r].ib >= 0)
                g[6 * R[r].ib + k] += R[r].jb[k] * lambda[r];
        }
    for (int i = 0; i < c->n; i++) {
        double inv[9];
        cs_mat3_spd_inverse(inv, c->B[i].iw);
        cs_mat3_vec(v + 6 * i + 3, inv, g + 6 * i + 3);
        for (int k = 0; k < 3; k++) {
            v[6 * i + k] = c->vstar[6 * i + k] + g[6 * i + k] / c->B[i].mass;
            v[6 * i + 3 + k] += c->vstar[6 * i + 3 + k];
        }
    }
    free(g);
}

static double max_abs(const double *x, int n) {
    double m = 0;
    for (int i = 0; i < n; i++)
        m = isfinite(x[i]) ? fmax(m, fabs(x[i])) : INFINITY;
    return m;
}

/* max |x - y| / max |y| over n values. */
static double rel_diff(const double *x, const double *y, int n) {
    double d = 0;
    for (int i = 0; i < n; i++)
        d = isfinite(x[i]) ? fmax(d, fabs(x[i] - y[i])) : INFINITY;
    return d / max_abs(y, n);
}

/* Largest |row . v - b| of joint j (m/s or rad/s). */
static double joint_row_residual(const cs_articulated *a, int j, const double *v) {
    cs_art_row R[6];
    cs_articulated_joint_rows(a, j, R);
    double res = 0;
    for (int k = 0; k < a->row_off[j + 1] - a->row_off[j]; k++) {
        double jv = cs_dot3(R[k].ja, v + 6 * R[k].ia) + cs_dot3(R[k].ja + 3, v + 6 * R[k].ia + 3);
        if (R[k].ib >= 0)
            jv += cs_dot3(R[k].jb, v + 6 * R[k].ib) + cs_dot3(R[k].jb + 3, v + 6 * R[k].ib + 3);
        res = fmax(res, fabs(jv - R[k].b));
    }
    return res;
}

/* One factor + step of bodies with joints; v, lambda out. Returns the step's status. */
static cs_status baraff_step(cs_workspace *ws, const chain *c, const cs_art_body *B, int nj,
                             double beta, const double *vstar, double *v, double *lambda,
                             cs_articulated **ret) {
    cs_status st = cs_articulated_factor(ret, ws, c->n, B, nj, c->J, DT, beta, NULL);
    if (st == CS_CONVERGED)
        st = cs_articulated_step(*ret, ws, vstar, v, lambda, NULL);
    return st;
}

/* Agreement at rest (see the file's head) of chain c's peers with baraff, into cell [NVAR];
 * then the peers' state back to c's rates, and c->qdd. Scratch: acc, acc2 [6 n], lambda
 * [5 n + 3], q [n]. */
static void agree_at_rest(cs_workspace *ws, chain *c, bench_cell *cell, double *acc,
                          double *acc2, double *lambda, double *q) {
    const int n = c->n;
    double *vrest = bench_alloc(6 * (size_t)n * sizeof(double));
    double *zero = bench_alloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        vrest[6 * i + 2] = -G * DT;
    for (int loop = 0; loop < 2; loop++) {
        const size_t mark = cs__ws_mark(ws);
        cs_articulated *art;
        const bool ok = baraff_step(ws, c, c->B0, n + loop, 0, vrest, acc, lambda, &art) ==
                        CS_CONVERGED;
        cs__ws_release(ws, mark);
        for (int i = 0; i < 6 * n; i++)
            acc[i] /= DT;
        mujoco_peer *mj = c->mj[loop];
        if (mj) {
            mujoco_peer_load(mj, c->q, zero);
            const int warn = mujoco_peer_forward(mj, q);
            chain_kinematics(c, q, acc2);
            const double e = ok ? rel_diff(acc2, acc, 6 * n) : INFINITY;
            // The soft loop is not checked: its row shows the distance alone.
            bench_cell_add(&cell[loop ? MUJOCO_LOOP : MUJOCO], 0,
                           warn == 0 && (loop || e <= agree_tol(MUJOCO, n)), e);
            mujoco_peer_load(mj, c->q, c->qd);
        }
        if (!c->kdl)
            continue;
        kdl_peer_load(c->kdl, c->q, zero);
        int err = kdl_peer_forward(c->kdl, loop, q);
        chain_kinematics(c, q, acc2);
        double e = ok && err == 0 ? rel_diff(acc2, acc, 6 * n) : INFINITY;
        bench_cell_add(&cell[loop ? KDL_HD_LOOP : KDL_HD], 0, e <= AGREE_TOL, e);
        if (loop)
            continue;
        // RNE: baraff's joint accelerations need no torque, against the gravity torques.
        double *tau = acc2, *tau0 = acc2 + n;
        chain_rates(c, acc, q);
        err = kdl_peer_inverse(c->kdl, q, tau) | kdl_peer_inverse(c->kdl, zero, tau0);
        e = ok && err == 0 ? max_abs(tau, n) / max_abs(tau0, n) : INFINITY;
        bench_cell_add(&cell[KDL_RNE], 0, e <= AGREE_TOL, e);
    }
    if (c->kdl) {
        kdl_peer_load(c->kdl, c->q, c->qd);
        kdl_peer_forward(c->kdl, false, c->qdd);
    }
    free(vrest), free(zero);
}

typedef struct point_out {
    bench_row row[NVAR]; /* samples 0: not run */
    int64_t best[NVAR];  /* fastest sample: what preemption on a shared machine cannot inflate */
    double loop_res;     /* worst loop-row residual of baraff-loop, m/s */
} point_out;

/* Pool sizes: chains, and chains with peer models (MuJoCo's data grows as N^2). */
static int pool_size(int n, bool quick) {
    return quick ? 4 : n >= 1000 ? 64 : 256;
}
static int mujoco_pool(int n, int pool) {
    return n >= 1000 ? 2 : n >= 200 ? 16 : pool;
}

/* Runs one N: pool, untimed checked pass, timed passes. */
static void run_point(int n, const bench_args *a, FILE *csv, point_out *out) {
    const int pool = pool_size(n, a->quick), mjpool = mujoco_pool(n, pool);
    chain *ch = bench_alloc((size_t)pool * sizeof(chain));
    const double g[3] = {0, 0, -G};
    char err[512];
    for (int p = 0; p < pool; p++) {
        chain *c = &ch[p];
        chain_make(c, n, 0xa871c00ull + 7919ull * (uint64_t)n + (uint64_t)p);
        c->kdl = kdl_peer_new(n, c->mass, c->com, c->inertia, c->axis, c->tip, g);
        if (c->kdl)
            kdl_peer_load(c->kdl, c->q, c->qd);
        for (int l = 0; l < 2 && p < mjpool && mujoco_peer_is_built(); l++) {
            c->mj[l] = mujoco_peer_new(n, c->mass, c->com, c->inertia, c->axis, c->tip, g, DT,
                                       l, err, sizeof err);
            if (!c->mj[l])
                fprintf(stderr, "mujoco: %s\n", err);
            else
                mujoco_peer_load(c->mj[l], c->q, c->qd);
        }
    }
    cs_workspace *ws = cs_workspace_new(&(cs_limits){.max_bodies = n, .max_joints = n + 1});
    if (!ws) {
        fprintf(stderr, "no workspace for %d links\n", n);
        exit(1);
    }
    const bool dense = n <= DENSE_MAX;
    const int N = 6 * n + 5 * n, rows = 5 * n;
    double *H = dense ? bench_alloc((size_t)N * (size_t)N * sizeof(double)) : NULL;
    double *A = bench_alloc((size_t)rows * (size_t)rows * sizeof(double));
    cs_art_row *R = bench_alloc((size_t)rows * sizeof(cs_art_row));
    double *z = bench_alloc((size_t)N * sizeof(double));
    int *ipiv = bench_alloc((size_t)N * sizeof(int));
    double *v = bench_alloc(6 * (size_t)n * sizeof(double));
    double *v2 = bench_alloc(6 * (size_t)n * sizeof(double));
    double *lambda = bench_alloc(6 * ((size_t)n + 1) * sizeof(double));
    double *qdd = bench_alloc((size_t)n * sizeof(double));
    bench_cell cell[NVAR] = {0};
    const int one = 1;
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    // Untimed pass: every chain once per variant, checked (the dense baselines while their
    // budget lasts: at N = 200 one LU takes a good fraction of a second).
    for (int p = 0; p < pool; p++) {
        const size_t mark = cs__ws_mark(ws);
        cs_articulated *art;
        bool ok = baraff_step(ws, &ch[p], ch[p].B, n, BETA, ch[p].vstar, v, lambda, &art) ==
                  CS_CONVERGED;
        double res = ok ? residual(art, &ch[p], v, lambda) : INFINITY;
        bench_cell_add(&cell[BARAFF], 0, ok && res <= 1e-9, res);
        bench_cell_add(&cell[SOLVE], 0, ok && res <= 1e-9, res);
        if (dense && ok && cell[DENSE_LU].spent_ns <= budget) {
            dense_form(art, &ch[p], H, z);
            int info;
            const int64_t t0 = bench_now_ns();
            dgetrf_(&N, &N, H, &N, ipiv, &info);
            dgetrs_("N", &N, &one, H, &N, ipiv, z, &N, &info);
            cell[DENSE_LU].spent_ns += bench_now_ns() - t0;
            const double e = rel_diff(z, v, 6 * n);
            bench_cell_add(&cell[DENSE_LU], 0, info == 0 && e <= 1e-9, e);
        }
        if (ok && cell[DENSE_CHOL].spent_ns <= budget) {
            chol_form(art, &ch[p], R, A, z);
            int info;
            const int64_t t0 = bench_now_ns();
            dpotrf_("L", &rows, A, &rows, &info);
            if (info == 0)
                dpotrs_("L", &rows, &one, A, &rows, z, &rows, &info);
            cell[DENSE_CHOL].spent_ns += bench_now_ns() - t0;
            chol_velocity(&ch[p], R, rows, z, v2);
            const double e = rel_diff(v2, v, 6 * n);
            bench_cell_add(&cell[DENSE_CHOL], 0, info == 0 && e <= 1e-9, e);
        }
        cs__ws_release(ws, mark);
        ok = baraff_step(ws, &ch[p], ch[p].B, n + 1, BETA, ch[p].vstar, v, lambda, &art) ==
             CS_CONVERGED;
        res = ok ? residual(art, &ch[p], v, lambda) : INFINITY;
        const double loop = ok ? joint_row_residual(art, n, v) : INFINITY;
        out->loop_res = fmax(out->loop_res, loop);
        bench_cell_add(&cell[BARAFF_LOOP], 0, ok && res <= 1e-9 && loop <= LOOP_TOL, res);
        cs__ws_release(ws, mark);
        agree_at_rest(ws, &ch[p], cell, v, v2, lambda, qdd);
    }
    // Timed passes, variants in rotating order; a variant past its budget stops once it has a
    // sample.
    for (int var = 0; var < NVAR; var++)
        cell[var].spent_ns = 0;
    for (int rep = 0; rep < a->repeat; rep++) {
        bool any = false;
        for (int p = 0; p < pool; p++)
            for (int s = 0; s < NVAR; s++) {
                const int var = (s + rep + p) % NVAR;
                bench_cell *c = &cell[var];
                chain *h = &ch[p];
                const bool have = var == DENSE_LU      ? dense
                                  : var == KDL_HD      ? h->kdl != NULL
                                  : var == KDL_RNE     ? h->kdl != NULL
                                  : var == KDL_HD_LOOP ? h->kdl != NULL
                                  : var == MUJOCO      ? h->mj[0] != NULL
                                  : var == MUJOCO_LOOP ? h->mj[1] != NULL
                                                       : true;
                if (!have || (c->t.n > 0 && c->spent_ns > budget))
                    continue;
                any = true;
                const size_t mark = cs__ws_mark(ws);
                cs_articulated *art;
                int64_t t0 = 0, t = 0;
                int info;
                switch (var) {
                case BARAFF:
                case BARAFF_LOOP:
                    t0 = bench_now_ns();
                    baraff_step(ws, h, h->B, var == BARAFF ? n : n + 1, BETA, h->vstar, v,
                                lambda, &art);
                    t = bench_now_ns() - t0;
                    break;
                case SOLVE:
                    cs_articulated_factor(&art, ws, n, h->B, n, h->J, DT, BETA, NULL);
                    t0 = bench_now_ns();
                    cs_articulated_solve(art, h->vstar, 0, NULL, NULL, v, lambda, NULL);
                    t = bench_now_ns() - t0;
                    break;
                case DENSE_LU:
                    cs_articulated_factor(&art, ws, n, h->B, n, h->J, DT, BETA, NULL);
                    dense_form(art, h, H, z);
                    t0 = bench_now_ns();
                    dgetrf_(&N, &N, H, &N, ipiv, &info);
                    dgetrs_("N", &N, &one, H, &N, ipiv, z, &N, &info);
                    t = bench_now_ns() - t0;
                    break;
                case DENSE_CHOL:
                    cs_articulated_factor(&art, ws, n, h->B, n, h->J, DT, BETA, NULL);
                    chol_form(art, h, R, A, z);
                    t0 = bench_now_ns();
                    dpotrf_("L", &rows, A, &rows, &info);
                    dpotrs_("L", &rows, &one, A, &rows, z, &rows, &info);
                    t = bench_now_ns() - t0;
                    break;
                case KDL_HD:
                case KDL_HD_LOOP:
                    t0 = bench_now_ns();
                    kdl_peer_forward(h->kdl, var == KDL_HD_LOOP, qdd);
                    t = bench_now_ns() - t0;
                    break;
                case KDL_RNE:
                    t0 = bench_now_ns();
                    kdl_peer_inverse(h->kdl, h->qdd, qdd);
                    t = bench_now_ns() - t0;
                    break;
                default: // MUJOCO, MUJOCO_LOOP
                    t0 = bench_now_ns();
                    mujoco_peer_forward(h->mj[var == MUJOCO_LOOP], qdd);
                    t = bench_now_ns() - t0;
                    break;
                }
                cs__ws_release(ws, mark);
                bench_samples_push(&c->t, t);
                bench_samples_push(&c->solve, t);
                c->spent_ns += t;
            }
        if (!any)
            break;
    }
    char scene[2][32];
    snprintf(scene[0], sizeof scene[0], "hinge-chain-%d", n);
    snprintf(scene[1], sizeof scene[1], "hinge-loop-%d", n);
    for (int var = 0; var < NVAR; var++)
        out->row[var] = bench_cell_row(&cell[var], "articulated", variant_name[var],
                                       scene[is_loop(var)], n);
    for (int var = 0; var < NVAR; var++) {
        bench_row *r = &out->row[var];
        const bench_row *base = &out->row[is_loop(var) ? BARAFF_LOOP : DENSE_CHOL];
        if (r->t.samples == 0)
            continue;
        r->ratio_p50 = base->t.samples ? (double)r->t.p50 / (double)base->t.p50 : 0;
        bench_table_row(r);
        bench_csv_row(csv, r);
        out->best[var] = cell[var].t.v[0]; // sorted by bench_cell_row
    }
    for (int var = 0; var < NVAR; var++)
        bench_cell_free(&cell[var]);
    for (int p = 0; p < pool; p++)
        chain_free(&ch[p]);
    free(ch), free(H), free(A), free(R), free(z), free(ipiv), free(v), free(v2), free(lambda);
    free(qdd);
    cs_workspace_free(ws);
}

/* Prints the goal measured <= limit as MET or MISSED (%g: residuals far below 1e-3 too), or
 * that a variant it needs did not run. */
static void goal(const char *what, double measured, double limit, const char *unit, bool ran) {
    if (ran)
        printf("target: %-46s %10.3g %-3s (<= %g): %s\n", what, measured, unit, limit,
               measured <= limit ? "MET" : "MISSED");
    else
        printf("target: %-46s not measured (peer not built)\n", what);
}

static double p50_ratio(const point_out *o, int x, int y) {
    return (double)o->row[x].t.p50 / (double)o->row[y].t.p50;
}

int main(int argc, char **argv) {
    const bench_args a = bench_parse(argc, argv,
                                     "Baraff's linear-time joints on hinge chains of 10 .. 1000 "
                                     "links against KDL, MuJoCo and dense baselines; writes "
                                     "articulated.csv and articulated.png to --out or "
                                     "$CONTACTD_BENCH_OUT.\n",
                                     20);
    bench_header(stdout, "articulated", &a);
    printf("# times: baraff = rows + order + sparsefactor + sparsesolve (one velocity-level tick "
           "of the joints);\n"
           "#   baraff-solve = one sparsesolve; dense-lu = dgetrf + dgetrs of H; dense-chol = "
           "dpotrf + dpotrs of J M^-1 J^T;\n"
           "#   kdl-vereshchagin = ChainHdSolver_Vereshchagin (acceleration level; -loop: tip "
           "held); kdl-rne = ChainIdSolver_RNE\n"
           "#   (torques for given accelerations); mujoco = mj_forward (dense joint-space factor; "
           "the loop as a soft\n"
           "#   equality connect, solref/solimp defaults: a different formulation from "
           "baraff-loop's rigid rows); n: links\n"
           "# kdl %s, mujoco %s. residual: peers' body accelerations at rest against baraff's "
           "v/dt (tolerance %g;\n"
           "#   mujoco 1e-13 n^3); kdl-rne: torques for baraff's accelerations over the gravity "
           "torques; mujoco-loop: unchecked\n",
           kdl_peer_is_built() ? "built" : "not built",
           mujoco_peer_is_built() ? "built" : "not built", AGREE_TOL);
    FILE *csv = bench_csv_open(&a, "articulated");
    static const int ns[4] = {10, 50, 200, 1000};
    const int np = a.quick ? 2 : 4;
    point_out out[4] = {0};
    bench_table_header();
    for (int i = 0; i < np; i++)
        run_point(ns[i], &a, csv, &out[i]);
    fclose(csv);
    bench_plot(&a, CONTACTD_BENCH_DIR "/articulated.gp", "articulated.csv", "articulated.png");

    // The goals, reported, never asserted. Ratios of the fastest samples too: on a
    // loaded machine a longer call is preempted mid-way more often than a shorter one, which
    // inflates the median of the slower variant and of the longest chains.
    printf("\n");
    char what[80];
    for (int i = 0; i < np; i++) {
        const bool kdl = out[i].row[KDL_HD].t.samples > 0;
        snprintf(what, sizeof what, "baraff / kdl-vereshchagin, N = %d, median", ns[i]);
        goal(what, kdl ? p50_ratio(&out[i], BARAFF, KDL_HD) : 0, 1, "", kdl);
        snprintf(what, sizeof what, "baraff / kdl-vereshchagin, N = %d, fastest", ns[i]);
        goal(what, kdl ? (double)out[i].best[BARAFF] / (double)out[i].best[KDL_HD] : 0, 1, "",
             kdl);
        snprintf(what, sizeof what, "baraff / kdl-rne, N = %d, median", ns[i]);
        goal(what, kdl ? p50_ratio(&out[i], BARAFF, KDL_RNE) : 0, 2, "", kdl);
        snprintf(what, sizeof what, "baraff / kdl-rne, N = %d, fastest", ns[i]);
        goal(what, kdl ? (double)out[i].best[BARAFF] / (double)out[i].best[KDL_RNE] : 0, 2, "",
             kdl);
    }
    if (np == 4)
        for (int var = BARAFF; var <= SOLVE; var++) {
            const double r1 = (double)out[2].row[var].t.p50 / (double)out[1].row[var].t.p50;
            const double r2 = (double)out[3].row[var].t.p50 / (double)out[2].row[var].t.p50;
            snprintf(what, sizeof what, "%s t(200)/t(50), median", variant_name[var]);
            goal(what, r1, 4.5, "", true);
            snprintf(what, sizeof what, "%s t(1000)/t(200), median", variant_name[var]);
            goal(what, r2, 6, "", true);
            snprintf(what, sizeof what, "%s t(200)/t(50), fastest", variant_name[var]);
            goal(what, (double)out[2].best[var] / (double)out[1].best[var], 4.5, "", true);
            snprintf(what, sizeof what, "%s t(1000)/t(200), fastest", variant_name[var]);
            goal(what, (double)out[3].best[var] / (double)out[2].best[var], 6, "", true);
        }
    double loop = 0;
    for (int i = 0; i < np; i++)
        loop = fmax(loop, out[i].loop_res);
    goal("baraff-loop loop-row residual, worst", loop, LOOP_TOL, "m/s", true);
    for (int i = 1; i < np; i++) {
        snprintf(what, sizeof what, "baraff / dense-chol, N = %d, median", ns[i]);
        goal(what, out[i].row[BARAFF].ratio_p50, 1, "", true);
    }
    static const int agree[4] = {KDL_HD, KDL_RNE, KDL_HD_LOOP, MUJOCO};
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < np; i++) {
            const bench_row *r = &out[i].row[agree[k]];
            snprintf(what, sizeof what, "at rest: %s, N = %d", variant_name[agree[k]], ns[i]);
            goal(what, r->residual, agree_tol(agree[k], ns[i]), "", r->problems > 0);
        }
    return 0;
}
