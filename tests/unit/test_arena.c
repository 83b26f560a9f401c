/* SPDX-License-Identifier: MIT */
/* The decoding arena: allocations are aligned and disjoint, a reset reuses the same memory (no
 * heap allocation once the arena fits the messages), a message larger than the arena still
 * decodes (overflow blocks) and the arena then grows to fit it, but never past the bound; a fixed
 * arena lives in the memory lent to it, fails what does not fit and never frees that memory; a
 * real Frame unpacked into it equals one unpacked with malloc. */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "contactd.pb-c.h"
#include "wire/arena.h"
#include "wire/codec.h"
#include "solver/contact.h"
#include "wire/scene_json.h"
#include "testlib.h"

static void *take(cd_arena *a, size_t n) {
    return a->allocator.alloc(a->allocator.allocator_data, n);
}

static void aligned_disjoint_and_reused(void **state) {
    (void)state;
    cd_arena a;
    assert_int_equal(cd_arena_init(&a, 4096), 0);
    unsigned char *p = take(&a, 3), *q = take(&a, 100);
    assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
    assert_int_equal((uintptr_t)q % alignof(max_align_t), 0);
    assert_true(q >= p + 3);
    cd_arena_reset(&a, 1 << 20);
    // The same memory again, and no heap allocation for what fits.
    t_alloc_count_start();
    unsigned char *p2 = take(&a, 3);
    const long allocations = t_alloc_count_stop();
    assert_ptr_equal(p2, p);
    if (allocations >= 0) {
        assert_int_equal(allocations, 0);
    }
    cd_arena_fini(&a);
}

static void overflow_then_grow_within_the_bound(void **state) {
    (void)state;
    cd_arena a;
    assert_int_equal(cd_arena_init(&a, 1024), 0);
    unsigned char *big = take(&a, 10000);
    assert_non_null(big);
    memset(big, 0x5a, 10000); /* ASan checks it is real memory */
    cd_arena_reset(&a, 1 << 20);
    assert_true(a.cap >= 10000);
    // Now it fits in the arena itself.
    assert_true(take(&a, 10000) == (void *)a.base);
    cd_arena_reset(&a, 1 << 20);
    // Beyond the bound the arena does not grow; the message still decoded through overflow.
    const size_t cap = a.cap;
    assert_non_null(take(&a, 3 * cap));
    cd_arena_reset(&a, cap);
    assert_int_equal(a.cap, cap);
    cd_arena_fini(&a);
}

static void a_fixed_arena_lives_in_lent_memory(void **state) {
    (void)state;
    static alignas(max_align_t) unsigned char lent[4096];
    cd_arena a;
    assert_int_equal(cd_arena_init(&a, 64), 0);
    cd_arena_fix(&a, lent, sizeof lent);
    t_alloc_count_start();
    assert_ptr_equal(take(&a, 100), lent);
    assert_null(take(&a, sizeof lent)); /* no overflow block */
    assert_true(a.exhausted);
    cd_arena_reset(&a, 1 << 20); /* nor growth */
    const long allocations = t_alloc_count_stop();
    if (allocations >= 0) {
        assert_int_equal(allocations, 0);
    }
    assert_false(a.exhausted);
    assert_ptr_equal(a.base, lent);
    assert_int_equal(a.cap, sizeof lent);
    assert_ptr_equal(take(&a, 16), lent);
    // The lent memory is not the arena's to free (the allocator would abort on it).
    cd_arena_fini(&a);
    assert_null(a.base);
}

static void a_frame_decodes_the_same(void **state) {
    (void)state;
    cs_scene s;
    char err[256];
    assert_int_equal(cd_scene_json_load(t_data_path("peg_in_hole.json"), cs_scene_validate,
                                        &s, err, sizeof err), 0);
    const cs_limits lim = {.max_bodies = 1, .max_contacts = 16, .max_dirs = 8};
    cd_frame_msg fm;
    assert_int_equal(cd_codec_frame_msg_init(&fm, &lim), 0);
    const Contactd__V1__ClientMessage *env = cd_codec_frame_build(&fm, &s);
    const size_t n = protobuf_c_message_get_packed_size(&env->base);
    uint8_t *buf = malloc(n);
    protobuf_c_message_pack(&env->base, buf);
    cd_arena a;
    assert_int_equal(cd_arena_init(&a, 256), 0); /* too small: overflow on the first pass */
    for (int pass = 0; pass < 2; pass++) {
        Contactd__V1__ClientMessage *x = contactd__v1__client_message__unpack(&a.allocator, n,
                                                                               buf);
        Contactd__V1__ClientMessage *y = contactd__v1__client_message__unpack(NULL, n, buf);
        assert_non_null(x);
        assert_int_equal(x->frame->n_contacts, y->frame->n_contacts);
        for (size_t i = 0; i < x->frame->n_contacts; i++) {
            assert_int_equal(x->frame->contacts[i]->id, y->frame->contacts[i]->id);
            assert_near(x->frame->contacts[i]->normal->z, y->frame->contacts[i]->normal->z, 0.0);
        }
        contactd__v1__client_message__free_unpacked(y, NULL);
        cd_arena_reset(&a, 1 << 20);
    }
    cd_arena_fini(&a);
    free(buf);
    cd_codec_frame_msg_fini(&fm);
    cd_scene_json_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aligned_disjoint_and_reused),
        cmocka_unit_test(overflow_then_grow_within_the_bound),
        cmocka_unit_test(a_fixed_arena_lives_in_lent_memory),
        cmocka_unit_test(a_frame_decodes_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
