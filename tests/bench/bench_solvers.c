/* SPDX-License-Identifier: MIT */
/* One comparison of every solver this build has, and of the peers, on the same problems:
 *   peg      a peg in a square hole, n = 8, 16, 24, 32 contacts
 *   stack    1..5 aligned blocks (n = 4 per block)
 *   clutter  10, 20 and 40 balls and boxes in a bin (n = bodies; the scene names the median
 *            contact count)
 *   stack-rest, stack-rest-mu0
 *            4 aligned blocks at rest under gravity alone, with friction and without: four
 *            coplanar contacts under each block, the exact ties of the targets
 * 20 instances per point (mu in [0.2, 0.3], random wrenches; clutter: random snapshots, mu 0.5),
 * d = 8, each problem solved cold. The solvers are every cs_solver this build implements
 * (cs_solver_is_available), each through cs_step (model + solver + certificate: what a client
 * gets); their timed solves rotate over the problems and the solvers (bench_run_pool), so the
 * noise of a shared machine falls on all alike. The peers, on the same problems:
 *   ode-dantzig-cfm0, -cfm1e-9   ODE 0.16's boxed Dantzig (dxSolveLCP) on the local form with
 *                                box friction, cfm 0 and 1e-9 (ode_peer.h)
 *   siconos-lexicolemke          lcp_lexicolemke on the LCP of Lloyd's eq. (6) (siconos_peer.h),
 *                                LCP order <= 400
 *   siconos-fc3d-nsn-ac          fc3d's Alart-Curnier Newton on the local form, tolerance 1e-10
 * where the local form is W = J M^-1 J^T (cs_model_delassus, 3 rows per contact) and
 * q = J v* - bias (bench_local.h), formed untimed; each peer's timed call is the solver alone
 * (Siconos' calls include their own copies and allocations). Per problem, every peer solves once
 * untimed (checked), then `repeat` timed solves rotate over the peers.
 * Then the FCLIB files of $CONTACTD_TEST_DATA/fclib (default ../shared/fclib) through fclib_io
 * (fclib_run.h): global-form files with SAP beside Siconos' gfc3d solvers (as bench_fclib),
 * local-form files (W, q, mu) with SAP, ncp, lemke-standard and dantzig (8-sided pyramid) and
 * Siconos' fc3d NSN.
 * Each row: median, p99, p99.9 and max time, iterations or pivots (pivots + iterations of
 * cs_stats; the peer's own count; ODE gives none: 0), the worst residual and how many answers
 * were certified: for cs_step rows the certificate's relative residual (bench_cert_residual) and
 * its status; for the ODE rows the residual of the boxed LCP it solves (ode_peer_residual), for
 * lexicolemke that of its LCP (siconos_peer_lcp_residual), for fc3d the library's certificate
 * of its answer (exact cone), each certified at 1e-6, the tolerance cs_step certifies at; for
 * FCLIB rows Siconos' gfc3d error <= 1e-6. uncertified = problems - certified.
 * Output: a table, <out>/solvers.csv (bench_common.h columns), <out>/solvers.png (solvers.gp),
 * for each point the fastest variant whose every answer was certified, and the targets on the
 * resting stacks, judged on the solver's own time (stats.solve_ns: Delassus matrix and solve,
 * as the peers are timed on theirs) and the certificate's residual. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_local.h"
#include "bench_run.h"
#include "fclib_run.h"
#include "ode_peer.h"
#include "siconos_peer.h"
#include "testlib.h"

#define INSTANCES 20
#define QUICK_INSTANCES 2
#define DIRS 8
/* Peers' answers are certified at the relative tolerance cs_step uses by default (types.h). */
#define PEER_TOL 1e-6
/* The settings: fc3d at tolerance 1e-10 on Siconos' error; ODE's cfm 0 and 1e-9. */
#define FC3D_TOL 1e-10
#define ODE_CFM 1e-9
/* Largest LCP order given to lexicolemke: a solve that cycles runs to its cap of n^2 + 4n + 8
 * pivots of O(n^2) each (on stack-5, n = 200, one took 4.5 s; on clutter-40, n ~ 600, one had
 * not ended after minutes). bench_lemke's largest is n = 320 (peg-32). */
#define LEMKE_PEER_MAX_ORDER 400

enum { PEER_ODE_CFM0, PEER_ODE_CFM, PEER_LEXICOLEMKE, PEER_FC3D, NPEER };
/* The row of ncp stopped at fc3d NSN's residual (ncp_to_peer), and how near counts as the same
 * residual: on the files whose stored W is asymmetric both solvers stop at a floor the asymmetry
 * sets (Rover1039: 1.82e-7 both, the last digits apart). */
#define NCP_TO_PEER "ncp-to-nsn-residual"
#define SAME_RESIDUAL 1.05
static const char *const peer_name[NPEER] = {"ode-dantzig-cfm0", "ode-dantzig-cfm1e-9",
                                             "siconos-lexicolemke", "siconos-fc3d-nsn-ac"};

static bool peer_is_built(int k) {
    return k == PEER_ODE_CFM0 || k == PEER_ODE_CFM ? ode_peer_is_built()
                                                   : siconos_peer_is_built();
}

/* What the peers work on for the current problem. */
typedef struct peer_data {
    bench_local *local; /* the local form (ODE, fc3d) */
    ode_peer *ode;
    double *r, *r0;     /* [3 max contacts] an answer in the contact frames; ODE's frictionless */
    double *mu0;        /* [max contacts] zeros */
    int N;              /* the LCP for lexicolemke: order, M [N x N], q, z [N] */
    double *M, *q, *z;
    int ode_failed[2];  /* problems on which ODE reported an internal error (cfm 0, cfm) */
    double ode_own[2];  /* ODE's worst residual on its own friction bounds (ode_peer_residual) */
} peer_data;

/* One solve of peer k on the current problem: returns its time; with check, scores the answer
 * into c (iterations, certified, residual). */
static int64_t peer_solve(int k, peer_data *P, bool check, bench_cell *c) {
    const bench_local *L = P->local;
    int iters = 0, info = 0;
    int64_t t0 = 0, t = 0;
    switch (k) {
    case PEER_ODE_CFM0:
    case PEER_ODE_CFM:
        ode_peer_load(P->ode, L->nc, L->W, L->q, L->mu, k == PEER_ODE_CFM ? ODE_CFM : 0);
        t0 = bench_now_ns();
        info = ode_peer_solve(P->ode, P->r);
        t = bench_now_ns() - t0;
        break;
    case PEER_LEXICOLEMKE:
        t0 = bench_now_ns();
        info = siconos_peer_lcp(P->N, P->M, P->q, P->z, &iters);
        t = bench_now_ns() - t0;
        break;
    case PEER_FC3D:
        t0 = bench_now_ns();
        info = siconos_peer_fc3d(L->nc, L->W, L->q, L->mu, FC3D_TOL, P->r, &iters);
        t = bench_now_ns() - t0;
        break;
    }
    if (!check)
        return t;
    double res;
    bool ok;
    switch (k) {
    case PEER_ODE_CFM0:
    case PEER_ODE_CFM: {
        res = ode_peer_residual(L->nc, L->W, L->q, L->mu, P->r, P->r);
        ok = info == 0 && res <= PEER_TOL;
        // The bounds ODE used: mu times the normals of the same solve without friction.
        const double cfm = k == PEER_ODE_CFM ? ODE_CFM : 0;
        ode_peer_load(P->ode, L->nc, L->W, L->q, P->mu0, cfm);
        ode_peer_solve(P->ode, P->r0);
        const double own = ode_peer_residual(L->nc, L->W, L->q, L->mu, P->r, P->r0);
        P->ode_own[k - PEER_ODE_CFM0] = fmax(P->ode_own[k - PEER_ODE_CFM0], own);
        P->ode_failed[k - PEER_ODE_CFM0] += info > 0;
        break;
    }
    case PEER_LEXICOLEMKE:
        res = siconos_peer_lcp_residual(P->N, P->M, P->q, P->z);
        ok = info == 0 && res <= PEER_TOL;
        break;
    default:
        res = bench_local_residual(P->local, P->r, PEER_TOL, &ok);
        ok = ok && info == 0;
        break;
    }
    bench_cell_add(c, iters, ok, res);
    return t;
}

/* Siconos prints from inside its solvers whatever its verbosity (NM_LU_factorize on every
 * singular Newton step: thousands of lines per problem); stderr goes to /dev/null while the peers
 * run (on) and comes back after (off). */
static void quiet(bool on) {
    static int saved = -1;
    fflush(stderr);
    if (on && saved < 0) {
        const int null = open("/dev/null", O_WRONLY);
        saved = dup(STDERR_FILENO);
        if (null >= 0 && saved >= 0)
            dup2(null, STDERR_FILENO);
        if (null >= 0)
            close(null);
    } else if (!on && saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
        saved = -1;
    }
}

/* The peers on the pool g (as bench_run_pool: cells [NPEER x npoints], a peer that has spent 4
 * budgets at a point in its checked solves leaves that point's later problems out, and repeats
 * stop once a budget is spent). Problem by problem: each problem's data is formed once. */
static void run_peers(const t_gen_scene *g, int nprob, int per_point, const cs_limits *lim,
                      const bench_args *a, peer_data *P, bench_cell *cells) {
    const int npoints = nprob / per_point;
    const int64_t budget = (int64_t)(a->budget_s * 1e9);
    quiet(true);
    int64_t *checked = bench_alloc((size_t)NPEER * npoints * sizeof(int64_t));
    for (int i = 0; i < nprob; i++) {
        const int p = i / per_point;
        bool did[NPEER];
        for (int k = 0; k < NPEER; k++)
            did[k] = peer_is_built(k) && checked[k * npoints + p] <= 4 * budget;
        const int d = g[i].s.friction_dirs ? g[i].s.friction_dirs : CS_DIRS_DEFAULT;
        did[PEER_LEXICOLEMKE] &= g[i].s.nc * (2 + d) <= LEMKE_PEER_MAX_ORDER;
        if (!bench_local_form(P->local, &g[i].s)) {
            quiet(false);
            fprintf(stderr, "cannot form the local problem of problem %d\n", i);
            exit(1);
        }
        P->N = 0;
        if (did[PEER_LEXICOLEMKE]) {
            P->N = siconos_peer_form(&g[i].s, lim, &P->M, &P->q);
            if (P->N < 0) {
                quiet(false);
                fprintf(stderr, "cannot form the LCP of problem %d\n", i);
                exit(1);
            }
            P->z = bench_alloc((size_t)P->N * sizeof(double));
        }
        for (int k = 0; k < NPEER; k++)
            if (did[k])
                checked[k * npoints + p] += peer_solve(k, P, true, &cells[k * npoints + p]);
        for (int rep = 0; rep < a->repeat; rep++)
            for (int j = 0; j < NPEER; j++) {
                const int k = (j + rep + i) % NPEER;
                bench_cell *c = &cells[k * npoints + p];
                if (!did[k] || (rep > 0 && c->spent_ns > budget))
                    continue;
                const int64_t t = peer_solve(k, P, false, c);
                bench_samples_push(&c->t, t);
                bench_samples_push(&c->solve, t);
                c->spent_ns += t;
            }
        if (did[PEER_LEXICOLEMKE]) {
            free(P->M);
            free(P->q);
            free(P->z);
        }
    }
    free(checked);
    quiet(false);
}

/* The fastest rows at a point whose every answer was certified: [0] on its own terms, [1] also
 * with the rigid law's residual <= PEER_TOL (which a frictionless solver meets only where
 * friction does no work, and SAP only up to its regularization). */
typedef struct best {
    const char *variant[2];
    int64_t p50[2];
} best;

static void consider(best *b, const bench_row *r) {
    if (r->problems == 0 || r->certified < r->problems)
        return;
    for (int k = 0; k < 2; k++)
        if ((k == 0 || r->residual <= PEER_TOL) && (!b->variant[k] || r->t.p50 < b->p50[k])) {
            b->variant[k] = r->variant;
            b->p50[k] = r->t.p50;
        }
}

static void emit(bench_row *r, int64_t base, FILE *csv, best *b) {
    r->ratio_p50 = base > 0 ? (double)r->t.p50 / (double)base : 0;
    bench_table_row(r);
    bench_csv_row(csv, r);
    consider(b, r);
}

/* Summary lines, printed after the table. */
static char summary[64][400];
static int nsummary;

static void add_summary(const char *scene, const best *b) {
    if (nsummary == (int)(sizeof summary / sizeof summary[0]))
        return;
    char col[2][64];
    for (int k = 0; k < 2; k++)
        if (b->variant[k])
            snprintf(col[k], sizeof col[k], "%-22s %9.2f", b->variant[k], b->p50[k] / 1e3);
        else
            snprintf(col[k], sizeof col[k], "%-22s %9s", "-", "-");
    snprintf(summary[nsummary++], sizeof summary[0], "%-44s %s   %s", scene, col[0], col[1]);
}

/* The targets met or missed, printed after the table. */
typedef struct target {
    char what[128];
    double measured, limit;
    const char *unit;
} target;
static target targets[32];
static int ntargets;

static void add_target(const char *variant, const char *scene, const char *what, double measured,
                       double limit, const char *unit) {
    if (ntargets == (int)(sizeof targets / sizeof targets[0]))
        return;
    target *t = &targets[ntargets++];
    snprintf(t->what, sizeof t->what, "%s %s %s", variant, scene, what);
    t->measured = measured, t->limit = limit, t->unit = unit;
}

/* The targets for dantzig and ncp on the resting stacks (cold solves, no regularization):
 * dantzig median <= 8 us, p99 <= 30 us, residual <= 1e-9, without friction <= 2 us; ncp median
 * <= 25 us, <= 8 iterations, residual <= 1e-10; every answer certified. */
static void rest_targets(const bench_sweep *e, const bench_row *r, bench_cell *c) {
    const bool dantzig = strcmp(r->variant, "dantzig") == 0, ncp = strcmp(r->variant, "ncp") == 0;
    if (!dantzig && !(ncp && e->kind == BENCH_STACK_REST))
        return;
    const bench_summary s = bench_summarize(&c->solve);
    if (e->kind == BENCH_STACK_REST_MU0) {
        add_target(r->variant, r->scene, "median", s.p50 / 1e3, 2, "us");
        return;
    }
    add_target(r->variant, r->scene, "median", s.p50 / 1e3, dantzig ? 8 : 25, "us");
    if (dantzig)
        add_target(r->variant, r->scene, "p99", s.p99 / 1e3, 30, "us");
    else
        add_target(r->variant, r->scene, "iterations (max)", r->iters_max, 8, "");
    add_target(r->variant, r->scene, "residual", r->residual, dantzig ? 1e-9 : 1e-10, "");
    add_target(r->variant, r->scene, "uncertified", r->problems - r->certified, 0, "");
}

static void run_experiment(const bench_sweep *e, const bench_args *a, FILE *csv,
                           int ode_failed[2], int ode_problems[2], double ode_own[2]) {
    const int W = a->quick ? QUICK_INSTANCES : INSTANCES, np = e->np, nprob = np * W;
    t_gen_scene *g = bench_alloc((size_t)nprob * sizeof(*g));
    cs_limits lim = {.max_bodies = 1, .max_contacts = 1, .max_dirs = DIRS};
    int *contacts = bench_alloc((size_t)nprob * sizeof(int));
    bench_sweep_generate(e, W, 0x501e7e5ull, DIRS, g, contacts, &lim);
    // Every solver this build has, whatever the list holds.
    bench_variant var[CS_SOLVER_COUNT];
    int nvar = 0, base_var = -1;
    for (int s = 1; s < CS_SOLVER_COUNT; s++) {
        if (!cs_solver_is_available((cs_solver)s))
            continue;
        if (!bench_variant_init(&var[nvar], (cs_solver)s, &lim))
            exit(1);
        base_var = s == CS_SOLVER_LEMKE_STANDARD ? nvar : base_var;
        nvar++;
    }
    bench_cell *cells = bench_alloc((size_t)(nvar + NPEER) * np * sizeof(*cells));
    bench_run_pool(var, nvar, g, nprob, W, a, cells);
    peer_data P = {.local = bench_local_new(&lim), .ode = ode_peer_new(lim.max_contacts),
                   .r = bench_alloc(3 * (size_t)lim.max_contacts * sizeof(double)),
                   .r0 = bench_alloc(3 * (size_t)lim.max_contacts * sizeof(double)),
                   .mu0 = bench_alloc((size_t)lim.max_contacts * sizeof(double))};
    if (!P.local || (ode_peer_is_built() && !P.ode))
        exit(1);
    run_peers(g, nprob, W, &lim, a, &P, cells + nvar * np);
    for (int p = 0; p < np; p++) {
        char scene[48];
        const int n = bench_sweep_label(e, p, contacts, W, scene, sizeof scene);
        int64_t base = 0;
        best b = {0};
        bench_row rows[CS_SOLVER_COUNT + NPEER];
        for (int v = 0; v < nvar + NPEER; v++) {
            if (v >= nvar && !peer_is_built(v - nvar))
                continue;
            const char *name = v < nvar ? var[v].name : peer_name[v - nvar];
            rows[v] = bench_cell_row(&cells[v * np + p], e->name, name, scene, n);
            base = v == base_var ? rows[v].t.p50 : base;
        }
        for (int v = 0; v < nvar + NPEER; v++) {
            if (v >= nvar && !peer_is_built(v - nvar))
                continue;
            if (rows[v].problems > 0)
                emit(&rows[v], base, csv, &b);
            else
                printf("%-12s %-24s %-26s skipped: LCP order > %d\n", e->name, scene,
                       rows[v].variant, LEMKE_PEER_MAX_ORDER);
        }
        add_summary(scene, &b);
        if (e->kind == BENCH_STACK_REST || e->kind == BENCH_STACK_REST_MU0)
            for (int v = 0; v < nvar; v++)
                rest_targets(e, &rows[v], &cells[v * np + p]);
    }
    for (int k = 0; k < 2; k++) {
        ode_failed[k] += P.ode_failed[k];
        ode_own[k] = fmax(ode_own[k], P.ode_own[k]);
        for (int p = 0; p < np; p++)
            ode_problems[k] += cells[(nvar + PEER_ODE_CFM0 + k) * np + p].problems;
    }
    for (int k = 0; k < (nvar + NPEER) * np; k++)
        bench_cell_free(&cells[k]);
    free(cells);
    for (int v = 0; v < nvar; v++)
        bench_variant_fini(&var[v]);
    bench_local_free(P.local);
    ode_peer_free(P.ode);
    free(P.r);
    free(P.r0);
    free(P.mu0);
    free(contacts);
    free(g);
}

/* FCLIB global-form files: SAP (the one solver that takes the global form) beside Siconos'
 * gfc3d solvers. --quick: files with <= 10 contacts. */
/* Largest LCP (order nc (2 + 8)) lemke-standard is given on a local file: its matrix is dense
 * (3000: 72 MB). */
#define LEMKE_LOCAL_MAX 3000

/* ncp stopped where its answer first scores NSN's residual (fclib_run_ncp_to; within
 * SAME_RESIDUAL of it), a row of its own (left out of the fastest-variant summary: an answer only
 * as good as the peer's), and the target: its time at most 1/5 of NSN's. */
static void ncp_to_peer(const fclib_io_problem *p, const char *name, double peer_residual,
                        int64_t peer_p50, const bench_args *a, int64_t base, FILE *csv) {
    bench_cell c = {0};
    if (fclib_run_ncp_to(p, SAME_RESIDUAL * peer_residual, a, &c) == 0) {
        printf("%-12s %-24s %-26s no iteration cap reaches the residual %.1e\n", "fclib-local",
               name, NCP_TO_PEER, peer_residual);
        add_target("ncp", name, "time / NSN's, at NSN's residual", INFINITY, 0.2, "x");
        return;
    }
    bench_row r = bench_cell_row(&c, "fclib-local", NCP_TO_PEER, name, p->nc);
    best unused = {0};
    emit(&r, base, csv, &unused);
    add_target("ncp", name, "time / NSN's, at NSN's residual",
               (double)r.t.p50 / (double)peer_p50, 0.2, "x");
    bench_cell_free(&c);
}

static void run_fclib(const bench_args *a, FILE *csv) {
    char *files[FCLIB_RUN_MAX_FILES];
    const int nf = fclib_run_list(t_shared_path("fclib"), files, FCLIB_RUN_MAX_FILES);
    if (nf == 0)
        printf("# no FCLIB files under %s\n", t_shared_path("fclib"));
    for (int i = 0; i < nf; i++) {
        fclib_io_problem p;
        char err[512];
        const char *name = strrchr(files[i], '/') + 1;
        if (fclib_io_load(files[i], &p, err, sizeof err) != 0) {
            printf("%-12s %-24s skipped: %s\n", "fclib", name, err);
            free(files[i]);
            continue;
        }
        if (a->quick && p.nc > 10) {
            fclib_io_free(&p);
            free(files[i]);
            continue;
        }
        // SAP takes either form (a local file through the global form fclib_io builds from W),
        // ncp, lemke-standard and dantzig (both on the 8-sided pyramid) and Siconos' fc3d the
        // local form; lemke and lemke-structural work on the bodies, which a file does not have.
        const bool local = p.form == FCLIB_IO_LOCAL;
        const char *bench = local ? "fclib-local" : "fclib";
        int64_t base = 0;
        best b = {0};
        const cs_solver own[] = {CS_SOLVER_SAP, CS_SOLVER_NCP, CS_SOLVER_LEMKE_STANDARD,
                                 CS_SOLVER_DANTZIG};
        for (int k = 0; k < (local ? 4 : 1); k++) {
            if (!cs_solver_is_available(own[k]))
                continue;
            if (own[k] == CS_SOLVER_LEMKE_STANDARD && p.nc * 10 > LEMKE_LOCAL_MAX) {
                printf("%-12s %-24s %-26s not run: its dense LCP has order %d > %d\n", bench,
                       name, "lemke-standard", p.nc * 10, LEMKE_LOCAL_MAX);
                continue;
            }
            bench_cell c = {0};
            fclib_run_solver(own[k], &p, a, &c);
            bench_row r = bench_cell_row(&c, bench, cs_solver_name(own[k]), name, p.nc);
            base = base ? base : r.t.p50;
            emit(&r, base, csv, &b);
            bench_cell_free(&c);
        }
        if (local && siconos_peer_is_built()) {
            bench_cell c = {0};
            fclib_run_fc3d(&p, a, &c);
            bench_row r = bench_cell_row(&c, bench, peer_name[PEER_FC3D], name, p.nc);
            emit(&r, base, csv, &b);
            if (cs_solver_is_available(CS_SOLVER_NCP))
                ncp_to_peer(&p, name, c.residual, r.t.p50, a, base, csv);
            bench_cell_free(&c);
        }
        const bool peers = !local && siconos_peer_gfc3d_count() > 0 &&
                           p.nv <= FCLIB_RUN_PEER_MAX_DOFS;
        if (!local && siconos_peer_gfc3d_count() > 0 && !peers)
            printf("%-12s %-24s siconos peers skipped: %d dofs > %d (dense reformulation)\n",
                   "fclib", name, p.nv, FCLIB_RUN_PEER_MAX_DOFS);
        for (int k = 0; peers && k < siconos_peer_gfc3d_count(); k++) {
            bench_cell c = {0};
            fclib_run_gfc3d(k, &p, a, &c);
            bench_row r = bench_cell_row(&c, "fclib", siconos_peer_gfc3d_name(k), name, p.nc);
            emit(&r, base, csv, &b);
            bench_cell_free(&c);
        }
        add_summary(name, &b);
        fclib_io_free(&p);
        free(files[i]);
    }
}

int main(int argc, char **argv) {
    const char *cases = bench_take_cases(&argc, argv, "peg,stack,clutter,rest,fclib");
    const bench_args a = bench_parse(argc, argv,
                                     "Every solver and the ODE and Siconos peers on pegs, stacks, "
                                     "clutter and FCLIB files; writes solvers.csv and "
                                     "solvers.png to --out or $CONTACTD_BENCH_OUT.\n"
                                     "--cases LIST: the parts to run, comma-separated (default: "
                                     "peg,stack,clutter,rest,fclib; rest: the resting stacks "
                                     "and the targets on them).\n",
                                     20);
    bench_header(stdout, "solvers", &a);
    for (int s = 1; s < CS_SOLVER_COUNT; s++)
        printf("# solver %s: %s\n", cs_solver_name((cs_solver)s),
               cs_solver_is_available((cs_solver)s) ? "available" : "not in this build");
    printf("# peers ode-dantzig-*: %s\n",
           ode_peer_is_built() ? "built (dxSolveLCP of libode 0.16, box friction; no pivot "
                                 "count: iters 0)"
                               : "not built (libode-dev not found)");
    printf("# peers siconos-*: %s\n",
           siconos_peer_is_built() ? "built (lexicolemke on Lloyd's LCP, fc3d NSN-AC at 1e-10, "
                                     "gfc3d on FCLIB at 1e-6)"
                                   : "not built (libsiconos-numerics-dev not found)");
    printf("# times: cs_step wall time for solvers (model + solver + certificate); the solver "
           "call alone for peers (problem forming untimed) and FCLIB rows; n: contacts, bodies "
           "for clutter; residual and certified: see bench_solvers.c\n");
    FILE *csv = bench_csv_open(&a, "solvers");
    bench_sweep ex[BENCH_SWEEPS];
    bench_sweeps(ex, a.quick);
    int ode_failed[2] = {0}, ode_problems[2] = {0};
    double ode_own[2] = {0};
    bench_table_header();
    for (int e = 0; e < BENCH_SWEEPS; e++)
        if (bench_listed(cases, ex[e].name))
            run_experiment(&ex[e], &a, csv, ode_failed, ode_problems, ode_own);
    const bench_sweep rest[] = {
        {.name = "stack-rest", .kind = BENCH_STACK_REST, .np = 1, .arg = {4}},
        {.name = "stack-rest-mu0", .kind = BENCH_STACK_REST_MU0, .np = 1, .arg = {4}}};
    for (int e = 0; e < 2 && bench_listed(cases, "rest"); e++)
        run_experiment(&rest[e], &a, csv, ode_failed, ode_problems, ode_own);
    if (bench_listed(cases, "fclib"))
        run_fclib(&a, csv);
    fclose(csv);
    bench_plot(&a, CONTACTD_BENCH_DIR "/solvers.gp", "solvers.csv", "solvers.png");

    printf("\n# fastest variant (median us) with every answer certified; and with, also, the "
           "rigid law's residual <= %g\n", PEER_TOL);
    for (int i = 0; i < nsummary; i++)
        printf("%s\n", summary[i]);
    if (ode_peer_is_built())
        for (int k = 0; k < 2; k++)
            printf("# %s: LCP internal error on %d of %d problems; worst residual on the "
                   "friction bounds ODE used (mu x its frictionless normals): %.2g\n",
                   peer_name[PEER_ODE_CFM0 + k], ode_failed[k], ode_problems[k], ode_own[k]);
    printf("\n# targets: on the resting stacks the solver's own time (stats.solve_ns); on FCLIB "
           "local files ncp's median time to fc3d NSN's residual over NSN's median\n");
    for (int i = 0; i < ntargets; i++)
        bench_target(targets[i].what, targets[i].measured, targets[i].limit, targets[i].unit);
    return 0;
}
