/* SPDX-License-Identifier: MIT */
/* A process's threads as /proc shows them: found by the name they give themselves (the daemon's
 * "cd-fg0", "cd-awake1", ...), with their state and the CPU time they have had. For tests that
 * check which threads run where and whether they sleep; nothing here waits. */
#ifndef CONTACTD_TESTS_PROC_THREADS_H
#define CONTACTD_TESTS_PROC_THREADS_H
#include <stdint.h>
#include <sys/types.h>

/* The id of pid's thread named name (pid 0: this process), or -1 when it has none. */
pid_t t_thread_find(pid_t pid, const char *name);

/* The thread's state letter from /proc (R running or runnable, S sleeping, ...), or 0 when the
 * thread is gone. */
char t_thread_state(pid_t pid, pid_t tid);

/* The CPU time the thread has had so far, ns (/proc schedstat), or -1 when it is gone. */
int64_t t_thread_run_ns(pid_t pid, pid_t tid);

#endif /* CONTACTD_TESTS_PROC_THREADS_H */
