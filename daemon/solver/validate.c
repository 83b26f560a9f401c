/* SPDX-License-Identifier: MIT */
/* Scene validation: everything a solver assumes about its input, checked once where the scene
 * enters (the daemon's io/ingest.c for frames and scene files), each failure a message that names
 * the field. */
#include "solver/contact.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "solver/linalg.h"

/* Tolerance on unit quaternions and normals: the contract (1e-6). */
#define UNIT_TOL 1e-6

static int fail(int status, char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static bool finite3(const double v[3]) {
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* Checks one vector field; name is e.g. "position". */
#define CHECK3(v, prefix, idx, name)                                                              \
    do {                                                                                          \
        if (!finite3(v))                                                                          \
            return fail(CS_EINPUT, err, errlen, "%s[%d]." name ": not a finite number",           \
                        prefix, idx);                                                             \
    } while (0)

/* CHECK3, and the vector's length at most most (unit: its unit, for the message). */
#define CHECK3_RANGE(v, prefix, idx, name, most, unit)                                            \
    do {                                                                                          \
        CHECK3(v, prefix, idx, name);                                                             \
        const double len_ = sqrt(cs_dot3(v, v));                                                  \
        if (len_ > (most))                                                                        \
            return fail(CS_EINPUT, err, errlen,                                                   \
                        "%s[%d]." name ": length %g is beyond the physical range [0, %g] " unit, \
                        prefix, idx, len_, (double)(most));                                       \
    } while (0)

/* A kinematic body's velocity is prescribed: any mass or inertia it is given would be ignored,
 * so it is refused rather than silently dropped. */
static int validate_kinematic_mass(const cs_body *B, int i, char *err, size_t errlen) {
    if (B->mass != 0)
        return fail(CS_EINPUT, err, errlen, "bodies[%d].mass: " CS_KINEMATIC_NO_MASS, i);
    for (int k = 0; k < 9; k++)
        if (B->inertia[k] != 0)
            return fail(CS_EINPUT, err, errlen, "bodies[%d].inertia: " CS_KINEMATIC_NO_MASS, i);
    return 0;
}

/* Mass and inertia of a body the solve moves. */
static int validate_mass(const cs_body *B, int i, char *err, size_t errlen) {
    if (!isfinite(B->mass) || !(B->mass > 0))
        return fail(CS_EINPUT, err, errlen, "bodies[%d].mass: must be finite and > 0 (got %g)", i,
                    B->mass);
    if (B->mass < CS_MASS_MIN || B->mass > CS_MASS_MAX)
        return fail(CS_EINPUT, err, errlen,
                    "bodies[%d].mass: %g is outside the physical range [%g, %g] kg", i, B->mass,
                    CS_MASS_MIN, CS_MASS_MAX);
    for (int k = 0; k < 9; k++) {
        if (!isfinite(B->inertia[k]))
            return fail(CS_EINPUT, err, errlen, "bodies[%d].inertia[%d]: not a finite number", i,
                        k);
        if (fabs(B->inertia[k]) > CS_INERTIA_MAX)
            return fail(CS_EINPUT, err, errlen,
                        "bodies[%d].inertia[%d]: %g is outside the physical range [-%g, %g] "
                        "kg m^2", i, k, B->inertia[k], CS_INERTIA_MAX, CS_INERTIA_MAX);
    }
    const double *I = B->inertia;
    const double scale = fabs(I[0]) + fabs(I[4]) + fabs(I[8]);
    // Symmetry within rounding of the values a client would send.
    for (int r = 0; r < 3; r++)
        for (int c = r + 1; c < 3; c++)
            if (fabs(I[3 * r + c] - I[3 * c + r]) > 1e-9 * scale)
                return fail(CS_EINPUT, err, errlen,
                            "bodies[%d].inertia: not symmetric ([%d][%d] = %g, [%d][%d] = %g)", i,
                            r, c, I[3 * r + c], c, r, I[3 * c + r]);
    double inv[9];
    if (cs_mat3_spd_inverse(inv, I) < 0)
        return fail(CS_EINPUT, err, errlen, "bodies[%d].inertia: not positive definite", i);
    return 0;
}

static int validate_body(const cs_body *B, int i, char *err, size_t errlen) {
    if (B->id == 0)
        return fail(CS_EINPUT, err, errlen, "bodies[%d].id: 0 is reserved for the fixed world", i);
    const int r = B->kinematic ? validate_kinematic_mass(B, i, err, errlen)
                               : validate_mass(B, i, err, errlen);
    if (r)
        return r;
    CHECK3_RANGE(B->pos, "bodies", i, "position", CS_POSITION_MAX, "m");
    CHECK3_RANGE(B->v, "bodies", i, "linear_velocity", CS_SPEED_MAX, "m/s");
    CHECK3_RANGE(B->w, "bodies", i, "angular_velocity", CS_SPIN_MAX, "rad/s");
    CHECK3_RANGE(B->f, "bodies", i, "force", CS_FORCE_MAX, "N");
    CHECK3_RANGE(B->tau, "bodies", i, "torque", CS_FORCE_MAX, "N m");
    const double *q = B->quat;
    if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || !isfinite(q[3]))
        return fail(CS_EINPUT, err, errlen, "bodies[%d].orientation: not a finite number", i);
    const double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (fabs(qn - 1) > UNIT_TOL)
        return fail(CS_EINPUT, err, errlen,
                    "bodies[%d].orientation: not a unit quaternion (|q| = %.9g)", i, qn);
    return 0;
}

static bool body_known(const cs_scene *s, uint32_t id) {
    if (id == 0)
        return true;
    for (int b = 0; b < s->nb; b++)
        if (s->bodies[b].id == id)
            return true;
    return false;
}

/* True when id is a body the solve moves: neither the world nor kinematic (id known). */
static bool body_is_free(const cs_scene *s, uint32_t id) {
    for (int b = 0; b < s->nb; b++)
        if (s->bodies[b].id == id)
            return !s->bodies[b].kinematic;
    return false;
}

static int validate_contact(const cs_scene *s, const cs_contact *C, int i, char *err,
                            size_t errlen) {
    if (!body_known(s, C->body_a))
        return fail(CS_EINPUT, err, errlen, "contacts[%d].body_a: unknown body id %u", i,
                    C->body_a);
    if (!body_known(s, C->body_b))
        return fail(CS_EINPUT, err, errlen, "contacts[%d].body_b: unknown body id %u", i,
                    C->body_b);
    if (C->body_a == C->body_b)
        return fail(CS_EINPUT, err, errlen,
                    "contacts[%d].body_b: same body as body_a (%u); a contact joins two bodies", i,
                    C->body_a);
    // Nothing free to move: no impulse changes the contact's velocity, which is prescribed.
    if (!body_is_free(s, C->body_a) && !body_is_free(s, C->body_b))
        return fail(CS_EINPUT, err, errlen,
                    "contacts[%d].%s: body_a (%u) and body_b (%u) are each kinematic or the "
                    "world; a contact needs a body the solve moves", i,
                    C->body_b == 0 ? "body_a" : "body_b", C->body_a, C->body_b);
    CHECK3_RANGE(C->point, "contacts", i, "point", CS_POSITION_MAX, "m");
    CHECK3(C->normal, "contacts", i, "normal");
    const double nn = sqrt(cs_dot3(C->normal, C->normal));
    if (fabs(nn - 1) > UNIT_TOL)
        return fail(CS_EINPUT, err, errlen, "contacts[%d].normal: not unit length (|n| = %.9g)",
                    i, nn);
    if (!isfinite(C->distance) || fabs(C->distance) > CS_DISTANCE_MAX)
        return fail(CS_EINPUT, err, errlen,
                    "contacts[%d].distance: %g is outside the physical range [-%g, %g] m", i,
                    C->distance, CS_DISTANCE_MAX, CS_DISTANCE_MAX);
    if (!isfinite(C->mu) || C->mu < 0 || C->mu > CS_FRICTION_MAX)
        return fail(CS_EINPUT, err, errlen,
                    "contacts[%d].friction: %g is outside the physical range [0, %g]", i, C->mu,
                    CS_FRICTION_MAX);
    if (!isfinite(C->stiffness) || C->stiffness < 0 || C->stiffness > CS_STIFFNESS_MAX)
        return fail(CS_EINPUT, err, errlen,
                    "contacts[%d].stiffness: %g is outside the physical range [0, %g] N/m "
                    "(0 = not given)", i, C->stiffness, CS_STIFFNESS_MAX);
    if (!isfinite(C->dissipation) || C->dissipation < 0 || C->dissipation > CS_DISSIPATION_MAX)
        return fail(CS_EINPUT, err, errlen,
                    "contacts[%d].dissipation: %g is outside the physical range [0, %g] s "
                    "(0 = not given)", i, C->dissipation, CS_DISSIPATION_MAX);
    return 0;
}

static int validate_joint(const cs_scene *s, const cs_joint *J, int i, char *err, size_t errlen) {
    if (J->kind < CS_JOINT_BALL || J->kind > CS_JOINT_FIXED)
        return fail(CS_EINPUT, err, errlen, "joints[%d].kind: unknown joint kind %d", i,
                    (int)J->kind);
    // Forces are reported on body_a: it must be a body.
    if (J->body_a == 0)
        return fail(CS_EINPUT, err, errlen,
                    "joints[%d].body_a: 0 is the world; the world goes in body_b", i);
    if (!body_known(s, J->body_a))
        return fail(CS_EINPUT, err, errlen, "joints[%d].body_a: unknown body id %u", i,
                    J->body_a);
    if (!body_known(s, J->body_b))
        return fail(CS_EINPUT, err, errlen, "joints[%d].body_b: unknown body id %u", i,
                    J->body_b);
    if (J->body_a == J->body_b)
        return fail(CS_EINPUT, err, errlen,
                    "joints[%d].body_b: same body as body_a (%u); a joint joins two bodies", i,
                    J->body_a);
    // The solve moves body_a: a kinematic body (a moving world) goes in body_b, as the world does.
    if (!body_is_free(s, J->body_a))
        return fail(CS_EINPUT, err, errlen,
                    "joints[%d].body_a: body %u is kinematic; put the body the joint moves in "
                    "body_a and the kinematic one in body_b", i, J->body_a);
    CHECK3_RANGE(J->anchor, "joints", i, "anchor", CS_POSITION_MAX, "m");
    CHECK3(J->axis, "joints", i, "axis");
    // A hinge turns about its axis, a slider moves along it: both need one.
    const double an = sqrt(cs_dot3(J->axis, J->axis));
    if ((J->kind == CS_JOINT_HINGE || J->kind == CS_JOINT_SLIDER) && fabs(an - 1) > UNIT_TOL)
        return fail(CS_EINPUT, err, errlen, "joints[%d].axis: not unit length (|a| = %.9g)", i,
                    an);
    return 0;
}

/* The session was not admitted for solver s: name it and the solvers it was admitted for. */
static int solver_refused(cs_solver s, const cs_limits *lim, char *err, size_t errlen) {
    char declared[128];
    const size_t len =
        cs_solver_list(cs_limits_mask(lim), CS_SOLVER_DEFAULT, declared, sizeof declared);
    return fail(CS_ENOSPACE, err, errlen, "solver: '%s' was not declared for this session "
                "(declared: %s)", cs_solver_name(s), len ? declared : "none");
}

/* Solver s takes no joints: name it, and those that do. */
static int joints_refused(cs_solver s, char *err, size_t errlen) {
    unsigned mask = 0;
    for (int k = 0; k < CS_SOLVER_COUNT; k++)
        mask |= cs_solver_takes_joints((cs_solver)k) ? 1u << k : 0;
    char takes[128];
    const size_t len = cs_solver_list(mask, CS_SOLVER_DEFAULT, takes, sizeof takes);
    return fail(CS_EINPUT, err, errlen, "joints: solver '%s' does not take joints (these do: %s)",
                cs_solver_name(s), len ? takes : "none");
}

int cs_scene_validate(const cs_scene *s, const cs_limits *lim, char *err, size_t errlen) {
    if (s->nb < 0 || s->nb > lim->max_bodies)
        return fail(CS_ENOSPACE, err, errlen, "bodies: %d bodies exceed the session limit of %d",
                    s->nb, lim->max_bodies);
    if (s->nc < 0 || s->nc > lim->max_contacts)
        return fail(CS_ENOSPACE, err, errlen,
                    "contacts: %d contacts exceed the session limit of %d", s->nc,
                    lim->max_contacts);
    if (s->nj < 0 || s->nj > lim->max_joints)
        return fail(CS_ENOSPACE, err, errlen, "joints: %d joints exceed the session limit of %d",
                    s->nj, lim->max_joints);
    // Forces are impulses / dt: a subnormal dt overflows them, a huge one is no contact step.
    if (!(s->dt >= CS_DT_MIN && s->dt <= CS_DT_MAX))
        return fail(CS_EINPUT, err, errlen, "dt: must be in [%g, %g] s (got %g)", CS_DT_MIN,
                    CS_DT_MAX, s->dt);
    if (!(s->penetration_recovery >= 0 && s->penetration_recovery <= 1))
        return fail(CS_EINPUT, err, errlen, "penetration_recovery: must be in [0, 1] (got %g)",
                    s->penetration_recovery);
    if (!finite3(s->gravity))
        return fail(CS_EINPUT, err, errlen, "gravity: not a finite number");
    const double g = sqrt(cs_dot3(s->gravity, s->gravity));
    if (g > CS_GRAVITY_MAX)
        return fail(CS_EINPUT, err, errlen,
                    "gravity: length %g is beyond the physical range [0, %g] m/s^2", g,
                    CS_GRAVITY_MAX);
    const int d = s->friction_dirs ? s->friction_dirs : cs_dirs_default(lim);
    if (d < 4 || d % 2 != 0)
        return fail(CS_EINPUT, err, errlen,
                    "friction_directions: must be even and >= 4 (got %d)", s->friction_dirs);
    if (d > lim->max_dirs)
        return fail(CS_ENOSPACE, err, errlen,
                    "friction_directions: %d exceeds the session limit of %d", d, lim->max_dirs);
    if ((int)s->solver < 0 || (int)s->solver >= CS_SOLVER_COUNT)
        return fail(CS_EINPUT, err, errlen, "solver: unknown solver %d", (int)s->solver);
    // A known name this build does not implement is refused rather than quietly replaced.
    if (s->solver != CS_SOLVER_DEFAULT && !cs_solver_is_available(s->solver)) {
        char avail[128];
        cs_solver_list(cs_solver_mask(true), CS_SOLVER_DEFAULT, avail, sizeof avail);
        return fail(CS_EINPUT, err, errlen,
                    "solver: solver '%s' is not implemented in this build (available: %s)",
                    cs_solver_name(s->solver), avail);
    }
    if (s->solver != CS_SOLVER_DEFAULT && !cs_limits_allow(lim, s->solver))
        return solver_refused(s->solver, lim, err, errlen);
    for (int i = 0; i < s->nb; i++) {
        const int r = validate_body(&s->bodies[i], i, err, errlen);
        if (r)
            return r;
        for (int j = 0; j < i; j++)
            if (s->bodies[j].id == s->bodies[i].id)
                return fail(CS_EINPUT, err, errlen,
                            "bodies[%d].id: duplicate of bodies[%d].id (%u)", i, j,
                            s->bodies[i].id);
    }
    for (int i = 0; i < s->nc; i++) {
        const int r = validate_contact(s, &s->contacts[i], i, err, errlen);
        if (r)
            return r;
        for (int j = 0; j < i; j++)
            if (s->contacts[j].id == s->contacts[i].id)
                return fail(CS_EINPUT, err, errlen,
                            "contacts[%d].id: duplicate of contacts[%d].id (%llu)", i, j,
                            (unsigned long long)s->contacts[i].id);
    }
    for (int i = 0; i < s->nj; i++) {
        const int r = validate_joint(s, &s->joints[i], i, err, errlen);
        if (r)
            return r;
        for (int j = 0; j < i; j++)
            if (s->joints[j].id == s->joints[i].id)
                return fail(CS_EINPUT, err, errlen,
                            "joints[%d].id: duplicate of joints[%d].id (%u)", i, j,
                            s->joints[i].id);
    }
    if (s->nj > 0 && s->solver != CS_SOLVER_DEFAULT && !cs_solver_takes_joints(s->solver))
        return joints_refused(s->solver, err, errlen);
    return 0;
}
