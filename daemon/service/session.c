/* SPDX-License-Identifier: MIT */
/* Session admission, stepping and release (see session.h).
 *
 * Each table entry moves through FREE -> LIVE -> CLOSING -> RETIRED -> FREE. The I/O thread makes
 * every transition except CLOSING -> RETIRED, which the tick thread makes when it sees a closed
 * session and promises never to touch it again; only then does the I/O thread free the memory.
 * So the tick thread never waits for the I/O thread, and the I/O thread never frees a session
 * the tick thread may be stepping. Frames travel I/O -> tick thread through a latest-value slot,
 * results tick thread -> I/O through an SPSC ring; both are lock-free. */
#include "service/session.h"

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "service/clock.h"
#include "service/ring.h"
#include "service/slot.h"
#include "solver/contact.h"

enum entry_state { FREE, LIVE, CLOSING, RETIRED };

struct cd_session {
    cd_session_table *table;
    int entry;               /* index in table->e */
    uint64_t id;
    cs_limits lim;
    cs_solver default_solver;
    cs_workspace *ws;        /* rt while LIVE */
    cs_warmstart *warm;      /* rt while LIVE */
    cd_slot in;              /* producer io, consumer rt */
    cd_frame frames[3];      /* the slot's buffers */
    cd_ring out;             /* producer rt, consumer io; elements are cd_output */
    cd_output spare;         /* rt: solved into when the ring is full, then dropped */
    void *mem;               /* frame and result arrays, one block */
    cd_counts counts;
};

struct entry {
    _Atomic int state; /* enum entry_state */
    cd_session *s;     /* written by io before LIVE is published */
};

struct cd_session_table {
    int n;
    uint64_t next_id;        /* io */
    _Atomic uint32_t open;   /* io writes: sessions admitted and not closed */
    cd_counts counts;        /* daemon-wide, same writers as the sessions' own counters */
    struct entry e[];
};

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
    }
    return t;
}

static void session_free(cd_session *s) {
    cd_ring_fini(&s->out);
    cs_workspace_free(s->ws);
    cs_warmstart_free(s->warm);
    free(s->mem);
    free(s);
}

void cd_session_table_free(cd_session_table *t) {
    if (!t) {
        return;
    }
    for (int i = 0; i < t->n; i++) {
        if (atomic_load_explicit(&t->e[i].state, memory_order_acquire) != FREE) {
            session_free(t->e[i].s);
        }
    }
    free(t);
}

static size_t round64(size_t n) {
    return (n + 63) / 64 * 64;
}

// Allocates the frame and result arrays in one prefaulted block and points the three frame
// buffers, every ring element and the spare output into it.
static int session_alloc_arrays(cd_session *s) {
    const size_t bodies = round64((size_t)s->lim.max_bodies * sizeof(cs_body));
    const size_t contacts = round64((size_t)s->lim.max_contacts * sizeof(cs_contact));
    const size_t result = round64(cs_result_size(&s->lim));
    const size_t nres = CD_SESSION_RESULTS + 1;
    const size_t size = 3 * (bodies + contacts) + nres * result;
    unsigned char *mem = aligned_alloc(64, size);
    if (!mem) {
        return -ENOMEM;
    }
    // Touch every page now so the first ticks do not take page faults on the RT thread.
    memset(mem, 0, size);
    s->mem = mem;
    for (int i = 0; i < 3; i++) {
        s->frames[i].scene.bodies = (cs_body *)mem;
        mem += bodies;
        s->frames[i].scene.contacts = (cs_contact *)mem;
        mem += contacts;
    }
    for (size_t i = 0; i < CD_SESSION_RESULTS; i++) {
        cd_output *o = cd_ring_at(&s->out, i);
        cs_result_init(&o->result, mem, &s->lim);
        mem += result;
    }
    cs_result_init(&s->spare.result, mem, &s->lim);
    return 0;
}

int cd_session_admit(cd_session_table *t, const cs_limits *lim, cs_solver default_solver,
                     cd_session **ret) {
    if (lim->max_bodies < 1 || lim->max_contacts < 0 || lim->max_dirs < 0 ||
        default_solver <= CS_SOLVER_DEFAULT || default_solver >= CS_SOLVER_COUNT) {
        return -EINVAL;
    }
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
    cd_session *s = calloc(1, sizeof *s);
    if (!s) {
        return -ENOMEM;
    }
    s->table = t;
    s->entry = idx;
    s->lim = *lim;
    s->default_solver = default_solver;
    int r = cd_ring_init(&s->out, CD_SESSION_RESULTS, sizeof(cd_output));
    if (r < 0) {
        goto out_free;
    }
    r = -ENOMEM;
    s->ws = cs_workspace_new(lim);
    s->warm = cs_warmstart_new(lim);
    if (!s->ws || !s->warm) {
        goto out_free;
    }
    r = session_alloc_arrays(s);
    if (r < 0) {
        goto out_free;
    }
    cd_slot_init(&s->in, &s->frames[0], &s->frames[1], &s->frames[2]);
    s->id = t->next_id++;
    t->e[idx].s = s;
    // release: pairs with the acquire in cd_session_table_tick, which then sees the whole
    // session built above.
    atomic_store_explicit(&t->e[idx].state, LIVE, memory_order_release);
    atomic_store_explicit(&t->open, atomic_load_explicit(&t->open, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    *ret = s;
    return 0;

out_free:
    session_free(s);
    return r;
}

void cd_session_close(cd_session *s) {
    cd_session_table *t = s->table;
    // relaxed: the new state carries no data for the tick thread; it only has to notice it.
    atomic_store_explicit(&t->e[s->entry].state, CLOSING, memory_order_relaxed);
    atomic_store_explicit(&t->open, atomic_load_explicit(&t->open, memory_order_relaxed) - 1,
                          memory_order_relaxed);
}

int cd_session_table_reap(cd_session_table *t) {
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        struct entry *e = &t->e[i];
        // acquire: pairs with the release in cd_session_table_tick that retired the entry, so
        // every access of the tick thread to the session happened before we free it.
        if (atomic_load_explicit(&e->state, memory_order_acquire) == RETIRED) {
            session_free(e->s);
            e->s = NULL;
            // relaxed: the tick thread ignores FREE entries; admission publishes with release.
            atomic_store_explicit(&e->state, FREE, memory_order_relaxed);
            n++;
        }
    }
    return n;
}

// Steps one session if it has a new frame. Returns 1 when a result was pushed.
// thread: rt. No malloc, no locks, no blocking calls.
static int tick_session(cd_session *s, uint64_t tick, int64_t deadline_ns) {
    const cd_frame *f = cd_slot_take(&s->in);
    if (!f) {
        return 0;
    }
    cd_output *out = cd_ring_claim(&s->out);
    const bool overflow = out == NULL;
    if (overflow) {
        // Solve anyway, so the warm start follows the client's stream; the answer is dropped.
        out = &s->spare;
    }
    const cs_options opt = {
        .solver = f->scene.solver != CS_SOLVER_DEFAULT ? f->scene.solver : s->default_solver,
        .deadline_ns = deadline_ns,
        .clock_ns = cd_clock_ns,
    };
    // A tick that reaches this session after the deadline still calls cs_step: with the
    // deadline already past it returns the labelled fallback answer (CS_DEADLINE) at once, so
    // the client gets a Result that says so instead of silence.
    const int64_t start_ns = cd_clock_ns();
    const cs_status st = cs_step(s->ws, &f->scene, &opt, s->warm, &out->result);
    const int64_t end_ns = cd_clock_ns();

    out->tick = tick;
    out->late_start = start_ns >= deadline_ns;
    out->timing = (cd_timing){
        .received_ns = f->received_ns,
        .solve_start_ns = start_ns,
        .solve_ns = end_ns - start_ns,
        .deadline_ns = deadline_ns,
        .deadline_met = end_ns <= deadline_ns && st != CS_DEADLINE,
    };
    cd_counts *g = &s->table->counts;
    cd_stat_inc(&s->counts.frames_solved);
    cd_stat_inc(&g->frames_solved);
    cd_counter_add(&s->counts.solve_ns, end_ns - start_ns);
    cd_counter_add(&g->solve_ns, end_ns - start_ns);
    if (!out->timing.deadline_met) {
        cd_stat_inc(&s->counts.deadline_misses);
        cd_stat_inc(&g->deadline_misses);
    }
    if (overflow) {
        cd_stat_inc(&s->counts.results_overflow);
        cd_stat_inc(&g->results_overflow);
        return 0;
    }
    cd_ring_push(&s->out);
    return 1;
}

int cd_session_table_tick(cd_session_table *t, uint64_t tick, int64_t deadline_ns) {
    int work = 0;
    for (int i = 0; i < t->n; i++) {
        struct entry *e = &t->e[i];
        // acquire: pairs with the release in cd_session_admit (the session is fully built).
        const int state = atomic_load_explicit(&e->state, memory_order_acquire);
        if (state == LIVE) {
            work += tick_session(e->s, tick, deadline_ns);
        } else if (state == CLOSING) {
            // release: pairs with the acquire in cd_session_table_reap; after this store the
            // tick thread never touches the session again.
            atomic_store_explicit(&e->state, RETIRED, memory_order_release);
            work++;
        }
    }
    return work;
}

void cd_session_table_stats(const cd_session_table *t, cd_stats *ret) {
    cd_counts_read(&t->counts, ret);
    ret->sessions = atomic_load_explicit(&t->open, memory_order_relaxed);
}

uint64_t cd_session_id(const cd_session *s) {
    return s->id;
}

const cs_limits *cd_session_limits(const cd_session *s) {
    return &s->lim;
}

cs_solver cd_session_default_solver(const cd_session *s) {
    return s->default_solver;
}

cs_scene *cd_session_frame_scene(cd_session *s) {
    cd_frame *f = cd_slot_back(&s->in);
    return &f->scene;
}

void cd_session_frame_publish(cd_session *s, int64_t received_ns) {
    cd_frame *f = cd_slot_back(&s->in);
    f->received_ns = received_ns;
    cd_counts *g = &s->table->counts;
    cd_stat_inc(&s->counts.frames_received);
    cd_stat_inc(&g->frames_received);
    if (cd_slot_publish(&s->in)) {
        cd_stat_inc(&s->counts.frames_superseded);
        cd_stat_inc(&g->frames_superseded);
    }
}

void cd_session_frame_rejected(cd_session *s) {
    cd_stat_inc(&s->counts.frames_invalid);
    cd_stat_inc(&s->table->counts.frames_invalid);
}

cd_output *cd_session_result_peek(cd_session *s) {
    return cd_ring_peek(&s->out);
}

void cd_session_result_pop(cd_session *s, bool unsent) {
    cd_ring_pop(&s->out);
    if (unsent) {
        cd_stat_inc(&s->counts.results_unsent);
        cd_stat_inc(&s->table->counts.results_unsent);
    }
}

void cd_session_stats(const cd_session *s, cd_stats *ret) {
    cd_counts_read(&s->counts, ret);
}
