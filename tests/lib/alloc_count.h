/* SPDX-License-Identifier: MIT */
/* Counts the heap allocations a stretch of test code makes, by interposing malloc, calloc and
 * realloc in the test executable (the "no allocation in a solve" checks). Under ASan, which owns
 * malloc, nothing is interposed and the count is unavailable. */
#ifndef CONTACTD_TESTS_ALLOC_COUNT_H
#define CONTACTD_TESTS_ALLOC_COUNT_H

/* Starts counting from zero. thread: the counting thread only. */
void t_alloc_count_start(void);
/* Stops counting; returns the allocations since t_alloc_count_start(), or -1 when this build
 * cannot count them (sanitizers). */
long t_alloc_count_stop(void);

#endif /* CONTACTD_TESTS_ALLOC_COUNT_H */
