/* SPDX-License-Identifier: MIT */
/* Plain data of libcontactd-client: what a frame carries (bodies, contacts, joints) and what a
 * Result, the Welcome and the Stats hand back. Every type is a visible struct of numbers, with
 * units in the field comments; no protobuf type appears here. Arrays in a frame belong to the
 * caller; arrays in a received message belong to the connection (see contactd/client.h).
 * Enum values equal those of the wire protocol (proto/contactd.proto, package contactd.v1). */
#ifndef CONTACTD_TYPES_H
#define CONTACTD_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A solver a frame or session may name (contactd.v1.Solver). */
typedef enum cdc_solver {
    CDC_SOLVER_DEFAULT = 0, /* the session's default */
    CDC_SOLVER_DANTZIG = 1,
    CDC_SOLVER_LEMKE = 2,
    CDC_SOLVER_LEMKE_STRUCTURAL = 3,
    CDC_SOLVER_LEMKE_STANDARD = 4,
    CDC_SOLVER_SAP = 5,
    CDC_SOLVER_NCP = 6,
} cdc_solver;

/* Sizes a session asks for in its Hello, or was granted in the Welcome. 0: the daemon's default
 * (max_joints 0: no joints). */
typedef struct cdc_limits {
    int max_bodies;   /* bodies the solve moves or reads (the world is not counted) */
    int max_contacts;
    int max_joints;
    int max_dirs;     /* friction-pyramid directions d of the pivoting solvers */
} cdc_limits;

/* A rigid body. A kinematic body (a robot finger, a haptic probe) has its velocity prescribed:
 * leave mass and inertia 0; f and tau are unused. */
typedef struct cdc_body {
    uint32_t id;       /* > 0; 0 is the fixed world */
    double mass;       /* kg */
    double inertia[9]; /* kg m^2, about the centre of mass, body frame, row-major */
    double pos[3];     /* centre of mass, world, m */
    double quat[4];    /* w, x, y, z: body to world (all 0 is sent as all 0: give the identity) */
    double v[3];       /* m/s */
    double w[3];       /* rad/s, world */
    double f[3];       /* N, applied at the centre of mass, excluding gravity */
    double tau[3];     /* N m, world */
    bool kinematic;
} cdc_body;

/* A contact point between body_a and body_b (0: the world). */
typedef struct cdc_contact {
    uint64_t id;        /* stable across frames: warm starts key on it */
    uint32_t body_a;
    uint32_t body_b;
    double point[3];    /* world, m */
    double normal[3];   /* unit, world, from body_b into body_a */
    double distance;    /* signed gap, m, < 0 when penetrating */
    double mu;          /* Coulomb coefficient >= 0 */
    double stiffness;   /* N/m; 0: the session's default */
    double dissipation; /* s; 0: the session's default */
} cdc_contact;

typedef enum cdc_joint_kind {
    CDC_JOINT_BALL = 1,   /* the bodies share the anchor; rotation is free */
    CDC_JOINT_HINGE = 2,  /* rotation about axis only */
    CDC_JOINT_SLIDER = 3, /* translation along axis only */
    CDC_JOINT_FIXED = 4,  /* no relative motion */
} cdc_joint_kind;

/* A bilateral constraint between body_a (never the world) and body_b (0: the world). */
typedef struct cdc_joint {
    uint32_t id;       /* stable across frames, unique within a frame */
    uint32_t body_a;
    uint32_t body_b;
    cdc_joint_kind kind;
    double anchor[3];  /* world, m */
    double axis[3];    /* world, unit: hinge axis or slider direction */
} cdc_joint;

/* One frame: the state to solve a step for. The arrays are the caller's; nothing is kept after
 * cdc_frame_send returns. The library reads every field of the caller's struct, so its size is
 * the soversion's ABI: a field added, even at the end, takes a new soversion. */
typedef struct cdc_frame {
    uint64_t seq;            /* echoed in the Result */
    double dt;               /* s, in [1e-7, 1] */
    double gravity[3];       /* m/s^2 */
    int friction_dirs;       /* d; 0: 8, or the session's granted max when fewer */
    cdc_solver solver;       /* CDC_SOLVER_DEFAULT: the session's */
    int nb, nc, nj;
    const cdc_body *bodies;      /* [nb] */
    const cdc_contact *contacts; /* [nc] */
    const cdc_joint *joints;     /* [nj] */
    double penetration_recovery; /* in [0, 1]: the fraction of each contact's penetration the
                                  * answer removes in this step (0: held; sap: ignored) */
} cdc_frame;

/* contactd.v1.Status. */
typedef enum cdc_status {
    CDC_STATUS_OK = 1,       /* solved and certified */
    CDC_STATUS_DEADLINE = 2, /* stopped at the deadline; the answer is usable (see source) */
    CDC_STATUS_FALLBACK = 3, /* the solver failed; a fallback answered */
    CDC_STATUS_FAILED = 4,   /* no usable answer; forces are zero */
} cdc_status;

/* contactd.v1.AnswerSource: where a Result's forces come from. */
typedef enum cdc_answer {
    CDC_ANSWER_NONE = 0,           /* no certified answer for any contact: zero forces */
    CDC_ANSWER_SOLVER = 1,         /* the solver's own answer of this frame */
    CDC_ANSWER_ITERATE = 2,        /* the solver's best iterate at the deadline (sap, ncp) */
    CDC_ANSWER_LAST_CERTIFIED = 3, /* the session's last certified impulses, by contact id */
} cdc_answer;

typedef enum cdc_contact_state {
    CDC_STATE_SEPARATE = 1,
    CDC_STATE_STICK = 2,
    CDC_STATE_SLIDE = 3,
} cdc_contact_state;

typedef struct cdc_contact_force {
    uint64_t id;
    double force[3];         /* N, world, on body_a at the point (impulse / dt) */
    double impulse[3];       /* N s, contact frame: normal, tangent 1, tangent 2 */
    cdc_contact_state state;
} cdc_contact_force;

typedef struct cdc_body_velocity {
    uint32_t id;
    double v[3]; /* post-step, m/s, world */
    double w[3]; /* post-step, rad/s, world */
} cdc_body_velocity;

typedef struct cdc_joint_force {
    uint32_t id;
    double force[3];  /* N, world, on body_a at the anchor */
    double torque[3]; /* N m, world, on body_a */
} cdc_joint_force;

/* contactd.v1.Timing: CLOCK_MONOTONIC nanoseconds of the daemon's host (the same clock as the
 * client's on one machine). */
typedef struct cdc_timing {
    int64_t received_ns;    /* the frame reached the daemon */
    int64_t release_ns;     /* the solve became due: the tick, or the frame's arrival */
    int64_t solve_start_ns;
    int64_t solve_ns;       /* wall time of the solve */
    int64_t deadline_ns;    /* absolute deadline the solve ran under */
    int64_t sent_ns;        /* the result was handed to the socket */
    int64_t wake_late_ns;   /* lateness of the worker's wake-up before the solve */
    bool deadline_met;
    int miss_reason;        /* contactd.v1.MissReason: 0 none, 1 host, 2 solver, 3 scheduling,
                             * 4 io */
} cdc_timing;

/* Certificate residuals of the answer (contactd.v1.Residuals), all >= 0. */
typedef struct cdc_residuals {
    double complementarity; /* N s * m/s */
    double normal_velocity; /* m/s */
    double cone;            /* N s */
    double dissipation;     /* N s */
    double momentum;        /* N s */
    double joint;           /* m/s */
} cdc_residuals;

/* A Result. The arrays point into the connection and stay valid until the next cdc_msg_recv
 * on it (or cdc_conn_close); copy what you keep. */
typedef struct cdc_result {
    uint64_t seq;                     /* the frame's */
    uint64_t tick;
    cdc_status status;
    cdc_answer source;
    int nc, nb, nj;
    const cdc_contact_force *contacts; /* [nc] in frame order */
    const cdc_body_velocity *bodies;   /* [nb] in frame order */
    const cdc_joint_force *joints;     /* [nj] in frame order */
    cdc_timing timing;
    const char *solver;               /* the solver that answered ("lemke", ...) */
    unsigned pivots, iterations;
    cdc_residuals residuals;
    const char *detail;               /* why, when status is not CDC_STATUS_OK; "" otherwise */
} cdc_result;

/* Latency percentiles of the daemon's statistics, ns. */
typedef struct cdc_percentiles {
    uint64_t count;
    int64_t p50_ns, p99_ns, p999_ns, max_ns;
} cdc_percentiles;

/* The daemon-wide part of contactd.v1.Stats. */
typedef struct cdc_stats {
    uint64_t ticks;
    uint64_t frames_received, frames_solved, frames_superseded, frames_refused;
    uint64_t deadline_misses;
    uint64_t results_dropped;
    uint32_t sessions;       /* open sessions */
    bool realtime;           /* the daemon obtained SCHED_FIFO */
    cdc_percentiles solve;   /* every session's solves */
    cdc_percentiles latency; /* frame received -> result handed to the socket */
} cdc_stats;

/* What the daemon granted in its Welcome. Strings belong to the connection (valid until
 * cdc_conn_close). */
typedef struct cdc_welcome {
    uint64_t session_id;
    const char *server_version;
    const char *default_solver; /* name of the session's default solver */
    cdc_limits limits;          /* granted: frames must stay within these */
    uint32_t max_message_bytes;
    bool request_mode;          /* echoed */
    uint32_t rate_hz;           /* ticks per second (stream mode) */
    int64_t tick_epoch_ns;      /* CLOCK_MONOTONIC time of one tick */
    int64_t tick_period_ns;
    int64_t budget_ns;          /* granted solve time per frame */
    int64_t deadline_ns;        /* relative deadline: release + this */
    uint64_t workspace_bytes;   /* memory the session holds in the daemon */
    uint32_t request_queue;     /* request mode: frames that may wait to be solved */
    const char *record_path;    /* the session's recording file, "" when not recorded */
} cdc_welcome;

#endif /* CONTACTD_TYPES_H */
