/* SPDX-License-Identifier: MIT */
/* The local (Delassus) form of a scene, the problem the peers that take (W, q, mu) solve:
 *     u = W r + q,   W = J M^-1 J^T (cs_model_delassus, 3 rows per contact: n, t1, t2),
 *     q = J v* - bias on the normal rows (Lloyd 2005 eq. 2; model.h's bias: v_n >= bias),
 * with r and u in the contact frames, so u_n >= 0 is the library's normal-velocity condition.
 * An answer r is scored by the library's own certificate (cs_certify on the exact cone, the
 * velocities v = v* + M^-1 J^T r), the same numbers cs_step judges SAP and the pivoting solvers
 * on. thread: the benchmark's main thread. Not rt code: it allocates. */
#ifndef CONTACTD_TESTS_BENCH_LOCAL_H
#define CONTACTD_TESTS_BENCH_LOCAL_H
#include <stdbool.h>

#include "solver/model.h"

/* One scene's local form and the model it came from (which lives in ws until the next form). */
typedef struct bench_local {
    int nc, n;        /* contacts; n = 3 nc rows */
    double *W;        /* [n x n] column-major, symmetric */
    double *q;        /* [n] */
    double *mu;       /* [nc] */
    cs_workspace *ws; /* private: holds the model above base */
    size_t base;      /* private */
    cs_model m;       /* private */
    double *v, *scratch; /* private: [6 nb] each */
} bench_local;

/* Memory for scenes within lim; NULL (and a message) when memory is short. */
bench_local *bench_local_new(const cs_limits *lim);
void bench_local_free(bench_local *L);

/* Forms s (validated, within the limits L was made for). Returns false when the model or W
 * cannot be built. */
bool bench_local_form(bench_local *L, const cs_scene *s);

/* The certificate residual of an answer r [3 nc] of the last form: bench_cert_residual() of
 * cs_certify(exact cone). *ret_ok: whether cs_certificate_is_ok() passes it at tol (frictional).
 * Infinite for a non-finite r. */
double bench_local_residual(bench_local *L, const double *r, double tol, bool *ret_ok);

#endif /* CONTACTD_TESTS_BENCH_LOCAL_H */
