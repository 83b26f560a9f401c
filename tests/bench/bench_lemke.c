/* SPDX-License-Identifier: MIT */
/* Lloyd 2005 section VII, reproduced: the three Lemke variants (lemke-standard, the baseline;
 * lemke-structural; lemke, the reduced one) on
 *   peg        a peg in a square hole, n = 8..32 contacts         (Lloyd Figs. 4-5)
 *   single     ten single-body situations with 1..16 contacts     (Figs. 6-7)
 *   stack      ten stacks of 1..5 blocks with 4..32 contacts      (Figs. 9-10)
 * and, beyond the paper, the tail on near-degenerate contacts:
 *   round-peg  a round peg in a round hole, n = 8..32 contacts around its rims, 60 wrenches
 * d = 8, mu drawn in [0.2, 0.3] per problem, 20 random wrenches per point, each problem solved
 * cold through cs_step `repeat` times (what a client gets: model, solver, certificate). Timed
 * solves rotate over all problems of an experiment and over the variants, so the noise of a
 * shared machine falls on every variant alike; a variant that spends its budget at a point stops
 * repeating there (its sample count says so). The same LCPs, formed by cs_lemke_contact_lcp(),
 * go to Siconos' lexicolemke when the benchmark is built with it, which is counted as solved
 * only when its answer passes an LCP residual check.
 * Then warm start: a peg under a slowly turning wrench and a box pushed across a plane (closed
 * loop: the box moves with the returned velocities), each step warm (the session's warm start
 * carried over) and cold (reset before every step), pivots and time per tick.
 * Output: a table, <out>/lemke.csv (bench_common.h), <out>/lemke.png (lemke.gp). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "siconos_peer.h"
#include "testlib.h"

#define WRENCHES 20
#define QUICK_WRENCHES 2
#define ROUND_WRENCHES 60 /* the sample: p99 and max over 60 random scenes */
#define DIRS 8
#define MAX_POINTS 16

/* The variants, baseline first (MuJoCo's Variant). */
enum { STANDARD, STRUCTURAL, REDUCED, NVAR };
static const cs_solver variant_solver[NVAR] = {CS_SOLVER_LEMKE_STANDARD,
                                               CS_SOLVER_LEMKE_STRUCTURAL, CS_SOLVER_LEMKE};

typedef enum { EXP_PEG, EXP_SINGLE, EXP_STACK, EXP_ROUND_PEG, NEXP } experiment_kind;

/* One point of a figure: generator arguments and the contact count it gives. */
typedef struct point {
    int a, b;
    int n;
    char scene[32];
} point;

typedef struct experiment {
    const char *name;
    experiment_kind kind;
    int wrenches; /* problems per point */
    int np;
    point pts[MAX_POINTS];
} experiment;

/* Lloyd's ten stacks: (blocks, variant) with n = 4..32 (scene_gen.h: bit i - 1 turns block i). */
static const int stacks[10][2] = {{1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 3},
                                  {4, 0}, {4, 5}, {5, 0}, {5, 5}, {5, 7}};

static void add_point(experiment *e, int a, int b, int n, const char *scene) {
    point *p = &e->pts[e->np++];
    *p = (point){.a = a, .b = b, .n = n};
    snprintf(p->scene, sizeof p->scene, "%s", scene);
}

static void experiments_init(experiment ex[NEXP], bool quick) {
    char name[32];
    const int w = quick ? QUICK_WRENCHES : WRENCHES;
    ex[0] = (experiment){.name = "peg", .kind = EXP_PEG, .wrenches = w};
    for (int n = 8; n <= (quick ? 16 : 32); n += 8) {
        snprintf(name, sizeof name, "peg-%d", n);
        add_point(&ex[0], n, 0, n, name);
    }
    ex[1] = (experiment){.name = "single", .kind = EXP_SINGLE, .wrenches = w};
    for (int k = 0; k < T_GEN_SINGLE_KINDS; k += quick ? 3 : 1)
        add_point(&ex[1], k, 0, t_gen_single_contacts(k), t_gen_single_name(k));
    ex[2] = (experiment){.name = "stack", .kind = EXP_STACK, .wrenches = w};
    for (int i = 0; i < (quick ? 3 : 10); i++) {
        int n = 4;
        for (int j = 1; j < stacks[i][0]; j++)
            n += (stacks[i][1] >> (j - 1)) & 1 ? 8 : 4;
        snprintf(name, sizeof name, "stack-%dx%d", stacks[i][0], stacks[i][1]);
        add_point(&ex[2], stacks[i][0], stacks[i][1], n, name);
    }
    ex[3] = (experiment){.name = "round-peg", .kind = EXP_ROUND_PEG,
                         .wrenches = quick ? QUICK_WRENCHES : ROUND_WRENCHES};
    for (int n = quick ? 16 : 8; n <= (quick ? 16 : 32); n += 8) {
        snprintf(name, sizeof name, "round-peg-%d", n);
        add_point(&ex[3], n, 0, n, name);
    }
}

/* Problem w of point p: its own seed, mu in [0.2, 0.3] (Lloyd), a random wrench. */
static void generate(const experiment *e, int p, int w, t_gen_scene *g) {
    const uint64_t seed = 0x10d2005ull + 1000003ull * (uint64_t)e->kind + 1009ull * (uint64_t)p +
                          (uint64_t)w;
    t_rng r = t_rng_seed(seed);
    const double mu = t_rng_range(&r, 0.2, 0.3);
    const point *pt = &e->pts[p];
    switch (e->kind) {
    case EXP_PEG: t_gen_peg(g, pt->a, mu, DIRS, seed); break;
    case EXP_SINGLE: t_gen_single(g, pt->a, mu, DIRS, seed); break;
    case EXP_STACK: t_gen_stack(g, pt->a, pt->b, mu, DIRS, seed); break;
    case EXP_ROUND_PEG: t_gen_round_peg(g, pt->a, mu, DIRS, seed); break;
    case NEXP: break;
    }
}

/* Numbers the targets are judged on. */
typedef struct findings {
    bench_summary reduced_peg[4]; /* n = 8, 16, 24, 32 */
    int64_t reduced_peg_solve[4]; /* the same, solver alone (stats.solve_ns), median */
    bench_summary reduced_round[4]; /* lemke on round pegs, n = 8, 16, 24, 32 */
    int certified[NVAR], problems[NVAR];
    double warm_ratio[2];         /* lemke: warm / cold median pivots, per stream */
    bool have_warm[2];
} findings;

/* The Siconos peer on the pool's LCPs, formed once per problem (untimed): every problem once
 * (timed and checked: a peer that cycles to the pivot cap can take seconds), then repeats while
 * the point's budget lasts. cells: [npoints]. */
static void run_peer(const t_gen_scene *g, int nprob, int per_point, const cs_limits *lim,
                     const bench_args *a, bench_cell *cells) {
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    for (int i = 0; i < nprob; i++) {
        double *M, *q;
        const int N = siconos_peer_form(&g[i].s, lim, &M, &q);
        if (N < 0) {
            fprintf(stderr, "cannot form the LCP of problem %d\n", i);
            exit(1);
        }
        double *z = bench_alloc((size_t)N * sizeof(double));
        bench_cell *c = &cells[i / per_point];
        for (int rep = 0; rep < a->repeat && (rep == 0 || c->spent_ns <= budget); rep++) {
            int piv = 0;
            const int64_t t0 = bench_now_ns();
            const int info = siconos_peer_lcp(N, M, q, z, &piv);
            const int64_t t = bench_now_ns() - t0;
            bench_samples_push(&c->t, t);
            bench_samples_push(&c->solve, t);
            c->spent_ns += t;
            if (rep == 0) {
                const double res = siconos_peer_lcp_residual(N, M, q, z);
                bench_cell_add(c, piv, info == 0 && res <= 1e-9, res);
            }
        }
        free(z);
        free(M);
        free(q);
    }
}

static void run_experiment(const experiment *e, const bench_args *a, FILE *csv, findings *fd) {
    const int W = e->wrenches, np = e->np, nprob = np * W;
    t_gen_scene *g = bench_alloc((size_t)nprob * sizeof(*g));
    cs_limits lim = {.max_bodies = 1, .max_contacts = 1, .max_dirs = DIRS};
    for (int p = 0; p < np; p++)
        for (int w = 0; w < W; w++) {
            t_gen_scene *s = &g[p * W + w];
            generate(e, p, w, s);
            lim.max_bodies = s->s.nb > lim.max_bodies ? s->s.nb : lim.max_bodies;
            lim.max_contacts = s->s.nc > lim.max_contacts ? s->s.nc : lim.max_contacts;
        }
    bench_variant var[NVAR];
    for (int v = 0; v < NVAR; v++)
        if (!bench_variant_init(&var[v], variant_solver[v], &lim))
            exit(1);
    // Cells (v, p) for the variants, then the peer's row of cells (v = NVAR).
    bench_cell *cells = bench_alloc((size_t)(NVAR + 1) * np * sizeof(*cells));
    bench_run_pool(var, NVAR, g, nprob, W, a, cells);
    if (siconos_peer_is_built())
        run_peer(g, nprob, W, &lim, a, cells + NVAR * np);
    // Rows: ratios against lemke-standard at the same point.
    for (int p = 0; p < np; p++) {
        const point *pt = &e->pts[p];
        int64_t base = 0;
        for (int v = 0; v <= NVAR; v++) {
            const char *name = v < NVAR ? var[v].name : "siconos-lexicolemke";
            if ((v < NVAR && !var[v].available) || (v == NVAR && !siconos_peer_is_built()))
                continue;
            bench_row r = bench_cell_row(&cells[v * np + p], e->name, name, pt->scene, pt->n);
            if (v == STANDARD)
                base = r.t.p50;
            r.ratio_p50 = base > 0 ? (double)r.t.p50 / (double)base : 0;
            bench_table_row(&r);
            bench_csv_row(csv, &r);
            if (v < NVAR) {
                fd->certified[v] += r.certified;
                fd->problems[v] += r.problems;
            }
            if (v == REDUCED && e->kind == EXP_PEG) {
                fd->reduced_peg[pt->n / 8 - 1] = r.t;
                fd->reduced_peg_solve[pt->n / 8 - 1] = r.solve_p50_ns;
            }
            if (v == REDUCED && e->kind == EXP_ROUND_PEG)
                fd->reduced_round[pt->n / 8 - 1] = r.t;
        }
    }
    for (int k = 0; k < (NVAR + 1) * np; k++)
        bench_cell_free(&cells[k]);
    free(cells);
    for (int v = 0; v < NVAR; v++)
        bench_variant_fini(&var[v]);
    free(g);
}

/* ---- warm start ------------------------------------------------------------------------- */

typedef enum { STREAM_PEG, STREAM_SLIDE } stream_kind;

/* One stream for one variant: the 16-contact peg under a slowly turning wrench (same scenes warm
 * and cold), or a box pushed across a plane in closed loop (each run moves its own box). */
static void run_stream(stream_kind kind, cs_solver solver, const bench_args *a, FILE *csv,
                       findings *fd) {
    const char *scene = kind == STREAM_PEG ? "peg16-turning" : "box-sliding";
    t_gen_scene *g = bench_alloc(sizeof(*g));
    if (kind == STREAM_PEG)
        t_gen_peg(g, 16, 0.25, DIRS, 16);
    else
        t_gen_slide(g, 0.3, DIRS, 17);
    bench_stream_out o;
    if (bench_run_stream(g, kind == STREAM_PEG ? BENCH_STREAM_TURN : BENCH_STREAM_LOOP,
                         a->quick ? 40 : 1000, solver, a, &o)) {
        const double ratio = bench_stream_report(&o, scene, solver, csv, NULL);
        if (solver == CS_SOLVER_LEMKE) {
            fd->warm_ratio[kind] = ratio;
            fd->have_warm[kind] = true;
        }
    } else {
        printf("%-12s %-24s %-26s not available in this build\n", "stream", scene,
               cs_solver_name(solver));
    }
    free(g);
}

int main(int argc, char **argv) {
    const char *cases = bench_take_cases(&argc, argv, "peg,single,stack,round-peg,stream");
    const bench_args a = bench_parse(argc, argv,
                                     "Lloyd 2005's experiments with the Lemke variants; writes "
                                     "lemke.csv and lemke.png to --out or $CONTACTD_BENCH_OUT.\n"
                                     "--cases LIST: the parts to run, comma-separated (default: "
                                     "peg,single,stack,round-peg,stream; round-peg: the tail "
                                     "targets alone, for A/B runs).\n",
                                     50);
    bench_header(stdout, "lemke", &a);
    for (int v = 0; v < NVAR; v++)
        if (!cs_solver_is_available(variant_solver[v]))
            printf("# %s: not available in this build\n", cs_solver_name(variant_solver[v]));
    printf("# peer siconos-lexicolemke: %s\n",
           siconos_peer_is_built()
               ? "built (lcp_lexicolemke alone on the formed LCP; forming not timed)"
               : "not built (libsiconos-numerics-dev not found)");
    printf("# times: cs_step wall time (model + solver + certificate); solve_p50: the solver "
           "alone (stats.solve_ns)\n");
    FILE *csv = bench_csv_open(&a, "lemke");
    experiment ex[NEXP];
    experiments_init(ex, a.quick);
    findings fd = {0};
    bench_table_header();
    for (int e = 0; e < NEXP; e++)
        if (bench_listed(cases, ex[e].name))
            run_experiment(&ex[e], &a, csv, &fd);
    for (int s = 0; s < 2 && bench_listed(cases, "stream"); s++)
        for (int v = 0; v < NVAR; v++)
            run_stream((stream_kind)s, variant_solver[v], &a, csv, &fd);
    fclose(csv);
    bench_plot(&a, CONTACTD_BENCH_DIR "/lemke.gp", "lemke.csv", "lemke.png");

    // Targets: reported, never asserted (timing on a shared machine is not a test).
    printf("\n");
    if (cs_solver_is_available(CS_SOLVER_LEMKE)) {
        const bench_summary *pg = fd.reduced_peg;
        const int64_t *ps = fd.reduced_peg_solve;
        if (pg[1].samples) {
            bench_target("lemke peg-16 median", pg[1].p50 / 1e3, 10, "us");
            bench_target("lemke peg-16 median, solver alone", ps[1] / 1e3, 10, "us");
            bench_target("lemke peg-16 p99", pg[1].p99 / 1e3, 30, "us");
        }
        if (pg[3].samples) {
            bench_target("lemke peg-32 median", pg[3].p50 / 1e3, 25, "us");
            bench_target("lemke peg-32 median, solver alone", ps[3] / 1e3, 25, "us");
            bench_target("lemke peg growth 8 -> 32 (median ratio)",
                         (double)pg[3].p50 / (double)pg[0].p50, 5, "x");
        }
        // The tail on round pegs: p99 and max over 60 scenes (--quick: 2) at 16 and 32 contacts.
        const bench_summary *rp = fd.reduced_round;
        for (int k = 1; k < 4; k += 2)
            if (rp[k].samples) {
                char what[64];
                snprintf(what, sizeof what, "lemke round-peg-%d p99", 8 * (k + 1));
                bench_target(what, rp[k].p99 / 1e3, k == 1 ? 50 : 100, "us");
                snprintf(what, sizeof what, "lemke round-peg-%d max", 8 * (k + 1));
                bench_target(what, rp[k].max / 1e3, 300, "us");
            }
        for (int s = 0; s < 2; s++) {
            const char *what = s == STREAM_PEG ? "lemke warm/cold median pivots, turning peg"
                                               : "lemke warm/cold median pivots, sliding box";
            // The ratio is NaN when the cold solves' median is no pivot (the crash start
            // answers): there is nothing for a warm start to halve.
            if (fd.have_warm[s] && isnan(fd.warm_ratio[s]))
                printf("target: %-46s cold median 0 pivots: nothing to halve\n", what);
            else if (fd.have_warm[s])
                bench_target(what, fd.warm_ratio[s], 0.5, "x");
        }
    }
    for (int v = 0; v < NVAR; v++) {
        if (!cs_solver_is_available(variant_solver[v]) || !fd.problems[v])
            continue;
        char what[64];
        snprintf(what, sizeof what, "%s uncertified answers (of %d)",
                 cs_solver_name(variant_solver[v]), fd.problems[v]);
        bench_target(what, fd.problems[v] - fd.certified[v], 0, "");
    }
    return 0;
}
