/* SPDX-License-Identifier: MIT */
/* Single-writer statistics counters (see stats.h). Relaxed order throughout: a counter orders
 * nothing else, it only must not tear, and a reader accepts a value that is a moment old. */
#include "service/stats.h"

#include <stdio.h>

void cd_counter_add(cd_counter *c, int64_t v) {
    atomic_store_explicit(&c->count, atomic_load_explicit(&c->count, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&c->sum, atomic_load_explicit(&c->sum, memory_order_relaxed) + v,
                          memory_order_relaxed);
    if (v > atomic_load_explicit(&c->max, memory_order_relaxed)) {
        atomic_store_explicit(&c->max, v, memory_order_relaxed);
    }
}

void cd_counter_read(const cd_counter *c, cd_counter_value *ret) {
    *ret = (cd_counter_value){
        .count = atomic_load_explicit(&c->count, memory_order_relaxed),
        .sum = atomic_load_explicit(&c->sum, memory_order_relaxed),
        .max = atomic_load_explicit(&c->max, memory_order_relaxed),
    };
}

void cd_stat_inc(_Atomic uint64_t *n) {
    atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

uint64_t cd_stat_get(const _Atomic uint64_t *n) {
    return atomic_load_explicit(n, memory_order_relaxed);
}

void cd_counts_add(const cd_counts *c, cd_stats *ret) {
    ret->frames_received += cd_stat_get(&c->frames_received);
    ret->frames_superseded += cd_stat_get(&c->frames_superseded) + cd_stat_get(&c->frames_passed);
    ret->frames_invalid += cd_stat_get(&c->frames_invalid);
    ret->frames_limited += cd_stat_get(&c->frames_limited);
    ret->frames_solved += cd_stat_get(&c->frames_solved);
    ret->deadline_misses += cd_stat_get(&c->deadline_misses);
    ret->results_dropped += cd_stat_get(&c->results_unsent) + cd_stat_get(&c->results_overflow);
    cd_counter_value v;
    cd_counter_read(&c->solve_ns, &v);
    ret->solve_ns.count += v.count;
    ret->solve_ns.sum += v.sum;
    ret->solve_ns.max = v.max > ret->solve_ns.max ? v.max : ret->solve_ns.max;
    cd_counter_read(&c->ahead_dropped_ns, &v);
    ret->ahead_dropped_ns.count += v.count;
    ret->ahead_dropped_ns.sum += v.sum;
    ret->ahead_dropped_ns.max = v.max > ret->ahead_dropped_ns.max ? v.max
                                                                   : ret->ahead_dropped_ns.max;
    for (int i = 0; i < CD_MISS_KINDS; i++) {
        ret->misses[i] += cd_stat_get(&c->misses[i]);
    }
    for (int i = 0; i < CD_STATUS_KINDS; i++) {
        ret->statuses[i] += cd_stat_get(&c->statuses[i]);
    }
    cd_hist_add(&c->solve_hist, &ret->solve_hist);
    cd_hist_add(&c->wake_late_hist, &ret->wake_late_hist);
    cd_hist_add(&c->latency_hist, &ret->latency_hist);
}

void cd_headline_update(cd_headline *h, const cd_stats *st, int64_t now_ns, char *buf,
                        size_t len) {
    h->misses[h->next] = st->deadline_misses;
    h->next = (h->next + 1) % (CD_HEADLINE_SECONDS + 1);
    h->n += h->n < CD_HEADLINE_SECONDS + 1;
    // The oldest snapshot kept is CD_HEADLINE_SECONDS snapshots before the newest.
    const int oldest = h->n < CD_HEADLINE_SECONDS + 1 ? 0 : h->next;
    const uint64_t misses = st->deadline_misses - h->misses[oldest];
    char ticks[32] = "-", p99[32] = "-";
    if (h->at_ns > 0 && now_ns > h->at_ns) {
        snprintf(ticks, sizeof ticks, "%.0f",
                 (double)(st->ticks - h->ticks) * 1e9 / (double)(now_ns - h->at_ns));
        // The latency histogram since the previous snapshot: the difference of the two.
        cd_hist_value *d = &h->latency;
        d->count = 0;
        for (int i = 0; i < CD_HIST_BUCKETS; i++) {
            d->n[i] = st->latency_hist.n[i] - d->n[i];
            d->count += d->n[i];
        }
        d->max = st->latency_hist.max;
        if (d->count > 0) {
            snprintf(p99, sizeof p99, "%.0f us", (double)cd_hist_quantile(d, 0.99) / 1e3);
        }
    }
    snprintf(buf, len, "%u session%s, %s ticks/s, p99 latency %s, %llu deadline misses in the "
             "last minute", (unsigned)st->sessions, st->sessions == 1 ? "" : "s", ticks, p99,
             (unsigned long long)misses);
    h->ticks = st->ticks;
    h->at_ns = now_ns;
    h->latency = st->latency_hist;
}
