/* SPDX-License-Identifier: MIT */
/* Names of solvers, statuses and answers, shared by the wire, the config, the logs and
 * contactctl, and the storage layout of a cs_result. Which solvers this build implements is the
 * solver table's business (daemon/solver/solvers.c); the names are the wire's. */
#include "wire/types.h"

#include <stdio.h>
#include <string.h>

/* Indexed by cs_solver; spelled as on the wire (solver_name), in the config and on contactctl's
 * line. */
static const char *const solver_names[] = {
    [CS_SOLVER_DEFAULT] = "default",
    [CS_SOLVER_DANTZIG] = "dantzig",
    [CS_SOLVER_LEMKE] = "lemke",
    [CS_SOLVER_LEMKE_STRUCTURAL] = "lemke-structural",
    [CS_SOLVER_LEMKE_STANDARD] = "lemke-standard",
    [CS_SOLVER_SAP] = "sap",
    [CS_SOLVER_NCP] = "ncp",
};

_Static_assert(sizeof solver_names / sizeof solver_names[0] == CS_SOLVER_COUNT,
               "one name per cs_solver value");

const char *cs_solver_name(cs_solver s) {
    return (int)s >= 0 && (int)s < CS_SOLVER_COUNT ? solver_names[s] : NULL;
}

int cs_solver_from_name(const char *name, cs_solver *ret) {
    for (int i = 0; name && i < CS_SOLVER_COUNT; i++) {
        if (strcmp(name, solver_names[i]) == 0) {
            *ret = (cs_solver)i;
            return 0;
        }
    }
    return -1;
}

/* Appends ", name" (no comma first) to buf when it fits whole; returns the new length. */
static size_t append_name(char *buf, size_t len, size_t used, int s) {
    const int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", solver_names[s]);
    if (n < 0 || (size_t)n >= len - used) {
        buf[used] = '\0';
        return used;
    }
    return used + (size_t)n;
}

size_t cs_solver_list(unsigned mask, cs_solver first, char *buf, size_t len) {
    if (len == 0)
        return 0;
    buf[0] = '\0';
    size_t used = 0;
    const bool lead = (int)first >= 0 && (int)first < CS_SOLVER_COUNT && (mask & (1u << first));
    if (lead)
        used = append_name(buf, len, used, (int)first);
    for (int s = 0; s < CS_SOLVER_COUNT; s++)
        if ((mask & (1u << s)) && !(lead && s == (int)first))
            used = append_name(buf, len, used, s);
    return used;
}

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
