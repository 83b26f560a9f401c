/* SPDX-License-Identifier: MIT */
/* A ClientMessage{frame}'s bytes straight into a cs_scene, without protobuf-c: the daemon's path
 * for every frame. protobuf-c's unpack of a 16-contact frame (about 1 KB) costs a worker some
 * 4 us, as much as a third of a small solve, most of it in walking descriptors and sizing arrays
 * before filling them; the frame's layout is fixed, so it is read here in one pass.
 * It is a fast path, not a second codec: it takes only what it can answer exactly like
 * protobuf-c's unpack followed by cd_codec_scene_from_frame (wire/codec.h), and declines the rest
 * (unknown fields, a singular field given twice, unpacked inertia, a long or unusual solver name,
 * anything malformed, anything that conversion or the session's limits would refuse), which the
 * caller then takes through that general path, so every error is worded in one place.
 * tests/unit/test_frame_decode.c and the decode fuzzer hold the two paths to the same scenes. */
#ifndef CONTACTD_WIRE_FRAME_DECODE_H
#define CONTACTD_WIRE_FRAME_DECODE_H
#include <stddef.h>
#include <stdint.h>
#include "wire/types.h"

/* Decodes data[0, len), one ClientMessage without its length prefix, into out when it is a Frame
 * the fast path takes: out is then what cd_codec_scene_from_frame(unpacked frame, lim,
 * default_solver, out) gives, and 1 is returned. Returns 0 otherwise (out's arrays may hold
 * partial data, as after a failed conversion). out->bodies, out->contacts and out->joints must
 * point to storage for lim's maxima, as for cd_codec_scene_from_frame; nothing is validated
 * beyond the wire (cs_scene_validate's job). thread: any. rt-safe: yes (no allocation, bounded
 * by len). */
int cd_frame_decode(const uint8_t *data, size_t len, const cs_limits *lim,
                    cs_solver default_solver, cs_scene *out);

/* The seq of a ClientMessage{frame} that is not decoded (too large for the decoding arena of the
 * worker serving its session): 1 and *ret (0 when absent; the last one when given twice, as
 * protobuf-c keeps it) when data[0, len) is a frame whose fields are well-formed wire fields,
 * else 0. thread: any. rt-safe: yes (bounded by len). */
int cd_frame_seq(const uint8_t *data, size_t len, uint64_t *ret);

#endif /* CONTACTD_WIRE_FRAME_DECODE_H */
