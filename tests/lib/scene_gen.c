/* SPDX-License-Identifier: MIT */
/* Scene generators (see scene_gen.h). Geometry is built the way tests/data/make_scenes.py
 * builds the same scenes, with the same formulas in the same order, so the shared cases agree
 * bit for bit or to the last few ulps. */
#include "scene_gen.h"

#include <math.h>
#include <string.h>

#include "solver/linalg.h"
#include "testlib.h"

#define G 9.81  /* m/s^2, as make_scenes.py */
#define DT 1e-3 /* s, as make_scenes.py */

/* The shapes of the single-body and slide scenes: a 0.2 m, 2 kg cube (box_on_plane.json) or a
 * ball of the same mass. */
#define SINGLE_H 0.1
#define SINGLE_M 2.0
/* Clutter: ball radius, box half extents, column pitch (1 cm between neighbouring columns even
 * with jitter), contact margin. */
#define CLUTTER_R 0.1
#define CLUTTER_PITCH 0.22
#define CLUTTER_JITTER 0.0025
#define CLUTTER_MARGIN 0.005
static const double clutter_box[3] = {0.08, 0.06, 0.05};

static void scene_init(t_gen_scene *g, int d, double gz) {
    memset(g, 0, sizeof(*g));
    g->s = (cs_scene){.seq = 1,
                      .dt = DT,
                      .gravity = {0, 0, gz},
                      .friction_dirs = d,
                      .bodies = g->bodies,
                      .contacts = g->contacts};
}

/* Inertia of a solid box with full side lengths a, b, c (make_scenes.py's box_inertia). */
static void box_inertia(double m, double a, double b, double c, double I[9]) {
    memset(I, 0, 9 * sizeof(double));
    I[0] = m * (b * b + c * c) / 12;
    I[4] = m * (a * a + c * c) / 12;
    I[8] = m * (a * a + b * b) / 12;
}

/* Appends a body with id nb + 1 at rest with identity orientation; the caller sets the rest. */
static cs_body *add_body(t_gen_scene *g, t_gen_shape shape, double m, const double half[3],
                         const double pos[3]) {
    const int b = g->s.nb++;
    cs_body *B = &g->bodies[b];
    *B = (cs_body){.id = (uint32_t)b + 1, .mass = m, .quat = {1, 0, 0, 0}};
    memcpy(B->pos, pos, sizeof(B->pos));
    g->shape[b] = shape;
    if (shape == T_GEN_BOX) {
        memcpy(g->half[b], half, sizeof(g->half[b]));
        box_inertia(m, 2 * half[0], 2 * half[1], 2 * half[2], B->inertia);
    } else {
        g->half[b][0] = g->half[b][1] = g->half[b][2] = half[0];
        const double I = 0.4 * m * half[0] * half[0]; // solid ball: 2/5 m r^2
        B->inertia[0] = B->inertia[4] = B->inertia[8] = I;
    }
    return B;
}

/* Appends a contact; false (nothing added) when the list is full. */
static bool add_contact(t_gen_scene *g, uint64_t id, uint32_t a, uint32_t b, const double p[3],
                        const double n[3], double distance, double mu) {
    if (g->s.nc >= T_GEN_MAX_CONTACTS)
        return false;
    g->contacts[g->s.nc++] = (cs_contact){.id = id,
                                          .body_a = a,
                                          .body_b = b,
                                          .point = {p[0], p[1], p[2]},
                                          .normal = {n[0], n[1], n[2]},
                                          .distance = distance,
                                          .mu = mu};
    return true;
}

/* Force components uniform in [-fmax, fmax] N, then torque in [-tmax, tmax] N m. */
static void random_wrench(t_rng *r, double fmax, double tmax, double w[6]) {
    for (int k = 0; k < 3; k++)
        w[k] = t_rng_range(r, -fmax, fmax);
    for (int k = 3; k < 6; k++)
        w[k] = t_rng_range(r, -tmax, tmax);
}

static void apply_wrench(cs_body *B, const double w[6]) {
    memcpy(B->f, w, 3 * sizeof(double));
    memcpy(B->tau, w + 3, 3 * sizeof(double));
}

/* Unit quaternion of a rotation by angle about unit axis u. */
static void quat_axis(double q[4], const double u[3], double angle) {
    const double s = sin(angle / 2);
    q[0] = cos(angle / 2), q[1] = s * u[0], q[2] = s * u[1], q[3] = s * u[2];
}

/* Corner k (0..7) of a box: signs (x, y, z) = 1 - 2 * bits (k >> 2, k >> 1, k) & 1, so the four
 * bottom corners come in make_scenes.py's corners() order. */
static void box_corner(const cs_body *B, const double half[3], int k, double ret[3]) {
    double R[9], loc[3];
    cs_quat_to_mat3(R, B->quat);
    for (int a = 0; a < 3; a++)
        loc[a] = (1 - 2 * ((k >> (2 - a)) & 1)) * half[a];
    cs_mat3_vec(ret, R, loc);
    for (int a = 0; a < 3; a++)
        ret[a] += B->pos[a];
}

void t_gen_copy(t_gen_scene *dst, const t_gen_scene *src) {
    memcpy(dst, src, sizeof(*dst));
    dst->s.bodies = dst->bodies;
    dst->s.contacts = dst->contacts;
}

/* ---- peg in a hole ---------------------------------------------------------------------- */

/* make_scenes.py's peg: half-width h, half-length l, mass m. */
#define PEG_H 0.02
#define PEG_L 0.05
#define PEG_M 0.5

/* A peg of half-width or radius PEG_H at the origin under a random wrench at its centre (Lloyd:
 * gravity off), the body both pegs start from. */
static cs_body *peg_body(t_gen_scene *g, int d, uint64_t seed) {
    scene_init(g, d, 0.0);
    t_rng r = t_rng_seed(seed);
    const double half[3] = {PEG_H, PEG_H, PEG_L}, origin[3] = {0, 0, 0};
    cs_body *B = add_body(g, T_GEN_BOX, PEG_M, half, origin);
    random_wrench(&r, 5.0, 0.1, g->wrench);
    apply_wrench(B, g->wrench);
    return B;
}

void t_gen_peg(t_gen_scene *g, int n, double mu, int d, uint64_t seed) {
    peg_body(g, d, seed);
    // Each face (outward normal `out`) carries k = n / 8 contacts per rim, evenly spaced along
    // the face's edge (s in [-1, 1]); k = 2 puts them on the corners, as make_scenes.py does.
    static const double faces[4][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}};
    const int k = n / 8;
    uint64_t cid = 1;
    for (int f = 0; f < 4; f++) {
        const double *out = faces[f];
        const double nrm[3] = {-out[0], -out[1], -out[2]};
        const double tang[3] = {fabs(out[1]), fabs(out[0]), 0};
        for (int j = 0; j < k; j++) {
            const double s = k == 1 ? 0.0 : 1.0 - 2.0 * j / (k - 1);
            for (int zi = 0; zi < 2; zi++) {
                const double z = zi == 0 ? PEG_L : -PEG_L;
                const double p[3] = {out[0] * PEG_H + s * tang[0] * PEG_H,
                                     out[1] * PEG_H + s * tang[1] * PEG_H, z};
                add_contact(g, cid++, 1, 0, p, nrm, 0.0, mu);
            }
        }
    }
}

void t_gen_round_peg(t_gen_scene *g, int n, double mu, int d, uint64_t seed) {
    cs_body *B = peg_body(g, d, seed);
    // Solid cylinder about its axis z: m r^2 / 2; about a diameter: m (3 r^2 + length^2) / 12.
    memset(B->inertia, 0, sizeof(B->inertia));
    B->inertia[0] = B->inertia[4] = PEG_M * (3 * PEG_H * PEG_H + 4 * PEG_L * PEG_L) / 12;
    B->inertia[8] = PEG_M * PEG_H * PEG_H / 2;
    const int k = n / 2;
    uint64_t cid = 1;
    for (int j = 0; j < k; j++) {
        const double a = 2 * M_PI * j / k, c = cos(a), s = sin(a);
        const double nrm[3] = {-c, -s, 0};
        for (int zi = 0; zi < 2; zi++) {
            const double p[3] = {PEG_H * c, PEG_H * s, zi == 0 ? PEG_L : -PEG_L};
            add_contact(g, cid++, 1, 0, p, nrm, 0.0, mu);
        }
    }
}

void t_gen_peg_turn(t_gen_scene *g, int64_t tick, int period_ticks) {
    const double u[3] = {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)};
    double q[4], R[9];
    quat_axis(q, u, 2 * M_PI * (double)(tick % period_ticks) / period_ticks);
    cs_quat_to_mat3(R, q);
    cs_body *B = &g->bodies[0];
    cs_mat3_vec(B->f, R, g->wrench);
    cs_mat3_vec(B->tau, R, g->wrench + 3);
}

/* ---- single-body situations ------------------------------------------------------------- */

static const struct {
    const char *name;
    int contacts;
} single_kinds[T_GEN_SINGLE_KINDS] = {
    {"ball-on-surface", 1},  {"block-on-edge", 2},      {"ball-in-rim", 3},
    {"face-on-surface", 4},  {"block-leaning", 4},      {"block-against-wall", 8},
    {"block-in-v-groove", 8}, {"block-in-corner", 12}, {"block-in-u-groove", 12},
    {"face-on-surface-16", 16},
};

int t_gen_single_contacts(int kind) {
    return kind >= 0 && kind < T_GEN_SINGLE_KINDS ? single_kinds[kind].contacts : -1;
}

const char *t_gen_single_name(int kind) {
    return kind >= 0 && kind < T_GEN_SINGLE_KINDS ? single_kinds[kind].name : NULL;
}

/* Contacts of box b against the fixed plane with unit normal n that touches it: every corner
 * at the plane's minimum of n . x (within rounding of the box size), distance 0. */
static void touch_plane(t_gen_scene *g, int b, const double n[3], double mu, uint64_t *cid) {
    const cs_body *B = &g->bodies[b];
    double c[8][3], lo = INFINITY;
    for (int k = 0; k < 8; k++) {
        box_corner(B, g->half[b], k, c[k]);
        lo = fmin(lo, cs_dot3(n, c[k]));
    }
    for (int k = 0; k < 8; k++)
        if (cs_dot3(n, c[k]) - lo <= 1e-9 * g->half[b][0])
            add_contact(g, (*cid)++, B->id, 0, c[k], n, 0.0, mu);
}

/* A cube turned by angle about x, lifted so its lowest point is on the floor z = 0. */
static int single_box(t_gen_scene *g, double angle) {
    const double half[3] = {SINGLE_H, SINGLE_H, SINGLE_H};
    const double pos[3] = {0, 0, SINGLE_H * (fabs(sin(angle)) + fabs(cos(angle)))};
    cs_body *B = add_body(g, T_GEN_BOX, SINGLE_M, half, pos);
    const double ex[3] = {1, 0, 0};
    quat_axis(B->quat, ex, angle);
    return 0;
}

/* Contacts under body 1's bottom face (a box at identity orientation resting on z = 0) on a
 * side x side grid, corners included, normals up. */
static void bottom_grid(t_gen_scene *g, int side, double mu, uint64_t *cid) {
    const double up[3] = {0, 0, 1};
    for (int i = 0; i < side; i++)
        for (int j = 0; j < side; j++) {
            const double p[3] = {SINGLE_H * (1 - 2.0 * i / (side - 1)),
                                 SINGLE_H * (1 - 2.0 * j / (side - 1)), 0};
            add_contact(g, (*cid)++, 1, 0, p, up, 0.0, mu);
        }
}

void t_gen_single(t_gen_scene *g, int kind, double mu, int d, uint64_t seed) {
    scene_init(g, d, -G);
    t_rng r = t_rng_seed(seed);
    const double up[3] = {0, 0, 1}, wall_y[3] = {0, -1, 0}, wall_y2[3] = {0, 1, 0},
                 wall_x[3] = {-1, 0, 0};
    const double ball[3] = {SINGLE_H, SINGLE_H, SINGLE_H};
    uint64_t cid = 1;
    switch (kind) {
    case 0: { // ball on a surface: one contact under the centre
        const double pos[3] = {0, 0, SINGLE_H}, p[3] = {0, 0, 0};
        add_body(g, T_GEN_SPHERE, SINGLE_M, ball, pos);
        add_contact(g, cid++, 1, 0, p, up, 0.0, mu);
        break;
    }
    case 1: // block on an edge: turned 30 degrees, its lowest edge on the floor
        single_box(g, M_PI / 6);
        touch_plane(g, 0, up, mu, &cid);
        break;
    case 2: { // ball of radius r in a round hole of radius rho: three rim points, normals to
              // the centre, which sits sqrt(r^2 - rho^2) above the rim
        const double rho = 0.6 * SINGLE_H;
        const double pos[3] = {0, 0, sqrt(SINGLE_H * SINGLE_H - rho * rho)};
        add_body(g, T_GEN_SPHERE, SINGLE_M, ball, pos);
        for (int j = 0; j < 3; j++) {
            const double a = M_PI / 2 + 2 * M_PI * j / 3;
            const double p[3] = {rho * cos(a), rho * sin(a), 0};
            const double n[3] = {-p[0] / SINGLE_H, -p[1] / SINGLE_H, pos[2] / SINGLE_H};
            add_contact(g, cid++, 1, 0, p, n, 0.0, mu);
        }
        break;
    }
    case 3: // face on a surface: box_on_plane.json
        single_box(g, 0);
        touch_plane(g, 0, up, mu, &cid);
        break;
    case 4: // block leaning on a wall: turned 20 degrees, one edge on the floor, one on the wall
        single_box(g, M_PI / 9);
        touch_plane(g, 0, up, mu, &cid);
        touch_plane(g, 0, wall_y, mu, &cid);
        break;
    case 5: // block against a wall: a face on the floor, a face on the wall
        single_box(g, 0);
        touch_plane(g, 0, up, mu, &cid);
        touch_plane(g, 0, wall_y, mu, &cid);
        break;
    case 6: { // block in a V-groove: turned 45 degrees, its two lower faces on the walls
        single_box(g, M_PI / 4);
        const double s = sqrt(0.5), w1[3] = {0, s, s}, w2[3] = {0, -s, s};
        touch_plane(g, 0, w1, mu, &cid);
        touch_plane(g, 0, w2, mu, &cid);
        break;
    }
    case 7: // block in a corner: floor and two walls
        single_box(g, 0);
        touch_plane(g, 0, up, mu, &cid);
        touch_plane(g, 0, wall_y, mu, &cid);
        touch_plane(g, 0, wall_x, mu, &cid);
        break;
    case 8: // block in a U-groove: floor and both side walls
        single_box(g, 0);
        touch_plane(g, 0, up, mu, &cid);
        touch_plane(g, 0, wall_y, mu, &cid);
        touch_plane(g, 0, wall_y2, mu, &cid);
        break;
    case 9: // face on a surface, the patch sampled on a 4 x 4 grid (corners included)
        single_box(g, 0);
        bottom_grid(g, 4, mu, &cid);
        break;
    default:
        return;
    }
    random_wrench(&r, 5.0, 0.5, g->wrench);
    apply_wrench(&g->bodies[0], g->wrench);
}

void t_gen_grid(t_gen_scene *g, int side, double mu, int d, uint64_t seed) {
    scene_init(g, d, -G);
    t_rng r = t_rng_seed(seed);
    uint64_t cid = 1;
    single_box(g, 0);
    bottom_grid(g, side, mu, &cid);
    random_wrench(&r, 5.0, 0.5, g->wrench);
    apply_wrench(&g->bodies[0], g->wrench);
}

/* ---- stacked blocks --------------------------------------------------------------------- */

#define STACK_H 0.1
#define STACK_M 1.0

void t_gen_stack(t_gen_scene *g, int boxes, int variant, double mu, int d, uint64_t seed) {
    scene_init(g, d, -G);
    t_rng r = t_rng_seed(seed);
    const double half[3] = {STACK_H, STACK_H, STACK_H}, up[3] = {0, 0, 1}, ez[3] = {0, 0, 1};
    uint64_t cid = 1;
    double yaw = 0;
    for (int i = 0; i < boxes; i++) {
        const bool turned = i > 0 && ((variant >> (i - 1)) & 1);
        const double below = yaw;
        if (turned)
            yaw += M_PI / 4;
        const double pos[3] = {0, 0, STACK_H + 2 * STACK_H * i}, z = 2 * STACK_H * i;
        cs_body *B = add_body(g, T_GEN_BOX, STACK_M, half, pos);
        if (yaw != 0)
            quat_axis(B->quat, ez, yaw);
        if (!turned) {
            // Aligned with the block below (or on the ground): its four bottom corners.
            const double c = cos(yaw), s = sin(yaw);
            for (int sx = 1; sx >= -1; sx -= 2)
                for (int sy = 1; sy >= -1; sy -= 2) {
                    const double x = sx * STACK_H, y = sy * STACK_H;
                    const double p[3] = {c * x - s * y, s * x + c * y, z}; // exact at yaw 0
                    add_contact(g, cid++, (uint32_t)i + 1, (uint32_t)i, p, up, 0.0, mu);
                }
        } else {
            // Two squares of apothem h turned 45 degrees apart meet in a regular octagon of
            // apothem h: vertices at radius h / cos(22.5 deg), midway between the 8 face normals.
            const double rad = STACK_H / cos(M_PI / 8);
            for (int k = 0; k < 8; k++) {
                const double a = below + M_PI / 8 + k * M_PI / 4;
                const double p[3] = {rad * cos(a), rad * sin(a), z};
                add_contact(g, cid++, (uint32_t)i + 1, (uint32_t)i, p, up, 0.0, mu);
            }
        }
    }
    random_wrench(&r, 5.0, 0.5, g->wrench);
    apply_wrench(&g->bodies[boxes - 1], g->wrench);
}

/* ---- random scenes ---------------------------------------------------------------------- */

/* Uniform in the unit ball (rejection from the cube). */
static void random_in_ball(t_rng *r, double v[3]) {
    do {
        for (int k = 0; k < 3; k++)
            v[k] = t_rng_range(r, -1, 1);
    } while (cs_dot3(v, v) > 1 || cs_dot3(v, v) < 1e-6);
}

static void random_unit(t_rng *r, double v[3]) {
    random_in_ball(r, v);
    const double l = sqrt(cs_dot3(v, v));
    for (int k = 0; k < 3; k++)
        v[k] /= l;
}

/* Uniform random rotation (Shoemake's subgroup algorithm). */
static void random_quat(t_rng *r, double q[4]) {
    const double u1 = t_rng_unit(r), u2 = 2 * M_PI * t_rng_unit(r), u3 = 2 * M_PI * t_rng_unit(r);
    const double a = sqrt(1 - u1), b = sqrt(u1);
    q[0] = a * sin(u2), q[1] = a * cos(u2), q[2] = b * sin(u3), q[3] = b * cos(u3);
}

void t_gen_random(t_gen_scene *g, int nb, int nc, int d, uint64_t seed) {
    scene_init(g, d, -G);
    t_rng r = t_rng_seed(seed);
    for (int b = 0; b < nb; b++) {
        double pos[3], R[9], D[9] = {0};
        for (int k = 0; k < 3; k++)
            pos[k] = t_rng_range(&r, -1, 1);
        // The shape is nominal (random scenes have no geometry); the inertia is replaced below.
        const double m = t_rng_range(&r, 0.5, 2.0), nominal[3] = {0.1, 0.1, 0.1};
        cs_body *B = add_body(g, T_GEN_BOX, m, nominal, pos);
        random_quat(&r, B->quat);
        // Principal moments m [0.005, 0.05] m^2: condition number <= 10, turned by a random
        // rotation so the inertia is full; symmetrised against rounding.
        for (int k = 0; k < 3; k++)
            D[4 * k] = m * t_rng_range(&r, 0.005, 0.05);
        double Q[4];
        random_quat(&r, Q);
        cs_quat_to_mat3(R, Q);
        cs_mat3_rotate(B->inertia, R, D);
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 3; j++)
                B->inertia[3 * j + i] = B->inertia[3 * i + j];
        for (int k = 0; k < 3; k++) {
            B->v[k] = t_rng_range(&r, -0.5, 0.5);
            B->w[k] = t_rng_range(&r, -1, 1);
        }
        double w[6];
        random_wrench(&r, 5.0, 0.5, w);
        apply_wrench(B, w);
    }
    for (int i = 0; i < nc; i++) {
        const int a = t_rng_below(&r, nb);
        // body_b: the world (k = 0) or the k-th of the other nb - 1 bodies, uniformly.
        const int k = t_rng_below(&r, nb);
        const uint32_t bid = k == 0 ? 0 : (uint32_t)(k - 1 < a ? k - 1 : k) + 1;
        double p[3], n[3];
        random_in_ball(&r, p);
        for (int k = 0; k < 3; k++)
            p[k] = g->bodies[a].pos[k] + 0.2 * p[k];
        random_unit(&r, n);
        const double mu = t_rng_unit(&r);
        const double gap = t_rng_below(&r, 2) ? 0.0 : t_rng_range(&r, 0, 0.005);
        add_contact(g, (uint64_t)i + 1, (uint32_t)a + 1, bid, p, n, gap, mu);
    }
}

/* ---- clutter and closed loop ------------------------------------------------------------ */

double t_gen_body_distance(const t_gen_scene *g, int b, const double p[3], double ret_n[3]) {
    const cs_body *B = &g->bodies[b];
    double d[3] = {p[0] - B->pos[0], p[1] - B->pos[1], p[2] - B->pos[2]};
    if (g->shape[b] == T_GEN_SPHERE) {
        const double l = sqrt(cs_dot3(d, d));
        for (int k = 0; k < 3; k++)
            ret_n[k] = l > 0 ? d[k] / l : (k == 2);
        return l - g->half[b][0];
    }
    // Box: in the body frame, distance to the clamped point outside, or minus the depth below
    // the nearest face inside.
    double R[9], loc[3], nl[3] = {0, 0, 0};
    cs_quat_to_mat3(R, B->quat);
    for (int a = 0; a < 3; a++)
        loc[a] = R[a] * d[0] + R[3 + a] * d[1] + R[6 + a] * d[2]; // R^T d
    const double *h = g->half[b];
    double out2 = 0, dist;
    for (int a = 0; a < 3; a++) {
        const double e = fabs(loc[a]) - h[a];
        if (e > 0) {
            out2 += e * e;
            nl[a] = copysign(e, loc[a]);
        }
    }
    if (out2 > 0) {
        dist = sqrt(out2);
        for (int a = 0; a < 3; a++)
            nl[a] /= dist;
    } else {
        int best = 0;
        for (int a = 1; a < 3; a++)
            if (h[a] - fabs(loc[a]) < h[best] - fabs(loc[best]))
                best = a;
        dist = fabs(loc[best]) - h[best];
        nl[best] = copysign(1.0, loc[best]);
    }
    cs_mat3_vec(ret_n, R, nl);
    return dist;
}

static uint64_t pair_id(uint32_t a, uint32_t b, unsigned feature) {
    return (uint64_t)a << 40 | (uint64_t)b << 20 | feature;
}

/* Contact of a point of body a (a feature at p) against body b if it is within the margin. */
static bool point_against_body(t_gen_scene *g, int a, int b, const double p[3],
                               unsigned feature) {
    double n[3];
    const double dist = t_gen_body_distance(g, b, p, n);
    if (dist >= g->margin)
        return true;
    return add_contact(g, pair_id(g->bodies[a].id, g->bodies[b].id, feature),
                       g->bodies[a].id, g->bodies[b].id, p, n, dist, g->mu);
}

int t_gen_contacts_update(t_gen_scene *g) {
    g->s.nc = 0;
    bool ok = true;
    for (int i = 0; i < g->s.nb; i++) {
        const cs_body *A = &g->bodies[i];
        double c[8][3];
        if (g->shape[i] == T_GEN_BOX)
            for (int k = 0; k < 8; k++)
                box_corner(A, g->half[i], k, c[k]);
        // Against the walls: a ball's lowest point along -n, or each corner of a box.
        for (int w = 0; w < g->np; w++) {
            const t_gen_plane *P = &g->planes[w];
            if (g->shape[i] == T_GEN_SPHERE) {
                const double r = g->half[i][0], dist = cs_dot3(P->n, A->pos) - P->offset - r;
                const double p[3] = {A->pos[0] - r * P->n[0], A->pos[1] - r * P->n[1],
                                     A->pos[2] - r * P->n[2]};
                if (dist < g->margin)
                    ok &= add_contact(g, pair_id(A->id, 0, 8 * (unsigned)w), A->id, 0, p, P->n,
                                      dist, g->mu);
                continue;
            }
            for (int k = 0; k < 8; k++) {
                const double dist = cs_dot3(P->n, c[k]) - P->offset;
                if (dist < g->margin)
                    ok &= add_contact(g, pair_id(A->id, 0, 8 * (unsigned)w + (unsigned)k), A->id,
                                      0, c[k], P->n, dist, g->mu);
            }
        }
        // Against the other bodies: a ball is body_a against anything (its point on its own
        // surface towards the other); two boxes test each one's corners against the other.
        for (int j = i + 1; j < g->s.nb; j++) {
            const bool bi = g->shape[i] == T_GEN_BOX, bj = g->shape[j] == T_GEN_BOX;
            if (bi && bj) {
                double cj[8][3];
                for (int k = 0; k < 8; k++) {
                    ok &= point_against_body(g, i, j, c[k], (unsigned)k);
                    box_corner(&g->bodies[j], g->half[j], k, cj[k]);
                }
                for (int k = 0; k < 8; k++)
                    ok &= point_against_body(g, j, i, cj[k], (unsigned)k);
                continue;
            }
            const int s = bi ? j : i, o = bi ? i : j; // s: a ball
            const cs_body *S = &g->bodies[s];
            double n[3];
            const double dist = t_gen_body_distance(g, o, S->pos, n) - g->half[s][0];
            if (dist >= g->margin)
                continue;
            const double r = g->half[s][0];
            const double p[3] = {S->pos[0] - r * n[0], S->pos[1] - r * n[1], S->pos[2] - r * n[2]};
            ok &= add_contact(g, pair_id(S->id, g->bodies[o].id, 0), S->id, g->bodies[o].id, p, n,
                              dist, g->mu);
        }
    }
    return ok ? g->s.nc : -1;
}

void t_gen_clutter(t_gen_scene *g, int n, uint64_t seed) {
    scene_init(g, CS_DIRS_DEFAULT, -G);
    t_rng r = t_rng_seed(seed);
    g->margin = CLUTTER_MARGIN;
    g->mu = 0.5;
    // k x k columns, about 2.5 bodies high; the walls are 1 cm clear of the outer columns.
    int k = 1;
    while (k * k * 5 < 2 * n)
        k++;
    const double W = k * CLUTTER_PITCH / 2;
    const double walls[5][4] = {{0, 0, 1, 0}, {1, 0, 0, -W}, {-1, 0, 0, -W}, {0, 1, 0, -W},
                                {0, -1, 0, -W}};
    g->np = 5;
    for (int w = 0; w < 5; w++)
        g->planes[w] = (t_gen_plane){.n = {walls[w][0], walls[w][1], walls[w][2]},
                                     .offset = walls[w][3]};
    double top[T_GEN_MAX_BODIES] = {0}, jx[T_GEN_MAX_BODIES], jy[T_GEN_MAX_BODIES];
    const int ncol = k * k;
    for (int c = 0; c < ncol; c++) {
        jx[c] = t_rng_range(&r, -CLUTTER_JITTER, CLUTTER_JITTER);
        jy[c] = t_rng_range(&r, -CLUTTER_JITTER, CLUTTER_JITTER);
    }
    const double ez[3] = {0, 0, 1}, ball[3] = {CLUTTER_R, CLUTTER_R, CLUTTER_R};
    for (int i = 0; i < n && i < T_GEN_MAX_BODIES; i++) {
        // Bodies fill the columns level by level; each rests on the one below (gap 0). Boxes
        // only on the floor: box-box contacts are vertex-against-face, which is exact for boxes
        // side by side but misses the edge crossings of a box lying on another.
        const int c = i % ncol;
        const bool box = i < ncol && t_rng_below(&r, 2) == 0;
        const double hz = box ? clutter_box[2] : CLUTTER_R;
        const double pos[3] = {(c % k - (k - 1) / 2.0) * CLUTTER_PITCH + jx[c],
                               (c / k - (k - 1) / 2.0) * CLUTTER_PITCH + jy[c], top[c] + hz};
        top[c] += 2 * hz;
        cs_body *B = add_body(g, box ? T_GEN_BOX : T_GEN_SPHERE, 1.0, box ? clutter_box : ball,
                              pos);
        if (box)
            quat_axis(B->quat, ez, t_rng_range(&r, 0, M_PI));
    }
    t_gen_contacts_update(g);
}

void t_gen_slide(t_gen_scene *g, double mu, int d, uint64_t seed) {
    scene_init(g, d, -G);
    t_rng r = t_rng_seed(seed);
    g->margin = CLUTTER_MARGIN;
    g->mu = mu;
    g->np = 1;
    g->planes[0] = (t_gen_plane){.n = {0, 0, 1}, .offset = 0};
    const double half[3] = {SINGLE_H, SINGLE_H, SINGLE_H}, pos[3] = {0, 0, SINGLE_H};
    cs_body *B = add_body(g, T_GEN_BOX, SINGLE_M, half, pos);
    const double a = t_rng_range(&r, 0, 2 * M_PI), push = 1.2 * mu * SINGLE_M * G;
    B->v[0] = 0.5 * cos(a), B->v[1] = 0.5 * sin(a);
    g->wrench[0] = push * cos(a), g->wrench[1] = push * sin(a);
    apply_wrench(B, g->wrench);
    t_gen_contacts_update(g);
}

void t_gen_clutter_advance(t_gen_scene *g, const cs_result *r) {
    const double dt = g->s.dt;
    for (int b = 0; b < g->s.nb && b < r->nb; b++) {
        cs_body *B = &g->bodies[b];
        const double *v = r->v + 6 * b, *w = v + 3, *q = B->quat;
        memcpy(B->v, v, 3 * sizeof(double));
        memcpy(B->w, w, 3 * sizeof(double));
        for (int k = 0; k < 3; k++)
            B->pos[k] += dt * v[k];
        // q' = 1/2 (0, w) q, w in the world frame.
        const double dq[4] = {-(w[0] * q[1] + w[1] * q[2] + w[2] * q[3]),
                              w[0] * q[0] + w[1] * q[3] - w[2] * q[2],
                              w[1] * q[0] + w[2] * q[1] - w[0] * q[3],
                              w[2] * q[0] + w[0] * q[2] - w[1] * q[1]};
        double qn = 0;
        for (int k = 0; k < 4; k++) {
            B->quat[k] += 0.5 * dt * dq[k];
            qn += B->quat[k] * B->quat[k];
        }
        qn = sqrt(qn);
        for (int k = 0; k < 4; k++)
            B->quat[k] /= qn;
    }
    t_gen_contacts_update(g);
    g->s.seq++;
    g->tick++;
}
