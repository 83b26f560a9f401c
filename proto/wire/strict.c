/* SPDX-License-Identifier: MIT */
/* What protobuf-c would unpack otherwise than sent (strict.h): the message's bytes are walked with
 * its descriptor, into every message field, and the path to the field is kept as the walk goes. */
#include "wire/strict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

// The next field: its number, its wire type and, when length-delimited, its bytes (*value);
// false at the end or at anything malformed, a group included (protobuf-c refuses those).
static bool next_field(cd_reader *r, uint64_t *number, unsigned *wt, cd_reader *value) {
    uint64_t tag, skipped;
    if (r->p >= r->end || !rd_varint(r, &tag)) {
        return false;
    }
    *number = tag >> 3;
    *wt = (unsigned)(tag & 7);
    switch (*wt) {
    case WT_VARINT:
        return rd_varint(r, &skipped);
    case WT_FIXED64:
    case 5: { // fixed32
        const ptrdiff_t n = *wt == WT_FIXED64 ? 8 : 4;
        if (r->end - r->p < n) {
            return false;
        }
        r->p += n;
        return true;
    }
    case WT_LEN:
        return rd_len(r, value);
    default:
        return false;
    }
}

static cd_strict search(const ProtobufCMessageDescriptor *d, cd_reader r, char *path,
                        size_t pathlen, size_t at, int depth) {
    uint32_t seen = 0;                 /* singular message fields met, by index in d->fields */
    uint32_t count[MAX_FIELDS] = {0}; /* values of repeated ones met so far */
    uint64_t number;
    unsigned wt;
    cd_reader value;
    while (next_field(&r, &number, &wt, &value)) {
        const ProtobufCFieldDescriptor *f =
            wt == WT_LEN && number <= UINT32_MAX
                ? protobuf_c_message_descriptor_get_field(d, (unsigned)number)
                : NULL;
        const bool message = f && f->type == PROTOBUF_C_TYPE_MESSAGE;
        if (!f || !(message || f->type == PROTOBUF_C_TYPE_STRING) ||
            f - d->fields >= MAX_FIELDS) {
            continue;
        }
        const unsigned i = (unsigned)(f - d->fields);
        const char *dot = at > 0 ? "." : "";
        size_t next;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            next = path_put(path, pathlen, at, "%s%s[%u]", dot, f->name, count[i]++);
        } else {
            next = path_put(path, pathlen, at, "%s%s", dot, f->name);
            if (message && seen >> i & 1) {
                return CD_STRICT_TWICE;
            }
            seen |= 1u << i;
        }
        if (!message) {
            if (memchr(value.p, 0, (size_t)(value.end - value.p))) {
                return CD_STRICT_NUL;
            }
            continue;
        }
        const cd_strict k =
            depth < MAX_DEPTH ? search(f->descriptor, value, path, pathlen, next, depth + 1)
                              : CD_STRICT_OK;
        if (k != CD_STRICT_OK) {
            return k;
        }
    }
    return CD_STRICT_OK;
}

cd_strict cd_strict_check(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                          char *path, size_t pathlen) {
    if (pathlen > 0) {
        path[0] = '\0';
    }
    return search(d, (cd_reader){data, data + len}, path, pathlen, 0, 0);
}

const char *cd_strict_reason(cd_strict k) {
    switch (k) {
    case CD_STRICT_TWICE:
        return "given twice in one message; message fields are not merged, send it once";
    case CD_STRICT_NUL:
        return "holds a NUL byte; a string is plain text";
    default:
        return "as sent";
    }
}
