/* SPDX-License-Identifier: MIT */
/* The latest-value slot (triple buffer): nothing before the first publish, newest wins (and is
 * reported fresh until taken), superseded values are reported, the consumer's buffer is never the
 * producer's, and under a concurrent producer every taken value is whole, newer than the last,
 * and the final one is the last published. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "service/slot.h"
#include "testlib.h"

#define WORDS 32

struct value {
    uint64_t seq;
    uint64_t words[WORDS]; /* all equal to seq: a torn read would show mixed values */
};

static void fill(struct value *v, uint64_t seq) {
    v->seq = seq;
    for (int i = 0; i < WORDS; i++) {
        v->words[i] = seq;
    }
}

static void nothing_before_publish(void **state) {
    (void)state;
    struct value b[3];
    cd_slot s;
    cd_slot_init(&s, &b[0], &b[1], &b[2]);
    assert_false(cd_slot_has_fresh(&s));
    assert_null(cd_slot_take(&s));
}

static void newest_wins(void **state) {
    (void)state;
    struct value b[3];
    cd_slot s;
    cd_slot_init(&s, &b[0], &b[1], &b[2]);
    fill(cd_slot_back(&s), 1);
    assert_false(cd_slot_publish(&s));
    fill(cd_slot_back(&s), 2);
    assert_true(cd_slot_publish(&s)); /* 1 was never taken */
    fill(cd_slot_back(&s), 3);
    assert_true(cd_slot_publish(&s));
    assert_true(cd_slot_has_fresh(&s));
    const struct value *v = cd_slot_take(&s);
    assert_non_null(v);
    assert_int_equal(v->seq, 3);
    assert_false(cd_slot_has_fresh(&s));
    assert_null(cd_slot_take(&s)); /* taken once only */
    fill(cd_slot_back(&s), 4);
    assert_false(cd_slot_publish(&s)); /* 3 was taken: nothing superseded */
    v = cd_slot_take(&s);
    assert_int_equal(v->seq, 4);
}

static void consumer_buffer_is_never_the_producers(void **state) {
    (void)state;
    struct value b[3];
    cd_slot s;
    cd_slot_init(&s, &b[0], &b[1], &b[2]);
    t_rng rng = t_rng_seed(0x5107);
    const void *front = NULL;
    // Any interleaving of publishes and takes: the buffer the producer fills is never the one
    // the consumer holds, and the one it holds is unchanged by later publishes.
    for (uint64_t seq = 1; seq < 5000; seq++) {
        struct value *back = cd_slot_back(&s);
        assert_ptr_not_equal(back, front);
        fill(back, seq);
        (void)cd_slot_publish(&s);
        if (front) {
            assert_int_equal(((const struct value *)front)->words[0],
                             ((const struct value *)front)->seq);
        }
        if (t_rng_below(&rng, 3) == 0) {
            const struct value *v = cd_slot_take(&s);
            assert_non_null(v);
            assert_int_equal(v->seq, seq);
            front = v;
        }
    }
}

#define N_CONCURRENT 200000

struct shared {
    cd_slot slot;
    uint64_t superseded; /* producer's count */
    _Atomic bool done;
};

static void *producer(void *arg) {
    struct shared *sh = arg;
    for (uint64_t seq = 1; seq <= N_CONCURRENT; seq++) {
        fill(cd_slot_back(&sh->slot), seq);
        sh->superseded += cd_slot_publish(&sh->slot);
        if (seq % 64 == 0) {
            sched_yield(); /* let the consumer in on a single core too */
        }
    }
    atomic_store_explicit(&sh->done, true, memory_order_release);
    return NULL;
}

static void concurrent_newest_wins(void **state) {
    (void)state;
    static struct value b[3];
    static struct shared sh;
    cd_slot_init(&sh.slot, &b[0], &b[1], &b[2]);
    sh.superseded = 0;
    atomic_init(&sh.done, false);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, &sh), 0);
    uint64_t last = 0, taken = 0;
    for (;;) {
        const bool done = atomic_load_explicit(&sh.done, memory_order_acquire);
        const struct value *v = cd_slot_take(&sh.slot);
        if (v) {
            // Whole (no word from another publish) and strictly newer than the last one taken.
            for (int i = 0; i < WORDS; i++) {
                assert_int_equal(v->words[i], v->seq);
            }
            assert_true(v->seq > last);
            last = v->seq;
            taken++;
        } else if (done) {
            break;
        }
    }
    pthread_join(t, NULL);
    // The newest value always reaches the consumer, and every publish was either taken or
    // reported superseded to the producer: nothing is lost silently.
    assert_int_equal(last, N_CONCURRENT);
    assert_int_equal(taken + sh.superseded, N_CONCURRENT);
    assert_true(taken >= 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_before_publish),
        cmocka_unit_test(newest_wins),
        cmocka_unit_test(consumer_buffer_is_never_the_producers),
        cmocka_unit_test(concurrent_newest_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
