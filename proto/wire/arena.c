/* SPDX-License-Identifier: MIT */
/* Bump allocation with malloc'd overflow (see arena.h). */
#include "wire/arena.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>

/* Every allocation is aligned for any type protobuf-c puts there. */
#define ALIGN alignof(max_align_t)

struct overflow {
    struct overflow *next;
    alignas(max_align_t) unsigned char data[];
};

static void *arena_alloc(void *data, size_t n) {
    cd_arena *a = data;
    const size_t bytes = (n + ALIGN - 1) / ALIGN * ALIGN;
    if (bytes <= a->cap - a->top) {
        void *p = a->base + a->top;
        a->top += bytes;
        return p;
    }
    if (a->fixed) {
        a->exhausted = true;
        return NULL;
    }
    struct overflow *o = malloc(sizeof *o + bytes);
    if (!o) {
        return NULL;
    }
    o->next = a->overflow;
    a->overflow = o;
    a->overflow_bytes += bytes;
    return o->data;
}

// protobuf-c frees what it unpacked piece by piece only when unpacking fails half-way; the
// reset after every message takes care of it.
static void arena_free(void *data, void *p) {
    (void)data;
    (void)p;
}

int cd_arena_init(cd_arena *a, size_t cap) {
    *a = (cd_arena){.allocator = {.alloc = arena_alloc, .free = arena_free, .allocator_data = a}};
    a->base = malloc(cap);
    if (!a->base) {
        return -ENOMEM;
    }
    a->cap = cap;
    return 0;
}

static void free_overflow(cd_arena *a) {
    for (struct overflow *o = a->overflow, *next; o; o = next) {
        next = o->next;
        free(o);
    }
    a->overflow = NULL;
    a->overflow_bytes = 0;
}

void cd_arena_fini(cd_arena *a) {
    free_overflow(a);
    if (!a->fixed) {
        free(a->base);
    }
    *a = (cd_arena){0};
}

void cd_arena_fix(cd_arena *a, void *base, size_t cap) {
    free_overflow(a);
    if (!a->fixed) {
        free(a->base);
    }
    a->base = base;
    a->cap = cap;
    a->top = 0;
    a->fixed = true;
    a->exhausted = false;
}

void cd_arena_reset(cd_arena *a, size_t most) {
    const size_t need = a->top + a->overflow_bytes;
    free_overflow(a);
    a->top = 0;
    a->exhausted = false;
    // Grow once to the size this connection's messages need, so the next one fits whole.
    if (need > a->cap && need <= most) {
        unsigned char *bigger = malloc(need);
        if (bigger) {
            free(a->base);
            a->base = bigger;
            a->cap = need;
        }
    }
}
