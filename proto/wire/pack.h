/* SPDX-License-Identifier: MIT */
/* Packing protobuf-c messages in one pass, back to front. protobuf-c's own packer asks every
 * nested message for its size before writing it, and that message asks its own nested ones
 * again: a Result (contacts of three Vec3s each) has its leaves sized three times and packed
 * once, and its sizing cost a worker more than the solve of a small peg. Written from the last
 * field to the first, a message's length is known when its fields are written, so each byte is
 * produced once. The bytes are protobuf-c's own, field for field (tests/unit/test_pack.c and
 * the decode fuzzer compare them); a message carrying unknown fields is handed to protobuf-c. */
#ifndef CONTACTD_WIRE_PACK_H
#define CONTACTD_WIRE_PACK_H
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

/* Packs msg into the last bytes of buf[0, cap): on success the packed message occupies
 * buf[cap - *ret_len, cap) and 0 is returned; -ENOBUFS when it does not fit (buf's contents are
 * then undefined). thread: any. rt-safe: yes (no allocation; recursion as deep as the message's
 * nesting). */
int cd_pack_tail(const ProtobufCMessage *msg, uint8_t *buf, size_t cap, size_t *ret_len);

/* Bytes one element of a repeated field of type t takes in a protobuf-c message's array.
 * thread: any. rt-safe: yes. */
size_t cd_pb_element_size(ProtobufCType t);

#endif /* CONTACTD_WIRE_PACK_H */
