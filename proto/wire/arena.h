/* SPDX-License-Identifier: MIT */
/* A per-connection bump allocator for protobuf-c's decoding (nginx's pools): every message is
 * unpacked into it and the whole arena is reset after the message is handled, so decoding a frame
 * makes no malloc and no free once the arena has grown to the connection's largest message. A
 * message that does not fit takes overflow blocks from malloc; the next reset frees them and
 * grows the arena to what that message needed. */
#ifndef CONTACTD_WIRE_ARENA_H
#define CONTACTD_WIRE_ARENA_H
#include <stdbool.h>
#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

/* thread: one owner (the I/O thread, for one connection). */
typedef struct cd_arena {
    ProtobufCAllocator allocator; /* read-only: what protobuf-c's unpack takes */
    unsigned char *base;          /* private below */
    size_t cap, top;
    size_t overflow_bytes;        /* bytes taken from malloc since the last reset */
    void *overflow;               /* singly linked overflow blocks */
    bool fixed;                   /* base is lent (cd_arena_fix): no overflow, no growth; an
                                   * allocation that does not fit fails */
    bool exhausted;               /* fixed: one failed since the last reset */
} cd_arena;

/* An arena of cap bytes (one malloc). Returns 0 or -ENOMEM. */
int cd_arena_init(cd_arena *a, size_t cap);

/* Makes a the fixed arena over base (cap bytes) that a real-time thread may decode into: it
 * never calls malloc again, and a message that does not fit fails to unpack (a->exhausted says
 * why). base stays the caller's, made and written (page-faulted) where that costs no one: a
 * never frees it, and the caller may free it once cd_arena_fini has run. thread: a's owner,
 * before it hands a over. */
void cd_arena_fix(cd_arena *a, void *base, size_t cap);

/* Frees everything it owns. Accepts a zeroed or finished arena. */
void cd_arena_fini(cd_arena *a);

/* Forgets every allocation (what was unpacked into it must not be used any more). Overflow
 * blocks are freed and the arena grows to hold what they held, up to most bytes (a fixed arena
 * neither overflows nor grows). */
void cd_arena_reset(cd_arena *a, size_t most);

#endif /* CONTACTD_WIRE_ARENA_H */
