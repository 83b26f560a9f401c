/* SPDX-License-Identifier: MIT */
/* Where a frame enters the daemon: the wire's conversion (Frame -> cs_scene, wire/codec.h) then
 * the solver's validation (cs_scene_validate), in one call so that no caller converts without
 * validating. (The server's fast path, wire/frame_decode.h, fills the scene from the bytes and
 * then runs the same cs_scene_validate.) The wire library knows the messages, libcontact the
 * physics; only the daemon sees both. */
#ifndef CONTACTD_IO_INGEST_H
#define CONTACTD_IO_INGEST_H
#include <stddef.h>
#include "contactd.pb-c.h"
#include "wire/types.h"

/* Converts f into out as cd_codec_scene_from_frame does (same storage rules, default_solver for
 * a frame that names none), then validates it with cs_scene_validate(out, lim, ...). Returns 0,
 * CS_ENOSPACE (more bodies, contacts, joints or friction directions than lim allows, or a solver
 * lim does not declare) or CS_EINPUT, with a message naming the field in err
 * ("bodies[2].inertia: expected 9 values, got 3", "contacts[3].normal: not unit length
 * (|n| = 0.12)"). On failure the arrays may hold partial data. thread: any (the daemon calls it
 * on the I/O thread). rt-safe: yes (no allocation). */
int cd_ingest_frame(const Contactd__V1__Frame *f, const cs_limits *lim, cs_solver default_solver,
                    cs_scene *out, char *err, size_t errlen);

#endif /* CONTACTD_IO_INGEST_H */
