/* SPDX-License-Identifier: MIT */
/* Dantzig's algorithm as Baraff presents it (1994), at the velocity level: part 1 the frictionless
 * LCP (section 4), part 2 the bounded problem with bilateral rows (4.5) and friction (5, 5.6, 6).
 * cs_dantzig_solve() takes part 1 for a scene without friction; a scene with friction takes part 1
 * first too and keeps its answer when no loaded contact slides under it (f_t = 0 lies in every
 * cone, and a contact at rest needs no friction: a resting stack, where part 2 would make the
 * same pivots on 3 nc rows), else part 2.
 *
 * VELOCITY LEVEL. Baraff's accelerations a and forces f become the post-step contact velocities and
 * the step's impulses: a = J v = A f + b with A = J M^-1 J^T and b = J v* (minus the gap bias on
 * normal rows), the problem every solver of this project works on. Section 6's dynamic friction,
 * "where the tangential velocity is nonzero", is then friction against the post-step slip, the slip
 * that the certificate (certify.h) judges: a contact that slides after the step is one whose
 * friction ends on its polygon's boundary (an edge or a vertex, the set NCF) with the slip in the
 * outward normal cone there, and its friction is tied to mu times its normal impulse (Baraff's
 * substitution f_F = -mu f_N, which makes the system unsymmetric and lets a drive go on forever:
 * CS_RAY). Which contacts slide is found by the pivoting, not guessed from the free-motion slip, so
 * no threshold decides it and a slide that the step stops sticks.
 *
 * PART 1. THE PROBLEM. Find f >= 0 with w = A f + b >= 0 and f_i w_i = 0, A = N M^-1 N^T symmetric
 * PSD (often rank-deficient: four coplanar contacts under a box give rank 3).
 *
 * THE ALGORITHM. Index sets C (clamped: w_i = 0, f_i >= 0) and NC (f_i = 0, w_i >= 0); every other
 * index is unprocessed. While some w_d < 0, drive-to-zero(d): raise f_d with the clamped contacts
 * kept at w = 0, i.e. the direction df_d = 1, df_C = -A_CC^-1 A_Cd (fdirection), and take the
 * largest step that keeps f_C >= 0, w_NC >= 0 and w_d <= 0 (maxstep). The index that limits the
 * step moves between C and NC; when it is d itself, w_d has reached 0 and d joins C.
 *
 * THE START. The drives may begin from any state that keeps the invariants below, and a resting
 * scene's answer clamps nearly every contact that touches. So the first state tried is G = {i :
 * b_i <= viol_tol} (contacts closing or at rest) with f_G = -A_GG^+ b_G, from one LDL^T of A_GG
 * that skips a member whose pivot is at or below the rank tolerance, as the bordered inverse
 * defers it: O(|G|^3 / 6), where the drives pay O(|G|^2) and an O(n) ratio test a pivot over
 * about |G| pivots (solve_subset). It is kept when f_G >= 0 (a tie's rounding-sized forces taken
 * as zero) and every member with a force meets its equation to the violation tolerance: the
 * loaded members are then C, the others unprocessed (driven if violated). Otherwise the solve
 * starts from C empty, as Baraff's does. That check sums w in plain double, whose rounding is
 * below n eps max_i A_ii sum_j f_j (A is PSD, so |A_ij| <= max_i A_ii) plus n + 1 subnormals
 * of underflow: where that bound passes the violation tolerance (forces ~1e5 |b| / A_ii and
 * beyond, or subnormal velocities: never a sane scene's) a violation could hide below it, and
 * an answer of the start is judged by the final check instead (failing it, the solve starts from
 * C empty). A resting stack pays one sum and one comparison, and no drive is left
 * (start_touching).
 *
 * INVARIANTS. f >= 0 everywhere; w_C = 0; w_NC >= 0; indices once processed stay satisfied.
 *
 * WHY IT TERMINATES. Each drive strictly increases w_d and never repeats a clamped set (Baraff's
 * theorems 2-5, appendix A), so each drive ends after finitely many steps. A_CC may be singular
 * when A is, but A_Cd lies in its range, so the system is consistent (footnote 3). C changes by one
 * index per pivot, so A_CC's inverse is kept and bordered or shrunk in O(|C|^2) (section 4.5,
 * bordered.h); an index whose Schur pivot is below RANK_TOL is redundant and held at zero, as a
 * rank-revealing factorization drops it. In floating point a near-singular pivot (a stack whose
 * masses alternate by 1e6) can leave an index with f_j = w_j = 0 whose df_j < 0 when clamped and
 * da_j < 0 when not: zero steps then move it in and out forever. An index that a zero step moves
 * a second time since the last positive step is given up (unprocessed, f_j = 0, as part 2 gives
 * up a cycling index) and driven later if its w goes negative; the step cap turns any other cycle
 * into a definite status.
 *
 * DEADLINE. Read before each step and, through a meter (deadline.h), inside the long stretches:
 * forming A (O(n^2)), updating A_CC's inverse (O(|C|^2)), da = A df (O(n |C|)), the start's
 * and the polish's factorizations (O(|C|^3)), the final check (O(n |C|)) and part 2's set-up
 * before its first drive (passes over the rows and faces, O(n + nf), one reading A's diagonal);
 * part 2's passes over the rows and faces at each pivot (the clamped system's sync, the ratio
 * test, the step, the scans for the next drive: O(n + nf) each) are counted as they end.
 *
 * TOLERANCES. Directions smaller than 1e-11 (relative to the unit step of f_d, or to the largest
 * diagonal of A for w) are treated as zero, and w_d < -1e-10 |b|_inf counts as violated: both far
 * above rounding for the problem sizes admitted (n <= 8192), far below physical velocities. Schur
 * pivots below 1e-11 of the largest diagonal are redundant rows. A direction is solved with one
 * product with A_CC's inverse and refined only when its clamped rows of da miss zero by more than
 * 1e-13 of that diagonal (two orders below where da counts as zero, far above the rounding of a
 * well-conditioned A_CC) or when the step would carry more than 1e-5 of the violation tolerance
 * into the clamped rows' w, where it stays (they are not driven again).
 *
 * THE FINAL CHECK. The drives judge the w they carry from step to step, and they carry f and w
 * through every pivot: near-singular pivots (a clamped pair whose Schur pivot is just above
 * RANK_TOL makes |df| ~ 1e5; a stack whose masses alternate by 1e6) drift both, up to ~1e-5 of
 * the velocity scale, and at huge forces the rounding of w can pass for a rise of w_d, and the
 * answer for a solution where none exists. The rule (rows_hold): every row must meet f w ~ 0 and
 * w >= 0 to 1e-9 of the velocity scale max(|b|, |w|) (part 2's check), with a bound e_i on the
 * error of the computed w_i counted for the answer or against it. First a filter
 * (lcp_holds_plainly): w = A f + b over the loaded columns in plain double, within gamma_{k+1}
 * s_i of the exact value (Higham 2002, 3.5), s_i = |b_i| + sum_j |A_ij f_j| <= max |b| + max_i
 * A_ii sum f for a PSD A, and every row must hold with twice that bound counted against it: an
 * ordinary scene's drives answer to 1e-13 and pass, for one product over A's loaded columns and
 * one pass over the rows, O(n |C|).
 * Only an answer the filter cannot pass is polished: f_C solved afresh on the loaded members of
 * the final clamped set (solve_subset, as the start), f zero elsewhere; where that asks a
 * negative force, f moves toward it as far as f >= 0 allows and the member that reaches zero
 * first leaves C (as a drive's ratio test would have taken it out had f not drifted), and the
 * rest is solved again, POLISH_CUTS members out at most (the mass-ratio stacks and the random
 * near-dependent LCPs need 7; uncapped, |C| solves of O(|C|^3) each and no deadline offline).
 * Then it is judged exactly (lcp_holds): w summed with its rounding errors kept (Dot2), so that a
 * velocity below the last bit of A f still shows, its own error gamma_{k+1}^2 s_i given to the
 * answer while that is below 1e-3 of the tolerance (else it fails). Either sum also counts what
 * underflow can add (a few subnormals a row) against the answer, so an LCP scaled to subnormal
 * velocities fails rather than passing unseen, as does an f so small that 1 / max f overflows,
 * a negative force, or a NaN. When the polished f fails and the drives' own passes, that is the
 * answer. When both fail, the status is CS_MAXITER with the one whose worst row misses by less
 * (as part 2's failed check); the drives do not go on from it, which could end at the pivot cap
 * with a worse iterate. The polish costs a few O(|C|^3 / 6) factorizations, read through the
 * meter like the start's.
 *
 * PART 2. THE PROBLEM (dantzig.h, cs_dantzig_problem). Rows are NORMAL (part 1's law), BILATERAL (a
 * = 0, f free) or friction: a group of one BOX row or a PAIR of rows, whose force f_t must lie in r
 * F (r = mu f_normal, or a fixed bound; F = [-1, 1], or the nd-gon with vertices (cos, sin)(2 pi j
 * / nd), the pyramid of the Lemke solvers) and, where a_t != 0, minimise f_t . a_t over it. F's
 * faces are k: n_k . f_t <= c r (c = cos(pi / nd), or 1), each with a dual sigma_k >= 0, and the
 * law is: w_t = a_t + sum_k sigma_k n_k = 0, sigma_k slack_k = 0.
 *
 * THE SETS (Baraff 5.3, 5.6). Normal rows: C / NC / unprocessed as in part 1. Bilateral rows:
 * always clamped, after one drive that zeroes their velocities together (4.5). Friction rows:
 * processed (w_i = 0 held) or not (f_i held); faces: clamped (slack = 0, sigma >= 0 free: CF's
 * boundary, NC+ / NC- in one dimension, an edge or a vertex of the polygon, "the direction
 * recorded" of 5.6) or not (sigma = 0, slack >= 0). A group has at most as many clamped faces as
 * processed rows, so every system is square.
 *
 * THE DRIVES. Normals first, the most violated, then friction rows, the largest |w| (5.5: a normal
 * before its friction). A friction row is driven against its velocity (df_i = -sign w_i, Baraff's
 * x-then-y of 5.6, one row at a time) until w_i = 0, or until its force reaches a face (the bound):
 * then a corner of the polygon is turned when an old face can hand its dual to the new one, else
 * the row is done, held by the faces, whose duals are read from the velocity. fdirection solves the
 * clamped rows' equations (da = 0, dw = 0, dslack = 0) for the moving forces and duals; the system
 * is unsymmetric (friction tied to normals) and singular at exact ties. Its inverse is kept from
 * pivot to pivot (bordered.h: one unknown and its equation in or out in O(p^2), dependent ones held
 * at zero with their equations checked); when that check fails the whole system is eliminated with
 * complete pivoting, which reveals the rank and says whether the equations beyond it hold (else no
 * direction exists: CS_RAY). So is it when the clamped normals' rows of da, their equations'
 * residuals, miss zero beyond rounding and the step would carry the miss into their w
 * (near-singular pivots leave the kept inverse inexact, and no drive looks at a clamped row
 * again); maxstep reads them anyway. maxstep bounds the step by every set
 * change, and by every face's slack (eq. 23: for the polygon a linear equation per edge, where the
 * circle gives Baraff a quadratic).
 *
 * CYCLING AND RAYS. Zero steps can alternate an index between two sets (5.4). A hash of the clamped
 * sets seen within a drive detects it; the index that moved is then given up as Baraff does (a
 * normal leaves both C and NC; a face's group stops being processed) and is taken up again by a
 * later drive. A group given up with a force would keep it while its normal moves, out of its
 * polygon; Baraff's unprocessed contacts carry none, so before the next drive it is released: its
 * force is taken to zero along a straight line, every other condition kept (DRIVE_RELEASE, as the
 * bilateral drive). Releases that meet sets met at an earlier release are going round (give-ups
 * that undo each other); the pass then keeps given-up forces as they are, for the final check to
 * judge, but one whose normal shrank under it until it left its polygon goes along the same line
 * only as far as into it: when a drive of its row would clamp a face it violates (a zero step that
 * holds nothing, and the same drive follows), and when no drive is left (while the sets at such
 * releases are new; a repeat is left to the final check). Friction whose normal force reaches
 * zero is zero; when its faces did not take it there (a row freed by a cycle of its own drive
 * keeps its force while the polygon shrinks round it) it is released too, not zeroed at once,
 * which would move the velocities of clamped rows that no drive takes up again. Such a freed
 * row's force can also leave the polygon while its group stays processed: before each drive it
 * is then released alone, its group's processed rows and clamped faces kept (stray_group), and
 * its group's other faces bound the step (its force slides along a clamped face, which can carry
 * it past a vertex): there it turns the corner when the new face can hold the processed rows in
 * the old one's place, else those rows cannot keep their conditions with the free force at zero,
 * and the group is given up, its whole force released.
 * A face of the driven row's own group cycles when friction tied to the normal tilts it
 * against the group's processed row (its Schur pivot in the clamped system is negative: clamped,
 * its dual falls; free, its slack does): those other rows are given up, and the face then holds or
 * turns the driven row alone. The driven row itself is never given up: a cycle with no other row to
 * free is CS_MAXITER. Drives can also cycle among themselves with zero steps (one unclamps a face
 * of its group that the next clamps again): the sets at the start of each drive since the forces
 * last moved are remembered, and a repeat is CS_MAXITER too (state_repeats). Drives that move can
 * go round as well (a friction drive takes another contact's normal force to zero, clearing its
 * friction, and establishing that again zeroes the first's normal): after a drive that lost a
 * group's conditions or gave an index up the clamped sets and a fingerprint of the forces are
 * remembered; the first repeat makes friction outlive its normal's zero for the rest of the pass
 * (its faces hold it at zero, Baraff's NC+- keeping its direction), a second is CS_MAXITER. A
 * drive with no bound on its step is section 6's unbounded ray: CS_RAY (not when the driven row's
 * velocity is zero already: forces that move no velocity are no ray). Such a failure (or a
 * failed final check) is pivoted once more from scratch with the drives in index order
 * (least-index rule, mlcp_pivot); what fails both ways keeps its label. The pivot cap is
 * 4 p (p + 1) + 8 for p = rows + friction rows. Whatever the path, a converged answer is checked
 * from scratch at the end (answer_holds): every law to 1e-9 of its scale, the dissipation of a
 * contact that slides (above 1e-6 of the velocity scale) per unit of its slip, as the certificate
 * judges it. An answer that fails is refined once (the residuals of the final sets' equations
 * solved with the clamped system, one step of iterative refinement, which removes the drift of
 * the f and w carried through the pivots) and judged again, else CS_MAXITER.
 *
 * COST. A step updates the clamped system's inverse and solves with it, O(p^2) for p clamped rows
 * and faces, plus da = A df, O(n p); the deadline is read before each step and through the meter
 * inside. A is formed body by body (delassus). */
#include "solver/dantzig.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "solver/bordered.h"
#include "solver/dantzig_ldl.h"
#include "solver/deadline.h"
#include "solver/lemke_contact.h"
#include "solver/linalg.h"
#include "solver/workspace.h"

enum { UNPROCESSED = 0, CLAMPED = 1, NOT_CLAMPED = 2 };

#define DIR_TOL 1e-11
#define VIOL_TOL 1e-10
#define RANK_TOL 1e-11
#define REFINE_TOL 1e-13
#define CARRY_TOL 1e-5
/* Zero steps of a drive remembered to tell a cycle (drive_all): the mass-ratio stacks' cycles
 * move one index or two. */
#define ZERO_RUN 8
/* The final checks' relative tolerance (answer_holds, lcp_holds): three orders above what the
 * converged answers show (<= 1e-13 on contact scenes), three below the certificate's default. */
#define ANSWER_TOL 1e-9
/* A friction velocity above this fraction of the velocity scale is a slip, whose direction the
 * final check judges (answer_holds): the certificate's threshold (certify.c). */
#define SLIP_TOL 1e-6
/* Members the polish takes out of the clamped set, one solve each, before it stops: 2,100 stacks
 * with masses alternating by 1e6 take out at most 6, 400,000 random near-dependent LCPs (n <= 12)
 * at most 7; stacks at 1e9 ratios still gain from a ninth (their failed answers miss by less),
 * so the polish costs at most nine factorizations, never |C| of them. */
#define POLISH_CUTS 9

/* The larger of a and b, b ignored when NaN (as fmax for the running maxima here, without the
 * libm call). */
static inline double max_d(double a, double b) {
    return b > a ? b : a;
}

size_t cs_dantzig_lcp_size(int n) {
    const size_t N = (size_t)n;
    // The solve's arrays, then the start's or the polish's scratch (solve_subset, and the
    // start's index list) or A_CC's inverse.
    const size_t start = 2 * cs__ws_bytes(N * sizeof(int)) +
                         cs__ws_bytes(N * N * sizeof(double)) +
                         2 * cs__ws_bytes(N * sizeof(double));
    const size_t drives = cs__bordered_size(n, n);
    return 4 * cs__ws_bytes(N * sizeof(double)) + cs__ws_bytes(N * sizeof(int)) + cs__ws_bytes(N) +
           (start > drives ? start : drives);
}

/* The frictional solve's own arrays: A and b of the 3 nc contact rows, kinds, normals, bounds. */
static size_t frictional_size(const cs_limits *lim) {
    const size_t n = 3 * (size_t)lim->max_contacts;
    return cs__ws_bytes(n * n * sizeof(double)) + 2 * cs__ws_bytes(n * sizeof(double)) +
           cs__ws_bytes(n) + cs__ws_bytes(n * sizeof(int));
}

size_t cs_dantzig_size(const cs_limits *lim) {
    const size_t n = (size_t)lim->max_contacts;
    // Frictionless: A, b and f, then the Delassus scratch or the LCP scratch (never both).
    const size_t del = cs_model_delassus_size(lim), lcp = cs_dantzig_lcp_size(lim->max_contacts);
    const size_t plain = cs__ws_bytes(n * n * sizeof(double)) +
                         2 * cs__ws_bytes(n * sizeof(double)) + (del > lcp ? del : lcp);
    // Frictional: its arrays, then the Delassus scratch (3 rows a contact) or the bounded
    // solve's.
    const size_t mlcp =
        cs_dantzig_mlcp_size(3 * lim->max_contacts, 2 * lim->max_contacts, lim->max_dirs);
    const size_t fric = frictional_size(lim) + (del > mlcp ? del : mlcp);
    // Under the frictionless solve with friction and the check of its answer: the free
    // velocities. The check: the answer's velocities, their scratch and contact velocities.
    const size_t vfree = cs__ws_bytes(3 * n * sizeof(double));
    const size_t check = vfree + 2 * cs__ws_bytes(6 * (size_t)lim->max_bodies * sizeof(double)) +
                         cs__ws_bytes(3 * n * sizeof(double));
    const size_t most = vfree + plain > fric ? vfree + plain : fric;
    return most > check ? most : check;
}


/* A column-major matrix as the entries of a bordered system. */
typedef struct dense {
    const double *A;
    int lda;
} dense;

static double dense_entry(const void *ctx, int row, int col) {
    const dense *d = ctx;
    return d->A[(size_t)col * d->lda + row];
}

/* y += A(:, cols) x(cols): the product with a direction over the k columns that move
 * (cs__gaxpy_cols: the rounding of one column at a time), four columns between two meter counts,
 * or one when a column alone is a meter's stretch. True when the meter's deadline passed (y is
 * then partial). */
static bool mul_columns(int n, const double *A, int lda, const int *cols, int k, const double *x,
                        double *y, cs__meter *meter) {
    const int step = n < CS__METER_UNITS ? 4 : 1;
    for (int q = 0; q < k; q += step) {
        const int kq = cs__chunk_len(q, step, k);
        cs__gaxpy_cols(n, A, lda, cols + q, kq, x, y);
        if (cs__meter_add(meter, (int64_t)kq * n))
            return true;
    }
    return false;
}

/* Scratch of one solve. */
typedef struct lcp_ws {
    double *a;          /* [n] w = A f + b */
    double *df;         /* [n] */
    double *da;         /* [n] */
    double *rhs;        /* [n] by index */
    int *cols;          /* [n] the columns of A with a force (loaded_columns) */
    unsigned char *set; /* [n] UNPROCESSED / CLAMPED / NOT_CLAMPED */
    dense mat;          /* A, for the clamped system's entries */
    cs__bordered acc;   /* A_CC, kept as C changes (bordered.h) */
    cs__meter meter;    /* the deadline inside a step */
} lcp_ws;

/* da = A df over the columns with df != 0: d and the factored clamped set (a deferred member's df
 * is 0). True when the deadline passed. */
static bool direction_image(int n, const double *A, int lda, int d, lcp_ws *w) {
    const cs__bordered *c = &w->acc;
    w->df[d] = 1;
    memcpy(w->da, A + (size_t)d * lda, (size_t)n * sizeof(double));
    return mul_columns(n, A, lda, c->id, c->p, w->df, w->da, &w->meter);
}

/* fdirection: df_d = 1, df_C = -A_CC^-1 A_Cd, zero elsewhere; then da = A df. O(|C|^2) with the
 * inverse of A_CC kept from pivot to pivot: one product with it, or refined (which also rebuilds an
 * inverse that has drifted). *res: the largest clamped row of da, factored or deferred, which is the
 * residual of C's equations (read for free). Returns 0, or 1 (the deadline passed; df and da
 * unusable). */
static int fdirection(int n, const double *A, int lda, int d, bool refine, lcp_ws *w,
                      double *res) {
    const cs__bordered *c = &w->acc;
    memset(w->df, 0, (size_t)n * sizeof(double));
    for (int q = 0; q < c->m; q++)
        w->rhs[c->id[q]] = -A[(size_t)d * lda + c->id[q]];
    // The range theorem (Baraff appendix A) makes a deferred row's equation hold: not checked, the
    // minimum-effort answer of a rank-revealing factorization.
    const int st = refine ? cs__bordered_solve(&w->acc, w->rhs, w->df, INFINITY)
                          : cs__bordered_solve_once(&w->acc, w->rhs, w->df);
    if (st > 0 || direction_image(n, A, lda, d, w))
        return 1;
    double r = 0;
    for (int q = 0; q < c->m; q++)
        r = max_d(r, fabs(w->da[c->id[q]]));
    *res = r;
    return 0;
}

/* The ratio test of one index: a clamped f_i falling to 0 or an unclamped w_i falling to 0
 * bounds the step s (its index into *j) when it comes first. */
static inline void bound_step(int i, unsigned char set, double f, double df, double a, double da,
                              double df_tol, double da_tol, double *s, int *j) {
    double si;
    if (set == CLAMPED && df < -df_tol)
        si = -f / df;
    else if (set == NOT_CLAMPED && da < -da_tol)
        si = -a / da;
    else
        return;
    // Rounding can leave f_i or w_i a hair below zero: never step backwards.
    si = max_d(0.0, si);
    if (si < *s) {
        *s = si;
        *j = i;
    }
}

/* maxstep: the largest s keeping f_C >= 0, w_NC >= 0 and w_d <= 0; *ret_j limits it (-1: none). */
static double maxstep(int n, const double *f, int d, double da_tol, const lcp_ws *w, int *ret_j) {
    double s = INFINITY;
    int j = -1;
    if (w->da[d] > da_tol) {
        s = -w->a[d] / w->da[d];
        j = d;
    }
    for (int i = 0; i < n; i++)
        bound_step(i, w->set[i], f[i], w->df[i], w->a[i], w->da[i], DIR_TOL, da_tol, &s, &j);
    *ret_j = j;
    return s;
}

/* Index i joins the clamped set. df_i: NULL, or the direction that drove i, whose df_C =
 * -A_CC^-1 A_Ci spares the join a product with the inverse. */
static void clamp(lcp_ws *w, int i, const double *df_i) {
    w->set[i] = CLAMPED;
    if (df_i)
        cs__bordered_add_known(&w->acc, i, df_i, -1);
    else
        cs__bordered_add(&w->acc, i);
    // Beside deferred members a new one waits for a refresh (bordered.h): its df would be held at
    // 0 and its equation left unchecked until the next removal.
    if (w->acc.p < w->acc.m)
        cs__bordered_refresh(&w->acc);
}

/* y0[r] -= u[r] l0 and y1[r] -= u[r] l1 for rows r0 .. r1 - 1, two rows at a time. */
static inline __attribute__((always_inline)) void update_pair(const double *u, double *y0,
                                                              double *y1, double l0, double l1,
                                                              int r0, int r1) {
    const cs__v2 v0 = {l0, l0}, v1 = {l1, l1};
    int r = r0;
    for (; r + 2 <= r1; r += 2) {
        const cs__v2 ur = cs__ld2(u + r);
        cs__st2(y0 + r, cs__ld2(y0 + r) - ur * v0);
        cs__st2(y1 + r, cs__ld2(y1 + r) - ur * v1);
    }
    if (r < r1) {
        y0[r] -= u[r] * l0;
        y1[r] -= u[r] * l1;
    }
}

bool cs__ldl_skip(int k, double *K, double tol, double *d, int *end, double *x,
                  cs__meter *meter) {
    // The whole factorization (the sum of (e - j)^2 / 2 below, at most k (k + 1) (2 k + 1) / 12)
    // counted at its end where it reads no clock, else two columns' updates at a time in pieces
    // of CS__METER_UNITS / 2 rows (an even count: the rows keep their pairs): at k in the hundreds
    // one column's update is tens of us, and at k = 8192 one pair's took 8 us (p99 30).
    cs__meter *const mt =
        cs__meter_piecewise(meter, (int64_t)k * (k + 1) * (2 * k + 1) / 12);
    const int span = CS__METER_UNITS / 2;
    int64_t units = 0;
    for (int j = 0; j < k; j++) {
        double *cj = K + (size_t)j * k;
        d[j] = cj[j] > tol ? 1 / cj[j] : 0;
        end[j] = j + 1;
        if (d[j] == 0) {
            if (x)
                x[j] = 0;
            continue;
        }
        const double inv = d[j];
        // x's entries below j take x_j's part as L's entries of column j come: x_j is final
        // (columns before j are done), and each entry takes the parts in column order, as a
        // forward substitution after the factorization would.
        const double a = x ? -x[j] : 0;
        const cs__v2 va = {a, a};
        // The trailing columns c take column j's part, u(c..e) u_c / d_j, two at a time over the
        // rows they share (one load of u for both), and u_c / d_j is L's entry (c, j): rows below
        // still read u unscaled. Both columns of a pair start at row c, two rows at a time: the
        // second's row c is in K's upper half, which nothing reads. Rows past u's last non-zero
        // (e) take nothing, nor do their columns: contacts meet through shared bodies only, so a
        // stack's matrix is banded and keeps its band.
        double *u = cj;
        int e = k;
        while (e > j + 1 && u[e - 1] == 0)
            e--;
        end[j] = e;
        int c = j + 1;
        for (; c + 1 < e; c += 2) {
            double *y0 = K + (size_t)c * k, *y1 = y0 + k;
            const double l0 = u[c] * inv, l1 = u[c + 1] * inv;
            if (!mt) {
                update_pair(u, y0, y1, l0, l1, c, e);
            } else {
                for (int r0 = c; r0 < e; r0 += span) {
                    const int r1 = r0 + cs__chunk_len(r0, span, e);
                    update_pair(u, y0, y1, l0, l1, r0, r1);
                    if (cs__meter_add(mt, 2 * (int64_t)(r1 - r0)))
                        return true;
                }
            }
            u[c] = l0, u[c + 1] = l1;
            if (x)
                cs__st2(x + c, cs__ld2(x + c) + (cs__v2){l0, l1} * va);
        }
        if (c < e) {
            const double l0 = u[c] * inv;
            K[(size_t)c * k + c] -= u[c] * l0;
            u[c] = l0;
            if (x)
                x[c] += l0 * a;
        }
        units += (int64_t)(e - j) * (e - j) / 2;
    }
    return !mt && cs__meter_add(meter, units);
}

/* x = K^+ x by cs__ldl_skip's factors, from x = L^-1 x (its forward substitution): the skipped
 * members' unknowns zero. Counted through the meter column by column unless the whole, k^2 (both
 * substitutions), reads no clock; true when the deadline passed (x unusable). */
static bool ldl_solve(int k, const double *L, const double *d, const int *end, double *x,
                      cs__meter *meter) {
    cs__meter *const mt = cs__meter_piecewise(meter, (int64_t)k * k);
    for (int j = k - 1; j >= 0; j--) {
        if (d[j] == 0)
            continue;
        const double *lj = L + (size_t)j * k;
        double s = x[j] * d[j];
        for (int r = j + 1; r < end[j]; r++)
            s -= lj[r] * x[r];
        x[j] = s;
        if (mt && cs__meter_add(mt, 2 * (int64_t)(end[j] - j)))
            return true;
    }
    return !mt && cs__meter_add(meter, (int64_t)k * k);
}

/* The columns of A that carry a force (f_j > 0) into cols [n]; returns how many: the products
 * that check an answer skip the contacts without one, most of a resting scene's. *ret_fmax,
 * *ret_fsum: NULL, or the largest f_j and their sum. */
static int loaded_columns(int n, const double *f, int *cols, double *ret_fmax, double *ret_fsum) {
    int k = 0;
    double fs = 0, sum = 0;
    for (int j = 0; j < n; j++)
        if (f[j] > 0) {
            cols[k++] = j;
            fs = max_d(fs, f[j]);
            sum += f[j];
        }
    if (ret_fmax)
        *ret_fmax = fs;
    if (ret_fsum)
        *ret_fsum = sum;
    return k;
}

/* Lane masks of two doubles (simd.h): a comparison's result, or a sign bit cleared. */
typedef long long bits2 __attribute__((vector_size(16)));

/* |a| in each lane. */
static inline cs__v2 abs2(cs__v2 a) {
    const bits2 magnitude = {LLONG_MAX, LLONG_MAX};
    return (cs__v2)((bits2)a & magnitude);
}

/* In each lane, a where m is set, else b. */
static inline cs__v2 pick2(bits2 m, cs__v2 a, cs__v2 b) {
    return (cs__v2)(((bits2)a & m) | ((bits2)b & ~m));
}

/* In each lane, the larger of a and b, a NaN in either sticking. */
static inline cs__v2 max_sticky2(cs__v2 a, cs__v2 b) {
    return pick2((bits2)(b > a) | (bits2)(b != b), b, a);
}

/* The final check's rule on two rows: rows_hold's step, in lanes. rows: the error bound is the
 * row's own (s_i), else one for every row, taken into account at the end. */
typedef struct rule2 {
    cs__v2 as, worst, over, err;
} rule2;

static inline void rule2_add(rule2 *r, cs__v2 w, cs__v2 s, cs__v2 f, cs__v2 e, cs__v2 inv,
                             cs__v2 tiny, bool rows) {
    const cs__v2 inf = {INFINITY, INFINITY};
    // f / max f first: the product f |w| alone can underflow at extreme scales (f ~ 1e-300).
    const cs__v2 aw = abs2(w), fw = f * inv * aw;
    // A negative force misses whatever w is.
    const cs__v2 miss = pick2((bits2)(f < 0), inf, pick2((bits2)(fw > -w), fw, -w));
    r->worst = max_sticky2(r->worst, miss);
    const cs__v2 es = rows ? e * s : (cs__v2){0, 0}, scale = aw + es;
    // The scale as max_d (a NaN ignored); the rest keep a NaN.
    r->as = pick2((bits2)(scale > r->as), scale, r->as);
    if (rows) {
        r->over = max_sticky2(r->over, miss - es + (cs__v2)((bits2)tiny & (bits2)(s > 0)));
        r->err = max_sticky2(r->err, es);
    }
}

/* The final check's rule (file header, THE FINAL CHECK) on w [n], a sum for f whose row i is
 * within |e| s_i + tiny of the exact w_i (s [n], or NULL for s_i = s0 on every row): every row
 * meets f >= 0, f w ~ 0 and w >= 0 to ANSWER_TOL of the velocity scale as = max(|b|, |w|), with
 * e s_i added to the allowance and to the scale, and tiny taken from the allowance. e < 0 takes
 * the sum's error against the answer, so that rows that pass hold for the exact w however the
 * rounding fell (the exact miss is at most the computed one plus |e| s_i + tiny, f_i <= fs = max
 * f, and the exact scale at least the computed one less it); e > 0 gives it to the answer
 * (Dot2's), which is sound only while it is far below the tolerance: every e s_i must be below
 * 1e-3 of it. tiny: what underflow can add to a sum of n products beyond the relative bound, 2 n
 * + 2 halves of the least subnormal (none where s_i = 0: w_i = b_i = 0 exactly). One pass, two
 * rows at a time (an odd last row taken twice); a NaN fails, and so does an infinite scale (s_i
 * overflowed). *ret_viol: the worst row's miss in velocity units, max(-w_i, f_i |w_i| / fs),
 * infinite for f_i < 0 (NaN when w is). True when every row holds. */
static bool rows_hold(int n, const double *f, double fs, const double *w, const double *s,
                      double s0, double e, double bmax, double *ret_viol) {
    const double inv = fs > 0 ? 1 / fs : 0, t = (double)(n + 1) * DBL_TRUE_MIN;
    const cs__v2 ev = {e, e}, iv = {inv, inv}, tiny = {t, t};
    rule2 r = {.as = {bmax, bmax},
               .worst = {0, 0},
               .over = {-INFINITY, -INFINITY},
               .err = {-INFINITY, -INFINITY}};
    int i = 0;
    if (s)
        for (; i + 2 <= n; i += 2)
            rule2_add(&r, cs__ld2(w + i), cs__ld2(s + i), cs__ld2(f + i), ev, iv, tiny, true);
    else
        for (; i + 2 <= n; i += 2)
            rule2_add(&r, cs__ld2(w + i), ev, cs__ld2(f + i), ev, iv, tiny, false);
    if (i < n) {
        const double si = s ? s[i] : s0;
        rule2_add(&r, (cs__v2){w[i], w[i]}, (cs__v2){si, si}, (cs__v2){f[i], f[i]}, ev, iv, tiny,
                  s != NULL);
    }
    const cs__v2 worst = max_sticky2(r.worst, (cs__v2){r.worst[1], r.worst[0]});
    double as = max_d(r.as[0], r.as[1]);
    if (!s) {
        // One bound for every row: the worst row's miss against it, the scale moved by it.
        const double es = e * s0;
        as = max_d(bmax, as + es);
        r.over = worst - (cs__v2){es, es} + (s0 > 0 ? tiny : (cs__v2){0, 0});
        r.err = (cs__v2){es, es};
    }
    const double tol = ANSWER_TOL * as;
    *ret_viol = worst[0];
    return tol < INFINITY && r.over[0] <= tol && r.over[1] <= tol && r.err[0] <= 1e-3 * tol &&
           r.err[1] <= 1e-3 * tol;
}

/* The final check of an answer f >= 0 (file header, THE FINAL CHECK): w = A f + b from scratch,
 * summed with its rounding errors kept (Ogita, Rump and Oishi 2005, Dot2: TwoSum and an fma for
 * each product's), so w is exact to u |w_i| + gamma_{k+1}^2 (|b_i| + sum_j |A_ij f_j|) however
 * large f is (u |w_i|, 1e-7 of the tolerance, is not counted), and judged by rows_hold; *ret_viol
 * is the worst row's miss (as rows_hold's). Returns CS_CONVERGED; CS_MAXITER when a row fails;
 * CS_DEADLINE when the meter's deadline passed (*ret_viol untouched). Scratch: w->a, da, df. */
static cs_status lcp_holds(int n, const double *A, int lda, const double *b, double bmax,
                           const double *f, lcp_ws *w, double *ret_viol) {
    double fs;
    const int k = loaded_columns(n, f, w->cols, &fs, NULL);
    double *hi = w->a, *lo = w->da, *s = w->df;
    for (int i = 0; i < n; i++) {
        hi[i] = b[i];
        lo[i] = 0;
        s[i] = fabs(b[i]);
    }
    for (int q = 0; q < k; q++) {
        const int j = w->cols[q];
        const double *aj = A + (size_t)j * lda;
        for (int i = 0; i < n; i++) {
            const double p = aj[i] * f[j], t = hi[i] + p, z = t - hi[i];
            lo[i] += ((hi[i] - (t - z)) + (p - z)) + fma(aj[i], f[j], -p);
            hi[i] = t;
            s[i] += fabs(p);
        }
        // About ten operations a term.
        if (cs__meter_add(&w->meter, 10 * (int64_t)n))
            return CS_DEADLINE;
    }
    for (int i = 0; i < n; i++)
        hi[i] += lo[i];
    // Part 2's tolerance on the velocity scale (answer_holds), plus the sum's own rounding
    // (gamma_{k+1}^2 of the row's scale, 8e-25 of it at n = 8192): a velocity lost below the last
    // bit of A f, as a drive's rounding can leave it at huge forces, is judged as it is.
    const double g = (k + 1) * (DBL_EPSILON / 2), round = g * g / (1 - (k + 1) * DBL_EPSILON);
    return rows_hold(n, f, fs, hi, s, 0, round, bmax, ret_viol) ? CS_CONVERGED : CS_MAXITER;
}

/* The cheap side of the final check (file header, THE FINAL CHECK): w = A f + b over the loaded
 * columns in plain double (the drives' product), within gamma_{k+1} s_i of the exact value
 * (Higham 2002, eq. 3.5, for k products and b) where s_i = |b_i| + sum_j |A_ij f_j| <= max |b| +
 * dmax sum f (A PSD: |A_ij| <= dmax), the bound taken for every row. The margin against the
 * answer is twice that, which also covers the rounding of the bound itself. True when every row
 * passes rows_hold's rule with that margin: the answer holds, no exact sum needed. False when the
 * rule cannot say so at this precision, or when the meter's deadline passed. Fills w->a and
 * w->cols. */
static bool lcp_holds_plainly(int n, const double *A, int lda, const double *b, double bmax,
                              double dmax, const double *f, lcp_ws *w) {
    double fs, fsum, viol;
    const int k = loaded_columns(n, f, w->cols, &fs, &fsum);
    memcpy(w->a, b, (size_t)n * sizeof(double));
    if (mul_columns(n, A, lda, w->cols, k, f, w->a, &w->meter))
        return false;
    const double g = (k + 1) * (DBL_EPSILON / 2) / (1 - (k + 1) * (DBL_EPSILON / 2));
    return rows_hold(n, f, fs, w->a, NULL, bmax + dmax * fsum, -2 * g, bmax, &viol);
}

/* x_G = -A_GG^+ b_G for the k indices g [k], increasing (x [n] by index, others untouched):
 * A_GG formed in scratch and factored by cs__ldl_skip, G's dependent members held at zero. An exact
 * tie leaves a rounding-sized force of either sign: zero, as the drives would leave it. Returns
 * how many forces are negative beyond that, or -1 (x_G unusable) when the workspace or the
 * meter's deadline ran short. Scratch from ws, given back. */
static int solve_subset(cs_workspace *ws, int n, const double *A, int lda, const double *b,
                        const int *g, int k, double rank_tol, double *f, cs__meter *meter) {
    const size_t mark = cs__ws_mark(ws);
    double *K = cs__ws_alloc(ws, (size_t)k * k * sizeof(double));
    double *x = cs__ws_alloc(ws, (size_t)k * sizeof(double));
    double *d = cs__ws_alloc(ws, (size_t)k * sizeof(double));
    int *end = cs__ws_alloc(ws, (size_t)k * sizeof(int));
    bool ok = K && x && d && end;
    // Every index in G (a resting scene) takes A whole, in one copy where that reads no clock
    // (at n in the hundreds the copy alone is tens of us).
    const bool whole = ok && k == n && lda == n && cs__meter_fits(meter, (int64_t)n * n);
    if (whole) {
        // G is every index, in order.
        memcpy(K, A, (size_t)n * n * sizeof(double));
        for (int c = 0; c < k; c++)
            x[c] = -b[c];
        ok = !cs__meter_add(meter, (int64_t)k * (k + 1) / 2);
    }
    for (int c = 0; ok && !whole && c < k; c++) {
        for (int r = c; r < k; r++)
            K[(size_t)c * k + r] = A[(size_t)g[c] * lda + g[r]];
        x[c] = -b[g[c]];
        ok = !cs__meter_add(meter, k - c);
    }
    ok = ok && !cs__ldl_skip(k, K, rank_tol, d, end, x, meter) &&
         !ldl_solve(k, K, d, end, x, meter);
    int negative = -1;
    if (ok) {
        double fmax = 0;
        for (int c = 0; c < k; c++)
            fmax = max_d(fmax, x[c]);
        const double tie = DIR_TOL * fmax;
        negative = 0;
        for (int c = 0; c < k; c++) {
            negative += x[c] < -tie;
            f[g[c]] = fabs(x[c]) > tie ? x[c] : 0;
        }
    }
    cs__ws_release(ws, mark);
    return negative;
}

/* start_touching()'s outcomes. */
enum { START_NONE, START_DRIVES, START_ANSWER };

/* The start from the contacts that touch (file header, THE START). G = {i : b_i <= viol_tol}, f_G =
 * -A_GG^+ b_G (solve_subset); kept when f_G >= 0 and every member with a force meets its
 * equation, the loaded members then clamped (w = 0) and the others left unprocessed; an answer
 * whose forces are too large for that check to see a violation is judged by lcp_holds instead.
 * Returns START_ANSWER when no index is left violated, START_DRIVES when one is (f, w->a, w->set
 * so: the caller forms A_CC's inverse); else START_NONE with them as they were (f = 0, a = b,
 * nothing processed), also when the workspace or the deadline ran short. Scratch from ws, given
 * back. */
static int start_touching(cs_workspace *ws, int n, const double *A, int lda, const double *b,
                          double bmax, double dmax, double *f, lcp_ws *w) {
    const double viol_tol = VIOL_TOL * bmax;
    const size_t mark = cs__ws_mark(ws);
    int *g = cs__ws_alloc(ws, (size_t)n * sizeof(int));
    int k = 0;
    for (int i = 0; g && i < n; i++)
        if (b[i] <= viol_tol)
            g[k++] = i;
    if (k == 0) {
        cs__ws_release(ws, mark);
        return START_NONE;
    }
    // A deadline already past stops the solve here, as before a pivot. A Schur pivot below
    // RANK_TOL of the largest diagonal is a redundant row (footnote 3).
    bool ok = !cs__meter_check(&w->meter) &&
              solve_subset(ws, n, A, lda, b, g, k, RANK_TOL * dmax, f, &w->meter) == 0;
    // w = A f + b over the columns that carry a force.
    const int nf = ok ? loaded_columns(n, f, w->cols, NULL, NULL) : 0;
    ok = ok && !mul_columns(n, A, lda, w->cols, nf, f, w->a, &w->meter);
    // Only a loaded member is clamped. One without a force stays unprocessed, as at a cold
    // start: clamped, a nearly dependent one would be deferred by the inverse, whose equation the
    // drives neither check nor drive again, so they could carry its w below zero.
    double fsum = 0;
    for (int c = 0; ok && c < k; c++) {
        const int i = g[c];
        if (f[i] > 0) {
            ok = fabs(w->a[i]) <= viol_tol;
            w->a[i] = 0;
            w->set[i] = CLAMPED;
            fsum += f[i];
        }
    }
    // A w that is NaN or infinite (off A's diagonal) counts as violated: the drives' final
    // check labels it.
    int outcome = START_ANSWER;
    for (int i = 0; ok && i < n && outcome == START_ANSWER; i++)
        if (w->set[i] != CLAMPED && !(w->a[i] >= -viol_tol && w->a[i] < INFINITY))
            outcome = START_DRIVES;
    // The product's rounding is below n eps dmax sum f (A is PSD: |A_ij| <= dmax), plus what
    // underflow adds, n + 1 subnormals. Where that passes viol_tol (forces ~1e5 |b| / dmax and
    // beyond, or subnormal velocities: never a sane scene's) the check above cannot see a
    // violation: an answer must then hold exactly, or the drives start from scratch. Drives from
    // here end with the final check anyway.
    double viol;
    if (ok && outcome == START_ANSWER && fsum > 0 &&
        n * DBL_EPSILON * dmax * fsum + (n + 1) * DBL_TRUE_MIN > viol_tol)
        ok = lcp_holds(n, A, lda, b, bmax, f, w, &viol) == CS_CONVERGED;
    if (!ok) {
        for (int c = 0; c < k; c++) {
            f[g[c]] = 0;
            w->set[g[c]] = UNPROCESSED;
        }
        memcpy(w->a, b, (size_t)n * sizeof(double));
        outcome = START_NONE;
    }
    cs__ws_release(ws, mark);
    return outcome;
}

/* The drives' answer f, polished and checked (file header, THE FINAL CHECK): f_C solved afresh
 * on the loaded members of the final clamped set C (solve_subset), zero elsewhere, then judged
 * by lcp_holds; when it fails, the drives' own f is judged, and when both fail the one whose
 * worst row misses by less (lcp_holds's miss, in velocity units) is left. Returns the status of
 * the f left. */
static cs_status polish(cs_workspace *ws, int n, const double *A, int lda, const double *b,
                        double bmax, double dmax, double *f, lcp_ws *w) {
    // The drives' f is kept in rhs, C in cols (free now: lcp_holds fills cols after the solve).
    int k = 0;
    for (int i = 0; i < n; i++) {
        w->rhs[i] = f[i];
        if (w->set[i] == CLAMPED && f[i] > 0)
            w->cols[k++] = i;
        else
            f[i] = 0;
    }
    double vp = INFINITY, vd = INFINITY;
    // From f toward the solution x on C (in df) as far as f >= 0 allows: a member that reaches
    // zero first leaves C, as a drive's ratio test would have taken it out had its f not
    // drifted, and the rest is solved again; one fewer each time, POLISH_CUTS members at most.
    // Past that, f is a step short of x, and judged as it is.
    int negative, cuts = 0;
    double *x = w->df;
    while ((negative = solve_subset(ws, n, A, lda, b, w->cols, k, RANK_TOL * dmax, x,
                                    &w->meter)) >= 0) {
        // The first member to reach zero; any with x_i < 0 is one, even where its ratio rounds
        // to 1 (f_i far above |x_i|).
        double t = 1;
        int out = -1;
        for (int q = 0; q < k; q++) {
            const int i = w->cols[q];
            if (x[i] < 0 && (out < 0 || f[i] / (f[i] - x[i]) < t)) {
                t = f[i] / (f[i] - x[i]);
                out = q;
            }
        }
        for (int q = 0; q < k; q++) {
            const int i = w->cols[q];
            f[i] = out < 0 ? x[i] : max_d(0.0, f[i] + t * (x[i] - f[i]));
        }
        if (out < 0)
            break;
        f[w->cols[out]] = 0;
        if (++cuts == POLISH_CUTS)
            break;
        memmove(w->cols + out, w->cols + out + 1, (size_t)(k - out - 1) * sizeof(int));
        k--;
    }
    if (negative >= 0) {
        const cs_status s = lcp_holds(n, A, lda, b, bmax, f, w, &vp);
        if (s != CS_MAXITER)
            return s;
    }
    const cs_status s = lcp_holds(n, A, lda, b, bmax, w->rhs, w, &vd);
    if (s != CS_MAXITER || negative < 0 || !(vp < vd))
        memcpy(f, w->rhs, (size_t)n * sizeof(double));
    return s;
}

/* The drives (file header, THE ALGORITHM) from the state in f, w: while some w_d < -viol_tol,
 * drive-to-zero(d). The pivots count into st->pivots against cap. Returns CS_CONVERGED (f >= 0),
 * or CS_MAXITER, CS_DEADLINE, CS_RAY with f the last iterate. */
static cs_status drive_all(int n, const double *A, int lda, double viol_tol, double dmax, int cap,
                           double *f, lcp_ws *w, cs_stats *st) {
    const double da_tol = DIR_TOL * dmax;
    for (;;) {
        // Drive the most violated index first: it tends to be the one carrying the load.
        int d = -1;
        double amin = -viol_tol;
        for (int i = 0; i < n; i++)
            if (w->set[i] != CLAMPED && w->a[i] < amin) {
                amin = w->a[i];
                d = i;
            }
        if (d < 0) {
            // The last clamp's update of A_CC's inverse reads the meter too.
            if (w->meter.passed)
                return CS_DEADLINE;
            // Rounding: clamped forces may sit at -1e-17; the solution is f >= 0 by
            // construction.
            for (int i = 0; i < n; i++)
                f[i] = max_d(0.0, f[i]);
            return CS_CONVERGED;
        }
        // An index in NC whose w went negative is driven like an unprocessed one.
        w->set[d] = UNPROCESSED;
        // The indices the zero steps since the last positive one moved, the last ZERO_RUN of them.
        int zero[ZERO_RUN], nzero = 0;
        for (;;) {
            // A step that ties with d's own limit leaves w_d at zero up to rounding, with the
            // index that tied now clamped: d is done (its direction may even be degenerate).
            if (w->a[d] >= -viol_tol) {
                w->a[d] = 0;
                clamp(w, d, NULL);
                break;
            }
            if (st->pivots >= cap)
                return CS_MAXITER;
            // A pivot costs far more than a clock read (a vDSO call): check before each one.
            if (cs__meter_check(&w->meter))
                return CS_DEADLINE;
            double res;
            if (fdirection(n, A, lda, d, false, w, &res) != 0)
                return CS_DEADLINE;
            int j;
            double s = maxstep(n, f, d, da_tol, w, &j);
            // The step carries the clamped rows' residual into their w: refine the direction when
            // that residual or what the step would carry is above rounding (REFINE_TOL, CARRY_TOL).
            if (res > REFINE_TOL * dmax || (j >= 0 && s * res > CARRY_TOL * viol_tol)) {
                if (fdirection(n, A, lda, d, true, w, &res) != 0)
                    return CS_DEADLINE;
                s = maxstep(n, f, d, da_tol, w, &j);
            }
            st->pivots++;
            if (j < 0) {
                // f_d can grow without bound and w_d does not rise: no solution (Lemke's ray).
                return CS_RAY;
            }
            // A zero step that moves an index a zero step since the last positive one moved
            // already is a cycle only rounding allows (file header, WHY IT TERMINATES): j is given
            // up, and a later drive takes it up if its w goes negative.
            bool again = false;
            for (int q = 0; s == 0 && q < nzero && q < ZERO_RUN; q++)
                again |= zero[q] == j;
            if (again) {
                if (w->set[j] == CLAMPED) {
                    f[j] = 0;
                    cs__bordered_remove(&w->acc, j);
                    cs__bordered_refresh(&w->acc);
                }
                w->set[j] = UNPROCESSED;
                nzero = 0;
                continue;
            }
            if (s == 0)
                zero[nzero++ % ZERO_RUN] = j;
            else
                nzero = 0;
            for (int i = 0; i < n; i++) {
                f[i] += s * w->df[i];
                w->a[i] += s * w->da[i];
            }
            if (j == d) {
                w->a[d] = 0;
                clamp(w, d, w->df);
                break;
            }
            if (w->set[j] == CLAMPED) {
                f[j] = 0;
                w->set[j] = NOT_CLAMPED;
                cs__bordered_remove(&w->acc, j);
                cs__bordered_refresh(&w->acc);
            } else {
                w->a[j] = 0;
                clamp(w, j, NULL);
            }
        }
    }
}

cs_status cs_dantzig_lcp(cs_workspace *ws, int n, const double *A, int lda, const double *b,
                         const cs_options *opt, double *f, cs_stats *st) {
    *st = (cs_stats){0};
    const size_t mark = cs__ws_mark(ws);
    const size_t N = (size_t)n;
    lcp_ws w = {
        .a = cs__ws_alloc(ws, N * sizeof(double)),
        .df = cs__ws_alloc(ws, N * sizeof(double)),
        .da = cs__ws_alloc(ws, N * sizeof(double)),
        .rhs = cs__ws_alloc(ws, N * sizeof(double)),
        .cols = cs__ws_alloc(ws, N * sizeof(int)),
        .set = cs__ws_zalloc(ws, N),
        .mat = {.A = A, .lda = lda},
        .meter = cs__meter_start(opt),
    };
    if (n > 0 && (!w.a || !w.df || !w.da || !w.rhs || !w.cols || !w.set)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    double bmax = 0, dmax = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(b[i]) || !isfinite(A[(size_t)i * lda + i])) {
            cs__ws_release(ws, mark);
            return CS_EINPUT;
        }
        bmax = max_d(bmax, fabs(b[i]));
        dmax = max_d(dmax, A[(size_t)i * lda + i]);
        f[i] = 0;
        w.a[i] = b[i];
    }
    const double viol_tol = VIOL_TOL * bmax;
    const int cap = 4 * n * (n + 1) + 8;
    cs_status status = CS_CONVERGED;
    const int start = start_touching(ws, n, A, lda, b, bmax, dmax, f, &w);
    if (start != START_ANSWER) {
        // A Schur pivot below RANK_TOL of the largest diagonal is a redundant row (footnote 3).
        const size_t drives = cs__ws_mark(ws);
        if (cs__bordered_init(&w.acc, ws, n, n, RANK_TOL * dmax, dense_entry, &w.mat,
                              &w.meter) != 0) {
            cs__ws_release(ws, mark);
            return CS_ENOSPACE;
        }
        w.acc.symmetric = true;
        // The drives go on from the start's clamped set; forming its inverse is O(|C|^3), read
        // through the meter (a passed deadline then stops the first drive).
        for (int i = 0; start == START_DRIVES && i < n && !w.meter.passed; i++)
            if (w.set[i] == CLAMPED)
                clamp(&w, i, NULL);
        status = drive_all(n, A, lda, viol_tol, dmax, cap, f, &w, st);
        // A_CC's inverse is done with: the polish takes its room. The drives' answer, summed in
        // plain double, holds whatever the rounding (the well-conditioned drives of an ordinary
        // scene): no polish, no exact sum.
        cs__ws_release(ws, drives);
        if (status == CS_CONVERGED && !lcp_holds_plainly(n, A, lda, b, bmax, dmax, f, &w))
            status = polish(ws, n, A, lda, b, bmax, dmax, f, &w);
    }
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

/* Part 2: the bounded problem (bilateral rows, box and polygon friction). */

/* What a drive pushes: a normal row's force up, a friction row's force against its velocity, the
 * velocities of every bilateral row along a straight line to zero, or the force of a group given
 * up (give_up) along a straight line to zero (once releases went round, only into its polygon):
 * of its free rows only, its processed rows and clamped faces kept (stray_group). */
enum { DRIVE_NORMAL, DRIVE_ROW, DRIVE_BILATERAL, DRIVE_RELEASE };
/* maxstep()'s answer besides a row or face index. */
enum { STEP_NONE = -1, STEP_TARGET = -2 };

/* Bases remembered within one drive to tell a cycle (Baraff 5.4: zero steps that alternate an index
 * between two sets) from progress. */
#define CYCLE_MEMORY 64
/* Complete pivoting stops at pivots below this fraction of the largest entry (as RANK_TOL); the
 * equations left beyond the rank must then hold to this fraction of the right-hand side, or the
 * direction does not exist (far above the 1e-16 x growth that rounding leaves). */
#define LU_RANK_TOL 1e-11
#define CONSISTENT_TOL 1e-8
/* Steps that change no force by more than this fraction of the largest make no progress: four
 * orders above rounding, so a cycle whose zero steps come out as 1e-22 is still one. */
#define MOVE_TOL 1e-12

/* A friction group: one BOX row (m = 1, faces f <= r and -f <= r) or a PAIR (m = 2, the nd edges of
 * r P). Face k of a group is c r - n_k . f_t >= 0, with dual sigma_k >= 0. */
typedef struct group {
    int row;     /* first row */
    int m;       /* rows: 1 or 2 */
    int normal;  /* bounding NORMAL row, -1: fixed bound */
    int face;    /* first face */
    int nf;      /* faces */
    int nact;    /* faces clamped (at most non, plus one for the row being driven) */
    int non;     /* rows processed: their w = a + sum_k sigma_k n_k is held at zero */
    double coef; /* mu, or the fixed bound */
    double c;    /* distance of the faces from the centre at r = 1: cos(pi / nd), or
                    1 */
    bool loose;  /* given up with a force, which no face holds inside: released next */
} group;

/* Scratch and state of one bounded solve. */
typedef struct mlcp {
    const cs_dantzig_problem *p;
    int n, ng, nf;
    group *g;             /* [ng] */
    int *grp;             /* [n] group of a BOX or PAIR row, else -1 */
    int *fgrp;            /* [nf] group of a face */
    unsigned char *set;   /* [n] NORMAL rows: UNPROCESSED / CLAMPED / NOT_CLAMPED */
    unsigned char *fset;  /* [nf] 1: clamped (slack = 0, sigma free >= 0) */
    unsigned char *on;    /* [n] friction rows: processed */
    double *sigma, *dsig; /* [nf] */
    double *a, *df, *da;  /* [n] */
    double *tab;          /* [4 nd] the polygon's outward unit edge normals, then vertices */
    cs__bordered sys;     /* the clamped system, kept as the sets change (ids: row i, face n + k) */
    double *rhs, *x;      /* [n + nf] by id */
    int *cp;              /* [pmax] column permutation of the complete pivoting (fallback) */
    int *cols;            /* [n] the columns of A that a direction moves */
    double *K, *rk, *xk;  /* [pmax^2], [pmax], [pmax]: the whole system for the fallback */
    double dir;           /* DRIVE_ROW: the sign of df_d */
    int gdrive;           /* DRIVE_ROW: the driven row's group, else -1 */
    double alpha;         /* scale of the face rows and columns: max diag A (1 if zero) */
    double dmax, viol;    /* max diag A; w below -viol is violated */
    uint64_t hash;        /* of the clamped sets */
    uint64_t seen[CYCLE_MEMORY];
    int nseen;
    bool moved;           /* forces moved since the drives' sets were noted (state_repeats) */
    uint64_t still[CYCLE_MEMORY]; /* hashes of the sets at the start of the drives since then */
    int nstill;
    uint64_t round[CYCLE_MEMORY]; /* clamped sets at the start of drives after forces moved, */
    double fround[CYCLE_MEMORY];  /* and their forces' fingerprints (went_round) */
    int nround;
    bool hold;            /* drives went round: friction outlives its normal's zero (this pass) */
    bool lost;            /* a group lost its processed state, or an index was given up, since
                             the last drive began */
    uint64_t freed[CYCLE_MEMORY]; /* hashes of the sets at each release of this pass */
    int nfreed;
    bool keep;            /* releases went round: given-up forces stay as they are, or go only
                             into their polygons (this pass) */
    bool loose;           /* some group may be loose (group.loose) */
    bool strays;          /* a processed group may have a free row with a force (stray_group) */
    cs__meter meter;
} mlcp;

static size_t mlcp_faces(int n_friction, int nd) {
    // A pair has nd faces for two rows, a box two for one.
    return (size_t)n_friction * (size_t)(nd / 2 > 2 ? nd / 2 : 2);
}

size_t cs_dantzig_mlcp_size(int n, int n_friction, int nd) {
    const size_t N = (size_t)n, F = mlcp_faces(n_friction, nd);
    // Unknowns: clamped rows and at most m clamped faces per group, i.e. one per friction row.
    const size_t P = N + (size_t)n_friction;
    return cs__ws_bytes(N * sizeof(group)) + cs__ws_bytes(N * sizeof(int)) +
           cs__ws_bytes(F * sizeof(int)) + 2 * cs__ws_bytes(N) + cs__ws_bytes(F) +
           2 * cs__ws_bytes(F * sizeof(double)) + 3 * cs__ws_bytes(N * sizeof(double)) +
           cs__ws_bytes(4 * (size_t)nd * sizeof(double)) +
           2 * cs__ws_bytes((N + F) * sizeof(double)) + cs__ws_bytes(P * sizeof(int)) +
           cs__ws_bytes(P * P * sizeof(double)) + 2 * cs__ws_bytes(P * sizeof(double)) +
           cs__ws_bytes(N * sizeof(int)) + cs__bordered_size((int)P, (int)(N + F));
}

/* Component r of face k's outward normal in group g. */
static inline double face_n(const mlcp *w, const group *g, int k, int r) {
    return g->m == 1 ? (k == 0 ? 1.0 : -1.0) : w->tab[2 * k + r];
}

/* The group's radius r: mu f_normal, or the fixed bound. */
static inline double radius(const group *g, const double *f) {
    return g->normal >= 0 ? g->coef * f[g->normal] : g->coef;
}

/* Slack of face k (local) of g at f, and its rate along df. */
static double slack(const mlcp *w, const group *g, int k, const double *f) {
    double s = g->c * radius(g, f);
    for (int r = 0; r < g->m; r++)
        s -= face_n(w, g, k, r) * f[g->row + r];
    return s;
}

/* Whether face k of g is violated beyond rounding: slack below -MOVE_TOL of the group's force and
 * radius. Never without a tangential force, whose normal may be rounded to -1e-18. */
static bool face_violated(const mlcp *w, const group *g, int k, const double *f) {
    double size = 0;
    for (int r = 0; r < g->m; r++)
        size += fabs(f[g->row + r]);
    return size > 0 && slack(w, g, k, f) < -MOVE_TOL * (size + g->c * fabs(radius(g, f)));
}

static inline double dslack(const mlcp *w, const group *g, int k) {
    double s = g->normal >= 0 ? g->c * g->coef * w->df[g->normal] : 0;
    for (int r = 0; r < g->m; r++)
        s -= face_n(w, g, k, r) * w->df[g->row + r];
    return s;
}

/* w of row r of group g at velocities a: the velocity plus the clamped faces' duals along their
 * normals. */
static double group_w(const mlcp *w, const group *g, int r, const double *a) {
    double v = a[g->row + r];
    for (int k = 0; k < g->nf && g->nact > 0; k++)
        if (w->fset[g->face + k])
            v += w->sigma[g->face + k] * face_n(w, g, k, r);
    return v;
}

/* splitmix64's finaliser: the hash contribution of item i being clamped. */
static inline uint64_t item_hash(uint64_t i) {
    uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Solves K x = rhs (column-major, order p; K and rhs are overwritten) by Gaussian elimination with
 * complete pivoting, which reveals the rank of the singular but consistent systems that exact ties
 * give (four coplanar contacts: rank 3 of 4 normal rows). Unknowns beyond the rank are zero. cp:
 * [p] scratch. Returns 0; -1 when the equations beyond the rank do not hold (no such direction); 1
 * when the meter's deadline passed. */
static int solve_complete(int p, double *K, double *rhs, double *x, int *cp, cs__meter *meter) {
    // The pivot of each step is the first largest entry of the trailing block in column order: the
    // first one is found here, each next one while the step before updates that block.
    double best = 0, rmax = 0;
    int bi = 0, bj = 0;
    for (int j = 0; j < p; j++)
        for (int i = 0; i < p; i++)
            if (fabs(K[(size_t)j * p + i]) > best) {
                best = fabs(K[(size_t)j * p + i]);
                bi = i;
                bj = j;
            }
    const double kmax = best;
    for (int i = 0; i < p; i++) {
        rmax = max_d(rmax, fabs(rhs[i]));
        cp[i] = i;
    }
    int rank = 0;
    for (int k = 0; k < p; k++) {
        if (!(best > LU_RANK_TOL * kmax))
            break;
        if (bi != k) {
            for (int j = 0; j < p; j++) {
                const double t = K[(size_t)j * p + k];
                K[(size_t)j * p + k] = K[(size_t)j * p + bi];
                K[(size_t)j * p + bi] = t;
            }
            const double t = rhs[k];
            rhs[k] = rhs[bi];
            rhs[bi] = t;
        }
        if (bj != k) {
            for (int i = 0; i < p; i++) {
                const double t = K[(size_t)k * p + i];
                K[(size_t)k * p + i] = K[(size_t)bj * p + i];
                K[(size_t)bj * p + i] = t;
            }
            const int t = cp[k];
            cp[k] = cp[bj];
            cp[bj] = t;
        }
        double *ck = K + (size_t)k * p;
        const double inv = 1 / ck[k];
        for (int i = k + 1; i < p; i++)
            ck[i] *= inv;
        best = 0;
        bi = bj = k + 1;
        for (int j = k + 1; j < p; j++) {
            double *cj = K + (size_t)j * p;
            const double u = cj[k];
            for (int i = k + 1; i < p; i++) {
                if (u != 0)
                    cj[i] -= ck[i] * u;
                if (fabs(cj[i]) > best) {
                    best = fabs(cj[i]);
                    bi = i;
                    bj = j;
                }
            }
        }
        for (int i = k + 1; i < p; i++)
            rhs[i] -= ck[i] * rhs[k];
        rank = k + 1;
        if (cs__meter_add(meter, (int64_t)(p - k) * (p - k)))
            return 1;
    }
    for (int i = rank; i < p; i++)
        if (fabs(rhs[i]) > CONSISTENT_TOL * rmax)
            return -1;
    for (int k = rank - 1; k >= 0; k--) {
        double s = rhs[k];
        for (int j = k + 1; j < rank; j++)
            s -= K[(size_t)j * p + k] * rhs[j];
        rhs[k] = s / K[(size_t)k * p + k];
    }
    for (int k = 0; k < p; k++)
        x[cp[k]] = k < rank ? rhs[k] : 0;
    return 0;
}

/* Entry (equation e, unknown u) of the clamped system, ids as in mlcp.sys: a row's equation holds
 * its velocity (A's entries, and alpha n_k on its group's rows for face k's dual), a face's holds
 * its slack (alpha (c mu df_normal - n_k . df_t)). Faces are scaled by alpha so that every entry
 * shares A's scale. */
static double mlcp_entry(const void *ctx, int e, int u) {
    const mlcp *w = ctx;
    const int n = w->n;
    if (e < n && u < n)
        return w->p->A[(size_t)u * w->p->lda + e];
    if (e >= n && u >= n)
        return 0;
    const int face = e < n ? u - n : e - n, row = e < n ? e : u;
    const group *g = &w->g[w->fgrp[face]];
    if (e >= n && row == g->normal)
        return w->alpha * g->c * g->coef;
    const int r = row - g->row;
    if (r < 0 || r >= g->m)
        return 0;
    const double nr = w->alpha * face_n(w, g, face - g->face, r);
    return e < n ? nr : -nr;
}

/* Whether id (row, or face n + k) is an unknown of the clamped system now. */
static bool mlcp_member(const mlcp *w, int id) {
    if (id >= w->n)
        return w->fset[id - w->n];
    const int k = w->p->kind[id];
    return k == CS_DANTZIG_NORMAL ? w->set[id] == CLAMPED : k == CS_DANTZIG_BILATERAL || w->on[id];
}

/* The clamped system follows the sets: what left is removed, what joined is added (O(p^2) each). */
static void mlcp_sync(mlcp *w) {
    cs__bordered *b = &w->sys;
    // Downwards: a removal only moves members from higher slots, which were looked at already.
    for (int s = b->m - 1; s >= 0; s--)
        if (!mlcp_member(w, b->id[s]))
            cs__bordered_remove(b, b->id[s]);
    for (int id = 0; id < w->n; id++)
        if (!cs__bordered_has(b, id) && mlcp_member(w, id))
            cs__bordered_add(b, id);
    // Faces in id order, looking only into the groups that have clamped ones.
    for (int q = 0; q < w->ng; q++) {
        if (w->g[q].nact == 0)
            continue;
        for (int k = w->g[q].face; k < w->g[q].face + w->g[q].nf; k++)
            if (w->fset[k] && !cs__bordered_has(b, w->n + k))
                cs__bordered_add(b, w->n + k);
    }
    cs__bordered_refresh(b);
}

/* w->x = the clamped system's inverse times w->rhs (both by id; rmax: max |rhs|), from the kept
 * inverse unless complete; where that cannot answer (a deferred equation fails) or complete, the
 * whole system eliminated with complete pivoting. Returns 0, -1 when the system has no solution, 1
 * at the deadline. */
static int clamped_solve(mlcp *w, double rmax, bool complete) {
    cs__bordered *b = &w->sys;
    int st = complete ? -1 : cs__bordered_solve(b, w->rhs, w->x, CONSISTENT_TOL * rmax);
    if (st < 0) {
        const int m = b->m;
        for (int c = 0; c < m; c++) {
            for (int e = 0; e < m; e++)
                w->K[(size_t)c * m + e] = b->K[(size_t)c * b->cap + e];
            w->rk[c] = w->rhs[b->id[c]];
        }
        st = solve_complete(m, w->K, w->rk, w->xk, w->cp, &w->meter);
        for (int c = 0; c < m && st == 0; c++)
            w->x[b->id[c]] = w->xk[c];
    }
    return st;
}

/* fdirection (Baraff 4.3 and 5.5): the direction (df, dsigma) in which every clamped row keeps its
 * equation: da_i = 0 (clamped normal, bilateral), dw_i = 0 (processed friction rows), dslack_k = 0
 * (clamped face), while the drive's own quantity moves: df_d = 1 for a normal, df_d = dir for a
 * friction row (its w is then free), dw = -w for the bilateral rows or df = -f for a released
 * group's rows (so that they reach zero at s = 1). Then da = A df. The system's inverse is kept
 * from pivot to pivot (bordered.h); when it cannot answer (a deferred equation fails), or when
 * complete, the whole system is eliminated with complete pivoting, which says whether the
 * direction exists. Returns 0, -1 when no such direction exists, 1 at the deadline. */
static int mlcp_direction(mlcp *w, const double *f, int kind, int d, bool complete) {
    const cs_dantzig_problem *P = w->p;
    const int n = w->n;
    cs__bordered *b = &w->sys;
    // Its passes over the rows and faces outside the metered kernels: the sync's, the arrays'.
    if (cs__meter_add(&w->meter, 2 * (int64_t)n + w->ng + w->nf))
        return 1;
    mlcp_sync(w);
    const double al = w->alpha;
    double rmax = 0;
    for (int q = 0; q < b->m; q++) {
        const int u = b->id[q];
        double r = 0;
        if (u >= n) {
            // The driven row's force is known (its group may have a clamped face); other
            // unprocessed rows are fixed.
            const group *g = &w->g[w->fgrp[u - n]];
            if (kind == DRIVE_ROW && d >= g->row && d < g->row + g->m)
                r = al * face_n(w, g, u - n - g->face, d - g->row) * w->dir;
            // A released group's free rows move by -f: their part of its clamped faces' slacks.
            for (int k = 0; kind == DRIVE_RELEASE && g == &w->g[d] && k < g->m; k++)
                if (!w->on[g->row + k])
                    r -= al * face_n(w, g, u - n - g->face, k) * f[g->row + k];
        } else if (kind == DRIVE_NORMAL) {
            r = -P->A[(size_t)d * P->lda + u];
        } else if (kind == DRIVE_ROW) {
            r = -w->dir * P->A[(size_t)d * P->lda + u];
        } else if (kind == DRIVE_RELEASE) {
            // The released group's force (of its free rows: processed ones keep their
            // equations) falls to zero at s = 1.
            const group *g = &w->g[d];
            for (int k = 0; k < g->m; k++)
                if (!w->on[g->row + k])
                    r += P->A[(size_t)(g->row + k) * P->lda + u] * f[g->row + k];
        } else if (P->kind[u] == CS_DANTZIG_BILATERAL) {
            r = -w->a[u];
        }
        w->rhs[u] = r;
        rmax = max_d(rmax, fabs(r));
    }
    const int st = clamped_solve(w, rmax, complete);
    if (st != 0)
        return st;
    memset(w->df, 0, (size_t)n * sizeof(double));
    memset(w->dsig, 0, (size_t)w->nf * sizeof(double));
    if (kind == DRIVE_RELEASE) {
        for (int q = 0; q < w->g[d].m; q++)
            if (!w->on[w->g[d].row + q])
                w->df[w->g[d].row + q] = -f[w->g[d].row + q];
    } else if (kind != DRIVE_BILATERAL) {
        w->df[d] = kind == DRIVE_ROW ? w->dir : 1;
    }
    for (int q = 0; q < b->m; q++) {
        const int u = b->id[q];
        if (u < n)
            w->df[u] = w->x[u];
        else
            w->dsig[u - n] = al * w->x[u];
    }
    // da = A df over the columns that move (df != 0: the driven row and clamped rows), in index
    // order.
    int k = 0;
    for (int j = 0; j < n; j++)
        if (w->df[j] != 0)
            w->cols[k++] = j;
    memset(w->da, 0, (size_t)n * sizeof(double));
    return mul_columns(n, P->A, P->lda, w->cols, k, w->df, w->da, &w->meter) ? 1 : 0;
}

/* The rate of w of row r of group g along the direction. */
static double group_dw(const mlcp *w, const group *g, int r) {
    double v = w->da[g->row + r];
    for (int k = 0; k < g->nf && g->nact > 0; k++)
        if (w->fset[g->face + k])
            v += w->dsig[g->face + k] * face_n(w, g, k, r);
    return v;
}

/* The step of a release (f_t (1 - s), the normal moving with the conditions kept) at which g's
 * force comes inside its polygon: the largest root of its violated faces' slacks, linear in s;
 * the whole release (s = 1) when a violated face's slack does not rise, 0 when none is violated. */
static double inside_step(const mlcp *w, const group *g, const double *f) {
    double s = 0;
    for (int k = 0; k < g->nf; k++) {
        const double sl = slack(w, g, k, f), ds = dslack(w, g, k);
        if (sl < 0)
            s = ds > 0 ? max_d(s, -sl / ds) : 1;
    }
    return s < 1 ? s : 1;
}

/* maxstep (Baraff 4.3, 5.5, eq. 23): the largest s keeping clamped normal forces >= 0, unclamped
 * normal velocities >= 0, clamped face duals >= 0 and every face of a processed group inside (slack
 * >= 0: the polygon's form of eq. 23, linear in s per edge), and not passing the drive's target.
 * *ret_j: the row (< n) or face (n + k) that limits it, STEP_TARGET, or STEP_NONE. On ties the
 * target wins (the drive ends), then the first index. *ret_miss: the largest |da| of a clamped
 * normal (its equation's residual) above rounding (REFINE_TOL of A's largest diagonal times the
 * direction's size), else 0. */
static double mlcp_maxstep(const mlcp *w, const double *f, int kind, int d, int *ret_j,
                           double *ret_miss) {
    const int n = w->n;
    double scale = 0;
    for (int i = 0; i < n; i++)
        scale = max_d(scale, fabs(w->df[i]));
    const double df_tol = DIR_TOL * scale, da_tol = DIR_TOL * w->dmax * scale;
    double s = INFINITY;
    int j = STEP_NONE;
    if (kind == DRIVE_BILATERAL || kind == DRIVE_RELEASE) {
        s = kind == DRIVE_RELEASE && w->keep ? inside_step(w, &w->g[d], f) : 1;
        j = STEP_TARGET;
    } else if (kind == DRIVE_NORMAL && w->da[d] > da_tol) {
        s = -w->a[d] / w->da[d];
        j = STEP_TARGET;
    } else if (kind == DRIVE_ROW) {
        const group *g = &w->g[w->gdrive];
        const double dw = group_dw(w, g, d - g->row);
        if (dw * w->dir > da_tol) {
            s = max_d(0.0, -group_w(w, g, d - g->row, w->a) / dw);
            j = STEP_TARGET;
        }
    }
    const int dn = kind == DRIVE_NORMAL ? d : -1;
    const double res_tol = REFINE_TOL * w->dmax * scale;
    double miss = 0;
    for (int i = 0; i < n; i++)
        if (w->p->kind[i] == CS_DANTZIG_NORMAL && i != dn) {
            bound_step(i, w->set[i], f[i], w->df[i], w->a[i], w->da[i], df_tol, da_tol, &s, &j);
            if (w->set[i] == CLAMPED && fabs(w->da[i]) > res_tol)
                miss = max_d(miss, fabs(w->da[i]));
        }
    *ret_miss = miss;
    // A processed group whose free force is released (stray_group) keeps it inside too, as the
    // driven row's group does: its force slides along its clamped faces, which can carry it past a
    // vertex.
    const int stray = kind == DRIVE_RELEASE && w->g[d].non > 0 ? d : -1;
    const int gopen = kind == DRIVE_RELEASE ? stray : w->gdrive;
    for (int q = 0; q < w->ng; q++) {
        const group *g = &w->g[q];
        const int room = g->non + (q == gopen);
        if (room == 0)
            continue;
        // An unclamped face can bound the step only while the group has room for one more face
        // (below) and its forces or its radius move.
        bool open = false;
        if (g->nact < room) {
            for (int r = 0; r < g->m; r++)
                open = open || w->df[g->row + r] != 0;
            open = open || (g->normal >= 0 && w->df[g->normal] != 0);
        }
        if (!open && g->nact == 0)
            continue;
        for (int k = 0; k < g->nf; k++) {
            const int fk = g->face + k;
            double si;
            if (w->fset[fk]) {
                if (!(w->dsig[fk] < -da_tol))
                    continue;
                si = -w->sigma[fk] / w->dsig[fk];
            } else {
                // A face is one more equation on the group's forces: no more of them than forces
                // that are free to move (a vertex fixes f_t; a third face can only touch it as r ->
                // 0, which the normal's own bound reports).
                if (!open)
                    continue;
                // A face the released force violates already is one it comes into, not one it
                // leaves by.
                if (q == stray && face_violated(w, g, k, f))
                    continue;
                const double ds = dslack(w, g, k);
                if (!(ds < -df_tol))
                    continue;
                si = slack(w, g, k, f) / -ds;
            }
            si = max_d(0.0, si);
            if (si < s) {
                s = si;
                j = n + fk;
            }
        }
    }
    *ret_j = j;
    return s;
}

/* Unclamps face fk of g. */
static void face_off(mlcp *w, group *g, int fk) {
    w->hash ^= item_hash((uint64_t)(w->n + fk));
    w->fset[fk] = 0;
    w->sigma[fk] = 0;
    g->nact--;
}

/* A group gives up its processed state: its force returns to zero (it is ~0 already when its normal
 * force reached zero: the faces kept it inside r P) and its faces unclamp. */
static void group_off(mlcp *w, double *f, group *g) {
    const cs_dantzig_problem *P = w->p;
    w->lost = w->lost || g->non || g->nact;
    for (int r = 0; r < g->m; r++) {
        const int i = g->row + r;
        w->on[i] = 0;
        if (f[i] != 0) {
            w->moved = true;
            const double *col = P->A + (size_t)i * P->lda;
            for (int q = 0; q < w->n; q++)
                w->a[q] -= f[i] * col[q];
            f[i] = 0;
        }
    }
    for (int k = 0; k < g->nf; k++)
        if (w->fset[g->face + k])
            face_off(w, g, g->face + k);
    g->non = 0;
    g->loose = false;
}

/* The duals of g's clamped faces but `skip` that zero w of its processed rows, read from the
 * velocities (as many faces as rows, <= 2). True, with them in sig (face order), when they exist
 * and are >= 0: the faces can hold those rows. */
static bool face_duals(const mlcp *w, const group *g, int skip, double sig[2]) {
    int fk[2], rr[2], nk = 0, nr = 0;
    for (int k = 0; k < g->nf; k++)
        if (w->fset[g->face + k] && k != skip) {
            if (nk == 2)
                return false;
            fk[nk++] = k;
        }
    for (int r = 0; r < g->m; r++)
        if (w->on[g->row + r])
            rr[nr++] = r;
    if (nk != nr)
        return false;
    if (nk == 1) {
        const double nx = face_n(w, g, fk[0], rr[0]);
        if (!(fabs(nx) > DIR_TOL))
            return false;
        sig[0] = -w->a[g->row + rr[0]] / nx;
    } else if (nk == 2) {
        const double a00 = face_n(w, g, fk[0], 0), a01 = face_n(w, g, fk[1], 0);
        const double a10 = face_n(w, g, fk[0], 1), a11 = face_n(w, g, fk[1], 1);
        const double det = a00 * a11 - a01 * a10;
        if (!(fabs(det) > DIR_TOL))
            return false;
        const double b0 = -w->a[g->row], b1 = -w->a[g->row + 1];
        sig[0] = (b0 * a11 - a01 * b1) / det;
        sig[1] = (a00 * b1 - b0 * a10) / det;
    }
    return nk == 0 || (sig[0] >= 0 && (nk == 1 || sig[1] >= 0));
}

/* Sets the duals of g's clamped faces but `skip` to sig (face order). */
static void set_duals(mlcp *w, const group *g, int skip, const double sig[2]) {
    for (int k = 0, q = 0; k < g->nf; k++)
        if (w->fset[g->face + k] && k != skip)
            w->sigma[g->face + k] = sig[q++];
}

/* Face knew of g became clamped, one more than g's processed rows: an old face leaves when the new
 * one can hold the processed rows with it (their duals, read from the velocities, >= 0), and the
 * force goes on round the polygon's corner. True when one did. */
static bool turn_corner(mlcp *w, group *g, int knew) {
    double sig[2];
    for (int k = 0; k < g->nf; k++)
        if (w->fset[g->face + k] && k != knew && face_duals(w, g, k, sig)) {
            set_duals(w, g, k, sig);
            face_off(w, g, g->face + k);
            return true;
        }
    return false;
}

/* A face of the group being driven became clamped, one more than the group's processed rows: the
 * drive can go on round the polygon's corner (turn_corner); otherwise the driven force has reached
 * its bound (Baraff 5.3: NC+ / NC-) and row d is done, held by the faces, whose duals carry what is
 * left of its velocity. A face whose dual would be negative does not hold: it is unclamped and the
 * row's velocity left to a later drive. Returns true when the drive goes on. */
static bool corner(mlcp *w, group *g, int d, int knew) {
    double sig[2];
    // Row d held by all the faces (a vertex whose normal cone holds the velocity): done.
    w->on[d] = 1;
    g->non++;
    if (face_duals(w, g, -1, sig)) {
        set_duals(w, g, -1, sig);
        return false;
    }
    w->on[d] = 0;
    g->non--;
    if (turn_corner(w, g, knew))
        return true;
    w->on[d] = 1;
    g->non++;
    for (int k = 0; k < g->nf; k++)
        if (w->fset[g->face + k])
            face_off(w, g, g->face + k);
    return false;
}

/* Meter units of a face's test between drives (stray_group, violated_group): its slack's and its
 * size's products. */
#define FACE_TEST_UNITS 4

/* The first processed group whose free rows keep a force (freed by a cycle in its own drive) that
 * violates a face of its polygon, or -1: its normal moved while nothing held that force, and the
 * drives, which keep the processed rows' equations only, would leave it outside (an answer the
 * final check refuses). Clears w->strays when no processed group keeps a free force at all. */
static int stray_group(mlcp *w, const double *f) {
    (void)cs__meter_add(&w->meter, (int64_t)w->n + FACE_TEST_UNITS * (int64_t)w->nf);
    bool any = false;
    for (int q = 0; q < w->ng; q++) {
        const group *g = &w->g[q];
        bool free_force = false;
        for (int r = 0; r < g->m; r++)
            free_force = free_force || (!w->on[g->row + r] && f[g->row + r] != 0);
        if (!free_force || g->non == 0)
            continue;
        any = true;
        for (int k = 0; k < g->nf; k++)
            if (!w->fset[g->face + k] && face_violated(w, g, k, f))
                return q;
    }
    w->strays = any;
    return -1;
}

/* The first group given up with a force that violates a face of its polygon, or -1. */
static int violated_group(mlcp *w, const double *f) {
    (void)cs__meter_add(&w->meter, FACE_TEST_UNITS * (int64_t)w->nf);
    for (int q = 0; q < w->ng; q++) {
        const group *g = &w->g[q];
        for (int k = 0; g->non == 0 && g->nact == 0 && k < g->nf; k++)
            if (face_violated(w, g, k, f))
                return q;
    }
    return -1;
}

/* g's rows stop being processed and its faces unclamp; its force stays. */
static void group_unprocess(mlcp *w, group *g) {
    for (int r = 0; r < g->m; r++)
        w->on[g->row + r] = 0;
    for (int k = 0; k < g->nf; k++)
        if (w->fset[g->face + k])
            face_off(w, g, g->face + k);
    g->non = 0;
}

/* g's normal force reached zero, and with it the radius of g's polygon: its friction must be
 * zero. Its faces took it there with the normal when they held all its rows; a force they did not
 * hold (a row freed by a give-up in its own drive, fixed while the polygon shrank round it) is
 * left outside. Zeroed at once, as group_off does, it would move the velocity of every clamped
 * row, whose equations the drives then no longer keep; so it is released instead, taken to zero
 * along a straight line with every condition kept, before the next drive (as a give-up's). Once
 * releases went round (keep) it is zeroed at once, as it was. fs: the largest force. */
static void normal_gone(mlcp *w, double *f, group *g, double fs) {
    double ft = 0;
    for (int r = 0; r < g->m; r++)
        ft += fabs(f[g->row + r]);
    // A force within MOVE_TOL of the forces (fs: their largest) is rounding: the faces took it
    // to zero.
    if (w->keep || !(ft > MOVE_TOL * fs)) {
        group_off(w, f, g);
        return;
    }
    w->lost = true;
    group_unprocess(w, g);
    g->loose = w->loose = true;
}

/* Baraff's remedy for an index that alternates between two sets with zero steps (5.4): stop
 * maintaining its conditions for now. A normal row leaves both C and NC (its force is zero); a
 * face's group stops being processed and its force, which no face holds inside its polygon now, is
 * released to zero before the next drive (loose; kept as it is once releases go round, for the
 * final check to judge). In the driven row's own group only the other rows are freed (a face tilted
 * against them by the normal's tie blocks the drive clamped or free); all its faces are then
 * unclamped, and the drive's step bound keeps its force inside the polygon while it lasts. With
 * none to free, false: the caller reports the cycle. */
static bool give_up(mlcp *w, double *f, int j) {
    // Drives that give up in turn what the others establish go round too (state_repeats).
    w->lost = true;
    if (j < w->n) {
        if (w->set[j] == CLAMPED)
            w->hash ^= item_hash((uint64_t)j);
        w->set[j] = UNPROCESSED;
        for (int q = 0; q < w->ng; q++)
            if (w->g[q].normal == j && (w->g[q].non || w->g[q].nact))
                group_off(w, f, &w->g[q]);
        return true;
    }
    group *g = &w->g[w->fgrp[j - w->n]];
    const bool driven = g - w->g == w->gdrive;
    if (driven && g->non == 0)
        return false;
    // The driven group's freed rows keep their forces, which its faces no longer hold inside.
    for (int r = 0; driven && r < g->m; r++)
        w->strays = w->strays || (w->on[g->row + r] && f[g->row + r] != 0);
    // Another group's force is held inside by nothing now: released after this drive.
    for (int r = 0; r < g->m; r++)
        g->loose = g->loose || (!driven && !w->keep && f[g->row + r] != 0);
    w->loose = w->loose || g->loose;
    group_unprocess(w, g);
    return true;
}

/* drive-to-zero (Baraff 4.3, 5.5) of normal row d, friction row d, or the bilateral rows. */
static cs_status mlcp_drive(mlcp *w, double *f, int kind, int d, int cap, cs_stats *st) {
    const int n = w->n;
    w->nseen = 0;
    w->gdrive = kind == DRIVE_ROW ? w->grp[d] : -1;
    group *gd = kind == DRIVE_ROW ? &w->g[w->gdrive] : NULL;
    for (;;) {
        if (kind == DRIVE_NORMAL && w->a[d] >= -w->viol) {
            // Reached, possibly by a step that tied with d's own limit.
            w->a[d] = 0;
            w->set[d] = CLAMPED;
            w->hash ^= item_hash((uint64_t)d);
            return CS_CONVERGED;
        }
        if (st->pivots >= cap)
            return CS_MAXITER;
        if (cs__meter_check(&w->meter))
            return CS_DEADLINE;
        // A direction from the kept inverse whose clamped normals miss their equations beyond
        // rounding (an inverse that near-singular pivots made inexact), where the step carries
        // the miss into their w (as in the LCP's refinement, CARRY_TOL), is solved afresh by
        // complete pivoting: no drive looks at a clamped row again. A zero step carries none.
        int j;
        double s;
        for (bool complete = false;; complete = true) {
            const int dir = mlcp_direction(w, f, kind, d, complete);
            if (dir > 0)
                return CS_DEADLINE;
            if (dir < 0)
                return kind == DRIVE_BILATERAL ? CS_SINGULAR : CS_RAY;
            double miss;
            s = mlcp_maxstep(w, f, kind, d, &j, &miss);
            if (!(s * miss > CARRY_TOL * w->viol) || complete)
                break;
        }
        // The ratio test's passes over the rows and faces, and the step's.
        if (cs__meter_add(&w->meter, 3 * (int64_t)n + w->nf))
            return CS_DEADLINE;
        st->pivots++;
        // A row whose velocity is zero already (to the tolerance the drives are chosen by: a step
        // that tied with its own limit) is done, whatever the direction that would follow: one
        // that moves forces without moving any velocity has no bound, and is no ray.
        if (j == STEP_NONE && kind == DRIVE_ROW &&
            fabs(group_w(w, gd, d - gd->row, w->a)) <= w->viol) {
            w->on[d] = 1;
            gd->non++;
            return CS_CONVERGED;
        }
        if (j == STEP_NONE)
            return CS_RAY; // Baraff section 6: s = infinity
        // A face that the group's kept force violates already (its normal shrank under it) holds
        // no row: clamped at a zero step it leaves the drive where it began, to repeat. The whole
        // group's force is released into its polygon instead, as a give-up's would be, and the
        // next drive chosen; the drives after it are noted as after a give-up (state_repeats).
        if (kind == DRIVE_ROW && w->keep && s == 0 && j >= n && w->fgrp[j - n] == w->gdrive &&
            !w->fset[j - n] && face_violated(w, gd, j - n - gd->face, f)) {
            group_unprocess(w, gd);
            w->lost = true;
            return mlcp_drive(w, f, DRIVE_RELEASE, w->gdrive, cap, st);
        }
        double step = 0, fs = 0;
        for (int i = 0; i < n; i++) {
            f[i] += s * w->df[i];
            w->a[i] += s * w->da[i];
            step = max_d(step, fabs(s * w->df[i]));
            fs = max_d(fs, fabs(f[i]));
        }
        // A step below MOVE_TOL of the forces is rounding, not progress (state_repeats).
        w->moved = w->moved || step > MOVE_TOL * fs;
        // Only the clamped faces' duals move (dsig is zero elsewhere).
        for (int q = 0; q < w->sys.m; q++)
            if (w->sys.id[q] >= n)
                w->sigma[w->sys.id[q] - n] += s * w->dsig[w->sys.id[q] - n];
        if (j == STEP_TARGET) {
            if (kind == DRIVE_NORMAL) {
                w->a[d] = 0;
                w->set[d] = CLAMPED;
                w->hash ^= item_hash((uint64_t)d);
            } else if (kind == DRIVE_ROW) {
                w->on[d] = 1;
                gd->non++;
            }
            return CS_CONVERGED;
        }
        if (j < n) {
            w->hash ^= item_hash((uint64_t)j);
            if (w->set[j] == CLAMPED) {
                f[j] = 0;
                w->set[j] = NOT_CLAMPED;
                // Friction bounded by a zero normal force is zero. Once drives went round, a
                // processed group keeps its faces instead, which hold it at zero (Baraff's NC+-).
                for (int q = 0; q < w->ng; q++)
                    if (w->g[q].normal == j &&
                        (q == w->gdrive || (!w->hold && (w->g[q].non || w->g[q].nact))))
                        normal_gone(w, f, &w->g[q], fs);
                if (gd && gd->normal == j)
                    return CS_CONVERGED; // the driven row's bound is gone: nothing to
                                         // drive
            } else {
                w->a[j] = 0;
                w->set[j] = CLAMPED;
            }
        } else {
            const int k = j - n;
            group *g = &w->g[w->fgrp[k]];
            if (w->fset[k]) {
                face_off(w, g, k);
            } else {
                w->hash ^= item_hash((uint64_t)j);
                w->sigma[k] = 0;
                w->fset[k] = 1;
                g->nact++;
                if (g == gd && g->nact > g->non && !corner(w, g, d, k - g->face))
                    return CS_CONVERGED;
                // A released free force reached a vertex of its processed group's polygon: it
                // goes on round it, or, where the faces cannot hand over, the processed rows'
                // conditions do not hold with it at zero: the group is given up and its whole
                // force released, as a give-up's.
                if (kind == DRIVE_RELEASE && g == &w->g[d] && g->nact > g->non &&
                    !turn_corner(w, g, k - g->face)) {
                    group_unprocess(w, g);
                    w->lost = true;
                }
            }
        }
        // A clamped set seen before in this drive: the path closed on itself (cycling, Baraff 5.4).
        // Give up on the index that moved, as Baraff does; a later drive re-establishes its
        // conditions.
        bool cycle = false;
        for (int q = 0; q < w->nseen && q < CYCLE_MEMORY; q++)
            cycle = cycle || w->seen[q] == w->hash;
        if (cycle) {
            if (!give_up(w, f, j))
                return CS_MAXITER;
            w->nseen = 0;
        }
        w->seen[w->nseen++ % CYCLE_MEMORY] = w->hash;
    }
}

/* Meter units (deadline.h) of a row of check_problem: its diagonal entry lies a column from the
 * last, alone in its cache line, so it costs the 8 units a line of streamed doubles does (a page
 * apart at a session's limits, and a TLB miss too: 768 rows took 6-10 us on the CI VM, 8-12 ns
 * a row, 8 units at the meter's 1-1.5 ns). */
#define DIAGONAL_UNITS 8

/* Checks p; returns the number of groups, faces and friction rows through ret_ng, ret_nf and
 * ret_nfric, and A's largest diagonal entry through ret_dmax; CS_EINPUT, or CS_DEADLINE when the
 * meter's deadline passed. */
static cs_status check_problem(const cs_dantzig_problem *p, cs__meter *meter, int *ret_ng,
                               int *ret_nf, int *ret_nfric, double *ret_dmax) {
    if (p->n < 0 || (p->n > 0 && (!p->A || !p->b || !p->kind || p->lda < p->n)))
        return CS_EINPUT;
    int ng = 0, nf = 0, nfric = 0;
    bool pairs = false;
    // A's diagonal is read here once: its entries lie a column apart, a page at a session's
    // limits, each a TLB miss. Row by row through the meter unless the whole reads no clock.
    cs__meter *const mt = cs__meter_piecewise(meter, DIAGONAL_UNITS * (int64_t)p->n);
    double dmax = 0;
    for (int i = 0; i < p->n; i++) {
        if (mt && cs__meter_add(mt, DIAGONAL_UNITS))
            return CS_DEADLINE;
        const double aii = p->A[(size_t)i * p->lda + i];
        if (!isfinite(p->b[i]) || !isfinite(aii))
            return CS_EINPUT;
        dmax = max_d(dmax, aii);
        const int k = p->kind[i];
        if (k == CS_DANTZIG_NORMAL || k == CS_DANTZIG_BILATERAL)
            continue;
        if (k != CS_DANTZIG_BOX && k != CS_DANTZIG_PAIR)
            return CS_EINPUT;
        if (!p->bound || !isfinite(p->bound[i]) || p->bound[i] < 0)
            return CS_EINPUT;
        const int nr = p->normal ? p->normal[i] : -1;
        if (nr < -1 || nr >= p->n || (nr >= 0 && p->kind[nr] != CS_DANTZIG_NORMAL))
            return CS_EINPUT;
        if (k == CS_DANTZIG_PAIR) {
            if (i + 1 >= p->n || p->kind[i + 1] != CS_DANTZIG_PAIR || !isfinite(p->b[i + 1]) ||
                !isfinite(p->A[(size_t)(i + 1) * p->lda + i + 1]))
                return CS_EINPUT;
            pairs = true;
            nf += p->nd;
            nfric += 2;
            i++;
        } else {
            nf += 2;
            nfric++;
        }
        ng++;
    }
    if (pairs && (p->nd < 4 || p->nd % 2 != 0))
        return CS_EINPUT;
    if (!mt && cs__meter_add(meter, DIAGONAL_UNITS * (int64_t)p->n))
        return CS_DEADLINE;
    *ret_ng = ng;
    *ret_nf = nf;
    *ret_nfric = nfric;
    *ret_dmax = dmax;
    return CS_CONVERGED;
}

/* Meter units of one face in answer_holds(). */
#define FACE_CHECK_UNITS 8

/* The final check of an answer from scratch: a = A f + b (into w->da), each row's law to ANSWER_TOL
 * of the problem's scales (forces: max |f|; velocities: max |b| and max |a|), and for friction the
 * maximal-dissipation gap f_t . a_t + r h(-a_t) (h: support function of the unit set), which is 0
 * exactly when f_t minimises f_t . a_t over r P: to ANSWER_TOL max |f| |a_t| where the contact
 * slides (|a_t| above SLIP_TOL of the velocity scale), else max |f| times the velocity scale. */
static bool answer_holds(mlcp *w, const double *f, double bmax) {
    const cs_dantzig_problem *P = w->p;
    const int n = w->n;
    // Over the columns of non-zero forces only: at rest most friction rows carry none.
    int k = 0;
    for (int j = 0; j < n; j++)
        if (f[j] != 0)
            w->cols[k++] = j;
    memcpy(w->da, P->b, (size_t)n * sizeof(double));
    // Through the meter: at a session's limits the product is tens of us (the caller then
    // reports the deadline).
    if (mul_columns(n, P->A, P->lda, w->cols, k, f, w->da, &w->meter))
        return false;
    double fs = 0, as = bmax;
    for (int i = 0; i < n; i++) {
        fs = max_d(fs, fabs(f[i]));
        as = max_d(as, fabs(w->da[i]));
    }
    const double ta = ANSWER_TOL * as, tf = ANSWER_TOL * fs, tfa = ANSWER_TOL * fs * as;
    for (int i = 0; i < n; i++) {
        const double a = w->da[i];
        if (P->kind[i] == CS_DANTZIG_NORMAL && (f[i] < -tf || a < -ta || fabs(f[i] * a) > tfa))
            return false;
        if (P->kind[i] == CS_DANTZIG_BILATERAL && fabs(a) > ta)
            return false;
    }
    // The groups' faces (8 units each: the slack's and the support's products): at a session's
    // limits thousands, tens of us, so counted group by group where the pass does not fit.
    cs__meter *const mt = cs__meter_piecewise(&w->meter, FACE_CHECK_UNITS * (int64_t)w->nf);
    for (int q = 0; q < w->ng; q++) {
        const group *g = &w->g[q];
        if (mt && cs__meter_add(mt, FACE_CHECK_UNITS * (int64_t)g->nf))
            return false;
        const double r = radius(g, f);
        double h = 0, fa = 0;
        for (int k = 0; k < g->nf; k++) {
            if (slack(w, g, k, f) < -tf)
                return false;
            // The support function's maximum sits on a vertex: vertex k (face k's first) for a
            // pair, +-1 for a box.
            double hv = 0;
            for (int rr = 0; rr < g->m; rr++) {
                const double vx = g->m == 1 ? face_n(w, g, k, 0) : w->tab[2 * g->nf + 2 * k + rr];
                hv -= vx * w->da[g->row + rr];
            }
            h = max_d(h, hv);
        }
        double at = 0;
        for (int rr = 0; rr < g->m; rr++) {
            fa += f[g->row + rr] * w->da[g->row + rr];
            at += w->da[g->row + rr] * w->da[g->row + rr];
        }
        // A contact that slides (above SLIP_TOL of the velocity scale) is judged per unit of its
        // slip, as the certificate judges it: a slow slip's direction, and with it the
        // dissipation, turns with errors in w far below the velocity scale.
        at = sqrt(at);
        if (fabs(fa + r * h) > (at > SLIP_TOL * as ? ANSWER_TOL * fs * at : tfa))
            return false;
    }
    return true;
}

/* One step of iterative refinement of the drives' answer on its final sets: the
 * residuals of the clamped rows' equations at the velocities answer_holds computed (w->da), of the
 * processed rows' and of the clamped faces', solved with the clamped system as a direction is,
 * and taken off f and the duals. The drives carry f and w through every pivot, and their drift
 * (1e-12 of the scales) turns a slow slip's direction. Returns 0, -1 when the system has no
 * solution, 1 at the deadline. */
static int refine(mlcp *w, double *f) {
    const int n = w->n;
    const cs__bordered *b = &w->sys;
    mlcp_sync(w);
    double rmax = 0;
    for (int q = 0; q < b->m; q++) {
        const int u = b->id[q];
        double r;
        if (u >= n) {
            const group *g = &w->g[w->fgrp[u - n]];
            r = -w->alpha * slack(w, g, u - n - g->face, f);
        } else if (w->grp[u] >= 0) {
            const group *g = &w->g[w->grp[u]];
            r = -group_w(w, g, u - g->row, w->da);
        } else {
            r = -w->da[u];
        }
        w->rhs[u] = r;
        rmax = max_d(rmax, fabs(r));
    }
    const int st = clamped_solve(w, rmax, false);
    for (int q = 0; q < b->m && st == 0; q++) {
        const int u = b->id[q];
        if (u < n)
            f[u] += w->x[u];
        else
            w->sigma[u - n] += w->alpha * w->x[u];
    }
    return st;
}

/* The bounded problem's state before any drive: a unit a row and a face, counted a chunk at a
 * time (cs__meter_chunk: the whole at once where it reads no clock), so the loops between stay
 * plain. True when the meter's deadline passed (the state partly set). */
static bool mlcp_reset(mlcp *w, double *f) {
    // f first and whole: cut short, the pass still leaves the start as its iterate.
    memset(f, 0, (size_t)w->n * sizeof(double));
    const int chunk = cs__meter_chunk(&w->meter, w->n + w->nf, 1);
    for (int i0 = 0; i0 < w->n; i0 += chunk) {
        const int k = cs__chunk_len(i0, chunk, w->n);
        if (cs__meter_add(&w->meter, k))
            return true;
        for (int i = i0; i < i0 + k; i++) {
            w->a[i] = w->p->b[i];
            w->set[i] = UNPROCESSED;
            w->on[i] = 0;
        }
    }
    for (int k0 = 0; k0 < w->nf; k0 += chunk) {
        const int k = cs__chunk_len(k0, chunk, w->nf);
        if (cs__meter_add(&w->meter, k))
            return true;
        for (int q = k0; q < k0 + k; q++) {
            w->fset[q] = 0;
            w->sigma[q] = 0;
        }
    }
    for (int q = 0; q < w->ng; q++) {
        w->g[q].nact = w->g[q].non = 0;
        w->g[q].loose = false;
    }
    w->hash = 0;
    w->moved = true;
    w->nfreed = 0;
    w->nround = 0;
    w->hold = false;
    w->lost = false;
    w->keep = false;
    w->loose = false;
    w->strays = false;
    cs__bordered_clear(&w->sys);
    return w->meter.passed;
}

/* FNV-1a of every row's and face's set. */
static uint64_t sets_hash(mlcp *w) {
    (void)cs__meter_add(&w->meter, (int64_t)w->n + w->nf);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < w->n; i++)
        h = (h ^ (uint64_t)(w->set[i] | w->on[i] << 2)) * 0x100000001b3ull;
    for (int k = 0; k < w->nf; k++)
        h = (h ^ (uint64_t)w->fset[k]) * 0x100000001b3ull;
    return h;
}

/* Whether h is among the last CYCLE_MEMORY of the *nmem hashes in mem; notes it otherwise. */
static bool noted_before(uint64_t *mem, int *nmem, uint64_t h) {
    for (int q = 0; q < *nmem && q < CYCLE_MEMORY; q++)
        if (mem[q] == h)
            return true;
    mem[(*nmem)++ % CYCLE_MEMORY] = h;
    return false;
}

/* Whether the drives went round with their forces moving: the clamped sets (w->hash) and the
 * forces (to MOVE_TOL of their scale, through one weighted sum) at this drive's start met at the
 * start of an earlier drive of the record. Notes them otherwise. O(n). */
static bool went_round(mlcp *w, const double *f) {
    (void)cs__meter_add(&w->meter, 2 * (int64_t)w->n);
    double x = 0, scale = 0;
    for (int i = 0; i < w->n; i++) {
        x += (i + 1) * f[i];
        scale += (i + 1) * fabs(f[i]);
    }
    for (int q = 0; q < w->nround && q < CYCLE_MEMORY; q++)
        if (w->round[q] == w->hash && fabs(w->fround[q] - x) <= MOVE_TOL * scale)
            return true;
    w->round[w->nround % CYCLE_MEMORY] = w->hash;
    w->fround[w->nround++ % CYCLE_MEMORY] = x;
    return false;
}

/* Whether the drives go round for ever (Baraff 5.4's cycling across drives, which the hash of one
 * drive cannot see). Drives that take only zero steps repeat the sets since forces last moved
 * (MOVE_TOL; a face of the driven group unclamped by one drive and clamped by the next): the sets
 * are hashed while the forces stand still, so drives that move pay nothing for it. Drives that
 * move can return to the forces and sets of an earlier drive too: a friction drive takes another
 * contact's normal force to zero, which clears that contact's friction, and establishing it again
 * takes the first's normal to zero. Such a round loses some group's conditions, or gives up an
 * index that the next drive establishes again (a normal and a face of another contact, in turn,
 * until the pivot cap), so only the drives after a loss or a give-up are noted (O(n) each). The
 * first round makes friction outlive its normal's zero for the rest of the pass (hold: its faces
 * hold it at zero and keep its direction, Baraff's NC+-), so that its conditions are not lost; a
 * second round is a cycle. Releases, whose rounds have their own record, start a new one. */
static bool state_repeats(mlcp *w, const double *f) {
    const bool lost = w->lost;
    w->lost = false;
    if (w->moved) {
        w->moved = false;
        w->nstill = 0;
        if (!lost || !went_round(w, f))
            return false;
        if (w->hold)
            return true;
        w->hold = true;
        w->nround = 0;
        return false;
    }
    return noted_before(w->still, &w->nstill, sets_hash(w));
}

/* Baraff's pivoting from the start (5.5): bilateral rows, then normals before friction. Drives are
 * taken most violated first, or when least_index in index order. The answer is checked from
 * scratch (answer_holds). */
static cs_status mlcp_pivot(mlcp *w, double *f, bool least_index, int cap, double bmax,
                            cs_stats *st) {
    const cs_dantzig_problem *p = w->p;
    const int n = w->n, ng = w->ng;
    if (mlcp_reset(w, f))
        return CS_DEADLINE;
    cs_status status = CS_CONVERGED;

    // Bilateral rows first (Baraff 4.5): one drive zeroes all their velocities; they stay clamped,
    // with either sign, from then on.
    for (int i = 0; i < n; i++)
        if (p->kind[i] == CS_DANTZIG_BILATERAL && fabs(w->a[i]) > w->viol) {
            status = mlcp_drive(w, f, DRIVE_BILATERAL, 0, cap, st);
            break;
        }
    while (status == CS_CONVERGED) {
        // The scans for the next drive pass over the rows and the clamped faces (group_w); those
        // of rarer passes (stray_group, sets_hash, went_round, violated_group) count their own.
        if (cs__meter_add(&w->meter, 2 * (int64_t)n + w->nf)) {
            status = CS_DEADLINE;
            break;
        }
        // Baraff's unprocessed contacts carry no force: a group given up with one has it taken to
        // zero first, every other condition kept.
        int loose = -1;
        for (int q = 0; q < ng && w->loose && loose < 0; q++)
            if (w->g[q].loose)
                loose = q;
        w->loose = loose >= 0;
        if (loose >= 0) {
            // Releases whose sets repeat go round (give-ups that undo each other, 5.4): from then
            // on a given-up force is kept as it is, for the final check to judge.
            if (noted_before(w->freed, &w->nfreed, sets_hash(w) ^ item_hash((uint64_t)loose))) {
                w->keep = true;
                for (int q = 0; q < ng; q++)
                    w->g[q].loose = false;
                continue;
            }
            w->g[loose].loose = false;
            w->nround = 0;
            status = mlcp_drive(w, f, DRIVE_RELEASE, loose, cap, st);
            continue;
        }
        // A free row's force that its processed group let out of the polygon: released.
        const int stray = w->strays && !w->keep ? stray_group(w, f) : -1;
        if (stray >= 0) {
            w->lost = true;
            status = mlcp_drive(w, f, DRIVE_RELEASE, stray, cap, st);
            continue;
        }
        // Normal conditions before friction (Baraff 5.5), the most violated (or the first) first.
        int d = -1;
        double amin = -w->viol;
        for (int i = 0; i < n && !(least_index && d >= 0); i++)
            if (p->kind[i] == CS_DANTZIG_NORMAL && w->set[i] != CLAMPED && w->a[i] < amin) {
                amin = w->a[i];
                d = i;
            }
        if (d >= 0) {
            if (state_repeats(w, f)) {
                status = CS_MAXITER;
                break;
            }
            w->set[d] = UNPROCESSED;
            status = mlcp_drive(w, f, DRIVE_NORMAL, d, cap, st);
            continue;
        }
        // The friction row with the largest velocity still to take up: unprocessed with a bound
        // (its normal clamped), or processed but off zero (a face that did not hold).
        int fd = -1;
        double wmax = w->viol, wd = 0;
        for (int q = 0; q < ng && !(least_index && fd >= 0); q++) {
            group *g = &w->g[q];
            const bool bounded =
                radius(g, f) > 0 && (g->normal < 0 || w->set[g->normal] == CLAMPED);
            for (int r = 0; r < g->m; r++) {
                const double v = group_w(w, g, r, w->a);
                if ((w->on[g->row + r] || bounded) && fabs(v) > wmax) {
                    wmax = fabs(v);
                    wd = v;
                    fd = g->row + r;
                }
            }
        }
        if (fd < 0) {
            // A kept force left outside its polygon is no answer: it is released into it and the
            // drives go on (noted as after a give-up), unless the sets met an earlier release.
            const int q = w->keep ? violated_group(w, f) : -1;
            if (q < 0 || noted_before(w->freed, &w->nfreed, sets_hash(w) ^ item_hash((uint64_t)q)))
                break;
            w->lost = true;
            status = mlcp_drive(w, f, DRIVE_RELEASE, q, cap, st);
            continue;
        }
        if (state_repeats(w, f)) {
            status = CS_MAXITER;
            break;
        }
        group *g = &w->g[w->grp[fd]];
        if (w->on[fd]) {
            w->on[fd] = 0;
            g->non--;
            // Keep no more clamped faces than processed rows: drop the weakest.
            while (g->nact > g->non) {
                int kmin = -1;
                for (int k = 0; k < g->nf; k++)
                    if (w->fset[g->face + k] &&
                        (kmin < 0 || w->sigma[g->face + k] < w->sigma[g->face + kmin]))
                        kmin = k;
                face_off(w, g, g->face + kmin);
            }
        }
        w->dir = wd > 0 ? -1 : 1;
        status = mlcp_drive(w, f, DRIVE_ROW, fd, cap, st);
    }
    if (status == CS_CONVERGED) {
        for (int i = 0; i < n; i++)
            if (p->kind[i] == CS_DANTZIG_NORMAL)
                f[i] = max_d(0.0, f[i]);
        // Given-up indices and rounding are judged on the answer itself: never a silent one. An
        // answer that fails is refined once and judged again.
        if (!answer_holds(w, f, bmax) &&
            (w->meter.passed || refine(w, f) != 0 || !answer_holds(w, f, bmax)))
            status = w->meter.passed ? CS_DEADLINE : CS_MAXITER;
    }
    return status;
}

/* A deadline before the first drive: the iterate is the start, f = 0 (not the caller's values).
 * Returns CS_DEADLINE. */
static cs_status stopped_in_set_up(double *f, int n) {
    memset(f, 0, (size_t)n * sizeof(double));
    return CS_DEADLINE;
}

cs_status cs_dantzig_mlcp(cs_workspace *ws, const cs_dantzig_problem *p, const cs_options *opt,
                          double *f, cs_stats *st) {
    *st = (cs_stats){0};
    // The set-up before the first drive passes over every row and face, O(n + nf): each pass
    // goes through the meter (at a session's limits they add up to tens of us).
    cs__meter meter = cs__meter_start(opt);
    int ng, nf, nfric;
    double dmax;
    const cs_status valid = check_problem(p, &meter, &ng, &nf, &nfric, &dmax);
    if (valid == CS_DEADLINE)
        return stopped_in_set_up(f, p->n);
    if (valid != CS_CONVERGED)
        return valid;
    const int n = p->n, nd = nf > 2 * ng ? p->nd : 0;
    const size_t mark = cs__ws_mark(ws);
    const size_t N = (size_t)n, F = (size_t)nf, P = N + (size_t)nfric;
    mlcp w = {
        .p = p,
        .n = n,
        .ng = ng,
        .nf = nf,
        .g = cs__ws_alloc(ws, N * sizeof(group)),
        .grp = cs__ws_alloc(ws, N * sizeof(int)),
        .fgrp = cs__ws_alloc(ws, F * sizeof(int)),
        .set = cs__ws_zalloc(ws, N),
        .fset = cs__ws_zalloc(ws, F),
        .on = cs__ws_zalloc(ws, N),
        .sigma = cs__ws_zalloc(ws, F * sizeof(double)),
        .dsig = cs__ws_alloc(ws, F * sizeof(double)),
        .a = cs__ws_alloc(ws, N * sizeof(double)),
        .df = cs__ws_alloc(ws, N * sizeof(double)),
        .da = cs__ws_alloc(ws, N * sizeof(double)),
        .tab = cs__ws_alloc(ws, 4 * (size_t)nd * sizeof(double)),
        .rhs = cs__ws_alloc(ws, (N + F) * sizeof(double)),
        .x = cs__ws_alloc(ws, (N + F) * sizeof(double)),
        .cp = cs__ws_alloc(ws, P * sizeof(int)),
        .cols = cs__ws_alloc(ws, N * sizeof(int)),
        .K = cs__ws_alloc(ws, P * P * sizeof(double)),
        .rk = cs__ws_alloc(ws, P * sizeof(double)),
        .xk = cs__ws_alloc(ws, P * sizeof(double)),
        .dmax = dmax,
        .meter = meter,
    };
    if (n > 0 && (!w.g || !w.grp || !w.set || !w.on || !w.a || !w.df || !w.da || !w.rhs || !w.x ||
                  !w.cp || !w.cols || !w.K || !w.rk || !w.xk ||
                  (nf && (!w.fgrp || !w.fset || !w.sigma || !w.dsig)) || (nd && !w.tab))) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    // Edge k of the nd-gon joins vertices k and k + 1 (cs_lemke_direction's 2 pi k / nd): its
    // outward normal points at (2 k + 1) pi / nd, at distance cos(pi / nd) from the centre.
    for (int k = 0; k < nd; k++) {
        cs_lemke_direction(2 * nd, 2 * k + 1, &w.tab[2 * k], &w.tab[2 * k + 1]);
        cs_lemke_direction(nd, k, &w.tab[2 * nd + 2 * k], &w.tab[2 * nd + 2 * k + 1]);
    }
    const double cpair = nd ? w.tab[0] : 1;
    // A unit a row and a face, through the meter unless the whole reads no clock.
    cs__meter *const mt = cs__meter_piecewise(&w.meter, (int64_t)n + nf);
    double bmax = 0;
    for (int i = 0, q = 0, fk = 0; i < n; i++) {
        if (mt && cs__meter_add(mt, 1)) {
            cs__ws_release(ws, mark);
            return stopped_in_set_up(f, n);
        }
        w.grp[i] = -1;
        bmax = max_d(bmax, fabs(p->b[i]));
        f[i] = 0;
        w.a[i] = p->b[i];
        const int k = p->kind[i];
        if (k != CS_DANTZIG_BOX && k != CS_DANTZIG_PAIR)
            continue;
        const int m = k == CS_DANTZIG_PAIR ? 2 : 1;
        w.g[q] = (group){.row = i,
                         .m = m,
                         .normal = p->normal ? p->normal[i] : -1,
                         .face = fk,
                         .nf = m == 2 ? nd : 2,
                         .coef = p->bound[i],
                         .c = m == 2 ? cpair : 1};
        for (int r = 0; r < w.g[q].nf; r++)
            w.fgrp[fk + r] = q;
        if (mt)
            (void)cs__meter_add(mt, w.g[q].nf); // a passed deadline stops the next row
        fk += w.g[q].nf;
        for (int r = 0; r < m; r++) {
            w.grp[i + r] = q;
            f[i + r] = 0;
            w.a[i + r] = p->b[i + r];
            bmax = max_d(bmax, fabs(p->b[i + r]));
        }
        i += m - 1;
        q++;
    }
    if (mt ? w.meter.passed : cs__meter_add(&w.meter, (int64_t)n + nf)) {
        cs__ws_release(ws, mark);
        return stopped_in_set_up(f, n);
    }
    w.alpha = w.dmax > 0 ? w.dmax : 1;
    w.viol = VIOL_TOL * bmax;
    const int pmax = n + nfric;
    if (cs__bordered_init(&w.sys, ws, pmax, n + nf, LU_RANK_TOL * w.alpha, mlcp_entry, &w,
                          &w.meter) != 0) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    const int cap = 4 * pmax * (pmax + 1) + 8;
    // Baraff 5.4 proves no termination with friction: a cycle of the driven row, a drive without
    // direction or an answer that fails its check is tried once more from scratch, the drives taken
    // in index order (Bland's least-index rule) instead of the most violated first, another path
    // through the same sets. What fails both ways keeps its label.
    cs_status status = mlcp_pivot(&w, f, false, cap, bmax, st);
    if (status == CS_MAXITER || status == CS_RAY)
        status = mlcp_pivot(&w, f, true, cap, bmax, st);
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

/* The frictionless LCP of the normal rows alone (Baraff section 4): the fast path. vfree: NULL,
 * or the free contact velocities J v* [3 nc] (cs_model_free_velocity, 3 rows), whose normal
 * rows are the LCP's (the same sums as with 1 row). */
static cs_status solve_frictionless(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                    cs__meter *meter, const double *vfree, double *lambda,
                                    cs_stats *st) {
    const int n = m->nc;
    double *A = cs__ws_alloc(ws, (size_t)n * n * sizeof(double));
    double *b = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    double *fn = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    if (n > 0 && (!A || !b || !fn))
        return CS_ENOSPACE;
    cs_status status = cs_model_delassus(m, ws, 1, A, n, meter);
    if (status != CS_CONVERGED)
        return status;
    if (vfree) {
        for (int i = 0; i < n; i++)
            b[i] = vfree[3 * i] - m->bias[i];
    } else {
        cs_model_free_velocity(m, 1, b);
        for (int i = 0; i < n; i++)
            b[i] -= m->bias[i];
    }
    // The solution goes into the normal entries of lambda (stride 3).
    status = cs_dantzig_lcp(ws, n, A, n, b, opt, fn, st);
    for (int i = 0; i < n; i++) {
        lambda[3 * i] = fn[i];
        lambda[3 * i + 1] = 0;
        lambda[3 * i + 2] = 0;
    }
    return status;
}

/* Every contact as a NORMAL row and a PAIR bounded by mu times it, on the model's nd-gon (joints
 * are in the model's Delassus matrix already, model.h). */
static cs_status solve_frictional(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                  cs__meter *meter, double *lambda, cs_stats *st) {
    const int n = cs_model_rows(m, 3);
    double *A = cs__ws_alloc(ws, (size_t)n * n * sizeof(double));
    double *b = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    double *bound = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    uint8_t *kind = cs__ws_alloc(ws, (size_t)n);
    int *normal = cs__ws_alloc(ws, (size_t)n * sizeof(int));
    if (n > 0 && (!A || !b || !bound || !kind || !normal))
        return CS_ENOSPACE;
    const cs_status status = cs_model_delassus(m, ws, 3, A, n, meter);
    if (status != CS_CONVERGED)
        return status;
    // b: the free-motion contact velocities, the normal ones against their bias.
    cs_model_free_velocity(m, 3, b);
    for (int i = 0; i < m->nc; i++) {
        b[3 * i] -= m->bias[i];
        kind[3 * i] = CS_DANTZIG_NORMAL;
        kind[3 * i + 1] = kind[3 * i + 2] = CS_DANTZIG_PAIR;
        normal[3 * i] = -1;
        normal[3 * i + 1] = normal[3 * i + 2] = 3 * i;
        bound[3 * i] = 0;
        bound[3 * i + 1] = bound[3 * i + 2] = m->mu[i];
    }
    const cs_dantzig_problem p = {.n = n,
                                  .A = A,
                                  .lda = n,
                                  .b = b,
                                  .kind = kind,
                                  .normal = normal,
                                  .bound = bound,
                                  .nd = m->nd};
    return cs_dantzig_mlcp(ws, &p, opt, lambda, st);
}

cs_status cs_dantzig_solve_bounded(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                   double *lambda, cs_stats *st) {
    const size_t mark = cs__ws_mark(ws);
    *st = (cs_stats){0};
    cs__meter meter = cs__meter_start(opt);
    const cs_status status = solve_frictional(ws, m, opt, &meter, lambda, st);
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

/* Whether every contact with friction (and with a normal impulse, when lambda is given) has a
 * tangential velocity in vc [3 nc] within ANSWER_TOL of scale. */
static bool tangents_still(const cs_model *m, const double *vc, double scale,
                           const double *lambda) {
    const double tol = ANSWER_TOL * scale;
    for (int i = 0; i < m->nc; i++)
        if (m->mu[i] > 0 && (!lambda || lambda[3 * i] > 0) &&
            !(fabs(vc[3 * i + 1]) <= tol && fabs(vc[3 * i + 2]) <= tol))
            return false;
    return true;
}

static double max_abs(int n, const double *x) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s = max_d(s, fabs(x[i]));
    return s;
}

/* Whether lambda, an answer of the frictionless LCP, leaves every contact that carries a load
 * with no tangential velocity (to ANSWER_TOL of the velocities' scale: fscale, the largest free
 * one, and its own): then f_t = 0 is its friction, inside every cone, and lambda answers the
 * frictional problem too. False when the workspace is short. */
static bool no_friction_needed(cs_workspace *ws, const cs_model *m, const double *lambda,
                               double fscale) {
    const size_t mark = cs__ws_mark(ws);
    const size_t nb6 = 6 * (size_t)m->nb;
    const int nc3 = 3 * m->nc;
    double *v = cs__ws_alloc(ws, nb6 * sizeof(double));
    double *scratch = cs__ws_alloc(ws, nb6 * sizeof(double));
    double *vc = cs__ws_alloc(ws, (size_t)nc3 * sizeof(double));
    bool holds = nc3 == 0;
    if (v && scratch && vc && nc3 > 0) {
        cs_model_velocity(m, lambda, v, scratch);
        cs_model_jv(m, v, vc);
        holds = tangents_still(m, vc, max_d(max_abs(nc3, vc), fscale), lambda);
    }
    cs__ws_release(ws, mark);
    return holds;
}

cs_status cs_dantzig_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                           double *lambda, cs_stats *st) {
    const size_t mark = cs__ws_mark(ws);
    *st = (cs_stats){0};
    bool friction = false;
    for (int i = 0; i < m->nc; i++)
        friction = friction || m->mu[i] > 0;
    cs__meter meter = cs__meter_start(opt);
    // The plain LCP first: it is the answer without friction, and with friction whenever no
    // loaded contact slides under it; tried with friction only when nothing moves tangentially
    // before the impulses either (otherwise friction is all but certain to act, and the try
    // would cost a frictionless solve in vain). The free velocities J v* that decide it are kept
    // for the try (its normal rows) and for the check of its answer (their scale).
    double *vfree = friction ? cs__ws_alloc(ws, 3 * (size_t)m->nc * sizeof(double)) : NULL;
    double fscale = 0;
    if (vfree) {
        cs_model_free_velocity(m, 3, vfree);
        fscale = max_abs(3 * m->nc, vfree);
    }
    cs_status status = CS_MAXITER;
    bool done = false;
    // A workspace too short for vfree takes the frictional problem at once.
    if (!friction || (vfree && tangents_still(m, vfree, fscale, NULL))) {
        const size_t plain = cs__ws_mark(ws);
        status = solve_frictionless(ws, m, opt, &meter, vfree, lambda, st);
        cs__ws_release(ws, plain);
        done = !friction || status == CS_DEADLINE ||
               (status == CS_CONVERGED && no_friction_needed(ws, m, lambda, fscale));
    }
    if (!done) {
        cs__ws_release(ws, mark);
        const int pivots = st->pivots;
        status = solve_frictional(ws, m, opt, &meter, lambda, st);
        st->pivots += pivots;
    }
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs__dantzig_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out) {
    return cs_dantzig_solve(ws, in->m, in->opt, out->lambda, out->st);
}
