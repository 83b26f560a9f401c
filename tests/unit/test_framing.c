/* SPDX-License-Identifier: MIT */
/* Framing: varints, and a stream of messages fed split at every byte, merged into one read,
 * oversized, or with a malformed prefix; a lent buffer takes over what was buffered, serves the
 * largest message with no allocation and stays the caller's; the bytes of a message begun are
 * what is pending. The expected messages are built
 * here byte by byte, so every check compares against an independent encoding. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "testlib.h"

#include "wire/framing.h"

// A stream of three messages: empty, 5 bytes (1-byte prefix) and 300 bytes (2-byte prefix).
enum { NMSG = 3 };
static const size_t msg_len[NMSG] = {0, 5, 300};
static uint8_t stream[2 * CD_VARINT_MAX + 5 + 300 + 1];
static size_t stream_len;

static uint8_t body_byte(int m, size_t i) {
    return (uint8_t)(31 * m + 7 * i + 1);
}

static void build_stream(void) {
    stream_len = 0;
    for (int m = 0; m < NMSG; m++) {
        // 300 = 0b10_0101100: low seven bits with the continuation bit, then 2.
        if (msg_len[m] < 128) {
            stream[stream_len++] = (uint8_t)msg_len[m];
        } else {
            stream[stream_len++] = (uint8_t)((msg_len[m] & 0x7f) | 0x80);
            stream[stream_len++] = (uint8_t)(msg_len[m] >> 7);
        }
        for (size_t i = 0; i < msg_len[m]; i++) {
            stream[stream_len++] = body_byte(m, i);
        }
    }
}

// Takes every whole message out of f, checking each against the next expected one.
static void drain(cd_framer *f, int *next) {
    const uint8_t *msg;
    size_t len;
    int r;
    while ((r = cd_framer_next(f, &msg, &len)) == 1) {
        assert_true(*next < NMSG);
        assert_int_equal(len, msg_len[*next]);
        for (size_t i = 0; i < len; i++) {
            assert_int_equal(msg[i], body_byte(*next, i));
        }
        (*next)++;
    }
    assert_int_equal(r, 0);
}

static void varint_round_trip(void **state) {
    (void)state;
    const uint64_t values[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX,
                               (uint64_t)1 << 56, UINT64_MAX};
    const size_t sizes[] = {1, 1, 1, 2, 2, 2, 3, 5, 9, 10};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t buf[CD_VARINT_MAX];
        const size_t n = cd_varint_encode(values[i], buf);
        assert_int_equal(n, sizes[i]);
        uint64_t back = 0;
        assert_int_equal(cd_varint_decode(buf, n, &back), (int)n);
        assert_true(back == values[i]);
        // One byte short is "need more", never a wrong value.
        assert_int_equal(cd_varint_decode(buf, n - 1, &back), 0);
    }
    const uint8_t b300[] = {0xac, 0x02};
    uint64_t v = 0;
    assert_int_equal(cd_varint_decode(b300, 2, &v), 2);
    assert_int_equal(v, 300);
}

static void bad_varints(void **state) {
    (void)state;
    uint64_t v;
    uint8_t eleven[11];
    memset(eleven, 0xff, sizeof eleven);
    // Ten continuation bytes: longer than any 64-bit varint.
    assert_int_equal(cd_varint_decode(eleven, sizeof eleven, &v), -EPROTO);
    // Ten bytes whose last carries more than bit 63.
    uint8_t over[CD_VARINT_MAX];
    memset(over, 0xff, sizeof over);
    over[9] = 0x02;
    assert_int_equal(cd_varint_decode(over, sizeof over, &v), -EPROTO);
    over[9] = 0x01;
    assert_int_equal(cd_varint_decode(over, sizeof over, &v), 10);
    assert_true(v == UINT64_MAX);

    // In a stream, a malformed prefix stops it for good.
    cd_framer f;
    assert_int_equal(cd_framer_init(&f, 1 << 20), 0);
    assert_int_equal(cd_framer_feed(&f, eleven, sizeof eleven), 0);
    const uint8_t *msg;
    size_t len;
    assert_int_equal(cd_framer_next(&f, &msg, &len), -EPROTO);
    assert_int_equal(cd_framer_next(&f, &msg, &len), -EPROTO);
    cd_framer_fini(&f);
}

static void split_at_every_byte(void **state) {
    (void)state;
    build_stream();
    for (size_t cut = 0; cut <= stream_len; cut++) {
        cd_framer f;
        assert_int_equal(cd_framer_init(&f, 300), 0);
        int next = 0;
        assert_int_equal(cd_framer_feed(&f, stream, cut), 0);
        drain(&f, &next);
        assert_int_equal(cd_framer_feed(&f, stream + cut, stream_len - cut), 0);
        drain(&f, &next);
        assert_int_equal(next, NMSG);
        cd_framer_fini(&f);
    }
}

// What a reader holds at its peer's EOF: the bytes of a message begun, until it is whole.
static void pending_is_a_message_begun(void **state) {
    (void)state;
    cd_framer f;
    assert_int_equal(cd_framer_init(&f, 300), 0);
    assert_int_equal(cd_framer_pending(&f), 0);
    const uint8_t msg[] = {4, 1, 2, 3, 4};
    const uint8_t *out;
    size_t len;
    assert_int_equal(cd_framer_feed(&f, msg, 3), 0);
    assert_int_equal(cd_framer_next(&f, &out, &len), 0);
    assert_int_equal(cd_framer_pending(&f), 3);
    assert_int_equal(cd_framer_feed(&f, msg + 3, 2), 0);
    assert_int_equal(cd_framer_next(&f, &out, &len), 1);
    assert_int_equal(cd_framer_pending(&f), 0);
    cd_framer_fini(&f);
}

static void one_byte_at_a_time(void **state) {
    (void)state;
    build_stream();
    cd_framer f;
    // The smallest buffer that fits the largest message: reuse of the front must work.
    assert_int_equal(cd_framer_init(&f, 300), 0);
    int next = 0;
    for (int round = 0; round < 3; round++) {
        next = 0;
        for (size_t i = 0; i < stream_len; i++) {
            assert_int_equal(cd_framer_feed(&f, stream + i, 1), 0);
            drain(&f, &next);
        }
        assert_int_equal(next, NMSG);
    }
    cd_framer_fini(&f);
}

/* An idle connection's framer is small; a large message makes it grow to what the prefix
 * announces, read the way a server reads: never more than cd_framer_space at a time. */
static void grows_to_a_large_message(void **state) {
    (void)state;
    enum { BODY = 100000 };
    static uint8_t wire[BODY + CD_VARINT_MAX];
    const size_t pre = cd_varint_encode(BODY, wire);
    for (size_t i = 0; i < BODY; i++)
        wire[pre + i] = (uint8_t)(i * 7 + 3);
    const size_t total = pre + BODY;
    cd_framer f;
    assert_int_equal(cd_framer_init(&f, 1 << 20), 0);
    assert_true(cd_framer_space(&f) <= CD_FRAMER_START);
    size_t sent = 0;
    const uint8_t *msg = NULL;
    size_t len = 0;
    int r = 0, reads = 0;
    while (r == 0 && reads++ < 1000) {
        size_t n = cd_framer_space(&f);
        assert_true(n > 0);
        n = n < total - sent ? n : total - sent;
        assert_int_equal(cd_framer_feed(&f, wire + sent, n), 0);
        sent += n;
        r = cd_framer_next(&f, &msg, &len);
    }
    assert_int_equal(r, 1);
    assert_int_equal(sent, total);
    assert_int_equal(len, BODY);
    assert_memory_equal(msg, wire + pre, BODY);
    cd_framer_fini(&f);
}

static void a_lent_buffer_keeps_what_was_buffered(void **state) {
    (void)state;
    enum { MOST = 1000 };
    static uint8_t wire[2 * (MOST + CD_VARINT_MAX)];
    size_t total = 0, pre[2];
    for (int k = 0; k < 2; k++) {
        const size_t body = k ? MOST : 37;
        pre[k] = total + cd_varint_encode(body, wire + total);
        for (size_t i = 0; i < body; i++)
            wire[pre[k] + i] = (uint8_t)(i * 5 + (size_t)k);
        total = pre[k] + body;
    }
    cd_framer f;
    assert_int_equal(cd_framer_init(&f, MOST), 0);
    assert_int_equal(cd_framer_most(&f), MOST + CD_VARINT_MAX);
    // Half of the first message arrives before the framer gets its lent buffer.
    assert_int_equal(cd_framer_feed(&f, wire, 20), 0);
    uint8_t *buf = malloc(cd_framer_most(&f));
    assert_non_null(buf);
    cd_framer_lend(&f, buf);
    assert_int_equal(cd_framer_space(&f), MOST + CD_VARINT_MAX - 20);
    t_alloc_count_start();
    size_t sent = 20;
    int got = 0;
    while (sent < total) {
        size_t n = cd_framer_space(&f);
        n = n < total - sent ? n : total - sent;
        assert_int_equal(cd_framer_feed(&f, wire + sent, n), 0);
        sent += n;
        const uint8_t *msg;
        size_t len;
        while (cd_framer_next(&f, &msg, &len) == 1) {
            assert_int_equal(len, got ? MOST : 37);
            assert_memory_equal(msg, wire + pre[got], len);
            assert_true(msg >= buf && msg + len <= buf + cd_framer_most(&f));
            got++;
        }
    }
    const long allocations = t_alloc_count_stop();
    if (allocations >= 0) {
        assert_int_equal(allocations, 0);
    }
    assert_int_equal(got, 2);
    // The buffer stays the caller's: freeing it after fini is the only free it gets.
    cd_framer_fini(&f);
    free(buf);
}

static void merged_messages(void **state) {
    (void)state;
    build_stream();
    cd_framer f;
    assert_int_equal(cd_framer_init(&f, 1000), 0);
    assert_int_equal(cd_framer_feed(&f, stream, stream_len), 0);
    // All three come out of one read, and each pointer stays valid until the next feed.
    const uint8_t *msgs[NMSG];
    size_t lens[NMSG];
    for (int m = 0; m < NMSG; m++) {
        assert_int_equal(cd_framer_next(&f, &msgs[m], &lens[m]), 1);
    }
    const uint8_t *extra;
    size_t extra_len;
    assert_int_equal(cd_framer_next(&f, &extra, &extra_len), 0);
    for (int m = 0; m < NMSG; m++) {
        assert_int_equal(lens[m], msg_len[m]);
        for (size_t i = 0; i < lens[m]; i++) {
            assert_int_equal(msgs[m][i], body_byte(m, i));
        }
    }
    // Another whole stream, then one in two parts: the part waits for the rest.
    int next = 0;
    assert_int_equal(cd_framer_feed(&f, stream, stream_len), 0);
    drain(&f, &next);
    assert_int_equal(next, NMSG);
    next = 0;
    // Eight bytes: the empty message, the 5-byte one (prefix + body) and one byte of the third.
    assert_int_equal(cd_framer_feed(&f, stream, 8), 0);
    drain(&f, &next);
    assert_int_equal(next, 2);
    assert_int_equal(cd_framer_feed(&f, stream + 8, stream_len - 8), 0);
    drain(&f, &next);
    assert_int_equal(next, NMSG);
    cd_framer_fini(&f);
}

static void oversized_message(void **state) {
    (void)state;
    cd_framer f;
    assert_int_equal(cd_framer_init(&f, 100), 0);
    const uint8_t *msg;
    size_t len;
    // Exactly max_msg is fine.
    uint8_t ok[1 + 100] = {100};
    assert_int_equal(cd_framer_feed(&f, ok, sizeof ok), 0);
    assert_int_equal(cd_framer_next(&f, &msg, &len), 1);
    assert_int_equal(len, 100);
    // One more byte is refused as soon as the prefix is complete, before any body arrives.
    const uint8_t big[] = {101};
    assert_int_equal(cd_framer_feed(&f, big, sizeof big), 0);
    assert_int_equal(cd_framer_next(&f, &msg, &len), -EMSGSIZE);
    cd_framer_fini(&f);

    // A hostile 2^63 length is refused the same way.
    assert_int_equal(cd_framer_init(&f, 100), 0);
    uint8_t huge[CD_VARINT_MAX];
    const size_t n = cd_varint_encode((uint64_t)1 << 63, huge);
    assert_int_equal(cd_framer_feed(&f, huge, n), 0);
    assert_int_equal(cd_framer_next(&f, &msg, &len), -EMSGSIZE);
    cd_framer_fini(&f);
}

static void capacity_is_enforced(void **state) {
    (void)state;
    cd_framer f;
    assert_int_equal(cd_framer_init(&f, 10), 0);
    assert_int_equal(cd_framer_space(&f), 10 + CD_VARINT_MAX);
    uint8_t bytes[64] = {3, 1, 2, 3};
    assert_int_equal(cd_framer_feed(&f, bytes, 4), 0);
    assert_int_equal(cd_framer_space(&f), 10 + CD_VARINT_MAX - 4);
    assert_int_equal(cd_framer_feed(&f, bytes, cd_framer_space(&f) + 1), -ENOBUFS);
    // Taking the message frees its bytes for the next feed.
    const uint8_t *msg;
    size_t len;
    assert_int_equal(cd_framer_next(&f, &msg, &len), 1);
    assert_int_equal(cd_framer_space(&f), 10 + CD_VARINT_MAX);
    memset(bytes, 0, sizeof bytes);
    bytes[0] = 10;
    assert_int_equal(cd_framer_feed(&f, bytes, 11), 0);
    assert_int_equal(cd_framer_next(&f, &msg, &len), 1);
    assert_int_equal(len, 10);
    cd_framer_fini(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(varint_round_trip),     cmocka_unit_test(bad_varints),
        cmocka_unit_test(split_at_every_byte),   cmocka_unit_test(one_byte_at_a_time),
        cmocka_unit_test(grows_to_a_large_message),
        cmocka_unit_test(merged_messages),       cmocka_unit_test(oversized_message),
        cmocka_unit_test(a_lent_buffer_keeps_what_was_buffered),
        cmocka_unit_test(capacity_is_enforced),
        cmocka_unit_test(pending_is_a_message_begun),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
