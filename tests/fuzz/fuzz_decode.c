/* SPDX-License-Identifier: MIT */
/* Fuzz target: what the server does with one message's bytes, on either thread. The bytes are
 * unpacked as a ClientMessage into a fixed arena (a worker's, the request path) and into a
 * growing one (the I/O thread's); a Frame is then turned into a scene and validated against a
 * session's limits (io/ingest.h), and a valid scene must fit those limits. Whatever decodes is
 * packed again by wire/pack.c and by protobuf-c, and the bytes must be the same. The frame fast
 * path (wire/frame_decode.h) must take only what that general path turns into a scene (nothing
 * wire/strict.h refuses), and give the same scene. Nothing may crash, leak or read out of
 * bounds whatever the bytes. */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "contactd.pb-c.h"
#include "fuzz.h"
#include "wire/arena.h"
#include "io/ingest.h"
#include "wire/codec.h"
#include "wire/frame_decode.h"
#include "scene_same.h"
#include "wire/pack.h"
#include "wire/strict.h"

static const cs_limits lim = {.max_bodies = 8, .max_contacts = 32, .max_joints = 4,
                              .max_dirs = 16};

// Packs m both ways: the one-pass packer must give protobuf-c's bytes.
static void same_packing(const ProtobufCMessage *m) {
    const size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *want = malloc(n + 1), *got = malloc(n + 1);
    size_t len;
    if (want && got &&
        (protobuf_c_message_pack(m, want) != n || cd_pack_tail(m, got, n + 1, &len) != 0 ||
         len != n || memcmp(got + 1, want, n) != 0)) {
        abort();
    }
    free(want);
    free(got);
}

// fast: the fast path's scene, or NULL when it declined the bytes.
static void decode(cd_arena *a, const uint8_t *data, size_t size, cs_scene *scene,
                   const cs_scene *fast) {
    Contactd__V1__ClientMessage *m =
        contactd__v1__client_message__unpack(&a->allocator, size, data);
    if (m) {
        same_packing(&m->base);
    }
    // The fast path declines what the daemon refuses for protobuf-c's sake (wire/strict.h).
    char path[64];
    const bool refused = m && cd_strict_check(&contactd__v1__client_message__descriptor, data,
                                              size, path, sizeof path) != CD_STRICT_OK;
    if (refused && path[0] == '\0') {
        abort(); // the refusal names the field
    }
    if (fast && (!m || refused || m->msg_case != CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME ||
                 cd_codec_scene_from_frame(m->frame, &lim, CS_SOLVER_LEMKE, scene, NULL, 0) != 0 ||
                 !t_scene_same(fast, scene))) {
        abort();
    }
    if (m && m->msg_case == CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME) {
        char err[256];
        const int r = cd_ingest_frame(m->frame, &lim, CS_SOLVER_LEMKE, scene, err, sizeof err);
        if (r == 0 && (scene->nb > lim.max_bodies || scene->nc > lim.max_contacts ||
                       scene->nj > lim.max_joints)) {
            abort();
        }
        if (r != 0 && err[0] == '\0') {
            abort(); // a refusal always names the field
        }
    }
    cd_arena_reset(a, 1 << 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cs_body bodies[8];
    static cs_contact contacts[32];
    static cs_joint joints[4];
    cs_scene scene = {.bodies = bodies, .contacts = contacts, .joints = joints};
    static cs_body fast_bodies[8];
    static cs_contact fast_contacts[32];
    static cs_joint fast_joints[4];
    cs_scene fast = {.bodies = fast_bodies, .contacts = fast_contacts, .joints = fast_joints};
    const bool taken = cd_frame_decode(data, size, &lim, CS_SOLVER_LEMKE, &fast) == 1;
    static alignas(max_align_t) unsigned char fixed_mem[16384];
    cd_arena fixed, growing;
    if (cd_arena_init(&fixed, 64) < 0) {
        return 0;
    }
    cd_arena_fix(&fixed, fixed_mem, sizeof fixed_mem);
    decode(&fixed, data, size, &scene, taken ? &fast : NULL);
    cd_arena_fini(&fixed);
    if (cd_arena_init(&growing, 256) == 0) {
        decode(&growing, data, size, &scene, taken ? &fast : NULL);
        cd_arena_fini(&growing);
    }
    return 0;
}
