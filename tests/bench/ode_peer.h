/* SPDX-License-Identifier: MIT */
/* ODE 0.16's boxed Dantzig LCP solver (Debian libode-dev) as a peer of the benchmarks, on the
 * local form of a scene (bench_local.h) set up the way ODE's own stepper sets up contact rows:
 * per contact a normal row with bounds [0, inf) and two tangent rows with bounds
 * [-mu x_n, mu x_n] (findex: the box friction of dContactApprox1, scaled by the normal impulse),
 * the normal rows first so that every normal is solved before ODE fixes the friction bounds,
 *     A x = b + w,  A = W + cfm I,  b = -q,
 * solved by dxSolveLCP (lcp.cpp; ODE exports it only as a C++ symbol, dSolveLCP being internal).
 * ODE reports no pivot count and no status: a failure shows only as its "LCP internal error"
 * message, which the peer counts. The benchmarks build without ODE; the peer then says so.
 * thread: the benchmark's main thread (ODE's message handler is global). rt-safe: no. */
#ifndef CONTACTD_TESTS_BENCH_ODE_PEER_H
#define CONTACTD_TESTS_BENCH_ODE_PEER_H
#include <stdbool.h>

/* True when the benchmark was built with ODE. */
bool ode_peer_is_built(void);

typedef struct ode_peer ode_peer;

/* Memory for problems of up to nc_max contacts; NULL when not built or memory is short. */
ode_peer *ode_peer_new(int nc_max);
/* Accepts NULL. */
void ode_peer_free(ode_peer *o);

/* Loads the problem u = W r + q (W: [3 nc x 3 nc] column-major, rows n, t1, t2 per contact;
 * q: [3 nc]; mu: [nc]) with compliance cfm on the diagonal, as ODE's input (untimed set-up:
 * dxSolveLCP overwrites its input, so every solve needs a fresh load). */
void ode_peer_load(ode_peer *o, int nc, const double *W, const double *q, const double *mu,
                   double cfm);
/* Solves the loaded problem with dxSolveLCP (the call to time) and writes r [3 nc] in the
 * scene's order. Returns the number of "LCP internal error" messages ODE gave (0: none). */
int ode_peer_solve(ode_peer *o, double *r);

/* Relative residual of r for the boxed LCP with cfm 0 (the contact problem as given): per row
 * the bound violation over |r|, and w of the wrong sign for where x lies (w > 0 only at lo,
 * w < 0 only at hi) times its distance to that bound over s |r|, where w = W r + q and
 * s = |q| + 3 nc |W| |r| (infinity norms); the form of siconos_peer_lcp_residual() for box
 * bounds; infinite for a non-finite r. The friction bounds are mu times the normals of
 * bound_normals [3 nc] (an answer in the layout of r): r itself for the contact law at the
 * answer; or the frictionless answer, which is what ODE bounds friction with (it fixes the
 * bounds when it reaches the first friction row, once every normal row is solved, and keeps
 * them while the normals change). */
double ode_peer_residual(int nc, const double *W, const double *q, const double *mu,
                         const double *r, const double *bound_normals);

#endif /* CONTACTD_TESTS_BENCH_ODE_PEER_H */
