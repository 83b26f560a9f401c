/* SPDX-License-Identifier: MIT */
/* Default endpoints of the daemon, shared by contactd and every client so both sides agree
 * without configuration: the Unix-domain socket path and the TCP port on 127.0.0.1. */
#ifndef CONTACTD_WIRE_PATHS_H
#define CONTACTD_WIRE_PATHS_H
#include <stddef.h>

#define CD_TCP_HOST_DEFAULT "127.0.0.1"
#define CD_TCP_PORT_DEFAULT 7411

/* The system service's socket (contactd.service, contactd.socket). */
#define CD_SYSTEM_SOCKET "/run/contactd/contactd.sock"

/* Writes the daemon's default socket path into buf (len bytes, NUL-terminated):
 * $RUNTIME_DIRECTORY/contactd.sock under a systemd unit with RuntimeDirectory= (its first
 * directory), else CD_SYSTEM_SOCKET when running as root (effective uid 0), else
 * $XDG_RUNTIME_DIR/contactd.sock when XDG_RUNTIME_DIR is set and non-empty, else
 * /tmp/contactd-$UID.sock. Returns 0, or -ENAMETOOLONG when buf is too short (buf then holds
 * nothing useful). thread: any. rt-safe: no (reads the environment). */
int cd_paths_default_socket(char *buf, size_t len);

/* Where a client looks when told nothing: the system service's socket when it exists (so any
 * user's client finds it), else what a daemon of this user would take
 * (cd_paths_default_socket). Returns as cd_paths_default_socket. thread: any. */
int cd_paths_client_socket(char *buf, size_t len);

#endif /* CONTACTD_WIRE_PATHS_H */
