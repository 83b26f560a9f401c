/* SPDX-License-Identifier: MIT */
/* The session workspace: the only allocation of libcontact. Its size is the sum of what the
 * model and the step declare for the session's limits plus the largest scratch of the
 * certificate and of each solver the session declared (ODE's estimator); inside a solve it is a
 * mark/release stack, so nothing is allocated per tick. The struct and the stack are one
 * 64-byte-aligned block, so cs_workspace_size() is exactly what cs_workspace_new() asks for. */
#include "solver/workspace.h"

#include <stdlib.h>
#include <string.h>

#include "solver/certify.h"
#include "solver/joints.h"
#include "solver/model.h"
#include "solver/solvers.h"
#include "solver/step.h"

/* Hard ceilings on limits, so the size arithmetic below cannot overflow. */
#define LIM_BODIES_MAX 4096
#define LIM_CONTACTS_MAX 8192
#define LIM_JOINTS_MAX 8192
#define LIM_DIRS_MAX 64

/* Limits within the ceilings, declaring only solvers this build has. */
static bool limits_ok(const cs_limits *lim) {
    return lim && lim->max_bodies >= 1 && lim->max_bodies <= LIM_BODIES_MAX &&
           lim->max_contacts >= 0 && lim->max_contacts <= LIM_CONTACTS_MAX &&
           lim->max_joints >= 0 && lim->max_joints <= LIM_JOINTS_MAX &&
           lim->max_dirs >= 0 && lim->max_dirs <= LIM_DIRS_MAX &&
           (lim->solvers & ~cs_solver_mask(true)) == 0;
}

/* Bytes of the stack for lim. The model (with its joints' reduction when lim has joints) and the
 * answer persist through a step; one solver runs at a time, then the certificate: the largest of
 * those follows. */
static size_t stack_size(const cs_limits *lim) {
    size_t scratch = cs_certify_size(lim);
    for (int s = 0; s < CS_SOLVER_COUNT; s++) {
        const size_t need =
            cs_limits_allow(lim, (cs_solver)s) ? cs__solver_row((cs_solver)s)->size(lim) : 0;
        scratch = need > scratch ? need : scratch;
    }
    return cs__ws_bytes(cs_model_size(lim) + cs__joints_size(lim) + cs_step_size(lim) + scratch);
}

size_t cs_workspace_size(const cs_limits *lim) {
    return limits_ok(lim) ? cs__ws_bytes(sizeof(cs_workspace)) + stack_size(lim) : 0;
}

cs_workspace *cs_workspace_new(const cs_limits *lim) {
    const size_t bytes = cs_workspace_size(lim);
    if (bytes == 0)
        return NULL;
    unsigned char *block = aligned_alloc(CS__WS_ALIGN, bytes);
    if (!block)
        return NULL;
    // Touch every page now so the first tick does not take page faults.
    memset(block, 0, bytes);
    cs_workspace *ws = (cs_workspace *)(void *)block;
    const size_t head = cs__ws_bytes(sizeof(*ws));
    *ws = (cs_workspace){.base = block + head, .cap = bytes - head, .lim = *lim};
    return ws;
}

void cs_workspace_free(cs_workspace *ws) {
    free(ws);
}

size_t cs_workspace_capacity(const cs_workspace *ws) {
    return ws->cap;
}

const cs_limits *cs__ws_limits(const cs_workspace *ws) {
    return &ws->lim;
}

size_t cs__ws_peak(const cs_workspace *ws) {
    return ws->peak;
}

void cs__ws_reset_peak(cs_workspace *ws) {
    ws->peak = ws->top;
}

/* LAPACK takes over from the in-house Cholesky kernels from this order on (linalg.c, sap_core.c);
 * below it no BLIS or LAPACK routine runs, so there is nothing to warm. */
#define WARM_LAPACK_MIN 384

void cs__ws_warm_factor(cs_workspace *ws, int n, size_t scratch_bytes, cs__ws_factor_fn *factor) {
    if (n < WARM_LAPACK_MIN)
        return;
    const size_t mark = cs__ws_mark(ws);
    double *A = cs__ws_zalloc(ws, (size_t)n * n * sizeof(double));
    double *b = cs__ws_alloc(ws, (size_t)n * sizeof(double));
    void *scratch = cs__ws_alloc(ws, scratch_bytes);
    if (A && b && scratch) {
        for (int i = 0; i < n; i++) {
            A[(size_t)i * n + i] = 1.0;
            b[i] = 1.0;
        }
        factor(n, A, b, scratch);
    }
    cs__ws_release(ws, mark);
}

void cs_workspace_warm_up(cs_workspace *ws) {
    // BLIS allocates its packing buffers, and LAPACK its blocks, on first use at a size: make
    // that use here, at the session's largest orders, so no solve on a worker allocates.
    for (int s = 0; s < CS_SOLVER_COUNT; s++) {
        const cs__solver_desc *d = cs__solver_row((cs_solver)s);
        if (d->warm_up && cs_limits_allow(&ws->lim, (cs_solver)s))
            d->warm_up(ws);
    }
    cs__ws_reset_peak(ws);
}
