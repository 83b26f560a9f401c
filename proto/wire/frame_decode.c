/* SPDX-License-Identifier: MIT */
/* The Frame fast path (frame_decode.h). Each message is read field by field into its cs_ type;
 * a bit per field number catches a singular field given twice (the general path keeps the last
 * scalar, as protobuf-c does, and refuses a message field given twice: wire/strict.h). Defaults
 * are proto3's and the codec's: absent numbers and vectors 0, an absent orientation the
 * identity, inertia's count 9 for a dynamic body and 0 for a kinematic one, friction_directions
 * 0 meaning cs_dirs_default, solver_name winning over the enum. */
#include "wire/frame_decode.h"

#include <stdbool.h>
#include <string.h>

#include "wire/reader.h"

// Field numbers of contactd.proto, as far as this file reads them.
enum { CLIENT_FRAME = 2 };
enum {
    FRAME_SEQ = 1, FRAME_DT, FRAME_GRAVITY, FRAME_DIRS, FRAME_BODIES, FRAME_CONTACTS,
    FRAME_SOLVER, FRAME_SOLVER_NAME, FRAME_JOINTS, FRAME_RECOVERY
};
enum {
    BODY_ID = 1, BODY_MASS, BODY_INERTIA, BODY_POSITION, BODY_ORIENTATION, BODY_V, BODY_W,
    BODY_FORCE, BODY_TORQUE, BODY_KINEMATIC
};
enum {
    CONTACT_ID = 1, CONTACT_A, CONTACT_B, CONTACT_POINT, CONTACT_NORMAL, CONTACT_DISTANCE,
    CONTACT_FRICTION, CONTACT_STIFFNESS, CONTACT_DISSIPATION
};
enum { JOINT_ID = 1, JOINT_A, JOINT_B, JOINT_KIND, JOINT_ANCHOR, JOINT_AXIS };

// Solver names are short words; a longer one, or one with other bytes, goes the general way.
#define NAME_MAX_LEN 31

// inertia, packed: 8 bytes a value, at most 9 of them.
static bool read_inertia(cd_reader *r, unsigned wt, double out[9], int *ret_n) {
    cd_reader m;
    if (wt != WT_LEN || !rd_len(r, &m) || (m.end - m.p) % 8 != 0 || m.end - m.p > 9 * 8) {
        return false;
    }
    int n = 0;
    while (m.p < m.end) {
        (void)rd_double(&m, &out[n++]);
    }
    *ret_n = n;
    return true;
}

static bool read_body(cd_reader m, cs_body *b) {
    *b = (cs_body){.quat = {1.0, 0.0, 0.0, 0.0}};
    uint32_t seen = 0;
    int n_inertia = 0;
    uint64_t kinematic = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || !rd_once(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case BODY_ID: ok = rd_u32(&m, wt, &b->id); break;
        case BODY_MASS: ok = rd_f64(&m, wt, &b->mass); break;
        case BODY_INERTIA: ok = read_inertia(&m, wt, b->inertia, &n_inertia); break;
        case BODY_POSITION: ok = rd_vec(&m, wt, b->pos, 3); break;
        case BODY_ORIENTATION: ok = rd_vec(&m, wt, b->quat, 4); break;
        case BODY_V: ok = rd_vec(&m, wt, b->v, 3); break;
        case BODY_W: ok = rd_vec(&m, wt, b->w, 3); break;
        case BODY_FORCE: ok = rd_vec(&m, wt, b->f, 3); break;
        case BODY_TORQUE: ok = rd_vec(&m, wt, b->tau, 3); break;
        case BODY_KINEMATIC: ok = rd_u64(&m, wt, &kinematic); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    b->kinematic = kinematic != 0;
    // The codec's count rule; its refusals are worded on the general path.
    return n_inertia == (b->kinematic ? 0 : 9);
}

static bool read_contact(cd_reader m, cs_contact *c) {
    *c = (cs_contact){0};
    uint32_t seen = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || !rd_once(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case CONTACT_ID: ok = rd_u64(&m, wt, &c->id); break;
        case CONTACT_A: ok = rd_u32(&m, wt, &c->body_a); break;
        case CONTACT_B: ok = rd_u32(&m, wt, &c->body_b); break;
        case CONTACT_POINT: ok = rd_vec(&m, wt, c->point, 3); break;
        case CONTACT_NORMAL: ok = rd_vec(&m, wt, c->normal, 3); break;
        case CONTACT_DISTANCE: ok = rd_f64(&m, wt, &c->distance); break;
        case CONTACT_FRICTION: ok = rd_f64(&m, wt, &c->mu); break;
        case CONTACT_STIFFNESS: ok = rd_f64(&m, wt, &c->stiffness); break;
        case CONTACT_DISSIPATION: ok = rd_f64(&m, wt, &c->dissipation); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

static bool read_joint(cd_reader m, cs_joint *j) {
    *j = (cs_joint){0};
    uint32_t seen = 0, kind = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || !rd_once(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case JOINT_ID: ok = rd_u32(&m, wt, &j->id); break;
        case JOINT_A: ok = rd_u32(&m, wt, &j->body_a); break;
        case JOINT_B: ok = rd_u32(&m, wt, &j->body_b); break;
        case JOINT_KIND: ok = rd_u32(&m, wt, &kind); break;
        case JOINT_ANCHOR: ok = rd_vec(&m, wt, j->anchor, 3); break;
        case JOINT_AXIS: ok = rd_vec(&m, wt, j->axis, 3); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    j->kind = (cs_joint_kind)(int32_t)kind;
    return true;
}

// solver_name: a known name. "" is no name.
static bool read_solver_name(cd_reader *r, unsigned wt, bool *named, cs_solver *ret) {
    char name[NAME_MAX_LEN + 1];
    if (!rd_text(r, wt, name, sizeof name)) {
        return false;
    }
    *named = name[0] != '\0';
    return !*named || cs_solver_from_name(name, ret) == 0;
}

int cd_frame_decode(const uint8_t *data, size_t len, const cs_limits *lim,
                    cs_solver default_solver, cs_scene *out) {
    cd_reader env = {data, data + len}, r;
    unsigned field, wt;
    // The envelope holds the frame and nothing else.
    if (!rd_tag(&env, &field, &wt) || field != CLIENT_FRAME || wt != WT_LEN ||
        !rd_len(&env, &r) || env.p != env.end) {
        return 0;
    }
    uint32_t seen = 0, dirs = 0, solver = 0;
    bool named = false;
    cs_solver by_name = CS_SOLVER_DEFAULT;
    size_t nb = 0, nc = 0, nj = 0;
    const size_t max_bodies = (size_t)lim->max_bodies, max_contacts = (size_t)lim->max_contacts,
                 max_joints = (size_t)lim->max_joints;
    out->seq = 0;
    out->dt = 0.0;
    out->penetration_recovery = 0.0;
    memset(out->gravity, 0, sizeof out->gravity);
    while (r.p < r.end) {
        if (!rd_tag(&r, &field, &wt)) {
            return 0;
        }
        const bool repeated =
            field == FRAME_BODIES || field == FRAME_CONTACTS || field == FRAME_JOINTS;
        if (!repeated && !rd_once(&seen, field)) {
            return 0;
        }
        cd_reader m;
        bool ok;
        switch (field) {
        case FRAME_SEQ: ok = rd_u64(&r, wt, &out->seq); break;
        case FRAME_DT: ok = rd_f64(&r, wt, &out->dt); break;
        case FRAME_RECOVERY: ok = rd_f64(&r, wt, &out->penetration_recovery); break;
        case FRAME_GRAVITY: ok = rd_vec(&r, wt, out->gravity, 3); break;
        case FRAME_DIRS: ok = rd_u32(&r, wt, &dirs); break;
        case FRAME_BODIES:
            ok = rd_element(&r, wt, &m, nb, max_bodies) && read_body(m, &out->bodies[nb++]);
            break;
        case FRAME_CONTACTS:
            ok = rd_element(&r, wt, &m, nc, max_contacts) &&
                 read_contact(m, &out->contacts[nc++]);
            break;
        case FRAME_SOLVER: ok = rd_u32(&r, wt, &solver); break;
        case FRAME_SOLVER_NAME: ok = read_solver_name(&r, wt, &named, &by_name); break;
        case FRAME_JOINTS:
            ok = rd_element(&r, wt, &m, nj, max_joints) && read_joint(m, &out->joints[nj++]);
            break;
        default: ok = false; break;
        }
        if (!ok) {
            return 0;
        }
    }
    const int32_t by_enum = (int32_t)solver;
    if (dirs > (uint32_t)lim->max_dirs || (!named && (by_enum < 0 || by_enum >= CS_SOLVER_COUNT))) {
        return 0;
    }
    const cs_solver s = named ? by_name : (cs_solver)by_enum;
    out->friction_dirs = dirs ? (int)dirs : cs_dirs_default(lim);
    out->solver = s != CS_SOLVER_DEFAULT ? s : default_solver;
    out->nb = (int)nb;
    out->nc = (int)nc;
    out->nj = (int)nj;
    return 1;
}

int cd_frame_seq(const uint8_t *data, size_t len, uint64_t *ret) {
    cd_reader env = {data, data + len}, r, skip;
    unsigned field, wt;
    if (!rd_tag(&env, &field, &wt) || field != CLIENT_FRAME || wt != WT_LEN || !rd_len(&env, &r)) {
        return 0;
    }
    uint64_t seq = 0, v;
    while (r.p < r.end) {
        bool ok = rd_tag(&r, &field, &wt);
        if (ok && field == FRAME_SEQ) {
            ok = rd_u64(&r, wt, &seq);
        } else if (ok && (wt == WT_FIXED64 || wt == WT_FIXED32)) {
            const size_t n = wt == WT_FIXED64 ? 8 : 4;
            ok = (size_t)(r.end - r.p) >= n;
            r.p += ok ? n : 0;
        } else if (ok) {
            ok = wt == WT_VARINT ? rd_varint(&r, &v) : wt == WT_LEN && rd_len(&r, &skip);
        }
        if (!ok) {
            return 0;
        }
    }
    *ret = seq;
    return 1;
}
