/* SPDX-License-Identifier: MIT */
/* FCLIB problems (../shared/fclib, read with clients/cli/fclib_io, the reader `contactctl fclib`
 * uses): SAP's time, iterations and Siconos residual on every file, and on the global-form files
 * Siconos Numerics' gfc3d solvers beside it (when the benchmark is built with Siconos), each
 * answer scored by the same function (cs_coulomb_global_residual, Siconos' gfc3d error). The
 * first solve of each (solver, file) is checked; repeats run while the budget lasts. Local-form
 * files are solved by SAP through fclib_io's global form of W; they have no gfc3d peer.
 * Output: a table and <out>/fclib.csv (bench_common.h columns; certified: residual <= 1e-6). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "fclib_io.h"
#include "fclib_run.h"
#include "siconos_peer.h"
#include "testlib.h"

static void emit(bench_row *r, int64_t base, FILE *csv) {
    r->ratio_p50 = base > 0 ? (double)r->t.p50 / (double)base : 0;
    bench_table_row(r);
    bench_csv_row(csv, r);
}

int main(int argc, char **argv) {
    const bench_args a = bench_parse(argc, argv,
                                     "SAP and Siconos' gfc3d solvers on the FCLIB files of "
                                     "$CONTACTD_TEST_DATA/fclib (default ../shared/fclib); "
                                     "writes fclib.csv to --out or $CONTACTD_BENCH_OUT. "
                                     "--quick: files with <= 10 contacts.\n",
                                     20);
    bench_header(stdout, "fclib", &a);
    printf("# peers: %s\n", siconos_peer_gfc3d_count()
                                ? "siconos gfc3d (global-form files), tolerance 1e-6 on its error"
                                : "not built (libsiconos-numerics-dev not found)");
    printf("# times: the solver call alone (problem read and scoring not timed); residual: "
           "Siconos' gfc3d error (fc3d for local-form files); certified: residual <= 1e-6\n");
    FILE *csv = bench_csv_open(&a, "fclib");
    char *files[FCLIB_RUN_MAX_FILES];
    const int nf = fclib_run_list(t_shared_path("fclib"), files, FCLIB_RUN_MAX_FILES);
    if (nf == 0) {
        // A user's own clone has no ../shared: nothing to measure, and nothing wrong (77: the
        // smoke test reports it skipped).
        printf("# no FCLIB files under %s: skipped\n", t_shared_path("fclib"));
        fclose(csv);
        return 77;
    }
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
            fclib_run_solver(CS_SOLVER_SAP, &p, &a, &c);
            bench_row r = bench_cell_row(&c, "fclib", "sap", scene, p.nc);
            base_p50 = r.t.p50;
            emit(&r, base_p50, csv);
            bench_cell_free(&c);
        } else {
            printf("%-12s %-24s %-26s not available in this build\n", "fclib", scene, "sap");
        }
        const bool peers = p.form == FCLIB_IO_GLOBAL && siconos_peer_gfc3d_count() > 0;
        if (peers && p.nv > FCLIB_RUN_PEER_MAX_DOFS)
            printf("%-12s %-24s siconos peers skipped: %d dofs > %d (dense reformulation)\n",
                   "fclib", scene, p.nv, FCLIB_RUN_PEER_MAX_DOFS);
        const int npeer = peers && p.nv <= FCLIB_RUN_PEER_MAX_DOFS ? siconos_peer_gfc3d_count() : 0;
        for (int k = 0; k < npeer; k++) {
            bench_cell c = {0};
            fclib_run_gfc3d(k, &p, &a, &c);
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
