/* SPDX-License-Identifier: MIT */
/* What protobuf-c 1.4 unpacks differently from what the client sent, found in the message's
 * bytes so that the daemon refuses it naming the field instead of solving something else:
 *  - a singular message field given twice. Protobuf says a parser merges the two, field by field;
 *    protobuf-c keeps the last one whole for proto3 messages (a Vec3 gravity {x: 1} then
 *    {z: -9.81} unpacks as (0, 0, -9.81)). Scalars given twice are left to protobuf-c: the last
 *    one wins, as protobuf says.
 *  - a string holding a NUL byte: protobuf-c's C string ends there, so "lemke\0x" would be read
 *    as "lemke". */
#ifndef CONTACTD_WIRE_STRICT_H
#define CONTACTD_WIRE_STRICT_H
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

typedef enum cd_strict {
    CD_STRICT_OK = 0,
    CD_STRICT_TWICE, /* a singular message field given twice */
    CD_STRICT_NUL,   /* a string holding a NUL byte */
} cd_strict;

/* Searches data[0, len), a message of type d without length prefix, and every message within it,
 * for the first field protobuf-c would not unpack as sent (above). path (pathlen bytes, may be
 * cut short) then names it from d down, e.g. "frame.bodies[2].linear_velocity" or
 * "hello.solvers[1]". Bytes that do not parse end the search (protobuf-c's unpack words those).
 * thread: any. rt-safe: yes (no allocation; bounded by len and the schema's depth). */
cd_strict cd_strict_check(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                          char *path, size_t pathlen);

/* What a client is told after the path: "given twice in one message; ...". */
const char *cd_strict_reason(cd_strict k);

#endif /* CONTACTD_WIRE_STRICT_H */
