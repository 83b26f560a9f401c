/* SPDX-License-Identifier: MIT */
/* Reading contactd's session recordings (proto/contactd.proto, RecordEntry) and delimited
 * message files: the whole file in memory, then its varint-delimited messages one by one.
 * thread: any, one caller per reader. rt-safe: no. */
#ifndef CONTACTD_CLI_RECFILE_H
#define CONTACTD_CLI_RECFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file and the position of the next message. */
typedef struct recfile {
    uint8_t *data; /* the file */
    size_t len;
    size_t off;    /* next message's length prefix */
    size_t index;  /* messages read so far */
} recfile;

/* Reads the file at path. Returns 0, or -1 with "PATH: reason" in err. */
int recfile_open(recfile *f, const char *path, char *err, size_t errlen);

/* Frees the file's bytes; accepts a zeroed reader. */
void recfile_close(recfile *f);

/* The next message's bytes (*ret, *ret_len, pointing into the file). Returns 1, 0 at the end of
 * the file, -1 with "PATH: message N (byte B): reason" in err when the length prefix is bad, or
 * -2 with the same when the file ends inside the message (truncated: its writer stopped
 * mid-write); f->off is then B, the bytes before it whole messages. */
int recfile_next(recfile *f, const char *path, const uint8_t **ret, size_t *ret_len, char *err,
                 size_t errlen);

/* True when the file starts with a RecordEntry holding a RecordHeader (a recording rather than
 * a file of Frames). */
bool recfile_is_recording(const recfile *f);

#endif /* CONTACTD_CLI_RECFILE_H */
