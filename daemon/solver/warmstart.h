/* SPDX-License-Identifier: MIT */
/* Internal view of the warm start: the previous certified answer of a session, its contact
 * impulses keyed by contact id, joint impulses by joint id and body velocities by body id. It
 * seeds the fallback answer and the warm-started solvers. */
#ifndef CONTACTD_SOLVER_WARMSTART_H
#define CONTACTD_SOLVER_WARMSTART_H
#include <stdbool.h>
#include "solver/contact.h"

/* Remembers r's impulses by contact id, and joint_impulse [3 r->nj] (world frame) by joint id
 * (r within the limits w was made for). r must be a certified answer: whatever is stored here is
 * what a later failed step carries. */
void cs__warm_store(cs_warmstart *w, const cs_result *r, const double *joint_impulse);
/* Previous impulse of contact id (contact frame) into out[3]; false (and zeros) when unknown. */
bool cs__warm_impulse(const cs_warmstart *w, uint64_t id, double out[3]);
/* Previous impulse of joint id (world frame) into out[3]; false (and zeros) when unknown. */
bool cs__warm_joint_impulse(const cs_warmstart *w, uint32_t id, double out[3]);
/* Previous post-step velocity of body id (vx vy vz wx wy wz) into out[6]; false (out untouched)
 * when unknown. */
bool cs__warm_velocity(const cs_warmstart *w, uint32_t id, double out[6]);

/* Remembers a Lemke basis word per contact of the result stored last (same order), for pyramids
 * of d directions. Call after cs__warm_store(), which forgets the previous basis. */
void cs__warm_store_basis(cs_warmstart *w, const uint32_t *basis, int d);
/* Previous basis word of contact id when it was stored for d directions; false (and 0) else. */
bool cs__warm_basis(const cs_warmstart *w, uint64_t id, int d, uint32_t *ret);

#endif /* CONTACTD_SOLVER_WARMSTART_H */
