/* SPDX-License-Identifier: MIT */
/* Session recordings (io/record.h): records of every size go through the ring, across its end
 * many times, and come out in the file in order and intact; records that find the ring full (or
 * are larger than it) are dropped, counted, and the file says how many (RecordDropped entries
 * and the RecordEnd add up to exactly the drops); the header comes first and the end last with
 * the session's counts; a path that exists is refused and left alone; a file at its size limit
 * takes no more frames or results, and says how many it left out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contactd.pb-c.h"
#include "io/record.h"
#include "testlib.h"

#define RECORDS 4000

// The record with index i: its length and bytes (the index in its first four bytes).
static size_t rec_len(uint32_t i) {
    return 4 + (size_t)(i * 2654435761u % 3000);
}

static void rec_fill(uint8_t *p, uint32_t i) {
    memcpy(p, &i, 4);
    for (size_t k = 4; k < rec_len(i); k++) {
        p[k] = (uint8_t)(i + k);
    }
}

static size_t varint(const uint8_t *p, uint64_t *ret) {
    uint64_t v = 0;
    size_t n = 0;
    do {
        v |= (uint64_t)(p[n] & 0x7f) << (7 * n);
    } while (p[n++] & 0x80);
    *ret = v;
    return n;
}

// A recording made as admission makes one (on any thread), then handed to r.
static cd_recording *start(cd_recorder *r, const char *path, uint64_t max_file_bytes, char *err,
                           size_t errlen) {
    static const uint8_t header[] = {0x08, 0x01}; // RecordHeader{protocol_version: 1}
    cd_recording *rec = cd_recording_open(path, 1, max_file_bytes, header, sizeof header, err,
                                          errlen);
    if (rec) {
        cd_recording_start(r, rec);
    }
    return rec;
}

static void records_come_out_in_order_and_drops_are_counted(void **state) {
    (void)state;
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/test_record_%d.cdrec", (int)getpid());
    unlink(path);
    cd_recorder *r = NULL;
    assert_int_equal(cd_recorder_new(&r), 0);
    cd_recording *rec = start(r, path, UINT64_MAX, err, sizeof err);
    assert_non_null(rec);
    assert_string_equal(cd_recording_path(rec), path);
    // Created once: a second recording to the same path is refused.
    assert_null(start(r, path, UINT64_MAX, err, sizeof err));
    assert_non_null(strstr(err, "File exists"));
    static uint8_t buf[1 << 17];
    uint64_t dropped = 0;
    // Larger than the ring (64 KiB, the least): always dropped.
    dropped += !cd_recording_put(rec, CD_RECORD_CLIENT, buf, sizeof buf);
    for (uint32_t i = 0; i < RECORDS; i++) {
        rec_fill(buf, i);
        if (i % 2) {
            dropped += !cd_recording_put(rec, CD_RECORD_CLIENT, buf, rec_len(i));
        } else {
            // The claim-in-place path, as results take it.
            uint8_t *p = cd_recording_claim(rec, rec_len(i));
            if (p) {
                memcpy(p, buf, rec_len(i));
                cd_recording_commit(rec, CD_RECORD_CLIENT, rec_len(i));
            } else {
                dropped++;
            }
        }
        if (i % 64 == 0) {
            usleep(1000); // let the recorder catch up now and then, so most records pass
        }
    }
    assert_true(dropped >= 1);
    assert_int_equal(cd_recording_count(rec, CD_RECORD_CLIENT) + dropped, RECORDS + 1);
    cd_recording_end(rec, &(cd_record_end){.frames_received = 7, .frames_solved = 5});
    cd_recorder_free(r);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t file[1 << 24];
    const size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    unlink(path);
    size_t off = 0, entries = 0, got = 0;
    uint64_t reported = 0, last = 0;
    bool ended = false;
    while (off < n) {
        uint64_t len;
        off += varint(file + off, &len);
        const uint8_t *e = file + off;
        assert_false(ended); // the end is last
        if (e[0] == 0x12) { // client: its payload is the record as put
            uint64_t plen;
            const size_t h = 1 + varint(e + 1, &plen);
            assert_int_equal(h + plen, len);
            uint32_t i;
            memcpy(&i, e + h, 4);
            assert_true(got == 0 || i > last);
            assert_int_equal(plen, rec_len(i));
            rec_fill(buf, i);
            assert_memory_equal(e + h, buf, plen);
            last = i;
            got++;
        } else {
            Contactd__V1__RecordEntry *m = contactd__v1__record_entry__unpack(NULL, len, e);
            assert_non_null(m);
            if (entries == 0) {
                assert_int_equal(m->entry_case, CONTACTD__V1__RECORD_ENTRY__ENTRY_HEADER);
                assert_int_equal(m->header->protocol_version, 1);
            } else if (m->entry_case == CONTACTD__V1__RECORD_ENTRY__ENTRY_DROPPED) {
                reported += m->dropped->count;
            } else {
                assert_int_equal(m->entry_case, CONTACTD__V1__RECORD_ENTRY__ENTRY_END);
                assert_true(m->end->complete);
                assert_int_equal(m->end->records_dropped, dropped);
                assert_int_equal(m->end->frames_received, 7);
                assert_int_equal(m->end->frames_solved, 5);
                ended = true;
            }
            contactd__v1__record_entry__free_unpacked(m, NULL);
        }
        off += len;
        entries++;
    }
    assert_int_equal(off, n);
    assert_true(ended);
    assert_int_equal(got, RECORDS + 1 - dropped);
    assert_int_equal(reported, dropped);
}

// The daemon stops with a recording still open: the file gets its end, saying so.
static void a_recording_left_open_is_closed_incomplete(void **state) {
    (void)state;
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/test_record_open_%d.cdrec", (int)getpid());
    unlink(path);
    cd_recorder *r = NULL;
    assert_int_equal(cd_recorder_new(&r), 0);
    assert_non_null(start(r, path, UINT64_MAX, err, sizeof err));
    cd_recorder_free(r);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t file[256];
    const size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    unlink(path);
    uint64_t len;
    size_t off = varint(file, &len);
    off += len; // the header
    assert_true(off < n);
    off += varint(file + off, &len);
    Contactd__V1__RecordEntry *m = contactd__v1__record_entry__unpack(NULL, len, file + off);
    assert_non_null(m);
    assert_int_equal(m->entry_case, CONTACTD__V1__RECORD_ENTRY__ENTRY_END);
    assert_false(m->end->complete);
    contactd__v1__record_entry__free_unpacked(m, NULL);
    assert_int_equal(off + len, n);
}

// A limit of 20000 bytes: records of 1000 bytes stop after about 20, and the rest are reported
// as dropped, exactly.
static void the_size_limit_counts_what_it_leaves_out(void **state) {
    (void)state;
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/test_record_limit_%d.cdrec", (int)getpid());
    unlink(path);
    cd_recorder *r = NULL;
    assert_int_equal(cd_recorder_new(&r), 0);
    cd_recording *rec = start(r, path, 20000, err, sizeof err);
    assert_non_null(rec);
    static uint8_t buf[1000];
    uint64_t full = 0; // puts that found the ring full (dropped and counted too), then retried
    for (int i = 0; i < 100; i++) {
        while (!cd_recording_put(rec, CD_RECORD_CLIENT, buf, sizeof buf)) {
            full++;
            usleep(1000);
        }
    }
    cd_recording_end(rec, &(cd_record_end){0});
    cd_recorder_free(r);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t file[1 << 20];
    const size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    unlink(path);
    assert_true(n <= 20000 + 64);
    size_t off = 0, frames = 0;
    uint64_t dropped_entries = 0, end_dropped = 0;
    while (off < n) {
        uint64_t len;
        off += varint(file + off, &len);
        if (file[off] == 0x12) {
            frames++;
        } else {
            Contactd__V1__RecordEntry *m = contactd__v1__record_entry__unpack(NULL, len,
                                                                              file + off);
            assert_non_null(m);
            if (m->entry_case == CONTACTD__V1__RECORD_ENTRY__ENTRY_DROPPED) {
                dropped_entries += m->dropped->count;
            } else if (m->entry_case == CONTACTD__V1__RECORD_ENTRY__ENTRY_END) {
                end_dropped = m->end->records_dropped;
            }
            contactd__v1__record_entry__free_unpacked(m, NULL);
        }
        off += len;
    }
    assert_true(frames >= 15 && frames < 20);
    assert_int_equal(dropped_entries, 100 - frames + full);
    assert_int_equal(end_dropped, 100 - frames + full);
}

// A session that never opens (its client left during admission, or no slot was free) leaves no
// file behind: the recording admission made for it is discarded, file and all.
static void a_recording_never_started_leaves_no_file(void **state) {
    (void)state;
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/test_record_discard_%d.cdrec", (int)getpid());
    unlink(path);
    const uint8_t header[] = {0x08, 0x01};
    cd_recording *rec = cd_recording_open(path, 1, UINT64_MAX, header, sizeof header, err,
                                          sizeof err);
    assert_non_null(rec);
    assert_int_equal(access(path, F_OK), 0);
    cd_recording_discard(rec);
    assert_int_equal(access(path, F_OK), -1);
    cd_recording_discard(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(records_come_out_in_order_and_drops_are_counted),
        cmocka_unit_test(a_recording_left_open_is_closed_incomplete),
        cmocka_unit_test(the_size_limit_counts_what_it_leaves_out),
        cmocka_unit_test(a_recording_never_started_leaves_no_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
