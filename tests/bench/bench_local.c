/* SPDX-License-Identifier: MIT */
/* The local (W, q, mu) form of a scene (see bench_local.h). */
#include "bench_local.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_run.h"
#include "solver/certify.h"
#include "solver/workspace.h"

bench_local *bench_local_new(const cs_limits *lim) {
    bench_local *L = bench_alloc(sizeof(*L));
    const size_t n = 3 * (size_t)lim->max_contacts;
    L->ws = cs_workspace_new(lim);
    L->W = malloc(n * n * sizeof(double) + 1);
    L->q = malloc(n * sizeof(double) + 1);
    L->mu = malloc((size_t)lim->max_contacts * sizeof(double) + 1);
    L->v = malloc(6 * (size_t)lim->max_bodies * sizeof(double));
    L->scratch = malloc(6 * (size_t)lim->max_bodies * sizeof(double));
    if (!L->ws || !L->W || !L->q || !L->mu || !L->v || !L->scratch) {
        fprintf(stderr, "local form: no memory for %d contacts\n", lim->max_contacts);
        bench_local_free(L);
        return NULL;
    }
    L->base = cs__ws_mark(L->ws);
    return L;
}

void bench_local_free(bench_local *L) {
    if (!L)
        return;
    cs_workspace_free(L->ws);
    free(L->W);
    free(L->q);
    free(L->mu);
    free(L->v);
    free(L->scratch);
    free(L);
}

bool bench_local_form(bench_local *L, const cs_scene *s) {
    // The previous form's model goes: the workspace stack starts empty again.
    cs__ws_release(L->ws, L->base);
    cs_model *m = &L->m;
    if (cs_model_build(m, L->ws, s) != CS_CONVERGED)
        return false;
    L->nc = s->nc;
    L->n = 3 * s->nc;
    if (L->n > 0 && cs_model_delassus(m, L->ws, 3, L->W, L->n, NULL) != CS_CONVERGED)
        return false;
    cs_model_jv(m, m->vstar, L->q);
    for (int i = 0; i < s->nc; i++) {
        L->q[3 * i] -= m->bias[i];
        L->mu[i] = m->mu[i];
    }
    return true;
}

double bench_local_residual(bench_local *L, const double *r, double tol, bool *ret_ok) {
    *ret_ok = false;
    for (int k = 0; k < L->n; k++)
        if (!isfinite(r[k]))
            return INFINITY;
    cs_certificate cert;
    cs_model_velocity(&L->m, r, L->v, L->scratch);
    if (cs_certify(L->ws, &L->m, r, L->v, false, &cert, NULL) != CS_CONVERGED)
        return INFINITY;
    *ret_ok = cs_certificate_is_ok(&cert, tol, true);
    return bench_cert_residual(&cert);
}
