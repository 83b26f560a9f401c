/* SPDX-License-Identifier: MIT */
/* Internal: the table of solvers (solvers.c). One row per solver holds every fact the rest of
 * libcontact needs about it: the friction set it solves on (which the certificate
 * judges it on), how it is certified and warm-started, its workspace need and its solve and
 * warm-up functions behind one signature. cs_step, the workspace, the names and the config read
 * the row; none of them names a solver. (The pattern of libuv's X-macro lists and Redis's config
 * rows: one fact, one place.)
 *
 * To add a solver:
 *  1. wire/types.h (proto/wire/): a cs_solver value equal to its contactd.v1.Solver wire value,
 *     before CS_SOLVER_COUNT, and raise CS_SOLVER_COUNT; its name in wire/names.c.
 *  2. <solver>.c/.h: cs_<solver>_size(const cs_limits *) and cs__<solver>_run() (the
 *     cs__solver_run signature below), an adapter that unpacks cs__solve_in / cs__solve_out
 *     into the solver's own arguments; a cs__<solver>_warm_up() only when it calls LAPACK at
 *     sizes from the limits.
 *  3. solvers.c: include its header and add one row, indexed by its cs_solver value (a name the
 *     wire knows before the solver exists is a row without size and run: refused, by name).
 *  4. meson.build: its .c in solver_sources.
 * Nothing else changes: names, config and wire parsing, the workspace size, cs_step's
 * certificate and warm start all follow the row; tests/unit/test_solvers.c checks the row. */
#ifndef CONTACTD_SOLVER_SOLVERS_H
#define CONTACTD_SOLVER_SOLVERS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "solver/contact.h"

typedef struct cs_model cs_model;

/* The friction set a solver enforces, and so the one its answers are judged on (certify.h). */
typedef enum cs__friction {
    CS__FRICTION_NONE = 0, /* frictionless: cone and dissipation are not judged */
    CS__FRICTION_PYRAMID,  /* the model's d-sided pyramid (pivoting solvers, cs_limits.max_dirs) */
    CS__FRICTION_CONE,     /* the exact Coulomb cone */
} cs__friction;

/* What a solver starts from, out of the session's last certified answer (warmstart.h). */
typedef enum cs__warm {
    CS__WARM_NONE = 0, /* always cold: the step passes no warm start */
    CS__WARM_ANSWER,   /* reads the warm start itself (body velocities, contact impulses by id) */
    CS__WARM_BASIS,    /* Lemke basis words per contact: the step gathers them from the warm start
                        * for the scene's contacts and stores the solver's final words after a
                        * certified answer */
} cs__warm;

/* A solve's inputs. */
typedef struct cs__solve_in {
    const cs_model *m;         /* built from s */
    const cs_scene *s;
    const cs_options *opt;
    const cs_warmstart *warm;  /* CS__WARM_ANSWER: the warm start, or NULL (cold); else NULL */
    const uint32_t *basis;     /* CS__WARM_BASIS: [nc] previous basis words in scene order (0 for
                                * new contacts), or NULL (cold); it may be out->basis, which the
                                * solver reads before writing; else NULL */
} cs__solve_in;

/* A solve's outputs, shapes as in cs_result. The step sets certified and no_iterate to false
 * before the call. */
typedef struct cs__solve_out {
    double *lambda;       /* [3 nc] contact-frame impulses on body_a, N s */
    uint32_t *basis;      /* [nc] CS__WARM_BASIS: the final basis words */
    double *v;            /* [6 nb] post-step velocities, when the solver gives them (a regularized
                           * solver always; any solver that sets certified) */
    uint8_t *state;       /* [nc] cs_contact_state, with v */
    double *lambda_j;     /* [joint rows] joint_rows solvers: every joint's impulse (joints.h),
                           * with v */
    cs_certificate *cert; /* set with certified */
    bool certified;       /* the solver checked its own answer: cert holds that check */
    bool no_iterate;      /* an `iterates` solver stopped at the deadline before its first
                           * iterate: lambda, v, state hold nothing (the step falls back) */
    cs_stats *st;         /* always set */
} cs__solve_out;

/* The uniform solve: returns the solver's cs_status. thread: any, one caller per workspace.
 * rt-safe: yes. */
typedef cs_status cs__solver_run(cs_workspace *ws, const cs__solve_in *in, cs__solve_out *out);

/* One solver. */
typedef struct cs__solver_desc {
    cs_solver solver;            /* equals the row's index in the table */
    cs__friction friction;
    bool regularized;            /* solves a regularized problem: judged by
                                  * cs_certificate_is_ok_regularized() (needs CS__FRICTION_CONE) */
    bool iterates;               /* each iterate is an answer: the solver meets the deadline
                                  * itself and its best iterate at the deadline goes out,
                                  * labelled CS_ANSWER_ITERATE with its certificate (SAP's each
                                  * lowers its convex cost; ncp's each holds every contact's law
                                  * exactly, the coupling to its residual) */
    bool joints;                 /* takes scenes with joints: through the model's reduced form
                                  * (joints.h), or, with joint_rows, as rows of its own problem
                                  * (cs__joints_build_rows), returning their impulses */
    bool joint_rows;
    int delassus_rows;           /* rows per contact of the Delassus matrix W = J M^-1 J^T it forms
                                  * (cs_model_delassus): 0 none, 1 normals, 3 full */
    cs__warm warm;
    size_t (*size)(const cs_limits *lim); /* scratch bytes of one solve within lim */
    cs__solver_run *run;                  /* NULL: not a solver of this build (the row of
                                           * CS_SOLVER_DEFAULT, or a name known to the wire) */
    void (*warm_up)(cs_workspace *ws);    /* fills BLIS/LAPACK buffers at admission; NULL: none */
} cs__solver_desc;

/* The row of s (every cs_solver value has one; CS_SOLVER_DEFAULT's is empty); NULL
 * when s is out of range. s runs in this build when row->run is set. thread: any. rt-safe: yes. */
const cs__solver_desc *cs__solver_row(cs_solver s);

#endif /* CONTACTD_SOLVER_SOLVERS_H */
