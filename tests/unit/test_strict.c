/* SPDX-License-Identifier: MIT */
/* strict: a message field given twice, and a string holding a NUL byte, are found and named at
 * any depth, whatever else the message holds; repeated fields, scalars given twice and unknown
 * fields are not; malformed bytes end the search without a finding. Also pinned: protobuf-c's own
 * unpack does not merge the two and cuts the string (the reasons the daemon refuses them), so this
 * test says when a newer protobuf-c does otherwise. */
#include <stdio.h>
#include <string.h>

#include "testlib.h"

#include "contactd.pb-c.h"
#include "scene_gen.h"
#include "wire/codec.h"
#include "wire/strict.h"

// Field numbers and wire types of contactd.proto, as far as these messages use them.
enum { WT_I64 = 1, WT_LEN_ = 2 };
enum { MSG_HELLO = 1, MSG_FRAME = 2, HELLO_NAME = 2, HELLO_LIMITS = 5, HELLO_SOLVERS = 8,
       FRAME_DT = 2, FRAME_GRAVITY = 3, FRAME_BODIES = 5, FRAME_SOLVER_NAME = 8, BODY_ID = 1,
       BODY_V = 6, LIMITS_BODIES = 1 };

typedef struct buf {
    uint8_t b[512];
    size_t n;
} buf;

static void put_varint(buf *o, uint64_t v) {
    while (v >= 0x80) {
        o->b[o->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o->b[o->n++] = (uint8_t)v;
}

static void put_tag(buf *o, unsigned field, unsigned wt) { put_varint(o, field << 3 | wt); }

static void put_double(buf *o, unsigned field, double x) {
    put_tag(o, field, WT_I64);
    memcpy(o->b + o->n, &x, 8); // the wire is little-endian, as is every host this builds on
    o->n += 8;
}

static void put_message(buf *o, unsigned field, const buf *inner) {
    put_tag(o, field, WT_LEN_);
    put_varint(o, inner->n);
    memcpy(o->b + o->n, inner->b, inner->n);
    o->n += inner->n;
}

static void put_bytes(buf *o, unsigned field, const char *bytes, size_t n) {
    put_tag(o, field, WT_LEN_);
    put_varint(o, n);
    memcpy(o->b + o->n, bytes, n);
    o->n += n;
}

static buf vec(unsigned component, double x) {
    buf v = {.n = 0};
    put_double(&v, component, x);
    return v;
}

// A ClientMessage holding inner as its field.
static buf envelope(unsigned field, const buf *inner) {
    buf e = {.n = 0};
    put_message(&e, field, inner);
    return e;
}

static cd_strict found(const buf *m, char *path, size_t pathlen) {
    return cd_strict_check(&contactd__v1__client_message__descriptor, m->b, m->n, path, pathlen);
}

static void assert_names(const buf *m, cd_strict want, const char *path_want) {
    char path[96];
    assert_int_equal(found(m, path, sizeof path), want);
    assert_string_equal(path, path_want);
}

static void assert_none(const buf *m) {
    char path[96];
    assert_int_equal(found(m, path, sizeof path), CD_STRICT_OK);
}

static void twice_is_named_at_any_depth(void **state) {
    (void)state;
    const buf gx = vec(1, 1.0), gz = vec(3, -9.81);
    buf f = {.n = 0};
    put_message(&f, FRAME_GRAVITY, &gx);
    put_double(&f, FRAME_DT, 1e-3);
    put_message(&f, FRAME_GRAVITY, &gz);
    buf m = envelope(MSG_FRAME, &f);
    assert_names(&m, CD_STRICT_TWICE, "frame.gravity");

    // The second body's velocity, given twice; the first body's once.
    buf b0 = {.n = 0}, b1 = {.n = 0};
    put_varint((put_tag(&b0, BODY_ID, 0), &b0), 1);
    put_message(&b0, BODY_V, &gx);
    put_varint((put_tag(&b1, BODY_ID, 0), &b1), 2);
    put_message(&b1, BODY_V, &gx);
    put_message(&b1, BODY_V, &gz);
    f.n = 0;
    put_message(&f, FRAME_BODIES, &b0);
    put_message(&f, FRAME_BODIES, &b1);
    m = envelope(MSG_FRAME, &f);
    assert_names(&m, CD_STRICT_TWICE, "frame.bodies[1].linear_velocity");

    // The frame itself twice (two messages concatenated).
    buf two = envelope(MSG_FRAME, &b0);
    const buf more = envelope(MSG_FRAME, &b0);
    memcpy(two.b + two.n, more.b, more.n);
    two.n += more.n;
    assert_names(&two, CD_STRICT_TWICE, "frame");

    // A Hello's limits twice.
    buf lim = {.n = 0};
    put_varint((put_tag(&lim, LIMITS_BODIES, 0), &lim), 4);
    buf h = {.n = 0};
    put_message(&h, HELLO_LIMITS, &lim);
    put_message(&h, HELLO_LIMITS, &lim);
    m = envelope(MSG_HELLO, &h);
    assert_names(&m, CD_STRICT_TWICE, "hello.limits");

    // A path longer than its room is cut, and still a string.
    char small[9];
    assert_int_equal(found(&(buf){0}, small, 0), CD_STRICT_OK);
    m = envelope(MSG_FRAME, &f);
    assert_int_equal(found(&m, small, sizeof small), CD_STRICT_TWICE);
    assert_string_equal(small, "frame.bo");
}

static void nul_in_a_string_is_named(void **state) {
    (void)state;
    // A frame's solver name, after a clean one would have ended.
    buf f = {.n = 0};
    put_double(&f, FRAME_DT, 1e-3);
    put_bytes(&f, FRAME_SOLVER_NAME, "lemke\0x", 7);
    buf m = envelope(MSG_FRAME, &f);
    assert_names(&m, CD_STRICT_NUL, "frame.solver_name");
    // The second of a Hello's solvers; its client name, alone.
    buf h = {.n = 0};
    put_bytes(&h, HELLO_NAME, "probe", 5);
    put_bytes(&h, HELLO_SOLVERS, "sap", 3);
    put_bytes(&h, HELLO_SOLVERS, "\0", 1);
    m = envelope(MSG_HELLO, &h);
    assert_names(&m, CD_STRICT_NUL, "hello.solvers[1]");
    h.n = 0;
    put_bytes(&h, HELLO_NAME, "a\0b", 3);
    m = envelope(MSG_HELLO, &h);
    assert_names(&m, CD_STRICT_NUL, "hello.client_name");
    // Clean strings, an empty one too, pass; so does a NUL in an unknown field.
    h.n = 0;
    put_bytes(&h, HELLO_NAME, "", 0);
    put_bytes(&h, HELLO_SOLVERS, "sap", 3);
    put_bytes(&h, 30, "\0", 1);
    m = envelope(MSG_HELLO, &h);
    assert_none(&m);
    // What protobuf-c makes of the first: the name cut at the NUL.
    f.n = 0;
    put_bytes(&f, FRAME_SOLVER_NAME, "lemke\0x", 7);
    m = envelope(MSG_FRAME, &f);
    Contactd__V1__ClientMessage *u = contactd__v1__client_message__unpack(NULL, m.n, m.b);
    assert_non_null(u);
    assert_string_equal(u->frame->solver_name, "lemke");
    contactd__v1__client_message__free_unpacked(u, NULL);
}

static void others_are_not_found(void **state) {
    (void)state;
    // Every frame the codec writes.
    static uint8_t out[16384];
    static t_gen_scene g;
    const cs_limits lim = {.max_bodies = 8, .max_contacts = 64, .max_joints = 4, .max_dirs = 16};
    for (uint64_t seed = 1; seed <= 20; seed++) {
        t_gen_random(&g, 1 + (int)(seed % 4), 1 + (int)(seed % 12), 8, seed);
        cd_frame_msg fm;
        assert_int_equal(cd_codec_frame_msg_init(&fm, &lim), 0);
        const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&fm, &g.s);
        const size_t n = protobuf_c_message_pack(&env->base, out);
        cd_codec_frame_msg_fini(&fm);
        char path[96];
        assert_int_equal(cd_strict_check(&contactd__v1__client_message__descriptor, out, n, path,
                                         sizeof path),
                         CD_STRICT_OK);
    }
    // A scalar twice, bodies (a repeated field), an unknown message-shaped field, a fixed32.
    const buf gx = vec(1, 1.0);
    buf f = {.n = 0};
    put_double(&f, FRAME_DT, 1e-3);
    put_double(&f, FRAME_DT, 2e-3);
    put_message(&f, FRAME_BODIES, &gx);
    put_message(&f, FRAME_BODIES, &gx);
    put_message(&f, 30, &gx);
    put_message(&f, 30, &gx);
    put_tag(&f, 31, 5);
    memset(f.b + f.n, 0, 4);
    f.n += 4;
    put_message(&f, FRAME_GRAVITY, &gx);
    buf m = envelope(MSG_FRAME, &f);
    assert_none(&m);
    // Cut anywhere, the same bytes hold no repeat (nor crash the search).
    for (size_t cut = 0; cut < m.n; cut++) {
        buf c = m;
        c.n = cut;
        assert_none(&c);
    }
    // A group's tag ends the search.
    buf grp = {.n = 0};
    put_tag(&grp, 5, 3);
    assert_none(&grp);
}

// What protobuf-c makes of gravity {x: 1} then {z: -9.81}: protobuf's merge would give (1, 0,
// -9.81); 1.4 gives (0, 0, -9.81). Should a newer one merge, the refusal can be revisited.
static void protobuf_c_does_not_merge(void **state) {
    (void)state;
    const buf gx = vec(1, 1.0), gz = vec(3, -9.81);
    buf f = {.n = 0};
    put_message(&f, FRAME_GRAVITY, &gx);
    put_message(&f, FRAME_GRAVITY, &gz);
    const buf m = envelope(MSG_FRAME, &f);
    Contactd__V1__ClientMessage *u = contactd__v1__client_message__unpack(NULL, m.n, m.b);
    assert_non_null(u);
    assert_non_null(u->frame->gravity);
    assert_true(u->frame->gravity->z == -9.81);
    assert_true(u->frame->gravity->x == 0.0);
    contactd__v1__client_message__free_unpacked(u, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(twice_is_named_at_any_depth),
        cmocka_unit_test(nul_in_a_string_is_named),
        cmocka_unit_test(others_are_not_found),
        cmocka_unit_test(protobuf_c_does_not_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
