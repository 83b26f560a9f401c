/* SPDX-License-Identifier: MIT */
/* Conversion then validation of an incoming frame. */
#include "io/ingest.h"

#include "solver/contact.h"
#include "wire/codec.h"

int cd_ingest_frame(const Contactd__V1__Frame *f, const cs_limits *lim, cs_solver default_solver,
                    cs_scene *out, char *err, size_t errlen) {
    const int r = cd_codec_scene_from_frame(f, lim, default_solver, out, err, errlen);
    return r != 0 ? r : cs_scene_validate(out, lim, err, errlen);
}
