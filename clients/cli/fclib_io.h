/* SPDX-License-Identifier: MIT */
/* FCLIB problem files for contactctl: read a problem with libfclib into the global form SAP
 * takes (M v = H r + f, u = H^T v + w, CSC matrices), solve it (SAP, or ncp on the local form's
 * W) and score the answer with the Siconos residual (solver/coulomb.h), and write the answer in
 * FCLIB's solution format.
 * A local-form problem (u = W r + q) is taken when W is symmetric positive semidefinite, as the
 * global problem M = I_k, H = (P L)^T, f = 0, w = q with P^T W P = L L^T (pivoted Cholesky,
 * rank k): then H^T M^-1 H = W and H^T M^-1 f + w = q, the only data the contact answer (r, u)
 * depends on, so the answer is the one SAP would give for any global form of the problem. One
 * function (fclib_io_solve) does the solve and the scoring, so `contactctl fclib` and the tests
 * report the same numbers. Client side only: it allocates, and libcontact never sees HDF5.
 * thread: any, one caller per object. rt-safe: no. */
#ifndef CONTACTD_CLI_FCLIB_IO_H
#define CONTACTD_CLI_FCLIB_IO_H
#include <stdbool.h>
#include <stddef.h>

#include "solver/coulomb.h"
#include "solver/ncp.h"
#include "solver/sap.h"
#include "wire/types.h"

/* Largest relative asymmetry |W - W^T|_F / |W|_F of a local W that is taken, as its symmetric
 * part (W + W^T) / 2. Measured on ../shared/fclib: Rover1039 2.0e-5, Rover4609 3.1e-5,
 * OneObject 4.3e-5, Capsules-i125 3.4e-4, Capsules-i122 4.4e-4; the other local files <= 7e-14.
 * These come from Siconos' Bullet-built problems, whose W is formed in single precision or
 * from inconsistent contact frames; beyond 1e-3 W is too far from any Delassus matrix. */
#define FCLIB_IO_ASYMMETRY_MAX 1e-3
/* ncp's iteration cap offline unless the caller gives one (the real-time default is 50): the
 * Capsules files take more. */
#define FCLIB_NCP_ITERATIONS 200

struct fclib_global;
struct fclib_local;

typedef enum fclib_io_form {
    FCLIB_IO_GLOBAL = 1, /* /fclib_global: M, H, f, w, mu (what SAP takes) */
    FCLIB_IO_LOCAL = 2,  /* /fclib_local: W, q, mu (Delassus form) */
} fclib_io_form;

/* "global" or "local". */
const char *fclib_io_form_name(fclib_io_form form);

/* A problem as read. g views the arrays below (owned here): M in CSC with both triangles
 * (mirrored when the file stores one), H in CSC, entries sorted by row within a column and
 * duplicates summed; for the local form, the global form above built from W. */
typedef struct fclib_io_problem {
    fclib_io_form form;
    int nc;            /* contacts (3 unknowns each) */
    int nv;            /* global: degrees of freedom (size of M); local: k = rank W */
    bool m_mirrored;   /* M (global) or W (local) was stored as one triangle */
    double asymmetry;  /* local: |W - W^T|_F / |W|_F as stored (0 when symmetric) */
    bool symmetrized;  /* local: W was replaced by (W + W^T) / 2 and differs from it by more
                        * than rounding (asymmetry > 1e-12) */
    double *w_dense;   /* local: W [3 nc x 3 nc] column-major, symmetric (what ncp solves) */
    cs_sap_global g;   /* the problem SAP solves */
    struct fclib_global *raw;      /* libfclib's copy, written back by fclib_io_write_solution */
    struct fclib_local *raw_local; /* the same for the local form */
    int *m_colptr, *m_rowind, *h_colptr, *h_rowind, *w_colptr, *w_rowind; /* private */
    double *m_val, *h_val, *w_val, *zero;                                  /* private */
} fclib_io_problem;

/* Reads the FCLIB file at path. libfclib exits the process on any HDF5 error, so the layout is
 * checked first (groups, datasets, their types and lengths), then the data (indices in range,
 * finite values, mu >= 0, M symmetric, W symmetric up to FCLIB_IO_ASYMMETRY_MAX (then
 * symmetrized), W positive semidefinite). Returns 0; -1 with err set to "PATH: what is wrong"
 * when the file cannot be used (missing, not HDF5, not FCLIB, 2-D, with equality constraints G
 * or V/R, a malformed layout, out of memory); -2 when it is a readable FCLIB problem whose data
 * is refused (non-finite, index out of range, mu < 0, M or W not symmetric, W not PSD). */
int fclib_io_load(const char *path, fclib_io_problem *ret, char *err, size_t errlen);

/* Frees what fclib_io_load allocated; accepts a zeroed problem. */
void fclib_io_free(fclib_io_problem *p);

/* One solve and its score. v, r, u are owned here. */
typedef struct fclib_io_result {
    cs_status status;       /* the solver's status */
    cs_stats stats;         /* the solver's statistics (iterations) */
    int64_t solve_ns;       /* wall time of the solver call, CLOCK_MONOTONIC */
    double *v, *r, *u;      /* [nv], [3 nc], [3 nc]: the solver's answer */
    cs_coulomb_error error; /* Siconos' residual of the answer: gfc3d (global form) of (v, r),
                             * or fc3d (local form) of r with u = W r + q (momentum 0 there),
                             * W as stored in the file */
    cs_ncp_info ncp;        /* fclib_io_solve_local with ncp: iterations and eq. 15's residual */
} fclib_io_result;

/* Solves p with SAP under opt (solver ignored) and scores the answer with Siconos' residual for
 * the form the file holds: cs_coulomb_global_residual, or cs_coulomb_residual with u = W r + q
 * from the file's W and norm |q|. Returns 0 (ret->status says how the solve went), or -1 when
 * memory is short (err set). */
int fclib_io_solve(const fclib_io_problem *p, const cs_options *opt, fclib_io_result *ret,
                   char *err, size_t errlen);

/* Solves the local problem p with opt->solver under opt's deadline and scores it as
 * fclib_io_solve does: ncp (cs_ncp_delassus on the symmetric dense W, b = q, cold, at most
 * max_iterations Gauss-Newton iterations; 0: FCLIB_NCP_ITERATIONS),
 * lemke-standard (Lloyd's LCP on the 8-sided friction pyramid, cs_lemke_standard_delassus) or
 * dantzig (Baraff's pivoting on W with friction on the same pyramid, cs_dantzig_mlcp), whose
 * answers the residual judges on the exact cone the pyramid approximates. ret->v is NULL (the
 * local form has no v); ret->u = W r + q with the file's W. Returns 0 (ret->status says how the
 * solve went), or -1 with err set for a global-form p, another solver, or when memory is short. */
int fclib_io_solve_local(const fclib_io_problem *p, const cs_options *opt, int max_iterations,
                         fclib_io_result *ret, char *err, size_t errlen);

/* Siconos' fc3d error of impulses r [3 nc] on the local problem p's own equation u = W r + q (W
 * as stored, not symmetrized), with |q| as the problem's scale. u: [3 nc] out. */
void fclib_io_local_score(const fclib_io_problem *p, const double *r, double *u,
                          cs_coulomb_error *ret);

/* Frees ret's arrays; accepts a zeroed result. */
void fclib_io_result_free(fclib_io_result *ret);

/* Checks before a long solve that out can be written: its directory exists and is writable
 * and out itself does not exist (never overwritten). Returns 0, or -1 with err set. */
int fclib_io_check_output(const char *out, char *err, size_t errlen);

/* Writes p's problem as read and res's answer to the new FCLIB file out (fclib_write_global or
 * fclib_write_local, then fclib_write_solution: v, r, u, or r, u for the local form). Returns 0,
 * or -1 with err set. */
int fclib_io_write_solution(const char *out, const fclib_io_problem *p,
                            const fclib_io_result *res, char *err, size_t errlen);

#endif /* CONTACTD_CLI_FCLIB_IO_H */
