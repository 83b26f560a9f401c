/* SPDX-License-Identifier: MIT */
/* The Frame fast path (frame_decode.h). Each message is read field by field into its cs_ type;
 * a bit per field number catches a singular field given twice (protobuf-c would keep the last
 * scalar or merge the messages: the general path does that). Defaults are proto3's and the
 * codec's: absent numbers and vectors 0, an absent orientation the identity, inertia's count 9
 * for a dynamic body and 0 for a kinematic one, friction_directions 0 meaning CS_DIRS_DEFAULT,
 * solver_name winning over the enum. */
#include "wire/frame_decode.h"

#include <stdbool.h>
#include <string.h>

// Wire types (protobuf encoding).
enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2 };

// Field numbers of contactd.proto, as far as this file reads them.
enum { CLIENT_FRAME = 2 };
enum {
    FRAME_SEQ = 1, FRAME_DT, FRAME_GRAVITY, FRAME_DIRS, FRAME_BODIES, FRAME_CONTACTS,
    FRAME_SOLVER, FRAME_SOLVER_NAME, FRAME_JOINTS
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

typedef struct reader {
    const uint8_t *p, *end;
} reader;

// A varint of at most 10 bytes whose value fits 64 bits.
static bool read_varint(reader *r, uint64_t *ret) {
    if (r->p < r->end && *r->p < 0x80) {
        *ret = *r->p++;
        return true;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        const uint8_t b = *r->p++;
        if (shift == 63 && b > 1) {
            return false;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *ret = v;
            return true;
        }
    }
    return false;
}

// The next field's number and wire type; false at a malformed tag.
static bool read_tag(reader *r, unsigned *field, unsigned *wt) {
    uint64_t t;
    if (!read_varint(r, &t) || t >> 3 > 31) {
        return false; // no field of ours is numbered beyond 31
    }
    *field = (unsigned)(t >> 3);
    *wt = (unsigned)(t & 7);
    return true;
}

static bool read_double(reader *r, double *ret) {
    if (r->end - r->p < 8) {
        return false;
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(ret, r->p, 8);
#else
    uint64_t bits = 0;
    for (int i = 7; i >= 0; i--) {
        bits = bits << 8 | r->p[i]; // little-endian on the wire
    }
    memcpy(ret, &bits, sizeof bits);
#endif
    r->p += 8;
    return true;
}

// A length-delimited field's bytes as a reader of their own.
static bool read_len(reader *r, reader *inner) {
    uint64_t n;
    if (!read_varint(r, &n) || n > (uint64_t)(r->end - r->p)) {
        return false;
    }
    *inner = (reader){r->p, r->p + n};
    r->p += n;
    return true;
}

// True the first time field is seen in a message (seen holds one bit per field number).
static bool first(uint32_t *seen, unsigned field) {
    const uint32_t bit = 1u << field;
    const bool once = !(*seen & bit);
    *seen |= bit;
    return once;
}

// A message of n doubles numbered 1..n (Vec3: x y z; Quat: w x y z, cs_body's order), absent
// ones 0. Encoders write every one in order (tags 0x09, 0x11, ...): that layout is read at once.
static bool read_doubles(reader m, double *out, unsigned n) {
    if ((size_t)(m.end - m.p) == 9 * n) {
        bool in_order = true;
        for (unsigned i = 0; i < n; i++) {
            in_order &= m.p[9 * i] == (uint8_t)((i + 1) << 3 | WT_FIXED64);
        }
        if (in_order) {
            for (unsigned i = 0; i < n; i++) {
                reader one = {m.p + 9 * i + 1, m.end};
                (void)read_double(&one, &out[i]);
            }
            return true;
        }
    }
    memset(out, 0, n * sizeof *out);
    uint32_t seen = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!read_tag(&m, &field, &wt) || wt != WT_FIXED64 || field < 1 || field > n ||
            !first(&seen, field) || !read_double(&m, &out[field - 1])) {
            return false;
        }
    }
    return true;
}

// A Vec3 or Quat field's value: its wire type checked, its message read.
static bool read_vec(reader *r, unsigned wt, double *out, unsigned n) {
    reader m;
    return wt == WT_LEN && read_len(r, &m) && read_doubles(m, out, n);
}

static bool read_u64(reader *r, unsigned wt, uint64_t *ret) {
    return wt == WT_VARINT && read_varint(r, ret);
}

static bool read_f64(reader *r, unsigned wt, double *ret) {
    return wt == WT_FIXED64 && read_double(r, ret);
}

// uint32 and enum fields keep a varint's low 32 bits, as protobuf-c does.
static bool read_u32(reader *r, unsigned wt, uint32_t *ret) {
    uint64_t v;
    if (!read_u64(r, wt, &v)) {
        return false;
    }
    *ret = (uint32_t)v;
    return true;
}

// inertia, packed: 8 bytes a value, at most 9 of them.
static bool read_inertia(reader *r, unsigned wt, double out[9], int *ret_n) {
    reader m;
    if (wt != WT_LEN || !read_len(r, &m) || (m.end - m.p) % 8 != 0 || m.end - m.p > 9 * 8) {
        return false;
    }
    int n = 0;
    while (m.p < m.end) {
        (void)read_double(&m, &out[n++]);
    }
    *ret_n = n;
    return true;
}

static bool read_body(reader m, cs_body *b) {
    *b = (cs_body){.quat = {1.0, 0.0, 0.0, 0.0}};
    uint32_t seen = 0;
    int n_inertia = 0;
    uint64_t kinematic = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!read_tag(&m, &field, &wt) || !first(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case BODY_ID: ok = read_u32(&m, wt, &b->id); break;
        case BODY_MASS: ok = read_f64(&m, wt, &b->mass); break;
        case BODY_INERTIA: ok = read_inertia(&m, wt, b->inertia, &n_inertia); break;
        case BODY_POSITION: ok = read_vec(&m, wt, b->pos, 3); break;
        case BODY_ORIENTATION: ok = read_vec(&m, wt, b->quat, 4); break;
        case BODY_V: ok = read_vec(&m, wt, b->v, 3); break;
        case BODY_W: ok = read_vec(&m, wt, b->w, 3); break;
        case BODY_FORCE: ok = read_vec(&m, wt, b->f, 3); break;
        case BODY_TORQUE: ok = read_vec(&m, wt, b->tau, 3); break;
        case BODY_KINEMATIC: ok = read_u64(&m, wt, &kinematic); break;
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

static bool read_contact(reader m, cs_contact *c) {
    *c = (cs_contact){0};
    uint32_t seen = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!read_tag(&m, &field, &wt) || !first(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case CONTACT_ID: ok = read_u64(&m, wt, &c->id); break;
        case CONTACT_A: ok = read_u32(&m, wt, &c->body_a); break;
        case CONTACT_B: ok = read_u32(&m, wt, &c->body_b); break;
        case CONTACT_POINT: ok = read_vec(&m, wt, c->point, 3); break;
        case CONTACT_NORMAL: ok = read_vec(&m, wt, c->normal, 3); break;
        case CONTACT_DISTANCE: ok = read_f64(&m, wt, &c->distance); break;
        case CONTACT_FRICTION: ok = read_f64(&m, wt, &c->mu); break;
        case CONTACT_STIFFNESS: ok = read_f64(&m, wt, &c->stiffness); break;
        case CONTACT_DISSIPATION: ok = read_f64(&m, wt, &c->dissipation); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

static bool read_joint(reader m, cs_joint *j) {
    *j = (cs_joint){0};
    uint32_t seen = 0, kind = 0;
    unsigned field, wt;
    while (m.p < m.end) {
        if (!read_tag(&m, &field, &wt) || !first(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case JOINT_ID: ok = read_u32(&m, wt, &j->id); break;
        case JOINT_A: ok = read_u32(&m, wt, &j->body_a); break;
        case JOINT_B: ok = read_u32(&m, wt, &j->body_b); break;
        case JOINT_KIND: ok = read_u32(&m, wt, &kind); break;
        case JOINT_ANCHOR: ok = read_vec(&m, wt, j->anchor, 3); break;
        case JOINT_AXIS: ok = read_vec(&m, wt, j->axis, 3); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    j->kind = (cs_joint_kind)(int32_t)kind;
    return true;
}

// The next element of a repeated message field, if the limit leaves room for it.
static bool room(reader *r, unsigned wt, reader *m, int n, int max) {
    return wt == WT_LEN && n < max && read_len(r, m);
}

// solver_name: a known name in plain printable ASCII. "" is no name.
static bool read_solver_name(reader *r, unsigned wt, bool *named, cs_solver *ret) {
    reader m;
    if (wt != WT_LEN || !read_len(r, &m) || m.end - m.p > NAME_MAX_LEN) {
        return false;
    }
    char name[NAME_MAX_LEN + 1];
    const size_t n = (size_t)(m.end - m.p);
    for (size_t i = 0; i < n; i++) {
        if (m.p[i] <= ' ' || m.p[i] > '~') {
            return false;
        }
        name[i] = (char)m.p[i];
    }
    name[n] = '\0';
    *named = n > 0;
    return n == 0 || cs_solver_from_name(name, ret) == 0;
}

int cd_frame_decode(const uint8_t *data, size_t len, const cs_limits *lim,
                    cs_solver default_solver, cs_scene *out) {
    reader env = {data, data + len}, r;
    unsigned field, wt;
    // The envelope holds the frame and nothing else.
    if (!read_tag(&env, &field, &wt) || field != CLIENT_FRAME || wt != WT_LEN ||
        !read_len(&env, &r) || env.p != env.end) {
        return 0;
    }
    uint32_t seen = 0, dirs = 0, solver = 0;
    bool named = false;
    cs_solver by_name = CS_SOLVER_DEFAULT;
    int nb = 0, nc = 0, nj = 0;
    out->seq = 0;
    out->dt = 0.0;
    memset(out->gravity, 0, sizeof out->gravity);
    while (r.p < r.end) {
        if (!read_tag(&r, &field, &wt)) {
            return 0;
        }
        const bool repeated =
            field == FRAME_BODIES || field == FRAME_CONTACTS || field == FRAME_JOINTS;
        if (!repeated && !first(&seen, field)) {
            return 0;
        }
        reader m;
        bool ok;
        switch (field) {
        case FRAME_SEQ: ok = read_u64(&r, wt, &out->seq); break;
        case FRAME_DT: ok = read_f64(&r, wt, &out->dt); break;
        case FRAME_GRAVITY: ok = read_vec(&r, wt, out->gravity, 3); break;
        case FRAME_DIRS: ok = read_u32(&r, wt, &dirs); break;
        case FRAME_BODIES:
            ok = room(&r, wt, &m, nb, lim->max_bodies) && read_body(m, &out->bodies[nb++]);
            break;
        case FRAME_CONTACTS:
            ok = room(&r, wt, &m, nc, lim->max_contacts) &&
                 read_contact(m, &out->contacts[nc++]);
            break;
        case FRAME_SOLVER: ok = read_u32(&r, wt, &solver); break;
        case FRAME_SOLVER_NAME: ok = read_solver_name(&r, wt, &named, &by_name); break;
        case FRAME_JOINTS:
            ok = room(&r, wt, &m, nj, lim->max_joints) && read_joint(m, &out->joints[nj++]);
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
    out->friction_dirs = dirs ? (int)dirs : CS_DIRS_DEFAULT;
    out->solver = s != CS_SOLVER_DEFAULT ? s : default_solver;
    out->nb = nb;
    out->nc = nc;
    out->nj = nj;
    return 1;
}
