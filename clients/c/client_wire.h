/* SPDX-License-Identifier: MIT */
/* The client library's wire-level access, for the tools and tests of this tree only (contactctl,
 * the integration tests, the benchmarks): frames from the daemon's cs_scene, pre-packed bytes,
 * and whole generated ServerMessages, which carry fields the plain API leaves out (per-session
 * statistics, histograms). Not installed: programs outside the tree use contactd/client.h alone.
 * Thread rules are those of contactd/client.h. */
#ifndef CONTACTD_CLIENTS_CLIENT_WIRE_H
#define CONTACTD_CLIENTS_CLIENT_WIRE_H
#include <stddef.h>
#include <stdint.h>
#include "contactd.pb-c.h"
#include "contactd/client.h"
#include "wire/types.h"

/* The daemon's Welcome as received, owned by c; NULL for a no_session connection. */
const Contactd__V1__Welcome *cdc_wire_welcome(const cdc_conn *c);

/* Sends s as a Frame (every field, s->solver as the solver enum; a kinematic body goes without
 * inertia). Sizes and returns as cdc_frame_send. thread: the one sending thread of c. */
int cdc_wire_frame_send(cdc_conn *c, const cs_scene *s);

/* Sends len bytes the caller packed beforehand: whole ClientMessages, each with its varint
 * length prefix (what cd_codec_pack writes), so that at send time only the write is left.
 * Blocks, and shuts the sending side after a cut, like cdc_frame_send; the bytes are not
 * checked. Returns 0, -ETIMEDOUT or the socket's negative errno. thread: the one sending thread
 * of c. */
int cdc_wire_send_packed(cdc_conn *c, const uint8_t *buf, size_t len);

/* Receives the next ServerMessage as cdc_msg_recv does, but as a generated message the caller
 * owns (malloc'd: release with cdc_wire_free; this path allocates for every message). Returns 1
 * and sets *ret, 0 on timeout, or a negative errno as cdc_msg_recv. thread: the one receiving
 * thread of c. */
int cdc_wire_recv(cdc_conn *c, int64_t timeout_ns, Contactd__V1__ServerMessage **ret);

/* Frees a message from cdc_wire_recv; accepts NULL. thread: any. */
void cdc_wire_free(Contactd__V1__ServerMessage *m);

#endif /* CONTACTD_CLIENTS_CLIENT_WIRE_H */
