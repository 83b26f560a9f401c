/* SPDX-License-Identifier: MIT */
/* Log-linear histograms of durations in the HdrHistogram layout: values below 32 ns have a bucket
 * each; above, every power of two [2^m, 2^(m+1)) is cut into 16 equal sub-buckets, so a bucket is
 * at most 1/16 of its values wide, up to 2^34 ns (17 s; larger values share the last bucket, max
 * stays exact). The memory is fixed (CD_HIST_BUCKETS counters); one thread records, with relaxed
 * plain stores and no lock, and any thread sums snapshots and computes percentiles from them. */
#ifndef CONTACTD_SERVICE_HISTOGRAM_H
#define CONTACTD_SERVICE_HISTOGRAM_H
#include <stdatomic.h>
#include <stdint.h>

#define CD_HIST_SUB_BITS 4
#define CD_HIST_TOP_BIT 34 /* values from 2^34 ns on share the last bucket */
#define CD_HIST_BUCKETS ((CD_HIST_TOP_BIT - CD_HIST_SUB_BITS + 1) << CD_HIST_SUB_BITS)

/* Zero-initialised storage is an empty histogram. thread: one writer, any readers. */
typedef struct cd_hist {
    _Atomic uint64_t n[CD_HIST_BUCKETS];
    _Atomic int64_t max;
} cd_hist;

/* A snapshot, or the sum of several (plain data). Zero-initialised storage is empty. */
typedef struct cd_hist_value {
    uint64_t n[CD_HIST_BUCKETS];
    uint64_t count; /* the sum of n */
    int64_t max;
} cd_hist_value;

/* What a Stats message carries of a histogram, ns. Percentiles are the upper edge of the bucket
 * the rank falls in, capped at max: never below the true value, at most 1/16 above it. */
typedef struct cd_percentiles {
    uint64_t count;
    int64_t p50, p99, p999, max;
} cd_percentiles;

/* The bucket of v (negative values count as 0), and the largest value bucket i holds.
 * thread: any. rt-safe: yes. */
int cd_hist_index(int64_t v);
int64_t cd_hist_bucket_max(int i);

/* Records v. thread: h's one writer. rt-safe: yes. */
void cd_hist_record(cd_hist *h, int64_t v);

/* Adds a snapshot of h to *ret. thread: any. rt-safe: yes. */
void cd_hist_add(const cd_hist *h, cd_hist_value *ret);

/* Adds the snapshot a to *ret. thread: any. rt-safe: yes. */
void cd_hist_merge(const cd_hist_value *a, cd_hist_value *ret);

/* The value at quantile q in [0, 1] (0 when v is empty). thread: any. rt-safe: yes. */
int64_t cd_hist_quantile(const cd_hist_value *v, double q);

/* v's count, p50, p99, p99.9 and max. thread: any. rt-safe: yes. */
void cd_hist_percentiles(const cd_hist_value *v, cd_percentiles *ret);

#endif /* CONTACTD_SERVICE_HISTOGRAM_H */
