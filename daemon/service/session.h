/* SPDX-License-Identifier: MIT */
/* Sessions and the session table. A session is one client's stream of frames: its limits, its
 * default solver, the solver workspace and warm start, a latest-value slot of input frames and a
 * ring of output results, all sized and allocated when it is admitted and reused every tick. The
 * table has a fixed number of entries; the I/O thread admits and closes sessions and the tick
 * thread steps them, with no lock between the two: each entry's state is an atomic published with
 * release and read with acquire (session.c names each pair). */
#ifndef CONTACTD_SERVICE_SESSION_H
#define CONTACTD_SERVICE_SESSION_H
#include <stdbool.h>
#include <stdint.h>
#include "service/stats.h"
#include "service/timing.h"
#include "solver/types.h"

/* Results a session's output ring holds before the tick thread drops (and counts) new ones. At
 * 1 kHz this is 32 ms of I/O-thread delay. */
#define CD_SESSION_RESULTS 32

/* thread: io owns admission and close; the tick thread steps sessions (see each function). */
typedef struct cd_session_table cd_session_table;
typedef struct cd_session cd_session;

/* One frame as the tick thread receives it. */
typedef struct cd_frame {
    cs_scene scene;      /* validated; arrays sized by the session's limits */
    int64_t received_ns; /* when the I/O thread finished decoding it */
} cd_frame;

/* One answer as the I/O thread receives it from the output ring. */
typedef struct cd_output {
    uint64_t tick;     /* the tick that solved it */
    cd_timing timing;  /* sent_ns is 0: the I/O thread sets it when it writes the result */
    bool late_start;   /* the tick reached this session only after the deadline */
    cs_result result;  /* arrays sized by the session's limits */
} cd_output;

/* A table with room for max_sessions sessions (>= 1). Returns NULL on bad size or no memory.
 * thread: io (not rt). */
cd_session_table *cd_session_table_new(int max_sessions);

/* Frees the table and every session still in it. Accepts NULL. thread: io, with the tick thread
 * stopped. */
void cd_session_table_free(cd_session_table *t);

/* Admits a session: workspace and warm start for lim (cs_workspace_new, cs_warmstart_new), three
 * frame buffers, CD_SESSION_RESULTS result slots (cs_result_size/init), all allocated and
 * prefaulted here. default_solver answers frames that name none (not CS_SOLVER_DEFAULT). Sets
 * *ret and returns 0, or -EBUSY (no free entry), -EINVAL (limits or solver out of range),
 * -ENOMEM. *ret is untouched on failure. thread: io (not rt). */
int cd_session_admit(cd_session_table *t, const cs_limits *lim, cs_solver default_solver,
                     cd_session **ret);

/* Ends a session: the tick thread stops stepping it and the memory is freed by a later
 * cd_session_table_reap (or cd_session_table_free). The caller must not use s afterwards.
 * thread: io. */
void cd_session_close(cd_session *s);

/* Frees the sessions the tick thread has let go of since they were closed. Returns how many.
 * thread: io (call it when the tick thread wakes the I/O loop). */
int cd_session_table_reap(cd_session_table *t);

/* Steps every live session that has a new frame, at most one frame each: cs_step under
 * deadline_ns (absolute, cd_clock_ns time base) with the session's warm start, timing record
 * filled, result pushed to the session's ring (or dropped and counted when the ring is full).
 * Returns the number of results pushed plus the number of closed sessions released: when it is
 * positive the I/O thread has work and should be woken. thread: rt. rt-safe: yes. */
int cd_session_table_tick(cd_session_table *t, uint64_t tick, int64_t deadline_ns);

/* Daemon-wide counters (every session ever admitted) and the number of open sessions into the
 * matching fields of *ret; other fields are left as they are. thread: any. */
void cd_session_table_stats(const cd_session_table *t, cd_stats *ret);

/* The session's id (unique within the process, from 1), limits and default solver.
 * thread: io. */
uint64_t cd_session_id(const cd_session *s);
const cs_limits *cd_session_limits(const cd_session *s);
cs_solver cd_session_default_solver(const cd_session *s);

/* The scene the next frame is decoded into: arrays with room for the session's limits. It stays
 * the same until cd_session_frame_publish. thread: io. rt-safe: yes. */
cs_scene *cd_session_frame_scene(cd_session *s);

/* Hands the scene filled through cd_session_frame_scene to the tick thread; a frame published
 * earlier and not yet taken is superseded (newest wins) and counted. received_ns: when decoding
 * finished. thread: io. rt-safe: yes. */
void cd_session_frame_publish(cd_session *s, int64_t received_ns);

/* Counts a frame rejected by validation. thread: io. */
void cd_session_frame_rejected(cd_session *s);

/* The oldest result not yet sent, or NULL. Valid until cd_session_result_pop. thread: io. */
cd_output *cd_session_result_peek(cd_session *s);

/* Releases the result cd_session_result_peek returned. unsent: it was dropped rather than
 * written (the client's write queue was full); it is counted. thread: io. */
void cd_session_result_pop(cd_session *s, bool unsent);

/* This session's counters into *ret (frames, results, solve time; other fields untouched).
 * thread: any while the session is open (io). */
void cd_session_stats(const cd_session *s, cd_stats *ret);

#endif /* CONTACTD_SERVICE_SESSION_H */
