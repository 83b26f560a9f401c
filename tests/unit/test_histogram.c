/* SPDX-License-Identifier: MIT */
/* The log-linear histogram: its buckets tile the values without gaps and are at most 1/16 wide,
 * percentiles of known distributions fall within one bucket above the true value, snapshots sum,
 * and a reader running beside the one writer sees counts that only grow and percentiles in
 * order, and at the end exactly what was recorded. The STATUS headline built from snapshots
 * (stats.h) reports the tick rate, the latency p99 of the last interval only, and the deadline
 * misses of exactly the last 60 snapshots. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>

#include "service/histogram.h"
#include "service/stats.h"
#include "testlib.h"

// v within [truth, truth + truth / 16]: the bucket's upper edge is never below the true value.
static void assert_within_bucket(int64_t v, int64_t truth) {
    assert_true(v >= truth);
    assert_true(v <= truth + truth / 16);
}

static void buckets_tile_the_values(void **state) {
    (void)state;
    assert_int_equal(cd_hist_index(-5), 0);
    assert_int_equal(cd_hist_index(0), 0);
    assert_int_equal(cd_hist_index(INT64_MAX), CD_HIST_BUCKETS - 1);
    for (int i = 0; i < CD_HIST_BUCKETS; i++) {
        const int64_t top = cd_hist_bucket_max(i);
        const int64_t low = i == 0 ? 0 : cd_hist_bucket_max(i - 1) + 1;
        assert_true(top >= low);
        assert_int_equal(cd_hist_index(low), i);
        assert_int_equal(cd_hist_index(top), i);
        // Relative resolution: a bucket is at most 1/16 of its smallest value wide.
        assert_true(top - low + 1 <= (low < 32 ? 1 : low / 16));
    }
    // The last bucket reaches ~17 s; 10 s still has a bucket of its own width.
    assert_true(cd_hist_bucket_max(CD_HIST_BUCKETS - 1) >= (INT64_C(1) << 34) - 1);
    assert_true(cd_hist_index(INT64_C(10000000000)) < CD_HIST_BUCKETS - 1);
}

static void empty_is_zero(void **state) {
    (void)state;
    cd_hist_value v = {0};
    cd_percentiles p;
    cd_hist_percentiles(&v, &p);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.p50, 0);
    assert_int_equal(p.p999, 0);
    assert_int_equal(p.max, 0);
}

static void uniform_percentiles(void **state) {
    (void)state;
    static cd_hist h;
    for (int64_t v = 1; v <= 100000; v++) {
        cd_hist_record(&h, v);
    }
    static cd_hist_value v;
    cd_hist_add(&h, &v);
    cd_percentiles p;
    cd_hist_percentiles(&v, &p);
    assert_int_equal(p.count, 100000);
    assert_within_bucket(p.p50, 50000);
    assert_within_bucket(p.p99, 99000);
    assert_within_bucket(p.p999, 99900);
    assert_int_equal(p.max, 100000);
    assert_within_bucket(cd_hist_quantile(&v, 0.25), 25000);
    assert_int_equal(cd_hist_quantile(&v, 0.0), 1);
}

static void tail_percentiles(void **state) {
    (void)state;
    // 990 fast solves and 10 slow ones: p99 is still fast, p99.9 is slow.
    static cd_hist h;
    for (int i = 0; i < 1000; i++) {
        cd_hist_record(&h, i < 990 ? 3000 : 2000000);
    }
    static cd_hist_value v;
    cd_hist_add(&h, &v);
    cd_percentiles p;
    cd_hist_percentiles(&v, &p);
    assert_int_equal(p.count, 1000);
    assert_within_bucket(p.p50, 3000);
    assert_within_bucket(p.p99, 3000);
    assert_int_equal(p.p999, 2000000); /* capped at the max, which is exact */
    assert_int_equal(p.max, 2000000);
}

static void snapshots_sum(void **state) {
    (void)state;
    static cd_hist a, b, both;
    for (int64_t v = 0; v < 5000; v++) {
        const int64_t x = v * v % 777777;
        cd_hist_record(v % 3 ? &a : &b, x);
        cd_hist_record(&both, x);
    }
    static cd_hist_value sa, sb, sum, want;
    cd_hist_add(&a, &sa);
    cd_hist_add(&b, &sb);
    cd_hist_merge(&sa, &sum);
    cd_hist_merge(&sb, &sum);
    cd_hist_add(&both, &want);
    assert_int_equal(sum.count, want.count);
    assert_int_equal(sum.max, want.max);
    assert_memory_equal(sum.n, want.n, sizeof sum.n);
}

#define N_CONCURRENT 2000000

static void *writer(void *arg) {
    cd_hist *h = arg;
    for (int i = 0; i < N_CONCURRENT; i++) {
        cd_hist_record(h, i & 1 ? 100000 : 1000);
    }
    return NULL;
}

static void concurrent_writer_and_reader(void **state) {
    (void)state;
    static cd_hist h;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, &h), 0);
    uint64_t last = 0;
    static cd_hist_value v;
    for (int k = 0; k < 2000 && last < N_CONCURRENT; k++) {
        v = (cd_hist_value){0};
        cd_hist_add(&h, &v);
        cd_percentiles p;
        cd_hist_percentiles(&v, &p);
        assert_true(p.count >= last);
        assert_true(p.p50 <= p.p99 && p.p99 <= p.p999 && p.p999 <= p.max);
        // Only the two values' buckets ever count anything.
        assert_int_equal(v.n[cd_hist_index(1000)] + v.n[cd_hist_index(100000)], v.count);
        last = p.count;
    }
    pthread_join(t, NULL);
    v = (cd_hist_value){0};
    cd_hist_add(&h, &v);
    assert_int_equal(v.count, N_CONCURRENT);
    assert_int_equal(v.n[cd_hist_index(1000)], N_CONCURRENT / 2);
    assert_int_equal(v.max, 100000);
}

static void headline_counts_the_last_minute(void **state) {
    (void)state;
    static cd_headline h;
    static cd_stats st;
    static cd_hist lat;
    static uint64_t per_second[100];
    char line[256], want[256];
    st.sessions = 2;
    cd_headline_update(&h, &st, INT64_C(1000000000), line, sizeof line);
    assert_string_equal(line, "2 sessions, - ticks/s, p99 latency -, 0 deadline misses in the "
                              "last minute");
    for (int k = 1; k < 100; k++) {
        // Second k: 1000 ticks, k % 7 misses, and 100 results 10 us (k even) or 1 ms (odd) late.
        per_second[k] = (uint64_t)(k % 7);
        st.ticks += 1000;
        st.deadline_misses += per_second[k];
        for (int i = 0; i < 100; i++) {
            cd_hist_record(&lat, k % 2 ? 1000000 : 10000);
        }
        st.latency_hist = (cd_hist_value){0};
        cd_hist_add(&lat, &st.latency_hist);
        cd_headline_update(&h, &st, INT64_C(1000000000) * (k + 1), line, sizeof line);
        uint64_t minute = 0;
        for (int j = k > 60 ? k - 59 : 1; j <= k; j++) {
            minute += per_second[j];
        }
        // The bucket of 10 us ends at 10239 ns; 1 ms is the max, which caps its bucket's edge.
        snprintf(want, sizeof want, "2 sessions, 1000 ticks/s, p99 latency %s, %llu deadline "
                 "misses in the last minute", k % 2 ? "1000 us" : "10 us",
                 (unsigned long long)minute);
        assert_string_equal(line, want);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buckets_tile_the_values),
        cmocka_unit_test(empty_is_zero),
        cmocka_unit_test(uniform_percentiles),
        cmocka_unit_test(tail_percentiles),
        cmocka_unit_test(snapshots_sum),
        cmocka_unit_test(concurrent_writer_and_reader),
        cmocka_unit_test(headline_counts_the_last_minute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
