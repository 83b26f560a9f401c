/* SPDX-License-Identifier: MIT */
/* One-pass back-to-front packing (see pack.h). The rules for which fields go out are protobuf-c
 * 1.4's, so the bytes are the same: fields in descriptor order (written here last to first);
 * proto3 scalars only when not zero (a double -0.0 counts as zero, a NaN does not), strings only
 * when not empty, messages when not NULL; optional and oneof members by their quantifier, an
 * unset string or message (NULL or the default) left out; repeated scalars packed when the
 * descriptor says so. (A NULL element of a repeated message or string field, which protobuf-c
 * cannot size, is written here as an empty one.) */
#include "wire/pack.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "wire/framing.h"

enum { WIRE_VARINT = 0, WIRE_64BIT = 1, WIRE_LENGTH = 2, WIRE_32BIT = 5 };

/* The bytes below p, down to start, are free. */
typedef struct writer {
    uint8_t *p;
    const uint8_t *start;
} writer;

static bool put(writer *w, const void *src, size_t n) {
    if ((size_t)(w->p - w->start) < n) {
        return false;
    }
    w->p -= n;
    if (n > 0) {
        memcpy(w->p, src, n); // src may be NULL when n is 0 (an empty string or bytes)
    }
    return true;
}

static bool put_varint_long(writer *w, uint64_t v) {
    size_t n = 1;
    for (uint64_t t = v >> 7; t; t >>= 7) {
        n++;
    }
    if ((size_t)(w->p - w->start) < n) {
        return false;
    }
    w->p -= n;
    for (size_t i = 0; i + 1 < n; i++, v >>= 7) {
        w->p[i] = (uint8_t)(v | 0x80);
    }
    w->p[n - 1] = (uint8_t)v;
    return true;
}

// Written in place, last byte first: most varints here are one byte (tags, lengths below 128).
static inline bool put_varint(writer *w, uint64_t v) {
    if (v < 0x80 && w->p > w->start) {
        *--w->p = (uint8_t)v;
        return true;
    }
    return put_varint_long(w, v);
}

// n = 4 or 8 bytes of v, least significant first (the wire's order whatever the host's).
static bool put_fixed(writer *w, uint64_t v, size_t n) {
    if ((size_t)(w->p - w->start) < n) {
        return false;
    }
    w->p -= n;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 8) {
        memcpy(w->p, &v, 8);
        return true;
    }
#endif
    for (size_t i = 0; i < n; i++) {
        w->p[i] = (uint8_t)(v >> (8 * i));
    }
    return true;
}

static int wire_type(ProtobufCType t) {
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return WIRE_64BIT;
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return WIRE_32BIT;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return WIRE_LENGTH;
    default:
        return WIRE_VARINT;
    }
}

size_t cd_pb_element_size(ProtobufCType t) {
    switch (t) {
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    default: // 32-bit integers, float and enum
        return 4;
    }
}

// A scalar's value as the wire has it (no tag): a varint, or 4 or 8 fixed bytes.
static bool put_scalar(writer *w, ProtobufCType t, const void *m) {
    switch (t) {
    case PROTOBUF_C_TYPE_SINT32: {
        const int32_t v = *(const int32_t *)m;
        return put_varint(w, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
    }
    case PROTOBUF_C_TYPE_ENUM:
    case PROTOBUF_C_TYPE_INT32:
        // A negative int32 goes out sign-extended to ten bytes.
        return put_varint(w, (uint64_t)(int64_t)*(const int32_t *)m);
    case PROTOBUF_C_TYPE_UINT32:
        return put_varint(w, *(const uint32_t *)m);
    case PROTOBUF_C_TYPE_SINT64: {
        const int64_t v = *(const int64_t *)m;
        return put_varint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
        return put_varint(w, *(const uint64_t *)m);
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return put_fixed(w, *(const uint32_t *)m, 4);
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return put_fixed(w, *(const uint64_t *)m, 8);
    case PROTOBUF_C_TYPE_BOOL: {
        const uint8_t b = *(const protobuf_c_boolean *)m ? 1 : 0;
        return put(w, &b, 1);
    }
    default:
        return false;
    }
}

static bool put_message(writer *w, const ProtobufCMessage *m);

// One field's tag and value; member points at the value (an array element for repeated ones).
static bool put_field(writer *w, const ProtobufCFieldDescriptor *f, const void *member) {
    bool ok;
    const uint8_t *end = w->p;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)member;
        const size_t n = s ? strlen(s) : 0;
        ok = put(w, s, n) && put_varint(w, n);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = member;
        ok = put(w, b->data, b->len) && put_varint(w, b->len);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)member;
        ok = (!sub || put_message(w, sub)) && put_varint(w, (uint64_t)(end - w->p));
        break;
    }
    default:
        ok = put_scalar(w, f->type, member);
        break;
    }
    return ok && put_varint(w, ((uint64_t)f->id << 3) | (uint64_t)wire_type(f->type));
}

// protobuf-c's test for a proto3 field left at its default (not written).
static bool is_zero(const ProtobufCFieldDescriptor *f, const void *m) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_BOOL:
        return *(const protobuf_c_boolean *)m == 0;
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
        return *(const uint64_t *)m == 0;
    case PROTOBUF_C_TYPE_FLOAT:
        return *(const float *)m == 0;
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)m == 0;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)m;
        return !s || !*s;
    }
    case PROTOBUF_C_TYPE_BYTES:
        return ((const ProtobufCBinaryData *)m)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE:
        return *(const void *const *)m == NULL;
    default:
        return *(const uint32_t *)m == 0;
    }
}

// An optional or oneof string or message that is unset: NULL, or protobuf-c's default.
static bool pointer_unset(const ProtobufCFieldDescriptor *f, const void *m) {
    const void *p = *(const void *const *)m;
    return p == NULL || p == f->default_value;
}

static bool put_repeated(writer *w, const ProtobufCFieldDescriptor *f, size_t n,
                         const void *member) {
    const uint8_t *a = *(const uint8_t *const *)member;
    const size_t size = cd_pb_element_size(f->type);
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_PACKED)) {
        for (size_t i = n; i-- > 0;) {
            if (!put_field(w, f, a + i * size)) {
                return false;
            }
        }
        return true;
    }
    const uint8_t *end = w->p;
    for (size_t i = n; i-- > 0;) {
        if (!put_scalar(w, f->type, a + i * size)) {
            return false;
        }
    }
    return put_varint(w, (uint64_t)(end - w->p)) &&
           put_varint(w, ((uint64_t)f->id << 3) | WIRE_LENGTH);
}

static bool put_message(writer *w, const ProtobufCMessage *m) {
    if (m->n_unknown_fields > 0) {
        // Kept as received: protobuf-c writes them after the known fields.
        const size_t n = protobuf_c_message_get_packed_size(m);
        if ((size_t)(w->p - w->start) < n) {
            return false;
        }
        w->p -= n;
        return protobuf_c_message_pack(m, w->p) == n;
    }
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = d->n_fields; i-- > 0;) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const void *member = (const uint8_t *)m + f->offset;
        const void *q = (const uint8_t *)m + f->quantifier_offset;
        if (f->label == PROTOBUF_C_LABEL_NONE && f->type == PROTOBUF_C_TYPE_DOUBLE) {
            // The commonest field of a Result (its Vec3s), written without the general steps.
            uint64_t bits;
            memcpy(&bits, member, sizeof bits);
            if (*(const double *)member != 0 &&
                !(put_fixed(w, bits, 8) && put_varint(w, (uint64_t)f->id << 3 | WIRE_64BIT))) {
                return false;
            }
            continue;
        }
        const bool text = f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING;
        bool out;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            const size_t n = *(const size_t *)q;
            if (n > 0 && !put_repeated(w, f, n, member)) {
                return false;
            }
            continue;
        }
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            out = *(const uint32_t *)q == f->id && !(text && pointer_unset(f, member));
        } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
            out = text ? !pointer_unset(f, member) : *(const protobuf_c_boolean *)q != 0;
        } else if (f->label == PROTOBUF_C_LABEL_NONE) {
            out = !is_zero(f, member);
        } else {
            out = true;
        }
        if (out && !put_field(w, f, member)) {
            return false;
        }
    }
    return true;
}

int cd_pack_tail(const ProtobufCMessage *msg, uint8_t *buf, size_t cap, size_t *ret_len) {
    writer w = {.p = buf + cap, .start = buf};
    if (!put_message(&w, msg)) {
        return -ENOBUFS;
    }
    *ret_len = (size_t)(buf + cap - w.p);
    return 0;
}
