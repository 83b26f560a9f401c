/* SPDX-License-Identifier: MIT */
/* Implicit nonlinear complementarity (Todorov 2010), on the Delassus form u = W lambda + b.
 *
 * UNITS. The solver works on a copy scaled per contact (scale_problem()): W' = S W S, b' = S b,
 * impulses f = S f', so that no contact's diagonal of W lies far from 1 (on the caller's W itself
 * when every diagonal is near enough, S = I); residuals are measured in the caller's units.
 *
 * THE PROBLEM. Per contact i, impulse f = (f_n, f_t) and velocity v = (v_n, v_t) with
 * f_n >= 0 perp v_n >= 0 (eq. 6, the bias already in b: the paper's eq. 11 with its b = 0),
 * |f_t| <= mu f_n, and f_t = -mu f_n v_t / |v_t| when v_t != 0 (eq. 7), coupled by
 * v = W f + b (eq. 1).
 *
 * THE MAPS. One unconstrained x = (x_n, x_t) per contact encodes both (eqs. 10, 12, 13):
 *     f_n = max(0, -x_n),  s = min(1, mu f_n / |x_t|),  f_t = -s x_t,  v = f + x  (eq. 14),
 * so every x satisfies the contact law, and the problem is the root of
 *     r(x) = (W - I) f(x) - x + b                                                   (eq. 15).
 * Per contact x lies in one of three regions: break (x_n >= 0: f = 0), stick (|x_t| <=
 * -mu x_n: f = -x, v = 0) and slip (f on the cone's surface, v_t parallel to x_t). f is linear in
 * the first two; on the boundaries (the plane x_n = 0 and the cone |x_t| = -mu x_n, the
 * "edges") r is not differentiable.
 *
 * THE ALGORITHM. Gauss-Newton on l = |r|^2 / 2 (section III-A), with J = W D - V, D = df/dx and
 * V = D + I block diagonal (3 x 3 per contact):
 *  - Jacobian on an edge (section III-B, eqs. 25, 26): with d the edge's normal into side 1,
 *    delta_1 = r^T J_1 d and delta_2 = -r^T J_2 d. When either is negative the side of steeper
 *    descent gives the block; else the edge is active and the block is the blend
 *    (delta_2 J_1 + delta_1 J_2) / (delta_1 + delta_2), and trial points are projected back
 *    onto that edge (section III-D; the cone's projection in closed form).
 *  - Newton point. While the model is trusted (LM's lambda at its floor) and no edge is
 *    active: the plain Newton step J dx = -r, solved as ((W + reg I) D - V) dx = -r with reg
 *    max(1e-10, 1e-3 res) of W's scale (rank-deficient W; res the relative residual: a
 *    regularized Newton step, short along W's near-null directions until r is small): cheaper
 *    than J^T J (separating contacts, D = 0, are eliminated; Cholesky when every other contact
 *    sticks, else LU). Otherwise the paper's
 *    Levenberg-Marquardt point with H = J^T J + lambda I restricted to the edges' tangent
 *    spaces (eq. 28): x_N = x + B xi, (B^T H B) xi = -B^T g, B block diagonal (I, or on an
 *    active edge 2 orthonormal columns: x_n fixed on the plane; on the cone its generator x_k
 *    and (0, -x_t2, x_t1); eq. 29 prints the generator as (mu x_1, x_2, x_3), which is not
 *    tangent unless mu = 1); H is formed once per iteration (a rejected x_N is solved again with
 *    the larger lam from it). x_N is taken when l falls by at least half of what the model l +
 *    g^T e + e^T H e / 2 predicts (eq. 23); lambda then drops 1000-fold (with a singular J,
 *    redundant contacts, any lambda left in place makes the convergence linear).
 *  - A refused plain Newton point x_N some of whose contacts lie in other regions than at x (the
 *    step crossed edges): the plain Newton point at x for x_N's regions, each contact's f and
 *    block from its region there continued to x (near an edge, the generalized Jacobian's
 *    element from the side the step entered), taken when l falls by 1e-3 of it. Measured on 860
 *    stacks: 4472 iterations, not 4720 (a slip contact whose answer sticks nears the cone from
 *    outside by a constant fraction an iteration while x's own formulas continued across
 *    predict nothing). Not after a refused LM point, a short step that says little of the
 *    Newton step's regions: 11 of 919 such points succeeded on random scenes with redundant
 *    contacts, none of 28 on FCLIB's Capsules (each a factorization of order 860).
 *  - Otherwise: a rejected plain Newton point is first searched along x -> x_N (it starts
 *    downhill, g^T dx = -|r|^2 but for reg): its edge crossings as below, then backtracking
 *    from x_N (Armijo); failing that lambda grows, x_N becomes the LM point of it, and
 *    the dogleg x -> x_C -> x_N is searched, x_C the Cauchy point (eq. 24). Each leg is cut where
 *    a contact crosses an edge (section III-C; eq. 27 for the cone), those points are tried (so
 *    the search can stop on an edge), and in each piece the minimum of the parabola through its
 *    ends and middle (the paper uses a cubic).
 *  - Restarts (section V-A's recovery from local minima, which redundant contacts make common):
 *    after 3 iterations that lower l by less than 5 % each, x restarts from projected
 *    Gauss-Seidel sweeps on the current f (2^k max(20, 3 nc) at the k-th, k capped at 4; as
 *    many restarts as the iteration cap allows); the best iterate is kept and returned. Such a
 *    minimum sits in a valley along W's null space (loads of redundant contacts traded against
 *    each other at unchanged velocities), along which the Gauss-Newton step, orthogonal to J's
 *    null space, does not move; l is flat or rising along the valley until a contact unloads
 *    and it collapses. Gauss-Seidel drifts along it at a steady rate per sweep.
 *  - Restart from a pivoting answer (the model path, cs_ncp_solve): where Gauss-Newton stalls a
 *    second time (the sweeps did not get it out), has used three quarters of its iterations or
 *    ends at a local minimum, it starts once more, with the iterations left, from the answer of
 *    Dantzig's pivoting on the friction pyramid (cs_dantzig_solve_bounded). Gauss-Newton and the
 *    sweeps only ever see l near the iterate; which contacts slide, stick or separate is a
 *    combinatorial choice, and the pyramid's answer makes it as the cone's does but near region
 *    boundaries (its polygon lies within cos(pi / d) of the cone). Measured on 3241 random
 *    scenes with redundant contacts, seeds 1..4000: from the pivoting answer of the 61 that
 *    ended unconverged cold (before the sweeps and the switched Newton points above), Gauss-
 *    Newton converged on 52 within 50 iterations, 34 of them within 10; with the restart 15 of
 *    3241 end unconverged, not 52, and they cost 0.41 of the instructions (seeds 1..1000: the
 *    unconverged took most). The better of the two answers by residual is returned.
 * Start: the warm start's x = (W lambda0 + b) - lambda0, exact for an unchanged problem, or the
 * paper's stick assumption (section III-F) v = 0, f = -(W + reg I)^-1 b, x = -f: for the
 * small reg used that is W's minimum-norm solution, so coplanar contacts share a load evenly.
 * When that start is far worse than no impulse at all (gaps, separating contacts), Gauss-Seidel
 * sweeps from f = 0 start instead.
 *
 * TERMINATION. Every accepted step lowers l, a restart may raise it (the best iterate is kept);
 * at most max_iterations iterations, each with at most three factorizations and line searches of
 * at most 3 (3 CROSS_MAX + 2) + BACKTRACK_MAX evaluations, and a restart of at most
 * 16 max(20, 3 nc) sweeps per STALL_ITS iterations; on the model path at most one pivoting
 * solve (its own cap, 4 p (p + 1) + 8 pivots for p its unknowns). No descent with lambda at its
 * cap: a local minimum, CS_RAY.
 *
 * DEADLINE. Read before each iteration and, through a meter, inside the products with W and the
 * factorizations (deadline.h); the pivoting solve of the restart reads it itself. At the deadline
 * the best iterate is returned (CS_DEADLINE): every iterate satisfies each contact's law exactly
 * (the maps above), and its residual (15) says how far the coupling v = W f + b is from holding;
 * cs_step sends it labelled, with its certificate. Before the first iterate was evaluated there
 * is none (cs_ncp_info.no_iterate), and cs_step falls back. */
#include "solver/ncp.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "solver/dantzig.h"
#include "solver/deadline.h"
#include "solver/linalg.h"
#include "solver/simd.h"
#include "solver/sap_core.h"
#include "solver/warmstart.h"
#include "solver/workspace.h"

extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *beta,
                   double *c, const int *ldc);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info);

#define TOL_DEFAULT 1e-10
#define MAX_IT_DEFAULT 50
/* Tikhonov term of the stick start and the plain Newton point, relative to max diag W: small
 * enough that a step is exact to ~1e-10 on the stiff directions of a rank-deficient W, large
 * enough that W + reg I factors (rounding in a Cholesky of W is ~1e-16 of its scale). */
#define REG 1e-10
/* The plain Newton point's Tikhonov term grows with the residual: max(REG, PROX res) max diag
 * W, res the relative residual (regularized Newton for singular problems: a term ~ |r| keeps the
 * local convergence superlinear, Li, Fukushima, Qi and Yamashita 2004). It keeps the step short
 * along W's near-null directions, which the residual barely sees: without it that step, about
 * |r| over J's smallest singular value, ran far along a curved valley (slipping contacts near
 * the cone whose friction turns while redundant loads trade against each other) and was refused.
 * Measured on 4-box stacks and random redundant scenes: PROX from 1e-4 to 3e-3 all help, 1e-3
 * the most; 1e-2 and above slow the convergence. */
#define PROX 1e-3
/* Backtracking along a refused plain Newton step: at most BACKTRACK_MAX evaluations, each step
 * cut to a fraction in [0.1, 0.5] of the last (Armijo's sufficient decrease ARMIJO). */
#define BACKTRACK_MAX 10
#define ARMIJO 1e-4
/* Levenberg-Marquardt's lam, relative to max diag J^T J: the plain Newton point is taken while
 * lam <= LM_PLAIN (the model trusted); a rejection raises lam to at least LM_RESTART; at LM_MAX
 * the step is a gradient step of 1e-8 of its scale. */
#define LM_MIN 1e-12
#define LM_PLAIN 1e-9
#define LM_RESTART 1e-6
#define LM_MAX 1e8
/* Stall: STALL_ITS iterations in a row that lower l by less than STALL_DROP of it (measured: a
 * crawl into a local minimum lowers it by ~1e-3 an iteration, a converging run by > 0.5). Then
 * a restart from max(PGS_SWEEPS, n) Gauss-Seidel sweeps, doubled at each restart up to
 * PGS_DOUBLINGS times. A sweep costs n^2, an iteration's factorization ~n^3, so n sweeps cost
 * about one iteration: the restarts keep that share of a solve at any size. With a fixed 20
 * (320 at most) FCLIB's Capsules files (n 858 and 888, W of rank 570 and 584) stalled for 200
 * iterations at 5e-7 and 9e-9: Gauss-Seidel unloads the contacts that must carry nothing only
 * after ~3000 sweeps (Capsules-i125 from f = 0: 1.6e-6 of a 5e-3 load a sweep). Restarts are
 * not counted otherwise: each one follows STALL_ITS iterations, so max_iterations bounds them. */
#define STALL_DROP 0.05
#define STALL_ITS 3
#define PGS_SWEEPS 20
#define PGS_DOUBLINGS 4
/* Units: each contact's mean diagonal of W is brought into [1 / SCALE_BAND, SCALE_BAND] (see
 * scale_problem()); W in the caller's units is left alone inside that band. */
#define SCALE_BAND 10.0
/* The paper's acceptance: actual decrease >= half the predicted one. */
#define ACCEPT 0.5
/* A contact within this fraction of its |x| of an edge is on it (the line search puts points
 * on edges to rounding, ~1e-16). */
#define EDGE_TOL 1e-12
/* Edge crossings kept per dogleg leg (one per bin of equal width), which bounds its cost. */
#define CROSS_MAX 8
/* Orders from which LAPACK's blocked dgetrf and BLAS's dsyrk beat the plain kernels (cf.
 * sap_core.c's Cholesky threshold, measured on the CI machine), when no deadline must be kept. */
#define LU_LAPACK_MIN 384

enum { BREAK = 0, STICK = 1, SLIP = 2 };
enum { EDGE_NONE = 0, EDGE_PLANE = 1, EDGE_CONE = 2 };

typedef struct ncp {
    int nc, n, ldw;
    const double *W, *b, *mu; /* the scaled problem: S W S and S b in Ws, bs (ldw = n), or the
                               * caller's W (its ldw) and b when S = I */
    double *Ws, *bs;       /* [n x n], [n] their storage */
    double *s;             /* [nc] each contact's scale: f = s f', v = v' / s */
    double lam;            /* absolute damping */
    double *K;             /* [n x n] Newton matrix of the active contacts, factor in place */
    double *Jb;            /* [n x m] J B, J restricted to the edges' tangent spaces (eq. 28),
                            * then [m x m] B^T J^T J B (lower triangle) */
    int hm;                /* order of the H in Jb for the current x; -1: none yet */
    double *B;             /* [9 nc] each contact's tangent basis, columns (3 or 2 used) */
    double reg;            /* Tikhonov term of the stick start (rank-deficient W) */
    double wscale;         /* largest diagonal of W' */
    double *x, *f, *r;     /* [n] iterate, f(x), r(x) */
    double *xn, *ft, *rt;  /* [n] Newton point and its f, r */
    double *a, *g;         /* [n] W^T r, J^T r */
    double *dx, *y, *z;    /* [n] step; D times a vector; W times that */
    double *rhs;           /* [n] compressed right-hand side */
    double *je;            /* [n] J e */
    double *xc, *xb, *xt;  /* [n] Cauchy point, best and trial point of the line search */
    double *xbest;         /* [n] lowest l so far (a restart may leave it) */
    double *D, *V;         /* [9 nc] row-major blocks */
    double *Ds, *Vs, *rs;  /* [9 nc], [9 nc], [n]: D, V and r of the regions a refused trial
                            * point lies in (switched_point) */
    double *cross;         /* [CROSS_MAX] crossing parameters of a leg */
    int *cross_id;         /* [CROSS_MAX] contact 2 k + (cone ? 1 : 0) */
    int *act;              /* [nc] contacts with D != 0 */
    int *piv;              /* [n] */
    int *kend;             /* [n] K's Cholesky column ends (cs__sap_chol) */
    int *wcols;            /* [n] the columns a product with W takes (w_mul) */
    int *nbr, *nbr_start;  /* [nc^2], [nc + 1]: each contact's coupled ones (W's non-zero 3 x 3
                            * blocks in its columns), listed by the first sweep (pgs); the
                            * sweeps read those blocks packed into K */
    double *gs;            /* [2 nc] each contact's sweep steps: its normal row's, its pair's */
    bool nbr_listed;
    unsigned char *edge;   /* [nc] active edge of each contact */
    unsigned char *stick;  /* [nc] pure stick block (D = -I, V = 0) */
    unsigned char *nbas;   /* [nc] columns of each contact's tangent basis B (3, or 2 on an edge) */
    cs__meter meter;
} ncp;

/* Lays P's arrays out from base (NULL: only counts). Returns the bytes. */
static size_t layout(ncp *P, unsigned char *base, int nc) {
    const size_t n = 3 * (size_t)nc;
    size_t off = 0;
#define TAKE(field, count)                                                                       \
    (P->field = (void *)(base ? base + off : NULL),                                              \
     off += cs__ws_bytes((size_t)(count) * sizeof *P->field))
    TAKE(Ws, n * n), TAKE(bs, n), TAKE(s, nc);
    TAKE(K, n * n), TAKE(Jb, n * n), TAKE(B, 9 * (size_t)nc);
    TAKE(x, n), TAKE(f, n), TAKE(r, n), TAKE(xn, n), TAKE(ft, n), TAKE(rt, n);
    TAKE(a, n), TAKE(g, n), TAKE(dx, n), TAKE(y, n), TAKE(z, n), TAKE(rhs, n), TAKE(je, n);
    TAKE(xc, n), TAKE(xb, n), TAKE(xt, n), TAKE(xbest, n);
    TAKE(D, 9 * (size_t)nc), TAKE(V, 9 * (size_t)nc);
    TAKE(Ds, 9 * (size_t)nc), TAKE(Vs, 9 * (size_t)nc), TAKE(rs, n);
    TAKE(cross, CROSS_MAX), TAKE(cross_id, CROSS_MAX);
    TAKE(act, nc), TAKE(piv, n), TAKE(kend, n), TAKE(wcols, n), TAKE(edge, nc),
        TAKE(stick, nc), TAKE(nbas, nc);
    TAKE(nbr, (size_t)nc * nc), TAKE(nbr_start, nc + 1), TAKE(gs, 2 * (size_t)nc);
#undef TAKE
    return off;
}

size_t cs_ncp_delassus_size(int nc) {
    ncp P;
    return layout(&P, NULL, nc);
}

/* ---- the maps (eqs. 10, 12, 13) --------------------------------------------------------- */

/* Whether hypot(t1, t2) <= r is certain without computing it (most contacts stick, in the maps
 * and in a sweep alike): the squares' rounding (a few ulps) lies far inside the margin, and a
 * radius whose square is not a normal number is left to hypot. */
static inline bool inside_disc(double t1, double t2, double r) {
    const double r2 = r * r;
    return r2 >= DBL_MIN && t1 * t1 + t2 * t2 < r2 * (1 - 1e-12);
}

/* fmax(acc, v) for an accumulator acc that is not NaN (a NaN v leaves acc), inline: libm's is a
 * call per entry in the loops over n. */
static inline double max_acc(double acc, double v) {
    return v > acc ? v : acc;
}

static void contact_force(double mu, const double *x, double *f) {
    const double fn = x[0] < 0 ? -x[0] : 0;
    // Inside the cone: stick, f_t = -x_t; outside, scaled onto it (t > mu fn >= 0 there).
    double s = 1;
    if (!inside_disc(x[1], x[2], mu * fn)) {
        const double t = hypot(x[1], x[2]);
        s = t <= mu * fn ? 1 : mu * fn / t;
    }
    f[0] = fn;
    f[1] = -s * x[1];
    f[2] = -s * x[2];
}

static inline int region_of(double mu, const double *x) {
    if (x[0] >= 0)
        return BREAK;
    // mu = 0 slides everywhere: f_t is identically zero, and so is its derivative.
    return mu > 0 && (inside_disc(x[1], x[2], -mu * x[0]) || hypot(x[1], x[2]) <= -mu * x[0])
               ? STICK
               : SLIP;
}

/* D = df/dx and V = D + I of region at x (the region's formula, continued up to its edges). */
static void blocks(int region, double mu, const double *x, double *D, double *V) {
    memset(D, 0, 9 * sizeof(double));
    if (region == STICK) {
        D[0] = D[4] = D[8] = -1;
    } else if (region == SLIP) {
        // f_t = mu x_n t_hat: d/dx_n = mu t_hat, d/dx_t = -s (I - t_hat t_hat^T).
        const double t = hypot(x[1], x[2]);
        const double h1 = t > 0 ? x[1] / t : 0, h2 = t > 0 ? x[2] / t : 0;
        const double s = t > 0 ? mu * fmax(0.0, -x[0]) / t : 0;
        D[0] = -1;
        D[3] = mu * h1, D[4] = -s * (1 - h1 * h1), D[5] = s * h1 * h2;
        D[6] = mu * h2, D[7] = s * h1 * h2, D[8] = -s * (1 - h2 * h2);
    }
    for (int k = 0; k < 9; k++)
        V[k] = D[k] + (k % 4 == 0);
}

/* Whether block D is the pure stick block -I (the Newton matrix is then symmetric). */
static inline bool is_stick(const double *D) {
    return D[0] == -1 && D[4] == -1 && D[8] == -1 && D[1] == 0 && D[2] == 0 && D[3] == 0 &&
           D[5] == 0 && D[6] == 0 && D[7] == 0;
}

/* Columns per meter count of a product of k columns of n rows: all k where their work reads no
 * clock, else about CS__METER_UNITS of work, a multiple of four (the kernels' groups of columns,
 * so that a product taken in such chunks rounds as one taken whole): at a session's limits one
 * product is hundreds of us, too long to go unread. */
static int meter_columns(const cs__meter *m, int n, int k) {
    if (cs__meter_fits(m, (int64_t)k * n))
        return k > 0 ? k : 1;
    const int c = CS__METER_UNITS / (n > 0 ? n : 1) / 4 * 4;
    return c > 4 ? c : 4;
}

/* dst = src, both m x m (leading dimension m), through the meter some columns at a time. True
 * when the deadline passed (dst unusable). */
static bool copy_metered(ncp *P, int m, const double *src, double *dst) {
    const int chunk = meter_columns(&P->meter, m, m);
    for (int q = 0; q < m; q += chunk) {
        const int kq = cs__chunk_len(q, chunk, m);
        memcpy(dst + (size_t)q * m, src + (size_t)q * m, (size_t)kq * m * sizeof(double));
        if (cs__meter_add(&P->meter, (int64_t)kq * m))
            return true;
    }
    return false;
}

/* out = W y over the columns where y is non-zero (separating contacts add nothing). Stops when
 * the deadline passes (out then unusable: the caller checks P->meter.passed). */
static void w_mul(ncp *P, const double *y, double *out) {
    int k = 0;
    for (int j = 0; j < P->n; j++)
        if (y[j] != 0)
            P->wcols[k++] = j;
    memset(out, 0, (size_t)P->n * sizeof(double));
    const int chunk = meter_columns(&P->meter, P->n, k);
    for (int q = 0; q < k && !P->meter.passed; q += chunk) {
        const int kq = cs__chunk_len(q, chunk, k);
        cs__gaxpy_cols(P->n, P->W, P->ldw, P->wcols + q, kq, y, out);
        if (cs__meter_add(&P->meter, (int64_t)kq * P->n))
            return;
    }
}

/* f = f(x), r = r(x) (eq. 15); returns l = |r|^2 / 2 and *ret_res = the relative residual, both
 * infinite (not known) when the deadline passed during the product with W, and both NaN when r
 * has a NaN entry (an iterate gone non-finite is never below a tolerance). */
static double eval(ncp *P, const double *x, double *f, double *r, double *ret_res) {
    for (int i = 0; i < P->nc; i++)
        contact_force(P->mu[i], x + 3 * i, f + 3 * i);
    w_mul(P, f, r);
    if (P->meter.passed) {
        if (ret_res)
            *ret_res = INFINITY;
        return INFINITY;
    }
    // The measure in the caller's units: r = r' / s, W f = (W' f') / s, b = b' / s.
    double scale = 0, rmax = 0, l = 0;
    for (int i = 0; i < P->n; i++) {
        const double si = P->s[i / 3];
        const double ri = fabs(r[i]), bi = fabs(P->b[i]);
        scale = max_acc(scale, max_acc(bi, ri) / si);
        r[i] += P->b[i] - f[i] - x[i];
        rmax = max_acc(rmax, fabs(r[i]) / si);
        l += r[i] * r[i];
    }
    // A NaN entry of r, which the maxima drop, makes l NaN.
    if (ret_res)
        *ret_res = l != l ? l : scale > 0 ? rmax / scale : rmax;
    return l / 2;
}

/* out = J e = W (D e) - V e. */
static void j_mul(ncp *P, const double *e, double *out) {
    for (int k = 0; k < P->nc; k++)
        cs_mat3_vec(P->y + 3 * k, P->D + 9 * k, e + 3 * k);
    w_mul(P, P->y, out);
    for (int k = 0; k < P->nc; k++) {
        double ve[3];
        cs_mat3_vec(ve, P->V + 9 * k, e + 3 * k);
        for (int c = 0; c < 3; c++)
            out[3 * k + c] -= ve[c];
    }
}

static double dot(int n, const double *u, const double *v) {
    // Four partial sums: one sum waits on each addition's latency.
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += u[i] * v[i];
        s1 += u[i + 1] * v[i + 1];
        s2 += u[i + 2] * v[i + 2];
        s3 += u[i + 3] * v[i + 3];
    }
    for (; i < n; i++)
        s0 += u[i] * v[i];
    return (s0 + s1) + (s2 + s3);
}

/* out[q] = A(:, q)^T v for q < k (A column-major, leading dimension lda): four columns at a
 * time against one pass over v, two rows at a time. */
static void gemv_t(int n, int k, const double *A, int lda, const double *v, double *out) {
    int q = 0;
    for (; q + 4 <= k; q += 4) {
        const double *c0 = A + (size_t)q * lda, *c1 = c0 + lda, *c2 = c1 + lda, *c3 = c2 + lda;
        cs__v2 s0 = {0, 0}, s1 = {0, 0}, s2 = {0, 0}, s3 = {0, 0};
        int i = 0;
        for (; i + 2 <= n; i += 2) {
            const cs__v2 x = cs__ld2(v + i);
            s0 += cs__ld2(c0 + i) * x;
            s1 += cs__ld2(c1 + i) * x;
            s2 += cs__ld2(c2 + i) * x;
            s3 += cs__ld2(c3 + i) * x;
        }
        double t0 = s0[0] + s0[1], t1 = s1[0] + s1[1], t2 = s2[0] + s2[1], t3 = s3[0] + s3[1];
        for (; i < n; i++) {
            t0 += c0[i] * v[i];
            t1 += c1[i] * v[i];
            t2 += c2[i] * v[i];
            t3 += c3[i] * v[i];
        }
        out[q] = t0, out[q + 1] = t1, out[q + 2] = t2, out[q + 3] = t3;
    }
    for (; q < k; q++)
        out[q] = dot(n, A + (size_t)q * lda, v);
}

/* out = d0 w0 + d1 w1 + d2 w2 over n rows, two at a time (each row's products and sums in that
 * order). */
static void comb3(int n, const double *w0, const double *w1, const double *w2, double d0,
                  double d1, double d2, double *out) {
    const cs__v2 v0 = {d0, d0}, v1 = {d1, d1}, v2 = {d2, d2};
    int i = 0;
    for (; i + 2 <= n; i += 2)
        cs__st2(out + i, cs__ld2(w0 + i) * v0 + cs__ld2(w1 + i) * v1 + cs__ld2(w2 + i) * v2);
    for (; i < n; i++)
        out[i] = d0 * w0[i] + d1 * w1[i] + d2 * w2[i];
}

/* ---- the Jacobian and its edges (section III-B) ------------------------------------------ */

/* r^T J d for contact k's column block with blocks (D, V): a_k^T D d - r_k^T V d. */
static double edge_slope(const double *ak, const double *rk, const double *D, const double *V,
                         const double d[3]) {
    double Dd[3], Vd[3];
    cs_mat3_vec(Dd, D, d);
    cs_mat3_vec(Vd, V, d);
    return cs_dot3(ak, Dd) - cs_dot3(rk, Vd);
}

/* out[q] = A(:, q)^T v for q < k as gemv_t, through the meter some columns at a time. True when
 * the deadline passed (out unusable). */
static bool gemv_t_metered(ncp *P, int n, int k, const double *A, int lda, const double *v,
                           double *out) {
    const int chunk = meter_columns(&P->meter, n, k);
    for (int q = 0; q < k; q += chunk) {
        const int kq = cs__chunk_len(q, chunk, k);
        gemv_t(n, kq, A + (size_t)q * lda, lda, v, out + q);
        if (cs__meter_add(&P->meter, (int64_t)kq * n))
            return true;
    }
    return false;
}

/* D, V, the active edges and g = J^T r at P->x (r current). True when the deadline passed (they
 * are then unusable). */
static bool linearize(ncp *P) {
    const int n = P->n;
    P->hm = -1;
    // a = W^T r, one dot product per column.
    if (gemv_t_metered(P, n, n, P->W, P->ldw, P->r, P->a))
        return true;
    for (int k = 0; k < P->nc; k++) {
        const double *x = P->x + 3 * k, mu = P->mu[k];
        double *D = P->D + 9 * k, *V = P->V + 9 * k;
        const double t = hypot(x[1], x[2]), tol = EDGE_TOL * (fabs(x[0]) + t);
        int side1 = -1, side2 = -1;
        double d[3] = {0};
        P->edge[k] = EDGE_NONE;
        if (fabs(x[0]) <= tol) {
            // The plane: break above; below, stick at the apex, else slip (f_n = 0 there).
            side1 = BREAK, side2 = mu > 0 && t == 0 ? STICK : SLIP;
            d[0] = 1;
        } else if (x[0] < 0 && mu > 0 && t > 0 && fabs(t + mu * x[0]) <= tol) {
            // The cone: slip outside (normal (mu, t_hat) / |.|), stick inside.
            side1 = SLIP, side2 = STICK;
            const double c = 1 / sqrt(1 + mu * mu);
            d[0] = mu * c, d[1] = x[1] / t * c, d[2] = x[2] / t * c;
        }
        if (side1 < 0) {
            blocks(region_of(mu, x), mu, x, D, V);
        } else {
            double D1[9], V1[9], D2[9], V2[9];
            blocks(side1, mu, x, D1, V1);
            blocks(side2, mu, x, D2, V2);
            const double d1 = edge_slope(P->a + 3 * k, P->r + 3 * k, D1, V1, d);
            const double d2 = -edge_slope(P->a + 3 * k, P->r + 3 * k, D2, V2, d);
            if (d1 < 0 || d2 < 0) {
                // l falls off the edge: the side of steeper descent.
                memcpy(D, d1 <= d2 ? D1 : D2, sizeof D1);
                memcpy(V, d1 <= d2 ? V1 : V2, sizeof V1);
            } else {
                // Active edge: eq. 26, the element of the sub-differential with g in the edge.
                const double w1 = d1 + d2 > 0 ? d2 / (d1 + d2) : 0.5, w2 = 1 - w1;
                for (int q = 0; q < 9; q++) {
                    D[q] = w1 * D1[q] + w2 * D2[q];
                    V[q] = w1 * V1[q] + w2 * V2[q];
                }
                P->edge[k] = side2 == STICK && side1 == SLIP ? EDGE_CONE : EDGE_PLANE;
            }
        }
        P->stick[k] = is_stick(D);
        // g_k = D^T a_k - V^T r_k.
        for (int c = 0; c < 3; c++)
            P->g[3 * k + c] = D[c] * P->a[3 * k] + D[3 + c] * P->a[3 * k + 1] +
                              D[6 + c] * P->a[3 * k + 2] - V[c] * P->r[3 * k] -
                              V[3 + c] * P->r[3 * k + 1] - V[6 + c] * P->r[3 * k + 2];
    }
    return false;
}

/* Puts the contacts with an active edge back on it (section III-D): the plane's x_n = 0; the
 * cone's nearest point, in the plane of (x_n, |x_t|) the projection on the ray (-1, mu). */
static void project_edges(const ncp *P, double *x) {
    for (int k = 0; k < P->nc; k++) {
        double *xk = x + 3 * k;
        if (P->edge[k] == EDGE_PLANE) {
            xk[0] = 0;
        } else if (P->edge[k] == EDGE_CONE) {
            const double mu = P->mu[k], t = hypot(xk[1], xk[2]), c = 1 / sqrt(1 + mu * mu);
            const double p = fmax(0.0, (-xk[0] + mu * t) * c);
            if (t > 0) {
                xk[0] = -p * c;
                xk[1] *= mu * p * c / t;
                xk[2] *= mu * p * c / t;
            }
        }
    }
}

/* The point *p, its f and r in ft and rt, becomes the iterate: buffers swapped, not copied. */
static void take_point(ncp *P, double **p) {
    double *t;
    t = P->x, P->x = *p, *p = t;
    t = P->f, P->f = P->ft, P->ft = t;
    t = P->r, P->r = P->rt, P->rt = t;
}

/* x_N = x + dx, kept on the active edges. */
static void trial_point(ncp *P) {
    for (int i = 0; i < P->n; i++)
        P->xn[i] = P->x[i] + P->dx[i];
    project_edges(P, P->xn);
}

/* ---- the Newton point -------------------------------------------------------------------- */

/* Solves the system of K (order m, factored in place) for rhs; symmetric: Cholesky, else LU.
 * Returns 0, -1 (singular) or 1 (deadline). */
static int factor_solve(ncp *P, int m, bool symmetric, double *rhs) {
    if (symmetric) {
        const int c = cs__sap_chol(m, P->K, P->kend, &P->meter);
        if (c != 0)
            return c;
        cs__sap_chol_solve(m, P->K, P->kend, 1, rhs, &P->meter);
    } else if (m >= LU_LAPACK_MIN && !cs__meter_armed(&P->meter)) {
        int info = 0, one = 1;
        dgetrf_(&m, &m, P->K, &m, P->piv, &info);
        if (info != 0)
            return -1;
        dgetrs_("N", &m, &one, P->K, &m, P->piv, rhs, &m, &info);
    } else {
        double growth;
        const int c = cs_lu_factor(m, P->K, m, P->piv, &growth, &P->meter);
        if (c != 0)
            return c;
        cs_lu_solve(m, P->K, m, P->piv, rhs, &P->meter);
    }
    return P->meter.passed ? 1 : 0;
}

/* dx from ((W + lam I) D - V) dx = -r over the contacts with D != 0; the others (D = 0, V = I)
 * then have dx_k = r_k + (W D dx)_k. lam: the Tikhonov term (see PROX). Returns factor_solve()'s
 * code. */
static int newton(ncp *P, double lam) {
    int na = 0;
    bool symmetric = true;
    for (int k = 0; k < P->nc; k++) {
        const double *D = P->D + 9 * k;
        bool zero = true;
        for (int q = 0; q < 9; q++)
            zero = zero && D[q] == 0;
        if (!zero) {
            P->act[na++] = k;
            symmetric = symmetric && P->stick[k];
        }
    }
    const int m = 3 * na;
    for (int q = 0; q < na; q++) {
        const int j = P->act[q];
        const double *Dj = P->D + 9 * j, *Vj = P->V + 9 * j;
        const double *w0 = P->W + (size_t)3 * j * P->ldw, *w1 = w0 + P->ldw, *w2 = w1 + P->ldw;
        for (int c = 0; c < 3; c++) {
            double *col = P->K + (size_t)(3 * q + c) * m;
            if (symmetric) {
                // Every active contact sticks: K = W_AA + lam I, rhs r (the sign folded in).
                const double *w = c == 0 ? w0 : c == 1 ? w1 : w2;
                for (int p = 0; p < na; p++)
                    for (int l = 0; l < 3; l++)
                        col[3 * p + l] = w[3 * P->act[p] + l];
                col[3 * q + c] += lam;
            } else {
                const double d0 = Dj[c], d1 = Dj[3 + c], d2 = Dj[6 + c];
                if (na == P->nc) {
                    // No contact separates: whole columns.
                    comb3(m, w0, w1, w2, d0, d1, d2, col);
                } else {
                    for (int p = 0; p < na; p++)
                        for (int l = 0; l < 3; l++) {
                            const int i = 3 * P->act[p] + l;
                            col[3 * p + l] = d0 * w0[i] + d1 * w1[i] + d2 * w2[i];
                        }
                }
                for (int l = 0; l < 3; l++)
                    col[3 * q + l] += lam * Dj[3 * l + c] - Vj[3 * l + c];
            }
        }
        if (cs__meter_add(&P->meter, 3 * (int64_t)m))
            return 1;
    }
    for (int q = 0; q < na; q++)
        for (int l = 0; l < 3; l++)
            P->rhs[3 * q + l] = symmetric ? P->r[3 * P->act[q] + l] : -P->r[3 * P->act[q] + l];
    const int s = factor_solve(P, m, symmetric, P->rhs);
    if (s != 0)
        return s;
    memset(P->dx, 0, (size_t)P->n * sizeof(double));
    for (int q = 0; q < na; q++)
        for (int l = 0; l < 3; l++)
            P->dx[3 * P->act[q] + l] = P->rhs[3 * q + l];
    for (int k = 0; k < P->nc; k++)
        cs_mat3_vec(P->y + 3 * k, P->D + 9 * k, P->dx + 3 * k);
    w_mul(P, P->y, P->z);
    if (P->meter.passed)
        return 1;
    for (int k = 0; k < P->nc; k++) {
        const double *D = P->D + 9 * k;
        bool zero = true;
        for (int q = 0; q < 9; q++)
            zero = zero && D[q] == 0;
        if (zero)
            for (int l = 0; l < 3; l++)
                P->dx[3 * k + l] = P->r[3 * k + l] + P->z[3 * k + l];
    }
    return 0;
}

/* The Newton point at x for the regions x_N lies in (x_N refused, some of its contacts in other
 * regions than at x: the step crossed edges): each contact's f and blocks from its region at
 * x_N, the formulas continued to x (blocks(): f_n = -x_n and f_t = mu x_n t_hat for slip), and
 * the plain Newton step on the r of those formulas. Near an edge this is the generalized
 * Jacobian's element from the side the step entered; the iterate's own side, continued across,
 * predicts nothing there (a slip contact whose answer sticks nears the cone from outside by a
 * constant fraction an iteration). The point lands in xb with f, r in ft, rt; dx is x_N - x again
 * on return. Returns l there and its relative residual in *ret_res, or INFINITY when x_N's
 * regions are x's or the system is singular (P->meter.passed: the deadline). */
static double switched_point(ncp *P, double res, double *ret_res) {
    const int n = P->n;
    bool changed = false;
    for (int k = 0; k < P->nc && !changed; k++)
        changed = region_of(P->mu[k], P->xn + 3 * k) != region_of(P->mu[k], P->x + 3 * k);
    if (!changed)
        return INFINITY;
    for (int k = 0; k < P->nc; k++) {
        const double *x = P->x + 3 * k, mu = P->mu[k];
        const int region = region_of(mu, P->xn + 3 * k);
        blocks(region, mu, x, P->Ds + 9 * k, P->Vs + 9 * k);
        double *f = P->ft + 3 * k;
        if (region == BREAK) {
            f[0] = f[1] = f[2] = 0;
        } else if (region == STICK) {
            f[0] = -x[0], f[1] = -x[1], f[2] = -x[2];
        } else {
            const double t = hypot(x[1], x[2]);
            f[0] = -x[0];
            f[1] = t > 0 ? mu * x[0] * x[1] / t : 0;
            f[2] = t > 0 ? mu * x[0] * x[2] / t : 0;
        }
    }
    // r of those formulas, (W - I) f - x + b (eq. 15).
    w_mul(P, P->ft, P->rs);
    if (P->meter.passed)
        return INFINITY;
    for (int i = 0; i < n; i++)
        P->rs[i] += P->b[i] - P->ft[i] - P->x[i];
    double *t;
    t = P->D, P->D = P->Ds, P->Ds = t;
    t = P->V, P->V = P->Vs, P->Vs = t;
    t = P->r, P->r = P->rs, P->rs = t;
    for (int k = 0; k < P->nc; k++)
        P->stick[k] = is_stick(P->D + 9 * k);
    const int c = newton(P, fmax(REG, PROX * res) * P->wscale);
    t = P->D, P->D = P->Ds, P->Ds = t;
    t = P->V, P->V = P->Vs, P->Vs = t;
    t = P->r, P->r = P->rs, P->rs = t;
    for (int k = 0; k < P->nc; k++)
        P->stick[k] = is_stick(P->D + 9 * k);
    double l = INFINITY;
    if (c == 0) {
        for (int i = 0; i < n; i++)
            P->xb[i] = P->x[i] + P->dx[i];
        l = eval(P, P->xb, P->ft, P->rt, ret_res);
    }
    for (int i = 0; i < n; i++)
        P->dx[i] = P->xn[i] - P->x[i];
    return l;
}

/* B^T J^T J B of eq. 28 at P->x into P->Jb (lower triangle, order P->hm), with B the tangent
 * spaces of the active edges (orthonormal blocks: x_n fixed on the plane; on the cone its
 * generator x_k and the circle's direction (0, -x_t2, x_t1)), I elsewhere. J B is formed in
 * P->Jb first and H in P->K, then copied over J B, which is no longer needed: an iteration whose
 * LM point is rejected solves again with a larger lam without forming H again. Returns 0 or 1
 * (deadline). */
static int lm_hessian(ncp *P) {
    const int n = P->n;
    int m = 0;
    for (int k = 0; k < P->nc; k++) {
        const double *xk = P->x + 3 * k, *D = P->D + 9 * k, *V = P->V + 9 * k;
        double *Bk = P->B + 9 * k; // columns e_c = Bk + 3 c
        int nb = 3;
        memset(Bk, 0, 9 * sizeof(double));
        if (P->edge[k] == EDGE_PLANE) {
            nb = 2;
            Bk[0] = 0, Bk[1] = 1, Bk[2] = 0, Bk[3] = 0, Bk[4] = 0, Bk[5] = 1;
        } else if (P->edge[k] == EDGE_CONE) {
            const double nx = sqrt(cs_dot3(xk, xk)), t = hypot(xk[1], xk[2]);
            Bk[0] = xk[0] / nx, Bk[1] = xk[1] / nx, Bk[2] = xk[2] / nx;
            Bk[3] = 0, Bk[4] = -xk[2] / t, Bk[5] = xk[1] / t, nb = 2;
        } else {
            Bk[0] = Bk[4] = Bk[8] = 1;
        }
        const double *w0 = P->W + (size_t)3 * k * P->ldw, *w1 = w0 + P->ldw, *w2 = w1 + P->ldw;
        for (int c = 0; c < nb; c++) {
            // Column J e = W (D e) - V e, the V part on contact k's rows only.
            double de[3], ve[3];
            cs_mat3_vec(de, D, Bk + 3 * c);
            cs_mat3_vec(ve, V, Bk + 3 * c);
            double *col = P->Jb + (size_t)m * n;
            comb3(n, w0, w1, w2, de[0], de[1], de[2], col);
            for (int l = 0; l < 3; l++)
                col[3 * k + l] -= ve[l];
            m++;
        }
        P->nbas[k] = (unsigned char)nb;
        if (cs__meter_add(&P->meter, 3 * (int64_t)n))
            return 1;
    }
    // Large and with no deadline to keep: BLAS (the loops below took 80 % of a solve of the
    // 286-contact FCLIB Capsules file, m ~ 860).
    if (m >= LU_LAPACK_MIN && !cs__meter_armed(&P->meter)) {
        const double one = 1, zero = 0;
        dsyrk_("L", "T", &m, &n, &one, P->Jb, &n, &zero, P->K, &m);
    } else {
        for (int j = 0; j < m; j++) {
            const double *cj = P->Jb + (size_t)j * n;
            if (gemv_t_metered(P, n, m - j, P->Jb + (size_t)j * n, n, cj,
                               P->K + (size_t)j * m + j))
                return 1;
        }
    }
    if (copy_metered(P, m, P->K, P->Jb))
        return 1;
    P->hm = m;
    return 0;
}

/* The Levenberg-Marquardt point of eq. 28: dx = B xi, (B^T (J^T J + lam I) B) xi = -B^T g, H and
 * B from lm_hessian() (formed when this linearization has none yet). lam is relative to the
 * largest diagonal of J^T J, which *ret_lam returns absolute. Returns factor_solve()'s code. */
static int lm_point(ncp *P, double lam, double *ret_lam) {
    if (P->hm < 0 && lm_hessian(P) != 0)
        return 1;
    const int m = P->hm;
    if (copy_metered(P, m, P->Jb, P->K))
        return 1;
    // rhs = -(J B)^T r = -B^T g.
    for (int k = 0, q = 0; k < P->nc; k++)
        for (int c = 0; c < P->nbas[k]; c++, q++)
            P->rhs[q] = -cs_dot3(P->B + 9 * k + 3 * c, P->g + 3 * k);
    double hmax = 0;
    for (int j = 0; j < m; j++)
        hmax = fmax(hmax, P->K[(size_t)j * m + j]);
    const double la = lam * (hmax > 0 ? hmax : 1);
    for (int j = 0; j < m; j++)
        P->K[(size_t)j * m + j] += la;
    *ret_lam = la;
    const int s = factor_solve(P, m, true, P->rhs);
    if (s != 0)
        return s;
    // dx = B xi.
    for (int k = 0, q = 0; k < P->nc; k++) {
        const double *Bk = P->B + 9 * k;
        for (int l = 0; l < 3; l++)
            P->dx[3 * k + l] = 0;
        for (int c = 0; c < P->nbas[k]; c++, q++)
            for (int l = 0; l < 3; l++)
                P->dx[3 * k + l] += Bk[3 * c + l] * P->rhs[q];
    }
    return 0;
}

/* l(x) - (model at x + e) of eq. 23: -(g^T e + |J e|^2 / 2 + lam |e|^2 / 2). je: J e. */
static double predicted(const ncp *P, const double *e, const double *je, double lam) {
    double ge = 0, jj = 0, ee = 0;
    for (int i = 0; i < P->n; i++) {
        ge += P->r[i] * je[i];
        jj += je[i] * je[i];
        ee += e[i] * e[i];
    }
    return -(ge + jj / 2 + lam * ee / 2);
}

/* ---- the dogleg search (section III-C) --------------------------------------------------- */

/* Parameters in (0, 1) where contact k's x(alpha) = p + alpha u crosses the plane or the cone
 * (eq. 27), kept one per bin of width 1 / CROSS_MAX (the first in each), in increasing order.
 * Returns how many. */
static int crossings(ncp *P, const double *p, const double *u) {
    for (int q = 0; q < CROSS_MAX; q++)
        P->cross[q] = -1;
    for (int k = 0; k < P->nc; k++) {
        const double *pk = p + 3 * k, *uk = u + 3 * k, mu = P->mu[k];
        double al[3];
        int type[3], na = 0;
        if (pk[0] != 0 && uk[0] != 0)
            al[na] = -pk[0] / uk[0], type[na++] = 0;
        if (mu > 0) {
            // mu^2 (p_n + alpha u_n)^2 = |p_t + alpha u_t|^2.
            const double A = mu * mu * uk[0] * uk[0] - uk[1] * uk[1] - uk[2] * uk[2];
            const double B = 2 * (mu * mu * pk[0] * uk[0] - pk[1] * uk[1] - pk[2] * uk[2]);
            const double C = mu * mu * pk[0] * pk[0] - pk[1] * pk[1] - pk[2] * pk[2];
            const double disc = B * B - 4 * A * C;
            if (A != 0 && disc >= 0) {
                // The stable pair of roots.
                const double q = -0.5 * (B + copysign(sqrt(disc), B));
                if (q != 0)
                    al[na] = C / q, type[na++] = 1;
                al[na] = q / A, type[na++] = 1;
            } else if (A == 0 && B != 0) {
                al[na] = -C / B, type[na++] = 1;
            }
        }
        for (int e = 0; e < na; e++) {
            const double a = al[e];
            // Only the lower nappe (x_n < 0) is an edge; 1e-12: a start on the edge itself.
            if (!(a > 1e-12 && a < 1 - 1e-12) || (type[e] && pk[0] + a * uk[0] >= 0))
                continue;
            const int bin = (int)(a * CROSS_MAX);
            if (P->cross[bin] < 0 || a < P->cross[bin])
                P->cross[bin] = a, P->cross_id[bin] = 2 * k + type[e];
        }
    }
    int nk = 0;
    for (int q = 0; q < CROSS_MAX; q++)
        if (P->cross[q] >= 0) {
            P->cross[nk] = P->cross[q];
            P->cross_id[nk++] = P->cross_id[q];
        }
    return nk;
}

/* Tries p + alpha u (with contact id put exactly on its edge, id >= 0); keeps it in xb when it
 * beats *best. Returns l there. */
static double try_point(ncp *P, const double *p, const double *u, double alpha, int id,
                        double *best) {
    for (int i = 0; i < P->n; i++)
        P->xt[i] = p[i] + alpha * u[i];
    if (id >= 0) {
        const int k = id / 2;
        double *xk = P->xt + 3 * k;
        if (id % 2 == 0) {
            xk[0] = 0;
        } else {
            const double mu = P->mu[k], t = hypot(xk[1], xk[2]);
            if (t > 0 && xk[0] < 0) {
                // Onto the cone along x_t's direction: |x_t| = -mu x_n.
                xk[1] *= -mu * xk[0] / t;
                xk[2] *= -mu * xk[0] / t;
            }
        }
    }
    const double l = eval(P, P->xt, P->ft, P->rt, NULL);
    if (l < *best) {
        *best = l;
        memcpy(P->xb, P->xt, (size_t)P->n * sizeof(double));
    }
    return l;
}

/* Searches the segment p -> p + u: its edge crossings (each put exactly on its edge), and in
 * each piece between them the minimum of the parabola through the piece's ends and middle.
 * lp: l at p. Lower values than *best land in xb and *best. Returns l at p + u. */
static double leg_search(ncp *P, const double *p, const double *u, double lp, double *best) {
    const int nk = crossings(P, p, u);
    double a0 = 0, l_a0 = lp;
    for (int s = 0; s <= nk && !P->meter.passed; s++) {
        const double a1 = s < nk ? P->cross[s] : 1;
        const double l1 = try_point(P, p, u, a1, s < nk ? P->cross_id[s] : -1, best);
        const double lm = try_point(P, p, u, (a0 + a1) / 2, -1, best);
        const double A = 2 * (l_a0 + l1 - 2 * lm), B = l1 - l_a0 - A;
        if (A > 0 && -B / (2 * A) > 0 && -B / (2 * A) < 1)
            try_point(P, p, u, a0 + (a1 - a0) * (-B / (2 * A)), -1, best);
        a0 = a1, l_a0 = l1;
    }
    return l_a0;
}

/* Backtracking along p -> p + u, given l0 at p, l1 at p + u and the slope s < 0 of l at p: each
 * trial at the minimum of the parabola through l0, s and the last trial, kept within [0.1, 0.5]
 * of the last step, until Armijo's sufficient decrease or BACKTRACK_MAX trials. The crossings and
 * parabolas of leg_search() miss a minimum near p when l rises by orders of magnitude toward
 * p + u (measured: a tenth of the way along, l 0.3 of l0, at the end 1e3 l0). Lower values than
 * *best land in xb and *best. */
static void backtrack(ncp *P, const double *p, const double *u, double l0, double l1, double s,
                      double *best) {
    double a = 1, la = l1;
    for (int q = 0; q < BACKTRACK_MAX && !(la <= l0 + ARMIJO * a * s) && !P->meter.passed; q++) {
        const double am = -s * a * a / (2 * (la - l0 - s * a));
        a = fmin(fmax(am, 0.1 * a), 0.5 * a);
        la = try_point(P, p, u, a, -1, best);
    }
}

/* The dogleg x -> xc -> xn (xn absent: the first leg only). Returns the lowest l found (in xb),
 * l0 when nothing beats x. */
static double dogleg_search(ncp *P, double l0, bool two_legs) {
    double best = l0;
    double *u = P->y; // the leg's direction (y is free here)
    for (int i = 0; i < P->n; i++)
        u[i] = P->xc[i] - P->x[i];
    const double lc = leg_search(P, P->x, u, l0, &best);
    if (two_legs) {
        for (int i = 0; i < P->n; i++)
            u[i] = P->xn[i] - P->xc[i];
        leg_search(P, P->xc, u, lc, &best);
    }
    return best;
}

/* ---- the solve --------------------------------------------------------------------------- */

/* Lists each contact's coupled contacts, those whose 3 x 3 block of W in its columns is not zero
 * (a contact shares a body with a few others: 1.6 % of the blocks of FCLIB's Capsules). True
 * when the deadline passed (the list unfinished, and not marked listed). */
static bool list_neighbours(ncp *P) {
    int q = 0;
    for (int k = 0; k < P->nc; k++) {
        P->nbr_start[k] = q;
        const double *w = P->W + (size_t)3 * k * P->ldw;
        for (int j = 0; j < P->nc; j++) {
            bool nz = false;
            for (int c = 0; c < 3; c++)
                for (int r = 0; r < 3; r++)
                    nz = nz || w[(size_t)c * P->ldw + 3 * j + r] != 0;
            if (nz)
                P->nbr[q++] = j;
        }
        if (cs__meter_add(&P->meter, 3 * (int64_t)P->n))
            return true;
    }
    P->nbr_start[P->nc] = q;
    P->nbr_listed = true;
    return false;
}

/* The listed blocks, packed in list order into P->K (free between Newton steps: each iteration
 * forms its matrix afresh), 9 doubles each, column by column: a sweep then reads them in order
 * (on Capsules 0.1 MB, against W's 6 MB read 24 bytes at a time). Also each contact's steps:
 * 1 / W_nn, and 1 / the larger eigenvalue of its pair's 2 x 2 block W_tt (1 where W has none). */
static void pack_blocks(ncp *P) {
    const size_t ldw = (size_t)P->ldw;
    for (int k = 0; k < P->nc; k++) {
        const double *w = P->W + 3 * (size_t)k * ldw;
        for (int q = P->nbr_start[k]; q < P->nbr_start[k + 1]; q++)
            for (int c = 0; c < 3; c++)
                memcpy(P->K + 9 * (size_t)q + 3 * c, w + c * ldw + 3 * (size_t)P->nbr[q],
                       3 * sizeof(double));
        const double wnn = w[3 * k], w11 = w[ldw + 3 * k + 1], w22 = w[2 * ldw + 3 * k + 2];
        const double w12 = w[2 * ldw + 3 * k + 1];
        const double lmax = (w11 + w22) / 2 + hypot((w11 - w22) / 2, w12);
        P->gs[2 * k] = wnn > 0 ? 1 / wnn : 1;
        P->gs[2 * k + 1] = lmax > 0 ? 1 / lmax : 1;
    }
}

/* v = W(:, 3k .. 3k + 2)^T f (W symmetric: contact k's rows of W f) over k's coupled contacts,
 * from the packed blocks. The rounding is dot()'s over the whole column: row i's product goes
 * into partial sum i mod 4 (the tail past the last group of four into the first), in row order,
 * and the zero blocks left out add exact zeros there. The four sums of a column sit in two pairs
 * of lanes; a product reaches its own lane, and an exact zero (its product with the mask's 0)
 * the other three. */
static void coupled_rows(const ncp *P, int k, const double *f, double v[3]) {
    static const cs__v2 lo_mask[4] = {{1, 0}, {0, 1}, {0, 0}, {0, 0}};
    static const cs__v2 hi_mask[4] = {{0, 0}, {0, 0}, {1, 0}, {0, 1}};
    const int n4 = P->n - P->n % 4;
    cs__v2 lo0 = {0, 0}, lo1 = {0, 0}, lo2 = {0, 0}, hi0 = {0, 0}, hi1 = {0, 0}, hi2 = {0, 0};
    for (int q = P->nbr_start[k]; q < P->nbr_start[k + 1]; q++) {
        const double *blk = P->K + 9 * (size_t)q;
        const int i0 = 3 * P->nbr[q];
        for (int r = 0; r < 3; r++) {
            const int i = i0 + r, part = i < n4 ? i & 3 : 0;
            const cs__v2 lm = lo_mask[part], hm = hi_mask[part];
            const double fi = f[i], p0 = blk[r] * fi, p1 = blk[3 + r] * fi, p2 = blk[6 + r] * fi;
            const cs__v2 v0 = {p0, p0}, v1 = {p1, p1}, v2 = {p2, p2};
            lo0 += v0 * lm, hi0 += v0 * hm;
            lo1 += v1 * lm, hi1 += v1 * hm;
            lo2 += v2 * lm, hi2 += v2 * hm;
        }
    }
    v[0] = (lo0[0] + lo0[1]) + (hi0[0] + hi0[1]);
    v[1] = (lo1[0] + lo1[1]) + (hi1[0] + hi1[1]);
    v[2] = (lo2[0] + lo2[1]) + (hi2[0] + hi2[1]);
}

/* pgs() cut short by the deadline: x = -f, whose f(x) is the forces swept so far (each inside its
 * cone), so that x and f agree whatever the caller keeps. Returns true. */
static bool pgs_stopped(ncp *P, const double *f) {
    for (int i = 0; i < P->n; i++)
        P->x[i] = -f[i];
    return true;
}

/* Projected Gauss-Seidel on f (sweeps over the contacts; per contact its normal row exactly,
 * f_n <- max(0, f_n - v_n / W_nn), then its pair with v_t updated, f_t <- Pi(f_t - v_t / l_t), Pi
 * the disc |f_t| <= mu f_n (the map of eqs. 10-13) and l_t the larger eigenvalue of W_tt), then
 * x = v - f (eq. 14). A cheap descent toward the solution's regions from any f: used where
 * Gauss-Newton stalls in a local minimum of l (section V-A's restart). Neither step goes past
 * the minimum of its rows' quadratic (the normal one lands on it, the pair's reaches it along
 * W_tt's stiffer direction and stops short along the other). One step 3 / tr W_kk for all three
 * rows went past it along an eigenvalue of W_kk above tr / 3 and away from it along one above
 * 2 tr / 3: there sweeps cycled or grew without bound (from f = 0: to infinity on 9 of 3241
 * random scenes with redundant contacts; to the answer within 4096 sweeps on 2675 of them, now
 * 2870). A sweep costs the coupled blocks of W (9 multiply-adds each), not n^2. f: [n] in/out
 * (P->f may be passed). Returns true when the deadline passed. */
static bool pgs(ncp *P, double *f, int sweeps) {
    const int n = P->n;
    if (!P->nbr_listed && list_neighbours(P))
        return pgs_stopped(P, f);
    pack_blocks(P);
    for (int it = 0; it < sweeps; it++) {
        for (int k = 0; k < P->nc; k++) {
            const double *w = P->W + (size_t)3 * k * P->ldw, mu = P->mu[k];
            double v[3], *fk = f + 3 * k;
            coupled_rows(P, k, f, v);
            for (int c = 0; c < 3; c++)
                v[c] += P->b[3 * k + c];
            const double fn = fmax(0.0, fk[0] - P->gs[2 * k] * v[0]), dn = fn - fk[0];
            // The pair's velocities after the normal row's change (column n of W_kk).
            const double v1 = v[1] + w[3 * k + 1] * dn, v2 = v[2] + w[3 * k + 2] * dn;
            double t1 = fk[1] - P->gs[2 * k + 1] * v1, t2 = fk[2] - P->gs[2 * k + 1] * v2;
            if (!inside_disc(t1, t2, mu * fn)) {
                const double t = hypot(t1, t2);
                if (t > mu * fn)
                    t1 *= mu * fn / t, t2 *= mu * fn / t;
            }
            fk[0] = fn, fk[1] = t1, fk[2] = t2;
            // A contact's coupled blocks, 9 multiply-adds each: a dense W's sweep is n^2.
            if (cs__meter_add(&P->meter, 9 * (int64_t)(P->nbr_start[k + 1] - P->nbr_start[k])))
                return pgs_stopped(P, f);
        }
    }
    w_mul(P, f, P->x);
    if (P->meter.passed)
        return pgs_stopped(P, f);
    for (int i = 0; i < n; i++)
        P->x[i] += P->b[i] - f[i];
    return false;
}

/* The scaled problem, per contact (one factor for its 3 rows keeps the cone and the
 * complementarity): f = s f', v = v' / s, W' = S W S, b' = S b, with s such that the contact's
 * mean diagonal d of W becomes d clamped to [1 / SCALE_BAND, SCALE_BAND] (s = 1 inside it).
 * Eq. 15's x = v - f adds a velocity to an impulse, so Gauss-Newton depends on their units: with
 * W ~ 1e-5 (LMGC's PerioBox, impulses ~1e4) the Newton matrix's W part falls under the LU's pivot
 * threshold beside V's ones and every Newton point is refused. Inside the band the units are
 * left as given (a full Jacobi scaling measured worse on the stacks of the tests). Also sets
 * the Tikhonov term from the largest diagonal of W'. */
static void scale_problem(ncp *P, const double *W, int ldw, const double *b) {
    const int n = P->n;
    for (int k = 0; k < P->nc; k++) {
        const double *w = W + (size_t)3 * k * ldw + 3 * k;
        const double d = (w[0] + w[ldw + 1] + w[2 * (size_t)ldw + 2]) / 3;
        P->s[k] = d > 0 ? sqrt(fmin(fmax(d, 1 / SCALE_BAND), SCALE_BAND) / d) : 1;
    }
    bool unit = true;
    for (int k = 0; k < P->nc; k++)
        unit = unit && P->s[k] == 1;
    double wscale = 0;
    if (unit) {
        // Every contact inside the band: the caller's W and b as they are.
        P->W = W, P->ldw = ldw, P->b = b;
        for (int j = 0; j < n; j++)
            wscale = max_acc(wscale, W[(size_t)j * ldw + j]);
    } else {
        // Row scales by row, so that a column scales two rows at a time.
        for (int i = 0; i < n; i++)
            P->y[i] = P->s[i / 3];
        for (int j = 0; j < n; j++) {
            const double sj = P->s[j / 3];
            const cs__v2 vj = {sj, sj};
            const double *wj = W + (size_t)j * ldw;
            double *out = P->Ws + (size_t)j * n;
            int i = 0;
            for (; i + 2 <= n; i += 2)
                cs__st2(out + i, cs__ld2(wj + i) * vj * cs__ld2(P->y + i));
            for (; i < n; i++)
                out[i] = wj[i] * sj * P->y[i];
            wscale = max_acc(wscale, out[j]);
            P->bs[j] = b[j] * sj;
            // Passed, the start and the loop see it at once and nothing reads W' unfinished.
            if (cs__meter_add(&P->meter, n))
                break;
        }
        P->W = P->Ws, P->b = P->bs;
    }
    P->wscale = wscale > 0 ? wscale : 1;
    P->reg = REG * P->wscale;
}

/* The paper's start (section III-F): all contacts stick, v = 0, W f = -b, x = -f, solved as
 * x = (W + lam I)^-1 b and refined with the same factor, at most twice, until the residual is
 * down to rounding (iterated Tikhonov: the error on W's range falls by lam / sigma each time, and
 * the answer stays W's minimum-norm solution, so coplanar contacts share a load evenly). Returns
 * 0, or 1 when the deadline passed (x untouched) or -1 when W + lam I does not factor even with
 * lam raised to its cap. */
static int stick_start(ncp *P) {
    const int n = P->n;
    for (double lam = P->reg; lam <= 1e18 * P->reg; lam *= 100) {
        const int chunk = meter_columns(&P->meter, n, n);
        for (int q = 0; q < n; q += chunk) {
            const int kq = cs__chunk_len(q, chunk, n);
            for (int j = q; j < q + kq; j++) {
                memcpy(P->K + (size_t)j * n, P->W + (size_t)j * P->ldw,
                       (size_t)n * sizeof(double));
                P->K[(size_t)j * n + j] += lam;
            }
            if (cs__meter_add(&P->meter, (int64_t)kq * n))
                return 1;
        }
        memcpy(P->x, P->b, (size_t)n * sizeof(double));
        const int c = factor_solve(P, n, true, P->x);
        if (c > 0)
            return 1;
        if (c < 0)
            continue;
        for (int refine = 0; refine < 2; refine++) {
            // x += c, c = (W + lam I)^-1 (b - W x).
            w_mul(P, P->x, P->rhs);
            if (P->meter.passed)
                return 1;
            for (int i = 0; i < n; i++)
                P->rhs[i] = P->b[i] - P->rhs[i];
            cs__sap_chol_solve(n, P->K, P->kend, 1, P->rhs, &P->meter);
            if (P->meter.passed)
                return 1;
            double cmax = 0, xmax = 0;
            for (int i = 0; i < n; i++) {
                P->x[i] += P->rhs[i];
                cmax = max_acc(cmax, fabs(P->rhs[i]));
                xmax = max_acc(xmax, fabs(P->x[i]));
            }
            // The residual c leaves, b - W x = lam c, is within the rounding of W x (DBL_EPSILON
            // |W| |x|): a further solve would only turn that rounding's part along W's null space
            // into a correction 1 / lam times larger (on 4-box stacks the first correction is
            // 5e-7 of |x|, nearly all of it that, and so was the second).
            if (lam * cmax <= DBL_EPSILON * P->wscale * xmax)
                break;
        }
        return 0;
    }
    return -1;
}

/* cs_ncp_delassus(); with hand_off, the solve also stops, the best iterate in lambda and
 * *ret_handed set, where the model path restarts from a pivoting answer (cs_ncp_solve): at a
 * second stall, or with a quarter of the iterations left. */
static cs_status delassus(int nc, const double *W, int ldw, const double *b, const double *mu,
                          const double *lambda0, const cs_ncp_params *prm, const cs_options *opt,
                          void *scratch, bool hand_off, double *lambda, cs_ncp_info *ret_info,
                          bool *ret_handed) {
    cs_ncp_info info = {0};
    const int n = 3 * nc;
    cs__meter meter = cs__meter_start(opt);
    // The data: finite, mu >= 0; W's n^2 entries through the meter (a scan cut short by the
    // deadline leaves W unjudged, and the solve returns the deadline below).
    bool finite = true;
    for (int j = 0; j < n; j++)
        finite = finite && isfinite(b[j]) && (!lambda0 || isfinite(lambda0[j]));
    for (int i = 0; i < nc; i++)
        finite = finite && isfinite(mu[i]) && mu[i] >= 0;
    for (int j = 0; j < n && finite; j++) {
        if (cs__meter_add(&meter, n))
            break;
        // 0 w sums to 0 over finite entries and to NaN when one is not finite (no branch each),
        // two entries at a time.
        const double *wj = W + (size_t)j * ldw;
        cs__v2 z2 = {0, 0};
        int i = 0;
        for (; i + 2 <= n; i += 2)
            z2 += 0 * cs__ld2(wj + i);
        double z = z2[0] + z2[1];
        for (; i < n; i++)
            z += 0 * wj[i];
        finite = z == 0;
    }
    if (!finite) {
        if (ret_info)
            *ret_info = info;
        return CS_EINPUT;
    }
    if (nc == 0) {
        if (ret_info)
            *ret_info = info;
        return CS_CONVERGED;
    }
    ncp P = {.nc = nc, .n = n, .ldw = n, .mu = mu, .lam = LM_MIN, .hm = -1, .meter = meter};
    layout(&P, scratch, nc);
    if (!P.meter.passed)
        scale_problem(&P, W, ldw, b);
    if (P.meter.passed) {
        // No time to read the data through: the warm start, unchanged, and no iterate.
        for (int i = 0; i < n; i++)
            lambda[i] = lambda0 ? lambda0[i] : 0;
        info.residual = INFINITY;
        info.no_iterate = true;
        if (ret_info)
            *ret_info = info;
        return CS_DEADLINE;
    }
    const double tol = prm && prm->tol > 0 ? prm->tol : TOL_DEFAULT;
    const int max_it = prm && prm->max_iterations > 0 ? prm->max_iterations : MAX_IT_DEFAULT;

    // Start: x = W lambda0 + b - lambda0 (x = v - f, eq. 14), or the stick assumption; with no
    // time for that, x = b (lambda0 = 0).
    if (lambda0) {
        for (int i = 0; i < n; i++)
            P.f[i] = lambda0[i] / P.s[i / 3];
        w_mul(&P, P.f, P.x);
        // Out of time: x = -f, whose f(x) is the warm start itself (projected on its cone).
        for (int i = 0; i < n; i++)
            P.x[i] = P.meter.passed ? -P.f[i] : P.x[i] + P.b[i] - P.f[i];
    } else if (cs__meter_check(&P.meter) || stick_start(&P) != 0) {
        memcpy(P.x, b, (size_t)n * sizeof(double));
    }
    cs_status status = CS_MAXITER;
    // x from sweeps or a switched point, not a Newton step: polished when it converges (below).
    bool polish = false;
    double res, l = eval(&P, P.x, P.f, P.r, &res);
    if (!lambda0) {
        // With b off W's range (gaps, separating contacts) the stick start grows like 1 / lam:
        // then a few projected Gauss-Seidel sweeps from f = 0 are the better start. (Merely
        // worse stick starts are kept: they start Newton in the right regions far more often.)
        double l_free = 0;
        for (int i = 0; i < nc; i++)
            l_free += fmin(P.b[3 * i], 0.0) * fmin(P.b[3 * i], 0.0) / 2;
        if (!(l <= 1e4 * l_free) && l > 0) {
            memset(P.f, 0, (size_t)n * sizeof(double));
            pgs(&P, P.f, PGS_SWEEPS);
            l = eval(&P, P.x, P.f, P.r, &res);
            polish = true;
        }
    }
    // A start the deadline cut short (its residual unknown) is no iterate of this solve.
    info.no_iterate = P.meter.passed;
    double l_best = l;
    memcpy(P.xbest, P.x, (size_t)n * sizeof(double));
    int stalled = 0, restarts = 0;
    double l_prev = l;
    for (;;) {
        if (res <= tol) {
            status = CS_CONVERGED;
            break;
        }
        // An evaluation the deadline cut short (an unknown residual) is the deadline's.
        if (P.meter.passed) {
            status = CS_DEADLINE;
            break;
        }
        if (info.iterations >= max_it) {
            status = CS_MAXITER;
            break;
        }
        if (hand_off && info.iterations >= max_it - max_it / 4) {
            *ret_handed = true;
            status = CS_MAXITER;
            break;
        }
        if (cs__meter_check(&P.meter)) {
            status = CS_DEADLINE;
            break;
        }
        if (info.iterations > 0)
            stalled = l > (1 - STALL_DROP) * l_prev ? stalled + 1 : 0;
        l_prev = l;
        if (l < l_best) {
            l_best = l;
            memcpy(P.xbest, P.x, (size_t)n * sizeof(double));
        }
        if (stalled >= STALL_ITS && hand_off && restarts > 0) {
            *ret_handed = true;
            status = CS_MAXITER;
            break;
        }
        if (stalled >= STALL_ITS) {
            // A local minimum of l (or the crawl toward one): restart from Gauss-Seidel
            // sweeps on the current impulses, trusting the model afresh.
            restarts++, stalled = 0;
            // Each restart sweeps twice as long (up to a cap): a start nearer the solution.
            const int sweeps = n > PGS_SWEEPS ? n : PGS_SWEEPS;
            if (pgs(&P, P.f, sweeps << (restarts < PGS_DOUBLINGS ? restarts : PGS_DOUBLINGS))) {
                // Cut short, the sweeps' forces are no evaluated iterate: the best one goes out.
                l = INFINITY;
                status = CS_DEADLINE;
                break;
            }
            l = eval(&P, P.x, P.f, P.r, &res);
            P.lam = LM_MIN;
            polish = true;
            continue;
        }
        info.iterations++;
        if (linearize(&P)) {
            status = CS_DEADLINE;
            break;
        }
        bool any_edge = false;
        for (int k = 0; k < nc; k++)
            any_edge = any_edge || P.edge[k] != EDGE_NONE;
        // The Newton point: while the model is trusted (lam small) and no edge is active, the
        // plain Newton step J dx = -r (eliminating separating contacts); else eq. 28's LM point.
        const bool plain = P.lam <= LM_PLAIN && !any_edge;
        double la = 0;
        int nw = plain ? newton(&P, fmax(REG, PROX * res) * P.wscale) : lm_point(&P, P.lam, &la);
        if (nw > 0) {
            status = CS_DEADLINE;
            break;
        }
        double ln = INFINITY;
        if (nw == 0) {
            trial_point(&P);
            for (int i = 0; i < n; i++)
                P.dx[i] = P.xn[i] - P.x[i];
            j_mul(&P, P.dx, P.je);
            const double pred = predicted(&P, P.dx, P.je, plain ? 0 : la);
            double rn;
            ln = eval(&P, P.xn, P.ft, P.rt, &rn);
            if (P.meter.passed) {
                status = CS_DEADLINE;
                break;
            }
            if (pred > 0 && l - ln >= ACCEPT * pred) {
                take_point(&P, &P.xn);
                l = ln, res = rn;
                // Back to full trust fast: with a singular J (redundant contacts) any lam left
                // in place turns Gauss-Newton's local convergence linear.
                P.lam = fmax(P.lam / 1000, LM_MIN);
                info.newton++;
                polish = false;
                continue;
            }
        }
        if (plain && nw == 0) {
            // Refused: the Newton point for the regions x_N lies in, when they are not x's.
            double rs;
            const double ls = switched_point(&P, res, &rs);
            if (P.meter.passed) {
                status = CS_DEADLINE;
                break;
            }
            if (ls < (1 - 1e-3) * l) { // the bar of the line search below
                take_point(&P, &P.xb);
                l = ls, res = rs;
                info.newton++;
                polish = true;
                continue;
            }
        }
        if (plain && nw == 0) {
            // The plain Newton point overshot (a contact changed region, or the step ran along a
            // curved valley): search x -> x_N, on which l starts downhill (slope r^T J dx, -|r|^2
            // but for the Tikhonov term), at its edge crossings and by backtracking from x_N.
            double best = l;
            leg_search(&P, P.x, P.dx, l, &best);
            const double slope = dot(n, P.r, P.je);
            if (slope < 0)
                backtrack(&P, P.x, P.dx, l, ln, slope, &best);
            if (P.meter.passed) {
                status = CS_DEADLINE;
                break;
            }
            if (best < (1 - 1e-3) * l) {
                memcpy(P.x, P.xb, (size_t)n * sizeof(double));
                l = eval(&P, P.x, P.f, P.r, &res);
                polish = false;
                continue;
            }
        }
        // Less trust: a larger lam, and x_N as the LM point of it.
        P.lam = fmin(fmax(P.lam * 10, LM_RESTART), LM_MAX);
        nw = lm_point(&P, P.lam, &la);
        if (nw > 0) {
            status = CS_DEADLINE;
            break;
        }
        if (nw == 0)
            trial_point(&P);
        // The Cauchy point (eq. 24) with H = J^T J + lam I.
        j_mul(&P, P.g, P.je);
        if (P.meter.passed) {
            status = CS_DEADLINE;
            break;
        }
        const double gg = dot(n, P.g, P.g), den = dot(n, P.je, P.je) + la * gg;
        if (!(gg > 0) || !(den > 0)) {
            status = CS_RAY;
            break;
        }
        for (int i = 0; i < n; i++)
            P.xc[i] = P.x[i] - P.g[i] * (gg / den);
        project_edges(&P, P.xc);
        const double lb = dogleg_search(&P, l, nw == 0);
        if (P.meter.passed) {
            status = CS_DEADLINE;
            break;
        }
        if (lb < l) {
            memcpy(P.x, P.xb, (size_t)n * sizeof(double));
            l = eval(&P, P.x, P.f, P.r, &res);
            polish = false;
        } else if (P.lam >= LM_MAX) {
            // No descent even along the gradient: a local minimum of l with r != 0.
            status = CS_RAY;
            break;
        }
    }
    if (status == CS_CONVERGED && polish && info.iterations < max_it &&
        !cs__meter_check(&P.meter)) {
        // Sweeps converge linearly and a switched point's step is regularized: their iterate is
        // within the tolerance by a little at best (test_physics' kinematic probe from 20 sweeps:
        // 1.1e-11, velocities 3e-12 off; FCLIB's BoxesStack1 from a switched point: 1.8e-11).
        // One plain Newton step, taken when it lowers the residual, brings it to rounding as
        // Newton's own last step would.
        info.iterations++;
        if (!linearize(&P) && newton(&P, REG * P.wscale) == 0) {
            trial_point(&P);
            double rn;
            const double ln = eval(&P, P.xn, P.ft, P.rt, &rn);
            if (rn < res) {
                take_point(&P, &P.xn);
                l = ln, res = rn;
                info.newton++;
            }
        }
    }
    if (status != CS_CONVERGED && !(l <= l_best)) {
        // A restart left the best iterate behind (or a non-finite one): return that one. Never
        // over a converged x: l and the relative residual order iterates differently (an
        // unconverged x of lower l went out under CS_CONVERGED), and the polish may raise l.
        memcpy(P.x, P.xbest, (size_t)n * sizeof(double));
        l = eval(&P, P.x, P.f, P.r, &res);
    }
    for (int i = 0; i < n; i++)
        lambda[i] = P.s[i / 3] * P.f[i];
    info.residual = res;
    if (ret_info)
        *ret_info = info;
    return status;
}

cs_status cs_ncp_delassus(int nc, const double *W, int ldw, const double *b, const double *mu,
                          const double *lambda0, const cs_ncp_params *prm, const cs_options *opt,
                          void *scratch, double *lambda, cs_ncp_info *ret_info) {
    return delassus(nc, W, ldw, b, mu, lambda0, prm, opt, scratch, false, lambda, ret_info, NULL);
}

/* ---- the model path ---------------------------------------------------------------------- */

size_t cs_ncp_size(const cs_limits *lim) {
    const size_t n = 3 * (size_t)lim->max_contacts;
    // The restart's two impulse vectors, then W and b with the Delassus scratch or the solver's,
    // or the pivoting solve's scratch (the restart forms W again after it: never both).
    const size_t del = cs_model_delassus_size(lim);
    const size_t core = cs__ws_bytes(cs_ncp_delassus_size(lim->max_contacts));
    const size_t solve = cs__ws_bytes(n * n * sizeof(double)) + cs__ws_bytes(n * sizeof(double)) +
                         (del > core ? del : core);
    const size_t piv = cs_dantzig_size(lim);
    return 2 * cs__ws_bytes(n * sizeof(double)) + (solve > piv ? solve : piv);
}

/* The Delassus form of m in the workspace: W = J M^-1 J^T (cs_model_delassus) and b = J v* with
 * each normal entry minus m->bias (so the solver's bound is 0), then the solver's scratch. Returns
 * cs_model_delassus()'s status, or CS_ENOSPACE; the arrays are set when CS_CONVERGED. */
static cs_status form(cs_workspace *ws, const cs_model *m, cs__meter *meter, double **ret_W,
                      double **ret_b, void **ret_scratch) {
    const size_t n = 3 * (size_t)m->nc;
    double *W = cs__ws_alloc(ws, n * n * sizeof(double));
    double *b = cs__ws_alloc(ws, n * sizeof(double));
    if (m->nc > 0 && (!W || !b))
        return CS_ENOSPACE;
    const cs_status status = cs_model_delassus(m, ws, 3, W, (int)n, meter);
    if (status != CS_CONVERGED)
        return status;
    cs_model_free_velocity(m, 3, b);
    for (int i = 0; i < m->nc; i++)
        b[3 * i] -= m->bias[i];
    void *scratch = cs__ws_alloc(ws, cs_ncp_delassus_size(m->nc));
    if (m->nc > 0 && !scratch)
        return CS_ENOSPACE;
    *ret_W = W, *ret_b = b, *ret_scratch = scratch;
    return CS_CONVERGED;
}

/* The model path's restart from the pivoting solver's answer on the pyramid (Gauss-Newton handed
 * off, or ended at a local minimum): W formed again after the pivoting solve (the workspace holds
 * one of the two at a time), then cs_ncp_delassus() from its answer with the iterations left.
 * status, lambda and *info come in as the first solve's (its best iterate) and stay so unless the
 * second converged or ended lower; the deadline's status whenever it passed. first, start: [3 nc]
 * scratch below the workspace's top. */
static cs_status pivot_restart(cs_workspace *ws, const cs_model *m, const cs_ncp_params *prm,
                               const cs_options *opt, cs_status status, double *first,
                               double *start, double *lambda, cs_ncp_info *info, cs_stats *st) {
    const int nc = m->nc;
    const size_t n = 3 * (size_t)nc;
    const int max_it = prm && prm->max_iterations > 0 ? prm->max_iterations : MAX_IT_DEFAULT;
    if (info->iterations >= max_it)
        return status;
    memcpy(first, lambda, n * sizeof(double));
    cs_stats pst;
    const cs_status ps = cs_dantzig_solve_bounded(ws, m, opt, start, &pst);
    st->pivots = pst.pivots;
    cs__meter meter = cs__meter_start(opt);
    double *W, *b;
    void *scratch;
    const cs_status fs =
        ps == CS_DEADLINE ? CS_DEADLINE : form(ws, m, &meter, &W, &b, &scratch);
    if (fs != CS_CONVERGED)
        return fs == CS_DEADLINE ? CS_DEADLINE : status;
    // From the pivoting answer; with none, from the first solve's best iterate.
    cs_ncp_params rest = prm ? *prm : (cs_ncp_params){0};
    rest.max_iterations = max_it - info->iterations;
    cs_ncp_info again;
    const cs_status s2 = delassus(nc, W, (int)n, b, m->mu, ps == CS_CONVERGED ? start : first,
                                  &rest, opt, scratch, false, lambda, &again, NULL);
    again.iterations += info->iterations;
    again.newton += info->newton;
    if (s2 >= 0 && (s2 == CS_CONVERGED || again.residual < info->residual)) {
        *info = again;
        return s2;
    }
    memcpy(lambda, first, n * sizeof(double));
    info->iterations = again.iterations;
    info->newton = again.newton;
    return s2 == CS_DEADLINE ? CS_DEADLINE : status;
}

cs_status cs_ncp_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                       const cs_ncp_params *prm, const double *lambda0, double *lambda,
                       cs_stats *st, cs_ncp_info *ret_info) {
    *st = (cs_stats){0};
    if (ret_info)
        *ret_info = (cs_ncp_info){0};
    const int nc = m->nc;
    const size_t n = 3 * (size_t)nc, mark = cs__ws_mark(ws);
    // The restart's impulses below W, which it releases for its pivoting solve.
    double *first = cs__ws_alloc(ws, n * sizeof(double));
    double *start = cs__ws_alloc(ws, n * sizeof(double));
    const size_t top = cs__ws_mark(ws);
    cs__meter meter = cs__meter_start(opt);
    double *W, *b;
    void *scratch;
    cs_status status = nc > 0 && (!first || !start) ? CS_ENOSPACE
                                                    : form(ws, m, &meter, &W, &b, &scratch);
    if (status == CS_CONVERGED) {
        cs_ncp_info info;
        bool handed = false;
        status = delassus(nc, W, (int)n, b, m->mu, lambda0, prm, opt, scratch, true, lambda,
                          &info, &handed);
        if (handed || status == CS_RAY) {
            cs__ws_release(ws, top);
            status = pivot_restart(ws, m, prm, opt, status, first, start, lambda, &info, st);
        }
        st->iterations = info.iterations;
        if (ret_info)
            *ret_info = info;
    } else if (status == CS_DEADLINE) {
        // No time to form W: the warm start, unchanged, and no iterate.
        for (size_t i = 0; i < n; i++)
            lambda[i] = lambda0 ? lambda0[i] : 0;
        if (ret_info)
            ret_info->no_iterate = true;
    }
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

size_t cs__ncp_run_size(const cs_limits *lim) {
    return cs_ncp_size(lim) + cs__ws_bytes(3 * (size_t)lim->max_contacts * sizeof(double));
}

cs_status cs__ncp_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out) {
    const int nc = in->m->nc;
    const size_t mark = cs__ws_mark(ws);
    double *lambda0 = NULL;
    if (in->warm) {
        lambda0 = cs__ws_alloc(ws, 3 * (size_t)nc * sizeof(double));
        if (nc && !lambda0) {
            cs__ws_release(ws, mark);
            return CS_ENOSPACE;
        }
        bool any = false;
        for (int i = 0; i < nc; i++)
            any = cs__warm_impulse(in->warm, in->s->contacts[i].id, lambda0 + 3 * i) || any;
        lambda0 = any ? lambda0 : NULL;
    }
    cs_ncp_info info;
    const cs_status st =
        cs_ncp_solve(ws, in->m, in->opt, NULL, lambda0, out->lambda, out->st, &info);
    out->no_iterate = st == CS_DEADLINE && info.no_iterate;
    cs__ws_release(ws, mark);
    return st;
}
