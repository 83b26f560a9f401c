/* SPDX-License-Identifier: MIT */
/* Warm-start storage (see warmstart.h): sorted id maps over fixed arrays sized at admission. */
#include "solver/warmstart.h"

#include <stdlib.h>
#include <string.h>

#include "solver/idmap.h"

struct cs_warmstart {
    cs_limits lim;
    int nc, nb;
    cs_idpos *cmap;   /* [max_contacts] sorted by contact id -> row of impulse */
    double *impulse;  /* [3 max_contacts] */
    uint32_t *basis;  /* [max_contacts] Lemke basis words, same rows as impulse */
    int basis_d;      /* their pyramid's d; 0 = no basis stored */
    cs_idpos *bmap;   /* [max_bodies] sorted by body id -> row of v */
    double *v;        /* [6 max_bodies] */
};

cs_warmstart *cs_warmstart_new(const cs_limits *lim) {
    cs_warmstart *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    const size_t nc = (size_t)lim->max_contacts, nb = (size_t)lim->max_bodies;
    w->lim = *lim;
    // calloc(0) may return NULL: allocate at least one element.
    w->cmap = calloc(nc + 1, sizeof(cs_idpos));
    w->impulse = calloc(3 * nc + 1, sizeof(double));
    w->basis = calloc(nc + 1, sizeof(uint32_t));
    w->bmap = calloc(nb + 1, sizeof(cs_idpos));
    w->v = calloc(6 * nb + 1, sizeof(double));
    if (!w->cmap || !w->impulse || !w->basis || !w->bmap || !w->v) {
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
    free(w->basis);
    free(w->bmap);
    free(w->v);
    free(w);
}

void cs_warmstart_reset(cs_warmstart *w) {
    w->nc = w->nb = w->basis_d = 0;
}

void cs__warm_store(cs_warmstart *w, const cs_result *r) {
    w->nc = r->nc <= w->lim.max_contacts ? r->nc : 0;
    w->basis_d = 0;
    for (int i = 0; i < w->nc; i++)
        w->cmap[i] = (cs_idpos){.id = r->contact_id[i], .pos = i};
    memcpy(w->impulse, r->impulse, 3 * (size_t)w->nc * sizeof(double));
    cs__idmap_sort(w->cmap, w->nc);
    w->nb = r->nb <= w->lim.max_bodies ? r->nb : 0;
    for (int b = 0; b < w->nb; b++)
        w->bmap[b] = (cs_idpos){.id = r->body_id[b], .pos = b};
    memcpy(w->v, r->v, 6 * (size_t)w->nb * sizeof(double));
    cs__idmap_sort(w->bmap, w->nb);
}

bool cs__warm_impulse(const cs_warmstart *w, uint64_t id, double out[3]) {
    const int k = w ? cs__idmap_find(w->cmap, w->nc, id) : -1;
    for (int j = 0; j < 3; j++)
        out[j] = k >= 0 ? w->impulse[3 * k + j] : 0;
    return k >= 0;
}

bool cs__warm_velocity(const cs_warmstart *w, uint32_t id, double out[6]) {
    const int k = w ? cs__idmap_find(w->bmap, w->nb, id) : -1;
    if (k >= 0)
        memcpy(out, w->v + 6 * (size_t)k, 6 * sizeof(double));
    return k >= 0;
}

void cs__warm_store_basis(cs_warmstart *w, const uint32_t *basis, int d) {
    memcpy(w->basis, basis, (size_t)w->nc * sizeof(uint32_t));
    w->basis_d = d;
}

bool cs__warm_basis(const cs_warmstart *w, uint64_t id, int d, uint32_t *ret) {
    const int k = w && w->basis_d == d ? cs__idmap_find(w->cmap, w->nc, id) : -1;
    *ret = k >= 0 ? w->basis[k] : 0;
    return k >= 0;
}
