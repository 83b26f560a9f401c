/* SPDX-License-Identifier: MIT */
/* Varint length-prefixed ("delimited") message framing for stream sockets: a reassembly buffer
 * that accepts bytes as they arrive (split or merged messages) and yields whole messages. */
#ifndef CONTACTD_WIRE_FRAMING_H
#define CONTACTD_WIRE_FRAMING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CD_VARINT_MAX 10
/* A framer's first buffer, bytes: a Hello or a small frame. */
#define CD_FRAMER_START 4096

/* thread: one owner (the connection's I/O thread). */
typedef struct cd_framer {
    uint8_t *buf;      /* private */
    size_t len;        /* private: bytes buffered */
    size_t off;        /* private: start of the unconsumed bytes */
    size_t cap;        /* private */
    size_t max_msg;    /* largest message body accepted, bytes */
    bool lent;         /* private: buf is the caller's (cd_framer_lend) */
} cd_framer;

/* Allocates the first buffer (CD_FRAMER_START bytes at most); cd_framer_next grows it up to
 * max_msg + CD_VARINT_MAX for a message that needs it. Returns 0 or -ENOMEM. */
int cd_framer_init(cd_framer *f, size_t max_msg);
void cd_framer_fini(cd_framer *f);

/* The most bytes the buffer ever holds: max_msg + CD_VARINT_MAX. */
size_t cd_framer_most(const cd_framer *f);

/* Makes buf (cd_framer_most(f) bytes) the buffer, keeping the bytes buffered so far, so that
 * the framer never allocates again: for a framer a real-time thread takes over, with a buffer
 * made and written (page-faulted) elsewhere. buf stays the caller's: the framer never frees it,
 * and the caller may free it once cd_framer_fini has run. */
void cd_framer_lend(cd_framer *f, uint8_t *buf);

/* Appends n bytes. Returns 0, or -ENOBUFS when the buffered bytes would exceed the capacity
 * (which only happens when the caller did not drain with cd_framer_next first). */
int cd_framer_feed(cd_framer *f, const uint8_t *data, size_t n);

/* Bytes cd_framer_feed accepts now without -ENOBUFS (a reader reads at most this much). */
size_t cd_framer_space(const cd_framer *f);

/* Bytes buffered and not yet taken as a whole message: a message begun, or none (0). */
size_t cd_framer_pending(const cd_framer *f);

/* Takes the next whole message. Returns 1 with *msg and *len pointing into the buffer (valid until
 * the next feed), 0 when more bytes are needed (the buffer then has room for the whole message),
 * -EMSGSIZE when the prefix announces more than max_msg bytes, -EPROTO when the prefix is not a
 * valid varint, -ENOMEM when the buffer could not grow. After a negative return the stream is
 * unusable. */
int cd_framer_next(cd_framer *f, const uint8_t **msg, size_t *len);

/* Writes v as a varint into out; returns the number of bytes (1..10). */
size_t cd_varint_encode(uint64_t v, uint8_t out[CD_VARINT_MAX]);

/* Decodes a varint from the first n bytes of in. Returns the bytes used (1..10) and sets *ret,
 * 0 when n is too short to tell, -EPROTO when malformed. */
int cd_varint_decode(const uint8_t *in, size_t n, uint64_t *ret);

#endif /* CONTACTD_WIRE_FRAMING_H */
