/* SPDX-License-Identifier: MIT */
/* Varint length-prefixed framing. Bytes from the socket are appended to one buffer; whole
 * messages are handed out as pointers into it, and the unconsumed tail is moved to the front only
 * when an append would not fit behind it. The buffer starts at CD_FRAMER_START bytes (an idle
 * connection costs little) and grows to what a complete prefix announces, never beyond
 * max_msg + CD_VARINT_MAX: a prefix that announces an oversized body is refused as soon as it is
 * complete, before any of the body arrives, so a hostile length never makes the buffer grow. */
#include "wire/framing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cd_framer_init(cd_framer *f, size_t max_msg) {
    if (max_msg > SIZE_MAX - CD_VARINT_MAX) {
        return -ENOMEM;
    }
    const size_t most = max_msg + CD_VARINT_MAX;
    const size_t cap = most < CD_FRAMER_START ? most : CD_FRAMER_START;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        return -ENOMEM;
    }
    *f = (cd_framer){.buf = buf, .len = 0, .off = 0, .cap = cap, .max_msg = max_msg};
    return 0;
}

size_t cd_framer_most(const cd_framer *f) {
    return f->max_msg + CD_VARINT_MAX;
}

void cd_framer_lend(cd_framer *f, uint8_t *buf) {
    memcpy(buf, f->buf + f->off, f->len - f->off);
    if (!f->lent) {
        free(f->buf);
    }
    *f = (cd_framer){.buf = buf, .len = f->len - f->off, .off = 0, .cap = cd_framer_most(f),
                     .max_msg = f->max_msg, .lent = true};
}

void cd_framer_fini(cd_framer *f) {
    if (!f->lent) {
        free(f->buf);
    }
    *f = (cd_framer){0};
}

size_t cd_framer_space(const cd_framer *f) {
    return f->cap - (f->len - f->off);
}

size_t cd_framer_pending(const cd_framer *f) {
    return f->len - f->off;
}

int cd_framer_feed(cd_framer *f, const uint8_t *data, size_t n) {
    if (n > cd_framer_space(f)) {
        return -ENOBUFS;
    }
    if (n > f->cap - f->len) {
        // Only now is the consumed head worth reclaiming: most reads land behind the tail.
        memmove(f->buf, f->buf + f->off, f->len - f->off);
        f->len -= f->off;
        f->off = 0;
    }
    if (n > 0) {
        memcpy(f->buf + f->len, data, n);
        f->len += n;
    }
    return 0;
}

int cd_framer_next(cd_framer *f, const uint8_t **msg, size_t *len) {
    const size_t avail = f->len - f->off;
    uint64_t body;
    const int used = cd_varint_decode(f->buf + f->off, avail, &body);
    if (used <= 0) {
        return used; // 0: prefix incomplete; -EPROTO: malformed
    }
    if (body > f->max_msg) {
        return -EMSGSIZE;
    }
    if (avail - (size_t)used < body) {
        // Room for the whole message, so the reader can go on (cd_framer_space).
        const size_t need = (size_t)used + (size_t)body;
        if (need > f->cap) {
            uint8_t *buf = malloc(need);
            if (!buf) {
                return -ENOMEM;
            }
            memcpy(buf, f->buf + f->off, avail);
            free(f->buf);
            *f = (cd_framer){.buf = buf, .len = avail, .off = 0, .cap = need,
                             .max_msg = f->max_msg};
        }
        return 0;
    }
    *msg = f->buf + f->off + used;
    *len = (size_t)body;
    f->off += (size_t)used + (size_t)body;
    if (f->off == f->len) {
        // Empty: restart at the front so the next read needs no move. The bytes stay in place,
        // so *msg remains valid until the next feed as documented.
        f->off = f->len = 0;
    }
    return 1;
}

size_t cd_varint_encode(uint64_t v, uint8_t out[CD_VARINT_MAX]) {
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

int cd_varint_decode(const uint8_t *in, size_t n, uint64_t *ret) {
    uint64_t v = 0;
    const size_t lim = n < CD_VARINT_MAX ? n : CD_VARINT_MAX;
    for (size_t i = 0; i < lim; i++) {
        const uint8_t b = in[i];
        // The tenth byte carries bit 63 only; anything more would not fit in 64 bits.
        if (i == CD_VARINT_MAX - 1 && b > 1) {
            return -EPROTO;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *ret = v;
            return (int)i + 1;
        }
    }
    return n >= CD_VARINT_MAX ? -EPROTO : 0;
}
