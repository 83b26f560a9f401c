/* SPDX-License-Identifier: MIT */
/* Bodies and contacts to the generalized velocity-level problem (see model.h).
 *
 * Velocities: v_b = (linear, angular), world frame. Over a step of length dt with impulses
 * lambda at the contacts, explicit Euler with the gyroscopic term gives
 *     M (v - v0) = dt (f + m g, tau - w x I w) + J^T lambda,    M = blockdiag(m I3, I_world),
 * so v = v* + M^-1 J^T lambda. A contact's Jacobian row for a unit direction t maps (v_a, v_b) to
 * t . ((v_a + w_a x r_a) - (v_b + w_b x r_b)); because t . (w x r) = w . (r x t), the block of
 * body_a is (t, r_a x t) and that of body_b is -(t, r_b x t).
 *
 * A kinematic body's velocity is prescribed: it has infinite mass, so its M^-1 block is zero and
 * v* = v = v0 whatever the impulses (no gravity, no applied load). The model stores mass 0 and
 * zero inertia for it (cs_model_is_kinematic), which makes M's block zero too. */
#include "solver/model.h"

#include <math.h>
#include <string.h>

#include "solver/deadline.h"
#include "solver/idmap.h"
#include "solver/joints.h"
#include "solver/linalg.h"
#include "solver/simd.h"
#include "solver/workspace.h"

size_t cs_model_size(const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nc = (size_t)lim->max_contacts;
    return cs__ws_bytes(nb * sizeof(double)) + 2 * cs__ws_bytes(9 * nb * sizeof(double)) +
           2 * cs__ws_bytes(6 * nb * sizeof(double)) + 2 * cs__ws_bytes(nc * sizeof(int)) +
           cs__ws_bytes(9 * nc * sizeof(double)) + 2 * cs__ws_bytes(3 * nc * sizeof(double)) +
           2 * cs__ws_bytes(nc * sizeof(double)) + cs__ws_bytes(nb * sizeof(cs_idpos));
}

void cs_model_tangents(const double n[3], double t1[3], double t2[3]) {
    const double s2 = n[0] * n[0] + n[1] * n[1];
    if (s2 < 1e-24) {
        // n = +z: identity; n = -z: rotation by pi about x.
        const double sg = n[2] > 0 ? 1.0 : -1.0;
        t1[0] = 1, t1[1] = 0, t1[2] = 0;
        t2[0] = 0, t2[1] = sg, t2[2] = 0;
        return;
    }
    // Rodrigues with axis (-n_y, n_x, 0)/s and cos = n_z.
    const double c = n[2], k = (1 - c) / s2;
    t1[0] = c + n[1] * n[1] * k;
    t1[1] = -n[0] * n[1] * k;
    t1[2] = -n[0];
    t2[0] = -n[0] * n[1] * k;
    t2[1] = c + n[0] * n[0] * k;
    t2[2] = -n[1];
}

/* r = point - pos, the lever arm of a contact point on a body at pos; 0 for the world (NULL). */
static inline void lever_arm(double r[3], const double point[3], const double *pos) {
    if (!pos) {
        r[0] = r[1] = r[2] = 0;
        return;
    }
    r[0] = point[0] - pos[0];
    r[1] = point[1] - pos[1];
    r[2] = point[2] - pos[2];
}

/* Body index of id (-1 for the world), or -2 when unknown: one of the previous contact's bodies
 * a and b (-1 or -2 when none) when it is (a scene tends to list a pair's contacts together),
 * else from the sorted map. */
static inline int body_index(const cs_scene *s, const cs_idpos *ids, uint32_t id, int a, int b) {
    if (id == 0)
        return -1;
    if (a >= 0 && s->bodies[a].id == id)
        return a;
    if (b >= 0 && s->bodies[b].id == id)
        return b;
    const int i = cs__idmap_find(ids, s->nb, id);
    return i < 0 ? -2 : i;
}

cs_status cs_model_build(cs_model *m, cs_workspace *ws, const cs_scene *s) {
    const int nb = s->nb, nc = s->nc;
    const size_t nt = (size_t)nc;
    const cs_limits *lim = cs__ws_limits(ws);
    if (nb > lim->max_bodies || nc > lim->max_contacts)
        return CS_ENOSPACE;
    *m = (cs_model){.nb = nb, .nc = nc, .dt = s->dt,
                    .nd = s->friction_dirs ? s->friction_dirs : cs_dirs_default(lim)};
    m->mass = cs__ws_alloc(ws, (size_t)nb * sizeof(double));
    m->iw = cs__ws_alloc(ws, 9 * (size_t)nb * sizeof(double));
    m->iw_inv = cs__ws_alloc(ws, 9 * (size_t)nb * sizeof(double));
    m->v0 = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    m->vstar = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    m->ia = cs__ws_alloc(ws, nt * sizeof(int));
    m->ib = cs__ws_alloc(ws, nt * sizeof(int));
    m->frame = cs__ws_alloc(ws, 9 * nt * sizeof(double));
    m->ra = cs__ws_alloc(ws, 3 * nt * sizeof(double));
    m->rb = cs__ws_alloc(ws, 3 * nt * sizeof(double));
    m->mu = cs__ws_alloc(ws, (size_t)nc * sizeof(double));
    m->bias = cs__ws_alloc(ws, (size_t)nc * sizeof(double));
    cs_idpos *ids = cs__ws_alloc(ws, (size_t)nb * sizeof(cs_idpos));
    if (!m->mass || !m->iw || !m->iw_inv || !m->v0 || !m->vstar || (nt && (!m->ia || !m->ib ||
        !m->frame || !m->ra || !m->rb)) || (nc && (!m->mu || !m->bias)) || (nb && !ids))
        return CS_ENOSPACE;

    const double dt = s->dt;
    for (int b = 0; b < nb; b++) {
        const cs_body *B = &s->bodies[b];
        double q[4], R[9];
        // Renormalise: validation accepts |q| within 1e-6 of 1.
        const double qn = sqrt(B->quat[0] * B->quat[0] + B->quat[1] * B->quat[1] +
                               B->quat[2] * B->quat[2] + B->quat[3] * B->quat[3]);
        for (int k = 0; k < 4; k++)
            q[k] = B->quat[k] / qn;
        cs_quat_to_mat3(R, q);
        double *I = m->iw + 9 * b, *Ii = m->iw_inv + 9 * b;
        double *v0 = m->v0 + 6 * b, *vs = m->vstar + 6 * b;
        memcpy(v0, B->v, 3 * sizeof(double));
        memcpy(v0 + 3, B->w, 3 * sizeof(double));
        ids[b] = (cs_idpos){.id = B->id, .pos = b};
        if (B->kinematic) {
            m->mass[b] = 0;
            memset(I, 0, 9 * sizeof(double));
            memset(Ii, 0, 9 * sizeof(double));
            memcpy(vs, v0, 6 * sizeof(double));
            continue;
        }
        cs_mat3_rotate(I, R, B->inertia);
        if (cs_mat3_spd_inverse(Ii, I) < 0)
            return CS_EINPUT;
        m->mass[b] = B->mass;
        // v* = v0 + dt M^-1 (f + m g, tau - w x I w).
        double Iw[3], gyro[3], tq[3], dw[3];
        cs_mat3_vec(Iw, I, B->w);
        cs_cross3(gyro, B->w, Iw);
        for (int k = 0; k < 3; k++) {
            vs[k] = B->v[k] + dt * (B->f[k] / B->mass + s->gravity[k]);
            tq[k] = B->tau[k] - gyro[k];
        }
        cs_mat3_vec(dw, Ii, tq);
        for (int k = 0; k < 3; k++)
            vs[3 + k] = B->w[k] + dt * dw[k];
    }
    cs__idmap_sort(ids, nb);

    int pa = -1, pb = -1; // the previous contact's bodies
    for (int i = 0; i < nc; i++) {
        const cs_contact *C = &s->contacts[i];
        double *F = m->frame + 9 * i;
        const double nn = sqrt(cs_dot3(C->normal, C->normal));
        for (int k = 0; k < 3; k++)
            F[k] = C->normal[k] / nn;
        cs_model_tangents(F, F + 3, F + 6);
        const int a = body_index(s, ids, C->body_a, pa, pb);
        const int b = body_index(s, ids, C->body_b, pa, pb);
        pa = a, pb = b;
        if (a == -2 || b == -2)
            return CS_EINPUT;
        m->ia[i] = a;
        m->ib[i] = b;
        lever_arm(m->ra + 3 * i, C->point, a >= 0 ? s->bodies[a].pos : NULL);
        lever_arm(m->rb + 3 * i, C->point, b >= 0 ? s->bodies[b].pos : NULL);
        m->mu[i] = C->mu;
        // A positive gap may close within the step; of a penetration, the step opens the
        // fraction the scene asks (Todorov 2010 eq. 11's b; 0: held, not pushed apart).
        // Validated: the distance is finite, the fraction in [0, 1].
        const double gap =
            C->distance > 0 ? C->distance : s->penetration_recovery * C->distance;
        m->bias[i] = -gap / dt;
    }
    return CS_CONVERGED;
}

/* The velocity of a body's point at lever arm r, v + w x r, for the body's vb = (v, w). */
static inline void point_velocity(double out[3], const double vb[6], const double r[3]) {
    double wxr[3];
    cs_cross3(wxr, vb + 3, r);
    out[0] = vb[0] + wxr[0];
    out[1] = vb[1] + wxr[1];
    out[2] = vb[2] + wxr[2];
}

/* out[rows nc] = the first `rows` rows (1 or 3) of J v, contact by contact, for the contacts
 * first .. end - 1. */
static void jv_rows(const cs_model *m, int rows, const double *v, int first, int end, double *out) {
    for (int i = first; i < end; i++) {
        // Relative velocity at the point, world frame.
        const int a = m->ia[i], b = m->ib[i];
        double rel[3] = {0, 0, 0};
        if (a >= 0)
            point_velocity(rel, v + 6 * a, m->ra + 3 * i);
        if (b >= 0) {
            double pb[3];
            point_velocity(pb, v + 6 * b, m->rb + 3 * i);
            rel[0] -= pb[0];
            rel[1] -= pb[1];
            rel[2] -= pb[2];
        }
        const double *F = m->frame + 9 * i;
        double *o = out + rows * i;
        o[0] = cs_dot3(F, rel);
        if (rows == 3) {
            o[1] = cs_dot3(F + 3, rel);
            o[2] = cs_dot3(F + 6, rel);
        }
    }
}

/* Work of a contact in J v or J^T lambda: a cross product and 3 sums per moving side, and the
 * frame's 9 products. */
#define CONTACT_UNITS 21

bool cs__model_jv_metered(const cs_model *m, const double *v, double *out, cs__meter *meter) {
    const int chunk = cs__meter_chunk(meter, m->nc, CONTACT_UNITS);
    for (int i = 0; i < m->nc; i += chunk) {
        const int end = i + cs__chunk_len(i, chunk, m->nc);
        jv_rows(m, 3, v, i, end, out);
        if (meter && cs__meter_add(meter, CONTACT_UNITS * (int64_t)(end - i)))
            return true;
    }
    return false;
}

void cs_model_jv(const cs_model *m, const double *v, double *out) {
    (void)cs__model_jv_metered(m, v, out, NULL);
}

void cs_model_free_velocity(const cs_model *m, int rows, double *out) {
    jv_rows(m, rows, m->vstar, 0, m->nc, out);
    if (m->jt)
        cs__joints_pin_velocity(m->jt, rows, m->bias, out);
}

/* gen += J^T lambda over the contacts first .. end - 1, in contact order (so a pass taken in
 * pieces sums as one taken whole). */
static void jt_add(const cs_model *m, const double *lambda, int first, int end, double *gen) {
    for (int i = first; i < end; i++) {
        // The impulse in the world frame, p = F^T l; on body_a it is (p, r_a x p).
        const double *F = m->frame + 9 * i, *l = lambda + 3 * i;
        const double l0 = l[0], l1 = l[1], l2 = l[2];
        const double p[3] = {l0 * F[0] + l1 * F[3] + l2 * F[6], l0 * F[1] + l1 * F[4] + l2 * F[7],
                             l0 * F[2] + l1 * F[5] + l2 * F[8]};
        const int a = m->ia[i], b = m->ib[i];
        double rxp[3];
        if (a >= 0) {
            double *g = gen + 6 * a;
            cs_cross3(rxp, m->ra + 3 * i, p);
            g[0] += p[0], g[1] += p[1], g[2] += p[2];
            g[3] += rxp[0], g[4] += rxp[1], g[5] += rxp[2];
        }
        if (b >= 0) {
            double *g = gen + 6 * b;
            cs_cross3(rxp, m->rb + 3 * i, p);
            g[0] -= p[0], g[1] -= p[1], g[2] -= p[2];
            g[3] -= rxp[0], g[4] -= rxp[1], g[5] -= rxp[2];
        }
    }
}

bool cs__model_jt_metered(const cs_model *m, const double *lambda, double *gen, cs__meter *meter) {
    memset(gen, 0, 6 * (size_t)m->nb * sizeof(double));
    const int chunk = cs__meter_chunk(meter, m->nc, CONTACT_UNITS);
    for (int i = 0; i < m->nc; i += chunk) {
        const int end = i + cs__chunk_len(i, chunk, m->nc);
        jt_add(m, lambda, i, end, gen);
        if (meter && cs__meter_add(meter, CONTACT_UNITS * (int64_t)(end - i)))
            return true;
    }
    return false;
}

void cs_model_jt(const cs_model *m, const double *lambda, double *gen) {
    (void)cs__model_jt_metered(m, lambda, gen, NULL);
}

void cs_model_minv(const cs_model *m, const double *x, double *out) {
    for (int b = 0; b < m->nb; b++) {
        const double *xb = x + 6 * b;
        double *ob = out + 6 * b;
        // A kinematic body's zero inverse inertia leaves its angular part 0 as well.
        for (int k = 0; k < 3; k++)
            ob[k] = cs_model_is_kinematic(m, b) ? 0 : xb[k] / m->mass[b];
        cs_mat3_vec(ob + 3, m->iw_inv + 9 * b, xb + 3);
    }
}

void cs_model_mul(const cs_model *m, const double *x, double *out) {
    for (int b = 0; b < m->nb; b++) {
        const double *xb = x + 6 * b;
        double *ob = out + 6 * b;
        for (int k = 0; k < 3; k++)
            ob[k] = xb[k] * m->mass[b];
        cs_mat3_vec(ob + 3, m->iw + 9 * b, xb + 3);
    }
}

bool cs__model_velocity_metered(const cs_model *m, const double *lambda, double *v, double *scratch,
                                cs__meter *meter) {
    if (m->jt) {
        cs__joints_velocity(m->jt, lambda, v, NULL);
        return false;
    }
    if (cs__model_jt_metered(m, lambda, scratch, meter))
        return true;
    cs_model_minv(m, scratch, v);
    for (int k = 0; k < 6 * m->nb; k++)
        v[k] += m->vstar[k];
    // M^-1 (3 products and a 3 x 3 block a body) and the sum.
    return meter && cs__meter_add(meter, 18 * (int64_t)m->nb);
}

void cs_model_velocity(const cs_model *m, const double *lambda, double *v, double *scratch) {
    (void)cs__model_velocity_metered(m, lambda, v, scratch, NULL);
}

size_t cs_model_jacobian_size(const cs_limits *lim) {
    return cs__ws_bytes(3 * (size_t)lim->max_contacts * 2 * 12 * sizeof(double));
}

int cs_model_rows(const cs_model *m, int rows) {
    return rows * m->nc;
}

/* J[0..11] = 0 in plain stores, which gcc pairs; memset of 96 bytes is a call or a rep stos. */
static inline void zero12(double *J) {
    J[0] = J[1] = J[2] = J[3] = J[4] = J[5] = 0;
    J[6] = J[7] = J[8] = J[9] = J[10] = J[11] = 0;
}

/* One side of a contact row: frame row t on body_a is g = (t, r_a x t), body_b takes -(t, r_b x
 * t) = (-t, r_b x -t) (exactly: negation commutes with rounding); mg = M_b^-1 g, im = 1 / mass
 * (0 for a kinematic body, whose Ii is 0 too: its row images vanish and it takes no part in W).
 * The caller forms im once a side: a division costs ten multiplications. */
static inline void row_side(const double t[3], const double r[3], double sign, double im,
                            const double *Ii, double g[6], double mg[6]) {
    g[0] = sign * t[0], g[1] = sign * t[1], g[2] = sign * t[2];
    cs_cross3(g + 3, r, g);
    mg[0] = g[0] * im, mg[1] = g[1] * im, mg[2] = g[2] * im;
    cs_mat3_vec(mg + 3, Ii, g + 3);
}

cs_status cs_model_jacobian(const cs_model *m, int rows, double *js, cs__meter *meter) {
    // A contact's row sides: 21 products each (sign, lever arm, 1 / mass, Ii), 12 stores.
    const int64_t units = 2 * 24 * (int64_t)rows;
    for (int i = 0; i < m->nc; i++) {
        if (meter && cs__meter_add(meter, units))
            return CS_DEADLINE;
        for (int side = 0; side < 2; side++) {
            const int b = side == 0 ? m->ia[i] : m->ib[i];
            // Row 0 of contact i; rows are 24 apart.
            double *J = js + (size_t)(rows * i) * 2 * 12 + 12 * side;
            if (b < 0) {
                for (int r = 0; r < rows; r++)
                    zero12(J + 24 * r);
                continue;
            }
            const double sign = side == 0 ? 1 : -1;
            const double im = cs_model_is_kinematic(m, b) ? 0 : 1 / m->mass[b];
            const double *r = (side == 0 ? m->ra : m->rb) + 3 * i, *Ii = m->iw_inv + 9 * b;
            for (int row = 0; row < rows; row++, J += 24)
                row_side(m->frame + 9 * i + 3 * row, r, sign, im, Ii, J, J + 6);
        }
    }
    return CS_CONVERGED;
}

/* Entry x's 6-vector by component, g[c][x]: one side of frame row t, with lever arm r and sign
 * as in row_side(). Inlined with the sign constant: 1 multiplies nothing, -1 only negates. */
static inline __attribute__((always_inline)) void row_vector(double *const g[6], int x,
                                                             const double t[3], const double r[3],
                                                             double sign) {
    const double v[3] = {sign * t[0], sign * t[1], sign * t[2]};
    double w[3];
    cs_cross3(w, r, v);
    g[0][x] = v[0], g[1][x] = v[1], g[2][x] = v[2], g[3][x] = w[0], g[4][x] = w[1], g[5][x] = w[2];
}

/* Every row's entries (one a side on a body) into the 6-vectors gw by component, in row order:
 * pos[b] is body b's next entry, row[x] entry x's row. Inlined with rows constant. */
static inline __attribute__((always_inline)) void fill_entries(const cs_model *m, int rows,
                                                               double *const gw[6], int *pos,
                                                               int *row) {
    for (int i = 0; i < m->nc; i++) {
        const int a = m->ia[i], b = m->ib[i];
        for (int k = 0; k < rows; k++) {
            const double *t = m->frame + 9 * i + 3 * k;
            if (a >= 0) {
                const int x = pos[a]++;
                row_vector(gw, x, t, m->ra + 3 * i, 1);
                row[x] = rows * i + k;
            }
            if (b >= 0) {
                const int x = pos[b]++;
                row_vector(gw, x, t, m->rb + 3 * i, -1);
                row[x] = rows * i + k;
            }
        }
    }
}

/* dst[y] (+)= entry x's 6-vector . entry y's image for y = x .. end - 1, from the 6-vectors g
 * and images mk by component: added when add (into W's column), stored otherwise. Two entries
 * at a time, each lane summing the six products in the scalar order. Inlined with add constant,
 * so neither copy tests it per entry. */
static inline __attribute__((always_inline)) void
pair_sums(const double *const g[6], const double *const mk[6], int x, int end, double *dst,
          bool add) {
    const double J0 = g[0][x], J1 = g[1][x], J2 = g[2][x], J3 = g[3][x], J4 = g[4][x],
                 J5 = g[5][x];
    const cs__v2 j0 = {J0, J0}, j1 = {J1, J1}, j2 = {J2, J2}, j3 = {J3, J3}, j4 = {J4, J4},
                 j5 = {J5, J5};
    const double *m0 = mk[0], *m1 = mk[1], *m2 = mk[2], *m3 = mk[3], *m4 = mk[4], *m5 = mk[5];
    int y = x;
    for (; y + 2 <= end; y += 2) {
        const cs__v2 s = j0 * cs__ld2(m0 + y) + j1 * cs__ld2(m1 + y) + j2 * cs__ld2(m2 + y) +
                         j3 * cs__ld2(m3 + y) + j4 * cs__ld2(m4 + y) + j5 * cs__ld2(m5 + y);
        cs__st2(dst + y, add ? cs__ld2(dst + y) + s : s);
    }
    if (y < end) {
        const double s =
            J0 * m0[y] + J1 * m1[y] + J2 * m2[y] + J3 * m3[y] + J4 * m4[y] + J5 * m5[y];
        dst[y] = add ? dst[y] + s : s;
    }
}

size_t cs_model_delassus_size(const cs_limits *lim) {
    // At most two entries a row (one a side): their 6-vectors, their images and the row sums,
    // their rows; each allocation rounded up on its own.
    const size_t nr = 3 * (size_t)lim->max_contacts;
    return cs__ws_bytes(((size_t)lim->max_bodies + 2) * sizeof(int)) +
           cs__ws_bytes(6 * 2 * nr * sizeof(double)) +
           cs__ws_bytes((6 * 2 * nr + nr) * sizeof(double)) + cs__ws_bytes(2 * nr * sizeof(int));
}

/* Summed body by body over the rows that touch each body: a pair of rows meets only through a
 * shared body, so pairs without one cost nothing (a stack's top contacts never meet the
 * ground's), and each entry is found once and stored in both halves. */
cs_status cs_model_delassus(const cs_model *m, cs_workspace *ws, int rows, double *W, int ldw,
                            cs__meter *meter) {
    const int nr = cs_model_rows(m, rows), nb = m->nb;
    if (m->jt)
        return cs__joints_delassus(m->jt, rows, W, ldw);
    const size_t mark = cs__ws_mark(ws);
    // An entry is one row's side on one body: start[b] .. start[b + 1] - 1 are body b's, in row
    // order (contact i's rows are rows i .. rows (i + 1) - 1, on bodies ia[i] and ib[i]; -1 is
    // the world, which has none).
    int *start = cs__ws_zalloc(ws, ((size_t)nb + 2) * sizeof(int));
    if (!start) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    // The world's rows (body -1) are counted into pos[0] without a test, then dropped.
    int *pos = start + 1;
    for (int i = 0; i < m->nc; i++) {
        pos[m->ia[i] + 1] += rows;
        pos[m->ib[i] + 1] += rows;
    }
    pos[0] = 0;
    // With the counts, the work the meter counts below: 6 units a product, n (n + 1) / 2 pairs
    // for a body of n entries, nr - c for column c's copy, and W's zeroing.
    int64_t units = (int64_t)nr * (nr + 1) / 2;
    for (int b = 0; b < nb; b++) {
        units += 3 * (int64_t)pos[b + 1] * (pos[b + 1] + 1);
        pos[b + 1] += pos[b];
    }
    // Entry x: its row's 6-vector g and M^-1 image, both by component, jq[k L + x] and
    // mj[k L + x] (a body's pairs then run over contiguous memory, two at a time); row[x]: its row.
    const int L = pos[nb];
    double *jq = cs__ws_alloc(ws, 6 * (size_t)L * sizeof(double));
    double *mj = cs__ws_alloc(ws, (6 * (size_t)L + (size_t)nr) * sizeof(double));
    int *row = cs__ws_alloc(ws, (size_t)L * sizeof(int));
    if (nr > 0 && (!jq || !mj || !row)) {
        cs__ws_release(ws, mark);
        return CS_ENOSPACE;
    }
    double *g0 = jq, *g1 = g0 + L, *g2 = g1 + L, *g3 = g2 + L, *g4 = g3 + L, *g5 = g4 + L;
    double *const gw[6] = {g0, g1, g2, g3, g4, g5};
    // The 6-vectors, row by row. The fill moves pos[b] from body b's first entry to body b + 1's:
    // start[b + 1] then, as the images and pairs below read it, with start[0] = 0.
    if (rows == 1)
        fill_entries(m, 1, gw, pos, row);
    else
        fill_entries(m, rows, gw, pos, row);
    // Their images, body by body: one 1 / mass (0 for a kinematic body, whose Ii is 0 too: its
    // images vanish and it takes no part in W) and one Ii a body, two entries at a time, each
    // lane in the scalar order of row_side().
    double *m0 = mj, *m1 = m0 + L, *m2 = m1 + L, *m3 = m2 + L, *m4 = m3 + L, *m5 = m4 + L;
    const double *const g[6] = {g0, g1, g2, g3, g4, g5}, *const mk[6] = {m0, m1, m2, m3, m4, m5};
    for (int b = 0; b < nb; b++) {
        const int end = start[b + 1];
        if (start[b] == end)
            continue;
        const double im = cs_model_is_kinematic(m, b) ? 0 : 1 / m->mass[b];
        const double *I = m->iw_inv + 9 * b;
        const cs__v2 v_im = {im, im}, i0 = {I[0], I[0]}, i1 = {I[1], I[1]}, i2 = {I[2], I[2]},
                     i3 = {I[3], I[3]}, i4 = {I[4], I[4]}, i5 = {I[5], I[5]},
                     i6 = {I[6], I[6]}, i7 = {I[7], I[7]}, i8 = {I[8], I[8]};
        int x = start[b];
        for (; x + 2 <= end; x += 2) {
            const cs__v2 a = cs__ld2(g3 + x), c = cs__ld2(g4 + x), e = cs__ld2(g5 + x);
            cs__st2(m0 + x, cs__ld2(g0 + x) * v_im);
            cs__st2(m1 + x, cs__ld2(g1 + x) * v_im);
            cs__st2(m2 + x, cs__ld2(g2 + x) * v_im);
            cs__st2(m3 + x, i0 * a + i1 * c + i2 * e);
            cs__st2(m4 + x, i3 * a + i4 * c + i5 * e);
            cs__st2(m5 + x, i6 * a + i7 * c + i8 * e);
        }
        if (x < end) {
            const double a = g3[x], c = g4[x], e = g5[x];
            m0[x] = g0[x] * im, m1[x] = g1[x] * im, m2[x] = g2[x] * im;
            m3[x] = I[0] * a + I[1] * c + I[2] * e;
            m4[x] = I[3] * a + I[4] * c + I[5] * e;
            m5[x] = I[6] * a + I[7] * c + I[8] * e;
        }
    }
    double *t = mj + 6 * (size_t)L;
    // A problem whose whole count reads no clock (a small one, or one early in its solve)
    // counts it once at the end instead, with no meter calls in the loops.
    units += (int64_t)nr * nr;
    cs__meter *const mt = cs__meter_piecewise(meter, units);
    // W zeroed CS__METER_UNITS entries at a time through the meter, as one array where ldw = nr,
    // else column by column: at a session's limits it is megabytes, and at 12288 rows one column
    // alone took 10 us between clock reads (p99 43) where a piece takes 2.
    const size_t len = ldw == nr ? (size_t)nr * nr : (size_t)nr;
    const size_t piece = mt ? CS__METER_UNITS : len;
    for (int q = 0; q < (ldw == nr ? 1 : nr); q++) {
        for (size_t i = 0; i < len; i += piece) {
            const size_t k = piece < len - i ? piece : len - i;
            memset(W + (size_t)q * ldw + i, 0, k * sizeof(double));
            if (mt && cs__meter_add(mt, (int64_t)k)) {
                cs__ws_release(ws, mark);
                return CS_DEADLINE;
            }
        }
    }
    for (int b = 0; b < nb; b++) {
        const int end = start[b + 1];
        // A body whose rows are consecutive (a stack's: the contacts below it, then those above)
        // adds its sums straight into W's column, two at a time; others go through t. Rows rise
        // strictly along the list (a contact joins two bodies): span = count is consecutive.
        const bool consecutive =
            end > start[b] && row[end - 1] - row[start[b]] == end - 1 - start[b];
        // Only the lower half: y >= x is row[y] >= row[x] (each body's list is in row order),
        // and the upper half is copied from it below. With consecutive rows, entry x's sums
        // start on W's diagonal at d = row[x] (ldw + 1), one column and one row on for each x.
        size_t d = consecutive ? (size_t)row[start[b]] * ((size_t)ldw + 1) : 0;
        for (int x = start[b]; x < end; x++, d += (size_t)ldw + 1) {
            if (consecutive) {
                pair_sums(g, mk, x, end, W + d - x, true);
            } else {
                pair_sums(g, mk, x, end, t - x, false);
                double *col = W + (size_t)row[x] * ldw;
                for (int y = x; y < end; y++)
                    col[row[y]] += t[y - x];
            }
            if (mt && cs__meter_add(mt, 6 * (int64_t)(end - x))) {
                cs__ws_release(ws, mark);
                return CS_DEADLINE;
            }
        }
    }
    // The upper half is the lower's copy: W is symmetric to the last bit. Two columns at a time,
    // in 2 x 2 tiles (two rows of both columns become two columns of both rows), read through
    // the meter CS__METER_UNITS entries (half as many rows) at a time: at thousands of rows a
    // column pair is tens of thousands of strided stores, hundreds of us.
    const int span = mt ? CS__METER_UNITS / 2 : nr;
    for (int c = 0; c + 1 < nr; c += 2) {
        const double *lo0 = W + (size_t)c * ldw, *lo1 = lo0 + ldw;
        double *up = W + c;
        up[(size_t)(c + 1) * ldw] = lo0[c + 1];
        for (int r0 = c + 2; r0 < nr; r0 += span) {
            const int r1 = r0 + cs__chunk_len(r0, span, nr);
            int r = r0;
            for (; r + 2 <= r1; r += 2) {
                const cs__v2 a = cs__ld2(lo0 + r), b = cs__ld2(lo1 + r);
                cs__st2(up + (size_t)r * ldw, (cs__v2){a[0], b[0]});
                cs__st2(up + (size_t)(r + 1) * ldw, (cs__v2){a[1], b[1]});
            }
            if (r < r1)
                cs__st2(up + (size_t)r * ldw, (cs__v2){lo0[r], lo1[r]});
            if (mt && cs__meter_add(mt, 2 * (int64_t)(r1 - r0))) {
                cs__ws_release(ws, mark);
                return CS_DEADLINE;
            }
        }
    }
    if (mt != meter)
        (void)cs__meter_add(meter, units); // fits: reads no clock
    cs__ws_release(ws, mark);
    return CS_CONVERGED;
}
