/* SPDX-License-Identifier: MIT */
/* SAP's line searches (see sap_linesearch.h; sap.md section 8, Drake's kExact and
 * kBackTracking).
 *
 * EXACT. The cost is convex and C^1 along the line, so l' is continuous and increasing and the
 * minimizer is the root of l' (or the end of the interval when l' < 0 there). With f = l' / |l'(0)|
 * (f(0) = -1), Newton's method on f is kept inside the bracket [lo, hi] (f(lo) < 0 < f(hi)) and
 * replaced by bisection whenever it does not halve |f| (Numerical Recipes' rtsafe, section 9.4).
 * It starts at alpha = 1, which is Newton's own first step from 0: the direction solves
 * H dv = -grad with the Hessian at alpha = 0, so l''(0) = dv^T H dv = -l'(0) and f'(0) = 1.
 * Near the answer the cost is close to its quadratic model and f(1) is already below the
 * tolerance, or one Newton step from it is. The end of the interval, alpha = 1.5, is evaluated
 * only when a step needs it (Newton heading past it, or a bisection before any f > 0 was seen);
 * Drake evaluates it first and starts from the curvature there, which costs one evaluation more
 * per search and starts further away. Every evaluation shrinks the bracket, so the 100-evaluation
 * cap is reached only on pathological data.
 *
 * BACKTRACKING. Armijo's sufficient decrease l(a) < l(0) + c a l'(0) on the grid 1.25 rho^j,
 * walking down while the cost keeps falling, so the step returned is the grid's best. */
#include "solver/sap_linesearch.h"

#include <float.h>
#include <math.h>

#include "solver/deadline.h"

/* Exact search: interval end, tolerances (Drake's, tuned on its test set: any f_tol in
 * [1e-14, 1e-3] worked within ~30 % of the run time; the step tolerance is relative to the first
 * guess, 1 here), evaluation cap. */
#define EXACT_ALPHA_MAX 1.5
#define EXACT_F_TOL 1e-8
#define EXACT_X_TOL 1e-8
#define EXACT_MAX_EVALS 100

/* Backtracking: rho, Armijo's c, trials; alpha_max = 1 / rho so the second trial is 1. */
#define BT_RHO 0.8
#define BT_ARMIJO 1e-4
#define BT_MAX_TRIALS 40
/* Cost changes below this relative size are round-off (Drake's relative_slop / 10). */
#define BT_SLOP (100 * DBL_EPSILON)

/* Evaluates l at alpha; false when the deadline has passed (then nothing was evaluated). */
static bool evaluate_at(const cs__sap_line *f, double alpha, double *l, double *d, double *dd) {
    if (f->meter && cs__meter_add(f->meter, f->units))
        return false;
    f->eval(f->ctx, alpha, l, d, dd);
    return true;
}

cs_status cs__sap_line_exact(const cs__sap_line *f, double cost_abs_tol, double cost_rel_tol,
                             double *ret_alpha) {
    const double s = -f->d0;
    // lo keeps f < 0; hi keeps f > 0 once `bracketed`, before that it is only the interval's end.
    double lo = 0, hi = EXACT_ALPHA_MAX, x = 1, dx = -1, dx_prev = -1;
    bool bracketed = false;
    for (int it = 0; it < EXACT_MAX_EVALS; it++) {
        double l, d, dd;
        if (!evaluate_at(f, x, &l, &d, &dd))
            return CS_DEADLINE;
        // A slope at round-off level relative to the cost carries no direction information.
        if (it == 0 && s < cost_abs_tol + cost_rel_tol * l) {
            *ret_alpha = 1;
            return CS_CONVERGED;
        }
        const double fx = d / s, dfx = dd / s;
        // Still descending at the end of the interval: take it.
        if (x == EXACT_ALPHA_MAX && fx <= 0) {
            *ret_alpha = x;
            return CS_CONVERGED;
        }
        // Shrink the bracket (-0 counts as negative).
        if (signbit(fx))
            lo = x;
        else
            hi = x, bracketed = true;
        if (fabs(fx) < EXACT_F_TOL) {
            *ret_alpha = x;
            return CS_CONVERGED;
        }
        // Newton, unless it would not halve |f| (slow) or would leave [lo, hi]; then bisection,
        // which needs a bracket: without one, try the interval's end first.
        const bool slow = 2 * fabs(fx) > fabs(dx_prev * dfx);
        const double newton = x - fx / dfx;
        dx_prev = dx;
        if (!slow && newton >= lo && newton <= hi) {
            dx = fx / dfx;
            x = newton;
        } else if (!bracketed) {
            dx = x - hi;
            x = hi;
        } else {
            dx = 0.5 * (lo - hi);
            x = lo - dx;
        }
        if (fabs(dx) < EXACT_X_TOL) {
            *ret_alpha = x;
            return CS_CONVERGED;
        }
    }
    return CS_SINGULAR;
}

static bool armijo(const cs__sap_line *f, double a, double l) {
    return l < f->l0 + BT_ARMIJO * a * f->d0;
}

cs_status cs__sap_line_backtrack(const cs__sap_line *f, double *ret_alpha) {
    double a = 1 / BT_RHO, l, d;
    if (!evaluate_at(f, a, &l, &d, NULL))
        return CS_DEADLINE;
    const double slop = BT_SLOP * fmax(1, 0.5 * (fabs(l) + fabs(f->l0)));
    // Still descending (or flat) at the largest step: take it.
    if (d < slop) {
        *ret_alpha = a;
        return CS_CONVERGED;
    }
    double a_prev = a, l_prev = l;
    for (int it = 1; it < BT_MAX_TRIALS; it++) {
        a *= BT_RHO;
        if (!evaluate_at(f, a, &l, &d, NULL))
            return CS_DEADLINE;
        // Flat between two grid points: at the minimum up to round-off.
        if (fabs((l - l_prev) / (a - a_prev)) < slop) {
            *ret_alpha = a;
            return CS_CONVERGED;
        }
        // The cost rose again: the minimum was passed; keep the better of the two steps.
        if (l > l_prev && armijo(f, a, l)) {
            *ret_alpha = armijo(f, a_prev, l_prev) ? a_prev : a;
            return CS_CONVERGED;
        }
        a_prev = a, l_prev = l;
    }
    if (armijo(f, a, l)) {
        *ret_alpha = a;
        return CS_CONVERGED;
    }
    return CS_SINGULAR;
}
