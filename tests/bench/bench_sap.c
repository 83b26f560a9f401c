/* SPDX-License-Identifier: MIT */
/* SAP against the Lemke variants on the scenes of issue 4, every solve through cs_step:
 *   peg      a peg in a square hole, n = 8..32 contacts, 20 random wrenches per point
 *   stack    1..5 aligned blocks (n = 4..20 contacts), 20 random wrenches per point
 *   clutter  10, 20 and 40 balls and boxes in a bin, 20 random snapshots per size (n = bodies)
 * each problem solved cold, then streams, each stepped warm (the session's warm start carried
 * over) and cold (reset before every step): the 16-contact peg under a turning wrench, the
 * clutter in closed loop (bodies moved with the returned velocities, contacts regenerated every
 * tick), and two scenes at rest (a box on a plane, a stack of three) whose warm Newton
 * iterations per tick are the "iterations at rest" of the targets. The time targets are judged
 * on SAP's warm streams, as issue 4 states them.
 * lemke-standard is the baseline of the ratios; variants not in this build are reported as such.
 * Output: a table, <out>/sap.csv (bench_common.h columns), <out>/sap.png (sap.gp). FCLIB
 * problems are bench_fclib's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "testlib.h"

#define INSTANCES 20
#define QUICK_INSTANCES 2
#define DIRS 8

/* The variants, baseline first. */
enum { STANDARD, SAP, REDUCED, STRUCTURAL, NVAR };
static const cs_solver variant_solver[NVAR] = {CS_SOLVER_LEMKE_STANDARD, CS_SOLVER_SAP,
                                               CS_SOLVER_LEMKE, CS_SOLVER_LEMKE_STRUCTURAL};

/* Numbers the targets are judged on: SAP warm-started and streamed, as the targets say. */
typedef struct findings {
    bench_summary sap_peg16, sap_clutter[3]; /* turning peg; clutter 10, 20, 40 in closed loop */
    double rest_iters[2];                    /* box, stack: warm SAP, mean per tick */
    bool have_rest[2];
} findings;

static void run_experiment(const bench_sweep *e, const bench_args *a, FILE *csv) {
    const int W = a->quick ? QUICK_INSTANCES : INSTANCES, np = e->np, nprob = np * W;
    t_gen_scene *g = bench_alloc((size_t)nprob * sizeof(*g));
    cs_limits lim = {.max_bodies = 1, .max_contacts = 1, .max_dirs = DIRS};
    int *contacts = bench_alloc((size_t)nprob * sizeof(int));
    bench_sweep_generate(e, W, 0x5a92022ull, DIRS, g, contacts, &lim);
    bench_variant var[NVAR];
    for (int v = 0; v < NVAR; v++)
        if (!bench_variant_init(&var[v], variant_solver[v], &lim))
            exit(1);
    bench_cell *cells = bench_alloc((size_t)NVAR * np * sizeof(*cells));
    bench_run_pool(var, NVAR, g, nprob, W, a, cells);
    for (int p = 0; p < np; p++) {
        char scene[48];
        const int n = bench_sweep_label(e, p, contacts, W, scene, sizeof scene);
        int64_t base = 0;
        for (int v = 0; v < NVAR; v++) {
            if (!var[v].available)
                continue;
            bench_row r = bench_cell_row(&cells[v * np + p], e->name, var[v].name, scene, n);
            if (v == STANDARD)
                base = r.t.p50;
            r.ratio_p50 = base > 0 ? (double)r.t.p50 / (double)base : 0;
            bench_table_row(&r);
            bench_csv_row(csv, &r);
        }
    }
    for (int k = 0; k < NVAR * np; k++)
        bench_cell_free(&cells[k]);
    free(cells);
    for (int v = 0; v < NVAR; v++)
        bench_variant_fini(&var[v]);
    free(contacts);
    free(g);
}

/* The streams, in order: the 16-contact peg under a slowly turning wrench, the clutter in
 * closed loop (10, 20, 40 bodies; 10 only with --quick), then two scenes at rest. */
enum { STREAM_PEG, STREAM_CLUTTER, STREAM_REST = STREAM_CLUTTER + 3, NSTREAM = STREAM_REST + 2 };

/* Stream s's first scene, kind and name; false when --quick skips it. */
static bool stream_scene(int s, bool quick, t_gen_scene *g, bench_stream_kind *kind,
                         char *name, size_t cap) {
    static const int sizes[3] = {10, 20, 40};
    if (s == STREAM_PEG) {
        t_gen_peg(g, 16, 0.25, DIRS, 16);
        *kind = BENCH_STREAM_TURN;
        snprintf(name, cap, "peg16-turning");
        return true;
    }
    if (s < STREAM_REST) {
        if (quick && s > STREAM_CLUTTER)
            return false;
        t_gen_clutter(g, sizes[s - STREAM_CLUTTER], 40 + (uint64_t)(s - STREAM_CLUTTER));
        *kind = BENCH_STREAM_LOOP;
        snprintf(name, cap, "clutter-%d-loop", sizes[s - STREAM_CLUTTER]);
        return true;
    }
    // At rest: no applied wrench, the same scene every tick.
    if (s == STREAM_REST)
        t_gen_single(g, 3, 0.5, DIRS, 1);
    else
        t_gen_stack(g, 3, 0, 0.5, DIRS, 1);
    for (int b = 0; b < g->s.nb; b++)
        memset(g->bodies[b].f, 0, 6 * sizeof(double)); // f and tau
    *kind = BENCH_STREAM_STILL;
    snprintf(name, cap, "%s", s == STREAM_REST ? "box-at-rest" : "stack3-at-rest");
    return true;
}

/* Streams of every available variant; SAP's warm rows are what the targets are judged on. */
static void run_streams(const bench_args *a, FILE *csv, findings *fd) {
    t_gen_scene *g = bench_alloc(sizeof(*g));
    for (int s = 0; s < NSTREAM; s++) {
        char scene[48];
        bench_stream_kind kind;
        if (!stream_scene(s, a->quick, g, &kind, scene, sizeof scene))
            continue;
        const int ticks = a->quick ? 20 : 1000;
        for (int v = 0; v < NVAR; v++) {
            bench_stream_out o;
            if (!bench_run_stream(g, kind, ticks, variant_solver[v], a, &o)) {
                printf("%-12s %-24s %-26s not available in this build\n", "stream", scene,
                       cs_solver_name(variant_solver[v]));
                continue;
            }
            const double tail = o.warm_tail_iters_mean;
            bench_summary warm;
            bench_stream_report(&o, scene, variant_solver[v], csv, &warm);
            if (variant_solver[v] != CS_SOLVER_SAP)
                continue;
            if (s == STREAM_PEG)
                fd->sap_peg16 = warm;
            else if (s < STREAM_REST)
                fd->sap_clutter[s - STREAM_CLUTTER] = warm;
            else {
                fd->rest_iters[s - STREAM_REST] = tail;
                fd->have_rest[s - STREAM_REST] = true;
            }
        }
    }
    free(g);
}

int main(int argc, char **argv) {
    const bench_args a = bench_parse(argc, argv,
                                     "SAP and the Lemke variants on pegs, stacks and clutter; "
                                     "writes sap.csv and sap.png to --out or "
                                     "$CONTACTD_BENCH_OUT.\n",
                                     50);
    bench_header(stdout, "sap", &a);
    for (int v = 0; v < NVAR; v++)
        if (!cs_solver_is_available(variant_solver[v]))
            printf("# %s: not available in this build\n", cs_solver_name(variant_solver[v]));
    printf("# times: cs_step wall time (model + solver + certificate); solve_p50: the solver "
           "alone (stats.solve_ns); n: contacts, bodies for clutter\n");
    FILE *csv = bench_csv_open(&a, "sap");
    bench_sweep ex[BENCH_SWEEPS];
    bench_sweeps(ex, a.quick);
    findings fd = {0};
    bench_table_header();
    for (int e = 0; e < BENCH_SWEEPS; e++)
        run_experiment(&ex[e], &a, csv);
    run_streams(&a, csv, &fd);
    fclose(csv);
    bench_plot(&a, CONTACTD_BENCH_DIR "/sap.gp", "sap.csv", "sap.png");

    // Targets: reported, never asserted.
    printf("\n");
    if (!cs_solver_is_available(CS_SOLVER_SAP)) {
        printf("targets: sap not available in this build\n");
        return 0;
    }
    const bench_summary *c = fd.sap_clutter;
    if (c[2].samples) {
        bench_target("sap clutter-40 median, streamed warm", c[2].p50 / 1e3, 500, "us");
        bench_target("sap clutter-40 p99, streamed warm", c[2].p99 / 1e3, 1000, "us");
    }
    if (c[0].samples)
        bench_target("sap clutter-10 median, streamed warm", c[0].p50 / 1e3, 40, "us");
    if (fd.sap_peg16.samples)
        bench_target("sap peg-16 median, streamed warm", fd.sap_peg16.p50 / 1e3, 10, "us");
    for (int r = 0; r < 2; r++)
        if (fd.have_rest[r])
            bench_target(r == 0 ? "sap Newton iterations per tick, box at rest"
                                : "sap Newton iterations per tick, stack at rest",
                         fd.rest_iters[r], 1, "");
    return 0;
}
