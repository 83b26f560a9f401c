/* SPDX-License-Identifier: MIT */
/* A Result into cdc_result (result.h). The fast way reads each message field by field
 * (wire/reader.h), a bit per field number catching a singular field given twice (protobuf-c
 * would keep the last or merge: the general way does that), with proto3's defaults: absent
 * numbers, vectors and messages 0, absent strings "". */
#include "result.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/reader.h"

// Field numbers of contactd.proto, as far as this file reads them.
enum { SERVER_RESULT = 2 };
enum {
    RESULT_SEQ = 1, RESULT_TICK, RESULT_STATUS, RESULT_CONTACTS, RESULT_TIMING, RESULT_STATS,
    RESULT_RESIDUALS, RESULT_BODIES, RESULT_DETAIL, RESULT_SOURCE, RESULT_JOINTS
};
enum { FORCE_ID = 1, FORCE_FORCE, FORCE_IMPULSE, FORCE_STATE };
enum {
    TIMING_RECEIVED = 1, TIMING_SOLVE_START, TIMING_SOLVE, TIMING_DEADLINE, TIMING_SENT,
    TIMING_MET, TIMING_MISS, TIMING_RELEASE, TIMING_WAKE_LATE
};
enum { STATS_SOLVER = 1, STATS_PIVOTS, STATS_ITERATIONS };
enum { ITEM_ID = 1, ITEM_FIRST, ITEM_SECOND }; // BodyVelocity and JointForce: id, two Vec3s
enum { RESIDUALS = 6 };

int cdc_result_store_grow(cdc_result_store *st, size_t nb, size_t nc, size_t nj) {
    if (nc > st->contacts) {
        cdc_contact_force *f = realloc(st->forces, nc * sizeof *f);
        if (!f) {
            return -ENOMEM;
        }
        st->forces = f;
        st->contacts = nc;
    }
    if (nb > st->bodies) {
        cdc_body_velocity *v = realloc(st->velocities, nb * sizeof *v);
        if (!v) {
            return -ENOMEM;
        }
        st->velocities = v;
        st->bodies = nb;
    }
    if (nj > st->joints) {
        cdc_joint_force *j = realloc(st->joint_forces, nj * sizeof *j);
        if (!j) {
            return -ENOMEM;
        }
        st->joint_forces = j;
        st->joints = nj;
    }
    return 0;
}

void cdc_result_store_free(cdc_result_store *st) {
    free(st->forces);
    free(st->velocities);
    free(st->joint_forces);
    *st = (cdc_result_store){0};
}

static void vec3_out(const Contactd__V1__Vec3 *v, double out[3]) {
    out[0] = v ? v->x : 0.0;
    out[1] = v ? v->y : 0.0;
    out[2] = v ? v->z : 0.0;
}

int cdc_result_from_message(cdc_result_store *st, const Contactd__V1__Result *m, cdc_result *r) {
    if (m->n_contacts > INT32_MAX || m->n_bodies > INT32_MAX || m->n_joints > INT32_MAX) {
        return -EPROTO;
    }
    // Grown when it is bigger than any before: a daemon granting more than it said; never in
    // the steady state.
    if (cdc_result_store_grow(st, m->n_bodies, m->n_contacts, m->n_joints) < 0) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->n_contacts; i++) {
        const Contactd__V1__ContactForce *in = m->contacts[i];
        cdc_contact_force *o = &st->forces[i];
        o->id = in->id;
        vec3_out(in->force, o->force);
        vec3_out(in->impulse, o->impulse);
        o->state = (cdc_contact_state)in->state;
    }
    for (size_t i = 0; i < m->n_bodies; i++) {
        const Contactd__V1__BodyVelocity *in = m->bodies[i];
        cdc_body_velocity *o = &st->velocities[i];
        o->id = in->id;
        vec3_out(in->linear_velocity, o->v);
        vec3_out(in->angular_velocity, o->w);
    }
    for (size_t i = 0; i < m->n_joints; i++) {
        const Contactd__V1__JointForce *in = m->joints[i];
        cdc_joint_force *o = &st->joint_forces[i];
        o->id = in->id;
        vec3_out(in->force, o->force);
        vec3_out(in->torque, o->torque);
    }
    const Contactd__V1__Timing *t = m->timing;
    const Contactd__V1__Residuals *res = m->residuals;
    *r = (cdc_result){
        .seq = m->seq,
        .tick = m->tick,
        .status = (cdc_status)m->status,
        .source = (cdc_answer)m->source,
        .nc = (int)m->n_contacts,
        .nb = (int)m->n_bodies,
        .nj = (int)m->n_joints,
        .contacts = st->forces,
        .bodies = st->velocities,
        .joints = st->joint_forces,
        .solver = m->stats && m->stats->solver ? m->stats->solver : "",
        .pivots = m->stats ? m->stats->pivots : 0,
        .iterations = m->stats ? m->stats->iterations : 0,
        .detail = m->detail ? m->detail : "",
    };
    if (t) {
        r->timing = (cdc_timing){.received_ns = t->received_ns, .release_ns = t->release_ns,
                                 .solve_start_ns = t->solve_start_ns, .solve_ns = t->solve_ns,
                                 .deadline_ns = t->deadline_ns, .sent_ns = t->sent_ns,
                                 .wake_late_ns = t->wake_late_ns,
                                 .deadline_met = t->deadline_met,
                                 .miss_reason = (int)t->miss_reason};
    }
    if (res) {
        r->residuals = (cdc_residuals){.complementarity = res->complementarity,
                                       .normal_velocity = res->normal_velocity,
                                       .cone = res->cone, .dissipation = res->dissipation,
                                       .momentum = res->momentum, .joint = res->joint};
    }
    return 0;
}

// int64 fields: the varint's 64 bits as a signed number.
static bool rd_i64(cd_reader *r, unsigned wt, int64_t *ret) {
    uint64_t v;
    if (!rd_u64(r, wt, &v)) {
        return false;
    }
    *ret = (int64_t)v;
    return true;
}

static bool read_force(cd_reader m, cdc_contact_force *o) {
    uint32_t seen = 0, state = 0;
    unsigned field, wt;
    *o = (cdc_contact_force){0};
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || !rd_once(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case FORCE_ID: ok = rd_u64(&m, wt, &o->id); break;
        case FORCE_FORCE: ok = rd_vec(&m, wt, o->force, 3); break;
        case FORCE_IMPULSE: ok = rd_vec(&m, wt, o->impulse, 3); break;
        case FORCE_STATE: ok = rd_u32(&m, wt, &state); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    o->state = (cdc_contact_state)(int32_t)state;
    return true;
}

// A BodyVelocity or a JointForce: an id and two Vec3s.
static bool read_item(cd_reader m, uint32_t *id, double first[3], double second[3]) {
    uint32_t seen = 0;
    unsigned field, wt;
    *id = 0;
    memset(first, 0, 3 * sizeof *first);
    memset(second, 0, 3 * sizeof *second);
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || !rd_once(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case ITEM_ID: ok = rd_u32(&m, wt, id); break;
        case ITEM_FIRST: ok = rd_vec(&m, wt, first, 3); break;
        case ITEM_SECOND: ok = rd_vec(&m, wt, second, 3); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

static bool read_body(cd_reader m, cdc_body_velocity *o) {
    return read_item(m, &o->id, o->v, o->w);
}

static bool read_joint(cd_reader m, cdc_joint_force *o) {
    return read_item(m, &o->id, o->force, o->torque);
}

static bool read_timing(cd_reader *r, unsigned wt, cdc_timing *t) {
    cd_reader m;
    if (wt != WT_LEN || !rd_len(r, &m)) {
        return false;
    }
    uint32_t seen = 0, miss = 0;
    uint64_t met = 0;
    unsigned field;
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || !rd_once(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case TIMING_RECEIVED: ok = rd_i64(&m, wt, &t->received_ns); break;
        case TIMING_SOLVE_START: ok = rd_i64(&m, wt, &t->solve_start_ns); break;
        case TIMING_SOLVE: ok = rd_i64(&m, wt, &t->solve_ns); break;
        case TIMING_DEADLINE: ok = rd_i64(&m, wt, &t->deadline_ns); break;
        case TIMING_SENT: ok = rd_i64(&m, wt, &t->sent_ns); break;
        case TIMING_MET: ok = rd_u64(&m, wt, &met); break;
        case TIMING_MISS: ok = rd_u32(&m, wt, &miss); break;
        case TIMING_RELEASE: ok = rd_i64(&m, wt, &t->release_ns); break;
        case TIMING_WAKE_LATE: ok = rd_i64(&m, wt, &t->wake_late_ns); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    t->deadline_met = met != 0;
    t->miss_reason = (int32_t)miss;
    return true;
}

static bool read_stats(cd_reader *r, unsigned wt, cdc_result_store *st, cdc_result *out) {
    cd_reader m;
    if (wt != WT_LEN || !rd_len(r, &m)) {
        return false;
    }
    uint32_t seen = 0;
    unsigned field;
    while (m.p < m.end) {
        if (!rd_tag(&m, &field, &wt) || !rd_once(&seen, field)) {
            return false;
        }
        bool ok;
        switch (field) {
        case STATS_SOLVER:
            ok = rd_text(&m, wt, st->solver, sizeof st->solver);
            out->solver = st->solver;
            break;
        case STATS_PIVOTS: ok = rd_u32(&m, wt, &out->pivots); break;
        case STATS_ITERATIONS: ok = rd_u32(&m, wt, &out->iterations); break;
        default: ok = false; break;
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

static bool read_residuals(cd_reader *r, unsigned wt, cdc_residuals *out) {
    double v[RESIDUALS];
    if (!rd_vec(r, wt, v, RESIDUALS)) {
        return false;
    }
    *out = (cdc_residuals){.complementarity = v[0], .normal_velocity = v[1], .cone = v[2],
                           .dissipation = v[3], .momentum = v[4], .joint = v[5]};
    return true;
}

int cdc_result_decode(cdc_result_store *st, const uint8_t *data, size_t len, cdc_result *out) {
    cd_reader env = {data, data + len}, r;
    unsigned field, wt;
    // The envelope holds the Result and nothing else.
    if (!rd_tag(&env, &field, &wt) || field != SERVER_RESULT || wt != WT_LEN ||
        !rd_len(&env, &r) || env.p != env.end) {
        return 0;
    }
    cdc_result res = {.solver = "", .detail = ""};
    uint32_t seen = 0, status = 0, source = 0;
    size_t nc = 0, nb = 0, nj = 0;
    while (r.p < r.end) {
        if (!rd_tag(&r, &field, &wt)) {
            return 0;
        }
        const bool repeated =
            field == RESULT_CONTACTS || field == RESULT_BODIES || field == RESULT_JOINTS;
        if (!repeated && !rd_once(&seen, field)) {
            return 0;
        }
        cd_reader m;
        bool ok;
        switch (field) {
        case RESULT_SEQ: ok = rd_u64(&r, wt, &res.seq); break;
        case RESULT_TICK: ok = rd_u64(&r, wt, &res.tick); break;
        case RESULT_STATUS: ok = rd_u32(&r, wt, &status); break;
        case RESULT_CONTACTS:
            ok = rd_element(&r, wt, &m, nc, st->contacts) && read_force(m, &st->forces[nc++]);
            break;
        case RESULT_TIMING: ok = read_timing(&r, wt, &res.timing); break;
        case RESULT_STATS: ok = read_stats(&r, wt, st, &res); break;
        case RESULT_RESIDUALS: ok = read_residuals(&r, wt, &res.residuals); break;
        case RESULT_BODIES:
            ok = rd_element(&r, wt, &m, nb, st->bodies) && read_body(m, &st->velocities[nb++]);
            break;
        case RESULT_DETAIL:
            ok = rd_text(&r, wt, st->detail, sizeof st->detail);
            res.detail = st->detail;
            break;
        case RESULT_SOURCE: ok = rd_u32(&r, wt, &source); break;
        case RESULT_JOINTS:
            ok = rd_element(&r, wt, &m, nj, st->joints) &&
                 read_joint(m, &st->joint_forces[nj++]);
            break;
        default: ok = false; break;
        }
        if (!ok) {
            return 0;
        }
    }
    res.status = (cdc_status)(int32_t)status;
    res.source = (cdc_answer)(int32_t)source;
    res.nc = (int)nc;
    res.nb = (int)nb;
    res.nj = (int)nj;
    res.contacts = st->forces;
    res.bodies = st->velocities;
    res.joints = st->joint_forces;
    *out = res;
    return 1;
}
