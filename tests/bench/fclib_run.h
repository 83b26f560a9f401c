/* SPDX-License-Identifier: MIT */
/* FCLIB files in the benchmarks (bench_fclib, bench_solvers): the files of a directory tree, and
 * one file solved by SAP or ncp through clients/cli/fclib_io (the reader and scoring `contactctl
 * fclib` uses) or by a Siconos gfc3d or fc3d peer, each answer scored by Siconos' residual
 * (coulomb.h). The first solve of each (solver, file) is checked; repeats run while the budget
 * lasts. thread: the benchmark's main thread. Not rt code. */
#ifndef CONTACTD_TESTS_BENCH_FCLIB_RUN_H
#define CONTACTD_TESTS_BENCH_FCLIB_RUN_H
#include "bench_run.h"
#include "fclib_io.h"

/* Residual that counts as solved, and the tolerance the Siconos peers stop at. */
#define FCLIB_RUN_TOL 1e-6
/* Largest problem (dofs) given to the Siconos peers: gfc3d-nsgs-wr forms dense nv x nv data (on
 * Spheres, 12000 dofs, it held 1.8 GB and had not finished after 5 minutes). */
#define FCLIB_RUN_PEER_MAX_DOFS 4000
/* Files fclib_run_list() lists at most. */
#define FCLIB_RUN_MAX_FILES 64

/* The .hdf5 files one directory below root, sorted, into out[max] (each malloc'd: free them);
 * returns how many. */
int fclib_run_list(const char *root, char **out, int max);

/* SAP (fclib_io_solve, either form), or ncp, lemke-standard or dantzig (fclib_io_solve_local,
 * local form) on p: fills c, zeroed by the caller (first solve checked: certified when it
 * converged with residual <= FCLIB_RUN_TOL; repeats within the budget, each solve stopped at the
 * deadline four budgets after it starts; times: the solver call alone, from fclib_io). Exits
 * when memory is short. */
void fclib_run_solver(cs_solver solver, const fclib_io_problem *p, const bench_args *a,
                      bench_cell *c);

/* ncp on the local problem p stopped at an iteration cap (1, 2, 4, ..., FCLIB_NCP_ITERATIONS:
 * the first) whose answer scores at most target, a peer's residual: its time to the same
 * residual. Fills c as fclib_run_solver; returns the cap, or 0 when even the last one does not
 * reach target (c untouched). */
int fclib_run_ncp_to(const fclib_io_problem *p, double target, const bench_args *a,
                     bench_cell *c);

/* Siconos fc3d NSN (siconos_peer_fc3d) on the local problem p at tolerance FCLIB_RUN_TOL, on
 * its symmetric dense W, scored by fclib_io_local_score; fills c as fclib_run_solver. */
void fclib_run_fc3d(const fclib_io_problem *p, const bench_args *a, bench_cell *c);

/* Siconos gfc3d solver k (siconos_peer_gfc3d) on the global problem p at tolerance
 * FCLIB_RUN_TOL, scored by cs_coulomb_global_residual; fills c as fclib_run_sap. */
void fclib_run_gfc3d(int k, const fclib_io_problem *p, const bench_args *a, bench_cell *c);

#endif /* CONTACTD_TESTS_BENCH_FCLIB_RUN_H */
