/* SPDX-License-Identifier: MIT */
/* Counting allocator (see alloc_count.h). */
#include "alloc_count.h"

#include <stdbool.h>
#include <stddef.h>

#ifndef __SANITIZE_ADDRESS__
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
static long allocations;
static bool counting;

void *malloc(size_t n) {
    if (counting)
        allocations++;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m) {
    if (counting)
        allocations++;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n) {
    if (counting)
        allocations++;
    return __libc_realloc(p, n);
}

void t_alloc_count_start(void) {
    allocations = 0;
    counting = true;
}

long t_alloc_count_stop(void) {
    counting = false;
    return allocations;
}
#else
void t_alloc_count_start(void) {}

long t_alloc_count_stop(void) {
    return -1;
}
#endif
