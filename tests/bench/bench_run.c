/* SPDX-License-Identifier: MIT */
/* Pools and streams of solves (see bench_run.h). */
#include "bench_run.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

void *bench_alloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

double bench_cert_residual(const cs_certificate *c) {
    // A scale of 0 means an all-zero answer: its residuals are 0 too, so any tiny divisor works.
    const double f = fmax(c->impulse_scale, DBL_MIN), v = fmax(c->velocity_scale, DBL_MIN);
    double r = fmax(c->complementarity / (f * v), c->normal_velocity / v);
    r = fmax(r, fmax(c->cone, fmax(c->dissipation, c->momentum)) / f);
    return r;
}

void bench_cell_add(bench_cell *c, int iters, bool certified, double residual) {
    if (c->problems == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 32;
        int *v = realloc(c->iters, (size_t)c->cap * sizeof(int));
        if (!v) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        c->iters = v;
    }
    c->iters[c->problems++] = iters;
    c->certified += certified;
    c->residual = fmax(c->residual, residual);
}

void bench_cell_free(bench_cell *c) {
    bench_samples_free(&c->t);
    bench_samples_free(&c->solve);
    free(c->iters);
    *c = (bench_cell){0};
}

bench_row bench_cell_row(bench_cell *c, const char *bench, const char *variant, const char *scene,
                         int n) {
    bench_row r = {.bench = bench, .variant = variant, .scene = scene, .n = n,
                   .certified = c->certified, .problems = c->problems, .residual = c->residual};
    r.t = bench_summarize(&c->t);
    r.solve_p50_ns = bench_summarize(&c->solve).p50;
    r.iters_p50 = bench_median_int(c->iters, c->problems);
    for (int i = 0; i < c->problems; i++)
        r.iters_max = c->iters[i] > r.iters_max ? c->iters[i] : r.iters_max;
    return r;
}

static void record(bench_cell *c, const bench_variant *v, int64_t t) {
    bench_samples_push(&c->t, t);
    if (v->res.stats.solve_ns > 0)
        bench_samples_push(&c->solve, v->res.stats.solve_ns);
    c->spent_ns += t;
}

void bench_run_pool(bench_variant *var, int nvar, const t_gen_scene *g, int nprob, int per_point,
                    const bench_args *a, bench_cell *cells) {
    const int npoints = nprob / per_point;
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    // Warm-up and correctness: one cold solve of every problem by every variant, in order, until
    // a variant has spent 4 budgets at a point (then its later problems there are left out and
    // `problems` says how many it did).
    int64_t *warmup = bench_alloc((size_t)nvar * npoints * sizeof(int64_t));
    for (int i = 0; i < nprob; i++)
        for (int v = 0; v < nvar; v++) {
            const int ci = v * npoints + i / per_point;
            if (!var[v].available || warmup[ci] > 4 * budget)
                continue;
            warmup[ci] += bench_variant_step(&var[v], &g[i].s, false);
            const cs_result *r = &var[v].res;
            bench_cell_add(&cells[ci], r->stats.pivots + r->stats.iterations,
                           r->status == CS_CONVERGED, bench_cert_residual(&r->cert));
        }
    free(warmup);
    // Timed passes over the problems each variant did, at least one sample each.
    for (int rep = 0; rep < a->repeat; rep++)
        for (int i = 0; i < nprob; i++)
            for (int k = 0; k < nvar; k++) {
                const int v = (k + rep + i) % nvar;
                bench_cell *c = &cells[v * npoints + i / per_point];
                if (!var[v].available || i % per_point >= c->problems ||
                    (c->spent_ns > budget && c->t.n >= c->problems))
                    continue;
                record(c, &var[v], bench_variant_step(&var[v], &g[i].s, false));
            }
}

bool bench_run_stream(const t_gen_scene *init, bench_stream_kind kind, int ticks, cs_solver solver,
                      const bench_args *a, bench_stream_out *out) {
    if (!cs_solver_is_available(solver))
        return false;
    *out = (bench_stream_out){.n = init->s.nc};
    t_gen_scene *g = bench_alloc(2 * sizeof(*g)); // 0: warm, 1: cold
    t_gen_copy(&g[0], init);
    t_gen_copy(&g[1], init);
    // Closed loop: bodies may meet new neighbours; leave room (the generator's maximum).
    const cs_limits lim = {
        .max_bodies = init->s.nb,
        .max_contacts = kind == BENCH_STREAM_LOOP ? T_GEN_MAX_CONTACTS : init->s.nc,
        .max_dirs = init->s.friction_dirs ? init->s.friction_dirs : CS_DIRS_DEFAULT};
    bench_variant run[2];
    for (int k = 0; k < 2; k++)
        if (!bench_variant_init(&run[k], solver, &lim))
            exit(1);
    bench_cell *cell[2] = {&out->warm, &out->cold};
    const int64_t budget = (int64_t)(4 * a->budget_s * 1e9);
    int64_t spent = 0;
    for (int tick = 0; tick < ticks && spent <= budget; tick++) {
        for (int j = 0; j < 2; j++) {
            const int k = (tick + j) % 2; // alternate which run goes first
            if (kind == BENCH_STREAM_TURN)
                t_gen_peg_turn(&g[k], tick, 4 * ticks);
            const int64_t t = bench_variant_step(&run[k], &g[k].s, k == 0);
            spent += t;
            const cs_result *r = &run[k].res;
            record(cell[k], &run[k], t);
            bench_cell_add(cell[k], r->stats.pivots + r->stats.iterations,
                           r->status == CS_CONVERGED, bench_cert_residual(&r->cert));
            if (kind == BENCH_STREAM_LOOP)
                t_gen_clutter_advance(&g[k], r);
        }
        out->ticks++;
    }
    double tail = 0;
    const int from = out->ticks / 2;
    for (int i = from; i < out->ticks; i++)
        tail += out->warm.iters[i];
    out->warm_tail_iters_mean = out->ticks > from ? tail / (out->ticks - from) : 0;
    for (int k = 0; k < 2; k++)
        bench_variant_fini(&run[k]);
    free(g);
    return true;
}

double bench_stream_report(bench_stream_out *o, const char *scene, cs_solver solver, FILE *csv,
                           bench_summary *warm_t) {
    char variant[2][48];
    snprintf(variant[0], sizeof variant[0], "%s/cold", cs_solver_name(solver));
    snprintf(variant[1], sizeof variant[1], "%s/warm", cs_solver_name(solver));
    bench_row cold = bench_cell_row(&o->cold, "stream", variant[0], scene, o->n);
    bench_row warm = bench_cell_row(&o->warm, "stream", variant[1], scene, o->n);
    cold.ratio_p50 = 1;
    warm.ratio_p50 = cold.t.p50 > 0 ? (double)warm.t.p50 / (double)cold.t.p50 : 0;
    bench_table_row(&cold);
    bench_csv_row(csv, &cold);
    bench_table_row(&warm);
    bench_csv_row(csv, &warm);
    if (warm_t)
        *warm_t = warm.t;
    bench_cell_free(&o->cold);
    bench_cell_free(&o->warm);
    return cold.iters_p50 > 0 ? warm.iters_p50 / cold.iters_p50 : NAN;
}

/* A stack of `boxes` with no wrench on its top block (gravity alone), frictionless for
 * BENCH_STACK_REST_MU0. */
static void stack_at_rest(t_gen_scene *g, int boxes, double mu, int dirs, uint64_t seed,
                          bench_sweep_kind kind) {
    t_gen_stack(g, boxes, 0, kind == BENCH_STACK_REST_MU0 ? 0 : mu, dirs, seed);
    cs_body *top = &g->bodies[boxes - 1];
    memset(top->f, 0, sizeof top->f);
    memset(top->tau, 0, sizeof top->tau);
    memset(g->wrench, 0, sizeof g->wrench);
}

void bench_sweep_generate(const bench_sweep *e, int w, uint64_t seed, int dirs, t_gen_scene *g,
                          int *contacts, cs_limits *lim) {
    for (int i = 0; i < e->np * w; i++) {
        const int p = i / w;
        const uint64_t si = seed + 1000003ull * (uint64_t)e->kind + 1009ull * (uint64_t)p +
                            (uint64_t)(i % w);
        t_rng r = t_rng_seed(si);
        const double mu = t_rng_range(&r, 0.2, 0.3);
        switch (e->kind) {
        case BENCH_PEG: t_gen_peg(&g[i], e->arg[p], mu, dirs, si); break;
        case BENCH_STACK: t_gen_stack(&g[i], e->arg[p], 0, mu, dirs, si); break;
        case BENCH_CLUTTER: t_gen_clutter(&g[i], e->arg[p], si); break;
        case BENCH_STACK_REST:
        case BENCH_STACK_REST_MU0: stack_at_rest(&g[i], e->arg[p], mu, dirs, si, e->kind); break;
        }
        contacts[i] = g[i].s.nc;
        lim->max_bodies = g[i].s.nb > lim->max_bodies ? g[i].s.nb : lim->max_bodies;
        lim->max_contacts = g[i].s.nc > lim->max_contacts ? g[i].s.nc : lim->max_contacts;
    }
}

int bench_sweep_label(const bench_sweep *e, int p, const int *contacts, int w, char *buf,
                      size_t len) {
    if (e->kind == BENCH_CLUTTER)
        snprintf(buf, len, "clutter-%d(%.0f-contacts)", e->arg[p],
                 bench_median_int(contacts + p * w, w));
    else
        snprintf(buf, len, "%s-%d", e->name, e->arg[p]);
    return e->kind == BENCH_STACK || e->kind == BENCH_STACK_REST || e->kind == BENCH_STACK_REST_MU0
               ? 4 * e->arg[p]
               : e->arg[p];
}

void bench_sweeps(bench_sweep ex[BENCH_SWEEPS], bool quick) {
    ex[0] = (bench_sweep){.name = "peg", .kind = BENCH_PEG, .np = 4, .arg = {8, 16, 24, 32}};
    ex[1] = (bench_sweep){.name = "stack", .kind = BENCH_STACK, .np = 5, .arg = {1, 2, 3, 4, 5}};
    ex[2] = (bench_sweep){.name = "clutter", .kind = BENCH_CLUTTER, .np = 3, .arg = {10, 20, 40}};
    if (quick) {
        ex[0].np = 2;
        ex[1].np = 2;
        ex[2].np = 1;
    }
}
