/* SPDX-License-Identifier: MIT */
/* Sorted (id, position) maps: see idmap.h. */
#include "solver/idmap.h"

void cs__idmap_sort(cs_idpos *map, int n) {
    // Shell sort with Knuth's gaps 1, 4, 13, 40, ...
    int gap = 1;
    while (gap < n / 3)
        gap = 3 * gap + 1;
    for (; gap >= 1; gap /= 3) {
        for (int i = gap; i < n; i++) {
            const cs_idpos t = map[i];
            int j = i;
            for (; j >= gap && map[j - gap].id > t.id; j -= gap)
                map[j] = map[j - gap];
            map[j] = t;
        }
    }
}

int cs__idmap_find(const cs_idpos *map, int n, uint64_t id) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        const int mid = lo + (hi - lo) / 2;
        if (map[mid].id == id)
            return map[mid].pos;
        if (map[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}
