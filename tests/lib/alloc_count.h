/* SPDX-License-Identifier: MIT */
/* Counts the heap allocations a stretch of test code makes, and the bytes they ask for, by
 * interposing malloc, calloc, realloc and aligned_alloc in the test executable (the "no
 * allocation in a solve" and "allocates what its _size() says" checks). Under ASan, which owns
 * malloc, nothing is interposed and the counts are unavailable. */
#ifndef CONTACTD_TESTS_ALLOC_COUNT_H
#define CONTACTD_TESTS_ALLOC_COUNT_H
#include <stddef.h>

/* Starts counting from zero. thread: the counting thread only. */
void t_alloc_count_start(void);
/* Stops counting; returns the allocations since t_alloc_count_start(), or -1 when this build
 * cannot count them (sanitizers). */
long t_alloc_count_stop(void);
/* Bytes requested by the allocations counted between the last start and stop. */
size_t t_alloc_count_bytes(void);

/* Starts counting, from zero, the allocations of every thread whose name (pthread_setname_np)
 * begins with prefix, whichever thread they run on; the counting thread's own are not counted
 * unless its name matches. thread: any. */
void t_alloc_count_threads_start(const char *prefix);
/* Stops that count and returns it, or -1 when this build cannot count (sanitizers). */
long t_alloc_count_threads_stop(void);

#endif /* CONTACTD_TESTS_ALLOC_COUNT_H */
