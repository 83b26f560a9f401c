/* SPDX-License-Identifier: MIT */
/* SPSC ring (see ring.h). head and tail are free-running counters (wrap-around of size_t is
 * harmless because only their difference is used); an element's index is counter & mask. The
 * counters sit on separate cache lines so the two threads do not share one. */
#include "service/ring.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int cd_ring_init(cd_ring *r, size_t capacity, size_t elem_size) {
    *r = (cd_ring){0};
    if (capacity == 0 || (capacity & (capacity - 1)) != 0 || elem_size == 0) {
        return -EINVAL;
    }
    // Elements start at multiples of the stride, so rounding it up aligns every element.
    const size_t align = alignof(max_align_t);
    const size_t stride = (elem_size + align - 1) / align * align;
    if (stride > SIZE_MAX / capacity) {
        return -EINVAL;
    }
    r->elems = calloc(capacity, stride);
    if (!r->elems) {
        return -ENOMEM;
    }
    r->stride = stride;
    r->mask = capacity - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    return 0;
}

void cd_ring_fini(cd_ring *r) {
    free(r->elems);
    r->elems = NULL;
}

size_t cd_ring_capacity(const cd_ring *r) {
    return r->mask + 1;
}

void *cd_ring_at(cd_ring *r, size_t i) {
    assert(i <= r->mask);
    return r->elems + i * r->stride;
}

void *cd_ring_claim(cd_ring *r) {
    const size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    // acquire: pairs with the release in cd_ring_pop, so the consumer is done reading the
    // element before we overwrite it.
    const size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail > r->mask) {
        return NULL;
    }
    return r->elems + (head & r->mask) * r->stride;
}

void cd_ring_push(cd_ring *r) {
    const size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    // release: pairs with the acquire in cd_ring_peek, so the consumer sees the element's
    // contents.
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

void *cd_ring_peek(cd_ring *r) {
    const size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    // acquire: pairs with the release in cd_ring_push (the element's contents).
    const size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (head == tail) {
        return NULL;
    }
    return r->elems + (tail & r->mask) * r->stride;
}

void cd_ring_pop(cd_ring *r) {
    const size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    // release: pairs with the acquire in cd_ring_claim (we are done reading the element).
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
}
