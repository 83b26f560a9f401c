/* SPDX-License-Identifier: MIT */
/* Fuzz target: one solver of this build (the input's first byte picks it) on a small scene made
 * from the rest of the bytes (bodies, contacts, joints of any kind, kinematic bodies, masses and
 * poses from tiny to large, finite always: what validation lets through is what a client can
 * send). A scene validation refuses is dropped; an accepted one is stepped twice (cold, then
 * warm-started), and each step must return a status of the documented set with nothing
 * non-finite in the result. Each step runs under a deadline, as in the daemon, on a clock that
 * counts its own reads instead of time (see work_clock): the budget is a fixed amount of work,
 * the same on every run and under any sanitizer, and a solver that does not stop at it is a
 * timeout of the fuzzer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "solver/contact.h"

enum { NB = 4, NC = 8, NJ = 2 };
static const cs_limits lim = {.max_bodies = NB, .max_contacts = NC, .max_joints = NJ,
                              .max_dirs = 8};

struct bytes {
    const uint8_t *p;
    size_t n;
};

static unsigned next(struct bytes *b) {
    if (b->n == 0) {
        return 0;
    }
    b->n--;
    return *b->p++;
}

// A number in [lo, hi] from two bytes, spread evenly.
static double range(struct bytes *b, double lo, double hi) {
    const unsigned v = next(b) << 8 | next(b);
    return lo + (hi - lo) * v / 65535.0;
}

// A scale from 1e-3 to 1e3, log-evenly.
static double scale(struct bytes *b) {
    return pow(10.0, range(b, -3, 3));
}

static void unit(struct bytes *b, double v[3]) {
    v[0] = range(b, -1, 1);
    v[1] = range(b, -1, 1);
    v[2] = range(b, -1, 1);
    const double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n < 1e-3) {
        v[0] = v[1] = 0;
        v[2] = 1;
        return;
    }
    for (int k = 0; k < 3; k++) {
        v[k] /= n;
    }
}

// A body other than a, or the world (0).
static uint32_t other_body(struct bytes *b, const cs_scene *s, uint32_t a) {
    const uint32_t k = next(b) % (unsigned)(s->nb + 1);
    return k == a ? 0 : k;
}

static void make_scene(struct bytes *b, cs_scene *s) {
    s->dt = next(b) & 1 ? 1e-3 : scale(b) * 1e-4;
    const unsigned g = next(b);
    s->gravity[2] = -9.81 * (g & 1);
    // From the same byte (the corpus keeps its scenes): penetrations held or pushed apart.
    s->penetration_recovery = (g >> 1 & 3) / 3.0;
    s->friction_dirs = 4 << (next(b) % 2);
    s->nb = 1 + (int)(next(b) % NB);
    s->nc = (int)(next(b) % (NC + 1));
    s->nj = (int)(next(b) % (NJ + 1));
    for (int i = 0; i < s->nb; i++) {
        cs_body *o = &s->bodies[i];
        *o = (cs_body){.id = (uint32_t)i + 1, .quat = {1, 0, 0, 0}};
        o->kinematic = (next(b) & 7) == 0;
        if (!o->kinematic) {
            o->mass = scale(b);
            const double r = scale(b) * 1e-1;
            o->inertia[0] = o->inertia[4] = o->inertia[8] = o->mass * r * r;
        }
        for (int k = 0; k < 3; k++) {
            o->pos[k] = range(b, -1, 1);
            o->v[k] = range(b, -2, 2);
            o->w[k] = range(b, -2, 2);
        }
        unit(b, o->quat + 1);
        o->quat[0] = range(b, -1, 1);
        const double q = sqrt(o->quat[0] * o->quat[0] + 1);
        for (int k = 0; k < 4; k++) {
            o->quat[k] /= q;
        }
    }
    for (int i = 0; i < s->nc; i++) {
        cs_contact *c = &s->contacts[i];
        // Valid by construction as far as ids go (unique, two different bodies): the bytes
        // then spend themselves on what the solvers see.
        *c = (cs_contact){.id = (uint64_t)i + 1 + 256 * (next(b) % 4)};
        c->body_a = 1 + next(b) % (unsigned)s->nb;
        c->body_b = other_body(b, s, c->body_a);
        for (int k = 0; k < 3; k++) {
            c->point[k] = range(b, -1, 1);
        }
        unit(b, c->normal);
        c->distance = range(b, -1e-2, 1e-2);
        c->mu = range(b, 0, 1.5);
    }
    for (int j = 0; j < s->nj; j++) {
        cs_joint *J = &s->joints[j];
        *J = (cs_joint){.id = (uint32_t)j + 1, .kind = (cs_joint_kind)(1 + next(b) % 4)};
        J->body_a = 1 + next(b) % (unsigned)s->nb;
        J->body_b = other_body(b, s, J->body_a);
        for (int k = 0; k < 3; k++) {
            J->anchor[k] = range(b, -1, 1);
        }
        unit(b, J->axis);
    }
}

/* The solvers read the clock before each pivot or iteration and after every 2048 units of work
 * (about one multiply-add each) in between (solver/deadline.h), so a clock that moves one
 * "nanosecond" per read turns the deadline into a work budget. STEP_READS of them are a few
 * million multiply-adds: about a millisecond natively, what a session's budget buys at 1 kHz.
 * On the corpus grown from the seeds 7 steps in 8 finish within it (the explicit-pyramid Lemke's
 * 3 in 5), so both the answers and the deadline's fallbacks get fuzzed. */
#define STEP_READS 1000

static int64_t reads;

static int64_t work_clock(void) {
    return ++reads;
}

static bool finite_result(const cs_result *r) {
    for (int i = 0; i < 3 * r->nc; i++) {
        if (!isfinite(r->force[i]) || !isfinite(r->impulse[i])) {
            return false;
        }
    }
    for (int i = 0; i < 6 * r->nb; i++) {
        if (!isfinite(r->v[i])) {
            return false;
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cs_workspace *ws;
    static cs_result res;
    static void *res_mem;
    static cs_body bodies[NB];
    static cs_contact contacts[NC];
    static cs_joint joints[NJ];
    if (!ws) {
        ws = cs_workspace_new(&lim);
        res_mem = malloc(cs_result_size(&lim));
        if (!ws || !res_mem) {
            abort();
        }
        cs_result_init(&res, res_mem, &lim);
    }
    // The first byte picks the solver: one solver per input keeps an execution cheap enough
    // for long campaigns, and lets the fuzzer steer each solver's own branches.
    struct bytes b = {data, size};
    const int solver = CS_SOLVER_DEFAULT + 1 + (int)(next(&b) % (CS_SOLVER_COUNT - 1));
    cs_scene s = {.bodies = bodies, .contacts = contacts, .joints = joints};
    make_scene(&b, &s);
    s.solver = (cs_solver)solver;
    char err[256];
    if (!cs_limits_allow(&lim, s.solver) || cs_scene_validate(&s, &lim, err, sizeof err) != 0) {
        return 0; // refused, with a reason: not this target's business
    }
    cs_warmstart *warm = cs_warmstart_new(&lim);
    for (int pass = 0; pass < 2 && warm; pass++) {
        const cs_options opt = {.solver = s.solver, .clock_ns = work_clock,
                                .deadline_ns = reads + STEP_READS};
        const cs_status st = cs_step(ws, &s, &opt, warm, &res);
        if (st < CS_NOANSWER || st > CS_FALLBACK || !finite_result(&res)) {
            abort();
        }
    }
    cs_warmstart_free(warm);
    return 0;
}
