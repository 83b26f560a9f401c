/* SPDX-License-Identifier: MIT */
/* protobuf-c <-> plain-type conversions. Conversion (Frame -> cs_scene) copies field by field into
 * caller storage and checks what only the wire can get wrong (array lengths, solver names, counts
 * against the session's limits); the physics is checked by the solver's cs_scene_validate, which
 * the daemon runs next (daemon/io/ingest.c), so a scene file, a socket frame and a test all pass
 * the same checks. The message holders point every nested
 * message into one block allocated when they are sized; building a message only writes values.
 * Holders contain pointers to their own members, so they must not be copied after _init. */
#include "wire/codec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/framing.h"
#include "wire/pack.h"

// Formats err (when the caller gave room for it) and returns code, so callers can write
// `return fail(...)`.
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) {
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

// The frame's solver choice: solver_name when given, else the enum. Whether this build implements
// it is validation's question (the wire knows every name).
static int resolve_solver(const Contactd__V1__Frame *f, cs_solver *ret, char *err, size_t errlen) {
    cs_solver s;
    if (f->solver_name && f->solver_name[0] != '\0') {
        if (cs_solver_from_name(f->solver_name, &s) < 0) {
            char known[128];
            cs_solver_list(CS_SOLVER_NAMED_MASK, CS_SOLVER_DEFAULT, known, sizeof known);
            return fail(err, errlen, CS_EINPUT, "solver_name: unknown solver '%.64s' (known: %s)",
                        f->solver_name, known);
        }
    } else {
        if ((int)f->solver < 0 || (int)f->solver >= CS_SOLVER_COUNT) {
            return fail(err, errlen, CS_EINPUT, "solver: unknown solver value %d", (int)f->solver);
        }
        s = (cs_solver)f->solver;
    }
    *ret = s;
    return 0;
}

// proto3 leaves an unset message field NULL; an absent vector is zero.
static void vec3_in(const Contactd__V1__Vec3 *v, double out[3]) {
    out[0] = v ? v->x : 0.0;
    out[1] = v ? v->y : 0.0;
    out[2] = v ? v->z : 0.0;
}

int cd_codec_scene_from_frame(const Contactd__V1__Frame *f, const cs_limits *lim,
                              cs_solver default_solver, cs_scene *out, char *err, size_t errlen) {
    if (f->n_bodies > (size_t)lim->max_bodies) {
        return fail(err, errlen, CS_ENOSPACE, "bodies: %zu bodies exceed the session limit of %d",
                    f->n_bodies, lim->max_bodies);
    }
    if (f->n_contacts > (size_t)lim->max_contacts) {
        return fail(err, errlen, CS_ENOSPACE,
                    "contacts: %zu contacts exceed the session limit of %d", f->n_contacts,
                    lim->max_contacts);
    }
    if (f->n_joints > (size_t)lim->max_joints) {
        return fail(err, errlen, CS_ENOSPACE, "joints: %zu joints exceed the session limit of %d",
                    f->n_joints, lim->max_joints);
    }
    // Checked here rather than left to validation because the unsigned wire value may not fit
    // the scene's int.
    if (f->friction_directions > (uint32_t)lim->max_dirs) {
        return fail(err, errlen, CS_ENOSPACE,
                    "friction_directions: %u exceeds the session limit of %d",
                    (unsigned)f->friction_directions, lim->max_dirs);
    }
    cs_solver solver = CS_SOLVER_DEFAULT;
    const int r = resolve_solver(f, &solver, err, errlen);
    if (r < 0) {
        return r;
    }

    out->seq = f->seq;
    out->dt = f->dt;
    out->penetration_recovery = f->penetration_recovery;
    vec3_in(f->gravity, out->gravity);
    out->friction_dirs = f->friction_directions ? (int)f->friction_directions
                                                : cs_dirs_default(lim);
    out->solver = solver != CS_SOLVER_DEFAULT ? solver : default_solver;
    out->nb = (int)f->n_bodies;
    out->nc = (int)f->n_contacts;
    out->nj = (int)f->n_joints;

    for (size_t i = 0; i < f->n_bodies; i++) {
        const Contactd__V1__Body *in = f->bodies[i];
        cs_body *b = &out->bodies[i];
        // A kinematic body has no inertia to give; validation words the mass rule.
        if (in->kinematic && in->n_inertia != 0) {
            return fail(err, errlen, CS_EINPUT, "bodies[%zu].inertia: %s", i,
                        CS_KINEMATIC_NO_MASS);
        }
        if (!in->kinematic && in->n_inertia != 9) {
            return fail(err, errlen, CS_EINPUT, "bodies[%zu].inertia: expected 9 values, got %zu",
                        i, in->n_inertia);
        }
        b->id = in->id;
        b->kinematic = in->kinematic;
        b->mass = in->mass;
        if (in->kinematic) {
            memset(b->inertia, 0, sizeof b->inertia);
        } else {
            memcpy(b->inertia, in->inertia, sizeof b->inertia);
        }
        vec3_in(in->position, b->pos);
        if (in->orientation) {
            b->quat[0] = in->orientation->w;
            b->quat[1] = in->orientation->x;
            b->quat[2] = in->orientation->y;
            b->quat[3] = in->orientation->z;
        } else {
            b->quat[0] = 1.0;
            b->quat[1] = b->quat[2] = b->quat[3] = 0.0;
        }
        vec3_in(in->linear_velocity, b->v);
        vec3_in(in->angular_velocity, b->w);
        vec3_in(in->force, b->f);
        vec3_in(in->torque, b->tau);
    }
    for (size_t i = 0; i < f->n_contacts; i++) {
        const Contactd__V1__Contact *in = f->contacts[i];
        cs_contact *c = &out->contacts[i];
        c->id = in->id;
        c->body_a = in->body_a;
        c->body_b = in->body_b;
        vec3_in(in->point, c->point);
        vec3_in(in->normal, c->normal);
        c->distance = in->distance;
        c->mu = in->friction;
        c->stiffness = in->stiffness;
        c->dissipation = in->dissipation;
    }
    for (size_t i = 0; i < f->n_joints; i++) {
        const Contactd__V1__Joint *in = f->joints[i];
        cs_joint *j = &out->joints[i];
        j->id = in->id;
        j->body_a = in->body_a;
        j->body_b = in->body_b;
        j->kind = (cs_joint_kind)in->kind;
        vec3_in(in->anchor, j->anchor);
        vec3_in(in->axis, j->axis);
    }
    return 0;
}

Contactd__V1__Status cd_codec_status(cs_status st) {
    switch (st) {
    case CS_CONVERGED:
        return CONTACTD__V1__STATUS__STATUS_OK;
    case CS_DEADLINE:
        return CONTACTD__V1__STATUS__STATUS_DEADLINE;
    case CS_MAXITER:
    case CS_FALLBACK:
        return CONTACTD__V1__STATUS__STATUS_FALLBACK;
    default:
        // Every negative status means no usable answer; an unknown positive one cannot come from
        // libcontact, and claiming success for it would be worse than failing.
        return CONTACTD__V1__STATUS__STATUS_FAILED;
    }
}

// Storage carving: the holders' arrays live in one zeroed block, each piece aligned for any type.
static size_t align_up(size_t n) {
    const size_t a = _Alignof(max_align_t);
    return (n + a - 1) / a * a;
}

static void *carve(char *base, size_t *off, size_t bytes) {
    void *p = base + *off;
    *off += align_up(bytes);
    return p;
}

static bool limits_ok(const cs_limits *lim) {
    return lim->max_bodies >= 0 && lim->max_contacts >= 0 && lim->max_joints >= 0;
}

// The one allocation behind a result holder's arrays for lim (limits_ok).
static size_t result_mem_bytes(const cs_limits *lim) {
    const size_t nc = (size_t)lim->max_contacts, nb = (size_t)lim->max_bodies,
                 nj = (size_t)lim->max_joints, nvec = 2 * nc + 2 * nb + 2 * nj;
    return align_up(nc * sizeof(Contactd__V1__ContactForce *)) +
           align_up(nc * sizeof(Contactd__V1__ContactForce)) +
           align_up(nb * sizeof(Contactd__V1__BodyVelocity *)) +
           align_up(nb * sizeof(Contactd__V1__BodyVelocity)) +
           align_up(nj * sizeof(Contactd__V1__JointForce *)) +
           align_up(nj * sizeof(Contactd__V1__JointForce)) +
           align_up(nvec * sizeof(Contactd__V1__Vec3));
}

size_t cd_codec_result_msg_bytes(const cs_limits *lim) {
    return limits_ok(lim) ? sizeof(cd_result_msg) + result_mem_bytes(lim) : 0;
}

int cd_codec_result_msg_init(cd_result_msg *m, const cs_limits *lim) {
    if (!limits_ok(lim)) {
        return -EINVAL;
    }
    const size_t nc = (size_t)lim->max_contacts, nb = (size_t)lim->max_bodies,
                 nj = (size_t)lim->max_joints, nvec = 2 * nc + 2 * nb + 2 * nj;
    const size_t total = result_mem_bytes(lim);
    char *mem = malloc(total ? total : 1);
    if (!mem) {
        return -ENOMEM;
    }
    // Written now, so the thread that fills it (a worker, for a request-mode session) takes no
    // page fault.
    memset(mem, 0, total);
    *m = (cd_result_msg){
        .mem = mem, .max_bodies = (int)nb, .max_contacts = (int)nc, .max_joints = (int)nj};
    size_t off = 0;
    m->contact_ptrs = carve(mem, &off, nc * sizeof *m->contact_ptrs);
    m->contacts = carve(mem, &off, nc * sizeof *m->contacts);
    m->body_ptrs = carve(mem, &off, nb * sizeof *m->body_ptrs);
    m->bodies = carve(mem, &off, nb * sizeof *m->bodies);
    m->joint_ptrs = carve(mem, &off, nj * sizeof *m->joint_ptrs);
    m->joints = carve(mem, &off, nj * sizeof *m->joints);
    m->vecs = carve(mem, &off, nvec * sizeof *m->vecs);

    // Wire every nested message once; builds then only write values.
    contactd__v1__server_message__init(&m->env);
    m->env.msg_case = CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT;
    m->env.result = &m->result;
    contactd__v1__result__init(&m->result);
    contactd__v1__timing__init(&m->timing);
    contactd__v1__solver_stats__init(&m->stats);
    contactd__v1__residuals__init(&m->residuals);
    m->result.timing = &m->timing;
    m->result.stats = &m->stats;
    m->result.residuals = &m->residuals;
    m->result.contacts = m->contact_ptrs;
    m->result.bodies = m->body_ptrs;
    m->result.joints = m->joint_ptrs;
    m->result.detail = m->detail;
    for (size_t i = 0; i < nvec; i++) {
        contactd__v1__vec3__init(&m->vecs[i]);
    }
    for (size_t i = 0; i < nc; i++) {
        Contactd__V1__ContactForce *cf = &m->contacts[i];
        contactd__v1__contact_force__init(cf);
        cf->force = &m->vecs[2 * i];
        cf->impulse = &m->vecs[2 * i + 1];
        m->contact_ptrs[i] = cf;
    }
    for (size_t j = 0; j < nb; j++) {
        Contactd__V1__BodyVelocity *bv = &m->bodies[j];
        contactd__v1__body_velocity__init(bv);
        bv->linear_velocity = &m->vecs[2 * nc + 2 * j];
        bv->angular_velocity = &m->vecs[2 * nc + 2 * j + 1];
        m->body_ptrs[j] = bv;
    }
    for (size_t k = 0; k < nj; k++) {
        Contactd__V1__JointForce *jf = &m->joints[k];
        contactd__v1__joint_force__init(jf);
        jf->force = &m->vecs[2 * nc + 2 * nb + 2 * k];
        jf->torque = &m->vecs[2 * nc + 2 * nb + 2 * k + 1];
        m->joint_ptrs[k] = jf;
    }
    return 0;
}

void cd_codec_result_msg_fini(cd_result_msg *m) {
    free(m->mem);
    *m = (cd_result_msg){0};
}

// Copies src (NULL: "") into dst of cap bytes, cut to fit and terminated; a Result's detail is
// copied on every solve, where snprintf's formatting machinery would cost more than the copy.
static void copy_text(char *dst, size_t cap, const char *src) {
    const size_t n = src ? strnlen(src, cap - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static void vec3_out(Contactd__V1__Vec3 *v, const double *in, bool usable) {
    v->x = usable ? in[0] : 0.0;
    v->y = usable ? in[1] : 0.0;
    v->z = usable ? in[2] : 0.0;
}

Contactd__V1__ServerMessage *cd_codec_result_build(cd_result_msg *m, const cs_result *r,
                                                   const cd_timing *t, uint64_t tick,
                                                   const char *detail) {
    if (!m->mem || r->nc < 0 || r->nb < 0 || r->nj < 0 || r->nc > m->max_contacts ||
        r->nb > m->max_bodies || r->nj > m->max_joints) {
        return NULL;
    }
    // A negative status means the arrays hold nothing the client may act on: send zeros.
    const bool usable = r->status >= 0;
    Contactd__V1__Result *res = &m->result;
    res->seq = r->seq;
    res->tick = tick;
    res->status = cd_codec_status(r->status);

    res->n_contacts = (size_t)r->nc;
    for (int i = 0; i < r->nc; i++) {
        Contactd__V1__ContactForce *cf = &m->contacts[i];
        cf->id = r->contact_id[i];
        vec3_out(cf->force, &r->force[3 * i], usable);
        vec3_out(cf->impulse, &r->impulse[3 * i], usable);
        cf->state = usable ? (Contactd__V1__ContactState)r->state[i]
                           : CONTACTD__V1__CONTACT_STATE__STATE_UNSPECIFIED;
    }
    res->n_bodies = (size_t)r->nb;
    for (int j = 0; j < r->nb; j++) {
        Contactd__V1__BodyVelocity *bv = &m->bodies[j];
        bv->id = r->body_id[j];
        vec3_out(bv->linear_velocity, &r->v[6 * j], usable);
        vec3_out(bv->angular_velocity, &r->v[6 * j + 3], usable);
    }
    res->n_joints = (size_t)r->nj;
    for (int k = 0; k < r->nj; k++) {
        Contactd__V1__JointForce *jf = &m->joints[k];
        jf->id = r->joint_id[k];
        vec3_out(jf->force, &r->joint_force[3 * k], usable);
        vec3_out(jf->torque, &r->joint_torque[3 * k], usable);
    }

    const cd_timing zero = {0};
    if (!t) {
        t = &zero;
    }
    m->timing.received_ns = t->received_ns;
    m->timing.solve_start_ns = t->solve_start_ns;
    m->timing.solve_ns = t->solve_ns;
    m->timing.deadline_ns = t->deadline_ns;
    m->timing.sent_ns = t->sent_ns;
    m->timing.deadline_met = t->deadline_met;
    m->timing.miss_reason = (Contactd__V1__MissReason)t->miss;
    m->timing.release_ns = t->release_ns;
    m->timing.wake_late_ns = t->wake_late_ns;
    // cs_answer's values equal contactd.v1.AnswerSource.
    res->source = (Contactd__V1__AnswerSource)r->answer;

    const char *name = cs_solver_name(r->solver);
    m->stats.solver = (char *)(name ? name : "");
    m->stats.pivots = r->stats.pivots > 0 ? (uint32_t)r->stats.pivots : 0;
    m->stats.iterations = r->stats.iterations > 0 ? (uint32_t)r->stats.iterations : 0;

    m->residuals.complementarity = r->cert.complementarity;
    m->residuals.normal_velocity = r->cert.normal_velocity;
    m->residuals.cone = r->cert.cone;
    m->residuals.dissipation = r->cert.dissipation;
    m->residuals.momentum = r->cert.momentum;
    m->residuals.joint = r->cert.joint;

    copy_text(m->detail, sizeof m->detail, detail);
    return &m->env;
}

int cd_codec_frame_msg_init(cd_frame_msg *m, const cs_limits *lim) {
    if (!limits_ok(lim)) {
        return -EINVAL;
    }
    const size_t nc = (size_t)lim->max_contacts, nb = (size_t)lim->max_bodies,
                 nj = (size_t)lim->max_joints, nvec = 5 * nb + 2 * nc + 2 * nj;
    const size_t total = align_up(nb * sizeof(Contactd__V1__Body *)) +
                         align_up(nb * sizeof(Contactd__V1__Body)) +
                         align_up(nb * sizeof(Contactd__V1__Quat)) +
                         align_up(9 * nb * sizeof(double)) +
                         align_up(nc * sizeof(Contactd__V1__Contact *)) +
                         align_up(nc * sizeof(Contactd__V1__Contact)) +
                         align_up(nj * sizeof(Contactd__V1__Joint *)) +
                         align_up(nj * sizeof(Contactd__V1__Joint)) +
                         align_up(nvec * sizeof(Contactd__V1__Vec3));
    char *mem = malloc(total ? total : 1);
    if (!mem) {
        return -ENOMEM;
    }
    // Written now, so the thread that fills it (a worker, for a request-mode session) takes no
    // page fault.
    memset(mem, 0, total);
    *m = (cd_frame_msg){
        .mem = mem, .max_bodies = (int)nb, .max_contacts = (int)nc, .max_joints = (int)nj};
    size_t off = 0;
    m->body_ptrs = carve(mem, &off, nb * sizeof *m->body_ptrs);
    m->bodies = carve(mem, &off, nb * sizeof *m->bodies);
    m->quats = carve(mem, &off, nb * sizeof *m->quats);
    m->inertia = carve(mem, &off, 9 * nb * sizeof *m->inertia);
    m->contact_ptrs = carve(mem, &off, nc * sizeof *m->contact_ptrs);
    m->contacts = carve(mem, &off, nc * sizeof *m->contacts);
    m->joint_ptrs = carve(mem, &off, nj * sizeof *m->joint_ptrs);
    m->joints = carve(mem, &off, nj * sizeof *m->joints);
    m->vecs = carve(mem, &off, nvec * sizeof *m->vecs);

    contactd__v1__client_message__init(&m->env);
    m->env.msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME;
    m->env.frame = &m->frame;
    contactd__v1__frame__init(&m->frame);
    contactd__v1__vec3__init(&m->gravity);
    m->frame.gravity = &m->gravity;
    m->frame.bodies = m->body_ptrs;
    m->frame.contacts = m->contact_ptrs;
    m->frame.joints = m->joint_ptrs;
    for (size_t i = 0; i < nvec; i++) {
        contactd__v1__vec3__init(&m->vecs[i]);
    }
    for (size_t i = 0; i < nb; i++) {
        Contactd__V1__Body *b = &m->bodies[i];
        contactd__v1__body__init(b);
        contactd__v1__quat__init(&m->quats[i]);
        b->n_inertia = 9;
        b->inertia = &m->inertia[9 * i];
        b->position = &m->vecs[5 * i];
        b->linear_velocity = &m->vecs[5 * i + 1];
        b->angular_velocity = &m->vecs[5 * i + 2];
        b->force = &m->vecs[5 * i + 3];
        b->torque = &m->vecs[5 * i + 4];
        b->orientation = &m->quats[i];
        m->body_ptrs[i] = b;
    }
    for (size_t k = 0; k < nc; k++) {
        Contactd__V1__Contact *c = &m->contacts[k];
        contactd__v1__contact__init(c);
        c->point = &m->vecs[5 * nb + 2 * k];
        c->normal = &m->vecs[5 * nb + 2 * k + 1];
        m->contact_ptrs[k] = c;
    }
    for (size_t k = 0; k < nj; k++) {
        Contactd__V1__Joint *j = &m->joints[k];
        contactd__v1__joint__init(j);
        j->anchor = &m->vecs[5 * nb + 2 * nc + 2 * k];
        j->axis = &m->vecs[5 * nb + 2 * nc + 2 * k + 1];
        m->joint_ptrs[k] = j;
    }
    return 0;
}

void cd_codec_frame_msg_fini(cd_frame_msg *m) {
    free(m->mem);
    *m = (cd_frame_msg){0};
}

Contactd__V1__ClientMessage *cd_codec_frame_build(cd_frame_msg *m, const cs_scene *s) {
    if (!m->mem || s->nb < 0 || s->nc < 0 || s->nj < 0 || s->nb > m->max_bodies ||
        s->nc > m->max_contacts || s->nj > m->max_joints) {
        return NULL;
    }
    Contactd__V1__Frame *f = &m->frame;
    f->seq = s->seq;
    f->dt = s->dt;
    f->penetration_recovery = s->penetration_recovery;
    vec3_out(f->gravity, s->gravity, true);
    f->friction_directions = s->friction_dirs > 0 ? (uint32_t)s->friction_dirs : 0;
    f->solver = (Contactd__V1__Solver)s->solver;
    f->n_bodies = (size_t)s->nb;
    for (int i = 0; i < s->nb; i++) {
        const cs_body *in = &s->bodies[i];
        Contactd__V1__Body *b = &m->bodies[i];
        b->id = in->id;
        b->kinematic = in->kinematic;
        b->mass = in->mass;
        // A kinematic body sends no inertia (the wire rule); the holder keeps room for nine.
        b->n_inertia = in->kinematic ? 0 : 9;
        memcpy(b->inertia, in->inertia, sizeof in->inertia);
        vec3_out(b->position, in->pos, true);
        b->orientation->w = in->quat[0];
        b->orientation->x = in->quat[1];
        b->orientation->y = in->quat[2];
        b->orientation->z = in->quat[3];
        vec3_out(b->linear_velocity, in->v, true);
        vec3_out(b->angular_velocity, in->w, true);
        vec3_out(b->force, in->f, true);
        vec3_out(b->torque, in->tau, true);
    }
    f->n_contacts = (size_t)s->nc;
    for (int k = 0; k < s->nc; k++) {
        const cs_contact *in = &s->contacts[k];
        Contactd__V1__Contact *c = &m->contacts[k];
        c->id = in->id;
        c->body_a = in->body_a;
        c->body_b = in->body_b;
        vec3_out(c->point, in->point, true);
        vec3_out(c->normal, in->normal, true);
        c->distance = in->distance;
        c->friction = in->mu;
        c->stiffness = in->stiffness;
        c->dissipation = in->dissipation;
    }
    f->n_joints = (size_t)s->nj;
    for (int k = 0; k < s->nj; k++) {
        const cs_joint *in = &s->joints[k];
        Contactd__V1__Joint *j = &m->joints[k];
        j->id = in->id;
        j->body_a = in->body_a;
        j->body_b = in->body_b;
        j->kind = (Contactd__V1__JointKind)in->kind;
        vec3_out(j->anchor, in->anchor, true);
        vec3_out(j->axis, in->axis, true);
    }
    return &m->env;
}

Contactd__V1__ServerMessage *cd_codec_error_build(cd_error_msg *m, Contactd__V1__ErrorCode code,
                                                  uint64_t seq, const char *message) {
    contactd__v1__server_message__init(&m->env);
    contactd__v1__error__init(&m->error);
    m->env.msg_case = CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR;
    m->env.error = &m->error;
    m->error.code = code;
    m->error.seq = seq;
    copy_text(m->text, sizeof m->text, message);
    m->error.message = m->text;
    return &m->env;
}

size_t cd_codec_packed_size(const ProtobufCMessage *msg) {
    uint8_t prefix[CD_VARINT_MAX];
    const size_t body = protobuf_c_message_get_packed_size(msg);
    return cd_varint_encode(body, prefix) + body;
}

int cd_codec_pack(const ProtobufCMessage *msg, uint8_t *buf, size_t cap, size_t *ret_len) {
    // Packed at the end of buf in one pass (wire/pack.h), then moved behind its length prefix.
    size_t body;
    if (cd_pack_tail(msg, buf, cap, &body) < 0) {
        return -ENOBUFS;
    }
    uint8_t prefix[CD_VARINT_MAX];
    const size_t k = cd_varint_encode(body, prefix);
    if (k > cap - body) {
        return -ENOBUFS;
    }
    memmove(buf + k, buf + cap - body, body);
    memcpy(buf, prefix, k);
    *ret_len = k + body;
    return 0;
}
