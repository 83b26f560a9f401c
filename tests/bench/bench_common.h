/* SPDX-License-Identifier: MIT */
/* What every benchmark of tests/bench shares: the command line (--quick, --repeat, --budget,
 * --out, --gnuplot, --fifo), the run header (CPU, scheduling policy obtained, BLIS version and
 * which library answers dgemm_, build type), CLOCK_MONOTONIC timing, order statistics of samples,
 * the solver variants compared through cs_step, the result table and CSV, and the gnuplot call.
 *
 * CSV columns (STYLE.md section 8, then this suite's own):
 *   bench,variant,n,samples,p50_ns,p99_ns,p999_ns,max_ns,ratio_p50,
 *   scene,iters_p50,iters_max,solve_p50_ns,certified,problems,residual
 * ratio_p50 is p50 over the baseline's p50 at the same (bench, n, scene): lemke-standard for
 * solver rows, the cold run of the same variant for warm-start rows, SAP for FCLIB rows. iters
 * are pivots for the Lemke variants and Newton (or the peer's) iterations otherwise; certified
 * counts answers that passed cs_step's certificate (for a peer: its residual check) out of
 * `problems` distinct problems (ticks for streams); residual is the worst relative residual over
 * them: for cs_step rows the rigid-contact certificate terms over their scales (what the
 * pivoting solvers are certified on; SAP is certified on its regularized problem instead, so
 * for SAP this shows how far its compliant answer is from the rigid law), the LCP residual for
 * the Lemke peer, Siconos' gfc3d error for FCLIB rows.
 * thread: the benchmark's main thread only. Not rt code: it allocates. */
#ifndef CONTACTD_TESTS_BENCH_COMMON_H
#define CONTACTD_TESTS_BENCH_COMMON_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "solver/contact.h"

/* Parsed command line. */
typedef struct bench_args {
    bool quick;          /* smoke run: few problems, few repeats */
    int repeat;          /* timed solves per problem and variant */
    double budget_s;     /* per (variant, point) time cap: slow variants stop repeating */
    const char *out_dir; /* CSV and PNG directory ($CONTACTD_BENCH_OUT, else ./bench-out) */
    const char *gnuplot; /* gnuplot executable (default: gnuplot on PATH), NULL: no plot */
    bool fifo;           /* ask for SCHED_FIFO (the header says what was obtained) */
} bench_args;

/* Parses argv; prints usage and exits 2 on an unknown option (a command-line error, not data).
 * Defaults: repeat as given, budget 4 s, quick: repeat 2 and budget 0.5 s. Creates out_dir. */
bench_args bench_parse(int argc, char **argv, const char *usage, int default_repeat);

/* Takes "--cases LIST" out of argv (*argc shrinks) for a benchmark whose parts can run alone:
 * LIST names some of `known` (both comma-separated), each once. Returns LIST, or known when the
 * option is absent; exits 2 (a command-line error) naming the known cases otherwise. */
const char *bench_take_cases(int *argc, char **argv, const char *known);
/* Whether the comma-separated list names name. */
bool bench_listed(const char *list, const char *name);

/* Prints the run header: benchmark name, CPU, scheduling policy and priority obtained, BLIS
 * version, the shared object dgemm_ resolves to, the build type, and whether the run is quick. */
void bench_header(FILE *out, const char *bench, const bench_args *a);

/* CLOCK_MONOTONIC now, ns; also the cs_options clock that gives stats.solve_ns. */
int64_t bench_now_ns(void);

/* A growable array of samples. */
typedef struct bench_samples {
    int64_t *v;
    int n, cap;
} bench_samples;
void bench_samples_push(bench_samples *s, int64_t x);
void bench_samples_free(bench_samples *s);

/* Order statistics (nearest rank) of a sample set; sorts s->v. All 0 when s is empty. */
typedef struct bench_summary {
    int samples;
    int64_t p50, p99, p999, max;
    double mean;
} bench_summary;
bench_summary bench_summarize(bench_samples *s);

/* One solver compared through cs_step, with its own session memory sized for lim. */
typedef struct bench_variant {
    const char *name;
    cs_solver solver;
    bool available;  /* cs_solver_is_available() in this build */
    cs_workspace *ws;
    cs_warmstart *warm;
    void *mem;
    cs_result res;
} bench_variant;
/* Sets up v for solver with limits lim (workspace, warm start, result); an unavailable solver
 * gets no memory. Returns false (and prints why) when memory is short. */
bool bench_variant_init(bench_variant *v, cs_solver solver, const cs_limits *lim);
void bench_variant_fini(bench_variant *v);
/* One timed cs_step of scene s (warm: carry v->warm; else cold, no warm start). Returns the
 * wall time of the call in ns; the answer is in v->res. */
int64_t bench_variant_step(bench_variant *v, const cs_scene *s, bool warm);

/* One row of results (the CSV columns above). */
typedef struct bench_row {
    const char *bench, *variant, *scene;
    int n;
    bench_summary t;     /* times of cs_step (or of the peer's call) */
    double ratio_p50;    /* 0 when there is no baseline */
    double iters_p50;
    int iters_max;
    int64_t solve_p50_ns;
    int certified, problems;
    double residual;
} bench_row;

/* Opens <out_dir>/<name>.csv and writes the header line. Exits 1 when it cannot (the smoke test
 * must see that). */
FILE *bench_csv_open(const bench_args *a, const char *name);
void bench_csv_row(FILE *csv, const bench_row *r);
/* Table line on stdout (times in us); bench_table_header() prints the column names. */
void bench_table_header(void);
void bench_table_row(const bench_row *r);

/* Median of n ints (copies; n may be 0: returns 0). */
double bench_median_int(const int *v, int n);

/* Runs gnuplot on script with csv and png as variables (gnuplot -e "csv='..'; png='..'").
 * Prints where the PNG went, or why there is none. */
void bench_plot(const bench_args *a, const char *script, const char *csv_name,
                const char *png_name);

/* Prints "target: what = measured (limit): met|MISSED" and returns whether met. */
bool bench_target(const char *what, double measured, double limit, const char *unit);

#endif /* CONTACTD_TESTS_BENCH_COMMON_H */
