/* SPDX-License-Identifier: MIT */
/* Conversions between the generated protobuf-c messages of contactd.v1 and the wire's plain
 * types: a decoded Frame into a cs_scene (the one conversion shared by the daemon, scene files,
 * tests and the client; the daemon validates the result next, daemon/io/ingest.c), a cs_scene
 * into a Frame (clients), a cs_result plus its timing record into a Result, the status mapping,
 * and packing an envelope with its varint length prefix.
 * Message holders are sized once (at admission, or when a client connects) and reused, so building
 * a message does not allocate; they point into themselves, so never copy one after its _init.
 * Generated types stop here and in daemon/io/: service/ and solver/ never see them. */
#ifndef CONTACTD_WIRE_CODEC_H
#define CONTACTD_WIRE_CODEC_H
#include <stddef.h>
#include <stdint.h>
#include "contactd.pb-c.h"
#include "wire/timing.h"
#include "wire/types.h"

/* Converts a decoded Frame into out, checking only what the wire can get wrong; the physics
 * (finite numbers, unit normals, known body ids, the solver being in this build and allowed by
 * lim) is cs_scene_validate's, which cd_ingest_frame (daemon/io/ingest.h) runs after this.
 * out->bodies, out->contacts and out->joints must point to caller storage with room for
 * lim->max_bodies, lim->max_contacts and lim->max_joints entries; the other members of out are
 * overwritten. Absent Vec3 fields are 0,
 * an absent orientation is the identity, friction_directions 0 is cs_dirs_default(lim), solver_name
 * wins over the solver enum, and a frame that names neither gets default_solver (the session's,
 * so that validation judges the frame by the solver that will run it; CS_SOLVER_DEFAULT leaves it
 * unresolved).
 * Returns 0, CS_ENOSPACE (more bodies, contacts, joints or friction directions than lim allows)
 * or CS_EINPUT (an unknown solver, a wrong inertia count), with a message naming the field in err
 * ("bodies[2].inertia: expected 9 values, got 3"). On failure the arrays may hold partial data.
 * thread: any (the daemon calls it on the I/O thread). rt-safe: yes (no allocation). */
int cd_codec_scene_from_frame(const Contactd__V1__Frame *f, const cs_limits *lim,
                              cs_solver default_solver, cs_scene *out, char *err, size_t errlen);

/* contactd.v1.Status for a solver status: CS_CONVERGED -> STATUS_OK, CS_DEADLINE ->
 * STATUS_DEADLINE, CS_MAXITER and CS_FALLBACK -> STATUS_FALLBACK, any negative status ->
 * STATUS_FAILED. thread: any. rt-safe: yes. */
Contactd__V1__Status cd_codec_status(cs_status st);

/* A reusable ServerMessage{result} with storage for every nested message a cs_result within the
 * limits it was sized for needs. thread: one owner at a time (the connection's I/O thread). */
typedef struct cd_result_msg {
    Contactd__V1__ServerMessage env; /* read-only: what cd_codec_result_build returns */
    Contactd__V1__Result result;     /* read-only */
    Contactd__V1__Timing timing;     /* private below */
    Contactd__V1__SolverStats stats;
    Contactd__V1__Residuals residuals;
    Contactd__V1__ContactForce **contact_ptrs; /* [max_contacts] */
    Contactd__V1__ContactForce *contacts;      /* [max_contacts] */
    Contactd__V1__BodyVelocity **body_ptrs;    /* [max_bodies] */
    Contactd__V1__BodyVelocity *bodies;        /* [max_bodies] */
    Contactd__V1__JointForce **joint_ptrs;     /* [max_joints] */
    Contactd__V1__JointForce *joints;          /* [max_joints] */
    Contactd__V1__Vec3 *vecs;                  /* [2 (max_contacts + max_bodies + max_joints)] */
    char detail[256];
    int max_bodies, max_contacts, max_joints;
    void *mem; /* the one allocation behind the arrays */
} cd_result_msg;

/* Sizes m for results within lim (one malloc, written). Returns 0 or -ENOMEM. thread: any but
 * the real-time ones (it allocates). */
int cd_codec_result_msg_init(cd_result_msg *m, const cs_limits *lim);
/* Releases m's storage; accepts a zeroed or already finished holder. */
void cd_codec_result_msg_fini(cd_result_msg *m);
/* Bytes a holder for results within lim takes: the struct and what cd_codec_result_msg_init
 * allocates (0 for limits it refuses). thread: any. */
size_t cd_codec_result_msg_bytes(const cs_limits *lim);

/* Fills m from r (contact, body and joint ids, forces, impulses, states, post-step velocities,
 * joint forces and torques, solver stats, residuals), the timing record t (may be NULL: all
 * zero), the tick number and detail (may be NULL; copied, truncated to sizeof m->detail - 1). For
 * a negative r->status the status is STATUS_FAILED and every force, impulse, velocity and joint
 * force is sent as zero, states unspecified. Returns &m->env, valid until the next build or fini,
 * or NULL when r has more contacts, bodies or joints than m was sized for (or m has no storage).
 * thread: owner of m. rt-safe: yes (no allocation). */
Contactd__V1__ServerMessage *cd_codec_result_build(cd_result_msg *m, const cs_result *r,
                                                   const cd_timing *t, uint64_t tick,
                                                   const char *detail);

/* A reusable ClientMessage{frame} with storage for a scene within the limits it was sized for.
 * thread: one owner at a time. */
typedef struct cd_frame_msg {
    Contactd__V1__ClientMessage env; /* read-only: what cd_codec_frame_build returns */
    Contactd__V1__Frame frame;       /* read-only */
    Contactd__V1__Vec3 gravity;      /* private below */
    Contactd__V1__Body **body_ptrs;        /* [max_bodies] */
    Contactd__V1__Body *bodies;            /* [max_bodies] */
    Contactd__V1__Quat *quats;             /* [max_bodies] */
    double *inertia;                       /* [9 max_bodies] */
    Contactd__V1__Contact **contact_ptrs;  /* [max_contacts] */
    Contactd__V1__Contact *contacts;       /* [max_contacts] */
    Contactd__V1__Joint **joint_ptrs;      /* [max_joints] */
    Contactd__V1__Joint *joints;           /* [max_joints] */
    Contactd__V1__Vec3 *vecs;              /* [5 max_bodies + 2 max_contacts + 2 max_joints] */
    int max_bodies, max_contacts, max_joints;
    void *mem; /* the one allocation behind the arrays */
} cd_frame_msg;

/* Sizes m for scenes within lim (one malloc). Returns 0 or -ENOMEM. thread: any (not rt). */
int cd_codec_frame_msg_init(cd_frame_msg *m, const cs_limits *lim);
/* Releases m's storage; accepts a zeroed or already finished holder. */
void cd_codec_frame_msg_fini(cd_frame_msg *m);

/* Fills m with a Frame carrying every field of s (s->solver as the solver enum; every Vec3 and
 * the orientation present). Returns &m->env, valid until the next build or fini, or NULL when s
 * has more bodies or contacts than m was sized for (or m has no storage). thread: owner of m.
 * rt-safe: yes. */
Contactd__V1__ClientMessage *cd_codec_frame_build(cd_frame_msg *m, const cs_scene *s);

/* A reusable ServerMessage{error}. thread: one owner at a time. */
typedef struct cd_error_msg {
    Contactd__V1__ServerMessage env; /* read-only */
    Contactd__V1__Error error;       /* read-only */
    char text[512];                  /* private */
} cd_error_msg;

/* Fills m with an Error (code, seq of the frame it refers to or 0, message copied and truncated
 * to sizeof m->text - 1). Returns &m->env. thread: owner of m. rt-safe: yes. */
Contactd__V1__ServerMessage *cd_codec_error_build(cd_error_msg *m, Contactd__V1__ErrorCode code,
                                                  uint64_t seq, const char *message);

/* Bytes cd_codec_pack needs for msg: its varint length prefix plus its packed size.
 * thread: any. rt-safe: yes. */
size_t cd_codec_packed_size(const ProtobufCMessage *msg);

/* Writes msg's varint length prefix and body into buf (cap bytes) and sets *ret_len to the total.
 * Returns 0, or -ENOBUFS (nothing useful written, *ret_len untouched) when cap is too small: no
 * size is asked first, so a caller with room to spare needs no cd_codec_packed_size. Works for
 * any message; ClientMessage and ServerMessage are what goes on the wire. The bytes are
 * protobuf-c's, packed in one pass (wire/pack.h). thread: any. rt-safe: yes. */
int cd_codec_pack(const ProtobufCMessage *msg, uint8_t *buf, size_t cap, size_t *ret_len);

#endif /* CONTACTD_WIRE_CODEC_H */
