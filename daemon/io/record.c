/* SPDX-License-Identifier: MIT */
/* Session recordings: the per-session record ring and the recorder thread (see record.h).
 *
 * The ring: cap bytes (a power of two), head and tail count bytes ever produced and consumed.
 * A record is an 8-byte header {len, kind} and its payload, padded to 8 bytes, always contiguous:
 * when it does not fit before the end of the buffer the producer leaves a header of kind 0 there
 * (skip to the start) and writes it at the start. The producer owns [head, tail + cap), the
 * consumer [tail, head). */
#include "io/record.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contactd.pb-c.h"
#include "sys/log.h"

#define RING_MIN (64 * 1024)
#define RING_MAX ((size_t)1 << 30)
// How often the recorder looks at the buffers: at 1 kHz and 2 KiB per frame and result, 20 ms
// is 80 KiB, well inside the smallest buffer.
#define PASS_NS (5 * 1000000)
#define SKIP 0

struct rec_hdr {
    uint32_t len;
    uint32_t kind;
};

struct cd_recording {
    cd_recording *next;               /* recorder: its list (incoming: under the mutex) */
    FILE *file;                       /* recorder */
    bool failed;                      /* recorder: a write failed; later records are discarded */
    uint64_t dropped_written;         /* recorder: dropped records already reported */
    uint64_t file_bytes, max_file_bytes; /* recorder: written so far, and the most */
    uint64_t over;                    /* recorder: records not written for max_file_bytes */
    uint8_t *buf;                     /* cap bytes */
    size_t cap;
    uint64_t put[4];                  /* producer: records committed, by kind */
    cd_record_end end;                /* io writes before ended is published */
    alignas(64) _Atomic size_t head;  /* producer writes */
    alignas(64) _Atomic size_t tail;  /* recorder writes */
    _Atomic uint64_t dropped;         /* producer writes */
    _Atomic bool ended;               /* io writes */
    char path[4096];
};

struct cd_recorder {
    pthread_t thread;
    pthread_mutex_t mu;        /* io and recorder only (never a worker): incoming and stop */
    pthread_cond_t cond;
    cd_recording *incoming;    /* mu */
    bool stop;                 /* mu */
    cd_recording *list;        /* recorder */
};

static size_t pad8(size_t n) {
    return (n + 7) & ~(size_t)7;
}

uint8_t *cd_recording_claim(cd_recording *rec, size_t len) {
    const size_t need = sizeof(struct rec_hdr) + pad8(len);
    const size_t head = atomic_load_explicit(&rec->head, memory_order_relaxed);
    // acquire: pairs with the release in consume(); the bytes before tail are free again.
    const size_t tail = atomic_load_explicit(&rec->tail, memory_order_acquire);
    const size_t off = head & (rec->cap - 1), to_end = rec->cap - off;
    const size_t skip = to_end < need ? to_end : 0;
    if (need > rec->cap || head + skip + need - tail > rec->cap) {
        // relaxed: a count; the recorder reads it with the record it reports it after.
        atomic_fetch_add_explicit(&rec->dropped, 1, memory_order_relaxed);
        return NULL;
    }
    return rec->buf + (skip ? 0 : off) + sizeof(struct rec_hdr);
}

void cd_recording_commit(cd_recording *rec, cd_record_kind kind, size_t len) {
    const size_t need = sizeof(struct rec_hdr) + pad8(len);
    size_t head = atomic_load_explicit(&rec->head, memory_order_relaxed);
    const size_t off = head & (rec->cap - 1);
    if (rec->cap - off < need) {
        // The record went to the start (cd_recording_claim): the rest of the buffer is skipped.
        memcpy(rec->buf + off, &(struct rec_hdr){.len = 0, .kind = SKIP}, sizeof(struct rec_hdr));
        head += rec->cap - off;
    }
    const struct rec_hdr h = {.len = (uint32_t)len, .kind = (uint32_t)kind};
    memcpy(rec->buf + (head & (rec->cap - 1)), &h, sizeof h);
    rec->put[kind]++;
    // release: pairs with the acquire in consume(), which then reads the whole record.
    atomic_store_explicit(&rec->head, head + need, memory_order_release);
}

bool cd_recording_put(cd_recording *rec, cd_record_kind kind, const uint8_t *data, size_t len) {
    uint8_t *p = cd_recording_claim(rec, len);
    if (!p) {
        return false;
    }
    memcpy(p, data, len);
    cd_recording_commit(rec, kind, len);
    return true;
}

uint64_t cd_recording_count(const cd_recording *rec, cd_record_kind kind) {
    return rec->put[kind];
}

const char *cd_recording_path(const cd_recording *rec) {
    return rec->path;
}

// Writes one RecordEntry of field `field` around payload[len], behind its length prefix: the
// payload is the field's packed message, so the entry is the field's tag and length before it.
static void write_entry(cd_recording *rec, unsigned field, const uint8_t *payload, size_t len) {
    uint8_t pre[24];
    size_t n = 0, inner = 0;
    uint8_t lenv[10];
    size_t nl = 0;
    for (uint64_t v = len;; v >>= 7) {
        lenv[nl++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80) {
            break;
        }
    }
    inner = 1 + nl + len;
    for (uint64_t v = inner;; v >>= 7) {
        pre[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80) {
            break;
        }
    }
    pre[n++] = (uint8_t)(field << 3 | 2); // length-delimited
    memcpy(pre + n, lenv, nl);
    n += nl;
    if (rec->failed) {
        return;
    }
    // Frames and results stop at the size limit (counted, then reported as dropped); the
    // entries that say so still fit in the slack a limit in MiB leaves.
    if (field <= CD_RECORD_SERVER && rec->file_bytes + n + len > rec->max_file_bytes) {
        if (rec->over++ == 0) {
            cd_log(CD_LOG_WARNING, "recording %s reached its size limit ([record] max_file_mb): "
                   "later frames and results are counted, not written", rec->path);
        }
        return;
    }
    rec->file_bytes += n + len;
    if (fwrite(pre, 1, n, rec->file) != n || (len && fwrite(payload, 1, len, rec->file) != len)) {
        rec->failed = true;
        cd_log(CD_LOG_WARNING, "recording %s: write failed (%s); the rest is not recorded",
               rec->path, strerror(errno));
    }
}

// Packs one of RecordEntry's own messages (dropped, end) and writes it.
static void write_message(cd_recording *rec, unsigned field, const ProtobufCMessage *m) {
    uint8_t buf[128];
    const size_t n = protobuf_c_message_get_packed_size(m);
    if (n <= sizeof buf) {
        write_entry(rec, field, buf, protobuf_c_message_pack(m, buf));
    }
}

static void write_dropped(cd_recording *rec) {
    // relaxed: a count; a drop after this load is reported at the next pass.
    const uint64_t d = atomic_load_explicit(&rec->dropped, memory_order_relaxed) + rec->over;
    if (d == rec->dropped_written) {
        return;
    }
    Contactd__V1__RecordDropped m = CONTACTD__V1__RECORD_DROPPED__INIT;
    m.count = d - rec->dropped_written;
    rec->dropped_written = d;
    write_message(rec, 4, &m.base);
}

// Writes every record the producer has published. thread: recorder.
static void consume(cd_recording *rec) {
    size_t tail = atomic_load_explicit(&rec->tail, memory_order_relaxed);
    // acquire: pairs with the release in cd_recording_commit.
    const size_t head = atomic_load_explicit(&rec->head, memory_order_acquire);
    while (tail != head) {
        const size_t off = tail & (rec->cap - 1);
        struct rec_hdr h;
        memcpy(&h, rec->buf + off, sizeof h);
        if (h.kind == SKIP) {
            tail += rec->cap - off;
            continue;
        }
        write_entry(rec, h.kind, rec->buf + off + sizeof h, h.len);
        tail += sizeof h + pad8(h.len);
    }
    // release: pairs with the acquire in cd_recording_claim; the producer may reuse the bytes.
    atomic_store_explicit(&rec->tail, tail, memory_order_release);
    write_dropped(rec);
    if (!rec->failed && fflush(rec->file) != 0) {
        rec->failed = true;
        cd_log(CD_LOG_WARNING, "recording %s: write failed (%s); the rest is not recorded",
               rec->path, strerror(errno));
    }
}

// Writes the RecordEnd, closes the file and frees rec. thread: recorder.
static void finish(cd_recording *rec, bool complete) {
    consume(rec);
    Contactd__V1__RecordEnd m = CONTACTD__V1__RECORD_END__INIT;
    m.records_dropped = rec->dropped_written;
    m.complete = complete;
    if (complete) {
        m.frames_received = rec->end.frames_received;
        m.frames_solved = rec->end.frames_solved;
        m.frames_superseded = rec->end.frames_superseded;
        const uint64_t results = rec->put[CD_RECORD_SERVER];
        m.results_missing = m.frames_solved > results ? m.frames_solved - results : 0;
    }
    write_message(rec, 5, &m.base);
    if (fclose(rec->file) != 0 && !rec->failed) {
        cd_log(CD_LOG_WARNING, "recording %s: close failed: %s", rec->path, strerror(errno));
    }
    cd_log(CD_LOG_INFO, "recording %s closed%s%s", rec->path,
           rec->dropped_written ? " (records were dropped: the buffer was full, or the file at "
                                  "its size limit)" : "",
           complete ? "" : " (the daemon stopped first)");
    free(rec->buf);
    free(rec);
}

static void *recorder_main(void *arg) {
    cd_recorder *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += PASS_NS;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        if (!r->stop && !r->incoming) {
            // With no recording open, sleep until one comes (cd_recording_start signals).
            if (r->list) {
                (void)pthread_cond_timedwait(&r->cond, &r->mu, &until);
            } else {
                (void)pthread_cond_wait(&r->cond, &r->mu);
            }
        }
        while (r->incoming) {
            cd_recording *rec = r->incoming;
            r->incoming = rec->next;
            rec->next = r->list;
            r->list = rec;
        }
        const bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        for (cd_recording **p = &r->list; *p;) {
            cd_recording *rec = *p;
            // acquire: pairs with the release in cd_recording_end (end's counts, and the last
            // record the producer committed before it let go).
            const bool ended = atomic_load_explicit(&rec->ended, memory_order_acquire);
            if (ended || stop) {
                *p = rec->next;
                finish(rec, ended);
            } else {
                consume(rec);
                p = &rec->next;
            }
        }
        if (stop) {
            return NULL;
        }
    }
}

int cd_recorder_new(cd_recorder **ret) {
    cd_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        return -ENOMEM;
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cond, NULL);
    const int e = pthread_create(&r->thread, NULL, recorder_main, r);
    if (e != 0) {
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->mu);
        free(r);
        return -e;
    }
    (void)pthread_setname_np(r->thread, "contactd-rec");
    *ret = r;
    return 0;
}

void cd_recorder_free(cd_recorder *r) {
    if (!r) {
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

void cd_recording_discard(cd_recording *rec) {
    if (!rec) {
        return;
    }
    fclose(rec->file);
    (void)unlink(rec->path);
    free(rec->buf);
    free(rec);
}

size_t cd_recording_buffer_bytes(size_t buffer_bytes) {
    size_t cap = RING_MIN;
    while (cap < buffer_bytes && cap < RING_MAX) {
        cap *= 2;
    }
    return cap;
}

cd_recording *cd_recording_open(const char *path, size_t buffer_bytes, uint64_t max_file_bytes,
                                const uint8_t *header, size_t len, char *err, size_t errlen) {
    const size_t cap = cd_recording_buffer_bytes(buffer_bytes);
    cd_recording *rec = calloc(1, sizeof *rec);
    uint8_t *buf = malloc(cap);
    if (!rec || !buf || strlen(path) >= sizeof rec->path) {
        snprintf(err, errlen, "cannot record to %s: %s", path,
                 rec && buf ? "path too long" : "no memory");
        free(buf);
        free(rec);
        return NULL;
    }
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        free(buf);
        free(rec);
        return NULL;
    }
    // Resident now, so the producer (perhaps a worker) takes no page fault on it.
    memset(buf, 0, cap);
    snprintf(rec->path, sizeof rec->path, "%s", path);
    rec->file = f;
    rec->buf = buf;
    rec->cap = cap;
    rec->max_file_bytes = max_file_bytes;
    atomic_init(&rec->head, 0);
    atomic_init(&rec->tail, 0);
    atomic_init(&rec->dropped, 0);
    atomic_init(&rec->ended, false);
    if (!cd_recording_put(rec, CD_RECORD_HEADER, header, len)) {
        snprintf(err, errlen, "cannot record to %s: the header does not fit the buffer", path);
        cd_recording_discard(rec);
        return NULL;
    }
    return rec;
}

void cd_recording_start(cd_recorder *r, cd_recording *rec) {
    pthread_mutex_lock(&r->mu);
    rec->next = r->incoming;
    r->incoming = rec;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->mu);
}


void cd_recording_end(cd_recording *rec, const cd_record_end *end) {
    rec->end = *end;
    // release: pairs with the acquire in recorder_main.
    atomic_store_explicit(&rec->ended, true, memory_order_release);
}
