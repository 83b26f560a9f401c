/* SPDX-License-Identifier: MIT */
/* MuJoCo 2.2.2's forward dynamics (Debian libmujoco-dev) as a peer of bench_articulated: the
 * chain of kdl_peer.h (same arguments: n links in series from the world, frames parallel to the
 * world's at q = 0, per-link mass, com, inertia about the com, hinge axis, tip) written as MJCF
 * (nested bodies, one hinge each, explicit inertials, no geoms hence no contacts), compiled
 * from virtual files of 40 bodies each that include the next (MuJoCo's XML parser takes no
 * element nested more than 100 deep in one file), and mj_forward on it. loop: the tip is tied
 * to the world by a ball joint at its place at q = 0, an equality connect (MuJoCo's constraints
 * are soft: solref and solimp at their defaults, so the loop holds only up to the impedance,
 * not exactly).
 * mj_forward computes the joint accelerations with the joint-space mass matrix factored densely
 * along the chain (O(n^2) memory, ~n^3 / 6 work for a chain), then its constraint solver.
 * The benchmarks build without MuJoCo; the peer then says so.
 * thread: the benchmark's main thread. rt-safe: no. */
#ifndef CONTACTD_TESTS_BENCH_MUJOCO_PEER_H
#define CONTACTD_TESTS_BENCH_MUJOCO_PEER_H
#include <stdbool.h>
#include <stddef.h>

/* True when the benchmark was built with MuJoCo. */
bool mujoco_peer_is_built(void);

typedef struct mujoco_peer mujoco_peer;

/* The model of the chain with timestep dt (s) and gravity g [3]; NULL when not built or when
 * MuJoCo refuses it (its message in err [len]). */
mujoco_peer *mujoco_peer_new(int n, const double *mass, const double *com, const double *inertia,
                             const double *axis, const double *tip, const double g[3], double dt,
                             bool loop, char *err, size_t len);
/* Accepts NULL. */
void mujoco_peer_free(mujoco_peer *m);
/* Sets qpos [n] (rad) and qvel [n] (rad/s) (untimed). */
void mujoco_peer_load(mujoco_peer *m, const double *q, const double *qd);
/* mj_forward (the call to time) and its qacc into qdd [n]. Returns MuJoCo's warnings of this
 * call (0: none). */
int mujoco_peer_forward(mujoco_peer *m, double *qdd);

#endif /* CONTACTD_TESTS_BENCH_MUJOCO_PEER_H */
