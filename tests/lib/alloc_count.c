/* SPDX-License-Identifier: MIT */
/* Counting allocator (see alloc_count.h). */
#include "alloc_count.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
static long allocations;
static size_t bytes;
static bool counting;
static _Atomic long thread_allocations;
static _Atomic bool counting_threads;
static char thread_prefix[16];

// Counts one allocation of n bytes for whichever count is on. prctl reads the calling thread's
// own name without allocating.
static void count(size_t n) {
    if (counting) {
        allocations++;
        bytes += n;
    }
    if (atomic_load_explicit(&counting_threads, memory_order_acquire)) {
        char name[16] = "";
        (void)prctl(PR_GET_NAME, name);
        if (strncmp(name, thread_prefix, strlen(thread_prefix)) == 0)
            atomic_fetch_add_explicit(&thread_allocations, 1, memory_order_relaxed);
    }
}

void *malloc(size_t n) {
    count(n);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m) {
    count(n * m);
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n) {
    count(n);
    return __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n) {
    count(n);
    return __libc_memalign(align, n);
}

void t_alloc_count_threads_start(const char *prefix) {
    strncpy(thread_prefix, prefix, sizeof thread_prefix - 1);
    atomic_store_explicit(&thread_allocations, 0, memory_order_relaxed);
    // release: pairs with the acquire in count(), which then sees the prefix.
    atomic_store_explicit(&counting_threads, true, memory_order_release);
}

long t_alloc_count_threads_stop(void) {
    atomic_store_explicit(&counting_threads, false, memory_order_release);
    return atomic_load_explicit(&thread_allocations, memory_order_relaxed);
}

void t_alloc_count_start(void) {
    allocations = 0;
    bytes = 0;
    counting = true;
}

long t_alloc_count_stop(void) {
    counting = false;
    return allocations;
}

size_t t_alloc_count_bytes(void) {
    return bytes;
}
#else
void t_alloc_count_start(void) {}

long t_alloc_count_stop(void) {
    return -1;
}

void t_alloc_count_threads_start(const char *prefix) {
    (void)prefix;
}

long t_alloc_count_threads_stop(void) {
    return -1;
}

size_t t_alloc_count_bytes(void) {
    return 0;
}
#endif
