/* SPDX-License-Identifier: MIT */
/* ODE's boxed Dantzig solver as a peer of the benchmarks (see ode_peer.h). */
#include "ode_peer.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef CONTACTD_HAVE_ODE
#include <ode/common.h>
#include <ode/error.h>

/* ODE 0.16 exports its LCP solver and its memory arena only as C++ functions (src/lcp.h,
 * src/util.h); these are their declarations, bound to the mangled names libode.so exports
 * (`nm -D libode.so | grep SolveLCP`). pairsbx: [2 n] (b, x) per row; pairslh: [2 n] (lo, hi);
 * A: n rows of dPAD(n), lower triangle read. */
typedef struct ode_arena ode_arena;
void ode_solve_lcp(ode_arena *arena, unsigned n, double *A, double *pairsbx, double *outer_w,
                   unsigned nub, double *pairslh, int *findex)
    __asm__("_Z10dxSolveLCPP22dxWorldProcessMemArenajPdS1_S1_jS1_Pi");
size_t ode_solve_lcp_bytes(unsigned n, bool outer_w) __asm__("_Z27dxEstimateSolveLCPMemoryReqjb");
ode_arena *ode_arena_new(size_t bytes, const void *manager, const void *reserve)
    __asm__("_Z39dxAllocateTemporaryWorldProcessMemArenamPK27dxWorldProcessMemoryManager"
            "PK31dxWorldProcessMemoryReserveInfo");
void ode_arena_free(ode_arena *arena)
    __asm__("_Z35dxFreeTemporaryWorldProcessMemArenaP22dxWorldProcessMemArena");

/* The first members of ODE 0.16's dxWorldProcessMemArena (util.h): the allocation cursor and the
 * start of the block. Its ResetState() (cursor = start) is inline C++, so the peer rewinds the
 * arena itself before each solve, as ODE's stepper does. */
typedef struct ode_arena_head {
    void *cursor, *begin;
} ode_arena_head;

/* ODE's LCP reports failure only through its message handler (global). */
static int lcp_errors;
static void on_message(int errnum, const char *msg, va_list ap) {
    (void)msg, (void)ap;
    lcp_errors += errnum == d_ERR_LCP;
}

/* Row of ODE's problem for row k (0: n, 1: t1, 2: t2) of contact i: normals first. */
static int ode_row(int nc, int i, int k) {
    return k == 0 ? i : nc + 2 * i + k - 1;
}
#endif

struct ode_peer {
    int n, nskip; /* rows of the loaded problem; ODE's row stride dPAD(n) */
    double *A, *bx, *lh;
    int *findex;
#ifdef CONTACTD_HAVE_ODE
    ode_arena *arena;
#endif
};

bool ode_peer_is_built(void) {
#ifdef CONTACTD_HAVE_ODE
    return true;
#else
    return false;
#endif
}

ode_peer *ode_peer_new(int nc_max) {
#ifdef CONTACTD_HAVE_ODE
    const unsigned n = 3 * (unsigned)nc_max, nskip = dPAD(n);
    ode_peer *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->A = malloc((size_t)n * nskip * sizeof(double) + 1);
    o->bx = malloc(2 * (size_t)n * sizeof(double) + 1);
    o->lh = malloc(2 * (size_t)n * sizeof(double) + 1);
    o->findex = malloc((size_t)n * sizeof(int) + 1);
    o->arena = ode_arena_new(ode_solve_lcp_bytes(n, false), NULL, NULL);
    if (!o->A || !o->bx || !o->lh || !o->findex || !o->arena) {
        ode_peer_free(o);
        return NULL;
    }
    dSetMessageHandler(on_message);
    return o;
#else
    (void)nc_max;
    return NULL;
#endif
}

void ode_peer_free(ode_peer *o) {
    if (!o)
        return;
#ifdef CONTACTD_HAVE_ODE
    if (o->arena)
        ode_arena_free(o->arena);
#endif
    free(o->A);
    free(o->bx);
    free(o->lh);
    free(o->findex);
    free(o);
}

void ode_peer_load(ode_peer *o, int nc, const double *W, const double *q, const double *mu,
                   double cfm) {
#ifdef CONTACTD_HAVE_ODE
    const int n = 3 * nc;
    o->n = n;
    o->nskip = dPAD(n);
    for (int i = 0; i < nc; i++)
        for (int k = 0; k < 3; k++) {
            const int row = ode_row(nc, i, k), c = 3 * i + k;
            for (int j = 0; j < nc; j++)
                for (int l = 0; l < 3; l++)
                    o->A[(size_t)row * o->nskip + ode_row(nc, j, l)] =
                        W[(size_t)(3 * j + l) * n + c];
            o->A[(size_t)row * o->nskip + row] += cfm;
            o->bx[2 * row] = -q[c];
            o->bx[2 * row + 1] = 0;
            o->lh[2 * row] = k == 0 ? 0 : -mu[i];
            o->lh[2 * row + 1] = k == 0 ? dInfinity : mu[i];
            o->findex[row] = k == 0 ? -1 : i;
        }
#else
    (void)o, (void)nc, (void)W, (void)q, (void)mu, (void)cfm;
#endif
}

int ode_peer_solve(ode_peer *o, double *r) {
#ifdef CONTACTD_HAVE_ODE
    ode_arena_head *h = (ode_arena_head *)o->arena;
    h->cursor = h->begin;
    lcp_errors = 0;
    if (o->n > 0)
        ode_solve_lcp(o->arena, (unsigned)o->n, o->A, o->bx, NULL, 0, o->lh, o->findex);
    const int nc = o->n / 3;
    for (int i = 0; i < nc; i++)
        for (int k = 0; k < 3; k++)
            r[3 * i + k] = o->bx[2 * ode_row(nc, i, k) + 1];
    return lcp_errors;
#else
    (void)o, (void)r;
    return 0;
#endif
}

double ode_peer_residual(int nc, const double *W, const double *q, const double *mu,
                         const double *r, const double *bound_normals) {
    const int n = 3 * nc;
    double rmax = 0, qmax = 0, wmax = 0;
    for (int k = 0; k < n; k++) {
        if (!isfinite(r[k]))
            return INFINITY;
        rmax = fmax(rmax, fabs(r[k]));
        qmax = fmax(qmax, fabs(q[k]));
    }
    for (long k = 0; k < (long)n * n; k++)
        wmax = fmax(wmax, fabs(W[k]));
    // Tiny divisors only matter for an all-zero r or problem, whose terms are 0 too.
    const double s = fmax(qmax + n * wmax * rmax, DBL_MIN), rs = fmax(rmax, DBL_MIN);
    double res = 0;
    for (int c = 0; c < n; c++) {
        double w = q[c];
        for (int j = 0; j < n; j++)
            w += W[(size_t)j * n + c] * r[j];
        const double x = r[c], rn = bound_normals[c - c % 3];
        const double lo = c % 3 ? -mu[c / 3] * fabs(rn) : 0;
        const double hi = c % 3 ? mu[c / 3] * fabs(rn) : INFINITY;
        // Inside [lo, hi]; w > 0 only where x = lo, w < 0 only where x = hi.
        res = fmax(res, fmax(lo - x, x - hi) / rs);
        if (w > 0)
            res = fmax(res, (x - lo) * w / (s * rs));
        else
            res = fmax(res, hi < INFINITY ? (hi - x) * -w / (s * rs) : -w / s);
    }
    return res;
}
