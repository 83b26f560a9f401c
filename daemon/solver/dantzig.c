/* SPDX-License-Identifier: MIT */
/* Dantzig's algorithm as Baraff presents it (1994, section 4; frictionless, velocity level).
 *
 * THE PROBLEM. Find f >= 0 with w = A f + b >= 0 and f_i w_i = 0, A = N M^-1 N^T symmetric PSD
 * (often rank-deficient: four coplanar contacts under a box give rank 3).
 *
 * THE ALGORITHM. Index sets C (clamped: w_i = 0, f_i >= 0) and NC (f_i = 0, w_i >= 0); every
 * other index is unprocessed. While some w_d < 0, drive-to-zero(d): raise f_d with the clamped
 * contacts kept at w = 0, i.e. the direction df_d = 1, df_C = -A_CC^-1 A_Cd (fdirection), and
 * take the largest step that keeps f_C >= 0, w_NC >= 0 and w_d <= 0 (maxstep). The index that
 * limits the step moves between C and NC; when it is d itself, w_d has reached 0 and d joins C.
 *
 * INVARIANTS. f >= 0 everywhere; w_C = 0; w_NC >= 0; indices once processed stay satisfied.
 *
 * WHY IT TERMINATES. Each drive strictly increases w_d and never repeats a clamped set
 * (Baraff's theorems 2-5, appendix A), so each drive ends after finitely many steps. A_CC may be
 * singular when A is, but A_Cd lies in its range, so the system is consistent: it is solved with
 * a rank-revealing Cholesky (LAPACK's dpstf2, linalg.c) that drops the redundant directions
 * (footnote 3). In floating point the step cap below turns a cycle into a definite status.
 *
 * DEADLINE. Read before each step and, through a meter (deadline.h), inside the long stretches:
 * forming A (O(n^2)), copying and factoring A_CC (O(|C|^3)) and da = A df (O(n |C|)).
 *
 * TOLERANCES. Directions smaller than 1e-11 (relative to the unit step of f_d, or to the largest
 * diagonal of A for w) are treated as zero, and w_d < -1e-10 |b|_inf counts as violated:
 * both far above rounding for the problem sizes admitted (n <= 8192), far below physical
 * velocities. The factorisation drops pivots below 1e-11 of the largest diagonal. */
#include "solver/dantzig.h"

#include <math.h>
#include <string.h>

#include "solver/linalg.h"
#include "solver/deadline.h"
#include "solver/workspace.h"

enum { UNPROCESSED = 0, CLAMPED = 1, NOT_CLAMPED = 2 };

#define DIR_TOL 1e-11
#define VIOL_TOL 1e-10
#define RANK_TOL 1e-11

size_t cs_dantzig_lcp_size(int n) {
    const size_t N = (size_t)n;
    return cs__ws_bytes(N * N * sizeof(double)) + 6 * cs__ws_bytes(N * sizeof(double)) +
           cs__ws_bytes(cs_psd_work(n) * sizeof(double)) + 2 * cs__ws_bytes(N * sizeof(int)) +
           cs__ws_bytes(N);
}

size_t cs_dantzig_size(const cs_limits *lim) {
    const size_t n = (size_t)lim->max_contacts;
    // A, b and J v*, then the Delassus scratch or the LCP scratch (never both at once).
    const size_t del = cs_model_delassus_size(lim), lcp = cs_dantzig_lcp_size(lim->max_contacts);
    return cs__ws_bytes(n * n * sizeof(double)) + cs__ws_bytes(n * sizeof(double)) +
           cs__ws_bytes(3 * n * sizeof(double)) + (del > lcp ? del : lcp);
}

/* Scratch of one solve. */
typedef struct lcp_ws {
    double *Acc;  /* [n x n] clamped block, factor in place */
    double *a;    /* [n] w = A f + b */
    double *df;   /* [n] */
    double *da;   /* [n] */
    double *x;    /* [n] */
    double *rhs;  /* [n] */
    double *work; /* [2n] */
    int *piv;     /* [n] */
    int *cidx;    /* [n] clamped indices in order */
    unsigned char *set; /* [n] UNPROCESSED / CLAMPED / NOT_CLAMPED */
    cs__meter meter;    /* the deadline inside a step */
} lcp_ws;

/* fdirection: df_d = 1, df_C = -A_CC^-1 A_Cd, zero elsewhere; then da = A df. O(|C|^3) for the
 * factorization of A_CC, so the meter is read inside. Returns 0, -1 (A_CC not PSD) or 1 (the
 * deadline passed; df and da unusable). */
static int fdirection(int n, const double *A, int lda, int d, lcp_ws *w) {
    int nc = 0;
    for (int i = 0; i < n; i++)
        if (w->set[i] == CLAMPED)
            w->cidx[nc++] = i;
    memset(w->df, 0, (size_t)n * sizeof(double));
    w->df[d] = 1;
    if (nc > 0) {
        for (int q = 0; q < nc; q++) {
            for (int p = 0; p < nc; p++)
                w->Acc[(size_t)q * nc + p] = A[(size_t)w->cidx[q] * lda + w->cidx[p]];
            w->rhs[q] = -A[(size_t)d * lda + w->cidx[q]];
            if (cs__meter_add(&w->meter, nc))
                return 1;
        }
        int rank;
        const int f = cs__psd_factor(nc, w->Acc, nc, w->piv, &rank, RANK_TOL, w->work, &w->meter);
        if (f != 0)
            return f;
        cs__psd_solve(nc, w->Acc, nc, w->piv, rank, w->rhs, w->x, w->work, &w->meter);
        if (w->meter.passed)
            return 1;
        for (int q = 0; q < nc; q++)
            w->df[w->cidx[q]] = w->x[q];
    }
    // da = A df touches only the columns with df != 0: d and the clamped set.
    for (int i = 0; i < n; i++)
        w->da[i] = A[(size_t)d * lda + i];
    for (int q = 0; q < nc; q++) {
        const double s = w->x[q];
        const double *col = A + (size_t)w->cidx[q] * lda;
        for (int i = 0; i < n; i++)
            w->da[i] += s * col[i];
        if (cs__meter_add(&w->meter, n))
            return 1;
    }
    return 0;
}

/* maxstep: the largest s keeping f_C >= 0, w_NC >= 0 and w_d <= 0; *ret_j limits it (-1: none). */
static double maxstep(int n, const double *f, int d, double da_tol, const lcp_ws *w, int *ret_j) {
    double s = INFINITY;
    int j = -1;
    if (w->da[d] > da_tol) {
        s = -w->a[d] / w->da[d];
        j = d;
    }
    for (int i = 0; i < n; i++) {
        double si;
        if (w->set[i] == CLAMPED && w->df[i] < -DIR_TOL)
            si = -f[i] / w->df[i];
        else if (w->set[i] == NOT_CLAMPED && w->da[i] < -da_tol)
            si = -w->a[i] / w->da[i];
        else
            continue;
        // Rounding can leave f_i or w_i a hair below zero: never step backwards.
        si = fmax(si, 0.0);
        if (si < s) {
            s = si;
            j = i;
        }
    }
    *ret_j = j;
    return s;
}

cs_status cs_dantzig_lcp(cs_workspace *ws, int n, const double *A, int lda, const double *b,
                         const cs_options *opt, double *f, cs_stats *st) {
    *st = (cs_stats){0};
    const size_t mark = cs__ws_mark(ws);
    const size_t N = (size_t)n;
    lcp_ws w = {
        .Acc = cs__ws_alloc(ws, N * N * sizeof(double)),
        .a = cs__ws_alloc(ws, N * sizeof(double)),
        .df = cs__ws_alloc(ws, N * sizeof(double)),
        .da = cs__ws_alloc(ws, N * sizeof(double)),
        .x = cs__ws_alloc(ws, N * sizeof(double)),
        .rhs = cs__ws_alloc(ws, N * sizeof(double)),
        .work = cs__ws_alloc(ws, cs_psd_work(n) * sizeof(double)),
        .piv = cs__ws_alloc(ws, N * sizeof(int)),
        .cidx = cs__ws_alloc(ws, N * sizeof(int)),
        .set = cs__ws_zalloc(ws, N),
        .meter = cs__meter_start(opt),
    };
    if (n > 0 && (!w.Acc || !w.a || !w.df || !w.da || !w.x || !w.rhs || !w.work || !w.piv ||
                  !w.cidx || !w.set)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    double bmax = 0, dmax = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(b[i]) || !isfinite(A[(size_t)i * lda + i])) {
            cs__ws_release(ws, mark);
            return CS_EINPUT;
        }
        bmax = fmax(bmax, fabs(b[i]));
        dmax = fmax(dmax, A[(size_t)i * lda + i]);
        f[i] = 0;
        w.a[i] = b[i];
    }
    const double viol_tol = VIOL_TOL * bmax;
    const double da_tol = DIR_TOL * dmax;
    const int cap = 4 * n * (n + 1) + 8;
    cs_status status = CS_CONVERGED;

    for (;;) {
        // Drive the most violated index first: it tends to be the one carrying the load.
        int d = -1;
        double amin = -viol_tol;
        for (int i = 0; i < n; i++)
            if (w.set[i] != CLAMPED && w.a[i] < amin) {
                amin = w.a[i];
                d = i;
            }
        if (d < 0)
            break;
        // An index in NC whose w went negative is driven like an unprocessed one.
        w.set[d] = UNPROCESSED;
        for (;;) {
            // A step that ties with d's own limit leaves w_d at zero up to rounding, with the
            // index that tied now clamped: d is done (its direction may even be degenerate).
            if (w.a[d] >= -viol_tol) {
                w.a[d] = 0;
                w.set[d] = CLAMPED;
                break;
            }
            if (st->pivots >= cap) {
                status = CS_MAXITER;
                goto out;
            }
            // A pivot costs far more than a clock read (a vDSO call): check before each one.
            if (cs__meter_check(&w.meter)) {
                status = CS_DEADLINE;
                goto out;
            }
            const int dir = fdirection(n, A, lda, d, &w);
            if (dir != 0) {
                status = dir > 0 ? CS_DEADLINE : CS_EINPUT;
                goto out;
            }
            int j;
            const double s = maxstep(n, f, d, da_tol, &w, &j);
            st->pivots++;
            if (j < 0) {
                // f_d can grow without bound and w_d does not rise: no solution (Lemke's ray).
                status = CS_RAY;
                goto out;
            }
            for (int i = 0; i < n; i++) {
                f[i] += s * w.df[i];
                w.a[i] += s * w.da[i];
            }
            if (j == d) {
                w.a[d] = 0;
                w.set[d] = CLAMPED;
                break;
            }
            if (w.set[j] == CLAMPED) {
                f[j] = 0;
                w.set[j] = NOT_CLAMPED;
            } else {
                w.a[j] = 0;
                w.set[j] = CLAMPED;
            }
        }
    }
    // Rounding: clamped forces may sit at -1e-17; the solution is f >= 0 by construction.
    for (int i = 0; i < n; i++)
        f[i] = fmax(f[i], 0.0);
out:
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs_dantzig_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                           double *lambda, cs_stats *st) {
    const int n = m->nc;
    const size_t mark = cs__ws_mark(ws);
    *st = (cs_stats){0};
    double *A = cs__ws_alloc(ws, (size_t)n * n * sizeof(double));
    double *b = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    double *jv = cs__ws_alloc(ws, 3 * (size_t)n * sizeof(double));
    if (n > 0 && (!A || !b || !jv)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    cs__meter meter = cs__meter_start(opt);
    cs_status status = cs_model_delassus(m, ws, 1, A, n, &meter);
    if (status == CS_CONVERGED) {
        cs_model_jv(m, m->vstar, jv);
        for (int i = 0; i < n; i++)
            b[i] = jv[3 * i] - m->bias[i];
        // The solution goes straight into the normal entries of lambda (stride 3): solve into
        // jv (free now) and scatter.
        status = cs_dantzig_lcp(ws, n, A, n, b, opt, jv, st);
        for (int i = 0; i < n; i++) {
            lambda[3 * i] = jv[i];
            lambda[3 * i + 1] = 0;
            lambda[3 * i + 2] = 0;
        }
    }
    st->peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return status;
}

cs_status cs__dantzig_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out) {
    return cs_dantzig_solve(ws, in->m, in->opt, out->lambda, out->st);
}

/* scratch: the pivots [n], then cs_psd_work(n) doubles. */
static void warm_factor(int n, double *A, double *b, void *scratch) {
    const size_t piv_bytes = cs__ws_bytes((size_t)n * sizeof(int));
    int *piv = scratch;
    double *work = (double *)(void *)((unsigned char *)scratch + piv_bytes);
    int rank;
    if (cs_psd_factor(n, A, n, piv, &rank, RANK_TOL, work) == 0)
        cs_psd_solve(n, A, n, piv, rank, b, b, work);
}

void cs__dantzig_warm_up(cs_workspace *ws) {
    const int n = cs__ws_limits(ws)->max_contacts;
    const size_t scratch = cs__ws_bytes((size_t)n * sizeof(int)) + cs_psd_work(n) * sizeof(double);
    cs__ws_warm_factor(ws, n, scratch, warm_factor);
}
