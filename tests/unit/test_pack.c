/* SPDX-License-Identifier: MIT */
/* wire/pack.c against protobuf-c's own packer: byte for byte on random messages of every type the
 * protocol has (everything reachable from ClientMessage, ServerMessage and RecordEntry), filled
 * through their descriptors with the values where encoders go wrong: zero, -0.0, NaN, negative
 * int32 (ten bytes), empty and NULL strings, unset optional and oneof members, packed repeated
 * scalars. And every buffer too small by one byte or more is refused. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contactd.pb-c.h"
#include "testlib.h"
#include "wire/codec.h"
#include "wire/pack.h"

#define TRIALS 3000
#define DEPTH 4

/* Every block a random message holds, freed together (oneof members share memory, so a message
 * cannot be freed field by field). */
static void *blocks[1 << 16];
static size_t nblocks;

static void *block(size_t n) {
    void *p = calloc(1, n ? n : 1);
    assert_non_null(p);
    assert_true(nblocks < sizeof blocks / sizeof blocks[0]);
    blocks[nblocks++] = p;
    return p;
}

static void blocks_free(void) {
    while (nblocks > 0) {
        free(blocks[--nblocks]);
    }
}

static ProtobufCMessage *random_message(const ProtobufCMessageDescriptor *d, t_rng *r, int depth);

static uint64_t random_bits(t_rng *r) {
    static const uint64_t edges[] = {0, 1, 127, 128, 300, 0x7fffffffu, 0x80000000u, UINT64_MAX};
    return t_rng_below(r, 2) ? edges[t_rng_below(r, 8)] : t_rng_next(r) >> t_rng_below(r, 64);
}

static double random_double(t_rng *r) {
    static const double edges[] = {0.0, -0.0, 1.0, -2.5, 1e300, 5e-324};
    switch (t_rng_below(r, 4)) {
    case 0:
        return edges[t_rng_below(r, 6)];
    case 1:
        return t_rng_below(r, 2) ? NAN : INFINITY;
    default:
        return t_rng_range(r, -1e3, 1e3);
    }
}

static char *random_string(t_rng *r) {
    const int n = t_rng_below(r, 3) == 0 ? 0 : 1 + t_rng_below(r, 200);
    char *s = block((size_t)n + 1);
    for (int i = 0; i < n; i++) {
        s[i] = (char)('a' + t_rng_below(r, 26));
    }
    return s;
}

// A value of f's type at v; an element of a repeated field (element) is never a NULL message or
// string, which protobuf-c cannot size.
static void random_value(const ProtobufCFieldDescriptor *f, void *v, t_rng *r, int depth,
                         bool element) {
    const uint64_t b = random_bits(r);
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_ENUM:
        *(uint32_t *)v = (uint32_t)(t_rng_below(r, 4) ? b : (uint64_t)-(int64_t)(b & 0xffff));
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        *(float *)v = (float)random_double(r);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        *(double *)v = random_double(r);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        *(protobuf_c_boolean *)v = t_rng_below(r, 2);
        break;
    case PROTOBUF_C_TYPE_STRING:
        *(char **)v = element || t_rng_below(r, 4) ? random_string(r) : NULL;
        break;
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *bd = v;
        bd->len = (size_t)t_rng_below(r, 6);
        bd->data = bd->len ? block(bd->len) : NULL;
        for (size_t i = 0; i < bd->len; i++) {
            bd->data[i] = (uint8_t)t_rng_below(r, 256);
        }
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        *(ProtobufCMessage **)v = element || (depth < DEPTH && t_rng_below(r, 5))
                                      ? random_message(f->descriptor, r, depth + 1)
                                      : NULL;
        break;
    default:
        *(uint64_t *)v = b;
        break;
    }
}

static ProtobufCMessage *random_message(const ProtobufCMessageDescriptor *d, t_rng *r,
                                        int depth) {
    ProtobufCMessage *m = block(d->sizeof_message);
    d->message_init(m);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        uint8_t *member = (uint8_t *)m + f->offset, *q = (uint8_t *)m + f->quantifier_offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            const size_t n = depth < DEPTH ? (size_t)t_rng_below(r, 4) : 0;
            uint8_t *a = block(n * cd_pb_element_size(f->type));
            for (size_t k = 0; k < n; k++) {
                random_value(f, a + k * cd_pb_element_size(f->type), r, depth, true);
            }
            *(size_t *)q = n;
            *(uint8_t **)member = a;
        } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            // The members share memory: the last one chosen wins, case and value together.
            if (t_rng_below(r, 2)) {
                *(uint32_t *)q = f->id;
                random_value(f, member, r, depth, false);
            }
        } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
            random_value(f, member, r, depth, false);
            if (f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING) {
                *(protobuf_c_boolean *)q = t_rng_below(r, 2);
            }
        } else if (t_rng_below(r, 4)) {
            random_value(f, member, r, depth, false);
        }
    }
    return m;
}

// Packs m both ways and compares; then every buffer one byte short of it is refused.
static void same_bytes(const ProtobufCMessage *m) {
    const size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *want = malloc(n + 1), *got = malloc(n + 32);
    assert_non_null(want);
    assert_non_null(got);
    assert_int_equal(protobuf_c_message_pack(m, want), n);
    size_t len = 0;
    assert_int_equal(cd_pack_tail(m, got, n + 32, &len), 0);
    assert_int_equal(len, n);
    assert_memory_equal(got + 32, want, n);
    if (n > 0) {
        assert_int_equal(cd_pack_tail(m, got, n - 1, &len), -ENOBUFS);
    }
    // cd_codec_pack: the same body behind its length prefix, at the start of the buffer.
    assert_int_equal(cd_codec_pack(m, got, n + 32, &len), 0);
    assert_int_equal(len, cd_codec_packed_size(m));
    assert_memory_equal(got + len - n, want, n);
    free(want);
    free(got);
}

static void random_messages_pack_as_protobuf_c_does(void **state) {
    (void)state;
    static const ProtobufCMessageDescriptor *const tops[] = {
        &contactd__v1__client_message__descriptor,
        &contactd__v1__server_message__descriptor,
        &contactd__v1__record_entry__descriptor,
    };
    t_rng r = t_rng_seed(0x9acc);
    for (int t = 0; t < TRIALS; t++) {
        for (size_t k = 0; k < sizeof tops / sizeof tops[0]; k++) {
            same_bytes(random_message(tops[k], &r, 0));
            blocks_free();
        }
    }
}

// The cases one at a time, so a failure names its field kind.
static void edge_values(void **state) {
    (void)state;
    Contactd__V1__Vec3 v = CONTACTD__V1__VEC3__INIT;
    v.x = -0.0; // zero: left out, as protobuf-c does
    v.y = NAN;  // not zero: written
    v.z = 1e-300;
    same_bytes(&v.base);
    Contactd__V1__Error e = CONTACTD__V1__ERROR__INIT;
    e.code = (Contactd__V1__ErrorCode)-3; // a negative enum: ten bytes
    e.message = "";                       // empty: left out
    same_bytes(&e.base);
    Contactd__V1__Body body = CONTACTD__V1__BODY__INIT;
    double inertia[3] = {0.0, -0.0, NAN}; // packed repeated doubles: every element written
    body.n_inertia = 3;
    body.inertia = inertia;
    same_bytes(&body.base);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edge_values),
        cmocka_unit_test(random_messages_pack_as_protobuf_c_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
