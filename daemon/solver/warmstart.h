/* SPDX-License-Identifier: MIT */
/* Internal view of the warm start: the previous certified answer of a session, its contact
 * impulses keyed by contact id and body velocities by body id, which seed the fallback answer
 * and the warm-started solvers; each joint's frames in its bodies, captured at the joint's
 * first frame and kept by joint id, from which the joint rows measure drift (joints.h); and the
 * time its steps take after their solver, which cs_step keeps from the next solver's budget. */
#ifndef CONTACTD_SOLVER_WARMSTART_H
#define CONTACTD_SOLVER_WARMSTART_H
#include <stdbool.h>
#include "solver/contact.h"

typedef struct cs_art_joint cs_art_joint;

/* Remembers r's impulses by contact id (r within the limits w was made for). r must be a
 * certified answer: whatever is stored here is what a later failed step carries. */
void cs__warm_store(cs_warmstart *w, const cs_result *r);
/* Previous impulse of contact id (contact frame) into out[3]; false (and zeros) when unknown. */
bool cs__warm_impulse(const cs_warmstart *w, uint64_t id, double out[3]);
/* The frames (la, lb, fa, fb) captured for joint J's id into ret when they were captured for
 * the same kind and bodies; false (ret untouched) otherwise or when w is NULL. */
bool cs__warm_joint_frame(const cs_warmstart *w, const cs_joint *J, cs_art_joint *ret);
/* Remembers the frames of joints [nj] (captured [nj], same order) by joint id, forgetting any
 * other joint (nj within w's limits). */
void cs__warm_store_joints(cs_warmstart *w, const cs_joint *joints, int nj,
                           const cs_art_joint *captured);
/* Previous post-step velocity of body id (vx vy vz wx wy wz) into out[6]; false (out untouched)
 * when unknown. */
bool cs__warm_velocity(const cs_warmstart *w, uint32_t id, double out[6]);

/* The time, in the session's clock_ns units, that cs_step keeps from its solver's budget for
 * its own work after the solver (step.c); 0 at first and when w is NULL. An answer it is not:
 * cs_warmstart_reset() keeps it. */
int64_t cs__warm_reserve(const cs_warmstart *w);
/* Sets it (w not NULL). */
void cs__warm_set_reserve(cs_warmstart *w, int64_t reserve);

/* Remembers a Lemke basis word per contact of the result stored last (same order), for pyramids
 * of d directions. Call after cs__warm_store(), which forgets the previous basis. */
void cs__warm_store_basis(cs_warmstart *w, const uint32_t *basis, int d);
/* Previous basis word of contact id when it was stored for d directions; false (and 0) else. */
bool cs__warm_basis(const cs_warmstart *w, uint64_t id, int d, uint32_t *ret);

#endif /* CONTACTD_SOLVER_WARMSTART_H */
