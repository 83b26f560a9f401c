/* SPDX-License-Identifier: MIT */
/* contactctl convert (see convert.h). Frames travel as contactd.v1.Frame messages: JSON scene
 * files are parsed with the daemon's own reader (JSON -> Frame -> cs_scene, validated) and
 * rebuilt with cd_codec_frame_build, so what is written is what the daemon would take. The FCLIB
 * form of a frame is its velocity-level step, M v = H r + f, u = H^T v + w with v the bodies'
 * velocities after the step (6 per body: linear, angular, world), M their mass matrix, H = J^T
 * (cs_model_jt of unit impulses: column 3i + k is contact i's normal, t1, t2 direction),
 * f = M v* (v* the free velocity: gravity and applied forces over dt) and w_n = -bias (cs_model:
 * gap / dt for a gap, which the normal velocity may close; -penetration_recovery depth / dt for a
 * penetration, which it must open by that much), w_t = 0. */
#include "convert.h"

#include <errno.h>
#include <fclib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "contactd.pb-c.h"
#include "ctl.h"
#include "io/ingest.h"
#include "recfile.h"
#include "solver/contact.h"
#include "solver/model.h"
#include "wire/codec.h"
#include "wire/scene_json.h"

enum form { F_JSON, F_FRAMES, F_FCLIB };

static bool ends_with(const char *s, const char *tail) {
    const size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static enum form form_of(const char *path) {
    if (ends_with(path, ".json")) {
        return F_JSON;
    }
    return ends_with(path, ".hdf5") || ends_with(path, ".h5") ? F_FCLIB : F_FRAMES;
}

// The input's frames, each a decoded Frame (free with contactd__v1__frame__free_unpacked).
typedef struct frames {
    Contactd__V1__Frame **f;
    size_t n, cap;
} frames;

static int frames_add(frames *fs, Contactd__V1__Frame *f) {
    if (fs->n == fs->cap) {
        const size_t cap = fs->cap ? 2 * fs->cap : 8;
        Contactd__V1__Frame **p = realloc(fs->f, cap * sizeof *p);
        if (!p) {
            return -ENOMEM;
        }
        fs->f = p;
        fs->cap = cap;
    }
    fs->f[fs->n++] = f;
    return 0;
}

static void frames_free(frames *fs) {
    for (size_t i = 0; i < fs->n; i++) {
        contactd__v1__frame__free_unpacked(fs->f[i], NULL);
    }
    free(fs->f);
}

// A cs_scene as a Frame message of its own (packed and unpacked: no pointers into s).
static Contactd__V1__Frame *frame_of_scene(const cs_scene *s) {
    const cs_limits lim = {.max_bodies = s->nb, .max_contacts = s->nc, .max_joints = s->nj};
    cd_frame_msg m;
    if (cd_codec_frame_msg_init(&m, &lim) < 0) {
        return NULL;
    }
    Contactd__V1__Frame *out = NULL;
    const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&m, s);
    if (env) {
        const size_t n = protobuf_c_message_get_packed_size(&env->frame->base);
        uint8_t *buf = malloc(n ? n : 1);
        if (buf) {
            out = contactd__v1__frame__unpack(NULL, protobuf_c_message_pack(&env->frame->base,
                                                                            buf), buf);
        }
        free(buf);
    }
    cd_codec_frame_msg_fini(&m);
    return out;
}

// One scene JSON text (an object) into fs. Returns 0, or -1 after saying why.
static int read_json_scene(const char *path, const char *text, frames *fs) {
    char err[1024];
    cs_scene s;
    if (cd_scene_json_parse(text, cs_scene_validate, &s, err, sizeof err) < 0) {
        fprintf(stderr, "contactctl: %s: %s\n", path, err);
        return -1;
    }
    Contactd__V1__Frame *f = frame_of_scene(&s);
    cd_scene_json_free(&s);
    if (!f || frames_add(fs, f) < 0) {
        if (f) {
            contactd__v1__frame__free_unpacked(f, NULL);
        }
        fprintf(stderr, "contactctl: out of memory\n");
        return -1;
    }
    return 0;
}

// A scene file: one Frame object, or an array of them.
static int read_json(const char *path, const recfile *file, frames *fs) {
    char *text = malloc(file->len + 1);
    if (!text) {
        fprintf(stderr, "contactctl: out of memory\n");
        return -1;
    }
    memcpy(text, file->data, file->len);
    text[file->len] = '\0';
    int r = 0;
    cJSON *arr = NULL;
    const char *p = text + strspn(text, " \t\r\n");
    if (*p == '[' && (arr = cJSON_Parse(text)) != NULL) {
        const cJSON *item;
        cJSON_ArrayForEach(item, arr) {
            char *one = cJSON_PrintUnformatted(item);
            r = one ? read_json_scene(path, one, fs) : -1;
            free(one);
            if (r < 0) {
                break;
            }
        }
        cJSON_Delete(arr);
    } else {
        r = read_json_scene(path, text, fs);
    }
    free(text);
    return r;
}

// A recording's Frames, or a file of delimited Frames.
static int read_binary(const char *path, recfile *file, frames *fs) {
    const bool recording = recfile_is_recording(file);
    char err[512];
    const uint8_t *msg;
    size_t len;
    int r;
    while ((r = recfile_next(file, path, &msg, &len, err, sizeof err)) == 1) {
        Contactd__V1__Frame *f = NULL;
        if (recording) {
            Contactd__V1__RecordEntry *e = contactd__v1__record_entry__unpack(NULL, len, msg);
            if (!e) {
                snprintf(err, sizeof err, "%s: message %zu is not a RecordEntry", path,
                         file->index);
                r = -1;
                break;
            }
            if (e->entry_case == CONTACTD__V1__RECORD_ENTRY__ENTRY_CLIENT &&
                e->client->msg_case == CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME) {
                f = e->client->frame;
                e->client->frame = NULL; // kept; the entry goes
                e->client->msg_case = CONTACTD__V1__CLIENT_MESSAGE__MSG__NOT_SET;
            }
            contactd__v1__record_entry__free_unpacked(e, NULL);
            if (!f) {
                continue;
            }
        } else if (!(f = contactd__v1__frame__unpack(NULL, len, msg))) {
            snprintf(err, sizeof err, "%s: message %zu is not a contactd.v1.Frame", path,
                     file->index);
            r = -1;
            break;
        }
        if (frames_add(fs, f) < 0) {
            contactd__v1__frame__free_unpacked(f, NULL);
            snprintf(err, sizeof err, "out of memory");
            r = -1;
            break;
        }
    }
    if (r < 0) {
        fprintf(stderr, "contactctl: %s\n", err);
        return -1;
    }
    if (fs->n == 0) {
        fprintf(stderr, "contactctl: %s: no frames\n", path);
        return -1;
    }
    return 0;
}

static int write_json(FILE *out, const frames *fs) {
    if (fs->n > 1 && fputs("[\n", out) < 0) {
        return -1;
    }
    for (size_t i = 0; i < fs->n; i++) {
        char *s = cd_scene_json_write(&fs->f[i]->base, true);
        if (!s || fprintf(out, "%s%s\n", s, fs->n > 1 && i + 1 < fs->n ? "," : "") < 0) {
            free(s);
            return -1;
        }
        free(s);
    }
    return fs->n > 1 && fputs("]\n", out) < 0 ? -1 : 0;
}

static int write_frames(FILE *out, const frames *fs) {
    for (size_t i = 0; i < fs->n; i++) {
        const size_t n = cd_codec_packed_size(&fs->f[i]->base);
        uint8_t *buf = malloc(n);
        size_t len;
        const bool ok = buf && cd_codec_pack(&fs->f[i]->base, buf, n, &len) == 0 &&
                        fwrite(buf, 1, len, out) == len;
        free(buf);
        if (!ok) {
            return -1;
        }
    }
    return 0;
}

// A compressed-column fclib_matrix of a dense column-major A [m x n], exact zeros left out.
static struct fclib_matrix *csc_of(const double *A, int m, int n) {
    struct fclib_matrix *M = calloc(1, sizeof *M);
    int nz = 0;
    for (int k = 0; k < m * n; k++) {
        nz += A[k] != 0.0;
    }
    if (!M || !(M->p = malloc((size_t)(n + 1) * sizeof(int))) ||
        !(M->i = malloc((size_t)(nz ? nz : 1) * sizeof(int))) ||
        !(M->x = malloc((size_t)(nz ? nz : 1) * sizeof(double)))) {
        if (M) {
            free(M->p);
            free(M->i);
        }
        free(M);
        return NULL;
    }
    M->m = m;
    M->n = n;
    M->nzmax = nz;
    M->nz = -1;
    int k = 0;
    for (int c = 0; c < n; c++) {
        M->p[c] = k;
        for (int r = 0; r < m; r++) {
            if (A[(size_t)c * (size_t)m + (size_t)r] != 0.0) {
                M->i[k] = r;
                M->x[k++] = A[(size_t)c * (size_t)m + (size_t)r];
            }
        }
    }
    M->p[n] = k;
    return M;
}

static void csc_free(struct fclib_matrix *M) {
    if (M) {
        free(M->p);
        free(M->i);
        free(M->x);
        free(M);
    }
}

// The step of frame f as an FCLIB global problem in the new file path (see the file comment).
static int write_fclib(const char *path, const Contactd__V1__Frame *f) {
    const cs_limits lim = {.max_bodies = (int)f->n_bodies, .max_contacts = (int)f->n_contacts,
                           .max_joints = (int)f->n_joints,
                           .max_dirs = CD_SCENE_JSON_MAX_DIRS};
    cs_scene s = {0};
    char err[512];
    s.bodies = calloc(f->n_bodies + 1, sizeof(cs_body));
    s.contacts = calloc(f->n_contacts + 1, sizeof(cs_contact));
    s.joints = calloc(f->n_joints + 1, sizeof(cs_joint));
    cs_workspace *ws = cs_workspace_new(&lim);
    int rc = -1;
    double *Md = NULL, *Hd = NULL, *vec = NULL;
    struct fclib_matrix *M = NULL, *H = NULL;
    if (!s.bodies || !s.contacts || !s.joints || !ws) {
        fprintf(stderr, "contactctl: out of memory\n");
        goto out;
    }
    if (cd_ingest_frame(f, &lim, CS_SOLVER_SAP, &s, err, sizeof err) != 0) {
        fprintf(stderr, "contactctl: frame: %s\n", err);
        goto out;
    }
    if (s.nj > 0 || s.nc == 0) {
        fprintf(stderr, "contactctl: FCLIB: %s\n",
                s.nj ? "a frame with joints has no FCLIB global form here (no equality rows)"
                     : "a frame without contacts is no FCLIB problem");
        goto out;
    }
    for (int b = 0; b < s.nb; b++) {
        if (s.bodies[b].kinematic) {
            fprintf(stderr, "contactctl: FCLIB: bodies[%d] is kinematic: M would be singular\n",
                    b);
            goto out;
        }
    }
    cs_model m;
    if (cs_model_build(&m, ws, &s) != CS_CONVERGED) {
        fprintf(stderr, "contactctl: FCLIB: the contact model does not fit its workspace\n");
        goto out;
    }
    const int nv = 6 * s.nb, nr = 3 * s.nc;
    Md = calloc((size_t)nv * (size_t)nv, sizeof(double));
    Hd = calloc((size_t)nv * (size_t)nr, sizeof(double));
    vec = calloc((size_t)(nr + nv + nr + s.nc + 1), sizeof(double));
    if (!Md || !Hd || !vec) {
        fprintf(stderr, "contactctl: out of memory\n");
        goto out;
    }
    double *lambda = vec, *fv = vec + nr, *w = fv + nv, *mu = w + nr;
    for (int b = 0; b < s.nb; b++) {
        double *blk = Md + (size_t)(6 * b) * (size_t)nv + (size_t)(6 * b);
        for (int k = 0; k < 3; k++) {
            blk[(size_t)k * (size_t)nv + (size_t)k] = m.mass[b];
            for (int l = 0; l < 3; l++) {
                // Column-major; iw is row-major and symmetric either way.
                blk[(size_t)(3 + l) * (size_t)nv + (size_t)(3 + k)] = m.iw[9 * b + 3 * k + l];
            }
        }
    }
    for (int c = 0; c < nr; c++) {
        lambda[c] = 1.0;
        cs_model_jt(&m, lambda, Hd + (size_t)c * (size_t)nv);
        lambda[c] = 0.0;
    }
    cs_model_mul(&m, m.vstar, fv);
    for (int i = 0; i < s.nc; i++) {
        w[3 * i] = -m.bias[i];
        mu[i] = m.mu[i];
    }
    M = csc_of(Md, nv, nv);
    H = csc_of(Hd, nv, nr);
    if (!M || !H) {
        fprintf(stderr, "contactctl: out of memory\n");
        goto out;
    }
    struct fclib_info info = {.title = "contactd frame", .description =
                              "one step of a contactd frame (contactctl convert)",
                              .math_info = "M v = H r + f, u = H^T v + w"};
    struct fclib_global g = {.M = M, .H = H, .mu = mu, .f = fv, .w = w, .spacedim = 3,
                             .info = &info};
    if (!fclib_write_global(&g, path)) {
        fprintf(stderr, "contactctl: %s: libfclib could not write it\n", path);
        goto out;
    }
    rc = 0;
out:
    csc_free(M);
    csc_free(H);
    free(Md);
    free(Hd);
    free(vec);
    cs_workspace_free(ws);
    free(s.bodies);
    free(s.contacts);
    free(s.joints);
    return rc;
}

int convert_run(const char *in, const char *out, const char *to) {
    enum form want;
    if (!to) {
        want = form_of(out);
    } else if (strcmp(to, "json") == 0 || strcmp(to, "frames") == 0 || strcmp(to, "fclib") == 0) {
        want = to[0] == 'j' ? F_JSON : to[1] == 'r' ? F_FRAMES : F_FCLIB;
    } else {
        fprintf(stderr, "contactctl: --to: expected json, frames or fclib, got '%s'\n", to);
        return CTL_EXIT_USAGE;
    }
    struct stat st;
    if (stat(out, &st) == 0) {
        fprintf(stderr, "contactctl: convert: %s exists; it is not overwritten\n", out);
        return CTL_EXIT_USAGE;
    }
    if (form_of(in) == F_FCLIB) {
        fprintf(stderr, "contactctl: convert: %s: an FCLIB problem holds no bodies or contact "
                "geometry, only the matrices of one step: it cannot become frames\n", in);
        return CTL_EXIT_DATA;
    }
    char err[512];
    recfile file;
    if (recfile_open(&file, in, err, sizeof err) < 0) {
        fprintf(stderr, "contactctl: %s\n", err);
        return CTL_EXIT_DATA;
    }
    frames fs = {0};
    int rc = (form_of(in) == F_JSON ? read_json(in, &file, &fs) : read_binary(in, &file, &fs)) < 0
                 ? CTL_EXIT_DATA : CTL_EXIT_OK;
    recfile_close(&file);
    if (rc == CTL_EXIT_OK && want == F_FCLIB) {
        if (fs.n != 1) {
            fprintf(stderr, "contactctl: convert: %s holds %zu frames; an FCLIB file holds one "
                    "problem\n", in, fs.n);
            rc = CTL_EXIT_DATA;
        } else if (write_fclib(out, fs.f[0]) < 0) {
            rc = CTL_EXIT_DATA;
        }
    } else if (rc == CTL_EXIT_OK) {
        FILE *f = fopen(out, want == F_JSON ? "w" : "wb");
        if (!f) {
            fprintf(stderr, "contactctl: %s: cannot create: %s\n", out, strerror(errno));
            rc = CTL_EXIT_USAGE;
        } else {
            const int w = want == F_JSON ? write_json(f, &fs) : write_frames(f, &fs);
            if (fclose(f) != 0 || w < 0) {
                fprintf(stderr, "contactctl: %s: write failed\n", out);
                rc = CTL_EXIT_FAIL;
            }
        }
    }
    frames_free(&fs);
    return rc;
}
