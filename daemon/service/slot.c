/* SPDX-License-Identifier: MIT */
/* Triple buffer. Three buffers rotate between three roles: back (the producer writes it), middle
 * (published, held by neither side) and front (the consumer reads it). Publishing swaps back and
 * middle, taking swaps front and middle, each with one atomic exchange on `middle`, which holds
 * the middle buffer's index plus a FRESH bit saying it was published and not yet taken. Each side
 * only ever touches its own buffer, so neither waits. */
#include "service/slot.h"

#include <stddef.h>

// Bit set in `middle` when the buffer there was published and has not been taken yet.
#define FRESH 4u
#define INDEX 3u

void cd_slot_init(cd_slot *s, void *b0, void *b1, void *b2) {
    s->buf[0] = b0;
    s->buf[1] = b1;
    s->buf[2] = b2;
    s->back = 0;
    s->front = 1;
    atomic_init(&s->middle, 2u);
}

void *cd_slot_back(cd_slot *s) {
    return s->buf[s->back];
}

bool cd_slot_publish(cd_slot *s) {
    // release: pairs with the acquire of the exchange in cd_slot_take, so the consumer sees the
    // buffer's contents. acquire: pairs with the release of that same exchange, so the consumer
    // has finished reading the buffer we get back before we start writing into it.
    const unsigned old =
        atomic_exchange_explicit(&s->middle, s->back | FRESH, memory_order_acq_rel);
    s->back = old & INDEX;
    return (old & FRESH) != 0;
}

bool cd_slot_has_fresh(const cd_slot *s) {
    // relaxed: FRESH is cleared by the consumer alone, so once seen it stays set until its next
    // take, whose exchange carries the ordering.
    return (atomic_load_explicit(&s->middle, memory_order_relaxed) & FRESH) != 0;
}

void *cd_slot_take(cd_slot *s) {
    if (!cd_slot_has_fresh(s)) {
        return NULL;
    }
    // acquire: pairs with the release in cd_slot_publish (the buffer's contents). release: pairs
    // with the acquire in cd_slot_publish (we are done reading the buffer we hand back).
    const unsigned old = atomic_exchange_explicit(&s->middle, s->front, memory_order_acq_rel);
    s->front = old & INDEX;
    return s->buf[s->front];
}
