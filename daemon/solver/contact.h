/* SPDX-License-Identifier: MIT */
/* libcontact's entry points: admit a session (workspace + warm start sized from its limits),
 * validate a scene, and step it: model -> solver -> certificate -> labels, in bounded time and
 * without allocation. This is what the daemon's tick thread and contactctl call. */
#ifndef CONTACTD_SOLVER_CONTACT_H
#define CONTACTD_SOLVER_CONTACT_H
#include <stdbool.h>
#include <stddef.h>
#include "wire/types.h"

typedef struct cs_workspace cs_workspace;

/* True when this build implements solver s (a known but unimplemented name is refused with a
 * message rather than silently replaced). thread: any. rt-safe: yes. */
bool cs_solver_is_available(cs_solver s);
/* Bit (1u << s) for each named solver (CS_SOLVER_DEFAULT excluded), or, when available_only, for
 * each this build implements. */
unsigned cs_solver_mask(bool available_only);
/* True when solver s solves scenes with joints (joints.h: every solver on the Delassus form). */
bool cs_solver_takes_joints(cs_solver s);
/* True when a session admitted with lim may run solver s: s is available in this build and
 * declared in lim->solvers (or lim->solvers is 0). That rule lives in cs_limits_mask().
 * thread: any. rt-safe: yes. */
bool cs_limits_allow(const cs_limits *lim, cs_solver s);
/* The same as a mask: bit (1u << s) for each s with cs_limits_allow(lim, s). */
unsigned cs_limits_mask(const cs_limits *lim);
typedef struct cs_warmstart cs_warmstart;

/* Bytes cs_workspace_new(lim) allocates, struct included: the model, the step's answer, and the
 * largest scratch of the certificate and of each solver lim->solvers declares (every available
 * solver when it is 0). 0 when lim is out of range (bodies in [1, 4096], contacts in [0, 8192],
 * directions in [0, 64], solvers only of this build). thread: any. rt-safe: yes. */
size_t cs_workspace_size(const cs_limits *lim);
/* The one allocation of a session's solver memory, exactly cs_workspace_size(lim) bytes,
 * 64-byte aligned and touched: a workspace able to hold any problem within lim for any solver
 * lim allows. Returns NULL when lim is out of range or memory is short. thread: any (not rt). */
cs_workspace *cs_workspace_new(const cs_limits *lim);
/* Accepts NULL. */
void cs_workspace_free(cs_workspace *ws);
/* Bytes of the workspace's scratch stack (its struct excluded; for stats and tests). */
size_t cs_workspace_capacity(const cs_workspace *ws);
/* Runs the LAPACK routines the workspace's solvers use, once, at the largest orders its limits
 * allow, so that BLIS and LAPACK fill their internal buffers now (at admission) and not during a
 * solve on a real-time thread. thread: any (admission, not rt). */
void cs_workspace_warm_up(cs_workspace *ws);

/* Bytes cs_warmstart_new(lim) allocates (one block, struct included); 0 when lim has a negative
 * size. thread: any. */
size_t cs_warmstart_size(const cs_limits *lim);
/* Per-session memory of the last certified answer, keyed by contact and body ids, and of how
 * long cs_step's work after its solver took; one allocation of cs_warmstart_size(lim) bytes.
 * Returns NULL when memory is short or lim has a negative size. thread: any (not rt). */
cs_warmstart *cs_warmstart_new(const cs_limits *lim);
/* Accepts NULL. */
void cs_warmstart_free(cs_warmstart *w);
/* Forget the previous answer (the next step starts cold and has nothing to carry); the time
 * kept for the work after the solver stays. */
void cs_warmstart_reset(cs_warmstart *w);
/* Makes dst what src is (its answer, basis, joint frames and kept time), so that a step can
 * start from src's state without changing it. Both made with the same limits. thread: any.
 * rt-safe: yes (copies what src holds, not its capacity). */
void cs_warmstart_copy(cs_warmstart *dst, const cs_warmstart *src);

/* Checks s against lim and physics: finite numbers, dt > 0, mass > 0, inertia symmetric
 * positive definite (a kinematic body: mass and inertia all 0), unit quaternions and normals
 * (within 1e-6), known and distinct body ids, contacts with at least one side free to move (not
 * kinematic, not the world), mu >= 0, stiffness/dissipation >= 0, d even in [4, max_dirs], sizes
 * within lim, and a solver (other than CS_SOLVER_DEFAULT) that lim allows (cs_limits_allow);
 * joints on a body (body_a, never the world) with a unit axis for hinge and slider, for a solver
 * that takes joints.
 * Returns 0, or CS_EINPUT / CS_ENOSPACE with a message naming the field written to err
 * (e.g. "contacts[3].normal: not unit length (|n| = 0.12)", "solver: 'sap' was not declared for
 * this session (declared: dantzig, lemke)"). thread: any. rt-safe: yes. */
int cs_scene_validate(const cs_scene *s, const cs_limits *lim, char *err, size_t errlen);

/* Solves one step of a validated scene with opt->solver (CS_SOLVER_DEFAULT is not accepted
 * here: the caller resolves defaults). Fills out (arrays sized by cs_result_init for limits at
 * least those of ws), certifies the answer and labels each contact and the answer itself
 * (out->answer, out->carried):
 *  - a certified answer of the solver: CS_ANSWER_SOLVER, status CS_CONVERGED or CS_MAXITER; the
 *    warm start remembers it (only certified answers are ever remembered);
 *  - SAP or ncp at the deadline, once it has an iterate: its best one, CS_ANSWER_ITERATE,
 *    status CS_DEADLINE, with its certificate;
 *  - otherwise (failure, failed certificate, deadline): the warm start's last certified impulses
 *    by contact id, zero for new contacts, with the velocities they imply and their own
 *    certificate: CS_ANSWER_LAST_CERTIFIED, status CS_DEADLINE or CS_FALLBACK, when at least one
 *    contact had one (out->carried of them); else zero impulses, CS_ANSWER_NONE and status
 *    CS_NOANSWER (when nc > 0; a scene without contacts keeps CS_DEADLINE / CS_FALLBACK).
 * out->primary is the solver's own outcome. warm may be NULL (nothing to carry).
 * Joints (joints.h) hold in every answer: their forces and torques come from the articulated
 * solve under the answer's contact impulses. warm keeps each joint's frames by id from its first
 * frame, so the joint rows correct drift; with warm NULL there is no drift correction.
 * Returns out->status; CS_EINPUT for an unavailable solver and CS_ENOSPACE for one the
 * workspace's limits do not allow or a scene beyond them (zero impulses, CS_ANSWER_NONE).
 * Solvers check opt's deadline often enough to return within about 50 us of it. With warm and a
 * deadline the solver's comes early by what the session's last such step did after its solver
 * (certificate, fallback, forces; measured with opt's clock, read at the step's start and end),
 * at most by half of what the step has left at its start, so that work too ends by opt's
 * deadline.
 * thread: any, one caller per workspace. rt-safe: yes (no malloc, bounded). */
cs_status cs_step(cs_workspace *ws, const cs_scene *s, const cs_options *opt, cs_warmstart *warm,
                  cs_result *out);

#endif /* CONTACTD_SOLVER_CONTACT_H */
