/* SPDX-License-Identifier: MIT */
/* The SPSC result ring: capacity rules, full and empty, FIFO order across wrap-around, element
 * alignment, and order without loss or duplication under a concurrent producer thread. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "service/ring.h"
#include "testlib.h"

struct item {
    uint64_t seq;
    char pad[13]; /* an odd size, so the stride has to round up */
};

static void rejects_bad_capacity(void **state) {
    (void)state;
    cd_ring r;
    assert_int_equal(cd_ring_init(&r, 0, sizeof(struct item)), -EINVAL);
    assert_int_equal(cd_ring_init(&r, 3, sizeof(struct item)), -EINVAL);
    assert_int_equal(cd_ring_init(&r, 4, 0), -EINVAL);
    cd_ring_fini(&r);
    assert_int_equal(cd_ring_init(&r, 1, sizeof(struct item)), 0);
    assert_int_equal(cd_ring_capacity(&r), 1);
    cd_ring_fini(&r);
}

static void elements_are_aligned_and_distinct(void **state) {
    (void)state;
    cd_ring r;
    assert_int_equal(cd_ring_init(&r, 8, sizeof(struct item)), 0);
    for (size_t i = 0; i < 8; i++) {
        const uintptr_t p = (uintptr_t)cd_ring_at(&r, i);
        assert_int_equal(p % alignof(max_align_t), 0);
        if (i > 0) {
            assert_true(p - (uintptr_t)cd_ring_at(&r, i - 1) >= sizeof(struct item));
        }
    }
    cd_ring_fini(&r);
}

static void fills_then_refuses(void **state) {
    (void)state;
    cd_ring r;
    assert_int_equal(cd_ring_init(&r, 4, sizeof(struct item)), 0);
    assert_null(cd_ring_peek(&r));
    for (uint64_t i = 0; i < 4; i++) {
        struct item *it = cd_ring_claim(&r);
        assert_non_null(it);
        it->seq = 100 + i;
        cd_ring_push(&r);
    }
    // Full: the producer is told, and nothing already queued is disturbed.
    assert_null(cd_ring_claim(&r));
    struct item *head = cd_ring_peek(&r);
    assert_non_null(head);
    assert_int_equal(head->seq, 100);
    cd_ring_pop(&r);
    // One slot free again, and it is the one just popped (the ring reuses memory in place).
    struct item *again = cd_ring_claim(&r);
    assert_ptr_equal(again, head);
    again->seq = 104;
    cd_ring_push(&r);
    for (uint64_t i = 1; i <= 4; i++) {
        struct item *it = cd_ring_peek(&r);
        assert_non_null(it);
        assert_int_equal(it->seq, 100 + i);
        cd_ring_pop(&r);
    }
    assert_null(cd_ring_peek(&r));
    cd_ring_fini(&r);
}

static void wraps_in_order(void **state) {
    (void)state;
    cd_ring r;
    assert_int_equal(cd_ring_init(&r, 4, sizeof(struct item)), 0);
    t_rng rng = t_rng_seed(0x71b6);
    uint64_t next_in = 0, next_out = 0;
    // Random bursts of pushes and pops take the counters around the ring many times at every
    // fill level.
    for (int round = 0; round < 2000; round++) {
        const int push = t_rng_below(&rng, 6), pop = t_rng_below(&rng, 6);
        for (int i = 0; i < push; i++) {
            struct item *it = cd_ring_claim(&r);
            if (next_in - next_out == 4) {
                assert_null(it);
                break;
            }
            assert_non_null(it);
            it->seq = next_in++;
            cd_ring_push(&r);
        }
        for (int i = 0; i < pop; i++) {
            struct item *it = cd_ring_peek(&r);
            if (next_out == next_in) {
                assert_null(it);
                break;
            }
            assert_non_null(it);
            assert_int_equal(it->seq, next_out++);
            cd_ring_pop(&r);
        }
    }
    assert_true(next_out > 1000);
    cd_ring_fini(&r);
}

#define N_CONCURRENT 200000

static void *producer(void *arg) {
    cd_ring *r = arg;
    for (uint64_t i = 0; i < N_CONCURRENT; i++) {
        struct item *it;
        while (!(it = cd_ring_claim(r))) {
            sched_yield();
        }
        it->seq = i;
        memset(it->pad, (int)(i & 0x7f), sizeof it->pad);
        cd_ring_push(r);
    }
    return NULL;
}

static void concurrent_producer_in_order(void **state) {
    (void)state;
    cd_ring r;
    assert_int_equal(cd_ring_init(&r, 8, sizeof(struct item)), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, &r), 0);
    for (uint64_t want = 0; want < N_CONCURRENT;) {
        const struct item *it = cd_ring_peek(&r);
        if (!it) {
            sched_yield();
            continue;
        }
        // Every element arrives once, in order, with the contents the producer wrote.
        assert_int_equal(it->seq, want);
        for (size_t k = 0; k < sizeof it->pad; k++) {
            assert_int_equal(it->pad[k], (char)(want & 0x7f));
        }
        cd_ring_pop(&r);
        want++;
    }
    pthread_join(t, NULL);
    assert_null(cd_ring_peek(&r));
    cd_ring_fini(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejects_bad_capacity),
        cmocka_unit_test(elements_are_aligned_and_distinct),
        cmocka_unit_test(fills_then_refuses),
        cmocka_unit_test(wraps_in_order),
        cmocka_unit_test(concurrent_producer_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
