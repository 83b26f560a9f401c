/* SPDX-License-Identifier: MIT */
/* The client library's Result paths (clients/c/result.h): for every Result the fast way takes,
 * the general way (protobuf-c's unpack, then cdc_result_from_message) gives the same cdc_result;
 * the fast way takes what the daemon sends (every status, with and without timing and detail,
 * joints and bodies), declines what it must leave to the general way, and never disagrees on
 * bytes mutated at random. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "result.h"
#include "result_same.h"
#include "wire/codec.h"

static const cs_limits lim = {.max_bodies = 4, .max_contacts = 32, .max_joints = 3, .max_dirs = 8};

enum { BUF = 16384 };

// Both ways on data: the fast way's answer (1 taken); when taken, the general way's result must
// be the same. general_ok says whether the general way took it.
static int both_ways(const uint8_t *data, size_t len, bool *general_ok) {
    static cdc_result_store fast_st, gen_st;
    cdc_result_store_grow(&fast_st, (size_t)lim.max_bodies, (size_t)lim.max_contacts,
                          (size_t)lim.max_joints);
    cdc_result f, g;
    const int taken = cdc_result_decode(&fast_st, data, len, &f);
    Contactd__V1__ServerMessage *m = contactd__v1__server_message__unpack(NULL, len, data);
    *general_ok = m && m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT &&
                  cdc_result_from_message(&gen_st, m->result, &g) == 0;
    if (taken) {
        assert_true(*general_ok);
        assert_true(t_result_same(&f, &g));
    }
    if (m) {
        contactd__v1__server_message__free_unpacked(m, NULL);
    }
    return taken;
}

// A result of nc contacts, nb bodies and nj joints with values drawn from rng, packed as the
// daemon packs it (no length prefix).
static size_t daemon_result(t_rng *rng, int nc, int nb, int nj, int status, bool timing,
                            const char *detail, uint8_t *out) {
    static cd_result_msg holder;
    static bool made;
    if (!made) {
        assert_int_equal(cd_codec_result_msg_init(&holder, &lim), 0);
        made = true;
    }
    static unsigned char mem[1 << 16];
    assert_true(cs_result_size(&lim) <= sizeof mem);
    cs_result r;
    cs_result_init(&r, mem, &lim);
    r.status = (cs_status)status;
    r.answer = (cs_answer)t_rng_below(rng, 4);
    r.solver = (cs_solver)t_rng_below(rng, CS_SOLVER_COUNT);
    r.seq = t_rng_next(rng);
    r.nc = nc, r.nb = nb, r.nj = nj;
    r.stats.pivots = t_rng_below(rng, 50);
    r.stats.iterations = t_rng_below(rng, 3);
    for (int i = 0; i < nc; i++) {
        r.contact_id[i] = t_rng_next(rng) >> t_rng_below(rng, 64);
        r.state[i] = (uint8_t)t_rng_below(rng, 4);
        for (int k = 0; k < 3; k++) {
            r.impulse[3 * i + k] = t_rng_range(rng, -1, 1) * (k == 2 && i % 3 == 0 ? 0 : 1);
            r.force[3 * i + k] = t_rng_range(rng, -1e3, 1e3);
        }
    }
    for (int j = 0; j < nb; j++) {
        r.body_id[j] = (uint32_t)t_rng_next(rng);
        for (int k = 0; k < 6; k++) {
            r.v[6 * j + k] = t_rng_range(rng, -2, 2);
        }
    }
    for (int j = 0; j < nj; j++) {
        r.joint_id[j] = (uint32_t)(j + 1);
        for (int k = 0; k < 3; k++) {
            r.joint_force[3 * j + k] = t_rng_range(rng, -5, 5);
            r.joint_torque[3 * j + k] = t_rng_range(rng, -1, 1);
        }
    }
    r.cert = (cs_certificate){.complementarity = 1e-17 * t_rng_unit(rng), .cone = 0,
                              .momentum = t_rng_unit(rng) * 1e-12};
    const int64_t base = (int64_t)(t_rng_next(rng) >> 2);
    const cd_timing t = {.received_ns = base, .release_ns = base, .solve_start_ns = base + 900,
                         .solve_ns = 12000, .deadline_ns = base + 800000,
                         .sent_ns = base + 14000, .deadline_met = status >= 0,
                         .miss = status >= 0 ? CD_MISS_NONE : CD_MISS_SOLVER,
                         .wake_late_ns = -5};
    const Contactd__V1__ServerMessage *env =
        cd_codec_result_build(&holder, &r, timing ? &t : NULL, t_rng_next(rng), detail);
    assert_non_null(env);
    const size_t n = protobuf_c_message_get_packed_size(&env->base);
    assert_true(n <= BUF);
    assert_int_equal(protobuf_c_message_pack(&env->base, out), n);
    return n;
}

// What the daemon sends: taken by the fast way, and alike.
static void daemon_results_taken_alike(void **state) {
    (void)state;
    static uint8_t buf[BUF];
    t_rng rng = t_rng_seed(3);
    static const char *const details[] = {NULL, "", "fell back: the last certified answer",
                                          "deadline missed by 1200 ns: solver"};
    for (int k = 0; k < 200; k++) {
        const int nc = t_rng_below(&rng, lim.max_contacts + 1), nb = t_rng_below(&rng, 5),
                  nj = t_rng_below(&rng, 4);
        const int status = k % 5 == 4 ? CS_RAY : k % 5; // converged .. fallback, and a failure
        const size_t n = daemon_result(&rng, nc, nb, nj, status, k % 7 != 0, details[k % 4], buf);
        bool general_ok;
        assert_int_equal(both_ways(buf, n, &general_ok), 1);
    }
}

// What the fast way leaves to the general one.
static void unusual_results_declined(void **state) {
    (void)state;
    static uint8_t buf[BUF], alt[BUF];
    t_rng rng = t_rng_seed(11);
    const size_t n = daemon_result(&rng, 16, 1, 0, CS_CONVERGED, true, NULL, buf);
    bool general_ok;
    assert_int_equal(both_ways(buf, n, &general_ok), 1);
    static const struct {
        const char *what;
        uint8_t bytes[12];
        size_t len;
    } extra[] = {
        {"an unknown field", {0x60, 0x01}, 2},                       // field 12
        {"seq again", {0x08, 0x05}, 2},                              // the last one wins
        {"timing again", {0x2a, 0x02, 0x08, 0x01}, 4},               // merged
        {"a detail with a NUL", {0x4a, 0x03, 'a', 0, 'b'}, 5},       // a C string ends at it
        {"a detail not in ASCII", {0x4a, 0x02, 0xc3, 0xa9}, 4},      // UTF-8 e-acute
        {"a contact with an unknown field", {0x22, 0x02, 0x28, 0x01}, 4},
    };
    for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++) {
        const size_t m = t_envelope_plus(buf, n, extra[k].bytes, extra[k].len, alt);
        if (both_ways(alt, m, &general_ok) != 0) {
            fail_msg("taken: %s", extra[k].what);
        }
        assert_true(general_ok); // all of them are Results protobuf-c reads
    }
    // More contacts than the store holds: declined; the general way grows its store.
    static cdc_result_store small;
    cdc_result_store_grow(&small, 1, 15, 0);
    cdc_result r;
    assert_int_equal(cdc_result_decode(&small, buf, n, &r), 0);
    cdc_result_store_grow(&small, 1, 16, 0);
    assert_int_equal(cdc_result_decode(&small, buf, n, &r), 1);
    assert_int_equal(r.nc, 16);
    cdc_result_store_free(&small);
    // A length prefix or a tag in more than 5 bytes, even of a small value: protobuf-c refuses
    // them, so the fast way must too (found by fuzz_result: field 2 of length 0 in 6 bytes).
    static const uint8_t long_len[] = {0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    assert_int_equal(both_ways(long_len, sizeof long_len, &general_ok), 0);
    assert_false(general_ok);
    static const uint8_t long_tag[] = {0x92, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00};
    assert_int_equal(both_ways(long_tag, sizeof long_tag, &general_ok), 0);
    assert_false(general_ok);
    // A Welcome, bytes after the Result, the Result cut short.
    static const uint8_t welcome[] = {0x0a, 0x02, 0x08, 0x01};
    assert_int_equal(both_ways(welcome, sizeof welcome, &general_ok), 0);
    memcpy(alt, buf, n);
    alt[n] = 0x2a; // a Goodbye after it
    alt[n + 1] = 0x00;
    assert_int_equal(both_ways(alt, n + 2, &general_ok), 0);
    for (size_t cut = 0; cut < n; cut += 5) {
        assert_int_equal(both_ways(buf, cut, &general_ok), 0);
    }
}

// Random mutations of daemon Results: the two ways never disagree (both_ways asserts it), and
// the fast way takes a good share of them (many mutants change only numbers).
static void mutants_agree(void **state) {
    (void)state;
    static uint8_t buf[BUF], mut[BUF];
    t_rng rng = t_rng_seed(5);
    int taken = 0, tried = 0;
    for (int k = 0; k < 40; k++) {
        const size_t n = daemon_result(&rng, 1 + k % 8, k % 3, k % 2, CS_CONVERGED, true,
                                       k % 2 ? "why" : NULL, buf);
        for (int t = 0; t < 500; t++) {
            memcpy(mut, buf, n);
            const size_t m = t_mutate(&rng, mut, n);
            bool general_ok;
            tried++;
            taken += both_ways(mut, m, &general_ok);
        }
    }
    printf("# %d of %d mutants taken by the fast way, all alike\n", taken, tried);
    assert_true(taken > tried / 20);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(daemon_results_taken_alike),
        cmocka_unit_test(unusual_results_declined),
        cmocka_unit_test(mutants_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
