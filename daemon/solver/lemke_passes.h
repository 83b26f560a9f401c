/* SPDX-License-Identifier: MIT */
/* Internal: the state of a Lemke run on an explicit matrix (lemke.c) and its passes over B^-1,
 * as entry points of their own, so that tests can count the clock reads of each pass
 * (deadline.h) on a state they set up, without reaching into the solver's static functions. */
#ifndef CONTACTD_SOLVER_LEMKE_PASSES_H
#define CONTACTD_SOLVER_LEMKE_PASSES_H
#include <stdbool.h>
#include <stdint.h>
#include "solver/deadline.h"
#include "solver/workspace.h"

/* Variable ids: 0..n-1 are w_i, n..2n-1 are z_i, 2n is z0. */
typedef struct cs__lemke_ws {
    int n;
    const double *M; /* [n x n] column-major, leading dimension ldm */
    int ldm;
    const double *q; /* [n] */
    double *cov;     /* [n] covering vector */
    double *binv;    /* [n x n] row-major B^-1 */
    double *x;       /* [n] basic values */
    double *col;     /* [n] B^-1 times the entering column */
    double *rx;      /* [n] q - B x */
    double *rc;      /* [n] a - B col */
    double *ax;      /* [n] |B| |x| + |q|: what the rounding of x scales with */
    double *ac;      /* [n] |B| |col| + |a|: of col */
    double *ab;      /* [n] |B| 1: of B^-1, row-wise (entry (i, j) with max_k |B^-1_kj|) */
    double axmax, acmax, abmax; /* their largest entries */
    double *norm1;   /* [n] |B^-1_i|_1 */
    double *dx;      /* [n] error bound n eps |B^-1| ax of x; UNKNOWN until formed */
    double *dcol;    /* [n] n eps |B^-1| ac, of col */
    double *dbinv;   /* [n] n eps |B^-1| ab, of the rows of B^-1 */
    int *piv;        /* [n] row interchanges while B^-1 is rebuilt */
    int *basic;      /* [n] variable id basic in row i */
    int *row_of;     /* [2n + 1] row of a basic variable, -1 when non-basic */
    int *cand;       /* [n] ratio-test candidates */
    int64_t col_units; /* meter units of one access down a column of B^-1 (lemke.c) */
    cs__meter meter; /* the deadline: every O(n^2) stretch reads it per row, and stops when it
                      * has passed (the caller then sees meter.passed) */
} cs__lemke_ws;

/* Points L's arrays into ws for the LCP (M, ldm, q) of order n (as cs_lemke_lcp()), with opt's
 * deadline on its meter; false when ws is short of them. */
bool cs__lemke_ws_init(cs__lemke_ws *L, cs_workspace *ws, int n, const double *M, int ldm,
                       const double *q, const cs_options *opt);

/* col = B^-1 a for the column a of variable v in [I, -M, -c]. */
void cs__lemke_entering_column(cs__lemke_ws *L, int v);

/* Residuals of x and col against the basis itself, rx = q - B x and rc = a - B col (a: the
 * column of the entering variable v), and the magnitudes ax, ac, ab that bound their rounding.
 * B y is the sum of y_r times the column of basic[r]. */
void cs__lemke_basis_residuals(cs__lemke_ws *L, int v);

/* Rebuilds B^-1 and x = B^-1 q from the basis columns: Gauss-Jordan elimination with row
 * interchanges, in place in binv (its row interchanges undone as column interchanges in reverse
 * order at the end). O(n^3), so the meter is read per row of every elimination step. Returns
 * CS_CONVERGED, CS_SINGULAR (a pivot within the rounding n eps |B|_max of the elimination) or
 * CS_DEADLINE (B^-1 then lost). */
cs_status cs__lemke_rebuild(cs__lemke_ws *L);

#endif /* CONTACTD_SOLVER_LEMKE_PASSES_H */
