/* SPDX-License-Identifier: MIT */
/* Writes seed inputs for the fuzz targets into a directory, from the scene files the tests use
 * (so no binary is kept in the repository): for fuzz_decode each scene as a packed ClientMessage
 * frame, plus a Hello and a StatsRequest; for fuzz_framing the same messages behind their length
 * prefixes, three per seed; for fuzz_result a Result of each scene's ids, as the daemon packs it,
 * with made-up forces, timing and a detail; for fuzz_step byte strings from a fixed generator (the
 * target makes a scene of any bytes). Usage: gen_seeds OUT_DIR SCENE.json... */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contactd.pb-c.h"
#include "wire/codec.h"
#include "wire/framing.h"
#include "solver/contact.h"
#include "wire/scene_json.h"

#include <sys/stat.h>

enum { STEP_SEEDS = 32, STEP_BYTES = 512 };

static int write_file(const char *dir, const char *name, int i, const uint8_t *buf, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%d", dir, name, i);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n) {
        perror(path);
        if (f) {
            fclose(f);
        }
        return -1;
    }
    return fclose(f);
}

// msg packed without (decode) and with (framing, three times over) its length prefix.
static int write_seeds(const char *dir, int i, const ProtobufCMessage *msg) {
    const size_t n = cd_codec_packed_size(msg);
    uint8_t *buf = malloc(3 * n + 2);
    size_t len;
    if (!buf || cd_codec_pack(msg, buf + 2, n, &len) < 0) {
        free(buf);
        return -1;
    }
    int r = 0;
    // The decode seed is the body alone: skip the varint in front of it.
    uint64_t body;
    const int pre = cd_varint_decode(buf + 2, len, &body);
    r |= write_file(dir, "decode", i, buf + 2 + pre, (size_t)body);
    buf[0] = 7;  // fuzz_framing: chunk-size bytes
    buf[1] = 3;
    memcpy(buf + 2 + len, buf + 2, len);
    memcpy(buf + 2 + 2 * len, buf + 2, len);
    r |= write_file(dir, "framing", i, buf, 2 + 3 * len);
    free(buf);
    return r;
}

// A Result for s as the daemon would send it (ids in scene order, forces and timing made up).
static int write_result(const char *dir, int i, cd_result_msg *holder, const cs_scene *s,
                        const cs_limits *lim) {
    void *mem = malloc(cs_result_size(lim));
    if (!mem) {
        return -1;
    }
    cs_result r;
    cs_result_init(&r, mem, lim);
    r.status = i % 2 ? CS_FALLBACK : CS_CONVERGED;
    r.answer = i % 2 ? CS_ANSWER_LAST_CERTIFIED : CS_ANSWER_SOLVER;
    r.solver = CS_SOLVER_LEMKE;
    r.seq = s->seq;
    r.nc = s->nc, r.nb = s->nb, r.nj = s->nj;
    for (int k = 0; k < s->nc; k++) {
        r.contact_id[k] = s->contacts[k].id;
        r.state[k] = (uint8_t)(1 + k % 3);
        for (int c = 0; c < 3; c++) {
            r.impulse[3 * k + c] = 0.01 * (k + 1) * (c + 1);
            r.force[3 * k + c] = -1.5 * (k + 1) + c;
        }
    }
    for (int b = 0; b < s->nb; b++) {
        r.body_id[b] = s->bodies[b].id;
        for (int c = 0; c < 6; c++) {
            r.v[6 * b + c] = 0.001 * (b + 1) * (c - 2);
        }
    }
    const cd_timing t = {.received_ns = 1000000, .release_ns = 1000000,
                         .solve_start_ns = 1002000, .solve_ns = 12000,
                         .deadline_ns = 1800000, .sent_ns = 1015000, .deadline_met = true};
    const Contactd__V1__ServerMessage *m =
        cd_codec_result_build(holder, &r, &t, (uint64_t)i, i % 2 ? "fell back" : NULL);
    int ret = -1;
    uint8_t *buf = m ? malloc(cd_codec_packed_size(&m->base)) : NULL;
    size_t len;
    uint64_t body;
    if (buf && cd_codec_pack(&m->base, buf, cd_codec_packed_size(&m->base), &len) == 0) {
        const int pre = cd_varint_decode(buf, len, &body);
        ret = write_file(dir, "result", i, buf + pre, (size_t)body);
    }
    free(buf);
    free(mem);
    return ret;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: gen_seeds OUT_DIR SCENE.json...\n");
        return 2;
    }
    if (mkdir(argv[1], 0755) < 0 && errno != EEXIST) {
        perror(argv[1]);
        return 1;
    }
    const cs_limits lim = {.max_bodies = 64, .max_contacts = 256, .max_joints = 16,
                           .max_dirs = 16};
    cd_frame_msg fm;
    cd_result_msg rm;
    if (cd_codec_frame_msg_init(&fm, &lim) < 0 || cd_codec_result_msg_init(&rm, &lim) < 0) {
        return 1;
    }
    int i = 0, r = 0;
    for (int a = 2; a < argc; a++) {
        cs_scene s;
        char err[256];
        if (cd_scene_json_load(argv[a], cs_scene_validate, &s, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        const Contactd__V1__ClientMessage *m = cd_codec_frame_build(&fm, &s);
        r |= write_result(argv[1], i, &rm, &s, &lim);
        r |= m ? write_seeds(argv[1], i++, &m->base) : -1;
        cd_scene_json_free(&s);
    }
    Contactd__V1__Hello h = CONTACTD__V1__HELLO__INIT;
    h.protocol_version = 1;
    h.client_name = "seed";
    Contactd__V1__ClientMessage env = CONTACTD__V1__CLIENT_MESSAGE__INIT;
    env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_HELLO;
    env.hello = &h;
    r |= write_seeds(argv[1], i++, &env.base);
    Contactd__V1__StatsRequest sr = CONTACTD__V1__STATS_REQUEST__INIT;
    env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_STATS_REQUEST;
    env.stats_request = &sr;
    r |= write_seeds(argv[1], i++, &env.base);
    cd_codec_frame_msg_fini(&fm);
    cd_codec_result_msg_fini(&rm);
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int k = 0; k < STEP_SEEDS; k++) {
        uint8_t bytes[STEP_BYTES];
        for (int j = 0; j < STEP_BYTES; j++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            bytes[j] = (uint8_t)(x >> 56);
        }
        r |= write_file(argv[1], "step", k, bytes, sizeof bytes);
    }
    return r ? 1 : 0;
}
