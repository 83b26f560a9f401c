/* SPDX-License-Identifier: MIT */
/* Baraff 1994: Dantzig's principal pivoting for contact, frictionless (section 4) and with
 * bilateral rows (section 4.5), bounded friction in two and three dimensions (sections 5, 5.6) and
 * dynamic friction (section 6), at the velocity level. The frictionless LCP
 *     a = A f + b >= 0,  f >= 0,  f . a = 0,  A symmetric positive semidefinite
 * has its own fast entry; the bounded problem with friction and bilateral rows is described at
 * cs_dantzig_problem. */
#ifndef CONTACTD_SOLVER_DANTZIG_H
#define CONTACTD_SOLVER_DANTZIG_H
#include <stddef.h>
#include <stdint.h>
#include "solver/model.h"
#include "solver/solvers.h"

/* Scratch bytes cs_dantzig_solve() needs for any scene within lim (frictional or not). */
size_t cs_dantzig_size(const cs_limits *lim);
/* The same for a plain LCP of order n (cs_dantzig_lcp). */
size_t cs_dantzig_lcp_size(int n);

/* Solves the LCP (A, b). A: [n x n] column-major, symmetric PSD (the checks' error bounds rely
 * on |A_ij| <= max A_ii: an A far from PSD can pass a wrong answer), lda >= n. b: [n]. f: [n] out:
 * the solution, or the last iterate when the status is not CS_CONVERGED. opt may be NULL (no
 * deadline). st: out, always set (pivots = steps taken, peak bytes; a problem that the start
 * from the touching contacts answers, such as a resting stack, takes none: dantzig.c).
 * Returns CS_CONVERGED (an answer that holds to 1e-9 of the velocity scale: after drives,
 * checked from scratch, in plain double with its rounding bound or, where that cannot tell,
 * polished on its clamped set and summed exactly; from the start, checked from scratch
 * where its forces are too large for its own check: dantzig.c, THE START and THE FINAL CHECK);
 * CS_DEADLINE or CS_MAXITER (pivot cap, or an answer that fails the final check; f is an iterate:
 * f >= 0, but some w_i < 0 or f_i w_i > 0); CS_RAY when a driving direction makes no progress (b
 * far from the range of A: no solution); CS_ENOSPACE; CS_EINPUT for non-finite b or diagonal.
 * Pivot cap: 4 n (n + 1) + 8 steps (each drive-to-zero never repeats its clamped set, Baraff's
 * theorem 3; in practice a drive takes a few steps). thread: any, one caller per workspace.
 * rt-safe: yes. */
cs_status cs_dantzig_lcp(cs_workspace *ws, int n, const double *A, int lda, const double *b,
                         const cs_options *opt, double *f, cs_stats *st);

/* Row kinds of the bounded problem. */
typedef enum cs_dantzig_row {
    CS_DANTZIG_NORMAL = 0,    /* unilateral: f >= 0, a >= 0, f a = 0 */
    CS_DANTZIG_BILATERAL = 1, /* a = 0, f of either sign (Baraff 4.5) */
    CS_DANTZIG_BOX = 2,       /* |f| <= r; f = -r where a > 0, f = r where a < 0 (Baraff 5.1) */
    CS_DANTZIG_PAIR = 3,      /* this row and the next (also PAIR) are a tangent pair t: f_t in
                               * r P (P: the nd-gon with vertices (cos, sin)(2 pi j / nd)), and
                               * a_t != 0 => f_t minimises f_t . a_t over r P (Baraff 5.6) */
} cs_dantzig_row;

/* The bounded problem: find f with a = A f + b and each row's law above, where the bound of a BOX
 * row or a pair is r = bound[i] f[normal[i]] (friction: bound is mu, normal the contact's normal
 * row) or, when normal[i] < 0, the fixed r = bound[i] (ArtiSynth's box friction). A pair's bound
 * and normal are read from its first row. thread: read-only during a solve. */
typedef struct cs_dantzig_problem {
    int n;               /* rows */
    const double *A;     /* [n x n] column-major, symmetric positive semidefinite */
    int lda;             /* >= n */
    const double *b;     /* [n] */
    const uint8_t *kind; /* [n] cs_dantzig_row */
    const int *normal;   /* [n] BOX and PAIR rows: a NORMAL row, or -1 (fixed bound); NULL: all
                          * -1 */
    const double *bound; /* [n] BOX and PAIR rows: mu, or the fixed bound; finite, >= 0 */
    int nd;              /* sides of the pairs' polygon: even, >= 4 (read only with pairs) */
} cs_dantzig_problem;

/* Scratch bytes cs_dantzig_mlcp() needs for n rows of which n_friction are BOX or PAIR rows, with
 * nd-gons for the pairs (nd: 0 without pairs). */
size_t cs_dantzig_mlcp_size(int n, int n_friction, int nd);

/* Solves the bounded problem p by Baraff's pivoting (dantzig.c). f: [n] out, the forces (or
 * impulses), or the last iterate when the status is not CS_CONVERGED. opt may be NULL. st: out,
 * always set (pivots, peak bytes).
 * Returns CS_CONVERGED (every row's law holds, checked from scratch to 1e-9 of its scale);
 * CS_DEADLINE (f: 0 when it came before the first drive, which may be before every row was
 * checked); CS_MAXITER (pivot cap, a cycle of the driven row itself, or an answer that fails
 * the final check); CS_RAY (a drive that can go on forever without reaching its target, Baraff
 * section 6's unbounded ray, or a drive whose direction does not exist); CS_SINGULAR (bilateral
 * rows whose velocities cannot all be zeroed); CS_EINPUT (bad kinds, bounds, nd or non-finite
 * data); CS_ENOSPACE. thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_dantzig_mlcp(cs_workspace *ws, const cs_dantzig_problem *p, const cs_options *opt,
                          double *f, cs_stats *st);

/* Contact impulses of model m at the velocity level: a = J v - (bias, 0, 0) per contact with
 * A = J M^-1 J^T, b = J v* - (bias, 0, 0). Frictionless scenes (every mu = 0) solve the LCP of the
 * normal rows alone, and so does a scene with friction whose free motion has no tangential part
 * when that LCP's answer leaves no loaded contact sliding (it then needs no friction: a resting
 * stack); otherwise each contact is a NORMAL row and a PAIR (t1, t2) bounded by
 * mu_i times it on the model's nd-gon, the pyramid the Lemke solvers use (cs_model_tangents,
 * cs_lemke_direction), so answers pass cs_certify(..., pyramid = true) judged frictional. With
 * joints, A and J v* are the model's reduced ones (joints reacting, model.h).
 * lambda: [3 nc] out, contact-frame impulses (normal, t1, t2). Statuses as cs_dantzig_lcp or
 * cs_dantzig_mlcp. thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_dantzig_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                           double *lambda, cs_stats *st);

/* The bounded problem cs_dantzig_solve() poses for a scene with friction, solved as that
 * whatever the scene (no frictionless pass first): what the frictionless pass is held to. */
cs_status cs_dantzig_solve_bounded(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                   double *lambda, cs_stats *st);

/* cs_dantzig_solve() behind the solver table's signature (solvers.h). */
cs_status cs__dantzig_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out);

#endif /* CONTACTD_SOLVER_DANTZIG_H */
