/* SPDX-License-Identifier: MIT */
/* KDL 1.5's chain dynamics (Debian liborocos-kdl-dev, C++) as peers of bench_articulated, behind
 * a C interface: Vereshchagin's hybrid (constrained forward) dynamics (ChainIdSolver_Vereshchagin,
 * which KDL 1.5 renames ChainHdSolver_Vereshchagin and warns about under the old name), the
 * joint accelerations of the chain under gravity in O(n), either open (no end-effector
 * constraint) or with its tip's linear acceleration held at zero by three end-effector
 * constraints (the tip tied to the world by a ball joint, exact at rest; with rates the
 * constraint would need their velocity-product terms, which the peer leaves at zero); and the
 * recursive Newton-Euler inverse dynamics, ChainIdSolver_RNE (a simpler problem: one torque per
 * joint for given accelerations).
 * The chain: n links in series from the world, link i rotating about a hinge through its joint
 * point with every frame parallel to the world's at q = 0; the world holds joint 0 at its origin.
 * Per link (world axes, at q = 0): mass [n] kg; com [3 n] its centre of mass from its joint, m;
 * inertia [9 n] about the centre of mass, row-major, kg m^2; axis [3 n] unit hinge axis; tip
 * [3 n] the next joint from this one, m. g [3]: gravity, m/s^2.
 * The benchmarks build without KDL (or without a C++ compiler); the stubs below then say so.
 * thread: the benchmark's main thread. rt-safe: no (KDL allocates while it builds a chain). */
#ifndef CONTACTD_TESTS_BENCH_KDL_PEER_H
#define CONTACTD_TESTS_BENCH_KDL_PEER_H
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kdl_peer kdl_peer;

#ifdef CONTACTD_HAVE_KDL
/* True when the benchmark was built with KDL. */
bool kdl_peer_is_built(void);
/* The chain described above with both solvers; NULL when memory is short. */
kdl_peer *kdl_peer_new(int n, const double *mass, const double *com, const double *inertia,
                       const double *axis, const double *tip, const double g[3]);
/* Accepts NULL. */
void kdl_peer_free(kdl_peer *k);
/* Sets the joint angles q [n] (rad) and rates qd [n] (rad/s) the solvers start from (untimed:
 * copies into KDL's arrays). */
void kdl_peer_load(kdl_peer *k, const double *q, const double *qd);
/* Vereshchagin: joint accelerations qdd [n] (rad/s^2) of the loaded state under gravity, no
 * joint torques, the tip held (loop) or free (the call to time). Returns KDL's error code
 * (0: none). */
int kdl_peer_forward(kdl_peer *k, bool loop, double *qdd);
/* RNE: the joint torques tau [n] (N m) that give accelerations qdd [n] in the loaded state
 * under gravity (the call to time). Returns KDL's error code (0: none). */
int kdl_peer_inverse(kdl_peer *k, const double *qdd, double *tau);
#else
static inline bool kdl_peer_is_built(void) {
    return false;
}
static inline kdl_peer *kdl_peer_new(int n, const double *mass, const double *com,
                                     const double *inertia, const double *axis,
                                     const double *tip, const double g[3]) {
    (void)n, (void)mass, (void)com, (void)inertia, (void)axis, (void)tip, (void)g;
    return NULL;
}
static inline void kdl_peer_free(kdl_peer *k) {
    (void)k;
}
static inline void kdl_peer_load(kdl_peer *k, const double *q, const double *qd) {
    (void)k, (void)q, (void)qd;
}
static inline int kdl_peer_forward(kdl_peer *k, bool loop, double *qdd) {
    (void)k, (void)loop, (void)qdd;
    return -1;
}
static inline int kdl_peer_inverse(kdl_peer *k, const double *qdd, double *tau) {
    (void)k, (void)qdd, (void)tau;
    return -1;
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* CONTACTD_TESTS_BENCH_KDL_PEER_H */
