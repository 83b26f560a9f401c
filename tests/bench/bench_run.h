/* SPDX-License-Identifier: MIT */
/* The two ways the benchmarks drive solvers through cs_step:
 *  - a pool: many independent problems (points x random instances), each solved cold by every
 *    variant once untimed (warm-up, certificate, iteration count), then in timed passes that
 *    rotate over the problems and the order of the variants, so a shared machine's noise falls
 *    on all variants alike; a variant that has spent its budget at a point stops repeating there
 *    once it has one sample per problem (a very slow one also stops trying new problems there
 *    after 4 budgets in the untimed pass);
 *  - a stream: one scene stepped tick after tick, warm (the session's warm start carried over)
 *    and cold (cs_warmstart_reset before every step) interleaved, either with a turning wrench
 *    (geometry fixed), in closed loop (bodies moved with the returned velocities, contacts
 *    regenerated) or standing still (the same scene again: a body at rest).
 * thread: the benchmark's main thread. Not rt code. */
#ifndef CONTACTD_TESTS_BENCH_RUN_H
#define CONTACTD_TESTS_BENCH_RUN_H
#include "bench_common.h"
#include "scene_gen.h"

/* What one variant gave at one point of a pool (or one run of a stream). */
typedef struct bench_cell {
    bench_samples t, solve; /* cs_step wall times; stats.solve_ns */
    int *iters;             /* [problems] pivots + iterations of each problem's first solve */
    int problems, cap;
    int certified;          /* first solves with status CS_CONVERGED (certificate passed) */
    double residual;        /* worst relative residual of the first solves */
    int64_t spent_ns;
} bench_cell;
/* Records one problem's first solve: iterations, whether it was certified, its residual. */
void bench_cell_add(bench_cell *c, int iters, bool certified, double residual);
/* The worst term of a certificate relative to its scale (complementarity over impulse x velocity
 * scale, normal velocity over velocity scale, cone, dissipation and momentum over impulse
 * scale): one number for the residual column. */
double bench_cert_residual(const cs_certificate *c);
void bench_cell_free(bench_cell *c);
/* The row of c (no ratio); sorts c's samples. */
bench_row bench_cell_row(bench_cell *c, const char *bench, const char *variant, const char *scene,
                         int n);

/* Solves the pool g[0 .. nprob) (point p = problems [p per_point, (p + 1) per_point)) with
 * every available variant; cells: [nvar x npoints], cell (v, p) at v * npoints + p, zeroed by
 * the caller. */
void bench_run_pool(bench_variant *var, int nvar, const t_gen_scene *g, int nprob, int per_point,
                    const bench_args *a, bench_cell *cells);

typedef enum bench_stream_kind {
    BENCH_STREAM_TURN,  /* t_gen_peg_turn before each tick (period 4 x ticks) */
    BENCH_STREAM_LOOP,  /* t_gen_clutter_advance after each tick */
    BENCH_STREAM_STILL, /* the same scene every tick */
} bench_stream_kind;

typedef struct bench_stream_out {
    bench_cell warm, cold;        /* per tick: time, iterations, certified */
    double warm_tail_iters_mean;  /* mean iterations per tick over the warm run's last half */
    int ticks;                    /* ticks run (fewer than asked when the budget ran out) */
    int n;                        /* contacts of the first tick */
} bench_stream_out;

/* Runs init as a stream of `ticks` ticks with solver, limits from the scene (+ slack for new
 * contacts in closed loop). The budget is 4 x a->budget_s for the whole stream. Returns false
 * when the solver is not available in this build (out untouched). Free out's cells after. */
bool bench_run_stream(const t_gen_scene *init, bench_stream_kind kind, int ticks, cs_solver solver,
                      const bench_args *a, bench_stream_out *out);

/* Prints and writes the cold and warm rows of a stream (bench "stream", variants
 * "<solver>/cold" and "<solver>/warm", the warm row's ratio against the cold one) and frees the
 * cells; warm_t (may be NULL) gets the warm row's times. Returns median warm iterations / median
 * cold iterations (NAN when the cold median is 0). */
double bench_stream_report(bench_stream_out *o, const char *scene, cs_solver solver, FILE *csv,
                           bench_summary *warm_t);

/* Calloc that exits on failure (benchmark set-up only). */
void *bench_alloc(size_t n);

/* A sweep of generated scenes (bench_sap, bench_solvers): at point p, pegs of arg[p] contacts,
 * stacks of arg[p] blocks, or clutter of arg[p] bodies; each point w random instances with mu in
 * [0.2, 0.3] and d = dirs. The stacks carry a random wrench on the top block ("pushed"); the
 * resting ones carry gravity alone (four coplanar contacts under each block: exact ties), with
 * friction or with mu = 0. */
typedef enum {
    BENCH_PEG,
    BENCH_STACK,
    BENCH_CLUTTER,
    BENCH_STACK_REST,
    BENCH_STACK_REST_MU0
} bench_sweep_kind;
#define BENCH_SWEEP_POINTS 8
typedef struct bench_sweep {
    const char *name;
    bench_sweep_kind kind;
    int np;
    int arg[BENCH_SWEEP_POINTS];
} bench_sweep;

/* The sweeps both benchmarks run: pegs of 8, 16, 24, 32 contacts, stacks of 1-5 blocks, clutter
 * of 10, 20, 40 bodies; --quick keeps the first points of each. */
#define BENCH_SWEEPS 3
void bench_sweeps(bench_sweep ex[BENCH_SWEEPS], bool quick);

/* The sweep's np * w problems into g [np w] (problem i: point i / w, instance i % w), each
 * seeded from seed and its place; contacts [np w]: their contact counts; lim grows to hold them
 * all. */
void bench_sweep_generate(const bench_sweep *e, int w, uint64_t seed, int dirs, t_gen_scene *g,
                          int *contacts, cs_limits *lim);
/* Point p's row label into buf ("peg-16", "clutter-20(35-contacts)": the median contact count
 * of its w instances); returns the row's n (contacts; 4 per block of a stack). */
int bench_sweep_label(const bench_sweep *e, int p, const int *contacts, int w, char *buf,
                      size_t len);

#endif /* CONTACTD_TESTS_BENCH_RUN_H */
