/* SPDX-License-Identifier: MIT */
/* libcontact's entry points: admit a session (workspace + warm start sized from its limits),
 * validate a scene, and step it: model -> solver -> certificate -> labels, in bounded time and
 * without allocation. This is what the daemon's tick thread and contactctl call. */
#ifndef CONTACTD_SOLVER_CONTACT_H
#define CONTACTD_SOLVER_CONTACT_H
#include <stddef.h>
#include "solver/types.h"

typedef struct cs_workspace cs_workspace;
typedef struct cs_warmstart cs_warmstart;

/* The one allocation of a session's solver memory: a workspace able to hold any problem within
 * lim. Returns NULL when lim is out of range or memory is short. thread: any (not rt). */
cs_workspace *cs_workspace_new(const cs_limits *lim);
/* Accepts NULL. */
void cs_workspace_free(cs_workspace *ws);
/* Bytes the workspace holds (for stats and tests). */
size_t cs_workspace_capacity(const cs_workspace *ws);

/* Per-session memory of the previous answer, keyed by contact and body ids. thread: any. */
cs_warmstart *cs_warmstart_new(const cs_limits *lim);
void cs_warmstart_free(cs_warmstart *w);
/* Forget the previous answer (the next step starts cold and falls back to zero forces). */
void cs_warmstart_reset(cs_warmstart *w);

/* Checks s against lim and physics: finite numbers, dt > 0, mass > 0, inertia symmetric
 * positive definite, unit quaternions and normals (within 1e-6), known and distinct body ids,
 * mu >= 0, stiffness/dissipation >= 0, d even in [4, max_dirs], sizes within lim.
 * Returns 0, or CS_EINPUT / CS_ENOSPACE with a message naming the field written to err
 * (e.g. "contacts[3].normal: not unit length (|n| = 0.12)"). thread: any. rt-safe: yes. */
int cs_scene_validate(const cs_scene *s, const cs_limits *lim, char *err, size_t errlen);

/* Solves one step of a validated scene with opt->solver (CS_SOLVER_DEFAULT is not accepted
 * here: the caller resolves defaults). Fills out (arrays sized by cs_result_init for limits at
 * least those of ws), certifies the answer and labels each contact. When the solver fails, hits
 * the deadline or its answer fails the certificate, out holds the fallback answer (previous
 * impulses for persisting contact ids, zero for new ones) and the status says so. On success the
 * warm start is updated. warm may be NULL (cold, fallback zero).
 * Returns out->status. thread: any, one caller per workspace. rt-safe: yes (no malloc, bounded). */
cs_status cs_step(cs_workspace *ws, const cs_scene *s, const cs_options *opt, cs_warmstart *warm,
                  cs_result *out);

#endif /* CONTACTD_SOLVER_CONTACT_H */
