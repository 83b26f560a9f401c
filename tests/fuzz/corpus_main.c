/* SPDX-License-Identifier: MIT */
/* Runs a fuzz target over seed inputs without libFuzzer: every regular file named on the command
 * line, or found directly inside a directory named there, once. A crash or a sanitizer report
 * fails the run, as it would fail the fuzzer. Prints how many inputs ran (TAP: one test). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = b;
        }
        const size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            break;
        }
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    int inputs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) < 0) {
                return 1;
            }
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        const struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (run_file(path) < 0) {
                    closedir(d);
                    return 1;
                }
                inputs++;
            }
        }
        if (d) {
            closedir(d);
        }
    }
    // Inputs that crash never get here; a run over no input at all tests nothing.
    printf("1..1\n%s 1 - %d inputs ran\n", inputs > 0 ? "ok" : "not ok", inputs);
    return inputs > 0 ? 0 : 1;
}
