/* SPDX-License-Identifier: MIT */
/* Singular message fields given twice (singular.h): the message's bytes are walked with its
 * descriptor, into every message field, and the path to the field is kept as the walk goes. */
#include "wire/singular.h"

#include <stdarg.h>
#include <stdio.h>

#include "wire/reader.h"

// contactd.proto nests four deep (ClientMessage, Frame, Body, Vec3) and has no message with more
// than 32 fields; bytes deeper than this, or a field indexed beyond, are not looked into.
enum { MAX_DEPTH = 8, MAX_FIELDS = 32 };

// Writes the next path component at path[at] (cut at pathlen); returns where the next one goes.
static size_t path_put(char *path, size_t pathlen, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t path_put(char *path, size_t pathlen, size_t at, const char *fmt, ...) {
    if (at + 1 >= pathlen) {
        return at;
    }
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(path + at, pathlen - at, fmt, ap);
    va_end(ap);
    const size_t room = pathlen - at - 1;
    return at + (n < 0 ? 0 : (size_t)n < room ? (size_t)n : room);
}

static bool search(const ProtobufCMessageDescriptor *d, cd_reader r, char *path, size_t pathlen,
                   size_t at, int depth) {
    uint32_t seen = 0;                 /* singular message fields met, by index in d->fields */
    uint32_t count[MAX_FIELDS] = {0}; /* elements of repeated ones met so far */
    while (r.p < r.end) {
        uint64_t tag, skipped;
        cd_reader inner;
        switch (rd_varint(&r, &tag) ? tag & 7 : 7) {
        case WT_VARINT:
            if (!rd_varint(&r, &skipped)) {
                return false;
            }
            continue;
        case WT_FIXED64:
        case 5: // fixed32
        {
            const ptrdiff_t n = (tag & 7) == WT_FIXED64 ? 8 : 4;
            if (r.end - r.p < n) {
                return false;
            }
            r.p += n;
            continue;
        }
        case WT_LEN:
            if (!rd_len(&r, &inner)) {
                return false;
            }
            break;
        default: // a group, or not a tag: protobuf-c refuses those
            return false;
        }
        const uint64_t number = tag >> 3;
        const ProtobufCFieldDescriptor *f =
            number <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)number)
                                 : NULL;
        if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || f - d->fields >= MAX_FIELDS) {
            continue;
        }
        const unsigned i = (unsigned)(f - d->fields);
        const char *dot = at > 0 ? "." : "";
        size_t next;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            next = path_put(path, pathlen, at, "%s%s[%u]", dot, f->name, count[i]++);
        } else {
            next = path_put(path, pathlen, at, "%s%s", dot, f->name);
            if (seen >> i & 1) {
                return true;
            }
            seen |= 1u << i;
        }
        if (depth < MAX_DEPTH && search(f->descriptor, inner, path, pathlen, next, depth + 1)) {
            return true;
        }
    }
    return false;
}

bool cd_singular_repeated(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                          char *path, size_t pathlen) {
    if (pathlen > 0) {
        path[0] = '\0';
    }
    return search(d, (cd_reader){data, data + len}, path, pathlen, 0, 0);
}
