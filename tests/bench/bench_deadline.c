/* SPDX-License-Identifier: MIT */
/* How far past its deadline each solver's step returns on the largest problems a session may
 * declare. The daemon gives a frame a deadline (its release plus the session's budget) and a
 * solver is to stop within 50 us of it with a labelled answer; this times that through cs_step,
 * as a worker calls it (model, solver, certificate, fallback; with the session's warm start,
 * which holds the time kept for what follows the solver), cold (that warm start reset), on
 *   grid-256    one cube on the floor, its bottom face sampled on a 16 x 16 grid
 *               (t_gen_grid): 256 contacts on one body, the default session limit, without
 *               friction (grid-256-mu0) and with mu 0.5 (768 rows)
 *   clutter-60  60 balls and boxes in a bin (t_gen_clutter), mu 0.5
 * For each solver and scene: T, the median time of 3 steps (capped at 100 ms); then `repeat`
 * steps, each with its deadline a random fraction (uniform in [0.05, 0.95]) of T after the call:
 * overrun = the step's return - its deadline. A step that returned before its deadline (it ran
 * faster than T) is counted as early, not sampled. After each step the benchmark sleeps as
 * long as the step took, as a worker idles between ticks (run with --fifo, a run that never
 * sleeps meets the kernel's real-time throttling: stalls of tens of ms).
 * Baseline of the same run (variant "floor"): a loop of multiply-adds that reads the same clock
 * through the same meter (deadline.h: one read per CS__METER_UNITS units of work), stopped by
 * the same kind of deadline: the overrun this host gives a perfectly metered stretch, its own
 * stalls included.
 * Output: a table; <out>/deadline.csv (bench_common.h columns: p50_ns .. max_ns the overrun,
 * ratio_p50 over the floor's p50, iters_p50 the early steps, iters_max T in us, certified the
 * steps whose status says they missed (deadline, fallback, no answer), problems the samples);
 * <out>/deadline.png (deadline.gp); and the target: each solver's p99 overrun <= 50 us (its max
 * beside the floor's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_common.h"
#include "scene_gen.h"
#include "solver/deadline.h"
#include "testlib.h"

#define DIRS 8
#define TARGET_US 50.0
#define MAX_TARGETS 32
/* The longest T measured: a step that would take longer is stopped there. */
#define T_CAP_NS 100000000

/* A target line, printed after the table. */
typedef struct target {
    char what[96];
    double p99_us;
} target;

/* A scene of the sweep. */
typedef struct scene_case {
    const char *name;
    t_gen_scene g;
} scene_case;

/* Sleeps as long as the step before took: a worker at real-time priority idles between its
 * ticks, and a run that never did would meet the kernel's real-time throttling (95 % of each
 * second), a stall of tens of ms in the middle of some step. */
static void idle_like_a_worker(int64_t busy_ns) {
    const struct timespec t = {.tv_sec = busy_ns / 1000000000, .tv_nsec = busy_ns % 1000000000};
    nanosleep(&t, NULL);
}

/* Overrun of a meter-read loop of multiply-adds (the floor) whose deadline is at ns after now. */
static int64_t floor_overrun(int64_t after) {
    const cs_options opt = {.clock_ns = bench_now_ns, .deadline_ns = bench_now_ns() + after};
    cs__meter m = cs__meter_start(&opt);
    volatile double sink;
    double x = 1.0;
    for (;;) {
        for (int k = 0; k < 64; k++)
            x = x * 0.999999 + 1e-9;
        if (cs__meter_add(&m, 64))
            break;
    }
    const int64_t end = bench_now_ns();
    sink = x;
    (void)sink;
    idle_like_a_worker(end - (opt.deadline_ns - after));
    return end - opt.deadline_ns;
}

/* One step of v on s with its deadline at ns after the call; *ret_over: return - deadline,
 * *ret_took: the step's time. */
static cs_status step_by(bench_variant *v, const cs_scene *s, int64_t after, int64_t *ret_over,
                         int64_t *ret_took) {
    cs_warmstart_reset(v->warm);
    const int64_t start = bench_now_ns();
    const cs_options opt = {.solver = v->solver, .clock_ns = bench_now_ns,
                            .deadline_ns = start + after};
    const cs_status st = cs_step(v->ws, s, &opt, v->warm, &v->res);
    const int64_t end = bench_now_ns();
    *ret_over = end - (start + after);
    *ret_took = end - start;
    idle_like_a_worker(end - start);
    return st;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Fills r's times from the overrun samples s (early: steps not sampled). */
static void fill_row(bench_row *r, bench_samples *s, int early, double base_p50) {
    r->t = bench_summarize(s);
    r->ratio_p50 = base_p50 > 0 ? (double)r->t.p50 / base_p50 : 0;
    r->iters_p50 = early;
    r->problems = r->t.samples;
}

int main(int argc, char **argv) {
    const bench_args a = bench_parse(argc, argv,
                                     "How far past its deadline each solver's step returns at a "
                                     "session's limits (256 contacts on one body, 60-body "
                                     "clutter), beside a perfectly metered loop; writes "
                                     "deadline.csv and deadline.png to --out or "
                                     "$CONTACTD_BENCH_OUT.\n",
                                     200);
    bench_header(stdout, "deadline", &a);
    printf("# overrun: step return - deadline, the deadline a random fraction of the step's own "
           "time T after the call; early: steps that returned before it; missed: steps whose "
           "status says they have no answer of their own (deadline, fallback, no answer)\n");
    static scene_case scenes[3] = {{.name = "grid-256-mu0"}, {.name = "grid-256"},
                                   {.name = "clutter-60"}};
    t_gen_grid(&scenes[0].g, 16, 0.0, DIRS, 1);
    t_gen_grid(&scenes[1].g, 16, 0.5, DIRS, 1);
    t_gen_clutter(&scenes[2].g, 60, 7);
    const int nscenes = a.quick ? 1 : 3;
    FILE *csv = bench_csv_open(&a, "deadline");
    printf("%-13s %-18s %5s %7s %9s %9s %9s %9s %9s %6s %8s\n", "scene", "variant", "n", "T_us",
           "p50_us", "p99_us", "p999_us", "max_us", "ratio", "early", "missed");
    t_rng rng = t_rng_seed(50);
    static target targets[MAX_TARGETS];
    int ntargets = 0;
    for (int c = 0; c < nscenes; c++) {
        const cs_scene *s = &scenes[c].g.s;
        // The floor, with deadlines spread over 0.05 .. 0.95 ms.
        bench_samples fs = {0};
        for (int k = 0; k < a.repeat; k++)
            bench_samples_push(&fs, floor_overrun((int64_t)(1e6 * t_rng_range(&rng, 0.05, 0.95))));
        bench_row fr = {.bench = "deadline", .variant = "floor", .scene = scenes[c].name,
                        .n = s->nc};
        fill_row(&fr, &fs, 0, 0);
        const double floor_p50 = (double)fr.t.p50, floor_max = (double)fr.t.max;
        fr.ratio_p50 = 1;
        bench_csv_row(csv, &fr);
        printf("%-13s %-18s %5d %7s %9.1f %9.1f %9.1f %9.1f %9.2f %6d %8s\n", fr.scene, fr.variant,
               fr.n, "-", fr.t.p50 / 1e3, fr.t.p99 / 1e3, fr.t.p999 / 1e3, fr.t.max / 1e3, 1.0, 0,
               "-");
        bench_samples_free(&fs);
        for (int sv = 1; sv < CS_SOLVER_COUNT; sv++) {
            const cs_limits lim = {.max_bodies = s->nb, .max_contacts = s->nc, .max_dirs = DIRS,
                                   .solvers = 1u << sv};
            bench_variant v;
            if (!cs_solver_is_available((cs_solver)sv) || !bench_variant_init(&v, sv, &lim))
                continue;
            // T: the median of three steps with a deadline T_CAP away (lemke-standard's step
            // of this grid takes 50 s).
            int64_t t[3], over, took;
            cs_status st = CS_CONVERGED;
            for (int k = 0; k < 3; k++)
                st = step_by(&v, s, T_CAP_NS, &over, &t[k]);
            if (st == CS_EINPUT || st == CS_ENOSPACE) {
                printf("%-13s %-18s %5d: refused (%s)\n", scenes[c].name, v.name, s->nc,
                       cs_status_name(st));
                bench_variant_fini(&v);
                continue;
            }
            qsort(t, 3, sizeof t[0], cmp_i64);
            const int64_t T = t[1];
            bench_samples os = {0};
            int early = 0, missed = 0;
            for (int k = 0; k < a.repeat; k++) {
                const int64_t after = (int64_t)(T * t_rng_range(&rng, 0.05, 0.95));
                st = step_by(&v, s, after > 0 ? after : 1, &over, &took);
                missed += st != CS_CONVERGED && st != CS_MAXITER;
                if (over < 0)
                    early++;
                else
                    bench_samples_push(&os, over);
            }
            bench_row r = {.bench = "deadline", .variant = v.name, .scene = scenes[c].name,
                           .n = s->nc, .iters_max = (int)(T / 1000), .certified = missed};
            fill_row(&r, &os, early, floor_p50);
            bench_csv_row(csv, &r);
            printf("%-13s %-18s %5d %7.0f %9.1f %9.1f %9.1f %9.1f %9.2f %6d %8d\n", r.scene,
                   r.variant, r.n, T / 1e3, r.t.p50 / 1e3, r.t.p99 / 1e3, r.t.p999 / 1e3,
                   r.t.max / 1e3, r.ratio_p50, early, missed);
            if (r.t.samples > 0 && ntargets < MAX_TARGETS) {
                target *tg = &targets[ntargets++];
                snprintf(tg->what, sizeof tg->what, "%s %s p99 overrun (max %.0f, floor max %.0f)",
                         v.name, scenes[c].name, r.t.max / 1e3, floor_max / 1e3);
                tg->p99_us = r.t.p99 / 1e3;
            }
            bench_samples_free(&os);
            bench_variant_fini(&v);
        }
    }
    fclose(csv);
    bench_plot(&a, CONTACTD_BENCH_DIR "/deadline.gp", "deadline.csv", "deadline.png");
    printf("\n# targets: a step returns within %.0f us of its deadline (p99; the max beside the "
           "floor's, in us)\n", TARGET_US);
    for (int i = 0; i < ntargets; i++)
        bench_target(targets[i].what, targets[i].p99_us, TARGET_US, "us");
    return 0;
}
