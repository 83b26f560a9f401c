/* SPDX-License-Identifier: MIT */
/* Shared benchmark machinery (see bench_common.h). */
#include "bench_common.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* From BLIS (blis.h is ~40k lines that warn at warning_level=3; this is the one call). */
char *bli_info_get_version_str(void);

#ifndef CONTACTD_BUILDTYPE
#define CONTACTD_BUILDTYPE "unknown"
#endif

static void usage_exit(const char *prog, const char *usage) {
    fprintf(stderr,
            "usage: %s [--quick] [--repeat N] [--budget SECONDS] [--out DIR] [--gnuplot PATH]"
            " [--fifo]\n%s",
            prog, usage);
    exit(2);
}

/* mkdir -p for one level below an existing parent (the meson build dir or cwd). */
static void make_dir(const char *dir) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
        exit(1);
    }
}

bool bench_listed(const char *list, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

const char *bench_take_cases(int *argc, char **argv, const char *known) {
    const char *cases = known;
    int k = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--cases") && i + 1 < *argc)
            cases = argv[++i];
        else
            argv[k++] = argv[i];
    }
    argv[k] = NULL;
    *argc = k;
    // Every name listed is known and listed once: count both ways.
    int listed = 1, named = 0;
    for (const char *p = strchr(cases, ','); p; p = strchr(p + 1, ','))
        listed++;
    for (const char *p = known; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        const size_t n = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        named += bench_listed(cases, name);
    }
    if (!*cases || named != listed) {
        fprintf(stderr, "%s: --cases %s: each name must be one of %s, listed once\n", argv[0],
                cases, known);
        exit(2);
    }
    return cases;
}

bench_args bench_parse(int argc, char **argv, const char *usage, int default_repeat) {
    bench_args a = {.repeat = default_repeat, .budget_s = 4.0,
                    .out_dir = getenv("CONTACTD_BENCH_OUT")};
    bool repeat_set = false, budget_set = false;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const bool has_value = i + 1 < argc;
        if (strcmp(s, "--quick") == 0) {
            a.quick = true;
        } else if (strcmp(s, "--fifo") == 0) {
            a.fifo = true;
        } else if (strcmp(s, "--repeat") == 0 && has_value) {
            a.repeat = atoi(argv[++i]);
            repeat_set = true;
        } else if (strcmp(s, "--budget") == 0 && has_value) {
            a.budget_s = atof(argv[++i]);
            budget_set = true;
        } else if (strcmp(s, "--out") == 0 && has_value) {
            a.out_dir = argv[++i];
        } else if (strcmp(s, "--gnuplot") == 0 && has_value) {
            a.gnuplot = argv[++i];
        } else {
            usage_exit(argv[0], usage);
        }
    }
    if (a.quick && !repeat_set)
        a.repeat = 2;
    if (a.quick && !budget_set)
        a.budget_s = 0.5;
    if (a.repeat < 1 || !(a.budget_s > 0))
        usage_exit(argv[0], usage);
    if (!a.out_dir || !*a.out_dir)
        a.out_dir = "bench-out";
    if (!a.gnuplot && system("command -v gnuplot >/dev/null 2>&1") == 0)
        a.gnuplot = "gnuplot";
    make_dir(a.out_dir);
    return a;
}

static void cpu_name(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *c = strchr(line, ':');
            if (c) {
                snprintf(buf, len, "%s", c + 2);
                buf[strcspn(buf, "\n")] = 0;
            }
            break;
        }
    }
    fclose(f);
}

void bench_header(FILE *out, const char *bench, const bench_args *a) {
    if (a->fifo) {
        const struct sched_param sp = {.sched_priority = 10};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            fprintf(out, "# SCHED_FIFO refused (%s), continuing at normal priority\n",
                    strerror(errno));
    }
    char cpu[256];
    cpu_name(cpu, sizeof cpu);
    struct sched_param sp;
    const int pol = sched_getscheduler(0);
    sched_getparam(0, &sp);
    const char *pname = pol == SCHED_FIFO ? "SCHED_FIFO" : pol == SCHED_RR ? "SCHED_RR"
                                                         : "SCHED_OTHER";
    // Which shared object answers dgemm_: BLIS unless something else was loaded first.
    Dl_info info = {0};
    void *sym = dlsym(RTLD_DEFAULT, "dgemm_");
    const char *blas = sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "none";
    fprintf(out,
            "# bench %s\n# cpu: %s (%ld online)\n# scheduling: %s priority %d\n"
            "# blis: %s; dgemm_ from %s\n# build: %s; %s run; repeat %d, budget %.1f s per point\n",
            bench, cpu, sysconf(_SC_NPROCESSORS_ONLN), pname, sp.sched_priority,
            bli_info_get_version_str(), blas, CONTACTD_BUILDTYPE, a->quick ? "quick" : "full",
            a->repeat, a->budget_s);
}

int64_t bench_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void bench_samples_push(bench_samples *s, int64_t x) {
    if (s->n == s->cap) {
        const int cap = s->cap ? 2 * s->cap : 256;
        int64_t *v = realloc(s->v, (size_t)cap * sizeof(*v));
        if (!v) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
}

void bench_samples_free(bench_samples *s) {
    free(s->v);
    *s = (bench_samples){0};
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least q of the samples at or below it. */
static int64_t rank(const bench_samples *s, double q) {
    int k = (int)ceil(q * s->n) - 1;
    if (k < 0)
        k = 0;
    return s->v[k < s->n ? k : s->n - 1];
}

bench_summary bench_summarize(bench_samples *s) {
    bench_summary r = {.samples = s->n};
    if (s->n == 0)
        return r;
    qsort(s->v, (size_t)s->n, sizeof(*s->v), cmp_i64);
    double sum = 0;
    for (int i = 0; i < s->n; i++)
        sum += (double)s->v[i];
    r.p50 = rank(s, 0.5);
    r.p99 = rank(s, 0.99);
    r.p999 = rank(s, 0.999);
    r.max = s->v[s->n - 1];
    r.mean = sum / s->n;
    return r;
}

bool bench_variant_init(bench_variant *v, cs_solver solver, const cs_limits *lim) {
    *v = (bench_variant){.name = cs_solver_name(solver), .solver = solver,
                         .available = cs_solver_is_available(solver)};
    if (!v->available)
        return true;
    v->ws = cs_workspace_new(lim);
    v->warm = cs_warmstart_new(lim);
    v->mem = malloc(cs_result_size(lim));
    if (!v->ws || !v->warm || !v->mem) {
        fprintf(stderr, "%s: no memory for limits (%d bodies, %d contacts, d %d)\n", v->name,
                lim->max_bodies, lim->max_contacts, lim->max_dirs);
        bench_variant_fini(v);
        return false;
    }
    cs_result_init(&v->res, v->mem, lim);
    return true;
}

void bench_variant_fini(bench_variant *v) {
    cs_workspace_free(v->ws);
    cs_warmstart_free(v->warm);
    free(v->mem);
    v->ws = NULL;
    v->warm = NULL;
    v->mem = NULL;
}

int64_t bench_variant_step(bench_variant *v, const cs_scene *s, bool warm) {
    // clock_ns makes cs_step report the solver's own time; no deadline, so it is read twice.
    const cs_options opt = {.solver = v->solver, .clock_ns = bench_now_ns};
    if (!warm)
        cs_warmstart_reset(v->warm);
    const int64_t t0 = bench_now_ns();
    cs_step(v->ws, s, &opt, v->warm, &v->res);
    return bench_now_ns() - t0;
}

FILE *bench_csv_open(const bench_args *a, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.csv", a->out_dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(f, "bench,variant,n,samples,p50_ns,p99_ns,p999_ns,max_ns,ratio_p50,"
               "scene,iters_p50,iters_max,solve_p50_ns,certified,problems,residual\n");
    printf("# csv: %s\n", path);
    return f;
}

void bench_csv_row(FILE *csv, const bench_row *r) {
    fprintf(csv, "%s,%s,%d,%d,%lld,%lld,%lld,%lld,%.4f,%s,%.1f,%d,%lld,%d,%d,%.3g\n", r->bench,
            r->variant, r->n, r->t.samples, (long long)r->t.p50, (long long)r->t.p99,
            (long long)r->t.p999, (long long)r->t.max, r->ratio_p50, r->scene, r->iters_p50,
            r->iters_max, (long long)r->solve_p50_ns, r->certified, r->problems, r->residual);
    fflush(csv);
}

void bench_table_header(void) {
    printf("%-12s %-24s %-26s %3s %7s %10s %10s %10s %10s %7s %8s %6s %10s %9s %8s\n", "bench",
           "scene", "variant", "n", "samples", "p50_us", "p99_us", "p99.9_us", "max_us",
           "ratio", "iter_p50", "i_max", "solve_p50", "certified", "residual");
}

void bench_table_row(const bench_row *r) {
    char cert[32];
    snprintf(cert, sizeof cert, "%d/%d", r->certified, r->problems);
    printf("%-12s %-24s %-26s %3d %7d %10.2f %10.2f %10.2f %10.2f %7.3f %8.1f %6d %10.2f %9s "
           "%8.1e\n",
           r->bench, r->scene, r->variant, r->n, r->t.samples, r->t.p50 / 1e3, r->t.p99 / 1e3,
           r->t.p999 / 1e3, r->t.max / 1e3, r->ratio_p50, r->iters_p50, r->iters_max,
           r->solve_p50_ns / 1e3, cert, r->residual);
    fflush(stdout);
}

static int cmp_int(const void *a, const void *b) {
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

double bench_median_int(const int *v, int n) {
    if (n == 0)
        return 0;
    int *c = malloc((size_t)n * sizeof(*c));
    if (!c) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(c, v, (size_t)n * sizeof(*c));
    qsort(c, (size_t)n, sizeof(*c), cmp_int);
    const double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

void bench_plot(const bench_args *a, const char *script, const char *csv_name,
                const char *png_name) {
    if (!a->gnuplot) {
        printf("# plot: no gnuplot given (--gnuplot), no %s\n", png_name);
        return;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' -e \"csv='%s/%s'; png='%s/%s'\" '%s'", a->gnuplot,
             a->out_dir, csv_name, a->out_dir, png_name, script);
    const int rc = system(cmd);
    if (rc == 0)
        printf("# plot: %s/%s\n", a->out_dir, png_name);
    else
        printf("# plot: gnuplot failed (status %d): %s\n", rc, cmd);
}

bool bench_target(const char *what, double measured, double limit, const char *unit) {
    const bool met = measured <= limit;
    // Residuals are tiny: in exponent form, where three decimals would print 0.
    const bool tiny = measured != 0 && fabs(measured) < 1e-3;
    printf(tiny ? "target: %-46s %10.2e %-3s (<= %g): %s\n"
                : "target: %-46s %10.3f %-3s (<= %g): %s\n",
           what, measured, unit, limit, met ? "met" : "MISSED");
    return met;
}
