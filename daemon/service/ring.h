/* SPDX-License-Identifier: MIT */
/* A fixed-capacity single-producer/single-consumer ring of equal-sized elements. The producer
 * fills an element in place (claim, write, push) and the consumer reads it in place (peek, read,
 * pop), so nothing is copied or allocated after init. When the ring is full, claim says so and
 * the producer decides (the tick thread drops the result and counts it). */
#ifndef CONTACTD_SERVICE_RING_H
#define CONTACTD_SERVICE_RING_H
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>

/* thread: one producer (rt) and one consumer (io), as each function says. */
typedef struct cd_ring {
    unsigned char *elems;         /* private: capacity * stride bytes */
    size_t stride;                /* private: element size rounded up to max_align_t */
    size_t mask;                  /* private: capacity - 1 */
    alignas(64) _Atomic size_t head; /* private: elements pushed; written by the producer */
    alignas(64) _Atomic size_t tail; /* private: elements popped; written by the consumer */
} cd_ring;

/* Allocates capacity zeroed elements of elem_size bytes each, aligned for any type.
 * capacity must be a power of two >= 1. Returns 0, -EINVAL or -ENOMEM. thread: any (not rt). */
int cd_ring_init(cd_ring *r, size_t capacity, size_t elem_size);

/* Frees the elements. Accepts a ring that failed init or was zeroed. thread: any (not rt), with
 * neither side using the ring. */
void cd_ring_fini(cd_ring *r);

/* Number of elements the ring holds when full. thread: any. */
size_t cd_ring_capacity(const cd_ring *r);

/* Element i (0 <= i < capacity) for one-time setup, before producer and consumer start (e.g. to
 * point each element's arrays at memory of its own). thread: any, before use. */
void *cd_ring_at(cd_ring *r, size_t i);

/* The next free element for the producer to fill, or NULL when the ring is full. Repeated calls
 * without a push return the same element. thread: producer. rt-safe: yes. */
void *cd_ring_claim(cd_ring *r);

/* Publishes the element cd_ring_claim returned (which must not have been NULL).
 * thread: producer. rt-safe: yes. */
void cd_ring_push(cd_ring *r);

/* The oldest published element, or NULL when the ring is empty. It stays valid until
 * cd_ring_pop. thread: consumer. rt-safe: yes. */
void *cd_ring_peek(cd_ring *r);

/* Releases the element cd_ring_peek returned (which must not have been NULL) to the producer.
 * thread: consumer. rt-safe: yes. */
void cd_ring_pop(cd_ring *r);

#endif /* CONTACTD_SERVICE_RING_H */
