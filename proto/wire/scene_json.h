/* SPDX-License-Identifier: MIT */
/* Scene files and JSON output. A scene file is a contactd.v1.Frame in the proto3 canonical JSON
 * mapping (lowerCamelCase names, the original snake_case names accepted too, 64-bit integers as
 * strings or numbers, absent fields at their defaults), so the Python client reads and writes
 * the same files with google.protobuf.json_format. Parsing goes JSON -> Frame -> cs_scene through
 * cd_codec_scene_from_frame, the path frames from the socket take, then through the caller's
 * check: cs_scene_validate (solver/contact.h) gives a scene file the checks a frame gets, while
 * the wire library itself knows no physics. The writer prints any message (a Result, Stats, a
 * Frame) in the same mapping. */
#ifndef CONTACTD_WIRE_SCENE_JSON_H
#define CONTACTD_WIRE_SCENE_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <protobuf-c/protobuf-c.h>
#include "wire/types.h"

/* Largest friction_directions a scene file may ask for (file limits are otherwise the file's own
 * sizes). */
#define CD_SCENE_JSON_MAX_DIRS 64

/* A scene check with cs_scene_validate's signature and returns: 0, or nonzero with a message
 * naming the field in err. */
typedef int cd_scene_check(const cs_scene *s, const cs_limits *lim, char *err, size_t errlen);

/* Parses text (NUL-terminated JSON) into *ret: bodies, contacts and joints are malloc'd arrays
 * sized to the file (release them with cd_scene_json_free). The scene is then passed to check
 * (NULL: none) with limits equal to its own sizes and CD_SCENE_JSON_MAX_DIRS (every solver
 * allowed). Returns 0, -EINVAL (syntax error with line and column, a wrong type, an unknown field
 * or a failed check, with a message naming the field path in err, e.g. "contacts[3].normal.x:
 * expected a number") or -ENOMEM. *ret is untouched on failure. thread: any. rt-safe: no
 * (allocates). */
int cd_scene_json_parse(const char *text, cd_scene_check *check, cs_scene *ret, char *err,
                        size_t errlen);

/* Reads the file at path and parses it as cd_scene_json_parse does; messages start with the path.
 * Returns 0, a negative errno from opening or reading the file, -EINVAL or -ENOMEM.
 * thread: any. rt-safe: no. */
int cd_scene_json_load(const char *path, cd_scene_check *check, cs_scene *ret, char *err,
                       size_t errlen);

/* Frees the arrays of a scene from cd_scene_json_parse/_load and zeroes them; accepts a scene
 * whose arrays are NULL. */
void cd_scene_json_free(cs_scene *s);

/* Canonical proto3 JSON of msg (a Result, Stats, Frame, ...): lowerCamelCase names, enums by
 * name, 64-bit integers as strings, non-finite doubles as "NaN"/"Infinity"/"-Infinity", every
 * scalar written even at its default, absent sub-messages left out. pretty: indented, else one
 * line. Returns a malloc'd string (release with free()), or NULL when out of memory or msg has a
 * bytes field (protocol v1 has none). thread: any. rt-safe: no. */
char *cd_scene_json_write(const ProtobufCMessage *msg, bool pretty);

#endif /* CONTACTD_WIRE_SCENE_JSON_H */
