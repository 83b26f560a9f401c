/* SPDX-License-Identifier: MIT */
/* Reading protobuf wire bytes field by field, for the fast decoders that take the daemon's and the
 * client's hot messages straight into plain types (wire/frame_decode.h, the client's Result
 * path). Every reader stops at its end and says false at anything malformed; the decoders then
 * decline the message to protobuf-c. Values are read as protobuf-c reads them: a uint32 or enum
 * keeps a varint's low 32 bits, a bool is a varint not 0. thread: any. rt-safe: yes. */
#ifndef CONTACTD_WIRE_READER_H
#define CONTACTD_WIRE_READER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// Wire types (protobuf encoding).
enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

typedef struct cd_reader {
    const uint8_t *p, *end;
} cd_reader;

// A varint of at most 10 bytes whose value fits 64 bits.
static inline bool rd_varint(cd_reader *r, uint64_t *ret) {
    if (r->p < r->end && *r->p < 0x80) {
        *ret = *r->p++;
        return true;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        const uint8_t b = *r->p++;
        if (shift == 63 && b > 1) {
            return false;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *ret = v;
            return true;
        }
    }
    return false;
}

// protobuf-c reads a tag or a length prefix in at most 5 bytes (a 32-bit varint) and refuses a
// longer one, even of a small value: so do the readers here.
#define RD_PREFIX_MAX 5

// The next field's number and wire type; false at a malformed tag.
static inline bool rd_tag(cd_reader *r, unsigned *field, unsigned *wt) {
    const uint8_t *start = r->p;
    uint64_t t;
    if (!rd_varint(r, &t) || r->p - start > RD_PREFIX_MAX || t >> 3 > 31) {
        return false; // no field of ours is numbered beyond 31
    }
    *field = (unsigned)(t >> 3);
    *wt = (unsigned)(t & 7);
    return true;
}

static inline bool rd_double(cd_reader *r, double *ret) {
    if (r->end - r->p < 8) {
        return false;
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(ret, r->p, 8);
#else
    uint64_t bits = 0;
    for (int i = 7; i >= 0; i--) {
        bits = bits << 8 | r->p[i]; // little-endian on the wire
    }
    memcpy(ret, &bits, sizeof bits);
#endif
    r->p += 8;
    return true;
}

// A length-delimited field's bytes as a reader of their own.
static inline bool rd_len(cd_reader *r, cd_reader *inner) {
    const uint8_t *start = r->p;
    uint64_t n;
    if (!rd_varint(r, &n) || r->p - start > RD_PREFIX_MAX || n > (uint64_t)(r->end - r->p)) {
        return false;
    }
    *inner = (cd_reader){r->p, r->p + n};
    r->p += n;
    return true;
}

// True the first time field is seen in a message (seen holds one bit per field number).
static inline bool rd_once(uint32_t *seen, unsigned field) {
    const uint32_t bit = 1u << field;
    const bool once = !(*seen & bit);
    *seen |= bit;
    return once;
}

// A message of n doubles numbered 1..n (Vec3: x y z; Quat: w x y z, cs_body's order), absent
// ones 0. Encoders write every one in order (tags 0x09, 0x11, ...): that layout is read at once.
static inline bool rd_doubles(cd_reader m, double *out, unsigned n) {
    if ((size_t)(m.end - m.p) == 9 * n) {
        bool in_order = true;
        for (unsigned i = 0; i < n; i++) {
            in_order &= m.p[9 * i] == (uint8_t)((i + 1) << 3 | WT_FIXED64);
        }
        if (in_order) {
            for (unsigned i = 0; i < n; i++) {
                cd_reader one = {m.p + 9 * i + 1, m.end};
                (void)rd_double(&one, &out[i]);
            }
            return true;
        }
    }
    memset(out, 0, n * sizeof *out);
    uint32_t seen = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || wt != WT_FIXED64 || field < 1 || field > n ||
            !rd_once(&seen, field) || !rd_double(&m, &out[field - 1])) {
            return false;
        }
    }
    return true;
}

// A Vec3 or Quat field's value: its wire type checked, its message read.
static inline bool rd_vec(cd_reader *r, unsigned wt, double *out, unsigned n) {
    cd_reader m;
    return wt == WT_LEN && rd_len(r, &m) && rd_doubles(m, out, n);
}

static inline bool rd_u64(cd_reader *r, unsigned wt, uint64_t *ret) {
    return wt == WT_VARINT && rd_varint(r, ret);
}

static inline bool rd_f64(cd_reader *r, unsigned wt, double *ret) {
    return wt == WT_FIXED64 && rd_double(r, ret);
}

// uint32 and enum fields keep a varint's low 32 bits, as protobuf-c does.
static inline bool rd_u32(cd_reader *r, unsigned wt, uint32_t *ret) {
    uint64_t v;
    if (!rd_u64(r, wt, &v)) {
        return false;
    }
    *ret = (uint32_t)v;
    return true;
}

// The next element of a repeated message field (its bytes in *m) when n < max elements are
// taken; false when there is no room for it (the caller declines) or it is malformed.
static inline bool rd_element(cd_reader *r, unsigned wt, cd_reader *m, size_t n, size_t max) {
    return wt == WT_LEN && n < max && rd_len(r, m);
}

// A string field into buf (cap bytes, terminated): plain ASCII without NUL that fits, else false
// (protobuf-c's C strings would end at a NUL: the daemon refuses a string holding one, strict.h).
static inline bool rd_text(cd_reader *r, unsigned wt, char *buf, size_t cap) {
    cd_reader m;
    if (wt != WT_LEN || !rd_len(r, &m) || (size_t)(m.end - m.p) >= cap) {
        return false;
    }
    const size_t n = (size_t)(m.end - m.p);
    for (size_t i = 0; i < n; i++) {
        if (m.p[i] == 0 || m.p[i] > 0x7f) {
            return false;
        }
    }
    memcpy(buf, m.p, n);
    buf[n] = '\0';
    return true;
}

#endif /* CONTACTD_WIRE_READER_H */
