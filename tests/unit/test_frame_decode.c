/* SPDX-License-Identifier: MIT */
/* frame_decode: the fast path gives, for every frame it takes, the scene the general path
 * (protobuf-c's unpack, wire/strict.h's refusals, then cd_codec_scene_from_frame) gives; it
 * takes the frames clients send (every field present, or proto3's omissions), and declines what
 * the general path must word, skip or take the last of (unknown fields, fields given twice,
 * unpacked inertia, anything over the limits or refused by the codec, malformed bytes), and on
 * bytes mutated at random it never disagrees; the seq of a frame that is not decoded is read as
 * protobuf-c reads it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "scene_gen.h"
#include "scene_same.h"
#include "wire/codec.h"
#include "wire/frame_decode.h"
#include "wire/strict.h"

static const cs_limits lim = {.max_bodies = 8, .max_contacts = 64, .max_joints = 4, .max_dirs = 16};

enum { BUF = 16384 };

// Storage for a decoded scene within lim.
typedef struct holder {
    cs_scene s;
    cs_body bodies[8];
    cs_contact contacts[64];
    cs_joint joints[4];
} holder;

static void holder_init(holder *h) {
    memset(h, 0, sizeof *h);
    h->s = (cs_scene){.bodies = h->bodies, .contacts = h->contacts, .joints = h->joints};
}

// The general path on data as the daemon takes it: 0 and the scene in h, or the refusal (-1: not
// a Frame; CS_EINPUT for what wire/strict.h refuses, the codec's code otherwise).
static int general(const uint8_t *data, size_t len, holder *h) {
    holder_init(h);
    Contactd__V1__ClientMessage *m = contactd__v1__client_message__unpack(NULL, len, data);
    if (m && cd_strict_check(&contactd__v1__client_message__descriptor, data, len, NULL, 0) !=
                 CD_STRICT_OK) {
        contactd__v1__client_message__free_unpacked(m, NULL);
        return CS_EINPUT;
    }
    if (!m || m->msg_case != CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME) {
        if (m) {
            contactd__v1__client_message__free_unpacked(m, NULL);
        }
        return -1;
    }
    const int r = cd_codec_scene_from_frame(m->frame, &lim, CS_SOLVER_SAP, &h->s, NULL, 0);
    contactd__v1__client_message__free_unpacked(m, NULL);
    return r;
}

// 1 when the fast path takes data (its scene in h), else 0.
static int fast(const uint8_t *data, size_t len, holder *h) {
    holder_init(h);
    return cd_frame_decode(data, len, &lim, CS_SOLVER_SAP, &h->s);
}

// The fast path takes data and gives the general path's scene.
static void assert_taken_alike(const uint8_t *data, size_t len) {
    holder f, g;
    assert_int_equal(fast(data, len, &f), 1);
    assert_int_equal(general(data, len, &g), 0);
    assert_true(t_scene_same(&f.s, &g.s));
}

// The bytes of a ClientMessage (no length prefix).
static size_t pack_env(const Contactd__V1__ClientMessage *env, uint8_t *out) {
    const size_t n = protobuf_c_message_get_packed_size(&env->base);
    assert_true(n <= BUF);
    assert_int_equal(protobuf_c_message_pack(&env->base, out), n);
    return n;
}

// s as the codec writes it (every field present).
static size_t pack_scene(const cs_scene *s, uint8_t *out) {
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &lim), 0);
    const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&fm, s);
    assert_non_null(env);
    const size_t n = pack_env(env, out);
    cd_codec_frame_msg_fini(&fm);
    return n;
}

// Generated scenes, and one with a kinematic body and joints: taken, alike, and a frame that
// names no solver gets the session's.
static void codec_frames_taken_alike(void **state) {
    (void)state;
    static uint8_t buf[BUF];
    static t_gen_scene g;
    for (int k = 0; k < 30; k++) {
        const uint64_t seed = 100 + (uint64_t)k;
        switch (k % 3) {
        case 0: t_gen_peg(&g, 8 * (1 + k % 4), 0.5, 8, seed); break;
        case 1: t_gen_stack(&g, 1 + k % 4, k % 2, 0.6, 8, seed); break;
        default: t_gen_random(&g, 1 + k % 8, 1 + (k * 7) % 64, 8, seed); break;
        }
        g.s.seq = seed;
        g.s.friction_dirs = k % 2 ? 4 : 8;
        g.s.solver = (cs_solver)(k % CS_SOLVER_COUNT);
        const size_t n = pack_scene(&g.s, buf);
        assert_taken_alike(buf, n);
        holder f;
        assert_int_equal(fast(buf, n, &f), 1);
        assert_int_equal(f.s.nc, g.s.nc);
        assert_int_equal(f.s.solver, g.s.solver == CS_SOLVER_DEFAULT ? CS_SOLVER_SAP : g.s.solver);
    }

    cs_body b[2] = {
        {.id = 3, .mass = 2, .inertia = {1, 0, 0, 0, 2, 0, 0, 0, 3}, .quat = {1, 0, 0, 0}},
        {.id = 4, .kinematic = true, .quat = {0.5, 0.5, 0.5, 0.5}, .v = {0.1, 0, 0}},
    };
    cs_contact c = {.id = UINT64_MAX, .body_a = 3, .body_b = 4, .normal = {0, 0, 1}, .mu = 0.4,
                    .distance = -1e-3, .stiffness = 1e6, .dissipation = 0.01};
    cs_joint j[2] = {
        {.id = 1, .body_a = 3, .body_b = 0, .kind = CS_JOINT_BALL, .anchor = {0, 0, 1}},
        {.id = 2, .body_a = 3, .body_b = 4, .kind = CS_JOINT_HINGE, .axis = {0, 1, 0}},
    };
    const cs_scene s = {.seq = 9, .dt = 1e-3, .gravity = {0, 0, -9.81}, .friction_dirs = 16,
                        .penetration_recovery = 0.2,
                        .solver = CS_SOLVER_DANTZIG, .nb = 2, .nc = 1, .nj = 2,
                        .bodies = b, .contacts = &c, .joints = j};
    assert_taken_alike(buf, pack_scene(&s, buf));
}

// Moves *p past a varint; returns its value.
static uint64_t skip_varint(const uint8_t **p) {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        const uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            return v;
        }
    }
}

// Frames as other clients may write them: omitted vectors and orientation, an orientation given
// empty, no friction_directions, solver by name or "" (then the enum), a kinematic body with no
// inertia, fields in another order.
static void sparse_frames_taken_alike(void **state) {
    (void)state;
    static uint8_t buf[BUF];
    double inertia[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    Contactd__V1__Quat empty_q = CONTACTD__V1__QUAT__INIT;
    Contactd__V1__Vec3 normal = CONTACTD__V1__VEC3__INIT;
    normal.z = 1;
    Contactd__V1__Body b[3] = {CONTACTD__V1__BODY__INIT, CONTACTD__V1__BODY__INIT,
                               CONTACTD__V1__BODY__INIT};
    b[0].id = 1, b[0].mass = 1, b[0].n_inertia = 9, b[0].inertia = inertia;
    b[1].id = 2, b[1].mass = 1, b[1].n_inertia = 9, b[1].inertia = inertia;
    b[1].orientation = &empty_q;
    b[2].id = 3, b[2].kinematic = true;
    Contactd__V1__Body *bp[3] = {&b[0], &b[1], &b[2]};
    Contactd__V1__Contact c = CONTACTD__V1__CONTACT__INIT;
    c.id = 5, c.body_a = 1, c.normal = &normal;
    Contactd__V1__Contact *cp[1] = {&c};
    Contactd__V1__Frame f = CONTACTD__V1__FRAME__INIT;
    f.dt = 1e-3, f.n_bodies = 3, f.bodies = bp, f.n_contacts = 1, f.contacts = cp;
    Contactd__V1__ClientMessage env = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME;
    env.frame = &f;
    static const struct {
        const char *name;
        Contactd__V1__Solver solver;
    } choices[] = {{NULL, CONTACTD__V1__SOLVER__SOLVER_DEFAULT},
                   {"", CONTACTD__V1__SOLVER__SOLVER_NCP},
                   {"lemke", CONTACTD__V1__SOLVER__SOLVER_DANTZIG},
                   {"default", CONTACTD__V1__SOLVER__SOLVER_LEMKE}};
    for (size_t k = 0; k < sizeof choices / sizeof choices[0]; k++) {
        f.solver_name = (char *)choices[k].name;
        f.solver = choices[k].solver;
        assert_taken_alike(buf, pack_env(&env, buf));
    }
    holder h;
    assert_int_equal(fast(buf, pack_env(&env, buf), &h), 1);
    assert_int_equal(h.s.friction_dirs, CS_DIRS_DEFAULT);
    assert_true(h.s.bodies[0].quat[0] == 1.0 && h.s.bodies[1].quat[0] == 0.0);

    // The frame's fields last to first: the same scene.
    f.solver_name = NULL;
    f.seq = 77;
    f.friction_directions = 4;
    const size_t len = pack_env(&env, buf);
    static uint8_t rev[BUF];
    const uint8_t *q = buf + 1;
    skip_varint(&q); // the envelope: tag 0x12, the frame's length, the frame
    const size_t head = (size_t)(q - buf);
    const uint8_t *starts[32];
    size_t sizes[32], nf = 0;
    while (q < buf + len) {
        assert_true(*q < 0x80 && nf < 32); // one-byte tags: every field number is below 16
        const uint8_t wt = *q & 7;
        starts[nf] = q++;
        if (wt == 0) {
            skip_varint(&q);
        } else if (wt == 1) {
            q += 8;
        } else {
            q += skip_varint(&q);
        }
        sizes[nf] = (size_t)(q - starts[nf]);
        nf++;
    }
    assert_int_equal(q - buf, len);
    memcpy(rev, buf, head);
    size_t n = head;
    while (nf > 0) {
        nf--;
        memcpy(rev + n, starts[nf], sizes[nf]);
        n += sizes[nf];
    }
    assert_memory_not_equal(rev, buf, len);
    assert_taken_alike(rev, n);
}

// What the fast path must leave to the general path, each given both ways where it can be.
static void unusual_frames_declined(void **state) {
    (void)state;
    static uint8_t buf[BUF], alt[BUF];
    static t_gen_scene g;
    t_gen_peg(&g, 16, 0.5, 8, 1);
    g.s.solver = CS_SOLVER_LEMKE;
    const size_t n = pack_scene(&g.s, buf);
    holder h;
    assert_int_equal(fast(buf, n, &h), 1);

    static const struct {
        const char *what;
        uint8_t bytes[16];
        size_t len;
        int general; // the general path's answer: 0 takes it (last wins, or skipped), else refuses
    } extra[] = {
        {"an unknown varint field", {0x58, 0x01}, 2, 0},           // field 11
        {"dt again", {0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 9, 0}, // last one wins
        {"gravity again, not a Vec3", {0x1a, 0x02, 0x08, 0x01}, 4, -1}, // x is a double
        {"gravity again", {0x1a, 0x09, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 11, CS_EINPUT},
        {"seq as a double", {0x09, 0, 0, 0, 0, 0, 0, 0, 0}, 9, -1},
        {"an unknown solver name", {0x42, 0x03, 'f', 'o', 'o'}, 5, CS_EINPUT},
        {"a solver name with a space", {0x42, 0x04, 's', 'a', 'p', ' '}, 6, CS_EINPUT},
        {"a solver beyond the enum", {0x38, 0x63}, 2, CS_EINPUT},
        {"friction_directions over the limit", {0x20, 0x11}, 2, CS_ENOSPACE},
        {"a field numbered 0", {0x00, 0x01}, 2, -1},
        {"a truncated varint", {0x08, 0xff}, 2, -1},
        {"an eleven-byte varint", {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0x01}, 12, -1},
        {"a body with inertia unpacked",
         {0x2a, 0x0b, 0x08, 0x09, 0x19, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 13, CS_EINPUT},
        {"a body with empty inertia", {0x2a, 0x04, 0x08, 0x09, 0x1a, 0x00}, 6, CS_EINPUT},
        {"a kinematic body with inertia",
         {0x2a, 0x0e, 0x08, 0x09, 0x50, 0x01, 0x1a, 0x08, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 16,
         CS_EINPUT},
        {"a contact with an unknown field", {0x32, 0x02, 0x58, 0x01}, 4, 0},
    };
    for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++) {
        const size_t m = t_envelope_plus(buf, n, extra[k].bytes, extra[k].len, alt);
        if (fast(alt, m, &h) != 0) {
            fail_msg("taken: %s", extra[k].what);
        }
        holder gh;
        const int r = general(alt, m, &gh);
        if (extra[k].general == 0 ? r != 0 : r == 0) {
            fail_msg("the general path %s %s (%d)", r ? "refuses" : "takes", extra[k].what, r);
        }
    }

    // Over the limits: one body, contact or joint too many; a Hello; bytes after the frame; the
    // frame cut short.
    const cs_limits small = {.max_bodies = 0, .max_contacts = 15, .max_joints = 0, .max_dirs = 8};
    holder_init(&h);
    assert_int_equal(cd_frame_decode(buf, n, &small, CS_SOLVER_SAP, &h.s), 0);
    const cs_limits fewer = {.max_bodies = 1, .max_contacts = 15, .max_joints = 0, .max_dirs = 8};
    assert_int_equal(cd_frame_decode(buf, n, &fewer, CS_SOLVER_SAP, &h.s), 0);
    static const uint8_t hello[] = {0x0a, 0x02, 0x08, 0x01};
    assert_int_equal(fast(hello, sizeof hello, &h), 0);
    memcpy(alt, buf, n);
    alt[n] = 0x1a; // a stats_request after the frame
    alt[n + 1] = 0x00;
    assert_int_equal(fast(alt, n + 2, &h), 0);
    for (size_t cut = 0; cut < n; cut += 7) {
        assert_int_equal(fast(buf, cut, &h), 0);
    }
}

// Random mutations of real frames (bytes changed, dropped, inserted; the end cut): whatever the
// fast path takes, the general path turns into the same scene. Many mutants change only numbers,
// so the fast path takes a good share of them; the count shows the check ran.
static void mutants_agree(void **state) {
    (void)state;
    static uint8_t buf[BUF], mut[BUF];
    static t_gen_scene g;
    t_rng rng = t_rng_seed(7);
    int taken = 0, tried = 0;
    for (int k = 0; k < 40; k++) {
        t_gen_random(&g, 1 + k % 4, 1 + k % 12, 8, 1000 + (uint64_t)k);
        const size_t n = pack_scene(&g.s, buf);
        for (int t = 0; t < 500; t++) {
            memcpy(mut, buf, n);
            const size_t m = t_mutate(&rng, mut, n);
            holder f, gh;
            tried++;
            if (fast(mut, m, &f) == 1) {
                taken++;
                assert_int_equal(general(mut, m, &gh), 0);
                assert_true(t_scene_same(&f.s, &gh.s));
            }
        }
    }
    printf("# %d of %d mutants taken by the fast path, all alike\n", taken, tried);
    assert_true(taken > tried / 20);
}

// The seq of a frame that is not decoded (cd_frame_seq) is the one protobuf-c reads, for the
// codec's frames and their mutants; a message that is no frame has none.
static void seq_read_without_decoding(void **state) {
    (void)state;
    static uint8_t buf[BUF], mut[BUF];
    static t_gen_scene g;
    t_rng rng = t_rng_seed(11);
    uint64_t seq;
    int read = 0;
    for (int k = 0; k < 20; k++) {
        t_gen_random(&g, 1 + k % 4, 1 + (k * 13) % 64, 8, 2000 + (uint64_t)k);
        g.s.seq = UINT64_MAX - (uint64_t)k;
        const size_t n = pack_scene(&g.s, buf);
        assert_int_equal(cd_frame_seq(buf, n, &seq), 1);
        assert_true(seq == g.s.seq);
        for (int t = 0; t < 200; t++) {
            memcpy(mut, buf, n);
            const size_t m = t_mutate(&rng, mut, n);
            Contactd__V1__ClientMessage *cm = contactd__v1__client_message__unpack(NULL, m, mut);
            if (cd_frame_seq(mut, m, &seq) == 1 && cm &&
                cm->msg_case == CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME) {
                assert_true(seq == cm->frame->seq);
                read++;
            }
            if (cm) {
                contactd__v1__client_message__free_unpacked(cm, NULL);
            }
        }
    }
    printf("# %d mutants' seq read as protobuf-c reads it\n", read);
    assert_true(read > 0);
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    Contactd__V1__ClientMessage env = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_HELLO;
    env.hello = &h;
    assert_int_equal(cd_frame_seq(buf, pack_env(&env, buf), &seq), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(codec_frames_taken_alike),
        cmocka_unit_test(sparse_frames_taken_alike),
        cmocka_unit_test(unusual_frames_declined),
        cmocka_unit_test(mutants_agree),
        cmocka_unit_test(seq_read_without_decoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
