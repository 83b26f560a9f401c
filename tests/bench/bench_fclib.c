/* SPDX-License-Identifier: MIT */
/* FCLIB problems (../shared/fclib, read with clients/cli/fclib_io, the reader `contactctl fclib`
 * uses): SAP's time, iterations and Siconos residual on every file, and on the global-form files
 * Siconos Numerics' gfc3d solvers beside it (when the benchmark is built with Siconos), each
 * answer scored by the same function (cs_coulomb_global_residual, Siconos' gfc3d error). The
 * first solve of each (solver, file) is checked; repeats run while the budget lasts. Local-form
 * files are solved by SAP through fclib_io's global form of W; they have no gfc3d peer.
 * Output: a table and <out>/fclib.csv (bench_common.h columns; certified: residual <= 1e-6). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "fclib_io.h"
#include "siconos_peer.h"
#include "testlib.h"

/* Residual that counts as solved, and the tolerance the Siconos peers stop at. */
#define FCLIB_TOL 1e-6
/* Largest problem (dofs) given to the Siconos peers: gfc3d-nsgs-wr forms dense nv x nv data (on
 * Spheres, 12000 dofs, it held 1.8 GB and had not finished after 5 minutes). */
#define PEER_MAX_DOFS 4000
#define MAX_FILES 64

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .hdf5 files one directory below root, sorted; returns how many. */
static int list_files(const char *root, char **out, int max) {
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

static void emit(bench_row *r, int64_t base, FILE *csv) {
    r->ratio_p50 = base > 0 ? (double)r->t.p50 / (double)base : 0;
    bench_table_row(r);
    bench_csv_row(csv, r);
}

/* SAP on p: returns its row's cell filled (first solve checked, repeats within budget). */
static void run_sap(const fclib_io_problem *p, const bench_args *a, bench_cell *c) {
    const cs_options opt = {.solver = CS_SOLVER_SAP};
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    for (int rep = 0; rep < a->repeat && (rep == 0 || c->spent_ns <= budget); rep++) {
        fclib_io_result res;
        char err[256];
        if (fclib_io_solve(p, &opt, &res, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        bench_samples_push(&c->t, res.solve_ns);
        bench_samples_push(&c->solve, res.solve_ns);
        c->spent_ns += res.solve_ns;
        if (rep == 0)
            bench_cell_add(c, res.stats.iterations,
                           res.status >= 0 && res.error.total <= FCLIB_TOL, res.error.total);
        fclib_io_result_free(&res);
    }
}

/* Siconos gfc3d solver k on the global problem p. */
static void run_gfc3d(int k, const fclib_io_problem *p, const bench_args *a, bench_cell *c) {
    const cs_sap_global *g = &p->g;
    double *v = bench_alloc((size_t)g->nv * sizeof(double));
    double *r = bench_alloc(3 * (size_t)g->nc * sizeof(double));
    double *work = bench_alloc((2 * (size_t)g->nv + 3 * (size_t)g->nc) * sizeof(double));
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    for (int rep = 0; rep < a->repeat && (rep == 0 || c->spent_ns <= budget); rep++) {
        int iters = 0;
        const int64_t t0 = bench_now_ns();
        const int info = siconos_peer_gfc3d(k, g, FCLIB_TOL, v, r, &iters);
        const int64_t t = bench_now_ns() - t0;
        bench_samples_push(&c->t, t);
        bench_samples_push(&c->solve, t);
        c->spent_ns += t;
        if (rep == 0) {
            cs_coulomb_error e;
            cs_coulomb_global_residual(g, v, r, work, work + 2 * g->nv, &e);
            bench_cell_add(c, iters, info == 0 && e.total <= FCLIB_TOL, e.total);
        }
    }
    free(work);
    free(r);
    free(v);
}

int main(int argc, char **argv) {
    const bench_args a = bench_parse(argc, argv,
                                     "SAP and Siconos' gfc3d solvers on the FCLIB files of "
                                     "$CONTACTD_SHARED/fclib; writes fclib.csv to --out or "
                                     "$CONTACTD_BENCH_OUT. --quick: files with <= 10 contacts.\n",
                                     20);
    bench_header(stdout, "fclib", &a);
    printf("# peers: %s\n", siconos_peer_gfc3d_count()
                                ? "siconos gfc3d (global-form files), tolerance 1e-6 on its error"
                                : "not built (libsiconos-numerics-dev not found)");
    printf("# times: the solver call alone (problem read and scoring not timed); residual: "
           "Siconos' gfc3d error (fc3d for local-form files); certified: residual <= 1e-6\n");
    FILE *csv = bench_csv_open(&a, "fclib");
    char *files[MAX_FILES];
    const int nf = list_files(t_shared_path("fclib"), files, MAX_FILES);
    if (nf == 0)
        printf("# no FCLIB files under %s\n", t_shared_path("fclib"));
    bench_table_header();
    for (int i = 0; i < nf; i++) {
        fclib_io_problem p;
        char err[512];
        const char *base = strrchr(files[i], '/') + 1;
        if (fclib_io_load(files[i], &p, err, sizeof err) != 0) {
            printf("%-12s %-24s skipped: %s\n", "fclib", base, err);
            free(files[i]);
            continue;
        }
        if (a.quick && p.nc > 10) {
            fclib_io_free(&p);
            free(files[i]);
            continue;
        }
        char scene[160];
        snprintf(scene, sizeof scene, "%s(%s)", base, fclib_io_form_name(p.form));
        int64_t base_p50 = 0;
        if (cs_solver_is_available(CS_SOLVER_SAP)) {
            bench_cell c = {0};
            run_sap(&p, &a, &c);
            bench_row r = bench_cell_row(&c, "fclib", "sap", scene, p.nc);
            base_p50 = r.t.p50;
            emit(&r, base_p50, csv);
            bench_cell_free(&c);
        } else {
            printf("%-12s %-24s %-26s not available in this build\n", "fclib", scene, "sap");
        }
        const bool peers = p.form == FCLIB_IO_GLOBAL && siconos_peer_gfc3d_count() > 0;
        if (peers && p.nv > PEER_MAX_DOFS)
            printf("%-12s %-24s siconos peers skipped: %d dofs > %d (dense reformulation)\n",
                   "fclib", scene, p.nv, PEER_MAX_DOFS);
        for (int k = 0; peers && p.nv <= PEER_MAX_DOFS && k < siconos_peer_gfc3d_count(); k++) {
            bench_cell c = {0};
            run_gfc3d(k, &p, &a, &c);
            bench_row r = bench_cell_row(&c, "fclib", siconos_peer_gfc3d_name(k), scene, p.nc);
            emit(&r, base_p50, csv);
            bench_cell_free(&c);
        }
        fclib_io_free(&p);
        free(files[i]);
    }
    fclose(csv);
    return 0;
}
