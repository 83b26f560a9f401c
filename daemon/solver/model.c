/* SPDX-License-Identifier: MIT */
/* Bodies and contacts to the generalized velocity-level problem (see model.h).
 *
 * Velocities: v_b = (linear, angular), world frame. Over a step of length dt with impulses
 * lambda at the contacts, explicit Euler with the gyroscopic term gives
 *     M (v - v0) = dt (f + m g, tau - w x I w) + J^T lambda,    M = blockdiag(m I3, I_world),
 * so v = v* + M^-1 J^T lambda. A contact's Jacobian row for a unit direction t maps (v_a, v_b) to
 * t . ((v_a + w_a x r_a) - (v_b + w_b x r_b)); because t . (w x r) = w . (r x t), the block of
 * body_a is (t, r_a x t) and that of body_b is -(t, r_b x t). */
#include "solver/model.h"

#include <math.h>
#include <string.h>

#include "solver/idmap.h"
#include "solver/linalg.h"
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

cs_status cs_model_build(cs_model *m, cs_workspace *ws, const cs_scene *s) {
    const int nb = s->nb, nc = s->nc;
    const cs_limits *lim = cs__ws_limits(ws);
    if (nb > lim->max_bodies || nc > lim->max_contacts)
        return CS_ENOSPACE;
    *m = (cs_model){.nb = nb, .nc = nc, .dt = s->dt,
                    .nd = s->friction_dirs ? s->friction_dirs : CS_DIRS_DEFAULT};
    m->mass = cs__ws_alloc(ws, (size_t)nb * sizeof(double));
    m->iw = cs__ws_alloc(ws, 9 * (size_t)nb * sizeof(double));
    m->iw_inv = cs__ws_alloc(ws, 9 * (size_t)nb * sizeof(double));
    m->v0 = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    m->vstar = cs__ws_alloc(ws, 6 * (size_t)nb * sizeof(double));
    m->ia = cs__ws_alloc(ws, (size_t)nc * sizeof(int));
    m->ib = cs__ws_alloc(ws, (size_t)nc * sizeof(int));
    m->frame = cs__ws_alloc(ws, 9 * (size_t)nc * sizeof(double));
    m->ra = cs__ws_alloc(ws, 3 * (size_t)nc * sizeof(double));
    m->rb = cs__ws_alloc(ws, 3 * (size_t)nc * sizeof(double));
    m->mu = cs__ws_alloc(ws, (size_t)nc * sizeof(double));
    m->bias = cs__ws_alloc(ws, (size_t)nc * sizeof(double));
    cs_idpos *ids = cs__ws_alloc(ws, (size_t)nb * sizeof(cs_idpos));
    if (!m->mass || !m->iw || !m->iw_inv || !m->v0 || !m->vstar || !m->ia || !m->ib ||
        !m->frame || !m->ra || !m->rb || !m->mu || !m->bias || !ids)
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
        cs_mat3_rotate(I, R, B->inertia);
        if (cs_mat3_spd_inverse(Ii, I) < 0)
            return CS_EINPUT;
        m->mass[b] = B->mass;
        double *v0 = m->v0 + 6 * b, *vs = m->vstar + 6 * b;
        memcpy(v0, B->v, 3 * sizeof(double));
        memcpy(v0 + 3, B->w, 3 * sizeof(double));
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
        ids[b] = (cs_idpos){.id = B->id, .pos = b};
    }
    cs__idmap_sort(ids, nb);

    for (int i = 0; i < nc; i++) {
        const cs_contact *C = &s->contacts[i];
        double *F = m->frame + 9 * i;
        const double nn = sqrt(cs_dot3(C->normal, C->normal));
        for (int k = 0; k < 3; k++)
            F[k] = C->normal[k] / nn;
        cs_model_tangents(F, F + 3, F + 6);
        m->ia[i] = C->body_a ? cs__idmap_find(ids, nb, C->body_a) : -1;
        m->ib[i] = C->body_b ? cs__idmap_find(ids, nb, C->body_b) : -1;
        if ((C->body_a && m->ia[i] < 0) || (C->body_b && m->ib[i] < 0))
            return CS_EINPUT;
        for (int k = 0; k < 3; k++) {
            m->ra[3 * i + k] = m->ia[i] >= 0 ? C->point[k] - s->bodies[m->ia[i]].pos[k] : 0;
            m->rb[3 * i + k] = m->ib[i] >= 0 ? C->point[k] - s->bodies[m->ib[i]].pos[k] : 0;
        }
        m->mu[i] = C->mu;
        // A positive gap may close within the step; a penetration is not pushed apart here
        // (no position stabilisation at the velocity level).
        m->bias[i] = -fmax(C->distance, 0.0) / dt;
    }
    return CS_CONVERGED;
}

/* Generalized 6-vector of the Jacobian row for direction t at lever arm r: (t, r x t). */
static void jrow(double out[6], const double t[3], const double r[3]) {
    memcpy(out, t, 3 * sizeof(double));
    cs_cross3(out + 3, r, t);
}

void cs_model_jv(const cs_model *m, const double *v, double *out) {
    for (int i = 0; i < m->nc; i++) {
        // Relative velocity at the point, world frame.
        double rel[3] = {0, 0, 0}, wxr[3];
        if (m->ia[i] >= 0) {
            const double *va = v + 6 * m->ia[i];
            cs_cross3(wxr, va + 3, m->ra + 3 * i);
            for (int k = 0; k < 3; k++)
                rel[k] += va[k] + wxr[k];
        }
        if (m->ib[i] >= 0) {
            const double *vb = v + 6 * m->ib[i];
            cs_cross3(wxr, vb + 3, m->rb + 3 * i);
            for (int k = 0; k < 3; k++)
                rel[k] -= vb[k] + wxr[k];
        }
        const double *F = m->frame + 9 * i;
        for (int r = 0; r < 3; r++)
            out[3 * i + r] = cs_dot3(F + 3 * r, rel);
    }
}

void cs_model_jt(const cs_model *m, const double *lambda, double *gen) {
    memset(gen, 0, 6 * (size_t)m->nb * sizeof(double));
    for (int i = 0; i < m->nc; i++) {
        const double *F = m->frame + 9 * i, *l = lambda + 3 * i;
        double p[3], rxp[3];
        for (int k = 0; k < 3; k++)
            p[k] = l[0] * F[k] + l[1] * F[3 + k] + l[2] * F[6 + k];
        if (m->ia[i] >= 0) {
            double *g = gen + 6 * m->ia[i];
            cs_cross3(rxp, m->ra + 3 * i, p);
            for (int k = 0; k < 3; k++) {
                g[k] += p[k];
                g[3 + k] += rxp[k];
            }
        }
        if (m->ib[i] >= 0) {
            double *g = gen + 6 * m->ib[i];
            cs_cross3(rxp, m->rb + 3 * i, p);
            for (int k = 0; k < 3; k++) {
                g[k] -= p[k];
                g[3 + k] -= rxp[k];
            }
        }
    }
}

void cs_model_minv(const cs_model *m, const double *x, double *out) {
    for (int b = 0; b < m->nb; b++) {
        const double *xb = x + 6 * b;
        double *ob = out + 6 * b;
        for (int k = 0; k < 3; k++)
            ob[k] = xb[k] / m->mass[b];
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

void cs_model_velocity(const cs_model *m, const double *lambda, double *v, double *scratch) {
    cs_model_jt(m, lambda, scratch);
    cs_model_minv(m, scratch, v);
    for (int k = 0; k < 6 * m->nb; k++)
        v[k] += m->vstar[k];
}

size_t cs_model_jacobian_size(const cs_limits *lim) {
    return cs__ws_bytes(3 * (size_t)lim->max_contacts * 2 * 12 * sizeof(double));
}

void cs_model_jacobian(const cs_model *m, int rows, double *js) {
    for (int i = 0; i < m->nc; i++) {
        for (int r = 0; r < rows; r++) {
            const double *t = m->frame + 9 * i + 3 * r;
            for (int side = 0; side < 2; side++) {
                const int b = side == 0 ? m->ia[i] : m->ib[i];
                double *J = js + ((size_t)(rows * i + r) * 2 + side) * 12;
                if (b < 0) {
                    memset(J, 0, 12 * sizeof(double));
                    continue;
                }
                jrow(J, t, (side == 0 ? m->ra : m->rb) + 3 * i);
                if (side == 1)
                    for (int k = 0; k < 6; k++)
                        J[k] = -J[k];
                for (int k = 0; k < 3; k++)
                    J[6 + k] = J[k] / m->mass[b];
                cs_mat3_vec(J + 9, m->iw_inv + 9 * b, J + 3);
            }
        }
    }
}

size_t cs_model_delassus_size(const cs_limits *lim) {
    return cs_model_jacobian_size(lim);
}

cs_status cs_model_delassus(const cs_model *m, cs_workspace *ws, int rows, double *W, int ldw) {
    const int nr = rows * m->nc;
    const size_t mark = cs__ws_mark(ws);
    double *js = cs__ws_alloc(ws, (size_t)nr * 2 * 12 * sizeof(double));
    if (!js)
        return CS_ENOSPACE;
    cs_model_jacobian(m, rows, js);
    // W_pq = sum over shared bodies of J_p,b . M_b^-1 J_q,b^T.
    for (int q = 0; q < nr; q++) {
        const int iq = q / rows;
        for (int p = q; p < nr; p++) {
            const int ip = p / rows;
            double w = 0;
            for (int sp = 0; sp < 2; sp++) {
                const int bp = sp == 0 ? m->ia[ip] : m->ib[ip];
                if (bp < 0)
                    continue;
                for (int sq = 0; sq < 2; sq++) {
                    const int bq = sq == 0 ? m->ia[iq] : m->ib[iq];
                    if (bq != bp)
                        continue;
                    const double *Jp = js + ((size_t)p * 2 + sp) * 12;
                    const double *Jq = js + ((size_t)q * 2 + sq) * 12 + 6;
                    for (int k = 0; k < 6; k++)
                        w += Jp[k] * Jq[k];
                }
            }
            W[(size_t)q * ldw + p] = w;
            W[(size_t)p * ldw + q] = w;
        }
    }
    cs__ws_release(ws, mark);
    return CS_CONVERGED;
}
