/* SPDX-License-Identifier: MIT */
/* FCLIB files in the benchmarks (see fclib_run.h). */
#include "fclib_run.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siconos_peer.h"

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int fclib_run_list(const char *root, char **out, int max) {
    int n = 0;
    DIR *d = opendir(root);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.')
            continue;
        char sub[2048];
        snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
        DIR *s = opendir(sub);
        if (!s)
            continue;
        struct dirent *f;
        while ((f = readdir(s)) && n < max) {
            const size_t len = strlen(f->d_name);
            if (len > 5 && strcmp(f->d_name + len - 5, ".hdf5") == 0) {
                out[n] = bench_alloc(strlen(sub) + len + 2);
                sprintf(out[n++], "%s/%s", sub, f->d_name);
            }
        }
        closedir(s);
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof(*out), cmp_str);
    return n;
}

// fclib_run_solver with ncp capped at max_iterations (0: fclib_io's cap) for a local p.
static void run_solver(cs_solver solver, const fclib_io_problem *p, int max_iterations,
                       const bench_args *a, bench_cell *c) {
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    for (int rep = 0; rep < a->repeat && (rep == 0 || c->spent_ns <= budget); rep++) {
        // A pivoting solver's cap on a large file is minutes of work (dantzig on KaplasTower):
        // each solve has four budgets, then ends labelled (CS_DEADLINE: not certified).
        const cs_options opt = {.solver = solver, .deadline_ns = bench_now_ns() + 4 * budget,
                                .clock_ns = bench_now_ns};
        fclib_io_result res;
        char err[256];
        const int r = solver == CS_SOLVER_SAP
                          ? fclib_io_solve(p, &opt, &res, err, sizeof err)
                          : fclib_io_solve_local(p, &opt, max_iterations, &res, err, sizeof err);
        if (r != 0) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        bench_samples_push(&c->t, res.solve_ns);
        bench_samples_push(&c->solve, res.solve_ns);
        c->spent_ns += res.solve_ns;
        if (rep == 0)
            bench_cell_add(c, res.stats.iterations,
                           res.status >= 0 && res.error.total <= FCLIB_RUN_TOL, res.error.total);
        fclib_io_result_free(&res);
    }
}

void fclib_run_solver(cs_solver solver, const fclib_io_problem *p, const bench_args *a,
                      bench_cell *c) {
    run_solver(solver, p, 0, a, c);
}

int fclib_run_ncp_to(const fclib_io_problem *p, double target, const bench_args *a,
                     bench_cell *c) {
    const cs_options opt = {.solver = CS_SOLVER_NCP};
    // Caps 1, 2, 4, ... and fclib_io's own: the first that reaches target, at most twice the
    // fewest iterations that would.
    for (int cap = 1;; cap = 2 * cap < FCLIB_NCP_ITERATIONS ? 2 * cap : FCLIB_NCP_ITERATIONS) {
        fclib_io_result res;
        char err[256];
        if (fclib_io_solve_local(p, &opt, cap, &res, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        const bool reached = res.error.total <= target;
        fclib_io_result_free(&res);
        if (reached) {
            run_solver(CS_SOLVER_NCP, p, cap, a, c);
            return cap;
        }
        if (cap == FCLIB_NCP_ITERATIONS)
            return 0;
    }
}

void fclib_run_gfc3d(int k, const fclib_io_problem *p, const bench_args *a, bench_cell *c) {
    const cs_sap_global *g = &p->g;
    double *v = bench_alloc((size_t)g->nv * sizeof(double));
    double *r = bench_alloc(3 * (size_t)g->nc * sizeof(double));
    double *work = bench_alloc((2 * (size_t)g->nv + 3 * (size_t)g->nc) * sizeof(double));
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    for (int rep = 0; rep < a->repeat && (rep == 0 || c->spent_ns <= budget); rep++) {
        int iters = 0;
        const int64_t t0 = bench_now_ns();
        const int info = siconos_peer_gfc3d(k, g, FCLIB_RUN_TOL, v, r, &iters);
        const int64_t t = bench_now_ns() - t0;
        bench_samples_push(&c->t, t);
        bench_samples_push(&c->solve, t);
        c->spent_ns += t;
        if (rep == 0) {
            cs_coulomb_error e;
            cs_coulomb_global_residual(g, v, r, work, work + 2 * g->nv, &e);
            bench_cell_add(c, iters, info == 0 && e.total <= FCLIB_RUN_TOL, e.total);
        }
    }
    free(work);
    free(r);
    free(v);
}

void fclib_run_fc3d(const fclib_io_problem *p, const bench_args *a, bench_cell *c) {
    const size_t m = 3 * (size_t)p->nc;
    double *r = bench_alloc(m * sizeof(double));
    double *u = bench_alloc(m * sizeof(double));
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    for (int rep = 0; rep < a->repeat && (rep == 0 || c->spent_ns <= budget); rep++) {
        int iters = 0;
        const int64_t t0 = bench_now_ns();
        // The local form's q and mu are the global view's w and mu (fclib_io.h).
        const int info =
            siconos_peer_fc3d(p->nc, p->w_dense, p->g.w, p->g.mu, FCLIB_RUN_TOL, r, &iters);
        const int64_t t = bench_now_ns() - t0;
        bench_samples_push(&c->t, t);
        bench_samples_push(&c->solve, t);
        c->spent_ns += t;
        if (rep == 0) {
            cs_coulomb_error e;
            fclib_io_local_score(p, r, u, &e);
            bench_cell_add(c, iters, info == 0 && e.total <= FCLIB_RUN_TOL, e.total);
        }
    }
    free(u);
    free(r);
}
