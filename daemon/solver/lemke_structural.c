/* SPDX-License-Identifier: MIT */
/* Lemke on Lloyd's contact LCP through a kernel (lemke-contact.md, sections 4-5).
 *
 * VARIABLES. Complementary pairs, in this order: (nu_i, theta_i) for every contact, then per
 * contact with a friction block (sigma_ij, phi_ij) for j < d and (gamma_i, lambda_i). Every pair
 * has one basic member, except the open pair while z0 is basic: then both members are non-basic
 * and the pair's row holds z0. val[p] is the value of that basic variable.
 *
 * A BASIS SOLVE. All quantities are linear in the variables, so one routine solves the current
 * basis for a source (a velocity u0 and per-row constants s): with u0 = v*, s = offsets it gives
 * the basic values q'; with the column of a non-basic variable it gives that variable's column m'
 * of the pivoted system. Unknowns are the basic theta (set Theta), the basic phi (Phi), the basic
 * lambda (Lambda) and z0; equations are the non-basic w rows. For a contact in Lambda one basic
 * phi_X is eliminated through its gamma row (eq. 17) and lambda through its sigma_X row (eq. 20),
 * which leaves the kernel K of eq. (21): rows nu_i (i in Theta), sigma_ij - sigma_iX (phi_ij in
 * P = Phi minus the X's), and the open row; columns theta_i, phi_ij in P, and z0. Entries are
 * g_a^T M^-1 h_b with generalized vectors from the Jacobian rows (<= 12 non-zeros), so K is
 * r x r with r <= 6 m + 2 and M is never formed. After solving K, everything else follows by
 * back-substitution: phi_X, the velocity u, lambda, and the basic w rows. Every pair's row is
 * a_p^T J_i for a 3-vector a_p in its contact's frame, so impulses are summed per contact before
 * they touch u, and a row's value is a_p . (J_i u) from the contact's frame velocity.
 *
 * PIVOTING. Standard Lemke with a covering vector (c = 1 initially), Harris-banded ratio test
 * with lexicographic tie-breaking on the columns of B^-1 B0 (B0: the starting basis; the
 * columns are -m' of B0's variables), and pivot rejection: a pivot whose kernel is singular,
 * or the last one when its q' recomputed from scratch is negative, is undone and its row
 * excluded from that ratio test.
 *
 * REDUCED VARIANT (section VI). Only the nu/theta pairs exist at first. When nu_i leaves the
 * basis (contact i becomes active) and mu_i > 0, contact i's friction block is appended already
 * sliding against the tangential velocity at the current point: lambda_i and the phi of the
 * most opposed direction basic, the other sigma basic, covering entries 0, which is feasible as
 * it stands (slide_block). Lloyd appends the block with its w's basic and raises its covering
 * entries where those are negative (lemke-contact.md 5.2); on near-degenerate contacts (a round
 * peg of 32 contacts) that walked the active set along the rim, a contact's sigma and gamma pivots
 * at each step, for up to 320 pivots, and with z0 near rounding level made covering entries of
 * 1e5 and ended runs on rays.
 *
 * SCALING. Contact i's rows are solved in units where its Delassus block is about 1: J_i is
 * replaced by s_i J_i with s_i = (tr W_ii / 3)^(-1/2), W_ii = J_i M^-1 J_i^T (3 x 3, its frame;
 * cs_lemke_contact_scale). The LCP keeps its form (nu_i, sigma_ij scale by s_i, theta_i, phi_ij by
 * 1/s_i, lambda_i by s_i, gamma_i by 1/s_i, so E, -E^T and mu are unchanged), the covering entries
 * are the unscaled problem's scaled the same way (cover()), so in exact arithmetic the path is the
 * unscaled one; the impulses are scaled back when extracted. Only the rounding tests change:
 * without the scaling a scene with masses and inertias from 1e-3 to 1e3 mixes rows whose W_ii
 * differ by 1e9 with the unit entries of the friction rows, the column-relative threshold of the
 * ratio test drops the small rows' entries, basic values and z0 go negative, and the runs cycle
 * (fuzz_step's corpus: 7 contacts on 3 bodies, 150 to 2800 pivots, then an uncertified answer).
 *
 * DEADLINE. Read before each pivot and, through a meter (deadline.h), inside a kernel's build
 * (O(r^2) entries and searches), its LU factorization (O(r^3)) and solves (O(r^2)), a basis
 * solve's back-substitution and the ratio test's column solves: with 64 bodies r is 386. The
 * answer's check (velocity and certificate, O(contacts)) is metered too: one the deadline cuts
 * ends the solve with CS_DEADLINE, so no answer is called converged on a partial certificate.
 *
 * CRASH START (reduced variant, no warm basis). Before any cold run, the frictionless LCP of the
 * normal rows is solved, and Lemke starts like a warm start from the guess that every contact
 * active there slides against its tangential velocity, after one block step on the guess's
 * normal pairs (crash_step). Up to CRASH_LCP_MAX contacts that LCP is solved by Baraff's pivoting
 * (dantzig.h) on the normal rows' Delassus block, formed from the kernel's Jacobian table: a
 * Lemke run of it cost twice as much (on the benchmark's round pegs of 16 contacts a cold step
 * takes 63,000 instructions instead of 78,000 where the guess is the answer). Above that the
 * block's n^2 doubles would grow the workspace with the square of the declared contacts (100 MB
 * at 2048), so a Lemke run without friction blocks solves it. */
#include "solver/lemke_structural.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "solver/certify.h"
#include "solver/dantzig.h"
#include "solver/deadline.h"
#include "solver/lemke_contact.h"
#include "solver/lemke_structural_stages.h"
#include "solver/linalg.h"
#include "solver/workspace.h"

enum { P_NU, P_SIGMA, P_GAMMA };

/* Bases remembered to detect a cycle, and cold runs tried (each with another covering vector)
 * before a cycle, a ray or an answer failing its check is reported. */
#define CYCLE_MEMORY 32
#define COLD_ATTEMPTS 3
/* Contacts up to which the crash start's frictionless LCP is a dense block solved by Baraff's
 * pivoting (CRASH START): its block and scratch are then at most about 100 KB. */
#define CRASH_LCP_MAX 64

/* fmax/fmin without libm's NaN handling calls, for the hot loops (q_feasible catches NaNs). */
static inline double maxd(double a, double b) {
    return a > b ? a : b;
}

static inline double mind(double a, double b) {
    return a < b ? a : b;
}

/* A generalized vector with at most two body blocks (a contact's two sides). */
typedef struct gvec {
    int b[2];
    double v[2][6];
} gvec;

/* Contact i's moving sides (the world's side is left out): their bodies and Jacobian rows. */
typedef struct cside {
    int ns;
    int b[2];
    const double *J[2]; /* frame row 0 (its image under M^-1 at +6; rows 1, 2 at +24, +48) */
} cside;

/* One kernel's rows and columns. Two alternate, so that a rebuild after a pivot reuses the
 * entries of the rows and columns the previous kernel already had (an entry depends only on
 * its row's pair and X and its column's pair and X; the z0 column and gamma rows are cheap and
 * always recomputed). */
typedef struct kside {
    int *row, *rx;   /* row pair, its eliminated phi_X (-1) */
    uint8_t *rg;     /* the row is the scalar gamma equation of row's contact */
    int *col, *cx;   /* column pair (-1: z0), the phi_X substituted into it (-1) */
    gvec *grow, *gcol;
    double *E;       /* entries before factoring, column-major, ld kmax */
    int k;           /* 0: nothing to reuse */
} kside;

typedef struct lk {
    const cs_model *m;
    double *js; /* cs_model_jacobian() table, 3 rows per contact */
    int n, d, nv, np, kmax;
    bool reduced;
    bool frictionless; /* the crash's Lemke run: no friction block is appended */
    /* pairs [n (2 + d)] */
    uint8_t *type;
    int *con, *dir;
    uint8_t *zb;  /* 1: z member basic, 0: w member basic (or open) */
    uint8_t *zb0; /* the starting basis: lexicographic reference */
    double *cov;  /* covering vector */
    double *off;  /* row constants of q: -bias on nu rows */
    double *val, *mv, *beta, *src;
    double *saved; /* the values before the last pivot: swaps with val */
    int *cand;
    uint8_t *rejected;
    /* contacts [n] */
    cside *side;
    double *cv;   /* [3 n] frame velocity J_i u of the last basis solve */
    double *scale; /* [n] s_i of the scaled rows (SCALING; 1 when not scaled) */
    int *fblock;  /* first sigma pair of the friction block, -1 when none */
    int *blist, nblk; /* the contacts with a friction block, in the order of their blocks */
    int *xc;      /* the eliminated phi_X pair of a contact in Lambda, -1 */
    uint8_t *lam; /* lambda basic */
    uint8_t *want; /* the contacts whose rows a basis solve evaluates */
    int *lamlist, nlam; /* the contacts with lam set */
    uint32_t *crash;    /* [n] the crash basis's words */
    uint32_t *guess;    /* [n] crash_step()'s words */
    int open;     /* open pair, -1 when the basis is complementary */
    bool drive_z; /* the driving variable is the open pair's z member */
    /* kernel [kmax] */
    int kn;
    kside ks[2], *kc; /* kc: the current kernel, one of ks */
    int *from_row, *from_col; /* the previous kernel's row / column with the same key, -1 */
    int *fresh;               /* the rows of a new kernel with no entry to reuse */
    double *K, *rhs, growth;
    int *kpiv;
    bool kdirty;
    double *dvz, *u0, *w0, *u; /* [nv] */
    int attempt;               /* cold runs so far: > 0 varies the covering vector */
    uint64_t seen[CYCLE_MEMORY]; /* hashes of the latest bases */
    double dc[16], ds[16];     /* direction cosines and sines */
    cs__meter meter;           /* the deadline: read before each pivot and inside the kernel's
                                * O(r^3) factorization and the O(r^2) stretches */
} lk;

size_t cs_lemke_structural_size(const cs_limits *lim) {
    const size_t n = (size_t)lim->max_contacts, P = n * (2 + (size_t)lim->max_dirs);
    const size_t K = 6 * (size_t)lim->max_bodies + 2, nv = 6 * (size_t)lim->max_bodies;
    const size_t i = sizeof(int), f = sizeof(double);
    const size_t kside = cs__ws_bytes((K + 1) * i) + 3 * cs__ws_bytes(K * i) + cs__ws_bytes(K) +
                         2 * cs__ws_bytes(K * sizeof(gvec)) + cs__ws_bytes(K * K * f);
    // Taken and given back in turn: the crash start's LCP (crash_lcp), then the answer's check.
    const size_t nc = n < CRASH_LCP_MAX ? n : CRASH_LCP_MAX;
    const size_t crash = cs__ws_bytes(nc * nc * f) + 2 * cs__ws_bytes(nc * f) +
                         cs_dantzig_lcp_size((int)nc);
    const size_t check_own = cs__ws_bytes(nv * f) + cs_certify_size(lim);
    const size_t check = crash > check_own ? crash : check_own;
    return cs_model_jacobian_size(lim) + 4 * cs__ws_bytes(P) + 3 * cs__ws_bytes(P * i) +
           7 * cs__ws_bytes(P * f) + cs__ws_bytes(3 * n * f) + cs__ws_bytes(n * f) +
           4 * cs__ws_bytes(n * i) +
           2 * cs__ws_bytes(n) + cs__ws_bytes(n * sizeof(cside)) +
           2 * cs__ws_bytes(n * sizeof(uint32_t)) + 4 * cs__ws_bytes(K * i) + 2 * kside +
           cs__ws_bytes(K * K * f) + cs__ws_bytes(K * f) + 4 * cs__ws_bytes(nv * f) + check;
}

/* ---- generalized vectors ---- */

static double dot6(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

static double gdot(const gvec *a, const gvec *b) {
    if (a->b[1] < 0 && b->b[1] < 0) // one body on each side: the common case
        return a->b[0] == b->b[0] ? dot6(a->v[0], b->v[0]) : 0;
    double s = 0;
    for (int sa = 0; sa < 2; sa++)
        for (int sb = 0; sb < 2; sb++)
            if (a->b[sa] >= 0 && a->b[sa] == b->b[sb])
                s += dot6(a->v[sa], b->v[sb]);
    return s;
}

static double gdot_dense(const gvec *a, const double *v) {
    double s = 0;
    for (int side = 0; side < 2; side++)
        if (a->b[side] >= 0)
            s += dot6(a->v[side], v + 6 * a->b[side]);
    return s;
}

/* u += x g for a generalized vector g. */
static void gaxpy(const gvec *g, double x, double *u) {
    for (int side = 0; side < 2; side++)
        if (g->b[side] >= 0) {
            double *ub = u + 6 * g->b[side];
            for (int k = 0; k < 6; k++)
                ub[k] += x * g->v[side][k];
        }
}

/* Pair p's row in its contact's frame: (1, 0, 0) for nu, (0, cos, sin) for sigma, 0 for gamma. */
static void pair_coef(const lk *L, int p, double a[3]) {
    a[0] = L->type[p] == P_NU;
    a[1] = L->type[p] == P_SIGMA ? L->dc[L->dir[p]] : 0;
    a[2] = L->type[p] == P_SIGMA ? L->ds[L->dir[p]] : 0;
}

/* g = a^T J_i (img 0) or its image a^T J_i M^-1 (img 6). */
static void contact_gvec(const lk *L, int i, const double a[3], int img, gvec *g) {
    const cside *cs = &L->side[i];
    g->b[0] = g->b[1] = -1;
    for (int side = 0; side < cs->ns; side++) {
        const double *J0 = cs->J[side] + img, *J1 = J0 + 24, *J2 = J0 + 48;
        g->b[side] = cs->b[side];
        for (int k = 0; k < 6; k++)
            g->v[side][k] = a[0] * J0[k] + a[1] * J1[k] + a[2] * J2[k];
    }
}

/* The vector of (a_p + f a_x)^T J_i (img 0) or its image under M^-1 (img 6), for pair p and a
 * pair x of the same contact (x < 0: a_p alone). */
static void pair_gvec(const lk *L, int p, int x, double f, int img, gvec *g) {
    double a[3], ax[3] = {0, 0, 0};
    pair_coef(L, p, a);
    if (x >= 0)
        pair_coef(L, x, ax);
    contact_gvec(L, L->con[p], (double[3]){a[0] + f * ax[0], a[1] + f * ax[1], a[2] + f * ax[2]},
                 img, g);
}

/* u += M^-1 J_i^T x for a contact-frame impulse x. */
static inline void contact_apply(const lk *L, int i, const double x[3], double *u) {
    const cside *cs = &L->side[i];
    for (int side = 0; side < cs->ns; side++) {
        const double *J0 = cs->J[side] + 6, *J1 = J0 + 24, *J2 = J0 + 48;
        double *ub = u + 6 * cs->b[side];
        for (int k = 0; k < 6; k++)
            ub[k] += x[0] * J0[k] + x[1] * J1[k] + x[2] * J2[k];
    }
}

/* ret = J_i u, contact i's frame velocity: the normal only, or all 3 rows when tangents (pass
 * whether the contact has a friction block: only then are its tangent rows read). Every contact
 * has a moving side first (cs_scene_validate); the second is rarer. Inlined: it runs for every
 * contact in every basis solve, where a call and a loop over the sides cost more than its 6 or 18
 * products. */
static inline __attribute__((always_inline)) void
contact_velocity(const lk *L, int i, const double *u, bool tangents, double ret[3]) {
    const cside *cs = &L->side[i];
    CS_ASSERT(cs->ns >= 1);
    const double *ub = u + 6 * cs->b[0], *J0 = cs->J[0];
    double r0 = dot6(J0, ub), r1 = 0, r2 = 0;
    if (tangents) {
        r1 = dot6(J0 + 24, ub);
        r2 = dot6(J0 + 48, ub);
    }
    if (cs->ns > 1) {
        ub = u + 6 * cs->b[1], J0 = cs->J[1];
        r0 += dot6(J0, ub);
        if (tangents) {
            r1 += dot6(J0 + 24, ub);
            r2 += dot6(J0 + 48, ub);
        }
    }
    ret[0] = r0;
    ret[1] = r1;
    ret[2] = r2;
}

/* u += x M^-1 (a_p^T J_i)^T: nu or sigma pair p's variable at value x moves the bodies. A nu
 * row touches only the normal row, a sigma row only the tangent rows (the rest are exact 0s). */
static inline void pair_apply(const lk *L, int p, double x, double *u) {
    CS_ASSERT(L->type[p] != P_GAMMA);
    const int i = L->con[p];
    const bool nu = L->type[p] == P_NU;
    const double x1 = nu ? 0 : x * L->dc[L->dir[p]], x2 = nu ? 0 : x * L->ds[L->dir[p]];
    const cside *cs = &L->side[i];
    for (int side = 0; side < cs->ns; side++) {
        const double *J0 = cs->J[side] + 6, *J1 = J0 + 24, *J2 = J0 + 48;
        double *ub = u + 6 * cs->b[side];
        if (nu)
            for (int k = 0; k < 6; k++)
                ub[k] += x * J0[k];
        else
            for (int k = 0; k < 6; k++)
                ub[k] += x1 * J1[k] + x2 * J2[k];
    }
}

/* a_p . (J_i u) from the frame velocities of the last basis solve. */
static double row_value(const lk *L, int p) {
    const double *cv = L->cv + 3 * L->con[p];
    return L->type[p] == P_NU ? cv[0] : L->dc[L->dir[p]] * cv[1] + L->ds[L->dir[p]] * cv[2];
}

/* ---- basis bookkeeping ---- */

static bool z_basic(const lk *L, int p) {
    return L->zb[p] && p != L->open;
}

static bool w_basic(const lk *L, int p) {
    return !L->zb[p] && p != L->open;
}

static int gamma_pair(const lk *L, int i) {
    return L->fblock[i] + L->d;
}

/* Covering entry of pair p in a cold run: 1 on the first attempt; after a cycle, a ray or an
 * answer failing its check (signs that rounding led the degenerate path astray) entries spread
 * over [1, 2), which changes the path but not the LCP: z0 = 0 at the end whatever the covering
 * vector. */
static double cover(const lk *L, int p) {
    // In the scaled rows (SCALING) the unscaled problem's entry: the same path.
    const double s = L->type[p] == P_GAMMA ? 1 / L->scale[L->con[p]] : L->scale[L->con[p]];
    if (L->attempt == 0)
        return s;
    const double x = (p + 1) * 0.6180339887498949 + L->attempt * 0.4142135623730950;
    return (1 + (x - floor(x))) * s;
}

/* Appends contact i's friction block, w's basic, covering entries from cover(). */
static void append_block(lk *L, int i) {
    L->fblock[i] = L->np;
    L->blist[L->nblk++] = i;
    for (int j = 0; j <= L->d; j++) {
        const int p = L->np++;
        L->type[p] = j < L->d ? P_SIGMA : P_GAMMA;
        L->con[p] = i;
        L->dir[p] = j;
        L->zb[p] = L->zb0[p] = L->rejected[p] = 0;
        L->cov[p] = cover(L, p);
        L->off[p] = 0;
    }
    // A cover() (a floor and a few products) per pair; the run's next meter call stops.
    (void)cs__meter_add(&L->meter, 4 * ((int64_t)L->d + 1));
    L->kdirty = true;
    L->kc->k = 0; // pair numbers may be reused after an undone append: forget the kernel
}

/* u += M^-1 J^T lambda for the basic theta and phi with values x[p], summed per contact first. */
static void apply_basic(const lk *L, const double *x, double *u) {
    for (int i = 0; i < L->n; i++) {
        double imp[3] = {z_basic(L, i) ? x[i] : 0, 0, 0};
        if (L->fblock[i] >= 0)
            for (int j = 0; j < L->d; j++)
                if (z_basic(L, L->fblock[i] + j)) {
                    imp[1] += x[L->fblock[i] + j] * L->dc[j];
                    imp[2] += x[L->fblock[i] + j] * L->ds[j];
                }
        if (imp[0] != 0 || imp[1] != 0 || imp[2] != 0)
            contact_apply(L, i, imp, u);
    }
}

/* ---- the kernel ---- */

/* Entry (a, b) of kernel c, once its rows' and columns' vectors are known. */
static double kernel_entry(const lk *L, const kside *c, int a, int b) {
    const int p = c->row[a], q = c->col[b], i = L->con[p];
    if (c->rg[a]) {
        // gamma_i = mu_i theta_i - sum_j phi_ij + s + c z0
        if (q < 0)
            return L->cov[gamma_pair(L, i)];
        if (L->con[q] != i)
            return 0;
        return L->type[q] == P_NU ? L->m->mu[i] : -1;
    }
    if (q < 0)
        return gdot_dense(&c->grow[a], L->dvz) + L->cov[p] - (c->rx[a] >= 0 ? L->cov[c->rx[a]] : 0);
    return gdot(&c->grow[a], &c->gcol[b]);
}

static cs_status build_kernel(lk *L) {
    const cs_model *m = L->m;
    for (int l = 0; l < L->nlam; l++) {
        L->lam[L->lamlist[l]] = 0;
        L->xc[L->lamlist[l]] = -1;
    }
    L->nlam = 0;
    // The new kernel goes to the other side; it becomes current once its rows are known.
    kside *old = L->kc, *c = &L->ks[L->kc == &L->ks[0]];
    int k = 0;
    // Rows: the basic theta, then each block's basic phi but phi_X (the first basic phi of a
    // contact in Lambda, found in the same pass), in pair order (the blocks lie in the order of
    // blist). Only phi_X branches on the data (row has one spare slot for the last write).
    if (cs__meter_add(&L->meter, 2 * (int64_t)L->np))
        return CS_DEADLINE;
    const uint8_t *zb = L->zb;
    const int open = L->open, kmax = L->kmax, d = L->d;
    int *row = c->row;
    for (int p = 0; p < L->n; p++) {
        const int keep = (zb[p] != 0) & (p != open);
        if (k + keep > kmax)
            return CS_SINGULAR; // more unknowns than the rank bound 6 m + 2
        row[k] = p;
        k += keep;
    }
    for (int bl = 0; bl < L->nblk; bl++) {
        const int i = L->blist[bl], f = L->fblock[i];
        const bool lam = z_basic(L, f + d);
        int x = -1;
        for (int p = f; p < f + d; p++) {
            const int basic = (zb[p] != 0) & (p != open);
            if (lam && basic && x < 0) {
                x = p;
                continue;
            }
            if (k + basic > kmax)
                return CS_SINGULAR;
            row[k] = p;
            k += basic;
        }
        if (!lam)
            continue;
        L->lam[i] = 1;
        L->lamlist[L->nlam++] = i;
        L->xc[i] = x;
        // A basic lambda without a basic phi is only possible with its sigma row open.
        if (x < 0 && !(L->open >= 0 && L->type[L->open] == P_SIGMA && L->con[L->open] == i))
            return CS_SINGULAR;
    }
    memcpy(c->col, c->row, (size_t)k * sizeof(int));
    if (L->open >= 0) {
        if (k >= L->kmax)
            return CS_SINGULAR;
        c->row[k] = L->open;
        c->col[k] = -1;
        k++;
    }
    L->kn = c->k = k;
    L->kc = c;
    // dvz: a clear and a 12- or 24-term update per contact in Lambda.
    if (cs__meter_add(&L->meter, L->nv + 24 * (int64_t)L->nlam))
        return CS_DEADLINE;
    memset(L->dvz, 0, (size_t)L->nv * sizeof(double));
    for (int l = 0; l < L->nlam; l++) {
        const int i = L->lamlist[l];
        if (L->xc[i] >= 0)
            pair_apply(L, L->xc[i], L->cov[gamma_pair(L, i)], L->dvz);
    }
    int *from_row = L->from_row, *from_col = L->from_col;
    // Finding a row's or column's entries in the old kernel searches it: O(k^2) per kernel.
    for (int a = 0; a < k; a++) {
        if (cs__meter_add(&L->meter, old->k + 12))
            return CS_DEADLINE;
        const int p = c->row[a], i = L->con[p];
        // The open sigma row of a contact in Lambda without phi_X defines lambda; its gamma row
        // takes its place in the kernel (as does an open gamma row).
        c->rg[a] = L->type[p] == P_GAMMA || (L->type[p] == P_SIGMA && L->lam[i] && L->xc[i] < 0);
        c->rx[a] = L->type[p] == P_SIGMA && L->lam[i] ? L->xc[i] : -1;
        from_row[a] = -1;
        if (c->rg[a])
            continue;
        for (int o = 0; o < old->k && from_row[a] < 0; o++)
            if (old->row[o] == p && old->rx[o] == c->rx[a] && !old->rg[o])
                from_row[a] = o;
        if (from_row[a] >= 0) {
            c->grow[a] = old->grow[from_row[a]];
            continue;
        }
        pair_gvec(L, p, c->rx[a], -1, 0, &c->grow[a]);
    }
    for (int b = 0; b < k; b++) {
        if (cs__meter_add(&L->meter, old->k + 12))
            return CS_DEADLINE;
        const int p = c->col[b];
        from_col[b] = -1;
        if (p < 0)
            continue;
        const int i = L->con[p], x = L->lam[i] && L->xc[i] >= 0 ? L->xc[i] : -1;
        c->cx[b] = x;
        for (int o = 0; o < old->k && from_col[b] < 0; o++)
            if (old->col[o] == p && old->cx[o] == x)
                from_col[b] = o;
        if (from_col[b] >= 0) {
            c->gcol[b] = old->gcol[from_col[b]];
            continue;
        }
        // theta: n + mu d_X; phi: d - d_X (phi_X substituted through the gamma row).
        pair_gvec(L, p, x, L->type[p] == P_NU ? m->mu[i] : -1, 6, &c->gcol[b]);
    }
    // Rows without an entry to reuse (new rows and the always recomputed gamma rows).
    int *fresh = L->fresh, nfresh = 0;
    for (int a = 0; a < k; a++)
        if (from_row[a] < 0)
            fresh[nfresh++] = a;
    for (int b = 0; b < k; b++) {
        double *E = c->E + (size_t)b * L->kmax;
        if (c->col[b] < 0) {
            for (int a = 0; a < k; a++)
                E[a] = kernel_entry(L, c, a, b);
        } else if (from_col[b] >= 0) {
            const double *Eold = old->E + (size_t)from_col[b] * L->kmax;
            for (int a = 0; a < k; a++)
                if (from_row[a] >= 0)
                    E[a] = Eold[from_row[a]];
            for (int f = 0; f < nfresh; f++)
                E[fresh[f]] = kernel_entry(L, c, fresh[f], b);
        } else {
            for (int a = 0; a < k; a++)
                E[a] = kernel_entry(L, c, a, b);
        }
        // The factorization overwrites K: each column's k entries are copied as it is made,
        // so the meter sees the copy (O(k^2); the whole block, ld kmax, is O(k kmax)).
        memcpy(L->K + (size_t)b * L->kmax, E, (size_t)k * sizeof(double));
        // An entry is a 6- or 12-term product of generalized vectors, and its copy.
        if (cs__meter_add(&L->meter, 13 * (int64_t)k))
            return CS_DEADLINE;
    }
    const int lu = cs_lu_factor(k, L->K, L->kmax, L->kpiv, &L->growth, &L->meter);
    if (lu != 0)
        return lu > 0 ? CS_DEADLINE : CS_SINGULAR;
    L->kdirty = false;
    return CS_CONVERGED;
}

/* Contact i's rows of a basis solve once the kernel, phi_X and u are known (z0: the solve's z0):
 * its frame velocity, lambda_i from the non-basic sigma_X row (or the open sigma row), and its
 * basic w rows. Uses out[] only at contact i's basic theta and phi. The rows are selected
 * rather than branched on: which member is basic follows no pattern a predictor could learn. */
static void contact_rows(lk *L, int i, double z0, double *out) {
    double *cv = L->cv + 3 * i;
    contact_velocity(L, i, L->u, L->fblock[i] >= 0, cv);
    const double nu = cv[0] + L->src[i] + L->cov[i] * z0;
    out[i] = w_basic(L, i) ? nu : out[i];
    const int f = L->fblock[i];
    if (f < 0)
        return;
    const int g = f + L->d;
    if (L->lam[i]) {
        const int p = L->xc[i] >= 0 ? L->xc[i] : L->open;
        out[g] = -(row_value(L, p) + L->src[p] + L->cov[p] * z0);
    }
    const double lambda = L->lam[i] ? out[g] : 0;
    // In locals: a store to out[] may alias cv and L's own fields as far as the compiler knows.
    const double c1 = cv[1], c2 = cv[2];
    const double *src = L->src + f, *cov = L->cov + f;
    const uint8_t *zb = L->zb + f;
    const int d = L->d, open = L->open - f;
    double *o = out + f, phis = 0;
    for (int j = 0; j < d; j++) {
        const double row = L->dc[j] * c1 + L->ds[j] * c2 + lambda + src[j] + cov[j] * z0;
        const double cur = o[j];
        phis += zb[j] ? cur : 0.0;
        o[j] = zb[j] || j == open ? cur : row;
    }
    if (w_basic(L, g))
        out[g] = L->src[g] + L->cov[g] * z0 + (z_basic(L, i) ? L->m->mu[i] * out[i] : 0) - phis;
}

/* Solves the current basis for the source (L->u0, L->src): out[p] = value of pair p's basic
 * variable (z0 for the open pair). rows: when not NULL, only out[rows[0 .. nrows-1]] are wanted
 * (the back-substitution then visits only their contacts; other entries are left stale). */
static cs_status basis_solve(lk *L, double *out, const int *rows, int nrows) {
    const cs_model *m = L->m;
    if (L->kdirty) {
        const cs_status st = build_kernel(L);
        if (st != CS_CONVERGED)
            return st;
    }
    const int k = L->kn;
    // w0 and the right-hand side: a copy, 12-24 terms per contact in Lambda and per row.
    if (cs__meter_add(&L->meter, L->nv + 24 * (int64_t)L->nlam + 12 * (int64_t)k))
        return CS_DEADLINE;
    // w0 = u0 + sum over Lambda of s_gamma M^-1 d_X (phi_X's constant part).
    memcpy(L->w0, L->u0, (size_t)L->nv * sizeof(double));
    for (int l = 0; l < L->nlam; l++) {
        const int i = L->lamlist[l], g = gamma_pair(L, i);
        if (L->xc[i] >= 0 && L->src[g] != 0)
            pair_apply(L, L->xc[i], L->src[g], L->w0);
    }
    const kside *c = L->kc;
    for (int a = 0; a < k; a++) {
        const int p = c->row[a];
        if (c->rg[a])
            L->rhs[a] = -L->src[gamma_pair(L, L->con[p])];
        else
            L->rhs[a] = -(gdot_dense(&c->grow[a], L->w0) + L->src[p] -
                          (c->rx[a] >= 0 ? L->src[c->rx[a]] : 0));
    }
    cs_lu_solve(k, L->K, L->kmax, L->kpiv, L->rhs, &L->meter);
    if (L->meter.passed)
        return CS_DEADLINE;
    const double z0 = L->open >= 0 ? L->rhs[k - 1] : 0;
    // The back-substitution up to the contacts' rows: a clear of out, u, the columns' images
    // and phi_X (d terms per contact in Lambda).
    if (cs__meter_add(&L->meter, (rows ? 0 : L->np) + 2 * (int64_t)L->nv + 12 * (int64_t)k +
                                     (int64_t)L->d * L->nlam + L->n + nrows))
        return CS_DEADLINE;
    if (!rows)
        memset(out, 0, (size_t)L->np * sizeof(double));
    // u = w0 + z0 dvz + the kernel columns' images (which carry phi_X's dependence on them).
    memcpy(L->u, L->w0, (size_t)L->nv * sizeof(double));
    if (z0 != 0 && L->nlam > 0)
        for (int v = 0; v < L->nv; v++)
            L->u[v] += z0 * L->dvz[v];
    for (int b = 0; b < k; b++)
        if (c->col[b] >= 0) {
            out[c->col[b]] = L->rhs[b];
            gaxpy(&c->gcol[b], L->rhs[b], L->u);
        }
    if (L->open >= 0)
        out[L->open] = z0;
    // phi_X from the gamma row.
    for (int l = 0; l < L->nlam; l++) {
        const int i = L->lamlist[l], g = gamma_pair(L, i), x = L->xc[i];
        if (x < 0)
            continue;
        double v = (z_basic(L, i) ? m->mu[i] * out[i] : 0) + L->src[g] + L->cov[g] * z0;
        for (int j = 0; j < L->d; j++)
            v -= L->zb[L->fblock[i] + j] && L->fblock[i] + j != x ? out[L->fblock[i] + j] : 0;
        out[x] = v;
    }
    memset(L->want, !rows, (size_t)L->n);
    for (int r = 0; r < nrows; r++)
        L->want[L->con[rows[r]]] = 1;
    // A contact's rows: its frame velocity and about 8 operations per friction direction.
    for (int i = 0; i < L->n; i++)
        if (L->want[i]) {
            contact_rows(L, i, z0, out);
            if (cs__meter_add(&L->meter, 8 * (int64_t)L->d + 40))
                return CS_DEADLINE;
        }
    return CS_CONVERGED;
}

/* Source of the basic values q'. */
static void source_q(lk *L) {
    (void)cs__meter_add(&L->meter, L->nv + (int64_t)L->np); // a pass: the solve's next add stops
    memcpy(L->u0, L->m->vstar, (size_t)L->nv * sizeof(double));
    memcpy(L->src, L->off, (size_t)L->np * sizeof(double));
}

/* Source of the column of pair p's z member (z) or w member (!z). */
static void source_var(lk *L, int p, bool z) {
    (void)cs__meter_add(&L->meter, L->nv + (int64_t)L->np); // a pass: the solve's next add stops
    memset(L->u0, 0, (size_t)L->nv * sizeof(double));
    memset(L->src, 0, (size_t)L->np * sizeof(double));
    const int i = L->con[p];
    if (!z) {
        L->src[p] = -1; // w_p enters: its row reads row_p = w_p
        return;
    }
    if (L->type[p] == P_GAMMA) {
        for (int j = 0; j < L->d; j++)
            L->src[L->fblock[i] + j] = 1;
        return;
    }
    pair_apply(L, p, 1, L->u0);
    if (L->fblock[i] >= 0)
        L->src[gamma_pair(L, i)] = L->type[p] == P_NU ? L->m->mu[i] : -1;
}

static double absmax(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s = maxd(s, fabs(x[i]));
    return s;
}

/* Computes q' into L->val. */
static cs_status solve_q(lk *L) {
    source_q(L);
    return basis_solve(L, L->val, NULL, 0);
}

/* How far below 0 a value of q' may lie, as rounding of its scale (absmax(L->val)). */
static double q_tol(const lk *L, double scale) {
    return 1e-10 * scale + 10 * DBL_EPSILON * L->np * L->growth * scale;
}

/* True when q' is feasible within rounding of its scale (absmax(L->val)). */
static bool q_feasible(const lk *L, double scale) {
    const double tol = q_tol(L, scale);
    for (int p = 0; p < L->np; p++)
        if (!(L->val[p] >= -tol))
            return false;
    return true;
}

/* The pyramid direction most opposed to the tangential velocity (cv[1], cv[2]): the one a
 * sliding contact's friction takes (first index on ties). */
static int opposed_dir(const lk *L, const double cv[3]) {
    int x = 0;
    for (int j = 1; j < L->d; j++)
        x = L->dc[j] * cv[1] + L->ds[j] * cv[2] < L->dc[x] * cv[1] + L->ds[x] * cv[2] ? j : x;
    return x;
}

/* Contact i's block just appended (its nu left the basis: theta_i drives next) starts sliding
 * against its tangential velocity v_t at the current point: lambda_i and phi_X (X: the direction
 * most opposed to v_t) basic, the other sigma basic, covering entries 0. Then lambda_i = -d_X .
 * v_t >= 0 (d is even: directions come in opposite pairs), phi_X = mu_i theta_i = 0 and sigma_j
 * = (d_j - d_X) . v_t >= 0, none moving with z0: feasible without a covering bump. As theta_i
 * rises phi_X follows it, where a block with its w's basic spends pivots on sigma_X and gamma_i
 * first. Other pairs' values are unchanged (phi_X = 0). */
static void slide_block(lk *L, int i) {
    // A pass over the pairs (apply_basic); the pivot's next meter call stops.
    (void)cs__meter_add(&L->meter, L->nv + 12 * (int64_t)L->n + L->np);
    memcpy(L->u, L->m->vstar, (size_t)L->nv * sizeof(double));
    apply_basic(L, L->val, L->u);
    double *cv = L->cv + 3 * i;
    contact_velocity(L, i, L->u, true, cv);
    const int f = L->fblock[i], g = f + L->d;
    const int x = opposed_dir(L, cv);
    const double vx = L->dc[x] * cv[1] + L->ds[x] * cv[2];
    for (int j = 0; j <= L->d; j++) {
        L->cov[f + j] = 0;
        L->val[f + j] = j < L->d ? L->dc[j] * cv[1] + L->ds[j] * cv[2] - vx : -vx;
    }
    L->val[f + x] = 0;
    L->zb[f + x] = L->zb0[f + x] = 1;
    L->zb[g] = L->zb0[g] = 1;
    L->kdirty = true;
}

/* Lexicographic ratio test among the rows whose basic variable falls as the driving variable
 * rises (column L->mv), not rejected, with m'_p below -(rounding of max |m'|); vmax =
 * absmax(L->val). Returns the blocking row, -1 when no row blocks (a ray), or -2 when a column
 * solve fails or the meter's deadline passed (L->meter.passed). */
static int ratio_test(lk *L, double vmax) {
    // The column's largest entry and the candidates: two passes over the pairs.
    if (cs__meter_add(&L->meter, 2 * (int64_t)L->np))
        return -2;
    int *cand = L->cand;
    const double qerr = DBL_EPSILON * L->np * L->growth * vmax;
    const double thr = -1e-11 * absmax(L->mv, L->np);
    double t = INFINITY;
    int ncand = 0;
    // One pass: the candidates in increasing order and their first (Harris-relaxed) ratio.
    const double *mv = L->mv, *val = L->val;
    const uint8_t *rejected = L->rejected;
    for (int p = 0, np = L->np; p < np; p++) {
        const bool in = (mv[p] < thr) & !rejected[p];
        cand[ncand] = p;
        ncand += in;
        t = in ? mind(t, -(val[p] + qerr) / mv[p]) : t;
    }
    if (ncand == 0)
        return -1;
    const bool open_cand = L->mv[L->open] < thr && !L->rejected[L->open];
    // z0 blocking within a relative 1e-9 of the minimum ends the run: prefer it (any tie with it
    // reaches the same solution, and passing it by leaves z0 at rounding level on a degenerate
    // path).
    if (open_cand && -L->val[L->open] / L->mv[L->open] <= t * (1 + 1e-9) + 1e-300)
        return L->open;
    // The ties, then the walk over B0's pairs to the columns that break them.
    if (cs__meter_add(&L->meter, ncand + (int64_t)L->np))
        return -2;
    int kept = 0;
    for (int c = 0; c < ncand; c++) {
        const int p = cand[c];
        cand[kept] = p;
        kept += val[p] + mv[p] * t < qerr;
    }
    // cand stays in increasing order; cand[ci] is the first candidate >= j.
    for (int j = 0, ci = 0; j < L->np && kept > 1; j++) {
        // Column j of B^-1 B0: the unit vector of row j while B0's variable of pair j is still
        // basic there, else minus the column m' of that variable.
        while (ci < kept && cand[ci] < j)
            ci++;
        const bool v0_basic = L->zb0[j] ? z_basic(L, j) : w_basic(L, j);
        if (v0_basic) {
            if (ci < kept && cand[ci] == j) {
                memmove(cand + ci, cand + ci + 1, (size_t)(kept - ci - 1) * sizeof(int));
                kept--;
            }
            continue;
        }
        if (cs__meter_add(&L->meter, L->np + L->nv))
            return -2;
        source_var(L, j, L->zb0[j]);
        if (basis_solve(L, L->beta, L->cand, kept) != CS_CONVERGED)
            return -2;
        double best = INFINITY, bmax = 0;
        for (int c = 0; c < kept; c++) {
            const int p = cand[c];
            best = mind(best, L->beta[p] / L->mv[p]); // (-beta) / (-m')
            bmax = maxd(bmax, fabs(L->beta[p]));
        }
        const double tie = 1e-12 * L->np * bmax;
        int k2 = 0;
        for (int c = 0; c < kept; c++) {
            const int p = cand[c];
            if (L->beta[p] - best * L->mv[p] >= -tie)
                cand[k2++] = p;
        }
        kept = k2 > 0 ? k2 : kept;
        ci = 0;
    }
    return cand[0];
}

/* The values after a pivot at level t with blocking row s, into L->saved: x + t m' in every
 * row, except that the open row takes the driving variable at t and row s (unless it is the open
 * row) takes z0. Returns their largest magnitude. */
static double step_values(lk *L, double t, int s, double z0) {
    double *x = L->saved;
    for (int p = 0; p < L->np; p++)
        x[p] = L->val[p] + t * L->mv[p];
    x[s] = z0;
    x[L->open] = t;
    return absmax(x, L->np);
}

/* State a rejected pivot restores. */
typedef struct pivot_undo {
    int open, np, s, grown;
    double vmax;
    bool drive_z;
    uint8_t zb_open, zb_s;
} pivot_undo;

/* Hash of the basis: which member of each pair is basic, and the open pair. The flags go in 8 at
 * a time (each step a bijection of h; the shift carries high bits down) and the open pair after
 * them, so that no change of open can cancel a change of a flag. */
static uint64_t basis_hash(const lk *L) {
    const uint64_t prime = 0x100000001b3ull;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    int p = 0;
    for (; p + 8 <= L->np; p += 8) {
        uint64_t w;
        memcpy(&w, L->zb + p, sizeof w);
        h = (h ^ w) * prime;
        h ^= h >> 29;
    }
    for (; p < L->np; p++)
        h = (h ^ L->zb[p]) * prime;
    h = (h ^ (uint64_t)(L->open + 1)) * prime;
    return (h ^ h >> 29) ^ (uint64_t)L->np << 32;
}

/* Records the basis after an accepted pivot (nseen: bases recorded so far in this run); true
 * when it is one of the latest ones, i.e. the pivots are cycling (exact lexicographic Lemke
 * never revisits a basis). */
static bool cycling(lk *L, int nseen) {
    const uint64_t h = basis_hash(L);
    for (int k = 0; k < CYCLE_MEMORY && k < nseen; k++)
        if (L->seen[k] == h)
            return true;
    L->seen[nseen % CYCLE_MEMORY] = h;
    return false;
}

/* True when contact i (-1: none), whose nu just left the basis, gets its friction block now. */
static bool grows(const lk *L, int i) {
    return L->reduced && !L->frictionless && i >= 0 && L->fblock[i] < 0 && L->m->mu[i] > 0;
}

/* Lemke from the current (complementary) basis; have_q: its q' is in L->val already (and its
 * kernel current), else it is solved first. warm: the basis came from a previous tick or a
 * guess; the covering vector is then chosen so every basic value rises at rate 1 with z0
 * (c = B 1), i.e. Lemke with covering vector 1 on the principal pivot transform. */
static cs_status run(lk *L, bool warm, bool have_q, int cap, cs_stats *st) {
    cs_status status = have_q ? CS_CONVERGED : solve_q(L);
    if (status != CS_CONVERGED)
        return status;
    // Feasibility, the warm covering vector (frame velocities and rows) and step 0's passes.
    if (cs__meter_add(&L->meter, 2 * (int64_t)L->np))
        return CS_DEADLINE;
    if (q_feasible(L, absmax(L->val, L->np)))
        return CS_CONVERGED;
    if (cs__meter_add(&L->meter, (warm ? 3 * (int64_t)L->np + 18 * (int64_t)L->n : 0) + 2 * L->np))
        return CS_DEADLINE;
    if (warm) {
        // c_p = [w_p basic] - (M 1_B)_p: evaluate the rows with every basic z at 1.
        memset(L->u0, 0, (size_t)L->nv * sizeof(double));
        for (int p = 0; p < L->np; p++)
            L->src[p] = 1;
        apply_basic(L, L->src, L->u0);
        for (int i = 0; i < L->n; i++)
            contact_velocity(L, i, L->u0, L->fblock[i] >= 0, L->cv + 3 * i);
        for (int p = 0; p < L->np; p++) {
            const int i = L->con[p];
            double row;
            if (L->type[p] == P_GAMMA) {
                row = (z_basic(L, i) ? L->m->mu[i] : 0);
                for (int j = 0; j < L->d; j++)
                    row -= z_basic(L, L->fblock[i] + j);
            } else {
                row = row_value(L, p);
                if (L->type[p] == P_SIGMA && z_basic(L, gamma_pair(L, i)))
                    row += 1;
            }
            L->cov[p] = (w_basic(L, p) ? 1 : 0) - row;
        }
        L->kdirty = true;
    }
    // Step 0: z0 enters at the level that lifts the most negative basic value (relative to its
    // rate c') to zero; first index among ties.
    double worst = 0;
    for (int p = 0; p < L->np; p++)
        worst = maxd(worst, -L->val[p] / (warm ? 1 : L->cov[p]));
    const double band = 1e-12 * worst;
    int r = 0;
    while (-L->val[r] / (warm ? 1 : L->cov[r]) < worst - band)
        r++;
    int leaving_nu = L->type[r] == P_NU && !L->zb[r] ? r : -1;
    L->drive_z = !L->zb[r];
    L->zb[r] = 0;
    L->open = r;
    L->kdirty = true;
    st->pivots++;
    const bool grew = grows(L, leaving_nu);
    if (grew)
        append_block(L, leaving_nu);
    if ((status = solve_q(L)) != CS_CONVERGED)
        return status;
    if (grew)
        slide_block(L, leaving_nu);

    if (cs__meter_add(&L->meter, 2 * (int64_t)L->np))
        return CS_DEADLINE;
    memset(L->rejected, 0, (size_t)L->np);
    bool any_rejected = false;
    double vmax = absmax(L->val, L->np); // of L->val, kept up to date with it
    int run_pivots = 0;
    for (;;) {
        if (st->pivots >= cap)
            return CS_MAXITER;
        // A pivot costs far more than a clock read: check before each one.
        if (cs__meter_check(&L->meter))
            return CS_DEADLINE;
        source_var(L, L->open, L->drive_z);
        if ((status = basis_solve(L, L->mv, NULL, 0)) != CS_CONVERGED)
            return status;
        const int s = ratio_test(L, vmax);
        if (s < 0)
            return L->meter.passed ? CS_DEADLINE : s == -1 ? CS_RAY : CS_SINGULAR;
        // Pivot: the driving variable becomes basic in the open pair at level t; s's basic
        // variable leaves and, unless it is z0, s becomes the open pair holding z0.
        const double t = maxd(-L->val[s] / L->mv[s], 0.0);
        pivot_undo u = {.open = L->open, .np = L->np, .s = s, .grown = -1, .vmax = vmax,
                        .drive_z = L->drive_z, .zb_open = L->zb[L->open], .zb_s = L->zb[s]};
        // The new values go to the spare buffer (L->saved keeps the old ones for an undo).
        double *nval = L->saved;
        if (cs__meter_add(&L->meter, 2 * (int64_t)L->np))
            return CS_DEADLINE;
        vmax = step_values(L, t, s, L->val[L->open] + t * L->mv[L->open]);
        L->saved = L->val;
        L->val = nval;
        L->zb[L->open] = L->drive_z;
        const bool done = s == L->open;
        leaving_nu = -1;
        if (done) {
            L->open = -1;
        } else {
            leaving_nu = L->type[s] == P_NU && !L->zb[s] ? s : -1;
            L->drive_z = !L->zb[s];
            L->zb[s] = 0;
            L->open = s;
        }
        L->kdirty = true;
        if (grows(L, leaving_nu)) {
            append_block(L, leaving_nu);
            slide_block(L, leaving_nu);
            u.grown = leaving_nu;
        }
        // The values follow the pivot exactly (x += t m'), a new friction block's rows come
        // from the velocity at the new point, and the final answer is recomputed from scratch,
        // which also catches a pivot gone bad.
        // The values' scale and check, the basis hash and the clear of the rejected rows.
        if (cs__meter_add(&L->meter, 3 * (int64_t)L->np))
            return CS_DEADLINE;
        bool ok;
        if (done) {
            ok = (status = solve_q(L)) == CS_CONVERGED;
            vmax = absmax(L->val, L->np);
            ok = ok && q_feasible(L, vmax);
        } else {
            ok = (status = build_kernel(L)) == CS_CONVERGED;
            if (u.grown >= 0)
                vmax = absmax(L->val, L->np);
        }
        if (status == CS_DEADLINE)
            return status;
        if (!ok) {
            // Numerically bad pivot: undo it and exclude the row from this ratio test.
            if (u.grown >= 0)
                L->fblock[u.grown] = -1;
            L->nblk -= u.grown >= 0;
            L->np = u.np;
            L->open = u.open;
            L->drive_z = u.drive_z;
            L->zb[u.open] = u.zb_open;
            L->zb[s] = u.zb_s;
            double *old = L->saved;
            L->saved = L->val;
            L->val = old;
            vmax = u.vmax;
            L->kdirty = true;
            if ((status = build_kernel(L)) != CS_CONVERGED)
                return status;
            L->rejected[s] = 1;
            any_rejected = true;
            continue;
        }
        st->pivots++;
        if (any_rejected)
            memset(L->rejected, 0, (size_t)L->np);
        any_rejected = false;
        if (done)
            return CS_CONVERGED;
        if (cycling(L, run_pivots++))
            return CS_MAXITER;
        // z0 at rounding level: the current point already solves the LCP (the open pair's
        // members are both 0); confirm with values recomputed from scratch.
        if (L->val[L->open] <= 1e-11 * vmax) {
            if ((status = solve_q(L)) != CS_CONVERGED)
                return status;
            if (cs__meter_add(&L->meter, 2 * (int64_t)L->np))
                return CS_DEADLINE;
            vmax = absmax(L->val, L->np);
            if (L->val[L->open] <= 1e-11 * vmax && q_feasible(L, vmax))
                return CS_CONVERGED;
        }
    }
}

/* Cold basis: every w basic, friction blocks for all frictional contacts unless reduced. */
static void init_cold(lk *L) {
    // A pass over the contacts; the run's first meter call stops.
    (void)cs__meter_add(&L->meter, 4 * (int64_t)L->n);
    L->np = L->n;
    L->nblk = L->nlam = 0;
    L->open = -1;
    L->kc->k = 0;
    for (int i = 0; i < L->n; i++) {
        L->type[i] = P_NU;
        L->con[i] = i;
        L->dir[i] = 0;
        L->zb[i] = L->zb0[i] = 0;
        L->cov[i] = cover(L, i);
        L->off[i] = -L->m->bias[i] * L->scale[i];
        L->fblock[i] = -1;
        L->lam[i] = 0;
        L->xc[i] = -1;
    }
    if (!L->reduced)
        for (int i = 0; i < L->n; i++)
            if (L->m->mu[i] > 0)
                append_block(L, i);
    L->kdirty = true;
}

/* Warm basis from the previous tick's words (the starting basis B0 of the lexicographic rule). */
static void init_warm(lk *L, const uint32_t *warm) {
    init_cold(L);
    (void)cs__meter_add(&L->meter, (int64_t)L->n * (L->d + 2));
    for (int i = 0; i < L->n; i++) {
        const uint32_t w = warm[i];
        L->zb[i] = L->zb0[i] = (w & CS_BASIS_THETA) != 0;
        if (L->m->mu[i] > 0 && L->fblock[i] < 0 && (w & CS_BASIS_BLOCK))
            append_block(L, i);
        if (L->fblock[i] < 0)
            continue;
        for (int j = 0; j < L->d; j++)
            L->zb[L->fblock[i] + j] = L->zb0[L->fblock[i] + j] = (w & CS_BASIS_PHI(j)) != 0;
        L->zb[gamma_pair(L, i)] = L->zb0[gamma_pair(L, i)] = (w & CS_BASIS_LAMBDA) != 0;
    }
}

/* The frictionless LCP of the normal rows in this solver's units (SCALING), for the crash start:
 * A = N^T M^-1 N (column-major [n x n], each entry stored in both halves, so exactly symmetric)
 * and b = N^T v* - bias, q of the nu rows. Two contacts meet only through a moving body they
 * share. Returns CS_DEADLINE when the deadline passes on the way (the meter is fed per column). */
static cs_status normal_lcp(lk *L, double *A, double *b) {
    const int n = L->n;
    for (int j = 0; j < n; j++) {
        const cside *cj = &L->side[j];
        for (int i = j; i < n; i++) {
            const cside *ci = &L->side[i];
            double a = 0;
            for (int si = 0; si < ci->ns; si++)
                for (int sj = 0; sj < cj->ns; sj++)
                    a += ci->b[si] == cj->b[sj] ? dot6(ci->J[si], cj->J[sj] + 6) : 0;
            A[i + (size_t)j * n] = A[j + (size_t)i * n] = a;
        }
        double c[3];
        contact_velocity(L, j, L->m->vstar, false, c);
        b[j] = c[0] + L->off[j];
        // An entry is a 6- to 24-term product, as a kernel entry (build_kernel).
        if (cs__meter_add(&L->meter, 12 * (int64_t)(n - j)))
            return CS_DEADLINE;
    }
    return CS_CONVERGED;
}

/* The frictionless answer's active set by Baraff's pivoting on normal_lcp()'s block (at most
 * CRASH_LCP_MAX contacts), into L->crash (theta words), with L->u the velocity there. The block
 * and the LCP's scratch are taken from ws and given back. Returns the LCP's status, or
 * CS_ENOSPACE when ws is short of them. */
static cs_status crash_lcp(lk *L, cs_workspace *ws, const cs_options *opt, cs_stats *st) {
    const size_t mark = cs__ws_mark(ws);
    const int n = L->n;
    double *A = cs__ws_alloc(ws, (size_t)n * n * sizeof(double));
    double *b = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    double *theta = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    cs_status status = A && b && theta ? normal_lcp(L, A, b) : CS_ENOSPACE;
    if (status == CS_CONVERGED) {
        cs_stats lcp;
        status = cs_dantzig_lcp(ws, n, A, n, b, opt, theta, &lcp);
        st->pivots += lcp.pivots;
    }
    if (status == CS_CONVERGED) {
        memcpy(L->u, L->m->vstar, (size_t)L->nv * sizeof(double));
        for (int i = 0; i < n; i++) {
            L->crash[i] = theta[i] > 0 ? CS_BASIS_THETA : 0;
            if (theta[i] > 0)
                contact_apply(L, i, (double[3]){theta[i], 0, 0}, L->u);
        }
    }
    cs__ws_release(ws, mark);
    return status;
}

/* The crash basis of a cold start of the reduced variant, into L->crash: the frictionless LCP is
 * solved first, and every contact active there starts sliding against its tangential velocity
 * at that solution (theta, lambda and the phi of the direction most opposed to that velocity
 * basic). Lemke then repairs the guess like a warm basis (crash_step). On peg-in-hole problems
 * the guess is usually the answer or a few pivots from it, where a cold run takes 20-40 (see the
 * benchmark). The frictionless LCP is solved by crash_lcp() up to CRASH_LCP_MAX contacts, above
 * that (or when ws is short) by a Lemke run without friction blocks. Returns the frictionless
 * solve's status (its pivots count in st). */
static cs_status crash_basis(lk *L, cs_workspace *ws, const cs_options *opt, int cap,
                             cs_stats *st) {
    init_cold(L);
    cs_status status = L->n <= CRASH_LCP_MAX ? crash_lcp(L, ws, opt, st) : CS_ENOSPACE;
    if (status == CS_ENOSPACE) {
        L->frictionless = true;
        status = run(L, false, false, cap, st);
        L->frictionless = false;
        // L->u is the velocity of run's last (full) basis solve.
        for (int i = 0; i < L->n; i++)
            L->crash[i] = z_basic(L, i) ? CS_BASIS_THETA : 0;
    }
    if (status != CS_CONVERGED)
        return status;
    for (int i = 0; i < L->n; i++) {
        if (!L->crash[i] || !(L->m->mu[i] > 0))
            continue;
        double c[3];
        contact_velocity(L, i, L->u, true, c);
        L->crash[i] |= CS_BASIS_BLOCK | CS_BASIS_LAMBDA | CS_BASIS_PHI(opposed_dir(L, c));
    }
    return CS_CONVERGED;
}

/* True when every contact acts on the same moving body (kinematic bodies and the world aside). */
static bool one_moving_body(const lk *L) {
    int body = -1;
    for (int i = 0; i < L->n; i++)
        for (int side = 0; side < L->side[i].ns; side++) {
            const int b = L->side[i].b[side];
            if (cs_model_is_kinematic(L->m, b))
                continue;
            if (body >= 0 && b != body)
                return false;
            body = b;
        }
    return true;
}

/* One block step on the crash basis before Lemke repairs it: every nu/theta pair that q' of the
 * guess shows infeasible is pivoted at once (as block principal pivoting does): a contact held
 * active with theta < 0 is let go, one held inactive with nu < 0 becomes active, sliding against
 * its tangential velocity there, as in crash_basis(). Friction moves the load of a
 * near-degenerate contact set (the twin rims of a round peg): the frictionless answer's active
 * set then holds contacts that would have to pull, and Lemke, repairing the guess along its path,
 * lets them go one by one while the contacts that take over start sliding the way the velocity
 * points on that path, often far from the answer's direction, and turn one pyramid direction per
 * two pivots (round pegs of 32 contacts, frictionless answer by a Lemke run: up to 25 pivots,
 * 20 with this step). The sliding directions of the other contacts are kept: recomputing them
 * from q' too gave longer runs.
 * Only when the contacts move one body: in a stack the sliding guess is wrong at most contacts
 * (stacked boxes mostly stick), the signs of theta under it say little, and the step moved runs
 * of 40-120 pivots by up to 30 either way, 10-15 % more instructions in the median of stacks of
 * 4-5 boxes. Leaves L at the stepped basis, or at the crash basis when nothing changes or the
 * stepped kernel is singular, with q' in L->val (kernel current) and L->crash its words. Returns
 * the crash basis's solve status, or CS_DEADLINE. */
static cs_status crash_step(lk *L) {
    init_warm(L, L->crash);
    cs_status status = solve_q(L);
    if (status != CS_CONVERGED || !one_moving_body(L))
        return status;
    const double tol = q_tol(L, absmax(L->val, L->np));
    bool changed = false;
    for (int i = 0; i < L->n; i++) {
        L->guess[i] = L->crash[i];
        if (!(L->val[i] < -tol)) // theta_i or nu_i, whichever is basic
            continue;
        changed = true;
        if (z_basic(L, i)) {
            L->guess[i] = 0;
            continue;
        }
        L->guess[i] = CS_BASIS_THETA;
        if (!(L->m->mu[i] > 0))
            continue;
        double c[3];
        contact_velocity(L, i, L->u, true, c);
        L->guess[i] |= CS_BASIS_BLOCK | CS_BASIS_LAMBDA | CS_BASIS_PHI(opposed_dir(L, c));
    }
    if (!changed)
        return CS_CONVERGED;
    init_warm(L, L->guess);
    status = solve_q(L);
    if (status == CS_CONVERGED) {
        memcpy(L->crash, L->guess, (size_t)L->n * sizeof(uint32_t));
        return status;
    }
    if (status == CS_DEADLINE)
        return status;
    // A singular step: repair the crash basis itself.
    init_warm(L, L->crash);
    return solve_q(L);
}

/* Points L's arrays into the workspace; false when it is too small. */
static bool alloc_lk(lk *L, cs_workspace *ws, const cs_limits *lim) {
    const size_t P = (size_t)lim->max_contacts * (2 + (size_t)lim->max_dirs);
    const size_t n = (size_t)lim->max_contacts, K = (size_t)L->kmax, nv = (size_t)L->nv;
    bool ok = true;
#define GET(ptr, bytes) ok = (((ptr) = cs__ws_alloc(ws, (bytes))) != NULL) && ok
    GET(L->js, cs_model_jacobian_size(lim));
    GET(L->type, P);
    GET(L->zb, P);
    GET(L->zb0, P);
    GET(L->rejected, P);
    GET(L->con, P * sizeof(int));
    GET(L->dir, P * sizeof(int));
    GET(L->cand, P * sizeof(int));
    GET(L->cov, P * sizeof(double));
    GET(L->off, P * sizeof(double));
    GET(L->val, P * sizeof(double));
    GET(L->mv, P * sizeof(double));
    GET(L->beta, P * sizeof(double));
    GET(L->src, P * sizeof(double));
    GET(L->saved, P * sizeof(double));
    GET(L->fblock, n * sizeof(int));
    GET(L->xc, n * sizeof(int));
    GET(L->lamlist, n * sizeof(int));
    GET(L->blist, n * sizeof(int));
    GET(L->lam, n);
    GET(L->want, n);
    GET(L->side, n * sizeof(cside));
    GET(L->crash, n * sizeof(uint32_t));
    GET(L->guess, n * sizeof(uint32_t));
    GET(L->cv, 3 * n * sizeof(double));
    GET(L->scale, n * sizeof(double));
    GET(L->kpiv, K * sizeof(int));
    GET(L->from_row, K * sizeof(int));
    GET(L->from_col, K * sizeof(int));
    GET(L->fresh, K * sizeof(int));
    for (int c = 0; c < 2; c++) {
        kside *ks = &L->ks[c];
        GET(ks->row, (K + 1) * sizeof(int));
        GET(ks->rx, K * sizeof(int));
        GET(ks->col, K * sizeof(int));
        GET(ks->cx, K * sizeof(int));
        GET(ks->rg, K);
        GET(ks->grow, K * sizeof(gvec));
        GET(ks->gcol, K * sizeof(gvec));
        GET(ks->E, K * K * sizeof(double));
    }
    L->kc = &L->ks[0];
    GET(L->K, K * K * sizeof(double));
    GET(L->rhs, K * sizeof(double));
    GET(L->dvz, nv * sizeof(double));
    GET(L->u0, nv * sizeof(double));
    GET(L->w0, nv * sizeof(double));
    GET(L->u, nv * sizeof(double));
#undef GET
    return ok;
}

/* Contact-frame impulses (scaled back) and basis words of the final basis. */
static void extract(const lk *L, double *lambda, uint32_t *basis) {
    for (int i = 0; i < L->n; i++) {
        double *l = lambda + 3 * i;
        uint32_t w = z_basic(L, i) ? CS_BASIS_THETA : 0;
        l[0] = z_basic(L, i) ? maxd(L->val[i], 0) : 0;
        l[1] = l[2] = 0;
        if (L->fblock[i] >= 0) {
            w |= CS_BASIS_BLOCK;
            for (int j = 0; j < L->d; j++) {
                const int p = L->fblock[i] + j;
                if (!z_basic(L, p))
                    continue;
                w |= CS_BASIS_PHI(j);
                l[1] += maxd(L->val[p], 0) * L->dc[j];
                l[2] += maxd(L->val[p], 0) * L->ds[j];
            }
            if (z_basic(L, gamma_pair(L, i)))
                w |= CS_BASIS_LAMBDA;
        }
        for (int k = 0; k < 3; k++)
            l[k] *= L->scale[i];
        basis[i] = w;
    }
}

/* Points L's arrays into the workspace and fills the Jacobian table and directions. */
static bool setup(lk *L, cs_workspace *ws, const cs_model *m, const cs_options *opt,
                  bool reduced) {
    const cs_limits *lim = cs__ws_limits(ws);
    *L = (lk){.m = m, .n = m->nc, .d = m->nd, .nv = 6 * m->nb, .reduced = reduced,
              .kmax = 6 * lim->max_bodies + 2, .growth = 1, .meter = cs__meter_start(opt)};
    if (m->nd > 16 || !alloc_lk(L, ws, lim))
        return false;
    // Cut short by the deadline the table is partial, and the run's first meter call stops.
    (void)cs_model_jacobian(m, 3, L->js, &L->meter);
    for (int i = 0; i < L->n; i++) {
        // Frame row 0 of side s: 6 Jacobian entries, then their image under M^-1.
        cside *cs = &L->side[i];
        cs->ns = 0;
        for (int s = 0; s < 2; s++) {
            const int b = s ? m->ib[i] : m->ia[i];
            if (b < 0)
                continue;
            cs->b[cs->ns] = b;
            cs->J[cs->ns++] = L->js + ((size_t)(3 * i) * 2 + s) * 12;
        }
        L->scale[i] = 1;
    }
    for (int j = 0; j < L->d; j++)
        cs_lemke_direction(L->d, j, &L->dc[j], &L->ds[j]);
    return true;
}

/* Scales each contact's Jacobian rows and their images in L->js by s_i (SCALING), which setup()
 * left at 1. */
static void scale_rows(lk *L) {
    for (int i = 0; i < L->n; i++) {
        const cside *cs = &L->side[i];
        const double s = L->scale[i] = cs_lemke_contact_scale(L->m, i);
        // W_ii's trace (cs_lemke_contact_scale) and 72 products; the run's first meter call
        // stops.
        (void)cs__meter_add(&L->meter, 64);
        for (int r = 0; r < 3; r++)
            for (int side = 0; side < cs->ns; side++) {
                double *J = L->js + (cs->J[side] - L->js) + 24 * r; // the row and its image
                for (int k = 0; k < 12; k++)
                    J[k] *= s;
            }
    }
}

cs_status cs__lemke_structural_basis(cs_workspace *ws, const cs_model *m, const uint8_t *zb,
                                     int open, bool drive_z, double *q, double *mcol) {
    const size_t mark = cs__ws_mark(ws);
    lk L;
    cs_status status = CS_ENOSPACE;
    if (setup(&L, ws, m, NULL, false)) {
        init_cold(&L);
        memcpy(L.zb, zb, (size_t)L.np);
        L.open = open;
        if (open >= 0)
            L.zb[open] = 0;
        status = solve_q(&L);
        if (status == CS_CONVERGED) {
            memcpy(q, L.val, (size_t)L.np * sizeof(double));
            if (open >= 0) {
                source_var(&L, open, drive_z);
                status = basis_solve(&L, mcol, NULL, 0);
            }
        }
    }
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs__lemke_structural_set_up(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                      bool reduced) {
    const size_t mark = cs__ws_mark(ws);
    lk L;
    cs_status status = CS_ENOSPACE;
    if (setup(&L, ws, m, opt, reduced)) {
        scale_rows(&L);
        init_cold(&L);
        status = L.meter.passed ? CS_DEADLINE : CS_CONVERGED;
    }
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs__lemke_structural_check(cs_workspace *ws, const cs_model *m, const double *lambda,
                                     double *v, cs_certificate *cert, uint8_t *state,
                                     cs__meter *meter) {
    const size_t mark = cs__ws_mark(ws);
    double *scratch = cs__ws_alloc(ws, 6 * (size_t)m->nb * sizeof(double));
    cs_status status = CS_ENOSPACE;
    if (scratch)
        status = cs__model_velocity_metered(m, lambda, v, scratch, meter)
                     ? CS_DEADLINE
                     : cs__certify_metered(ws, m, lambda, v, true, cert, state, meter);
    cs__ws_release(ws, mark);
    // A certificate the deadline cut judges nothing; a short workspace fails the check.
    if (status == CS_DEADLINE)
        return status;
    const double tol = meter->opt ? meter->opt->cert_tol : 0;
    return status == CS_CONVERGED && cs_certificate_is_ok(cert, tol, true) ? CS_CONVERGED
                                                                            : CS_SINGULAR;
}

/* The run's end: a converged run's answer goes to lambda and basis and must pass its check
 * (cs__lemke_structural_check; v, cert and state are the caller's): a badly conditioned kernel
 * can spoil values that still looked feasible. A failed check becomes CS_SINGULAR, so the caller
 * tries another start. */
static cs_status finish(lk *L, cs_workspace *ws, cs_status status, double *lambda,
                        uint32_t *basis, double *v, cs_certificate *cert, uint8_t *state) {
    if (status != CS_CONVERGED)
        return status;
    extract(L, lambda, basis);
    return cs__lemke_structural_check(ws, L->m, lambda, v, cert, state, &L->meter);
}

cs_status cs_lemke_structural_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                    bool reduced, const uint32_t *warm, double *lambda,
                                    uint32_t *basis, double *v, cs_certificate *cert,
                                    uint8_t *state, cs_stats *st) {
    const size_t mark = cs__ws_mark(ws);
    *st = (cs_stats){0};
    if (m->jt)
        return CS_EINPUT;
    lk L;
    if (!setup(&L, ws, m, opt, reduced)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    scale_rows(&L);
    // The cap of the explicit LCP of the same size: Lemke visits each basis at most once.
    const int N = L.n * (2 + L.d), cap = N * N + 4 * N + 8;
    cs_status status = CS_RAY;
    if (warm) {
        init_warm(&L, warm);
        status = finish(&L, ws, run(&L, true, false, cap, st), lambda, basis, v, cert, state);
    }
    // Then the crash basis (reduced variant), then cold runs.
    if (reduced && status != CS_CONVERGED && status != CS_DEADLINE) {
        status = crash_basis(&L, ws, opt, cap, st);
        if (status == CS_CONVERGED && (status = crash_step(&L)) == CS_CONVERGED)
            status = run(&L, true, true, cap, st);
        status = finish(&L, ws, status, lambda, basis, v, cert, state);
    }
    for (L.attempt = 0; L.attempt < COLD_ATTEMPTS && status != CS_CONVERGED &&
                        status != CS_DEADLINE && status != CS_ENOSPACE;
         L.attempt++) {
        init_cold(&L);
        status = finish(&L, ws, run(&L, false, false, cap, st), lambda, basis, v, cert, state);
    }
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

size_t cs__lemke_structural_run_size(const cs_limits *lim) {
    const size_t own = cs_lemke_structural_size(lim);
    const size_t standard = lim->max_joints > 0 ? cs_lemke_standard_size(lim) : 0;
    return own > standard ? own : standard;
}

static cs_status run_variant(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out,
                             bool reduced) {
    if (in->m->jt) {
        memset(out->basis, 0, (size_t)in->m->nc * sizeof(uint32_t));
        // lemke scales the rows of the explicit LCP; lemke-structural keeps ArtiSynth's path.
        return reduced ? cs__lemke_standard_run_scaled(ws, in, out)
                       : cs__lemke_standard_run(ws, in, out);
    }
    const cs_status ret =
        cs_lemke_structural_solve(ws, in->m, in->opt, reduced, in->basis, out->lambda,
                                  out->basis, out->v, out->cert, out->state, out->st);
    out->certified = ret == CS_CONVERGED;
    return ret;
}

cs_status cs__lemke_structural_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out) {
    return run_variant(ws, in, out, false);
}

cs_status cs__lemke_structural_run_reduced(cs_workspace *ws, const cs__solve_in *in,
                                           cs__solve_out *out) {
    return run_variant(ws, in, out, true);
}
