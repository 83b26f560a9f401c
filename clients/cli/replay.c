/* SPDX-License-Identifier: MIT */
/* contactctl replay (see replay.h).
 *
 * Which frames were solved: the daemon answers the newest frame before a tick (stream mode) or
 * every frame (request mode), and the session's reader records each accepted frame before its
 * worker can solve it and each Result when it takes it, so a Result is the answer to the latest
 * frame recorded before it with the same seq; frames recorded before that one and not answered
 * were superseded (stream mode), and they never reached the solver or its warm start. Each
 * answered frame is solved again in recording order with one workspace and warm start, as the
 * session's worker did: the same decoding (cd_ingest_frame with the session's limits and
 * default solver), cs_step with the solver the daemon chose, and a deadline armed (the
 * solvers take their interruptible kernels then) but far away. A solve the daemon's deadline may
 * have cut cannot be reproduced without the same cut: when the recorded Result missed its
 * deadline and the replay differs, the frame is reported as "not reproducible: deadline", never
 * as agreeing (its differences are listed apart); later frames are still compared (their warm
 * start may differ from then on, which the summary says). A file that ends early, inside an
 * entry (the daemon stopped while writing it) or between two without its RecordEnd, is replayed
 * up to where it ends, the summary says where, and it exits as bad data unless a difference
 * came first. */
#include "replay.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "contactd.pb-c.h"
#include "ctl.h"
#include "io/ingest.h"
#include "recfile.h"
#include "service/clock.h"
#include "solver/contact.h"
#include "wire/codec.h"

// What a difference is in.
enum kind { K_STATUS, K_FORCE, K_VELOCITY, K_STATS, K_RESIDUAL, K_COUNT };
static const char *const kind_names[K_COUNT] = {"status", "force", "velocity", "stats",
                                                "residual"};

struct pending {
    Contactd__V1__RecordEntry *e; /* its client->frame */
    size_t record;                /* its message number in the file, from 1 */
};

struct replay {
    const char *path;
    bool json;
    cJSON *diffs_json;            /* json: the differences */
    cJSON *deadline_json;         /* json: the seq of each frame not reproducible (deadline) */
    cJSON *deadline_diffs_json;   /* json: their differences */
    cJSON *refused_json;          /* json: the frames cd_ingest_frame refuses here */
    cJSON *held;                  /* this deadline frame's differences, until it is judged */
    // The session as recorded.
    cs_limits lim;
    cs_solver default_solver, solver; /* solver: the override, or CS_SOLVER_DEFAULT */
    cs_workspace *ws;
    cs_warmstart *warm;
    cs_result res;
    void *res_mem;
    cs_scene scene;
    void *scene_mem;
    cd_result_msg msg;
    // This frame.
    uint64_t seq;
    size_t record;
    size_t frame_diffs[K_COUNT];
    bool hold;                    /* a deadline frame: its differences go to held */
    // Totals.
    size_t solved, identical, different, deadline, superseded, orphans, rejected;
    size_t diffs[K_COUNT];
    uint64_t dropped, missing;
    bool after_deadline;          /* a frame could not be reproduced: warm starts may differ */
    bool have_end, complete;
    bool truncated;               /* the file ends inside the entry truncated_record */
    size_t truncated_record, truncated_byte;
    struct pending *pend;
    size_t npend, cappend;
};

// One differing field; values as text (%.17g for doubles: exact).
static void note(struct replay *rp, enum kind k, const char *field, const char *recorded,
                 const char *replayed) {
    rp->frame_diffs[k]++;
    if (rp->json || rp->hold) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddNumberToObject(d, "seq", (double)rp->seq);
        cJSON_AddNumberToObject(d, "record", (double)rp->record);
        cJSON_AddStringToObject(d, "kind", kind_names[k]);
        cJSON_AddStringToObject(d, "field", field);
        cJSON_AddStringToObject(d, "recorded", recorded);
        cJSON_AddStringToObject(d, "replayed", replayed);
        cJSON_AddItemToArray(rp->hold ? rp->held : rp->diffs_json, d);
        return;
    }
    printf("seq %" PRIu64 " (record %zu): %s: %s: recorded %s, replayed %s\n", rp->seq,
           rp->record, kind_names[k], field, recorded, replayed);
}

// Bit for bit: a NaN equals itself only when its bits do (zero's sign is lost on the wire).
static void cmp_double(struct replay *rp, enum kind k, const char *field, double a, double b) {
    if (memcmp(&a, &b, sizeof a) != 0) {
        char x[32], y[32];
        snprintf(x, sizeof x, "%.17g", a);
        snprintf(y, sizeof y, "%.17g", b);
        note(rp, k, field, x, y);
    }
}

static void cmp_u64(struct replay *rp, enum kind k, const char *field, uint64_t a, uint64_t b) {
    if (a != b) {
        char x[24], y[24];
        snprintf(x, sizeof x, "%" PRIu64, a);
        snprintf(y, sizeof y, "%" PRIu64, b);
        note(rp, k, field, x, y);
    }
}

static void cmp_vec(struct replay *rp, enum kind k, const char *field,
                    const Contactd__V1__Vec3 *a, const Contactd__V1__Vec3 *b) {
    static const Contactd__V1__Vec3 zero = CONTACTD__V1__VEC3__INIT;
    a = a ? a : &zero;
    b = b ? b : &zero;
    char name[96];
    snprintf(name, sizeof name, "%s.x", field);
    cmp_double(rp, k, name, a->x, b->x);
    snprintf(name, sizeof name, "%s.y", field);
    cmp_double(rp, k, name, a->y, b->y);
    snprintf(name, sizeof name, "%s.z", field);
    cmp_double(rp, k, name, a->z, b->z);
}

// Every field of the recorded Result a against the replayed b, except timing and detail (the
// daemon's clock and what it says about the deadline).
static void compare(struct replay *rp, const Contactd__V1__Result *a,
                    const Contactd__V1__Result *b) {
    char f[96];
    cmp_u64(rp, K_STATUS, "status", (uint64_t)a->status, (uint64_t)b->status);
    cmp_u64(rp, K_STATUS, "source", (uint64_t)a->source, (uint64_t)b->source);
    cmp_u64(rp, K_FORCE, "contacts (count)", a->n_contacts, b->n_contacts);
    for (size_t i = 0; i < a->n_contacts && i < b->n_contacts; i++) {
        const Contactd__V1__ContactForce *x = a->contacts[i], *y = b->contacts[i];
        snprintf(f, sizeof f, "contacts[%zu].id", i);
        cmp_u64(rp, K_FORCE, f, x->id, y->id);
        snprintf(f, sizeof f, "contacts[%zu].state", i);
        cmp_u64(rp, K_FORCE, f, (uint64_t)x->state, (uint64_t)y->state);
        snprintf(f, sizeof f, "contacts[%zu].force", i);
        cmp_vec(rp, K_FORCE, f, x->force, y->force);
        snprintf(f, sizeof f, "contacts[%zu].impulse", i);
        cmp_vec(rp, K_FORCE, f, x->impulse, y->impulse);
    }
    cmp_u64(rp, K_FORCE, "joints (count)", a->n_joints, b->n_joints);
    for (size_t i = 0; i < a->n_joints && i < b->n_joints; i++) {
        const Contactd__V1__JointForce *x = a->joints[i], *y = b->joints[i];
        snprintf(f, sizeof f, "joints[%zu].id", i);
        cmp_u64(rp, K_FORCE, f, x->id, y->id);
        snprintf(f, sizeof f, "joints[%zu].force", i);
        cmp_vec(rp, K_FORCE, f, x->force, y->force);
        snprintf(f, sizeof f, "joints[%zu].torque", i);
        cmp_vec(rp, K_FORCE, f, x->torque, y->torque);
    }
    cmp_u64(rp, K_VELOCITY, "bodies (count)", a->n_bodies, b->n_bodies);
    for (size_t i = 0; i < a->n_bodies && i < b->n_bodies; i++) {
        const Contactd__V1__BodyVelocity *x = a->bodies[i], *y = b->bodies[i];
        snprintf(f, sizeof f, "bodies[%zu].id", i);
        cmp_u64(rp, K_VELOCITY, f, x->id, y->id);
        snprintf(f, sizeof f, "bodies[%zu].linear_velocity", i);
        cmp_vec(rp, K_VELOCITY, f, x->linear_velocity, y->linear_velocity);
        snprintf(f, sizeof f, "bodies[%zu].angular_velocity", i);
        cmp_vec(rp, K_VELOCITY, f, x->angular_velocity, y->angular_velocity);
    }
    static const Contactd__V1__SolverStats no_stats = CONTACTD__V1__SOLVER_STATS__INIT;
    const Contactd__V1__SolverStats *sa = a->stats ? a->stats : &no_stats;
    const Contactd__V1__SolverStats *sb = b->stats ? b->stats : &no_stats;
    const char *na = sa->solver ? sa->solver : "", *nb = sb->solver ? sb->solver : "";
    if (strcmp(na, nb) != 0) {
        note(rp, K_STATS, "stats.solver", na, nb);
    }
    cmp_u64(rp, K_STATS, "stats.pivots", sa->pivots, sb->pivots);
    cmp_u64(rp, K_STATS, "stats.iterations", sa->iterations, sb->iterations);
    static const Contactd__V1__Residuals no_res = CONTACTD__V1__RESIDUALS__INIT;
    const Contactd__V1__Residuals *ra = a->residuals ? a->residuals : &no_res;
    const Contactd__V1__Residuals *rb = b->residuals ? b->residuals : &no_res;
    cmp_double(rp, K_RESIDUAL, "residuals.complementarity", ra->complementarity,
               rb->complementarity);
    cmp_double(rp, K_RESIDUAL, "residuals.normal_velocity", ra->normal_velocity,
               rb->normal_velocity);
    cmp_double(rp, K_RESIDUAL, "residuals.cone", ra->cone, rb->cone);
    cmp_double(rp, K_RESIDUAL, "residuals.dissipation", ra->dissipation, rb->dissipation);
    cmp_double(rp, K_RESIDUAL, "residuals.momentum", ra->momentum, rb->momentum);
    cmp_double(rp, K_RESIDUAL, "residuals.joint", ra->joint, rb->joint);
}

// Solves frame f again and compares the answer with the recorded Result r.
static void replay_frame(struct replay *rp, const Contactd__V1__Frame *f,
                         const Contactd__V1__Result *r) {
    char err[512];
    memset(rp->frame_diffs, 0, sizeof rp->frame_diffs);
    rp->seq = r->seq;
    rp->solved++;
    if (cd_ingest_frame(f, &rp->lim, rp->default_solver, &rp->scene, err,
                                  sizeof err) != 0) {
        // The daemon took it with the same code: only a different build gets here.
        rp->rejected++;
        rp->different++;
        if (rp->json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "seq", (double)rp->seq);
            cJSON_AddNumberToObject(o, "record", (double)rp->record);
            cJSON_AddStringToObject(o, "error", err);
            cJSON_AddItemToArray(rp->refused_json, o);
        } else {
            printf("seq %" PRIu64 " (record %zu): the frame is refused here: %s\n", rp->seq,
                   rp->record, err);
        }
        return;
    }
    cs_options opt = {
        .solver = rp->scene.solver != CS_SOLVER_DEFAULT ? rp->scene.solver : rp->default_solver,
        // Armed as in the daemon (the solvers pick their interruptible kernels), never reached.
        .deadline_ns = INT64_MAX,
        .clock_ns = cd_clock_ns,
    };
    if (rp->solver != CS_SOLVER_DEFAULT) {
        opt.solver = rp->solver;
    }
    (void)cs_step(rp->ws, &rp->scene, &opt, rp->warm, &rp->res);
    // Compared as the wire carries it (packed and unpacked, like the recorded one): proto3 does
    // not send a field at its default, so -0.0 arrives as +0.0 on both sides.
    const Contactd__V1__ServerMessage *env =
        cd_codec_result_build(&rp->msg, &rp->res, NULL, 0, NULL);
    const size_t n_packed = protobuf_c_message_get_packed_size(&env->base);
    uint8_t *buf = malloc(n_packed ? n_packed : 1);
    Contactd__V1__ServerMessage *wire =
        buf ? contactd__v1__server_message__unpack(
                  NULL, protobuf_c_message_pack(&env->base, buf), buf)
            : NULL;
    free(buf);
    if (!wire) {
        fprintf(stderr, "contactctl: out of memory\n");
        rp->different++;
        return;
    }
    // A solve that missed its deadline may have been cut: its differences are held, and listed
    // apart from the others once the frame is judged.
    const bool missed = r->timing && r->timing->deadline_ns != 0 && !r->timing->deadline_met;
    rp->hold = missed;
    compare(rp, r, wire->result);
    rp->hold = false;
    contactd__v1__server_message__free_unpacked(wire, NULL);
    size_t n = 0;
    for (int k = 0; k < K_COUNT; k++) {
        n += rp->frame_diffs[k];
    }
    if (n == 0) {
        rp->identical++;
        return;
    }
    if (missed) {
        rp->deadline++;
        rp->after_deadline = true;
        if (rp->json) {
            cJSON_AddItemToArray(rp->deadline_json, cJSON_CreateNumber((double)rp->seq));
        } else {
            printf("seq %" PRIu64 " (record %zu): not reproducible: deadline (the daemon's solve "
                   "missed its deadline and may have been cut; %zu fields differ)\n",
                   rp->seq, rp->record, n);
        }
        cJSON *d;
        while ((d = cJSON_DetachItemFromArray(rp->held, 0))) {
            if (rp->json) {
                cJSON_AddItemToArray(rp->deadline_diffs_json, d);
                continue;
            }
            printf("  %s: %s: recorded %s, replayed %s\n",
                   cJSON_GetStringValue(cJSON_GetObjectItem(d, "kind")),
                   cJSON_GetStringValue(cJSON_GetObjectItem(d, "field")),
                   cJSON_GetStringValue(cJSON_GetObjectItem(d, "recorded")),
                   cJSON_GetStringValue(cJSON_GetObjectItem(d, "replayed")));
            cJSON_Delete(d);
        }
        return;
    }
    rp->different++;
    for (int k = 0; k < K_COUNT; k++) {
        rp->diffs[k] += rp->frame_diffs[k];
    }
}

static void free_pending(struct replay *rp, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) {
        contactd__v1__record_entry__free_unpacked(rp->pend[i].e, NULL);
    }
}

// A recorded Result: the answer to the latest pending frame with its seq (see the file comment).
static void on_result(struct replay *rp, const Contactd__V1__Result *r) {
    size_t i = rp->npend;
    while (i > 0 && rp->pend[i - 1].e->client->frame->seq != r->seq) {
        i--;
    }
    if (i == 0) {
        // Its frame was dropped from the recording (the summary says records were dropped).
        rp->orphans++;
        return;
    }
    const struct pending p = rp->pend[i - 1];
    rp->superseded += i - 1;
    free_pending(rp, 0, i - 1);
    rp->record = p.record;
    replay_frame(rp, p.e->client->frame, r);
    contactd__v1__record_entry__free_unpacked(p.e, NULL);
    memmove(rp->pend, rp->pend + i, (rp->npend - i) * sizeof *rp->pend);
    rp->npend -= i;
}

// Sizes the solver state from the header as the daemon sized the session. Returns -1, or an
// exit status after saying why.
static int setup(struct replay *rp, const Contactd__V1__RecordHeader *h, const char *solver) {
    const Contactd__V1__Limits *l = h->limits;
    if (!l || l->max_bodies == 0 || h->n_solvers == 0 ||
        cs_solver_from_name(h->default_solver_name, &rp->default_solver) < 0) {
        fprintf(stderr, "contactctl: %s: the header lacks the session's limits or solvers\n",
                rp->path);
        return CTL_EXIT_DATA;
    }
    rp->lim = (cs_limits){.max_bodies = (int)l->max_bodies, .max_contacts = (int)l->max_contacts,
                          .max_joints = (int)l->max_joints,
                          .max_dirs = (int)l->max_friction_directions};
    for (size_t i = 0; i < h->n_solvers; i++) {
        cs_solver s;
        if (cs_solver_from_name(h->solvers[i], &s) < 0 || !cs_solver_is_available(s)) {
            fprintf(stderr, "contactctl: %s: the session's solver '%s' is not in this build\n",
                    rp->path, h->solvers[i]);
            return CTL_EXIT_DATA;
        }
        rp->lim.solvers |= 1u << s;
    }
    if (solver) {
        if (cs_solver_from_name(solver, &rp->solver) < 0 || rp->solver == CS_SOLVER_DEFAULT ||
            !cs_solver_is_available(rp->solver)) {
            fprintf(stderr, "contactctl: --solver: unknown or unavailable solver '%s'\n",
                    solver);
            return CTL_EXIT_USAGE;
        }
        rp->lim.solvers |= 1u << rp->solver;
    }
    const cs_limits *lim = &rp->lim;
    const size_t bodies = (size_t)lim->max_bodies * sizeof(cs_body);
    const size_t contacts = (size_t)lim->max_contacts * sizeof(cs_contact);
    rp->scene_mem = malloc(bodies + contacts + (size_t)lim->max_joints * sizeof(cs_joint) + 64);
    rp->res_mem = malloc(cs_result_size(lim));
    rp->ws = cs_workspace_new(lim);
    rp->warm = cs_warmstart_new(lim);
    if (!rp->scene_mem || !rp->res_mem || !rp->ws || !rp->warm ||
        cd_codec_result_msg_init(&rp->msg, lim) < 0) {
        fprintf(stderr, "contactctl: out of memory for the session's solver state\n");
        return CTL_EXIT_FAIL;
    }
    // As the daemon's admission does (cd_session_new).
    cs_workspace_warm_up(rp->ws);
    cs_result_init(&rp->res, rp->res_mem, lim);
    unsigned char *m = rp->scene_mem;
    rp->scene.bodies = (cs_body *)m;
    rp->scene.contacts = (cs_contact *)(m + bodies);
    rp->scene.joints = (cs_joint *)(m + bodies + contacts);
    if (!rp->json) {
        printf("replaying %s: session %" PRIu64 " of contactd %s (client '%s'), %s mode, "
               "solvers %s%s%s, budget %" PRId64 " ns\n",
               rp->path, h->session_id, h->daemon_version, h->client_name,
               h->mode == CONTACTD__V1__SESSION_MODE__MODE_REQUEST ? "request" : "stream",
               h->default_solver_name, solver ? ", replayed with " : "", solver ? solver : "",
               h->budget_ns);
    }
    return -1;
}

static void summary(struct replay *rp) {
    const size_t unanswered = rp->npend;
    const bool complete = rp->have_end && rp->complete;
    if (rp->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "solved", (double)rp->solved);
        cJSON_AddNumberToObject(o, "identical", (double)rp->identical);
        cJSON_AddNumberToObject(o, "different", (double)rp->different);
        cJSON_AddNumberToObject(o, "deadline", (double)rp->deadline);
        cJSON_AddNumberToObject(o, "superseded", (double)rp->superseded);
        cJSON_AddNumberToObject(o, "unanswered", (double)unanswered);
        cJSON_AddNumberToObject(o, "recordsDropped", (double)rp->dropped);
        cJSON_AddNumberToObject(o, "resultsMissing", (double)rp->missing);
        cJSON_AddNumberToObject(o, "resultsWithoutFrame", (double)rp->orphans);
        cJSON_AddBoolToObject(o, "complete", complete);
        cJSON_AddBoolToObject(o, "truncated", rp->truncated);
        if (rp->truncated) {
            cJSON_AddNumberToObject(o, "truncatedAtRecord", (double)rp->truncated_record);
            cJSON_AddNumberToObject(o, "truncatedAtByte", (double)rp->truncated_byte);
        }
        cJSON *k = cJSON_AddObjectToObject(o, "differencesByKind");
        for (int i = 0; i < K_COUNT; i++) {
            cJSON_AddNumberToObject(k, kind_names[i], (double)rp->diffs[i]);
        }
        cJSON_AddItemToObject(o, "differences", rp->diffs_json);
        rp->diffs_json = NULL;
        cJSON_AddItemToObject(o, "deadlineFrames", rp->deadline_json);
        rp->deadline_json = NULL;
        cJSON_AddItemToObject(o, "deadlineDifferences", rp->deadline_diffs_json);
        rp->deadline_diffs_json = NULL;
        cJSON_AddItemToObject(o, "refusedFrames", rp->refused_json);
        rp->refused_json = NULL;
        char *txt = cJSON_Print(o);
        if (txt) {
            puts(txt);
        }
        free(txt);
        cJSON_Delete(o);
        return;
    }
    printf("frames solved %zu: identical %zu, different %zu, not reproducible (deadline) %zu\n",
           rp->solved, rp->identical, rp->different, rp->deadline);
    if (rp->different) {
        printf("differences: status %zu, force %zu, velocity %zu, stats %zu, residual %zu\n",
               rp->diffs[K_STATUS], rp->diffs[K_FORCE], rp->diffs[K_VELOCITY],
               rp->diffs[K_STATS], rp->diffs[K_RESIDUAL]);
    }
    printf("frames superseded %zu, unanswered %zu\n", rp->superseded, unanswered);
    if (rp->dropped || rp->orphans) {
        printf("records dropped by the daemon (its recording buffer was full, or the file "
               "reached [record] max_file_mb): %" PRIu64
               "; results whose frame was dropped: %zu; frames after a gap may differ\n",
               rp->dropped, rp->orphans);
    }
    if (rp->missing) {
        printf("frames the daemon solved without a Result in the recording: %" PRIu64
               " (its output ring was full, or the session closed first); the warm start of "
               "frames after such a gap may differ\n", rp->missing);
    }
    if (rp->after_deadline && rp->different) {
        printf("note: differences after a frame that was not reproducible may come from it (the "
               "warm start follows each answer)\n");
    }
    if (rp->truncated) {
        printf("note: the recording is truncated inside record %zu (byte %zu): the records "
               "before it were replayed\n", rp->truncated_record, rp->truncated_byte);
    } else if (!complete) {
        printf("note: the recording has no end (%s)\n",
               rp->have_end ? "the daemon stopped before the session ended"
                            : "the daemon is still writing it, or was killed");
    }
}

// Handles the file's entries after the header. Returns -1, or an exit status for a bad file.
static int replay_entries(struct replay *rp, recfile *f) {
    char err[512];
    const uint8_t *msg;
    size_t len;
    int r;
    while ((r = recfile_next(f, rp->path, &msg, &len, err, sizeof err)) == 1) {
        Contactd__V1__RecordEntry *e = contactd__v1__record_entry__unpack(NULL, len, msg);
        if (!e) {
            fprintf(stderr, "contactctl: %s: message %zu is not a contactd.v1.RecordEntry\n",
                    rp->path, f->index);
            return CTL_EXIT_DATA;
        }
        switch (e->entry_case) {
        case CONTACTD__V1__RECORD_ENTRY__ENTRY_CLIENT:
            if (e->client->msg_case == CONTACTD__V1__CLIENT_MESSAGE__MSG_FRAME) {
                if (rp->npend == rp->cappend) {
                    const size_t cap = rp->cappend ? 2 * rp->cappend : 16;
                    struct pending *p = realloc(rp->pend, cap * sizeof *p);
                    if (!p) {
                        contactd__v1__record_entry__free_unpacked(e, NULL);
                        fprintf(stderr, "contactctl: out of memory\n");
                        return CTL_EXIT_FAIL;
                    }
                    rp->pend = p;
                    rp->cappend = cap;
                }
                rp->pend[rp->npend++] = (struct pending){.e = e, .record = f->index};
                continue; // kept until answered or superseded
            }
            break;
        case CONTACTD__V1__RECORD_ENTRY__ENTRY_SERVER:
            if (e->server->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT) {
                on_result(rp, e->server->result);
            }
            break;
        case CONTACTD__V1__RECORD_ENTRY__ENTRY_DROPPED:
            rp->dropped += e->dropped->count;
            break;
        case CONTACTD__V1__RECORD_ENTRY__ENTRY_END:
            rp->have_end = true;
            rp->complete = e->end->complete;
            rp->missing = e->end->results_missing;
            break;
        default:
            break;
        }
        contactd__v1__record_entry__free_unpacked(e, NULL);
    }
    if (r < 0) {
        fprintf(stderr, "contactctl: %s\n", err);
    }
    if (r == -2) {
        // What came before the cut is whole: the summary covers it and says where it ends.
        rp->truncated = true;
        rp->truncated_record = f->index + 1;
        rp->truncated_byte = f->off;
        return -1;
    }
    return r < 0 ? CTL_EXIT_DATA : -1;
}

int replay_run(const char *path, const char *solver, bool json) {
    char err[512];
    recfile f;
    if (recfile_open(&f, path, err, sizeof err) < 0) {
        fprintf(stderr, "contactctl: %s\n", err);
        return CTL_EXIT_DATA;
    }
    struct replay rp = {.path = path, .json = json};
    Contactd__V1__RecordEntry *h = NULL;
    const uint8_t *msg;
    size_t len;
    int rc = -1, first = 0;
    if (!recfile_is_recording(&f) ||
        (first = recfile_next(&f, path, &msg, &len, err, sizeof err)) != 1 ||
        !(h = contactd__v1__record_entry__unpack(NULL, len, msg)) ||
        h->entry_case != CONTACTD__V1__RECORD_ENTRY__ENTRY_HEADER) {
        // A file cut inside its header is a recording, and there is nothing before the cut.
        if (first == -2) {
            fprintf(stderr, "contactctl: %s\n", err);
        } else {
            fprintf(stderr, "contactctl: %s: not a contactd recording (no RecordHeader first)\n",
                    path);
        }
        rc = CTL_EXIT_DATA;
        goto out;
    }
    rp.diffs_json = json ? cJSON_CreateArray() : NULL;
    rp.deadline_json = json ? cJSON_CreateArray() : NULL;
    rp.deadline_diffs_json = json ? cJSON_CreateArray() : NULL;
    rp.refused_json = json ? cJSON_CreateArray() : NULL;
    rp.held = cJSON_CreateArray();
    rc = setup(&rp, h->header, solver);
    if (rc < 0) {
        rc = replay_entries(&rp, &f);
    }
    if (rc < 0) {
        summary(&rp);
        // A difference is the finding replay is for. A file that ends early, cut inside a
        // record or between two without its RecordEnd (the daemon killed, or still writing),
        // says only that: what it held agrees, but what it lacks (records not yet written, the
        // end's count of Results missing) is unknown, so it is not "nothing lost".
        const bool early = rp.truncated || !rp.have_end;
        rc = rp.different || rp.deadline || rp.dropped || rp.orphans || rp.missing ? CTL_EXIT_FAIL
             : early                                                               ? CTL_EXIT_DATA
                                                                                   : CTL_EXIT_OK;
    }
out:
    free_pending(&rp, 0, rp.npend);
    free(rp.pend);
    cJSON_Delete(rp.diffs_json);
    cJSON_Delete(rp.deadline_json);
    cJSON_Delete(rp.deadline_diffs_json);
    cJSON_Delete(rp.refused_json);
    cJSON_Delete(rp.held);
    if (h) {
        contactd__v1__record_entry__free_unpacked(h, NULL);
    }
    cd_codec_result_msg_fini(&rp.msg);
    cs_workspace_free(rp.ws);
    cs_warmstart_free(rp.warm);
    free(rp.res_mem);
    free(rp.scene_mem);
    recfile_close(&f);
    return rc;
}
