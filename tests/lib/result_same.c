/* SPDX-License-Identifier: MIT */
#include "result_same.h"

#include <string.h>

// Member m of two structs, by its bytes.
#define SAME(x, y, m) (memcmp(&(x)->m, &(y)->m, sizeof (x)->m) == 0)

bool t_result_same(const cdc_result *a, const cdc_result *b) {
    if (!(a->seq == b->seq && a->tick == b->tick && a->status == b->status &&
          a->source == b->source && a->nc == b->nc && a->nb == b->nb && a->nj == b->nj &&
          SAME(a, b, timing.received_ns) && SAME(a, b, timing.release_ns) &&
          SAME(a, b, timing.solve_start_ns) && SAME(a, b, timing.solve_ns) &&
          SAME(a, b, timing.deadline_ns) && SAME(a, b, timing.sent_ns) &&
          SAME(a, b, timing.wake_late_ns) && SAME(a, b, timing.deadline_met) &&
          SAME(a, b, timing.miss_reason) && SAME(a, b, residuals.complementarity) &&
          SAME(a, b, residuals.normal_velocity) && SAME(a, b, residuals.cone) &&
          SAME(a, b, residuals.dissipation) && SAME(a, b, residuals.momentum) &&
          SAME(a, b, residuals.joint) && a->pivots == b->pivots &&
          a->iterations == b->iterations && strcmp(a->solver, b->solver) == 0 &&
          strcmp(a->detail, b->detail) == 0)) {
        return false;
    }
    for (int i = 0; i < a->nc; i++) {
        const cdc_contact_force *x = &a->contacts[i], *y = &b->contacts[i];
        if (!(x->id == y->id && SAME(x, y, force) && SAME(x, y, impulse) && x->state == y->state)) {
            return false;
        }
    }
    for (int i = 0; i < a->nb; i++) {
        const cdc_body_velocity *x = &a->bodies[i], *y = &b->bodies[i];
        if (!(x->id == y->id && SAME(x, y, v) && SAME(x, y, w))) {
            return false;
        }
    }
    for (int i = 0; i < a->nj; i++) {
        const cdc_joint_force *x = &a->joints[i], *y = &b->joints[i];
        if (!(x->id == y->id && SAME(x, y, force) && SAME(x, y, torque))) {
            return false;
        }
    }
    return true;
}
