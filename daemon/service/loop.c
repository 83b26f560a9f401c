/* SPDX-License-Identifier: MIT */
/* The worker threads (see loop.h). Worker 2c is CPU c's foreground worker and 2c + 1 its background
 * worker; each is the other's partner for moving sessions between the two. A worker sleeps in
 * epoll_pwait2 until the next tick on CLOCK_MONOTONIC (the timeout is computed from the clock just
 * before the call, so no error accumulates), until a kick from the I/O thread (an eventfd in the
 * epoll set) or until a socket it serves itself has bytes (sessions attached by the I/O thread:
 * their frames are read, solved and answered here, with no thread in between); with keep_awake, a
 * foreground worker that serves sessions polls the epoll for the last TICK_SPIN_NS before its
 * tick instead of sleeping to it, so the tick finds it running. The kick is a Dekker
 * pair: the worker announces that it sleeps and then checks the word, the I/O thread bumps the word
 * and then checks the announcement, both sequentially consistent, so either the worker sees the
 * bump or the I/O thread sees the sleeper (and signals the eventfd). */
#include "service/loop.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "service/awake.h"
#include "service/clock.h"
#include "service/sched.h"
#include "sys/log.h"

/* Nice value of a background worker when SCHED_FIFO is not available: the kernel then gives the
 * foreground worker on the same CPU about 98 % of it whenever both want to run. */
#define BACKGROUND_NICE 19
/* Nice value of the pool threads that admit and free sessions. */
#define POOL_NICE 19
/* Events one epoll wait returns at most; more stay queued for the next. */
#define EVENTS 32
/* How long before its tick a foreground worker on a CPU kept awake stops sleeping and polls its
 * epoll instead, while it serves sessions: a timer wake-up on a running CPU of the 2-vCPU machine
 * here is 8 us late at p50 and 15 us at p99 (bench_service's wake case); polled, the tick starts
 * within a poll (about 1 us). It costs that CPU 3 % at 1 kHz. */
#define TICK_SPIN_NS 30000

struct worker {
    cd_loop *loop;
    cd_sched sched;          /* worker */
    pthread_t thread;        /* io */
    bool created;            /* io */
    int cpu;                 /* io: -1 = unpinned */
    _Atomic uint32_t kick;   /* io bumps it, the worker looks at it before it sleeps */
    int epfd;                /* io makes it: the kick eventfd and the attached sockets */
    int kickfd;              /* eventfd: signalled when a kick finds the worker asleep */
    _Atomic int64_t kick_ns; /* io: when it last kicked (how late a kicked wake-up is) */
    _Atomic bool sleeping;   /* the worker announces its futex wait */
    _Atomic uint64_t ticks;  /* worker: wake-ups at a tick */
    _Atomic uint64_t ticks_polled; /* worker: of those, the ones it reached polling (spin_ns) */
    _Atomic uint64_t overruns; /* worker: runs that ended after the next tick */
    cd_counter wake_late_ns; /* worker: lateness of each wake-up at a tick */
    _Atomic int serving;     /* worker: sessions it owned at its last pass; the poller reads it */
    cd_awake *awake;         /* io: the poller keeping this worker's CPU awake, or NULL */
    int64_t spin_ns;         /* io, before the worker starts: how long before a tick it stops
                              * sleeping and polls instead while it serves sessions (0: it
                              * sleeps to the tick) */
};

struct cd_loop {
    cd_session_table *table;
    uv_async_t *wake;
    cd_loop_params p;
    int64_t period_ns;
    int64_t epoch_ns;        /* io writes before the workers start */
    bool started;            /* io */
    bool realtime;           /* io: SCHED_FIFO obtained */
    _Atomic bool running;    /* io writes, workers read */
    int n;                   /* threads: 2 * p.workers */
    struct worker w[];
};

cd_loop *cd_loop_new(cd_session_table *t, const cd_loop_params *p, struct uv_async_s *wake) {
    if (p->rate_hz < 1 || p->rate_hz > 100000 || p->workers < 1 || p->workers > 256 ||
        p->long_solve_ns <= 0 || p->priority < 2 || p->priority > 99 || p->cpu < -1) {
        return NULL;
    }
    const int n = 2 * p->workers;
    cd_loop *l = calloc(1, sizeof *l + (size_t)n * sizeof l->w[0]);
    if (!l) {
        return NULL;
    }
    // n first: cd_loop_free closes what a failure half-way through already opened.
    l->n = n;
    for (int i = 0; i < n; i++) {
        l->w[i].epfd = l->w[i].kickfd = -1;
    }
    for (int i = 0; i < n; i++) {
        struct worker *w = &l->w[i];
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        w->kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        // data.ptr NULL marks the kick; every other event is an attached session.
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        if (w->epfd < 0 || w->kickfd < 0 ||
            epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->kickfd, &ev) < 0) {
            cd_loop_free(l);
            return NULL;
        }
    }
    l->table = t;
    l->wake = wake;
    l->p = *p;
    l->period_ns = CD_NS_PER_S / p->rate_hz;
    atomic_init(&l->running, false);
    for (int i = 0; i < n; i++) {
        struct worker *w = &l->w[i];
        w->loop = l;
        w->cpu = -1;
        w->sched = (cd_sched){
            .table = t,
            .worker = i,
            .partner = i ^ 1,
            .background = i & 1,
            .long_ns = p->long_solve_ns,
            .period_ns = l->period_ns,
            .clock_ns = cd_clock_ns,
            .epfd = w->epfd,
        };
        atomic_init(&w->kick, 0);
        atomic_init(&w->kick_ns, 0);
        atomic_init(&w->sleeping, false);
        atomic_init(&w->serving, 0);
    }
    return l;
}

void cd_loop_free(cd_loop *l) {
    if (!l) {
        return;
    }
    for (int i = 0; i < l->n; i++) {
        if (l->w[i].epfd >= 0) {
            close(l->w[i].epfd);
        }
        if (l->w[i].kickfd >= 0) {
            close(l->w[i].kickfd);
        }
    }
    free(l);
}

/* Why a sleep ended; WAKE_TICK_POLLED: the tick came while the worker polled for it. */
enum wake { WAKE_TICK, WAKE_TICK_POLLED, WAKE_KICK, WAKE_SOCKET, WAKE_NO_SLEEP };

// Keeps the sockets' events of ev[0, n) at its front and returns how many; the kick only needs
// its eventfd emptied (*ret_kicked says whether it was there).
static int keep_sockets(struct worker *w, struct epoll_event *ev, int n, bool *ret_kicked) {
    int kept = 0;
    *ret_kicked = false;
    for (int i = 0; i < n; i++) {
        if (ev[i].data.ptr) {
            ev[kept++] = ev[i];
        } else {
            uint64_t count;
            *ret_kicked = read(w->kickfd, &count, sizeof count) > 0 || *ret_kicked;
        }
    }
    return kept;
}

// Sleeps until the absolute CLOCK_MONOTONIC time t_ns unless the kick word moves from seen or an
// attached socket is ready; those sockets' events go into ev (*ret_n of them), and *ret_ready_ns
// says when the wait reported them. Says why it returned: the time came (while it slept, or
// while it polled), a kick ended the sleep, a socket did, or a kick came before it began.
static enum wake sleep_until(struct worker *w, uint32_t seen, int64_t t_ns,
                             struct epoll_event *ev, int *ret_n, int64_t *ret_ready_ns) {
    // seq_cst: the announcement must be visible before we look at the word (see the file
    // header); pairs with the seq_cst bump and load in cd_loop_kick.
    atomic_store(&w->sleeping, true);
    bool kicked = false, polled = false;
    int n = 0;
    // relaxed: its own store, from its last pass.
    const bool serving = atomic_load_explicit(&w->serving, memory_order_relaxed) > 0;
    // A background worker without sessions keeps no tick: it sleeps until a kick (its partner
    // kicks it when it moves a session to it), so that no timer of its fires at the foreground
    // worker's tick (an interrupt there cost the tick 5 us here).
    const bool forever = w->sched.background && !serving;
    if (atomic_load(&w->kick) == seen) {
        const int64_t spin = serving ? w->spin_ns : 0;
        const int64_t left = t_ns - spin - cd_clock_ns();
        if (left > 0 || forever) {
            const struct timespec ts = {.tv_sec = left > 0 ? left / CD_NS_PER_S : 0,
                                        .tv_nsec = left > 0 ? left % CD_NS_PER_S : 0};
            // EINTR just ends the wait; the caller looks at the clock and the sessions again.
            n = epoll_pwait2(w->epfd, ev, EVENTS, forever ? NULL : &ts, NULL);
            n = n > 0 ? n : 0;
        }
        // The last stretch polled, so the tick finds the worker running: no timer wake-up,
        // whose lateness is most of a tick's on a virtual machine. The kick word and the
        // sockets are watched meanwhile.
        while (n == 0 && spin > 0 && atomic_load(&w->kick) == seen &&
               cd_clock_ns() < t_ns) {
            n = epoll_wait(w->epfd, ev, EVENTS, 0);
            n = n > 0 ? n : 0;
            polled = true;
        }
    }
    *ret_ready_ns = cd_clock_ns();
    atomic_store(&w->sleeping, false);
    const int kept = keep_sockets(w, ev, n, &kicked);
    *ret_n = kept;
    if (!forever && cd_clock_ns() >= t_ns) {
        return polled ? WAKE_TICK_POLLED : WAKE_TICK;
    }
    // A wait that ended early with nothing to show (EINTR) counts as no sleep: the caller looks
    // again and sleeps for the rest.
    return kept ? WAKE_SOCKET : kicked ? WAKE_KICK : WAKE_NO_SLEEP;
}

// Ends w's sleep, or its next one: see the file header for the pairing.
static void kick(struct worker *w) {
    atomic_store_explicit(&w->kick_ns, cd_clock_ns(), memory_order_relaxed);
    // seq_cst: pairs with the seq_cst announcement and load in sleep_until; the bump also
    // releases the frame the I/O thread queued before it (acquired in worker_main).
    atomic_fetch_add(&w->kick, 1);
    if (atomic_load(&w->sleeping)) {
        const uint64_t one = 1;
        (void)!write(w->kickfd, &one, sizeof one);
    }
}

// The attached sockets that were ready at ready_ns: each one's input is read and handled while
// the session is still ours (a closed or moved session's event is stale and skipped), its frames
// received at ready_ns however long the sockets before it took, and counting for tick_ns when they
// are read for that tick (0: they are not). Returns how many connections ended (the I/O thread
// closes them).
static int serve_sockets(struct worker *w, const struct epoll_event *ev, int n, int64_t ready_ns,
                         int64_t tick_ns) {
    int ended = 0;
    for (int i = 0; i < n; i++) {
        cd_session *s = ev[i].data.ptr;
        if (cd_session_is_ours(s, w->sched.worker) &&
            !cd_session_pump(s, &w->sched.counts, ready_ns, tick_ns)) {
            ended++;
        }
    }
    return ended;
}

// For the attached sessions this worker owns: their sockets into its epoll (those just attached or
// moved here), and their results (and any output they had left) out; and how many sessions it
// owns, for its CPU's poller. Returns the closed sessions it let go of (cd_session_table_claim)
// and the connections that ended.
static int flush_sockets(struct worker *w) {
    cd_session_table *t = w->loop->table;
    int released = 0, owned = 0;
    for (int i = 0; i < cd_session_table_size(t); i++) {
        cd_session *s = cd_session_table_claim(t, i, w->sched.worker, &released);
        owned += s != NULL;
        if (s && cd_session_is_attached(s) && !cd_session_flush(s, w->epfd, &w->sched.counts)) {
            released++;
        }
    }
    atomic_store_explicit(&w->serving, owned, memory_order_relaxed);
    return released;
}

// The poller's question for the CPU of worker ctx: does any worker on that CPU own a session?
static bool cpu_serves(const void *ctx) {
    const struct worker *w = ctx;
    const cd_loop *l = w->loop;
    for (int i = 0; i < l->n; i++) {
        // relaxed: a hint; a session's first pass on the worker updates it within a tick.
        if (l->w[i].cpu == w->cpu && atomic_load_explicit(&l->w[i].serving, memory_order_relaxed)) {
            return true;
        }
    }
    return false;
}

// One poller per distinct worker CPU (the first foreground worker there holds it). Returns how
// many CPUs are kept awake; a poller that cannot start is logged and done without.
static int start_pollers(cd_loop *l) {
    int kept = 0;
    for (int i = 0; i < l->n; i += 2) {
        struct worker *w = &l->w[i];
        bool first = w->cpu >= 0;
        for (int j = 0; j < i && first; j += 2) {
            first = l->w[j].cpu != w->cpu;
        }
        if (!first) {
            continue;
        }
        const int r = cd_awake_start(w->cpu, cpu_serves, w, &w->awake);
        if (r < 0) {
            cd_log(CD_LOG_WARNING, "keeping CPU %d awake refused (%s), it may halt between "
                   "wake-ups", w->cpu, strerror(-r));
        }
        kept += r == 0;
    }
    return kept;
}

static void stop_pollers(cd_loop *l) {
    for (int i = 0; i < l->n; i++) {
        cd_awake_stop(l->w[i].awake);
        l->w[i].awake = NULL;
    }
}

// thread: worker. The whole life of a worker; no malloc, no locks, no logging.
static void *worker_main(void *arg) {
    struct worker *w = arg;
    cd_loop *l = w->loop;
    // "cd-fg0", "cd-bg0", ...: what top -H shows, and what the allocation tests count by.
    char name[16];
    snprintf(name, sizeof name, "cd-%s%u", w->sched.background ? "bg" : "fg",
             (unsigned)(w->sched.worker / 2) % 256u);
    (void)pthread_setname_np(pthread_self(), name);
    if (w->sched.background && !l->realtime) {
        // Without SCHED_FIFO the background worker yields to the foreground one by weight.
        (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), BACKGROUND_NICE);
    }
    int64_t late = 0;
    struct epoll_event ev[EVENTS];
    int nev = 0;
    int64_t ready_ns = 0, ready_tick_ns = 0;
    int64_t next = 0;   /* the tick waited for */
    int64_t looked = 0; /* the last tick whose sockets were looked at once more (below) */
    // acquire: pairs with the release in cd_loop_stop; nothing else is published through it.
    while (atomic_load_explicit(&l->running, memory_order_acquire)) {
        // acquire: pairs with the release bump in cd_loop_kick (the frame it announces).
        const uint32_t seen = atomic_load_explicit(&w->kick, memory_order_acquire);
        // Sockets first, while every session they name is still in the table: the scheduler may
        // let go of a closed one, which the I/O thread may then free.
        int io_work = serve_sockets(w, ev, nev, ready_ns, ready_tick_ns);
        nev = 0;
        if (next > 0 && looked != next && cd_clock_ns() >= next) {
            // The tick came (or this pass woke for it) while this worker read sockets, a burst of
            // frames aimed at it: whatever else is there by now counts for it too, as on a
            // wake-up at the tick, rather than waiting for its solves to end and then for the
            // next tick, where the next frame would supersede it.
            looked = next;
            bool kicked;
            const int n = epoll_wait(w->epfd, ev, EVENTS, 0);
            const int k = keep_sockets(w, ev, n > 0 ? n : 0, &kicked);
            io_work += serve_sockets(w, ev, k, cd_clock_ns(), next);
        }
        int moved;
        io_work += cd_sched_run(&w->sched, late, &next, &moved);
        io_work += flush_sockets(w);
        if (io_work > 0) {
            // One non-blocking eventfd write; libuv coalesces wakes the I/O loop has not seen.
            (void)uv_async_send(l->wake);
        }
        if (moved > 0) {
            // The partner takes the moved sessions now rather than at its next tick.
            kick(&l->w[w->sched.partner]);
        }
        if (w->sched.ahead_ran) {
            // What came while it solved ahead is read before the next solve ahead (counting for
            // the tick, should that have come meanwhile, as on a wake-up at it).
            bool kicked;
            const int n = epoll_wait(w->epfd, ev, EVENTS, 0);
            nev = keep_sockets(w, ev, n > 0 ? n : 0, &kicked);
            ready_ns = cd_clock_ns();
            ready_tick_ns = ready_ns >= next ? next : 0;
            late = 0;
            continue;
        }
        if (cd_clock_ns() >= next) {
            // The work ran into the next tick: count it and look again at once.
            cd_stat_inc(&w->overruns);
            late = 0;
            continue;
        }
        const enum wake why = sleep_until(w, seen, next, ev, &nev, &ready_ns);
        const bool at_tick = why == WAKE_TICK || why == WAKE_TICK_POLLED;
        ready_tick_ns = at_tick ? next : 0;
        if (at_tick) {
            late = cd_clock_ns() - next;
            cd_stat_inc(&w->ticks);
            if (why == WAKE_TICK_POLLED) {
                cd_stat_inc(&w->ticks_polled);
            }
            cd_counter_add(&w->wake_late_ns, late);
            if (!w->sched.background) {
                // The daemon's histogram is the foreground workers', as ticks are.
                cd_hist_record(&w->sched.counts.wake_late_hist, late);
            }
        } else if (why == WAKE_SOCKET) {
            // The socket woke us the moment its bytes came: there is no lateness to speak of
            // beyond what the frame's own timing record shows.
            late = 0;
        } else if (why == WAKE_KICK) {
            // Late by however long the host took to run us after the kick.
            late = cd_clock_ns() - atomic_load_explicit(&w->kick_ns, memory_order_relaxed);
            late = late > 0 ? late : 0;
        } else {
            late = 0;
        }
    }
    return NULL;
}

void cd_loop_kick(cd_loop *l, const cd_session *s) {
    kick(&l->w[cd_session_worker(s)]);
}

void cd_loop_attach(cd_loop *l, cd_session *s, int fd, const cd_endpoint_ops *ops, void *ctx) {
    cd_session_attach(s, fd, ops, ctx);
    // The owner watches the socket from its next pass; if s moves meanwhile, the new owner's
    // first pass (at its next tick at the latest) does it.
    kick(&l->w[cd_session_worker(s)]);
}

int cd_loop_place(const cd_loop *l) {
    // Sum the measured cost of every session by the CPU it runs on (either worker of the pair).
    int64_t load[256] = {0};
    for (int i = 0; i < cd_session_table_size(l->table); i++) {
        const cd_session *s = cd_session_table_at(l->table, i);
        if (s) {
            load[cd_session_worker(s) / 2] += cd_session_cost_ns(s);
        }
    }
    int best = 0;
    for (int c = 1; c < l->p.workers; c++) {
        best = load[c] < load[best] ? c : best;
    }
    return 2 * best;
}

// The CPUs the workers are pinned to, into cpus[p.workers]: p.cpu downwards, or the highest CPUs
// this process may run on (CPU 0 usually takes the most interrupts). Workers beyond the CPUs
// available share them round-robin. Returns false when there is no CPU to choose.
static bool pick_cpus(const cd_loop *l, int *cpus) {
    cpu_set_t set;
    if (l->p.cpu >= 0) {
        for (int c = 0; c < l->p.workers; c++) {
            cpus[c] = l->p.cpu - c >= 0 ? l->p.cpu - c : l->p.cpu;
        }
        return true;
    }
    if (sched_getaffinity(0, sizeof set, &set) < 0 || CPU_COUNT(&set) == 0) {
        return false;
    }
    int c = 0;
    while (c < l->p.workers) {
        for (int cpu = CPU_SETSIZE - 1; cpu >= 0 && c < l->p.workers; cpu--) {
            if (CPU_ISSET(cpu, &set)) {
                cpus[c++] = cpu;
            }
        }
    }
    return true;
}

// Returns true when all present and future memory of the process is locked.
static bool lock_memory(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // ASan and TSan map terabytes of shadow memory; locking it all would exhaust the machine.
    cd_log(CD_LOG_WARNING, "mlockall skipped in a sanitizer build, memory stays pageable");
    return false;
#else
    if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0) {
        cd_log(CD_LOG_WARNING, "mlockall refused (%s), continuing with pageable memory",
               strerror(errno));
        return false;
    }
    return true;
#endif
}

// Creates w's thread, at SCHED_FIFO priority prio when prio > 0. Returns 0 or an errno.
static int create_thread(struct worker *w, int prio) {
    pthread_attr_t attr;
    int r = pthread_attr_init(&attr);
    if (r != 0) {
        return r;
    }
    if (prio > 0) {
        const struct sched_param sp = {.sched_priority = prio};
        r = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        if (r == 0) {
            r = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
        }
        if (r == 0) {
            r = pthread_attr_setschedparam(&attr, &sp);
        }
    }
    if (r == 0 && w->cpu >= 0 && w->cpu < CPU_SETSIZE) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        r = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    if (r == 0) {
        // Workers start with every signal blocked (they inherit the mask), so signal handlers
        // run on the I/O thread and never interrupt a solve.
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = pthread_create(&w->thread, &attr, worker_main, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_attr_destroy(&attr);
    w->created = r == 0;
    return r;
}

// Stops and joins the workers created so far.
static void join_workers(cd_loop *l) {
    // release: pairs with the acquire in worker_main.
    atomic_store_explicit(&l->running, false, memory_order_release);
    for (int i = 0; i < l->n; i++) {
        if (l->w[i].created) {
            kick(&l->w[i]);
            pthread_join(l->w[i].thread, NULL);
            l->w[i].created = false;
        }
    }
}

void cd_loop_thread_off_workers(const cd_loop *l) {
    const struct sched_param sp = {.sched_priority = 0};
    (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
    // Last among normal threads: a client woken on this CPU runs at once rather than after the
    // rest of an admission (1.8 ms runs of a pool thread held a client off the CPU it woke on).
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), POOL_NICE);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0) {
        return;
    }
    for (int i = 0; i < l->n; i += 2) {
        if (l->w[i].cpu >= 0 && l->w[i].cpu < CPU_SETSIZE) {
            CPU_CLR(l->w[i].cpu, &set);
        }
    }
    if (CPU_COUNT(&set) > 0) {
        (void)sched_setaffinity(0, sizeof set, &set);
    }
}

int cd_loop_start(cd_loop *l) {
    if (l->started) {
        return -EALREADY;
    }
    const bool locked = l->p.realtime && lock_memory();
    int cpus[256];
    const bool pinned = l->p.realtime && pick_cpus(l, cpus);
    l->epoch_ns = cd_clock_ns();
    for (int i = 0; i < l->n; i++) {
        l->w[i].sched.epoch_ns = l->epoch_ns;
        l->w[i].cpu = pinned ? cpus[i / 2] : -1;
        // The foreground workers of the CPUs kept awake (the background's ticks matter less).
        l->w[i].spin_ns = pinned && l->p.keep_awake && !(i & 1) ? TICK_SPIN_NS : 0;
    }
    // release: pairs with the acquire in worker_main (and thread creation orders it anyway).
    atomic_store_explicit(&l->running, true, memory_order_release);
    // SCHED_FIFO for all or for none: a foreground worker must always outrank its background.
    l->realtime = l->p.realtime;
    int r = 0;
    for (int pass = 0; pass < 2; pass++) {
        r = 0;
        for (int i = 0; i < l->n && r == 0; i++) {
            // Foreground at p.priority, background one below.
            const int prio = l->realtime ? l->p.priority - (i & 1) : 0;
            r = create_thread(&l->w[i], prio);
            if (r != 0 && l->w[i].cpu >= 0) {
                // The CPU may be outside a container's set: run unpinned rather than not at all.
                cd_log(CD_LOG_WARNING, "pinning worker %d to CPU %d refused (%s), continuing "
                       "unpinned", i, l->w[i].cpu, strerror(r));
                l->w[i].cpu = -1;
                r = create_thread(&l->w[i], prio);
            }
        }
        if (r == 0 || !l->realtime) {
            break;
        }
        join_workers(l);
        atomic_store_explicit(&l->running, true, memory_order_release);
        cd_log(CD_LOG_WARNING, "SCHED_FIFO refused (%s), continuing at normal priority",
               strerror(r));
        l->realtime = false;
    }
    if (r != 0) {
        join_workers(l);
        cd_log(CD_LOG_ERR, "cannot start the workers: %s", strerror(r));
        return -r;
    }
    l->started = true;
    char where[64] = "unpinned";
    if (l->w[0].cpu >= 0) {
        snprintf(where, sizeof where, "first on CPU %d", l->w[0].cpu);
    }
    // Only a pinned worker's CPU can be kept awake for it.
    char awake[64] = "keep_awake off";
    if (l->p.keep_awake) {
        snprintf(awake, sizeof awake, "%d CPU(s) kept awake while they serve sessions",
                 l->w[0].cpu >= 0 ? start_pollers(l) : 0);
    }
    cd_log(CD_LOG_INFO, "workers: %d CPU(s) x (foreground + background), %d Hz ticks, %s, %s, "
           "memory %s, solves over %lld ns run in the background, %s", l->p.workers,
           l->p.rate_hz, l->realtime ? "SCHED_FIFO" : "normal priority", where,
           locked ? "locked" : "pageable", (long long)l->p.long_solve_ns, awake);
    return 0;
}

void cd_loop_stop(cd_loop *l) {
    if (!l->started) {
        return;
    }
    join_workers(l);
    stop_pollers(l);
    l->started = false;
}

int64_t cd_loop_epoch_ns(const cd_loop *l) {
    return l->epoch_ns;
}

int64_t cd_loop_period_ns(const cd_loop *l) {
    return l->period_ns;
}

int cd_loop_workers(const cd_loop *l) {
    return l->p.workers;
}

uint64_t cd_loop_ticks(const cd_loop *l) {
    uint64_t n = 0;
    for (int i = 0; i < l->n; i++) {
        n += cd_stat_get(&l->w[i].ticks);
    }
    return n;
}

void cd_loop_stats(const cd_loop *l, cd_stats *ret) {
    // Ticks and lateness are the foreground workers': every one of them wakes at every tick.
    ret->ticks = ret->ticks_polled = ret->overruns = 0;
    ret->wake_late_ns = (cd_counter_value){0};
    for (int i = 0; i < l->n; i++) {
        const struct worker *w = &l->w[i];
        cd_counts_add(&w->sched.counts, ret);
        ret->overruns += cd_stat_get(&w->overruns);
        if (i & 1) {
            continue;
        }
        ret->ticks += cd_stat_get(&w->ticks);
        ret->ticks_polled += cd_stat_get(&w->ticks_polled);
        cd_counter_value v;
        cd_counter_read(&w->wake_late_ns, &v);
        ret->wake_late_ns.count += v.count;
        ret->wake_late_ns.sum += v.sum;
        ret->wake_late_ns.max = v.max > ret->wake_late_ns.max ? v.max : ret->wake_late_ns.max;
    }
    ret->realtime = l->realtime;
}
