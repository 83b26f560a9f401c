/* SPDX-License-Identifier: MIT */
/* Internal: two doubles at once (GNU vector extension: SSE2 on x86-64, scalar pairs elsewhere)
 * for the solvers' small kernels, where GCC at -O2 leaves the loops scalar. Loads and stores go
 * through memcpy: no alignment or aliasing assumed. Each lane does the scalar arithmetic of its
 * element, so results equal those of the plain loops. */
#ifndef CONTACTD_SOLVER_SIMD_H
#define CONTACTD_SOLVER_SIMD_H
#include <string.h>

typedef double cs__v2 __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) cs__v2 cs__ld2(const double *p) {
    cs__v2 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) void cs__st2(double *p, cs__v2 v) {
    memcpy(p, &v, sizeof v);
}

#endif /* CONTACTD_SOLVER_SIMD_H */
