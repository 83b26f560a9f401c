/* SPDX-License-Identifier: MIT */
/* Names of statuses and answers, shared by the wire, the logs and contactctl, and the storage
 * layout of a cs_result. Solver names live in the solver table (solvers.c). */
#include "solver/types.h"

const char *cs_status_name(cs_status st) {
    switch (st) {
    case CS_CONVERGED: return "converged";
    case CS_DEADLINE: return "deadline";
    case CS_MAXITER: return "maxiter";
    case CS_FALLBACK: return "fallback";
    case CS_RAY: return "ray";
    case CS_SINGULAR: return "singular";
    case CS_EINPUT: return "invalid-input";
    case CS_ENOSPACE: return "no-space";
    case CS_UNCERTIFIED: return "uncertified";
    case CS_NOANSWER: return "no-answer";
    }
    return "unknown";
}

const char *cs_answer_name(cs_answer a) {
    switch (a) {
    case CS_ANSWER_NONE: return "none";
    case CS_ANSWER_SOLVER: return "solver";
    case CS_ANSWER_ITERATE: return "iterate";
    case CS_ANSWER_LAST_CERTIFIED: return "last-certified";
    }
    return "unknown";
}

/* Every array is a multiple of 8 bytes, so the 8-byte alignment of mem carries through. */
static size_t pad8(size_t n) {
    return (n + 7) & ~(size_t)7;
}

size_t cs_result_size(const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nc = (size_t)lim->max_contacts,
                 nj = (size_t)lim->max_joints;
    return pad8(nc * sizeof(uint64_t)) + pad8(nb * sizeof(uint32_t)) +
           2 * pad8(3 * nc * sizeof(double)) + pad8(nc) + pad8(6 * nb * sizeof(double)) +
           pad8(nj * sizeof(uint32_t)) + 2 * pad8(3 * nj * sizeof(double));
}

void cs_result_init(cs_result *r, void *mem, const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nc = (size_t)lim->max_contacts,
                 nj = (size_t)lim->max_joints;
    unsigned char *p = mem;
    *r = (cs_result){0};
    r->contact_id = (uint64_t *)(void *)p;
    p += pad8(nc * sizeof(uint64_t));
    r->body_id = (uint32_t *)(void *)p;
    p += pad8(nb * sizeof(uint32_t));
    r->impulse = (double *)(void *)p;
    p += pad8(3 * nc * sizeof(double));
    r->force = (double *)(void *)p;
    p += pad8(3 * nc * sizeof(double));
    r->state = p;
    p += pad8(nc);
    r->v = (double *)(void *)p;
    p += pad8(6 * nb * sizeof(double));
    r->joint_id = (uint32_t *)(void *)p;
    p += pad8(nj * sizeof(uint32_t));
    r->joint_force = (double *)(void *)p;
    p += pad8(3 * nj * sizeof(double));
    r->joint_torque = (double *)(void *)p;
}
