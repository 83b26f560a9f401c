/* SPDX-License-Identifier: MIT */
/* A latest-value slot (triple buffer) between one producer and one consumer thread: the producer
 * fills a buffer of its own and publishes it; the consumer takes the newest published buffer. The
 * newest value wins: a buffer published and then replaced before the consumer took it is reported
 * to the producer as superseded. Neither side waits for the other, allocates or locks; the three
 * buffers are the caller's (a session's frame buffers, sized at admission). */
#ifndef CONTACTD_SERVICE_SLOT_H
#define CONTACTD_SERVICE_SLOT_H
#include <stdatomic.h>
#include <stdbool.h>

/* thread: one producer (io) and one consumer (rt), as each function says. */
typedef struct cd_slot {
    void *buf[3];            /* private: the three buffers, owned by the caller */
    unsigned back;           /* private, producer only: the buffer being filled */
    unsigned front;          /* private, consumer only: the buffer last taken */
    _Atomic unsigned middle; /* private: the published buffer's index | CD_SLOT_FRESH */
} cd_slot;

/* Sets up s over three distinct buffers. Nothing is published. thread: any, before the
 * producer and consumer start. */
void cd_slot_init(cd_slot *s, void *b0, void *b1, void *b2);

/* The buffer the producer may fill now; the same buffer until the next cd_slot_publish.
 * thread: producer. rt-safe: yes. */
void *cd_slot_back(cd_slot *s);

/* Publishes the buffer cd_slot_back returned and gives the producer another one. Returns true
 * when the previously published buffer had not been taken (it is now superseded).
 * thread: producer. rt-safe: yes (one atomic exchange). */
bool cd_slot_publish(cd_slot *s);

/* True when a buffer was published since the consumer's last cd_slot_take. thread: consumer.
 * rt-safe: yes (one atomic load). */
bool cd_slot_has_fresh(const cd_slot *s);

/* Takes the newest published buffer, or returns NULL when nothing was published since the last
 * take. The buffer stays valid and unchanged until the consumer's next cd_slot_take.
 * thread: consumer. rt-safe: yes (one atomic load, one exchange when there is a value). */
void *cd_slot_take(cd_slot *s);

#endif /* CONTACTD_SERVICE_SLOT_H */
