/* SPDX-License-Identifier: MIT */
/* The session workspace: the only allocation of libcontact. Its size is the sum of what the
 * model, each solver and the certificate declare for the session's limits (ODE's estimator);
 * inside a solve it is a mark/release stack, so nothing is allocated per tick. */
#include "solver/workspace.h"

#include <stdlib.h>
#include <string.h>

#include "solver/certify.h"
#include "solver/dantzig.h"
#include "solver/lemke_contact.h"
#include "solver/lemke_structural.h"
#include "solver/model.h"
#include "solver/sap.h"
#include "solver/step.h"

#define WS_ALIGN 64

struct cs_workspace {
    unsigned char *base;
    size_t cap;
    size_t top;
    size_t peak;
    cs_limits lim;
};

/* Hard ceilings on limits, so the size arithmetic below cannot overflow. */
#define LIM_BODIES_MAX 4096
#define LIM_CONTACTS_MAX 8192
#define LIM_DIRS_MAX 64

size_t cs__ws_bytes(size_t n) {
    return (n + WS_ALIGN - 1) & ~(size_t)(WS_ALIGN - 1);
}

cs_workspace *cs_workspace_new(const cs_limits *lim) {
    if (!lim || lim->max_bodies < 1 || lim->max_bodies > LIM_BODIES_MAX || lim->max_contacts < 0 ||
        lim->max_contacts > LIM_CONTACTS_MAX || lim->max_dirs < 0 || lim->max_dirs > LIM_DIRS_MAX)
        return NULL;
    // The model and the answer persist through a step; one solver runs at a time, then the
    // certificate: the largest of those follows.
    size_t scratch = cs_certify_size(lim);
    const size_t solvers[] = {cs_dantzig_size(lim), cs_lemke_standard_size(lim),
                             cs_lemke_structural_size(lim), cs_sap_size(lim)};
    for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; k++)
        scratch = solvers[k] > scratch ? solvers[k] : scratch;
    const size_t need = cs_model_size(lim) + cs_step_size(lim) + scratch;
    cs_workspace *ws = calloc(1, sizeof(*ws));
    if (!ws)
        return NULL;
    ws->cap = cs__ws_bytes(need);
    ws->base = aligned_alloc(WS_ALIGN, ws->cap);
    if (!ws->base) {
        free(ws);
        return NULL;
    }
    // Touch every page now so the first tick does not take page faults.
    memset(ws->base, 0, ws->cap);
    ws->lim = *lim;
    return ws;
}

void cs_workspace_free(cs_workspace *ws) {
    if (!ws)
        return;
    free(ws->base);
    free(ws);
}

size_t cs_workspace_capacity(const cs_workspace *ws) {
    return ws->cap;
}

size_t cs__ws_mark(const cs_workspace *ws) {
    return ws->top;
}

void cs__ws_release(cs_workspace *ws, size_t mark) {
    CS_ASSERT(mark <= ws->top);
    ws->top = mark;
}

void *cs__ws_alloc(cs_workspace *ws, size_t n) {
    const size_t bytes = cs__ws_bytes(n);
    if (bytes > ws->cap - ws->top)
        return NULL;
    void *p = ws->base + ws->top;
    ws->top += bytes;
    if (ws->top > ws->peak)
        ws->peak = ws->top;
    return p;
}

void *cs__ws_zalloc(cs_workspace *ws, size_t n) {
    void *p = cs__ws_alloc(ws, n);
    if (p)
        memset(p, 0, n);
    return p;
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
