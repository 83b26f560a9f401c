/* SPDX-License-Identifier: MIT */
/* Linear-time joint dynamics with Lagrange multipliers (Baraff 1996, "Linear-time dynamics
 * using Lagrange multipliers"), at the velocity level of the rest of the library.
 *
 * THE PROBLEM. Bodies with 6 velocity coordinates each (linear, angular, world frame), mass
 * matrix M = blockdiag(m I3, I_world), free-motion velocity v*; joints whose rows J v = b are
 * kept by impulses lambda on body_a (body_b takes the opposite): M (v - v*) = J^T lambda. With
 *     H = [M  -J^T; -J  0],    H [v; lambda] = [M v*; -b]                    (Baraff eq. 8)
 * and H's graph is the graph of bodies and joints (a joint node next to each body it joins).
 *
 * PRIMARY AND AUXILIARY. Joints are taken in input order into a spanning forest by
 * union-find, the world counting as one node: a joint whose two sides are already connected
 * closes a loop and becomes auxiliary (section 8). So each tree holds at most one joint to the
 * world, and that joint's node is the tree's root; a tree without one is rooted at a body.
 *
 * ORDER AND FACTOR (section 7). A depth-first postorder puts every node after its children, so
 * each block row of the upper triangle has one block right of the diagonal, H_{n,par(n)}, and
 * H = U^T D U with U_n = D_n^-1 H_{n,par(n)} has no fill-in:
 *     D_n = H_nn - sum_{c child of n} H_{c,n}^T D_c^-1 H_{c,n}             (sparsefactor)
 * A body's D is M plus positive semidefinite terms, a joint's is minus a positive definite sum
 * when its rows are independent, so S_n = sg_n D_n (sg: +1 body, -1 joint) is positive definite
 * (Baraff's footnote 8) and is factored S = L Delta L^T, root-free. With G_n = -H_{n,par(n)}
 * (the joint's rows on the body's side) and W_n = L^-1 G_n, a child's term in its parent is
 * sg_par W^T Delta^-1 W (an edge joins a body and a joint, so sg_par = -sg), and U_n = D^-1 H
 * is never formed: sparsesolve's y_par -= U_n^T y_n upwards is y_par += sg W^T u_n with
 * u_n = Delta^-1 L^-1 y_n, and x_n = D_n^-1 y_n - U_n x_par downwards is
 * x_n = sg L^-T (u_n + Delta^-1 W x_par). Both take O(1) work per node (blocks are at most
 * 6 x 6), done by kernels unrolled for each block shape (SMALL BLOCKS below).
 *
 * ANTICIPATION (section 8.1). For k one-dimensional auxiliary rows, solve once for the free
 * velocity (primary joints only) and once per row i with the impulse J_i^T alone on the right:
 * the velocity part of that solution is Mhat^-1 J_i^T, the response with the primary joints
 * reacting, and J_k of it is column i of A = J_k Mhat^-1 J_k^T. The auxiliary impulses mu then
 * solve a = A mu + afree (bilateral: a = 0), and one more solve with J_k^T mu on the right
 * gives v and every primary lambda (section 8.2, step 5).
 *
 * ROWS AND DRIFT. Positional rows along a unit t: t . (v_a + w_a x r_a - v_b - w_b x r_b),
 * i.e. (t, r_a x t) on body_a and -(t, r_b x t) on body_b; angular rows t . (w_a - w_b). Each
 * targets -beta e / dt for its position error e (Baumgarte): the anchors' mismatch p_a - p_b,
 * and for the angular rows the small-angle rotation from body_b's joint frame to body_a's. */
#include "solver/articulated.h"

#include <math.h>
#include <string.h>

#include "solver/deadline.h"
#include "solver/linalg.h"
#include "solver/model.h"
#include "solver/simd.h"
#include "solver/workspace.h"

/* A block row of H: a body (dim 6) or a primary joint (dim = its rows). With sg = +1 for a body
 * and -1 for a joint, S = sg D is positive definite, and G = -H_{n,par(n)} is the joint's rows on
 * the body's side (a body under a joint: G = j^T; a joint under a body: G = j). */
struct cs__art_node {
    int id;       /* body i: i; joint j: nb + j */
    int parent;   /* position in the order, -1 at a root */
    uint8_t dim;
    uint8_t side; /* 0/1: which side (body_a/body_b) of the joint the body of this edge is */
    uint8_t lead; /* a body under a joint: the zeros G starts with (LEAD_*); else LEAD_NONE */
    double W[36]; /* G, then L^-1 G: dim x dim(parent), stride 6 */
    double L[24]; /* S, then S = L Delta L^T: L unit lower below the diagonal, sg / Delta_ii on
                   * it (lower part, row i at LO(i)) */
};

/* A joint's rows at this frame. */
struct cs__art_jrows {
    int ia, ib, dim, npos; /* rows 0 .. npos - 1 are positional, the rest angular */
    double ra[3], rb[3];   /* lever arms of the points whose relative velocity the rows see */
    double t[6][3];        /* row directions, world */
    double b[6];           /* targets: J v = b */
};

/* Private per-body and per-joint indices (after the public arrays in the same struct block). */
typedef struct art_private {
    cs_articulated pub;
    int *bpos;      /* [nb] position of body i in the order */
    int *jpos;      /* [nj] position of joint j, -1 when auxiliary */
    double *mass;   /* [nb] */
    double *iw;     /* [9 nb] */
} art_private;

/* Pivot of a block Cholesky below this fraction of the block's largest diagonal: the rows are
 * dependent (a rounding-level pivot is about 1e-16 of it; real joints stay far above). */
#define CHOL_REL_TOL 1e-12
/* Loop-closure systems: pivots below this fraction of the largest are redundant rows (a planar
 * linkage's out-of-plane rows come out at rounding level, 1e-16 .. 1e-14). */
#define AUX_REL_TOL 1e-10

static int kind_rows(cs_joint_kind k) {
    switch (k) {
    case CS_JOINT_BALL: return 3;
    case CS_JOINT_HINGE: return 5;
    case CS_JOINT_SLIDER: return 5;
    case CS_JOINT_FIXED: return 6;
    }
    return 0;
}

static int nodes_max(const cs_limits *lim) {
    // A forest over the bodies and the world has at most nb edges.
    const int nj = lim->max_joints, nb = lim->max_bodies;
    return nb + (nj < nb ? nj : nb);
}

static int aux_max(const cs_limits *lim) {
    const int k = 6 * lim->max_joints;
    return k < CS_ARTICULATED_AUX_MAX ? k : CS_ARTICULATED_AUX_MAX;
}

/* Workspace of the step's anticipation and loop solve for k rows and nb bodies. */
static size_t step_bytes(int k, int nb) {
    const size_t kk = (size_t)k;
    return cs__ws_bytes(kk * kk * sizeof(double)) + 3 * cs__ws_bytes(kk * sizeof(double)) +
           cs__ws_bytes(kk * sizeof(int)) + cs__ws_bytes(cs_psd_work(k) * sizeof(double)) +
           cs__ws_bytes(6 * (size_t)nb * sizeof(double));
}

size_t cs_articulated_size(const cs_limits *lim) {
    const size_t nb = (size_t)lim->max_bodies, nj = (size_t)lim->max_joints,
                 nn = (size_t)nodes_max(lim), ids = nb + nj;
    const size_t persistent =
        cs__ws_bytes(sizeof(art_private)) + cs__ws_bytes(nn * sizeof(cs__art_node)) +
        cs__ws_bytes(nj * sizeof(cs__art_jrows)) + cs__ws_bytes((nj + 1) * sizeof(int)) +
        cs__ws_bytes(nj) + cs__ws_bytes((size_t)aux_max(lim) * sizeof(cs_art_row)) +
        2 * cs__ws_bytes(nn * sizeof(int)) + cs__ws_bytes(nb * sizeof(int)) +
        cs__ws_bytes(nj * sizeof(int)) + cs__ws_bytes(nb * sizeof(double)) +
        cs__ws_bytes(9 * nb * sizeof(double)) +
        cs__ws_bytes(6 * nn * sizeof(double));
    // Ordering scratch: union-find, adjacency, and per node id: position, parent, iterator, stack.
    const size_t order = cs__ws_bytes((nb + 1) * sizeof(int)) +
                         cs__ws_bytes((nb + 2) * sizeof(int)) +
                         cs__ws_bytes(2 * nj * sizeof(int)) + 4 * cs__ws_bytes(ids * sizeof(int));
    const size_t step = step_bytes(aux_max(lim), lim->max_bodies);
    return persistent + (order > step ? order : step);
}

void cs_articulated_body(cs_art_body *ret, const cs_body *b) {
    ret->mass = b->mass;
    memcpy(ret->pos, b->pos, sizeof ret->pos);
    cs_quat_to_mat3(ret->rot, b->quat);
    cs_mat3_rotate(ret->iw, ret->rot, b->inertia);
}

/* res = R^T v. */
static void mat3_tvec(double res[3], const double R[9], const double v[3]) {
    for (int i = 0; i < 3; i++)
        res[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
}

void cs_articulated_joint_capture(cs_art_joint *ret, cs_joint_kind kind, int ia, int ib,
                                  const cs_art_body *bodies, const double anchor[3],
                                  const double axis[3]) {
    static const double ez[3] = {0, 0, 1};
    const double *u = axis && (kind == CS_JOINT_HINGE || kind == CS_JOINT_SLIDER) ? axis : ez;
    double F[9];
    memcpy(F, u, 3 * sizeof(double));
    cs_model_tangents(u, F + 3, F + 6);
    *ret = (cs_art_joint){.kind = kind, .ia = ia, .ib = ib};
    const cs_art_body *A = &bodies[ia];
    const double da[3] = {anchor[0] - A->pos[0], anchor[1] - A->pos[1], anchor[2] - A->pos[2]};
    mat3_tvec(ret->la, A->rot, da);
    for (int k = 0; k < 3; k++)
        mat3_tvec(ret->fa + 3 * k, A->rot, F + 3 * k);
    if (ib < 0) {
        memcpy(ret->lb, anchor, sizeof ret->lb);
        memcpy(ret->fb, F, sizeof ret->fb);
        return;
    }
    const cs_art_body *B = &bodies[ib];
    const double db[3] = {anchor[0] - B->pos[0], anchor[1] - B->pos[1], anchor[2] - B->pos[2]};
    mat3_tvec(ret->lb, B->rot, db);
    for (int k = 0; k < 3; k++)
        mat3_tvec(ret->fb + 3 * k, B->rot, F + 3 * k);
}

/* J's rows of joint jt at the bodies' current poses, with targets -beta e / dt. */
static void joint_rows_at(cs__art_jrows *J, const cs_art_joint *jt, const cs_art_body *bodies,
                          double dt, double beta) {
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const cs_art_body *A = &bodies[jt->ia];
    double Fa[9], Fb[9], pa[3], pb[3], e[3];
    // The frames' rows the kind needs: a ball none, a hinge body_b's axis alone.
    const int nfa = jt->kind == CS_JOINT_BALL ? 0 : 3, nfb = jt->kind == CS_JOINT_HINGE ? 1 : nfa;
    cs_mat3_vec(J->ra, A->rot, jt->la);
    for (int k = 0; k < nfa; k++)
        cs_mat3_vec(Fa + 3 * k, A->rot, jt->fa + 3 * k);
    for (int k = 0; k < 3; k++)
        pa[k] = A->pos[k] + J->ra[k];
    if (jt->ib >= 0) {
        const cs_art_body *B = &bodies[jt->ib];
        cs_mat3_vec(J->rb, B->rot, jt->lb);
        for (int k = 0; k < nfb; k++)
            cs_mat3_vec(Fb + 3 * k, B->rot, jt->fb + 3 * k);
        for (int k = 0; k < 3; k++)
            pb[k] = B->pos[k] + J->rb[k];
    } else {
        memset(J->rb, 0, sizeof J->rb);
        memcpy(Fb, jt->fb, sizeof Fb);
        memcpy(pb, jt->lb, sizeof pb);
    }
    for (int k = 0; k < 3; k++)
        e[k] = pa[k] - pb[k];
    // Small-angle rotation taking body_b's joint frame onto body_a's: for the hinge its axis
    // only, for slider and fixed the whole frame (0.5 sum_k Fb_k x Fa_k).
    double rot[3] = {0, 0, 0}, c[3];
    if (jt->kind == CS_JOINT_HINGE)
        cs_cross3(rot, Fb, Fa);
    else
        for (int k = 0; k < nfa; k++) {
            cs_cross3(c, Fb + 3 * k, Fa + 3 * k);
            for (int i = 0; i < 3; i++)
                rot[i] += 0.5 * c[i];
        }
    J->ia = jt->ia;
    J->ib = jt->ib;
    J->dim = kind_rows(jt->kind);
    double err[6];
    int r = 0;
    if (jt->kind == CS_JOINT_SLIDER) {
        // Free along the axis: the rows see the relative velocity of the two material points at
        // p_a, perpendicular to the axis; the relative rotation is locked.
        J->npos = 2;
        if (jt->ib >= 0)
            for (int k = 0; k < 3; k++)
                J->rb[k] = pa[k] - bodies[jt->ib].pos[k];
        for (int i = 1; i < 3; i++, r++) {
            memcpy(J->t[r], Fa + 3 * i, 3 * sizeof(double));
            err[r] = cs_dot3(e, Fa + 3 * i);
        }
    } else {
        J->npos = 3;
        for (; r < 3; r++) {
            memcpy(J->t[r], I3 + 3 * r, 3 * sizeof(double));
            err[r] = e[r];
        }
    }
    if (jt->kind == CS_JOINT_HINGE)
        for (int i = 1; i < 3; i++, r++) {
            memcpy(J->t[r], Fa + 3 * i, 3 * sizeof(double));
            err[r] = cs_dot3(rot, Fa + 3 * i);
        }
    else if (jt->kind != CS_JOINT_BALL)
        for (int i = 0; i < 3; i++, r++) {
            memcpy(J->t[r], I3 + 3 * i, 3 * sizeof(double));
            err[r] = rot[i];
        }
    const double gain = -beta / dt;
    for (int k = 0; k < J->dim; k++)
        J->b[k] = gain * err[k];
    if (jt->ib < 0) {
        // A moving world side (a kinematic body): the rows hold body_a's velocity to that of
        // the world side's material point, at p_a for the slider's positional rows (as its rows
        // see them) and at p_b for the others, and to its rotation for the angular rows.
        const double *p = jt->kind == CS_JOINT_SLIDER ? pa : pb;
        const double d[3] = {p[0] - jt->cb[0], p[1] - jt->cb[1], p[2] - jt->cb[2]};
        double u[3];
        cs_cross3(u, jt->vb + 3, d);
        for (int i = 0; i < 3; i++)
            u[i] += jt->vb[i];
        for (int k = 0; k < J->dim; k++)
            J->b[k] += cs_dot3(J->t[k], k < J->npos ? u : jt->vb + 3);
    }
}

/* Row k of joint J on side s (0: body_a, 1: body_b, negated): out[i * inc], i < 6. */
static inline void jrow(const cs__art_jrows *J, int k, int s, double *out, int inc) {
    const double sg = s ? -1.0 : 1.0;
    const double *t = J->t[k];
    if (k < J->npos) {
        double rt[3];
        cs_cross3(rt, s ? J->rb : J->ra, t);
        for (int i = 0; i < 3; i++) {
            out[i * inc] = sg * t[i];
            out[(3 + i) * inc] = sg * rt[i];
        }
    } else
        for (int i = 0; i < 3; i++) {
            out[i * inc] = 0;
            out[(3 + i) * inc] = sg * t[i];
        }
}

void cs_articulated_joint_rows(const cs_articulated *a, int j, cs_art_row *rows) {
    const cs__art_jrows *J = &a->jr[j];
    for (int k = 0; k < J->dim; k++) {
        cs_art_row *r = &rows[k];
        r->ia = J->ia;
        r->ib = J->ib;
        jrow(J, k, 0, r->ja, 1);
        if (J->ib >= 0)
            jrow(J, k, 1, r->jb, 1);
        else
            memset(r->jb, 0, sizeof r->jb);
        r->b = J->b[k];
    }
}

void cs_articulated_joint_wrench(const cs_articulated *a, int j, const double *lambda,
                                 double force[3], double torque[3]) {
    const cs__art_jrows *J = &a->jr[j];
    const double *l = lambda + a->row_off[j];
    for (int i = 0; i < 3; i++)
        force[i] = torque[i] = 0;
    for (int k = 0; k < J->dim; k++) {
        double *out = k < J->npos ? force : torque;
        for (int i = 0; i < 3; i++)
            out[i] += J->t[k][i] * l[k] / a->dt;
    }
}

/* Union-find root with path halving; the loop is bounded by the tree's height (< n). */
static int uf_find(int *uf, int n, int x) {
    for (int guard = 0; uf[x] != x && guard < n; guard++) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

/* SMALL BLOCKS. Every block is d x d or d x pd with d, pd in {3, 5, 6} (a body: 6; a joint: its
 * rows), so the kernels below take their sizes as arguments that the dispatchers (eliminate(),
 * up(), down()) give as constants, one case per shape: the compiler unrolls each case. The
 * sizes are constants only once a kernel is inlined into its case, hence always_inline. W is
 * row-major with row stride LD whatever its size; S and L keep their lower part, row i at LO(i)
 * and padded to an even length, so a pair of columns never leaves its row. */
#define LD 6
#define LO(i) (2 * ((i) / 2 + 1) * ((i) / 2 + (i) % 2))
#ifdef CS_SANITIZED
// Sanitizer builds check every access of the unrolled cases, which takes clang's UBSan minutes
// per file: there the kernels stay loops (same arithmetic, same results).
#define KERNEL static inline
#define UNROLL
#else
#define KERNEL static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 6")
#endif

/* Rows of W and of S are worked on in pairs of columns (simd.h); the odd column of a 3- or
 * 5-wide block is a zero pad. */

/* Leading zeros of G = j^T for a body under a joint: column c is the joint's row c, zero in the
 * body's linear coordinates when angular, and above coordinate k when positional along the world
 * axis e_k. LEAD_AXES: ball, hinge, fixed (positional rows along the world axes, then angular
 * ones); LEAD_SLIDER: two positional rows along its frame, then angular rows along the world
 * axes. The kernels skip those zeros, which stay zero in W = L^-1 G. */
enum { LEAD_NONE, LEAD_AXES, LEAD_SLIDER };

/* First row of column c of G that may be nonzero. */
KERNEL int lead_row(int lead, int c) {
    return lead == LEAD_AXES ? (c < 3 ? c : 3) : lead == LEAD_SLIDER ? (c < 2 ? 0 : c + 1) : 0;
}

/* The same for the pair of columns (c, c + 1). */
KERNEL int lead_pair(int lead, int c) {
    const int r0 = lead_row(lead, c), r1 = lead_row(lead, c + 1);
    return r0 < r1 ? r0 : r1;
}

/* In-place root-free Cholesky S = L Delta L^T of the d x d SPD S (lower part read and written),
 * right-looking: L unit lower below the diagonal, sg / Delta_jj on it (sg: the node's sign, so
 * that the solves need no other). One division per pivot and no square root on the chain from
 * a pivot to the next. false when a pivot is at or below CHOL_REL_TOL of the largest diagonal
 * (or not finite). */
KERNEL bool ldl_fixed(double *restrict S, int d, double sg) {
    double dmax = 0;
    UNROLL
    for (int i = 0; i < d; i++)
        dmax = S[LO(i) + i] > dmax ? S[LO(i) + i] : dmax;
    UNROLL
    for (int j = 0; j < d; j++) {
        const double p = S[LO(j) + j];
        if (!(p > CHOL_REL_TOL * dmax))
            return false;
        const double inv = 1.0 / p;
        S[LO(j) + j] = sg * inv;
        UNROLL
        for (int i = j + 1; i < d; i++) {
            // S_ik -= S_ij S_kj / p, with column j normalized in place up to row i.
            const double e = S[LO(i) + j];
            S[LO(i) + j] = e * inv;
            UNROLL
            for (int k = j + 1; k <= i; k++)
                S[LO(i) + k] -= e * S[LO(k) + j];
        }
    }
    return true;
}

/* x = L^-1 x (x: [d]), L unit lower. */
KERNEL void lsolve_fixed(const double *restrict L, int d, double *restrict x) {
    UNROLL
    for (int i = 1; i < d; i++) {
        double s = x[i];
        UNROLL
        for (int k = 0; k < i; k++)
            s -= L[LO(i) + k] * x[k];
        x[i] = s;
    }
}

/* x = L^-T x (x: [d]), L unit lower. */
KERNEL void ltsolve_fixed(const double *restrict L, int d, double *restrict x) {
    UNROLL
    for (int i = d - 2; i >= 0; i--) {
        double s = x[i];
        UNROLL
        for (int k = i + 1; k < d; k++)
            s -= L[LO(k) + i] * x[k];
        x[i] = s;
    }
}

/* S = H_nn of a body: its mass matrix (mass m, world inertia iw), written out (a joint's S is
 * written whole by its one child, and a memset's string store costs more than these stores). */
static void body_block(double *S, double m, const double *iw) {
    const cs__v2 z = {0, 0};
    cs__st2(S + LO(0), (cs__v2){m, 0});
    cs__st2(S + LO(1), (cs__v2){0, m});
    cs__st2(S + LO(2), z);
    cs__st2(S + LO(2) + 2, (cs__v2){m, 0});
    for (int r = 3; r < 6; r++) {
        const double *row = iw + 3 * (r - 3);
        cs__st2(S + LO(r), z);
        cs__st2(S + LO(r) + 2, (cs__v2){0, row[0]});
        if (r > 3)
            cs__st2(S + LO(r) + 4, (cs__v2){row[1], row[2]});
    }
}

/* Ordering scratch: per node id (body i, joint nb + j). */
typedef struct order_scratch {
    int *adj_off, *adj; /* bodies' primary joints (CSR) */
    int *pos_of, *par, *it, *stack;
} order_scratch;

/* Next neighbour of node u after iterator *it, skipping its parent; -1 when none is left. */
static int next_neighbour(const cs_articulated *a, const order_scratch *o, int u, int *it) {
    const int nb = a->nb;
    if (u < nb) {
        while (o->adj_off[u] + *it < o->adj_off[u + 1]) {
            const int c = nb + o->adj[o->adj_off[u] + (*it)++];
            if (c != o->par[u])
                return c;
        }
        return -1;
    }
    const cs__art_jrows *J = &a->jr[u - nb];
    while (*it < 2) {
        const int c = (*it)++ == 0 ? J->ia : J->ib;
        if (c >= 0 && c != o->par[u])
            return c;
    }
    return -1;
}

/* Depth-first postorder of the tree at root, appended to a->order from *npos. */
static void postorder(cs_articulated *a, order_scratch *o, int root, int *npos) {
    const int cap = 4 * (a->nb + a->nj) + 4; // each node pushed and popped once, each edge twice
    int *order = (int *)a->order;
    int sp = 0;
    o->stack[sp++] = root;
    o->par[root] = -1;
    o->it[root] = 0;
    for (int guard = 0; sp > 0 && guard < cap; guard++) {
        const int u = o->stack[sp - 1];
        const int c = next_neighbour(a, o, u, &o->it[u]);
        if (c >= 0) {
            o->par[c] = u;
            o->it[c] = 0;
            o->stack[sp++] = c;
        } else {
            sp--;
            o->pos_of[u] = *npos;
            order[(*npos)++] = u;
        }
    }
}

/* Splits joints into primary and auxiliary and orders the primary forest (section 7.1). */
static cs_status order_nodes(art_private *p, cs_workspace *ws, const cs_art_joint *joints) {
    cs_articulated *a = &p->pub;
    const int nb = a->nb, nj = a->nj, ids = nb + nj;
    int *uf = cs__ws_alloc(ws, (size_t)(nb + 1) * sizeof(int));
    order_scratch o = {
        .adj_off = cs__ws_zalloc(ws, (size_t)(nb + 2) * sizeof(int)),
        .adj = cs__ws_alloc(ws, 2 * (size_t)nj * sizeof(int)),
        .pos_of = cs__ws_alloc(ws, (size_t)ids * sizeof(int)),
        .par = cs__ws_alloc(ws, (size_t)ids * sizeof(int)),
        .it = cs__ws_alloc(ws, (size_t)ids * sizeof(int)),
        .stack = cs__ws_alloc(ws, (size_t)ids * sizeof(int)),
    };
    if (!uf || !o.adj_off || (nj && !o.adj) || !o.pos_of || !o.par || !o.it || !o.stack)
        return CS_ENOSPACE;
    // Forest by union-find; the world is element nb.
    for (int i = 0; i <= nb; i++)
        uf[i] = i;
    uint8_t *aux = (uint8_t *)a->aux;
    int nprim = 0;
    for (int j = 0; j < nj; j++) {
        const int x = uf_find(uf, nb + 1, joints[j].ia),
                  y = uf_find(uf, nb + 1, joints[j].ib >= 0 ? joints[j].ib : nb);
        aux[j] = x == y;
        if (x != y) {
            uf[x] = y;
            nprim++;
        }
    }
    if (nb + nprim > nodes_max(cs__ws_limits(ws)))
        return CS_ENOSPACE;
    // Each body's primary joints (CSR: count, prefix sum, fill).
    for (int j = 0; j < nj; j++)
        if (!aux[j]) {
            o.adj_off[joints[j].ia + 2]++;
            if (joints[j].ib >= 0)
                o.adj_off[joints[j].ib + 2]++;
        }
    for (int i = 2; i <= nb + 1; i++)
        o.adj_off[i] += o.adj_off[i - 1];
    for (int j = 0; j < nj; j++)
        if (!aux[j]) {
            o.adj[o.adj_off[joints[j].ia + 1]++] = j;
            if (joints[j].ib >= 0)
                o.adj[o.adj_off[joints[j].ib + 1]++] = j;
        }
    for (int i = 0; i < ids; i++)
        o.pos_of[i] = -1;
    // Roots: each tree's joint to the world, then a body of each tree without one.
    int npos = 0;
    for (int j = 0; j < nj; j++)
        if (!aux[j] && joints[j].ib < 0)
            postorder(a, &o, nb + j, &npos);
    for (int i = 0; i < nb; i++)
        if (o.pos_of[i] < 0)
            postorder(a, &o, i, &npos);
    a->nnodes = npos;
    CS_ASSERT(npos == nb + nprim);
    int *parent = (int *)a->parent;
    for (int q = 0; q < npos; q++) {
        const int u = a->order[q], pu = o.par[u];
        parent[q] = pu >= 0 ? o.pos_of[pu] : -1;
        cs__art_node *n = &a->node[q];
        n->id = u;
        n->parent = parent[q];
        n->dim = u < nb ? 6 : a->jr[u - nb].dim;
        // The edge to the parent joins a body and a joint: which side of the joint is the body.
        const int body = u < nb ? u : pu, joint = u < nb ? pu - nb : u - nb;
        n->side = pu >= 0 && a->jr[joint].ia != body;
        n->lead = u >= nb || pu < 0 ? LEAD_NONE
                  : a->jr[joint].npos == 2 ? LEAD_SLIDER
                                           : LEAD_AXES;
        if (u < nb) {
            p->bpos[u] = q;
            body_block(n->L, p->mass[u], p->iw + 9 * u);
        } else
            p->jpos[u - nb] = q;
    }
    return CS_CONVERGED;
}

/* G of node n's edge to its parent into W (dim x dim(parent), stride LD, zero up to an even
 * column count): the joint's rows on the body's side, transposed for a body under a joint. */
static void edge_block(const cs_articulated *a, const cs__art_node *n, double *W) {
    const int nb = a->nb;
    const bool body = n->id < nb;
    const cs__art_jrows *J = &a->jr[body ? a->node[n->parent].id - nb : n->id - nb];
    if (body)
        for (int k = 0; k < J->dim; k++)
            jrow(J, k, n->side, W + k, LD);
    else
        for (int k = 0; k < J->dim; k++)
            jrow(J, k, n->side, W + k * LD, 1);
    if (body && J->dim % 2)
        for (int i = 0; i < 6; i++)
            W[i * LD + J->dim] = 0;
}

/* The shapes of nodes: (dim, dim(parent), lead); a root has no parent (0). A body is the node
 * with a lead: its parent is a joint, whose S is its child's Schur complement alone (H_jj = 0,
 * and a joint has one child: of its two bodies the one that is not its parent, or its one body
 * at the world), so a body sets its parent's S rather than add to it. */
#define NODE_SHAPES(X)                                                                             \
    X(6, 0, LEAD_NONE) X(3, 0, LEAD_NONE) X(5, 0, LEAD_NONE) X(3, 6, LEAD_NONE)                    \
        X(5, 6, LEAD_NONE) X(6, 6, LEAD_NONE) X(6, 3, LEAD_AXES) X(6, 5, LEAD_AXES)                \
            X(6, 5, LEAD_SLIDER) X(6, 6, LEAD_AXES)
#define SHAPE(d, pd, lead) (64 * (lead) + 8 * (d) + (pd))

/* Eliminates a node of shape (d, pd, lead) and sign sg (body +1, joint -1): S = L Delta L^T,
 * W = L^-1 G, and its Schur complement into the parent's S (Sp, lower part):
 *     D_par - H^T D^-1 H = sg_par (S_par + W^T Delta^-1 W),
 * since an edge joins a body and a joint (sg_par = -sg). Returns false when S is singular. */
KERNEL bool eliminate_fixed(double *restrict L, double *restrict W, double *restrict Sp, int d,
                            int pd, int lead, double sg) {
    if (!ldl_fixed(L, d, sg))
        return false;
    double V[LD * LD]; // Delta^-1 W (rows from each pair's lead)
    UNROLL
    for (int c = 0; c < pd; c += 2) {
        const int r0 = lead_pair(lead, c);
        UNROLL
        for (int i = r0; i < d; i++) {
            cs__v2 wi = cs__ld2(W + i * LD + c);
            UNROLL
            for (int k = r0; k < i; k++)
                wi -= L[LO(i) + k] * cs__ld2(W + k * LD + c);
            cs__st2(W + i * LD + c, wi);
            cs__st2(V + i * LD + c, (sg * L[LO(i) + i]) * wi);
        }
    }
    const bool set = lead != LEAD_NONE;
    UNROLL
    for (int r = 0; r < pd; r++) {
        UNROLL
        for (int c = 0; c <= r; c += 2) {
            const int k0 = lead_row(lead, r) > lead_pair(lead, c) ? lead_row(lead, r)
                                                                   : lead_pair(lead, c);
            cs__v2 s = set ? (cs__v2){0, 0} : cs__ld2(Sp + LO(r) + c);
            UNROLL
            for (int k = k0; k < d; k++)
                s += W[k * LD + r] * cs__ld2(V + k * LD + c);
            cs__st2(Sp + LO(r) + c, s);
        }
    }
    return true;
}

/* Multiply-adds of eliminating a node of shape (d, pd). */
#define ELIM_WORK(d, pd) ((d) * (d) * (d) / 6 + (pd) * (d) * (d) / 2 + (pd) * ((pd) + 1) / 2 * (d))

/* Eliminates node n (its shape's case) into its parent's S (Sp; NULL at a root, pd = 0).
 * Returns its multiply-adds, or -1 when its S is singular. */
static int eliminate(cs__art_node *n, double sg, double *Sp, int pd) {
    switch (SHAPE(n->dim, pd, n->lead)) {
#define CASE(D, PD, LEAD)                                                                          \
    case SHAPE(D, PD, LEAD):                                                                       \
        return eliminate_fixed(n->L, n->W, Sp, D, PD, LEAD, sg) ? ELIM_WORK(D, PD) : -1;
        NODE_SHAPES(CASE)
#undef CASE
    }
    CS_ASSERT(false);
    return -1;
}

/* sparsefactor (section 7.3), children pushing their Schur complements into their parents
 * (a body's S starts as its mass matrix: order_nodes() sets it; a joint's is its child's). */
static cs_status factor(art_private *p, cs__meter *meter) {
    cs_articulated *a = &p->pub;
    int64_t work = 0;
    for (int q = 0; q < a->nnodes; q++) {
        cs__art_node *n = &a->node[q];
        cs__art_node *par = n->parent >= 0 ? &a->node[n->parent] : NULL;
        if (par)
            edge_block(a, n, n->W);
        const int units = eliminate(n, n->id < a->nb ? 1.0 : -1.0, par ? par->L : NULL,
                                    par ? par->dim : 0);
        if (units < 0)
            return CS_SINGULAR;
        work += units;
        if (meter && cs__meter_add(meter, units))
            return CS_DEADLINE;
    }
    a->factor_work = work;
    return CS_CONVERGED;
}

cs_status cs_articulated_factor(cs_articulated **ret, cs_workspace *ws, int nb,
                                const cs_art_body *bodies, int nj, const cs_art_joint *joints,
                                double dt, double beta, cs__meter *meter) {
    const cs_limits *lim = cs__ws_limits(ws);
    if (nb < 0 || nj < 0 || !(dt > 0) || !(beta >= 0 && beta <= 1))
        return CS_EINPUT;
    if (nb > lim->max_bodies || nj > lim->max_joints)
        return CS_ENOSPACE;
    int naux_max = 0;
    for (int j = 0; j < nj; j++) {
        const cs_art_joint *jt = &joints[j];
        if (kind_rows(jt->kind) == 0 || jt->ia < 0 || jt->ia >= nb || jt->ib < -1 ||
            jt->ib >= nb || jt->ia == jt->ib)
            return CS_EINPUT;
    }
    const int nn = nodes_max(lim);
    art_private *p = cs__ws_zalloc(ws, sizeof *p);
    if (!p)
        return CS_ENOSPACE;
    cs_articulated *a = &p->pub;
    *a = (cs_articulated){.nb = nb, .nj = nj, .dt = dt};
    int *row_off = cs__ws_alloc(ws, (size_t)(nj + 1) * sizeof(int));
    a->aux = cs__ws_alloc(ws, (size_t)nj);
    cs_art_row *aux_rows = cs__ws_alloc(ws, (size_t)aux_max(lim) * sizeof(cs_art_row));
    a->order = cs__ws_alloc(ws, (size_t)nn * sizeof(int));
    a->parent = cs__ws_alloc(ws, (size_t)nn * sizeof(int));
    a->node = cs__ws_alloc(ws, (size_t)nn * sizeof(cs__art_node));
    a->jr = cs__ws_alloc(ws, (size_t)nj * sizeof(cs__art_jrows));
    a->x = cs__ws_alloc(ws, 6 * (size_t)nn * sizeof(double));
    p->bpos = cs__ws_alloc(ws, (size_t)nb * sizeof(int));
    p->jpos = cs__ws_alloc(ws, (size_t)nj * sizeof(int));
    p->mass = cs__ws_alloc(ws, (size_t)nb * sizeof(double));
    p->iw = cs__ws_alloc(ws, 9 * (size_t)nb * sizeof(double));
    if (!row_off || !a->aux || !aux_rows || !a->order || !a->parent || !a->node || !a->jr ||
        !a->x || !p->bpos || !p->jpos || !p->mass || !p->iw)
        return CS_ENOSPACE;
    a->row_off = row_off;
    a->aux_rows = aux_rows;
    for (int i = 0; i < nb; i++) {
        p->mass[i] = bodies[i].mass;
        memcpy(p->iw + 9 * i, bodies[i].iw, 9 * sizeof(double));
    }
    row_off[0] = 0;
    for (int j = 0; j < nj; j++) {
        joint_rows_at(&a->jr[j], &joints[j], bodies, dt, beta);
        row_off[j + 1] = row_off[j] + a->jr[j].dim;
        p->jpos[j] = -1;
    }
    a->rows = row_off[nj];
    const size_t mark = cs__ws_mark(ws);
    const cs_status st = order_nodes(p, ws, joints);
    cs__ws_release(ws, mark);
    if (st != CS_CONVERGED)
        return st;
    // The loop closures' rows, in joint order.
    for (int j = 0; j < nj; j++)
        if (a->aux[j]) {
            const int d = a->jr[j].dim;
            if (naux_max + d > aux_max(lim))
                return CS_ENOSPACE;
            cs_articulated_joint_rows(a, j, aux_rows + naux_max);
            naux_max += d;
        }
    a->naux = naux_max;
    const cs_status fs = factor(p, meter);
    if (fs != CS_CONVERGED)
        return fs;
    *ret = a;
    return CS_CONVERGED;
}

static double row_dot(const cs_art_row *r, const double *v) {
    double s = 0;
    for (int i = 0; i < 6; i++) {
        if (r->ia >= 0)
            s += r->ja[i] * v[6 * r->ia + i];
        if (r->ib >= 0)
            s += r->jb[i] * v[6 * r->ib + i];
    }
    return s;
}

/* The upward step of sparsesolve at a node of shape (d, pd, lead): x = sg Delta^-1 L^-1 y
 * (= sg u), then y_par += W^T x in xp. */
KERNEL void up_fixed(const double *restrict L, const double *restrict W, double *restrict x,
                     double *restrict xp, int d, int pd, int lead) {
    lsolve_fixed(L, d, x);
    UNROLL
    for (int k = 0; k < d; k++)
        x[k] *= L[LO(k) + k];
    UNROLL
    for (int c = 0; c < pd; c += 2) {
        cs__v2 s = cs__ld2(xp + c);
        UNROLL
        for (int k = lead_pair(lead, c); k < d; k++)
            s += x[k] * cs__ld2(W + k * LD + c);
        cs__st2(xp + c, s);
    }
}

/* The downward step: x = L^-T (x + sg Delta^-1 W x_par) = sg L^-T (u + Delta^-1 W x_par). */
KERNEL void down_fixed(const double *restrict L, const double *restrict W, double *restrict x,
                       const double *restrict xp, int d, int pd, int lead) {
    UNROLL
    for (int k = 0; k < d; k++) {
        cs__v2 s = {0, 0};
        UNROLL
        for (int c = 0; c < pd; c += 2)
            if (lead_pair(lead, c) <= k)
                s += cs__ld2(W + k * LD + c) * cs__ld2(xp + c);
        x[k] += L[LO(k) + k] * (s[0] + s[1]);
    }
    ltsolve_fixed(L, d, x);
}

static void up(const cs__art_node *n, double *x, double *xp, int pd) {
    switch (SHAPE(n->dim, pd, n->lead)) {
#define CASE(D, PD, LEAD)                                                                          \
    case SHAPE(D, PD, LEAD): up_fixed(n->L, n->W, x, xp, D, PD, LEAD); return;
        NODE_SHAPES(CASE)
#undef CASE
    }
    CS_ASSERT(false);
}

static void down(const cs__art_node *n, double *x, const double *xp, int pd) {
    switch (SHAPE(n->dim, pd, n->lead)) {
#define CASE(D, PD, LEAD)                                                                          \
    case SHAPE(D, PD, LEAD): down_fixed(n->L, n->W, x, xp, D, PD, LEAD); return;
        NODE_SHAPES(CASE)
#undef CASE
    }
    CS_ASSERT(false);
}

/* sparsesolve (section 7.3) of H x = [M vstar + J_k^T mu; -b]: vstar NULL counts as 0, and
 * with_b false drops the joints' targets (the response to an impulse alone). */
static cs_status solve(const cs_articulated *a, const double *vstar, bool with_b, int k,
                       const cs_art_row *rows, const double *mu, double *v, double *lambda,
                       cs__meter *meter) {
    const art_private *p = (const art_private *)a;
    const int nb = a->nb, nn = a->nnodes;
    double *x = a->x;
    for (int q = 0; q < nn; q++) {
        const cs__art_node *n = &a->node[q];
        double *z = x + 6 * q;
        if (n->id >= nb) {
            const cs__art_jrows *J = &a->jr[n->id - nb];
            // Up to 6: the padding the kernels' column pairs read stays zero.
            for (int r = 0; r < 6; r++)
                z[r] = with_b && r < n->dim ? -J->b[r] : 0.0;
        } else if (vstar) {
            const int i = n->id;
            const double *vs = vstar + 6 * i;
            for (int r = 0; r < 3; r++)
                z[r] = p->mass[i] * vs[r];
            cs_mat3_vec(z + 3, p->iw + 9 * i, vs + 3);
        } else
            memset(z, 0, 6 * sizeof(double));
    }
    for (int r = 0; r < k; r++) {
        const cs_art_row *R = &rows[r];
        for (int i = 0; i < 6; i++) {
            if (R->ia >= 0)
                x[6 * p->bpos[R->ia] + i] += R->ja[i] * mu[r];
            if (R->ib >= 0)
                x[6 * p->bpos[R->ib] + i] += R->jb[i] * mu[r];
        }
    }
    // Upwards, leaves first: u_n = Delta^-1 L^-1 y_n, y_par += sg W^T u_n (y_par -= U^T y_n,
    // U = D^-1 H).
    for (int q = 0; q < nn; q++) {
        const cs__art_node *n = &a->node[q];
        const int pd = n->parent >= 0 ? a->node[n->parent].dim : 0;
        up(n, x + 6 * q, pd ? x + 6 * n->parent : NULL, pd);
        if (meter && cs__meter_add(meter, n->dim * n->dim / 2 + n->dim * pd))
            return CS_DEADLINE;
    }
    // Downwards, roots first: x_n = sg L^-T (u_n + Delta^-1 W x_par) (= D^-1 y_n - U x_par).
    for (int q = nn - 1; q >= 0; q--) {
        const cs__art_node *n = &a->node[q];
        const int pd = n->parent >= 0 ? a->node[n->parent].dim : 0;
        down(n, x + 6 * q, pd ? x + 6 * n->parent : NULL, pd);
        if (meter && cs__meter_add(meter, n->dim * n->dim / 2 + n->dim * pd))
            return CS_DEADLINE;
    }
    for (int i = 0; i < nb; i++)
        memcpy(v + 6 * i, x + 6 * p->bpos[i], 6 * sizeof(double));
    if (lambda)
        for (int j = 0; j < a->nj; j++) {
            const int d = a->row_off[j + 1] - a->row_off[j];
            double *l = lambda + a->row_off[j];
            if (p->jpos[j] >= 0)
                memcpy(l, x + 6 * p->jpos[j], (size_t)d * sizeof(double));
            else
                memset(l, 0, (size_t)d * sizeof(double));
        }
    return CS_CONVERGED;
}

cs_status cs_articulated_solve(const cs_articulated *a, const double *vstar, int k,
                               const cs_art_row *rows, const double *mu, double *v,
                               double *lambda, cs__meter *meter) {
    return solve(a, vstar, true, k, rows, mu, v, lambda, meter);
}

cs_status cs_articulated_anticipate(const cs_articulated *a, cs_workspace *ws,
                                    const double *vstar, int k, const cs_art_row *rows,
                                    double *A, int lda, double *afree, cs__meter *meter) {
    const size_t mark = cs__ws_mark(ws);
    double *y = cs__ws_alloc(ws, 6 * (size_t)a->nb * sizeof(double));
    if (!y && a->nb > 0)
        return CS_ENOSPACE;
    // The free velocity: primary joints only.
    cs_status st = solve(a, vstar, true, 0, NULL, NULL, y, NULL, meter);
    for (int i = 0; i < k && st == CS_CONVERGED; i++)
        afree[i] = row_dot(&rows[i], y) - rows[i].b;
    // Column i: J_k Mhat^-1 J_i^T from the response to a unit impulse on row i.
    static const double one = 1.0;
    for (int i = 0; i < k && st == CS_CONVERGED; i++) {
        st = solve(a, NULL, false, 1, &rows[i], &one, y, NULL, meter);
        for (int r = 0; r < k && st == CS_CONVERGED; r++)
            A[(size_t)i * lda + r] = row_dot(&rows[r], y);
    }
    // Symmetric positive semidefinite in exact arithmetic: average the two halves' rounding,
    // and a redundant row's diagonal (rounding level) is not let below zero.
    for (int i = 0; i < k && st == CS_CONVERGED; i++) {
        for (int r = 0; r < i; r++) {
            const double s = 0.5 * (A[(size_t)i * lda + r] + A[(size_t)r * lda + i]);
            A[(size_t)i * lda + r] = A[(size_t)r * lda + i] = s;
        }
        A[(size_t)i * lda + i] = fmax(A[(size_t)i * lda + i], 0.0);
    }
    cs__ws_release(ws, mark);
    return st;
}

cs_status cs_articulated_step(const cs_articulated *a, cs_workspace *ws, const double *vstar,
                              double *v, double *lambda, cs__meter *meter) {
    const int k = a->naux;
    if (k == 0)
        return solve(a, vstar, true, 0, NULL, NULL, v, lambda, meter);
    const size_t mark = cs__ws_mark(ws);
    double *A = cs__ws_alloc(ws, (size_t)k * (size_t)k * sizeof(double));
    double *afree = cs__ws_alloc(ws, (size_t)k * sizeof(double));
    double *mu = cs__ws_alloc(ws, (size_t)k * sizeof(double));
    int *piv = cs__ws_alloc(ws, (size_t)k * sizeof(int));
    double *work = cs__ws_alloc(ws, cs_psd_work(k) * sizeof(double));
    cs_status st = CS_ENOSPACE;
    if (A && afree && mu && piv && work)
        st = cs_articulated_anticipate(a, ws, vstar, k, a->aux_rows, A, k, afree, meter);
    if (st == CS_CONVERGED) {
        // Bilateral closures: a = A mu + afree = 0.
        for (int i = 0; i < k; i++)
            afree[i] = -afree[i];
        int rank;
        const int f = cs__psd_factor(k, A, k, piv, &rank, AUX_REL_TOL, work, meter);
        st = f == 1 ? CS_DEADLINE : f < 0 ? CS_SINGULAR : CS_CONVERGED;
        if (st == CS_CONVERGED)
            cs_psd_solve(k, A, k, piv, rank, afree, mu, work);
    }
    if (st == CS_CONVERGED)
        st = solve(a, vstar, true, k, a->aux_rows, mu, v, lambda, meter);
    if (st == CS_CONVERGED && lambda) {
        int r = 0;
        for (int j = 0; j < a->nj; j++)
            if (a->aux[j])
                for (int i = a->row_off[j]; i < a->row_off[j + 1]; i++)
                    lambda[i] = mu[r++];
    }
    cs__ws_release(ws, mark);
    return st;
}
