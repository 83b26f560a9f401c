/* SPDX-License-Identifier: MIT */
/* The optional Siconos Numerics peers of the benchmarks: lexicographic Lemke (lcp_lexicolemke)
 * on the explicit LCP of Lloyd's eq. (6), as cs_lemke_contact_lcp() forms it, with the residual
 * check that decides whether it solved the problem as given (unperturbed); and gfc3d solvers on
 * FCLIB global problems; and fc3d's Alart-Curnier Newton on the local (W, q, mu) form of a scene
 * (bench_local.h). The benchmarks build without Siconos (libsiconos-numerics-dev); then the
 * peers are reported as not built. thread: main thread of the benchmark. rt-safe: no. */
#ifndef CONTACTD_TESTS_BENCH_SICONOS_PEER_H
#define CONTACTD_TESTS_BENCH_SICONOS_PEER_H
#include <stdbool.h>

#include "solver/sap.h"
#include "wire/types.h"

/* True when the benchmark was built with Siconos Numerics. */
bool siconos_peer_is_built(void);

/* Solves w = M z + q, 0 <= z _|_ w >= 0 with lcp_lexicolemke, pivot cap n^2 + 4n + 8 (the cap of
 * cs_lemke_lcp, so both get the same chance). M: [n x n] column-major, q: [n], z: [n] out.
 * *ret_pivots: the iterations Siconos reports. Returns Siconos' info (0: it claims success), or
 * -1 when the peer is not built or memory is short. */
int siconos_peer_lcp(int n, const double *M, const double *q, double *z, int *ret_pivots);

/* Relative LCP residual of z for w = M z + q: the largest of -z_i / |z|, -w_i / s and
 * |z_i w_i| / (s |z|) with s = |q| + n |M| |z| (infinity norms); infinite for a non-finite z.
 * The peer counts as having solved the problem when this is <= 1e-9, the relative tolerance the
 * certificates use. */
double siconos_peer_lcp_residual(int n, const double *M, const double *q, const double *z);

/* Siconos' gfc3d solvers set beside SAP on FCLIB global problems: how many (0 when not built)
 * and their names ("siconos-gfc3d-nsgs-wr", ...). */
int siconos_peer_gfc3d_count(void);
const char *siconos_peer_gfc3d_name(int k);

/* Solves the FCLIB global problem p (M v = H r + f, u = H^T v + w; CSC as SAP takes it) with
 * gfc3d solver k (gfc3d_driver) at tolerance tol on Siconos' own error, its other parameters at
 * their defaults. v [nv], r [3 nc] out. *ret_iters: the iterations Siconos reports. Returns
 * Siconos' info (0: it claims convergence), or -1 when the peer is not built or memory is short.
 * Siconos allocates per call. */
int siconos_peer_gfc3d(int k, const cs_sap_global *p, double tol, double *v, double *r,
                       int *ret_iters);

/* Solves the local problem u = W r + q, r in K_mu, u + mu |u_T| e_N in K_mu*, u . r = 0 (FCLIB
 * form, 3 rows per contact: n, t1, t2) with fc3d's nonsmooth Newton on the Alart-Curnier
 * function (SICONOS_FRICTION_3D_NSN_AC, fc3d_driver) at tolerance tol on Siconos' own error, its
 * other parameters at their defaults. W: [3 nc x 3 nc] column-major (dense), q: [3 nc],
 * mu: [nc], r: [3 nc] out. *ret_iters: the iterations Siconos reports. Returns Siconos' info
 * (0: it claims convergence), or -1 when the peer is not built or memory is short. Siconos
 * copies and allocates per call (timed with it, as for the other Siconos peers). */
int siconos_peer_fc3d(int nc, const double *W, const double *q, const double *mu, double tol,
                      double *r, int *ret_iters);

/* Formed LCP of a scene for the peer: N = nc (2 + d), M [N x N] column-major and q [N] malloc'd
 * (release with free). Returns N, or -1 when the scene is out of lim or memory is short. */
int siconos_peer_form(const cs_scene *s, const cs_limits *lim, double **ret_M, double **ret_q);

#endif /* CONTACTD_TESTS_BENCH_SICONOS_PEER_H */
