/* SPDX-License-Identifier: MIT */
/* /proc/PID/task reading (see proc_threads.h). */
#include "proc_threads.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// /proc/PID/task/TID/leaf (PID "self" when pid is 0) read into buf; false when it cannot be.
static bool read_task_file(pid_t pid, const char *tid, const char *leaf, char *buf, size_t len) {
    char path[128];
    if (pid > 0) {
        snprintf(path, sizeof path, "/proc/%d/task/%s/%s", (int)pid, tid, leaf);
    } else {
        snprintf(path, sizeof path, "/proc/self/task/%s/%s", tid, leaf);
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        return false;
    }
    const bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    return ok;
}

pid_t t_thread_find(pid_t pid, const char *name) {
    char dir[64];
    snprintf(dir, sizeof dir, pid > 0 ? "/proc/%d/task" : "/proc/self/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d) {
        return -1;
    }
    pid_t found = -1;
    for (struct dirent *e; found < 0 && (e = readdir(d));) {
        char comm[32];
        if (e->d_name[0] != '.' && read_task_file(pid, e->d_name, "comm", comm, sizeof comm)) {
            comm[strcspn(comm, "\n")] = '\0';
            found = strcmp(comm, name) == 0 ? (pid_t)atoi(e->d_name) : -1;
        }
    }
    closedir(d);
    return found;
}

char t_thread_state(pid_t pid, pid_t tid) {
    char id[16], stat[512];
    snprintf(id, sizeof id, "%d", (int)tid);
    if (!read_task_file(pid, id, "stat", stat, sizeof stat)) {
        return 0;
    }
    // "TID (comm) S ...": the name may hold spaces and parentheses, the state follows the last ')'.
    const char *p = strrchr(stat, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

int64_t t_thread_run_ns(pid_t pid, pid_t tid) {
    char id[16], line[128];
    snprintf(id, sizeof id, "%d", (int)tid);
    long long ns;
    if (!read_task_file(pid, id, "schedstat", line, sizeof line) ||
        sscanf(line, "%lld", &ns) != 1) {
        return -1;
    }
    return ns;
}
