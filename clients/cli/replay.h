/* SPDX-License-Identifier: MIT */
/* contactctl replay: solves a recorded session's frames again, in-process, the way its session
 * did (the daemon's own decoding, cs_step with the session's limits, solvers and warm start, a
 * deadline armed but never reached), and compares each answer with the recorded Result field by
 * field, bit for bit. thread: main. rt-safe: no. */
#ifndef CONTACTD_CLI_REPLAY_H
#define CONTACTD_CLI_REPLAY_H
#include <stdbool.h>

/* Replays the recording at path; solver: NULL for the session's own solvers, else the solver
 * every frame is solved with. Prints every difference and a summary (json: one JSON object,
 * see contactctl(1)). Returns a CTL_EXIT_* status: OK when every solved frame was reproduced
 * bit for bit and nothing was lost, FAIL when any differs, could not be reproduced (a solve the
 * daemon's deadline cut) or the recording lost records, DATA for a file that is not a readable
 * recording or ends early, truncated inside a record or without its RecordEnd (its records
 * before the end are replayed and summed up first),
 * USAGE for an unknown solver. */
int replay_run(const char *path, const char *solver, bool json);

#endif /* CONTACTD_CLI_REPLAY_H */
