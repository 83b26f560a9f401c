/* SPDX-License-Identifier: MIT */
/* The daemon's configuration: built-in defaults, an INI file read with inih, and single-key
 * overrides (what the command line sets), all through one parser so a value means the same
 * wherever it comes from. Errors are exact: file, line, section, key and reason. */
#ifndef CONTACTD_SYS_CONFIG_H
#define CONTACTD_SYS_CONFIG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sys/log.h"
#include "wire/types.h"

/* Bytes of sockaddr_un.sun_path, the longest socket path plus its NUL. */
#define CD_SOCKET_PATH_MAX 108

#define CD_MAX_SESSIONS_DEFAULT 16
#define CD_MAX_MESSAGE_BYTES_DEFAULT (256 * 1024)
#define CD_MAX_QUEUED_BYTES_DEFAULT (1024 * 1024)
#define CD_RATE_HZ_DEFAULT 1000
#define CD_DEADLINE_FRACTION_DEFAULT 0.8
#define CD_PRIORITY_DEFAULT 50
#define CD_MAX_BODIES_DEFAULT 64
#define CD_MAX_CONTACTS_DEFAULT 256
#define CD_MAX_JOINTS_DEFAULT 64
#define CD_MAX_DIRS_DEFAULT 16
#define CD_LONG_SOLVE_US_DEFAULT 200
#define CD_MAX_BUDGET_US_DEFAULT 10000
#define CD_MAX_SESSION_MB_DEFAULT 64
#define CD_MEMORY_BUDGET_MB_DEFAULT 1024
#define CD_MAX_CONNECTIONS_DEFAULT 4096
#define CD_MAX_CONNECTIONS_PER_UID_DEFAULT 1024
#define CD_HELLO_TIMEOUT_MS_DEFAULT 1000
#define CD_SOCKET_MODE_DEFAULT 0660
#define CD_RECORD_BUFFER_KB_DEFAULT 1024
#define CD_RECORD_MAX_FILE_MB_DEFAULT 1024
/* An auth token's length, bytes: long enough not to be guessed, short enough for one line. */
#define CD_TOKEN_MIN 16
#define CD_TOKEN_MAX 255
/* Entries of an allow-list (allow_uids, allow_gids). */
#define CD_ALLOW_MAX 32

/* thread: main; the I/O thread reads it, and a reload (SIGHUP, on the I/O thread) rewrites the
 * keys that may change live (cd_config_keep_restart). */
typedef struct cd_config {
    /* [server] */
    char socket[CD_SOCKET_PATH_MAX]; /* Unix-domain socket path; "" = none ("off") */
    char tcp_host[64];         /* numeric IPv4 or IPv6 address; "" = no TCP listener ("off") */
    int tcp_port;              /* 0 = any free port (reported in the log and READY status) */
    int max_sessions;
    uint32_t max_message_bytes; /* largest message accepted, either direction */
    size_t max_queued_bytes;   /* per connection: results are dropped beyond this backlog */
    size_t memory_budget_bytes; /* all sessions together (cd_session_bytes) */
    int max_connections;       /* open connections, with or without a session */
    int max_connections_per_uid; /* open Unix-socket connections of one peer uid */
    int max_sessions_per_uid;  /* sessions of one Unix-socket peer uid; -1 = "auto": no cap but
                                * max_sessions */
    int64_t hello_timeout_ns;  /* a connection without a Hello by then is closed */
    unsigned socket_mode;      /* permission bits of the socket file the daemon creates */
    char socket_group[64];     /* its group (name or number); "" = the daemon's own */
    int nallow_uids, nallow_gids; /* 0 and 0: every peer the socket's mode lets in */
    uint32_t allow_uids[CD_ALLOW_MAX]; /* Unix peers allowed by uid (SO_PEERCRED) ... */
    uint32_t allow_gids[CD_ALLOW_MAX]; /* ... or by any of their groups (SO_PEERGROUPS) */
    char auth_token_file[256]; /* "" = none */
    char auth_token[CD_TOKEN_MAX + 1]; /* its first line: what a TCP Hello must carry */
    bool tcp_allow_any_local_user; /* loopback TCP without the token (no token configured) */
    /* [loop] */
    int rate_hz;
    double deadline_fraction;  /* default budget, as a fraction of the period */
    bool realtime;             /* "auto": try mlockall, SCHED_FIFO, CPU affinity; "off" */
    bool keep_awake;           /* "on": pinned workers' CPUs poll, not halt, while serving */
    int priority;              /* SCHED_FIFO priority of the foreground workers */
    int cpu;                   /* first worker's CPU; -1 = "auto" (the highest allowed) */
    int workers;               /* worker CPUs; -1 = "auto" (online CPUs - 1, at least 1) */
    int64_t long_solve_ns;     /* sessions solving longer than this run in the background */
    /* [session] */
    cs_solver default_solver;  /* for sessions whose Hello names none */
    cs_limits limits;          /* the most a session may ask for (and what it gets by default) */
    int64_t max_budget_ns;     /* the most solve time per frame a session may ask for */
    size_t max_session_bytes;  /* the most memory one session may hold */
    /* [record] */
    char record_dir[256];      /* where recordings go; "" = recording off ("off") */
    bool record_all;           /* record every session, not only those whose Hello asks */
    size_t record_buffer_bytes; /* per recorded session, between its reader and the file */
    uint64_t record_max_file_bytes; /* a recording's frames and results stop at this size */
    /* [log] */
    cd_log_level log_level;
} cd_config;

/* Fills c with the built-in defaults (the default socket path from wire/paths.h, TCP
 * 127.0.0.1:7411, recordings in $STATE_DIRECTORY (systemd's StateDirectory=) or else the default
 * socket's directory, and the CD_*_DEFAULT values). Returns 0, or -ENAMETOOLONG when the default
 * socket path does not fit. thread: main. */
int cd_config_defaults(cd_config *c);

/* Sets one key from its text form, as in the INI file: section "server", "loop", "session",
 * "record" or "log". Returns 0, or -EINVAL with "[section] key: reason" in err (errlen bytes).
 * thread: main. */
int cd_config_set(cd_config *c, const char *section, const char *key, const char *value,
                  char *err, size_t errlen);

/* Reads the INI file at path over c (keys it does not set keep their values). Returns 0, or a
 * negative errno with "PATH:LINE: [section] key: reason" (or "PATH: cannot open: reason") in err.
 * Stops at the first error. thread: main. */
int cd_config_load(cd_config *c, const char *path, char *err, size_t errlen);

/* For a reload: copies into next, from cur, every key that takes effect only at start (the
 * listeners, the socket's mode and group, max_sessions and the [loop] keys), and writes the
 * names of those whose value next had wanted to change, space-separated, into changed ("" when
 * none). Everything else in next applies to connections and sessions made after the reload.
 * thread: the I/O thread. */
void cd_config_keep_restart(cd_config *next, const cd_config *cur, char *changed, size_t len);

/* Checks the keys against each other (at least one listener; max_dirs covers the default
 * friction directions; a TCP address beyond loopback has an auth token). Returns 0, or -EINVAL
 * with the reason in err. thread: main. */
int cd_config_check(const cd_config *c, char *err, size_t errlen);

#endif /* CONTACTD_SYS_CONFIG_H */
