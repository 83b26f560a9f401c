/* SPDX-License-Identifier: MIT */
/* Sessions: their memory, mailboxes and one solve (see session.h).
 *
 * Each table entry moves through FREE -> LIVE -> CLOSING -> RETIRED -> FREE. The I/O thread makes
 * every transition except CLOSING -> RETIRED, which the session's worker makes when it sees a
 * closed session and promises never to touch it again; only then does the I/O thread take it out
 * of the table (and an admission thread free it). So no worker waits for the I/O thread, and no
 * session is freed while a worker may be stepping it. Frames travel I/O -> worker through a
 * latest-value slot (stream) or an SPSC queue (request), results worker -> I/O through an SPSC
 * ring; all are lock-free. */
#include "service/session.h"

#include <errno.h>
#include <stdalign.h>
#include <sys/epoll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "service/grid.h"
#include "service/rate.h"
#include "service/ring.h"
#include "service/slot.h"
#include "solver/contact.h"

enum entry_state { FREE, LIVE, CLOSING, RETIRED };

// The status counts (stats.h) span cs_status from its lowest value to its highest.
_Static_assert(CS_NOANSWER == CD_STATUS_MIN && CS_FALLBACK == CD_STATUS_MIN + CD_STATUS_KINDS - 1,
               "cd_counts.statuses must cover every cs_status");

/* A solve that starts more than this after its release started late: the miss is the host's or
 * the scheduler's, not the solver's. 50 us is the bound on a solver's own overrun. */
#define LATE_START_NS 50000

struct cd_session {
    cd_session_table *table; /* io: set on insertion */
    int entry;               /* io: index in table->e */
    uint64_t id;
    cd_session_params p;
    cs_workspace *ws;        /* worker */
    cs_warmstart *warm;      /* worker */
    cs_warmstart *warm_ahead; /* worker, stream: the warm start a solve ahead of its tick starts
                               * from and leaves its answer in; it becomes warm when that answer
                               * is sent, and is dropped with a frame that supersedes it */
    cd_slot in;              /* stream: producer io, consumer worker */
    cd_ring queue;           /* request: producer io, consumer worker; elements are cd_frame */
    cd_frame frames[3];      /* stream: the slot's buffers */
    cd_frame *held;          /* worker, stream: taken, waiting for the tick after its arrival */
    bool ahead;              /* worker, stream: held is solved, its result claimed in out and
                              * pushed at its tick */
    int64_t ahead_tick_ns;   /* worker, stream: the tick of the last solve ahead (one a tick) */
    bool costed;             /* worker: cost_ns is a solve's measure (none before the first) */
    int64_t tat_ns;          /* io, request: the rate limit's theoretical arrival time */
    uint64_t asked;          /* io (the worker on an attached session): frames handed to the
                              * worker; in stream mode only those that superseded none */
    uint64_t answered;       /* io (the worker on an attached session): results taken from the
                              * ring (sent or not) */
    _Atomic uint64_t settled; /* worker, stream: frames it took and is done with (solved, or
                               * passed over for a newer one); asked - settled are waiting */
    cd_ring out;             /* producer worker, consumer io; elements are cd_output */
    cd_output spare;         /* worker: solved into when the ring is full, then dropped */
    _Atomic int64_t cost_ns; /* worker writes: moving average of solve times */
    void *mem;               /* frame and result arrays, one block */
    cd_counts counts;
    struct {                 /* a socket the worker serves itself (cd_session_attach) */
        _Atomic bool attached; /* io publishes the fields below with release */
        _Atomic bool ended;    /* worker: the connection ended (io then closes it) */
        bool input_ended;      /* owning worker: the client shut its sending side; the session
                                * ends once what it sent is answered */
        int fd;
        int epfd;              /* owning worker: the epoll fd is in, -1 once it left */
        bool want_write;       /* owning worker: fd is watched for EPOLLOUT too */
        const cd_endpoint_ops *ops;
        void *ctx;
    } ep;
};

struct entry {
    _Atomic int state;  /* enum entry_state */
    _Atomic int worker; /* the session's owner: io sets it at insertion, then the owner moves it.
                         * Kept here, not in the session, so that a worker that does not own s
                         * never reads s, which its owner may retire and io free at any moment */
    cd_session *s;      /* written by io before LIVE is published */
};

struct cd_session_table {
    int n;
    uint64_t next_id;        /* io */
    _Atomic uint32_t open;   /* io writes: sessions inserted and not closed */
    cd_counts counts;        /* io's daemon-wide counts (workers keep their own) */
    struct entry e[];
};

static size_t round64(size_t n) {
    return (n + 63) / 64 * 64;
}

static size_t frame_bytes(const cs_limits *lim) {
    return round64((size_t)lim->max_bodies * sizeof(cs_body)) +
           round64((size_t)lim->max_contacts * sizeof(cs_contact)) +
           round64((size_t)lim->max_joints * sizeof(cs_joint));
}

static size_t result_bytes(const cs_limits *lim) {
    return round64(cs_result_size(lim));
}

static int frames_of(const cd_session_params *p) {
    return p->mode == CD_MODE_REQUEST ? CD_REQUEST_QUEUE : 3;
}

// The array block alone (frames and results); the rings' element tables are in the formula's
// sizeof(cd_output) term.
static size_t arrays_bytes(const cd_session_params *p) {
    return (size_t)frames_of(p) * frame_bytes(&p->lim) +
           (CD_SESSION_RESULTS + 1) * result_bytes(&p->lim);
}

// Stream mode keeps a second warm start for its solves ahead of the tick.
static int warmstarts_of(const cd_session_params *p) {
    return p->mode == CD_MODE_STREAM ? 2 : 1;
}

size_t cd_session_bytes(const cd_session_params *p) {
    return round64(cs_workspace_size(&p->lim)) +
           (size_t)warmstarts_of(p) * round64(cs_warmstart_size(&p->lim)) +
           arrays_bytes(p) + round64((CD_SESSION_RESULTS + 1) * sizeof(cd_output)) +
           round64(sizeof(cd_session));
}

void cd_session_free(cd_session *s) {
    if (!s) {
        return;
    }
    cd_ring_fini(&s->out);
    cd_ring_fini(&s->queue);
    cs_workspace_free(s->ws);
    cs_warmstart_free(s->warm);
    cs_warmstart_free(s->warm_ahead);
    free(s->mem);
    free(s);
}

// Allocates the frame and result arrays in one block, writes every page of it, and points the
// frame buffers, every ring element and the spare output into it.
static int session_alloc_arrays(cd_session *s) {
    const size_t frame = frame_bytes(&s->p.lim), result = result_bytes(&s->p.lim);
    const size_t bodies = round64((size_t)s->p.lim.max_bodies * sizeof(cs_body));
    const size_t contacts = round64((size_t)s->p.lim.max_contacts * sizeof(cs_contact));
    const size_t size = arrays_bytes(&s->p);
    unsigned char *mem = aligned_alloc(64, size);
    if (!mem) {
        return -ENOMEM;
    }
    // Touch every page now, on this admission thread, so no worker takes a page fault on them.
    memset(mem, 0, size);
    s->mem = mem;
    for (int i = 0; i < frames_of(&s->p); i++) {
        cd_frame *f = s->p.mode == CD_MODE_REQUEST ? cd_ring_at(&s->queue, (size_t)i)
                                                   : &s->frames[i];
        f->scene.bodies = (cs_body *)mem;
        f->scene.contacts = (cs_contact *)(mem + bodies);
        f->scene.joints = (cs_joint *)(mem + bodies + contacts);
        mem += frame;
    }
    for (size_t i = 0; i < CD_SESSION_RESULTS; i++) {
        cd_output *o = cd_ring_at(&s->out, i);
        cs_result_init(&o->result, mem, &s->p.lim);
        mem += result;
    }
    cs_result_init(&s->spare.result, mem, &s->p.lim);
    return 0;
}

static bool params_are_valid(const cd_session_params *p) {
    return p->lim.max_bodies >= 1 && p->lim.max_contacts >= 0 && p->lim.max_joints >= 0 &&
           p->lim.max_dirs >= 0 && p->lim.solvers != 0 && p->default_solver > CS_SOLVER_DEFAULT &&
           p->default_solver < CS_SOLVER_COUNT && cs_limits_allow(&p->lim, p->default_solver) &&
           (p->mode == CD_MODE_STREAM || p->mode == CD_MODE_REQUEST) && p->budget_ns > 0 &&
           p->period_ns > 0;
}

cd_session *cd_session_new(const cd_session_params *p) {
    if (!params_are_valid(p)) {
        return NULL;
    }
    // Written whole here (not calloc's untouched zero pages): its histograms are the worker's.
    cd_session *s = aligned_alloc(64, round64(sizeof *s));
    if (!s) {
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->p = *p;
    s->ep.epfd = -1;
    atomic_init(&s->cost_ns, 0);
    atomic_init(&s->settled, 0);
    if (cd_ring_init(&s->out, CD_SESSION_RESULTS, sizeof(cd_output)) < 0 ||
        (p->mode == CD_MODE_REQUEST &&
         cd_ring_init(&s->queue, CD_REQUEST_QUEUE, sizeof(cd_frame)) < 0)) {
        goto out_free;
    }
    s->ws = cs_workspace_new(&p->lim);
    s->warm = cs_warmstart_new(&p->lim);
    s->warm_ahead = warmstarts_of(p) > 1 ? cs_warmstart_new(&p->lim) : NULL;
    if (!s->ws || !s->warm || (warmstarts_of(p) > 1 && !s->warm_ahead) ||
        session_alloc_arrays(s) < 0) {
        goto out_free;
    }
    // LAPACK and BLIS fill their internal buffers on first use: do it here, not on a worker.
    cs_workspace_warm_up(s->ws);
    cd_slot_init(&s->in, &s->frames[0], &s->frames[1], &s->frames[2]);
    return s;

out_free:
    cd_session_free(s);
    return NULL;
}

cd_session_table *cd_session_table_new(int max_sessions) {
    if (max_sessions < 1 || max_sessions > 1 << 16) {
        return NULL;
    }
    cd_session_table *t = calloc(1, sizeof *t + (size_t)max_sessions * sizeof t->e[0]);
    if (!t) {
        return NULL;
    }
    t->n = max_sessions;
    t->next_id = 1;
    for (int i = 0; i < t->n; i++) {
        atomic_init(&t->e[i].state, FREE);
        atomic_init(&t->e[i].worker, 0);
    }
    return t;
}

void cd_session_table_free(cd_session_table *t) {
    if (!t) {
        return;
    }
    for (int i = 0; i < t->n; i++) {
        if (atomic_load_explicit(&t->e[i].state, memory_order_acquire) != FREE) {
            cd_session_free(t->e[i].s);
        }
    }
    free(t);
}

uint64_t cd_session_table_take_id(cd_session_table *t) {
    return t->next_id++;
}

int cd_session_table_insert(cd_session_table *t, cd_session *s, int worker) {
    // Only this thread turns entries from FREE into anything else, so a relaxed look suffices.
    int idx = -1;
    for (int i = 0; i < t->n && idx < 0; i++) {
        if (atomic_load_explicit(&t->e[i].state, memory_order_relaxed) == FREE) {
            idx = i;
        }
    }
    if (idx < 0) {
        return -EBUSY;
    }
    s->table = t;
    s->entry = idx;
    s->id = s->p.id ? s->p.id : cd_session_table_take_id(t);
    t->e[idx].s = s;
    // release: pairs with the acquire in cd_session_table_claim, which then reads this s.
    atomic_store_explicit(&t->e[idx].worker, worker, memory_order_release);
    // release: pairs with the acquire in cd_session_table_claim, which then sees the whole
    // session built by the admission thread (handed to this thread by libuv's work queue).
    atomic_store_explicit(&t->e[idx].state, LIVE, memory_order_release);
    atomic_store_explicit(&t->open, atomic_load_explicit(&t->open, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return 0;
}

void cd_session_close(cd_session *s) {
    cd_session_table *t = s->table;
    // relaxed: the new state carries no data for the worker; it only has to notice it.
    atomic_store_explicit(&t->e[s->entry].state, CLOSING, memory_order_relaxed);
    atomic_store_explicit(&t->open, atomic_load_explicit(&t->open, memory_order_relaxed) - 1,
                          memory_order_relaxed);
}

cd_session *cd_session_table_reap(cd_session_table *t) {
    for (int i = 0; i < t->n; i++) {
        struct entry *e = &t->e[i];
        // acquire: pairs with the release in cd_session_table_claim that retired the entry, so
        // every access of the worker to the session happened before it is freed.
        if (atomic_load_explicit(&e->state, memory_order_acquire) == RETIRED) {
            cd_session *s = e->s;
            e->s = NULL;
            // relaxed: workers ignore FREE entries; insertion publishes with release.
            atomic_store_explicit(&e->state, FREE, memory_order_relaxed);
            return s;
        }
    }
    return NULL;
}

cd_session *cd_session_table_at(const cd_session_table *t, int i) {
    // relaxed: only this thread makes entries leave or enter FREE.
    return atomic_load_explicit(&t->e[i].state, memory_order_relaxed) == FREE ? NULL : t->e[i].s;
}

int cd_session_table_size(const cd_session_table *t) {
    return t->n;
}

// The attached socket out of its owner's epoll (if it is in one). thread: the owning worker.
static void endpoint_unwatch(cd_session *s) {
    if (s->ep.epfd >= 0) {
        (void)epoll_ctl(s->ep.epfd, EPOLL_CTL_DEL, s->ep.fd, NULL);
        s->ep.epfd = -1;
    }
}

cd_session *cd_session_table_claim(cd_session_table *t, int i, int worker, int *ret_released) {
    struct entry *e = &t->e[i];
    // acquire: pairs with the release in cd_session_table_insert (the session is fully built).
    int state = atomic_load_explicit(&e->state, memory_order_acquire);
    if (state != LIVE && state != CLOSING) {
        return NULL;
    }
    // acquire: pairs with the release in cd_session_move, so the new owner sees the state the
    // old owner left (its held frame, warm start, workspace), or with the insertion's.
    if (atomic_load_explicit(&e->worker, memory_order_acquire) != worker) {
        return NULL;
    }
    // The state read first may be an earlier session's of this entry (retired by its owner,
    // reaped, and this one inserted since); only its owner, this worker, retires the session
    // whose owner was just read, so the state read now is that session's.
    state = atomic_load_explicit(&e->state, memory_order_acquire);
    cd_session *s = e->s;
    if (state == CLOSING) {
        // Its socket leaves our epoll before the I/O thread may close it (after the reap).
        if (atomic_load_explicit(&s->ep.attached, memory_order_acquire)) {
            endpoint_unwatch(s);
        }
        // release: pairs with the acquire in cd_session_table_reap; after this store no worker
        // touches the session again.
        atomic_store_explicit(&e->state, RETIRED, memory_order_release);
        ++*ret_released;
        return NULL;
    }
    return s;
}

void cd_session_table_stats(const cd_session_table *t, cd_stats *ret) {
    cd_counts_add(&t->counts, ret);
    ret->sessions = atomic_load_explicit(&t->open, memory_order_relaxed);
}

uint64_t cd_session_id(const cd_session *s) {
    return s->id;
}

const cd_session_params *cd_session_params_of(const cd_session *s) {
    return &s->p;
}

int cd_session_worker(const cd_session *s) {
    return atomic_load_explicit(&s->table->e[s->entry].worker, memory_order_relaxed);
}

void cd_session_move(cd_session *s, int worker) {
    // The socket leaves this worker's epoll before the session leaves this worker; the new owner
    // adds it to its own on its first pass (cd_session_flush). Only ever the owner's epoll holds
    // it: a socket left in another worker's epoll would wake that worker for a session it may
    // not serve, again and again (level-triggered) at real-time priority, starving the owner.
    if (atomic_load_explicit(&s->ep.attached, memory_order_acquire)) {
        endpoint_unwatch(s);
    }
    // release: pairs with the acquire in cd_session_table_claim (the new owner's first look).
    atomic_store_explicit(&s->table->e[s->entry].worker, worker, memory_order_release);
}

void cd_session_attach(cd_session *s, int fd, const cd_endpoint_ops *ops, void *ctx) {
    s->ep.fd = fd;
    s->ep.ops = ops;
    s->ep.ctx = ctx;
    // release: pairs with the acquire in cd_session_is_attached (the worker's first look). The
    // I/O thread registers nothing: the session may be moving between workers right now, and
    // only its owner knows which epoll is its own.
    atomic_store_explicit(&s->ep.attached, true, memory_order_release);
}

bool cd_session_is_ours(const cd_session *s, int worker) {
    // acquire: pairs with the release in cd_session_attach, which the I/O thread stored after it
    // inserted s: a worker that learned of s from its epoll then sees s->table and s->entry.
    if (!atomic_load_explicit(&s->ep.attached, memory_order_acquire)) {
        return false;
    }
    // acquire: as in cd_session_table_claim (a session moved to us, or closed under us).
    const struct entry *e = &s->table->e[s->entry];
    return atomic_load_explicit(&e->state, memory_order_acquire) == LIVE &&
           atomic_load_explicit(&e->worker, memory_order_acquire) == worker;
}

bool cd_session_is_attached(const cd_session *s) {
    return atomic_load_explicit(&s->ep.attached, memory_order_acquire);
}

void *cd_session_attached_ctx(const cd_session *s) {
    return atomic_load_explicit(&s->ep.attached, memory_order_acquire) ? s->ep.ctx : NULL;
}

bool cd_session_has_ended(const cd_session *s) {
    return atomic_load_explicit(&s->ep.ended, memory_order_acquire);
}

// Out of the worker's epoll for good: the I/O thread closes the connection.
static void endpoint_end(cd_session *s) {
    endpoint_unwatch(s);
    // release: pairs with the acquire in cd_session_has_ended.
    atomic_store_explicit(&s->ep.ended, true, memory_order_release);
}

bool cd_session_has_unanswered(cd_session *s) {
    if (s->p.mode == CD_MODE_REQUEST) {
        return s->asked != s->answered;
    }
    // acquire: pairs with the release in settle, so a result pushed before it is seen here.
    return s->asked != atomic_load_explicit(&s->settled, memory_order_acquire) ||
           cd_ring_peek(&s->out);
}

// A stream frame the worker took is done with. thread: the session's worker.
static void settle(cd_session *s) {
    // release: pairs with the acquire in cd_session_has_unanswered (the result pushed before).
    atomic_store_explicit(&s->settled, atomic_load_explicit(&s->settled, memory_order_relaxed) + 1,
                          memory_order_release);
}

bool cd_session_pump(cd_session *s, cd_counts *counts, int64_t seen_ns, int64_t tick_ns) {
    // acquire: pairs with the release in cd_session_attach. The epoll event that led here came
    // after the fields were written, but only this load says so in C11's terms.
    if (!atomic_load_explicit(&s->ep.attached, memory_order_acquire) ||
        atomic_load_explicit(&s->ep.ended, memory_order_relaxed)) {
        return false;
    }
    if (s->ep.input_ended) {
        return true; // an event from the same wait as the EOF: nothing is left to read
    }
    switch (s->ep.ops->pump(s->ep.ctx, counts, seen_ns, tick_ns)) {
    case CD_PUMP_OPEN:
        return true;
    case CD_PUMP_EOF:
        // A level-triggered EOF would wake the worker on every wait: out of the epoll, and the
        // session goes on until cd_session_flush finds everything answered.
        s->ep.input_ended = true;
        endpoint_unwatch(s);
        return true;
    case CD_PUMP_END:
        break;
    }
    endpoint_end(s);
    return false;
}

bool cd_session_flush(cd_session *s, int epfd, cd_counts *counts) {
    if (atomic_load_explicit(&s->ep.ended, memory_order_relaxed)) {
        return true;
    }
    if (s->ep.epfd < 0 && !s->ep.input_ended) {
        // This owner's first pass: the socket joins its epoll. Level-triggered, so input that
        // came while no epoll watched is reported at the next wait.
        struct epoll_event ev = {.events = EPOLLIN | (s->ep.want_write ? EPOLLOUT : 0),
                                 .data.ptr = s};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, s->ep.fd, &ev) < 0) {
            endpoint_end(s); // a socket no one watches is never served: close it instead
            return false;
        }
        s->ep.epfd = epfd;
    }
    const bool left = s->ep.ops->flush(s->ep.ctx, counts);
    if (s->ep.input_ended) {
        // Unwatched: what the socket does not take now is written on the next pass (a tick away
        // at most), or goes to the I/O thread with the connection once all is answered.
        if (cd_session_has_unanswered(s)) {
            return true;
        }
        endpoint_end(s);
        return false;
    }
    if (left != s->ep.want_write) {
        struct epoll_event ev = {.events = EPOLLIN | (left ? EPOLLOUT : 0), .data.ptr = s};
        (void)epoll_ctl(s->ep.epfd, EPOLL_CTL_MOD, s->ep.fd, &ev);
        s->ep.want_write = left;
    }
    return true;
}

bool cd_session_frame_allowed(cd_session *s, int64_t now_ns, int64_t *ret_early_ns) {
    // A frame conforms unless it comes more than a burst's worth of periods before its
    // theoretical arrival time.
    const int64_t interval = s->p.mode == CD_MODE_REQUEST
                                 ? s->p.period_ns
                                 : s->p.period_ns / CD_STREAM_FRAMES_PER_PERIOD;
    return cd_rate_conforms(&s->tat_ns, now_ns, interval, (CD_REQUEST_BURST - 1) * s->p.period_ns,
                            ret_early_ns);
}

cs_scene *cd_session_frame_scene(cd_session *s) {
    if (s->p.mode == CD_MODE_REQUEST) {
        // Every frame accepted has a place for its answer: the output ring never overflows, so
        // no request is answered into the void.
        if (s->asked - s->answered >= CD_SESSION_RESULTS) {
            return NULL;
        }
        cd_frame *f = cd_ring_claim(&s->queue);
        return f ? &f->scene : NULL;
    }
    cd_frame *f = cd_slot_back(&s->in);
    return &f->scene;
}

void cd_session_frame_publish(cd_session *s, cd_counts *counts, int64_t received_ns,
                              int64_t published_ns, int64_t tick_ns) {
    cd_counts *g = counts ? counts : &s->table->counts;
    cd_stat_inc(&s->counts.frames_received);
    cd_stat_inc(&g->frames_received);
    if (s->p.mode == CD_MODE_REQUEST) {
        cd_frame *f = cd_ring_claim(&s->queue);
        f->received_ns = received_ns;
        f->published_ns = published_ns;
        cd_ring_push(&s->queue);
        s->asked++;
        return;
    }
    cd_frame *f = cd_slot_back(&s->in);
    f->received_ns = received_ns;
    f->published_ns = published_ns;
    f->tick_ns = tick_ns;
    if (cd_slot_publish(&s->in)) {
        cd_stat_inc(&s->counts.frames_superseded);
        cd_stat_inc(&g->frames_superseded);
    } else {
        s->asked++; // the worker takes it, or the one that supersedes it
    }
}

void cd_session_frame_rejected(cd_session *s, cd_counts *counts, bool limited) {
    cd_counts *g = counts ? counts : &s->table->counts;
    cd_stat_inc(limited ? &s->counts.frames_limited : &s->counts.frames_invalid);
    cd_stat_inc(limited ? &g->frames_limited : &g->frames_invalid);
}

bool cd_session_job(cd_session *s, int64_t now_ns, int64_t epoch_ns, int64_t period_ns,
                    cd_counts *wc, cd_job *ret) {
    if (s->p.mode == CD_MODE_REQUEST) {
        cd_frame *f = cd_ring_peek(&s->queue);
        if (!f) {
            return false;
        }
        *ret = (cd_job){.frame = f, .release_ns = f->received_ns,
                        .deadline_ns = f->received_ns + s->p.budget_ns, .kind = CD_JOB_SOLVE};
        return true;
    }
    cd_frame *f = cd_slot_take(&s->in);
    if (f) {
        if (s->held) {
            // The newer frame wins; the one held for the tick never reaches it (nor does its
            // answer, when it was solved ahead: the claimed result is written over, its time
            // counted).
            cd_stat_inc(&s->counts.frames_passed);
            cd_stat_inc(&wc->frames_passed);
            if (s->ahead) {
                const int64_t took = ((cd_output *)cd_ring_claim(&s->out))->timing.solve_ns;
                cd_counter_add(&s->counts.ahead_dropped_ns, took);
                cd_counter_add(&wc->ahead_dropped_ns, took);
            }
            settle(s);
        }
        s->held = f;
        s->ahead = false;
    }
    if (!s->held) {
        return false;
    }
    // Found in a tick's pass: due at once, released when read (the wake-up may have been late).
    const cd_frame *h = s->held;
    const int64_t due = !h->tick_ns ? cd_grid_tick_after(h->received_ns, epoch_ns, period_ns)
                        : h->received_ns > h->tick_ns ? h->received_ns
                                                      : h->tick_ns;
    *ret = (cd_job){.frame = s->held, .release_ns = due, .deadline_ns = due + s->p.budget_ns};
    if (due <= now_ns) {
        ret->kind = s->ahead ? CD_JOB_SEND : CD_JOB_SOLVE;
        return true;
    }
    // Before its tick the frame may be solved ahead, once a tick (a frame that supersedes it
    // waits for the tick: the session costs at most one solve more a tick than without), and
    // only when the solve, by the session's cost so far, ends before the tick: the worker's
    // time at the tick belongs to what is due then (so not before a first solve has measured
    // it). Its result is sent at the tick.
    if (s->ahead || s->ahead_tick_ns == due || !s->costed ||
        now_ns + cd_session_cost_ns(s) >= due) {
        return false;
    }
    ret->kind = CD_JOB_AHEAD;
    return true;
}

// Why the deadline did not hold: a prompt start means the solve itself ran out of budget;
// otherwise the largest share of the delay decides: the frame read and decoded after it was due
// (by the I/O thread, or by the worker reading its sessions' sockets in turn), the worker's
// solves of other sessions (the scheduler), or the rest, when the worker was not running at all
// (a late wake-up, or a host that took its CPU: the host). A start past the deadline is never
// prompt: the solve had none of its budget (a budget under LATE_START_NS).
static cd_miss miss_reason(const cd_job *job, int64_t start_ns, int64_t others_ns) {
    const int64_t delay = start_ns - job->release_ns;
    if (delay <= LATE_START_NS && start_ns < job->deadline_ns) {
        return CD_MISS_SOLVER;
    }
    const int64_t handed = job->frame->published_ns - job->release_ns;
    const int64_t io = handed > 0 ? handed : 0;
    const int64_t left = delay - io > 0 ? delay - io : 0;
    const int64_t sched = others_ns < left ? others_ns : left;
    const int64_t host = left - sched;
    if (io >= host && io >= sched) {
        return CD_MISS_IO;
    }
    return host >= sched ? CD_MISS_HOST : CD_MISS_SCHEDULING;
}

// Solves job's frame into out from warm under the job's deadline (a solve ahead of its tick under
// its own budget from its start: it may not take more than a solve at the tick would), and fills
// out's timing and the session's cost.
static void solve(cd_session *s, const cd_job *job, cd_run *run, cd_output *out,
                  cs_warmstart *warm) {
    int64_t (*const clock_ns)(void) = run->clock_ns;
    const cs_scene *scene = &job->frame->scene;
    // A job that reaches its worker after the deadline still calls cs_step: with the deadline
    // past it returns the labelled fallback at once, so the client gets a Result saying so.
    const int64_t start_ns = clock_ns();
    const int64_t own_ns = start_ns + s->p.budget_ns;
    // The timing record gives this deadline, the one the solve ran under (a solve ahead stopped
    // by its budget would otherwise say it missed a deadline it ended long before).
    const int64_t deadline_ns = own_ns < job->deadline_ns ? own_ns : job->deadline_ns;
    const cs_options opt = {
        .solver = scene->solver != CS_SOLVER_DEFAULT ? scene->solver : s->p.default_solver,
        .deadline_ns = deadline_ns,
        .clock_ns = clock_ns,
    };
    const cs_status st = cs_step(s->ws, scene, &opt, warm, &out->result);
    const int64_t end_ns = clock_ns();
    // A solve stopped by its deadline misses it even when it gave no answer at all (the status
    // is then CS_NOANSWER, the solver's own outcome CS_DEADLINE).
    const bool met = end_ns <= deadline_ns && st != CS_DEADLINE &&
                     out->result.primary != CS_DEADLINE;
    run->solve_ns = end_ns - start_ns;
    out->timing = (cd_timing){
        .received_ns = job->frame->received_ns,
        .solve_start_ns = start_ns,
        .solve_ns = end_ns - start_ns,
        .deadline_ns = deadline_ns,
        .deadline_met = met,
        .miss = met ? CD_MISS_NONE : miss_reason(job, start_ns, run->others_ns),
        .release_ns = job->release_ns,
        .wake_late_ns = run->wake_late_ns,
    };
    // Peak-hold with decay: one long solve marks the session expensive at once; it counts as
    // cheap again only after about 8 solves' exponential average has come down.
    const int64_t cost = atomic_load_explicit(&s->cost_ns, memory_order_relaxed);
    const int64_t took = end_ns - start_ns;
    atomic_store_explicit(&s->cost_ns, took > cost ? took : cost + (took - cost) / 8,
                          memory_order_relaxed);
    s->costed = true;
}

// The frame of out's solve is answered: counted, and out pushed to the ring (or, overflow,
// dropped and counted).
static int answer(cd_session *s, cd_run *run, cd_output *out, bool overflow) {
    cd_counts *const wc = run->counts;
    const cs_status st = out->result.status;
    const int64_t took = out->timing.solve_ns;
    out->tick = run->tick;
    if (s->p.mode == CD_MODE_REQUEST) {
        cd_ring_pop(&s->queue);
    } else {
        s->held = NULL;
        s->ahead = false;
    }
    cd_stat_inc(&s->counts.frames_solved);
    cd_stat_inc(&wc->frames_solved);
    cd_counter_add(&s->counts.solve_ns, took);
    cd_counter_add(&wc->solve_ns, took);
    cd_hist_record(&s->counts.solve_hist, took);
    cd_hist_record(&wc->solve_hist, took);
    cd_hist_record(&s->counts.wake_late_hist, out->timing.wake_late_ns);
    cd_stat_inc(&s->counts.statuses[st - CD_STATUS_MIN]);
    cd_stat_inc(&wc->statuses[st - CD_STATUS_MIN]);
    if (!out->timing.deadline_met) {
        cd_stat_inc(&s->counts.deadline_misses);
        cd_stat_inc(&wc->deadline_misses);
        cd_stat_inc(&s->counts.misses[out->timing.miss]);
        cd_stat_inc(&wc->misses[out->timing.miss]);
    }
    if (overflow) {
        cd_stat_inc(&s->counts.results_overflow);
        cd_stat_inc(&wc->results_overflow);
    } else {
        cd_ring_push(&s->out);
    }
    if (s->p.mode == CD_MODE_STREAM) {
        settle(s); // after the push: a reader that sees it settled finds its result
    }
    return !overflow;
}

int cd_session_run(cd_session *s, const cd_job *job, cd_run *run) {
    cd_output *out = cd_ring_claim(&s->out);
    switch (job->kind) {
    case CD_JOB_AHEAD:
        run->solve_ns = 0;
        if (out) {
            // From the warm start the answers sent so far left, which this solve must not
            // change: a newer frame may yet replace this one.
            cs_warmstart_copy(s->warm_ahead, s->warm);
            solve(s, job, run, out, s->warm_ahead);
            s->ahead = true;
        }
        // A full ring: no solve ahead, the tick solves it (and drops the answer, counted).
        s->ahead_tick_ns = job->release_ns;
        return 0;
    case CD_JOB_SEND: {
        // The answer solved ahead goes out, and its warm start becomes the session's.
        cs_warmstart *w = s->warm;
        s->warm = s->warm_ahead;
        s->warm_ahead = w;
        run->solve_ns = 0;
        return answer(s, run, out, false);
    }
    case CD_JOB_SOLVE:
        break;
    }
    const bool overflow = out == NULL;
    if (overflow) {
        // Solve anyway, so the warm start follows the client's stream; the answer is dropped.
        out = &s->spare;
    }
    solve(s, job, run, out, s->warm);
    return answer(s, run, out, overflow);
}

int64_t cd_session_cost_ns(const cd_session *s) {
    return atomic_load_explicit(&s->cost_ns, memory_order_relaxed);
}

cd_output *cd_session_result_peek(cd_session *s) {
    return cd_ring_peek(&s->out);
}

void cd_session_result_pop(cd_session *s, bool unsent, cd_counts *counts) {
    cd_counts *g = counts ? counts : &s->table->counts;
    const cd_output *o = cd_ring_peek(&s->out);
    if (unsent) {
        cd_stat_inc(&s->counts.results_unsent);
        cd_stat_inc(&g->results_unsent);
    } else {
        const int64_t latency = o->timing.sent_ns - o->timing.received_ns;
        cd_hist_record(&s->counts.latency_hist, latency);
        cd_hist_record(&g->latency_hist, latency);
    }
    cd_ring_pop(&s->out);
    s->answered++;
}

void cd_session_stats(const cd_session *s, cd_stats *ret) {
    cd_counts_add(&s->counts, ret);
}
