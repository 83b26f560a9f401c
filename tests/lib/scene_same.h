/* SPDX-License-Identifier: MIT */
/* Whether two scenes are the same, bit for bit: the check that two decoders of one frame agree
 * (tests and the decode fuzzer, which links no cmocka). thread: any. rt-safe: yes. */
#ifndef CONTACTD_TESTS_SCENE_SAME_H
#define CONTACTD_TESTS_SCENE_SAME_H
#include <stdbool.h>
#include "wire/types.h"

/* True when a and b have the same header (seq, dt, gravity, friction_dirs, penetration_recovery,
 * solver, counts) and the same first nb bodies, nc contacts and nj joints, every member compared
 * by its bytes (so -0.0 differs from 0.0, and a NaN equals the same NaN). */
bool t_scene_same(const cs_scene *a, const cs_scene *b);

#endif /* CONTACTD_TESTS_SCENE_SAME_H */
