/* SPDX-License-Identifier: MIT */
/* Warm-start storage (see warmstart.h): sorted id maps over fixed arrays sized at admission. */
#include "solver/warmstart.h"

#include <stdlib.h>
#include <string.h>

#include "solver/idmap.h"

struct cs_warmstart {
    cs_limits lim;
    int nc;
    cs_idpos *cmap;   /* [max_contacts] sorted by contact id -> row of impulse */
    double *impulse;  /* [3 max_contacts] */
};

cs_warmstart *cs_warmstart_new(const cs_limits *lim) {
    cs_warmstart *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    const size_t nc = (size_t)lim->max_contacts;
    w->lim = *lim;
    // calloc(0) may return NULL: allocate at least one element.
    w->cmap = calloc(nc + 1, sizeof(cs_idpos));
    w->impulse = calloc(3 * nc + 1, sizeof(double));
    if (!w->cmap || !w->impulse) {
        cs_warmstart_free(w);
        return NULL;
    }
    return w;
}

void cs_warmstart_free(cs_warmstart *w) {
    if (!w)
        return;
    free(w->cmap);
    free(w->impulse);
    free(w);
}

void cs_warmstart_reset(cs_warmstart *w) {
    w->nc = 0;
}

void cs__warm_store(cs_warmstart *w, const cs_result *r) {
    w->nc = r->nc <= w->lim.max_contacts ? r->nc : 0;
    for (int i = 0; i < w->nc; i++)
        w->cmap[i] = (cs_idpos){.id = r->contact_id[i], .pos = i};
    memcpy(w->impulse, r->impulse, 3 * (size_t)w->nc * sizeof(double));
    cs__idmap_sort(w->cmap, w->nc);
}

bool cs__warm_impulse(const cs_warmstart *w, uint64_t id, double out[3]) {
    const int k = w ? cs__idmap_find(w->cmap, w->nc, id) : -1;
    for (int j = 0; j < 3; j++)
        out[j] = k >= 0 ? w->impulse[3 * k + j] : 0;
    return k >= 0;
}
