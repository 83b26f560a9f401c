/* SPDX-License-Identifier: MIT */
/* Default endpoints of the daemon, shared by contactd and every client so both sides agree
 * without configuration: the Unix-domain socket path and the TCP port on 127.0.0.1. */
#ifndef CONTACTD_SYS_PATHS_H
#define CONTACTD_SYS_PATHS_H
#include <stddef.h>

#define CD_TCP_HOST_DEFAULT "127.0.0.1"
#define CD_TCP_PORT_DEFAULT 7411

/* Writes the default socket path into buf (len bytes, NUL-terminated):
 * /run/contactd/contactd.sock when running as root (effective uid 0), else
 * $XDG_RUNTIME_DIR/contactd.sock when XDG_RUNTIME_DIR is set and non-empty, else
 * /tmp/contactd-$UID.sock. Returns 0, or -ENAMETOOLONG when buf is too short (buf then holds
 * nothing useful). thread: any. rt-safe: no (reads the environment). */
int cd_paths_default_socket(char *buf, size_t len);

#endif /* CONTACTD_SYS_PATHS_H */
