/* SPDX-License-Identifier: MIT */
/* Lloyd 2005: the frictional contact LCP (eq. 6) on the d-sided friction pyramid, solved by
 * Lemke's method. This first variant forms the explicit matrix ("lemke-standard"). */
#ifndef CONTACTD_SOLVER_LEMKE_CONTACT_H
#define CONTACTD_SOLVER_LEMKE_CONTACT_H
#include <stddef.h>
#include "solver/model.h"
#include "solver/solvers.h"

/* Scratch bytes of cs_lemke_standard_solve() for any problem within lim. */
size_t cs_lemke_standard_size(const cs_limits *lim);

/* Friction direction j of contact i's pyramid in its tangent plane: (cos, sin) of 2 pi j / d. */
void cs_lemke_direction(int d, int j, double *ret_c, double *ret_s);

/* Scale s_i of contact i's rows in the structural solvers (lemke_structural.c, SCALING) and in
 * lemke's explicit LCP (lemke_contact.c, SCALED):
 * (tr W_ii / 3)^(-1/2), W_ii = J_i M^-1 J_i^T its 3 x 3 Delassus block with the bodies' own
 * masses (joints ignored: a joint may leave the reduced W_ii at rounding level, which must not be
 * blown up to 1), so that the block is about 1 like the unit entries of the friction rows. 1 when
 * the block is not positive. thread: any. rt-safe: yes. */
double cs_lemke_contact_scale(const cs_model *m, int i);

/* Scratch bytes of cs_lemke_contact_lcp() besides M and q. */
size_t cs_lemke_contact_lcp_size(const cs_limits *lim);

/* Forms eq. (6) of m explicitly: M [N x N] column-major (ld N) and q [N], N = nc (2 + nd), rows
 * ordered (nu_i), (sigma_ij, i-major), (gamma_i). Also what peer solvers are benchmarked on.
 * Returns 0 or CS_ENOSPACE. thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_lemke_contact_lcp(cs_workspace *ws, const cs_model *m, double *M, double *q);

/* Forms eq. (6) explicitly, with M = [N D]^T M^-1 [N D] blocks, mu and E, and
 * q = (N^T v* - bias, D^T v*, 0) of size n (2 + d), and solves it with cs_lemke_lcp().
 * lambda: [3 nc] out, contact-frame impulses (theta, sum_j phi_j d_j). st: pivots.
 * Returns cs_lemke_lcp()'s status, or CS_DEADLINE when opt's deadline passes while M is formed.
 * thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs_lemke_standard_solve(cs_workspace *ws, const cs_model *m, const cs_options *opt,
                                  double *lambda, cs_stats *st);
/* Scratch bytes of cs_lemke_standard_delassus() for nc contacts and d directions. */
size_t cs_lemke_standard_delassus_size(int nc, int d);

/* The same LCP from the Delassus form (FCLIB local problems): W [3nc x 3nc] column-major (ld 3nc)
 * in the contact frames (normal, t1, t2), b [3nc] the free velocities (the condition is
 * u_n = (W lambda + b)_n >= 0), mu [nc], d directions; scratch from ws
 * (cs_lemke_standard_delassus_size). lambda [3 nc] out, st, statuses as
 * cs_lemke_standard_solve(). thread: any, one caller per workspace. */
cs_status cs_lemke_standard_delassus(cs_workspace *ws, int nc, int d, const double *W,
                                     const double *b, const double *mu, const cs_options *opt,
                                     double *lambda, cs_stats *st);

/* cs_lemke_standard_solve() behind the solver table's signature (solvers.h). */
cs_status cs__lemke_standard_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out);
/* The same LCP with each contact's rows scaled by cs_lemke_contact_scale() and covering vector 1
 * in those units (lemke_contact.c, SCALED): lemke's run for a scene with joints. Statuses as
 * cs_lemke_standard_solve(). thread: any, one caller per workspace. rt-safe: yes. */
cs_status cs__lemke_standard_run_scaled(cs_workspace *ws, const cs__solve_in *in,
                                        cs__solve_out *out);

#endif /* CONTACTD_SOLVER_LEMKE_CONTACT_H */
