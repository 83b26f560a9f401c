/* SPDX-License-Identifier: MIT */
/* Internal view of the workspace: one aligned block per session, used as a mark/release stack
 * inside a solve (MuJoCo's arena). Every solver declares its need through a _size() function,
 * and cs_workspace_new() sizes for the solvers the limits declare, so a solve within the limits
 * by a declared solver can never run out. */
#ifndef CONTACTD_SOLVER_WORKSPACE_H
#define CONTACTD_SOLVER_WORKSPACE_H
#include <stddef.h>
#include <string.h>
#include "solver/contact.h"

/* Debug/test-build assertion for the RT path (compiled out with NDEBUG). */
#include <assert.h>
#define CS_ASSERT(x) assert(x)

#define CS__WS_ALIGN 64

/* Visible here so that the stack's operations below inline: a step makes about a hundred of
 * them (2-3 % of a small scene's step as calls). Only workspace.c makes and sizes one. */
struct cs_workspace {
    unsigned char *base; /* the stack: right after this struct, in the same block */
    size_t cap;
    size_t top;
    size_t peak;
    cs_limits lim;
};

/* Bytes one allocation of n bytes takes on the stack, alignment included. */
static inline size_t cs__ws_bytes(size_t n) {
    return (n + CS__WS_ALIGN - 1) & ~(size_t)(CS__WS_ALIGN - 1);
}

/* Current stack top, to hand back to cs__ws_release(). */
static inline size_t cs__ws_mark(const cs_workspace *ws) {
    return ws->top;
}

static inline void cs__ws_release(cs_workspace *ws, size_t mark) {
    CS_ASSERT(mark <= ws->top);
    ws->top = mark;
}

/* 64-byte aligned scratch of n bytes, uninitialised; NULL when the workspace is exhausted. */
static inline void *cs__ws_alloc(cs_workspace *ws, size_t n) {
    const size_t bytes = cs__ws_bytes(n);
    if (bytes > ws->cap - ws->top)
        return NULL;
    void *p = ws->base + ws->top;
    ws->top += bytes;
    if (ws->top > ws->peak)
        ws->peak = ws->top;
    return p;
}

/* The same, zero-filled. */
static inline void *cs__ws_zalloc(cs_workspace *ws, size_t n) {
    void *p = cs__ws_alloc(ws, n);
    if (p)
        memset(p, 0, n);
    return p;
}
/* Limits the workspace was sized for. */
const cs_limits *cs__ws_limits(const cs_workspace *ws);
/* High-water mark since the last cs__ws_reset_peak(), bytes. */
size_t cs__ws_peak(const cs_workspace *ws);
void cs__ws_reset_peak(cs_workspace *ws);

/* A solver's warm-up factorization (solvers.h): calls factor(n, A, b, scratch) on A = I [n x n]
 * column-major, b = 1 [n] and scratch_bytes of scratch in ws's free space, so BLIS and LAPACK
 * fill their buffers for order n at admission. Skipped below the order from which the Cholesky
 * kernels hand over to LAPACK (nothing to fill) and when ws has no room. thread: any (not rt). */
typedef void cs__ws_factor_fn(int n, double *A, double *b, void *scratch);
void cs__ws_warm_factor(cs_workspace *ws, int n, size_t scratch_bytes, cs__ws_factor_fn *factor);

#endif /* CONTACTD_SOLVER_WORKSPACE_H */
