/* SPDX-License-Identifier: MIT */
/* SAP's line searches (see sap_linesearch.h; sap.md section 8, Drake's kExact and
 * kBackTracking).
 *
 * EXACT. The cost is convex and C^1 along the line, so l' is continuous and increasing and the
 * minimizer is the root of l' (or the end of the interval when l' < 0 there). With f = l' / |l'(0)|
 * (f(0) = -1) the root is bracketed in [0, 1.5] once f(1.5) > 0; Newton's method on f from the
 * quadratic model's step is kept inside the bracket and replaced by bisection whenever it does
 * not halve |f| (Numerical Recipes' rtsafe, section 9.4). Every evaluation shrinks the bracket,
 * so the 100-evaluation cap is reached only on pathological data.
 *
 * BACKTRACKING. Armijo's sufficient decrease l(a) < l(0) + c a l'(0) on the grid 1.25 rho^j,
 * walking down while the cost keeps falling, so the step returned is the grid's best. */
#include "solver/sap_linesearch.h"

#include <float.h>
#include <math.h>

/* Exact search: interval end, tolerances (Drake's, tuned on its test set: any f_tol in
 * [1e-14, 1e-3] worked within ~30 % of the run time), evaluation cap. */
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

cs_status cs__sap_line_exact(const cs__sap_line *f, double cost_abs_tol, double cost_rel_tol,
                             double *ret_alpha) {
    double l, d, dd;
    f->eval(f->ctx, EXACT_ALPHA_MAX, &l, &d, &dd);
    // Still descending at the end of the interval: take it.
    if (d <= 0) {
        *ret_alpha = EXACT_ALPHA_MAX;
        return CS_CONVERGED;
    }
    // A slope at round-off level relative to the cost carries no direction information.
    if (-f->d0 < cost_abs_tol + cost_rel_tol * l) {
        *ret_alpha = 1;
        return CS_CONVERGED;
    }
    const double s = -f->d0;
    // Bracket [lo, hi] with f(lo) < 0 < f(hi); f(0) = -1 by the normalization.
    double lo = 0, hi = EXACT_ALPHA_MAX, f_hi = d / s;
    if (fabs(f_hi) < EXACT_F_TOL) {
        *ret_alpha = hi;
        return CS_CONVERGED;
    }
    // Newton's step from the quadratic model with the curvature at the far end.
    double x = fmin(s / dd, EXACT_ALPHA_MAX);
    const double x_tol = EXACT_X_TOL * x;
    double dx = lo - hi, dx_prev = dx;
    for (int it = 0; it < EXACT_MAX_EVALS; it++) {
        f->eval(f->ctx, x, &l, &d, &dd);
        const double fx = d / s, dfx = dd / s;
        // Shrink the bracket: lo keeps f < 0, hi keeps f > 0 (-0 counts as negative).
        if (signbit(fx) != signbit(f_hi))
            lo = x;
        else
            hi = x, f_hi = fx;
        if (fabs(fx) < EXACT_F_TOL) {
            *ret_alpha = x;
            return CS_CONVERGED;
        }
        // Bisect when Newton would not halve |f| (it is slow or heading out of the bracket).
        const bool slow = 2 * fabs(fx) > fabs(dx_prev * dfx);
        dx_prev = dx;
        if (slow) {
            dx = 0.5 * (lo - hi);
            x = lo - dx;
        } else {
            dx = fx / dfx;
            x -= dx;
            if (!(x >= lo && x <= hi)) {
                dx = 0.5 * (lo - hi);
                x = lo - dx;
            }
        }
        if (fabs(dx) < x_tol) {
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
    f->eval(f->ctx, a, &l, &d, NULL);
    const double slop = BT_SLOP * fmax(1, 0.5 * (fabs(l) + fabs(f->l0)));
    // Still descending (or flat) at the largest step: take it.
    if (d < slop) {
        *ret_alpha = a;
        return CS_CONVERGED;
    }
    double a_prev = a, l_prev = l;
    for (int it = 1; it < BT_MAX_TRIALS; it++) {
        a *= BT_RHO;
        f->eval(f->ctx, a, &l, &d, NULL);
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
