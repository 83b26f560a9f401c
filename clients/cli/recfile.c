/* SPDX-License-Identifier: MIT */
/* Delimited message files (see recfile.h). */
#include "recfile.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int recfile_open(recfile *f, const char *path, char *err, size_t errlen) {
    *f = (recfile){0};
    FILE *in = fopen(path, "rb");
    if (!in) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    size_t n = 0, got;
    errno = 0;
    while (buf && (got = fread(buf + n, 1, cap - n, in)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *more = realloc(buf, cap * 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    // read(2)'s reason, such as EISDIR for a directory, which fopen opens.
    const int e = !buf ? ENOMEM : !ferror(in) ? 0 : errno ? errno : EIO;
    fclose(in);
    if (e) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
        free(buf);
        return -1;
    }
    f->data = buf;
    f->len = n;
    return 0;
}

void recfile_close(recfile *f) {
    free(f->data);
    *f = (recfile){0};
}

// A varint at p (at most end - p bytes) into *ret; returns its length, 0 when malformed (more
// than 10 bytes), or -1 when the bytes end inside it.
static ptrdiff_t varint(const uint8_t *p, const uint8_t *end, uint64_t *ret) {
    uint64_t v = 0;
    for (ptrdiff_t i = 0; i < 10; i++) {
        if (p + i == end) {
            return -1;
        }
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *ret = v;
            return i + 1;
        }
    }
    return 0;
}

int recfile_next(recfile *f, const char *path, const uint8_t **ret, size_t *ret_len, char *err,
                 size_t errlen) {
    if (f->off == f->len) {
        return 0;
    }
    uint64_t len = 0;
    const uint8_t *p = f->data + f->off, *end = f->data + f->len;
    const ptrdiff_t n = varint(p, end, &len);
    if (n == 0) {
        snprintf(err, errlen, "%s: message %zu (byte %zu): bad length prefix", path,
                 f->index + 1, f->off);
        return -1;
    }
    if (n < 0 || len > (uint64_t)(end - p - n)) {
        snprintf(err, errlen, "%s: message %zu (byte %zu): the file ends inside it (truncated)",
                 path, f->index + 1, f->off);
        return -2;
    }
    *ret = p + n;
    *ret_len = (size_t)len;
    f->off += n + (size_t)len;
    f->index++;
    return 1;
}

bool recfile_is_recording(const recfile *f) {
    uint64_t len;
    const uint8_t *end = f->data + f->len;
    const ptrdiff_t n = varint(f->data, end, &len);
    // RecordEntry.header is field 1, length-delimited: tag 0x0a.
    return n > 0 && (size_t)n < f->len && f->data[n] == 0x0a;
}
