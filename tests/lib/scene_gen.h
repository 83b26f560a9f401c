/* SPDX-License-Identifier: MIT */
/* Deterministic scene generators for tests and benchmarks: Lloyd 2005's experiments (peg in a
 * hole, ten single-body situations, stacked blocks), random valid scenes, and a bin of clutter
 * that can be stepped in closed loop. Everything is analytic geometry seeded by splitmix64
 * (t_rng), so the same arguments give bit-identical scenes on every machine. The peg (16
 * contacts), the stack (variant 0) and the face-on-surface box reproduce the geometry of
 * tests/data/peg_in_hole.json, stack_<k>.json and box_on_plane.json (tests/data/make_scenes.py).
 *
 * A t_gen_scene points into itself (s.bodies = bodies, s.contacts = contacts): never copy one by
 * value; every generator (re)initialises the pointers. Every generated scene passes
 * cs_scene_validate() for limits {T_GEN_MAX_BODIES, T_GEN_MAX_CONTACTS, d}.
 * thread: any (a t_gen_scene has one owner). rt-safe: yes (no allocation). */
#ifndef CONTACTD_TESTS_SCENE_GEN_H
#define CONTACTD_TESTS_SCENE_GEN_H
#include <stdint.h>
#include "wire/types.h"

#define T_GEN_MAX_BODIES 64
#define T_GEN_MAX_CONTACTS 512
#define T_GEN_MAX_PLANES 5

/* Shapes of the bodies of scenes that move (t_gen_clutter, t_gen_slide). */
typedef enum t_gen_shape {
    T_GEN_BOX = 0,
    T_GEN_SPHERE = 1,
} t_gen_shape;

/* A fixed half-space boundary: points x with n . x >= offset are outside the wall. */
typedef struct t_gen_plane {
    double n[3];   /* unit, pointing into the free space */
    double offset; /* m */
} t_gen_plane;

typedef struct t_gen_scene {
    cs_scene s;
    cs_body bodies[T_GEN_MAX_BODIES];
    cs_contact contacts[T_GEN_MAX_CONTACTS];
    /* The world of a moving scene, which t_gen_clutter_advance() regenerates contacts from. */
    t_gen_shape shape[T_GEN_MAX_BODIES];
    double half[T_GEN_MAX_BODIES][3]; /* box half extents, or the sphere radius in [0], m */
    int np;
    t_gen_plane planes[T_GEN_MAX_PLANES];
    double margin;    /* m: features closer than this get a contact (distance >= 0 = a gap) */
    double mu;        /* friction coefficient of regenerated contacts */
    double wrench[6]; /* the generator's random wrench (N, N m) before any turn (t_gen_peg_turn) */
    int64_t tick;     /* steps taken by t_gen_clutter_advance() */
} t_gen_scene;

/* Peg in a square hole through a fixed block (Lloyd Fig. 3): a 0.04 x 0.04 x 0.1 m, 0.5 kg peg
 * centred at the origin, n contacts (8..32, a multiple of 8) on its four faces, n / 8 evenly
 * spaced along each face's edge at the hole's top rim (z = +0.05) and as many at the bottom rim
 * (z = -0.05), normals from the walls into the peg. A random wrench (force in [-5, 5] N and torque
 * in [-0.1, 0.1] N m per component) acts at the peg's centre; gravity is off (as Lloyd). */
void t_gen_peg(t_gen_scene *g, int n, double mu, int d, uint64_t seed);
/* Sets the peg's wrench to g->wrench turned by 2 pi tick / period_ticks about (1, 1, 1)/sqrt 3:
 * the slowly rotating wrench of a streamed peg. Contacts and ids are untouched. */
void t_gen_peg_turn(t_gen_scene *g, int64_t tick, int period_ticks);

/* Round peg in a round hole: a solid cylinder of radius 0.02 m and length 0.1 m, 0.5 kg, centred
 * at the origin along z, n contacts (even, 8..32): n / 2 evenly spaced around the circumference
 * at the hole's top rim (z = +0.05) and as many at the same angles at the bottom rim (z = -0.05),
 * normals radial from the wall into the peg. The random wrench is t_gen_peg's (same ranges, same
 * draw from the seed); gravity is off. Neighbouring normals differ by 4 pi / n only, and each top
 * contact has a bottom twin with the same normal: a near-degenerate contact LCP. */
void t_gen_round_peg(t_gen_scene *g, int n, double mu, int d, uint64_t seed);

/* Number of Lloyd-style single-body situations (kind 0 .. T_GEN_SINGLE_KINDS - 1). */
#define T_GEN_SINGLE_KINDS 10
/* One body (a 0.2 m, 2 kg cube or a 0.1 m radius, 2 kg ball) under gravity and a random wrench
 * (force in [-5, 5] N, torque in [-0.5, 0.5] N m per component) in one of ten situations with
 * 1..16 contacts: 0 ball on a surface (1), 1 block on an edge (2), 2 ball in the rim of a round
 * hole (3), 3 face on a surface (4, box_on_plane.json), 4 block leaning on a wall (4), 5 block
 * against a wall (8), 6 block in a V-groove (8), 7 block in a corner (12), 8 block in a U-groove
 * (12), 9 face on a surface sampled on a 4 x 4 grid (16). */
void t_gen_single(t_gen_scene *g, int kind, double mu, int d, uint64_t seed);
/* Situation 9 at any size: the cube's bottom face on the floor sampled on a side x side grid
 * (2 <= side, side^2 <= T_GEN_MAX_CONTACTS), a random wrench as t_gen_single's: side = 16 gives
 * a session's default limit of 256 contacts, all on one body (a dense W of rank 3). */
void t_gen_grid(t_gen_scene *g, int side, double mu, int d, uint64_t seed);
/* Contacts of single-body situation kind, or -1 when kind is out of range. */
int t_gen_single_contacts(int kind);
/* Short name of kind ("ball-on-surface", ...), or NULL when out of range. */
const char *t_gen_single_name(int kind);

/* Stack of `boxes` (1..5) 0.2 m, 1 kg cubes on the ground under gravity, with a random wrench
 * (force in [-5, 5] N, torque in [-0.5, 0.5] N m) on the top one. Bit i - 1 of variant turns
 * block i by 45 degrees about z relative to block i - 1, which makes their interface an octagon
 * of 8 contacts instead of 4 corners; so n = 4 + sum of 4 or 8 per interface, 4..36 (variant 0 is
 * stack_<boxes>.json). Contact ids are 1..n in order from the ground up. */
void t_gen_stack(t_gen_scene *g, int boxes, int variant, double mu, int d, uint64_t seed);

/* Random but valid scene: nb bodies (1..5) with masses in [0.5, 2] kg and rotated inertias of
 * condition number <= 10, random poses, velocities and wrenches, under gravity; nc contacts
 * (1..32) each between a random body and another body or the world, at a random point within
 * 0.2 m of body_a's centre, with a random unit normal, mu in [0, 1] and a gap of 0 (half of them)
 * or in [0, 5] mm. */
void t_gen_random(t_gen_scene *g, int nb, int nc, int d, uint64_t seed);

/* Clutter for SAP: n bodies (1..T_GEN_MAX_BODIES; the benchmark uses 10, 20, 40), 1 kg each,
 * stacked in columns on a square grid of 0.22 m pitch in a bin (floor z = 0 and four walls 1 cm
 * clear of the outer columns) under gravity, mu 0.5, d = 8: balls of radius 0.1 m, and on the
 * floor level about every other body a 0.16 x 0.12 x 0.1 m box of random yaw. Contacts come from
 * the shapes analytically (ball-ball, ball-plane, ball-box, box-plane, and box-box
 * vertex-against-face both ways, which misses edge-edge crossings) for every feature pair closer
 * than g->margin (5 mm). Contact ids are stable per body pair and feature:
 * body_a << 40 | body_b << 20 | feature. */
void t_gen_clutter(t_gen_scene *g, int n, uint64_t seed);
/* Closed loop: takes the post-step velocities r->v (a result of cs_step on g->s), integrates
 * every body over g->s.dt (positions by symplectic Euler, orientations by the quaternion rate
 * 1/2 (0, w) q, renormalised), regenerates the contacts from the shapes and planes and advances
 * s.seq and tick. For scenes from t_gen_clutter and t_gen_slide. */
void t_gen_clutter_advance(t_gen_scene *g, const cs_result *r);

/* A 0.2 m, 2 kg cube on an infinite floor, moving at 0.5 m/s in a random horizontal direction
 * and pushed along it by 1.2 mu m g, so it keeps sliding (and speeds up by 0.2 mu g per second)
 * when stepped with t_gen_clutter_advance(). 4 contacts, gravity on. */
void t_gen_slide(t_gen_scene *g, double mu, int d, uint64_t seed);

/* Copies src into dst with dst's own pointers (a t_gen_scene must not be copied by value). */
void t_gen_copy(t_gen_scene *dst, const t_gen_scene *src);

/* Regenerates g's contacts from its shapes and planes at the current poses (what
 * t_gen_clutter_advance() does after integrating). Returns the number of contacts, or -1 when
 * T_GEN_MAX_CONTACTS was not enough (the list is then truncated). */
int t_gen_contacts_update(t_gen_scene *g);

/* Signed distance from point p (world) to body index b's surface (negative inside) and its unit
 * gradient (the outward normal at the nearest surface point) in ret_n, for scenes with shapes.
 * What the generators place contacts with; tests check the geometry with it. */
double t_gen_body_distance(const t_gen_scene *g, int b, const double p[3], double ret_n[3]);

#endif /* CONTACTD_TESTS_SCENE_GEN_H */
