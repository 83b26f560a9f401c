/* SPDX-License-Identifier: MIT */
/* Earliest-deadline-first over one worker's sessions (see sched.h). The scan is linear in the
 * table size per solve: tables are small (max_sessions, 16 by default) and a linear scan keeps the
 * worker free of any structure the I/O thread would have to update. */
#include "service/sched.h"

#include "service/grid.h"

// True when a should run before b: an answer solved ahead and due is sent first (it takes no
// solve), a solve ahead of its tick waits for everything due; then the earlier deadline, then the
// cheaper session.
static bool before(const cd_job *a, const cd_session *sa, const cd_job *b, const cd_session *sb) {
    if (a->kind != b->kind && (a->kind == CD_JOB_SEND || b->kind == CD_JOB_SEND ||
                               a->kind == CD_JOB_AHEAD || b->kind == CD_JOB_AHEAD)) {
        return a->kind == CD_JOB_SEND || b->kind == CD_JOB_AHEAD;
    }
    if (a->deadline_ns != b->deadline_ns) {
        return a->deadline_ns < b->deadline_ns;
    }
    return cd_session_cost_ns(sa) < cd_session_cost_ns(sb);
}

// Hands s to the partner worker when its cost left this worker's class.
static int place(cd_sched *w, cd_session *s) {
    if (w->partner < 0) {
        return 0;
    }
    const int64_t cost = cd_session_cost_ns(s);
    const bool move = w->background ? cost < w->long_ns / 2 : cost > w->long_ns;
    if (move) {
        cd_session_move(s, w->partner);
    }
    return move;
}

int cd_sched_run(cd_sched *w, int64_t wake_late_ns, int64_t *ret_next_ns, int *ret_moved) {
    const int n = cd_session_table_size(w->table);
    const int most = n * (CD_REQUEST_QUEUE + 1);
    int work = 0, moved = 0;
    int64_t others = 0; // this pass's solves so far: what a later job waited for
    int64_t now = w->clock_ns();
    w->ahead_ran = false;
    for (int done = 0; done < most && !w->ahead_ran; done++) {
        cd_session *best = NULL;
        cd_job job = {0};
        for (int i = 0; i < n; i++) {
            cd_session *s = cd_session_table_claim(w->table, i, w->worker, &work);
            cd_job j;
            if (s && cd_session_job(s, now, w->epoch_ns, w->period_ns, &w->counts, &j) &&
                (!best || before(&j, s, &job, best))) {
                best = s;
                job = j;
            }
        }
        if (!best) {
            break;
        }
        cd_run run = {
            .tick = (uint64_t)cd_grid_index(job.release_ns, w->epoch_ns, w->period_ns),
            .wake_late_ns = wake_late_ns,
            .others_ns = others,
            .clock_ns = w->clock_ns,
            .counts = &w->counts,
        };
        // A session its worker serves has its result written now, before the solves behind it;
        // the I/O thread only hears of a connection that ended. It hears of every solve of one it
        // serves: a result to send, or (its ring full) a frame settled that a client's EOF waits
        // for.
        (void)cd_session_run(best, &job, &run);
        if (job.kind != CD_JOB_AHEAD) { // a solve ahead has nothing to send yet
            work += cd_session_is_attached(best) ? !cd_session_flush(best, w->epfd, &w->counts)
                                                 : 1;
        }
        others += run.solve_ns;
        w->ahead_ran = job.kind == CD_JOB_AHEAD;
        moved += place(w, best);
        now = w->clock_ns();
    }
    *ret_next_ns = cd_grid_tick_after(now, w->epoch_ns, w->period_ns);
    *ret_moved = moved;
    return work;
}
