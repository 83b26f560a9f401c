/* SPDX-License-Identifier: MIT */
/* Plain data of the wire library, shared by libcontact, the daemon and the client: solver names
 * and statuses, the scene a client sends (bodies + contacts + joints), the limits a session is
 * admitted with, solve options and results. Everything here is visible data or a name table
 * (names.c); what needs the solvers themselves (which this build has, validation, the workspace)
 * is declared in solver/contact.h. */
#ifndef CONTACTD_WIRE_TYPES_H
#define CONTACTD_WIRE_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Solver outcome. >= 0: forces usable; < 0: the caller keeps its last safe output. */
typedef enum cs_status {
    CS_CONVERGED = 0,
    CS_DEADLINE = 1, /* budget spent; the answer is an iterate or carried (cs_result.answer) */
    CS_MAXITER = 2,  /* pivot/iteration cap hit, or a cycle the solver detected (dantzig.h);
                      * iterate usable, judged by the certificate */
    CS_FALLBACK = 3, /* primary method failed, the last certified answer was carried */
    CS_RAY = -1,     /* pivoting ended on a ray / could not make progress */
    CS_SINGULAR = -2,
    CS_EINPUT = -3,   /* non-finite or inconsistent problem data */
    CS_ENOSPACE = -4, /* problem exceeds the limits it was admitted with */
    CS_UNCERTIFIED = -5, /* solver claimed success but the certificate failed */
    CS_NOANSWER = -6,    /* the solver gave no usable answer and no contact of the scene has a
                          * certified one to carry: zero forces (cs_result.answer) */
} cs_status;

/* Returns a short lower-case name ("converged", "deadline", ...). */
const char *cs_status_name(cs_status st);

/* Solver kinds. Values equal the wire enum contactd.v1.Solver. Everything else about a solver is
 * its row in solvers.c (solvers.h says how to add one). */
typedef enum cs_solver {
    CS_SOLVER_DEFAULT = 0,
    CS_SOLVER_DANTZIG = 1,
    CS_SOLVER_LEMKE = 2,
    CS_SOLVER_LEMKE_STRUCTURAL = 3,
    CS_SOLVER_LEMKE_STANDARD = 4,
    CS_SOLVER_SAP = 5,
    CS_SOLVER_NCP = 6,
} cs_solver;

#define CS_SOLVER_COUNT 7

/* "dantzig", "lemke", "lemke-structural", "lemke-standard", "sap"; "default" for 0, NULL when
 * out of range. */
const char *cs_solver_name(cs_solver s);
/* Parses a name as above. Returns 0 and sets *ret, or -1 when unknown. */
int cs_solver_from_name(const char *name, cs_solver *ret);
/* Bit (1u << s) for every named solver (CS_SOLVER_DEFAULT excluded), whether or not this build
 * implements it (cs_solver_mask in solver/contact.h tells). */
#define CS_SOLVER_NAMED_MASK (((1u << CS_SOLVER_COUNT) - 1u) & ~1u)
/* The names of the solvers in mask, comma-separated ("dantzig, lemke"): first leading when it is
 * in mask, the others in enum order. Writes whole names only into buf (len bytes, terminated when
 * len > 0); returns the characters written. For messages and help text. thread: any. */
size_t cs_solver_list(unsigned mask, cs_solver first, char *buf, size_t len);

typedef enum cs_contact_state {
    CS_STATE_SEPARATE = 1, /* values equal contactd.v1.ContactState */
    CS_STATE_STICK = 2,
    CS_STATE_SLIDE = 3,
} cs_contact_state;

/* Sizes a session declares at admission; every buffer is sized from these. */
typedef struct cs_limits {
    int max_bodies;   /* dynamic bodies (the world is not counted) */
    int max_contacts;
    int max_joints;
    int max_dirs;     /* friction-pyramid directions d for pivoting solvers */
    unsigned solvers; /* bit (1u << s) for each cs_solver s the session may run; 0 = every
                       * available solver. The workspace is sized for these only. */
} cs_limits;

#define CS_DIRS_DEFAULT 8

/* The friction directions d of a scene that names none (friction_dirs 0) within lim:
 * CS_DIRS_DEFAULT, or max_dirs when that is fewer, so that a session granted fewer directions may
 * still leave d out. thread: any. */
static inline int cs_dirs_default(const cs_limits *lim) {
    return lim->max_dirs < CS_DIRS_DEFAULT ? lim->max_dirs : CS_DIRS_DEFAULT;
}

typedef struct cs_body {
    uint32_t id;       /* > 0; 0 is the fixed world */
    double mass;       /* kg */
    double inertia[9]; /* kg m^2, about the COM, body frame, row-major */
    double pos[3];     /* COM, world, m */
    double quat[4];    /* w, x, y, z: body to world */
    double v[3];       /* m/s */
    double w[3];       /* rad/s, world */
    double f[3];       /* N, applied, excluding gravity */
    double tau[3];     /* N m, world */
    bool kinematic;    /* velocity prescribed (v, w): no mass (mass and inertia 0), the solve
                        * keeps it, contacts and joints with the body see it; f, tau unused */
} cs_body;

/* What follows "bodies[i].mass: " or "bodies[i].inertia: " when a kinematic body has either (the
 * codec words the wire's inertia count the same way as validation words the values). */
#define CS_KINEMATIC_NO_MASS "a kinematic body has no mass (its velocity is prescribed)"

typedef struct cs_contact {
    uint64_t id;          /* stable across frames */
    uint32_t body_a;      /* 0 = world */
    uint32_t body_b;      /* 0 = world */
    double point[3];      /* world, m */
    double normal[3];     /* unit, from body_b into body_a */
    double distance;      /* signed gap, m, < 0 when penetrating */
    double mu;            /* Coulomb coefficient >= 0 */
    double stiffness;     /* N/m; 0 = not given */
    double dissipation;   /* s; 0 = not given */
} cs_contact;

typedef enum cs_joint_kind {
    CS_JOINT_BALL = 1, /* values equal contactd.v1.JointKind */
    CS_JOINT_HINGE = 2,
    CS_JOINT_SLIDER = 3,
    CS_JOINT_FIXED = 4,
} cs_joint_kind;

/* A bilateral constraint: rows whose impulse may take either sign. */
typedef struct cs_joint {
    uint32_t id;      /* stable across frames */
    uint32_t body_a;
    uint32_t body_b;  /* 0 = world */
    cs_joint_kind kind;
    double anchor[3]; /* world, m */
    double axis[3];   /* world, unit (hinge, slider) */
} cs_joint;

/* The time steps a scene may have, s: from 0.1 us (no haptic or control loop runs faster) to
 * 1 s (no contact step is longer). */
#define CS_DT_MIN 1e-7
#define CS_DT_MAX 1.0

/* The physical ranges validation accepts (cs_scene_validate): wide enough for any haptic or robot
 * scene (a 1 mg particle to a 1000 t press), narrow enough that no product a solver forms from
 * them overflows or loses every digit. Vectors are bounded by their length. */
#define CS_MASS_MIN 1e-6        /* kg */
#define CS_MASS_MAX 1e6         /* kg */
#define CS_INERTIA_MAX 1e9      /* kg m^2, each entry */
#define CS_POSITION_MAX 1e4     /* m */
#define CS_SPEED_MAX 1e3        /* m/s */
#define CS_SPIN_MAX 1e4         /* rad/s */
#define CS_FORCE_MAX 1e9        /* N, also N m for torques */
#define CS_GRAVITY_MAX 1e3      /* m/s^2 */
#define CS_DISTANCE_MAX 1e3     /* m, a contact's gap either way */
#define CS_FRICTION_MAX 1e2     /* Coulomb mu */
#define CS_STIFFNESS_MAX 1e15   /* N/m */
#define CS_DISSIPATION_MAX 1e3  /* s */

/* One contact configuration. The arrays belong to whoever filled the scene. */
typedef struct cs_scene {
    uint64_t seq;
    double dt;            /* s, in [CS_DT_MIN, CS_DT_MAX] */
    double gravity[3];    /* m/s^2 */
    int friction_dirs;    /* d; 0 = cs_dirs_default(limits) */
    double penetration_recovery; /* in [0, 1]: the fraction of a penetration the step removes
                                  * (cs_model's bias; not sap's) */
    cs_solver solver;     /* CS_SOLVER_DEFAULT = the caller's default */
    int nb, nc, nj;
    cs_body *bodies;      /* [nb] */
    cs_contact *contacts; /* [nc] */
    cs_joint *joints;     /* [nj] */
} cs_scene;

/* Solver statistics, always filled. */
typedef struct cs_stats {
    int pivots;
    int iterations;
    int64_t solve_ns;  /* the solver alone inside cs_step (model and certificate excluded);
                        * 0 when opt->clock_ns is NULL */
    size_t peak_bytes; /* workspace high-water mark during the solve */
} cs_stats;

/* Certificate of an answer (certify.h). All >= 0, ~0 when the answer is exact. */
typedef struct cs_certificate {
    double complementarity; /* max_i |lambda_n,i * (v_n,i - bias_i)|, N s * m/s */
    double normal_velocity; /* max_i max(0, bias_i - v_n,i), m/s */
    double cone;            /* max_i distance of lambda_t,i outside mu_i lambda_n,i F, N s
                             * (F: unit disc, or the d-gon of a pivoting solver) */
    double dissipation;     /* max over sliding contacts of the maximal-dissipation gap
                             * lambda_t . t_hat + mu lambda_n h_F(t_hat), N s */
    double momentum;        /* ||M (v - v*) - J^T lambda||_inf, N s */
    double joint;           /* max |J_j v - bias_j| over joint rows, m/s */
    double impulse_scale;   /* max_i |lambda_i| + |M v*|_inf: the scale the numbers compare to */
    double velocity_scale;  /* max |v| over bodies and contact points: scale for velocities */
} cs_certificate;

/* Where the impulses of a result come from (cs_step's fallback rule, step.c). 0 claims nothing. */
typedef enum cs_answer {
    CS_ANSWER_NONE = 0,           /* no certified answer exists for any contact of the scene:
                                   * zero contact impulses (joints react to them); the status is
                                   * negative when there is a contact */
    CS_ANSWER_SOLVER = 1,         /* the solver's own answer of this frame, certified */
    CS_ANSWER_ITERATE = 2,        /* sap's or ncp's best iterate at the deadline: usable, not
                                   * certified */
    CS_ANSWER_LAST_CERTIFIED = 3, /* the session's last certified impulses by contact id (new
                                   * ones zero), the joints solved under them; carried says how
                                   * many had one */
} cs_answer;

/* "none", "solver", "iterate", "last-certified"; "unknown" when out of range. */
const char *cs_answer_name(cs_answer a);

/* A solve's output. Arrays are owned by whoever called cs_result_init(). */
typedef struct cs_result {
    cs_status status;
    cs_status primary;    /* the solver's own outcome; differs from status after a fallback */
    cs_answer answer;     /* where impulse comes from */
    int carried;          /* contacts whose impulse is the last certified answer's
                           * (0 unless answer is CS_ANSWER_LAST_CERTIFIED) */
    cs_solver solver;     /* the solver that produced it */
    uint64_t seq;         /* the scene's seq */
    int nb, nc, nj;
    uint64_t *contact_id; /* [nc] the scene's contact ids, in scene order */
    uint32_t *body_id;    /* [nb] the scene's body ids, in scene order */
    double *impulse;      /* [3 nc] contact frame (normal, tangent1, tangent2), N s */
    double *force;        /* [3 nc] world, N, on body_a at the point: impulse / dt */
    uint8_t *state;       /* [nc] cs_contact_state */
    double *v;            /* [6 nb] post-step (vx vy vz wx wy wz) per body, world */
    uint32_t *joint_id;   /* [nj] the scene's joint ids, in scene order */
    double *joint_force;  /* [3 nj] world, N, on body_a at the anchor: impulse / dt */
    double *joint_torque; /* [3 nj] world, N m, on body_a */
    cs_stats stats;
    cs_certificate cert;
} cs_result;

/* Bytes the arrays of a result for lim need. */
size_t cs_result_size(const cs_limits *lim);
/* Points the arrays of r into mem (cs_result_size(lim) bytes, 8-byte aligned). */
void cs_result_init(cs_result *r, void *mem, const cs_limits *lim);

/* Solve options. The library never reads a clock by itself: a deadline needs clock_ns. */
typedef struct cs_options {
    cs_solver solver;
    int64_t deadline_ns;        /* absolute, in clock_ns()'s time base; 0 = none */
    int64_t (*clock_ns)(void);  /* NULL = no deadline checks */
    double cert_tol;            /* relative tolerance for certification; 0 = default 1e-6 */
} cs_options;

#endif /* CONTACTD_WIRE_TYPES_H */
