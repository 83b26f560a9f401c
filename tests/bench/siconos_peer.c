/* SPDX-License-Identifier: MIT */
/* Siconos Numerics as a peer of the benchmarks (see siconos_peer.h). */
#include "siconos_peer.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/contact.h"
#include "solver/lemke_contact.h"
#include "solver/model.h"

#ifdef CONTACTD_HAVE_SICONOS
#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/GlobalFrictionContactProblem.h>
#include <siconos/numerics/LCP_Solvers.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/NumericsSparseMatrix.h>
#include <siconos/numerics/LinearComplementarityProblem.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/NumericsVerbose.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/lcp_cst.h>
#include <suitesparse/cs.h>
#endif

bool siconos_peer_is_built(void) {
#ifdef CONTACTD_HAVE_SICONOS
    return true;
#else
    return false;
#endif
}

int siconos_peer_lcp(int n, const double *M, const double *q, double *z, int *ret_pivots) {
    *ret_pivots = 0;
#ifdef CONTACTD_HAVE_SICONOS
    numerics_set_verbose(0);
    NumericsMatrix *A = NM_create(NM_DENSE, n, n);
    double *qc = malloc((size_t)n * sizeof(double)), *w = calloc((size_t)n, sizeof(double));
    SolverOptions *opt = solver_options_create(SICONOS_LCP_LEMKE);
    if (!A || !qc || !w || !opt) {
        NM_free(A);
        free(qc);
        free(w);
        if (opt)
            solver_options_delete(opt);
        return -1;
    }
    memcpy(A->matrix0, M, (size_t)n * n * sizeof(double));
    memcpy(qc, q, (size_t)n * sizeof(double));
    memset(z, 0, (size_t)n * sizeof(double));
    opt->iparam[SICONOS_IPARAM_MAX_ITER] = n * n + 4 * n + 8;
    LinearComplementarityProblem p = {.size = n, .M = A, .q = qc};
    int info = -1;
    lcp_lexicolemke(&p, z, w, &info, opt);
    *ret_pivots = opt->iparam[SICONOS_IPARAM_ITER_DONE];
    solver_options_delete(opt);
    NM_free(A);
    free(qc);
    free(w);
    return info;
#else
    (void)n, (void)M, (void)q, (void)z;
    return -1;
#endif
}

double siconos_peer_lcp_residual(int n, const double *M, const double *q, const double *z) {
    double zmax = 0, qmax = 0, mmax = 0;
    for (int i = 0; i < n; i++) {
        zmax = fmax(zmax, fabs(z[i]));
        qmax = fmax(qmax, fabs(q[i]));
    }
    for (long k = 0; k < (long)n * n; k++)
        mmax = fmax(mmax, fabs(M[k]));
    // Tiny divisors only matter for an all-zero z or problem, whose residual terms are 0 too.
    const double s = fmax(qmax + n * mmax * zmax, DBL_MIN), zs = fmax(zmax, DBL_MIN);
    double r = 0;
    for (int i = 0; i < n; i++) {
        double w = q[i];
        for (int j = 0; j < n; j++)
            w += M[(size_t)j * n + i] * z[j];
        if (!isfinite(w) || !isfinite(z[i]))
            return INFINITY;
        r = fmax(r, fmax(-z[i] / zs, fmax(-w / s, fabs(z[i] * w) / (s * zs))));
    }
    return r;
}

#ifdef CONTACTD_HAVE_SICONOS
static const struct {
    const char *name;
    int id;
} gfc3d_solvers[] = {
    {"siconos-gfc3d-nsgs-wr", SICONOS_GLOBAL_FRICTION_3D_NSGS_WR},
    {"siconos-gfc3d-nsn-ac", SICONOS_GLOBAL_FRICTION_3D_NSN_AC},
    {"siconos-gfc3d-admm", SICONOS_GLOBAL_FRICTION_3D_ADMM},
};
#define GFC3D_COUNT ((int)(sizeof gfc3d_solvers / sizeof gfc3d_solvers[0]))

/* A Siconos sparse matrix (CSC origin) copied from 0-based CSC arrays; NULL when out of memory. */
static NumericsMatrix *csc_matrix(int rows, int cols, const int *colptr, const int *rowind,
                                  const double *val) {
    NumericsMatrix *A = NM_create(NM_SPARSE, rows, cols);
    if (!A)
        return NULL;
    NM_csc_alloc(A, colptr[cols] > 0 ? colptr[cols] : 1);
    CSparseMatrix *c = A->matrix2->csc;
    for (int j = 0; j <= cols; j++)
        c->p[j] = colptr[j];
    for (int k = 0; k < colptr[cols]; k++) {
        c->i[k] = rowind[k];
        c->x[k] = val[k];
    }
    c->nz = -1;
    A->matrix2->origin = NSM_CSC;
    return A;
}

static double *copy_vec(const double *x, int n, double *ret_norm) {
    double *y = malloc((size_t)n * sizeof(double) + 1), s = 0;
    if (y)
        for (int i = 0; i < n; i++) {
            y[i] = x[i];
            s += x[i] * x[i];
        }
    *ret_norm = sqrt(s);
    return y;
}
#endif

int siconos_peer_gfc3d_count(void) {
#ifdef CONTACTD_HAVE_SICONOS
    return GFC3D_COUNT;
#else
    return 0;
#endif
}

const char *siconos_peer_gfc3d_name(int k) {
#ifdef CONTACTD_HAVE_SICONOS
    return k >= 0 && k < GFC3D_COUNT ? gfc3d_solvers[k].name : NULL;
#else
    (void)k;
    return NULL;
#endif
}

int siconos_peer_gfc3d(int k, const cs_sap_global *p, double tol, double *v, double *r,
                       int *ret_iters) {
    *ret_iters = 0;
#ifdef CONTACTD_HAVE_SICONOS
    if (k < 0 || k >= GFC3D_COUNT)
        return -1;
    numerics_set_verbose(0);
    // The problem owns what it points to: globalFrictionContact_free releases it all.
    GlobalFrictionContactProblem *gp = globalFrictionContactProblem_new();
    SolverOptions *opt = solver_options_create(gfc3d_solvers[k].id);
    if (!gp || !opt) {
        if (gp)
            globalFrictionContact_free(gp);
        if (opt)
            solver_options_delete(opt);
        return -1;
    }
    gp->dimension = 3;
    gp->numberOfContacts = p->nc;
    gp->M = csc_matrix(p->nv, p->nv, p->m_colptr, p->m_rowind, p->m_val);
    gp->H = csc_matrix(p->nv, 3 * p->nc, p->h_colptr, p->h_rowind, p->h_val);
    gp->q = copy_vec(p->f, p->nv, &gp->norm_q);
    gp->b = copy_vec(p->w, 3 * p->nc, &gp->norm_b);
    double unused;
    gp->mu = copy_vec(p->mu, p->nc, &unused);
    double *u = calloc(3 * (size_t)p->nc + 1, sizeof(double));
    int info = -1;
    if (gp->M && gp->H && gp->q && gp->b && gp->mu && u) {
        memset(v, 0, (size_t)p->nv * sizeof(double));
        memset(r, 0, 3 * (size_t)p->nc * sizeof(double));
        opt->dparam[SICONOS_DPARAM_TOL] = tol;
        info = gfc3d_driver(gp, r, u, v, opt);
        *ret_iters = opt->iparam[SICONOS_IPARAM_ITER_DONE];
    }
    free(u);
    solver_options_delete(opt);
    globalFrictionContact_free(gp);
    return info;
#else
    (void)k, (void)p, (void)tol, (void)v, (void)r;
    return -1;
#endif
}

int siconos_peer_fc3d(int nc, const double *W, const double *q, const double *mu, double tol,
                      double *r, int *ret_iters) {
    *ret_iters = 0;
#ifdef CONTACTD_HAVE_SICONOS
    const int n = 3 * nc;
    numerics_set_verbose(0);
    NumericsMatrix *A = NM_create(NM_DENSE, n, n);
    double *qc = malloc((size_t)n * sizeof(double) + 1), *u = calloc((size_t)n + 1, sizeof(double));
    double *muc = malloc((size_t)nc * sizeof(double) + 1);
    SolverOptions *opt = solver_options_create(SICONOS_FRICTION_3D_NSN_AC);
    int info = -1;
    if (A && qc && u && muc && opt) {
        memcpy(A->matrix0, W, (size_t)n * n * sizeof(double));
        memcpy(qc, q, (size_t)n * sizeof(double));
        memcpy(muc, mu, (size_t)nc * sizeof(double));
        memset(r, 0, (size_t)n * sizeof(double));
        FrictionContactProblem p = {.dimension = 3, .numberOfContacts = nc, .M = A, .q = qc,
                                    .mu = muc};
        opt->dparam[SICONOS_DPARAM_TOL] = tol;
        info = fc3d_driver(&p, r, u, opt);
        *ret_iters = opt->iparam[SICONOS_IPARAM_ITER_DONE];
    }
    if (opt)
        solver_options_delete(opt);
    if (A)
        NM_free(A);
    free(qc);
    free(u);
    free(muc);
    return info;
#else
    (void)nc, (void)W, (void)q, (void)mu, (void)tol, (void)r;
    return -1;
#endif
}

int siconos_peer_form(const cs_scene *s, const cs_limits *lim, double **ret_M, double **ret_q) {
    const int d = s->friction_dirs ? s->friction_dirs : CS_DIRS_DEFAULT, N = s->nc * (2 + d);
    cs_workspace *ws = cs_workspace_new(lim);
    double *M = malloc((size_t)N * N * sizeof(double) + 1);
    double *q = malloc((size_t)N * sizeof(double) + 1);
    cs_model m;
    if (!ws || !M || !q || cs_model_build(&m, ws, s) != CS_CONVERGED ||
        cs_lemke_contact_lcp(ws, &m, M, q) != CS_CONVERGED) {
        cs_workspace_free(ws);
        free(M);
        free(q);
        return -1;
    }
    cs_workspace_free(ws);
    *ret_M = M;
    *ret_q = q;
    return N;
}
