/* SPDX-License-Identifier: MIT */
/* Warm-start storage (see warmstart.h): sorted id maps over fixed arrays sized at admission,
 * carved with the struct from one block so that cs_warmstart_size() is exact. */
#include "solver/warmstart.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "solver/articulated.h"
#include "solver/idmap.h"

/* A joint's frames in its bodies, with what they were captured for. */
typedef struct warm_joint {
    uint32_t body_a, body_b;
    cs_joint_kind kind;
    cs_art_joint frames; /* la, lb, fa, fb; its body indices are the scene's of that frame */
} warm_joint;

struct cs_warmstart {
    cs_limits lim;
    int nc, nb;
    cs_idpos *cmap;   /* [max_contacts] sorted by contact id -> row of impulse */
    double *impulse;  /* [3 max_contacts] */
    uint32_t *basis;  /* [max_contacts] Lemke basis words, same rows as impulse */
    int basis_d;      /* their pyramid's d; 0 = no basis stored */
    cs_idpos *bmap;   /* [max_bodies] sorted by body id -> row of v */
    double *v;        /* [6 max_bodies] */
    int nj;
    cs_idpos *jmap;   /* [max_joints] sorted by joint id -> row of joint */
    warm_joint *joint; /* [max_joints] */
    int64_t reserve;   /* cs__warm_reserve() */
};

/* Each piece of the block starts aligned for any type. */
static size_t piece(size_t n) {
    const size_t a = alignof(max_align_t);
    return (n + a - 1) / a * a;
}

/* Carves n bytes off *p. */
static void *take(unsigned char **p, size_t n) {
    void *q = *p;
    *p += piece(n);
    return q;
}

size_t cs_warmstart_size(const cs_limits *lim) {
    if (lim->max_contacts < 0 || lim->max_bodies < 0 || lim->max_joints < 0)
        return 0;
    const size_t nc = (size_t)lim->max_contacts, nb = (size_t)lim->max_bodies,
                 nj = (size_t)lim->max_joints;
    return piece(sizeof(cs_warmstart)) + piece(nc * sizeof(cs_idpos)) +
           piece(3 * nc * sizeof(double)) + piece(nc * sizeof(uint32_t)) +
           piece(nb * sizeof(cs_idpos)) + piece(6 * nb * sizeof(double)) +
           piece(nj * sizeof(cs_idpos)) + piece(nj * sizeof(warm_joint));
}

cs_warmstart *cs_warmstart_new(const cs_limits *lim) {
    const size_t bytes = cs_warmstart_size(lim);
    unsigned char *p = bytes ? calloc(1, bytes) : NULL;
    if (!p)
        return NULL;
    const size_t nc = (size_t)lim->max_contacts, nb = (size_t)lim->max_bodies,
                 nj = (size_t)lim->max_joints;
    cs_warmstart *w = take(&p, sizeof(*w));
    w->lim = *lim;
    w->cmap = take(&p, nc * sizeof(cs_idpos));
    w->impulse = take(&p, 3 * nc * sizeof(double));
    w->basis = take(&p, nc * sizeof(uint32_t));
    w->bmap = take(&p, nb * sizeof(cs_idpos));
    w->v = take(&p, 6 * nb * sizeof(double));
    w->jmap = take(&p, nj * sizeof(cs_idpos));
    w->joint = take(&p, nj * sizeof(warm_joint));
    return w;
}

void cs_warmstart_free(cs_warmstart *w) {
    free(w);
}

void cs_warmstart_reset(cs_warmstart *w) {
    w->nc = w->nb = w->nj = w->basis_d = 0;
}

void cs_warmstart_copy(cs_warmstart *dst, const cs_warmstart *src) {
    dst->nc = src->nc;
    dst->nb = src->nb;
    dst->nj = src->nj;
    dst->basis_d = src->basis_d;
    dst->reserve = src->reserve;
    memcpy(dst->cmap, src->cmap, (size_t)src->nc * sizeof(cs_idpos));
    memcpy(dst->impulse, src->impulse, 3 * (size_t)src->nc * sizeof(double));
    memcpy(dst->basis, src->basis, (size_t)src->nc * sizeof(uint32_t));
    memcpy(dst->bmap, src->bmap, (size_t)src->nb * sizeof(cs_idpos));
    memcpy(dst->v, src->v, 6 * (size_t)src->nb * sizeof(double));
    memcpy(dst->jmap, src->jmap, (size_t)src->nj * sizeof(cs_idpos));
    memcpy(dst->joint, src->joint, (size_t)src->nj * sizeof(warm_joint));
}

int64_t cs__warm_reserve(const cs_warmstart *w) {
    return w ? w->reserve : 0;
}

void cs__warm_set_reserve(cs_warmstart *w, int64_t reserve) {
    w->reserve = reserve;
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

bool cs__warm_joint_frame(const cs_warmstart *w, const cs_joint *J, cs_art_joint *ret) {
    const int k = w ? cs__idmap_find(w->jmap, w->nj, J->id) : -1;
    if (k < 0)
        return false;
    const warm_joint *x = &w->joint[k];
    if (x->kind != J->kind || x->body_a != J->body_a || x->body_b != J->body_b)
        return false;
    *ret = x->frames;
    return true;
}

void cs__warm_store_joints(cs_warmstart *w, const cs_joint *joints, int nj,
                           const cs_art_joint *captured) {
    w->nj = nj <= w->lim.max_joints ? nj : 0;
    for (int j = 0; j < w->nj; j++) {
        w->jmap[j] = (cs_idpos){.id = joints[j].id, .pos = j};
        w->joint[j] = (warm_joint){.body_a = joints[j].body_a, .body_b = joints[j].body_b,
                                   .kind = joints[j].kind, .frames = captured[j]};
    }
    cs__idmap_sort(w->jmap, w->nj);
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
