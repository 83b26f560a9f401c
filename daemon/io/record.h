/* SPDX-License-Identifier: MIT */
/* Session recordings (proto/contactd.proto, RecordEntry): what a session's reader accepted and
 * built goes into a byte buffer of the session's own, and one recorder thread of the daemon
 * writes each buffer to its file. The reader is the I/O thread (stream mode) or the session's
 * worker (request mode, served on the worker), so putting a record must not allocate, block or
 * take a lock: each recording's buffer is a fixed-size single-producer/single-consumer ring of
 * variable-length records (the service's cd_ring holds equal-sized elements only), sized and
 * pre-faulted when the session is admitted. When it is full the record is dropped and counted,
 * and the recorder writes that count into the file where it noticed (RecordDropped), so a replay
 * knows; nothing is lost silently. */
#ifndef CONTACTD_IO_RECORD_H
#define CONTACTD_IO_RECORD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a record holds: the RecordEntry field it is written as. */
typedef enum cd_record_kind {
    CD_RECORD_HEADER = 1, /* a packed RecordHeader */
    CD_RECORD_CLIENT = 2, /* a packed ClientMessage (a Frame the session accepted) */
    CD_RECORD_SERVER = 3, /* a packed ServerMessage (a Result) */
} cd_record_kind;

/* The daemon's recorder: a thread that writes every open recording's buffer to its file every
 * few milliseconds. thread: io creates, adds and frees. */
typedef struct cd_recorder cd_recorder;

/* One session's recording: its buffer and file. thread: one producer (the session's reader), the
 * recorder thread consumes; io creates and ends it. */
typedef struct cd_recording cd_recording;

/* Starts the recorder thread (normal scheduling). Returns 0, or a negative errno.
 * thread: io. */
int cd_recorder_new(cd_recorder **ret);

/* Writes out and closes every recording still open (their RecordEnd says complete = false
 * unless cd_recording_end ran), stops the thread and frees everything. Accepts NULL.
 * thread: io, with no producer left (the workers stopped). */
void cd_recorder_free(cd_recorder *r);

/* Creates path (which must not exist; mode 0640) and a buffer of buffer_bytes (rounded up to a
 * power of two, at least 64 KiB; written once so its pages are resident) whose first record is
 * the RecordHeader header[len] (packed), for a recording of up
 * to max_file_bytes: records beyond are counted as dropped (RecordDropped, RecordEnd), not
 * written. cd_recording_start then hands it to the recorder; cd_recording_discard undoes it.
 * Returns the recording, or NULL with the reason in err ("cannot create PATH: ..."), nothing
 * created. thread: any: admission runs it on a pool thread, so the file's creation and the
 * buffer's page faults cost neither the I/O thread nor a worker. rt-safe: no. */
cd_recording *cd_recording_open(const char *path, size_t buffer_bytes, uint64_t max_file_bytes,
                                const uint8_t *header, size_t len, char *err, size_t errlen);

/* The bytes of the buffer cd_recording_open makes for buffer_bytes: rounded up to a power of two,
 * at least 64 KiB. What a recorded session holds for it. thread: any. */
size_t cd_recording_buffer_bytes(size_t buffer_bytes);

/* Hands rec to r, which writes it from now on. thread: io. */
void cd_recording_start(cd_recorder *r, cd_recording *rec);

/* Removes the file of a recording that was never started and frees it. Accepts NULL.
 * thread: any but io and the workers (it unlinks a file). */
void cd_recording_discard(cd_recording *rec);

/* The file's path. thread: any. */
const char *cd_recording_path(const cd_recording *rec);

/* Room for a record of len bytes in the buffer, or NULL (the record is then dropped and counted)
 * when the buffer is full or len is larger than it. Repeated claims without a commit return the
 * same place. thread: the producer. rt-safe: yes. */
uint8_t *cd_recording_claim(cd_recording *rec, size_t len);

/* Publishes the record of kind and len bytes (at most what was claimed) written where
 * cd_recording_claim pointed. thread: the producer. rt-safe: yes. */
void cd_recording_commit(cd_recording *rec, cd_record_kind kind, size_t len);

/* Claims, copies and commits data[len]; returns false when it was dropped (and counted).
 * thread: the producer. rt-safe: yes. */
bool cd_recording_put(cd_recording *rec, cd_record_kind kind, const uint8_t *data, size_t len);

/* Records put so far of kind (committed, not dropped). thread: the producer. rt-safe: yes. */
uint64_t cd_recording_count(const cd_recording *rec, cd_record_kind kind);

/* The session's counts for the RecordEnd. */
typedef struct cd_record_end {
    uint64_t frames_received, frames_solved, frames_superseded;
} cd_record_end;

/* The producer is done: the recorder writes what is left, a RecordEnd with end's counts
 * (complete = true), closes the file and frees rec, which the caller must not use again.
 * thread: io, once no producer touches rec any more. */
void cd_recording_end(cd_recording *rec, const cd_record_end *end);

#endif /* CONTACTD_IO_RECORD_H */
