/* SPDX-License-Identifier: MIT */
/* Id -> position lookups in bounded time and no allocation: a caller-owned array of (id, pos)
 * pairs sorted once, then binary searched. Used to map body ids to body indices and to match
 * contact ids across ticks for warm starts. */
#ifndef CONTACTD_SOLVER_IDMAP_H
#define CONTACTD_SOLVER_IDMAP_H
#include <stdint.h>

typedef struct cs_idpos {
    uint64_t id;
    int pos;
} cs_idpos;

/* Sorts map[0..n) by id (shell sort: O(n^1.3) typical, no recursion, no allocation). */
void cs__idmap_sort(cs_idpos *map, int n);
/* Position stored for id in a sorted map, or -1. */
int cs__idmap_find(const cs_idpos *map, int n, uint64_t id);

#endif /* CONTACTD_SOLVER_IDMAP_H */
