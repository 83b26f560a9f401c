/* SPDX-License-Identifier: MIT */
/* contactctl convert: scene JSON <-> binary delimited Frames, a recording's frames, and a frame
 * as an FCLIB global problem (the step's M, H, f, w, mu from the contact model every solver
 * works on). thread: main. rt-safe: no. */
#ifndef CONTACTD_CLI_CONVERT_H
#define CONTACTD_CLI_CONVERT_H

/* Converts the file in into the new file out (never overwritten). to: "json", "frames",
 * "fclib", or NULL to go by out's extension (.json; .hdf5 or .h5; anything else frames). The
 * input's form: .json is a scene file (one Frame, or an array of Frames); .hdf5/.h5 FCLIB,
 * which holds no bodies or contact geometry and so converts to nothing; else a recording (its
 * frames) or a file of delimited Frames. Returns a CTL_EXIT_* status: USAGE for a bad --to or
 * an out that exists, DATA for an input that cannot be read or a conversion its data does not
 * allow (several frames, joints or kinematic bodies to FCLIB). */
int convert_run(const char *in, const char *out, const char *to);

#endif /* CONTACTD_CLI_CONVERT_H */
