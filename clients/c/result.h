/* SPDX-License-Identifier: MIT */
/* A Result's way into the plain cdc_result of contactd/client.h, and the arrays it lands in. Two
 * ways, one answer: the fast one reads the bytes of a ServerMessage{result} straight into the
 * arrays (a 16-contact Result in about a quarter of protobuf-c's unpack into an arena), taking
 * only what it can read exactly as protobuf-c would and declining the rest (unknown or repeated
 * singular fields, strings that are not plain ASCII or longer than the room below, more items
 * than the arrays hold, anything malformed); the general one converts what protobuf-c unpacked.
 * tests/unit/test_result.c holds the two to the same cdc_result. Internal to libcontactd-client.
 * thread: the connection's one receiving thread. */
#ifndef CONTACTD_CLIENTS_RESULT_H
#define CONTACTD_CLIENTS_RESULT_H
#include <stddef.h>
#include <stdint.h>
#include "contactd.pb-c.h"
#include "contactd/types.h"

/* Strings the fast way copies out of the bytes (the general way points into its arena). */
#define CDC_RESULT_SOLVER_MAX 32
#define CDC_RESULT_DETAIL_MAX 512

/* The last Result's arrays and strings, owned by the connection. Zeroed is empty. */
typedef struct cdc_result_store {
    cdc_contact_force *forces;     /* [contacts] */
    cdc_body_velocity *velocities; /* [bodies] */
    cdc_joint_force *joint_forces; /* [joints] */
    size_t contacts, bodies, joints;
    char solver[CDC_RESULT_SOLVER_MAX];
    char detail[CDC_RESULT_DETAIL_MAX];
} cdc_result_store;

/* Grows st's arrays to hold at least nb bodies, nc contacts and nj joints (never shrinks).
 * Returns 0 or -ENOMEM (st unchanged where it failed). */
int cdc_result_store_grow(cdc_result_store *st, size_t nb, size_t nc, size_t nj);

/* Frees st's arrays; st is then empty. */
void cdc_result_store_free(cdc_result_store *st);

/* The general way: m (a Result protobuf-c unpacked) into *out, its arrays in st (grown to fit),
 * its strings m's. Returns 0, -EPROTO (counts beyond int) or -ENOMEM. */
int cdc_result_from_message(cdc_result_store *st, const Contactd__V1__Result *m, cdc_result *out);

/* The fast way: data[0, len), one ServerMessage without its length prefix. Returns 1 with *out
 * filled (arrays and strings in st) when it is a Result the fast way takes, 0 otherwise (*out
 * untouched; st's contents may have changed). Allocates nothing. */
int cdc_result_decode(cdc_result_store *st, const uint8_t *data, size_t len, cdc_result *out);

#endif /* CONTACTD_CLIENTS_RESULT_H */
