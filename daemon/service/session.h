/* SPDX-License-Identifier: MIT */
/* Sessions and the session table. A session is one client's stream of frames: its limits, its
 * solvers, mode, budget and deadline, the solver workspace and warm start, its mailbox of input
 * frames (stream mode: a latest-value slot; request mode: a queue) and a ring of output results,
 * all sized from what the session declared and allocated when it is made, off the I/O and
 * real-time threads. The table has a fixed number of entries; the I/O thread inserts and closes
 * sessions and the real-time workers step them, with no lock between the two: each entry's state
 * is an atomic published with release and read with acquire (session.c names each pair). Each
 * session belongs to one worker at a time (cd_session_worker); only that worker steps it. */
#ifndef CONTACTD_SERVICE_SESSION_H
#define CONTACTD_SERVICE_SESSION_H
#include <stdbool.h>
#include <stdint.h>
#include "service/stats.h"
#include "wire/timing.h"
#include "wire/types.h"

/* Results a session's output ring holds before its worker drops (and counts) new ones. At 1 kHz
 * this is 32 ms of I/O-thread delay. */
#define CD_SESSION_RESULTS 32
/* What a pump found of its connection. */
typedef enum cd_pump {
    CD_PUMP_OPEN, /* it goes on */
    CD_PUMP_EOF,  /* the client shut its sending side: the frames it sent are still answered,
                   * then the connection ends (cd_session_flush) */
    CD_PUMP_END,  /* it ends now: a socket error, or a protocol error after which it closes */
} cd_pump;

/* What a session's worker calls for a socket it serves itself (cd_session_attach): frames are read,
 * answered and written on the worker, with no hand-off to the I/O thread and back. Both run on the
 * session's worker, never allocate and never block. counts: the worker's own. */
typedef struct cd_endpoint_ops {
    /* Reads what the socket holds and handles each whole message (frames into the session's
     * mailbox, received at seen_ns: when the worker's wait reported the socket readable, as the
     * I/O thread stamps a frame with the start of the pass that read it; and counting for tick_ns
     * when the worker reads them for that tick, else 0: cd_session_frame_publish. Errors and
     * Stats go into the endpoint's output). Returns what it found (cd_pump). */
    cd_pump (*pump)(void *ctx, cd_counts *counts, int64_t seen_ns, int64_t tick_ns);
    /* Writes the session's results, and whatever output is pending. Returns true when bytes are
     * left that the socket could not take yet. */
    bool (*flush)(void *ctx, cd_counts *counts);
} cd_endpoint_ops;

/* Request mode: frames that may wait for their worker. */
#define CD_REQUEST_QUEUE 8
/* Request mode's rate limit: one frame per tick period on average, and up to this many periods'
 * worth ahead of that average. Frames are timed when the I/O thread reads them, so a host that
 * stalls the I/O thread for a few periods bunches a steady client's frames: the allowance keeps
 * those from being refused, while the average still holds a session to its share. */
#define CD_REQUEST_BURST 50
/* Stream mode's rate limit: frames per tick period on average (only the newest before a tick is
 * solved; more cost the I/O thread decoding for nothing), with the same bursts. */
#define CD_STREAM_FRAMES_PER_PERIOD 4

typedef enum cd_mode {
    CD_MODE_STREAM = 0,  /* newest frame before a tick is answered at that tick */
    CD_MODE_REQUEST = 1, /* every frame solved as soon as it arrives */
} cd_mode;

/* What a session is admitted with. */
typedef struct cd_session_params {
    cs_limits lim;            /* sizes and the solvers frames may name (lim.solvers != 0) */
    cs_solver default_solver; /* answers frames that name none; in lim.solvers */
    cd_mode mode;
    int64_t budget_ns;        /* solve time per frame, and the relative deadline: release + it */
    int64_t period_ns;        /* the tick period: request mode's rate is one frame per period */
    uint64_t id;              /* the id reserved for it (cd_session_table_take_id), or 0: the
                               * table gives the next one at insert */
    size_t held_bytes;        /* what the server counts against its memory budget for it: at
                               * least cd_session_bytes, plus what its connection holds */
} cd_session_params;

/* thread: io owns insertion and close; workers step sessions (see each function). */
typedef struct cd_session_table cd_session_table;
typedef struct cd_session cd_session;

/* One frame as a worker receives it. */
typedef struct cd_frame {
    cs_scene scene;      /* validated; arrays sized by the session's limits */
    int64_t received_ns; /* when it reached the daemon: the start of the event-loop pass (I/O
                          * thread) or the wait (worker) that found it */
    int64_t published_ns; /* when its reader handed it to the worker */
    int64_t tick_ns;      /* stream: the tick it counts for when its reader found it in that
                           * tick's pass (cd_session_frame_publish); 0: the tick after
                           * received_ns */
} cd_frame;

/* One answer as the I/O thread receives it from the output ring. */
typedef struct cd_output {
    uint64_t tick;     /* the tick of the grid the solve ran in */
    cd_timing timing;  /* sent_ns is 0: the I/O thread sets it when it writes the result */
    cs_result result;  /* arrays sized by the session's limits */
} cd_output;

/* What a job asks of its worker. */
typedef enum cd_job_kind {
    CD_JOB_SOLVE, /* solve the frame and send its answer */
    CD_JOB_AHEAD, /* stream: solve the frame before its tick, keep the answer for the tick */
    CD_JOB_SEND,  /* stream: the tick came; send the answer solved ahead */
} cd_job_kind;

/* A solve due for a session: when it became due and by when it must be answered. */
typedef struct cd_job {
    cd_frame *frame;
    int64_t release_ns;  /* the tick (stream) or the frame's arrival (request) */
    int64_t deadline_ns; /* release + budget */
    cd_job_kind kind;
} cd_job;

/* Bytes a session admitted with p holds: the formula the README documents and Welcome reports.
 *   cs_workspace_size(lim) + K * cs_warmstart_size(lim)          (solver, for lim.solvers only)
 *   + F * (max_bodies * sizeof(cs_body) + max_contacts * sizeof(cs_contact)
 *          + max_joints * sizeof(cs_joint))                                 (input frames)
 *   + (CD_SESSION_RESULTS + 1) * (cs_result_size(lim) + sizeof(cd_output))    (output ring)
 *   + sizeof(cd_session), each term rounded up to 64 bytes,
 * with F = 3 in stream mode (triple buffer) and CD_REQUEST_QUEUE in request mode, K = 2 in stream
 * mode (a solve ahead of the tick has a warm start of its own) and 1 in request mode.
 * thread: any. */
size_t cd_session_bytes(const cd_session_params *p);

/* Makes a session for p: every buffer allocated and written once (so its pages are resident
 * before any worker touches them), and the solver's dense kernels run once at the session's
 * largest sizes. Returns NULL on bad parameters or no memory. It is not in a table yet.
 * thread: admission (a pool thread: neither io nor a worker). */
cd_session *cd_session_new(const cd_session_params *p);

/* Frees a session that is in no table (never inserted, or reaped). Accepts NULL.
 * thread: admission. */
void cd_session_free(cd_session *s);

/* A table with room for max_sessions sessions (>= 1). Returns NULL on bad size or no memory.
 * thread: io (not rt). */
cd_session_table *cd_session_table_new(int max_sessions);

/* Frees the table and every session still in it. Accepts NULL. thread: io, with every worker
 * stopped. */
void cd_session_table_free(cd_session_table *t);

/* Reserves the next session id, for a session whose id must be known before it is made (its
 * recording's file and header). thread: io. */
uint64_t cd_session_table_take_id(cd_session_table *t);

/* Puts s into a free entry, owned by worker, with the id its parameters reserved (or the next).
 * Returns 0, or -EBUSY when every entry is taken (s is then still the caller's). thread: io. */
int cd_session_table_insert(cd_session_table *t, cd_session *s, int worker);

/* Ends a session: its worker stops stepping it and lets go of it; a later
 * cd_session_table_reap hands it back for freeing. The caller must not use s afterwards.
 * thread: io. */
void cd_session_close(cd_session *s);

/* The next session the workers have let go of since it was closed, removed from the table (free
 * it with cd_session_free, off the I/O thread), or NULL. thread: io. */
cd_session *cd_session_table_reap(cd_session_table *t);

/* Sessions the table can hold. thread: any. */
int cd_session_table_size(const cd_session_table *t);

/* Entry i's session when it is live and owned by worker, else NULL. Entries that were closed
 * and are owned by worker are let go of here (their worker never touches them again), and
 * *ret_released is incremented. thread: worker. rt-safe: yes. */
cd_session *cd_session_table_claim(cd_session_table *t, int i, int worker, int *ret_released);

/* Entry i's session, or NULL when the entry is free. thread: io. */
cd_session *cd_session_table_at(const cd_session_table *t, int i);

/* Daemon-wide counters (every session ever admitted) and the number of open sessions into the
 * matching fields of *ret; other fields are left as they are. thread: any. */
void cd_session_table_stats(const cd_session_table *t, cd_stats *ret);

/* The session's id (unique within the process, from 1) and what it was admitted with.
 * thread: any. */
uint64_t cd_session_id(const cd_session *s);
const cd_session_params *cd_session_params_of(const cd_session *s);

/* The worker that steps s; only that worker may change it (handing s to another worker, and
 * taking an attached session's socket out of its own epoll first). thread: any reads; the owning
 * worker writes. rt-safe: yes. */
int cd_session_worker(const cd_session *s);
void cd_session_move(cd_session *s, int worker);

/* Serves s's socket fd from s's worker from now on: the owning worker puts fd in its epoll on its
 * next pass (cd_session_flush; cd_loop_attach wakes it for that), takes it out when it hands s
 * to another worker (cd_session_move), and calls ops with ctx when fd is readable or s has
 * results. The reader of s's frames is then that worker: the calls below marked "thread: io" are
 * its. thread: io, once, after the session is in the table. */
void cd_session_attach(cd_session *s, int fd, const cd_endpoint_ops *ops, void *ctx);

/* True when s is open and worker owns it: what a worker checks before it serves an event that
 * names s. thread: a worker. rt-safe: yes. */
bool cd_session_is_ours(const cd_session *s, int worker);

/* True once cd_session_attach ran. thread: any. rt-safe: yes. */
bool cd_session_is_attached(const cd_session *s);

/* For the owning worker of an attached session: pump reads and handles its socket's input
 * (ops->pump); flush, called on every pass, first puts the socket in epfd (the worker's own
 * epoll) if it is not there yet, then writes its output (ops->flush, and the socket is watched
 * for writability while bytes are left). When the connection ends (pump's verdict, or a socket
 * the epoll refused), the socket leaves the worker's epoll and cd_session_has_ended turns true
 * (the worker then wakes the I/O thread). After CD_PUMP_EOF the socket leaves the epoll (nothing
 * is left to read) and the session runs on until every frame it accepted is answered (request
 * mode: each; stream mode: the newest, at its tick), its results taken by ops->flush (written or
 * dropped, as ever); the flush that finds none left ends the connection, whatever output the
 * socket did not take yet going with it to the I/O thread. Each returns false when the
 * connection ended in that call. thread: the session's worker. rt-safe: yes. */
bool cd_session_pump(cd_session *s, cd_counts *counts, int64_t seen_ns, int64_t tick_ns);
bool cd_session_flush(cd_session *s, int epfd, cd_counts *counts);

/* True while a frame accepted on s is not answered: request mode, one whose result its reader
 * has not taken from the ring (cd_session_result_pop); stream mode, the newest frame until its
 * result is taken or dropped (the frames it superseded are counted, not answered). What a
 * connection whose client shut its sending side waits for before it ends. thread: the reader of
 * s's frames (io, or the worker of an attached session). rt-safe: yes. */
bool cd_session_has_unanswered(cd_session *s);

/* The ctx s was attached with, or NULL. thread: io, once s is reaped. */
void *cd_session_attached_ctx(const cd_session *s);

/* True when the worker found the attached connection ended. thread: any. */
bool cd_session_has_ended(const cd_session *s);

/* The session's rate limit (a virtual-time bucket: one frame per period on average in request
 * mode, CD_STREAM_FRAMES_PER_PERIOD in stream mode): true when a frame arriving at now_ns
 * conforms, and the bucket counts it; false with *ret_early_ns, how much sooner than allowed it
 * came (bursts of CD_REQUEST_BURST periods' worth). thread: io. rt-safe: yes. */
bool cd_session_frame_allowed(cd_session *s, int64_t now_ns, int64_t *ret_early_ns);

/* The scene the next frame is decoded into: arrays with room for the session's limits. It stays
 * the same until cd_session_frame_publish. NULL in request mode when CD_REQUEST_QUEUE frames are
 * already waiting to be solved, or CD_SESSION_RESULTS frames to be solved or their results
 * written (so every accepted request has room for its answer). thread: io. rt-safe: yes. */
cs_scene *cd_session_frame_scene(cd_session *s);

/* Hands the scene filled through cd_session_frame_scene to the session's worker. Stream mode: a
 * frame published earlier and not yet taken is superseded (newest wins) and counted. received_ns:
 * when the frame reached the daemon, published_ns: now (cd_frame). tick_ns (stream): the tick whose
 * pass found the frame, when the worker reading it woke for that tick: whatever its socket held
 * when the tick's pass began is solved in that tick however late the host woke the worker
 * (released at the later of the tick and received_ns); 0: released at the first tick after
 * received_ns. counts: the calling thread's own daemon-wide counts (NULL:
 * the I/O thread's, in the table). thread: io. rt-safe: yes. */
void cd_session_frame_publish(cd_session *s, cd_counts *counts, int64_t received_ns,
                              int64_t published_ns, int64_t tick_ns);

/* Counts a frame rejected by validation, or (limited) by the rate limit or the request queue.
 * counts: as above. thread: io. */
void cd_session_frame_rejected(cd_session *s, cd_counts *counts, bool limited);

/* The solve due for s at now_ns on the tick grid (epoch_ns + k period_ns), if any: stream mode,
 * its newest frame once the tick after its arrival has come (an older held frame is superseded
 * and counted), sent then if it was solved ahead; before that tick, a solve ahead of it (once a
 * tick, and only when by the session's cost it ends before the tick); request mode, the oldest
 * queued frame. Returns true and fills *ret, or false.
 * The same job is returned until cd_session_run answers it. wc: the worker's own counters, which
 * count what it does for the daemon-wide Stats. thread: the session's worker.
 * rt-safe: yes. */
bool cd_session_job(cd_session *s, int64_t now_ns, int64_t epoch_ns, int64_t period_ns,
                    cd_counts *wc, cd_job *ret);

/* What the worker tells cd_session_run about the pass it runs a job in. */
typedef struct cd_run {
    uint64_t tick;             /* the tick of the grid the job was released in */
    int64_t wake_late_ns;      /* how late the worker's wake-up before this pass was */
    int64_t others_ns;         /* time this pass spent on other sessions' solves before this one */
    int64_t (*clock_ns)(void); /* the worker's one clock */
    cd_counts *counts;         /* the worker's own counters */
    int64_t solve_ns;          /* out: the solve's wall time */
} cd_run;

/* Solves job (from cd_session_job) with cs_step under its deadline and pushes the result with its
 * timing record (tick, release, wake lateness, and when the deadline did not hold why: a prompt
 * start means the solver; otherwise the largest share of the delay, the I/O thread's late
 * hand-over, the worker's other sessions (run->others_ns), or else the host) to the session's
 * ring, or drops and counts it when the ring is full. CD_JOB_AHEAD solves into the ring's next
 * element without pushing it (nothing, when the ring is full), under the session's budget from
 * the solve's start (the deadline its timing record gives); CD_JOB_SEND pushes that element.
 * Returns 1 when a result was pushed, else 0.
 * thread: the session's worker. rt-safe: yes. */
int cd_session_run(cd_session *s, const cd_job *job, cd_run *run);

/* The session's solve cost, ns: its last solve when that was the longest so far, else decaying
 * towards recent solves (an exponential average over about 8); 0 before the first.
 * thread: any. rt-safe: yes. */
int64_t cd_session_cost_ns(const cd_session *s);

/* The oldest result not yet sent, or NULL. Valid until cd_session_result_pop. thread: io, or the
 * worker of an attached session. */
cd_output *cd_session_result_peek(cd_session *s);

/* Releases the result cd_session_result_peek returned. unsent: it was dropped rather than
 * written (the client's write queue was full); it is counted, in counts (as above). Otherwise
 * its timing's sent_ns (set by the caller) - received_ns goes into the latency histograms, the
 * session's and counts'. thread: io, or the worker of an attached session. */
void cd_session_result_pop(cd_session *s, bool unsent, cd_counts *counts);

/* This session's counters into *ret (frames, results, solve time; other fields untouched).
 * thread: any while the session is open (io). */
void cd_session_stats(const cd_session *s, cd_stats *ret);

#endif /* CONTACTD_SERVICE_SESSION_H */
