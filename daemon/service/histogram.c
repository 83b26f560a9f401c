/* SPDX-License-Identifier: MIT */
/* Log-linear histograms (see histogram.h; the bucket layout is HdrHistogram's, Tene 2013, with
 * 16 sub-buckets per power of two). Relaxed order throughout: a bucket orders nothing else. */
#include "service/histogram.h"

#define SUB (1 << CD_HIST_SUB_BITS)

int cd_hist_index(int64_t v) {
    if (v < 2 * SUB) {
        return v > 0 ? (int)v : 0;
    }
    const int m = 63 - __builtin_clzll((unsigned long long)v);
    if (m >= CD_HIST_TOP_BIT) {
        return CD_HIST_BUCKETS - 1;
    }
    // Octave m starts at bucket (m - 3) * 16; its sub-bucket is the 4 bits after the leading one.
    return ((m - CD_HIST_SUB_BITS + 1) << CD_HIST_SUB_BITS) +
           (int)((v >> (m - CD_HIST_SUB_BITS)) & (SUB - 1));
}

int64_t cd_hist_bucket_max(int i) {
    if (i < 2 * SUB) {
        return i;
    }
    const int m = (i >> CD_HIST_SUB_BITS) + CD_HIST_SUB_BITS - 1;
    const int64_t sub = i & (SUB - 1);
    return ((SUB + sub + 1) << (m - CD_HIST_SUB_BITS)) - 1;
}

void cd_hist_record(cd_hist *h, int64_t v) {
    _Atomic uint64_t *b = &h->n[cd_hist_index(v)];
    atomic_store_explicit(b, atomic_load_explicit(b, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (v > atomic_load_explicit(&h->max, memory_order_relaxed)) {
        atomic_store_explicit(&h->max, v, memory_order_relaxed);
    }
}

void cd_hist_add(const cd_hist *h, cd_hist_value *ret) {
    for (int i = 0; i < CD_HIST_BUCKETS; i++) {
        const uint64_t n = atomic_load_explicit(&h->n[i], memory_order_relaxed);
        ret->n[i] += n;
        ret->count += n;
    }
    const int64_t max = atomic_load_explicit(&h->max, memory_order_relaxed);
    ret->max = max > ret->max ? max : ret->max;
}

void cd_hist_merge(const cd_hist_value *a, cd_hist_value *ret) {
    for (int i = 0; i < CD_HIST_BUCKETS; i++) {
        ret->n[i] += a->n[i];
    }
    ret->count += a->count;
    ret->max = a->max > ret->max ? a->max : ret->max;
}

int64_t cd_hist_quantile(const cd_hist_value *v, double q) {
    if (v->count == 0) {
        return 0;
    }
    // The smallest bucket whose cumulative count reaches ceil(q * count), at least the first.
    double want = q * (double)v->count;
    uint64_t rank = (uint64_t)want;
    rank += (double)rank < want;
    rank = rank < 1 ? 1 : rank;
    uint64_t seen = 0;
    for (int i = 0; i < CD_HIST_BUCKETS; i++) {
        seen += v->n[i];
        if (seen >= rank) {
            // The max was read after or before the buckets: capping keeps every percentile <= max.
            const int64_t top = cd_hist_bucket_max(i);
            return top < v->max ? top : v->max;
        }
    }
    return v->max;
}

void cd_hist_percentiles(const cd_hist_value *v, cd_percentiles *ret) {
    *ret = (cd_percentiles){
        .count = v->count,
        .p50 = cd_hist_quantile(v, 0.5),
        .p99 = cd_hist_quantile(v, 0.99),
        .p999 = cd_hist_quantile(v, 0.999),
        .max = v->max,
    };
}
