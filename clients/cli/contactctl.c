/* SPDX-License-Identifier: MIT */
/* contactctl: the command-line tool. `solve` and `bench` run libcontact in-process on a scene
 * file (no daemon); `fclib` solves an FCLIB problem file in-process (fclib_io.h); `send`,
 * `stream`, `record`, `stats` and `top` talk to a running contactd through libcontactd-client;
 * `replay` solves a session the daemon recorded again (replay.h) and `convert` turns scene files
 * into one another (convert.h). Results print as text or, with --json, in the canonical proto3
 * JSON mapping, so scripts and tests read the same numbers the wire carries. Exit statuses:
 * ctl.h (0 success, 1 a solve or status failure, 2 usage, 3 bad data, 4 the daemon). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "client_wire.h"
#include "convert.h"
#include "ctl.h"
#include "fclib_io.h"
#include "replay.h"
#include "wire/codec.h"
#include "wire/scene_json.h"
#include "service/clock.h"
#include "solver/contact.h"
#include "wire/paths.h"

enum {
    EXIT_OK = CTL_EXIT_OK,
    EXIT_FAIL = CTL_EXIT_FAIL,
    EXIT_USAGE = CTL_EXIT_USAGE,
    EXIT_DATA = CTL_EXIT_DATA,
    EXIT_DAEMON = CTL_EXIT_DAEMON,
};
// The wire protocol this build speaks (Hello.protocol_version).
#define PROTOCOL_VERSION 1

// The solver contactctl uses when neither --solver nor the scene names one.
#define SOLVER_DEFAULT CS_SOLVER_LEMKE
#define BENCH_REPEAT_DEFAULT 1000
#define BENCH_WARMUP_DEFAULT 100
#define STREAM_RATE_DEFAULT 1000.0
#define STREAM_DURATION_DEFAULT 5.0
#define TIMEOUT_MS_DEFAULT 2000

static const char usage_text[] =
    "Usage: contactctl COMMAND SCENE.json [OPTIONS]\n"
    "       contactctl fclib PROBLEM.hdf5 [--solver sap|ncp|lemke-standard|dantzig]\n"
    "                  [--timeout MS] [--json]\n"
    "                        [--write-solution OUT]\n"
    "       contactctl stats|top [--socket PATH | --tcp HOST:PORT] [--session ID] [...]\n"
    "       contactctl replay RECORDING [--solver NAME] [--json]\n"
    "       contactctl convert IN OUT [--to json|frames|fclib]\n"
    "       contactctl COMMAND --help | --help | --version\n"
    "\n"
    "Solve contact configurations with libcontact in-process, or talk to a running contactd.\n"
    "A scene file is a contactd.v1.Frame in the canonical proto3 JSON mapping (see\n"
    "tests/data/*.json and proto/contactd.proto).\n"
    "\n"
    "Commands:\n"
    "  solve SCENE.json [--solver NAME] [--json]\n"
    "      Solve one step in-process (no daemon) and print the Result: status, solver, pivots,\n"
    "      per-contact id/state/force/impulse, residuals, timing.\n"
    "  bench SCENE.json [--solver NAME] [--repeat N] [--warmup N] [--warm] [--json]\n"
    "      In-process: N timed solves (CLOCK_MONOTONIC) after the warm-up solves. Each solve\n"
    "      starts cold unless --warm, where it starts from the previous answer as a session at\n"
    "      rest would. Prints min/p50/p99/max solve time and pivot/iteration counts.\n"
    "  send SCENE.json [--socket PATH | --tcp HOST:PORT] [--solver NAME] [--timeout MS]\n"
    "       [--request] [--budget US] [--token-file PATH] [--json]\n"
    "      Send one frame to the daemon and print its Result.\n"
    "  stream SCENE.json [--socket PATH | --tcp HOST:PORT] [--solver NAME] [--rate HZ]\n"
    "         [--duration S] [--request] [--budget US] [--token-file PATH] [--json]\n"
    "      Send the scene at a fixed rate (seq 1, 2, ...) while receiving results, then print\n"
    "      frames sent, results received, deadline misses and p50/p99/p99.9/max of the daemon's\n"
    "      solve time and of the latency (frame sent to result received, measured here).\n"
    "  fclib PROBLEM.hdf5 [--solver sap|ncp|lemke-standard|dantzig] [--timeout MS] [--json]\n"
    "        [--write-solution OUT.hdf5]\n"
    "      Read an FCLIB problem (HDF5, libfclib), solve it in-process with SAP (default) or,\n"
    "      for the local form, ncp (Todorov's implicit complementarity on W itself) or\n"
    "      lemke-standard (Lloyd's LCP on the 8-sided friction pyramid) or dantzig (Baraff's\n"
    "      pivoting on the same pyramid), both judged by the residual below on the exact cone\n"
    "      the pyramid approximates, and print\n"
    "      problem, form, contacts, dofs, solver, status, iterations, solve time and the\n"
    "      residual Siconos reports for that form, comparable with other solvers'. Global form\n"
    "      (M v = H r + f, u = H^T v + w; gfc3d_compute_error):\n"
    "        residual = |f + H r - M v| / max(|f|, |M v|, |H r|)                 (momentum)\n"
    "                 + |r - P_K(r - (u + mu |u_T| e_N))| / max(|u|, |r|)       (Coulomb)\n"
    "      with u = H^T v + w, Euclidean norms, P_K the projection of each contact's (r_N, r_T)\n"
    "      onto its cone |r_T| <= mu r_N (each term divided only when its scale > 1.5e-8).\n"
    "      Local form (u = W r + q; fc3d_compute_error): the Coulomb term alone, divided by\n"
    "      max(|q|, |u|, |r|), with W as stored. W must be positive semidefinite and symmetric;\n"
    "      one with |W - W^T|_F <= 1e-3 |W|_F is replaced by (W + W^T) / 2, with a note (SAP\n"
    "      then solves the global form M = I, H^T H = W, f = 0, w = q: the same answer r, u).\n"
    "      SAP solves a regularized (compliant, convex) model, so the Coulomb term is not at\n"
    "      round-off: up to |R r| + mu |u_T| per contact (README, FCLIB problems).\n"
    "\n";

// The daemon's own figures: a third literal, as above.
static const char usage_daemon_text[] =
    "  stats [--socket PATH | --tcp HOST:PORT] [--timeout MS] [--session ID] [--json]\n"
    "      Print the daemon's counters (ticks, frames, deadline misses by cause, solver\n"
    "      statuses, sessions) and count/p50/p99/p99.9/max of solve time, latency (frame\n"
    "      received to result handed to the socket, measured in the daemon) and wake-up\n"
    "      lateness, for the daemon and per open session (--session: that one only).\n"
    "  top [--socket PATH | --tcp HOST:PORT] [--timeout MS] [--session ID] [--iterations N]\n"
    "      The same per session, one row each, redrawn every second like top(1); stops after\n"
    "      N refreshes (default: when interrupted).\n"
    "  record SCENE.json [--socket PATH | --tcp HOST:PORT] [--solver NAME] [--rate HZ]\n"
    "         [--duration S] [--request] [--budget US] [--token-file PATH] [--json]\n"
    "      As stream, with the session recorded by the daemon (Hello.record): its frames and\n"
    "      results go to a file in the daemon's [record] dir, whose path is printed.\n"
    "  replay RECORDING [--solver NAME] [--json]\n"
    "      Solve a recorded session's frames again in-process, as its session did (limits,\n"
    "      solvers, warm start from answer to answer), and print every field of every Result\n"
    "      that differs (status, forces, impulses, velocities, pivots, residuals) and a summary.\n"
    "      The same solver and build reproduce the recording bit for bit; a frame whose solve\n"
    "      missed its deadline in the daemon (and may have been cut) is reported as not\n"
    "      reproducible when it differs, its fields listed apart. A file that ends early\n"
    "      (inside a record: truncated, the summary names that record and byte; or without the\n"
    "      session's end: complete false) is replayed up to where it ends (exit 3 if it agrees).\n"
    "      --solver: solve every frame with NAME instead.\n"
    "      --json: {\"solved\",\"identical\",\"different\",\"deadline\",\"superseded\",\n"
    "      \"unanswered\",\"recordsDropped\",\"resultsMissing\",\"resultsWithoutFrame\",\n"
    "      \"complete\",\"truncated\",\n"
    "      \"truncatedAtRecord\",\"truncatedAtByte\" (when truncated),\"differencesByKind\",\n"
    "      \"deadlineFrames\" (their seq),\n"
    "      \"differences\",\"deadlineDifferences\":[{\"seq\",\"record\",\"kind\",\"field\",\n"
    "      \"recorded\",\"replayed\"}],\"refusedFrames\" (this build refuses them: not solved):\n"
    "      [{\"seq\",\"record\",\"error\"}]}\n"
    "  convert IN OUT [--to json|frames|fclib]\n"
    "      Convert between a scene JSON file (one Frame; a JSON array for several), a binary\n"
    "      file of delimited Frames (as on the wire, without the ClientMessage), a recording\n"
    "      (input only: its frames) and an FCLIB global problem (output only, one frame without\n"
    "      joints or kinematic bodies: M, H, f, w and mu of the step). The output's form comes\n"
    "      from --to, else from OUT's extension: .json, .hdf5/.h5 (FCLIB), anything else\n"
    "      frames. OUT is never overwritten.\n"
    "\n";

// Split from usage_text to keep each literal under the 4095 characters ISO C guarantees; the
// options start with --solver, whose names come from the solver table (usage_print).
static const char usage_options_text[] =
    "  --json           print JSON: a Result or Stats in the canonical proto3 mapping; for bench\n"
    "                   {\"solver\",\"n\",\"warm\",\"solveNs\":{\"min\",\"p50\",\"p99\",\"max\"},\n"
    "                   \"pivots\":{...},\"iterations\":{...},\"notConverged\"}; for stream\n"
    "                   {\"frames\",\"results\",\"deadlineMisses\",\n"
    "                   \"solveNs\":{\"p50\",\"p99\",\"p999\",\"max\"},\"latencyNs\":{...}};\n"
    "                   for fclib {\"problem\",\"form\",\"contacts\",\"dofs\",\"solver\",\n"
    "                   \"status\",\"iterations\",\"solveNs\",\"residual\",\n"
    "                   \"residualMomentum\" (global form),\"residualCoulomb\"}; dofs is null\n"
    "                   for the local form\n"
    "  --repeat N       timed solves for bench (default 1000)\n"
    "  --warmup N       untimed solves before them (default 100)\n"
    "  --warm           bench: warm-start each solve from the previous answer\n"
    "  --socket PATH    the daemon's Unix-domain socket (default: /run/contactd/contactd.sock\n"
    "                   when it exists, else $XDG_RUNTIME_DIR/contactd.sock, else\n"
    "                   /tmp/contactd-$UID.sock)\n"
    "  --tcp HOST:PORT  connect over TCP instead (the daemon listens on 127.0.0.1:7411)\n"
    "  --rate HZ        stream/record: frames per second (default 1000)\n"
    "  --duration S     stream/record: seconds to stream (default 5)\n"
    "  --timeout MS     send/stats/top: how long to wait for the answer (default 2000; 0: no\n"
    "                   limit, as python -m contactd's --timeout 0); fclib: how long the solve\n"
    "                   may take before it stops, labelled deadline (default and 0: no limit)\n"
    "  --session ID     stats/top: only this session's figures (the daemon's are always shown;\n"
    "                   stats exits 1 when that session is not open)\n"
    "  --iterations N   top: refreshes before it exits\n"
    "  --to FORM        convert: json, frames or fclib (default: from OUT's extension)\n"
    "  --request        send/stream/record: open the session in request mode (every frame\n"
    "                   answered as soon as it arrives; at most one frame per tick period on\n"
    "                   average) instead of stream mode (the newest frame answered at the next\n"
    "                   tick)\n"
    "  --budget US      send/stream/record: the session's solve time per frame (default: the\n"
    "                   daemon's, 80 % of its tick period)\n"
    "  --token-file PATH\n"
    "                   send/stream/record over --tcp: present the token on the file's first\n"
    "                   line (the daemon's [server] auth_token_file)\n"
    "  --write-solution OUT.hdf5\n"
    "                   fclib: write the problem and the answer (v, r, u) to the new FCLIB file\n"
    "                   OUT.hdf5 (fclib_write_solution); an existing file is not overwritten\n"
    "  -h, --help       this text; after a command, that command's usage and an example\n"
    "  --version        print the version and the protocol version\n"
    "\n";

// Exit statuses and examples: a fourth literal, as above.
static const char usage_exit_text[] =
    "Exit status:\n"
    "  0  success (solve/send: the Result is STATUS_OK; bench: every solve converged;\n"
    "     stream/record: no STATUS_FAILED/INVALID result; fclib: the solver converged;\n"
    "     replay: every frame reproduced bit for bit, nothing lost)\n"
    "  1  the solve failed or returned another status; replay: a difference, a frame not\n"
    "     reproducible (deadline), or records the daemon dropped; stats --session: that\n"
    "     session is not open\n"
    "  2  usage error (unknown command or option, bad value, --write-solution or convert\n"
    "     output that exists or whose directory does not)\n"
    "  3  data error: a file that cannot be read or holds bad data (scene file, FCLIB problem\n"
    "     unreadable, unsupported or refused: not finite, mu < 0, M or W not symmetric beyond\n"
    "     tolerance, W not positive semidefinite; a recording or frames file that is truncated\n"
    "     or not one; a conversion the data does not allow); replay: a recording that ends\n"
    "     early (truncated, or without its end: the daemon killed, or still writing it) whose\n"
    "     records were all reproduced\n"
    "  4  daemon error: it cannot be reached, does not answer in time, refuses the session,\n"
    "     sends an Error or a Goodbye, or the connection breaks\n"
    "\n"
    "Examples:\n"
    "  contactctl solve tests/data/box_on_plane.json\n"
    "  contactctl solve tests/data/box_on_plane.json --json\n"
    "  contactctl bench tests/data/peg_in_hole.json --repeat 10000 --warm\n"
    "  contactctl send tests/data/box_on_plane.json --tcp 127.0.0.1:7411\n"
    "  contactctl stream tests/data/box_on_plane.json --rate 1000 --duration 5 --json\n"
    "  contactctl fclib ../shared/fclib/TwoRods/GFC3D_TwoRods1.hdf5 --json\n"
    "  contactctl stats\n"
    "  contactctl top --session 3\n"
    "  contactctl record tests/data/box_on_plane.json --request --rate 100 --duration 1\n"
    "  contactctl replay /var/lib/contactd/session-20260101T000000Z-42-1.cdrec\n"
    "  contactctl convert tests/data/box_on_plane.json box.frames\n";

typedef enum command {
    CMD_SOLVE,
    CMD_BENCH,
    CMD_SEND,
    CMD_STREAM,
    CMD_STATS,
    CMD_TOP,
    CMD_FCLIB,
    CMD_RECORD,
    CMD_REPLAY,
    CMD_CONVERT,
} command;

// Long options. getopt_long returns OPT_BASE + index; a command's options are a mask of BIT()s.
enum {
    O_SOLVER,
    O_JSON,
    O_REPEAT,
    O_WARMUP,
    O_WARM,
    O_SOCKET,
    O_TCP,
    O_RATE,
    O_DURATION,
    O_TIMEOUT,
    O_WRITE_SOLUTION,
    O_REQUEST,
    O_BUDGET,
    O_TOKEN_FILE,
    O_SESSION,
    O_ITERATIONS,
    O_TO,
    O_END, /* the number of O_* options */
};
#define OPT_BASE 0x100
#define BIT(o) (1u << (o))
#define OPT_SOLVER BIT(O_SOLVER)
#define OPT_JSON BIT(O_JSON)
#define OPT_REPEAT BIT(O_REPEAT)
#define OPT_WARMUP BIT(O_WARMUP)
#define OPT_WARM BIT(O_WARM)
#define OPT_SOCKET BIT(O_SOCKET)
#define OPT_TCP BIT(O_TCP)
#define OPT_RATE BIT(O_RATE)
#define OPT_DURATION BIT(O_DURATION)
#define OPT_TIMEOUT BIT(O_TIMEOUT)
#define OPT_WRITE_SOLUTION BIT(O_WRITE_SOLUTION)
#define OPT_REQUEST BIT(O_REQUEST)
#define OPT_BUDGET BIT(O_BUDGET)
#define OPT_TOKEN_FILE BIT(O_TOKEN_FILE)
#define OPT_SESSION BIT(O_SESSION)
#define OPT_ITERATIONS BIT(O_ITERATIONS)
#define OPT_TO BIT(O_TO)
#define OPT_STREAM (OPT_SOLVER | OPT_JSON | OPT_SOCKET | OPT_TCP | OPT_RATE | OPT_DURATION | \
                    OPT_REQUEST | OPT_BUDGET | OPT_TOKEN_FILE)

// Each command's operands, usage line and example (`contactctl COMMAND --help`).
static const struct {
    const char *name;
    unsigned options;
    int operands;          /* after the command */
    const char *operand;   /* what the first operand is, for "missing ..." */
    const char *synopsis;
    const char *example;
} commands[] = {
    [CMD_SOLVE] = {"solve", OPT_SOLVER | OPT_JSON, 1, "SCENE.json",
                   "solve SCENE.json [--solver NAME] [--json]\n"
                   "Solve one step in-process (no daemon) and print the Result.",
                   "contactctl solve tests/data/box_on_plane.json --json"},
    [CMD_BENCH] = {"bench", OPT_SOLVER | OPT_JSON | OPT_REPEAT | OPT_WARMUP | OPT_WARM, 1,
                   "SCENE.json",
                   "bench SCENE.json [--solver NAME] [--repeat N] [--warmup N] [--warm] [--json]\n"
                   "Time N in-process solves and print min/p50/p99/max and pivot counts.",
                   "contactctl bench tests/data/peg_in_hole.json --repeat 10000 --warm"},
    [CMD_SEND] = {"send", OPT_SOLVER | OPT_JSON | OPT_SOCKET | OPT_TCP | OPT_TIMEOUT |
                              OPT_REQUEST | OPT_BUDGET | OPT_TOKEN_FILE, 1, "SCENE.json",
                  "send SCENE.json [--socket PATH | --tcp HOST:PORT] [--solver NAME]\n"
                  "     [--timeout MS] [--request] [--budget US] [--token-file PATH] [--json]\n"
                  "Send one frame to the daemon and print its Result.",
                  "contactctl send tests/data/box_on_plane.json --tcp 127.0.0.1:7411"},
    [CMD_STREAM] = {"stream", OPT_STREAM, 1, "SCENE.json",
                    "stream SCENE.json [--socket PATH | --tcp HOST:PORT] [--solver NAME]\n"
                    "       [--rate HZ] [--duration S] [--request] [--budget US]\n"
                    "       [--token-file PATH] [--json]\n"
                    "Send the scene at a fixed rate and print results, misses and latencies.",
                    "contactctl stream tests/data/box_on_plane.json --rate 1000 --duration 5"},
    [CMD_STATS] = {"stats", OPT_JSON | OPT_SOCKET | OPT_TCP | OPT_TIMEOUT | OPT_SESSION, 0, NULL,
                   "stats [--socket PATH | --tcp HOST:PORT] [--timeout MS] [--session ID]\n"
                   "      [--json]\n"
                   "Print the daemon's counters and histograms, and each open session's.",
                   "contactctl stats --session 3 --json"},
    [CMD_TOP] = {"top", OPT_SOCKET | OPT_TCP | OPT_TIMEOUT | OPT_SESSION | OPT_ITERATIONS, 0,
                 NULL,
                 "top [--socket PATH | --tcp HOST:PORT] [--timeout MS] [--session ID]\n"
                 "    [--iterations N]\n"
                 "Show the sessions' figures, one row each, refreshed every second.",
                 "contactctl top --iterations 10"},
    [CMD_FCLIB] = {"fclib", OPT_SOLVER | OPT_TIMEOUT | OPT_JSON | OPT_WRITE_SOLUTION, 1,
                   "PROBLEM.hdf5",
                   "fclib PROBLEM.hdf5 [--solver sap|ncp|lemke-standard|dantzig] [--timeout MS]\n"
                   "      [--json] [--write-solution OUT.hdf5]\n"
                   "Solve an FCLIB problem in-process and print Siconos' residual.",
                   "contactctl fclib ../shared/fclib/TwoRods/GFC3D_TwoRods1.hdf5 --json"},
    [CMD_RECORD] = {"record", OPT_STREAM, 1, "SCENE.json",
                    "record SCENE.json [--socket PATH | --tcp HOST:PORT] [--solver NAME]\n"
                    "       [--rate HZ] [--duration S] [--request] [--budget US]\n"
                    "       [--token-file PATH] [--json]\n"
                    "Stream the scene with the session recorded by the daemon; print the file.",
                    "contactctl record tests/data/box_on_plane.json --request --rate 100 "
                    "--duration 1"},
    [CMD_REPLAY] = {"replay", OPT_SOLVER | OPT_JSON, 1, "RECORDING",
                    "replay RECORDING [--solver NAME] [--json]\n"
                    "Solve a recorded session again in-process and print every difference.",
                    "contactctl replay session-20260101T000000Z-42-1.cdrec --solver sap"},
    [CMD_CONVERT] = {"convert", OPT_TO, 2, "IN",
                     "convert IN OUT [--to json|frames|fclib]\n"
                     "Convert scene JSON, delimited Frames, a recording's frames and FCLIB.",
                     "contactctl convert tests/data/box_on_plane.json box.frames"},
};

typedef struct args {
    command cmd;
    unsigned given;
    const char *scene_path;
    const char *solver;
    bool json, warm, request;
    long budget_us;
    long repeat, warmup;
    const char *socket, *tcp;
    double rate, duration;
    long timeout_ms;
    const char *write_solution;
    const char *token_file;
    long session_id;  /* stats, top: 0 = every session */
    long iterations;  /* top: refreshes, 0 = until interrupted */
    const char *out_path; /* convert: OUT */
    const char *to;       /* convert: --to */
} args;

static void usage_print(void) {
    char names[128];
    cs_solver_list(cs_solver_mask(true), CS_SOLVER_DEFAULT, names, sizeof names);
    fputs(usage_text, stdout);
    fputs(usage_daemon_text, stdout);
    printf("Options:\n"
           "  --solver NAME    %s\n"
           "                   (default: the scene's solver, else %s for solve/bench and the\n"
           "                   daemon's default for send/stream)\n",
           names, cs_solver_name(SOLVER_DEFAULT));
    fputs(usage_options_text, stdout);
    fputs(usage_exit_text, stdout);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("contactctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'contactctl --help'.\n", stderr);
    return EXIT_USAGE;
}

static bool parse_long(const char *s, long lo, long *ret) {
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo) {
        return false;
    }
    *ret = v;
    return true;
}

static bool parse_positive(const char *s, double *ret) {
    char *end;
    const double v = strtod(s, &end);
    if (end == s || *end || !(v > 0.0) || !isfinite(v)) {
        return false;
    }
    *ret = v;
    return true;
}

// Returns -1 to go on, or an exit status (help, version, usage error).
static int parse_args(int argc, char **argv, args *a) {
    static const struct option longopts[] = {
        {"solver", required_argument, NULL, OPT_BASE + O_SOLVER},
        {"json", no_argument, NULL, OPT_BASE + O_JSON},
        {"repeat", required_argument, NULL, OPT_BASE + O_REPEAT},
        {"warmup", required_argument, NULL, OPT_BASE + O_WARMUP},
        {"warm", no_argument, NULL, OPT_BASE + O_WARM},
        {"socket", required_argument, NULL, OPT_BASE + O_SOCKET},
        {"tcp", required_argument, NULL, OPT_BASE + O_TCP},
        {"rate", required_argument, NULL, OPT_BASE + O_RATE},
        {"duration", required_argument, NULL, OPT_BASE + O_DURATION},
        {"timeout", required_argument, NULL, OPT_BASE + O_TIMEOUT},
        {"write-solution", required_argument, NULL, OPT_BASE + O_WRITE_SOLUTION},
        {"request", no_argument, NULL, OPT_BASE + O_REQUEST},
        {"budget", required_argument, NULL, OPT_BASE + O_BUDGET},
        {"token-file", required_argument, NULL, OPT_BASE + O_TOKEN_FILE},
        {"session", required_argument, NULL, OPT_BASE + O_SESSION},
        {"iterations", required_argument, NULL, OPT_BASE + O_ITERATIONS},
        {"to", required_argument, NULL, OPT_BASE + O_TO},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    *a = (args){.repeat = BENCH_REPEAT_DEFAULT, .warmup = BENCH_WARMUP_DEFAULT,
                .rate = STREAM_RATE_DEFAULT, .duration = STREAM_DURATION_DEFAULT,
                .timeout_ms = TIMEOUT_MS_DEFAULT};
    bool have_cmd = false, help = false;
    // Options may come before or after the command and scene: collect the operands as we go.
    const char *operands[3];
    int nops = 0;
    opterr = 0;
    for (;;) {
        // '-': operands come back in order as 1; ':': a missing value is reported as ':'.
        const int c = getopt_long(argc, argv, "-:h", longopts, NULL);
        if (c == -1) {
            break;
        }
        switch (c) {
        case 1: // an operand, in order (the leading '-' in optstring)
            if (nops == 3) {
                return usage_error("unexpected argument '%s'", optarg);
            }
            operands[nops++] = optarg;
            continue;
        case 'h':
            help = true; // after the loop: the command's help when one was named
            continue;
        case 'V':
            printf("contactctl %s (protocol %d)\n", CONTACTD_VERSION, PROTOCOL_VERSION);
            return EXIT_OK;
        case '?':
            return usage_error("unknown option '%s'", argv[optind - 1]);
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            break;
        }
        const int o = c - OPT_BASE;
        a->given |= BIT(o);
        switch (o) {
        case O_SOLVER: a->solver = optarg; break;
        case O_JSON: a->json = true; break;
        case O_WARM: a->warm = true; break;
        case O_REQUEST: a->request = true; break;
        case O_SOCKET: a->socket = optarg; break;
        case O_TCP: a->tcp = optarg; break;
        case O_WRITE_SOLUTION: a->write_solution = optarg; break;
        case O_TO: a->to = optarg; break;
        case O_REPEAT:
            if (!parse_long(optarg, 1, &a->repeat)) {
                return usage_error("--repeat: expected an integer >= 1, got '%s'", optarg);
            }
            break;
        case O_WARMUP:
            if (!parse_long(optarg, 0, &a->warmup)) {
                return usage_error("--warmup: expected an integer >= 0, got '%s'", optarg);
            }
            break;
        case O_TOKEN_FILE:
            a->token_file = optarg;
            break;
        case O_BUDGET:
            if (!parse_long(optarg, 1, &a->budget_us)) {
                return usage_error("--budget: expected microseconds >= 1, got '%s'", optarg);
            }
            break;
        case O_SESSION:
            if (!parse_long(optarg, 1, &a->session_id)) {
                return usage_error("--session: expected a session id >= 1, got '%s'", optarg);
            }
            break;
        case O_ITERATIONS:
            if (!parse_long(optarg, 1, &a->iterations)) {
                return usage_error("--iterations: expected an integer >= 1, got '%s'", optarg);
            }
            break;
        case O_TIMEOUT:
            // At most a day, as --duration: the deadline it sets stays far from overflow.
            if (!parse_long(optarg, 0, &a->timeout_ms) || a->timeout_ms > 86400000) {
                return usage_error("--timeout: expected milliseconds in [0, 86400000] (0: no "
                                   "limit), got '%s'",
                                   optarg);
            }
            break;
        case O_RATE:
            if (!parse_positive(optarg, &a->rate) || a->rate > 1e6) {
                return usage_error("--rate: expected a frequency in (0, 1e6] Hz, got '%s'", optarg);
            }
            break;
        case O_DURATION:
            if (!parse_positive(optarg, &a->duration) || a->duration > 86400.0) {
                return usage_error("--duration: expected seconds in (0, 86400], got '%s'", optarg);
            }
            break;
        default:
            break;
        }
    }
    for (size_t i = 0; nops > 0 && i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(operands[0], commands[i].name) == 0) {
            a->cmd = (command)i;
            have_cmd = true;
        }
    }
    if (help) {
        if (have_cmd) {
            printf("Usage: contactctl %s\n\nExample:\n  %s\n\n`contactctl --help` describes "
                   "every option and the exit statuses.\n", commands[a->cmd].synopsis,
                   commands[a->cmd].example);
        } else {
            usage_print();
        }
        return EXIT_OK;
    }
    if (nops == 0) {
        return usage_error("no command given");
    }
    if (!have_cmd) {
        return usage_error("unknown command '%s'", operands[0]);
    }
    const int want = 1 + commands[a->cmd].operands;
    if (nops < want) {
        return usage_error("%s: missing %s", operands[0],
                           nops == 1 ? commands[a->cmd].operand : "OUT");
    }
    if (nops > want) {
        return usage_error("%s: unexpected argument '%s'", operands[0], operands[want]);
    }
    a->scene_path = want >= 2 ? operands[1] : NULL;
    a->out_path = want == 3 ? operands[2] : NULL;
    const unsigned stray = a->given & ~commands[a->cmd].options;
    // longopts lists the O_* options first, in enum order.
    for (int o = 0; stray && o < O_END; o++) {
        if (stray & BIT(o)) {
            return usage_error("%s does not take --%s", operands[0], longopts[o].name);
        }
    }
    if (a->socket && a->tcp) {
        return usage_error("give --socket or --tcp, not both");
    }
    return -1;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

// Nearest-rank percentile q in [0, 1] of v[n], sorting v in place; 0 for an empty set.
static int64_t percentile(int64_t *v, size_t n, double q) {
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof *v, cmp_i64);
    const double rank = ceil(q * (double)n);
    const size_t i = rank < 1.0 ? 0 : (size_t)rank - 1;
    return v[i < n ? i : n - 1];
}

static const char *enum_name(const ProtobufCEnumDescriptor *d, int v) {
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(d, v);
    return ev ? ev->name : "?";
}

static void print_json(const ProtobufCMessage *m) {
    char *s = cd_scene_json_write(m, true);
    if (s) {
        puts(s);
    } else {
        fputs("contactctl: out of memory writing JSON\n", stderr);
    }
    free(s);
}

static void print_result(const Contactd__V1__Result *r, bool json) {
    if (json) {
        print_json(&r->base);
        return;
    }
    printf("status     %s%s%s\n", enum_name(&contactd__v1__status__descriptor, (int)r->status),
           r->detail[0] ? ": " : "", r->detail);
    if (r->stats) {
        printf("solver     %s  pivots %" PRIu32 "  iterations %" PRIu32 "\n", r->stats->solver,
               r->stats->pivots, r->stats->iterations);
    }
    printf("seq        %" PRIu64 "  tick %" PRIu64 "\n", r->seq, r->tick);
    printf("contacts   %zu\n", r->n_contacts);
    printf("  %-10s %-14s %-40s %s\n", "id", "state", "force (N, world)",
           "impulse (N s: normal, t1, t2)");
    for (size_t i = 0; i < r->n_contacts; i++) {
        const Contactd__V1__ContactForce *c = r->contacts[i];
        const Contactd__V1__Vec3 zero = CONTACTD__V1__VEC3__INIT;
        const Contactd__V1__Vec3 *f = c->force ? c->force : &zero;
        const Contactd__V1__Vec3 *p = c->impulse ? c->impulse : &zero;
        printf("  %-10" PRIu64 " %-14s [%11.4e %11.4e %11.4e]  [%11.4e %11.4e %11.4e]\n", c->id,
               enum_name(&contactd__v1__contact_state__descriptor, (int)c->state), f->x, f->y,
               f->z, p->x, p->y, p->z);
    }
    if (r->n_joints) {
        printf("joints     %zu\n", r->n_joints);
        printf("  %-10s %-40s %s\n", "id", "force (N, world)", "torque (N m, world)");
    }
    for (size_t j = 0; j < r->n_joints; j++) {
        const Contactd__V1__JointForce *jf = r->joints[j];
        const Contactd__V1__Vec3 zero = CONTACTD__V1__VEC3__INIT;
        const Contactd__V1__Vec3 *f = jf->force ? jf->force : &zero;
        const Contactd__V1__Vec3 *t = jf->torque ? jf->torque : &zero;
        printf("  %-10" PRIu32 " [%11.4e %11.4e %11.4e]  [%11.4e %11.4e %11.4e]\n", jf->id, f->x,
               f->y, f->z, t->x, t->y, t->z);
    }
    if (r->residuals) {
        const Contactd__V1__Residuals *x = r->residuals;
        printf("residuals  complementarity %.3g  normal velocity %.3g  cone %.3g  dissipation %.3g"
               "  momentum %.3g  joint %.3g\n",
               x->complementarity, x->normal_velocity, x->cone, x->dissipation, x->momentum,
               x->joint);
    }
    if (r->timing) {
        const Contactd__V1__Timing *t = r->timing;
        printf("timing     solve %.3f us  deadline %s", (double)t->solve_ns / 1e3,
               t->deadline_ns ? (t->deadline_met ? "met" : "MISSED") : "none");
        if (t->sent_ns && t->received_ns) {
            printf("  received->sent %.3f us", (double)(t->sent_ns - t->received_ns) / 1e3);
        }
        printf("\n");
    }
}

// Everything an in-process solve needs, sized for the scene.
typedef struct local {
    cs_scene scene;
    cs_limits lim;
    cs_options opt;
    cs_workspace *ws;
    cs_warmstart *warm;
    cs_result res;
    void *res_mem;
} local;

static void local_fini(local *l) {
    cs_workspace_free(l->ws);
    cs_warmstart_free(l->warm);
    free(l->res_mem);
    cd_scene_json_free(&l->scene);
}

// Loads the scene and chooses the solver. Returns -1 on success, else an exit status.
static int load_scene(const args *a, cs_scene *s) {
    char err[1024];
    if (cd_scene_json_load(a->scene_path, cs_scene_validate, s, err, sizeof err) < 0) {
        fprintf(stderr, "contactctl: %s\n", err);
        return EXIT_DATA;
    }
    if (a->solver && cs_solver_from_name(a->solver, &s->solver) < 0) {
        cd_scene_json_free(s);
        return usage_error("--solver: unknown solver '%s'", a->solver);
    }
    return -1;
}

static int local_init(const args *a, local *l) {
    *l = (local){0};
    const int r = load_scene(a, &l->scene);
    if (r >= 0) {
        return r;
    }
    cs_scene *s = &l->scene;
    if (s->solver == CS_SOLVER_DEFAULT) {
        s->solver = SOLVER_DEFAULT;
    }
    if (!cs_solver_is_available(s->solver)) {
        fprintf(stderr, "contactctl: solver '%s' is not implemented in this build\n",
                cs_solver_name(s->solver));
        local_fini(l);
        return EXIT_USAGE;
    }
    l->lim = (cs_limits){.max_bodies = s->nb, .max_contacts = s->nc, .max_joints = s->nj,
                         .max_dirs = s->friction_dirs ? s->friction_dirs : CS_DIRS_DEFAULT};
    l->opt = (cs_options){.solver = s->solver};
    l->ws = cs_workspace_new(&l->lim);
    l->warm = cs_warmstart_new(&l->lim);
    l->res_mem = malloc(cs_result_size(&l->lim));
    if (!l->ws || !l->warm || !l->res_mem) {
        fprintf(stderr, "contactctl: cannot allocate the solver workspace\n");
        local_fini(l);
        return EXIT_FAIL;
    }
    cs_result_init(&l->res, l->res_mem, &l->lim);
    return -1;
}

static int cmd_solve(const args *a) {
    local l;
    int r = local_init(a, &l);
    if (r >= 0) {
        return r;
    }
    cd_timing t = {.received_ns = cd_clock_ns()};
    t.solve_start_ns = cd_clock_ns();
    const cs_status st = cs_step(l.ws, &l.scene, &l.opt, l.warm, &l.res);
    t.solve_ns = cd_clock_ns() - t.solve_start_ns;
    t.deadline_met = true; // no deadline in-process
    t.sent_ns = cd_clock_ns();

    cd_result_msg m;
    if (cd_codec_result_msg_init(&m, &l.lim) < 0) {
        local_fini(&l);
        return EXIT_FAIL;
    }
    const Contactd__V1__ServerMessage *env =
        cd_codec_result_build(&m, &l.res, &t, 0, st == CS_CONVERGED ? "" : cs_status_name(st));
    print_result(env->result, a->json);
    r = env->result->status == CONTACTD__V1__STATUS__STATUS_OK ? EXIT_OK : EXIT_FAIL;
    cd_codec_result_msg_fini(&m);
    local_fini(&l);
    return r;
}

static cJSON *json_stats(int64_t min, int64_t p50, int64_t p99, int64_t max) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "min", (double)min);
    cJSON_AddNumberToObject(o, "p50", (double)p50);
    cJSON_AddNumberToObject(o, "p99", (double)p99);
    cJSON_AddNumberToObject(o, "max", (double)max);
    return o;
}

static int cmd_bench(const args *a) {
    local l;
    int r = local_init(a, &l);
    if (r >= 0) {
        return r;
    }
    const size_t n = (size_t)a->repeat;
    int64_t *solve = malloc(n * sizeof *solve);
    int64_t *pivots = malloc(n * sizeof *pivots);
    int64_t *iters = malloc(n * sizeof *iters);
    if (!solve || !pivots || !iters) {
        fprintf(stderr, "contactctl: out of memory\n");
        r = EXIT_FAIL;
        goto out_free;
    }
    // Warm-up fills caches and BLIS's pack buffers; a failure here shows up below as well.
    for (long i = 0; i < a->warmup; i++) {
        if (!a->warm) {
            cs_warmstart_reset(l.warm);
        }
        (void)cs_step(l.ws, &l.scene, &l.opt, l.warm, &l.res);
    }
    size_t not_converged = 0;
    cs_status last_bad = CS_CONVERGED;
    for (size_t i = 0; i < n; i++) {
        if (!a->warm) {
            cs_warmstart_reset(l.warm);
        }
        const int64_t t0 = cd_clock_ns();
        const cs_status st = cs_step(l.ws, &l.scene, &l.opt, l.warm, &l.res);
        solve[i] = cd_clock_ns() - t0;
        pivots[i] = l.res.stats.pivots;
        iters[i] = l.res.stats.iterations;
        if (st != CS_CONVERGED) {
            not_converged++;
            last_bad = st;
        }
    }
    const int64_t s50 = percentile(solve, n, 0.50), s99 = percentile(solve, n, 0.99);
    const int64_t p50 = percentile(pivots, n, 0.50), p99 = percentile(pivots, n, 0.99);
    const int64_t i50 = percentile(iters, n, 0.50), i99 = percentile(iters, n, 0.99);
    const char *solver = cs_solver_name(l.scene.solver);
    if (a->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "solver", solver);
        cJSON_AddNumberToObject(o, "n", (double)n);
        cJSON_AddBoolToObject(o, "warm", a->warm);
        cJSON_AddItemToObject(o, "solveNs", json_stats(solve[0], s50, s99, solve[n - 1]));
        cJSON_AddItemToObject(o, "pivots", json_stats(pivots[0], p50, p99, pivots[n - 1]));
        cJSON_AddItemToObject(o, "iterations", json_stats(iters[0], i50, i99, iters[n - 1]));
        cJSON_AddNumberToObject(o, "notConverged", (double)not_converged);
        char *s = cJSON_Print(o);
        if (s) {
            puts(s);
        }
        free(s);
        cJSON_Delete(o);
    } else {
        printf("%s: %zu %s solves of %s (%d bodies, %d contacts), %ld warm-up\n", solver, n,
               a->warm ? "warm" : "cold", a->scene_path, l.scene.nb, l.scene.nc, a->warmup);
        printf("%-12s %12s %12s %12s %12s\n", "", "min", "p50", "p99", "max");
        printf("%-12s %12.3f %12.3f %12.3f %12.3f\n", "solve (us)", (double)solve[0] / 1e3,
               (double)s50 / 1e3, (double)s99 / 1e3, (double)solve[n - 1] / 1e3);
        printf("%-12s %12" PRId64 " %12" PRId64 " %12" PRId64 " %12" PRId64 "\n", "pivots",
               pivots[0], p50, p99, pivots[n - 1]);
        printf("%-12s %12" PRId64 " %12" PRId64 " %12" PRId64 " %12" PRId64 "\n", "iterations",
               iters[0], i50, i99, iters[n - 1]);
    }
    if (not_converged) {
        fprintf(stderr, "contactctl: %zu of %zu solves did not converge (last status: %s)\n",
                not_converged, n, cs_status_name(last_bad));
    }
    r = not_converged ? EXIT_FAIL : EXIT_OK;
out_free:
    free(solve);
    free(pivots);
    free(iters);
    local_fini(&l);
    return r;
}

// Connects to --socket, --tcp or the default socket, asking for limits and the solver that fit s
// (may be NULL), in the mode and with the budget asked for.
static int connect_daemon(const args *a, const cs_scene *s, cdc_conn **ret) {
    char path[256], err[512];
    // stats and top need no session: Stats are answered before any Hello.
    cdc_hello hello = {.client_name = "contactctl", .request_mode = a->request,
                       .budget_ns = (int64_t)a->budget_us * 1000, .record = a->cmd == CMD_RECORD,
                       .no_session = a->cmd == CMD_STATS || a->cmd == CMD_TOP};
    if (s) {
        hello.limits = (cdc_limits){.max_bodies = s->nb, .max_contacts = s->nc,
                                    .max_joints = s->nj, .max_dirs = s->friction_dirs};
        // The session's memory is sized for the solvers it declares: the scene's is the one.
        if (s->solver != CS_SOLVER_DEFAULT) {
            hello.solver_name = cs_solver_name(s->solver);
        }
    }
    char token[512];
    if (a->token_file) {
        FILE *f = fopen(a->token_file, "r");
        const bool got = f && fgets(token, sizeof token, f);
        if (f) {
            fclose(f);
        }
        if (!got) {
            fprintf(stderr, "contactctl: --token-file %s: cannot read the token\n",
                    a->token_file);
            return EXIT_DATA;
        }
        token[strcspn(token, "\r\n")] = '\0';
        hello.token = token;
    }
    const int64_t timeout_ns = (int64_t)a->timeout_ms * 1000000;
    int r;
    if (a->tcp) {
        r = cdc_conn_open_tcp(a->tcp, &hello, timeout_ns, ret, err, sizeof err);
    } else {
        const char *p = a->socket;
        if (!p) {
            r = cd_paths_client_socket(path, sizeof path);
            if (r < 0) {
                fprintf(stderr, "contactctl: default socket path: %s\n", strerror(-r));
                return EXIT_DAEMON;
            }
            p = path;
        }
        r = cdc_conn_open_unix(p, &hello, timeout_ns, ret, err, sizeof err);
    }
    if (r < 0) {
        const bool absent = r == -ENOENT || r == -ECONNREFUSED;
        fprintf(stderr, "contactctl: %s%s\n", err, absent ? " (is contactd running?)" : "");
        return EXIT_DAEMON;
    }
    return -1;
}

// Loads the scene and opens a session sized for it. Returns -1 with both held (free s with
// cd_scene_json_free, close *ret), or an exit code with neither.
static int open_scene_session(const args *a, cs_scene *s, cdc_conn **ret) {
    const int r = load_scene(a, s);
    if (r >= 0) {
        return r;
    }
    const int rc = connect_daemon(a, s, ret);
    if (rc >= 0) {
        cd_scene_json_free(s);
    }
    return rc;
}

static void print_daemon_error(const Contactd__V1__Error *e) {
    fprintf(stderr, "contactctl: daemon error %s: %s\n",
            enum_name(&contactd__v1__error_code__descriptor, (int)e->code), e->message);
}

static void print_goodbye(const Contactd__V1__Goodbye *g) {
    fprintf(stderr, "contactctl: the daemon ended the session: %s\n", g->reason);
}

// Waits for the first message of the given case (timeout_ns 0: for as long as it takes); an
// Error, a Goodbye or a broken connection ends the wait.
static int await(cdc_conn *c, Contactd__V1__ServerMessage__MsgCase want, int64_t timeout_ns,
                 Contactd__V1__ServerMessage **ret) {
    const int64_t deadline = cd_clock_ns() + timeout_ns;
    for (;;) {
        // cdc_wire_recv waits without a limit for a negative timeout.
        const int64_t left = timeout_ns == 0 ? -1 : deadline - cd_clock_ns();
        Contactd__V1__ServerMessage *m = NULL;
        const int r = timeout_ns == 0 || left > 0 ? cdc_wire_recv(c, left, &m) : 0;
        if (r == 0) {
            fprintf(stderr, "contactctl: no answer from the daemon within %.0f ms\n",
                    (double)timeout_ns / 1e6);
            return EXIT_DAEMON;
        }
        if (r < 0) {
            fprintf(stderr, "contactctl: receiving: %s\n", strerror(-r));
            return EXIT_DAEMON;
        }
        if (m->msg_case == want) {
            *ret = m;
            return -1;
        }
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR) {
            print_daemon_error(m->error);
            cdc_wire_free(m);
            return EXIT_DAEMON;
        }
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE) {
            print_goodbye(m->goodbye);
            cdc_wire_free(m);
            return EXIT_DAEMON;
        }
        cdc_wire_free(m); // e.g. a Result of an earlier frame
    }
}

static int cmd_send(const args *a) {
    cs_scene s;
    cdc_conn *c = NULL;
    int r = open_scene_session(a, &s, &c);
    if (r >= 0) {
        return r;
    }
    r = cdc_wire_frame_send(c, &s);
    if (r < 0) {
        fprintf(stderr, "contactctl: sending the frame: %s\n", strerror(-r));
        r = EXIT_DAEMON;
    } else {
        Contactd__V1__ServerMessage *m = NULL;
        r = await(c, CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT, (int64_t)a->timeout_ms * 1000000,
                  &m);
        if (r < 0) {
            print_result(m->result, a->json);
            r = m->result->status == CONTACTD__V1__STATUS__STATUS_OK ? EXIT_OK : EXIT_FAIL;
            cdc_wire_free(m);
        }
    }
    cdc_conn_close(c);
    cd_scene_json_free(&s);
    return r;
}

// Asks for the Stats (a->session_id's session only, when given) and waits for them. Returns -1
// with *ret set, or an exit status.
static int stats_fetch(cdc_conn *c, const args *a, Contactd__V1__ServerMessage **ret) {
    const int r = cdc_stats_request_session(c, (uint64_t)a->session_id);
    if (r < 0) {
        fprintf(stderr, "contactctl: sending the request: %s\n", strerror(-r));
        return EXIT_FAIL;
    }
    return await(c, CONTACTD__V1__SERVER_MESSAGE__MSG_STATS, (int64_t)a->timeout_ms * 1000000,
                 ret);
}

static void print_percentiles(const char *what, const Contactd__V1__Percentiles *p) {
    if (!p) {
        return;
    }
    printf("  %-14s %10" PRIu64 " %10.3f %10.3f %10.3f %10.3f\n", what, p->count,
           (double)p->p50_ns / 1e3, (double)p->p99_ns / 1e3, (double)p->p999_ns / 1e3,
           (double)p->max_ns / 1e3);
}

static void print_histograms(const Contactd__V1__Percentiles *solve,
                             const Contactd__V1__Percentiles *latency,
                             const Contactd__V1__Percentiles *wake_late) {
    printf("  %-14s %10s %10s %10s %10s %10s\n", "(us)", "count", "p50", "p99", "p99.9", "max");
    print_percentiles("solve", solve);
    print_percentiles("latency", latency);
    print_percentiles("wake-up late", wake_late);
}

static void print_misses_statuses(const Contactd__V1__MissCounts *m, size_t n_statuses,
                                  Contactd__V1__StatusCount *const *statuses) {
    if (m) {
        printf("  misses by cause: host %" PRIu64 ", solver %" PRIu64 ", scheduling %" PRIu64
               ", io %" PRIu64 "\n", m->host, m->solver, m->scheduling, m->io);
    }
    printf("  solver statuses:");
    for (size_t i = 0; i < n_statuses; i++) {
        printf("%s %s %" PRIu64, i ? "," : "", statuses[i]->status, statuses[i]->count);
    }
    printf("%s\n", n_statuses ? "" : " none yet");
}

static void print_stats(const Contactd__V1__Stats *st) {
    const double mean = st->frames_solved
                            ? (double)st->solve_ns_sum / (double)st->frames_solved / 1e3
                            : 0.0;
    printf("ticks              %" PRIu64 " (%" PRIu64 " reached polling)\n", st->ticks,
           st->ticks_polled);
    printf("sessions           %" PRIu32 "\n", st->sessions);
    printf("frames received    %" PRIu64 "\n", st->frames_received);
    printf("frames solved      %" PRIu64 "\n", st->frames_solved);
    printf("frames superseded  %" PRIu64 " (%" PRIu64 " solved ahead of their tick, %.3f ms)\n",
           st->frames_superseded, st->solves_ahead_dropped,
           (double)st->solves_ahead_dropped_ns / 1e6);
    printf("frames refused     %" PRIu64 "\n", st->frames_refused);
    printf("stats refused      %" PRIu64 "\n", st->stats_requests_refused);
    printf("conns refused      %" PRIu64 "\n", st->connections_refused);
    printf("hello timeouts     %" PRIu64 "\n", st->hello_timeouts);
    printf("deadline misses    %" PRIu64 "\n", st->deadline_misses);
    printf("results dropped    %" PRIu64 "\n", st->results_dropped);
    printf("solve mean / max   %.3f / %.3f us\n", mean, (double)st->solve_ns_max / 1e3);
    printf("wake-up late max   %.3f us\n", (double)st->wake_late_ns_max / 1e3);
    printf("realtime           %s\n", st->realtime ? "yes (SCHED_FIFO)" : "no");
    print_misses_statuses(st->misses, st->n_statuses, st->statuses);
    print_histograms(st->solve, st->latency, st->wake_late);
    for (size_t i = 0; i < st->n_session_stats; i++) {
        const Contactd__V1__SessionStats *ss = st->session_stats[i];
        printf("\nsession %" PRIu64 " (%s): received %" PRIu64 ", solved %" PRIu64
               ", superseded %" PRIu64 ", refused %" PRIu64 ", missed %" PRIu64
               ", dropped %" PRIu64 "\n", ss->session_id,
               ss->mode == CONTACTD__V1__SESSION_MODE__MODE_REQUEST ? "request" : "stream",
               ss->frames_received, ss->frames_solved, ss->frames_superseded,
               ss->frames_refused, ss->deadline_misses, ss->results_dropped);
        print_misses_statuses(ss->misses, ss->n_statuses, ss->statuses);
        print_histograms(ss->solve, ss->latency, ss->wake_late);
    }
}

static int cmd_stats(const args *a) {
    cdc_conn *c = NULL;
    int r = connect_daemon(a, NULL, &c);
    if (r >= 0) {
        return r;
    }
    Contactd__V1__ServerMessage *m = NULL;
    if ((r = stats_fetch(c, a, &m)) < 0) {
        if (a->json) {
            print_json(&m->stats->base);
        } else {
            print_stats(m->stats);
        }
        // The daemon answers a session that is not open (closed, or a wrong id) with its own
        // figures alone, which a reader would take for that session's.
        r = EXIT_OK;
        if (a->session_id && m->stats->n_session_stats == 0) {
            fprintf(stderr, "contactctl: session %ld is not open (only the daemon's figures "
                    "shown)\n", a->session_id);
            r = EXIT_FAIL;
        }
        cdc_wire_free(m);
    }
    cdc_conn_close(c);
    return r;
}

// A session's frames solved in the previous Stats (prev may be NULL), to make a rate.
static uint64_t solved_before(const Contactd__V1__Stats *prev, uint64_t session_id) {
    for (size_t i = 0; prev && i < prev->n_session_stats; i++) {
        if (prev->session_stats[i]->session_id == session_id) {
            return prev->session_stats[i]->frames_solved;
        }
    }
    return 0;
}

// A histogram a message left out (an older daemon's) reads as empty.
static const Contactd__V1__Percentiles *or_empty(const Contactd__V1__Percentiles *p) {
    static const Contactd__V1__Percentiles empty = CONTACTD__V1__PERCENTILES__INIT;
    return p ? p : &empty;
}

// One screen: the daemon's headline and a row per session; rates over dt_s since prev (none on
// the first screen).
static void top_draw(const Contactd__V1__Stats *st, const Contactd__V1__Stats *prev, double dt_s) {
    if (isatty(STDOUT_FILENO)) {
        fputs("\033[H\033[2J", stdout); /* home, clear: top(1)'s redraw */
    }
    char ticks[32] = "-";
    if (prev && dt_s > 0) {
        snprintf(ticks, sizeof ticks, "%.0f", (double)(st->ticks - prev->ticks) / dt_s);
    }
    printf("contactd: %" PRIu32 " sessions, %s ticks/s, %" PRIu64 " solved, %" PRIu64
           " deadline misses, latency p99 %.3f us, %s\n\n", st->sessions, ticks,
           st->frames_solved, st->deadline_misses, (double)or_empty(st->latency)->p99_ns / 1e3,
           st->realtime ? "SCHED_FIFO" : "not realtime");
    printf("%8s %-7s %9s %7s %7s %7s %9s %9s %9s %9s %9s %9s %9s\n", "SESSION", "MODE",
           "SOLVED/S", "MISSED", "REFUSED", "DROPPED", "SOLVE50", "SOLVE99", "SOLVEMAX", "LAT50",
           "LAT99", "LAT99.9", "LATMAX");
    for (size_t i = 0; i < st->n_session_stats; i++) {
        const Contactd__V1__SessionStats *ss = st->session_stats[i];
        char rate[32] = "-";
        if (prev && dt_s > 0) {
            snprintf(rate, sizeof rate, "%.0f",
                     (double)(ss->frames_solved - solved_before(prev, ss->session_id)) / dt_s);
        }
        const Contactd__V1__Percentiles *sv = or_empty(ss->solve), *l = or_empty(ss->latency);
        printf("%8" PRIu64 " %-7s %9s %7" PRIu64 " %7" PRIu64 " %7" PRIu64
               " %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", ss->session_id,
               ss->mode == CONTACTD__V1__SESSION_MODE__MODE_REQUEST ? "request" : "stream", rate,
               ss->deadline_misses, ss->frames_refused, ss->results_dropped,
               (double)sv->p50_ns / 1e3, (double)sv->p99_ns / 1e3, (double)sv->max_ns / 1e3,
               (double)l->p50_ns / 1e3, (double)l->p99_ns / 1e3, (double)l->p999_ns / 1e3,
               (double)l->max_ns / 1e3);
    }
    printf("\n(times in us; latency: frame received -> result handed to the socket)\n");
    fflush(stdout);
}

// A connection per refresh: one without a Hello is closed by the daemon after hello_timeout_ms.
static int cmd_top(const args *a) {
    Contactd__V1__ServerMessage *prev = NULL;
    int64_t prev_ns = 0;
    int r = EXIT_OK;
    for (long k = 0; a->iterations == 0 || k < a->iterations; k++) {
        if (k > 0) {
            const struct timespec second = {.tv_sec = 1};
            (void)nanosleep(&second, NULL);
        }
        cdc_conn *c = NULL;
        Contactd__V1__ServerMessage *m = NULL;
        int f = connect_daemon(a, NULL, &c);
        if (f < 0) {
            f = stats_fetch(c, a, &m);
        }
        cdc_conn_close(c);
        if (f >= 0) {
            r = f;
            break;
        }
        const int64_t now = cd_clock_ns();
        top_draw(m->stats, prev ? prev->stats : NULL, (double)(now - prev_ns) / 1e9);
        cdc_wire_free(prev);
        prev = m;
        prev_ns = now;
    }
    cdc_wire_free(prev);
    return r;
}

// Per-stream bookkeeping: when each frame left, and what came back.
typedef struct stream_log {
    size_t frames;        // frames to send
    int64_t *sent_ns;     // [frames] 0 until sent
    int64_t *latency_ns;  // [results]
    int64_t *solve_ns;    // [results]
    bool *settled;        // [frames] its Result came, or the Error refusing it
    size_t results, deadline_misses, failed, errors;
} stream_log;

// Takes whatever has arrived (waiting up to wait_ns for the first message). Returns 0, or a
// negative errno when the connection broke.
static int stream_drain(cdc_conn *c, stream_log *log, int64_t wait_ns) {
    for (;;) {
        Contactd__V1__ServerMessage *m = NULL;
        const int r = cdc_wire_recv(c, wait_ns, &m);
        const int64_t t = cd_clock_ns();
        if (r <= 0) {
            return r;
        }
        wait_ns = 0;
        if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_ERROR) {
            if (log->errors++ == 0) {
                print_daemon_error(m->error);
            }
            // A refused frame gets no Result.
            const uint64_t k = m->error->seq - 1;
            if (m->error->seq >= 1 && k < log->frames && log->sent_ns[k]) {
                log->settled[k] = true;
            }
        } else if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_GOODBYE) {
            print_goodbye(m->goodbye);
            cdc_wire_free(m);
            return -ECONNRESET;
        } else if (m->msg_case == CONTACTD__V1__SERVER_MESSAGE__MSG_RESULT) {
            const Contactd__V1__Result *res = m->result;
            const uint64_t k = res->seq - 1; // seq = frame index + 1
            if (res->seq >= 1 && k < log->frames && log->sent_ns[k] && !log->settled[k]) {
                log->settled[k] = true;
                log->latency_ns[log->results] = t - log->sent_ns[k];
                log->solve_ns[log->results] = res->timing ? res->timing->solve_ns : 0;
                log->results++;
                log->deadline_misses += res->timing && !res->timing->deadline_met;
                log->failed += res->status == CONTACTD__V1__STATUS__STATUS_FAILED ||
                               res->status == CONTACTD__V1__STATUS__STATUS_INVALID;
            }
        }
        cdc_wire_free(m);
    }
}

static cJSON *json_tail(int64_t *v, size_t n) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "p50", (double)percentile(v, n, 0.50));
    cJSON_AddNumberToObject(o, "p99", (double)percentile(v, n, 0.99));
    cJSON_AddNumberToObject(o, "p999", (double)percentile(v, n, 0.999));
    cJSON_AddNumberToObject(o, "max", (double)percentile(v, n, 1.0));
    return o;
}

static void print_tail(const char *what, int64_t *v, size_t n) {
    printf("%-12s %12.3f %12.3f %12.3f %12.3f\n", what, (double)percentile(v, n, 0.50) / 1e3,
           (double)percentile(v, n, 0.99) / 1e3, (double)percentile(v, n, 0.999) / 1e3,
           (double)percentile(v, n, 1.0) / 1e3);
}

static int cmd_stream(const args *a) {
    cs_scene s;
    cdc_conn *c = NULL;
    int r = open_scene_session(a, &s, &c);
    if (r >= 0) {
        return r;
    }
    const char *recorded = cdc_conn_welcome(c)->record_path;
    if (a->cmd == CMD_RECORD && (!recorded || recorded[0] == '\0')) {
        fprintf(stderr, "contactctl: the daemon did not start the recording (its log says "
                "why)\n");
        cdc_conn_close(c);
        cd_scene_json_free(&s);
        return EXIT_DAEMON;
    }
    stream_log log = {.frames = (size_t)llround(a->rate * a->duration)};
    log.frames = log.frames ? log.frames : 1;
    log.sent_ns = calloc(log.frames, sizeof *log.sent_ns);
    log.latency_ns = calloc(log.frames, sizeof *log.latency_ns);
    log.solve_ns = calloc(log.frames, sizeof *log.solve_ns);
    log.settled = calloc(log.frames, sizeof *log.settled);
    if (!log.sent_ns || !log.latency_ns || !log.solve_ns || !log.settled) {
        fprintf(stderr, "contactctl: out of memory\n");
        r = EXIT_FAIL;
        goto out;
    }
    const int64_t period_ns = (int64_t)llround(1e9 / a->rate);
    const int64_t start = cd_clock_ns() + period_ns;
    size_t sent = 0, unsent = 0; // unsent: the frame whose send failed
    int broken = 0;
    for (size_t k = 0; k < log.frames && !broken; k++) {
        // Absolute targets (start + k period) keep the rate exact however long each step takes.
        // The wait until the target is spent in the socket poll, so every result is timestamped
        // when it arrives, not when the loop next looks.
        const int64_t target = start + (int64_t)k * period_ns;
        for (int64_t left = target - cd_clock_ns(); left > 0 && !broken;
             left = target - cd_clock_ns()) {
            broken = stream_drain(c, &log, left);
        }
        s.seq = k + 1;
        log.sent_ns[k] = cd_clock_ns();
        const int w = cdc_wire_frame_send(c, &s);
        if (w < 0) {
            // What the daemon sent before it went (a Goodbye, results) is still to be read.
            const int d = stream_drain(c, &log, 0);
            broken = d < 0 ? d : w;
            unsent = k + 1;
            break;
        }
        sent++;
        broken = stream_drain(c, &log, 0);
    }
    // The last frame was sent less than a tick ago. Once its Result (or the Error refusing it)
    // is in, nothing more comes: the frames before it were answered, refused, or superseded by
    // a newer one before their tick (stream mode). The daemon answers within a few of its tick
    // periods; the bound covers a loaded machine.
    const int64_t grace_end =
        cd_clock_ns() + 100 * (int64_t)cdc_wire_welcome(c)->tick_period_ns + INT64_C(100000000);
    for (int64_t left = grace_end - cd_clock_ns();
         !broken && sent > 0 && !log.settled[sent - 1] && left > 0;
         left = grace_end - cd_clock_ns()) {
        broken = stream_drain(c, &log, left);
    }
    if (broken == -ECONNRESET || broken == -EPIPE) {
        fprintf(stderr, "contactctl: the daemon closed the connection\n");
    } else if (broken < 0 && unsent) {
        fprintf(stderr, "contactctl: sending frame %zu: %s\n", unsent, strerror(-broken));
    } else if (broken < 0) {
        fprintf(stderr, "contactctl: connection: %s\n", strerror(-broken));
    }

    if (a->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "frames", (double)sent);
        cJSON_AddNumberToObject(o, "results", (double)log.results);
        cJSON_AddNumberToObject(o, "deadlineMisses", (double)log.deadline_misses);
        cJSON_AddItemToObject(o, "solveNs", json_tail(log.solve_ns, log.results));
        cJSON_AddItemToObject(o, "latencyNs", json_tail(log.latency_ns, log.results));
        if (a->cmd == CMD_RECORD) {
            cJSON_AddStringToObject(o, "recordPath", recorded);
        }
        char *txt = cJSON_Print(o);
        if (txt) {
            puts(txt);
        }
        free(txt);
        cJSON_Delete(o);
    } else {
        printf("streamed %s at %.6g Hz for %.6g s\n", a->scene_path, a->rate, a->duration);
        printf("frames %zu  results %zu  deadline misses %zu  failed %zu  errors %zu\n", sent,
               log.results, log.deadline_misses, log.failed, log.errors);
        printf("%-12s %12s %12s %12s %12s\n", "(us)", "p50", "p99", "p99.9", "max");
        print_tail("solve", log.solve_ns, log.results);
        print_tail("latency", log.latency_ns, log.results);
        if (a->cmd == CMD_RECORD) {
            printf("recorded to %s (on the daemon's host)\n", recorded);
        }
    }
    r = broken || log.errors ? EXIT_DAEMON : log.failed || log.results == 0 ? EXIT_FAIL : EXIT_OK;
out:
    free(log.sent_ns);
    free(log.latency_ns);
    free(log.solve_ns);
    free(log.settled);
    cdc_conn_close(c);
    cd_scene_json_free(&s);
    return r;
}

// fclib: one FCLIB problem solved in-process with SAP, or with ncp, lemke-standard or dantzig
// on the local form, and scored with Siconos' residual.
static int cmd_fclib(const args *a) {
    cs_solver solver = CS_SOLVER_SAP;
    if (a->solver && cs_solver_from_name(a->solver, &solver) < 0) {
        return usage_error("--solver: unknown solver '%s'", a->solver);
    }
    const bool ncp = solver == CS_SOLVER_NCP;
    const bool local_only =
        ncp || solver == CS_SOLVER_LEMKE_STANDARD || solver == CS_SOLVER_DANTZIG;
    if (!local_only && solver != CS_SOLVER_SAP) {
        return usage_error("fclib: --solver %s does not take FCLIB problems (sap, or ncp, "
                           "lemke-standard or dantzig for the local form: %s works on the "
                           "bodies, which an FCLIB problem does not have)", a->solver, a->solver);
    }
    const char *solver_name = cs_solver_name(solver);
    char err[1024];
    // Fail before a long solve, not after it.
    if (a->write_solution && fclib_io_check_output(a->write_solution, err, sizeof err) < 0) {
        return usage_error("--write-solution: %s", err);
    }
    fclib_io_problem p;
    const int lr = fclib_io_load(a->scene_path, &p, err, sizeof err);
    if (lr < 0) {
        // Unreadable, unsupported, or a readable problem whose data is refused.
        fprintf(stderr, "contactctl: %s\n", err);
        return EXIT_DATA;
    }
    if (local_only && p.form != FCLIB_IO_LOCAL) {
        fclib_io_free(&p);
        return usage_error("fclib: %s takes the local form (W, q, mu); %s is global",
                           solver_name, a->scene_path);
    }
    if (p.symmetrized) {
        fprintf(stderr,
                "contactctl: note: %s: W is not symmetric (|W - W^T|_F = %.2e of |W|_F, at most "
                "%.0e): solved with (W + W^T) / 2, scored with W as stored\n",
                a->scene_path, p.asymmetry, FCLIB_IO_ASYMMETRY_MAX);
    }
    fclib_io_result res;
    // --timeout bounds the solve: a pivoting solver's cap on a large file is hours of work
    // (dantzig on KaplasTower's 1710 rows had not finished after 15 minutes).
    cs_options opt = {.solver = solver};
    if ((a->given & OPT_TIMEOUT) && a->timeout_ms > 0) {
        opt.clock_ns = cd_clock_ns;
        opt.deadline_ns = cd_clock_ns() + (int64_t)a->timeout_ms * 1000000;
    }
    if ((local_only ? fclib_io_solve_local(&p, &opt, 0, &res, err, sizeof err)
                    : fclib_io_solve(&p, &opt, &res, err, sizeof err)) < 0) {
        fprintf(stderr, "contactctl: %s: %s\n", a->scene_path, err);
        fclib_io_free(&p);
        return EXIT_FAIL;
    }
    const char *slash = strrchr(a->scene_path, '/');
    const char *name = slash ? slash + 1 : a->scene_path;
    if (a->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "problem", name);
        cJSON_AddStringToObject(o, "form", fclib_io_form_name(p.form));
        cJSON_AddNumberToObject(o, "contacts", p.nc);
        if (p.form == FCLIB_IO_GLOBAL) {
            cJSON_AddNumberToObject(o, "dofs", p.nv);
        } else {
            cJSON_AddNullToObject(o, "dofs"); // a local problem has none (p.nv = rank W)
        }
        cJSON_AddStringToObject(o, "solver", solver_name);
        cJSON_AddStringToObject(o, "status", cs_status_name(res.status));
        cJSON_AddNumberToObject(o, "iterations", res.stats.iterations);
        cJSON_AddNumberToObject(o, "solveNs", (double)res.solve_ns);
        cJSON_AddNumberToObject(o, "residual", res.error.total);
        if (p.form == FCLIB_IO_GLOBAL) {
            cJSON_AddNumberToObject(o, "residualMomentum", res.error.momentum);
        }
        cJSON_AddNumberToObject(o, "residualCoulomb", res.error.coulomb);
        if (p.form == FCLIB_IO_LOCAL) {
            cJSON_AddNumberToObject(o, "asymmetry", p.asymmetry);
        }
        if (ncp) {
            cJSON_AddNumberToObject(o, "residualNcp", res.ncp.residual);
        }
        char *txt = cJSON_Print(o);
        if (txt) {
            puts(txt);
        }
        free(txt);
        cJSON_Delete(o);
    } else {
        printf("%-44s %-6s %8s %6s %-6s %-10s %10s %12s %10s %10s %10s\n", "problem", "form",
               "contacts", "dofs", "solver", "status", "iterations", "solve (ms)", "residual",
               "momentum", "coulomb");
        char dofs[16] = "-", mom[16] = "-";
        if (p.form == FCLIB_IO_GLOBAL) {
            snprintf(dofs, sizeof dofs, "%d", p.nv);
            snprintf(mom, sizeof mom, "%.3e", res.error.momentum);
        }
        printf("%-44s %-6s %8d %6s %-6s %-10s %10d %12.3f %10.3e %10s %10.3e\n", name,
               fclib_io_form_name(p.form), p.nc, dofs, solver_name,
               cs_status_name(res.status), res.stats.iterations, (double)res.solve_ns / 1e6,
               res.error.total, mom, res.error.coulomb);
    }
    int r = res.status == CS_CONVERGED ? EXIT_OK : EXIT_FAIL;
    if (a->write_solution) {
        if (res.status < 0) {
            fprintf(stderr, "contactctl: %s: not written, the solve failed (%s)\n",
                    a->write_solution, cs_status_name(res.status));
            r = EXIT_FAIL;
        } else if (fclib_io_write_solution(a->write_solution, &p, &res, err, sizeof err) < 0) {
            fprintf(stderr, "contactctl: %s\n", err);
            r = EXIT_FAIL;
        }
    }
    fclib_io_result_free(&res);
    fclib_io_free(&p);
    return r;
}

int main(int argc, char **argv) {
    args a;
    const int r = parse_args(argc, argv, &a);
    if (r >= 0) {
        return r;
    }
    switch (a.cmd) {
    case CMD_SOLVE: return cmd_solve(&a);
    case CMD_BENCH: return cmd_bench(&a);
    case CMD_SEND: return cmd_send(&a);
    case CMD_STREAM: return cmd_stream(&a);
    case CMD_STATS: return cmd_stats(&a);
    case CMD_TOP: return cmd_top(&a);
    case CMD_FCLIB: return cmd_fclib(&a);
    case CMD_RECORD: return cmd_stream(&a);
    case CMD_REPLAY: return replay_run(a.scene_path, a.solver, a.json);
    case CMD_CONVERT: return convert_run(a.scene_path, a.out_path, a.to);
    }
    return EXIT_USAGE;
}
