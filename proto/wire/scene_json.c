/* SPDX-License-Identifier: MIT */
/* proto3 canonical JSON for contactd.v1 messages, driven by protobuf-c's descriptors so that one
 * reader and one writer cover every message and a field added to the .proto needs no code here.
 * The reader builds a generated message in an arena (a list of blocks freed at once) and reports
 * the first problem with its field path; scene files then go through cd_codec_scene_from_frame
 * and the caller's check (the daemon, contactctl and the tests pass cs_scene_validate).
 * Handles what proto3 generates for protobuf-c: singular and repeated fields and oneofs (the
 * protocol has no proto2 optional fields and no bytes). */
#include "wire/scene_json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contactd.pb-c.h"
#include "wire/codec.h"
#include "wire/pack.h"

// Arena: every block a parse allocates, freed together.
typedef struct block {
    struct block *next;
    max_align_t data[];
} block;

typedef struct parser {
    block *blocks;
    char path[256]; // field path of the value being read, e.g. "contacts[3].normal"
    size_t path_len;
    char *err;
    size_t errlen;
} parser;

static void *arena_alloc(parser *p, size_t n) {
    block *b = calloc(1, sizeof *b + n);
    if (!b) {
        return NULL;
    }
    b->next = p->blocks;
    p->blocks = b;
    return b->data;
}

static void arena_free(parser *p) {
    while (p->blocks) {
        block *next = p->blocks->next;
        free(p->blocks);
        p->blocks = next;
    }
}

// Appends ".name" (or "name" at the top) or "[i]" to the path; returns the length to restore.
static size_t path_field(parser *p, const char *name) {
    const size_t old = p->path_len;
    const int n = snprintf(p->path + old, sizeof p->path - old, "%s%.64s", old ? "." : "", name);
    p->path_len = n < 0 ? old : strnlen(p->path, sizeof p->path - 1);
    return old;
}

static size_t path_index(parser *p, size_t i) {
    const size_t old = p->path_len;
    snprintf(p->path + old, sizeof p->path - old, "[%zu]", i);
    p->path_len = strnlen(p->path, sizeof p->path - 1);
    return old;
}

static void path_pop(parser *p, size_t len) {
    p->path_len = len;
    p->path[len] = '\0';
}

static int perr(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Writes "<path>: <message>" and returns -EINVAL. Only the first error is kept: callers return
// straight away.
static int perr(parser *p, const char *fmt, ...) {
    if (!p->err || p->errlen == 0) {
        return -EINVAL;
    }
    int n = p->path_len ? snprintf(p->err, p->errlen, "%s: ", p->path) : 0;
    if (n < 0 || (size_t)n >= p->errlen) {
        return -EINVAL;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

// proto3 JSON names: the proto name with each "_x" turned into "X".
static bool json_name_is(const char *proto_name, const char *key) {
    bool upper = false;
    for (const char *s = proto_name; *s; s++) {
        if (*s == '_') {
            upper = true;
            continue;
        }
        const char c = upper && *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
        upper = false;
        if (*key++ != c) {
            return false;
        }
    }
    return *key == '\0';
}

static void json_name(const char *proto_name, char *out, size_t len) {
    size_t n = 0;
    bool upper = false;
    for (const char *s = proto_name; *s && n + 1 < len; s++) {
        if (*s == '_') {
            upper = true;
            continue;
        }
        out[n++] = upper && *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
        upper = false;
    }
    out[n] = '\0';
}

// Either spelling is accepted, as protobuf's own JSON parser does.
static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d,
                                                  const char *key) {
    for (unsigned i = 0; i < d->n_fields; i++) {
        if (strcmp(d->fields[i].name, key) == 0 || json_name_is(d->fields[i].name, key)) {
            return &d->fields[i];
        }
    }
    return NULL;
}

// A decimal integer given as a JSON string, the form proto3 JSON uses for 64-bit values.
static bool parse_int_string(const char *s, bool is_signed, int64_t *si, uint64_t *ui) {
    // strtoull would accept a sign or blanks and wrap "-1" around; only digits (and one leading
    // minus for signed fields) are integers here.
    const char *digits = is_signed && s[0] == '-' ? s + 1 : s;
    if (*digits < '0' || *digits > '9') {
        return false;
    }
    char *end;
    errno = 0;
    if (is_signed) {
        *si = strtoll(s, &end, 10);
    } else {
        *ui = strtoull(s, &end, 10);
    }
    return errno == 0 && *end == '\0';
}

static int get_u64(parser *p, const cJSON *v, uint64_t max, uint64_t *ret) {
    uint64_t u = 0;
    if (cJSON_IsNumber(v)) {
        const double d = v->valuedouble;
        if (!(d >= 0.0 && d < 0x1p64)) {
            return perr(p, "%g is out of range", d);
        }
        u = (uint64_t)d;
        if ((double)u != d) {
            return perr(p, "expected an integer, got %g", d);
        }
    } else if (!cJSON_IsString(v) || !parse_int_string(v->valuestring, false, NULL, &u)) {
        return perr(p, "expected a non-negative integer (number or decimal string)");
    }
    if (u > max) {
        return perr(p, "%" PRIu64 " is out of range (max %" PRIu64 ")", u, max);
    }
    *ret = u;
    return 0;
}

static int get_i64(parser *p, const cJSON *v, int64_t min, int64_t max, int64_t *ret) {
    int64_t i = 0;
    if (cJSON_IsNumber(v)) {
        const double d = v->valuedouble;
        if (!(d >= -0x1p63 && d < 0x1p63)) {
            return perr(p, "%g is out of range", d);
        }
        i = (int64_t)d;
        if ((double)i != d) {
            return perr(p, "expected an integer, got %g", d);
        }
    } else if (!cJSON_IsString(v) || !parse_int_string(v->valuestring, true, &i, NULL)) {
        return perr(p, "expected an integer (number or decimal string)");
    }
    if (i < min || i > max) {
        return perr(p, "%" PRId64 " is out of range [%" PRId64 ", %" PRId64 "]", i, min, max);
    }
    *ret = i;
    return 0;
}

static int get_double(parser *p, const cJSON *v, double *ret) {
    if (cJSON_IsNumber(v)) {
        *ret = v->valuedouble;
        return 0;
    }
    // proto3 JSON spells non-finite values as strings and also accepts numbers in quotes. They
    // are read faithfully here; validation then names the field if the value is not allowed.
    if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        if (strcmp(s, "NaN") == 0) {
            *ret = NAN;
            return 0;
        }
        if (strcmp(s, "Infinity") == 0 || strcmp(s, "-Infinity") == 0) {
            *ret = s[0] == '-' ? -INFINITY : INFINITY;
            return 0;
        }
        char *end;
        const double d = strtod(s, &end);
        if (s[0] != '\0' && s[0] != ' ' && *end == '\0') {
            *ret = d;
            return 0;
        }
    }
    return perr(p, "expected a number");
}

static int get_enum(parser *p, const ProtobufCEnumDescriptor *ed, const cJSON *v, int32_t *ret) {
    if (cJSON_IsString(v)) {
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value_by_name(ed, v->valuestring);
        if (!ev) {
            char names[256];
            size_t used = 0;
            names[0] = '\0';
            for (unsigned i = 0; i < ed->n_values && used < sizeof names; i++) {
                const int n = snprintf(names + used, sizeof names - used, "%s%s",
                                       i ? ", " : "", ed->values[i].name);
                used = n < 0 ? sizeof names : used + (size_t)n;
            }
            return perr(p, "unknown value '%.64s' (expected one of %s)", v->valuestring, names);
        }
        *ret = ev->value;
        return 0;
    }
    // proto3 enums are open: a number outside the known values is kept as is.
    int64_t i;
    const int r = get_i64(p, v, INT32_MIN, INT32_MAX, &i);
    if (r == 0) {
        *ret = (int32_t)i;
    }
    return r;
}

static int parse_message(parser *p, const ProtobufCMessageDescriptor *d, const cJSON *obj,
                         ProtobufCMessage **ret);

// Reads one value of field f into dst (the field's storage, or one element of a repeated field).
static int parse_value(parser *p, const ProtobufCFieldDescriptor *f, const cJSON *v, void *dst) {
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0.0;
    int r;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        r = get_i64(p, v, INT32_MIN, INT32_MAX, &i);
        *(int32_t *)dst = (int32_t)i;
        return r;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        r = get_i64(p, v, INT64_MIN, INT64_MAX, &i);
        *(int64_t *)dst = i;
        return r;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        r = get_u64(p, v, UINT32_MAX, &u);
        *(uint32_t *)dst = (uint32_t)u;
        return r;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        r = get_u64(p, v, UINT64_MAX, &u);
        *(uint64_t *)dst = u;
        return r;
    case PROTOBUF_C_TYPE_FLOAT:
        r = get_double(p, v, &d);
        *(float *)dst = (float)d;
        return r;
    case PROTOBUF_C_TYPE_DOUBLE:
        r = get_double(p, v, &d);
        *(double *)dst = d;
        return r;
    case PROTOBUF_C_TYPE_BOOL:
        if (!cJSON_IsBool(v)) {
            return perr(p, "expected true or false");
        }
        *(protobuf_c_boolean *)dst = cJSON_IsTrue(v);
        return 0;
    case PROTOBUF_C_TYPE_ENUM:
        return get_enum(p, f->descriptor, v, (int32_t *)dst);
    case PROTOBUF_C_TYPE_STRING: {
        if (!cJSON_IsString(v)) {
            return perr(p, "expected a string");
        }
        const size_t n = strlen(v->valuestring);
        char *s = arena_alloc(p, n + 1);
        if (!s) {
            return -ENOMEM;
        }
        memcpy(s, v->valuestring, n + 1);
        *(char **)dst = s;
        return 0;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        return parse_message(p, f->descriptor, v, (ProtobufCMessage **)dst);
    default:
        return perr(p, "bytes fields are not supported");
    }
}

static int parse_field(parser *p, const ProtobufCFieldDescriptor *f, const cJSON *v, char *base) {
    if (f->label != PROTOBUF_C_LABEL_REPEATED) {
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t *which = (uint32_t *)(base + f->quantifier_offset);
            if (*which != 0 && *which != f->id) {
                return perr(p, "more than one field of the same oneof is set");
            }
            *which = f->id;
        }
        return parse_value(p, f, v, base + f->offset);
    }
    if (!cJSON_IsArray(v)) {
        return perr(p, "expected an array");
    }
    const size_t n = (size_t)cJSON_GetArraySize(v);
    const size_t size = cd_pb_element_size(f->type);
    char *elems = arena_alloc(p, n * size);
    if (!elems) {
        return -ENOMEM;
    }
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        const size_t mark = path_index(p, i);
        const int r = parse_value(p, f, e, elems + i * size);
        if (r < 0) {
            return r;
        }
        path_pop(p, mark);
    }
    *(size_t *)(base + f->quantifier_offset) = n;
    *(void **)(base + f->offset) = elems;
    return 0;
}

static int parse_message(parser *p, const ProtobufCMessageDescriptor *d, const cJSON *obj,
                         ProtobufCMessage **ret) {
    if (!cJSON_IsObject(obj)) {
        return perr(p, "expected an object");
    }
    ProtobufCMessage *msg = arena_alloc(p, d->sizeof_message);
    if (!msg) {
        return -ENOMEM;
    }
    d->message_init(msg);
    uint64_t seen = 0; // fields already given, to refuse "bodyA" next to "body_a"
    for (const cJSON *item = obj->child; item; item = item->next) {
        const ProtobufCFieldDescriptor *f = find_field(d, item->string);
        const size_t mark = path_field(p, f ? f->name : item->string);
        if (!f) {
            return perr(p, "unknown field");
        }
        const unsigned idx = (unsigned)(f - d->fields);
        if (idx < 64 && (seen & (UINT64_C(1) << idx))) {
            return perr(p, "given twice");
        }
        seen |= idx < 64 ? UINT64_C(1) << idx : 0;
        // JSON null means "the default", which message_init already wrote.
        if (!cJSON_IsNull(item)) {
            const int r = parse_field(p, f, item, (char *)msg);
            if (r < 0) {
                return r;
            }
        }
        path_pop(p, mark);
    }
    *ret = msg;
    return 0;
}

// "line L, column C" of position pos in text, for syntax errors.
static void position_of(const char *text, const char *pos, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (const char *s = text; s < pos && *s; s++) {
        if (*s == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int cd_scene_json_parse(const char *text, cd_scene_check *check, cs_scene *ret, char *err,
                        size_t errlen) {
    parser p = {.err = err, .errlen = errlen};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, true);
    if (!root) {
        int line, col;
        position_of(text, end ? end : text, &line, &col);
        return perr(&p, "invalid JSON at line %d, column %d", line, col);
    }
    ProtobufCMessage *msg = NULL;
    int r = parse_message(&p, &contactd__v1__frame__descriptor, root, &msg);
    cJSON_Delete(root);
    if (r < 0) {
        arena_free(&p);
        return r;
    }
    const Contactd__V1__Frame *frame = (const Contactd__V1__Frame *)msg;
    // The file defines its own sizes; only the friction pyramid has a fixed ceiling.
    const cs_limits lim = {
        .max_bodies = frame->n_bodies > INT32_MAX ? INT32_MAX : (int)frame->n_bodies,
        .max_contacts = frame->n_contacts > INT32_MAX ? INT32_MAX : (int)frame->n_contacts,
        .max_joints = frame->n_joints > INT32_MAX ? INT32_MAX : (int)frame->n_joints,
        .max_dirs = CD_SCENE_JSON_MAX_DIRS,
    };
    cs_scene s = {
        .bodies = calloc(frame->n_bodies ? frame->n_bodies : 1, sizeof(cs_body)),
        .contacts = calloc(frame->n_contacts ? frame->n_contacts : 1, sizeof(cs_contact)),
        .joints = calloc(frame->n_joints ? frame->n_joints : 1, sizeof(cs_joint)),
    };
    if (!s.bodies || !s.contacts || !s.joints) {
        r = -ENOMEM;
    } else if (cd_codec_scene_from_frame(frame, &lim, CS_SOLVER_DEFAULT, &s, err, errlen) < 0 ||
               (check && check(&s, &lim, err, errlen) != 0)) {
        r = -EINVAL;
    }
    arena_free(&p);
    if (r < 0) {
        cd_scene_json_free(&s);
        return r;
    }
    *ret = s;
    return 0;
}

static int read_file(const char *path, char **ret) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        return -errno;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int r = buf ? 0 : -ENOMEM;
    while (r == 0) {
        if (cap - len < 2) {
            char *bigger = realloc(buf, 2 * cap);
            if (!bigger) {
                r = -ENOMEM;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        errno = 0;
        const size_t n = fread(buf + len, 1, cap - len - 1, fp);
        len += n;
        if (n == 0) {
            // read(2)'s reason, such as EISDIR for a directory, which fopen opens.
            r = !ferror(fp) ? 1 : errno ? -errno : -EIO;
        }
    }
    fclose(fp);
    if (r < 0) {
        free(buf);
        return r;
    }
    buf[len] = '\0';
    *ret = buf;
    return 0;
}

int cd_scene_json_load(const char *path, cd_scene_check *check, cs_scene *ret, char *err,
                       size_t errlen) {
    char *text = NULL;
    int r = read_file(path, &text);
    if (r < 0) {
        if (err && errlen) {
            snprintf(err, errlen, "%s: %s", path, strerror(-r));
        }
        return r;
    }
    char msg[1024] = "";
    r = cd_scene_json_parse(text, check, ret, msg, sizeof msg);
    free(text);
    if (r < 0 && err && errlen) {
        snprintf(err, errlen, "%s: %s", path, msg);
    }
    return r;
}

void cd_scene_json_free(cs_scene *s) {
    free(s->bodies);
    free(s->contacts);
    free(s->joints);
    s->bodies = NULL;
    s->contacts = NULL;
    s->joints = NULL;
    s->nb = s->nc = s->nj = 0;
}

static cJSON *message_json(const ProtobufCMessage *m);

static cJSON *int64_json(int64_t v) {
    char b[24];
    snprintf(b, sizeof b, "%" PRId64, v);
    return cJSON_CreateString(b);
}

static cJSON *uint64_json(uint64_t v) {
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return cJSON_CreateString(b);
}

static cJSON *double_json(double d) {
    if (isfinite(d)) {
        return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
}

// One value of field f stored at p.
static cJSON *value_json(const ProtobufCFieldDescriptor *f, const void *p) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        return cJSON_CreateNumber(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return cJSON_CreateNumber(*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        return int64_json(*(const int64_t *)p);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return uint64_json(*(const uint64_t *)p);
    case PROTOBUF_C_TYPE_FLOAT:
        return double_json(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE:
        return double_json(*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL:
        return cJSON_CreateBool(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: {
        const int32_t v = *(const int32_t *)p;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
        return ev ? cJSON_CreateString(ev->name) : cJSON_CreateNumber(v);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return cJSON_CreateString(s ? s : "");
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        return message_json(*(ProtobufCMessage *const *)p);
    default:
        return NULL; // bytes: see the header
    }
}

static cJSON *message_json(const ProtobufCMessage *m) {
    cJSON *obj = cJSON_CreateObject();
    if (!obj) {
        return NULL;
    }
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        cJSON *v;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            const size_t n = *(const size_t *)(base + f->quantifier_offset);
            const char *elems = *(char *const *)(base + f->offset);
            v = cJSON_CreateArray();
            for (size_t k = 0; v && k < n; k++) {
                cJSON *e = value_json(f, elems + k * cd_pb_element_size(f->type));
                if (!e || !cJSON_AddItemToArray(v, e)) {
                    cJSON_Delete(e);
                    cJSON_Delete(v);
                    v = NULL;
                }
            }
        } else {
            if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                *(const uint32_t *)(base + f->quantifier_offset) != f->id) {
                continue;
            }
            if (f->type == PROTOBUF_C_TYPE_MESSAGE && !*(void *const *)(base + f->offset)) {
                continue; // absent sub-message
            }
            v = value_json(f, base + f->offset);
        }
        char key[64];
        json_name(f->name, key, sizeof key);
        if (!v || !cJSON_AddItemToObject(obj, key, v)) {
            cJSON_Delete(v);
            cJSON_Delete(obj);
            return NULL;
        }
    }
    return obj;
}

char *cd_scene_json_write(const ProtobufCMessage *msg, bool pretty) {
    cJSON *root = message_json(msg);
    if (!root) {
        return NULL;
    }
    char *s = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}
