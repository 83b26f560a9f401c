/* SPDX-License-Identifier: MIT */
#include "scene_same.h"

#include <string.h>

// Member m of x and y, by its bytes (padding between members is never compared).
#define SAME(x, y, m) (memcmp(&(x)->m, &(y)->m, sizeof (x)->m) == 0)

static bool same_body(const cs_body *a, const cs_body *b) {
    return SAME(a, b, id) && SAME(a, b, mass) && SAME(a, b, inertia) && SAME(a, b, pos) &&
           SAME(a, b, quat) && SAME(a, b, v) && SAME(a, b, w) && SAME(a, b, f) &&
           SAME(a, b, tau) && SAME(a, b, kinematic);
}

static bool same_contact(const cs_contact *a, const cs_contact *b) {
    return SAME(a, b, id) && SAME(a, b, body_a) && SAME(a, b, body_b) && SAME(a, b, point) &&
           SAME(a, b, normal) && SAME(a, b, distance) && SAME(a, b, mu) &&
           SAME(a, b, stiffness) && SAME(a, b, dissipation);
}

static bool same_joint(const cs_joint *a, const cs_joint *b) {
    return SAME(a, b, id) && SAME(a, b, body_a) && SAME(a, b, body_b) && SAME(a, b, kind) &&
           SAME(a, b, anchor) && SAME(a, b, axis);
}

bool t_scene_same(const cs_scene *a, const cs_scene *b) {
    if (!(SAME(a, b, seq) && SAME(a, b, dt) && SAME(a, b, gravity) && SAME(a, b, friction_dirs) &&
          SAME(a, b, penetration_recovery) && SAME(a, b, solver) && a->nb == b->nb &&
          a->nc == b->nc && a->nj == b->nj)) {
        return false;
    }
    for (int i = 0; i < a->nb; i++) {
        if (!same_body(&a->bodies[i], &b->bodies[i])) {
            return false;
        }
    }
    for (int i = 0; i < a->nc; i++) {
        if (!same_contact(&a->contacts[i], &b->contacts[i])) {
            return false;
        }
    }
    for (int i = 0; i < a->nj; i++) {
        if (!same_joint(&a->joints[i], &b->joints[i])) {
            return false;
        }
    }
    return true;
}
