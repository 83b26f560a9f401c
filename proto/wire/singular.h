/* SPDX-License-Identifier: MIT */
/* A singular message field given twice in one message. Protobuf says a parser merges the two,
 * field by field; protobuf-c 1.4 keeps the last one whole for proto3 messages (a Vec3 gravity
 * {x: 1} then {z: -9.81} unpacks as (0, 0, -9.81)). Rather than solve a scene that differs from
 * what the client meant, the daemon refuses such a message and names the field. Scalars given
 * twice are left to protobuf-c: the last one wins, as protobuf says. */
#ifndef CONTACTD_WIRE_SINGULAR_H
#define CONTACTD_WIRE_SINGULAR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* True when data[0, len), a message of type d without length prefix, or any message within it,
 * holds a singular (not repeated) message field more than once; path (pathlen bytes, may be cut
 * short) then names the first such field from d down, e.g. "frame.bodies[2].linear_velocity".
 * Bytes that do not parse stop the search (protobuf-c's unpack words those). thread: any.
 * rt-safe: yes (no allocation; bounded by len and the schema's depth). */
bool cd_singular_repeated(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                          char *path, size_t pathlen);

#endif /* CONTACTD_WIRE_SINGULAR_H */
